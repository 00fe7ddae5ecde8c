/* The reference for a remote dependency between two processes with one GPU each, written by
 * hand with no runtime: one tile (an array of doubles) changed in turn by a kernel on each GPU
 * (x = -x), every hop moving the new version into the other rank's copy and marking it ready
 * there, the next hop's kernel waiting for that mark. tools/rill_bench hop puts it next to Rill's
 * own chain (bench_gpu_hop, same tile sizes) in one table.
 *
 * Per tile size (4 KiB, 64 KiB, 1 MiB, 16 MiB, 128 MiB), microseconds per hop of each method:
 *   ce_sem   producer: its exec stream records an event after the kernel; a copy stream waits
 *            for it, cudaMemcpyAsync into the peer's copy (CUDA IPC mapping), then
 *            cuStreamWriteValue64 of the hop's mark into the peer's semaphore (a device word,
 *            IPC mapping). Consumer: its exec stream cuStreamWaitValue64 (>= mark) on its own
 *            semaphore, then its kernel.
 *   sm_sem   producer: after the kernel, a put kernel on the exec stream whose blocks copy
 *            slices into the peer's copy; the last block to finish stores the mark with a
 *            system-scope release. Consumer: as for ce_sem.
 *   nccl     one communicator; the producer's exec stream runs the kernel then ncclSend, the
 *            consumer's ncclRecv into its copy (built when nccl.h and libnccl are found).
 *   local    rank 0 alone: hops kernels back to back on one stream on one tile (a local
 *            kernel-to-kernel dependency, no transfer).
 * then mpi_host (no GPU: the same bytes between two host buffers by MPI_Send / MPI_Recv, a
 * ping-pong of hops messages, us per message: the wire's own time for a tile, which a
 * host-staged path cannot beat), ce_GB/s (tile bytes * hops / time of the ce_sem chain, 1e9
 * B/s) and check: rank 0's
 * copy after every chain of the row (warm-ups included) must hold its initial values again
 * (an even number of sign flips): "ok", or method:count for each method with wrong elements
 * (e.g. "sm_sem:512"). Rank 1's copy is zeroed before each chain, so a move that does not
 * land shows.
 *
 * Everything is enqueued on both ranks before the chain can start: rank 0's first kernel waits
 * (cuStreamWaitValue64) for a flag in pinned host memory that rank 0's host sets after a
 * barrier that follows both ranks' enqueueing, so the figure is the GPUs' and the link's
 * alone, not the host's. (Above PRE_HOPS = 256 hops the rest is enqueued while the chain
 * runs: a stream's command queue is bounded, and thousands of waits enqueued ahead were seen
 * to block the enqueueing thread, here before the barrier: a deadlock.) Every kernel, the
 * peer mapping and NCCL's connections are used once before the first chain, so no first-use
 * work (lazy module loading, connecting) waits behind a held stream. hops is even: the last
 * hop is rank 1's and lands on rank 0, whose exec stream waits for its mark and records the
 * end event. Time: CUDA events on rank 0's exec stream, from right after the flag to the end
 * event, divided by hops, after a warm-up chain of WARM_HOPS hops of the same size and method.
 *
 * Run: mpirun --bind-to none -np 2 bench_hop_ref [hops]     (2..2000, default 200; an odd
 * count is rounded down). Rank r uses CUDA device r % (the devices it sees).
 * Exit: 0 done, 1 an error (the call, file:line and error on stderr) or wrong data, 2 a bad
 * argument or not 2 ranks, 77 (skipped) when a rank has no GPU. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* the driver API's types and function-pointer types only: its entry points are loaded through
 * the runtime (cudaGetDriverEntryPointByVersion), so nothing links libcuda */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#define OMPI_SKIP_MPICXX  1 /* the C API only: no C++ bindings in this C++ translation unit */
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "args.h"
#ifndef BENCH_HAVE_NCCL
#define BENCH_HAVE_NCCL 0
#endif
#if BENCH_HAVE_NCCL
#include <nccl.h>
#endif

