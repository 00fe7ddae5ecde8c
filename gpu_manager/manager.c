/* The GPU manager: one thread per GPU, always on from rill_init to rill_fini, the only
 * thread that makes CUDA calls on its GPU (besides page-locking host tiles, which is not
 * bound to a GPU).
 *
 * Its loop, each step non-blocking:
 *   1. intake: take the tasks workers handed over (an MPSC stack) into a priority heap;
 *      requests to bring copies home (a CPU body needs them) start their transfers at once;
 *   2. completions: for each stream, the oldest operation's event is queried, in order;
 *      a finished transfer makes its copy current, a finished task is completed (its
 *      successors released; those that choose this GPU come straight back to step 3);
 *   3. launch: the highest-priority pending task gets zone space for its data (evicting
 *      least-recently-used copies that no task uses, writing the only current ones home
 *      first), its inputs staged in (nothing when its copy is current, D2D from a peer GPU
 *      that holds the newest version, else H2D) on the transfer streams, its exec stream made
 *      to wait for them (cudaStreamWaitEvent: the GPU orders it, no host wait), its body
 *      called to enqueue the work, and an event recorded behind it;
 *   [the channels issue adds: serve the port channels' FIFOs; enqueue waits on remote-input
 *    semaphores: more steps of this loop]
 *   4. nothing in flight and nothing pending: sleep on an eventcount until a worker hands
 *      over work (or a datum is destroyed); with work in flight: spin.
 * It never synchronises a stream or the device and makes no MPI call.
 */
#include "gm_internal.h"

#include "rill/cuda.h" /* rill_cuda_stream, rill_cuda_cublas: the API */

RILL_LOG_COMPONENT(rill_log_gpu, "gpu");

static rill_param_t *param_inflight, *param_timing, *param_urgent_prio, *param_put_sm, *param_lanes,
    *param_between, *param_sems, *param_waiters;

#define TUNER RILL_PARAM_LEVEL_TUNER

static const rill_param_decl_t gpu_params[] = {
    { "device_cuda_max_inflight", RILL_PARAM_INT, TUNER,
      "Tasks a GPU manager keeps enqueued per exec stream (launched, not yet seen complete)",
      .v.i = { 2, 1, 64 }, .param = &param_inflight },
    { "device_cuda_urgent_by_priority", RILL_PARAM_BOOL, TUNER,
      "Besides the tasks inserted RILL_DTD_URGENT, put on the urgent exec streams a task more "
      "urgent than all those enqueued on the other streams (for applications that do not mark "
      "their critical path)",
      .v.b = false, .param = &param_urgent_prio },
    { "device_cuda_put_sm_max", RILL_PARAM_INT, TUNER,
      "Tiles of up to this many bytes go into another rank's GPU by a kernel that copies them "
      "and signals their landing (GPUs with peer access); larger ones, and those from host "
      "memory, by the copy engine (0: always the copy engine). Raise it where a kernel launch "
      "costs the GPU manager less host time than a copy and a stream write",
      .v.i = { 0, 0, 16777216 }, .param = &param_put_sm },
    { "device_cuda_remote_lanes", RILL_PARAM_INT, TUNER,
      "Landing streams per GPU for tiles from other ranks, and put streams for tiles to them: a "
      "peer rank's transfers go on stream (rank mod this). A lane's waits run in order, so with "
      "too few a tile from one rank waits behind a landing armed for another rank's tile whose "
      "put is not done: keep at least as many as the ranks a GPU exchanges tiles with, up to 8",
      .v.i = { 4, 1, GM_NLANES }, .param = &param_lanes },
    { "device_cuda_landing_semaphores", RILL_PARAM_INT, TUNER,
      "Semaphores per GPU for tiles landing from other ranks' GPUs: each landing holds one from "
      "its reservation to its bytes, and landings are reserved ahead (announced to the sender, "
      "no request round trip) only while more than a quarter are free; at most 64 are waited "
      "for at once on a landing stream. Raise it when the statistics show landings asked for "
      "rather than announced ahead",
      .v.i = { 1024, 16, GM_MAX_SEMS }, .param = &param_sems },
    { "device_cuda_landing_waiters", RILL_PARAM_INT, TUNER,
      "The most tasks a GPU manager keeps enqueued on its exec streams while a tile they read "
      "is still landing from another rank (each takes an exec stream's slot, and what is behind "
      "it on its stream waits with it); the others of that kind wait on the host, in priority "
      "order, while tasks whose data are there go first (0: no bound). With landings reserved "
      "ahead a consumer is released when its producer is launched on the other rank, which "
      "can be milliseconds before the bytes come: lower it when the exec streams are busy "
      "waiting",
      .v.i = { 4, 0, 1024 }, .param = &param_waiters },
    { "device_cuda_serve_between_launches", RILL_PARAM_BOOL, TUNER,
      "Between two launches of a turn of its loop, a GPU manager arms the landings and enqueues "
      "the puts that came meanwhile, and after a launch over 50 us it polls its streams' "
      "completions (a body whose enqueue takes long would hold them back); off: once per "
      "turn, after every launch of the turn",
      .v.b = true, .param = &param_between },
    /* off by default: a timed event costs the manager more host time to record than one
     * without timing, per task (bench/README.md, "What timing costs") */
    { "device_cuda_timing", RILL_PARAM_BOOL, TUNER,
      "Time each GPU operation with CUDA events: the exec streams' busy time and the landing "
      "stream's waits in the statistics (always on in traces). It costs the GPU manager host "
      "time per task: turn it on to read those counters, not for speed",
      .v.b = false, .param = &param_timing },
};

rill_status_t rill_gpu_register_params(void)
{
    rill_status_t s = rill_log_register(&rill_log_gpu);
    rill_status_t q = rill_proxy_register_params();
    rill_status_t r =
        rill_params_register_table(gpu_params, sizeof(gpu_params) / sizeof(gpu_params[0]));
    return s != RILL_SUCCESS ? s : q != RILL_SUCCESS ? q : r;
}

#if RILL_HAVE_CUDA

static gm_t *managers[RILL_CUDA_MAX_GPUS];
static int nmanagers;

static bool op_span(gm_t *m, gm_op_t *op, uint64_t *t0, uint64_t *t1);
static cudaError_t ref_take(gm_t *m, int n);
static void trace_xfer(gm_t *m, gm_op_t *op, int track, const char *name, size_t bytes);
static void trace_flow_step(gm_t *m, gm_op_t *op, int track, char ph);
static void complete_op(gm_t *m, gm_op_t *op, cudaError_t err);
static void publish_fifos(gm_t *m);
static void sink_take(void *arg, rill_task_t *task);
static int intake(gm_t *m);
static int reap_dead(gm_t *m);
static void submit(rill_device_t *dev, void *task);
static void stage_home(rill_device_t *dev, void *task);
static void remote(rill_device_t *dev, rill_remote_xfer_t *x);
static void copy_release(rill_data_copy_t *c);
static rill_status_t remote_open(gm_t *m);
static void trace_slow_step(const uint64_t ph[6]);
static void *manager_main(void *arg);
static void managers_stop(rill_context_t *ctx);
static void describe(rill_device_t *dev, FILE *out);

/* ------------------------------------------------------------ small helpers */

void gm_fail_cuda(gm_t *m, rill_task_t *task, const char *call, cudaError_t e)
{
    if (task)
        rill_taskpool_fail(task->tp, RILL_ERR_DEVICE,
                           "GPU %d (%s): %s failed for task '%s': %s (%s)", m->res->info.ordinal,
                           m->res->info.name, call, task->tc->name, cudaGetErrorString(e),
                           cudaGetErrorName(e));
    else
        RILL_ERROR(RILL_LOG_GPU, "GPU %d (%s): %s failed: %s (%s)", m->res->info.ordinal,
                   m->res->info.name, call, cudaGetErrorString(e), cudaGetErrorName(e));
}

gm_op_t *gm_op_new(gm_t *m, int kind)
{
    gm_op_t *op = m->free_ops;
    if (op)
        m->free_ops = op->next;
    else if (!(op = malloc(sizeof(*op))))
        return NULL;
    memset(op, 0, sizeof(*op));
    op->kind = kind;
    op->slot = -1;
    return op;
}

