/* The GPU manager's remote steps: landings (reserved ahead or on request, armed once their
 * put is enqueued), puts into other ranks' GPUs (CUDA IPC on a node, the net wire between
 * nodes) and their completion (docs/architecture.md, "GPU-direct remote dependencies").
 * Manager thread. */
#include "gm_internal.h"

#if RILL_HAVE_CUDA

static void remote_fail(gm_t *m, rill_remote_xfer_t *x, rill_status_t s, const char *what);
static void land_hold(gm_t *m, gm_entry_t *e, rill_remote_xfer_t *x);
static void land_unhold(gm_t *m, rill_remote_xfer_t *x);
static rill_status_t land_arm(gm_t *m, rill_remote_xfer_t *x, bool after, char *err, size_t len);
static bool land_start(gm_t *m, rill_remote_xfer_t *x);
static gm_op_t *launch_in_flight(gm_t *m, uint64_t launch, rill_data_copy_t *c);
static bool sm_reaches(gm_t *m, int peer, int gpu, const void *dst);
static void put_queued(gm_t *m, gm_op_t *op, int lane, size_t bytes, uint64_t t0, const char *what);
static void net_recv_done(void *arg, rill_status_t s);
static void net_land_post(gm_t *m, rill_remote_xfer_t *x);
static void net_put_done(void *arg, rill_status_t s);
static bool net_put_start(gm_t *m, rill_remote_xfer_t *x, rill_data_copy_t *src, const void *from,
                          cudaEvent_t after, bool behind, uint64_t t0);
static bool put_start(gm_t *m, rill_remote_xfer_t *x);
static bool reserve_start(gm_t *m, rill_remote_xfer_t *x);
static bool arm_start(gm_t *m, rill_remote_xfer_t *x, rill_remote_xfer_t *r);

/* Landing x takes reservation r's place (its GPU, block, semaphore and target, what the
 * sender needs) and is handed back to the engine (done). */
static bool land_answer(rill_remote_xfer_t *x, const rill_remote_xfer_t *r)
{
    x->gpu = r->gpu;
    x->device = r->device;
    x->dst_off = r->dst_off;
    x->sem_off = r->sem_off;
    x->target = r->target;
    x->done(x, RILL_SUCCESS);
    return true;
}

/* ------------------------------------------------------------ GPU-direct remote transfers */

/* The request cannot be carried out: say why (the front end fails its taskpool). */
static void remote_fail(gm_t *m, rill_remote_xfer_t *x, rill_status_t s, const char *what)
{
    rill_data_t *d = x->data;
    RILL_ERROR(RILL_LOG_GPU, "GPU %d: %s datum (key %llu, %zu bytes) %s rank %d: %s",
               m->res->info.ordinal, x->kind == RILL_REMOTE_LAND ? "receiving" : "sending",
               (unsigned long long)d->key, d->size, x->kind == RILL_REMOTE_LAND ? "from" : "to",
               x->peer, what);
    x->done(x, s);
}

/* Receive side (land_start): reserve the landing buffer (this GPU's copy of the datum) and
 * a semaphore; once the sender's put is enqueued, make the landing stream wait for its
 * signal (arm_start); the event recorded behind the wait (e->ready) orders every later use
 * of the copy on this GPU after the bytes landed, GPU side. false: not now (no room, no free
 * semaphore, or the old bytes are still read). */

/* Take e's block and a semaphore for the landing x: the copy holds no version until the
 * receive completes (nothing on this GPU uses it before the landing's wait is armed), other
 * GPUs do not read it and it is not evicted until it landed; x gets what the sender needs. */
