/* The GPU manager's own cost: empty CUDA tasks per second through one manager (no data; and
 * with one small tile each, already on the GPU), next to the same tasks on the CPU. Prints
 * one CSV line per measurement. Exits 77 without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rill/cuda.h"
#include "rill/dtd.h"
#include "rill/rill.h"

#include "args.h"

static rill_status_t empty(rill_task_t *task)
{
    (void)task;
    return RILL_SUCCESS;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* n tasks of cls, each with ntiles distinct INOUT tiles cycling over tiles[] (0: none). */
static double run(rill_context_t *ctx, rill_dtd_class_t *cls, int n, rill_data_t **tiles,
                  int ntiles, int chain)
{
    rill_taskpool_t *tp;
    if (rill_dtd_taskpool_create(ctx, &tp) != RILL_SUCCESS)
        exit(1);
    double t0 = now();
    for (int i = 0; i < n; i++) {
        rill_status_t s;
        if (ntiles == 0)
            s = rill_dtd_insert_task(tp, cls, 0, RILL_DTD_ARG_END);
        else
            s = rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INOUT, tiles[chain ? 0 : i % ntiles],
                                     RILL_DTD_ARG_END);
        if (s != RILL_SUCCESS)
            exit(1);
    }
    if (rill_taskpool_wait(tp) != RILL_SUCCESS)
        exit(1);
    double t = now() - t0;
    rill_taskpool_destroy(&tp);
    return t;
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    if (rill_init(&argc, &argv, &ctx) != RILL_SUCCESS) /* (takes the --mca pairs out) */
        return 1;
    int n = 200000;
    if ((argc > 1 && rill_args_int(argv[1], 1, 100000000, &n)) || argc > 2) {
        fprintf(stderr,
                "bench_gpu_tasks: error: one argument at most: the number of tasks, an integer "
                "in [1, 100000000], got '%s'\n",
                argv[argc > 2 ? 2 : 1]);
        rill_fini(&ctx);
        return 2;
    }
    if (rill_context_ngpus(ctx) == 0) {
        printf("no GPU: skipped\n");
        rill_fini(&ctx);
        return 77;
    }
    rill_dtd_class_t *gpu, *cpu;
    rill_dtd_class_create(ctx, "empty_gpu", NULL, &gpu);
    rill_dtd_class_add_body(gpu, RILL_BODY_CUDA, empty);
    rill_dtd_class_create(ctx, "empty_cpu", empty, &cpu);
    enum { NT = 256 };
    static double store[NT][8];
    rill_data_t *tiles[NT];
    for (int i = 0; i < NT; i++)
        rill_data_create(ctx, store[i], sizeof(store[i]), &tiles[i]);
    run(ctx, gpu, 1000, tiles, NT, 0); /* warm-up: tiles on the GPU */
    struct {
        const char *what;
        rill_dtd_class_t *cls;
        int ntiles, chain;
    } cases[] = {
        { "independent, no data", gpu, 0, 0 },      { "independent, 1 tile each", gpu, NT, 0 },
        { "chain on 1 tile", gpu, NT, 1 },          { "independent, no data", cpu, 0, 0 },
        { "independent, 1 tile each", cpu, NT, 0 }, { "chain on 1 tile", cpu, NT, 1 },
    };
    printf("# %d tasks per case; %s\n", n, rill_context_gpu_name(ctx, 0));
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        double best = 1e30;
        for (int r = 0; r < 3; r++) {
            double t = run(ctx, cases[c].cls, n, tiles, cases[c].ntiles, cases[c].chain);
            if (t < best)
                best = t;
        }
        printf("gpu_tasks,%s,%s,tasks_per_s=%.0f,us_per_task=%.3f\n",
               cases[c].cls == gpu ? "cuda" : "cpu", cases[c].what, n / best, best / n * 1e6);
    }
    for (int i = 0; i < NT; i++)
        rill_data_destroy(&tiles[i]);
    rill_dtd_class_destroy(&gpu);
    rill_dtd_class_destroy(&cpu);
    rill_fini(&ctx);
    return 0;
}
