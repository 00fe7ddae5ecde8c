/* Port channels to the GPUs of other nodes: the proxy of the channel's GPU sends each request
 * as a message to the target GPU's manager over the net wire (each GPU manager's UCX worker,
 * net.h), the put's bytes behind it through the manager's host-staged pipeline (staged.c:
 * chunks copied out of GPU memory into pinned buffers, sent as host memory); the target's
 * manager, the proxy of its side, receives the chunks and copies them into the
 * destination, then writes the signal into its semaphore and acknowledges flushes. Only
 * Rill's own asynchronous copies and events touch the GPUs, none of UCX's CUDA calls: a
 * stream may wait on a channel's semaphore meanwhile. docs/channels.md, "GPUs of other
 * nodes", has the protocol and its ordering argument, and "Limits" its known defect.
 * Everything here runs on one GPU's manager thread. */
#include "gm_internal.h"
#include "proxy_impl.h"

#if RILL_HAVE_CUDA
#include <stdlib.h>
#include <string.h>

#include "comm.h"

/* Tags: bits 63 and 62 set for this traffic (remote.c's tile tags leave bit 63 clear, the
 * host-staged pipeline's tiles set it and leave bit 62 clear). Requests and
 * acknowledgements have one tag each; a put's chunks one per (sender rank, sender GPU,
 * sender's count of puts mod 2^16, chunk), which the request names (the chunk in the low 20
 * bits: staged.c). */
#define PCNET_TAG      (3ull << 62)
#define PCNET_TAG_REQ  (PCNET_TAG | 1)
#define PCNET_TAG_ACK  (PCNET_TAG | 2)
#define PCNET_STANDING 16 /* receives kept posted, of each tag */
#define PCNET_BUFFERS  16 /* pinned chunk buffers set aside at the start */

static uint64_t data_tag(int rank, int idx, uint32_t n)
{
    return PCNET_TAG | (1ull << 61) | ((uint64_t)(rank & 0xfffff) << 40) |
           ((uint64_t)(idx & 0xf) << 36) | ((uint64_t)(n & 0xffff) << 20);
}

enum { MSG_REQ = 0x504e5251u /* "PNRQ" */, MSG_ACK = 0x504e414bu /* "PNAK" */ };

/* A request (and, echoed back, its acknowledgement). */
typedef struct pcnet_msg {
    uint32_t magic, chan; /* the sender's channel */
    int32_t rank, idx;    /* the sender's rank and GPU index */
    uint32_t type, from_host;
    uint64_t seq;        /* the channel's count of requests: applied in this order */
    uint64_t pos;        /* its position in the sender's device or host requests */
    uint64_t dst, size;  /* the put: where in the target process, how many bytes */
    uint64_t sem, value; /* the signal: the semaphore in the target process, its value */
    uint64_t tag;        /* the put's bytes */
} pcnet_msg_t;

/* A receive kept posted for requests (or acknowledgements). */
typedef struct standing {
    gm_pcnet_t *n;
    pcnet_msg_t msg;
    void *req;
    bool ack, posted;
    bool ready, ok; /* ready: completed, not reposted yet; ok: with a message to handle */
} standing_t;

typedef struct inchan inchan_t;

/* A request from a channel of another node, from its arrival until applied. */
typedef struct inreq {
    struct inreq *next;
    gm_pcnet_t *n;
    inchan_t *ch;
    pcnet_msg_t m;
    bool landed, sem_ok;
    bool receiving; /* the put's bytes are on their way (the pipeline's done not run yet) */
} inreq_t;

/* A channel of another node that targets this GPU. */
struct inchan {
    inchan_t *next;
    int32_t rank;
    uint32_t chan;
    uint64_t next_seq;
    inreq_t *pending; /* by seq */
};

typedef struct ack {
    struct ack *next;
    pcnet_msg_t m;
    cudaEvent_t ev; /* behind the signals written before it */
} ack_t;

/* A request sent: the message, and how many of its two sends have not completed. */
typedef struct sendop {
    gm_proxy_t *p;
    uint32_t chan;
    int left;
    pcnet_msg_t msg;
} sendop_t;

