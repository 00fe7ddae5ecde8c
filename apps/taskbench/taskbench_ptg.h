/* What apps/taskbench/taskbench.rill calls: one Task Bench graph's dependencies as tables
 * (rill_ptg.c builds them from Task Bench's core before the run), looked up in O(1) by the
 * taskpool's expressions, and the kernel of one task. */
#ifndef TASKBENCH_PTG_H
#define TASKBENCH_PTG_H

#include <stddef.h>
#include <stdint.h>

#include "rill/status.h"

#define TB_MAX_INPUTS 15 /* the inputs I0 .. I14 of taskbench.rill */

typedef struct tb_graph {
    void *core;       /* the core's task_graph_t (core_c.h) */
    long steps, maxw; /* timesteps, max width */
    int nranks;
    long *offset, *width; /* per timestep */
    int32_t *nin, *nout;  /* per (t, x): the inputs, and the dependents at t + 1 */
    int32_t *in, *in_c;   /* per (t, x, j): input j's producer at t - 1, and our place c
                           * among its dependents */
    int32_t *out, *slot;  /* per (t, x, c): dependent c at t + 1, and our place j among
                           * its inputs */
} tb_graph_t;

static inline int64_t tb_offset(const tb_graph_t *g, int64_t t)
{
    return g->offset[t];
}
static inline int64_t tb_width(const tb_graph_t *g, int64_t t)
{
    return g->width[t];
}
static inline int64_t tb_key(const tb_graph_t *g, int64_t t, int64_t x)
{
    return t * g->maxw + x;
}
static inline int64_t tb_nin(const tb_graph_t *g, int64_t t, int64_t x)
{
    return g->nin[t * g->maxw + x];
}
static inline int64_t tb_nout(const tb_graph_t *g, int64_t t, int64_t x)
{
    return g->nout[t * g->maxw + x];
}
static inline int64_t tb_in(const tb_graph_t *g, int64_t t, int64_t x, int64_t j)
{
    return g->in[(t * g->maxw + x) * TB_MAX_INPUTS + j];
}
static inline int64_t tb_in_c(const tb_graph_t *g, int64_t t, int64_t x, int64_t j)
{
    return g->in_c[(t * g->maxw + x) * TB_MAX_INPUTS + j];
}
static inline int64_t tb_out(const tb_graph_t *g, int64_t t, int64_t x, int64_t c)
{
    return g->out[(t * g->maxw + x) * g->maxw + c];
}
static inline int64_t tb_slot(const tb_graph_t *g, int64_t t, int64_t x, int64_t c)
{
    return g->slot[(t * g->maxw + x) * g->maxw + c];
}

/** Task (t, x)'s kernel: the core's task_graph_execute_point_scratch on its nin inputs (in
 * the order of its dependencies), writing its output out (bytes). */
rill_status_t tb_execute(const tb_graph_t *g, int t, int x, char *out, size_t bytes,
                         const char *const *in, const size_t *in_bytes, int nin);

#endif
