/* The comm engine: one comm thread funnels every MPI call. Upper layers send active
 * messages and move bulk data with a rendezvous (GET answered by a PUT); they never
 * call MPI. Internal. */
#ifndef RILL_COMM_H
#define RILL_COMM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rill/status.h"

#include "log.h"

/** The comm engine's log component (comm_verbose). */
extern rill_log_comp_t rill_log_comm;
#define RILL_LOG_COMM (&rill_log_comm)

typedef struct rill_comm rill_comm_t;

/** Highest active-message tag + 1 available to upper layers. */
#define RILL_COMM_AM_MAX 16

typedef enum rill_comm_op { RILL_COMM_SUM, RILL_COMM_MIN, RILL_COMM_MAX } rill_comm_op_t;

/** Register comm_* parameters (comm_short_limit, comm_aggregate, comm_max_requests,
 * comm_thread_yield_*...). Main thread, before rill_comm_init. */
rill_status_t rill_comm_register_params(void);

/**
 * Start the comm engine. With MPI: initialise it (MPI_THREAD_SERIALIZED or better,
 * a clear error otherwise: RILL_ERR_NOT_SUPPORTED) unless the application already did
 * (then it must have asked for SERIALIZED or better, and the engine will not finalise
 * it), duplicate MPI_COMM_WORLD, and start the comm thread. Without MPI, or a process
 * not started by mpirun (in a build with MPI, MPI is still initialised as a
 * singleton): a communicator of one rank, and no comm thread (nothing to do). Reads
 * the comm_* parameters (registering them if rill_comm_register_params was not
 * called). Main thread.
 */
rill_status_t rill_comm_init(int *argc, char ***argv, rill_comm_t **comm_p);
/** Wait until every message and PUT this rank started has left, barrier with the other
 * ranks, stop the comm thread, finalise MPI if rill_comm_init initialised it, and set
 * *comm_p to NULL. Traffic must be over (the upper layer's termination detection):
 * a GET still pending is cancelled with RILL_ERR_BAD_STATE. Main thread. */
rill_status_t rill_comm_fini(rill_comm_t **comm_p);

/** Rank, number of ranks, and this process's index/count among the ranks of its node. */
int rill_comm_rank(const rill_comm_t *comm);
int rill_comm_size(const rill_comm_t *comm);
int rill_comm_local_rank(const rill_comm_t *comm);
int rill_comm_local_size(const rill_comm_t *comm);
/** The node's identity: the lowest rank among the processes of this process's node
 * (MPI_Comm_split_type shared), split further into groups of comm_ranks_per_node
 * consecutive ranks when that is set (nodes simulated on one machine: nothing crosses
 * them by shared memory or CUDA IPC). The local rank and size above stay those of the
 * machine (cores and GPUs are shared out by them). */
int rill_comm_node_id(const rill_comm_t *comm);
/** The node of rank (its node's lowest rank), -1 when there is no such rank. Any thread. */
int rill_comm_node_of(const rill_comm_t *comm, int rank);
/** The wire that carries bulk bytes to and from rank ("mpi", "ucx"; "self" for this rank,
 * NULL when there is no such rank), and why it was chosen in *why_p (static storage).
 * Any thread. */
const char *rill_comm_peer_wire(const rill_comm_t *comm, int rank, const char **why_p);
/** The comm thread, in *thread_p (to bind it once the cores are known: it starts before);
 * RILL_ERR_NOT_SUPPORTED when none runs (one rank, or without MPI). Main thread. */
rill_status_t rill_comm_thread_get(const rill_comm_t *comm, pthread_t *thread_p);
/** This process's index and the number of processes on its node as the launcher set
 * them in the environment (Open MPI's OMPI_COMM_WORLD_LOCAL_*, MPICH's MPI_LOCAL*), for
 * tools that do not start MPI; 0 and 1 when not launched by one. Any thread. */
void rill_comm_launcher_local(int *rank_p, int *size_p);

/** Payloads up to this many bytes may travel inside an activation message. */
size_t rill_comm_short_limit(const rill_comm_t *comm);
/** Data smaller than this many bytes go through host memory even between ranks that reach
 * each other's GPUs (comm_gpu_direct_min). */
size_t rill_comm_gpu_direct_min(const rill_comm_t *comm);
/** Let the comm thread poll at least us microseconds after its last progress before it
 * sleeps (never shortens comm_thread_spin_us). Any thread. */
