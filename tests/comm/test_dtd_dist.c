/* Distributed DTD with real MPI ranks: every rank inserts the same tasks; the rank that
 * owns a task's AFFINITY tile runs it; tiles move between ranks as the graph needs.
 *   chain SIZE   a tile passed around the ranks by INOUT tasks, payload SIZE bytes
 *   bcast        one tile written on rank 0, read by tasks on every rank
 *   potrf P Q N NB   tiled Cholesky on a block-cyclic matrix vs. a sequential one
 *   private      data from rill_data_create stay private to each rank
 *   discard      a tile discarded after its last write (rill_dtd_data_discard) is not
 *                brought home; one written again, or flushed, after its discard is
 *   stall        rank 1 is slow to produce what rank 0 waits for: rank 0's watchdog
 *                names the datum, its version and rank 1 (run with runtime_watchdog_s 1)
 *   diverge      rank 1 inserts one more task: every rank reports the mismatch and the
 *                job stops (run through tests/expect_fail.sh)
 *   diverge_window first|middle|short N   the sequences differ before a window fills
 *                (an extra task first, another class midway, one rank stopping midway):
 *                a rank blocked in its window must not wait forever
 *   diverge_home N   the same N tasks, but the ranks disagree on where the data live (a
 *                rank_of that differs): every rank reports the mismatch and the job stops
 *   fail_remote  a task fails on rank 1; tasks on every rank read its tile: every rank's
 *                wait returns the failure
 *   leave fini|coll   rank 1 leaves the sequence while rank 0 waits at the end of a
 *                taskpool: it calls rill_fini without the second taskpool, or an allgather
 *                before its wait; rank 1 says so and the job stops
 *   collmismatch alone|sizes   rank 0 alone in an allgather, or each rank with its own
 *                size: every rank says the ranks did not make the same collectives
 *   collstall    rank 1's only worker (its main thread) runs a 2.5 s task inside the
 *                collectives that close the taskpool, while rank 0 waits in them: with
 *                runtime_watchdog_s 1, rank 0's watchdog reports the collective it waits
 *                in, rank 1's the task its main thread runs
 *   window N     rank 0 writes a tile N times, rank 1 reads each version: with one worker
 *                per rank and a small dtd_window_size, rank 0 reaches its wait (and the
 *                collectives of closing) with tasks left that rank 1, throttled by its
 *                window, waits for; rank 0 must keep running them meanwhile
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rill/rill.h"
#include "test_util.h"

#include "comm.h" /* internal: message counters, to check a datum is received once */
#include "core.h"

static int rank_is_key(uint64_t key, void *arg)
{
    int nranks = *(int *)arg;
    return (int)(key % (uint64_t)nranks);
}

/* ------------------------------------------------------------ chain */

static rill_status_t chain_body(rill_task_t *task)
{
    int k;
    double *ball, *anchor;
    size_t n;
    rill_dtd_unpack_args(task, &k, &n, &anchor, &ball);
    for (size_t i = 0; i < n; i++)
        ball[i] = ball[i] * 0.5 + k + (double)i;
    anchor[0] += 1; /* count the tasks each rank ran */
    return RILL_SUCCESS;
}

static int test_chain(rill_context_t *ctx, size_t bytes)
{
    int nranks = rill_context_nranks(ctx), me = rill_context_rank(ctx);
    size_t n = bytes / sizeof(double);
    rill_collection_t *anchors, *balls;
    CHECK(rill_collection_create(ctx, sizeof(double), rank_is_key, &nranks, &anchors) == 0);
    CHECK(rill_collection_create(ctx, n * sizeof(double), rank_is_key, &nranks, &balls) == 0);
    rill_data_t *ball = rill_collection_data_of(balls, 0); /* home: rank 0 */
    rill_dtd_class_t *cls;
    CHECK(rill_dtd_class_create(ctx, "chain", chain_body, &cls) == 0);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == 0);
    const int steps = 40;
    for (int k = 0; k < steps; k++) {
        rill_data_t *anchor = rill_collection_data_of(anchors, (uint64_t)(k % nranks));
        CHECK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_VALUE, sizeof(k), &k, RILL_DTD_VALUE,
                                   sizeof(n), &n, RILL_DTD_INOUT | RILL_DTD_AFFINITY, anchor,
                                   RILL_DTD_INOUT, ball, RILL_DTD_ARG_END) == 0);
    }
    CHECK(rill_taskpool_wait(tp) == RILL_SUCCESS);
    rill_taskpool_destroy(&tp);
    /* the ball came home to rank 0; each rank's anchor counted its own tasks */
    double *mine = rill_data_ptr(rill_collection_data_of(anchors, (uint64_t)me));
    int expect = 0;
    for (int k = 0; k < steps; k++)
        expect += k % nranks == me;
    CHECK_MSG(mine[0] == expect, "rank %d ran %g chain tasks, expected %d", me, mine[0], expect);
    if (me == 0) {
        double *b = rill_data_ptr(ball);
        for (size_t i = 0; i < n; i++) {
            double ref = 0;
            for (int k = 0; k < steps; k++)
                ref = ref * 0.5 + k + (double)i;
            CHECK_MSG(b[i] == ref, "ball[%zu] = %g, expected %g", i, b[i], ref);
        }
    }
    rill_dtd_class_destroy(&cls);
    rill_collection_destroy(&anchors);
    rill_collection_destroy(&balls);
    return 0;
}

