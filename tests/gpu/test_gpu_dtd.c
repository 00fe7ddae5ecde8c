/* DTD tasks on GPUs through the GPU managers, one scenario per run (argv[1]):
 *   mixed    random DAGs of CPU-only, CUDA-only and two-body classes on shared tiles,
 *            checked against a sequential run of the same operations (exact: integer values)
 *   evict    a working set 3x the (shrunk) zone: evictions, dirty tiles written home first
 *   toosmall one task whose tiles do not fit in the zone: a clear error, at once, no hang
 *   cudaerr  a CUDA call that fails in a body: the taskpool fails naming the task and GPU
 *   multigpu two GPUs in one process: tiles move GPU to GPU (D2D), no host round trip
 *   idle     an idle manager sleeps (the process uses next to no CPU while idle)
 *   urgent   tasks inserted RILL_DTD_URGENT run on the exec stream of the greatest priority
 *            (device_cuda_urgent_streams), the others on the normal-priority streams
 *   trace    a traced run has a track per exec stream and per copy direction, the tasks'
 *            spans on them, and flows from the workers that handed tasks over; no span ends
 *            after the host saw it complete (the GPU clock's mapping onto the host's)
 * Each exits 77 (skipped) with the reason when no GPU is usable, as on CI machines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rill/cuda.h"
#include "rill/dtd.h"
#include "rill/params.h"
#include "rill/rill.h"

#include "blas_bodies.h" /* tile_len, axpy_gpu, scal_gpu, axpy_cpu, scal_cpu */
#include "test_util.h"

#define NT_MAX 64

#define CHECK_OK(call)                                                                             \
    do {                                                                                           \
        rill_status_t s_ = (call);                                                                 \
        CHECK_MSG(s_ == RILL_SUCCESS, "%s", rill_status_string(s_));                               \
    } while (0)

