/* The runtime context and taskpools: start Rill, run task graphs, stop Rill. */
#ifndef RILL_RUNTIME_H
#define RILL_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "rill/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rill_context rill_context_t;   /**< one per process */
typedef struct rill_taskpool rill_taskpool_t; /**< a task graph being run */
typedef struct rill_task rill_task_t;         /**< one task instance (opaque to bodies) */

/** Kinds of task bodies, which are the kinds of devices (rill_dtd_class_add_body; a PTG
 * body's BODY [type = cuda]): the runtime's devices are each of one of these kinds. */
typedef enum rill_body_type {
    RILL_BODY_CPU = 0,  /**< runs on a worker thread, tiles in host memory */
    RILL_BODY_CUDA = 1, /**< enqueues work on a CUDA stream (rill/cuda.h), tiles in GPU memory */
} rill_body_type_t;

/**
 * Start Rill: load parameters (files, RILL_MCA_* environment, `--mca name value`,
 * which are removed from argc/argv), initialise MPI when built with it and the
 * process was started by mpirun (or use MPI if the application initialised it
 * already), discover the topology, start one worker per core given to Rill (the
 * calling thread is worker 0 and works while it waits), the comm thread, and warn
 * about unknown parameters. argc/argv may be NULL. On error nothing is left running
 * and *ctx_p is untouched. One context per process: a second rill_init before
 * rill_fini is RILL_ERR_BAD_STATE (the first context is unaffected). After rill_fini
 * Rill can start again only if the application initialised MPI itself (Rill then
 * leaves it initialised); if Rill initialised MPI, rill_fini finalised it and a new
 * rill_init fails with RILL_ERR_BAD_STATE. Main thread.
 */
RILL_API rill_status_t rill_init(int *argc, char ***argv, rill_context_t **ctx_p);

/**
 * Stop Rill: run every taskpool that has tasks and was not waited for to the end (as
 * rill_taskpool_wait would, oldest first, with a warning), free every taskpool not
 * destroyed yet (their handles become invalid), stop the threads, finalise MPI if Rill
 * initialised it, free the context and set *ctx_p to NULL. Returns the first error of
 * those waits, or of stopping the comm engine. Main thread.
 */
RILL_API rill_status_t rill_fini(rill_context_t **ctx_p);

/** The most worker threads (cores) a process may give Rill: runtime_num_cores' upper
 * bound, for programs that check an option against it before rill_init. */
#define RILL_MAX_CORES 4096

/** This process's rank and the number of ranks (0 and 1 without MPI). Any thread. */
RILL_API int rill_context_rank(const rill_context_t *ctx);
RILL_API int rill_context_nranks(const rill_context_t *ctx);
/** Every rank gives size bytes at in; out (nranks x size bytes) gets them all in rank order.
 * Collective: every rank calls it, in the same order as other collectives. Main thread. */
RILL_API rill_status_t rill_context_allgather(rill_context_t *ctx, const void *in, size_t size,
                                              void *out);
/** Number of ranks on this process's node (shared memory), and this process's index
 * among them (1 and 0 without MPI). Any thread. */
RILL_API int rill_context_local_nranks(const rill_context_t *ctx);
RILL_API int rill_context_local_rank(const rill_context_t *ctx);
/** Number of workers (cores given to Rill in this process). Any thread. */
RILL_API int rill_context_nworkers(const rill_context_t *ctx);
/** Number of GPUs this process runs tasks on (0: CPUs only), and GPU i's description
 * ("NVIDIA H100 80GB HBM3, CUDA device 0"; static storage, NULL when i is out of range).
 * Any thread. */
RILL_API int rill_context_ngpus(const rill_context_t *ctx);
RILL_API const char *rill_context_gpu_name(const rill_context_t *ctx, int i);
/** Why this process runs on no GPU ("device_cuda_enabled is false", "this build has no CUDA
 * support", ...); "" when it runs on some. Static storage while the context lives. */
RILL_API const char *rill_context_gpu_status(const rill_context_t *ctx);

