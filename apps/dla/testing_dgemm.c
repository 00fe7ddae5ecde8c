/* testing_dgemm: C = alpha op(A) op(B) + beta C on block-cyclic matrices (SUMMA), timed,
 * checked against one cblas_dgemm on rank 0. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "dla_internal.h"
#include "testing_common.h"
#if RILL_DLA_HAVE_PTG
#include "dgemm.h" /* apps/dla/dgemm.rill, compiled by rillcc */
#endif

static double gflops_of(const dla_testing_t *t, double time_s)
{
    return 2.0 * t->M * (double)t->N * t->K / time_s * 1e-9;
}

/* One cblas_dgemm call with every core of the process, on rank 0; with -x its result is
 * checked like Rill's (the check regenerates A and B into the same buffers). */
static void run_reference(dla_testing_t *t, int Am, int An, int Bm, int Bn)
{
    for (int r = 0; r < t->nruns && !t->failed; r++) {
        double time_s = 0.0, resid = 0.0;
        rill_status_t cs = RILL_SUCCESS;
        if (t->rank == 0) {
            double *a = malloc((size_t)Am * An * sizeof(double) + 1);
            double *b = malloc((size_t)Bm * Bn * sizeof(double) + 1);
            double *c = malloc((size_t)t->M * t->N * sizeof(double) + 1);
            double *c0 = t->check ? malloc((size_t)t->M * t->N * sizeof(double) + 1) : NULL;
            if (!a || !b || !c || (t->check && !c0)) {
                dla_testing_error(t, 1, "out of memory for the reference matrices");
                cs = RILL_ERR_NO_MEMORY;
            } else {
                rill_dla_dplrnt_dense(Am, An, a, Am > 0 ? Am : 1, t->seed);
                rill_dla_dplrnt_dense(Bm, Bn, b, Bm > 0 ? Bm : 1, t->seed + 1);
                rill_dla_dplrnt_dense(t->M, t->N, c, t->M > 0 ? t->M : 1, t->seed + 2);
                cpu_set_t saved;
                dla_ref_begin(t->cores, &saved);
                double t0 = dla_testing_now();
                cblas_dgemm(CblasColMajor, t->transA ? CblasTrans : CblasNoTrans,
                            t->transB ? CblasTrans : CblasNoTrans, t->M, t->N, t->K, t->alpha, a,
                            Am > 0 ? Am : 1, b, Bm > 0 ? Bm : 1, t->beta, c, t->M > 0 ? t->M : 1);
                time_s = dla_testing_now() - t0;
                dla_ref_end(&saved);
                if (t->check)
                    cs = dla_check_dgemm_dense(t->transA, t->transB, t->alpha, Am, An, t->seed, Bm,
                                               Bn, t->seed + 1, t->beta, t->seed + 2, t->M, t->N, c,
                                               a, b, c0, t->cores, &resid);
            }
            free(a);
            free(b);
            free(c);
            free(c0);
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
    int rc = dla_testing_init(&t, argc, argv, "testing_dgemm", DLA_TESTING_GEMM | DLA_TESTING_DSL);
    if (rc)
        return rc < 0 ? 0 : rc;
    /* A is M x K (K x M when transposed), B is K x N (N x K) */
    const int Am = t.transA ? t.K : t.M, An = t.transA ? t.M : t.K;
    const int Bm = t.transB ? t.N : t.K, Bn = t.transB ? t.K : t.N;
    /* what the run allocates: the tiled A, B, C on every rank; on rank 0 the check's
     * dense C, C0, A, B, or the reference's A, B, C (and C0 with -x) */
    const dla_testing_dims_t tiled[] = { { Am, An }, { Bm, Bn }, { t.M, t.N } };
    const dla_testing_dims_t dense[] = { { t.M, t.N }, { t.M, t.N }, { Am, An }, { Bm, Bn } };
    if (t.ref ? dla_testing_memory(&t, NULL, 0, dense + (t.check ? 0 : 1), t.check ? 4 : 3)
              : dla_testing_memory(&t, tiled, 3, dense, t.check ? 4 : 0))
        return dla_testing_fini(&t);
    if (t.ref) {
        run_reference(&t, Am, An, Bm, Bn);
        return dla_testing_fini(&t);
    }
    rill_matrix_t *A = NULL, *B = NULL, *C = NULL;
    if (!(A = dla_testing_matrix(&t, "A", Am, An)) || !(B = dla_testing_matrix(&t, "B", Bm, Bn)) ||
        !(C = dla_testing_matrix(&t, "C", t.M, t.N)))
        goto out;

    rill_status_t s = RILL_SUCCESS;
    if ((s = rill_dla_dplrnt(t.dla, A, t.seed)) != RILL_SUCCESS ||
        (s = rill_dla_dplrnt(t.dla, B, t.seed + 1)) != RILL_SUCCESS) {
        dla_testing_error(&t, 1, "generating A and B failed: %s", rill_status_string(s));
        goto out;
    }
    for (int r = -t.warmup; r < t.nruns && !t.failed; r++) { /* r < 0: warm-up, untimed */
        s = rill_dla_dplrnt(t.dla, C, t.seed + 2);
        if (s != RILL_SUCCESS) {
            dla_testing_error(&t, 1, "generating C failed: %s", rill_status_string(s));
            break;
        }
        dla_testing_barrier(&t);

        double t0 = dla_testing_now();
        rill_taskpool_t *tp;
        if (t.ptg) {
#if RILL_DLA_HAVE_PTG
            dgemm_globals_t g = { .MT = rill_matrix_mt(C),
                                  .NB = rill_matrix_mb(C),
                                  .NT = rill_matrix_nt(C),
                                  .KT = t.transA ? rill_matrix_mt(A) : rill_matrix_nt(A),
                                  .TA = t.transA,
                                  .TB = t.transB,
                                  .alpha = t.alpha,
                                  .beta = t.beta,
                                  .A = A,
                                  .B = B,
                                  .C = C };
            s = dgemm_taskpool_create(t.ctx, &g, &tp);
#else
            s = RILL_ERR_NOT_SUPPORTED; /* rillcc was not built (flex or bison missing) */
#endif
        } else
            s = rill_dtd_taskpool_create(t.ctx, &tp);
        if (s != RILL_SUCCESS) {
            dla_testing_error(&t, 1, "cannot create a taskpool: %s", rill_status_string(s));
            break;
        }
        rill_status_t si =
            t.ptg ? RILL_SUCCESS
                  : rill_dla_dgemm_insert(t.dla, tp, t.transA, t.transB, t.alpha, A, B, t.beta, C);
        rill_status_t sw = rill_taskpool_wait(tp);
        double time_s = dla_testing_now() - t0;
        rill_taskpool_destroy(&tp);
        if (si != RILL_SUCCESS || sw != RILL_SUCCESS) {
            dla_testing_error(&t, 1, "dgemm failed: %s",
                              rill_status_string(si != RILL_SUCCESS ? si : sw));
            break;
        }
        if (r < 0)
            continue;

        double resid = 0.0;
        rill_status_t cs = RILL_SUCCESS;
        if (t.check)
            cs = rill_dla_check_dgemm(t.dla, t.transA, t.transB, t.alpha, Am, An, t.seed, Bm, Bn,
                                      t.seed + 1, t.beta, t.seed + 2, C, &resid);
        if (dla_testing_row(&t, time_s, gflops_of(&t, time_s), cs, resid))
            break;
    }
out:
    if (C)
        rill_matrix_destroy(&C);
    if (B)
        rill_matrix_destroy(&B);
    if (A)
        rill_matrix_destroy(&A);
    return dla_testing_fini(&t);
}
