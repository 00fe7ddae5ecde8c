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
    /** Each flow's name and the .rill line that declares it (messages). */
    const char *const *flow_names;
    const int *flow_lines;
    /** Whether the parameters (set in v) lie in their ranges; fills the locals. */
    int (*valid)(const void *g, int64_t *v);
    /** Call visit(arg, v) for every tuple of the parameters' ranges (locals filled), in
     * definition order; a visit that returns non-zero stops it. Each range is checked
     * (rill_ptg_range) before its loop, each division computed (rill_ptg_div): a range or
     * an expression that cannot be computed is reported and stops it. Returns non-zero
     * when it stopped (a visit asked, or an error was reported). */
    int (*enumerate)(const void *g, int (*visit)(void *arg, const int64_t *v), void *arg);
    /** The rank that runs the task (its affinity tile's owner). */
    int (*rank)(const void *g, const int64_t *v);
    /** How many inputs come from other tasks (the task waits for them). */
    int (*ninputs)(const void *g, const int64_t *v);
    /** Call visit(arg, flow, cls, params) for each input from a task, as ninputs counts
     * them: this task's flow, the task (class cls, params in its list order). */
    void (*sources)(const void *g, const int64_t *v,
                    void (*visit)(void *arg, int flow, int cls, const int64_t *params), void *arg);
    /** Whether a delivery to flow flow comes from the task its input names: a flow's input
     * is the first of its input dependencies whose guard holds (as PaRSEC's JDF). The
     * sender is task (cls, p: its parameters in list order), its flow from. Returns how
     * many inputs that dependency gives (1; a control gather: its range's tasks) when the
     * sender is among them, else 0; want (cap bytes; NULL: not asked) gets what the input
     * is, for messages ("X P(3) (file.rill:12)"). */
    int64_t (*takes)(const void *g, const int64_t *v, int flow, int cls, int from, const int64_t *p,
                     char *want, size_t cap);
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

/** A global that is a collection: its name, offset in the globals, and kind (0: a
 * rill_matrix_t *, tiles A(m, n); 1: a keyed rill_collection_t *, data D(key)). */
typedef struct rill_ptg_global {
    const char *name;
    size_t offset;
    int keyed;
} rill_ptg_global_t;

