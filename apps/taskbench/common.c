/* What the Task Bench implementations on Rill share (common.h). */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int tb_owner(long x, long width, int n)
{
    for (int r = 0; r < n; r++)
        if (x < (long)(((long long)(r + 1) * width) / n))
            return r;
    return n - 1;
}

/* scratch memory of the task graphs' kernels, one buffer per worker thread */
static _Thread_local char *scratch;
static _Thread_local size_t scratch_size;

rill_status_t tb_kernel(task_graph_t g, long t, long x, char *out, size_t bytes,
                        const char *const *in, const size_t *in_bytes, int n)
{
    size_t need = g.scratch_bytes_per_task;
    if (need > scratch_size) {
        char *b = realloc(scratch, need);
        if (!b)
            return RILL_ERR_NO_MEMORY;
        scratch = b;
        scratch_size = need;
        task_graph_prepare_scratch(scratch, need);
    }
    task_graph_execute_point_scratch(g, t, x, out, bytes, (const char **)in, in_bytes, (size_t)n,
                                     need ? scratch : NULL, need);
    return RILL_SUCCESS;
}

int tb_barrier(rill_context_t *ctx)
{
    int one = 1, *all = calloc((size_t)rill_context_nranks(ctx), sizeof(int));
    rill_status_t s =
        all ? rill_context_allgather(ctx, &one, sizeof(one), all) : RILL_ERR_NO_MEMORY;
    free(all);
    return s == RILL_SUCCESS ? 0 : 1;
}

double tb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int tb_check_output(const char *prog, long gi, task_graph_t g)
{
    if (g.output_bytes_per_task >= 16)
        return 0;
    fprintf(stderr,
            "%s: graph %ld has %zu output bytes per task: the core's check needs at least 16\n",
            prog, gi, g.output_bytes_per_task);
    return 2;
}
