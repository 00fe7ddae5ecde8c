/* The CUDA device module: discovery of the GPUs this process can use (with their nearest
 * cores, from hwloc), their selection (device_cuda_* parameters, split between the local
 * ranks of a node), and each selected GPU's resources: one memory zone carved by the zone
 * allocator, streams, an event pool, cuBLAS and cuSOLVER handles and workspaces per exec
 * stream, peer access. Host code on the CUDA runtime; without the toolkit at configure time
 * it reports "not built" and selects no GPU. Internal. */
#ifndef RILL_DEVICE_CUDA_H
#define RILL_DEVICE_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rill/config.h"
#include "rill/status.h"

#include "zone.h"

#define RILL_CUDA_MAX_GPUS    8
#define RILL_CUDA_MAX_STREAMS 16 /* exec streams per GPU */

/** What discovery found of one GPU. */
typedef struct rill_cuda_gpu_info {
    int ordinal; /* CUDA device ordinal */
    char name[96];
    char pci_bus_id[32]; /* "0000:18:00.0" */
    int cc_major, cc_minor;
    size_t total_mem;
    int sm_count;
    char nearest_cores[128]; /* hwloc list of the cores nearest to it ("0-15"), or "?" */
    int numa_node;           /* OS index of its NUMA node, -1 if unknown */
    int sharers;             /* processes of the node that use it (rill_cuda_select), >= 1 */
} rill_cuda_gpu_info_t;

/** Register the device_cuda_* parameters. Main thread. */
rill_status_t rill_cuda_register_params(void);

/** Discover the GPUs: *n_p of them (at most max) into gpus. 0 GPUs is not an error; why
 * none are usable (no toolkit at build time, no driver, no device) is written into why
 * (len bytes). Any thread (makes no context: only device properties are read). */
rill_status_t rill_cuda_discover(rill_cuda_gpu_info_t *gpus, int max, int *n_p, char *why,
                                 size_t len);

/** Set the environment the CUDA driver reads when it makes a context (the hardware work
 * queues per GPU: CUDA_DEVICE_MAX_CONNECTIONS, unless the user set it), before anything of
 * the process may make one: MPI_Init and UCX's CUDA transports do. rill_init's first step.
 * Main thread. */
void rill_cuda_env_early(void);

/** The GPUs this process uses: those discovered, allowed by device_cuda_enabled and
 * device_cuda_mask, split between the local_size processes of the node (contiguous blocks;
 * with fewer GPUs than processes, process r takes GPU r % n). 0 GPUs is not an error: why
 * says the reason. Main thread. */
rill_status_t rill_cuda_select(int local_rank, int local_size, rill_cuda_gpu_info_t *gpus, int max,
                               int *n_p, char *why, size_t len);

/** Print one line per GPU (or why there is none) to out, for rill_info --devices. */
void rill_cuda_print_devices(FILE *out);

#if RILL_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

/** One exec stream and what a task body enqueued on it uses. */
typedef struct rill_cuda_exec {
    cudaStream_t stream;
    cublasHandle_t cublas;
    cusolverDnHandle_t cusolver;
    void *workspace; /* device memory from the zone, for bodies (cuSOLVER's work array) */
    size_t workspace_size;
    int index;
} rill_cuda_exec_t;

/**
 * A GPU's resources, owned by its manager thread (every call below is made on it, after
 * cudaSetDevice). Nothing is allocated from the device after rill_cuda_gpu_open.
 */
typedef struct rill_cuda_gpu {
    rill_cuda_gpu_info_t info;
    void *zone_base; /* the one cudaMalloc */
    size_t zone_bytes;
    rill_zone_t *zone; /* carves [zone_base, + zone_bytes) */
    cudaStream_t h2d, d2h;
    cudaStream_t peer[RILL_CUDA_MAX_GPUS]; /* D2D from local GPU of that ordinal, or NULL */
    int nexec;
    int nurgent; /* exec streams 0 .. nurgent-1 are at the greatest priority (< nexec) */
    rill_cuda_exec_t exec[RILL_CUDA_MAX_STREAMS];
    cudaEvent_t *events; /* the pool: free events (no timing) */
    int nevents, cap_events;
    cudaEvent_t *tevents; /* the pool of timing events */
    int ntevents, cap_tevents;
    int *status_host; /* host-mapped words bodies may hand to kernels (cuSOLVER's info) */
    int *status_dev;  /* the same words as the device sees them */
    int nstatus;
} rill_cuda_gpu_t;

/** What to set up (the device_cuda_* parameters as read by the caller). */
typedef struct rill_cuda_gpu_config {
    int memory_use_pct;  /* of the free memory at open */
    size_t memory_bytes; /* when non-zero: exactly this much instead */
    int exec_streams;
    int urgent_streams; /* of them at the greatest priority (fewer when not enough streams) */
    size_t workspace;   /* per exec stream */
    int nstatus;        /* status words (one per task in flight) */
    const int *peers;   /* ordinals of the other local GPUs of this process */
    int npeers;
} rill_cuda_gpu_config_t;

/** The configuration the device_cuda_* parameters ask for (peers and nstatus left 0). */
void rill_cuda_config_from_params(rill_cuda_gpu_config_t *cfg);

/** Set up GPU info->ordinal on the calling thread (cudaSetDevice first). Errors name the
 * call that failed in err. */
rill_status_t rill_cuda_gpu_open(const rill_cuda_gpu_info_t *info,
                                 const rill_cuda_gpu_config_t *cfg, rill_cuda_gpu_t **gpu_p,
                                 char *err, size_t len);
/** Free everything rill_cuda_gpu_open made. *gpu_p becomes NULL. Same thread. */
void rill_cuda_gpu_close(rill_cuda_gpu_t **gpu_p);

/** An event from the pool (created when the pool is empty; with timing, one that
 * cudaEventElapsedTime accepts); give it back to the same pool once nothing will wait on it
 * any more. NULL when none can be created. */
cudaEvent_t rill_cuda_event_get(rill_cuda_gpu_t *gpu, bool timing);
void rill_cuda_event_put(rill_cuda_gpu_t *gpu, cudaEvent_t ev, bool timing);
#endif

/** Page-lock size bytes at ptr for asynchronous transfers (cudaHostRegister, portable to
 * every GPU). false when it cannot (no CUDA, or the range is not registrable: the copies
 * still work, synchronously). Any thread. */
bool rill_cuda_host_register(void *ptr, size_t size);
void rill_cuda_host_unregister(void *ptr);

#endif