static void land_hold(gm_t *m, gm_entry_t *e, rill_remote_xfer_t *x)
{
    rill_data_t *d = x->data;
    int k = m->free_sems[--m->nfree_sems];
    e->xfers++;
    e->landings++;
    e->w_stream = -1; /* its bytes come from another rank now */
    e->xfer_version = atomic_load_explicit(&d->version, memory_order_acquire) + 1;
    /* its bytes may be overwritten from now on: an older version it held is gone */
    atomic_store_explicit(&e->copy->coherency, RILL_COHERENCY_INVALID, memory_order_release);
    /* release: other GPUs see the copy as landing before they see it current */
    atomic_store_explicit(&e->copy->landing, 1, memory_order_release);
    x->entry = e;
    x->sem = k;
    x->gpu = m->gpu;
    if (gm_peer_net(x->peer))
        m->net_expect++;
    x->dst_off = gm_zone_offset(m->ctx, m->gpu, e->block);
    x->sem_off = gm_zone_offset(m->ctx, m->gpu, (uintptr_t)(m->sems + k));
    x->target = ++m->sem_seq[k]; /* targets only grow: an older write cannot meet it */
    if (gm_peer_net(x->peer))
        net_land_post(m, x);
}

/* Give back what land_hold took (x's sender was not told of it). */
static void land_unhold(gm_t *m, rill_remote_xfer_t *x)
{
    gm_entry_t *e = x->entry;
    e->xfers--;
    if (--e->landings == 0)
        atomic_store_explicit(&e->copy->landing, 0, memory_order_release);
    m->free_sems[m->nfree_sems++] = x->sem;
    m->epoch++;
    if (gm_peer_net(x->peer)) {
        m->net_expect--;
        gm_netland_t *l = &m->netland[x->sem];
        if (l->state == GM_NET_POSTED && gm_peer_staged(x->peer))
            gm_staged_cancel(m, l->req); /* (its done, cancelled, finds the slot given back) */
        else if (l->state == GM_NET_POSTED)
            rill_net_cancel(gm_proxy_net(m->proxy), l->req);
        l->state = GM_NET_NONE;
    }
}

/* Arm the landing x holds (land_hold): the landing stream waits for its semaphore (after
 * the older transfer into the block when after), the copy's ready event behind the wait,
 * so every later use of the copy on this GPU waits for the bytes on the GPU. */
static rill_status_t land_arm(gm_t *m, rill_remote_xfer_t *x, bool after, char *err, size_t len)
{
    gm_entry_t *e = x->entry;
    uint64_t t0 = m->trace ? rill_time_ns() : 0; /* traces: the host's steps of the arm */
    gm_op_t *op = gm_op_new(m, OP_LAND);
    if (!op || (!e->ready && !(e->ready = rill_cuda_event_get(m->res, false)))) {
        if (op)
            gm_op_free(m, op);
        snprintf(err, len, "out of host memory or CUDA events");
        return RILL_ERR_NO_MEMORY;
    }
    int lane = lane_of(m, x->peer);
    cudaStream_t st = m->land_stream[lane];
    gm_op_begin(m, op, st, m->timing); /* the span is the stream's wait for the bytes */
    cudaError_t ce = after ? cudaStreamWaitEvent(st, e->ready, 0) : cudaSuccess;
    rill_status_t rs = ce == cudaSuccess
                           ? rill_cu_stream_wait64(st, m->sems + x->sem, x->target, err, len)
                           : RILL_ERR_DEVICE;
    if (rs == RILL_SUCCESS && (ce = cudaEventRecord(e->ready, st)) == cudaSuccess)
        ce = gm_op_record(m, op, st);
    if (ce != cudaSuccess) {
        snprintf(err, len, "%s", cudaGetErrorString(ce));
        rs = RILL_ERR_DEVICE;
    }
    if (rs != RILL_SUCCESS) {
        gm_op_free(m, op);
        return rs;
    }
    op->nent = 1;
    op->ent[0] = e;
    op->version[0] = e->xfer_version;
    op->sem = x->sem;
    op->rank = x->peer;
    op->target = x->target;
    op->flow = x->flow;
    gm_fifo_push(m, fifo_land(m, lane), op);
    if (m->trace) {
        uint64_t t1 = rill_time_ns();
        rill_trace_slice("gpu", "arm", t0, t1, 0, 0, NULL);
        rill_trace_instant("gpu", "landing armed", t1);
    }
    atomic_fetch_add_explicit(&m->n_land, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->b_land, ((rill_data_t *)x->data)->size, memory_order_relaxed);
    if (gm_peer_net(x->peer)) /* (its bytes are there: armed only after the sender's flush) */
        m->net_expect--;
    return RILL_SUCCESS;
}

