/* The vendor libraries alone on GPUs, as the reference for Rill's GPU runs: one
 * cusolverDnDpotrf, cusolverDnDgetrf or cublasDgemm call on GPU 0, or one cusolverMgPotrf or
 * cusolverMgGetrf call over GPUs 0..G-1 (1D block-cyclic column tiles). Inputs are cuRAND uniform
 * doubles (potrf: N added to the diagonal, so the lower triangle read as a symmetric matrix is
 * diagonally dominant, hence positive definite), regenerated before every repetition outside the
 * timed region; one warm-up call is not counted. One line per repetition and a summary line:
 *
 *   vendor,<op>,N=<N>,gpus=<G>,tile=<T or 0>,rep=<i>,seconds=<s>,tflops=<x>
 *   vendor,<op>,N=<N>,gpus=<G>,tile=<T or 0>,best_tflops=<x>,median_tflops=<y>
 *
 * Lines starting with '#' are comments (devices, versions, memory). Exit codes: 0 done,
 * 1 a CUDA library call failed (or potrf reported info != 0), 2 a bad argument or N does
 * not fit in the free device memory, 77 no (or too few) CUDA GPUs: skipped.
 * Host code only: no kernels of its own, and no link to Rill. */
#define DISABLE_CUSOLVERMG_DEPRECATED /* cusolverMg is marked deprecated in CUDA 13 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <cusolverDn.h>
#include <cusolverMg.h>

#include "args.h"

#define PROG       "bench_gpu_vendor"
#define MAX_N      1000000
#define MAX_GPUS   64
#define MAX_REPS   1000
#define EXIT_SKIP  77
#define EXIT_USAGE 2
/* left free beyond what the benchmark allocates: library handles, cuBLAS workspace, context */
#define RESERVE_BYTES ((size_t)256 << 20)
#define GIB           (1024.0 * 1024.0 * 1024.0)

/* ---------------------------------------------------------------- error checking */

static const char *cusolver_status_name(cusolverStatus_t s)
{
    switch (s) {
    case CUSOLVER_STATUS_SUCCESS:
        return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED:
        return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED:
        return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE:
        return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH:
        return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_MAPPING_ERROR:
        return "CUSOLVER_STATUS_MAPPING_ERROR";
    case CUSOLVER_STATUS_EXECUTION_FAILED:
        return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR:
        return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
        return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED:
        return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_ZERO_PIVOT:
        return "CUSOLVER_STATUS_ZERO_PIVOT";
    case CUSOLVER_STATUS_INVALID_LICENSE:
        return "CUSOLVER_STATUS_INVALID_LICENSE";
    case CUSOLVER_STATUS_INVALID_WORKSPACE:
        return "CUSOLVER_STATUS_INVALID_WORKSPACE";
    default:
        return "CUSOLVER_STATUS_(other)";
    }
}

static const char *curand_status_name(curandStatus_t s)
{
    switch (s) {
    case CURAND_STATUS_SUCCESS:
        return "CURAND_STATUS_SUCCESS";
    case CURAND_STATUS_VERSION_MISMATCH:
        return "CURAND_STATUS_VERSION_MISMATCH";
    case CURAND_STATUS_NOT_INITIALIZED:
        return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED:
        return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_TYPE_ERROR:
        return "CURAND_STATUS_TYPE_ERROR";
    case CURAND_STATUS_OUT_OF_RANGE:
        return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE:
        return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED:
        return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case CURAND_STATUS_LAUNCH_FAILURE:
        return "CURAND_STATUS_LAUNCH_FAILURE";
    case CURAND_STATUS_PREEXISTING_FAILURE:
        return "CURAND_STATUS_PREEXISTING_FAILURE";
    case CURAND_STATUS_INITIALIZATION_FAILED:
        return "CURAND_STATUS_INITIALIZATION_FAILED";
    case CURAND_STATUS_ARCH_MISMATCH:
        return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INTERNAL_ERROR:
        return "CURAND_STATUS_INTERNAL_ERROR";
    default:
        return "CURAND_STATUS_(other)";
    }
}

static void fail(const char *call, const char *file, int line, const char *name, const char *text,
                 int code)
{
    fflush(stdout);
    fprintf(stderr, PROG ": error: %s failed at %s:%d: %s (%d)%s%s\n", call, file, line, name, code,
            text ? ": " : "", text ? text : "");
    exit(1);
}

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            fail(#call, __FILE__, __LINE__, cudaGetErrorName(e_), cudaGetErrorString(e_),          \
                 (int)e_);                                                                         \
    } while (0)
#define CUBLAS_CHECK(call)                                                                         \
    do {                                                                                           \
        cublasStatus_t s_ = (call);                                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                           \
            fail(#call, __FILE__, __LINE__, cublasGetStatusName(s_), cublasGetStatusString(s_),    \
                 (int)s_);                                                                         \
    } while (0)
