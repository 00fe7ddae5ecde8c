/* Rill's channels between two processes with one GPU each (rill/channel.h and
 * rill/channel_device.cuh), next to the copy engine and NCCL measured in the same run.
 *
 * Bandwidth (GB/s = 1e9 bytes/s), one row per message size, 4 KiB .. 1 GiB:
 *   PC host 1-way   port channel, rank 0 -> rank 1: the host pushes N puts (the last one with
 *                   a flush) and waits for the flush (rill_port_channel_push / _wait_flushed)
 *   PC dev 1-way    the same pushed by one GPU thread: N rill_pc_put then rill_pc_flush
 *   PC 2-way (sum)  both ranks push host puts at once: the two directions added up
 *   MC 1-way        memory channel: per message one kernel whose blocks each rill_mc_put
 *                   their slice, then a one-thread kernel rill_mc_signal; the receiver waits
 *                   for the last signal (rill_mc_wait)
 *   CE 1-way        the reference: cudaMemcpyAsync into the peer's buffer mapped with the
 *                   benchmark's own cudaIpcGetMemHandle / cudaIpcOpenMemHandle
 *   CE 2-way (sum)  the same from both ranks at once
 *   NCCL 1-way      ncclSend on rank 0, ncclRecv on rank 1 (built when nccl.h is found)
 * Each cell: a warm-up, then 3 timed trials of N messages (N from the size: about 2 GiB
 * moved, at least 20 messages, 10 at 1 GiB, at most --iters); the best trial is shown. The
 * time is wall clock on the sending rank from the first request to the completion it waits
 * for (the flush, a stream synchronize); NCCL and the 2-way columns take the slower rank,
 * both ranks starting after a barrier. The receiver's buffer is reset before each column and
 * checked word by word after it (the row "check" says ok or how many words were wrong).
 *
 * Latency (--rounds round trips after 100 of warm-up, timed on the GPU with %globaltimer):
 *   (a) port channel: rank 0's kernel rill_pc_put_with_signal (8 bytes), rank 1's kernel
 *       rill_pc_wait and answers the same way: half a round trip
 *   (b) rill_pc_flush from one GPU thread (trigger -> proxy -> flushed word): a round trip
 *   (c) memory channel rill_mc_signal / rill_mc_wait ping-pong (and the relaxed signal)
 *   (d) NCCL 8-byte ncclSend / ncclRecv ping-pong (wall clock, enqueued back to back)
 * Idle proxy: the process's CPU time (getrusage, all threads) during 2 s of sleep after 2 s
 * without requests, with the port channels and again after destroying them.
 *
 * Run: mpirun -np 2 bench_channels [--max-bytes N] [--iters N] [--rounds N] [--mca name v]
 * Exit: 0 done, 1 an error (the call, file:line and error on stderr), 2 a bad argument or not
 * 2 ranks, 77 (skipped) when a rank has no GPU. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>
#if BENCH_HAVE_NCCL
#include <nccl.h>
#endif

#include "rill/config.h"
#include "rill/params.h"
#include "rill/runtime.h"
#include "rill/status.h"
#include "rill/channel.h"
#include "rill/channel_device.cuh"

#define PROG       "bench_channels"
#define EXIT_SKIP  77
#define EXIT_USAGE 2
#define KIB        (1024ull)
#define MIB        (1024ull * KIB)
#define GIB        (1024ull * MIB)
#define MAX_BYTES  GIB
#define NTRIALS    3
#define WARM       100 /* latency rounds not timed */
#define MC_THREADS 512
#define STALE      0x5a5a5a5au /* xor of the expected words: what a reset buffer holds */

#include "bench_common.h"

#define RILL_CHECK(call)                                                                           \
    do {                                                                                           \
        rill_status_t s_ = (call);                                                                 \
        if (s_ != RILL_SUCCESS)                                                                    \
            die("%s failed at %s:%d: %s (%d; Rill's log above says why)", #call, __FILE__,         \
                __LINE__, rill_status_string(s_), (int)s_);                                        \
    } while (0)

/* ---------------------------------------------------------------- kernels */

/* Word i of the data the rank with this salt (rank + 1) sends: never 0. */
__device__ __forceinline__ uint32_t pattern(uint64_t i, uint32_t salt)
{
    uint64_t x = i * 0x9e3779b97f4a7c15ull + (uint64_t)salt * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 29;
    return (uint32_t)x | 1u;
}

__global__ void fill_kernel(uint32_t *p, uint64_t nwords, uint32_t salt, uint32_t flip)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nwords; i += stride)
        p[i] = pattern(i, salt) ^ flip;
}

__global__ void verify_kernel(const uint32_t *p, uint64_t nwords, uint32_t salt,
                              unsigned long long *bad)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    unsigned long long n = 0;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nwords; i += stride)
        n += p[i] != pattern(i, salt);
    if (n)
        atomicAdd(bad, n);
}

__device__ __forceinline__ unsigned long long globaltimer_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Port channel, device API: n puts of bytes from offset 0 to offset 0, then a flush. */
__global__ void pc_put_kernel(rill_port_channel_dev_t h, uint64_t bytes, int n, int *fail)
{
    for (int i = 0; i < n; i++)
        if (rill_pc_put(&h, 0, 0, bytes) == RILL_FIFO_FAILED) {
            atomicExch(fail, 1);
            return;
        }
    if (!rill_pc_flush(&h))
        atomicExch(fail, 2);
}

