/* The remote-dependency engine (remote_dep.h): activations, their matching with the
 * receives that wait for them, the host route (inside the activation, or exposed for the
 * receiver's GET) and the GPU-to-GPU route (landing reserved and announced ahead, or asked
 * for when the version is ready; the put on the sender's GPU, behind its producer when it
 * can). docs/architecture.md ("Remote dependencies") has the protocol. */
#include "remote_dep.h"

#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "hmap.h"
#include "scheduler.h"

/** An activation in flight: expected (a receive waits for it) or arrived first; in the
 * announcements' table, the sender's record of a receiver's landing. */
typedef struct rill_rdep_act {
    struct rill_rdep_act *next;
    uint32_t tp_id, dc_id, version;
    uint64_t key;
    int src;
    rill_rdep_t *x;  /* the receive waiting for it, NULL if it arrived first; in anns: the
                      * send (DTD_ANN_LAUNCHED) */
    uint64_t size;   /* arrived: bytes of the datum */
    uint64_t handle; /* arrived: rendezvous handle, when not inline (from a GPU: the send) */
    uint32_t flags;  /* arrived: the message's flags (ACT_*); in anns: ANN_* */
    /* in anns (sender side): an announced landing (src: the receiver) */
    int32_t gpu;
    uint64_t dst_off, sem_off, target;
    void *payload; /* arrived: inline bytes (malloc'd), or NULL */
} rill_rdep_act_t;

/** Wire format of an activation; inline payload bytes follow when flags & ACT_INLINE; with
 * ACT_GPU the receiver's GPU asks for the bytes (get_msg_t) and handle names the send. */
typedef struct activate_msg {
    uint32_t tp_id, dc_id, version, flags;
    uint64_t key, size, handle;
} activate_msg_t;
#define ACT_INLINE 1u
#define ACT_GPU    2u
#define ACT_PUT    4u /* with ACT_GPU: the put into the announced landing is enqueued */
/* with ACT_GPU | ACT_PUT: the answer to a GPU request (the put into the landing it named is
 * enqueued); handle is the request's receive. On the activations' tag, so that a sender's
 * "put enqueued" words reach the receiver in the order of its puts, whichever path each
 * landing took (the comm engine keeps each tag's order, not the order across tags); they
 * are armed in that order when each receive is ready as its word comes (one that still
 * waits for a local predecessor is armed later, from the thread that releases it) */
#define ACT_ANSWER 8u

/** Wire format of an early announcement (receiver to sender, at the receive's insertion):
 * the landing reserved for a version, or (reserved 0) that there is none: the sender then
 * waits for the GPU request as without announcement. */
typedef struct announce_msg {
    uint32_t tp_id, dc_id, version, reserved;
    uint64_t key;
    int32_t gpu;
    uint32_t pad;
    uint64_t dst_off, sem_off, target;
} announce_msg_t;
#define ANN_RESERVED 1u /* anns entry: an announced landing */
#define ANN_NONE     2u /* anns entry: the receiver reserved nothing */
#define ANN_SENT     4u /* anns entry: the send went out before any announcement */
/* anns entry: the producer of the version is launched on a GPU and no announcement came
 * yet; x is the send, gpu the producer's device index and handle its launch number (an
 * announcement that comes while the body is in flight has the put enqueued behind it) */
#define ANN_LAUNCHED 8u

/** Wire format of a GPU's request for a version sent with ACT_GPU: where it lands in the
 * receiver's GPU zone and the semaphore value that says it landed. gpu < 0: the receiver
 * could not take it (the send completes with an error). */
typedef struct get_msg {
    uint64_t send; /* the activation's handle */
    int32_t gpu;   /* the receiver's GPU (position among its rank's GPUs) */
    uint32_t pad;
    uint64_t dst_off, sem_off, target;
    uint64_t recv; /* the receive, named in the answer (ACT_ANSWER) */
} get_msg_t;

static struct {
    rill_context_t *ctx;
    bool ready;
    /* activations in flight, shared by the inserting thread and the comm thread */
    rill_spinlock_t lock;
    rill_hmap_t acts; /* act_hash -> list of rill_rdep_act_t */
    rill_hmap_t anns; /* sender side: announcements and sends, per (version, receiver) */
    int am_tag;       /* the comm engine's tag of activations */
    int get_tag;      /* and of GPUs' requests for versions sent from GPU memory (their
                       * answers go on am_tag: ACT_ANSWER) */
    int ann_tag;      /* and of early announcements of landings */
} rd;

static int nchannels; /* the front-end channels opened (rill_rdep_channel_open) */

static void activate_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg);
static void gpu_get_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg);
static void announce_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg);
static void put_answered(rill_comm_t *comm, int src, uint64_t recv);

rill_status_t rill_rdep_init(rill_context_t *ctx)
{
    rd.ctx = ctx;
    nchannels = 0;
    rill_spinlock_init(&rd.lock);
    rill_hmap_init(&rd.acts);
    rill_hmap_init(&rd.anns);
    rd.ready = true;
    rill_status_t s = RILL_SUCCESS;
    if (ctx->nranks > 1 &&
        ((s = rill_comm_am_register_new(ctx->comm, activate_handler, NULL, &rd.am_tag)) !=
             RILL_SUCCESS ||
         (s = rill_comm_am_register_new(ctx->comm, gpu_get_handler, NULL, &rd.get_tag)) !=
             RILL_SUCCESS ||
         (s = rill_comm_am_register_new(ctx->comm, announce_handler, NULL, &rd.ann_tag)) !=
             RILL_SUCCESS))
        RILL_ERROR(RILL_LOG_RUNTIME, "cannot register the remote dependencies' messages: %s",
                   rill_status_string(s));
    return s;
}

static void table_free(rill_hmap_t *map)
{
    RILL_HMAP_FOREACH(map, e)
    {
        for (rill_rdep_act_t *a = e->val, *n; a; a = n) {
            n = a->next;
            free(a->payload);
            free(a);
        }
    }
    rill_hmap_fini(map);
}

void rill_rdep_fini(void)
{
    if (!rd.ready)
        return;
    table_free(&rd.acts);
    table_free(&rd.anns);
    nchannels = 0; /* (their tags end with the comm engine) */
    rd.ready = false;
}

/* ------------------------------------------------------------ names and tables */

static inline uint32_t dc_of(const rill_data_t *d)
{
    return d->dc ? d->dc->id : UINT32_MAX;
}

static inline uint32_t tp_of(const rill_rdep_t *x)
{
    return x->task->tp->id;
}

uint64_t rill_rdep_flow_id(uint32_t tp_id, const rill_data_t *d, uint32_t version, int dst)
{
    return rill_trace_flow_id(tp_id, (uint64_t)dc_of(d) << 32 | version, d->key, (uint64_t)dst);
}

/* Of transfer x's version moved GPU to GPU into rank dst: the flow from the producer's
 * kernel to the readers' kernels, which the GPU managers mark (the id the front end hands
 * a receive's readers: rill_rdep_flow_id ^ 1, so their kernels end it). */
static uint64_t xfer_flow_id(const rill_rdep_t *x, int dst)
{
    return x->flow ? x->flow : rill_rdep_flow_id(tp_of(x), x->data, x->version, dst);
}

