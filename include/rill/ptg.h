/* PTG taskpools: what the C that rillcc generates from a .rill file (docs/ptg.md) calls.
 * Applications call the generated NAME_taskpool_create(ctx, &globals, &tp) (NAME: the .rill
 * file's base name; NAME.h declares it and NAME_globals_t), then rill_taskpool_wait
 * and rill_taskpool_destroy as for any taskpool; they do not use this header directly. */
#ifndef RILL_PTG_H
#define RILL_PTG_H

#include <stddef.h>
#include <stdint.h>

#include "rill/data.h"
#include "rill/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RILL_PTG_MAX_VARS  16 /* parameters and locals of a class */
#define RILL_PTG_MAX_FLOWS 16

/** A task instance as its body sees it. */
typedef struct rill_ptg_task {
    int64_t v[RILL_PTG_MAX_VARS];    /* the parameters, then the locals, in definition order */
    void *data[RILL_PTG_MAX_FLOWS];  /* each flow's tile (NULL for a control flow) */
    size_t size[RILL_PTG_MAX_FLOWS]; /* its bytes */
    const void *globals;             /* the program's globals (NAME_globals_t) */
    void *rt;                        /* the runtime's instance */
} rill_ptg_task_t;

/** The runtime's task behind t, for what a CUDA body calls (rill/cuda.h:
 * rill_cuda_stream(task), rill_cuda_cublas(task), ...); generated CUDA bodies have it as
 * `task`. */
static inline rill_task_t *rill_ptg_core_task(rill_ptg_task_t *t)
{
    return (rill_task_t *)t->rt; /* the instance starts with the core's task */
}

/** Where a completing task's outputs go (rill_ptg_deliver, rill_ptg_write_tile). */
typedef struct rill_ptg_out rill_ptg_out_t;

/** One task class, as generated. Every function gets the globals. */
typedef struct rill_ptg_class {
    const char *name;
    int nparams, nvars, nflows;
    /** Where parameter k (in the order of CLASS(p0, p1, ...)) is among the variables
     * (definition order): v[param_var[k]]. Dependencies name tasks by their parameters in
     * list order; the variables follow the order of the definitions. */
    const int *param_var;
    /** Each flow's access: RILL_PTG_READ | RILL_PTG_WRITE (0: a control flow). */
    const uint8_t *flow_mode;
    /** Whether the parameters (set in v) lie in their ranges; fills the locals. */
    int (*valid)(const void *g, int64_t *v);
    /** Call visit(arg, v) for every tuple of the parameters' ranges (locals filled). */
    void (*enumerate)(const void *g, void (*visit)(void *arg, const int64_t *v), void *arg);
    /** The rank that runs the task (its affinity tile's owner). */
    int (*rank)(const void *g, const int64_t *v);
    /** How many inputs come from other tasks (the task waits for them). */
    int (*ninputs)(const void *g, const int64_t *v);
    /** Set the data of the flows whose input is a tile of a collection. */
    void (*data_inputs)(const void *g, rill_ptg_task_t *t);
    /** Hand the outputs to their successors and tiles (once the body ran). */
    void (*release)(const void *g, const rill_ptg_task_t *t, rill_ptg_out_t *out);
    int32_t (*priority)(const void *g, const int64_t *v); /* NULL: 0 */
    double (*flops)(const void *g, const int64_t *v);     /* NULL: unknown */
    /** Non-zero: the task is on the critical path (URGENT; as DTD's RILL_DTD_URGENT: a GPU
     * runs it on an urgent stream). NULL: never. */
    int (*urgent)(const void *g, const int64_t *v);
    rill_status_t (*body_cpu)(rill_ptg_task_t *t); /* NULL: none (CUDA only) */
    /** The CUDA body (NULL: none): it enqueues its work on rill_cuda_stream(task), with
     * t->data the flows' device addresses. */
    rill_status_t (*body_cuda)(rill_ptg_task_t *t);
} rill_ptg_class_t;

#define RILL_PTG_READ  1 /* = the core's RILL_FLOW_READ */
#define RILL_PTG_WRITE 2

/** A global that is a collection (a rill_matrix_t *): its name and offset in the globals. */
typedef struct rill_ptg_global {
    const char *name;
    size_t offset;
} rill_ptg_global_t;

typedef struct rill_ptg_program {
    const char *name;
    int nclasses;
    const rill_ptg_class_t *classes;
    size_t globals_size;
    /** The collections among the globals: each must be set (not NULL) and cannot be
     * destroyed while the taskpool runs (RILL_ERR_BUSY until rill_taskpool_wait). */
    int ncollections;
    const rill_ptg_global_t *collections;
} rill_ptg_program_t;

/** A successor's input: flow flow of task (cls, params) gets the data of the completing
 * task's flow from_flow; params in the order of the class's parameter list. */
void rill_ptg_deliver(rill_ptg_out_t *out, int cls, const int64_t *params, int flow, int from_flow);
/** Flow flow's input is tile (i, j) of A (t->data[flow] its address, t->size[flow] its
 * bytes). A tile this rank does not hold fails the run (reading another rank's tile is not
 * built yet). */
void rill_ptg_tile_in(rill_ptg_task_t *t, int flow, rill_matrix_t *A, int64_t i, int64_t j);
/** Flow flow's input is NEW: a fresh tile, zero-filled, of the size of tile (i, j) of A (the
 * task's affinity tile), held by the task; it goes on to the flow's successors like any
 * tile and is freed by the last task that holds it. Out of memory fails the run. */
void rill_ptg_new_tile(rill_ptg_task_t *t, int flow, rill_matrix_t *A, int64_t i, int64_t j);
/** An output of the completing task's flow from_flow into tile (i, j) of A: copied there
 * unless the flow's data is that tile already. */
void rill_ptg_write_tile(rill_ptg_out_t *out, rill_matrix_t *A, int64_t i, int64_t j,
                         int from_flow);

/** Create a taskpool that runs prog with these globals (copied): the tasks of this rank
 * without inputs from other tasks start at once. On several ranks every rank creates it,
 * in the same order as its other taskpools, with the same globals (its own matrices);
 * a task's output to a task of another rank travels as an activation message. Main thread. */
rill_status_t rill_ptg_taskpool_create(rill_context_t *ctx, const rill_ptg_program_t *prog,
                                       const void *globals, rill_taskpool_t **tp);

/** Set up PTG's message handler (rill_init, every rank in the same order) / free what PTG
 * taskpools keep between runs (rill_fini). */
rill_status_t rill_ptg_init(rill_context_t *ctx);
void rill_ptg_fini(void);

#ifdef __cplusplus
}
#endif
#endif
