/* LU with partial pivoting (dgetrf), right-looking, over tiles, as DTD tasks.
 *
 * Step k:
 * - PANEL(k): one task on the rank of tile (k, k) takes the whole tile column k from row
 *   tile k down (every tile INOUT), factors it with LAPACK's dgetrf on a contiguous copy
 *   and writes the step's pivot record (a datum of the pivot collection, key k): the
 *   pivots as LAPACK numbers them, the first zero pivot, and the step's row interchanges
 *   as a net movement of rows.
 * - the interchanges, in every other column j (left and right of k, LAPACK's convention):
 *   the rows of a lower tile only ever move up into tile k (a row that came up is never
 *   swapped again: later interchanges only touch rows below it), and the rows that go down
 *   are rows of tile k as they were before the step. So SWAP_TOP(k, j) keeps a copy of
 *   tile (k, j) (a datum of the copies collection) and moves the rows that stay within tile
 *   k; then SWAP_PAIR(k, i, j), for each lower tile i, brings up the rows of tile (i, j)
 *   that go to tile k and writes the rows of the copy that go down into tile (i, j).
 *   Which rows move is known only once the panel ran, so every lower tile gets its task.
 * - for j > k: TRSM (L of tile (k, k), unit lower) on tile (k, j), then GEMM updates of
 *   the tiles below it.
 *
 * The panel is one task of mt - k tiles while they are at most RILL_DTD_MAX_ARGS - 2 (what
 * a task takes besides its two other arguments); a taller one is gathered into a buffer by
 * a chain of copy tasks, factored there, and copied back (insert_panel). Across ranks, the tiles of
 * the panel and of tile row k travel to the ranks that update with them (DTD moves them); every
 * rank inserts the same tasks. */
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dla_internal.h"
#if RILL_DLA_HAVE_PTG
#include "dgetrf.h" /* dgetrf.rill, compiled by rillcc */
#endif

#define INSERT(...) rill_dtd_insert_task(__VA_ARGS__, RILL_DTD_ARG_END)

/* The parts of a pivot record p (dla_internal.h); writable, as the record's writer needs. */
static int *piv_part(const int *p, int mb, int part)
{
    return (int *)p + DLA_PIV_HEAD + part * mb;
}
#define piv_ipiv(p)         piv_part(p, 0, 0)
#define piv_up(p, mb)       piv_part(p, mb, 1)
#define piv_down_dst(p, mb) piv_part(p, mb, 2)
#define piv_down_src(p, mb) piv_part(p, mb, 3)

void dla_copy_block(int rows, int cols, const double *src, int lds, double *dst, int ldd)
{
    for (int c = 0; c < cols; c++)
        memcpy(dst + (size_t)c * ldd, src + (size_t)c * lds, (size_t)rows * sizeof(double));
}

/* Row r of a rows x cols tile (ld = rows) into row d of another. */
static void copy_row(int cols, const double *src, int lds, int r, double *dst, int ldd, int d)
{
    for (int c = 0; c < cols; c++)
        dst[d + (size_t)c * ldd] = src[r + (size_t)c * lds];
}

/* The pivot record of the step whose panel starts at row base (mp rows, kb columns) from
 * its pivots ipl as LAPACK numbers a panel's (1-based, within the panel): the pivots in
 * the whole matrix's numbering and the step's interchanges as a net movement of rows.
 * content: mp ints of workspace. Leaves DLA_PIV_INFO alone. */
static void piv_record_fill(int *piv, const lapack_int *ipl, int kb, int mp, int base, int mb,
                            int *content)
{
    /* content[x] = the panel row whose content (as before the step) ends at panel row x */
    for (int x = 0; x < mp; x++)
        content[x] = x;
    for (int r = 0; r < kb; r++) {
        int p = (int)ipl[r] - 1, c = content[r];
        content[r] = content[p];
        content[p] = c;
    }
    int *ip = piv_ipiv(piv), *up = piv_up(piv, mb);
    int *ddst = piv_down_dst(piv, mb), *dsrc = piv_down_src(piv, mb);
    int ndown = 0;
    for (int r = 0; r < kb; r++) {
        ip[r] = base + (int)ipl[r]; /* LAPACK's numbering: 1-based, of the whole matrix */
        up[r] = base + content[r];
    }
    for (int x = kb; x < mp; x++)
        if (content[x] != x) { /* (a row of tile k, content[x] < kb) */
            ddst[ndown] = base + x;
            dsrc[ndown++] = content[x];
        }
    piv[DLA_PIV_NDOWN] = ndown;
    piv[DLA_PIV_KB] = kb;
}

