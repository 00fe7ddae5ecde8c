/* Rendezvous (expose / GET / PUT / PUT_END): every rank exposes buffers of 1 B to
 * 64 MiB (16 MiB under the sanitizers), every other rank GETs each of them (nb_gets = size - 1)
 * with random priorities; contents are checked and each buffer is released exactly once. A GET of
 * an unknown handle, and one larger than the exposed buffer, report their errors. */
#include <stdlib.h>
#include <string.h>

#include "test_comm_util.h"

/* (under ThreadSanitizer, whose instrumented fill and check loops took 28 s of the 4 ranks'
 * run with it, and AddressSanitizer, the largest is left out: the 16 MiB one crosses every
 * path already) */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
static const size_t sizes[] = { 1, 3, 1000, 8192, 65537, (1u << 20) + 5, 16u << 20 };
#else
static const size_t sizes[] = { 1, 3, 1000, 8192, 65537, (1u << 20) + 5, 16u << 20, 64u << 20 };
#endif
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static atomic_uint_fast64_t released[NSIZES], released_total;
static atomic_uint_fast64_t gets_ok, gets_failed;
static atomic_int last_error;

static void release_cb(void *arg, rill_status_t status)
{
    size_t k = (size_t)(uintptr_t)arg;
    CHECK(status == RILL_SUCCESS, "release of buffer %zu: %d", k, (int)status);
    atomic_fetch_add(&released[k], 1);
    atomic_fetch_add_explicit(&released_total, 1, memory_order_release);
}

static void get_done(void *arg, rill_status_t status)
{
    (void)arg;
    if (status == RILL_SUCCESS) {
        atomic_fetch_add_explicit(&gets_ok, 1, memory_order_release);
    } else {
        atomic_store(&last_error, (int)status);
        atomic_fetch_add_explicit(&gets_failed, 1, memory_order_release);
    }
}

static uint64_t seed_of(int rank, size_t k)
{
    return (uint64_t)rank * 1000003u + k * 7919u + 1;
}

static void fill(unsigned char *buf, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = test_pattern(seed, i);
}

