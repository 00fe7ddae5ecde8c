/* PTG's runtime internals, shared by the taskpools (ptg.c) and their activations between
 * ranks (ptg_remote.c). Internal. */
#ifndef RILL_PTG_INTERNAL_H
#define RILL_PTG_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core.h"
#include "data_internal.h"
#include "rill/ptg.h"

/* A tile of PTG's own (received from another rank, or NEW): a standalone datum whose host
 * copy owns the bytes (page-locked when GPUs are used), so the devices stage it like a
 * collection's tile; freed with the datum by the last task that holds it (refs). */
typedef struct ptg_buf {
    atomic_int refs;
    rill_data_t data;
} ptg_buf_t;

/* A buf of size bytes (zero-filled when zero) with refs references, or NULL. */
ptg_buf_t *ptg_buf_new(rill_context_t *ctx, size_t size, int refs, bool zero);
/* Its bytes (the host copy). */
void *ptg_buf_bytes(ptg_buf_t *b);
/* Drop a reference: the last one frees the tile. Never on a GPU manager's thread while the
 * datum may have a copy on its GPU (the copy's release waits for that thread): a chore
 * drops it there (ptg_chore_push). */
void ptg_buf_unref(ptg_buf_t *b);

typedef struct ptg_inst {
    rill_task_t super; /* first: the core's view */
    rill_ptg_task_t t;
    rill_data_t *dat[RILL_PTG_MAX_FLOWS]; /* each data flow's datum (NULL: none, control) */
    ptg_buf_t *owned[RILL_PTG_MAX_FLOWS]; /* received and NEW tiles it holds a ref of */
    int64_t key[RILL_PTG_MAX_VARS];       /* the parameters, in the class's list order */
    int cls;
    bool broken;   /* an input could not be had: the body does not run (the task completes) */
    bool wrote;    /* its writes are counted (a GPU ran it; its release runs on a worker) */
    int remaining; /* inputs still to come (under the table's lock) */
    /* the deliveries each flow received (under the table's lock): at most what its input's
     * dependency gives (one; a control gather: its range's tasks) */
    int32_t got[RILL_PTG_MAX_FLOWS];
    /* the flows whose data left for other ranks GPU to GPU when its body was launched
     * (ptg_send_early: the completion's release skips them) */
    uint32_t early_flows;
    uint64_t hash;
    struct ptg_inst *hnext;
} ptg_inst_t;

typedef struct ptg_tp {
    rill_taskpool_t super;
    const rill_ptg_program_t *prog;
    void *globals;
    rill_task_class_t *tcs; /* the core's class of each PTG class */
    /* the classes of the work a GPU's completion hands to the workers (ptg_complete):
     * release, an instance whose outputs need host bytes; chore, bringing a tile home or
     * freeing PTG's tiles */
    rill_task_class_t release_tc, chore_tc;
    rill_spinlock_t lock; /* the table of instances waiting for inputs */
    ptg_inst_t **buckets;
    size_t nbuckets;
    /* instances in the table: changed under the lock, read without it as a hint (locally_idle) */
    atomic_size_t nwaiting;
    atomic_ullong created, completed;
    atomic_ullong sent, received; /* activation messages (termination, ptg_close) */
    /* per class: the tasks of this rank (counted when the creation enumerates the ranges)
     * and those that started (made at the creation, or out of the table with all their
     * inputs: each once, the done set refuses a second), so at the end the difference that
     * is not waiting in the table never received any input (ptg_stuck) */
    uint64_t *nlocal;
    atomic_ullong *nstarted;
    /* the done set: the tasks that left the table (all their inputs came), by key, so a
     * delivery to one of them fails the run instead of making it again (under lock) */
    struct ptg_done **dbuckets;
    size_t ndbuckets, ndone;
    struct ptg_done_block *dblocks; /* where the entries live (freed with the taskpool) */
    uint64_t *nwait_cls;            /* per class: the instances in the table (under lock) */
    /* the creation failed (a range or an expression that every rank computes): the bodies
     * of the tasks it started already do not run */
    atomic_bool cancelled;
    /* the tasks of PTG's moves of a tile GPU to GPU (ptg_remote.c): the send, on the
     * producer's rank, and the receive; and how many of each are in flight (the watchdog) */
    rill_task_class_t gsend_tc, grecv_tc;
    uint32_t prog_id; /* the program's identity in its activations (ptg_remote.c) */
    atomic_int gsends, grecvs;
    struct ptg_gate *gates; /* the data with sends GPU to GPU in flight (under lock) */
    struct ptg_tp *live_next;
} ptg_tp_t;

/* An output to a task of another rank, held until the completing task's release ends:
 * the outputs of one tile to one rank then leave as one activation (send_remote). */
typedef struct ptg_remote {
    int dst, cls, flow;
    int32_t prio; /* the target's priority */
    size_t size;
    rill_data_t *dat; /* the datum (the completing task's flow from_flow; NULL: control) */
    ptg_buf_t *buf;   /* PTG's tile behind it, or NULL */
    int from_flow;
    bool gpu; /* it moves GPU to GPU (out->gpu_flows) */
    int64_t params[RILL_PTG_MAX_VARS];
} ptg_remote_t;

/* The gate of a datum being sent GPU to GPU from this rank (ptg.c, "gates"): the local
 * tasks that write it wait until every put of it ended. Under the table's lock. */