static uint64_t kernel_flow_id(const rill_rdep_t *x, int dst)
{
    return xfer_flow_id(x, dst) ^ 1;
}

static inline uint64_t act_hash(uint32_t tp_id, uint32_t dc_id, uint64_t key, uint32_t version)
{
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)tp_id << 40) ^ ((uint64_t)dc_id << 20) ^ version;
    return h ? h : 1;
}

/* Find and unlink the entry of (tp, dc, key, version) in map (with src == rank unless rank
 * is -1); rd.lock held. */
static rill_rdep_act_t *entry_take(rill_hmap_t *map, uint64_t h, uint32_t tp_id, uint32_t dc_id,
                                   uint64_t key, uint32_t version, int rank)
{
    rill_rdep_act_t *head = rill_hmap_get(map, h), *prev = NULL;
    for (rill_rdep_act_t *a = head; a; prev = a, a = a->next) {
        if (a->tp_id != tp_id || a->dc_id != dc_id || a->key != key || a->version != version ||
            (rank >= 0 && a->src != rank))
            continue;
        if (prev)
            prev->next = a->next;
        else if (a->next)
            rill_hmap_put(map, h, a->next);
        else
            rill_hmap_remove(map, h);
        a->next = NULL;
        return a;
    }
    return NULL;
}

/* The activation of (tp, dc, key, version); rd.lock held. */
static rill_rdep_act_t *act_take(uint64_t h, uint32_t tp_id, uint32_t dc_id, uint64_t key,
                                 uint32_t version)
{
    return entry_take(&rd.acts, h, tp_id, dc_id, key, version, -1);
}

static rill_status_t act_add(uint64_t h, rill_rdep_act_t *a)
{
    a->next = rill_hmap_get(&rd.acts, h);
    return rill_hmap_put(&rd.acts, h, a);
}

static inline uint64_t ann_hash(uint32_t tp_id, uint32_t dc_id, uint64_t key, uint32_t version,
                                int rank)
{
    uint64_t h = act_hash(tp_id, dc_id, key, version) ^ ((uint64_t)(rank + 1) * 0x100000001b3ull);
    return h ? h : 1;
}

/* The announcement of (tp, dc, key, version) for receiver rank (or its mark); rd.lock
 * held. */
static rill_rdep_act_t *ann_take(uint64_t h, uint32_t tp_id, uint32_t dc_id, uint64_t key,
                                 uint32_t version, int rank)
{
    return entry_take(&rd.anns, h, tp_id, dc_id, key, version, rank);
}

static void ann_add(uint64_t h, rill_rdep_act_t *a)
{
    a->next = rill_hmap_get(&rd.anns, h);
    if (rill_hmap_put(&rd.anns, h, a) != RILL_SUCCESS) {
        RILL_ERROR(RILL_LOG_RUNTIME, "out of memory keeping an announcement");
        abort(); /* a lost one would leave a send waiting for a request that never comes */
    }
}

/* ------------------------------------------------------------ ends of a transfer */

static void xfer_done(rill_rdep_t *x, rill_status_t status)
{
    if (status != RILL_SUCCESS)
        rill_taskpool_fail(x->task->tp, status, "moving datum (collection %u, key %llu) failed: %s",
                           x->data->dc ? x->data->dc->id : 0, (unsigned long long)x->data->key,
                           rill_status_string(status));
    rill_task_complete(NULL, x->task, status == RILL_SUCCESS ? RILL_HOOK_DONE : RILL_HOOK_ERROR);
}

static void xfer_done_cb(void *arg, rill_status_t status)
{
    xfer_done(arg, status);
}

static void send_done(rill_rdep_t *x, rill_status_t status)
{
    rill_comm_expect(rd.ctx->comm, -1);
    xfer_done(x, status);
}

static void send_done_cb(void *arg, rill_status_t status)
{
    send_done(arg, status);
}

/* A version moving GPU to GPU with its landing announced ahead cannot be given up on one
 * side alone (the peer's copy engine may be writing into the landing, or the peer waits for
 * a put that will not come): end the run with the reason, as for a lost activation. */
static void remote_abort(const rill_rdep_t *x, const char *why)
{
    RILL_ERROR(RILL_LOG_RUNTIME,
               "datum (key %llu) version %u between this rank and rank %d, GPU to GPU: %s; "
               "the other rank would wait forever: aborting the run",
               (unsigned long long)x->data->key, x->version, x->peer, why);
    rill_comm_abort(rd.ctx->comm, 1);
}

/* ------------------------------------------------------------ activations */

/* Copy a message of the engine's (want bytes) out of what the comm engine handed over;
 * false (said) when it is too short. */
static bool msg_take(void *dst, size_t want, const void *msg, size_t len, const char *what, int src)
{
    if (len < want) {
        RILL_ERROR(RILL_LOG_RUNTIME, "%s of %zu bytes from rank %d is too short", what, len, src);
        return false;
    }
    memcpy(dst, msg, want);
    return true;
}

/* Comm thread: a version we will need (or already wait for) is ready at src. */
static void activate_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)arg;
    activate_msg_t m;
    if (len < sizeof(m)) {
        RILL_ERROR(RILL_LOG_RUNTIME, "activation of %zu bytes from rank %d is too short", len, src);
        return;
    }
    memcpy(&m, msg, sizeof(m));
    if (m.flags & ACT_ANSWER) {
        put_answered(comm, src, m.handle);
        return;
    }
    rill_rdep_act_t *a = calloc(1, sizeof(*a));
    if (a && (m.flags & ACT_INLINE)) {
        a->payload = malloc(m.size ? m.size : 1);
        if (a->payload && len >= sizeof(m) + m.size)
            memcpy(a->payload, (char *)msg + sizeof(m), m.size);
    }
    if (!a || ((m.flags & ACT_INLINE) && !a->payload)) {
        RILL_ERROR(RILL_LOG_RUNTIME, "out of memory receiving an activation from rank %d", src);
        abort(); /* a lost activation would hang every rank */
    }
    a->tp_id = m.tp_id;
    a->dc_id = m.dc_id;
    a->key = m.key;
    a->version = m.version;
    a->src = src;
    a->size = m.size;
    a->handle = m.handle;
    a->flags = m.flags;
    uint64_t h = act_hash(m.tp_id, m.dc_id, m.key, m.version);
    rill_spinlock_lock(&rd.lock);
    rill_rdep_act_t *expected = act_take(h, m.tp_id, m.dc_id, m.key, m.version);
    if (!expected) { /* the receive is not inserted yet: keep it for its insertion */
        if (act_add(h, a) != RILL_SUCCESS) {
            rill_spinlock_unlock(&rd.lock);
            RILL_ERROR(RILL_LOG_RUNTIME, "out of memory queueing an activation from rank %d", src);
            abort();
        }
        rill_spinlock_unlock(&rd.lock);
        return;
    }
    rill_spinlock_unlock(&rd.lock);
    rill_comm_expect(comm, -1);
    rill_rdep_t *x = expected->x;
    free(expected);
    x->act = a;
    /* acq_rel: the act pointer written above is seen by the thread that runs the receive */
    if (atomic_fetch_sub_explicit(x->deps, 1, memory_order_acq_rel) != 1)
        return;
    /* from the sender's GPU: the receive only hands the landing to a GPU's manager
     * (recv_to_gpu), so this thread runs it, one thread hop fewer than through a worker
     * (its wake-up and dispatch took 1.5 us, then 0.5 us more to reach the manager, in
     * traced 4 KiB hops between two H200s); its body needs no host copy (recv_needs_host) */
    if ((a->flags & ACT_GPU) && !a->payload)
        rill_task_run_here(rd.ctx, x->task);
    else
        rill_sched_push(rd.ctx, NULL, x->task, 1);
}

