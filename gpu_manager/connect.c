/* The connection of the ranks' GPUs at rill_init: which peer ranks reach this rank's GPUs
 * directly (CUDA IPC on a node, checked with tokens both ways; the net wire between nodes)
 * or through the host-staged pipeline, and why not; the peers' zones for GPU-direct puts.
 * docs/channels.md describes the protocol. */
#include "proxy_impl.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "manager.h"

#if RILL_HAVE_CUDA

/* What each rank publishes: its node, and per GPU a mailbox (registered memory in the
 * zone, one 8-byte slot per (rank, GPU) of the job) that peers write a token into. */
typedef struct conn_rec {
    int32_t node, ngpus;
    rill_regmem_t mailbox[RILL_CUDA_MAX_GPUS];
} conn_rec_t;

/* per rank: 1 GPU memory reachable both ways by CUDA IPC, 2 over the net wire (another
 * node), 3 the host-staged pipeline (staged.c; its chunks over the net wire when
 * staged_net, else over MPI), 0 not */
static int8_t *direct;
static uint8_t *staged_net;
/* per rank: every GPU's net worker of each side connected to every GPU of the other (port
 * channels between nodes: proxy_net.c) */
static uint8_t *net_workers;
static char (*why)[96]; /* per rank: why not */
static int ndirect;
/* per rank: its GPUs' zones as registered memory (the mailbox descriptors name the whole
 * allocation of each zone: base + offset), kept for the GPU-direct transfers of tiles */
static conn_rec_t *zones;
static uintptr_t mailbox_block[RILL_CUDA_MAX_GPUS];

static uint64_t token(int from_rank, int from_gpu, int to_rank, int to_gpu)
{
    return 0x52494c4c00000000ull ^ ((uint64_t)from_rank << 20) ^ ((uint64_t)from_gpu << 16) ^
           ((uint64_t)to_rank << 4) ^ (uint64_t)to_gpu;
}

typedef struct conn_args {
    rill_context_t *ctx;
    const conn_rec_t *recs;
    size_t mbox_bytes;
    rill_regmem_t *mine;
    uint8_t *ok; /* per rank: set to 1 when every write (or read check) of that peer worked */
    char err[256];
} conn_args_t;

static rill_status_t do_mailbox(gm_proxy_t *p, void *arg)
{
    conn_args_t *a = arg;
    uintptr_t addr;
    if (rill_zone_alloc(p->res->zone, a->mbox_bytes, &addr) != RILL_SUCCESS) {
        snprintf(a->err, sizeof(a->err), "GPU %d's zone has no room for a %zu-byte mailbox",
                 p->ordinal, a->mbox_bytes);
        return RILL_ERR_NO_MEMORY;
    }
    mailbox_block[p->gpu] = addr;
    cudaError_t e = cudaMemsetAsync((void *)addr, 0, a->mbox_bytes, p->setup);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(p->setup);
    if (e != cudaSuccess) {
        snprintf(a->err, sizeof(a->err), "cudaMemset of a mailbox: %s", cudaGetErrorString(e));
        return RILL_ERR_DEVICE;
    }
    return rill_regmem_describe((void *)addr, a->mbox_bytes, p->ordinal, a->ctx->rank,
                                (uint64_t)rill_comm_node_id(a->ctx->comm), &a->mine[p->gpu], a->err,
                                sizeof(a->err));
}

/* Write a token into every GPU of every other rank of the node, through its IPC mapping
 * (setup: synchronous copies are fine here). ok[s] stays 1 only if every write to rank s
 * worked; why[s] says what failed. */
