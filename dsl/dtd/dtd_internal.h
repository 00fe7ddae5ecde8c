/* DTD internals: tasks, successor lists, data trackers. Internal. */
#ifndef RILL_DTD_INTERNAL_H
#define RILL_DTD_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "rill/dtd.h"

#include "core.h"
#include "data_internal.h"
#include "hmap.h"
#include "mempool.h"

/** The DTD front end's log component (dtd_verbose). */
extern rill_log_comp_t rill_log_dtd;
#define RILL_LOG_DTD (&rill_log_dtd)

struct rill_dtd_class {
    rill_task_class_t tc; /* first: the core's view */
    rill_dtd_body_fn cpu_body, cuda_body;
    rill_dtd_flops_fn flops;
    char name[64];
    uint64_t name_hash; /* for the insertion-sequence check between ranks */
    /* taskpools that inserted tasks of this class and have not ended (main thread): while
     * > 0 the class may not be destroyed; user_tp is the last one + 1 (0: none yet) */
    int users;
    uint32_t user_tp;
};

typedef struct dtd_arg {
    uint16_t kind;     /* RILL_DTD_VALUE, _SCRATCH, _INPUT, _OUTPUT, _INOUT */
    uint16_t affinity; /* RILL_DTD_AFFINITY was given */
    uint32_t size;     /* bytes of a value or scratch; the datum's size for tiles */
    void *ptr;         /* value storage, scratch buffer, or the tile's address on the device
                        * that runs the task (host copy until a GPU sets its own) */
    rill_data_t *data; /* tiles only */
} dtd_arg_t;

typedef struct dtd_succ {
    struct dtd_task *task;
    struct dtd_succ *next;
} dtd_succ_t;

/* successor list of a completed task: no edge may be added any more */
#define DTD_CLOSED ((dtd_succ_t *)(uintptr_t)1)

/**
 * A DTD task. Its memory is type-stable: it comes from pools that live as long as the
 * DTD layer, and only the inserting (main) thread hands it out again. That lets data
 * trackers keep plain pointers: a tracker's reference (task, serial) is still the same
 * task while task->serial equals the serial it recorded; a completed task has its
 * successor list closed before its serial is cleared.
 */
typedef struct dtd_task {
    rill_task_t super;    /* first: the core's view (super.next is the pool link) */
    atomic_ullong serial; /* insertion number; 0 once the task is freed */
    atomic_int deps;      /* unmet dependencies + 1 while being inserted */
    _Atomic(dtd_succ_t *) succs;
    struct rill_dtd_class *cls;
    int nargs;
    int size_class; /* pool index */
    void *extra;    /* malloc'd storage for values/scratch too large to sit inline */
    dtd_arg_t args[];
} dtd_task_t;

/** A reference to a task that may have completed since (see dtd_task_t). */
typedef struct dtd_ref {
    dtd_task_t *task;
    uint64_t serial;
} dtd_ref_t;

/**
 * What the taskpool knows of one datum. Every rank keeps the same owner/version
 * history (every rank inserts the same tasks); the local part (last_writer, readers,
 * local_ptr) orders this rank's own accesses to its copy. Main thread only.
 */
#define DTD_READERS_IN 4 /* readers a tracker holds without an allocation */
#define DTD_SLAB       256

typedef struct dtd_tracker {
    rill_data_t *data;
    dtd_ref_t last_writer;
    dtd_ref_t *readers; /* readers since the last write (in readers_in while they fit) */
    int nreaders, cap;
    /* distributed history, identical on every rank */
    int owner;        /* rank that holds (or will hold) the latest version */
    uint32_t version; /* writes inserted so far in this taskpool */
    /* this rank's copy: the core's host copy of the datum (rill_data_host_ensure) holds its
     * bytes; these say which version of the history it holds, or will hold once the tasks
     * inserted so far ran (the core's copy versions count completed writes instead) */
    bool have_local;  /* this rank holds (or will hold) local_version */
    bool gpu_written; /* a local task with a CUDA body writes it: brought home at the end */
    bool gpu_version; /* the writer of `version` may run on a GPU (class_may_gpu in dtd.c) */
    bool discarded;   /* rill_dtd_data_discard after its last access: the end moves nothing */
    uint32_t local_version;
    uint64_t *sent; /* bit r: rank r was sent `version` by this rank (sent_in: 64 ranks) */
    uint64_t sent_in;
    dtd_ref_t readers_in[DTD_READERS_IN];
} dtd_tracker_t;

