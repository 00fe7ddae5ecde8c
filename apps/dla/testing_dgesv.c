/* testing_dgesv: solve A X = B with A general (--kind; LU with partial pivoting, then the
 * interchanges and two triangular solves), timed, with DPLASMA's check
 * ||A X - B||_inf / ((||A||_inf ||X||_inf + ||B||_inf) N eps) (-x). A singular A
 * (--kind singular) must give LAPACK's info and leave B as it was. */
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
    return (2.0 * n * n * n / 3.0 + 2.0 * n * n * t->nrhs) / time_s * 1e-9;
}

/* On rank 0: the scaled residual of the solution x (N x NRHS) against the matrices of
 * --kind and B; a (N x N) and b (N x NRHS): workspace. */
static rill_status_t check_dense(const dla_testing_t *t, const double *x, double *a, double *b,
                                 double *resid_p)
{
    const int n = t->N, nrhs = t->nrhs;
    *resid_p = 0.0;
    if (n == 0 || nrhs == 0)
        return RILL_SUCCESS;
    if (!dla_all_finite(n, nrhs, x, n)) {
        *resid_p = NAN;
        return RILL_ERR_NUMERIC;
    }
    cpu_set_t saved;
    dla_ref_begin(t->cores, &saved);
    dla_testing_kind_dense(t, a);
    rill_dla_dplrnt_dense(n, nrhs, b, n, t->seed + 1);
    const double anorm = dla_norm_inf(n, n, a, n), bnorm = dla_norm_inf(n, nrhs, b, n);
    const double xnorm = dla_norm_inf(n, nrhs, x, n);
    /* b = A x - b */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, nrhs, n, 1.0, a, n, x, n, -1.0, b, n);
    const double rnorm = dla_norm_inf(n, nrhs, b, n);
    dla_ref_end(&saved);
    *resid_p = rnorm / ((anorm * xnorm + bnorm) * n * DBL_EPSILON);
    return RILL_SUCCESS;
}

/* LAPACK's info for the matrix of --kind, on rank 0 (a: N x N workspace). */
static int lapack_info(const dla_testing_t *t, double *a)
{
    lapack_int *piv = malloc((size_t)t->N * sizeof(lapack_int) + 1);
    if (!piv)
        return -1;
    dla_testing_kind_dense(t, a);
    cpu_set_t saved;
    dla_ref_begin(t->cores, &saved);
    int info = (int)LAPACKE_dgetrf(LAPACK_COL_MAJOR, t->N, t->N, a, t->N > 0 ? t->N : 1, piv);
    dla_ref_end(&saved);
    free(piv);
    return info;
}

/* A singular A: every rank has info; B must be as the generator left it. */
static void singular_result(dla_testing_t *t, rill_matrix_t *B, int info)
{
    const size_t nb = (size_t)t->N * t->nrhs;
    double *b = t->rank == 0 ? malloc(nb * sizeof(double) + 1) : NULL;
    double *a = t->rank == 0 ? malloc((size_t)t->N * t->N * sizeof(double) + 1) : NULL;
    if (t->rank == 0 && (!a || !b)) {
        dla_testing_error(t, 1, "out of memory for the check of the singular case");
        free(b);
        b = NULL;
    }
    rill_status_t g = rill_dla_gather(t->dla, B, 0, b);
    if (t->rank == 0 && b && g == RILL_SUCCESS) {
        int linfo = lapack_info(t, a);
        rill_dla_dplrnt_dense(t->N, t->nrhs, a, t->N, t->seed + 1); /* B as generated */
        int same = memcmp(a, b, nb * sizeof(double)) == 0;
        printf("# info %d (LAPACK's on the same matrix: %d), B %s\n", info, linfo,
               same ? "unchanged" : "CHANGED");
        if (linfo != info || !same)
            dla_testing_error(t, 1, "a singular matrix must give LAPACK's info and leave B");
    } else if (g != RILL_SUCCESS) {
        dla_testing_error(t, 1, "gathering B failed: %s", rill_status_string(g));
    }
    free(a);
    free(b);
}

/* One LAPACKE_dgesv call with every core of the process, on rank 0; with -x its solution is
 * checked like Rill's. */
