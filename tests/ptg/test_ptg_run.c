/* PTG programs compiled by rillcc (rill_add_ptg) and run, each checked against a
 * sequential computation, one scenario per run (argv[1]):
 *   chain  N tasks in a chain on one tile, each adding its index: the sum, exactly
 *   fan    a tile broadcast to a row of tasks (a range), each writing its own tile, and a
 *          control gather that runs after all of them
 *   potrf  tiled Cholesky on OpenBLAS/LAPACKE, ragged tiles, against LAPACKE_dpotrf
 *   guard  a dependency to a task outside its ranges: the run fails with a message naming
 *          it (no hang)
 *   hop    (1-4 ranks) a value carried along N tasks spread over the ranks by a hash, with a
 *          control gather of all of them; many taskpools in a row (activations, termination)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "rill/rill.h"

#include "chain_run.h"
#include "fan_run.h"
#include "hop_run.h"
#include "noguard_run.h"
#include "dpotrf.h"
#include "test_util.h"

#define CHECK_OK(call)                                                                             \
    do {                                                                                           \
        rill_status_t s_ = (call);                                                                 \
        CHECK_MSG(s_ == RILL_SUCCESS, "%s: %s", #call, rill_status_string(s_));                    \
    } while (0)

static rill_context_t *ctx;

static void run(rill_taskpool_t *tp)
{
    CHECK_OK(rill_taskpool_wait(tp));
    CHECK_OK(rill_taskpool_destroy(&tp));
}

static int test_chain(void)
{
    for (int n = 1; n <= 2000; n *= 7) {
        rill_matrix_t *A;
        CHECK_OK(rill_matrix_create(ctx, 3, 5, 3, 5, 1, 1, &A));
        double *t = rill_matrix_tile_ptr(A, 0, 0);
        for (int e = 0; e < 15; e++)
            t[e] = e;
        chain_run_globals_t g = { .N = n, .A = A };
        rill_taskpool_t *tp;
        CHECK_OK(chain_run_taskpool_create(ctx, &g, &tp));
        run(tp);
        double sum = (double)n * (n - 1) / 2;
        for (int e = 0; e < 15; e++)
            CHECK_MSG(t[e] == e + sum, "chain of %d: element %d is %g, expected %g", n, e, t[e],
                      e + sum);
        CHECK_OK(rill_matrix_destroy(&A));
    }
    printf("chain: chains of 1, 7, 49, 343 tasks add up exactly\n");
    return 0;
}

static int test_fan(void)
{
    int n = 40, flag = 0;
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, 4, 4 * n - 1, 4, 4, 1, 1, &A)); /* last tile 4 x 3 */
    double *src = rill_matrix_tile_ptr(A, 0, 0);
    for (int e = 0; e < 16; e++)
        src[e] = e + 1;
    fan_run_globals_t g = { .N = n, .A = A, .FLAG = &flag };
    rill_taskpool_t *tp;
    CHECK_OK(fan_run_taskpool_create(ctx, &g, &tp));
    run(tp);
    for (int j = 1; j < n; j++) {
        const double *w = rill_matrix_tile_ptr(A, 0, j);
        int cells = 4 * rill_matrix_tile_cols(A, j);
        for (int e = 0; e < cells; e++)
            CHECK_MSG(w[e] == (e + 1) * j, "fan: tile %d element %d is %g, expected %d", j, e, w[e],
                      (e + 1) * j);
    }
    CHECK_MSG(flag == 1, "fan: the gather task did not run");
    CHECK_OK(rill_matrix_destroy(&A));
    printf("fan: 1 source to %d readers (a range), each tile right; the gather ran\n", n - 1);
    return 0;
}

