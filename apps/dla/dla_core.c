/* The DLA layer's state and task bodies: tile kernels on OpenBLAS/LAPACKE, generators,
 * the gather to one rank and the max-allreduce built from DTD tasks. */
#include <cblas.h>
#include <lapacke.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dla_internal.h"

extern void openblas_set_num_threads(int);

static CBLAS_TRANSPOSE cblas_trans(int t)
{
    return t == RILL_DLA_TRANS ? CblasTrans : CblasNoTrans;
}

/* ------------------------------------------------------------ tile kernels */

void dla_record_info(rill_dla_t *dla, int minor)
{
    /* keep the smallest minor: later POTRFs run on the garbage a failure leaves */
    int cur = atomic_load_explicit(&dla->info, memory_order_relaxed);
    while ((cur == 0 || minor < cur) &&
           !atomic_compare_exchange_weak_explicit(&dla->info, &cur, minor, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

static rill_status_t body_potrf(rill_task_t *task)
{
    dla_kargs_t a;
    double *A;
    rill_dtd_unpack_args(task, &a, &A);
    lapack_int info =
        LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, a.uplo == RILL_DLA_LOWER ? 'L' : 'U', a.n, A, a.lda);
    if (info == 0)
        return RILL_SUCCESS;
    if (info > 0) {
        dla_record_info(a.dla, a.offset + (int)info);
        return RILL_ERR_NUMERIC;
    }
    return RILL_ERR_INVALID_ARG;
}

/* B = alpha op(A)^-1 B (left) or B op(A)^-1 (right); tiles A, B. */
static rill_status_t body_trsm(rill_task_t *task)
{
    dla_kargs_t a;
    double *A, *B;
    rill_dtd_unpack_args(task, &a, &A, &B);
    cblas_dtrsm(CblasColMajor, a.side == RILL_DLA_LEFT ? CblasLeft : CblasRight,
                a.uplo == RILL_DLA_LOWER ? CblasLower : CblasUpper, cblas_trans(a.transA),
                a.diag == RILL_DLA_UNIT ? CblasUnit : CblasNonUnit, a.m, a.n, a.alpha, A, a.lda, B,
                a.ldb);
    return RILL_SUCCESS;
}

/* W = L^-1 for the lower triangular n x n L, W lower triangular with zeros above the
 * diagonal (a GPU's dtrmm reads W whole); tiles L, W. */
static rill_status_t body_trtri(rill_task_t *task)
{
    dla_kargs_t a;
    double *L, *W;
    rill_dtd_unpack_args(task, &a, &L, &W);
    LAPACKE_dlaset_work(LAPACK_COL_MAJOR, 'U', a.n, a.n, 0.0, 0.0, W, a.ldw);
    LAPACKE_dlacpy_work(LAPACK_COL_MAJOR, 'L', a.n, a.n, L, a.lda, W, a.ldw);
    lapack_int info = LAPACKE_dtrtri_work(LAPACK_COL_MAJOR, 'L', 'N', a.n, W, a.ldw);
    return info == 0 ? RILL_SUCCESS : info > 0 ? RILL_ERR_NUMERIC : RILL_ERR_INVALID_ARG;
}

/* B = B W^T (m x n), W the n x n lower triangular inverse; tiles W, B. */
static rill_status_t body_trmm(rill_task_t *task)
{
    dla_kargs_t a;
    double *W, *B;
    rill_dtd_unpack_args(task, &a, &W, &B);
    cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, a.m, a.n, 1.0, W,
                a.ldw, B, a.ldb);
    return RILL_SUCCESS;
}

/* C = alpha op(A) op(A)^T + beta C (n x n, inner size k); tiles A, C. */
static rill_status_t body_syrk(rill_task_t *task)
{
    dla_kargs_t a;
    double *A, *C;
    rill_dtd_unpack_args(task, &a, &A, &C);
    cblas_dsyrk(CblasColMajor, a.uplo == RILL_DLA_LOWER ? CblasLower : CblasUpper,
                cblas_trans(a.transA), a.n, a.k, a.alpha, A, a.lda, a.beta, C, a.ldc);
    return RILL_SUCCESS;
}

/* C = alpha op(A) op(B) + beta C; tiles A, B, C. */
static rill_status_t body_gemm(rill_task_t *task)
{
    dla_kargs_t a;
    double *A, *B, *C;
    rill_dtd_unpack_args(task, &a, &A, &B, &C);
    cblas_dgemm(CblasColMajor, cblas_trans(a.transA), cblas_trans(a.transB), a.m, a.n, a.k, a.alpha,
                A, a.lda, B, a.ldb, a.beta, C, a.ldc);
    return RILL_SUCCESS;
}

/* C = beta C; tile C. */
static rill_status_t body_scale(rill_task_t *task)
{
    dla_kargs_t a;
    double *C;
    rill_dtd_unpack_args(task, &a, &C);
    for (int j = 0; j < a.n; j++)
        for (int i = 0; i < a.m; i++)
            C[i + (size_t)j * a.ldc] = a.beta == 0.0 ? 0.0 : a.beta * C[i + (size_t)j * a.ldc];
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ generators */

static inline uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

double rill_dla_rand(uint64_t seed, int64_t i, int64_t j)
{
    uint64_t h = splitmix64(seed ^ splitmix64((uint64_t)i * 0xd1b54a32d192ed03ull));
    h = splitmix64(h ^ (uint64_t)j);
    return (double)(h >> 11) * 0x1.0p-53 - 0.5;
}

static void gen_block(const dla_gen_args_t *g, double *a)
{
    for (int jj = 0; jj < g->cols; jj++) {
        int64_t j = g->j0 + jj;
        double *col = a + (size_t)jj * g->ld;
        for (int ii = 0; ii < g->rows; ii++) {
            int64_t i = g->i0 + ii;
            if (g->kind == 0) {
                col[ii] = rill_dla_rand(g->seed, i, j);
            } else {
                col[ii] = i >= j ? rill_dla_rand(g->seed, i, j) : rill_dla_rand(g->seed, j, i);
                if (i == j)
                    col[ii] += g->bump;
            }
        }
    }
}

static rill_status_t body_gen(rill_task_t *task)
{
    dla_gen_args_t g;
    double *A;
    rill_dtd_unpack_args(task, &g, &A);
    gen_block(&g, A);
    return RILL_SUCCESS;
}

void rill_dla_dplrnt_dense(int m, int n, double *a, int lda, uint64_t seed)
{
    dla_gen_args_t g = { .kind = 0, .rows = m, .cols = n, .ld = lda, .seed = seed };
    gen_block(&g, a);
}

void rill_dla_dplgsy_dense(int n, double *a, int lda, double bump, uint64_t seed)
{
    dla_gen_args_t g = { .kind = 1, .rows = n, .cols = n, .ld = lda, .bump = bump, .seed = seed };
    gen_block(&g, a);
}

static rill_status_t generate(rill_dla_t *dla, rill_matrix_t *A, int kind, double bump,
                              uint64_t seed)
{
    rill_taskpool_t *tp;
    rill_status_t s = rill_dtd_taskpool_create(dla->ctx, &tp);
    if (s != RILL_SUCCESS)
        return s;
    int mb = rill_matrix_mb(A), nb = rill_matrix_nb(A);
    for (int i = 0; i < rill_matrix_mt(A) && s == RILL_SUCCESS; i++)
        for (int j = 0; j < rill_matrix_nt(A) && s == RILL_SUCCESS; j++) {
            dla_gen_args_t g = { .kind = kind,
                                 .i0 = i * mb,
                                 .j0 = j * nb,
                                 .rows = rill_matrix_tile_rows(A, i),
                                 .cols = rill_matrix_tile_cols(A, j),
                                 .ld = rill_matrix_tile_rows(A, i),
                                 .bump = bump,
                                 .seed = seed };
            s = rill_dtd_insert_task(tp, dla->cls[DLA_CLASS_GEN], 0, RILL_DTD_VALUE, sizeof(g), &g,
                                     RILL_DTD_OUTPUT | RILL_DTD_AFFINITY, rill_matrix_tile(A, i, j),
                                     RILL_DTD_ARG_END);
        }
    rill_status_t w = dla_wait(&tp);
    return s != RILL_SUCCESS ? s : w;
}

rill_status_t rill_dla_dplrnt(rill_dla_t *dla, rill_matrix_t *A, uint64_t seed)
{
    if (!dla || !A)
        return RILL_ERR_INVALID_ARG;
    return generate(dla, A, 0, 0.0, seed);
}

rill_status_t rill_dla_dplgsy(rill_dla_t *dla, rill_matrix_t *A, double bump, uint64_t seed)
{
    if (!dla || !A)
        return RILL_ERR_INVALID_ARG;
    if (rill_matrix_m(A) != rill_matrix_n(A) || rill_matrix_mb(A) != rill_matrix_nb(A)) {
        fprintf(stderr,
                "[rill dla] error: dplgsy: A is %d x %d in %d x %d tiles; a symmetric "
                "matrix must be square with square tiles\n",
                rill_matrix_m(A), rill_matrix_n(A), rill_matrix_mb(A), rill_matrix_nb(A));
        return RILL_ERR_INVALID_ARG;
    }
    return generate(dla, A, 1, bump, seed);
}

static rill_status_t body_setdiag(rill_task_t *task)
{
    dla_kargs_t a;
    double *A;
    rill_dtd_unpack_args(task, &a, &A);
    A[a.m + (size_t)a.n * a.lda] = a.alpha;
    return RILL_SUCCESS;
}

rill_status_t rill_dla_set_diag(rill_dla_t *dla, rill_matrix_t *A, int k, double value)
{
    if (!dla || !A || k < 0 || k >= rill_matrix_m(A) || k >= rill_matrix_n(A))
        return RILL_ERR_INVALID_ARG;
    int ti = k / rill_matrix_mb(A), tj = k / rill_matrix_nb(A);
    dla_kargs_t a = { .m = k % rill_matrix_mb(A),
                      .n = k % rill_matrix_nb(A),
                      .lda = rill_matrix_tile_rows(A, ti),
                      .alpha = value };
    rill_taskpool_t *tp;
    rill_status_t s = rill_dtd_taskpool_create(dla->ctx, &tp);
    if (s != RILL_SUCCESS)
        return s;
    s = rill_dtd_insert_task(tp, dla->cls[DLA_CLASS_SETDIAG], 0, RILL_DTD_VALUE, sizeof(a), &a,
                             RILL_DTD_INOUT | RILL_DTD_AFFINITY, rill_matrix_tile(A, ti, tj),
                             RILL_DTD_ARG_END);
    rill_status_t w = dla_wait(&tp);
    return s != RILL_SUCCESS ? s : w;
}

/* ------------------------------------------------------------ gather */

typedef struct dla_gather_args {
    int i0, j0, rows, cols, ld_tile, ld_dense;
    double *dense; /* the root's buffer (only the root runs these tasks) */
} dla_gather_args_t;

static rill_status_t body_gather(rill_task_t *task)
{
    dla_gather_args_t g;
    double *T;
    rill_dtd_unpack_args(task, &g, &T, NULL);
    if (!g.dense) /* the root could not allocate: the tasks still run, to stay collective */
        return RILL_SUCCESS;
    for (int jj = 0; jj < g.cols; jj++)
        memcpy(g.dense + g.i0 + (size_t)(g.j0 + jj) * g.ld_dense, T + (size_t)jj * g.ld_tile,
               (size_t)g.rows * sizeof(double));
    return RILL_SUCCESS;
}

rill_status_t rill_dla_gather(rill_dla_t *dla, rill_matrix_t *A, int root, double *dense)
{
    if (!dla || !A || root < 0 || root >= rill_context_nranks(dla->ctx))
        return RILL_ERR_INVALID_ARG;
    rill_data_t *token = rill_collection_data_of(dla->helper, (uint64_t)root);
    if (!token)
        return RILL_ERR_NO_MEMORY;
    rill_taskpool_t *tp;
    rill_status_t s = rill_dtd_taskpool_create(dla->ctx, &tp);
    if (s != RILL_SUCCESS)
        return s;
    int mb = rill_matrix_mb(A), nb = rill_matrix_nb(A);
    for (int i = 0; i < rill_matrix_mt(A) && s == RILL_SUCCESS; i++)
        for (int j = 0; j < rill_matrix_nt(A) && s == RILL_SUCCESS; j++) {
            dla_gather_args_t g = { .i0 = i * mb,
                                    .j0 = j * nb,
                                    .rows = rill_matrix_tile_rows(A, i),
                                    .cols = rill_matrix_tile_cols(A, j),
                                    .ld_tile = rill_matrix_tile_rows(A, i),
                                    .ld_dense = rill_matrix_m(A),
                                    .dense = dense };
            s = rill_dtd_insert_task(tp, dla->cls[DLA_CLASS_GATHER], 0, RILL_DTD_VALUE, sizeof(g),
                                     &g, RILL_DTD_INPUT, rill_matrix_tile(A, i, j),
                                     RILL_DTD_INPUT | RILL_DTD_AFFINITY, token, RILL_DTD_ARG_END);
        }
    rill_status_t w = dla_wait(&tp);
    return s != RILL_SUCCESS ? s : w;
}

/* ------------------------------------------------------------ max-allreduce
 * One taskpool: PUT(r) writes rank r's values into its helper datum (runs on r);
 * GATHER(r) copies helper(r) into slot r of rank 0's accumulator (runs on 0); FINAL
 * reduces the slots into helper(0) and rank 0's result; BCAST(r) copies helper(0) into
 * rank r's result (runs on r). The DTD order on the helper data sequences the phases. */

typedef struct dla_red_args {
    int n, rank, nranks;
    double vals[DLA_REDUCE_MAX];
    double *acc; /* rank 0: nranks x DLA_REDUCE_MAX slots */
    double *out; /* the inserting rank's result array */
} dla_red_args_t;

static rill_status_t body_red_put(rill_task_t *task)
{
    dla_red_args_t r;
    double *H;
    rill_dtd_unpack_args(task, &r, &H);
    memcpy(H, r.vals, sizeof(r.vals));
    return RILL_SUCCESS;
}

static rill_status_t body_red_gather(rill_task_t *task)
{
    dla_red_args_t r;
    double *H;
    rill_dtd_unpack_args(task, &r, &H, NULL);
    memcpy(r.acc + (size_t)r.rank * DLA_REDUCE_MAX, H, sizeof(r.vals));
    return RILL_SUCCESS;
}

static rill_status_t body_red_final(rill_task_t *task)
{
    dla_red_args_t r;
    double *H;
    rill_dtd_unpack_args(task, &r, &H);
    for (int i = 0; i < r.n; i++) {
        double m = r.acc[i];
        for (int q = 1; q < r.nranks; q++)
            if (r.acc[(size_t)q * DLA_REDUCE_MAX + i] > m)
                m = r.acc[(size_t)q * DLA_REDUCE_MAX + i];
        H[i] = m;
        r.out[i] = m;
    }
    return RILL_SUCCESS;
}

static rill_status_t body_red_bcast(rill_task_t *task)
{
    dla_red_args_t r;
    double *H0;
    rill_dtd_unpack_args(task, &r, &H0, NULL);
    memcpy(r.out, H0, (size_t)r.n * sizeof(double));
    return RILL_SUCCESS;
}

rill_status_t rill_dla_allreduce_max(rill_dla_t *dla, double *v, int n)
{
    if (!dla || n < 0 || n > DLA_REDUCE_MAX || (n > 0 && !v))
        return RILL_ERR_INVALID_ARG;
    int nranks = rill_context_nranks(dla->ctx);
    double out[DLA_REDUCE_MAX] = { 0 };
    double *acc = calloc((size_t)nranks * DLA_REDUCE_MAX, sizeof(double));
    if (!acc)
        return RILL_ERR_NO_MEMORY;
    rill_taskpool_t *tp;
    rill_status_t s = rill_dtd_taskpool_create(dla->ctx, &tp);
    if (s != RILL_SUCCESS) {
        free(acc);
        return s;
    }
    dla_red_args_t r = { .n = n, .nranks = nranks, .acc = acc, .out = out };
    if (n > 0)
        memcpy(r.vals, v, (size_t)n * sizeof(double));
    rill_data_t *h0 = rill_collection_data_of(dla->helper, 0);
    for (int q = 0; q < nranks && s == RILL_SUCCESS; q++) {
        r.rank = q;
        rill_data_t *hq = rill_collection_data_of(dla->helper, (uint64_t)q);
        s = rill_dtd_insert_task(tp, dla->cls[DLA_CLASS_RED_PUT], 0, RILL_DTD_VALUE, sizeof(r), &r,
                                 RILL_DTD_OUTPUT | RILL_DTD_AFFINITY, hq, RILL_DTD_ARG_END);
    }
    for (int q = 0; q < nranks && s == RILL_SUCCESS; q++) {
        r.rank = q;
        rill_data_t *hq = rill_collection_data_of(dla->helper, (uint64_t)q);
        if (q == 0) /* a datum appears once per task: helper(0) is both input and affinity */
            s = rill_dtd_insert_task(tp, dla->cls[DLA_CLASS_RED_GATHER], 0, RILL_DTD_VALUE,
                                     sizeof(r), &r, RILL_DTD_INPUT | RILL_DTD_AFFINITY, h0,
                                     RILL_DTD_ARG_END);
        else
            s = rill_dtd_insert_task(tp, dla->cls[DLA_CLASS_RED_GATHER], 0, RILL_DTD_VALUE,
                                     sizeof(r), &r, RILL_DTD_INPUT, hq,
                                     RILL_DTD_INPUT | RILL_DTD_AFFINITY, h0, RILL_DTD_ARG_END);
    }
    if (s == RILL_SUCCESS)
        s = rill_dtd_insert_task(tp, dla->cls[DLA_CLASS_RED_FINAL], 0, RILL_DTD_VALUE, sizeof(r),
                                 &r, RILL_DTD_INOUT | RILL_DTD_AFFINITY, h0, RILL_DTD_ARG_END);
    for (int q = 1; q < nranks && s == RILL_SUCCESS; q++) {
        r.rank = q;
        rill_data_t *hq = rill_collection_data_of(dla->helper, (uint64_t)q);
        s = rill_dtd_insert_task(tp, dla->cls[DLA_CLASS_RED_BCAST], 0, RILL_DTD_VALUE, sizeof(r),
                                 &r, RILL_DTD_INPUT, h0, RILL_DTD_INOUT | RILL_DTD_AFFINITY, hq,
                                 RILL_DTD_ARG_END);
    }
    rill_status_t w = dla_wait(&tp);
    free(acc);
    if (s == RILL_SUCCESS)
        s = w;
    if (s == RILL_SUCCESS && n > 0)
        memcpy(v, out, (size_t)n * sizeof(double));
    return s;
}

/* ------------------------------------------------------------ the layer */

static int helper_rank_of(uint64_t key, void *arg)
{
    (void)arg;
    return (int)key;
}

rill_status_t rill_dla_create(rill_context_t *ctx, rill_dla_t **dla_p)
{
    static const struct {
        const char *name;
        rill_dtd_body_fn body;
    } classes[DLA_NB_CLASSES] = {
        [DLA_CLASS_POTRF] = { "dpotrf", body_potrf },
        [DLA_CLASS_TRSM] = { "dtrsm", body_trsm },
        [DLA_CLASS_TRTRI] = { "dtrtri", body_trtri },
        [DLA_CLASS_TRMM] = { "dtrmm", body_trmm },
        [DLA_CLASS_SYRK] = { "dsyrk", body_syrk },
        [DLA_CLASS_GEMM] = { "dgemm", body_gemm },
        [DLA_CLASS_SCALE] = { "dlascl", body_scale },
        [DLA_CLASS_GEN] = { "dla_generate", body_gen },
        [DLA_CLASS_SETDIAG] = { "dla_set_diag", body_setdiag },
        [DLA_CLASS_GATHER] = { "dla_gather", body_gather },
        [DLA_CLASS_RED_PUT] = { "dla_reduce_put", body_red_put },
        [DLA_CLASS_RED_GATHER] = { "dla_reduce_gather", body_red_gather },
        [DLA_CLASS_RED_FINAL] = { "dla_reduce_final", body_red_final },
        [DLA_CLASS_RED_BCAST] = { "dla_reduce_bcast", body_red_bcast },
        [DLA_CLASS_GETRF_PANEL] = { "dgetrf_panel", dla_body_getrf_panel },
        [DLA_CLASS_LASWP_TOP] = { "dlaswp_top", dla_body_laswp_top },
        [DLA_CLASS_LASWP_PAIR] = { "dlaswp_pair", dla_body_laswp_pair },
        [DLA_CLASS_LU_COPY] = { "dgetrf_panel_copy", dla_body_lu_copy },
    };
    if (!ctx || !dla_p)
        return RILL_ERR_INVALID_ARG;
    rill_dla_t *dla = calloc(1, sizeof(*dla));
    if (!dla)
        return RILL_ERR_NO_MEMORY;
    dla->ctx = ctx;
    dla->trmm_block = RILL_DLA_GPU_TRMM_BLOCK; /* (dla_cuda.c says how they were chosen) */
    dla->trinv_leaf = RILL_DLA_GPU_TRINV_LEAF;
    atomic_init(&dla->info, 0);
    rill_status_t s = RILL_SUCCESS;
    int c = 0;
    for (; c < DLA_NB_CLASSES; c++) {
        s = rill_dtd_class_create(ctx, classes[c].name, classes[c].body, &dla->cls[c]);
        if (s != RILL_SUCCESS)
            goto err_classes;
    }
    s = dla_cuda_add_bodies(dla);
    if (s != RILL_SUCCESS)
        goto err_classes;
    s = rill_collection_create(ctx, DLA_REDUCE_MAX * sizeof(double), helper_rank_of, NULL,
                               &dla->helper);
    if (s != RILL_SUCCESS)
        goto err_classes;
    /* tile kernels run one per worker: OpenBLAS must not spawn its own threads inside */
    openblas_set_num_threads(1);
    /* whether any rank has a GPU decides dpotrf's panel method (auto): every rank must
     * insert the same tasks, whatever its own devices */
    double any_gpu = rill_context_ngpus(ctx) > 0;
    if (rill_context_nranks(ctx) > 1 &&
        (s = rill_dla_allreduce_max(dla, &any_gpu, 1)) != RILL_SUCCESS) {
        rill_collection_destroy(&dla->helper);
        goto err_classes;
    }
    dla->gpus_anywhere = any_gpu > 0;
    *dla_p = dla;
    return RILL_SUCCESS;

err_classes:
    while (c-- > 0)
        rill_dtd_class_destroy(&dla->cls[c]);
    free(dla);
    return s;
}

rill_status_t rill_dla_destroy(rill_dla_t **dla_p)
{
    if (!dla_p || !*dla_p)
        return RILL_ERR_INVALID_ARG;
    rill_dla_t *dla = *dla_p;
    for (dla_scratch_t *w = dla->scratch, *next; w; w = next) {
        next = w->next;
        if (rill_collection_destroy(&w->dc) == RILL_SUCCESS) /* else in use: w is its rank_of's */
            free(w);
    }
    rill_collection_destroy(&dla->helper);
    for (int c = DLA_NB_CLASSES - 1; c >= 0; c--)
        rill_dtd_class_destroy(&dla->cls[c]);
    free(dla);
    *dla_p = NULL;
    return RILL_SUCCESS;
}

rill_status_t rill_dla_set_panel(rill_dla_t *dla, rill_dla_panel_t panel)
{
    if (!dla || (panel != RILL_DLA_PANEL_AUTO && panel != RILL_DLA_PANEL_TRSM &&
                 panel != RILL_DLA_PANEL_INVERSE)) {
        fprintf(stderr,
                "[rill dla] error: rill_dla_set_panel: %d is not a panel method (auto %d, "
                "trsm %d, inverse %d)\n",
                (int)panel, RILL_DLA_PANEL_AUTO, RILL_DLA_PANEL_TRSM, RILL_DLA_PANEL_INVERSE);
        return RILL_ERR_INVALID_ARG;
    }
    dla->panel = panel;
    return RILL_SUCCESS;
}

rill_status_t rill_dla_set_dsl(rill_dla_t *dla, rill_dla_dsl_t dsl)
{
    if (!dla || (dsl != RILL_DLA_DSL_DTD && dsl != RILL_DLA_DSL_PTG)) {
        fprintf(stderr,
                "[rill dla] error: rill_dla_set_dsl: %d is not a front end (DTD %d, PTG %d)\n",
                (int)dsl, RILL_DLA_DSL_DTD, RILL_DLA_DSL_PTG);
        return RILL_ERR_INVALID_ARG;
    }
#if !RILL_DLA_HAVE_PTG
    if (dsl == RILL_DLA_DSL_PTG) {
        fprintf(stderr, "[rill dla] error: rill_dla_set_dsl: this Rill was built without its "
                        "PTG compiler (rillcc needs flex and bison): DTD only\n");
        return RILL_ERR_NOT_SUPPORTED;
    }
#endif
    dla->dsl = dsl;
    return RILL_SUCCESS;
}

rill_status_t rill_dla_set_gpu_panel_blocks(rill_dla_t *dla, int trmm_block, int trinv_leaf)
{
    if (!dla || (trmm_block != 0 && trmm_block < 64) || trinv_leaf < 64) {
        fprintf(stderr,
                "[rill dla] error: rill_dla_set_gpu_panel_blocks: trmm_block %d, trinv_leaf %d: "
                "the dtrmm's blocks must be 0 (the whole tile) or at least 64 columns, the "
                "dtrtri's leaves at least 64\n",
                trmm_block, trinv_leaf);
        return RILL_ERR_INVALID_ARG;
    }
    dla->trmm_block = trmm_block;
    dla->trinv_leaf = trinv_leaf;
    return RILL_SUCCESS;
}

rill_dla_panel_t rill_dla_panel(const rill_dla_t *dla)
{
    if (dla->panel != RILL_DLA_PANEL_AUTO)
        return dla->panel;
    return dla->gpus_anywhere ? RILL_DLA_PANEL_INVERSE : RILL_DLA_PANEL_TRSM;
}

/* Inverse tile k is homed on rank k % nranks: the rank does not matter for correctness
 * (the tiles are discarded, never brought home), and spreads the host buffers. */
static int scratch_rank_of(uint64_t key, void *arg)
{
    const dla_scratch_t *w = arg;
    return (int)(key % (uint64_t)w->nranks);
}

rill_collection_t *dla_scratch_get(rill_dla_t *dla, rill_taskpool_t *tp, int nb)
{
    /* this taskpool's, else one no running taskpool uses (DTD orders accesses within one
     * taskpool only); the same choice on every rank, which make the same calls */
    dla_scratch_t *w = NULL;
    for (dla_scratch_t *x = dla->scratch; x && !w; x = x->next)
        if (x->nb == nb && x->tp == tp)
            w = x;
    for (dla_scratch_t *x = dla->scratch; x && !w; x = x->next)
        if (x->nb == nb && !rill_collection_in_use(x->dc))
            w = x;
    if (!w) {
        if (!(w = calloc(1, sizeof(*w))))
            return NULL;
        w->nb = nb;
        w->nranks = rill_context_nranks(dla->ctx);
        if (rill_collection_create(dla->ctx, (size_t)nb * (size_t)nb * sizeof(double),
                                   scratch_rank_of, w, &w->dc) != RILL_SUCCESS) {
            free(w);
            return NULL;
        }
        rill_collection_set_scratch(w->dc); /* never read on the host: no zeroing, no pinning */
        w->next = dla->scratch;
        dla->scratch = w;
    }
    w->tp = tp;
    return w->dc;
}

int rill_dla_info(const rill_dla_t *dla)
{
    return atomic_load_explicit(&((rill_dla_t *)dla)->info, memory_order_relaxed);
}

void rill_dla_info_reset(rill_dla_t *dla)
{
    atomic_store_explicit(&dla->info, 0, memory_order_relaxed);
}

rill_status_t dla_check_tiles(const char *op, const char *name, const rill_matrix_t *A, int nb)
{
    if (rill_matrix_mb(A) != nb || rill_matrix_nb(A) != nb) {
        fprintf(stderr,
                "[rill dla] error: %s: %s has %d x %d tiles; every matrix must have square "
                "%d x %d tiles\n",
                op, name, rill_matrix_mb(A), rill_matrix_nb(A), nb, nb);
        return RILL_ERR_INVALID_ARG;
    }
    return RILL_SUCCESS;
}

void dla_ref_begin(int nthreads, cpu_set_t *saved)
{
    cpu_set_t all;
    pthread_getaffinity_np(pthread_self(), sizeof(*saved), saved);
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; c++)
        CPU_SET(c, &all);
    pthread_setaffinity_np(pthread_self(), sizeof(all), &all);
    openblas_set_num_threads(nthreads);
}

void dla_ref_end(const cpu_set_t *saved)
{
    openblas_set_num_threads(1);
    pthread_setaffinity_np(pthread_self(), sizeof(*saved), saved);
}

rill_status_t dla_wait(rill_taskpool_t **tp_p)
{
    rill_status_t s = rill_taskpool_wait(*tp_p);
    rill_taskpool_destroy(tp_p);
    return s;
}
