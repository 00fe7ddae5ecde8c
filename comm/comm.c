/* The comm engine's API: parameters, init/fini, and the calls any thread makes, which
 * only validate, copy and post a command to the comm thread (comm_mpi.c). */
#include "comm_internal.h"
#include "transport.h"

#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rill/params.h"

static rill_param_t *p_short_limit, *p_aggregate, *p_aggregate_max, *p_max_requests, *p_spin_us,
    *p_yield_max_us, *p_yield_busy_us, *p_poll_us, *p_gpu_direct, *p_gpu_direct_min, *p_gpu_staged,
    *p_gpu_staged_chunk, *p_ranks_per_node, *p_net, *p_net_gpu;

RILL_LOG_COMPONENT(rill_log_comm, "comm");

#define TUNER RILL_PARAM_LEVEL_TUNER
#define SAME  RILL_PARAM_SAME_ON_ALL_RANKS /* each end of a tile's move decides its path alone */

static const char *const gpu_direct_values[] = { "auto", "off", NULL };
static const char *const staged_values[] = { "pipeline", "tile", NULL };
static const char *const net_gpu_values[] = { "auto", "direct", "staged", NULL };
static const char *net_values[8] = { "auto" }; /* then the wires of transport.c's table */

static const rill_param_decl_t comm_params[] = {
    { "comm_short_limit", RILL_PARAM_SIZE, TUNER,
      "Payloads up to this many bytes travel inside an activation message (eager); larger "
      "ones use a rendezvous (GET/PUT)",
      .v.u = { 8 << 10, 0, 1 << 30 }, .param = &p_short_limit },
    { "comm_aggregate", RILL_PARAM_BOOL, TUNER,
      "Pack small active messages queued for one peer into one MPI message", .v.b = true,
      .param = &p_aggregate },
    { "comm_aggregate_max", RILL_PARAM_SIZE, TUNER,
      "Largest MPI message built by aggregating active messages",
      .v.u = { 64 << 10, 1 << 10, 1 << 30 }, .param = &p_aggregate_max },
    { "comm_max_requests", RILL_PARAM_INT, TUNER,
      "Outstanding MPI data transfers per direction (sends, receives); the rest wait in "
      "priority order",
      .v.i = { 64, 1, 1 << 20 }, .param = &p_max_requests },
    { "comm_thread_spin_us", RILL_PARAM_INT, TUNER,
      "Microseconds the idle comm thread keeps polling before it sleeps", .v.i = { 20, 0, 1000000 },
      .param = &p_spin_us },
    { "comm_thread_yield_max_us", RILL_PARAM_INT, TUNER,
      "Longest sleep of the idle comm thread between two polls of MPI (its timeout doubles "
      "from comm_thread_spin_us up to this); a posted command wakes it at once",
      .v.i = { 500, 1, 1000000 }, .param = &p_yield_max_us },
    { "comm_thread_yield_busy_us", RILL_PARAM_INT, TUNER,
      "Longest sleep of the idle comm thread while every worker of the process is busy and "
      "no MPI request (transfer, collective) is in flight, instead of "
      "comm_thread_yield_max_us: on a core shared with a worker each wake-up takes the core "
      "from it (a worker turning idle while a message is expected wakes the thread)",
      .v.i = { 2000, 1, 1000000 }, .param = &p_yield_busy_us },
    { "comm_thread_poll_us", RILL_PARAM_INT, TUNER,
      "Sleep of the idle comm thread between two polls of MPI while a message is expected "
      "(see rill_comm_expect): short, so the critical path is not delayed",
      .v.i = { 4, 1, 1000000 }, .param = &p_poll_us },
    { "comm_gpu_direct", RILL_PARAM_ENUM, TUNER,
      "Reach the GPU memory of peer ranks directly (auto: on the same node when CUDA IPC "
      "works both ways, checked at rill_init) or never (off: host-staged, through host "
      "memory and MPI, for every peer)",
      .v.s = { "auto", gpu_direct_values }, .flags = SAME, .param = &p_gpu_direct },
    { "comm_gpu_direct_min", RILL_PARAM_SIZE, TUNER,
      "Data of at least this many bytes move GPU to GPU between ranks that reach each "
      "other's GPUs (comm_gpu_direct); smaller ones go through host memory as between "
      "ranks without GPUs (inside the activation up to comm_short_limit)",
      .v.u = { 1, 1, (uint64_t)1 << 40 }, .flags = SAME, .param = &p_gpu_direct_min },
    { "comm_gpu_staged", RILL_PARAM_ENUM, TUNER,
      "How a GPU tile moves between ranks that do not reach each other's GPU memory, when "
      "both have GPUs and MPI is their wire (between nodes with comm_net = mpi, or every "
      "peer with comm_gpu_direct = off): pipeline (in chunks of comm_gpu_staged_chunk "
      "bytes through pinned host buffers, the GPU copies overlapping MPI, from the "
      "producer's GPU into the consumer's) or tile (the whole tile into the datum's host "
      "copy, sent, then staged in by the consumer: the older path)",
      .v.s = { "pipeline", staged_values }, .flags = SAME, .param = &p_gpu_staged },
    { "comm_gpu_staged_chunk", RILL_PARAM_SIZE, TUNER,
      "Bytes per chunk of the host-staged pipeline (comm_gpu_staged = pipeline): each "
      "transfer has up to 4 chunks in flight on each side, in pinned host buffers",
      .v.u = { 2 << 20, 4 << 10, 1 << 30 }, .flags = SAME, .param = &p_gpu_staged_chunk },
    { "comm_ranks_per_node", RILL_PARAM_INT, TUNER,
      "Group consecutive ranks into nodes of this many (0: the nodes are the machines, from "
      "the hosts). Simulates several nodes on one machine: between ranks of different "
      "nodes nothing crosses by Rill's shared-memory or CUDA IPC paths, and bulk bytes take "
      "the wire between nodes (comm_net). Cores and GPUs are still shared out among the "
      "ranks of a machine",
      .v.i = { 0, 0, 1 << 20 }, .flags = SAME, .param = &p_ranks_per_node },
    { "comm_net", RILL_PARAM_ENUM, TUNER,
      "The wire for bulk bytes between ranks of different nodes (auto: UCX when Rill was "
      "built with it and it starts on both ranks, else MPI; mpi; ucx: UCX or an error at "
      "rill_init). Ranks of one node use MPI. rill_info --peers says which each peer got",
      .v.s = { "auto", net_values }, .flags = SAME, .param = &p_net },
    { "comm_net_gpu", RILL_PARAM_ENUM, TUNER,
      "How GPU tiles cross between nodes over UCX (comm_net): direct (UCX moves the GPU "
      "memory itself: GPUDirect RDMA where the NIC has it, UCX's own staging over TCP), "
      "staged (Rill's host-staged pipeline, comm_gpu_staged_chunk bytes at a time through "
      "pinned host buffers, UCX moving host memory), or auto: direct when UCX may use an "
      "RDMA transport on every rank (UCX_TLS allows one and the machine has an RDMA "
      "device), else staged",
      .v.s = { "auto", net_gpu_values }, .flags = SAME, .param = &p_net_gpu },
};