static rill_status_t do_write_tokens(gm_proxy_t *p, void *arg)
{
    conn_args_t *a = arg;
    rill_context_t *ctx = a->ctx;
    const conn_rec_t *me = &a->recs[ctx->rank];
    for (int s = 0; s < ctx->nranks; s++) {
        const conn_rec_t *r = &a->recs[s];
        if (s == ctx->rank || r->node != me->node || !a->ok[s])
            continue;
        for (int h = 0; h < r->ngpus; h++) {
            void *mbox = NULL;
            char err[256];
            if (rill_regmem_map(&r->mailbox[h], &mbox, err, sizeof(err)) != RILL_SUCCESS) {
                a->ok[s] = 0;
                snprintf(why[s], sizeof(why[s]), "%.95s", err);
                break;
            }
            /* GPU to GPU, as a port channel's put: the token goes to this GPU's own
             * mailbox first (the slot peers never write: this rank's own) */
            uint64_t v = token(ctx->rank, p->gpu, s, h);
            uint64_t *own =
                (uint64_t *)mailbox_block[p->gpu] + (size_t)ctx->rank * RILL_CUDA_MAX_GPUS + p->gpu;
            uint64_t *slot = (uint64_t *)mbox + (size_t)ctx->rank * RILL_CUDA_MAX_GPUS + p->gpu;
            cudaError_t e = cudaMemcpyAsync(own, &v, sizeof(v), cudaMemcpyHostToDevice, p->setup);
            if (e == cudaSuccess)
                e = cudaMemcpyAsync(slot, own, sizeof(v), cudaMemcpyDeviceToDevice, p->setup);
            if (e == cudaSuccess)
                e = cudaStreamSynchronize(p->setup);
            if (e != cudaSuccess) {
                a->ok[s] = 0;
                snprintf(why[s], sizeof(why[s]), "a write into its GPU %d failed: %.50s", h,
                         cudaGetErrorString(e));
                cudaGetLastError();
                break;
            }
        }
    }
    return RILL_SUCCESS;
}

/* Check the tokens the node's other ranks wrote into this GPU's mailbox. */
static rill_status_t do_check_tokens(gm_proxy_t *p, void *arg)
{
    conn_args_t *a = arg;
    rill_context_t *ctx = a->ctx;
    size_t n = a->mbox_bytes / sizeof(uint64_t);
    uint64_t *seen = malloc(a->mbox_bytes);
    if (!seen)
        return RILL_ERR_NO_MEMORY;
    cudaError_t e = cudaMemcpyAsync(seen, (void *)mailbox_block[p->gpu], a->mbox_bytes,
                                    cudaMemcpyDeviceToHost, p->setup);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(p->setup);
    for (int s = 0; s < ctx->nranks; s++) {
        const conn_rec_t *r = &a->recs[s];
        if (s == ctx->rank || r->node != a->recs[ctx->rank].node)
            continue;
        for (int g = 0; g < r->ngpus; g++) {
            size_t i = (size_t)s * RILL_CUDA_MAX_GPUS + (size_t)g;
            if (a->ok[s] &&
                (e != cudaSuccess || i >= n || seen[i] != token(s, g, ctx->rank, p->gpu))) {
                a->ok[s] = 0; /* (a peer not tried keeps its reason) */
                snprintf(why[s], sizeof(why[s]),
                         "its GPU %d's token did not arrive in GPU %d's memory", g, p->ordinal);
            }
        }
    }
    free(seen);
    return RILL_SUCCESS;
}

static rill_status_t do_mailbox_free(gm_proxy_t *p, void *arg)
{
    (void)arg;
    if (mailbox_block[p->gpu])
        rill_zone_free(p->res->zone, mailbox_block[p->gpu]);
    mailbox_block[p->gpu] = 0;
    return RILL_SUCCESS;
}

/* Between nodes: each GPU's worker of the net wire and its record (its address) for the
 * peers (net_args_t.mine: this rank's GPUs, RILL_NET_RECORD_MAX bytes each). */
typedef struct net_args {
    rill_context_t *ctx;
    unsigned char *mine;      /* RILL_CUDA_MAX_GPUS records of max bytes */
    uint32_t *mine_len;       /* their lengths */
    const unsigned char *all; /* every rank's: a header of lengths, then the records */
    size_t max, block;
    const conn_rec_t *recs;
    uint8_t *ok; /* per rank: every GPU of ours connected to every GPU of that rank */
} net_args_t;

static rill_status_t do_net_open(gm_proxy_t *p, void *arg)
{
    net_args_t *a = arg;
    size_t len = RILL_NET_RECORD_MAX;
    rill_status_t s =
        rill_net_worker_create(a->ctx->comm, &p->net, a->mine + (size_t)p->gpu * a->max, &len);
    if (s == RILL_SUCCESS)
        a->mine_len[p->gpu] = (uint32_t)len;
    return s;
}

