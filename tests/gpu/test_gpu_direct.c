/* GPU-direct remote dependencies: DTD tasks with CUDA bodies on two ranks with one GPU each,
 * tiles moving from one rank's GPU memory straight into the other's (docs/architecture.md,
 * "GPU-direct remote dependencies"). Scenario (argv[1]), each checked element by element
 * against the same operations run sequentially here (exact: small integers in doubles):
 *   pingpong  a tile changed by a chain of tasks that alternate between the ranks, with a
 *             reader on the other rank followed at once by a writer on the tile's rank (the
 *             send must hold the bytes until its copy completed: write-after-read)
 *   bcast     one version read by several tasks on the other rank: received once
 *   evict     more tiles received than the (shrunk) zone holds: landings evict
 *   late      a consumer on rank 1 whose inputs are late: a tile from rank 0, produced by a
 *             GPU task there behind a slow CPU task, and a local one also made by a slow CPU
 *             task; a chain of GPU tasks inserted after it, on another tile, completes while
 *             it waits (no stream is blocked by its inputs). The landing on rank 1 is
 *             announced long before rank 0's GPU task is launched: with early announcements
 *             its put must be enqueued behind that task's body on the GPU (remote_behind),
 *             which a stream callback holds 100 ms there
 *   small     pingpong with 2 KiB tiles, within comm_short_limit: GPU to GPU all the same
 *             (comm_gpu_direct_min), not inside the activation through host memory
 *   cpu       pingpong with CPU bodies only: versions that CPU tasks make for CPU tasks go
 *             host to host (rendezvous), not through the GPUs, GPU direct or not
 * A further argument "trace" traces the run (profile_trace) and checks, once both ranks
 * wrote their files, that each landing's flow runs from the producer's kernel on one
 * rank's GPU stream to a consumer's kernel on the other's.
 * With comm_gpu_direct = auto (the default) the counters must show that no tile went
 * through host memory between the ranks (no rendezvous bytes, tiles received into GPU
 * memory); run with --mca comm_gpu_direct off the same checks pass through the host-staged
 * pipeline (tiles received into GPU memory, their bytes over MPI in chunks), or with
 * --mca comm_gpu_staged tile through the datum's host copies, and the counters show that
 * path instead. Exits 77 (skipped) without a GPU per rank, or when the
 * ranks' GPUs cannot reach each other while the run expects them to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rill/cuda.h"
#include "rill/dtd.h"
#include "rill/params.h"
#include "rill/rill.h"
#include "blas_bodies.h"
#include "test_util.h"

#include "comm.h" /* internal: rendezvous byte counters */
#include "core.h"

#define CHECK_OK(call)                                                                             \
    do {                                                                                           \
        rill_status_t s_ = (call);                                                                 \
        CHECK_MSG(s_ == RILL_SUCCESS, "%s", rill_status_string(s_));                               \
    } while (0)

#define NB 256 /* 256 x 256 tiles: 512 KiB, far above comm_short_limit */
static int nb = NB;

static rill_dtd_class_t *axpy, *scal;
static double *ref;  /* the sequential run: one 1 x nt row of tiles */
static int nt, rank; /* tiles; this rank */
static rill_matrix_t *A;

static double *ref_tile(int j)
{
    return ref + (size_t)j * (size_t)tile_len;
}

/* tile j's initial values (small integers) here and in the reference */
static void fill(int j)
{
    double *t = rill_matrix_tile_rank(A, 0, j) == rank ? rill_matrix_tile_write(A, 0, j) : NULL;
    for (int k = 0; k < tile_len; k++) {
        double v = (double)((j * 7 + k) % 11) - 5.0;
        ref_tile(j)[k] = v;
        if (t)
            t[k] = v;
    }
}

/* y += a x, on y's rank */
static void axpy_task(rill_taskpool_t *tp, double a, int x, int y)
{
    CHECK_OK(rill_dtd_insert_task(tp, axpy, 0, RILL_DTD_VALUE, sizeof(a), &a, RILL_DTD_INPUT,
                                  rill_matrix_tile(A, 0, x), RILL_DTD_INOUT,
                                  rill_matrix_tile(A, 0, y), RILL_DTD_ARG_END));
    for (int k = 0; k < tile_len; k++)
        ref_tile(y)[k] += a * ref_tile(x)[k];
}

