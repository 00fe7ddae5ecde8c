/* The net wire (UCX) for a thread of its own: a GPU manager, the proxy of its GPU's
 * transfers with other nodes, connects to the other nodes' managers and sends tiles from
 * its GPU memory into theirs, progressing its worker in its loop. The comm thread is not
 * involved: it only started the wire. Internal. */
#ifndef RILL_COMM_NET_H
#define RILL_COMM_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comm.h"

typedef struct rill_net_worker rill_net_worker_t;

/** Largest record a worker publishes for its peers (rill_net_worker_create). */
#define RILL_NET_RECORD_MAX 2048

/** Whether the net wire started on this rank and moves GPU memory (UCX built with CUDA
 * support): the condition for GPU tiles to go GPU to GPU between nodes. Any thread. */
bool rill_comm_net_gpu(const rill_comm_t *comm);

/**
 * A worker of the net wire for the calling thread, which alone uses it from then on.
 * RILL_ERR_NOT_SUPPORTED when the wire did not start (or was not built). The record (at
 * most RILL_NET_RECORD_MAX bytes: the worker's address) is what a peer's rill_net_connect
 * needs; it is copied to record, its length to *len (in: the room there). Destroy with
 * rill_net_worker_destroy on the same thread.
 */
rill_status_t rill_net_worker_create(rill_comm_t *comm, rill_net_worker_t **w_p, void *record,
                                     size_t *len);
/** Connect to the peer worker (rank, idx) that published record (len bytes): later sends
 * name it by (rank, idx). The worker's thread. */
rill_status_t rill_net_connect(rill_net_worker_t *w, int rank, int idx, const void *record,
                               size_t len);

/** Completion of a send or a receive: on the worker's thread, from rill_net_progress (never
 * inside the call that started it). */
typedef void (*rill_net_done_fn)(void *arg, rill_status_t status);

/**
 * Send size bytes at src (GPU memory when gpu, else host memory; borrowed until done) to
 * the receive of peer (rank, idx) that names tag. done: src may be reused (the bytes were
 * taken or have left). Two-sided, so that UCX picks its best protocol for the memory and
 * the transport (over InfiniBand with GPUDirect RDMA a zero-copy rendezvous, over TCP a
 * pipeline through host memory). The worker's thread.
 */
rill_status_t rill_net_send(rill_net_worker_t *w, int rank, int idx, const void *src, bool gpu,
                            size_t size, uint64_t tag, rill_net_done_fn done, void *arg);
/**
 * Receive size bytes from whichever peer sends with exactly tag into dst (GPU memory when
 * gpu; borrowed until done). done(arg, RILL_SUCCESS): the bytes are in dst (a message of
 * another size fails it). *req_p names the receive for rill_net_cancel until done ran. The
 * worker's thread.
 */
rill_status_t rill_net_recv(rill_net_worker_t *w, void *dst, bool gpu, size_t size, uint64_t tag,
                            rill_net_done_fn done, void *arg, void **req_p);
/** Cancel a receive whose done has not run: done runs later with an error (from
 * rill_net_progress). The worker's thread. */
void rill_net_cancel(rill_net_worker_t *w, void *req);
/** Make progress (over TCP a peer's bytes land only while the receiver progresses); the
 * number of events. The worker's thread. */
int rill_net_progress(rill_net_worker_t *w);
/** Sends and receives not completed. The worker's thread. */
int rill_net_inflight(const rill_net_worker_t *w);
/** Close the endpoints (by force: the traffic is over), free. The worker's thread. */
void rill_net_worker_destroy(rill_net_worker_t *w);

#endif