#define CUSOLVER_CHECK(call)                                                                       \
    do {                                                                                           \
        cusolverStatus_t s_ = (call);                                                              \
        if (s_ != CUSOLVER_STATUS_SUCCESS)                                                         \
            fail(#call, __FILE__, __LINE__, cusolver_status_name(s_), NULL, (int)s_);              \
    } while (0)
#define CURAND_CHECK(call)                                                                         \
    do {                                                                                           \
        curandStatus_t s_ = (call);                                                                \
        if (s_ != CURAND_STATUS_SUCCESS)                                                           \
            fail(#call, __FILE__, __LINE__, curand_status_name(s_), NULL, (int)s_);                \
    } while (0)

/* ---------------------------------------------------------------- helpers */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Refuses (exit 2) when `bytes` (plus RESERVE_BYTES) are not free on GPU `dev`. */
static void need_memory(int dev, const char *what, size_t bytes)
{
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaSetDevice(dev));
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    printf("# GPU %d: %s needs %.3f GiB (+ %.2f GiB reserve), %.3f GiB free of %.3f GiB\n", dev,
           what, (double)bytes / GIB, (double)RESERVE_BYTES / GIB, (double)free_b / GIB,
           (double)total_b / GIB);
    fflush(stdout);
    if (bytes > free_b || free_b - bytes < RESERVE_BYTES) {
        fprintf(stderr,
                PROG ": error: %s does not fit on GPU %d: needs %.3f GiB + %.2f GiB reserve, "
                     "%.3f GiB free (choose a smaller N)\n",
                what, dev, (double)bytes / GIB, (double)RESERVE_BYTES / GIB, (double)free_b / GIB);
        exit(EXIT_USAGE);
    }
}

/* A device vector of n ones (for adding a constant to a diagonal with cublasDaxpy). */
static double *device_ones(int n)
{
    double *h = malloc((size_t)n * sizeof(double));
    if (!h) {
        fprintf(stderr, PROG ": error: out of host memory for %d doubles\n", n);
        exit(1);
    }
    for (int i = 0; i < n; i++)
        h[i] = 1.0;
    double *d = NULL;
    CUDA_CHECK(cudaMalloc((void **)&d, (size_t)n * sizeof(double)));
    CUDA_CHECK(cudaMemcpy(d, h, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));
    free(h);
    return d;
}

/* `count` uniform doubles in (0, 1] into d, the same ones for the same seed. */
static void fill_uniform(curandGenerator_t gen, unsigned long long seed, double *d, size_t count)
{
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(gen, seed));
    CURAND_CHECK(curandSetGeneratorOffset(gen, 0));
    CURAND_CHECK(curandGenerateUniformDouble(gen, d, count));
}