/* y *= s, on y's rank */
static void scal_task(rill_taskpool_t *tp, double s, int y)
{
    CHECK_OK(rill_dtd_insert_task(tp, scal, 0, RILL_DTD_VALUE, sizeof(s), &s, RILL_DTD_INOUT,
                                  rill_matrix_tile(A, 0, y), RILL_DTD_ARG_END));
    for (int k = 0; k < tile_len; k++)
        ref_tile(y)[k] *= s;
}

/* ------------------------------------------------------------ late */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double slow_done_at, probe_at; /* when the slow task ended, when the chain had */

/* y *= s on the CPU, slowly (args: VALUE s, INOUT y) */
static rill_status_t slow_scal_cpu(rill_task_t *task)
{
    double s, *y;
    rill_dtd_unpack_args(task, &s, &y);
    usleep(500000);
    for (int k = 0; k < tile_len; k++)
        y[k] *= s;
    slow_done_at = now_s();
    return RILL_SUCCESS;
}

/* stream callback: holds the exec stream's later work (the scaling) for 100 ms */
static void CUDART_CB hold_stream(void *arg)
{
    (void)arg;
    usleep(100000);
}

/* y *= s on the GPU, the kernel held 100 ms behind a stream callback (args: VALUE s, INOUT
 * y): the producer is still in flight when the put for its version is handed over, however
 * slowly the send reaches the manager (a short kernel can complete first on a loaded host) */
static rill_status_t slow_scal_gpu(rill_task_t *task)
{
    if (cudaLaunchHostFunc(rill_cuda_stream(task), hold_stream, NULL) != cudaSuccess)
        return RILL_ERR_DEVICE;
    return scal_gpu(task);
}

/* reads the chain's tile on the CPU: the chain has completed (args: INPUT y) */
static rill_status_t probe_cpu(rill_task_t *task)
{
    (void)task;
    probe_at = now_s();
    return RILL_SUCCESS;
}

/* Rank 1: tile 3 += tile 0 (from rank 0's GPU, scaled there after a slow scaling on the CPU)
 * waits for tile 3's slow scaling on the CPU; a chain of 200 GPU scalings of tile 5 inserted
 * after it, then a CPU probe of tile 5. */
static void late(rill_context_t *ctx, rill_taskpool_t *tp, rill_dtd_class_t **slow,
                 rill_dtd_class_t **probe, rill_dtd_class_t **held)
{
    CHECK_OK(rill_dtd_class_create(ctx, "slow_scal", slow_scal_cpu, slow));
    CHECK_OK(rill_dtd_class_create(ctx, "probe", probe_cpu, probe));
    CHECK_OK(rill_dtd_class_create(ctx, "held_scal", NULL, held));
    CHECK_OK(rill_dtd_class_add_body(*held, RILL_BODY_CUDA, slow_scal_gpu));
    double s = -1.0, three = 3.0;
    CHECK_OK(rill_dtd_insert_task(tp, *slow, 0, RILL_DTD_VALUE, sizeof(s), &s, RILL_DTD_INOUT,
                                  rill_matrix_tile(A, 0, 0), RILL_DTD_ARG_END)); /* rank 0 */
    for (int k = 0; k < tile_len; k++)
        ref_tile(0)[k] *= s;
    /* on rank 0's GPU, half a second after rank 1 announced, in flight 100 ms */
    CHECK_OK(rill_dtd_insert_task(tp, *held, 0, RILL_DTD_VALUE, sizeof(three), &three,
                                  RILL_DTD_INOUT, rill_matrix_tile(A, 0, 0), RILL_DTD_ARG_END));
    for (int k = 0; k < tile_len; k++)
        ref_tile(0)[k] *= three;
    CHECK_OK(rill_dtd_insert_task(tp, *slow, 0, RILL_DTD_VALUE, sizeof(s), &s, RILL_DTD_INOUT,
                                  rill_matrix_tile(A, 0, 3), RILL_DTD_ARG_END));
    for (int k = 0; k < tile_len; k++)
        ref_tile(3)[k] *= s;
    axpy_task(tp, 1.0, 0, 3); /* its remote input lands while its local one is late */
    for (int i = 0; i < 200; i++)
        scal_task(tp, (i & 1) ? -1.0 : 1.0, 5);
    CHECK_OK(rill_dtd_insert_task(tp, *probe, 0, RILL_DTD_INPUT, rill_matrix_tile(A, 0, 5),
                                  RILL_DTD_ARG_END));
}

