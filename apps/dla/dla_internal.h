/* Internal to apps/dla: the layer's state, the task classes and their argument block. */
#ifndef RILL_DLA_INTERNAL_H
#define RILL_DLA_INTERNAL_H

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "rill_dla.h"

/* The most values one reduction carries (the helper datum holds this many doubles). */
#define DLA_REDUCE_MAX 8

enum dla_class_id {
    DLA_CLASS_POTRF,
    DLA_CLASS_TRSM,
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
    DLA_NB_CLASSES
};

struct rill_dla {
    rill_context_t *ctx;
    rill_dtd_class_t *cls[DLA_NB_CLASSES];
    rill_collection_t *helper; /* one datum of DLA_REDUCE_MAX doubles per rank, key = rank */
    _Atomic int info;          /* first leading minor a POTRF of this rank found, 0: none */
};

/* Everything a tile kernel needs besides its tiles, copied into the task as one VALUE. */
typedef struct dla_kargs {
    int m, n, k;          /* sizes of the operation (BLAS meaning) */
    int lda, ldb, ldc;    /* leading dimensions of the tiles, in argument order */
    int transA, transB;   /* rill_dla_trans_t */
    int side, uplo, diag; /* rill_dla_side_t, rill_dla_uplo_t, rill_dla_diag_t */
    int offset;           /* POTRF: global index of the tile's first row (for info) */
    double alpha, beta;
    rill_dla_t *dla; /* this rank's layer (each rank inserts its own copy) */
} dla_kargs_t;

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

/* Run tp to completion and destroy it; returns the wait's status. */
rill_status_t dla_wait(rill_taskpool_t **tp_p);

#endif
