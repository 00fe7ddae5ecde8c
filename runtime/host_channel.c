/* Port channels between host memory regions of two ranks (host_channel.h).
 *
 * The protocol, for a request at position pos of channel c from rank S to rank T:
 * 1. S (any thread, under c's push lock, so positions and messages leave in one order):
 *    checks the request against the regions' sizes, exposes the source bytes for one GET
 *    (rill_comm_expose) when it puts, and sends T a REQ message {c, pos, flags, dst + off,
 *    size, handle, sem, the signal's value} on the channels' tag;
 * 2. T's comm thread queues it in the state of (S, c), and serves that queue in order, one
 *    request at a time: it checks that the destination and the semaphore lie in regions this
 *    rank registered, GETs the bytes into the destination (over the wire of S: MPI on a node,
 *    UCX between nodes), then writes the signal's value into the semaphore (release store),
 *    then sends S an ACK {c, pos, status};
 * 3. S's comm thread raises c's flushed position to pos (release store); a waiter reads it
 *    with acquire.
 * Ordering: the GET's done runs on T's comm thread after the bytes are in T's memory (the
 * wire's completion: MPI's receive, or UCX's flush before PUT_DONE), and the semaphore's
 * release store follows it on that thread, so a thread of T that reads the new value with
 * acquire (rill_hchan_sem_wait) sees the bytes. Requests of one channel reach T in push
 * order (one thread's messages on one tag to one peer keep their order, and the push lock
 * makes the pushes of all threads one sequence), and T starts a request only once the one
 * before it was acknowledged, so signals follow every put pushed before them. */
#include "host_channel.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "log.h"
#include "sync.h"

enum { HC_REQ = 1, HC_ACK = 2 };
enum { HC_PUT = 1, HC_SIGNAL = 2, HC_FLUSH = 4 }; /* RILL_PC_* (rill/channel.h) */

typedef struct hc_msg {
    uint8_t type, flags;
    uint16_t reserved;
    int32_t status;
    uint32_t chan, reserved2;
    uint64_t pos, dst, size, handle, sem, value;
} hc_msg_t;

struct rill_hchan {
    uint32_t id;
    int peer;
    rill_context_t *ctx;
    const char *src;
    uint64_t src_size, dst, dst_size, sem;
    rill_spinlock_t push_lock;
    uint64_t pos, signals;   /* under push_lock */
    atomic_ullong flushed;   /* the last position the target acknowledged */
    atomic_int status;       /* the first failure it reported (RILL_SUCCESS: none) */
    struct rill_hchan *next; /* in hc.chans */
};

/* A request queued on its target, and the target's state of one (source rank, channel). */
typedef struct hc_req {
    struct hc_req *next;
    hc_msg_t m;
} hc_req_t;

typedef struct hc_target {
    struct hc_target *next;
    int src;
    uint32_t chan;
    hc_req_t *head, *tail; /* head: the one being served while busy */
    bool busy;
} hc_target_t;

typedef struct hc_region {
    uintptr_t base;
    size_t size;
} hc_region_t;

static struct {
    rill_context_t *ctx;
    int tag;
    bool ready;
    rill_spinlock_t lock; /* chans and regions (any thread); targets are the comm thread's */
    rill_hchan_t *chans;
    hc_region_t *regions;
    int nregions, cap_regions;
    hc_target_t *targets;
    atomic_uint next_id;
} hc;

static void handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg);

rill_status_t rill_hchan_init(rill_context_t *ctx)
{
    hc.ctx = ctx;
    rill_spinlock_init(&hc.lock);
    atomic_init(&hc.next_id, 1);
    hc.ready = true;
    rill_status_t s = RILL_SUCCESS;
    if (ctx->nranks > 1 &&
        (s = rill_comm_am_register_new(ctx->comm, handler, NULL, &hc.tag)) != RILL_SUCCESS)
        RILL_ERROR(RILL_LOG_RUNTIME, "cannot register the host channels' messages: %s",
                   rill_status_string(s));
    return s;
}

void rill_hchan_fini(void)
{
    if (!hc.ready)
        return;
    for (hc_target_t *t = hc.targets, *n; t; t = n) {
        n = t->next;
        for (hc_req_t *r = t->head, *rn; r; r = rn) {
            rn = r->next;
            free(r);
        }
        free(t);
    }
    free(hc.regions);
    hc.targets = NULL;
    hc.regions = NULL;
    hc.nregions = hc.cap_regions = 0;
    hc.chans = NULL; /* (each is its creator's to destroy) */
    hc.ready = false;
}

/* ------------------------------------------------------------ regions */