/* ------------------------------------------------------------ route */

bool rill_rdep_route(rill_context_t *ctx, const rill_data_t *d, int peer, bool gpu_side)
{
    return gpu_side && rill_device_count() > 1 && d->size > 0 &&
           d->size >= rill_comm_gpu_direct_min(ctx->comm) &&
           rill_context_gpu_direct(ctx, peer, NULL);
}

bool rill_rdep_send_needs_host(const rill_rdep_t *x)
{
    return !x->gpu; /* the bytes leave through the comm engine */
}

/* A receive needs the host copy (an older version brought home first, so that no write-back
 * lands over the new bytes) unless the version lands in GPU memory. */
bool rill_rdep_recv_needs_host(const rill_rdep_t *x)
{
    return !(x->act && (x->act->flags & ACT_GPU));
}

/* The GPU a version sent from a GPU lands in: the datum's advised GPU, else one chosen by
 * its key (the same one each time, so its block is reused). 0: none. */
static int landing_device(const rill_data_t *d)
{
    int ndev = rill_device_count();
    if (ndev <= 1)
        return 0;
    if (d->advised > 0 && d->advised < ndev)
        return d->advised;
    return 1 + (int)(d->key % (uint64_t)(ndev - 1));
}

/* ------------------------------------------------------------ GPU to GPU: landing */

/* Manager thread. Without put_coming: the landing buffer and semaphore are reserved (r is
 * the reservation, or early is): ask the sender for the bytes; the receive waits for its
 * answer, the put enqueued (put_answered), which arms the landing. With put_coming: the
 * GPU waits for the landing: complete the receive now (its GPU copy is the new version;
 * whatever uses it on that GPU waits for the landing there). */
static void land_done(rill_remote_xfer_t *r, rill_status_t s)
{
    rill_rdep_t *x = r->task;
    rill_comm_t *comm = rd.ctx->comm;
    if (s != RILL_SUCCESS && r->early && r->early->reserved)
        /* the sender may be copying into the landing already: it can be neither given back
         * nor waited for */
        remote_abort(x, "its landing buffer, reserved ahead, could not be armed");
    if (!r->put_coming) {
        get_msg_t m = { .send = r->cookie,
                        .gpu = s == RILL_SUCCESS ? r->gpu : -1,
                        .recv = (uint64_t)(uintptr_t)x };
        int peer = r->peer;
        if (s == RILL_SUCCESS) {
            m.dst_off = r->dst_off;
            m.sem_off = r->sem_off;
            m.target = r->target;
            /* the reservation the answer arms, in x->early before the request goes (the
             * answer's handler reads it: the comm thread takes the request after this) */
            if (r->early && r->early->reserved) { /* the one made ahead */
                free(r);
            } else {            /* r is the reservation */
                free(r->early); /* (ahead, none could be made) */
                r->early = NULL;
                x->early = r;
            }
        }
        /* sent even on failure: the sender's send ends (with an error) rather than waiting */
        if (s == RILL_SUCCESS) /* the answer, on the critical path (put_answered) */
            rill_comm_expect(comm, 1);
        rill_status_t ss =
            rill_comm_am_send(comm, peer, rd.get_tag, &m, sizeof(m), x->task->prio.priority);
        if (s == RILL_SUCCESS && ss != RILL_SUCCESS) /* the sender would wait for it */
            remote_abort(x, "the request for its put could not be sent");
        if (s == RILL_SUCCESS)
            return; /* the receive waits for the answer */
    }
    if (s == RILL_SUCCESS)
        x->task->device = (int16_t)r->device; /* the front end: the GPU copy is written */
    x->early = NULL;
    free(r->early);
    free(r);
    xfer_done(x, s);
}

/* Comm thread: the sender's put into the landing receive recv asked for is enqueued on its
 * GPU (an activation with ACT_ANSWER): the landing stream may wait for it now (land_done
 * then completes the receive). */
static void put_answered(rill_comm_t *comm, int src, uint64_t recv)
{
    rill_rdep_t *x = (rill_rdep_t *)(uintptr_t)recv; /* our own pointer, echoed */
    if (!x || x->magic != RILL_RDEP_RECV || !x->early || !x->early->reserved) {
        RILL_ERROR(RILL_LOG_RUNTIME, "rank %d answered a GPU request this rank did not make", src);
        abort(); /* the receive would never end: every rank would hang */
    }
    rill_comm_expect(comm, -1); /* land_done expected it */
    rill_remote_xfer_t *r = calloc(1, sizeof(*r));
    if (!r) {
        remote_abort(x, "out of host memory for the landing of its put");
        return;
    }
    r->kind = RILL_REMOTE_LAND;
    r->task = x;
    r->data = x->data;
    r->peer = src;
    r->done = land_done;
    r->early = x->early; /* freed by land_done */
    r->put_coming = true;
    if (rill_trace_on()) /* the sender's put_submit names the same flow */
        r->flow = kernel_flow_id(x, rd.ctx->rank);
    rill_device_t *dev = rill_device_get(x->early->device);
    dev->ops->remote(dev, r);
}

/* ------------------------------------------------------------ GPU to GPU: put */

/* Manager thread: the copy into the receiver's GPU and its signal completed. A put handed
 * to the producer's GPU behind its body (r->behind) may end before the send's hook ran (the
 * producer's completion is still on its way to the host): the last of the two ends it. */
static void put_done(rill_remote_xfer_t *r, rill_status_t s)
{
    rill_rdep_t *x = r->task;
    if (s != RILL_SUCCESS)
        /* the receiver waits for the put (its landing reserved, ahead or on request) */
        remote_abort(x, "the copy into its landing buffer failed");
    bool pre = r->behind != 0;
    free(r);
    if (pre) {
        if (s != RILL_SUCCESS)
            x->pre_status = s; /* released by the decrement below */
        if (atomic_fetch_sub_explicit(&x->pre, 1, memory_order_acq_rel) != 1)
            return;
        s = x->pre_status;
    }
    send_done(x, s);
}

/* Manager thread: the put r of send x is enqueued on the GPU, so the receiver's landing
 * stream may wait for it (device.h: never before, or two ranks' managers, each in a CUDA
 * call that synchronises its context, could wait for each other's puts). Into a landing
 * announced ahead (cookie 0): the activation, saying the put is enqueued, and the receive
 * completes without asking; on request: the answer naming the receive (cookie). A put that
 * cannot be carried out aborts the run (put_done): the receiver waits for it. */
