/* The UCX wire between nodes (UCP API): the getter registers its landing and sends the
 * region's remote key in its GET; the exposer puts the bytes with an RMA put, flushes the
 * endpoint, and only then tells the getter (PUT_DONE, over MPI) that they are there. UCX
 * picks the transport below (InfiniBand or RoCE through rdma-core, TCP sockets, shared
 * memory): UCX_TLS narrows it, as the tests do (UCX_TLS=tcp,self). The comm thread drives
 * the worker; nothing else of Rill touches it. */
#include "transport.h"
#include "net.h"

#if RILL_HAVE_UCX && RILL_HAVE_MPI

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include "log.h"

typedef struct ucx_state {
    ucp_context_h ctx;
    ucp_worker_h worker;
    ucp_ep_h *eps; /* per rank; NULL when not reached */
    int nranks;
    int inflight; /* puts whose flush has not completed */
    bool cuda;    /* UCX moves GPU memory here (built with CUDA support) */
} ucx_state_t;

/* The descriptor of a landing, in the GET: where, then the packed remote key. */
typedef struct ucx_desc {
    uint64_t addr;
    uint32_t rkey_len;
    uint32_t reserved;
} ucx_desc_t;

/* One put between its post and its flush's completion. */
typedef struct ucx_put_op {
    ucx_state_t *st;
    rill_comm_t *comm;
    comm_put_t *put;
    ucp_rkey_h rkey;
} ucx_put_op_t;

/* Close n endpoints of worker (NULL ones skipped) by force: the traffic is over (the final
 * barrier passed, or the managers stopped), and a flushing close would wait for a peer that
 * may have closed already. */
static void ucx_eps_close(ucp_worker_h worker, ucp_ep_h *eps, size_t n)
{
    for (size_t i = 0; eps && i < n; i++) {
        if (!eps[i])
            continue;
        ucp_request_param_t prm = { .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                                    .flags = UCP_EP_CLOSE_FLAG_FORCE };
        ucs_status_ptr_t req = ucp_ep_close_nbx(eps[i], &prm);
        if (UCS_PTR_IS_PTR(req)) {
            while (ucp_request_check_status(req) == UCS_INPROGRESS)
                ucp_worker_progress(worker);
            ucp_request_free(req);
        }
    }
}

static void ucx_close(ucx_state_t *st)
{
    if (st->eps) {
        ucx_eps_close(st->worker, st->eps, (size_t)st->nranks);
        free(st->eps);
    }
    if (st->worker)
        ucp_worker_destroy(st->worker);
    if (st->ctx)
        ucp_cleanup(st->ctx);
    free(st);
}

/* Start UCX here; NULL with why set when it cannot (then no peer is reached). */
static ucx_state_t *ucx_start(int nranks, const char **why)
{
    ucx_state_t *st = calloc(1, sizeof(*st));
    if (!st || !(st->eps = calloc((size_t)nranks, sizeof(*st->eps)))) {
        free(st);
        *why = "another node; out of memory starting UCX";
        return NULL;
    }
    st->nranks = nranks;
    ucp_config_t *cfg;
    ucs_status_t us = ucp_config_read(NULL, NULL, &cfg);
    if (us != UCS_OK) {
        RILL_WARN(RILL_LOG_COMM, "UCX: reading its configuration (UCX_* variables) failed: %s",
                  ucs_status_string(us));
        *why = "another node; UCX's configuration (UCX_* variables) could not be read";
        goto err;
    }
    /* shared by workers of several threads: the comm thread's, and one per GPU manager
     * (net.h) */
    ucp_params_t p = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS |
                      UCP_PARAM_FIELD_MT_WORKERS_SHARED,
        .features = UCP_FEATURE_RMA | UCP_FEATURE_TAG,
        .estimated_num_eps = (size_t)nranks,
        .mt_workers_shared = 1,
    };
    us = ucp_init(&p, cfg, &st->ctx);
    ucp_config_release(cfg);
    if (us != UCS_OK) {
        st->ctx = NULL;
        RILL_WARN(RILL_LOG_COMM, "UCX: ucp_init failed: %s", ucs_status_string(us));
        *why = "another node; UCX did not start on a rank (ucp_init failed)";
        goto err;
    }
    ucp_context_attr_t ca = { .field_mask = UCP_ATTR_FIELD_MEMORY_TYPES };
    st->cuda = ucp_context_query(st->ctx, &ca) == UCS_OK &&
               (ca.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA));
    /* serialized: the main thread at init and fini, the comm thread between, each handing
     * over through the thread's start and join */
    ucp_worker_params_t wp = { .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                               .thread_mode = UCS_THREAD_MODE_SERIALIZED };
    us = ucp_worker_create(st->ctx, &wp, &st->worker);
    if (us != UCS_OK) {
        st->worker = NULL;
        RILL_WARN(RILL_LOG_COMM, "UCX: ucp_worker_create failed: %s", ucs_status_string(us));
        *why = "another node; UCX did not start on a rank (ucp_worker_create failed)";
        goto err;
    }
    return st;
