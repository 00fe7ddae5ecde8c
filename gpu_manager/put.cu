/* The GPU manager's small puts into another rank's GPU by the SMs (gm_put_sm, put.h). */
#include <cuda_runtime.h>
#include <stdint.h>

#include "put.h"
#include "rill/channel_device.cuh"

#define GM_PUT_THREADS 512

/* One block copies the tile (rill_copy_threads, as a memory channel's put), then thread 0
 * signals the receiver's semaphore: the barrier orders every thread's stores before
 * rill_sem_signal's system-scope fence and release, so a receiver whose stream wait reads
 * the target sees the whole tile (channel_device.cuh gives the argument). */
__global__ void __launch_bounds__(GM_PUT_THREADS)
    gm_put_kernel(char *dst, const char *src, uint64_t bytes, uint64_t *sem, uint64_t target)
{
    rill_copy_threads(dst, src, bytes, threadIdx.x, blockDim.x);
    __syncthreads();
    if (threadIdx.x == 0)
        rill_sem_signal(sem, target);
}

extern "C" cudaError_t gm_put_sm(void *dst, const void *src, size_t bytes, uint64_t *sem,
                                 uint64_t target, cudaStream_t s)
{
    gm_put_kernel<<<1, GM_PUT_THREADS, 0, s>>>((char *)dst, (const char *)src, bytes, sem, target);
    return cudaGetLastError();
}
