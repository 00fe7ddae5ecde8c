/* Dynamic task discovery: insert_task builds the graph from the order of accesses to
 * each datum; completion releases successors through lock-free successor lists. */
#include "dtd_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "remote_dep.h"
#include "scheduler.h"

/* Task size classes: header + args (+ values/scratch when they fit). */
static const size_t size_classes[] = { 256, 512, 1024, 2048 };
#define NB_SIZE_CLASSES 4
/* pending counts a DTD taskpool takes ahead for the tasks it makes (dtd_taskpool_t.credit) */
#define DTD_CREDIT 64

static struct {
    rill_mempool_t tasks[NB_SIZE_CLASSES];
    rill_mempool_t succs;
    atomic_ullong next_serial;
    bool ready;
    rill_context_t *ctx;
} dtd;

static void dtd_launched(rill_task_t *task, int dev, uint64_t launch);

static rill_param_t *param_window, *param_early;

RILL_LOG_COMPONENT(rill_log_dtd, "dtd");

static const rill_param_decl_t dtd_params[] = {
    { "dtd_gpu_early", RILL_PARAM_BOOL, RILL_PARAM_LEVEL_TUNER,
      "Receives of versions sent GPU to GPU reserve their landing buffer when inserted and "
      "announce it to the sender, which then puts the version as soon as it is produced (no "
      "request round trip); off: the landing is reserved when the version is ready",
      .v.b = true,
      /* the sender waits for the receiver's announcement */
      .flags = RILL_PARAM_SAME_ON_ALL_RANKS, .param = &param_early },
    { "dtd_window_size", RILL_PARAM_INT, RILL_PARAM_LEVEL_USER,
      "Most DTD tasks inserted and not yet completed; beyond it the inserting thread runs tasks "
      "until half of them completed",
      .v.i = { 8000, 1, 1 << 30 }, .param = &param_window },
};

rill_status_t rill_dtd_register_params(void)
{
    rill_status_t s = rill_log_register(&rill_log_dtd);
    rill_status_t d = dtd_dot_register_params();
    rill_status_t t =
        rill_params_register_table(dtd_params, sizeof(dtd_params) / sizeof(dtd_params[0]));
    return s != RILL_SUCCESS ? s : d != RILL_SUCCESS ? d : t;
}

rill_status_t rill_dtd_init(rill_context_t *ctx)
{
    rill_status_t s = dtd_dot_init(ctx->rank); /* first: it only opens its file */
    if (s != RILL_SUCCESS)
        return s;
    for (int i = 0; i < NB_SIZE_CLASSES; i++)
        if ((s = rill_mempool_init(&dtd.tasks[i], size_classes[i])) != RILL_SUCCESS)
            goto err;
    if ((s = rill_mempool_init(&dtd.succs, sizeof(dtd_succ_t))) != RILL_SUCCESS)
        goto err;
    atomic_init(&dtd.next_serial, 1);
    dtd.ctx = ctx;
    if ((s = dtd_seq_init(ctx)) != RILL_SUCCESS)
        goto err;
    dtd.ready = true;
    return RILL_SUCCESS;
err:
    RILL_ERROR(RILL_LOG_DTD, "cannot create the DTD task pools: %s", rill_status_string(s));
    return s;
}

rill_status_t rill_dtd_fini(void)
{
    if (!dtd.ready)
        return RILL_SUCCESS;
    rill_status_t status = dtd_dot_finish();
    dtd_seq_fini();
    for (int i = 0; i < NB_SIZE_CLASSES; i++)
        rill_mempool_fini(&dtd.tasks[i]);
    rill_mempool_fini(&dtd.succs);
    dtd.ready = false;
    return status;
}

/* ------------------------------------------------------------ classes */

static rill_hook_status_t dtd_hook_cpu(rill_worker_t *w, rill_task_t *task);
static rill_hook_status_t dtd_hook_cuda(rill_worker_t *w, rill_task_t *task);
static int dtd_flows(rill_task_t *task, rill_task_flow_t *flows, int max);
static void dtd_complete(rill_worker_t *w, rill_task_t *task, rill_hook_status_t status);

static const char *kind_name(int kind);
static rill_dtd_class_t recv_class, send_class; /* the pseudo-tasks that move versions */
static rill_dtd_class_t unrun_class; /* a task whose insertion failed: never runs its body */
static rill_dtd_class_t home_class;  /* at the end of a taskpool with GPUs: bring a datum home */

/* Traces: the task's insertion number, and its tiles as "MODE collection:key". */
static uint64_t dtd_trace_info(const rill_task_t *task, char *args, size_t len)
{
    const dtd_task_t *t = (const dtd_task_t *)task;
    size_t off = 0;
    for (int i = 0; i < t->nargs && off + 1 < len; i++) {
        const dtd_arg_t *a = &t->args[i];
        if (a->kind < RILL_DTD_INPUT)
            continue;
        int n = a->data->dc ? snprintf(args + off, len - off, "%s%s %u:%llu", off ? " " : "",
                                       kind_name(a->kind), a->data->dc->id,
                                       (unsigned long long)a->data->key)
                            : snprintf(args + off, len - off, "%s%s private", off ? " " : "",
                                       kind_name(a->kind));
        if (n < 0 || (size_t)n >= len - off) { /* whole tiles only (rill_trace_timeline
                                                * --critical reads them), then "..." */
            snprintf(args + off, len - off, "%s", len - off > 4 ? " ..." : "");
            break;
        }
        off += (size_t)n;
    }
    return atomic_load_explicit(&t->serial, memory_order_relaxed);
}

/* The transfer state of a send or receive task (its second argument). */
static inline rill_rdep_t *xfer_of(const dtd_task_t *t)
{
    return t->args[1].ptr;
}

rill_status_t rill_dtd_class_create(rill_context_t *ctx, const char *name,
                                    rill_dtd_body_fn cpu_body, rill_dtd_class_t **cls_p)
{
    if (!ctx || !name || !cls_p) {
        RILL_ERROR(RILL_LOG_DTD, "rill_dtd_class_create: ctx, name and cls_p must all be given");
        return RILL_ERR_INVALID_ARG;
    }
    rill_dtd_class_t *cls = calloc(1, sizeof(*cls));
    if (!cls)
        return RILL_ERR_NO_MEMORY;
    snprintf(cls->name, sizeof(cls->name), "%s", name);
    cls->name_hash = 1469598103934665603ull; /* FNV-1a */
    for (const char *c = cls->name; *c; c++)
        cls->name_hash = (cls->name_hash ^ (uint8_t)*c) * 1099511628211ull;
    cls->cpu_body = cpu_body;
    cls->tc.name = cls->name;
    if (cpu_body) {
        cls->tc.nb_incarnations = 1;
        cls->tc.incarnations[0].type = RILL_BODY_CPU;
        cls->tc.incarnations[0].hook = dtd_hook_cpu;
    }
    cls->tc.complete = dtd_complete;
    cls->tc.trace_info = dtd_trace_info;
    cls->tc.flows = dtd_flows;
    cls->tc.launched = dtd_launched;
    *cls_p = cls;
    return RILL_SUCCESS;
}

rill_status_t rill_dtd_class_add_body(rill_dtd_class_t *cls, rill_body_type_t type,
                                      rill_dtd_body_fn body)
{
    if (!cls || !body || (type != RILL_BODY_CPU && type != RILL_BODY_CUDA)) {
        RILL_ERROR(RILL_LOG_DTD, "rill_dtd_class_add_body: needs a class, a body and a type "
                                 "(RILL_BODY_CPU or RILL_BODY_CUDA)");
        return RILL_ERR_INVALID_ARG;
    }
    rill_device_type_t dt = type;
    for (int i = 0; i < cls->tc.nb_incarnations; i++)
        if (cls->tc.incarnations[i].type == dt) {
            RILL_ERROR(RILL_LOG_DTD, "rill_dtd_class_add_body: class '%s' already has a %s body",
                       cls->name, rill_device_type_name(dt));
            return RILL_ERR_INVALID_ARG;
        }
    if (cls->users) {
        RILL_ERROR(RILL_LOG_DTD,
                   "rill_dtd_class_add_body: class '%s' has tasks in taskpool %u; "
                   "add bodies before inserting tasks",
                   cls->name, cls->user_tp - 1);
        return RILL_ERR_BUSY;
    }
    int i = cls->tc.nb_incarnations++;
    cls->tc.incarnations[i].type = dt;
    cls->tc.incarnations[i].hook = type == RILL_BODY_CPU ? dtd_hook_cpu : dtd_hook_cuda;
    if (type == RILL_BODY_CPU)
        cls->cpu_body = body;
    else
        cls->cuda_body = body;
    return RILL_SUCCESS;
}