static rill_status_t do_net_connect(gm_proxy_t *p, void *arg)
{
    net_args_t *a = arg;
    rill_context_t *ctx = a->ctx;
    for (int r = 0; r < ctx->nranks; r++) {
        if (r == ctx->rank || a->recs[r].node == a->recs[ctx->rank].node || !a->ok[r])
            continue;
        const unsigned char *blk = a->all + (size_t)r * a->block;
        uint32_t lens[RILL_CUDA_MAX_GPUS];
        memcpy(lens, blk, sizeof(lens));
        for (int h = 0; h < a->recs[r].ngpus && a->ok[r]; h++) {
            const unsigned char *rec = blk + sizeof(lens) + (size_t)h * a->max;
            if (lens[h] == 0 || lens[h] > a->max ||
                rill_net_connect(p->net, r, h, rec, lens[h]) != RILL_SUCCESS) {
                a->ok[r] = 0;
                snprintf(why[r], sizeof(why[r]), "on another node; %s",
                         lens[h] == 0 ? "the net wire does not reach its GPU memory"
                                      : "the net wire could not connect to its GPU");
            }
        }
    }
    /* requests of port channels from other nodes may come from now on */
    return gm_pcnet_start(p);
}

/* Whether UCX may use an RDMA transport here (comm_net_gpu auto): UCX_TLS, when set, names
 * one (or excludes some, "^...", or says "all"), and the machine has an RDMA device. */
static bool rdma_usable(void)
{
    const char *tls = getenv("UCX_TLS");
    if (tls && *tls && tls[0] != '^') {
        char buf[256];
        snprintf(buf, sizeof(buf), "%s", tls);
        bool any = false;
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && !any;
             t = strtok_r(NULL, ",", &save))
            any = !strcmp(t, "all") || !strncmp(t, "rc", 2) || !strncmp(t, "dc", 2) ||
                  !strncmp(t, "ud", 2) || !strncmp(t, "ib", 2) || !strncmp(t, "gga", 3);
        if (!any)
            return false;
    }
    DIR *d = opendir("/sys/class/infiniband");
    bool found = false;
    for (struct dirent *e; d && !found && (e = readdir(d));)
        found = e->d_name[0] != '.';
    if (d)
        closedir(d);
    return found;
}

/* Peers on other nodes: GPU direct over the net wire (direct = 2) when both ends opened
 * a worker on every GPU and connected to every GPU of the other. Every rank makes the same
 * collectives (other_node and allowed are the same everywhere), whatever happens here. */
