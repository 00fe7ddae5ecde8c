/* PTG taskpools (docs/ptg.md): the runtime side of the code rillcc generates. A task
 * instance exists only once it is touched: at start for the tasks with no input from other
 * tasks, else when its first input is delivered; it counts the inputs still to come and
 * is handed to the scheduler when the last one arrives. One rank for now. */
#include "rill/ptg.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "mempool.h"
#include "scheduler.h"

typedef struct ptg_inst {
    rill_task_t super; /* first: the core's view */
    rill_ptg_task_t t;
    int64_t key[RILL_PTG_MAX_VARS]; /* the parameters, in the class's list order */
    int cls;
    int remaining; /* inputs still to come (under the table's lock) */
    uint64_t hash;
    struct ptg_inst *hnext;
} ptg_inst_t;

typedef struct ptg_tp {
    rill_taskpool_t super;
    const rill_ptg_program_t *prog;
    void *globals;
    rill_task_class_t *tcs; /* the core's class of each PTG class */
    rill_spinlock_t lock;   /* the table of instances waiting for inputs */
    ptg_inst_t **buckets;
    size_t nbuckets, nwaiting;
    atomic_ullong created, completed;
} ptg_tp_t;

/* the instances of every PTG taskpool (created with the first one, freed by rill_fini) */
static rill_mempool_t inst_pool;
static bool inst_pool_ready;

void rill_ptg_fini(void)
{
    if (inst_pool_ready)
        rill_mempool_fini(&inst_pool);
    inst_pool_ready = false;
}

struct rill_ptg_out {
    ptg_tp_t *tp;
    rill_task_t *ready; /* instances made ready, pushed together */
    int nready;
};

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

static rill_hook_status_t ptg_hook_cpu(rill_worker_t *w, rill_task_t *task)
{
    (void)w;
    ptg_inst_t *i = (ptg_inst_t *)task;
    ptg_tp_t *tp = (ptg_tp_t *)task->tp;
    const rill_ptg_class_t *c = &tp->prog->classes[i->cls];
    rill_status_t s = c->body_cpu(&i->t);
    if (s == RILL_SUCCESS)
        return RILL_HOOK_DONE;
    char args[96];
    size_t o = 0;
    for (int k = 0; k < c->nparams && o < sizeof(args); k++)
        o += (size_t)snprintf(args + o, sizeof(args) - o, "%s%lld", k ? ", " : "",
                              (long long)i->key[k]);
    rill_taskpool_fail(task->tp, RILL_ERR_TASK, "PTG task %s(%s) failed: %s (%d)", c->name, args,
                       rill_status_string(s), s);
    return RILL_HOOK_ERROR;
}

/* A new instance of class cls with variables v (locals computed) and key (the parameters
 * in list order); its tile inputs set. */
static ptg_inst_t *inst_new(ptg_tp_t *tp, int cls, const int64_t *params, const int64_t *key)
{
    const rill_ptg_class_t *c = &tp->prog->classes[cls];
    ptg_inst_t *i = rill_mempool_alloc(&inst_pool);
    if (!i)
        return NULL;
    memset(&i->super, 0, sizeof(i->super));
    i->super.tc = &tp->tcs[cls];
    i->super.tp = &tp->super;
    i->super.device = -1;
    i->super.prio.priority = c->priority ? c->priority(tp->globals, params) : 0;
    i->cls = cls;
    i->remaining = 0;
    i->hash = 0;
    i->hnext = NULL;
    i->t.globals = tp->globals;
    memset(i->t.data, 0, sizeof(void *) * (size_t)c->nflows);
    memcpy(i->t.v, params, sizeof(int64_t) * (size_t)c->nvars);
    memcpy(i->key, key, sizeof(int64_t) * (size_t)c->nparams);
    c->data_inputs(tp->globals, &i->t);
    rill_taskpool_pending_add(&tp->super, 1);
    atomic_fetch_add_explicit(&tp->created, 1, memory_order_relaxed);
    return i;
}

