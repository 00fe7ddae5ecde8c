/* The tile kernels' CUDA bodies (cuSOLVER potrf, cuBLAS trsm/syrk/gemm/geam) and the flop
 * estimates the device choice weighs. Compiled when Rill was built with CUDA; the bodies
 * only enqueue on the task's stream (rill/cuda.h) and return. */
#include <stdio.h>

#include "dla_internal.h"

static double flops_potrf(rill_task_t *task)
{
    dla_kargs_t a = *(const dla_kargs_t *)rill_dtd_arg(task, 0); /* the first argument */
    return (double)a.n * a.n * a.n / 3.0;
}

static double flops_trsm(rill_task_t *task)
{
    dla_kargs_t a = *(const dla_kargs_t *)rill_dtd_arg(task, 0); /* the first argument */
    double tri = a.side == RILL_DLA_LEFT ? a.m : a.n;
    return (double)a.m * a.n * tri;
}

static double flops_syrk(rill_task_t *task)
{
    dla_kargs_t a = *(const dla_kargs_t *)rill_dtd_arg(task, 0); /* the first argument */
    return (double)a.n * (a.n + 1) * a.k;
}

static double flops_gemm(rill_task_t *task)
{
    dla_kargs_t a = *(const dla_kargs_t *)rill_dtd_arg(task, 0); /* the first argument */
    return 2.0 * a.m * a.n * a.k;
}

/* dgetrf's panel: mp x kb, LU with partial pivoting (the row interchanges are not counted). */
static double flops_getrf_panel(rill_task_t *task)
{
    const dla_lu_args_t *a = rill_dtd_arg(task, 0);
    double mp = (double)a->m - (double)a->k * a->mb, kb = a->rows_k;
    return mp * kb * kb - kb * kb * kb / 3.0;
}

static double flops_scale(rill_task_t *task)
{
    dla_kargs_t a = *(const dla_kargs_t *)rill_dtd_arg(task, 0); /* the first argument */
    return (double)a.m * a.n;
}

#if RILL_HAVE_CUDA
#include "rill/cuda.h"

#include "dla_gen_cuda.h"

static cublasOperation_t cu_trans(int t)
{
    return t == RILL_DLA_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
}

static cublasFillMode_t cu_uplo(int u)
{
    return u == RILL_DLA_LOWER ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
}

/* A library call that fails at enqueue time: say which, and fail the task. */
#define CU_LIB(call, ok)                                                                           \
    do {                                                                                           \
        int e_ = (int)(call);                                                                      \
        if (e_ != (int)(ok)) {                                                                     \
            fprintf(stderr, "rill dla: %s failed on GPU %d with status %d\n", #call,               \
                    rill_cuda_device(task), e_);                                                   \
            return RILL_ERR_DEVICE;                                                                \
        }                                                                                          \
    } while (0)

/* A CUDA runtime call or kernel launch (its cudaError_t) that fails: say which, fail the
 * task. */
#define CU_RT(call, what)                                                                          \
    do {                                                                                           \
        cudaError_t e_ = (cudaError_t)(call);                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "rill dla: %s failed on GPU %d: %s\n", what, rill_cuda_device(task),   \
                    cudaGetErrorString(e_));                                                       \
            return RILL_ERR_DEVICE;                                                                \
        }                                                                                          \
    } while (0)

/* The leading minor of a failed factorization comes back through the status word (cuSOLVER's
 * devInfo), and potrf_status records it as the CPU body does. */
static rill_status_t potrf_status(rill_task_t *task, int info)
{
    dla_kargs_t a = *(const dla_kargs_t *)rill_dtd_arg(task, 0);
    if (info < 0)
        return RILL_ERR_INVALID_ARG;
    dla_record_info(a.dla, a.offset + info);
    return RILL_ERR_NUMERIC;
}

