/* Task Bench (StanfordLegion/task-bench) on Rill's PTG: every task graph of the command line
 * (Task Bench's options: -steps, -width, -type, -kernel, -iter, -and, ...) as a taskpool of
 * taskbench.rill, all of them at once. Each rank builds the tables of a graph's
 * dependencies from Task Bench's core (tb_graph_t, taskbench_ptg.h) before the run; the
 * taskpools then need nothing from the core but the kernel, whose check of every input (an
 * assert) is the run's validation.
 *
 * Point x lives on the rank that Task Bench's MPI implementation gives it (rank r has
 * [r W / n, (r + 1) W / n), W the graph's width, n the ranks), through the keyed collection
 * that places the tasks. Time: from a barrier before the taskpools' creation to the end of
 * their waits and a barrier after, printed by the core (app_report_timing, rank 0).
 *   mpirun -np R taskbench_rill_ptg -steps 100 -width 8 -type stencil_1d [--mca name value]... */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "taskbench_ptg.h" /* before the generated header: its globals have these types */
#include "taskbench.h"     /* rillcc's, from taskbench.rill */

typedef struct graph_state {
    task_graph_t g;
    tb_graph_t tab;
    rill_collection_t *dc;
    rill_taskpool_t *tp;
} graph_state_t;

rill_status_t tb_execute(const tb_graph_t *g, int t, int x, char *out, size_t bytes,
                         const char *const *in, const size_t *in_bytes, int nin)
{
    return tb_kernel(*(const task_graph_t *)g->core, t, x, out, bytes, in, in_bytes, nin);
}

static int rank_of(uint64_t key, void *arg)
{
    const tb_graph_t *g = arg;
    return tb_owner((long)(key % (uint64_t)g->maxw), g->maxw, g->nranks);
}

static void tables_free(tb_graph_t *b)
{
    free(b->offset);
    free(b->width);
    free(b->nin);
    free(b->nout);
    free(b->in);
    free(b->in_c);
    free(b->out);
    free(b->slot);
}

/* The tables of g: per task its inputs in the order of its dependencies (those at t - 1
 * that exist), per task its dependents at t + 1, and each edge's places at both ends.
 * 0; 1 out of memory; 2 a task with more inputs than taskbench.rill has flows for. */
