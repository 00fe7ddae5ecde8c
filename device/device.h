/* The device abstraction: each device (the CPU, each GPU) is an index and an ops table.
 * Index 0 is the CPU (host memory); the GPU managers add one device per GPU they run at
 * rill_init and remove them at rill_fini. Internal. */
#ifndef RILL_DEVICE_H
#define RILL_DEVICE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rill/runtime.h" /* rill_body_type_t: the kinds of devices */
#include "rill/status.h"

#include "log.h"
#include "mpsc.h"

/** The device layer's log component (device_verbose). */
extern rill_log_comp_t rill_log_device;
#define RILL_LOG_DEVICE (&rill_log_device)

/** Register the device layer's parameters (device_*, device_cuda_*). Main thread. */
rill_status_t rill_device_register_params(void);

#define RILL_MAX_DEVICES 9 /* the CPU + up to 8 GPUs */

/* a device's kind is the kind of task body it runs (rill/runtime.h) */
typedef rill_body_type_t rill_device_type_t;

typedef struct rill_device rill_device_t;

/**
 * A version of a datum moving from one process's GPU memory straight into another's
 * (GPU-direct remote dependencies; docs/architecture.md). The core's remote-dependency
 * engine (runtime/remote_dep.c) fills it, hands it to a GPU's manager (land, reserve or put
 * below) and gets it back through done, on the manager thread; the engine frees it (the manager
 * never touches it after done, but for a reservation, which it reads again when the landing that
 * uses it comes).
 *
 * RILL_REMOTE_LAND, on the receiving rank, in two steps. Without put_coming: the manager
 * reserves a block of its zone for the datum (its copy on this GPU: the landing buffer, no
 * second copy) and a semaphore (or takes those of the reservation early), fills dst_off,
 * sem_off and target (what the sender needs) and calls done with reserved set; x is then
 * the reservation, and the engine asks the sender for the bytes. With put_coming (the
 * sender's put is enqueued on its GPU) and early naming the reservation: the manager
 * enqueues a wait on the semaphore on its landing stream and marks the copy as under
 * transfer, so every later use of the copy on this GPU is ordered behind the landing on the
 * GPU (an event), not by a host thread; done: the engine completes the receive.
 * A stream never waits for a put that is not enqueued on the sender's GPU: a CUDA call that
 * synchronises the context behind the scenes (a library's first use of a kernel loads it:
 * cuBLAS does so inside cublasDgemm) waits for every stream, and two ranks' managers each
 * stuck so, each waiting for a put the other has not enqueued, would deadlock.
 *
 * RILL_REMOTE_PUT, on the sending rank: the manager copies the newest copy (its own, or the
 * host's) into the receiver's landing buffer through the CUDA IPC mapping of the receiver's
 * zone, then writes target into the receiver's semaphore on the same stream (ordered after
 * the data), and calls done once its event shows both complete: until then it holds a reader
 * on the source copy, so no later writer can change the bytes being sent. behind, when nonzero,
 * names a task launch on this GPU (the number the task class's launched hook was given): while that
 * body is in flight, the source is the copy it writes and the put is enqueued behind the body's
 * event on the GPU (no host step between the producer's kernel and the copy); once it completed,
 * the put proceeds as above. enqueued, when set, is called (manager thread) once the copy
 * and its signal are enqueued on the GPU, before done: only then may the receiver's stream
 * wait for them.
 *
 * RILL_REMOTE_RESERVE, on the receiving rank, ahead of the version (early announcement):
 * the landing buffer and semaphore as for a landing, but only when they are free at once
 * (no eviction, within a share of the zone), and no wait enqueued: reserved says whether it
 * worked, done is called either way. A later RILL_REMOTE_LAND naming it in early then only
 * enqueues the wait (once the put is known to be coming: a stream never waits for a
 * transfer that may not start).
 */
