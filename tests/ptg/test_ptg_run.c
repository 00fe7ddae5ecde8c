/* PTG programs compiled by rillcc (rill_add_ptg) and run, each checked against a
 * sequential computation, one scenario per run (argv[1]):
 *   chain  N tasks in a chain on one tile, each adding its index: the sum, exactly
 *   keyed  the same over a keyed collection of int64_t data (typed flows, calls), any ranks
 *   fan    a tile broadcast to a row of tasks (a range), each writing its own tile, and a
 *          control gather that runs after all of them
 *   potrf  tiled Cholesky on OpenBLAS/LAPACKE, ragged tiles, against LAPACKE_dpotrf
 *   guard  a dependency to a task outside its ranges: the run fails with a message naming
 *          it (no hang)
 *   hop    (1-4 ranks) a value carried along N tasks spread over the ranks by a hash, with a
 *          control gather of all of them; many taskpools in a row (activations, termination)
 *   stencil (1-4 ranks) a 1-D three-point stencil over T steps, double-buffered, against
 *          the same arithmetic done sequentially: exactly
 *   remote (2 ranks or more) a task reading a tile another rank holds: the run fails
 *          with a message naming the tile (not built yet)
 *   outside a tile index outside the matrix (read, written): the run fails saying so
 *   new    (1-4 ranks) NEW tiles: zero-filled, ragged, to a local and a remote successor
 *   gpu    (1-2 ranks, GPUs) CUDA bodies: a value carried over the ranks by tasks on the
 *          GPUs, brought home at the end; exit 77 (skipped) without a GPU
 *   war    (2 ranks) a tile written (on a GPU when there is one), sent to the other rank
 *          (GPU to GPU) and overwritten at once by a local task, a successor of the sender
 *          (war_run) or ordered after it by a control flow only (war2_run): the other rank
 *          reads the first value (the overwrite waits for the put, or for the copy into the
 *          message)
 *   expr   nested expressions (ranges, locals, priorities) as rillcc compiles them, against
 *          the same C expressions
 *   noprod a task waits for an input from a task outside its class's ranges: the run fails
 *          naming both (no silent success)
 *   cycle  (1-2 ranks) tasks that wait for each other (cycles of 2 and 5, over the ranks)
 *          and a task that waits for one of them: the wait fails on every rank, naming them
 *   range  ranges whose step (0, negative) or end (near INT64_MAX) come with the globals:
 *          the creation fails naming the parameter and the values (no endless loop)
 *   div    run-time division and modulo by 0 and INT64_MIN / -1 in a local, a guard and a
 *          priority: the creation or the run fails naming the expression (no SIGFPE)
 *   twoin  (1-2 ranks) a flow with two inputs whose guards both hold takes the first (its
 *          value read exactly); a delivery from the second fails the run naming both sides
 *   affinity (1-2 ranks) an affinity tile outside the matrix (past its end, 2^32) or a
 *          keyed rank_of outside the ranks: the creation fails naming task, tile and range
 *   sizes  a NEW tile of a ragged tile's size written into a full tile: the run fails naming
 *          the task, the flow and both sizes, and the tile is untouched (no partial copy)
 *   nullin a READ / RW flow whose input guards are all false fails the run naming it (no
 *          NULL in the body); ': NULL' written out gives the body NULL, as the docs say
 *   order  (2 ranks) two programs' taskpools created in opposite orders on the two ranks:
 *          an activation of one reaching the other's taskpool fails the run saying so
 *   mismatch (1-2 ranks) deliveries the receiver's input does not name (another task, one
 *          too many, after it ran): the run fails naming receiver, flow, sender and input;
 *          a non-affine dependency that agrees runs
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "rill/rill.h"
#include "rill_dla.h" /* (dpotrf.rill's globals name rill_dla_t) */

#include "affinity_run.h"
#include "chain_run.h"
#include "cycle_run.h"
#include "div_run.h"
#include "expr_run.h"
#include "fan_run.h"
#include "gpu_run.h"
#include "hop_run.h"
#include "keyed_run.h"
#include "mismatch_run.h"
#include "new_run.h"
#include "noguard_run.h"
#include "noprod_run.h"
#include "ordera_run.h"
#include "orderb_run.h"
#include "nullin_run.h"
#include "outside_run.h"
#include "range_run.h"
#include "sizes_run.h"
#include "remote_run.h"
#include "stencil_run.h"
#include "twoin_run.h"
#include "war2_run.h"
#include "war_run.h"
#include "wide_run.h"
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
    /* every other size with inverse panels (INV: those of at least three tiles below the
     * first, from NT = 5 on) */
    int sizes[][2] = { { 1, 1 }, { 7, 3 }, { 100, 32 }, { 301, 64 }, { 500, 96 }, { 700, 64 } };
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
        int inv = (int)(s % 2);
        dpotrf_globals_t g = {
            .NT = rill_matrix_nt(A), .NB = rill_matrix_mb(A), .A = A, .INV = inv
        };
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
        CHECK_MSG(err <= 1e-12 * norm * n, "potrf N=%d NB=%d%s: max difference %.3g (norm %.3g)", n,
                  nb, inv ? " (inverse panels)" : "", err, norm);
        printf("potrf N=%d NB=%d (%d x %d tiles)%s: max difference to LAPACKE %.2g\n", n, nb,
               rill_matrix_mt(A), rill_matrix_nt(A), inv ? ", inverse panels" : "", err);
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
    /* a collection global left NULL is refused at the creation, naming it */
    chain_run_globals_t g3 = { .N = 3, .A = NULL };
    test_capture_begin(&cap);
    s = chain_run_taskpool_create(ctx, &g3, &tp);
    err = test_capture_end(&cap);
    CHECK_MSG(s == RILL_ERR_INVALID_ARG, "a NULL collection global gave %s", rill_status_string(s));
    CHECK_MSG(err && strstr(err, "the collection global A is NULL"),
              "the message does not name the global: %s", err ? err : "(none)");
    free(err);
    /* the matrix of a running taskpool cannot be destroyed until the wait */
    g = (chain_run_globals_t){ .N = 50, .A = A };
    CHECK_OK(chain_run_taskpool_create(ctx, &g, &tp));
    test_capture_begin(&cap);
    s = rill_matrix_destroy(&A);
    err = test_capture_end(&cap);
    CHECK_MSG(s == RILL_ERR_BUSY && A, "destroying the matrix of a running taskpool gave %s",
              rill_status_string(s));
    CHECK_MSG(err && strstr(err, "call rill_taskpool_wait on it first"),
              "the message does not say to wait: %s", err ? err : "(none)");
    free(err);
    run(tp);
    printf("guard: a NULL collection global is refused; a running taskpool's matrix cannot be "
           "destroyed before the wait\n");
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

