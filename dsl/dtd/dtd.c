/* Dynamic task discovery: insert_task builds the graph from the order of accesses to
 * each datum; completion releases successors through lock-free successor lists. */
#include "dtd_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler.h"

/* Task size classes: header + args (+ values/scratch when they fit). */
static const size_t size_classes[] = { 256, 512, 1024, 2048 };
#define NB_SIZE_CLASSES 4

static struct {
    rill_mempool_t tasks[NB_SIZE_CLASSES];
    rill_mempool_t succs;
    atomic_ullong next_serial;
    bool ready;
} dtd;

static rill_param_t *param_window;

rill_status_t rill_dtd_register_params(void)
{
    return rill_param_register_int("dtd_window_size",
                                   "Most DTD tasks inserted and not yet completed; beyond it the "
                                   "inserting thread runs tasks until half of them completed",
                                   RILL_PARAM_LEVEL_USER, 8000, 1, 1 << 30, &param_window);
}

rill_status_t rill_dtd_init(rill_context_t *ctx)
{
    (void)ctx;
    rill_status_t s;
    for (int i = 0; i < NB_SIZE_CLASSES; i++)
        if ((s = rill_mempool_init(&dtd.tasks[i], size_classes[i])) != RILL_SUCCESS)
            goto err;
    if ((s = rill_mempool_init(&dtd.succs, sizeof(dtd_succ_t))) != RILL_SUCCESS)
        goto err;
    atomic_init(&dtd.next_serial, 1);
    dtd.ready = true;
    return RILL_SUCCESS;
err:
    RILL_ERROR(RILL_LOG_DTD, "cannot create the DTD task pools: %s", rill_status_string(s));
    return s;
}

void rill_dtd_fini(void)
{
    if (!dtd.ready)
        return;
    for (int i = 0; i < NB_SIZE_CLASSES; i++)
        rill_mempool_fini(&dtd.tasks[i]);
    rill_mempool_fini(&dtd.succs);
    dtd.ready = false;
}

/* ------------------------------------------------------------ classes */

static rill_hook_status_t dtd_hook_cpu(rill_worker_t *w, rill_task_t *task);
static void dtd_complete(rill_worker_t *w, rill_task_t *task, rill_hook_status_t status);

rill_status_t rill_dtd_class_create(rill_context_t *ctx, const char *name,
                                    rill_dtd_body_fn cpu_body, rill_dtd_class_t **cls_p)
{
    if (!ctx || !name || !cpu_body || !cls_p) {
        RILL_ERROR(RILL_LOG_DTD, "rill_dtd_class_create: ctx, name, cpu_body and cls_p must all "
                                 "be given");
        return RILL_ERR_INVALID_ARG;
    }
    rill_dtd_class_t *cls = calloc(1, sizeof(*cls));
    if (!cls)
        return RILL_ERR_NO_MEMORY;
    snprintf(cls->name, sizeof(cls->name), "%s", name);
    cls->cpu_body = cpu_body;
    cls->tc.name = cls->name;
    cls->tc.nb_incarnations = 1;
    cls->tc.incarnations[0].type = RILL_DEVICE_CPU;
    cls->tc.incarnations[0].hook = dtd_hook_cpu;
    cls->tc.complete = dtd_complete;
    *cls_p = cls;
    return RILL_SUCCESS;
}

