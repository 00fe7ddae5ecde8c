/* Port channels between host memory of two ranks (RILL_HOST_MEMORY; docs/channels.md, "Host
 * memory, any node"), with no GPU: each rank registers a destination region and a host
 * semaphore, and puts into the region of the rank half the job away (another simulated node
 * with comm_ranks_per_node = nranks / 2) NPUT chunks of 0 B to 1 MiB + 3, each followed by a
 * signal; the receiver waits for signal k and checks chunk k at once (a signal follows every
 * put pushed before it). Then a channel to this rank itself, the flush positions, and the
 * errors: a put past the destination's end, a wait for a signal nobody sends, a device handle
 * of a host channel, a host channel from a GPU descriptor. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rill/channel.h"
#include "rill/rill.h"
#include "test_util.h"

#define CHECK_OK(call) CHECK_MSG((call) == RILL_SUCCESS, "%s failed", #call)

#define NPUT 12

static size_t chunk_size(int k)
{
    static const size_t sizes[] = { 1, 4096, 0, 65537, (1u << 20) + 3, 8, 300000, 17 };
    return sizes[k % (int)(sizeof(sizes) / sizeof(sizes[0]))];
}

static unsigned char pattern(int from, int k, size_t i)
{
    return (unsigned char)(from * 31 + k * 7 + (int)(i % 251));
}

/* what every rank publishes */
typedef struct pub {
    rill_regmem_t dst;
    rill_sem_t sem;
} pub_t;

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    CHECK_OK(rill_init(&argc, &argv, &ctx));
    int rank = rill_context_rank(ctx), n = rill_context_nranks(ctx);
    size_t total = 0;
    for (int k = 0; k < NPUT; k++)
        total += chunk_size(k);
    unsigned char *dst = malloc(total), *src = malloc(total);
    CHECK(dst && src);
    memset(dst, 0xA5, total);
    pub_t mine, *all = calloc((size_t)n, sizeof(*all));
    CHECK(all);
    CHECK_OK(rill_regmem_get(ctx, RILL_HOST_MEMORY, dst, total, &mine.dst));
    CHECK_OK(rill_sem_create(ctx, RILL_HOST_MEMORY, &mine.sem));
    CHECK_OK(rill_context_allgather(ctx, &mine, sizeof(mine), all));

    /* to the rank half the job away; the rank that puts here is the same distance back */
    int to = (rank + (n + 1) / 2) % n, from = (rank + n - (n + 1) / 2) % n;
    /* the wire the test asks for is the one between the nodes */
    const char *want = getenv("RILL_TEST_NET_WIRE"), *wire = rill_context_wire(ctx, to, NULL);
    if (want && rill_context_node(ctx, to) != rill_context_node(ctx, rank))
        CHECK_MSG(wire && !strcmp(wire, want), "rank %d -> rank %d: bytes over %s, expected %s",
                  rank, to, wire ? wire : "?", want);
    rill_regmem_t src_reg;
    CHECK_OK(rill_regmem_get(ctx, RILL_HOST_MEMORY, src, total, &src_reg));
    rill_port_channel_t *pc;
    CHECK_OK(rill_port_channel_create(ctx, RILL_HOST_MEMORY, &src_reg, &all[to].dst, &all[to].sem,
                                      &mine.sem, &pc));
    size_t off = 0;
    uint64_t last = 0;
    for (int k = 0; k < NPUT; k++) {
        for (size_t i = 0; i < chunk_size(k); i++)
            src[off + i] = pattern(rank, k, i);
        CHECK_OK(rill_port_channel_push(pc, RILL_PC_PUT | RILL_PC_SIGNAL | RILL_PC_FLUSH, off, off,
                                        chunk_size(k), &last));
        off += chunk_size(k);
    }
    CHECK_MSG(last == NPUT, "the last flush position is %llu, expected %d",
              (unsigned long long)last, NPUT);
    /* the peer's puts into dst, chunk by chunk as their signals come */
    off = 0;
    for (int k = 0; k < NPUT; k++) {
        CHECK_OK(rill_sem_wait(&mine.sem, (uint64_t)k + 1, 30.0));
        for (size_t i = 0; i < chunk_size(k); i++)
            CHECK_MSG(dst[off + i] == pattern(from, k, i),
                      "rank %d: chunk %d from rank %d, byte %zu of %zu: %u, expected %u", rank, k,
                      from, i, chunk_size(k), dst[off + i], pattern(from, k, i));
        off += chunk_size(k);
    }
    CHECK_OK(rill_port_channel_wait_flushed(pc, last, 30.0));

    /* a put past the destination's end: refused at once, nothing sent */
    uint64_t pos = 0;
    CHECK(rill_port_channel_push(pc, RILL_PC_PUT, total - 4, 0, 8, &pos) == RILL_ERR_INVALID_ARG);
    /* a signal alone, then a flush position: it follows the puts */
    CHECK_OK(rill_port_channel_push(pc, RILL_PC_SIGNAL | RILL_PC_FLUSH, 0, 0, 0, &pos));
    CHECK_MSG(pos == NPUT + 1, "position %llu after a signal alone", (unsigned long long)pos);
    CHECK_OK(rill_sem_wait(&mine.sem, NPUT + 1, 30.0));
    CHECK_OK(rill_port_channel_wait_flushed(pc, pos, 30.0));
    /* a host channel has no device handle */
    rill_port_channel_dev_t d = rill_port_channel_device(pc);
    CHECK(d.fifo.ring == NULL && d.inbound == NULL);

    /* a channel to this rank: carried out at once */
    unsigned char *self_dst = calloc(64, 1);
    CHECK(self_dst);
    rill_regmem_t self_reg;
    rill_sem_t self_sem;
    CHECK_OK(rill_regmem_get(ctx, RILL_HOST_MEMORY, self_dst, 64, &self_reg));
    CHECK_OK(rill_sem_create(ctx, RILL_HOST_MEMORY, &self_sem));
    rill_port_channel_t *self;
    CHECK_OK(rill_port_channel_create(ctx, RILL_HOST_MEMORY, &src_reg, &self_reg, &self_sem, NULL,
                                      &self));
    CHECK_OK(rill_port_channel_push(self, RILL_PC_PUT | RILL_PC_SIGNAL, 8, 0, 32, &pos));
    CHECK_OK(rill_sem_wait(&self_sem, 1, 5.0));
    CHECK(memcmp(self_dst + 8, src, 32) == 0 && self_dst[0] == 0 && self_dst[40] == 0);
    CHECK_OK(rill_port_channel_destroy(ctx, &self));

    /* errors: a wait nobody ends; a host channel with a GPU descriptor */
    CHECK(rill_sem_wait(&self_sem, 2, 0.2) == RILL_ERR_TIMEOUT);
    rill_regmem_t gpu_reg = self_reg;
    gpu_reg.ordinal = 0;
    rill_port_channel_t *bad = NULL;
    CHECK(rill_port_channel_create(ctx, RILL_HOST_MEMORY, &src_reg, &gpu_reg, &self_sem, NULL,
                                   &bad) == RILL_ERR_INVALID_ARG &&
          !bad);

    /* everybody done with everybody's memory before it goes */
    int done = 1, *dones = calloc((size_t)n, sizeof(int));
    CHECK_OK(rill_context_allgather(ctx, &done, sizeof(done), dones));
    CHECK_OK(rill_port_channel_destroy(ctx, &pc));
    CHECK_OK(rill_sem_destroy(ctx, RILL_HOST_MEMORY, &self_sem));
    CHECK_OK(rill_sem_destroy(ctx, RILL_HOST_MEMORY, &mine.sem));
    if (rank == 0)
        printf("host channels: %d ranks, %d puts of %zu bytes in all per rank, checked\n", n, NPUT,
               total);
    CHECK_OK(rill_fini(&ctx));
    free(dones);
    free(self_dst);
    free(all);
    free(src);
    free(dst);
    return 0;
}