/* ------------------------------------------------------------ broadcast */

static rill_status_t fill_body(rill_task_t *task)
{
    double *src;
    rill_dtd_unpack_args(task, &src);
    for (int i = 0; i < 1024; i++)
        src[i] = i * 3.0;
    return RILL_SUCCESS;
}

static rill_status_t read_body(rill_task_t *task)
{
    double *src, *out;
    int j;
    rill_dtd_unpack_args(task, &j, &src, &out);
    double s = 0;
    for (int i = 0; i < 1024; i++)
        s += src[i];
    out[j] = s;
    return RILL_SUCCESS;
}

/* Bytes this rank's GPUs received from other ranks' GPUs (GPU direct, no MPI). */
static uint64_t gpu_bytes_in(rill_context_t *ctx)
{
    uint64_t n = 0;
    for (int g = 0; g < rill_context_ngpus(ctx); g++) {
        rill_gpu_counters_t c;
        if (rill_context_gpu_counters(ctx, g, &c) == RILL_SUCCESS)
            n += c.remote_in_bytes;
    }
    return n;
}

static int test_bcast(rill_context_t *ctx)
{
    int nranks = rill_context_nranks(ctx), me = rill_context_rank(ctx);
    const int readers = 16;
    rill_collection_t *srcs, *outs;
    CHECK(rill_collection_create(ctx, 1024 * sizeof(double), rank_is_key, &nranks, &srcs) == 0);
    CHECK(rill_collection_create(ctx, readers * sizeof(double), rank_is_key, &nranks, &outs) == 0);
    rill_dtd_class_t *fill, *rd;
    CHECK(rill_dtd_class_create(ctx, "fill", fill_body, &fill) == 0);
    CHECK(rill_dtd_class_create(ctx, "read", read_body, &rd) == 0);
    rill_comm_stats_t before, after;
    rill_comm_stats(ctx->comm, &before);
    uint64_t gpu_before = gpu_bytes_in(ctx);
    /* no rank may send before every rank took its "before" counters */
    CHECK(rill_comm_barrier(ctx->comm) == RILL_SUCCESS);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == 0);
    rill_data_t *src = rill_collection_data_of(srcs, 0);
    CHECK(rill_dtd_insert_task(tp, fill, 0, RILL_DTD_OUTPUT | RILL_DTD_AFFINITY, src,
                               RILL_DTD_ARG_END) == 0);
    for (int r = 0; r < nranks; r++)
        for (int j = 0; j < readers; j++)
            CHECK(rill_dtd_insert_task(tp, rd, 0, RILL_DTD_VALUE, sizeof(j), &j, RILL_DTD_INPUT,
                                       src, RILL_DTD_INOUT | RILL_DTD_AFFINITY,
                                       rill_collection_data_of(outs, (uint64_t)r),
                                       RILL_DTD_ARG_END) == 0);
    CHECK(rill_taskpool_wait(tp) == RILL_SUCCESS);
    rill_taskpool_destroy(&tp);
    /* each rank but the source received the tile once, however many of its tasks read it
     * (8 KiB: one activation carrying it inline, or one activation and one GET; or, between
     * the GPUs of a node, one put into this rank's GPU and a few control messages) */
    rill_comm_stats(ctx->comm, &after);
    uint64_t bytes = (after.am_bytes_recv - before.am_bytes_recv) +
                     (after.data_bytes_recv - before.data_bytes_recv) +
                     (gpu_bytes_in(ctx) - gpu_before);
    if (me != 0)
        CHECK_MSG(bytes >= 8192 && bytes < 2 * 8192,
                  "rank %d received %llu bytes for one 8 KiB tile read by %d tasks", me,
                  (unsigned long long)bytes, readers);
    else
        CHECK_MSG(bytes < 1024, "rank 0 received %llu bytes", (unsigned long long)bytes);
    double *out = rill_data_ptr(rill_collection_data_of(outs, (uint64_t)me));
    for (int j = 0; j < readers; j++)
        CHECK_MSG(out[j] == 3.0 * 1023 * 1024 / 2, "rank %d reader %d saw %g", me, j, out[j]);
    rill_dtd_class_destroy(&fill);
    rill_dtd_class_destroy(&rd);
    rill_collection_destroy(&srcs);
    rill_collection_destroy(&outs);
    return 0;
}

/* ------------------------------------------------------------ tiled Cholesky */

/* naive column-major kernels: the test needs no BLAS */
static rill_status_t potrf_body(rill_task_t *task)
{
    int nb;
    double *a;
    rill_dtd_unpack_args(task, &nb, &a);
    for (int j = 0; j < nb; j++) {
        double d = a[j + j * nb];
        for (int k = 0; k < j; k++)
            d -= a[j + k * nb] * a[j + k * nb];
        if (d <= 0)
            return RILL_ERR_NUMERIC;
        a[j + j * nb] = sqrt(d);
        for (int i = j + 1; i < nb; i++) {
            double s = a[i + j * nb];
            for (int k = 0; k < j; k++)
                s -= a[i + k * nb] * a[j + k * nb];
            a[i + j * nb] = s / a[j + j * nb];
        }
        for (int i = 0; i < j; i++)
            a[i + j * nb] = 0;
    }
    return RILL_SUCCESS;
}