static rill_status_t cuda_potrf(rill_task_t *task)
{
    dla_kargs_t a;
    double *A;
    rill_dtd_unpack_args(task, &a, &A);
    cusolverDnHandle_t h = rill_cuda_cusolver(task);
    size_t ws_bytes;
    double *ws = rill_cuda_workspace(task, &ws_bytes);
    int lwork = 0;
    CU_LIB(cusolverDnDpotrf_bufferSize(h, cu_uplo(a.uplo), a.n, A, a.lda, &lwork),
           CUSOLVER_STATUS_SUCCESS);
    if ((size_t)lwork * sizeof(double) > ws_bytes) {
        fprintf(stderr,
                "rill dla: cusolverDnDpotrf on a %d x %d tile needs a %zu-byte workspace; "
                "device_cuda_workspace is %zu bytes: raise it\n",
                a.n, a.n, (size_t)lwork * sizeof(double), ws_bytes);
        return RILL_ERR_NO_MEMORY;
    }
    CU_LIB(
        cusolverDnDpotrf(h, cu_uplo(a.uplo), a.n, A, a.lda, ws, lwork, rill_cuda_status_word(task)),
        CUSOLVER_STATUS_SUCCESS);
    return RILL_SUCCESS;
}

static rill_status_t cuda_trsm(rill_task_t *task)
{
    dla_kargs_t a;
    double *A, *B;
    rill_dtd_unpack_args(task, &a, &A, &B);
    CU_LIB(cublasDtrsm(rill_cuda_cublas(task),
                       a.side == RILL_DLA_LEFT ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT,
                       cu_uplo(a.uplo), cu_trans(a.transA),
                       a.diag == RILL_DLA_UNIT ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT, a.m, a.n,
                       &a.alpha, A, a.lda, B, a.ldb),
           CUBLAS_STATUS_SUCCESS);
    return RILL_SUCCESS;
}

/* The defaults of dla->trmm_block and dla->trinv_leaf (RILL_DLA_GPU_TRMM_BLOCK 256,
 * RILL_DLA_GPU_TRINV_LEAF 512), measured on one H200 (dpotrf N = 32768, NB 2048, 2026-11-23):
 * blocks of 256 columns in dtrmm gave 47.8-48.0 TFLOP/s, 384-768 47.1-47.6, the whole tile
 * (one gemm of twice the flops) 45.8-46.2; leaves of 512 in dtrtri 45.8-46.2, of 256
 * 45.5-45.6, no recursion (one solve with the identity) 44.9-45.2. Those figures are the
 * GPU's; each block or leaf is a few more library calls on the GPU manager's thread
 * (rill_dla_set_gpu_panel_blocks). */

/* W = L^-1 for the n x n lower triangular L, recursively: with L = [L11 0; L21 L22],
 * W = [W11 0; -W22 L21 W11  W22]; the two halves' inverses, then two gemms through the
 * stream's workspace T; blocks of at most `leaf` (or when T does not fit) by W = I and the
 * solve L W = I. cuSOLVER's trtri runs a 2048 tile at 1 TFLOP/s, one solve at 2.4. W comes
 * out exactly lower triangular, zeros above. */
