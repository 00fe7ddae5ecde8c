/* Dynamic task discovery: insert_task builds the graph from the order of accesses to
 * each datum; completion releases successors through lock-free successor lists. */
#include "dtd_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "scheduler.h"

/* Task size classes: header + args (+ values/scratch when they fit). */
static const size_t size_classes[] = { 256, 512, 1024, 2048 };
#define NB_SIZE_CLASSES 4

static struct {
    rill_mempool_t tasks[NB_SIZE_CLASSES];
    rill_mempool_t succs;
    atomic_ullong next_serial;
    bool ready;
    rill_context_t *ctx;
    /* activations in flight, shared by the inserting thread and the comm thread */
    rill_spinlock_t act_lock;
    rill_hmap_t acts; /* act_hash -> list of dtd_activation_t */
    int am_tag;       /* the comm engine's tag of activations */
    int get_tag;      /* and of GPUs' requests for versions sent from GPU memory (their
                       * answers go on am_tag: DTD_ACT_ANSWER) */
    int ann_tag;      /* and of early announcements of landings */
    rill_hmap_t anns; /* sender side: announcements and sends, per (version, receiver) */
} dtd;

static void dtd_activate_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg);
static void dtd_gpu_get_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg);
static void dtd_announce_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg);
static void put_answered(rill_comm_t *comm, int src, uint64_t recv);
static void dtd_launched(rill_task_t *task, int dev, uint64_t launch);

static rill_param_t *param_window, *param_early;

RILL_LOG_COMPONENT(rill_log_dtd, "dtd");

rill_status_t rill_dtd_register_params(void)
{
    rill_status_t s = rill_log_register(&rill_log_dtd);
    if (s == RILL_SUCCESS)
        s = dtd_dot_register_params();
    if (s == RILL_SUCCESS)
        s = rill_param_register_bool(
            "dtd_gpu_early",
            "Receives of versions sent GPU to GPU reserve their landing buffer when inserted and "
            "announce it to the sender, which then puts the version as soon as it is produced "
            "(no request round trip); off: the landing is reserved when the version is ready",
            RILL_PARAM_LEVEL_TUNER, true, &param_early);
    if (s == RILL_SUCCESS) /* the sender waits for the receiver's announcement */
        s = rill_param_set_same_on_all_ranks(param_early);
    if (s != RILL_SUCCESS)
        return s;
    return rill_param_register_int("dtd_window_size",
                                   "Most DTD tasks inserted and not yet completed; beyond it the "
                                   "inserting thread runs tasks until half of them completed",
                                   RILL_PARAM_LEVEL_USER, 8000, 1, 1 << 30, &param_window);
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
    rill_spinlock_init(&dtd.act_lock);
    rill_hmap_init(&dtd.acts);
    rill_hmap_init(&dtd.anns);
    if (ctx->nranks > 1 &&
        ((s = rill_comm_am_register_new(ctx->comm, dtd_activate_handler, NULL, &dtd.am_tag)) !=
             RILL_SUCCESS ||
         (s = rill_comm_am_register_new(ctx->comm, dtd_gpu_get_handler, NULL, &dtd.get_tag)) !=
             RILL_SUCCESS ||
         (s = rill_comm_am_register_new(ctx->comm, dtd_announce_handler, NULL, &dtd.ann_tag)) !=
             RILL_SUCCESS))
        goto err;
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
    RILL_HMAP_FOREACH(&dtd.acts, e)
    {
        for (dtd_activation_t *a = e->val, *n; a; a = n) {
            n = a->next;
            free(a->payload);
            free(a);
        }
    }
    rill_hmap_fini(&dtd.acts);
    RILL_HMAP_FOREACH(&dtd.anns, e)
    {
        for (dtd_activation_t *a = e->val, *n; a; a = n) {
            n = a->next;
            free(a);
        }
    }
    rill_hmap_fini(&dtd.anns);
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
static int recv_dep_done(dtd_task_t *t);

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

/* The flow id of moving version of (tp, datum) to rank dst: the same on both ranks. */
static uint64_t xfer_flow_id(uint32_t tp_id, const rill_data_t *d, uint32_t version, int dst)
{
    uint64_t dc = d->dc ? d->dc->id : UINT32_MAX;
    return rill_trace_flow_id(tp_id, dc << 32 | version, d->key, (uint64_t)dst);
}

/* Of send or receive t's version moved GPU to GPU into rank dst: the flow from the producer's
 * kernel to the readers' kernels, which the GPU managers mark. It is the id dtd_complete
 * hands a receive's readers (xfer_flow_id ^ 1), so their kernels end it. */
static uint64_t kernel_flow_id(const dtd_task_t *t, int dst)
{
    return xfer_flow_id(t->super.tp->id, t->args[0].data,
                        ((const dtd_xfer_t *)t->args[1].ptr)->version, dst) ^
           1;
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
        return RILL_ERR_INVALID_ARG;
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
                       ? recv_dep_done(s)
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
    atomic_fetch_sub_explicit(&tp->inflight, 1, memory_order_relaxed);
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
    tr = calloc(1, sizeof(*tr));
    if (!tr)
        return NULL;
    tr->data = data;
    tr->owner = data->home_rank;
    tr->have_local = data->home_rank == tp->rank; /* the home rank holds version 0 */
    if (tp->distributed) {
        tr->sent = calloc((size_t)(tp->nranks + 63) / 64, sizeof(uint64_t));
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
err_free:
    free(tr->sent);
    free(tr);
    return NULL;
}

/* This rank's buffer for the datum: the host copy (home storage, or one the core allocates
 * on first use and frees when no taskpool uses the datum any more). */
static void *tracker_local_ptr(dtd_tracker_t *tr)
{
    rill_data_copy_t *c = rill_data_host_ensure(tr->data);
    return c ? c->ptr : NULL;
}

static void tracker_free(dtd_tracker_t *tr)
{
    free(tr->readers);
    free(tr->sent);
    free(tr);
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
        int cap = tr->cap ? 2 * tr->cap : 4;
        dtd_ref_t *readers = realloc(tr->readers, (size_t)cap * sizeof(*readers));
        if (!readers)
            return RILL_ERR_NO_MEMORY;
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
    uint64_t serial = atomic_fetch_add_explicit(&dtd.next_serial, 1, memory_order_relaxed);
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
    rill_taskpool_pending_add(&tp->super, 1);
    atomic_fetch_add_explicit(&tp->inflight, 1, memory_order_relaxed);
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

static inline uint64_t act_hash(uint32_t tp_id, uint32_t dc_id, uint64_t key, uint32_t version)
{
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)tp_id << 40) ^ ((uint64_t)dc_id << 20) ^ version;
    return h ? h : 1;
}

/* Find and unlink the entry of (tp, dc, key, version) in map (with src == rank unless rank
 * is -1); act_lock held. */
static dtd_activation_t *entry_take(rill_hmap_t *map, uint64_t h, uint32_t tp_id, uint32_t dc_id,
                                    uint64_t key, uint32_t version, int rank)
{
    dtd_activation_t *head = rill_hmap_get(map, h), *prev = NULL;
    for (dtd_activation_t *a = head; a; prev = a, a = a->next) {
        if (a->tp_id != tp_id || a->dc_id != dc_id || a->key != key || a->version != version ||
            (rank >= 0 && a->src != rank))
            continue;
        if (prev)
            prev->next = a->next;
        else if (a->next)
            rill_hmap_put(map, h, a->next);
        else
            rill_hmap_remove(map, h);
        a->next = NULL;
        return a;
    }
    return NULL;
}

/* The activation of (tp, dc, key, version); act_lock held. */
static dtd_activation_t *act_take(uint64_t h, uint32_t tp_id, uint32_t dc_id, uint64_t key,
                                  uint32_t version)
{
    return entry_take(&dtd.acts, h, tp_id, dc_id, key, version, -1);
}

static rill_status_t act_add(uint64_t h, dtd_activation_t *a)
{
    a->next = rill_hmap_get(&dtd.acts, h);
    return rill_hmap_put(&dtd.acts, h, a);
}

/* Comm thread: a version we will need (or already wait for) is ready at src. */
static void dtd_activate_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)comm;
    (void)arg;
    dtd_activate_msg_t m;
    if (len < sizeof(m)) {
        RILL_ERROR(RILL_LOG_DTD, "activation of %zu bytes from rank %d is too short", len, src);
        return;
    }
    memcpy(&m, msg, sizeof(m));
    if (m.flags & DTD_ACT_ANSWER) {
        put_answered(comm, src, m.handle);
        return;
    }
    dtd_activation_t *a = calloc(1, sizeof(*a));
    if (a && (m.flags & DTD_ACT_INLINE)) {
        a->payload = malloc(m.size ? m.size : 1);
        if (a->payload && len >= sizeof(m) + m.size)
            memcpy(a->payload, (char *)msg + sizeof(m), m.size);
    }
    if (!a || ((m.flags & DTD_ACT_INLINE) && !a->payload)) {
        RILL_ERROR(RILL_LOG_DTD, "out of memory receiving an activation from rank %d", src);
        abort(); /* a lost activation would hang every rank */
    }
    a->tp_id = m.tp_id;
    a->dc_id = m.dc_id;
    a->key = m.key;
    a->version = m.version;
    a->src = src;
    a->size = m.size;
    a->handle = m.handle;
    a->flags = m.flags;
    uint64_t h = act_hash(m.tp_id, m.dc_id, m.key, m.version);
    rill_spinlock_lock(&dtd.act_lock);
    dtd_activation_t *expected = act_take(h, m.tp_id, m.dc_id, m.key, m.version);
    if (!expected) { /* the receive is not inserted yet: keep it for its insertion */
        if (act_add(h, a) != RILL_SUCCESS) {
            rill_spinlock_unlock(&dtd.act_lock);
            RILL_ERROR(RILL_LOG_DTD, "out of memory queueing an activation from rank %d", src);
            abort();
        }
        rill_spinlock_unlock(&dtd.act_lock);
        return;
    }
    rill_spinlock_unlock(&dtd.act_lock);
    rill_comm_expect(comm, -1);
    dtd_task_t *recv = expected->recv;
    free(expected);
    ((dtd_xfer_t *)recv->args[1].ptr)->act = a;
    /* acq_rel: the act pointer written above is seen by the thread that runs recv */
    if (atomic_fetch_sub_explicit(&recv->deps, 1, memory_order_acq_rel) != 1)
        return;
    /* from the sender's GPU: the receive only hands the landing to a GPU's manager
     * (recv_to_gpu), so this thread runs it, one thread hop fewer than through a worker
     * (its wake-up and dispatch took 1.5 us, then 0.5 us more to reach the manager, in
     * traced 4 KiB hops between two H200s); its body needs no host copy (recv_needs_host) */
    if ((a->flags & DTD_ACT_GPU) && !a->payload)
        rill_task_run_here(dtd.ctx, &recv->super);
    else
        rill_sched_push(dtd.ctx, NULL, &recv->super, 1);
}

