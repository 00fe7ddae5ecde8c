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

#endif