rill_status_t rill_comm_register_params(void)
{
    for (int i = 0; i < comm_nb_transports && i + 2 < 8; i++)
        net_values[i + 1] = comm_transports[i]->name;
    rill_status_t status = rill_log_register(&rill_log_comm);
    rill_status_t s =
        rill_params_register_table(comm_params, sizeof(comm_params) / sizeof(comm_params[0]));
    return status != RILL_SUCCESS ? status : s;
}

int rill_comm_net_gpu_mode(void)
{
    return p_net_gpu ? (int)rill_param_get_enum(p_net_gpu) : 0;
}

bool rill_comm_gpu_direct_allowed(void)
{
    return !p_gpu_direct || rill_param_get_enum(p_gpu_direct) == 0;
}

bool rill_comm_gpu_staged_pipeline(void)
{
    return !p_gpu_staged || rill_param_get_enum(p_gpu_staged) == 0;
}

size_t rill_comm_gpu_staged_chunk(void)
{
    return p_gpu_staged_chunk ? (size_t)rill_param_get_size(p_gpu_staged_chunk) : (size_t)2 << 20;
}

static rill_status_t comm_read_params(rill_comm_t *comm)
{
    if (!p_short_limit || !p_aggregate || !p_aggregate_max || !p_max_requests || !p_spin_us ||
        !p_yield_max_us || !p_yield_busy_us || !p_poll_us || !p_gpu_direct_min ||
        !p_ranks_per_node || !p_net) {
        rill_status_t status = rill_comm_register_params();
        if (status != RILL_SUCCESS)
            return status;
    }
    comm->short_limit = (size_t)rill_param_get_size(p_short_limit);
    comm->gpu_direct_min = (size_t)rill_param_get_size(p_gpu_direct_min);
    comm->aggregate = rill_param_get_bool(p_aggregate);
    comm->aggregate_max = (size_t)rill_param_get_size(p_aggregate_max);
    comm->max_requests = (int)rill_param_get_int(p_max_requests);
    atomic_init(&comm->spin_us, (uint64_t)rill_param_get_int(p_spin_us));
    comm->yield_max_us = (uint64_t)rill_param_get_int(p_yield_max_us);
    comm->yield_busy_us = (uint64_t)rill_param_get_int(p_yield_busy_us);
    comm->poll_us = (uint64_t)rill_param_get_int(p_poll_us);
    comm->ranks_per_node = (int)rill_param_get_int(p_ranks_per_node);
    comm->net = rill_param_get_enum(p_net) - 1; /* auto is -1 */
    return RILL_SUCCESS;
}

