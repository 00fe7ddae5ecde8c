/* Channels between GPUs: semaphores in device memory, registered memory, memory channels
 * (GPU threads load and store into a peer's memory) and port channels (put / signal / flush
 * requests carried out by the GPU manager of the local GPU with the copy engine). The host
 * API is here; the device API, for kernels, is rill/channel_device.cuh. docs/channels.md
 * explains the model, the memory-ordering arguments and the limits.
 *
 * Include it only in code compiled with the CUDA toolkit's headers on the include path (Rill
 * built with CUDA). Every function returns RILL_ERR_NOT_SUPPORTED (with a log line saying
 * why) when the process has no GPU, but for host memory (RILL_HOST_MEMORY), which needs
 * none. */
#ifndef RILL_CHANNEL_H
#define RILL_CHANNEL_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "rill/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- shared with device code */

/** One request in a port channel's FIFO: 16 bytes, written by one 16-byte store (see
 * channel_device.cuh for the field layout and the commit bit). */
typedef struct __attribute__((aligned(16))) rill_trigger {
    uint64_t fst, snd;
} rill_trigger_t;

/** What the device side of a channel failed on: a spin that ran past its limit. */
enum {
    RILL_DEV_ERR_NONE = 0,
    RILL_DEV_ERR_SEM_WAIT = 1,  /* a semaphore wait: expected and seen are the values */
    RILL_DEV_ERR_FIFO_FULL = 2, /* a push found the FIFO full: expected is the position,
                                 * seen the proxy's tail */
    RILL_DEV_ERR_FLUSH = 3,     /* a flush: expected is the position, seen the flushed one */
};

/** The first error of a GPU's channel device code, in host-mapped memory
 * (rill_channel_device_error reads it). */
typedef struct rill_dev_error {
    int code;    /* RILL_DEV_ERR_*, 0 while none */
    uint32_t id; /* the semaphore's or the channel's id */
    uint64_t expected, seen, spins;
} rill_dev_error_t;

/** A FIFO as GPU threads see it. */
typedef struct rill_fifo_dev {
    rill_trigger_t *ring;          /* pinned host memory, the device's view */
    unsigned long long *head;      /* next position to take (device memory) */
    const volatile uint64_t *tail; /* positions the proxy popped (host word, device view) */
    uint64_t *tail_cache;          /* the last tail a pusher read (device memory) */
    uint32_t size;                 /* a power of two */
    uint32_t id;                   /* the channel's id, in errors */
    uint64_t spin_limit;
    rill_dev_error_t *err;
} rill_fifo_dev_t;

/** A port channel as GPU threads see it: pass it to a kernel by value. */
typedef struct rill_port_channel_dev {
    rill_fifo_dev_t fifo;
    const volatile uint64_t *flushed; /* requests carried out up to this position (host word,
                                       * device view) */
    uint64_t *inbound;                /* this side's semaphore, signalled by the peer */
    uint64_t expected;                /* signals this copy of the handle waited for */
} rill_port_channel_dev_t;

/** A memory channel as GPU threads see it: pass it to a kernel by value. */
typedef struct rill_memory_channel_dev {
    char *peer;  /* the peer's registered region, mapped here */
    char *local; /* this side's registered region */
    uint64_t peer_size, local_size;
    uint64_t *peer_inbound; /* the peer's semaphore, mapped here: this side signals it */
    uint64_t *outbound;     /* signals this side sent (device memory, one signaller) */
    uint64_t *inbound;      /* this side's semaphore, signalled by the peer */
    uint64_t expected;      /* signals this copy of the handle waited for */
    uint32_t id;
    uint64_t spin_limit;
    rill_dev_error_t *err;
} rill_memory_channel_dev_t;

/* ---------------------------------------------------------------- host API */

/** A device memory region and what a peer process needs to reach it: the CUDA IPC handle
 * of the allocation that holds it and the offset within. Plain data: send it to other
 * ranks as bytes (rill_context_allgather). */
