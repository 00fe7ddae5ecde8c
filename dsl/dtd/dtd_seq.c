/* The divergence check of distributed DTD: ranks compare their insertion sequences while
 * they insert, so a rank blocked in its window by a peer whose sequence differs does not
 * wait forever.
 *
 * Each rank keeps the running hash of its sequence after every event (a task inserted, a
 * flush, a discard): hist[s] is the hash after s events. When a rank blocks in its
 * window it sends every peer a checkpoint (its event count and hash); when it closes the
 * taskpool it sends its final one. A rank that has passed a peer's count compares the
 * peer's hash with its own at that count; one that has not yet keeps the checkpoint until
 * it gets there. So whenever one rank waits for another, the one further along sees a
 * difference in the common prefix, and at the close every pair of ranks compares their
 * whole sequences. The finder tells every rank, each says so, and the job is aborted
 * (tasks would otherwise wait for data nobody sends).
 *
 * A rank that waits at the close for a peer's final checkpoint reminds the peers every
 * second (SEQ_WAITING: the taskpool and how many collectives it made). A peer that never
 * created that taskpool and sits in a collective the waiting rank has not reached (its
 * number is higher: an allgather, a barrier, rill_fini's final barrier) can never send it:
 * it says so and ends the job, which would otherwise wait on both sides for ever.
 *
 * Threads: the comm thread only queues checkpoints (and says and acknowledges a
 * divergence found elsewhere, and judges reminders: the collectives complete on it, so
 * what it reads of them is exact); the main thread, which inserts and owns hist,
 * compares, from its waits (window, close) and at the next insertion. */
#include "dtd_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "remote_dep.h"

enum { SEQ_CHECK = 1, SEQ_FINAL, SEQ_DIVERGED, SEQ_ACK, SEQ_WAITING };

typedef struct seq_msg {
    uint32_t tp_id;
    uint32_t kind;
    uint64_t seq;     /* the sender's event count (SEQ_DIVERGED: the count compared;
                       * SEQ_WAITING: the collectives it made) */
    uint64_t hash;    /* the sender's hash after seq events (SEQ_DIVERGED: the other's) */
    uint64_t mine;    /* SEQ_DIVERGED: the finder's hash at seq */
    int32_t other;    /* SEQ_DIVERGED: the rank whose checkpoint differed */
    uint32_t counted; /* SEQ_DIVERGED: 1 when the counts differ (n_other, n_mine) */
    uint64_t n_other; /* SEQ_DIVERGED: the other's event count, the finder's */
    uint64_t n_mine;
} seq_msg_t;

typedef struct seq_node {
    struct seq_node *next;
    int src;
    seq_msg_t m;
} seq_node_t;

static struct {
    rill_context_t *ctx;
    int tag;
    rill_spinlock_t lock;
    seq_node_t *head; /* checkpoints not taken by their taskpool yet (any order) */
    uint64_t *closed; /* bit id: this rank sent taskpool id's final checkpoint (under lock) */
    uint32_t closed_words;
    atomic_bool any; /* head != NULL: the inserting thread's cheap look */
    atomic_int acks; /* peers that said the divergence this rank found */
} seq;

static void seq_handler(int src, const void *msg, size_t len, void *arg);

rill_status_t dtd_seq_init(rill_context_t *ctx)
{
    seq.ctx = ctx;
    seq.head = NULL;
    rill_spinlock_init(&seq.lock);
    atomic_init(&seq.any, false);
    atomic_init(&seq.acks, 0);
    if (ctx->nranks < 2)
        return RILL_SUCCESS;
    return rill_rdep_channel_open(ctx, seq_handler, NULL, &seq.tag);
}

void dtd_seq_fini(void)
{
    for (seq_node_t *n = seq.head, *next; n; n = next) {
        next = n->next;
        free(n);
    }
    seq.head = NULL;
    free(seq.closed);
    seq.closed = NULL;
    seq.closed_words = 0;
}

/* ------------------------------------------------------------ recording */

void dtd_seq_record(dtd_taskpool_t *tp)
{
    if (!tp->distributed)
        return;
    tp->seq++;
    if (tp->seq >= tp->hist_cap && !tp->hist_lost) {
        size_t cap = tp->hist_cap ? 2 * tp->hist_cap : 1024;
        uint32_t *h = realloc(tp->hist, cap * sizeof(*h));
        if (!h) { /* only the early look is lost: the final checkpoints still compare */
            tp->hist_lost = true;
        } else {
            if (!tp->hist_cap)
                h[0] = (uint32_t)DTD_SEQ_HASH0;
            tp->hist = h;
            tp->hist_cap = cap;
        }
    }
    if (tp->seq < tp->hist_cap)
        tp->hist[tp->seq] = (uint32_t)tp->hash;
}