static bool land_start(gm_t *m, rill_remote_xfer_t *x)
{
    rill_data_t *d = x->data;
    if (x->early && x->early->reserved) {
        rill_remote_xfer_t *r = x->early;
        if (r->device != m->index) { /* reserved on another GPU: there */
            rill_device_t *dev = rill_device_get(r->device);
            dev->ops->remote(dev, x);
            return true;
        }
        if (x->put_coming)
            return arm_start(m, x, r);
        /* the sender is asked to put into the reservation; armed once its put is enqueued */
        return land_answer(x, r);
    }
    if (d->size > m->capacity) {
        char why[200];
        snprintf(why, sizeof(why),
                 "the datum is larger than the zone holds for data (%zu bytes): raise "
                 "device_cuda_memory_use or device_cuda_memory_size, or use smaller tiles",
                 m->capacity);
        remote_fail(m, x, RILL_ERR_NO_MEMORY, why);
        return true;
    }
    if (m->nfree_sems == 0)
        return false;
    gm_entry_t *e = gm_entry_of(m, d);
    if (!e) {
        remote_fail(m, x, RILL_ERR_NO_MEMORY, "out of host memory");
        return true;
    }
    rill_data_copy_t *c = e->copy;
    /* the receive writes the datum, so the tasks that read the older version have
     * completed; a transfer out of the block (home, to a peer GPU) may still run */
    if (e->writeback || atomic_load_explicit(&c->readers, memory_order_acquire) != 0)
        return false;
    if (x->put_coming && lane_full(m, x->peer)) /* (armed below: not before a wait ends) */
        return false;
    if (!e->block) {
        uintptr_t addr;
        if (gm_zone_get(m, d->size, &addr) != RILL_SUCCESS) {
            if (!x->waited) { /* counted once per landing */
                x->waited = true;
                atomic_fetch_add_explicit(&m->n_land_wait, 1, memory_order_relaxed);
            }
            return false;
        }
        gm_entry_set_block(m, e, addr);
    } else {
        gm_lru_touch(m, e);
    }
    bool after = e->xfers > 0; /* an older transfer into the block still in flight */
    if (x->put_coming && gm_peer_net(x->peer)) { /* (its receive must be posted first) */
        remote_fail(m, x, RILL_ERR_BAD_STATE,
                    "a landing from another node must be reserved before its put comes");
        return true;
    }
    if (!gm_copy_quiesce(c)) /* another GPU started reading it meanwhile */
        return false;
    land_hold(m, e, x);
    gm_copy_unquiesce(c);
    x->device = m->index;
    if (x->put_coming) { /* (the front end asks for a reservation first: not seen) */
        char err[200];
        rill_status_t rs = land_arm(m, x, after, err, sizeof(err));
        if (rs != RILL_SUCCESS) { /* nobody was told of it: give it back */
            land_unhold(m, x);
            remote_fail(m, x, rs, err);
            return true;
        }
        x->done(x, RILL_SUCCESS);
        return true;
    }
    /* held as a reservation (as reserve_start's) until the sender's put is enqueued: x is
     * it, armed by the landing that names it in early (arm_start) */
    e->ahead = true;
    m->early_bytes += d->size;
    x->after = after;
    x->reserved = true;
    x->done(x, RILL_SUCCESS); /* the front end asks the sender for the put */
    return true;
}

/* The task op of launch number launch, still in flight on an exec stream, that writes copy
 * c (which its body is enqueued to write); NULL when it completed (or is not such a task).
 * Manager thread: ops complete on this thread only, so the answer holds until it returns. */
static gm_op_t *launch_in_flight(gm_t *m, uint64_t launch, rill_data_copy_t *c)
{
    if (!c)
        return NULL;
    for (int f = 0; f < m->res->nexec; f++)
        for (gm_op_t *op = m->fifo[f].head; op; op = op->next)
            if (op->kind == OP_TASK && op->launch == launch) {
                for (int i = 0; i < op->nent; i++)
                    if (op->ent[i]->copy == c && op->ev)
                        return op;
                return NULL;
            }
    return NULL;
}