/* Memory channel: block b puts bytes [b * slice, + slice) of the message. */
__global__ void __launch_bounds__(MC_THREADS)
    mc_put_kernel(rill_memory_channel_dev_t h, uint64_t bytes, uint64_t slice)
{
    uint64_t off = (uint64_t)blockIdx.x * slice;
    if (off >= bytes)
        return;
    uint64_t len = bytes - off < slice ? bytes - off : slice;
    rill_mc_put(&h, off, off, len, threadIdx.x, blockDim.x);
}

__global__ void mc_signal_kernel(rill_memory_channel_dev_t h)
{
    rill_mc_signal(&h);
}

/* Wait for the peer's signal number h.expected + 1. */
__global__ void mc_wait_kernel(rill_memory_channel_dev_t h, int *fail)
{
    if (!rill_mc_wait(&h))
        atomicExch(fail, 3);
}

/* Ping-pong through the port channel: put 8 bytes with a signal, wait for the answer
 * (initiator), or the other way round. t[0], t[1]: the timed rounds' start and end. */
__global__ void pc_pingpong_kernel(rill_port_channel_dev_t h, int initiator, int warm, int rounds,
                                   unsigned long long *t, int *fail)
{
    for (int i = 0; i < warm + rounds; i++) {
        if (i == warm)
            t[0] = globaltimer_ns();
        bool ok;
        if (initiator)
            ok = rill_pc_put_with_signal(&h, 0, 0, 8) != RILL_FIFO_FAILED && rill_pc_wait(&h);
        else
            ok = rill_pc_wait(&h) && rill_pc_put_with_signal(&h, 0, 0, 8) != RILL_FIFO_FAILED;
        if (!ok) {
            atomicExch(fail, 4);
            return;
        }
    }
    t[1] = globaltimer_ns();
}

/* A flush's round trip: FIFO trigger -> proxy -> stream write of the flushed word -> GPU. */
__global__ void pc_flush_kernel(rill_port_channel_dev_t h, int warm, int rounds,
                                unsigned long long *t, int *fail)
{
    for (int i = 0; i < warm + rounds; i++) {
        if (i == warm)
            t[0] = globaltimer_ns();
        if (!rill_pc_flush(&h)) {
            atomicExch(fail, 5);
            return;
        }
    }
    t[1] = globaltimer_ns();
}

/* Ping-pong through the memory channel's semaphores (no data). */
__global__ void mc_pingpong_kernel(rill_memory_channel_dev_t h, int initiator, int relaxed,
                                   int warm, int rounds, unsigned long long *t, int *fail)
{
    for (int i = 0; i < warm + rounds; i++) {
        if (i == warm)
            t[0] = globaltimer_ns();
        if (!initiator && !rill_mc_wait(&h)) {
            atomicExch(fail, 6);
            return;
        }
        if (relaxed)
            rill_mc_signal_relaxed(&h);
        else
            rill_mc_signal(&h);
        if (initiator && !rill_mc_wait(&h)) {
            atomicExch(fail, 6);
            return;
        }
    }
    t[1] = globaltimer_ns();
}

/* ---------------------------------------------------------------- host helpers */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_s(double s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static const char *size_name(size_t bytes, char *buf, size_t len)
{
    if (bytes >= GIB && bytes % GIB == 0)
        snprintf(buf, len, "%zu GiB", (size_t)(bytes / GIB));
    else if (bytes >= MIB && bytes % MIB == 0)
        snprintf(buf, len, "%zu MiB", (size_t)(bytes / MIB));
    else if (bytes >= KIB && bytes % KIB == 0)
        snprintf(buf, len, "%zu KiB", (size_t)(bytes / KIB));
    else
        snprintf(buf, len, "%zu B", bytes);
    return buf;
}

static long long param_int(const char *name)
{
    rill_param_t *p = NULL;
    if (rill_param_lookup(name, &p) != RILL_SUCCESS || !p)
        return -1;
    return (long long)rill_param_get_int(p);
}

/* ---------------------------------------------------------------- the two ranks */

/* What each rank tells the other (rill_context_allgather: plain bytes). */
typedef struct exch {
    rill_regmem_t src, dst;    /* zone buffers: port and memory channels */
    rill_sem_t sem_pc, sem_mc; /* semaphores the peer's channels signal */
    cudaIpcMemHandle_t ce_dst; /* the benchmark's own buffer, for the copy engine */
    bench_gpu_t gpu;
#if BENCH_HAVE_NCCL
    ncclUniqueId nccl_id; /* rank 0's */
#endif
} exch_t;

typedef struct bench {
    rill_context_t *ctx;
    int rank, peer, ordinal, nsm;
    size_t max_bytes;
    int max_iters;
    cudaStream_t st;
    char *zsrc, *zdst; /* zone: the channels' source and destination */
    char *csrc, *cdst; /* cudaMalloc: the copy engine's and NCCL's */
    char *peer_cdst;   /* the peer's cdst, mapped here */
    rill_sem_t sem_pc, sem_mc;
    rill_port_channel_t *pc;
    rill_memory_channel_t *mc;
    rill_port_channel_dev_t pcd;
    rill_memory_channel_dev_t mcd;
    uint64_t pc_seen, mc_seen; /* the peer's signals this side has waited for */
    int *d_fail;
    unsigned long long *d_bad, *d_t;
#if BENCH_HAVE_NCCL
    ncclComm_t nccl;
#endif
} bench_t;

static void barrier(bench_t *b)
{
    int x = b->rank, all[2];
    RILL_CHECK(rill_context_allgather(b->ctx, &x, sizeof(x), all));
}

static void gather_d(bench_t *b, double v, double out[2])
{
    RILL_CHECK(rill_context_allgather(b->ctx, &v, sizeof(v), out));
}

/* The kernels' failure word and the GPU's channel error word: die with both. */
static void check_device(bench_t *b, const char *what)
{
    int fail = 0;
    char msg[320] = "";
    CUDA_CHECK(cudaMemcpy(&fail, b->d_fail, sizeof(fail), cudaMemcpyDeviceToHost));
    int code = rill_channel_device_error(b->ctx, 0, msg, sizeof(msg));
    if (fail || code)
        die("%s: the device side failed (kernel code %d): %s", what, fail,
            code ? msg : "no channel error recorded");
}

static void fill(bench_t *b, void *p, size_t bytes, uint32_t salt, uint32_t flip)
{
    fill_kernel<<<4 * b->nsm, 256, 0, b->st>>>((uint32_t *)p, bytes / 4, salt, flip);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(b->st));
}

