/* Channels through the public API (rill/channel.h, rill/channel_device.cuh), one scenario
 * per run (argv[1]; argv[2], if given, sets the rounds of pingpong and signal). Two *sides*
 * talk: in one process they are its GPUs 0 and 1; under mpirun -np 2 side r is rank r's
 * GPU 0 (descriptors exchanged with rill_context_allgather, which is also the barrier).
 *   pingpong   memory channel ping-pong, one kernel per side running at once: 100000
 *              rounds with rill_mc_signal, each carrying a block's rill_mc_put of a few
 *              hundred bytes (odd sizes, misaligned) checked by the receiver, then 100000
 *              with rill_mc_signal_relaxed (no data); rounds/s.
 *   put        ~50 port channel puts (0 B .. 256 MiB, odd sizes, unaligned offsets, both
 *              directions) between 512 MiB regions from rill_gpu_alloc: host API
 *              (PUT|FLUSH, several puts then a FLUSH alone) and device API (rill_pc_put +
 *              rill_pc_flush), one put the proxy must refuse (past the region); the
 *              receiver checks every byte of its region: the put's bytes, and the guard
 *              pattern everywhere else; GB/s.
 *   signal     port channel ping-pong in both directions: pattern into the source,
 *              rill_pc_put_with_signal from a kernel (then, for the last rounds, the host
 *              API), the peer's stream waits on its semaphore (rill_sem_stream_wait) and a
 *              kernel checks the whole destination: a signal that overtook its data is
 *              counted. 4 KiB, 64 KiB and 1 MiB in turn.
 *              A side whose stream has not moved for 8 s says whether a copy and a
 *              kernel on a stream of their own still run on its GPU.
 *   signal_kwait the same with each wait in a one-thread kernel (rill_pc_wait) in place of
 *              the stream's (between simulated nodes it passes where signal hangs:
 *              docs/channels.md, "Limits").
 *   concurrent (one process) 64 MiB port channel puts, pushed from a second thread and
 *              checked, while DTD taskpools of cuBLAS tasks run on the same GPU(s).
 * Each exits 77 (skipped) with the reason when the GPUs are missing (one process: 2 GPUs;
 * two processes: a GPU each, reachable GPU to GPU); the ranks agree on skipping. */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "rill/channel.h"
#include "rill/channel_device.cuh"
#include "rill/cuda.h"
#include "rill/rill.h"

#include "cuda_check.cuh"

#define CHECK_OK(call)                                                                             \
    do {                                                                                           \
        rill_status_t s_ = (call);                                                                 \
        CHECK_MSG(s_ == RILL_SUCCESS, "%s: %s", #call, rill_status_string(s_));                    \
    } while (0)

#define MIB (1ull << 20)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ patterns (device) */

__host__ __device__ static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* byte at offset o of a put source in round r, and of the guard around a destination */
__device__ static inline uint8_t pat_byte(uint64_t o, uint32_t r)
{
    return (uint8_t)(mix64(o ^ ((uint64_t)r << 44) ^ 0x5041545445524e00ull) >> 56);
}

__device__ static inline uint8_t guard_byte(uint64_t o, uint32_t r)
{
    return (uint8_t)(mix64(o ^ ((uint64_t)r << 44) ^ 0x4755415244000000ull) >> 56);
}

/* word w that side s sends in round r */
__host__ __device__ static inline uint64_t side_word(int s, uint32_t r, uint64_t w)
{
    return mix64(((uint64_t)r << 32) ^ w ^ ((uint64_t)s << 62));
}

#define SEG_MAX 8
/* puts of a round: dst[k] .. + size[k] of the destination come from src[k] of the source */
typedef struct segs {
    int n;
    uint64_t src[SEG_MAX], dst[SEG_MAX], size[SEG_MAX];
} segs_t;

typedef struct check {
    unsigned long long bad_in, bad_out, first;
} check_t;

__global__ void fill_pattern(uint8_t *p, uint64_t len, uint32_t round, int guard)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += stride)
        p[i] = guard ? guard_byte(i, round) : pat_byte(i, round);
}

/* Every byte of a destination region: inside a put, the source pattern of round src_round
 * at the matching source offset; outside, the guard of guard_round. */
__global__ void check_region(const uint8_t *p, uint64_t len, segs_t segs, uint32_t src_round,
                             uint32_t guard_round, check_t *out)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += stride) {
        int in = -1;
        for (int k = 0; k < segs.n; k++)
            if (i >= segs.dst[k] && i - segs.dst[k] < segs.size[k])
                in = k;
        uint8_t want = in >= 0 ? pat_byte(segs.src[in] + (i - segs.dst[in]), src_round)
                               : guard_byte(i, guard_round);
        if (p[i] != want) {
            atomicAdd(in >= 0 ? &out->bad_in : &out->bad_out, 1ull);
            atomicMin(&out->first, (unsigned long long)i);
        }
    }
}

/* ------------------------------------------------------------ the two sides */

typedef struct side {
    bool mine;   /* this process runs it */
    int gpu;     /* Rill's GPU index in its process */
    int ordinal; /* CUDA device ordinal (this process's numbering; mine only) */
    cudaStream_t st;
} side_t;

static rill_context_t *ctx;
static int nranks, rank_;
static side_t sides[2];
static bool same_gpu; /* two processes on one GPU (their kernels take turns on it) */

static void use(int s)
{
    CU(cudaSetDevice(sides[s].ordinal));
}

/* Every rank gives ok, all get the AND (also a barrier). */
static int agree(int ok)
{
    int all[2] = { 0, 0 }; /* nranks is 1 or 2 here */
    CHECK_OK(rill_context_allgather(ctx, &ok, sizeof(ok), all));
    return all[0] && (nranks == 1 || all[1]);
}

static void barrier(void)
{
    (void)agree(1);
}

/* Descriptors of the two sides, each sized size (descs[s] at descs + s * size): this
 * process filled those of its sides; afterwards all are filled. */
static void exchange(void *descs, size_t size)
{
    if (nranks == 1)
        return;
    char *all = (char *)malloc(2 * size);
    CHECK_MSG(all, "out of host memory");
    CHECK_OK(rill_context_allgather(ctx, (char *)descs + (size_t)rank_ * size, size, all));
    memcpy(descs, all, 2 * size);
    free(all);
}

static void bounded_sync(int s, double timeout_s, const char *what)
{
    double t0 = now_s();
    cudaError_t e;
    while ((e = cudaStreamQuery(sides[s].st)) == cudaErrorNotReady) {
        if (now_s() - t0 > timeout_s) {
            char msg[300] = "";
            int code = rill_channel_device_error(ctx, sides[s].gpu, msg, sizeof(msg));
            FAIL("side %d (GPU %d): %s did not finish within %.0f s (device error %d%s%s)", s,
                 sides[s].ordinal, what, timeout_s, code, code ? ": " : "", msg);
        }
        usleep(50);
    }
    CHECK_MSG(e == cudaSuccess, "side %d: %s: %s", s, what, cudaGetErrorString(e));
}

/* Both sides' GPUs, or a reason to skip (the same answer on every rank). port_only: the
 * scenario uses port channels only. */
