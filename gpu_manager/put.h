/* Small puts into another rank's GPU by the SMs, for the GPU manager (manager.c). */
#ifndef RILL_GM_PUT_H
#define RILL_GM_PUT_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueue on stream s one kernel that copies bytes of src (this GPU's memory) into dst
 * (memory this GPU reaches directly: its own, or a peer GPU's mapped here), then stores
 * target into *sem (a peer GPU's semaphore word) with a system-scope release, so that a
 * stream waiting for the target sees the bytes. For tiles of up to some tens of KiB: one
 * block of 512 threads (a copy and a stream write by the copy engine took 7-8 us on the
 * GPU for 4 KiB between two H200s). */
cudaError_t gm_put_sm(void *dst, const void *src, size_t bytes, uint64_t *sem, uint64_t target,
                      cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