static rill_status_t net_connect(rill_context_t *ctx, const conn_rec_t *recs, int ngpus,
                                 uint8_t *ok, uint8_t *all_ok)
{
    int n = ctx->nranks;
    net_args_t a = { .ctx = ctx, .recs = recs, .ok = ok };
    /* GPU direct or the pipeline (comm_net_gpu): auto is direct only when every rank may
     * use RDMA */
    int mode = rill_comm_net_gpu_mode();
    uint64_t rdma = mode == 0 ? rdma_usable() : 0;
    if (mode == 0 &&
        rill_comm_allreduce_u64(ctx->comm, &rdma, &rdma, 1, RILL_COMM_MIN) != RILL_SUCCESS)
        rdma = 0;
    bool staged = mode == 2 || (mode == 0 && !rdma);
    uint32_t mine_len[RILL_CUDA_MAX_GPUS] = { 0 };
    a.mine_len = mine_len;
    a.max = RILL_NET_RECORD_MAX;
    a.mine = calloc(RILL_CUDA_MAX_GPUS, a.max);
    rill_status_t s = RILL_SUCCESS;
    bool can = a.mine && ngpus > 0 && rill_comm_net_gpu(ctx->comm);
    for (int g = 0; can && g < ngpus; g++)
        if (gm_proxy_call(gm_proxies[g], do_net_open, &a, "channel setup (net)") != RILL_SUCCESS)
            can = false; /* (said) */
    if (!can)
        memset(mine_len, 0, sizeof(mine_len));
    /* records of the largest size any rank has, then every rank's */
    uint64_t big = 0;
    for (int g = 0; g < RILL_CUDA_MAX_GPUS; g++)
        big = mine_len[g] > big ? mine_len[g] : big;
    if ((s = rill_comm_allreduce_u64(ctx->comm, &big, &big, 1, RILL_COMM_MAX)) != RILL_SUCCESS)
        goto out;
    size_t block = sizeof(mine_len) + RILL_CUDA_MAX_GPUS * (size_t)big;
    unsigned char *mine = calloc(1, block), *all = calloc((size_t)n, block);
    uint64_t short_of_memory = !mine || !all;
    if ((s = rill_comm_allreduce_u64(ctx->comm, &short_of_memory, &short_of_memory, 1,
                                     RILL_COMM_MAX)) != RILL_SUCCESS ||
        short_of_memory) {
        free(mine);
        free(all);
        s = s != RILL_SUCCESS ? s : RILL_ERR_NO_MEMORY;
        goto out;
    }
    memcpy(mine, mine_len, sizeof(mine_len));
    for (int g = 0; g < RILL_CUDA_MAX_GPUS && big; g++)
        memcpy(mine + sizeof(mine_len) + (size_t)g * big, a.mine + (size_t)g * a.max, big);
    if ((s = rill_comm_allgather(ctx->comm, mine, block, all)) == RILL_SUCCESS) {
        a.all = all;
        a.max = (size_t)big;
        a.block = block;
        for (int r = 0; r < n; r++) {
            ok[r] = 0;
            if (r == ctx->rank || recs[r].node == recs[ctx->rank].node)
                continue;
            uint32_t lens[RILL_CUDA_MAX_GPUS];
            memcpy(lens, all + (size_t)r * block, sizeof(lens));
            ok[r] = can && recs[r].ngpus > 0 && lens[0] > 0;
            if (!ok[r])
                snprintf(why[r], sizeof(why[r]), "on another node; %s",
                         !can ? "the net wire does not move this rank's GPU memory"
                              : "the net wire does not move that rank's GPU memory");
        }
        for (int g = 0; can && g < ngpus; g++)
            gm_proxy_call(gm_proxies[g], do_net_connect, &a, "channel setup (net)");
        /* ok[r]: we connected to r; r must have connected to us */
        if ((s = rill_comm_allgather(ctx->comm, ok, (size_t)n, all_ok)) == RILL_SUCCESS)
            for (int r = 0; r < n; r++) {
                if (r == ctx->rank || recs[r].node == recs[ctx->rank].node)
                    continue;
                if (ok[r] && all_ok[(size_t)r * (size_t)n + (size_t)ctx->rank]) {
                    net_workers[r] = 1;
                    direct[r] = !staged ? 2 : rill_comm_gpu_staged_pipeline() ? 3 : 0;
                    staged_net[r] = staged;
                    if (staged)
                        snprintf(why[r], sizeof(why[r]), "on another node; comm_net_gpu %s%s",
                                 mode == 2 ? "staged" : "auto, and UCX has no RDMA transport",
                                 direct[r] ? "" : "; comm_gpu_staged tile");
                } else if (ok[r])
                    snprintf(why[r], sizeof(why[r]),
                             "on another node; rank %d could not connect to this rank's GPUs", r);
                RILL_VERBOSE(RILL_LOG_GPU, 1, "rank %d -> rank %d: %s%s", ctx->rank, r,
                             direct[r] == 2   ? "GPU direct over the net wire (another node)"
                             : direct[r] == 3 ? "host-staged pipeline over the net wire: "
                                              : "host-staged: ",
                             direct[r] == 2 ? "" : why[r]);
            }
    }
    free(mine);
    free(all);
out:
    free(a.mine);
    return s;
}

