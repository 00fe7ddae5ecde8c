/* The comm thread and the MPI backend: the only code of Rill that calls MPI once
 * rill_comm_init returned. It drains the command queue, packs active messages per
 * peer, serves rendezvous transfers in priority order, runs the runtime's
 * collectives as non-blocking MPI calls, and sleeps when idle. */
#include "trace.h"
#include "comm_internal.h"
#include "transport.h"

#if RILL_HAVE_MPI

#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

#define COMM_MPI_TAG_AM 0 /* data transfers use 1 .. tag_ub */

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

static void stat_add(atomic_uint_fast64_t *counter, uint64_t n)
{
    /* single writer (the comm thread): relaxed load + store is enough for readers */
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* ------------------------------------------------------------ failures */

/* An MPI error is not recoverable here: say what failed and with whom, then take the
 * whole job down so that no rank waits forever for this one. */
static _Noreturn void comm_mpi_fail(const rill_comm_t *comm, const char *what, int rc, int peer)
{
    char msg[MPI_MAX_ERROR_STRING + 32];
    int len = 0;
    /* MPI_Error_string on a code MPI does not know would itself fail (fatally) */
    if (rc > MPI_SUCCESS && rc <= MPI_ERR_LASTCODE &&
        MPI_Error_string(rc, msg, &len) == MPI_SUCCESS)
        snprintf(msg + len, sizeof(msg) - (size_t)len, " (error %d)", rc);
    else
        snprintf(msg, sizeof(msg), "MPI error code %d", rc);
    if (peer >= 0)
        RILL_ERROR(RILL_LOG_COMM, "%s failed on rank %d, peer rank %d: %s", what,
                   comm ? comm->rank : -1, peer, msg);
    else
        RILL_ERROR(RILL_LOG_COMM, "%s failed on rank %d: %s", what, comm ? comm->rank : -1, msg);
    int cls = 0;
    if (rc > MPI_SUCCESS && rc <= MPI_ERR_LASTCODE)
        MPI_Error_class(rc, &cls);
    if (cls == MPI_ERR_TRUNCATE && comm) /* the usual face of mismatched collectives */
        RILL_ERROR(
            RILL_LOG_COMM,
            "a message arrived longer than its receive: when that is a collective, the "
            "ranks did not make the same collectives in the same order (this rank made "
            "%llu, the last %s). Every rank must call rill_context_allgather, wait for "
            "its taskpools and call rill_fini in the same order",
            (unsigned long long)atomic_load_explicit(&((rill_comm_t *)comm)->ncoll,
                                                     memory_order_relaxed),
            atomic_load_explicit(&((rill_comm_t *)comm)->last_coll, memory_order_relaxed)
                ? atomic_load_explicit(&((rill_comm_t *)comm)->last_coll, memory_order_relaxed)
                : "none");
    MPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}

#define COMM_MPI_CHECK(comm, what, peer, call)                                                     \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS)                                                                    \
            comm_mpi_fail((comm), (what), rc_, (peer));                                            \
    } while (0)

static _Noreturn void comm_protocol_error(rill_comm_t *comm, int src, const char *why, size_t off,
                                          size_t len)
{
    RILL_ERROR(RILL_LOG_COMM,
               "malformed active-message packet on rank %d from peer rank %d: %s (offset %zu "
               "of %zu)",
               comm->rank, src, why, off, len);
    MPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}

/* ------------------------------------------------------------ init / fini (main thread) */

/*
 * Clock alignment for traces (init, main thread, before the comm thread): each rank r > 0
 * in turn ping-pongs with rank 0 and keeps the round trip with the smallest duration: if
 * it sent at t1 and got rank 0's clock t0 back at t2, then rank 0's clock read t0 at
 * about (t1 + t2) / 2 here, so offset = (t1 + t2) / 2 - t0, good to half that round trip
 * (about a microsecond on one node). Rank 0 also sends its clock at the start, which every
 * rank takes as the trace's origin.
 */
static void comm_align_clocks(rill_comm_t *c)
{
    enum { ROUNDS = 32, TAG = 1 };
    int64_t offset = 0;
    uint64_t origin = 0, best_rtt = UINT64_MAX;
    if (c->rank == 0) {
        origin = rill_time_ns();
        for (int r = 1; r < c->size; r++)
            for (int i = 0; i < ROUNDS; i++) {
                uint64_t dummy, now;
                COMM_MPI_CHECK(
                    c, "MPI_Recv", r,
                    MPI_Recv(&dummy, 1, MPI_UINT64_T, r, TAG, c->mpi_comm, MPI_STATUS_IGNORE));
                now = rill_time_ns();
                uint64_t reply[2] = { now, origin };
                COMM_MPI_CHECK(c, "MPI_Send", r,
                               MPI_Send(reply, 2, MPI_UINT64_T, r, TAG, c->mpi_comm));
            }
    } else {
        for (int i = 0; i < ROUNDS; i++) {
            uint64_t t1 = rill_time_ns(), reply[2];
            COMM_MPI_CHECK(c, "MPI_Send", 0, MPI_Send(&t1, 1, MPI_UINT64_T, 0, TAG, c->mpi_comm));
            COMM_MPI_CHECK(
                c, "MPI_Recv", 0,
                MPI_Recv(reply, 2, MPI_UINT64_T, 0, TAG, c->mpi_comm, MPI_STATUS_IGNORE));
            uint64_t t2 = rill_time_ns();
            if (t2 - t1 < best_rtt) {
                best_rtt = t2 - t1;
                offset = (int64_t)((t1 + t2) / 2) - (int64_t)reply[0];
            }
            origin = reply[1];
        }
    }
    rill_trace_set_clock(offset, origin);
    RILL_VERBOSE(RILL_LOG_COMM, 1, "trace clock offset to rank 0: %lld ns (round trip %llu ns)",
                 (long long)offset, c->rank ? (unsigned long long)best_rtt : 0ull);
}