static void put_enqueued(rill_remote_xfer_t *r)
{
    rill_rdep_t *x = r->task;
    rill_data_t *d = x->data;
    /* both on the activations' tag: the receiver arms its landings in the order of our puts
     * (those of one lane wait in that order on its landing stream) */
    activate_msg_t m = { .tp_id = tp_of(x),
                         .dc_id = dc_of(d),
                         .version = x->version,
                         .flags = ACT_GPU | ACT_PUT,
                         .key = d->key,
                         .size = d->size,
                         .handle = (uint64_t)(uintptr_t)x };
    if (r->cookie) { /* the answer to the request of receive r->cookie */
        m.flags |= ACT_ANSWER;
        m.handle = r->cookie;
    }
    rill_status_t s =
        rill_comm_am_send(rd.ctx->comm, r->peer, rd.am_tag, &m, sizeof(m), x->task->prio.priority);
    if (s != RILL_SUCCESS)
        remote_abort(x, "the message saying its put is enqueued could not be sent");
}

/* Hand send x's copy into rank peer's GPU (landing at the given place) to the manager of
 * GPU dev, enqueued behind its launch behind when nonzero (rill_rdep_launched); dev 0: the
 * GPU that holds the newest copy (else the first GPU). recv: the receive that asked for
 * it, 0 when its landing was announced ahead. Any thread. */
static void put_submit(rill_rdep_t *x, int gpu, uint64_t dst_off, uint64_t sem_off, uint64_t target,
                       uint64_t recv, int dev, uint64_t behind)
{
    rill_remote_xfer_t *r = calloc(1, sizeof(*r));
    if (!r) { /* the receiver waits for it */
        remote_abort(x, "out of host memory for the put into its landing");
        send_done(x, RILL_ERR_NO_MEMORY);
        return;
    }
    rill_data_t *d = x->data;
    r->kind = RILL_REMOTE_PUT;
    r->task = x;
    r->data = d;
    r->peer = x->peer;
    r->peer_gpu = gpu;
    r->dst_off = dst_off;
    r->sem_off = sem_off;
    r->target = target;
    r->done = put_done;
    r->enqueued = put_enqueued;
    r->cookie = recv;
    r->behind = behind;
    if (rill_trace_on()) /* producer's kernel -> consumer's kernel (the receive's hook) */
        r->flow = kernel_flow_id(x, x->peer);
    int g = dev > 0 ? dev : 1;
    for (int i = 1; dev <= 0 && i < rill_device_count(); i++)
        if (rill_data_copy_current(d, rill_data_copy(d, i))) {
            g = i;
            break;
        }
    rill_device_t *gd = rill_device_get(g);
    gd->ops->remote(gd, r);
}

/* Send x's put goes behind its producer's body: decided under rd.lock, where the send's
 * hook looks (pre_put then hands it over, the lock dropped). */
static void pre_decide(rill_rdep_t *x)
{
    x->pre_status = RILL_SUCCESS;
    atomic_store_explicit(&x->pre, 2, memory_order_relaxed); /* read under rd.lock */
    rill_comm_expect(rd.ctx->comm, 1);                       /* send_done takes it back */
}

/* Send x's version goes behind its producer's body on GPU dev (launch number launch), into
 * the landing ann announced (pre_decide was called). */
static void pre_put(rill_rdep_t *x, const rill_rdep_act_t *ann, int dev, uint64_t launch)
{
    put_submit(x, ann->gpu, ann->dst_off, ann->sem_off, ann->target, 0, dev, launch);
}

/* ------------------------------------------------------------ early announcements */

/* Comm thread, on the sender: the receiver's landing for a version (or that it reserved
 * none). If the send went out already (it asked for the GPU request), forget both: the
 * request will name the reserved landing. */
static void announce_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)comm;
    (void)arg;
    announce_msg_t m;
    if (!msg_take(&m, sizeof(m), msg, len, "announcement", src))
        return;
    uint64_t h = ann_hash(m.tp_id, m.dc_id, m.key, m.version, src);
    rill_spinlock_lock(&rd.lock);
    rill_rdep_act_t *sent = ann_take(h, m.tp_id, m.dc_id, m.key, m.version, src);
    if (sent && sent->flags == ANN_LAUNCHED && m.reserved) {
        /* its producer is launched on a GPU: the put goes behind its body there (if the body
         * completed meanwhile, the manager puts the current copy; the send's hook, which
         * sees x->pre under this lock, leaves the put to it either way) */
        rill_rdep_act_t ann = {
            .gpu = m.gpu, .dst_off = m.dst_off, .sem_off = m.sem_off, .target = m.target
        };
        pre_decide(sent->x);
        rill_spinlock_unlock(&rd.lock);
        pre_put(sent->x, &ann, sent->gpu, sent->handle);
        free(sent);
        return;
    }
    if (sent && sent->flags == ANN_SENT) {
        rill_spinlock_unlock(&rd.lock);
        free(sent);
        return;
    }
    free(sent); /* a launch mark, and no landing reserved: the announcement replaces it */
    rill_rdep_act_t *a = calloc(1, sizeof(*a));
    if (!a) {
        rill_spinlock_unlock(&rd.lock);
        RILL_ERROR(RILL_LOG_RUNTIME, "out of memory keeping an announcement from rank %d", src);
        abort();
    }
    *a = (rill_rdep_act_t){ .tp_id = m.tp_id,
                            .dc_id = m.dc_id,
                            .version = m.version,
                            .key = m.key,
                            .src = src,
                            .flags = m.reserved ? ANN_RESERVED : ANN_NONE,
                            .gpu = m.gpu,
                            .dst_off = m.dst_off,
                            .sem_off = m.sem_off,
                            .target = m.target };
    ann_add(h, a);
    rill_spinlock_unlock(&rd.lock);
}

/* Receiver: announce a receive's landing (reserved or none) to the sender. */
static void announce(rill_rdep_t *x, const rill_remote_xfer_t *r)
{
    rill_data_t *d = x->data;
    announce_msg_t m = { .tp_id = tp_of(x),
                         .dc_id = dc_of(d),
                         .version = x->version,
                         .reserved = r && r->reserved,
                         .key = d->key };
    if (r && r->reserved) {
        m.gpu = r->gpu;
        m.dst_off = r->dst_off;
        m.sem_off = r->sem_off;
        m.target = r->target;
    }
    if (rill_comm_am_send(rd.ctx->comm, x->peer, rd.ann_tag, &m, sizeof(m),
                          x->task->prio.priority) != RILL_SUCCESS) {
        RILL_ERROR(RILL_LOG_RUNTIME, "cannot announce datum (key %llu) to rank %d",
                   (unsigned long long)d->key, x->peer);
        abort(); /* the sender would wait for a request that never comes */
    }
}

/* Manager thread: the reservation made ahead (reserved or not): announce it. */
static void reserve_done(rill_remote_xfer_t *r, rill_status_t s)
{
    (void)s; /* r->reserved says it */
    announce(r->task, r);
}

/* Receive x, sent GPU to GPU, no local task using its datum any more and its activation
 * not arrived (rd.lock held): reserve its landing ahead; reserve_done announces it,
 * reserved or not. false when early announcements are off or no GPU takes it (nothing was
 * sent). */