rill_status_t rill_gpu_channels_connect(rill_context_t *ctx)
{
    int n = ctx->nranks;
    rill_gpu_channels_forget();
    direct = calloc((size_t)n, sizeof(*direct));
    staged_net = calloc((size_t)n, sizeof(*staged_net));
    net_workers = calloc((size_t)n, sizeof(*net_workers));
    why = calloc((size_t)n, sizeof(*why));
    conn_rec_t *recs = calloc((size_t)n, sizeof(*recs));
    uint8_t *ok = malloc((size_t)n);
    uint8_t *all_ok = malloc((size_t)n * (size_t)n);
    rill_status_t s = RILL_SUCCESS;
    /* a rank out of memory here would leave the others waiting in the allgathers below:
     * every rank learns it first, and all stop */
    bool mine_short = !direct || !staged_net || !net_workers || !why || !recs || !ok || !all_ok;
    uint64_t short_of_memory = mine_short;
    if (n > 1 && (s = rill_comm_allreduce_u64(ctx->comm, &short_of_memory, &short_of_memory, 1,
                                              RILL_COMM_MAX)) != RILL_SUCCESS)
        goto out;
    if (short_of_memory) {
        RILL_ERROR(RILL_LOG_GPU, "channel setup: out of host memory on %s",
                   mine_short ? "this rank" : "another rank");
        s = RILL_ERR_NO_MEMORY;
        goto out;
    }
    ndirect = n;
    direct[ctx->rank] = ctx->ngpus > 0;
    if (n == 1)
        goto out;
    conn_rec_t mine = { .node = rill_comm_node_id(ctx->comm), .ngpus = ctx->ngpus };
    conn_args_t a = {
        .ctx = ctx, .mbox_bytes = (size_t)n * RILL_CUDA_MAX_GPUS * 8, .mine = mine.mailbox, .ok = ok
    };
    rill_status_t local = RILL_SUCCESS;
    for (int g = 0; g < ctx->ngpus && local == RILL_SUCCESS; g++)
        if ((local = gm_proxy_call(gm_proxies[g], do_mailbox, &a, "channel setup")) != RILL_SUCCESS)
            RILL_WARN(RILL_LOG_GPU, "channel setup: %s: no GPU-direct peers", a.err);
    if (local != RILL_SUCCESS)
        mine.ngpus = 0; /* take part in the collectives, reach no one */
    /* every rank calls the same collectives in the same order, whatever happened locally:
     * nothing here can deadlock on a failed GPU */
    if ((s = rill_comm_allgather(ctx->comm, &mine, sizeof(mine), recs)) != RILL_SUCCESS)
        goto out;
    a.recs = recs;
    bool allowed = rill_comm_gpu_direct_allowed();
    for (int r = 0; r < n; r++) {
        ok[r] = allowed && r != ctx->rank && recs[r].node == mine.node && recs[r].ngpus > 0 &&
                mine.ngpus > 0;
        if (r != ctx->rank && !ok[r])
            snprintf(why[r], sizeof(why[r]), "%s",
                     !allowed                    ? "comm_gpu_direct = off"
                     : recs[r].node != mine.node ? "on another node"
                                                 : "no GPU on one side (or its setup failed)");
    }
    for (int g = 0; g < mine.ngpus; g++)
        gm_proxy_call(gm_proxies[g], do_write_tokens, &a, "channel setup");
    if ((s = rill_comm_barrier(ctx->comm)) != RILL_SUCCESS)
        goto out;
    for (int g = 0; g < mine.ngpus; g++)
        gm_proxy_call(gm_proxies[g], do_check_tokens, &a, "channel setup");
    /* ok[s]: my writes to s worked and s's writes to me arrived; s must agree */
    if ((s = rill_comm_allgather(ctx->comm, ok, (size_t)n, all_ok)) != RILL_SUCCESS)
        goto out;
    for (int r = 0; r < n; r++) {
        if (r == ctx->rank)
            continue;
        direct[r] = ok[r] && all_ok[(size_t)r * (size_t)n + (size_t)ctx->rank];
        if (ok[r] && !direct[r])
            snprintf(why[r], sizeof(why[r]), "rank %d could not reach this rank's GPU memory", r);
        RILL_VERBOSE(RILL_LOG_GPU, 1, "rank %d -> rank %d: %s%s", ctx->rank, r,
                     direct[r] ? "GPU direct (CUDA IPC checked both ways)" : "host-staged: ",
                     direct[r] ? "" : why[r]);
    }
    /* between nodes: over the net wire, when it moves GPU memory */
    bool other_node = false;
    for (int r = 0; r < n; r++)
        other_node |= recs[r].node != mine.node;
    if (other_node && allowed &&
        (s = net_connect(ctx, recs, mine.ngpus, ok, all_ok)) != RILL_SUCCESS)
        goto out;
    /* the rest, when both have GPUs and MPI is their wire: the host-staged pipeline (the
     * same on both ranks: recs, the wires and the parameter are) */
    bool pipeline = rill_comm_gpu_staged_pipeline() &&
                    rill_comm_stream_tag_max(ctx->comm) >= gm_staged_tag_max();
    for (int r = 0; r < n; r++) {
        const char *wire = rill_context_wire(ctx, r, NULL);
        if (r == ctx->rank || direct[r] || !pipeline || recs[r].ngpus <= 0 || mine.ngpus <= 0 ||
            !wire || strcmp(wire, "mpi") != 0)
            continue;
        direct[r] = 3;
        RILL_VERBOSE(RILL_LOG_GPU, 1,
                     "rank %d -> rank %d: GPU to GPU through the host-staged pipeline (%s)",
                     ctx->rank, r, why[r]);
    }
    for (int g = 0; g < ctx->ngpus; g++)
        gm_proxy_call(gm_proxies[g], do_mailbox_free, NULL, "channel setup");
    zones = recs; /* the mailboxes are gone; their allocations (the zones) stay */
    recs = NULL;
out:
    free(recs);
    free(ok);
    free(all_ok);
    return s;
}