rill_status_t rill_comm_init(int *argc, char ***argv, rill_comm_t **comm_p)
{
    rill_status_t status;
    if (!comm_p)
        return RILL_ERR_INVALID_ARG;
    rill_comm_t *comm = calloc(1, sizeof(*comm));
    if (!comm)
        return RILL_ERR_NO_MEMORY;
    status = comm_read_params(comm);
    if (status != RILL_SUCCESS)
        goto err_free;
    comm->rank = 0;
    comm->size = 1;
    comm->local_rank = 0;
    comm->local_size = 1;
    comm->node_id = 0;
    atomic_init(&comm->next_handle, 1);
    rill_mpsc_init(&comm->cmdq);
    rill_evcount_init(&comm->wake);
    rill_evcount_init(&comm->coll_ev);
    rill_heap_init(&comm->recv_pending);
    rill_heap_init(&comm->send_pending);
    for (int t = 0; t < COMM_NB_TAGS; t++)
        atomic_init(&comm->handlers[t].fn, NULL);
    (void)argc;
    (void)argv;
#if RILL_HAVE_MPI
    status = rill_comm_mpi_init(comm, argc, argv);
    if (status != RILL_SUCCESS)
        goto err_free;
    rill_log_set_rank(comm->rank);
    if (comm->size > 1) {
        status = comm_transports_init(comm);
        if (status != RILL_SUCCESS)
            goto err_mpi;
        status = rill_comm_mpi_start_thread(comm);
        if (status != RILL_SUCCESS)
            goto err_transports;
    }
#else
    rill_log_set_rank(0);
#endif
    RILL_VERBOSE(RILL_LOG_COMM, 1,
                 "rank %d of %d (local %d of %d), %s comm thread, short limit %zu, aggregation "
                 "%s (max %zu), max requests %d, spin %llu us, sleep <= %llu us (%llu us with "
                 "every worker busy)",
                 comm->rank, comm->size, comm->local_rank, comm->local_size,
                 comm->threaded ? "with a" : "no", comm->short_limit,
                 comm->aggregate ? "on" : "off", comm->aggregate_max, comm->max_requests,
                 (unsigned long long)atomic_load_explicit(&comm->spin_us, memory_order_relaxed),
                 (unsigned long long)comm->yield_max_us, (unsigned long long)comm->yield_busy_us);
    *comm_p = comm;
    return RILL_SUCCESS;

#if RILL_HAVE_MPI
err_transports:
    comm_transports_fini(comm);
err_mpi:
    rill_comm_mpi_fini(comm);
#endif
err_free:
    free(comm->pstats);
    free(comm->node_of);
    free(comm->wire);
    free(comm->wire_why);
    free(comm);
    return status;
}

rill_status_t rill_comm_fini(rill_comm_t **comm_p)
{
    if (!comm_p || !*comm_p)
        return RILL_ERR_INVALID_ARG;
    rill_comm_t *comm = *comm_p;
#if RILL_HAVE_MPI
    if (comm->threaded)
        rill_comm_mpi_stop_thread(comm); /* drains our sends, barrier, frees MPI resources */
    comm_transports_fini(comm);
    rill_comm_mpi_fini(comm);
#endif
    /* What upper layers left behind: report and free. */
    size_t nexp = 0;
    for (int b = 0; b < COMM_HASH_BUCKETS; b++) {
        while (comm->expose_table[b]) {
            comm_expose_t *e = comm->expose_table[b];
            comm->expose_table[b] = e->hnext;
            free(e);
            nexp++;
        }
    }
    if (nexp)
        RILL_VERBOSE(RILL_LOG_COMM, 1, "%zu exposed buffers were never fully read at fini", nexp);
    rill_heap_fini(&comm->recv_pending);
    rill_heap_fini(&comm->send_pending);
    free(comm->peers);
    free(comm->pstats);
    free(comm->node_of);
    free(comm->wire);
    free(comm->wire_why);
    while (comm->deferred_head) {
        comm_deferred_t *d = comm->deferred_head;
        comm->deferred_head = d->next;
        free(d);
    }
    free(comm);
    *comm_p = NULL;
    return RILL_SUCCESS;
}

