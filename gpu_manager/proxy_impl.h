/* The proxy's state, shared by the three files that make it: proxy.c (the service, calls on
 * the manager thread, channels and semaphores), proxy_net.c (port channels to the GPUs of
 * other nodes) and connect.c (the connection of the ranks' GPUs at rill_init). Not for the
 * rest of gpu_manager/, which goes through proxy.h. */
#ifndef RILL_GPU_PROXY_IMPL_H
#define RILL_GPU_PROXY_IMPL_H

#include "proxy.h"

#if RILL_HAVE_CUDA
#include "channel.h"
#include "host_channel.h"
#include "net.h"
#include "rill/channel.h"

/** A request pushed from the host. */
typedef struct host_req {
    rill_mpsc_node_t link;
    unsigned type;
    uint64_t dst_off, src_off, size, seq;
} host_req_t;

struct rill_port_channel {
    uint32_t id;
    int gpu;            /* RILL_HOST_MEMORY: a host channel, host the rest */
    rill_hchan_t *host; /* (runtime/host_channel.c) */
    gm_proxy_t *p;
    char *src, *dst; /* this GPU's region; the peer's, mapped here */
    uint64_t src_size, dst_size;
    uint64_t *remote_sem;        /* mapped here */
    uint64_t *local_sem;         /* may be NULL */
    uint64_t signals;            /* the last value written into remote_sem (manager thread) */
    unsigned long long enqueued; /* copies and signals on the stream since it was seen idle */
    rill_fifo_t fifo;
    uintptr_t words;        /* zone block: FIFO head and tail cache */
    uint64_t *flushed_host; /* [0] device positions, [1] host requests: pinned, mapped */
    uint64_t *flushed_dev;
    cudaStream_t stream;
    rill_mpsc_t hostq;
    host_req_t *host_pending;  /* taken from hostq, not yet carried out (manager thread) */
    rill_spinlock_t push_lock; /* host pushers: the sequence number and the push together */
    uint64_t host_seq;
    struct rill_port_channel *next;
    unsigned long long bad; /* malformed requests seen */
    /* a channel to a GPU of another node (proxy_net.c): net_rank >= 0 */
    int net_rank, net_idx;       /* the target rank and its GPU's index there */
    uint64_t dst_addr, sem_addr; /* the destination region and the semaphore, in the target */
    uint64_t net_seq;            /* requests sent: the target applies them in this order */
    int net_sending;             /* sends whose completion has not come */
};

typedef struct gm_pcnet gm_pcnet_t; /* port channels between nodes (proxy_net.c) */

struct gm_proxy {
    rill_context_t *ctx;
    int gpu, ordinal;
    rill_cuda_gpu_t *res;
    rill_evcount_t *wake;
    struct gm *mgr; /* its manager (gm_internal.h) */
    rill_mpsc_t calls;
    rill_evcount_t call_done;
    rill_port_channel_t *channels; /* manager thread */
    atomic_int nchannels;
    uint64_t last_active_ns;
    rill_dev_error_t *err_host, *err_dev;
    cudaStream_t setup; /* setup's copies and memsets, synchronised alone (never the device:
                         * kernels may spin on other channels meanwhile) */
    uint32_t next_id;
    atomic_ullong n_req, n_put, b_put, n_signal, n_flush, busy_ns;
    rill_net_worker_t *net; /* the net wire's worker (GPU tiles to other nodes), or NULL */
    gm_pcnet_t *pcnet;      /* port channels between nodes: both ends' state, or NULL */
    /* regions of this GPU described for the application (rill_regmem_get, rill_sem_create):
     * the allocations a port channel from another node may write into */
    struct gm_region {
        uint64_t base, size;
    } * regions;
    int nregions, regions_cap;
};

/** Each GPU's proxy, by its position in ctx->gpus (NULL when not open). */
extern gm_proxy_t *gm_proxies[RILL_CUDA_MAX_GPUS];

/** Run fn(p, arg) on p's manager thread and wait for it (at most 60 s: a manager that does
 * not answer is reported, not waited for forever; what names the caller for that report). */
rill_status_t gm_proxy_call(gm_proxy_t *p, rill_status_t (*fn)(gm_proxy_t *, void *), void *arg,
                            const char *what);

/* Port channels to GPUs of other nodes (proxy_net.c), all on the manager thread */
/** Start this GPU's part of them once its net worker connected: the standing receives of
 * requests and acknowledgements. */
rill_status_t gm_pcnet_start(gm_proxy_t *p);
/** Carry out request pos of c (checked against the regions already): one message, with
 * the put's bytes behind it. */
void gm_pcnet_carry(gm_proxy_t *p, rill_port_channel_t *c, unsigned type, uint64_t dst_off,
                    uint64_t src_off, uint64_t size, bool from_host, uint64_t pos);
/** One round: the worker's progress, then acknowledgements whose signals are written. */
int gm_pcnet_step(gm_proxy_t *p);
/** Whether this GPU is the target of channels from other nodes (its manager polls). */
bool gm_pcnet_target(const gm_proxy_t *p);
/** Wait (bounded) until c's sends completed, before it is freed. */
void gm_pcnet_channel_drain(gm_proxy_t *p, rill_port_channel_t *c);
/** Cancel what is posted, free the state (the manager stopped; before the worker goes). */
void gm_pcnet_stop(gm_proxy_t *p);
#endif

#endif
