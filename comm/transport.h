/* The wires of the comm engine behind one ops table: what the rendezvous (GET answered by
 * a PUT) needs of a transport to move bulk bytes between two ranks. MPI is the wire on a
 * node and the fallback; UCX is the wire between nodes when Rill was built with it. A new
 * wire is one file that defines a comm_transport_ops_t and one line in transport.c's
 * table. Internal to comm/. */
#ifndef RILL_COMM_TRANSPORT_H
#define RILL_COMM_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "comm_internal.h"

/** Largest descriptor a landing may need the sender to know (it travels in the GET). */
#define COMM_DESC_MAX 512

/**
 * A wire. Every operation but init runs on the comm thread, or on the main thread while
 * no comm thread runs (init, fini). A transport that lacks an operation points it at a
 * stub returning RILL_ERR_NOT_SUPPORTED (or doing nothing), never at NULL.
 *
 * A transfer, on the wire w = comm->wire[peer] that both ranks computed alike at init:
 * 1. the getter's comm thread calls land_post(g): the landing g->buf is made ready for
 *    g->size bytes from g->src, and the descriptor the sender needs is written to desc;
 *    the GET message carries w and the descriptor;
 * 2. the exposer's comm thread calls put(p) with that descriptor; once the bytes are in
 *    the getter's memory and visible there (not merely sent) the transport calls
 *    comm_put_complete(comm, p, status), which ends the PUT (PUT_END after the last);
 * 3. the getter learns that its bytes landed either from the wire itself (MPI: its
 *    receive completed) or from the exposer's PUT_DONE control message, sent by
 *    comm_put_complete when the wire's flag one_sided is set (UCX: an RMA put carries no
 *    notice to its target); either way comm_get_complete(comm, g, status) ends it, after
 *    land_release undid what land_post did.
 */
typedef struct comm_transport_ops {
    const char *name; /**< comm_net's value naming it: "mpi", "ucx" */
    /** The getter needs the exposer's PUT_DONE message to learn its bytes landed. */
    bool one_sided;
    /** Start on this rank and connect to the peers for which want[peer] is true (every
     * rank calls it, in the same order, with the same collectives: main thread at
     * rill_comm_init, no comm thread yet, comm_init_allgather available). Sets
     * reach[peer] to whether the peer can be reached (both sides started). A wire that
     * cannot start here returns RILL_SUCCESS with no peer reached and why in *why_p
     * (static storage); an error status only for what must end the job. */
    rill_status_t (*init)(rill_comm_t *comm, const bool *want, bool *reach, void **state_p,
                          const char **why_p);
    /** Getter: make g->buf ready to receive g->size bytes from g->src; the descriptor
     * (at most COMM_DESC_MAX bytes) into desc, its length into *len. */
    rill_status_t (*land_post)(void *state, rill_comm_t *comm, comm_get_t *g, void *desc,
                               size_t *len);
    /** Getter: undo land_post (after the bytes came, or the exposer refused the GET);
     * whether the transfer then completes is the caller's business. */
    void (*land_release)(void *state, rill_comm_t *comm, comm_get_t *g);
    /** Exposer: move p->size bytes of p->exp->buf into the landing of p->dst that
     * desc (len bytes, from the GET) describes; completion by comm_put_complete. */
    rill_status_t (*put)(void *state, rill_comm_t *comm, comm_put_t *p, const void *desc,
                         size_t len);
    /** Make progress on outstanding operations; the number of events. */
    int (*progress)(void *state, rill_comm_t *comm);
    /** Whether anything the wire started is still in flight (the comm thread keeps polling). */
    bool (*busy)(void *state);
    /** Stop and free (main thread, after the comm thread stopped). */
    void (*fini)(void *state, rill_comm_t *comm);
} comm_transport_ops_t;

/** The wires, in comm->wire[] index order (transport.c). */
extern const comm_transport_ops_t *const comm_transports[];
extern const int comm_nb_transports;

/** The index of the MPI wire, which always exists in a build with MPI. */
#define COMM_WIRE_MPI 0

/** Pick every peer's wire and start the wires (main thread, rill_comm_init, after the
 * nodes are known: comm->node_of). Every rank reaches the same decision for each pair. */
rill_status_t comm_transports_init(rill_comm_t *comm);
/** Stop every wire (main thread, after the comm thread stopped). */
void comm_transports_fini(rill_comm_t *comm);
/** Progress every started wire other than MPI (whose requests the comm thread polls
 * itself); the number of events. Comm thread. */
int comm_transports_progress(rill_comm_t *comm);
/** Whether a wire other than MPI has something in flight. Comm thread. */
bool comm_transports_busy(rill_comm_t *comm);

/* Called by the wires (comm_mpi.c) */
/** A PUT ended (its bytes are in the getter's memory, or it failed): counters, PUT_DONE to
 * the getter when the wire is one-sided, PUT_END after the exposed buffer's last. */
void comm_put_complete(rill_comm_t *comm, comm_put_t *p, rill_status_t status);
/** A GET ended: its entry leaves the table, counters, the caller's done. */
void comm_get_complete(rill_comm_t *comm, comm_get_t *g, rill_status_t status);
/** Blocking allgather of size bytes per rank for a wire's init (main thread, no comm
 * thread yet). */
rill_status_t comm_init_allgather(rill_comm_t *comm, const void *in, size_t size, void *out);
/** Whether mine holds on any rank (a blocking allreduce, same rules). */
bool comm_init_any(rill_comm_t *comm, bool mine);

#endif