void gm_op_free(gm_t *m, gm_op_t *op)
{
    rill_cuda_event_put(m->res, op->ev, false);
    rill_cuda_event_put(m->res, op->ev_start, true);
    rill_cuda_event_put(m->res, op->ev_end, true);
    op->next = m->free_ops;
    m->free_ops = op;
}

/* When on: a timing event on stream s before the operation, the start of its span. */
void gm_op_begin(gm_t *m, gm_op_t *op, cudaStream_t s, bool on)
{
    if (on && (op->ev_start = rill_cuda_event_get(m->res, true))) {
        if (cudaEventRecord(op->ev_start, s) == cudaSuccess) {
            op->timed = true;
            op->ref = m->ref_seq;
        } else {
            rill_cuda_event_put(m->res, op->ev_start, true);
            op->ev_start = NULL;
        }
    }
}

/* The events behind an operation on stream s: its end's timing event when it is timed,
 * then the one polled and waited for. */
cudaError_t gm_op_record(gm_t *m, gm_op_t *op, cudaStream_t s)
{
    if (op->timed && (!(op->ev_end = rill_cuda_event_get(m->res, true)) ||
                      cudaEventRecord(op->ev_end, s) != cudaSuccess)) {
        rill_cuda_event_put(m->res, op->ev_end, true);
        op->ev_end = NULL;
        op->timed = false;
    }
    op->ev = rill_cuda_event_get(m->res, false);
    return op->ev ? cudaEventRecord(op->ev, s) : cudaErrorMemoryAllocation;
}

/* A span may end this much after the host saw it complete before it counts as late: the
 * reference's bracket (ref_take) and cudaEventElapsedTime's resolution (0.5 us). */
#define GM_LATE_NS 5000
/* how often the manager takes a new time reference while it times operations */
#define GM_REF_PERIOD_NS 100000000ull

/* A timed operation's span on the host clock (false when it has none), measured once and
 * kept in the op (its trace slice, flow steps and counters all ask). Only for an operation
 * seen complete: its end cannot be after now, which checks the reference. */
static bool op_span(gm_t *m, gm_op_t *op, uint64_t *t0, uint64_t *t1)
{
    if (op->span == 0) {
        /* the start from the reference event, the duration from the operation's own pair (a
         * float in ms loses precision as the run goes on: the duration keeps it) */
        float a = 0, d = 0;
        const struct gm_ref *r = &m->refs[op->ref % GM_NREFS];
        op->span = -1; /* (a reference GM_NREFS periods old is gone: no span) */
        if (op->timed && op->ev_start && op->ev_end && r->seq == op->ref && r->ev &&
            cudaEventElapsedTime(&a, r->ev, op->ev_start) == cudaSuccess &&
            cudaEventElapsedTime(&d, op->ev_start, op->ev_end) == cudaSuccess) {
            op->span = 1;
            op->span_t0 = r->ns + (uint64_t)((double)(a > 0 ? a : 0) * 1e6);
            op->span_t1 = op->span_t0 + (uint64_t)((double)(d > 0 ? d : 0) * 1e6);
            uint64_t now = rill_time_ns();
            if (op->span_t1 > now + GM_LATE_NS) {
                unsigned long long late = op->span_t1 - now,
                                   max =
                                       atomic_load_explicit(&m->late_max_ns, memory_order_relaxed);
                atomic_fetch_add_explicit(&m->n_late, 1, memory_order_relaxed);
                if (late > max) /* (only this thread writes it) */
                    atomic_store_explicit(&m->late_max_ns, late, memory_order_relaxed);
            }
        }
    }
    *t0 = op->span_t0;
    *t1 = op->span_t1;
    return op->span > 0;
}

/* A new time reference of the spans (gm_t.refs): an event on the GPU's clock and its time
 * on the host's. A synchronize returns some time after the event (up to tens of
 * microseconds when the thread sleeps in it), which would draw every span that much late
 * against the host's events. Instead n events are recorded one after the other on the
 * manager's idle reference stream, each polled until done: event i happened after the
 * start of the last poll that found it not done (or of its record) and before the end of
 * the one that found it done. With its distance on the GPU's clock from the last event
 * (the reference), each bracket bounds the reference's host time: the intersection's
 * middle is taken, or the narrowest bracket's when they disagree (a preempted poll).
 * Ops that begin from now on are measured from it; it is taken again every
 * GM_REF_PERIOD_NS, so the drift between the two clocks stays small. Manager thread. */
static cudaError_t ref_take(gm_t *m, int n)
{
    cudaEvent_t ev[16] = { 0 };
    uint64_t lo[16], hi[16];
    cudaError_t err = cudaSuccess;
    int k = 0;
    if (n > 16)
        n = 16;
    m->ref_at = rill_time_ns(); /* a failed take is not retried at once */
    for (; k < n; k++) {
        if (!(ev[k] = rill_cuda_event_get(m->res, true))) {
            err = cudaErrorMemoryAllocation;
            break;
        }
        lo[k] = rill_time_ns();
        if ((err = cudaEventRecord(ev[k], m->ref_stream)) != cudaSuccess) {
            k++;
            break;
        }
        for (;;) {
            uint64_t t = rill_time_ns();
            err = cudaEventQuery(ev[k]);
            if (err != cudaErrorNotReady) {
                hi[k] = rill_time_ns();
                break;
            }
            lo[k] = t;
        }
        if (err != cudaSuccess) {
            k++;
            break;
        }
    }
    uint64_t dist[16];
    for (int i = 0; i < k && err == cudaSuccess; i++) {
        float ms = 0;
        if ((err = cudaEventElapsedTime(&ms, ev[i], ev[k - 1])) == cudaSuccess)
            dist[i] = (uint64_t)((double)(ms > 0 ? ms : 0) * 1e6);
    }
    for (int i = 0; i < k - 1; i++)
        rill_cuda_event_put(m->res, ev[i], true);
    if (err != cudaSuccess) {
        if (k > 0)
            rill_cuda_event_put(m->res, ev[k - 1], true);
        return err;
    }
    uint64_t mid, width = rill_time_bracket(lo, hi, dist, k, &mid);
    struct gm_ref *r = &m->refs[(m->ref_seq + 1) % GM_NREFS];
    rill_cuda_event_put(m->res, r->ev, true);
    r->ev = ev[k - 1];
    r->ns = mid;
    r->seq = ++m->ref_seq;
    m->ref_at = rill_time_ns();
    RILL_VERBOSE(RILL_LOG_GPU, 3, "GPU %d: time reference %llu within %.1f us (%d events)",
                 m->res->info.ordinal, (unsigned long long)r->seq, (double)width * 1e-3, k);
    return cudaSuccess;
}

void gm_fifo_push(gm_t *m, int f, gm_op_t *op)
{
    gm_fifo_t *q = &m->fifo[f];
    op->next = NULL;
    if (q->tail)
        q->tail->next = op;
    else
        q->head = op;
    q->tail = op;
    q->count++;
    m->inflight++;
    op->t_push = rill_time_ns();
}

/* Traces: a transfer's span on its copy stream's track. */
static void trace_xfer(gm_t *m, gm_op_t *op, int track, const char *name, size_t bytes)
{
    uint64_t t0, t1;
    if (!m->trace || !op_span(m, op, &t0, &t1))
        return;
    char args[64];
    if (op->kind == OP_XFER && op->peer >= 0)
        snprintf(args, sizeof(args), "%zu bytes from GPU %d", bytes, op->peer);
    else
        snprintf(args, sizeof(args), "%zu bytes", bytes);
    rill_trace_track_t *prev = rill_trace_switch(m->tr_copy[track]);
    rill_trace_slice("gpu", name, t0, t1, 0, 0, args);
    rill_trace_switch(prev);
}

/* Traces: a point (ph 's' or 't') of op's flow in the middle of its slice on copy track. */
static void trace_flow_step(gm_t *m, gm_op_t *op, int track, char ph)
{
    uint64_t t0, t1;
    if (!op->flow || !m->trace || !op_span(m, op, &t0, &t1))
        return;
    rill_trace_track_t *prev = rill_trace_switch(m->tr_copy[track]);
    rill_trace_flow(ph, op->flow, t0 + (t1 - t0) / 2);
    rill_trace_switch(prev);
}

