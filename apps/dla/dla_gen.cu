// The DLA generators on the GPU: the same values as the CPU's (rill_dla_rand: splitmix64 of
// the seed and the element's global indices, exact in IEEE double), so a matrix generated
// in GPU memory is checked against the one the reference regenerates on the CPU.
#include <stdint.h>

#include <cuda_runtime.h>

#include "dla_gen_cuda.h"

__device__ static inline uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

__device__ static inline double dla_rand(uint64_t seed, int64_t i, int64_t j)
{
    uint64_t h = splitmix64(seed ^ splitmix64((uint64_t)i * 0xd1b54a32d192ed03ull));
    h = splitmix64(h ^ (uint64_t)j);
    return (double)(h >> 11) * 0x1.0p-53 - 0.5;
}

__global__ static void gen_kernel(int kind, int i0, int j0, int rows, int cols, int ld, double bump,
                                  uint64_t seed, double *a)
{
    int ii = blockIdx.x * blockDim.x + threadIdx.x;
    int jj = blockIdx.y;
    if (ii >= rows || jj >= cols)
        return;
    int64_t i = i0 + ii, j = j0 + jj;
    double v;
    if (kind == 0) {
        v = dla_rand(seed, i, j);
    } else {
        v = i >= j ? dla_rand(seed, i, j) : dla_rand(seed, j, i);
        if (i == j)
            v += bump;
    }
    a[ii + (size_t)jj * ld] = v;
}

extern "C" int dla_gen_cuda(int kind, int i0, int j0, int rows, int cols, int ld, double bump,
                            uint64_t seed, double *a, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0)
        return 0;
    dim3 block(256), grid((unsigned)((rows + 255) / 256), (unsigned)cols);
    gen_kernel<<<grid, block, 0, stream>>>(kind, i0, j0, rows, cols, ld, bump, seed, a);
    return (int)cudaGetLastError();
}

__global__ static void identity_kernel(int n, int ld, double *a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
    if (i < n)
        a[i + (size_t)j * ld] = i == j ? 1.0 : 0.0;
}

extern "C" int dla_identity_cuda(int n, int ld, double *a, cudaStream_t stream)
{
    if (n <= 0)
        return 0;
    dim3 block(256), grid((unsigned)((n + 255) / 256), (unsigned)n);
    identity_kernel<<<grid, block, 0, stream>>>(n, ld, a);
    return (int)cudaGetLastError();
}