typedef struct rill_regmem {
    uint32_t magic;        /* RILL_REGMEM_MAGIC when valid */
    int32_t rank;          /* the owner's rank */
    int32_t ordinal;       /* the owner's CUDA device ordinal */
    uint32_t rkey;         /* RDMA key (the ibverbs channel; 0 here) */
    uint64_t process;      /* the owner process's identity (a mapping in it needs no IPC) */
    uint64_t node;         /* the owner's node identity */
    uint64_t base;         /* the allocation's address in the owner process */
    uint64_t base_size;    /* its size */
    uint64_t offset, size; /* the region: [base + offset, + size) */
    unsigned char ipc[64]; /* cudaIpcMemHandle_t of the allocation */
} rill_regmem_t;
#define RILL_REGMEM_MAGIC 0x52474d31u /* "RGM1" */

/** A semaphore: a 64-bit counter in device memory that only grows, with its registered
 * region (8 bytes) for peers. One side signals it (writes ever larger values), others wait. */
typedef struct rill_sem {
    uint64_t *ptr; /* device memory of its GPU (in that GPU's zone) */
    uint32_t id;
    rill_regmem_t reg;
} rill_sem_t;

/** The gpu argument naming host memory (rill_regmem_get, rill_sem_create, rill_sem_destroy,
 * rill_port_channel_create): regions and semaphores in this process's host memory, and port
 * channels between the host memory of two ranks on any nodes, carried out by the comm engine
 * over each peer's wire (MPI on a node, UCX between nodes when built with it); they need no
 * GPU. Requests come from the host only (rill_port_channel_push); a host semaphore is waited
 * for with rill_sem_wait. docs/channels.md, "Host memory, any node". */
#define RILL_HOST_MEMORY (-1)

typedef struct rill_port_channel rill_port_channel_t;
typedef struct rill_memory_channel rill_memory_channel_t;

/** Wait until host semaphore sem (rill_sem_create with RILL_HOST_MEMORY) holds at least
 * value: what the channel that signalled it put before the signal is then visible here.
 * RILL_ERR_TIMEOUT after timeout_s seconds (said, with the value seen); RILL_ERR_INVALID_ARG
 * for a semaphore of a GPU. Any thread. */
RILL_API rill_status_t rill_sem_wait(const rill_sem_t *sem, uint64_t value, double timeout_s);

/** Device memory of size bytes from GPU gpu's zone (gpu: 0 .. rill_context_ngpus - 1),
 * 256-byte aligned, registered for peers. RILL_ERR_NO_MEMORY, with the sizes in the log,
 * when the zone has no such block free. Any thread. */
RILL_API rill_status_t rill_gpu_alloc(rill_context_t *ctx, int gpu, size_t size, void **ptr);
RILL_API rill_status_t rill_gpu_free(rill_context_t *ctx, int gpu, void *ptr);

/** The descriptor of [ptr, + size) on GPU gpu: any device memory of that GPU (the zone, or
 * the caller's own cudaMalloc); with gpu RILL_HOST_MEMORY, host memory of this process,
 * which peers' host port channels may then write (until rill_fini). Any thread. */
RILL_API rill_status_t rill_regmem_get(rill_context_t *ctx, int gpu, const void *ptr, size_t size,
                                       rill_regmem_t *reg);

/** A semaphore on GPU gpu, 0 at first. */
RILL_API rill_status_t rill_sem_create(rill_context_t *ctx, int gpu, rill_sem_t *sem);
RILL_API rill_status_t rill_sem_destroy(rill_context_t *ctx, int gpu, rill_sem_t *sem);

/* rill_context_allgather (rill/runtime.h): send these descriptors to the other ranks */

/* rill_context_gpu_direct (rill/runtime.h): whether a peer rank's GPUs are reachable */
/* rill_port_channel_reach (rill/runtime.h): whether this rank's port channels reach them */

/**
 * A port channel from local GPU gpu: puts copy from src (a region of gpu) into dst (a
 * region of a peer GPU: this process's, another process's on this node, or another node's
 * reached over the net wire); signals write into remote_sem (the peer's; on dst's GPU for
 * another node). local_sem (may be NULL) is this side's semaphore, which the peer's channel
 * signals: the device handle waits on it. The GPU manager of gpu carries the requests out,
 * on a copy stream of its own on a node, through its host-staged pipeline to another node
 * (docs/channels.md, "GPUs of other nodes"). Main thread.
 */