static rill_status_t trinv(rill_task_t *task, int n, const double *L, int lda, double *W, int ldw,
                           double *T, size_t t_elems, int leaf)
{
    cublasHandle_t h = rill_cuda_cublas(task);
    const double one = 1.0, mone = -1.0, zero = 0.0;
    int h1 = n / 2 / 64 * 64, h2 = n - h1;
    if (n <= leaf || h1 < 64 || (size_t)h1 * (size_t)h2 > t_elems) {
        CU_RT(dla_identity_cuda(n, ldw, W, rill_cuda_stream(task)), "the identity kernel's launch");
        CU_LIB(cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                           CUBLAS_DIAG_NON_UNIT, n, n, &one, L, lda, W, ldw),
               CUBLAS_STATUS_SUCCESS);
        return RILL_SUCCESS;
    }
    double *W22 = W + h1 + (size_t)h1 * ldw;
    rill_status_t s = trinv(task, h1, L, lda, W, ldw, T, t_elems, leaf);
    if (s == RILL_SUCCESS)
        s = trinv(task, h2, L + h1 + (size_t)h1 * lda, lda, W22, ldw, T, t_elems, leaf);
    if (s != RILL_SUCCESS)
        return s;
    /* T = L21 W11 (h2 x h1), then W21 = -W22 T, W12 = 0 */
    CU_LIB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, h2, h1, h1, &one, L + h1, lda, W, ldw, &zero, T,
                       h2),
           CUBLAS_STATUS_SUCCESS);
    CU_LIB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, h2, h1, h2, &mone, W22, ldw, T, h2, &zero,
                       W + h1, ldw),
           CUBLAS_STATUS_SUCCESS);
    CU_RT(cudaMemset2DAsync(W + (size_t)h1 * ldw, (size_t)ldw * sizeof(double), 0,
                            (size_t)h1 * sizeof(double), (size_t)h2, rill_cuda_stream(task)),
          "cudaMemset2DAsync (dtrtri)");
    return RILL_SUCCESS;
}

rill_status_t rill_dla_cuda_trinv(rill_task_t *task, const rill_dla_t *dla, int n, const double *L,
                                  int lda, double *W, int ldw)
{
    size_t ws_bytes;
    double *T = rill_cuda_workspace(task, &ws_bytes);
    return trinv(task, n, L, lda, W, ldw, T, ws_bytes / sizeof(double),
                 dla ? dla->trinv_leaf : RILL_DLA_GPU_TRINV_LEAF);
}

static rill_status_t cuda_trtri(rill_task_t *task)
{
    dla_kargs_t a;
    double *L, *W;
    rill_dtd_unpack_args(task, &a, &L, &W);
    return rill_dla_cuda_trinv(task, a.dla, a.n, L, a.lda, W, a.ldw);
}

/* B = B W^T (m x n) with W lower triangular and zero above its diagonal, as gemms: column
 * block J of the result is B(:, 0:J) W(J, 0:J)^T, so blocks of dla->trmm_block columns (fewer
 * when the stream's workspace holds less) are done right to left, each one's own columns
 * copied to the workspace first (a gemm may not write what it reads), and the zeros above
 * W's diagonal are multiplied only inside the diagonal blocks. cuBLAS's dtrsm runs a 2048
 * tile at 10-17 TFLOP/s, its dtrmm at 12-23, these gemms at 28 (counted as a trsm's
 * flops, one block). */
rill_status_t rill_dla_cuda_trmm(rill_task_t *task, const rill_dla_t *dla, int m, int n,
                                 const double *W, int ldw, double *B, int ldb)
{
    cublasHandle_t h = rill_cuda_cublas(task);
    const double one = 1.0, zero = 0.0;
    size_t ws_bytes;
    double *T = rill_cuda_workspace(task, &ws_bytes);
    int bs = m > 0 ? (int)(ws_bytes / sizeof(double) / (size_t)m) : n;
    int block = dla ? dla->trmm_block : RILL_DLA_GPU_TRMM_BLOCK;
    if (block > 0 && bs > block)
        bs = block;
    if (bs > n)
        bs = n;
    if (bs < 64 && bs < n) { /* a workspace too small for blocks worth a gemm: in place */
        CU_LIB(cublasDtrmm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                           CUBLAS_DIAG_NON_UNIT, m, n, &one, W, ldw, B, ldb, B, ldb),
               CUBLAS_STATUS_SUCCESS);
        return RILL_SUCCESS;
    }
    for (int j1 = n; j1 > 0; j1 -= bs) {
        int j0 = j1 > bs ? j1 - bs : 0, w = j1 - j0;
        CU_RT(cudaMemcpy2DAsync(T, (size_t)m * sizeof(double), B + (size_t)j0 * ldb,
                                (size_t)ldb * sizeof(double), (size_t)m * sizeof(double), (size_t)w,
                                cudaMemcpyDeviceToDevice, rill_cuda_stream(task)),
              "cudaMemcpy2DAsync (dtrmm's block copy)");
        /* B(:, J) = B(:, 0:j0) W(J, 0:j0)^T + T W(J, J)^T */
        if (j0 > 0)
            CU_LIB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, w, j0, &one, B, ldb, W + j0, ldw,
                               &zero, B + (size_t)j0 * ldb, ldb),
                   CUBLAS_STATUS_SUCCESS);
        CU_LIB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, w, w, &one, T, m,
                           W + j0 + (size_t)j0 * ldw, ldw, j0 > 0 ? &one : &zero,
                           B + (size_t)j0 * ldb, ldb),
               CUBLAS_STATUS_SUCCESS);
    }
    return RILL_SUCCESS;
}

