/* Fixed-size object pools with per-thread caches, for hot-path allocations (tasks,
 * dependency nodes). Internal. */
#ifndef RILL_BASE_MEMPOOL_H
#define RILL_BASE_MEMPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "rill/status.h"
#include "sync.h"

#define RILL_MEMPOOL_MAX 32 /* pools alive at once in a process */

/**
 * Elements are carved from slabs owned by the pool; each thread keeps a private free
 * list and exchanges batches with the pool's shared list under a spinlock. Destroying
 * the pool frees every slab, wherever its elements are (threads' caches included:
 * they are recognised as stale by the pool's generation and dropped).
 */
typedef struct rill_mempool {
    size_t elem_size;
    int slot;     /* index of this pool's per-thread cache */
    uint64_t gen; /* unique per pool instance */
    rill_spinlock_t lock;
    void *shared;        /* shared free list (linked through the first word) */
    size_t shared_count; /* elements in it */
    void *slabs;         /* list of slabs (linked through the first word) */
} rill_mempool_t;

/** Create a pool of elements of elem_size bytes (rounded up to 16). Main thread. */
rill_status_t rill_mempool_init(rill_mempool_t *pool, size_t elem_size);
/** Free every slab. No element may be used afterwards. Main thread. */
void rill_mempool_fini(rill_mempool_t *pool);
/** Any thread. NULL when out of memory. */
void *rill_mempool_alloc(rill_mempool_t *pool);
/** Any thread: the element goes to the calling thread's cache. */
void rill_mempool_free(rill_mempool_t *pool, void *elem);

#endif