static void run_reference(dla_testing_t *t)
{
    const int ld = t->N > 0 ? t->N : 1;
    for (int r = 0; r < t->nruns && !t->failed; r++) {
        double time_s = 0.0, resid = 0.0;
        rill_status_t cs = RILL_SUCCESS;
        if (t->rank == 0) {
            double *a = malloc((size_t)t->N * t->N * sizeof(double) + 1);
            double *b = malloc((size_t)t->N * t->nrhs * sizeof(double) + 1);
            double *w = t->check ? malloc((size_t)t->N * t->nrhs * sizeof(double) + 1) : NULL;
            lapack_int *piv = malloc((size_t)t->N * sizeof(lapack_int) + 1);
            if (!a || !b || !piv || (t->check && !w)) {
                dla_testing_error(t, 1, "out of memory for the reference matrices");
                cs = RILL_ERR_NO_MEMORY;
            } else {
                dla_testing_kind_dense(t, a);
                rill_dla_dplrnt_dense(t->N, t->nrhs, b, ld, t->seed + 1);
                cpu_set_t saved;
                dla_ref_begin(t->cores, &saved);
                double t0 = dla_testing_now();
                int info = LAPACKE_dgesv(LAPACK_COL_MAJOR, t->N, t->nrhs, a, ld, piv, b, ld);
                time_s = dla_testing_now() - t0;
                dla_ref_end(&saved);
                if (info != 0)
                    dla_testing_error(t, 1, "reference LAPACKE_dgesv returned info %d", info);
                else if (t->check) /* X is in b; a (the factors) and w are the workspace */
                    cs = check_dense(t, b, a, w, &resid);
            }
            free(a);
            free(b);
            free(w);
            free(piv);
        }
        if (t->check)
            cs = dla_check_share(t->dla, cs, &resid);
        else if (cs != RILL_SUCCESS)
            return;
        if (dla_testing_row(t, time_s, gflops_of(t, time_s), cs, resid))
            return;
    }
}

/* The check of a solution: gathered on rank 0, the residual shared. */
static rill_status_t check_solution(dla_testing_t *t, rill_matrix_t *X, double *resid_p)
{
    const int root = t->rank == 0;
    double *x = root ? malloc((size_t)t->N * t->nrhs * sizeof(double) + 1) : NULL;
    double *a = root ? malloc((size_t)t->N * t->N * sizeof(double) + 1) : NULL;
    double *b = root ? malloc((size_t)t->N * t->nrhs * sizeof(double) + 1) : NULL;
    rill_status_t s = root && (!x || !a || !b) ? RILL_ERR_NO_MEMORY : RILL_SUCCESS;
    rill_status_t g = rill_dla_gather(t->dla, X, 0, s == RILL_SUCCESS ? x : NULL);
    if (s == RILL_SUCCESS)
        s = g;
    *resid_p = 0.0;
    if (root && s == RILL_SUCCESS)
        s = check_dense(t, x, a, b, resid_p);
    free(x);
    free(a);
    free(b);
    return dla_check_share(t->dla, s, resid_p);
}

int main(int argc, char **argv)
{
    dla_testing_t t;
    int rc = dla_testing_init(&t, argc, argv, "testing_dgesv",
                              DLA_TESTING_NRHS | DLA_TESTING_KIND | DLA_TESTING_DSL);
    if (rc)
        return rc < 0 ? 0 : rc;
    /* the tiled A and B on every rank; on rank 0 the check's dense A, X, B, or the
     * reference's A, B (and the check's B with -x) */
    const dla_testing_dims_t tiled[] = { { t.N, t.N }, { t.N, t.nrhs } };
    const dla_testing_dims_t dense[] = { { t.N, t.N }, { t.N, t.nrhs }, { t.N, t.nrhs } };
    if (t.ref ? dla_testing_memory(&t, NULL, 0, dense, t.check ? 3 : 2)
              : dla_testing_memory(&t, tiled, 2, dense, t.check ? 3 : 0))
        return dla_testing_fini(&t);
    if (t.ref) {
        run_reference(&t);
        return dla_testing_fini(&t);
    }
    rill_matrix_t *A = NULL, *B = NULL;
    int *ipiv = malloc((size_t)t.N * sizeof(int) + 1);
    if (!ipiv) {
        dla_testing_error(&t, 0, "out of memory for the pivots");
        goto out;
    }
    if (!(A = dla_testing_matrix(&t, "A", t.N, t.N)) ||
        !(B = dla_testing_matrix(&t, "B", t.N, t.nrhs)))
        goto out;

    for (int r = -t.warmup; r < t.nruns && !t.failed; r++) { /* r < 0: warm-up, untimed */
        rill_status_t s;
        if ((s = dla_testing_kind_tiled(&t, A)) != RILL_SUCCESS ||
            (s = rill_dla_dplrnt(t.dla, B, t.seed + 1)) != RILL_SUCCESS) {
            dla_testing_error(&t, 1, "generating A and B failed: %s", rill_status_string(s));
            break;
        }
        dla_testing_barrier(&t);
        int info = 0;
        double t0 = dla_testing_now();
        s = rill_dla_dgesv(t.dla, A, ipiv, B, &info);
        double time_s = dla_testing_now() - t0;
        if (s == RILL_ERR_NUMERIC && info > 0) { /* singular: no solution */
            singular_result(&t, B, info);
            break;
        }
        if (s != RILL_SUCCESS) {
            dla_testing_error(&t, 1, "dgesv failed: %s", rill_status_string(s));
            break;
        }
        if (r < 0)
            continue;
        double resid = 0.0;
        rill_status_t cs = t.check ? check_solution(&t, B, &resid) : RILL_SUCCESS;
        if (dla_testing_row(&t, time_s, gflops_of(&t, time_s), cs, resid))
            break;
    }
out:
    free(ipiv);
    if (B)
        rill_matrix_destroy(&B);
    if (A)
        rill_matrix_destroy(&A);
    return dla_testing_fini(&t);
}
