/* Dynamic task discovery (DTD): build a task graph by inserting tasks; dependencies
 * come from the order in which tasks access each datum. */
#ifndef RILL_DTD_H
#define RILL_DTD_H

#include <stddef.h>
#include <stdint.h>

#include "rill/data.h"
#include "rill/runtime.h"
#include "rill/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rill_dtd_class rill_dtd_class_t; /**< a kind of task: name + bodies */

/** A task body. Return RILL_SUCCESS, or an error to fail the taskpool (the error and
 * the task's name are reported by rill_taskpool_wait). Runs on a worker. */
typedef rill_status_t (*rill_dtd_body_fn)(rill_task_t *task);

/**
 * Argument kinds of rill_dtd_insert_task, each followed by its own arguments:
 *   RILL_DTD_VALUE,   size_t size, const void *ptr  -- size bytes copied into the task
 *   RILL_DTD_SCRATCH, size_t size                   -- an uninitialised per-task buffer
 *   RILL_DTD_INPUT | RILL_DTD_OUTPUT | RILL_DTD_INOUT, rill_data_t *tile
 *       optionally OR-ed with RILL_DTD_AFFINITY: the task runs on that tile's home rank
 *   (RILL_DTD_INPUT | RILL_DTD_OUTPUT | RILL_DTD_INOUT) | RILL_DTD_ARRAY, int n,
 *       rill_data_t **tiles                    -- n tiles in that mode, n arguments of the
 *       body (n >= 0 passed as an int; not with RILL_DTD_AFFINITY)
 *   RILL_DTD_URGENT, int urgent                     -- not an argument of the body: when
 *       non-zero, the task is on the critical path and its kernels are latency-bound (a
 *       chain of small ones): a GPU runs it on a stream of the greatest priority
 *       (device_cuda_urgent_streams), where its kernels get the SMs ahead of the bulk's
 *   RILL_DTD_ARG_END                                -- closes the list (mandatory)
 * Sizes must be passed as size_t (sizeof(x) is; a bare literal 8 is not).
 */
enum {
    RILL_DTD_ARG_END = 0,
    RILL_DTD_VALUE = 1,
    RILL_DTD_SCRATCH = 2,
    RILL_DTD_INPUT = 3,
    RILL_DTD_OUTPUT = 4,
    RILL_DTD_INOUT = 5,
    RILL_DTD_URGENT = 6,
    RILL_DTD_MODE_MASK = 0xff,
    RILL_DTD_AFFINITY = 0x100,
    RILL_DTD_ARRAY = 0x200,
};

/** Most arguments (values + scratch + tiles) one task may have. */
#define RILL_DTD_MAX_ARGS 32

/**
 * A task class named name (copied) with a CPU body (NULL: none; then give it a body of
 * another type with rill_dtd_class_add_body). Classes may be shared by taskpools and
 * outlive them. Main thread.
 */
RILL_API rill_status_t rill_dtd_class_create(rill_context_t *ctx, const char *name,
                                             rill_dtd_body_fn cpu_body, rill_dtd_class_t **cls_p);
/* the kinds of bodies: rill_body_type_t (rill/runtime.h) */

/**
 * Give cls another body, for another kind of device (or, with a NULL cpu_body at
 * creation, its only body). A CUDA body gets device pointers from rill_dtd_unpack_args,
 * finds its stream and library handles with rill/cuda.h (rill_cuda_stream(task), ...),
 * only enqueues work on that stream and returns: the task completes when the stream has
 * run it. Which body runs is the device choice's (runtime_device). RILL_ERR_INVALID_ARG
 * for a NULL body, an unknown type, or a type the class has already. Main thread, before
 * tasks of the class are inserted.
 */
RILL_API rill_status_t rill_dtd_class_add_body(rill_dtd_class_t *cls, rill_body_type_t type,
                                               rill_dtd_body_fn body);

/** The task's flop count, for the device choice (a GPU runs flops far faster than a core:
 * without it, tasks with a CUDA body go to the GPUs). Main thread, before insertion. */
typedef double (*rill_dtd_flops_fn)(rill_task_t *task);
RILL_API rill_status_t rill_dtd_class_set_flops(rill_dtd_class_t *cls, rill_dtd_flops_fn flops);

/** What a CUDA body's status word (rill_cuda_status_word) means for cls: called with the
 * value when a task's stream left it non-zero; the task fails unless it returns
 * RILL_SUCCESS (without a handler, any non-zero value fails it). Runs on the GPU's manager
 * thread. Main thread, before insertion. */
typedef rill_status_t (*rill_dtd_status_fn)(rill_task_t *task, int value);
RILL_API rill_status_t rill_dtd_class_set_status_handler(rill_dtd_class_t *cls,
                                                         rill_dtd_status_fn fn);

