/* Data (tiles) and collections: standalone data, key->rank collections and the
 * 2D block-cyclic tiled matrix. */
#ifndef RILL_DATA_H
#define RILL_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "rill/runtime.h"
#include "rill/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rill_data rill_data_t;             /**< one logical datum (a tile) */
typedef struct rill_collection rill_collection_t; /**< maps keys to ranks and data */

/**
 * Wrap size bytes at ptr as a datum homed on this rank. Borrows ptr: the caller keeps
 * it alive until rill_data_destroy and frees it afterwards. ptr == NULL is
 * RILL_ERR_INVALID_ARG. In a run of several ranks such a datum is private to each rank:
 * a task that runs on rank r uses r's own copy and nothing is moved between ranks (use a
 * collection for data the ranks share). Main thread.
 */
RILL_API rill_status_t rill_data_create(rill_context_t *ctx, void *ptr, size_t size,
                                        rill_data_t **data_p);
/** Destroy a standalone datum (not one owned by a collection). A datum used by a
 * taskpool that was not waited for is refused with RILL_ERR_BUSY (the message names the
 * taskpool): tasks may still read it. *data_p becomes NULL. Main thread. */
RILL_API rill_status_t rill_data_destroy(rill_data_t **data_p);

/** Host pointer of this rank's copy (NULL for a remote datum), size, home rank. */
RILL_API void *rill_data_ptr(const rill_data_t *data);
RILL_API size_t rill_data_size(const rill_data_t *data);
RILL_API int rill_data_rank(const rill_data_t *data);

/* ------------------------------------------------------------ keyed collections */

/** Home rank of key (0 .. nranks-1); must give the same answer on every rank. */
typedef int (*rill_collection_rank_fn)(uint64_t key, void *arg);

/**
 * A collection of data of datum_size bytes, one per key, homed by rank_of. Local data
 * are allocated (zero-filled) by the collection on first use and freed with it.
 * Collections must be created in the same order on every rank (their creation index
 * names them across ranks). arg is borrowed. Main thread.
 */
RILL_API rill_status_t rill_collection_create(rill_context_t *ctx, size_t datum_size,
                                              rill_collection_rank_fn rank_of, void *arg,
                                              rill_collection_t **dc_p);
/** Free the collection and every datum it owns. Refused with RILL_ERR_BUSY while a
 * taskpool that uses one of its data was not waited for. *dc_p becomes NULL. Main
 * thread. */
RILL_API rill_status_t rill_collection_destroy(rill_collection_t **dc_p);
/** The collection's data hold scratch values (written before they are read, e.g. with
 * rill_dtd_data_discard after their last use): their home storage is neither zero-filled
 * nor page-locked when created (a first transfer through it page-locks it), so making
 * them costs no time where they are never used on the host. RILL_ERR_BAD_STATE once the
 * collection has a datum. Main thread, the same on every rank. */
RILL_API rill_status_t rill_collection_set_scratch(rill_collection_t *dc);
/** 1 while a taskpool that uses one of its data has not ended (rill_collection_destroy
 * would refuse), else 0. Main thread. */
RILL_API int rill_collection_in_use(const rill_collection_t *dc);
/** Home rank of key. Any thread. */
RILL_API int rill_collection_rank_of(const rill_collection_t *dc, uint64_t key);
/** The datum of key: local storage if this rank is its home, else a proxy that DTD
 * tracks (rill_data_ptr is NULL). Main thread. NULL only when out of memory. */
RILL_API rill_data_t *rill_collection_data_of(rill_collection_t *dc, uint64_t key);

/* ------------------------------------------------------------ tiled matrices */

typedef struct rill_matrix rill_matrix_t; /**< 2D block-cyclic tiled matrix of doubles */

/**
 * An m x n matrix of doubles in mb x nb tiles (the last tile row/column is ragged when
 * m or n is not a multiple), distributed 2D block-cyclically over a P x Q process grid
 * (rank = (i % P) * Q + (j % Q) for tile (i, j)). Each local tile is stored column-major
 * with leading dimension rill_matrix_tile_rows(); storage is owned by the matrix and
 * zero-filled. Errors: RILL_ERR_INVALID_ARG for m, n < 0, mb, nb <= 0, P, Q <= 0, and
 * RILL_ERR_MISMATCH when P x Q differs from the number of ranks (the message says both).
 * Main thread, same order on every rank.
 */
RILL_API rill_status_t rill_matrix_create(rill_context_t *ctx, int m, int n, int mb, int nb, int P,
                                          int Q, rill_matrix_t **A_p);