static rill_status_t trsm_body(rill_task_t *task) /* B = B L^-T */
{
    int nb;
    double *l, *b;
    rill_dtd_unpack_args(task, &nb, &l, &b);
    for (int i = 0; i < nb; i++)
        for (int j = 0; j < nb; j++) {
            double s = b[i + j * nb];
            for (int k = 0; k < j; k++)
                s -= b[i + k * nb] * l[j + k * nb];
            b[i + j * nb] = s / l[j + j * nb];
        }
    return RILL_SUCCESS;
}

static rill_status_t gemm_body(rill_task_t *task) /* C -= A B^T (syrk when A == B) */
{
    int nb;
    double *a, *b, *c;
    rill_dtd_unpack_args(task, &nb, &a, &b, &c);
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < nb; i++) {
            double s = 0;
            for (int k = 0; k < nb; k++)
                s += a[i + k * nb] * b[j + k * nb];
            c[i + j * nb] -= s;
        }
    return RILL_SUCCESS;
}

static rill_status_t syrk_body(rill_task_t *task)
{
    int nb;
    double *a, *c;
    rill_dtd_unpack_args(task, &nb, &a, &c);
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < nb; i++) {
            double s = 0;
            for (int k = 0; k < nb; k++)
                s += a[i + k * nb] * a[j + k * nb];
            c[i + j * nb] -= s;
        }
    return RILL_SUCCESS;
}

static double spd(int i, int j, int n)
{
    return i == j ? n + 1.0 : 1.0 / (1.0 + abs(i - j)) + 0.01 * ((i * 7 + j * 7) % 5);
}

static int test_potrf(rill_context_t *ctx, int P, int Q, int n, int nb)
{
    int nt = n / nb;
    rill_matrix_t *A;
    /* where the distributions put the tiles: every rank computes the same map; the skewed
     * one puts the diagonal tiles on every grid row once there are 2 P of them (Q = 1), on
     * every rank once there are P Q of them (Q > 1: each tile row on one grid row, shifted
     * every lcm(P, Q) rows) */
    int lcm = P;
    while (lcm % Q)
        lcm += P;
    for (int dist = RILL_MATRIX_CYCLIC; dist <= RILL_MATRIX_SKEWED; dist++) {
        CHECK(rill_matrix_create_dist(ctx, n, n, nb, nb, P, Q, (rill_matrix_dist_t)dist, &A) == 0);
        unsigned on_diag = 0; /* grid rows (Q = 1) or ranks (Q > 1) */
        for (int i = 0; i < nt; i++)
            for (int j = 0; j < nt; j++) {
                int shift = dist == RILL_MATRIX_CYCLIC     ? 0
                            : dist == RILL_MATRIX_DIAGONAL ? j
                            : Q == 1                       ? j + j / P
                                                           : i / lcm;
                int p = (i + shift) % P;
                CHECK(rill_matrix_tile_rank(A, i, j) == p * Q + j % Q);
                if (i == j)
                    on_diag |= 1u << ((p * Q + j % Q) % 32);
            }
        if (dist == RILL_MATRIX_SKEWED && nt >= (Q == 1 ? 2 * P : P * Q) && P * Q <= 32)
            CHECK(on_diag == (P * Q == 32 ? ~0u : (1u << (P * Q)) - 1));
        CHECK(rill_matrix_destroy(&A) == RILL_SUCCESS);
    }
    CHECK(rill_matrix_create(ctx, n, n, nb, nb, P, Q, &A) == 0);
    for (int ti = 0; ti < nt; ti++)
        for (int tj = 0; tj < nt; tj++) {
            double *t = rill_matrix_tile_ptr(A, ti, tj);
            if (!t)
                continue;
            for (int j = 0; j < nb; j++)
                for (int i = 0; i < nb; i++)
                    t[i + j * nb] = spd(ti * nb + i, tj * nb + j, n);
        }
    rill_dtd_class_t *potrf, *trsm, *syrk, *gemm;
    CHECK(rill_dtd_class_create(ctx, "potrf", potrf_body, &potrf) == 0);
    CHECK(rill_dtd_class_create(ctx, "trsm", trsm_body, &trsm) == 0);
    CHECK(rill_dtd_class_create(ctx, "syrk", syrk_body, &syrk) == 0);
    CHECK(rill_dtd_class_create(ctx, "gemm", gemm_body, &gemm) == 0);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == 0);
#define TILE(i, j) rill_matrix_tile(A, (i), (j))
    for (int k = 0; k < nt; k++) {
        CHECK(rill_dtd_insert_task(tp, potrf, 3 * (nt - k), RILL_DTD_VALUE, sizeof(nb), &nb,
                                   RILL_DTD_INOUT | RILL_DTD_AFFINITY, TILE(k, k),
                                   RILL_DTD_ARG_END) == 0);
        for (int m = k + 1; m < nt; m++)
            CHECK(rill_dtd_insert_task(tp, trsm, 2 * (nt - k), RILL_DTD_VALUE, sizeof(nb), &nb,
                                       RILL_DTD_INPUT, TILE(k, k),
                                       RILL_DTD_INOUT | RILL_DTD_AFFINITY, TILE(m, k),
                                       RILL_DTD_ARG_END) == 0);
        for (int m = k + 1; m < nt; m++) {
            CHECK(rill_dtd_insert_task(tp, syrk, 2 * (nt - k) - 1, RILL_DTD_VALUE, sizeof(nb), &nb,
                                       RILL_DTD_INPUT, TILE(m, k),
                                       RILL_DTD_INOUT | RILL_DTD_AFFINITY, TILE(m, m),
                                       RILL_DTD_ARG_END) == 0);
            for (int j = k + 1; j < m; j++)
                CHECK(rill_dtd_insert_task(tp, gemm, nt - k, RILL_DTD_VALUE, sizeof(nb), &nb,
                                           RILL_DTD_INPUT, TILE(m, k), RILL_DTD_INPUT, TILE(j, k),
                                           RILL_DTD_INOUT | RILL_DTD_AFFINITY, TILE(m, j),
                                           RILL_DTD_ARG_END) == 0);
        }
    }