err:
    ucx_close(st);
    return NULL;
}

static rill_status_t ucx_init(rill_comm_t *c, const bool *want, bool *reach, void **state_p,
                              const char **why_p)
{
    int n = c->size;
    const char *why = NULL;
    ucx_state_t *st = ucx_start(n, &why);
    ucp_address_t *addr = NULL;
    size_t addr_len = 0;
    if (st && ucp_worker_get_address(st->worker, &addr, &addr_len) != UCS_OK) {
        why = "another node; UCX did not start on a rank (no worker address)";
        ucx_close(st);
        st = NULL;
        addr = NULL;
        addr_len = 0;
    }
    /* every rank makes the same collectives whatever happened here: the addresses' sizes,
     * the addresses (padded to the largest), then who reached whom */
    rill_status_t s = RILL_SUCCESS;
    uint64_t mine = addr_len, *lens = calloc((size_t)n, sizeof(*lens));
    unsigned char *all = NULL, *pad = NULL, *rows = calloc((size_t)n * (size_t)n, 1);
    unsigned char *row = calloc((size_t)n, 1);
    /* a rank short of memory would leave the others waiting in the allgathers: every rank
     * learns it first, and all of them stop */
    if (comm_init_any(c, !lens || !rows || !row)) {
        RILL_ERROR(RILL_LOG_COMM, "UCX: out of memory for the addresses of %d ranks on %s", n,
                   !lens || !rows || !row ? "this rank" : "another rank");
        s = RILL_ERR_NO_MEMORY;
        goto out;
    }
    if ((s = comm_init_allgather(c, &mine, sizeof(mine), lens)) != RILL_SUCCESS)
        goto out;
    size_t max = 0;
    for (int r = 0; r < n; r++)
        max = lens[r] > max ? (size_t)lens[r] : max;
    all = malloc((size_t)n * (max ? max : 1));
    pad = calloc(1, max ? max : 1);
    if (comm_init_any(c, !all || !pad)) {
        RILL_ERROR(RILL_LOG_COMM, "UCX: out of memory for the addresses of %d ranks on %s", n,
                   !all || !pad ? "this rank" : "another rank");
        s = RILL_ERR_NO_MEMORY;
        goto out;
    }
    if (addr)
        memcpy(pad, addr, addr_len);
    if (max && (s = comm_init_allgather(c, pad, max, all)) != RILL_SUCCESS)
        goto out;
    for (int r = 0; st && r < n; r++) {
        if (!want[r] || !lens[r])
            continue;
        ucp_ep_params_t ep = { .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                               .address = (const ucp_address_t *)(all + (size_t)r * max) };
        ucs_status_t us = ucp_ep_create(st->worker, &ep, &st->eps[r]);
        if (us != UCS_OK) {
            st->eps[r] = NULL;
            RILL_WARN(RILL_LOG_COMM, "UCX: no endpoint to rank %d: %s", r, ucs_status_string(us));
            why = "another node; UCX could not connect the two ranks";
        }
        row[r] = st->eps[r] != NULL;
    }
    /* a pair takes UCX only if both ends reached each other */
    if ((s = comm_init_allgather(c, row, (size_t)n, rows)) != RILL_SUCCESS)
        goto out;
    for (int r = 0; r < n; r++) {
        reach[r] = row[r] && rows[(size_t)r * (size_t)n + (size_t)c->rank];
        if (want[r] && !reach[r] && !why)
            why = lens[r] ? "another node; UCX could not connect the two ranks"
                          : "another node; UCX did not start on that rank";
    }
out:
    if (addr)
        ucp_worker_release_address(st->worker, addr);
    free(lens);
    free(all);
    free(pad);
    free(rows);
    free(row);
    if (s != RILL_SUCCESS && st) {
        ucx_close(st);
        st = NULL;
    }
    if (st)
        RILL_VERBOSE(RILL_LOG_COMM, 1, "UCX %s started (address of %zu bytes, %s)",
                     ucp_get_version_string(), addr_len,
                     st->cuda ? "GPU memory too" : "host memory only");
    *state_p = st;
    *why_p = why;
    return s;
}

