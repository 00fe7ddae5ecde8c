/* Binary max-heap of pending transfers, ordered by priority (highest first) then by
 * arrival (oldest first). Used by the comm thread only. Internal to comm/. */
#ifndef RILL_COMM_HEAP_H
#define RILL_COMM_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "rill/status.h"

/** Embedded in every item a heap holds. */
typedef struct comm_heap_item {
    int32_t priority;
    uint64_t seq; /* arrival order: ties in priority are served oldest first */
} comm_heap_item_t;

typedef struct comm_heap {
    comm_heap_item_t **items;
    size_t count, cap;
} comm_heap_t;

void rill_comm_heap_init(comm_heap_t *h);
/** Free the array (not the items). */
void rill_comm_heap_fini(comm_heap_t *h);
/** Borrow item until it is popped. RILL_ERR_NO_MEMORY if the array cannot grow. */
rill_status_t rill_comm_heap_push(comm_heap_t *h, comm_heap_item_t *item);
/** Remove and return the first item, NULL if empty. */
comm_heap_item_t *rill_comm_heap_pop(comm_heap_t *h);

#endif
