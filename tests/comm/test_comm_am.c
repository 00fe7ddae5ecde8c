/* Active messages between ranks: argument checks, a ping-pong chain around every rank
 * with payloads up to and at the size limits, an all-to-all with random tags and
 * priorities checking per-(source, tag) order and contents, a burst whose delivery
 * order must follow the priorities, and a handler that holds the comm thread 3 ms (counted
 * as a slow turn of its loop). */
#include <string.h>
#include <unistd.h>

#include "test_comm_burst.h"

enum { PHASE_CHAIN, PHASE_A2A, PHASE_BURST, PHASE_SLOW };
static atomic_int phase;
static int rank, size;

/* ------------------------------------------------------------ chain */

static atomic_uint_fast64_t laps_done;
static uint32_t chain_expected_seq; /* comm thread only */

static void chain_fill(unsigned char *msg, size_t len, uint32_t seq)
{
    for (size_t i = 0; i < len; i++)
        msg[i] = test_pattern(seq, i);
    if (len >= 4)
        memcpy(msg, &seq, 4);
}

static void chain_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)arg;
    CHECK(src == (rank + size - 1) % size, "chain: message from %d", src);
    uint32_t seq = chain_expected_seq;
    if (len >= 4)
        memcpy(&seq, msg, 4);
    CHECK(seq == chain_expected_seq, "chain: seq %u, expected %u (order lost)", seq,
          chain_expected_seq);
    for (size_t i = 4; i < len; i++)
        CHECK(((unsigned char *)msg)[i] == test_pattern(seq, i), "chain: byte %zu of %zu", i, len);
    chain_expected_seq++;
    if (rank == 0) {
        atomic_fetch_add_explicit(&laps_done, 1, memory_order_release);
    } else {
        /* forward from the comm thread itself */
        CHECK_OK(rill_comm_am_send(comm, (rank + 1) % size, 0, msg, len, 0));
    }
}

static void run_chain(rill_comm_t *comm)
{
    size_t lim = rill_comm_short_limit(comm);
    size_t lens[] = { 0, 1, 4, 100, 4095, lim - 1, lim, lim + 1, lim + 1024 };
    int laps = 25;
    uint32_t seq = 0;
    unsigned char *msg = malloc(lim + 1024);
    double t0 = test_now();
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        for (int l = 0; l < laps; l++, seq++) {
            if (rank == 0) {
                chain_fill(msg, lens[k], seq);
                CHECK_OK(rill_comm_am_send(comm, 1, 0, msg, lens[k], 0));
                test_wait_ge(&laps_done, seq + 1, 15, "a chain lap");
            }
        }
    }
    CHECK_OK(rill_comm_barrier(comm));
    if (rank == 0)
        printf("chain: %u laps over %d ranks in %.3f s\n", seq, size, test_now() - t0);
    free(msg);
}

/* ------------------------------------------------------------ all-to-all */

#define A2A_TAGS 14 /* tags 1..14 */
#define A2A_MSGS 3000
typedef struct a2a_hdr {
    uint32_t src, tag;
    uint64_t seq; /* per (src, dst, tag) */
} a2a_hdr_t;

static uint64_t *a2a_next_recv; /* [src][tag], comm thread only */
static atomic_uint_fast64_t a2a_received;

static void a2a_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)comm;
    int tag = (int)(intptr_t)arg;
    a2a_hdr_t h;
    CHECK(len >= sizeof(h), "a2a: %zu bytes", len);
    memcpy(&h, msg, sizeof(h));
    CHECK((int)h.src == src && (int)h.tag == tag, "a2a: header says %u/%u, got %d/%d", h.src, h.tag,
          src, tag);
    uint64_t *next = &a2a_next_recv[src * (RILL_COMM_AM_MAX) + tag];
    CHECK(h.seq == *next, "a2a: from %d tag %d got seq %llu, expected %llu (order lost)", src, tag,
          (unsigned long long)h.seq, (unsigned long long)*next);
    (*next)++;
    for (size_t i = sizeof(h); i < len; i++)
        CHECK(((unsigned char *)msg)[i] == test_pattern(h.seq ^ (uint64_t)src, i),
              "a2a: byte %zu of %zu from %d", i, len, src);
    atomic_fetch_add_explicit(&a2a_received, 1, memory_order_release);
}