static rill_status_t ucx_land_post(void *state, rill_comm_t *c, comm_get_t *g, void *desc,
                                   size_t *len)
{
    ucx_state_t *st = state;
    ucx_desc_t d = { .addr = (uint64_t)(uintptr_t)g->buf };
    g->land = NULL;
    if (g->size > 0) {
        ucp_mem_map_params_t mp = { .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                                  UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                                    .address = g->buf,
                                    .length = g->size };
        ucp_mem_h memh;
        ucs_status_t us = ucp_mem_map(st->ctx, &mp, &memh);
        if (us != UCS_OK) {
            RILL_ERROR(RILL_LOG_COMM, "UCX: registering the landing of %zu bytes from rank %d: %s",
                       g->size, g->src, ucs_status_string(us));
            return RILL_ERR_COMM;
        }
        void *rkey = NULL;
        size_t rkey_len = 0;
        us = ucp_rkey_pack(st->ctx, memh, &rkey, &rkey_len);
        if (us != UCS_OK || rkey_len > COMM_DESC_MAX - sizeof(d)) {
            RILL_ERROR(RILL_LOG_COMM,
                       "UCX: the remote key of a landing of %zu bytes from rank %d: %s (%zu "
                       "bytes, at most %zu travel in a GET)",
                       g->size, g->src, us != UCS_OK ? ucs_status_string(us) : "too large",
                       rkey_len, COMM_DESC_MAX - sizeof(d));
            if (us == UCS_OK)
                ucp_rkey_buffer_release(rkey);
            ucp_mem_unmap(st->ctx, memh);
            return RILL_ERR_COMM;
        }
        d.rkey_len = (uint32_t)rkey_len;
        memcpy((unsigned char *)desc + sizeof(d), rkey, rkey_len);
        ucp_rkey_buffer_release(rkey);
        g->land = memh;
    }
    memcpy(desc, &d, sizeof(d));
    *len = sizeof(d) + d.rkey_len;
    (void)c;
    return RILL_SUCCESS;
}

static void ucx_land_release(void *state, rill_comm_t *c, comm_get_t *g)
{
    ucx_state_t *st = state;
    (void)c;
    if (g->land)
        ucp_mem_unmap(st->ctx, (ucp_mem_h)g->land);
    g->land = NULL;
}

static void ucx_flush_done(void *request, ucs_status_t us, void *user_data)
{
    ucx_put_op_t *op = user_data;
    if (us != UCS_OK)
        RILL_ERROR(RILL_LOG_COMM, "UCX: a put of %zu bytes to rank %d failed: %s", op->put->size,
                   op->put->dst, ucs_status_string(us));
    if (op->rkey)
        ucp_rkey_destroy(op->rkey);
    op->st->inflight--;
    if (request)
        ucp_request_free(request);
    /* the flush completed: the bytes are in the getter's memory, so PUT_DONE may go */
    comm_put_complete(op->comm, op->put, us == UCS_OK ? RILL_SUCCESS : RILL_ERR_COMM);
    free(op);
}