rill_status_t dla_lu_factor(double *X, int mp, int kb, int base, int mb, int *piv)
{
    lapack_int *ipl = malloc((size_t)kb * sizeof(lapack_int) + 1);
    int *content = malloc((size_t)mp * sizeof(int) + 1);
    if (!ipl || !content) {
        free(ipl);
        free(content);
        return RILL_ERR_NO_MEMORY;
    }
    lapack_int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, mp, kb, X, mp, ipl);
    piv_record_fill(piv, ipl, kb, mp, base, mb, content);
    piv[DLA_PIV_INFO] = info > 0 ? base + (int)info : 0;
    free(ipl);
    free(content);
    return info < 0 ? RILL_ERR_INVALID_ARG : RILL_SUCCESS;
}

/* PANEL(k): args VALUE, the pivot record (OUTPUT, written whole), the panel's tiles
 * (INOUT), factored on a contiguous copy; or (ntiles 0) the panel's buffer (INOUT, mp rows,
 * PACK's), factored in place. */
rill_status_t dla_body_getrf_panel(rill_task_t *task)
{
    const dla_lu_args_t *a = rill_dtd_arg(task, 0);
    int *piv = rill_dtd_arg(task, 1);
    const int mp = a->m - a->k * a->mb, kb = a->rows_k;
    if (a->ntiles == 0)
        return dla_lu_factor(rill_dtd_arg(task, 2), mp, kb, a->k * a->mb, a->mb, piv);
    double *buf = malloc((size_t)mp * kb * sizeof(double) + 1);
    if (!buf)
        return RILL_ERR_NO_MEMORY;
    for (int t = 0; t < a->ntiles; t++) {
        int rows = t + 1 < a->ntiles ? a->mb : mp - t * a->mb;
        dla_copy_block(rows, kb, rill_dtd_arg(task, 2 + t), rows, buf + (size_t)t * a->mb, mp);
    }
    rill_status_t s = dla_lu_factor(buf, mp, kb, a->k * a->mb, a->mb, piv);
    for (int t = 0; t < a->ntiles; t++) {
        int rows = t + 1 < a->ntiles ? a->mb : mp - t * a->mb;
        dla_copy_block(rows, kb, buf + (size_t)t * a->mb, mp, rill_dtd_arg(task, 2 + t), rows);
    }
    free(buf);
    return s;
}

void dla_lu_swap_top(const int *piv, int base, int mb, int rk, int cols, double *T, double *C)
{
    const int *up = piv_up(piv, mb);
    dla_copy_block(rk, cols, T, rk, C, rk);
    for (int p = 0; p < piv[DLA_PIV_KB]; p++)
        if (up[p] != base + p && up[p] >= base && up[p] < base + rk)
            copy_row(cols, C, rk, up[p] - base, T, rk, p);
}

void dla_lu_rows_up(const int *piv, int mb, int lo, int ri, int cols, const double *B, double *T,
                    int rk)
{
    const int *up = piv_up(piv, mb);
    for (int p = 0; p < piv[DLA_PIV_KB]; p++)
        if (up[p] >= lo && up[p] < lo + ri)
            copy_row(cols, B, ri, up[p] - lo, T, rk, p);
}

void dla_lu_rows_keep(const int *piv, int mb, int lo, int ri, int cols, const double *B, double *U)
{
    const int *up = piv_up(piv, mb);
    for (int p = 0; p < piv[DLA_PIV_KB]; p++)
        if (up[p] >= lo && up[p] < lo + ri)
            copy_row(cols, B, ri, up[p] - lo, U, ri, up[p] - lo);
}

void dla_lu_rows_down(const int *piv, int mb, int lo, int ri, int cols, const double *C, int rk,
                      double *B)
{
    const int *ddst = piv_down_dst(piv, mb), *dsrc = piv_down_src(piv, mb);
    for (int d = 0; d < piv[DLA_PIV_NDOWN]; d++)
        if (ddst[d] >= lo && ddst[d] < lo + ri)
            copy_row(cols, C, rk, dsrc[d], B, ri, ddst[d] - lo);
}

