// dgetrf's own kernels on the GPU: the pivot record of a step from cuSOLVER's pivots, and the
// row interchanges of a step in one tile column (SWAP_TOP, SWAP_PAIR), as dla_lu.c's CPU
// bodies do them. The record's layout is dla_internal.h's (DLA_PIV_*); every size the
// interchanges need (the panel's columns, the rows that go down) is read from the record
// in device memory, so the grids cover the most (mb) and threads past the count return.
#include <cuda_runtime.h>

#include "dla_gen_cuda.h"

enum { PIV_INFO, PIV_NDOWN, PIV_KB, PIV_HEAD }; // dla_internal.h's DLA_PIV_*

// content[x] = x for the panel's mp rows.
__global__ static void content_init_kernel(int mp, int *content)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x < mp)
        content[x] = x;
}

// One thread: the step's interchanges in order (each acts on what the earlier ones left),
// the pivots in the whole matrix's numbering, the rows that go up, the head.
__global__ static void record_swaps_kernel(const int *ipl, int kb, int base, int mb, int *content,
                                           const int *info, int *piv)
{
    if (blockIdx.x || threadIdx.x)
        return;
    int *ip = piv + PIV_HEAD, *up = piv + PIV_HEAD + mb;
    for (int r = 0; r < kb; r++) {
        int p = ipl[r] - 1, c = content[r];
        content[r] = content[p];
        content[p] = c;
    }
    for (int r = 0; r < kb; r++) {
        ip[r] = base + ipl[r];
        up[r] = base + content[r];
    }
    piv[PIV_INFO] = *info > 0 ? base + *info : 0;
    piv[PIV_NDOWN] = 0;
    piv[PIV_KB] = kb;
}

// The rows below the panel's first kb that receive a row of tile k (any order: the
// interchanges apply them as independent pairs).
__global__ static void record_down_kernel(int kb, int mp, int base, int mb, const int *content,
                                          int *piv)
{
    int x = kb + blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= mp || content[x] == x)
        return;
    int d = atomicAdd(&piv[PIV_NDOWN], 1);
    piv[PIV_HEAD + 2 * mb + d] = base + x;
    piv[PIV_HEAD + 3 * mb + d] = content[x];
}

extern "C" int dla_lu_record_cuda(const int *ipl, int kb, int mp, int base, int mb, int *content,
                                  const int *info, int *piv, cudaStream_t stream)
{
    unsigned blocks = (unsigned)((mp + 255) / 256);
    content_init_kernel<<<blocks, 256, 0, stream>>>(mp, content);
    record_swaps_kernel<<<1, 1, 0, stream>>>(ipl, kb, base, mb, content, info, piv);
    if (mp > kb)
        record_down_kernel<<<(unsigned)((mp - kb + 255) / 256), 256, 0, stream>>>(kb, mp, base, mb,
                                                                                  content, piv);
    return (int)cudaGetLastError();
}

// SWAP_TOP's rows of tile k that stay in it: T's row p gets the copy's row up[p] - base.
__global__ static void laswp_top_kernel(const int *piv, int mb, int base, int rk, int cols,
                                        const double *C, double *T)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y;
    if (p >= piv[PIV_KB] || c >= cols)
        return;
    int u = piv[PIV_HEAD + mb + p];
    if (u != base + p && u >= base && u < base + rk)
        T[p + (size_t)c * rk] = C[(u - base) + (size_t)c * rk];
}

extern "C" int dla_lu_laswp_top_cuda(const int *piv, int mb, int base, int rk, int cols, double *T,
                                     double *C, cudaStream_t stream)
{
    cudaError_t e =
        cudaMemcpyAsync(C, T, (size_t)rk * cols * sizeof(double), cudaMemcpyDeviceToDevice, stream);
    if (e != cudaSuccess || rk <= 0 || cols <= 0)
        return (int)e;
    dim3 grid((unsigned)((mb + 127) / 128), (unsigned)cols);
    laswp_top_kernel<<<grid, 128, 0, stream>>>(piv, mb, base, rk, cols, C, T);
    return (int)cudaGetLastError();
}