static int skip_without_gpu(rill_context_t *ctx, int need)
{
    int n = rill_context_ngpus(ctx);
    if (n >= need)
        return 0;
    printf("SKIP: this process runs on %d GPU(s), the scenario needs %d%s%s\n", n, need,
           rill_context_gpu_status(ctx)[0] ? ": " : "", rill_context_gpu_status(ctx));
    rill_fini(&ctx);
    return 1;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Random updates of nt tiles by classes picked at random (exact in double: small integers,
 * a in {1, -1}, s in {-1, 2} on values kept small), checked against the same sequence run
 * here. Returns the number of wrong elements. */
static long random_dag(rill_context_t *ctx, int nt, int ntasks, rill_dtd_class_t **axpy, int naxpy,
                       rill_dtd_class_t **scal, int nscal, int rounds)
{
    double *tiles[NT_MAX], *ref[NT_MAX];
    rill_data_t *data[NT_MAX];
    for (int t = 0; t < nt; t++) {
        tiles[t] = malloc(sizeof(double) * (size_t)tile_len);
        ref[t] = malloc(sizeof(double) * (size_t)tile_len);
        CHECK(tiles[t] && ref[t]);
        for (int i = 0; i < tile_len; i++)
            tiles[t][i] = ref[t][i] = (double)((t * 7 + i) % 11) - 5.0;
        CHECK_OK(rill_data_create(ctx, tiles[t], sizeof(double) * (size_t)tile_len, &data[t]));
    }
    for (int r = 0; r < rounds; r++) {
        rill_taskpool_t *tp;
        CHECK_OK(rill_dtd_taskpool_create(ctx, &tp));
        for (int k = 0; k < ntasks; k++) {
            int y = (int)(next_rand() % (uint64_t)nt);
            if (next_rand() % 3) {
                int x = (int)(next_rand() % (uint64_t)nt);
                if (x == y)
                    x = (x + 1) % nt;
                double a = (next_rand() & 1) ? 1.0 : -1.0;
                rill_dtd_class_t *c = axpy[next_rand() % (uint64_t)naxpy];
                CHECK_OK(rill_dtd_insert_task(tp, c, 0, RILL_DTD_VALUE, sizeof(a), &a,
                                              RILL_DTD_INPUT, data[x], RILL_DTD_INOUT, data[y],
                                              RILL_DTD_ARG_END));
                for (int i = 0; i < tile_len; i++)
                    ref[y][i] += a * ref[x][i];
            } else {
                /* -1 or 0.5 keeps the magnitudes bounded; both are exact */
                double s = (next_rand() & 1) ? -1.0 : 0.5;
                rill_dtd_class_t *c = scal[next_rand() % (uint64_t)nscal];
                CHECK_OK(rill_dtd_insert_task(tp, c, 0, RILL_DTD_VALUE, sizeof(s), &s,
                                              RILL_DTD_INOUT, data[y], RILL_DTD_ARG_END));
                for (int i = 0; i < tile_len; i++)
                    ref[y][i] *= s;
            }
        }
        CHECK_OK(rill_taskpool_wait(tp));
        rill_taskpool_destroy(&tp);
    }
    long bad = 0;
    for (int t = 0; t < nt; t++) {
        for (int i = 0; i < tile_len; i++)
            if (tiles[t][i] != ref[t][i] &&
                !(fabs(tiles[t][i] - ref[t][i]) <= 1e-9 * fabs(ref[t][i]))) {
                if (bad < 5)
                    printf("tile %d element %d: %.17g, expected %.17g\n", t, i, tiles[t][i],
                           ref[t][i]);
                bad++;
            }
        CHECK_OK(rill_data_destroy(&data[t]));
        free(tiles[t]);
        free(ref[t]);
    }
    return bad;
}

static void make_classes(rill_context_t *ctx, rill_dtd_class_t **axpy, rill_dtd_class_t **scal)
{
    /* CPU only, CUDA only, both */
    CHECK_OK(rill_dtd_class_create(ctx, "axpy_cpu", axpy_cpu, &axpy[0]));
    CHECK_OK(rill_dtd_class_create(ctx, "axpy_gpu", NULL, &axpy[1]));
    CHECK_OK(rill_dtd_class_add_body(axpy[1], RILL_BODY_CUDA, axpy_gpu));
    CHECK_OK(rill_dtd_class_create(ctx, "axpy_both", axpy_cpu, &axpy[2]));
    CHECK_OK(rill_dtd_class_add_body(axpy[2], RILL_BODY_CUDA, axpy_gpu));
    CHECK_OK(rill_dtd_class_create(ctx, "scal_cpu", scal_cpu, &scal[0]));
    CHECK_OK(rill_dtd_class_create(ctx, "scal_gpu", NULL, &scal[1]));
    CHECK_OK(rill_dtd_class_add_body(scal[1], RILL_BODY_CUDA, scal_gpu));
    CHECK_OK(rill_dtd_class_create(ctx, "scal_both", scal_cpu, &scal[2]));
    CHECK_OK(rill_dtd_class_add_body(scal[2], RILL_BODY_CUDA, scal_gpu));
}

static void free_classes(rill_dtd_class_t **axpy, rill_dtd_class_t **scal)
{
    for (int i = 0; i < 3; i++) {
        CHECK_OK(rill_dtd_class_destroy(&axpy[i]));
        CHECK_OK(rill_dtd_class_destroy(&scal[i]));
    }
}

static void print_counters(rill_context_t *ctx, int g, rill_gpu_counters_t *c)
{
    CHECK_OK(rill_context_gpu_counters(ctx, g, c));
    printf("gpu %d: %llu tasks, H2D %llu, D2H %llu, D2D %llu, hits %llu, evictions %llu "
           "(write-backs %llu), home requests %llu, waits for room %llu\n",
           g, c->tasks, c->h2d, c->d2h, c->d2d, c->hits, c->evictions, c->writebacks,
           c->home_requests, c->waits_for_room);
}

static int run_mixed(rill_context_t *ctx)
{
    tile_len = 4096;
    rill_dtd_class_t *axpy[3], *scal[3];
    make_classes(ctx, axpy, scal);
    long bad = 0;
    for (int trial = 0; trial < 4; trial++)
        bad += random_dag(ctx, 24, 600, axpy, 3, scal, 3, 2);
    rill_gpu_counters_t c;
    print_counters(ctx, 0, &c);
    CHECK_MSG(bad == 0, "%ld elements differ from the sequential run", bad);
    CHECK_MSG(c.tasks > 0 && c.home_requests > 0,
              "both devices ran tasks that shared tiles (GPU tasks %llu, home requests %llu)",
              c.tasks, c.home_requests);
    free_classes(axpy, scal);
    return 0;
}

static int run_evict(rill_context_t *ctx)
{
    tile_len = 1 << 17; /* 1 MiB tiles, 48 of them: 48 MiB; the zone holds ~16 for data */
    rill_dtd_class_t *axpy[3], *scal[3];
    make_classes(ctx, axpy, scal);
    /* CUDA-only classes: every task runs on the GPU, the zone must cycle */
    long bad = random_dag(ctx, 48, 400, axpy + 1, 1, scal + 1, 1, 2);
    rill_gpu_counters_t c;
    print_counters(ctx, 0, &c);
    CHECK_MSG(bad == 0, "%ld elements differ from the sequential run", bad);
    CHECK_MSG(c.evictions > 0 && c.writebacks > 0,
              "the working set exceeds the zone: evictions (%llu) with dirty write-backs (%llu)",
              c.evictions, c.writebacks);
    free_classes(axpy, scal);
    return 0;
}

static int run_toosmall(rill_context_t *ctx)
{
    tile_len = 1 << 21; /* 16 MiB tiles: two do not fit in what the zone has for data */
    rill_dtd_class_t *axpy[3], *scal[3];
    make_classes(ctx, axpy, scal);
    double *x = calloc((size_t)tile_len, sizeof(double)),
           *y = calloc((size_t)tile_len, sizeof(double));
    CHECK(x && y);
    rill_data_t *dx, *dy;
    CHECK_OK(rill_data_create(ctx, x, sizeof(double) * (size_t)tile_len, &dx));
    CHECK_OK(rill_data_create(ctx, y, sizeof(double) * (size_t)tile_len, &dy));
    rill_taskpool_t *tp;
    CHECK_OK(rill_dtd_taskpool_create(ctx, &tp));
    double a = 1.0;
    /* stderr is captured from before the insertion: the manager may refuse the task before the
     * wait starts */
    test_capture_t cap;
    test_capture_begin(&cap);
    rill_status_t si =
        rill_dtd_insert_task(tp, axpy[1], 0, RILL_DTD_VALUE, sizeof(a), &a, RILL_DTD_INPUT, dx,
                             RILL_DTD_INOUT, dy, RILL_DTD_ARG_END);
    rill_status_t s = rill_taskpool_wait(tp);
    char *err = test_capture_end(&cap);
    printf("wait: %s; stderr:\n%s", rill_status_string(s), err);
    CHECK_OK(si);
    CHECK_MSG(s == RILL_ERR_NO_MEMORY, "a task larger than the zone must fail the taskpool");
    CHECK_MSG(strstr(err, "needs 33554432 bytes") && strstr(err, "device_cuda_memory_size"),
              "the error names the sizes and the parameter to change");
    free(err);
    rill_taskpool_destroy(&tp);
    CHECK_OK(rill_data_destroy(&dx));
    CHECK_OK(rill_data_destroy(&dy));
    free(x);
    free(y);
    free_classes(axpy, scal);
    return 0;
}

static rill_status_t bad_copy(rill_task_t *task)
{
    double *y;
    rill_dtd_unpack_args(task, &y);
    /* a device-to-device copy from an address that is not device memory: refused */
    cudaError_t e = cudaMemcpyAsync(y, (void *)(uintptr_t)0x10, 4096, cudaMemcpyDeviceToDevice,
                                    rill_cuda_stream(task));
    if (e == cudaSuccess)
        return RILL_SUCCESS;
    fprintf(stderr, "bad_copy: cudaMemcpyAsync failed as expected: %s\n", cudaGetErrorString(e));
    return RILL_ERR_DEVICE;
}

static int run_cudaerr(rill_context_t *ctx)
{
    tile_len = 4096;
    double *y = calloc((size_t)tile_len, sizeof(double));
    rill_data_t *dy;
    CHECK_OK(rill_data_create(ctx, y, sizeof(double) * (size_t)tile_len, &dy));
    rill_dtd_class_t *cls;
    CHECK_OK(rill_dtd_class_create(ctx, "bad_copy", NULL, &cls));
    CHECK_OK(rill_dtd_class_add_body(cls, RILL_BODY_CUDA, bad_copy));
    rill_taskpool_t *tp;
    CHECK_OK(rill_dtd_taskpool_create(ctx, &tp));
    CHECK_OK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INOUT, dy, RILL_DTD_ARG_END));
    rill_status_t s = rill_taskpool_wait(tp);
    printf("wait: %s\n", rill_status_string(s));
    CHECK_MSG(s == RILL_ERR_TASK, "a failing CUDA body fails the taskpool (got %s)",
              rill_status_string(s));
    rill_taskpool_destroy(&tp);
    /* the GPU is still usable afterwards (the error was not a sticky one) */
    rill_dtd_class_t *axpy[3], *scal[3];
    make_classes(ctx, axpy, scal);
    long bad = random_dag(ctx, 8, 100, axpy + 1, 1, scal + 1, 1, 1);
    CHECK_MSG(bad == 0, "%ld elements wrong after the failed task", bad);
    free_classes(axpy, scal);
    CHECK_OK(rill_dtd_class_destroy(&cls));
    CHECK_OK(rill_data_destroy(&dy));
    free(y);
    return 0;
}

