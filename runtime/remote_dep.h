/* The remote-dependency engine: moving one version of a datum from the rank that holds it
 * to a rank whose tasks read it, for every front end. It owns the activations (the sender's
 * word that a version is ready, with the bytes inside when they are small), the route of
 * each transfer (host memory through the comm engine, or GPU to GPU through the GPU
 * managers' landing protocol: reservation, announcement, put, semaphore), the matching of
 * activations with the receives waiting for them, and the counting the comm engine's
 * termination needs. docs/architecture.md ("Remote dependencies") gives the protocol and
 * its ordering arguments. Internal.
 *
 * A front end moves a version with two tasks of its own graph, a send on the holder and a
 * receive on the reader's rank. Each carries a rill_rdep_t (in the task's storage, alive
 * as long as the task); the front end fills it at insertion (rill_rdep_send_init,
 * rill_rdep_recv_expect), runs the engine from the tasks' hooks (rill_rdep_send_run,
 * rill_rdep_recv_run), and the engine completes the task (rill_task_complete) when the
 * transfer ends. A version is named by (taskpool id, collection id, key, version): both
 * ranks name it alike (every rank keeps the same history). */
#ifndef RILL_REMOTE_DEP_H
#define RILL_REMOTE_DEP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core.h"

/** The engine's state of one transfer, in its send's or receive's storage. */
typedef struct rill_rdep {
    uint32_t magic;    /* RILL_RDEP_SEND or RILL_RDEP_RECV (checks pointers a peer echoes) */
    int peer;          /* source of a receive, destination of a send */
    uint32_t version;  /* the version moved (the name: tp, collection, key, version) */
    bool gpu;          /* it moves GPU to GPU (rill_rdep_route: the same answer on both ranks) */
    bool early_ok;     /* receive: its landing may be reserved ahead and announced */
    rill_task_t *task; /* the front end's send or receive */
    rill_data_t *data; /* the datum */
    atomic_int *deps;  /* receive: the front end's count of its unmet dependencies */
    struct rill_rdep_act *act;      /* receive: the activation, once matched */
    struct rill_remote_xfer *early; /* receive: its landing reserved ahead (GPU direct) */
    bool announced; /* receive sent GPU to GPU: the sender was told (early, or none); under
                     * the engine's lock */
    /* send whose put was handed to the producer's GPU behind its body (rill_rdep_launched):
     * 2 when that was decided (under the engine's lock), then the put's end and the send's
     * hook each drop one and the last ends the send with pre_status (the put's, written
     * before its drop) */
    atomic_int pre;
    rill_status_t pre_status;
    /* the trace flow id of the move (rill_rdep_flow_id's), when the front end names the
     * version by a message of its channel rather than by (tp, collection, key, version) on
     * both ranks (0: computed from those) */
    uint64_t flow;
    /* send: its version's producer was launched on GPU behind_dev (launch number behind,
     * 0: none) when the send began: the put goes behind it (rill_rdep_send_behind) */
    int behind_dev;
    uint64_t behind;
} rill_rdep_t;
#define RILL_RDEP_SEND 0x52445331u /* "RDS1" */
#define RILL_RDEP_RECV 0x52445231u /* "RDR1" */

/** Register the tags of the engine's messages and create its tables (rill_init, every
 * rank, after the comm engine). */
rill_status_t rill_rdep_init(rill_context_t *ctx);
/** Free what is left (rill_fini). */
void rill_rdep_fini(void);

/** Whether the version of d a rank holds now moves GPU to GPU to or from rank peer:
 * gpu_side says its writer or the reader on the other side may run on a GPU; both ranks'
 * GPUs reach each other (rill_info --peers) and d has at least comm_gpu_direct_min bytes.
 * Both ranks answer alike from the same history. */
bool rill_rdep_route(rill_context_t *ctx, const rill_data_t *d, int peer, bool gpu_side);

/** The trace flow id of moving version of (tp, d) to rank dst: the same on both ranks.
 * (^ 1: the flow from the producer's kernel to the readers' kernels, GPU to GPU.) */
uint64_t rill_rdep_flow_id(uint32_t tp_id, const rill_data_t *d, uint32_t version, int dst);

/** Fill x for send task of version of d to rank peer (gpu: rill_rdep_route's answer).
 * Main thread, at insertion. */
