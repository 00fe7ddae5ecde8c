/* testing_dgetrf: LU with partial pivoting of a general matrix (--kind), timed, with the
 * backward error ||P A - L U||_1 / (||A||_1 N eps) (-x), and the first zero pivot (info)
 * compared with LAPACK's on the same matrix. */
#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dla_internal.h"
#include "testing_common.h"

static double gflops_of(const dla_testing_t *t, double time_s)
{
    double n = t->N;
    return 2.0 * n * n * n / 3.0 / time_s * 1e-9;
}

/* On rank 0: the backward error of lu (the factors, n x n) with pivots ipiv against the
 * matrix of --kind, and LAPACK's info on it. a, w: n x n workspace. */
static rill_status_t check_dense(const dla_testing_t *t, const double *lu, const int *ipiv,
                                 double *a, double *w, double *resid_p, int *lapack_info)
{
    const int n = t->N;
    *resid_p = 0.0;
    *lapack_info = 0;
    if (n == 0) /* (LAPACK refuses a leading dimension of 0) */
        return RILL_SUCCESS;
    dla_testing_kind_dense(t, w);
    lapack_int *piv = malloc((size_t)n * sizeof(lapack_int) + 1);
    if (!piv)
        return RILL_ERR_NO_MEMORY;
    cpu_set_t saved;
    dla_ref_begin(t->cores, &saved);
    *lapack_info = (int)LAPACKE_dgetrf(LAPACK_COL_MAJOR, n, n, w, n, piv);
    free(piv);
    dla_testing_kind_dense(t, a);
    const double anorm = LAPACKE_dlange(LAPACK_COL_MAJOR, '1', n, n, a, n);
    lapack_int *ip = malloc((size_t)n * sizeof(lapack_int) + 1);
    if (!ip) {
        dla_ref_end(&saved);
        return RILL_ERR_NO_MEMORY;
    }
    for (int i = 0; i < n; i++)
        ip[i] = ipiv[i];
    LAPACKE_dlaswp(LAPACK_COL_MAJOR, n, a, n, 1, n, ip, 1); /* P A */
    free(ip);
    /* w = U (zeros below), then L U */
    LAPACKE_dlaset(LAPACK_COL_MAJOR, 'L', n, n, 0.0, 0.0, w, n);
    LAPACKE_dlacpy(LAPACK_COL_MAJOR, 'U', n, n, lu, n, w, n);
    cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n, n, 1.0, lu, n, w,
                n);
    for (size_t e = 0; e < (size_t)n * n; e++)
        a[e] -= w[e];
    const double rnorm = LAPACKE_dlange(LAPACK_COL_MAJOR, '1', n, n, a, n);
    dla_ref_end(&saved);
    *resid_p = n > 0 ? rnorm / ((anorm > 0 ? anorm : 1.0) * n * DBL_EPSILON) : 0.0;
    for (size_t e = 0; e < (size_t)n * n; e++)
        if (!isfinite(lu[e]))
            return RILL_ERR_NUMERIC;
    return RILL_SUCCESS;
}

/* One LAPACKE_dgetrf call with every core of the process, on rank 0. */
static void run_reference(dla_testing_t *t)
{
    for (int r = 0; r < t->nruns && !t->failed; r++) {
        double time_s = 0.0;
        if (t->rank == 0) {
            double *a = malloc((size_t)t->N * t->N * sizeof(double) + 1);
            lapack_int *piv = malloc((size_t)t->N * sizeof(lapack_int) + 1);
            if (!a || !piv) {
                dla_testing_error(t, 1, "out of memory for the reference matrix");
            } else {
                dla_testing_kind_dense(t, a);
                cpu_set_t saved;
                dla_ref_begin(t->cores, &saved);
                double t0 = dla_testing_now();
                int info =
                    (int)LAPACKE_dgetrf(LAPACK_COL_MAJOR, t->N, t->N, a, t->N > 0 ? t->N : 1, piv);
                time_s = dla_testing_now() - t0;
                dla_ref_end(&saved);
                printf("# reference LAPACKE_dgetrf: info %d\n", info);
            }
            free(a);
            free(piv);
        }
        if (dla_testing_row(t, time_s, gflops_of(t, time_s), RILL_SUCCESS, 0.0))
            return;
    }
}

