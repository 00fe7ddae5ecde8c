/* Small helpers shared by the tests: checks that fail loudly, stderr capture. */
#ifndef RILL_TEST_UTIL_H
#define RILL_TEST_UTIL_H

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

#endif