static int test_potrf(void)
{
    int sizes[][2] = { { 1, 1 }, { 7, 3 }, { 100, 32 }, { 301, 64 }, { 500, 96 } };
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        int n = sizes[s][0], nb = sizes[s][1];
        rill_matrix_t *A;
        CHECK_OK(rill_matrix_create(ctx, n, n, nb, nb, 1, 1, &A));
        double *ref = malloc(sizeof(double) * (size_t)n * (size_t)n);
        CHECK_MSG(ref, "out of memory");
        srand(42 + (unsigned)n);
        for (int j = 0; j < n; j++)
            for (int i = j; i < n; i++) {
                double v = (double)rand() / RAND_MAX - 0.5 + (i == j ? n : 0);
                ref[i + (size_t)j * n] = ref[j + (size_t)i * n] = v;
            }
        for (int ti = 0; ti < rill_matrix_mt(A); ti++)
            for (int tj = 0; tj < rill_matrix_nt(A); tj++) {
                double *t = rill_matrix_tile_ptr(A, ti, tj);
                int r = rill_matrix_tile_rows(A, ti), c = rill_matrix_tile_cols(A, tj);
                for (int jj = 0; jj < c; jj++)
                    for (int ii = 0; ii < r; ii++)
                        t[ii + (size_t)jj * r] = ref[ti * nb + ii + (size_t)(tj * nb + jj) * n];
            }
        dpotrf_globals_t g = { .NT = rill_matrix_nt(A), .A = A };
        rill_taskpool_t *tp;
        CHECK_OK(dpotrf_taskpool_create(ctx, &g, &tp));
        run(tp);
        CHECK_MSG(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, ref, n) == 0, "LAPACKE_dpotrf failed");
        double err = 0, norm = 0;
        for (int ti = 0; ti < rill_matrix_mt(A); ti++)
            for (int tj = 0; tj <= ti; tj++) {
                const double *t = rill_matrix_tile_ptr(A, ti, tj);
                int r = rill_matrix_tile_rows(A, ti), c = rill_matrix_tile_cols(A, tj);
                for (int jj = 0; jj < c; jj++)
                    for (int ii = 0; ii < r; ii++) {
                        int gi = ti * nb + ii, gj = tj * nb + jj;
                        if (gi < gj)
                            continue;
                        double d = t[ii + (size_t)jj * r] - ref[gi + (size_t)gj * n];
                        err = fmax(err, fabs(d));
                        norm = fmax(norm, fabs(ref[gi + (size_t)gj * n]));
                    }
            }
        CHECK_MSG(err <= 1e-12 * norm * n, "potrf N=%d NB=%d: max difference %.3g (norm %.3g)", n,
                  nb, err, norm);
        printf("potrf N=%d NB=%d (%d x %d tiles): max difference to LAPACKE %.2g\n", n, nb,
               rill_matrix_mt(A), rill_matrix_nt(A), err);
        free(ref);
        CHECK_OK(rill_matrix_destroy(&A));
    }
    return 0;
}

/* a program with no task instance ends at once; a dependency to a task outside its
 * class's ranges fails the run with a message naming that task (no hang) */
static int test_guard(void)
{
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, 2, 2, 2, 2, 1, 1, &A));
    chain_run_globals_t g = { .N = 0, .A = A };
    rill_taskpool_t *tp;
    CHECK_OK(chain_run_taskpool_create(ctx, &g, &tp));
    run(tp);
    printf("guard: a program with no task instance ends at once\n");
    noguard_run_globals_t g2 = { .N = 5, .A = A };
    /* the capture starts before the taskpool: its tasks may run (and fail) during create */
    test_capture_t cap;
    test_capture_begin(&cap);
    CHECK_OK(noguard_run_taskpool_create(ctx, &g2, &tp));
    rill_status_t s = rill_taskpool_wait(tp);
    char *err = test_capture_end(&cap);
    CHECK_MSG(s == RILL_ERR_INVALID_ARG, "a run with a dependency past the end returned %s",
              rill_status_string(s));
    CHECK_MSG(err && strstr(err, "STEP(5), which is outside STEP's parameter ranges"),
              "the message does not name STEP(5): %s", err ? err : "(none)");
    free(err);
    CHECK_OK(rill_taskpool_destroy(&tp));
    printf("guard: a dependency to STEP(5) past the end fails the run, naming it\n");
    CHECK_OK(rill_matrix_destroy(&A));
    return 0;
}

static int test_hop(void)
{
    int nranks = rill_context_nranks(ctx), ntl = 3 * nranks + 1, runs = 0;
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, 2, ntl, 2, 1, 1, nranks, &A)); /* tiles 2 x 1 */
    static const int sizes[] = { 1, 2, 3, 17, 64, 301, 1000 };
    for (int rep = 0; rep < 3; rep++)
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++, runs++) {
            int n = sizes[s];
            double *t = rill_matrix_tile_ptr(A, 0, 0); /* rank 0's */
            if (t) {
                t[0] = 0.5;
                t[1] = 0;
            }
            hop_run_globals_t g = { .N = n, .NTL = ntl, .A = A };
            rill_taskpool_t *tp;
            CHECK_OK(hop_run_taskpool_create(ctx, &g, &tp));
            run(tp);
            if (t) {
                double want = 0.5 + (double)n * (n - 1) / 2;
                CHECK_MSG(t[0] == want, "hop: %d tasks on %d ranks: %g, expected %g", n, nranks,
                          t[0], want);
                CHECK_MSG(t[1] == 1, "hop: the gather did not run after the %d tasks", n);
            }
        }
    if (rill_context_rank(ctx) == 0)
        printf("hop: %d taskpools of 1..1000 tasks spread over %d rank(s) by a hash: the value "
               "and the gather right each time\n",
               runs, nranks);
    CHECK_OK(rill_matrix_destroy(&A));
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "chain";
    CHECK_OK(rill_init(&argc, &argv, &ctx));
    int rc;
    if (!strcmp(what, "chain"))
        rc = test_chain();
    else if (!strcmp(what, "fan"))
        rc = test_fan();
    else if (!strcmp(what, "potrf"))
        rc = test_potrf();
    else if (!strcmp(what, "guard"))
        rc = test_guard();
    else if (!strcmp(what, "hop"))
        rc = test_hop();
    else {
        fprintf(stderr, "unknown scenario '%s': chain, fan, potrf, guard, hop\n", what);
        rc = 2;
    }
    CHECK_OK(rill_fini(&ctx));
    return rc;
}
