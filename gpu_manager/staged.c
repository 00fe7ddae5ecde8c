/* The host-staged pipeline: a GPU tile moved to or from a rank whose GPU memory this one does
 * not reach (another node with MPI as the wire, or comm_gpu_direct = off), chunk by chunk
 * through pinned host buffers, the GPU copies overlapping the wire. It takes the place of
 * the net wire's send and receive in the landing protocol (remote.c): the receiver posts its
 * receive when the landing is held, the sender sends once the source is ready, and the
 * receiver's done (the bytes in its GPU) lets the landing's semaphore be written; so the
 * tile goes from the producer's GPU memory into the consumer's, with no host copy of the
 * datum on either rank (docs/architecture.md, "The host-staged pipeline"). Manager thread.
 *
 * A transfer (a pipe) of n chunks of comm_gpu_staged_chunk bytes (the last one shorter) has
 * GM_PIPE_SLOTS slots on each side, chunk k in slot k % GM_PIPE_SLOTS:
 * - sender: copy the chunk from the GPU into the slot's pinned buffer (its own stream, an
 *   event behind it), then, once the event completed, send it (a stream of the comm engine,
 *   rill_comm_stream_send, tag: the landing's); the slot is free once the send completed;
 * - receiver: receive the chunk into the slot's pinned buffer, then copy it into the GPU
 *   (its own stream, an event); the slot is free once the event completed.
 * The wire is MPI (the comm engine's streams), or, between nodes over UCX with comm_net_gpu
 * staged, the GPU's worker of the net wire moving host memory. Over MPI sends are posted in
 * chunk order and receives too, on one tag per landing, so MPI's ordering on (source, tag,
 * communicator) matches chunk k with chunk k; over the net wire each chunk has a tag of its
 * own. A tag names the landing's semaphore (and over MPI the receiver's GPU), which no other
 * landing holds until this one ended; its receives are all complete (or cancelled) by then.
 * Port channels between nodes (proxy_net.c) use the same pipes over the net wire with tags
 * of their own (gm_staged_send_net, gm_staged_recv_net; a receive into NULL drops the
 * chunks of a refused put).
 *
 * Ordering: a slot's state goes WIRE -> WIRE_DONE (or WIRE_FAILED) on the comm thread (or
 * this thread, over the net wire), with
 * a release store after MPI finished with the buffer; the manager reads it with an acquire
 * load before it copies out of (receiver) or into (sender) that buffer again. Everything
 * else of a pipe is the manager thread's. */
#include "gm_internal.h"

#if RILL_HAVE_CUDA

#define GM_PIPE_SLOTS      4
#define GM_PIPE_MAX_CHUNKS (1 << 20) /* (over the net wire, the index is in the tag's 20 bits) */

enum { SLOT_FREE, SLOT_COPY, SLOT_WIRE, SLOT_WIRE_DONE, SLOT_WIRE_FAILED };

typedef struct gm_pipe_slot {
    struct gm_pipe *pipe;
    void *buf;      /* pinned chunk buffer (from the manager's pool), NULL until needed */
    cudaEvent_t ev; /* behind its GPU copy */
    atomic_int state;
    uint64_t id; /* its stream operation while SLOT_WIRE (over MPI) */
    void *req;   /* its receive while SLOT_WIRE (over the net wire) */
} gm_pipe_slot_t;

struct gm_pipe {
    struct gm_pipe *next;
    bool recv;
    bool net;         /* chunks over the net wire (UCX, host memory), else MPI streams */
    int peer, tag;    /* the other rank, the MPI tag */
    int peer_idx;     /* send over the net wire: the receiver's GPU */
    uint64_t ntag;    /* over the net wire: chunk k's tag is ntag | k */
    char *gpu;        /* the tile in GPU memory (a send from host memory: NULL) */
    const char *host; /* a send from host memory: the bytes themselves (no copy) */
    size_t size, chunk;
    int nchunks;
    int next_copy; /* sender: chunks copied out (or, from host, ready to send) */
    int next_wire; /* chunks handed to the comm engine */
    int next_land; /* receiver: chunks whose copy into the GPU is enqueued */
    int ended;     /* chunks whose slot is free again */
    rill_status_t status;
    rill_net_done_fn done;
    void *arg;
    gm_pipe_slot_t slot[GM_PIPE_SLOTS];
};

