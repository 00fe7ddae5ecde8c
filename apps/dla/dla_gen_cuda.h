/* The DLA's own CUDA kernels' launchers: the generators (dla_gen.cu) and dgetrf's pivot
 * records and row interchanges (dla_lu.cu). Internal. */
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

/** The lower tiles of one SWAP_PAIR task, by value into its kernels: their device
 * addresses, first rows (of the matrix) and row counts (= leading dimensions). */
#define DLA_LU_MAX_TILES 32
typedef struct dla_lu_tiles {
    int n;
    int lo[DLA_LU_MAX_TILES], rows[DLA_LU_MAX_TILES];
    double *b[DLA_LU_MAX_TILES];
} dla_lu_tiles_t;

/** Enqueue on stream: the pivot record piv (device memory, dla_internal.h's layout) of the
 * step whose panel starts at row base, mp rows of kb columns, from cuSOLVER's pivots ipl
 * (1-based within the panel) and its info; content: mp ints of device workspace. Returns
 * the cudaError_t of the launches. */
int dla_lu_record_cuda(const int *ipl, int kb, int mp, int base, int mb, int *content,
                       const int *info, int *piv, cudaStream_t stream);
/** Enqueue SWAP_TOP: the copy C of tile (k, j) (rk x cols, ld rk) from T, then T's rows
 * that stay in tile k from the copy (dla_body_laswp_top). */
int dla_lu_laswp_top_cuda(const int *piv, int mb, int base, int rk, int cols, double *T, double *C,
                          cudaStream_t stream);
/** Enqueue SWAP_PAIR: T's rows that come up from the tiles, then the copy's rows that go down
 * into them (dla_body_laswp_pair). */
int dla_lu_laswp_pair_cuda(const int *piv, int mb, int rk, int cols, const dla_lu_tiles_t *tiles,
                           const double *C, double *T, cudaStream_t stream);
/** Enqueue PTG's SWAP_PAIR (dgetrf.rill): the rows of the lower tile B (ri x cols, first row
 * lo) that go up, into the same rows of U; then the rows of tile k's copy C (rk rows) that
 * come down, into B (dla_lu_rows_keep, dla_lu_rows_down). */
int dla_lu_keep_down_cuda(const int *piv, int mb, int lo, int ri, int cols, double *B,
                          const double *C, int rk, double *U, cudaStream_t stream);
/** Enqueue T's rows that come up from the tiles (SWAP_PAIR's first pass alone: PTG's
 * SWAP_MERGE, from the rows a PAIR kept). */
int dla_lu_laswp_up_cuda(const int *piv, int mb, int rk, int cols, const dla_lu_tiles_t *tiles,
                         double *T, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