/* A copy into GPU memory ended: the block holds the version it carried, unless a task wrote
 * it since. */
static void complete_xfer(gm_t *m, gm_op_t *op, cudaError_t err)
{
    gm_entry_t *e = op->ent[0];
    rill_data_copy_t *c = e->copy;
    e->xfers--;
    if (op->src[0])
        gm_copy_reader_put(op->src[0]);
    trace_xfer(m, op, op->peer >= 0 ? 2 : 0, op->peer >= 0 ? "GPU to GPU" : "host to GPU",
               c->data->size);
    if (err != cudaSuccess) {
        gm_fail_cuda(m, NULL, "a transfer into GPU memory", err);
    } else if (atomic_load_explicit(&c->coherency, memory_order_acquire) !=
                   RILL_COHERENCY_EXCLUSIVE &&
               atomic_load_explicit(&c->version, memory_order_acquire) <= op->version[0]) {
        /* the block now holds that version, unless a task wrote it since (then its
         * version is newer, or it is being written: leave it) */
        atomic_store_explicit(&c->version, op->version[0], memory_order_release);
        atomic_store_explicit(&c->coherency, RILL_COHERENCY_SHARED, memory_order_release);
    }
}

/* A landing ended (the sender's signal came): the bytes are in the block; its semaphore
 * back, other GPUs may read the copy. */
static void complete_land(gm_t *m, gm_op_t *op, cudaError_t err)
{
    m->epoch++; /* its readers set aside may go (landing_bound) */
    gm_entry_t *e = op->ent[0];
    e->xfers--;
    m->free_sems[m->nfree_sems++] = op->sem;
    trace_xfer(m, op, track_land(m, op->rank), "landed from a rank", e->copy->data->size);
    trace_flow_step(m, op, track_land(m, op->rank), 't');
    uint64_t t0, t1; /* a landing stream's waits follow each other (summed over lanes) */
    if (op_span(m, op, &t0, &t1))
        atomic_fetch_add_explicit(&m->ns_land_wait, t1 - t0, memory_order_relaxed);
    if (--e->landings == 0) /* release: other GPUs may read the copy from now on */
        atomic_store_explicit(&e->copy->landing, 0, memory_order_release);
    if (err != cudaSuccess)
        gm_fail_cuda(m, NULL, "waiting for a tile from another rank", err);
}

/* A put to another rank's GPU ended (or, over the net wire, its source is ready: the send
 * starts). */
static void complete_put(gm_t *m, gm_op_t *op, cudaError_t err)
{
    rill_remote_xfer_t *x = op->rx;
    if (op->netput) { /* its source is ready: now over the net wire */
        gm_net_put_go(m, op, err);
        return;
    }
    trace_xfer(m, op, track_put(m, op->rank), "to a rank's GPU", ((rill_data_t *)x->data)->size);
    if (op->flow && m->trace && op->from_stream >= 0 && m->tr_exec[op->from_stream]) {
        rill_trace_track_t *prev = rill_trace_switch(m->tr_exec[op->from_stream]);
        rill_trace_flow('s', op->flow, op->from_t);
        rill_trace_switch(prev);
    }
    /* a step when the flow started in a kernel's slice, else the put starts it */
    trace_flow_step(m, op, track_put(m, op->rank), op->flow_from_kernel ? 't' : 's');
    if (op->src[0])
        gm_copy_reader_put(op->src[0]);
    if (err != cudaSuccess)
        gm_fail_cuda(m, NULL, "sending a tile to another rank's GPU", err);
    x->done(x, err == cudaSuccess ? RILL_SUCCESS : RILL_ERR_DEVICE);
}

/* A write-back before eviction ended: the block goes, unless it failed (then it keeps the
 * only current bytes). */
static void complete_wb(gm_t *m, gm_op_t *op, cudaError_t err)
{
    gm_entry_t *e = op->ent[0];
    trace_xfer(m, op, 1, "write-back (eviction)", e->copy->data->size);
    rill_data_copy_t *host = rill_data_host_copy(e->copy->data);
    if (host)
        gm_host_landed(host, op->version[0], err == cudaSuccess);
    e->writeback = false;
    if (err != cudaSuccess) { /* keep the block: it holds the only current bytes */
        gm_fail_cuda(m, NULL, "a write-back before eviction", err);
        atomic_store_explicit(&e->copy->readers, 0, memory_order_release);
        return;
    }
    gm_entry_drop_block(m, e);
    atomic_fetch_add_explicit(&m->n_evict, 1, memory_order_relaxed);
}

/* Tiles brought home for a CPU task: the task goes back to a worker, or fails. */
static void complete_home(gm_t *m, gm_op_t *op, cudaError_t err)
{
    size_t bytes = 0;
    for (int i = 0; i < op->nent; i++)
        bytes += op->ent[i]->copy->data->size;
    if (op->nent)
        trace_xfer(m, op, 1, "home (a CPU task needs it)", bytes);
    for (int i = 0; i < op->nent; i++) {
        rill_data_copy_t *c = op->ent[i]->copy;
        rill_data_copy_t *host = rill_data_host_copy(c->data);
        if (host)
            gm_host_landed(host, op->version[i], err == cudaSuccess && !op->body_failed);
        gm_copy_reader_put(c);
    }
    rill_task_t *task = op->task;
    if (err != cudaSuccess || op->body_failed) { /* failed: end it rather than bounce */
        gm_fail_cuda(m, task, "bringing tiles home", err);
        rill_task_complete(NULL, task, RILL_HOOK_ERROR);
    } else { /* back to a worker, which now finds the host copies current */
        task->next = NULL;
        rill_sched_push(m->ctx, NULL, task, 1);
    }
}

/* A task's work on its exec stream ended: its status word read, its span and trace slice,
 * its slot back, then the task completed and its copies' readers dropped. */
static void complete_task(gm_t *m, gm_op_t *op, cudaError_t err)
{
    rill_task_t *task = op->task;
    int slot = op->slot;
    /* one of the landing waiters leaves its stream: the tasks set aside may go (one
     * whose tiles all landed left the count when the last landing ended); with none
     * set aside, launch_pending reads the count afresh and nothing needs the epoch */
    for (int i = 0; m->naside > 0 && i < op->nent; i++)
        if (op->ent[i]->landings > 0) {
            m->epoch++;
            break;
        }
    rill_hook_status_t st = op->body_failed ? RILL_HOOK_ERROR : RILL_HOOK_DONE;
    if (err != cudaSuccess) {
        gm_fail_cuda(m, task, "the task's work on its stream", err);
        st = RILL_HOOK_ERROR;
    } else if (m->res->status_host[slot] != 0) {
        int v = m->res->status_host[slot];
        rill_status_t hs = task->tc->status_word ? task->tc->status_word(task, v) : RILL_ERR_TASK;
        if (hs != RILL_SUCCESS) {
            rill_taskpool_fail(task->tp, RILL_ERR_TASK,
                               "task '%s' on GPU %d failed: its body's status word is %d "
                               "after the stream ran it (%s)",
                               task->tc->name, m->res->info.ordinal, v, rill_status_string(hs));
            st = RILL_HOOK_ERROR;
        }
    }
    uint64_t t0, t1;
    if (op_span(m, op, &t0, &t1)) {
        gm_span_add(m, t0, t1);
        if (m->trace) { /* on its exec stream's track; the hand-over flow ends here */
            int sidx = m->views[slot].exec->index;
            char args[176];
            uint64_t id = 0;
            int off = snprintf(args, sizeof(args), "stream %d ", sidx);
            if (task->tc->trace_info && off > 0)
                id = task->tc->trace_info(task, args + off, sizeof(args) - (size_t)off);
            rill_task_trace_urgent(task, args, sizeof(args));
            rill_trace_track_t *prev = rill_trace_switch(m->tr_exec[sidx]);
            rill_trace_slice("gpu", task->tc->name, t0, t1, task->prio.priority, id, args);
            if (task->flow_in)
                rill_trace_flow('f', task->flow_in, t0);
            uint64_t mid = t0 + (t1 - t0) / 2;
            for (int k = 0; k < op->nflow_out; k++) /* to the puts behind it */
                rill_trace_flow('s', op->flow_out[k], mid);
            rill_trace_switch(prev);
            for (int i = 0; i < op->nent; i++)
                if (op->wrote & (1u << i)) {
                    op->ent[i]->w_stream = sidx;
                    op->ent[i]->w_t = mid;
                }
        }
    }
    m->free_slots[m->nfree_slots++] = slot;
    rill_device_t *dev = m->dev;
    atomic_fetch_sub_explicit(&dev->queued_ns, task->est_ns, memory_order_relaxed);
    atomic_fetch_sub_explicit(&dev->queued_tasks, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->n_tasks, 1, memory_order_relaxed);
    /* complete first (it sets the written copies' versions), then drop the readers: a
     * copy with no reader and an old version could otherwise be evicted unsaved */
    rill_task_complete(NULL, task, st);
    for (int i = 0; i < op->nent; i++)
        gm_copy_reader_put(op->ent[i]->copy);
}