#define PROG        "bench_hop_ref"
#define EXIT_SKIP   77
#define EXIT_USAGE  2
#define MAX_TILE    (128ull << 20)
#define SEM_BYTES   4096 /* a rank's region: its semaphore, then its copy of the tile */
#define WARM_HOPS   20
#define MAX_HOPS    2000
#define PRE_HOPS    256 /* hops enqueued before the chain starts: at most 128 waits per rank */
#define STALL_S     60.0
#define THREADS     256
#define PUT_THREADS 512
#define PUT_SLICE   (16 * 1024) /* bytes per block of the put kernel, up to 4 blocks per SM */

/* the peer may be blocked in a barrier or behind a stream wait that will never be
 * satisfied: take it down too */
static void abort_peer(void)
{
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down)
        MPI_Abort(MPI_COMM_WORLD, 1);
}

#include "bench_common.h"

#define MPI_CHECK(call)                                                                            \
    do {                                                                                           \
        int m_ = (call);                                                                           \
        if (m_ != MPI_SUCCESS) {                                                                   \
            char s_[MPI_MAX_ERROR_STRING] = "";                                                    \
            int l_ = 0;                                                                            \
            MPI_Error_string(m_, s_, &l_);                                                         \
            die("%s failed at %s:%d: %s (%d)", #call, __FILE__, __LINE__, s_, m_);                 \
        }                                                                                          \
    } while (0)

/* ---------------------------------------------------------------- driver entry points */

static PFN_cuStreamWaitValue64_v11070 p_wait64;
static PFN_cuStreamWriteValue64_v11070 p_write64;
static PFN_cuGetErrorName_v6000 p_error_name;

/* The stream memory operations, as device/channel.c loads them: through the runtime's
 * driver entry point, so the benchmark needs no libcuda at link time. */
static void driver_load(void)
{
    struct {
        const char *name;
        void **fn;
    } want[] = { { "cuStreamWaitValue64", (void **)&p_wait64 },
                 { "cuStreamWriteValue64", (void **)&p_write64 },
                 { "cuGetErrorName", (void **)&p_error_name } };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        CUDA_CHECK(cudaGetDriverEntryPointByVersion(want[i].name, want[i].fn, 12000,
                                                    cudaEnableDefault, &q));
        if (q != cudaDriverEntryPointSuccess || !*want[i].fn)
            die("the CUDA driver has no %s (entry point query result %d)", want[i].name, (int)q);
    }
}

static const char *cu_error_name(CUresult r)
{
    const char *s = NULL;
    if (!p_error_name || p_error_name(r, &s) != CUDA_SUCCESS || !s)
        return "unknown CUDA driver error";
    return s;
}

/* Hold st until *addr >= value. GEQ compares cyclically ((int64_t)(*addr - value) >= 0):
 * right for marks that only grow. */
static void stream_wait(cudaStream_t st, const uint64_t *addr, uint64_t value)
{
    CUresult r =
        p_wait64((CUstream)st, (CUdeviceptr)(uintptr_t)addr, value, CU_STREAM_WAIT_VALUE_GEQ);
    if (r != CUDA_SUCCESS)
        die("cuStreamWaitValue64(%p >= %llu) failed at %s:%d: %s (%d)", (const void *)addr,
            (unsigned long long)value, __FILE__, __LINE__, cu_error_name(r), (int)r);
}

/* *addr = value once st's earlier work is done. Default flags: the driver puts a memory
 * barrier before the write, so that work's stores are visible before the value is. */
static void stream_write(cudaStream_t st, uint64_t *addr, uint64_t value)
{
    CUresult r =
        p_write64((CUstream)st, (CUdeviceptr)(uintptr_t)addr, value, CU_STREAM_WRITE_VALUE_DEFAULT);
    if (r != CUDA_SUCCESS)
        die("cuStreamWriteValue64(%p = %llu) failed at %s:%d: %s (%d)", (void *)addr,
            (unsigned long long)value, __FILE__, __LINE__, cu_error_name(r), (int)r);
}

