/* The watchdog: a thread that reports a blocking wait of the runtime during which no task
 * completed for runtime_watchdog_s: what the main thread waits on (nested waits, innermost
 * last), which task each worker runs, and the waited taskpool's own account. */
#include "core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void rill_watchdog_enter(rill_context_t *ctx, const char *what, rill_taskpool_t *tp)
{
    rill_watchdog_t *wd = &ctx->watchdog;
    pthread_mutex_lock(&wd->lock);
    if (wd->nwaits < RILL_MAX_WAITS) {
        wd->waits[wd->nwaits].what = what;
        wd->waits[wd->nwaits].tp = tp;
    }
    wd->nwaits++;
    /* a new wait starts its own count: time spent outside the runtime is not a stall */
    wd->last_change = rill_time_ns();
    pthread_mutex_unlock(&wd->lock);
}

void rill_watchdog_leave(rill_context_t *ctx)
{
    rill_watchdog_t *wd = &ctx->watchdog;
    pthread_mutex_lock(&wd->lock);
    wd->nwaits--;
    pthread_mutex_unlock(&wd->lock);
}

void rill_context_wait(rill_worker_t *w, bool (*cond)(void *arg), void *arg, const char *what,
                       rill_taskpool_t *tp)
{
    rill_watchdog_enter(w->ctx, what, tp);
    rill_worker_work_until(w, cond, arg);
    rill_watchdog_leave(w->ctx);
}

/* Per worker, what the watchdog saw last: a task counter that did not move while a task
 * runs means the same task still runs. */
typedef struct wd_seen {
    unsigned long long nstarted;
    uint64_t since;
} wd_seen_t;

static void watchdog_report(rill_context_t *ctx, uint64_t now, uint64_t stalled_ns, wd_seen_t *seen)
{
    rill_watchdog_t *wd = &ctx->watchdog;
    char chain[512];
    size_t off = 0;
    int shown = wd->nwaits < RILL_MAX_WAITS ? wd->nwaits : RILL_MAX_WAITS;
    for (int i = 0; i < shown && off < sizeof(chain); i++) {
        int n;
        if (wd->waits[i].tp)
            n = snprintf(chain + off, sizeof(chain) - off, "%s%s (taskpool %u)", i ? ", in " : "",
                         wd->waits[i].what, wd->waits[i].tp->id);
        else
            n = snprintf(chain + off, sizeof(chain) - off, "%s%s", i ? ", in " : "",
                         wd->waits[i].what);
        off += n > 0 ? (size_t)n : 0;
    }
    RILL_WARN(RILL_LOG_RUNTIME,
              "watchdog: no task completed for %.0f s; the main thread waits for %s",
              (double)stalled_ns / 1e9, chain);
    for (int i = 0; i < (wd->no_workers ? 0 : ctx->nworkers); i++) {
        rill_worker_t *w = &ctx->workers[i];
        /* acquire pairs with the release store in rill_task_execute: the name it points to
         * is the class's, which outlives its tasks */
        const char *name = atomic_load_explicit(&w->running, memory_order_acquire);
        if (!name)
            continue;
        fprintf(stderr, "  worker %d%s runs a '%s' task, for at least %.0f s\n", i,
                i == 0 ? " (the main thread)" : "", name, (double)(now - seen[i].since) / 1e9);
    }
    /* the GPUs: what their managers hold and do (thrashing is said there) */
    for (int d = 1; !wd->no_devices && d < rill_device_count(); d++) {
        rill_device_t *dev = rill_device_get(d);
        if (dev && dev->ops && dev->ops->describe)
            dev->ops->describe(dev, stderr);
    }
    for (int i = shown - 1; i >= 0; i--) {
        rill_taskpool_t *tp = wd->waits[i].tp;
        if (!tp)
            continue;
        fprintf(stderr, "  taskpool %u: %lld tasks or actions pending; what it waits on:\n", tp->id,
                (long long)atomic_load(&tp->pending));
        /* the main thread is inside this wait and changes none of the front end's
         * insertion state meanwhile; leaving the wait takes the lock we hold */
        if (tp->ops->describe)
            tp->ops->describe(tp, stderr);
        break;
    }
    fflush(stderr);
}