/* Trackers are made in slabs of DTD_SLAB (a taskpool's, freed with it): one allocation per
 * DTD_SLAB data instead of per datum. */
typedef struct dtd_slab {
    struct dtd_slab *next;
    size_t used;
    dtd_tracker_t tr[];
} dtd_slab_t;

typedef struct dtd_taskpool {
    rill_taskpool_t super;
    rill_hmap_t trackers;  /* rill_data_t* -> dtd_tracker_t* */
    dtd_tracker_t **order; /* trackers in creation order (the same on every rank) */
    dtd_slab_t *slabs;     /* where the trackers live, the newest first */
    size_t norder, cap_order;
    /* the window: tasks made here (main thread) less tasks completed (any thread; its own
     * cache line, so the workers' adds do not share one with the main thread's fields) read
     * by the main thread only when its last reading says the window may be full */
    atomic_ullong made; /* (written by the main thread alone: no read-modify-write) */
    uint64_t done_seen;
    long long window;
    /* pending counts taken ahead for the tasks the main thread makes (DTD_CREDIT at a time:
     * one atomic add per batch instead of per task), given back with the insertion hold */
    long long credit;
    char pad_done[64]; /* (the struct is calloc'd: padding, not _Alignas, keeps done's line) */
    atomic_ullong done;
    char pad_after[64];
    bool closed;
    bool distributed; /* more than one rank */
    int rank, nranks;
    uint64_t inserted;
    uint64_t hash; /* running hash of the insertion sequence */
    /* the divergence check (dtd_seq.c; main thread): events (tasks, flushes, discards)
     * so far, the hash after each (low 32 bits), peers' checkpoints not settled yet */
    uint64_t seq, announced_seq;
    uint32_t *hist;
    size_t hist_cap;
    bool hist_lost, announced;
    struct dtd_seq_slot *pend;  /* 2 per rank: earliest checkpoint, final one */
    int finals;                 /* peers whose final checkpoint matched */
    uint64_t reminded_ns;       /* the close's last reminder to the peers (dtd_seq.c) */
    rill_dtd_class_t **classes; /* classes it inserted tasks of (each counted once) */
    int nclasses, cap_classes;
} dtd_taskpool_t;

/** The divergence check between ranks (dtd_seq.c): every event that changes tp->hash is
 * recorded; a rank blocked in its window announces its checkpoint, a closing rank its final
 * one; dtd_seq_check compares what peers sent and ends the job on a difference. */
#define DTD_SEQ_HASH0 1469598103934665603ull /* FNV-1a offset: the hash of no event */
typedef struct dtd_seq_slot {
    bool valid;
    uint64_t seq, hash;
} dtd_seq_slot_t;
rill_status_t dtd_seq_init(rill_context_t *ctx);
void dtd_seq_fini(void);
void dtd_seq_record(dtd_taskpool_t *tp);
void dtd_seq_announce(dtd_taskpool_t *tp, bool final);
bool dtd_seq_pending(void);
void dtd_seq_check(dtd_taskpool_t *tp);
bool dtd_seq_all_final(void *tp); /* a rill_context_wait condition: every peer's final matched */
void dtd_seq_forget(dtd_taskpool_t *tp);

/** The executed graph in DOT (dtd_dot.c), recorded by the inserting thread when
 * profile_dot is set: tasks, local edges, remote edges (flow = the transfer's id). */
extern bool dtd_dot_on;
rill_status_t dtd_dot_register_params(void);
rill_status_t dtd_dot_init(int rank); /* creates the file: RILL_ERR_IO if it cannot */
void dtd_dot_task(uint64_t serial, const char *cls, uint32_t tp_id);
void dtd_dot_edge(uint64_t pred, uint64_t succ);
void dtd_dot_remote(uint64_t serial, uint64_t flow, bool out, int peer);
rill_status_t dtd_dot_finish(void); /* RILL_ERR_IO: the graph was lost (said) */

/** Pools and parameters of the DTD layer: set up by rill_init, freed by rill_fini. */
rill_status_t rill_dtd_register_params(void);
rill_status_t rill_dtd_init(rill_context_t *ctx);
rill_status_t rill_dtd_fini(void); /* RILL_ERR_IO: the DOT graph was lost */

#endif