/* ---------------------------------------------------------------- kernels */

/* Element e of the tile as rank 0 starts it: never 0. */
__host__ __device__ __forceinline__ double initial(size_t e)
{
    return 1.0 + (double)(e % 7);
}

/* Rank 0's copy starts with the initial values, rank 1's with zeroes. */
__global__ void init_kernel(double *x, size_t n, int zero)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride)
        x[e] = zero ? 0.0 : initial(e);
}

/* One hop's work: x = -x. */
__global__ void flip_kernel(double *x, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride)
        x[e] = -x[e];
}

__global__ void count_wrong_kernel(const double *x, size_t n, unsigned long long *bad)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned long long k = 0;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride)
        k += x[e] != initial(e);
    if (k)
        atomicAdd(bad, k);
}

/* sm_sem's move: block b copies 16-byte words [b * slice, + slice) of src into dst (the
 * peer's copy, mapped here); the last block to finish stores mark into the peer's semaphore.
 * done counts the finished blocks; the last one sets it back to 0 for the next put on this
 * stream (which the kernel boundary orders after this store). Every block counts, even one
 * whose slice is empty. */
__global__ void __launch_bounds__(PUT_THREADS)
    put_kernel(const uint4 *src, uint4 *dst, size_t n16, size_t slice, unsigned *done,
               uint64_t *sem, uint64_t mark)
{
    size_t lo = (size_t)blockIdx.x * slice, hi = lo + slice < n16 ? lo + slice : n16;
    for (size_t k = lo + threadIdx.x; k < hi; k += blockDim.x)
        dst[k] = src[k];
    /* the block's stores are ordered before thread 0's fence by the barrier; the fence
     * (fence.sc.sys, cumulative) makes them visible at system scope before thread 0's
     * increment, so whoever reads the count (the last block) is ordered after all of them */
    __syncthreads();
    if (threadIdx.x != 0)
        return;
    __threadfence_system();
    if (atomicAdd(done, 1u) != gridDim.x - 1)
        return;
    /* last block: its increment read every other block's (one chain of read-modify-writes);
     * the fence after it is the acquire side, so all blocks' stores into the peer's copy
     * happen before the release store below. A consumer that sees the mark (its stream wait
     * reads the semaphore at system scope) therefore sees the whole tile. */
    __threadfence_system();
    *done = 0;
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(sem), "l"(mark) : "memory");
}

/* ---------------------------------------------------------------- the two ranks */

enum { M_CE, M_SM, M_NCCL, M_LOCAL, NMETHODS };
static const char *const method_name[NMETHODS] = { "ce_sem", "sm_sem", "nccl", "local" };

static int method_built(int m)
{
#if BENCH_HAVE_NCCL
    (void)m;
    return 1;
#else
    return m != M_NCCL;
#endif
}

/* What each rank tells the other (MPI_Allgather: plain bytes). */
typedef struct peer_info {
    cudaIpcMemHandle_t region;
    bench_gpu_t gpu;
} peer_info_t;