/* The manager's side of the pipeline: its two copy streams, the pool of pinned chunk
 * buffers (kept until the manager stops) and its pipes in flight. */
struct gm_staged {
    cudaStream_t d2h, h2d;
    size_t chunk;
    void **pool;
    int npool, cap_pool, nalloc;
    gm_pipe_t *pipes;
    int inflight;
};

static gm_staged_t *staged_of(gm_t *m, char *err, size_t len)
{
    if (m->staged)
        return m->staged;
    gm_staged_t *s = calloc(1, sizeof(*s));
    cudaError_t e =
        s ? cudaStreamCreateWithFlags(&s->d2h, cudaStreamNonBlocking) : cudaErrorMemoryAllocation;
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&s->h2d, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        snprintf(err, len, "creating the host-staged pipeline's streams: %s",
                 cudaGetErrorString(e));
        if (s && s->d2h)
            cudaStreamDestroy(s->d2h);
        free(s);
        return NULL;
    }
    s->chunk = rill_comm_gpu_staged_chunk();
    m->staged = s;
    return s;
}

static void *pool_get(gm_staged_t *s)
{
    if (s->npool > 0)
        return s->pool[--s->npool];
    void *p = NULL;
    if (cudaHostAlloc(&p, s->chunk, cudaHostAllocPortable) != cudaSuccess) {
        (void)cudaGetLastError(); /* (not sticky: clear it) */
        return NULL;
    }
    s->nalloc++;
    return p;
}

static void pool_put(gm_staged_t *s, void *p);

cudaStream_t gm_staged_h2d(const gm_t *m)
{
    return m->staged ? m->staged->h2d : NULL;
}

rill_status_t gm_staged_reserve(gm_t *m, int nbufs)
{
    char err[200];
    gm_staged_t *s = staged_of(m, err, sizeof(err));
    if (!s) {
        RILL_ERROR(RILL_LOG_GPU, "GPU %d: %s", m->res->info.ordinal, err);
        return RILL_ERR_DEVICE;
    }
    while (s->nalloc < nbufs) {
        int before = s->npool;
        void *p = NULL;
        if (cudaHostAlloc(&p, s->chunk, cudaHostAllocPortable) != cudaSuccess) {
            (void)cudaGetLastError();
            RILL_ERROR(RILL_LOG_GPU, "GPU %d: %d pinned buffers of %zu bytes: out of pinned memory",
                       m->res->info.ordinal, nbufs, s->chunk);
            return RILL_ERR_NO_MEMORY;
        }
        s->nalloc++;
        pool_put(s, p);
        if (s->npool == before) /* (pool_put gave it back) */
            return RILL_ERR_NO_MEMORY;
    }
    return RILL_SUCCESS;
}

static void pool_put(gm_staged_t *s, void *p)
{
    if (!p)
        return;
    if (s->npool == s->cap_pool) {
        int cap = s->cap_pool ? 2 * s->cap_pool : 16;
        void **pool = realloc(s->pool, (size_t)cap * sizeof(*pool));
        if (!pool) { /* (cannot keep it: give it back) */
            cudaFreeHost(p);
            s->nalloc--;
            return;
        }
        s->pool = pool;
        s->cap_pool = cap;
    }
    s->pool[s->npool++] = p;
}

/* The comm thread: a chunk's send or receive ended (see the ordering above). */
static void slot_wire_done(void *arg, rill_status_t status)
{
    gm_pipe_slot_t *sl = arg;
    atomic_store_explicit(&sl->state, status == RILL_SUCCESS ? SLOT_WIRE_DONE : SLOT_WIRE_FAILED,
                          memory_order_release);
}

static size_t chunk_len(const gm_pipe_t *p, int k)
{
    size_t off = (size_t)k * p->chunk;
    return p->size - off < p->chunk ? p->size - off : p->chunk;
}

