/* The table of wires, and the choice of each peer's wire at rill_comm_init: MPI between
 * the ranks of a node, the net wire (comm_net) between nodes. */
#include "transport.h"

#include <stdlib.h>

#include "log.h"

#if RILL_HAVE_MPI
extern const comm_transport_ops_t comm_transport_mpi;
#endif
#if RILL_HAVE_UCX
extern const comm_transport_ops_t comm_transport_ucx;
#endif

/* A new wire: its file, and one line here (comm_net takes its name as a value). */
const comm_transport_ops_t *const comm_transports[] = {
#if RILL_HAVE_MPI
    &comm_transport_mpi, /* first: COMM_WIRE_MPI */
#endif
#if RILL_HAVE_UCX
    &comm_transport_ucx,
#endif
    NULL,
};
const int comm_nb_transports = (int)(sizeof(comm_transports) / sizeof(comm_transports[0])) - 1;

rill_status_t comm_transports_init(rill_comm_t *c)
{
#if RILL_HAVE_MPI
    _Static_assert(sizeof(c->tstate) / sizeof(c->tstate[0]) >=
                       sizeof(comm_transports) / sizeof(comm_transports[0]) - 1,
                   "comm->tstate holds every wire");
    int n = c->size;
    bool *want = calloc((size_t)n, sizeof(bool)), *reach = calloc((size_t)n, sizeof(bool));
    c->wire = calloc((size_t)n, 1);
    c->wire_why = calloc((size_t)n, sizeof(*c->wire_why));
    bool short_mem = !want || !reach || !c->wire || !c->wire_why;
    /* (every rank learns it: the others would wait for this one in the wires' collectives) */
    if (comm_init_any(c, short_mem)) {
        free(want);
        free(reach);
        RILL_ERROR(RILL_LOG_COMM, "out of memory for the wires to %d ranks on %s", n,
                   short_mem ? "this rank" : "another rank");
        return RILL_ERR_NO_MEMORY;
    }
    rill_status_t s = RILL_SUCCESS;
    /* MPI reaches everyone: every peer starts on it */
    for (int r = 0; r < n; r++) {
        want[r] = r != c->rank;
        c->wire[r] = COMM_WIRE_MPI;
        c->wire_why[r] = c->ranks_per_node > 0 ? "the same node (of comm_ranks_per_node ranks)"
                                               : "the same node";
    }
    s = comm_transports[COMM_WIRE_MPI]->init(c, want, reach, &c->tstate[COMM_WIRE_MPI],
                                             &(const char *){ NULL });
    if (s != RILL_SUCCESS)
        goto out;
    c->tstarted[COMM_WIRE_MPI] = true;

    /* the net wire, for the peers of other nodes: comm_net's, or with auto the first wire
     * after MPI in the table (the best one this build has) */
    bool other_node = false;
    for (int r = 0; r < n; r++) {
        want[r] = c->node_of[r] != c->node_id;
        other_node |= want[r];
        if (want[r])
            c->wire_why[r] = c->net == COMM_WIRE_MPI ? "another node, comm_net = mpi"
                                                     : "another node; Rill was built without "
                                                       "UCX";
    }
    int net = c->net >= 0 ? c->net : (comm_nb_transports > 1 ? 1 : COMM_WIRE_MPI);
    /* every rank has a peer on another node, or none does (the nodes are the same on
     * every rank), so all or none take part in the wire's collectives */
    if (!other_node || net == COMM_WIRE_MPI)
        goto out;
    const char *why = NULL;
    for (int r = 0; r < n; r++)
        reach[r] = false;
    s = comm_transports[net]->init(c, want, reach, &c->tstate[net], &why);
    if (s != RILL_SUCCESS)
        goto out;
    c->tstarted[net] = c->tstate[net] != NULL; /* none: it did not start here (why) */
    bool missing = false;
    for (int r = 0; r < n; r++) {
        if (!want[r])
            continue;
        if (reach[r]) {
            c->wire[r] = (unsigned char)net;
            c->wire_why[r] =
                c->net >= 0 ? "another node, named by comm_net" : "another node, comm_net = auto";
        } else {
            missing = true;
            c->wire_why[r] = why ? why : "another node; the net wire does not reach it";
        }
    }
    /* comm_net named the wire: it must reach every peer of another node, on every rank */
    if (c->net >= 0 && comm_init_any(c, missing)) {
        RILL_ERROR(RILL_LOG_COMM,
                   "comm_net = %s names a wire that does not reach every rank of another node "
                   "(%s). Allowed: auto (that wire where it starts, MPI elsewhere), mpi",
                   comm_transports[net]->name,
                   missing ? (why ? why : "it reached no peer")
                           : "another rank could not reach every rank of another node over it");
        s = RILL_ERR_NOT_SUPPORTED;
    }
out:
    free(want);
    free(reach);
    for (int r = 0; r < n; r++)
        RILL_VERBOSE(RILL_LOG_COMM, 1, "rank %d -> rank %d (node %d): %s", c->rank, r,
                     c->node_of[r], r == c->rank ? "self" : c->wire_why[r]);
    return s;
#else
    (void)c;
    return RILL_SUCCESS;
#endif
}

void comm_transports_fini(rill_comm_t *c)
{
    for (int i = 0; i < comm_nb_transports; i++)
        if (c->tstarted[i]) {
            comm_transports[i]->fini(c->tstate[i], c);
            c->tstarted[i] = false;
            c->tstate[i] = NULL;
        }
}

int comm_transports_progress(rill_comm_t *c)
{
    int n = 0;
    for (int i = 1; i < comm_nb_transports; i++)
        if (c->tstarted[i])
            n += comm_transports[i]->progress(c->tstate[i], c);
    return n;
}

bool comm_transports_busy(rill_comm_t *c)
{
    for (int i = 1; i < comm_nb_transports; i++)
        if (c->tstarted[i] && comm_transports[i]->busy(c->tstate[i]))
            return true;
    return false;
}