static bool recv_reserve(rill_rdep_t *x)
{
    if (x->announced || !x->early_ok)
        return false;
    rill_data_t *d = x->data;
    int g = landing_device(d);
    rill_device_t *dev = g > 0 ? rill_device_get(g) : NULL;
    rill_remote_xfer_t *r = dev && dev->ops->remote ? calloc(1, sizeof(*r)) : NULL;
    if (!r)
        return false;
    r->kind = RILL_REMOTE_RESERVE;
    r->device = g; /* the landing goes to the same manager, after it */
    r->task = x;
    r->data = d;
    r->peer = x->peer;
    r->done = reserve_done;
    x->early = r;
    x->announced = true;
    dev->ops->remote(dev, r);
    return true;
}

/* ------------------------------------------------------------ insertion */

void rill_rdep_send_init(rill_rdep_t *x, rill_task_t *task, rill_data_t *d, int peer,
                         uint32_t version, bool gpu)
{
    *x = (rill_rdep_t){ .magic = RILL_RDEP_SEND,
                        .peer = peer,
                        .version = version,
                        .gpu = gpu,
                        .task = task,
                        .data = d };
}

void rill_rdep_recv_init(rill_rdep_t *x, rill_task_t *task, rill_data_t *d, int peer,
                         uint32_t version, bool gpu, bool early, atomic_int *deps)
{
    *x = (rill_rdep_t){ .magic = RILL_RDEP_RECV,
                        .peer = peer,
                        .version = version,
                        .gpu = gpu,
                        .early_ok = early,
                        .task = task,
                        .data = d,
                        .deps = deps };
}

rill_status_t rill_rdep_recv_expect(rill_rdep_t *x, rill_rdep_expect_t *what)
{
    rill_data_t *d = x->data;
    uint32_t version = x->version;
    bool gpu = x->gpu;
    atomic_int *deps = x->deps;
    uint32_t tp_id = tp_of(x), dc_id = dc_of(d);
    uint64_t h = act_hash(tp_id, dc_id, d->key, version);
    bool none_now = false;
    *what = RILL_RDEP_EXPECTED;
    rill_spinlock_lock(&rd.lock);
    rill_rdep_act_t *a = act_take(h, tp_id, dc_id, d->key, version);
    if (a) { /* it arrived first */
        x->act = a;
        *what = RILL_RDEP_ARRIVED;
        if (gpu) { /* nothing to reserve ahead: tell the sender so */
            x->announced = true;
            none_now = true;
        }
    } else if ((a = calloc(1, sizeof(*a)))) {
        /* no local task uses the datum any more (the count only falls): its landing may be
         * reserved once the activation is expected (below: a receive whose insertion fails
         * must hold no reservation) */
        bool quiet = gpu && atomic_load_explicit(deps, memory_order_acquire) == 1;
        a->tp_id = tp_id;
        a->dc_id = dc_id;
        a->key = d->key;
        a->version = version;
        a->src = x->peer;
        a->x = x;
        atomic_fetch_add_explicit(deps, 1, memory_order_relaxed); /* the activation */
        if (act_add(h, a) != RILL_SUCCESS) {
            atomic_fetch_sub_explicit(deps, 1, memory_order_relaxed);
            free(a);
            a = NULL;
        } else {
            rill_comm_expect(rd.ctx->comm, 1);
            /* (rd.lock still held; reserve_done announces it) */
            if (quiet && recv_reserve(x))
                *what = RILL_RDEP_RESERVED;
        }
    }
    rill_spinlock_unlock(&rd.lock);
    if (!a)
        return RILL_ERR_NO_MEMORY;
    if (none_now)
        announce(x, NULL);
    return RILL_SUCCESS;
}

/* A predecessor of receive x completed: drop one of its dependencies (returns how many are
 * left). When one is left, it is its activation (still expected) and the version comes GPU
 * to GPU, reserve its landing now. x is read before the decrement only: after it, the
 * receive may run and be freed, unless its expectation is still in rd.acts, which holding
 * rd.lock keeps there (and keeps another receive from taking its place in the table). (A
 * predecessor that completes while the receive is being inserted may be missed: it then
 * asks when its version is ready.) */
int rill_rdep_recv_dep_done(rill_rdep_t *x)
{
    if (!x->gpu)
        return atomic_fetch_sub_explicit(x->deps, 1, memory_order_acq_rel) - 1;
    rill_data_t *d = x->data;
    uint64_t h = act_hash(tp_of(x), dc_of(d), d->key, x->version);
    rill_spinlock_lock(&rd.lock);
    int left = atomic_fetch_sub_explicit(x->deps, 1, memory_order_acq_rel) - 1;
    if (left == 1)
        for (rill_rdep_act_t *a = rill_hmap_get(&rd.acts, h); a; a = a->next)
            if (a->x == x) { /* still expected: the receive cannot run before we unlock */
                recv_reserve(x);
                break;
            }
    rill_spinlock_unlock(&rd.lock);
    return left;
}

/* ------------------------------------------------------------ GPU requests, launches */

/* Comm thread: the receiver's GPU is ready for a version sent with ACT_GPU: hand the copy
 * to the manager of the GPU that holds the newest copy (else the first GPU). */
static void gpu_get_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)comm;
    (void)arg;
    get_msg_t m;
    if (!msg_take(&m, sizeof(m), msg, len, "GPU request", src))
        return;
    rill_rdep_t *x = (rill_rdep_t *)(uintptr_t)m.send; /* our own pointer, echoed */
    if (!x || x->magic != RILL_RDEP_SEND || x->peer != src) {
        RILL_ERROR(RILL_LOG_RUNTIME, "rank %d asked for a send this rank does not have", src);
        abort(); /* the send would never end: every rank would hang */
    }
    if (m.gpu < 0) {
        send_done(x, RILL_ERR_DEVICE);
        return;
    }
    put_submit(x, m.gpu, m.dst_off, m.sem_off, m.target, m.recv, x->behind_dev, x->behind);
}

/* Manager thread, right after the producer of send x's version was enqueued on GPU dev
 * (launch number launch), x waiting for nothing else: the chain producer kernel -> copy ->
 * semaphore runs with no host step. With the receiver's landing announced already, hand the
 * put over now; else leave a mark, and an announcement that comes while the body is in
 * flight does it (announce_handler). The send's hook, which runs once the completion
 * reached the host, then only ends the send (x->pre). */
void rill_rdep_launched(rill_rdep_t *x, int dev, uint64_t launch)
{
    if (!x->gpu)
        return;
    rill_data_t *d = x->data;
    uint32_t tp_id = tp_of(x), dc_id = dc_of(d);
    uint64_t h = ann_hash(tp_id, dc_id, d->key, x->version, x->peer);
    rill_spinlock_lock(&rd.lock);
    rill_rdep_act_t *ann = ann_take(h, tp_id, dc_id, d->key, x->version, x->peer);
    if (ann && ann->flags == ANN_RESERVED) {
        pre_decide(x);
        rill_spinlock_unlock(&rd.lock);
        pre_put(x, ann, dev, launch);
        free(ann);
        return;
    }
    if (ann) { /* the receiver reserved nothing: the hook sends as usual */
        ann_add(h, ann);
    } else {
        rill_rdep_act_t *mark = calloc(1, sizeof(*mark));
        if (mark) { /* else no put behind the body: the hook sends as usual */
            *mark = (rill_rdep_act_t){ .tp_id = tp_id,
                                       .dc_id = dc_id,
                                       .version = x->version,
                                       .key = d->key,
                                       .src = x->peer,
                                       .x = x,
                                       .flags = ANN_LAUNCHED,
                                       .gpu = dev,
                                       .handle = launch };
            ann_add(h, mark);
        }
    }
    rill_spinlock_unlock(&rd.lock);
}