static int tables(task_graph_t *core, long gi, int nranks, tb_graph_t *b)
{
    task_graph_t g = *core;
    long T = g.timesteps, W = g.max_width;
    size_t tasks = (size_t)T * (size_t)W;
    *b = (tb_graph_t){ .core = core, .steps = T, .maxw = W, .nranks = nranks };
    b->offset = calloc((size_t)T, sizeof(long));
    b->width = calloc((size_t)T, sizeof(long));
    b->nin = calloc(tasks, sizeof(int32_t));
    b->nout = calloc(tasks, sizeof(int32_t));
    b->in = calloc(tasks * TB_MAX_INPUTS, sizeof(int32_t));
    b->in_c = calloc(tasks * TB_MAX_INPUTS, sizeof(int32_t));
    b->out = calloc(tasks * (size_t)W, sizeof(int32_t));
    b->slot = calloc(tasks * (size_t)W, sizeof(int32_t));
    if (!b->offset || !b->width || !b->nin || !b->nout || !b->in || !b->in_c || !b->out || !b->slot)
        return 1;
    for (long t = 0; t < T; t++) {
        b->offset[t] = task_graph_offset_at_timestep(g, t);
        b->width[t] = task_graph_width_at_timestep(g, t);
    }
    for (long t = 1; t < T; t++) {
        long dset = task_graph_dependence_set_at_timestep(g, t);
        long lo = b->offset[t - 1], hi = lo + b->width[t - 1];
        for (long x = b->offset[t]; x < b->offset[t] + b->width[t]; x++) {
            size_t k = (size_t)(t * W + x);
            interval_list_t deps = task_graph_dependencies(g, dset, x);
            for (long i = 0; i < interval_list_num_intervals(deps); i++) {
                interval_t iv = interval_list_interval(deps, i);
                for (long d = iv.start; d <= iv.end; d++) {
                    if (d < lo || d >= hi)
                        continue;
                    int j = b->nin[k];
                    if (j == TB_MAX_INPUTS) {
                        fprintf(stderr,
                                "taskbench_rill_ptg: task (%ld, %ld) of graph %ld has more "
                                "than %d inputs: taskbench.rill has flows for %d\n",
                                t, x, gi, j, TB_MAX_INPUTS);
                        interval_list_destroy(deps);
                        return 2;
                    }
                    size_t p = (size_t)((t - 1) * W + d); /* the producer (t - 1, d) */
                    int c = b->nout[p]++;
                    b->in[k * TB_MAX_INPUTS + (size_t)j] = (int32_t)d;
                    b->in_c[k * TB_MAX_INPUTS + (size_t)j] = c;
                    b->out[p * (size_t)W + (size_t)c] = (int32_t)x;
                    b->slot[p * (size_t)W + (size_t)c] = j;
                    b->nin[k]++;
                }
            }
            interval_list_destroy(deps);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    if (rill_init(&argc, &argv, &ctx) != RILL_SUCCESS) /* (takes the --mca pairs out) */
        return 1;
    app_t app = app_create(argc, argv);
    task_graph_list_t list = app_task_graphs(app);
    long ngraphs = task_graph_list_num_task_graphs(list);
    int rank = rill_context_rank(ctx), nranks = rill_context_nranks(ctx);
    graph_state_t *graphs = calloc((size_t)ngraphs, sizeof(*graphs));
    int rc = !graphs;
    for (long i = 0; i < ngraphs && !rc; i++) {
        graph_state_t *s = &graphs[i];
        s->g = task_graph_list_task_graph(list, i);
        if (!(rc = tb_check_output("taskbench_rill_ptg", i, s->g)) &&
            !(rc = tables(&s->g, i, nranks, &s->tab)))
            rc = rill_collection_create(ctx, s->g.output_bytes_per_task, rank_of, &s->tab,
                                        &s->dc) != RILL_SUCCESS;
        if (rc == 1)
            fprintf(stderr, "taskbench_rill_ptg: out of memory for graph %ld\n", i);
    }
    if (!rc && rank == 0)
        app_display(app);
    double t0 = 0;
    if (!rc && !(rc = tb_barrier(ctx)))
        t0 = tb_now();
    for (long i = 0; i < ngraphs && !rc; i++) {
        taskbench_globals_t glob = { .graph = &graphs[i].tab,
                                     .D = graphs[i].dc,
                                     .T = (int)graphs[i].g.timesteps };
        rill_status_t s = taskbench_taskpool_create(ctx, &glob, &graphs[i].tp);
        if (s != RILL_SUCCESS) {
            fprintf(stderr, "taskbench_rill_ptg: rank %d: graph %ld: %s\n", rank, i,
                    rill_status_string(s));
            rc = 1;
        }
    }
    for (long i = 0; i < ngraphs && graphs; i++)
        if (graphs[i].tp) { /* every one created is waited for, even after a failure */
            rill_status_t s = rill_taskpool_wait(graphs[i].tp);
            if (s != RILL_SUCCESS) {
                fprintf(stderr, "taskbench_rill_ptg: rank %d: graph %ld failed: %s\n", rank, i,
                        rill_status_string(s));
                rc = 1;
            }
            rill_taskpool_destroy(&graphs[i].tp);
        }
    if (!rc && !(rc = tb_barrier(ctx)) && rank == 0)
        app_report_timing(app, tb_now() - t0);
    for (long i = 0; i < ngraphs && graphs; i++) {
        if (graphs[i].dc)
            rill_collection_destroy(&graphs[i].dc);
        tables_free(&graphs[i].tab);
    }
    free(graphs);
    task_graph_list_destroy(list);
    app_destroy(app);
    rill_status_t s = rill_fini(&ctx);
    return rc ? rc : s != RILL_SUCCESS;
}