void rill_ptg_deliver(rill_ptg_out_t *out, int cls, const int64_t *params, int flow, void *data)
{
    ptg_tp_t *tp = out->tp;
    const rill_ptg_class_t *c = &tp->prog->classes[cls];
    int64_t v[RILL_PTG_MAX_VARS] = { 0 };
    for (int k = 0; k < c->nparams; k++)
        v[c->param_var[k]] = params[k];
    if (!c->valid(tp->globals, v)) {
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
    uint64_t h = key_hash(cls, params, c->nparams);
    size_t b = h % tp->nbuckets;
    rill_spinlock_lock(&tp->lock);
    ptg_inst_t *i = tp->buckets[b], **pp = &tp->buckets[b];
    while (i && !(i->hash == h && i->cls == cls &&
                  !memcmp(i->key, params, sizeof(int64_t) * (size_t)c->nparams))) {
        pp = &i->hnext;
        i = i->hnext;
    }
    if (!i) {
        i = inst_new(tp, cls, v, params);
        if (!i) {
            rill_spinlock_unlock(&tp->lock);
            rill_taskpool_fail(&tp->super, RILL_ERR_NO_MEMORY, "out of memory (a PTG task)");
            return;
        }
        i->hash = h;
        i->remaining = c->ninputs(tp->globals, v);
        i->hnext = tp->buckets[b];
        tp->buckets[b] = i;
        pp = &tp->buckets[b];
        tp->nwaiting++;
    }
    if (data && flow >= 0 && flow < RILL_PTG_MAX_FLOWS)
        i->t.data[flow] = data;
    bool ready = --i->remaining == 0;
    if (ready) { /* no more inputs: out of the table */
        *pp = i->hnext;
        tp->nwaiting--;
    }
    rill_spinlock_unlock(&tp->lock);
    if (i->remaining < 0)
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

void rill_ptg_write_tile(rill_ptg_out_t *out, rill_matrix_t *A, int64_t i, int64_t j, void *data)
{
    double *tile = rill_matrix_tile_ptr(A, (int)i, (int)j);
    if (!tile || !data || tile == data)
        return;
    (void)out;
    size_t n = (size_t)rill_matrix_tile_rows(A, (int)i) * (size_t)rill_matrix_tile_cols(A, (int)j);
    memcpy(tile, data, n * sizeof(double));
}

/* The task ran: its outputs go to their successors (released when complete), the tiles. */
static void ptg_complete(rill_worker_t *w, rill_task_t *task, rill_hook_status_t status)
{
    (void)status; /* a failed task still releases its successors: the run ends, no hang */
    ptg_inst_t *i = (ptg_inst_t *)task;
    ptg_tp_t *tp = (ptg_tp_t *)task->tp;
    rill_ptg_out_t out = { .tp = tp };
    /* the body's writes happen before the successors' reads: rill_sched_push publishes
     * them (release), and the table's lock orders the deliveries */
    tp->prog->classes[i->cls].release(tp->globals, &i->t, &out);
    rill_sched_push(tp->super.ctx, w, out.ready, out.nready);
    atomic_fetch_add_explicit(&tp->completed, 1, memory_order_relaxed);
    rill_mempool_free(&inst_pool, i);
    rill_taskpool_pending_sub(&tp->super, 1);
}

static double ptg_flops(const rill_task_t *task)
{
    const ptg_inst_t *i = (const ptg_inst_t *)task;
    const ptg_tp_t *tp = (const ptg_tp_t *)task->tp;
    const rill_ptg_class_t *c = &tp->prog->classes[i->cls];
    return c->flops ? c->flops(tp->globals, i->t.v) : -1.0;
}

/* ------------------------------------------------------------ taskpool */

typedef struct start_arg {
    ptg_tp_t *tp;
    int cls;
    rill_ptg_out_t *out;
    bool failed;
} start_arg_t;

static void start_visit(void *arg, const int64_t *v)
{
    start_arg_t *a = arg;
    const rill_ptg_class_t *c = &a->tp->prog->classes[a->cls];
    if (a->failed || c->rank(a->tp->globals, v) != a->tp->super.ctx->rank ||
        c->ninputs(a->tp->globals, v) != 0)
        return;
    int64_t key[RILL_PTG_MAX_VARS];
    for (int k = 0; k < c->nparams; k++)
        key[k] = v[c->param_var[k]];
    ptg_inst_t *i = inst_new(a->tp, a->cls, v, key);
    if (!i) {
        a->failed = true;
        return;
    }
    i->super.next = a->out->ready;
    a->out->ready = &i->super;
    /* hand them over in batches: the workers start while the enumeration goes on */
    if (++a->out->nready == 256) {
        rill_sched_push(a->tp->super.ctx, rill_worker_self(), a->out->ready, a->out->nready);
        a->out->ready = NULL;
        a->out->nready = 0;
    }
}

static rill_status_t ptg_close(rill_taskpool_t *super)
{
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
            (unsigned long long)atomic_load(&tp->completed), tp->nwaiting);
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
}

static void ptg_ended(rill_taskpool_t *super)
{
    (void)super;
}

static void ptg_destroy(rill_taskpool_t *super)
{
    ptg_tp_t *tp = (ptg_tp_t *)super;
    for (size_t b = 0; b < tp->nbuckets; b++)
        while (tp->buckets[b]) { /* only after a failed run: instances still waiting */
            ptg_inst_t *i = tp->buckets[b];
            tp->buckets[b] = i->hnext;
            rill_mempool_free(&inst_pool, i);
        }
    free(tp->buckets);
    free(tp->tcs);
    free(tp->globals);
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
        return RILL_ERR_INVALID_ARG;
    if (ctx->nranks > 1) {
        RILL_ERROR(RILL_LOG_RUNTIME,
                   "PTG program %s: distributed PTG (%d ranks) is not built yet; run it on one "
                   "rank",
                   prog->name, ctx->nranks);
        return RILL_ERR_NOT_SUPPORTED;
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
    tp->globals = malloc(prog->globals_size ? prog->globals_size : 1);
    if (!tp->buckets || !tp->tcs || !tp->globals) {
        free(tp->buckets);
        free(tp->tcs);
        free(tp->globals);
        free(tp);
        return RILL_ERR_NO_MEMORY;
    }
    if (prog->globals_size)
        memcpy(tp->globals, globals, prog->globals_size);
    rill_spinlock_init(&tp->lock);
    atomic_init(&tp->created, 0);
    atomic_init(&tp->completed, 0);
    for (int c = 0; c < prog->nclasses; c++) {
        rill_task_class_t *tc = &tp->tcs[c];
        tc->name = prog->classes[c].name;
        tc->nb_incarnations = 1;
        tc->incarnations[0].type = RILL_DEVICE_CPU;
        tc->incarnations[0].hook = ptg_hook_cpu;
        tc->complete = ptg_complete;
        tc->flops = ptg_flops;
    }
    rill_taskpool_init(&tp->super, ctx, &ptg_taskpool_ops);
    tp->super.used = true;
    /* the tasks that wait for no other task start now */
    rill_ptg_out_t out = { .tp = tp };
    start_arg_t a = { .tp = tp, .out = &out };
    for (a.cls = 0; a.cls < prog->nclasses && !a.failed; a.cls++)
        prog->classes[a.cls].enumerate(tp->globals, start_visit, &a);
    if (a.failed)
        rill_taskpool_fail(&tp->super, RILL_ERR_NO_MEMORY, "out of memory starting PTG %s",
                           prog->name);
    rill_sched_push(ctx, rill_worker_self(), out.ready, out.nready);
    *tp_p = &tp->super;
    return RILL_SUCCESS;
}
