/* The GPU manager's small puts into another rank's GPU by the SMs (gm_put_sm, put.h). */
#include <cuda_runtime.h>
#include <stdint.h>

#include "put.h"

#define GM_PUT_THREADS 512

/* One block copies the n16 16-byte words of src into dst (another GPU's memory, mapped
 * here), then thread 0 stores target into the receiver's semaphore. Ordering: every
 * thread's stores into dst come before the barrier, which orders them before thread 0's
 * fence (fence.sc.sys, cumulative), which makes them visible at system scope before the
 * release store of the target; a receiver whose stream wait reads the target (system
 * scope) therefore sees the whole tile. */
__global__ void __launch_bounds__(GM_PUT_THREADS)
    gm_put_kernel(const uint4 *src, uint4 *dst, size_t n16, uint64_t *sem, uint64_t target)
{
    for (size_t k = threadIdx.x; k < n16; k += blockDim.x)
        dst[k] = src[k];
    __syncthreads();
    if (threadIdx.x != 0)
        return;
    __threadfence_system();
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(sem), "l"(target) : "memory");
}

extern "C" cudaError_t gm_put_sm(void *dst, const void *src, size_t bytes, uint64_t *sem,
                                 uint64_t target, cudaStream_t s)
{
    if (bytes % 16 || ((uintptr_t)dst | (uintptr_t)src) % 16)
        return cudaErrorInvalidValue;
    gm_put_kernel<<<1, GM_PUT_THREADS, 0, s>>>((const uint4 *)src, (uint4 *)dst, bytes / 16, sem,
                                               target);
    return cudaGetLastError();
}
