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
#include "manager.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rill/params.h"

#include "channel.h"
#include "data_internal.h"
#include "proxy.h"
#include "net.h"
#if RILL_HAVE_CUDA
#include "put.h"
#endif
#include "scheduler.h"
#include "stack.h"

RILL_LOG_COMPONENT(rill_log_gpu, "gpu");

static rill_param_t *param_inflight, *param_timing, *param_urgent_prio, *param_put_sm, *param_lanes,
    *param_between, *param_sems, *param_waiters;

/* Landing semaphores per GPU (device_cuda_landing_semaphores, at most GM_MAX_SEMS): each
 * landing, reserved ahead or on request, holds one from its reservation to its bytes; a
 * quarter is kept from reservations ahead for landings on request. */
#define GM_MAX_SEMS 4096
/* Stream waits armed at once on one landing stream: a stream full of waits that nothing
 * satisfies yet blocks the enqueuing thread; a landing whose lane has this many waits
 * armed waits on the host (its put is enqueued, so the waits ahead of it will end). */
#define GM_MAX_ARMED 64

/* The most landing (and put) streams per GPU (device_cuda_remote_lanes). */
#define GM_NLANES 8

rill_status_t rill_gpu_register_params(void)
{
    rill_status_t s = rill_log_register(&rill_log_gpu);
    rill_status_t q = rill_proxy_register_params();
    if (s == RILL_SUCCESS)
        s = q;
    rill_status_t r = rill_param_register_int(
        "device_cuda_max_inflight",
        "Tasks a GPU manager keeps enqueued per exec stream (launched, not yet seen complete)",
        RILL_PARAM_LEVEL_TUNER, 2, 1, 64, &param_inflight);
    if (s == RILL_SUCCESS)
        s = r;
    r = rill_param_register_bool(
        "device_cuda_urgent_by_priority",
        "Besides the tasks inserted RILL_DTD_URGENT, put on the urgent exec streams a task "
        "more urgent than all those enqueued on the other streams (for applications that do "
        "not mark their critical path)",
        RILL_PARAM_LEVEL_TUNER, false, &param_urgent_prio);
    if (s == RILL_SUCCESS)
        s = r;
    r = rill_param_register_int(
        "device_cuda_put_sm_max",
        "Tiles of up to this many bytes go into another rank's GPU by a kernel that copies them "
        "and signals their landing (GPUs with peer access); larger ones, and "
        "those from host memory, by the copy engine (0, the default: always the copy engine; "
        "between two H200s a 4-64 KiB hop was no faster with 65536: the put's kernel launch "
        "costs the manager more host time than a copy and a stream write)",
        RILL_PARAM_LEVEL_TUNER, 0, 0, 16777216, &param_put_sm);
    if (s == RILL_SUCCESS)
        s = r;
    r = rill_param_register_int(
        "device_cuda_remote_lanes",
        "Landing streams per GPU for tiles from other ranks, and put streams for tiles to them: "
        "a peer rank's transfers go on stream (rank mod this). With 1, whose waits run in "
        "order, a tile from one rank waited behind a landing armed for another rank's tile "
        "whose put was not done (4 processes x 1 H100, dpotrf: 31-55 ms of tile time per "
        "rank in a 100 ms run; 0.6 ms on one rank with 4)",
        RILL_PARAM_LEVEL_TUNER, 4, 1, GM_NLANES, &param_lanes);
    if (s == RILL_SUCCESS)
        s = r;
    r = rill_param_register_int(
        "device_cuda_landing_semaphores",
        "Semaphores per GPU for tiles landing from other ranks' GPUs: each landing holds one "
        "from its reservation to its bytes, and landings are reserved ahead (announced to "
        "the sender, no request round trip) only while more than a quarter are free (64: "
        "48 landings ahead per GPU and run, of 276 on each of 4 processes x 1 H100, dpotrf "
        "N = 98304 NB 2048; 1024: all 276); at most 64 are waited for at once on a landing "
        "stream",
        RILL_PARAM_LEVEL_TUNER, 1024, 16, GM_MAX_SEMS, &param_sems);
    if (s == RILL_SUCCESS)
        s = r;
    r = rill_param_register_int(
        "device_cuda_landing_waiters",
        "The most tasks a GPU manager keeps enqueued on its exec streams while a tile they "
        "read is still landing from another rank (each takes an exec stream's slot, and "
        "what is behind it on its stream waits with it); the others of that kind wait on "
        "the host, in priority order, while tasks whose data are there go first. 0: no "
        "bound. With landings reserved ahead a consumer is released when its producer is "
        "launched on the other rank, which can be milliseconds before the bytes come (4 "
        "processes x 1 H100, dpotrf N = 98304 NB 2048: 186.5 TFLOP/s and exec streams busy "
        "94.6% with 4, 167.3 and 83.1% with no bound)",
        RILL_PARAM_LEVEL_TUNER, 4, 0, 1024, &param_waiters);
    if (s == RILL_SUCCESS)
        s = r;
    r = rill_param_register_bool(
        "device_cuda_serve_between_launches",
        "Between two launches of a turn of its loop, a GPU manager arms the landings and "
        "enqueues the puts that came meanwhile, and after a launch over 50 us it polls its "
        "streams' completions (a body's enqueue held it 0.3-0.8 ms for panel tasks of NB "
        "2048); off: once per turn, after every launch of the turn",
        RILL_PARAM_LEVEL_TUNER, true, &param_between);
    if (s == RILL_SUCCESS)
        s = r;
    /* off by default: a timing event costs the manager 1.3 us of host time to record
     * against 0.18 us for one without timing (H100), and 2.6 us more per task; a chain of
     * small CUDA tasks took 10.9 us per task timed against 2.4 us untimed (H200) */
    r = rill_param_register_bool("device_cuda_timing",
                                 "Time each GPU operation with CUDA events: the exec streams' "
                                 "busy time and the landing stream's waits in the statistics "
                                 "(always on in traces; costs the GPU manager about 2.6 us of "
                                 "host time per task)",
                                 RILL_PARAM_LEVEL_TUNER, false, &param_timing);
    return s != RILL_SUCCESS ? s : r;
}

#if RILL_HAVE_CUDA

/* ------------------------------------------------------------ structures */

/** A GPU copy's bookkeeping (copy->dev_priv): its block in the zone and its place in the
 * LRU list. Manager thread only, but for the copy it points to (see data_internal.h). */
typedef struct gm_entry {
    rill_data_copy_t *copy;
    struct gm_entry *prev, *next; /* LRU: oldest first; linked while it has a block */
    uintptr_t block;              /* 0: none */
    cudaEvent_t ready;            /* recorded behind the last transfer into the block */
    int xfers;                    /* transfers into the block in flight (each one ordered
                                   * after the previous one: see stage_in) */
    uint64_t xfer_version;        /* the version the last of them brings */
    int landings;                 /* of those, landings from another rank (reserved ahead
                                   * included): copy->landing is set while > 0 */
    bool ahead;                   /* reserved ahead (reserve_start), its wait not armed yet:
                                   * e->ready says nothing of it, so nothing may use it */
    bool writeback;               /* its block is being written home before it is freed */
    int w_stream;                 /* traces: the exec stream of the last task seen to
                                   * complete that wrote it (-1: none), and a time within
                                   * that task's slice (where a flow out of it starts) */
    uint64_t w_t;
    rill_mpsc_node_t dead_link; /* the datum was destroyed: link in the dead queue */
    atomic_bool *reaped;        /* then set (release) once the entry is freed */
} gm_entry_t;

enum { OP_TASK, OP_XFER, OP_HOME, OP_WB, OP_LAND, OP_PUT };

/* Time references of the spans kept (gm_t.refs): an operation in flight longer than GM_NREFS
 * periods (3.2 s) gets no span. */
#define GM_NREFS 32

/** An operation in flight on one stream, completed in order. */
/* The receive of a landing from a rank of another node (net wire), by semaphore slot. */
enum { GM_NET_NONE, GM_NET_POSTED, GM_NET_LANDED, GM_NET_FAILED };
typedef struct gm_netland {
    int state;
    int lane;
    uint64_t target;
    void *req; /* while posted */
} gm_netland_t;

typedef struct gm_op {
    int kind;
    struct gm_op *next;
    /* ev: behind the operation, polled for its completion and waited for by other streams
     * (no timing: CUDA documents such events as the fastest to wait on and to query; a query
     * measured the same either way, 0.17-0.18 us on an H100); a timed operation also
     * has timing events at its start and its end (ev_start, ev_end), and the time reference
     * current when it began (ref: its sequence number, gm_t.refs) */
    cudaEvent_t ev, ev_start, ev_end;
    bool timed;
    uint64_t ref;
    int span; /* op_span: 0 not asked yet, 1 known (span_t0, span_t1), -1 none */
    uint64_t span_t0, span_t1;
    rill_task_t *task; /* TASK, HOME */
    int nent;
    gm_entry_t *ent[RILL_MAX_FLOWS];       /* TASK: its copies (a reader each); XFER, WB: one */
    rill_data_copy_t *src[RILL_MAX_FLOWS]; /* peer copies read (a reader each), or NULL */
    uint64_t version[RILL_MAX_FLOWS];      /* XFER, HOME, WB: the version moved */
    int slot;                              /* TASK: its status word */
    bool body_failed;                      /* TASK: the body returned an error */
    int peer;                              /* XFER: the source GPU's ordinal, -1: host */
    int sem;                               /* LAND: its semaphore slot */
    rill_remote_xfer_t *rx;                /* PUT: the request (done when the op is) */
    struct gm_netput *netput;              /* PUT over the net wire: what it puts once the
                                            * op (its source ready) completed */
    uint64_t launch;                       /* TASK: its number (the launched hook's) */
    uint32_t wrote;                        /* TASK: bit i: ent[i] is written */
    /* traces: TASK: the flows to other ranks' GPUs that start in its slice (puts enqueued
     * behind it; a fifth and later one starts at its put instead); PUT, LAND: the flow the copy is
     * a step of, and for a PUT whose producer completed before it (from), where that flow starts
     * (exec stream, time) */
    uint64_t flow_out[4];
    int nflow_out;
    uint64_t flow;
    int from_stream;
    uint64_t from_t;
    bool flow_from_kernel; /* PUT: its flow starts in a kernel's slice (else at the put) */
    uint64_t t_launch;
    uint64_t t_push; /* when it entered its fifo (the watchdog's report) */
    int rank;        /* LAND: the sending rank; PUT: the receiving one */
    uint64_t target; /* LAND: the semaphore value it waits for */
} gm_op_t;