rill_status_t rill_dtd_class_destroy(rill_dtd_class_t **cls_p)
{
    if (!cls_p || !*cls_p)
        return RILL_ERR_INVALID_ARG;
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

static rill_hook_status_t dtd_hook_cpu(rill_worker_t *w, rill_task_t *task)
{
    (void)w;
    dtd_task_t *t = (dtd_task_t *)task;
    rill_status_t s = t->cls->cpu_body(task);
    if (s == RILL_SUCCESS)
        return RILL_HOOK_DONE;
    rill_taskpool_fail(task->tp, RILL_ERR_TASK, "task '%s' (#%llu) failed: %s (%d)", t->cls->name,
                       (unsigned long long)atomic_load(&t->serial), rill_status_string(s), s);
    return RILL_HOOK_ERROR;
}

static void dtd_complete(rill_worker_t *w, rill_task_t *task, rill_hook_status_t status)
{
    (void)status; /* a failed task still releases its successors: the run ends, no hang */
    dtd_task_t *t = (dtd_task_t *)task;
    dtd_taskpool_t *tp = (dtd_taskpool_t *)task->tp;
    for (int i = 0; i < t->nargs; i++)
        if (t->args[i].kind == RILL_DTD_OUTPUT || t->args[i].kind == RILL_DTD_INOUT)
            atomic_fetch_add_explicit(&t->args[i].data->version, 1, memory_order_relaxed);

    /* close the list: acq_rel pairs with the release CAS of add_edge (we see every node)
     * and orders this task's writes before its successors' reads */
    dtd_succ_t *node = atomic_exchange_explicit(&t->succs, DTD_CLOSED, memory_order_acq_rel);
    rill_task_t *ready = NULL;
    int nready = 0;
    while (node) {
        dtd_succ_t *next = node->next;
        dtd_task_t *s = node->task;
        if (atomic_fetch_sub_explicit(&s->deps, 1, memory_order_acq_rel) == 1) {
            s->super.next = ready;
            ready = &s->super;
            nready++;
        }
        rill_mempool_free(&dtd.succs, node);
        node = next;
    }
    rill_sched_push(w->ctx, w, ready, nready);
    atomic_fetch_sub_explicit(&tp->inflight, 1, memory_order_relaxed);
    task_free(t);
    rill_taskpool_pending_sub(&tp->super, 1);
}

/* ------------------------------------------------------------ trackers */

static dtd_tracker_t *tracker_get(dtd_taskpool_t *tp, rill_data_t *data)
{
    dtd_tracker_t *tr = rill_hmap_get(&tp->trackers, (uint64_t)(uintptr_t)data);
    if (tr)
        return tr;
    tr = calloc(1, sizeof(*tr));
    if (!tr)
        return NULL;
    tr->data = data;
    if (rill_hmap_put(&tp->trackers, (uint64_t)(uintptr_t)data, tr) != RILL_SUCCESS) {
        free(tr);
        return NULL;
    }
    return tr;
}

static rill_status_t tracker_add_reader(dtd_tracker_t *tr, dtd_ref_t r)
{
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

/* Record task r's access to tr's datum and add the edges it implies:
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

/* ------------------------------------------------------------ taskpools */

static rill_status_t dtd_close(rill_taskpool_t *super)
{
    dtd_taskpool_t *tp = (dtd_taskpool_t *)super;
    tp->closed = true;
    rill_taskpool_pending_sub(super, 1); /* the insertion hold */
    return RILL_SUCCESS;
}

static void dtd_describe(rill_taskpool_t *super, FILE *out)
{
    dtd_taskpool_t *tp = (dtd_taskpool_t *)super;
    fprintf(out, "  DTD taskpool %u: %llu tasks inserted, %lld not completed, %zu data tracked\n",
            super->id, (unsigned long long)tp->inserted, (long long)atomic_load(&tp->inflight),
            tp->trackers.count);
    int shown = 0;
    RILL_HMAP_FOREACH(&tp->trackers, e)
    {
        dtd_tracker_t *tr = e->val;
        if (!ref_alive(tr->last_writer) || shown >= 10)
            continue;
        dtd_task_t *t = tr->last_writer.task;
        fprintf(out,
                "  datum %p (key %llu): last writer '%s' #%llu not completed, waiting on %d "
                "dependencies\n",
                (void *)tr->data, (unsigned long long)tr->data->key, t->cls->name,
                (unsigned long long)tr->last_writer.serial, atomic_load(&t->deps));
        shown++;
    }
}

static void dtd_destroy(rill_taskpool_t *super)
{
    dtd_taskpool_t *tp = (dtd_taskpool_t *)super;
    RILL_HMAP_FOREACH(&tp->trackers, e)
    {
        dtd_tracker_t *tr = e->val;
        free(tr->readers);
        free(tr);
    }
    rill_hmap_fini(&tp->trackers);
    free(tp);
}

static const rill_taskpool_ops_t dtd_taskpool_ops = {
    .name = "dtd",
    .close = dtd_close,
    .describe = dtd_describe,
    .destroy = dtd_destroy,
};

rill_status_t rill_dtd_taskpool_create(rill_context_t *ctx, rill_taskpool_t **tp_p)
{
    if (!ctx || !tp_p)
        return RILL_ERR_INVALID_ARG;
    dtd_taskpool_t *tp = calloc(1, sizeof(*tp));
    if (!tp)
        return RILL_ERR_NO_MEMORY;
    rill_taskpool_init(&tp->super, ctx, &dtd_taskpool_ops);
    rill_hmap_init(&tp->trackers);
    atomic_init(&tp->inflight, 0);
    tp->window = rill_param_get_int(param_window);
    *tp_p = &tp->super;
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ insertion */

static bool window_drained(void *arg)
{
    dtd_taskpool_t *tp = arg;
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

static inline size_t align_up(size_t x, size_t a)
{
    return (x + a - 1) & ~(a - 1);
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
    rill_worker_t *w = rill_worker_self();
    if (!w || w->id != 0) {
        RILL_ERROR(RILL_LOG_DTD, "rill_dtd_insert_task('%s') must be called from the main thread",
                   cls->name);
        return RILL_ERR_BAD_STATE;
    }

    /* first pass: validate and size */
    dtd_arg_t args[RILL_DTD_MAX_ARGS];
    const void *values[RILL_DTD_MAX_ARGS];
    int nargs = 0;
    size_t extra = 0;
    va_list ap;
    va_start(ap, priority);
    for (;;) {
        int kind = va_arg(ap, int);
        if (kind == RILL_DTD_ARG_END)
            break;
        if (nargs == RILL_DTD_MAX_ARGS) {
            va_end(ap);
            RILL_ERROR(RILL_LOG_DTD,
                       "rill_dtd_insert_task('%s'): more than %d arguments (is RILL_DTD_ARG_END "
                       "missing?)",
                       cls->name, RILL_DTD_MAX_ARGS);
            return RILL_ERR_INVALID_ARG;
        }
        dtd_arg_t *a = &args[nargs];
        memset(a, 0, sizeof(*a));
        int mode = kind & RILL_DTD_MODE_MASK;
        if ((kind & ~(RILL_DTD_MODE_MASK | RILL_DTD_AFFINITY)) ||
            (mode != RILL_DTD_VALUE && mode != RILL_DTD_SCRATCH && mode != RILL_DTD_INPUT &&
             mode != RILL_DTD_OUTPUT && mode != RILL_DTD_INOUT) ||
            ((kind & RILL_DTD_AFFINITY) && (mode == RILL_DTD_VALUE || mode == RILL_DTD_SCRATCH))) {
            va_end(ap);
            RILL_ERROR(RILL_LOG_DTD,
                       "rill_dtd_insert_task('%s'): argument %d has kind 0x%x; allowed: "
                       "RILL_DTD_VALUE, RILL_DTD_SCRATCH, or RILL_DTD_INPUT/OUTPUT/INOUT "
                       "optionally | RILL_DTD_AFFINITY, and RILL_DTD_ARG_END last",
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
            values[nargs] = NULL;
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
            extra = align_up(extra, 16) + size;
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
            a->ptr = rill_data_ptr(data);
        }
        nargs++;
    }
    va_end(ap);

    /* allocate: header + args, values and scratch inline when they fit */
    size_t head = sizeof(dtd_task_t) + (size_t)nargs * sizeof(dtd_arg_t);
    size_t inline_need = align_up(head, 16) + extra;
    int sc = 0;
    while (sc < NB_SIZE_CLASSES - 1 && size_classes[sc] < inline_need)
        sc++;
    bool inline_extra = size_classes[sc] >= inline_need;
    if (!inline_extra)
        while (sc < NB_SIZE_CLASSES - 1 && size_classes[sc] < head)
            sc++;
    dtd_task_t *t = rill_mempool_alloc(&dtd.tasks[sc]);
    if (!t)
        return RILL_ERR_NO_MEMORY;
    char *store;
    t->extra = NULL;
    if (inline_extra) {
        store = (char *)t + align_up(head, 16);
    } else {
        t->extra = malloc(extra);
        if (!t->extra) {
            atomic_store(&t->serial, 0);
            rill_mempool_free(&dtd.tasks[sc], t);
            return RILL_ERR_NO_MEMORY;
        }
        store = t->extra;
    }
    t->super.next = NULL;
    t->super.tc = &cls->tc;
    t->super.tp = &tp->super;
    t->super.priority = priority;
    t->super.worker = -1;
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
    tp->inserted++;

    /* dependencies, flow by flow */
    dtd_ref_t self = { t, serial };
    for (int i = 0; i < nargs; i++) {
        if (t->args[i].kind < RILL_DTD_INPUT)
            continue;
        dtd_tracker_t *tr = tracker_get(tp, t->args[i].data);
        rill_status_t s = tr ? tracker_access(tr, self, t->args[i].kind) : RILL_ERR_NO_MEMORY;
        if (s != RILL_SUCCESS) {
            /* edges already added keep the graph consistent: the task still runs */
            rill_taskpool_fail(&tp->super, s, "out of memory inserting task '%s'", cls->name);
            break;
        }
    }

    /* drop the insertion guard: acq_rel pairs with the predecessors' decrements */
    if (atomic_fetch_sub_explicit(&t->deps, 1, memory_order_acq_rel) == 1)
        rill_sched_push(w->ctx, w, &t->super, 1);

    if (atomic_load_explicit(&tp->inflight, memory_order_relaxed) >= tp->window)
        rill_worker_work_until(w, window_drained, tp, &tp->super);
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ bodies */

rill_status_t rill_dtd_unpack_args(rill_task_t *task, ...)
{
    if (!task || task->tc->complete != dtd_complete) {
        RILL_ERROR(RILL_LOG_DTD, "rill_dtd_unpack_args: not called on a DTD task");
        return RILL_ERR_INVALID_ARG;
    }
    dtd_task_t *t = (dtd_task_t *)task;
    va_list ap;
    va_start(ap, task);
    for (int i = 0; i < t->nargs; i++) {
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

rill_status_t rill_dtd_data_flush(rill_taskpool_t *super, rill_data_t *data)
{
    dtd_taskpool_t *tp = (dtd_taskpool_t *)super;
    if (!tp || !data || tp->super.ops != &dtd_taskpool_ops) {
        RILL_ERROR(RILL_LOG_DTD, "rill_dtd_data_flush: needs a DTD taskpool and a datum");
        return RILL_ERR_INVALID_ARG;
    }
    if (tp->closed) {
        RILL_ERROR(RILL_LOG_DTD, "rill_dtd_data_flush: taskpool %u was already waited for",
                   tp->super.id);
        return RILL_ERR_BAD_STATE;
    }
    /* One process: the datum's only copy is its home copy, so there is nothing to move
     * and later accesses must stay ordered after earlier ones: keep the history. */
    tp->flushed++;
    return RILL_SUCCESS;
}