static void complete_op(gm_t *m, gm_op_t *op, cudaError_t err)
{
    switch (op->kind) {
    case OP_XFER:
        complete_xfer(m, op, err);
        break;
    case OP_LAND:
        complete_land(m, op, err);
        break;
    case OP_PUT:
        complete_put(m, op, err);
        break;
    case OP_WB:
        complete_wb(m, op, err);
        break;
    case OP_HOME:
        complete_home(m, op, err);
        break;
    case OP_TASK:
        complete_task(m, op, err);
        break;
    }
    gm_op_free(m, op);
}

/* Poll every stream's oldest operations, in order. */
/* For the watchdog: what the streams hold (manager thread, once a turn). */
static void publish_fifos(gm_t *m)
{
    int exec = 0;
    for (int s = 0; s < m->res->nexec; s++)
        exec += m->fifo[s].count;
    atomic_store_explicit(&m->wd_exec, exec, memory_order_relaxed);
    atomic_store_explicit(&m->wd_net_expect, m->net_expect, memory_order_relaxed);
    atomic_store_explicit(&m->wd_net_sends,
                          (m->proxy ? gm_proxy_net_inflight(m->proxy) : 0) + gm_staged_inflight(m),
                          memory_order_relaxed);
    if (m->nlanes == 0)
        return; /* no GPU-direct streams */
    /* the oldest landing and put of all lanes */
    const gm_op_t *land = NULL, *put = NULL;
    int nland = 0, nput = 0;
    for (int l = 0; l < m->nlanes; l++) {
        const gm_fifo_t *fl = &m->fifo[fifo_land(m, l)], *fp = &m->fifo[fifo_put(m, l)];
        nland += fl->count;
        nput += fp->count;
        if (fl->head && (!land || fl->head->t_push < land->t_push))
            land = fl->head;
        if (fp->head && (!put || fp->head->t_push < put->t_push))
            put = fp->head;
    }
    atomic_store_explicit(&m->wd_land, nland, memory_order_relaxed);
    atomic_store_explicit(&m->wd_put, nput, memory_order_relaxed);
    atomic_store_explicit(&m->wd_land_t, land ? land->t_push : 0, memory_order_relaxed);
    atomic_store_explicit(&m->wd_put_t, put ? put->t_push : 0, memory_order_relaxed);
    if (land) {
        atomic_store_explicit(&m->wd_land_rank, land->rank, memory_order_relaxed);
        atomic_store_explicit(&m->wd_land_sem, land->sem, memory_order_relaxed);
        atomic_store_explicit(&m->wd_land_target, land->target, memory_order_relaxed);
    }
    if (put)
        atomic_store_explicit(&m->wd_put_rank, put->rank, memory_order_relaxed);
}

int gm_poll_fifos(gm_t *m)
{
    int done = 0;
    /* transfers first: a task completed below may depend on what they make current */
    for (int k = 0; k < m->nfifo; k++) {
        int f = (k + m->res->nexec) % m->nfifo;
        gm_fifo_t *q = &m->fifo[f];
        while (q->head) {
            gm_op_t *op = q->head;
            cudaError_t err = op->ev ? cudaEventQuery(op->ev) : cudaSuccess;
            if (err == cudaErrorNotReady)
                break;
            q->head = op->next;
            if (!q->head)
                q->tail = NULL;
            q->count--;
            m->inflight--;
            complete_op(m, op, err);
            done++;
        }
    }
    publish_fifos(m);
    return done;
}

/* ------------------------------------------------------------ intake and the loop */

static void sink_take(void *arg, rill_task_t *task)
{
    gm_t *m = arg;
    task->prio.seq = m->seq++;
    if (m->trace) { /* in flight from now: rill_task_complete counts it out */
        atomic_fetch_add_explicit(&m->ctx->trace_running, 1, memory_order_relaxed);
        /* a task its own completions made ready (e.g. a receive's consumer): from here to
         * "launched" is the manager's */
        rill_trace_instant("gpu", "released here", rill_time_ns());
    }
    if (rill_heap_push(gm_pending_of(m, task), &task->prio) != RILL_SUCCESS)
        gm_task_fail_now(m, task, RILL_ERR_NO_MEMORY, "out of host memory on GPU %d's manager",
                         m->res->info.ordinal);
}

static int intake(gm_t *m)
{
    rill_mpsc_node_t *node = rill_mpsc_take_all(&m->intake); /* oldest first */
    if (!node)
        return 0;
    rill_task_t *rev = NULL, **tail = &rev;
    for (; node; node = node->next) {
        rill_task_t *t = (rill_task_t *)((char *)node - offsetof(rill_task_t, link));
        *tail = t;
        tail = &t->next;
    }
    *tail = NULL;
    int n = 0;
    while (rev) {
        rill_task_t *t = rev;
        rev = rev->next;
        if (t->device == m->index)
            sink_take(m, t);
        else
            gm_home_start(m, t);
        n++;
    }
    return n;
}

/* Entries of destroyed data: drop their blocks, free them (and their copies). */
static int reap_dead(gm_t *m)
{
    rill_mpsc_node_t *node = rill_mpsc_take_all(&m->dead);
    if (m->dead_later) { /* those still busy last time first */
        rill_mpsc_node_t *tail = m->dead_later;
        while (tail->next)
            tail = tail->next;
        tail->next = node;
        node = m->dead_later;
        m->dead_later = NULL;
    }
    int n = 0;
    while (node) {
        rill_mpsc_node_t *next = node->next;
        gm_entry_t *e = (gm_entry_t *)((char *)node - offsetof(gm_entry_t, dead_link));
        if (e->ahead) {
            /* reserved ahead for a landing that was never armed (its taskpool failed before
             * the receive ran): nothing will end it, and the sender, told of it, may still
             * copy into the block and signal the semaphore, so neither goes back to use:
             * the block stays taken until the zone goes (rill_fini) and the semaphore is
             * not freed. The entry goes. */
            RILL_WARN(RILL_LOG_GPU,
                      "GPU %d: datum (key %llu) destroyed with a landing of %zu bytes reserved "
                      "for it ahead and never armed (its taskpool failed?): the block and its "
                      "semaphore stay out of use until rill_fini",
                      m->res->info.ordinal, (unsigned long long)e->copy->data->key,
                      e->copy->data->size);
            m->early_bytes -= e->copy->data->size;
            gm_lru_unlink(m, e);
            e->block = 0;
            e->ahead = false;
            e->xfers = e->landings = 0;
            m->epoch++;
        }
        /* a transfer into or out of the block may still be landing (the task that needed it
         * completed on its exec stream's event): free the entry once it has */
        if (e->xfers > 0 || e->writeback ||
            atomic_load_explicit(&e->copy->readers, memory_order_acquire) > 0) {
            node->next = m->dead_later;
            m->dead_later = node;
            node = next;
            continue;
        }
        if (e->block)
            gm_entry_drop_block(m, e);
        rill_cuda_event_put(m->res, e->ready, false);
        atomic_bool *reaped = e->reaped;
        free(e->copy);
        free(e);
        atomic_store_explicit(reaped, true, memory_order_release); /* its waiter may go */
        node = next;
        n++;
    }
    return n;
}