/* ------------------------------------------------------------ the receive's hook */

/* Worker: the receive of a version sent from GPU memory owes the sender one word (its
 * announcement, when none went ahead): send it now. */
static void recv_announce_once(rill_rdep_t *x)
{
    rill_spinlock_lock(&rd.lock);
    bool tell = !x->announced; /* the sender waits for one word from us: none ahead */
    x->announced = true;
    rill_spinlock_unlock(&rd.lock);
    if (tell)
        announce(x, NULL);
}

/* Worker: this rank cannot take the version rank a->src sends from GPU memory (status s,
 * why): fail the taskpool, and tell the sender, whose send would otherwise wait for ever. A
 * landing reserved ahead or a put already enqueued cannot be given up on one side: the run
 * ends (remote_abort). Frees a. */
static rill_hook_status_t recv_gpu_refuse(rill_rdep_t *x, rill_rdep_act_t *a, rill_status_t s,
                                          const char *why)
{
    recv_announce_once(x);
    if ((a->flags & ACT_PUT) || (x->early && x->early->reserved))
        remote_abort(x, why);
    rill_taskpool_fail(x->task->tp, s, "rank %d sends datum (key %llu) from GPU memory: %s", a->src,
                       (unsigned long long)x->data->key, why);
    if (!(a->flags & ACT_PUT)) { /* the sender's send ends with an error */
        get_msg_t m = { .send = a->handle, .gpu = -1 };
        rill_comm_am_send(rd.ctx->comm, a->src, rd.get_tag, &m, sizeof(m), 0);
    }
    free(a->payload);
    free(a);
    return RILL_HOOK_ERROR;
}

/* Worker: the sender's version is in its GPU memory: a GPU here takes it. */
static rill_hook_status_t recv_to_gpu(rill_rdep_t *x, rill_rdep_act_t *a)
{
    recv_announce_once(x);
    /* to the manager that took the reservation: it handles its requests in order */
    int g = x->early ? x->early->device : landing_device(x->data);
    rill_device_t *dev = g > 0 ? rill_device_get(g) : NULL;
    rill_remote_xfer_t *r = dev && dev->ops->remote ? calloc(1, sizeof(*r)) : NULL;
    if (!r)
        return recv_gpu_refuse(x, a, dev ? RILL_ERR_NO_MEMORY : RILL_ERR_DEVICE,
                               dev ? "this rank is out of host memory for its landing request"
                                   : "this rank has no GPU to receive it");
    r->kind = RILL_REMOTE_LAND;
    r->task = x;
    r->data = x->data;
    r->peer = a->src;
    r->cookie = a->handle;
    r->done = land_done;
    r->early = x->early; /* freed by land_done */
    r->put_coming = a->flags & ACT_PUT;
    if (rill_trace_on()) /* the sender's put_submit names the same flow */
        r->flow = kernel_flow_id(x, rd.ctx->rank);
    free(a);
    dev->ops->remote(dev, r);
    return RILL_HOOK_ASYNC;
}

rill_hook_status_t rill_rdep_recv_run(rill_rdep_t *x, void *host)
{
    rill_task_t *task = x->task;
    rill_rdep_act_t *a = x->act;
    rill_data_t *data = x->data;
    x->act = NULL;
    if (rill_trace_on()) { /* the remote flow ends here; a local one starts to the readers */
        uint64_t now = rill_time_ns(), id = xfer_flow_id(x, rd.ctx->rank);
        rill_trace_flow('f', id, now);
        /* from GPU memory, flow id ^ 1 runs from the producer's kernel on the sender's GPU
         * through the copies to the readers' kernels here (the GPU managers mark it) */
        if (!(a->flags & ACT_GPU))
            rill_trace_flow('s', id ^ 1, now);
        task->flow_in = id; /* the front end hands id ^ 1 to the readers */
    }
    if (a->size != data->size) {
        if (a->flags & ACT_GPU) { /* the sender must hear of it */
            char why[160];
            snprintf(why, sizeof(why), "it is %llu bytes, this rank expects %zu",
                     (unsigned long long)a->size, data->size);
            return recv_gpu_refuse(x, a, RILL_ERR_MISMATCH, why);
        }
        rill_taskpool_fail(task->tp, RILL_ERR_MISMATCH,
                           "rank %d sent %llu bytes for datum (key %llu), this rank expects %zu",
                           a->src, (unsigned long long)a->size, (unsigned long long)data->key,
                           data->size);
        free(a->payload);
        free(a);
        return RILL_HOOK_ERROR;
    }
    if (a->payload) {
        memcpy(host, a->payload, data->size);
        free(a->payload);
        free(a);
        return RILL_HOOK_DONE;
    }
    if (a->flags & ACT_GPU)
        return recv_to_gpu(x, a);
    rill_status_t s = rill_comm_get(rd.ctx->comm, a->src, a->handle, host, data->size,
                                    task->prio.priority, xfer_done_cb, x);
    free(a);
    if (s != RILL_SUCCESS) {
        rill_taskpool_fail(task->tp, s, "cannot get datum (key %llu) from rank %d",
                           (unsigned long long)data->key, x->peer);
        return RILL_HOOK_ERROR;
    }
    return RILL_HOOK_ASYNC;
}

/* ------------------------------------------------------------ the send's hook */

/* The send of a version from GPU memory: the receiver announced its landing: put it there
 * now (put_enqueued tells it); else the receiver's GPU asks for it (gpu_get_handler), and
 * an announcement that comes later is dropped. send_done ends the send either way. */
