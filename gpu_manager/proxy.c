/* The proxy service of each GPU's port channels (a step of its manager's loop), calls run on
 * the manager thread, channel and semaphore objects (the connection of the GPUs of the
 * ranks at rill_init: connect.c). docs/channels.md describes the protocols. */
#include "proxy_impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "comm.h"
#include "host_channel.h"
#include "manager.h"
#include "net.h"
#include "rill/params.h"

static rill_param_t *p_spin_us, *p_sleep_us, *p_batch, *p_signal;

static const char *const signal_ways[] = { "memop", "copy", NULL };

static const rill_param_decl_t proxy_params[] = {
    { "device_proxy_spin_us", RILL_PARAM_INT, RILL_PARAM_LEVEL_TUNER,
      "While a GPU has port channels, its manager keeps polling their FIFOs this long after "
      "the last request it carried out",
      .v.i = { 200, 0, 10000000 }, .param = &p_spin_us },
    { "device_proxy_sleep_us", RILL_PARAM_INT, RILL_PARAM_LEVEL_TUNER,
      "Then it sleeps this long between polls (the latency of a request pushed to an idle "
      "proxy; the CPU cost of an idle one)",
      .v.i = { 50, 1, 1000000 }, .param = &p_sleep_us },
    { "device_proxy_batch", RILL_PARAM_INT, RILL_PARAM_LEVEL_TUNER,
      "Requests of one channel the proxy carries out per round of the manager's loop before it "
      "turns to tasks and other channels",
      .v.i = { 8, 1, 1024 }, .param = &p_batch },
    { "device_proxy_signal", RILL_PARAM_ENUM, RILL_PARAM_LEVEL_TUNER,
      "How the proxy writes a port channel's signal into the peer's semaphore behind the data: "
      "memop (cuStreamWriteValue64, with its memory barrier) or copy (an 8-byte "
      "cudaMemcpyAsync of the value, captured at the call)",
      .v.s = { "memop", signal_ways }, .param = &p_signal },
};

rill_status_t rill_proxy_register_params(void)
{
    return rill_params_register_table(proxy_params, sizeof(proxy_params) / sizeof(proxy_params[0]));
}

#if RILL_HAVE_CUDA
#include "rill/channel.h"

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* ------------------------------------------------------------ structures */

/** A call run on the manager thread for another thread, which waits for it. */
typedef struct gm_call {
    rill_mpsc_node_t link;
    rill_status_t (*fn)(gm_proxy_t *p, void *arg);
    void *arg;
    rill_status_t status;
    atomic_int done; /* release store by the manager, acquire load by the caller */
} gm_call_t;

struct rill_memory_channel {
    int gpu;
    uintptr_t outbound_block;
    rill_memory_channel_dev_t dev;
};

gm_proxy_t *gm_proxies[RILL_CUDA_MAX_GPUS];
static atomic_uint next_channel_id = 1;

/* ------------------------------------------------------------ calls on the manager thread */

/* A pointer argument given as NULL: said, naming the call and the argument. */
static rill_status_t null_arg(const char *fn, const char *what)
{
    RILL_ERROR(RILL_LOG_GPU, "%s: %s is NULL", fn, what);
    return RILL_ERR_INVALID_ARG;
}

static rill_status_t proxy_of(rill_context_t *ctx, int gpu, gm_proxy_t **p, const char *what)
{
    if (!ctx)
        return null_arg(what, "the context (ctx)");
    if (!ctx || gpu < 0 || gpu >= ctx->ngpus || !gm_proxies[gpu]) {
        RILL_ERROR(RILL_LOG_GPU, "%s: GPU %d: this process has %d GPU(s)%s%s", what, gpu,
                   ctx ? ctx->ngpus : 0, ctx && ctx->ngpus == 0 ? ": " : "",
                   ctx && ctx->ngpus == 0 ? ctx->no_gpu_why : "");
        return ctx && ctx->ngpus == 0 ? RILL_ERR_NOT_SUPPORTED : RILL_ERR_INVALID_ARG;
    }
    *p = gm_proxies[gpu];
    return RILL_SUCCESS;
}

rill_status_t gm_proxy_call(gm_proxy_t *p, rill_status_t (*fn)(gm_proxy_t *, void *), void *arg,
                            const char *what)
{
    gm_call_t c = { .fn = fn, .arg = arg };
    atomic_init(&c.done, 0);
    rill_mpsc_push(&p->calls, &c.link);
    rill_evcount_signal(p->wake, 0);
    uint64_t t0 = rill_time_ns();
    while (!atomic_load_explicit(&c.done, memory_order_acquire)) {
        uint32_t key = rill_evcount_prepare(&p->call_done);
        if (atomic_load_explicit(&c.done, memory_order_acquire)) {
            rill_evcount_cancel(&p->call_done);
            break;
        }
        rill_evcount_wait(&p->call_done, key, 100000);
        if (rill_time_ns() - t0 > 60000000000ull &&
            !atomic_load_explicit(&c.done, memory_order_acquire)) {
            /* the call stays queued: it lives in this frame, so this is fatal */
            RILL_ERROR(RILL_LOG_GPU,
                       "%s: GPU %d's manager did not run it within 60 s: the manager is stuck "
                       "(see the watchdog's report); aborting",
                       what, p->ordinal);
            rill_gpu_managers_report(stderr);
            abort();
        }
    }
    return c.status;
}

static int run_calls(gm_proxy_t *p)
{
    rill_mpsc_node_t *node = rill_mpsc_take_all(&p->calls);
    int n = 0;
    while (node) {
        rill_mpsc_node_t *next = node->next;
        gm_call_t *c = container_of(node, gm_call_t, link);
        c->status = c->fn(p, c->arg);
        /* release: the caller reads status (and what fn wrote) after its acquire load; c
         * lives in the caller's frame and may vanish right after this store */
        atomic_store_explicit(&c->done, 1, memory_order_release);
        n++;
        node = next;
    }
    if (n)
        rill_evcount_signal(&p->call_done, 0);
    return n;
}

/* ------------------------------------------------------------ the proxy's work */