/** Free a class. A class with tasks in a taskpool that was not waited for is refused
 * with RILL_ERR_BUSY (the message names the taskpool). *cls_p becomes NULL. Main
 * thread. */
RILL_API rill_status_t rill_dtd_class_destroy(rill_dtd_class_t **cls_p);

/** A new DTD taskpool, open for insertion. Main thread. */
RILL_API rill_status_t rill_dtd_taskpool_create(rill_context_t *ctx, rill_taskpool_t **tp_p);

/**
 * Insert a task of class cls with the given priority (higher runs first) and
 * arguments (see RILL_DTD_VALUE...). The task depends on the earlier tasks that
 * access the same data: read after write, write after read, write after write.
 * When dtd_window_size tasks are pending, the caller runs tasks until the window
 * drains to half. Errors (the taskpool is left usable, the task is not inserted):
 * RILL_ERR_INVALID_ARG for a NULL tile, an unknown argument kind, more than
 * RILL_DTD_MAX_ARGS arguments; RILL_ERR_BAD_STATE once the taskpool was waited for;
 * RILL_ERR_BUSY for a datum that another open taskpool (not waited for yet) writes, or
 * that this task writes while another open taskpool uses it: tasks of different taskpools
 * are not ordered against each other, so Rill refuses the access rather than race (several
 * open taskpools may read one datum). Main thread.
 */
RILL_API rill_status_t rill_dtd_insert_task(rill_taskpool_t *tp, rill_dtd_class_t *cls,
                                            int32_t priority, ...);

/**
 * In a body: fetch the task's arguments in insertion order. For each argument pass
 * one pointer: VALUE -> a destination of the value's size (copied out);
 * SCRATCH and tiles -> a void ** that receives the buffer / the tile's host pointer.
 * Pass NULL to skip an argument; pass fewer pointers than the task has arguments to fetch
 * only the first ones. A macro: the number of pointers is counted at compile time (at most
 * 64) and checked against the task's arguments in every build. Errors (nothing is
 * written): RILL_ERR_INVALID_ARG outside a DTD task, or with more pointers than the task
 * has arguments (the message names the class and both counts; NULLs past the last
 * argument are allowed). Worker running the task.
 */
#define rill_dtd_unpack_args(...)                                                                  \
    rill_dtd_unpack_args_n(RILL_PP_NARGS(__VA_ARGS__) - 1, __VA_ARGS__)
/** rill_dtd_unpack_args with the number of pointers given: n pointers follow task. */
RILL_API rill_status_t rill_dtd_unpack_args_n(int n, rill_task_t *task, ...);
/* the number of a macro's variadic arguments, 1 to 64 (the task and 63 pointers) */
#define RILL_PP_NARGS(...)                                                                         \
    RILL_PP_NARGS_(__VA_ARGS__, 64, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49,    \
                   48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, \
                   28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9,  \
                   8, 7, 6, 5, 4, 3, 2, 1, 0)
#define RILL_PP_NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, \
                       a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31, a32,  \
                       a33, a34, a35, a36, a37, a38, a39, a40, a41, a42, a43, a44, a45, a46, a47,  \
                       a48, a49, a50, a51, a52, a53, a54, a55, a56, a57, a58, a59, a60, a61, a62,  \
                       a63, a64, n, ...)                                                           \
    n
/** Pointer to argument i (value storage, scratch buffer or tile data); NULL if out of range. */
RILL_API void *rill_dtd_arg(rill_task_t *task, int i);

/**
 * Bring datum's latest version (as of the tasks inserted so far) back to its home
 * rank: the home rank receives it once the tasks that produce it ran, so its
 * storage holds that version when the taskpool ends. The datum's history is kept:
 * tasks inserted later still depend on the earlier ones. A datum used by a
 * single rank, or outside a collection, has nothing to move. rill_taskpool_wait
 * flushes every datum. Main thread.
 */
RILL_API rill_status_t rill_dtd_data_flush(rill_taskpool_t *tp, rill_data_t *data);

/**
 * The datum's value after the tasks inserted so far is not needed (a scratch tile): the
 * taskpool's end neither brings it back from a GPU to host memory nor sends it to its home
 * rank, whose storage keeps an older value. Tasks inserted earlier still run and see the
 * values they depend on; a task inserted later that accesses the datum, or
 * rill_dtd_data_flush, makes its value needed again. In a run of several ranks, every rank
 * discards the same data in the same place of its insertion sequence. Main thread.
 */
RILL_API rill_status_t rill_dtd_data_discard(rill_taskpool_t *tp, rill_data_t *data);

#ifdef __cplusplus
}
#endif
#endif