/** Operations of one stream, oldest first. */
typedef struct gm_fifo {
    gm_op_t *head, *tail;
    int count;
} gm_fifo_t;

/** What a body's accessors (include/rill/cuda.h) find through task->dev_exec. */
typedef struct gm_exec_view {
    rill_cuda_exec_t *exec;
    int ordinal;
    int *status_dev; /* this task's status word, as the device sees it */
} gm_exec_view_t;

typedef struct gm {
    int index; /* device index */
    int gpu;   /* position in ctx->gpus, reserved core */
    rill_context_t *ctx;
    rill_device_t *dev;
    rill_cuda_gpu_t *res;
    gm_proxy_t *proxy; /* its port channels' proxy service (proxy.c) */
    pthread_t thread;
    /* start-up handshake */
    pthread_mutex_t start_lock;
    pthread_cond_t start_cond;
    int started; /* 0 starting, 1 up, -1 failed */
    rill_status_t start_status;
    char start_err[256];
    /* from other threads */
    rill_mpsc_t intake;           /* tasks handed over (task->link) */
    rill_mpsc_t dead;             /* entries of destroyed data (entry->dead_link) */
    rill_mpsc_node_t *dead_later; /* of those, the ones still busy (manager thread) */
    atomic_bool stop;
    rill_evcount_t wake;
    /* manager thread only */
    rill_heap_t pending;        /* tasks to launch, by priority */
    rill_heap_t pending_urgent; /* those inserted RILL_DTD_URGENT */
    uint64_t seq;
    int nfifo; /* exec streams, then h2d, d2h, one per peer ordinal, landings, puts */
    gm_fifo_t fifo[RILL_CUDA_MAX_STREAMS + 2 + RILL_CUDA_MAX_GPUS + 2 * GM_NLANES];
    cudaStream_t fifo_stream[RILL_CUDA_MAX_STREAMS + 2 + RILL_CUDA_MAX_GPUS + 2 * GM_NLANES];
    /* GPU-direct remote transfers (rill_remote_xfer_t): handed over by other threads, and
     * (manager thread) those waiting for room, a semaphore or their source */
    rill_mpsc_t remote;
    rill_mpsc_node_t *remote_later;
    /* a peer rank's landings and puts go on lane (rank % nlanes): its own landing and put
     * streams (device_cuda_remote_lanes) */
    int nlanes;
    cudaStream_t land_stream[GM_NLANES], put_stream[GM_NLANES];
    uint64_t *sems;                /* nsems landing semaphores in the zone (device words) */
    uint64_t sem_seq[GM_MAX_SEMS]; /* the last target of each: they only grow */
    int free_sems[GM_MAX_SEMS], nfree_sems, nsems;
    /* landings held for ranks reached over the net wire and not armed yet: their bytes land
     * only while this thread progresses its worker, so it does not sleep meanwhile; each
     * one's receive, by semaphore slot */
    int net_expect;
    gm_netland_t netland[GM_MAX_SEMS];
    int max_inflight;
    bool urgent_by_prio; /* device_cuda_urgent_by_priority */
    bool serve_between;  /* device_cuda_serve_between_launches */
    int landing_waiters; /* device_cuda_landing_waiters (0: no bound) */
    /* tasks set aside by launch_pending (landing_bound): out of the pending heaps until
     * what decided it may have changed (epoch moves on: a landing ended or was given
     * back, or a task that read a landing copy left its stream), not popped and pushed
     * back at every turn of the loop */
    rill_task_t **aside;
    int naside, naside_max;
    uint64_t epoch, aside_epoch;
    int tr_pending, tr_aside; /* traces: the pending and set-aside tasks last counted
                               * (-1: none yet) */
    gm_exec_view_t *views;    /* one per status slot */
    int *free_slots, nfree_slots;
    gm_op_t *free_ops;
    gm_entry_t *lru_head, *lru_tail;
    size_t capacity;      /* zone bytes left for data once the workspaces are carved */
    int inflight;         /* operations in all fifos */
    uint64_t stuck_since; /* no room for the first pending task and nothing in flight */
    rill_trace_track_t *tr_exec[RILL_CUDA_MAX_STREAMS]; /* traces: one track per exec stream */
    /* host to GPU, GPU to host, GPU to GPU, then per lane from other ranks, per lane to them */
    rill_trace_track_t *tr_copy[3 + 2 * GM_NLANES];
    /* the watchdog thread's last look (describe) */
    bool wd_seen;
    unsigned long long wd_tasks, wd_evict, wd_loads, wd_turns_seen, wd_stack_turns;
    /* what the loop does, for the watchdog: published by the manager thread each turn
     * (relaxed stores of a single writer; a report reads a snapshot, each word on its own) */
    atomic_ullong wd_turns;              /* turns of the loop */
    _Atomic(const char *) wd_doing;      /* the step it is in (static text) */
    atomic_int wd_exec, wd_land, wd_put; /* operations in flight on those streams */
    atomic_int wd_aside;                 /* tasks set aside until their tile lands */
    atomic_ullong wd_land_t, wd_put_t;   /* when the oldest of those entered its fifo */
    atomic_int wd_land_rank, wd_land_sem, wd_put_rank;
    atomic_ullong wd_land_target;
    bool trace;  /* tasks' spans in the trace */
    bool timing; /* tasks' spans measured (device_cuda_timing, or a trace) */
    /* the time references of the spans (ref_take): the newest GM_NREFS, a timing event each
     * and its time on the host clock, taken every GM_REF_PERIOD_NS on a stream of their own
     * (the GPU's clock drifts against the host's); ref_seq numbers the newest */
    struct gm_ref {
        cudaEvent_t ev;
        uint64_t ns, seq;
    } refs[GM_NREFS];
    uint64_t ref_seq, ref_at;
    cudaStream_t ref_stream;
    /* the check of the references: spans that ended on the GPU's clock after the host saw them
     * complete (by more than GM_LATE_NS), and the greatest such lateness */
    atomic_ullong n_late, late_max_ns;
    /* the tasks' spans on the exec streams (timing): appended by the manager, merged into
     * their union by whoever reads the busy time (rill_context_gpu_counters) */
    rill_spinlock_t spans_lock;
    struct gm_span {
        uint64_t t0, t1;
    } * spans;
    size_t nspans, cap_spans;
    /* counters (read by the report) */
    atomic_ullong n_tasks, n_h2d, n_d2h, n_d2d, b_h2d, b_d2h, b_d2d, n_evict, n_wb, n_home, n_hits,
        n_nospace;
    atomic_ullong n_land, b_land, n_put, b_put, n_land_wait; /* GPU-direct, in and out */
    atomic_ullong n_early;                                   /* of n_land: reserved ahead */
    atomic_ullong n_behind;     /* of n_put: enqueued behind the producer's body */
    atomic_ullong ns_land_wait; /* the landing stream's time in its waits (timing) */
    uint64_t launches;          /* tasks launched (numbers them for the launched hook) */
    atomic_int n_remote_later;  /* remote requests waiting (for room, a semaphore, a source) */
    size_t early_bytes;         /* reserved ahead and not landing yet (manager thread) */
    size_t put_sm_max;          /* device_cuda_put_sm_max */
    int8_t *sm_reach;           /* sm_reaches: per rank and GPU, 0 unknown, 1 yes, -1 no */
    atomic_ullong n_put_sm;     /* of n_put: by the SMs */

} gm_t;

static gm_t *managers[RILL_CUDA_MAX_GPUS];
static int nmanagers;

/* ------------------------------------------------------------ small helpers */

static void fail_cuda(gm_t *m, rill_task_t *task, const char *call, cudaError_t e)
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

static gm_op_t *op_new(gm_t *m, int kind)
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

static void op_free(gm_t *m, gm_op_t *op)
{
    rill_cuda_event_put(m->res, op->ev, false);
    rill_cuda_event_put(m->res, op->ev_start, true);
    rill_cuda_event_put(m->res, op->ev_end, true);
    op->next = m->free_ops;
    m->free_ops = op;
}

/* When on: a timing event on stream s before the operation, the start of its span. */
static void op_begin(gm_t *m, gm_op_t *op, cudaStream_t s, bool on)
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
static cudaError_t op_record(gm_t *m, gm_op_t *op, cudaStream_t s)
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

static void fifo_push(gm_t *m, int f, gm_op_t *op)
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

static inline int fifo_h2d(const gm_t *m)
{
    return m->res->nexec;
}
static inline int fifo_d2h(const gm_t *m)
{
    return m->res->nexec + 1;
}
static inline int fifo_peer(const gm_t *m, int ordinal)
{
    return m->res->nexec + 2 + ordinal;
}
static inline int fifo_land(const gm_t *m, int lane)
{
    return m->res->nexec + 2 + RILL_CUDA_MAX_GPUS + lane;
}
static inline int fifo_put(const gm_t *m, int lane)
{
    return m->res->nexec + 2 + RILL_CUDA_MAX_GPUS + m->nlanes + lane;
}
/* The lane of a peer rank's transfers. */
static inline int lane_of(const gm_t *m, int rank)
{
    return rank >= 0 && m->nlanes > 0 ? rank % m->nlanes : 0;
}
/* Whether rank's lane has GM_MAX_ARMED landings armed (waits on its landing stream). */
static inline bool lane_full(const gm_t *m, int rank)
{
    return m->fifo[fifo_land(m, lane_of(m, rank))].count >= GM_MAX_ARMED;
}
/* Trace tracks (tr_copy): lane l's landings (k 0) and puts (k 1); those of a rank's lane. */
static inline int track_lane(int k, int l)
{
    return 3 + k * GM_NLANES + l;
}
static inline int track_land(const gm_t *m, int rank)
{
    return track_lane(0, lane_of(m, rank));
}
static inline int track_put(const gm_t *m, int rank)
{
    return track_lane(1, lane_of(m, rank));
}