static rill_status_t cuda_trmm(rill_task_t *task)
{
    dla_kargs_t a;
    double *W, *B;
    rill_dtd_unpack_args(task, &a, &W, &B);
    return rill_dla_cuda_trmm(task, a.dla, a.m, a.n, W, a.ldw, B, a.ldb);
}

static rill_status_t cuda_syrk(rill_task_t *task)
{
    dla_kargs_t a;
    double *A, *C;
    rill_dtd_unpack_args(task, &a, &A, &C);
    CU_LIB(cublasDsyrk(rill_cuda_cublas(task), cu_uplo(a.uplo), cu_trans(a.transA), a.n, a.k,
                       &a.alpha, A, a.lda, &a.beta, C, a.ldc),
           CUBLAS_STATUS_SUCCESS);
    return RILL_SUCCESS;
}

static rill_status_t cuda_gemm(rill_task_t *task)
{
    dla_kargs_t a;
    double *A, *B, *C;
    rill_dtd_unpack_args(task, &a, &A, &B, &C);
    CU_LIB(cublasDgemm(rill_cuda_cublas(task), cu_trans(a.transA), cu_trans(a.transB), a.m, a.n,
                       a.k, &a.alpha, A, a.lda, B, a.ldb, &a.beta, C, a.ldc),
           CUBLAS_STATUS_SUCCESS);
    return RILL_SUCCESS;
}

/* The generators, in GPU memory (the same values as on the CPU). */
static rill_status_t cuda_gen(rill_task_t *task)
{
    dla_gen_args_t g;
    double *A;
    rill_dtd_unpack_args(task, &g, &A);
    CU_RT(dla_gen_cuda(g.kind, g.i0, g.j0, g.rows, g.cols, g.ld, g.bump, g.seed, A,
                       rill_cuda_stream(task)),
          "the generator kernel's launch");
    return RILL_SUCCESS;
}

/* dgetrf's PANEL(k) on a GPU (dla_body_getrf_panel's arguments): the tile column gathered
 * into the workspace (mp x kb, ld mp), cuSOLVER's getrf on it, the tiles written back, and
 * the step's pivot record made from cuSOLVER's pivots by dla_lu.cu's kernels. The
 * workspace holds the panel, cuSOLVER's work array, its pivots and info, and the record's
 * mp ints of scratch: device_cuda_workspace must hold them (a panel of 32768 x 2048 is 512
 * MiB). */
static size_t ws_align(size_t n)
{
    return (n + 255) & ~(size_t)255;
}

/* cuSOLVER's getrf on the mp x kb panel X (ld mp) and the pivot record from its pivots; its
 * work array, pivots, info and the record's scratch go into the workspace from byte used
 * (what the caller keeps there before). */