/* Tiles advised to GPU 0 or 1 alternately (through a matrix); each task reads a tile of the
 * other GPU: copies go GPU to GPU. */
static int run_multigpu(rill_context_t *ctx)
{
    const int n = 8, nb = 256; /* an 8 x 1 tile column of 256 x 256 tiles */
    tile_len = nb * nb;
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, n * nb, nb, nb, nb, 1, 1, &A));
    CHECK_OK(rill_matrix_advise_gpus(A)); /* tile (i, 0) on GPU i % 2 */
    double *ref = malloc(sizeof(double) * (size_t)n * (size_t)tile_len);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < tile_len; k++)
            ref[(size_t)i * tile_len + k] = rill_matrix_tile_ptr(A, i, 0)[k] = (double)(i + k % 5);
    rill_dtd_class_t *cls;
    CHECK_OK(rill_dtd_class_create(ctx, "mg_axpy", NULL, &cls));
    CHECK_OK(rill_dtd_class_add_body(cls, RILL_BODY_CUDA, axpy_gpu));
    rill_taskpool_t *tp;
    CHECK_OK(rill_dtd_taskpool_create(ctx, &tp));
    for (int r = 0; r < 6; r++)
        for (int i = 0; i < n; i++) {
            int x = (i + 1 + 2 * r) % n; /* i + odd: on the other GPU */
            double a = (r & 1) ? -1.0 : 1.0;
            CHECK_OK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_VALUE, sizeof(a), &a, RILL_DTD_INPUT,
                                          rill_matrix_tile(A, x, 0), RILL_DTD_INOUT,
                                          rill_matrix_tile(A, i, 0), RILL_DTD_ARG_END));
            for (int k = 0; k < tile_len; k++)
                ref[(size_t)i * tile_len + k] += a * ref[(size_t)x * tile_len + k];
        }
    CHECK_OK(rill_taskpool_wait(tp));
    rill_taskpool_destroy(&tp);
    long bad = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < tile_len; k++)
            bad += rill_matrix_tile_ptr(A, i, 0)[k] != ref[(size_t)i * tile_len + k];
    rill_gpu_counters_t c0, c1;
    print_counters(ctx, 0, &c0);
    print_counters(ctx, 1, &c1);
    CHECK_MSG(bad == 0, "%ld elements differ from the sequential run", bad);
    CHECK_MSG(c0.tasks > 0 && c1.tasks > 0, "both GPUs ran tasks");
    CHECK_MSG(c0.d2d + c1.d2d > 0, "tiles moved GPU to GPU");
    /* each tile came in from the host once, and went home once at the end: no round trip */
    CHECK_MSG(c0.h2d + c1.h2d <= (unsigned long long)n, "H2D %llu for %d tiles", c0.h2d + c1.h2d,
              n);
    CHECK_MSG(c0.d2h + c1.d2h <= (unsigned long long)n, "D2H %llu for %d tiles", c0.d2h + c1.d2h,
              n);
    free(ref);
    CHECK_OK(rill_dtd_class_destroy(&cls));
    CHECK_OK(rill_matrix_destroy(&A));
    return 0;
}

