/* The GPU manager's launches: the pending heaps, the choice of an exec stream, the bound on
 * tasks waiting for a landing, staging a task's inputs and enqueueing its body, and the
 * exec streams' busy time. Manager thread. */
#include "gm_internal.h"

#if RILL_HAVE_CUDA

static int span_cmp(const void *a, const void *b);
static int launch(gm_t *m, rill_task_t *task, int stream);
static int least_busy(const gm_t *m, int lo, int hi);
static int pick_stream(gm_t *m, const rill_task_t *task);
static rill_task_t *heap_top(const rill_heap_t *h);
static bool task_waits_landing(const gm_t *m, rill_task_t *task);
static int landing_waiters(const gm_t *m);
static bool landing_bound(const gm_t *m, rill_task_t *task, int *nw);
static void aside_restore(gm_t *m);

/* ------------------------------------------------------------ busy time */

void gm_span_add(gm_t *m, uint64_t t0, uint64_t t1)
{
    rill_spinlock_lock(&m->spans_lock);
    if (m->nspans == m->cap_spans) {
        size_t cap = m->cap_spans ? 2 * m->cap_spans : 4096;
        struct gm_span *sp = realloc(m->spans, cap * sizeof(*sp));
        if (!sp) {
            rill_spinlock_unlock(&m->spans_lock);
            return; /* the busy time undercounts; nothing else depends on it */
        }
        m->spans = sp;
        m->cap_spans = cap;
    }
    m->spans[m->nspans].t0 = t0;
    m->spans[m->nspans].t1 = t1;
    m->nspans++;
    rill_spinlock_unlock(&m->spans_lock);
}

static int span_cmp(const void *a, const void *b)
{
    const struct gm_span *x = a, *y = b;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

/* The time at least one exec stream ran a task: the union of the spans (compacted). */
double gm_busy_seconds(gm_t *m)
{
    rill_spinlock_lock(&m->spans_lock);
    qsort(m->spans, m->nspans, sizeof(*m->spans), span_cmp);
    size_t n = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < m->nspans; i++) {
        if (n > 0 && m->spans[i].t0 <= m->spans[n - 1].t1) {
            if (m->spans[i].t1 > m->spans[n - 1].t1)
                m->spans[n - 1].t1 = m->spans[i].t1;
        } else {
            m->spans[n++] = m->spans[i];
        }
    }
    m->nspans = n;
    for (size_t i = 0; i < n; i++)
        total += m->spans[i].t1 - m->spans[i].t0;
    rill_spinlock_unlock(&m->spans_lock);
    return (double)total * 1e-9;
}

/* ------------------------------------------------------------ launch */

/* A task that cannot run here at all: fail it and complete it (its successors are
 * released: the run ends with the error, no hang). */
void gm_task_fail_now(gm_t *m, rill_task_t *task, rill_status_t s, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    rill_taskpool_fail(task->tp, s, "%s", msg);
    rill_device_t *dev = m->dev;
    atomic_fetch_sub_explicit(&dev->queued_ns, task->est_ns, memory_order_relaxed);
    atomic_fetch_sub_explicit(&dev->queued_tasks, 1, memory_order_relaxed);
    /* it never ran here: its writes count on the host copy, not on a GPU copy that may
     * have no block (the bring-home would then chase bytes that do not exist) */
    task->device = 0;
    rill_task_complete(NULL, task, RILL_HOOK_ERROR);
}

enum { LAUNCH_OK, LAUNCH_LATER, LAUNCH_FAILED };

/* Step 2 of a launch: each input current in the block, or on its way (a transfer for another
 * task, a landing from another rank, or one staged in now), the exec stream s made to wait
 * for it; a written-only datum waits for bytes still landing in its block. LAUNCH_LATER: an
 * input's only current copy is on its way home; LAUNCH_FAILED: a CUDA call failed (said). */