static void print_rep(const char *op, int n, int gpus, int tile, int rep, double s, double flops,
                      double *tflops_out)
{
    double tf = flops / s / 1e12;
    printf("vendor,%s,N=%d,gpus=%d,tile=%d,rep=%d,seconds=%.6f,tflops=%.3f\n", op, n, gpus, tile,
           rep, s, tf);
    fflush(stdout);
    *tflops_out = tf;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void print_summary(const char *op, int n, int gpus, int tile, double *tf, int reps)
{
    qsort(tf, (size_t)reps, sizeof(double), cmp_double);
    double median = reps % 2 ? tf[reps / 2] : 0.5 * (tf[reps / 2 - 1] + tf[reps / 2]);
    printf("vendor,%s,N=%d,gpus=%d,tile=%d,best_tflops=%.3f,median_tflops=%.3f\n", op, n, gpus,
           tile, tf[reps - 1], median);
    fflush(stdout);
}

static void describe_gpus(int ngpus)
{
    int rt = 0, drv = 0, solver = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    CUDA_CHECK(cudaDriverGetVersion(&drv));
    CUSOLVER_CHECK(cusolverGetVersion(&solver));
    printf("# " PROG ": CUDA runtime %d.%d, driver %d.%d, cuSOLVER %d\n", rt / 1000,
           (rt % 1000) / 10, drv / 1000, (drv % 1000) / 10, solver);
    for (int g = 0; g < ngpus; g++) {
        struct cudaDeviceProp p;
        CUDA_CHECK(cudaGetDeviceProperties(&p, g));
        printf("# GPU %d: %s, cc %d.%d, %.1f GiB\n", g, p.name, p.major, p.minor,
               (double)p.totalGlobalMem / GIB);
    }
    fflush(stdout);
}

/* ---------------------------------------------------------------- potrf, one GPU */

/* A := uniform(0,1) N x N (lda = n), then A(i,i) += n: symmetric positive definite read as
 * its lower triangle (strictly diagonally dominant with a positive diagonal). */
static void fill_spd(curandGenerator_t gen, cublasHandle_t bh, double *A, int n, const double *ones)
{
    const double alpha = (double)n;
    fill_uniform(gen, 12345, A, (size_t)n * (size_t)n);
    CUBLAS_CHECK(cublasDaxpy(bh, n, &alpha, ones, 1, A, n + 1));
}

/* One cusolverDn factorization on GPU 0: potrf (lower, of an SPD matrix) or, with lu,
 * getrf (partial pivoting, of a uniform random matrix). */
static void run_factor(int n, int reps, int lu)
{
    const char *op = lu ? "getrf" : "potrf";
    const size_t mat_bytes = (size_t)n * (size_t)n * sizeof(double);
    const double flops = (double)n * (double)n * (double)n * (lu ? 2.0 / 3.0 : 1.0 / 3.0);
    cudaStream_t st;
    cusolverDnHandle_t sh;
    cublasHandle_t bh;
    curandGenerator_t gen;
    cudaEvent_t e0, e1;

    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaStreamCreate(&st));
    CUSOLVER_CHECK(cusolverDnCreate(&sh));
    CUSOLVER_CHECK(cusolverDnSetStream(sh, st));
    CUBLAS_CHECK(cublasCreate(&bh));
    CUBLAS_CHECK(cublasSetStream(bh, st));
    CURAND_CHECK(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    CURAND_CHECK(curandSetStream(gen, st));
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));

    need_memory(0, lu ? "getrf matrix (N*N doubles) and pivots" : "potrf matrix (N*N doubles)",
                mat_bytes + (size_t)n * sizeof(double));
    double *A = NULL, *work = NULL;
    int *dinfo = NULL, *ipiv = NULL;
    CUDA_CHECK(cudaMalloc((void **)&A, mat_bytes));
    CUDA_CHECK(cudaMalloc((void **)&dinfo, sizeof(int)));
    if (lu)
        CUDA_CHECK(cudaMalloc((void **)&ipiv, (size_t)n * sizeof(int)));
    double *ones = device_ones(n);
    int lwork = 0;
    if (lu)
        CUSOLVER_CHECK(cusolverDnDgetrf_bufferSize(sh, n, n, A, n, &lwork));
    else
        CUSOLVER_CHECK(cusolverDnDpotrf_bufferSize(sh, CUBLAS_FILL_MODE_LOWER, n, A, n, &lwork));
    need_memory(0, lu ? "getrf workspace" : "potrf workspace", (size_t)lwork * sizeof(double));
    CUDA_CHECK(cudaMalloc((void **)&work, (size_t)(lwork > 0 ? lwork : 1) * sizeof(double)));

    double *tf = calloc((size_t)reps, sizeof(double));
    if (!tf)
        exit(1);
    for (int r = -1; r < reps; r++) { /* r == -1: the warm-up, not counted */
        if (lu)
            fill_uniform(gen, 12345, A, (size_t)n * (size_t)n);
        else
            fill_spd(gen, bh, A, n, ones);
        CUDA_CHECK(cudaStreamSynchronize(st));
        CUDA_CHECK(cudaEventRecord(e0, st));
        if (lu)
            CUSOLVER_CHECK(cusolverDnDgetrf(sh, n, n, A, n, work, ipiv, dinfo));
        else
            CUSOLVER_CHECK(
                cusolverDnDpotrf(sh, CUBLAS_FILL_MODE_LOWER, n, A, n, work, lwork, dinfo));
        CUDA_CHECK(cudaEventRecord(e1, st));
        CUDA_CHECK(cudaEventSynchronize(e1));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        int info = 0;
        CUDA_CHECK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost));
        if (info != 0) {
            fflush(stdout);
            fprintf(stderr, PROG ": error: cusolverDnD%s returned devInfo = %d (%s) in %s %d\n", op,
                    info,
                    info < 0 ? "bad parameter"
                    : lu     ? "a zero pivot"
                             : "leading minor not positive definite",
                    r < 0 ? "the warm-up" : "repetition", r < 0 ? 0 : r + 1);
            exit(1);
        }
        if (r >= 0)
            print_rep(op, n, 1, 0, r + 1, 1e-3 * (double)ms, flops, &tf[r]);
    }
    print_summary(op, n, 1, 0, tf, reps);
    free(tf);

    CUDA_CHECK(cudaFree(work));
    if (ipiv)
        CUDA_CHECK(cudaFree(ipiv));
    CUDA_CHECK(cudaFree(ones));
    CUDA_CHECK(cudaFree(dinfo));
    CUDA_CHECK(cudaFree(A));
    CUDA_CHECK(cudaEventDestroy(e1));
    CUDA_CHECK(cudaEventDestroy(e0));
    CURAND_CHECK(curandDestroyGenerator(gen));
    CUBLAS_CHECK(cublasDestroy(bh));
    CUSOLVER_CHECK(cusolverDnDestroy(sh));
    CUDA_CHECK(cudaStreamDestroy(st));
}

/* ---------------------------------------------------------------- gemm, one GPU */

static void run_gemm(int n, int reps)
{
    const size_t nn = (size_t)n * (size_t)n;
    const double flops = 2.0 * (double)n * (double)n * (double)n;
    const double one = 1.0;
    cudaStream_t st;
    cublasHandle_t bh;
    curandGenerator_t gen;
    cudaEvent_t e0, e1;

    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaStreamCreate(&st));
    CUBLAS_CHECK(cublasCreate(&bh));
    CUBLAS_CHECK(cublasSetStream(bh, st));
    CURAND_CHECK(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    CURAND_CHECK(curandSetStream(gen, st));
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));

    need_memory(0, "gemm A, B, C (3*N*N doubles)", 3 * nn * sizeof(double));
    double *A = NULL, *B = NULL, *C = NULL;
    CUDA_CHECK(cudaMalloc((void **)&A, nn * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&B, nn * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&C, nn * sizeof(double)));
    fill_uniform(gen, 1, A, nn);
    fill_uniform(gen, 2, B, nn);

    double *tf = calloc((size_t)reps, sizeof(double));
    if (!tf)
        exit(1);
    for (int r = -1; r < reps; r++) { /* r == -1: the warm-up, not counted */
        fill_uniform(gen, 3, C, nn);  /* C is overwritten by each call: the same C each time */
        CUDA_CHECK(cudaStreamSynchronize(st));
        CUDA_CHECK(cudaEventRecord(e0, st));
        CUBLAS_CHECK(
            cublasDgemm(bh, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &one, C, n));
        CUDA_CHECK(cudaEventRecord(e1, st));
        CUDA_CHECK(cudaEventSynchronize(e1));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 0)
            print_rep("gemm", n, 1, 0, r + 1, 1e-3 * (double)ms, flops, &tf[r]);
    }
    print_summary("gemm", n, 1, 0, tf, reps);
    free(tf);

    CUDA_CHECK(cudaFree(C));
    CUDA_CHECK(cudaFree(B));
    CUDA_CHECK(cudaFree(A));
    CUDA_CHECK(cudaEventDestroy(e1));
    CUDA_CHECK(cudaEventDestroy(e0));
    CURAND_CHECK(curandDestroyGenerator(gen));
    CUBLAS_CHECK(cublasDestroy(bh));
    CUDA_CHECK(cudaStreamDestroy(st));
}

