/* Helpers shared by the comm engine tests: checks that fail the whole job, waits with
 * a deadline that sleep instead of spinning, and the engine's setup. */
#ifndef RILL_TEST_COMM_UTIL_H
#define RILL_TEST_COMM_UTIL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "comm.h"
#include "log.h"
#include "rill/params.h"

static int test_rank = -1;

/* A failed check ends this rank with status 1; mpirun then ends the others. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "[rank %d] %s:%d: CHECK(%s) failed: ", test_rank, __FILE__, __LINE__,  \
                    #cond);                                                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            fflush(stderr);                                                                        \
            _Exit(1);                                                                              \
        }                                                                                          \
    } while (0)

#define CHECK_OK(call)                                                                             \
    do {                                                                                           \
        rill_status_t st_ = (call);                                                                \
        CHECK(st_ == RILL_SUCCESS, "%s returned %d (%s)", #call, (int)st_,                         \
              rill_status_string(st_));                                                            \
    } while (0)

static inline double test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void test_sleep_us(long us)
{
    struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };
    nanosleep(&ts, NULL);
}

/* Sleep-poll until *counter >= target (acquire: pairs with the handlers' release
 * increments); fail after timeout_s seconds. */
static inline void test_wait_ge(atomic_uint_fast64_t *counter, uint64_t target, double timeout_s,
                                const char *what)
{
    double deadline = test_now() + timeout_s;
    uint64_t v;
    while ((v = atomic_load_explicit(counter, memory_order_acquire)) < target) {
        CHECK(test_now() < deadline, "timed out after %.0f s waiting for %s: %llu of %llu",
              timeout_s, what, (unsigned long long)v, (unsigned long long)target);
        test_sleep_us(100);
    }
}

/* Load parameters (--mca on the command line), register them, start the engine. */
static inline rill_comm_t *test_comm_start(int *argc, char ***argv)
{
    rill_comm_t *comm = NULL;
    CHECK_OK(rill_params_load(argc, argv));
    CHECK_OK(rill_log_register_params());
    CHECK_OK(rill_comm_register_params());
    CHECK_OK(rill_comm_init(argc, argv, &comm));
    test_rank = rill_comm_rank(comm);
    return comm;
}

/* Deterministic pseudo-random numbers (xorshift64*). */
static inline uint64_t test_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static inline unsigned char test_pattern(uint64_t seed, size_t i)
{
    return (unsigned char)((seed * 131u + i * 7u + (i >> 8) * 13u) & 0xff);
}

#endif
