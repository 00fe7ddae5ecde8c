/* Tiled algorithms as DTD task insertions: potrf (lower, right-looking), gemm (SUMMA),
 * trsm (left, lower), syrk (lower), potrs and posv; plus their synchronous drivers. */
#include <stdio.h>

#include "dla_internal.h"

#define INSERT(...) rill_dtd_insert_task(__VA_ARGS__, RILL_DTD_ARG_END)

static rill_status_t not_supported(const char *op, const char *what)
{
    fprintf(stderr, "[rill dla] error: %s: %s is not implemented\n", op, what);
    return RILL_ERR_NOT_SUPPORTED;
}

static rill_status_t bad_shape(const char *op, const char *what, int a, int b)
{
    fprintf(stderr, "[rill dla] error: %s: %s (%d vs %d)\n", op, what, a, b);
    return RILL_ERR_INVALID_ARG;
}

/* (dla_internal.h) the sizes and leading dimensions are the tiles' own. */
rill_status_t dla_gemm_tile(rill_dla_t *dla, rill_taskpool_t *tp, int64_t prio, int transA,
                            int transB, double alpha, double beta, int k, rill_matrix_t *A, int ai,
                            int aj, rill_matrix_t *B, int bi, int bj, rill_matrix_t *C, int ci,
                            int cj)
{
    dla_kargs_t g = { .m = rill_matrix_tile_rows(C, ci),
                      .n = rill_matrix_tile_cols(C, cj),
                      .k = k,
                      .lda = rill_matrix_tile_rows(A, ai),
                      .ldb = rill_matrix_tile_rows(B, bi),
                      .ldc = rill_matrix_tile_rows(C, ci),
                      .transA = transA,
                      .transB = transB,
                      .alpha = alpha,
                      .beta = beta,
                      .dla = dla };
    return INSERT(tp, dla->cls[DLA_CLASS_GEMM], dla_prio(prio), RILL_DTD_VALUE, sizeof(g), &g,
                  RILL_DTD_INPUT, rill_matrix_tile(A, ai, aj), RILL_DTD_INPUT,
                  rill_matrix_tile(B, bi, bj), RILL_DTD_INOUT | RILL_DTD_AFFINITY,
                  rill_matrix_tile(C, ci, cj));
}

/* (dla_internal.h) B(bi, bj) = alpha op(T)^-1 B(bi, bj), T the uplo triangle of the
 * diagonal tile A(k, k); the sizes and leading dimensions are the tiles' own. */
rill_status_t dla_trsm_left_tile(rill_dla_t *dla, rill_taskpool_t *tp, int64_t prio, int uplo,
                                 int trans, int diag, double alpha, rill_matrix_t *A, int k,
                                 rill_matrix_t *B, int bi, int bj)
{
    const int mk = rill_matrix_tile_rows(B, bi);
    dla_kargs_t t = { .m = mk,
                      .n = rill_matrix_tile_cols(B, bj),
                      .lda = rill_matrix_tile_rows(A, k),
                      .ldb = mk,
                      .side = RILL_DLA_LEFT,
                      .uplo = uplo,
                      .transA = trans,
                      .diag = diag,
                      .alpha = alpha,
                      .dla = dla };
    return INSERT(tp, dla->cls[DLA_CLASS_TRSM], dla_prio(prio), RILL_DTD_VALUE, sizeof(t), &t,
                  RILL_DTD_INPUT, rill_matrix_tile(A, k, k), RILL_DTD_INOUT | RILL_DTD_AFFINITY,
                  rill_matrix_tile(B, bi, bj));
}

/* ------------------------------------------------------------ dpotrf */

/* DPLASMA's zpotrf_L priority of TRSM(m, k) (mt tile rows). */
static int64_t prio_trsm(int64_t mt, int64_t m, int64_t k)
{
    return (mt - m) * (mt - m) * (mt - m) + 3 * ((2 * mt) - k - m - 1) * (m - k);
}