/* ---------------------------------------------------------------- mgpotrf, G GPUs */

static void sync_all(int ngpus)
{
    for (int g = 0; g < ngpus; g++) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
}

static void enable_peer_access(int ngpus)
{
    for (int i = 0; i < ngpus; i++) {
        CUDA_CHECK(cudaSetDevice(i));
        for (int j = 0; j < ngpus; j++) {
            if (j == i)
                continue;
            int can = 0;
            CUDA_CHECK(cudaDeviceCanAccessPeer(&can, i, j));
            if (!can) {
                printf("# GPU %d cannot access GPU %d as a peer\n", i, j);
                continue;
            }
            cudaError_t e = cudaDeviceEnablePeerAccess(j, 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled)
                (void)cudaGetLastError(); /* clear it: not an error here */
            else
                CUDA_CHECK(e);
        }
    }
    fflush(stdout);
}

/* 1D block-cyclic columns, as cusolverMg lays them out: column tile b (columns b*T ..
 * b*T+T-1) lives on GPU b % G as its local tile b / G; the local tiles of a GPU are stored
 * one after the other, each N x T with lda = N. Each GPU's part is regenerated with cuRAND
 * (seed per GPU, so the same matrix each time) and N is added to the diagonal elements of
 * its columns (one cublasDaxpy per local tile, stride lda + 1). */
static void fill_spd_mg(int n, int ngpus, int tile, int max_local_tiles, double **A,
                        curandGenerator_t *gen, cublasHandle_t *bh, double **ones, int spd)
{
    const double alpha = (double)n;
    const int ntiles = (n + tile - 1) / tile;
    for (int g = 0; g < ngpus; g++) {
        CUDA_CHECK(cudaSetDevice(g));
        fill_uniform(gen[g], 1000 + (unsigned long long)g, A[g],
                     (size_t)n * (size_t)tile * (size_t)max_local_tiles);
        for (int k = 0; spd; k++) {
            int b = g + k * ngpus; /* global column tile */
            if (b >= ntiles)
                break;
            int cols = n - b * tile < tile ? n - b * tile : tile;
            /* element (b*T, b*T) of the global matrix: local column k*T, row b*T */
            double *diag = A[g] + (size_t)k * (size_t)tile * (size_t)n + (size_t)b * (size_t)tile;
            CUBLAS_CHECK(cublasDaxpy(bh[g], cols, &alpha, ones[g], 1, diag, n + 1));
        }
    }
    sync_all(ngpus);
}

/* cusolverMgPotrf (lower) or, getrf, cusolverMgGetrf (partial pivoting, on the same
 * matrix without the diagonal bump: uniform random) over GPUs 0 .. ngpus - 1. */