static void submit(rill_device_t *dev, void *task)
{
    gm_t *m = dev->priv;
    rill_mpsc_push(&m->intake, &((rill_task_t *)task)->link);
    /* the push (seq_cst) precedes the signal; the manager checks the queue (seq_cst) after
     * preparing to sleep: one of the two sees the other (as the comm thread's sleep) */
    rill_evcount_signal(&m->wake, 1);
}

static void stage_home(rill_device_t *dev, void *task)
{
    ((rill_task_t *)task)->device = 0; /* tells intake it is a request to bring data home */
    submit(dev, task);
}

static void remote(rill_device_t *dev, rill_remote_xfer_t *x)
{
    gm_t *m = dev->priv;
    rill_mpsc_push(&m->remote, &x->link);
    rill_evcount_signal(&m->wake, 1); /* as submit */
}

static const rill_device_ops_t gm_ops = {
    .submit = submit,
    .stage_home = stage_home,
    .remote = remote,
    .describe = describe,
};

/* The datum of a GPU copy is destroyed (any thread but this GPU's manager: the main
 * thread, or a worker dropping PTG's last reference): hand the copy to its manager and wait
 * until it let go of it (its transfers landed; the manager's loop never blocks). Each
 * waiter waits for its own entry: entries are freed in any order (a busy one later). */
static void copy_release(rill_data_copy_t *c)
{
    rill_device_t *dev = rill_device_get(c->device);
    gm_t *m = dev ? dev->priv : NULL;
    gm_entry_t *e = c->dev_priv;
    if (!m || !e) {
        free(e);
        free(c);
        return;
    }
    atomic_bool reaped;
    atomic_init(&reaped, false);
    e->reaped = &reaped;
    rill_mpsc_push(&m->dead, &e->dead_link); /* publishes e->reaped (the push is a release) */
    rill_evcount_signal(&m->wake, 1);
    while (!atomic_load_explicit(&reaped, memory_order_acquire))
        sched_yield();
}

/* The landing and put streams and the landing semaphores (zeroed once, here: the only
 * synchronisation, at start). */
static rill_status_t remote_open(gm_t *m)
{
    uintptr_t addr = 0;
    int lanes = (int)rill_param_get_int(param_lanes);
    int nsems = (int)rill_param_get_int(param_sems);
    cudaError_t e = cudaSuccess;
    for (int l = 0; l < lanes && e == cudaSuccess; l++) {
        e = cudaStreamCreateWithFlags(&m->land_stream[l], cudaStreamNonBlocking);
        if (e == cudaSuccess)
            e = cudaStreamCreateWithFlags(&m->put_stream[l], cudaStreamNonBlocking);
    }
    if (e == cudaSuccess &&
        rill_zone_alloc(m->res->zone, (size_t)nsems * sizeof(uint64_t), &addr) != RILL_SUCCESS)
        e = cudaErrorMemoryAllocation;
    if (e == cudaSuccess)
        e = cudaMemsetAsync((void *)addr, 0, (size_t)nsems * sizeof(uint64_t), m->land_stream[0]);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(m->land_stream[0]);
    if (e != cudaSuccess) {
        snprintf(m->start_err, sizeof(m->start_err),
                 "setting up the streams and semaphores of remote transfers: %s",
                 cudaGetErrorString(e));
        return RILL_ERR_DEVICE;
    }
    m->nlanes = lanes;
    m->sems = (uint64_t *)addr;
    m->nsems = nsems;
    for (int k = 0; k < nsems; k++)
        m->free_sems[m->nfree_sems++] = nsems - 1 - k;
    return RILL_SUCCESS;
}

/* Traces: a turn of the manager's loop longer than this is drawn, with its phases */
#define GM_SLOW_STEP_NS 4000

static void trace_slow_step(const uint64_t ph[6])
{
    char args[96];
    snprintf(args, sizeof(args),
             "us: intake %.1f, remote %.1f, completions %.1f, launches %.1f, proxy %.1f",
             (double)(ph[1] - ph[0]) / 1e3, (double)(ph[2] - ph[1]) / 1e3,
             (double)(ph[3] - ph[2]) / 1e3, (double)(ph[4] - ph[3]) / 1e3,
             (double)(ph[5] - ph[4]) / 1e3);
    rill_trace_slice("gpu", "slow turn", ph[0], ph[5], 0, 0, args);
}

/* The manager's GPU opened on its thread (streams, zone, status words), its slots, FIFOs,
 * landing and put streams and its proxy; the error said in m->start_err. */
static rill_status_t manager_setup(gm_t *m)
{
    rill_context_t *ctx = m->ctx;
    int peers[RILL_CUDA_MAX_GPUS], npeers = 0;
    for (int i = 0; i < ctx->ngpus; i++)
        if (i != m->gpu)
            peers[npeers++] = ctx->gpus[i].ordinal;
    rill_cuda_gpu_config_t cfg;
    rill_cuda_config_from_params(&cfg);
    cfg.peers = peers;
    cfg.npeers = npeers;
    m->max_inflight = (int)rill_param_get_int(param_inflight);
    m->landing_waiters = (int)rill_param_get_int(param_waiters);
    m->urgent_by_prio = rill_param_get_bool(param_urgent_prio);
    m->serve_between = rill_param_get_bool(param_between);
    m->put_sm_max = (size_t)rill_param_get_int(param_put_sm);
    cfg.nstatus = cfg.exec_streams * m->max_inflight;
    rill_status_t st =
        rill_cuda_gpu_open(&ctx->gpus[m->gpu], &cfg, &m->res, m->start_err, sizeof(m->start_err));
    if (st == RILL_SUCCESS) {
        m->views = calloc((size_t)cfg.nstatus, sizeof(*m->views));
        m->free_slots = malloc(sizeof(int) * (size_t)cfg.nstatus);
        if (!m->views || !m->free_slots) {
            snprintf(m->start_err, sizeof(m->start_err), "out of host memory");
            st = RILL_ERR_NO_MEMORY;
        } else {
            for (int i = 0; i < cfg.nstatus; i++) {
                m->views[i].ordinal = m->res->info.ordinal;
                m->views[i].status_dev = m->res->status_dev + i;
                m->free_slots[m->nfree_slots++] = cfg.nstatus - 1 - i;
            }
            m->capacity = rill_zone_size(m->res->zone) - rill_zone_used(m->res->zone);
            m->nfifo = m->res->nexec + 2 + RILL_CUDA_MAX_GPUS;
            for (int i = 0; i < m->res->nexec; i++)
                m->fifo_stream[i] = m->res->exec[i].stream;
            m->fifo_stream[fifo_h2d(m)] = m->res->h2d;
            m->fifo_stream[fifo_d2h(m)] = m->res->d2h;
            for (int p = 0; p < RILL_CUDA_MAX_GPUS; p++)
                m->fifo_stream[fifo_peer(m, p)] = m->res->peer[p];
            if ((st = remote_open(m)) == RILL_SUCCESS) { /* (it sets m->nlanes) */
                m->nfifo = m->res->nexec + 2 + RILL_CUDA_MAX_GPUS + 2 * m->nlanes;
                for (int l = 0; l < m->nlanes; l++) {
                    m->fifo_stream[fifo_land(m, l)] = m->land_stream[l];
                    m->fifo_stream[fifo_put(m, l)] = m->put_stream[l];
                }
                m->capacity = rill_zone_size(m->res->zone) - rill_zone_used(m->res->zone);
            }
        }
    }
    if (st == RILL_SUCCESS)
        st = gm_proxy_open(ctx, m->gpu, m->res, &m->wake, m, &m->proxy, m->start_err,
                           sizeof(m->start_err));
    return st;
}

/* The trace's tracks of the manager's GPU: the manager, each exec stream, the copy streams
 * and the landing and put streams of each lane. */
