/* The context: workers (one per core given to Rill, worker 0 being the main thread),
 * the scheduler, the comm engine; the worker loop and task execution. */
#include "core.h"
#include "data_internal.h"
#include "scheduler.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rill_sched_ops_t *const all_scheds[] = { &rill_sched_lfq, &rill_sched_gpq };
#define NB_SCHEDS ((int)(sizeof(all_scheds) / sizeof(all_scheds[0])))

static rill_param_t *param_sched, *param_idle_spin_us, *param_idle_spinners, *param_gpu_spin_us,
    *param_watchdog_s, *param_watchdog_init_s, *param_watchdog_action, *param_device;
static _Thread_local rill_worker_t *tl_worker;

RILL_LOG_COMPONENT(rill_log_runtime, "runtime");
RILL_LOG_COMPONENT(rill_log_sched, "sched");
RILL_LOG_COMPONENT(rill_log_data, "data");

static const char *sched_names[NB_SCHEDS + 1]; /* (from all_scheds, at registration) */
static const char *const watchdog_actions[] = { "warn", "abort", NULL };
static const char *const devices[] = { "auto", "cpu", "gpu", NULL };

static rill_param_decl_t core_params[] = {
    { "sched", RILL_PARAM_ENUM, RILL_PARAM_LEVEL_USER,
      "Scheduler: lfq (per-worker priority queues, stealing from the nearest workers first) or "
      "gpq (one global priority queue)",
      .v.s = { NULL /* the best, at registration */, sched_names }, .param = &param_sched },
    { "runtime_idle_spin_us", RILL_PARAM_INT, RILL_PARAM_LEVEL_TUNER,
      "How long an idle worker keeps looking for work before it sleeps (microseconds); new work "
      "wakes it",
      .v.i = { 50, 0, 1000000 }, .param = &param_idle_spin_us },
    { "runtime_idle_spinners", RILL_PARAM_INT, RILL_PARAM_LEVEL_TUNER,
      "At most this many idle worker threads look for work at once (runtime_idle_spin_us or "
      "runtime_gpu_spin_us); the others sleep until work is pushed, and a push wakes only those "
      "the lookers cannot serve. Lower it on many cores when idle workers polling one queue "
      "slow the worker that fills it (0: no limit)",
      .v.i = { 4, 0, 4096 }, .param = &param_idle_spinners },
    { "runtime_gpu_spin_us", RILL_PARAM_INT, RILL_PARAM_LEVEL_TUNER,
      "In a process that runs tasks on GPUs: how long idle workers, the comm thread and the GPU "
      "managers keep polling before they sleep, when longer than runtime_idle_spin_us and "
      "comm_thread_spin_us, so that a GPU manager's completion or a remote tile's message finds "
      "its thread awake. Lower it when the cores are shared with other work",
      .v.i = { 2000, 0, 1000000 }, .param = &param_gpu_spin_us },
    { "runtime_watchdog_s", RILL_PARAM_INT, RILL_PARAM_LEVEL_USER,
      "Report what a blocking wait of the runtime (taskpool wait, DTD window, collective) waits "
      "on when no task completed for this many seconds (0: never)",
      .v.i = { 30, 0, 86400 }, .param = &param_watchdog_s },
    { "runtime_watchdog_init_s", RILL_PARAM_INT, RILL_PARAM_LEVEL_TUNER,
      "Inside rill_init, the watchdog reports a wait (for the other ranks to start: their GPUs "
      "can take seconds, more on a loaded machine) only after at least this many seconds (the "
      "greater of this and runtime_watchdog_s)",
      .v.i = { 120, 0, 86400 }, .param = &param_watchdog_init_s },
    { "runtime_watchdog_action", RILL_PARAM_ENUM, RILL_PARAM_LEVEL_USER,
      "What the watchdog does after reporting a stall: warn (and report again after each quiet "
      "period) or abort (end the job with exit code 3, e.g. in tests, so a hang becomes a "
      "failure)",
      .v.s = { "warn", watchdog_actions }, .param = &param_watchdog_action },
    { "runtime_device", RILL_PARAM_ENUM, RILL_PARAM_LEVEL_USER,
      "Where tasks with several incarnations run: auto (the GPU that holds the data they write, "
      "else the least loaded device), cpu (CPU bodies only), gpu (GPU bodies whenever a class "
      "has one; a process with no GPU warns at start and runs the CPU bodies)",
      .v.s = { "auto", devices },
      /* it decides which ranks' tiles move GPU to GPU */
      .flags = RILL_PARAM_SAME_ON_ALL_RANKS, .param = &param_device },
};