void rill_comm_launcher_local(int *rank_p, int *size_p)
{
    static const char *const vars[][2] = {
        { "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE" },
        { "MPI_LOCALRANKID", "MPI_LOCALNRANKS" },
    };
    *rank_p = 0;
    *size_p = 1;
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *r = getenv(vars[i][0]), *n = getenv(vars[i][1]);
        if (r && n && atoi(n) > 0 && atoi(r) >= 0 && atoi(r) < atoi(n)) {
            *rank_p = atoi(r);
            *size_p = atoi(n);
            return;
        }
    }
}

int rill_comm_rank(const rill_comm_t *comm)
{
    return comm->rank;
}

int rill_comm_size(const rill_comm_t *comm)
{
    return comm->size;
}

int rill_comm_local_rank(const rill_comm_t *comm)
{
    return comm->local_rank;
}

uint64_t rill_comm_collectives(const rill_comm_t *comm)
{
    return comm ? atomic_load_explicit(&comm->ncoll, memory_order_relaxed) : 0;
}

bool rill_comm_in_collective(const rill_comm_t *comm, uint64_t *count, const char **what)
{
    if (!comm)
        return false;
    /* done first: a collective counted in done was counted in ncoll before it (its post) */
    uint64_t done = atomic_load_explicit(&comm->ncoll_done, memory_order_acquire);
    uint64_t n = atomic_load_explicit(&comm->ncoll, memory_order_relaxed);
    *count = n;
    *what = atomic_load_explicit(&comm->last_coll, memory_order_relaxed);
    return n > done;
}

int rill_comm_local_size(const rill_comm_t *comm)
{
    return comm->local_size;
}

rill_status_t rill_comm_thread_get(const rill_comm_t *comm, pthread_t *thread_p)
{
    if (!comm || !thread_p)
        return RILL_ERR_INVALID_ARG;
    if (!comm->threaded)
        return RILL_ERR_NOT_SUPPORTED;
    *thread_p = comm->thread;
    return RILL_SUCCESS;
}

int rill_comm_node_id(const rill_comm_t *comm)
{
    return comm->node_id;
}

int rill_comm_node_of(const rill_comm_t *comm, int rank)
{
    if (!comm || rank < 0 || rank >= comm->size)
        return -1;
    return comm->node_of ? comm->node_of[rank] : comm->node_id;
}

const char *rill_comm_peer_wire(const rill_comm_t *comm, int rank, const char **why_p)
{
    const char *why = "no such rank", *name = NULL;
    if (comm && rank == comm->rank) {
        why = "this rank";
        name = "self";
    } else if (comm && rank >= 0 && rank < comm->size && comm->wire) {
        why = comm->wire_why[rank];
        name = comm_transports[comm->wire[rank]]->name;
    }
    if (why_p)
        *why_p = why;
    return name;
}

void rill_comm_spin_at_least(rill_comm_t *comm, uint64_t us)
{
    /* relaxed: a hint for the idle policy, re-read by the comm thread every round */
    uint64_t cur = atomic_load_explicit(&comm->spin_us, memory_order_relaxed);
    while (cur < us && !atomic_compare_exchange_weak_explicit(
                           &comm->spin_us, &cur, us, memory_order_relaxed, memory_order_relaxed))
        ;
}

size_t rill_comm_short_limit(const rill_comm_t *comm)
{
    return comm->short_limit;
}

size_t rill_comm_gpu_direct_min(const rill_comm_t *comm)
{
    return comm->gpu_direct_min;
}

void rill_comm_stats(const rill_comm_t *comm, rill_comm_stats_t *stats_p)
{
    const comm_stats_atomic_t *s = &comm->stats;
#define LD(f) stats_p->f = atomic_load_explicit(&s->f, memory_order_relaxed)
    LD(am_sent);
    LD(am_recv);
    LD(am_bytes_sent);
    LD(am_bytes_recv);
    LD(mpi_msgs_sent);
    LD(mpi_msgs_recv);
    LD(mpi_bytes_sent);
    LD(mpi_bytes_recv);
    LD(am_aggregated);
    LD(gets_served);
    LD(gets_done);
    LD(data_bytes_sent);
    LD(data_bytes_recv);
    LD(sleeps);
    LD(sleep_ns);
    LD(slow_turns);
    LD(slow_ns);
    LD(late_wakes);
    LD(late_ns);
#undef LD
    uint64_t start = atomic_load_explicit(&comm->thread_start_ns, memory_order_relaxed);
    stats_p->thread_ns = start ? rill_time_ns() - start : 0;
}