static rill_status_t getrf_on(rill_task_t *task, double *X, int mp, int kb, int base, int mb,
                              int *piv, size_t used)
{
    cudaStream_t st = rill_cuda_stream(task);
    cusolverDnHandle_t h = rill_cuda_cusolver(task);
    size_t ws_bytes;
    char *ws = rill_cuda_workspace(task, &ws_bytes);
    int lwork = 0;
    CU_LIB(cusolverDnDgetrf_bufferSize(h, mp, kb, X, mp, &lwork), CUSOLVER_STATUS_SUCCESS);
    const size_t off_ints = used + ws_align((size_t)lwork * sizeof(double));
    const size_t need = off_ints + ((size_t)kb + mp + 1) * sizeof(int);
    if (need > ws_bytes) {
        fprintf(stderr,
                "rill dla: dgetrf's panel of %d x %d on a GPU needs a %zu-byte workspace (%s"
                "cuSOLVER's work, the pivots); device_cuda_workspace is %zu bytes: raise it "
                "(--mca device_cuda_workspace %zuM) or take a smaller NB\n",
                mp, kb, need, used ? "the panel, " : "", ws_bytes, (need >> 20) + 1);
        return RILL_ERR_NO_MEMORY;
    }
    double *work = (double *)(ws + used);
    int *ipl = (int *)(ws + off_ints), *content = ipl + kb, *info = content + mp;
    CU_LIB(cusolverDnDgetrf(h, mp, kb, X, mp, work, ipl, info), CUSOLVER_STATUS_SUCCESS);
    CU_RT(dla_lu_record_cuda(ipl, kb, mp, base, mb, content, info, piv, st),
          "the pivot record's kernels");
    return RILL_SUCCESS;
}

static rill_status_t cuda_getrf_panel(rill_task_t *task)
{
    const dla_lu_args_t *a = rill_dtd_arg(task, 0);
    int *piv = rill_dtd_arg(task, 1);
    const int mp = a->m - a->k * a->mb, kb = a->rows_k;
    if (a->ntiles == 0) /* a tall panel's buffer (dla_body_getrf_panel), in place */
        return dla_lu_cuda_factor(task, rill_dtd_arg(task, 2), mp, kb, a->k * a->mb, a->mb, piv);
    cudaStream_t st = rill_cuda_stream(task);
    size_t ws_bytes;
    double *buf = rill_cuda_workspace(task, &ws_bytes);
    const size_t used = ws_align((size_t)mp * kb * sizeof(double));
    if (used > ws_bytes) {
        fprintf(stderr,
                "rill dla: dgetrf's panel of %d x %d on a GPU is gathered in the workspace: "
                "device_cuda_workspace is %zu bytes, the panel alone %zu: raise it (--mca "
                "device_cuda_workspace %zuM) or take a smaller NB\n",
                mp, kb, ws_bytes, used, (used >> 20) + 2);
        return RILL_ERR_NO_MEMORY;
    }
    for (int t = 0; t < a->ntiles; t++) { /* the tiles' rows x kb into the panel's rows */
        const int rows = t + 1 < a->ntiles ? a->mb : mp - t * a->mb;
        CU_RT(cudaMemcpy2DAsync(buf + (size_t)t * a->mb, (size_t)mp * sizeof(double),
                                rill_dtd_arg(task, 2 + t), (size_t)rows * sizeof(double),
                                (size_t)rows * sizeof(double), (size_t)kb, cudaMemcpyDeviceToDevice,
                                st),
              "gathering dgetrf's panel");
    }
    rill_status_t s = getrf_on(task, buf, mp, kb, a->k * a->mb, a->mb, piv, used);
    if (s != RILL_SUCCESS)
        return s;
    for (int t = 0; t < a->ntiles; t++) {
        const int rows = t + 1 < a->ntiles ? a->mb : mp - t * a->mb;
        CU_RT(cudaMemcpy2DAsync(rill_dtd_arg(task, 2 + t), (size_t)rows * sizeof(double),
                                buf + (size_t)t * a->mb, (size_t)mp * sizeof(double),
                                (size_t)rows * sizeof(double), (size_t)kb, cudaMemcpyDeviceToDevice,
                                st),
              "writing dgetrf's panel back");
    }
    return RILL_SUCCESS;
}