/* Whether this GPU's SMs reach dst, rank peer's GPU gpu's memory mapped here: the memory
 * is on this GPU, or on one this GPU has peer access to (asked once per peer GPU). */
static bool sm_reaches(gm_t *m, int peer, int gpu, const void *dst)
{
    if (peer < 0 || peer >= m->ctx->nranks || gpu < 0 || gpu >= RILL_CUDA_MAX_GPUS)
        return false;
    if (!m->sm_reach &&
        !(m->sm_reach = calloc((size_t)m->ctx->nranks * RILL_CUDA_MAX_GPUS, sizeof(int8_t))))
        return false;
    int8_t *r = &m->sm_reach[(size_t)peer * RILL_CUDA_MAX_GPUS + (size_t)gpu];
    if (*r == 0) {
        struct cudaPointerAttributes a;
        int me = m->res->info.ordinal, can = 0;
        if (cudaPointerGetAttributes(&a, dst) == cudaSuccess && a.device >= 0)
            can = a.device == me ||
                  (cudaDeviceCanAccessPeer(&can, me, a.device) == cudaSuccess && can);
        else
            (void)cudaGetLastError(); /* (not an error of the next call) */
        *r = can ? 1 : -1;
        RILL_VERBOSE(RILL_LOG_GPU, 1, "GPU %d: puts of up to %zu bytes to rank %d's GPU %d: %s", me,
                     m->put_sm_max, peer, gpu, can ? "by the SMs" : "by the copy engine");
    }
    return *r > 0;
}

/* Tiles to and from ranks of other nodes, over the net wire (UCX): two-sided, so that UCX
 * takes its best protocol for GPU memory on the transport it has (a zero-copy rendezvous
 * with GPUDirect RDMA over InfiniBand, a pipeline through host memory over TCP), where a
 * one-sided put of GPU memory over TCP ran at 0.3 GB/s (ucx_perftest ucp_put_bw, 2 x H100)
 * against 1.8-2.6 GB/s for a tagged send.
 *
 * The landing is the same as for a CUDA IPC put: block and semaphore held (land_hold),
 * announced or asked for; land_hold also posts the receive into the block, tagged with the
 * semaphore and its target (unique on this GPU: targets only grow). The sender's put stream
 * only waits for the source (the producer's event, or the landing the source came by) and
 * records an event: a NIC cannot wait on a stream. When this thread sees that event
 * (complete_op), the worker sends the bytes; when the send completes (the source is free
 * again), the receiver is told that the put is enqueued (x->enqueued). On the receiver,
 * the receive's completion enqueues the semaphore's write on the lane's landing stream;
 * the landing is armed (its wait for the semaphore) only once both happened (arm_start), so
 * the wait follows a write already enqueued on this GPU, never a host step of either rank:
 * the landing rule of device.h holds. The later uses of the copy are ordered behind the
 * wait as for a CUDA IPC landing.
 *
 * The host-staged pipeline (staged.c, gm_peer_staged) takes the net wire's place in all of
 * this: the same send once the source is ready, the same receive posted at land_hold, done
 * once the last chunk is in the block; its tag names the receiver's GPU and semaphore. */
static inline uint64_t net_tag(uint64_t sem_off, uint64_t target)
{
    return ((sem_off >> 3) << 28) ^ (target & ((1ull << 28) - 1));
}

/* A put's op is on its lane's put stream: into the fifo, traced (the host's steps since t0)
 * and counted. */
static void put_queued(gm_t *m, gm_op_t *op, int lane, size_t bytes, uint64_t t0, const char *what)
{
    gm_fifo_push(m, fifo_put(m, lane), op);
    if (m->trace) {
        uint64_t t1 = rill_time_ns();
        rill_trace_slice("gpu", "put", t0, t1, 0, 0, NULL);
        rill_trace_instant("gpu", what, t1);
    }
    atomic_fetch_add_explicit(&m->n_put, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->b_put, bytes, memory_order_relaxed);
}

typedef struct gm_netput {
    gm_t *m;
    rill_remote_xfer_t *x;
    rill_data_copy_t *src; /* the GPU copy read (a reader held), or NULL: the host copy */
    const void *from;
} gm_netput_t;