static const char *setup_sides(bool port_only)
{
    static char why[256];
    nranks = rill_context_nranks(ctx);
    rank_ = rill_context_rank(ctx);
    int ngpus = rill_context_ngpus(ctx);
    const char *st = rill_context_gpu_status(ctx);
    why[0] = '\0';
    if (nranks == 1) {
        if (ngpus < 2)
            snprintf(why, sizeof(why), "one process needs 2 GPUs, it runs on %d%s%s", ngpus,
                     st[0] ? ": " : "", st);
        for (int s = 0; s < 2; s++)
            sides[s] = (side_t){ true, s, -1, NULL };
    } else if (nranks == 2) {
        if (ngpus < 1)
            snprintf(why, sizeof(why), "rank %d runs on no GPU%s%s", rank_, st[0] ? ": " : "", st);
        else {
            /* memory channels need CUDA IPC (this node); port channels also reach the GPUs
             * of another node over the net wire (d == 2) */
            const char *w = NULL;
            int d = rill_port_channel_reach(ctx, 1 - rank_, &w);
            if (d != 1 && !(d == 2 && port_only))
                snprintf(why, sizeof(why), "rank %d does not reach rank %d's GPU memory%s: %s",
                         rank_, 1 - rank_, d == 2 ? " by CUDA IPC (another node)" : "",
                         w && w[0] ? w : "?");
            else if (d == 2)
                printf("rank %d: rank %d's GPU is on another node: port channels over the net "
                       "wire\n",
                       rank_, 1 - rank_);
        }
        for (int s = 0; s < 2; s++)
            sides[s] = (side_t){ s == rank_, 0, -1, NULL };
    } else {
        snprintf(why, sizeof(why), "the scenarios run on 1 or 2 ranks, not %d", nranks);
    }
    /* every rank learns every rank's reason: all skip, or none */
    if (nranks == 2) {
        char all[2][256];
        CHECK_OK(rill_context_allgather(ctx, why, sizeof(why), all));
        for (int r = 0; r < 2; r++)
            if (all[r][0]) {
                if (r != rank_)
                    snprintf(why, sizeof(why), "rank %d: %.240s", r, all[r]);
                return why;
            }
    }
    if (why[0])
        return why;
    for (int s = 0; s < 2; s++) {
        if (!sides[s].mine)
            continue;
        /* the ordinal: where Rill's allocation on that GPU lives */
        void *p;
        CHECK_OK(rill_gpu_alloc(ctx, sides[s].gpu, 256, &p));
        cudaPointerAttributes a;
        CU(cudaPointerGetAttributes(&a, p));
        sides[s].ordinal = a.device;
        CHECK_OK(rill_gpu_free(ctx, sides[s].gpu, p));
        use(s);
        CU(cudaStreamCreateWithFlags(&sides[s].st, cudaStreamNonBlocking));
        printf("side %d: rank %d, %s\n", s, rank_, rill_context_gpu_name(ctx, sides[s].gpu));
    }
    if (nranks == 2) { /* the same GPU for both ranks? */
        char bus[2][32];
        memset(bus, 0, sizeof(bus));
        CU(cudaDeviceGetPCIBusId(bus[rank_], sizeof(bus[0]), sides[rank_].ordinal));
        exchange(bus, sizeof(bus[0]));
        same_gpu = !strcmp(bus[0], bus[1]);
        if (same_gpu)
            printf("both ranks run on GPU %s\n", bus[0]);
    }
    if (nranks == 1) { /* kernels store into the other GPU's memory: peer access needed */
        int a = 0, b = 0;
        CU(cudaDeviceCanAccessPeer(&a, sides[0].ordinal, sides[1].ordinal));
        CU(cudaDeviceCanAccessPeer(&b, sides[1].ordinal, sides[0].ordinal));
        if (!a || !b) {
            snprintf(why, sizeof(why), "GPUs %d and %d have no peer access to each other",
                     sides[0].ordinal, sides[1].ordinal);
            return why;
        }
    }
    return NULL;
}

static void teardown_sides(void)
{
    for (int s = 0; s < 2; s++)
        if (sides[s].mine && sides[s].st) {
            use(s);
            CU(cudaStreamSynchronize(sides[s].st));
            CU(cudaStreamDestroy(sides[s].st));
            sides[s].st = NULL;
        }
}

/* No device-side channel error on this process's sides' GPUs. */
static int device_errors_none(void)
{
    int ok = 1;
    for (int s = 0; s < 2; s++) {
        if (!sides[s].mine)
            continue;
        char msg[300];
        int code = rill_channel_device_error(ctx, sides[s].gpu, msg, sizeof(msg));
        if (code) {
            fprintf(stderr, "side %d: device error %d: %s\n", s, code, msg);
            ok = 0;
        }
    }
    return ok;
}

static void print_counters(void)
{
    for (int s = 0; s < 2; s++) {
        if (!sides[s].mine)
            continue;
        rill_channel_counters_t c;
        CHECK_OK(rill_channel_counters(ctx, sides[s].gpu, &c));
        printf("side %d: channel counters: %llu requests, %llu puts (%.1f MB), %llu signals, "
               "%llu flushes, proxy busy %.3f s\n",
               s, c.requests, c.puts, (double)c.put_bytes / 1e6, c.signals, c.flushes,
               c.proxy_busy_s);
    }
}

