/* Schedulers: lfq (per-worker priority queues, stealing by hwloc distance) and gpq
 * (one global priority queue), and the priority heap they share. */
#include "scheduler.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* A heap behind a spinlock, with a size readable without the lock so that thieves and
 * idle workers skip empty queues cheaply. */
typedef struct locked_heap {
    rill_spinlock_t lock;
    atomic_int size; /* relaxed hint; the heap under the lock is the truth */
    uint64_t next_seq;
    rill_heap_t heap;
} __attribute__((aligned(64))) locked_heap_t;

static void locked_heap_init(locked_heap_t *q)
{
    rill_spinlock_init(&q->lock);
    atomic_init(&q->size, 0);
    q->next_seq = 0;
    rill_heap_init(&q->heap);
}

static void locked_heap_push_list(locked_heap_t *q, rill_task_t *list)
{
    rill_spinlock_lock(&q->lock);
    for (rill_task_t *t = list, *next; t; t = next) {
        next = t->next;
        t->prio.seq = q->next_seq++; /* FIFO among equal priorities */
        if (rill_heap_push(&q->heap, &t->prio) != RILL_SUCCESS) {
            rill_spinlock_unlock(&q->lock);
            RILL_ERROR(RILL_LOG_SCHED, "out of memory growing a ready queue to %zu tasks",
                       q->heap.count + 1);
            abort(); /* a task that cannot be queued would hang the run */
        }
    }
    atomic_store_explicit(&q->size, (int)q->heap.count, memory_order_relaxed);
    rill_spinlock_unlock(&q->lock);
}

/* Pop the most urgent task. A thief (steal) passes a queue whose lock is held rather than
 * wait for it: on a many-core machine, idle workers queueing on the lock of the one queue
 * that has work starve the thread that pushes into it. (A worker's last look before it
 * sleeps waits for the lock: the holder may leave a task behind.) */
static rill_task_t *locked_heap_pop(locked_heap_t *q, bool steal)
{
    if (atomic_load_explicit(&q->size, memory_order_relaxed) == 0)
        return NULL;
    if (steal) {
        if (!rill_spinlock_trylock(&q->lock))
            return NULL;
    } else {
        rill_spinlock_lock(&q->lock);
    }
    rill_heap_item_t *it = rill_heap_pop(&q->heap);
    atomic_store_explicit(&q->size, (int)q->heap.count, memory_order_relaxed);
    rill_spinlock_unlock(&q->lock);
    return it ? (rill_task_t *)((char *)it - offsetof(rill_task_t, prio)) : NULL;
}

/* ------------------------------------------------------------ lfq */

typedef struct lfq_state {
    locked_heap_t *queues; /* one per worker */
    atomic_uint next_rr;   /* round robin for pushes from non-worker threads */
} lfq_state_t;

static rill_status_t lfq_install(rill_context_t *ctx)
{
    lfq_state_t *s = calloc(1, sizeof(*s));
    if (!s)
        return RILL_ERR_NO_MEMORY;
    if (posix_memalign((void **)&s->queues, 64, (size_t)ctx->nworkers * sizeof(locked_heap_t))) {
        free(s);
        return RILL_ERR_NO_MEMORY;
    }
    for (int i = 0; i < ctx->nworkers; i++) {
        locked_heap_init(&s->queues[i]);
        ctx->workers[i].sched_data = &s->queues[i];
    }
    ctx->sched_state = s;
    return RILL_SUCCESS;
}

static void lfq_push(rill_context_t *ctx, rill_worker_t *w, rill_task_t *list, int n)
{
    lfq_state_t *s = ctx->sched_state;
    (void)n;
    if (w) {
        locked_heap_push_list(w->sched_data, list);
        return;
    }
    unsigned i = atomic_fetch_add_explicit(&s->next_rr, 1, memory_order_relaxed);
    locked_heap_push_list(&s->queues[i % (unsigned)ctx->nworkers], list);
}

static rill_task_t *lfq_select(rill_worker_t *w)
{
    rill_task_t *t = locked_heap_pop(w->sched_data, false);
    if (t)
        return t;
    lfq_state_t *s = w->ctx->sched_state;
    for (int i = 0; i < w->ctx->nworkers - 1; i++) {
        t = locked_heap_pop(&s->queues[w->steal_order[i]], !w->last_look);
        if (t)
            return t;
    }
    return NULL;
}