// SWAP_PAIR, first pass: T's rows that come up from the lower tiles (each read before any
// row of its tile is written: the second pass runs after this one on the stream).
__global__ static void laswp_up_kernel(const int *piv, int mb, int rk, int cols,
                                       dla_lu_tiles_t tiles, double *T)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y, t = blockIdx.z;
    if (p >= piv[PIV_KB] || c >= cols)
        return;
    int u = piv[PIV_HEAD + mb + p], lo = tiles.lo[t];
    if (u >= lo && u < lo + tiles.rows[t])
        T[p + (size_t)c * rk] = tiles.b[t][(u - lo) + (size_t)c * tiles.rows[t]];
}

// Second pass: the copy's rows that go down into the lower tiles.
__global__ static void laswp_down_kernel(const int *piv, int mb, int rk, int cols,
                                         dla_lu_tiles_t tiles, const double *C)
{
    int d = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y, t = blockIdx.z;
    if (d >= piv[PIV_NDOWN] || c >= cols)
        return;
    int dst = piv[PIV_HEAD + 2 * mb + d], lo = tiles.lo[t];
    if (dst >= lo && dst < lo + tiles.rows[t])
        tiles.b[t][(dst - lo) + (size_t)c * tiles.rows[t]] =
            C[piv[PIV_HEAD + 3 * mb + d] + (size_t)c * rk];
}

extern "C" int dla_lu_laswp_pair_cuda(const int *piv, int mb, int rk, int cols,
                                      const dla_lu_tiles_t *tiles, const double *C, double *T,
                                      cudaStream_t stream)
{
    if (tiles->n <= 0 || cols <= 0)
        return 0;
    dim3 grid((unsigned)((mb + 127) / 128), (unsigned)cols, (unsigned)tiles->n);
    laswp_up_kernel<<<grid, 128, 0, stream>>>(piv, mb, rk, cols, *tiles, T);
    laswp_down_kernel<<<grid, 128, 0, stream>>>(piv, mb, rk, cols, *tiles, C);
    return (int)cudaGetLastError();
}

// PTG's SWAP_PAIR (dgetrf.rill), first pass: the lower tile B's rows that go up, into the
// same rows of U (read before the second pass writes B's rows that come down).
__global__ static void keep_kernel(const int *piv, int mb, int lo, int ri, int cols,
                                   const double *B, double *U)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y;
    if (p >= piv[PIV_KB] || c >= cols)
        return;
    int u = piv[PIV_HEAD + mb + p];
    if (u >= lo && u < lo + ri)
        U[(u - lo) + (size_t)c * ri] = B[(u - lo) + (size_t)c * ri];
}

extern "C" int dla_lu_keep_down_cuda(const int *piv, int mb, int lo, int ri, int cols, double *B,
                                     const double *C, int rk, double *U, cudaStream_t stream)
{
    if (ri <= 0 || cols <= 0)
        return 0;
    dla_lu_tiles_t tiles = {};
    tiles.n = 1;
    tiles.lo[0] = lo;
    tiles.rows[0] = ri;
    tiles.b[0] = B;
    dim3 grid((unsigned)((mb + 127) / 128), (unsigned)cols, 1);
    keep_kernel<<<grid, 128, 0, stream>>>(piv, mb, lo, ri, cols, B, U);
    laswp_down_kernel<<<grid, 128, 0, stream>>>(piv, mb, rk, cols, tiles, C);
    return (int)cudaGetLastError();
}

extern "C" int dla_lu_laswp_up_cuda(const int *piv, int mb, int rk, int cols,
                                    const dla_lu_tiles_t *tiles, double *T, cudaStream_t stream)
{
    if (tiles->n <= 0 || cols <= 0)
        return 0;
    dim3 grid((unsigned)((mb + 127) / 128), (unsigned)cols, (unsigned)tiles->n);
    laswp_up_kernel<<<grid, 128, 0, stream>>>(piv, mb, rk, cols, *tiles, T);
    return (int)cudaGetLastError();
}