void rill_gpu_channels_forget(void)
{
    free(direct);
    free(staged_net);
    free(net_workers);
    free(why);
    free(zones);
    direct = NULL;
    staged_net = NULL;
    net_workers = NULL;
    why = NULL;
    zones = NULL;
    ndirect = 0;
}

uint64_t gm_zone_offset(const rill_context_t *ctx, int gpu, uintptr_t addr)
{
    const rill_regmem_t *r = zones ? &zones[ctx->rank].mailbox[gpu] : NULL;
    return r && r->magic == RILL_REGMEM_MAGIC ? (uint64_t)(addr - (uintptr_t)r->base) : UINT64_MAX;
}

bool gm_peer_net(int rank)
{
    return direct && rank >= 0 && rank < ndirect && direct[rank] >= 2;
}

bool gm_peer_net_workers(int rank)
{
    return net_workers && rank >= 0 && rank < ndirect && net_workers[rank];
}

int gm_peer_gpu_index(int rank, int ordinal)
{
    if (!zones || rank < 0 || rank >= ndirect)
        return -1;
    for (int h = 0; h < zones[rank].ngpus && h < RILL_CUDA_MAX_GPUS; h++)
        if (zones[rank].mailbox[h].magic == RILL_REGMEM_MAGIC &&
            zones[rank].mailbox[h].ordinal == ordinal)
            return h;
    return -1;
}

bool gm_peer_staged(int rank)
{
    return direct && rank >= 0 && rank < ndirect && direct[rank] == 3;
}

bool gm_peer_staged_net(int rank)
{
    return gm_peer_staged(rank) && staged_net[rank];
}

rill_status_t gm_peer_zone_map(int rank, int gpu, uint64_t off, size_t size, void **ptr, char *err,
                               size_t len)
{
    if (!zones || rank < 0 || rank >= ndirect || direct[rank] != 1 || gpu < 0 ||
        gpu >= zones[rank].ngpus) {
        snprintf(err, len, "rank %d's GPU %d is not reachable GPU to GPU from this rank", rank,
                 gpu);
        return RILL_ERR_INVALID_ARG;
    }
    rill_regmem_t r = zones[rank].mailbox[gpu];
    if (off > r.base_size || size > r.base_size - off) {
        snprintf(err, len,
                 "bytes [%llu, +%zu) are outside rank %d's GPU %d memory zone (%llu bytes)",
                 (unsigned long long)off, size, rank, gpu, (unsigned long long)r.base_size);
        return RILL_ERR_INVALID_ARG;
    }
    r.offset = off;
    r.size = size;
    return rill_regmem_map(&r, ptr, err, len);
}

int rill_context_gpu_direct(const rill_context_t *ctx, int rank, const char **why_p)
{
    if (!ctx || rank < 0 || rank >= ndirect || !direct) {
        if (why_p)
            *why_p = "no such rank, or the GPUs were not connected";
        return 0;
    }
    if (why_p) /* (the pipeline: why the GPUs do not reach each other) */
        *why_p = direct[rank] == 1 || direct[rank] == 2 ? "" : why[rank];
    return direct[rank];
}

int rill_port_channel_reach(const rill_context_t *ctx, int rank, const char **why_p)
{
    const char *why = NULL;
    int d = ctx && rank == ctx->rank ? (ctx->ngpus > 0) : rill_context_gpu_direct(ctx, rank, &why);
    int reach = d == 1 ? 1 : gm_peer_net_workers(rank) ? 2 : 0;
    if (why_p)
        *why_p = reach                      ? ""
                 : ctx && rank == ctx->rank ? "this rank has no GPU"
                 : d == 2 || d == 3 || !why ? "the net wire does not connect the two ranks' GPUs"
                                            : why;
    return reach;
}

#else /* no CUDA: nothing to connect */

rill_status_t rill_gpu_channels_connect(rill_context_t *ctx)
{
    (void)ctx;
    return RILL_SUCCESS;
}

void rill_gpu_channels_forget(void) {}

int rill_context_gpu_direct(const rill_context_t *ctx, int rank, const char **why_p)
{
    (void)ctx;
    (void)rank;
    if (why_p)
        *why_p = "Rill was built without CUDA";
    return 0;
}

int rill_port_channel_reach(const rill_context_t *ctx, int rank, const char **why_p)
{
    return rill_context_gpu_direct(ctx, rank, why_p);
}
#endif