static void pc_carry(gm_proxy_t *p, rill_port_channel_t *c, unsigned type, uint64_t dst_off,
                     uint64_t src_off, uint64_t size, bool from_host, uint64_t pos)
{
    char err[200];
    atomic_fetch_add_explicit(&p->n_req, 1, memory_order_relaxed);
    if (type == 0 || (type & ~7u)) {
        c->bad++;
        RILL_ERROR(RILL_LOG_GPU, "port channel %u (GPU %d): request %llu has type %u: ignored",
                   c->id, p->ordinal, (unsigned long long)pos, type);
        return;
    }
    if ((type & RILL_PC_PUT) && (src_off > c->src_size || size > c->src_size - src_off ||
                                 dst_off > c->dst_size || size > c->dst_size - dst_off)) {
        c->bad++;
        RILL_ERROR(RILL_LOG_GPU,
                   "port channel %u (GPU %d): put of %llu bytes from offset %llu to offset "
                   "%llu runs past a region (source %llu bytes, destination %llu): not "
                   "carried out",
                   c->id, p->ordinal, (unsigned long long)size, (unsigned long long)src_off,
                   (unsigned long long)dst_off, (unsigned long long)c->src_size,
                   (unsigned long long)c->dst_size);
        type &= ~(unsigned)RILL_PC_PUT; /* (its signal and flush still go) */
        if (!type)
            return;
    }
    if (c->net_rank >= 0) { /* a GPU of another node */
        gm_pcnet_carry(p, c, type, dst_off, src_off, size, from_host, pos);
        return;
    }
    if (type & RILL_PC_PUT) {
        if (size > 0) {
            cudaError_t e = cudaMemcpyAsync(c->dst + dst_off, c->src + src_off, size,
                                            cudaMemcpyDeviceToDevice, c->stream);
            if (e != cudaSuccess)
                RILL_ERROR(RILL_LOG_GPU, "port channel %u (GPU %d): cudaMemcpyAsync of %llu B: %s",
                           c->id, p->ordinal, (unsigned long long)size, cudaGetErrorString(e));
            c->enqueued++;
            atomic_fetch_add_explicit(&p->n_put, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&p->b_put, size, memory_order_relaxed);
        }
    }
    /* Signal and flush behind the data on the same stream: the stream write waits for the
     * copies before it and has a memory barrier first (rill_cu_stream_write64), so a peer
     * that acquires the semaphore value (or a host that reads the flushed word) sees the
     * data. */
    if (type & RILL_PC_SIGNAL) {
        uint64_t v = ++c->signals;
        if (rill_param_get_enum(p_signal) == 1) {
            /* from pageable memory: the runtime stages v before it returns */
            cudaError_t e =
                cudaMemcpyAsync(c->remote_sem, &v, sizeof(v), cudaMemcpyHostToDevice, c->stream);
            if (e != cudaSuccess)
                RILL_ERROR(RILL_LOG_GPU, "port channel %u (GPU %d): signal (copy): %s", c->id,
                           p->ordinal, cudaGetErrorString(e));
        } else if (rill_cu_stream_write64(c->stream, c->remote_sem, v, err, sizeof(err)) !=
                   RILL_SUCCESS)
            RILL_ERROR(RILL_LOG_GPU, "port channel %u (GPU %d): signal: %s", c->id, p->ordinal,
                       err);
        c->enqueued++;
        atomic_fetch_add_explicit(&p->n_signal, 1, memory_order_relaxed);
    }
    if (type & RILL_PC_FLUSH) {
        /* Nothing on the stream (none enqueued since it was last seen idle, or it is idle
         * now): everything before is done, so write the flushed word from here (release:
         * pairs with the waiter's acquire load), a few microseconds sooner than through
         * the stream. Else behind the stream's work. */
        if (c->enqueued && cudaStreamQuery(c->stream) == cudaSuccess)
            c->enqueued = 0;
        if (c->enqueued == 0)
            __atomic_store_n(&c->flushed_host[from_host ? 1 : 0], pos + 1, __ATOMIC_RELEASE);
        else if (rill_cu_stream_write64(c->stream, c->flushed_dev + (from_host ? 1 : 0), pos + 1,
                                        err, sizeof(err)) != RILL_SUCCESS)
            RILL_ERROR(RILL_LOG_GPU, "port channel %u (GPU %d): flush: %s", c->id, p->ordinal, err);
        atomic_fetch_add_explicit(&p->n_flush, 1, memory_order_relaxed);
    }
}

static int pc_serve(gm_proxy_t *p, rill_port_channel_t *c, int batch)
{
    int n = 0;
    rill_trigger_t t;
    while (n < batch && rill_fifo_poll(&c->fifo, &t)) {
        unsigned type;
        uint64_t dst_off, src_off, size;
        rill_trigger_unpack(&t, &type, &dst_off, &src_off, &size);
        uint64_t pos = c->fifo.tail;
        rill_fifo_pop(&c->fifo); /* the trigger is copied out: the slot may be reused */
        pc_carry(p, c, type, dst_off, src_off, size, false, pos);
        n++;
    }
    if (!c->host_pending) {
        rill_mpsc_node_t *node = rill_mpsc_take_all(&c->hostq); /* oldest first */
        c->host_pending = node ? container_of(node, host_req_t, link) : NULL;
    }
    while (n < 2 * batch && c->host_pending) {
        host_req_t *r = c->host_pending;
        c->host_pending = r->link.next ? container_of(r->link.next, host_req_t, link) : NULL;
        pc_carry(p, c, r->type, r->dst_off, r->src_off, r->size, true, r->seq);
        free(r);
        n++;
    }
    return n;
}

int gm_proxy_step(gm_proxy_t *p)
{
    int n = run_calls(p);
    if (p->net) /* over TCP a peer's put lands only while we progress */
        n += rill_net_progress(p->net) + gm_pcnet_step(p);
    if (!p->channels)
        return n;
    uint64_t t0 = rill_time_ns();
    int batch = (int)rill_param_get_int(p_batch), reqs = 0;
    for (rill_port_channel_t *c = p->channels; c; c = c->next)
        reqs += pc_serve(p, c, batch);
    if (reqs) {
        uint64_t t1 = rill_time_ns();
        p->last_active_ns = t1;
        atomic_fetch_add_explicit(&p->busy_ns, t1 - t0, memory_order_relaxed);
    }
    return n + reqs;
}