static void run_mgfactor(int n, int ngpus, int tile, int reps, int getrf)
{
    const char *op = getrf ? "mggetrf" : "mgpotrf";
    const double flops = (double)n * (double)n * (double)n / (getrf ? 1.5 : 3.0);
    const int ntiles = (n + tile - 1) / tile;
    const int max_local_tiles = (ntiles + ngpus - 1) / ngpus;
    const size_t local_elems = (size_t)n * (size_t)tile * (size_t)max_local_tiles;
    const int IA = 1, JA = 1; /* 1-based: the whole matrix */

    int *devs = calloc((size_t)ngpus, sizeof(int));
    double **A = calloc((size_t)ngpus, sizeof(double *));
    double **work = calloc((size_t)ngpus, sizeof(double *));
    double **ones = calloc((size_t)ngpus, sizeof(double *));
    void **Av = calloc((size_t)ngpus, sizeof(void *));
    void **workv = calloc((size_t)ngpus, sizeof(void *));
    int **ipiv = calloc((size_t)ngpus, sizeof(int *)); /* getrf: each GPU's columns' pivots */
    cublasHandle_t *bh = calloc((size_t)ngpus, sizeof(cublasHandle_t));
    curandGenerator_t *gen = calloc((size_t)ngpus, sizeof(curandGenerator_t));
    double *tf = calloc((size_t)reps, sizeof(double));
    if (!devs || !A || !work || !ones || !Av || !workv || !ipiv || !bh || !gen || !tf) {
        fprintf(stderr, PROG ": error: out of host memory\n");
        exit(1);
    }
    for (int g = 0; g < ngpus; g++)
        devs[g] = g;

    cusolverMgHandle_t mh;
    cudaLibMgGrid_t grid;
    cudaLibMgMatrixDesc_t desc;
    CUSOLVER_CHECK(cusolverMgCreate(&mh));
    CUSOLVER_CHECK(cusolverMgDeviceSelect(mh, ngpus, devs));
    enable_peer_access(ngpus);
    CUSOLVER_CHECK(
        cusolverMgCreateDeviceGrid(&grid, 1, ngpus, devs, CUDALIBMG_GRID_MAPPING_COL_MAJOR));
    CUSOLVER_CHECK(cusolverMgCreateMatrixDesc(&desc, n, n, /* global rows, columns */
                                              n, tile,     /* tile rows (all), tile columns */
                                              CUDA_R_64F, grid));

    for (int g = 0; g < ngpus; g++) {
        CUDA_CHECK(cudaSetDevice(g));
        CUBLAS_CHECK(cublasCreate(&bh[g]));
        CURAND_CHECK(curandCreateGenerator(&gen[g], CURAND_RNG_PSEUDO_PHILOX4_32_10));
    }
    char what[128];
    snprintf(what, sizeof(what), "%s local columns (%d tiles of N x %d)", op, max_local_tiles,
             tile);
    for (int g = 0; g < ngpus; g++)
        need_memory(g, what, local_elems * sizeof(double) + (size_t)tile * sizeof(double));
    for (int g = 0; g < ngpus; g++) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaMalloc((void **)&A[g], local_elems * sizeof(double)));
        ones[g] = device_ones(tile);
        Av[g] = A[g];
        if (getrf) /* (IPIV has A's column tiling: T entries per local column tile) */
            CUDA_CHECK(cudaMalloc((void **)&ipiv[g],
                                  (size_t)tile * (size_t)max_local_tiles * sizeof(int)));
    }

    int64_t lwork = 0; /* elements per GPU */
    CUDA_CHECK(cudaSetDevice(0));
    if (getrf)
        CUSOLVER_CHECK(
            cusolverMgGetrf_bufferSize(mh, n, n, Av, IA, JA, desc, ipiv, CUDA_R_64F, &lwork));
    else
        CUSOLVER_CHECK(cusolverMgPotrf_bufferSize(mh, CUBLAS_FILL_MODE_LOWER, n, Av, IA, JA, desc,
                                                  CUDA_R_64F, &lwork));
    snprintf(what, sizeof(what), "%s workspace", op);
    for (int g = 0; g < ngpus; g++)
        need_memory(g, what, (size_t)lwork * sizeof(double));
    for (int g = 0; g < ngpus; g++) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaMalloc((void **)&work[g], (size_t)(lwork > 0 ? lwork : 1) * sizeof(double)));
        workv[g] = work[g];
    }
    sync_all(ngpus);

    for (int r = -1; r < reps; r++) { /* r == -1: the warm-up, not counted */
        /* (ends synchronized) */
        fill_spd_mg(n, ngpus, tile, max_local_tiles, A, gen, bh, ones, !getrf);
        CUDA_CHECK(cudaSetDevice(0));
        int info = 0;
        double t0 = now_s();
        if (getrf) {
            cusolverStatus_t st =
                cusolverMgGetrf(mh, n, n, Av, IA, JA, desc, ipiv, CUDA_R_64F, workv, lwork, &info);
            if (st == CUSOLVER_STATUS_INVALID_VALUE && tile > 512) {
                fflush(stdout); /* (cuSOLVER 13 on an H100 refused 1024, ran 256 and 512) */
                fprintf(stderr,
                        PROG ": error: cusolverMgGetrf refused the tile of %d columns "
                             "(CUSOLVER_STATUS_INVALID_VALUE; its buffer size query took it): give "
                             "T <= 512\n",
                        tile);
                exit(1);
            }
            CUSOLVER_CHECK(st);
        } else
            CUSOLVER_CHECK(cusolverMgPotrf(mh, CUBLAS_FILL_MODE_LOWER, n, Av, IA, JA, desc,
                                           CUDA_R_64F, workv, lwork, &info));
        sync_all(ngpus);
        double dt = now_s() - t0;
        if (info < 0 || (info > 0 && !getrf)) { /* (a zero pivot of getrf: a complete LU) */
            fflush(stdout);
            fprintf(stderr, PROG ": error: %s returned info = %d (%s) in %s %d\n", op, info,
                    info > 0 ? "leading minor not positive definite" : "bad parameter",
                    r < 0 ? "the warm-up" : "repetition", r < 0 ? 0 : r + 1);
            exit(1);
        }
        if (r >= 0)
            print_rep(op, n, ngpus, tile, r + 1, dt, flops, &tf[r]);
    }
    print_summary(op, n, ngpus, tile, tf, reps);

    for (int g = 0; g < ngpus; g++) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaFree(work[g]));
        CUDA_CHECK(cudaFree(ones[g]));
        CUDA_CHECK(cudaFree(A[g]));
        if (ipiv[g])
            CUDA_CHECK(cudaFree(ipiv[g]));
        CURAND_CHECK(curandDestroyGenerator(gen[g]));
        CUBLAS_CHECK(cublasDestroy(bh[g]));
    }
    CUDA_CHECK(cudaSetDevice(0));
    CUSOLVER_CHECK(cusolverMgDestroyMatrixDesc(desc));
    CUSOLVER_CHECK(cusolverMgDestroyGrid(grid));
    CUSOLVER_CHECK(cusolverMgDestroy(mh));
    free(tf);
    free(gen);
    free(bh);
    free(workv);
    free(ipiv);
    free(Av);
    free(ones);
    free(work);
    free(A);
    free(devs);
}

/* ---------------------------------------------------------------- tile kernels, one GPU */

enum {
    TK_POTRF,
    TK_TRSM,
    TK_SYRK,
    TK_GEMM,
    TK_TRTRI,
    TK_INV_TRSM,
    TK_TRMM,
    TK_TRSM_GEMM,
    TK_COUNT
};
static const char *const tk_name[TK_COUNT] = {
    [TK_POTRF] = "potrf", [TK_TRSM] = "trsm",
    [TK_SYRK] = "syrk",   [TK_GEMM] = "gemm",
    [TK_TRTRI] = "trtri", [TK_INV_TRSM] = "inverse_by_trsm",
    [TK_TRMM] = "trmm",   [TK_TRSM_GEMM] = "trsm_by_gemm"
};