typedef struct rill_remote_xfer {
    rill_mpsc_node_t link;
    int kind;     /* RILL_REMOTE_LAND or RILL_REMOTE_PUT */
    void *task;   /* the engine's transfer (rill_rdep_t), opaque to the manager */
    void *data;   /* the datum (rill_data_t) */
    int peer;     /* the other rank */
    int peer_gpu; /* PUT: the receiver's GPU (its position among that rank's GPUs) */
    int gpu;      /* set by the manager: its GPU's position; device: its device index */
    int device;
    uint64_t dst_off, sem_off, target; /* zone offsets of the landing buffer and semaphore,
                                        * and the value that says the bytes landed */
    uint64_t cookie;                   /* the engine's own (LAND: the sender's id of the
                                        * send; PUT: whether the receiver was told) */
    uint64_t behind;                   /* PUT: the producer's launch, or 0 (see above) */
    uint64_t flow;                     /* traces: the id of the flow from the producer's
                                        * kernel to the consumer's, the same on both ranks
                                        * (0: none); the manager marks its copy on it */
    bool waited;                       /* the manager's: counted as waiting for room */
    bool reserved;                     /* RESERVE: the landing was reserved */
    bool put_coming;                   /* LAND: the sender's put is enqueued already */
    bool after;                        /* the manager's: the reservation's block had an older
                                        * transfer in flight (its wait goes behind it) */
    struct rill_remote_xfer *early;    /* LAND: the reservation made ahead, or NULL */
    void *entry;                       /* RESERVE: the manager's (the copy's entry) */
    int sem;                           /* RESERVE: the manager's (its semaphore) */
    void (*done)(struct rill_remote_xfer *x, rill_status_t status);
    void (*enqueued)(struct rill_remote_xfer *x); /* PUT: see above (NULL: none) */
} rill_remote_xfer_t;
#define RILL_REMOTE_LAND    1
#define RILL_REMOTE_PUT     2
#define RILL_REMOTE_RESERVE 3

/**
 * What the layer that runs a device's tasks (a GPU manager) offers the runtime. Tasks are
 * passed as void * because this layer sits below the runtime core, which defines them.
 */
typedef struct rill_device_ops {
    /** Take a task whose chosen incarnation runs on this device; returns at once (the
     * device completes the task later). Any thread. */
    void (*submit)(rill_device_t *dev, void *task);
    /** Bring the newest copies this device holds of the task's data home (host memory),
     * then hand the task back to the runtime's scheduler. Any thread. */
    void (*stage_home)(rill_device_t *dev, void *task);
    /** Take a rill_remote_xfer_t (land it here, or put it to a peer's GPU); returns at once.
     * Any thread. NULL where the device has no GPU-direct path. */
    void (*remote)(rill_device_t *dev, rill_remote_xfer_t *x);
    /** For the watchdog: one or more lines on what the device is doing. */
    void (*describe)(rill_device_t *dev, FILE *out);
} rill_device_ops_t;

struct rill_device {
    int index; /* 0 is the CPU; data copies are indexed by it */
    rill_device_type_t type;
    char name[48];
    const rill_device_ops_t *ops; /* NULL for the CPU */
    void *priv;                   /* the owner's state (a GPU manager) */
    double gflops;                /* speed estimate (device choice): per core for the CPU */
    atomic_llong queued_ns;       /* estimated work handed to it and not completed */
    atomic_llong queued_tasks;    /* tasks handed to it and not completed */
};

/** Number of devices (1: the CPU only) and device i. Any thread (the set changes only in
 * rill_init / rill_fini, when no task runs). */
int rill_device_count(void);
rill_device_t *rill_device_get(int index);
const char *rill_device_type_name(rill_device_type_t type);

/** Add a device (at most RILL_MAX_DEVICES in all): *dev_p gets its index. Main thread,
 * before tasks run. RILL_ERR_NO_MEMORY when the table is full. */
rill_status_t rill_device_add(rill_device_type_t type, const char *name,
                              const rill_device_ops_t *ops, void *priv, double gflops,
                              rill_device_t **dev_p);
/** Remove every device but the CPU. Main thread, when no task runs. */
void rill_device_remove_all(void);

/** The CPU's speed estimate per core (device_cpu_gflops). */
double rill_device_cpu_gflops(void);

#endif