rill_status_t rill_core_register_params(void)
{
    const rill_sched_ops_t *best = all_scheds[0];
    for (int i = 0; i < NB_SCHEDS; i++) {
        sched_names[i] = all_scheds[i]->name;
        if (all_scheds[i]->priority > best->priority)
            best = all_scheds[i];
    }
    sched_names[NB_SCHEDS] = NULL;
    core_params[0].v.s.def = best->name;
    rill_status_t status =
        rill_params_register_table(core_params, sizeof(core_params) / sizeof(core_params[0]));
    /* the layers below, then this one's log components */
    rill_status_t (*const below[])(void) = {
        rill_log_register_params,    rill_trace_register_params,  rill_stats_register_params,
        rill_report_register_params, rill_device_register_params, rill_topo_register_params,
        rill_comm_register_params
    };
    for (size_t i = 0; i < sizeof(below) / sizeof(below[0]); i++) {
        rill_status_t st = below[i]();
        status = status != RILL_SUCCESS ? status : st;
    }
    rill_log_comp_t *comps[] = { &rill_log_runtime, &rill_log_sched, &rill_log_data };
    for (int i = 0; i < 3; i++) {
        rill_status_t st = rill_log_register(comps[i]);
        status = status != RILL_SUCCESS ? status : st;
    }
    return status;
}

rill_worker_t *rill_worker_self(void)
{
    return tl_worker;
}

/* ------------------------------------------------------------ execution */

/* Trace the execution of task by w from t0: its slice, the flow that ends at it, and the
 * counters. What is read of the task is read before its body runs: an asynchronous body
 * may complete (and free) it on another thread before the body returns. */
typedef struct exec_trace {
    uint64_t t0, id, flow_in;
    int32_t priority;
    char args[80];
} exec_trace_t;

void rill_task_trace_urgent(const rill_task_t *task, char *args, size_t len)
{
    size_t n = strlen(args);
    if (task->urgent && n + 8 <= len)
        snprintf(args + n, len - n, "%surgent", n ? " " : "");
}

/* ready: the task left the scheduler's ready tasks (not one run where it was released) */
static void exec_trace_begin(rill_context_t *ctx, rill_task_t *task, exec_trace_t *x, bool ready)
{
    x->args[0] = '\0';
    x->id = task->tc->trace_info ? task->tc->trace_info(task, x->args, sizeof(x->args)) : 0;
    rill_task_trace_urgent(task, x->args, sizeof(x->args));
    x->flow_in = task->flow_in;
    x->priority = task->prio.priority;
    x->t0 = rill_time_ns();
    long long running = atomic_fetch_add_explicit(&ctx->trace_running, 1, memory_order_relaxed) + 1;
    rill_trace_counter("tasks in flight", x->t0, running);
    if (ready)
        rill_trace_counter("ready tasks", x->t0,
                           atomic_fetch_sub_explicit(&ctx->trace_ready, 1, memory_order_relaxed) -
                               1);
    if (x->flow_in)
        rill_trace_flow('f', x->flow_in, x->t0);
}

static void exec_trace_end(const rill_task_class_t *tc, const exec_trace_t *x, uint64_t t1)
{
    rill_trace_slice("task", tc->name, x->t0, t1, x->priority, x->id, x->args);
}

/* ------------------------------------------------------------ device choice */

static void run_cpu(rill_worker_t *w, rill_task_t *task);

static inline bool has_incarnation(const rill_task_class_t *tc, rill_device_type_t type)
{
    for (int i = 0; i < tc->nb_incarnations; i++)
        if (tc->incarnations[i].type == type)
            return true;
    return false;
}

int rill_task_choose_device(rill_context_t *ctx, rill_task_t *task)
{
    int ndev = rill_device_count();
    const rill_task_class_t *tc = task->tc;
    if (ndev == 1 || !has_incarnation(tc, RILL_BODY_CUDA))
        return 0;
    bool cpu = has_incarnation(tc, RILL_BODY_CPU);
    if (cpu && ctx->device_choice == 1)
        return 0;
    rill_task_flow_t flows[RILL_MAX_FLOWS];
    int n = tc->flows ? tc->flows(task, flows, RILL_MAX_FLOWS) : 0;
    /* the datum it writes: its advised GPU, else the GPU that holds its newest copy */
    for (int i = 0; i < n; i++) {
        if (!(flows[i].mode & RILL_FLOW_WRITE))
            continue;
        rill_data_t *d = flows[i].data;
        if (d->advised > 0 && d->advised < ndev)
            return d->advised;
        for (int g = 1; g < ndev; g++)
            if (rill_data_copy_current(d, rill_data_copy(d, g)))
                return g;
        break;
    }
    /* else the least loaded: queued work + the task's time there */
    double flops = tc->flops ? tc->flops(task) : -1;
    int best = 1;
    double best_ns = 0;
    for (int g = 1; g < ndev; g++) {
        rill_device_t *d = rill_device_get(g);
        double ns = flops >= 0
                        ? (double)atomic_load_explicit(&d->queued_ns, memory_order_relaxed) +
                              flops / d->gflops
                        : (double)atomic_load_explicit(&d->queued_tasks, memory_order_relaxed);
        if (g == 1 || ns < best_ns) {
            best = g;
            best_ns = ns;
        }
    }
    /* the CPU only when it would finish the task before that GPU gets to it */
    if (cpu && ctx->device_choice == 0 && flops >= 0 && flops / rill_device_cpu_gflops() < best_ns)
        return 0;
    return best;
}