static rill_status_t ucx_put(void *state, rill_comm_t *c, comm_put_t *p, const void *desc,
                             size_t len)
{
    ucx_state_t *st = state;
    ucx_desc_t d;
    ucp_ep_h ep = p->dst >= 0 && p->dst < st->nranks ? st->eps[p->dst] : NULL;
    if (len < sizeof(d) || !ep) {
        RILL_ERROR(RILL_LOG_COMM, "UCX: a put to rank %d %s", p->dst,
                   ep ? "with a malformed landing descriptor" : "which UCX does not reach");
        return RILL_ERR_COMM;
    }
    memcpy(&d, desc, sizeof(d));
    if (d.rkey_len != len - sizeof(d)) {
        RILL_ERROR(RILL_LOG_COMM, "UCX: a put to rank %d with a malformed landing descriptor",
                   p->dst);
        return RILL_ERR_COMM;
    }
    ucx_put_op_t *op = calloc(1, sizeof(*op));
    if (!op)
        return RILL_ERR_NO_MEMORY;
    op->st = st;
    op->comm = c;
    op->put = p;
    if (p->size > 0) {
        ucs_status_t us =
            ucp_ep_rkey_unpack(ep, (const unsigned char *)desc + sizeof(d), &op->rkey);
        if (us != UCS_OK) {
            RILL_ERROR(RILL_LOG_COMM, "UCX: unpacking rank %d's remote key: %s", p->dst,
                       ucs_status_string(us));
            free(op);
            return RILL_ERR_COMM;
        }
        /* no callback: the flush below completes after the put, and reports its error */
        ucp_request_param_t prm = { .op_attr_mask = 0 };
        ucs_status_ptr_t req = ucp_put_nbx(ep, p->exp->buf, p->size, d.addr, op->rkey, &prm);
        if (UCS_PTR_IS_ERR(req)) {
            RILL_ERROR(RILL_LOG_COMM, "UCX: a put of %zu bytes to rank %d: %s", p->size, p->dst,
                       ucs_status_string(UCS_PTR_STATUS(req)));
            ucp_rkey_destroy(op->rkey);
            free(op);
            return RILL_ERR_COMM;
        }
        if (req)
            ucp_request_free(req); /* released now, completed by UCX later */
    }
    /* Ordering: an RMA put's completion is local only (its source may be reused); a flush
     * of the endpoint completes once every operation posted on it before is complete at
     * the target, its bytes in the getter's memory. PUT_DONE leaves after that, so the
     * getter that reads it finds the bytes, whatever path the message takes. */
    st->inflight++;
    ucp_request_param_t fprm = { .op_attr_mask =
                                     UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
                                 .cb.send = ucx_flush_done,
                                 .user_data = op };
    ucs_status_ptr_t f = ucp_ep_flush_nbx(ep, &fprm);
    if (f == NULL)
        ucx_flush_done(NULL, UCS_OK, op);
    else if (UCS_PTR_IS_ERR(f))
        ucx_flush_done(NULL, UCS_PTR_STATUS(f), op);
    return RILL_SUCCESS;
}

static int ucx_progress(void *state, rill_comm_t *c)
{
    ucx_state_t *st = state;
    (void)c;
    return (int)ucp_worker_progress(st->worker);
}

static bool ucx_busy(void *state)
{
    return ((ucx_state_t *)state)->inflight > 0;
}

static void ucx_fini(void *state, rill_comm_t *c)
{
    (void)c;
    if (state)
        ucx_close(state);
}

const comm_transport_ops_t comm_transport_ucx = {
    .name = "ucx",
    .one_sided = true,
    .init = ucx_init,
    .land_post = ucx_land_post,
    .land_release = ucx_land_release,
    .put = ucx_put,
    .progress = ucx_progress,
    .busy = ucx_busy,
    .fini = ucx_fini,
};

/* ------------------------------------------------------------ net.h: workers of other threads */

#define NET_MAX_IDX 16 /* workers (GPUs) per rank */

struct rill_net_worker {
    ucx_state_t *st;
    ucp_worker_h worker;
    int nranks;
    ucp_ep_h *eps; /* nranks x NET_MAX_IDX */
    int inflight;
};

typedef struct net_op {
    rill_net_worker_t *w;
    rill_net_done_fn done;
    void *arg;
    size_t size; /* a receive's: a shorter message is an error too */
} net_op_t;

static ucx_state_t *net_state(const rill_comm_t *c)
{
    for (int i = 0; i < comm_nb_transports; i++)
        if (comm_transports[i] == &comm_transport_ucx && c->tstarted[i])
            return c->tstate[i];
    return NULL;
}

bool rill_comm_net_gpu(const rill_comm_t *comm)
{
    const ucx_state_t *st = comm ? net_state(comm) : NULL;
    return st && st->cuda;
}