rill_status_t rill_comm_mpi_init(rill_comm_t *comm, int *argc, char ***argv)
{
    int initialized = 0, finalized = 0, provided = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (finalized) {
        RILL_ERROR(RILL_LOG_COMM,
                   "rill_comm_init: MPI was already finalized (by an earlier rill_fini, or by the "
                   "application), and MPI cannot be initialised twice in a process. To start "
                   "Rill again after rill_fini, initialise MPI yourself (MPI_Init_thread with "
                   "MPI_THREAD_SERIALIZED) before the first rill_init and finalize it after the "
                   "last rill_fini");
        return RILL_ERR_BAD_STATE;
    }
    if (!initialized) {
        int rc = MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
        if (rc != MPI_SUCCESS) {
            RILL_ERROR(RILL_LOG_COMM, "MPI_Init_thread failed (error %d)", rc);
            return RILL_ERR_COMM;
        }
        comm->mpi_initialized_by_us = true;
    } else {
        MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_SERIALIZED) {
        RILL_ERROR(RILL_LOG_COMM,
                   "MPI provides thread level %d, Rill needs MPI_THREAD_SERIALIZED (%d) or "
                   "better: its comm thread makes MPI calls. Use an MPI built with thread "
                   "support%s",
                   provided, MPI_THREAD_SERIALIZED,
                   initialized ? ", and initialise it with MPI_Init_thread" : "");
        if (comm->mpi_initialized_by_us)
            MPI_Finalize();
        return RILL_ERR_NOT_SUPPORTED;
    }

    COMM_MPI_CHECK(comm, "MPI_Comm_dup", -1, MPI_Comm_dup(MPI_COMM_WORLD, &comm->mpi_comm));
    COMM_MPI_CHECK(comm, "MPI_Comm_set_errhandler", -1,
                   MPI_Comm_set_errhandler(comm->mpi_comm, MPI_ERRORS_RETURN));
    COMM_MPI_CHECK(comm, "MPI_Comm_dup", -1, MPI_Comm_dup(comm->mpi_comm, &comm->stream_comm));
    /* Open MPI raises the errors of some requests (a non-blocking collective's) on
     * MPI_COMM_WORLD: when MPI is ours, they come back to us too, to be said with what
     * this rank was doing (comm_mpi_fail) */
    if (comm->mpi_initialized_by_us)
        COMM_MPI_CHECK(comm, "MPI_Comm_set_errhandler", -1,
                       MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    COMM_MPI_CHECK(comm, "MPI_Comm_rank", -1, MPI_Comm_rank(comm->mpi_comm, &comm->rank));
    COMM_MPI_CHECK(comm, "MPI_Comm_size", -1, MPI_Comm_size(comm->mpi_comm, &comm->size));
    MPI_Comm local;
    COMM_MPI_CHECK(comm, "MPI_Comm_split_type", -1,
                   MPI_Comm_split_type(comm->mpi_comm, MPI_COMM_TYPE_SHARED, comm->rank,
                                       MPI_INFO_NULL, &local));
    COMM_MPI_CHECK(comm, "MPI_Comm_rank", -1, MPI_Comm_rank(local, &comm->local_rank));
    COMM_MPI_CHECK(comm, "MPI_Comm_size", -1, MPI_Comm_size(local, &comm->local_size));
    /* the node: the machine's ranks, in groups of comm_ranks_per_node consecutive ranks
     * when nodes are simulated; its identity is its lowest rank */
    MPI_Comm node = local;
    if (comm->ranks_per_node > 0)
        COMM_MPI_CHECK(comm, "MPI_Comm_split", -1,
                       MPI_Comm_split(local, comm->rank / comm->ranks_per_node, comm->rank, &node));
    int node_size = comm->local_size;
    if (node != local)
        COMM_MPI_CHECK(comm, "MPI_Comm_size", -1, MPI_Comm_size(node, &node_size));
    comm->node_id = comm->rank; /* this one when it is alone */
    if (node_size > 1)
        COMM_MPI_CHECK(comm, "MPI_Allreduce", -1,
                       MPI_Allreduce(&comm->rank, &comm->node_id, 1, MPI_INT, MPI_MIN, node));
    if (node != local)
        COMM_MPI_CHECK(comm, "MPI_Comm_free", -1, MPI_Comm_free(&node));
    COMM_MPI_CHECK(comm, "MPI_Comm_free", -1, MPI_Comm_free(&local));
    if (comm->size > 1) {
        comm->node_of = malloc((size_t)comm->size * sizeof(*comm->node_of));
        if (!comm->node_of) {
            RILL_ERROR(RILL_LOG_COMM, "out of memory for the nodes of %d ranks", comm->size);
            MPI_Abort(MPI_COMM_WORLD, 1);
            abort();
        }
        COMM_MPI_CHECK(
            comm, "MPI_Allgather", -1,
            MPI_Allgather(&comm->node_id, 1, MPI_INT, comm->node_of, 1, MPI_INT, comm->mpi_comm));
    }

    int *tag_ub = NULL, flag = 0;
    COMM_MPI_CHECK(comm, "MPI_Comm_get_attr", -1,
                   MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    comm->tag_ub = (flag && tag_ub) ? *tag_ub : 32767;

    /* Every rank must be able to receive the largest AM MPI message of any rank, even
     * if their parameters differ: agree on the largest (this is init: blocking is ok). */
    uint64_t mine = comm_am_record_size(comm->short_limit + COMM_AM_EXTRA);
    if (comm->aggregate && comm->aggregate_max > mine)
        mine = comm->aggregate_max;
    uint64_t biggest = mine;
    if (comm->size > 1)
        COMM_MPI_CHECK(comm, "MPI_Allreduce", -1,
                       MPI_Allreduce(&mine, &biggest, 1, MPI_UINT64_T, MPI_MAX, comm->mpi_comm));
    comm->recv_buf_size = (size_t)biggest;
    if (comm->size > 1) {
        comm->pstats = calloc((size_t)comm->size, sizeof(*comm->pstats));
        if (!comm->pstats) {
            RILL_ERROR(RILL_LOG_COMM, "out of memory for the per-peer counters");
            return RILL_ERR_NO_MEMORY;
        }
        if (rill_trace_on())
            comm_align_clocks(comm);
    }
    return RILL_SUCCESS;
}

void rill_comm_mpi_fini(rill_comm_t *comm)
{
    COMM_MPI_CHECK(comm, "MPI_Comm_free", -1, MPI_Comm_free(&comm->stream_comm));
    COMM_MPI_CHECK(comm, "MPI_Comm_free", -1, MPI_Comm_free(&comm->mpi_comm));
    if (comm->mpi_initialized_by_us) {
        int rc = MPI_Finalize();
        if (rc != MPI_SUCCESS)
            RILL_ERROR(RILL_LOG_COMM, "MPI_Finalize failed (error %d)", rc);
    }
}

/* ------------------------------------------------------------ outstanding requests */

static void comm_req_add(rill_comm_t *c, MPI_Request req, comm_req_owner_t *owner)
{
    if (c->nreqs == c->cap_reqs) {
        int cap = c->cap_reqs ? 2 * c->cap_reqs : 256;
        MPI_Request *reqs = realloc(c->reqs, (size_t)cap * sizeof(*reqs));
        if (reqs)
            c->reqs = reqs;
        comm_req_owner_t **owners = realloc(c->owners, (size_t)cap * sizeof(*owners));
        if (owners)
            c->owners = owners;
        int *indices = realloc(c->indices, (size_t)cap * sizeof(*indices));
        if (indices)
            c->indices = indices;
        MPI_Status *statuses = realloc(c->statuses, (size_t)cap * sizeof(*statuses));
        if (statuses)
            c->statuses = statuses;
        if (!reqs || !owners || !indices || !statuses) {
            RILL_ERROR(RILL_LOG_COMM, "out of memory for %d outstanding MPI requests", cap);
            MPI_Abort(MPI_COMM_WORLD, 1);
            abort();
        }
        c->cap_reqs = cap;
    }
    c->reqs[c->nreqs] = req;
    c->owners[c->nreqs] = owner;
    c->nreqs++;
}

static int comm_req_find(rill_comm_t *c, const comm_req_owner_t *owner)
{
    for (int i = 0; i < c->nreqs; i++)
        if (c->owners[i] == owner)
            return i;
    return -1;
}

/* ------------------------------------------------------------ hash tables */

static comm_expose_t **comm_expose_slot(rill_comm_t *c, uint64_t handle)
{
    comm_expose_t **pp = &c->expose_table[handle & (COMM_HASH_BUCKETS - 1)];
    while (*pp && (*pp)->handle != handle)
        pp = &(*pp)->hnext;
    return pp;
}

static comm_get_t **comm_get_slot(rill_comm_t *c, uint64_t xfer_id)
{
    comm_get_t **pp = &c->get_table[xfer_id & (COMM_HASH_BUCKETS - 1)];
    while (*pp && (*pp)->xfer_id != xfer_id)
        pp = &(*pp)->hnext;
    return pp;
}

static int comm_data_tag(const rill_comm_t *c, uint64_t xfer_id)
{
    return 1 + (int)(xfer_id % (uint64_t)c->tag_ub);
}

/* ------------------------------------------------------------ active messages: sending */

static void comm_am_enqueue(rill_comm_t *c, comm_am_t *am)
{
    comm_peer_t *p = &c->peers[am->dst];
    am->seq = c->next_seq++;
    am->next = NULL;
    comm_am_fifo_t *f = &p->fifo[am->tag];
    if (f->tail)
        f->tail->next = am;
    else
        f->head = am;
    f->tail = am;
    p->nqueued++;
    if (!p->dirty) {
        p->dirty = true;
        p->next_dirty = c->dirty_head;
        c->dirty_head = p;
    }
}

/* An active message of ours (GET, GET_ERR), built on the comm thread. */
static void comm_am_internal(rill_comm_t *c, int dst, int tag, const void *msg, size_t len,
                             int32_t priority)
{
    comm_am_t *am = malloc(sizeof(*am) + len);
    if (!am) {
        RILL_ERROR(RILL_LOG_COMM, "out of memory for a %zu-byte control message to rank %d", len,
                   dst);
        MPI_Abort(MPI_COMM_WORLD, 1);
        abort();
    }
    am->dst = dst;
    am->tag = tag;
    am->priority = priority;
    am->len = len;
    memcpy(am->data, msg, len);
    comm_am_enqueue(c, am);
}

/* The next message to leave for peer p: per tag the oldest (so one tag's order is
 * kept), among tags the highest priority, then the oldest. */
static comm_am_t *comm_peer_best(comm_peer_t *p)
{
    comm_am_t *best = NULL;
    for (int t = 0; t < COMM_NB_TAGS; t++) {
        comm_am_t *h = p->fifo[t].head;
        if (h && (!best || h->priority > best->priority ||
                  (h->priority == best->priority && h->seq < best->seq)))
            best = h;
    }
    return best;
}

/* Pack the best queued messages for one peer into one MPI message and Isend it. */
static void comm_am_send_batch(rill_comm_t *c, int peer)
{
    comm_peer_t *p = &c->peers[peer];
    comm_am_t *am = comm_peer_best(p);
    size_t cap = comm_am_record_size(am->len);
    if (c->aggregate && c->aggregate_max > cap)
        cap = c->aggregate_max;
    comm_am_sendbuf_t *sb = malloc(sizeof(*sb));
    unsigned char *buf = malloc(cap);
    if (!sb || !buf) {
        RILL_ERROR(RILL_LOG_COMM, "out of memory for a %zu-byte message to rank %d", cap, peer);
        MPI_Abort(MPI_COMM_WORLD, 1);
        abort();
    }
    size_t off = 0, n = 0, payload = 0;
    while ((am = comm_peer_best(p))) {
        size_t rec = comm_am_record_size(am->len);
        if (off + rec > cap)
            break; /* the next one in priority order does not fit: never skip it */
        comm_am_fifo_t *f = &p->fifo[am->tag];
        f->head = am->next;
        if (!f->head)
            f->tail = NULL;
        p->nqueued--;
        comm_am_hdr_t hdr = { .len = (uint32_t)am->len, .tag = (uint16_t)am->tag };
        memcpy(buf + off, &hdr, sizeof(hdr));
        if (am->len)
            memcpy(buf + off + COMM_AM_HDR_BYTES, am->data, am->len);
        memset(buf + off + COMM_AM_HDR_BYTES + am->len, 0, rec - COMM_AM_HDR_BYTES - am->len);
        off += rec;
        n++;
        stat_add(&c->stats.am_sent, 1);
        stat_add(&c->stats.am_bytes_sent, am->len);
        payload += am->len;
        free(am);
        if (!c->aggregate)
            break;
    }
    sb->owner.kind = COMM_REQ_AM_SEND;
    sb->peer = peer;
    sb->len = off;
    sb->buf = buf;
    MPI_Request req;
    COMM_MPI_CHECK(c, "MPI_Isend", peer,
                   MPI_Isend(buf, (int)off, MPI_BYTE, peer, COMM_MPI_TAG_AM, c->mpi_comm, &req));
    comm_req_add(c, req, &sb->owner);
    if (rill_trace_on()) { /* the messages left (one MPI message, n of them) */
        char name[40];
        snprintf(name, sizeof(name), "%zu message%s to %d", n, n > 1 ? "s" : "", peer);
        rill_trace_instant("comm", name, rill_time_ns());
    }
    p->inflight++;
    c->sends_inflight_am++;
    stat_add(&c->stats.mpi_msgs_sent, 1);
    stat_add(&c->stats.mpi_bytes_sent, off);
    if (n > 1)
        stat_add(&c->stats.am_aggregated, n);
    stat_add(&c->pstats[peer].am_sent, n);
    stat_add(&c->pstats[peer].am_bytes_sent, payload);
    RILL_VERBOSE(RILL_LOG_COMM, 4, "sent %zu AMs (%zu bytes) to rank %d", n, off, peer);
}

static int comm_flush_peers(rill_comm_t *c)
{
    int progress = 0;
    comm_peer_t **pp = &c->dirty_head;
    while (*pp) {
        comm_peer_t *p = *pp;
        while (p->nqueued && p->inflight < COMM_AM_INFLIGHT) {
            comm_am_send_batch(c, (int)(p - c->peers));
            progress++;
        }
        if (!p->nqueued) {
            *pp = p->next_dirty;
            p->dirty = false;
        } else {
            pp = &p->next_dirty; /* waits for one of its messages in flight to complete */
        }
    }
    return progress;
}

/* ------------------------------------------------------------ rendezvous */

static void comm_get_error_reply(rill_comm_t *c, int dst, uint64_t xfer_id, rill_status_t status)
{
    comm_get_err_msg_t m = { .xfer_id = xfer_id, .status = status };
    comm_am_internal(c, dst, COMM_TAG_GET_ERR, &m, sizeof(m), INT32_MAX);
}

/* Exposer: a peer asks for the bytes of one of our handles. */
static void comm_handle_get(rill_comm_t *c, int src, const void *payload, size_t len)
{
    comm_get_msg_t m;
    if (len < sizeof(m))
        comm_protocol_error(c, src, "GET message too short", 0, len);
    memcpy(&m, payload, sizeof(m));
    if (m.desc_len > COMM_DESC_MAX || len != sizeof(m) + m.desc_len)
        comm_protocol_error(c, src, "GET message of the wrong size", 0, len);
    comm_expose_t *e = *comm_expose_slot(c, m.handle);
    rill_status_t status = RILL_SUCCESS;
    if (m.wire != c->wire[src]) {
        /* both ranks pick a pair's wire from the same facts; they cannot differ unless
         * the ranks disagree on the parameters (rill_init checks) */
        RILL_ERROR(RILL_LOG_COMM,
                   "GET from peer rank %d over the %s wire, but this rank reaches it over %s", src,
                   m.wire < (unsigned)comm_nb_transports ? comm_transports[m.wire]->name : "?",
                   comm_transports[c->wire[src]]->name);
        status = RILL_ERR_BAD_STATE;
    } else if (!e) {
        RILL_ERROR(RILL_LOG_COMM, "GET from peer rank %d of unknown handle %llu (%llu bytes)", src,
                   (unsigned long long)m.handle, (unsigned long long)m.size);
        status = RILL_ERR_NOT_FOUND;
    } else if (m.size > e->size) {
        RILL_ERROR(RILL_LOG_COMM,
                   "GET from peer rank %d of %llu bytes of handle %llu, which exposes %zu", src,
                   (unsigned long long)m.size, (unsigned long long)m.handle, e->size);
        status = RILL_ERR_INVALID_ARG;
    } else if (e->requested >= e->nb_gets) {
        RILL_ERROR(RILL_LOG_COMM, "GET from peer rank %d of handle %llu beyond its %d allowed GETs",
                   src, (unsigned long long)m.handle, e->nb_gets);
        status = RILL_ERR_BAD_STATE;
    }
    if (status != RILL_SUCCESS) {
        comm_get_error_reply(c, src, m.xfer_id, status);
        return;
    }
    comm_put_t *put = malloc(sizeof(*put) + m.desc_len);
    if (!put) {
        comm_get_error_reply(c, src, m.xfer_id, RILL_ERR_NO_MEMORY);
        return;
    }
    e->requested++;
    put->owner.kind = COMM_REQ_DATA_SEND;
    put->hitem.priority = m.priority;
    put->hitem.seq = c->next_seq++;
    put->exp = e;
    put->dst = src;
    put->wire = m.wire;
    put->xfer_id = m.xfer_id;
    put->size = (size_t)m.size;
    put->desc_len = m.desc_len;
    memcpy(put->desc, (const unsigned char *)payload + sizeof(m), m.desc_len);
    if (rill_heap_push(&c->send_pending, &put->hitem) != RILL_SUCCESS) {
        e->requested--;
        free(put);
        comm_get_error_reply(c, src, m.xfer_id, RILL_ERR_NO_MEMORY);
    }
}

/* Getter: the exposer refused our GET; cancel the posted receive, done follows. */
static void comm_handle_get_err(rill_comm_t *c, int src, const void *payload, size_t len)
{
    comm_get_err_msg_t m;
    if (len != sizeof(m))
        comm_protocol_error(c, src, "GET error message of the wrong size", 0, len);
    memcpy(&m, payload, sizeof(m));
    comm_get_t *g = *comm_get_slot(c, m.xfer_id);
    rill_status_t status = m.status < 0 ? (rill_status_t)m.status : RILL_ERR_COMM;
    if (g && g->wire != COMM_WIRE_MPI) { /* nothing posted on a wire: it ends here */
        comm_transports[g->wire]->land_release(c->tstate[g->wire], c, g);
        comm_get_complete(c, g, status);
        return;
    }
    int i = g ? comm_req_find(c, &g->owner) : -1;
    if (i < 0) {
        RILL_ERROR(RILL_LOG_COMM, "GET error from peer rank %d for unknown transfer %llu", src,
                   (unsigned long long)m.xfer_id);
        return;
    }
    g->status = status;
    COMM_MPI_CHECK(c, "MPI_Cancel", g->src, MPI_Cancel(&c->reqs[i]));
}

/* Getter: a one-sided wire's bytes are in our landing (the exposer flushed them before
 * it sent this message), or its put failed. */
static void comm_handle_put_done(rill_comm_t *c, int src, const void *payload, size_t len)
{
    comm_put_done_msg_t m;
    if (len != sizeof(m))
        comm_protocol_error(c, src, "PUT_DONE message of the wrong size", 0, len);
    memcpy(&m, payload, sizeof(m));
    comm_get_t *g = *comm_get_slot(c, m.xfer_id);
    if (!g || g->src != src || g->wire == COMM_WIRE_MPI) {
        RILL_ERROR(RILL_LOG_COMM, "PUT_DONE from peer rank %d for unknown transfer %llu", src,
                   (unsigned long long)m.xfer_id);
        return;
    }
    comm_transports[g->wire]->land_release(c->tstate[g->wire], c, g);
    if (m.status == RILL_SUCCESS) {
        stat_add(&c->pstats[src].net_recv, 1);
        stat_add(&c->pstats[src].net_bytes_recv, g->size);
    }
    comm_get_complete(c, g, (rill_status_t)m.status);
}

/* Start the transfers that have a request slot, highest priority first. Receives and
 * sends have separate budgets: a send always matches a receive its getter posted before
 * asking, so sends complete whatever the peer does, and receives wait only on sends.
 * One shared budget could fill up with receives on both sides and deadlock. */
/* Traces: a rendezvous transfer of size bytes was posted / completed ("GET 4096 B from 1",
 * "PUT 4096 B to 0"); the slice spans the two, the counter follows the bytes in flight. */
static uint64_t trace_xfer_posted(rill_comm_t *c, size_t size)
{
    uint64_t now = rill_time_ns();
    c->trace_bytes_inflight += (int64_t)size;
    rill_trace_counter_every("bytes in flight", now, c->trace_bytes_inflight);
    return now;
}

static void trace_xfer_done(rill_comm_t *c, const char *fmt, size_t size, int peer,
                            uint64_t t_posted) __attribute__((format(printf, 2, 0)));
static void trace_xfer_done(rill_comm_t *c, const char *fmt, size_t size, int peer,
                            uint64_t t_posted)
{
    char name[48];
    snprintf(name, sizeof(name), fmt, size, peer);
    uint64_t now = rill_time_ns();
    rill_trace_slice("comm", name, t_posted, now, 0, 0, NULL);
    c->trace_bytes_inflight -= (int64_t)size;
    rill_trace_counter_every("bytes in flight", now, c->trace_bytes_inflight);
}

static int comm_start_transfers(rill_comm_t *c)
{
    int progress = 0;
    rill_heap_item_t *it;
    while (c->recv_inflight < c->max_requests && (it = rill_heap_pop(&c->recv_pending))) {
        comm_get_t *g = container_of(it, comm_get_t, hitem);
        g->xfer_id = c->next_xfer_id++;
        g->wire = c->wire[g->src];
        g->land = NULL;
        struct {
            comm_get_msg_t m;
            unsigned char desc[COMM_DESC_MAX];
        } msg;
        size_t desc_len = 0;
        /* the landing is ready before the GET leaves, so the PUT always finds it */
        rill_status_t s =
            comm_transports[g->wire]->land_post(c->tstate[g->wire], c, g, msg.desc, &desc_len);
        c->recv_inflight++;
        progress++;
        comm_get_t **slot = comm_get_slot(c, g->xfer_id);
        g->hnext = NULL;
        *slot = g;
        if (rill_trace_on())
            g->t_posted = trace_xfer_posted(c, g->size);
        if (s != RILL_SUCCESS) { /* said by the wire */
            comm_get_complete(c, g, s);
            continue;
        }
        msg.m = (comm_get_msg_t){ .handle = g->handle,
                                  .xfer_id = g->xfer_id,
                                  .size = g->size,
                                  .priority = it->priority,
                                  .wire = (uint16_t)g->wire,
                                  .desc_len = (uint16_t)desc_len };
        comm_am_internal(c, g->src, COMM_TAG_GET, &msg, sizeof(msg.m) + desc_len, it->priority);
    }
    while (c->send_inflight < c->max_requests && (it = rill_heap_pop(&c->send_pending))) {
        comm_put_t *put = container_of(it, comm_put_t, hitem);
        if (rill_trace_on())
            put->t_posted = trace_xfer_posted(c, put->size);
        c->send_inflight++;
        progress++;
        rill_status_t s =
            comm_transports[put->wire]->put(c->tstate[put->wire], c, put, put->desc, put->desc_len);
        if (s != RILL_SUCCESS) /* said by the wire */
            comm_put_complete(c, put, s);
    }
    return progress;
}

/* ------------------------------------------------------------ the MPI wire */

/* Two-sided: the getter's landing is a posted receive, the put a send into it; both
 * complete through the request array the comm thread polls. */
static rill_status_t mpi_land_post(void *state, rill_comm_t *c, comm_get_t *g, void *desc,
                                   size_t *len)
{
    (void)state;
    (void)desc;
    MPI_Request req;
    COMM_MPI_CHECK(c, "MPI_Irecv", g->src,
                   MPI_Irecv(g->buf, (int)g->size, MPI_BYTE, g->src, comm_data_tag(c, g->xfer_id),
                             c->mpi_comm, &req));
    comm_req_add(c, req, &g->owner);
    *len = 0;
    return RILL_SUCCESS;
}

static void mpi_land_release(void *state, rill_comm_t *c, comm_get_t *g)
{
    (void)state;
    (void)c;
    (void)g;
}

static rill_status_t mpi_put(void *state, rill_comm_t *c, comm_put_t *put, const void *desc,
                             size_t len)
{
    (void)state;
    (void)desc;
    (void)len;
    MPI_Request req;
    COMM_MPI_CHECK(c, "MPI_Isend", put->dst,
                   MPI_Isend(put->exp->buf, (int)put->size, MPI_BYTE, put->dst,
                             comm_data_tag(c, put->xfer_id), c->mpi_comm, &req));
    comm_req_add(c, req, &put->owner);
    return RILL_SUCCESS;
}

static rill_status_t mpi_init(rill_comm_t *c, const bool *want, bool *reach, void **state_p,
                              const char **why_p)
{
    for (int r = 0; r < c->size; r++)
        reach[r] = want[r];
    *state_p = NULL;
    *why_p = NULL;
    return RILL_SUCCESS;
}

static int mpi_progress(void *state, rill_comm_t *c)
{
    (void)state;
    (void)c;
    return 0; /* its requests are in the comm thread's array (comm_poll_reqs) */
}

static bool mpi_busy(void *state)
{
    (void)state;
    return false;
}

static void mpi_fini(void *state, rill_comm_t *c)
{
    (void)state;
    (void)c;
}

const comm_transport_ops_t comm_transport_mpi = {
    .name = "mpi",
    .one_sided = false,
    .init = mpi_init,
    .land_post = mpi_land_post,
    .land_release = mpi_land_release,
    .put = mpi_put,
    .progress = mpi_progress,
    .busy = mpi_busy,
    .fini = mpi_fini,
};

rill_status_t comm_init_allgather(rill_comm_t *c, const void *in, size_t size, void *out)
{
    if (size > INT_MAX)
        return RILL_ERR_INVALID_ARG;
    COMM_MPI_CHECK(c, "MPI_Allgather", -1,
                   MPI_Allgather(in, (int)size, MPI_BYTE, out, (int)size, MPI_BYTE, c->mpi_comm));
    return RILL_SUCCESS;
}

bool comm_init_any(rill_comm_t *c, bool mine)
{
    int in = mine, out = 0;
    COMM_MPI_CHECK(c, "MPI_Allreduce", -1,
                   MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MAX, c->mpi_comm));
    return out != 0;
}

/* ------------------------------------------------------------ ends of transfers */

void comm_put_complete(rill_comm_t *c, comm_put_t *put, rill_status_t status)
{
    comm_expose_t *e = put->exp;
    c->send_inflight--;
    if (comm_transports[put->wire]->one_sided) { /* the getter learns it from us */
        comm_put_done_msg_t m = { .xfer_id = put->xfer_id, .status = status };
        comm_am_internal(c, put->dst, COMM_TAG_PUT_DONE, &m, sizeof(m), INT32_MAX);
    }
    if (status == RILL_SUCCESS) {
        stat_add(&c->stats.gets_served, 1);
        stat_add(&c->stats.data_bytes_sent, put->size);
        stat_add(&c->pstats[put->dst].rdv_sent, 1);
        stat_add(&c->pstats[put->dst].rdv_bytes_sent, put->size);
        if (put->wire != COMM_WIRE_MPI) {
            stat_add(&c->pstats[put->dst].net_sent, 1);
            stat_add(&c->pstats[put->dst].net_bytes_sent, put->size);
        }
    } else {
        e->status = status;
    }
    if (rill_trace_on())
        trace_xfer_done(c, "PUT %zu B to %d", put->size, put->dst, put->t_posted);
    free(put);
    if (++e->completed == e->nb_gets) {
        /* PUT_END: the last GET was served; the buffer goes back to its owner */
        rill_trace_instant("comm", "PUT_END", rill_time_ns());
        *comm_expose_slot(c, e->handle) = e->hnext;
        if (e->release)
            e->release(e->arg, e->status);
        free(e);
    }
}

void comm_get_complete(rill_comm_t *c, comm_get_t *g, rill_status_t status)
{
    comm_get_t **slot = comm_get_slot(c, g->xfer_id);
    if (*slot == g)
        *slot = g->hnext;
    c->recv_inflight--;
    if (status == RILL_SUCCESS) {
        stat_add(&c->stats.data_bytes_recv, g->size);
        stat_add(&c->pstats[g->src].rdv_recv, 1);
        stat_add(&c->pstats[g->src].rdv_bytes_recv, g->size);
    }
    stat_add(&c->stats.gets_done, 1);
    if (rill_trace_on())
        trace_xfer_done(c, "GET %zu B from %d", g->size, g->src, g->t_posted);
    if (g->done)
        g->done(g->arg, status);
    free(g);
}

/* ------------------------------------------------------------ active messages: receiving */

static void comm_defer(rill_comm_t *c, int src, int tag, const void *payload, size_t len)
{
    comm_deferred_t *d = malloc(sizeof(*d) + len);
    if (!d) {
        RILL_ERROR(RILL_LOG_COMM, "out of memory holding an active message from rank %d", src);
        MPI_Abort(MPI_COMM_WORLD, 1);
        abort();
    }
    if (!atomic_load_explicit(&c->handlers[tag].fn, memory_order_relaxed))
        RILL_WARN(RILL_LOG_COMM,
                  "active message with tag %d from rank %d arrived before its handler was "
                  "registered; it is held (with every later one) until it is",
                  tag, src);
    d->next = NULL;
    d->src = src;
    d->tag = tag;
    d->len = len;
    memcpy(d->data, payload, len);
    if (c->deferred_tail)
        c->deferred_tail->next = d;
    else
        c->deferred_head = d;
    c->deferred_tail = d;
}

static int comm_run_deferred(rill_comm_t *c)
{
    int progress = 0;
    while (c->deferred_head) {
        comm_deferred_t *d = c->deferred_head;
        /* acquire pairs with the release store in rill_comm_am_register */
        rill_comm_am_fn fn = atomic_load_explicit(&c->handlers[d->tag].fn, memory_order_acquire);
        if (!fn)
            break;
        c->deferred_head = d->next;
        if (!c->deferred_head)
            c->deferred_tail = NULL;
        fn(c, d->src, d->data, d->len, c->handlers[d->tag].arg);
        free(d);
        progress++;
    }
    return progress;
}

/* Unpack one MPI message of active messages and run their handlers. */
static void comm_deliver(rill_comm_t *c, int src, unsigned char *buf, size_t n)
{
    stat_add(&c->stats.mpi_msgs_recv, 1);
    stat_add(&c->stats.mpi_bytes_recv, n);
    size_t off = 0;
    while (off < n) {
        comm_am_hdr_t hdr;
        if (n - off < COMM_AM_HDR_BYTES)
            comm_protocol_error(c, src, "truncated header", off, n);
        memcpy(&hdr, buf + off, sizeof(hdr));
        size_t rec = comm_am_record_size(hdr.len);
        if (hdr.tag >= COMM_NB_TAGS || rec > n - off)
            comm_protocol_error(c, src, "bad tag or length", off, n);
        unsigned char *payload = buf + off + COMM_AM_HDR_BYTES;
        stat_add(&c->stats.am_recv, 1);
        stat_add(&c->stats.am_bytes_recv, hdr.len);
        stat_add(&c->pstats[src].am_recv, 1);
        stat_add(&c->pstats[src].am_bytes_recv, hdr.len);
        if (hdr.tag == COMM_TAG_GET) {
            comm_handle_get(c, src, payload, hdr.len);
        } else if (hdr.tag == COMM_TAG_GET_ERR) {
            comm_handle_get_err(c, src, payload, hdr.len);
        } else if (hdr.tag == COMM_TAG_PUT_DONE) {
            comm_handle_put_done(c, src, payload, hdr.len);
        } else {
            if (rill_trace_on()) { /* an activation (or another upper-layer message) came */
                char name[40];
                snprintf(name, sizeof(name), "message (tag %u) from %d", (unsigned)hdr.tag, src);
                rill_trace_instant("comm", name, rill_time_ns());
            }
            /* acquire pairs with the release store in rill_comm_am_register */
            rill_comm_am_fn fn =
                atomic_load_explicit(&c->handlers[hdr.tag].fn, memory_order_acquire);
            if (fn && !c->deferred_head)
                fn(c, src, payload, hdr.len, c->handlers[hdr.tag].arg);
            else
                comm_defer(c, src, hdr.tag, payload, hdr.len); /* keeps the order */
        }
        off += rec;
    }
}

static void comm_post_recv(rill_comm_t *c, int i)
{
    COMM_MPI_CHECK(c, "MPI_Irecv", -1,
                   MPI_Irecv(c->recv[i].buf, (int)c->recv_buf_size, MPI_BYTE, MPI_ANY_SOURCE,
                             COMM_MPI_TAG_AM, c->mpi_comm, &c->recv[i].req));
}

/* Handle completed AM receives in posting order: MPI matches messages to wildcard
 * receives in posting order, so this keeps each source's order even when a later
 * receive completes first (a large message still in transit in an earlier one). */
static int comm_poll_recvs(rill_comm_t *c)
{
    int progress = 0;
    for (;;) {
        int i = c->recv_head, flag = 0;
        MPI_Status st;
        COMM_MPI_CHECK(c, "MPI_Test", -1, MPI_Test(&c->recv[i].req, &flag, &st));
        if (!flag)
            break;
        /* (a single-request MPI_Test reports errors in its return code, not in
         * st.MPI_ERROR, which it leaves undefined) */
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        comm_deliver(c, st.MPI_SOURCE, c->recv[i].buf, (size_t)count);
        comm_post_recv(c, i);
        c->recv_head = (i + 1) % COMM_NB_RECV_BUFS;
        progress++;
    }
    return progress;
}

/* ------------------------------------------------------------ streams */

/* A stream send or receive from the command queue: its request on the streams'
 * communicator (a failure to post ends the job, as for every other request). */
static void comm_stream_start(rill_comm_t *c, comm_stream_t *st)
{
    MPI_Request req;
    if (st->recv)
        COMM_MPI_CHECK(
            c, "MPI_Irecv (a stream)", st->peer,
            MPI_Irecv(st->buf, (int)st->size, MPI_BYTE, st->peer, st->tag, c->stream_comm, &req));
    else
        COMM_MPI_CHECK(
            c, "MPI_Isend (a stream)", st->peer,
            MPI_Isend(st->buf, (int)st->size, MPI_BYTE, st->peer, st->tag, c->stream_comm, &req));
    comm_req_add(c, req, &st->owner);
    c->stream_inflight++;
}

/* A stream operation ended: its done, then it is freed. */
static void comm_stream_complete(rill_comm_t *c, comm_stream_t *st, MPI_Status *ms)
{
    rill_status_t status = RILL_SUCCESS;
    c->stream_inflight--;
    if (st->recv) {
        int cancelled = 0, count = 0;
        MPI_Test_cancelled(ms, &cancelled);
        if (!cancelled)
            MPI_Get_count(ms, MPI_BYTE, &count);
        if (cancelled || st->truncated || (size_t)count != st->size) {
            if (st->truncated)
                RILL_ERROR(RILL_LOG_COMM,
                           "a stream receive from rank %d (tag %d) of %zu bytes: the message "
                           "was longer",
                           st->peer, st->tag, st->size);
            else if (!cancelled)
                RILL_ERROR(RILL_LOG_COMM, "a stream receive from rank %d (tag %d): %d bytes of %zu",
                           st->peer, st->tag, count, st->size);
            status = RILL_ERR_COMM;
        } else {
            stat_add(&c->stats.data_bytes_recv, st->size);
            stat_add(&c->pstats[st->peer].rdv_recv, 1);
            stat_add(&c->pstats[st->peer].rdv_bytes_recv, st->size);
        }
    } else {
        stat_add(&c->stats.data_bytes_sent, st->size);
        stat_add(&c->pstats[st->peer].rdv_sent, 1);
        stat_add(&c->pstats[st->peer].rdv_bytes_sent, st->size);
    }
    st->done(st->arg, status);
    free(st);
}

/* ------------------------------------------------------------ completions */

static void comm_complete(rill_comm_t *c, comm_req_owner_t *owner, MPI_Status *st)
{
    switch (owner->kind) {
    case COMM_REQ_AM_SEND: {
        comm_am_sendbuf_t *sb = container_of(owner, comm_am_sendbuf_t, owner);
        c->peers[sb->peer].inflight--;
        c->sends_inflight_am--;
        free(sb->buf);
        free(sb);
        break;
    }
    case COMM_REQ_DATA_SEND:
        comm_put_complete(c, container_of(owner, comm_put_t, owner), RILL_SUCCESS);
        break;
    case COMM_REQ_DATA_RECV: {
        comm_get_t *g = container_of(owner, comm_get_t, owner);
        int cancelled = 0;
        MPI_Test_cancelled(st, &cancelled);
        rill_status_t status = g->status;
        if (cancelled) {
            if (status == RILL_SUCCESS)
                status = RILL_ERR_COMM;
        } else {
            int count = 0;
            MPI_Get_count(st, MPI_BYTE, &count);
            if ((size_t)count != g->size) {
                RILL_ERROR(RILL_LOG_COMM, "GET of handle %llu from peer rank %d: %d bytes of %zu",
                           (unsigned long long)g->handle, g->src, count, g->size);
                status = RILL_ERR_COMM;
            }
        }
        comm_get_complete(c, g, status);
        break;
    }
    case COMM_REQ_STREAM:
        comm_stream_complete(c, container_of(owner, comm_stream_t, owner), st);
        break;
    case COMM_REQ_COLL: {
        comm_coll_t *coll = container_of(owner, comm_coll_t, owner);
        coll->status = RILL_SUCCESS;
        rill_trace_slice("comm",
                         coll->cmd.kind == COMM_CMD_BARRIER     ? "barrier"
                         : coll->cmd.kind == COMM_CMD_ALLGATHER ? "allgather"
                                                                : "allreduce",
                         coll->t_posted, rill_time_ns(), 0, 0, NULL);
        atomic_fetch_add_explicit(&c->ncoll_done, 1, memory_order_release);
        /* release pairs with the caller's acquire load in comm_coll_run; coll lives in the
         * caller's frame and may vanish right after this store: do not touch it again */
        atomic_store_explicit(&coll->done, 1, memory_order_release);
        rill_evcount_signal(&c->coll_ev, 0);
        if (c->waiter.wake)
            c->waiter.wake(c->waiter.arg);
        break;
    }
    }
}

static int comm_poll_reqs(rill_comm_t *c)
{
    if (c->nreqs == 0)
        return 0;
    int outcount = 0;
    int rc = MPI_Testsome(c->nreqs, c->reqs, &outcount, c->indices, c->statuses);
    if (rc != MPI_SUCCESS) {
        if (rc != MPI_ERR_IN_STATUS)
            comm_mpi_fail(c, "MPI_Testsome", rc, -1);
        for (int k = 0; k < outcount; k++) {
            int e = c->statuses[k].MPI_ERROR, cls = MPI_SUCCESS;
            comm_req_owner_t *o = c->owners[c->indices[k]];
            if (e == MPI_SUCCESS)
                continue;
            MPI_Error_class(e, &cls);
            /* a stream receive shorter than its message fails alone (its layer says what
             * that means); every other error ends the job */
            if (cls == MPI_ERR_TRUNCATE && o->kind == COMM_REQ_STREAM) {
                container_of(o, comm_stream_t, owner)->truncated = true;
                continue;
            }
            comm_mpi_fail(c, "MPI_Testsome (a transfer)", e,
                          c->statuses[k].MPI_SOURCE >= 0 ? c->statuses[k].MPI_SOURCE : -1);
        }
    }
    if (outcount == MPI_UNDEFINED || outcount == 0)
        return 0;
    int n = c->nreqs; /* handlers below may append requests beyond n */
    for (int k = 0; k < outcount; k++) {
        int i = c->indices[k];
        comm_req_owner_t *owner = c->owners[i];
        c->owners[i] = NULL;
        comm_complete(c, owner, &c->statuses[k]);
    }
    int j = 0;
    for (int i = 0; i < c->nreqs; i++) {
        if (i < n && !c->owners[i])
            continue;
        c->reqs[j] = c->reqs[i];
        c->owners[j] = c->owners[i];
        j++;
    }
    c->nreqs = j;
    return outcount;
}

/* ------------------------------------------------------------ commands */

static int comm_drain(rill_comm_t *c)
{
    int progress = 0;
    rill_mpsc_node_t *node = rill_mpsc_take_all(&c->cmdq);
    while (node) {
        rill_mpsc_node_t *next = node->next;
        comm_cmd_t *cmd = container_of(node, comm_cmd_t, link);
        progress++;
        switch (cmd->kind) {
        case COMM_CMD_AM:
            comm_am_enqueue(c, container_of(cmd, comm_am_t, cmd));
            break;
        case COMM_CMD_EXPOSE: {
            comm_expose_t *e = container_of(cmd, comm_expose_t, cmd);
            comm_expose_t **slot = comm_expose_slot(c, e->handle);
            e->hnext = NULL;
            *slot = e;
            break;
        }
        case COMM_CMD_GET: {
            comm_get_t *g = container_of(cmd, comm_get_t, cmd);
            g->hitem.seq = c->next_seq++;
            if (rill_heap_push(&c->recv_pending, &g->hitem) != RILL_SUCCESS) {
                RILL_ERROR(RILL_LOG_COMM, "out of memory queueing a GET from rank %d", g->src);
                if (g->done)
                    g->done(g->arg, RILL_ERR_NO_MEMORY);
                free(g);
            }
            break;
        }
        case COMM_CMD_ALLREDUCE: {
            comm_coll_t *coll = container_of(cmd, comm_coll_t, cmd);
            static const MPI_Op ops[] = {
                [RILL_COMM_SUM] = MPI_SUM, [RILL_COMM_MIN] = MPI_MIN, [RILL_COMM_MAX] = MPI_MAX
            };
            MPI_Request req;
            coll->t_posted = rill_time_ns();
            COMM_MPI_CHECK(c, "MPI_Iallreduce", -1,
                           MPI_Iallreduce(coll->in == coll->out ? MPI_IN_PLACE : coll->in,
                                          coll->out, coll->count, MPI_UINT64_T, ops[coll->op],
                                          c->mpi_comm, &req));
            comm_req_add(c, req, &coll->owner);
            break;
        }
        case COMM_CMD_ALLGATHER: {
            comm_coll_t *coll = container_of(cmd, comm_coll_t, cmd);
            MPI_Request req;
            coll->t_posted = rill_time_ns();
            COMM_MPI_CHECK(c, "MPI_Iallgather", -1,
                           MPI_Iallgather(coll->gin, (int)coll->gsize, MPI_BYTE, coll->gout,
                                          (int)coll->gsize, MPI_BYTE, c->mpi_comm, &req));
            comm_req_add(c, req, &coll->owner);
            break;
        }
        case COMM_CMD_BARRIER: {
            comm_coll_t *coll = container_of(cmd, comm_coll_t, cmd);
            MPI_Request req;
            coll->t_posted = rill_time_ns();
            COMM_MPI_CHECK(c, "MPI_Ibarrier", -1, MPI_Ibarrier(c->mpi_comm, &req));
            comm_req_add(c, req, &coll->owner);
            break;
        }
        case COMM_CMD_STREAM:
            comm_stream_start(c, container_of(cmd, comm_stream_t, cmd));
            break;
        case COMM_CMD_STREAM_CANCEL: {
            comm_stream_t *st = container_of(cmd, comm_stream_t, cmd);
            for (int i = 0; i < c->nreqs; i++) {
                comm_req_owner_t *o = c->owners[i];
                if (o && o->kind == COMM_REQ_STREAM &&
                    container_of(o, comm_stream_t, owner)->id == st->id) {
                    MPI_Cancel(&c->reqs[i]); /* (it completes, cancelled or not, when polled) */
                    break;
                }
            }
            free(st);
            break;
        }
        case COMM_CMD_STOP:
            c->stopping = true;
            free(cmd);
            break;
        }
        node = next;
    }
    return progress;
}

/* Shutdown: once our own sends are all out and completed, a barrier; when every rank
 * passed it, no peer has anything left to send us that it started before fini. */
static int comm_poll_stop(rill_comm_t *c)
{
    if (!c->stopping)
        return 0;
    if (!c->barrier_posted) {
        if (c->dirty_head || c->sends_inflight_am || c->send_pending.count || c->send_inflight)
            return 0;
        atomic_fetch_add_explicit(&c->ncoll, 1, memory_order_relaxed);
        atomic_store_explicit(&c->last_coll, "the final barrier of rill_fini",
                              memory_order_relaxed);
        COMM_MPI_CHECK(c, "MPI_Ibarrier", -1, MPI_Ibarrier(c->mpi_comm, &c->stop_req));
        c->barrier_posted = true;
        return 1;
    }
    int flag = 0;
    COMM_MPI_CHECK(c, "MPI_Test", -1, MPI_Test(&c->stop_req, &flag, MPI_STATUS_IGNORE));
    if (flag)
        c->exit_loop = true;
    return flag;
}

/* ------------------------------------------------------------ the thread */

/* A turn of the comm thread's loop longer than this holds the messages that came meanwhile
 * back: counted, and drawn in traces with its phases; likewise a sleep that ends this much
 * later than its timeout (the thread was not given a core when it should have woken). */
#define COMM_SLOW_TURN_NS 500000
#define COMM_TURN_PHASES  6

/* This thread's CPU time (traces: whether a slow turn ran or waited for a core). Read at
 * every turn while tracing only: CLOCK_THREAD_CPUTIME_ID is a system call (no vDSO), a few
 * hundred ns on a turn of 1-2 us. */
static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Traces: phase i of the turn ends now. */
static inline void turn_mark(uint64_t *ph, int i, bool tracing)
{
    if (tracing)
        ph[i] = rill_time_ns();
}

/* ph: the turn's phase boundaries (drain, deferred, receives, requests, transfers, flush and
 * stop; the inner ones only when tracing); cpu0: the thread's CPU time at its start when
 * tracing. Comm thread. */
static void comm_slow_turn(rill_comm_t *c, const uint64_t *ph, uint64_t cpu0)
{
    stat_add(&c->stats.slow_turns, 1);
    stat_add(&c->stats.slow_ns, ph[COMM_TURN_PHASES] - ph[0]);
    if (!rill_trace_on())
        return;
    uint64_t cpu = thread_cpu_ns();
    double d[COMM_TURN_PHASES];
    for (int i = 0; i < COMM_TURN_PHASES; i++)
        d[i] = (double)(ph[i + 1] - ph[i]) / 1e3;
    char args[112]; /* (the trace keeps 79 characters) */
    snprintf(args, sizeof(args),
             "us: on a core %.0f; cmds %.0f, dfr %.0f, recv %.0f, req %.0f, "
             "xfer %.0f, flush %.0f",
             cpu0 && cpu > cpu0 ? (double)(cpu - cpu0) / 1e3 : -1.0, d[0], d[1], d[2], d[3], d[4],
             d[5]);
    rill_trace_slice("comm", "slow turn", ph[0], ph[COMM_TURN_PHASES], 0, 0, args);
}

/* The thread was meant to run from due (a sleep's timeout, or the end of a turn followed
 * by a sched_yield) and ran again at woke. Comm thread. */
static void comm_late_wake(rill_comm_t *c, uint64_t due, uint64_t woke)
{
    stat_add(&c->stats.late_wakes, 1);
    stat_add(&c->stats.late_ns, woke - due);
    if (rill_trace_on())
        rill_trace_slice("comm", "late wake", due, woke, 0, 0, NULL);
}

/* The comm thread's last steps, every rank past the final barrier: the AM receives taken
 * back, what is still outstanding ended with an error (said). */
static void comm_thread_end(rill_comm_t *c)
{
    for (int i = 0; i < COMM_NB_RECV_BUFS; i++) {
        COMM_MPI_CHECK(c, "MPI_Cancel", -1, MPI_Cancel(&c->recv[i].req));
        COMM_MPI_CHECK(c, "MPI_Wait", -1, MPI_Wait(&c->recv[i].req, MPI_STATUS_IGNORE));
    }
    /* GETs on one-sided wires hold no MPI request: end them here */
    for (int b = 0; b < COMM_HASH_BUCKETS; b++)
        for (comm_get_t *g = c->get_table[b], *next; g; g = next) {
            next = g->hnext;
            if (g->wire == COMM_WIRE_MPI)
                continue;
            RILL_WARN(RILL_LOG_COMM, "a GET of %zu bytes from rank %d still outstanding at fini",
                      g->size, g->src);
            comm_transports[g->wire]->land_release(c->tstate[g->wire], c, g);
            comm_get_complete(c, g, RILL_ERR_BAD_STATE);
        }
    if (c->nreqs)
        RILL_WARN(RILL_LOG_COMM, "%d transfers still outstanding at fini: cancelled", c->nreqs);
    for (int i = 0; i < c->nreqs; i++) {
        comm_req_owner_t *owner = c->owners[i];
        MPI_Status st;
        MPI_Cancel(&c->reqs[i]);
        MPI_Wait(&c->reqs[i], &st);
        if (owner->kind == COMM_REQ_DATA_RECV) {
            comm_get_t *g = container_of(owner, comm_get_t, owner);
            if (g->done)
                g->done(g->arg, RILL_ERR_BAD_STATE);
            free(g);
        } else if (owner->kind == COMM_REQ_STREAM) {
            comm_stream_t *sr = container_of(owner, comm_stream_t, owner);
            sr->done(sr->arg, RILL_ERR_BAD_STATE);
            free(sr);
        }
    }
}

static void *comm_thread_main(void *arg)
{
    rill_comm_t *c = arg;
    rill_thread_name("rill-comm");
    /* precise short sleeps: the default 50 us timer slack would stretch every poll */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    /* no MPI call until every rank's comm thread started: the main thread agrees on that
     * with one (acquire: pairs with the release store of the gate) */
    int gate;
    for (;;) {
        uint32_t key = rill_evcount_prepare(&c->wake);
        if ((gate = atomic_load_explicit(&c->gate, memory_order_acquire)) != 0) {
            rill_evcount_cancel(&c->wake);
            break;
        }
        rill_evcount_wait(&c->wake, key, 1000);
    }
    if (gate != 1)
        return NULL;
    rill_trace_thread(RILL_TRACE_TID_COMM, "comm thread");
    atomic_store_explicit(&c->thread_start_ns, rill_time_ns(), memory_order_relaxed);
    for (int i = 0; i < COMM_NB_RECV_BUFS; i++)
        comm_post_recv(c, i);

    /* Idle policy: poll for spin_us after the last progress, then sleep on the
     * eventcount with a timeout that doubles up to yield_max_us. A posted command wakes
     * us at once (see rill_comm_post for why no wakeup is lost); a timeout expiry polls MPI,
     * which is how incoming messages are seen while we sleep. */
    uint64_t spin_us = atomic_load_explicit(&c->spin_us, memory_order_relaxed);
    uint64_t min_sleep_us = spin_us ? spin_us : 1;
    if (min_sleep_us > c->yield_max_us)
        min_sleep_us = c->yield_max_us;
    uint64_t sleep_us = min_sleep_us;
    uint64_t last_progress = rill_time_ns(), turn_end = last_progress;
    while (!c->exit_loop) {
        /* a turn's phases, for turns that hold incoming messages back (comm_slow_turn): the
         * steps' own boundaries only when tracing, the turn's two ends always */
        bool tr = rill_trace_on();
        uint64_t ph[COMM_TURN_PHASES + 1] = { 0 }, cpu0 = tr ? thread_cpu_ns() : 0;
        ph[0] = rill_time_ns();
        if (ph[0] - turn_end > COMM_SLOW_TURN_NS) /* its sched_yield gave the core away */
            comm_late_wake(c, turn_end, ph[0]);
        int progress = comm_drain(c);
        turn_mark(ph, 1, tr);
        progress += comm_run_deferred(c);
        turn_mark(ph, 2, tr);
        progress += comm_poll_recvs(c);
        turn_mark(ph, 3, tr);
        progress += comm_poll_reqs(c);
        turn_mark(ph, 4, tr);
        progress += comm_start_transfers(c);
        progress += comm_transports_progress(c);
        turn_mark(ph, 5, tr);
        progress += comm_flush_peers(c);
        progress += comm_poll_stop(c);
        ph[6] = turn_end = rill_time_ns();
        if (ph[6] - ph[0] > COMM_SLOW_TURN_NS) {
            comm_slow_turn(c, ph, cpu0);
            turn_end = rill_time_ns(); /* (its trace write is not a late wake-up) */
        }
        if (progress) {
            last_progress = turn_end;
            sleep_us = min_sleep_us;
            continue;
        }
        /* a stream's chunk is on a pipeline's critical path and advances only while we poll
         * (shared-memory transports copy fragment by fragment from inside MPI calls): poll
         * until none is in flight (a GPU manager, which posted it, polls meanwhile too) */
        if (c->stream_inflight > 0) {
            sched_yield();
            continue;
        }
        if (turn_end - last_progress <
            atomic_load_explicit(&c->spin_us, memory_order_relaxed) * 1000) {
            sched_yield(); /* a worker may share this core: let it run */
            continue;
        }
        uint32_t key = rill_evcount_prepare(&c->wake);
        if (rill_mpsc_nonempty(&c->cmdq)) {
            rill_evcount_cancel(&c->wake);
            continue;
        }
        /* a worker waits for a message on its way: poll every poll_us, from the first sleep
         * after a spin on (decided before each sleep) */
        bool awaited = atomic_load_explicit(&c->expected, memory_order_relaxed) > 0 &&
                       atomic_load_explicit(&c->idle_workers, memory_order_relaxed) > 0;
        if (awaited)
            sleep_us = c->poll_us;
        uint64_t slept = rill_time_ns();
        rill_evcount_wait(&c->wake, key, sleep_us);
        uint64_t woke = rill_time_ns();
        stat_add(&c->stats.sleeps, 1);
        stat_add(&c->stats.sleep_ns, woke - slept);
        if (woke - slept > sleep_us * 1000 + COMM_SLOW_TURN_NS) /* not run when it should */
            comm_late_wake(c, slept + sleep_us * 1000, woke);
        turn_end = woke;
        /* otherwise back off, but not while a transfer is in flight: a large one advances only
         * when we poll (shared-memory transports copy fragment by fragment from inside MPI
         * calls) */
        if (awaited)
            continue;
        /* with every worker busy and no request in flight, a message can only wait for a
         * worker anyway, and each wake-up takes the core from one that shares it
         * (comm_thread_yield_busy_us; dgemm N = 8000, NB 384 on 2 ranks x 1 core, best of
         * each of 5 alternated calls: 110.2-115.6 GFLOP/s at 2000 us, 107.4-111.1 at 500) */
        uint64_t cap =
            atomic_load_explicit(&c->idle_workers, memory_order_relaxed) <= 0 && c->nreqs == 0
                ? c->yield_busy_us
                : c->yield_max_us;
        if (c->recv_inflight || c->send_inflight || c->stream_inflight || comm_transports_busy(c))
            sleep_us = min_sleep_us;
        else
            sleep_us = sleep_us * 2 < cap ? sleep_us * 2 : cap;
    }

    comm_thread_end(c);
    return NULL;
}

/* Start the comm thread, and agree with every rank that all of theirs started: a rank
 * whose thread did not start leaves MPI, and the others would wait for it in their first
 * collective for ever. Init: the blocking allreduce is made here, on the main thread, while
 * the new thread waits at its gate (MPI_THREAD_SERIALIZED: one caller at a time). */
rill_status_t rill_comm_mpi_start_thread(rill_comm_t *c)
{
    const char *why = NULL;
    rill_status_t status = RILL_SUCCESS;
    c->peers = calloc((size_t)c->size, sizeof(*c->peers));
    int nbufs = 0;
    while (c->peers && nbufs < COMM_NB_RECV_BUFS && (c->recv[nbufs].buf = malloc(c->recv_buf_size)))
        nbufs++;
    if (nbufs < COMM_NB_RECV_BUFS) {
        why = "out of memory for its receive buffers";
        status = RILL_ERR_NO_MEMORY;
    } else {
        atomic_store_explicit(&c->gate, 0, memory_order_relaxed);
        c->threaded = true;
        int rc = pthread_create(&c->thread, NULL, comm_thread_main, c);
        if (rc != 0) {
            why = strerror(rc);
            status = RILL_ERR_COMM;
            c->threaded = false;
        }
    }
    if (why)
        RILL_ERROR(RILL_LOG_COMM, "cannot start the comm thread: %s", why);
    /* the lowest rank that failed, as size - rank (0: none) */
    uint64_t mine = why ? (uint64_t)(c->size - c->rank) : 0, first = 0;
    COMM_MPI_CHECK(c, "MPI_Allreduce", -1,
                   MPI_Allreduce(&mine, &first, 1, MPI_UINT64_T, MPI_MAX, c->mpi_comm));
    if (first && !why) {
        RILL_ERROR(RILL_LOG_COMM,
                   "rank %d could not start its comm thread (its error is above): every rank "
                   "stops",
                   (int)((uint64_t)c->size - first));
        status = RILL_ERR_COMM;
    }
    /* release: the thread's first MPI calls come after the allreduce above */
    atomic_store_explicit(&c->gate, first ? 2 : 1, memory_order_release);
    rill_evcount_signal(&c->wake, 0);
    if (!first)
        return RILL_SUCCESS;
    if (c->threaded) {
        pthread_join(c->thread, NULL);
        c->threaded = false;
    }
    for (int i = 0; i < COMM_NB_RECV_BUFS; i++) {
        free(c->recv[i].buf);
        c->recv[i].buf = NULL;
    }
    free(c->peers);
    c->peers = NULL;
    return status;
}

void rill_comm_mpi_stop_thread(rill_comm_t *c)
{
    comm_cmd_t *stop = malloc(sizeof(*stop));
    if (!stop) {
        RILL_ERROR(RILL_LOG_COMM, "out of memory stopping the comm thread");
        MPI_Abort(MPI_COMM_WORLD, 1);
        abort();
    }
    stop->kind = COMM_CMD_STOP;
    rill_comm_post(c, stop);
    pthread_join(c->thread, NULL);
    c->threaded = false;
    for (int i = 0; i < COMM_NB_RECV_BUFS; i++) {
        free(c->recv[i].buf);
        c->recv[i].buf = NULL;
    }
    free(c->reqs);
    free(c->owners);
    free(c->indices);
    free(c->statuses);
    c->reqs = NULL;
    c->owners = NULL;
    c->indices = NULL;
    c->statuses = NULL;
    c->nreqs = c->cap_reqs = 0;
}

#endif /* RILL_HAVE_MPI */