/* Records its stream's priority in *slot (args: VALUE int *slot, INOUT y) and scales y. */
static rill_status_t probe_gpu(rill_task_t *task)
{
    int *slot;
    double *y;
    rill_dtd_unpack_args(task, &slot, &y);
    cudaError_t e = cudaStreamGetPriority(rill_cuda_stream(task), slot);
    if (e != cudaSuccess) {
        fprintf(stderr, "cudaStreamGetPriority: %s\n", cudaGetErrorString(e));
        return RILL_ERR_DEVICE;
    }
    const double two = 2.0;
    return cublasDscal(rill_cuda_cublas(task), tile_len, &two, y, 1) == CUBLAS_STATUS_SUCCESS
               ? RILL_SUCCESS
               : RILL_ERR_DEVICE;
}

static int run_urgent(rill_context_t *ctx)
{
    enum { NTILES = 8, NTASKS = 96 };
    tile_len = 1 << 16;
    int lo, hi; /* least and greatest stream priority (greatest = lowest number) */
    CHECK_MSG(cudaDeviceGetStreamPriorityRange(&lo, &hi) == cudaSuccess, "priority range");
    double *tiles = calloc((size_t)NTILES * tile_len, sizeof(double));
    rill_data_t *d[NTILES];
    for (int i = 0; i < NTILES; i++) {
        for (int j = 0; j < tile_len; j++)
            tiles[(size_t)i * tile_len + j] = 1.0;
        CHECK_OK(rill_data_create(ctx, tiles + (size_t)i * tile_len,
                                  sizeof(double) * (size_t)tile_len, &d[i]));
    }
    rill_dtd_class_t *cls;
    CHECK_OK(rill_dtd_class_create(ctx, "probe", NULL, &cls));
    CHECK_OK(rill_dtd_class_add_body(cls, RILL_BODY_CUDA, probe_gpu));
    static int prio[NTASKS];
    rill_taskpool_t *tp;
    CHECK_OK(rill_dtd_taskpool_create(ctx, &tp));
    for (int t = 0; t < NTASKS; t++) {
        int *slot = &prio[t];
        prio[t] = 12345;
        /* the hint between the arguments: not one of them */
        CHECK_OK(rill_dtd_insert_task(tp, cls, t % 5, RILL_DTD_VALUE, sizeof(slot), &slot,
                                      RILL_DTD_URGENT, t % 3 == 0, RILL_DTD_INOUT, d[t % NTILES],
                                      RILL_DTD_ARG_END));
    }
    CHECK_OK(rill_taskpool_wait(tp));
    rill_taskpool_destroy(&tp);
    int bad = 0;
    for (int t = 0; t < NTASKS; t++) {
        int want = t % 3 == 0 ? hi : lo;
        if (prio[t] != want && bad++ < 5)
            fprintf(stderr, "task %d%s ran on a stream of priority %d, expected %d\n", t,
                    t % 3 == 0 ? " (urgent)" : "", prio[t], want);
    }
    /* every tile was scaled once per task on it */
    for (int i = 0; i < NTILES; i++) {
        double want = (double)(1 << (NTASKS / NTILES));
        for (int j = 0; j < tile_len; j += 997)
            if (tiles[(size_t)i * tile_len + j] != want && bad++ < 5)
                fprintf(stderr, "tile %d element %d: %g, expected %g\n", i, j,
                        tiles[(size_t)i * tile_len + j], want);
    }
    for (int i = 0; i < NTILES; i++)
        CHECK_OK(rill_data_destroy(&d[i]));
    CHECK_OK(rill_dtd_class_destroy(&cls));
    free(tiles);
    printf("urgent: %d tasks, priorities %d (urgent) / %d expected, %d mismatches\n", NTASKS, hi,
           lo, bad);
    return bad != 0;
}

