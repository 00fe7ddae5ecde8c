/* Internal structures of the comm engine, shared by comm.c (API, posting) and
 * comm_mpi.c (the comm thread and the MPI backend). Internal to comm/. */
#ifndef RILL_COMM_INTERNAL_H
#define RILL_COMM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rill/config.h"
#include "comm.h"
#include "heap.h"
#include "mpsc.h"
#include "sync.h"

#if RILL_HAVE_MPI
#include <mpi.h>
#endif

/* Active-message tags on the wire: the user's 0 .. RILL_COMM_AM_MAX-1, then ours. */
enum {
    COMM_TAG_GET = RILL_COMM_AM_MAX, /* getter -> exposer: send me these bytes */
    COMM_TAG_GET_ERR,                /* exposer -> getter: that GET failed */
    COMM_TAG_PUT_DONE,               /* exposer -> getter: a one-sided wire's bytes landed */
    COMM_NB_TAGS
};

/* Header of one active message inside an MPI message; the payload follows, padded so
 * that the next header (and every payload) is 8-byte aligned. */
typedef struct comm_am_hdr {
    uint32_t len;
    uint16_t tag;
    uint16_t reserved;
} comm_am_hdr_t;
#define COMM_AM_ALIGN     8
#define COMM_AM_HDR_BYTES sizeof(comm_am_hdr_t)
#define COMM_AM_EXTRA     1024 /* an AM may exceed short_limit by this much (headers) */

static inline size_t comm_am_record_size(size_t len)
{
    return COMM_AM_HDR_BYTES + ((len + COMM_AM_ALIGN - 1) & ~(size_t)(COMM_AM_ALIGN - 1));
}

/* Payloads of the internal active messages. */
typedef struct comm_get_msg {
    uint64_t handle;
    uint64_t xfer_id;
    uint64_t size;
    int32_t priority;
    uint16_t wire;     /* the transport the getter prepared its landing for */
    uint16_t desc_len; /* bytes of the landing's descriptor, which follow */
} comm_get_msg_t;

typedef struct comm_put_done_msg {
    uint64_t xfer_id;
    int32_t status;
    int32_t reserved;
} comm_put_done_msg_t;

typedef struct comm_get_err_msg {
    uint64_t xfer_id;
    int32_t status;
    int32_t reserved;
} comm_get_err_msg_t;

typedef enum comm_cmd_kind {
    COMM_CMD_AM,
    COMM_CMD_EXPOSE,
    COMM_CMD_GET,
    COMM_CMD_ALLREDUCE,
    COMM_CMD_BARRIER,
    COMM_CMD_ALLGATHER,
    COMM_CMD_STREAM,
    COMM_CMD_STREAM_CANCEL,
    COMM_CMD_STOP,
} comm_cmd_kind_t;

/** Every command starts with this: the MPSC link and its kind. */
typedef struct comm_cmd {
    rill_mpsc_node_t link;
    comm_cmd_kind_t kind;
} comm_cmd_t;

/** One active message to send; after the comm thread took it, it waits in its peer's
 * per-tag FIFO (next). */
typedef struct comm_am {
    comm_cmd_t cmd;
    struct comm_am *next;
    int dst;
    int tag;
    int32_t priority;
    uint64_t seq;
    size_t len;
    unsigned char data[]; /* copy of the caller's message */
} comm_am_t;

/* Kinds of the owners of outstanding MPI requests. */
typedef enum comm_req_kind {
    COMM_REQ_AM_SEND,
    COMM_REQ_DATA_SEND,
    COMM_REQ_DATA_RECV,
    COMM_REQ_COLL,
    COMM_REQ_STREAM,
} comm_req_kind_t;

typedef struct comm_req_owner {
    comm_req_kind_t kind;
} comm_req_owner_t;

/** A registered buffer (rill_comm_expose), in the exposer's handle table. */
typedef struct comm_expose {
    comm_cmd_t cmd;
    struct comm_expose *hnext; /* hash chain */
    uint64_t handle;
    const void *buf;
    size_t size;
    int nb_gets;
    int requested;        /* GETs accepted so far */
    int completed;        /* PUTs whose Isend completed */
    rill_status_t status; /* the first failed PUT's, for release (RILL_SUCCESS) */
    rill_comm_done_fn release;
    void *arg;
} comm_expose_t;

