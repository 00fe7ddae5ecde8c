/* PTG next to DTD on one rank, in one run: dpotrf (apps/dla/dpotrf.rill against the DLA
 * layer's DTD dpotrf and one LAPACKE_dpotrf call with every core), then the cost per task
 * of the same graph shapes (a chain on one tile, independent tasks) with empty bodies.
 *
 *   bench_ptg [N [NB [RUNS [TASKS]]]]     defaults 8000 256 3 100000
 */
#include <lapacke.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rill/dtd.h"
#include "rill/rill.h"

#include "dla_internal.h"
#include "dpotrf.h"
#include "ptg_chain.h"
#include "ptg_indep.h"
#include "rill_dla.h"

#include "args.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what, rill_status_t s)
{
    fprintf(stderr, "bench_ptg: %s: %s\n", what, rill_status_string(s));
    exit(1);
}
#define OK(call)                                                                                   \
    do {                                                                                           \
        rill_status_t s_ = (call);                                                                 \
        if (s_ != RILL_SUCCESS)                                                                    \
            die(#call, s_);                                                                        \
    } while (0)

/* the same SPD matrix every time: symmetric random entries, N on the diagonal */
static void fill(rill_matrix_t *A, double *dense, int n, int nb)
{
    srand(7);
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++)
            dense[i + (size_t)j * n] = dense[j + (size_t)i * n] =
                (double)rand() / RAND_MAX - 0.5 + (i == j ? n : 0);
    if (!A)
        return;
    for (int ti = 0; ti < rill_matrix_mt(A); ti++)
        for (int tj = 0; tj < rill_matrix_nt(A); tj++) {
            double *t = rill_matrix_tile_ptr(A, ti, tj);
            int r = rill_matrix_tile_rows(A, ti), c = rill_matrix_tile_cols(A, tj);
            for (int jj = 0; jj < c; jj++)
                memcpy(t + (size_t)jj * r, dense + ti * nb + (size_t)(tj * nb + jj) * n,
                       sizeof(double) * (size_t)r);
        }
}

static rill_status_t empty_body(rill_task_t *task)
{
    (void)task;
    return RILL_SUCCESS;
}

#define MAX_N     32768 /* the dense copy and the tiles of A: 2 x 8 GiB at most */
#define MAX_NT    256   /* tile rows: 2.8 million DTD tasks a dpotrf */
#define MAX_RUNS  1000
#define MAX_TASKS 10000000

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_ptg [N [NB [RUNS [TASKS]]]] [--mca name value]...\n"
            "  N      matrix order of dpotrf, 1..%d (default 8000)\n"
            "  NB     tile size, N/%d (rounded up)..N (default 256, or N when smaller)\n"
            "  RUNS   runs of each dpotrf, the best printed, 1..%d (default 3)\n"
            "  TASKS  tasks of the per-task cost graphs, 1..%d (default 100000)\n"
            "  exit: 0 done, 1 a runtime or LAPACK error, 2 a bad argument\n",
            MAX_N, MAX_NT, MAX_RUNS, MAX_TASKS);
}

/* Positional argument i (1-based) as an integer in [min, max] (the whole string), else
 * def when absent; -1 after a message naming it. */
