/* hwloc topology and thread binding: which cores this process gives to Rill's
 * workers, binding threads to them, and steal orders by hwloc distance. Internal. */
#ifndef RILL_BASE_TOPOLOGY_H
#define RILL_BASE_TOPOLOGY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "rill/status.h"

typedef struct rill_topo rill_topo_t;

/** Register runtime_num_cores, runtime_bind and runtime_core_list (idempotent; init calls
 * it too). Values are read at rill_topo_init. Main thread. */
rill_status_t rill_topo_register_params(void);

/**
 * Discover the node (hwloc) and choose this process's cores. local_rank/local_size
 * describe the processes of this node (0/1 when alone). When the process is not
 * already bound to a subset of the node by its launcher, the node's cores are split
 * between the local processes in contiguous blocks (sizes differ by at most one; with
 * fewer cores than processes, process r takes core r % ncores); runtime_core_list, when
 * set, replaces that choice (entries are OS PU indexes, each naming the core holding that
 * PU). runtime_num_cores (0 = all that are given) picks how many of them get a worker;
 * more workers than cores share them round-robin. Warns, naming the fix, when threads or
 * processes would share a core (more workers than cores given; local_size x workers more
 * than the node's cores, said by local rank 0). Logs the bindings at topo_verbose >= 1.
 * Errors: RILL_ERR_INVALID_ARG for a bad local_rank/local_size or runtime_core_list (the
 * message names the entry); *topo_p is set only on success. Main thread.
 */
rill_status_t rill_topo_init(int local_rank, int local_size, rill_topo_t **topo_p);
/** Free everything and set *topo_p to NULL; NULL or *topo_p NULL is a no-op. Main thread. */
void rill_topo_destroy(rill_topo_t **topo_p);

/** Hold n cores back from the workers for service threads (the GPU managers, named who in
 * the warning): the last n cores of the process's set, when it has more than n and
 * runtime_num_cores is 0; otherwise they share (warned). Before the workers start. Main
 * thread. */
rill_status_t rill_topo_reserve(rill_topo_t *topo, int n, const char *who);

/* The calls below may be made from any thread between init and destroy. */

/** Bind the calling thread to reserved core i (rill_topo_reserve), or like a service thread
 * when there is no such core. */
rill_status_t rill_topo_bind_reserved(rill_topo_t *topo, int i);
/** OS index of reserved core i's first PU, -1 when none or unbound. */
int rill_topo_reserved_core(const rill_topo_t *topo, int i);

/** Number of cores given to this process: the number of workers. */
int rill_topo_nworkers(const rill_topo_t *topo);
/** OS index of the core (its first PU) that worker w is bound to, -1 if unbound
 * (runtime_bind = false) or w out of range. */
int rill_topo_worker_core(const rill_topo_t *topo, int w);
/** Bind the calling thread to worker w's core (no-op when runtime_bind is false).
 * Errors are warnings (the first one per topology is logged): a failed binding returns
 * RILL_ERR_NOT_SUPPORTED; a w out of range, RILL_ERR_INVALID_ARG. */
rill_status_t rill_topo_bind_worker(rill_topo_t *topo, int w);
/** Bind the calling thread to the whole process core set, so it may float but stays off
 * other processes' cores (a GPU manager without a reserved core). */
rill_status_t rill_topo_bind_service(rill_topo_t *topo);
/** Bind thread, another thread of this process (the comm thread, started before the cores
 * were known), to the workers' cores: the process's cores but those reserved for the GPU
 * managers (rill_topo_reserve), which spin without yielding while their GPU works. It
 * floats among them, off other processes' cores. No-op when runtime_bind is false; a failure
 * is a warning, as for the workers. Main thread, after rill_topo_reserve. */
rill_status_t rill_topo_bind_thread_to_workers(rill_topo_t *topo, pthread_t thread);
/** Fill order[0 .. nworkers-2] with the other workers, nearest (by hwloc: same core,
 * cache, NUMA node, package: the deeper their cores' common ancestor) first, ties by
 * distance of worker indexes. Precomputed at init; copies nothing when nworkers < 2. */
void rill_topo_steal_order(const rill_topo_t *topo, int w, int *order);
/** The machine in one line: "1 package, 1 NUMA node, 2 cores, 2 PUs (hwloc 2.9.0)". */
void rill_topo_summary(const rill_topo_t *topo, char *buf, size_t len);
/** Print the machine summary and this process's bindings, one line per worker. */
void rill_topo_print(const rill_topo_t *topo, FILE *out);

#endif