typedef struct rill_ptg_program {
    const char *name;
    const char *file; /* the .rill file's name (without its directories), for messages */
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
RILL_API void rill_ptg_deliver(rill_ptg_out_t *out, int cls, const int64_t *params, int flow,
                               int from_flow);
/** Flow flow's input is tile (i, j) of A (t->data[flow] its address, t->size[flow] its
 * bytes). A tile this rank does not hold fails the run (reading another rank's tile is not
 * built yet). */
RILL_API void rill_ptg_in_tile(rill_ptg_task_t *t, int flow, rill_matrix_t *A, int64_t i,
                               int64_t j);
/** The same for datum key of the keyed collection D (its datum size). */
RILL_API void rill_ptg_in_datum(rill_ptg_task_t *t, int flow, rill_collection_t *D, uint64_t key);
/** Flow flow's input is NEW: a fresh tile, zero-filled, of the size of tile (i, j) of A (the
 * task's affinity tile), held by the task; it goes on to the flow's successors like any
 * tile and is freed by the last task that holds it. Out of memory fails the run. */
RILL_API void rill_ptg_new_tile(rill_ptg_task_t *t, int flow, rill_matrix_t *A, int64_t i,
                                int64_t j);
/** The same of the size of a datum of D (the task's affinity is datum key). */
RILL_API void rill_ptg_new_datum(rill_ptg_task_t *t, int flow, rill_collection_t *D, uint64_t key);
/** None of data flow flow's input guards holds (and no '<- NULL' says it may have
 * nothing): its body would get NULL. Fails the run naming the task, the flow and its .rill
 * line; the task runs no body. */
RILL_API void rill_ptg_no_input(rill_ptg_task_t *t, int flow);
/** An output of the completing task's flow from_flow into tile (i, j) of A: copied there
 * (whole: data of another size fails the run, naming both sizes) unless the flow's data is
 * that tile already. */
RILL_API void rill_ptg_write_tile(rill_ptg_out_t *out, rill_matrix_t *A, int64_t i, int64_t j,
                                  int from_flow);
/** The same into datum key of D. */
RILL_API void rill_ptg_write_datum(rill_ptg_out_t *out, rill_collection_t *D, uint64_t key,
                                   int from_flow);

/** An expression of the generated code that cannot be computed, or a range that cannot be
 * enumerated: what (the class, the .rill file's line and the expression's text) and the
 * message fail the taskpool whose globals g are (RILL_ERR_INVALID_ARG: its creation when
 * it enumerates the ranges, else the run); *bad (may be NULL) is set. Any thread. */
RILL_API void rill_ptg_expr_error(const void *g, int *bad, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/** a / b (op '/') or a % b (op '%') on int64_t, as C computes it, where C does not trap:
 * a divisor 0 or INT64_MIN / -1 (SIGFPE) is reported (rill_ptg_expr_error) and gives 0.
 * The generated code computes its integer divisions through it. */
static inline int64_t rill_ptg_div(const void *g, int *bad, int64_t a, int64_t b, int op,
                                   const char *what)
{
    if (b == 0 || (b == -1 && a == INT64_MIN)) {
        rill_ptg_expr_error(g, bad, what, "%s (%lld %c %lld)",
                            b ? "overflows 64-bit integers"
                              : (op == '/' ? "divides by zero" : "is a modulo by zero"),
                            (long long)a, op, (long long)b);
        return 0;
    }
    return op == '/' ? a / b : a % b;
}

/** A parameter's range lo .. hi .. step, before its loop runs (in definition order): the
 * step must be positive (0 never ends, a negative one never reaches hi) and hi at most
 * INT64_MAX - step (the loop's last step would overflow); else it is reported
 * (rill_ptg_expr_error: what names the class, the parameter and the .rill line) and 0 is
 * returned. 1: the range can be enumerated (it may be empty, lo > hi). */
RILL_API int rill_ptg_range(const void *g, int *bad, int64_t lo, int64_t hi, int64_t step,
                            const char *what);

/** The rank of a task whose affinity is tile (i, j) of A (the generated NAME_rank calls it):
 * a tile outside A is reported (rill_ptg_expr_error: at the creation, which computes every
 * task's rank, it fails NAME_taskpool_create) naming the class cname, the task's parameters
 * (params, nparams: list order), where (the affinity as written and its .rill line), the
 * tile and the valid indices; then -1 is returned and *bad set. */
RILL_API int rill_ptg_tile_rank(const void *g, int *bad, const rill_matrix_t *A, int64_t i,
                                int64_t j, const char *cname, const int64_t *params, int nparams,
                                const char *where);
/** The same for datum key of the keyed collection D: a rank_of outside 0 .. nranks - 1 is
 * reported. */
RILL_API int rill_ptg_datum_rank(const void *g, int *bad, const rill_collection_t *D, uint64_t key,
                                 const char *cname, const int64_t *params, int nparams,
                                 const char *where);

/** Create a taskpool that runs prog with these globals (copied): the tasks of this rank
 * without inputs from other tasks start at once. On several ranks every rank creates it,
 * in the same order as its other taskpools, with the same globals (its own matrices);
 * a task's output to a task of another rank travels as an activation message. A range
 * that cannot be enumerated (a step <= 0, an end above INT64_MAX - step) or a division that
 * cannot be computed in the ranges, locals or affinity, or an affinity outside its
 * collection (a tile outside the matrix, a rank_of outside the ranks) is
 * RILL_ERR_INVALID_ARG (out of
 * memory: RILL_ERR_NO_MEMORY), with a message naming them: the tasks it started run no
 * body, the taskpool ends and is destroyed, *tp is NULL (docs/ptg.md, "What the run
 * checks"). Main thread. */
RILL_API rill_status_t rill_ptg_taskpool_create(rill_context_t *ctx, const rill_ptg_program_t *prog,
                                                const void *globals, rill_taskpool_t **tp);

/** Set up PTG's message handler (rill_init, every rank in the same order) / free what PTG
 * taskpools keep between runs (rill_fini). */
RILL_API rill_status_t rill_ptg_init(rill_context_t *ctx);
RILL_API void rill_ptg_fini(void);

#ifdef __cplusplus
}
#endif
#endif