typedef struct hop {
    int rank, peer, ordinal, nsm;
    cudaStream_t exec, copy;    /* the kernels (and sm_sem's puts, NCCL); ce_sem's moves */
    cudaEvent_t kernel_done;    /* ce_sem: the producer's kernel, for the copy stream */
    cudaEvent_t t0, t1;         /* rank 0: the chain's start and end */
    char *region, *peer_region; /* [semaphore | tile]: this rank's, the peer's mapped here */
    uint64_t *sem, *peer_sem;   /* this rank's semaphore (the peer writes it), the peer's */
    double *tile, *peer_tile;   /* this rank's copy of the tile, the peer's */
    unsigned *put_done;         /* sm_sem: finished blocks of the current put */
    unsigned long long *d_bad;
    uint64_t *gate_host, *gate_dev; /* rank 0's start flag: pinned host memory, mapped */
    uint64_t marks;                 /* marks used by the chains so far (alike on both ranks) */
    uint64_t gates;                 /* chains started so far */
#if BENCH_HAVE_NCCL
    ncclComm_t nccl;
#endif
} hop_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_us(long us)
{
    struct timespec ts = { 0, us * 1000 };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static unsigned grid_for(const hop_t *h, size_t n)
{
    size_t blocks = (n + THREADS - 1) / THREADS, most = 8 * (size_t)h->nsm; /* a full GPU */
    return (unsigned)(blocks < most ? blocks : most);
}

static void flip(hop_t *h, size_t n)
{
    flip_kernel<<<grid_for(h, n), THREADS, 0, h->exec>>>(h->tile, n);
    CUDA_CHECK(cudaGetLastError());
}

/* sm_sem: this rank's copy into the peer's, then mark into the peer's semaphore. */
static void put(hop_t *h, size_t bytes, uint64_t mark)
{
    size_t n16 = bytes / 16, nb = bytes / PUT_SLICE, most = 4 * (size_t)h->nsm;
    nb = nb < 1 ? 1 : nb > most ? most : nb;
    size_t slice = (n16 + nb - 1) / nb;
    put_kernel<<<(unsigned)nb, PUT_THREADS, 0, h->exec>>>(
        (const uint4 *)h->tile, (uint4 *)h->peer_tile, n16, slice, h->put_done, h->peer_sem, mark);
    CUDA_CHECK(cudaGetLastError());
}

/* This rank's part of hop i of a chain whose marks start after base. Hop i is rank i % 2's:
 * its kernel, then the move into the other rank's copy; the mark of hop i is base + i + 1,
 * and the wait for it is enqueued with hop i + 1 by the rank that owns that one. */
static void enqueue_hop(hop_t *h, int m, size_t bytes, int i, uint64_t base)
{
    const int mine = i % 2 == h->rank;
    const size_t n = bytes / sizeof(double);
    const uint64_t mark = base + (uint64_t)i + 1;
    if (m == M_LOCAL) {
        if (h->rank == 0)
            flip(h, n);
        return;
    }
#if BENCH_HAVE_NCCL
    if (m == M_NCCL) {
        /* stream order does it all: the send follows the kernel, the receiver's next kernel
         * follows its receive */
        if (mine) {
            flip(h, n);
            NCCL_CHECK(ncclSend(h->tile, n, ncclDouble, h->peer, h->nccl, h->exec));
        } else {
            NCCL_CHECK(ncclRecv(h->tile, n, ncclDouble, h->peer, h->nccl, h->exec));
        }
        return;
    }
#endif
    if (!mine)
        return;
    /* hop i - 1's mark: the peer's version is in this rank's copy (hop 0 is behind the gate).
     * The peer's own copy is free by then too: it wrote this mark only after its move had
     * read it, and its next kernel waits for this hop's mark. */
    if (i > 0)
        stream_wait(h->exec, h->sem, mark - 1);
    flip(h, n);
    if (m == M_SM) {
        put(h, bytes, mark);
        return;
    }
    /* ce_sem: the copy stream takes the version once the kernel is done (the event is
     * re-recorded each hop: a wait takes the record enqueued before it). The mark is written
     * on the same stream after the copy: the write starts only once the copy has completed,
     * and its memory barrier (default flags) makes the copy's stores into the peer's memory
     * visible before the mark, so the peer's stream wait, satisfied by the mark, lets its
     * kernel read the whole new tile. */
    CUDA_CHECK(cudaEventRecord(h->kernel_done, h->exec));
    CUDA_CHECK(cudaStreamWaitEvent(h->copy, h->kernel_done, 0));
    CUDA_CHECK(cudaMemcpyAsync(h->peer_tile, h->tile, bytes, cudaMemcpyDeviceToDevice, h->copy));
    stream_write(h->copy, h->peer_sem, mark);
}

/* Both ranks have enqueued (the first PRE_HOPS hops of) the chain, and rank 1's copy is reset:
 * rank 0's first kernel may go. */
static void open_gate(hop_t *h, uint64_t gate)
{
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (h->rank == 0) /* the GPU polls this word in host memory: a plain store reaches it */
        *(volatile uint64_t *)h->gate_host = gate;
}

/* Wait for st's work with a limit: a mark that never comes is reported, not waited forever. */
static void stream_drain(cudaStream_t st, const char *stream, int m, size_t bytes)
{
    double t0 = now_s();
    for (;;) {
        cudaError_t e = cudaStreamQuery(st);
        if (e == cudaSuccess)
            return;
        if (e != cudaErrorNotReady)
            die("cudaStreamQuery(%s stream) failed at %s:%d: %s: %s", stream, __FILE__, __LINE__,
                cudaGetErrorName(e), cudaGetErrorString(e));
        if (now_s() - t0 > STALL_S)
            die("the %s chain of %zu-byte tiles is stuck: its %s stream is not done after %.0f s",
                method_name[m], bytes, stream, STALL_S);
        sleep_us(20);
    }
}

/* Wrong elements of rank 0's copy (0 on rank 1). */
static unsigned long long count_wrong(hop_t *h, size_t n)
{
    unsigned long long bad = 0;
    if (h->rank != 0)
        return 0;
    CUDA_CHECK(cudaMemsetAsync(h->d_bad, 0, sizeof(bad), h->exec));
    count_wrong_kernel<<<grid_for(h, n), THREADS, 0, h->exec>>>(h->tile, n, h->d_bad);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpyAsync(&bad, h->d_bad, sizeof(bad), cudaMemcpyDeviceToHost, h->exec));
    CUDA_CHECK(cudaStreamSynchronize(h->exec));
    return bad;
}