static double dtd_flops(const rill_task_t *task)
{
    const dtd_task_t *t = (const dtd_task_t *)task;
    return t->cls->flops((rill_task_t *)task);
}

rill_status_t rill_dtd_class_set_status_handler(rill_dtd_class_t *cls, rill_dtd_status_fn fn)
{
    if (!cls) {
        RILL_ERROR(RILL_LOG_DTD, "rill_dtd_class_set_status_handler: no class given");
        return RILL_ERR_INVALID_ARG;
    }
    cls->tc.status_word = fn; /* the same signature: the task is the DTD task */
    return RILL_SUCCESS;
}

rill_status_t rill_dtd_class_set_flops(rill_dtd_class_t *cls, rill_dtd_flops_fn flops)
{
    if (!cls) {
        RILL_ERROR(RILL_LOG_DTD, "rill_dtd_class_set_flops: no class given");
        return RILL_ERR_INVALID_ARG;
    }
    cls->flops = flops;
    cls->tc.flops = flops ? dtd_flops : NULL;
    return RILL_SUCCESS;
}

rill_status_t rill_dtd_class_destroy(rill_dtd_class_t **cls_p)
{
    if (!cls_p || !*cls_p)
        return rill_arg_null("rill_dtd_class_destroy", cls_p ? "*cls_p (the class)" : "cls_p");
    if (rill_worker_check_main("rill_dtd_class_destroy", true) != RILL_SUCCESS)
        return RILL_ERR_BAD_STATE;
    if ((*cls_p)->users) {
        RILL_ERROR(RILL_LOG_DTD,
                   "rill_dtd_class_destroy: class '%s' has tasks in taskpool %u, which was not "
                   "waited for; call rill_taskpool_wait on it first",
                   (*cls_p)->name, (*cls_p)->user_tp - 1);
        return RILL_ERR_BUSY;
    }
    free(*cls_p);
    *cls_p = NULL;
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ tasks */

static inline bool ref_alive(dtd_ref_t r)
{
    /* acquire pairs with the release store of 0 in task_free: if we still read the
     * serial we recorded, the task's successor list is either open or CLOSED, never
     * reused (only this thread reuses task memory) */
    return r.task && atomic_load_explicit(&r.task->serial, memory_order_acquire) == r.serial;
}

/* Make succ depend on pred unless pred completed already. Main thread. */
static rill_status_t add_edge(dtd_ref_t pred, dtd_task_t *succ)
{
    /* the dependency, done yet or not; a task that reads and writes one datum is not its own
     * predecessor, but a done predecessor's memory may be succ's own (by serial, not
     * address: the edge to a task whose memory was reused went missing) */
    if (dtd_dot_on && pred.task) {
        uint64_t succ_serial = atomic_load_explicit(&succ->serial, memory_order_relaxed);
        if (pred.serial != succ_serial)
            dtd_dot_edge(pred.serial, succ_serial);
    }
    if (!ref_alive(pred) || pred.task == succ)
        return RILL_SUCCESS;
    dtd_succ_t *node = rill_mempool_alloc(&dtd.succs);
    if (!node)
        return RILL_ERR_NO_MEMORY;
    node->task = succ;
    /* the insertion guard (deps >= 1) keeps succ from running, so relaxed is enough */
    atomic_fetch_add_explicit(&succ->deps, 1, memory_order_relaxed);
    dtd_succ_t *head = atomic_load_explicit(&pred.task->succs, memory_order_acquire);
    for (;;) {
        if (head == DTD_CLOSED) { /* pred completed meanwhile: nothing to wait for */
            atomic_fetch_sub_explicit(&succ->deps, 1, memory_order_relaxed);
            rill_mempool_free(&dtd.succs, node);
            return RILL_SUCCESS;
        }
        node->next = head;
        /* release publishes node; pairs with the acq_rel exchange in dtd_complete */
        if (atomic_compare_exchange_weak_explicit(&pred.task->succs, &head, node,
                                                  memory_order_release, memory_order_acquire))
            return RILL_SUCCESS;
    }
}

static void task_free(dtd_task_t *t)
{
    free(t->extra);
    t->extra = NULL;
    atomic_store_explicit(&t->serial, 0, memory_order_release);
    rill_mempool_free(&dtd.tasks[t->size_class], t);
}

static rill_hook_status_t run_body(rill_task_t *task, rill_dtd_body_fn body, const char *where)
{
    dtd_task_t *t = (dtd_task_t *)task;
    rill_status_t s = body(task);
    if (s == RILL_SUCCESS)
        return RILL_HOOK_DONE;
    rill_taskpool_fail(task->tp, RILL_ERR_TASK, "task '%s' (#%llu)%s failed: %s (%d)", t->cls->name,
                       (unsigned long long)atomic_load(&t->serial), where, rill_status_string(s),
                       s);
    return RILL_HOOK_ERROR;
}

static rill_hook_status_t dtd_hook_cpu(rill_worker_t *w, rill_task_t *task)
{
    (void)w;
    return run_body(task, ((dtd_task_t *)task)->cls->cpu_body, "");
}

/* The GPU manager calls it with the tiles' device addresses in place: the body enqueues */
static rill_hook_status_t dtd_hook_cuda(rill_worker_t *w, rill_task_t *task)
{
    (void)w;
    char where[80];
    snprintf(where, sizeof(where), " on device %d (%s)", task->device,
             rill_device_get(task->device) ? rill_device_get(task->device)->name : "?");
    return run_body(task, ((dtd_task_t *)task)->cls->cuda_body, where);
}

static int dtd_flows(rill_task_t *task, rill_task_flow_t *flows, int max)
{
    dtd_task_t *t = (dtd_task_t *)task;
    int n = 0;
    for (int i = 0; i < t->nargs && n < max; i++) {
        int k = t->args[i].kind;
        if (k < RILL_DTD_INPUT)
            continue;
        flows[n].data = t->args[i].data;
        flows[n].ptr = &t->args[i].ptr;
        flows[n].mode = (uint8_t)((k != RILL_DTD_OUTPUT ? RILL_FLOW_READ : 0) |
                                  (k != RILL_DTD_INPUT ? RILL_FLOW_WRITE : 0));
        n++;
    }
    return n;
}

static void dtd_complete(rill_worker_t *w, rill_task_t *task, rill_hook_status_t status)
{
    (void)status; /* a failed task still releases its successors: the run ends, no hang */
    dtd_task_t *t = (dtd_task_t *)task;
    dtd_taskpool_t *tp = (dtd_taskpool_t *)task->tp;
    /* the copy on the device that ran it now holds the new versions (a task that did not
     * run its body still counts as a write: its successors are ordered after it) */
    int dev = task->device > 0 ? task->device : 0;
    for (int i = 0; i < t->nargs; i++)
        if (t->args[i].kind == RILL_DTD_OUTPUT || t->args[i].kind == RILL_DTD_INOUT)
            rill_data_wrote(t->args[i].data, dev);

    /* close the list: acq_rel pairs with the release CAS of add_edge (we see every node)
     * and orders this task's writes before its successors' reads */
    dtd_succ_t *node = atomic_exchange_explicit(&t->succs, DTD_CLOSED, memory_order_acq_rel);
    rill_task_t *ready = NULL;
    int nready = 0;
    /* traces: the tasks a receive releases end the local flow its hook started */
    uint64_t flow = rill_trace_on() && t->cls == &recv_class && t->super.flow_in
                        ? t->super.flow_in ^ 1 /* 0: the hook did not run (insertion failed) */
                        : 0;
    if (flow && !node) /* no reader (a datum brought home at the end): the flow ends here */
        rill_trace_flow('f', flow, rill_time_ns());
    while (node) {
        dtd_succ_t *next = node->next;
        dtd_task_t *s = node->task;
        if (flow) /* s cannot start before our decrement below: no race */
            s->super.flow_in = flow;
        int left = s->cls == &recv_class
                       ? rill_rdep_recv_dep_done(xfer_of(s))
                       : atomic_fetch_sub_explicit(&s->deps, 1, memory_order_acq_rel) - 1;
        if (left == 0) {
            s->super.next = ready;
            ready = &s->super;
            nready++;
        }
        rill_mempool_free(&dtd.succs, node);
        node = next;
    }
    rill_sched_push(tp->super.ctx, w, ready, nready);
    atomic_fetch_add_explicit(&tp->done, 1, memory_order_relaxed);
    task_free(t);
    rill_taskpool_pending_sub(&tp->super, 1);
}

/* ------------------------------------------------------------ trackers */

/* What a datum's slot holds when the taskpool has it; 0 (the id wrapped): the map only. */
static inline uint32_t slot_mark(const dtd_taskpool_t *tp)
{
    return tp->super.id + 1;
}

/* The taskpool's tracker of the datum, NULL when it has none: in the datum's front-end slot
 * when the taskpool holds it, else in the taskpool's map. With one taskpool at a time every
 * tracker is in its datum's slot and the map stays empty: a lookup in a map of every datum
 * the graph touched was a third of the insertion time (bench_dtd, 1.5 million tiles). */
static dtd_tracker_t *tracker_find(dtd_taskpool_t *tp, rill_data_t *data)
{
    uint32_t mark = slot_mark(tp);
    if (mark && data->fe_mark == mark)
        return data->fe_record;
    return tp->trackers.count ? rill_hmap_get(&tp->trackers, (uint64_t)(uintptr_t)data) : NULL;
}

static dtd_tracker_t *tracker_get(dtd_taskpool_t *tp, rill_data_t *data)
{
    dtd_tracker_t *tr = tracker_find(tp, data);
    if (tr)
        return tr;
    dtd_slab_t *slab = tp->slabs;
    if (!slab || slab->used == DTD_SLAB) {
        slab = calloc(1, sizeof(*slab) + DTD_SLAB * sizeof(dtd_tracker_t));
        if (!slab)
            return NULL;
        slab->next = tp->slabs;
        tp->slabs = slab;
    }
    tr = &slab->tr[slab->used++]; /* (zeroed: the slab is calloc'd, a slot is used once) */
    tr->data = data;
    tr->owner = data->home_rank;
    tr->have_local = data->home_rank == tp->rank; /* the home rank holds version 0 */
    tr->readers = tr->readers_in;
    tr->cap = DTD_READERS_IN;
    if (tp->distributed) {
        tr->sent = tp->nranks <= 64 ? &tr->sent_in
                                    : calloc((size_t)(tp->nranks + 63) / 64, sizeof(uint64_t));
        if (!tr->sent)
            goto err_free;
    }
    if (tp->norder == tp->cap_order) {
        size_t cap = tp->cap_order ? 2 * tp->cap_order : 256;
        dtd_tracker_t **order = realloc(tp->order, cap * sizeof(*order));
        if (!order)
            goto err_free;
        tp->order = order;
        tp->cap_order = cap;
    }
    if (data->fe_mark == 0 && slot_mark(tp)) { /* a free slot (dtd_ended frees it) */
        data->fe_mark = slot_mark(tp);
        data->fe_record = tr;
    } else if (rill_hmap_put(&tp->trackers, (uint64_t)(uintptr_t)data, tr) != RILL_SUCCESS) {
        goto err_free;
    }
    tp->order[tp->norder++] = tr;
    rill_data_use(data, tp->super.id); /* until the taskpool ends (dtd_ended) */
    return tr;
err_free: /* (the slot is the slab's last used one: given back, zeroed again) */
    if (tr->sent != &tr->sent_in)
        free(tr->sent);
    memset(tr, 0, sizeof(*tr));
    slab->used--;
    return NULL;
}

/* This rank's buffer for the datum: the host copy (home storage, or one the core allocates
 * on first use and frees when no taskpool uses the datum any more). */
static void *tracker_local_ptr(dtd_tracker_t *tr)
{
    rill_data_copy_t *c = rill_data_host_ensure(tr->data);
    return c ? c->ptr : NULL;
}

/* What a tracker holds outside its slab. */
static void tracker_free(dtd_tracker_t *tr)
{
    if (tr->readers != tr->readers_in)
        free(tr->readers);
    if (tr->sent != &tr->sent_in)
        free(tr->sent);
}

static rill_status_t tracker_add_reader(dtd_tracker_t *tr, dtd_ref_t r)
{
    if (tr->nreaders == tr->cap) {
        /* drop readers that completed before growing */
        int n = 0;
        for (int i = 0; i < tr->nreaders; i++)
            if (ref_alive(tr->readers[i]))
                tr->readers[n++] = tr->readers[i];
        tr->nreaders = n;
    }
    if (tr->nreaders == tr->cap) {
        int cap = 2 * tr->cap;
        bool in = tr->readers == tr->readers_in;
        dtd_ref_t *readers = realloc(in ? NULL : tr->readers, (size_t)cap * sizeof(*readers));
        if (!readers)
            return RILL_ERR_NO_MEMORY;
        if (in)
            memcpy(readers, tr->readers_in, sizeof(tr->readers_in));
        tr->readers = readers;
        tr->cap = cap;
    }
    tr->readers[tr->nreaders++] = r;
    return RILL_SUCCESS;
}

/* Record local task r's access to tr's datum and add the edges it implies:
 * read after write (reader after the last writer), write after read (writer after
 * every reader since the last write), write after write (writer after the last
 * writer when nobody read in between). */
static rill_status_t tracker_access(dtd_tracker_t *tr, dtd_ref_t r, int mode)
{
    rill_status_t s;
    if (mode == RILL_DTD_INPUT) {
        if ((s = add_edge(tr->last_writer, r.task)) != RILL_SUCCESS)
            return s;
        return tracker_add_reader(tr, r);
    }
    if (tr->nreaders > 0) {
        for (int i = 0; i < tr->nreaders; i++)
            if ((s = add_edge(tr->readers[i], r.task)) != RILL_SUCCESS)
                return s;
        tr->nreaders = 0;
    } else if ((s = add_edge(tr->last_writer, r.task)) != RILL_SUCCESS) {
        return s;
    }
    tr->last_writer = r;
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ task creation */

static inline size_t align_up(size_t x, size_t a)
{
    return (x + a - 1) & ~(a - 1);
}

/* Tasks made here and not completed, read by the main thread (the reading kept: the window
 * is full only if it was at the last reading). */
static long long dtd_inflight(dtd_taskpool_t *tp)
{
    tp->done_seen = atomic_load_explicit(&tp->done, memory_order_relaxed);
    return (long long)(atomic_load_explicit(&tp->made, memory_order_relaxed) - tp->done_seen);
}

/* Whether dtd_window_size tasks made here are not completed: the shared count is read only
 * when the last reading says so (done only grows: made - done_seen is never below the count).
 * Main thread. */
static bool window_full(dtd_taskpool_t *tp)
{
    uint64_t made = atomic_load_explicit(&tp->made, memory_order_relaxed);
    return (long long)(made - tp->done_seen) >= tp->window && dtd_inflight(tp) >= tp->window;
}

/* The same for any thread (the watchdog's report); done first, so at most made. */
static long long inflight_seen(dtd_taskpool_t *tp)
{
    uint64_t done = atomic_load_explicit(&tp->done, memory_order_acquire);
    uint64_t made = atomic_load_explicit(&tp->made, memory_order_acquire);
    return made > done ? (long long)(made - done) : 0;
}

/* A task of cls with nargs arguments (values copied from values[i]), holding its
 * insertion guard; counted in the taskpool. Main thread. */
static dtd_task_t *task_create(dtd_taskpool_t *tp, rill_dtd_class_t *cls, int32_t priority,
                               const dtd_arg_t *args, const void *const *values, int nargs)
{
    size_t extra = 0;
    for (int i = 0; i < nargs; i++)
        if (args[i].kind == RILL_DTD_VALUE || args[i].kind == RILL_DTD_SCRATCH)
            extra = align_up(extra, 16) + args[i].size;
    /* header + args, values and scratch inline when they fit */
    size_t head = sizeof(dtd_task_t) + (size_t)nargs * sizeof(dtd_arg_t);
    size_t inline_need = align_up(head, 16) + extra;
    int sc = 0;
    while (sc < NB_SIZE_CLASSES - 1 && size_classes[sc] < inline_need)
        sc++;
    bool inline_extra = size_classes[sc] >= inline_need;
    dtd_task_t *t = rill_mempool_alloc(&dtd.tasks[sc]);
    if (!t)
        return NULL;
    char *store;
    t->extra = NULL;
    if (inline_extra) {
        store = (char *)t + align_up(head, 16);
    } else {
        t->extra = malloc(extra);
        if (!t->extra) {
            atomic_store(&t->serial, 0);
            rill_mempool_free(&dtd.tasks[sc], t);
            return NULL;
        }
        store = t->extra;
    }
    t->super.next = NULL;
    t->super.tc = &cls->tc;
    t->super.tp = &tp->super;
    t->super.prio.priority = priority;
    t->super.worker = -1;
    t->super.flow_in = 0;
    t->super.device = -1;
    t->super.urgent = false;
    t->super.est_ns = 0;
    t->super.dev_exec = NULL;
    t->cls = cls;
    t->nargs = nargs;
    t->size_class = sc;
    /* (main thread only: no read-modify-write needed) */
    uint64_t serial = atomic_load_explicit(&dtd.next_serial, memory_order_relaxed);
    atomic_store_explicit(&dtd.next_serial, serial + 1, memory_order_relaxed);
    atomic_store_explicit(&t->serial, serial, memory_order_relaxed);
    atomic_store_explicit(&t->deps, 1, memory_order_relaxed); /* the insertion guard */
    atomic_store_explicit(&t->succs, NULL, memory_order_relaxed);
    size_t off = 0;
    for (int i = 0; i < nargs; i++) {
        t->args[i] = args[i];
        if (args[i].kind == RILL_DTD_VALUE || args[i].kind == RILL_DTD_SCRATCH) {
            off = align_up(off, 16);
            t->args[i].ptr = store + off;
            if (args[i].kind == RILL_DTD_VALUE && args[i].size)
                memcpy(store + off, values[i], args[i].size);
            off += args[i].size;
        }
    }
    if (tp->credit == 0) {
        rill_taskpool_pending_add(&tp->super, DTD_CREDIT);
        tp->credit = DTD_CREDIT;
    }
    tp->credit--; /* (the task's pending count, taken ahead) */
    atomic_store_explicit(&tp->made, atomic_load_explicit(&tp->made, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    if (dtd_dot_on)
        dtd_dot_task(serial, cls->name, tp->super.id);
    return t;
}

/* Drop the insertion guard: acq_rel pairs with the predecessors' decrements. */
static void task_release_guard(dtd_taskpool_t *tp, rill_worker_t *w, dtd_task_t *t)
{
    if (atomic_fetch_sub_explicit(&t->deps, 1, memory_order_acq_rel) == 1)
        rill_sched_push(tp->super.ctx, w, &t->super, 1);
}

static inline dtd_ref_t ref_of(dtd_task_t *t)
{
    dtd_ref_t r = { t, t ? atomic_load_explicit(&t->serial, memory_order_relaxed) : 0 };
    return r;
}

/* ------------------------------------------------------------ moving versions between ranks */

/* Whether tasks of cls may run on a GPU: a CUDA body, GPUs in this process, and
 * runtime_device not choosing the CPU body of a class that has both. */
static bool class_may_gpu(const rill_context_t *ctx, const rill_dtd_class_t *cls)
{
    return cls->cuda_body && rill_device_count() > 1 && !(cls->cpu_body && ctx->device_choice == 1);
}

/* Whether the version tr holds now moves GPU to GPU between this rank and peer, for a
 * reader on the other side that may (gpu_reader) run on a GPU: its writer or that reader
 * may run on a GPU (versions that CPU tasks make for CPU tasks go host to host: through
 * GPU memory they would cross PCIe twice on each side, and the GPU managers would carry
 * every one of them), and the engine's conditions (rill_rdep_route). Decided when the
 * reader is inserted, from the history every rank keeps: the same answer on both ranks
 * (their classes have the same bodies). */
static bool xfer_route(rill_context_t *ctx, const dtd_tracker_t *tr, int peer, bool gpu_reader)
{
    return rill_rdep_route(ctx, tr->data, peer, tr->gpu_version || gpu_reader);
}

static bool send_needs_host(rill_task_t *task)
{
    return rill_rdep_send_needs_host(xfer_of((dtd_task_t *)task));
}

static bool recv_needs_host(rill_task_t *task)
{
    return rill_rdep_recv_needs_host(xfer_of((dtd_task_t *)task));
}

/* Manager thread, right after task's body was enqueued on GPU dev (launch number launch):
 * each send of a version it writes that goes GPU to GPU and waits for nothing but this task
 * can put behind the body on that GPU (rill_rdep_launched), so the chain producer kernel ->
 * copy -> semaphore runs with no host step. */
static void dtd_launched(rill_task_t *task, int dev, uint64_t launch)
{
    dtd_task_t *t = (dtd_task_t *)task;
    if (!((dtd_taskpool_t *)task->tp)->distributed || !rill_param_get_bool(param_early))
        return;
    /* the list cannot close before this task completes, which this thread reports later;
     * acquire: the successors' arguments, set before their edges were added */
    for (dtd_succ_t *n = atomic_load_explicit(&t->succs, memory_order_acquire);
         n && n != DTD_CLOSED; n = n->next) {
        dtd_task_t *s = n->task;
        /* a send's only edge comes from the version's writer: deps 1 (its insertion guard
         * dropped, acquire) means this task is all it waits for */
        /* a live send (one whose insertion failed runs unrun_class: it sends nothing) */
        if (s->super.tc == &send_class.tc &&
            atomic_load_explicit(&s->deps, memory_order_acquire) == 1)
            rill_rdep_launched(xfer_of(s), dev, launch);
    }
}

/* Receive: land the version in this rank's buffer (the engine). */
static rill_hook_status_t recv_hook(rill_worker_t *w, rill_task_t *task)
{
    (void)w;
    dtd_task_t *t = (dtd_task_t *)task;
    return rill_rdep_recv_run(xfer_of(t), t->args[0].ptr);
}

/* Send: tell the destination the version is ready (the engine). */
static rill_hook_status_t send_hook(rill_worker_t *w, rill_task_t *task)
{
    (void)w;
    dtd_task_t *t = (dtd_task_t *)task;
    return rill_rdep_send_run(xfer_of(t), t->args[0].ptr);
}

/* A task whose insertion failed (the taskpool was failed with the error): it completes in
 * its place in the graph, releasing its successors, without running its body on
 * arguments that were not all set up. */
static rill_hook_status_t unrun_hook(rill_worker_t *w, rill_task_t *task)
{
    (void)w;
    (void)task;
    return RILL_HOOK_ERROR;
}

/* The datum's host copy is current once this CPU task may run (the GPU holding the newest
 * version brought it home first): nothing left to do. */
static rill_hook_status_t home_hook(rill_worker_t *w, rill_task_t *task)
{
    (void)w;
    (void)task;
    return RILL_HOOK_DONE;
}

/* With GPUs: a reader on the host after the datum's last access, so the taskpool ends with
 * the newest version in home memory. It runs as soon as the last writer completed: the
 * transfer overlaps the rest of the taskpool (PaRSEC's "pushout"). */
static rill_status_t home_create(dtd_taskpool_t *tp, dtd_tracker_t *tr)
{
    if (!tracker_local_ptr(tr))
        return RILL_ERR_NO_MEMORY;
    dtd_arg_t arg = { .kind = RILL_DTD_INPUT,
                      .size = (uint32_t)tr->data->size,
                      .ptr = tracker_local_ptr(tr),
                      .data = tr->data };
    const void *values[1] = { NULL };
    dtd_task_t *t = task_create(tp, &home_class, 0, &arg, values, 1);
    if (!t)
        return RILL_ERR_NO_MEMORY;
    rill_status_t s = tracker_access(tr, ref_of(t), RILL_DTD_INPUT);
    if (s != RILL_SUCCESS)
        t->super.tc = &unrun_class.tc;
    task_release_guard(tp, rill_worker_self(), t);
    return s;
}

static void xfer_classes_init(void)
{
    static bool done;
    if (done)
        return;
    snprintf(recv_class.name, sizeof(recv_class.name), "recv");
    snprintf(send_class.name, sizeof(send_class.name), "send");
    snprintf(unrun_class.name, sizeof(unrun_class.name), "insertion-failed");
    snprintf(home_class.name, sizeof(home_class.name), "bring-home");
    rill_dtd_class_t *c[4] = { &recv_class, &send_class, &unrun_class, &home_class };
    for (int i = 0; i < 4; i++) {
        c[i]->tc.name = c[i]->name;
        c[i]->tc.nb_incarnations = 1;
        c[i]->tc.incarnations[0].type = RILL_BODY_CPU;
        c[i]->tc.complete = dtd_complete;
        c[i]->tc.trace_info = dtd_trace_info;
        c[i]->tc.flows = dtd_flows;
    }
    recv_class.tc.incarnations[0].hook = recv_hook;
    send_class.tc.incarnations[0].hook = send_hook;
    send_class.tc.needs_host = send_needs_host;
    recv_class.tc.needs_host = recv_needs_host;
    unrun_class.tc.incarnations[0].hook = unrun_hook;
    home_class.tc.incarnations[0].hook = home_hook;
    done = true;
}

/* Create the receive (as a local writer of this rank's buffer) or the send (as a local
 * reader) that moving one version needs. */
static rill_status_t xfer_create(dtd_taskpool_t *tp, dtd_tracker_t *tr, bool recv, int peer,
                                 int32_t priority, bool gpu)
{
    void *ptr = tracker_local_ptr(tr);
    if (!ptr)
        return RILL_ERR_NO_MEMORY;
    dtd_arg_t args[2] = {
        { .kind = recv ? RILL_DTD_INOUT : RILL_DTD_INPUT,
          .size = (uint32_t)tr->data->size,
          .ptr = ptr,
          .data = tr->data },
        { .kind = RILL_DTD_VALUE, .size = sizeof(rill_rdep_t) },
    };
    const rill_rdep_t zero = { 0 };
    const void *values[2] = { NULL, &zero };
    dtd_task_t *t = task_create(tp, recv ? &recv_class : &send_class, priority, args, values, 2);
    if (!t)
        return RILL_ERR_NO_MEMORY;
    /* (before its edges: a manager thread may look at a send from its producer's launch) */
    if (recv)
        rill_rdep_recv_init(xfer_of(t), &t->super, tr->data, peer, tr->version, gpu,
                            rill_param_get_bool(param_early), &t->deps);
    else
        rill_rdep_send_init(xfer_of(t), &t->super, tr->data, peer, tr->version, gpu);
    rill_status_t s = tracker_access(tr, ref_of(t), args[0].kind);
    if (dtd_dot_on)
        dtd_dot_remote(
            atomic_load_explicit(&t->serial, memory_order_relaxed),
            rill_rdep_flow_id(tp->super.id, tr->data, tr->version, recv ? tp->rank : peer), !recv,
            peer);
    if (recv && s == RILL_SUCCESS) {
        /* sent GPU to GPU: the receiver announces its landing (reserved ahead, or none) */
        rill_rdep_expect_t what;
        s = rill_rdep_recv_expect(xfer_of(t), &what);
        tr->have_local = true;
        tr->local_version = tr->version;
        if (gpu) /* it lands in GPU memory: bring it home at the end (dtd_close) */
            tr->gpu_written = true;
        if (gpu && s == RILL_SUCCESS)
            RILL_VERBOSE(RILL_LOG_DTD, 2,
                         "receive of datum (key %llu) version %u from rank %d, GPU to GPU: %s",
                         (unsigned long long)tr->data->key, tr->version, peer,
                         what == RILL_RDEP_RESERVED  ? "landing reserved ahead"
                         : what == RILL_RDEP_ARRIVED ? "the version is there already"
                                                     : "local tasks still use the datum");
    }
    if (s != RILL_SUCCESS) /* no activation to wait for, or no place in the graph */
        t->super.tc = &unrun_class.tc;
    task_release_guard(tp, rill_worker_self(), t);
    return s;
}

static inline bool sent_test_set(dtd_tracker_t *tr, int r)
{
    uint64_t bit = 1ull << (r % 64);
    bool was = tr->sent[r / 64] & bit;
    tr->sent[r / 64] |= bit;
    return was;
}

/* Before a task on rank exec reads the datum: move the latest version to exec if it is
 * not there (this rank sends it, or receives it, or only takes note). gpu_reader: that
 * task may run on a GPU (class_may_gpu; false when the datum goes home). */
static rill_status_t tracker_need_version(dtd_taskpool_t *tp, dtd_tracker_t *tr, int exec,
                                          int32_t priority, bool gpu_reader)
{
    int me = tp->rank, owner = tr->owner;
    if (owner == exec)
        return RILL_SUCCESS;
    if (exec == me && !(tr->have_local && tr->local_version == tr->version))
        return xfer_create(tp, tr, true, owner, priority,
                           xfer_route(tp->super.ctx, tr, owner, gpu_reader));
    if (owner == me && !sent_test_set(tr, exec))
        return xfer_create(tp, tr, false, exec, priority,
                           xfer_route(tp->super.ctx, tr, exec, gpu_reader));
    return RILL_SUCCESS;
}

/* After a task on rank exec wrote the datum: exec holds the new version (gpu: made by a
 * task that may run on a GPU). */
static void tracker_wrote(dtd_taskpool_t *tp, dtd_tracker_t *tr, int exec, bool gpu)
{
    tr->version++;
    tr->owner = exec;
    tr->gpu_version = gpu;
    if (tr->sent)
        memset(tr->sent, 0, (size_t)(tp->nranks + 63) / 64 * sizeof(uint64_t));
    if (exec == tp->rank) {
        tr->have_local = true;
        tr->local_version = tr->version;
    }
}

/* ------------------------------------------------------------ taskpools */

static rill_status_t dtd_close(rill_taskpool_t *super)
{
    dtd_taskpool_t *tp = (dtd_taskpool_t *)super;
    rill_status_t status = RILL_SUCCESS;
    tp->closed = true;
    if (tp->distributed) {
        /* bring every datum home (trackers in creation order: the same on every rank) */
        for (size_t i = 0; i < tp->norder && status == RILL_SUCCESS; i++) {
            dtd_tracker_t *tr = tp->order[i];
            if (!tr->discarded)
                status = tracker_need_version(tp, tr, tr->data->home_rank, 0, false);
        }
        /* every rank must have inserted the same sequence: each sends the others its
         * final checkpoint and waits for theirs (running tasks meanwhile: a peer blocked
         * in its window may need them), comparing every checkpoint as it comes; a
         * difference ends the job on every rank (dtd_seq.c) */
        rill_worker_t *w = rill_worker_self();
        if (status == RILL_SUCCESS && w) { /* (the wait runs on the main thread, a worker) */
            dtd_seq_announce(tp, true);
            rill_context_wait(w, dtd_seq_all_final, tp,
                              "the other ranks' insertion sequences (divergence check)", super);
        }
    }
    if (rill_device_count() > 1) /* GPUs may hold newest versions: bring them home */
        for (size_t i = 0; i < tp->norder && status == RILL_SUCCESS; i++)
            if (tp->order[i]->data->home_rank == tp->rank && tp->order[i]->gpu_written &&
                !tp->order[i]->discarded)
                status = home_create(tp, tp->order[i]);
    /* the insertion hold, and the pending counts taken ahead that no task used */
    long long credit = tp->credit;
    tp->credit = 0;
    rill_taskpool_pending_sub(super, 1 + credit);
    return status;
}

static void dtd_describe(rill_taskpool_t *super, FILE *out)
{
    dtd_taskpool_t *tp = (dtd_taskpool_t *)super;
    fprintf(out, "  DTD taskpool %u: %llu tasks inserted, %lld not completed, %zu data tracked\n",
            super->id, (unsigned long long)tp->inserted, (long long)inflight_seen(tp), tp->norder);
    int shown = rill_rdep_describe(out, super->id);
    for (size_t i = 0; i < tp->norder && shown < 20; i++) {
        dtd_tracker_t *tr = tp->order[i];
        if (!ref_alive(tr->last_writer))
            continue;
        dtd_task_t *t = tr->last_writer.task;
        fprintf(out,
                "  datum (key %llu): last local writer '%s' #%llu not completed, waiting on %d "
                "dependencies\n",
                (unsigned long long)tr->data->key, t->cls->name,
                (unsigned long long)tr->last_writer.serial, atomic_load(&t->deps));
        shown++;
    }
}

/* The taskpool ended everywhere: its data and classes may be destroyed from now on. */
static void dtd_ended(rill_taskpool_t *super)
{
    dtd_taskpool_t *tp = (dtd_taskpool_t *)super;
    for (size_t i = 0; i < tp->norder; i++) {
        rill_data_t *data = tp->order[i]->data;
        if (data->fe_mark == slot_mark(tp)) /* while the datum lives (in use until below) */
            data->fe_mark = 0;
        if (data->fe_writer == slot_mark(tp))
            data->fe_writer = 0;
        rill_data_unuse(data);
    }
    for (int i = 0; i < tp->nclasses; i++)
        tp->classes[i]->users--;
    tp->nclasses = 0;
}

/* Count the taskpool among cls's users, once. Main thread. */
static rill_status_t class_claim(dtd_taskpool_t *tp, rill_dtd_class_t *cls)
{
    uint32_t mark = tp->super.id + 1;
    if (cls->user_tp == mark)
        return RILL_SUCCESS;
    for (int i = 0; i < tp->nclasses; i++)
        if (tp->classes[i] == cls) { /* taskpools took turns with this class */
            cls->user_tp = mark;
            return RILL_SUCCESS;
        }
    if (tp->nclasses == tp->cap_classes) {
        int cap = tp->cap_classes ? 2 * tp->cap_classes : 8;
        rill_dtd_class_t **c = realloc(tp->classes, (size_t)cap * sizeof(*c));
        if (!c)
            return RILL_ERR_NO_MEMORY;
        tp->classes = c;
        tp->cap_classes = cap;
    }
    tp->classes[tp->nclasses++] = cls;
    cls->users++;
    cls->user_tp = mark;
    return RILL_SUCCESS;
}

static void dtd_destroy(rill_taskpool_t *super)
{
    dtd_taskpool_t *tp = (dtd_taskpool_t *)super;
    for (size_t i = 0; i < tp->norder; i++)
        tracker_free(tp->order[i]);
    for (dtd_slab_t *sl = tp->slabs, *next; sl; sl = next) {
        next = sl->next;
        free(sl);
    }
    dtd_seq_forget(tp);
    free(tp->order);
    free(tp->classes);
    rill_hmap_fini(&tp->trackers);
    free(tp);
}

static const rill_taskpool_ops_t dtd_taskpool_ops = {
    .name = "dtd",
    .close = dtd_close,
    .describe = dtd_describe,
    .ended = dtd_ended,
    .destroy = dtd_destroy,
};

rill_status_t rill_dtd_taskpool_create(rill_context_t *ctx, rill_taskpool_t **tp_p)
{
    if (!ctx || !tp_p)
        return rill_arg_null("rill_dtd_taskpool_create", ctx ? "tp_p" : "the context");
    if (rill_worker_check_main("rill_dtd_taskpool_create", false) != RILL_SUCCESS)
        return RILL_ERR_BAD_STATE;
    dtd_taskpool_t *tp = calloc(1, sizeof(*tp));
    if (!tp)
        return RILL_ERR_NO_MEMORY;
    xfer_classes_init();
    rill_taskpool_init(&tp->super, ctx, &dtd_taskpool_ops);
    rill_hmap_init(&tp->trackers);
    atomic_init(&tp->done, 0);
    atomic_init(&tp->made, 0);
    tp->window = rill_param_get_int(param_window);
    tp->rank = ctx->rank;
    tp->nranks = ctx->nranks;
    tp->distributed = ctx->nranks > 1;
    tp->hash = DTD_SEQ_HASH0;
    *tp_p = &tp->super;
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ insertion */

/* Tasks of two open taskpools are not ordered against each other: a datum one of them
 * writes may not be used by another until the first ended (its wait returned). Checked
 * before anything of the task is recorded, so a refused insertion changes nothing. */
static rill_status_t taskpools_conflict(dtd_taskpool_t *tp, const rill_dtd_class_t *cls,
                                        const dtd_arg_t *args, int nargs)
{
    const uint32_t mark = slot_mark(tp);
    for (int i = 0; i < nargs; i++) {
        if (args[i].kind < RILL_DTD_INPUT)
            continue;
        const rill_data_t *d = args[i].data;
        uint32_t other = 0; /* another open taskpool's mark, or UINT32_MAX: one of several */
        if (d->fe_writer && d->fe_writer != mark)
            other = d->fe_writer;
        /* users counts the open taskpools that track d: with one, it is another unless it is
         * this one (a lookup only then: with one taskpool at a time it hits d's slot) */
        else if (args[i].kind != RILL_DTD_INPUT &&
                 (d->users > 1 || (d->users == 1 && !tracker_find(tp, args[i].data))))
            other = d->fe_writer ? d->fe_writer : UINT32_MAX;
        if (!other)
            continue;
        char who[48];
        if (other == UINT32_MAX)
            snprintf(who, sizeof(who), "another open taskpool (taskpool %u was the last)",
                     (unsigned)d->user_tp);
        else
            snprintf(who, sizeof(who), "taskpool %u", (unsigned)other - 1);
        RILL_ERROR(RILL_LOG_DTD,
                   "rill_dtd_insert_task('%s'): argument %d (%s) of taskpool %u uses a datum "
                   "that %s %s and has not been waited for; tasks of different taskpools are "
                   "not ordered against each other. Wait for that taskpool first, or insert "
                   "these tasks into one taskpool (reading a datum from several open taskpools "
                   "is allowed while none writes it)",
                   cls->name, i, kind_name(args[i].kind), tp->super.id, who,
                   d->fe_writer && d->fe_writer != mark ? "writes" : "reads");
        return RILL_ERR_BUSY;
    }
    return RILL_SUCCESS;
}

static bool window_drained(void *arg)
{
    dtd_taskpool_t *tp = arg;
    if (dtd_seq_pending()) /* a peer's checkpoint: the peer may wait for this rank too */
        dtd_seq_check(tp);
    return dtd_inflight(tp) <= tp->window / 2;
}

static const char *kind_name(int kind)
{
    switch (kind) {
    case RILL_DTD_VALUE:
        return "VALUE";
    case RILL_DTD_SCRATCH:
        return "SCRATCH";
    case RILL_DTD_INPUT:
        return "INPUT";
    case RILL_DTD_OUTPUT:
        return "OUTPUT";
    case RILL_DTD_INOUT:
        return "INOUT";
    }
    return "?";
}

static inline uint64_t hash_mix(uint64_t h, uint64_t v)
{
    /* FNV's step, then the high half folded down: a product's low bits never see its
     * factors' high ones, and the ranks compare the low 32 bits of early checkpoints */
    h = (h ^ v) * 1099511628211ull;
    return h ^ (h >> 32);
}

/* The rank that runs a task: the home of its AFFINITY tile, else of its first written
 * tile, else of its first tile, else rank 0. */
static int exec_rank(const dtd_arg_t *args, int nargs)
{
    int first_write = -1, first_tile = -1;
    for (int i = 0; i < nargs; i++) {
        if (args[i].kind < RILL_DTD_INPUT)
            continue;
        if (args[i].affinity)
            return args[i].data->home_rank;
        if (first_write < 0 && args[i].kind != RILL_DTD_INPUT)
            first_write = args[i].data->home_rank;
        if (first_tile < 0)
            first_tile = args[i].data->home_rank;
    }
    return first_write >= 0 ? first_write : first_tile >= 0 ? first_tile : 0;
}

/* rill_dtd_insert_task's arguments after the priority, up to RILL_DTD_ARG_END: each checked
 * (a message naming the argument, what it is and what is allowed) and collected into args and
 * values (*nargs_p of them; arrays of tiles counted tile by tile); *urgent: RILL_DTD_URGENT. */
static rill_status_t collect_args(const rill_dtd_class_t *cls, va_list *ap, dtd_arg_t *args,
                                  const void **values, int *nargs_p, bool *urgent)
{
    int nargs = 0;
    for (;;) {
        int kind = va_arg(*ap, int);
        if (kind == RILL_DTD_ARG_END)
            break;
        if (kind == RILL_DTD_URGENT) { /* a hint, not an argument of the body */
            *urgent = va_arg(*ap, int) != 0;
            continue;
        }
        if (nargs == RILL_DTD_MAX_ARGS && !(kind & RILL_DTD_ARRAY)) { /* (arrays: below) */
            RILL_ERROR(RILL_LOG_DTD,
                       "rill_dtd_insert_task('%s'): more than %d arguments (is RILL_DTD_ARG_END "
                       "missing?)",
                       cls->name, RILL_DTD_MAX_ARGS);
            return RILL_ERR_INVALID_ARG;
        }
        int mode = kind & RILL_DTD_MODE_MASK;
        if ((kind & RILL_DTD_ARRAY) && !(kind & RILL_DTD_AFFINITY) &&
            !(kind & ~(RILL_DTD_MODE_MASK | RILL_DTD_ARRAY)) &&
            (mode == RILL_DTD_INPUT || mode == RILL_DTD_OUTPUT || mode == RILL_DTD_INOUT)) {
            /* n tiles of one mode: n arguments */
            int n = va_arg(*ap, int);
            rill_data_t **tiles = va_arg(*ap, rill_data_t **);
            const char *bad = n < 0                           ? "a negative count"
                              : n > RILL_DTD_MAX_ARGS - nargs ? "more tiles than fit"
                              : n > 0 && !tiles               ? "a NULL array"
                                                              : NULL;
            for (int j = 0; j < n && !bad; j++)
                if (!tiles[j])
                    bad = "a NULL tile";
            if (bad) {
                RILL_ERROR(RILL_LOG_DTD,
                           "rill_dtd_insert_task('%s'): argument %d is an array of %d %s tiles "
                           "with %s; allowed: 0 or more non-NULL tiles, at most %d arguments "
                           "in all",
                           cls->name, nargs, n, kind_name(mode), bad, RILL_DTD_MAX_ARGS);
                return RILL_ERR_INVALID_ARG;
            }
            for (int j = 0; j < n; j++, nargs++) {
                memset(&args[nargs], 0, sizeof(args[nargs]));
                values[nargs] = NULL;
                args[nargs].kind = (uint16_t)mode;
                args[nargs].data = tiles[j];
                args[nargs].size = (uint32_t)tiles[j]->size;
            }
            continue;
        }
        dtd_arg_t *a = &args[nargs];
        memset(a, 0, sizeof(*a));
        values[nargs] = NULL;
        if ((kind & ~(RILL_DTD_MODE_MASK | RILL_DTD_AFFINITY)) ||
            (mode != RILL_DTD_VALUE && mode != RILL_DTD_SCRATCH && mode != RILL_DTD_INPUT &&
             mode != RILL_DTD_OUTPUT && mode != RILL_DTD_INOUT) ||
            ((kind & RILL_DTD_AFFINITY) && (mode == RILL_DTD_VALUE || mode == RILL_DTD_SCRATCH))) {
            RILL_ERROR(
                RILL_LOG_DTD,
                "rill_dtd_insert_task('%s'): argument %d has kind 0x%x; allowed: "
                "RILL_DTD_VALUE, RILL_DTD_SCRATCH, or RILL_DTD_INPUT/OUTPUT/INOUT "
                "optionally | RILL_DTD_AFFINITY or | RILL_DTD_ARRAY, RILL_DTD_URGENT with an int, "
                "and RILL_DTD_ARG_END last",
                cls->name, nargs, (unsigned)kind);
            return RILL_ERR_INVALID_ARG;
        }
        a->kind = (uint16_t)mode;
        a->affinity = (kind & RILL_DTD_AFFINITY) != 0;
        if (mode == RILL_DTD_VALUE || mode == RILL_DTD_SCRATCH) {
            size_t size = va_arg(*ap, size_t);
            if (size > UINT32_MAX) {
                RILL_ERROR(RILL_LOG_DTD,
                           "rill_dtd_insert_task('%s'): argument %d (%s) of %zu bytes; at most "
                           "4 GiB (was the size passed as a size_t?)",
                           cls->name, nargs, kind_name(mode), size);
                return RILL_ERR_INVALID_ARG;
            }
            a->size = (uint32_t)size;
            if (mode == RILL_DTD_VALUE) {
                values[nargs] = va_arg(*ap, const void *);
                if (!values[nargs] && size) {
                    RILL_ERROR(RILL_LOG_DTD,
                               "rill_dtd_insert_task('%s'): argument %d is a VALUE of %zu bytes "
                               "at NULL",
                               cls->name, nargs, size);
                    return RILL_ERR_INVALID_ARG;
                }
            }
        } else {
            rill_data_t *data = va_arg(*ap, rill_data_t *);
            if (!data) {
                RILL_ERROR(RILL_LOG_DTD,
                           "rill_dtd_insert_task('%s'): argument %d is a %s tile given as NULL; "
                           "pass a datum from rill_data_create or a collection",
                           cls->name, nargs, kind_name(mode));
                return RILL_ERR_INVALID_ARG;
            }
            a->data = data;
            a->size = (uint32_t)data->size;
        }
        nargs++;
    }
    *nargs_p = nargs;
    return RILL_SUCCESS;
}

/* A distributed taskpool's insertion sequence, one task more: its class, priority and
 * arguments (a collection's datum with its home rank) into the hash the ranks compare
 * (dtd_seq). The ranks must agree on where each datum lives as much as on the task itself:
 * a distribution (or a rank_of) that differs between ranks makes each run what it thinks
 * it owns and wait for versions nobody sends. (The rank that runs the task follows from
 * those homes, or is each rank itself for a private datum: not hashed.) */
static void seq_hash(dtd_taskpool_t *tp, const rill_dtd_class_t *cls, int32_t priority,
                     const dtd_arg_t *args, int nargs)
{
    uint64_t h = hash_mix(tp->hash, cls->name_hash);
    h = hash_mix(h, (uint64_t)(uint32_t)priority);
    for (int i = 0; i < nargs; i++) {
        h = hash_mix(h,
                     args[i].kind | (uint64_t)args[i].affinity << 8 | (uint64_t)args[i].size << 16);
        const rill_data_t *d = args[i].data;
        if (d && d->dc) /* private data may differ per rank */
            h = hash_mix(h, (d->dc->id ^ d->key << 20) + ((uint64_t)(uint32_t)d->home_rank << 52));
    }
    tp->hash = h;
}

/* The flows of a task inserted to run on rank exec (t: the task, when it is local): each tile's
 * tracker gets the access (dependencies), and between ranks the version it needs and the one
 * it writes move (data movement). RILL_ERR_NO_MEMORY stops at the flow that failed. */
static rill_status_t insert_flows(dtd_taskpool_t *tp, const rill_dtd_class_t *cls, dtd_task_t *t,
                                  dtd_arg_t *args, int nargs, int exec, int32_t priority)
{
    const bool local = t != NULL;
    rill_status_t s = RILL_SUCCESS;
    const bool may_gpu = tp->distributed && class_may_gpu(tp->super.ctx, cls);
    for (int i = 0; i < nargs && s == RILL_SUCCESS; i++) {
        if (args[i].kind < RILL_DTD_INPUT)
            continue;
        dtd_tracker_t *tr = tracker_get(tp, args[i].data);
        if (!tr) {
            s = RILL_ERR_NO_MEMORY;
            break;
        }
        tr->discarded = false; /* accessed again: its value matters */
        /* data outside collections are private to each rank: never moved */
        bool moves = tp->distributed && args[i].data->dc;
        if (moves && args[i].kind != RILL_DTD_OUTPUT)
            s = tracker_need_version(tp, tr, exec, priority, may_gpu);
        if (s == RILL_SUCCESS && local) {
            t->args[i].ptr = tracker_local_ptr(tr);
            s = t->args[i].ptr ? tracker_access(tr, ref_of(t), args[i].kind) : RILL_ERR_NO_MEMORY;
            /* a GPU may write it: bring it home at the end (dtd_close) */
            if (args[i].kind != RILL_DTD_INPUT && cls->cuda_body)
                tr->gpu_written = true;
        }
        if (s == RILL_SUCCESS && args[i].kind != RILL_DTD_INPUT)
            args[i].data->fe_writer = slot_mark(tp);
        if (s == RILL_SUCCESS && moves && args[i].kind != RILL_DTD_INPUT)
            tracker_wrote(tp, tr, exec, may_gpu);
    }
    return s;
}

rill_status_t rill_dtd_insert_task(rill_taskpool_t *super, rill_dtd_class_t *cls, int32_t priority,
                                   ...)
{
    dtd_taskpool_t *tp = (dtd_taskpool_t *)super;
    if (!tp || !cls) {
        RILL_ERROR(RILL_LOG_DTD, "rill_dtd_insert_task: the taskpool and the class must be given");
        return RILL_ERR_INVALID_ARG;
    }
    if (tp->super.ops != &dtd_taskpool_ops) {
        RILL_ERROR(RILL_LOG_DTD, "rill_dtd_insert_task: taskpool %u is not a DTD taskpool",
                   tp->super.id);
        return RILL_ERR_INVALID_ARG;
    }
    /* the thread first: closed is the main thread's (rill_taskpool_wait sets it) */
    if (rill_worker_check_main("rill_dtd_insert_task", false) != RILL_SUCCESS)
        return RILL_ERR_BAD_STATE;
    if (tp->closed) {
        RILL_ERROR(RILL_LOG_DTD,
                   "rill_dtd_insert_task('%s'): taskpool %u was already waited for; insert "
                   "into a new taskpool",
                   cls->name, tp->super.id);
        return RILL_ERR_BAD_STATE;
    }
    rill_worker_t *w = rill_worker_self();

    /* validate and collect the arguments */
    dtd_arg_t args[RILL_DTD_MAX_ARGS];
    const void *values[RILL_DTD_MAX_ARGS];
    int nargs = 0;
    bool urgent = false;
    va_list ap;
    va_start(ap, priority);
    rill_status_t bad = collect_args(cls, &ap, args, values, &nargs, &urgent);
    va_end(ap);
    if (bad != RILL_SUCCESS)
        return bad;
    rill_status_t refused = taskpools_conflict(tp, cls, args, nargs);
    if (refused != RILL_SUCCESS)
        return refused;
    int exec = tp->distributed ? exec_rank(args, nargs) : tp->rank;
    bool local = exec == tp->rank;
    /* the allocations first: one that fails leaves the taskpool as it was */
    dtd_task_t *t = NULL;
    if (class_claim(tp, cls) != RILL_SUCCESS ||
        (local && !(t = task_create(tp, cls, priority, args, values, nargs)))) {
        RILL_ERROR(RILL_LOG_DTD,
                   "rill_dtd_insert_task('%s'): out of memory for the task (%d arguments) in "
                   "taskpool %u; it is not inserted",
                   cls->name, nargs, tp->super.id);
        return RILL_ERR_NO_MEMORY;
    }
    tp->super.used = true;
    tp->inserted++;
    if (tp->distributed) {
        seq_hash(tp, cls, priority, args, nargs);
        dtd_seq_record(tp);
        if (dtd_seq_pending())
            dtd_seq_check(tp);
    }
    if (t)
        t->super.urgent = urgent;
    if (urgent) /* before the tasks inserted after it reach a GPU manager (core.h) */
        atomic_store_explicit(&tp->super.marks_urgent, true, memory_order_relaxed);

    /* dependencies and data movement, flow by flow */
    rill_status_t s = insert_flows(tp, cls, t, args, nargs, exec, priority);
    if (s != RILL_SUCCESS) {
        rill_taskpool_fail(&tp->super, s, "out of memory inserting task '%s'", cls->name);
        /* edges already added keep the graph consistent: the task completes in order, but
         * its body would see missing tiles (NULL): it is not run */
        if (local)
            t->super.tc = &unrun_class.tc;
    }
    if (!local)
        return s;
    task_release_guard(tp, w, t);
    if (window_full(tp)) {
        /* the peers learn where this rank stands: one further along whose sequence differs
         * ends the job instead of leaving this rank waiting for a version it never sends */
        dtd_seq_announce(tp, false);
        rill_context_wait(w, window_drained, tp,
                          "room in the DTD insertion window (dtd_window_size)", &tp->super);
    }
    return s;
}

/* ------------------------------------------------------------ bodies */

rill_status_t rill_dtd_unpack_args_n(int n, rill_task_t *task, ...)
{
    if (!task || task->tc->complete != dtd_complete) {
        RILL_ERROR(RILL_LOG_DTD, "rill_dtd_unpack_args: not called on a DTD task");
        return RILL_ERR_INVALID_ARG;
    }
    dtd_task_t *t = (dtd_task_t *)task;
    va_list ap;
    /* pointers past the task's arguments may only be NULL (skipped): checked before any
     * is written, so a refused call changes nothing */
    va_start(ap, task);
    int given = 0;
    for (int i = 0; i < n; i++)
        if (va_arg(ap, void *))
            given = i + 1;
    va_end(ap);
    if (n < 0 || given > t->nargs) {
        RILL_ERROR(RILL_LOG_DTD,
                   "rill_dtd_unpack_args: %d pointers given to a '%s' task, which has %d "
                   "arguments; pass at most one pointer per argument, in insertion order (NULL "
                   "skips one)",
                   given, t->cls->name, t->nargs);
        return RILL_ERR_INVALID_ARG;
    }
    va_start(ap, task);
    for (int i = 0; i < given; i++) {
        void *dst = va_arg(ap, void *);
        if (!dst)
            continue;
        if (t->args[i].kind == RILL_DTD_VALUE)
            memcpy(dst, t->args[i].ptr, t->args[i].size);
        else
            *(void **)dst = t->args[i].ptr;
    }
    va_end(ap);
    return RILL_SUCCESS;
}

void *rill_dtd_arg(rill_task_t *task, int i)
{
    if (!task || task->tc->complete != dtd_complete)
        return NULL;
    dtd_task_t *t = (dtd_task_t *)task;
    return (i >= 0 && i < t->nargs) ? t->args[i].ptr : NULL;
}

/* The checks of a call about one datum of an open DTD taskpool (flush, discard): the
 * taskpool, or NULL with *status set and the error said in call's name. Main thread. */
static dtd_taskpool_t *data_call_check(rill_taskpool_t *super, rill_data_t *data, const char *call,
                                       rill_status_t *status)
{
    dtd_taskpool_t *tp = (dtd_taskpool_t *)super;
    if (!tp || !data || tp->super.ops != &dtd_taskpool_ops) {
        RILL_ERROR(RILL_LOG_DTD, "%s: needs a DTD taskpool and a datum", call);
        *status = RILL_ERR_INVALID_ARG;
        return NULL;
    }
    if (rill_worker_check_main(call, false) != RILL_SUCCESS) {
        *status = RILL_ERR_BAD_STATE;
        return NULL;
    }
    if (tp->closed) {
        RILL_ERROR(RILL_LOG_DTD, "%s: taskpool %u was already waited for", call, tp->super.id);
        *status = RILL_ERR_BAD_STATE;
        return NULL;
    }
    tp->super.used = true;
    return tp;
}

rill_status_t rill_dtd_data_flush(rill_taskpool_t *super, rill_data_t *data)
{
    rill_status_t s;
    dtd_taskpool_t *tp = data_call_check(super, data, "rill_dtd_data_flush", &s);
    if (!tp)
        return s;
    /* its value is needed again (after rill_dtd_data_discard), on any run */
    dtd_tracker_t *tr = tracker_find(tp, data);
    if (tr)
        tr->discarded = false;
    if (!tp->distributed || !data->dc) /* its only copy is its home copy: nothing to move */
        return RILL_SUCCESS;
    /* later accesses stay ordered after earlier ones: the history is kept */
    if (!tr && !(tr = tracker_get(tp, data))) {
        RILL_ERROR(RILL_LOG_DTD, "rill_dtd_data_flush: out of memory tracking the datum");
        return RILL_ERR_NO_MEMORY;
    }
    tp->hash = hash_mix(tp->hash, data->key ^ 0xf1u);
    dtd_seq_record(tp);
    return tracker_need_version(tp, tr, data->home_rank, 0, false);
}

rill_status_t rill_dtd_data_discard(rill_taskpool_t *super, rill_data_t *data)
{
    rill_status_t s;
    dtd_taskpool_t *tp = data_call_check(super, data, "rill_dtd_data_discard", &s);
    if (!tp)
        return s;
    dtd_tracker_t *tr = tracker_get(tp, data);
    if (!tr) {
        RILL_ERROR(RILL_LOG_DTD, "rill_dtd_data_discard: out of memory tracking the datum");
        return RILL_ERR_NO_MEMORY;
    }
    if (tp->distributed && data->dc) { /* every rank must discard the same data */
        tp->hash = hash_mix(tp->hash, data->key ^ 0xd15cu);
        dtd_seq_record(tp);
    }
    tr->discarded = true;
    return RILL_SUCCESS;
}
