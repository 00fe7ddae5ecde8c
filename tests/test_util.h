/* Small helpers shared by the tests: checks that fail loudly, stderr capture, the CPU time
 * of an idle process per thread. */
#ifndef RILL_TEST_UTIL_H
#define RILL_TEST_UTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Redirect stderr into a temporary file until test_capture_end, which returns what was
 * written (malloc'd, NUL-terminated) and restores stderr. */
typedef struct test_capture {
    int saved_fd;
    FILE *tmp;
} test_capture_t;

static inline void test_capture_begin(test_capture_t *c)
{
    fflush(stderr);
    c->tmp = tmpfile();
    CHECK(c->tmp);
    c->saved_fd = dup(2);
    dup2(fileno(c->tmp), 2);
}

static inline char *test_capture_end(test_capture_t *c)
{
    fflush(stderr);
    dup2(c->saved_fd, 2);
    close(c->saved_fd);
    long n = ftell(c->tmp);
    char *buf = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
    rewind(c->tmp);
    if (n > 0 && fread(buf, 1, (size_t)n, c->tmp) != (size_t)n)
        buf[0] = '\0';
    fclose(c->tmp);
    return buf;
}

/* The CPU time of each thread of the process (/proc/self/task/T/schedstat, ns), its
 * wake-ups (context switches it asked for: sleeps, /proc/self/task/T/status) and its name
 * (Rill names its threads rill-worker N, rill-comm, rill-gpu N, rill-watchdog). */
#define TEST_MAX_THREADS 1024
typedef struct test_threads {
    int n;
    long tid[TEST_MAX_THREADS];
    unsigned long long ns[TEST_MAX_THREADS], sleeps[TEST_MAX_THREADS];
    char name[TEST_MAX_THREADS][16];
} test_threads_t;

static inline void test_threads_read(test_threads_t *t)
{
    t->n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && t->n < TEST_MAX_THREADS) {
        if (e->d_name[0] == '.')
            continue;
        char path[64];
        int i = t->n;
        t->tid[i] = atol(e->d_name);
        t->ns[i] = t->sleeps[i] = 0;
        snprintf(t->name[i], sizeof(t->name[i]), "?");
        snprintf(path, sizeof(path), "/proc/self/task/%ld/schedstat", t->tid[i]);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%llu", &t->ns[i]) != 1)
                t->ns[i] = 0;
            fclose(f);
        }
        snprintf(path, sizeof(path), "/proc/self/task/%ld/status", t->tid[i]);
        if ((f = fopen(path, "r"))) {
            char line[128];
            while (fgets(line, sizeof(line), f))
                if (sscanf(line, "voluntary_ctxt_switches: %llu", &t->sleeps[i]) == 1)
                    break;
            fclose(f);
        }
        snprintf(path, sizeof(path), "/proc/self/task/%ld/comm", t->tid[i]);
        if ((f = fopen(path, "r"))) {
            if (fgets(t->name[i], sizeof(t->name[i]), f))
                t->name[i][strcspn(t->name[i], "\n")] = '\0';
            fclose(f);
        }
        t->n++;
    }
    closedir(d);
}

/* Print to f the threads that used more than min_s seconds of CPU between two readings,
 * most first; returns the whole process's CPU time in between (threads gone since are not
 * counted) and adds the sleeps of threads whose name starts with sleeps_of to *sleeps. */
static inline double test_threads_report(FILE *f, const test_threads_t *a, const test_threads_t *b,
                                         double min_s, const char *sleeps_of,
                                         unsigned long long *sleeps)
{
    static double used[TEST_MAX_THREADS];
    static unsigned long long slept[TEST_MAX_THREADS];
    double total = 0;
    for (int i = 0; i < b->n; i++) {
        int j = 0;
        while (j < a->n && a->tid[j] != b->tid[i])
            j++;
        used[i] = (double)(b->ns[i] - (j < a->n ? a->ns[j] : 0)) * 1e-9;
        slept[i] = b->sleeps[i] - (j < a->n ? a->sleeps[j] : 0);
        total += used[i];
        if (sleeps && strncmp(b->name[i], sleeps_of, strlen(sleeps_of)) == 0)
            *sleeps += slept[i];
    }
    for (;;) { /* the largest not yet shown */
        int best = -1;
        for (int i = 0; i < b->n; i++)
            if (used[i] > min_s && (best < 0 || used[i] > used[best]))
                best = i;
        if (best < 0)
            break;
        fprintf(f, "  thread %ld (%s): %.4f s, %llu sleeps\n", b->tid[best], b->name[best],
                used[best], slept[best]);
        used[best] = 0;
    }
    return total;
}

#endif