static int wait_inputs(gm_t *m, rill_task_t *task, cudaStream_t s, const rill_task_flow_t *flows,
                       gm_entry_t *const *ents, int n)
{
    for (int i = 0; i < n; i++) {
        gm_entry_t *e = ents[i];
        rill_data_t *d = flows[i].data;
        /* bytes on their way into the block (written only: not over them) */
        bool wait = e->xfers > 0;
        if (flows[i].mode & RILL_FLOW_READ) {
            uint64_t v = atomic_load_explicit(&d->version, memory_order_acquire);
            bool current = rill_data_copy_current(d, e->copy);
            if (current && e->xfers == 0) {
                atomic_fetch_add_explicit(&m->n_hits, 1, memory_order_relaxed);
            } else if (e->xfers > 0 && (current || e->xfer_version == v)) {
                /* on its way for another task, or landing from another rank (current from
                 * the receive's completion on: its bytes are there once e->ready is) */
                wait = true;
            } else {
                cudaError_t err = gm_stage_in(m, e, d);
                if (err == cudaErrorNotReady)
                    return LAUNCH_LATER; /* its only current copy is on its way home */
                if (err != cudaSuccess) {
                    gm_fail_cuda(m, task, "staging an input in", err);
                    return LAUNCH_FAILED;
                }
                wait = e->xfers > 0;
            }
        }
        if (wait) {
            cudaError_t err = cudaStreamWaitEvent(s, e->ready, 0);
            if (err != cudaSuccess) {
                gm_fail_cuda(m, task, "cudaStreamWaitEvent", err);
                return LAUNCH_FAILED;
            }
        }
    }
    return LAUNCH_OK;
}

/* The host's side of the hand-over in the trace: a slice on the manager's track from the
 * launch's start to when the body was enqueued, its steps' times (tt: start, inputs, event,
 * body, events) in its arguments. */
static void trace_launch(const rill_task_t *task, uint64_t tt[5])
{
    char args[96]; /* (the trace keeps 79 characters: the name goes last) */
    snprintf(args, sizeof(args), "us: inputs %.1f, event %.1f, body %.1f, events %.1f; %s",
             (double)(tt[1] - tt[0]) / 1e3, (double)(tt[2] - tt[1]) / 1e3,
             (double)(tt[3] - tt[2]) / 1e3, (double)(tt[4] - tt[3]) / 1e3, task->tc->name);
    /* the task's id, as on its kernel's slice (rill_trace_timeline --waits pairs them) */
    char info[160];
    uint64_t id = task->tc->trace_info ? task->tc->trace_info(task, info, sizeof(info)) : 0;
    rill_trace_slice("gpu", "launch", tt[0], tt[4], task->prio.priority, id, args);
    rill_trace_instant("gpu", "launched", tt[4]);
}

