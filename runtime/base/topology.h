/* hwloc topology and thread binding: which cores this process gives to Rill's
 * workers, binding threads to them, and steal orders by hwloc distance. Internal. */
#ifndef RILL_BASE_TOPOLOGY_H
#define RILL_BASE_TOPOLOGY_H

#include <stdbool.h>
#include <stdio.h>

#include "rill/status.h"

typedef struct rill_topo rill_topo_t;

/** Register runtime_num_cores, runtime_bind and related parameters. Main thread. */
rill_status_t rill_topo_register_params(void);

/**
 * Discover the node (hwloc) and choose this process's cores. local_rank/local_size
 * describe the processes of this node (0/1 when alone). When the process is not
 * already bound to a subset of the node by its launcher, the node's cores are split
 * between the local processes; runtime_num_cores (0 = all that are given) picks how
 * many of them get a worker. Warns, naming the fix, when threads or processes would
 * share a core (more workers than cores given, processes' core sets overlapping).
 * Main thread.
 */
rill_status_t rill_topo_init(int local_rank, int local_size, rill_topo_t **topo_p);
void rill_topo_destroy(rill_topo_t **topo_p);

/** Number of cores given to this process: the number of workers. */
int rill_topo_nworkers(const rill_topo_t *topo);
/** OS index of the core (its first PU) that worker w is bound to, -1 if unbound. */
int rill_topo_worker_core(const rill_topo_t *topo, int w);
/** Bind the calling thread to worker w's core (no-op when runtime_bind is false).
 * Errors are warnings: a failed binding returns RILL_ERR_NOT_SUPPORTED. */
rill_status_t rill_topo_bind_worker(rill_topo_t *topo, int w);
/** Bind the calling thread (the comm thread, later the GPU managers) to the whole
 * process core set, so it may float but stays off other processes' cores. */
rill_status_t rill_topo_bind_service(rill_topo_t *topo);
/** Fill order[0 .. nworkers-2] with the other workers, nearest (by hwloc: same core,
 * cache, NUMA node, package) first. */
void rill_topo_steal_order(const rill_topo_t *topo, int w, int *order);
/** Print the machine summary and this process's bindings, one line per worker. */
void rill_topo_print(const rill_topo_t *topo, FILE *out);

#endif