int main(int argc, char **argv)
{
    rill_comm_t *comm = test_comm_start(&argc, &argv);
    int rank = rill_comm_rank(comm), size = rill_comm_size(comm);
    CHECK(size >= 2, "run with mpirun -np 2 or more");

    /* Expose one buffer per size. */
    unsigned char *mine[NSIZES];
    uint64_t *handles = calloc((size_t)size * NSIZES, sizeof(uint64_t));
    uint64_t *all_handles = calloc((size_t)size * NSIZES, sizeof(uint64_t));
    for (size_t k = 0; k < NSIZES; k++) {
        mine[k] = malloc(sizes[k]);
        fill(mine[k], sizes[k], seed_of(rank, k));
        CHECK_OK(rill_comm_expose(comm, mine[k], sizes[k], size - 1, release_cb, (void *)k,
                                  &handles[(size_t)rank * NSIZES + k]));
    }
    CHECK(rill_comm_expose(comm, mine[0], 1, 0, release_cb, NULL, &handles[0]) ==
              RILL_ERR_INVALID_ARG,
          "nb_gets 0 must be refused");
    /* Everybody learns every handle (each rank fills its own slots, zeros elsewhere). */
    CHECK_OK(
        rill_comm_allreduce_u64(comm, handles, all_handles, size * (int)NSIZES, RILL_COMM_SUM));

    /* GET every other rank's buffers. */
    unsigned char **theirs = calloc((size_t)size * NSIZES, sizeof(*theirs));
    uint64_t seed = 77 + (uint64_t)rank;
    double t0 = test_now();
    uint64_t nget = 0;
    for (size_t k = NSIZES; k-- > 0;) {
        for (int r = 0; r < size; r++) {
            if (r == rank)
                continue;
            unsigned char **dst = &theirs[(size_t)r * NSIZES + k];
            *dst = malloc(sizes[k]);
            memset(*dst, 0xA5, sizes[k]);
            CHECK_OK(rill_comm_get(comm, r, all_handles[(size_t)r * NSIZES + k], *dst, sizes[k],
                                   (int32_t)(test_rand(&seed) % 100), get_done, NULL));
            nget++;
        }
    }
    unsigned char one;
    CHECK(rill_comm_get(comm, rank, all_handles[0], &one, 1, 0, get_done, NULL) ==
              RILL_ERR_INVALID_ARG,
          "GET from self must be refused");
    test_wait_ge(&gets_ok, nget, 20, "GETs");
    double dt = test_now() - t0;
    CHECK(atomic_load(&gets_failed) == 0, "%llu GETs failed",
          (unsigned long long)atomic_load(&gets_failed));
    for (int r = 0; r < size; r++) {
        if (r == rank)
            continue;
        for (size_t k = 0; k < NSIZES; k++) {
            unsigned char *b = theirs[(size_t)r * NSIZES + k];
            uint64_t s = seed_of(r, k);
            for (size_t i = 0; i < sizes[k]; i++)
                CHECK(b[i] == test_pattern(s, i), "buffer of %zu bytes from rank %d: byte %zu",
                      sizes[k], r, i);
            free(b);
        }
    }
    /* Every buffer of ours is released once its size-1 PUTs completed, and only once. */
    test_wait_ge(&released_total, NSIZES, 20, "releases");
    CHECK_OK(rill_comm_barrier(comm));
    for (size_t k = 0; k < NSIZES; k++)
        CHECK(atomic_load(&released[k]) == 1, "buffer %zu released %llu times", k,
              (unsigned long long)atomic_load(&released[k]));
    if (rank == 0)
        printf("rendezvous: %llu GETs (%.1f MiB) per rank in %.3f s\n", (unsigned long long)nget,
               (double)(size - 1) * 81.0, dt);

    /* Unknown handle: the requester's done gets NOT_FOUND (the exposer logs an error). */
    int peer = (rank + 1) % size;
    unsigned char small[16];
    CHECK_OK(rill_comm_get(comm, peer, 0xdead0000beefull, small, sizeof(small), 0, get_done, NULL));
    test_wait_ge(&gets_failed, 1, 10, "the failed GET");
    CHECK(atomic_load(&last_error) == RILL_ERR_NOT_FOUND, "GET of unknown handle: %d",
          atomic_load(&last_error));
    /* Asking more than was exposed: INVALID_ARG; the buffer stays exposed. */
    uint64_t h, hpeer = 0;
    CHECK_OK(rill_comm_expose(comm, small, 8, 1, release_cb, (void *)0, &h));
    uint64_t *hs = calloc((size_t)size, sizeof(uint64_t)), *ahs = calloc((size_t)size, 8);
    hs[rank] = h;
    CHECK_OK(rill_comm_allreduce_u64(comm, hs, ahs, size, RILL_COMM_MAX));
    hpeer = ahs[peer];
    unsigned char too_big[16];
    CHECK_OK(rill_comm_get(comm, peer, hpeer, too_big, sizeof(too_big), 0, get_done, NULL));
    test_wait_ge(&gets_failed, 2, 10, "the oversized GET");
    CHECK(atomic_load(&last_error) == RILL_ERR_INVALID_ARG, "oversized GET: %d",
          atomic_load(&last_error));
    CHECK_OK(rill_comm_barrier(comm));

    /* The wire of each peer carried its bytes: a net wire (UCX between simulated nodes)
     * all of them, MPI none; RILL_TEST_NET_WIRE names the wire expected between nodes. */
    const char *want_net = getenv("RILL_TEST_NET_WIRE");
    for (int r = 0; r < size; r++) {
        if (r == rank)
            continue;
        const char *why = NULL, *wire = rill_comm_peer_wire(comm, r, &why);
        CHECK(wire && why, "rank %d has no wire", r);
        bool other = rill_comm_node_of(comm, r) != rill_comm_node_id(comm);
        if (want_net && other)
            CHECK(strcmp(wire, want_net) == 0, "rank %d (another node) over %s (%s), not %s", r,
                  wire, why, want_net);
        if (!other)
            CHECK(strcmp(wire, "mpi") == 0, "rank %d (this node) over %s", r, wire);
        rill_comm_peer_stats_t ps;
        rill_comm_peer_stats(comm, r, &ps);
        bool net = strcmp(wire, "mpi") != 0;
        CHECK(ps.rdv_bytes_recv > 0 && ps.net_bytes_recv == (net ? ps.rdv_bytes_recv : 0) &&
                  ps.net_bytes_sent == (net ? ps.rdv_bytes_sent : 0),
              "rank %d over %s: %llu of %llu bytes received and %llu of %llu sent on the net "
              "wire",
              r, wire, (unsigned long long)ps.net_bytes_recv, (unsigned long long)ps.rdv_bytes_recv,
              (unsigned long long)ps.net_bytes_sent, (unsigned long long)ps.rdv_bytes_sent);
    }

    rill_comm_stats_t st;
    rill_comm_stats(comm, &st);
    CHECK(st.gets_served == (uint64_t)(size - 1) * NSIZES, "served %llu GETs",
          (unsigned long long)st.gets_served);
    CHECK(st.gets_done == nget + 2, "%llu GETs done", (unsigned long long)st.gets_done);
    CHECK_OK(rill_comm_fini(&comm));
    for (size_t k = 0; k < NSIZES; k++)
        free(mine[k]);
    free(theirs);
    free(handles);
    free(all_handles);
    free(hs);
    free(ahs);
    return 0;
}