static void name_tracks(gm_t *m)
{
    char name[160];
    snprintf(name, sizeof(name), "GPU %d manager and exec streams (%s)", m->res->info.ordinal,
             m->res->info.name);
    rill_trace_thread(2000 + m->gpu, name);
    /* tracks 3000 + 64 g + s: the exec streams, then the copy streams */
    for (int s = 0; s < m->res->nexec; s++) {
        snprintf(name, sizeof(name), "GPU %d exec stream %d%s", m->res->info.ordinal, s,
                 s < m->res->nurgent ? " (high priority)" : "");
        m->tr_exec[s] = rill_trace_track(3000 + 64 * m->gpu + s, name);
    }
    static const char *const copy_names[5] = { "host to GPU", "GPU to host", "GPU to GPU",
                                               "landings from other ranks",
                                               "puts to other ranks' GPUs" };
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof(name), "GPU %d copies: %s", m->res->info.ordinal, copy_names[k]);
        m->tr_copy[k] = rill_trace_track(3000 + 64 * m->gpu + 40 + k, name);
    }
    /* one track per stream (tracks 3000 + 64 g + 43.., 48.., 56..): their slices
     * overlap from one stream to another */
    for (int l = 0; l < m->nlanes; l++)
        for (int k = 0; k < 2; k++) {
            char lane[32] = "";
            if (m->nlanes > 1)
                snprintf(lane, sizeof(lane), " (lane %d)", l);
            snprintf(name, sizeof(name), "GPU %d copies: %s%s", m->res->info.ordinal,
                     copy_names[3 + k], lane);
            int id = l == 0 ? 43 + k : (k == 0 ? 48 : 56) + l;
            m->tr_copy[track_lane(k, l)] = rill_trace_track(3000 + 64 * m->gpu + id, name);
        }
}

/* One turn of the loop: new and dead tasks, remote transfers, completions, launches, the
 * proxy; the turn and its step published for the watchdog. Returns the work done. */