int64_t gm_proxy_idle_us(gm_proxy_t *p)
{
    /* (a target of channels from other nodes polls too: their requests arrive unannounced) */
    if (!p->channels && !gm_pcnet_target(p))
        return -1;
    uint64_t spin = (uint64_t)rill_param_get_int(p_spin_us) * 1000;
    if (rill_time_ns() - p->last_active_ns < spin)
        return 0;
    return rill_param_get_int(p_sleep_us);
}

struct rill_net_worker *gm_proxy_net(gm_proxy_t *p)
{
    return p->net;
}

bool gm_proxy_has_work(gm_proxy_t *p)
{
    if (rill_mpsc_nonempty(&p->calls) || gm_proxy_net_inflight(p) > 0)
        return true;
    for (rill_port_channel_t *c = p->channels; c; c = c->next)
        if (c->host_pending || rill_mpsc_nonempty(&c->hostq))
            return true;
    return false;
}

void gm_proxy_describe(gm_proxy_t *p, FILE *out)
{
    fprintf(out,
            "GPU %d proxy: %d port channel(s); %llu requests (%llu puts, %.1f MB, %llu signals, "
            "%llu flushes)",
            p->ordinal, atomic_load(&p->nchannels), (unsigned long long)atomic_load(&p->n_req),
            (unsigned long long)atomic_load(&p->n_put), (double)atomic_load(&p->b_put) / 1e6,
            (unsigned long long)atomic_load(&p->n_signal),
            (unsigned long long)atomic_load(&p->n_flush));
    if (p->err_host && *(volatile int *)&p->err_host->code > 0)
        fprintf(out, "; device error %d on channel/semaphore %u", p->err_host->code,
                p->err_host->id);
    fprintf(out, "\n");
}

/* ------------------------------------------------------------ open, close */

rill_status_t gm_proxy_open(rill_context_t *ctx, int gpu, rill_cuda_gpu_t *res,
                            rill_evcount_t *wake, struct gm *mgr, gm_proxy_t **pp, char *err,
                            size_t len)
{
    gm_proxy_t *p = calloc(1, sizeof(*p));
    if (!p) {
        snprintf(err, len, "out of host memory");
        return RILL_ERR_NO_MEMORY;
    }
    p->ctx = ctx;
    p->gpu = gpu;
    p->ordinal = res->info.ordinal;
    p->res = res;
    p->wake = wake;
    p->mgr = mgr;
    rill_mpsc_init(&p->calls);
    rill_evcount_init(&p->call_done);
    cudaError_t e = cudaHostAlloc((void **)&p->err_host, sizeof(rill_dev_error_t),
                                  cudaHostAllocMapped | cudaHostAllocPortable);
    if (e == cudaSuccess) {
        memset(p->err_host, 0, sizeof(*p->err_host));
        e = cudaHostGetDevicePointer((void **)&p->err_dev, p->err_host, 0);
    }
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&p->setup, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        snprintf(err, len, "cudaHostAlloc of the channels' error word on GPU %d: %s", p->ordinal,
                 cudaGetErrorString(e));
        if (p->err_host)
            cudaFreeHost(p->err_host);
        if (p->setup)
            cudaStreamDestroy(p->setup);
        free(p);
        return RILL_ERR_DEVICE;
    }
    gm_proxies[gpu] = p;
    *pp = p;
    return RILL_SUCCESS;
}

static void pc_free(gm_proxy_t *p, rill_port_channel_t *c)
{
    if (c->stream)
        cudaStreamDestroy(c->stream);
    rill_fifo_fini(&c->fifo);
    if (c->flushed_host)
        cudaFreeHost(c->flushed_host);
    if (c->words)
        rill_zone_free(p->res->zone, c->words);
    while (c->host_pending) {
        host_req_t *r = c->host_pending;
        c->host_pending = r->link.next ? container_of(r->link.next, host_req_t, link) : NULL;
        free(r);
    }
    for (rill_mpsc_node_t *n = rill_mpsc_take_all(&c->hostq); n;) {
        rill_mpsc_node_t *next = n->next;
        free(container_of(n, host_req_t, link));
        n = next;
    }
    free(c);
}

void gm_proxy_close(gm_proxy_t **pp)
{
    gm_proxy_t *p = *pp;
    if (!p)
        return;
    while (p->channels) {
        rill_port_channel_t *c = p->channels;
        p->channels = c->next;
        pc_free(p, c);
    }
    rill_regmem_unmap_all(p->ordinal);
    rill_stream_waits_release();
    gm_pcnet_stop(p);
    rill_net_worker_destroy(p->net); /* (after the managers stopped: the traffic is over) */
    free(p->regions);
    if (p->err_host)
        cudaFreeHost(p->err_host);
    if (p->setup)
        cudaStreamDestroy(p->setup);
    gm_proxies[p->gpu] = NULL;
    free(p);
    *pp = NULL;
}

/* ------------------------------------------------------------ memory and semaphores */

typedef struct alloc_args {
    size_t size;
    uintptr_t addr;
    const void *ptr;
    rill_regmem_t *reg;
    char err[256];
} alloc_args_t;

static rill_status_t do_alloc(gm_proxy_t *p, void *arg)
{
    alloc_args_t *a = arg;
    rill_status_t s = rill_zone_alloc(p->res->zone, a->size ? a->size : 1, &a->addr);
    if (s != RILL_SUCCESS)
        snprintf(a->err, sizeof(a->err),
                 "GPU %d's zone has no free block of %zu bytes (%zu of %zu bytes used, largest "
                 "free block %zu; device_cuda_memory_use / device_cuda_memory_size set the zone)",
                 p->ordinal, a->size, rill_zone_used(p->res->zone), rill_zone_size(p->res->zone),
                 rill_zone_largest_free(p->res->zone));
    return s;
}