void rill_rdep_send_init(rill_rdep_t *x, rill_task_t *task, rill_data_t *d, int peer,
                         uint32_t version, bool gpu);

/** What rill_rdep_recv_expect found. */
typedef enum rill_rdep_expect {
    RILL_RDEP_EXPECTED = 0, /* the activation is expected: deps holds one more for it */
    RILL_RDEP_ARRIVED,      /* it arrived first: x->act holds it */
    RILL_RDEP_RESERVED,     /* expected, GPU to GPU: its landing is being reserved ahead */
} rill_rdep_expect_t;

/** Fill x for receive task of version of d from rank peer (gpu: the route; early: its
 * landing may be reserved ahead and announced; deps: the front end's count of the task's
 * unmet dependencies). Main thread, at insertion, before the task has edges. */
void rill_rdep_recv_init(rill_rdep_t *x, rill_task_t *task, rill_data_t *d, int peer,
                         uint32_t version, bool gpu, bool early, atomic_int *deps);

/**
 * Receive x, at insertion: wait for its activation: match one that arrived, or record the
 * expectation (one more dependency in *x->deps, counted for the comm engine's
 * termination). When *deps is 1 (no local task uses the datum any more) and it comes GPU
 * to GPU, its landing is reserved at once. RILL_ERR_NO_MEMORY: nothing recorded (the
 * receive must not run its hook). Main thread.
 */
rill_status_t rill_rdep_recv_expect(rill_rdep_t *x, rill_rdep_expect_t *what);

/** For the front end's completion of a receive's predecessor: drop one of x's
 * dependencies (returns how many are left). When only the activation is left and the
 * version comes GPU to GPU, reserve its landing now. Any thread. */
int rill_rdep_recv_dep_done(rill_rdep_t *x);

/** Whether the receive's hook needs the host copy of the datum (not when it lands in GPU
 * memory), and the send's (not when it leaves from GPU memory). */
bool rill_rdep_recv_needs_host(const rill_rdep_t *x);
bool rill_rdep_send_needs_host(const rill_rdep_t *x);

/** The receive's hook: land the version in host (the datum's host copy) or in a GPU.
 * RILL_HOOK_ASYNC: the engine completes the task. Worker. */
rill_hook_status_t rill_rdep_recv_run(rill_rdep_t *x, void *host);
/** The send's hook: tell the peer the version is ready (the bytes inside, exposed for its
 * GET from host, or put GPU to GPU). RILL_HOOK_ASYNC: the engine completes the task. */
rill_hook_status_t rill_rdep_send_run(rill_rdep_t *x, void *host);

/** The producer of send x's version was just enqueued on GPU dev (launch number launch)
 * and x waits for nothing else: put behind the body there when the receiver's landing is
 * announced (now or while the body is in flight). Manager thread. */
void rill_rdep_launched(rill_rdep_t *x, int dev, uint64_t launch);

/* ---------------------------------------------------------------- front-end channels
 *
 * For a front end that names the targets of an activation itself (PTG: the tasks, by class
 * and parameters) and for its own control words (DTD's insertion-sequence check). The
 * engine carries a header of the front end's and the tile: inside the activation when it
 * is small (comm_short_limit), else one copy exposed for the receivers' GETs. */

/** A front end's handler of its channel's messages (comm thread): msg is valid during the
 * call only (keep a copy to take it later: rill_rdep_in_parse reads one). */
typedef void (*rill_rdep_in_fn)(int src, const void *msg, size_t len, void *arg);

/** Open a channel (rill_init, every rank in the same order); *id names it. */
rill_status_t rill_rdep_channel_open(rill_context_t *ctx, rill_rdep_in_fn fn, void *arg, int *id);

/** The most bytes of a front end's header in one message. */
size_t rill_rdep_header_max(void);

/** A message of a channel, parsed (pointers into the message). */
typedef struct rill_rdep_in {
    int src;
    const void *hdr; /* the front end's header */
    size_t hdr_len;
    uint64_t size;      /* the tile's bytes (0: none) */
    int32_t prio;       /* the sender's priority for it (its GET's too) */
    const void *inside; /* the tile, inside the message; NULL when it must be fetched */
    uint64_t handle;    /* the exposed copy to fetch (rill_rdep_fetch), or with gpu the send */
    bool gpu;           /* the tile comes GPU to GPU: a receive lands it (rill_rdep_recv_gpu) */
    uint64_t flow;      /* with gpu: the move's trace flow id */
} rill_rdep_in_t;