rill_status_t rill_dla_dpotrf_insert(rill_dla_t *dla, rill_taskpool_t *tp, rill_dla_uplo_t uplo,
                                     rill_matrix_t *A)
{
    if (!dla || !tp || !A)
        return RILL_ERR_INVALID_ARG;
    if (uplo != RILL_DLA_LOWER)
        return not_supported("dpotrf", "uplo = upper");
    int nb = rill_matrix_nb(A);
    rill_status_t s = dla_check_tiles("dpotrf", "A", A, nb);
    if (s != RILL_SUCCESS)
        return s;
    if (rill_matrix_m(A) != rill_matrix_n(A))
        return bad_shape("dpotrf", "A must be square", rill_matrix_m(A), rill_matrix_n(A));
    const int nt = rill_matrix_nt(A);
    const int64_t mt = nt;
    rill_dtd_class_t *potrf = dla->cls[DLA_CLASS_POTRF], *trsm = dla->cls[DLA_CLASS_TRSM],
                     *syrk = dla->cls[DLA_CLASS_SYRK], *trtri = dla->cls[DLA_CLASS_TRTRI],
                     *trmm = dla->cls[DLA_CLASS_TRMM];
    /* the panel by the inverse of its diagonal tile: one dtrtri, then dtrmm per tile */
    rill_dla_panel_t panel = rill_dla_panel(dla);
    rill_collection_t *inv = NULL;
    if (panel == RILL_DLA_PANEL_INVERSE && nt > 1 && !(inv = dla_scratch_get(dla, tp, nb)))
        return RILL_ERR_NO_MEMORY;

    /* Priorities of DPLASMA's zpotrf_L: the panel first, then what feeds the next panel,
     * trailing updates by distance to the diagonal. */
    for (int k = 0; k < nt; k++) {
        const int nk = rill_matrix_tile_cols(A, k);
        rill_data_t *Akk = rill_matrix_tile(A, k, k);
        dla_kargs_t a = {
            .n = nk, .lda = nk, .uplo = RILL_DLA_LOWER, .offset = k * nb, .dla = dla
        };
        /* the critical path (POTRF, the inverse, the first solve) is RILL_DTD_URGENT: chains
         * of small kernels, which a GPU runs at its greatest stream priority (a recursive
         * inverse took 30-58 ms among 7 streams of gemms at the normal priority, 6-8 ms at
         * the greatest, one H100) */
        s = INSERT(tp, potrf, dla_prio((mt - k) * (mt - k) * (mt - k)), RILL_DTD_VALUE, sizeof(a),
                   &a, RILL_DTD_INOUT | RILL_DTD_AFFINITY, Akk, RILL_DTD_URGENT, 1);
        if (s != RILL_SUCCESS)
            return s;
        /* L(k,k)^-1, on the POTRF's rank, for the tiles below the first: the first one's
         * dtrsm is on the critical path (POTRF, its solve, the next diagonal tile's update,
         * the next POTRF) and starts without waiting for the inverse, which the others
         * need only a panel later; a panel of fewer than three such tiles saves less than
         * the inverse costs */
        rill_data_t *Wk = NULL;
        if (inv && nt - k - 2 >= 3) {
            if (!(Wk = rill_collection_data_of(inv, (uint64_t)k)))
                return RILL_ERR_NO_MEMORY;
            dla_kargs_t w = { .n = nk, .lda = nk, .ldw = nk, .dla = dla };
            s = INSERT(tp, trtri, dla_prio(prio_trsm(mt, k + 1, k) - 1), /* after the 1st solve */
                       RILL_DTD_VALUE, sizeof(w), &w, RILL_DTD_INPUT | RILL_DTD_AFFINITY, Akk,
                       RILL_DTD_OUTPUT, Wk, RILL_DTD_URGENT, 1);
            if (s != RILL_SUCCESS)
                return s;
        }
        for (int m = k + 1; m < nt; m++) {
            /* A(m,k) = A(m,k) L(k,k)^-T */
            const int mm = rill_matrix_tile_rows(A, m);
            dla_kargs_t t = { .m = mm,
                              .n = nk,
                              .lda = nk,
                              .ldb = mm,
                              .side = RILL_DLA_RIGHT,
                              .uplo = RILL_DLA_LOWER,
                              .transA = RILL_DLA_TRANS,
                              .diag = RILL_DLA_NONUNIT,
                              .alpha = 1.0,
                              .dla = dla };
            int64_t p = prio_trsm(mt, m, k);
            if (Wk && m > k + 1) { /* A(m,k) = A(m,k) W^T, W = L(k,k)^-1 */
                t.ldw = nk;
                s = INSERT(tp, trmm, dla_prio(p), RILL_DTD_VALUE, sizeof(t), &t, RILL_DTD_INPUT, Wk,
                           RILL_DTD_INOUT | RILL_DTD_AFFINITY, rill_matrix_tile(A, m, k));
            } else {
                s = INSERT(tp, trsm, dla_prio(p), RILL_DTD_VALUE, sizeof(t), &t, RILL_DTD_INPUT,
                           Akk, RILL_DTD_INOUT | RILL_DTD_AFFINITY, rill_matrix_tile(A, m, k),
                           RILL_DTD_URGENT, m == k + 1); /* the first solve */
            }
            if (s != RILL_SUCCESS)
                return s;
        }
        /* the inverse is scratch: nothing brings it home */
        if (Wk && (s = rill_dtd_data_discard(tp, Wk)) != RILL_SUCCESS)
            return s;
        for (int m = k + 1; m < nt; m++) {
            const int mm = rill_matrix_tile_rows(A, m);
            rill_data_t *Amk = rill_matrix_tile(A, m, k);
            /* A(m,m) -= A(m,k) A(m,k)^T */
            dla_kargs_t y = { .n = mm,
                              .k = nk,
                              .lda = mm,
                              .ldc = mm,
                              .uplo = RILL_DLA_LOWER,
                              .transA = RILL_DLA_NOTRANS,
                              .alpha = -1.0,
                              .beta = 1.0,
                              .dla = dla };
            int64_t p = (mt - m) * (mt - m) * (mt - m) + 3 * (m - k);
            s = INSERT(tp, syrk, dla_prio(p), RILL_DTD_VALUE, sizeof(y), &y, RILL_DTD_INPUT, Amk,
                       RILL_DTD_INOUT | RILL_DTD_AFFINITY, rill_matrix_tile(A, m, m));
            if (s != RILL_SUCCESS)
                return s;
            for (int n = k + 1; n < m; n++) {
                /* A(m,n) -= A(m,k) A(n,k)^T */
                int64_t q = (mt - m) * (mt - m) * (mt - m) + 3 * ((2 * mt) - m - n - 3) * (m - n) +
                            6 * (n - k);
                s = dla_gemm_tile(dla, tp, q, RILL_DLA_NOTRANS, RILL_DLA_TRANS, -1.0, 1.0, nk, A, m,
                                  k, A, n, k, A, m, n);
                if (s != RILL_SUCCESS)
                    return s;
            }
        }
    }
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ dgemm */

rill_status_t rill_dla_dgemm_insert(rill_dla_t *dla, rill_taskpool_t *tp, rill_dla_trans_t transA,
                                    rill_dla_trans_t transB, double alpha, rill_matrix_t *A,
                                    rill_matrix_t *B, double beta, rill_matrix_t *C)
{
    if (!dla || !tp || !A || !B || !C)
        return RILL_ERR_INVALID_ARG;
    const int nb = rill_matrix_nb(C);
    rill_status_t s;
    if ((s = dla_check_tiles("dgemm", "A", A, nb)) != RILL_SUCCESS ||
        (s = dla_check_tiles("dgemm", "B", B, nb)) != RILL_SUCCESS ||
        (s = dla_check_tiles("dgemm", "C", C, nb)) != RILL_SUCCESS)
        return s;
    const int M = rill_matrix_m(C), N = rill_matrix_n(C);
    const int opAm = transA ? rill_matrix_n(A) : rill_matrix_m(A);
    const int K = transA ? rill_matrix_m(A) : rill_matrix_n(A);
    const int opBk = transB ? rill_matrix_n(B) : rill_matrix_m(B);
    const int opBn = transB ? rill_matrix_m(B) : rill_matrix_n(B);
    if (opAm != M)
        return bad_shape("dgemm", "rows of op(A) differ from rows of C", opAm, M);
    if (opBn != N)
        return bad_shape("dgemm", "columns of op(B) differ from columns of C", opBn, N);
    if (opBk != K)
        return bad_shape("dgemm", "columns of op(A) differ from rows of op(B)", K, opBk);
    const int mt = rill_matrix_mt(C), nt = rill_matrix_nt(C), kt = (K + nb - 1) / nb;

    if (kt == 0) { /* no product: C = beta C */
        if (beta == 1.0)
            return RILL_SUCCESS;
        for (int i = 0; i < mt; i++)
            for (int j = 0; j < nt; j++) {
                dla_kargs_t a = { .m = rill_matrix_tile_rows(C, i),
                                  .n = rill_matrix_tile_cols(C, j),
                                  .ldc = rill_matrix_tile_rows(C, i),
                                  .beta = beta,
                                  .dla = dla };
                s = INSERT(tp, dla->cls[DLA_CLASS_SCALE], 0, RILL_DTD_VALUE, sizeof(a), &a,
                           RILL_DTD_INOUT | RILL_DTD_AFFINITY, rill_matrix_tile(C, i, j));
                if (s != RILL_SUCCESS)
                    return s;
            }
        return RILL_SUCCESS;
    }

    /* SUMMA order: step k updates every C(i,j) with A(i,k) and B(k,j); k outermost so
     * that a step's broadcasts of A(:,k) and B(k,:) overlap the previous step's work. */
    for (int k = 0; k < kt; k++) {
        const int kk = transA ? rill_matrix_tile_rows(A, k) : rill_matrix_tile_cols(A, k);
        for (int i = 0; i < mt; i++)
            for (int j = 0; j < nt; j++) {
                s = dla_gemm_tile(dla, tp, kt - k, transA, transB, alpha, k == 0 ? beta : 1.0, kk,
                                  A, transA ? k : i, transA ? i : k, B, transB ? j : k,
                                  transB ? k : j, C, i, j);
                if (s != RILL_SUCCESS)
                    return s;
            }
    }
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ dtrsm */

rill_status_t rill_dla_dtrsm_insert(rill_dla_t *dla, rill_taskpool_t *tp, rill_dla_side_t side,
                                    rill_dla_uplo_t uplo, rill_dla_trans_t trans,
                                    rill_dla_diag_t diag, double alpha, rill_matrix_t *A,
                                    rill_matrix_t *B)
{
    if (!dla || !tp || !A || !B)
        return RILL_ERR_INVALID_ARG;
    if (side != RILL_DLA_LEFT)
        return not_supported("dtrsm", "side = right");
    const int nb = rill_matrix_nb(A);
    rill_status_t s;
    if ((s = dla_check_tiles("dtrsm", "A", A, nb)) != RILL_SUCCESS ||
        (s = dla_check_tiles("dtrsm", "B", B, nb)) != RILL_SUCCESS)
        return s;
    if (rill_matrix_m(A) != rill_matrix_n(A))
        return bad_shape("dtrsm", "A must be square", rill_matrix_m(A), rill_matrix_n(A));
    if (rill_matrix_m(A) != rill_matrix_m(B))
        return bad_shape("dtrsm", "A and B must have as many rows", rill_matrix_m(A),
                         rill_matrix_m(B));
    const int mt = rill_matrix_mt(B), nt = rill_matrix_nt(B);

    /* op(A) lower (lower and NoTrans, upper and Trans): forward substitution (k = step),
     * else backward (k = mt-1-step) */
    const bool forward = (uplo == RILL_DLA_LOWER) == (trans == RILL_DLA_NOTRANS);
    const bool notrans = trans == RILL_DLA_NOTRANS;
    for (int step = 0; step < mt; step++) {
        const int k = forward ? step : mt - 1 - step;
        const double lalpha = step == 0 ? alpha : 1.0;
        const int mk = rill_matrix_tile_rows(B, k);
        for (int n = 0; n < nt; n++) {
            s = dla_trsm_left_tile(dla, tp, 2 * (int64_t)(mt - step), uplo, trans, diag, lalpha, A,
                                   k, B, k, n);
            if (s != RILL_SUCCESS)
                return s;
        }
        /* update the rows still to solve: B(m,:) = lalpha B(m,:) - op(A)(m,k) B(k,:), where
         * op(A)(m,k) is A(m,k) or A(k,m)^T */
        for (int m = 0; m < mt; m++) {
            if (forward ? m <= k : m >= k)
                continue;
            for (int n = 0; n < nt; n++) {
                int64_t d = forward ? m - k : k - m;
                s = dla_gemm_tile(dla, tp, 2 * (int64_t)(mt - step) - d, trans, RILL_DLA_NOTRANS,
                                  -1.0, lalpha, mk, A, notrans ? m : k, notrans ? k : m, B, k, n, B,
                                  m, n);
                if (s != RILL_SUCCESS)
                    return s;
            }
        }
    }
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ dsyrk */

rill_status_t rill_dla_dsyrk_insert(rill_dla_t *dla, rill_taskpool_t *tp, rill_dla_uplo_t uplo,
                                    rill_dla_trans_t trans, double alpha, rill_matrix_t *A,
                                    double beta, rill_matrix_t *C)
{
    if (!dla || !tp || !A || !C)
        return RILL_ERR_INVALID_ARG;
    if (uplo != RILL_DLA_LOWER)
        return not_supported("dsyrk", "uplo = upper");
    const int nb = rill_matrix_nb(C);
    rill_status_t s;
    if ((s = dla_check_tiles("dsyrk", "A", A, nb)) != RILL_SUCCESS ||
        (s = dla_check_tiles("dsyrk", "C", C, nb)) != RILL_SUCCESS)
        return s;
    const int N = rill_matrix_n(C);
    const int opAn = trans ? rill_matrix_n(A) : rill_matrix_m(A);
    const int K = trans ? rill_matrix_m(A) : rill_matrix_n(A);
    if (rill_matrix_m(C) != N)
        return bad_shape("dsyrk", "C must be square", rill_matrix_m(C), N);
    if (opAn != N)
        return bad_shape("dsyrk", "rows of op(A) differ from the order of C", opAn, N);
    const int nt = rill_matrix_nt(C), kt = (K + nb - 1) / nb;
    if (kt == 0 && beta != 1.0)
        return not_supported("dsyrk", "K = 0 with beta != 1");
    for (int k = 0; k < kt; k++) {
        const int kk = trans ? rill_matrix_tile_rows(A, k) : rill_matrix_tile_cols(A, k);
        for (int m = 0; m < nt; m++) {
            const int mm = rill_matrix_tile_rows(C, m);
            rill_data_t *Amk = trans ? rill_matrix_tile(A, k, m) : rill_matrix_tile(A, m, k);
            const int ldam = trans ? kk : mm;
            const double lbeta = k == 0 ? beta : 1.0;
            dla_kargs_t y = { .n = mm,
                              .k = kk,
                              .lda = ldam,
                              .ldc = mm,
                              .uplo = RILL_DLA_LOWER,
                              .transA = trans,
                              .alpha = alpha,
                              .beta = lbeta,
                              .dla = dla };
            s = INSERT(tp, dla->cls[DLA_CLASS_SYRK], dla_prio(kt - k), RILL_DTD_VALUE, sizeof(y),
                       &y, RILL_DTD_INPUT, Amk, RILL_DTD_INOUT | RILL_DTD_AFFINITY,
                       rill_matrix_tile(C, m, m));
            if (s != RILL_SUCCESS)
                return s;
            for (int n = 0; n < m; n++) {
                /* C(m,n) += alpha op(A)(m,:) op(A)(n,:)^T */
                s = dla_gemm_tile(dla, tp, kt - k, trans, trans ? RILL_DLA_NOTRANS : RILL_DLA_TRANS,
                                  alpha, lbeta, kk, A, trans ? k : m, trans ? m : k, A,
                                  trans ? k : n, trans ? n : k, C, m, n);
                if (s != RILL_SUCCESS)
                    return s;
            }
        }
    }
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ dpotrs, dposv */

rill_status_t rill_dla_dpotrs_insert(rill_dla_t *dla, rill_taskpool_t *tp, rill_dla_uplo_t uplo,
                                     rill_matrix_t *A, rill_matrix_t *B)
{
    if (uplo != RILL_DLA_LOWER)
        return not_supported("dpotrs", "uplo = upper");
    /* A = L L^T: solve L Y = B, then L^T X = Y */
    rill_status_t s = rill_dla_dtrsm_insert(dla, tp, RILL_DLA_LEFT, RILL_DLA_LOWER,
                                            RILL_DLA_NOTRANS, RILL_DLA_NONUNIT, 1.0, A, B);
    if (s != RILL_SUCCESS)
        return s;
    return rill_dla_dtrsm_insert(dla, tp, RILL_DLA_LEFT, RILL_DLA_LOWER, RILL_DLA_TRANS,
                                 RILL_DLA_NONUNIT, 1.0, A, B);
}

rill_status_t rill_dla_dposv_insert(rill_dla_t *dla, rill_taskpool_t *tp, rill_dla_uplo_t uplo,
                                    rill_matrix_t *A, rill_matrix_t *B)
{
    if (!B)
        return RILL_ERR_INVALID_ARG;
    rill_status_t s = rill_dla_dpotrf_insert(dla, tp, uplo, A);
    if (s != RILL_SUCCESS)
        return s;
    return rill_dla_dpotrs_insert(dla, tp, uplo, A, B);
}

/* ------------------------------------------------------------ synchronous drivers */

rill_status_t rill_dla_info_allreduce(rill_dla_t *dla, int *info_p)
{
    if (!dla || !info_p)
        return RILL_ERR_INVALID_ARG;
    /* the smallest positive minor, as a max of negated values */
    int mine = rill_dla_info(dla);
    double v = mine > 0 ? -(double)mine : -1e300;
    rill_status_t r = rill_dla_allreduce_max(dla, &v, 1);
    if (r != RILL_SUCCESS)
        return r;
    *info_p = v > -1e300 ? (int)-v : 0;
    return RILL_SUCCESS;
}

/* Wait; a POTRF failure becomes RILL_ERR_NUMERIC with the leading minor on every rank. */
static rill_status_t wait_factorization(rill_dla_t *dla, rill_taskpool_t **tp_p, rill_status_t s,
                                        int *info_p)
{
    rill_status_t w = dla_wait(tp_p);
    if (s != RILL_SUCCESS)
        return s;
    /* every rank takes part, whatever its own wait said: the failing task ran on one */
    int info = 0;
    rill_status_t r = rill_dla_info_allreduce(dla, &info);
    if (info_p)
        *info_p = info;
    if (info > 0)
        return RILL_ERR_NUMERIC;
    return w != RILL_SUCCESS ? w : r;
}

rill_status_t rill_dla_dpotrf(rill_dla_t *dla, rill_dla_uplo_t uplo, rill_matrix_t *A, int *info_p)
{
    if (!dla || !A)
        return RILL_ERR_INVALID_ARG;
    rill_taskpool_t *tp;
    rill_status_t s = rill_dtd_taskpool_create(dla->ctx, &tp);
    if (s != RILL_SUCCESS)
        return s;
    rill_dla_info_reset(dla);
    s = rill_dla_dpotrf_insert(dla, tp, uplo, A);
    return wait_factorization(dla, &tp, s, info_p);
}

rill_status_t rill_dla_dposv(rill_dla_t *dla, rill_dla_uplo_t uplo, rill_matrix_t *A,
                             rill_matrix_t *B, int *info_p)
{
    if (!dla || !A || !B)
        return RILL_ERR_INVALID_ARG;
    rill_taskpool_t *tp;
    rill_status_t s = rill_dtd_taskpool_create(dla->ctx, &tp);
    if (s != RILL_SUCCESS)
        return s;
    rill_dla_info_reset(dla);
    s = rill_dla_dposv_insert(dla, tp, uplo, A, B);
    return wait_factorization(dla, &tp, s, info_p);
}

rill_status_t rill_dla_dgemm(rill_dla_t *dla, rill_dla_trans_t transA, rill_dla_trans_t transB,
                             double alpha, rill_matrix_t *A, rill_matrix_t *B, double beta,
                             rill_matrix_t *C)
{
    if (!dla)
        return RILL_ERR_INVALID_ARG;
    rill_taskpool_t *tp;
    rill_status_t s = rill_dtd_taskpool_create(dla->ctx, &tp);
    if (s != RILL_SUCCESS)
        return s;
    s = rill_dla_dgemm_insert(dla, tp, transA, transB, alpha, A, B, beta, C);
    rill_status_t w = dla_wait(&tp);
    return s != RILL_SUCCESS ? s : w;
}