/* Reserve, stage in, enqueue the body. LAUNCH_LATER: no room now (nothing was kept). */
static int launch(gm_t *m, rill_task_t *task, int stream)
{
    /* traces: the host's steps of the launch (inputs' waits, the start event, the body's
     * enqueue, the events behind it), a slice on the manager's track */
    uint64_t tt[5] = { m->trace ? rill_time_ns() : 0 };
    rill_task_flow_t flows[RILL_MAX_FLOWS];
    int n = task->tc->flows ? task->tc->flows(task, flows, RILL_MAX_FLOWS) : 0;
    gm_entry_t *ents[RILL_MAX_FLOWS];
    size_t need = 0;
    for (int i = 0; i < n; i++)
        need += (flows[i].data->size + 255) & ~(size_t)255;
    if (need > m->capacity) {
        gm_task_fail_now(m, task, RILL_ERR_NO_MEMORY,
                         "task '%s' needs %zu bytes of GPU memory for its %d data, more than GPU "
                         "%d's memory zone holds for data (%zu of %zu bytes; the rest are "
                         "workspaces): raise device_cuda_memory_use or device_cuda_memory_size, "
                         "lower device_cuda_workspace, or use smaller tiles",
                         task->tc->name, need, n, m->res->info.ordinal, m->capacity,
                         m->res->zone_bytes);
        return LAUNCH_FAILED;
    }
    /* 1. zone space for every datum, each pinned by a reader: all of them or none */
    int held = 0;
    for (int i = 0; i < n; i++) {
        gm_entry_t *e = gm_entry_of(m, flows[i].data);
        if (!e) {
            gm_task_fail_now(m, task, RILL_ERR_NO_MEMORY, "out of host memory on GPU %d's manager",
                             m->res->info.ordinal);
            goto release;
        }
        ents[i] = e;
        /* being written home before its eviction, or reserved for a landing not armed
         * yet: wait until that is done */
        if (e->writeback || e->ahead)
            goto later;
        /* the same datum twice in one task: reserved once, pinned twice */
        if (!e->block) {
            uintptr_t addr;
            if (gm_zone_get(m, flows[i].data->size, &addr) != RILL_SUCCESS)
                goto later;
            gm_entry_set_block(m, e, addr);
        } else {
            gm_lru_touch(m, e);
        }
        atomic_fetch_add_explicit(&e->copy->readers, 1, memory_order_acq_rel);
        held++;
    }
    /* 2. inputs: current here, or on their way (the exec stream waits for them) */
    cudaStream_t s = m->res->exec[stream].stream;
    int in = wait_inputs(m, task, s, flows, ents, n);
    if (in == LAUNCH_LATER)
        goto later;
    if (in == LAUNCH_FAILED)
        goto failed;
    if (m->trace)
        tt[1] = rill_time_ns();
    /* every input is here or on its way: the written copies are the task's from now on */
    for (int i = 0; i < n; i++) {
        if (flows[i].mode & RILL_FLOW_WRITE)
            atomic_store_explicit(&ents[i]->copy->coherency, RILL_COHERENCY_EXCLUSIVE,
                                  memory_order_release);
        *flows[i].ptr = ents[i]->copy->ptr;
    }
    /* 3. the body enqueues; an event behind it says when it ran */
    gm_op_t *op = gm_op_new(m, OP_TASK);
    if (!op) {
        gm_task_fail_now(m, task, RILL_ERR_NO_MEMORY, "out of host memory on GPU %d's manager",
                         m->res->info.ordinal);
        goto release;
    }
    op->task = task;
    op->nent = n;
    memcpy(op->ent, ents, sizeof(ents[0]) * (size_t)n);
    for (int i = 0; i < n; i++)
        if (flows[i].mode & RILL_FLOW_WRITE)
            op->wrote |= 1u << i;
    op->slot = m->free_slots[--m->nfree_slots];
    gm_exec_view_t *view = &m->views[op->slot];
    view->exec = &m->res->exec[stream];
    m->res->status_host[op->slot] = 0;
    task->dev_exec = view;
    gm_op_begin(m, op, s, m->timing);
    if (m->trace)
        tt[2] = rill_time_ns();
    rill_hook_status_t hs = RILL_HOOK_ERROR;
    for (int i = 0; i < task->tc->nb_incarnations; i++)
        if (task->tc->incarnations[i].type == RILL_BODY_CUDA) {
            hs = task->tc->incarnations[i].hook(NULL, task);
            break;
        }
    op->body_failed = hs == RILL_HOOK_ERROR;
    if (m->trace)
        tt[3] = rill_time_ns();
    cudaError_t err = gm_op_record(m, op, s);
    if (err != cudaSuccess) {
        /* the stream cannot say when it is done: complete the task as failed now */
        gm_fail_cuda(m, task, "cudaEventRecord after the body", err);
        op->ev = NULL;
        m->free_slots[m->nfree_slots++] = op->slot;
        gm_op_free(m, op);
        goto failed;
    }
    gm_fifo_push(m, stream, op);
    op->launch = ++m->launches;
    if (m->trace) {
        tt[4] = rill_time_ns();
        trace_launch(task, tt);
    }
    /* the front end may now hand us puts of what the body writes, behind it (put_start) */
    if (task->tc->launched)
        task->tc->launched(task, m->index, op->launch);
    return LAUNCH_OK;

failed:
    for (int i = 0; i < held; i++)
        gm_copy_reader_put(ents[i]->copy);
    gm_task_fail_now(m, task, RILL_ERR_DEVICE, "task '%s' could not be launched on GPU %d",
                     task->tc->name, m->res->info.ordinal);
    return LAUNCH_FAILED;
release:
    for (int i = 0; i < held; i++)
        gm_copy_reader_put(ents[i]->copy);
    return LAUNCH_FAILED;
later:
    for (int i = 0; i < held; i++)
        gm_copy_reader_put(ents[i]->copy);
    return LAUNCH_LATER;
}

