/* What the DLA testers share: options, runtime start, the header and the result rows. */
#ifndef RILL_DLA_TESTING_COMMON_H
#define RILL_DLA_TESTING_COMMON_H

#include <stdint.h>

#include "rill_dla.h"

/* Which options a tester accepts beyond the common ones. */
enum {
    DLA_TESTING_GEMM = 1 << 0,   /* -M -K --transA --transB --alpha --beta */
    DLA_TESTING_NRHS = 1 << 1,   /* --nrhs */
    DLA_TESTING_NONSPD = 1 << 2, /* --nonspd (hidden) */
};

typedef struct dla_testing {
    const char *name;
    unsigned features;
    int N, M, K, NB, P, Q, cores, gpus, nruns, check, nonspd, ref, nrhs;
    int transA, transB;
    double alpha, beta;
    uint64_t seed;
    rill_context_t *ctx;
    rill_dla_t *dla;
    int rank, nranks;
    int failed; /* a check failed or a run reported an error */
    char cmdline[2048];
} dla_testing_t;

/**
 * Parse the options, start Rill (runtime options after `--` become `--mca name value`),
 * create the DLA layer and print the header on rank 0. Returns 0 to go on, -1 after
 * --help (exit 0), or the exit code to return from main (an error was printed).
 */
int dla_testing_init(dla_testing_t *t, int argc, char **argv, const char *name, unsigned features);

/** Print one result row on rank 0: resid < 0 means not checked. Marks a failed check. */
void dla_testing_row(dla_testing_t *t, double time_s, double gflops, double resid);

/** One-line error from rank 0 (or every rank when rank0_only is 0), prefixed with the
 * tester's name; marks the run failed. */
void dla_testing_error(dla_testing_t *t, int rank0_only, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** After a factorization run (dpotrf, dposv): report a failed insertion (si), a matrix
 * that is not positive definite (the leading minor, agreed between ranks), or a failed
 * wait (sw). Returns 0 when the run succeeded, else non-zero (the run is marked failed). */
int dla_testing_factor_result(dla_testing_t *t, const char *op, rill_status_t si, rill_status_t sw);

/** Wall-clock seconds (monotonic). */
double dla_testing_now(void);

/** A barrier before timing (built on rill_dla_allreduce_max). */
void dla_testing_barrier(dla_testing_t *t);

/** Stop everything; returns the exit code (non-zero if a check failed). */
int dla_testing_fini(dla_testing_t *t);

/** Create an m x n matrix with the tester's NB and grid, or print why not (NULL). */
rill_matrix_t *dla_testing_matrix(dla_testing_t *t, const char *what, int m, int n);

#endif