struct gm_pcnet {
    gm_proxy_t *p;
    standing_t st[2 * PCNET_STANDING];
    int standing; /* of st, posted */
    uint32_t puts;
    inchan_t *in;
    ack_t *acks, **acks_tail;
    cudaStream_t stream; /* the signals' writes: the pipeline's copies into the GPU's */
    int nready;          /* standing receives completed, not handled yet */
    bool landed;         /* a request came, or a put's bytes came in, since the last look */
    bool stopping;
};

static void standing_done(void *arg, rill_status_t s)
{
    standing_t *st = arg;
    st->posted = false;
    st->req = NULL;
    st->n->standing--;
    if (st->n->stopping)
        return;
    /* handled and posted again by gm_pcnet_step, out of UCX's callback */
    st->ready = true;
    st->ok = s == RILL_SUCCESS;
    st->n->nready++;
    if (!st->ok) /* (a message of another size: said, dropped) */
        RILL_ERROR(RILL_LOG_GPU, "GPU %d: a receive of port channel %s from other nodes failed",
                   st->n->p->ordinal, st->ack ? "acknowledgements" : "requests");
}

static void standing_post(gm_pcnet_t *n, standing_t *st)
{
    st->ready = false;
    if (rill_net_recv(n->p->net, &st->msg, false, sizeof(st->msg),
                      st->ack ? PCNET_TAG_ACK : PCNET_TAG_REQ, standing_done, st,
                      &st->req) == RILL_SUCCESS) {
        st->posted = true;
        n->standing++;
    }
}