static rill_status_t pipe_new(gm_t *m, bool recv, int peer, int tag, size_t size,
                              rill_net_done_fn done, void *arg, gm_pipe_t **pp)
{
    char err[200];
    gm_staged_t *s = staged_of(m, err, sizeof(err));
    if (!s) {
        RILL_ERROR(RILL_LOG_GPU, "GPU %d: %s", m->res->info.ordinal, err);
        return RILL_ERR_DEVICE;
    }
    size_t nchunks = size ? (size + s->chunk - 1) / s->chunk : 1;
    if (nchunks > GM_PIPE_MAX_CHUNKS) {
        RILL_ERROR(RILL_LOG_GPU,
                   "GPU %d: a tile of %zu bytes is %zu chunks of comm_gpu_staged_chunk %zu "
                   "bytes: at most %d are allowed (raise comm_gpu_staged_chunk)",
                   m->res->info.ordinal, size, nchunks, s->chunk, GM_PIPE_MAX_CHUNKS);
        return RILL_ERR_INVALID_ARG;
    }
    gm_pipe_t *p = calloc(1, sizeof(*p));
    if (!p)
        return RILL_ERR_NO_MEMORY;
    p->recv = recv;
    p->peer = peer;
    p->tag = tag;
    p->size = size;
    p->chunk = s->chunk;
    p->nchunks = (int)nchunks;
    p->status = RILL_SUCCESS;
    p->done = done;
    p->arg = arg;
    for (int i = 0; i < GM_PIPE_SLOTS; i++) {
        p->slot[i].pipe = p;
        atomic_init(&p->slot[i].state, SLOT_FREE);
    }
    p->next = s->pipes;
    s->pipes = p;
    s->inflight++;
    *pp = p;
    return RILL_SUCCESS;
}

/* The tags of a landing's chunks. Over MPI: the receiver's GPU and the landing's semaphore
 * (sems are nsems <= GM_MAX_SEMS consecutive words, so (sem_off / 8) % GM_MAX_SEMS tells them
 * apart). Over the net wire (one worker per GPU, tags with no sender): the semaphore, the low
 * bits of its target and the chunk's index, with the top bit set (the net wire's tiles go
 * GPU direct or all through the pipeline, never both in one run: comm_net_gpu is the same
 * everywhere). */
static int mpi_tag(int gpu, uint64_t sem_off)
{
    return gpu * GM_MAX_SEMS + (int)((sem_off >> 3) % GM_MAX_SEMS);
}

static uint64_t net_tag_base(uint64_t sem_off, uint64_t target)
{
    return (1ull << 63) | (((sem_off >> 3) % GM_MAX_SEMS) << 44) | ((target & 0xffffffu) << 20);
}

int gm_staged_tag_max(void)
{
    return RILL_CUDA_MAX_GPUS * GM_MAX_SEMS - 1;
}

static rill_status_t send_new(gm_t *m, int peer, int tag, bool net, int peer_idx, uint64_t ntag,
                              const void *src, bool gpu, size_t size, rill_net_done_fn done,
                              void *arg)
{
    gm_pipe_t *p;
    rill_status_t s = pipe_new(m, false, peer, tag, size, done, arg, &p);
    if (s != RILL_SUCCESS)
        return s;
    p->net = net;
    p->peer_idx = peer_idx;
    p->ntag = ntag;
    if (gpu)
        p->gpu = (char *)src;
    else
        p->host = src;
    return RILL_SUCCESS;
}

static rill_status_t recv_new(gm_t *m, int peer, int tag, bool net, uint64_t ntag, void *dst,
                              size_t size, rill_net_done_fn done, void *arg, gm_pipe_t **pp)
{
    rill_status_t s = pipe_new(m, true, peer, tag, size, done, arg, pp);
    if (s != RILL_SUCCESS)
        return s;
    (*pp)->net = net;
    (*pp)->ntag = ntag;
    (*pp)->gpu = dst;
    return RILL_SUCCESS;
}

rill_status_t gm_staged_send(gm_t *m, const rill_remote_xfer_t *x, const void *src, bool gpu,
                             size_t size, rill_net_done_fn done, void *arg)
{
    return send_new(m, x->peer, mpi_tag(x->peer_gpu, x->sem_off), gm_peer_staged_net(x->peer),
                    x->peer_gpu, net_tag_base(x->sem_off, x->target), src, gpu, size, done, arg);
}