#undef TILE
    CHECK(rill_taskpool_wait(tp) == RILL_SUCCESS);
    rill_taskpool_destroy(&tp);

    /* the sequential reference, computed on every rank (the matrix is small) */
    double *ref = malloc((size_t)n * (size_t)n * sizeof(double));
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            ref[i + (size_t)j * n] = spd(i, j, n);
    for (int j = 0; j < n; j++) {
        double d = ref[j + (size_t)j * n];
        for (int k = 0; k < j; k++)
            d -= ref[j + (size_t)k * n] * ref[j + (size_t)k * n];
        ref[j + (size_t)j * n] = sqrt(d);
        for (int i = j + 1; i < n; i++) {
            double s = ref[i + (size_t)j * n];
            for (int k = 0; k < j; k++)
                s -= ref[i + (size_t)k * n] * ref[j + (size_t)k * n];
            ref[i + (size_t)j * n] = s / ref[j + (size_t)j * n];
        }
    }
    double maxerr = 0;
    for (int ti = 0; ti < nt; ti++)
        for (int tj = 0; tj <= ti; tj++) {
            double *t = rill_matrix_tile_ptr(A, ti, tj);
            if (!t)
                continue;
            for (int j = 0; j < nb; j++)
                for (int i = 0; i < nb; i++) {
                    int gi = ti * nb + i, gj = tj * nb + j;
                    if (gi < gj)
                        continue;
                    double e = fabs(t[i + j * nb] - ref[gi + (size_t)gj * n]);
                    maxerr = e > maxerr ? e : maxerr;
                }
        }
    CHECK_MSG(maxerr < 1e-10, "rank %d: max error %g against the sequential Cholesky",
              rill_context_rank(ctx), maxerr);
    free(ref);
    rill_dtd_class_destroy(&potrf);
    rill_dtd_class_destroy(&trsm);
    rill_dtd_class_destroy(&syrk);
    rill_dtd_class_destroy(&gemm);
    rill_matrix_destroy(&A);
    return 0;
}

/* ------------------------------------------------------------ private data */

static rill_status_t count_body(rill_task_t *task)
{
    double *anchor, *counter;
    rill_dtd_unpack_args(task, &anchor, &counter);
    *counter += 1;
    return RILL_SUCCESS;
}

static rill_status_t inc_body(rill_task_t *task)
{
    double *counter;
    rill_dtd_unpack_args(task, &counter);
    *counter += 1;
    return RILL_SUCCESS;
}

static int test_private(rill_context_t *ctx)
{
    int nranks = rill_context_nranks(ctx), me = rill_context_rank(ctx);
    rill_collection_t *anchors;
    CHECK(rill_collection_create(ctx, sizeof(double), rank_is_key, &nranks, &anchors) == 0);
    /* ranks make different numbers of private data: that is not a divergence */
    double extra = 0, counter = 0;
    rill_data_t *dextra = NULL, *dcounter;
    if (me == 1)
        CHECK(rill_data_create(ctx, &extra, sizeof(extra), &dextra) == 0);
    CHECK(rill_data_create(ctx, &counter, sizeof(counter), &dcounter) == 0);
    rill_dtd_class_t *cls, *inc;
    CHECK(rill_dtd_class_create(ctx, "count", count_body, &cls) == 0);
    CHECK(rill_dtd_class_create(ctx, "inc", inc_body, &inc) == 0);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == 0);
    const int ntasks = 50;
    for (int k = 0; k < ntasks; k++)
        CHECK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INPUT | RILL_DTD_AFFINITY,
                                   rill_collection_data_of(anchors, (uint64_t)(k % nranks)),
                                   RILL_DTD_INOUT, dcounter, RILL_DTD_ARG_END) == 0);
    /* a task placed with a private datum runs on every rank (its home is each rank): not a
     * divergence either */
    CHECK(rill_dtd_insert_task(tp, inc, 0, RILL_DTD_INOUT | RILL_DTD_AFFINITY, dcounter,
                               RILL_DTD_ARG_END) == 0);
    CHECK(rill_taskpool_wait(tp) == RILL_SUCCESS);
    rill_taskpool_destroy(&tp);
    int expect = 1;
    for (int k = 0; k < ntasks; k++)
        expect += k % nranks == me;
    CHECK_MSG(counter == expect, "rank %d counted %g tasks in its private datum, expected %d", me,
              counter, expect);
    rill_data_destroy(&dcounter);
    if (dextra)
        rill_data_destroy(&dextra);
    rill_dtd_class_destroy(&cls);
    rill_dtd_class_destroy(&inc);
    rill_collection_destroy(&anchors);
    return 0;
}