rill_status_t rill_hchan_region_add(const void *ptr, size_t size)
{
    rill_spinlock_lock(&hc.lock);
    if (hc.nregions == hc.cap_regions) {
        int cap = hc.cap_regions ? 2 * hc.cap_regions : 16;
        hc_region_t *r = realloc(hc.regions, (size_t)cap * sizeof(*r));
        if (!r) {
            rill_spinlock_unlock(&hc.lock);
            return RILL_ERR_NO_MEMORY;
        }
        hc.regions = r;
        hc.cap_regions = cap;
    }
    hc.regions[hc.nregions++] = (hc_region_t){ (uintptr_t)ptr, size };
    rill_spinlock_unlock(&hc.lock);
    return RILL_SUCCESS;
}

void rill_hchan_region_remove(const void *ptr)
{
    rill_spinlock_lock(&hc.lock);
    for (int i = 0; i < hc.nregions; i++)
        if (hc.regions[i].base == (uintptr_t)ptr) {
            hc.regions[i] = hc.regions[--hc.nregions];
            break;
        }
    rill_spinlock_unlock(&hc.lock);
}

/* Whether [addr, + size) lies in one registered region. */
static bool region_holds(uint64_t addr, uint64_t size)
{
    bool ok = false;
    rill_spinlock_lock(&hc.lock);
    for (int i = 0; i < hc.nregions && !ok; i++)
        ok = addr >= hc.regions[i].base && size <= hc.regions[i].size &&
             addr - hc.regions[i].base <= hc.regions[i].size - size;
    rill_spinlock_unlock(&hc.lock);
    return ok;
}

/* ------------------------------------------------------------ the target's side */

static void serve(rill_comm_t *comm, hc_target_t *t);

static void ack(rill_comm_t *comm, hc_target_t *t, rill_status_t status)
{
    hc_req_t *r = t->head;
    hc_msg_t a = { .type = HC_ACK, .status = (int32_t)status, .chan = t->chan, .pos = r->m.pos };
    if (status == RILL_SUCCESS && (r->m.flags & HC_SIGNAL))
        /* release: the GET's bytes (in this process's memory once its done ran on this
         * thread) are visible to whoever acquires the new value */
        __atomic_store_n((uint64_t *)(uintptr_t)r->m.sem, r->m.value, __ATOMIC_RELEASE);
    rill_status_t s = rill_comm_am_send(comm, t->src, hc.tag, &a, sizeof(a), 0);
    if (s != RILL_SUCCESS)
        RILL_ERROR(RILL_LOG_RUNTIME, "host channel %u of rank %d: its acknowledgement (%s)",
                   t->chan, t->src, rill_status_string(s));
    t->head = r->next;
    if (!t->head)
        t->tail = NULL;
    free(r);
    t->busy = false;
    serve(comm, t);
}

static void get_done(void *arg, rill_status_t status)
{
    hc_target_t *t = arg;
    if (status != RILL_SUCCESS)
        RILL_ERROR(RILL_LOG_RUNTIME,
                   "host channel %u of rank %d: the put of position %llu "
                   "failed: %s",
                   t->chan, t->src, (unsigned long long)t->head->m.pos, rill_status_string(status));
    ack(hc.ctx->comm, t, status);
}

/* What of request m lies outside the regions this rank registered ("its destination", "its
 * semaphore"), or NULL. */
static const char *request_bad(const hc_msg_t *m)
{
    if ((m->flags & HC_PUT) && m->size > 0 && !region_holds(m->dst, m->size))
        return "its destination";
    if ((m->flags & HC_SIGNAL) && (m->sem % 8 || !region_holds(m->sem, 8)))
        return "its semaphore";
    return NULL;
}

/* Start the oldest request of t when none is being served. Comm thread. */
static void serve(rill_comm_t *comm, hc_target_t *t)
{
    if (t->busy || !t->head)
        return;
    const hc_msg_t *m = &t->head->m;
    bool put = (m->flags & HC_PUT) && m->size > 0;
    const char *bad = request_bad(m);
    if (bad) {
        RILL_ERROR(RILL_LOG_RUNTIME,
                   "host channel %u of rank %d, position %llu: %s is not in a region this rank "
                   "registered (rill_regmem_get, rill_sem_create with RILL_HOST_MEMORY)",
                   t->chan, t->src, (unsigned long long)m->pos, bad);
        ack(comm, t, RILL_ERR_INVALID_ARG);
        return;
    }
    if (!put) {
        ack(comm, t, RILL_SUCCESS);
        return;
    }
    t->busy = true;
    rill_status_t s = rill_comm_get(comm, t->src, m->handle, (void *)(uintptr_t)m->dst,
                                    (size_t)m->size, 0, get_done, t);
    if (s != RILL_SUCCESS) {
        t->busy = false;
        ack(comm, t, s);
    }
}