/* Tiles of this rank that differ from the reference. */
static long compare(void)
{
    long bad = 0;
    for (int j = 0; j < nt; j++) {
        double *t = rill_matrix_tile_ptr(A, 0, j);
        for (int k = 0; t && k < tile_len; k++)
            if (t[k] != ref_tile(j)[k]) {
                if (bad < 3)
                    fprintf(stderr, "rank %d: tile %d [%d] = %g, expected %g\n", rank, j, k, t[k],
                            ref_tile(j)[k]);
                bad++;
            }
    }
    return bad;
}

/* Tile 0 (rank 0) goes back and forth: tile 1 (rank 1) adds it and it adds tile 1, each step
 * on the tile's rank, so each step reads the other rank's newest version; a scaling on rank 0
 * right after rank 1 read tile 0 must not change what rank 1 received. */
static void pingpong(rill_taskpool_t *tp, int steps)
{
    for (int i = 0; i < steps; i++) {
        axpy_task(tp, 1.0, 0, 1);               /* rank 1 reads tile 0 (from rank 0's GPU) */
        scal_task(tp, (i & 1) ? -1.0 : 1.0, 0); /* rank 0 writes tile 0 at once */
        axpy_task(tp, -1.0, 1, 0);              /* rank 0 reads tile 1 (from rank 1's GPU) */
    }
}

/* Tile 0 (rank 0) changes, then every odd tile (rank 1) adds it: one transfer per version. */
static void bcast(rill_taskpool_t *tp, int rounds)
{
    for (int r = 0; r < rounds; r++) {
        scal_task(tp, -1.0, 0);
        for (int j = 1; j < nt; j += 2)
            axpy_task(tp, 1.0, 0, j);
    }
}

/* Every even tile (rank 0) changes, then tile 1 (rank 1) adds each of them. */
static void many(rill_taskpool_t *tp)
{
    for (int j = 0; j < nt; j += 2) {
        scal_task(tp, -1.0, j);
        axpy_task(tp, 1.0, j, 1);
    }
}

/* ------------------------------------------------------------ the trace's flows */

/* The flow points (ph 's' or 'f') of one rank's trace file on its GPUs' tracks: exec
 * streams (tid 3000 + 64 g + s, s < 40; kernel[i] true) and puts to other ranks (tid 3000 +
 * 64 g + 44; kernel[i] false): their ids. The writer puts one event per line. */
static int flow_ids(const char *path, char ph, unsigned long long *ids, bool *kernel, int max)
{
    FILE *f = NULL;
    for (int tries = 0; tries < 600 && !f; tries++) { /* the other rank may still write it */
        f = fopen(path, "r");
        if (f) { /* complete once it ends with the closing brace */
            fseek(f, -2, SEEK_END);
            int a = fgetc(f), b = fgetc(f);
            if (a != '}' && b != '}') {
                fclose(f);
                f = NULL;
            }
        }
        if (!f)
            usleep(100000);
    }
    CHECK_MSG(f, "no complete trace file %s after 60 s", path);
    fseek(f, 0, SEEK_SET);
    char line[1024], want[16];
    snprintf(want, sizeof(want), "\"ph\":\"%c\"", ph);
    int n = 0;
    while (fgets(line, sizeof(line), f)) {
        const char *t = strstr(line, "\"tid\":"), *i = strstr(line, "\"id\":\"0x");
        if (!strstr(line, want) || !t || !i)
            continue;
        int tid = atoi(t + 6), track = (tid - 3000) % 64;
        /* exec streams (< 40) and the puts' tracks: lane 0's 44, lane l's 56 + l */
        if (tid < 3000 || (track >= 40 && track != 44 && track <= 56) || n >= max)
            continue;
        kernel[n] = track < 40;
        ids[n++] = strtoull(i + 8, NULL, 16);
    }
    fclose(f);
    return n;
}

/* Both ranks' traces: this rank's landings each end a flow at a kernel here that starts on
 * the other rank's GPU, in the kernel that produced the version, or at its put when no
 * kernel there wrote it (pingpong: the first version, filled on the host). */
