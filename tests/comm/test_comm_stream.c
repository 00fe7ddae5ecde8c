/* Streams (rill_comm_stream_send / _recv / _cancel): every rank sends every other rank, on
 * each of several tags, a run of chunks of varied sizes (0 B to 1 MiB + 5) from two threads'
 * worth of interleaved posting; the receiver posts its receives for a tag in the same order,
 * some before and some after the sends arrive, and checks each chunk's bytes: chunk k of a
 * tag meets receive k of that tag. Then the errors: a receive shorter than its message fails
 * with RILL_ERR_COMM, a cancelled receive nobody sends to ends with RILL_ERR_COMM, bad
 * arguments are refused. */
#include <stdlib.h>
#include <string.h>

#include "test_comm_util.h"

#define NTAGS   3
#define NCHUNKS 12

static size_t chunk_size(int k)
{
    static const size_t sizes[] = { 1, 4096, 65537, 0, (1u << 20) + 5, 3, 8192, 1u << 20 };
    return sizes[k % (int)(sizeof(sizes) / sizeof(sizes[0]))];
}

static uint64_t seed_of(int src, int dst, int tag, int k)
{
    return (uint64_t)src * 1000003u + (uint64_t)dst * 7919u + (uint64_t)tag * 131u + (uint64_t)k +
           1;
}

static atomic_uint_fast64_t sends_done, recvs_done, failed;
static atomic_int last_error;

static void send_done(void *arg, rill_status_t s)
{
    (void)arg;
    CHECK(s == RILL_SUCCESS, "a stream send failed: %d", (int)s);
    atomic_fetch_add_explicit(&sends_done, 1, memory_order_release);
}

static void recv_done(void *arg, rill_status_t s)
{
    (void)arg;
    if (s == RILL_SUCCESS) {
        atomic_fetch_add_explicit(&recvs_done, 1, memory_order_release);
    } else {
        atomic_store(&last_error, (int)s);
        atomic_fetch_add_explicit(&failed, 1, memory_order_release);
    }
}

/* Post the receives of chunks k0 .. k1 - 1 from every other rank on every tag, in order per
 * (peer, tag), into fresh buffers of one byte more (a canary) at in[(peer, tag, k)]. */
static uint64_t post_recvs(rill_comm_t *comm, unsigned char **in, int k0, int k1)
{
    int rank = rill_comm_rank(comm), size = rill_comm_size(comm);
    uint64_t id, n = 0;
    for (int r = 0; r < size; r++)
        for (int t = 0; t < NTAGS && r != rank; t++)
            for (int k = k0; k < k1; k++) {
                size_t i = ((size_t)r * NTAGS + (size_t)t) * NCHUNKS + (size_t)k;
                in[i] = malloc(chunk_size(k) + 1);
                CHECK(in[i], "out of memory");
                memset(in[i], 0xA5, chunk_size(k) + 1);
                CHECK_OK(rill_comm_stream_recv(comm, r, 100 + t, in[i], chunk_size(k), recv_done,
                                               NULL, &id));
                n++;
            }
    return n;
}