static rill_status_t send_from_gpu(rill_rdep_t *x, activate_msg_t *m)
{
    uint64_t h = ann_hash(m->tp_id, m->dc_id, m->key, m->version, x->peer);
    rill_spinlock_lock(&rd.lock);
    if (atomic_load_explicit(&x->pre, memory_order_relaxed)) {
        /* the put was handed to the producer's GPU (rill_rdep_launched): the last of it and
         * this hook ends the send */
        rill_spinlock_unlock(&rd.lock);
        if (atomic_fetch_sub_explicit(&x->pre, 1, memory_order_acq_rel) == 1)
            send_done(x, x->pre_status);
        return RILL_SUCCESS;
    }
    rill_rdep_act_t *ann = ann_take(h, m->tp_id, m->dc_id, m->key, m->version, x->peer);
    if (ann && ann->flags == ANN_LAUNCHED) { /* no announcement came: as if none */
        free(ann);
        ann = NULL;
    }
    if (!ann) {
        rill_rdep_act_t *sent = calloc(1, sizeof(*sent));
        if (sent) {
            *sent = (rill_rdep_act_t){ .tp_id = m->tp_id,
                                       .dc_id = m->dc_id,
                                       .version = m->version,
                                       .key = m->key,
                                       .src = x->peer,
                                       .flags = ANN_SENT };
            ann_add(h, sent);
        }
    }
    rill_spinlock_unlock(&rd.lock);
    rill_comm_t *comm = rd.ctx->comm;
    rill_comm_expect(comm, 1);
    if (ann && (ann->flags & ANN_RESERVED)) {
        put_submit(x, ann->gpu, ann->dst_off, ann->sem_off, ann->target, 0, 0, 0);
        free(ann);
        return RILL_SUCCESS;
    }
    free(ann);
    m->flags = ACT_GPU;
    m->handle = (uint64_t)(uintptr_t)x;
    rill_status_t s =
        rill_comm_am_send(comm, x->peer, rd.am_tag, m, sizeof(*m), x->task->prio.priority);
    if (s != RILL_SUCCESS)
        rill_comm_expect(comm, -1);
    return s;
}

rill_hook_status_t rill_rdep_send_run(rill_rdep_t *x, void *host)
{
    rill_task_t *task = x->task;
    rill_data_t *data = x->data;
    rill_comm_t *comm = rd.ctx->comm;
    activate_msg_t m = {
        .tp_id = task->tp->id,
        .dc_id = dc_of(data),
        .version = x->version,
        .key = data->key,
        .size = data->size,
    };
    rill_status_t s;
    if (rill_trace_on())
        rill_trace_flow('s', xfer_flow_id(x, x->peer), rill_time_ns());
    if (x->gpu) {
        if ((s = send_from_gpu(x, &m)) == RILL_SUCCESS)
            return RILL_HOOK_ASYNC; /* send_done ends it */
    } else if (data->size <= rill_comm_short_limit(comm)) {
        char buf[sizeof(m) + 65536];
        char *msg = data->size <= 65536 ? buf : malloc(sizeof(m) + data->size);
        if (!msg) {
            rill_taskpool_fail(task->tp, RILL_ERR_NO_MEMORY, "out of memory sending a datum");
            return RILL_HOOK_ERROR;
        }
        m.flags = ACT_INLINE;
        memcpy(msg, &m, sizeof(m));
        memcpy(msg + sizeof(m), host, data->size);
        s = rill_comm_am_send(comm, x->peer, rd.am_tag, msg, sizeof(m) + data->size,
                              task->prio.priority);
        if (msg != buf)
            free(msg);
        if (s == RILL_SUCCESS)
            return RILL_HOOK_DONE;
    } else {
        rill_comm_expect(comm, 1); /* the peer's GET; send_done takes it back */
        s = rill_comm_expose(comm, host, data->size, 1, send_done_cb, x, &m.handle);
        if (s == RILL_SUCCESS)
            s = rill_comm_am_send(comm, x->peer, rd.am_tag, &m, sizeof(m), task->prio.priority);
        if (s == RILL_SUCCESS)
            return RILL_HOOK_ASYNC;
        rill_comm_expect(comm, -1);
    }
    rill_taskpool_fail(task->tp, s, "cannot send datum (key %llu) to rank %d",
                       (unsigned long long)data->key, x->peer);
    return RILL_HOOK_ERROR;
}

/* ------------------------------------------------------------ front-end channels */

/* Wire format of a channel's message: this, the front end's header, then the tile when it
 * is inside (handle 0). */
typedef struct channel_msg {
    uint64_t size, handle;
    uint64_t flow; /* with CH_GPU: the move's trace flow id */
    int32_t prio;
    uint32_t hdr_len;
    uint32_t flags;
    uint32_t pad;
} channel_msg_t;
/* the tile moves GPU to GPU: handle names the sender's send (rill_rdep_t), which the
 * receiver's GPU request echoes (gpu_get_handler) */
#define CH_GPU 1u

/* a message takes at most comm_short_limit + 1024 bytes (rill_comm_am_send): the headers
 * get the 1024 */
#define CHANNEL_EXTRA 1024

/* The channels' handlers: the comm engine hands each message's record back */
#define MAX_CHANNELS 8
static struct channel {
    rill_rdep_in_fn fn;
    void *arg;
} channels[MAX_CHANNELS];

static void channel_am(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)comm;
    const struct channel *ch = arg;
    ch->fn(src, msg, len, ch->arg);
}

rill_status_t rill_rdep_channel_open(rill_context_t *ctx, rill_rdep_in_fn fn, void *arg, int *id)
{
    if (nchannels == MAX_CHANNELS) {
        RILL_ERROR(RILL_LOG_RUNTIME, "no room for another front-end channel (%d at most)",
                   MAX_CHANNELS);
        return RILL_ERR_NO_MEMORY;
    }
    struct channel *ch = &channels[nchannels];
    *ch = (struct channel){ .fn = fn, .arg = arg };
    rill_status_t s = rill_comm_am_register_new(ctx->comm, channel_am, ch, id);
    if (s == RILL_SUCCESS)
        nchannels++;
    return s;
}

size_t rill_rdep_header_max(void)
{
    return CHANNEL_EXTRA - sizeof(channel_msg_t);
}

bool rill_rdep_in_parse(int src, const void *msg, size_t len, rill_rdep_in_t *in)
{
    channel_msg_t h;
    if (len < sizeof(h))
        return false;
    memcpy(&h, msg, sizeof(h));
    const char *p = (const char *)msg + sizeof(h);
    size_t rest = len - sizeof(h);
    if (h.hdr_len > rest || (h.flags & ~CH_GPU) || (!h.handle && rest - h.hdr_len != h.size) ||
        (h.handle && (rest != h.hdr_len || !h.size)) || ((h.flags & CH_GPU) && !h.handle))
        return false;
    *in = (rill_rdep_in_t){ .src = src,
                            .hdr = p,
                            .hdr_len = h.hdr_len,
                            .size = h.size,
                            .prio = h.prio,
                            .inside = h.handle ? NULL : p + h.hdr_len,
                            .handle = h.handle,
                            .gpu = h.flags & CH_GPU,
                            .flow = h.flow };
    return true;
}

static void copy_release(void *arg, rill_status_t status)
{
    (void)status;
    free(arg);
}