static int run_idle(rill_context_t *ctx)
{
    (void)ctx;
    /* let start-up settle, then measure a quiet second; the threads that used CPU are
     * named (workers, comm thread, GPU managers, CUDA's own) */
    usleep(300000);
    static test_threads_t t0, t1;
    test_threads_read(&t0);
    usleep(1000000);
    test_threads_read(&t1);
    double used = test_threads_report(stdout, &t0, &t1, 0.002, "", NULL);
    printf("CPU time used in 1 s of idleness: %.3f s (%d threads)\n", used, t1.n);
    CHECK_MSG(used < 0.1,
              "an idle process (workers, comm thread, GPU managers) used %.3f s of "
              "CPU in 1 s: something spins",
              used);
    return 0;
}

static char trace_prefix[64];

static int run_trace(rill_context_t *ctx)
{
    tile_len = 4096;
    rill_dtd_class_t *axpy[3], *scal[3];
    make_classes(ctx, axpy, scal);
    long bad = random_dag(ctx, 16, 200, axpy, 3, scal, 3, 1);
    CHECK_MSG(bad == 0, "%ld elements differ from the sequential run", bad);
    free_classes(axpy, scal);
    /* the spans' time reference: none ends after the host saw it complete */
    for (int g = 0; g < rill_context_ngpus(ctx); g++) {
        rill_gpu_counters_t c;
        CHECK_OK(rill_context_gpu_counters(ctx, g, &c));
        CHECK_MSG(c.spans_late == 0,
                  "GPU %d: %llu spans end after the host saw them complete (by up to %.1f us): "
                  "the GPU clock's mapping onto the host's is off",
                  g, c.spans_late, c.span_late_max_us);
    }
    return 0;
}

