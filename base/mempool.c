/* Object pools: per-thread caches over a shared list, memory carved from slabs. */
#include "mempool.h"

#include <stdlib.h>
#include <string.h>

#define SLAB_BYTES (64 * 1024)
#define BATCH      64  /* elements moved between a cache and the shared list */
#define CACHE_MAX  256 /* a cache above this gives a batch back */

typedef struct tl_cache {
    uint64_t gen;
    void *head;
    int count;
} tl_cache_t;

static _Thread_local tl_cache_t tl_caches[RILL_MEMPOOL_MAX];
static atomic_uint_least64_t next_gen = 1;
static atomic_uint used_slots; /* bit i: slot i in use */

static inline void *next_of(void *e)
{
    void *n;
    memcpy(&n, e, sizeof(n));
    return n;
}

static inline void set_next(void *e, void *n)
{
    memcpy(e, &n, sizeof(n));
}

rill_status_t rill_mempool_init(rill_mempool_t *pool, size_t elem_size)
{
    memset(pool, 0, sizeof(*pool));
    pool->elem_size = (elem_size + 15) & ~(size_t)15;
    if (pool->elem_size < 16)
        pool->elem_size = 16;
    unsigned used = atomic_load(&used_slots);
    for (;;) {
        int slot = -1;
        for (int i = 0; i < RILL_MEMPOOL_MAX; i++)
            if (!(used & (1u << i))) {
                slot = i;
                break;
            }
        if (slot < 0)
            return RILL_ERR_NO_MEMORY;
        if (atomic_compare_exchange_weak(&used_slots, &used, used | (1u << slot))) {
            pool->slot = slot;
            break;
        }
    }
    pool->gen = atomic_fetch_add(&next_gen, 1);
    rill_spinlock_init(&pool->lock);
    return RILL_SUCCESS;
}

void rill_mempool_fini(rill_mempool_t *pool)
{
    void *s = pool->slabs;
    while (s) {
        void *n = next_of(s);
        free(s);
        s = n;
    }
    pool->slabs = NULL;
    pool->shared = NULL;
    tl_cache_t *c = &tl_caches[pool->slot];
    if (c->gen == pool->gen)
        memset(c, 0, sizeof(*c));
    atomic_fetch_and(&used_slots, ~(1u << pool->slot));
}

/* Refill the shared list with a new slab; pool->lock held. */
static int grow_locked(rill_mempool_t *pool)
{
    size_t per = (SLAB_BYTES - 16) / pool->elem_size;
    if (per < 1)
        per = 1;
    char *slab = malloc(16 + per * pool->elem_size);
    if (!slab)
        return -1;
    set_next(slab, pool->slabs);
    pool->slabs = slab;
    for (size_t i = 0; i < per; i++) {
        void *e = slab + 16 + i * pool->elem_size;
        set_next(e, pool->shared);
        pool->shared = e;
    }
    pool->shared_count += per;
    return 0;
}

void *rill_mempool_alloc(rill_mempool_t *pool)
{
    tl_cache_t *c = &tl_caches[pool->slot];
    if (c->gen != pool->gen) { /* stale cache of an earlier pool in this slot */
        c->gen = pool->gen;
        c->head = NULL;
        c->count = 0;
    }
    if (!c->head) {
        rill_spinlock_lock(&pool->lock);
        if (!pool->shared && grow_locked(pool) != 0) {
            rill_spinlock_unlock(&pool->lock);
            return NULL;
        }
        /* take up to BATCH elements as one chain */
        void *first = pool->shared, *last = first;
        int n = 1;
        while (n < BATCH && next_of(last)) {
            last = next_of(last);
            n++;
        }
        pool->shared = next_of(last);
        pool->shared_count -= (size_t)n;
        rill_spinlock_unlock(&pool->lock);
        set_next(last, NULL);
        c->head = first;
        c->count = n;
    }
    void *e = c->head;
    c->head = next_of(e);
    c->count--;
    return e;
}

void rill_mempool_free(rill_mempool_t *pool, void *elem)
{
    tl_cache_t *c = &tl_caches[pool->slot];
    if (c->gen != pool->gen) {
        c->gen = pool->gen;
        c->head = NULL;
        c->count = 0;
    }
    set_next(elem, c->head);
    c->head = elem;
    if (++c->count <= CACHE_MAX)
        return;
    /* give a batch back so a producer thread (the inserting main thread) can reuse it */
    void *first = c->head, *last = first;
    for (int i = 1; i < BATCH; i++)
        last = next_of(last);
    c->head = next_of(last);
    c->count -= BATCH;
    rill_spinlock_lock(&pool->lock);
    set_next(last, pool->shared);
    pool->shared = first;
    pool->shared_count += BATCH;
    rill_spinlock_unlock(&pool->lock);
}
