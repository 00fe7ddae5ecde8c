/* The proxy's state, shared by the two files that make it: proxy.c (the service, calls on
 * the manager thread, channels and semaphores) and connect.c (the connection of the ranks'
 * GPUs at rill_init). Not for the rest of gpu_manager/, which goes through proxy.h. */
#ifndef RILL_GPU_PROXY_IMPL_H
#define RILL_GPU_PROXY_IMPL_H

#include "proxy.h"

#if RILL_HAVE_CUDA
#include "channel.h"
#include "net.h"
#include "rill/channel.h"

struct gm_proxy {
    rill_context_t *ctx;
    int gpu, ordinal;
    rill_cuda_gpu_t *res;
    rill_evcount_t *wake;
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
};

/** Each GPU's proxy, by its position in ctx->gpus (NULL when not open). */
extern gm_proxy_t *gm_proxies[RILL_CUDA_MAX_GPUS];

/** Run fn(p, arg) on p's manager thread and wait for it (at most 60 s: a manager that does
 * not answer is reported, not waited for forever; what names the caller for that report). */
rill_status_t gm_proxy_call(gm_proxy_t *p, rill_status_t (*fn)(gm_proxy_t *, void *), void *arg,
                            const char *what);
#endif

#endif
