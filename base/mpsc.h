/* Lock-free multi-producer single-consumer queue (the comm thread's commands, a GPU
 * manager's intake): producers push onto a LIFO with a CAS, the consumer takes the whole
 * batch with one exchange and reverses it into FIFO order. Internal. */
#ifndef RILL_BASE_MPSC_H
#define RILL_BASE_MPSC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/** Link embedded in every queued item. */
typedef struct rill_mpsc_node {
    struct rill_mpsc_node *next;
} rill_mpsc_node_t;

/**
 * Why this is correct:
 * - Visibility: a producer writes its item (and item->next) with plain stores, then
 *   publishes it with a release (seq_cst) CAS on head. The consumer's exchange on head
 *   is an acquire (seq_cst) RMW that reads either that CAS or a later CAS of another
 *   producer; later CASes are RMWs and so continue the release sequence of the first.
 *   Hence everything written before any push of the batch is visible to the consumer.
 * - Order: each producer's CASes are in program order in head's modification order;
 *   the chain taken by the exchange lists items newest first, so reversing it gives
 *   the push order. Items taken by one exchange all precede those of the next one.
 *   A producer thus sees its commands executed in the order it posted them.
 * - No ABA: the consumer never pops one item with a CAS, it swaps head with NULL. A
 *   producer's CAS succeeds only if head equals the value it stored in node->next, so
 *   even if that address was taken, freed and pushed again meanwhile, node->next is
 *   the current head and the list stays well formed.
 * - Lost wakeups: rill_mpsc_nonempty is a seq_cst load of head; see rill_comm_post() in
 *   comm.c for its pairing with the eventcount.
 */
typedef struct rill_mpsc {
    _Atomic(rill_mpsc_node_t *) head; /* newest item, or NULL */
} rill_mpsc_t;

static inline void rill_mpsc_init(rill_mpsc_t *q)
{
    atomic_init(&q->head, NULL);
}

/** Push one item. Any thread; lock-free. */
static inline void rill_mpsc_push(rill_mpsc_t *q, rill_mpsc_node_t *node)
{
    rill_mpsc_node_t *old = atomic_load_explicit(&q->head, memory_order_relaxed);
    do {
        node->next = old;
        /* seq_cst success: the release half pairs with the consumer's acquire exchange
         * in rill_mpsc_take_all; the total order is needed against the eventcount. On
         * failure old is reloaded (relaxed: we only republish it in node->next). */
    } while (!atomic_compare_exchange_weak_explicit(&q->head, &old, node, memory_order_seq_cst,
                                                    memory_order_relaxed));
}

/** Take every queued item, oldest first (NULL if none). Consumer thread only. */
static inline rill_mpsc_node_t *rill_mpsc_take_all(rill_mpsc_t *q)
{
    /* Cheap check first so an idle poll does not write the cache line. */
    if (!atomic_load_explicit(&q->head, memory_order_relaxed))
        return NULL;
    /* acquire pairs with the producers' CAS in rill_mpsc_push */
    rill_mpsc_node_t *lifo = atomic_exchange_explicit(&q->head, NULL, memory_order_seq_cst);
    rill_mpsc_node_t *fifo = NULL;
    while (lifo) {
        rill_mpsc_node_t *next = lifo->next;
        lifo->next = fifo;
        fifo = lifo;
        lifo = next;
    }
    return fifo;
}

/** Whether an item is queued. seq_cst: it pairs with the push CAS in the store-load
 * (Dekker) argument of the comm thread's sleep. Consumer thread. */
static inline bool rill_mpsc_nonempty(rill_mpsc_t *q)
{
    return atomic_load_explicit(&q->head, memory_order_seq_cst) != NULL;
}

#endif