static void check_flows(const char *prefix, unsigned long long landings)
{
    enum { MAX = 100000 };
    static unsigned long long starts[MAX], ends[MAX];
    static bool s_kernel[MAX], f_kernel[MAX];
    char path[160];
    snprintf(path, sizeof(path), "%s.%d.json", prefix, 1 - rank);
    int ns = flow_ids(path, 's', starts, s_kernel, MAX);
    snprintf(path, sizeof(path), "%s.%d.json", prefix, rank);
    int nf = flow_ids(path, 'f', ends, f_kernel, MAX);
    unsigned long long matched = 0, from_kernel = 0;
    for (int i = 0; i < nf; i++) {
        bool dup = !f_kernel[i];
        for (int k = 0; k < i && !dup; k++)
            dup = ends[k] == ends[i];
        for (int k = 0; k < ns && !dup; k++)
            if (starts[k] == ends[i]) {
                matched++;
                from_kernel += s_kernel[k];
                break;
            }
    }
    printf("rank %d: %llu flows from the other rank's GPU end at kernels here, %llu of them "
           "from a kernel there (%llu landings)\n",
           rank, matched, from_kernel, landings);
    CHECK_MSG(matched >= landings && from_kernel + 1 >= landings,
              "rank %d: of its %llu landings, %llu have a flow from the other rank's GPU to a "
              "kernel here, %llu from the producer's kernel (at most one version was not made "
              "by a kernel there)",
              rank, landings, matched, from_kernel);
}

/* Both ranks read both trace files: each marks that it is done, and the second to do so
 * (it sees the other's mark) removes the files and the marks. */
