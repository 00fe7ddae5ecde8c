/* The comm engine: one comm thread funnels every MPI call. Upper layers send active
 * messages and move bulk data with a rendezvous (GET answered by a PUT); they never
 * call MPI. Internal. */
#ifndef RILL_COMM_H
#define RILL_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "rill/status.h"

typedef struct rill_comm rill_comm_t;

/** Highest active-message tag + 1 available to upper layers. */
#define RILL_COMM_AM_MAX 16

typedef enum rill_comm_op { RILL_COMM_SUM, RILL_COMM_MIN, RILL_COMM_MAX } rill_comm_op_t;

/** Register comm_* parameters (comm_short_limit, comm_aggregate, comm_max_requests,
 * comm_thread_yield_*...). Main thread, before rill_comm_init. */
rill_status_t rill_comm_register_params(void);

/**
 * Start the comm engine. With MPI: initialise it (MPI_THREAD_SERIALIZED or better,
 * a clear error otherwise) unless the application already did, duplicate
 * MPI_COMM_WORLD, and start the comm thread. Without MPI, or a process not started
 * by mpirun (in a build with MPI, MPI is still initialised as a singleton): a
 * communicator of one rank. Main thread.
 */
rill_status_t rill_comm_init(int *argc, char ***argv, rill_comm_t **comm_p);
/** Barrier with the other ranks, stop the comm thread, finalise MPI if rill_comm_init
 * initialised it. Main thread. */
rill_status_t rill_comm_fini(rill_comm_t **comm_p);

/** Rank, number of ranks, and this process's index/count among the ranks of its node. */
int rill_comm_rank(const rill_comm_t *comm);
int rill_comm_size(const rill_comm_t *comm);
int rill_comm_local_rank(const rill_comm_t *comm);
int rill_comm_local_size(const rill_comm_t *comm);
/** Payloads up to this many bytes may travel inside an activation message. */
size_t rill_comm_short_limit(const rill_comm_t *comm);

/* ------------------------------------------------------------ active messages */

/** Handler of an active message. Runs on the comm thread; must not block; msg is
 * valid only during the call. */
typedef void (*rill_comm_am_fn)(rill_comm_t *comm, int src, void *msg, size_t len, void *arg);

/** Install the handler of tag (0 .. RILL_COMM_AM_MAX-1). Main thread, before traffic. */
rill_status_t rill_comm_am_register(rill_comm_t *comm, int tag, rill_comm_am_fn fn, void *arg);

/**
 * Send an active message of len bytes (at most rill_comm_short_limit + 1024) to rank
 * dst != self. msg is copied; returns at once. Messages to one peer with the same
 * tag are delivered in order; higher priority leaves first; small messages to one
 * peer are aggregated (comm_aggregate). Any thread.
 */
rill_status_t rill_comm_am_send(rill_comm_t *comm, int dst, int tag, const void *msg, size_t len,
                                int32_t priority);

/* ------------------------------------------------------------ rendezvous (GET / PUT / PUT_END) */

/** Completion callback of a rendezvous step. Runs on the comm thread; must not block. */
typedef void (*rill_comm_done_fn)(void *arg, rill_status_t status);

/**
 * Sender side: let nb_gets GETs from peers read size bytes at buf (borrowed until
 * release). After the last PUT completes (PUT_END) release(arg, status) is called.
 * The handle names the buffer in an activation message. Any thread.
 */
rill_status_t rill_comm_expose(rill_comm_t *comm, const void *buf, size_t size, int nb_gets,
                               rill_comm_done_fn release, void *arg, uint64_t *handle_p);

/**
 * Receiver side: GET size bytes of the buffer that rank src exposed as handle into buf
 * (borrowed until done). The sender serves GETs in priority order; done(arg, status)
 * is called once the bytes landed. Any thread.
 */
rill_status_t rill_comm_get(rill_comm_t *comm, int src, uint64_t handle, void *buf, size_t size,
                            int32_t priority, rill_comm_done_fn done, void *arg);

/* ------------------------------------------------------------ runtime collectives */

/** Blocking for the caller, carried out by the comm thread. Main thread. */
rill_status_t rill_comm_allreduce_u64(rill_comm_t *comm, const uint64_t *in, uint64_t *out,
                                      int count, rill_comm_op_t op);
rill_status_t rill_comm_barrier(rill_comm_t *comm);

#endif