void rill_task_enqueued(rill_task_t *task, int dev)
{
    rill_device_t *d = rill_device_get(dev);
    double flops = task->tc->flops ? task->tc->flops(task) : -1;
    task->device = (int16_t)dev;
    task->est_ns = flops > 0 ? (int64_t)(flops / d->gflops) : 0;
    atomic_fetch_add_explicit(&d->queued_ns, task->est_ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&d->queued_tasks, 1, memory_order_relaxed);
}

/* Before a CPU body: the host copies of its data must hold the newest bytes. When a GPU
 * holds them instead, that GPU's manager brings them home and hands the task back (false).
 * A datum written only (no read) is brought home too: a write-back of an older version
 * still in flight would otherwise land after the body's writes. */
static bool host_copies_ready(rill_task_t *task)
{
    rill_task_flow_t flows[RILL_MAX_FLOWS];
    if (task->tc->needs_host && !task->tc->needs_host(task))
        return true;
    int n = task->tc->flows ? task->tc->flows(task, flows, RILL_MAX_FLOWS) : 0;
    int ndev = rill_device_count();
    for (int i = 0; i < n; i++) {
        rill_data_t *d = flows[i].data;
        if (rill_data_copy_current(d, rill_data_host_copy(d)))
            continue;
        for (int g = 1; g < ndev; g++)
            if (rill_data_copy_current(d, rill_data_copy(d, g))) {
                rill_device_t *dev = rill_device_get(g);
                dev->ops->stage_home(dev, task);
                return false;
            }
    }
    return true;
}

/* Traces: a task the worker picked from the scheduler leaves the ready count without
 * running here (handed to a GPU, or to a GPU that brings its data home first). */
static void trace_not_run_here(rill_context_t *ctx)
{
    if (rill_trace_on())
        rill_trace_counter("ready tasks", rill_time_ns(),
                           atomic_fetch_sub_explicit(&ctx->trace_ready, 1, memory_order_relaxed) -
                               1);
}

void rill_task_execute(rill_worker_t *w, rill_task_t *task)
{
    if (rill_device_count() > 1) {
        int dev = task->device >= 0 ? task->device : rill_task_choose_device(w->ctx, task);
        if (dev > 0) {
            rill_device_t *d = rill_device_get(dev);
            rill_task_enqueued(task, dev);
            if (rill_trace_on() && !task->flow_in) { /* traces: worker -> the GPU's stream */
                static atomic_ullong handovers;
                uint64_t now = rill_time_ns(),
                         id = rill_trace_flow_id(0x676d, (uint64_t)w->ctx->rank,
                                                 atomic_fetch_add(&handovers, 1), 0);
                rill_trace_slice("task", "to GPU", now, now + 500, task->prio.priority, 0, d->name);
                rill_trace_flow('s', id, now);
                task->flow_in = id; /* its span on the stream ends the flow */
            }
            trace_not_run_here(w->ctx);
            d->ops->submit(d, task);
            return;
        }
        task->device = 0;
        if (!host_copies_ready(task)) {
            trace_not_run_here(w->ctx);
            return;
        }
    }
    task->device = 0;
    run_cpu(w, task);
}

/* Call task's CPU body (w: the worker, or NULL off the workers); without one, fail. */
static rill_hook_status_t cpu_body(rill_worker_t *w, rill_task_t *task)
{
    const rill_task_class_t *tc = task->tc;
    for (int i = 0; i < tc->nb_incarnations; i++)
        if (tc->incarnations[i].type == RILL_BODY_CPU)
            return tc->incarnations[i].hook(w, task);
    rill_taskpool_fail(task->tp, RILL_ERR_NOT_SUPPORTED,
                       "task '%s' has no CPU body and no GPU runs it (this process uses %d "
                       "GPU(s); see rill_info --devices and device_cuda_enabled)",
                       tc->name, rill_device_count() - 1);
    return RILL_HOOK_ERROR;
}