static rill_status_t do_free(gm_proxy_t *p, void *arg)
{
    alloc_args_t *a = arg;
    rill_status_t s = rill_zone_free(p->res->zone, a->addr);
    if (s != RILL_SUCCESS)
        snprintf(a->err, sizeof(a->err), "%p is not a block of GPU %d's zone", (void *)a->addr,
                 p->ordinal);
    return s;
}

rill_status_t rill_gpu_alloc(rill_context_t *ctx, int gpu, size_t size, void **ptr)
{
    if (!ptr)
        return null_arg("rill_gpu_alloc", "the address to store the pointer at (ptr)");
    gm_proxy_t *p;
    rill_status_t s = proxy_of(ctx, gpu, &p, "rill_gpu_alloc");
    if (s != RILL_SUCCESS)
        return s;
    alloc_args_t a = { .size = size };
    s = gm_proxy_call(p, do_alloc, &a, "rill_gpu_alloc");
    if (s != RILL_SUCCESS) {
        RILL_ERROR(RILL_LOG_GPU, "rill_gpu_alloc: %s", a.err);
        return s;
    }
    *ptr = (void *)a.addr;
    return RILL_SUCCESS;
}

rill_status_t rill_gpu_free(rill_context_t *ctx, int gpu, void *ptr)
{
    gm_proxy_t *p;
    rill_status_t s = proxy_of(ctx, gpu, &p, "rill_gpu_free");
    if (s != RILL_SUCCESS || !ptr)
        return s;
    alloc_args_t a = { .addr = (uintptr_t)ptr };
    s = gm_proxy_call(p, do_free, &a, "rill_gpu_free");
    if (s != RILL_SUCCESS)
        RILL_ERROR(RILL_LOG_GPU, "rill_gpu_free: %s", a.err);
    return s;
}

/* The descriptor, and its allocation kept as one a channel from another node may write */
static rill_status_t do_describe(gm_proxy_t *p, void *arg)
{
    alloc_args_t *a = arg;
    rill_status_t s = rill_regmem_describe(a->ptr, a->size, p->ordinal, p->ctx->rank,
                                           (uint64_t)rill_comm_node_id(p->ctx->comm), a->reg,
                                           a->err, sizeof(a->err));
    if (s != RILL_SUCCESS)
        return s;
    for (int i = 0; i < p->nregions; i++)
        if (p->regions[i].base == a->reg->base && p->regions[i].size == a->reg->base_size)
            return RILL_SUCCESS;
    if (p->nregions == p->regions_cap) {
        int cap = p->regions_cap ? 2 * p->regions_cap : 8;
        struct gm_region *r = realloc(p->regions, (size_t)cap * sizeof(*r));
        if (!r) {
            snprintf(a->err, sizeof(a->err), "out of host memory");
            return RILL_ERR_NO_MEMORY;
        }
        p->regions = r;
        p->regions_cap = cap;
    }
    p->regions[p->nregions++] = (struct gm_region){ a->reg->base, a->reg->base_size };
    return RILL_SUCCESS;
}

/* A host region of this rank: its descriptor, and registered for peers' host channels. */
static rill_status_t host_regmem(rill_context_t *ctx, const void *ptr, size_t size,
                                 rill_regmem_t *reg)
{
    if (!ctx)
        return null_arg("rill_regmem_get", "the context (ctx)");
    memset(reg, 0, sizeof(*reg));
    reg->magic = RILL_REGMEM_MAGIC;
    reg->rank = ctx->rank;
    reg->ordinal = RILL_HOST_MEMORY;
    reg->process = rill_regmem_process_id();
    reg->node = (uint64_t)rill_comm_node_id(ctx->comm);
    reg->base = (uint64_t)(uintptr_t)ptr;
    reg->base_size = size;
    reg->size = size;
    return rill_hchan_region_add(ptr, size);
}

rill_status_t rill_regmem_get(rill_context_t *ctx, int gpu, const void *ptr, size_t size,
                              rill_regmem_t *reg)
{
    if (!ptr || !reg)
        return null_arg("rill_regmem_get", !ptr ? "the memory (ptr)" : "the descriptor (reg)");
    if (gpu == RILL_HOST_MEMORY)
        return host_regmem(ctx, ptr, size, reg);
    gm_proxy_t *p;
    rill_status_t s = proxy_of(ctx, gpu, &p, "rill_regmem_get");
    if (s != RILL_SUCCESS)
        return s;
    alloc_args_t a = { .ptr = ptr, .size = size, .reg = reg };
    s = gm_proxy_call(p, do_describe, &a, "rill_regmem_get");
    if (s != RILL_SUCCESS)
        RILL_ERROR(RILL_LOG_GPU, "rill_regmem_get: %s", a.err);
    return s;
}

static rill_status_t do_zero8(gm_proxy_t *p, void *arg)
{
    alloc_args_t *a = arg;
    cudaError_t e = cudaMemsetAsync((void *)a->addr, 0, a->size, p->setup);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(p->setup); /* setup, before any channel uses it */
    if (e != cudaSuccess) {
        snprintf(a->err, sizeof(a->err), "cudaMemset: %s", cudaGetErrorString(e));
        return RILL_ERR_DEVICE;
    }
    return RILL_SUCCESS;
}

rill_status_t rill_sem_create(rill_context_t *ctx, int gpu, rill_sem_t *sem)
{
    if (!sem)
        return null_arg("rill_sem_create", "the semaphore (sem)");
    if (gpu == RILL_HOST_MEMORY) { /* a word of its own cache line, 0 */
        memset(sem, 0, sizeof(*sem));
        sem->ptr = aligned_alloc(64, 64);
        if (!sem->ptr)
            return RILL_ERR_NO_MEMORY;
        memset(sem->ptr, 0, 64);
        sem->id = atomic_fetch_add(&next_channel_id, 1);
        rill_status_t s = host_regmem(ctx, sem->ptr, sizeof(uint64_t), &sem->reg);
        if (s != RILL_SUCCESS) {
            free(sem->ptr);
            sem->ptr = NULL;
        }
        return s;
    }
    gm_proxy_t *p;
    rill_status_t s = proxy_of(ctx, gpu, &p, "rill_sem_create");
    if (s != RILL_SUCCESS)
        return s;
    memset(sem, 0, sizeof(*sem));
    alloc_args_t a = { .size = sizeof(uint64_t) };
    if ((s = gm_proxy_call(p, do_alloc, &a, "rill_sem_create")) != RILL_SUCCESS ||
        (s = gm_proxy_call(p, do_zero8, &a, "rill_sem_create")) != RILL_SUCCESS) {
        RILL_ERROR(RILL_LOG_GPU, "rill_sem_create: %s", a.err);
        return s;
    }
    sem->ptr = (uint64_t *)a.addr;
    sem->id = atomic_fetch_add(&next_channel_id, 1);
    a.ptr = sem->ptr;
    a.reg = &sem->reg;
    if ((s = gm_proxy_call(p, do_describe, &a, "rill_sem_create")) != RILL_SUCCESS)
        RILL_ERROR(RILL_LOG_GPU, "rill_sem_create: %s", a.err);
    return s;
}