static int test_stencil(void)
{
    int nranks = rill_context_nranks(ctx), mb = 3;
    static const int shapes[][2] = { { 1, 1 }, { 2, 3 }, { 5, 1 }, { 7, 6 }, { 16, 25 } };
    for (size_t sh = 0; sh < sizeof(shapes) / sizeof(shapes[0]); sh++) {
        int n = shapes[sh][0], steps = shapes[sh][1];
        rill_matrix_t *A, *B;
        CHECK_OK(rill_matrix_create(ctx, n * mb, 1, mb, 1, nranks, 1, &A));
        CHECK_OK(rill_matrix_create(ctx, n * mb, 1, mb, 1, nranks, 1, &B));
        /* the sequential computation, on every rank */
        double *cur = malloc(sizeof(double) * (size_t)(n * mb)),
               *nxt = malloc(sizeof(double) * (size_t)(n * mb));
        CHECK_MSG(cur && nxt, "out of memory");
        for (int i = 0; i < n; i++)
            for (int e = 0; e < mb; e++) {
                cur[i * mb + e] = (double)((i * 31 + e * 7) % 11) - 3.5;
                double *a = rill_matrix_tile_ptr(A, i, 0), *b = rill_matrix_tile_ptr(B, i, 0);
                if (a)
                    a[e] = cur[i * mb + e];
                if (b)
                    b[e] = NAN;
            }
        for (int t = 0; t < steps; t++) {
            for (int i = 0; i < n; i++)
                for (int e = 0; e < mb; e++)
                    nxt[i * mb + e] =
                        ((i > 0 ? cur[(i - 1) * mb + e] : 0.0) + 2.0 * cur[i * mb + e] +
                         (i < n - 1 ? cur[(i + 1) * mb + e] : 0.0)) /
                        4.0;
            double *sw = cur;
            cur = nxt;
            nxt = sw;
        }
        stencil_run_globals_t g = { .N = n, .T = steps, .A = A, .B = B };
        rill_taskpool_t *tp;
        CHECK_OK(stencil_run_taskpool_create(ctx, &g, &tp));
        run(tp);
        rill_matrix_t *res = steps % 2 ? B : A; /* the last step, t = steps-1, wrote it */
        for (int i = 0; i < n; i++) {
            const double *r = rill_matrix_tile_ptr(res, i, 0);
            for (int e = 0; r && e < mb; e++)
                CHECK_MSG(r[e] == cur[i * mb + e],
                          "stencil of %d tiles x %d steps on %d rank(s): tile %d element %d is "
                          "%.17g, expected %.17g",
                          n, steps, nranks, i, e, r[e], cur[i * mb + e]);
        }
        free(cur);
        free(nxt);
        CHECK_OK(rill_matrix_destroy(&B));
        CHECK_OK(rill_matrix_destroy(&A));
    }
    if (rill_context_rank(ctx) == 0)
        printf("stencil: 1-D stencils of up to 16 tiles x 25 steps on %d rank(s): exact\n", nranks);
    return 0;
}

static int test_remote(void)
{
    CHECK_MSG(rill_context_nranks(ctx) >= 2, "scenario remote needs 2 ranks or more");
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, 4, 2, 2, 2, rill_context_nranks(ctx), 1, &A));
    remote_run_globals_t g = { .A = A };
    test_capture_t cap;
    test_capture_begin(&cap); /* before the create: the task may fail during it */
    rill_taskpool_t *tp;
    rill_status_t sc = remote_run_taskpool_create(ctx, &g, &tp);
    rill_status_t s = sc == RILL_SUCCESS ? rill_taskpool_wait(tp) : sc;
    char *err = test_capture_end(&cap);
    CHECK_OK(sc);
    if (rill_context_rank(ctx) == 0) {
        CHECK_MSG(s == RILL_ERR_NOT_SUPPORTED, "reading rank 1's tile returned %s",
                  rill_status_string(s));
        CHECK_MSG(err && strstr(err, "reads tile (1, 0), which rank 1 holds"),
                  "the message does not name the tile: %s", err ? err : "(none)");
        printf("remote: reading another rank's tile fails the run, naming the tile\n");
    } else { /* the failure of rank 0's part fails the taskpool here too */
        CHECK_MSG(s == RILL_ERR_NOT_SUPPORTED, "rank %d's wait returned %s, not rank 0's failure",
                  rill_context_rank(ctx), rill_status_string(s));
    }
    free(err);
    CHECK_OK(rill_taskpool_destroy(&tp));
    CHECK_OK(rill_matrix_destroy(&A));
    return 0;
}

