/* Data, copies and collections as the runtime sees them. Internal. */
#ifndef RILL_DATA_INTERNAL_H
#define RILL_DATA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core.h"
#include "hmap.h"

/* The largest datum: 2^46 bytes (64 TiB), more than a process can map on common machines;
 * a larger size is an argument error (it made collections whose every datum failed). */
#define RILL_DATUM_MAX ((size_t)1 << 46)

typedef enum rill_coherency {
    RILL_COHERENCY_INVALID = 0, /* no bytes, or stale ones: never read from it */
    RILL_COHERENCY_SHARED,      /* loaded from another copy; valid while its version is current */
    RILL_COHERENCY_OWNED,       /* written here last: the copy others are refreshed from */
    RILL_COHERENCY_EXCLUSIVE,   /* a task is writing it right now: the other copies are stale */
} rill_coherency_t;

/**
 * One device's copy of a datum: the single truth every layer reads and updates (DTD, the
 * comm engine, the GPU managers). A copy holds the newest bytes when its coherency is not
 * INVALID and its version equals the datum's version; the datum's version is bumped by
 * each completed write (rill_data_wrote), which sets the writer's copy to it. Transfers set
 * the destination's version only once the bytes have landed.
 *
 * Who writes what: the host copy's fields by whoever completes a CPU write or lands a
 * transfer into host memory; a GPU copy's fields only by that GPU's manager. Other threads
 * read versions and coherency (atomics) and, to read a GPU copy's bytes from another GPU,
 * take a reader: readers counts the tasks and transfers using the copy; its manager evicts
 * a copy only by moving readers from 0 to -1 (so a reader that got in first keeps it, and a
 * reader that comes later sees -1 or INVALID and looks elsewhere).
 */
typedef struct rill_data_copy {
    rill_data_t *data;
    void *ptr;             /* host or device address; NULL while a GPU copy has no block */
    int device;            /* index in rill_device_get(); 0 = host */
    atomic_ullong version; /* the datum's version its bytes are */
    atomic_int coherency;  /* rill_coherency_t */
    atomic_int readers;    /* tasks and transfers reading it; -1 while being evicted */
    atomic_int landing;    /* host copy: 1 while a GPU's copy into it is in flight (one at a
                            * time: two could mix their bytes); taken by CAS 0 -> 1 */
    bool owns_ptr;         /* ptr is freed with the copy (host copies) */
    bool pinned;           /* host copy page-locked for the GPUs (rill_cuda_host_register);
                            * set by rill_data_copy_pin with atomic accesses */
    bool pin_tried;        /* rill_data_copy_pin tried to page-lock it (atomic accesses) */
    void *dev_priv;        /* the device owner's bookkeeping (a GPU manager's LRU entry) */
} rill_data_copy_t;

struct rill_data {
    rill_context_t *ctx;
    rill_collection_t *dc; /* NULL for standalone data */
    uint64_t key;          /* key in dc (a local serial number for standalone data) */
    int home_rank;
    size_t size;
    atomic_ullong version; /* bumped by each completed write on this rank */
    /* per device; a copy, once made, lives as long as the datum (its block may come and
     * go): set with release by its owner, read with acquire by the others */
    _Atomic(rill_data_copy_t *) copies[RILL_MAX_DEVICES];
    /* taskpools that use the datum and have not ended (main thread): while > 0 the datum
     * may not be destroyed; user_tp names the last one, for the error */
    int users;
    uint32_t user_tp;
    int advised; /* the GPU (device index) the datum's writers should run on, 0: none */
    /* a front end's record of the datum for one taskpool (DTD: its tracker), kept here so
     * that finding it costs no lookup: fe_record is taskpool fe_mark - 1's (0: none). The
     * front end takes a free slot and frees it when its taskpool ends. Main thread */
    uint32_t fe_mark;
    void *fe_record;
    /* the taskpool (id + 1) that writes the datum and has not ended, 0: none. Tasks of two
     * taskpools are not ordered against each other, so while one writes the datum no other
     * may use it (DTD refuses the access). Main thread */
    uint32_t fe_writer;
};

struct rill_collection {
    rill_context_t *ctx;
    uint32_t id; /* creation index: names the collection across ranks */
    size_t datum_size;
    rill_collection_rank_fn rank_of;
    void *arg;
    rill_hmap_t data; /* key -> rill_data_t*, created on first use */
    /* guards data: DTD looks data up on the main thread, PTG on the thread that makes a
     * task instance (a worker, the comm thread) */
    pthread_mutex_t lock;
    int users;        /* taskpools that use some datum of it and have not ended */
    uint32_t user_tp; /* the last of them */
    bool scratch;     /* rill_collection_set_scratch: home storage neither zeroed nor pinned */
};