static void on_request(rill_comm_t *comm, int src, const hc_msg_t *m)
{
    hc_target_t *t = hc.targets;
    while (t && (t->src != src || t->chan != m->chan))
        t = t->next;
    hc_req_t *r = malloc(sizeof(*r));
    if (!t && r && (t = calloc(1, sizeof(*t)))) {
        t->src = src;
        t->chan = m->chan;
        t->next = hc.targets;
        hc.targets = t;
    }
    if (!t || !r) {
        /* (the sender's waits for this position end in their timeout, saying where) */
        RILL_ERROR(RILL_LOG_RUNTIME,
                   "host channel %u of rank %d: out of memory queueing position %llu", m->chan, src,
                   (unsigned long long)m->pos);
        free(r);
        return;
    }
    r->next = NULL;
    r->m = *m;
    if (t->tail)
        t->tail->next = r;
    else
        t->head = r;
    t->tail = r;
    serve(comm, t);
}

/* ------------------------------------------------------------ the source's side */

static void on_ack(int src, const hc_msg_t *m)
{
    rill_spinlock_lock(&hc.lock);
    rill_hchan_t *h = hc.chans;
    while (h && h->id != m->chan)
        h = h->next;
    if (h && h->peer == src) {
        int ok = RILL_SUCCESS;
        if (m->status != RILL_SUCCESS)
            atomic_compare_exchange_strong(&h->status, &ok, m->status);
        /* release: pairs with the waiter's acquire (the status first) */
        atomic_store_explicit(&h->flushed, m->pos, memory_order_release);
    }
    rill_spinlock_unlock(&hc.lock);
    rill_comm_expect(hc.ctx->comm, -1);
}

static void handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)arg;
    hc_msg_t m;
    if (len != sizeof(m)) {
        RILL_ERROR(RILL_LOG_RUNTIME,
                   "host channels: a message of %zu bytes from rank %d (%zu "
                   "expected): dropped",
                   len, src, sizeof(m));
        return;
    }
    memcpy(&m, msg, sizeof(m));
    if (m.type == HC_REQ)
        on_request(comm, src, &m);
    else if (m.type == HC_ACK)
        on_ack(src, &m);
    else
        RILL_ERROR(RILL_LOG_RUNTIME, "host channels: a message of type %u from rank %d: dropped",
                   m.type, src);
}

rill_status_t rill_hchan_create(rill_context_t *ctx, const void *src, uint64_t src_size, int peer,
                                uint64_t dst, uint64_t dst_size, uint64_t sem, rill_hchan_t **hp)
{
    if (!hc.ready || peer < 0 || peer >= ctx->nranks)
        return RILL_ERR_INVALID_ARG;
    rill_hchan_t *h = calloc(1, sizeof(*h));
    if (!h)
        return RILL_ERR_NO_MEMORY;
    h->id = atomic_fetch_add(&hc.next_id, 1);
    h->peer = peer;
    h->ctx = ctx;
    h->src = src;
    h->src_size = src_size;
    h->dst = dst;
    h->dst_size = dst_size;
    h->sem = sem;
    rill_spinlock_init(&h->push_lock);
    atomic_init(&h->flushed, 0);
    atomic_init(&h->status, RILL_SUCCESS);
    rill_spinlock_lock(&hc.lock);
    h->next = hc.chans;
    hc.chans = h;
    rill_spinlock_unlock(&hc.lock);
    *hp = h;
    return RILL_SUCCESS;
}

uint32_t rill_hchan_id(const rill_hchan_t *h)
{
    return h->id;
}

/* A request to this rank itself: carried out at once (the same checks, the same order). */
static rill_status_t push_self(rill_hchan_t *h, const hc_msg_t *m)
{
    const char *bad = request_bad(m);
    if (!bad && (m->flags & HC_PUT) && m->size > 0)
        memmove((void *)(uintptr_t)m->dst, (const void *)(uintptr_t)m->handle, m->size);
    if (!bad && (m->flags & HC_SIGNAL))
        __atomic_store_n((uint64_t *)(uintptr_t)m->sem, m->value, __ATOMIC_RELEASE);
    if (bad) {
        int ok = RILL_SUCCESS;
        RILL_ERROR(RILL_LOG_RUNTIME,
                   "host channel %u (to this rank), position %llu: %s is not in a region this "
                   "rank registered",
                   h->id, (unsigned long long)m->pos, bad);
        atomic_compare_exchange_strong(&h->status, &ok, RILL_ERR_INVALID_ARG);
    }
    atomic_store_explicit(&h->flushed, m->pos, memory_order_release);
    return RILL_SUCCESS;
}