/* ------------------------------------------------------------ discard */

static rill_status_t set_body(rill_task_t *task)
{
    double v, *t;
    rill_dtd_unpack_args(task, &v, NULL, &t);
    t[0] = v;
    return RILL_SUCCESS;
}

/* Tiles homed on rank 0, written on rank 1: the one discarded after its last write keeps its
 * old value at home; one discarded and then written again, one discarded and then flushed,
 * and one never discarded, come
 * home with their newest value. */
static int test_discard(rill_context_t *ctx)
{
    int nranks = rill_context_nranks(ctx), me = rill_context_rank(ctx);
    rill_collection_t *anchors, *tiles;
    CHECK(rill_collection_create(ctx, sizeof(double), rank_is_key, &nranks, &anchors) == 0);
    CHECK(rill_collection_create(ctx, sizeof(double), rank_is_key, &nranks, &tiles) == 0);
    rill_data_t *t[4], *on1 = rill_collection_data_of(anchors, 1);
    for (int i = 0; i < 4; i++) {
        t[i] = rill_collection_data_of(tiles, (uint64_t)(i * nranks)); /* home: rank 0 */
        CHECK(t[i]);
        if (me == 0)
            ((double *)rill_data_ptr(t[i]))[0] = -1.0;
    }
    rill_dtd_class_t *cls;
    CHECK(rill_dtd_class_create(ctx, "set", set_body, &cls) == 0);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == 0);
    double v42 = 42.0, v43 = 43.0;
    for (int i = 0; i < 4; i++)
        CHECK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_VALUE, sizeof(v42), &v42,
                                   RILL_DTD_INPUT | RILL_DTD_AFFINITY, on1, RILL_DTD_INOUT, t[i],
                                   RILL_DTD_ARG_END) == 0);
    CHECK(rill_dtd_data_discard(tp, t[0]) == RILL_SUCCESS);
    CHECK(rill_dtd_data_discard(tp, t[1]) == RILL_SUCCESS);
    CHECK(rill_dtd_data_discard(tp, t[3]) == RILL_SUCCESS);
    CHECK(rill_dtd_data_flush(tp, t[3]) == RILL_SUCCESS);
    CHECK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_VALUE, sizeof(v43), &v43,
                               RILL_DTD_INPUT | RILL_DTD_AFFINITY, on1, RILL_DTD_INOUT, t[1],
                               RILL_DTD_ARG_END) == 0);
    CHECK(rill_taskpool_wait(tp) == RILL_SUCCESS);
    CHECK(rill_dtd_data_discard(tp, t[2]) == RILL_ERR_BAD_STATE); /* waited for already */
    CHECK(rill_dtd_data_discard(NULL, t[2]) == RILL_ERR_INVALID_ARG);
    rill_taskpool_destroy(&tp);
    if (me == 0) {
        double got[4];
        for (int i = 0; i < 4; i++)
            got[i] = ((double *)rill_data_ptr(t[i]))[0];
        CHECK_MSG(got[0] == -1.0 && got[1] == 43.0 && got[2] == 42.0 && got[3] == 42.0,
                  "home values after the wait: %g %g %g %g, expected -1 (discarded: not brought "
                  "home), 43 (written after its discard), 42, 42 (flushed after its discard)",
                  got[0], got[1], got[2], got[3]);
    }
    rill_dtd_class_destroy(&cls);
    rill_collection_destroy(&tiles);
    rill_collection_destroy(&anchors);
    return 0;
}

/* ------------------------------------------------------------ stall */

static rill_status_t slow_fill_body(rill_task_t *task)
{
    double *t;
    rill_dtd_unpack_args(task, &t);
    usleep(2500 * 1000);
    t[0] = 42;
    return RILL_SUCCESS;
}

static rill_status_t copy_body(rill_task_t *task)
{
    double *src, *dst;
    rill_dtd_unpack_args(task, &src, &dst);
    dst[0] = src[0];
    return RILL_SUCCESS;
}

static int test_stall(rill_context_t *ctx)
{
    int nranks = rill_context_nranks(ctx), me = rill_context_rank(ctx);
    rill_collection_t *dc;
    CHECK(rill_collection_create(ctx, sizeof(double), rank_is_key, &nranks, &dc) == 0);
    rill_dtd_class_t *fill, *copy;
    CHECK(rill_dtd_class_create(ctx, "slow_fill", slow_fill_body, &fill) == 0);
    CHECK(rill_dtd_class_create(ctx, "copy", copy_body, &copy) == 0);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == 0);
    rill_data_t *on1 = rill_collection_data_of(dc, 1), *on0 = rill_collection_data_of(dc, 0);
    CHECK(rill_dtd_insert_task(tp, fill, 0, RILL_DTD_OUTPUT | RILL_DTD_AFFINITY, on1,
                               RILL_DTD_ARG_END) == 0);
    CHECK(rill_dtd_insert_task(tp, copy, 0, RILL_DTD_INPUT, on1,
                               RILL_DTD_OUTPUT | RILL_DTD_AFFINITY, on0, RILL_DTD_ARG_END) == 0);
    CHECK(rill_taskpool_wait(tp) == RILL_SUCCESS); /* rank 0's watchdog speaks meanwhile */
    rill_taskpool_destroy(&tp);
    if (me == 0)
        CHECK(((double *)rill_data_ptr(on0))[0] == 42);
    rill_dtd_class_destroy(&fill);
    rill_dtd_class_destroy(&copy);
    rill_collection_destroy(&dc);
    return 0;
}