/* The least busy of exec streams lo .. hi-1 with room for a task, or -1. */
static int least_busy(const gm_t *m, int lo, int hi)
{
    int best = -1;
    for (int s = lo; s < hi; s++)
        if (m->fifo[s].count < m->max_inflight &&
            (best < 0 || m->fifo[s].count < m->fifo[best].count))
            best = s;
    return best;
}

/* The stream for a task. The urgent streams (0 .. nurgent-1, at the GPU's greatest stream
 * priority) take the tasks inserted RILL_DTD_URGENT (a factorization's critical path):
 * a kernel at the normal priority gets SMs only as the bulk's blocks end, so a chain of
 * small ones crawls (a recursive inverse took 30-58 ms among 7 streams of gemms, 6-8 ms
 * at the greatest priority, one H100). With device_cuda_urgent_by_priority, or for a taskpool
 * that marks no task urgent (its urgent streams would idle), they also take a task more
 * urgent than everything enqueued on the other streams. The rest go to the least busy of the
 * others; so does an urgent task when the urgent streams are full. -1: no room. */
static int pick_stream(gm_t *m, const rill_task_t *task)
{
    int n = m->res->nexec, u = m->res->nurgent;
    bool urgent = task->urgent || m->urgent_by_prio ||
                  !atomic_load_explicit(&task->tp->marks_urgent, memory_order_relaxed);
    for (int s = u; s < n && urgent && !task->urgent; s++)
        for (gm_op_t *op = m->fifo[s].head; op && urgent; op = op->next)
            urgent = op->task->prio.priority < task->prio.priority;
    int s = urgent ? least_busy(m, 0, u) : -1;
    return s >= 0 ? s : least_busy(m, u, n);
}

static rill_task_t *heap_top(const rill_heap_t *h)
{
    return h->count ? (rill_task_t *)((char *)h->items[0] - offsetof(rill_task_t, prio)) : NULL;
}

rill_heap_t *gm_pending_of(gm_t *m, const rill_task_t *task)
{
    return task->urgent ? &m->pending_urgent : &m->pending;
}

/* A launch longer than this is followed by a poll of the streams' completions */
#define GM_LONG_LAUNCH_NS 50000

/* Whether a copy on this GPU of one of task's data is still landing from another rank
 * (its landing armed or reserved, not yet seen complete): the task, once enqueued, would
 * wait for the bytes on its exec stream. */
static bool task_waits_landing(const gm_t *m, rill_task_t *task)
{
    rill_task_flow_t flows[RILL_MAX_FLOWS];
    int n = task->tc->flows ? task->tc->flows(task, flows, RILL_MAX_FLOWS) : 0;
    for (int i = 0; i < n; i++) {
        rill_data_copy_t *c = flows[i].data ? rill_data_copy(flows[i].data, m->index) : NULL;
        const gm_entry_t *e = c ? c->dev_priv : NULL;
        if (e && e->landings > 0)
            return true;
    }
    return false;
}

/* Tasks enqueued on the exec streams that read a copy still landing from another rank. */
static int landing_waiters(const gm_t *m)
{
    int n = 0;
    for (int s = 0; s < m->res->nexec; s++)
        for (const gm_op_t *op = m->fifo[s].head; op; op = op->next)
            for (int i = 0; op->kind == OP_TASK && i < op->nent; i++)
                if (op->ent[i]->landings > 0) {
                    n++;
                    break;
                }
    return n;
}