/* The flops of one tile kernel of a tiled lower Cholesky on nb x nb tiles. */
static double tk_flops(int k, int nb)
{
    double n3 = (double)nb * nb * nb;
    return k == TK_POTRF || k == TK_TRTRI || k == TK_INV_TRSM ? n3 / 3.0
           : k == TK_GEMM                                     ? 2.0 * n3
           : k == TK_SYRK                                     ? n3 + (double)nb * nb
                          : n3; /* trsm, trmm, trsm_by_gemm: a trsm's flops */
}

/* One tile kernel as Rill's dpotrf calls it: potrf (lower), trsm (right, lower, transposed),
 * syrk (lower, C -= A A^T), gemm (C -= A B^T); and what could stand for the trsm: trtri
 * (L^-1 of a factored tile, copied into C first), trmm (C = C L^-T in place, L^-1 given) and
 * trsm_by_gemm (C copied into A, then C = A L^-T by a gemm). L is a factored SPD tile, Li its
 * inverse (zeros above the diagonal), S an SPD tile (potrf's input, copied into C first:
 * potrf overwrites its tile). */
static void tk_call(int k, int nb, cublasHandle_t bh, cusolverDnHandle_t sh, cudaStream_t st,
                    double *A, const double *B, double *C, const double *L, const double *Li,
                    const double *I, const double *S, double *work, size_t work_bytes, void *hwork,
                    size_t hwork_bytes, int *dinfo)
{
    const double one = 1.0, mone = -1.0, zero = 0.0;
    const size_t bytes = (size_t)nb * nb * sizeof(double);
    switch (k) {
    case TK_TRTRI:
        CUDA_CHECK(cudaMemcpyAsync(C, L, bytes, cudaMemcpyDeviceToDevice, st));
        CUSOLVER_CHECK(cusolverDnXtrtri(sh, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, nb,
                                        CUDA_R_64F, C, nb, work, work_bytes, hwork, hwork_bytes,
                                        dinfo));
        break;
    case TK_INV_TRSM: /* C = I, then L C = I */
        CUDA_CHECK(cudaMemcpyAsync(C, I, bytes, cudaMemcpyDeviceToDevice, st));
        CUBLAS_CHECK(cublasDtrsm(bh, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                 CUBLAS_DIAG_NON_UNIT, nb, nb, &one, L, nb, C, nb));
        break;
    case TK_TRMM:
        CUBLAS_CHECK(cublasDtrmm(bh, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                                 CUBLAS_DIAG_NON_UNIT, nb, nb, &one, Li, nb, C, nb, C, nb));
        break;
    case TK_TRSM_GEMM:
        CUDA_CHECK(cudaMemcpyAsync(A, C, bytes, cudaMemcpyDeviceToDevice, st));
        CUBLAS_CHECK(cublasDgemm(bh, CUBLAS_OP_N, CUBLAS_OP_T, nb, nb, nb, &one, A, nb, Li, nb,
                                 &zero, C, nb));
        break;
    case TK_POTRF:
        CUDA_CHECK(
            cudaMemcpyAsync(C, S, (size_t)nb * nb * sizeof(double), cudaMemcpyDeviceToDevice, st));
        CUSOLVER_CHECK(cusolverDnDpotrf(sh, CUBLAS_FILL_MODE_LOWER, nb, C, nb, work,
                                        (int)(work_bytes / sizeof(double)), dinfo));
        break;
    case TK_TRSM:
        CUBLAS_CHECK(cublasDtrsm(bh, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                                 CUBLAS_DIAG_NON_UNIT, nb, nb, &one, L, nb, C, nb));
        break;
    case TK_SYRK:
        CUBLAS_CHECK(cublasDsyrk(bh, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, nb, nb, &mone, A, nb,
                                 &one, C, nb));
        break;
    default:
        CUBLAS_CHECK(cublasDgemm(bh, CUBLAS_OP_N, CUBLAS_OP_T, nb, nb, nb, &mone, A, nb, B, nb,
                                 &one, C, nb));
    }
}

/* Each tile kernel of a tiled Cholesky at tile size nb, `calls` times back to back on each of
 * `streams` streams (one cuBLAS and cuSOLVER handle and one set of tiles per stream), timed
 * from a fork event to the join of all streams; the best of `reps`. Says how fast the tiles
 * Rill's dpotrf runs are next to one large call (potrf's tile copy is inside its time). */
