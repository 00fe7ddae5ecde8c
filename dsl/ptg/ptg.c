/* PTG taskpools (docs/ptg.md): the runtime side of the code rillcc generates. A task
 * instance exists only once it is touched: at start for the tasks of this rank with no
 * input from other tasks, else when its first input is delivered; it counts the inputs
 * still to come and is handed to the scheduler when the last one arrives. An output to a
 * task of another rank is an activation message (the tile inside, or exposed for one GET);
 * the received copy is reference-counted among the local tasks it reaches. Termination on
 * several ranks: Mattern's four counters (see ptg_close). */
#include "rill/ptg.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "data_internal.h"
#include "mempool.h"
#include "ptg_internal.h"
#include "remote_dep.h"
#include "scheduler.h"

ptg_buf_t *ptg_buf_new(rill_context_t *ctx, size_t size, int refs, bool zero)
{
    static atomic_ullong next_key;
    ptg_buf_t *b = malloc(sizeof(*b));
    bool pinned = false;
    void *bytes = b ? rill_host_tile_alloc(size ? size : 1, &pinned) : NULL;
    if (!bytes || rill_data_init_pinned(&b->data, ctx, NULL, atomic_fetch_add(&next_key, 1),
                                        ctx->rank, bytes, size, true, pinned) != RILL_SUCCESS) {
        if (bytes)
            rill_host_tile_free(bytes, size ? size : 1, pinned);
        free(b);
        return NULL;
    }
    if (zero)
        memset(bytes, 0, size);
    atomic_init(&b->refs, refs);
    return b;
}

/* The globals of a taskpool follow a header that names it, so the generated code's reports
 * (rill_ptg_expr_error, given the globals) find their taskpool. */
typedef union globals_head {
    struct ptg_tp *tp;
    max_align_t align;
} globals_head_t;

_Thread_local unsigned ptg_expr_errors;

void *ptg_buf_bytes(ptg_buf_t *b)
{
    return rill_data_host_copy(&b->data)->ptr;
}

/* Drop a reference: the last one frees the tile (acq_rel: every holder's use of the bytes
 * happens before the free). */
void ptg_buf_unref(ptg_buf_t *b)
{
    if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) {
        rill_data_fini(&b->data);
        free(b);
    }
}

static ptg_tp_t *tp_of_globals(const void *g)
{
    return ((const globals_head_t *)g - 1)->tp;
}

void rill_ptg_expr_error(const void *g, int *bad, const char *what, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ptg_expr_errors++;
    if (bad)
        *bad = 1;
    ptg_tp_t *tp = tp_of_globals(g);
    rill_taskpool_fail(&tp->super, RILL_ERR_INVALID_ARG, "PTG %s: %s %s", tp->prog->name, what,
                       msg);
}

int rill_ptg_range(const void *g, int *bad, int64_t lo, int64_t hi, int64_t step, const char *what)
{
    if (step <= 0) {
        rill_ptg_expr_error(g, bad, what,
                            "has the range %lld .. %lld .. %lld, whose step is %s: a step must "
                            "be positive (%s)",
                            (long long)lo, (long long)hi, (long long)step, step ? "negative" : "0",
                            step ? "a negative step never reaches the end" : "0 never ends");
        return 0;
    }
    if (hi > INT64_MAX - step) {
        rill_ptg_expr_error(g, bad, what,
                            "has the range %lld .. %lld .. %lld, whose end is above "
                            "INT64_MAX - step = %lld: the loop's last step would overflow; "
                            "lower the end",
                            (long long)lo, (long long)hi, (long long)step,
                            (long long)(INT64_MAX - step));
        return 0;
    }
    return 1;
}