/* ------------------------------------------------------------ window */

static rill_status_t slow_bump_body(rill_task_t *task)
{
    double *t;
    rill_dtd_unpack_args(task, &t);
    usleep(1000); /* rank 0 is slower than rank 1: it reaches its wait with work left */
    t[0] += 1;
    return RILL_SUCCESS;
}

static rill_status_t accumulate_body(rill_task_t *task)
{
    double *src, *dst;
    rill_dtd_unpack_args(task, &src, &dst);
    dst[0] += src[0];
    return RILL_SUCCESS;
}

static int test_window(rill_context_t *ctx, int n)
{
    int nranks = rill_context_nranks(ctx), me = rill_context_rank(ctx);
    rill_collection_t *dc;
    CHECK(rill_collection_create(ctx, sizeof(double), rank_is_key, &nranks, &dc) == 0);
    rill_dtd_class_t *bump, *acc;
    CHECK(rill_dtd_class_create(ctx, "slow_bump", slow_bump_body, &bump) == 0);
    CHECK(rill_dtd_class_create(ctx, "accumulate", accumulate_body, &acc) == 0);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == 0);
    rill_data_t *a = rill_collection_data_of(dc, 0), *sum = rill_collection_data_of(dc, 1);
    for (int k = 0; k < n; k++) {
        CHECK(rill_dtd_insert_task(tp, bump, 0, RILL_DTD_INOUT | RILL_DTD_AFFINITY, a,
                                   RILL_DTD_ARG_END) == 0);
        CHECK(rill_dtd_insert_task(tp, acc, 0, RILL_DTD_INPUT, a,
                                   RILL_DTD_INOUT | RILL_DTD_AFFINITY, sum, RILL_DTD_ARG_END) == 0);
    }
    CHECK(rill_taskpool_wait(tp) == RILL_SUCCESS);
    rill_taskpool_destroy(&tp);
    if (me == 1) /* 1 + 2 + ... + n */
        CHECK_MSG(((double *)rill_data_ptr(sum))[0] == 0.5 * n * (n + 1), "sum %g, expected %g",
                  ((double *)rill_data_ptr(sum))[0], 0.5 * n * (n + 1));
    rill_dtd_class_destroy(&bump);
    rill_dtd_class_destroy(&acc);
    rill_collection_destroy(&dc);
    return 0;
}

/* ------------------------------------------------------------ collstall */

static rill_status_t sleepy_body(rill_task_t *task)
{
    (void)task;
    usleep(2500 * 1000);
    return RILL_SUCCESS;
}

static int test_collstall(rill_context_t *ctx)
{
    int nranks = rill_context_nranks(ctx), me = rill_context_rank(ctx);
    rill_collection_t *dc;
    CHECK(rill_collection_create(ctx, sizeof(double), rank_is_key, &nranks, &dc) == 0);
    rill_dtd_class_t *sleepy;
    CHECK(rill_dtd_class_create(ctx, "sleepy", sleepy_body, &sleepy) == 0);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == 0);
    CHECK(rill_dtd_insert_task(tp, sleepy, 0, RILL_DTD_INOUT | RILL_DTD_AFFINITY,
                               rill_collection_data_of(dc, 1), RILL_DTD_ARG_END) == 0);
    test_capture_t cap;
    test_capture_begin(&cap);
    rill_status_t s = rill_taskpool_wait(tp);
    char *out = test_capture_end(&cap);
    fputs(out, stderr);
    CHECK(s == RILL_SUCCESS);
    if (me == 0)
        CHECK_MSG(strstr(out, "in a collective with every rank"),
                  "rank 0's watchdog did not report the collective it waits in");
    else if (me == 1)
        CHECK_MSG(strstr(out, "worker 0 (the main thread) runs a 'sleepy' task"),
                  "rank 1's watchdog did not name the task its main thread runs");
    free(out);
    rill_taskpool_destroy(&tp);
    rill_dtd_class_destroy(&sleepy);
    rill_collection_destroy(&dc);
    return 0;
}

/* ------------------------------------------------------------ divergence */

static rill_status_t nop_body(rill_task_t *task)
{
    (void)task;
    return RILL_SUCCESS;
}

static int test_diverge(rill_context_t *ctx)
{
    int nranks = rill_context_nranks(ctx), me = rill_context_rank(ctx);
    rill_collection_t *dc;
    CHECK(rill_collection_create(ctx, 64, rank_is_key, &nranks, &dc) == 0);
    rill_dtd_class_t *cls;
    CHECK(rill_dtd_class_create(ctx, "nop", nop_body, &cls) == 0);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == 0);
    for (int k = 0; k < 10 + (me == 1); k++) /* rank 1 inserts one task more */
        CHECK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INOUT | RILL_DTD_AFFINITY,
                                   rill_collection_data_of(dc, (uint64_t)me),
                                   RILL_DTD_ARG_END) == 0);
    /* the ranks' sequences differ: every rank reports it and the job ends (checked by
     * tests/expect_fail.sh); returning from the wait is the failure */
    rill_status_t s = rill_taskpool_wait(tp);
    fprintf(stderr, "rank %d: wait returned %d instead of stopping the job\n", me, s);
    return 1;
    rill_taskpool_destroy(&tp);
    rill_dtd_class_destroy(&cls);
    rill_collection_destroy(&dc);
    return 0;
}

