/* Scaled residual checks in the style of DPLASMA: gather the result on rank 0,
 * regenerate the inputs there from their seeds, compare with LAPACK/BLAS, share the
 * residual with every rank. A result holding NaN or Inf never passes. */
#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dla_internal.h"

/* ------------------------------------------------------------ norms (NaN propagates) */

/* The largest of the n row sums w[0..n-1]; NaN if any is NaN. (A plain `if (v > max)`
 * drops NaN: every comparison with NaN is false.) */
static double max_row_sum(const double *w, int n)
{
    double m = 0.0;
    for (int i = 0; i < n; i++) {
        if (isnan(w[i]))
            return NAN;
        if (w[i] > m)
            m = w[i];
    }
    return m;
}

double dla_norm_inf(int m, int n, const double *a, int lda)
{
    if (m <= 0 || n <= 0)
        return 0.0;
    double *w = calloc((size_t)m, sizeof(double));
    if (!w) { /* no room for the row sums: one row at a time (strided, slower) */
        double r = 0.0;
        for (int i = 0; i < m; i++) {
            double s = 0.0;
            for (int j = 0; j < n; j++)
                s += fabs(a[i + (size_t)j * lda]);
            if (isnan(s))
                return NAN;
            if (s > r)
                r = s;
        }
        return r;
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            w[i] += fabs(a[i + (size_t)j * lda]);
    double r = max_row_sum(w, m);
    free(w);
    return r;
}

double dla_norm_inf_sym_lower(int n, const double *a, int lda)
{
    if (n <= 0)
        return 0.0;
    double *w = calloc((size_t)n, sizeof(double));
    if (!w) {
        double r = 0.0;
        for (int i = 0; i < n; i++) {
            double s = 0.0;
            for (int j = 0; j < n; j++)
                s += fabs(i >= j ? a[i + (size_t)j * lda] : a[j + (size_t)i * lda]);
            if (isnan(s))
                return NAN;
            if (s > r)
                r = s;
        }
        return r;
    }
    for (int j = 0; j < n; j++) {
        w[j] += fabs(a[j + (size_t)j * lda]);
        for (int i = j + 1; i < n; i++) {
            double v = fabs(a[i + (size_t)j * lda]);
            w[i] += v;
            w[j] += v;
        }
    }
    double r = max_row_sum(w, n);
    free(w);
    return r;
}

int dla_all_finite(int m, int n, const double *a, int lda)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            if (!isfinite(a[i + (size_t)j * lda]))
                return 0;
    return 1;
}

/* ------------------------------------------------------------ dense checks */

rill_status_t dla_check_dpotrf_dense(int N, double *l, double *a, double bump, uint64_t seed,
                                     int nthreads, double *resid_p)
{
    *resid_p = 0.0;
    if (N <= 0)
        return RILL_SUCCESS;
    /* only the lower triangle is the result (the upper holds A's untouched upper) */
    if (N > 1)
        LAPACKE_dlaset(LAPACK_COL_MAJOR, 'U', N - 1, N - 1, 0.0, 0.0, l + N, N);
    if (!dla_all_finite(N, N, l, N)) {
        *resid_p = NAN;
        return RILL_ERR_NUMERIC;
    }
    cpu_set_t saved;
    dla_ref_begin(nthreads, &saved);
    rill_dla_dplgsy_dense(N, a, N, bump, seed);
    double anorm = dla_norm_inf_sym_lower(N, a, N);
    /* A - L L^T on the lower triangle */
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, N, N, -1.0, l, N, 1.0, a, N);
    double rnorm = dla_norm_inf_sym_lower(N, a, N);
    dla_ref_end(&saved);
    *resid_p = rnorm / (anorm * N * DBL_EPSILON);
    return RILL_SUCCESS;
}

