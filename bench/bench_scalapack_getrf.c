/* ScaLAPACK's pdgetrf (LU with partial pivoting) on a P x Q process grid: the reference of
 * testing_dgetrf on the same ranks. A random N x N matrix (a counter-based hash, values in
 * [-0.5, 0.5)), NB x NB blocks, 2D block-cyclic; time from a barrier to a barrier, a row
 * per run as the DLA testers print theirs, GFLOP/s as 2/3 N^3. Each rank's BLAS runs on one thread
 * (OPENBLAS_NUM_THREADS, unless set).
 *   mpirun -np 2 bench_scalapack_getrf -N 8000 -t 320 -P 2 -Q 1 [--nruns 3] */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);
void pdgetrf_(const int *m, const int *n, double *a, const int *ia, const int *ja, const int *desca,
              int *ipiv, int *info);

static double value_of(int64_t i, int64_t j, uint64_t seed)
{
    uint64_t x =
        seed ^ ((uint64_t)i * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)j * 0xd1b54a32d192ed03ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    return (double)(x >> 11) * 0x1.0p-53 - 0.5;
}

int main(int argc, char **argv)
{
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int n = 1000, nb = 256, P = nranks, Q = 1, nruns = 3;
    for (int i = 1; i < argc; i++) {
        int *v = !strcmp(argv[i], "-N")        ? &n
                 : !strcmp(argv[i], "-t")      ? &nb
                 : !strcmp(argv[i], "-P")      ? &P
                 : !strcmp(argv[i], "-Q")      ? &Q
                 : !strcmp(argv[i], "--nruns") ? &nruns
                                               : NULL;
        if (!v || i + 1 >= argc || rill_args_int(argv[i + 1], 1, 1 << 30, v)) {
            if (rank == 0)
                fprintf(stderr,
                        "bench_scalapack_getrf: bad option '%s'; allowed: -N n, -t nb, -P p, "
                        "-Q q, --nruns r (integers >= 1)\n",
                        argv[i]);
            MPI_Finalize();
            return 2;
        }
        i++;
    }
    if (P * Q != nranks) {
        if (rank == 0)
            fprintf(stderr, "bench_scalapack_getrf: P x Q = %d x %d, but %d ranks\n", P, Q, nranks);
        MPI_Finalize();
        return 2;
    }
    int ctxt, prow, pcol, myrow, mycol, zero = 0, one = 1, info = 0;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "Row", P, Q);
    Cblacs_gridinfo(ctxt, &prow, &pcol, &myrow, &mycol);
    const int mloc = numroc_(&n, &nb, &myrow, &zero, &prow);
    const int nloc = numroc_(&n, &nb, &mycol, &zero, &pcol);
    const int lld = mloc > 1 ? mloc : 1;
    int desc[9];
    descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
    double *a = malloc((size_t)lld * (nloc > 0 ? nloc : 1) * sizeof(double));
    int *ipiv = malloc((size_t)(mloc + nb) * sizeof(int));
    double *times = calloc((size_t)nruns, sizeof(double));
    if (info != 0 || !a || !ipiv || !times) {
        fprintf(stderr, "bench_scalapack_getrf: rank %d: %s\n", rank,
                info ? "descinit failed" : "out of memory");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int r = 0; r < nruns; r++) {
        for (int jl = 0; jl < nloc; jl++) { /* local (il, jl) is global (i, j) */
            int64_t j = (int64_t)(jl / nb) * pcol * nb + (int64_t)mycol * nb + jl % nb;
            for (int il = 0; il < mloc; il++) {
                int64_t i = (int64_t)(il / nb) * prow * nb + (int64_t)myrow * nb + il % nb;
                a[il + (size_t)jl * lld] = value_of(i, j, 1);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        pdgetrf_(&n, &n, a, &one, &one, desc, ipiv, &info);
        MPI_Barrier(MPI_COMM_WORLD);
        times[r] = MPI_Wtime() - t0;
        if (info != 0 && rank == 0)
            fprintf(stderr, "bench_scalapack_getrf: pdgetrf returned info %d\n", info);
    }
    if (rank == 0) { /* rows as the DLA testers print them (tools/rill_bench reads them) */
        const double flops = 2.0 * (double)n * n * n / 3.0;
        printf("# ScaLAPACK pdgetrf, %d ranks (%d x %d), 1 BLAS thread each\n", nranks, P, Q);
        printf("%6s %5s %3s %3s %5s %4s %10s %9s %10s %6s\n", "N", "NB", "P", "Q", "cores", "gpus",
               "time_s", "gflops", "residual", "status");
        for (int r = 0; r < nruns; r++)
            printf("%6d %5d %3d %3d %5d %4d %10.4f %9.2f %10s %6s\n", n, nb, P, Q, 1, 0, times[r],
                   flops / times[r] * 1e-9, "-", "-");
    }
    free(a);
    free(ipiv);
    free(times);
    Cblacs_gridexit(ctxt);
    MPI_Finalize();
    return 0;
}