/* One run: generate, factor (timed), and with -x check on rank 0. */
static int run_once(dla_testing_t *t, rill_matrix_t *A, int *ipiv, int timed)
{
    rill_status_t s = dla_testing_kind_tiled(t, A);
    if (s != RILL_SUCCESS) {
        dla_testing_error(t, 1, "generating A failed: %s", rill_status_string(s));
        return 1;
    }
    dla_testing_barrier(t);
    int info = 0;
    double t0 = dla_testing_now();
    s = rill_dla_dgetrf(t->dla, A, ipiv, &info);
    double time_s = dla_testing_now() - t0;
    if (s != RILL_SUCCESS) {
        dla_testing_error(t, 1, "dgetrf failed: %s", rill_status_string(s));
        return 1;
    }
    if (!timed)
        return 0;
    double resid = 0.0;
    rill_status_t cs = RILL_SUCCESS;
    if (t->check) {
        const size_t nn = (size_t)t->N * t->N;
        double *lu = t->rank == 0 ? malloc(nn * sizeof(double) + 1) : NULL;
        cs = t->rank == 0 && !lu ? RILL_ERR_NO_MEMORY : RILL_SUCCESS;
        rill_status_t g = rill_dla_gather(t->dla, A, 0, lu);
        if (cs == RILL_SUCCESS)
            cs = g;
        if (t->rank == 0 && cs == RILL_SUCCESS) {
            double *a = malloc(nn * sizeof(double) + 1), *w = malloc(nn * sizeof(double) + 1);
            int linfo = 0;
            cs = a && w ? check_dense(t, lu, ipiv, a, w, &resid, &linfo) : RILL_ERR_NO_MEMORY;
            if (cs == RILL_SUCCESS || cs == RILL_ERR_NUMERIC) {
                printf("# info %d (LAPACK's on the same matrix: %d)\n", info, linfo);
                if (linfo != info) {
                    fprintf(stderr, "%s: info %d, LAPACK's %d\n", t->name, info, linfo);
                    resid = NAN;
                }
            }
            free(a);
            free(w);
        }
        free(lu);
        cs = dla_check_share(t->dla, cs, &resid);
    }
    return dla_testing_row(t, time_s, gflops_of(t, time_s), cs, resid);
}

int main(int argc, char **argv)
{
    dla_testing_t t;
    int rc = dla_testing_init(&t, argc, argv, "testing_dgetrf", DLA_TESTING_KIND | DLA_TESTING_DSL);
    if (rc)
        return rc < 0 ? 0 : rc;
    /* the tiled A on every rank; on rank 0 the check's factors, matrix and workspace, or
     * the reference's matrix */
    const dla_testing_dims_t tiled[] = { { t.N, t.N } };
    const dla_testing_dims_t dense[] = { { t.N, t.N }, { t.N, t.N }, { t.N, t.N } };
    if (t.ref ? dla_testing_memory(&t, NULL, 0, dense, 1)
              : dla_testing_memory(&t, tiled, 1, dense, t.check ? 3 : 0))
        return dla_testing_fini(&t);
    if (t.rank == 0) {
        static const char *const kinds[] = { "random", "dd (diagonally dominant)",
                                             "pivot (A(0, 0) = 0)", "singular (a zero column)" };
        printf("# matrix: %s\n", kinds[t.kind]);
    }
    if (t.ref) {
        run_reference(&t);
        return dla_testing_fini(&t);
    }
    rill_matrix_t *A = dla_testing_matrix(&t, "A", t.N, t.N);
    int *ipiv = malloc((size_t)t.N * sizeof(int) + 1);
    if (!ipiv)
        dla_testing_error(&t, 0, "out of memory for the pivots");
    for (int r = -t.warmup; A && ipiv && r < t.nruns && !t.failed; r++) /* r < 0: untimed */
        if (run_once(&t, A, ipiv, r >= 0))
            break;
    free(ipiv);
    if (A)
        rill_matrix_destroy(&A);
    return dla_testing_fini(&t);
}
