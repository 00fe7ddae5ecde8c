/* DTD on any number of ranks (docs/dtd.md): a vector of NB blocks in a collection, block k
 * homed on rank k % nranks; every rank inserts the same tasks; each task runs on the home
 * rank of its AFFINITY block, and the blocks it reads from other ranks travel to it. Two
 * taskpools (one per phase: a taskpool is waited for once), priorities, and a sum on rank 0.
 * Every rank checks its own blocks against the same loops run sequentially; the exit code is
 * non-zero on any rank if a value is wrong anywhere.
 *   mpirun -np 3 dtd_distributed        (or alone: one rank holds everything) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rill/rill.h"

#define NB    12  /* blocks */
#define B     256 /* doubles per block */
#define STEPS 4

/* Stop at the first error, saying which call failed and why. */
#define TRY(call)                                                                                  \
    do {                                                                                           \
        rill_status_t s_ = (call);                                                                 \
        if (s_ != RILL_SUCCESS) {                                                                  \
            fprintf(stderr, "dtd_distributed: %s failed: %s\n", #call, rill_status_string(s_));    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Home rank of block k: the same answer on every rank. */
static int block_rank(uint64_t k, void *arg)
{
    return (int)(k % (uint64_t) * (int *)arg);
}

static int on_rank0(uint64_t k, void *arg)
{
    (void)k;
    (void)arg;
    return 0;
}

/* x[i] = k * B + i */
static rill_status_t fill(rill_task_t *task)
{
    int k;
    double *x;
    rill_status_t s = rill_dtd_unpack_args(task, &k, &x);
    if (s != RILL_SUCCESS)
        return s;
    for (int i = 0; i < B; i++)
        x[i] = k * B + i;
    return RILL_SUCCESS;
}

/* x[i] += a * next[B - 1 - i]: next is the following block, often another rank's */
static rill_status_t update(rill_task_t *task)
{
    double a, *next, *x;
    rill_status_t s = rill_dtd_unpack_args(task, &a, &next, &x);
    if (s != RILL_SUCCESS)
        return s;
    for (int i = 0; i < B; i++)
        x[i] += a * next[B - 1 - i];
    return RILL_SUCCESS;
}

/* *sum += the block's values */
static rill_status_t add(rill_task_t *task)
{
    double *x, *sum;
    rill_status_t s = rill_dtd_unpack_args(task, &x, &sum);
    if (s != RILL_SUCCESS)
        return s;
    for (int i = 0; i < B; i++)
        *sum += x[i];
    return RILL_SUCCESS;
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    TRY(rill_init(&argc, &argv, &ctx));
    if (argc > 1) { /* nothing else is an option of this example */
        fprintf(stderr, "usage: %s [--mca name value]...; unknown argument '%s'\n", argv[0],
                argv[1]);
        rill_fini(&ctx);
        return 2;
    }
    int rank = rill_context_rank(ctx), nranks = rill_context_nranks(ctx);

    /* collections: created in the same order on every rank */
    rill_collection_t *vec, *total;
    TRY(rill_collection_create(ctx, B * sizeof(double), block_rank, &nranks, &vec));
    TRY(rill_collection_create(ctx, sizeof(double), on_rank0, NULL, &total));
    rill_data_t *blk[NB]; /* this rank's blocks, and proxies of the others' */
    for (int k = 0; k < NB; k++)
        if (!(blk[k] = rill_collection_data_of(vec, (uint64_t)k)))
            TRY(RILL_ERR_NO_MEMORY);
    rill_data_t *sum = rill_collection_data_of(total, 0);
    if (!sum)
        TRY(RILL_ERR_NO_MEMORY);
    rill_dtd_class_t *fill_cls, *update_cls, *add_cls;
    TRY(rill_dtd_class_create(ctx, "fill", fill, &fill_cls));
    TRY(rill_dtd_class_create(ctx, "update", update, &update_cls));
    TRY(rill_dtd_class_create(ctx, "add", add, &add_cls));

    /* phase 1: each block filled on its home rank */
    rill_taskpool_t *tp;
    TRY(rill_dtd_taskpool_create(ctx, &tp));
    for (int k = 0; k < NB; k++)
        TRY(rill_dtd_insert_task(tp, fill_cls, 0, RILL_DTD_VALUE, sizeof(k), &k,
                                 RILL_DTD_OUTPUT | RILL_DTD_AFFINITY, blk[k], RILL_DTD_ARG_END));
    TRY(rill_taskpool_wait(tp));
    TRY(rill_taskpool_destroy(&tp));

    /* phase 2, a new taskpool on the same data: STEPS sweeps, then the sum on rank 0 */
    TRY(rill_dtd_taskpool_create(ctx, &tp));
    for (int step = 0; step < STEPS; step++)
        for (int k = 0; k < NB; k++) {
            double a = 0.25 / (step + 1);
            int32_t priority = STEPS - step; /* earlier sweeps first */
            TRY(rill_dtd_insert_task(tp, update_cls, priority, RILL_DTD_VALUE, sizeof(a), &a,
                                     RILL_DTD_INPUT, blk[(k + 1) % NB],
                                     RILL_DTD_INOUT | RILL_DTD_AFFINITY, blk[k], RILL_DTD_ARG_END));
        }
    for (int k = 0; k < NB; k++)
        TRY(rill_dtd_insert_task(tp, add_cls, 0, RILL_DTD_INPUT, blk[k],
                                 RILL_DTD_INOUT | RILL_DTD_AFFINITY, sum, RILL_DTD_ARG_END));
    TRY(rill_taskpool_wait(tp)); /* every block's last version is home now */
    TRY(rill_taskpool_destroy(&tp));

    /* the same loops, sequentially, on every rank (the order of insertion is the meaning) */
    static double ref[NB][B];
    double ref_sum = 0;
    for (int k = 0; k < NB; k++)
        for (int i = 0; i < B; i++)
            ref[k][i] = k * B + i;
    for (int step = 0; step < STEPS; step++)
        for (int k = 0; k < NB; k++)
            for (int i = 0; i < B; i++)
                ref[k][i] += 0.25 / (step + 1) * ref[(k + 1) % NB][B - 1 - i];
    for (int k = 0; k < NB; k++)
        for (int i = 0; i < B; i++)
            ref_sum += ref[k][i];
    int wrong = 0;
    for (int k = 0; k < NB; k++) {
        const double *x = rill_data_ptr(blk[k]); /* NULL where another rank is home */
        if (rill_data_rank(blk[k]) != rank)
            continue;
        for (int i = 0; i < B; i++)
            wrong += fabs(x[i] - ref[k][i]) > 1e-12 * fabs(ref[k][i]);
    }
    if (rank == 0) {
        double got = *(double *)rill_data_ptr(sum);
        wrong += fabs(got - ref_sum) > 1e-9 * fabs(ref_sum);
    }
    int all[1024] = { 0 };
    if (nranks > 1024)
        TRY(RILL_ERR_NOT_SUPPORTED);
    TRY(rill_context_allgather(ctx, &wrong, sizeof(wrong), all));
    int wrong_anywhere = 0;
    for (int r = 0; r < nranks; r++)
        wrong_anywhere += all[r];
    if (rank == 0)
        printf("dtd_distributed: %d ranks, %d tasks: %s\n", nranks, NB + STEPS * NB + NB,
               wrong_anywhere ? "WRONG" : "correct");

    TRY(rill_dtd_class_destroy(&fill_cls));
    TRY(rill_dtd_class_destroy(&update_cls));
    TRY(rill_dtd_class_destroy(&add_cls));
    TRY(rill_collection_destroy(&vec));
    TRY(rill_collection_destroy(&total));
    TRY(rill_fini(&ctx));
    return wrong_anywhere != 0;
}
