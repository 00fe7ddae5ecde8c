/* What the Task Bench implementations on Rill share (rill_dtd.c, rill_ptg.c): where a point
 * lives, the kernel of one task with its scratch memory, the timing barrier. */
#ifndef TASKBENCH_COMMON_H
#define TASKBENCH_COMMON_H

#include <stddef.h>

#include "core_c.h"
#include "rill/rill.h"

/** The rank of point x of a graph of width points on n ranks, as Task Bench's MPI
 * implementation shares them out: rank r has [r W / n, (r + 1) W / n). */
int tb_owner(long x, long width, int n);

/** Task (t, x) of g: the core's task_graph_execute_point_scratch on its n inputs (in the
 * order of its dependencies; it checks each), writing out (bytes); the scratch memory it
 * needs is this thread's (made once). RILL_ERR_NO_MEMORY when it cannot be. */
rill_status_t tb_kernel(task_graph_t g, long t, long x, char *out, size_t bytes,
                        const char *const *in, const size_t *in_bytes, int n);

/** Every rank waits for the others (an allgather); 0 on success. */
int tb_barrier(rill_context_t *ctx);

/** Seconds of the monotonic clock. */
double tb_now(void);

/** A graph's output bytes must hold the core's check (16): 0, or 2 after saying so. */
int tb_check_output(const char *prog, long gi, task_graph_t g);

#endif