rill_status_t rill_sem_destroy(rill_context_t *ctx, int gpu, rill_sem_t *sem)
{
    if (!sem)
        return null_arg("rill_sem_destroy", "the semaphore (sem)");
    if (gpu == RILL_HOST_MEMORY) {
        rill_hchan_region_remove(sem->ptr);
        free(sem->ptr);
        sem->ptr = NULL;
        return RILL_SUCCESS;
    }
    rill_status_t s = rill_gpu_free(ctx, gpu, sem->ptr);
    sem->ptr = NULL;
    return s;
}

rill_status_t rill_sem_wait(const rill_sem_t *sem, uint64_t value, double timeout_s)
{
    if (!sem || !sem->ptr)
        return null_arg("rill_sem_wait", !sem ? "the semaphore (sem)" : "the semaphore's word");
    if (sem->reg.ordinal != RILL_HOST_MEMORY) {
        RILL_ERROR(RILL_LOG_GPU,
                   "rill_sem_wait: semaphore %u is in GPU %d's memory: wait for it on a stream "
                   "(rill_sem_stream_wait) or in a kernel",
                   sem->id, sem->reg.ordinal);
        return RILL_ERR_INVALID_ARG;
    }
    return rill_hchan_sem_wait(sem->ptr, value, timeout_s);
}

/* ------------------------------------------------------------ port channels */

typedef struct pc_args {
    const rill_regmem_t *src, *dst;
    const rill_sem_t *remote, *local;
    int net_idx; /* the destination's GPU index in its rank, over the net wire; else -1 */
    rill_port_channel_t *pc;
    char err[256];
} pc_args_t;

static rill_status_t do_pc_create(gm_proxy_t *p, void *arg)
{
    pc_args_t *a = arg;
    rill_port_channel_t *c = calloc(1, sizeof(*c));
    if (!c) {
        snprintf(a->err, sizeof(a->err), "out of host memory");
        return RILL_ERR_NO_MEMORY;
    }
    c->id = atomic_fetch_add(&next_channel_id, 1);
    c->gpu = p->gpu;
    c->p = p;
    c->net_rank = -1;
    rill_mpsc_init(&c->hostq);
    rill_spinlock_init(&c->push_lock);
    void *src = NULL, *dst = NULL, *rsem = NULL;
    rill_status_t s;
    if ((s = rill_regmem_map(a->src, &src, a->err, sizeof(a->err))) != RILL_SUCCESS)
        goto fail;
    if (a->net_idx >= 0) { /* another node: addresses in the target process, not mapped here */
        c->net_rank = a->dst->rank;
        c->net_idx = a->net_idx;
        c->dst_addr = a->dst->base + a->dst->offset;
        c->sem_addr = a->remote->reg.base + a->remote->reg.offset;
    } else if ((s = rill_regmem_map(a->dst, &dst, a->err, sizeof(a->err))) != RILL_SUCCESS ||
               (s = rill_regmem_map(&a->remote->reg, &rsem, a->err, sizeof(a->err))) !=
                   RILL_SUCCESS)
        goto fail;
    c->src = src;
    c->dst = dst;
    c->src_size = a->src->size;
    c->dst_size = a->dst->size;
    c->remote_sem = rsem;
    c->local_sem = a->local ? a->local->ptr : NULL;
    if ((s = rill_zone_alloc(p->res->zone, 16, &c->words)) != RILL_SUCCESS) {
        snprintf(a->err, sizeof(a->err), "GPU %d's zone is full (a FIFO's 16-byte head)",
                 p->ordinal);
        goto fail;
    }
    if ((s = rill_fifo_init(&c->fifo, rill_channel_fifo_slots(), c->id, (void *)c->words,
                            p->err_dev, p->setup, a->err, sizeof(a->err))) != RILL_SUCCESS)
        goto fail;
    cudaError_t e =
        cudaHostAlloc((void **)&c->flushed_host, 64, cudaHostAllocMapped | cudaHostAllocPortable);
    if (e == cudaSuccess) {
        memset(c->flushed_host, 0, 64);
        e = cudaHostGetDevicePointer((void **)&c->flushed_dev, c->flushed_host, 0);
    }
    if (e == cudaSuccess && c->net_rank < 0) /* (over the net wire UCX makes the copies) */
        e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        snprintf(a->err, sizeof(a->err), "setting up port channel %u on GPU %d: %s", c->id,
                 p->ordinal, cudaGetErrorString(e));
        s = RILL_ERR_DEVICE;
        goto fail;
    }
    c->next = p->channels;
    p->channels = c;
    atomic_fetch_add(&p->nchannels, 1);
    p->last_active_ns = rill_time_ns();
    a->pc = c;
    return RILL_SUCCESS;
fail:
    pc_free(p, c);
    return s;
}

static bool regmem_ok(const rill_regmem_t *r, const char *what, const char *fn)
{
    if (!r || r->magic != RILL_REGMEM_MAGIC) {
        RILL_ERROR(RILL_LOG_GPU,
                   "%s: the %s is not a registered-memory descriptor "
                   "(rill_regmem_get or rill_sem_create fill them)",
                   fn, what);
        return false;
    }
    return true;
}