static uint64_t sem_value(int s, const rill_sem_t *sem)
{
    uint64_t v = 0;
    use(s);
    CU(cudaMemcpy(&v, sem->ptr, sizeof(v), cudaMemcpyDeviceToHost));
    return v;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ------------------------------------------------------------ pingpong */

#define PP_THREADS 256
#define PP_REGION  (64 * 1024) /* [0, half): staging of what is sent; [half, ...): received */
#define PP_HALF    (PP_REGION / 2)

typedef struct pp_result {
    unsigned long long bad, failed_round, rounds;
} pp_result_t;

__device__ static inline uint8_t pp_byte(int side, uint32_t r, uint64_t k)
{
    return (uint8_t)(side_word(side, r, k) >> 24);
}

/* One block. Side 0 sends first in each round, side 1 answers. full: the sender's block
 * stages size bytes, puts them (rill_mc_put, the whole block) into the peer's half at an
 * offset that changes with the round, then signals (rill_mc_signal); the receiver waits and
 * checks them. Otherwise: rill_mc_signal_relaxed / rill_mc_wait only. */
__global__ void pingpong_kernel(rill_memory_channel_dev_t c, int side, uint32_t rounds, int full,
                                pp_result_t *res)
{
    __shared__ int ok;
    const int tid = threadIdx.x;
    for (uint32_t i = 0; i < rounds; i++) {
        uint64_t size = 8 + (i * 37u) % 2000, soff = i % 16, doff = PP_HALF + (i * 5u) % 16;
        for (int step = 0; step < 2; step++) {
            bool sending = (step == 0) == (side == 0);
            if (sending) {
                if (full) {
                    for (uint64_t k = tid; k < size; k += blockDim.x)
                        c.local[soff + k] = (char)pp_byte(side, i, k);
                    __syncthreads();
                    rill_mc_put(&c, doff, soff, size, tid, blockDim.x);
                    __syncthreads();
                    if (tid == 0)
                        rill_mc_signal(&c);
                } else if (tid == 0) {
                    rill_mc_signal_relaxed(&c);
                }
            } else {
                if (tid == 0)
                    ok = rill_mc_wait(&c);
                __syncthreads();
                if (!ok) {
                    if (tid == 0)
                        res->failed_round = i + 1;
                    return;
                }
                if (full) {
                    unsigned long long bad = 0;
                    for (uint64_t k = tid; k < size; k += blockDim.x)
                        bad += (uint8_t)c.local[doff + k] != pp_byte(1 - side, i, k);
                    if (bad)
                        atomicAdd(&res->bad, bad);
                }
                __syncthreads(); /* the block read it all before the answer overwrites it */
            }
        }
    }
    if (tid == 0)
        res->rounds += rounds;
}

typedef struct pp_desc {
    rill_regmem_t buf;
    rill_sem_t sem;
} pp_desc_t;

static int run_pingpong(uint32_t rounds)
{
    pp_desc_t d[2];
    memset(d, 0, sizeof(d));
    void *buf[2] = { NULL, NULL };
    pp_result_t *res[2] = { NULL, NULL };
    rill_memory_channel_t *mc[2] = { NULL, NULL };
    rill_memory_channel_dev_t h[2];
    for (int s = 0; s < 2; s++) {
        if (!sides[s].mine)
            continue;
        CHECK_OK(rill_gpu_alloc(ctx, sides[s].gpu, PP_REGION, &buf[s]));
        CHECK_OK(rill_regmem_get(ctx, sides[s].gpu, buf[s], PP_REGION, &d[s].buf));
        CHECK_OK(rill_sem_create(ctx, sides[s].gpu, &d[s].sem));
        use(s);
        CU(cudaMalloc((void **)&res[s], sizeof(pp_result_t)));
        CU(cudaMemset(res[s], 0, sizeof(pp_result_t)));
        CU(cudaMemset(buf[s], 0, PP_REGION));
        CU(cudaDeviceSynchronize());
    }
    exchange(d, sizeof(d[0]));
    for (int s = 0; s < 2; s++) {
        if (!sides[s].mine)
            continue;
        CHECK_OK(rill_memory_channel_create(ctx, sides[s].gpu, &d[s].buf, &d[1 - s].buf,
                                            &d[1 - s].sem, &d[s].sem, &mc[s]));
        h[s] = rill_memory_channel_device(mc[s]);
        CHECK_MSG(h[s].peer && h[s].local && h[s].peer_inbound && h[s].inbound && h[s].outbound,
                  "side %d: a memory channel handle with a NULL pointer", s);
        CHECK_MSG(h[s].peer_size == PP_REGION && h[s].local_size == PP_REGION,
                  "side %d: region sizes %llu and %llu, expected %d", s,
                  (unsigned long long)h[s].peer_size, (unsigned long long)h[s].local_size,
                  PP_REGION);
    }
    int ok = 1;
    for (int full = 1; full >= 0; full--) {
        barrier(); /* both sides launch at about the same time */
        double t0 = now_s();
        for (int s = 0; s < 2; s++)
            if (sides[s].mine) {
                use(s);
                pingpong_kernel<<<1, PP_THREADS, 0, sides[s].st>>>(h[s], s, rounds, full, res[s]);
                CU(cudaGetLastError());
            }
        for (int s = 0; s < 2; s++)
            if (sides[s].mine)
                bounded_sync(s, 240, "the ping-pong kernel");
        double dt = now_s() - t0;
        for (int s = 0; s < 2; s++) {
            if (!sides[s].mine)
                continue;
            h[s].expected += rounds; /* the signals this run waited for: the next starts there */
            pp_result_t r;
            use(s);
            CU(cudaMemcpy(&r, res[s], sizeof(r), cudaMemcpyDeviceToHost));
            uint64_t v = sem_value(s, &d[s].sem);
            uint64_t want = (uint64_t)rounds * (full ? 1 : 2);
            printf("pingpong (%s): side %d: %u round trips in %.3f s: %.0f rounds/s (%.2f us per "
                   "round trip)%s; semaphore at %llu, %llu bad bytes\n",
                   full ? "rill_mc_signal, data checked" : "rill_mc_signal_relaxed", s, rounds, dt,
                   rounds / dt, dt / rounds * 1e6, full ? ", 8..2007 B put per message" : "",
                   (unsigned long long)v, r.bad);
            if (r.failed_round || r.bad || r.rounds != want || v != want) {
                fprintf(stderr,
                        "pingpong: side %d: wait failed in round %llu (0: none), %llu bad bytes, "
                        "%llu rounds done, semaphore %llu (expected %llu)\n",
                        s, r.failed_round, r.bad, r.rounds, (unsigned long long)v,
                        (unsigned long long)want);
                ok = 0;
            }
        }
        if (!agree(ok))
            break;
    }
    ok = device_errors_none() && ok;
    print_counters();
    ok = agree(ok);
    for (int s = 0; s < 2; s++) {
        if (!sides[s].mine)
            continue;
        CHECK_OK(rill_memory_channel_destroy(ctx, &mc[s]));
        CHECK_OK(rill_sem_destroy(ctx, sides[s].gpu, &d[s].sem));
        CHECK_OK(rill_gpu_free(ctx, sides[s].gpu, buf[s]));
        use(s);
        CU(cudaFree(res[s]));
    }
    barrier(); /* (both kernels ended before the agree above: nothing uses what was freed) */
    CHECK_MSG(ok, "the ping-pong failed (see above)");
    return 0;
}

/* ------------------------------------------------------------ put */

#define PUT_REGION (512 * MIB)

typedef struct put_round {
    int sender;
    int device;      /* 1: the device API from a kernel */
    int refused;     /* 1: a put past the destination: the proxy refuses it, nothing lands */
    int flush_alone; /* host API: the puts, then a FLUSH request of its own */
    segs_t segs;
} put_round_t;

typedef struct put_desc {
    rill_regmem_t src, dst;
    rill_sem_t sem;
} put_desc_t;

/* One put of size bytes into dst_lo .. dst_hi (of the destination), source anywhere; the
 * offsets by mode: 0 both at the start / end, 1 random (unaligned), 2 256-byte aligned. */
static void add_seg(segs_t *g, uint64_t size, uint64_t dst_lo, uint64_t dst_hi, int mode)
{
    uint64_t s_room = PUT_REGION - size, d_room = dst_hi - dst_lo - size, so, d;
    switch (mode) {
    case 0:
        so = 0;
        d = d_room;
        break;
    case 1:
        so = rnd() % (s_room + 1);
        d = rnd() % (d_room + 1);
        break;
    case 2:
        so = (rnd() % (s_room + 1)) & ~255ull;
        d = (rnd() % (d_room + 1)) & ~255ull;
        break;
    default:
        so = s_room;
        d = 0;
        break;
    }
    g->src[g->n] = so;
    g->dst[g->n] = dst_lo + d;
    g->size[g->n] = size;
    g->n++;
}

/* The rounds, the same on every rank (fixed seed). */
static int put_rounds(put_round_t *r, int max)
{
    /* bytes: tiny, odd, around 4 KiB and 64 KiB, then 1 MiB (+1), 3 MiB - 5, 16 MiB (+7),
     * 64 MiB (-1), 100 MiB + 13, 128 MiB, 200 MiB + 1, 256 MiB (-1) */
    static const uint64_t sizes[] = { 0,         1,         2,         3,        7,
                                      8,         15,        16,        17,       255,
                                      256,       257,       4095,      4096,     4097,
                                      65535,     65539,     1048576,   1048577,  3145723,
                                      16777216,  16777223,  67108863,  67108864, 104857613,
                                      134217728, 209715201, 268435455, 268435456 };
    rng_state = 0x2545f4914f6cdd1dull;
    int n = 0;
    const int nfixed = (int)(sizeof(sizes) / sizeof(sizes[0]));
    for (int i = 0; i < nfixed + 10 && n < max; i++, n++) {
        uint64_t size;
        if (i < nfixed)
            size = sizes[i];
        else if (i < nfixed + 3)
            size = rnd() % 4096;
        else if (i < nfixed + 6)
            size = rnd() % MIB;
        else if (i < nfixed + 8)
            size = rnd() % (64 * MIB);
        else
            size = rnd() % (256 * MIB + 1);
        memset(&r[n], 0, sizeof(r[n]));
        r[n].sender = n % 2;
        add_seg(&r[n].segs, size, 0, PUT_REGION, i % 4);
    }
    /* several puts per round, into the four quarters of the destination */
    for (int k = 0; k < 3 && n < max; k++, n++) {
        memset(&r[n], 0, sizeof(r[n]));
        r[n].sender = n % 2;
        r[n].flush_alone = k != 2;
        for (int q = 0; q < 4; q++)
            add_seg(&r[n].segs, rnd() % (PUT_REGION / 8) + q, q * (PUT_REGION / 4),
                    (q + 1) * (PUT_REGION / 4), 1);
    }
    /* the device API */
    static const uint64_t dsizes[] = { 1, 4097, MIB + 3, 64 * MIB, 0 };
    for (int k = 0; k < 6 && n < max; k++, n++) {
        memset(&r[n], 0, sizeof(r[n]));
        r[n].sender = n % 2;
        r[n].device = 1;
        if (k < 5)
            add_seg(&r[n].segs, dsizes[k], 0, PUT_REGION, 1 + k % 2);
        else
            for (int q = 0; q < 4; q++)
                add_seg(&r[n].segs, rnd() % (8 * MIB) + 3, q * (PUT_REGION / 4),
                        (q + 1) * (PUT_REGION / 4), 1);
    }
    /* refused: runs 4096 - 100 bytes past the end of the destination */
    if (n < max) {
        memset(&r[n], 0, sizeof(r[n]));
        r[n].sender = 0;
        r[n].refused = 1;
        r[n].segs.n = 1;
        r[n].segs.src[0] = 0;
        r[n].segs.dst[0] = PUT_REGION - 100;
        r[n].segs.size[0] = 4096;
        n++;
    }
    return n;
}

typedef struct dev_put_res {
    int pushed, flushed;
} dev_put_res_t;

__global__ void device_puts(rill_port_channel_dev_t c, segs_t segs, dev_put_res_t *res)
{
    int pushed = 0;
    for (int k = 0; k < segs.n; k++)
        pushed += rill_pc_put(&c, segs.dst[k], segs.src[k], segs.size[k]) != RILL_FIFO_FAILED;
    res->pushed = pushed;
    res->flushed = rill_pc_flush(&c) ? 1 : 0;
}

/* stderr into a file while the proxy reports the refused put */
typedef struct capture {
    int saved;
    FILE *tmp;
} capture_t;

static void capture_begin(capture_t *c)
{
    fflush(stderr);
    c->tmp = tmpfile();
    CHECK_MSG(c->tmp, "tmpfile failed");
    c->saved = dup(2);
    dup2(fileno(c->tmp), 2);
}

static char *capture_end(capture_t *c)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    long n = ftell(c->tmp);
    char *buf = (char *)calloc(1, (size_t)(n > 0 ? n : 0) + 1);
    CHECK_MSG(buf, "out of host memory");
    rewind(c->tmp);
    if (n > 0 && fread(buf, 1, (size_t)n, c->tmp) != (size_t)n)
        buf[0] = '\0';
    fclose(c->tmp);
    return buf;
}

static void describe_round(char *out, size_t len, const put_round_t *r)
{
    size_t o = (size_t)snprintf(out, len, "%d put(s):", r->segs.n);
    for (int k = 0; k < r->segs.n && o < len; k++)
        o += (size_t)snprintf(
            out + o, len - o, " %llu B %llu->%llu", (unsigned long long)r->segs.size[k],
            (unsigned long long)r->segs.src[k], (unsigned long long)r->segs.dst[k]);
}