/* LU_COPY: args VALUE (dla_lu_copy_t), the source (INPUT), the destination (INOUT): a tall
 * panel's tile into its buffer (PACK) or back (UNPACK). */
rill_status_t dla_body_lu_copy(rill_task_t *task)
{
    const dla_lu_copy_t *c = rill_dtd_arg(task, 0);
    const double *src = rill_dtd_arg(task, 1);
    double *dst = rill_dtd_arg(task, 2);
    dla_copy_block(c->rows, c->cols, src + c->src_off, c->lds, dst + c->dst_off, c->ldd);
    return RILL_SUCCESS;
}

/* SWAP_TOP(k, j): args VALUE, the pivot record (INPUT), tile (k, j) (INOUT), its copy
 * (OUTPUT). The rows of tile k that end in tile k, from the copy. */
rill_status_t dla_body_laswp_top(rill_task_t *task)
{
    const dla_lu_args_t *a = rill_dtd_arg(task, 0);
    dla_lu_swap_top(rill_dtd_arg(task, 1), a->k * a->mb, a->mb, a->rows_k, a->cols_j,
                    rill_dtd_arg(task, 2), rill_dtd_arg(task, 3));
    return RILL_SUCCESS;
}

/* SWAP_PAIR(k, j) over the lower tiles of column j that one rank holds: args VALUE (which
 * tile rows, in a->tile_i), the pivot record (INPUT), the copy of tile (k, j) (INPUT), those
 * tiles (INOUT), tile (k, j) (INOUT; it travels once per rank, not once per tile). Per
 * tile: first its rows that go up (read before any row of it is written), then the rows of
 * the copy that come down into it. */
