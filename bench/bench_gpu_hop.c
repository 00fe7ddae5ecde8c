/* The cost of a remote dependency between the GPUs of two processes: one tile changed by a
 * chain of DTD tasks with CUDA bodies that alternate between rank 0 and rank 1, so every
 * step moves the newest version to the other rank's GPU. Prints, per tile size, the time
 * per hop and the bytes per second that makes, and of rank 0's side the landings received,
 * those announced ahead, the puts enqueued behind their producer's body on the GPU and the
 * landing stream's mean wait per landing (device_cuda_timing) and the puts by the SMs
 * (rill_gpu_counters_t); tools/rill_bench hop puts it next to
 * the same chain written by hand (bench_hop_ref: no runtime) in one table. A second table: many
 * tiles in flight at once (k independent chains), the bytes per second moved between the ranks. Run
 * it once as is (GPU direct between the ranks of a node) and once with --mca comm_gpu_direct off
 * (host-staged: the tile goes home, over MPI, and back to the GPU) to compare the paths.
 *   mpirun --bind-to none -np 2 bench_gpu_hop [hops] [max_bytes]
 * hops: even, default 200 per size; max_bytes: only the tiles of at most that many bytes
 * (both tables; e.g. 4096 for a trace of the smallest tile's chain) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rill/cuda.h"
#include "rill/dtd.h"
#include "rill/rill.h"

#include "args.h"

static int tile_len;

/* y *= s; the third argument only places the task (RILL_DTD_AFFINITY) */
static rill_status_t scal_gpu(rill_task_t *task)
{
    double s, *y, *where;
    rill_dtd_unpack_args(task, &s, &y, &where);
    (void)where;
    return cublasDscal(rill_cuda_cublas(task), tile_len, &s, y, 1) == CUBLAS_STATUS_SUCCESS
               ? RILL_SUCCESS
               : RILL_ERR_DEVICE;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* hops tasks on tile (0, 0) (rank 0's), task i placed by tile (0, 2) (rank 0) when i is even,
 * by tile (0, 1) (rank 1) when it is odd */
static rill_status_t chain(rill_context_t *ctx, rill_dtd_class_t *cls, rill_matrix_t *A, int hops)
{
    rill_taskpool_t *tp;
    rill_status_t s = rill_dtd_taskpool_create(ctx, &tp);
    for (int i = 0; i < hops && s == RILL_SUCCESS; i++) {
        double f = (i & 1) ? -1.0 : 1.0;
        s = rill_dtd_insert_task(tp, cls, 0, RILL_DTD_VALUE, sizeof(f), &f, RILL_DTD_INOUT,
                                 rill_matrix_tile(A, 0, 0), RILL_DTD_INPUT | RILL_DTD_AFFINITY,
                                 rill_matrix_tile(A, 0, (i & 1) ? 1 : 2), RILL_DTD_ARG_END);
    }
    rill_status_t w = rill_taskpool_wait(tp);
    rill_taskpool_destroy(&tp);
    return s != RILL_SUCCESS ? s : w;
}

/* k independent chains at once (k even): tiles (0, j), j < k, each changed hops times, task
 * i of tile j on rank (i + j) % 2 (placed by tile (0, k) of rank 0 or (0, k + 1) of rank 1),
 * so every step moves one of the k tiles to the other rank's GPU, both directions busy */
static rill_status_t flood(rill_context_t *ctx, rill_dtd_class_t *cls, rill_matrix_t *A, int k,
                           int hops)
{
    rill_taskpool_t *tp;
    rill_status_t s = rill_dtd_taskpool_create(ctx, &tp);
    for (int i = 0; i < hops && s == RILL_SUCCESS; i++)
        for (int j = 0; j < k && s == RILL_SUCCESS; j++) {
            double f = (i & 1) ? -1.0 : 1.0;
            s = rill_dtd_insert_task(tp, cls, 0, RILL_DTD_VALUE, sizeof(f), &f, RILL_DTD_INOUT,
                                     rill_matrix_tile(A, 0, j), RILL_DTD_INPUT | RILL_DTD_AFFINITY,
                                     rill_matrix_tile(A, 0, k + ((i + j) & 1)), RILL_DTD_ARG_END);
        }
    rill_status_t w = rill_taskpool_wait(tp);
    rill_taskpool_destroy(&tp);
    return s != RILL_SUCCESS ? s : w;
}

/* Many tiles in flight between the ranks: bytes moved per second by k chains of tiles of
 * len doubles, from the difference of a run of 2 h hops and one of h (the first placement
 * and the bring-home at the end of each run cancel out). Rank 0 prints a row. */
static int flood_row(rill_context_t *ctx, rill_dtd_class_t *cls, int len, int k, int h)
{
    tile_len = len;
    rill_matrix_t *A;
    if (rill_matrix_create(ctx, len, k + 2, len, 1, 1, 2, &A) != RILL_SUCCESS)
        return 1;
    for (int j = 0; j < k + 2; j++) {
        double *t = rill_matrix_tile_write(A, 0, j);
        for (int e = 0; t && e < len; e++)
            t[e] = 1.0 + (double)(e % 7);
    }
    rill_status_t s = flood(ctx, cls, A, k, h); /* warm-up */
    double t0 = now_s();
    if (s == RILL_SUCCESS)
        s = flood(ctx, cls, A, k, h);
    double t1 = now_s();
    if (s == RILL_SUCCESS)
        s = flood(ctx, cls, A, k, 2 * h);
    double t2 = now_s(), ok = 1;
    for (int j = 0; j < k; j++) { /* an even number of sign flips each: back */
        double *t = rill_matrix_tile_rank(A, 0, j) == rill_context_rank(ctx)
                        ? rill_matrix_tile_ptr(A, 0, j)
                        : NULL;
        for (int e = 0; t && e < len; e++)
            ok = ok && t[e] == 1.0 + (double)(e % 7);
    }
    double dt = (t2 - t1) - (t1 - t0);
    if (rill_context_rank(ctx) == 0) {
        size_t bytes = (size_t)len * sizeof(double);
        printf("%12zu %8d %8d %12.1f %12.1f %10.1f%s\n", bytes, k, h, (t1 - t0) * 1e3,
               (t2 - t1) * 1e3, dt > 0 ? (double)bytes * k * h / dt / 1e9 : 0.0,
               s != RILL_SUCCESS ? "  FAILED"
               : ok              ? ""
                                 : "  WRONG RESULT");
        fflush(stdout);
    }
    rill_matrix_destroy(&A);
    return 0;
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    if (rill_init(&argc, &argv, &ctx) != RILL_SUCCESS)
        return 1;
    int rank = rill_context_rank(ctx);
    long lhops = 200, lmax = 0;
    if ((argc > 1 && rill_args_long(argv[1], 2, 100000, &lhops)) ||
        (argc > 2 && rill_args_long(argv[2], 1, (long)1 << 40, &lmax)) || argc > 3) {
        if (rank == 0)
            fprintf(stderr,
                    "bench_gpu_hop: error: arguments: [hops, an integer in [2, 100000]] "
                    "[max_bytes, an integer in [1, 2^40]], got%s%s%s%s%s\n",
                    argc > 1 ? " '" : " nothing", argc > 1 ? argv[1] : "", argc > 1 ? "'" : "",
                    argc > 2 ? " '" : "", argc > 2 ? argv[2] : "");
        rill_fini(&ctx);
        return 2;
    }
    int hops = (int)lhops / 2 * 2;
    double max_bytes = lmax ? (double)lmax : 1e18;
    if (rill_context_nranks(ctx) != 2 || rill_context_ngpus(ctx) < 1 || hops < 2) {
        if (rank == 0)
            fprintf(stderr,
                    "bench_gpu_hop: 2 ranks with a GPU each and hops >= 2 (%d ranks, "
                    "%d GPUs here, %d hops)\n",
                    rill_context_nranks(ctx), rill_context_ngpus(ctx), hops);
        rill_fini(&ctx);
        return 1;
    }
    const char *why = "";
    int direct = rill_context_gpu_direct(ctx, 1 - rank, &why);
    rill_dtd_class_t *cls;
    if (rill_dtd_class_create(ctx, "hop", NULL, &cls) != RILL_SUCCESS ||
        rill_dtd_class_add_body(cls, RILL_BODY_CUDA, scal_gpu) != RILL_SUCCESS)
        return 1;
    if (rank == 0) {
        printf("# bench_gpu_hop: %d hops per size between 2 ranks with a GPU each, %s%s\n", hops,
               direct == 3 ? "host-staged pipeline: "
               : direct    ? "GPU direct"
                           : "host-staged: ",
               direct == 1 || direct == 2 ? "" : why);
        printf("%12s %8s %12s %10s %14s %8s %8s %12s %8s\n", "tile_bytes", "hops", "us_per_hop",
               "GB/s", "to_GPU_direct", "early", "behind", "wait_us", "by_SM");
    }
    /* tiles of one column: 4 KiB, 64 KiB, 1 MiB, 16 MiB, 128 MiB (GPU to GPU from
     * comm_gpu_direct_min, 1 byte by default; host-staged ones of up to comm_short_limit
     * travel inside the activation) */
    static const int lens[] = { 512, 8192, 131072, 2097152, 16777216 };
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        if ((double)lens[k] * sizeof(double) > max_bytes)
            break;
        tile_len = lens[k];
        rill_matrix_t *A;
        if (rill_matrix_create(ctx, tile_len, 3, tile_len, 1, 1, 2, &A) != RILL_SUCCESS)
            return 1;
        for (int j = 0; j < 3; j++) {
            double *t = rill_matrix_tile_write(A, 0, j);
            for (int e = 0; t && e < tile_len; e++)
                t[e] = 1.0 + (double)(e % 7);
        }
        rill_gpu_counters_t c0, c1;
        rill_status_t s = chain(ctx, cls, A, 20); /* warm-up: blocks, mappings, handles */
        rill_context_gpu_counters(ctx, 0, &c0);
        double t0 = now_s();
        if (s == RILL_SUCCESS)
            s = chain(ctx, cls, A, hops);
        double dt = now_s() - t0;
        rill_context_gpu_counters(ctx, 0, &c1);
        /* the odd tasks flip the sign: 10 flips in the warm-up, hops / 2 in the timed chain
         * (an odd number for hops = 50, say) */
        double ok = 1, sign = (hops / 2) % 2 ? -1.0 : 1.0;
        double *t = rill_matrix_tile_ptr(A, 0, 0);
        for (int e = 0; t && e < tile_len; e++)
            ok = ok && t[e] == sign * (1.0 + (double)(e % 7));
        if (rank == 0) {
            size_t bytes = (size_t)tile_len * sizeof(double);
            unsigned long long in = c1.remote_in - c0.remote_in;
            char wait[32] = "-"; /* (measured with device_cuda_timing only) */
            if (c1.timed)
                snprintf(wait, sizeof(wait), "%.1f",
                         in ? (c1.remote_wait_s - c0.remote_wait_s) / (double)in * 1e6 : 0.0);
            printf("%12zu %8d %12.1f %10.2f %14llu %8llu %8llu %12s %8llu%s\n", bytes, hops,
                   dt / hops * 1e6, (double)bytes * hops / dt / 1e9, in,
                   c1.remote_early - c0.remote_early, c1.remote_behind - c0.remote_behind, wait,
                   c1.remote_sm - c0.remote_sm,
                   s != RILL_SUCCESS ? "  FAILED"
                   : ok              ? ""
                                     : "  WRONG RESULT");
            fflush(stdout);
        }
        rill_matrix_destroy(&A);
    }
    if (rank == 0) {
        printf("# many tiles in flight: k chains at once (half of them starting on each rank), "
               "h and 2 h hops each; GB/s = bytes moved between the ranks (both directions) in "
               "the h extra hops / the time they added\n");
        printf("%12s %8s %8s %12s %12s %10s\n", "tile_bytes", "tiles", "h", "ms_h", "ms_2h",
               "GB/s");
    }
    static const struct {
        int len, k;
    } fl[] = { { 2097152, 16 }, { 8388608, 8 }, { 16777216, 8 } };
    for (size_t r = 0; r < sizeof(fl) / sizeof(fl[0]); r++)
        if ((double)fl[r].len * sizeof(double) <= max_bytes &&
            flood_row(ctx, cls, fl[r].len, fl[r].k, 10))
            return 1;
    rill_gpu_counters_t c;
    if (rill_context_gpu_counters(ctx, 0, &c) == RILL_SUCCESS && c.spans_late)
        printf("# rank %d: %llu GPU spans ended after the host saw them complete (by up to %.1f "
               "us): the trace's GPU times are off\n",
               rank, c.spans_late, c.span_late_max_us);
    rill_dtd_class_destroy(&cls);
    rill_fini(&ctx);
    return 0;
}