/* Ranks that diverge before their windows fill: each reads the other's tile, so one rank
 * soon blocks in its window for a version the other never sends. how: "first" (rank 0
 * inserts one local task more, first), "middle" (rank 1 inserts another class at n/2),
 * "short" (rank 1 stops at n/2 and waits). The job must end with every rank saying so. */
static int test_diverge_window(rill_context_t *ctx, const char *how, int n)
{
    int nranks = rill_context_nranks(ctx), me = rill_context_rank(ctx);
    rill_collection_t *dc;
    CHECK(rill_collection_create(ctx, sizeof(double), rank_is_key, &nranks, &dc) == 0);
    rill_dtd_class_t *cls, *other;
    CHECK(rill_dtd_class_create(ctx, "nop", nop_body, &cls) == 0);
    CHECK(rill_dtd_class_create(ctx, "other", nop_body, &other) == 0);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == 0);
    rill_data_t *own = rill_collection_data_of(dc, (uint64_t)me);
    if (!strcmp(how, "first") && me == 0)
        CHECK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INOUT | RILL_DTD_AFFINITY, own,
                                   RILL_DTD_ARG_END) == 0);
    for (int k = 0; k < n; k++) {
        if (!strcmp(how, "short") && me == 1 && k == n / 2)
            break;
        rill_dtd_class_t *c = !strcmp(how, "middle") && me == 1 && k == n / 2 ? other : cls;
        for (int r = 0; r < nranks; r++) /* task on rank r reads rank r+1's tile */
            CHECK(rill_dtd_insert_task(tp, c, 0, RILL_DTD_INOUT | RILL_DTD_AFFINITY,
                                       rill_collection_data_of(dc, (uint64_t)r), RILL_DTD_INPUT,
                                       rill_collection_data_of(dc, (uint64_t)((r + 1) % nranks)),
                                       RILL_DTD_ARG_END) == 0);
    }
    rill_status_t s = rill_taskpool_wait(tp);
    fprintf(stderr, "rank %d: wait returned %d instead of stopping the job\n", me, s);
    return 1;
}

/* The same tasks and keys on every rank, but the ranks disagree on where the data live:
 * rank r maps key k to (k + r) % nranks. Each would run what it thinks it owns and wait for
 * versions nobody sends; the job must end with every rank saying the sequences differ. */
static int shifted_rank(uint64_t key, void *arg)
{
    const int *v = arg; /* nranks, this rank */
    return (int)((key + (uint64_t)v[1]) % (uint64_t)v[0]);
}

static int test_diverge_home(rill_context_t *ctx, int n)
{
    int v[2] = { rill_context_nranks(ctx), rill_context_rank(ctx) };
    rill_collection_t *dc;
    CHECK(rill_collection_create(ctx, sizeof(double), shifted_rank, v, &dc) == 0);
    rill_dtd_class_t *cls;
    CHECK(rill_dtd_class_create(ctx, "nop", nop_body, &cls) == 0);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == 0);
    for (int i = 0; i < n; i++) { /* over 4 keys: each task reads the next key's datum */
        uint64_t k = (uint64_t)i % 4;
        CHECK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INPUT,
                                   rill_collection_data_of(dc, (k + 1) % 4),
                                   RILL_DTD_INOUT | RILL_DTD_AFFINITY,
                                   rill_collection_data_of(dc, k), RILL_DTD_ARG_END) == 0);
    }
    rill_status_t s = rill_taskpool_wait(tp);
    fprintf(stderr, "rank %d: wait returned %d instead of stopping the job\n", v[1], s);
    return 1;
}

/* A task fails on rank 1 and tasks on every rank read what it wrote: every rank's wait must
 * return the failure, not only rank 1's. */
static rill_status_t fail_body(rill_task_t *task)
{
    (void)task;
    return RILL_ERR_NUMERIC;
}

static int test_fail_remote(rill_context_t *ctx)
{
    int nranks = rill_context_nranks(ctx), me = rill_context_rank(ctx);
    rill_collection_t *dc;
    CHECK(rill_collection_create(ctx, sizeof(double), rank_is_key, &nranks, &dc) == 0);
    rill_dtd_class_t *bad, *cls;
    CHECK(rill_dtd_class_create(ctx, "bad", fail_body, &bad) == 0);
    CHECK(rill_dtd_class_create(ctx, "nop", nop_body, &cls) == 0);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == 0);
    CHECK(rill_dtd_insert_task(tp, bad, 0, RILL_DTD_INOUT | RILL_DTD_AFFINITY,
                               rill_collection_data_of(dc, 1), RILL_DTD_ARG_END) == 0);
    for (int r = 0; r < nranks; r++)
        CHECK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INPUT, rill_collection_data_of(dc, 1),
                                   RILL_DTD_INOUT | RILL_DTD_AFFINITY,
                                   rill_collection_data_of(dc, (uint64_t)r),
                                   RILL_DTD_ARG_END) == 0);
    rill_status_t s = rill_taskpool_wait(tp);
    CHECK_MSG(s != RILL_SUCCESS, "rank %d: the wait succeeded though rank 1's task failed", me);
    fprintf(stderr, "rank %d: the wait returned %s\n", me, rill_status_string(s));
    rill_taskpool_destroy(&tp);
    rill_dtd_class_destroy(&bad);
    rill_dtd_class_destroy(&cls);
    rill_collection_destroy(&dc);
    return 0;
}

