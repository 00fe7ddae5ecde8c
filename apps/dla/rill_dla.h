/* Rill dense linear algebra: tiled Cholesky, gemm, trsm, syrk, potrs and posv on 2D
 * block-cyclic matrices (rill_matrix_t), built on the DTD front end with CPU bodies on
 * OpenBLAS/LAPACKE; plus reproducible generators, gathers and checks for the testers. */
#ifndef RILL_DLA_H
#define RILL_DLA_H

#include <stdint.h>

#include "rill/rill.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rill_dla_trans {
    RILL_DLA_NOTRANS = 0,
    RILL_DLA_TRANS = 1,
} rill_dla_trans_t;

typedef enum rill_dla_uplo {
    RILL_DLA_LOWER = 0,
    RILL_DLA_UPPER = 1,
} rill_dla_uplo_t;

typedef enum rill_dla_side {
    RILL_DLA_LEFT = 0,
    RILL_DLA_RIGHT = 1,
} rill_dla_side_t;

typedef enum rill_dla_diag {
    RILL_DLA_NONUNIT = 0,
    RILL_DLA_UNIT = 1,
} rill_dla_diag_t;

typedef struct rill_dla rill_dla_t; /**< the task classes and helper data of one context */

/**
 * Create the DLA layer of ctx: its task classes and a small helper collection (one
 * datum per rank) used by the reductions below. Sets OpenBLAS to one thread (task bodies
 * run one per worker). Call on every rank at the same point, after the collections and
 * matrices created before it (collections are named by creation order): with several
 * ranks it is collective (the ranks learn whether any of them has a GPU). Main thread.
 */
rill_status_t rill_dla_create(rill_context_t *ctx, rill_dla_t **dla_p);
/** Free what rill_dla_create made. *dla_p becomes NULL. Main thread. */
rill_status_t rill_dla_destroy(rill_dla_t **dla_p);

/** How dpotrf solves each panel against its diagonal tile L(k,k). */
typedef enum rill_dla_panel {
    /** RILL_DLA_PANEL_INVERSE when some rank has a GPU, else RILL_DLA_PANEL_TRSM */
    RILL_DLA_PANEL_AUTO = 0,
    /** one triangular solve per tile: A(m,k) = A(m,k) L(k,k)^-T (dtrsm) */
    RILL_DLA_PANEL_TRSM = 1,
    /** the inverse L(k,k)^-1 once per panel (a dtrtri task), then one triangular product
     * per tile (dtrmm; on a GPU a gemm): cuBLAS's dtrsm runs a 2048 tile at a fifth of
     * its dgemm's speed. The inverse tiles are kept by the layer (nb x nb each, one per
     * tile column) from the first dpotrf that uses them until rill_dla_destroy. */
    RILL_DLA_PANEL_INVERSE = 2,
} rill_dla_panel_t;

/** Choose how later dpotrf insertions (dpotrf, dposv) solve their panels; the default is
 * RILL_DLA_PANEL_AUTO. Every rank must choose the same. RILL_ERR_INVALID_ARG for an
 * unknown value. Main thread. */
rill_status_t rill_dla_set_panel(rill_dla_t *dla, rill_dla_panel_t panel);
/** The method dpotrf insertions use now: RILL_DLA_PANEL_TRSM or RILL_DLA_PANEL_INVERSE
 * (auto resolved, the same on every rank). Any thread. */
rill_dla_panel_t rill_dla_panel(const rill_dla_t *dla);

/** The front end a factorization builds its task graph with. */
typedef enum rill_dla_dsl {
    RILL_DLA_DSL_DTD = 0, /**< inserted task by task (rill/dtd.h): the default */
    /** a parameterized task graph (rill/ptg.h; dgetrf: apps/dla/dgetrf.rill), which every
     * rank unfolds only where it concerns it */
    RILL_DLA_DSL_PTG = 1,
} rill_dla_dsl_t;

/** Choose the front end of later dgetrf and dgesv calls (dpotrf's PTG version is the
 * tester's, testing_dpotrf --dsl ptg). Every rank must choose the same.
 * RILL_ERR_INVALID_ARG for an unknown value, RILL_ERR_NOT_SUPPORTED for PTG where Rill was
 * built without its PTG compiler (rillcc needs flex and bison). Main thread. */
rill_status_t rill_dla_set_dsl(rill_dla_t *dla, rill_dla_dsl_t dsl);