void rill_comm_peer_stats(const rill_comm_t *comm, int peer, rill_comm_peer_stats_t *stats_p)
{
    memset(stats_p, 0, sizeof(*stats_p));
    if (!comm || !comm->pstats || peer < 0 || peer >= comm->size)
        return;
    const comm_peer_stats_t *s = &comm->pstats[peer];
#define LD(f) stats_p->f = atomic_load_explicit(&s->f, memory_order_relaxed)
    LD(am_sent);
    LD(am_bytes_sent);
    LD(am_recv);
    LD(am_bytes_recv);
    LD(rdv_sent);
    LD(rdv_bytes_sent);
    LD(rdv_recv);
    LD(rdv_bytes_recv);
    LD(net_sent);
    LD(net_bytes_sent);
    LD(net_recv);
    LD(net_bytes_recv);
#undef LD
}

/*
 * Posting and waking, without lost wakeups. The producer pushes (seq_cst CAS on the
 * queue head), then rill_evcount_signal bumps the epoch and reads the waiter count
 * (both seq_cst). The comm thread, before sleeping, registers as a waiter and reads
 * the epoch (rill_evcount_prepare, seq_cst), then re-reads the queue head (seq_cst,
 * rill_mpsc_nonempty). All six operations sit in one total order. If the comm thread's
 * re-read misses the push, the push comes after that re-read, hence after the
 * registration, so the signaller sees a waiter and calls FUTEX_WAKE after bumping the
 * epoch; the comm thread either has not entered FUTEX_WAIT yet (the kernel compares
 * the epoch with the key it read before the bump and returns at once) or is asleep
 * and is woken. Either way it wakes and finds the command.
 */
void rill_comm_post(rill_comm_t *comm, comm_cmd_t *cmd)
{
    rill_mpsc_push(&comm->cmdq, &cmd->link);
    rill_evcount_signal(&comm->wake, 1);
}

rill_status_t rill_comm_am_register(rill_comm_t *comm, int tag, rill_comm_am_fn fn, void *arg)
{
    if (!comm || tag < 0 || tag >= RILL_COMM_AM_MAX || !fn) {
        RILL_ERROR(RILL_LOG_COMM, "rill_comm_am_register: tag %d (allowed 0..%d) or handler %p",
                   tag, RILL_COMM_AM_MAX - 1, (void *)fn);
        return RILL_ERR_INVALID_ARG;
    }
    comm->handlers[tag].arg = arg;
    /* release: the comm thread's acquire load of fn then sees arg */
    atomic_store_explicit(&comm->handlers[tag].fn, fn, memory_order_release);
    return RILL_SUCCESS;
}

rill_status_t rill_comm_am_register_new(rill_comm_t *comm, rill_comm_am_fn fn, void *arg,
                                        int *tag_p)
{
    if (!comm || !fn || !tag_p)
        return RILL_ERR_INVALID_ARG;
    int tag = RILL_COMM_AM_MAX - 1 - comm->tags_taken;
    if (tag < 0 || atomic_load_explicit(&comm->handlers[tag].fn, memory_order_relaxed)) {
        RILL_ERROR(RILL_LOG_COMM, "rill_comm_am_register_new: no free active-message tag left");
        return RILL_ERR_NO_MEMORY;
    }
    rill_status_t s = rill_comm_am_register(comm, tag, fn, arg);
    if (s != RILL_SUCCESS)
        return s;
    comm->tags_taken++;
    *tag_p = tag;
    return RILL_SUCCESS;
}

rill_status_t rill_comm_am_send(rill_comm_t *comm, int dst, int tag, const void *msg, size_t len,
                                int32_t priority)
{
    if (!comm)
        return RILL_ERR_INVALID_ARG;
    if (tag < 0 || tag >= RILL_COMM_AM_MAX || dst < 0 || dst >= comm->size || dst == comm->rank ||
        (len && !msg) || len > comm->short_limit + COMM_AM_EXTRA) {
        RILL_ERROR(RILL_LOG_COMM,
                   "rill_comm_am_send: bad argument: dst %d (ranks 0..%d, self %d not allowed), "
                   "tag %d (0..%d), len %zu (at most %zu), msg %p",
                   dst, comm->size - 1, comm->rank, tag, RILL_COMM_AM_MAX - 1, len,
                   comm->short_limit + COMM_AM_EXTRA, msg);
        return RILL_ERR_INVALID_ARG;
    }
    comm_am_t *am = malloc(sizeof(*am) + len);
    if (!am)
        return RILL_ERR_NO_MEMORY;
    am->cmd.kind = COMM_CMD_AM;
    am->dst = dst;
    am->tag = tag;
    am->priority = priority;
    am->len = len;
    if (len)
        memcpy(am->data, msg, len);
    rill_comm_post(comm, &am->cmd);
    return RILL_SUCCESS;
}