/* One chain of hops (even) with method m on tiles of bytes: us per hop on rank 0 (0 on rank
 * 1); the wrong elements of rank 0's copy after it are added to *wrong. */
static double run_chain(hop_t *h, int m, size_t bytes, int hops, unsigned long long *wrong)
{
    const size_t n = bytes / sizeof(double);
    init_kernel<<<grid_for(h, n), THREADS, 0, h->exec>>>(h->tile, n, h->rank != 0);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(h->exec)); /* before open_gate's barrier */
    const uint64_t base = h->marks, gate = ++h->gates;
    h->marks += (uint64_t)hops; /* the next chain's marks are all larger: no reset */
    if (h->rank == 0) {
        stream_wait(h->exec, h->gate_dev, gate);
        CUDA_CHECK(cudaEventRecord(h->t0, h->exec));
    }
    const int pre = hops < PRE_HOPS ? hops : PRE_HOPS;
    for (int i = 0; i < hops; i++) {
        if (i == pre)
            open_gate(h, gate); /* the rest is enqueued while the chain runs */
        enqueue_hop(h, m, bytes, i, base);
    }
    if (h->rank == 0) {
        /* the last hop is rank 1's: its move lands here (NCCL and local: the stream order) */
        if (m == M_CE || m == M_SM)
            stream_wait(h->exec, h->sem, base + (uint64_t)hops);
        CUDA_CHECK(cudaEventRecord(h->t1, h->exec));
    }
    if (pre == hops)
        open_gate(h, gate);
    stream_drain(h->exec, "exec", m, bytes);
    stream_drain(h->copy, "copy", m, bytes);
    /* both ranks are done with both copies before the next chain resets them */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (h->rank != 0)
        return 0.0;
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, h->t0, h->t1));
    *wrong += count_wrong(h, n);
    return 1e3 * (double)ms / hops;
}

