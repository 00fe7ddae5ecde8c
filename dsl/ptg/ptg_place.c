/* PTG's places: where a flow's input or output is (a tile of a matrix, a datum of a keyed
 * collection, or a NEW buffer of PTG's own), resolved for the generated code's calls
 * (rill_ptg_in_tile, _in_datum, _new_tile, _new_datum, _no_input, _write_tile,
 * _write_datum), with the messages that name a place outside the matrix, on another rank,
 * or of the wrong size. */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "ptg_internal.h" /* (and data_internal.h) */

/* Where a flow's input or output is: a tile of a matrix or a datum of a keyed collection,
 * resolved. data: this rank's datum (NULL when another rank holds it); bytes its size; rank
 * the rank that holds it; i, j the tile's indices (keyed: i the key, j -1), for messages. */
typedef struct place {
    rill_data_t *data;
    size_t bytes;
    int rank;
    int64_t i, j;
} place_t;

/* what the messages call p: "tile (2, 3)", "datum 17" (formatted only for a message: the
 * places are resolved for every task) */
static const char *place_name(const place_t *p, char *buf, size_t cap)
{
    if (p->j < 0)
        snprintf(buf, cap, "datum %llu", (unsigned long long)p->i);
    else
        snprintf(buf, cap, "tile (%lld, %lld)", (long long)p->i, (long long)p->j);
    return buf;
}

/* Tile (i, j) of A (local: look the datum up). Outside A the taskpool fails saying so
 * (what: "reads", ...) and false is returned. */
static bool tile_place(rill_taskpool_t *tp, rill_matrix_t *A, int64_t i, int64_t j,
                       const char *what, bool local, place_t *p)
{
    int mt = rill_matrix_mt(A), nt = rill_matrix_nt(A);
    if (i < 0 || j < 0 || i >= mt || j >= nt) {
        rill_taskpool_fail(tp, RILL_ERR_INVALID_ARG,
                           "PTG: a task %s tile (%lld, %lld), outside its %d x %d-tile matrix "
                           "(tile indices 0..%d, 0..%d): check the indices of the flow's tile",
                           what, (long long)i, (long long)j, mt, nt, mt - 1, nt - 1);
        return false;
    }
    p->data = local ? rill_matrix_tile_local(A, (int)i, (int)j) : NULL;
    p->bytes = (size_t)rill_matrix_tile_rows(A, (int)i) * (size_t)rill_matrix_tile_cols(A, (int)j) *
               sizeof(double);
    /* a local tile is this rank's; the distribution is asked only for a message's rank */
    p->rank = p->data ? tp->ctx->rank : rill_matrix_tile_rank(A, (int)i, (int)j);
    p->i = i;
    p->j = j;
    return true;
}

/* Datum key of the keyed collection D (local: this rank's datum, made on first use, when
 * this rank holds it). A key the collection maps outside the ranks, or out of memory, fails
 * the taskpool; false is returned. */
static bool datum_place(rill_taskpool_t *tp, rill_collection_t *D, uint64_t key, bool local,
                        place_t *p)
{
    p->rank = rill_collection_rank_of(D, key);
    p->bytes = D->datum_size;
    p->i = (int64_t)key;
    p->j = -1;
    p->data = NULL;
    if (p->rank < 0 || p->rank >= tp->ctx->nranks) {
        rill_taskpool_fail(tp, RILL_ERR_INVALID_ARG,
                           "PTG: the collection's rank_of maps key %llu to rank %d, outside "
                           "0..%d",
                           (unsigned long long)key, p->rank, tp->ctx->nranks - 1);
        return false;
    }
    if (local && p->rank == tp->ctx->rank && !(p->data = rill_collection_data_of(D, key))) {
        rill_taskpool_fail(tp, RILL_ERR_NO_MEMORY, "out of memory (datum %llu of %zu bytes)",
                           (unsigned long long)key, p->bytes);
        return false;
    }
    return true;
}