/* A receive of a held landing, by its semaphore slot. */
typedef struct gm_netrecv {
    gm_t *m;
    int sem;
    uint64_t target;
} gm_netrecv_t;

/* The bytes of the landing of semaphore r->sem came (or its receive failed, or was
 * cancelled when the landing was given back): its semaphore's write goes on its lane's
 * landing stream, where the wait arm_start enqueues follows it. */
static void net_recv_done(void *arg, rill_status_t s)
{
    gm_netrecv_t *r = arg;
    gm_t *m = r->m;
    gm_netland_t *l = &m->netland[r->sem];
    if (l->state == GM_NET_POSTED && l->target == r->target) {
        l->req = NULL;
        l->state = GM_NET_FAILED;
        char err[200];
        if (s == RILL_SUCCESS &&
            rill_cu_stream_write64(m->land_stream[l->lane], m->sems + r->sem, r->target, err,
                                   sizeof(err)) == RILL_SUCCESS)
            l->state = GM_NET_LANDED;
        else if (s == RILL_SUCCESS)
            RILL_ERROR(RILL_LOG_GPU, "GPU %d: the signal of a landing over the net wire: %s",
                       m->res->info.ordinal, err);
        m->epoch++;
    }
    free(r);
}

/* land_hold of a landing from a rank of another node: its receive. */
static void net_land_post(gm_t *m, rill_remote_xfer_t *x)
{
    gm_netland_t *l = &m->netland[x->sem];
    rill_data_t *d = x->data;
    gm_netrecv_t *r = malloc(sizeof(*r));
    l->target = x->target;
    l->lane = lane_of(m, x->peer);
    l->state = GM_NET_FAILED; /* (its arm fails: the run ends, saying why) */
    l->req = NULL;
    if (!r)
        return;
    r->m = m;
    r->sem = x->sem;
    r->target = x->target;
    l->state = GM_NET_POSTED;
    void *block = (void *)((gm_entry_t *)x->entry)->block;
    rill_status_t s =
        gm_peer_staged(x->peer)
            ? gm_staged_recv(m, x, block, d->size, net_recv_done, r, (gm_pipe_t **)&l->req)
            : rill_net_recv(gm_proxy_net(m->proxy), block, true, d->size,
                            net_tag(x->sem_off, x->target), net_recv_done, r, &l->req);
    if (s != RILL_SUCCESS) {
        l->state = GM_NET_FAILED;
        free(r);
    }
}

static void net_put_done(void *arg, rill_status_t s)
{
    gm_netput_t *np = arg;
    rill_remote_xfer_t *x = np->x;
    if (s == RILL_SUCCESS && x->enqueued)
        x->enqueued(x); /* the receiver arms once its receive completed too */
    if (np->src)
        gm_copy_reader_put(np->src);
    if (s != RILL_SUCCESS)
        remote_fail(np->m, x, s, "the send over the net wire failed");
    else
        x->done(x, RILL_SUCCESS);
    free(np);
}

/* The put stream saw the source ready: hand the bytes to the net wire. */
void gm_net_put_go(gm_t *m, gm_op_t *op, cudaError_t err)
{
    gm_netput_t *np = op->netput;
    rill_remote_xfer_t *x = np->x;
    rill_data_t *d = x->data;
    rill_status_t s = RILL_ERR_DEVICE;
    if (err == cudaSuccess) {
        s = gm_peer_staged(x->peer)
                ? gm_staged_send(m, x, np->from, np->src != NULL, d->size, net_put_done, np)
                : rill_net_send(gm_proxy_net(m->proxy), x->peer, x->peer_gpu, np->from,
                                np->src != NULL, d->size, net_tag(x->sem_off, x->target),
                                net_put_done, np);
        if (s == RILL_SUCCESS)
            return;
    }
    if (np->src)
        gm_copy_reader_put(np->src);
    remote_fail(m, x, s,
                err != cudaSuccess ? cudaGetErrorString(err) : "the net wire refused the send");
    free(np);
}