/** Parse a channel's message from rank src; false when it is malformed (the lengths do not
 * add up). */
bool rill_rdep_in_parse(int src, const void *msg, size_t len, rill_rdep_in_t *in);

/**
 * Send n messages on channel id to rank dst, the i-th with header hdrs[i] (lens[i] bytes,
 * at most rill_rdep_header_max), all for one tile of size bytes (tile NULL: none): inside
 * each when small, else one copy exposed for their n GETs (the caller may write the tile
 * as soon as this returns). *nsent: the messages that left (the front end's termination
 * counts them). Any thread.
 */
rill_status_t rill_rdep_channel_send(rill_context_t *ctx, int id, int dst, int n,
                                     const void *const *hdrs, const size_t *lens, const void *tile,
                                     uint64_t size, int32_t prio, int *nsent);

/** The most bytes of a front end's header in a message that carries no tile
 * (rill_rdep_channel_send_gpu). */
size_t rill_rdep_header_max_gpu(void);

/**
 * Send one message on channel id to x's peer, with header hdr (len bytes, at most
 * rill_rdep_header_max_gpu), for the version of x's datum that moves GPU to GPU: x is a
 * send (rill_rdep_send_init, gpu true; its version names it in traces and the watchdog
 * only). The receiver lands it in its GPU (rill_rdep_recv_gpu, then rill_rdep_recv_run
 * asks for the bytes), this rank's GPU puts the newest copy there, and the engine
 * completes x's task once the put ended (rill_task_complete, manager or comm thread): the
 * front end keeps the bytes unchanged until then. Any thread.
 */
rill_status_t rill_rdep_channel_send_gpu(rill_context_t *ctx, int id, rill_rdep_t *x,
                                         const void *hdr, size_t len, int32_t prio);

/** Send x (before rill_rdep_channel_send_gpu) is of a version whose producer was just
 * enqueued on GPU dev (launch number launch): the receiver's request may come while the
 * body is in flight, and the put then goes behind it on that GPU (device.h, behind). */
void rill_rdep_send_behind(rill_rdep_t *x, int dev, uint64_t launch);

/** Receive x (rill_rdep_recv_init, gpu true, early false, deps NULL) takes a message that
 * came GPU to GPU (in->gpu): x's task then runs rill_rdep_recv_run (host NULL), which
 * lands the tile in a GPU of this rank, and the engine completes the task with its device
 * set to that GPU, whose copy of x's datum holds the bytes (the front end marks it
 * written: rill_data_wrote). RILL_ERR_NO_MEMORY: nothing taken (the sender's send waits:
 * the caller fails the run). */
rill_status_t rill_rdep_recv_gpu(rill_rdep_t *x, const rill_rdep_in_t *in);

/** Bring in's tile into buf (in->size bytes): when it was inside, copied now (*async
 * false); else fetched, and done(arg, status) is called once it landed (*async true). */
rill_status_t rill_rdep_fetch(rill_context_t *ctx, const rill_rdep_in_t *in, void *buf,
                              void (*done)(void *arg, rill_status_t status), void *arg,
                              bool *async);

/** End the run on every rank (a front end found the ranks' graphs diverge). */
void rill_rdep_abort(rill_context_t *ctx, int code);

/** The collectives this rank started (rill_fini's final barrier included). Any thread. */
uint64_t rill_rdep_collectives(rill_context_t *ctx);
/** true while this rank is inside a collective: *count its number, *what what it is (exact
 * on the comm thread: a front end's channel handler). */
bool rill_rdep_in_collective(rill_context_t *ctx, uint64_t *count, const char **what);
/** How many taskpools this rank created (their ids are 0 .. that - 1, the same on every rank
 * that creates the same ones in the same order). Any thread. */
uint32_t rill_rdep_taskpools_created(rill_context_t *ctx);

/** For the watchdog: the receives of taskpool tp_id waiting for their activations and its
 * GPU-to-GPU sends and announcements in flight (the first few of each), one line each;
 * returns how many receives it listed. Any thread. */
int rill_rdep_describe(FILE *out, uint32_t tp_id);

#endif