static int manager_turn(gm_t *m)
{
    uint64_t ph[6] = { 0 };
    if (m->trace)
        ph[0] = rill_time_ns();
    /* for the watchdog: the turn and its step (a report that sees no new turn names the
     * step the thread is stuck in, e.g. a CUDA call that blocks) */
    atomic_store_explicit(&m->wd_turns,
                          atomic_load_explicit(&m->wd_turns, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    gm_doing(m, "taking new tasks");
    int progress = reap_dead(m);
    progress += intake(m);
    if (m->trace)
        ph[1] = rill_time_ns();
    gm_doing(m, "serving transfers from and to other ranks' GPUs");
    progress += gm_remote_step(m);
    progress += gm_staged_progress(m);
    if (m->trace)
        ph[2] = rill_time_ns();
    gm_doing(m, "polling its streams' completions");
    progress += gm_poll_fifos(m);
    if (m->trace)
        ph[3] = rill_time_ns();
    gm_doing(m, "launching tasks");
    progress += gm_launch_pending(m);
    if (m->trace)
        ph[4] = rill_time_ns();
    /* the proxy: calls from other threads, then the port channels' FIFOs (bounded per
     * channel, so a busy channel does not hold back launches) */
    gm_doing(m, "serving port channels");
    progress += gm_proxy_step(m->proxy);
    if (m->trace && (ph[5] = rill_time_ns()) - ph[0] > GM_SLOW_STEP_NS) {
        gm_doing(m, "tracing a slow turn of its loop");
        trace_slow_step(ph);
    }
    if (m->timing && rill_time_ns() - m->ref_at > GM_REF_PERIOD_NS) {
        gm_doing(m, "taking a GPU-to-host clock reference (traces, counters)");
        ref_take(m, 4); /* (on failure the spans keep the older reference) */
    }
    gm_doing(m, "idle");
    return progress;
}

/* After a turn with no work: poll again at once while something moves (a put over the net,
 * the pipeline's chunks, work on the GPU, the spin time after the last work, tasks waiting
 * for room, port channels recently busy), else sleep until woken or the proxy's next poll.
 * busy_at: when the manager last saw work (0: not read yet). */
static void manager_idle(gm_t *m, uint64_t spin_ns, uint64_t *busy_at)
{
    if (m->net_expect > 0 || gm_staged_inflight(m) > 0) {
        /* a put over the net lands only while we progress; the pipeline's chunks move
         * on when this thread sees them */
        rill_cpu_relax();
        return;
    }
    if (m->inflight > 0) { /* work on the GPU: watch it closely */
        *busy_at = 0;
        rill_cpu_relax();
        return;
    }
    if (spin_ns > 0) {
        uint64_t now = rill_time_ns();
        if (*busy_at == 0)
            *busy_at = now;
        if (now - *busy_at < spin_ns) {
            rill_cpu_relax();
            return;
        }
    }
    if (m->pending.count > 0 || m->pending_urgent.count > 0 || m->naside > 0 || m->remote_later) {
        /* waiting for room a read holds */
        sched_yield();
        return;
    }
    /* port channels: GPU threads push without waking anyone, so keep polling for a
     * while after the last request, then poll at intervals */
    int64_t poll_us = gm_proxy_idle_us(m->proxy);
    if (poll_us == 0) {
        rill_cpu_relax();
        return;
    }
    /* nothing in flight: sleep until a worker hands something over (or, with port
     * channels, until the next poll) */
    uint32_t key = rill_evcount_prepare(&m->wake);
    if (rill_mpsc_nonempty(&m->intake) || rill_mpsc_nonempty(&m->dead) || m->dead_later ||
        rill_mpsc_nonempty(&m->remote) || gm_proxy_has_work(m->proxy) ||
        atomic_load_explicit(&m->stop, memory_order_acquire)) {
        rill_evcount_cancel(&m->wake);
        return;
    }
    rill_evcount_wait(&m->wake, key, poll_us > 0 ? (uint64_t)poll_us : 1000000);
}

static void *manager_main(void *arg)
{
    gm_t *m = arg;
    rill_context_t *ctx = m->ctx;
    char tname[16];
    snprintf(tname, sizeof(tname), "rill-gpu %d", m->gpu);
    rill_thread_name(tname);
    rill_topo_bind_reserved(ctx->topo, m->gpu);
    rill_status_t st = manager_setup(m);
    m->trace = rill_trace_on();
    m->timing = m->trace || rill_param_get_bool(param_timing);
    if (st == RILL_SUCCESS && m->trace)
        name_tracks(m);
    if (st == RILL_SUCCESS && m->timing) {
        /* the first time reference of the spans (then one every GM_REF_PERIOD_NS) */
        if (cudaStreamCreateWithFlags(&m->ref_stream, cudaStreamNonBlocking) != cudaSuccess ||
            ref_take(m, 16) != cudaSuccess)
            m->timing = m->trace = false;
    }
    pthread_mutex_lock(&m->start_lock);
    m->start_status = st;
    m->started = st == RILL_SUCCESS ? 1 : -1;
    pthread_cond_broadcast(&m->start_cond);
    pthread_mutex_unlock(&m->start_lock);
    if (st != RILL_SUCCESS)
        return NULL;

    rill_sched_set_sink(m->index, sink_take, m);
    /* idle, it keeps polling this long after its last work (runtime_gpu_spin_us): the next
     * request (a remote tile's landing, a task its completion released) finds it awake */
    const uint64_t spin_ns = (uint64_t)ctx->idle_spin_us * 1000;
    uint64_t busy_at = rill_time_ns();
    while (!atomic_load_explicit(&m->stop, memory_order_acquire)) {
        if (manager_turn(m)) {
            busy_at = 0; /* read the clock once idle */
            continue;
        }
        manager_idle(m, spin_ns, &busy_at);
    }
    rill_sched_set_sink(0, NULL, NULL);
    return NULL;
}

/* ------------------------------------------------------------ start, stop, accessors */

static void managers_stop(rill_context_t *ctx)
{
    (void)ctx;
    for (int i = 0; i < nmanagers; i++) {
        gm_t *m = managers[i];
        atomic_store_explicit(&m->stop, true, memory_order_release);
        rill_evcount_signal(&m->wake, 0);
        pthread_join(m->thread, NULL);
    }
    if (nmanagers > 0 && rill_log_gpu.level >= 1)
        rill_gpu_managers_report(stderr);
    rill_data_copy_release_hook = NULL;
    for (int i = 0; i < nmanagers; i++) {
        gm_t *m = managers[i];
        /* the blocks go with the zone; the copies stay with their data (freed with them) */
        for (gm_entry_t *e = m->lru_head; e;) {
            gm_entry_t *next = e->next;
            atomic_store_explicit(&e->copy->coherency, RILL_COHERENCY_INVALID,
                                  memory_order_relaxed);
            e->copy->ptr = NULL;
            e->copy->dev_priv = NULL;
            free(e);
            e = next;
        }
        if (m->res) {
            cudaSetDevice(m->res->info.ordinal);
            for (int k = 0; k < GM_NREFS; k++)
                if (m->refs[k].ev)
                    cudaEventDestroy(m->refs[k].ev);
            if (m->ref_stream)
                cudaStreamDestroy(m->ref_stream);
            for (int l = 0; l < GM_NLANES; l++) {
                if (m->land_stream[l])
                    cudaStreamDestroy(m->land_stream[l]);
                if (m->put_stream[l])
                    cudaStreamDestroy(m->put_stream[l]);
            }
            gm_staged_fini(m);
            gm_proxy_close(&m->proxy);
            while (m->free_ops) {
                gm_op_t *op = m->free_ops;
                m->free_ops = op->next;
                free(op);
            }
            rill_cuda_gpu_close(&m->res);
        }
        rill_heap_fini(&m->pending);
        rill_heap_fini(&m->pending_urgent);
        free(m->aside);
        m->aside = NULL;
        m->naside = m->naside_max = 0;
        free(m->views);
        free(m->free_slots);
        free(m->sm_reach);
        free(m->spans);
        pthread_mutex_destroy(&m->start_lock);
        pthread_cond_destroy(&m->start_cond);
        free(m);
        managers[i] = NULL;
    }
    nmanagers = 0;
    rill_device_remove_all();
}

rill_status_t rill_gpu_managers_start(rill_context_t *ctx)
{
    if (ctx->ngpus == 0) {
        RILL_VERBOSE(RILL_LOG_GPU, 1, "no GPU: %s", ctx->no_gpu_why);
        return RILL_SUCCESS;
    }
    rill_status_t status = RILL_SUCCESS;
    for (int i = 0; i < ctx->ngpus; i++) {
        gm_t *m = calloc(1, sizeof(*m));
        if (!m) {
            status = RILL_ERR_NO_MEMORY;
            break;
        }
        m->ctx = ctx;
        m->gpu = i;
        m->tr_pending = m->tr_aside = -1;
        rill_evcount_init(&m->wake);
        rill_mpsc_init(&m->intake);
        rill_mpsc_init(&m->dead);
        rill_mpsc_init(&m->remote);
        rill_heap_init(&m->pending);
        rill_heap_init(&m->pending_urgent);
        rill_spinlock_init(&m->spans_lock);
        pthread_mutex_init(&m->start_lock, NULL);
        pthread_cond_init(&m->start_cond, NULL);
        char name[48];
        snprintf(name, sizeof(name), "cuda:%d (%.36s)", ctx->gpus[i].ordinal, ctx->gpus[i].name);
        double gflops = (double)ctx->gpus[i].sm_count * 450.0; /* ~ FP64 tensor rate per SM */
        status = rill_device_add(RILL_BODY_CUDA, name, &gm_ops, m, gflops, &m->dev);
        if (status != RILL_SUCCESS) {
            free(m);
            break;
        }
        m->index = m->dev->index;
        managers[nmanagers++] = m;
        int rc = pthread_create(&m->thread, NULL, manager_main, m);
        if (rc != 0) {
            RILL_ERROR(RILL_LOG_GPU, "cannot start the manager thread of GPU %d: %s",
                       ctx->gpus[i].ordinal, strerror(rc));
            nmanagers--;
            status = RILL_ERR_NO_MEMORY;
            break;
        }
        pthread_mutex_lock(&m->start_lock);
        while (m->started == 0)
            pthread_cond_wait(&m->start_cond, &m->start_lock);
        pthread_mutex_unlock(&m->start_lock);
        if (m->started < 0) {
            RILL_ERROR(RILL_LOG_GPU, "GPU %d cannot be used: %s", ctx->gpus[i].ordinal,
                       m->start_err);
            status = m->start_status;
            break;
        }
        RILL_VERBOSE(RILL_LOG_GPU, 1,
                     "GPU %d (%s) is device %d: zone %.2f GiB, %d exec streams x %d tasks in "
                     "flight, manager on core %d",
                     ctx->gpus[i].ordinal, ctx->gpus[i].name, m->index,
                     (double)m->res->zone_bytes / (1 << 30), m->res->nexec, m->max_inflight,
                     rill_topo_reserved_core(ctx->topo, i));
    }
    if (status != RILL_SUCCESS) {
        managers_stop(ctx); /* joins those that run; the failed one has returned */
        return status;
    }
    rill_data_copy_release_hook = copy_release;
    ctx->services_stop = managers_stop;
    return RILL_SUCCESS;
}

/* The watchdog's report (no task completed for runtime_watchdog_s): what this GPU holds and
 * does, and whether its zone thrashes (copies evicted and loaded again since the last
 * report while no task completed). Watchdog thread: counters only. */
static void describe(rill_device_t *dev, FILE *out)
{
    gm_t *m = dev->priv;
    unsigned long long tasks = atomic_load(&m->n_tasks), ev = atomic_load(&m->n_evict),
                       loads = atomic_load(&m->n_h2d) + atomic_load(&m->n_d2d);
    fprintf(out,
            "  GPU %d manager: %llu tasks done, %lld handed over and not done; %llu evictions "
            "(%llu written home first), %llu launches found the zone full; tiles from other "
            "ranks' GPUs %llu received (%llu waited for room), %llu sent\n",
            m->res ? m->res->info.ordinal : -1, tasks, (long long)atomic_load(&dev->queued_tasks),
            ev, (unsigned long long)atomic_load(&m->n_wb),
            (unsigned long long)atomic_load(&m->n_nospace),
            (unsigned long long)atomic_load(&m->n_land),
            (unsigned long long)atomic_load(&m->n_land_wait),
            (unsigned long long)atomic_load(&m->n_put));
    if (m->wd_seen && tasks == m->wd_tasks && ev > m->wd_evict && loads > m->wd_loads)
        fprintf(out,
                "  GPU %d: its zone thrashes: %llu copies evicted and %llu loaded since the last "
                "report, and no task completed; the tasks in flight need more than the zone "
                "(%zu bytes): raise device_cuda_memory_use or device_cuda_memory_size, or "
                "lower device_cuda_exec_streams / device_cuda_max_inflight\n",
                m->res ? m->res->info.ordinal : -1, ev - m->wd_evict, loads - m->wd_loads,
                m->res ? m->res->zone_bytes : 0);
    int ord = m->res ? m->res->info.ordinal : -1;
    unsigned long long turns = atomic_load_explicit(&m->wd_turns, memory_order_relaxed);
    const char *doing = atomic_load_explicit(&m->wd_doing, memory_order_relaxed);
    int nland = atomic_load_explicit(&m->wd_land, memory_order_relaxed),
        nput = atomic_load_explicit(&m->wd_put, memory_order_relaxed);
    fprintf(out,
            "  GPU %d manager thread: %s %s; in flight: %d operations on its exec streams, %d "
            "landings from other ranks armed, %d puts to them\n",
            ord,
            m->wd_seen && turns == m->wd_turns_seen
                ? "no turn of its loop since the last report, stuck"
                : "turning, now",
            doing ? doing : "starting", atomic_load_explicit(&m->wd_exec, memory_order_relaxed),
            nland, nput);
    /* stuck in a call (a CUDA call that blocks, as a hidden synchronisation does): where,
     * once per stall */
    if (m->wd_seen && turns == m->wd_turns_seen && turns != m->wd_stack_turns) {
        fprintf(out, "  GPU %d manager thread's stack:\n", ord);
        rill_thread_stack_print(m->thread, out, "    ", 1000);
        m->wd_stack_turns = turns;
    }
    uint64_t now = rill_time_ns(), t;
    if (nland > 0 && (t = atomic_load_explicit(&m->wd_land_t, memory_order_relaxed)) && t < now)
        fprintf(out,
                "  GPU %d: the oldest armed landing waits on the GPU for rank %d's signal for %.1f "
                "s (landing semaphore %d, value %llu): that rank's put is enqueued on its GPU and "
                "has not signalled\n",
                ord, atomic_load_explicit(&m->wd_land_rank, memory_order_relaxed),
                (double)(now - t) / 1e9,
                atomic_load_explicit(&m->wd_land_sem, memory_order_relaxed),
                (unsigned long long)atomic_load_explicit(&m->wd_land_target, memory_order_relaxed));
    if (nput > 0 && (t = atomic_load_explicit(&m->wd_put_t, memory_order_relaxed)) && t < now)
        fprintf(out, "  GPU %d: the oldest put, to rank %d, is in flight for %.1f s\n", ord,
                atomic_load_explicit(&m->wd_put_rank, memory_order_relaxed),
                (double)(now - t) / 1e9);
    m->wd_turns_seen = turns;
    int aside = atomic_load_explicit(&m->wd_aside, memory_order_relaxed);
    if (aside > 0)
        fprintf(out,
                "  GPU %d: %d tasks wait on the host for a tile still landing from another rank "
                "(device_cuda_landing_waiters such tasks are enqueued on its exec streams)\n",
                ord, aside);
    int net_expect = atomic_load_explicit(&m->wd_net_expect, memory_order_relaxed),
        net_ops = atomic_load_explicit(&m->wd_net_sends, memory_order_relaxed);
    if (net_expect > 0 || net_ops > 0)
        fprintf(out,
                "  GPU %d: over the net wire (other nodes), %d landings reserved and not armed "
                "(their bytes or the sender's word have not come), %d sends and receives in "
                "flight\n",
                ord, net_expect, net_ops);
    int later = atomic_load_explicit(&m->n_remote_later, memory_order_relaxed);
    if (later > 0)
        fprintf(out,
                "  GPU %d: %d transfers from or to other ranks' GPUs wait (for room in the zone, "
                "a landing semaphore, or their source copy on its way home)\n",
                m->res ? m->res->info.ordinal : -1, later);
    if (m->proxy) {
        fprintf(out, "  ");
        gm_proxy_describe(m->proxy, out);
    }
    m->wd_seen = true;
    m->wd_tasks = tasks;
    m->wd_evict = ev;
    m->wd_loads = loads;
}

void rill_gpu_managers_report(FILE *out)
{
    for (int i = 0; i < nmanagers; i++) {
        gm_t *m = managers[i];
        fprintf(out,
                "gpu %d: %llu tasks; H2D %llu (%.1f MB), D2H %llu (%.1f MB), D2D %llu (%.1f MB); "
                "%llu inputs already current; %llu evictions, %llu write-backs, %llu home "
                "requests, %llu launches waited for room; from ranks' GPUs %llu (%.1f MB, "
                "%llu waited for room), to ranks' GPUs %llu (%.1f MB)\n",
                m->res ? m->res->info.ordinal : i, (unsigned long long)atomic_load(&m->n_tasks),
                (unsigned long long)atomic_load(&m->n_h2d), (double)atomic_load(&m->b_h2d) / 1e6,
                (unsigned long long)atomic_load(&m->n_d2h), (double)atomic_load(&m->b_d2h) / 1e6,
                (unsigned long long)atomic_load(&m->n_d2d), (double)atomic_load(&m->b_d2d) / 1e6,
                (unsigned long long)atomic_load(&m->n_hits),
                (unsigned long long)atomic_load(&m->n_evict),
                (unsigned long long)atomic_load(&m->n_wb),
                (unsigned long long)atomic_load(&m->n_home),
                (unsigned long long)atomic_load(&m->n_nospace),
                (unsigned long long)atomic_load(&m->n_land), (double)atomic_load(&m->b_land) / 1e6,
                (unsigned long long)atomic_load(&m->n_land_wait),
                (unsigned long long)atomic_load(&m->n_put), (double)atomic_load(&m->b_put) / 1e6);
        if (m->proxy)
            gm_proxy_describe(m->proxy, out);
    }
}

rill_status_t rill_context_gpu_counters(const rill_context_t *ctx, int i, rill_gpu_counters_t *c)
{
    if (!ctx || !c)
        return rill_arg_null("rill_context_gpu_counters", ctx ? "c" : "the context");
    if (i < 0 || i >= nmanagers) {
        RILL_ERROR(RILL_LOG_GPU, "rill_context_gpu_counters: GPU %d: this process has %d", i,
                   nmanagers);
        return RILL_ERR_INVALID_ARG;
    }
    gm_t *m = managers[i];
    c->tasks = atomic_load(&m->n_tasks);
    c->h2d = atomic_load(&m->n_h2d);
    c->d2h = atomic_load(&m->n_d2h) + atomic_load(&m->n_wb);
    c->d2d = atomic_load(&m->n_d2d);
    c->h2d_bytes = atomic_load(&m->b_h2d);
    c->d2h_bytes = atomic_load(&m->b_d2h);
    c->d2d_bytes = atomic_load(&m->b_d2d);
    c->hits = atomic_load(&m->n_hits);
    c->evictions = atomic_load(&m->n_evict);
    c->writebacks = atomic_load(&m->n_wb);
    c->home_requests = atomic_load(&m->n_home);
    c->waits_for_room = atomic_load(&m->n_nospace);
    c->remote_in = atomic_load(&m->n_land);
    c->remote_in_bytes = atomic_load(&m->b_land);
    c->remote_out = atomic_load(&m->n_put);
    c->remote_out_bytes = atomic_load(&m->b_put);
    c->remote_waits_for_room = atomic_load(&m->n_land_wait);
    c->remote_early = atomic_load(&m->n_early);
    c->remote_behind = atomic_load(&m->n_behind);
    c->remote_sm = atomic_load(&m->n_put_sm);
    c->remote_wait_s = (double)atomic_load(&m->ns_land_wait) * 1e-9;
    c->busy_s = gm_busy_seconds(m);
    c->timed = m->timing;
    c->spans_late = atomic_load(&m->n_late);
    c->span_late_max_us = (double)atomic_load(&m->late_max_ns) * 1e-3;
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ body accessors (rill/cuda.h) */

static inline gm_exec_view_t *view_of(rill_task_t *task)
{
    return task && task->device > 0 ? task->dev_exec : NULL;
}

cudaStream_t rill_cuda_stream(rill_task_t *task)
{
    gm_exec_view_t *v = view_of(task);
    return v ? v->exec->stream : NULL;
}

cublasHandle_t rill_cuda_cublas(rill_task_t *task)
{
    gm_exec_view_t *v = view_of(task);
    return v ? v->exec->cublas : NULL;
}

cusolverDnHandle_t rill_cuda_cusolver(rill_task_t *task)
{
    gm_exec_view_t *v = view_of(task);
    return v ? v->exec->cusolver : NULL;
}

void *rill_cuda_workspace(rill_task_t *task, size_t *bytes)
{
    gm_exec_view_t *v = view_of(task);
    if (bytes)
        *bytes = v ? v->exec->workspace_size : 0;
    return v ? v->exec->workspace : NULL;
}

int *rill_cuda_status_word(rill_task_t *task)
{
    gm_exec_view_t *v = view_of(task);
    return v ? v->status_dev : NULL;
}

int rill_cuda_device(rill_task_t *task)
{
    gm_exec_view_t *v = view_of(task);
    return v ? v->ordinal : -1;
}

#else /* no CUDA toolkit at configure time */

rill_status_t rill_context_gpu_counters(const rill_context_t *ctx, int i, rill_gpu_counters_t *c)
{
    (void)ctx;
    (void)i;
    (void)c;
    return RILL_ERR_INVALID_ARG;
}

rill_status_t rill_gpu_managers_start(rill_context_t *ctx)
{
    (void)ctx;
    return RILL_SUCCESS;
}

void rill_gpu_managers_report(FILE *out)
{
    (void)out;
}

#endif
