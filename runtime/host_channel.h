/* Port channels between host memory regions of two ranks, on any node: the host-memory path of
 * rill_port_channel (include/rill/channel.h, gpu RILL_HOST_MEMORY), carried out by the comm
 * engine over each peer's wire (MPI on a node, UCX between nodes when built with it), so it
 * runs where no GPU is. A put is one-sided for the caller: the target rank's comm thread
 * acts for it (it GETs the bytes into the destination region, writes the semaphore, and
 * acknowledges), in the order the requests were pushed. docs/channels.md ("Host memory, any
 * node") gives the protocol and its ordering argument. Internal. */
#ifndef RILL_HOST_CHANNEL_H
#define RILL_HOST_CHANNEL_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"

typedef struct rill_hchan rill_hchan_t;

/** The channels' message tag (rill_init, every rank in the same order, after the remote
 * dependencies'). */
rill_status_t rill_hchan_init(rill_context_t *ctx);
/** Forget the regions and the channels' bookkeeping (rill_fini). */
void rill_hchan_fini(void);

/** [ptr, + size) of this rank's host memory may be written by peers' channels (until
 * rill_fini, or rill_hchan_region_remove). Any thread. */
rill_status_t rill_hchan_region_add(const void *ptr, size_t size);
void rill_hchan_region_remove(const void *ptr);

/**
 * A channel from this rank's host memory [src, + src_size) to rank peer's registered region
 * [dst, + dst_size) (its addresses in that process), whose signals go into the 8-byte
 * semaphore at sem there. Main thread.
 */
rill_status_t rill_hchan_create(rill_context_t *ctx, const void *src, uint64_t src_size, int peer,
                                uint64_t dst, uint64_t dst_size, uint64_t sem, rill_hchan_t **h);
/** rill_port_channel_push's request (flags RILL_PC_*): checked against the regions' sizes
 * here (RILL_ERR_INVALID_ARG, said), then carried out in order; *done_pos the position
 * rill_hchan_wait_flushed waits for. The source bytes must stay unchanged until then. Any
 * thread. */
rill_status_t rill_hchan_push(rill_hchan_t *h, unsigned flags, uint64_t dst_off, uint64_t src_off,
                              uint64_t size, uint64_t *done_pos);
/** Wait until the target acknowledged every request up to pos: RILL_ERR_TIMEOUT after
 * timeout_s (naming the channel and the positions), or the first request's failure the
 * target reported. Any thread. */
rill_status_t rill_hchan_wait_flushed(rill_hchan_t *h, uint64_t pos, double timeout_s);
/** Wait (up to 30 s) for every request pushed, then free the channel. Main thread. */
rill_status_t rill_hchan_destroy(rill_hchan_t *h);
uint32_t rill_hchan_id(const rill_hchan_t *h);

/** Wait until the host semaphore at sem holds at least value (acquire: what the signalling
 * side's puts wrote before the signal is visible then); RILL_ERR_TIMEOUT after timeout_s.
 * Any thread. */
rill_status_t rill_hchan_sem_wait(const uint64_t *sem, uint64_t value, double timeout_s);

#endif