/* One control word on the engine's channel (no tile). */
static rill_status_t word_send(int dst, const seq_msg_t *m)
{
    const void *hdr = m;
    size_t len = sizeof(*m);
    int sent;
    return rill_rdep_channel_send(seq.ctx, seq.tag, dst, 1, &hdr, &len, NULL, 0, 0, &sent);
}

static void seq_send(dtd_taskpool_t *tp, int dst, const seq_msg_t *m)
{
    rill_status_t s = word_send(dst, m);
    if (s != RILL_SUCCESS) /* the check is lost, not the run: the close still compares */
        RILL_WARN(RILL_LOG_DTD,
                  "cannot send the insertion checkpoint of taskpool %u to rank %d: %s",
                  tp->super.id, dst, rill_status_string(s));
}

void dtd_seq_announce(dtd_taskpool_t *tp, bool final)
{
    if (!tp->distributed)
        return;
    /* a window block repeats at most once per event count: nothing new to compare */
    if (!final && tp->announced && tp->announced_seq == tp->seq)
        return;
    tp->announced = true;
    tp->announced_seq = tp->seq;
    if (final) { /* before it leaves: a reminder that comes after it must find it */
        rill_spinlock_lock(&seq.lock);
        uint32_t w = tp->super.id / 64;
        if (w >= seq.closed_words) {
            uint32_t n = 2 * w + 16;
            uint64_t *b = realloc(seq.closed, n * sizeof(*b));
            if (b) {
                memset(b + seq.closed_words, 0, (n - seq.closed_words) * sizeof(*b));
                seq.closed = b;
                seq.closed_words = n;
            }
        }
        if (w < seq.closed_words) /* (else a reminder finds nothing: no verdict) */
            seq.closed[w] |= 1ull << (tp->super.id % 64);
        rill_spinlock_unlock(&seq.lock);
    }
    seq_msg_t m = { .tp_id = tp->super.id,
                    .kind = final ? SEQ_FINAL : SEQ_CHECK,
                    .seq = tp->seq,
                    .hash = tp->hash };
    for (int r = 0; r < tp->nranks; r++)
        if (r != tp->rank)
            seq_send(tp, r, &m);
}

/* ------------------------------------------------------------ the comm thread */

/* The message every rank prints: the finder's on its main thread, the others' on their
 * comm threads (which know nothing of their own sequence). Once per process: when two ranks
 * find the same divergence, each would say both. */
static void say_diverged(uint32_t tp_id, int finder, const seq_msg_t *m)
{
    static atomic_bool said;
    if (atomic_exchange_explicit(&said, true, memory_order_relaxed))
        return;
    char what[200];
    if (m->counted)
        snprintf(what, sizeof(what),
                 "rank %d made %llu insertion calls in it, rank %d %llu (one rank inserted "
                 "fewer, or left the taskpool early)",
                 m->other, (unsigned long long)m->n_other, finder, (unsigned long long)m->n_mine);
    else
        snprintf(what, sizeof(what),
                 "they differ within their first %llu insertion calls (sequence hashes %08llx "
                 "and %08llx)",
                 (unsigned long long)m->seq, (unsigned long long)(m->hash & 0xffffffffu),
                 (unsigned long long)(m->mine & 0xffffffffu));
    RILL_ERROR(RILL_LOG_DTD,
               "ranks inserted different task sequences into taskpool %u: rank %d found that rank "
               "%d's differs from its own: %s. An insertion call is a task, a flush or a "
               "discard; every rank must make the same calls, with the same data on the same "
               "home ranks, in the same order. Aborting the run.",
               tp_id, finder, m->other, what);
}

/* src waits at the close of taskpool m->tp_id for this rank's final checkpoint, having made
 * m->seq collectives (comm thread). When this rank has not sent that checkpoint (it never
 * created the taskpool, or has not waited for it) and is in a collective src has not
 * reached, neither can go on: src leaves its close only with the checkpoint, and this
 * rank's collective ends only when src joins it. The final checkpoint is marked sent before
 * it leaves, so a reminder that crossed it finds the mark. */