/** The defaults of rill_dla_set_gpu_panel_blocks. */
#define RILL_DLA_GPU_TRMM_BLOCK 256
#define RILL_DLA_GPU_TRINV_LEAF 512

/** On GPUs, how the inverse panel's kernels cut their work: a dtrmm (B = B W^T) is done as
 * gemms over blocks of trmm_block columns (0: the whole tile in one gemm of twice the
 * flops), and a dtrtri recurses down to leaves of trinv_leaf columns, each solved by one
 * dtrsm. The defaults, 256 and 512, were the fastest on one H200's streams (dpotrf N =
 * 32768, NB 2048); fewer, larger pieces mean fewer library calls, so less of the GPU
 * manager's host time per task (a dtrmm of 2048 took 0.3 ms of it with 256, a dtrtri 0.8
 * ms with 512, on an H100). For tasks that start later; ranks may differ (the graph does
 * not change). RILL_ERR_INVALID_ARG when trmm_block is neither 0 nor at least 64, or
 * trinv_leaf is under 64. Main thread. */
rill_status_t rill_dla_set_gpu_panel_blocks(rill_dla_t *dla, int trmm_block, int trinv_leaf);

/** The inverse panel's GPU kernels, for a CUDA body that is not one of the library's (the
 * PTG dpotrf, apps/dla/dpotrf.rill): enqueued on the body's task's stream, through its
 * workspace, cut as rill_dla_set_gpu_panel_blocks says. W = L^-1 for the n x n lower
 * triangular L (W comes out zero above its diagonal); B = B W^T (m x n) with W n x n lower
 * triangular. dla NULL: the default cuts. Built with CUDA only. */
rill_status_t rill_dla_cuda_trinv(rill_task_t *task, const rill_dla_t *dla, int n, const double *L,
                                  int lda, double *W, int ldw);
rill_status_t rill_dla_cuda_trmm(rill_task_t *task, const rill_dla_t *dla, int m, int n,
                                 const double *W, int ldw, double *B, int ldb);

/* ------------------------------------------------------------ insertion (asynchronous)
 * The *_insert calls add tasks to an open DTD taskpool and return at once; the matrices
 * are borrowed and must stay alive until rill_taskpool_wait(tp) returns. Every rank must
 * make the same calls with the same arguments. Matrices have square tiles (mb == nb) and
 * the same tile size; RILL_ERR_INVALID_ARG for mismatched shapes or tilings,
 * RILL_ERR_NOT_SUPPORTED for a case not implemented (said in the message). Main thread. */

/**
 * Cholesky factorization A = L L^T of the symmetric positive definite A, in place; only
 * the lower triangle is read and written (uplo must be RILL_DLA_LOWER). A non-SPD
 * matrix makes the POTRF task fail with RILL_ERR_NUMERIC (rill_taskpool_wait returns
 * RILL_ERR_TASK); rill_dla_info() then gives the leading minor that is not positive.
 */
rill_status_t rill_dla_dpotrf_insert(rill_dla_t *dla, rill_taskpool_t *tp, rill_dla_uplo_t uplo,
                                     rill_matrix_t *A);
/** C = alpha op(A) op(B) + beta C, SUMMA-style: GEMM tasks run where C(i, j) lives. */
rill_status_t rill_dla_dgemm_insert(rill_dla_t *dla, rill_taskpool_t *tp, rill_dla_trans_t transA,
                                    rill_dla_trans_t transB, double alpha, rill_matrix_t *A,
                                    rill_matrix_t *B, double beta, rill_matrix_t *C);
/**
 * B = alpha op(A)^-1 B with A triangular (its uplo triangle is read). Implemented: side
 * LEFT, both uplos, both transposes, both diags.
 */
rill_status_t rill_dla_dtrsm_insert(rill_dla_t *dla, rill_taskpool_t *tp, rill_dla_side_t side,
                                    rill_dla_uplo_t uplo, rill_dla_trans_t trans,
                                    rill_dla_diag_t diag, double alpha, rill_matrix_t *A,
                                    rill_matrix_t *B);
/** Lower triangle of C = alpha op(A) op(A)^T + beta C (op = NOTRANS: A A^T; TRANS: A^T A). */
rill_status_t rill_dla_dsyrk_insert(rill_dla_t *dla, rill_taskpool_t *tp, rill_dla_uplo_t uplo,
                                    rill_dla_trans_t trans, double alpha, rill_matrix_t *A,
                                    double beta, rill_matrix_t *C);