int main(int argc, char **argv)
{
    rill_comm_t *comm = test_comm_start(&argc, &argv);
    int rank = rill_comm_rank(comm), size = rill_comm_size(comm);
    CHECK(size >= 2, "run with mpirun -np 2 or more");
    CHECK(rill_comm_stream_tag_max(comm) >= 32767, "stream tags up to %d",
          rill_comm_stream_tag_max(comm));
    size_t n = (size_t)size * NTAGS * NCHUNKS;
    unsigned char **out = calloc(n, sizeof(*out)), **in = calloc(n, sizeof(*in));
    uint64_t id, nsend = 0;
    /* half of the receives now (before the peers send), in order per (peer, tag) */
    uint64_t nrecv = post_recvs(comm, in, 0, NCHUNKS / 2);
    /* every send, tags interleaved */
    for (int k = 0; k < NCHUNKS; k++)
        for (int t = 0; t < NTAGS; t++)
            for (int r = 0; r < size; r++) {
                if (r == rank)
                    continue;
                size_t i = ((size_t)r * NTAGS + (size_t)t) * NCHUNKS + (size_t)k;
                out[i] = malloc(chunk_size(k) + 1);
                for (size_t b = 0; b < chunk_size(k); b++)
                    out[i][b] = test_pattern(seed_of(rank, r, t, k), b);
                CHECK_OK(rill_comm_stream_send(comm, r, 100 + t, out[i], chunk_size(k), send_done,
                                               NULL, &id));
                nsend++;
            }
    test_sleep_us(20000); /* (the rest of the receives, mostly after their messages came) */
    nrecv += post_recvs(comm, in, NCHUNKS / 2, NCHUNKS);
    test_wait_ge(&recvs_done, nrecv, 30, "stream receives");
    test_wait_ge(&sends_done, nsend, 30, "stream sends");
    CHECK(atomic_load(&failed) == 0, "%llu stream receives failed",
          (unsigned long long)atomic_load(&failed));
    for (int r = 0; r < size; r++)
        for (int t = 0; t < NTAGS && r != rank; t++)
            for (int k = 0; k < NCHUNKS; k++) {
                size_t i = ((size_t)r * NTAGS + (size_t)t) * NCHUNKS + (size_t)k;
                for (size_t b = 0; b < chunk_size(k); b++)
                    CHECK(in[i][b] == test_pattern(seed_of(r, rank, t, k), b),
                          "chunk %d of tag %d from rank %d (%zu bytes): byte %zu", k, 100 + t, r,
                          chunk_size(k), b);
                CHECK(in[i][chunk_size(k)] == 0xA5,
                      "chunk %d of tag %d from rank %d: written "
                      "past its %zu bytes",
                      k, 100 + t, r, chunk_size(k));
            }
    for (size_t i = 0; i < n; i++) {
        free(in[i]);
        free(out[i]);
    }
    free(in);
    free(out);
    CHECK_OK(rill_comm_barrier(comm));

    /* a receive shorter than its message: RILL_ERR_COMM (the comm engine says so) */
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    unsigned char big[64] = { 0 }, small[16];
    CHECK_OK(rill_comm_stream_send(comm, peer, 7, big, sizeof(big), send_done, NULL, &id));
    CHECK_OK(rill_comm_stream_recv(comm, from, 7, small, sizeof(small), recv_done, NULL, &id));
    test_wait_ge(&failed, 1, 20, "the short receive");
    CHECK(atomic_load(&last_error) == RILL_ERR_COMM, "short receive: %d", atomic_load(&last_error));
    test_wait_ge(&sends_done, nsend + 1, 20, "its send");
    /* a receive nobody sends to, cancelled */
    CHECK_OK(rill_comm_stream_recv(comm, from, 9, small, sizeof(small), recv_done, NULL, &id));
    rill_comm_stream_cancel(comm, id);
    test_wait_ge(&failed, 2, 20, "the cancelled receive");
    rill_comm_stream_cancel(comm, id); /* (it ended: nothing) */
    /* bad arguments */
    CHECK(rill_comm_stream_send(comm, rank, 1, big, 1, send_done, NULL, &id) ==
              RILL_ERR_INVALID_ARG,
          "a stream to this rank must be refused");
    CHECK(rill_comm_stream_send(comm, peer, -1, big, 1, send_done, NULL, &id) ==
              RILL_ERR_INVALID_ARG,
          "a negative tag must be refused");
    CHECK(rill_comm_stream_recv(comm, peer, 1, NULL, 8, recv_done, NULL, &id) ==
              RILL_ERR_INVALID_ARG,
          "a receive into NULL must be refused");
    CHECK(rill_comm_stream_recv(comm, size, 1, small, 8, recv_done, NULL, &id) ==
              RILL_ERR_INVALID_ARG,
          "a rank out of range must be refused");
    CHECK_OK(rill_comm_barrier(comm));
    if (rank == 0)
        printf("streams: %llu chunks sent and checked per rank\n", (unsigned long long)nsend);
    CHECK_OK(rill_comm_fini(&comm));
    return 0;
}