static void lfq_remove(rill_context_t *ctx)
{
    lfq_state_t *s = ctx->sched_state;
    if (!s)
        return;
    for (int i = 0; i < ctx->nworkers; i++)
        rill_heap_fini(&s->queues[i].heap);
    free(s->queues);
    free(s);
    ctx->sched_state = NULL;
}

const rill_sched_ops_t rill_sched_lfq = {
    .name = "lfq",
    .priority = 20,
    .install = lfq_install,
    .push = lfq_push,
    .select = lfq_select,
    .remove = lfq_remove,
};

/* ------------------------------------------------------------ gpq */

static rill_status_t gpq_install(rill_context_t *ctx)
{
    locked_heap_t *q;
    if (posix_memalign((void **)&q, 64, sizeof(*q)))
        return RILL_ERR_NO_MEMORY;
    locked_heap_init(q);
    ctx->sched_state = q;
    return RILL_SUCCESS;
}

static void gpq_push(rill_context_t *ctx, rill_worker_t *w, rill_task_t *list, int n)
{
    (void)w;
    (void)n;
    locked_heap_push_list(ctx->sched_state, list);
}

static rill_task_t *gpq_select(rill_worker_t *w)
{
    return locked_heap_pop(w->ctx->sched_state, false);
}

static void gpq_remove(rill_context_t *ctx)
{
    locked_heap_t *q = ctx->sched_state;
    if (!q)
        return;
    rill_heap_fini(&q->heap);
    free(q);
    ctx->sched_state = NULL;
}

const rill_sched_ops_t rill_sched_gpq = {
    .name = "gpq",
    .priority = 10,
    .install = gpq_install,
    .push = gpq_push,
    .select = gpq_select,
    .remove = gpq_remove,
};

/* ------------------------------------------------------------ common */

/* A GPU manager's sink (rill_sched_set_sink): tasks it releases that choose its GPU stay
 * with it, with no round trip through a worker. */
static _Thread_local struct {
    int device;
    void (*take)(void *arg, rill_task_t *task);
    void *arg;
} tl_sink;

void rill_sched_set_sink(int device, void (*take)(void *arg, rill_task_t *task), void *arg)
{
    tl_sink.device = device;
    tl_sink.take = take;
    tl_sink.arg = arg;
}

void rill_sched_push(rill_context_t *ctx, rill_worker_t *w, rill_task_t *list, int n)
{
    if (!list)
        return;
    if (tl_sink.take) {
        rill_task_t *keep = NULL;
        int nkeep = 0;
        while (list) {
            rill_task_t *t = list, *next = t->next;
            list = next;
            int dev = t->device >= 0 ? t->device : rill_task_choose_device(ctx, t);
            if (dev == tl_sink.device) {
                rill_task_enqueued(t, dev);
                tl_sink.take(tl_sink.arg, t);
            } else {
                t->next = keep;
                keep = t;
                nkeep++;
            }
        }
        if (!keep)
            return;
        list = keep;
        n = nkeep;
    }
    ctx->sched->push(ctx, w, list, n);
    if (rill_trace_on())
        rill_trace_counter("ready tasks", rill_time_ns(),
                           atomic_fetch_add_explicit(&ctx->trace_ready, n, memory_order_relaxed) +
                               n);
    /* the push (a release of the queue lock) precedes the signal: see rill_evcount_t */
    if (ctx->max_spinners == 0) {
        rill_evcount_signal(&ctx->idle, n);
        return;
    }
    /* Spinners are counted (runtime_idle_spinners): wake sleepers only for the tasks the
     * spinners cannot take. Ordering (a Dekker pair): the push's size store, this seq_cst
     * fence, then the load of spinners; a spinner that stops looking decrements spinners,
     * issues a seq_cst fence, then looks at the queues once more (work_until in context.c).
     * So either this load sees the decrement and wakes a sleeper, or that last look sees
     * the task. A spinner that stops because it found a task wakes a sleeper when it was
     * the last one; were a task missed all the same, a sleeper's wait times out (10 ms,
     * growing to 80 ms while nothing is pushed). */
    atomic_thread_fence(memory_order_seq_cst);
    int spinning = atomic_load_explicit(&ctx->spinners, memory_order_relaxed);
    if (n > spinning)
        rill_evcount_signal(&ctx->idle, n - spinning);
}
