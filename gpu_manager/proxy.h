/* The proxy service of a GPU's port channels, a step of its manager's loop, and the calls
 * other threads make on the manager thread (channel and semaphore setup: every CUDA call on
 * a GPU is made by its manager). Internal to gpu_manager/. */
#ifndef RILL_GPU_PROXY_H
#define RILL_GPU_PROXY_H

#include <stdint.h>

#include "core.h"
#include "cuda_device.h"

typedef struct gm_proxy gm_proxy_t;
struct gm; /* a GPU manager (gm_internal.h) */

/** Register the device_proxy_* parameters. Main thread. */
rill_status_t rill_proxy_register_params(void);

#if RILL_HAVE_CUDA
/** Set up GPU gpu's proxy (position in ctx->gpus) on its manager thread, after
 * rill_cuda_gpu_open; wake is the manager's eventcount (signalled when a call or a host
 * request arrives), mgr the manager (whose host-staged pipeline carries the bytes of port
 * channels between nodes). */
rill_status_t gm_proxy_open(rill_context_t *ctx, int gpu, rill_cuda_gpu_t *res,
                            rill_evcount_t *wake, struct gm *mgr, gm_proxy_t **p, char *err,
                            size_t len);
/** Tear down (channels, semaphores' blocks are left to the zone, IPC mappings closed): after
 * the manager thread ended, on the thread that joined it, with the GPU current. */
void gm_proxy_close(gm_proxy_t **p);

/** One round of the proxy: run the calls queued for the manager thread, then carry out up
 * to a bounded number of requests per channel (FIFO and host requests), so that one busy
 * channel delays neither task launches nor the other channels much. Returns the work done.
 * Manager thread. */
int gm_proxy_step(gm_proxy_t *p);

/** How the manager may idle: -1 no channel to watch (sleep until woken), 0 keep polling
 * (a request was carried out within device_proxy_spin_us), else sleep at most this many
 * microseconds between polls (device_proxy_sleep_us). Manager thread. */
int64_t gm_proxy_idle_us(gm_proxy_t *p);
/** Whether a call or a host request is queued (checked before the manager sleeps). */
bool gm_proxy_has_work(gm_proxy_t *p);

/** One line for the watchdog and the report: channels and counters. */
void gm_proxy_describe(gm_proxy_t *p, FILE *out);
#endif

/** Set up the channels between the GPUs of the ranks at rill_init (after the managers
 * started): every GPU's zone is registered memory; the descriptors go to every rank (one
 * allgather); each GPU writes a token into every same-node peer GPU's mailbox through its
 * IPC mapping and each checks what it received, so that a peer rank of the node is "GPU
 * direct" only when CUDA IPC was seen to work both ways. Between nodes, when the net wire
 * moves GPU memory (UCX built with CUDA support), each GPU's manager opens a worker with
 * its zone registered, the records go to every rank, and each GPU connects to every GPU of
 * the other nodes: a peer rank is GPU direct over the net when both ends connected.
 * Collective; main thread. */
rill_status_t rill_gpu_channels_connect(rill_context_t *ctx);
/** Forget what rill_gpu_channels_connect learnt (rill_fini). */
void rill_gpu_channels_forget(void);

#if RILL_HAVE_CUDA
/** Where addr (in this rank's GPU gpu's zone) is in that zone's registration: what a peer
 * passes to gm_peer_zone_map. UINT64_MAX when the zones were not connected. Any thread. */
uint64_t gm_zone_offset(const rill_context_t *ctx, int gpu, uintptr_t addr);
/** Rank rank's GPU gpu's zone bytes [off, off + size), mapped for the calling thread's
 * current GPU (CUDA IPC, opened once per peer zone and cached). Only for a GPU-direct peer
 * (rill_context_gpu_direct). A GPU manager thread. */
rill_status_t gm_peer_zone_map(int rank, int gpu, uint64_t off, size_t size, void **ptr, char *err,
                               size_t len);
/** Whether tiles to and from rank's GPUs go through a wire the managers drive: the net wire
 * (another node, UCX with CUDA support: a put into its zone goes through gm_proxy_net's
 * worker, at the same zone offsets) or the host-staged pipeline (gm_peer_staged). Both take
 * the same landing protocol (remote.c). Any thread, after rill_gpu_channels_connect. */
bool gm_peer_net(int rank);
/** Whether every GPU's net worker here and there connected to every GPU of the other
 * (another node, UCX moving GPU memory): what a port channel between nodes needs, whichever
 * way tiles take (comm_net_gpu). Any thread, after rill_gpu_channels_connect. */
bool gm_peer_net_workers(int rank);
/** The position in rank's GPUs of its CUDA device ordinal (as a descriptor of its memory
 * names it), or -1. Any thread, after rill_gpu_channels_connect. */
int gm_peer_gpu_index(int rank, int ordinal);
/** Whether rank's tiles go through the host-staged pipeline (staged.c: the GPUs do not
 * reach each other, MPI is the wire between the ranks, comm_gpu_staged = pipeline). */
bool gm_peer_staged(int rank);
/** Whether those chunks go over the net wire (UCX, host memory: comm_net_gpu), else over
 * MPI (the comm engine's streams). */
bool gm_peer_staged_net(int rank);
/** The largest MPI tag the host-staged pipeline uses (staged.c). */
int gm_staged_tag_max(void);
/** This GPU's worker of the net wire (NULL when no peer is reached over it). Its manager
 * thread, which progresses it in gm_proxy_step. */
struct rill_net_worker *gm_proxy_net(gm_proxy_t *p);
/** What that worker has in flight: sends and receives, not counting the receives the port
 * channels from other nodes keep posted (proxy_net.c). Its manager thread. */
int gm_proxy_net_inflight(const gm_proxy_t *p);
#endif

#endif
