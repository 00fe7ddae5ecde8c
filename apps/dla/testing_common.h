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
    DLA_TESTING_DSL = 1 << 3,    /* --dsl dtd|ptg */
    DLA_TESTING_PANEL = 1 << 4,  /* --panel auto|trsm|inverse (dpotrf's panel solves) */
    DLA_TESTING_KIND = 1 << 5,   /* --kind random|dd|pivot|singular (dgetrf's matrix) */
};

/* --kind: the general matrix of dgetrf. random: uniform in [-0.5, 0.5); dd: symmetric,
 * diagonally dominant (N on the diagonal); pivot: random with A(0, 0) = 0 (elimination
 * without row interchanges divides by zero at once); singular: random with column N / 2
 * zero (LAPACK's info is then N / 2 + 1). */
typedef enum { DLA_KIND_RANDOM, DLA_KIND_DD, DLA_KIND_PIVOT, DLA_KIND_SINGULAR } dla_kind_t;

/* A rank's GPUs over a timed run, as rank 0 gets them to print every rank's line. */
typedef struct dla_testing_gpus {
    int32_t n;                    /* GPUs (at most 8) */
    int32_t read[8];              /* the counters at the end could be read */
    rill_gpu_counters_t start[8]; /* at the start of the run */
    rill_gpu_counters_t end[8];   /* and at its end */
} dla_testing_gpus_t;

typedef struct dla_testing {
    const char *name;
    unsigned features;
    dla_testing_gpus_t gpus_run;  /* this rank's GPUs over the timed run */
    dla_testing_gpus_t *gpus_all; /* every rank's (several ranks, some with GPUs) */
    int gpus_any;                 /* some rank uses GPUs (the same on every rank) */
    int N, M, K, NB, P, Q, cores, gpus, nruns, check, nonspd, ref, nrhs, no_mem_check;
    int transA, transB;
    int warmup;                 /* --warmup: untimed runs before the timed ones (set at init) */
    int ptg;                    /* --dsl ptg: the PTG version (one rank, the CPUs) */
    rill_matrix_dist_t dist;    /* --dist */
    rill_dla_panel_t panel;     /* --panel */
    dla_kind_t kind;            /* --kind */
    int trmm_block, trinv_leaf; /* --gpu-trmm-block, --gpu-trinv-leaf */
    double alpha, beta;
    uint64_t seed;
    rill_context_t *ctx;
    rill_dla_t *dla;
    int rank, nranks;
    int failed; /* a check failed or a run reported an error */
    int titled; /* rank 0 printed the column titles */
    char cmdline[2048];
} dla_testing_t;

/** The largest value of -N, -M, -K, -t, -P, -Q, --nrhs (sizes stay in int arithmetic). */
#define DLA_TESTING_MAX_SIZE (1 << 30)

/**
 * Parse the options (a bad one: a message naming it and its allowed range, exit code 2),
 * start Rill (runtime options `--mca name value` anywhere, and `name value` pairs after
 * `--`, go to rill_init), check the process grid against the ranks, create the DLA layer
 * and print the header on rank 0. Returns 0 to go on, -1 after --help (exit 0), or the
 * exit code to return from main (an error was printed, Rill is stopped).
 */
int dla_testing_init(dla_testing_t *t, int argc, char **argv, const char *name, unsigned features);

/** The sizes of a matrix or buffer, for dla_testing_memory. */
typedef struct dla_testing_dims {
    int m, n;
} dla_testing_dims_t;

/**
 * Before any allocation: estimate the memory the run needs on this node (the local tiles
 * of the ntiled block-cyclic matrices of every rank on the node, each stored at NB x NB,
 * plus, on rank 0, the ndense dense buffers of the reference and the check) and compare
 * it with what is available (MemAvailable, the cgroup's limit). Too much, or sizes that
 * overflow 64-bit byte counts: an error with both figures, the run is marked failed and
 * 1 is returned on every rank. --no-mem-check skips the comparison. Collective.
 */
int dla_testing_memory(dla_testing_t *t, const dla_testing_dims_t *tiled, int ntiled,
                       const dla_testing_dims_t *dense, int ndense);

/**
 * Print one result row on rank 0 (gemm: M N K, the others: N) and judge it. Without -x,
 * cs and resid are ignored and the row says `-`. With -x (cs, resid: what the check
 * returned, the same on every rank), the row passes only when cs is RILL_SUCCESS and resid
 * is finite, >= 0 and below the threshold; otherwise it says FAIL, the run is marked
 * failed and the reason is printed (RILL_ERR_NUMERIC: the result contains NaN or Inf; a
 * NaN or Inf residual; a residual above the threshold). A check that could not run (any
 * other cs) prints an error instead of a row and returns 1; else returns 0.
 */
int dla_testing_row(dla_testing_t *t, double time_s, double gflops, rill_status_t cs, double resid);

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

/** The N x N matrix of --kind into the dense column-major a (lda = N): the same values
 * as dla_testing_kind_tiled gives the tiles (the reference and the checks). Any thread. */
void dla_testing_kind_dense(const dla_testing_t *t, double *a);
/** The N x N matrix of --kind into the tiles of A, with DTD tasks where they live.
 * Collective, synchronous. Main thread. */
rill_status_t dla_testing_kind_tiled(dla_testing_t *t, rill_matrix_t *A);

/** Create an m x n matrix with the tester's NB and grid, or print why not (NULL). */
rill_matrix_t *dla_testing_matrix(dla_testing_t *t, const char *what, int m, int n);

#endif