static int run_put(void)
{
    put_desc_t d[2];
    memset(d, 0, sizeof(d));
    void *src[2] = { NULL, NULL }, *dst[2] = { NULL, NULL };
    check_t *chk[2] = { NULL, NULL };
    dev_put_res_t *dres[2] = { NULL, NULL };
    rill_port_channel_t *pc[2] = { NULL, NULL };
    for (int s = 0; s < 2; s++) {
        if (!sides[s].mine)
            continue;
        CHECK_OK(rill_gpu_alloc(ctx, sides[s].gpu, PUT_REGION, &src[s]));
        CHECK_OK(rill_gpu_alloc(ctx, sides[s].gpu, PUT_REGION, &dst[s]));
        CHECK_OK(rill_regmem_get(ctx, sides[s].gpu, src[s], PUT_REGION, &d[s].src));
        CHECK_OK(rill_regmem_get(ctx, sides[s].gpu, dst[s], PUT_REGION, &d[s].dst));
        CHECK_OK(rill_sem_create(ctx, sides[s].gpu, &d[s].sem));
        use(s);
        CU(cudaMalloc((void **)&chk[s], sizeof(check_t)));
        CU(cudaMalloc((void **)&dres[s], sizeof(dev_put_res_t)));
    }
    exchange(d, sizeof(d[0]));
    for (int s = 0; s < 2; s++)
        if (sides[s].mine)
            CHECK_OK(rill_port_channel_create(ctx, sides[s].gpu, &d[s].src, &d[1 - s].dst,
                                              &d[1 - s].sem, &d[s].sem, &pc[s]));
    put_round_t rounds[64];
    int n = put_rounds(rounds, 64);
    /* the rounds are the same on every rank: check it */
    if (nranks == 2) {
        uint64_t mine = mix64((uint64_t)n), all[2];
        for (int i = 0; i < n; i++)
            for (int k = 0; k < rounds[i].segs.n; k++)
                mine = mix64(mine ^ rounds[i].segs.size[k] ^ (rounds[i].segs.src[k] << 1) ^
                             (rounds[i].segs.dst[k] << 2));
        CHECK_OK(rill_context_allgather(ctx, &mine, sizeof(mine), all));
        CHECK_MSG(all[0] == all[1], "the ranks generated different rounds");
    }
    int ok = 1, nbad = 0;
    double big_bytes = 0, big_s = 0;
    for (int i = 0; i < n; i++) {
        const put_round_t *r = &rounds[i];
        int snd = r->sender, rcv = 1 - snd;
        uint32_t round = (uint32_t)i + 1;
        char what[400];
        describe_round(what, sizeof(what), r);
        if (sides[rcv].mine) {
            use(rcv);
            fill_pattern<<<2048, 256, 0, sides[rcv].st>>>((uint8_t *)dst[rcv], PUT_REGION, round,
                                                          1);
            CU(cudaGetLastError());
            bounded_sync(rcv, 60, "the guard fill");
        }
        if (sides[snd].mine) {
            use(snd);
            fill_pattern<<<2048, 256, 0, sides[snd].st>>>((uint8_t *)src[snd], PUT_REGION, round,
                                                          0);
            CU(cudaGetLastError());
            bounded_sync(snd, 60, "the source fill");
        }
        barrier(); /* the destination holds its guard before the puts start */
        if (sides[snd].mine) {
            uint64_t bytes = 0;
            for (int k = 0; k < r->segs.n; k++)
                bytes += r->segs.size[k];
            double t0 = now_s(), dt;
            if (r->device) {
                use(snd);
                CU(cudaMemsetAsync(dres[snd], 0, sizeof(dev_put_res_t), sides[snd].st));
                device_puts<<<1, 1, 0, sides[snd].st>>>(rill_port_channel_device(pc[snd]), r->segs,
                                                        dres[snd]);
                CU(cudaGetLastError());
                bounded_sync(snd, 120, "the device API puts");
                dt = now_s() - t0;
                dev_put_res_t dr;
                CU(cudaMemcpy(&dr, dres[snd], sizeof(dr), cudaMemcpyDeviceToHost));
                CHECK_MSG(dr.pushed == r->segs.n && dr.flushed == 1,
                          "round %d: the kernel pushed %d of %d puts, flush %s", i, dr.pushed,
                          r->segs.n, dr.flushed ? "done" : "failed");
            } else {
                capture_t cap;
                if (r->refused)
                    capture_begin(&cap);
                uint64_t pos = 0;
                for (int k = 0; k < r->segs.n; k++) {
                    unsigned flags = RILL_PC_PUT;
                    if (k == r->segs.n - 1 && !r->flush_alone)
                        flags |= RILL_PC_FLUSH;
                    CHECK_OK(rill_port_channel_push(pc[snd], flags, r->segs.dst[k], r->segs.src[k],
                                                    r->segs.size[k], &pos));
                }
                if (r->flush_alone)
                    CHECK_OK(rill_port_channel_push(pc[snd], RILL_PC_FLUSH, 0, 0, 0, &pos));
                rill_status_t ws = rill_port_channel_wait_flushed(pc[snd], pos, 60);
                dt = now_s() - t0;
                char *err = r->refused ? capture_end(&cap) : NULL;
                CHECK_MSG(ws == RILL_SUCCESS, "round %d: flush position %llu: %s", i,
                          (unsigned long long)pos, rill_status_string(ws));
                if (r->refused) {
                    printf("put round %d: a put past the destination's end; the proxy said: %s", i,
                           err);
                    CHECK_MSG(strstr(err, "runs past a region"),
                              "the refused put was not reported (stderr: '%s')", err);
                    free(err);
                }
            }
            if (!r->refused && bytes >= 16 * MIB) {
                big_bytes += (double)bytes;
                big_s += dt;
            }
            printf("put round %d: side %d -> %d, %s API%s, %s: %.3f ms, %.2f GB/s\n", i, snd, rcv,
                   r->device ? "device" : "host",
                   r->refused       ? " (refused)"
                   : r->flush_alone ? " (flush alone)"
                                    : "",
                   what, dt * 1e3, (double)bytes / dt / 1e9);
        }
        barrier(); /* the data landed (flushed) before the receiver checks */
        if (sides[rcv].mine) {
            use(rcv);
            check_t c0 = { 0, 0, ULLONG_MAX }, c;
            /* on the stream: a pageable cudaMemcpy may return before its DMA is done */
            CU(cudaMemcpyAsync(chk[rcv], &c0, sizeof(c0), cudaMemcpyHostToDevice, sides[rcv].st));
            segs_t expect = r->segs;
            if (r->refused)
                expect.n = 0; /* nothing may have landed */
            check_region<<<2048, 256, 0, sides[rcv].st>>>((const uint8_t *)dst[rcv], PUT_REGION,
                                                          expect, round, round, chk[rcv]);
            CU(cudaGetLastError());
            bounded_sync(rcv, 60, "the check");
            CU(cudaMemcpy(&c, chk[rcv], sizeof(c), cudaMemcpyDeviceToHost));
            if (c.bad_in || c.bad_out) {
                fprintf(stderr,
                        "put round %d (side %d -> %d, %s): %llu wrong byte(s) in the put(s), "
                        "%llu outside them (guard overwritten); first at offset %llu\n",
                        i, snd, rcv, what, c.bad_in, c.bad_out, c.first);
                ok = 0;
                nbad++;
            }
        }
    }
    ok = device_errors_none() && ok;
    print_counters();
    if (big_s > 0)
        printf("put: puts of 16 MiB and more: %.1f GB in %.3f s: %.2f GB/s\n", big_bytes / 1e9,
               big_s, big_bytes / big_s / 1e9);
    printf("put: %d rounds, %d with wrong bytes on this rank's receiving side(s)\n", n, nbad);
    ok = agree(ok);
    for (int s = 0; s < 2; s++) {
        if (!sides[s].mine)
            continue;
        CHECK_OK(rill_port_channel_destroy(ctx, &pc[s]));
    }
    barrier(); /* both channels are gone before a region is freed */
    for (int s = 0; s < 2; s++) {
        if (!sides[s].mine)
            continue;
        CHECK_OK(rill_sem_destroy(ctx, sides[s].gpu, &d[s].sem));
        CHECK_OK(rill_gpu_free(ctx, sides[s].gpu, src[s]));
        CHECK_OK(rill_gpu_free(ctx, sides[s].gpu, dst[s]));
        use(s);
        CU(cudaFree(chk[s]));
        CU(cudaFree(dres[s]));
    }
    CHECK_MSG(ok, "some puts landed wrong (see above)");
    return 0;
}

/* ------------------------------------------------------------ signal */