/** What GPU i's manager did since rill_init (counts and bytes of transfers, evictions). */
typedef struct rill_gpu_counters {
    unsigned long long tasks;         /**< tasks completed on the GPU */
    unsigned long long h2d, d2h, d2d; /**< transfers host->GPU, GPU->host, GPU->GPU */
    unsigned long long h2d_bytes, d2h_bytes, d2d_bytes;
    unsigned long long hits;           /**< task inputs already current on the GPU */
    unsigned long long evictions;      /**< copies dropped to make room */
    unsigned long long writebacks;     /**< of those, written home first (dirty) */
    unsigned long long home_requests;  /**< CPU tasks that needed a copy brought home */
    unsigned long long waits_for_room; /**< launches that found the zone full */
    /** tiles received straight into this GPU's memory from another rank's GPU (GPU-direct
     * remote dependencies), their bytes, and how many of them waited for room first */
    unsigned long long remote_in, remote_in_bytes, remote_waits_for_room;
    /** of those, landings reserved ahead and announced to the sender (early announcement:
     * the sender's put needed no request once its producer completed) */
    unsigned long long remote_early;
    /** tiles sent from this GPU (or host memory, by this GPU) into another rank's GPU */
    unsigned long long remote_out, remote_out_bytes;
    /** of those, puts enqueued on the GPU behind their producer's body while it was in
     * flight (no host step between the producer's kernel and the copy) */
    unsigned long long remote_behind;
    /** of those, puts by a kernel that copies and signals (device_cuda_put_sm_max) rather
     * than by the copy engine */
    unsigned long long remote_sm;
    /** the time this GPU's landing streams spent waiting for tiles from other ranks: from
     * the moment a wait for a landing's semaphore was reached on the GPU to the sender's
     * signal (a stream's waits follow each other, so they add up; summed over the streams,
     * device_cuda_remote_lanes; 0 without device_cuda_timing). Tasks that read a landing
     * wait for it on the GPU behind this. */
    double remote_wait_s;
    double busy_s; /**< time at least one exec stream ran a task (device_cuda_timing) */
    /** 1 when the GPU times its operations (device_cuda_timing, or a trace): busy_s,
     * remote_wait_s and the spans' check are measured; 0: they stay 0 */
    int timed;
    /** the check of the traces' time reference (device_cuda_timing): timed operations whose
     * end, on the GPU's clock mapped onto the host's, came more than 5 us after the host saw
     * them complete (0 when the mapping holds), and the greatest such lateness */
    unsigned long long spans_late;
    double span_late_max_us;
} rill_gpu_counters_t;
/** Fill *c with GPU i's counters. RILL_ERR_INVALID_ARG when i is not one of the process's
 * GPUs. Any thread (the values are a snapshot). */
RILL_API rill_status_t rill_context_gpu_counters(const rill_context_t *ctx, int i,
                                                 rill_gpu_counters_t *c);

/** "0.1.0 (git abcdef012345)". Static storage. */
RILL_API const char *rill_version_string(void);

/**
 * Run the taskpool to completion: close insertion (a DTD taskpool flushes its data
 * home first), make the calling thread work until every task of the taskpool has
 * run on every rank, and return the first error a task or the runtime reported
 * (RILL_ERR_TASK, RILL_ERR_COMM, RILL_ERR_MISMATCH...). With several ranks the status is
 * the taskpool's, the same on every rank: a rank whose part succeeded returns the error of
 * the lowest rank whose part failed (and says which). Waiting a second time is
 * RILL_ERR_BAD_STATE. Main thread.
 */
RILL_API rill_status_t rill_taskpool_wait(rill_taskpool_t *tp);

/** Free a taskpool that was waited for, or that never had a task inserted (nor a datum
 * flushed). A taskpool with tasks that was not waited for is RILL_ERR_BAD_STATE (wait
 * for it first). *tp_p becomes NULL. Main thread. */
RILL_API rill_status_t rill_taskpool_destroy(rill_taskpool_t **tp_p);

/** The worker running the task (0 .. nworkers-1), for per-worker scratch. Task body. */
RILL_API int rill_task_worker_id(const rill_task_t *task);
/** The context a task runs in. Task body. */
RILL_API rill_context_t *rill_task_context(const rill_task_t *task);

/** The node of rank: the lowest rank of its node (the ranks of one machine, in groups of
 * comm_ranks_per_node consecutive ranks when nodes are simulated on one machine); -1 for
 * no such rank. Any thread. */
RILL_API int rill_context_node(const rill_context_t *ctx, int rank);

/** The wire that carries bulk bytes (tiles above comm_short_limit) between this process
 * and rank: "mpi" (the same node, or comm_net = mpi), "ucx" (another node, Rill built
 * with UCX), "self"; NULL for no such rank. why, if not NULL, says why (static storage).
 * Any thread. */
RILL_API const char *rill_context_wire(const rill_context_t *ctx, int rank, const char **why);

/** How GPU tiles move to and from peer rank's GPUs: 1 GPU direct on the same node over
 * CUDA IPC (checked both ways at rill_init), 2 GPU direct on another node over the net wire
 * (UCX built with CUDA support, both ranks connected at rill_init), 3 from GPU to GPU through
 * the host-staged pipeline (the GPUs do not reach each other, both ranks have GPUs and MPI
 * is their wire, comm_gpu_staged = pipeline: chunks through pinned host buffers), 0 through
 * the datum's host copies (the whole tile). For 0 and 3, why (if not NULL) says why the GPUs
 * do not reach each other. comm_gpu_direct = off leaves only 3 and 0. Any thread. */
RILL_API int rill_context_gpu_direct(const rill_context_t *ctx, int rank, const char **why);

/** Whether port channels (rill/channel.h) of this rank's GPUs reach rank's GPUs: 1 over
 * CUDA IPC (this node; memory channels too), 2 over the net wire (another node: requests and
 * bytes through the GPU managers), 0 not (why, if not NULL, says why). Host port channels
 * (RILL_HOST_MEMORY) reach every rank. Any thread, after rill_init. */
RILL_API int rill_port_channel_reach(const rill_context_t *ctx, int rank, const char **why);

#ifdef __cplusplus
}
#endif
#endif