/** Solve A X = B with the Cholesky factor L in A (from dpotrf): B becomes X. */
rill_status_t rill_dla_dpotrs_insert(rill_dla_t *dla, rill_taskpool_t *tp, rill_dla_uplo_t uplo,
                                     rill_matrix_t *A, rill_matrix_t *B);
/** dpotrf then dpotrs in the same taskpool (the solve overlaps the factorization's tail). */
rill_status_t rill_dla_dposv_insert(rill_dla_t *dla, rill_taskpool_t *tp, rill_dla_uplo_t uplo,
                                    rill_matrix_t *A, rill_matrix_t *B);

/**
 * The first (smallest) leading minor, 1-based, that a POTRF task of this rank found not
 * positive since the last rill_dla_info_reset; 0 if none. Only the rank that ran the
 * failing task knows it: rill_dla_allreduce_max() shares it. Any thread.
 */
int rill_dla_info(const rill_dla_t *dla);
void rill_dla_info_reset(rill_dla_t *dla);
/** The smallest leading minor any rank's POTRF found (0: none), on every rank, after the
 * taskpool was waited for. Collective. Main thread. */
rill_status_t rill_dla_info_allreduce(rill_dla_t *dla, int *info_p);

/* ------------------------------------------------------------ synchronous drivers
 * Create a taskpool, insert, wait, destroy. They return the wait's status; dpotrf and
 * dposv return RILL_ERR_NUMERIC (instead of RILL_ERR_TASK) when the matrix is not
 * positive definite, with *info_p set to the leading minor on every rank. Main thread. */
rill_status_t rill_dla_dpotrf(rill_dla_t *dla, rill_dla_uplo_t uplo, rill_matrix_t *A, int *info_p);
/** LU with partial pivoting, A = P L U in place (L unit lower, U upper), as LAPACK's dgetrf:
 * ipiv (n entries on every rank, or NULL) gets the pivots, 1-based, row i interchanged with
 * row ipiv[i]; *info_p the first zero pivot U(info, info) (1-based; 0: none), on every rank,
 * and then the factorization is complete as LAPACK's is (RILL_SUCCESS). A square, with
 * square tiles, any number of them (a panel of more tiles than a DTD task takes,
 * RILL_DTD_MAX_ARGS - 2, is gathered into a buffer of N x NB doubles on its rank). */
rill_status_t rill_dla_dgetrf(rill_dla_t *dla, rill_matrix_t *A, int *ipiv, int *info_p);
/** Solve A X = B with the factors and pivots of rill_dla_dgetrf (A and ipiv as it left them;
 * ipiv on every rank): B becomes X. B has A's row tiling (n rows, square tiles of A's
 * size), any number of columns. RILL_ERR_INVALID_ARG for a pivot out of range (ipiv[i]
 * must lie in i + 1 .. n, as dgetrf's do), naming it. Row interchanges, then L (unit) and
 * U solves, in one taskpool. */
rill_status_t rill_dla_dgetrs(rill_dla_t *dla, rill_matrix_t *A, const int *ipiv, rill_matrix_t *B);
/** dgetrf then dgetrs, as LAPACK's dgesv: A becomes its factors, ipiv (n entries on every
 * rank, required) the pivots, B the solution. A singular matrix (a zero pivot U(info,
 * info), *info_p > 0 on every rank) leaves B as it was and returns RILL_ERR_NUMERIC. */
rill_status_t rill_dla_dgesv(rill_dla_t *dla, rill_matrix_t *A, int *ipiv, rill_matrix_t *B,
                             int *info_p);
rill_status_t rill_dla_dgemm(rill_dla_t *dla, rill_dla_trans_t transA, rill_dla_trans_t transB,
                             double alpha, rill_matrix_t *A, rill_matrix_t *B, double beta,
                             rill_matrix_t *C);
rill_status_t rill_dla_dposv(rill_dla_t *dla, rill_dla_uplo_t uplo, rill_matrix_t *A,
                             rill_matrix_t *B, int *info_p);