static void run_a2a(rill_comm_t *comm)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1);
    uint64_t *sent_to = calloc((size_t)size, sizeof(uint64_t));
    uint64_t *recv_from_all = calloc((size_t)size, sizeof(uint64_t));
    uint64_t *next_send = calloc((size_t)size * RILL_COMM_AM_MAX, sizeof(uint64_t));
    a2a_next_recv = calloc((size_t)size * RILL_COMM_AM_MAX, sizeof(uint64_t));
    size_t lim = rill_comm_short_limit(comm);
    unsigned char *msg = malloc(lim);
    CHECK_OK(rill_comm_barrier(comm));
    double t0 = test_now();
    for (int m = 0; m < A2A_MSGS; m++) {
        int dst = (int)(test_rand(&seed) % (uint64_t)(size - 1));
        if (dst >= rank)
            dst++;
        int tag = 1 + (int)(test_rand(&seed) % A2A_TAGS);
        int32_t prio = (int32_t)(test_rand(&seed) % 2001) - 1000;
        uint64_t r = test_rand(&seed) % 100;
        size_t len = r < 90 ? sizeof(a2a_hdr_t) + r * 3 : r < 98 ? 2000 : lim;
        a2a_hdr_t h = { .src = (uint32_t)rank,
                        .tag = (uint32_t)tag,
                        .seq = next_send[dst * RILL_COMM_AM_MAX + tag]++ };
        memcpy(msg, &h, sizeof(h));
        for (size_t i = sizeof(h); i < len; i++)
            msg[i] = test_pattern(h.seq ^ (uint64_t)rank, i);
        CHECK_OK(rill_comm_am_send(comm, dst, tag, msg, len, prio));
        sent_to[dst]++;
    }
    /* How many each rank must receive: the sum over senders. */
    CHECK_OK(rill_comm_allreduce_u64(comm, sent_to, recv_from_all, size, RILL_COMM_SUM));
    test_wait_ge(&a2a_received, recv_from_all[rank], 15, "all-to-all messages");
    CHECK_OK(rill_comm_barrier(comm));
    if (rank == 0)
        printf("all-to-all: %d messages per rank in %.3f s\n", A2A_MSGS, test_now() - t0);
    free(msg);
    free(sent_to);
    free(recv_from_all);
    free(next_send);
}

/* ------------------------------------------------------------ a slow turn */

static atomic_uint_fast64_t slow_done;

/* Holds the comm thread 3 ms: messages that came meanwhile wait, which the comm thread
 * counts as a slow turn of its loop (rill_comm_stats_t.slow_turns). */
static void slow_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)comm;
    (void)src;
    (void)msg;
    (void)len;
    (void)arg;
    usleep(3000);
    atomic_fetch_add_explicit(&slow_done, 1, memory_order_release);
}

/* ------------------------------------------------------------ dispatch */

static void data_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    if (atomic_load(&phase) == PHASE_SLOW)
        slow_handler(comm, src, msg, len, arg);
    else if (atomic_load(&phase) == PHASE_BURST)
        burst_handler(comm, src, msg, len, arg);
    else
        a2a_handler(comm, src, msg, len, arg);
}

