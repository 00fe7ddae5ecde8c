/* Taskpools: the pending count that detects termination, errors, wait and destroy. */
#include "core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rill_taskpool_init(rill_taskpool_t *tp, rill_context_t *ctx, const rill_taskpool_ops_t *ops)
{
    tp->ctx = ctx;
    tp->ops = ops;
    tp->id = atomic_fetch_add_explicit(&ctx->next_taskpool_id, 1, memory_order_relaxed);
    atomic_init(&tp->pending, 1);
    atomic_init(&tp->terminated, 0);
    atomic_init(&tp->error, 0);
    atomic_init(&tp->marks_urgent, false);
    tp->error_msg[0] = '\0';
    rill_spinlock_init(&tp->error_lock);
    tp->waited = false;
    tp->used = false;
    tp->prev = NULL;
    tp->next = ctx->taskpools;
    if (tp->next)
        tp->next->prev = tp;
    ctx->taskpools = tp;
    atomic_fetch_add(&ctx->nb_taskpools, 1);
}

void rill_taskpool_pending_add(rill_taskpool_t *tp, long long n)
{
    atomic_fetch_add_explicit(&tp->pending, n, memory_order_relaxed);
}

void rill_taskpool_pending_sub(rill_taskpool_t *tp, long long n)
{
    /* the waiter may free tp as soon as it sees terminated: read what we need first */
    rill_context_t *ctx = tp->ctx;
    /* acq_rel: everything the tasks did happens-before the termination seen by the waiter
     * (its acquire load of terminated pairs with the release store below) */
    if (atomic_fetch_sub_explicit(&tp->pending, n, memory_order_acq_rel) == n) {
        atomic_store_explicit(&tp->terminated, 1, memory_order_release);
        rill_evcount_signal(&ctx->idle, 0);
    }
}

void rill_taskpool_fail(rill_taskpool_t *tp, rill_status_t status, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    RILL_ERROR(RILL_LOG_RUNTIME, "taskpool %u: %s", tp->id, msg);
    rill_spinlock_lock(&tp->error_lock);
    if (atomic_load_explicit(&tp->error, memory_order_relaxed) == 0) {
        snprintf(tp->error_msg, sizeof(tp->error_msg), "%s", msg);
        atomic_store_explicit(&tp->error, status, memory_order_release);
    }
    rill_spinlock_unlock(&tp->error_lock);
}

static bool taskpool_done(void *arg)
{
    rill_taskpool_t *tp = arg;
    return atomic_load_explicit(&tp->terminated, memory_order_acquire);
}

/* The distributed termination's barrier, as a max-reduction of this rank's failure: a task
 * that failed on one rank fails the taskpool on every rank (its successors elsewhere ran on
 * what it left), each naming the lowest rank that failed and returning its status. */
static void taskpool_end_together(rill_taskpool_t *tp)
{
    const rill_context_t *ctx = tp->ctx;
    rill_status_t mine = (rill_status_t)atomic_load_explicit(&tp->error, memory_order_acquire);
    /* (nranks - rank) << 32 | -status: the maximum is the lowest failed rank's */
    uint64_t v = mine ? (uint64_t)(ctx->nranks - ctx->rank) << 32 | (uint32_t)-mine : 0, all = 0;
    rill_status_t s = rill_comm_allreduce_u64(ctx->comm, &v, &all, 1, RILL_COMM_MAX);
    if (s != RILL_SUCCESS)
        rill_taskpool_fail(tp, s, "the termination barrier failed: %s", rill_status_string(s));
    else if (all && !mine)
        rill_taskpool_fail(tp, -(rill_status_t)(uint32_t)all,
                           "rank %d's part of it failed (%s; its own message says why), so its "
                           "results here may be wrong too",
                           ctx->nranks - (int)(all >> 32),
                           rill_status_string(-(rill_status_t)(uint32_t)all));
}

rill_status_t rill_taskpool_wait(rill_taskpool_t *tp)
{
    if (!tp)
        return rill_arg_null("rill_taskpool_wait", "the taskpool");
    /* the thread first: waited is the main thread's (a task body that called this read it
     * while the main thread set it: ThreadSanitizer, test_dtd_reentry_2w) */
    if (rill_worker_check_main("rill_taskpool_wait", false) != RILL_SUCCESS)
        return RILL_ERR_BAD_STATE;
    if (tp->waited) {
        RILL_ERROR(RILL_LOG_RUNTIME,
                   "rill_taskpool_wait: taskpool %u was already waited for; a taskpool is waited "
                   "for once, then destroyed",
                   tp->id);
        return RILL_ERR_BAD_STATE;
    }
    rill_worker_t *w = rill_worker_self();
    tp->waited = true;
    /* the whole wait is watched: closing may wait in collectives, which keep this thread
     * running tasks (a rank that only slept there could starve the other ranks) */
    rill_watchdog_enter(tp->ctx, "the end of a taskpool (rill_taskpool_wait)", tp);
    rill_status_t status = tp->ops->close(tp);
    if (status != RILL_SUCCESS)
        rill_taskpool_fail(tp, status, "closing the taskpool failed: %s",
                           rill_status_string(status));
    rill_worker_work_until(w, taskpool_done, tp);
    /* Distributed termination. Locally the taskpool is quiescent: every task of this rank
     * ran and every transfer it owed (sends are tasks that end at PUT_END) completed; the
     * front end guarantees no message for it can still arrive (DTD: every rank knows every
     * receive it expects). Agreeing that all ranks reached that point ends it everywhere. */
    if (tp->ctx->nranks > 1)
        taskpool_end_together(tp);
    rill_watchdog_leave(tp->ctx);
    if (tp->ops->ended)
        tp->ops->ended(tp);
    return (rill_status_t)atomic_load_explicit(&tp->error, memory_order_acquire);
}

rill_status_t rill_taskpool_destroy(rill_taskpool_t **tp_p)
{
    if (!tp_p || !*tp_p)
        return rill_arg_null("rill_taskpool_destroy", tp_p ? "*tp_p (the taskpool)" : "tp_p");
    if (rill_worker_check_main("rill_taskpool_destroy", true) != RILL_SUCCESS)
        return RILL_ERR_BAD_STATE;
    rill_taskpool_t *tp = *tp_p;
    if (!tp->waited && tp->used) {
        /* an unwaited taskpool may still hold tasks: waiting is the only safe way out */
        RILL_ERROR(RILL_LOG_RUNTIME,
                   "rill_taskpool_destroy: taskpool %u has tasks and was not waited for; call "
                   "rill_taskpool_wait first",
                   tp->id);
        return RILL_ERR_BAD_STATE;
    }
    rill_context_t *ctx = tp->ctx;
    if (tp->prev)
        tp->prev->next = tp->next;
    else
        ctx->taskpools = tp->next;
    if (tp->next)
        tp->next->prev = tp->prev;
    atomic_fetch_sub(&ctx->nb_taskpools, 1);
    tp->ops->destroy(tp); /* frees tp itself */
    *tp_p = NULL;
    return RILL_SUCCESS;
}