rill_status_t gm_staged_recv(gm_t *m, const rill_remote_xfer_t *x, void *dst, size_t size,
                             rill_net_done_fn done, void *arg, gm_pipe_t **pp)
{
    return recv_new(m, x->peer, mpi_tag(x->gpu, x->sem_off), gm_peer_staged_net(x->peer),
                    net_tag_base(x->sem_off, x->target), dst, size, done, arg, pp);
}

rill_status_t gm_staged_send_net(gm_t *m, int peer, int peer_idx, uint64_t ntag, const void *src,
                                 bool gpu, size_t size, rill_net_done_fn done, void *arg)
{
    return send_new(m, peer, 0, true, peer_idx, ntag, src, gpu, size, done, arg);
}

rill_status_t gm_staged_recv_net(gm_t *m, int peer, uint64_t ntag, void *dst, size_t size,
                                 rill_net_done_fn done, void *arg, gm_pipe_t **pp)
{
    return recv_new(m, peer, 0, true, ntag, dst, size, done, arg, pp);
}

void gm_staged_cancel(gm_t *m, gm_pipe_t *p)
{
    p->status = RILL_ERR_COMM;
    for (int i = 0; i < GM_PIPE_SLOTS; i++) {
        gm_pipe_slot_t *sl = &p->slot[i];
        if (atomic_load_explicit(&sl->state, memory_order_acquire) != SLOT_WIRE)
            continue;
        if (!p->net)
            rill_comm_stream_cancel(m->ctx->comm, sl->id);
        else if (p->recv && sl->req) /* (its done, on this thread, comes later) */
            rill_net_cancel(gm_proxy_net(m->proxy), sl->req);
    }
}

/* A pipe that failed: say why once; it starts nothing more, its receives posted are
 * cancelled (its sender may never send them), and it ends when nothing of it is in flight. */
static void pipe_fail(gm_t *m, gm_pipe_t *p, rill_status_t s, const char *what)
{
    if (p->status != RILL_SUCCESS)
        return;
    RILL_ERROR(RILL_LOG_GPU, "GPU %d: the host-staged pipeline %s rank %d (%zu bytes): %s",
               m->res->info.ordinal, p->recv ? "from" : "to", p->peer, p->size, what);
    if (p->recv)
        gm_staged_cancel(m, p);
    p->status = s;
}

/* Hand chunk k (in slot sl, from buf) to the wire: the comm engine's streams (MPI), or this
 * GPU's worker of the net wire (its done then runs on this thread, in its progress). */
static void pipe_wire(gm_t *m, gm_pipe_t *p, gm_pipe_slot_t *sl, int k, void *buf)
{
    atomic_store_explicit(&sl->state, SLOT_WIRE, memory_order_relaxed);
    rill_net_worker_t *w = p->net ? gm_proxy_net(m->proxy) : NULL;
    rill_status_t s;
    sl->req = NULL;
    if (p->net && !w)
        s = RILL_ERR_BAD_STATE;
    else if (p->net && p->recv)
        s = rill_net_recv(w, buf, false, chunk_len(p, k), p->ntag | (uint64_t)k, slot_wire_done, sl,
                          &sl->req);
    else if (p->net)
        s = rill_net_send(w, p->peer, p->peer_idx, buf, false, chunk_len(p, k),
                          p->ntag | (uint64_t)k, slot_wire_done, sl);
    else if (p->recv)
        s = rill_comm_stream_recv(m->ctx->comm, p->peer, p->tag, buf, chunk_len(p, k),
                                  slot_wire_done, sl, &sl->id);
    else
        s = rill_comm_stream_send(m->ctx->comm, p->peer, p->tag, buf, chunk_len(p, k),
                                  slot_wire_done, sl, &sl->id);
    if (s != RILL_SUCCESS) {
        atomic_store_explicit(&sl->state, SLOT_FREE, memory_order_relaxed);
        pipe_fail(m, p, s, "the comm engine refused a chunk");
        return;
    }
    RILL_VERBOSE(RILL_LOG_GPU, 4, "GPU %d: pipeline %s rank %d: chunk %d %s (tag %#llx)",
                 m->res->info.ordinal, p->recv ? "from" : "to", p->peer, k,
                 p->recv ? "receive posted" : "sent", (unsigned long long)(p->ntag | (uint64_t)k));
    p->next_wire++;
}

