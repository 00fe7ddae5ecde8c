/* Internal to apps/dla: the layer's state, the task classes and their argument block. */
#ifndef RILL_DLA_INTERNAL_H
#define RILL_DLA_INTERNAL_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rill/config.h"
#include "rill_dla.h"

/* The most values one reduction carries (the helper datum holds this many doubles). */
#define DLA_REDUCE_MAX 8

enum dla_class_id {
    DLA_CLASS_POTRF,
    DLA_CLASS_TRSM,
    DLA_CLASS_TRTRI, /* W = L^-1 of a lower triangular tile, out of place (zeros above) */
    DLA_CLASS_TRMM,  /* B = B W^T, W lower triangular (the panel's solve by the inverse) */
    DLA_CLASS_SYRK,
    DLA_CLASS_GEMM,
    DLA_CLASS_SCALE,
    DLA_CLASS_GEN,
    DLA_CLASS_SETDIAG,
    DLA_CLASS_GATHER,
    DLA_CLASS_RED_PUT,
    DLA_CLASS_RED_GATHER,
    DLA_CLASS_RED_FINAL,
    DLA_CLASS_RED_BCAST,
    DLA_CLASS_GETRF_PANEL, /* dgetrf's panel: a tile column factored with partial pivoting */
    DLA_CLASS_LASWP_TOP,   /* dgetrf's interchanges: tile row k's own rows, and its copy */
    DLA_CLASS_LASWP_PAIR,  /* dgetrf's interchanges between tile row k and a lower tile */
    DLA_CLASS_LU_COPY,     /* dgetrf's tall panels: a tile into the panel's buffer, or back */
    DLA_NB_CLASSES
};

/* Tiles for the inverses of dpotrf's diagonal tiles (key k: panel k's), nb x nb each, kept
 * by the layer from the first dpotrf that needs them (a scratch collection: making them
 * costs little, but not on every call). A taskpool that is still running keeps its own. */
typedef struct dla_scratch {
    rill_collection_t *dc;
    rill_taskpool_t *tp; /* the last taskpool that used it */
    int nb, nranks;
    struct dla_scratch *next;
} dla_scratch_t;

struct rill_dla {
    rill_context_t *ctx;
    rill_dtd_class_t *cls[DLA_NB_CLASSES];
    rill_collection_t *helper; /* one datum of DLA_REDUCE_MAX doubles per rank, key = rank */
    _Atomic int info;          /* first leading minor a POTRF of this rank found, 0: none */
    rill_dla_panel_t panel;    /* how dpotrf solves its panels (rill_dla_set_panel) */
    rill_dla_dsl_t dsl;        /* dgetrf's front end (rill_dla_set_dsl) */
    /* rill_dla_set_gpu_panel_blocks (read by the CUDA bodies; set before the tasks that
     * read them are inserted, so the insertion orders the write before their reads) */
    int trmm_block, trinv_leaf;
    bool gpus_anywhere; /* some rank has a GPU (the same on every rank) */
    dla_scratch_t *scratch;
};

/* The collection of inverse tiles of nb x nb for taskpool tp (created, or reused from an
 * earlier taskpool that ended). NULL when out of memory. Main thread. */
rill_collection_t *dla_scratch_get(rill_dla_t *dla, rill_taskpool_t *tp, int nb);

/* Everything a tile kernel needs besides its tiles, copied into the task as one VALUE. */
typedef struct dla_kargs {
    int m, n, k;          /* sizes of the operation (BLAS meaning) */
    int lda, ldb, ldc;    /* leading dimensions of the tiles, in argument order */
    int transA, transB;   /* rill_dla_trans_t */
    int side, uplo, diag; /* rill_dla_side_t, rill_dla_uplo_t, rill_dla_diag_t */
    int offset;           /* POTRF: global index of the tile's first row (for info) */
    int ldw;              /* TRTRI, TRMM: leading dimension of the inverse tile W */
    double alpha, beta;
    rill_dla_t *dla; /* this rank's layer (each rank inserts its own copy) */
} dla_kargs_t;

/* A generator task's argument: the tile's place in the matrix and what to fill it with. */
typedef struct dla_gen_args {
    int kind; /* 0: general, 1: symmetric */
    int i0, j0, rows, cols, ld;
    double bump;
    uint64_t seed;
} dla_gen_args_t;

/* Priority clamp: the DPLASMA formulas grow as mt^3. */
static inline int32_t dla_prio(int64_t p)
{
    if (p > INT32_MAX)
        return INT32_MAX;
    if (p < INT32_MIN)
        return INT32_MIN;
    return (int32_t)p;
}

/* Check that A has square nb x nb tiles; logs and returns RILL_ERR_INVALID_ARG if not. */
rill_status_t dla_check_tiles(const char *op, const char *name, const rill_matrix_t *A, int nb);

