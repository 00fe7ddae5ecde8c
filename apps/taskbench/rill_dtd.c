/* Task Bench (StanfordLegion/task-bench) on Rill's DTD: every task graph of the command line
 * (Task Bench's options: -steps, -width, -type, -kernel, -iter, -and, ...), its tasks and
 * their dependencies from Task Bench's core library (core/core_c.h), each task's body the
 * core's task_graph_execute_point_scratch, which checks every input it is given against the
 * task that must have produced it (the core's validation: an assert) and writes the task's
 * output.
 *
 * Data: per task graph, a collection of one datum of output_bytes_per_task bytes per (field,
 * point), field = timestep mod the number of fields (-field N, default: the timesteps, so no
 * datum is written twice), all made before the timer starts, as Task Bench's PaRSEC
 * implementation allocates its matrix of fields x points before it. Point p's data live on
 * the rank that owns p the way Task Bench's MPI implementation shares points out: rank r has
 * the points [r W / n, (r + 1) W / n), W the graph's width, n the ranks. Task (t, p) writes
 * its datum (OUTPUT, the task runs there) and reads the data of timestep t - 1 of its
 * dependencies that exist (INPUT), in the order of the core's dependency intervals. Every
 * rank inserts every task (DTD); each runs its own.
 *
 * Time: from a barrier before the first insertion to the end of the wait and a barrier after
 * it, printed by the core (app_report_timing, rank 0), as Task Bench's MPI implementation
 * times it.
 *   mpirun -np R taskbench_rill_dtd -steps 100 -width 8 -type stencil_1d [-field N]
 *       [--mca name value]... */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "rill/dtd.h"

/* what a task carries by value */
typedef struct point {
    long graph, t, x;
    int ninputs;
} point_t;

typedef struct graph_state {
    task_graph_t g;
    long fields;
    int nranks;
    rill_collection_t *dc;
    /* the collection's data by (field, point), made ahead: the insertion looks nothing up
     * in the collection */
    rill_data_t **data;
} graph_state_t;

static graph_state_t *graphs;

static int rank_of(uint64_t key, void *arg)
{
    const graph_state_t *s = arg;
    return tb_owner((long)(key % (uint64_t)s->g.max_width), s->g.max_width, s->nranks);
}

static rill_status_t body(rill_task_t *task)
{
    const point_t *p = rill_dtd_arg(task, 0);
    const graph_state_t *s = &graphs[p->graph];
    char *out = rill_dtd_arg(task, 1);
    const char *in[RILL_DTD_MAX_ARGS];
    size_t in_bytes[RILL_DTD_MAX_ARGS];
    for (int i = 0; i < p->ninputs; i++) {
        in[i] = rill_dtd_arg(task, 2 + i);
        in_bytes[i] = s->g.output_bytes_per_task;
    }
    return tb_kernel(s->g, p->t, p->x, out, s->g.output_bytes_per_task, in, in_bytes, p->ninputs);
}

/* The datum of point x at timestep t */
static rill_data_t *datum(const graph_state_t *s, long t, long x)
{
    return s->data[(t % s->fields) * s->g.max_width + x];
}

/* Every datum of graph s, made ahead. */
static int make_data(graph_state_t *s)
{
    const long w = s->g.max_width;
    s->data = calloc((size_t)(s->fields * w), sizeof(*s->data));
    for (long key = 0; key < s->fields * w; key++)
        if (!s->data || !(s->data[key] = rill_collection_data_of(s->dc, (uint64_t)key))) {
            fprintf(stderr,
                    "taskbench_rill_dtd: out of memory for the data (%ld fields x "
                    "%ld points of %zu bytes)\n",
                    s->fields, (long)s->g.max_width, (size_t)s->g.output_bytes_per_task);
            return 1;
        }
    return 0;
}