rill_status_t rill_hchan_push(rill_hchan_t *h, unsigned flags, uint64_t dst_off, uint64_t src_off,
                              uint64_t size, uint64_t *done_pos)
{
    bool put = (flags & HC_PUT) && size > 0;
    if (put && (src_off > h->src_size || size > h->src_size - src_off || dst_off > h->dst_size ||
                size > h->dst_size - dst_off)) {
        RILL_ERROR(RILL_LOG_RUNTIME,
                   "host channel %u: a put of %llu bytes from offset %llu to offset %llu: the "
                   "source region has %llu bytes, the destination %llu",
                   h->id, (unsigned long long)size, (unsigned long long)src_off,
                   (unsigned long long)dst_off, (unsigned long long)h->src_size,
                   (unsigned long long)h->dst_size);
        return RILL_ERR_INVALID_ARG;
    }
    hc_msg_t m = { .type = HC_REQ,
                   .flags = (uint8_t)flags,
                   .chan = h->id,
                   .dst = h->dst + (put ? dst_off : 0),
                   .size = put ? size : 0,
                   .sem = h->sem };
    rill_comm_t *comm = h->ctx->comm;
    rill_spinlock_lock(&h->push_lock);
    m.pos = ++h->pos;
    if (flags & HC_SIGNAL)
        m.value = ++h->signals;
    rill_status_t s = RILL_SUCCESS;
    if (h->peer == h->ctx->rank) {
        m.handle = (uint64_t)(uintptr_t)(h->src + src_off);
        s = push_self(h, &m);
    } else {
        if (put) /* (released after its one GET: nothing to free) */
            s = rill_comm_expose(comm, h->src + src_off, (size_t)size, 1, NULL, NULL, &m.handle);
        if (s == RILL_SUCCESS) {
            rill_comm_expect(comm, 1); /* its acknowledgement */
            s = rill_comm_am_send(comm, h->peer, hc.tag, &m, sizeof(m), 0);
            if (s != RILL_SUCCESS)
                rill_comm_expect(comm, -1);
        }
    }
    if (s != RILL_SUCCESS) { /* (nothing left: the position is not taken) */
        h->pos--;
        if (flags & HC_SIGNAL)
            h->signals--;
    }
    rill_spinlock_unlock(&h->push_lock);
    if (s == RILL_SUCCESS && done_pos)
        *done_pos = m.pos;
    return s;
}

/* A waiter's pause: spin a while, then give the core away (the comm thread that ends the
 * wait may share it). */
static void wait_pause(unsigned *spins)
{
    if (++*spins < 1000)
        rill_cpu_relax();
    else
        sched_yield();
}

rill_status_t rill_hchan_wait_flushed(rill_hchan_t *h, uint64_t pos, double timeout_s)
{
    uint64_t t0 = rill_time_ns();
    unsigned spins = 0;
    while (atomic_load_explicit(&h->flushed, memory_order_acquire) < pos) {
        if ((double)(rill_time_ns() - t0) > timeout_s * 1e9) {
            RILL_ERROR(RILL_LOG_RUNTIME,
                       "host channel %u to rank %d: position %llu not acknowledged after %.1f s "
                       "(at %llu)",
                       h->id, h->peer, (unsigned long long)pos, timeout_s,
                       (unsigned long long)atomic_load(&h->flushed));
            return RILL_ERR_TIMEOUT;
        }
        wait_pause(&spins);
    }
    return (rill_status_t)atomic_load_explicit(&h->status, memory_order_acquire);
}

rill_status_t rill_hchan_destroy(rill_hchan_t *h)
{
    rill_spinlock_lock(&h->push_lock);
    uint64_t last = h->pos;
    rill_spinlock_unlock(&h->push_lock);
    rill_status_t s = rill_hchan_wait_flushed(h, last, 30.0);
    rill_spinlock_lock(&hc.lock);
    for (rill_hchan_t **pp = &hc.chans; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            *pp = h->next;
            break;
        }
    rill_spinlock_unlock(&hc.lock);
    free(h);
    return s == RILL_ERR_TIMEOUT ? s : RILL_SUCCESS;
}

rill_status_t rill_hchan_sem_wait(const uint64_t *sem, uint64_t value, double timeout_s)
{
    uint64_t t0 = rill_time_ns();
    unsigned spins = 0;
    while (__atomic_load_n(sem, __ATOMIC_ACQUIRE) < value) {
        if ((double)(rill_time_ns() - t0) > timeout_s * 1e9) {
            RILL_ERROR(RILL_LOG_RUNTIME,
                       "a host semaphore: value %llu not reached after %.1f s (it holds %llu)",
                       (unsigned long long)value, timeout_s,
                       (unsigned long long)__atomic_load_n(sem, __ATOMIC_ACQUIRE));
            return RILL_ERR_TIMEOUT;
        }
        wait_pause(&spins);
    }
    return RILL_SUCCESS;
}