static void xfer_done(void *arg, rill_status_t status)
{
    dtd_task_t *t = arg;
    if (status != RILL_SUCCESS)
        rill_taskpool_fail(t->super.tp, status, "moving datum (collection %u, key %llu) failed: %s",
                           t->args[0].data->dc ? t->args[0].data->dc->id : 0,
                           (unsigned long long)t->args[0].data->key, rill_status_string(status));
    rill_task_complete(NULL, &t->super, status == RILL_SUCCESS ? RILL_HOOK_DONE : RILL_HOOK_ERROR);
}

static void send_done(void *arg, rill_status_t status)
{
    dtd_task_t *t = arg;
    rill_comm_expect(t->super.tp->ctx->comm, -1);
    xfer_done(arg, status);
}

/* ------------------------------------------------------------ versions sent GPU to GPU */

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
 * every one of them), both ranks' GPUs reach each other (rill_info --peers; this process
 * then has GPUs) and d has at least comm_gpu_direct_min bytes (small tiles too: inside the
 * activation they would go through host memory at both ends). Decided when the reader is
 * inserted, from the history every rank keeps: the same answer on both ranks (their
 * classes have the same bodies). */
static bool xfer_route(rill_context_t *ctx, const dtd_tracker_t *tr, int peer, bool gpu_reader)
{
    const rill_data_t *d = tr->data;
    return (tr->gpu_version || gpu_reader) && rill_device_count() > 1 && d->size > 0 &&
           d->size >= rill_comm_gpu_direct_min(ctx->comm) &&
           rill_context_gpu_direct(ctx, peer, NULL);
}

/* A send goes from GPU memory (no host copy needed) when its version moves GPU to GPU. */
static bool send_from_gpu(const dtd_task_t *t)
{
    return ((const dtd_xfer_t *)t->args[1].ptr)->gpu;
}

/* The send's body needs the host copy only when the bytes leave through MPI. */
static bool send_needs_host(rill_task_t *task)
{
    return !send_from_gpu((dtd_task_t *)task);
}

/* A receive needs the host copy (an older version brought home first, so that no write-back
 * lands over the new bytes) unless the version lands in GPU memory. */
static bool recv_needs_host(rill_task_t *task)
{
    const dtd_xfer_t *x = ((dtd_task_t *)task)->args[1].ptr;
    return !(x->act && (x->act->flags & DTD_ACT_GPU));
}

/* The GPU a version sent from a GPU lands in: the datum's advised GPU, else one chosen by
 * its key (the same one each time, so its block is reused). 0: none. */
static int landing_device(const rill_data_t *d)
{
    int ndev = rill_device_count();
    if (ndev <= 1)
        return 0;
    if (d->advised > 0 && d->advised < ndev)
        return d->advised;
    return 1 + (int)(d->key % (uint64_t)(ndev - 1));
}