/* Whether task must wait on the host: it reads a copy still landing and
 * device_cuda_landing_waiters such tasks are enqueued already. *nw: landing_waiters(m),
 * counted on first need (-1: not yet; reset when a launch or a completion changes it). */
static bool landing_bound(const gm_t *m, rill_task_t *task, int *nw)
{
    if (m->landing_waiters == 0)
        return false;
    if (*nw < 0)
        *nw = landing_waiters(m);
    return *nw >= m->landing_waiters && task_waits_landing(m, task);
}

/* The tasks set aside back in the pending heaps, in priority order as before. */
static void aside_restore(gm_t *m)
{
    for (int i = 0; i < m->naside; i++)
        if (rill_heap_push(gm_pending_of(m, m->aside[i]), &m->aside[i]->prio) != RILL_SUCCESS)
            gm_task_fail_now(m, m->aside[i], RILL_ERR_NO_MEMORY,
                             "out of host memory queueing task '%s' on GPU %d",
                             m->aside[i]->tc->name, m->res->info.ordinal);
    m->naside = 0;
}

/* Launch pending tasks, highest priority first, while a stream has room; when the first
 * cannot be placed (its streams full), the first urgent task still may (the urgent
 * streams: an urgent task must not wait behind a task of the bulk that waits for room).
 * With device_cuda_landing_waiters, a task whose tile is still landing waits on the host
 * while that many such tasks are enqueued, and the next ones go first. */
