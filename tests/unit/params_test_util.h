/* Helpers shared by the params tests: a failure counter, stderr capture into a file,
 * and a clean registry and environment. Each test defines tmpdir via this header. */
#ifndef RILL_TEST_PARAMS_UTIL_H
#define RILL_TEST_PARAMS_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "params_internal.h"

extern char **environ;

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                 \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

/* ------------------------------------------------------------ stderr capture, clean state */

static char tmpdir[] = "/tmp/rill_test_params_XXXXXX";
static int saved_stderr = -1;
static char cap_path[256];
static char cap_buf[65536];

static void capture_begin(void)
{
    fflush(stderr);
    snprintf(cap_path, sizeof(cap_path), "%s/stderr_XXXXXX", tmpdir);
    int fd = mkstemp(cap_path);
    if (fd < 0) {
        perror("mkstemp");
        exit(1);
    }
    saved_stderr = dup(2);
    dup2(fd, 2);
    close(fd);
}

/* Stop capturing; the text written to stderr meanwhile (static buffer). */
static const char *capture_end(void)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    FILE *f = fopen(cap_path, "r");
    size_t n = f ? fread(cap_buf, 1, sizeof(cap_buf) - 1, f) : 0;
    cap_buf[n] = '\0';
    if (f)
        fclose(f);
    unlink(cap_path);
    return cap_buf;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Start from a clean registry, no RILL_MCA_* variable and an empty HOME. */
static void clean_env(void)
{
    rill_params_reset();
    for (;;) {
        char name[256] = "";
        for (char **e = environ; *e; e++) {
            if (strncmp(*e, "RILL_MCA_", 9) == 0) {
                size_t len = strcspn(*e, "=");
                if (len < sizeof(name)) {
                    memcpy(name, *e, len);
                    name[len] = '\0';
                }
                break;
            }
        }
        if (!name[0])
            break;
        unsetenv(name);
    }
    setenv("HOME", tmpdir, 1);
}

/* Remove the temporary folder and report: the test's exit code. */
static int test_finish(void)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        printf("warning: could not remove %s\n", tmpdir);
    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}

#endif