/* A version moving GPU to GPU with its landing announced ahead cannot be given up on one
 * side alone (the peer's copy engine may be writing into the landing, or the peer waits for
 * a put that will not come): end the run with the reason, as for a lost activation. */
static void remote_abort(dtd_task_t *t, const char *why)
{
    const dtd_xfer_t *xf = t->args[1].ptr;
    RILL_ERROR(RILL_LOG_DTD,
               "datum (key %llu) version %u between this rank and rank %d, GPU to GPU: %s; "
               "the other rank would wait forever: aborting the run",
               (unsigned long long)t->args[0].data->key, xf->version, xf->peer, why);
    rill_comm_abort(t->super.tp->ctx->comm, 1);
}

/* Manager thread. Without put_coming: the landing buffer and semaphore are reserved (x is
 * the reservation, or early is): ask the sender for the bytes; the receive waits for its
 * answer, the put enqueued (put_answered), which arms the landing. With put_coming: the
 * GPU waits for the landing: complete the receive now (its GPU copy is the new version;
 * whatever uses it on that GPU waits for the landing there). */
static void land_done(rill_remote_xfer_t *x, rill_status_t s)
{
    dtd_task_t *t = x->task;
    dtd_xfer_t *xf = t->args[1].ptr;
    rill_comm_t *comm = t->super.tp->ctx->comm;
    if (s != RILL_SUCCESS && x->early && x->early->reserved)
        /* the sender may be copying into the landing already: it can be neither given back
         * nor waited for */
        remote_abort(t, "its landing buffer, reserved ahead, could not be armed");
    if (!x->put_coming) {
        dtd_gpu_get_msg_t m = { .send = x->cookie,
                                .gpu = s == RILL_SUCCESS ? x->gpu : -1,
                                .recv = (uint64_t)(uintptr_t)t };
        int peer = x->peer;
        if (s == RILL_SUCCESS) {
            m.dst_off = x->dst_off;
            m.sem_off = x->sem_off;
            m.target = x->target;
            /* the reservation the answer arms, in xf->early before the request goes (the
             * answer's handler reads it: the comm thread takes the request after this) */
            if (x->early && x->early->reserved) { /* the one made ahead */
                free(x);
            } else {            /* x is the reservation */
                free(x->early); /* (ahead, none could be made) */
                x->early = NULL;
                xf->early = x;
            }
        }
        /* sent even on failure: the sender's send ends (with an error) rather than waiting */
        if (s == RILL_SUCCESS) /* the answer, on the critical path (put_answered) */
            rill_comm_expect(comm, 1);
        rill_status_t ss =
            rill_comm_am_send(comm, peer, dtd.get_tag, &m, sizeof(m), t->super.prio.priority);
        if (s == RILL_SUCCESS && ss != RILL_SUCCESS) /* the sender would wait for it */
            remote_abort(t, "the request for its put could not be sent");
        if (s == RILL_SUCCESS)
            return; /* the receive waits for the answer */
    }
    if (s == RILL_SUCCESS)
        t->super.device = (int16_t)x->device; /* dtd_complete: the GPU copy is written */
    xf->early = NULL;
    free(x->early);
    free(x);
    xfer_done(t, s);
}

/* Comm thread: the sender's put into the landing receive recv asked for is enqueued on its
 * GPU (an activation with DTD_ACT_ANSWER): the landing stream may wait for it now (land_done
 * then completes the receive). */
static void put_answered(rill_comm_t *comm, int src, uint64_t recv)
{
    dtd_task_t *t = (dtd_task_t *)(uintptr_t)recv; /* our own pointer, echoed */
    dtd_xfer_t *xf = t ? t->args[1].ptr : NULL;
    if (!t || t->super.tc != &recv_class.tc || !xf->early || !xf->early->reserved) {
        RILL_ERROR(RILL_LOG_DTD, "rank %d answered a GPU request this rank did not make", src);
        abort(); /* the receive would never end: every rank would hang */
    }
    rill_comm_expect(comm, -1); /* land_done expected it */
    rill_remote_xfer_t *x = calloc(1, sizeof(*x));
    if (!x) {
        remote_abort(t, "out of host memory for the landing of its put");
        return;
    }
    rill_data_t *d = t->args[0].data;
    x->kind = RILL_REMOTE_LAND;
    x->task = t;
    x->data = d;
    x->peer = src;
    x->done = land_done;
    x->early = xf->early; /* freed by land_done */
    x->put_coming = true;
    if (rill_trace_on()) /* the sender's put_submit names the same flow */
        x->flow = kernel_flow_id(t, t->super.tp->ctx->rank);
    rill_device_t *dev = rill_device_get(xf->early->device);
    dev->ops->remote(dev, x);
}

/* Manager thread: the copy into the receiver's GPU and its signal completed. A put handed
 * to the producer's GPU behind its body (x->behind) may end before the send's hook ran (the
 * producer's completion is still on its way to the host): the last of the two ends it. */
static void put_done(rill_remote_xfer_t *x, rill_status_t s)
{
    dtd_task_t *t = x->task;
    if (s != RILL_SUCCESS)
        /* the receiver waits for the put (its landing reserved, ahead or on request) */
        remote_abort(t, "the copy into its landing buffer failed");
    bool pre = x->behind != 0;
    free(x);
    if (pre) {
        dtd_xfer_t *xf = t->args[1].ptr;
        if (s != RILL_SUCCESS)
            xf->pre_status = s; /* released by the decrement below */
        if (atomic_fetch_sub_explicit(&xf->pre, 1, memory_order_acq_rel) != 1)
            return;
        s = xf->pre_status;
    }
    send_done(t, s);
}

/* Manager thread: the put x of send t is enqueued on the GPU, so the receiver's landing
 * stream may wait for it (device.h: never before, or two ranks' managers, each in a CUDA
 * call that synchronises its context, could wait for each other's puts). Into a landing
 * announced ahead (cookie 0): the activation, saying the put is enqueued, and the receive
 * completes without asking; on request: the answer naming the receive (cookie). A put that
 * cannot be carried out aborts the run (put_done): the receiver waits for it. */
static void put_enqueued(rill_remote_xfer_t *x)
{
    dtd_task_t *t = x->task;
    const dtd_xfer_t *xf = t->args[1].ptr;
    rill_data_t *d = t->args[0].data;
    rill_comm_t *comm = t->super.tp->ctx->comm;
    /* both on the activations' tag: the receiver arms its landings in the order of our puts
     * (those of one lane wait in that order on its landing stream) */
    dtd_activate_msg_t m = { .tp_id = t->super.tp->id,
                             .dc_id = d->dc ? d->dc->id : UINT32_MAX,
                             .version = xf->version,
                             .flags = DTD_ACT_GPU | DTD_ACT_PUT,
                             .key = d->key,
                             .size = d->size,
                             .handle = (uint64_t)(uintptr_t)t };
    if (x->cookie) { /* the answer to the request of receive x->cookie */
        m.flags |= DTD_ACT_ANSWER;
        m.handle = x->cookie;
    }
    rill_status_t s =
        rill_comm_am_send(comm, x->peer, dtd.am_tag, &m, sizeof(m), t->super.prio.priority);
    if (s != RILL_SUCCESS)
        remote_abort(t, "the message saying its put is enqueued could not be sent");
}

