/* The channel primitives, host side (device side: include/rill/channel_device.cuh): the
 * driver's stream memory operations, registered memory (CUDA IPC of a whole allocation plus
 * an offset, mappings of peers' allocations opened once per process and cached), port
 * channel FIFOs (ring in pinned host memory, polled in order), bounded stream waits. CUDA
 * calls: made by the GPU manager thread of the GPU concerned (the runtime), or by the
 * application's own threads through the public API. Internal. */
#ifndef RILL_DEVICE_CHANNEL_H
#define RILL_DEVICE_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rill/config.h"
#include "rill/status.h"

/** Register the device_channel_* / device_stream_* parameters. Main thread. */
rill_status_t rill_channel_register_params(void);

/** Spin limit of device-side waits (device_channel_spin_limit). */
uint64_t rill_channel_spin_limit(void);
/** Slots of a port channel's FIFO (device_channel_fifo_slots, a power of two). */
uint32_t rill_channel_fifo_slots(void);

#if RILL_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "rill/channel.h"

/** The driver's cuStreamWaitValue64 (flags CU_STREAM_WAIT_VALUE_GEQ) and
 * cuStreamWriteValue64 (default flags: a memory barrier before the write), found through
 * cudaGetDriverEntryPointByVersion (no link against libcuda). Error text into err. */
rill_status_t rill_cu_stream_wait64(cudaStream_t s, const uint64_t *addr, uint64_t value, char *err,
                                    size_t len);
rill_status_t rill_cu_stream_write64(cudaStream_t s, uint64_t *addr, uint64_t value, char *err,
                                     size_t len);

/** This process's identity in registered-memory descriptors. */
uint64_t rill_regmem_process_id(void);

/** Fill *r for [ptr, + size) on the current device (ordinal): the allocation holding it
 * (cuMemGetAddressRange), its IPC handle, the offset. rank and node are the caller's. */
rill_status_t rill_regmem_describe(const void *ptr, size_t size, int ordinal, int rank,
                                   uint64_t node, rill_regmem_t *r, char *err, size_t len);

/** Where r's region is in this process: directly for this process's memory, else through
 * the allocation's IPC mapping, opened on the current device at the first use (and peer
 * access enabled lazily) and kept until rill_regmem_unmap_all. */
rill_status_t rill_regmem_map(const rill_regmem_t *r, void **ptr, char *err, size_t len);
/** Close every IPC mapping opened by rill_regmem_map (rill_fini, on the thread of ordinal's
 * manager: ordinal < 0 closes all). */
void rill_regmem_unmap_all(int ordinal);

/** Forget the streams rill_sem_stream_wait tracked (rill_fini). */
void rill_stream_waits_release(void);

/** A FIFO's host side: the ring and the tail word in pinned, mapped host memory; head and
 * the tail cache in device memory given by the caller (16 bytes). */
typedef struct rill_fifo {
    rill_trigger_t *ring;
    uint64_t *tail_word; /* host memory: what the proxy popped (read by the GPU) */
    uint64_t tail;       /* the proxy's copy */
    uint32_t size;
    rill_fifo_dev_t dev;
} rill_fifo_t;

/** Set up a FIFO of size slots (power of two) with head / tail cache at dev_words (16 bytes
 * of device memory, zeroed on stream s, which is synchronised: setup time; not the whole
 * device, where kernels may be spinning on other channels). */
rill_status_t rill_fifo_init(rill_fifo_t *f, uint32_t size, uint32_t id, void *dev_words,
                             rill_dev_error_t *err_dev, cudaStream_t s, char *err, size_t len);
void rill_fifo_fini(rill_fifo_t *f);

/**
 * The next trigger, if it is committed: true and *t filled (its commit bits cleared).
 * Ordering: the pusher wrote both halves, each with this lap's commit bit, in one 16-byte
 * release store; each half is seen whole, so a half with this lap's bit is the new one,
 * and once both are, the trigger is complete; the acquire loads make what the pusher
 * wrote before it visible. A half of the previous lap: not yet (poll again later). Proxy
 * thread only.
 */
static inline bool rill_fifo_poll(rill_fifo_t *f, rill_trigger_t *t)
{
    rill_trigger_t *slot = f->ring + (f->tail & (f->size - 1));
    uint64_t bit = (uint64_t)((~(f->tail / f->size)) & 1) << 63;
    uint64_t snd = __atomic_load_n(&slot->snd, __ATOMIC_ACQUIRE);
    if ((snd & (1ull << 63)) != bit)
        return false;
    uint64_t fst = __atomic_load_n(&slot->fst, __ATOMIC_ACQUIRE);
    if ((fst & (1ull << 63)) != bit)
        return false;
    t->fst = fst & ~(1ull << 63);
    t->snd = snd & ~(1ull << 63);
    return true;
}

/** Give the polled slot back: the release store pairs with the pushers' acquire load of
 * the tail (they reuse the slot only after this read of it). Proxy thread only. */
static inline void rill_fifo_pop(rill_fifo_t *f)
{
    f->tail++;
    __atomic_store_n(f->tail_word, f->tail, __ATOMIC_RELEASE);
}

/** Unpack a trigger (the layout is in channel_device.cuh). */
static inline void rill_trigger_unpack(const rill_trigger_t *t, unsigned *type, uint64_t *dst_off,
                                       uint64_t *src_off, uint64_t *size)
{
    *src_off = t->fst & ((1ull << 40) - 1);
    *dst_off = t->snd & ((1ull << 40) - 1);
    *size = ((t->fst >> 40) & 0x7fffffull) | (((t->snd >> 40) & 0xffffull) << 23);
    *type = (unsigned)((t->snd >> 56) & 7);
}
#endif

#endif