static bool net_put_start(gm_t *m, rill_remote_xfer_t *x, rill_data_copy_t *src, const void *from,
                          cudaEvent_t after, bool behind, uint64_t t0)
{
    rill_data_t *d = x->data;
    gm_netput_t *np = calloc(1, sizeof(*np));
    gm_op_t *op =
        np && (gm_peer_staged(x->peer) || gm_proxy_net(m->proxy)) ? gm_op_new(m, OP_PUT) : NULL;
    int lane = lane_of(m, x->peer);
    cudaStream_t st = m->put_stream[lane];
    cudaError_t ce = cudaSuccess;
    if (op) {
        gm_op_begin(m, op, st, m->trace);
        if (after)
            ce = cudaStreamWaitEvent(st, after, 0);
        if (ce == cudaSuccess)
            ce = gm_op_record(m, op, st);
    }
    if (!op || ce != cudaSuccess) {
        if (op)
            gm_op_free(m, op);
        free(np);
        if (src)
            gm_copy_reader_put(src);
        remote_fail(m, x, op ? RILL_ERR_DEVICE : RILL_ERR_NO_MEMORY,
                    op ? cudaGetErrorString(ce)
                       : "out of host memory (or no worker of the net wire on this GPU)");
        return true;
    }
    np->m = m;
    np->x = x;
    np->src = src;
    np->from = from;
    op->netput = np;
    op->rx = x;
    op->rank = x->peer;
    op->flow = x->flow;
    op->from_stream = -1;
    put_queued(m, op, lane, d->size, t0, behind ? "net put waits behind" : "net put waits");
    return true;
}

/* Send side: copy the newest copy into the receiver's landing buffer, then its semaphore,
 * on the put stream. The source copy keeps a reader until the op's event completed. false:
 * not now (the only current copy is on its way home). */