int gm_launch_pending(gm_t *m)
{
    int launched = 0;
    int nw = -1; /* landing_bound's count */
    /* the tasks set aside by an earlier call stay aside while nothing that decided it
     * changed: landing_bound only turns false when a landing ends (or is given back) or a
     * task enqueued while its tile landed leaves its stream, and each moves the epoch */
    if (m->naside > 0 && m->aside_epoch != m->epoch)
        aside_restore(m);
    m->aside_epoch = m->epoch;
    /* at most as many tries as slots were free: completions seen between launches free
     * more, and release tasks into the heap, but the loop's other steps (intake, the
     * proxy, the watchdog's turn count) must come round */
    for (int tries = m->nfree_slots; tries > 0 && m->nfree_slots > 0; tries--) {
        rill_task_t *a = heap_top(&m->pending), *b = heap_top(&m->pending_urgent);
        if (!a && !b)
            break;
        rill_task_t *task = !a || (b && rill_heap_before(&b->prio, &a->prio)) ? b : a;
        /* a task whose tile is still landing, with the bound of such tasks enqueued
         * reached: set aside (it costs no try) until the epoch moves, so that the
         * tasks whose data are there take the slots; the landing ends on the GPU alone
         * (its put is enqueued on the sender), and its completion brings the task back */
        if (landing_bound(m, task, &nw)) {
            if (m->naside == m->naside_max) {
                int n = m->naside ? 2 * m->naside : 64;
                rill_task_t **g = realloc(m->aside, (size_t)n * sizeof(*g));
                if (!g)
                    break; /* (the rest wait for the next call) */
                m->aside = g;
                m->naside_max = n;
            }
            rill_heap_pop(gm_pending_of(m, task));
            m->aside[m->naside++] = task;
            tries++;
            continue;
        }
        int stream = pick_stream(m, task);
        if (stream < 0 && task == a && b && !landing_bound(m, b, &nw))
            stream = pick_stream(m, task = b);
        if (stream < 0)
            break;
        rill_heap_pop(gm_pending_of(m, task));
        uint64_t t0 = rill_time_ns();
        int r = launch(m, task, stream);
        if (r == LAUNCH_LATER) { /* no room: wait for completions and write-backs */
            uint64_t now = rill_time_ns();
            if (m->inflight > 0 || !m->stuck_since) {
                m->stuck_since = m->inflight > 0 ? 0 : now;
            } else if (now - m->stuck_since > 2000000000ull) {
                /* nothing of ours in flight and still no room for 2 s (peers' reads hold
                 * copies only briefly): the zone cannot hold this task's data */
                m->stuck_since = 0;
                rill_task_flow_t flows[RILL_MAX_FLOWS];
                int n = task->tc->flows(task, flows, RILL_MAX_FLOWS);
                size_t need = 0;
                for (int i = 0; i < n; i++)
                    need += flows[i].data->size;
                gm_task_fail_now(m, task, RILL_ERR_NO_MEMORY,
                                 "task '%s' needs %zu bytes for its %d data and GPU %d's zone "
                                 "(%zu bytes for data, largest free block %zu) cannot make room "
                                 "for them: raise device_cuda_memory_use or "
                                 "device_cuda_memory_size, or use smaller tiles",
                                 task->tc->name, need, n, m->res->info.ordinal, m->capacity,
                                 rill_zone_largest_free(m->res->zone));
                continue;
            }
            rill_heap_push(gm_pending_of(m, task), &task->prio);
            break;
        }
        m->stuck_since = 0;
        launched++;
        nw = -1; /* (this task may read a copy still landing; the serving below arms and
                  * completes landings) */
        /* A body's enqueue can hold this thread long (on 4 x H100, dpotrf NB 2048: a dtrmm
         * 0.3 ms, a dtrtri or a panel's dtrsm 0.6-0.8 ms, the libraries' calls): between two
         * launches, arm the landings and enqueue the puts that came meanwhile (the put
         * behind the body just launched among them), and after a long one see what
         * completed, rather than after the whole batch (landings waited 0.1-0.5 ms for a turn
         * that launched several) */
        if (!m->serve_between)
            continue;
        /* new requests first: a put handed over by the launched hook goes behind the body
         * only while the host has not seen the body complete (launch_in_flight), which the
         * poll below may see (a short kernel behind a launch that staged its inputs: none of
         * test_gpu_direct_late's puts went behind its producer with the poll first) */
        if (rill_mpsc_nonempty(&m->remote)) {
            gm_doing(m, "serving transfers from and to other ranks' GPUs (between launches)");
            gm_remote_step(m);
        }
        if (rill_time_ns() - t0 > GM_LONG_LAUNCH_NS) {
            gm_doing(m, "polling its streams' completions (between launches)");
            /* those waiting for room or a lane, once something completed */
            if (gm_poll_fifos(m) > 0 && m->remote_later) {
                gm_doing(m, "serving transfers from and to other ranks' GPUs (between launches)");
                gm_remote_step(m);
            }
        }
        gm_doing(m, "launching tasks");
    }
    /* traces, at each change: the tasks left waiting for a slot on this GPU, and those set
     * aside until their tile lands (rill_trace_timeline --waits: whether a slot held by a
     * task waiting for its tile could have run another) */
    int pending = m->pending.count + m->pending_urgent.count;
    if (m->trace && (pending != m->tr_pending || m->naside != m->tr_aside)) {
        /* (the trace copies a counter's name; set aside only with the bound on) */
        char name[40];
        int o = m->res->info.ordinal;
        uint64_t now = rill_time_ns();
        if (pending != m->tr_pending) {
            snprintf(name, sizeof(name), "GPU %d tasks pending", o);
            rill_trace_counter_every(name, now, pending);
        }
        if (m->naside != m->tr_aside && m->landing_waiters > 0) {
            snprintf(name, sizeof(name), "GPU %d tasks set aside", o);
            rill_trace_counter_every(name, now, m->naside);
        }
        m->tr_pending = pending;
        m->tr_aside = m->naside;
    }
    atomic_store_explicit(&m->wd_aside, m->naside, memory_order_relaxed); /* (describe) */
    return launched;
}

#endif /* RILL_HAVE_CUDA */