rill_status_t rill_rdep_channel_send(rill_context_t *ctx, int id, int dst, int n,
                                     const void *const *hdrs, const size_t *lens, const void *tile,
                                     uint64_t size, int32_t prio, int *nsent)
{
    rill_comm_t *comm = ctx->comm;
    *nsent = 0;
    if (!tile)
        size = 0;
    bool inside = size <= rill_comm_short_limit(comm);
    channel_msg_t h = { .size = size, .prio = prio };
    for (int i = 0; i < n; i++) /* before anything is exposed (it would never be released) */
        if (lens[i] > rill_rdep_header_max())
            return RILL_ERR_INVALID_ARG; /* (the front end's own bound: a bug) */
    rill_status_t s = RILL_SUCCESS;
    if (!inside) { /* a copy: the caller may write the tile before the GETs */
        void *copy = malloc(size);
        if (!copy)
            return RILL_ERR_NO_MEMORY;
        memcpy(copy, tile, size);
        s = rill_comm_expose(comm, copy, size, n, copy_release, copy, &h.handle);
        if (s != RILL_SUCCESS) {
            free(copy);
            return s;
        }
    }
    for (int i = 0; i < n && s == RILL_SUCCESS; i++) {
        h.hdr_len = (uint32_t)lens[i];
        size_t len = sizeof(h) + lens[i] + (inside ? size : 0);
        char *m = malloc(len);
        if (!m) {
            s = RILL_ERR_NO_MEMORY;
            break;
        }
        memcpy(m, &h, sizeof(h));
        memcpy(m + sizeof(h), hdrs[i], lens[i]);
        if (inside && size)
            memcpy(m + sizeof(h) + lens[i], tile, size);
        s = rill_comm_am_send(comm, dst, id, m, len, prio);
        free(m);
        if (s == RILL_SUCCESS)
            (*nsent)++;
    }
    return s;
}

size_t rill_rdep_header_max_gpu(void)
{
    return rill_comm_short_limit(rd.ctx->comm) + CHANNEL_EXTRA - sizeof(channel_msg_t);
}

rill_status_t rill_rdep_channel_send_gpu(rill_context_t *ctx, int id, rill_rdep_t *x,
                                         const void *hdr, size_t len, int32_t prio)
{
    if (x->magic != RILL_RDEP_SEND || !x->gpu || len > rill_rdep_header_max_gpu())
        return RILL_ERR_INVALID_ARG; /* (the front end's own bounds: a bug) */
    rill_comm_t *comm = ctx->comm;
    channel_msg_t h = { .size = x->data->size,
                        .handle = (uint64_t)(uintptr_t)x,
                        .flow = rill_rdep_flow_id(tp_of(x), x->data, x->version, x->peer),
                        .prio = prio,
                        .hdr_len = (uint32_t)len,
                        .flags = CH_GPU };
    x->flow = h.flow;
    char *m = malloc(sizeof(h) + len);
    if (!m)
        return RILL_ERR_NO_MEMORY;
    memcpy(m, &h, sizeof(h));
    memcpy(m + sizeof(h), hdr, len);
    if (rill_trace_on())
        rill_trace_flow('s', h.flow, rill_time_ns());
    rill_comm_expect(comm, 1); /* the receiver's GPU request; send_done takes it back */
    rill_status_t s = rill_comm_am_send(comm, x->peer, id, m, sizeof(h) + len, prio);
    free(m);
    if (s != RILL_SUCCESS)
        rill_comm_expect(comm, -1);
    return s;
}

void rill_rdep_send_behind(rill_rdep_t *x, int dev, uint64_t launch)
{
    x->behind_dev = dev;
    x->behind = launch;
    /* the put's end alone ends the send (put_done: the last of x->pre) */
    x->pre_status = RILL_SUCCESS;
    atomic_store_explicit(&x->pre, 1, memory_order_relaxed);
}

rill_status_t rill_rdep_recv_gpu(rill_rdep_t *x, const rill_rdep_in_t *in)
{
    rill_rdep_act_t *a = calloc(1, sizeof(*a));
    if (!a)
        return RILL_ERR_NO_MEMORY;
    a->src = in->src;
    a->size = in->size;
    a->handle = in->handle;
    a->flags = ACT_GPU;
    x->act = a;
    x->flow = in->flow;
    x->announced = true; /* the sender waits for the request alone (no announcement) */
    return RILL_SUCCESS;
}

rill_status_t rill_rdep_fetch(rill_context_t *ctx, const rill_rdep_in_t *in, void *buf,
                              void (*done)(void *arg, rill_status_t status), void *arg, bool *async)
{
    *async = false;
    if (!in->size)
        return RILL_SUCCESS;
    if (in->inside) {
        memcpy(buf, in->inside, in->size);
        return RILL_SUCCESS;
    }
    rill_status_t s =
        rill_comm_get(ctx->comm, in->src, in->handle, buf, in->size, in->prio, done, arg);
    *async = s == RILL_SUCCESS;
    return s;
}

void rill_rdep_abort(rill_context_t *ctx, int code)
{
    rill_comm_abort(ctx->comm, code);
}

uint64_t rill_rdep_collectives(rill_context_t *ctx)
{
    return rill_comm_collectives(ctx->comm);
}

bool rill_rdep_in_collective(rill_context_t *ctx, uint64_t *count, const char **what)
{
    return rill_comm_in_collective(ctx->comm, count, what);
}

uint32_t rill_rdep_taskpools_created(rill_context_t *ctx)
{
    return atomic_load_explicit(&ctx->next_taskpool_id, memory_order_relaxed);
}

/* ------------------------------------------------------------ the watchdog */

int rill_rdep_describe(FILE *out, uint32_t tp_id)
{
    /* copied under rd.lock, printed after it (the comm thread and the workers spin on it;
     * the output may be slow) */
    enum { SHOW = 10 };
    rill_rdep_act_t waits[SHOW], anns[SHOW];
    int nwaits = 0, nanns = 0, more_waits = 0, more_anns = 0;
    if (!rd.ready)
        return 0;
    rill_spinlock_lock(&rd.lock);
    RILL_HMAP_FOREACH(&rd.acts, e)
    {
        for (rill_rdep_act_t *a = e->val; a; a = a->next)
            if (a->x && a->tp_id == tp_id) {
                if (nwaits < SHOW)
                    waits[nwaits++] = *a;
                else
                    more_waits++;
            }
    }
    /* GPU to GPU: sends that wait for the receiver's request, announcements not used yet */
    RILL_HMAP_FOREACH(&rd.anns, e)
    {
        for (rill_rdep_act_t *a = e->val; a; a = a->next)
            if (a->tp_id == tp_id) {
                if (nanns < SHOW)
                    anns[nanns++] = *a;
                else
                    more_anns++;
            }
    }
    rill_spinlock_unlock(&rd.lock);
    for (int i = 0; i < nwaits; i++)
        fprintf(out, "  waiting for datum (collection %u, key %llu) version %u from rank %d\n",
                waits[i].dc_id, (unsigned long long)waits[i].key, waits[i].version, waits[i].src);
    if (more_waits)
        fprintf(out, "  ... and %d more receives waiting\n", more_waits);
    for (int i = 0; i < nanns; i++) {
        const rill_rdep_act_t *a = &anns[i];
        const char *what =
            a->flags == ANN_SENT ? "its activation went; waits for that rank's request with its "
                                   "landing"
            : a->flags == ANN_LAUNCHED ? "its producer launched on a GPU; no announcement yet"
            : a->flags == ANN_RESERVED ? "that rank announced its landing; the send has not run"
                                       : "that rank announced no landing; the send has not run";
        fprintf(out, "  GPU to GPU, datum (collection %u, key %llu) version %u to rank %d: %s\n",
                a->dc_id, (unsigned long long)a->key, a->version, a->src, what);
    }
    if (more_anns)
        fprintf(out, "  ... and %d more GPU-to-GPU sends or announcements\n", more_anns);
    return nwaits;
}
