/* Internals of the GPU manager shared by its files, one per role: manager.c (the thread,
 * its loop, start and stop, the operations in flight and their completion, the report and
 * the accessors), stage.c (staging and eviction: the zone's blocks, the LRU list, copies
 * brought in and home), launch.c (launching tasks: the pending heaps, the choice of a
 * stream, the landing waiters' bound) and remote.c (the remote steps: landings, puts and
 * reservations for other ranks' GPUs, over CUDA IPC or the net wire). Internal to
 * gpu_manager/. */
#ifndef RILL_GM_INTERNAL_H
#define RILL_GM_INTERNAL_H

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

#if RILL_HAVE_CUDA

/* ------------------------------------------------------------ structures */

typedef struct gm_staged gm_staged_t; /* staged.c */
typedef struct gm_pipe gm_pipe_t;

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
    gm_staged_t *staged; /* the host-staged pipeline (staged.c), once first used */
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
    atomic_ullong wd_turns;                 /* turns of the loop */
    _Atomic(const char *) wd_doing;         /* the step it is in (static text) */
    atomic_int wd_exec, wd_land, wd_put;    /* operations in flight on those streams */
    atomic_int wd_aside;                    /* tasks set aside until their tile lands */
    atomic_int wd_net_expect, wd_net_sends; /* net wire: landings not armed; sends, receives */
    atomic_ullong wd_land_t, wd_put_t;      /* when the oldest of those entered its fifo */
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

/* ------------------------------------------------------------ helpers of every file */

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

static inline void gm_doing(gm_t *m, const char *what)
{
    atomic_store_explicit(&m->wd_doing, what, memory_order_relaxed);
}

/* ------------------------------------------------------------ across the files */

/* manager.c: the operations in flight */
void gm_fail_cuda(gm_t *m, rill_task_t *task, const char *call, cudaError_t e);
gm_op_t *gm_op_new(gm_t *m, int kind);
void gm_op_free(gm_t *m, gm_op_t *op);
void gm_op_begin(gm_t *m, gm_op_t *op, cudaStream_t s, bool on);
cudaError_t gm_op_record(gm_t *m, gm_op_t *op, cudaStream_t s);
void gm_fifo_push(gm_t *m, int f, gm_op_t *op);
int gm_poll_fifos(gm_t *m);

/* stage.c: staging and eviction */
void gm_lru_unlink(gm_t *m, gm_entry_t *e);
void gm_lru_touch(gm_t *m, gm_entry_t *e);
bool gm_copy_reader_get(rill_data_copy_t *c);
void gm_copy_reader_put(rill_data_copy_t *c);
bool gm_copy_quiesce(rill_data_copy_t *c);
void gm_copy_unquiesce(rill_data_copy_t *c);
gm_entry_t *gm_entry_of(gm_t *m, rill_data_t *d);
void gm_entry_set_block(gm_t *m, gm_entry_t *e, uintptr_t addr);
void gm_entry_drop_block(gm_t *m, gm_entry_t *e);
rill_status_t gm_zone_get(gm_t *m, size_t size, uintptr_t *addr);
cudaError_t gm_stage_in(gm_t *m, gm_entry_t *e, rill_data_t *d);
void gm_home_start(gm_t *m, rill_task_t *task);
void gm_host_landed(rill_data_copy_t *host, uint64_t v, bool ok);

/* launch.c: launches */
void gm_span_add(gm_t *m, uint64_t t0, uint64_t t1);
double gm_busy_seconds(gm_t *m);
void gm_task_fail_now(gm_t *m, rill_task_t *task, rill_status_t s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
rill_heap_t *gm_pending_of(gm_t *m, const rill_task_t *task);
int gm_launch_pending(gm_t *m);

/* staged.c: the host-staged pipeline (in place of the net wire's send and receive) */
rill_status_t gm_staged_send(gm_t *m, const rill_remote_xfer_t *x, const void *src, bool gpu,
                             size_t size, rill_net_done_fn done, void *arg);
rill_status_t gm_staged_recv(gm_t *m, const rill_remote_xfer_t *x, void *dst, size_t size,
                             rill_net_done_fn done, void *arg, gm_pipe_t **pp);
/* The same over the net wire for other users (port channels between nodes: proxy_net.c):
 * chunk k's tag is ntag | k (ntag's low 20 bits clear, unique among the receiver's pipes);
 * a receive into NULL takes the chunks and drops them. */
rill_status_t gm_staged_send_net(gm_t *m, int peer, int peer_idx, uint64_t ntag, const void *src,
                                 bool gpu, size_t size, rill_net_done_fn done, void *arg);
rill_status_t gm_staged_recv_net(gm_t *m, int peer, uint64_t ntag, void *dst, size_t size,
                                 rill_net_done_fn done, void *arg, gm_pipe_t **pp);
/* Set the pipeline up now, with at least nbufs pinned chunk buffers in its pool: a buffer
 * allocated later is allocated while the GPU runs work, and cudaHostAlloc may wait for it. */
rill_status_t gm_staged_reserve(gm_t *m, int nbufs);
/* The stream of its copies into the GPU (NULL before it was set up). */
cudaStream_t gm_staged_h2d(const gm_t *m);
void gm_staged_cancel(gm_t *m, gm_pipe_t *p);
int gm_staged_progress(gm_t *m);
int gm_staged_inflight(const gm_t *m);
void gm_staged_fini(gm_t *m);

/* remote.c: remote steps */
void gm_net_put_go(gm_t *m, gm_op_t *op, cudaError_t err);
int gm_remote_step(gm_t *m);

#endif /* RILL_HAVE_CUDA */

#endif