/* ---- the PTG dgetrf's CUDA bodies (dgetrf.rill; dla_internal.h) */
rill_status_t dla_lu_cuda_copy(rill_task_t *task, int rows, int cols, const double *src, int lds,
                               double *dst, int ldd)
{
    if (rows > 0 && cols > 0)
        CU_RT(cudaMemcpy2DAsync(dst, (size_t)ldd * sizeof(double), src,
                                (size_t)lds * sizeof(double), (size_t)rows * sizeof(double),
                                (size_t)cols, cudaMemcpyDeviceToDevice, rill_cuda_stream(task)),
              "a copy of dgetrf's panel");
    return RILL_SUCCESS;
}

rill_status_t dla_lu_cuda_factor(rill_task_t *task, double *X, int mp, int kb, int base, int mb,
                                 int *piv)
{
    return getrf_on(task, X, mp, kb, base, mb, piv, 0);
}

rill_status_t dla_lu_cuda_swap_top(rill_task_t *task, const int *piv, int base, int mb, int rk,
                                   int cols, double *T, double *C)
{
    CU_RT(dla_lu_laswp_top_cuda(piv, mb, base, rk, cols, T, C, rill_cuda_stream(task)),
          "SWAP_TOP's kernel");
    return RILL_SUCCESS;
}

rill_status_t dla_lu_cuda_pair(rill_task_t *task, const int *piv, int mb, int lo, int ri, int cols,
                               double *B, const double *C, int rk, double *U)
{
    CU_RT(dla_lu_keep_down_cuda(piv, mb, lo, ri, cols, B, C, rk, U, rill_cuda_stream(task)),
          "SWAP_PAIR's kernels");
    return RILL_SUCCESS;
}

rill_status_t dla_lu_cuda_rows_up(rill_task_t *task, const int *piv, int mb, int lo, int ri,
                                  int cols, const double *U, double *T, int rk)
{
    dla_lu_tiles_t tiles = { .n = 1, .lo = { lo }, .rows = { ri }, .b = { (double *)U } };
    CU_RT(dla_lu_laswp_up_cuda(piv, mb, rk, cols, &tiles, T, rill_cuda_stream(task)),
          "SWAP_MERGE's kernel");
    return RILL_SUCCESS;
}

/* LU_COPY on a GPU (dla_body_lu_copy's arguments). */
static rill_status_t cuda_lu_copy(rill_task_t *task)
{
    const dla_lu_copy_t *c = rill_dtd_arg(task, 0);
    return dla_lu_cuda_copy(task, c->rows, c->cols,
                            (const double *)rill_dtd_arg(task, 1) + c->src_off, c->lds,
                            (double *)rill_dtd_arg(task, 2) + c->dst_off, c->ldd);
}

/* SWAP_TOP(k, j) on a GPU (dla_body_laswp_top's arguments). */
static rill_status_t cuda_laswp_top(rill_task_t *task)
{
    const dla_lu_args_t *a = rill_dtd_arg(task, 0);
    return dla_lu_cuda_swap_top(task, rill_dtd_arg(task, 1), a->k * a->mb, a->mb, a->rows_k,
                                a->cols_j, rill_dtd_arg(task, 2), rill_dtd_arg(task, 3));
}

/* SWAP_PAIR(k, j) on a GPU (dla_body_laswp_pair's arguments). */
static rill_status_t cuda_laswp_pair(rill_task_t *task)
{
    const dla_lu_args_t *a = rill_dtd_arg(task, 0);
    dla_lu_tiles_t tiles = { .n = a->ntiles };
    for (int t = 0; t < a->ntiles; t++) {
        const int i = a->tile_i[t];
        tiles.lo[t] = i * a->mb;
        tiles.rows[t] = i == a->mt - 1 ? a->m - i * a->mb : a->mb;
        tiles.b[t] = rill_dtd_arg(task, 3 + t);
    }
    CU_RT(dla_lu_laswp_pair_cuda(rill_dtd_arg(task, 1), a->mb, a->rows_k, a->cols_j, &tiles,
                                 rill_dtd_arg(task, 2), rill_dtd_arg(task, 3 + a->ntiles),
                                 rill_cuda_stream(task)),
          "SWAP_PAIR's kernels");
    return RILL_SUCCESS;
}