/** The getter's side of a transfer (rill_comm_get). */
typedef struct comm_get {
    comm_cmd_t cmd;
    comm_req_owner_t owner; /* COMM_REQ_DATA_RECV */
    rill_heap_item_t hitem; /* waiting for a request slot */
    struct comm_get *hnext; /* xfer id hash chain, while the Irecv is posted */
    int src;
    int wire; /* comm_transports[] index, from comm->wire[src] */
    uint64_t handle;
    void *buf;
    size_t size;
    uint64_t xfer_id;
    void *land;           /* the wire's state of the landing (land_post), or NULL */
    rill_status_t status; /* set by a GET_ERR reply before the Irecv is cancelled */
    rill_comm_done_fn done;
    void *arg;
    uint64_t t_posted; /* when its Irecv was posted (traces) */
} comm_get_t;

/** The exposer's side of a transfer: one accepted GET, waiting for or in its Isend. */
typedef struct comm_put {
    comm_req_owner_t owner; /* COMM_REQ_DATA_SEND */
    rill_heap_item_t hitem;
    comm_expose_t *exp;
    int dst;
    int wire; /* comm_transports[] index, named by the GET */
    uint64_t xfer_id;
    size_t size;
    uint64_t t_posted; /* when its Isend was posted (traces) */
    size_t desc_len;   /* the landing's descriptor (from the GET) */
    unsigned char desc[];
} comm_put_t;

/** A stream send or receive (rill_comm_stream_send, _recv), and a cancel of one (recv
 * false, buf NULL, id: the one to cancel). */
typedef struct comm_stream {
    comm_cmd_t cmd;
    comm_req_owner_t owner; /* COMM_REQ_STREAM */
    bool recv;
    bool truncated; /* a receive whose message was longer (MPI_ERR_TRUNCATE) */
    int peer, tag;
    void *buf;
    size_t size;
    uint64_t id;
    rill_comm_done_fn done;
    void *arg;
} comm_stream_t;

/** A collective: the caller's stack frame, the caller sleeps on comm->coll_ev. */
typedef struct comm_coll {
    comm_cmd_t cmd;
    comm_req_owner_t owner; /* COMM_REQ_COLL */
    const uint64_t *in;
    uint64_t *out;
    int count;
    rill_comm_op_t op;
    const void *gin; /* ALLGATHER: size bytes in, nranks x size bytes out */
    void *gout;
    size_t gsize;
    atomic_int done; /* 1 once finished: release store, pairs with the caller's acquire */
    rill_status_t status;
    uint64_t t_posted; /* when the comm thread started it (traces) */
} comm_coll_t;

/** An MPI message of packed active messages, in flight. */
typedef struct comm_am_sendbuf {
    comm_req_owner_t owner; /* COMM_REQ_AM_SEND */
    int peer;
    size_t len;
    unsigned char *buf;
} comm_am_sendbuf_t;

typedef struct comm_am_fifo {
    comm_am_t *head, *tail;
} comm_am_fifo_t;

/** Per-peer sending state (comm thread only). */
typedef struct comm_peer {
    comm_am_fifo_t fifo[COMM_NB_TAGS];
    size_t nqueued;
    int inflight; /* AM MPI messages not completed yet */
    bool dirty;   /* in the comm's dirty list */
    struct comm_peer *next_dirty;
} comm_peer_t;

/** A received active message waiting for its handler to be registered. */
typedef struct comm_deferred {
    struct comm_deferred *next;
    int src, tag;
    size_t len;
    unsigned char data[];
} comm_deferred_t;

typedef struct comm_handler {
    _Atomic(rill_comm_am_fn) fn; /* release store in am_register, acquire load on delivery */
    void *arg;
} comm_handler_t;

typedef struct comm_stats_atomic {
    atomic_uint_fast64_t am_sent, am_recv, am_bytes_sent, am_bytes_recv;
    atomic_uint_fast64_t mpi_msgs_sent, mpi_msgs_recv, mpi_bytes_sent, mpi_bytes_recv;
    atomic_uint_fast64_t am_aggregated, gets_served, gets_done, data_bytes_sent, data_bytes_recv,
        sleeps, sleep_ns, slow_turns, slow_ns, late_wakes, late_ns;
} comm_stats_atomic_t;

/** Per-peer counters (rill_comm_peer_stats_t), written by the comm thread. */
typedef struct comm_peer_stats {
    atomic_uint_fast64_t am_sent, am_bytes_sent, am_recv, am_bytes_recv;
    atomic_uint_fast64_t rdv_sent, rdv_bytes_sent, rdv_recv, rdv_bytes_recv;
    atomic_uint_fast64_t net_sent, net_bytes_sent, net_recv, net_bytes_recv;
} comm_peer_stats_t;

#define COMM_NB_RECV_BUFS 8 /* pre-posted AM receives */
#define COMM_AM_INFLIGHT  4 /* AM MPI messages in flight per peer before queueing */
#define COMM_HASH_BUCKETS 4096