/* ---------------------------------------------------------------- options */

/* MPI alone: a ping-pong of hops messages of bytes between host buffers (touched before the
 * clock starts); us per message. */
static double mpi_pingpong(int peer, size_t bytes, int hops)
{
    static char *buf;
    static size_t cap;
    if (bytes > cap) {
        free(buf);
        buf = (char *)malloc(bytes);
        if (!buf) {
            fprintf(stderr, PROG ": out of host memory (%zu bytes)\n", bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        memset(buf, 1, bytes);
        cap = bytes;
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = now_s();
    for (int i = 0; i < hops; i++) {
        if ((i % 2 == 0) == (peer == 1)) /* rank 0 sends the even messages */
            MPI_CHECK(MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD));
        else
            MPI_CHECK(
                MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    return (now_s() - t0) * 1e6 / hops;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun --bind-to none -np 2 " PROG " [hops]\n"
            "  hops  hops per chain, 2..%d (default 200; an odd count is rounded down: the "
            "chain\n"
            "        ends on rank 0)\n"
            "One GPU per rank (rank r uses CUDA device r %% the devices it sees), both ranks on "
            "one\nnode with CUDA IPC between their GPUs. Exit: 0 done, 1 an error or wrong "
            "data, 2 a bad\nargument or not 2 ranks, 77 a rank has no GPU (skipped).\n",
            MAX_HOPS);
}

/* 0 to go on, -1 after --help, 2 for a bad argument. */
static int parse_options(int argc, char **argv, int rank, int *hops)
{
    if (argc > 2) {
        if (rank == 0)
            fprintf(stderr, PROG ": error: one argument at most (hops), got %d (see --help)\n",
                    argc - 1);
        return EXIT_USAGE;
    }
    if (argc < 2)
        return 0;
    const char *v = argv[1];
    if (!strcmp(v, "-h") || !strcmp(v, "--help")) {
        if (rank == 0)
            usage(stdout);
        return -1;
    }
    long x;
    if (rill_args_long(v, 2, MAX_HOPS, &x)) {
        if (rank == 0)
            fprintf(stderr,
                    PROG ": error: hops must be an integer in [2, %d], got '%s' (see --help)\n",
                    MAX_HOPS, v);
        return EXIT_USAGE;
    }
    *hops = (int)(x / 2 * 2);
    return 0;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rank = 0, nranks = 0, hops = 200;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));
    g_rank = rank;
    bench_die_hook = abort_peer;
    int rc = parse_options(argc, argv, rank, &hops);
    if (rc) {
        MPI_CHECK(MPI_Finalize());
        return rc < 0 ? 0 : rc;
    }
    if (nranks != 2) {
        if (rank == 0)
            fprintf(stderr, PROG ": error: run with 2 ranks (mpirun -np 2), not %d\n", nranks);
        MPI_CHECK(MPI_Finalize());
        return EXIT_USAGE;
    }

    /* both ranks decide alike whether both have a GPU */
    int ngpus = 0;
    cudaError_t ge = cudaGetDeviceCount(&ngpus);
    int have = ge == cudaSuccess && ngpus > 0, both = 0;
    MPI_CHECK(MPI_Allreduce(&have, &both, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!both) {
        if (!have)
            fprintf(stderr, PROG " (rank %d): no GPU (%s); skipped\n", rank,
                    ge != cudaSuccess ? cudaGetErrorString(ge) : "no CUDA device");
        MPI_CHECK(MPI_Finalize());
        return EXIT_SKIP;
    }

    /* ---- streams, events, buffers, the start flag */
    hop_t H;
    memset(&H, 0, sizeof(H));
    hop_t *h = &H;
    h->rank = rank;
    h->peer = 1 - rank;
    h->ordinal = rank % ngpus;
    CUDA_CHECK(cudaSetDevice(h->ordinal));
    driver_load();
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, h->ordinal));
    h->nsm = prop.multiProcessorCount;
    CUDA_CHECK(cudaStreamCreateWithFlags(&h->exec, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&h->copy, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&h->kernel_done, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreate(&h->t0));
    CUDA_CHECK(cudaEventCreate(&h->t1));
    /* one allocation for the semaphore and the tile: one IPC handle, whose base it is */
    CUDA_CHECK(cudaMalloc((void **)&h->region, SEM_BYTES + MAX_TILE));
    CUDA_CHECK(cudaMemset(h->region, 0, SEM_BYTES));
    h->sem = (uint64_t *)h->region;
    h->tile = (double *)(h->region + SEM_BYTES);
    CUDA_CHECK(cudaMalloc((void **)&h->put_done, sizeof(unsigned)));
    CUDA_CHECK(cudaMemset(h->put_done, 0, sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc((void **)&h->d_bad, sizeof(unsigned long long)));
    /* cuStreamWaitValue64 on host memory: pinned and mapped, through its device address */
    CUDA_CHECK(cudaHostAlloc((void **)&h->gate_host, sizeof(uint64_t), cudaHostAllocMapped));
    *(volatile uint64_t *)h->gate_host = 0;
    CUDA_CHECK(cudaHostGetDevicePointer((void **)&h->gate_dev, h->gate_host, 0));
    CUDA_CHECK(cudaDeviceSynchronize()); /* the semaphore is 0 before the peer maps it */

    /* ---- the peer's region, mapped here; NCCL */
    peer_info_t me, all[2];
    memset(&me, 0, sizeof(me));
    CUDA_CHECK(cudaIpcGetMemHandle(&me.region, h->region));
    bench_gpu_get(h->ordinal, &me.gpu);
    MPI_CHECK(MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, all, (int)sizeof(me), MPI_BYTE,
                            MPI_COMM_WORLD));
    CUDA_CHECK(cudaIpcOpenMemHandle((void **)&h->peer_region, all[h->peer].region,
                                    cudaIpcMemLazyEnablePeerAccess));
    h->peer_sem = (uint64_t *)h->peer_region;
    h->peer_tile = (double *)(h->peer_region + SEM_BYTES);
#if BENCH_HAVE_NCCL
    setenv("NCCL_NVLS_ENABLE", "0", 1); /* NVLink multicast stays off on these machines */
    ncclUniqueId id;
    memset(&id, 0, sizeof(id));
    if (rank == 0)
        NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_CHECK(MPI_Bcast(&id, (int)sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD));
    NCCL_CHECK(ncclCommInitRank(&h->nccl, 2, id, rank));
#endif

    /* ---- every first use before any chain: a first use can be host work that waits for the
     * GPU (lazy module loading may synchronize the context, NCCL connects to its peer at the
     * first send and receive) and must not find a stream held behind the gate or a mark */
    init_kernel<<<grid_for(h, MAX_TILE / sizeof(double)), THREADS, 0, h->exec>>>(
        h->tile, MAX_TILE / sizeof(double), 0);
    CUDA_CHECK(cudaGetLastError());
    flip(h, 1);
    /* 16 bytes into the peer's copy (reset before each chain); mark 0 into this rank's own
     * semaphore, which still holds 0: nothing changes */
    put_kernel<<<1, PUT_THREADS, 0, h->exec>>>((const uint4 *)h->tile, (uint4 *)h->peer_tile, 1, 1,
                                               h->put_done, h->sem, 0);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpyAsync(h->peer_tile + 2, h->tile, 16, cudaMemcpyDeviceToDevice, h->copy));
#if BENCH_HAVE_NCCL
    NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclSend(h->tile, 1, ncclDouble, h->peer, h->nccl, h->exec));
    NCCL_CHECK(ncclRecv(h->tile + 1, 1, ncclDouble, h->peer, h->nccl, h->exec));
    NCCL_CHECK(ncclGroupEnd());