static int test_outside(void)
{
    static const char *const says[] = { "reads tile (-", "writes tile (" };
    for (int mode = 0; mode < 2; mode++) {
        rill_matrix_t *A;
        CHECK_OK(rill_matrix_create(ctx, 8, 2, 2, 2, 1, 1, &A));
        outside_run_globals_t g = { .A = A, .NT = 4, .MODE = mode };
        test_capture_t cap;
        test_capture_begin(&cap);
        rill_taskpool_t *tp;
        rill_status_t sc = outside_run_taskpool_create(ctx, &g, &tp);
        rill_status_t s = sc == RILL_SUCCESS ? rill_taskpool_wait(tp) : sc;
        char *err = test_capture_end(&cap);
        CHECK_MSG(s == RILL_ERR_INVALID_ARG && err && strstr(err, says[mode]) &&
                      strstr(err, "outside its 4 x 1-tile matrix") && !strstr(err, "which rank"),
                  "mode %d: %s, message: %s", mode, rill_status_string(s), err ? err : "(none)");
        free(err);
        if (sc == RILL_SUCCESS)
            CHECK_OK(rill_taskpool_destroy(&tp));
        CHECK_OK(rill_matrix_destroy(&A));
    }
    printf("outside: a tile index outside the matrix fails the run, saying so\n");
    return 0;
}

static int test_new(void)
{
    int nranks = rill_context_nranks(ctx), mb = 4;
    for (int n = 1; n <= 33; n += 8) {
        rill_matrix_t *A;
        CHECK_OK(rill_matrix_create(ctx, n * mb - 2, 1, mb, 1, nranks, 1, &A));
        for (int i = 0; i < n; i++) {
            double *x = rill_matrix_tile_ptr(A, i, 0);
            for (int e = 0; x && e < rill_matrix_tile_rows(A, i); e++)
                x[e] = 1.0;
        }
        new_run_globals_t g = { .N = n, .A = A };
        rill_taskpool_t *tp;
        CHECK_OK(new_run_taskpool_create(ctx, &g, &tp));
        run(tp);
        for (int i = 0; i < n; i++) {
            const double *x = rill_matrix_tile_ptr(A, i, 0);
            for (int e = 0; x && e < rill_matrix_tile_rows(A, i); e++) {
                double want = 1.0 + (10.0 * i + e) + (i > 0 ? 10.0 * (i - 1) + e : 0.0);
                CHECK_MSG(x[e] == want,
                          "new: N=%d on %d rank(s): tile %d element %d is %g, "
                          "expected %g",
                          n, nranks, i, e, x[e], want);
            }
        }
        CHECK_OK(rill_matrix_destroy(&A));
    }
    if (rill_context_rank(ctx) == 0)
        printf("new: NEW tiles (zero-filled, ragged) to local and remote successors on %d "
               "rank(s): right\n",
               nranks);
    return 0;
}

static int key_rank(uint64_t key, void *arg)
{
    return (int)(key % (uint64_t)rill_context_nranks(arg));
}

/* keyed_run.rill: PTG over a keyed collection (one index, data of its datum size, typed
 * flows, calls in the expressions), across the ranks */
static int test_keyed(void)
{
    int nranks = rill_context_nranks(ctx), rank = rill_context_rank(ctx), len = 5;
    for (int n = 1; n <= 17; n += 4) {
        rill_collection_t *D;
        CHECK_OK(rill_collection_create(ctx, (size_t)len * sizeof(int64_t), key_rank, ctx, &D));
        keyed_run_globals_t g = { .N = n, .D = D };
        rill_taskpool_t *tp;
        CHECK_OK(keyed_run_taskpool_create(ctx, &g, &tp));
        run(tp);
        if ((n - 1) % nranks == rank) { /* the last datum: sum over i < n of (i + e) */
            const int64_t *x = rill_data_ptr(rill_collection_data_of(D, (uint64_t)n - 1));
            CHECK_MSG(x != NULL, "keyed: N=%d: no datum %d here", n, n - 1);
            for (int e = 0; x && e < len; e++) {
                int64_t want = (int64_t)n * (n - 1) / 2 + (int64_t)n * e;
                CHECK_MSG(x[e] == want,
                          "keyed: N=%d on %d rank(s): element %d is %lld, expected %lld", n, nranks,
                          e, (long long)x[e], (long long)want);
            }
        }
        CHECK_OK(rill_collection_destroy(&D));
    }
    if (rank == 0)
        printf("keyed: chains over a keyed collection of int64_t data on %d rank(s): right\n",
               nranks);
    return 0;
}

atomic_int gpu_run_cuda_bodies;

static int test_gpu(void)
{
    if (rill_context_ngpus(ctx) == 0) {
        printf("gpu: skipped: this process has no GPU (rill_info --devices)\n");
        return 77;
    }
    int nranks = rill_context_nranks(ctx), ntl = 3 * nranks + 1;
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, 2, ntl, 2, 1, 1, nranks, &A)); /* tiles 2 x 1 */
    static const int sizes[] = { 1, 2, 17, 300 };
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        int n = sizes[k];
        /* rank 0's; written through tile_write: GPU copies of the last run are stale */
        double *t = rill_matrix_tile_write(A, 0, 0);
        if (t) {
            t[0] = 0.5;
            t[1] = 1.0;
        }
        gpu_run_globals_t g = { .N = n, .NTL = ntl, .A = A };
        rill_taskpool_t *tp;
        CHECK_OK(gpu_run_taskpool_create(ctx, &g, &tp));
        run(tp);
        if (t) {
            double want = 2 * (0.5 + (double)n * (n - 1) / 2);
            CHECK_MSG(t[0] == want, "gpu: %d tasks on %d rank(s): %g, expected %g", n, nranks, t[0],
                      want);
        }
    }
    int ran = atomic_load(&gpu_run_cuda_bodies);
    CHECK_MSG(ran > 0, "gpu: no CUDA body ran on this rank's %d GPU(s)", rill_context_ngpus(ctx));
    printf("gpu: rank %d: %d CUDA bodies ran; the values came home right\n", rill_context_rank(ctx),
           ran);
    CHECK_OK(rill_matrix_destroy(&A));
    return 0;
}