static void waiting_judge(int src, const seq_msg_t *m)
{
    uint64_t coll;
    const char *what;
    if (!rill_rdep_in_collective(seq.ctx, &coll, &what) || coll <= m->seq)
        return;
    rill_spinlock_lock(&seq.lock);
    const uint32_t w = m->tp_id / 64;
    bool sent = w < seq.closed_words && (seq.closed[w] >> (m->tp_id % 64) & 1);
    rill_spinlock_unlock(&seq.lock);
    if (sent)
        return;
    const bool created = m->tp_id < rill_rdep_taskpools_created(seq.ctx);
    RILL_ERROR(
        RILL_LOG_DTD,
        "ranks diverged: rank %d waits at the end of taskpool %u for this rank's "
        "insertion sequence, but this rank %s: it is in %s (its collective %llu; rank "
        "%d made %llu). Every rank must create the same taskpools, wait for them, make "
        "the same collectives and call rill_fini in the same order. Aborting the run.",
        src, m->tp_id, created ? "has not waited for that taskpool" : "created no such taskpool",
        what ? what : "a collective", (unsigned long long)coll, src, (unsigned long long)m->seq);
    rill_rdep_abort(seq.ctx, 1);
}

static void seq_handler(int src, const void *msg, size_t len, void *arg)
{
    (void)arg;
    rill_rdep_in_t in;
    if (!rill_rdep_in_parse(src, msg, len, &in) || in.hdr_len != sizeof(seq_msg_t)) {
        RILL_ERROR(RILL_LOG_DTD, "insertion checkpoint of %zu bytes from rank %d (expected %zu)",
                   len, src, sizeof(seq_msg_t));
        return;
    }
    seq_msg_t m;
    memcpy(&m, in.hdr, sizeof(m));
    if (m.kind == SEQ_ACK) {
        atomic_fetch_add_explicit(&seq.acks, 1, memory_order_relaxed);
        return;
    }
    if (m.kind == SEQ_DIVERGED) {
        /* said here, on the comm thread, whatever the main thread is doing; the finder
         * aborts the job once every rank said it (or after a bound) */
        say_diverged(m.tp_id, src, &m);
        seq_msg_t ack = { .tp_id = m.tp_id, .kind = SEQ_ACK };
        word_send(src, &ack);
        return;
    }
    if (m.kind == SEQ_WAITING) {
        waiting_judge(src, &m);
        return;
    }
    seq_node_t *n = malloc(sizeof(*n));
    if (!n) {
        RILL_WARN(RILL_LOG_DTD, "out of memory keeping rank %d's insertion checkpoint", src);
        return;
    }
    n->src = src;
    n->m = m;
    rill_spinlock_lock(&seq.lock);
    n->next = seq.head;
    seq.head = n;
    /* release pairs with the acquire in dtd_seq_pending: the node is linked first */
    atomic_store_explicit(&seq.any, true, memory_order_release);
    rill_spinlock_unlock(&seq.lock);
    rill_evcount_signal(&seq.ctx->idle, 0); /* a waiting main thread re-checks */
}

/* ------------------------------------------------------------ comparing (main thread) */

bool dtd_seq_pending(void)
{
    return atomic_load_explicit(&seq.any, memory_order_acquire);
}

/* This rank found that src's sequence differs from its own (counted: its count n_other is not
 * this rank's): every rank says it, then the job ends. Never returns. */
static void diverged(dtd_taskpool_t *tp, int src, uint64_t count, uint64_t hash_other,
                     uint64_t hash_mine, bool counted, uint64_t n_other)
{
    seq_msg_t m = { .tp_id = tp->super.id,
                    .kind = SEQ_DIVERGED,
                    .seq = count,
                    .hash = hash_other,
                    .mine = hash_mine,
                    .other = src,
                    .counted = counted,
                    .n_other = n_other,
                    .n_mine = tp->seq };
    say_diverged(tp->super.id, tp->rank, &m);
    for (int r = 0; r < tp->nranks; r++)
        if (r != tp->rank)
            seq_send(tp, r, &m);
    /* the abort ends every rank: first let them say why (their comm threads answer), 2 s
     * at most, since a rank may be gone already */
    for (int i = 0;
         i < 2000 && atomic_load_explicit(&seq.acks, memory_order_relaxed) < tp->nranks - 1; i++)
        nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
    rill_rdep_abort(tp->super.ctx, 1);
}

/* One peer checkpoint against this rank's sequence: true when it is settled (compared, or
 * useless), false to keep it until this rank inserts more. */
