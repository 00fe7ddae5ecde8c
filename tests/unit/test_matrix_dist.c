/* The tile distributions' maps (rill_matrix_grid_row) on every grid up to 12 x 12, without
 * ranks: each distribution's formula (rill/data.h); skewed with Q > 1 keeps a tile row on one
 * grid row (a tile goes to no more ranks than block-cyclic) and puts the first P Q diagonal
 * tiles on every rank, with Q = 1 the first 2 P on every grid row; and, counted for a tiled
 * Cholesky of 48 tile rows (POTRF 1/3, TRSM 1, SYRK 1, GEMM 2 on the tile written), skewed
 * gives the busiest rank no more than block-cyclic does, and at most 3% over the average on
 * the grids up to 4 x 4 (tools/rill_bench balance prints the same count). */
#include <stdio.h>
#include <string.h>

#include "data_internal.h"
#include "test_util.h"

#define MAXG 12
#define NT   48

static int gcd(int a, int b)
{
    return b ? gcd(b, a % b) : a;
}

static int rank_of(rill_matrix_dist_t dist, int i, int j, int P, int Q)
{
    return rill_matrix_grid_row(dist, i, j, P, Q) * Q + j % Q;
}

/* the busiest rank's work over the average, for a tiled Cholesky of NT tile rows */
static double imbalance(rill_matrix_dist_t dist, int P, int Q)
{
    static double work[MAXG * MAXG];
    memset(work, 0, sizeof(work));
    for (int k = 0; k < NT; k++) {
        work[rank_of(dist, k, k, P, Q)] += 1.0 / 3;
        for (int i = k + 1; i < NT; i++) {
            work[rank_of(dist, i, k, P, Q)] += 1;
            for (int j = k + 1; j <= i; j++)
                work[rank_of(dist, i, j, P, Q)] += j == i ? 1 : 2;
        }
    }
    double sum = 0, max = 0;
    for (int r = 0; r < P * Q; r++) {
        sum += work[r];
        max = work[r] > max ? work[r] : max;
    }
    return max / (sum / (P * Q));
}

int main(void)
{
    for (int P = 1; P <= MAXG; P++)
        for (int Q = 1; Q <= MAXG; Q++) {
            int L = P / gcd(P, Q) * Q, nd = Q == 1 ? 2 * P : P * Q;
            unsigned char on_diag[MAXG * MAXG] = { 0 };
            for (int i = 0; i < 3 * P * Q; i++) {
                for (int j = 0; j < 3 * P * Q; j++) {
                    CHECK(rill_matrix_grid_row(RILL_MATRIX_CYCLIC, i, j, P, Q) == i % P);
                    CHECK(rill_matrix_grid_row(RILL_MATRIX_DIAGONAL, i, j, P, Q) == (i + j) % P);
                    int sk = rill_matrix_grid_row(RILL_MATRIX_SKEWED, i, j, P, Q);
                    CHECK(sk == (Q == 1 ? (i + j + j / P) % P : (i + i / L) % P));
                    if (Q > 1) /* the tile row on one grid row */
                        CHECK(sk == rill_matrix_grid_row(RILL_MATRIX_SKEWED, i, 0, P, Q));
                }
                if (i < nd)
                    on_diag[rank_of(RILL_MATRIX_SKEWED, i, i, P, Q)] = 1;
            }
            for (int r = 0; r < P * Q; r++)
                if (!on_diag[r]) {
                    fprintf(stderr,
                            "skewed %d x %d: rank %d holds none of the first %d diagonal "
                            "tiles\n",
                            P, Q, r, nd);
                    return 1;
                }
            if (P * Q < 2 || P > 4 || Q > 4)
                continue;
            double cyc = imbalance(RILL_MATRIX_CYCLIC, P, Q);
            double skw = imbalance(RILL_MATRIX_SKEWED, P, Q);
            printf("%d x %d: busiest rank over the average, block-cyclic %.3f, skewed %.3f\n", P, Q,
                   cyc, skw);
            CHECK(skw <= cyc + 1e-9);
            CHECK(skw <= 1.03);
        }
    /* the GPU advice: a skewed rank's tiles over its GPUs as over a P x 1 grid */
    CHECK(rill_matrix_grid_row(RILL_MATRIX_SKEWED, 5, 7, 4, 1) == (5 + 7 + 7 / 4) % 4);
    /* large indices: the shift in 64 bits */
    CHECK(rill_matrix_grid_row(RILL_MATRIX_SKEWED, (1 << 30) - 1, (1 << 30) - 1, 3, 1) ==
          (int)((((int64_t)1 << 30) - 1 + ((int64_t)1 << 30) - 1 + (((int64_t)1 << 30) - 1) / 3) %
                3));
    CHECK(rill_matrix_grid_row(RILL_MATRIX_SKEWED, (1 << 30) - 1, 0, 46340, 46340) ==
          (int)((((int64_t)1 << 30) - 1 + (((int64_t)1 << 30) - 1) / 46340) % 46340));
    printf("test_matrix_dist: ok\n");
    return 0;
}