/* Whether r's GPU is reached by CUDA IPC (this node); else said, naming fn (port: a port
 * channel's, which the net wire would have reached). */
static bool peer_ok(rill_context_t *ctx, const rill_regmem_t *r, const char *fn, bool port)
{
    const char *why = NULL;
    int d = r->rank == ctx->rank ? 1 : rill_context_gpu_direct(ctx, r->rank, &why);
    if (d == 1)
        return true;
    if (port && (d == 2 || d == 3))
        why = "it is on another node, and the net wire (UCX moving GPU memory) does not connect "
              "the two ranks' GPUs (rill_info --peers says why)";
    else if (d == 2 || d == 3 || gm_peer_net_workers(r->rank))
        why = "it is on another node, and memory channels reach the GPUs of this node only "
              "(port channels reach the GPUs of other nodes over the net wire)";
    RILL_ERROR(RILL_LOG_GPU, "%s: rank %d's GPU memory is not reachable from rank %d: %s", fn,
               r->rank, ctx->rank, why ? why : "not connected");
    return false;
}

/* A port channel between host regions (host_channel.c carries its requests out). */
static rill_status_t host_pc_create(rill_context_t *ctx, const rill_regmem_t *src,
                                    const rill_regmem_t *dst, const rill_sem_t *remote_sem,
                                    rill_port_channel_t **pc)
{
    static const char fn[] = "rill_port_channel_create";
    if (!ctx)
        return null_arg(fn, "the context (ctx)");
    if (!regmem_ok(src, "source", fn) || !regmem_ok(dst, "destination", fn) ||
        !regmem_ok(&remote_sem->reg, "remote semaphore", fn))
        return RILL_ERR_INVALID_ARG;
    const char *bad =
        src->rank != ctx->rank || src->ordinal != RILL_HOST_MEMORY
            ? "the source must be host memory of this rank"
        : dst->ordinal != RILL_HOST_MEMORY          ? "the destination must be host memory"
        : dst->rank < 0 || dst->rank >= ctx->nranks ? "the destination's rank is "
                                                      "not one of this job's"
        : remote_sem->reg.ordinal != RILL_HOST_MEMORY || remote_sem->reg.rank != dst->rank
            ? "the remote semaphore must be host memory of the destination's rank"
            : NULL;
    if (bad) {
        RILL_ERROR(RILL_LOG_GPU,
                   "%s with RILL_HOST_MEMORY: %s (source: rank %d, %s; destination: rank %d, %s; "
                   "semaphore: rank %d)",
                   fn, bad, src->rank, src->ordinal == RILL_HOST_MEMORY ? "host" : "a GPU",
                   dst->rank, dst->ordinal == RILL_HOST_MEMORY ? "host" : "a GPU",
                   remote_sem->reg.rank);
        return RILL_ERR_INVALID_ARG;
    }
    rill_port_channel_t *c = calloc(1, sizeof(*c));
    if (!c)
        return RILL_ERR_NO_MEMORY;
    rill_status_t s = rill_hchan_create(ctx, (const void *)(uintptr_t)(src->base + src->offset),
                                        src->size, dst->rank, dst->base + dst->offset, dst->size,
                                        remote_sem->reg.base + remote_sem->reg.offset, &c->host);
    if (s != RILL_SUCCESS) {
        free(c);
        return s;
    }
    c->gpu = RILL_HOST_MEMORY;
    c->id = rill_hchan_id(c->host);
    *pc = c;
    return RILL_SUCCESS;
}

rill_status_t rill_port_channel_create(rill_context_t *ctx, int gpu, const rill_regmem_t *src,
                                       const rill_regmem_t *dst, const rill_sem_t *remote_sem,
                                       const rill_sem_t *local_sem, rill_port_channel_t **pc)
{
    static const char fn[] = "rill_port_channel_create";
    if (!src || !dst || !remote_sem || !pc)
        return null_arg(fn, !src          ? "the source region (src)"
                            : !dst        ? "the destination region (dst)"
                            : !remote_sem ? "the remote semaphore"
                                          : "the address to store the channel at (pc)");
    if (gpu == RILL_HOST_MEMORY) /* (its local semaphore is waited for with rill_sem_wait) */
        return host_pc_create(ctx, src, dst, remote_sem, pc);
    gm_proxy_t *p;
    rill_status_t s = proxy_of(ctx, gpu, &p, fn);
    if (s != RILL_SUCCESS)
        return s;
    if (!pc || !regmem_ok(src, "source", fn) || !regmem_ok(dst, "destination", fn) || !remote_sem ||
        !regmem_ok(&remote_sem->reg, "remote semaphore", fn))
        return RILL_ERR_INVALID_ARG;
    if (src->rank != ctx->rank || src->ordinal != p->ordinal) {
        RILL_ERROR(RILL_LOG_GPU,
                   "%s: the source must be memory of this rank's GPU %d (it is rank "
                   "%d's GPU %d)",
                   fn, p->ordinal, src->rank, src->ordinal);
        return RILL_ERR_INVALID_ARG;
    }
    /* a GPU of another node, reached over the net wire: the request messages carry the
     * destination's and the semaphore's addresses there; the semaphore must be on the
     * destination's GPU, whose manager writes it */
    int net_idx = -1;
    if (dst->rank != ctx->rank && dst->ordinal != RILL_HOST_MEMORY &&
        rill_context_gpu_direct(ctx, dst->rank, NULL) != 1 && gm_peer_net_workers(dst->rank)) {
        net_idx = gm_peer_gpu_index(dst->rank, dst->ordinal);
        const char *bad =
            net_idx < 0 ? "the destination is not on one of that rank's GPUs"
            : remote_sem->reg.rank != dst->rank || remote_sem->reg.ordinal != dst->ordinal
                ? "the remote semaphore must be on the destination's GPU (its "
                  "manager writes it)"
                : NULL;
        if (bad) {
            RILL_ERROR(RILL_LOG_GPU,
                       "%s: rank %d's GPU %d is on another node: %s (semaphore: rank %d's GPU "
                       "%d)",
                       fn, dst->rank, dst->ordinal, bad, remote_sem->reg.rank,
                       remote_sem->reg.ordinal);
            return RILL_ERR_INVALID_ARG;
        }
    } else if (!peer_ok(ctx, dst, fn, true) || !peer_ok(ctx, &remote_sem->reg, fn, true))
        return RILL_ERR_INVALID_ARG;
    pc_args_t a = {
        .src = src, .dst = dst, .remote = remote_sem, .local = local_sem, .net_idx = net_idx
    };
    s = gm_proxy_call(p, do_pc_create, &a, fn);
    if (s != RILL_SUCCESS) {
        RILL_ERROR(RILL_LOG_GPU, "%s: %s", fn, a.err);
        return s;
    }
    *pc = a.pc;
    RILL_VERBOSE(RILL_LOG_GPU, 2, "port channel %u: GPU %d -> rank %d GPU %d (%llu B region)%s",
                 a.pc->id, p->ordinal, dst->rank, dst->ordinal, (unsigned long long)dst->size,
                 net_idx >= 0 ? ", over the net wire" : "");
    return RILL_SUCCESS;
}