/* Words of [p, + bytes) that differ from what rank `from` sends. */
static unsigned long long verify(bench_t *b, const void *p, size_t bytes, int from)
{
    unsigned long long bad = 0;
    CUDA_CHECK(cudaMemsetAsync(b->d_bad, 0, sizeof(bad), b->st));
    verify_kernel<<<4 * b->nsm, 256, 0, b->st>>>((const uint32_t *)p, bytes / 4, (uint32_t)from + 1,
                                                 b->d_bad);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpyAsync(&bad, b->d_bad, sizeof(bad), cudaMemcpyDeviceToHost, b->st));
    CUDA_CHECK(cudaStreamSynchronize(b->st));
    return bad;
}

/* ---------------------------------------------------------------- bandwidth */

enum { COL_PC_HOST, COL_PC_DEV, COL_PC_2WAY, COL_MC, COL_CE, COL_CE_2WAY, COL_NCCL, NCOLS };
static const char *const col_title[NCOLS] = { "PC host 1-way", "PC dev 1-way", "PC 2-way (sum)",
                                              "MC 1-way",      "CE 1-way",     "CE 2-way (sum)",
                                              "NCCL 1-way" };
static const int col_two_way[NCOLS] = { 0, 0, 1, 0, 0, 1, 0 };

static int col_built(int col)
{
#if BENCH_HAVE_NCCL
    (void)col;
    return 1;
#else
    return col != COL_NCCL;
#endif
}

/* The destination a column writes into on its receiving rank(s). */
static char *col_dst(bench_t *b, int col)
{
    return col == COL_CE || col == COL_CE_2WAY || col == COL_NCCL ? b->cdst : b->zdst;
}

static int iters_for(size_t bytes, int max_iters)
{
    uint64_t n = 2 * GIB / bytes;
    uint64_t lo = bytes >= GIB ? 10 : 20;
    n = n < lo ? lo : n;
    return (int)(n > (uint64_t)max_iters ? (uint64_t)max_iters : n);
}

/* One trial of n messages: this rank's time in seconds (0 where it only receives and its
 * time is not what the column measures). */
static double run_trial(bench_t *b, int col, size_t bytes, int n)
{
    const int sends = b->rank == 0 || col_two_way[col];
    double t0 = now_s();
    if (col == COL_PC_HOST || col == COL_PC_2WAY) {
        if (!sends)
            return 0.0;
        uint64_t pos = 0;
        for (int i = 0; i < n; i++)
            RILL_CHECK(rill_port_channel_push(b->pc, RILL_PC_PUT | (i == n - 1 ? RILL_PC_FLUSH : 0),
                                              0, 0, bytes, &pos));
        RILL_CHECK(rill_port_channel_wait_flushed(b->pc, pos, 120.0));
        return now_s() - t0;
    }
    if (col == COL_PC_DEV) {
        if (!sends)
            return 0.0;
        pc_put_kernel<<<1, 1, 0, b->st>>>(b->pcd, bytes, n, b->d_fail);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaStreamSynchronize(b->st));
        double t = now_s() - t0;
        check_device(b, "port channel puts from the GPU");
        return t;
    }
    if (col == COL_MC) {
        if (sends) {
            uint64_t nb = bytes / (16 * KIB);
            nb = nb < 1 ? 1 : nb > (uint64_t)b->nsm ? (uint64_t)b->nsm : nb;
            uint64_t slice = ((bytes + nb - 1) / nb + 15) / 16 * 16;
            for (int i = 0; i < n; i++) {
                mc_put_kernel<<<(unsigned)nb, MC_THREADS, 0, b->st>>>(b->mcd, bytes, slice);
                mc_signal_kernel<<<1, 1, 0, b->st>>>(b->mcd);
            }
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaStreamSynchronize(b->st));
            double t = now_s() - t0;
            check_device(b, "memory channel puts");
            return t;
        }
        rill_memory_channel_dev_t h = b->mcd;
        h.expected = b->mc_seen + (uint64_t)n - 1; /* wait for the last signal */
        mc_wait_kernel<<<1, 1, 0, b->st>>>(h, b->d_fail);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaStreamSynchronize(b->st));
        b->mc_seen += (uint64_t)n;
        check_device(b, "memory channel wait");
        return 0.0;
    }
    if (col == COL_CE || col == COL_CE_2WAY) {
        if (!sends)
            return 0.0;
        for (int i = 0; i < n; i++)
            CUDA_CHECK(
                cudaMemcpyAsync(b->peer_cdst, b->csrc, bytes, cudaMemcpyDeviceToDevice, b->st));
        CUDA_CHECK(cudaStreamSynchronize(b->st));
        return now_s() - t0;
    }