/* Enqueue chunk k's GPU copy through slot sl's buffer (d2h: out of the tile). */
static bool pipe_copy(gm_t *m, gm_staged_t *s, gm_pipe_t *p, gm_pipe_slot_t *sl, int k, bool d2h)
{
    size_t off = (size_t)k * p->chunk, len = chunk_len(p, k);
    if (!sl->ev && !(sl->ev = rill_cuda_event_get(m->res, false))) {
        pipe_fail(m, p, RILL_ERR_NO_MEMORY, "out of CUDA events");
        return false;
    }
    cudaStream_t st = d2h ? s->d2h : s->h2d;
    cudaError_t e = d2h ? cudaMemcpyAsync(sl->buf, p->gpu + off, len, cudaMemcpyDeviceToHost, st)
                        : cudaMemcpyAsync(p->gpu + off, sl->buf, len, cudaMemcpyHostToDevice, st);
    if (e == cudaSuccess)
        e = cudaEventRecord(sl->ev, st);
    if (e != cudaSuccess) {
        pipe_fail(m, p, RILL_ERR_DEVICE, cudaGetErrorString(e));
        return false;
    }
    atomic_store_explicit(&sl->state, SLOT_COPY, memory_order_relaxed);
    RILL_VERBOSE(RILL_LOG_GPU, 4, "GPU %d: pipeline %s rank %d: chunk %d's copy %s enqueued",
                 m->res->info.ordinal, p->recv ? "from" : "to", p->peer, k,
                 d2h ? "out of the GPU" : "into the GPU");
    atomic_fetch_add_explicit(d2h ? &m->n_d2h : &m->n_h2d, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(d2h ? &m->b_d2h : &m->b_h2d, len, memory_order_relaxed);
    return true;
}

/* Whether slot sl's copy completed (true), is still running (false); a failure fails p. */
static bool copy_done(gm_t *m, gm_pipe_t *p, gm_pipe_slot_t *sl)
{
    cudaError_t e = cudaEventQuery(sl->ev);
    if (e == cudaErrorNotReady)
        return false;
    if (e != cudaSuccess) {
        pipe_fail(m, p, RILL_ERR_DEVICE, cudaGetErrorString(e));
        (void)cudaGetLastError();
    }
    return true;
}

/* One step of pipe p; the number of things that moved on. */
static int pipe_step(gm_t *m, gm_staged_t *s, gm_pipe_t *p)
{
    int n = 0;
    /* slots whose work ended are free again (in any order) */
    for (int i = 0; i < GM_PIPE_SLOTS; i++) {
        gm_pipe_slot_t *sl = &p->slot[i];
        int st = atomic_load_explicit(&sl->state, memory_order_acquire);
        bool freed = false;
        if (st == SLOT_WIRE_FAILED) {
            pipe_fail(m, p, RILL_ERR_COMM,
                      p->recv ? "a chunk's receive failed" : "a chunk's send failed");
            freed = true;
        } else if (!p->recv && st == SLOT_WIRE_DONE) {
            freed = true;
        } else if (p->recv && st == SLOT_COPY) {
            freed = copy_done(m, p, sl);
        } else if (p->recv && st == SLOT_WIRE_DONE && (p->status != RILL_SUCCESS || !p->gpu)) {
            freed = true; /* (failed, or dropped: its bytes are not copied in) */
        } else if (!p->recv && st == SLOT_COPY && p->status != RILL_SUCCESS) {
            freed = p->host || copy_done(m, p, sl); /* (failed: not sent) */
        }
        if (freed) {
            atomic_store_explicit(&sl->state, SLOT_FREE, memory_order_relaxed);
            p->ended++;
            n++;
        }
    }
    if (p->status != RILL_SUCCESS)
        return n;
    if (!p->recv) {
        /* copy chunks out into free slots, then send them in order once copied */
        while (p->next_copy < p->nchunks) {
            gm_pipe_slot_t *sl = &p->slot[p->next_copy % GM_PIPE_SLOTS];
            if (atomic_load_explicit(&sl->state, memory_order_relaxed) != SLOT_FREE)
                break;
            if (p->host) { /* from host memory: nothing to copy */
                atomic_store_explicit(&sl->state, SLOT_COPY, memory_order_relaxed);
            } else {
                if (!sl->buf && !(sl->buf = pool_get(s))) {
                    pipe_fail(m, p, RILL_ERR_NO_MEMORY, "out of pinned host memory");
                    return n;
                }
                if (!pipe_copy(m, s, p, sl, p->next_copy, true))
                    return n;
            }
            p->next_copy++;
            n++;
        }
        while (p->next_wire < p->next_copy) {
            int k = p->next_wire;
            gm_pipe_slot_t *sl = &p->slot[k % GM_PIPE_SLOTS];
            if (!p->host && !copy_done(m, p, sl))
                break;
            if (p->status != RILL_SUCCESS)
                return n;
            pipe_wire(m, p, sl, k, p->host ? (void *)(p->host + (size_t)k * p->chunk) : sl->buf);
            n++;
        }
        return n;
    }
    /* receiver: receive chunks into free slots, then copy them in, in order */
    while (p->next_wire < p->nchunks) {
        gm_pipe_slot_t *sl = &p->slot[p->next_wire % GM_PIPE_SLOTS];
        if (atomic_load_explicit(&sl->state, memory_order_relaxed) != SLOT_FREE)
            break;
        if (!sl->buf && !(sl->buf = pool_get(s))) {
            pipe_fail(m, p, RILL_ERR_NO_MEMORY, "out of pinned host memory");
            return n;
        }
        pipe_wire(m, p, sl, p->next_wire, sl->buf);
        n++;
    }
    while (p->gpu && p->next_land < p->next_wire) {
        gm_pipe_slot_t *sl = &p->slot[p->next_land % GM_PIPE_SLOTS];
        if (atomic_load_explicit(&sl->state, memory_order_acquire) != SLOT_WIRE_DONE)
            break;
        if (!pipe_copy(m, s, p, sl, p->next_land, false))
            return n;
        p->next_land++;
        n++;
    }
    return n;
}

/* Pipe p ended (every chunk, or it failed and nothing of it is in flight): its buffers back
 * to the pool, its done. */
static void pipe_end(gm_t *m, gm_staged_t *s, gm_pipe_t *p)
{
    for (int i = 0; i < GM_PIPE_SLOTS; i++) {
        pool_put(s, p->slot[i].buf);
        if (p->slot[i].ev)
            rill_cuda_event_put(m->res, p->slot[i].ev, false);
    }
    s->inflight--;
    p->done(p->arg, p->status);
    free(p);
}

static bool pipe_idle(const gm_pipe_t *p)
{
    for (int i = 0; i < GM_PIPE_SLOTS; i++)
        if (atomic_load_explicit(&p->slot[i].state, memory_order_acquire) != SLOT_FREE)
            return false;
    return true;
}

int gm_staged_progress(gm_t *m)
{
    gm_staged_t *s = m->staged;
    if (!s || !s->pipes)
        return 0;
    int n = 0;
    gm_pipe_t **pp = &s->pipes, *done = NULL;
    while (*pp) {
        gm_pipe_t *p = *pp;
        n += pipe_step(m, s, p);
        if ((p->ended >= p->nchunks && p->status == RILL_SUCCESS) ||
            (p->status != RILL_SUCCESS && pipe_idle(p))) {
            *pp = p->next; /* (done below: a done may start another pipe) */
            p->next = done;
            done = p;
            n++;
        } else {
            pp = &p->next;
        }
    }
    while (done) {
        gm_pipe_t *p = done;
        done = p->next;
        pipe_end(m, s, p);
    }
    return n;
}

int gm_staged_inflight(const gm_t *m)
{
    return m->staged ? m->staged->inflight : 0;
}

void gm_staged_fini(gm_t *m)
{
    gm_staged_t *s = m->staged;
    if (!s)
        return;
    /* (the traffic is over: a pipe left means its peer never sent; its buffers stay) */
    if (s->inflight)
        RILL_WARN(RILL_LOG_GPU, "GPU %d: %d transfers of the host-staged pipeline left at the end",
                  m->res->info.ordinal, s->inflight);
    for (int i = 0; i < s->npool; i++)
        cudaFreeHost(s->pool[i]);
    free(s->pool);
    cudaStreamDestroy(s->d2h);
    cudaStreamDestroy(s->h2d);
    free(s);
    m->staged = NULL;
}

#endif /* RILL_HAVE_CUDA */
