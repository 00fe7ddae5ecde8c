/* Scaled residual checks in the style of DPLASMA: gather the result on rank 0,
 * regenerate the inputs there from their seeds, compare with LAPACK/BLAS, share the
 * residual with every rank. */
#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dla_internal.h"

/* Share rank 0's residual (NaN stays NaN: max ignores nothing, so carry a flag). */
static rill_status_t share_resid(rill_dla_t *dla, rill_status_t s, double *resid_p)
{
    double v[2] = { -INFINITY, -INFINITY };
    if (rill_context_rank(dla->ctx) == 0) {
        v[0] = isnan(*resid_p) ? INFINITY : *resid_p;
        v[1] = s == RILL_SUCCESS ? 0.0 : -(double)s;
    }
    rill_status_t r = rill_dla_allreduce_max(dla, v, 2);
    if (r != RILL_SUCCESS)
        return r;
    *resid_p = v[0];
    return v[1] > 0 ? (rill_status_t)(-(int)v[1]) : RILL_SUCCESS;
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
    if (root && s == RILL_SUCCESS && N > 0) {
        cpu_set_t saved;
        dla_ref_begin(rill_context_nworkers(dla->ctx), &saved);
        rill_dla_dplgsy_dense(N, a, N, bump, seed);
        double anorm = LAPACKE_dlansy(LAPACK_COL_MAJOR, 'I', 'L', N, a, N);
        /* A - L L^T on the lower triangle (the upper of l holds A's untouched upper) */
        LAPACKE_dlaset(LAPACK_COL_MAJOR, 'U', N - 1, N - 1, 0.0, 0.0, l + N, N);
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, N, N, -1.0, l, N, 1.0, a, N);
        double rnorm = LAPACKE_dlansy(LAPACK_COL_MAJOR, 'I', 'L', N, a, N);
        dla_ref_end(&saved);
        resid = rnorm / (anorm * N * DBL_EPSILON);
    }
    free(l);
    free(a);
    *resid_p = resid;
    return share_resid(dla, s, resid_p);
}

rill_status_t rill_dla_check_dgemm(rill_dla_t *dla, rill_dla_trans_t transA,
                                   rill_dla_trans_t transB, double alpha, int Am, int An,
                                   uint64_t seedA, int Bm, int Bn, uint64_t seedB, double beta,
                                   uint64_t seedC, rill_matrix_t *C, double *resid_p)
{
    if (!dla || !C || !resid_p)
        return RILL_ERR_INVALID_ARG;
    const int M = rill_matrix_m(C), N = rill_matrix_n(C);
    const int K = transA ? Am : An;
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
    if (root && s == RILL_SUCCESS && M > 0 && N > 0) {
        cpu_set_t saved;
        dla_ref_begin(rill_context_nworkers(dla->ctx), &saved);
        rill_dla_dplrnt_dense(Am, An, a, Am > 0 ? Am : 1, seedA);
        rill_dla_dplrnt_dense(Bm, Bn, b, Bm > 0 ? Bm : 1, seedB);
        rill_dla_dplrnt_dense(M, N, c0, M, seedC);
        double anorm = Am && An ? LAPACKE_dlange(LAPACK_COL_MAJOR, 'I', Am, An, a, Am) : 0.0;
        double bnorm = Bm && Bn ? LAPACKE_dlange(LAPACK_COL_MAJOR, 'I', Bm, Bn, b, Bm) : 0.0;
        double c0norm = LAPACKE_dlange(LAPACK_COL_MAJOR, 'I', M, N, c0, M);
        /* c0 becomes the reference product, then the difference with Rill's result */
        cblas_dgemm(CblasColMajor, transA ? CblasTrans : CblasNoTrans,
                    transB ? CblasTrans : CblasNoTrans, M, N, K, alpha, a, Am > 0 ? Am : 1, b,
                    Bm > 0 ? Bm : 1, beta, c0, M);
        for (size_t i = 0; i < (size_t)M * N; i++)
            c0[i] -= c[i];
        double rnorm = LAPACKE_dlange(LAPACK_COL_MAJOR, 'I', M, N, c0, M);
        dla_ref_end(&saved);
        double denom =
            (fabs(alpha) * anorm * bnorm + fabs(beta) * c0norm) * (K > 0 ? K : 1) * DBL_EPSILON;
        resid = denom > 0 ? rnorm / denom : rnorm;
    }
    free(a);
    free(b);
    free(c);
    free(c0);
    *resid_p = resid;
    return share_resid(dla, s, resid_p);
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
    if (root && s == RILL_SUCCESS && N > 0 && NRHS > 0) {
        cpu_set_t saved;
        dla_ref_begin(rill_context_nworkers(dla->ctx), &saved);
        rill_dla_dplgsy_dense(N, a, N, bump, seedA);
        rill_dla_dplrnt_dense(N, NRHS, b, N, seedB);
        double anorm = LAPACKE_dlansy(LAPACK_COL_MAJOR, 'I', 'L', N, a, N);
        double bnorm = LAPACKE_dlange(LAPACK_COL_MAJOR, 'I', N, NRHS, b, N);
        double xnorm = LAPACKE_dlange(LAPACK_COL_MAJOR, 'I', N, NRHS, x, N);
        /* b = A x - b */
        cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, N, NRHS, 1.0, a, N, x, N, -1.0, b, N);
        double rnorm = LAPACKE_dlange(LAPACK_COL_MAJOR, 'I', N, NRHS, b, N);
        dla_ref_end(&saved);
        resid = rnorm / ((anorm * xnorm + bnorm) * N * DBL_EPSILON);
    }
    free(x);
    free(a);
    free(b);
    *resid_p = resid;
    return share_resid(dla, s, resid_p);
}