rill_status_t dla_check_dgemm_dense(rill_dla_trans_t transA, rill_dla_trans_t transB, double alpha,
                                    int Am, int An, uint64_t seedA, int Bm, int Bn, uint64_t seedB,
                                    double beta, uint64_t seedC, int M, int N, const double *c,
                                    double *a, double *b, double *c0, int nthreads, double *resid_p)
{
    *resid_p = 0.0;
    if (M <= 0 || N <= 0)
        return RILL_SUCCESS;
    if (!dla_all_finite(M, N, c, M)) {
        *resid_p = NAN;
        return RILL_ERR_NUMERIC;
    }
    const int K = transA ? Am : An;
    cpu_set_t saved;
    dla_ref_begin(nthreads, &saved);
    rill_dla_dplrnt_dense(Am, An, a, Am > 0 ? Am : 1, seedA);
    rill_dla_dplrnt_dense(Bm, Bn, b, Bm > 0 ? Bm : 1, seedB);
    rill_dla_dplrnt_dense(M, N, c0, M, seedC);
    double anorm = dla_norm_inf(Am, An, a, Am > 0 ? Am : 1);
    double bnorm = dla_norm_inf(Bm, Bn, b, Bm > 0 ? Bm : 1);
    double c0norm = dla_norm_inf(M, N, c0, M);
    /* c0 becomes the reference product, then the difference with the result */
    cblas_dgemm(CblasColMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, M, N, K, alpha, a, Am > 0 ? Am : 1, b,
                Bm > 0 ? Bm : 1, beta, c0, M);
    for (size_t i = 0; i < (size_t)M * N; i++)
        c0[i] -= c[i];
    double rnorm = dla_norm_inf(M, N, c0, M);
    dla_ref_end(&saved);
    double denom =
        (fabs(alpha) * anorm * bnorm + fabs(beta) * c0norm) * (K > 0 ? K : 1) * DBL_EPSILON;
    /* denom is 0 only for a zero operation (alpha A B and beta C0 both 0): plain difference */
    *resid_p = denom != 0.0 ? rnorm / denom : rnorm;
    return RILL_SUCCESS;
}

rill_status_t dla_check_dposv_dense(int N, int NRHS, double bump, uint64_t seedA, uint64_t seedB,
                                    const double *x, double *a, double *b, int nthreads,
                                    double *resid_p)
{
    *resid_p = 0.0;
    if (N <= 0 || NRHS <= 0)
        return RILL_SUCCESS;
    if (!dla_all_finite(N, NRHS, x, N)) {
        *resid_p = NAN;
        return RILL_ERR_NUMERIC;
    }
    cpu_set_t saved;
    dla_ref_begin(nthreads, &saved);
    rill_dla_dplgsy_dense(N, a, N, bump, seedA);
    rill_dla_dplrnt_dense(N, NRHS, b, N, seedB);
    double anorm = dla_norm_inf_sym_lower(N, a, N);
    double bnorm = dla_norm_inf(N, NRHS, b, N);
    double xnorm = dla_norm_inf(N, NRHS, x, N);
    /* b = A x - b */
    cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, N, NRHS, 1.0, a, N, x, N, -1.0, b, N);
    double rnorm = dla_norm_inf(N, NRHS, b, N);
    dla_ref_end(&saved);
    *resid_p = rnorm / ((anorm * xnorm + bnorm) * N * DBL_EPSILON);
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ distributed checks */

rill_status_t dla_check_share(rill_dla_t *dla, rill_status_t s, double *resid_p)
{
    /* a max-reduction: the other ranks put -Inf / 0; NaN travels as a flag (max with NaN
     * is not defined) and the status as its positive opposite */
    double v[3] = { -INFINITY, 0.0, 0.0 };
    if (rill_context_rank(dla->ctx) == 0) {
        v[0] = isnan(*resid_p) ? -INFINITY : *resid_p;
        v[1] = isnan(*resid_p) ? 1.0 : 0.0;
        v[2] = s == RILL_SUCCESS ? 0.0 : -(double)s;
    }
    rill_status_t r = rill_dla_allreduce_max(dla, v, 3);
    if (r != RILL_SUCCESS)
        return r;
    *resid_p = v[1] > 0 ? NAN : v[0];
    return v[2] > 0 ? (rill_status_t)(-(int)v[2]) : RILL_SUCCESS;
}

static double *alloc_dense(size_t m, size_t n)
{
    size_t count = m * n > 0 ? m * n : 1;
    return malloc(count * sizeof(double));
}