rill_status_t gm_pcnet_start(gm_proxy_t *p)
{
    if (!p->net || p->pcnet)
        return RILL_SUCCESS;
    gm_pcnet_t *n = calloc(1, sizeof(*n));
    if (!n)
        return RILL_ERR_NO_MEMORY;
    /* the pipeline's streams and pinned buffers now, before any stream waits on a channel's
     * semaphore (PCNET_BUFFERS: the puts of a few channels in flight at once) */
    rill_status_t rs = gm_staged_reserve(p->mgr, PCNET_BUFFERS);
    if (rs != RILL_SUCCESS) {
        free(n);
        return rs;
    }
    /* a signal goes on the stream that copied its data in (stream order keeps them in
     * order); docs/channels.md, "Limits", says what a stream of this process that waits on
     * the semaphore before the signal is enqueued did to it */
    n->stream = gm_staged_h2d(p->mgr);
    n->p = p;
    n->acks_tail = &n->acks;
    p->pcnet = n;
    for (int i = 0; i < 2 * PCNET_STANDING; i++) {
        n->st[i].n = n;
        n->st[i].ack = i >= PCNET_STANDING;
        standing_post(n, &n->st[i]);
    }
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ the sender's side */

static rill_port_channel_t *channel_of(gm_proxy_t *p, uint32_t id)
{
    for (rill_port_channel_t *c = p->channels; c; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}

static void send_done(void *arg, rill_status_t s)
{
    sendop_t *op = arg;
    rill_port_channel_t *c = channel_of(op->p, op->chan); /* (NULL: destroyed meanwhile) */
    if (s != RILL_SUCCESS)
        RILL_ERROR(RILL_LOG_GPU, "port channel %u (GPU %d): request %llu to rank %d: a send failed",
                   op->chan, op->p->ordinal, (unsigned long long)op->msg.seq, c ? c->net_rank : -1);
    if (c)
        c->net_sending--;
    if (--op->left == 0)
        free(op);
}

void gm_pcnet_carry(gm_proxy_t *p, rill_port_channel_t *c, unsigned type, uint64_t dst_off,
                    uint64_t src_off, uint64_t size, bool from_host, uint64_t pos)
{
    gm_pcnet_t *n = p->pcnet;
    sendop_t *op = calloc(1, sizeof(*op));
    if (!n || !op) {
        free(op);
        c->bad++;
        RILL_ERROR(RILL_LOG_GPU, "port channel %u (GPU %d): request %llu not sent: %s", c->id,
                   p->ordinal, (unsigned long long)pos, n ? "out of host memory" : "no net wire");
        return;
    }
    bool put = (type & RILL_PC_PUT) && size > 0;
    op->p = p;
    op->chan = c->id;
    op->msg = (pcnet_msg_t){ .magic = MSG_REQ,
                             .chan = c->id,
                             .rank = p->ctx->rank,
                             .idx = p->gpu,
                             .type = type,
                             .from_host = from_host,
                             .seq = c->net_seq++,
                             .pos = pos,
                             .dst = c->dst_addr + dst_off,
                             .size = put ? size : 0,
                             .sem = c->sem_addr,
                             .value = (type & RILL_PC_SIGNAL) ? ++c->signals : 0,
                             .tag = put ? data_tag(p->ctx->rank, p->gpu, n->puts++) : 0 };
    /* the request, then the bytes on the same endpoint: the target posts their receive
     * when the request arrives (UCX holds them as unexpected until then) */
    op->left = 1 + put;
    rill_status_t s = rill_net_send(p->net, c->net_rank, c->net_idx, &op->msg, false,
                                    sizeof(op->msg), PCNET_TAG_REQ, send_done, op);
    if (s != RILL_SUCCESS) {
        RILL_ERROR(RILL_LOG_GPU, "port channel %u (GPU %d): request %llu to rank %d not sent: %s",
                   c->id, p->ordinal, (unsigned long long)pos, c->net_rank, rill_status_string(s));
        c->bad++;
        free(op);
        return;
    }
    c->net_sending++;
    RILL_VERBOSE(RILL_LOG_GPU, 3,
                 "port channel %u (GPU %d): request %llu (type %u, %llu bytes, pos %llu) to "
                 "rank %d's GPU %d",
                 c->id, p->ordinal, (unsigned long long)op->msg.seq, type,
                 (unsigned long long)op->msg.size, (unsigned long long)pos, c->net_rank,
                 c->net_idx);
    if (put) {
        s = gm_staged_send_net(p->mgr, c->net_rank, c->net_idx, op->msg.tag, c->src + src_off, true,
                               size, send_done, op);
        if (s == RILL_SUCCESS) {
            c->net_sending++;
        } else {
            /* the target waits for these bytes: said here, and the channel stops there */
            RILL_ERROR(RILL_LOG_GPU,
                       "port channel %u (GPU %d): the %llu bytes of request %llu to rank %d not "
                       "sent: %s",
                       c->id, p->ordinal, (unsigned long long)size, (unsigned long long)pos,
                       c->net_rank, rill_status_string(s));
            c->bad++;
            op->left--;
        }
        atomic_fetch_add_explicit(&p->n_put, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&p->b_put, size, memory_order_relaxed);
    }
    if (type & RILL_PC_SIGNAL)
        atomic_fetch_add_explicit(&p->n_signal, 1, memory_order_relaxed);
    if (type & RILL_PC_FLUSH)
        atomic_fetch_add_explicit(&p->n_flush, 1, memory_order_relaxed);
}

/* An acknowledgement: every request of the channel up to this flush was applied by the
 * target. The flushed word only grows (acknowledgements may be handled out of order). */
static void handle_ack(gm_proxy_t *p, const pcnet_msg_t *m)
{
    rill_port_channel_t *c = channel_of(p, m->chan);
    if (m->magic != MSG_ACK || !c || c->net_rank < 0)
        return; /* (a channel destroyed meanwhile) */
    RILL_VERBOSE(RILL_LOG_GPU, 3, "port channel %u (GPU %d): flush %llu acknowledged", c->id,
                 p->ordinal, (unsigned long long)m->pos);
    uint64_t *w = &c->flushed_host[m->from_host ? 1 : 0];
    /* release: pairs with the acquire load of the device (rill_pc_flush) or the host
     * (rill_port_channel_wait_flushed) */
    if (m->pos + 1 > *w)
        __atomic_store_n(w, m->pos + 1, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------ the target's side */

static bool region_ok(const gm_proxy_t *p, uint64_t addr, uint64_t size)
{
    for (int i = 0; i < p->nregions; i++)
        if (addr >= p->regions[i].base && size <= p->regions[i].size &&
            addr - p->regions[i].base <= p->regions[i].size - size)
            return true;
    return false;
}

/* Apply ch's requests in order while the next one's bytes are in: the signal's write on
 * the stream, a flush's acknowledgement queued (sent once the writes before it are done). */
static void apply(gm_pcnet_t *n, inchan_t *ch)
{
    inreq_t *r;
    while ((r = ch->pending) && r->m.seq == ch->next_seq && r->landed) {
        RILL_VERBOSE(RILL_LOG_GPU, 3,
                     "port channel %u of rank %d: request %llu applied (type %u, signal %llu)",
                     ch->chan, ch->rank, (unsigned long long)r->m.seq, r->m.type,
                     (unsigned long long)r->m.value);
        if ((r->m.type & RILL_PC_SIGNAL) && r->sem_ok) {
            /* the bytes before are in (the pipeline's copies into the GPU completed), and
             * the write has a memory barrier first: a waiter that acquires the value sees
             * them */
            char err[200];
            if (rill_cu_stream_write64(n->stream, (uint64_t *)(uintptr_t)r->m.sem, r->m.value, err,
                                       sizeof(err)) != RILL_SUCCESS)
                RILL_ERROR(RILL_LOG_GPU, "port channel %u of rank %d: signal: %s", ch->chan,
                           ch->rank, err);
        }
        if (r->m.type & RILL_PC_FLUSH) {
            ack_t *a = malloc(sizeof(*a));
            if (a) {
                a->next = NULL;
                a->m = r->m;
                a->m.magic = MSG_ACK;
                /* sent once the signals written before it are done (NULL: none pending) */
                a->ev = rill_cuda_event_get(n->p->res, false);
                if (a->ev && cudaEventRecord(a->ev, n->stream) != cudaSuccess) {
                    (void)cudaGetLastError();
                    rill_cuda_event_put(n->p->res, a->ev, false);
                    a->ev = NULL;
                }
                *n->acks_tail = a;
                n->acks_tail = &a->next;
            } else
                RILL_ERROR(RILL_LOG_GPU,
                           "port channel %u of rank %d: out of host memory for a flush's "
                           "acknowledgement",
                           ch->chan, ch->rank);
        }
        ch->pending = r->next;
        ch->next_seq++;
        free(r);
    }
}

static void data_done(void *arg, rill_status_t s)
{
    inreq_t *r = arg;
    RILL_VERBOSE(RILL_LOG_GPU, 3, "port channel %u of rank %d: the bytes of request %llu are in",
                 r->ch->chan, r->ch->rank, (unsigned long long)r->m.seq);
    r->receiving = false;
    r->landed = true; /* (applied by gm_pcnet_step, in the channel's order) */
    r->n->landed = true;
    if (s != RILL_SUCCESS)
        RILL_ERROR(RILL_LOG_GPU,
                   "port channel %u of rank %d: receiving the %llu bytes of request %llu failed",
                   r->ch->chan, r->ch->rank, (unsigned long long)r->m.size,
                   (unsigned long long)r->m.seq);
}

static void handle_req(gm_pcnet_t *n, const pcnet_msg_t *m)
{
    gm_proxy_t *p = n->p;
    if (m->magic != MSG_REQ || m->rank < 0 || m->rank >= p->ctx->nranks) {
        RILL_ERROR(RILL_LOG_GPU, "GPU %d: a malformed port channel request (magic %#x, rank %d)",
                   p->ordinal, m->magic, m->rank);
        return;
    }
    inchan_t *ch = n->in;
    while (ch && (ch->rank != m->rank || ch->chan != m->chan))
        ch = ch->next;
    inreq_t *r = calloc(1, sizeof(*r));
    if (!ch && r && (ch = calloc(1, sizeof(*ch)))) {
        ch->rank = m->rank;
        ch->chan = m->chan;
        ch->next = n->in;
        n->in = ch;
    }
    if (!r || !ch) {
        free(r);
        RILL_ERROR(RILL_LOG_GPU,
                   "GPU %d: out of host memory for request %llu of rank %d's port channel %u",
                   p->ordinal, (unsigned long long)m->seq, m->rank, m->chan);
        return;
    }
    RILL_VERBOSE(RILL_LOG_GPU, 3,
                 "GPU %d: request %llu of rank %d's port channel %u (type %u, %llu bytes) came",
                 p->ordinal, (unsigned long long)m->seq, m->rank, m->chan, m->type,
                 (unsigned long long)m->size);
    bool twice = m->seq < ch->next_seq;
    for (inreq_t *q = ch->pending; q && !twice; q = q->next)
        twice = q->m.seq == m->seq;
    if (twice) { /* (a protocol error: nothing of it is carried out) */
        RILL_ERROR(RILL_LOG_GPU, "port channel %u of rank %d: request %llu came twice", m->chan,
                   m->rank, (unsigned long long)m->seq);
        free(r);
        return;
    }
    r->n = n;
    r->ch = ch;
    r->m = *m;
    r->landed = true;
    if (m->size > 0) {
        r->landed = false;
        bool ok = region_ok(p, m->dst, m->size);
        if (!ok)
            RILL_ERROR(RILL_LOG_GPU,
                       "port channel %u of rank %d: a put of %llu bytes into %#llx, outside "
                       "the memory of GPU %d registered here (rill_regmem_get, "
                       "rill_gpu_alloc): refused",
                       m->chan, m->rank, (unsigned long long)m->size, (unsigned long long)m->dst,
                       p->ordinal);
        /* (refused: the chunks are taken and dropped, so the sender's end) */
        gm_pipe_t *pipe;
        rill_status_t s =
            gm_staged_recv_net(p->mgr, m->rank, m->tag, ok ? (void *)(uintptr_t)m->dst : NULL,
                               m->size, data_done, r, &pipe);
        r->receiving = s == RILL_SUCCESS;
        if (s != RILL_SUCCESS) {
            RILL_ERROR(RILL_LOG_GPU,
                       "port channel %u of rank %d: the receive of %llu bytes not posted: %s",
                       m->chan, m->rank, (unsigned long long)m->size, rill_status_string(s));
            r->landed = true;
        }
    }
    if (m->type & RILL_PC_SIGNAL) {
        r->sem_ok = region_ok(p, m->sem, sizeof(uint64_t));
        if (!r->sem_ok)
            RILL_ERROR(RILL_LOG_GPU,
                       "port channel %u of rank %d: its semaphore at %#llx is not in the memory "
                       "of GPU %d registered here: signal refused",
                       m->chan, m->rank, (unsigned long long)m->sem, p->ordinal);
    }
    inreq_t **at = &ch->pending;
    while (*at && (*at)->m.seq <= r->m.seq)
        at = &(*at)->next;
    r->next = *at;
    *at = r;
}

/* ------------------------------------------------------------ the loop */

int gm_pcnet_step(gm_proxy_t *p)
{
    gm_pcnet_t *n = p->pcnet;
    if (!n)
        return 0;
    int work = 0;
    /* (the scans only when something came: this runs every turn of the manager's loop) */
    for (int i = 0; n->nready > 0 && i < 2 * PCNET_STANDING; i++) {
        standing_t *st = &n->st[i];
        if (!st->ready)
            continue;
        n->nready--;
        n->landed = true;
        pcnet_msg_t m = st->msg;
        bool ok = st->ok;
        standing_post(n, st); /* (before handling: the next message may be in already) */
        if (ok && st->ack)
            handle_ack(p, &m);
        else if (ok)
            handle_req(n, &m);
        work++;
    }
    bool landed = n->landed;
    n->landed = false;
    for (inchan_t *ch = landed ? n->in : NULL; ch; ch = ch->next)
        if (ch->pending && ch->pending->landed && ch->pending->m.seq == ch->next_seq) {
            apply(n, ch);
            work++;
        }
    /* a flush is acknowledged once the signals written before it are done (its event), in
     * the order they came */
    while (n->acks) {
        ack_t *a = n->acks;
        if (a->ev) {
            cudaError_t e = cudaEventQuery(a->ev);
            if (e == cudaErrorNotReady)
                break;
            if (e != cudaSuccess) {
                (void)cudaGetLastError();
                RILL_ERROR(RILL_LOG_GPU, "GPU %d: a port channel's signal failed: %s", p->ordinal,
                           cudaGetErrorString(e));
            }
            rill_cuda_event_put(p->res, a->ev, false);
        }
        n->acks = a->next;
        if (!n->acks)
            n->acks_tail = &n->acks;
        sendop_t *op = calloc(1, sizeof(*op));
        rill_status_t s = RILL_ERR_NO_MEMORY;
        if (op) {
            op->p = p;
            op->chan = 0; /* (no channel of ours to count it against) */
            op->left = 1;
            op->msg = a->m;
            s = rill_net_send(p->net, a->m.rank, a->m.idx, &op->msg, false, sizeof(op->msg),
                              PCNET_TAG_ACK, send_done, op);
        }
        if (s != RILL_SUCCESS) {
            RILL_ERROR(RILL_LOG_GPU,
                       "port channel %u of rank %d: the acknowledgement of flush %llu not sent: "
                       "%s",
                       a->m.chan, a->m.rank, (unsigned long long)a->m.pos, rill_status_string(s));
            free(op);
        }
        free(a);
        work++;
    }
    if (work)
        p->last_active_ns = rill_time_ns();
    return work;
}

bool gm_pcnet_target(const gm_proxy_t *p)
{
    return p->pcnet && p->nregions > 0;
}

int gm_proxy_net_inflight(const gm_proxy_t *p)
{
    if (!p->net)
        return 0;
    return rill_net_inflight(p->net) - (p->pcnet ? p->pcnet->standing : 0);
}

void gm_pcnet_channel_drain(gm_proxy_t *p, rill_port_channel_t *c)
{
    uint64_t t0 = rill_time_ns();
    while (c->net_sending > 0 && rill_time_ns() - t0 < 30000000000ull) {
        rill_net_progress(p->net);
        gm_staged_progress(p->mgr); /* (the put's chunks) */
        gm_pcnet_step(p);
    }
    if (c->net_sending > 0)
        RILL_ERROR(RILL_LOG_GPU,
                   "port channel %u (GPU %d): %d send(s) to rank %d not completed after 30 s; "
                   "destroyed anyway",
                   c->id, p->ordinal, c->net_sending, c->net_rank);
}

void gm_pcnet_stop(gm_proxy_t *p)
{
    gm_pcnet_t *n = p->pcnet;
    if (!n)
        return;
    n->stopping = true;
    for (int i = 0; i < 2 * PCNET_STANDING; i++)
        if (n->st[i].posted)
            rill_net_cancel(p->net, n->st[i].req);
    /* the cancelled receives complete (their done runs) before their memory goes; the
     * pipeline's transfers left (a sender that never sent) stay with it (staged.c) */
    uint64_t t0 = rill_time_ns();
    while (n->standing > 0 && rill_time_ns() - t0 < 2000000000ull)
        rill_net_progress(p->net);
    bool left = n->standing > 0;
    if (left)
        RILL_WARN(RILL_LOG_GPU, "GPU %d: %d receive(s) of port channels still posted at the end",
                  p->ordinal, n->standing);
    while (n->in) {
        inchan_t *ch = n->in;
        n->in = ch->next;
        while (ch->pending) {
            inreq_t *r = ch->pending;
            ch->pending = r->next;
            if (!r->receiving) /* (else its pipe, which never ends now, points at it) */
                free(r);
        }
        free(ch);
    }
    while (n->acks) {
        ack_t *a = n->acks;
        n->acks = a->next;
        if (a->ev)
            rill_cuda_event_put(p->res, a->ev, false);
        free(a);
    }
    if (!left)
        free(n); /* (else the standing receives may still point into it) */
    p->pcnet = NULL;
}
#endif