void rill_comm_spin_at_least(rill_comm_t *comm, uint64_t us);
/** Whether GPU memory of peer ranks may be reached directly (comm_gpu_direct = auto), or
 * every peer is host-staged (off). Any thread. */
bool rill_comm_gpu_direct_allowed(void);
/** Whether GPU tiles between ranks that do not reach each other's GPUs, both with GPUs and
 * MPI as their wire, go through the host-staged pipeline (comm_gpu_staged = pipeline), and
 * its chunk's bytes (comm_gpu_staged_chunk). Any thread. */
bool rill_comm_gpu_staged_pipeline(void);
/** comm_net_gpu: 0 auto, 1 direct, 2 staged (how GPU tiles cross between nodes over UCX).
 * Any thread. */
int rill_comm_net_gpu_mode(void);
size_t rill_comm_gpu_staged_chunk(void);

/* ------------------------------------------------------------ active messages */

/** Handler of an active message. Runs on the comm thread; must not block; msg is
 * valid only during the call. */
typedef void (*rill_comm_am_fn)(rill_comm_t *comm, int src, void *msg, size_t len, void *arg);

/** Install the handler of tag (0 .. RILL_COMM_AM_MAX-1). Main thread, before traffic.
 * A message that arrives for a tag with no handler yet is held (with every later one,
 * to keep the order) until its handler is installed, with a warning. */
rill_status_t rill_comm_am_register(rill_comm_t *comm, int tag, rill_comm_am_fn fn, void *arg);

/** Take a tag of its own for a layer above (from the top of 0 .. RILL_COMM_AM_MAX-1 down,
 * so fixed small tags do not meet it) and install fn as its handler. Every rank must
 * make the same calls in the same order: the n-th call gets the same tag everywhere.
 * RILL_ERR_NO_MEMORY when every tag is taken. Main thread, before traffic. */
rill_status_t rill_comm_am_register_new(rill_comm_t *comm, rill_comm_am_fn fn, void *arg,
                                        int *tag_p);

/**
 * Send an active message of len bytes (at most rill_comm_short_limit + 1024) to rank
 * dst != self. msg is copied; returns at once. Messages from one thread to one peer
 * with the same tag are delivered in order, whatever their priorities; among the
 * messages waiting for one peer, the next to leave is the highest-priority head of
 * the per-tag queues (the oldest on ties). Small messages to one peer are packed into
 * one MPI message (comm_aggregate). Errors: RILL_ERR_INVALID_ARG (dst is self or out of
 * range, bad tag, len too large), RILL_ERR_NO_MEMORY. Any thread, the handlers included.
 */
rill_status_t rill_comm_am_send(rill_comm_t *comm, int dst, int tag, const void *msg, size_t len,
                                int32_t priority);

/* ------------------------------------------------------------ rendezvous (GET / PUT / PUT_END) */

/** Completion callback of a rendezvous step. Runs on the comm thread; must not block. */
typedef void (*rill_comm_done_fn)(void *arg, rill_status_t status);

/**
 * Sender side: let nb_gets (>= 1) GETs from peers read size (<= INT_MAX) bytes at buf
 * (borrowed until release). After the last PUT completes (PUT_END) release(arg, status)
 * is called on the comm thread. The handle (unique on this rank) names the buffer in an
 * activation message; it is usable as soon as this returns, since the registration
 * reaches the comm thread before any message posted afterwards. A GET of an unknown
 * handle, of more bytes than exposed, or beyond nb_gets is refused: an error is logged
 * here and the getter's done receives RILL_ERR_NOT_FOUND, RILL_ERR_INVALID_ARG or
 * RILL_ERR_BAD_STATE. On one rank there is nobody to GET it: release is never called.
 * Any thread.
 */
rill_status_t rill_comm_expose(rill_comm_t *comm, const void *buf, size_t size, int nb_gets,
                               rill_comm_done_fn release, void *arg, uint64_t *handle_p);

/**
 * Receiver side: GET size bytes of the buffer that rank src (!= self) exposed as handle
 * into buf (borrowed until done). Transfers are not chunked: size must be at most
 * INT_MAX (RILL_ERR_INVALID_ARG otherwise). At most comm_max_requests receives are
 * posted at once, the rest wait by priority; the sender serves GETs in priority order
 * under the same limit. done(arg, status) runs on the comm thread once the bytes landed
 * (RILL_SUCCESS) or the GET was refused. Any thread.
 */