/* "CLASS(p0, p1, ...)" of params (nparams, list order) into buf */
static const char *params_name(char *buf, size_t cap, const char *cname, const int64_t *params,
                               int nparams)
{
    size_t o = (size_t)snprintf(buf, cap, "%s(", cname);
    for (int k = 0; k < nparams && o < cap; k++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%lld", k ? ", " : "", (long long)params[k]);
    if (o < cap)
        snprintf(buf + o, cap - o, ")");
    return buf;
}

int rill_ptg_tile_rank(const void *g, int *bad, const rill_matrix_t *A, int64_t i, int64_t j,
                       const char *cname, const int64_t *params, int nparams, const char *where)
{
    int mt = rill_matrix_mt(A), nt = rill_matrix_nt(A);
    if (i >= 0 && j >= 0 && i < mt && j < nt)
        return rill_matrix_tile_rank(A, (int)i, (int)j);
    char task[112];
    rill_ptg_expr_error(g, bad, params_name(task, sizeof(task), cname, params, nparams),
                        "has the affinity %s, tile (%lld, %lld), outside the %d x %d-tile "
                        "matrix (tile indices 0..%d, 0..%d): no rank would run it",
                        where, (long long)i, (long long)j, mt, nt, mt - 1, nt - 1);
    return -1;
}

int rill_ptg_datum_rank(const void *g, int *bad, const rill_collection_t *D, uint64_t key,
                        const char *cname, const int64_t *params, int nparams, const char *where)
{
    int rank = rill_collection_rank_of(D, key);
    int nranks = tp_of_globals(g)->super.ctx->nranks;
    if (rank >= 0 && rank < nranks)
        return rank;
    char task[112];
    rill_ptg_expr_error(g, bad, params_name(task, sizeof(task), cname, params, nparams),
                        "has the affinity %s, datum %llu, which the collection's rank_of maps "
                        "to rank %d, outside 0..%d: no rank would run it",
                        where, (unsigned long long)key, rank, nranks - 1);
    return -1;
}

/* testing (RILL_PTG_TEST_GPU_RELEASE=1): every completion takes the path of a GPU's, so
 * the CPU-only CI runs the release and chore tasks */
static bool test_gpu_release;

/* the instances of every PTG taskpool (created with the first one, freed by rill_fini) */
static rill_mempool_t inst_pool;
static bool inst_pool_ready;

void rill_ptg_fini(void)
{
    if (inst_pool_ready)
        rill_mempool_fini(&inst_pool);
    inst_pool_ready = false;
    ptg_remote_fini();
}

static uint64_t key_hash(int cls, const int64_t *v, int n)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)cls;
    for (int i = 0; i < n; i++) {
        h ^= (uint64_t)v[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
}

static rill_hook_status_t run_body(rill_task_t *task, bool cuda)
{
    ptg_inst_t *i = (ptg_inst_t *)task;
    ptg_tp_t *tp = (ptg_tp_t *)task->tp;
    const rill_ptg_class_t *c = &tp->prog->classes[i->cls];
    if (i->broken || atomic_load_explicit(&tp->cancelled, memory_order_relaxed))
        return RILL_HOOK_ERROR; /* the run failed already, saying why */
    rill_status_t s = cuda ? c->body_cuda(&i->t) : c->body_cpu(&i->t);
    if (s == RILL_SUCCESS)
        return RILL_HOOK_DONE;
    char args[96];
    size_t o = 0;
    for (int k = 0; k < c->nparams && o < sizeof(args); k++)
        o += (size_t)snprintf(args + o, sizeof(args) - o, "%s%lld", k ? ", " : "",
                              (long long)i->key[k]);
    rill_taskpool_fail(task->tp, RILL_ERR_TASK, "PTG task %s(%s)%s failed: %s (%d)", c->name, args,
                       cuda ? " (its CUDA body)" : "", rill_status_string(s), s);
    return RILL_HOOK_ERROR;
}

static rill_hook_status_t ptg_hook_cpu(rill_worker_t *w, rill_task_t *task)
{
    (void)w;
    return run_body(task, false);
}

/* The GPU manager calls it with the data's device addresses in t.data: the body enqueues
 * its work on rill_cuda_stream(task) */
static rill_hook_status_t ptg_hook_cuda(rill_worker_t *w, rill_task_t *task)
{
    (void)w;
    return run_body(task, true);
}

/* The release and chore tasks run nothing: the core brought their data home first. */
static rill_hook_status_t ptg_hook_none(rill_worker_t *w, rill_task_t *task)
{
    (void)w;
    (void)task;
    return RILL_HOOK_DONE;
}

/* A new instance of class cls with variables v (locals computed) and key (the parameters
 * in list order); its tile inputs set. */
static ptg_inst_t *inst_new(ptg_tp_t *tp, int cls, const int64_t *params, const int64_t *key)
{
    const rill_ptg_class_t *c = &tp->prog->classes[cls];
    ptg_inst_t *i = rill_mempool_alloc(&inst_pool);
    if (!i)
        return NULL;
    unsigned errs = ptg_expr_errors;
    memset(&i->super, 0, sizeof(i->super));
    i->super.tc = &tp->tcs[cls];
    i->super.tp = &tp->super;
    i->super.device = -1;
    i->super.prio.priority = c->priority ? c->priority(tp->globals, params) : 0;
    i->super.urgent = c->urgent && c->urgent(tp->globals, params);
    i->cls = cls;
    i->broken = false;
    i->wrote = false;
    i->remaining = 0;
    i->early_flows = 0;
    i->hash = 0;
    i->hnext = NULL;
    i->t.globals = tp->globals;
    i->t.rt = i;
    memset(i->t.data, 0, sizeof(void *) * (size_t)c->nflows);
    memset(i->t.size, 0, sizeof(size_t) * (size_t)c->nflows);
    memset(i->owned, 0, sizeof(void *) * (size_t)c->nflows);
    memset(i->dat, 0, sizeof(void *) * (size_t)c->nflows);
    memset(i->got, 0, sizeof(i->got[0]) * (size_t)c->nflows);
    memcpy(i->t.v, params, sizeof(int64_t) * (size_t)c->nvars);
    memcpy(i->key, key, sizeof(int64_t) * (size_t)c->nparams);
    c->data_inputs(tp->globals, &i->t);
    if (ptg_expr_errors != errs) /* an expression of it failed the run, saying why */
        i->broken = true;
    rill_taskpool_pending_add(&tp->super, 1);
    atomic_fetch_add_explicit(&tp->created, 1, memory_order_relaxed);
    return i;
}

/* (ptg_internal.h) */
void ptg_task_name(char *buf, size_t cap, const rill_ptg_class_t *c, const int64_t *key)
{
    size_t o = (size_t)snprintf(buf, cap, "%s(", c->name);
    for (int k = 0; k < c->nparams && o < cap; k++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%lld", k ? ", " : "", (long long)key[k]);
    if (o < cap)
        snprintf(buf + o, cap - o, ")");
}

/* ------------------------------------------------------------ the done set
 *
 * The tasks that left the table with all their inputs, by class and key (the tasks made at
 * the creation take no input from tasks: a delivery to one fails the sender check). Under
 * the table's lock, like the table: an instance leaves the table and enters the set in one
 * critical section, so a delivery on any thread (a worker's release, the comm thread's
 * activation) finds the task in one or the other, never in neither, and cannot make a
 * second instance of it. An entry is the key only (no instance), in blocks freed with the
 * taskpool. */
typedef struct ptg_done {
    struct ptg_done *next;
    uint64_t hash;
    int cls;
    int64_t key[];
} ptg_done_t;

typedef struct ptg_done_block {
    struct ptg_done_block *next;
    size_t used, cap;
    max_align_t bytes[];
} ptg_done_block_t;

#define PTG_DONE_BLOCK (64u << 10)

/* Whether task (cls, key, hash h) is in the done set (table lock held). */
static bool done_find(const ptg_tp_t *tp, int cls, const int64_t *key, uint64_t h)
{
    if (!tp->ndbuckets)
        return false;
    size_t n = sizeof(int64_t) * (size_t)tp->prog->classes[cls].nparams;
    for (const ptg_done_t *e = tp->dbuckets[h % tp->ndbuckets]; e; e = e->next)
        if (e->hash == h && e->cls == cls && !memcmp(e->key, key, n))
            return true;
    return false;
}

/* Task i left the table to run: into the done set, and counted as started (table lock held).
 * Out of memory fails the run (false): the task runs, but a second delivery to it could not
 * be told. */
static bool done_add(ptg_tp_t *tp, const ptg_inst_t *i)
{
    atomic_fetch_add_explicit(&tp->nstarted[i->cls], 1, memory_order_relaxed);
    size_t kb = sizeof(int64_t) * (size_t)tp->prog->classes[i->cls].nparams;
    size_t need = (sizeof(ptg_done_t) + kb + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    if (tp->ndone >= 2 * tp->ndbuckets) { /* grow: a chain stays short */
        size_t nb = tp->ndbuckets ? 4 * tp->ndbuckets : 4096;
        ptg_done_t **b = calloc(nb, sizeof(*b));
        if (!b)
            return false;
        for (size_t k = 0; k < tp->ndbuckets; k++)
            while (tp->dbuckets[k]) {
                ptg_done_t *e = tp->dbuckets[k];
                tp->dbuckets[k] = e->next;
                e->next = b[e->hash % nb];
                b[e->hash % nb] = e;
            }
        free(tp->dbuckets);
        tp->dbuckets = b;
        tp->ndbuckets = nb;
    }
    ptg_done_block_t *blk = tp->dblocks;
    if (!blk || blk->cap - blk->used < need) {
        size_t cap = need > PTG_DONE_BLOCK ? need : PTG_DONE_BLOCK;
        if (!(blk = malloc(sizeof(*blk) + cap)))
            return false;
        blk->used = 0;
        blk->cap = cap;
        blk->next = tp->dblocks;
        tp->dblocks = blk;
    }
    ptg_done_t *e = (ptg_done_t *)((char *)blk->bytes + blk->used);
    blk->used += need;
    e->hash = i->hash;
    e->cls = i->cls;
    memcpy(e->key, i->key, kb);
    e->next = tp->dbuckets[i->hash % tp->ndbuckets];
    tp->dbuckets[i->hash % tp->ndbuckets] = e;
    tp->ndone++;
    return true;
}

/* ------------------------------------------------------------ gates
 *
 * A tile that leaves GPU to GPU is read by its put from this rank's copy after the release
 * that sent it: a local task that writes it must not run before every such put ended,
 * whichever way it is ordered after the sender (the tile from the sender itself, a control
 * flow, another task). Each datum with such sends in flight has a gate (ptg_gate_t, in
 * tp->gates under the table's lock), taken by each send and by the release that makes the
 * sends (before it delivers anything), given back as each ends; an instance that becomes
 * ready while a datum it writes has a gate waits there, as for one more input, and the last
 * give lets it go. */

/* The gate of datum d (table lock held), or NULL. */
static ptg_gate_t *gate_find(ptg_tp_t *tp, const rill_data_t *d)
{
    ptg_gate_t *g = tp->gates;
    while (g && g->d != d)
        g = g->next;
    return g;
}

ptg_gate_t *ptg_gate_take(ptg_tp_t *tp, rill_data_t *d)
{
    rill_spinlock_lock(&tp->lock);
    ptg_gate_t *g = gate_find(tp, d);
    if (!g && (g = calloc(1, sizeof(*g)))) {
        g->d = d;
        g->next = tp->gates;
        tp->gates = g;
    }
    if (g)
        g->inflight++;
    rill_spinlock_unlock(&tp->lock);
    if (!g)
        rill_taskpool_fail(&tp->super, RILL_ERR_NO_MEMORY, "out of memory (a PTG gate)");
    return g;
}

/* Whether ready instance i must wait at a gate (table lock held): a datum it writes has
 * sends in flight. Then it is held there (one more input) and stays in the table. */
static bool gate_check(ptg_tp_t *tp, ptg_inst_t *i)
{
    if (!tp->gates)
        return false;
    const rill_ptg_class_t *c = &tp->prog->classes[i->cls];
    for (int f = 0; f < c->nflows; f++) {
        ptg_gate_t *g =
            (c->flow_mode[f] & RILL_FLOW_WRITE) && i->dat[f] ? gate_find(tp, i->dat[f]) : NULL;
        if (!g)
            continue;
        if (g->n == g->cap) {
            int cap = g->cap ? 2 * g->cap : 8;
            ptg_inst_t **h = realloc(g->held, sizeof(*h) * (size_t)cap);
            if (!h) { /* (it goes: the run fails) */
                rill_taskpool_fail(&tp->super, RILL_ERR_NO_MEMORY, "out of memory (a PTG gate)");
                return false;
            }
            g->held = h;
            g->cap = cap;
        }
        g->held[g->n++] = i;
        i->remaining = 1;
        return true;
    }
    return false;
}

/* Out of the table: i has all its inputs (table lock held). */
static void table_unlink(ptg_tp_t *tp, ptg_inst_t *i)
{
    ptg_inst_t **pp = &tp->buckets[i->hash % tp->nbuckets];
    while (*pp != i)
        pp = &(*pp)->hnext;
    *pp = i->hnext;
    atomic_fetch_sub_explicit(&tp->nwaiting, 1, memory_order_relaxed);
    tp->nwait_cls[i->cls]--;
}

void ptg_gate_give(ptg_tp_t *tp, ptg_gate_t *g)
{
    if (!g)
        return;
    rill_spinlock_lock(&tp->lock);
    if (--g->inflight > 0) {
        rill_spinlock_unlock(&tp->lock);
        return;
    }
    ptg_gate_t **pp = &tp->gates;
    while (*pp != g)
        pp = &(*pp)->next;
    *pp = g->next;
    /* its writers: ready now, unless another datum of theirs has a gate too */
    rill_task_t *ready = NULL;
    int nready = 0;
    bool nomem = false;
    for (int k = 0; k < g->n; k++) {
        ptg_inst_t *i = g->held[k];
        if (--i->remaining == 0 && !gate_check(tp, i)) {
            table_unlink(tp, i);
            if (!done_add(tp, i))
                nomem = true;
            i->super.next = ready;
            ready = &i->super;
            nready++;
        }
    }
    rill_spinlock_unlock(&tp->lock);
    free(g->held);
    free(g);
    if (nomem)
        rill_taskpool_fail(&tp->super, RILL_ERR_NO_MEMORY, "out of memory (PTG's done set)");
    rill_sched_push(tp->super.ctx, NULL, ready, nready);
}

/* A delivery the receiver's input does not name: fail the run, naming the receiver (class c,
 * params), its flow, the sender and what the flow takes (want; why: what is wrong). */
static void deliver_refused(ptg_tp_t *tp, const rill_ptg_class_t *c, const int64_t *params,
                            int flow, const ptg_from_t *from, const char *why, const char *want)
{
    const rill_ptg_class_t *sc = &tp->prog->classes[from->cls];
    char me[112], src[112];
    ptg_task_name(me, sizeof(me), c, params);
    ptg_task_name(src, sizeof(src), sc, from->params);
    rill_taskpool_fail(&tp->super, RILL_ERR_INVALID_ARG,
                       "PTG task %s, flow %s (%s:%d): %s from %s (flow %s), but its input is "
                       "%s, the first whose guard holds: the two sides disagree (a guard, an "
                       "argument)",
                       me, c->flow_names[flow], tp->prog->file, c->flow_lines[flow], why, src,
                       sc->flow_names[from->flow], want);
}

/*
 * Ordering and ownership: deliveries come from workers (a completing task's release), from
 * a GPU manager's completions and from the comm thread (activations), concurrently. The
 * check that the sender is the one the receiver's input names needs no lock (it reads the
 * globals and the receiver's variables only); everything about the instance (found or made,
 * its counts, out of the table into the done set) happens under the table's lock, so two
 * deliveries to one task are ordered there: the second sees the first's count, or the task
 * in the done set. A delivery that is refused keeps nothing: its reference of buf is given
 * back after the lock.
 */
void ptg_deliver_local(rill_ptg_out_t *out, int cls, const int64_t *v, const int64_t *params,
                       int flow, rill_data_t *d, size_t size, ptg_buf_t *buf, bool broken,
                       const ptg_from_t *from)
{
    ptg_tp_t *tp = out->tp;
    const rill_ptg_class_t *c = &tp->prog->classes[cls];
    /* the sender must be the task the flow's input names (PaRSEC's rule: the first input
     * dependency whose guard holds); a guard that cannot be computed failed the run */
    char want[160] = "";
    unsigned errs = ptg_expr_errors;
    int64_t takes =
        c->takes(tp->globals, v, flow, from->cls, from->flow, from->params, NULL, sizeof(want));
    if (ptg_expr_errors != errs) {
        broken = true;
        takes = INT64_MAX;
    } else if (takes == 0) {
        c->takes(tp->globals, v, flow, from->cls, from->flow, from->params, want, sizeof(want));
        deliver_refused(tp, c, params, flow, from, "a delivery", want);
        ptg_buf_unref(buf); /* on a manager never the last: the sender holds one */
        return;
    }
    uint64_t h = key_hash(cls, params, c->nparams);
    size_t b = h % tp->nbuckets;
    rill_spinlock_lock(&tp->lock);
    ptg_inst_t *i = tp->buckets[b], **pp = &tp->buckets[b];
    while (i && !(i->hash == h && i->cls == cls &&
                  !memcmp(i->key, params, sizeof(int64_t) * (size_t)c->nparams))) {
        pp = &i->hnext;
        i = i->hnext;
    }
    if (!i && done_find(tp, cls, params, h)) { /* it ran (or is running) already */
        rill_spinlock_unlock(&tp->lock);
        char me[112], why[200];
        ptg_task_name(me, sizeof(me), c, params);
        snprintf(why, sizeof(why), "a delivery after %s had all its inputs (it ran)", me);
        c->takes(tp->globals, v, flow, from->cls, from->flow, from->params, want, sizeof(want));
        deliver_refused(tp, c, params, flow, from, why, want);
        ptg_buf_unref(buf);
        return;
    }
    if (!i) {
        i = inst_new(tp, cls, v, params);
        if (!i) {
            rill_spinlock_unlock(&tp->lock);
            rill_taskpool_fail(&tp->super, RILL_ERR_NO_MEMORY, "out of memory (a PTG task)");
            ptg_buf_unref(buf); /* on a manager never the last: the completing task holds one */
            return;
        }
        i->hash = h;
        errs = ptg_expr_errors;
        i->remaining = c->ninputs(tp->globals, v);
        if (ptg_expr_errors != errs)
            i->broken = true;
        i->hnext = tp->buckets[b];
        tp->buckets[b] = i;
        pp = &tp->buckets[b];
        atomic_fetch_add_explicit(&tp->nwaiting, 1, memory_order_relaxed);
        tp->nwait_cls[cls]++;
    }
    if (flow >= 0 && flow < c->nflows && ++i->got[flow] > takes) {
        /* one more than the flow's input gives: refused, the instance unchanged */
        int32_t got = i->got[flow]--;
        rill_spinlock_unlock(&tp->lock);
        char why[80];
        snprintf(why, sizeof(why), "delivery number %d (one too many)", (int)got);
        c->takes(tp->globals, v, flow, from->cls, from->flow, from->params, want, sizeof(want));
        deliver_refused(tp, c, params, flow, from, why, want);
        ptg_buf_unref(buf);
        return;
    }
    if (broken) /* its input was lost (the run failed, saying why): the body must not run */
        i->broken = true;
    if (d && flow >= 0 && flow < c->nflows) {
        i->dat[flow] = d;
        i->t.data[flow] = ptg_host_ptr(d); /* a GPU that runs it puts its own copy's there */
        i->t.size[flow] = size;
        if (buf && !i->owned[flow]) {
            i->owned[flow] = buf;
            buf = NULL;
        }
    }
    /* (ready: unless a datum it writes is being sent GPU to GPU: then it waits at its gate) */
    bool ready = --i->remaining == 0 && !gate_check(tp, i);
    bool excess = i->remaining < 0; /* read under the lock: once it is released, another
                                     * deliverer may make i ready, run and free it */
    bool nomem = false;
    if (ready) { /* no more inputs: out of the table, into the done set */
        *pp = i->hnext;
        atomic_fetch_sub_explicit(&tp->nwaiting, 1, memory_order_relaxed);
        tp->nwait_cls[cls]--;
        nomem = !done_add(tp, i);
    }
    rill_spinlock_unlock(&tp->lock);
    ptg_buf_unref(buf); /* not kept (NULL when it was): give the reference back */
    if (nomem)
        rill_taskpool_fail(&tp->super, RILL_ERR_NO_MEMORY, "out of memory (PTG's done set)");
    if (excess)
        rill_taskpool_fail(&tp->super, RILL_ERR_INVALID_ARG,
                           "%s received more inputs than its dependencies say: the two sides of "
                           "a dependency disagree in their guards",
                           c->name);
    if (ready) {
        i->super.next = out->ready;
        out->ready = &i->super;
        out->nready++;
    }
}

/* A tile of PTG's own that instance from holds, d, goes on: one more reference (NULL when d
 * is not one). */
static ptg_buf_t *owned_ref(const ptg_inst_t *from, const rill_data_t *d)
{
    const ptg_tp_t *tp = (const ptg_tp_t *)from->super.tp;
    for (int f = 0; d && f < tp->prog->classes[from->cls].nflows; f++)
        if (from->owned[f] && &from->owned[f]->data == d) {
            atomic_fetch_add_explicit(&from->owned[f]->refs, 1, memory_order_relaxed);
            return from->owned[f];
        }
    return NULL;
}

void rill_ptg_deliver(rill_ptg_out_t *out, int cls, const int64_t *params, int flow, int from_flow)
{
    if (!out || !out->tp || !params) /* (generated code never passes NULL) */
        return;
    ptg_tp_t *tp = out->tp;
    ptg_inst_t *from = out->from;
    rill_data_t *d = from->dat[from_flow];
    size_t size = d ? from->t.size[from_flow] : 0;
    const rill_ptg_class_t *c = &tp->prog->classes[cls];
    int64_t v[RILL_PTG_MAX_VARS] = { 0 };
    for (int k = 0; k < c->nparams; k++)
        v[c->param_var[k]] = params[k];
    if (ptg_expr_errors != out->errors) /* the release's expressions failed the run: its */
        return;                         /* outputs are not what the program says */
    int valid = c->valid(tp->globals, v);
    if (ptg_expr_errors != out->errors)
        return;
    if (!valid) {
        char args[96];
        size_t o = 0;
        for (int k = 0; k < c->nparams && o < sizeof(args); k++)
            o += (size_t)snprintf(args + o, sizeof(args) - o, "%s%lld", k ? ", " : "",
                                  (long long)params[k]);
        rill_taskpool_fail(&tp->super, RILL_ERR_INVALID_ARG,
                           "a dependency sends to %s(%s), which is outside %s's parameter "
                           "ranges: a guard is missing in the .rill file",
                           c->name, args, c->name);
        return;
    }
    int rank = c->rank(tp->globals, v);
    if (ptg_expr_errors != out->errors)
        return;
    uint32_t bit = 1u << from_flow;
    if (out->probe) { /* its bytes travel: GPU to GPU from the producer's copy, or home */
        if (rank != tp->super.ctx->rank && d) {
            if (out->gpu_dev > 0 && rill_rdep_route(tp->super.ctx, d, rank, true))
                out->gpu_flows |= bit;
            else
                out->need_host = true;
        }
        return;
    }
    /* GPU to GPU: decided by the probe now, or sent at the body's launch already */
    bool sent = from->early_flows & bit;
    bool gpu = sent || (out->gpu_dev > 0 && (out->gpu_flows & bit));
    if (out->early && (rank == tp->super.ctx->rank || !gpu))
        return;                        /* the launch's pass: only those */
    if (rank != tp->super.ctx->rank) { /* sent with the others to that rank (send_remote) */
        if (sent && !out->early)       /* it left at the launch */
            return;
        /* GPU to GPU, the send holds a reference of PTG's tile until its put ended (on the
         * host route its bytes are copied as it is sent) */
        ptg_buf_t *buf = gpu ? owned_ref(from, d) : NULL;
        if (out->nremote == out->capremote) {
            int cap = out->capremote ? 2 * out->capremote : 64;
            ptg_remote_t *r = malloc(sizeof(*r) * (size_t)cap);
            if (!r) {
                rill_taskpool_fail(&tp->super, RILL_ERR_NO_MEMORY,
                                   "out of memory (a PTG activation)");
                ptg_buf_unref(buf); /* never the last: the completing task holds one */
                return;
            }
            if (out->nremote)
                memcpy(r, out->remote, sizeof(*r) * (size_t)out->nremote);
            if (out->remote != out->fixed)
                free(out->remote);
            out->remote = r;
            out->capremote = cap;
        }
        ptg_remote_t *r = &out->remote[out->nremote++];
        *r = (ptg_remote_t){ .dst = rank,
                             .cls = cls,
                             .flow = flow,
                             .prio = c->priority ? c->priority(tp->globals, v) : 0,
                             .size = size,
                             .dat = d,
                             .buf = buf, /* the send's reference (ptg_send_remote) */
                             .from_flow = from_flow,
                             .gpu = gpu };
        memcpy(r->params, params, sizeof(int64_t) * (size_t)c->nparams);
        return;
    }
    ptg_from_t sender = { .cls = from->cls, .flow = from_flow, .params = from->key };
    ptg_deliver_local(out, cls, v, params, flow, d, size, owned_ref(from, d), false, &sender);
}

/* Hand task (and the nmore tasks linked after it) back to the scheduler, to run on a worker
 * (the core chooses again: device -1; traces: a GPU span ended its flow already). */
static void requeue(ptg_tp_t *tp, rill_task_t *task, rill_task_t *more, int nmore)
{
    task->device = -1;
    task->flow_in = 0;
    task->next = more;
    rill_sched_push(tp->super.ctx, NULL, task, nmore + 1);
}
static int chore_flows(rill_task_t *task, rill_task_flow_t *flows, int max);
static void chore_complete(rill_worker_t *w, rill_task_t *task, rill_hook_status_t status);

/* The task ran: its outputs go to their successors (released when complete), the tiles. */
static void ptg_complete(rill_worker_t *w, rill_task_t *task, rill_hook_status_t status)
{
    (void)status; /* a failed task still releases its successors: the run ends, no hang */
    ptg_inst_t *i = (ptg_inst_t *)task;
    ptg_tp_t *tp = (ptg_tp_t *)task->tp;
    const rill_ptg_class_t *c = &tp->prog->classes[i->cls];
    /* the data it wrote: their copies on the device that ran it hold the new versions,
     * before any successor can see them (a task that did not run its body counts too: its
     * successors are ordered after it) */
    int dev = task->device > 0 ? task->device : 0;
    if (!i->wrote)
        for (int f = 0; f < c->nflows; f++)
            if (i->dat[f] && (c->flow_mode[f] & RILL_FLOW_WRITE))
                rill_data_wrote(i->dat[f], dev);
    i->wrote = true;
    rill_ptg_out_t out = { .tp = tp, .from = i, .errors = ptg_expr_errors };
    out.remote = out.fixed;
    out.capremote = (int)(sizeof(out.fixed) / sizeof(out.fixed[0]));
    /* a GPU manager's thread (w NULL: its completions, and the tasks it fails): it must
     * not free a datum with a copy on its own GPU (the copy's release waits for this very
     * thread), and the newest bytes may be on the GPU only */
    bool manager = !w || test_gpu_release;
    /* (a release task comes back here on a worker, then runs the release; one failed on a
     * manager, when its data could not be brought home, runs it anyway: the run failed) */
    if (manager && task->tc != &tp->release_tc && status != RILL_HOOK_ERROR) {
        /* an output that needs host bytes (to another rank, a copy into a tile) holds the
         * whole release until a worker has them home: the instance goes back to the
         * scheduler as a release task whose flows are its data, so the core brings them
         * home first and no local successor can overwrite them before they are copied;
         * a tile output in place whose newest copy is on the GPU gets a chore that brings
         * it home while the successors go on (PaRSEC's pushout); an output to another
         * rank that moves GPU to GPU needs none (out.gpu_flows) */
        out.gpu_dev = dev;
        out.probe = true;
        c->release(tp->globals, &i->t, &out);
        out.probe = false;
        if (out.need_host) {
            i->super.tc = &tp->release_tc;
            requeue(tp, &i->super, out.ready, out.nready);
            return;
        }
    }
    /* the data it sends GPU to GPU now: their gates exist before any successor is
     * delivered (a writer waits there until their puts ended; the sends take them too) */
    ptg_gate_t *made[RILL_PTG_MAX_FLOWS] = { NULL };
    for (int f = 0; f < c->nflows; f++)
        if (out.gpu_dev > 0 && (out.gpu_flows & ~i->early_flows & (1u << f)))
            made[f] = ptg_gate_take(tp, i->dat[f]);
    /* the body's writes happen before the successors' reads: rill_sched_push publishes
     * them (release), and the table's lock orders the deliveries */
    c->release(tp->globals, &i->t, &out);
    /* the activations copy the tiles before a local successor (an RW) may write them, or
     * (GPU to GPU) the local writers wait at the gates until the puts ended */
    ptg_send_remote(&out);
    for (int f = 0; f < c->nflows; f++)
        ptg_gate_give(tp, made[f]);
    /* PTG's tiles it held: a manager cannot free a datum with a copy on its own GPU (the
     * copy's release waits for that manager), so a chore drops them on a worker */
    if (manager)
        ptg_chore_new(tp, NULL, i->owned, c->nflows, &out);
    else
        for (int f = 0; f < c->nflows; f++)
            ptg_buf_unref(i->owned[f]);
    rill_sched_push(tp->super.ctx, w, out.ready, out.nready);
    atomic_fetch_add_explicit(&tp->completed, 1, memory_order_relaxed);
    rill_mempool_free(&inst_pool, i);
    rill_taskpool_pending_sub(&tp->super, 1);
}

/* Manager thread, right after task's body was enqueued on GPU dev (launch number launch):
 * its outputs to other ranks that go GPU to GPU leave now (ptg_send_early), so the
 * receivers' GPUs ask for them while the body runs and the puts go behind it on the GPU,
 * with no host step between the kernel and the copy. Only when none of its outputs needs
 * host bytes (then the completion's release would wait for them first). */
static void ptg_launched(rill_task_t *task, int dev, uint64_t launch)
{
    ptg_inst_t *i = (ptg_inst_t *)task;
    ptg_tp_t *tp = (ptg_tp_t *)task->tp;
    if (tp->super.ctx->nranks == 1 || i->broken || !ptg_early_on() ||
        atomic_load_explicit(&tp->cancelled, memory_order_relaxed))
        return;
    const rill_ptg_class_t *c = &tp->prog->classes[i->cls];
    rill_ptg_out_t out = { .tp = tp,
                           .from = i,
                           .errors = ptg_expr_errors,
                           .gpu_dev = dev,
                           .early = true,
                           .behind = launch,
                           .probe = true };
    out.remote = out.fixed;
    out.capremote = (int)(sizeof(out.fixed) / sizeof(out.fixed[0]));
    c->release(tp->globals, &i->t, &out);
    if (out.need_host || !out.gpu_flows || ptg_expr_errors != out.errors)
        return;
    out.probe = false;
    c->release(tp->globals, &i->t, &out);
    ptg_send_early(&out);
}

/* A chore: bring a tile home (its flow, READ) and / or drop references of PTG's tiles. */
typedef struct ptg_chore {
    rill_task_t super;
    rill_data_t *home;
    ptg_buf_t *bufs[RILL_PTG_MAX_FLOWS];
    int nbufs;
} ptg_chore_t;

void ptg_chore_new(ptg_tp_t *tp, rill_data_t *home, ptg_buf_t *const *bufs, int nbufs,
                   rill_ptg_out_t *out)
{
    int held = 0;
    for (int b = 0; b < nbufs; b++)
        held += bufs[b] != NULL;
    if (!home && !held)
        return;
    ptg_chore_t *ch = calloc(1, sizeof(*ch));
    if (!ch) { /* the references are kept (leaked): dropping one here could free a datum
                * on a manager's thread, which would wait for itself */
        rill_taskpool_fail(&tp->super, RILL_ERR_NO_MEMORY, "out of memory (a PTG chore)");
        return;
    }
    ch->super.tc = &tp->chore_tc;
    ch->super.tp = &tp->super;
    ch->super.device = -1;
    ch->home = home;
    for (int b = 0; b < nbufs; b++)
        if (bufs[b])
            ch->bufs[ch->nbufs++] = bufs[b];
    rill_taskpool_pending_add(&tp->super, 1);
    ch->super.next = out->ready;
    out->ready = &ch->super;
    out->nready++;
}

void ptg_chore_push(ptg_tp_t *tp, ptg_buf_t *const *bufs, int nbufs)
{
    rill_ptg_out_t out = { .tp = tp };
    ptg_chore_new(tp, NULL, bufs, nbufs, &out);
    rill_sched_push(tp->super.ctx, NULL, out.ready, out.nready);
}

static int chore_flows(rill_task_t *task, rill_task_flow_t *flows, int max)
{
    ptg_chore_t *ch = (ptg_chore_t *)task;
    if (!ch->home || max < 1)
        return 0;
    flows[0] = (rill_task_flow_t){ .data = ch->home, .ptr = NULL, .mode = RILL_FLOW_READ };
    return 1;
}

static void chore_complete(rill_worker_t *w, rill_task_t *task, rill_hook_status_t status)
{
    (void)status;
    ptg_chore_t *ch = (ptg_chore_t *)task;
    rill_taskpool_t *tp = task->tp;
    if (!w && ch->nbufs) { /* failed on a manager (its tile could not come home): the
                            * references are dropped on a worker, with nothing to bring */
        ch->home = NULL;
        requeue((ptg_tp_t *)tp, &ch->super, NULL, 0);
        return;
    }
    for (int b = 0; b < ch->nbufs; b++)
        ptg_buf_unref(ch->bufs[b]);
    free(ch);
    rill_taskpool_pending_sub(tp, 1);
}

_Static_assert(RILL_PTG_READ == RILL_FLOW_READ && RILL_PTG_WRITE == RILL_FLOW_WRITE,
               "a PTG flow's mode is the core's");

/* The data it accesses, for the devices (the GPU that runs it sets t.data[f] to its copy). */
static int ptg_flows(rill_task_t *task, rill_task_flow_t *flows, int max)
{
    ptg_inst_t *i = (ptg_inst_t *)task;
    const rill_ptg_class_t *c = &((ptg_tp_t *)task->tp)->prog->classes[i->cls];
    int n = 0;
    for (int f = 0; f < c->nflows && n < max; f++)
        if (i->dat[f]) {
            flows[n].data = i->dat[f];
            flows[n].ptr = &i->t.data[f];
            flows[n].mode = c->flow_mode[f];
            n++;
        }
    return n;
}

static double ptg_flops(const rill_task_t *task)
{
    const ptg_inst_t *i = (const ptg_inst_t *)task;
    const ptg_tp_t *tp = (const ptg_tp_t *)task->tp;
    const rill_ptg_class_t *c = &tp->prog->classes[i->cls];
    return c->flops ? c->flops(tp->globals, i->t.v) : -1.0;
}

rill_status_t rill_ptg_init(rill_context_t *ctx)
{
    if (!ctx)
        return rill_arg_null("rill_ptg_init", "the context");
    const char *e = getenv("RILL_PTG_TEST_GPU_RELEASE");
    test_gpu_release = e && !strcmp(e, "1");
    return ptg_remote_init(ctx);
}

/* ------------------------------------------------------------ taskpool */

typedef struct start_arg {
    ptg_tp_t *tp;
    int cls;
    rill_ptg_out_t *out;
    unsigned errors; /* ptg_expr_errors at the start */
    bool failed;     /* out of memory: the creation fails */
    /* an error that every rank finds the same (a range, an expression of the ranges, the
     * locals or the affinity: every rank enumerates every task): the creation fails */
    bool global;
    bool local;                     /* an error of a task of this rank: the run fails */
    int64_t key[RILL_PTG_MAX_VARS]; /* the task whose inputs are checked */
} start_arg_t;

/* An input of a task of this rank (a->cls, a->key) comes from task (cls, params), which
 * must lie in its class's ranges: else the task would wait for it forever. */
static void source_check(void *arg, int flow, int cls, const int64_t *params)
{
    (void)flow;
    start_arg_t *a = arg;
    const rill_ptg_class_t *sc = &a->tp->prog->classes[cls];
    if (a->local || cls < 0 || cls >= a->tp->prog->nclasses)
        return;
    int64_t v[RILL_PTG_MAX_VARS] = { 0 };
    for (int k = 0; k < sc->nparams; k++)
        v[sc->param_var[k]] = params[k];
    unsigned errs = ptg_expr_errors;
    int valid = sc->valid(a->tp->globals, v);
    if (ptg_expr_errors != errs || !valid)
        a->local = true;
    if (valid || ptg_expr_errors != errs)
        return;
    char me[112], src[112];
    ptg_task_name(me, sizeof(me), &a->tp->prog->classes[a->cls], a->key);
    ptg_task_name(src, sizeof(src), sc, params);
    rill_taskpool_fail(&a->tp->super, RILL_ERR_INVALID_ARG,
                       "PTG task %s waits for an input from %s, which is outside %s's parameter "
                       "ranges: %s would never run (a guard is missing in the .rill file)",
                       me, src, sc->name, me);
}

static int start_visit(void *arg, const int64_t *v)
{
    start_arg_t *a = arg;
    ptg_tp_t *tp = a->tp;
    const rill_ptg_class_t *c = &tp->prog->classes[a->cls];
    int rank = c->rank(tp->globals, v);
    if (ptg_expr_errors != a->errors) { /* every rank computes every task's rank */
        a->global = true;
        return 1;
    }
    if (rank != tp->super.ctx->rank)
        return 0;
    tp->nlocal[a->cls]++;
    int64_t key[RILL_PTG_MAX_VARS];
    for (int k = 0; k < c->nparams; k++)
        key[k] = v[c->param_var[k]];
    int n = c->ninputs(tp->globals, v);
    if (ptg_expr_errors != a->errors) {
        a->local = true;
        return 1;
    }
    if (n != 0) { /* it waits for them: each must come from a task in its class's ranges */
        memcpy(a->key, key, sizeof(key));
        c->sources(tp->globals, v, source_check, a);
        a->local |= ptg_expr_errors != a->errors;
        return a->local;
    }
    ptg_inst_t *i = inst_new(tp, a->cls, v, key);
    if (!i) {
        a->failed = true;
        return 1;
    }
    atomic_fetch_add_explicit(&tp->nstarted[a->cls], 1, memory_order_relaxed);
    a->local |= i->broken; /* it runs no body; the run failed, saying why */
    i->super.next = a->out->ready;
    a->out->ready = &i->super;
    /* hand them over in batches: the workers start while the enumeration goes on */
    if (++a->out->nready == 256) {
        rill_sched_push(tp->super.ctx, rill_worker_self(), a->out->ready, a->out->nready);
        a->out->ready = NULL;
        a->out->nready = 0;
    }
    return a->local;
}

/* Nothing but the creation hold and the instances waiting for inputs pending: no task
 * ready or running, no activation being fetched. The waiting instances can only be made
 * ready by a message (counted by the termination) or a running task: none. Read under the
 * table's lock, where a waiting instance is created (and counted in pending) and made
 * ready, so both numbers are of one moment. */
static bool locally_idle(void *arg)
{
    ptg_tp_t *tp = arg;
    long long pending = atomic_load_explicit(&tp->super.pending, memory_order_acquire);
    if (pending <= 1)
        return true;
    /* the main thread asks this at every turn of its wait: while tasks run or are ready,
     * pending exceeds the waiting instances by more than the hold, and the table's lock is
     * left to the deliveries (taking it at every turn held them back: a quarter of the
     * delivering worker's time on 2 cores); only a count that may say idle is checked
     * under the lock. A stale count only delays the answer to a later turn */
    if (pending - (long long)atomic_load_explicit(&tp->nwaiting, memory_order_relaxed) > 1)
        return false;
    rill_spinlock_lock(&tp->lock);
    pending = atomic_load_explicit(&tp->super.pending, memory_order_acquire) -
              (long long)atomic_load_explicit(&tp->nwaiting, memory_order_relaxed);
    rill_spinlock_unlock(&tp->lock);
    return pending <= 1;
}

/* The tasks of class cls of this rank that never received an input, at the end (locally
 * idle): its tasks, less those that started (each once: the done set refuses a second
 * delivery, so no completion can cancel a task that never ran) and those waiting in the
 * table. */
static uint64_t never_started(ptg_tp_t *tp, int cls, uint64_t waiting)
{
    uint64_t done = atomic_load_explicit(&tp->nstarted[cls], memory_order_relaxed) + waiting;
    return tp->nlocal[cls] > done ? tp->nlocal[cls] - done : 0;
}

/* How many tasks of this rank wait for inputs at the end (locally idle): those in the table
 * and those that never received one. A failed run's own do not count (it fails already).
 * Main thread. */
static uint64_t ptg_stuck(ptg_tp_t *tp)
{
    if (atomic_load_explicit(&tp->super.error, memory_order_acquire))
        return 0;
    uint64_t n = 0;
    rill_spinlock_lock(&tp->lock);
    for (int c = 0; c < tp->prog->nclasses; c++)
        n += tp->nwait_cls[c] + never_started(tp, c, tp->nwait_cls[c]);
    rill_spinlock_unlock(&tp->lock);
    return n;
}

static ptg_inst_t *table_find(ptg_tp_t *tp, int cls, const int64_t *key)
{
    const rill_ptg_class_t *c = &tp->prog->classes[cls];
    uint64_t h = key_hash(cls, key, c->nparams);
    ptg_inst_t *i = tp->buckets[h % tp->nbuckets];
    while (i && !(i->hash == h && i->cls == cls &&
                  !memcmp(i->key, key, sizeof(int64_t) * (size_t)c->nparams)))
        i = i->hnext;
    return i;
}

/* The tasks of a class of this rank that wait for task inputs and are neither in the table
 * nor in the done set: they never received an input. The first few are kept. */
typedef struct stuck_arg {
    ptg_tp_t *tp;
    int cls;
    uint64_t n;
    int kept;
    int64_t keys[4][RILL_PTG_MAX_VARS];
    int ninputs[4];
} stuck_arg_t;

static int stuck_visit(void *arg, const int64_t *v)
{
    stuck_arg_t *a = arg;
    ptg_tp_t *tp = a->tp;
    const rill_ptg_class_t *c = &tp->prog->classes[a->cls];
    if (c->rank(tp->globals, v) != tp->super.ctx->rank)
        return 0;
    int n = c->ninputs(tp->globals, v);
    int64_t key[RILL_PTG_MAX_VARS];
    for (int k = 0; k < c->nparams; k++)
        key[k] = v[c->param_var[k]];
    if (n == 0 || table_find(tp, a->cls, key) ||
        done_find(tp, a->cls, key, key_hash(a->cls, key, c->nparams)))
        return 0;
    if (a->kept < 4) {
        memcpy(a->keys[a->kept], key, sizeof(key));
        a->ninputs[a->kept++] = n;
    }
    a->n++;
    return 0;
}

/* The run cannot go on: nstuck tasks of this rank wait for inputs that no task will send
 * (a cycle, an input from a task that never runs). Fail it naming some of them: those in
 * the table with the inputs they still wait for, and those that never received one where
 * they can be told apart from the tasks that ran (all of a class's candidates never did).
 * Main thread, locally idle. */
static void ptg_fail_stuck(ptg_tp_t *tp, uint64_t nstuck)
{
    char names[200];
    size_t o = 0;
    int shown = 0;
    names[0] = '\0';
    rill_spinlock_lock(&tp->lock);
    for (size_t b = 0; b < tp->nbuckets && shown < 4; b++)
        for (ptg_inst_t *i = tp->buckets[b]; i && shown < 4; i = i->hnext, shown++) {
            char t[96];
            ptg_task_name(t, sizeof(t), &tp->prog->classes[i->cls], i->key);
            if (o < sizeof(names))
                o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s waits for %d input(s)",
                                      shown ? ", " : "", t, i->remaining);
        }
    rill_spinlock_unlock(&tp->lock);
    for (int c = 0; c < tp->prog->nclasses; c++) {
        uint64_t never = never_started(tp, c, tp->nwait_cls[c]);
        if (!never)
            continue;
        stuck_arg_t a = { .tp = tp, .cls = c };
        tp->prog->classes[c].enumerate(tp->globals, stuck_visit, &a);
        if (a.n == never) /* all of them never received an input: they can be named */
            for (int k = 0; k < a.kept && shown < 4; k++, shown++) {
                char t[96];
                ptg_task_name(t, sizeof(t), &tp->prog->classes[c], a.keys[k]);
                if (o < sizeof(names))
                    o +=
                        (size_t)snprintf(names + o, sizeof(names) - o, "%s%s waits for %d input(s)",
                                         shown ? ", " : "", t, a.ninputs[k]);
            }
        else if (o < sizeof(names)) {
            o += (size_t)snprintf(names + o, sizeof(names) - o,
                                  "%s%llu task(s) of %s never received an input", shown ? ", " : "",
                                  (unsigned long long)never, tp->prog->classes[c].name);
            shown++;
        }
    }
    rill_taskpool_fail(&tp->super, RILL_ERR_INVALID_ARG,
                       "PTG %s: %llu task(s) of this rank wait for inputs that no task will send "
                       "(a cycle of dependencies, or an input from a task that never runs): %s",
                       tp->prog->name, (unsigned long long)nstuck, names);
}

/* A failed run, once no activation can come any more: the instances still waiting for
 * inputs never run; drop them (and the tiles they hold) so the taskpool ends. Main thread. */
static void ptg_purge(ptg_tp_t *tp)
{
    rill_spinlock_lock(&tp->lock);
    ptg_inst_t *all = NULL;
    for (size_t b = 0; b < tp->nbuckets; b++)
        while (tp->buckets[b]) {
            ptg_inst_t *i = tp->buckets[b];
            tp->buckets[b] = i->hnext;
            i->hnext = all;
            all = i;
        }
    atomic_store_explicit(&tp->nwaiting, 0, memory_order_relaxed);
    for (int c = 0; c < tp->prog->nclasses; c++)
        tp->nwait_cls[c] = 0;
    /* writers held at gates are among them: a send that ends later lets nobody go */
    for (ptg_gate_t *g = tp->gates; g; g = g->next)
        g->n = 0;
    rill_spinlock_unlock(&tp->lock);
    while (all) {
        ptg_inst_t *i = all;
        all = i->hnext;
        for (int f = 0; f < tp->prog->classes[i->cls].nflows; f++)
            ptg_buf_unref(i->owned[f]);
        rill_mempool_free(&inst_pool, i);
        rill_taskpool_pending_sub(&tp->super, 1);
    }
}

/*
 * Termination on several ranks (Mattern's four counters). A rank does not know what it
 * will receive, so the creation hold is dropped only once: every rank is idle (nothing
 * but the hold and instances waiting for inputs pending: no task, no activation being
 * fetched) when it joins a wave, and two consecutive waves (allreduce sums of every rank's
 * sent and received activations) find the same totals with sent == received. Then the
 * receives counted by the first wave equal the sends counted by the second, so no
 * activation was in flight and no rank was active at the end of the first wave: nothing
 * can make a task any more. Every rank sees the same sums, so all take the same number of
 * waves (the collectives match). While a wave's allreduce is under way the main thread
 * keeps running tasks (the comm waiter). Each wave also sums the tasks that wait for
 * inputs (ptg_stuck): at the end, any means they wait forever, and every rank fails (each
 * naming its own). And it sums a 16-bit tag of the taskpool (its id and program) and the
 * tag's square: the ranks wait for the same taskpool only when n x (sum of squares) =
 * (sum)^2 (Cauchy-Schwarz: equality iff every rank's tag is the same); else their waves
 * count different taskpools' messages, which would never balance, and every rank fails.
 */
static rill_status_t ptg_close(rill_taskpool_t *super)
{
    ptg_tp_t *tp = (ptg_tp_t *)super;
    rill_context_t *ctx = super->ctx;
    uint64_t stuck_all;
    if (ctx->nranks > 1) {
        rill_worker_t *w = rill_worker_self();
        uint32_t x = tp->prog_id ^ (super->id * 0x9e3779b1u);
        const uint64_t tag = (x ^ x >> 16) & 0xffffu;
        for (int round = 0;; round++) {
            uint64_t c[2][5];
            for (int wave = 0; wave < 2; wave++) {
                rill_context_wait(w, locally_idle, tp, "PTG: this rank's tasks (termination)",
                                  super);
                c[wave][0] = atomic_load(&tp->sent);
                c[wave][1] = atomic_load(&tp->received);
                c[wave][2] = ptg_stuck(tp);
                c[wave][3] = tag;
                c[wave][4] = tag * tag;
                rill_status_t s =
                    rill_context_allreduce_u64(ctx, c[wave], c[wave], 5, RILL_COMM_SUM);
                if (s == RILL_SUCCESS &&
                    (uint64_t)ctx->nranks * c[wave][4] != c[wave][3] * c[wave][3])
                    s = RILL_ERR_MISMATCH;
                if (s != RILL_SUCCESS) {
                    if (s == RILL_ERR_MISMATCH)
                        rill_taskpool_fail(super, s,
                                           "PTG %s: the ranks wait for different taskpools "
                                           "(this rank for taskpool %u): every rank must create "
                                           "its PTG taskpools, and wait for them, in the same "
                                           "order",
                                           tp->prog->name, super->id);
                    else
                        rill_taskpool_fail(super, s, "PTG termination: the allreduce failed");
                    ptg_purge(tp);
                    rill_taskpool_pending_sub(super, 1);
                    return s;
                }
            }
            RILL_VERBOSE(RILL_LOG_RUNTIME, 2,
                         "PTG taskpool %u: termination round %d: sent %llu/%llu, received "
                         "%llu/%llu",
                         super->id, round, (unsigned long long)c[0][0], (unsigned long long)c[1][0],
                         (unsigned long long)c[0][1], (unsigned long long)c[1][1]);
            if (c[0][0] == c[0][1] && c[1][0] == c[1][1] && c[0][0] == c[1][0]) {
                stuck_all = c[1][2];
                break;
            }
        }
    } else {
        rill_context_wait(rill_worker_self(), locally_idle, tp, "PTG: this rank's tasks", super);
        stuck_all = ptg_stuck(tp);
    }
    if (stuck_all && !atomic_load_explicit(&super->error, memory_order_acquire)) {
        uint64_t mine = ptg_stuck(tp);
        if (mine)
            ptg_fail_stuck(tp, mine);
        else
            rill_taskpool_fail(super, RILL_ERR_INVALID_ARG,
                               "PTG %s: %llu task(s) of other ranks wait for inputs that no task "
                               "will send (their ranks name them): the run cannot end",
                               tp->prog->name, (unsigned long long)stuck_all);
    }
    if (atomic_load_explicit(&super->error, memory_order_acquire))
        ptg_purge(tp);
    rill_taskpool_pending_sub(super, 1); /* the creation hold */
    return RILL_SUCCESS;
}

static void ptg_describe(rill_taskpool_t *super, FILE *out)
{
    ptg_tp_t *tp = (ptg_tp_t *)super;
    rill_spinlock_lock(&tp->lock);
    fprintf(out,
            "  PTG taskpool %u (%s): %llu tasks created, %llu completed, %zu waiting for "
            "inputs",
            super->id, tp->prog->name, (unsigned long long)atomic_load(&tp->created),
            (unsigned long long)atomic_load(&tp->completed), atomic_load(&tp->nwaiting));
    int shown = 0;
    for (size_t b = 0; b < tp->nbuckets && shown < 5; b++)
        for (ptg_inst_t *i = tp->buckets[b]; i && shown < 5; i = i->hnext, shown++) {
            const rill_ptg_class_t *c = &tp->prog->classes[i->cls];
            fprintf(out, "%s %s(", shown ? "," : ":", c->name);
            for (int k = 0; k < c->nparams; k++)
                fprintf(out, "%s%lld", k ? ", " : "", (long long)i->key[k]);
            fprintf(out, ") waits for %d input(s)", i->remaining);
        }
    fprintf(out, "\n");
    rill_spinlock_unlock(&tp->lock);
    ptg_remote_describe(tp, out);
}

/* The collection global k of the program (NULL when not set): a keyed collection, or the
 * collection behind a matrix. */
static rill_collection_t *global_collection(const rill_ptg_program_t *prog, const void *globals,
                                            int k)
{
    void *ptr;
    memcpy(&ptr, (const char *)globals + prog->collections[k].offset, sizeof(ptr));
    if (!ptr || prog->collections[k].keyed)
        return ptr;
    return rill_matrix_collection(ptr);
}

static void ptg_ended(rill_taskpool_t *super)
{
    ptg_tp_t *tp = (ptg_tp_t *)super;
    for (int k = 0; k < tp->prog->ncollections; k++) /* claimed at the creation */
        rill_collection_unuse(global_collection(tp->prog, tp->globals, k));
}

static void ptg_destroy(rill_taskpool_t *super)
{
    ptg_tp_t *tp = (ptg_tp_t *)super;
    ptg_remote_gone(tp);
    for (size_t b = 0; b < tp->nbuckets; b++)
        while (tp->buckets[b]) { /* only after a failed run: instances still waiting */
            ptg_inst_t *i = tp->buckets[b];
            tp->buckets[b] = i->hnext;
            for (int f = 0; f < tp->prog->classes[i->cls].nflows; f++) /* tiles it held */
                ptg_buf_unref(i->owned[f]);
            rill_mempool_free(&inst_pool, i);
        }
    while (tp->gates) { /* (a failed run's: their sends ended, the writers were dropped) */
        ptg_gate_t *g = tp->gates;
        tp->gates = g->next;
        free(g->held);
        free(g);
    }
    free(tp->buckets);
    free(tp->tcs);
    free(tp->nlocal);
    free(tp->nstarted);
    free(tp->dbuckets);
    while (tp->dblocks) {
        ptg_done_block_t *blk = tp->dblocks;
        tp->dblocks = blk->next;
        free(blk);
    }
    free(tp->nwait_cls);
    free((globals_head_t *)tp->globals - 1);
    free(tp);
}

static const rill_taskpool_ops_t ptg_taskpool_ops = {
    .name = "ptg",
    .close = ptg_close,
    .describe = ptg_describe,
    .ended = ptg_ended,
    .destroy = ptg_destroy,
};

rill_status_t rill_ptg_taskpool_create(rill_context_t *ctx, const rill_ptg_program_t *prog,
                                       const void *globals, rill_taskpool_t **tp_p)
{
    if (!ctx || !prog || !tp_p || (prog->globals_size && !globals))
        return rill_arg_null("rill_ptg_taskpool_create", !ctx    ? "the context"
                                                         : !prog ? "the program"
                                                         : !tp_p ? "tp_p"
                                                                 : "the globals");
    if (rill_worker_check_main("rill_ptg_taskpool_create", false) != RILL_SUCCESS)
        return RILL_ERR_BAD_STATE;
    if (ctx->nranks > 1 && !ptg_remote_ready()) {
        RILL_ERROR(RILL_LOG_RUNTIME, "PTG program %s: rill_init did not set up PTG's messages",
                   prog->name);
        return RILL_ERR_BAD_STATE;
    }
    for (int c = 0; c < prog->nclasses; c++)
        if (prog->classes[c].nvars > RILL_PTG_MAX_VARS ||
            prog->classes[c].nflows > RILL_PTG_MAX_FLOWS) {
            RILL_ERROR(RILL_LOG_RUNTIME,
                       "PTG class %s: %d variables and %d flows; at most %d "
                       "and %d",
                       prog->classes[c].name, prog->classes[c].nvars, prog->classes[c].nflows,
                       RILL_PTG_MAX_VARS, RILL_PTG_MAX_FLOWS);
            return RILL_ERR_INVALID_ARG;
        }
    for (int k = 0; k < prog->ncollections; k++)
        if (!global_collection(prog, globals, k)) {
            RILL_ERROR(RILL_LOG_RUNTIME,
                       "PTG program %s: the collection global %s is NULL: set it to a %s "
                       "before creating the taskpool",
                       prog->name, prog->collections[k].name,
                       prog->collections[k].keyed ? "keyed collection (rill_collection_create)"
                                                  : "matrix (rill_matrix_create)");
            return RILL_ERR_INVALID_ARG;
        }
    if (!inst_pool_ready) {
        rill_status_t s = rill_mempool_init(&inst_pool, sizeof(ptg_inst_t));
        if (s != RILL_SUCCESS)
            return s;
        inst_pool_ready = true;
    }
    ptg_tp_t *tp = calloc(1, sizeof(*tp));
    if (!tp)
        return RILL_ERR_NO_MEMORY;
    tp->prog = prog;
    tp->nbuckets = 4096;
    tp->buckets = calloc(tp->nbuckets, sizeof(*tp->buckets));
    tp->tcs = calloc((size_t)prog->nclasses, sizeof(*tp->tcs));
    size_t ncls = prog->nclasses ? (size_t)prog->nclasses : 1;
    tp->nlocal = calloc(ncls, sizeof(*tp->nlocal));
    tp->nstarted = calloc(ncls, sizeof(*tp->nstarted));
    tp->nwait_cls = calloc(ncls, sizeof(*tp->nwait_cls));
    /* the globals after a header naming the taskpool (rill_ptg_expr_error) */
    globals_head_t *head = malloc(sizeof(*head) + (prog->globals_size ? prog->globals_size : 1));
    if (!tp->buckets || !tp->tcs || !tp->nlocal || !tp->nstarted || !tp->nwait_cls || !head) {
        free(tp->buckets);
        free(tp->tcs);
        free(tp->nlocal);
        free(tp->nstarted);
        free(tp->nwait_cls);
        free(head);
        free(tp);
        return RILL_ERR_NO_MEMORY;
    }
    head->tp = tp;
    tp->globals = head + 1;
    if (prog->globals_size)
        memcpy(tp->globals, globals, prog->globals_size);
    for (int c = 0; c < prog->nclasses; c++)
        atomic_init(&tp->nstarted[c], 0);
    atomic_init(&tp->cancelled, false);
    rill_spinlock_init(&tp->lock);
    atomic_init(&tp->created, 0);
    atomic_init(&tp->completed, 0);
    for (int c = 0; c < prog->nclasses; c++) {
        rill_task_class_t *tc = &tp->tcs[c];
        tc->name = prog->classes[c].name;
        tc->nb_incarnations = 0;
        if (prog->classes[c].body_cuda) { /* tried first: the core picks the device */
            tc->incarnations[tc->nb_incarnations].type = RILL_BODY_CUDA;
            tc->incarnations[tc->nb_incarnations++].hook = ptg_hook_cuda;
        }
        if (prog->classes[c].body_cpu) {
            tc->incarnations[tc->nb_incarnations].type = RILL_BODY_CPU;
            tc->incarnations[tc->nb_incarnations++].hook = ptg_hook_cpu;
        }
        tc->complete = ptg_complete;
        tc->launched = ptg_launched;
        tc->flops = ptg_flops;
        tc->flows = ptg_flows;
    }
    tp->release_tc = (rill_task_class_t){ .name = "ptg-release",
                                          .nb_incarnations = 1,
                                          .incarnations = { { RILL_BODY_CPU, ptg_hook_none } },
                                          .complete = ptg_complete,
                                          .flows = ptg_flows };
    tp->chore_tc = (rill_task_class_t){ .name = "ptg-home",
                                        .nb_incarnations = 1,
                                        .incarnations = { { RILL_BODY_CPU, ptg_hook_none } },
                                        .complete = chore_complete,
                                        .flows = chore_flows };
    ptg_remote_classes(tp);
    atomic_init(&tp->sent, 0);
    atomic_init(&tp->received, 0);
    rill_taskpool_init(&tp->super, ctx, &ptg_taskpool_ops);
    tp->super.used = true;
    /* a class with URGENT: the GPUs keep their urgent streams for its urgent tasks (set
     * before any task exists) */
    for (int c = 0; c < prog->nclasses; c++)
        if (prog->classes[c].urgent)
            atomic_store_explicit(&tp->super.marks_urgent, true, memory_order_relaxed);
    /* its collections cannot be destroyed until the wait (ptg_ended) */
    for (int k = 0; k < prog->ncollections; k++)
        rill_collection_use(global_collection(prog, tp->globals, k), tp->super.id);
    /* live from now on: activations for it are taken; those that came early, now */
    ptg_remote_live(tp);
    /* the tasks that wait for no other task start now; every range is checked as it is
     * enumerated, and each task of this rank that waits for inputs has them from tasks in
     * their classes' ranges */
    rill_ptg_out_t out = { .tp = tp, .errors = ptg_expr_errors };
    start_arg_t a = { .tp = tp, .out = &out, .errors = ptg_expr_errors };
    for (a.cls = 0; a.cls < prog->nclasses; a.cls++) {
        int stopped = prog->classes[a.cls].enumerate(tp->globals, start_visit, &a);
        if (stopped && !a.failed && !a.local) /* its own ranges or expressions: reported */
            a.global = true;
        if (a.failed || a.local || a.global)
            break;
    }
    if (a.failed)
        rill_taskpool_fail(&tp->super, RILL_ERR_NO_MEMORY,
                           "out of memory starting PTG %s (%llu tasks created)", prog->name,
                           (unsigned long long)atomic_load(&tp->created));
    if (a.failed || a.global) {
        /* the creation fails, on every rank alike for an error of the ranges (every rank
         * enumerates them all): the tasks it started already run no body; the taskpool
         * ends (the termination with the other ranks) and goes */
        atomic_store(&tp->cancelled, true);
        rill_sched_push(ctx, rill_worker_self(), out.ready, out.nready);
        rill_taskpool_t *t = &tp->super;
        rill_status_t s = rill_taskpool_wait(t);
        rill_taskpool_destroy(&t);
        *tp_p = NULL;
        return s != RILL_SUCCESS ? s : RILL_ERR_INVALID_ARG;
    }
    rill_sched_push(ctx, rill_worker_self(), out.ready, out.nready);
    *tp_p = &tp->super;
    return RILL_SUCCESS;
}