/* Let OpenBLAS use nthreads threads on any core for a reference call outside tasks: the
 * calling thread is bound to one core and threads OpenBLAS starts inherit that binding, so
 * the caller is unbound until dla_ref_end restores *saved and OpenBLAS's single thread. */
void dla_ref_begin(int nthreads, cpu_set_t *saved);
void dla_ref_end(const cpu_set_t *saved);

/* A POTRF found the leading minor of that (global) order not positive definite: keep the
 * smallest one. Any thread. */
void dla_record_info(rill_dla_t *dla, int minor);

/* Give the tile kernels their CUDA bodies (when built with CUDA) and flop estimates
 * (dla_cuda.c). */
rill_status_t dla_cuda_add_bodies(rill_dla_t *dla);

/* One gemm task: C(ci, cj) = alpha op(A(ai, aj)) op(B(bi, bj)) + beta C(ci, cj), inner size
 * k (dla_algos.c). */
rill_status_t dla_gemm_tile(rill_dla_t *dla, rill_taskpool_t *tp, int64_t prio, int transA,
                            int transB, double alpha, double beta, int k, rill_matrix_t *A, int ai,
                            int aj, rill_matrix_t *B, int bi, int bj, rill_matrix_t *C, int ci,
                            int cj);

/* One trsm task from the left with the uplo triangle of A(k, k): B(bi, bj) = alpha
 * op(T)^-1 B(bi, bj), uplo, trans and diag as rill_dla_uplo_t, rill_dla_trans_t and
 * rill_dla_diag_t (dla_algos.c). */
rill_status_t dla_trsm_left_tile(rill_dla_t *dla, rill_taskpool_t *tp, int64_t prio, int uplo,
                                 int trans, int diag, double alpha, rill_matrix_t *A, int k,
                                 rill_matrix_t *B, int bi, int bj);

/* dgetrf's pivot record of a step, in a datum of (DLA_PIV_HEAD + 4 mb) ints: the head
 * (the first zero pivot, the rows that go down, the panel's columns), then mb pivots as
 * LAPACK numbers them (1-based, of the whole matrix), mb rows that go up (row p of tile k
 * gets row up[p]), and the rows that go down (row down_dst[d] gets row down_src[d] of tile
 * k as it was). */
enum { DLA_PIV_INFO, DLA_PIV_NDOWN, DLA_PIV_KB, DLA_PIV_HEAD };

/* dgetrf's tasks' VALUE argument (dla_lu.c, and their CUDA bodies in dla_cuda.c). */
typedef struct dla_lu_args {
    int k, j;   /* the step, the column */
    int mb;     /* the tile size (square tiles) */
    int m;      /* the order of the matrix */
    int rows_k; /* rows of tile row k (= columns of the panel) */
    int cols_j; /* columns of tile column j */
    int ntiles; /* PANEL: tiles in the panel; SWAP_PAIR: lower tiles of the task */
    int mt;     /* tile rows of the matrix */
    int tile_i[RILL_DTD_MAX_ARGS]; /* SWAP_PAIR: their tile rows */
} dla_lu_args_t;

/* LU_COPY's VALUE argument: rows x cols from the source (ld lds, from element src_off) to
 * the destination (ld ldd, from element dst_off). */
typedef struct dla_lu_copy {
    int rows, cols, lds, ldd;
    size_t src_off, dst_off;
} dla_lu_copy_t;

/* dgetrf's bodies (dla_lu.c). */
rill_status_t dla_body_getrf_panel(rill_task_t *task);
rill_status_t dla_body_laswp_top(rill_task_t *task);
rill_status_t dla_body_laswp_pair(rill_task_t *task);
rill_status_t dla_body_lu_copy(rill_task_t *task);

/* dgetrf's kernels, for the DTD bodies above and the PTG version's (dgetrf.rill). Tiles are
 * column-major with ld = their rows; piv is a step's pivot record (above), of a panel whose
 * first row is base; rows are numbered in the whole matrix. Any thread. */
/* Copy rows x cols of src (ld lds) to dst (ld ldd). */
void dla_copy_block(int rows, int cols, const double *src, int lds, double *dst, int ldd);
/* Factor the mp x kb panel X (ld mp) with LAPACK's dgetrf and write its pivot record piv
 * (info: the first zero pivot, 0: none). RILL_ERR_NO_MEMORY, or RILL_ERR_INVALID_ARG when
 * LAPACK refuses an argument. */
rill_status_t dla_lu_factor(double *X, int mp, int kb, int base, int mb, int *piv);
/* The interchanges in tile (k, j) (rk x cols, T): copy it to C, then move the rows that stay
 * within tile k. */