/** A taskpool starts / stops using a datum (and its collection): while used, destroying
 * it is refused with RILL_ERR_BUSY. Main thread. */
void rill_data_use(rill_data_t *data, uint32_t tp_id);
void rill_data_unuse(rill_data_t *data);

/** Set up a datum's core fields; with ptr, its host copy (borrowed, or owned when
 * owns is true). */
rill_status_t rill_data_init(rill_data_t *data, rill_context_t *ctx, rill_collection_t *dc,
                             uint64_t key, int home_rank, void *ptr, size_t size, bool owns);
/** The same with a host copy that rill_host_tile_alloc page-locked (pinned). */
rill_status_t rill_data_init_pinned(rill_data_t *data, rill_context_t *ctx, rill_collection_t *dc,
                                    uint64_t key, int home_rank, void *ptr, size_t size, bool owns,
                                    bool pinned);
void rill_data_fini(rill_data_t *data);

/** Device dev's copy (NULL when it never had one). Any thread. */
static inline rill_data_copy_t *rill_data_copy(const rill_data_t *data, int dev)
{
    return atomic_load_explicit(&data->copies[dev], memory_order_acquire);
}

/** The host copy (NULL when this rank has none). */
static inline rill_data_copy_t *rill_data_host_copy(const rill_data_t *data)
{
    return rill_data_copy(data, 0);
}

/** Whether copy c holds the datum's newest bytes. Any thread; stable while a task that
 * accesses the datum is ready or running (no write can complete meanwhile). */
static inline bool rill_data_copy_current(const rill_data_t *data, const rill_data_copy_t *c)
{
    return c &&
           atomic_load_explicit(&c->coherency, memory_order_acquire) != RILL_COHERENCY_INVALID &&
           atomic_load_explicit(&c->version, memory_order_acquire) ==
               atomic_load_explicit(&data->version, memory_order_acquire);
}

/** A write of the datum completed on device dev: bump the version and make dev's copy the
 * one that holds it (OWNED). Called by the task's completion, before its successors are
 * released (their acquire of the dependency sees it). Returns the new version. */
uint64_t rill_data_wrote(rill_data_t *data, int dev);

/** This rank's host copy, allocated (owned, page-locked when GPUs are used) when the datum
 * has none yet: a remote datum's buffer. NULL when out of memory. Main thread. */
rill_data_copy_t *rill_data_host_ensure(rill_data_t *data);

/** A taskpool starts / stops using a whole collection (PTG: its globals): destroying it is
 * refused with RILL_ERR_BUSY meanwhile. Main thread. */
void rill_collection_use(rill_collection_t *dc, uint32_t tp_id);
void rill_collection_unuse(rill_collection_t *dc);

/** The datum of tile (i, j) when this rank holds it, else NULL. Any thread (fixed after
 * rill_matrix_create). */
rill_data_t *rill_matrix_tile_local(rill_matrix_t *A, int i, int j);

/** Allocate / free host memory for tiles of size bytes: 64-byte aligned, or page-aligned and
 * page-locked when GPUs are used (*pinned says which; page-locked buffers are kept for reuse
 * by later allocations of the same size, up to a bound). Any thread. */
void *rill_host_tile_alloc(size_t size, bool *pinned);
/** The same, not page-locked now (rill_data_copy_pin does it on a first transfer) unless
 * it reuses a kept page-locked buffer (then *pinned). */
void *rill_host_tile_alloc_lazy(size_t size, bool *pinned);
void rill_host_tile_free(void *ptr, size_t size, bool pinned);
/** Page-lock host copy c's buffer if it is not (another rank's datum gets a pageable buffer
 * at first; a GPU's manager calls this before it copies through it). Any thread. */
void rill_data_copy_pin(rill_data_copy_t *c);
/** Give the kept page-locked buffers back (rill_fini). */
void rill_host_tile_cache_drain(void);

/** A GPU copy's bookkeeping is freed with the datum through this hook of its owner (the GPU
 * managers set it; NULL: nothing to free). */
extern void (*rill_data_copy_release_hook)(rill_data_copy_t *c);

/* The grid row of tile (i, j) of a matrix of distribution dist over a P x Q grid (its rank:
 * that row times Q plus j % Q); also the GPU of a rank's tile, from its local coordinates,
 * over an ngpus x 1 grid (rill_matrix_advise_gpus). The maps are in rill/data.h. */
int rill_matrix_grid_row(rill_matrix_dist_t dist, int i, int j, int P, int Q);

#endif
