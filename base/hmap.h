/* A hash map from 64-bit keys to non-NULL pointers (open addressing, linear probing).
 * Not thread-safe. Internal. */
#ifndef RILL_BASE_HMAP_H
#define RILL_BASE_HMAP_H

#include <stddef.h>
#include <stdint.h>

#include "rill/status.h"

typedef struct rill_hmap_entry {
    uint64_t key;
    void *val; /* NULL: empty slot */
} rill_hmap_entry_t;

typedef struct rill_hmap {
    rill_hmap_entry_t *slots;
    size_t mask; /* capacity - 1 (a power of two) */
    size_t count;
} rill_hmap_t;

void rill_hmap_init(rill_hmap_t *m);
void rill_hmap_fini(rill_hmap_t *m);
/** The value of key, or NULL. */
void *rill_hmap_get(const rill_hmap_t *m, uint64_t key);
/** Insert or replace (val != NULL). RILL_ERR_NO_MEMORY when growing fails. */
rill_status_t rill_hmap_put(rill_hmap_t *m, uint64_t key, void *val);
/** Remove key; returns its value or NULL. */
void *rill_hmap_remove(rill_hmap_t *m, uint64_t key);
/** Visit every entry (the map must not change during the walk). */
#define RILL_HMAP_FOREACH(m, e)                                                                    \
    for (rill_hmap_entry_t *e = (m)->slots; (m)->slots && e <= (m)->slots + (m)->mask; e++)        \
        if (e->val)

#endif