static int test_expr(void)
{
    for (int n = 1; n <= 9; n += 4) {
        rill_matrix_t *A;
        CHECK_OK(rill_matrix_create(ctx, 6 * n, 1, 6, 1, 1, 1, &A));
        for (int i = 0; i < n; i++)
            for (int e = 0; e < 6; e++)
                rill_matrix_tile_ptr(A, i, 0)[e] = NAN;
        expr_run_globals_t g = { .N = n, .A = A };
        rill_taskpool_t *tp;
        CHECK_OK(expr_run_taskpool_create(ctx, &g, &tp));
        run(tp);
        for (int i = 0; i < n; i++) {
            const double *x = rill_matrix_tile_ptr(A, i, 0);
            int64_t want[6] = { (i - 3) * 2 + 1,
                                i - 1 + 1,
                                (i * 7) % 5 - i / 2,
                                ((i < 3 && i != 1) || i >= 6) ? i * i - 1 : -i + 2,
                                !(i == 4) + (i <= 2) * 10 - (i > 5),
                                n - i * 2 % 3 + (n - 1) * (i + 1) / 2 };
            for (int e = 0; e < 6; e++)
                CHECK_MSG(x[e] == (double)want[e],
                          "expr N=%d: EXPR(%d)'s local %c is %g, expected %lld", n, i, 'a' + e,
                          x[e], (long long)want[e]);
        }
        CHECK_OK(rill_matrix_destroy(&A));
    }
    printf("expr: nested expressions in ranges and locals evaluate as in C\n");
    return 0;
}

/* A run that must fail: create (status sc) then wait (s); the first error and what was
 * logged. */
static rill_status_t failing_run(rill_status_t (*create)(rill_taskpool_t **, const void *),
                                 const void *g, char **log, bool *at_create)
{
    test_capture_t cap;
    test_capture_begin(&cap); /* before the create: tasks may fail during it */
    rill_taskpool_t *tp = NULL;
    rill_status_t s = create(&tp, g);
    *at_create = s != RILL_SUCCESS;
    if (s == RILL_SUCCESS) {
        s = rill_taskpool_wait(tp);
        rill_status_t d = rill_taskpool_destroy(&tp);
        if (d != RILL_SUCCESS && s == RILL_SUCCESS)
            s = d;
    } else if (tp)
        s = RILL_ERR_BAD_STATE; /* a failed creation gives no taskpool */
    *log = test_capture_end(&cap);
    return s;
}

static rill_status_t create_noprod(rill_taskpool_t **tp, const void *g)
{
    return noprod_run_taskpool_create(ctx, g, tp);
}
static rill_status_t create_cycle(rill_taskpool_t **tp, const void *g)
{
    return cycle_run_taskpool_create(ctx, g, tp);
}
static rill_status_t create_range(rill_taskpool_t **tp, const void *g)
{
    return range_run_taskpool_create(ctx, g, tp);
}
static rill_status_t create_div(rill_taskpool_t **tp, const void *g)
{
    return div_run_taskpool_create(ctx, g, tp);
}
static rill_status_t create_twoin(rill_taskpool_t **tp, const void *g)
{
    return twoin_run_taskpool_create(ctx, g, tp);
}
static rill_status_t create_mismatch(rill_taskpool_t **tp, const void *g)
{
    return mismatch_run_taskpool_create(ctx, g, tp);
}

#define EXPECT_FAIL(s, log, want)                                                                  \
    do {                                                                                           \
        CHECK_MSG((s) == RILL_ERR_INVALID_ARG, "%s: returned %s, expected RILL_ERR_INVALID_ARG",   \
                  want, rill_status_string(s));                                                    \
        CHECK_MSG((log) && strstr((log), (want)), "the message does not say '%s': %s", want,       \
                  (log) ? (log) : "(none)");                                                       \
    } while (0)

static int test_noprod(void)
{
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, 2, 2, 2, 2, 1, 1, &A));
    noprod_run_globals_t g = { .N = 4, .A = A };
    char *log;
    bool at_create;
    rill_status_t s = failing_run(create_noprod, &g, &log, &at_create);
    EXPECT_FAIL(s, log,
                "PTG task C(2) waits for an input from P(2), which is outside P's "
                "parameter ranges");
    free(log);
    g.N = 2; /* every consumer has its producer */
    rill_taskpool_t *tp;
    CHECK_OK(noprod_run_taskpool_create(ctx, &g, &tp));
    run(tp);
    CHECK_OK(rill_matrix_destroy(&A));
    printf("noprod: C(2) waiting for P(2), outside P's range, fails the run naming both\n");
    return 0;
}

static int test_cycle(void)
{
    int nranks = rill_context_nranks(ctx), me = rill_context_rank(ctx);
    static const int sizes[] = { 2, 5 };
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        int n = sizes[k];
        rill_matrix_t *A;
        CHECK_OK(rill_matrix_create(ctx, 1, n, 1, 1, 1, nranks, &A)); /* tile (0, i): rank i % P */
        cycle_run_globals_t g = { .N = n, .A = A };
        char *log;
        bool at_create;
        rill_status_t s = failing_run(create_cycle, &g, &log, &at_create);
        CHECK_MSG(!at_create, "cycle of %d: the creation failed: %s", n, log ? log : "(none)");
        EXPECT_FAIL(s, log, "wait for inputs that no task will send");
        /* each rank names its own: T(me) is on this rank (tile (0, me)), W(0) on rank 0 */
        char want[64];
        snprintf(want, sizeof(want), "T(%d) waits for 1 input(s)", me);
        if (n <= 2 || nranks == 1 || me > 0) /* rank 0 names W(0) and up to 3 of its T's */
            EXPECT_FAIL(s, log, want);
        if (me == 0)
            EXPECT_FAIL(s, log, "W(0) waits for 1 input(s)");
        free(log);
        CHECK_OK(rill_matrix_destroy(&A));
    }
    if (me == 0)
        printf("cycle: cycles of 2 and 5 tasks on %d rank(s), and a task waiting for one: the "
               "wait fails on every rank, naming them\n",
               nranks);
    return 0;
}

