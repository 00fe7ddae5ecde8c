/* A burst of active messages from rank 0 to rank 1 posted while rank 0's comm thread
 * is held inside a handler, so that every message is queued before any leaves: the
 * receiver must then see exactly the engine's priority order (per tag FIFO, highest
 * priority first among tags, oldest first among equals). */
#ifndef RILL_TEST_COMM_BURST_H
#define RILL_TEST_COMM_BURST_H

#include <string.h>

#include "test_comm_util.h"

#define BURST_TAG_HOLD 15
#define BURST_NB_TAGS  14 /* tags 1..14 carry the burst */
#define BURST_MAX      4096

static atomic_int burst_held, burst_release;
static atomic_uint_fast64_t burst_count;
static uint32_t burst_order[BURST_MAX];
static int32_t burst_prio[BURST_MAX];

static inline int burst_tag(uint32_t idx)
{
    return 1 + (int)(idx % BURST_NB_TAGS);
}

/* Rank 1 (comm thread): bounce the request back. Rank 0: hold its comm thread until the
 * main thread posted the whole burst. A handler must not block in real code; here
 * blocking is the point of the test. Rank 0's main asks for the hold only once it is
 * out of the barrier, otherwise the held comm thread could not complete that barrier. */
static void burst_hold_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)src, (void)msg, (void)len, (void)arg;
    if (rill_comm_rank(comm) == 1) {
        CHECK_OK(rill_comm_am_send(comm, 0, BURST_TAG_HOLD, NULL, 0, 0));
        return;
    }
    atomic_store(&burst_held, 1);
    double deadline = test_now() + 15;
    while (!atomic_load(&burst_release)) {
        CHECK(test_now() < deadline, "burst: main thread never released the comm thread");
        test_sleep_us(50);
    }
}

/* Rank 1, comm thread: one message of the burst. */
static void burst_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)comm, (void)arg;
    uint32_t idx;
    CHECK(src == 0 && len >= sizeof(idx), "burst message from %d of %zu bytes", src, len);
    memcpy(&idx, msg, sizeof(idx));
    for (size_t i = sizeof(idx); i < len; i++)
        CHECK(((unsigned char *)msg)[i] == test_pattern(idx, i), "burst %u: byte %zu corrupt", idx,
              i);
    uint64_t n = atomic_load_explicit(&burst_count, memory_order_relaxed);
    CHECK(n < BURST_MAX, "burst: too many messages");
    burst_order[n] = idx;
    /* release pairs with test_wait_ge's acquire: burst_order[n] is visible */
    atomic_store_explicit(&burst_count, n + 1, memory_order_release);
}

/* The order the engine must deliver in, computed independently. */
static void burst_expected(int n, uint32_t *out)
{
    int next[BURST_NB_TAGS]; /* next unsent index of each tag, -1 when none */
    for (int t = 0; t < BURST_NB_TAGS; t++)
        next[t] = t < n ? t : -1;
    for (int k = 0; k < n; k++) {
        int best = -1;
        for (int t = 0; t < BURST_NB_TAGS; t++) {
            if (next[t] < 0)
                continue;
            if (best < 0 || burst_prio[next[t]] > burst_prio[next[best]] ||
                (burst_prio[next[t]] == burst_prio[next[best]] && next[t] < next[best]))
                best = t;
        }
        out[k] = (uint32_t)next[best];
        next[best] += BURST_NB_TAGS;
        if (next[best] >= n)
            next[best] = -1;
    }
}

/* Run one burst of n messages of len bytes (len >= 4). All ranks call it; only ranks 0
 * and 1 take part. The caller registered burst_handler on tags 1..14 and
 * burst_hold_handler on BURST_TAG_HOLD. */
static void burst_run(rill_comm_t *comm, int n, size_t len, uint64_t seed)
{
    int rank = rill_comm_rank(comm);
    CHECK(n <= BURST_MAX && len >= 4, "burst parameters");
    for (int i = 0; i < n; i++)
        burst_prio[i] = (int32_t)(test_rand(&seed) % 10);
    atomic_store(&burst_held, 0);
    atomic_store(&burst_release, 0);
    atomic_store(&burst_count, 0);
    CHECK_OK(rill_comm_barrier(comm));
    if (rank == 0) {
        CHECK_OK(rill_comm_am_send(comm, 1, BURST_TAG_HOLD, NULL, 0, 0));
        double deadline = test_now() + 15;
        while (!atomic_load(&burst_held)) {
            CHECK(test_now() < deadline, "burst: hold message never arrived");
            test_sleep_us(50);
        }
        unsigned char *msg = malloc(len);
        for (int i = 0; i < n; i++) {
            uint32_t idx = (uint32_t)i;
            memcpy(msg, &idx, sizeof(idx));
            for (size_t b = sizeof(idx); b < len; b++)
                msg[b] = test_pattern(idx, b);
            CHECK_OK(rill_comm_am_send(comm, 1, burst_tag(idx), msg, len, burst_prio[i]));
        }
        free(msg);
        atomic_store(&burst_release, 1);
    }
    if (rank == 1) {
        test_wait_ge(&burst_count, (uint64_t)n, 15, "the burst");
        uint32_t *expected = malloc((size_t)n * sizeof(*expected));
        burst_expected(n, expected);
        for (int k = 0; k < n; k++)
            CHECK(burst_order[k] == expected[k],
                  "burst: message %d received is #%u (priority %d), expected #%u (priority %d)", k,
                  burst_order[k], burst_prio[burst_order[k]], expected[k], burst_prio[expected[k]]);
        free(expected);
    }
    CHECK_OK(rill_comm_barrier(comm));
}

#endif
