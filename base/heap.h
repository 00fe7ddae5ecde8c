/* Intrusive binary max-heap ordered by priority (highest first), then by arrival (lowest
 * seq first): the ready queues of the schedulers, the comm thread's pending transfers.
 * Not thread-safe: users lock around it. Internal. */
#ifndef RILL_BASE_HEAP_H
#define RILL_BASE_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rill/status.h"

/** Embedded in every item a heap holds. */
typedef struct rill_heap_item {
    int32_t priority; /* higher first */
    uint64_t seq;     /* set by the user before push: ties are served lowest seq first */
} rill_heap_item_t;

typedef struct rill_heap {
    rill_heap_item_t **items;
    size_t count, cap;
} rill_heap_t;

/** Whether a comes out of a heap before b (higher priority, then lower seq). */
static inline bool rill_heap_before(const rill_heap_item_t *a, const rill_heap_item_t *b)
{
    return a->priority > b->priority || (a->priority == b->priority && a->seq < b->seq);
}

void rill_heap_init(rill_heap_t *h);
/** Free the array (not the items). */
void rill_heap_fini(rill_heap_t *h);
/** Borrow item until it is popped. RILL_ERR_NO_MEMORY if the array cannot grow. */
rill_status_t rill_heap_push(rill_heap_t *h, rill_heap_item_t *item);
/** Remove and return the first item, NULL if empty. */
rill_heap_item_t *rill_heap_pop(rill_heap_t *h);

#endif