#if BENCH_HAVE_NCCL
    if (col == COL_NCCL) {
        for (int i = 0; i < n; i++) {
            if (b->rank == 0)
                NCCL_CHECK(ncclSend(b->csrc, bytes, ncclChar, b->peer, b->nccl, b->st));
            else
                NCCL_CHECK(ncclRecv(b->cdst, bytes, ncclChar, b->peer, b->nccl, b->st));
        }
        CUDA_CHECK(cudaStreamSynchronize(b->st));
        return now_s() - t0;
    }
#endif
    die("column %d is not built", col);
}

/* The column over every size (gbps[s]: the best trial), then the receivers' check: the
 * number of wrong words, summed over the ranks. */
static unsigned long long run_column(bench_t *b, int col, const size_t *sizes, int nsizes,
                                     double *gbps, int *iters)
{
    const int two = col_two_way[col];
    const int receives = b->rank == 1 || two;
    char *dst = col_dst(b, col);
    size_t largest = sizes[nsizes - 1];
    if (receives) /* what is there before: different from every word the peer sends */
        fill(b, dst, largest, (uint32_t)b->peer + 1, STALE);
    barrier(b);
    for (int s = 0; s < nsizes; s++) {
        int n = iters_for(sizes[s], b->max_iters);
        iters[s] = n;
        barrier(b);
        run_trial(b, col, sizes[s], n < 4 ? n : 4); /* warm-up */
        double best = 0.0;
        for (int t = 0; t < NTRIALS; t++) {
            double mine, both[2];
            barrier(b);
            mine = run_trial(b, col, sizes[s], n);
            gather_d(b, mine, both);
            double dt = both[0] > both[1] ? both[0] : both[1];
            double g = (double)sizes[s] * (double)n * (two ? 2.0 : 1.0) / dt / 1e9;
            best = g > best ? g : best;
        }
        gbps[s] = best;
    }
    barrier(b); /* every sender is done: the data is in place */
    double bad = receives ? (double)verify(b, dst, largest, b->peer) : 0.0, all[2];
    gather_d(b, bad, all);
    return (unsigned long long)(all[0] + all[1]);
}

/* ---------------------------------------------------------------- latency */

static double kernel_span_us(bench_t *b)
{
    unsigned long long t[2];
    CUDA_CHECK(cudaMemcpy(t, b->d_t, sizeof(t), cudaMemcpyDeviceToHost));
    return (double)(t[1] - t[0]) / 1e3;
}

/* (a) half a round trip of a put + signal ping-pong, us (rank 0's view). */
static double lat_pc_pingpong(bench_t *b, int rounds)
{
    rill_port_channel_dev_t h = b->pcd;
    h.expected = b->pc_seen;
    barrier(b);
    pc_pingpong_kernel<<<1, 1, 0, b->st>>>(h, b->rank == 0, WARM, rounds, b->d_t, b->d_fail);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(b->st));
    b->pc_seen += (uint64_t)(WARM + rounds);
    check_device(b, "port channel ping-pong");
    return kernel_span_us(b) / rounds / 2.0;
}

/* (b) a device flush's round trip through the proxy, us (rank 0 only). */
static double lat_pc_flush(bench_t *b, int rounds)
{
    double us = 0.0;
    barrier(b);
    if (b->rank == 0) {
        pc_flush_kernel<<<1, 1, 0, b->st>>>(b->pcd, WARM, rounds, b->d_t, b->d_fail);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaStreamSynchronize(b->st));
        check_device(b, "port channel flushes");
        us = kernel_span_us(b) / rounds;
    }
    barrier(b);
    return us;
}

/* (c) half a round trip of a memory channel signal ping-pong, us. */
static double lat_mc_pingpong(bench_t *b, int rounds, int relaxed)
{
    rill_memory_channel_dev_t h = b->mcd;
    h.expected = b->mc_seen;
    barrier(b);
    mc_pingpong_kernel<<<1, 1, 0, b->st>>>(h, b->rank == 0, relaxed, WARM, rounds, b->d_t,
                                           b->d_fail);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(b->st));
    b->mc_seen += (uint64_t)(WARM + rounds);
    check_device(b, "memory channel ping-pong");
    return kernel_span_us(b) / rounds / 2.0;
}