void dla_lu_swap_top(const int *piv, int base, int mb, int rk, int cols, double *T, double *C);
/* The rows of the lower tile B (ri x cols, first row lo) that go up into tile k, into their
 * rows of T (tile k, rk rows). */
void dla_lu_rows_up(const int *piv, int mb, int lo, int ri, int cols, const double *B, double *T,
                    int rk);
/* The same rows of B into the same rows of U (ri rows; the others are left alone), which
 * dla_lu_rows_up then takes as the lower tile: PTG's PAIR keeps them there, so that its
 * writes into B (dla_lu_rows_down) can go first and another task, MERGE, moves them up. */
void dla_lu_rows_keep(const int *piv, int mb, int lo, int ri, int cols, const double *B, double *U);
/* The rows of tile k's copy C (rk rows) that go down into the lower tile B (ri rows, first
 * row lo). */
void dla_lu_rows_down(const int *piv, int mb, int lo, int ri, int cols, const double *C, int rk,
                      double *B);

/* The PTG dgetrf's CUDA bodies (dla_cuda.c; built with CUDA): the kernels above on the
 * GPU, enqueued on task's stream; PANEL factors X in place with cuSOLVER (its work and
 * pivots in the stream's workspace) and makes the record with dla_lu.cu's kernels. */
rill_status_t dla_lu_cuda_copy(rill_task_t *task, int rows, int cols, const double *src, int lds,
                               double *dst, int ldd);
rill_status_t dla_lu_cuda_factor(rill_task_t *task, double *X, int mp, int kb, int base, int mb,
                                 int *piv);
rill_status_t dla_lu_cuda_swap_top(rill_task_t *task, const int *piv, int base, int mb, int rk,
                                   int cols, double *T, double *C);
rill_status_t dla_lu_cuda_pair(rill_task_t *task, const int *piv, int mb, int lo, int ri, int cols,
                               double *B, const double *C, int rk, double *U);
rill_status_t dla_lu_cuda_rows_up(rill_task_t *task, const int *piv, int mb, int lo, int ri,
                                  int cols, const double *U, double *T, int rk);

/* Run tp to completion and destroy it; returns the wait's status. */
rill_status_t dla_wait(rill_taskpool_t **tp_p);

/* ------------------------------------------------------------ check internals
 * Norms for the checks. NaN propagates: a matrix holding a NaN has a NaN norm (an Inf
 * and no NaN: an Inf norm). LAPACKE_dlange/dlansy are not used because their NaN check
 * returns the index of the offending argument as a negative norm (-5), which made a NaN
 * result look like a tiny residual. Any thread. */
double dla_norm_inf(int m, int n, const double *a, int lda);
/* ||A||_inf of the symmetric A held in the lower triangle of a (the upper is not read). */
double dla_norm_inf_sym_lower(int n, const double *a, int lda);
/* 1 when every element of the m x n a is finite (no NaN, no Inf), else 0. */
int dla_all_finite(int m, int n, const double *a, int lda);

/* The checks on dense column-major buffers (lda = number of rows), on the calling thread
 * with nthreads OpenBLAS threads; the distributed checks gather into them on rank 0, the
 * testers' --ref mode calls them on the reference result. RILL_ERR_NUMERIC with *resid_p
 * NaN when the result holds a NaN or an Inf; else RILL_SUCCESS and the scaled residual
 * (which may still be NaN or Inf, e.g. when the reference overflows: never a pass). */
/* l: the factor in its lower triangle (its upper triangle is zeroed); a: N x N workspace. */
rill_status_t dla_check_dpotrf_dense(int N, double *l, double *a, double bump, uint64_t seed,
                                     int nthreads, double *resid_p);
/* c: the M x N result; a, b, c0: workspaces of Am x An, Bm x Bn and M x N. */
rill_status_t dla_check_dgemm_dense(rill_dla_trans_t transA, rill_dla_trans_t transB, double alpha,
                                    int Am, int An, uint64_t seedA, int Bm, int Bn, uint64_t seedB,
                                    double beta, uint64_t seedC, int M, int N, const double *c,
                                    double *a, double *b, double *c0, int nthreads,
                                    double *resid_p);
/* x: the N x NRHS solution; a: N x N and b: N x NRHS workspaces. */
rill_status_t dla_check_dposv_dense(int N, int NRHS, double bump, uint64_t seedA, uint64_t seedB,
                                    const double *x, double *a, double *b, int nthreads,
                                    double *resid_p);
/* Give every rank rank 0's check status s and residual *resid_p (NaN included).
 * Collective. Main thread. */
rill_status_t dla_check_share(rill_dla_t *dla, rill_status_t s, double *resid_p);

#endif
