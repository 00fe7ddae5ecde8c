/* The UCX wire between nodes (UCP API): the getter registers its landing and sends the
 * region's remote key in its GET; the exposer puts the bytes with an RMA put, flushes the
 * endpoint, and only then tells the getter (PUT_DONE, over MPI) that they are there. UCX
 * picks the transport below (InfiniBand or RoCE through rdma-core, TCP sockets, shared
 * memory): UCX_TLS narrows it, as the tests do (UCX_TLS=tcp,self). The comm thread drives
 * the worker; nothing else of Rill touches it. */
#include "transport.h"

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

static void ucx_close(ucx_state_t *st)
{
    if (st->eps) {
        for (int r = 0; r < st->nranks; r++) {
            if (!st->eps[r])
                continue;
            /* force: the traffic is over (the comm thread passed the final barrier), and a
             * flushing close would wait for a peer that may have closed already */
            ucp_request_param_t prm = { .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                                        .flags = UCP_EP_CLOSE_FLAG_FORCE };
            ucs_status_ptr_t req = ucp_ep_close_nbx(st->eps[r], &prm);
            if (UCS_PTR_IS_PTR(req)) {
                while (ucp_request_check_status(req) == UCS_INPROGRESS)
                    ucp_worker_progress(st->worker);
                ucp_request_free(req);
            }
        }
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
    ucp_params_t p = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS,
        .features = UCP_FEATURE_RMA,
        .estimated_num_eps = (size_t)nranks,
    };
    us = ucp_init(&p, cfg, &st->ctx);
    ucp_config_release(cfg);
    if (us != UCS_OK) {
        st->ctx = NULL;
        RILL_WARN(RILL_LOG_COMM, "UCX: ucp_init failed: %s", ucs_status_string(us));
        *why = "another node; UCX did not start on a rank (ucp_init failed)";
        goto err;
    }
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
    if (!lens || !rows || !row) {
        RILL_ERROR(RILL_LOG_COMM, "UCX: out of memory for the addresses of %d ranks", n);
        s = RILL_ERR_NO_MEMORY; /* on one rank only: the others would wait; the job ends */
        goto out;
    }
    if ((s = comm_init_allgather(c, &mine, sizeof(mine), lens)) != RILL_SUCCESS)
        goto out;
    size_t max = 0;
    for (int r = 0; r < n; r++)
        max = lens[r] > max ? (size_t)lens[r] : max;
    all = malloc((size_t)n * (max ? max : 1));
    pad = calloc(1, max ? max : 1);
    if (!all || !pad) {
        RILL_ERROR(RILL_LOG_COMM, "UCX: out of memory for the addresses of %d ranks", n);
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
        RILL_VERBOSE(RILL_LOG_COMM, 1, "UCX %s started (address of %zu bytes)",
                     ucp_get_version_string(), addr_len);
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

#endif