rill_status_t rill_comm_expose(rill_comm_t *comm, const void *buf, size_t size, int nb_gets,
                               rill_comm_done_fn release, void *arg, uint64_t *handle_p)
{
    if (!comm || (size && !buf) || nb_gets < 1 || !handle_p || size > INT_MAX) {
        RILL_ERROR(RILL_LOG_COMM,
                   "rill_comm_expose: bad argument: buf %p, size %zu (at most %d), nb_gets %d "
                   "(at least 1)",
                   buf, size, INT_MAX, nb_gets);
        return RILL_ERR_INVALID_ARG;
    }
    /* relaxed: only uniqueness matters */
    uint64_t handle = atomic_fetch_add_explicit(&comm->next_handle, 1, memory_order_relaxed);
    if (!comm->threaded) {
        /* One rank: nobody can GET it; the handle is still unique. */
        *handle_p = handle;
        return RILL_SUCCESS;
    }
    comm_expose_t *e = calloc(1, sizeof(*e));
    if (!e)
        return RILL_ERR_NO_MEMORY;
    e->cmd.kind = COMM_CMD_EXPOSE;
    e->handle = handle;
    e->buf = buf;
    e->size = size;
    e->nb_gets = nb_gets;
    e->release = release;
    e->arg = arg;
    /* Posted before the caller can send the handle anywhere: a GET naming it arrives
     * after the comm thread took this command (commands run in posting order). */
    rill_comm_post(comm, &e->cmd);
    *handle_p = handle;
    return RILL_SUCCESS;
}

rill_status_t rill_comm_get(rill_comm_t *comm, int src, uint64_t handle, void *buf, size_t size,
                            int32_t priority, rill_comm_done_fn done, void *arg)
{
    if (!comm || src < 0 || src >= comm->size || src == comm->rank || (size && !buf) ||
        size > INT_MAX) {
        RILL_ERROR(RILL_LOG_COMM,
                   "rill_comm_get: bad argument: src %d (ranks 0..%d, self %d not allowed), "
                   "size %zu (at most %d: larger transfers are not chunked), buf %p",
                   src, comm->size - 1, comm->rank, size, INT_MAX, buf);
        return RILL_ERR_INVALID_ARG;
    }
    comm_get_t *g = calloc(1, sizeof(*g));
    if (!g)
        return RILL_ERR_NO_MEMORY;
    g->cmd.kind = COMM_CMD_GET;
    g->owner.kind = COMM_REQ_DATA_RECV;
    g->hitem.priority = priority;
    g->src = src;
    g->handle = handle;
    g->buf = buf;
    g->size = size;
    g->status = RILL_SUCCESS;
    g->done = done;
    g->arg = arg;
    rill_comm_post(comm, &g->cmd);
    return RILL_SUCCESS;
}

int rill_comm_stream_tag_max(const rill_comm_t *comm)
{
#if RILL_HAVE_MPI
    return comm && comm->threaded ? comm->tag_ub : -1;
#else
    (void)comm;
    return -1;
#endif
}

static rill_status_t stream_post(rill_comm_t *comm, bool recv, int peer, int tag, void *buf,
                                 size_t size, rill_comm_done_fn done, void *arg, uint64_t *id_p)
{
    const char *fn = recv ? "rill_comm_stream_recv" : "rill_comm_stream_send";
    int tag_max = rill_comm_stream_tag_max(comm);
    if (tag_max < 0) {
        RILL_ERROR(RILL_LOG_COMM, "%s: no streams here (one rank, or built without MPI)", fn);
        return RILL_ERR_NOT_SUPPORTED;
    }
    if (peer < 0 || peer >= comm->size || peer == comm->rank || tag < 0 || tag > tag_max ||
        (size && !buf) || size > INT_MAX || !done || !id_p) {
        RILL_ERROR(RILL_LOG_COMM,
                   "%s: bad argument: rank %d (0..%d, not this one, %d), tag %d (0..%d), "
                   "size %zu (at most %d), buf %p, done %s, id %s",
                   fn, peer, comm->size - 1, comm->rank, tag, tag_max, size, INT_MAX, buf,
                   done ? "set" : "NULL", id_p ? "set" : "NULL");
        return RILL_ERR_INVALID_ARG;
    }
    comm_stream_t *st = calloc(1, sizeof(*st));
    if (!st)
        return RILL_ERR_NO_MEMORY;
    st->cmd.kind = COMM_CMD_STREAM;
    st->owner.kind = COMM_REQ_STREAM;
    st->recv = recv;
    st->peer = peer;
    st->tag = tag;
    st->buf = buf;
    st->size = size;
    st->id = *id_p = atomic_fetch_add_explicit(&comm->next_stream_id, 1, memory_order_relaxed) + 1;
    st->done = done;
    st->arg = arg;
    rill_comm_post(comm, &st->cmd);
    return RILL_SUCCESS;
}