/* Rank 1 leaves the insertion sequence while rank 0 waits at the end of a taskpool: how
 * "fini" (rank 1 never creates the second taskpool and calls rill_fini), "coll" (rank 1
 * calls rill_context_allgather before waiting for its taskpool). Rank 1 must say so and end
 * the job, which would wait on both sides for ever. */
static int test_leave(rill_context_t *ctx, const char *how)
{
    int nranks = rill_context_nranks(ctx), me = rill_context_rank(ctx);
    rill_collection_t *dc;
    CHECK(rill_collection_create(ctx, sizeof(double), rank_is_key, &nranks, &dc) == 0);
    rill_dtd_class_t *cls;
    CHECK(rill_dtd_class_create(ctx, "nop", nop_body, &cls) == 0);
    const bool fini = !strcmp(how, "fini");
    for (int round = 0; round < 2; round++) {
        if (fini && round == 1 && me == 1)
            break;
        rill_taskpool_t *tp;
        CHECK(rill_dtd_taskpool_create(ctx, &tp) == 0);
        for (int k = 0; k < 8; k++)
            CHECK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INOUT | RILL_DTD_AFFINITY,
                                       rill_collection_data_of(dc, (uint64_t)(k % nranks)),
                                       RILL_DTD_ARG_END) == 0);
        if (!fini && me == 1) {
            int in = me, out[8];
            rill_context_allgather(ctx, &in, sizeof(in), out);
        }
        CHECK(rill_taskpool_wait(tp) == 0);
        rill_taskpool_destroy(&tp);
    }
    rill_dtd_class_destroy(&cls);
    rill_collection_destroy(&dc);
    rill_fini(&ctx);
    fprintf(stderr, "rank %d: ended instead of stopping the job\n", me);
    return 1;
}

/* Collectives the ranks do not make alike: rank 0 alone calls rill_context_allgather
 * ("alone"), or every rank does with its own size ("sizes"). Each rank must say the ranks
 * did not make the same collectives, not only die of MPI's truncation error. */
static int test_collmismatch(rill_context_t *ctx, const char *how)
{
    int me = rill_context_rank(ctx), nranks = rill_context_nranks(ctx);
    double in[8] = { 0 }, *out = calloc((size_t)nranks * 8, sizeof(double));
    CHECK(out);
    rill_status_t s = RILL_SUCCESS;
    if (!strcmp(how, "sizes"))
        s = rill_context_allgather(ctx, in, sizeof(double) * (size_t)(1 + me), out);
    else if (me == 0)
        s = rill_context_allgather(ctx, in, sizeof(in), out);
    fprintf(stderr, "rank %d: allgather returned %d\n", me, s);
    free(out);
    rill_fini(&ctx);
    return 1; /* ending normally is the failure */
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    CHECK(rill_init(&argc, &argv, &ctx) == RILL_SUCCESS);
    /* the tests run every rank on one node */
    CHECK(rill_context_local_nranks(ctx) == rill_context_nranks(ctx));
    CHECK(rill_context_local_rank(ctx) >= 0 &&
          rill_context_local_rank(ctx) < rill_context_local_nranks(ctx));
    CHECK_MSG(argc >= 2,
              "usage: %s chain SIZE | bcast | potrf P Q N NB | private | discard | diverge | "
              "diverge_window first|middle|short N | diverge_home N | leave fini|coll | "
              "fail_remote | collstall | "
              "window N",
              argv[0]);
    int rc = 1;
    const char *what = argv[1];
    if (!strcmp(what, "chain") && argc >= 3)
        rc = test_chain(ctx, (size_t)atol(argv[2]));
    else if (!strcmp(what, "bcast"))
        rc = test_bcast(ctx);
    else if (!strcmp(what, "potrf") && argc >= 6)
        rc = test_potrf(ctx, atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    else if (!strcmp(what, "stall"))
        rc = test_stall(ctx);
    else if (!strcmp(what, "private"))
        rc = test_private(ctx);
    else if (!strcmp(what, "discard"))
        rc = test_discard(ctx);
    else if (!strcmp(what, "diverge"))
        rc = test_diverge(ctx);
    else if (!strcmp(what, "collmismatch") && argc >= 3)
        return test_collmismatch(ctx, argv[2]);
    else if (!strcmp(what, "diverge_window") && argc >= 4)
        rc = test_diverge_window(ctx, argv[2], atoi(argv[3]));
    else if (!strcmp(what, "fail_remote"))
        rc = test_fail_remote(ctx);
    else if (!strcmp(what, "leave") && argc >= 3)
        rc = test_leave(ctx, argv[2]);
    else if (!strcmp(what, "diverge_home") && argc >= 3)
        rc = test_diverge_home(ctx, atoi(argv[2]));
    else if (!strcmp(what, "collstall"))
        rc = test_collstall(ctx);
    else if (!strcmp(what, "window") && argc >= 3)
        rc = test_window(ctx, atoi(argv[2]));
    if (rc == 0 && rill_context_rank(ctx) == 0)
        printf("%s on %d ranks: correct\n", what, rill_context_nranks(ctx));
    CHECK(rill_fini(&ctx) == RILL_SUCCESS);
    return rc;
}
