/* testing_dpotrf: tiled Cholesky factorization A = L L^T of a random SPD matrix, timed,
 * with DPLASMA's check ||L L^T - A||_inf / (||A||_inf N eps). */
#include <cblas.h>
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>

#include "dla_internal.h"
#include "testing_common.h"
#if RILL_DLA_HAVE_PTG
#include "dpotrf.h" /* apps/dla/dpotrf.rill, compiled by rillcc */
#endif

/* One LAPACKE_dpotrf call with every core of the process, on rank 0; with -x its factor
 * is checked like Rill's. */
static void run_reference(dla_testing_t *t)
{
    const double bump = t->N;
    for (int r = 0; r < t->nruns && !t->failed; r++) {
        double time_s = 0.0, resid = 0.0;
        rill_status_t cs = RILL_SUCCESS;
        if (t->rank == 0) {
            double *a = malloc((size_t)t->N * t->N * sizeof(double) + 1);
            double *w = t->check ? malloc((size_t)t->N * t->N * sizeof(double) + 1) : NULL;
            if (!a || (t->check && !w)) {
                dla_testing_error(t, 1, "out of memory for the %d x %d reference matrix", t->N,
                                  t->N);
                cs = RILL_ERR_NO_MEMORY;
            } else {
                rill_dla_dplgsy_dense(t->N, a, t->N > 0 ? t->N : 1, bump, t->seed);
                cpu_set_t saved;
                dla_ref_begin(t->cores, &saved);
                double t0 = dla_testing_now();
                int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', t->N, a, t->N > 0 ? t->N : 1);
                time_s = dla_testing_now() - t0;
                dla_ref_end(&saved);
                if (info != 0)
                    dla_testing_error(t, 1, "reference LAPACKE_dpotrf returned info %d", info);
                if (t->check)
                    cs = dla_check_dpotrf_dense(t->N, a, w, bump, t->seed, t->cores, &resid);
            }
            free(a);
            free(w);
        }
        if (t->check)
            cs = dla_check_share(t->dla, cs, &resid);
        else if (cs != RILL_SUCCESS)
            return;
        double n = t->N;
        if (dla_testing_row(t, time_s, n * n * n / 3.0 / time_s * 1e-9, cs, resid))
            return;
    }
}

int main(int argc, char **argv)
{
    dla_testing_t t;
    int rc = dla_testing_init(&t, argc, argv, "testing_dpotrf",
                              DLA_TESTING_NONSPD | DLA_TESTING_DSL | DLA_TESTING_PANEL);
    if (rc)
        return rc < 0 ? 0 : rc;
    /* what the run allocates: the tiled A on every rank; on rank 0 the check's dense L and
     * A, or the reference's A (and the check's A with -x) */
    const dla_testing_dims_t tiled[] = { { t.N, t.N } };
    const dla_testing_dims_t dense[] = { { t.N, t.N }, { t.N, t.N } };
    if (t.ref ? dla_testing_memory(&t, NULL, 0, dense, t.check ? 2 : 1)
              : dla_testing_memory(&t, tiled, 1, dense, t.check ? 2 : 0))
        return dla_testing_fini(&t);
    if (t.ref) {
        run_reference(&t);
        return dla_testing_fini(&t);
    }
    rill_matrix_t *A = dla_testing_matrix(&t, "A", t.N, t.N);
    if (!A)
        return dla_testing_fini(&t);

    const double bump = t.N;
    for (int r = -t.warmup; r < t.nruns && !t.failed; r++) { /* r < 0: warm-up, untimed */
        rill_status_t s = rill_dla_dplgsy(t.dla, A, bump, t.seed);
        if (s == RILL_SUCCESS && t.nonspd && t.N > 0)
            s = rill_dla_set_diag(t.dla, A, t.N / 2, -1.0);
        if (s != RILL_SUCCESS) {
            dla_testing_error(&t, 1, "generating A failed: %s", rill_status_string(s));
            break;
        }
        rill_dla_info_reset(t.dla);
        dla_testing_barrier(&t);

        double t0 = dla_testing_now();
        rill_taskpool_t *tp;
        rill_status_t si = RILL_SUCCESS;
        if (t.ptg) {
#if RILL_DLA_HAVE_PTG
            /* the panels as the DTD version's (--panel; auto: inverse when GPUs are used) */
            dpotrf_globals_t g = { .NT = rill_matrix_nt(A),
                                   .NB = rill_matrix_mb(A),
                                   .A = A,
                                   .INV = rill_dla_panel(t.dla) == RILL_DLA_PANEL_INVERSE,
                                   .DLA = t.dla };
            s = dpotrf_taskpool_create(t.ctx, &g, &tp);
#else
            s = RILL_ERR_NOT_SUPPORTED; /* rillcc was not built (flex or bison missing) */
#endif
        } else
            s = rill_dtd_taskpool_create(t.ctx, &tp);
        if (s != RILL_SUCCESS) {
            dla_testing_error(&t, 1, "cannot create a taskpool: %s", rill_status_string(s));
            break;
        }
        if (!t.ptg)
            si = rill_dla_dpotrf_insert(t.dla, tp, RILL_DLA_LOWER, A);
        rill_status_t sw = rill_taskpool_wait(tp);
        double time_s = dla_testing_now() - t0;
        rill_taskpool_destroy(&tp);
        if (dla_testing_factor_result(&t, "dpotrf", si, sw))
            break;
        if (r < 0)
            continue;

        double resid = 0.0;
        rill_status_t cs = RILL_SUCCESS;
        if (t.check)
            cs = rill_dla_check_dpotrf(t.dla, A, bump, t.seed, &resid);
        double n = t.N;
        if (dla_testing_row(&t, time_s, n * n * n / 3.0 / time_s * 1e-9, cs, resid))
            break;
    }
    rill_matrix_destroy(&A);
    return dla_testing_fini(&t);
}