static int test_range(void)
{
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, 2, 2, 2, 2, 1, 1, &A));
    static const struct {
        int64_t lo, hi, step;
        const char *want;
    } cases[] = {
        { 0, 10, 0,
          "R, parameter j (range_run.rill:12) has the range 0 .. 10 .. 0, whose step "
          "is 0" },
        { 0, 10, -2, "has the range 0 .. 10 .. -2, whose step is negative" },
        { 5, -3, 0, "has the range 5 .. -3 .. 0, whose step is 0" }, /* empty, still wrong */
        { 0, INT64_MAX, 1, "whose end is above INT64_MAX - step = 9223372036854775806" },
        { INT64_MAX - 10, INT64_MAX - 2, 3, "whose end is above INT64_MAX - step" },
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        range_run_globals_t g = {
            .LO = cases[k].lo, .HI = cases[k].hi, .S = cases[k].step, .A = A
        };
        char *log;
        bool at_create;
        rill_status_t s = failing_run(create_range, &g, &log, &at_create);
        CHECK_MSG(at_create, "range %zu: the creation did not fail", k);
        EXPECT_FAIL(s, log, cases[k].want);
        free(log);
    }
    /* a range near the end that is right: its last step lands on INT64_MAX - 3 */
    range_run_globals_t g = { .LO = INT64_MAX - 9, .HI = INT64_MAX - 3, .S = 3, .A = A };
    rill_taskpool_t *tp;
    CHECK_OK(range_run_taskpool_create(ctx, &g, &tp));
    run(tp);
    CHECK_OK(rill_matrix_destroy(&A));
    printf("range: steps of 0 and below and ends past INT64_MAX - step fail the creation, "
           "naming them\n");
    return 0;
}

static int test_div(void)
{
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, 2, 2, 2, 2, 1, 1, &A));
    static const struct {
        int m;
        int64_t d, b;
        bool at_create;
        const char *want;
    } cases[] = {
        { 1, 0, 7, true, "V, div_run.rill:14: (B + i) / D divides by zero (7 / 0)" },
        { 1, -1, INT64_MIN, true,
          "(B + i) / D overflows 64-bit integers "
          "(-9223372036854775808 / -1)" },
        { 4, 0, 0, true, "V, div_run.rill:15: i % D is a modulo by zero (0 % 0)" },
        { 2, 0, 0, false, "V, div_run.rill:17: i % D is a modulo by zero" },
        { 3, 0, 0, false, "V, div_run.rill:19: N / D divides by zero (4 / 0)" },
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        div_run_globals_t g = { .N = 4, .D = cases[k].d, .B = cases[k].b, .M = cases[k].m, .A = A };
        char *log;
        bool at_create;
        rill_status_t s = failing_run(create_div, &g, &log, &at_create);
        CHECK_MSG(at_create == cases[k].at_create, "div %zu: the creation %s", k,
                  at_create ? "failed" : "did not fail");
        EXPECT_FAIL(s, log, cases[k].want);
        free(log);
    }
    div_run_globals_t g = { .N = 4, .D = 2, .B = 0, .M = 2, .A = A }; /* divisions that work */
    rill_taskpool_t *tp;
    CHECK_OK(div_run_taskpool_create(ctx, &g, &tp));
    run(tp);
    CHECK_OK(rill_matrix_destroy(&A));
    printf("div: division and modulo by 0 and INT64_MIN / -1 in a local, a guard and a "
           "priority fail the creation or the run, naming the expression\n");
    return 0;
}

atomic_int war_run_cuda_bodies;

static int test_war(void)
{
    if (rill_context_nranks(ctx) != 2) {
        printf("war: skipped: it needs 2 ranks (this is %d)\n", rill_context_nranks(ctx));
        return 77;
    }
    int me = rill_context_rank(ctx);
    /* tiles of 64 x 64 (the first two doubles used): A(0, 0) on rank 0, A(0, 1) on rank 1 */
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, 64, 128, 64, 64, 1, 2, &A));
    static const int sizes[] = { 1, 5, 60 };
    for (size_t r = 0; r < sizeof(sizes) / sizeof(sizes[0]); r++) {
        int n = sizes[r];
        for (int prog = 0; prog < 2; prog++) { /* the writer after the sender, or by control */
            /* written through tile_write: GPU copies of the last run are stale */
            double *t = rill_matrix_tile_write(A, 0, me);
            CHECK_MSG(t != NULL, "war: rank %d holds no tile (0, %d)", me, me);
            t[0] = 0;
            t[1] = 1.0;
            rill_taskpool_t *tp;
            if (prog == 0) {
                war_run_globals_t g = { .N = n, .A = A };
                CHECK_OK(war_run_taskpool_create(ctx, &g, &tp));
            } else {
                war2_run_globals_t g = { .N = n, .A = A };
                CHECK_OK(war2_run_taskpool_create(ctx, &g, &tp));
            }
            run(tp);
            double want = me == 0 ? -1e6 : (double)n * (n + 1) / 2;
            CHECK_MSG(t[0] == want, "war%s: %d rounds: rank %d's tile holds %g, expected %g%s",
                      prog ? "2" : "", n, me, t[0], want,
                      me == 1 && t[0] < 0 ? " (a put read the tile after its overwrite)" : "");
        }
    }
    int ran = atomic_load(&war_run_cuda_bodies);
    CHECK_MSG(ran > 0 || rill_context_ngpus(ctx) == 0,
              "war: no CUDA body ran on rank %d's %d GPU(s)", me, rill_context_ngpus(ctx));
    printf("war: rank %d: %d CUDA bodies ran; every read saw the value before the overwrite\n", me,
           ran);
    CHECK_OK(rill_matrix_destroy(&A));
    return 0;
}

double twoin_run_seen[8];

/* A flow whose two inputs' guards both hold takes the first (PaRSEC's rule): one input to
 * wait for, the first's tile; a delivery from the second fails the run on the receivers'
 * rank (the last), naming both sides. */