/* Hand send t's copy into rank peer's GPU (landing at the given place) to the manager of
 * GPU dev, enqueued behind its launch behind when nonzero (dtd_launched); dev 0: the GPU
 * that holds the newest copy (else the first GPU). recv: the receive that asked for it, 0
 * when its landing was announced ahead. Any thread. */
static void put_submit(dtd_task_t *t, int peer, int gpu, uint64_t dst_off, uint64_t sem_off,
                       uint64_t target, uint64_t recv, int dev, uint64_t behind)
{
    rill_remote_xfer_t *x = calloc(1, sizeof(*x));
    if (!x) { /* the receiver waits for it */
        remote_abort(t, "out of host memory for the put into its landing");
        send_done(t, RILL_ERR_NO_MEMORY);
        return;
    }
    rill_data_t *d = t->args[0].data;
    x->kind = RILL_REMOTE_PUT;
    x->task = t;
    x->data = d;
    x->peer = peer;
    x->peer_gpu = gpu;
    x->dst_off = dst_off;
    x->sem_off = sem_off;
    x->target = target;
    x->done = put_done;
    x->enqueued = put_enqueued;
    x->cookie = recv;
    x->behind = behind;
    if (rill_trace_on()) /* producer's kernel -> consumer's kernel (recv_hook) */
        x->flow = kernel_flow_id(t, peer);
    int g = dev > 0 ? dev : 1;
    for (int i = 1; dev <= 0 && i < rill_device_count(); i++)
        if (rill_data_copy_current(d, rill_data_copy(d, i))) {
            g = i;
            break;
        }
    rill_device_t *gd = rill_device_get(g);
    gd->ops->remote(gd, x);
}

/* Send t's put goes behind its producer's body: decided under act_lock, where the send's
 * hook looks (pre_put then hands it over, the lock dropped). */
static void pre_decide(dtd_task_t *t)
{
    dtd_xfer_t *xf = t->args[1].ptr;
    xf->pre_status = RILL_SUCCESS;
    atomic_store_explicit(&xf->pre, 2, memory_order_relaxed); /* read under act_lock */
    rill_comm_expect(t->super.tp->ctx->comm, 1);              /* send_done takes it back */
}

/* Send t's version goes behind its producer's body on GPU dev (launch number launch), into
 * the landing ann announced (pre_decide was called). */
static void pre_put(dtd_task_t *t, const dtd_activation_t *ann, int dev, uint64_t launch)
{
    put_submit(t, ((dtd_xfer_t *)t->args[1].ptr)->peer, ann->gpu, ann->dst_off, ann->sem_off,
               ann->target, 0, dev, launch);
}

/* ------------------------------------------------------------ early announcements */

static inline uint64_t ann_hash(uint32_t tp_id, uint32_t dc_id, uint64_t key, uint32_t version,
                                int rank)
{
    uint64_t h = act_hash(tp_id, dc_id, key, version) ^ ((uint64_t)(rank + 1) * 0x100000001b3ull);
    return h ? h : 1;
}

/* The announcement of (tp, dc, key, version) for receiver rank (or its mark); act_lock
 * held. */
static dtd_activation_t *ann_take(uint64_t h, uint32_t tp_id, uint32_t dc_id, uint64_t key,
                                  uint32_t version, int rank)
{
    return entry_take(&dtd.anns, h, tp_id, dc_id, key, version, rank);
}

static void ann_add(uint64_t h, dtd_activation_t *a)
{
    a->next = rill_hmap_get(&dtd.anns, h);
    if (rill_hmap_put(&dtd.anns, h, a) != RILL_SUCCESS) {
        RILL_ERROR(RILL_LOG_DTD, "out of memory keeping an announcement");
        abort(); /* a lost one would leave a send waiting for a request that never comes */
    }
}

/* Comm thread, on the sender: the receiver's landing for a version (or that it reserved
 * none). If the send went out already (it asked for the GPU request), forget both: the
 * request will name the reserved landing. */
static void dtd_announce_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)comm;
    (void)arg;
    dtd_announce_msg_t m;
    if (len < sizeof(m)) {
        RILL_ERROR(RILL_LOG_DTD, "announcement of %zu bytes from rank %d is too short", len, src);
        return;
    }
    memcpy(&m, msg, sizeof(m));
    uint64_t h = ann_hash(m.tp_id, m.dc_id, m.key, m.version, src);
    rill_spinlock_lock(&dtd.act_lock);
    dtd_activation_t *sent = ann_take(h, m.tp_id, m.dc_id, m.key, m.version, src);
    if (sent && sent->flags == DTD_ANN_LAUNCHED && m.reserved) {
        /* its producer is launched on a GPU: the put goes behind its body there (if the body
         * completed meanwhile, the manager puts the current copy; the send's hook, which
         * sees xf->pre under this lock, leaves the put to it either way) */
        dtd_activation_t ann = {
            .gpu = m.gpu, .dst_off = m.dst_off, .sem_off = m.sem_off, .target = m.target
        };
        pre_decide(sent->recv);
        rill_spinlock_unlock(&dtd.act_lock);
        pre_put(sent->recv, &ann, sent->gpu, sent->handle);
        free(sent);
        return;
    }
    if (sent && sent->flags == DTD_ANN_SENT) {
        rill_spinlock_unlock(&dtd.act_lock);
        free(sent);
        return;
    }
    free(sent); /* a launch mark, and no landing reserved: the announcement replaces it */
    dtd_activation_t *a = calloc(1, sizeof(*a));
    if (!a) {
        rill_spinlock_unlock(&dtd.act_lock);
        RILL_ERROR(RILL_LOG_DTD, "out of memory keeping an announcement from rank %d", src);
        abort();
    }
    *a = (dtd_activation_t){ .tp_id = m.tp_id,
                             .dc_id = m.dc_id,
                             .version = m.version,
                             .key = m.key,
                             .src = src,
                             .flags = m.reserved ? DTD_ANN_RESERVED : DTD_ANN_NONE,
                             .gpu = m.gpu,
                             .dst_off = m.dst_off,
                             .sem_off = m.sem_off,
                             .target = m.target };
    ann_add(h, a);
    rill_spinlock_unlock(&dtd.act_lock);
}

/* Receiver, insertion: announce a receive's landing (reserved or none) to the sender. */
static void announce(dtd_task_t *t, const rill_remote_xfer_t *r)
{
    const dtd_xfer_t *xf = t->args[1].ptr;
    rill_data_t *d = t->args[0].data;
    dtd_announce_msg_t m = { .tp_id = t->super.tp->id,
                             .dc_id = d->dc ? d->dc->id : UINT32_MAX,
                             .version = xf->version,
                             .reserved = r && r->reserved,
                             .key = d->key };
    if (r && r->reserved) {
        m.gpu = r->gpu;
        m.dst_off = r->dst_off;
        m.sem_off = r->sem_off;
        m.target = r->target;
    }
    if (rill_comm_am_send(t->super.tp->ctx->comm, xf->peer, dtd.ann_tag, &m, sizeof(m),
                          t->super.prio.priority) != RILL_SUCCESS) {
        RILL_ERROR(RILL_LOG_DTD, "cannot announce datum (key %llu) to rank %d",
                   (unsigned long long)d->key, xf->peer);
        abort(); /* the sender would wait for a request that never comes */
    }
}