int main(int argc, char **argv)
{
    rill_comm_t *comm = test_comm_start(&argc, &argv);
    rank = rill_comm_rank(comm);
    size = rill_comm_size(comm);
    CHECK(size >= 2, "run with mpirun -np 2 or more");
    CHECK(rill_comm_local_size(comm) >= 1 && rill_comm_local_rank(comm) >= 0 &&
              rill_comm_local_rank(comm) < rill_comm_local_size(comm),
          "local rank %d of %d", rill_comm_local_rank(comm), rill_comm_local_size(comm));
    size_t lim = rill_comm_short_limit(comm);

    CHECK_OK(rill_comm_am_register(comm, 0, chain_handler, NULL));
    for (int t = 1; t <= A2A_TAGS; t++)
        CHECK_OK(rill_comm_am_register(comm, t, data_handler, (void *)(intptr_t)t));
    CHECK_OK(rill_comm_am_register(comm, BURST_TAG_HOLD, burst_hold_handler, NULL));
    CHECK(rill_comm_am_register(comm, RILL_COMM_AM_MAX, chain_handler, NULL) ==
              RILL_ERR_INVALID_ARG,
          "registering tag %d must fail", RILL_COMM_AM_MAX);

    /* Bad arguments are refused at once. */
    char small[8] = { 0 };
    int other = (rank + 1) % size;
    CHECK(rill_comm_am_send(comm, rank, 0, small, 8, 0) == RILL_ERR_INVALID_ARG, "send to self");
    CHECK(rill_comm_am_send(comm, size, 0, small, 8, 0) == RILL_ERR_INVALID_ARG, "bad rank");
    CHECK(rill_comm_am_send(comm, other, -1, small, 8, 0) == RILL_ERR_INVALID_ARG, "tag -1");
    CHECK(rill_comm_am_send(comm, other, RILL_COMM_AM_MAX, small, 8, 0) == RILL_ERR_INVALID_ARG,
          "tag %d", RILL_COMM_AM_MAX);
    void *big = calloc(1, lim + 1025);
    CHECK(rill_comm_am_send(comm, other, 0, big, lim + 1025, 0) == RILL_ERR_INVALID_ARG,
          "len %zu > short_limit + 1024", lim + 1025);
    free(big);
    CHECK_OK(rill_comm_barrier(comm)); /* every handler is registered everywhere */

    atomic_store(&phase, PHASE_CHAIN);
    run_chain(comm);
    atomic_store(&phase, PHASE_A2A);
    CHECK_OK(rill_comm_barrier(comm));
    run_a2a(comm);
    atomic_store(&phase, PHASE_BURST);
    CHECK_OK(rill_comm_barrier(comm));
    burst_run(comm, 500, 16, 42);
    burst_run(comm, 200, lim, 43); /* large messages: several packed MPI messages */

    /* a handler that holds the comm thread is counted (each rank's comm thread once) */
    atomic_store(&phase, PHASE_SLOW);
    rill_comm_stats_t st;
    rill_comm_stats(comm, &st);
    CHECK_OK(rill_comm_barrier(comm));
    CHECK_OK(rill_comm_am_send(comm, (rank + 1) % size, 1, NULL, 0, 0));
    test_wait_ge(&slow_done, 1, 15, "the slow handler");
    rill_comm_stats_t st2; /* (counted once the handler's turn ends) */
    for (double end = test_now() + 15; rill_comm_stats(comm, &st2), test_now() < end;
         test_sleep_us(100))
        if (st2.slow_ns - st.slow_ns >= 3000000) /* (not another turn, preempted, alone) */
            break;
    CHECK(st2.slow_turns > st.slow_turns && st2.slow_ns - st.slow_ns >= 3000000,
          "a 3 ms handler: slow turns %llu -> %llu, %llu ns", (unsigned long long)st.slow_turns,
          (unsigned long long)st2.slow_turns, (unsigned long long)(st2.slow_ns - st.slow_ns));
    st = st2;
    printf("rank %d: %llu AMs sent in %llu MPI messages, %llu received, %llu sleeps; %llu slow "
           "turns, %llu late wake-ups\n",
           rank, (unsigned long long)st.am_sent, (unsigned long long)st.mpi_msgs_sent,
           (unsigned long long)st.am_recv, (unsigned long long)st.sleeps,
           (unsigned long long)st.slow_turns, (unsigned long long)st.late_wakes);
    CHECK(st.am_sent > 0 && st.am_recv > 0 && st.mpi_msgs_sent <= st.am_sent, "stats");
    CHECK_OK(rill_comm_fini(&comm));
    free(a2a_next_recv);
    return 0;
}