#if BENCH_HAVE_NCCL
static void nccl_rounds(bench_t *b, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        if (b->rank == 0) {
            NCCL_CHECK(ncclSend(b->csrc, 8, ncclChar, b->peer, b->nccl, b->st));
            NCCL_CHECK(ncclRecv(b->cdst, 8, ncclChar, b->peer, b->nccl, b->st));
        } else {
            NCCL_CHECK(ncclRecv(b->cdst, 8, ncclChar, b->peer, b->nccl, b->st));
            NCCL_CHECK(ncclSend(b->csrc, 8, ncclChar, b->peer, b->nccl, b->st));
        }
    }
    CUDA_CHECK(cudaStreamSynchronize(b->st));
}

/* (d) half a round trip of an 8-byte NCCL ping-pong, us (wall clock, rank 0). */
static double lat_nccl(bench_t *b, int rounds)
{
    barrier(b);
    nccl_rounds(b, WARM);
    barrier(b);
    double t0 = now_s();
    nccl_rounds(b, rounds);
    double us = (now_s() - t0) * 1e6 / rounds / 2.0;
    barrier(b);
    return us;
}
#endif

/* The process's CPU time per second of wall time while the main thread sleeps span seconds,
 * after settle seconds of quiet. */
static double idle_cpu(bench_t *b, double settle, double span)
{
    barrier(b);
    sleep_s(settle);
    double c0 = cpu_s(), t0 = now_s();
    sleep_s(span);
    double c1 = cpu_s(), t1 = now_s();
    barrier(b);
    return (c1 - c0) / (t1 - t0);
}

/* ---------------------------------------------------------------- options */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -np 2 " PROG " [--max-bytes N] [--iters N] [--rounds N] "
            "[--mca name value]...\n"
            "  --max-bytes N     largest message, 4k..1G (suffixes k, M, G: powers of 1024; "
            "default 1G);\n"
            "                    rows 4K 16K 64K 256K 1M 4M 16M 64M 128M 256M 1G up to N\n"
            "  --iters N         most messages per timed trial, 1..1000000 (default 1000; about\n"
            "                    2 GiB per trial, at least 20 messages, 10 at 1 GiB)\n"
            "  --rounds N        latency round trips, 1..1000000 (default 10000; 100 more of "
            "warm-up)\n"
            "  --mca name value  a runtime parameter, for rill_init\n"
            "  -h, --help        this text\n"
            "One GPU per rank (Rill splits a node's GPUs between its ranks; GPU 0 of each is "
            "used),\nboth ranks on one node with CUDA IPC between them. Exit: 0 done, 1 an "
            "error, 2 a bad\nargument or not 2 ranks, 77 a rank has no GPU (skipped).\n");
}

/* Before rill_init the rank is not known: print on the launcher's rank 0 (or alone). */
static int first_rank(void)
{
    const char *names[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK" };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *v = getenv(names[i]);
        if (v)
            return !strcmp(v, "0");
    }
    return 1;
}

static int bad_option(const char *opt, const char *v, const char *allowed)
{
    if (first_rank())
        fprintf(stderr, PROG ": error: option %s must be %s, got %s%s%s (see --help)\n", opt,
                allowed, v ? "'" : "nothing", v ? v : "", v ? "'" : "");
    return EXIT_USAGE;
}

/* A count or a byte size (k, M, G suffixes with bytes) in [lo, hi]; 0 when it is not. */
static unsigned long long parse_num(const char *v, int with_units, unsigned long long lo,
                                    unsigned long long hi)
{
    if (!v || *v < '0' || *v > '9')
        return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || end == v)
        return 0;
    if (with_units && *end) {
        unsigned long long m = *end == 'k' || *end == 'K'   ? KIB
                               : *end == 'm' || *end == 'M' ? MIB
                               : *end == 'g' || *end == 'G' ? GIB
                                                            : 0;
        if (!m || end[1] || x > hi / m)
            return 0;
        x *= m;
        end++;
    }
    return *end || x < lo || x > hi ? 0 : x;
}

