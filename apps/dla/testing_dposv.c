/* testing_dposv: solve A X = B with A random SPD (Cholesky, then two triangular solves,
 * in one taskpool), timed, with DPLASMA's check
 * ||A X - B||_inf / ((||A||_inf ||X||_inf + ||B||_inf) N eps). */
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>

#include "dla_internal.h"
#include "testing_common.h"

static double gflops_of(const dla_testing_t *t, double time_s)
{
    double n = t->N;
    return (n * n * n / 3.0 + 2.0 * n * n * t->nrhs) / time_s * 1e-9;
}

/* One LAPACKE_dposv call with every core of the process, on rank 0; with -x its solution
 * is checked like Rill's (the check regenerates A into the factor's buffer). */
static void run_reference(dla_testing_t *t)
{
    const int ld = t->N > 0 ? t->N : 1;
    const double bump = t->N;
    for (int r = 0; r < t->nruns && !t->failed; r++) {
        double time_s = 0.0, resid = 0.0;
        rill_status_t cs = RILL_SUCCESS;
        if (t->rank == 0) {
            double *a = malloc((size_t)t->N * t->N * sizeof(double) + 1);
            double *b = malloc((size_t)t->N * t->nrhs * sizeof(double) + 1);
            double *w = t->check ? malloc((size_t)t->N * t->nrhs * sizeof(double) + 1) : NULL;
            if (!a || !b || (t->check && !w)) {
                dla_testing_error(t, 1, "out of memory for the reference matrices");
                cs = RILL_ERR_NO_MEMORY;
            } else {
                rill_dla_dplgsy_dense(t->N, a, ld, bump, t->seed);
                rill_dla_dplrnt_dense(t->N, t->nrhs, b, ld, t->seed + 1);
                cpu_set_t saved;
                dla_ref_begin(t->cores, &saved);
                double t0 = dla_testing_now();
                int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', t->N, t->nrhs, a, ld, b, ld);
                time_s = dla_testing_now() - t0;
                dla_ref_end(&saved);
                if (info != 0)
                    dla_testing_error(t, 1, "reference LAPACKE_dposv returned info %d", info);
                if (t->check) /* X is in b; a (the factor) and w are the check's workspace */
                    cs = dla_check_dposv_dense(t->N, t->nrhs, bump, t->seed, t->seed + 1, b, a, w,
                                               t->cores, &resid);
            }
            free(a);
            free(b);
            free(w);
        }
        if (t->check)
            cs = dla_check_share(t->dla, cs, &resid);
        else if (cs != RILL_SUCCESS)
            return;
        if (dla_testing_row(t, time_s, gflops_of(t, time_s), cs, resid))
            return;
    }
}

int main(int argc, char **argv)
{
    dla_testing_t t;
    int rc = dla_testing_init(&t, argc, argv, "testing_dposv",
                              DLA_TESTING_NRHS | DLA_TESTING_NONSPD | DLA_TESTING_PANEL);
    if (rc)
        return rc < 0 ? 0 : rc;
    /* what the run allocates: the tiled A and B on every rank; on rank 0 the check's dense
     * A, X, B, or the reference's A, B (and the check's B with -x) */
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
    if (!(A = dla_testing_matrix(&t, "A", t.N, t.N)) ||
        !(B = dla_testing_matrix(&t, "B", t.N, t.nrhs)))
        goto out;

    const double bump = t.N;
    for (int r = -t.warmup; r < t.nruns && !t.failed; r++) { /* r < 0: warm-up, untimed */
        rill_status_t s;
        if ((s = rill_dla_dplgsy(t.dla, A, bump, t.seed)) != RILL_SUCCESS ||
            (s = rill_dla_dplrnt(t.dla, B, t.seed + 1)) != RILL_SUCCESS ||
            (t.nonspd && t.N > 0 &&
             (s = rill_dla_set_diag(t.dla, A, t.N / 2, -1.0)) != RILL_SUCCESS)) {
            dla_testing_error(&t, 1, "generating A and B failed: %s", rill_status_string(s));
            break;
        }
        rill_dla_info_reset(t.dla);
        dla_testing_barrier(&t);

        double t0 = dla_testing_now();
        rill_taskpool_t *tp;
        s = rill_dtd_taskpool_create(t.ctx, &tp);
        if (s != RILL_SUCCESS) {
            dla_testing_error(&t, 1, "cannot create a taskpool: %s", rill_status_string(s));
            break;
        }
        rill_status_t si = rill_dla_dposv_insert(t.dla, tp, RILL_DLA_LOWER, A, B);
        rill_status_t sw = rill_taskpool_wait(tp);
        double time_s = dla_testing_now() - t0;
        rill_taskpool_destroy(&tp);
        if (dla_testing_factor_result(&t, "dposv", si, sw))
            break;
        if (r < 0)
            continue;

        double resid = 0.0;
        rill_status_t cs = RILL_SUCCESS;
        if (t.check)
            cs = rill_dla_check_dposv(t.dla, bump, t.seed, t.seed + 1, B, &resid);
        if (dla_testing_row(&t, time_s, gflops_of(&t, time_s), cs, resid))
            break;
    }
out:
    if (B)
        rill_matrix_destroy(&B);
    if (A)
        rill_matrix_destroy(&A);
    return dla_testing_fini(&t);
}