static int test_twoin(void)
{
    int nranks = rill_context_nranks(ctx), me = rill_context_rank(ctx), last = nranks - 1;
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, 2, 2 * nranks, 2, 2, 1, nranks, &A));
    twoin_run_globals_t g = { .N = 4, .M = 0, .LAST = last, .A = A };
    rill_taskpool_t *tp;
    CHECK_OK(twoin_run_taskpool_create(ctx, &g, &tp));
    run(tp);
    for (int i = 0; me == last && i < 4; i++)
        CHECK_MSG(twoin_run_seen[i] == 100 + i, "twoin: C(%d) read %g, expected P(%d)'s %d", i,
                  twoin_run_seen[i], i, 100 + i);
    g.M = 1; /* Q(i) sends too */
    char *log;
    bool at_create;
    rill_status_t s = failing_run(create_twoin, &g, &log, &at_create);
    if (me == last) {
        EXPECT_FAIL(s, log, "PTG task C(");
        EXPECT_FAIL(s, log, "flow X (twoin_run.rill:36): a delivery from Q(");
        EXPECT_FAIL(s, log, "but its input is X P(");
        EXPECT_FAIL(s, log, "(twoin_run.rill:36), the first whose guard holds");
    } else { /* the receiver's failure fails the taskpool on the senders' ranks too */
        char says[64];
        snprintf(says, sizeof(says), "rank %d's part of it failed", last);
        EXPECT_FAIL(s, log, says);
    }
    free(log);
    CHECK_OK(rill_matrix_destroy(&A));
    if (me == 0)
        printf("twoin: on %d rank(s), the first input whose guard holds counts; a delivery from "
               "the second fails the run naming both\n",
               nranks);
    return 0;
}

static rill_status_t create_affinity(rill_taskpool_t **tp, const void *g)
{
    return affinity_run_taskpool_create(ctx, g, tp);
}

/* datum 2 is homed on rank 5, which no run of these tests has */
static int bad_rank_of(uint64_t key, void *arg)
{
    (void)arg;
    return key == 2 ? 5 : 0;
}

static int test_affinity(void)
{
    int nranks = rill_context_nranks(ctx);
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, 8, 2, 2, 2, nranks, 1, &A)); /* 4 x 1 tiles */
    rill_collection_t *D;
    CHECK_OK(rill_collection_create(ctx, sizeof(double), bad_rank_of, NULL, &D));
    affinity_run_globals_t g = { .N = 4, .S = 0, .NK = 2, .A = A, .D = D };
    rill_taskpool_t *tp;
    CHECK_OK(affinity_run_taskpool_create(ctx, &g, &tp));
    run(tp);
    static const struct {
        int n;
        int64_t s;
        int nk;
        const char *want;
    } cases[] = {
        { 4, 1, 0,
          "T(3) has the affinity A(i + S, 0) (affinity_run.rill:15), tile (4, 0), outside the "
          "4 x 1-tile matrix (tile indices 0..3, 0..0)" },
        { 1, INT64_C(1) << 32, 0,
          "T(0) has the affinity A(i + S, 0) (affinity_run.rill:15), tile (4294967296, 0), "
          "outside" },
        { 0, 0, 3,
          "K(2) has the affinity D(i) (affinity_run.rill:23), datum 2, which the collection's "
          "rank_of maps to rank 5, outside 0.." },
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        g = (affinity_run_globals_t){
            .N = cases[k].n, .S = cases[k].s, .NK = cases[k].nk, .A = A, .D = D
        };
        char *log;
        bool at_create;
        rill_status_t s = failing_run(create_affinity, &g, &log, &at_create);
        CHECK_MSG(at_create, "affinity case %zu: the creation succeeded: %s", k,
                  log ? log : "(none)");
        EXPECT_FAIL(s, log, cases[k].want);
        free(log);
    }
    CHECK_OK(rill_collection_destroy(&D));
    CHECK_OK(rill_matrix_destroy(&A));
    if (rill_context_rank(ctx) == 0)
        printf("affinity: on %d rank(s), affinities outside the matrix or the ranks fail the "
               "creation naming the task and the tile\n",
               nranks);
    return 0;
}

static rill_status_t create_sizes(rill_taskpool_t **tp, const void *g)
{
    return sizes_run_taskpool_create(ctx, g, tp);
}

static int test_sizes(void)
{
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, 5, 4, 4, 4, 1, 1, &A)); /* tile (1, 0) is 1 x 4 */
    double *t = rill_matrix_tile_ptr(A, 0, 0);
    for (int e = 0; e < 16; e++)
        t[e] = -1;
    sizes_run_globals_t g = { .K = 1, .A = A };
    char *log;
    bool at_create;
    rill_status_t s = failing_run(create_sizes, &g, &log, &at_create);
    EXPECT_FAIL(s, log,
                "PTG task P(0), flow X (sizes_run.rill:13): its data is 32 bytes, but it is "
                "written into tile (0, 0) of 128 bytes");
    free(log);
    for (int e = 0; e < 16; e++)
        CHECK_MSG(t[e] == -1, "sizes: element %d of tile (0, 0) is %g: a partial copy", e, t[e]);
    g.K = 0; /* the same size: copied whole */
    rill_taskpool_t *tp;
    CHECK_OK(sizes_run_taskpool_create(ctx, &g, &tp));
    run(tp);
    for (int e = 0; e < 16; e++)
        CHECK_MSG(t[e] == 7, "sizes: element %d of tile (0, 0) is %g, expected 7", e, t[e]);
    CHECK_OK(rill_matrix_destroy(&A));
    printf("sizes: a tile of 4 doubles written into one of 16 fails the run, the tile "
           "untouched; one of 16 is copied whole\n");
    return 0;
}

static rill_status_t create_nullin(rill_taskpool_t **tp, const void *g)
{
    return nullin_run_taskpool_create(ctx, g, tp);
}