struct rill_comm {
    int rank, size, local_rank, local_size;
    /* collectives this rank made and the last one's name, for the message of a mismatch
     * (written by the posting thread, read by the comm thread when MPI fails: relaxed);
     * ncoll_done of them completed (the comm thread: rill_comm_in_collective) */
    atomic_ullong ncoll;
    atomic_ullong ncoll_done;
    _Atomic(const char *) last_coll;
    int node_id; /* the lowest rank of this process's node (simulated: comm_ranks_per_node) */
    int ranks_per_node;    /* comm_ranks_per_node (0: nodes from the hosts) */
    int net;               /* comm_net: -1 auto, else a comm_transports[] index */
    int *node_of;          /* every rank's node_id (size > 1), set at init */
    unsigned char *wire;   /* every peer's wire for bulk bytes: comm_transports[] index */
    const char **wire_why; /* why (static strings) */
    void *tstate[4];       /* each started wire's state (comm_transports[] index) */
    bool tstarted[4];
    /* parameters, read at init */
    size_t short_limit, aggregate_max;
    size_t gpu_direct_min; /* comm_gpu_direct_min */
    bool aggregate;
    int max_requests;
    _Atomic uint64_t spin_us; /* may be raised once the process found GPUs (relaxed) */
    uint64_t yield_max_us, yield_busy_us, poll_us;
    atomic_int expected;     /* messages the layer above waits for (rill_comm_expect) */
    atomic_int idle_workers; /* workers with nothing to run (rill_comm_workers_idle) */

    comm_handler_t handlers[COMM_NB_TAGS];
    int tags_taken; /* tags handed out by rill_comm_am_register_new (main thread) */
    atomic_uint_fast64_t next_handle; /* rill_comm_expose, any thread */
    comm_stats_atomic_t stats;
    comm_peer_stats_t *pstats; /* one per rank (size > 1) */
    atomic_uint_fast64_t thread_start_ns;

    bool threaded; /* a comm thread runs (MPI with size > 1) */
    pthread_t thread;
    /* the comm thread's start (rill_comm_mpi_start_thread): 0 wait, makes no MPI call; 1 run;
     * 2 leave at once (a rank's comm thread did not start) */
    atomic_int gate;
    rill_mpsc_t cmdq;          /* commands for the comm thread */
    rill_evcount_t wake;       /* the comm thread sleeps on it */
    rill_evcount_t coll_ev;    /* callers of collectives sleep on it */
    rill_comm_waiter_t waiter; /* how callers of collectives wait (wait == NULL: sleep) */

#if RILL_HAVE_MPI
    MPI_Comm mpi_comm;    /* our dup of MPI_COMM_WORLD */
    MPI_Comm stream_comm; /* another, for the streams (rill_comm_stream_send) */
    bool mpi_initialized_by_us;
    int tag_ub;
    size_t recv_buf_size; /* largest AM MPI message of any rank */

    /* everything below: comm thread only */
    struct {
        MPI_Request req;
        unsigned char *buf;
    } recv[COMM_NB_RECV_BUFS];
    int recv_head; /* oldest posted receive: completions are handled in posting order */

    MPI_Request *reqs; /* outstanding requests other than AM receives */
    comm_req_owner_t **owners;
    int *indices;
    MPI_Status *statuses;
    int nreqs, cap_reqs;
#endif
    comm_peer_t *peers;
    comm_peer_t *dirty_head;
    comm_deferred_t *deferred_head, *deferred_tail;
    comm_expose_t *expose_table[COMM_HASH_BUCKETS];
    comm_get_t *get_table[COMM_HASH_BUCKETS];
    rill_heap_t recv_pending; /* gets waiting for a request slot */
    rill_heap_t send_pending; /* puts waiting for a request slot */
    int recv_inflight, send_inflight;
    int stream_inflight; /* stream sends and receives posted */
    atomic_uint_fast64_t next_stream_id;
    int64_t trace_bytes_inflight; /* traces: rendezvous bytes posted and not completed */
    uint64_t next_seq, next_xfer_id;
    int sends_inflight_am;
    bool stopping, barrier_posted, exit_loop;
#if RILL_HAVE_MPI
    MPI_Request stop_req;
#endif
};

/* comm_mpi.c */
rill_status_t rill_comm_mpi_init(rill_comm_t *comm, int *argc, char ***argv);
rill_status_t rill_comm_mpi_start_thread(rill_comm_t *comm);
void rill_comm_mpi_stop_thread(rill_comm_t *comm);
void rill_comm_mpi_fini(rill_comm_t *comm);

/** Hand a command to the comm thread and wake it. Any thread. */
void rill_comm_post(rill_comm_t *comm, comm_cmd_t *cmd);

#endif