rill_status_t rill_comm_get(rill_comm_t *comm, int src, uint64_t handle, void *buf, size_t size,
                            int32_t priority, rill_comm_done_fn done, void *arg);

/* ------------------------------------------------------------ streams (two-sided bulk) */

/* Streams move host memory between two ranks with sends matched by receives, chunk by
 * chunk, for a layer above that pipelines a transfer itself (the GPU managers' host-staged
 * pipeline: docs/architecture.md). They go over MPI, on a communicator of their own, so they
 * never meet the active messages or the rendezvous; the sends of one thread to one peer with
 * one tag match that peer's receives from this rank with that tag in the order both were
 * made. */

/** The largest stream tag (MPI's tag space: at least 32767); -1 when there are no streams
 * (one rank, or built without MPI). Any thread. */
int rill_comm_stream_tag_max(const rill_comm_t *comm);

/**
 * Send size (<= INT_MAX) bytes of host memory at buf (borrowed until done) to rank dst (not
 * this one), for its rill_comm_stream_recv naming this rank and tag (0 ..
 * rill_comm_stream_tag_max). done(arg, status) runs on the comm thread once buf may be
 * reused. *id_p names the operation (rill_comm_stream_cancel). Errors (nothing started):
 * RILL_ERR_INVALID_ARG, RILL_ERR_NO_MEMORY, RILL_ERR_NOT_SUPPORTED (no streams). Any thread.
 */
rill_status_t rill_comm_stream_send(rill_comm_t *comm, int dst, int tag, const void *buf,
                                    size_t size, rill_comm_done_fn done, void *arg, uint64_t *id_p);
/** Receive size bytes from rank src's send with tag into buf (borrowed until done): done(arg,
 * RILL_SUCCESS) on the comm thread once they are there (a message of another size fails
 * it, RILL_ERR_COMM). Same rules as rill_comm_stream_send. */
rill_status_t rill_comm_stream_recv(rill_comm_t *comm, int src, int tag, void *buf, size_t size,
                                    rill_comm_done_fn done, void *arg, uint64_t *id_p);
/** Cancel the stream receive id: its done runs with RILL_ERR_COMM (or RILL_SUCCESS when its
 * bytes came first). Nothing when it already completed. Any thread. */
void rill_comm_stream_cancel(rill_comm_t *comm, uint64_t id);

/* ------------------------------------------------------------ runtime collectives */

/**
 * How a thread that called a blocking comm operation (a collective) waits for it. The
 * layer above installs one (the runtime core does, at context creation) so that such a
 * thread keeps running its tasks and is watched by the watchdog: another rank may need
 * those tasks before it can join the collective, so a rank that only slept there could
 * deadlock the job. Without a waiter, or when wait returns false (the calling thread is
 * not one it can drive), the caller sleeps until the comm thread finishes.
 */
typedef struct rill_comm_waiter {
    /** Return once done(done_arg) holds, or false at once if this thread cannot wait
     * here. what names the wait (static storage) for reports. Calling thread. */
    bool (*wait)(void *arg, bool (*done)(void *done_arg), void *done_arg, const char *what);
    /** The comm thread finished a wait's operation: wake the waiters to re-check. Must
     * not block. Comm thread. */
    void (*wake)(void *arg);
    void *arg;
} rill_comm_waiter_t;

/** Install the waiter (copied; NULL removes it). Before the first collective and after
 * the last: the comm thread reads it when a collective completes, which happens after
 * the collective was posted through the command queue, so the install (made before
 * posting) is visible to it. Main thread. */
void rill_comm_set_waiter(rill_comm_t *comm, const rill_comm_waiter_t *waiter);

/** Blocking for the caller, carried out by the comm thread with a non-blocking MPI
 * collective, so other traffic keeps flowing meanwhile; the caller waits through the
 * installed waiter (it keeps running tasks), else sleeps. in == out is allowed (in
 * place). Every rank must call the same collectives in the same order. Main thread (one
 * collective at a time). */
rill_status_t rill_comm_allreduce_u64(rill_comm_t *comm, const uint64_t *in, uint64_t *out,
                                      int count, rill_comm_op_t op);
rill_status_t rill_comm_barrier(rill_comm_t *comm);
/** Every rank's size bytes at in, into out (size x nranks bytes, rank order); same rules. */
rill_status_t rill_comm_allgather(rill_comm_t *comm, const void *in, size_t size, void *out);