rill_status_t rill_comm_stream_send(rill_comm_t *comm, int dst, int tag, const void *buf,
                                    size_t size, rill_comm_done_fn done, void *arg, uint64_t *id_p)
{
    return stream_post(comm, false, dst, tag, (void *)buf, size, done, arg, id_p);
}

rill_status_t rill_comm_stream_recv(rill_comm_t *comm, int src, int tag, void *buf, size_t size,
                                    rill_comm_done_fn done, void *arg, uint64_t *id_p)
{
    return stream_post(comm, true, src, tag, buf, size, done, arg, id_p);
}

void rill_comm_stream_cancel(rill_comm_t *comm, uint64_t id)
{
    comm_stream_t *st = rill_comm_stream_tag_max(comm) >= 0 ? calloc(1, sizeof(*st)) : NULL;
    if (!st) {
        if (rill_comm_stream_tag_max(comm) >= 0)
            RILL_ERROR(RILL_LOG_COMM, "rill_comm_stream_cancel: out of host memory");
        return;
    }
    st->cmd.kind = COMM_CMD_STREAM_CANCEL;
    st->id = id;
    rill_comm_post(comm, &st->cmd);
}

static const char *comm_op_name(rill_comm_op_t op)
{
    return op == RILL_COMM_SUM ? "sum" : op == RILL_COMM_MIN ? "min" : "max";
}

void rill_comm_set_waiter(rill_comm_t *comm, const rill_comm_waiter_t *waiter)
{
    if (waiter)
        comm->waiter = *waiter;
    else
        memset(&comm->waiter, 0, sizeof(comm->waiter));
}

static bool coll_done(void *arg)
{
    comm_coll_t *coll = arg;
    /* acquire pairs with the comm thread's release store of done (comm_mpi.c) */
    return atomic_load_explicit(&coll->done, memory_order_acquire);
}

/* Post a collective and wait until the comm thread finished it: through the waiter
 * (the caller keeps running tasks), else asleep. */
static rill_status_t comm_coll_run(rill_comm_t *comm, comm_coll_t *coll, const char *what)
{
    atomic_init(&coll->done, 0);
    coll->status = RILL_SUCCESS;
    coll->owner.kind = COMM_REQ_COLL;
    atomic_fetch_add_explicit(&comm->ncoll, 1, memory_order_relaxed);
    atomic_store_explicit(&comm->last_coll, what, memory_order_relaxed);
    rill_comm_post(comm, &coll->cmd);
    if (comm->waiter.wait && comm->waiter.wait(comm->waiter.arg, coll_done, coll, what))
        return coll->status;
    for (;;) {
        uint32_t key = rill_evcount_prepare(&comm->coll_ev);
        /* acquire pairs with the comm thread's release store of done (comm_mpi.c) */
        if (atomic_load_explicit(&coll->done, memory_order_acquire)) {
            rill_evcount_cancel(&comm->coll_ev);
            break;
        }
        rill_evcount_wait(&comm->coll_ev, key, 0);
    }
    return coll->status;
}

rill_status_t rill_comm_allreduce_u64(rill_comm_t *comm, const uint64_t *in, uint64_t *out,
                                      int count, rill_comm_op_t op)
{
    if (!comm || count < 0 || (count && (!in || !out)) ||
        (op != RILL_COMM_SUM && op != RILL_COMM_MIN && op != RILL_COMM_MAX)) {
        RILL_ERROR(RILL_LOG_COMM, "rill_comm_allreduce_u64: bad argument: count %d, op %d", count,
                   (int)op);
        return RILL_ERR_INVALID_ARG;
    }
    RILL_VERBOSE(RILL_LOG_COMM, 3, "allreduce %s of %d values", comm_op_name(op), count);
    if (!comm->threaded) {
        if (count && in != out)
            memmove(out, in, (size_t)count * sizeof(*out));
        return RILL_SUCCESS;
    }
    comm_coll_t coll = {
        .cmd.kind = COMM_CMD_ALLREDUCE, .in = in, .out = out, .count = count, .op = op
    };
    static const char *const what[] = {
        [RILL_COMM_SUM] = "a collective with every rank (allreduce, sum)",
        [RILL_COMM_MIN] = "a collective with every rank (allreduce, min)",
        [RILL_COMM_MAX] = "a collective with every rank (allreduce, max)",
    };
    return comm_coll_run(comm, &coll, what[op]);
}

