/* Intrusive binary max-heap (priority, then arrival order). */
#include "heap.h"

#include <stdbool.h>
#include <stdlib.h>

void rill_heap_init(rill_heap_t *h)
{
    h->items = NULL;
    h->count = h->cap = 0;
}

void rill_heap_fini(rill_heap_t *h)
{
    free(h->items);
    rill_heap_init(h);
}

rill_status_t rill_heap_push(rill_heap_t *h, rill_heap_item_t *item)
{
    if (h->count == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        rill_heap_item_t **items = realloc(h->items, cap * sizeof(*items));
        if (!items)
            return RILL_ERR_NO_MEMORY;
        h->items = items;
        h->cap = cap;
    }
    size_t i = h->count++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!rill_heap_before(item, h->items[parent]))
            break;
        h->items[i] = h->items[parent];
        i = parent;
    }
    h->items[i] = item;
    return RILL_SUCCESS;
}

rill_heap_item_t *rill_heap_pop(rill_heap_t *h)
{
    if (h->count == 0)
        return NULL;
    rill_heap_item_t *top = h->items[0];
    rill_heap_item_t *last = h->items[--h->count];
    size_t i = 0, n = h->count;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && rill_heap_before(h->items[child + 1], h->items[child]))
            child++;
        if (!rill_heap_before(h->items[child], last))
            break;
        h->items[i] = h->items[child];
        i = child;
    }
    if (n > 0)
        h->items[i] = last;
    return top;
}