static bool put_start(gm_t *m, rill_remote_xfer_t *x)
{
    uint64_t t0 = m->trace ? rill_time_ns() : 0; /* traces: the host's steps of the put */
    rill_data_t *d = x->data;
    rill_data_copy_t *c = rill_data_copy(d, m->index), *src = NULL;
    const void *from = NULL;
    cudaEvent_t after = NULL;
    gm_op_t *producer = x->behind ? launch_in_flight(m, x->behind, c) : NULL;
    RILL_VERBOSE(RILL_LOG_GPU, 3,
                 "GPU %d: put of datum (key %llu) to rank %d: producer's launch %llu (of %llu), "
                 "%s",
                 m->res->info.ordinal, (unsigned long long)d->key, x->peer,
                 (unsigned long long)x->behind, (unsigned long long)m->launches,
                 producer ? "in flight: the put goes behind it" : "not in flight");
    if (producer && gm_copy_reader_get(c)) {
        /* the producer's body is enqueued and not seen complete: the copy it writes is the
         * version sent (its own reader pins the copy, so ours cannot fail; ours keeps it
         * until the put's event), and the put goes behind its event on the GPU. The version
         * counts the write only once the host sees the completion: no currency check. */
        src = c;
        from = c->ptr;
        after = producer->ev;
        atomic_fetch_add_explicit(&m->n_behind, 1, memory_order_relaxed);
    } else if (c && rill_data_copy_current(d, c) && !((gm_entry_t *)c->dev_priv)->ahead &&
               gm_copy_reader_get(c)) {
        if (rill_data_copy_current(d, c) && c->ptr) {
            gm_entry_t *e = c->dev_priv;
            src = c;
            from = c->ptr;
            if (e->xfers > 0) /* still landing (received, and sent on) */
                after = e->ready;
        } else {
            gm_copy_reader_put(c);
        }
    }
    if (!src) {
        rill_data_copy_t *host = rill_data_host_copy(d);
        if (host && rill_data_copy_current(d, host)) {
            from = host->ptr;
            rill_data_copy_pin(host);
        } else {
            for (int g = 1; g < rill_device_count(); g++) { /* another GPU has it: there */
                rill_data_copy_t *o = rill_data_copy(d, g);
                rill_device_t *dev = rill_device_get(g);
                if (g != m->index && dev->type == RILL_BODY_CUDA && o &&
                    rill_data_copy_current(d, o)) {
                    dev->ops->remote(dev, x);
                    return true;
                }
            }
            return false;
        }
    }
    if (gm_peer_net(x->peer))
        return net_put_start(m, x, src, from, after, producer != NULL, t0);
    char err[256];
    void *dst = NULL, *sem = NULL;
    rill_status_t rs =
        gm_peer_zone_map(x->peer, x->peer_gpu, x->dst_off, d->size, &dst, err, sizeof(err));
    if (rs == RILL_SUCCESS)
        rs = gm_peer_zone_map(x->peer, x->peer_gpu, x->sem_off, sizeof(uint64_t), &sem, err,
                              sizeof(err));
    gm_op_t *op = rs == RILL_SUCCESS ? gm_op_new(m, OP_PUT) : NULL;
    if (rs == RILL_SUCCESS && !op) {
        rs = RILL_ERR_NO_MEMORY;
        snprintf(err, sizeof(err), "out of host memory");
    }
    int lane = lane_of(m, x->peer);
    cudaStream_t st = m->put_stream[lane];
    cudaError_t ce = cudaSuccess;
    if (rs == RILL_SUCCESS) {
        gm_op_begin(m, op, st, m->trace);
        if (after)
            ce = cudaStreamWaitEvent(st, after, 0);
        /* a small tile of this GPU's by its SMs, copy and signal in one kernel (put.cu) */
        bool by_sm = src && d->size <= m->put_sm_max && sm_reaches(m, x->peer, x->peer_gpu, dst);
        if (ce == cudaSuccess && by_sm) {
            if ((ce = gm_put_sm(dst, from, d->size, sem, x->target, st)) == cudaSuccess) {
                atomic_fetch_add_explicit(&m->n_put_sm, 1, memory_order_relaxed);
                ce = gm_op_record(m, op, st);
            }
        } else if (ce == cudaSuccess) {
            ce = cudaMemcpyAsync(dst, from, d->size, cudaMemcpyDefault, st);
            /* the signal on the same stream, after the data (rill_cu_stream_write64 orders
             * it behind the copy's writes with its memory barrier): the receiver's wait on
             * the semaphore then sees the bytes */
            if (ce == cudaSuccess &&
                (rs = rill_cu_stream_write64(st, sem, x->target, err, sizeof(err))) == RILL_SUCCESS)
                ce = gm_op_record(m, op, st);
        }
        if (ce != cudaSuccess) {
            rs = RILL_ERR_DEVICE;
            snprintf(err, sizeof(err), "%s", cudaGetErrorString(ce));
        }
    }
    if (rs != RILL_SUCCESS) {
        if (op)
            gm_op_free(m, op);
        if (src)
            gm_copy_reader_put(src);
        remote_fail(m, x, rs, err);
        return true;
    }
    op->src[0] = src;
    op->rx = x;
    op->rank = x->peer;
    op->flow = x->flow;
    op->from_stream = -1;
    gm_entry_t *se = src ? src->dev_priv : NULL;
    if (x->flow && producer && producer->nflow_out < 4) { /* the flow starts in its slice */
        producer->flow_out[producer->nflow_out++] = x->flow;
        op->flow_from_kernel = true;
    } else if (x->flow && se && !producer && se->w_stream >= 0) { /* the last writer's */
        op->from_stream = se->w_stream;
        op->from_t = se->w_t;
        op->flow_from_kernel = true;
    }
    put_queued(m, op, lane, d->size, t0, producer ? "put enqueued behind" : "put enqueued");
    if (x->enqueued) /* the receiver's stream may wait for it now (device.h) */
        x->enqueued(x);
    return true;
}

/* Early announcement, receive side: reserve the landing buffer and a semaphore now, if they
 * are free at once and within a quarter of the zone (reservations held ahead must not
 * starve the tasks' launches); no wait is enqueued until the landing that uses it. */