/* Manager thread: the reservation made ahead (reserved or not): announce it. */
static void reserve_done(rill_remote_xfer_t *r, rill_status_t s)
{
    (void)s; /* r->reserved says it */
    announce(r->task, r);
}

/* Receive t, sent GPU to GPU, no local task using its datum any more and its activation not
 * arrived (act_lock held): reserve its landing ahead; reserve_done announces it, reserved or
 * not. false when early announcements are off or no GPU takes it (nothing was sent). */
static bool recv_reserve(dtd_task_t *t)
{
    dtd_xfer_t *xf = t->args[1].ptr;
    if (xf->announced || !rill_param_get_bool(param_early))
        return false;
    rill_data_t *d = t->args[0].data;
    int g = landing_device(d);
    rill_device_t *dev = g > 0 ? rill_device_get(g) : NULL;
    rill_remote_xfer_t *r = dev && dev->ops->remote ? calloc(1, sizeof(*r)) : NULL;
    if (!r)
        return false;
    r->kind = RILL_REMOTE_RESERVE;
    r->device = g; /* the landing goes to the same manager, after it */
    r->task = t;
    r->data = d;
    r->peer = xf->peer;
    r->done = reserve_done;
    xf->early = r;
    xf->announced = true;
    dev->ops->remote(dev, r);
    return true;
}

/* dtd_complete, for a successor t that is a receive: drop one of its dependencies (returns
 * how many are left). When one is left, it is its activation (still expected) and the version
 * comes GPU to GPU, reserve its landing now. t is read before the decrement only: after it,
 * t may run and be freed, unless its expectation is still in dtd.acts, which holding
 * act_lock keeps there (and keeps another receive from taking its place in the table). (A
 * predecessor that completes while t is being inserted may be missed: t then asks when its
 * version is ready.) */
static int recv_dep_done(dtd_task_t *t)
{
    dtd_xfer_t *xf = t->args[1].ptr;
    rill_data_t *d = t->args[0].data;
    if (!xf->gpu)
        return atomic_fetch_sub_explicit(&t->deps, 1, memory_order_acq_rel) - 1;
    uint32_t dc_id = d->dc ? d->dc->id : UINT32_MAX;
    uint64_t h = act_hash(t->super.tp->id, dc_id, d->key, xf->version);
    rill_spinlock_lock(&dtd.act_lock);
    int left = atomic_fetch_sub_explicit(&t->deps, 1, memory_order_acq_rel) - 1;
    if (left == 1)
        for (dtd_activation_t *a = rill_hmap_get(&dtd.acts, h); a; a = a->next)
            if (a->recv == t) { /* still expected: t cannot run before we unlock */
                recv_reserve(t);
                break;
            }
    rill_spinlock_unlock(&dtd.act_lock);
    return left;
}

/* Comm thread: the receiver's GPU is ready for a version sent with DTD_ACT_GPU: hand the
 * copy to the manager of the GPU that holds the newest copy (else the first GPU). */
static void dtd_gpu_get_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)comm;
    (void)arg;
    dtd_gpu_get_msg_t m;
    if (len < sizeof(m)) {
        RILL_ERROR(RILL_LOG_DTD, "GPU request of %zu bytes from rank %d is too short", len, src);
        return;
    }
    memcpy(&m, msg, sizeof(m));
    dtd_task_t *t = (dtd_task_t *)(uintptr_t)m.send; /* our own pointer, echoed */
    if (!t || t->super.tc != &send_class.tc) {
        RILL_ERROR(RILL_LOG_DTD, "rank %d asked for a send this rank does not have", src);
        abort(); /* the send would never end: every rank would hang */
    }
    if (m.gpu < 0) {
        send_done(t, RILL_ERR_DEVICE);
        return;
    }
    put_submit(t, src, m.gpu, m.dst_off, m.sem_off, m.target, m.recv, 0, 0);
}

/* Manager thread, right after task's body was enqueued on GPU dev (launch number launch):
 * each send of a version it writes that goes GPU to GPU and waits for nothing but this task
 * can put behind the body on that GPU, so the chain producer kernel -> copy -> semaphore runs
 * with no host step. With the receiver's landing announced already, hand the put over now;
 * else leave a mark, and an announcement that comes while the body is in flight does it
 * (dtd_announce_handler). The send's hook, which runs once the completion reached the host,
 * then only ends the send (xf->pre). */
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
        if (s->super.tc != &send_class.tc ||
            atomic_load_explicit(&s->deps, memory_order_acquire) != 1 || !send_from_gpu(s))
            continue;
        dtd_xfer_t *xf = s->args[1].ptr;
        rill_data_t *d = s->args[0].data;
        uint32_t dc_id = d->dc ? d->dc->id : UINT32_MAX;
        uint64_t h = ann_hash(task->tp->id, dc_id, d->key, xf->version, xf->peer);
        rill_spinlock_lock(&dtd.act_lock);
        dtd_activation_t *ann = ann_take(h, task->tp->id, dc_id, d->key, xf->version, xf->peer);
        if (ann && ann->flags == DTD_ANN_RESERVED) {
            pre_decide(s);
            rill_spinlock_unlock(&dtd.act_lock);
            pre_put(s, ann, dev, launch);
            free(ann);
            continue;
        }
        if (ann) { /* the receiver reserved nothing: the hook sends as usual */
            ann_add(h, ann);
        } else {
            dtd_activation_t *mark = calloc(1, sizeof(*mark));
            if (mark) { /* else no put behind the body: the hook sends as usual */
                *mark = (dtd_activation_t){ .tp_id = task->tp->id,
                                            .dc_id = dc_id,
                                            .version = xf->version,
                                            .key = d->key,
                                            .src = xf->peer,
                                            .recv = s,
                                            .flags = DTD_ANN_LAUNCHED,
                                            .gpu = dev,
                                            .handle = launch };
                ann_add(h, mark);
            }
        }
        rill_spinlock_unlock(&dtd.act_lock);
    }
}

/* Worker: the receive of a version sent from GPU memory owes the sender one word (its
 * announcement, when none went ahead): send it now. */
static void recv_announce_once(dtd_task_t *t)
{
    dtd_xfer_t *xe = t->args[1].ptr;
    rill_spinlock_lock(&dtd.act_lock);
    bool tell = !xe->announced; /* the sender waits for one word from us: none ahead */
    xe->announced = true;
    rill_spinlock_unlock(&dtd.act_lock);
    if (tell)
        announce(t, NULL);
}