/** How the tiles are spread over the P x Q process grid. */
typedef enum rill_matrix_dist {
    /** 2D block-cyclic: tile (i, j) on rank (i % P) * Q + (j % Q) (rill_matrix_create) */
    RILL_MATRIX_CYCLIC = 0,
    /** diagonal: the grid row shifted by the tile column, rank ((i + j) % P) * Q + (j % Q).
     * With Q = 1 each tile column and each tile row is spread over all P ranks, and so is
     * the lower triangle's work (a factorization's panel is not held by one rank, and no
     * rank holds the longer half of the rows) */
    RILL_MATRIX_DIAGONAL = 1,
    /** skewed: the diagonal tiles over every rank (the first 2 P of them on a P x 1 grid,
     * the first P Q otherwise) and the triangle's work even on any grid. On a P x 1 grid
     * the grid row is shifted by the tile column and by one more every P tile columns, rank
     * (i + j + j / P) % P: rows, columns and the triangle's work spread as with
     * RILL_MATRIX_DIAGONAL, and so do the diagonal tiles, which that one puts on the even
     * grid rows only when P is even (all of a Cholesky's POTRF on one rank of a 2 x 1
     * grid). With Q > 1 each tile row stays on one grid row, so that a tile goes to no more
     * ranks than with RILL_MATRIX_CYCLIC, shifted by one every L = lcm(P, Q) tile rows:
     * rank ((i + i / L) % P) * Q + (j % Q) */
    RILL_MATRIX_SKEWED = 2,
} rill_matrix_dist_t;
/** rill_matrix_create with the distribution dist (RILL_ERR_INVALID_ARG for another value). */
RILL_API rill_status_t rill_matrix_create_dist(rill_context_t *ctx, int m, int n, int mb, int nb,
                                               int P, int Q, rill_matrix_dist_t dist,
                                               rill_matrix_t **A_p);
/** Its distribution. */
RILL_API rill_matrix_dist_t rill_matrix_dist(const rill_matrix_t *A);
/** Free the matrix, its tiles and their storage. Refused with RILL_ERR_BUSY while a
 * taskpool that uses one of its tiles was not waited for. *A_p becomes NULL. Main
 * thread, same order on every rank. */
RILL_API rill_status_t rill_matrix_destroy(rill_matrix_t **A_p);

/** Geometry: tile rows/cols (mt, nt), the size of tile row i / tile column j. */
RILL_API int rill_matrix_m(const rill_matrix_t *A);
RILL_API int rill_matrix_n(const rill_matrix_t *A);
RILL_API int rill_matrix_mb(const rill_matrix_t *A);
RILL_API int rill_matrix_nb(const rill_matrix_t *A);
RILL_API int rill_matrix_mt(const rill_matrix_t *A);
RILL_API int rill_matrix_nt(const rill_matrix_t *A);
RILL_API int rill_matrix_P(const rill_matrix_t *A);
RILL_API int rill_matrix_Q(const rill_matrix_t *A);
RILL_API int rill_matrix_tile_rows(const rill_matrix_t *A, int i);
RILL_API int rill_matrix_tile_cols(const rill_matrix_t *A, int j);
/** Home rank of tile (i, j). Any thread. */
RILL_API int rill_matrix_tile_rank(const rill_matrix_t *A, int i, int j);
/** The datum of tile (i, j) (a proxy when remote), for DTD insertion. Main thread. */
RILL_API rill_data_t *rill_matrix_tile(rill_matrix_t *A, int i, int j);
/** Local storage of tile (i, j), or NULL when this rank is not its home. Any thread. For
 * reading between taskpools (a waited taskpool brought its results home), or inside a
 * task's body that names the tile. To change it between taskpools, use
 * rill_matrix_tile_write. */
RILL_API double *rill_matrix_tile_ptr(rill_matrix_t *A, int i, int j);
/** Local storage of tile (i, j), for the caller to change between taskpools: the tile's
 * copies in GPU memory are made stale, so the next taskpool reads what is written here
 * (through rill_matrix_tile_ptr, GPU copies kept from an earlier taskpool would be used
 * instead). NULL when this rank is not its home, or when its newest version is not in
 * host memory (a taskpool that writes it was not waited for; the log says which).
 * Main thread, no taskpool using the tile running. */
RILL_API double *rill_matrix_tile_write(rill_matrix_t *A, int i, int j);
/** Spread this rank's tiles over the GPUs of this process: tile (i, j) goes to the GPU that
 * its local coordinates (i / P, j / Q) give over ngpus grid rows by the matrix's
 * distribution, diagonally for a block-cyclic one ((i / P + j / Q) % ngpus; skewed: (i / P +
 * j / Q + j / Q / ngpus) % ngpus), i.e. tasks that write it run there whenever their class
 * has a CUDA body (on 2 H200s diagonally gave dpotrf 91 TFLOP/s where spreading by tile rows
 * gave 87). A no-op with fewer than 2 GPUs (one GPU or the CPUs decide by load). Main
 * thread, before the tiles are used. */
RILL_API rill_status_t rill_matrix_advise_gpus(rill_matrix_t *A);

/** The collection behind the matrix (key = i * nt + j). */
RILL_API rill_collection_t *rill_matrix_collection(rill_matrix_t *A);

#ifdef __cplusplus
}
#endif
#endif