static bool reserve_start(gm_t *m, rill_remote_xfer_t *x)
{
    rill_data_t *d = x->data;
    gm_entry_t *e = NULL;
    bool ok = m->nfree_sems > m->nsems / 4 && m->early_bytes + d->size <= m->capacity / 4 &&
              (e = gm_entry_of(m, d)) && !e->writeback && e->xfers == 0 &&
              atomic_load_explicit(&e->copy->readers, memory_order_acquire) == 0;
    if (ok && !e->block) {
        uintptr_t addr;
        if ((ok = rill_zone_alloc(m->res->zone, d->size, &addr) == RILL_SUCCESS))
            gm_entry_set_block(m, e, addr);
    }
    if (ok && (ok = gm_copy_quiesce(e->copy))) { /* (x->device: set by the front end) */
        land_hold(m, e, x);
        gm_copy_unquiesce(e->copy);
        e->ahead = true;
        m->early_bytes += d->size;
        atomic_fetch_add_explicit(&m->n_early, 1, memory_order_relaxed);
        if (m->trace)
            rill_trace_instant("gpu", "landing reserved ahead", rill_time_ns());
    }
    RILL_VERBOSE(RILL_LOG_GPU, 2,
                 "GPU %d: landing of datum (key %llu) reserved ahead: %s (%d semaphores free, "
                 "%zu of %zu bytes reserved ahead)",
                 m->res->info.ordinal, (unsigned long long)d->key, ok ? "yes" : "no", m->nfree_sems,
                 m->early_bytes, m->capacity / 4);
    x->reserved = ok;
    x->done(x, ok ? RILL_SUCCESS : RILL_ERR_BUSY);
    return true;
}

/* The landing x of reservation r (reserve_start): its put is enqueued on the sender's GPU, so the
 * landing stream may wait for it now. */
static bool arm_start(gm_t *m, rill_remote_xfer_t *x, rill_remote_xfer_t *r)
{
    if (lane_full(m, r->peer))
        return false;           /* (later, in order: its lane's landings behind it wait too) */
    if (gm_peer_net(r->peer)) { /* over the net: once its receive completed too */
        gm_netland_t *l = &m->netland[r->sem];
        if (l->state == GM_NET_POSTED)
            return false;
        if (l->state != GM_NET_LANDED) {
            remote_fail(m, x, RILL_ERR_COMM, "its receive over the net wire failed");
            return true;
        }
        l->state = GM_NET_NONE;
    }
    char err[200];
    r->flow = x->flow;
    rill_status_t rs = land_arm(m, r, r->after, err, sizeof(err));
    if (rs != RILL_SUCCESS) {
        /* the reservation stays held: the sender's copy into it may still come, so neither
         * the block nor the semaphore may be given to anyone else (the front end ends the
         * run: DTD aborts) */
        remote_fail(m, x, rs, err);
        return true;
    }
    gm_entry_t *e = r->entry;
    m->early_bytes -= ((rill_data_t *)r->data)->size;
    e->ahead = false; /* e->ready is behind its wait from now on */
    return land_answer(x, r);
}

static inline rill_remote_xfer_t *rx_of(rill_mpsc_node_t *n)
{
    return (rill_remote_xfer_t *)((char *)n - offsetof(rill_remote_xfer_t, link));
}

/* Those waiting, then new requests (oldest first); the ones that cannot start wait, in
 * order. */
int gm_remote_step(gm_t *m)
{
    rill_mpsc_node_t *todo = m->remote_later, **tail = &todo;
    while (*tail)
        tail = &(*tail)->next;
    *tail = rill_mpsc_take_all(&m->remote);
    m->remote_later = NULL;
    rill_mpsc_node_t **later = &m->remote_later;
    int n = 0, waiting = 0;
    while (todo) {
        rill_mpsc_node_t *node = todo;
        todo = node->next; /* (a started request may be freed) */
        rill_remote_xfer_t *x = rx_of(node);
        bool started = x->kind == RILL_REMOTE_LAND  ? land_start(m, x)
                       : x->kind == RILL_REMOTE_PUT ? put_start(m, x)
                                                    : reserve_start(m, x);
        if (started) {
            n++;
        } else {
            node->next = NULL;
            *later = node;
            later = &node->next;
            waiting++;
        }
    }
    atomic_store_explicit(&m->n_remote_later, waiting, memory_order_relaxed); /* (watchdog) */
    return n;
}

#endif /* RILL_HAVE_CUDA */