int nullin_run_seen[4];

static int test_nullin(void)
{
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, 2, 2, 2, 2, 1, 1, &A));
    nullin_run_globals_t g = { .N = 3, .M = 0, .A = A };
    rill_taskpool_t *tp;
    CHECK_OK(nullin_run_taskpool_create(ctx, &g, &tp));
    run(tp);
    for (int i = 0; i < 3; i++)
        CHECK_MSG(nullin_run_seen[i] == (i == 0 ? 1 : 2), "nullin: D(%d)'s Y was %s", i,
                  nullin_run_seen[i] == 1 ? "NULL" : "not NULL");
    g = (nullin_run_globals_t){ .N = 0, .M = 2, .A = A };
    char *log;
    bool at_create;
    rill_status_t s = failing_run(create_nullin, &g, &log, &at_create);
    EXPECT_FAIL(s, log,
                "PTG task C(0), flow X (nullin_run.rill:15): none of its input guards holds, so "
                "its body would get NULL");
    free(log);
    CHECK_OK(rill_matrix_destroy(&A));
    printf("nullin: an RW flow with no input at run time fails naming it; ': NULL' gives the "
           "body NULL\n");
    return 0;
}

double mismatch_run_seen[16];

static int test_mismatch(void)
{
    int nranks = rill_context_nranks(ctx), me = rill_context_rank(ctx), last = nranks - 1;
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, 2, 2 * nranks, 2, 2, 1, nranks, &A));
    /* a non-affine dependency whose two sides agree: C0(i) reads P0(i - 1)'s value */
    mismatch_run_globals_t g = { .N0 = 5, .LAST = last, .A = A };
    rill_taskpool_t *tp;
    CHECK_OK(mismatch_run_taskpool_create(ctx, &g, &tp));
    run(tp);
    for (int i = 0; me == last && i < 5; i++)
        CHECK_MSG(mismatch_run_seen[i] == 100 + (i + 4) % 5,
                  "mismatch: C0(%d) read %g, expected P0(%d)'s %d", i, mismatch_run_seen[i],
                  (i + 4) % 5, 100 + (i + 4) % 5);
    static const struct {
        int n[6];
        const char *want[3];
    } cases[] = {
        { { 0, 4, 0, 0, 0, 0 },
          { "PTG task C1(0), flow X (mismatch_run.rill:53): a delivery from P1(1) (flow X)",
            "but its input is X P1(0) (mismatch_run.rill:53)", NULL } },
        { { 0, 0, 4, 0, 0, 0 },
          { "flow X (mismatch_run.rill:76): a delivery from P2(", "but its input is X Q2(",
            NULL } },
        { { 0, 0, 3, 0, 0, 0 },
          { "PTG task C2(0), flow X (mismatch_run.rill:76): a delivery from Q2(0) (flow X), "
            "but its input is X P2(0)",
            NULL } },
        { { 0, 0, 0, 4, 0, 0 },
          { "PTG task C3(1), flow X (mismatch_run.rill:91): a delivery from P3(0) (flow X), "
            "but its input is X P3(1) (mismatch_run.rill:91)",
            NULL } },
        { { 0, 0, 0, 0, 2, 0 },
          { "PTG task C4(0), flow X (mismatch_run.rill:115): delivery number 2 (one too many) "
            "from P4(0) (flow X), but its input is X P4(0)",
            NULL } },
        { { 0, 0, 0, 0, 0, 2 },
          { "PTG task C5(1), flow X (mismatch_run.rill:131): a delivery after C5(1) had all its "
            "inputs (it ran) from P5(1) (flow X), but its input is X P5(1)",
            NULL } },
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        g = (mismatch_run_globals_t){ .N0 = cases[k].n[0],
                                      .N1 = cases[k].n[1],
                                      .N2 = cases[k].n[2],
                                      .N3 = cases[k].n[3],
                                      .N4 = cases[k].n[4],
                                      .N5 = cases[k].n[5],
                                      .LAST = last,
                                      .A = A };
        char *log;
        bool at_create;
        rill_status_t s = failing_run(create_mismatch, &g, &log, &at_create);
        CHECK_MSG(!at_create, "mismatch case %zu: the creation failed: %s", k,
                  log ? log : "(none)");
        if (me == last)
            for (int w = 0; w < 3 && cases[k].want[w]; w++)
                EXPECT_FAIL(s, log, cases[k].want[w]);
        else { /* the senders' ranks fail with the receiver's rank */
            char says[64];
            snprintf(says, sizeof(says), "rank %d's part of it failed", last);
            EXPECT_FAIL(s, log, says);
        }
        free(log);
    }
    CHECK_OK(rill_matrix_destroy(&A));
    if (me == 0)
        printf("mismatch: on %d rank(s), deliveries from another task, one too many and after "
               "the task ran fail the run naming both sides; an agreeing non-affine one runs\n",
               nranks);
    return 0;
}

/* ordera_run's and orderb_run's taskpools (one shape, other names), created in one order on
 * rank 0 and in the other on rank 1 (the API says: the same order): the activations of one
 * reach the other's taskpool of that id, and must be refused there, saying so (before, they
 * were delivered to the other program's classes of the same numbers: the sums mixed).
 * order_shape: two programs of other shapes (ordera_run, chain_run), each rank waiting
 * for ordera first: the ranks wait for different taskpools, whose messages their
 * termination waves would count together for ever (a hang). Every wait must fail on both
 * ranks, saying why. */
static rill_status_t create_ordera(rill_taskpool_t **tp, const void *g)
{
    return ordera_run_taskpool_create(ctx, g, tp);
}
static rill_status_t create_orderb(rill_taskpool_t **tp, const void *g)
{
    return orderb_run_taskpool_create(ctx, g, tp);
}
static rill_status_t create_chain(rill_taskpool_t **tp, const void *g)
{
    return chain_run_taskpool_create(ctx, g, tp);
}