static long arg_int(int argc, char **argv, int i, const char *name, long min, long max, long def)
{
    long v = def;
    if (i >= argc || !rill_args_long(argv[i], min, max, &v))
        return v;
    fprintf(stderr,
            "bench_ptg: error: %s must be an integer in [%ld, %ld], got '%s' (see --help)\n", name,
            min, max, argv[i]);
    return -1;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
    rill_context_t *ctx;
    OK(rill_init(&argc, &argv, &ctx)); /* takes the --mca pairs out of argv */
    /* each after the one before it was right (-1: the message is out) */
    long ln = arg_int(argc, argv, 1, "N", 1, MAX_N, 8000);
    long lnb =
        ln < 0 ? -1 /* (256 >= N / MAX_NT) */
               : arg_int(argc, argv, 2, "NB", (ln + MAX_NT - 1) / MAX_NT, ln, ln < 256 ? ln : 256);
    long lruns = lnb < 0 ? -1 : arg_int(argc, argv, 3, "RUNS", 1, MAX_RUNS, 3);
    long ltasks = lruns < 0 ? -1 : arg_int(argc, argv, 4, "TASKS", 1, MAX_TASKS, 100000);
    if (ltasks > 0 && argc > 5) {
        fprintf(stderr, "bench_ptg: error: unexpected argument '%s' (see --help)\n", argv[5]);
        ltasks = -1;
    }
    if (ltasks < 0) {
        rill_fini(&ctx);
        return 2;
    }
    int n = (int)ln, nb = (int)lnb, runs = (int)lruns, ntasks = (int)ltasks;
    int workers = rill_context_nworkers(ctx);
    double flops = (double)n * n * n / 3.0;
    printf("# bench_ptg: Rill %s, 1 rank x %d workers, dpotrf N=%d NB=%d, best of %d\n",
           rill_version_string(), workers, n, nb, runs);
    printf("%-28s %10s %10s\n", "what", "time_s", "GFLOP/s");
    double *dense = malloc(sizeof(double) * (size_t)n * n);
    if (!dense) {
        fprintf(stderr, "bench_ptg: error: out of host memory for the %d x %d matrix (%.1f GiB)\n",
                n, n, (double)n * n * sizeof(double) / (1 << 30));
        rill_fini(&ctx);
        return 1;
    }
    /* LAPACKE with every core of the process (the workers idle meanwhile) */
    double best = 1e30;
    for (int r = 0; r < runs; r++) {
        fill(NULL, dense, n, nb);
        cpu_set_t saved;
        dla_ref_begin(workers, &saved);
        double t0 = now();
        int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, dense, n);
        double t = now() - t0;
        dla_ref_end(&saved);
        if (info != 0)
            die("LAPACKE_dpotrf", RILL_ERR_NUMERIC);
        best = t < best ? t : best;
    }
    printf("%-28s %10.3f %10.1f\n", "LAPACKE_dpotrf", best, flops / best / 1e9);
    rill_dla_t *dla;
    OK(rill_dla_create(ctx, &dla));
    rill_matrix_t *A;
    OK(rill_matrix_create(ctx, n, n, nb, nb, 1, 1, &A));
    for (int which = 0; which < 2; which++) {
        best = 1e30;
        for (int r = 0; r < runs; r++) {
            fill(A, dense, n, nb);
            double t0 = now();
            if (which == 0) {
                int info = 0;
                OK(rill_dla_dpotrf(dla, RILL_DLA_LOWER, A, &info));
                if (info)
                    die("DTD dpotrf", RILL_ERR_NUMERIC);
            } else {
                dpotrf_globals_t g = { .NT = rill_matrix_nt(A), .NB = rill_matrix_mb(A), .A = A };
                rill_taskpool_t *tp;
                OK(dpotrf_taskpool_create(ctx, &g, &tp));
                OK(rill_taskpool_wait(tp));
                OK(rill_taskpool_destroy(&tp));
            }
            double t = now() - t0;
            best = t < best ? t : best;
        }
        printf("%-28s %10.3f %10.1f\n",
               which ? "PTG dpotrf (dpotrf.rill)" : "DTD dpotrf (rill_dla)", best,
               flops / best / 1e9);
    }
    OK(rill_matrix_destroy(&A));
    OK(rill_dla_destroy(&dla));
    free(dense);

    /* cost per task: a chain on one tile, and independent tasks reading one tile */
    printf("\n# %d tasks with empty bodies, from the first insertion (DTD) or the creation\n"
           "# (PTG) to the end of the wait; best of %d\n",
           ntasks, runs);
    printf("%-28s %12s %12s\n", "shape", "DTD us/task", "PTG us/task");
    rill_matrix_t *T;
    OK(rill_matrix_create(ctx, 1, 1, 1, 1, 1, 1, &T));
    rill_dtd_class_t *cls;
    OK(rill_dtd_class_create(ctx, "empty", empty_body, &cls));
    for (int shape = 0; shape < 2; shape++) {
        double bd = 1e30, bp = 1e30;
        for (int r = 0; r < runs; r++) {
            rill_taskpool_t *tp;
            double t0 = now();
            OK(rill_dtd_taskpool_create(ctx, &tp));
            for (int i = 0; i < ntasks; i++)
                OK(rill_dtd_insert_task(tp, cls, 0, shape ? RILL_DTD_INPUT : RILL_DTD_INOUT,
                                        rill_matrix_tile(T, 0, 0), RILL_DTD_ARG_END));
            OK(rill_taskpool_wait(tp));
            double t = now() - t0;
            OK(rill_taskpool_destroy(&tp));
            bd = t < bd ? t : bd;
            t0 = now();
            if (shape == 0) {
                ptg_chain_globals_t g = { .N = ntasks, .A = T };
                OK(ptg_chain_taskpool_create(ctx, &g, &tp));
            } else {
                ptg_indep_globals_t g = { .N = ntasks, .A = T };
                OK(ptg_indep_taskpool_create(ctx, &g, &tp));
            }
            OK(rill_taskpool_wait(tp));
            t = now() - t0;
            OK(rill_taskpool_destroy(&tp));
            bp = t < bp ? t : bp;
        }
        printf("%-28s %12.3f %12.3f\n", shape ? "independent (read one tile)" : "chain on one tile",
               bd / ntasks * 1e6, bp / ntasks * 1e6);
    }
    OK(rill_dtd_class_destroy(&cls));
    OK(rill_matrix_destroy(&T));
    OK(rill_fini(&ctx));
    return 0;
}