rill_status_t rill_net_worker_create(rill_comm_t *comm, rill_net_worker_t **w_p, void *record,
                                     size_t *len)
{
    ucx_state_t *st = net_state(comm);
    if (!st)
        return RILL_ERR_NOT_SUPPORTED;
    rill_net_worker_t *w = calloc(1, sizeof(*w));
    if (!w || !(w->eps = calloc((size_t)st->nranks * NET_MAX_IDX, sizeof(*w->eps)))) {
        free(w);
        return RILL_ERR_NO_MEMORY;
    }
    w->st = st;
    w->nranks = st->nranks;
    /* single: its thread alone uses it (the comm's context is shared: mt_workers_shared) */
    ucp_worker_params_t wp = { .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                               .thread_mode = UCS_THREAD_MODE_SINGLE };
    ucp_address_t *addr = NULL;
    size_t addr_len = 0;
    ucs_status_t us = ucp_worker_create(st->ctx, &wp, &w->worker);
    if (us != UCS_OK)
        w->worker = NULL;
    else if ((us = ucp_worker_get_address(w->worker, &addr, &addr_len)) != UCS_OK)
        addr = NULL;
    rill_status_t s = RILL_SUCCESS;
    if (us != UCS_OK) {
        RILL_ERROR(RILL_LOG_COMM, "UCX: a worker for a GPU manager: %s", ucs_status_string(us));
        s = RILL_ERR_COMM;
    } else if (addr_len > RILL_NET_RECORD_MAX || addr_len > *len) {
        RILL_ERROR(RILL_LOG_COMM,
                   "UCX: a worker's address of %zu bytes exceeds the %zu a record holds", addr_len,
                   *len < RILL_NET_RECORD_MAX ? *len : (size_t)RILL_NET_RECORD_MAX);
        s = RILL_ERR_COMM;
    } else {
        memcpy(record, addr, addr_len);
        *len = addr_len;
    }
    if (addr)
        ucp_worker_release_address(w->worker, addr);
    if (s != RILL_SUCCESS) {
        rill_net_worker_destroy(w);
        return s;
    }
    *w_p = w;
    return RILL_SUCCESS;
}

rill_status_t rill_net_connect(rill_net_worker_t *w, int rank, int idx, const void *record,
                               size_t len)
{
    if (rank < 0 || rank >= w->nranks || idx < 0 || idx >= NET_MAX_IDX || len == 0)
        return RILL_ERR_INVALID_ARG;
    ucp_ep_h *ep = &w->eps[(size_t)rank * NET_MAX_IDX + (size_t)idx];
    ucp_ep_params_t ep_params = { .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                                  .address = (const ucp_address_t *)record };
    ucs_status_t us = ucp_ep_create(w->worker, &ep_params, ep);
    if (us != UCS_OK) {
        *ep = NULL;
        RILL_ERROR(RILL_LOG_COMM, "UCX: connecting to rank %d's worker %d: %s", rank, idx,
                   ucs_status_string(us));
        return RILL_ERR_COMM;
    }
    return RILL_SUCCESS;
}

static void net_complete(net_op_t *op, void *request, ucs_status_t us)
{
    op->w->inflight--;
    if (request)
        ucp_request_free(request);
    op->done(op->arg, us == UCS_OK ? RILL_SUCCESS : RILL_ERR_COMM);
    free(op);
}

static void net_send_cb(void *request, ucs_status_t us, void *user_data)
{
    net_complete(user_data, request, us);
}

static void net_recv_cb(void *request, ucs_status_t us, const ucp_tag_recv_info_t *info,
                        void *user_data)
{
    net_op_t *op = user_data;
    if (us == UCS_OK && info && info->length != op->size) { /* (longer: UCX truncates, fails) */
        RILL_ERROR(RILL_LOG_COMM, "UCX: a receive of %zu bytes got %zu", op->size, info->length);
        us = UCS_ERR_MESSAGE_TRUNCATED;
    }
    net_complete(op, request, us);
}

static net_op_t *net_op_new(rill_net_worker_t *w, rill_net_done_fn done, void *arg)
{
    net_op_t *op = malloc(sizeof(*op));
    if (op) {
        op->w = w;
        op->done = done;
        op->arg = arg;
        op->size = 0;
    }
    return op;
}

rill_status_t rill_net_send(rill_net_worker_t *w, int rank, int idx, const void *src, bool gpu,
                            size_t size, uint64_t tag, rill_net_done_fn done, void *arg)
{
    if (rank < 0 || rank >= w->nranks || idx < 0 || idx >= NET_MAX_IDX)
        return RILL_ERR_INVALID_ARG;
    ucp_ep_h ep = w->eps[(size_t)rank * NET_MAX_IDX + (size_t)idx];
    if (!ep)
        return RILL_ERR_NOT_FOUND;
    net_op_t *op = net_op_new(w, done, arg);
    if (!op)
        return RILL_ERR_NO_MEMORY;
    ucp_request_param_t prm = {
        /* no immediate completion: done always runs from rill_net_progress, after the
         * caller's own bookkeeping of the call */
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                        UCP_OP_ATTR_FIELD_MEMORY_TYPE | UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
        .cb.send = net_send_cb,
        .user_data = op,
        .memory_type = gpu ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST,
    };
    w->inflight++;
    ucs_status_ptr_t req = ucp_tag_send_nbx(ep, src, size, tag, &prm);
    if (UCS_PTR_IS_ERR(req)) {
        w->inflight--;
        free(op);
        RILL_ERROR(RILL_LOG_COMM, "UCX: a send of %zu bytes to rank %d's worker %d: %s", size, rank,
                   idx, ucs_status_string(UCS_PTR_STATUS(req)));
        return RILL_ERR_COMM;
    }
    if (!req) /* completed at once: no callback comes */
        net_complete(op, NULL, UCS_OK);
    return RILL_SUCCESS;
}