/* C = beta C, in place (geam allows C as both input and output with the same ld). */
static rill_status_t cuda_scale(rill_task_t *task)
{
    dla_kargs_t a;
    double *C;
    rill_dtd_unpack_args(task, &a, &C);
    double zero = 0.0;
    CU_LIB(cublasDgeam(rill_cuda_cublas(task), CUBLAS_OP_N, CUBLAS_OP_N, a.m, a.n, &a.beta, C,
                       a.ldc, &zero, C, a.ldc, C, a.ldc),
           CUBLAS_STATUS_SUCCESS);
    return RILL_SUCCESS;
}
#endif

rill_status_t dla_cuda_add_bodies(rill_dla_t *dla)
{
    static const struct {
        int cls;
        rill_dtd_flops_fn flops;
#if RILL_HAVE_CUDA
        rill_dtd_body_fn cuda;
#endif
    } k[] = {
#if RILL_HAVE_CUDA
        { DLA_CLASS_POTRF, flops_potrf, cuda_potrf },
        { DLA_CLASS_TRSM, flops_trsm, cuda_trsm },
        { DLA_CLASS_TRTRI, flops_potrf, cuda_trtri },
        { DLA_CLASS_TRMM, flops_trsm, cuda_trmm },
        { DLA_CLASS_SYRK, flops_syrk, cuda_syrk },
        { DLA_CLASS_GEMM, flops_gemm, cuda_gemm },
        { DLA_CLASS_SCALE, flops_scale, cuda_scale },
        { DLA_CLASS_GETRF_PANEL, flops_getrf_panel, cuda_getrf_panel },
#else
        { DLA_CLASS_GETRF_PANEL, flops_getrf_panel },
        { DLA_CLASS_POTRF, flops_potrf },
        { DLA_CLASS_TRSM, flops_trsm },
        { DLA_CLASS_TRTRI, flops_potrf },
        { DLA_CLASS_TRMM, flops_trsm },
        { DLA_CLASS_SYRK, flops_syrk },
        { DLA_CLASS_GEMM, flops_gemm },
        { DLA_CLASS_SCALE, flops_scale },
#endif
    };
#if RILL_HAVE_CUDA
    rill_status_t g = rill_dtd_class_add_body(dla->cls[DLA_CLASS_GEN], RILL_BODY_CUDA, cuda_gen);
    /* dgetrf's interchanges (no flops: they go where their tiles are; the panel is below) */
    if (g == RILL_SUCCESS)
        g = rill_dtd_class_add_body(dla->cls[DLA_CLASS_LASWP_TOP], RILL_BODY_CUDA, cuda_laswp_top);
    if (g == RILL_SUCCESS)
        g = rill_dtd_class_add_body(dla->cls[DLA_CLASS_LASWP_PAIR], RILL_BODY_CUDA,
                                    cuda_laswp_pair);
    if (g == RILL_SUCCESS) /* (a tall panel's copies: where the tile and the buffer are) */
        g = rill_dtd_class_add_body(dla->cls[DLA_CLASS_LU_COPY], RILL_BODY_CUDA, cuda_lu_copy);
    if (g == RILL_SUCCESS)
        g = rill_dtd_class_set_status_handler(dla->cls[DLA_CLASS_POTRF], potrf_status);
    if (g != RILL_SUCCESS)
        return g;
#endif
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
        rill_status_t s = rill_dtd_class_set_flops(dla->cls[k[i].cls], k[i].flops);
#if RILL_HAVE_CUDA
        if (s == RILL_SUCCESS)
            s = rill_dtd_class_add_body(dla->cls[k[i].cls], RILL_BODY_CUDA, k[i].cuda);
#endif
        if (s != RILL_SUCCESS)
            return s;
    }
    return RILL_SUCCESS;
}