typedef struct ptg_gate {
    struct ptg_gate *next;
    rill_data_t *d;
    int inflight; /* the sends of d not ended, and the releases making them */
    int n, cap;
    ptg_inst_t **held; /* the writers of d that wait (each with one input to come) */
} ptg_gate_t;

struct rill_ptg_out {
    ptg_tp_t *tp;
    ptg_inst_t *from;   /* the completing instance (NULL: a message) */
    rill_task_t *ready; /* instances made ready, pushed together */
    int nready;
    ptg_remote_t *remote; /* nremote outputs to other ranks (in fixed, or malloc'd) */
    int nremote, capremote;
    ptg_remote_t fixed[8];
    /* probe: look, do nothing but the home chores (a GPU ran the task: does its release
     * need host bytes?) */
    bool probe, need_host;
    unsigned errors; /* expr_errors when the release began */
    /* the producer ran on GPU gpu_dev (0: not, or its outputs go home first): the flows
     * whose data go to other ranks GPU to GPU (bits; the probe finds them), and the local
     * writers that wait for those moves */
    int gpu_dev;
    uint32_t gpu_flows;
    /* early: the launch's pass (ptg_send_early): only the outputs to other ranks that go
     * GPU to GPU, sent with their puts behind launch behind on GPU gpu_dev */
    bool early;
    uint64_t behind;
};

/* errors reported by the generated code on this thread (rill_ptg_expr_error): the runtime
 * compares it around its calls to know whether what they computed is usable */
extern _Thread_local unsigned ptg_expr_errors;

/* The sender of a delivery: task (cls, params in list order), its flow flow. */
typedef struct ptg_from {
    int cls, flow;
    const int64_t *params;
} ptg_from_t;

/* Deliver datum d (size bytes; NULL: control) from the sender from to flow of a local
 * instance; buf (may be NULL): PTG's tile behind d, one reference of which is handed to the
 * instance. broken: its input was lost (the body must not run). A delivery that the flow's
 * input does not name (another sender, one more than it takes, a task that ran already)
 * fails the run, naming both sides, and is dropped. An instance that becomes ready waits at
 * the gate of a datum it writes, if there is one. */
void ptg_deliver_local(rill_ptg_out_t *out, int cls, const int64_t *v, const int64_t *params,
                       int flow, rill_data_t *d, size_t size, ptg_buf_t *buf, bool broken,
                       const ptg_from_t *from);

/* Take datum d's gate (made if none; NULL and the run failed: no memory). Any thread. */
ptg_gate_t *ptg_gate_take(ptg_tp_t *tp, rill_data_t *d);
/* Give it back (NULL: nothing); the last lets its writers go. Any thread. */
void ptg_gate_give(ptg_tp_t *tp, ptg_gate_t *g);

/* Push a chore that drops one reference of each of bufs[0 .. nbufs-1] on a worker (a GPU
 * manager's thread must not). */
void ptg_chore_push(ptg_tp_t *tp, ptg_buf_t *const *bufs, int nbufs);

/* A chore into out's ready list: bring datum home to the host (NULL: none) and / or drop
 * one reference of each of bufs[0 .. nbufs-1], on a worker. */
void ptg_chore_new(ptg_tp_t *tp, rill_data_t *home, ptg_buf_t *const *bufs, int nbufs,
                   rill_ptg_out_t *out);

/* "NAME(p0, p1, ...)": a task of class c with the parameters key (list order), for
 * messages. */
void ptg_task_name(char *buf, size_t cap, const rill_ptg_class_t *c, const int64_t *key);

/* The host address of a datum's bytes (this rank's copy; NULL for NULL). */
static inline void *ptg_host_ptr(rill_data_t *d)
{
    rill_data_copy_t *c = d ? rill_data_host_copy(d) : NULL;
    return c ? c->ptr : NULL;
}

/* ptg_remote.c: activations between ranks. */

/* Open PTG's channel on the remote-dependency engine (rill_init, several ranks). */
rill_status_t ptg_remote_init(rill_context_t *ctx);
/* Whether it is open (a taskpool on several ranks needs it). */
bool ptg_remote_ready(void);
/* Forget the activations of taskpools never created here (rill_fini). */
void ptg_remote_fini(void);
/* The taskpool takes activations from now on: those that came before it was created here
 * are taken now (oldest first). */
void ptg_remote_live(ptg_tp_t *tp);
/* It takes none any more (destroyed). */
void ptg_remote_gone(ptg_tp_t *tp);
/* The outputs to other ranks of a completing task (out->remote), sent (GPU to GPU: each
 * send holds its datum's gate until its put ended). */
void ptg_send_remote(rill_ptg_out_t *out);
/* The launch's pass of a release (out->early): send its outputs to other ranks now, their
 * puts behind the body (out->behind on out->gpu_dev); sets from->early_flows when they
 * left (the completion's release skips them). */
void ptg_send_early(rill_ptg_out_t *out);
/* Register PTG's parameters (rill_init). */
rill_status_t rill_ptg_register_params(void);
/* ptg_gpu_early's value. */
bool ptg_early_on(void);
/* Set up tp's classes of GPU-to-GPU moves (creation). */
void ptg_remote_classes(ptg_tp_t *tp);
/* For the watchdog: PTG's GPU-to-GPU moves in flight. */
void ptg_remote_describe(ptg_tp_t *tp, FILE *out);

#endif