/* After rill_fini: the trace file of a traced run holds the GPU tracks and spans. */
static int check_trace(void)
{
    char path[96];
    snprintf(path, sizeof(path), "%s.0.json", trace_prefix);
    FILE *f = fopen(path, "r");
    CHECK_MSG(f, "no trace file %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *text = malloc((size_t)n + 1);
    CHECK(text && fread(text, 1, (size_t)n, f) == (size_t)n);
    text[n] = '\0';
    fclose(f);
    const char *want[] = { "exec stream 0", "copies: host to GPU", "\"cat\":\"gpu\"",
                           "\"name\":\"to GPU\"", "\"ph\":\"f\"" };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        CHECK_MSG(strstr(text, want[i]), "the trace has no %s", want[i]);
    free(text);
    unlink(path);
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "mixed";
    if (!strcmp(what, "trace")) {
        snprintf(trace_prefix, sizeof(trace_prefix), "/tmp/rill_gpu_trace_%d", (int)getpid());
        CHECK_OK(rill_param_set("profile_trace", trace_prefix));
    }
    if (!strcmp(what, "evict")) {
        /* zone: cuBLAS 32 MiB + 1 MiB workspace for the one stream, ~15 MiB for data */
        CHECK_OK(rill_param_set("device_cuda_memory_size", "48M"));
        CHECK_OK(rill_param_set("device_cuda_exec_streams", "1"));
        CHECK_OK(rill_param_set("device_cuda_workspace", "1M"));
    } else if (!strcmp(what, "toosmall")) {
        CHECK_OK(rill_param_set("device_cuda_memory_size", "48M"));
        CHECK_OK(rill_param_set("device_cuda_exec_streams", "1"));
        CHECK_OK(rill_param_set("device_cuda_workspace", "1M"));
    } else if (!strcmp(what, "multigpu")) {
        CHECK_OK(rill_param_set("device_cuda_max_gpus", "2"));
    } else if (!strcmp(what, "urgent")) {
        /* room for every task on the one urgent stream: none overflows to the others */
        CHECK_OK(rill_param_set("device_cuda_exec_streams", "4"));
        CHECK_OK(rill_param_set("device_cuda_urgent_streams", "1"));
        CHECK_OK(rill_param_set("device_cuda_max_inflight", "64"));
        CHECK_OK(rill_param_set("device_cuda_max_gpus", "1"));
    }
    rill_context_t *ctx;
    CHECK_OK(rill_init(&argc, &argv, &ctx));
    if (skip_without_gpu(ctx, !strcmp(what, "multigpu") ? 2 : 1))
        return 77;
    int rc;
    if (!strcmp(what, "mixed"))
        rc = run_mixed(ctx);
    else if (!strcmp(what, "evict"))
        rc = run_evict(ctx);
    else if (!strcmp(what, "toosmall"))
        rc = run_toosmall(ctx);
    else if (!strcmp(what, "cudaerr"))
        rc = run_cudaerr(ctx);
    else if (!strcmp(what, "multigpu"))
        rc = run_multigpu(ctx);
    else if (!strcmp(what, "idle"))
        rc = run_idle(ctx);
    else if (!strcmp(what, "urgent"))
        rc = run_urgent(ctx);
    else if (!strcmp(what, "trace"))
        rc = run_trace(ctx);
    else {
        fprintf(stderr,
                "unknown scenario '%s': mixed, evict, toosmall, cudaerr, multigpu, idle, urgent, "
                "trace\n",
                what);
        rc = 2;
    }
    CHECK_OK(rill_fini(&ctx));
    if (rc == 0 && !strcmp(what, "trace"))
        rc = check_trace();
    printf("%s: %s\n", what, rc == 0 ? "PASS" : "FAIL");
    return rc;
}