rill_status_t rill_net_recv(rill_net_worker_t *w, void *dst, bool gpu, size_t size, uint64_t tag,
                            rill_net_done_fn done, void *arg, void **req_p)
{
    net_op_t *op = net_op_new(w, done, arg);
    if (!op)
        return RILL_ERR_NO_MEMORY;
    op->size = size;
    ucp_request_param_t prm = {
        /* no immediate completion: done always runs from rill_net_progress, after the
         * caller's own bookkeeping of the call */
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                        UCP_OP_ATTR_FIELD_MEMORY_TYPE | UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
        .cb.recv = net_recv_cb,
        .user_data = op,
        .memory_type = gpu ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST,
    };
    w->inflight++;
    *req_p = NULL;
    ucs_status_ptr_t req = ucp_tag_recv_nbx(w->worker, dst, size, tag, UINT64_MAX, &prm);
    if (UCS_PTR_IS_ERR(req)) {
        w->inflight--;
        free(op);
        RILL_ERROR(RILL_LOG_COMM, "UCX: a receive of %zu bytes: %s", size,
                   ucs_status_string(UCS_PTR_STATUS(req)));
        return RILL_ERR_COMM;
    }
    if (!req)
        net_complete(op, NULL, UCS_OK);
    else
        *req_p = req;
    return RILL_SUCCESS;
}

void rill_net_cancel(rill_net_worker_t *w, void *req)
{
    if (req)
        ucp_request_cancel(w->worker, req);
}

int rill_net_progress(rill_net_worker_t *w)
{
    return (int)ucp_worker_progress(w->worker);
}

int rill_net_inflight(const rill_net_worker_t *w)
{
    return w->inflight;
}

void rill_net_worker_destroy(rill_net_worker_t *w)
{
    if (!w)
        return;
    ucx_eps_close(w->worker, w->eps, (size_t)w->nranks * NET_MAX_IDX);
    if (w->worker)
        ucp_worker_destroy(w->worker);
    free(w->eps);
    free(w);
}

#else /* no UCX: the net wire never starts */

bool rill_comm_net_gpu(const rill_comm_t *comm)
{
    (void)comm;
    return false;
}

rill_status_t rill_net_worker_create(rill_comm_t *comm, rill_net_worker_t **w_p, void *record,
                                     size_t *len)
{
    (void)comm;
    (void)w_p;
    (void)record;
    (void)len;
    return RILL_ERR_NOT_SUPPORTED;
}

rill_status_t rill_net_connect(rill_net_worker_t *w, int rank, int idx, const void *record,
                               size_t len)
{
    (void)w;
    (void)rank;
    (void)idx;
    (void)record;
    (void)len;
    return RILL_ERR_NOT_SUPPORTED;
}

rill_status_t rill_net_send(rill_net_worker_t *w, int rank, int idx, const void *src, bool gpu,
                            size_t size, uint64_t tag, rill_net_done_fn done, void *arg)
{
    (void)w;
    (void)rank;
    (void)idx;
    (void)src;
    (void)gpu;
    (void)size;
    (void)tag;
    (void)done;
    (void)arg;
    return RILL_ERR_NOT_SUPPORTED;
}

rill_status_t rill_net_recv(rill_net_worker_t *w, void *dst, bool gpu, size_t size, uint64_t tag,
                            rill_net_done_fn done, void *arg, void **req_p)
{
    (void)w;
    (void)dst;
    (void)gpu;
    (void)size;
    (void)tag;
    (void)done;
    (void)arg;
    (void)req_p;
    return RILL_ERR_NOT_SUPPORTED;
}

void rill_net_cancel(rill_net_worker_t *w, void *req)
{
    (void)w;
    (void)req;
}

int rill_net_progress(rill_net_worker_t *w)
{
    (void)w;
    return 0;
}

int rill_net_inflight(const rill_net_worker_t *w)
{
    (void)w;
    return 0;
}

void rill_net_worker_destroy(rill_net_worker_t *w)
{
    (void)w;
}

#endif