/* Worker: this rank cannot take the version rank a->src sends from GPU memory (status s,
 * why): fail the taskpool, and tell the sender, whose send would otherwise wait for ever. A
 * landing reserved ahead or a put already enqueued cannot be given up on one side: the run
 * ends (remote_abort). Frees a. */
static rill_hook_status_t recv_gpu_refuse(dtd_task_t *t, dtd_activation_t *a, rill_status_t s,
                                          const char *why)
{
    dtd_xfer_t *xe = t->args[1].ptr;
    recv_announce_once(t);
    if ((a->flags & DTD_ACT_PUT) || (xe->early && xe->early->reserved))
        remote_abort(t, why);
    rill_taskpool_fail(t->super.tp, s, "rank %d sends datum (key %llu) from GPU memory: %s", a->src,
                       (unsigned long long)t->args[0].data->key, why);
    if (!(a->flags & DTD_ACT_PUT)) { /* the sender's send ends with an error */
        dtd_gpu_get_msg_t m = { .send = a->handle, .gpu = -1 };
        rill_comm_am_send(t->super.tp->ctx->comm, a->src, dtd.get_tag, &m, sizeof(m), 0);
    }
    free(a->payload);
    free(a);
    return RILL_HOOK_ERROR;
}

/* Worker: the sender's version is in its GPU memory: a GPU here takes it. */
static rill_hook_status_t recv_to_gpu(dtd_task_t *t, dtd_activation_t *a)
{
    rill_data_t *data = t->args[0].data;
    dtd_xfer_t *xe = t->args[1].ptr;
    recv_announce_once(t);
    /* to the manager that took the reservation: it handles its requests in order */
    int g = xe->early ? xe->early->device : landing_device(data);
    rill_device_t *dev = g > 0 ? rill_device_get(g) : NULL;
    rill_remote_xfer_t *x = dev && dev->ops->remote ? calloc(1, sizeof(*x)) : NULL;
    if (!x)
        return recv_gpu_refuse(t, a, dev ? RILL_ERR_NO_MEMORY : RILL_ERR_DEVICE,
                               dev ? "this rank is out of host memory for its landing request"
                                   : "this rank has no GPU to receive it");
    x->kind = RILL_REMOTE_LAND;
    x->task = t;
    x->data = data;
    x->peer = a->src;
    x->cookie = a->handle;
    x->done = land_done;
    x->early = xe->early; /* freed by land_done */
    x->put_coming = a->flags & DTD_ACT_PUT;
    if (rill_trace_on()) /* the sender's put_submit names the same flow */
        x->flow = kernel_flow_id(t, t->super.tp->ctx->rank);
    free(a);
    dev->ops->remote(dev, x);
    return RILL_HOOK_ASYNC;
}

/* Receive: land the version in this rank's buffer, from the activation or by a GET. */
static rill_hook_status_t recv_hook(rill_worker_t *w, rill_task_t *task)
{
    (void)w;
    dtd_task_t *t = (dtd_task_t *)task;
    dtd_xfer_t *x = t->args[1].ptr;
    dtd_activation_t *a = x->act;
    rill_data_t *data = t->args[0].data;
    x->act = NULL;
    if (rill_trace_on()) { /* the remote flow ends here; a local one starts to the readers */
        uint64_t now = rill_time_ns(),
                 id = xfer_flow_id(task->tp->id, data, x->version, task->tp->ctx->rank);
        rill_trace_flow('f', id, now);
        /* from GPU memory, flow id ^ 1 runs from the producer's kernel on the sender's GPU
         * through the copies to the readers' kernels here (the GPU managers mark it) */
        if (!(a->flags & DTD_ACT_GPU))
            rill_trace_flow('s', id ^ 1, now);
        task->flow_in = id; /* dtd_complete hands id ^ 1 to the readers */
    }
    if (a->size != data->size) {
        if (a->flags & DTD_ACT_GPU) { /* the sender must hear of it */
            char why[160];
            snprintf(why, sizeof(why), "it is %llu bytes, this rank expects %zu",
                     (unsigned long long)a->size, data->size);
            return recv_gpu_refuse(t, a, RILL_ERR_MISMATCH, why);
        }
        rill_taskpool_fail(task->tp, RILL_ERR_MISMATCH,
                           "rank %d sent %llu bytes for datum (key %llu), this rank expects %zu",
                           a->src, (unsigned long long)a->size, (unsigned long long)data->key,
                           data->size);
        free(a->payload);
        free(a);
        return RILL_HOOK_ERROR;
    }
    if (a->payload) {
        memcpy(t->args[0].ptr, a->payload, data->size);
        free(a->payload);
        free(a);
        return RILL_HOOK_DONE;
    }
    if (a->flags & DTD_ACT_GPU)
        return recv_to_gpu(t, a);
    rill_status_t s = rill_comm_get(task->tp->ctx->comm, a->src, a->handle, t->args[0].ptr,
                                    data->size, task->prio.priority, xfer_done, t);
    free(a);
    if (s != RILL_SUCCESS) {
        rill_taskpool_fail(task->tp, s, "cannot get datum (key %llu) from rank %d",
                           (unsigned long long)data->key, x->peer);
        return RILL_HOOK_ERROR;
    }
    return RILL_HOOK_ASYNC;
}