/* flow's input is the place p (resolved: NULL when it could not be) */
static void in_place(rill_ptg_task_t *t, int flow, const place_t *p)
{
    ptg_inst_t *in = t->rt;
    in->dat[flow] = p ? p->data : NULL;
    t->data[flow] = p && p->data ? ptg_host_ptr(p->data) : NULL;
    t->size[flow] = p && p->data ? p->bytes : 0;
    if (!p) {
        in->broken = true;
    } else if (!p->data) {
        in->broken = true;
        char name[64];
        rill_taskpool_fail(in->super.tp, RILL_ERR_NOT_SUPPORTED,
                           "PTG: a task of this rank reads %s, which rank %d holds: reading "
                           "another rank's data from its collection is not built yet (give the "
                           "task that affinity, or send it from a task there)",
                           place_name(p, name, sizeof(name)), p->rank);
    }
}

void rill_ptg_in_tile(rill_ptg_task_t *t, int flow, rill_matrix_t *A, int64_t i, int64_t j)
{
    if (!t || !A)
        return;
    place_t p;
    in_place(t, flow,
             tile_place(((ptg_inst_t *)t->rt)->super.tp, A, i, j, "reads", true, &p) ? &p : NULL);
}

void rill_ptg_in_datum(rill_ptg_task_t *t, int flow, rill_collection_t *D, uint64_t key)
{
    if (!t || !D)
        return;
    place_t p;
    in_place(t, flow, datum_place(((ptg_inst_t *)t->rt)->super.tp, D, key, true, &p) ? &p : NULL);
}

/* flow's input is NEW: a fresh buffer of p's size (NULL: it could not be resolved) */
static void new_place(rill_ptg_task_t *t, int flow, const place_t *p)
{
    ptg_inst_t *in = t->rt;
    if (!p) {
        in->broken = true;
        return;
    }
    size_t n = p->bytes;
    /* zero-filled for a task that reads it; a WRITE flow's only gets written (a GPU's copy
     * is not staged in either: no 32 MiB memset on the thread that makes the task) */
    const ptg_tp_t *tp = (const ptg_tp_t *)in->super.tp;
    bool reads = tp->prog->classes[in->cls].flow_mode[flow] & RILL_FLOW_READ;
    ptg_buf_t *buf = ptg_buf_new(in->super.tp->ctx, n, 1, reads);
    if (!buf) {
        in->broken = true;
        rill_taskpool_fail(in->super.tp, RILL_ERR_NO_MEMORY,
                           "out of memory (a NEW tile of %zu bytes for a PTG task)", n);
        return;
    }
    in->owned[flow] = buf; /* freed by the last holder (ptg_complete) */
    in->dat[flow] = &buf->data;
    t->data[flow] = ptg_buf_bytes(buf);
    t->size[flow] = n;
}

void rill_ptg_new_tile(rill_ptg_task_t *t, int flow, rill_matrix_t *A, int64_t i, int64_t j)
{
    if (!t || !A)
        return;
    place_t p;
    new_place(t, flow,
              tile_place(((ptg_inst_t *)t->rt)->super.tp, A, i, j, "takes a NEW tile the size of",
                         false, &p)
                  ? &p
                  : NULL);
}

void rill_ptg_new_datum(rill_ptg_task_t *t, int flow, rill_collection_t *D, uint64_t key)
{
    if (!t || !D)
        return;
    place_t p;
    new_place(t, flow, datum_place(((ptg_inst_t *)t->rt)->super.tp, D, key, false, &p) ? &p : NULL);
}

void rill_ptg_no_input(rill_ptg_task_t *t, int flow)
{
    if (!t)
        return;
    ptg_inst_t *in = t->rt;
    const ptg_tp_t *tp = (const ptg_tp_t *)in->super.tp;
    const rill_ptg_class_t *c = &tp->prog->classes[in->cls];
    if (flow < 0 || flow >= c->nflows)
        return;
    char me[112];
    in->broken = true; /* its body would read or write through NULL */
    ptg_task_name(me, sizeof(me), c, in->key);
    rill_taskpool_fail(in->super.tp, RILL_ERR_INVALID_ARG,
                       "PTG task %s, flow %s (%s:%d): none of its input guards holds, so its "
                       "body would get NULL; add an input for this case (or '<- NULL', or "
                       "': NULL', where the body does not use the flow then)",
                       me, c->flow_names[flow], tp->prog->file, c->flow_lines[flow]);
}