rill_status_t rill_dla_check_dpotrf(rill_dla_t *dla, rill_matrix_t *L, double bump, uint64_t seed,
                                    double *resid_p)
{
    if (!dla || !L || !resid_p)
        return RILL_ERR_INVALID_ARG;
    const int N = rill_matrix_n(L);
    const int root = rill_context_rank(dla->ctx) == 0;
    double *l = root ? alloc_dense((size_t)N, (size_t)N) : NULL;
    double *a = root ? alloc_dense((size_t)N, (size_t)N) : NULL;
    rill_status_t s = (root && (!l || !a)) ? RILL_ERR_NO_MEMORY : RILL_SUCCESS;
    /* every rank takes part in the gather even if rank 0 is out of memory */
    rill_status_t g = rill_dla_gather(dla, L, 0, s == RILL_SUCCESS ? l : NULL);
    if (root && s == RILL_SUCCESS)
        s = g;
    double resid = 0.0;
    if (root && s == RILL_SUCCESS)
        s = dla_check_dpotrf_dense(N, l, a, bump, seed, rill_context_nworkers(dla->ctx), &resid);
    free(l);
    free(a);
    *resid_p = resid;
    return dla_check_share(dla, s, resid_p);
}

rill_status_t rill_dla_check_dgemm(rill_dla_t *dla, rill_dla_trans_t transA,
                                   rill_dla_trans_t transB, double alpha, int Am, int An,
                                   uint64_t seedA, int Bm, int Bn, uint64_t seedB, double beta,
                                   uint64_t seedC, rill_matrix_t *C, double *resid_p)
{
    if (!dla || !C || !resid_p)
        return RILL_ERR_INVALID_ARG;
    const int M = rill_matrix_m(C), N = rill_matrix_n(C);
    const int root = rill_context_rank(dla->ctx) == 0;
    double *c = NULL, *a = NULL, *b = NULL, *c0 = NULL;
    rill_status_t s = RILL_SUCCESS;
    if (root) {
        c = alloc_dense((size_t)M, (size_t)N);
        c0 = alloc_dense((size_t)M, (size_t)N);
        a = alloc_dense((size_t)Am, (size_t)An);
        b = alloc_dense((size_t)Bm, (size_t)Bn);
        if (!c || !c0 || !a || !b)
            s = RILL_ERR_NO_MEMORY;
    }
    rill_status_t g = rill_dla_gather(dla, C, 0, s == RILL_SUCCESS ? c : NULL);
    if (root && s == RILL_SUCCESS)
        s = g;
    double resid = 0.0;
    if (root && s == RILL_SUCCESS)
        s = dla_check_dgemm_dense(transA, transB, alpha, Am, An, seedA, Bm, Bn, seedB, beta, seedC,
                                  M, N, c, a, b, c0, rill_context_nworkers(dla->ctx), &resid);
    free(a);
    free(b);
    free(c);
    free(c0);
    *resid_p = resid;
    return dla_check_share(dla, s, resid_p);
}

rill_status_t rill_dla_check_dposv(rill_dla_t *dla, double bump, uint64_t seedA, uint64_t seedB,
                                   rill_matrix_t *X, double *resid_p)
{
    if (!dla || !X || !resid_p)
        return RILL_ERR_INVALID_ARG;
    const int N = rill_matrix_m(X), NRHS = rill_matrix_n(X);
    const int root = rill_context_rank(dla->ctx) == 0;
    double *x = NULL, *a = NULL, *b = NULL;
    rill_status_t s = RILL_SUCCESS;
    if (root) {
        x = alloc_dense((size_t)N, (size_t)NRHS);
        a = alloc_dense((size_t)N, (size_t)N);
        b = alloc_dense((size_t)N, (size_t)NRHS);
        if (!x || !a || !b)
            s = RILL_ERR_NO_MEMORY;
    }
    rill_status_t g = rill_dla_gather(dla, X, 0, s == RILL_SUCCESS ? x : NULL);
    if (root && s == RILL_SUCCESS)
        s = g;
    double resid = 0.0;
    if (root && s == RILL_SUCCESS)
        s = dla_check_dposv_dense(N, NRHS, bump, seedA, seedB, x, a, b,
                                  rill_context_nworkers(dla->ctx), &resid);
    free(x);
    free(a);
    free(b);
    *resid_p = resid;
    return dla_check_share(dla, s, resid_p);
}