static void run_cpu(rill_worker_t *w, rill_task_t *task)
{
    const rill_task_class_t *tc = task->tc;
    task->worker = w->id;
    exec_trace_t xt;
    uint64_t t0 = 0;
    if (rill_trace_on()) {
        exec_trace_begin(w->ctx, task, &xt, true);
        t0 = xt.t0;
    } else if (w->ctx->stats_on) {
        t0 = rill_time_ns();
    }
    /* for the watchdog: only this worker writes its count, so a plain load and store do
     * (no locked instruction per task); the name is a release (pairs with its acquire) */
    atomic_store_explicit(&w->nstarted,
                          atomic_load_explicit(&w->nstarted, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&w->running, tc->name, memory_order_release);
    rill_hook_status_t st = cpu_body(w, task);
    atomic_store_explicit(&w->running, NULL, memory_order_relaxed);
    if (t0) {
        uint64_t t1 = rill_time_ns();
        if (rill_trace_on())
            exec_trace_end(tc, &xt, t1);
        if (w->ctx->stats_on)
            rill_stats_task(w, tc, t1 - t0);
    }
    if (st != RILL_HOOK_ASYNC)
        rill_task_complete(w, task, st);
}

void rill_task_run_here(rill_context_t *ctx, rill_task_t *task)
{
    const rill_task_class_t *tc = task->tc;
    task->device = 0;
    task->worker = -1;
    exec_trace_t xt;
    bool traced = rill_trace_on();
    if (traced) /* (never in the scheduler: not one of the ready tasks) */
        exec_trace_begin(ctx, task, &xt, false);
    rill_hook_status_t st = cpu_body(NULL, task);
    if (traced)
        exec_trace_end(tc, &xt, rill_time_ns());
    if (st != RILL_HOOK_ASYNC)
        rill_task_complete(NULL, task, st);
}

void rill_task_complete(rill_worker_t *w, rill_task_t *task, rill_hook_status_t status)
{
    rill_context_t *ctx = task->tp->ctx; /* read before complete frees the task */
    task->tc->complete(w, task, status);
    if (rill_trace_on())
        rill_trace_counter("tasks in flight", rill_time_ns(),
                           atomic_fetch_sub_explicit(&ctx->trace_running, 1, memory_order_relaxed) -
                               1);
    atomic_fetch_add_explicit(&ctx->progress, 1, memory_order_relaxed);
}

/* One step of an idle worker's spin. Yield the core: the comm thread (and later the GPU
 * managers) may share it, and a spinning worker must not keep them from running. */
static inline void idle_pause(void)
{
    sched_yield();
}

/* A spawned worker starting to look for work: counted among the spinners, unless
 * runtime_idle_spinners are at it already (then it sleeps at once). */
static bool spinner_enter(rill_context_t *ctx)
{
    int n = atomic_load_explicit(&ctx->spinners, memory_order_relaxed);
    while (n < ctx->max_spinners)
        if (atomic_compare_exchange_weak_explicit(&ctx->spinners, &n, n + 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            return true;
    return false;
}

/* A counted spinner stops looking. found: it took a task; the last spinner to do so wakes a
 * sleeper to look in its place, the tasks pushed meanwhile having woken nobody
 * (rill_sched_push). Otherwise it is about to look once more and sleep: the fence pairs
 * with rill_sched_push's (see there). */
static void spinner_leave(rill_context_t *ctx, bool found)
{
    int before = atomic_fetch_sub_explicit(&ctx->spinners, 1, memory_order_seq_cst);
    atomic_thread_fence(memory_order_seq_cst);
    if (found && before == 1 && atomic_load_explicit(&ctx->idle.waiters, memory_order_relaxed) > 0)
        rill_evcount_signal(&ctx->idle, 1);
}

/* capped: a spawned worker (it only looks for work), whose spinning counts against
 * runtime_idle_spinners; the main thread's waits (whose conditions may change without a
 * push) always spin. */
static void work_until(rill_worker_t *w, bool (*cond)(void *arg), void *arg, bool capped)
{
    rill_context_t *ctx = w->ctx;
    const uint64_t spin_ns = (uint64_t)ctx->idle_spin_us * 1000;
    capped = capped && ctx->max_spinners > 0;
    uint64_t idle_since = 0;
    /* the sleep's time-out: NAP_MIN_US at the start of each idle period, doubled by each
     * that passes without a push up to NAP_MAX_US for a spawned worker (the main thread's
     * conditions change without a push). It only rescues a task no wake reached (see
     * rill_sched_push); 60 workers looking every 10 ms took 0.1 s of CPU per second from an
     * idle process */
    enum { NAP_MIN_US = 10000, NAP_MAX_US = 80000 };
    uint64_t nap_us = NAP_MIN_US;
    bool may_spin = false, counted = false;
    while (!cond(arg)) {
        rill_task_t *t = ctx->sched->select(w);
        if (t) {
            if (counted)
                spinner_leave(ctx, true);
            counted = false;
            if (idle_since) /* busy again */
                rill_comm_workers_idle(ctx->comm, -1);
            rill_task_execute(w, t);
            idle_since = 0;
            continue;
        }
        /* look for work a little longer before sleeping */
        uint64_t now = rill_time_ns();
        if (!idle_since) {
            idle_since = now;
            nap_us = NAP_MIN_US;
            rill_comm_workers_idle(ctx->comm, 1); /* the comm thread may poll harder */
            counted = capped && spinner_enter(ctx);
            may_spin = !capped || counted;
        }
        if (may_spin && now - idle_since < spin_ns) {
            idle_pause();
            continue;
        }
        if (counted) /* before the last look below */
            spinner_leave(ctx, false);
        counted = may_spin = false;
        /* prepare, then re-check both the condition and the queues: a signal sent after
         * either check changes the epoch, so the wait below returns at once */
        uint32_t key = rill_evcount_prepare(&ctx->idle);
        if (cond(arg)) {
            rill_evcount_cancel(&ctx->idle);
            break;
        }
        w->last_look = true;
        t = ctx->sched->select(w);
        w->last_look = false;
        if (t) {
            rill_evcount_cancel(&ctx->idle);
            rill_comm_workers_idle(ctx->comm, -1);
            rill_task_execute(w, t);
            idle_since = 0;
            continue;
        }
        rill_evcount_wait(&ctx->idle, key, nap_us);
        if (capped && atomic_load_explicit(&ctx->idle.epoch, memory_order_relaxed) != key) {
            /* woken by a push: a fresh idle period, so that a worker that finds the task
             * taken spins again (a free spinner slot) and the chain of wakes goes on in a
             * burst; a time-out keeps it asleep-ish (looks, no spinning) */
            rill_comm_workers_idle(ctx->comm, -1);
            idle_since = 0;
        } else if (capped && nap_us < NAP_MAX_US) {
            nap_us *= 2;
        }
    }
    if (counted)
        spinner_leave(ctx, false);
    if (idle_since)
        rill_comm_workers_idle(ctx->comm, -1);
}

void rill_worker_work_until(rill_worker_t *w, bool (*cond)(void *arg), void *arg)
{
    work_until(w, cond, arg, false);
}

static bool shutting_down(void *arg)
{
    rill_context_t *ctx = arg;
    /* acquire pairs with the release store in stop_workers */
    return atomic_load_explicit(&ctx->shutdown, memory_order_acquire);
}

/* Workers 1..n-1: the same loop as the main thread's waits, until rill_fini. */
static void *worker_main(void *arg)
{
    rill_worker_t *w = arg;
    tl_worker = w;
    rill_topo_bind_worker(w->ctx->topo, w->id);
    char name[32];
    snprintf(name, sizeof(name), "rill-worker %d", w->id);
    rill_thread_name(name);
    snprintf(name, sizeof(name), "worker %d", w->id);
    rill_trace_thread(w->id, name);
    work_until(w, shutting_down, w->ctx, true);
    tl_worker = NULL;
    return NULL;
}

/* ------------------------------------------------------------ context */

int rill_context_rank(const rill_context_t *ctx)
{
    if (!ctx)
        return -1;
    return ctx->rank;
}

int rill_context_nranks(const rill_context_t *ctx)
{
    if (!ctx)
        return -1;
    return ctx->nranks;
}

rill_status_t rill_context_allgather(rill_context_t *ctx, const void *in, size_t size, void *out)
{
    if (!ctx)
        return rill_arg_null("rill_context_allgather", "the context");
    return rill_comm_allgather(ctx->comm, in, size, out);
}

rill_status_t rill_context_allreduce_u64(rill_context_t *ctx, const uint64_t *in, uint64_t *out,
                                         int count, rill_comm_op_t op)
{
    return rill_comm_allreduce_u64(ctx->comm, in, out, count, op);
}

void rill_launcher_local(int *rank_p, int *size_p)
{
    rill_comm_launcher_local(rank_p, size_p);
}

int rill_context_local_nranks(const rill_context_t *ctx)
{
    if (!ctx)
        return -1;
    return rill_comm_local_size(ctx->comm);
}

int rill_context_local_rank(const rill_context_t *ctx)
{
    if (!ctx)
        return -1;
    return rill_comm_local_rank(ctx->comm);
}

int rill_context_node(const rill_context_t *ctx, int rank)
{
    if (!ctx)
        return -1;
    return rill_comm_node_of(ctx->comm, rank);
}

const char *rill_context_wire(const rill_context_t *ctx, int rank, const char **why)
{
    if (!ctx) {
        if (why)
            *why = "no context";
        return NULL;
    }
    return rill_comm_peer_wire(ctx->comm, rank, why);
}

int rill_context_nworkers(const rill_context_t *ctx)
{
    if (!ctx)
        return -1;
    return ctx->nworkers;
}

int rill_context_ngpus(const rill_context_t *ctx)
{
    if (!ctx)
        return -1;
    return rill_device_count() - 1; /* the GPUs whose managers started */
}

const char *rill_context_gpu_status(const rill_context_t *ctx)
{
    if (!ctx)
        return NULL;
    return rill_device_count() > 1 ? "" : ctx->no_gpu_why;
}

const char *rill_context_gpu_name(const rill_context_t *ctx, int i)
{
    if (!ctx)
        return NULL;
    rill_device_t *d = rill_device_get(i + 1);
    return i >= 0 && d ? d->name : NULL;
}

int rill_task_worker_id(const rill_task_t *task)
{
    if (!task)
        return -1;
    return task->worker;
}

rill_context_t *rill_task_context(const rill_task_t *task)
{
    if (!task || !task->tp)
        return NULL;
    return task->tp->ctx;
}

rill_status_t rill_worker_check_main(const char *call, bool any_other_thread)
{
    rill_worker_t *w = rill_worker_self();
    /* only this thread writes its own running name: a relaxed load sees its own store */
    bool in_body = w && atomic_load_explicit(&w->running, memory_order_relaxed) != NULL;
    if ((w && w->id == 0 && !in_body) || (!w && any_other_thread))
        return RILL_SUCCESS;
    RILL_ERROR(RILL_LOG_RUNTIME,
               "%s must be called from the main thread (the thread that called rill_init), "
               "outside task bodies; it was called %s",
               call,
               in_body ? "from a task body"
               : w     ? "from a worker thread"
                       : "from a thread Rill did not start");
    return RILL_ERR_BAD_STATE;
}

/* The comm engine's collectives wait through the runtime: the main thread keeps running
 * tasks (another rank may need them to reach the collective) under the watchdog. */
static bool comm_wait(void *arg, bool (*done)(void *), void *done_arg, const char *what)
{
    rill_context_t *ctx = arg;
    rill_worker_t *w = rill_worker_self();
    if (!w || w->ctx != ctx)
        return false;
    rill_context_wait(w, done, done_arg, what, NULL);
    return true;
}

static void comm_wake(void *arg)
{
    rill_context_t *ctx = arg;
    rill_evcount_signal(&ctx->idle, 0);
}

static void stop_workers(rill_context_t *ctx, int started)
{
    atomic_store_explicit(&ctx->shutdown, true, memory_order_release);
    rill_evcount_signal(&ctx->idle, 0);
    for (int i = 1; i < started; i++)
        pthread_join(ctx->workers[i].thread, NULL);
}

rill_status_t rill_init_agree(rill_comm_t *comm, rill_status_t status, enum rill_init_step step)
{
    static const char *const what[] = {
        [RILL_INIT_STEP_RUNTIME] = "start its runtime (topology, workers, watchdog)",
        [RILL_INIT_STEP_GPUS] = "start its GPUs",
        [RILL_INIT_STEP_LAYERS] = "set up its GPU channels and task layers",
    };
    int rank = rill_comm_rank(comm), nranks = rill_comm_size(comm);
    if (nranks == 1)
        return status;
    bool failed = status != RILL_SUCCESS;
    /* max of (nranks - rank) << 8 | step: the lowest rank that failed and its step, in one
     * word so that both come from the same rank (0: none failed) */
    uint64_t v = failed ? (uint64_t)(nranks - rank) << 8 | (uint64_t)step : 0;
    rill_status_t s = rill_comm_allreduce_u64(comm, &v, &v, 1, RILL_COMM_MAX);
    if (s != RILL_SUCCESS)
        return failed ? status : s;
    if (v && !failed) {
        uint64_t first = v & 0xff;
        RILL_ERROR(RILL_LOG_RUNTIME,
                   "rill_init: rank %d could not %s (its error is above): every rank stops",
                   (int)((uint64_t)nranks - (v >> 8)),
                   first >= RILL_INIT_STEP_RUNTIME && first <= RILL_INIT_STEP_LAYERS ? what[first]
                                                                                     : "start");
        return first == RILL_INIT_STEP_GPUS ? RILL_ERR_DEVICE : RILL_ERR_COMM;
    }
    return status;
}

rill_status_t rill_context_create(int *argc, char ***argv, rill_context_t **ctx_p)
{
    rill_status_t status;
    rill_context_t *ctx = calloc(1, sizeof(*ctx));
    if (!ctx) {
        status = RILL_ERR_NO_MEMORY;
        goto err;
    }
    rill_evcount_init(&ctx->idle);
    atomic_init(&ctx->shutdown, false);
    atomic_init(&ctx->progress, 0);
    atomic_init(&ctx->nb_taskpools, 0);
    ctx->idle_spin_us = (int)rill_param_get_int(param_idle_spin_us);
    ctx->watchdog_ns = (uint64_t)rill_param_get_int(param_watchdog_s) * 1000000000ull;
    ctx->watchdog_init_ns = (uint64_t)rill_param_get_int(param_watchdog_init_s) * 1000000000ull;
    ctx->stats_on = rill_stats_wanted();
    ctx->stats_start_ns = rill_time_ns();
    ctx->sched = all_scheds[rill_param_get_enum(param_sched)];
    ctx->device_choice = rill_param_get_enum(param_device);

    rill_cuda_env_early(); /* (before MPI and UCX, which may make a CUDA context) */
    status = rill_comm_init(argc, argv, &ctx->comm);
    if (status != RILL_SUCCESS)
        goto err_free_ctx;
    ctx->rank = rill_comm_rank(ctx->comm);
    ctx->nranks = rill_comm_size(ctx->comm);
    rill_comm_waiter_t waiter = { .wait = comm_wait, .wake = comm_wake, .arg = ctx };
    rill_comm_set_waiter(ctx->comm, &waiter);

    status = rill_cuda_select(rill_comm_local_rank(ctx->comm), rill_comm_local_size(ctx->comm),
                              ctx->gpus, RILL_CUDA_MAX_GPUS, &ctx->ngpus, ctx->no_gpu_why,
                              sizeof(ctx->no_gpu_why));
    if (status != RILL_SUCCESS) {
        RILL_WARN(RILL_LOG_RUNTIME, "GPU discovery failed (%s): running on the CPUs only",
                  ctx->no_gpu_why);
        ctx->ngpus = 0;
    }
    if (ctx->ngpus == 0 && ctx->device_choice == 2)
        RILL_WARN(RILL_LOG_RUNTIME,
                  "runtime_device = gpu, but this process has no GPU (%s): every task runs its "
                  "CPU body, and a class with only a GPU body fails. Set runtime_device to auto "
                  "or cpu, or run where GPUs are",
                  ctx->no_gpu_why[0] ? ctx->no_gpu_why : "none found");
    if (ctx->ngpus > 0) { /* the managers' completions and remote tiles: stay awake longer */
        int gpu_spin = (int)rill_param_get_int(param_gpu_spin_us);
        if (ctx->idle_spin_us < gpu_spin)
            ctx->idle_spin_us = gpu_spin;
        rill_comm_spin_at_least(ctx->comm, (uint64_t)gpu_spin);
    }
    status = rill_topo_init(rill_comm_local_rank(ctx->comm), rill_comm_local_size(ctx->comm),
                            &ctx->topo);
    if (status != RILL_SUCCESS)
        goto err_fini_comm;
    /* one core per GPU for its manager thread, when there are cores to spare */
    if (ctx->ngpus > 0 &&
        (status = rill_topo_reserve(ctx->topo, ctx->ngpus, "GPU manager")) != RILL_SUCCESS)
        goto err_free_topo;
    ctx->nworkers = rill_topo_nworkers(ctx->topo);
    /* a limit no smaller than the spawned workers limits nothing: leave it off */
    ctx->max_spinners = (int)rill_param_get_int(param_idle_spinners);
    if (ctx->max_spinners >= ctx->nworkers - 1)
        ctx->max_spinners = 0;
    atomic_init(&ctx->spinners, 0);
    ctx->workers = calloc((size_t)ctx->nworkers, sizeof(*ctx->workers));
    int *orders = calloc(
        (size_t)ctx->nworkers * (size_t)(ctx->nworkers > 1 ? ctx->nworkers - 1 : 1), sizeof(int));
    if (!ctx->workers || !orders) {
        free(orders);
        status = RILL_ERR_NO_MEMORY;
        goto err_free_workers;
    }
    for (int i = 0; i < ctx->nworkers; i++) {
        rill_worker_t *w = &ctx->workers[i];
        w->id = i;
        w->ctx = ctx;
        w->steal_order = orders + (size_t)i * (size_t)(ctx->nworkers - 1);
        rill_topo_steal_order(ctx->topo, i, w->steal_order);
    }
    status = ctx->sched->install(ctx);
    if (status != RILL_SUCCESS)
        goto err_free_workers;
    RILL_VERBOSE(RILL_LOG_SCHED, 1, "scheduler %s, %d workers", ctx->sched->name, ctx->nworkers);

    /* the main thread is worker 0: it works while it waits */
    tl_worker = &ctx->workers[0];
    rill_topo_bind_worker(ctx->topo, 0);
    /* the comm thread started before the cores were known: onto the workers' cores, off
     * the GPU managers' (they spin without yielding) and off other processes' */
    pthread_t comm_thread;
    if (rill_comm_thread_get(ctx->comm, &comm_thread) == RILL_SUCCESS)
        rill_topo_bind_thread_to_workers(ctx->topo, comm_thread);
    rill_trace_start(ctx->rank, ctx->nranks);
    rill_trace_thread(0, "worker 0 (main thread)");
    int started = 1;
    for (; started < ctx->nworkers; started++) {
        int rc = pthread_create(&ctx->workers[started].thread, NULL, worker_main,
                                &ctx->workers[started]);
        if (rc != 0) {
            RILL_ERROR(RILL_LOG_RUNTIME, "cannot start worker %d of %d: %s", started, ctx->nworkers,
                       strerror(rc));
            status = RILL_ERR_NO_MEMORY;
            goto err_stop_workers;
        }
    }
    status = rill_watchdog_start(ctx, (int)rill_param_get_enum(param_watchdog_action));
    if (status != RILL_SUCCESS)
        goto err_stop_watchdog;
    *ctx_p = ctx;
    return RILL_SUCCESS;

err_stop_watchdog:
    rill_watchdog_stop(ctx);
err_stop_workers:
    stop_workers(ctx, started);
    tl_worker = NULL;
    ctx->sched->remove(ctx);
err_free_workers:
    if (ctx->workers)
        free(ctx->workers[0].steal_order);
    free(ctx->workers);
err_free_topo:
    rill_topo_destroy(&ctx->topo);
err_fini_comm:
    rill_comm_set_waiter(ctx->comm, NULL);
    /* the others meet this in their agreement after starting their GPUs */
    rill_init_agree(ctx->comm, status, RILL_INIT_STEP_RUNTIME);
    rill_comm_fini(&ctx->comm);
err_free_ctx:
    free(ctx);
err:
    return status;
}

rill_status_t rill_context_destroy(rill_context_t **ctx_p)
{
    if (!ctx_p || !*ctx_p)
        return RILL_ERR_INVALID_ARG;
    rill_context_t *ctx = *ctx_p;
    rill_status_t status = RILL_SUCCESS;
    /* taskpools left running are run to the end (oldest first, the same order on every
     * rank), then every taskpool left is freed */
    rill_taskpool_t *oldest = ctx->taskpools;
    while (oldest && oldest->next)
        oldest = oldest->next;
    for (rill_taskpool_t *tp = oldest; tp; tp = tp->prev) {
        if (tp->waited || !tp->used)
            continue;
        RILL_WARN(RILL_LOG_RUNTIME,
                  "rill_fini: taskpool %u was not waited for; running it to the end now", tp->id);
        rill_status_t s = rill_taskpool_wait(tp);
        if (s != RILL_SUCCESS && status == RILL_SUCCESS)
            status = s;
    }
    while (ctx->taskpools) {
        rill_taskpool_t *tp = ctx->taskpools;
        RILL_VERBOSE(RILL_LOG_RUNTIME, 1, "rill_fini: destroying taskpool %u", tp->id);
        rill_taskpool_destroy(&tp);
    }
    if (ctx->services_stop) {
        /* the watchdog reports under its lock: once this is set it no longer asks the GPU
         * managers, which are freed below */
        pthread_mutex_lock(&ctx->watchdog.lock);
        ctx->watchdog.no_devices = true;
        pthread_mutex_unlock(&ctx->watchdog.lock);
        ctx->services_stop(ctx);
    }
    stop_workers(ctx, ctx->nworkers);
    tl_worker = NULL;
    char *stats_json = rill_stats_report(ctx); /* the workers stopped: their counts are final */
    rill_status_t rs = rill_report_write(ctx, stats_json);
    free(stats_json);
    if (rs != RILL_SUCCESS && status == RILL_SUCCESS)
        status = rs;
    ctx->sched->remove(ctx);
    rill_watchdog_forget_workers(ctx);
    free(ctx->workers[0].steal_order);
    free(ctx->workers);
    rill_topo_destroy(&ctx->topo);
    rill_comm_set_waiter(ctx->comm, NULL);
    /* the comm engine's final barrier is a blocking wait too: watched */
    rill_watchdog_enter(ctx, "the final barrier of rill_fini with every rank", NULL);
    rill_status_t s = rill_comm_fini(&ctx->comm);
    rill_watchdog_leave(ctx);
    rill_watchdog_stop(ctx);
    if (s != RILL_SUCCESS && status == RILL_SUCCESS)
        status = s;
    /* every thread that records has stopped */
    if ((s = rill_trace_finish()) != RILL_SUCCESS && status == RILL_SUCCESS)
        status = s;
    free(ctx);
    *ctx_p = NULL;
    return status;
}