/* ------------------------------------------------------------ generators
 * Fill a matrix in place with DTD tasks that run where each tile lives (so versions and
 * copies stay coherent across runs). Element (i, j) depends only on (seed, i, j): the same
 * matrix whatever P x Q and NB. Collective (every rank calls), synchronous. Main thread. */

/** Value in [-0.5, 0.5) of the global element (i, j) for seed (counter-based hash). Any
 * thread. */
double rill_dla_rand(uint64_t seed, int64_t i, int64_t j);
/** A(i, j) = rill_dla_rand(seed, i, j). */
rill_status_t rill_dla_dplrnt(rill_dla_t *dla, rill_matrix_t *A, uint64_t seed);
/** Symmetric: A(i, j) = A(j, i) = rill_dla_rand(seed, max(i, j), min(i, j)), plus bump on
 * the diagonal (bump = N makes it SPD). Both triangles are filled. A must be square. */
rill_status_t rill_dla_dplgsy(rill_dla_t *dla, rill_matrix_t *A, double bump, uint64_t seed);
/** Set the global diagonal element (k, k) of A to value (-1 makes a dplgsy matrix with
 * bump = N fail Cholesky exactly at leading minor k + 1). */
rill_status_t rill_dla_set_diag(rill_dla_t *dla, rill_matrix_t *A, int k, double value);
/** The same generators into a dense column-major buffer (the reference side). Any thread. */
void rill_dla_dplrnt_dense(int m, int n, double *a, int lda, uint64_t seed);
void rill_dla_dplgsy_dense(int n, double *a, int lda, double bump, uint64_t seed);

/* ------------------------------------------------------------ gathers and reductions */

/**
 * Copy the whole of A into the dense column-major m x n buffer dense (lda = m) of rank
 * root, with DTD tasks that run on root and read every tile. dense is borrowed and only
 * used on root (other ranks pass NULL; a NULL on root gathers nothing but still takes part).
 * Collective: every rank calls it. Main thread.
 */
rill_status_t rill_dla_gather(rill_dla_t *dla, rill_matrix_t *A, int root, double *dense);

/**
 * Element-wise maximum of v[0..n-1] over all ranks, left in v on every rank (n <= 8).
 * Collective; doubles as a barrier (n = 0). Built on DTD tasks over the helper data.
 * Main thread.
 */
rill_status_t rill_dla_allreduce_max(rill_dla_t *dla, double *v, int n);

/* ------------------------------------------------------------ checks (DPLASMA style)
 * Each check gathers what it needs on rank 0, regenerates the original data there from
 * the seed, computes the scaled residual with LAPACK/BLAS, and shares it with every rank
 * (*resid_p is the same everywhere). A residual that is finite and below
 * RILL_DLA_CHECK_THRESHOLD passes; NaN or Inf never does. When the result holds a NaN
 * or an Inf, the check returns RILL_ERR_NUMERIC on every rank and *resid_p is NaN (the
 * norms propagate NaN, so non-finite inputs give a NaN or Inf residual too). Other
 * errors: the check could not run (RILL_ERR_NO_MEMORY on rank 0...). Collective. Main
 * thread. */
#define RILL_DLA_CHECK_THRESHOLD 60.0

/** ||L L^T - A||_inf / (||A||_inf N eps); A was generated by dplgsy(bump, seed). */
rill_status_t rill_dla_check_dpotrf(rill_dla_t *dla, rill_matrix_t *L, double bump, uint64_t seed,
                                    double *resid_p);
/** ||C - C_ref||_inf / ((|alpha| ||A||_inf ||B||_inf + |beta| ||C0||_inf) K eps) with A,
 * B, C0 generated by dplrnt(seedA / seedB / seedC). */
rill_status_t rill_dla_check_dgemm(rill_dla_t *dla, rill_dla_trans_t transA,
                                   rill_dla_trans_t transB, double alpha, int Am, int An,
                                   uint64_t seedA, int Bm, int Bn, uint64_t seedB, double beta,
                                   uint64_t seedC, rill_matrix_t *C, double *resid_p);
/** ||A X - B||_inf / ((||A||_inf ||X||_inf + ||B||_inf) N eps), A from dplgsy(bump, seedA),
 * B from dplrnt(seedB). */
rill_status_t rill_dla_check_dposv(rill_dla_t *dla, double bump, uint64_t seedA, uint64_t seedB,
                                   rill_matrix_t *X, double *resid_p);

#ifdef __cplusplus
}
#endif
#endif