static rill_status_t do_pc_destroy(gm_proxy_t *p, void *arg)
{
    rill_port_channel_t *c = arg;
    /* carry out what is left, then wait for the stream (teardown, not the loop's work) */
    while (pc_serve(p, c, 1 << 20) > 0)
        ;
    if (c->net_rank >= 0)
        gm_pcnet_channel_drain(p, c);
    else
        cudaStreamSynchronize(c->stream);
    for (rill_port_channel_t **pp = &p->channels; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    atomic_fetch_sub(&p->nchannels, 1);
    pc_free(p, c);
    return RILL_SUCCESS;
}

rill_status_t rill_port_channel_destroy(rill_context_t *ctx, rill_port_channel_t **pc)
{
    if (!pc)
        return null_arg("rill_port_channel_destroy", "the channel's address (pc)");
    if (!*pc) /* nothing to destroy */
        return RILL_SUCCESS;
    if ((*pc)->host) {
        rill_status_t hs = rill_hchan_destroy((*pc)->host);
        free(*pc);
        *pc = NULL;
        return hs;
    }
    gm_proxy_t *p;
    rill_status_t s = proxy_of(ctx, (*pc)->gpu, &p, "rill_port_channel_destroy");
    if (s != RILL_SUCCESS)
        return s;
    s = gm_proxy_call(p, do_pc_destroy, *pc, "rill_port_channel_destroy");
    *pc = NULL;
    return s;
}

rill_port_channel_dev_t rill_port_channel_device(const rill_port_channel_t *pc)
{
    if (!pc) {
        null_arg("rill_port_channel_device", "the channel (pc)");
        return (rill_port_channel_dev_t){ 0 };
    }
    if (pc->host) {
        RILL_ERROR(RILL_LOG_GPU,
                   "rill_port_channel_device: channel %u is a host channel "
                   "(RILL_HOST_MEMORY): it has no device handle",
                   pc->id);
        return (rill_port_channel_dev_t){ 0 };
    }
    rill_port_channel_dev_t d = {
        .fifo = pc->fifo.dev, .flushed = pc->flushed_dev, .inbound = pc->local_sem, .expected = 0
    };
    return d;
}

rill_status_t rill_port_channel_push(rill_port_channel_t *pc, unsigned flags, uint64_t dst_off,
                                     uint64_t src_off, uint64_t size, uint64_t *done_pos)
{
    if (!pc)
        return null_arg("rill_port_channel_push", "the channel (pc)");
    if (flags == 0 || (flags & ~7u)) {
        RILL_ERROR(RILL_LOG_GPU,
                   "rill_port_channel_push: flags %u: allowed are RILL_PC_PUT, RILL_PC_SIGNAL "
                   "and RILL_PC_FLUSH combined",
                   flags);
        return RILL_ERR_INVALID_ARG;
    }
    if (pc->host)
        return rill_hchan_push(pc->host, flags, dst_off, src_off, size, done_pos);
    host_req_t *r = malloc(sizeof(*r));
    if (!r)
        return RILL_ERR_NO_MEMORY;
    *r = (host_req_t){ .type = flags, .dst_off = dst_off, .src_off = src_off, .size = size };
    /* one sequence number per request, pushed in that order (the lock makes the two one
     * step), so the flushed word the proxy writes only grows */
    rill_spinlock_lock(&pc->push_lock);
    uint64_t seq = r->seq = pc->host_seq++;
    rill_mpsc_push(&pc->hostq, &r->link);
    rill_spinlock_unlock(&pc->push_lock);
    if (done_pos)
        *done_pos = seq + 1; /* not r->seq: the proxy may have freed r by now */
    rill_evcount_signal(pc->p->wake, 0);
    return RILL_SUCCESS;
}

rill_status_t rill_port_channel_wait_flushed(rill_port_channel_t *pc, uint64_t pos,
                                             double timeout_s)
{
    if (!pc)
        return null_arg("rill_port_channel_wait_flushed", "the channel (pc)");
    if (pc->host)
        return rill_hchan_wait_flushed(pc->host, pos, timeout_s);
    uint64_t t0 = rill_time_ns();
    /* acquire pairs with the stream write (memory barrier first) behind the copies */
    while (__atomic_load_n(&pc->flushed_host[1], __ATOMIC_ACQUIRE) < pos) {
        if ((double)(rill_time_ns() - t0) > timeout_s * 1e9) {
            RILL_ERROR(RILL_LOG_GPU,
                       "port channel %u: flush position %llu not reached after %.1f s (at "
                       "%llu)",
                       pc->id, (unsigned long long)pos, timeout_s,
                       (unsigned long long)__atomic_load_n(&pc->flushed_host[1], __ATOMIC_ACQUIRE));
            return RILL_ERR_TIMEOUT;
        }
        rill_cpu_relax();
    }
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ memory channels */

typedef struct mc_args {
    const rill_regmem_t *local, *peer;
    const rill_sem_t *remote, *lsem;
    rill_memory_channel_t *mc;
    char err[256];
} mc_args_t;

static rill_status_t do_mc_create(gm_proxy_t *p, void *arg)
{
    mc_args_t *a = arg;
    rill_memory_channel_t *c = calloc(1, sizeof(*c));
    if (!c) {
        snprintf(a->err, sizeof(a->err), "out of host memory");
        return RILL_ERR_NO_MEMORY;
    }
    void *local = NULL, *peer = NULL, *rsem = NULL;
    rill_status_t s;
    if ((s = rill_regmem_map(a->local, &local, a->err, sizeof(a->err))) != RILL_SUCCESS ||
        (s = rill_regmem_map(a->peer, &peer, a->err, sizeof(a->err))) != RILL_SUCCESS ||
        (s = rill_regmem_map(&a->remote->reg, &rsem, a->err, sizeof(a->err))) != RILL_SUCCESS)
        goto fail;
    if ((s = rill_zone_alloc(p->res->zone, 8, &c->outbound_block)) != RILL_SUCCESS) {
        snprintf(a->err, sizeof(a->err), "GPU %d's zone is full", p->ordinal);
        goto fail;
    }
    cudaError_t e = cudaMemsetAsync((void *)c->outbound_block, 0, 8, p->setup);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(p->setup);
    if (e != cudaSuccess) {
        snprintf(a->err, sizeof(a->err), "cudaMemset: %s", cudaGetErrorString(e));
        rill_zone_free(p->res->zone, c->outbound_block);
        s = RILL_ERR_DEVICE;
        goto fail;
    }
    c->gpu = p->gpu;
    c->dev = (rill_memory_channel_dev_t){ .peer = peer,
                                          .local = local,
                                          .peer_size = a->peer->size,
                                          .local_size = a->local->size,
                                          .peer_inbound = rsem,
                                          .outbound = (uint64_t *)c->outbound_block,
                                          .inbound = a->lsem ? a->lsem->ptr : NULL,
                                          .id = atomic_fetch_add(&next_channel_id, 1),
                                          .spin_limit = rill_channel_spin_limit(),
                                          .err = p->err_dev };
    a->mc = c;
    return RILL_SUCCESS;
fail:
    free(c);
    return s;
}

rill_status_t rill_memory_channel_create(rill_context_t *ctx, int gpu, const rill_regmem_t *local,
                                         const rill_regmem_t *peer, const rill_sem_t *remote_sem,
                                         const rill_sem_t *local_sem, rill_memory_channel_t **mc)
{
    static const char fn[] = "rill_memory_channel_create";
    if (!local || !peer || !remote_sem || !mc)
        return null_arg(fn, !local        ? "the local region"
                            : !peer       ? "the peer region"
                            : !remote_sem ? "the remote semaphore"
                                          : "the address to store the channel at (mc)");
    gm_proxy_t *p;
    rill_status_t s = proxy_of(ctx, gpu, &p, fn);
    if (s != RILL_SUCCESS)
        return s;
    if (!mc || !regmem_ok(local, "local region", fn) || !regmem_ok(peer, "peer region", fn) ||
        !remote_sem || !regmem_ok(&remote_sem->reg, "remote semaphore", fn))
        return RILL_ERR_INVALID_ARG;
    if (!peer_ok(ctx, peer, fn, false) || !peer_ok(ctx, &remote_sem->reg, fn, false))
        return RILL_ERR_INVALID_ARG;
    mc_args_t a = { .local = local, .peer = peer, .remote = remote_sem, .lsem = local_sem };
    s = gm_proxy_call(p, do_mc_create, &a, fn);
    if (s != RILL_SUCCESS) {
        RILL_ERROR(RILL_LOG_GPU, "%s: %s", fn, a.err);
        return s;
    }
    *mc = a.mc;
    return RILL_SUCCESS;
}

rill_status_t rill_memory_channel_destroy(rill_context_t *ctx, rill_memory_channel_t **mc)
{
    if (!mc)
        return null_arg("rill_memory_channel_destroy", "the channel's address (mc)");
    if (!*mc) /* nothing to destroy */
        return RILL_SUCCESS;
    rill_status_t s = rill_gpu_free(ctx, (*mc)->gpu, (void *)(*mc)->outbound_block);
    free(*mc);
    *mc = NULL;
    return s;
}

rill_memory_channel_dev_t rill_memory_channel_device(const rill_memory_channel_t *mc)
{
    if (!mc) {
        null_arg("rill_memory_channel_device", "the channel (mc)");
        return (rill_memory_channel_dev_t){ 0 };
    }
    return mc->dev;
}

int rill_channel_device_error(rill_context_t *ctx, int gpu, char *msg, size_t len)
{
    gm_proxy_t *p;
    if (proxy_of(ctx, gpu, &p, "rill_channel_device_error") != RILL_SUCCESS)
        return 0;
    int code = __atomic_load_n(&p->err_host->code, __ATOMIC_ACQUIRE);
    if (code <= 0)
        return 0;
    const rill_dev_error_t *e = p->err_host;
    static const char *const what[] = { "", "semaphore wait", "FIFO push (full)", "flush" };
    if (msg && len)
        snprintf(msg, len,
                 "GPU %d: %s on channel/semaphore %u gave up after %llu spins: expected %llu, "
                 "saw %llu (device_channel_spin_limit)",
                 p->ordinal, code < 4 ? what[code] : "?", e->id, (unsigned long long)e->spins,
                 (unsigned long long)e->expected, (unsigned long long)e->seen);
    return code;
}

rill_status_t rill_channel_counters(const rill_context_t *ctx, int gpu, rill_channel_counters_t *c)
{
    if (!c)
        return null_arg("rill_channel_counters", "the counters (c)");
    gm_proxy_t *p;
    rill_status_t s = proxy_of((rill_context_t *)ctx, gpu, &p, "rill_channel_counters");
    if (s != RILL_SUCCESS)
        return s;
    c->requests = atomic_load(&p->n_req);
    c->puts = atomic_load(&p->n_put);
    c->put_bytes = atomic_load(&p->b_put);
    c->signals = atomic_load(&p->n_signal);
    c->flushes = atomic_load(&p->n_flush);
    c->proxy_busy_s = (double)atomic_load(&p->busy_ns) / 1e9;
    return RILL_SUCCESS;
}
#endif