RILL_API rill_status_t rill_port_channel_create(rill_context_t *ctx, int gpu,
                                                const rill_regmem_t *src, const rill_regmem_t *dst,
                                                const rill_sem_t *remote_sem,
                                                const rill_sem_t *local_sem,
                                                rill_port_channel_t **pc);
/** Stops its proxy service once every request pushed so far is carried out. Main thread. */
RILL_API rill_status_t rill_port_channel_destroy(rill_context_t *ctx, rill_port_channel_t **pc);
/** The handle kernels use (by value). Its expected count starts at 0: a kernel that waits
 * on a handle where an earlier kernel left off must be given that count (copy the handle
 * back, or set expected), else its first wait is already satisfied. */
RILL_API rill_port_channel_dev_t rill_port_channel_device(const rill_port_channel_t *pc);

/** Port channel requests from the host: flags combine these. */
enum { RILL_PC_PUT = 1, RILL_PC_SIGNAL = 2, RILL_PC_FLUSH = 4 };
/**
 * Push a request: with RILL_PC_PUT copy size bytes from src + src_off to dst + dst_off; with
 * RILL_PC_SIGNAL then write the next signal value into the peer's semaphore (after the
 * data, on the same stream); with RILL_PC_FLUSH then mark the request done when everything
 * before it completed. *done_pos (if not NULL) gets the flush position to wait for. Returns
 * at once: the proxy carries it out. Host requests and device requests of one channel are
 * each carried out in their order, not with each other's. Any thread.
 */
RILL_API rill_status_t rill_port_channel_push(rill_port_channel_t *pc, unsigned flags,
                                              uint64_t dst_off, uint64_t src_off, uint64_t size,
                                              uint64_t *done_pos);
/** Wait until the channel's flushed position reaches pos (host requests), at most timeout_s
 * seconds: RILL_ERR_TIMEOUT names the channel and the positions. Any thread. */
RILL_API rill_status_t rill_port_channel_wait_flushed(rill_port_channel_t *pc, uint64_t pos,
                                                      double timeout_s);

/** A memory channel on local GPU gpu between local (a region of gpu) and peer (a region of
 * a peer GPU), signalling remote_sem and waiting on local_sem. Main thread. */
RILL_API rill_status_t rill_memory_channel_create(
    rill_context_t *ctx, int gpu, const rill_regmem_t *local, const rill_regmem_t *peer,
    const rill_sem_t *remote_sem, const rill_sem_t *local_sem, rill_memory_channel_t **mc);
RILL_API rill_status_t rill_memory_channel_destroy(rill_context_t *ctx, rill_memory_channel_t **mc);
/** The handle kernels use (by value; expected starts at 0, as for a port channel's). */
RILL_API rill_memory_channel_dev_t rill_memory_channel_device(const rill_memory_channel_t *mc);

/**
 * Stream operations on semaphores (sem may be local or a peer's, by its pointer as mapped
 * here: a channel handle's inbound, or rill_sem_t.ptr). The stream waits until *sem >= value
 * (cuStreamWaitValue64); at most device_stream_max_waits waits may be outstanding on one
 * stream: one more returns RILL_ERR_BUSY (enqueue it later), never blocks. The write stores
 * value once the stream's earlier work is done, with a memory barrier before it so that
 * what that work wrote is visible first (cuStreamWriteValue64). The caller's thread.
 */
RILL_API rill_status_t rill_sem_stream_wait(cudaStream_t stream, const uint64_t *sem,
                                            uint64_t value);
RILL_API rill_status_t rill_sem_stream_write(cudaStream_t stream, uint64_t *sem, uint64_t value);

/** The first error the channels' device code of GPU gpu reported (a spin past its limit),
 * as a sentence into msg; 0 when there was none. Any thread. */
RILL_API int rill_channel_device_error(rill_context_t *ctx, int gpu, char *msg, size_t len);

/** Counters of the channels of GPU gpu since rill_init. */
typedef struct rill_channel_counters {
    unsigned long long requests; /* FIFO and host requests carried out */
    unsigned long long puts, put_bytes, signals, flushes;
    double proxy_busy_s; /* time the manager spent carrying requests out */
} rill_channel_counters_t;
RILL_API rill_status_t rill_channel_counters(const rill_context_t *ctx, int gpu,
                                             rill_channel_counters_t *c);

#ifdef __cplusplus
}
#endif
#endif
