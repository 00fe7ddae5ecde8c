/* Open-addressing hash map with backward-shift deletion. */
#include "hmap.h"

#include <stdlib.h>
#include <string.h>

static inline size_t hash64(uint64_t k)
{
    /* splitmix64 finaliser: spreads pointers and small integers alike */
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ull;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebull;
    k ^= k >> 31;
    return (size_t)k;
}

void rill_hmap_init(rill_hmap_t *m)
{
    m->slots = NULL;
    m->mask = 0;
    m->count = 0;
}

void rill_hmap_fini(rill_hmap_t *m)
{
    free(m->slots);
    rill_hmap_init(m);
}

void *rill_hmap_get(const rill_hmap_t *m, uint64_t key)
{
    if (!m->slots)
        return NULL;
    for (size_t i = hash64(key) & m->mask;; i = (i + 1) & m->mask) {
        const rill_hmap_entry_t *e = &m->slots[i];
        if (!e->val)
            return NULL;
        if (e->key == key)
            return e->val;
    }
}

static rill_status_t grow(rill_hmap_t *m)
{
    size_t cap = m->slots ? 2 * (m->mask + 1) : 64;
    /* malloc and memset, not calloc: a large calloc gets pages of zeroes the first probe
     * only reads, and the first write to each then faulted copy-on-write, every one flushing
     * the other cores' TLBs (a keyed collection growing by a datum per Task Bench task spent
     * 4% of its run in those flushes) */
    rill_hmap_entry_t *slots = malloc(cap * sizeof(*slots));
    if (!slots)
        return RILL_ERR_NO_MEMORY;
    memset(slots, 0, cap * sizeof(*slots));
    rill_hmap_entry_t *old = m->slots;
    size_t oldcap = old ? m->mask + 1 : 0;
    m->slots = slots;
    m->mask = cap - 1;
    for (size_t j = 0; j < oldcap; j++) {
        if (!old[j].val)
            continue;
        size_t i = hash64(old[j].key) & m->mask;
        while (slots[i].val)
            i = (i + 1) & m->mask;
        slots[i] = old[j];
    }
    free(old);
    return RILL_SUCCESS;
}

rill_status_t rill_hmap_put(rill_hmap_t *m, uint64_t key, void *val)
{
    if (!m->slots || 2 * (m->count + 1) > m->mask + 1) {
        rill_status_t s = grow(m);
        if (s != RILL_SUCCESS)
            return s;
    }
    size_t i = hash64(key) & m->mask;
    while (m->slots[i].val && m->slots[i].key != key)
        i = (i + 1) & m->mask;
    if (!m->slots[i].val)
        m->count++;
    m->slots[i].key = key;
    m->slots[i].val = val;
    return RILL_SUCCESS;
}

void *rill_hmap_remove(rill_hmap_t *m, uint64_t key)
{
    if (!m->slots)
        return NULL;
    size_t i = hash64(key) & m->mask;
    while (m->slots[i].val && m->slots[i].key != key)
        i = (i + 1) & m->mask;
    void *val = m->slots[i].val;
    if (!val)
        return NULL;
    m->count--;
    /* backward shift: move later entries of the cluster into the hole when their home
     * slot does not lie cyclically in (hole, j] */
    size_t hole = i;
    for (size_t j = (i + 1) & m->mask; m->slots[j].val; j = (j + 1) & m->mask) {
        size_t home = hash64(m->slots[j].key) & m->mask;
        if (((j - home) & m->mask) >= ((j - hole) & m->mask)) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].val = NULL;
    return val;
}