/* An output of the completing task's flow from_flow into the place p: copied there unless
 * the flow's data is p's datum already. */
static void write_place(rill_ptg_out_t *out, const place_t *p, int from_flow)
{
    rill_data_t *tile = p->data, *d = out->from->dat[from_flow];
    if (!tile) {
        char name[64];
        rill_taskpool_fail(&out->tp->super, RILL_ERR_NOT_SUPPORTED,
                           "PTG: an output to %s, which rank %d holds: writing another rank's "
                           "data is not built yet",
                           place_name(p, name, sizeof(name)), p->rank);
        return;
    }
    if (out->early) { /* the launch's pass: nothing but the outputs to other ranks */
        out->need_host |= d && tile != d;
        return;
    }
    if (out->probe) {
        if (d && tile != d)
            out->need_host = true; /* copied from host bytes */
        else if (d && !rill_data_copy_current(d, rill_data_host_copy(d)))
            ptg_chore_new(out->tp, d, NULL, 0, out); /* brought home, not holding the successors */
        return;
    }
    if (!d || tile == d) /* the flow's data is that tile already */
        return;
    size_t size = out->from->t.size[from_flow];
    if (size != p->bytes) { /* a tile is written whole: never a part of it, nor past it */
        const ptg_inst_t *i = out->from;
        const rill_ptg_class_t *c = &out->tp->prog->classes[i->cls];
        char me[112], name[64];
        ptg_task_name(me, sizeof(me), c, i->key);
        rill_taskpool_fail(&out->tp->super, RILL_ERR_INVALID_ARG,
                           "PTG task %s, flow %s (%s:%d): its data is %zu bytes, but it is "
                           "written into %s of %zu bytes: a tile is written whole, from data of "
                           "its size (NEW has the size of the task's affinity tile)",
                           me, c->flow_names[from_flow], out->tp->prog->file,
                           c->flow_lines[from_flow], size, place_name(p, name, sizeof(name)),
                           p->bytes);
        return;
    }
    /* a GPU's copy of an older version of the tile may be landing in its host copy (a
     * chore, an eviction): one copy into a host buffer at a time, as the managers do
     * (landing 0 -> 1, held while the bytes go in; a transfer is bounded, so is the wait).
     * The version is raised before the flag is given back (release): a manager that takes
     * the flag next sees this version and does not copy an older one over it. */
    rill_data_copy_t *host = rill_data_host_copy(tile);
    for (int z = 0; !atomic_compare_exchange_weak_explicit(
             &host->landing, &z, 1, memory_order_acq_rel, memory_order_relaxed);
         z = 0)
        sched_yield();
    memcpy(host->ptr, ptg_host_ptr(d), size);
    rill_data_wrote(tile, 0); /* a GPU's copy of the tile is stale now */
    atomic_store_explicit(&host->landing, 0, memory_order_release);
}

void rill_ptg_write_tile(rill_ptg_out_t *out, rill_matrix_t *A, int64_t i, int64_t j, int from_flow)
{
    if (!out || !out->from || !A)
        return;
    if (ptg_expr_errors != out->errors) /* the release's expressions failed the run */
        return;
    place_t p;
    if (tile_place(&out->tp->super, A, i, j, "writes", true, &p))
        write_place(out, &p, from_flow);
}

void rill_ptg_write_datum(rill_ptg_out_t *out, rill_collection_t *D, uint64_t key, int from_flow)
{
    if (!out || !out->from || !D)
        return;
    if (ptg_expr_errors != out->errors)
        return;
    place_t p;
    if (datum_place(&out->tp->super, D, key, true, &p))
        write_place(out, &p, from_flow);
}