#define SIG_REGION (1 * MIB)
static const uint64_t sig_sizes[3] = { 4096, 65536, SIG_REGION };

typedef struct sig_res {
    unsigned long long bad_words, first_bad_round, push_failed, checks;
} sig_res_t;

__global__ void fill_words(uint64_t *p, uint64_t n, int side, uint32_t round)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t w = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; w < n; w += stride)
        p[w] = side_word(side, round, w);
}

/* side s's progress, read by the host without a CUDA call (host-mapped): 1 + the last round
 * whose check started on s's stream (the throttle and the hang report) */
static volatile unsigned long long *sig_progress[2];

__global__ void check_words(const uint64_t *p, uint64_t n, int from, uint32_t round, sig_res_t *res,
                            unsigned long long *progress)
{
    if (threadIdx.x == 0)
        atomicMax_system(progress, (unsigned long long)round + 1);
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x, bad = 0;
    for (uint64_t w = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; w < n; w += stride)
        bad += p[w] != side_word(from, round, w);
    if (bad) {
        atomicAdd(&res->bad_words, (unsigned long long)bad);
        atomicMin(&res->first_bad_round, (unsigned long long)round);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        res->checks++;
}

/* signal_kwait: the stream waits in a kernel (one thread spinning on the semaphore) in
 * place of rill_sem_stream_wait */
__global__ void wait_sem_kernel(rill_port_channel_dev_t c, uint64_t value, sig_res_t *res)
{
    c.expected = value - 1;
    if (!rill_pc_wait(&c))
        atomicAdd(&res->push_failed, 1ull);
}

__global__ void push_put_signal(rill_port_channel_dev_t c, uint64_t size, sig_res_t *res)
{
    if (rill_pc_put_with_signal(&c, 0, 0, size) == RILL_FIFO_FAILED)
        atomicAdd(&res->push_failed, 1ull);
}

typedef struct sig_state {
    rill_sem_t sem[2];
    uint64_t *src[2], *dst[2];
    sig_res_t *res[2];
    rill_port_channel_t *pc[2];
    rill_port_channel_dev_t h[2];
    uint64_t received[2]; /* signals each side's stream waited for */
    unsigned long long busy;
} sig_state_t;

/* The hang report (docs/channels.md, "Limits": this scenario hung in one process): the
 * feeding thread records its step before each CUDA call; a watchdog thread that sees no new
 * step for 45 s (less than CTest's limit) prints the step, the progress words, the channel
 * counters (no CUDA call), every thread's stack (gdb, when installed) and exits. */
static struct {
    pthread_mutex_t lock;
    unsigned long long seq;
    int side;
    uint32_t round;
    const char *what;
    bool stop;
    sig_state_t *g;
} sig_wd = { PTHREAD_MUTEX_INITIALIZER, 0, -1, 0, "start", false, NULL };

static void sig_step(int s, uint32_t r, const char *what)
{
    pthread_mutex_lock(&sig_wd.lock);
    sig_wd.seq++;
    sig_wd.side = s;
    sig_wd.round = r;
    sig_wd.what = what;
    pthread_mutex_unlock(&sig_wd.lock);
}

static void *sig_watchdog(void *arg)
{
    (void)arg;
    unsigned long long last = ~0ull;
    double since = now_s();
    for (;;) {
        usleep(500000);
        pthread_mutex_lock(&sig_wd.lock);
        bool stop = sig_wd.stop;
        unsigned long long seq = sig_wd.seq;
        int side = sig_wd.side;
        uint32_t round = sig_wd.round;
        const char *what = sig_wd.what;
        pthread_mutex_unlock(&sig_wd.lock);
        if (stop)
            return NULL;
        if (seq != last) {
            last = seq;
            since = now_s();
            continue;
        }
        if (now_s() - since < 45)
            continue;
        fprintf(stderr,
                "signal: HANG: no progress of the feeding thread for 45 s; its last step: side %d "
                "round %u: %s\n",
                side, round, what);
        for (int k = 0; k < 2; k++) {
            if (!sides[k].mine)
                continue;
            rill_channel_counters_t c;
            memset(&c, 0, sizeof(c));
            rill_channel_counters(ctx, sides[k].gpu, &c);
            fprintf(stderr,
                    "signal: side %d (GPU %d): progress %llu (1 + last round checked), waits "
                    "enqueued %llu; proxy: %llu requests, %llu puts, %llu signals\n",
                    k, sides[k].ordinal, sig_progress[k] ? *sig_progress[k] : 0ull,
                    sig_wd.g ? (unsigned long long)sig_wd.g->received[k] : 0ull, c.requests, c.puts,
                    c.signals);
        }
        char cmd[160];
        snprintf(cmd, sizeof(cmd),
                 "timeout 30 gdb -p %d -batch -ex 'thread apply all bt' 2>&1 | grep -E "
                 "'^Thread|^#' | head -150 1>&2",
                 (int)getpid());
        fflush(stderr);
        if (system(cmd) != 0)
            fprintf(stderr, "signal: (no stacks: gdb missing or failed)\n");
        _exit(3);
    }
}

static void sig_watchdog_start(sig_state_t *g)
{
    sig_wd.g = g;
    pthread_t t;
    if (pthread_create(&t, NULL, sig_watchdog, NULL) == 0)
        pthread_detach(t);
}

static void sig_watchdog_stop(void)
{
    pthread_mutex_lock(&sig_wd.lock);
    sig_wd.stop = true;
    pthread_mutex_unlock(&sig_wd.lock);
}

static unsigned sig_blocks(uint64_t words)
{
    uint64_t b = (words + 255) / 256;
    return (unsigned)(b > 512 ? 512 : b);
}

/* Side s's stream waits for its next signal and checks what came with it (round r of the
 * peer). A refused wait (too many outstanding) is retried once the stream moved on. */
static bool sig_kernel_wait; /* signal_kwait */

static void sig_receive(sig_state_t *g, int s, uint32_t r)
{
    uint64_t v = ++g->received[s];
    double t0 = now_s();
    rill_status_t st = RILL_SUCCESS;
    if (sig_kernel_wait) {
        sig_step(s, r, "launch wait_sem_kernel");
        wait_sem_kernel<<<1, 1, 0, sides[s].st>>>(g->h[s], v, g->res[s]);
        CU(cudaGetLastError());
    } else {
        sig_step(s, r, "rill_sem_stream_wait");
        while ((st = rill_sem_stream_wait(sides[s].st, g->sem[s].ptr, v)) == RILL_ERR_BUSY) {
            g->busy++;
            if (now_s() - t0 > 60)
                FAIL("side %d: a semaphore wait for %llu was refused for 60 s (the stream does "
                     "not move: semaphore at %llu)",
                     s, (unsigned long long)v, (unsigned long long)sem_value(s, &g->sem[s]));
            usleep(10);
            use(s);
        }
    }
    CHECK_MSG(st == RILL_SUCCESS, "side %d: rill_sem_stream_wait(%llu): %s", s,
              (unsigned long long)v, rill_status_string(st));
    uint64_t words = sig_sizes[r % 3] / 8;
    sig_step(s, r, "launch check_words");
    check_words<<<sig_blocks(words), 256, 0, sides[s].st>>>(g->dst[s], words, 1 - s, r, g->res[s],
                                                            (unsigned long long *)sig_progress[s]);
    CU(cudaGetLastError());
}

/* Side s's round r: (wait and check what the peer sent), fill, put with signal. */
static void sig_side_round(sig_state_t *g, int s, uint32_t r, bool host_api)
{
    use(s);
    if (s == 1)
        sig_receive(g, s, r); /* side 0's round r */
    else if (r > 0)
        sig_receive(g, s, r - 1); /* side 1's answer to the previous round */
    uint64_t size = sig_sizes[r % 3];
    sig_step(s, r, "launch fill_words");
    fill_words<<<sig_blocks(size / 8), 256, 0, sides[s].st>>>(g->src[s], size / 8, s, r);
    CU(cudaGetLastError());
    if (!host_api) {
        sig_step(s, r, "launch push_put_signal");
        push_put_signal<<<1, 1, 0, sides[s].st>>>(g->h[s], size, g->res[s]);
        CU(cudaGetLastError());
    } else {
        sig_step(s, r, "bounded_sync before a host put");
        bounded_sync(s, 60, "the wait, check and fill before a host put");
        sig_step(s, r, "rill_port_channel_push");
        CHECK_OK(rill_port_channel_push(g->pc[s], RILL_PC_PUT | RILL_PC_SIGNAL, 0, 0, size, NULL));
    }
}

/* On a hang: whether this GPU still runs a 4 KiB host-to-device copy and a kernel on a
 * stream of their own (made before the loop), each given 3 s. */
static struct {
    cudaStream_t st;
    cudaEvent_t ev;
    char *host, *dev;
} sig_probe[2];

__global__ void probe_kernel(char *p)
{
    p[0]++;
}

static void sig_probe_make(int s)
{
    use(s);
    CU(cudaStreamCreateWithFlags(&sig_probe[s].st, cudaStreamNonBlocking));
    CU(cudaEventCreateWithFlags(&sig_probe[s].ev, cudaEventDisableTiming));
    CU(cudaHostAlloc((void **)&sig_probe[s].host, 4096, cudaHostAllocPortable));
    CU(cudaMalloc((void **)&sig_probe[s].dev, 4096));
    cudaFuncAttributes fa;
    CU(cudaFuncGetAttributes(&fa, (const void *)probe_kernel));
}

static const char *sig_probe_one(int s, bool copy)
{
    use(s);
    if (copy)
        CU(cudaMemcpyAsync(sig_probe[s].dev, sig_probe[s].host, 4096, cudaMemcpyHostToDevice,
                           sig_probe[s].st));
    else
        probe_kernel<<<1, 1, 0, sig_probe[s].st>>>(sig_probe[s].dev);
    CU(cudaEventRecord(sig_probe[s].ev, sig_probe[s].st));
    for (double t0 = now_s(); now_s() - t0 < 3;) {
        cudaError_t e = cudaEventQuery(sig_probe[s].ev);
        if (e == cudaSuccess)
            return "ran";
        if (e != cudaErrorNotReady)
            return cudaGetErrorString(e);
        usleep(1000);
    }
    return "did NOT complete in 3 s";
}

/* Wait (bounded) until side s's stream received the peer's round r. */
static void bounded_sync_to(sig_state_t *g, int s, uint32_t r)
{
    uint64_t want = s == 1 ? (uint64_t)r + 1 : (uint64_t)r; /* side 0 received rounds 0..r-1 */
    double t0 = now_s();
    sig_step(s, r, "throttle (host-mapped progress, no CUDA call)");
    bool probed = false;
    while (*sig_progress[s] < want) {
        if (!probed && now_s() - t0 > 8) {
            probed = true;
            const char *c = sig_probe_one(s, true), *k = sig_probe_one(s, false);
            fprintf(stderr,
                    "side %d: round %u waits 8 s; on a stream of its own, a 4 KiB copy into "
                    "the GPU %s, a kernel %s\n",
                    s, r, c, k);
        }
        if (now_s() - t0 > 30) {
            char msg[300] = "";
            int code = rill_channel_device_error(ctx, sides[s].gpu, msg, sizeof(msg));
            for (int k = 0; k < 2; k++) {
                rill_channel_counters_t c;
                if (sides[k].mine && rill_channel_counters(ctx, sides[k].gpu, &c) == RILL_SUCCESS)
                    fprintf(stderr,
                            "side %d: %llu requests, %llu puts, %llu signals; semaphore "
                            "at %llu\n",
                            k, c.requests, c.puts, c.signals,
                            (unsigned long long)sem_value(k, &g->sem[k]));
            }
            FAIL("side %d: round %u's signal did not arrive within 30 s (semaphore at %llu; "
                 "device error %d%s%s)",
                 s, r, (unsigned long long)sem_value(s, &g->sem[s]), code, code ? ": " : "", msg);
        }
        usleep(20);
    }
}

static int run_signal(uint32_t rounds, uint32_t host_rounds)
{
    sig_state_t g;
    memset(&g, 0, sizeof(g));
    for (int s = 0; s < 2; s++) {
        if (!sides[s].mine)
            continue;
        use(s);
        unsigned long long *p;
        CU(cudaHostAlloc((void **)&p, sizeof(*p), cudaHostAllocMapped | cudaHostAllocPortable));
        *p = 0;
        sig_progress[s] = p;
        /* the kernels loaded on this GPU now (lazy loading would load them at their first
         * launch, which may wait on the driver while a stream waits on a semaphore that a
         * GPU manager's enqueue, in this process, must release) */
        cudaFuncAttributes fa;
        CU(cudaFuncGetAttributes(&fa, (const void *)check_words));
        CU(cudaFuncGetAttributes(&fa, (const void *)fill_words));
        CU(cudaFuncGetAttributes(&fa, (const void *)push_put_signal));
        CU(cudaFuncGetAttributes(&fa, (const void *)wait_sem_kernel));
        sig_probe_make(s);
    }
    sig_watchdog_start(&g);
    typedef struct {
        rill_regmem_t dst;
        rill_sem_t sem;
    } desc_t;
    desc_t d[2];
    memset(d, 0, sizeof(d));
    rill_regmem_t src_reg[2];
    for (int s = 0; s < 2; s++) {
        if (!sides[s].mine)
            continue;
        CHECK_OK(rill_gpu_alloc(ctx, sides[s].gpu, SIG_REGION, (void **)&g.src[s]));
        CHECK_OK(rill_gpu_alloc(ctx, sides[s].gpu, SIG_REGION, (void **)&g.dst[s]));
        CHECK_OK(rill_regmem_get(ctx, sides[s].gpu, g.src[s], SIG_REGION, &src_reg[s]));
        CHECK_OK(rill_regmem_get(ctx, sides[s].gpu, g.dst[s], SIG_REGION, &d[s].dst));
        CHECK_OK(rill_sem_create(ctx, sides[s].gpu, &d[s].sem));
        g.sem[s] = d[s].sem;
        use(s);
        CU(cudaMalloc((void **)&g.res[s], sizeof(sig_res_t)));
        sig_res_t r0 = { 0, ULLONG_MAX, 0, 0 };
        CU(cudaMemcpy(g.res[s], &r0, sizeof(r0), cudaMemcpyHostToDevice));
        CU(cudaMemset(g.dst[s], 0, SIG_REGION));
        CU(cudaDeviceSynchronize());
    }
    exchange(d, sizeof(d[0]));
    for (int s = 0; s < 2; s++) {
        if (!sides[s].mine)
            continue;
        CHECK_OK(rill_port_channel_create(ctx, sides[s].gpu, &src_reg[s], &d[1 - s].dst,
                                          &d[1 - s].sem, &d[s].sem, &g.pc[s]));
        g.h[s] = rill_port_channel_device(g.pc[s]);
    }
    barrier();
    int ok = 1;
    uint32_t total = rounds + host_rounds;
    for (int phase = 0; phase < 2; phase++) {
        uint32_t r0 = phase ? rounds : 0, r1 = phase ? total : rounds;
        if (r1 == r0)
            continue;
        double t0 = now_s();
        for (uint32_t r = r0; r < r1; r++) {
            /* Keep the host at most 24 rounds ahead of the GPUs: a launch into a stream whose
             * command queue is full blocks inside the CUDA runtime, possibly holding locks
             * that a GPU manager's enqueue of the awaited signal needs (docs/channels.md) */
            if (r > r0 && (r - r0) % 16 == 0)
                for (int s = 0; s < 2; s++)
                    if (sides[s].mine && r + 1 < r1)
                        bounded_sync_to(&g, s, r - 8);
            for (int s = 0; s < 2; s++)
                if (sides[s].mine)
                    sig_side_round(&g, s, r, phase == 1);
        }
        if (sides[0].mine && r1 == total) { /* the answer to the last round */
            use(0);
            sig_receive(&g, 0, total - 1);
        }
        for (int s = 0; s < 2; s++)
            if (sides[s].mine)
                bounded_sync(s, 90, "the ping-pong of puts with signals");
        double dt = now_s() - t0;
        uint64_t bytes = 0;
        for (uint32_t r = r0; r < r1; r++)
            bytes += 2 * sig_sizes[r % 3];
        printf("signal (%s API): %u round trips (2 puts each, 4 KiB / 64 KiB / 1 MiB in turn) in "
               "%.3f s: %.0f rounds/s, %.1f us per put, %.2f GB/s; %llu waits refused for a while "
               "(device_stream_max_waits)\n",
               phase ? "host" : "device", r1 - r0, dt, (r1 - r0) / dt, dt / (r1 - r0) / 2 * 1e6,
               (double)bytes / dt / 1e9, g.busy);
        g.busy = 0;
    }
    for (int s = 0; s < 2; s++) {
        if (!sides[s].mine)
            continue;
        sig_res_t r;
        use(s);
        CU(cudaMemcpy(&r, g.res[s], sizeof(r), cudaMemcpyDeviceToHost));
        uint64_t v = sem_value(s, &g.sem[s]);
        printf("signal: side %d: %llu checks, %llu wrong words, %llu failed pushes, semaphore at "
               "%llu (expected %u)\n",
               s, r.checks, r.bad_words, r.push_failed, (unsigned long long)v, total);
        if (r.bad_words)
            fprintf(stderr,
                    "signal: side %d: %llu words differed from what the peer put before its "
                    "signal (first in round %llu): the signal overtook the data\n",
                    s, r.bad_words, r.first_bad_round);
        if (r.bad_words || r.push_failed || r.checks != total || v != total)
            ok = 0;
    }
    ok = device_errors_none() && ok;
    print_counters();
    ok = agree(ok);
    for (int s = 0; s < 2; s++)
        if (sides[s].mine)
            CHECK_OK(rill_port_channel_destroy(ctx, &g.pc[s]));
    barrier();
    for (int s = 0; s < 2; s++) {
        if (!sides[s].mine)
            continue;
        CHECK_OK(rill_sem_destroy(ctx, sides[s].gpu, &g.sem[s]));
        CHECK_OK(rill_gpu_free(ctx, sides[s].gpu, g.src[s]));
        CHECK_OK(rill_gpu_free(ctx, sides[s].gpu, g.dst[s]));
        use(s);
        CU(cudaFree(g.res[s]));
    }
    sig_watchdog_stop();
    for (int s = 0; s < 2; s++)
        if (sig_progress[s]) {
            use(s);
            CU(cudaFreeHost((void *)sig_progress[s]));
            sig_progress[s] = NULL;
            CU(cudaStreamDestroy(sig_probe[s].st));
            CU(cudaEventDestroy(sig_probe[s].ev));
            CU(cudaFreeHost(sig_probe[s].host));
            CU(cudaFree(sig_probe[s].dev));
        }
    CHECK_MSG(ok, "the put/signal ping-pong failed (see above)");
    return 0;
}

/* ------------------------------------------------------------ concurrent */

#define CONC_SLOT  (64 * MIB)
#define CONC_SLOTS 4
#define CONC_PUTS  200

#include "blas_bodies.h"

/* Random axpy / scal updates of nt tiles by CUDA tasks (a = +-1, s = -1 or 0.5: the same
 * roundings as here), checked against the same sequence run here, as test_gpu_dtd does.
 * Returns the number of wrong elements. */
static long random_dag(rill_dtd_class_t *axpy, rill_dtd_class_t *scal, int nt, int ntasks,
                       uint64_t *seed)
{
    double *tiles[16], *ref[16];
    rill_data_t *data[16];
    for (int t = 0; t < nt; t++) {
        tiles[t] = (double *)malloc(sizeof(double) * (size_t)tile_len);
        ref[t] = (double *)malloc(sizeof(double) * (size_t)tile_len);
        CHECK_MSG(tiles[t] && ref[t], "out of host memory");
        for (int i = 0; i < tile_len; i++)
            tiles[t][i] = ref[t][i] = (double)((t * 7 + i) % 11) - 5.0;
        CHECK_OK(rill_data_create(ctx, tiles[t], sizeof(double) * (size_t)tile_len, &data[t]));
    }
    rill_taskpool_t *tp;
    CHECK_OK(rill_dtd_taskpool_create(ctx, &tp));
    for (int k = 0; k < ntasks; k++) {
        *seed = mix64(*seed + 1);
        int y = (int)(*seed % (uint64_t)nt);
        if ((*seed >> 20) % 3) {
            int x = (int)((*seed >> 30) % (uint64_t)nt);
            if (x == y)
                x = (x + 1) % nt;
            double a = ((*seed >> 40) & 1) ? 1.0 : -1.0;
            CHECK_OK(rill_dtd_insert_task(tp, axpy, 0, RILL_DTD_VALUE, sizeof(a), &a,
                                          RILL_DTD_INPUT, data[x], RILL_DTD_INOUT, data[y],
                                          RILL_DTD_ARG_END));
            for (int i = 0; i < tile_len; i++)
                ref[y][i] += a * ref[x][i];
        } else {
            double s = ((*seed >> 40) & 1) ? -1.0 : 0.5;
            CHECK_OK(rill_dtd_insert_task(tp, scal, 0, RILL_DTD_VALUE, sizeof(s), &s,
                                          RILL_DTD_INOUT, data[y], RILL_DTD_ARG_END));
            for (int i = 0; i < tile_len; i++)
                ref[y][i] *= s;
        }
    }
    CHECK_OK(rill_taskpool_wait(tp));
    CHECK_OK(rill_taskpool_destroy(&tp));
    long bad = 0;
    for (int t = 0; t < nt; t++) {
        for (int i = 0; i < tile_len; i++)
            if (tiles[t][i] != ref[t][i] &&
                !(fabs(tiles[t][i] - ref[t][i]) <= 1e-9 * fabs(ref[t][i]))) {
                if (bad < 5)
                    fprintf(stderr, "tile %d element %d: %.17g, expected %.17g\n", t, i,
                            tiles[t][i], ref[t][i]);
                bad++;
            }
        CHECK_OK(rill_data_destroy(&data[t]));
        free(tiles[t]);
        free(ref[t]);
    }
    return bad;
}

typedef struct conc {
    int ngpu;                   /* 1: both directions on GPU 0; 2: GPU 0 <-> GPU 1 */
    rill_port_channel_t *pc[2]; /* pc[k]: from GPU k % ngpu to GPU (k + 1) % ngpu */
    uint8_t *src[2], *dst[2];   /* src[k] on pc[k]'s GPU, dst[k] on its peer */
    int dst_ordinal[2];
    check_t *chk[2]; /* on dst[k]'s GPU */
    int tasks_done;  /* atomic */
    int puts;        /* atomic */
    unsigned long long bad;
    double t_first, t_last, bytes;
} conc_t;

/* Passes of CONC_SLOTS puts on channel pass % 2: destination slot j gets source slot
 * (j + pass) % CONC_SLOTS; flushed, then the whole destination is checked. */
static void *put_thread(void *arg)
{
    conc_t *c = (conc_t *)arg;
    cudaStream_t st[2];
    for (int k = 0; k < 2; k++) {
        CU(cudaSetDevice(c->dst_ordinal[k]));
        CU(cudaStreamCreateWithFlags(&st[k], cudaStreamNonBlocking));
    }
    c->t_first = now_s();
    for (int pass = 0; __atomic_load_n(&c->puts, __ATOMIC_RELAXED) < CONC_PUTS ||
                       !__atomic_load_n(&c->tasks_done, __ATOMIC_ACQUIRE);
         pass++) {
        int k = pass % 2;
        segs_t expect;
        memset(&expect, 0, sizeof(expect));
        uint64_t pos = 0;
        for (int j = 0; j < CONC_SLOTS; j++) {
            uint64_t so = (uint64_t)((j + pass) % CONC_SLOTS) * CONC_SLOT,
                     dof = (uint64_t)j * CONC_SLOT;
            CHECK_OK(rill_port_channel_push(c->pc[k], RILL_PC_PUT | RILL_PC_FLUSH, dof, so,
                                            CONC_SLOT, &pos));
            expect.src[j] = so;
            expect.dst[j] = dof;
            expect.size[j] = CONC_SLOT;
        }
        expect.n = CONC_SLOTS;
        rill_status_t ws = rill_port_channel_wait_flushed(c->pc[k], pos, 60);
        CHECK_MSG(ws == RILL_SUCCESS, "concurrent: pass %d: flush: %s", pass,
                  rill_status_string(ws));
        __atomic_add_fetch(&c->puts, CONC_SLOTS, __ATOMIC_RELAXED);
        c->bytes += (double)CONC_SLOTS * CONC_SLOT;
        CU(cudaSetDevice(c->dst_ordinal[k]));
        check_t c0 = { 0, 0, ULLONG_MAX }, r;
        CU(cudaMemcpyAsync(c->chk[k], &c0, sizeof(c0), cudaMemcpyHostToDevice, st[k]));
        check_region<<<2048, 256, 0, st[k]>>>(c->dst[k], (uint64_t)CONC_SLOTS * CONC_SLOT, expect,
                                              0, 0, c->chk[k]);
        CU(cudaGetLastError());
        CU(cudaMemcpyAsync(&r, c->chk[k], sizeof(r), cudaMemcpyDeviceToHost, st[k]));
        CU(cudaStreamSynchronize(st[k]));
        if (r.bad_in || r.bad_out) {
            fprintf(stderr, "concurrent: pass %d (channel %d): %llu wrong bytes (first at %llu)\n",
                    pass, k, r.bad_in + r.bad_out, r.first);
            c->bad += r.bad_in + r.bad_out;
        }
    }
    c->t_last = now_s();
    for (int k = 0; k < 2; k++) {
        CU(cudaSetDevice(c->dst_ordinal[k]));
        CU(cudaStreamDestroy(st[k]));
    }
    return NULL;
}

static int run_concurrent(void)
{
    conc_t c;
    memset(&c, 0, sizeof(c));
    c.ngpu = rill_context_ngpus(ctx) >= 2 ? 2 : 1;
    rill_sem_t sem[2];
    rill_regmem_t sreg[2], dreg[2];
    for (int g = 0; g < c.ngpu; g++)
        CHECK_OK(rill_sem_create(ctx, g, &sem[g]));
    if (c.ngpu == 1)
        sem[1] = sem[0];
    for (int k = 0; k < 2; k++) {
        int from = k % c.ngpu, to = (k + 1) % c.ngpu;
        size_t bytes = (size_t)CONC_SLOTS * CONC_SLOT;
        CHECK_OK(rill_gpu_alloc(ctx, from, bytes, (void **)&c.src[k]));
        CHECK_OK(rill_gpu_alloc(ctx, to, bytes, (void **)&c.dst[k]));
        CHECK_OK(rill_regmem_get(ctx, from, c.src[k], bytes, &sreg[k]));
        CHECK_OK(rill_regmem_get(ctx, to, c.dst[k], bytes, &dreg[k]));
        c.dst_ordinal[k] = dreg[k].ordinal;
        CHECK_OK(rill_port_channel_create(ctx, from, &sreg[k], &dreg[k], &sem[to], &sem[from],
                                          &c.pc[k]));
        CU(cudaSetDevice(sreg[k].ordinal));
        fill_pattern<<<2048, 256>>>(c.src[k], bytes, 0, 0);
        CU(cudaGetLastError());
        CU(cudaDeviceSynchronize());
        CU(cudaSetDevice(c.dst_ordinal[k]));
        CU(cudaMalloc((void **)&c.chk[k], sizeof(check_t)));
        printf("concurrent: channel %d: GPU %d -> GPU %d\n", k, sreg[k].ordinal, dreg[k].ordinal);
    }
    tile_len = 1 << 16;
    rill_dtd_class_t *axpy, *scal;
    CHECK_OK(rill_dtd_class_create(ctx, "conc_axpy", NULL, &axpy));
    CHECK_OK(rill_dtd_class_add_body(axpy, RILL_BODY_CUDA, axpy_gpu));
    CHECK_OK(rill_dtd_class_create(ctx, "conc_scal", NULL, &scal));
    CHECK_OK(rill_dtd_class_add_body(scal, RILL_BODY_CUDA, scal_gpu));
    rill_gpu_counters_t g0[2], g1[2];
    for (int g = 0; g < c.ngpu; g++)
        CHECK_OK(rill_context_gpu_counters(ctx, g, &g0[g]));
    pthread_t th;
    CHECK_MSG(pthread_create(&th, NULL, put_thread, &c) == 0, "pthread_create failed");
    double t0 = now_s();
    uint64_t seed = 12345;
    long bad = 0;
    int pools = 0;
    const int ntasks = 400;
    while (pools < 4 || __atomic_load_n(&c.puts, __ATOMIC_RELAXED) < CONC_PUTS) {
        bad += random_dag(axpy, scal, 16, ntasks, &seed);
        pools++;
        CHECK_MSG(now_s() - t0 < 200, "concurrent: the puts did not finish within 200 s (%d done)",
                  __atomic_load_n(&c.puts, __ATOMIC_RELAXED));
    }
    double t1 = now_s();
    __atomic_store_n(&c.tasks_done, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    long ntask_total = (long)pools * ntasks;
    printf("concurrent: %d taskpools of %d cuBLAS tasks (%.0f tasks/s) from %.3f to %.3f s; %d "
           "puts of 64 MiB (%.2f GB/s, flushed and checked per %d) from %.3f to %.3f s\n",
           pools, ntasks, (double)ntask_total / (t1 - t0), 0.0, t1 - t0, c.puts,
           c.bytes / (c.t_last - c.t_first) / 1e9, CONC_SLOTS, c.t_first - t0, c.t_last - t0);
    for (int g = 0; g < c.ngpu; g++) {
        CHECK_OK(rill_context_gpu_counters(ctx, g, &g1[g]));
        rill_channel_counters_t cc;
        CHECK_OK(rill_channel_counters(ctx, g, &cc));
        printf("GPU %d: %llu tasks; channels: %llu puts (%.1f GB), %llu flushes, proxy busy %.3f "
               "s\n",
               g, g1[g].tasks - g0[g].tasks, cc.puts, (double)cc.put_bytes / 1e9, cc.flushes,
               cc.proxy_busy_s);
    }
    int ok = 1;
    if (bad) {
        fprintf(stderr, "concurrent: %ld tile elements differ from the sequential run\n", bad);
        ok = 0;
    }
    if (c.bad) {
        fprintf(stderr, "concurrent: %llu put bytes wrong\n", c.bad);
        ok = 0;
    }
    unsigned long long tasks_on_0 = g1[0].tasks - g0[0].tasks;
    if (tasks_on_0 == 0) {
        fprintf(stderr, "concurrent: GPU 0 (the first channel's) ran no task\n");
        ok = 0;
    }
    if (!(c.t_first < t1 && c.t_last > t0)) {
        fprintf(stderr, "concurrent: the puts and the tasks did not overlap\n");
        ok = 0;
    }
    char msg[300];
    for (int g = 0; g < c.ngpu; g++)
        if (rill_channel_device_error(ctx, g, msg, sizeof(msg))) {
            fprintf(stderr, "%s\n", msg);
            ok = 0;
        }
    for (int k = 0; k < 2; k++) {
        int from = k % c.ngpu, to = (k + 1) % c.ngpu;
        CHECK_OK(rill_port_channel_destroy(ctx, &c.pc[k]));
        CHECK_OK(rill_gpu_free(ctx, from, c.src[k]));
        CHECK_OK(rill_gpu_free(ctx, to, c.dst[k]));
        CU(cudaSetDevice(c.dst_ordinal[k]));
        CU(cudaFree(c.chk[k]));
    }
    for (int g = 0; g < c.ngpu; g++)
        CHECK_OK(rill_sem_destroy(ctx, g, &sem[g]));
    CHECK_OK(rill_dtd_class_destroy(&axpy));
    CHECK_OK(rill_dtd_class_destroy(&scal));
    CHECK_MSG(ok, "tasks and puts side by side failed (see above)");
    return 0;
}

/* ------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "pingpong";
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines reach a log even if the test is killed */
    long rounds_arg = argc > 2 ? atol(argv[2]) : 0;
    static const char *const known[] = { "pingpong", "put", "signal", "signal_kwait",
                                         "concurrent" };
    bool found = false;
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        found = found || !strcmp(what, known[i]);
    if (!found) {
        fprintf(stderr, "unknown scenario '%s': pingpong, put, signal, signal_kwait, concurrent\n",
                what);
        return 2;
    }
    /* 512 MiB regions (put: four per GPU in one process) and tiles: a zone of 3 GiB per GPU,
     * small enough for two processes on one GPU (RILL_MCA_device_cuda_memory_size wins) */
    setenv("RILL_MCA_device_cuda_memory_size", "3G", 0);
    CHECK_OK(rill_init(&argc, &argv, &ctx));
    bool one_process = !strcmp(what, "concurrent");
    const char *why = NULL;
    if (one_process) {
        nranks = rill_context_nranks(ctx);
        if (nranks != 1)
            why = "this scenario runs in one process";
        else if (rill_context_ngpus(ctx) < 1)
            why = rill_context_gpu_status(ctx)[0] ? rill_context_gpu_status(ctx)
                                                  : "no GPU in this process";
    } else {
        why = setup_sides(!strcmp(what, "put") || !strncmp(what, "signal", 6));
        if (!why && same_gpu && !strcmp(what, "pingpong"))
            why = "both ranks run on one GPU: the two ping-pong kernels of two processes cannot "
                  "run at the same time there (no MPS)";
    }
    if (why) {
        printf("SKIP: %s\n", why);
        teardown_sides();
        CHECK_OK(rill_fini(&ctx));
        return 77;
    }
    int rc;
    if (!strcmp(what, "pingpong"))
        rc = run_pingpong(rounds_arg > 0 ? (uint32_t)rounds_arg : 100000);
    else if (!strcmp(what, "put"))
        rc = run_put();
    else if (!strncmp(what, "signal", 6)) {
        sig_kernel_wait = !strcmp(what, "signal_kwait");
        /* two processes taking turns on one GPU: every round switches between them */
        uint32_t r = rounds_arg > 0 ? (uint32_t)rounds_arg : same_gpu ? 5000 : 100000;
        rc = run_signal(r, r < 2000 ? r : 2000);
    } else
        rc = run_concurrent();
    teardown_sides();
    CHECK_OK(rill_fini(&ctx));
    printf("%s: %s\n", what, rc == 0 ? "PASS" : "FAIL");
    return rc;
}