static void run_tiles(int nb, int streams, int reps)
{
    const int calls = 16;
    const size_t tile = (size_t)nb * nb;
    CUDA_CHECK(cudaSetDevice(0));
    need_memory(0, "tiles (5 per stream + 4)", (5 * (size_t)streams + 4) * tile * sizeof(double));
    cudaStream_t *st = calloc((size_t)streams, sizeof(*st));
    cublasHandle_t *bh = calloc((size_t)streams, sizeof(*bh));
    cusolverDnHandle_t *sh = calloc((size_t)streams, sizeof(*sh));
    double **buf = calloc((size_t)streams, sizeof(*buf)),
           **work = calloc((size_t)streams, sizeof(*work));
    int *dinfo = NULL, lwork = 0;
    double *L = NULL, *S = NULL, *Li = NULL, *I = NULL;
    if (!st || !bh || !sh || !buf || !work)
        exit(1);
    CUDA_CHECK(cudaMalloc((void **)&L, tile * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&S, tile * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&Li, tile * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&I, tile * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&dinfo, (size_t)streams * sizeof(int)));
    curandGenerator_t gen;
    CURAND_CHECK(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    double *ones = device_ones(nb);
    for (int s = 0; s < streams; s++) {
        CUDA_CHECK(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
        CUBLAS_CHECK(cublasCreate(&bh[s]));
        CUBLAS_CHECK(cublasSetStream(bh[s], st[s]));
        CUSOLVER_CHECK(cusolverDnCreate(&sh[s]));
        CUSOLVER_CHECK(cusolverDnSetStream(sh[s], st[s]));
        CUDA_CHECK(cudaMalloc((void **)&buf[s], 3 * tile * sizeof(double)));
        fill_uniform(gen, 100 + (unsigned long long)s, buf[s], 3 * tile);
    }
    fill_spd(gen, bh[0], S, nb, ones);
    CUSOLVER_CHECK(cusolverDnDpotrf_bufferSize(sh[0], CUBLAS_FILL_MODE_LOWER, nb, S, nb, &lwork));
    size_t tri_dev = 0, tri_host = 0;
    CUSOLVER_CHECK(cusolverDnXtrtri_bufferSize(sh[0], CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT,
                                               nb, CUDA_R_64F, S, nb, &tri_dev, &tri_host));
    size_t work_bytes = (size_t)(lwork > 0 ? lwork : 1) * sizeof(double);
    if (tri_dev > work_bytes)
        work_bytes = tri_dev;
    size_t hwork_bytes = tri_host > 0 ? tri_host : 1;
    void **hwork = calloc((size_t)streams, sizeof(*hwork));
    if (!hwork)
        exit(1);
    for (int s = 0; s < streams; s++) {
        CUDA_CHECK(cudaMalloc((void **)&work[s], work_bytes));
        if (!(hwork[s] = malloc(hwork_bytes)))
            exit(1);
    }
    /* the fills ran on the default stream and st[0], which do not order with each other
     * (non-blocking streams): settle them before the copies */
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(L, S, tile * sizeof(double), cudaMemcpyDeviceToDevice));
    CUSOLVER_CHECK(cusolverDnDpotrf(sh[0], CUBLAS_FILL_MODE_LOWER, nb, L, nb, work[0],
                                    (int)(work_bytes / sizeof(double)), dinfo));
    /* Li = L^-1 by a solve with the identity: exactly lower triangular (trsm_by_gemm reads the
     * whole tile) */
    CUDA_CHECK(cudaMemset(I, 0, tile * sizeof(double)));
    CUBLAS_CHECK(cublasDaxpy(bh[0], nb, &(double){ 1.0 }, ones, 1, I, nb + 1));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(Li, I, tile * sizeof(double), cudaMemcpyDeviceToDevice));
    CUBLAS_CHECK(cublasDtrsm(bh[0], CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                             CUBLAS_DIAG_NON_UNIT, nb, nb, &(double){ 1.0 }, L, nb, Li, nb));
    CUDA_CHECK(cudaDeviceSynchronize());
    cudaEvent_t fork, *join = calloc((size_t)streams, sizeof(*join)), e1;
    CUDA_CHECK(cudaEventCreate(&fork));
    CUDA_CHECK(cudaEventCreate(&e1));
    for (int s = 0; s < streams; s++)
        CUDA_CHECK(cudaEventCreateWithFlags(&join[s], cudaEventDisableTiming));
    for (int k = 0; k < TK_COUNT; k++) {
        double best = 0.0;
        for (int r = -1; r < reps; r++) { /* r == -1: the warm-up */
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(cudaEventRecord(fork, st[0]));
            for (int s = 0; s < streams; s++) {
                CUDA_CHECK(cudaStreamWaitEvent(st[s], fork, 0));
                double *A = buf[s], *B = buf[s] + tile, *C = buf[s] + 2 * tile;
                for (int c = 0; c < calls; c++)
                    tk_call(k, nb, bh[s], sh[s], st[s], A, B, C, L, Li, I, S, work[s], work_bytes,
                            hwork[s], hwork_bytes, dinfo + s);
                CUDA_CHECK(cudaEventRecord(join[s], st[s]));
                CUDA_CHECK(cudaStreamWaitEvent(st[0], join[s], 0));
            }
            CUDA_CHECK(cudaEventRecord(e1, st[0]));
            CUDA_CHECK(cudaEventSynchronize(e1));
            float ms = 0.0f;
            CUDA_CHECK(cudaEventElapsedTime(&ms, fork, e1));
            double tf = tk_flops(k, nb) * calls * streams / (1e-3 * (double)ms) / 1e12;
            if (r >= 0 && tf > best)
                best = tf;
        }
        int info[64] = { 0 };
        CUDA_CHECK(cudaMemcpy(info, dinfo, (size_t)(streams < 64 ? streams : 64) * sizeof(int),
                              cudaMemcpyDeviceToHost));
        for (int s = 0; s < streams && s < 64; s++)
            if (info[s] != 0) {
                fprintf(stderr, PROG ": error: tile potrf returned devInfo = %d\n", info[s]);
                exit(1);
            }
        printf("vendor,tile_%s,N=%d,gpus=1,tile=%d,streams=%d,calls=%d,best_tflops=%.3f,"
               "us_per_call=%.1f\n",
               tk_name[k], nb, nb, streams, calls, best,
               1e6 * tk_flops(k, nb) / (best * 1e12) * streams);
        fflush(stdout);
    }
    for (int s = 0; s < streams; s++) {
        CUDA_CHECK(cudaEventDestroy(join[s]));
        CUDA_CHECK(cudaFree(work[s]));
        free(hwork[s]);
        CUDA_CHECK(cudaFree(buf[s]));
        CUSOLVER_CHECK(cusolverDnDestroy(sh[s]));
        CUBLAS_CHECK(cublasDestroy(bh[s]));
        CUDA_CHECK(cudaStreamDestroy(st[s]));
    }
    CUDA_CHECK(cudaEventDestroy(e1));
    CUDA_CHECK(cudaEventDestroy(fork));
    CUDA_CHECK(cudaFree(ones));
    CUDA_CHECK(cudaFree(dinfo));
    CUDA_CHECK(cudaFree(I));
    CUDA_CHECK(cudaFree(Li));
    CUDA_CHECK(cudaFree(S));
    CUDA_CHECK(cudaFree(L));
    CURAND_CHECK(curandDestroyGenerator(gen));
    free(hwork);
    free(join);
    free(work);
    free(buf);
    free(sh);
    free(bh);
    free(st);
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " PROG " potrf N [reps]         cusolverDnDpotrf (lower) on GPU 0\n"
            "       " PROG " getrf N [reps]         cusolverDnDgetrf (partial pivoting) on GPU 0\n"
            "       " PROG " gemm N [reps]          cublasDgemm C = A*B + C on GPU 0\n"
            "       " PROG " mgpotrf N G T [reps]   cusolverMgPotrf (lower) on GPUs 0..G-1,\n"
            "                                         column tile T (1D block-cyclic)\n"
            "       " PROG " mggetrf N G T [reps]   cusolverMgGetrf (partial pivoting), the same\n"
            "       " PROG " tiles NB S [reps]      a tiled Cholesky's tile kernels (potrf, trsm,\n"
            "                                         syrk, gemm) on NB tiles, 16 calls on each\n"
            "                                         of S streams at once: best TFLOP/s\n"
            "  N 1..%d, G 1..%d (and at most the GPUs present), T 1..N, reps 1..%d "
            "(default 3)\n"
            "  output: vendor,<op>,N=,gpus=,tile=,rep=,seconds=,tflops= per repetition, then\n"
            "          vendor,<op>,N=,gpus=,tile=,best_tflops=,median_tflops=\n"
            "  exit: 0 done, 1 a CUDA library error, 2 a bad argument or N does not fit,\n"
            "        77 no (or too few) GPUs: skipped\n",
            MAX_N, MAX_GPUS, MAX_REPS);
}

