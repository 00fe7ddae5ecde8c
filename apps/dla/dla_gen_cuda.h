/* The DLA generators' CUDA kernel launcher (dla_gen.cu). Internal. */
#ifndef RILL_DLA_GEN_CUDA_H
#define RILL_DLA_GEN_CUDA_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Enqueue on stream: fill the rows x cols tile a (leading dimension ld), whose first
 * element is (i0, j0) of the matrix, as gen_block does on the CPU (kind 0: general, 1:
 * symmetric with bump on the diagonal). Returns the cudaError_t of the launch. */
int dla_gen_cuda(int kind, int i0, int j0, int rows, int cols, int ld, double bump, uint64_t seed,
                 double *a, cudaStream_t stream);

/** Enqueue on stream: the n x n identity into a (leading dimension ld). Returns the
 * cudaError_t of the launch. */
int dla_identity_cuda(int n, int ld, double *a, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