/* Send: tell the destination the version is ready; small ones travel inside. */
static rill_hook_status_t send_hook(rill_worker_t *w, rill_task_t *task)
{
    (void)w;
    dtd_task_t *t = (dtd_task_t *)task;
    dtd_xfer_t *x = t->args[1].ptr;
    rill_data_t *data = t->args[0].data;
    rill_comm_t *comm = task->tp->ctx->comm;
    dtd_activate_msg_t m = {
        .tp_id = task->tp->id,
        .dc_id = data->dc ? data->dc->id : UINT32_MAX,
        .version = x->version,
        .key = data->key,
        .size = data->size,
    };
    rill_status_t s;
    if (rill_trace_on())
        rill_trace_flow('s', xfer_flow_id(task->tp->id, data, x->version, x->peer), rill_time_ns());
    const bool from_gpu = send_from_gpu(t);
    if (!from_gpu && data->size <= rill_comm_short_limit(comm)) {
        char buf[sizeof(m) + 65536];
        char *msg = data->size <= 65536 ? buf : malloc(sizeof(m) + data->size);
        if (!msg) {
            rill_taskpool_fail(task->tp, RILL_ERR_NO_MEMORY, "out of memory sending a datum");
            return RILL_HOOK_ERROR;
        }
        m.flags = DTD_ACT_INLINE;
        memcpy(msg, &m, sizeof(m));
        memcpy(msg + sizeof(m), t->args[0].ptr, data->size);
        s = rill_comm_am_send(comm, x->peer, dtd.am_tag, msg, sizeof(m) + data->size,
                              task->prio.priority);
        if (msg != buf)
            free(msg);
        if (s == RILL_SUCCESS)
            return RILL_HOOK_DONE;
    } else if (from_gpu) {
        /* the receiver announced its landing: put it there now (put_tell tells it);
         * else the receiver's GPU asks for it (dtd_gpu_get_handler), and an announcement
         * that comes later is dropped. send_done ends the send either way. */
        uint64_t h = ann_hash(m.tp_id, m.dc_id, m.key, m.version, x->peer);
        rill_spinlock_lock(&dtd.act_lock);
        if (atomic_load_explicit(&x->pre, memory_order_relaxed)) {
            /* the put was handed to the producer's GPU (dtd_launched): the last of it and
             * this hook ends the send */
            rill_spinlock_unlock(&dtd.act_lock);
            if (atomic_fetch_sub_explicit(&x->pre, 1, memory_order_acq_rel) == 1)
                send_done(t, x->pre_status);
            return RILL_HOOK_ASYNC;
        }
        dtd_activation_t *ann = ann_take(h, m.tp_id, m.dc_id, m.key, m.version, x->peer);
        if (ann && ann->flags == DTD_ANN_LAUNCHED) { /* no announcement came: as if none */
            free(ann);
            ann = NULL;
        }
        if (!ann) {
            dtd_activation_t *sent = calloc(1, sizeof(*sent));
            if (sent) {
                *sent = (dtd_activation_t){ .tp_id = m.tp_id,
                                            .dc_id = m.dc_id,
                                            .version = m.version,
                                            .key = m.key,
                                            .src = x->peer,
                                            .flags = DTD_ANN_SENT };
                ann_add(h, sent);
            }
        }
        rill_spinlock_unlock(&dtd.act_lock);
        rill_comm_expect(comm, 1);
        if (ann && (ann->flags & DTD_ANN_RESERVED)) {
            put_submit(t, x->peer, ann->gpu, ann->dst_off, ann->sem_off, ann->target, 0, 0, 0);
            free(ann);
            return RILL_HOOK_ASYNC;
        }
        free(ann);
        m.flags = DTD_ACT_GPU;
        m.handle = (uint64_t)(uintptr_t)t;
        s = rill_comm_am_send(comm, x->peer, dtd.am_tag, &m, sizeof(m), task->prio.priority);
        if (s == RILL_SUCCESS)
            return RILL_HOOK_ASYNC;
        rill_comm_expect(comm, -1);
    } else {
        rill_comm_expect(comm, 1); /* the peer's GET; send_done takes it back */
        s = rill_comm_expose(comm, t->args[0].ptr, data->size, 1, send_done, t, &m.handle);
        if (s == RILL_SUCCESS)
            s = rill_comm_am_send(comm, x->peer, dtd.am_tag, &m, sizeof(m), task->prio.priority);
        if (s == RILL_SUCCESS)
            return RILL_HOOK_ASYNC;
        rill_comm_expect(comm, -1);
    }
    rill_taskpool_fail(task->tp, s, "cannot send datum (key %llu) to rank %d",
                       (unsigned long long)data->key, x->peer);
    return RILL_HOOK_ERROR;
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
    dtd_xfer_t x = { .peer = peer, .version = tr->version, .act = NULL, .gpu = gpu };
    dtd_arg_t args[2] = {
        { .kind = recv ? RILL_DTD_INOUT : RILL_DTD_INPUT,
          .size = (uint32_t)tr->data->size,
          .ptr = ptr,
          .data = tr->data },
        { .kind = RILL_DTD_VALUE, .size = sizeof(x) },
    };
    const void *values[2] = { NULL, &x };
    dtd_task_t *t = task_create(tp, recv ? &recv_class : &send_class, priority, args, values, 2);
    if (!t)
        return RILL_ERR_NO_MEMORY;
    rill_status_t s = tracker_access(tr, ref_of(t), args[0].kind);
    if (dtd_dot_on)
        dtd_dot_remote(atomic_load_explicit(&t->serial, memory_order_relaxed),
                       xfer_flow_id(tp->super.id, tr->data, tr->version, recv ? tp->rank : peer),
                       !recv, peer);
    /* sent GPU to GPU: the receiver announces its landing (reserved ahead, or none) */
    bool gpu_recv = recv && gpu, early_now = false, none_now = false;
    if (recv && s == RILL_SUCCESS) {
        const rill_data_t *d = tr->data;
        uint32_t dc_id = d->dc ? d->dc->id : UINT32_MAX;
        uint64_t h = act_hash(tp->super.id, dc_id, d->key, tr->version);
        rill_spinlock_lock(&dtd.act_lock);
        dtd_activation_t *a = act_take(h, tp->super.id, dc_id, d->key, tr->version);
        if (a) { /* it arrived first */
            ((dtd_xfer_t *)t->args[1].ptr)->act = a;
            if (gpu_recv) { /* nothing to reserve ahead: tell the sender so */
                ((dtd_xfer_t *)t->args[1].ptr)->announced = true;
                none_now = true;
            }
        } else if ((a = calloc(1, sizeof(*a)))) {
            /* no local task uses the datum any more (the count only falls): its landing
             * may be reserved once the activation is expected (below: a receive whose
             * insertion fails must hold no reservation) */
            bool quiet = gpu_recv && atomic_load_explicit(&t->deps, memory_order_acquire) == 1;
            a->tp_id = tp->super.id;
            a->dc_id = dc_id;
            a->key = d->key;
            a->version = tr->version;
            a->src = peer;
            a->recv = t;
            atomic_fetch_add_explicit(&t->deps, 1, memory_order_relaxed); /* the activation */
            if (act_add(h, a) != RILL_SUCCESS) {
                atomic_fetch_sub_explicit(&t->deps, 1, memory_order_relaxed);
                free(a);
                a = NULL;
            } else {
                rill_comm_expect(tp->super.ctx->comm, 1);
                /* (act_lock still held; reserve_done announces it) */
                if (quiet)
                    early_now = recv_reserve(t);
            }
        }
        rill_spinlock_unlock(&dtd.act_lock);
        if (!a)
            s = RILL_ERR_NO_MEMORY;
        tr->have_local = true;
        tr->local_version = tr->version;
        if (gpu_recv) /* it lands in GPU memory: bring it home at the end (dtd_close) */
            tr->gpu_written = true;
        if (gpu_recv && s == RILL_SUCCESS) {
            RILL_VERBOSE(RILL_LOG_DTD, 2,
                         "receive of datum (key %llu) version %u from rank %d, GPU to GPU: %s",
                         (unsigned long long)tr->data->key, tr->version, peer,
                         early_now  ? "landing reserved ahead"
                         : none_now ? "the version is there already"
                                    : "local tasks still use the datum");
            if (none_now)
                announce(t, NULL);
        }
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
    rill_taskpool_pending_sub(super, 1); /* the insertion hold */
    return status;
}

static void dtd_describe(rill_taskpool_t *super, FILE *out)
{
    dtd_taskpool_t *tp = (dtd_taskpool_t *)super;
    fprintf(out, "  DTD taskpool %u: %llu tasks inserted, %lld not completed, %zu data tracked\n",
            super->id, (unsigned long long)tp->inserted, (long long)atomic_load(&tp->inflight),
            tp->norder);
    /* copied under act_lock, printed after it (the comm thread and the workers spin on it;
     * the output may be slow) */
    enum { SHOW = 10 };
    dtd_activation_t waits[SHOW], anns[SHOW];
    int nwaits = 0, nanns = 0, more_waits = 0, more_anns = 0;
    rill_spinlock_lock(&dtd.act_lock);
    RILL_HMAP_FOREACH(&dtd.acts, e)
    {
        for (dtd_activation_t *a = e->val; a; a = a->next)
            if (a->recv && a->tp_id == super->id) {
                if (nwaits < SHOW)
                    waits[nwaits++] = *a;
                else
                    more_waits++;
            }
    }
    /* GPU to GPU: sends that wait for the receiver's request, announcements not used yet */
    RILL_HMAP_FOREACH(&dtd.anns, e)
    {
        for (dtd_activation_t *a = e->val; a; a = a->next)
            if (a->tp_id == super->id) {
                if (nanns < SHOW)
                    anns[nanns++] = *a;
                else
                    more_anns++;
            }
    }
    rill_spinlock_unlock(&dtd.act_lock);
    for (int i = 0; i < nwaits; i++)
        fprintf(out, "  waiting for datum (collection %u, key %llu) version %u from rank %d\n",
                waits[i].dc_id, (unsigned long long)waits[i].key, waits[i].version, waits[i].src);
    if (more_waits)
        fprintf(out, "  ... and %d more receives waiting\n", more_waits);
    for (int i = 0; i < nanns; i++) {
        const dtd_activation_t *a = &anns[i];
        const char *what =
            a->flags == DTD_ANN_SENT
                ? "its activation went; waits for that rank's request with its landing"
            : a->flags == DTD_ANN_LAUNCHED ? "its producer launched on a GPU; no announcement yet"
            : a->flags == DTD_ANN_RESERVED ? "that rank announced its landing; the send has not run"
                                           : "that rank announced no landing; the send has not run";
        fprintf(out, "  GPU to GPU, datum (collection %u, key %llu) version %u to rank %d: %s\n",
                a->dc_id, (unsigned long long)a->key, a->version, a->src, what);
    }
    if (more_anns)
        fprintf(out, "  ... and %d more GPU-to-GPU sends or announcements\n", more_anns);
    int shown = nwaits;
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
        return RILL_ERR_INVALID_ARG;
    if (rill_worker_check_main("rill_dtd_taskpool_create", false) != RILL_SUCCESS)
        return RILL_ERR_BAD_STATE;
    dtd_taskpool_t *tp = calloc(1, sizeof(*tp));
    if (!tp)
        return RILL_ERR_NO_MEMORY;
    xfer_classes_init();
    rill_taskpool_init(&tp->super, ctx, &dtd_taskpool_ops);
    rill_hmap_init(&tp->trackers);
    atomic_init(&tp->inflight, 0);
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
    return atomic_load_explicit(&tp->inflight, memory_order_relaxed) <= tp->window / 2;
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
    return (h ^ v) * 1099511628211ull;
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
    if (tp->closed) {
        RILL_ERROR(RILL_LOG_DTD,
                   "rill_dtd_insert_task('%s'): taskpool %u was already waited for; insert "
                   "into a new taskpool",
                   cls->name, tp->super.id);
        return RILL_ERR_BAD_STATE;
    }
    if (rill_worker_check_main("rill_dtd_insert_task", false) != RILL_SUCCESS)
        return RILL_ERR_BAD_STATE;
    rill_worker_t *w = rill_worker_self();

    /* validate and collect the arguments */
    dtd_arg_t args[RILL_DTD_MAX_ARGS];
    const void *values[RILL_DTD_MAX_ARGS];
    int nargs = 0;
    bool urgent = false;
    va_list ap;
    va_start(ap, priority);
    for (;;) {
        int kind = va_arg(ap, int);
        if (kind == RILL_DTD_ARG_END)
            break;
        if (kind == RILL_DTD_URGENT) { /* a hint, not an argument of the body */
            urgent = va_arg(ap, int) != 0;
            continue;
        }
        if (nargs == RILL_DTD_MAX_ARGS && !(kind & RILL_DTD_ARRAY)) { /* (arrays: below) */
            va_end(ap);
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
            int n = va_arg(ap, int);
            rill_data_t **tiles = va_arg(ap, rill_data_t **);
            const char *bad = n < 0                           ? "a negative count"
                              : n > RILL_DTD_MAX_ARGS - nargs ? "more tiles than fit"
                              : n > 0 && !tiles               ? "a NULL array"
                                                              : NULL;
            for (int j = 0; j < n && !bad; j++)
                if (!tiles[j])
                    bad = "a NULL tile";
            if (bad) {
                va_end(ap);
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
            va_end(ap);
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
            size_t size = va_arg(ap, size_t);
            if (size > UINT32_MAX) {
                va_end(ap);
                RILL_ERROR(RILL_LOG_DTD,
                           "rill_dtd_insert_task('%s'): argument %d (%s) of %zu bytes; at most "
                           "4 GiB (was the size passed as a size_t?)",
                           cls->name, nargs, kind_name(mode), size);
                return RILL_ERR_INVALID_ARG;
            }
            a->size = (uint32_t)size;
            if (mode == RILL_DTD_VALUE) {
                values[nargs] = va_arg(ap, const void *);
                if (!values[nargs] && size) {
                    va_end(ap);
                    RILL_ERROR(RILL_LOG_DTD,
                               "rill_dtd_insert_task('%s'): argument %d is a VALUE of %zu bytes "
                               "at NULL",
                               cls->name, nargs, size);
                    return RILL_ERR_INVALID_ARG;
                }
            }
        } else {
            rill_data_t *data = va_arg(ap, rill_data_t *);
            if (!data) {
                va_end(ap);
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
    va_end(ap);
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
        uint64_t h = hash_mix(tp->hash, cls->name_hash);
        h = hash_mix(h, (uint64_t)(uint32_t)priority);
        for (int i = 0; i < nargs; i++) {
            h = hash_mix(h, args[i].kind | (uint64_t)args[i].affinity << 8 |
                                (uint64_t)args[i].size << 16);
            if (args[i].data && args[i].data->dc) /* private data may differ per rank */
                h = hash_mix(h, args[i].data->dc->id ^ args[i].data->key << 20);
        }
        tp->hash = h;
        dtd_seq_record(tp);
        if (dtd_seq_pending())
            dtd_seq_check(tp);
    }
    if (t)
        t->super.urgent = urgent;
    if (urgent) /* before the tasks inserted after it reach a GPU manager (core.h) */
        atomic_store_explicit(&tp->super.marks_urgent, true, memory_order_relaxed);

    /* dependencies and data movement, flow by flow */
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
    if (atomic_load_explicit(&tp->inflight, memory_order_relaxed) >= tp->window) {
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
