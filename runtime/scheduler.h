/* Schedulers: components chosen by the `sched` parameter. Internal. */
#ifndef RILL_SCHEDULER_H
#define RILL_SCHEDULER_H

#include "core.h"

/**
 * A scheduler. install/remove run on the main thread with no worker running;
 * push and select run on any worker, push also on the comm thread (w == NULL).
 */
struct rill_sched_ops {
    const char *name;
    int priority; /* the default is the registered scheduler of highest priority */
    rill_status_t (*install)(rill_context_t *ctx);
    /** Make the n tasks of list (linked through ->next) ready. */
    void (*push)(rill_context_t *ctx, rill_worker_t *w, rill_task_t *list, int n);
    /** The next task for w, or NULL. */
    rill_task_t *(*select)(rill_worker_t *w);
    void (*remove)(rill_context_t *ctx);
};

extern const rill_sched_ops_t rill_sched_lfq;
extern const rill_sched_ops_t rill_sched_gpq;

/** Hand ready tasks to the scheduler and wake sleeping workers. Any thread. */
void rill_sched_push(rill_context_t *ctx, rill_worker_t *w, rill_task_t *list, int n);

/* ------------------------------------------------------------ priority heap */

/** A binary max-heap of tasks ordered by (priority, then lower seq first). Not
 * thread-safe: schedulers lock around it. */
typedef struct rill_task_heap {
    rill_task_t **items;
    int size, cap;
    uint64_t next_seq;
} rill_task_heap_t;

void rill_task_heap_init(rill_task_heap_t *h);
void rill_task_heap_fini(rill_task_heap_t *h);
/** Returns -1 when out of memory (the task is not inserted). */
int rill_task_heap_push(rill_task_heap_t *h, rill_task_t *t);
rill_task_t *rill_task_heap_pop(rill_task_heap_t *h);

#endif