/* The tasks of timestep t of graph gi. */
static int insert_timestep(rill_taskpool_t *tp, rill_dtd_class_t *cls, long gi, long t)
{
    graph_state_t *s = &graphs[gi];
    task_graph_t g = s->g;
    long offset = task_graph_offset_at_timestep(g, t), width = task_graph_width_at_timestep(g, t);
    long last_offset = task_graph_offset_at_timestep(g, t - 1);
    long last_width = task_graph_width_at_timestep(g, t - 1);
    long dset = task_graph_dependence_set_at_timestep(g, t);
    for (long x = offset; x < offset + width; x++) {
        rill_data_t *in[RILL_DTD_MAX_ARGS];
        int n = 0;
        interval_list_t deps = task_graph_dependencies(g, dset, x);
        for (long k = 0; t > 0 && k < interval_list_num_intervals(deps); k++) {
            interval_t iv = interval_list_interval(deps, k);
            for (long d = iv.start; d <= iv.end; d++) {
                if (d < last_offset || d >= last_offset + last_width)
                    continue;
                if (n == RILL_DTD_MAX_ARGS - 2) {
                    fprintf(stderr,
                            "taskbench_rill_dtd: task (%ld, %ld) of graph %ld has more than %d "
                            "inputs: at most %d fit in a DTD task\n",
                            t, x, gi, n, RILL_DTD_MAX_ARGS - 2);
                    interval_list_destroy(deps);
                    return 1;
                }
                in[n++] = datum(s, t - 1, d);
            }
        }
        interval_list_destroy(deps);
        rill_data_t *own = datum(s, t, x);
        point_t p = { gi, t, x, n };
        rill_status_t st = rill_dtd_insert_task(
            tp, cls, 0, RILL_DTD_VALUE, sizeof(p), &p, RILL_DTD_OUTPUT | RILL_DTD_AFFINITY, own,
            RILL_DTD_INPUT | RILL_DTD_ARRAY, n, in, RILL_DTD_ARG_END);
        if (st != RILL_SUCCESS) {
            fprintf(stderr, "taskbench_rill_dtd: inserting task (%ld, %ld) of graph %ld: %s\n", t,
                    x, gi, rill_status_string(st));
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    if (rill_init(&argc, &argv, &ctx) != RILL_SUCCESS) /* (takes the --mca pairs out) */
        return 1;
    /* -field N is ours; the rest is Task Bench's */
    long fields_arg = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-field")) {
            char *end = NULL;
            fields_arg = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
            if (i + 1 >= argc || *end || fields_arg < 1) {
                fprintf(stderr, "taskbench_rill_dtd: -field needs an integer >= 1, got %s\n",
                        i + 1 < argc ? argv[i + 1] : "nothing");
                rill_fini(&ctx);
                return 2;
            }
            memmove(&argv[i], &argv[i + 2], (size_t)(argc - i - 1) * sizeof(char *));
            argc -= 2;
            break;
        }
    app_t app = app_create(argc, argv);
    task_graph_list_t list = app_task_graphs(app);
    long ngraphs = task_graph_list_num_task_graphs(list);
    int rank = rill_context_rank(ctx), nranks = rill_context_nranks(ctx);
    graphs = calloc((size_t)ngraphs, sizeof(*graphs));
    rill_dtd_class_t *cls = NULL;
    int rc = !graphs || rill_dtd_class_create(ctx, "taskbench", body, &cls) != RILL_SUCCESS;
    for (long i = 0; i < ngraphs && !rc; i++) {
        graph_state_t *s = &graphs[i];
        s->g = task_graph_list_task_graph(list, i);
        s->fields = fields_arg > 0 ? fields_arg : s->g.timesteps;
        s->nranks = nranks;
        if ((rc = tb_check_output("taskbench_rill_dtd", i, s->g))) {
        } else if (rill_collection_create(ctx, s->g.output_bytes_per_task, rank_of, s, &s->dc) !=
                   RILL_SUCCESS) {
            rc = 1;
        } else {
            rc = make_data(s);
        }
    }
    if (!rc && rank == 0)
        app_display(app);
    rill_taskpool_t *tp = NULL;
    double t0 = 0;
    if (!rc && !(rc = tb_barrier(ctx))) {
        t0 = tb_now();
        rc = rill_dtd_taskpool_create(ctx, &tp) != RILL_SUCCESS;
    }
    for (long i = 0; i < ngraphs && !rc; i++)
        for (long t = 0; t < graphs[i].g.timesteps && !rc; t++)
            rc = insert_timestep(tp, cls, i, t);
    if (tp) {
        rill_status_t s = rill_taskpool_wait(tp);
        if (s != RILL_SUCCESS) {
            fprintf(stderr, "taskbench_rill_dtd: rank %d: the run failed: %s\n", rank,
                    rill_status_string(s));
            rc = 1;
        }
        rill_taskpool_destroy(&tp);
    }
    if (!rc && !(rc = tb_barrier(ctx)) && rank == 0)
        app_report_timing(app, tb_now() - t0);
    for (long i = 0; i < ngraphs && graphs; i++) {
        if (graphs[i].dc)
            rill_collection_destroy(&graphs[i].dc);
        free(graphs[i].data);
    }
    if (cls)
        rill_dtd_class_destroy(&cls);
    free(graphs);
    task_graph_list_destroy(list);
    app_destroy(app);
    rill_status_t s = rill_fini(&ctx);
    return rc ? rc : s != RILL_SUCCESS;
}