/**
 * Hints for the comm thread's idle policy (correctness never depends on them):
 * - rill_comm_expect: the layer above waits for delta more (or, negative, fewer)
 *   incoming messages: an activation a receive waits for, a GET for an exposed buffer;
 * - rill_comm_workers_idle: delta more (fewer) workers of this process have nothing to
 *   run.
 * While a message is expected and a worker is idle, the message is on the critical path:
 * the comm thread polls MPI every comm_thread_poll_us. Otherwise it backs off up to
 * comm_thread_yield_max_us, leaving the core to the workers (on a core shared with a
 * worker, polling every few microseconds cost a quarter of the compute), and up to
 * comm_thread_yield_busy_us while every worker is busy and no MPI request is in flight. A
 * worker turning idle while a message is expected wakes the comm thread. Any thread.
 */
void rill_comm_expect(rill_comm_t *comm, int delta);
void rill_comm_workers_idle(rill_comm_t *comm, int delta);

/** End the whole job now with exit code code (MPI_Abort with MPI, exit otherwise), for
 * errors after which the ranks cannot agree on how to go on. The caller has logged why.
 * Any thread. */
void rill_comm_abort(rill_comm_t *comm, int code) __attribute__((noreturn));

/** The collectives this rank started (rill_fini's final barrier included). Any thread. */
uint64_t rill_comm_collectives(const rill_comm_t *comm);
/** true while this rank is inside a collective (a thread waits for it, or rill_fini's final
 * barrier is under way): *count is its number (rill_comm_collectives when it started), *what
 * what it is. Read on the comm thread, it is exact (the comm thread completes them). */
bool rill_comm_in_collective(const rill_comm_t *comm, uint64_t *count, const char **what);

/* ------------------------------------------------------------ statistics */

/** Counters since rill_comm_init. "AM" counts active messages (the internal GET and
 * GET-error ones included); "MPI messages" counts the MPI messages that carried them,
 * so with aggregation mpi_msgs_sent < am_sent. */
typedef struct rill_comm_stats {
    uint64_t am_sent, am_recv;                 /**< active messages */
    uint64_t am_bytes_sent, am_bytes_recv;     /**< their payload bytes */
    uint64_t mpi_msgs_sent, mpi_msgs_recv;     /**< MPI messages carrying active messages */
    uint64_t mpi_bytes_sent, mpi_bytes_recv;   /**< their bytes, headers included */
    uint64_t am_aggregated;                    /**< AMs that shared an MPI message with others */
    uint64_t gets_served;                      /**< PUTs completed for peers' GETs */
    uint64_t gets_done;                        /**< our GETs completed (successfully or not) */
    uint64_t data_bytes_sent, data_bytes_recv; /**< rendezvous payload bytes */
    uint64_t sleeps;                           /**< times the idle comm thread slept */
    uint64_t sleep_ns;                         /**< time the comm thread spent asleep */
    uint64_t thread_ns; /**< time since the comm thread started (polling = this - sleep_ns) */
    /** turns of its loop over 0.5 ms (messages that came meanwhile waited), and their time */
    uint64_t slow_turns, slow_ns;
    /** sleeps that ended over 0.5 ms after their timeout (no core for it), and the delay */
    uint64_t late_wakes, late_ns;
} rill_comm_stats_t;

/** Traffic with one peer, by protocol: active messages (activations, small tiles inside
 * them: "inline") and rendezvous transfers (GET answered by a PUT). */
typedef struct rill_comm_peer_stats {
    uint64_t am_sent, am_bytes_sent, am_recv, am_bytes_recv;
    uint64_t rdv_sent, rdv_bytes_sent, rdv_recv, rdv_bytes_recv;
    /** of those rendezvous, the ones carried by a wire other than MPI (UCX between nodes) */
    uint64_t net_sent, net_bytes_sent, net_recv, net_bytes_recv;
} rill_comm_peer_stats_t;

/** Counters of traffic with peer (zero for self, or with one rank). Any thread. */
void rill_comm_peer_stats(const rill_comm_t *comm, int peer, rill_comm_peer_stats_t *stats_p);

/** Copy the counters (each read atomically; the set is not one snapshot). Any thread. */
void rill_comm_stats(const rill_comm_t *comm, rill_comm_stats_t *stats_p);

#endif
