/* Rill's channels as GPU threads use them: semaphores, the FIFO of a port channel, port
 * channels and memory channels. Include it in your own .cu files; the handles come from the
 * host API (rill/channel.h) and are passed to kernels by value. docs/channels.md has the
 * model; the memory-ordering argument of each signal/wait pair is written beside it.
 *
 * Every spin has a limit (the handle's spin_limit, device_channel_spin_limit): past it the
 * call gives up, records the first such error in the GPU's error word (the host reads it
 * with rill_channel_device_error), prints one line naming the semaphore or channel with the
 * expected and the seen value, and returns false (or RILL_FIFO_FAILED). Nothing hangs. */
#ifndef RILL_CHANNEL_DEVICE_CUH
#define RILL_CHANNEL_DEVICE_CUH

#include <stdint.h>
#include <stdio.h>

#include "rill/channel.h"

#define RILL_FIFO_FAILED UINT64_MAX

/* ---------------------------------------------------------------- loads and stores */

/** Acquire load at system scope: what the signaller wrote before its release store is
 * visible to this thread after it reads the value. */
__device__ __forceinline__ uint64_t rill_ld_acquire_sys(const volatile uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void rill_st_release_sys(volatile uint64_t *p, uint64_t v)
{
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void rill_st_relaxed_sys(volatile uint64_t *p, uint64_t v)
{
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/** Record the first device-side error of this GPU (later ones only print). */
__device__ __forceinline__ void rill_dev_error_set(rill_dev_error_t *err, int code, uint32_t id,
                                                   uint64_t expected, uint64_t seen, uint64_t spins)
{
    if (err && atomicCAS(&err->code, 0, -1) == 0) {
        err->id = id;
        err->expected = expected;
        err->seen = seen;
        err->spins = spins;
        __threadfence_system();
        *(volatile int *)&err->code = code;
    }
}

/* ---------------------------------------------------------------- semaphores */

/**
 * Wait until the semaphore at sem reaches value (acquire spin, at most spin_limit rounds).
 * Ordering: pairs with the signaller's release store (or a stream write with its memory
 * barrier): once the value is seen, everything the signaller wrote before is visible to
 * this thread. Other threads of the block see it after a __syncthreads() that follows.
 */
__device__ __forceinline__ bool rill_sem_wait(const uint64_t *sem, uint64_t value, uint32_t id,
                                              uint64_t spin_limit, rill_dev_error_t *err)
{
    uint64_t seen = rill_ld_acquire_sys(sem), spins = 0;
    while (seen < value) {
        if (++spins > spin_limit) {
            rill_dev_error_set(err, RILL_DEV_ERR_SEM_WAIT, id, value, seen, spins);
            printf("rill: semaphore %u at %p: waited for %llu, still %llu after %llu spins "
                   "(device_channel_spin_limit)\n",
                   id, (const void *)sem, (unsigned long long)value, (unsigned long long)seen,
                   (unsigned long long)spins);
            return false;
        }
        seen = rill_ld_acquire_sys(sem);
    }
    return true;
}

/** Whether the semaphore reached value (one acquire load, no spin). */
__device__ __forceinline__ bool rill_sem_poll(const uint64_t *sem, uint64_t value)
{
    return rill_ld_acquire_sys(sem) >= value;
}

/**
 * Signal: the single signaller of a semaphore stores value (larger than any before).
 * Release at system scope, after a system fence: the writes of this thread, and those of the
 * threads of its block that a __syncthreads() before it ordered, are visible to a peer that
 * acquires the value (fence.sc is cumulative). Use the relaxed variant when no data goes
 * with the signal (pure synchronisation): it only orders this thread's own stores.
 */
__device__ __forceinline__ void rill_sem_signal(uint64_t *sem, uint64_t value)
{
    __threadfence_system();
    rill_st_release_sys(sem, value);
}

__device__ __forceinline__ void rill_sem_signal_relaxed(uint64_t *sem, uint64_t value)
{
    rill_st_relaxed_sys(sem, value);
}

/* ---------------------------------------------------------------- FIFO */

/* Trigger layout (16 bytes):
 *   fst: bits 0-39 source offset, bits 40-62 size bits 0-22, bit 63 commit
 *   snd: bits 0-39 destination offset, bits 40-55 size bits 23-38, bits 56-58 type
 *        (RILL_PC_PUT | RILL_PC_SIGNAL | RILL_PC_FLUSH), bit 63 commit
 * The commit bit of position p is 1 on even laps of the ring and 0 on odd ones: a slot still
 * holding the previous lap's trigger (or the zeroes of a new ring) never looks committed, so
 * the proxy never clears a slot and an all-zero payload is a valid trigger. Both halves carry
 * it: the 16-byte store is one instruction, but the memory model only promises each 8-byte
 * half to be seen whole, so the proxy takes a trigger when both halves are of this lap. */
#define RILL_TRIGGER_OFF_BITS  40
#define RILL_TRIGGER_OFF_MASK  ((1ull << RILL_TRIGGER_OFF_BITS) - 1)
#define RILL_TRIGGER_MAX_BYTES ((1ull << 39) - 1)
#define RILL_TRIGGER_COMMIT    (1ull << 63)

__device__ __forceinline__ uint64_t rill_fifo_commit_bit(uint64_t pos, uint32_t size)
{
    return (uint64_t)((~(pos >> __popc(size - 1))) & 1) << 63;
}

/**
 * Push a trigger; any number of threads may push at once. Returns its position, or
 * RILL_FIFO_FAILED when the FIFO stayed full for spin_limit rounds (the proxy stalled). The
 * payload is fst and snd without their bit 63 (126 bits).
 * Ordering: the slot is reused only after the proxy read it: the proxy's release store of
 * its tail pairs with the acquire load below (a cached tail is one some pusher acquired). The
 * trigger and its commit bits travel in one 16-byte release store (PTX v2.u64): what this thread
 * wrote before the push is visible to the proxy once it sees either half, and the proxy takes the
 * trigger only when it sees both halves of this lap.
 */
__device__ __forceinline__ uint64_t rill_fifo_push(const rill_fifo_dev_t *f, uint64_t fst,
                                                   uint64_t snd)
{
    /* take a position only when its slot is free (a CAS on the head): a push that gives up
     * takes none, so the positions the proxy waits for are all filled and the FIFO stays
     * usable after a "full" error */
    unsigned long long pos = *(volatile unsigned long long *)f->head;
    uint64_t spins = 0, tail;
    /* acquire (GPU scope): pairs with the fence before the atomicMax below, by which the
     * pusher that acquired this tail from the proxy published it */
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];"
                 : "=l"(tail)
                 : "l"(f->tail_cache)
                 : "memory");
    for (;;) {
        if (pos >= tail + f->size) {
            tail = rill_ld_acquire_sys(f->tail);
            __threadfence();
            atomicMax((unsigned long long *)f->tail_cache, (unsigned long long)tail);
            if (pos >= tail + f->size) {
                if (++spins > f->spin_limit) {
                    rill_dev_error_set(f->err, RILL_DEV_ERR_FIFO_FULL, f->id, pos, tail, spins);
                    printf("rill: port channel %u: FIFO full (%u slots), position %llu waited "
                           "for the proxy (at %llu) for %llu spins: is its GPU manager "
                           "stalled?\n",
                           f->id, f->size, (unsigned long long)pos, (unsigned long long)tail,
                           (unsigned long long)spins);
                    return RILL_FIFO_FAILED;
                }
                pos = *(volatile unsigned long long *)f->head;
                continue;
            }
        }
        unsigned long long seen = atomicCAS(f->head, pos, pos + 1);
        if (seen == pos)
            break;
        pos = seen; /* another pusher took it: try the next one */
    }
    rill_trigger_t *slot = f->ring + (pos & (f->size - 1));
    uint64_t bit = rill_fifo_commit_bit(pos, f->size);
    fst = (fst & ~RILL_TRIGGER_COMMIT) | bit;
    snd = (snd & ~RILL_TRIGGER_COMMIT) | bit;
    asm volatile("st.release.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(slot), "l"(fst), "l"(snd)
                 : "memory");
    return pos;
}

__device__ __forceinline__ void rill_trigger_make(unsigned type, uint64_t dst_off, uint64_t src_off,
                                                  uint64_t size, uint64_t *fst, uint64_t *snd)
{
    *fst = (src_off & RILL_TRIGGER_OFF_MASK) | ((size & 0x7fffffull) << 40);
    *snd = (dst_off & RILL_TRIGGER_OFF_MASK) | (((size >> 23) & 0xffffull) << 40) |
           ((uint64_t)(type & 7) << 56);
}

/* ---------------------------------------------------------------- port channel */

/** Push a put (and, with RILL_PC_SIGNAL in type, the signal behind it; with RILL_PC_FLUSH,
 * a flush). One thread calls it. Returns the position (RILL_FIFO_FAILED on error). */
__device__ __forceinline__ uint64_t rill_pc_push(const rill_port_channel_dev_t *c, unsigned type,
                                                 uint64_t dst_off, uint64_t src_off, uint64_t size)
{
    uint64_t fst, snd;
    rill_trigger_make(type, dst_off, src_off, size, &fst, &snd);
    return rill_fifo_push(&c->fifo, fst, snd);
}

__device__ __forceinline__ uint64_t rill_pc_put(const rill_port_channel_dev_t *c, uint64_t dst_off,
                                                uint64_t src_off, uint64_t size)
{
    return rill_pc_push(c, RILL_PC_PUT, dst_off, src_off, size);
}

/** The peer's semaphore gets the channel's next signal value once everything pushed before
 * on this channel by the device has landed (same copy stream, memory barrier first). */
__device__ __forceinline__ uint64_t rill_pc_signal(const rill_port_channel_dev_t *c)
{
    return rill_pc_push(c, RILL_PC_SIGNAL, 0, 0, 0);
}

__device__ __forceinline__ uint64_t rill_pc_put_with_signal(const rill_port_channel_dev_t *c,
                                                            uint64_t dst_off, uint64_t src_off,
                                                            uint64_t size)
{
    return rill_pc_push(c, RILL_PC_PUT | RILL_PC_SIGNAL, dst_off, src_off, size);
}

/** Wait until every request pushed before (by the device) on this channel completed: the
 * proxy writes the position into the flushed word behind them on the copy stream. */
__device__ __forceinline__ bool rill_pc_flush(const rill_port_channel_dev_t *c)
{
    uint64_t pos = rill_pc_push(c, RILL_PC_FLUSH, 0, 0, 0);
    if (pos == RILL_FIFO_FAILED)
        return false;
    uint64_t seen = rill_ld_acquire_sys(c->flushed), spins = 0;
    while (seen <= pos) {
        if (++spins > c->fifo.spin_limit) {
            rill_dev_error_set(c->fifo.err, RILL_DEV_ERR_FLUSH, c->fifo.id, pos + 1, seen, spins);
            printf("rill: port channel %u: flush of position %llu not done after %llu spins "
                   "(flushed up to %llu)\n",
                   c->fifo.id, (unsigned long long)pos, (unsigned long long)spins,
                   (unsigned long long)seen);
            return false;
        }
        seen = rill_ld_acquire_sys(c->flushed);
    }
    return true;
}

/** Wait for the peer's next signal on this side's semaphore (c->expected counts them, per
 * copy of the handle: keep one waiting thread per handle). */
__device__ __forceinline__ bool rill_pc_wait(rill_port_channel_dev_t *c)
{
    c->expected++;
    return rill_sem_wait(c->inbound, c->expected, c->fifo.id, c->fifo.spin_limit, c->fifo.err);
}

/* ---------------------------------------------------------------- memory channel */

/** Copy size bytes from src to dst with the threads tid = 0 .. nthreads-1 of a group (a
 * block: threadIdx.x, blockDim.x; a grid: global index and count). 16-byte accesses where
 * both sides allow them, bytes at the edges. */
__device__ __forceinline__ void rill_copy_threads(char *dst, const char *src, uint64_t size,
                                                  uint64_t tid, uint64_t nthreads)
{
    uint64_t head = (16 - ((uintptr_t)dst & 15)) & 15;
    if (head > size)
        head = size;
    if ((((uintptr_t)dst ^ (uintptr_t)src) & 15) != 0) { /* misaligned with each other */
        for (uint64_t i = tid; i < size; i += nthreads)
            dst[i] = src[i];
        return;
    }
    for (uint64_t i = tid; i < head; i += nthreads)
        dst[i] = src[i];
    uint64_t nvec = (size - head) / 16;
    uint4 *d = (uint4 *)(dst + head);
    const uint4 *s = (const uint4 *)(src + head);
    for (uint64_t i = tid; i < nvec; i += nthreads)
        d[i] = s[i];
    for (uint64_t i = head + nvec * 16 + tid; i < size; i += nthreads)
        dst[i] = src[i];
}

/** Put: the group's threads store size bytes of local + src_off into peer + dst_off. */
__device__ __forceinline__ void rill_mc_put(const rill_memory_channel_dev_t *c, uint64_t dst_off,
                                            uint64_t src_off, uint64_t size, uint64_t tid,
                                            uint64_t nthreads)
{
    rill_copy_threads(c->peer + dst_off, c->local + src_off, size, tid, nthreads);
}

/** Get: the group's threads load size bytes of peer + src_off into local + dst_off. */
__device__ __forceinline__ void rill_mc_get(const rill_memory_channel_dev_t *c, uint64_t dst_off,
                                            uint64_t src_off, uint64_t size, uint64_t tid,
                                            uint64_t nthreads)
{
    rill_copy_threads(c->local + dst_off, c->peer + src_off, size, tid, nthreads);
}

/** Signal the peer (one thread, after a __syncthreads() that follows the group's put):
 * outbound is written by this side only; the peer acquires the value (rill_sem_signal's
 * argument). */
__device__ __forceinline__ void rill_mc_signal(const rill_memory_channel_dev_t *c)
{
    uint64_t v = *(volatile uint64_t *)c->outbound + 1;
    *(volatile uint64_t *)c->outbound = v;
    rill_sem_signal(c->peer_inbound, v);
}

/** The same without ordering data before it (pure synchronisation). */
__device__ __forceinline__ void rill_mc_signal_relaxed(const rill_memory_channel_dev_t *c)
{
    uint64_t v = *(volatile uint64_t *)c->outbound + 1;
    *(volatile uint64_t *)c->outbound = v;
    rill_sem_signal_relaxed(c->peer_inbound, v);
}

/** Wait for the peer's next signal (one thread; a __syncthreads() after it shares what it
 * acquired with the block). */
__device__ __forceinline__ bool rill_mc_wait(rill_memory_channel_dev_t *c)
{
    c->expected++;
    return rill_sem_wait(c->inbound, c->expected, c->id, c->spin_limit, c->err);
}

/** Whether the peer's next signal arrived (no spin); counts it when it did. */
__device__ __forceinline__ bool rill_mc_poll(rill_memory_channel_dev_t *c)
{
    if (!rill_sem_poll(c->inbound, c->expected + 1))
        return false;
    c->expected++;
    return true;
}

#endif