#endif
    CUDA_CHECK(cudaStreamSynchronize(h->exec));
    CUDA_CHECK(cudaStreamSynchronize(h->copy));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- header */
    if (rank == 0) {
        char date[64], host[128] = "?";
        time_t now = time(NULL);
        strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
        gethostname(host, sizeof(host) - 1);
        printf("# " PROG ": %d hops per size between 2 ranks with a GPU each, by hand (no "
               "runtime), everything enqueued before the chain starts; %s, host %s\n",
               hops, date, host);
        bench_gpu_t g[2] = { all[0].gpu, all[1].gpu };
        bench_print_env(g);
        printf("# us per hop (producer kernel end to consumer kernel start on the other GPU, "
               "the tile and one kernel included; local: kernel after kernel on rank 0's GPU), "
               "after a %d-hop warm-up; ce_GB/s: tile bytes per ce_sem hop; check: rank 0's tile "
               "after the row's chains, ok or method:wrong elements\n",
               WARM_HOPS);
        printf("%12s %8s %12s %12s %12s %12s %12s %10s  %s\n", "tile_bytes", "hops", "ce_sem",
               "sm_sem", "nccl", "local", "mpi_host", "ce_GB/s", "check");
        fflush(stdout);
    }

    /* ---- the chains */
    static const size_t sizes[] = { 4096, 65536, 1048576, 16777216, 134217728 };
    unsigned long long total_wrong = 0;
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        const size_t bytes = sizes[s];
        double us[NMETHODS] = { 0 };
        unsigned long long wrong[NMETHODS] = { 0 };
        for (int m = 0; m < NMETHODS; m++) {
            if (!method_built(m))
                continue;
            run_chain(h, m, bytes, WARM_HOPS, &wrong[m]); /* mappings, connections, clocks */
            us[m] = run_chain(h, m, bytes, hops, &wrong[m]);
            total_wrong += wrong[m];
        }
        double us_mpi = mpi_pingpong(h->peer, bytes, WARM_HOPS);
        us_mpi = mpi_pingpong(h->peer, bytes, hops);
        if (rank != 0)
            continue;
        char check[160] = "ok";
        size_t len = 0;
        for (int m = 0; m < NMETHODS; m++)
            if (wrong[m] && len < sizeof(check))
                len += (size_t)snprintf(check + len, sizeof(check) - len, "%s%s:%llu",
                                        len ? "," : "", method_name[m], wrong[m]);
        printf("%12zu %8d", bytes, hops);
        for (int m = 0; m < NMETHODS; m++) {
            if (method_built(m))
                printf(" %12.2f", us[m]);
            else
                printf(" %12s", "n/a");
        }
        printf(" %12.2f %10.2f  %s\n", us_mpi, (double)bytes / (us[M_CE] * 1e3), check);
        fflush(stdout);
    }

    /* ---- teardown: nobody touches the peer's region after the barrier */
#if BENCH_HAVE_NCCL
    NCCL_CHECK(ncclCommDestroy(h->nccl));
#endif
    CUDA_CHECK(cudaIpcCloseMemHandle(h->peer_region));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    CUDA_CHECK(cudaFree(h->region));
    CUDA_CHECK(cudaFree(h->put_done));
    CUDA_CHECK(cudaFree(h->d_bad));
    CUDA_CHECK(cudaFreeHost(h->gate_host));
    CUDA_CHECK(cudaEventDestroy(h->kernel_done));
    CUDA_CHECK(cudaEventDestroy(h->t0));
    CUDA_CHECK(cudaEventDestroy(h->t1));
    CUDA_CHECK(cudaStreamDestroy(h->exec));
    CUDA_CHECK(cudaStreamDestroy(h->copy));
    MPI_CHECK(MPI_Finalize());
    return total_wrong ? 1 : 0;
}