static bool compare(dtd_taskpool_t *tp, int src, const seq_msg_t *m)
{
    const bool final = m->kind == SEQ_FINAL;
    if (m->seq > tp->seq) {
        if (tp->closed) /* the peer made more events than this rank's whole sequence */
            diverged(tp, src, tp->seq, m->hash, tp->hash, true, m->seq);
        return false;
    }
    if (m->seq == tp->seq) {
        if (m->hash != tp->hash)
            diverged(tp, src, m->seq, m->hash, tp->hash, false, m->seq);
        if (final && !tp->closed)
            return false; /* equal so far: this rank may still insert more */
    } else if (m->seq < tp->hist_cap && !tp->hist_lost) {
        if ((uint32_t)m->hash != tp->hist[m->seq])
            diverged(tp, src, m->seq, m->hash, tp->hist[m->seq], false, m->seq);
    }
    if (final && m->seq < tp->seq) /* the peer closed with fewer events than this rank made */
        diverged(tp, src, m->seq, m->hash, m->seq < tp->hist_cap ? tp->hist[m->seq] : 0, true,
                 m->seq);
    if (final)
        tp->finals++;
    return true;
}

void dtd_seq_check(dtd_taskpool_t *tp)
{
    if (!tp->distributed)
        return;
    if (!tp->pend) {
        tp->pend = calloc((size_t)tp->nranks * 2, sizeof(*tp->pend));
        if (!tp->pend)
            return; /* checked again at the next look */
    }
    /* take this taskpool's checkpoints out of the shared list */
    seq_node_t *mine = NULL;
    if (dtd_seq_pending()) {
        rill_spinlock_lock(&seq.lock);
        seq_node_t **pp = &seq.head;
        while (*pp) {
            seq_node_t *n = *pp;
            if (n->m.tp_id == tp->super.id) {
                *pp = n->next;
                n->next = mine;
                mine = n;
            } else {
                pp = &n->next;
            }
        }
        atomic_store_explicit(&seq.any, seq.head != NULL, memory_order_relaxed);
        rill_spinlock_unlock(&seq.lock);
    }
    /* each peer's earliest unsettled checkpoint and its final one are kept (a later
     * checkpoint of the same peer says less than its earlier one, checked sooner) */
    for (seq_node_t *n = mine, *next; n; n = next) {
        next = n->next;
        dtd_seq_slot_t *slot = &tp->pend[2 * n->src + (n->m.kind == SEQ_FINAL)];
        if (!slot->valid || n->m.kind == SEQ_FINAL || n->m.seq < slot->seq) {
            slot->valid = true;
            slot->seq = n->m.seq;
            slot->hash = n->m.hash;
        }
        free(n);
    }
    for (int i = 0; i < 2 * tp->nranks; i++) {
        dtd_seq_slot_t *slot = &tp->pend[i];
        if (!slot->valid)
            continue;
        seq_msg_t m = { .kind = (i & 1) ? SEQ_FINAL : SEQ_CHECK,
                        .seq = slot->seq,
                        .hash = slot->hash };
        if (compare(tp, i / 2, &m))
            slot->valid = false;
    }
}

bool dtd_seq_all_final(void *arg)
{
    dtd_taskpool_t *tp = arg;
    dtd_seq_check(tp);
    if (tp->finals >= tp->nranks - 1)
        return true;
    /* still waiting: remind the peers every second (a peer that left the sequence says so) */
    uint64_t now = rill_time_ns();
    if (!tp->reminded_ns) {
        tp->reminded_ns = now;
    } else if (now - tp->reminded_ns >= 1000000000ull) {
        tp->reminded_ns = now;
        seq_msg_t m = { .tp_id = tp->super.id,
                        .kind = SEQ_WAITING,
                        .seq = rill_rdep_collectives(tp->super.ctx) };
        for (int r = 0; r < tp->nranks; r++)
            if (r != tp->rank)
                seq_send(tp, r, &m);
    }
    return false;
}

void dtd_seq_forget(dtd_taskpool_t *tp)
{
    free(tp->hist);
    free(tp->pend);
    if (!dtd_seq_pending())
        return;
    rill_spinlock_lock(&seq.lock);
    for (seq_node_t **pp = &seq.head; *pp;) {
        seq_node_t *n = *pp;
        if (n->m.tp_id == tp->super.id) {
            *pp = n->next;
            free(n);
        } else {
            pp = &n->next;
        }
    }
    atomic_store_explicit(&seq.any, seq.head != NULL, memory_order_relaxed);
    rill_spinlock_unlock(&seq.lock);
}