static void remove_traces(const char *prefix)
{
    char path[160];
    snprintf(path, sizeof(path), "%s.%d.done", prefix, rank);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
    snprintf(path, sizeof(path), "%s.%d.done", prefix, 1 - rank);
    if (access(path, F_OK) != 0)
        return; /* the other rank still reads them */
    for (int r = 0; r < 2; r++) {
        snprintf(path, sizeof(path), "%s.%d.json", prefix, r);
        unlink(path);
        snprintf(path, sizeof(path), "%s.%d.done", prefix, r);
        unlink(path);
    }
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "pingpong";
    int evict = !strcmp(what, "evict");
    rill_dtd_class_t *slow = NULL, *probe = NULL, *held = NULL;
    /* one GPU per rank, as the checks below read GPU 0's counters (on a machine with 4 GPUs
     * each of 2 ranks would take 2, and the tiles could land on the second) */
    CHECK_OK(rill_param_set("device_cuda_max_gpus", "1"));
    if (evict) { /* zone: cuBLAS 32 MiB + 1 MiB workspace, ~15 MiB for data (30 tiles) */
        CHECK_OK(rill_param_set("device_cuda_memory_size", "48M"));
        CHECK_OK(rill_param_set("device_cuda_exec_streams", "1"));
        CHECK_OK(rill_param_set("device_cuda_workspace", "1M"));
    }
    int small = !strcmp(what, "small"), cpu = !strcmp(what, "cpu");
    nb = small ? 16 : NB; /* small: 2 KiB */
    tile_len = nb * nb;
    bool traced = false;
    char trace_prefix[96];
    for (int i = 2; i < argc; i++)
        traced |= !strcmp(argv[i], "trace");
    if (traced) { /* the same prefix on both ranks: their launcher's pid */
        snprintf(trace_prefix, sizeof(trace_prefix), "/tmp/rill_gd_trace_%d", (int)getppid());
        CHECK_OK(rill_param_set("profile_trace", trace_prefix));
    }
    if (!strcmp(what, "late")) /* a worker for the slow task, others for the rest */
        CHECK_OK(rill_param_set("runtime_num_cores", "4"));
    rill_context_t *ctx;
    CHECK_OK(rill_init(&argc, &argv, &ctx));
    rank = rill_context_rank(ctx);
    int nranks = rill_context_nranks(ctx), peer = 1 - rank;
    if (nranks != 2) {
        fprintf(stderr, "run with 2 ranks (mpirun -np 2)\n");
        rill_fini(&ctx);
        return 2;
    }
    /* every rank must take the same way out: agree on the GPUs first */
    const char *why = "";
    int ng = rill_context_ngpus(ctx), direct = rill_context_gpu_direct(ctx, peer, &why);
    int off = !rill_comm_gpu_direct_allowed(); /* comm_gpu_direct = off */
    /* GPU to GPU: straight (1, 2) or through the host-staged pipeline (3) */
    bool staged = direct == 3, g2g = direct != 0;
    uint64_t mine[1] = { ng > 0 && (direct || off) }, all[1];
    CHECK_OK(rill_comm_allreduce_u64(ctx->comm, mine, all, 1, RILL_COMM_MIN));
    if (!all[0]) {
        printf("SKIP: rank %d has %d GPU(s); GPU-direct to rank %d: %s%s\n", rank, ng, peer,
               direct ? "yes" : "no: ", why);
        rill_fini(&ctx);
        return 77;
    }
    nt = evict ? 80 : 8;
    CHECK_OK(rill_matrix_create(ctx, nb, nt * nb, nb, nb, 1, 2, &A)); /* tile (0, j): rank j%2 */
    ref = malloc(sizeof(double) * (size_t)nt * (size_t)tile_len);
    CHECK_MSG(ref != NULL, "out of memory");
    for (int j = 0; j < nt; j++)
        fill(j);
    CHECK_OK(rill_dtd_class_create(ctx, "axpy", cpu ? axpy_cpu : NULL, &axpy));
    CHECK_OK(rill_dtd_class_create(ctx, "scal", cpu ? scal_cpu : NULL, &scal));
    if (!cpu) {
        CHECK_OK(rill_dtd_class_add_body(axpy, RILL_BODY_CUDA, axpy_gpu));
        CHECK_OK(rill_dtd_class_add_body(scal, RILL_BODY_CUDA, scal_gpu));
    }
    rill_comm_stats_t before, after;
    rill_comm_stats(ctx->comm, &before);
    rill_taskpool_t *tp;
    CHECK_OK(rill_dtd_taskpool_create(ctx, &tp));
    int expect_in; /* versions this rank receives */
    if (!strcmp(what, "pingpong") || small || cpu) {
        pingpong(tp, 50);
        expect_in = 50;
    } else if (!strcmp(what, "bcast")) {
        bcast(tp, 5);
        expect_in = rank == 1 ? 5 : 0;
    } else if (evict) {
        many(tp);
        expect_in = rank == 1 ? nt / 2 : 0;
    } else if (!strcmp(what, "late")) {
        /* start together: rank 1 must insert its receive (and announce its landing) well
         * within the half second rank 0's producer waits, whatever the ranks' start-up took */
        CHECK_OK(rill_comm_allreduce_u64(ctx->comm, mine, all, 1, RILL_COMM_MIN));
        late(ctx, tp, &slow, &probe, &held);
        expect_in = rank == 1 ? 1 : 0;
    } else {
        fprintf(stderr, "unknown scenario '%s': pingpong, bcast, evict, late, small, cpu\n", what);
        return 2;
    }
    CHECK_OK(rill_taskpool_wait(tp));
    rill_taskpool_destroy(&tp);
    rill_comm_stats(ctx->comm, &after);
    long bad = compare();
    rill_gpu_counters_t c;
    CHECK_OK(rill_context_gpu_counters(ctx, 0, &c));
    unsigned long long rdv = after.data_bytes_recv - before.data_bytes_recv;
    printf("rank %d (%s): %llu GPU tasks; from the other rank's GPU %llu tiles (%.1f MB, %llu "
           "announced ahead, %llu waited for room), to it %llu (%.1f MB); host-staged "
           "rendezvous bytes received %llu; H2D %llu, D2H %llu, evictions %llu; puts behind "
           "their producer %llu, by the SMs %llu\n",
           rank,
           staged ? "host-staged pipeline"
           : g2g  ? "GPU direct"
                  : "host-staged",
           c.tasks, c.remote_in, (double)c.remote_in_bytes / 1e6, c.remote_early,
           c.remote_waits_for_room, c.remote_out, (double)c.remote_out_bytes / 1e6, rdv, c.h2d,
           c.d2h, c.evictions, c.remote_behind, c.remote_sm);
    CHECK_MSG(bad == 0, "rank %d: %ld elements differ from the sequential run", rank, bad);
    rill_param_t *pe = NULL;
    bool early = rill_param_lookup("dtd_gpu_early", &pe) == RILL_SUCCESS && rill_param_get_bool(pe);
    /* pingpong: each receive's landing can be reserved as soon as the rank's own last use
     * of the tile completed, usually before the other rank produced the next version (50
     * and 49 of 50 on 2 H200s): at least one must have been (the timing decides the rest) */
    if ((!strcmp(what, "pingpong") || small) && g2g)
        CHECK_MSG(early ? c.remote_early > 0 : c.remote_early == 0,
                  "%llu landings announced ahead with dtd_gpu_early %s", c.remote_early,
                  early ? "on" : "off");
    /* late: rank 1's landing of tile 0 was announced at insertion, half a second before rank
     * 0's GPU task that produces it was launched: its put went behind that body on the GPU */
    if (slow && rank == 0 && g2g)
        CHECK_MSG(early ? c.remote_behind == 1 : c.remote_behind == 0,
                  "%llu puts enqueued behind their producer with dtd_gpu_early %s, expected %d",
                  c.remote_behind, early ? "on" : "off", early ? 1 : 0);
    /* with device_cuda_put_sm_max 64 KiB (test_gpu_direct_small_sm), small tiles go by a
     * kernel when this GPU reaches the other rank's directly (one GPU shared, or peer access
     * between the two): all of them but the first, which starts in host memory (the copy
     * engine's); larger ones (pingpong's 512 KiB) and, by default, all by the copy engine */
    if (g2g && (!strcmp(what, "pingpong") || small)) {
        rill_param_t *ps = NULL;
        int ndev = 0, peer = 0;
        bool sm = small && rill_param_lookup("device_cuda_put_sm_max", &ps) == RILL_SUCCESS &&
                  rill_param_get_int(ps) >= 2048 && cudaGetDeviceCount(&ndev) == cudaSuccess &&
                  (ndev == 1 || (cudaDeviceCanAccessPeer(&peer, 0, 1) == cudaSuccess && peer));
        CHECK_MSG(sm ? c.remote_sm + 1 >= c.remote_out && c.remote_sm > 0 : c.remote_sm == 0,
                  "rank %d: %llu of %llu puts by the SMs, expected %s", rank, c.remote_sm,
                  c.remote_out, sm ? "all but the first" : "none");
    }
    if (slow && rank == 1) /* an ordering, with half a second of margin: not a speed */
        CHECK_MSG(probe_at > 0 && probe_at < slow_done_at,
                  "the GPU chain inserted after the waiting consumer ended %.3f s after its "
                  "late input was ready: it was blocked",
                  probe_at - slow_done_at);
    if (cpu) {
        /* CPU tasks only: no GPU task, nothing into or out of the GPU, every version by
         * rendezvous (512 KiB tiles), whatever the route between the GPUs */
        CHECK_MSG(c.tasks == 0 && c.remote_in == 0 && c.remote_out == 0 && c.h2d == 0 &&
                      rdv >= (unsigned long long)expect_in * tile_len * 8,
                  "rank %d, CPU tasks only: %llu GPU tasks, %llu tiles into the GPU from the "
                  "other rank, %llu out, %llu H2D copies, %llu rendezvous bytes (expected "
                  "none through the GPUs, at least %d tiles by rendezvous)",
                  rank, c.tasks, c.remote_in, c.remote_out, c.h2d, rdv, expect_in);
    } else if (g2g) {
        /* every version came GPU to GPU, once: nothing through host memory on the way, or
         * (the pipeline) its bytes once over MPI in chunks */
        CHECK_MSG(c.remote_in == (unsigned long long)expect_in,
                  "rank %d received %llu tiles into its GPU, expected %d", rank, c.remote_in,
                  expect_in);
        const char *wire = rill_context_wire(ctx, peer, NULL);
        bool by_mpi = wire && !strcmp(wire, "mpi"); /* (the comm engine counts those bytes) */
        if (staged)
            CHECK_MSG(rdv == (by_mpi ? (unsigned long long)c.remote_in_bytes : 0),
                      "rank %d, host-staged pipeline over %s: %llu bytes over MPI for %llu landed",
                      rank, wire ? wire : "?", rdv, (unsigned long long)c.remote_in_bytes);
        else
            CHECK_MSG(rdv == 0, "rank %d received %llu bytes host-staged", rank, rdv);
        if (evict && rank == 1)
            CHECK_MSG(c.evictions > 0, "rank 1's landings made room by eviction");
    } else {
        CHECK_MSG(c.remote_in == 0 && rdv >= (unsigned long long)expect_in * tile_len * 8,
                  "host-staged: %llu tiles into the GPU, %llu rendezvous bytes", c.remote_in, rdv);
    }
    free(ref);
    if (slow) {
        CHECK_OK(rill_dtd_class_destroy(&slow));
        CHECK_OK(rill_dtd_class_destroy(&probe));
        CHECK_OK(rill_dtd_class_destroy(&held));
    }
    CHECK_OK(rill_dtd_class_destroy(&axpy));
    CHECK_OK(rill_dtd_class_destroy(&scal));
    CHECK_OK(rill_matrix_destroy(&A));
    CHECK_OK(rill_fini(&ctx));
    if (traced && g2g) {
        check_flows(trace_prefix, c.remote_in);
        remove_traces(trace_prefix);
    }
    printf("%s rank %d: PASS\n", what, rank);
    return 0;
}
