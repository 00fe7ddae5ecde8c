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

struct rill_dtd_class {
    rill_task_class_t tc; /* first: the core's view */
    rill_dtd_body_fn cpu_body;
    char name[64];
};

typedef struct dtd_arg {
    uint16_t kind;     /* RILL_DTD_VALUE, _SCRATCH, _INPUT, _OUTPUT, _INOUT */
    uint16_t affinity; /* RILL_DTD_AFFINITY was given */
    uint32_t size;     /* bytes of a value or scratch; the datum's size for tiles */
    void *ptr;         /* value storage, scratch buffer, or the tile's host pointer */
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

/** What the taskpool knows of one datum's history. Main thread only. */
typedef struct dtd_tracker {
    rill_data_t *data;
    dtd_ref_t last_writer;
    dtd_ref_t *readers; /* readers since the last write */
    int nreaders, cap;
} dtd_tracker_t;

typedef struct dtd_taskpool {
    rill_taskpool_t super;
    rill_hmap_t trackers;  /* rill_data_t* -> dtd_tracker_t* */
    atomic_llong inflight; /* inserted and not completed, for the window */
    long long window;
    bool closed;
    uint64_t inserted, flushed;
} dtd_taskpool_t;

/** Pools and parameters of the DTD layer: set up by rill_init, freed by rill_fini. */
rill_status_t rill_dtd_register_params(void);
rill_status_t rill_dtd_init(rill_context_t *ctx);
void rill_dtd_fini(void);

#endif