static void lru_unlink(gm_t *m, gm_entry_t *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        m->lru_head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        m->lru_tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_append(gm_t *m, gm_entry_t *e)
{
    e->prev = m->lru_tail;
    e->next = NULL;
    if (m->lru_tail)
        m->lru_tail->next = e;
    else
        m->lru_head = e;
    m->lru_tail = e;
}

static void lru_touch(gm_t *m, gm_entry_t *e)
{
    if (m->lru_tail == e)
        return;
    lru_unlink(m, e);
    lru_append(m, e);
}

/* Take a reader on copy c unless it is being evicted; false when it is. */
static bool copy_reader_get(rill_data_copy_t *c)
{
    int r = atomic_load_explicit(&c->readers, memory_order_acquire);
    while (r >= 0)
        if (atomic_compare_exchange_weak_explicit(&c->readers, &r, r + 1, memory_order_acq_rel,
                                                  memory_order_acquire))
            return true;
    return false;
}

static void copy_reader_put(rill_data_copy_t *c)
{
    atomic_fetch_sub_explicit(&c->readers, 1, memory_order_release);
}

/* Take c, unread, from its readers while a landing is set up in its block (readers -1, as a
 * write-back holds it): false when something reads it. Another GPU's manager that takes a
 * reader (copy_reader_get) either did so first (then this fails: not now) or does so after
 * copy_unquiesce, whose release store publishes the INVALID coherency and the landing flag
 * set meanwhile: its re-check of the copy's currency then fails. A check of readers == 0
 * followed by the invalidation would let both go ahead (a peer GPU reading bytes as another
 * rank overwrites them). */
static bool copy_quiesce(rill_data_copy_t *c)
{
    int zero = 0;
    return atomic_compare_exchange_strong_explicit(&c->readers, &zero, -1, memory_order_acq_rel,
                                                   memory_order_acquire);
}

static void copy_unquiesce(rill_data_copy_t *c)
{
    atomic_store_explicit(&c->readers, 0, memory_order_release);
}

/* This GPU's copy of d and its entry, made on first use (no block yet). */
static gm_entry_t *entry_of(gm_t *m, rill_data_t *d)
{
    rill_data_copy_t *c = rill_data_copy(d, m->index);
    if (c)
        return c->dev_priv;
    c = calloc(1, sizeof(*c));
    gm_entry_t *e = calloc(1, sizeof(*e));
    if (!c || !e) {
        free(c);
        free(e);
        return NULL;
    }
    c->data = d;
    c->device = m->index;
    atomic_init(&c->version, 0);
    atomic_init(&c->coherency, RILL_COHERENCY_INVALID);
    atomic_init(&c->readers, 0);
    atomic_init(&c->landing, 0);
    c->dev_priv = e;
    e->copy = c;
    e->w_stream = -1;
    /* release: the fields above before the pointer (other GPUs read it with acquire) */
    atomic_store_explicit(&d->copies[m->index], c, memory_order_release);
    return e;
}

/* e gets the zone block at addr (its copy holds nothing yet) and joins the LRU list. */
static void entry_set_block(gm_t *m, gm_entry_t *e, uintptr_t addr)
{
    e->block = addr;
    e->copy->ptr = (void *)addr;
    atomic_store_explicit(&e->copy->coherency, RILL_COHERENCY_INVALID, memory_order_release);
    lru_append(m, e);
}

/* Give e's block back (its copy then holds nothing). readers is -1 (eviction) or 0. */
static void entry_drop_block(gm_t *m, gm_entry_t *e)
{
    rill_data_copy_t *c = e->copy;
    atomic_store_explicit(&c->coherency, RILL_COHERENCY_INVALID, memory_order_release);
    c->ptr = NULL;
    rill_zone_free(m->res->zone, e->block);
    e->block = 0;
    lru_unlink(m, e);
    /* release: INVALID is seen by whoever takes a reader next */
    atomic_store_explicit(&c->readers, 0, memory_order_release);
}

/* ------------------------------------------------------------ eviction and space */

/* Write e's block home (its copy is the only current one). Takes e as being evicted. */
static bool writeback_start(gm_t *m, gm_entry_t *e, rill_data_copy_t *host, uint64_t v)
{
    gm_op_t *op = op_new(m, OP_WB);
    if (!op)
        return false;
    op_begin(m, op, m->res->d2h, m->trace);
    rill_data_copy_pin(host);
    cudaError_t err = cudaMemcpyAsync(host->ptr, (void *)e->block, e->copy->data->size,
                                      cudaMemcpyDeviceToHost, m->res->d2h);
    if (err == cudaSuccess)
        err = op_record(m, op, m->res->d2h);
    if (err != cudaSuccess) {
        fail_cuda(m, NULL, "cudaMemcpyAsync (write-back before eviction)", err);
        op_free(m, op);
        return false;
    }
    op->nent = 1;
    op->ent[0] = e;
    op->version[0] = v;
    e->writeback = true;
    fifo_push(m, fifo_d2h(m), op);
    atomic_fetch_add_explicit(&m->n_wb, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->b_d2h, e->copy->data->size, memory_order_relaxed);
    return true;
}

/* A block of size bytes, evicting LRU copies no task uses. RILL_ERR_NO_MEMORY: not now (a
 * write-back or a task in flight will free room). */
static rill_status_t zone_get(gm_t *m, size_t size, uintptr_t *addr)
{
    if (rill_zone_alloc(m->res->zone, size, addr) == RILL_SUCCESS)
        return RILL_SUCCESS;
    gm_entry_t *e = m->lru_head;
    while (e) {
        gm_entry_t *next = e->next;
        rill_data_copy_t *c = e->copy;
        int zero = 0;
        if (e->writeback || e->xfers > 0 ||
            !atomic_compare_exchange_strong_explicit(&c->readers, &zero, -1, memory_order_acq_rel,
                                                     memory_order_relaxed)) {
            e = next;
            continue;
        }
        /* no task or transfer uses it (readers -1 keeps them off until we are done) */
        rill_data_t *d = c->data;
        rill_data_copy_t *host = rill_data_host_copy(d);
        /* one snapshot of the version for both copies: a write completing between two
         * reads could make a current host copy look stale */
        uint64_t v = atomic_load_explicit(&d->version, memory_order_acquire);
        bool mine =
            atomic_load_explicit(&c->coherency, memory_order_acquire) != RILL_COHERENCY_INVALID &&
            atomic_load_explicit(&c->version, memory_order_acquire) == v;
        bool home = host &&
                    atomic_load_explicit(&host->coherency, memory_order_acquire) !=
                        RILL_COHERENCY_INVALID &&
                    atomic_load_explicit(&host->version, memory_order_acquire) == v;
        /* a task writing it on another GPU makes this copy stale: nothing to save */
        for (int g = 1; mine && g < rill_device_count(); g++) {
            rill_data_copy_t *o = g == m->index ? NULL : rill_data_copy(d, g);
            if (o && atomic_load_explicit(&o->coherency, memory_order_acquire) ==
                         RILL_COHERENCY_EXCLUSIVE)
                mine = false;
        }
        if (mine && host && !home) { /* the only current copy: home first, then free */
            int z = 0;               /* one copy into a host buffer at a time */
            /* holding the flag, the version again: a host writer raises it before it gives
             * the flag back, and then this copy is stale */
            if (!atomic_compare_exchange_strong_explicit(
                    &host->landing, &z, 1, memory_order_acq_rel, memory_order_relaxed) ||
                atomic_load_explicit(&d->version, memory_order_acquire) != v ||
                !writeback_start(m, e, host, v)) {
                if (!z)
                    atomic_store_explicit(&host->landing, 0, memory_order_release);
                atomic_store_explicit(&c->readers, 0, memory_order_release);
            }
            e = next;
            continue;
        }
        entry_drop_block(m, e);
        atomic_fetch_add_explicit(&m->n_evict, 1, memory_order_relaxed);
        if (m->trace)
            rill_trace_instant("gpu", "eviction", rill_time_ns());
        if (rill_zone_alloc(m->res->zone, size, addr) == RILL_SUCCESS)
            return RILL_SUCCESS;
        e = next;
    }
    atomic_fetch_add_explicit(&m->n_nospace, 1, memory_order_relaxed);
    return RILL_ERR_NO_MEMORY;
}

/* ------------------------------------------------------------ busy time */

static void span_add(gm_t *m, uint64_t t0, uint64_t t1)
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
static double busy_seconds(gm_t *m)
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

static void task_fail_now(gm_t *m, rill_task_t *task, rill_status_t s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A task that cannot run here at all: fail it and complete it (its successors are
 * released: the run ends with the error, no hang). */
static void task_fail_now(gm_t *m, rill_task_t *task, rill_status_t s, const char *fmt, ...)
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

/* Stage one input into e (not current here): from a peer GPU that holds the newest version,
 * else from host memory. The exec stream then waits for e->ready. */
static cudaError_t stage_in(gm_t *m, gm_entry_t *e, rill_data_t *d)
{
    uint64_t v = atomic_load_explicit(&d->version, memory_order_acquire);
    size_t size = d->size;
    int ndev = rill_device_count();
    gm_op_t *op = op_new(m, OP_XFER);
    if (!op)
        return cudaErrorMemoryAllocation;
    if (!e->ready && !(e->ready = rill_cuda_event_get(m->res, false))) {
        op_free(m, op);
        return cudaErrorMemoryAllocation;
    }
    cudaError_t err = cudaSuccess;
    int f = -1;
    /* a transfer of an older version may still be landing in the block: the new one goes
     * after it (stream order is per stream; this orders across streams) */
    bool after = e->xfers > 0;
    e->w_stream = -1;                         /* traces: no task here wrote what it will hold */
    for (int g = 1; g < ndev && f < 0; g++) { /* a peer GPU's current copy */
        if (g == m->index || rill_device_get(g)->type != RILL_DEVICE_CUDA)
            continue;
        rill_data_copy_t *pc = rill_data_copy(d, g);
        /* (a copy whose bytes are still landing from another rank is current only for its
         * own GPU, whose streams wait for the landing: not a source for us yet) */
        if (!pc || !rill_data_copy_current(d, pc) ||
            atomic_load_explicit(&pc->landing, memory_order_acquire) || !copy_reader_get(pc))
            continue;
        if (!rill_data_copy_current(d, pc) || !pc->ptr) { /* lost it meanwhile */
            copy_reader_put(pc);
            continue;
        }
        gm_t *peer = rill_device_get(g)->priv;
        int po = peer->res->info.ordinal;
        f = fifo_peer(m, po);
        if (after)
            err = cudaStreamWaitEvent(m->fifo_stream[f], e->ready, 0);
        op_begin(m, op, m->fifo_stream[f], m->trace);
        op->peer = po;
        if (err == cudaSuccess)
            err = cudaMemcpyPeerAsync((void *)e->block, m->res->info.ordinal, pc->ptr, po, size,
                                      m->fifo_stream[f]);
        op->src[0] = pc;
        atomic_fetch_add_explicit(&m->n_d2d, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&m->b_d2d, size, memory_order_relaxed);
    }
    if (f < 0) {
        rill_data_copy_t *host = rill_data_host_copy(d);
        if (!host || !rill_data_copy_current(d, host)) {
            /* no copy can give its bytes now: the only current one is being written home
             * by another GPU before its eviction (readers -1). Try again once it landed. */
            op_free(m, op);
            return cudaErrorNotReady;
        }
        f = fifo_h2d(m);
        if (after)
            err = cudaStreamWaitEvent(m->fifo_stream[f], e->ready, 0);
        rill_data_copy_pin(host);
        op_begin(m, op, m->fifo_stream[f], m->trace);
        op->peer = -1;
        if (err == cudaSuccess)
            err = cudaMemcpyAsync((void *)e->block, host->ptr, size, cudaMemcpyHostToDevice,
                                  m->fifo_stream[f]);
        atomic_fetch_add_explicit(&m->n_h2d, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&m->b_h2d, size, memory_order_relaxed);
    }
    if (err == cudaSuccess)
        err = cudaEventRecord(e->ready, m->fifo_stream[f]);
    if (err == cudaSuccess)
        err = op_record(m, op, m->fifo_stream[f]);
    if (err != cudaSuccess) {
        if (op->src[0])
            copy_reader_put(op->src[0]);
        op_free(m, op);
        return err;
    }
    e->xfers++;
    e->xfer_version = v;
    op->nent = 1;
    op->ent[0] = e;
    op->version[0] = v;
    fifo_push(m, f, op);
    return cudaSuccess;
}

enum { LAUNCH_OK, LAUNCH_LATER, LAUNCH_FAILED };

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
        task_fail_now(m, task, RILL_ERR_NO_MEMORY,
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
        gm_entry_t *e = entry_of(m, flows[i].data);
        if (!e) {
            task_fail_now(m, task, RILL_ERR_NO_MEMORY, "out of host memory on GPU %d's manager",
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
            if (zone_get(m, flows[i].data->size, &addr) != RILL_SUCCESS)
                goto later;
            entry_set_block(m, e, addr);
        } else {
            lru_touch(m, e);
        }
        atomic_fetch_add_explicit(&e->copy->readers, 1, memory_order_acq_rel);
        held++;
    }
    /* 2. inputs: current here, or on their way (the exec stream waits for them) */
    cudaStream_t s = m->res->exec[stream].stream;
    for (int i = 0; i < n; i++) {
        gm_entry_t *e = ents[i];
        rill_data_t *d = flows[i].data;
        if (flows[i].mode & RILL_FLOW_READ) {
            uint64_t v = atomic_load_explicit(&d->version, memory_order_acquire);
            bool wait = false, current = rill_data_copy_current(d, e->copy);
            if (current && e->xfers == 0) {
                atomic_fetch_add_explicit(&m->n_hits, 1, memory_order_relaxed);
            } else if (e->xfers > 0 && (current || e->xfer_version == v)) {
                /* on its way for another task, or landing from another rank (current from
                 * the receive's completion on: its bytes are there once e->ready is) */
                wait = true;
            } else {
                cudaError_t err = stage_in(m, e, d);
                if (err == cudaErrorNotReady)
                    goto later; /* its only current copy is on its way home */
                if (err != cudaSuccess) {
                    fail_cuda(m, task, "staging an input in", err);
                    goto failed;
                }
                wait = e->xfers > 0;
            }
            if (wait) {
                cudaError_t err = cudaStreamWaitEvent(s, e->ready, 0);
                if (err != cudaSuccess) {
                    fail_cuda(m, task, "cudaStreamWaitEvent", err);
                    goto failed;
                }
            }
        } else if (e->xfers > 0) {
            /* written only: not over bytes still landing in the block */
            cudaError_t err = cudaStreamWaitEvent(s, e->ready, 0);
            if (err != cudaSuccess) {
                fail_cuda(m, task, "cudaStreamWaitEvent", err);
                goto failed;
            }
        }
    }
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
    gm_op_t *op = op_new(m, OP_TASK);
    if (!op) {
        task_fail_now(m, task, RILL_ERR_NO_MEMORY, "out of host memory on GPU %d's manager",
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
    op_begin(m, op, s, m->timing);
    if (m->trace)
        tt[2] = rill_time_ns();
    rill_hook_status_t hs = RILL_HOOK_ERROR;
    for (int i = 0; i < task->tc->nb_incarnations; i++)
        if (task->tc->incarnations[i].type == RILL_DEVICE_CUDA) {
            hs = task->tc->incarnations[i].hook(NULL, task);
            break;
        }
    op->body_failed = hs == RILL_HOOK_ERROR;
    if (m->trace)
        tt[3] = rill_time_ns();
    cudaError_t err = op_record(m, op, s);
    if (err != cudaSuccess) {
        /* the stream cannot say when it is done: complete the task as failed now */
        fail_cuda(m, task, "cudaEventRecord after the body", err);
        op->ev = NULL;
        m->free_slots[m->nfree_slots++] = op->slot;
        op_free(m, op);
        goto failed;
    }
    fifo_push(m, stream, op);
    op->launch = ++m->launches;
    if (m->trace) { /* the host's side of the hand-over: when the body was enqueued */
        tt[4] = rill_time_ns();
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
    /* the front end may now hand us puts of what the body writes, behind it (put_start) */
    if (task->tc->launched)
        task->tc->launched(task, m->index, op->launch);
    return LAUNCH_OK;

failed:
    for (int i = 0; i < held; i++)
        copy_reader_put(ents[i]->copy);
    task_fail_now(m, task, RILL_ERR_DEVICE, "task '%s' could not be launched on GPU %d",
                  task->tc->name, m->res->info.ordinal);
    return LAUNCH_FAILED;
release:
    for (int i = 0; i < held; i++)
        copy_reader_put(ents[i]->copy);
    return LAUNCH_FAILED;
later:
    for (int i = 0; i < held; i++)
        copy_reader_put(ents[i]->copy);
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

static rill_heap_t *pending_of(gm_t *m, const rill_task_t *task)
{
    return task->urgent ? &m->pending_urgent : &m->pending;
}

static int remote_step(gm_t *m);
static int poll_fifos(gm_t *m);
static inline void gm_doing(gm_t *m, const char *what);

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
        if (rill_heap_push(pending_of(m, m->aside[i]), &m->aside[i]->prio) != RILL_SUCCESS)
            task_fail_now(m, m->aside[i], RILL_ERR_NO_MEMORY,
                          "out of host memory queueing task '%s' on GPU %d", m->aside[i]->tc->name,
                          m->res->info.ordinal);
    m->naside = 0;
}

/* Launch pending tasks, highest priority first, while a stream has room; when the first
 * cannot be placed (its streams full), the first urgent task still may (the urgent
 * streams: an urgent task must not wait behind a task of the bulk that waits for room).
 * With device_cuda_landing_waiters, a task whose tile is still landing waits on the host
 * while that many such tasks are enqueued, and the next ones go first. */
static int launch_pending(gm_t *m)
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
            rill_heap_pop(pending_of(m, task));
            m->aside[m->naside++] = task;
            tries++;
            continue;
        }
        int stream = pick_stream(m, task);
        if (stream < 0 && task == a && b && !landing_bound(m, b, &nw))
            stream = pick_stream(m, task = b);
        if (stream < 0)
            break;
        rill_heap_pop(pending_of(m, task));
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
                task_fail_now(m, task, RILL_ERR_NO_MEMORY,
                              "task '%s' needs %zu bytes for its %d data and GPU %d's zone "
                              "(%zu bytes for data, largest free block %zu) cannot make room "
                              "for them: raise device_cuda_memory_use or "
                              "device_cuda_memory_size, or use smaller tiles",
                              task->tc->name, need, n, m->res->info.ordinal, m->capacity,
                              rill_zone_largest_free(m->res->zone));
                continue;
            }
            rill_heap_push(pending_of(m, task), &task->prio);
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
            remote_step(m);
        }
        if (rill_time_ns() - t0 > GM_LONG_LAUNCH_NS) {
            gm_doing(m, "polling its streams' completions (between launches)");
            /* those waiting for room or a lane, once something completed */
            if (poll_fifos(m) > 0 && m->remote_later) {
                gm_doing(m, "serving transfers from and to other ranks' GPUs (between launches)");
                remote_step(m);
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

/* ------------------------------------------------------------ bringing copies home */

/* A CPU body needs the host copies current: move those this GPU holds the newest of. */
static void home_start(gm_t *m, rill_task_t *task)
{
    rill_task_flow_t flows[RILL_MAX_FLOWS];
    int n = task->tc->flows ? task->tc->flows(task, flows, RILL_MAX_FLOWS) : 0;
    gm_op_t *op = op_new(m, OP_HOME);
    if (!op) {
        rill_taskpool_fail(task->tp, RILL_ERR_NO_MEMORY, "out of host memory on GPU %d's manager",
                           m->res->info.ordinal);
        rill_task_complete(NULL, task, RILL_HOOK_ERROR);
        return;
    }
    op->task = task;
    op_begin(m, op, m->res->d2h, m->trace);
    for (int i = 0; i < n; i++) {
        rill_data_t *d = flows[i].data;
        rill_data_copy_t *c = rill_data_copy(d, m->index), *host = rill_data_host_copy(d);
        /* (a copy a task is writing right now, EXCLUSIVE, is not copied: its bytes are
         * changing; the task comes back and finds the version its writer leaves) */
        if (!host || !c || rill_data_copy_current(d, host) || !rill_data_copy_current(d, c) ||
            atomic_load_explicit(&c->coherency, memory_order_acquire) == RILL_COHERENCY_EXCLUSIVE)
            continue;
        bool dup = false;
        for (int k = 0; k < op->nent; k++)
            dup |= op->ent[k]->copy == c;
        if (dup || !copy_reader_get(c))
            continue;
        int z = 0; /* one copy into a host buffer at a time; else the task comes back */
        if (!atomic_compare_exchange_strong_explicit(&host->landing, &z, 1, memory_order_acq_rel,
                                                     memory_order_relaxed)) {
            copy_reader_put(c);
            continue;
        }
        /* again, holding the flag: a host writer (PTG's copy into a tile) raises the version
         * before it gives the flag back, so an older copy is not started over its bytes */
        if (rill_data_copy_current(d, host) || !rill_data_copy_current(d, c)) {
            atomic_store_explicit(&host->landing, 0, memory_order_release);
            copy_reader_put(c);
            continue;
        }
        gm_entry_t *ce = c->dev_priv;
        if (ce->ahead) { /* (it holds no version to bring home) */
            atomic_store_explicit(&host->landing, 0, memory_order_release);
            copy_reader_put(c);
            continue;
        }
        cudaError_t err = ce->xfers > 0 ? cudaStreamWaitEvent(m->res->d2h, ce->ready, 0)
                                        : cudaSuccess; /* bytes still landing from a rank */
        rill_data_copy_pin(host);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(host->ptr, c->ptr, d->size, cudaMemcpyDeviceToHost, m->res->d2h);
        if (err != cudaSuccess) {
            atomic_store_explicit(&host->landing, 0, memory_order_release);
            copy_reader_put(c);
            fail_cuda(m, task, "cudaMemcpyAsync (bringing a tile home)", err);
            op->body_failed = true;
            continue;
        }
        op->ent[op->nent] = c->dev_priv;
        op->version[op->nent++] = atomic_load_explicit(&d->version, memory_order_acquire);
        atomic_fetch_add_explicit(&m->n_d2h, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&m->b_d2h, d->size, memory_order_relaxed);
    }
    cudaError_t err = op_record(m, op, m->res->d2h);
    if (err != cudaSuccess) {
        /* no event says when the copies land: wait for the stream's work to drain
         * before releasing them is not allowed here, so fail the task (its copies are
         * released when the op completes below, at once) */
        fail_cuda(m, task, "cudaEventRecord (bringing tiles home)", err);
        op->body_failed = true;
        rill_cuda_event_put(m->res, op->ev, false);
        op->ev = NULL;
    }
    atomic_fetch_add_explicit(&m->n_home, 1, memory_order_relaxed);
    fifo_push(m, fifo_d2h(m), op);
}

/* ------------------------------------------------------------ GPU-direct remote transfers */

/* The request cannot be carried out: say why (the front end fails its taskpool). */
static void remote_fail(gm_t *m, rill_remote_xfer_t *x, rill_status_t s, const char *what)
{
    rill_data_t *d = x->data;
    RILL_ERROR(RILL_LOG_GPU, "GPU %d: %s datum (key %llu, %zu bytes) %s rank %d: %s",
               m->res->info.ordinal, x->kind == RILL_REMOTE_LAND ? "receiving" : "sending",
               (unsigned long long)d->key, d->size, x->kind == RILL_REMOTE_LAND ? "from" : "to",
               x->peer, what);
    x->done(x, s);
}

/* Receive side (land_start): reserve the landing buffer (this GPU's copy of the datum) and
 * a semaphore; once the sender's put is enqueued, make the landing stream wait for its
 * signal (arm_start); the event recorded behind the wait (e->ready) orders every later use
 * of the copy on this GPU after the bytes landed, GPU side. false: not now (no room, no free
 * semaphore, or the old bytes are still read). */
static bool arm_start(gm_t *m, rill_remote_xfer_t *x, rill_remote_xfer_t *r);

static void net_land_post(gm_t *m, rill_remote_xfer_t *x);

/* Take e's block and a semaphore for the landing x: the copy holds no version until the
 * receive completes (nothing on this GPU uses it before the landing's wait is armed), other
 * GPUs do not read it and it is not evicted until it landed; x gets what the sender needs. */
static void land_hold(gm_t *m, gm_entry_t *e, rill_remote_xfer_t *x)
{
    rill_data_t *d = x->data;
    int k = m->free_sems[--m->nfree_sems];
    e->xfers++;
    e->landings++;
    e->w_stream = -1; /* its bytes come from another rank now */
    e->xfer_version = atomic_load_explicit(&d->version, memory_order_acquire) + 1;
    /* its bytes may be overwritten from now on: an older version it held is gone */
    atomic_store_explicit(&e->copy->coherency, RILL_COHERENCY_INVALID, memory_order_release);
    /* release: other GPUs see the copy as landing before they see it current */
    atomic_store_explicit(&e->copy->landing, 1, memory_order_release);
    x->entry = e;
    x->sem = k;
    x->gpu = m->gpu;
    if (gm_peer_net(x->peer))
        m->net_expect++;
    x->dst_off = gm_zone_offset(m->ctx, m->gpu, e->block);
    x->sem_off = gm_zone_offset(m->ctx, m->gpu, (uintptr_t)(m->sems + k));
    x->target = ++m->sem_seq[k]; /* targets only grow: an older write cannot meet it */
    if (gm_peer_net(x->peer))
        net_land_post(m, x);
}

/* Give back what land_hold took (x's sender was not told of it). */
static void land_unhold(gm_t *m, rill_remote_xfer_t *x)
{
    gm_entry_t *e = x->entry;
    e->xfers--;
    if (--e->landings == 0)
        atomic_store_explicit(&e->copy->landing, 0, memory_order_release);
    m->free_sems[m->nfree_sems++] = x->sem;
    m->epoch++;
    if (gm_peer_net(x->peer)) {
        m->net_expect--;
        gm_netland_t *l = &m->netland[x->sem];
        if (l->state == GM_NET_POSTED) /* (its done, cancelled, finds the slot given back) */
            rill_net_cancel(gm_proxy_net(m->proxy), l->req);
        l->state = GM_NET_NONE;
    }
}

/* Arm the landing x holds (land_hold): the landing stream waits for its semaphore (after
 * the older transfer into the block when after), the copy's ready event behind the wait,
 * so every later use of the copy on this GPU waits for the bytes on the GPU. */
static rill_status_t land_arm(gm_t *m, rill_remote_xfer_t *x, bool after, char *err, size_t len)
{
    gm_entry_t *e = x->entry;
    uint64_t t0 = m->trace ? rill_time_ns() : 0; /* traces: the host's steps of the arm */
    gm_op_t *op = op_new(m, OP_LAND);
    if (!op || (!e->ready && !(e->ready = rill_cuda_event_get(m->res, false)))) {
        if (op)
            op_free(m, op);
        snprintf(err, len, "out of host memory or CUDA events");
        return RILL_ERR_NO_MEMORY;
    }
    int lane = lane_of(m, x->peer);
    cudaStream_t st = m->land_stream[lane];
    op_begin(m, op, st, m->timing); /* the span is the stream's wait for the bytes */
    cudaError_t ce = after ? cudaStreamWaitEvent(st, e->ready, 0) : cudaSuccess;
    rill_status_t rs = ce == cudaSuccess
                           ? rill_cu_stream_wait64(st, m->sems + x->sem, x->target, err, len)
                           : RILL_ERR_DEVICE;
    if (rs == RILL_SUCCESS && (ce = cudaEventRecord(e->ready, st)) == cudaSuccess)
        ce = op_record(m, op, st);
    if (ce != cudaSuccess) {
        snprintf(err, len, "%s", cudaGetErrorString(ce));
        rs = RILL_ERR_DEVICE;
    }
    if (rs != RILL_SUCCESS) {
        op_free(m, op);
        return rs;
    }
    op->nent = 1;
    op->ent[0] = e;
    op->version[0] = e->xfer_version;
    op->sem = x->sem;
    op->rank = x->peer;
    op->target = x->target;
    op->flow = x->flow;
    fifo_push(m, fifo_land(m, lane), op);
    if (m->trace) {
        uint64_t t1 = rill_time_ns();
        rill_trace_slice("gpu", "arm", t0, t1, 0, 0, NULL);
        rill_trace_instant("gpu", "landing armed", t1);
    }
    atomic_fetch_add_explicit(&m->n_land, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->b_land, ((rill_data_t *)x->data)->size, memory_order_relaxed);
    if (gm_peer_net(x->peer)) /* (its bytes are there: armed only after the sender's flush) */
        m->net_expect--;
    return RILL_SUCCESS;
}

static bool land_start(gm_t *m, rill_remote_xfer_t *x)
{
    rill_data_t *d = x->data;
    if (x->early && x->early->reserved) {
        rill_remote_xfer_t *r = x->early;
        if (r->device != m->index) { /* reserved on another GPU: there */
            rill_device_t *dev = rill_device_get(r->device);
            dev->ops->remote(dev, x);
            return true;
        }
        if (x->put_coming)
            return arm_start(m, x, r);
        /* the sender is asked to put into the reservation; armed once its put is enqueued */
        x->gpu = r->gpu;
        x->device = r->device;
        x->dst_off = r->dst_off;
        x->sem_off = r->sem_off;
        x->target = r->target;
        x->done(x, RILL_SUCCESS);
        return true;
    }
    if (d->size > m->capacity) {
        char why[200];
        snprintf(why, sizeof(why),
                 "the datum is larger than the zone holds for data (%zu bytes): raise "
                 "device_cuda_memory_use or device_cuda_memory_size, or use smaller tiles",
                 m->capacity);
        remote_fail(m, x, RILL_ERR_NO_MEMORY, why);
        return true;
    }
    if (m->nfree_sems == 0)
        return false;
    gm_entry_t *e = entry_of(m, d);
    if (!e) {
        remote_fail(m, x, RILL_ERR_NO_MEMORY, "out of host memory");
        return true;
    }
    rill_data_copy_t *c = e->copy;
    /* the receive writes the datum, so the tasks that read the older version have
     * completed; a transfer out of the block (home, to a peer GPU) may still run */
    if (e->writeback || atomic_load_explicit(&c->readers, memory_order_acquire) != 0)
        return false;
    if (x->put_coming && lane_full(m, x->peer)) /* (armed below: not before a wait ends) */
        return false;
    if (!e->block) {
        uintptr_t addr;
        if (zone_get(m, d->size, &addr) != RILL_SUCCESS) {
            if (!x->waited) { /* counted once per landing */
                x->waited = true;
                atomic_fetch_add_explicit(&m->n_land_wait, 1, memory_order_relaxed);
            }
            return false;
        }
        entry_set_block(m, e, addr);
    } else {
        lru_touch(m, e);
    }
    bool after = e->xfers > 0; /* an older transfer into the block still in flight */
    if (x->put_coming && gm_peer_net(x->peer)) { /* (its receive must be posted first) */
        remote_fail(m, x, RILL_ERR_BAD_STATE,
                    "a landing from another node must be reserved before its put comes");
        return true;
    }
    if (!copy_quiesce(c)) /* another GPU started reading it meanwhile */
        return false;
    land_hold(m, e, x);
    copy_unquiesce(c);
    x->device = m->index;
    if (x->put_coming) { /* (the front end asks for a reservation first: not seen) */
        char err[200];
        rill_status_t rs = land_arm(m, x, after, err, sizeof(err));
        if (rs != RILL_SUCCESS) { /* nobody was told of it: give it back */
            land_unhold(m, x);
            remote_fail(m, x, rs, err);
            return true;
        }
        x->done(x, RILL_SUCCESS);
        return true;
    }
    /* held as a reservation (as reserve_start's) until the sender's put is enqueued: x is
     * it, armed by the landing that names it in early (arm_start) */
    e->ahead = true;
    m->early_bytes += d->size;
    x->after = after;
    x->reserved = true;
    x->done(x, RILL_SUCCESS); /* the front end asks the sender for the put */
    return true;
}

/* The task op of launch number launch, still in flight on an exec stream, that writes copy
 * c (which its body is enqueued to write); NULL when it completed (or is not such a task).
 * Manager thread: ops complete on this thread only, so the answer holds until it returns. */
static gm_op_t *launch_in_flight(gm_t *m, uint64_t launch, rill_data_copy_t *c)
{
    if (!c)
        return NULL;
    for (int f = 0; f < m->res->nexec; f++)
        for (gm_op_t *op = m->fifo[f].head; op; op = op->next)
            if (op->kind == OP_TASK && op->launch == launch) {
                for (int i = 0; i < op->nent; i++)
                    if (op->ent[i]->copy == c && op->ev)
                        return op;
                return NULL;
            }
    return NULL;
}

/* Whether this GPU's SMs reach dst, rank peer's GPU gpu's memory mapped here: the memory
 * is on this GPU, or on one this GPU has peer access to (asked once per peer GPU). */
static bool sm_reaches(gm_t *m, int peer, int gpu, const void *dst)
{
    if (peer < 0 || peer >= m->ctx->nranks || gpu < 0 || gpu >= RILL_CUDA_MAX_GPUS)
        return false;
    if (!m->sm_reach &&
        !(m->sm_reach = calloc((size_t)m->ctx->nranks * RILL_CUDA_MAX_GPUS, sizeof(int8_t))))
        return false;
    int8_t *r = &m->sm_reach[(size_t)peer * RILL_CUDA_MAX_GPUS + (size_t)gpu];
    if (*r == 0) {
        struct cudaPointerAttributes a;
        int me = m->res->info.ordinal, can = 0;
        if (cudaPointerGetAttributes(&a, dst) == cudaSuccess && a.device >= 0)
            can = a.device == me ||
                  (cudaDeviceCanAccessPeer(&can, me, a.device) == cudaSuccess && can);
        else
            (void)cudaGetLastError(); /* (not an error of the next call) */
        *r = can ? 1 : -1;
        RILL_VERBOSE(RILL_LOG_GPU, 1, "GPU %d: puts of up to %zu bytes to rank %d's GPU %d: %s", me,
                     m->put_sm_max, peer, gpu, can ? "by the SMs" : "by the copy engine");
    }
    return *r > 0;
}

/* A put's op is on its lane's put stream: into the fifo, traced (the host's steps since t0)
 * and counted. */
static void put_queued(gm_t *m, gm_op_t *op, int lane, size_t bytes, uint64_t t0, const char *what)
{
    fifo_push(m, fifo_put(m, lane), op);
    if (m->trace) {
        uint64_t t1 = rill_time_ns();
        rill_trace_slice("gpu", "put", t0, t1, 0, 0, NULL);
        rill_trace_instant("gpu", what, t1);
    }
    atomic_fetch_add_explicit(&m->n_put, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->b_put, bytes, memory_order_relaxed);
}

/* Tiles to and from ranks of other nodes, over the net wire (UCX): two-sided, so that UCX
 * takes its best protocol for GPU memory on the transport it has (a zero-copy rendezvous
 * with GPUDirect RDMA over InfiniBand, a pipeline through host memory over TCP), where a
 * one-sided put of GPU memory over TCP ran at 0.3 GB/s (ucx_perftest ucp_put_bw, 2 x H100)
 * against 1.8-2.6 GB/s for a tagged send.
 *
 * The landing is the same as for a CUDA IPC put: block and semaphore held (land_hold),
 * announced or asked for; land_hold also posts the receive into the block, tagged with the
 * semaphore and its target (unique on this GPU: targets only grow). The sender's put stream
 * only waits for the source (the producer's event, or the landing the source came by) and
 * records an event: a NIC cannot wait on a stream. When this thread sees that event
 * (complete_op), the worker sends the bytes; when the send completes (the source is free
 * again), the receiver is told that the put is enqueued (x->enqueued). On the receiver,
 * the receive's completion enqueues the semaphore's write on the lane's landing stream;
 * the landing is armed (its wait for the semaphore) only once both happened (arm_start), so
 * the wait follows a write already enqueued on this GPU, never a host step of either rank:
 * the landing rule of device.h holds. The later uses of the copy are ordered behind the
 * wait as for a CUDA IPC landing. */
static inline uint64_t net_tag(uint64_t sem_off, uint64_t target)
{
    return ((sem_off >> 3) << 28) ^ (target & ((1ull << 28) - 1));
}

typedef struct gm_netput {
    gm_t *m;
    rill_remote_xfer_t *x;
    rill_data_copy_t *src; /* the GPU copy read (a reader held), or NULL: the host copy */
    const void *from;
} gm_netput_t;

/* A receive of a held landing, by its semaphore slot. */
typedef struct gm_netrecv {
    gm_t *m;
    int sem;
    uint64_t target;
} gm_netrecv_t;

/* The bytes of the landing of semaphore r->sem came (or its receive failed, or was
 * cancelled when the landing was given back): its semaphore's write goes on its lane's
 * landing stream, where the wait arm_start enqueues follows it. */
static void net_recv_done(void *arg, rill_status_t s)
{
    gm_netrecv_t *r = arg;
    gm_t *m = r->m;
    gm_netland_t *l = &m->netland[r->sem];
    if (l->state == GM_NET_POSTED && l->target == r->target) {
        l->req = NULL;
        l->state = GM_NET_FAILED;
        char err[200];
        if (s == RILL_SUCCESS &&
            rill_cu_stream_write64(m->land_stream[l->lane], m->sems + r->sem, r->target, err,
                                   sizeof(err)) == RILL_SUCCESS)
            l->state = GM_NET_LANDED;
        else if (s == RILL_SUCCESS)
            RILL_ERROR(RILL_LOG_GPU, "GPU %d: the signal of a landing over the net wire: %s",
                       m->res->info.ordinal, err);
        m->epoch++;
    }
    free(r);
}

/* land_hold of a landing from a rank of another node: its receive. */
static void net_land_post(gm_t *m, rill_remote_xfer_t *x)
{
    gm_netland_t *l = &m->netland[x->sem];
    rill_data_t *d = x->data;
    gm_netrecv_t *r = malloc(sizeof(*r));
    l->target = x->target;
    l->lane = lane_of(m, x->peer);
    l->state = GM_NET_FAILED; /* (its arm fails: the run ends, saying why) */
    l->req = NULL;
    if (!r)
        return;
    r->m = m;
    r->sem = x->sem;
    r->target = x->target;
    l->state = GM_NET_POSTED;
    if (rill_net_recv(gm_proxy_net(m->proxy), (void *)((gm_entry_t *)x->entry)->block, true,
                      d->size, net_tag(x->sem_off, x->target), net_recv_done, r,
                      &l->req) != RILL_SUCCESS) {
        l->state = GM_NET_FAILED;
        free(r);
    }
}

static void net_put_done(void *arg, rill_status_t s)
{
    gm_netput_t *np = arg;
    rill_remote_xfer_t *x = np->x;
    if (s == RILL_SUCCESS && x->enqueued)
        x->enqueued(x); /* the receiver arms once its receive completed too */
    if (np->src)
        copy_reader_put(np->src);
    if (s != RILL_SUCCESS)
        remote_fail(np->m, x, s, "the send over the net wire failed");
    else
        x->done(x, RILL_SUCCESS);
    free(np);
}

/* The put stream saw the source ready: hand the bytes to the net wire. */
static void net_put_go(gm_t *m, gm_op_t *op, cudaError_t err)
{
    gm_netput_t *np = op->netput;
    rill_remote_xfer_t *x = np->x;
    rill_data_t *d = x->data;
    rill_status_t s = RILL_ERR_DEVICE;
    if (err == cudaSuccess) {
        s = rill_net_send(gm_proxy_net(m->proxy), x->peer, x->peer_gpu, np->from, np->src != NULL,
                          d->size, net_tag(x->sem_off, x->target), net_put_done, np);
        if (s == RILL_SUCCESS)
            return;
    }
    if (np->src)
        copy_reader_put(np->src);
    remote_fail(m, x, s,
                err != cudaSuccess ? cudaGetErrorString(err) : "the net wire refused the send");
    free(np);
}

static bool net_put_start(gm_t *m, rill_remote_xfer_t *x, rill_data_copy_t *src, const void *from,
                          cudaEvent_t after, bool behind, uint64_t t0)
{
    rill_data_t *d = x->data;
    gm_netput_t *np = calloc(1, sizeof(*np));
    gm_op_t *op = np && gm_proxy_net(m->proxy) ? op_new(m, OP_PUT) : NULL;
    int lane = lane_of(m, x->peer);
    cudaStream_t st = m->put_stream[lane];
    cudaError_t ce = cudaSuccess;
    if (op) {
        op_begin(m, op, st, m->trace);
        if (after)
            ce = cudaStreamWaitEvent(st, after, 0);
        if (ce == cudaSuccess)
            ce = op_record(m, op, st);
    }
    if (!op || ce != cudaSuccess) {
        if (op)
            op_free(m, op);
        free(np);
        if (src)
            copy_reader_put(src);
        remote_fail(m, x, op ? RILL_ERR_DEVICE : RILL_ERR_NO_MEMORY,
                    op ? cudaGetErrorString(ce)
                       : "out of host memory (or no worker of the net wire on this GPU)");
        return true;
    }
    np->m = m;
    np->x = x;
    np->src = src;
    np->from = from;
    op->netput = np;
    op->rx = x;
    op->rank = x->peer;
    op->flow = x->flow;
    op->from_stream = -1;
    put_queued(m, op, lane, d->size, t0, behind ? "net put waits behind" : "net put waits");
    return true;
}

/* Send side: copy the newest copy into the receiver's landing buffer, then its semaphore,
 * on the put stream. The source copy keeps a reader until the op's event completed. false:
 * not now (the only current copy is on its way home). */
static bool put_start(gm_t *m, rill_remote_xfer_t *x)
{
    uint64_t t0 = m->trace ? rill_time_ns() : 0; /* traces: the host's steps of the put */
    rill_data_t *d = x->data;
    rill_data_copy_t *c = rill_data_copy(d, m->index), *src = NULL;
    const void *from = NULL;
    cudaEvent_t after = NULL;
    gm_op_t *producer = x->behind ? launch_in_flight(m, x->behind, c) : NULL;
    RILL_VERBOSE(RILL_LOG_GPU, 3,
                 "GPU %d: put of datum (key %llu) to rank %d: producer's launch %llu (of %llu), "
                 "%s",
                 m->res->info.ordinal, (unsigned long long)d->key, x->peer,
                 (unsigned long long)x->behind, (unsigned long long)m->launches,
                 producer ? "in flight: the put goes behind it" : "not in flight");
    if (producer && copy_reader_get(c)) {
        /* the producer's body is enqueued and not seen complete: the copy it writes is the
         * version sent (its own reader pins the copy, so ours cannot fail; ours keeps it
         * until the put's event), and the put goes behind its event on the GPU. The version
         * counts the write only once the host sees the completion: no currency check. */
        src = c;
        from = c->ptr;
        after = producer->ev;
        atomic_fetch_add_explicit(&m->n_behind, 1, memory_order_relaxed);
    } else if (c && rill_data_copy_current(d, c) && !((gm_entry_t *)c->dev_priv)->ahead &&
               copy_reader_get(c)) {
        if (rill_data_copy_current(d, c) && c->ptr) {
            gm_entry_t *e = c->dev_priv;
            src = c;
            from = c->ptr;
            if (e->xfers > 0) /* still landing (received, and sent on) */
                after = e->ready;
        } else {
            copy_reader_put(c);
        }
    }
    if (!src) {
        rill_data_copy_t *host = rill_data_host_copy(d);
        if (host && rill_data_copy_current(d, host)) {
            from = host->ptr;
            rill_data_copy_pin(host);
        } else {
            for (int g = 1; g < rill_device_count(); g++) { /* another GPU has it: there */
                rill_data_copy_t *o = rill_data_copy(d, g);
                rill_device_t *dev = rill_device_get(g);
                if (g != m->index && dev->type == RILL_DEVICE_CUDA && o &&
                    rill_data_copy_current(d, o)) {
                    dev->ops->remote(dev, x);
                    return true;
                }
            }
            return false;
        }
    }
    if (gm_peer_net(x->peer))
        return net_put_start(m, x, src, from, after, producer != NULL, t0);
    char err[256];
    void *dst = NULL, *sem = NULL;
    rill_status_t rs =
        gm_peer_zone_map(x->peer, x->peer_gpu, x->dst_off, d->size, &dst, err, sizeof(err));
    if (rs == RILL_SUCCESS)
        rs = gm_peer_zone_map(x->peer, x->peer_gpu, x->sem_off, sizeof(uint64_t), &sem, err,
                              sizeof(err));
    gm_op_t *op = rs == RILL_SUCCESS ? op_new(m, OP_PUT) : NULL;
    if (rs == RILL_SUCCESS && !op) {
        rs = RILL_ERR_NO_MEMORY;
        snprintf(err, sizeof(err), "out of host memory");
    }
    int lane = lane_of(m, x->peer);
    cudaStream_t st = m->put_stream[lane];
    cudaError_t ce = cudaSuccess;
    if (rs == RILL_SUCCESS) {
        op_begin(m, op, st, m->trace);
        if (after)
            ce = cudaStreamWaitEvent(st, after, 0);
        /* a small tile of this GPU's by its SMs, copy and signal in one kernel (put.cu) */
        bool by_sm = src && d->size <= m->put_sm_max && sm_reaches(m, x->peer, x->peer_gpu, dst);
        if (ce == cudaSuccess && by_sm) {
            if ((ce = gm_put_sm(dst, from, d->size, sem, x->target, st)) == cudaSuccess) {
                atomic_fetch_add_explicit(&m->n_put_sm, 1, memory_order_relaxed);
                ce = op_record(m, op, st);
            }
        } else if (ce == cudaSuccess) {
            ce = cudaMemcpyAsync(dst, from, d->size, cudaMemcpyDefault, st);
            /* the signal on the same stream, after the data (rill_cu_stream_write64 orders
             * it behind the copy's writes with its memory barrier): the receiver's wait on
             * the semaphore then sees the bytes */
            if (ce == cudaSuccess &&
                (rs = rill_cu_stream_write64(st, sem, x->target, err, sizeof(err))) == RILL_SUCCESS)
                ce = op_record(m, op, st);
        }
        if (ce != cudaSuccess) {
            rs = RILL_ERR_DEVICE;
            snprintf(err, sizeof(err), "%s", cudaGetErrorString(ce));
        }
    }
    if (rs != RILL_SUCCESS) {
        if (op)
            op_free(m, op);
        if (src)
            copy_reader_put(src);
        remote_fail(m, x, rs, err);
        return true;
    }
    op->src[0] = src;
    op->rx = x;
    op->rank = x->peer;
    op->flow = x->flow;
    op->from_stream = -1;
    gm_entry_t *se = src ? src->dev_priv : NULL;
    if (x->flow && producer && producer->nflow_out < 4) { /* the flow starts in its slice */
        producer->flow_out[producer->nflow_out++] = x->flow;
        op->flow_from_kernel = true;
    } else if (x->flow && se && !producer && se->w_stream >= 0) { /* the last writer's */
        op->from_stream = se->w_stream;
        op->from_t = se->w_t;
        op->flow_from_kernel = true;
    }
    put_queued(m, op, lane, d->size, t0, producer ? "put enqueued behind" : "put enqueued");
    if (x->enqueued) /* the receiver's stream may wait for it now (device.h) */
        x->enqueued(x);
    return true;
}

/* Early announcement, receive side: reserve the landing buffer and a semaphore now, if they
 * are free at once and within a quarter of the zone (reservations held ahead must not
 * starve the tasks' launches); no wait is enqueued until the landing that uses it. */
static bool reserve_start(gm_t *m, rill_remote_xfer_t *x)
{
    rill_data_t *d = x->data;
    gm_entry_t *e = NULL;
    bool ok = m->nfree_sems > m->nsems / 4 && m->early_bytes + d->size <= m->capacity / 4 &&
              (e = entry_of(m, d)) && !e->writeback && e->xfers == 0 &&
              atomic_load_explicit(&e->copy->readers, memory_order_acquire) == 0;
    if (ok && !e->block) {
        uintptr_t addr;
        if ((ok = rill_zone_alloc(m->res->zone, d->size, &addr) == RILL_SUCCESS))
            entry_set_block(m, e, addr);
    }
    if (ok && (ok = copy_quiesce(e->copy))) { /* (x->device: set by the front end) */
        land_hold(m, e, x);
        copy_unquiesce(e->copy);
        e->ahead = true;
        m->early_bytes += d->size;
        atomic_fetch_add_explicit(&m->n_early, 1, memory_order_relaxed);
        if (m->trace)
            rill_trace_instant("gpu", "landing reserved ahead", rill_time_ns());
    }
    RILL_VERBOSE(RILL_LOG_GPU, 2,
                 "GPU %d: landing of datum (key %llu) reserved ahead: %s (%d semaphores free, "
                 "%zu of %zu bytes reserved ahead)",
                 m->res->info.ordinal, (unsigned long long)d->key, ok ? "yes" : "no", m->nfree_sems,
                 m->early_bytes, m->capacity / 4);
    x->reserved = ok;
    x->done(x, ok ? RILL_SUCCESS : RILL_ERR_BUSY);
    return true;
}

/* The landing x of reservation r (reserve_start): its put is enqueued on the sender's GPU, so the
 * landing stream may wait for it now. */
static bool arm_start(gm_t *m, rill_remote_xfer_t *x, rill_remote_xfer_t *r)
{
    if (lane_full(m, r->peer))
        return false;           /* (later, in order: its lane's landings behind it wait too) */
    if (gm_peer_net(r->peer)) { /* over the net: once its receive completed too */
        gm_netland_t *l = &m->netland[r->sem];
        if (l->state == GM_NET_POSTED)
            return false;
        if (l->state != GM_NET_LANDED) {
            remote_fail(m, x, RILL_ERR_COMM, "its receive over the net wire failed");
            return true;
        }
        l->state = GM_NET_NONE;
    }
    char err[200];
    r->flow = x->flow;
    rill_status_t rs = land_arm(m, r, r->after, err, sizeof(err));
    if (rs != RILL_SUCCESS) {
        /* the reservation stays held: the sender's copy into it may still come, so neither
         * the block nor the semaphore may be given to anyone else (the front end ends the
         * run: DTD aborts) */
        remote_fail(m, x, rs, err);
        return true;
    }
    gm_entry_t *e = r->entry;
    m->early_bytes -= ((rill_data_t *)r->data)->size;
    e->ahead = false; /* e->ready is behind its wait from now on */
    x->gpu = r->gpu;
    x->device = r->device;
    x->dst_off = r->dst_off;
    x->sem_off = r->sem_off;
    x->target = r->target;
    x->done(x, RILL_SUCCESS);
    return true;
}

static inline rill_remote_xfer_t *rx_of(rill_mpsc_node_t *n)
{
    return (rill_remote_xfer_t *)((char *)n - offsetof(rill_remote_xfer_t, link));
}

/* Those waiting, then new requests (oldest first); the ones that cannot start wait, in
 * order. */
static int remote_step(gm_t *m)
{
    rill_mpsc_node_t *todo = m->remote_later, **tail = &todo;
    while (*tail)
        tail = &(*tail)->next;
    *tail = rill_mpsc_take_all(&m->remote);
    m->remote_later = NULL;
    rill_mpsc_node_t **later = &m->remote_later;
    int n = 0, waiting = 0;
    while (todo) {
        rill_mpsc_node_t *node = todo;
        todo = node->next; /* (a started request may be freed) */
        rill_remote_xfer_t *x = rx_of(node);
        bool started = x->kind == RILL_REMOTE_LAND  ? land_start(m, x)
                       : x->kind == RILL_REMOTE_PUT ? put_start(m, x)
                                                    : reserve_start(m, x);
        if (started) {
            n++;
        } else {
            node->next = NULL;
            *later = node;
            later = &node->next;
            waiting++;
        }
    }
    atomic_store_explicit(&m->n_remote_later, waiting, memory_order_relaxed); /* (watchdog) */
    return n;
}

/* ------------------------------------------------------------ completion */

/* A GPU's copy of version v landed in host copy host (ok) or failed: the host copy's version
 * only grows (a later write may have moved it on meanwhile), and the next copy into it may
 * start (landing back to 0, release: after the version). */
static void host_landed(rill_data_copy_t *host, uint64_t v, bool ok)
{
    uint64_t cur = atomic_load_explicit(&host->version, memory_order_acquire);
    while (ok && (cur < v || atomic_load_explicit(&host->coherency, memory_order_acquire) ==
                                 RILL_COHERENCY_INVALID)) {
        if (cur > v)
            break;
        if (atomic_compare_exchange_weak_explicit(&host->version, &cur, v, memory_order_acq_rel,
                                                  memory_order_acquire)) {
            atomic_store_explicit(&host->coherency, RILL_COHERENCY_SHARED, memory_order_release);
            break;
        }
    }
    atomic_store_explicit(&host->landing, 0, memory_order_release);
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

static void complete_op(gm_t *m, gm_op_t *op, cudaError_t err)
{
    switch (op->kind) {
    case OP_XFER: {
        gm_entry_t *e = op->ent[0];
        rill_data_copy_t *c = e->copy;
        e->xfers--;
        if (op->src[0])
            copy_reader_put(op->src[0]);
        trace_xfer(m, op, op->peer >= 0 ? 2 : 0, op->peer >= 0 ? "GPU to GPU" : "host to GPU",
                   c->data->size);
        if (err != cudaSuccess) {
            fail_cuda(m, NULL, "a transfer into GPU memory", err);
        } else if (atomic_load_explicit(&c->coherency, memory_order_acquire) !=
                       RILL_COHERENCY_EXCLUSIVE &&
                   atomic_load_explicit(&c->version, memory_order_acquire) <= op->version[0]) {
            /* the block now holds that version, unless a task wrote it since (then its
             * version is newer, or it is being written: leave it) */
            atomic_store_explicit(&c->version, op->version[0], memory_order_release);
            atomic_store_explicit(&c->coherency, RILL_COHERENCY_SHARED, memory_order_release);
        }
        break;
    }
    case OP_LAND: { /* the sender's signal came: the bytes are in the block */
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
            fail_cuda(m, NULL, "waiting for a tile from another rank", err);
        break;
    }
    case OP_PUT: {
        rill_remote_xfer_t *x = op->rx;
        if (op->netput) { /* its source is ready: now over the net wire */
            net_put_go(m, op, err);
            break;
        }
        trace_xfer(m, op, track_put(m, op->rank), "to a rank's GPU",
                   ((rill_data_t *)x->data)->size);
        if (op->flow && m->trace && op->from_stream >= 0 && m->tr_exec[op->from_stream]) {
            rill_trace_track_t *prev = rill_trace_switch(m->tr_exec[op->from_stream]);
            rill_trace_flow('s', op->flow, op->from_t);
            rill_trace_switch(prev);
        }
        /* a step when the flow started in a kernel's slice, else the put starts it */
        trace_flow_step(m, op, track_put(m, op->rank), op->flow_from_kernel ? 't' : 's');
        if (op->src[0])
            copy_reader_put(op->src[0]);
        if (err != cudaSuccess)
            fail_cuda(m, NULL, "sending a tile to another rank's GPU", err);
        x->done(x, err == cudaSuccess ? RILL_SUCCESS : RILL_ERR_DEVICE);
        break;
    }
    case OP_WB: {
        gm_entry_t *e = op->ent[0];
        trace_xfer(m, op, 1, "write-back (eviction)", e->copy->data->size);
        rill_data_copy_t *host = rill_data_host_copy(e->copy->data);
        if (host)
            host_landed(host, op->version[0], err == cudaSuccess);
        e->writeback = false;
        if (err != cudaSuccess) { /* keep the block: it holds the only current bytes */
            fail_cuda(m, NULL, "a write-back before eviction", err);
            atomic_store_explicit(&e->copy->readers, 0, memory_order_release);
            break;
        }
        entry_drop_block(m, e);
        atomic_fetch_add_explicit(&m->n_evict, 1, memory_order_relaxed);
        break;
    }
    case OP_HOME: {
        size_t bytes = 0;
        for (int i = 0; i < op->nent; i++)
            bytes += op->ent[i]->copy->data->size;
        if (op->nent)
            trace_xfer(m, op, 1, "home (a CPU task needs it)", bytes);
        for (int i = 0; i < op->nent; i++) {
            rill_data_copy_t *c = op->ent[i]->copy;
            rill_data_copy_t *host = rill_data_host_copy(c->data);
            if (host)
                host_landed(host, op->version[i], err == cudaSuccess && !op->body_failed);
            copy_reader_put(c);
        }
        rill_task_t *task = op->task;
        if (err != cudaSuccess || op->body_failed) { /* failed: end it rather than bounce */
            fail_cuda(m, task, "bringing tiles home", err);
            rill_task_complete(NULL, task, RILL_HOOK_ERROR);
        } else { /* back to a worker, which now finds the host copies current */
            task->next = NULL;
            rill_sched_push(m->ctx, NULL, task, 1);
        }
        break;
    }
    case OP_TASK: {
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
            fail_cuda(m, task, "the task's work on its stream", err);
            st = RILL_HOOK_ERROR;
        } else if (m->res->status_host[slot] != 0) {
            int v = m->res->status_host[slot];
            rill_status_t hs =
                task->tc->status_word ? task->tc->status_word(task, v) : RILL_ERR_TASK;
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
            span_add(m, t0, t1);
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
            copy_reader_put(op->ent[i]->copy);
        break;
    }
    }
    op_free(m, op);
}

/* Poll every stream's oldest operations, in order. */
/* For the watchdog: what the streams hold (manager thread, once a turn). */
static void publish_fifos(gm_t *m)
{
    int exec = 0;
    for (int s = 0; s < m->res->nexec; s++)
        exec += m->fifo[s].count;
    atomic_store_explicit(&m->wd_exec, exec, memory_order_relaxed);
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

static int poll_fifos(gm_t *m)
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
    if (rill_heap_push(pending_of(m, task), &task->prio) != RILL_SUCCESS)
        task_fail_now(m, task, RILL_ERR_NO_MEMORY, "out of host memory on GPU %d's manager",
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
            home_start(m, t);
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
            lru_unlink(m, e);
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
            entry_drop_block(m, e);
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

static void describe(rill_device_t *dev, FILE *out);

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

static inline void gm_doing(gm_t *m, const char *what)
{
    atomic_store_explicit(&m->wd_doing, what, memory_order_relaxed);
}

static void *manager_main(void *arg)
{
    gm_t *m = arg;
    rill_context_t *ctx = m->ctx;
    char tname[16];
    snprintf(tname, sizeof(tname), "rill-gpu %d", m->gpu);
    rill_thread_name(tname);
    rill_topo_bind_reserved(ctx->topo, m->gpu);
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
        st = gm_proxy_open(ctx, m->gpu, m->res, &m->wake, &m->proxy, m->start_err,
                           sizeof(m->start_err));
    m->trace = rill_trace_on();
    m->timing = m->trace || rill_param_get_bool(param_timing);
    if (st == RILL_SUCCESS && m->trace) {
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
        progress += remote_step(m);
        if (m->trace)
            ph[2] = rill_time_ns();
        gm_doing(m, "polling its streams' completions");
        progress += poll_fifos(m);
        if (m->trace)
            ph[3] = rill_time_ns();
        gm_doing(m, "launching tasks");
        progress += launch_pending(m);
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
        if (progress) {
            busy_at = 0; /* read the clock once idle */
            continue;
        }
        if (m->net_expect > 0) { /* a put over the net lands only while we progress */
            rill_cpu_relax();
            continue;
        }
        if (m->inflight > 0) { /* work on the GPU: watch it closely */
            busy_at = 0;
            rill_cpu_relax();
            continue;
        }
        if (spin_ns > 0) {
            uint64_t now = rill_time_ns();
            if (busy_at == 0)
                busy_at = now;
            if (now - busy_at < spin_ns) {
                rill_cpu_relax();
                continue;
            }
        }
        if (m->pending.count > 0 || m->pending_urgent.count > 0 || m->naside > 0 ||
            m->remote_later) {
            /* waiting for room a read holds */
            sched_yield();
            continue;
        }
        /* port channels: GPU threads push without waking anyone, so keep polling for a
         * while after the last request, then poll at intervals */
        int64_t poll_us = gm_proxy_idle_us(m->proxy);
        if (poll_us == 0) {
            rill_cpu_relax();
            continue;
        }
        /* nothing in flight: sleep until a worker hands something over (or, with port
         * channels, until the next poll) */
        uint32_t key = rill_evcount_prepare(&m->wake);
        if (rill_mpsc_nonempty(&m->intake) || rill_mpsc_nonempty(&m->dead) || m->dead_later ||
            rill_mpsc_nonempty(&m->remote) || gm_proxy_has_work(m->proxy) ||
            atomic_load_explicit(&m->stop, memory_order_acquire)) {
            rill_evcount_cancel(&m->wake);
            continue;
        }
        rill_evcount_wait(&m->wake, key, poll_us > 0 ? (uint64_t)poll_us : 1000000);
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
        status = rill_device_add(RILL_DEVICE_CUDA, name, &gm_ops, m, gflops, &m->dev);
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
    if (!ctx || !c || i < 0 || i >= nmanagers)
        return RILL_ERR_INVALID_ARG;
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
    c->busy_s = busy_seconds(m);
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