static void *watchdog_main(void *arg)
{
    rill_context_t *ctx = arg;
    rill_thread_name("rill-watchdog");
    rill_watchdog_t *wd = &ctx->watchdog;
    wd_seen_t *seen = calloc((size_t)ctx->nworkers, sizeof(*seen));
    uint64_t period_ns = ctx->watchdog_ns / 4;
    if (period_ns < 50000000ull)
        period_ns = 50000000ull;
    if (period_ns > 1000000000ull)
        period_ns = 1000000000ull;
    unsigned long long last_progress = atomic_load(&ctx->progress);
    pthread_mutex_lock(&wd->lock);
    while (!wd->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t deadline = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + period_ns;
        ts.tv_sec = (time_t)(deadline / 1000000000ull);
        ts.tv_nsec = (long)(deadline % 1000000000ull);
        while (!wd->stop && pthread_cond_timedwait(&wd->cond, &wd->lock, &ts) != ETIMEDOUT)
            ;
        if (wd->stop)
            break;
        uint64_t now = rill_time_ns();
        int nworkers = wd->no_workers ? 0 : ctx->nworkers; /* under lock: see forget_workers */
        for (int i = 0; seen && i < nworkers; i++) {
            unsigned long long n =
                atomic_load_explicit(&ctx->workers[i].nstarted, memory_order_relaxed);
            if (n != seen[i].nstarted) {
                seen[i].nstarted = n;
                seen[i].since = now;
            }
        }
        unsigned long long p = atomic_load(&ctx->progress);
        if (p != last_progress) {
            last_progress = p;
            wd->last_change = now;
            continue;
        }
        uint64_t limit = ctx->watchdog_ns; /* rill_init's waits are for the other ranks to start */
        if (wd->in_init && ctx->watchdog_init_ns > limit)
            limit = ctx->watchdog_init_ns;
        if (wd->nwaits == 0 || now - wd->last_change < limit || !seen)
            continue;
        watchdog_report(ctx, now, now - wd->last_change, seen);
        wd->last_change = now; /* the next report after another quiet period */
        if (wd->action == 1) {
            RILL_ERROR(RILL_LOG_RUNTIME, "watchdog: ending the run (runtime_watchdog_action = "
                                         "abort)");
            rill_comm_abort(ctx->comm, 3);
        }
    }
    pthread_mutex_unlock(&wd->lock);
    free(seen);
    return NULL;
}

rill_status_t rill_watchdog_start(rill_context_t *ctx, int action)
{
    rill_watchdog_t *wd = &ctx->watchdog;
    pthread_mutex_init(&wd->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&wd->cond, &attr);
    pthread_condattr_destroy(&attr);
    wd->nwaits = 0;
    wd->stop = false;
    wd->action = action;
    wd->in_init = true;
    wd->last_change = rill_time_ns();
    wd->started = false;
    wd->no_workers = false;
    if (!ctx->watchdog_ns)
        return RILL_SUCCESS;
    int rc = pthread_create(&wd->thread, NULL, watchdog_main, ctx);
    if (rc != 0) {
        RILL_ERROR(RILL_LOG_RUNTIME, "cannot start the watchdog thread: %s", strerror(rc));
        return RILL_ERR_NO_MEMORY;
    }
    wd->started = true;
    return RILL_SUCCESS;
}

void rill_watchdog_forget_workers(rill_context_t *ctx)
{
    rill_watchdog_t *wd = &ctx->watchdog;
    /* the watchdog reads the workers only with the lock held, so after this it never
     * touches them again */
    pthread_mutex_lock(&wd->lock);
    wd->no_workers = true;
    pthread_mutex_unlock(&wd->lock);
}

void rill_watchdog_stop(rill_context_t *ctx)
{
    rill_watchdog_t *wd = &ctx->watchdog;
    if (wd->started) {
        pthread_mutex_lock(&wd->lock);
        wd->stop = true;
        pthread_cond_signal(&wd->cond);
        pthread_mutex_unlock(&wd->lock);
        pthread_join(wd->thread, NULL);
        wd->started = false;
    }
    pthread_cond_destroy(&wd->cond);
    pthread_mutex_destroy(&wd->lock);
}

void rill_watchdog_init_done(rill_context_t *ctx)
{
    rill_watchdog_t *wd = &ctx->watchdog;
    pthread_mutex_lock(&wd->lock);
    wd->in_init = false;
    pthread_mutex_unlock(&wd->lock);
}