/* What each rank puts before its part of an allgather: a rank that was in another
 * collective, or gave another size, shows as a different record (its bytes are whatever
 * MPI matched, or MPI fails with a truncation, said in comm_mpi_fail). */
typedef struct gather_head {
    uint64_t magic; /* GATHER_MAGIC */
    uint64_t seq;   /* the rank's collectives so far */
    uint64_t size;
} gather_head_t;
#define GATHER_MAGIC 0x72696c6c67617468ull /* "rillgath" */

rill_status_t rill_comm_allgather(rill_comm_t *comm, const void *in, size_t size, void *out)
{
    if (!comm || (size && (!in || !out)) || size > INT32_MAX - sizeof(gather_head_t)) {
        RILL_ERROR(RILL_LOG_COMM, "rill_comm_allgather: bad argument: %zu bytes", size);
        return RILL_ERR_INVALID_ARG;
    }
    if (!comm->threaded) {
        if (size && in != out)
            memmove(out, in, size);
        return RILL_SUCCESS;
    }
    const size_t rec = sizeof(gather_head_t) + size;
    unsigned char *mine = malloc(rec), *all = malloc(rec * (size_t)comm->size);
    if (!mine || !all) {
        free(mine);
        free(all);
        return RILL_ERR_NO_MEMORY;
    }
    gather_head_t head = { GATHER_MAGIC, atomic_load_explicit(&comm->ncoll, memory_order_relaxed),
                           size };
    memcpy(mine, &head, sizeof(head));
    if (size)
        memcpy(mine + sizeof(head), in, size);
    comm_coll_t coll = { .cmd.kind = COMM_CMD_ALLGATHER, .gin = mine, .gout = all, .gsize = rec };
    rill_status_t s = comm_coll_run(comm, &coll, "a collective with every rank (allgather)");
    for (int r = 0; s == RILL_SUCCESS && r < comm->size; r++) {
        gather_head_t h;
        memcpy(&h, all + (size_t)r * rec, sizeof(h));
        if (h.magic != GATHER_MAGIC || h.seq != head.seq || h.size != size) {
            RILL_ERROR(RILL_LOG_COMM,
                       "allgather of %zu bytes (this rank's collective %llu): rank %d %s. Every "
                       "rank must call rill_context_allgather with the same size, wait for its "
                       "taskpools and call rill_fini in the same order",
                       size, (unsigned long long)head.seq, r,
                       h.magic != GATHER_MAGIC ? "was not in it (it was in another collective)"
                       : h.size != size        ? "gave another size"
                                               : "was at another collective of its sequence");
            s = RILL_ERR_MISMATCH;
        } else if (size)
            memcpy((unsigned char *)out + (size_t)r * size, all + (size_t)r * rec + sizeof(h),
                   size);
    }
    free(mine);
    free(all);
    return s;
}

rill_status_t rill_comm_barrier(rill_comm_t *comm)
{
    if (!comm)
        return RILL_ERR_INVALID_ARG;
    if (!comm->threaded)
        return RILL_SUCCESS;
    comm_coll_t coll = { .cmd.kind = COMM_CMD_BARRIER };
    return comm_coll_run(comm, &coll, "a collective with every rank (barrier)");
}

void rill_comm_expect(rill_comm_t *comm, int delta)
{
    /* relaxed: a hint for the idle policy; the comm thread re-reads it every round */
    atomic_fetch_add_explicit(&comm->expected, delta, memory_order_relaxed);
}

void rill_comm_workers_idle(rill_comm_t *comm, int delta)
{
    int before = atomic_fetch_add_explicit(&comm->idle_workers, delta, memory_order_relaxed);
    /* the first idle worker while a message is awaited: cut the comm thread's sleep short */
    if (delta > 0 && before <= 0 && comm->threaded &&
        atomic_load_explicit(&comm->expected, memory_order_relaxed) > 0)
        rill_evcount_signal(&comm->wake, 1);
}

void rill_comm_abort(rill_comm_t *comm, int code)
{
    fflush(stdout);
    fflush(stderr);
#if RILL_HAVE_MPI
    int init = 0, fini = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fini);
    /* MPI_Abort from any thread: the job is ending, serialisation no longer matters */
    if (comm && init && !fini)
        MPI_Abort(MPI_COMM_WORLD, code);
#else
    (void)comm;
#endif
    _exit(code);
}