/* argv[i] as an integer in [min, max] (the whole string), else exit 2 naming it. */
static int arg_int(int argc, char **argv, int i, const char *name, long min, long max)
{
    const char *s = i < argc ? argv[i] : NULL;
    long v;
    if (!rill_args_long(s, min, max, &v))
        return (int)v;
    fprintf(stderr, PROG ": error: %s must be an integer in [%ld, %ld], got %s%s%s (see --help)\n",
            name, min, max, s ? "'" : "nothing", s ? s : "", s ? "'" : "");
    exit(EXIT_USAGE);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
    if (argc < 2) {
        fprintf(stderr,
                PROG ": error: no operation given (potrf, getrf, gemm, mgpotrf, mggetrf or tiles; "
                     "see --help)\n");
        return EXIT_USAGE;
    }
    const char *op = argv[1];
    int mg = !strcmp(op, "mgpotrf") || !strcmp(op, "mggetrf"), tiles = !strcmp(op, "tiles");
    if (!mg && !tiles && strcmp(op, "potrf") && strcmp(op, "getrf") && strcmp(op, "gemm")) {
        fprintf(stderr,
                PROG ": error: unknown operation '%s' (potrf, getrf, gemm, mgpotrf, mggetrf or "
                     "tiles; see --help)\n",
                op);
        return EXIT_USAGE;
    }
    int n = arg_int(argc, argv, 2, "N", 1, MAX_N);
    int ngpus = 1, tile = 0, next = 3;
    if (mg) {
        ngpus = arg_int(argc, argv, 3, "G", 1, MAX_GPUS);
        tile = arg_int(argc, argv, 4, "T", 1, n);
        next = 5;
    } else if (tiles) {
        tile = arg_int(argc, argv, 3, "S", 1, 64);
        next = 4;
    }
    int reps = next < argc ? arg_int(argc, argv, next, "reps", 1, MAX_REPS) : 3;
    if (next + 1 < argc) {
        fprintf(stderr, PROG ": error: unexpected argument '%s' (see --help)\n", argv[next + 1]);
        return EXIT_USAGE;
    }

    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count < 1) {
        fprintf(stderr, PROG ": no CUDA GPU available (cudaGetDeviceCount: %s%s%s); skipped\n",
                e != cudaSuccess ? cudaGetErrorName(e) : "0 devices", e != cudaSuccess ? ": " : "",
                e != cudaSuccess ? cudaGetErrorString(e) : "");
        return EXIT_SKIP;
    }
    if (ngpus > count) {
        fprintf(stderr, PROG ": %s with G=%d needs %d GPUs, %d present; skipped\n", op, ngpus,
                ngpus, count);
        return EXIT_SKIP;
    }
    describe_gpus(ngpus);

    if (mg)
        run_mgfactor(n, ngpus, tile, reps, !strcmp(op, "mggetrf"));
    else if (tiles)
        run_tiles(n, tile, reps);
    else if (!strcmp(op, "potrf") || !strcmp(op, "getrf"))
        run_factor(n, reps, !strcmp(op, "getrf"));
    else
        run_gemm(n, reps);
    return 0;
}