/* 0 to go on, -1 after --help, 2 for a bad option. --mca pairs stay for rill_init. */
static int parse_options(int argc, char **argv, size_t *max_bytes, int *iters, int *rounds)
{
    enum { OPT_MAX_BYTES = 256, OPT_ITERS, OPT_ROUNDS, OPT_MCA };
    static const struct option longs[] = {
        { "help", no_argument, NULL, 'h' },
        { "max-bytes", required_argument, NULL, OPT_MAX_BYTES },
        { "iters", required_argument, NULL, OPT_ITERS },
        { "rounds", required_argument, NULL, OPT_ROUNDS },
        { "mca", required_argument, NULL, OPT_MCA },
        { NULL, 0, NULL, 0 },
    };
    opterr = 0; /* (the messages are ours) */
    for (int c; (c = getopt_long(argc, argv, "+:h", longs, NULL)) != -1;) {
        const char *v = c == ':' ? NULL : optarg;
        const int code = c == ':' ? optopt : c;
        unsigned long long x = 0;
        switch (code) {
        case 'h':
            if (first_rank())
                usage(stdout);
            return -1;
        case OPT_MCA: /* (the pair stays in argv for rill_init) */
            if (c == ':' || optind >= argc)
                return bad_option("--mca", NULL, "followed by a name and a value");
            optind++;
            break;
        case OPT_MAX_BYTES:
            if (!(x = parse_num(v, 1, 4 * KIB, MAX_BYTES)))
                return bad_option("--max-bytes", v, "a size in [4k, 1G]");
            *max_bytes = (size_t)x;
            break;
        case OPT_ITERS:
        case OPT_ROUNDS:
            if (!(x = parse_num(v, 0, 1, 1000000)))
                return bad_option(code == OPT_ITERS ? "--iters" : "--rounds", v,
                                  "an integer in [1, 1000000]");
            *(code == OPT_ITERS ? iters : rounds) = (int)x;
            break;
        default: /* '?': unknown (a short one by its letter) */
            if (first_rank() && optopt > 0 && optopt < 256)
                fprintf(stderr, PROG ": error: unknown option '-%c' (see --help)\n", optopt);
            else if (first_rank())
                fprintf(stderr, PROG ": error: unknown option '%s' (see --help)\n",
                        argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) { /* an operand: none is taken */
        if (first_rank())
            fprintf(stderr, PROG ": error: unknown option '%s' (see --help)\n", argv[optind]);
        return EXIT_USAGE;
    }
    return 0;
}

static void print_value(double v)
{
    if (v <= 0.0)
        printf(" %14s |", "n/a");
    else
        printf(" %14.*f |", v >= 100.0 ? 0 : v >= 10.0 ? 1 : 2, v);
}

/* ---------------------------------------------------------------- main */

static int finish(rill_context_t **ctx, int code)
{
    rill_status_t s = rill_fini(ctx);
    if (s != RILL_SUCCESS && code == 0) {
        fprintf(stderr, PROG " (rank %d): error: rill_fini: %s\n", g_rank, rill_status_string(s));
        return 1;
    }
    return code;
}

int main(int argc, char **argv)
{
    size_t max_bytes = MAX_BYTES;
    int max_iters = 1000, rounds = 10000;
    int rc = parse_options(argc, argv, &max_bytes, &max_iters, &rounds);
    if (rc)
        return rc < 0 ? 0 : rc;

    /* two 1 GiB buffers, semaphores and the runtime's workspaces fit in the zone; the rest
     * of the GPU stays free for the benchmark's own buffers and NCCL */
    setenv("RILL_MCA_device_cuda_memory_size", "8G", 0);
    setenv("NCCL_NVLS_ENABLE", "0", 1); /* NVLink multicast stays off on these machines */

    bench_t B;
    memset(&B, 0, sizeof(B));
    bench_t *b = &B;
    b->max_bytes = max_bytes;
    b->max_iters = max_iters;
    RILL_CHECK(rill_init(&argc, &argv, &b->ctx));
    b->rank = g_rank = rill_context_rank(b->ctx);
    int nranks = rill_context_nranks(b->ctx);
    if (nranks != 2) {
        if (b->rank == 0)
            fprintf(stderr, PROG ": error: run with 2 ranks (mpirun -np 2), not %d\n", nranks);
        return finish(&b->ctx, EXIT_USAGE);
    }
    b->peer = 1 - b->rank;

    /* every rank decides alike: first whether both have a GPU, then whether they reach each
     * other's GPU memory */
    int mine[2] = { rill_context_ngpus(b->ctx), 0 }, all[4];
    const char *why = NULL;
    mine[1] = mine[0] > 0 && rill_context_gpu_direct(b->ctx, b->peer, &why) == 1;
    RILL_CHECK(rill_context_allgather(b->ctx, mine, sizeof(mine), all));
    if (all[0] < 1 || all[2] < 1) {
        if (mine[0] < 1)
            fprintf(stderr, PROG " (rank %d): no GPU (%s); skipped\n", b->rank,
                    rill_context_gpu_status(b->ctx));
        return finish(&b->ctx, EXIT_SKIP);
    }
    if (!all[1] || !all[3]) {
        if (!mine[1])
            fprintf(stderr,
                    PROG " (rank %d): error: rank %d's GPU memory is not reachable from here "
                         "(%s): the channels need both ranks on one node with CUDA IPC "
                         "between their GPUs (gpu_verbose = 1 logs the connection)\n",
                    b->rank, b->peer, why && *why ? why : "no reason given");
        return finish(&b->ctx, 1);
    }

    /* ---- buffers, semaphores, descriptors */
    exch_t me, ex[2];
    memset(&me, 0, sizeof(me));
    RILL_CHECK(rill_gpu_alloc(b->ctx, 0, max_bytes, (void **)&b->zsrc));
    RILL_CHECK(rill_gpu_alloc(b->ctx, 0, max_bytes, (void **)&b->zdst));
    RILL_CHECK(rill_regmem_get(b->ctx, 0, b->zsrc, max_bytes, &me.src));
    RILL_CHECK(rill_regmem_get(b->ctx, 0, b->zdst, max_bytes, &me.dst));
    RILL_CHECK(rill_sem_create(b->ctx, 0, &b->sem_pc));
    RILL_CHECK(rill_sem_create(b->ctx, 0, &b->sem_mc));
    me.sem_pc = b->sem_pc;
    me.sem_mc = b->sem_mc;
    b->ordinal = me.src.ordinal;
    CUDA_CHECK(cudaSetDevice(b->ordinal));
    bench_gpu_get(b->ordinal, &me.gpu);
    b->nsm = me.gpu.nsm;
    CUDA_CHECK(cudaStreamCreateWithFlags(&b->st, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc((void **)&b->csrc, max_bytes));
    CUDA_CHECK(cudaMalloc((void **)&b->cdst, max_bytes));
    CUDA_CHECK(cudaIpcGetMemHandle(&me.ce_dst, b->cdst));
    CUDA_CHECK(cudaMalloc((void **)&b->d_fail, sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&b->d_bad, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMalloc((void **)&b->d_t, 2 * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemset(b->d_fail, 0, sizeof(int)));
    fill(b, b->zsrc, max_bytes, (uint32_t)b->rank + 1, 0);
    fill(b, b->csrc, max_bytes, (uint32_t)b->rank + 1, 0);
    fill(b, b->zdst, max_bytes, (uint32_t)b->peer + 1, STALE);
    fill(b, b->cdst, max_bytes, (uint32_t)b->peer + 1, STALE);
#if BENCH_HAVE_NCCL
    if (b->rank == 0)
        NCCL_CHECK(ncclGetUniqueId(&me.nccl_id));
#endif
    RILL_CHECK(rill_context_allgather(b->ctx, &me, sizeof(me), ex));
    const exch_t *pe = &ex[b->peer];

    /* ---- channels: this rank's source into the peer's destination, signalling the peer's
     * semaphore, waiting on this rank's */
    RILL_CHECK(
        rill_port_channel_create(b->ctx, 0, &me.src, &pe->dst, &pe->sem_pc, &b->sem_pc, &b->pc));
    RILL_CHECK(
        rill_memory_channel_create(b->ctx, 0, &me.src, &pe->dst, &pe->sem_mc, &b->sem_mc, &b->mc));
    b->pcd = rill_port_channel_device(b->pc);
    b->mcd = rill_memory_channel_device(b->mc);
    CUDA_CHECK(
        cudaIpcOpenMemHandle((void **)&b->peer_cdst, pe->ce_dst, cudaIpcMemLazyEnablePeerAccess));
#if BENCH_HAVE_NCCL
    NCCL_CHECK(ncclCommInitRank(&b->nccl, 2, ex[0].nccl_id, b->rank));
#endif
    barrier(b);

    /* ---- header */
    if (b->rank == 0) {
        char date[64], host[128] = "?";
        time_t now = time(NULL);
        strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
        gethostname(host, sizeof(host) - 1);
        printf("# " PROG ": Rill %s, %s build, %s, host %s\n", rill_version_string(),
               RILL_BUILD_TYPE, date, host);
        bench_gpu_t g[2] = { ex[0].gpu, ex[1].gpu };
        bench_print_env(g);
        printf("# proxy: device_proxy_spin_us %lld, device_proxy_sleep_us %lld, "
               "device_proxy_batch %lld, device_channel_fifo_slots %lld\n",
               param_int("device_proxy_spin_us"), param_int("device_proxy_sleep_us"),
               param_int("device_proxy_batch"), param_int("device_channel_fifo_slots"));
        fflush(stdout);
    }

    /* ---- bandwidth */
    static const size_t all_sizes[] = { 4 * KIB,  16 * KIB, 64 * KIB,  256 * KIB, 1 * MIB, 4 * MIB,
                                        16 * MIB, 64 * MIB, 128 * MIB, 256 * MIB, 1 * GIB };
    size_t sizes[sizeof(all_sizes) / sizeof(all_sizes[0])];
    int nsizes = 0;
    for (size_t i = 0; i < sizeof(all_sizes) / sizeof(all_sizes[0]); i++)
        if (all_sizes[i] <= max_bytes)
            sizes[nsizes++] = all_sizes[i];
    double gbps[NCOLS][sizeof(all_sizes) / sizeof(all_sizes[0])];
    int iters[sizeof(all_sizes) / sizeof(all_sizes[0])];
    unsigned long long bad[NCOLS];
    memset(gbps, 0, sizeof(gbps));
    memset(bad, 0, sizeof(bad));
    double t_start = now_s();
    for (int c = 0; c < NCOLS; c++) {
        if (!col_built(c))
            continue;
        double t0 = now_s();
        bad[c] = run_column(b, c, sizes, nsizes, gbps[c], iters);
        if (b->rank == 0) {
            printf("# %-15s done in %.1f s%s\n", col_title[c], now_s() - t0,
                   bad[c] ? ": WRONG DATA at the receiver" : "");
            fflush(stdout);
        }
    }

    /* ---- latency */
    double lat_pc = lat_pc_pingpong(b, rounds);
    double lat_flush = lat_pc_flush(b, rounds);
    double lat_mc = lat_mc_pingpong(b, rounds, 0);
    double lat_mc_relaxed = lat_mc_pingpong(b, rounds, 1);
#if BENCH_HAVE_NCCL
    double lat_nc = lat_nccl(b, rounds);
    NCCL_CHECK(ncclCommDestroy(b->nccl)); /* its threads leave before the idle measurement */
#endif
    double t_measured = now_s() - t_start;

    /* ---- idle proxy: with the port channels, then without them */
    rill_channel_counters_t cnt;
    RILL_CHECK(rill_channel_counters(b->ctx, 0, &cnt));
    double idle_with[2], idle_without[2];
    gather_d(b, idle_cpu(b, 2.0, 2.0), idle_with);
    RILL_CHECK(rill_port_channel_destroy(b->ctx, &b->pc));
    gather_d(b, idle_cpu(b, 1.0, 2.0), idle_without);
    double counters[2][3],
        my_counters[3] = { (double)cnt.requests, (double)cnt.put_bytes, cnt.proxy_busy_s };
    RILL_CHECK(rill_context_allgather(b->ctx, my_counters, sizeof(my_counters), counters));

    /* ---- the table */
    if (b->rank == 0) {
        char sz[32];
        printf("\n## GB/s (1e9 B/s), rank 0 -> rank 1 unless (sum); best of %d trials of n "
               "messages\n\n",
               NTRIALS);
        printf("| %8s | %5s |", "size", "n");
        for (int c = 0; c < NCOLS; c++)
            printf(" %14s |", col_title[c]);
        printf("\n| %8s | %5s |", "---", "---");
        for (int c = 0; c < NCOLS; c++)
            printf(" %14s |", "---");
        printf("\n");
        for (int s = 0; s < nsizes; s++) {
            printf("| %8s | %5d |", size_name(sizes[s], sz, sizeof(sz)), iters[s]);
            for (int c = 0; c < NCOLS; c++)
                print_value(gbps[c][s]);
            printf("\n");
        }
        printf("| %8s | %5s |", "check", "");
        for (int c = 0; c < NCOLS; c++) {
            char w[32];
            snprintf(w, sizeof(w), "%llu wrong", bad[c]);
            printf(" %14s |", !col_built(c) ? "n/a" : bad[c] ? w : "ok");
        }
        printf("\n\n## latency, us (%d round trips after %d of warm-up; GPU-timed unless "
               "noted)\n\n",
               rounds, WARM);
        printf("port channel put(8 B)+signal ping-pong, half round trip : %8.2f\n", lat_pc);
        printf("port channel flush (GPU -> proxy -> GPU), round trip    : %8.2f\n", lat_flush);
        printf("memory channel signal ping-pong, half round trip        : %8.2f (relaxed "
               "signal: %.2f)\n",
               lat_mc, lat_mc_relaxed);
#if BENCH_HAVE_NCCL
        printf("NCCL 8 B send/recv ping-pong, half round trip (wall)    : %8.2f\n", lat_nc);
#else
        printf("NCCL 8 B send/recv ping-pong                            :      n/a (not built)\n");
#endif
        printf("\nidle proxy CPU: %.1f%% of a core (rank 0's whole process, getrusage over 2 s "
               "of sleep, 1 port channel idle for 2 s before; rank 1: %.1f%%)\n",
               100.0 * idle_with[0], 100.0 * idle_with[1]);
        printf("  the same after destroying the port channel: %.1f%% / %.1f%% "
               "(device_proxy_spin_us %lld, device_proxy_sleep_us %lld)\n",
               100.0 * idle_without[0], 100.0 * idle_without[1], param_int("device_proxy_spin_us"),
               param_int("device_proxy_sleep_us"));
        printf("proxy counters: rank 0 %.0f requests, %.2f GB put, busy %.3f s; rank 1 %.0f "
               "requests, %.2f GB put, busy %.3f s; measuring took %.1f s\n",
               counters[0][0], counters[0][1] / 1e9, counters[0][2], counters[1][0],
               counters[1][1] / 1e9, counters[1][2], t_measured);
        fflush(stdout);
    }

    /* ---- teardown: nobody uses the peer's memory after the barrier */
    unsigned long long total_bad = 0;
    for (int c = 0; c < NCOLS; c++)
        total_bad += bad[c];
    CUDA_CHECK(cudaIpcCloseMemHandle(b->peer_cdst));
    RILL_CHECK(rill_memory_channel_destroy(b->ctx, &b->mc));
    barrier(b);
    RILL_CHECK(rill_sem_destroy(b->ctx, 0, &b->sem_pc));
    RILL_CHECK(rill_sem_destroy(b->ctx, 0, &b->sem_mc));
    RILL_CHECK(rill_gpu_free(b->ctx, 0, b->zsrc));
    RILL_CHECK(rill_gpu_free(b->ctx, 0, b->zdst));
    CUDA_CHECK(cudaFree(b->csrc));
    CUDA_CHECK(cudaFree(b->cdst));
    CUDA_CHECK(cudaFree(b->d_fail));
    CUDA_CHECK(cudaFree(b->d_bad));
    CUDA_CHECK(cudaFree(b->d_t));
    CUDA_CHECK(cudaStreamDestroy(b->st));
    barrier(b);
    return finish(&b->ctx, total_bad ? 1 : 0);
}
