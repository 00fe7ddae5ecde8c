/* The zone allocator. */
#include "zone.h"

#include <stdbool.h>
#include <stdlib.h>

#include "hmap.h"
#include "device.h"

/* A segment: a run of the zone, free or allocated, in address order. */
typedef struct zone_seg {
    struct zone_seg *prev, *next; /* neighbours by address */
    uintptr_t addr;
    size_t size;
    bool used;
} zone_seg_t;

struct rill_zone {
    uintptr_t base;
    size_t size, align, used, nblocks;
    zone_seg_t *head;
    rill_hmap_t blocks; /* address -> allocated segment */
};

rill_status_t rill_zone_create(uintptr_t base, size_t size, size_t align, rill_zone_t **zone_p)
{
    if (!zone_p || !align || (align & (align - 1)) || (base & (align - 1)) || size < align) {
        RILL_ERROR(RILL_LOG_DEVICE,
                   "rill_zone_create: base %#lx, size %zu, alignment %zu: the alignment must be a "
                   "power of two, the base aligned to it and the size at least one unit",
                   (unsigned long)base, size, align);
        return RILL_ERR_INVALID_ARG;
    }
    rill_zone_t *z = calloc(1, sizeof(*z));
    zone_seg_t *s = calloc(1, sizeof(*s));
    if (!z || !s) {
        free(z);
        free(s);
        return RILL_ERR_NO_MEMORY;
    }
    z->base = base;
    z->size = size & ~(align - 1); /* a ragged tail could never be handed out aligned */
    z->align = align;
    s->addr = base;
    s->size = z->size;
    z->head = s;
    rill_hmap_init(&z->blocks);
    *zone_p = z;
    return RILL_SUCCESS;
}

void rill_zone_destroy(rill_zone_t **zone_p)
{
    if (!zone_p || !*zone_p)
        return;
    rill_zone_t *z = *zone_p;
    for (zone_seg_t *s = z->head, *n; s; s = n) {
        n = s->next;
        free(s);
    }
    rill_hmap_fini(&z->blocks);
    free(z);
    *zone_p = NULL;
}

rill_status_t rill_zone_alloc(rill_zone_t *z, size_t size, uintptr_t *addr_p)
{
    if (size > z->size)
        return RILL_ERR_NO_MEMORY;
    size_t need = size ? (size + z->align - 1) & ~(z->align - 1) : z->align;
    for (zone_seg_t *s = z->head; s; s = s->next) {
        if (s->used || s->size < need)
            continue;
        if (s->size > need) { /* split: the rest stays free after us */
            zone_seg_t *rest = calloc(1, sizeof(*rest));
            if (!rest)
                return RILL_ERR_NO_MEMORY;
            rest->addr = s->addr + need;
            rest->size = s->size - need;
            rest->prev = s;
            rest->next = s->next;
            if (s->next)
                s->next->prev = rest;
            s->next = rest;
            s->size = need;
        }
        if (rill_hmap_put(&z->blocks, (uint64_t)s->addr, s) != RILL_SUCCESS) {
            /* undo the split: merge the rest back */
            zone_seg_t *rest = s->next;
            if (rest && !rest->used && rest->addr == s->addr + s->size && s->size == need) {
                s->size += rest->size;
                s->next = rest->next;
                if (rest->next)
                    rest->next->prev = s;
                free(rest);
            }
            return RILL_ERR_NO_MEMORY;
        }
        s->used = true;
        z->used += s->size;
        z->nblocks++;
        *addr_p = s->addr;
        return RILL_SUCCESS;
    }
    return RILL_ERR_NO_MEMORY;
}

/* Merge s with its next neighbour (both free). */
static void seg_merge_next(rill_zone_t *z, zone_seg_t *s)
{
    zone_seg_t *n = s->next;
    s->size += n->size;
    s->next = n->next;
    if (n->next)
        n->next->prev = s;
    free(n);
    (void)z;
}

rill_status_t rill_zone_free(rill_zone_t *z, uintptr_t addr)
{
    zone_seg_t *s = rill_hmap_get(&z->blocks, (uint64_t)addr);
    if (!s) {
        RILL_ERROR(RILL_LOG_DEVICE,
                   "rill_zone_free: %#lx is not the start of a block allocated in the zone "
                   "[%#lx, +%zu) (freed twice?)",
                   (unsigned long)addr, (unsigned long)z->base, z->size);
        return RILL_ERR_NOT_FOUND;
    }
    rill_hmap_remove(&z->blocks, (uint64_t)addr);
    s->used = false;
    z->used -= s->size;
    z->nblocks--;
    if (s->next && !s->next->used)
        seg_merge_next(z, s);
    if (s->prev && !s->prev->used)
        seg_merge_next(z, s->prev);
    return RILL_SUCCESS;
}

size_t rill_zone_size(const rill_zone_t *z)
{
    return z->size;
}

size_t rill_zone_used(const rill_zone_t *z)
{
    return z->used;
}

size_t rill_zone_largest_free(const rill_zone_t *z)
{
    size_t best = 0;
    for (const zone_seg_t *s = z->head; s; s = s->next)
        if (!s->used && s->size > best)
            best = s->size;
    return best;
}

size_t rill_zone_nblocks(const rill_zone_t *z)
{
    return z->nblocks;
}