rill_status_t dla_body_laswp_pair(rill_task_t *task)
{
    const dla_lu_args_t *a = rill_dtd_arg(task, 0);
    const int *piv = rill_dtd_arg(task, 1);
    const double *C = rill_dtd_arg(task, 2);
    double *T = rill_dtd_arg(task, 3 + a->ntiles);
    for (int t = 0; t < a->ntiles; t++) {
        double *B = rill_dtd_arg(task, 3 + t);
        const int i = a->tile_i[t], lo = i * a->mb;
        const int ri = i == a->mt - 1 ? a->m - lo : a->mb;
        dla_lu_rows_up(piv, a->mb, lo, ri, a->cols_j, B, T, a->rows_k);
        dla_lu_rows_down(piv, a->mb, lo, ri, a->cols_j, C, a->rows_k, B);
    }
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ insertion */

/* The collections of one factorization or solve: the pivot records (key k, on the rank of
 * the factors' tile (k, k)) and the copies of tile row k of A (key (k % 2) nt + j: two tile
 * rows' worth, reused every other step; DTD orders the reuse). */
typedef struct lu_state {
    rill_matrix_t *A; /* the matrix whose rows move (the factored one, or dgetrs's B) */
    rill_collection_t *piv, *copies;
    /* dgetrf's panels of more tiles than a task takes: gathered into a buffer of M x NB
     * doubles (key k, on the rank of tile (k, k); scratch, discarded after the step) */
    rill_collection_t *cols;
} lu_state_t;

static int piv_rank_of(uint64_t key, void *arg)
{
    rill_matrix_t *A = arg;
    return rill_matrix_tile_rank(A, (int)key, (int)key);
}

static int copies_rank_of(uint64_t key, void *arg)
{
    rill_matrix_t *A = arg;
    return rill_matrix_tile_rank(A, 0, (int)(key % (uint64_t)rill_matrix_nt(A)));
}

/* The collections of st (st->A set: the matrix whose rows the interchanges move) for the
 * factors F: the pivot records on the ranks of F's diagonal tiles. Collective. */
static rill_status_t lu_state_open(rill_dla_t *dla, rill_matrix_t *F, lu_state_t *st)
{
    const int mb = rill_matrix_mb(F);
    rill_status_t s;
    if ((s = rill_collection_create(dla->ctx, (size_t)(DLA_PIV_HEAD + 4 * mb) * sizeof(int),
                                    piv_rank_of, F, &st->piv)) != RILL_SUCCESS ||
        (s = rill_collection_create(dla->ctx, (size_t)mb * mb * sizeof(double), copies_rank_of,
                                    st->A, &st->copies)) != RILL_SUCCESS)
        return s;
    return rill_collection_set_scratch(st->copies);
}

static void lu_state_close(lu_state_t *st)
{
    if (st->cols)
        rill_collection_destroy(&st->cols);
    if (st->copies)
        rill_collection_destroy(&st->copies);
    if (st->piv)
        rill_collection_destroy(&st->piv);
}

/* The interchanges of step k in column j. */
static rill_status_t insert_swaps(rill_dla_t *dla, rill_taskpool_t *tp, const lu_state_t *st, int k,
                                  int j, int32_t prio, rill_data_t *piv)
{
    rill_matrix_t *A = st->A;
    const int mt = rill_matrix_mt(A), nt = rill_matrix_nt(A), mb = rill_matrix_mb(A);
    rill_data_t *copy = rill_collection_data_of(st->copies, (uint64_t)(k % 2) * nt + j);
    if (!copy)
        return RILL_ERR_NO_MEMORY;
    dla_lu_args_t a = { .k = k,
                        .j = j,
                        .mb = mb,
                        .mt = mt,
                        .m = rill_matrix_m(A),
                        .rows_k = rill_matrix_tile_rows(A, k),
                        .cols_j = rill_matrix_tile_cols(A, j) };
    rill_status_t s = INSERT(tp, dla->cls[DLA_CLASS_LASWP_TOP], prio, RILL_DTD_VALUE, sizeof(a), &a,
                             RILL_DTD_INPUT, piv, RILL_DTD_INOUT | RILL_DTD_AFFINITY,
                             rill_matrix_tile(A, k, j), RILL_DTD_OUTPUT, copy);
    /* the lower tiles by the rank that holds them: one task per rank, or several when its
     * tiles exceed what a task takes besides its 4 other arguments (they touch disjoint
     * rows of tile (k, j), which orders them) */
    enum { PAIR_TILES = RILL_DTD_MAX_ARGS - 4 };
    const int nranks = rill_context_nranks(dla->ctx);
    for (int r = 0; r < nranks && s == RILL_SUCCESS; r++) {
        rill_data_t *tiles[RILL_DTD_MAX_ARGS];
        a.ntiles = 0;
        for (int i = k + 1; i < mt && s == RILL_SUCCESS; i++) {
            if (rill_matrix_tile_rank(A, i, j) == r) {
                a.tile_i[a.ntiles] = i;
                tiles[a.ntiles++] = rill_matrix_tile(A, i, j);
            }
            if (a.ntiles == PAIR_TILES || (i == mt - 1 && a.ntiles > 0)) {
                s = INSERT(tp, dla->cls[DLA_CLASS_LASWP_PAIR], prio, RILL_DTD_VALUE, sizeof(a), &a,
                           RILL_DTD_INPUT, piv, RILL_DTD_INPUT, copy,
                           RILL_DTD_INOUT | RILL_DTD_ARRAY, a.ntiles, tiles, RILL_DTD_INOUT,
                           rill_matrix_tile(A, k, j));
                a.ntiles = 0;
            }
        }
    }
    return s;
}

/* Step k's panel: one task over the tile column, or, when it has more tiles than a task
 * takes, PACK tasks gathering it into a buffer (each INOUT on it: they run one after
 * another on the rank of tile (k, k)), the panel on the buffer, and UNPACK tasks copying
 * each tile's rows back on its rank. */
static rill_status_t insert_panel(rill_dla_t *dla, rill_taskpool_t *tp, const lu_state_t *st, int k,
                                  int32_t prio, rill_data_t *piv)
{
    rill_matrix_t *A = st->A;
    const int mt = rill_matrix_mt(A), mb = rill_matrix_mb(A), m = rill_matrix_m(A);
    dla_lu_args_t a = { .k = k, .mb = mb, .m = m, .rows_k = rill_matrix_tile_rows(A, k) };
    if (mt - k <= RILL_DTD_MAX_ARGS - 2) {
        rill_data_t *tiles[RILL_DTD_MAX_ARGS];
        for (int i = k; i < mt; i++)
            tiles[i - k] = rill_matrix_tile(A, i, k);
        a.ntiles = mt - k;
        return INSERT(tp, dla->cls[DLA_CLASS_GETRF_PANEL], prio, RILL_DTD_VALUE, sizeof(a), &a,
                      RILL_DTD_OUTPUT | RILL_DTD_AFFINITY, piv, RILL_DTD_INOUT | RILL_DTD_ARRAY,
                      mt - k, tiles);
    }
    rill_data_t *buf = rill_collection_data_of(st->cols, (uint64_t)k);
    if (!buf)
        return RILL_ERR_NO_MEMORY;
    const int mp = m - k * mb;
    rill_status_t s = RILL_SUCCESS;
    for (int i = k; i < mt && s == RILL_SUCCESS; i++) {
        const int ri = rill_matrix_tile_rows(A, i);
        dla_lu_copy_t c = {
            .rows = ri, .cols = a.rows_k, .lds = ri, .ldd = mp, .dst_off = (size_t)(i - k) * mb
        };
        s = INSERT(tp, dla->cls[DLA_CLASS_LU_COPY], prio, RILL_DTD_VALUE, sizeof(c), &c,
                   RILL_DTD_INPUT, rill_matrix_tile(A, i, k), RILL_DTD_INOUT | RILL_DTD_AFFINITY,
                   buf);
    }
    if (s == RILL_SUCCESS)
        s = INSERT(tp, dla->cls[DLA_CLASS_GETRF_PANEL], prio, RILL_DTD_VALUE, sizeof(a), &a,
                   RILL_DTD_OUTPUT | RILL_DTD_AFFINITY, piv, RILL_DTD_INOUT, buf);
    for (int i = k; i < mt && s == RILL_SUCCESS; i++) {
        const int ri = rill_matrix_tile_rows(A, i);
        dla_lu_copy_t c = {
            .rows = ri, .cols = a.rows_k, .lds = mp, .ldd = ri, .src_off = (size_t)(i - k) * mb
        };
        s = INSERT(tp, dla->cls[DLA_CLASS_LU_COPY], prio, RILL_DTD_VALUE, sizeof(c), &c,
                   RILL_DTD_INPUT, buf, RILL_DTD_INOUT | RILL_DTD_AFFINITY,
                   rill_matrix_tile(A, i, k));
    }
    return s == RILL_SUCCESS ? rill_dtd_data_discard(tp, buf) : s;
}

/* Step k: the panel, the interchanges in every other column, the update of the columns
 * right of it. Priorities: by column, left first (the panel above its column's updates);
 * the left columns' interchanges last. */
static rill_status_t insert_step(rill_dla_t *dla, rill_taskpool_t *tp, const lu_state_t *st, int k)
{
    rill_matrix_t *A = st->A;
    const int mt = rill_matrix_mt(A), nt = rill_matrix_nt(A);
    /* the critical path runs along the diagonal: panel k, then column k + 1's update, then
     * panel k + 1: so by column, the panel above the updates of its column, and any column
     * above those right of it, whatever their step (panel k + 1 before step k's update of
     * columns k + 2 and on: the look-ahead) */
    const int64_t top = (int64_t)(nt - k) * 4 + 3;
    rill_data_t *piv = rill_collection_data_of(st->piv, (uint64_t)k);
    if (!piv)
        return RILL_ERR_NO_MEMORY;
    rill_status_t s = insert_panel(dla, tp, st, k, dla_prio(top), piv);
    for (int j = k + 1; j < nt && s == RILL_SUCCESS; j++) {
        int32_t prio = dla_prio((int64_t)(nt - j) * 4 + 2);
        s = insert_swaps(dla, tp, st, k, j, prio, piv);
        if (s == RILL_SUCCESS) /* U(k, j) = L(k, k)^-1 A(k, j) */
            s = dla_trsm_left_tile(dla, tp, prio, RILL_DLA_LOWER, RILL_DLA_NOTRANS, RILL_DLA_UNIT,
                                   1.0, A, k, A, k, j);
        for (int i = k + 1; i < mt && s == RILL_SUCCESS; i++)
            s = dla_gemm_tile(dla, tp, prio, RILL_DLA_NOTRANS, RILL_DLA_NOTRANS, -1.0, 1.0,
                              rill_matrix_tile_rows(A, k), A, i, k, A, k, j, A, i, j);
    }
    for (int j = 0; j < k && s == RILL_SUCCESS; j++)
        s = insert_swaps(dla, tp, st, k, j, 0, piv);
    return s;
}

/* The PTG version (dgetrf.rill): its panels' buffers are NEW data of a collection keyed by
 * the step, of M x NB doubles on the rank of tile (k, k), which only places and sizes them
 * (none of its own data is ever made). Where rillcc was not built, rill_dla_set_dsl refused
 * PTG. */
static rill_status_t lu_run_ptg(rill_dla_t *dla, const lu_state_t *st)
{
#if RILL_DLA_HAVE_PTG
    rill_matrix_t *A = st->A;
    rill_collection_t *col = NULL;
    rill_status_t s = rill_collection_create(
        dla->ctx, (size_t)rill_matrix_m(A) * rill_matrix_mb(A) * sizeof(double), piv_rank_of, A,
        &col);
    if (s != RILL_SUCCESS)
        return s;
    dgetrf_globals_t g = { .MT = rill_matrix_mt(A),
                           .NT = rill_matrix_nt(A),
                           .MB = rill_matrix_mb(A),
                           .M = rill_matrix_m(A),
                           .A = A,
                           .PIV = st->piv,
                           .COL = col };
    rill_taskpool_t *tp = NULL;
    s = dgetrf_taskpool_create(dla->ctx, &g, &tp);
    if (s == RILL_SUCCESS)
        s = dla_wait(&tp);
    rill_collection_destroy(&col);
    return s;
#else
    (void)dla;
    (void)st;
    return RILL_ERR_NOT_SUPPORTED;
#endif
}

/* Step k's pivot record when this rank holds it (the factors F's tile (k, k)): true with *p
 * its host copy; false when another rank holds it, or out of memory (*s says so). */
static bool lu_record_mine(const lu_state_t *st, rill_matrix_t *F, int k, int rank, int **p,
                           rill_status_t *s)
{
    if (piv_rank_of((uint64_t)k, F) != rank)
        return false;
    rill_data_t *d = rill_collection_data_of(st->piv, (uint64_t)k);
    *p = d ? rill_data_ptr(d) : NULL;
    if (!*p)
        *s = RILL_ERR_NO_MEMORY;
    return *p != NULL;
}

/* The pivots and the first zero pivot, from the records, on every rank. */
static rill_status_t lu_collect(rill_dla_t *dla, const lu_state_t *st, int *ipiv, int *info_p)
{
    rill_matrix_t *A = st->A;
    const int n = rill_matrix_n(A), mt = rill_matrix_mt(A), mb = rill_matrix_mb(A);
    const int rank = rill_context_rank(dla->ctx), nranks = rill_context_nranks(dla->ctx);
    size_t each = (size_t)n + 1;
    /* this rank's part (its panels' pivots, and its first zero pivot last), then every rank's */
    int *mine = calloc(each * ((size_t)nranks + 1), sizeof(int));
    if (!mine) /* (the other ranks then wait in the allgather: the watchdog says so) */
        return RILL_ERR_NO_MEMORY;
    int *all = mine + each;
    rill_status_t s = RILL_SUCCESS;
    for (int k = 0; k < mt && s == RILL_SUCCESS; k++) {
        int *p;
        if (!lu_record_mine(st, A, k, rank, &p, &s))
            continue;
        memcpy(mine + (size_t)k * mb, piv_ipiv(p), (size_t)p[DLA_PIV_KB] * sizeof(int));
        if (p[DLA_PIV_INFO] > 0 && (mine[n] == 0 || p[DLA_PIV_INFO] < mine[n]))
            mine[n] = p[DLA_PIV_INFO];
    }
    /* (every rank takes part, whatever its own status) */
    rill_status_t g = rill_context_allgather(dla->ctx, mine, each * sizeof(int), all);
    if (s == RILL_SUCCESS && g == RILL_SUCCESS) {
        int info = 0;
        for (int k = 0; k < mt; k++) {
            const int *from = all + (size_t)piv_rank_of((uint64_t)k, A) * each;
            int kb = rill_matrix_tile_rows(A, k);
            if (ipiv)
                memcpy(ipiv + (size_t)k * mb, from + (size_t)k * mb, (size_t)kb * sizeof(int));
        }
        for (int r = 0; r < nranks; r++) {
            int v = all[(size_t)r * each + n];
            if (v > 0 && (info == 0 || v < info))
                info = v;
        }
        *info_p = info;
    }
    free(mine);
    return s != RILL_SUCCESS ? s : g;
}

rill_status_t rill_dla_dgetrf(rill_dla_t *dla, rill_matrix_t *A, int *ipiv, int *info_p)
{
    if (!dla || !A || !info_p) {
        fprintf(stderr, "[rill dla] error: dgetrf: the layer, the matrix and info must be "
                        "given\n");
        return RILL_ERR_INVALID_ARG;
    }
    const int m = rill_matrix_m(A), n = rill_matrix_n(A), mt = rill_matrix_mt(A);
    *info_p = 0;
    if (m != n) {
        fprintf(stderr,
                "[rill dla] error: dgetrf: A is %d x %d; only square matrices are "
                "supported\n",
                m, n);
        return RILL_ERR_NOT_SUPPORTED;
    }
    rill_status_t s = dla_check_tiles("dgetrf", "A", A, rill_matrix_mb(A));
    if (s != RILL_SUCCESS)
        return s;
    if (n == 0)
        return RILL_SUCCESS;
    lu_state_t st = { .A = A };
    rill_taskpool_t *tp = NULL;
    if ((s = lu_state_open(dla, A, &st)) != RILL_SUCCESS)
        goto out;
    if (dla->dsl == RILL_DLA_DSL_DTD && mt > RILL_DTD_MAX_ARGS - 2 &&
        ((s = rill_collection_create(dla->ctx, (size_t)m * rill_matrix_mb(A) * sizeof(double),
                                     piv_rank_of, A, &st.cols)) != RILL_SUCCESS ||
         (s = rill_collection_set_scratch(st.cols)) != RILL_SUCCESS))
        goto out;
    if (dla->dsl == RILL_DLA_DSL_PTG) {
        s = lu_run_ptg(dla, &st);
    } else {
        if ((s = rill_dtd_taskpool_create(dla->ctx, &tp)) != RILL_SUCCESS)
            goto out;
        rill_status_t si = RILL_SUCCESS;
        for (int k = 0; k < mt && si == RILL_SUCCESS; k++)
            si = insert_step(dla, tp, &st, k);
        s = dla_wait(&tp);
        if (si != RILL_SUCCESS)
            s = si;
    }
    /* (every rank takes part in the collection's allgather) */
    rill_status_t c = lu_collect(dla, &st, ipiv, info_p);
    if (s == RILL_SUCCESS)
        s = c;
out:
    if (tp)
        dla_wait(&tp);
    lu_state_close(&st);
    return s;
}

/* ------------------------------------------------------------ dgetrs, dgesv */

/* dgetrs's pivot records from ipiv, on the ranks that hold them (before any task reads
 * them: DTD sends them from there). */
static rill_status_t lu_records_from_ipiv(rill_dla_t *dla, const lu_state_t *st, rill_matrix_t *F,
                                          const int *ipiv)
{
    const int n = rill_matrix_n(F), mt = rill_matrix_mt(F), mb = rill_matrix_mb(F);
    const int rank = rill_context_rank(dla->ctx);
    int *content = malloc((size_t)n * sizeof(int) + 1);
    lapack_int *ipl = malloc((size_t)mb * sizeof(lapack_int) + 1);
    rill_status_t s = content && ipl ? RILL_SUCCESS : RILL_ERR_NO_MEMORY;
    for (int k = 0; k < mt && s == RILL_SUCCESS; k++) {
        int *p;
        if (!lu_record_mine(st, F, k, rank, &p, &s))
            continue;
        const int base = k * mb, kb = rill_matrix_tile_rows(F, k);
        for (int r = 0; r < kb; r++)
            ipl[r] = ipiv[base + r] - base;
        piv_record_fill(p, ipl, kb, n - base, base, mb, content);
        p[DLA_PIV_INFO] = 0;
    }
    free(content);
    free(ipl);
    return s;
}

rill_status_t rill_dla_dgetrs(rill_dla_t *dla, rill_matrix_t *A, const int *ipiv, rill_matrix_t *B)
{
    if (!dla || !A || !ipiv || !B) {
        fprintf(stderr, "[rill dla] error: dgetrs: the layer, the factors, the pivots and B "
                        "must be given\n");
        return RILL_ERR_INVALID_ARG;
    }
    const int n = rill_matrix_n(A), mb = rill_matrix_mb(A);
    rill_status_t s;
    if ((s = dla_check_tiles("dgetrs", "A", A, mb)) != RILL_SUCCESS ||
        (s = dla_check_tiles("dgetrs", "B", B, mb)) != RILL_SUCCESS)
        return s;
    if (rill_matrix_m(A) != n || rill_matrix_m(B) != n) {
        fprintf(stderr,
                "[rill dla] error: dgetrs: A is %d x %d and B has %d rows; A must be square "
                "and B have as many rows\n",
                rill_matrix_m(A), n, rill_matrix_m(B));
        return RILL_ERR_INVALID_ARG;
    }
    for (int i = 0; i < n; i++)
        if (ipiv[i] < i + 1 || ipiv[i] > n) {
            fprintf(stderr,
                    "[rill dla] error: dgetrs: ipiv[%d] = %d; the pivot of row %d must lie in "
                    "%d .. %d (1-based, as dgetrf gives them)\n",
                    i, ipiv[i], i + 1, i + 1, n);
            return RILL_ERR_INVALID_ARG;
        }
    if (n == 0 || rill_matrix_n(B) == 0)
        return RILL_SUCCESS;
    const int mt = rill_matrix_mt(A), nt = rill_matrix_nt(B);
    lu_state_t st = { .A = B };
    rill_taskpool_t *tp = NULL;
    if ((s = lu_state_open(dla, A, &st)) != RILL_SUCCESS ||
        (s = lu_records_from_ipiv(dla, &st, A, ipiv)) != RILL_SUCCESS ||
        (s = rill_dtd_taskpool_create(dla->ctx, &tp)) != RILL_SUCCESS)
        goto out;
    /* P B, step after step (each step's interchanges act on the rows the earlier ones left),
     * then L Y = P B and U X = Y */
    rill_status_t si = RILL_SUCCESS;
    for (int k = 0; k < mt && si == RILL_SUCCESS; k++) {
        rill_data_t *piv = rill_collection_data_of(st.piv, (uint64_t)k);
        if (!piv)
            si = RILL_ERR_NO_MEMORY;
        for (int j = 0; j < nt && si == RILL_SUCCESS; j++)
            si = insert_swaps(dla, tp, &st, k, j, dla_prio(mt - k), piv);
    }
    if (si == RILL_SUCCESS)
        si = rill_dla_dtrsm_insert(dla, tp, RILL_DLA_LEFT, RILL_DLA_LOWER, RILL_DLA_NOTRANS,
                                   RILL_DLA_UNIT, 1.0, A, B);
    if (si == RILL_SUCCESS)
        si = rill_dla_dtrsm_insert(dla, tp, RILL_DLA_LEFT, RILL_DLA_UPPER, RILL_DLA_NOTRANS,
                                   RILL_DLA_NONUNIT, 1.0, A, B);
    s = dla_wait(&tp);
    if (si != RILL_SUCCESS)
        s = si;
out:
    if (tp)
        dla_wait(&tp);
    lu_state_close(&st);
    return s;
}

rill_status_t rill_dla_dgesv(rill_dla_t *dla, rill_matrix_t *A, int *ipiv, rill_matrix_t *B,
                             int *info_p)
{
    if (!dla || !A || !ipiv || !B || !info_p) {
        fprintf(stderr, "[rill dla] error: dgesv: the layer, A, the pivots (n entries), B and "
                        "info must be given\n");
        return RILL_ERR_INVALID_ARG;
    }
    /* B's shape before A is factored (dgetrs checks it again) */
    rill_status_t s = dla_check_tiles("dgesv", "B", B, rill_matrix_mb(A));
    if (s != RILL_SUCCESS)
        return s;
    if (rill_matrix_m(B) != rill_matrix_m(A)) {
        fprintf(stderr, "[rill dla] error: dgesv: B has %d rows, A %d; they must be as many\n",
                rill_matrix_m(B), rill_matrix_m(A));
        return RILL_ERR_INVALID_ARG;
    }
    s = rill_dla_dgetrf(dla, A, ipiv, info_p);
    if (s != RILL_SUCCESS)
        return s;
    if (*info_p > 0)
        return RILL_ERR_NUMERIC; /* U is singular: no solution, B as it was */
    return rill_dla_dgetrs(dla, A, ipiv, B);
}