/* ordera_run on A and a second program (create_b, its globals gb on B) created in opposite
 * orders on 2 ranks: both waits must fail on both ranks; the rank that checks (check_rank,
 * -1: every rank) must say want. */
static int order_run(const char *name, rill_status_t (*create_b)(rill_taskpool_t **, const void *),
                     void *gb, rill_matrix_t *A, int check_rank, const char *want,
                     const char *want2)
{
    int me = rill_context_rank(ctx);
    ordera_run_globals_t ga = { .N = 50, .K = 1, .A = A };
    test_capture_t cap;
    test_capture_begin(&cap);
    rill_taskpool_t *ta = NULL, *tb = NULL;
    if (me == 0) {
        CHECK_OK(create_ordera(&ta, &ga));
        CHECK_OK(create_b(&tb, gb));
    } else {
        CHECK_OK(create_b(&tb, gb));
        CHECK_OK(create_ordera(&ta, &ga));
    }
    rill_status_t sa = rill_taskpool_wait(ta), sb = rill_taskpool_wait(tb);
    char *log = test_capture_end(&cap);
    CHECK_MSG(sa != RILL_SUCCESS && sb != RILL_SUCCESS,
              "%s: rank %d's waits returned %s and %s: %s", name, me, rill_status_string(sa),
              rill_status_string(sb), log ? log : "(none)");
    if (check_rank < 0 || me == check_rank)
        CHECK_MSG(log && strstr(log, want) && (!want2 || strstr(log, want2)),
                  "%s: rank %d does not say why: %s", name, me, log ? log : "(none)");
    free(log);
    CHECK_OK(rill_taskpool_destroy(&ta));
    CHECK_OK(rill_taskpool_destroy(&tb));
    return 0;
}

static int test_order_both(bool shape)
{
    const char *name = shape ? "order_shape" : "order";
    if (rill_context_nranks(ctx) != 2) {
        printf("%s: skipped: it needs 2 ranks (this is %d)\n", name, rill_context_nranks(ctx));
        return 77;
    }
    rill_matrix_t *A, *B;
    CHECK_OK(rill_matrix_create(ctx, 4, 8, 4, 4, 1, 2, &A));
    CHECK_OK(rill_matrix_create(ctx, 4, 8, 4, 4, 1, 2, &B));
    orderb_run_globals_t gb = { .N = 50, .K = 1000, .A = B };
    chain_run_globals_t gc = { .N = 20, .A = B };
    int rc = shape ? order_run(name, create_chain, &gc, A, -1,
                               "the ranks wait for different taskpools", NULL)
                   /* rank 0 sends first: rank 1 receives the other program's activations */
                   : order_run(name, create_orderb, &gb, A, 1, "comes from another program",
                               "every rank must create its PTG taskpools in the same order");
    CHECK_OK(rill_matrix_destroy(&A));
    CHECK_OK(rill_matrix_destroy(&B));
    if (rc == 0 && rill_context_rank(ctx) == 1)
        printf("%s: %s\n", name,
               shape ? "ranks waiting for different taskpools fail, saying so"
                     : "an activation of another program's taskpool is refused, saying why");
    return rc;
}

/* Parameters past int: each task's body sees its own (int64_t). */
int64_t wide_run_seen[3];

static int test_wide(void)
{
    rill_matrix_t *A;
    CHECK_OK(rill_matrix_create(ctx, 2, 2, 2, 2, 1, 1, &A));
    const int64_t lo = ((int64_t)1 << 32) + 5;
    wide_run_globals_t g = { .LO = lo, .A = A };
    rill_taskpool_t *tp;
    CHECK_OK(wide_run_taskpool_create(ctx, &g, &tp));
    run(tp);
    for (int k = 0; k < 3; k++)
        CHECK_MSG(wide_run_seen[k] == lo + k, "wide: T(%lld) saw i = %lld", (long long)(lo + k),
                  (long long)wide_run_seen[k]);
    CHECK_OK(rill_matrix_destroy(&A));
    printf("wide: parameters past int reach the bodies whole\n");
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
    else if (!strcmp(what, "stencil"))
        rc = test_stencil();
    else if (!strcmp(what, "expr"))
        rc = test_expr();
    else if (!strcmp(what, "outside"))
        rc = test_outside();
    else if (!strcmp(what, "remote"))
        rc = test_remote();
    else if (!strcmp(what, "new"))
        rc = test_new();
    else if (!strcmp(what, "keyed"))
        rc = test_keyed();
    else if (!strcmp(what, "gpu"))
        rc = test_gpu();
    else if (!strcmp(what, "war"))
        rc = test_war();
    else if (!strcmp(what, "noprod"))
        rc = test_noprod();
    else if (!strcmp(what, "cycle"))
        rc = test_cycle();
    else if (!strcmp(what, "range"))
        rc = test_range();
    else if (!strcmp(what, "div"))
        rc = test_div();
    else if (!strcmp(what, "affinity"))
        rc = test_affinity();
    else if (!strcmp(what, "sizes"))
        rc = test_sizes();
    else if (!strcmp(what, "nullin"))
        rc = test_nullin();
    else if (!strcmp(what, "order"))
        rc = test_order_both(false);
    else if (!strcmp(what, "order_shape"))
        rc = test_order_both(true);
    else if (!strcmp(what, "wide"))
        rc = test_wide();
    else if (!strcmp(what, "twoin"))
        rc = test_twoin();
    else if (!strcmp(what, "mismatch"))
        rc = test_mismatch();
    else {
        fprintf(stderr,
                "unknown scenario '%s': chain, fan, potrf, guard, hop, "
                "stencil, expr, remote, new, keyed, gpu, war, noprod, cycle, range, div, twoin, "
                "mismatch, affinity, sizes, nullin, order\n",
                what);
        rc = 2;
    }
    CHECK_OK(rill_fini(&ctx));
    return rc;
}
