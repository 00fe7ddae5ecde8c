/* PTG's activations between ranks (docs/ptg.md): the outputs of a completing task to tasks
 * of other ranks leave as messages on the remote-dependency engine's channel
 * (remote_dep.h), one per tile and rank with the targets named by class and parameters;
 * the receiving rank delivers the tile to each target. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "ptg_internal.h"
#include "remote_dep.h"
#include "scheduler.h"

/* ------------------------------------------------------------ messages */

/** An activation's header, on the remote-dependency engine's channel (remote_dep.h),
 * which carries the tile (inside, or exposed for the receiver's GET) and its priority (the
 * targets' highest): the sender (class from_cls, its flow from_flow, then its parameters:
 * int64_t, list order) and ntargets tasks of one rank, each a ptg_target_t and its class's
 * parameters after this. The receiver checks the sender against each target's input
 * (ptg_deliver_local). A tile that goes to several tasks of a rank travels once. */
typedef struct ptg_hdr {
    uint32_t tp_id;
    uint32_t prog_id; /* the program's identity (prog_identity): taskpools of two programs
                       * created in different orders on the ranks are told apart */
    uint32_t ntargets;
    int32_t from_cls, from_flow;
} ptg_hdr_t;

/* A program's identity: a hash of its name and of its classes' names and shapes (FNV-1a).
 * Two programs of the same shape and name (one .rill file with other globals) are one. */
static uint32_t prog_identity(const rill_ptg_program_t *prog)
{
    uint32_t h = 2166136261u;
    for (const char *s = prog->name; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    for (int c = 0; c < prog->nclasses; c++) {
        for (const char *s = prog->classes[c].name; *s; s++)
            h = (h ^ (unsigned char)*s) * 16777619u;
        h = (h ^ (uint32_t)prog->classes[c].nparams) * 16777619u;
        h = (h ^ (uint32_t)prog->classes[c].nflows) * 16777619u;
    }
    return h;
}

typedef struct ptg_target {
    int32_t cls, flow;
} ptg_target_t;

/* the sender's parameters after the header */
static size_t from_bytes(const ptg_tp_t *tp, int cls)
{
    return sizeof(int64_t) * (size_t)tp->prog->classes[cls].nparams;
}

/* the targets of one message from a task of class cls take at most this many bytes */
#define PTG_TARGETS_MAX_BYTES(tp, cls)                                                             \
    (rill_rdep_header_max() - sizeof(ptg_hdr_t) - from_bytes(tp, cls))

static int msg_tag = -1; /* the engine's channel of PTG's activations */
/* live taskpools of this process, and activations that arrived before their taskpool was
 * created here (a faster rank): both under live_lock */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static ptg_tp_t *live;
typedef struct early_msg {
    int src;
    size_t len;
    struct early_msg *next;
    max_align_t msg[];
} early_msg_t;
static early_msg_t *early;

/* ------------------------------------------------------------ activations */

static size_t target_bytes(const ptg_tp_t *tp, int cls)
{
    return sizeof(ptg_target_t) + sizeof(int64_t) * (size_t)tp->prog->classes[cls].nparams;
}

/* The header of one activation from instance from for targets t[0 .. n-1] (same tile, from
 * its flow t[0]->from_flow), malloc'd into *hdr (its length in *len); the highest of their
 * priorities into *prio. */
static rill_status_t message_header(ptg_tp_t *tp, const ptg_inst_t *from,
                                    const ptg_remote_t *const *t, int n, void **hdr, size_t *len,
                                    int32_t *prio)
{
    const rill_ptg_program_t *prog = tp->prog;
    size_t tbytes = from_bytes(tp, from->cls);
    for (int k = 0; k < n; k++)
        tbytes += target_bytes(tp, t[k]->cls);
    char *m = malloc(sizeof(ptg_hdr_t) + tbytes);
    if (!m)
        return RILL_ERR_NO_MEMORY;
    ptg_hdr_t h = { .tp_id = tp->super.id,
                    .prog_id = tp->prog_id,
                    .ntargets = (uint32_t)n,
                    .from_cls = from->cls,
                    .from_flow = t[0]->from_flow };
    memcpy(m, &h, sizeof(h));
    char *p = m + sizeof(h);
    memcpy(p, from->key, from_bytes(tp, from->cls));
    p += from_bytes(tp, from->cls);
    for (int k = 0; k < n; k++) {
        ptg_target_t tg = { .cls = t[k]->cls, .flow = t[k]->flow };
        size_t pb = sizeof(int64_t) * (size_t)prog->classes[t[k]->cls].nparams;
        memcpy(p, &tg, sizeof(tg));
        memcpy(p + sizeof(tg), t[k]->params, pb);
        p += sizeof(tg) + pb;
        *prio = t[k]->prio > *prio ? t[k]->prio : *prio;
    }
    *hdr = m;
    *len = sizeof(ptg_hdr_t) + tbytes;
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ GPU to GPU
 *
 * A tile that a GPU wrote and a task of another rank reads moves GPU to GPU when the two
 * ranks' GPUs reach each other (rill_rdep_route): the activation carries no bytes, the
 * receiver's GPU asks for them and the sender's GPU puts its copy into the landing (the
 * engine's request path). The send is a task of PTG's own (ptg_gsend_t) alive until the
 * put ended; the local tasks that write the tile wait for it (its gate, ptg.c), since the put reads
 * the producer's copy. The receive (ptg_grecv_t) lands the tile in a PTG tile (ptg_buf_t)
 * whose GPU copy is the new version, then delivers it to its targets. */

/* A send of a tile GPU to GPU: one activation message (hdr, its targets) for it. */
typedef struct ptg_gsend {
    rill_task_t super; /* first: the core's view */
    rill_rdep_t x;
    ptg_buf_t *buf;   /* a reference of PTG's tile sent, or NULL */
    ptg_gate_t *gate; /* its datum's gate, taken (NULL: none could be made) */
    void *hdr;
    size_t len;
} ptg_gsend_t;

/* the versions PTG moves GPU to GPU, numbered (their names in traces and the watchdog) */
static atomic_uint gpu_moves;

static rill_hook_status_t gsend_hook(rill_worker_t *w, rill_task_t *task)
{
    (void)w;
    ptg_gsend_t *gs = (ptg_gsend_t *)task;
    ptg_tp_t *tp = (ptg_tp_t *)task->tp;
    int dst = gs->x.peer;
    atomic_fetch_add_explicit(&tp->sent, 1, memory_order_relaxed); /* before it leaves */
    rill_status_t s = rill_rdep_channel_send_gpu(tp->super.ctx, msg_tag, &gs->x, gs->hdr, gs->len,
                                                 task->prio.priority);
    if (s == RILL_SUCCESS)
        return RILL_HOOK_ASYNC; /* (gs may be gone already: the engine completes it) */
    atomic_fetch_sub_explicit(&tp->sent, 1, memory_order_relaxed);
    rill_taskpool_fail(&tp->super, s, "PTG: cannot send a tile to rank %d GPU to GPU: %s", dst,
                       rill_status_string(s));
    return RILL_HOOK_ERROR;
}

/* The put ended (manager thread), or the send failed: the writers may go, the tile too. */
static void gsend_complete(rill_worker_t *w, rill_task_t *task, rill_hook_status_t status)
{
    (void)status; /* (a failure failed the run, saying why) */
    ptg_gsend_t *gs = (ptg_gsend_t *)task;
    ptg_tp_t *tp = (ptg_tp_t *)task->tp;
    ptg_gate_give(tp, gs->gate);
    if (gs->buf && w)
        ptg_buf_unref(gs->buf);
    else if (gs->buf) /* a manager must not free a datum with a copy on its GPU */
        ptg_chore_push(tp, &gs->buf, 1);
    free(gs->hdr);
    free(gs);
    atomic_fetch_sub_explicit(&tp->gsends, 1, memory_order_relaxed);
    rill_taskpool_pending_sub(&tp->super, 1);
}

/* Send r's tile GPU to GPU with the activation hdr (len bytes, taken), for the targets'
 * highest priority prio; buf: a reference of PTG's tile (taken). */
static void gsend_start(ptg_tp_t *tp, const rill_ptg_out_t *out, const ptg_remote_t *r, void *hdr,
                        size_t len, int32_t prio, ptg_buf_t *buf)
{
    ptg_gsend_t *gs = calloc(1, sizeof(*gs));
    if (!gs) {
        free(hdr);
        ptg_buf_unref(buf); /* (never the last: the completing task holds one) */
        rill_taskpool_fail(&tp->super, RILL_ERR_NO_MEMORY, "out of memory (a PTG send)");
        return;
    }
    gs->super.tc = &tp->gsend_tc;
    gs->super.tp = &tp->super;
    gs->super.device = -1;
    gs->super.prio.priority = prio;
    gs->buf = buf;
    gs->hdr = hdr;
    gs->len = len;
    gs->gate = ptg_gate_take(tp, r->dat); /* before the put can start */
    rill_rdep_send_init(&gs->x, &gs->super, r->dat, r->dst,
                        atomic_fetch_add_explicit(&gpu_moves, 1, memory_order_relaxed), true);
    if (out->early) /* the body is in flight: the put goes behind it */
        rill_rdep_send_behind(&gs->x, out->gpu_dev, out->behind);
    rill_taskpool_pending_add(&tp->super, 1);
    atomic_fetch_add_explicit(&tp->gsends, 1, memory_order_relaxed);
    rill_task_run_here(tp->super.ctx, &gs->super);
}

/* The group g[0 .. n-1] (one tile to rank dst) GPU to GPU: one send per message of
 * targets (a message takes up to rill_rdep_header_max_gpu bytes: one, as a rule). Each
 * entry holds a reference of a PTG tile: a send takes one, the rest are dropped. */
static void gpu_send_group(const rill_ptg_out_t *out, const ptg_remote_t *const *g, int n)
{
    ptg_tp_t *tp = out->tp;
    size_t max = rill_rdep_header_max_gpu() - sizeof(ptg_hdr_t) - from_bytes(tp, out->from->cls);
    int first = 0, used = 0;
    size_t bytes = 0;
    for (int e = 0; e <= n; e++) {
        size_t tb = e < n ? target_bytes(tp, g[e]->cls) : 0;
        if (e == n || (e > first && bytes + tb > max)) {
            void *hdr;
            size_t len;
            int32_t prio = INT32_MIN;
            rill_status_t s =
                message_header(tp, out->from, g + first, e - first, &hdr, &len, &prio);
            if (s == RILL_SUCCESS)
                gsend_start(tp, out, g[0], hdr, len, prio, g[used++]->buf);
            else
                rill_taskpool_fail(&tp->super, s, "out of memory (a PTG activation)");
            first = e;
            bytes = 0;
        }
        bytes += tb;
    }
    for (int e = used; e < n; e++)
        ptg_buf_unref(g[e]->buf); /* (never the last: the completing task holds one) */
}

/* A receive of a tile GPU to GPU: it lands in buf, then goes to the message's targets. */
typedef struct ptg_grecv {
    rill_task_t super; /* first: the core's view */
    rill_rdep_t x;
    ptg_buf_t *buf;
    ptg_hdr_t h;
    uint64_t size;
    max_align_t targets[]; /* the message's targets */
} ptg_grecv_t;

static rill_hook_status_t grecv_hook(rill_worker_t *w, rill_task_t *task)
{
    (void)w;
    return rill_rdep_recv_run(&((ptg_grecv_t *)task)->x, NULL);
}

static void activation_land(ptg_tp_t *tp, const ptg_hdr_t *m, uint64_t size, const char *targets,
                            ptg_buf_t *buf, bool lost);

/* The tile landed in a GPU of this rank (task->device; manager thread), or could not. */
static void grecv_complete(rill_worker_t *w, rill_task_t *task, rill_hook_status_t status)
{
    (void)w;
    ptg_grecv_t *g = (ptg_grecv_t *)task;
    ptg_tp_t *tp = (ptg_tp_t *)task->tp;
    bool ok = status == RILL_HOOK_DONE && task->device > 0;
    if (ok) /* its copy on that GPU is the new version (the landing's, device.h) */
        rill_data_wrote(&g->buf->data, task->device);
    /* (lost: the targets hold the tile without running, and drop it on a worker.) A target
     * that does not keep its reference gives it back at once: with one more held here,
     * that is never the last, which a chore drops on a worker (this is a manager's thread,
     * which must not free a datum with a copy on its GPU) */
    ptg_buf_t *buf = g->buf;
    atomic_fetch_add_explicit(&buf->refs, 1, memory_order_relaxed);
    /* (before the last pending drop: after it the taskpool may end and go) */
    atomic_fetch_sub_explicit(&tp->grecvs, 1, memory_order_relaxed);
    rill_taskpool_pending_add(&tp->super, 1); /* (busy until the chore is pushed) */
    activation_land(tp, &g->h, g->size, (const char *)g->targets, buf, !ok);
    ptg_chore_push(tp, &buf, 1);
    free(g);
    rill_taskpool_pending_sub(&tp->super, 1);
}

/* Comm thread: the activation m (its targets: tsize bytes) says its tile comes GPU to GPU
 * (in): land it in buf. A receive that cannot be made ends the run: the sender's send
 * would wait for it. */
static void grecv_start(ptg_tp_t *tp, const rill_rdep_in_t *in, ptg_buf_t *buf, const ptg_hdr_t *m,
                        const char *targets, size_t tsize)
{
    ptg_grecv_t *g = malloc(sizeof(*g) + tsize);
    if (g) {
        memset(&g->super, 0, sizeof(g->super));
        g->super.tc = &tp->grecv_tc;
        g->super.tp = &tp->super;
        g->super.device = -1;
        g->super.prio.priority = in->prio;
        g->buf = buf;
        g->h = *m;
        g->size = in->size;
        memcpy(g->targets, targets, tsize);
        rill_rdep_recv_init(&g->x, &g->super, &buf->data, in->src, 0, true, false, NULL);
    }
    if (!g || rill_rdep_recv_gpu(&g->x, in) != RILL_SUCCESS) {
        RILL_ERROR(RILL_LOG_RUNTIME,
                   "PTG: out of memory receiving a tile from rank %d GPU to GPU; that rank "
                   "would wait for it: aborting the run",
                   in->src);
        rill_rdep_abort(tp->super.ctx, 1);
        free(g);
        return;
    }
    atomic_fetch_add_explicit(&tp->grecvs, 1, memory_order_relaxed);
    rill_task_run_here(tp->super.ctx, &g->super);
}

void ptg_send_early(rill_ptg_out_t *out)
{
    out->from->early_flows = out->gpu_flows;
    ptg_send_remote(out);
}

static rill_param_t *param_early;

static const rill_param_decl_t ptg_params[] = {
    { "ptg_gpu_early", RILL_PARAM_BOOL, RILL_PARAM_LEVEL_TUNER,
      "A PTG task on a GPU whose output goes to another rank GPU to GPU announces it when its "
      "body is launched: the receiver's GPU asks for it while the body runs, and the put goes "
      "behind the body on the GPU; off: announced once the task completed",
      .v.b = true, .param = &param_early },
};

rill_status_t rill_ptg_register_params(void)
{
    return rill_params_register_table(ptg_params, 1);
}

bool ptg_early_on(void)
{
    return param_early && rill_param_get_bool(param_early);
}

static int no_flows(rill_task_t *task, rill_task_flow_t *flows, int max)
{
    (void)task;
    (void)flows;
    (void)max;
    return 0;
}

void ptg_remote_classes(ptg_tp_t *tp)
{
    tp->gsend_tc = (rill_task_class_t){ .name = "ptg-send-gpu",
                                        .nb_incarnations = 1,
                                        .incarnations = { { RILL_BODY_CPU, gsend_hook } },
                                        .complete = gsend_complete,
                                        .flows = no_flows };
    tp->grecv_tc = (rill_task_class_t){ .name = "ptg-recv-gpu",
                                        .nb_incarnations = 1,
                                        .incarnations = { { RILL_BODY_CPU, grecv_hook } },
                                        .complete = grecv_complete,
                                        .flows = no_flows };
    atomic_init(&tp->gsends, 0);
    atomic_init(&tp->grecvs, 0);
    tp->prog_id = prog_identity(tp->prog);
}

void ptg_remote_describe(ptg_tp_t *tp, FILE *out)
{
    int ns = atomic_load_explicit(&tp->gsends, memory_order_relaxed),
        nr = atomic_load_explicit(&tp->grecvs, memory_order_relaxed);
    if (ns || nr)
        fprintf(out,
                "  PTG tiles moving GPU to GPU: %d sent here (waiting for the receiver's "
                "request or for the put), %d coming here (landing)\n",
                ns, nr);
}

/* ------------------------------------------------------------ host route */

/* The activations of group g[0 .. n-1] (one tile to rank dst), cut into messages of at
 * most PTG_TARGETS_MAX_BYTES of targets, sent on the engine's channel (the tile inside
 * each, or one copy exposed for their GETs). Counted in sent before they leave
 * (termination). */
static void send_group(ptg_tp_t *tp, const ptg_inst_t *from, const ptg_remote_t *const *g, int n)
{
    const ptg_remote_t *r = g[0];
    int nmsg = 0, first = 0;
    size_t bytes = 0;
    void *hdr_fixed[8], **hdrs = hdr_fixed;
    size_t len_fixed[8], *lens = len_fixed;
    if (n > 8) {
        hdrs = malloc(sizeof(*hdrs) * (size_t)n);
        lens = malloc(sizeof(*lens) * (size_t)n);
        if (!hdrs || !lens) {
            free(hdrs);
            free(lens);
            rill_taskpool_fail(&tp->super, RILL_ERR_NO_MEMORY, "out of memory (a PTG activation)");
            return;
        }
    }
    int32_t prio = INT32_MIN;
    rill_status_t s = RILL_SUCCESS;
    for (int e = 0; e <= n && s == RILL_SUCCESS; e++) {
        size_t tb = e < n ? target_bytes(tp, g[e]->cls) : 0;
        if (e == n || (e > first && bytes + tb > PTG_TARGETS_MAX_BYTES(tp, from->cls))) {
            s = message_header(tp, from, g + first, e - first, &hdrs[nmsg], &lens[nmsg], &prio);
            if (s == RILL_SUCCESS)
                nmsg++;
            first = e;
            bytes = 0;
        }
        bytes += tb;
    }
    if (s == RILL_SUCCESS) {
        int sent = 0;
        rill_data_copy_t *host = r->dat ? rill_data_host_copy(r->dat) : NULL;
        const void *tile = host ? host->ptr : NULL; /* (current: the release needed it home) */
        atomic_fetch_add_explicit(&tp->sent, (unsigned long long)nmsg, memory_order_relaxed);
        s = rill_rdep_channel_send(tp->super.ctx, msg_tag, r->dst, nmsg, (const void *const *)hdrs,
                                   lens, tile, tile ? r->size : 0, prio, &sent);
        /* those that did not leave are not counted (termination) */
        atomic_fetch_sub_explicit(&tp->sent, (unsigned long long)(nmsg - sent),
                                  memory_order_relaxed);
    }
    if (s != RILL_SUCCESS)
        rill_taskpool_fail(&tp->super, s, "PTG: cannot send %s's input to rank %d: %s",
                           tp->prog->classes[r->cls].name, r->dst, rill_status_string(s));
    for (int k = 0; k < nmsg; k++)
        free(hdrs[k]);
    if (hdrs != hdr_fixed) {
        free(hdrs);
        free(lens);
    }
}

/* The outputs to other ranks of a completing task: those of one tile to one rank leave
 * together, in as few messages as the targets fit in (one tile copy exposed for all of
 * their GETs when it is too large to go inside). */
void ptg_send_remote(rill_ptg_out_t *out)
{
    ptg_tp_t *tp = out->tp;
    const ptg_remote_t *group_fixed[64], **group = group_fixed;
    if (out->nremote > 64 && !(group = malloc(sizeof(*group) * (size_t)out->nremote))) {
        rill_taskpool_fail(&tp->super, RILL_ERR_NO_MEMORY, "out of memory (a PTG activation)");
        group = NULL;
    }
    for (int a = 0; group && a < out->nremote; a++) {
        ptg_remote_t *r = &out->remote[a];
        if (r->dst < 0)
            continue; /* sent with an earlier one */
        int n = 0;    /* the group of r */
        for (int b = a; b < out->nremote; b++) {
            ptg_remote_t *q = &out->remote[b];
            if (q->dst == r->dst && q->dat == r->dat && q->size == r->size && q->gpu == r->gpu)
                group[n++] = q;
        }
        if (r->gpu)
            gpu_send_group(out, group, n);
        else
            send_group(tp, out->from, group, n);
        for (int e = 0; e < n; e++)
            ((ptg_remote_t *)group[e])->dst = -1;
    }
    for (int a = 0; !group && a < out->nremote; a++) /* (none sent: the run failed) */
        ptg_buf_unref(out->remote[a].buf);
    if (group != group_fixed)
        free(group);

    if (out->remote != out->fixed)
        free(out->remote);
    out->remote = NULL;
    out->nremote = 0;
}

typedef struct get_arg {
    ptg_tp_t *tp;
    ptg_buf_t *buf;
    ptg_hdr_t h;
    uint64_t size;
    max_align_t targets[]; /* the message's targets */
} get_arg_t;

/* A message's tile is here (inside it, or landed by the GET; buf NULL with a size: lost,
 * the run failed already): deliver it to each target, each taking one of buf's references.
 * targets: the sender's parameters, then the targets (as after the header). */
static void activation_land(ptg_tp_t *tp, const ptg_hdr_t *m, uint64_t size, const char *targets,
                            ptg_buf_t *buf, bool lost)
{
    rill_ptg_out_t out = { .tp = tp, .errors = ptg_expr_errors };
    int64_t sender[RILL_PTG_MAX_VARS];
    memcpy(sender, targets, from_bytes(tp, m->from_cls));
    ptg_from_t from = { .cls = m->from_cls, .flow = m->from_flow, .params = sender };
    const char *p = targets + from_bytes(tp, m->from_cls);
    for (uint32_t k = 0; k < m->ntargets; k++) {
        ptg_target_t tg;
        memcpy(&tg, p, sizeof(tg));
        const rill_ptg_class_t *c = &tp->prog->classes[tg.cls];
        int64_t params[RILL_PTG_MAX_VARS], v[RILL_PTG_MAX_VARS] = { 0 };
        memcpy(params, p + sizeof(tg), sizeof(int64_t) * (size_t)c->nparams);
        p += target_bytes(tp, tg.cls);
        for (int q = 0; q < c->nparams; q++)
            v[c->param_var[q]] = params[q];
        unsigned errs = ptg_expr_errors;
        c->valid(tp->globals, v); /* the locals (a failed expression failed the run) */
        ptg_deliver_local(&out, tg.cls, v, params, tg.flow, buf ? &buf->data : NULL, size, buf,
                          lost || (size && !buf) || ptg_expr_errors != errs, &from);
    }
    rill_sched_push(tp->super.ctx, NULL, out.ready, out.nready);
    rill_taskpool_pending_sub(&tp->super, 1); /* the message's hold */
}

static void get_done(void *arg, rill_status_t status)
{
    get_arg_t *g = arg;
    if (status != RILL_SUCCESS) {
        rill_taskpool_fail(&g->tp->super, status, "PTG: a tile of an activation did not arrive");
        atomic_store(&g->buf->refs, 1);
        ptg_buf_unref(g->buf);
        g->buf = NULL;
    }
    activation_land(g->tp, &g->h, g->size, (const char *)g->targets, g->buf, false);
    free(g);
}

/* Whether a message's targets (len bytes after its header) parse against this program
 * (else the sender wrote something this program does not have). */
static bool targets_valid(const ptg_tp_t *tp, const ptg_hdr_t *m, const char *p, size_t len)
{
    if (m->from_cls < 0 || m->from_cls >= tp->prog->nclasses || m->from_flow < 0 ||
        m->from_flow >= tp->prog->classes[m->from_cls].nflows || len < from_bytes(tp, m->from_cls))
        return false;
    size_t used = from_bytes(tp, m->from_cls);
    for (uint32_t k = 0; k < m->ntargets; k++) {
        ptg_target_t tg;
        if (len - used < sizeof(tg))
            return false;
        memcpy(&tg, p + used, sizeof(tg));
        if (tg.cls < 0 || tg.cls >= tp->prog->nclasses || tg.flow < 0 ||
            tg.flow >= tp->prog->classes[tg.cls].nflows || len - used < target_bytes(tp, tg.cls))
            return false;
        used += target_bytes(tp, tg.cls);
    }
    return m->ntargets && used == len;
}

/* One activation (msg, len bytes) for a taskpool that exists here: counted, held in
 * pending until its tile is delivered (the rank is not idle meanwhile: termination). */
static void activation_take(ptg_tp_t *tp, int src, const void *msg, size_t len)
{
    atomic_fetch_add_explicit(&tp->received, 1, memory_order_relaxed);
    rill_taskpool_pending_add(&tp->super, 1);
    rill_rdep_in_t in;
    ptg_hdr_t m = { 0 };
    bool ok = rill_rdep_in_parse(src, msg, len, &in) && in.hdr_len >= sizeof(m);
    if (ok)
        memcpy(&m, in.hdr, sizeof(m));
    const char *targets = ok ? (const char *)in.hdr + sizeof(m) : NULL;
    size_t tsize = ok ? in.hdr_len - sizeof(m) : 0;
    if (ok && m.prog_id != tp->prog_id) { /* its targets name another's classes */
        rill_taskpool_fail(&tp->super, RILL_ERR_INVALID_ARG,
                           "PTG: an activation from rank %d for taskpool %u comes from another "
                           "program (identity %08x) than the one this taskpool runs (%s, %08x): "
                           "every rank must create its PTG taskpools in the same order",
                           src, m.tp_id, m.prog_id, tp->prog->name, tp->prog_id);
        if (in.gpu) /* its sender waits for this rank's request */
            rill_rdep_abort(tp->super.ctx, 1);
        rill_taskpool_pending_sub(&tp->super, 1);
        return;
    }
    if (!ok || !targets_valid(tp, &m, targets, tsize)) {
        rill_taskpool_fail(&tp->super, RILL_ERR_COMM,
                           "PTG: a malformed activation from rank %d (%zu bytes, %u targets): "
                           "do all ranks run the same program?",
                           src, len, m.ntargets);
        if (ok && in.gpu) /* its sender waits for this rank's request */
            rill_rdep_abort(tp->super.ctx, 1);
        rill_taskpool_pending_sub(&tp->super, 1);
        return;
    }
    ptg_buf_t *buf = NULL;
    if (in.size) {
        buf = ptg_buf_new(tp->super.ctx, in.size, (int)m.ntargets, false);
        if (!buf) {
            rill_taskpool_fail(&tp->super, RILL_ERR_NO_MEMORY, "out of memory (a PTG tile)");
            if (in.gpu) /* its sender waits for this rank's request */
                rill_rdep_abort(tp->super.ctx, 1);
            rill_taskpool_pending_sub(&tp->super, 1);
            return;
        }
    }
    if (in.gpu) { /* it comes GPU to GPU: landed by a receive */
        grecv_start(tp, &in, buf, &m, targets, tsize);
        return;
    }
    bool fetch = in.size && !in.inside; /* the tile is exposed at the sender */
    get_arg_t *g = fetch ? malloc(sizeof(*g) + tsize) : NULL;
    rill_status_t s = !fetch || g ? RILL_SUCCESS : RILL_ERR_NO_MEMORY;
    bool async = false;
    if (g) {
        g->tp = tp;
        g->buf = buf;
        g->h = m;
        g->size = in.size;
        memcpy(g->targets, targets, tsize);
    }
    if (s == RILL_SUCCESS)
        s = rill_rdep_fetch(tp->super.ctx, &in, buf ? ptg_buf_bytes(buf) : NULL, get_done, g,
                            &async);
    if (s == RILL_SUCCESS && !async) { /* the tile was inside (or there is none) */
        free(g);
        activation_land(tp, &m, in.size, targets, buf, false);
        return;
    }
    if (s != RILL_SUCCESS) {
        free(g);
        if (buf) {
            atomic_store(&buf->refs, 1);
            ptg_buf_unref(buf);
        }
        rill_taskpool_fail(&tp->super, s, "PTG: cannot fetch a tile from rank %d", src);
        rill_taskpool_pending_sub(&tp->super, 1);
    }
}

/* The comm thread: an activation. Its taskpool may not exist here yet (a faster rank):
 * then it waits in the early list, which the creation drains under the same lock. */
static void activation_am(int src, const void *msg, size_t len, void *arg)
{
    (void)arg;
    rill_rdep_in_t in;
    ptg_hdr_t m;
    if (!rill_rdep_in_parse(src, msg, len, &in) || in.hdr_len < sizeof(m)) {
        RILL_ERROR(RILL_LOG_RUNTIME, "PTG: a malformed activation of %zu bytes from rank %d", len,
                   src);
        return;
    }
    memcpy(&m, in.hdr, sizeof(m));
    pthread_mutex_lock(&live_lock);
    ptg_tp_t *tp = live;
    while (tp && tp->super.id != m.tp_id)
        tp = tp->live_next;
    if (!tp) {
        early_msg_t *e = malloc(sizeof(*e) + len);
        if (e) {
            e->src = src;
            e->len = len;
            memcpy(e->msg, msg, len);
            e->next = early;
            early = e;
        } else { /* a lost activation would leave the termination waiting forever */
            RILL_ERROR(RILL_LOG_RUNTIME,
                       "PTG: out of memory keeping an activation for taskpool %u, which does "
                       "not exist here yet: aborting",
                       m.tp_id);
            abort();
        }
        pthread_mutex_unlock(&live_lock);
        return;
    }
    pthread_mutex_unlock(&live_lock);
    activation_take(tp, src, msg, len);
}

rill_status_t ptg_remote_init(rill_context_t *ctx)
{
    msg_tag = -1;
    if (ctx->nranks == 1)
        return RILL_SUCCESS;
    return rill_rdep_channel_open(ctx, activation_am, NULL, &msg_tag);
}

bool ptg_remote_ready(void)
{
    return msg_tag >= 0;
}

void ptg_remote_fini(void)
{
    pthread_mutex_lock(&live_lock);
    while (early) { /* activations of taskpools never created here */
        early_msg_t *e = early;
        early = e->next;
        free(e);
    }
    pthread_mutex_unlock(&live_lock);
    msg_tag = -1;
}

void ptg_remote_live(ptg_tp_t *tp)
{
    pthread_mutex_lock(&live_lock);
    tp->live_next = live;
    live = tp;
    early_msg_t *mine = NULL, **pp = &early;
    while (*pp) {
        early_msg_t *e = *pp;
        rill_rdep_in_t in;
        ptg_hdr_t m; /* (it parsed when it came: activation_am) */
        rill_rdep_in_parse(e->src, e->msg, e->len, &in);
        memcpy(&m, in.hdr, sizeof(m));
        if (m.tp_id == tp->super.id) {
            *pp = e->next;
            e->next = mine;
            mine = e;
        } else
            pp = &e->next;
    }
    pthread_mutex_unlock(&live_lock);
    /* early holds the newest first; taking them off onto mine reversed them: oldest first */
    while (mine) {
        early_msg_t *n = mine->next;
        activation_take(tp, mine->src, mine->msg, mine->len);
        free(mine);
        mine = n;
    }
}

void ptg_remote_gone(ptg_tp_t *tp)
{
    pthread_mutex_lock(&live_lock);
    for (ptg_tp_t **pp = &live; *pp; pp = &(*pp)->live_next)
        if (*pp == tp) {
            *pp = tp->live_next;
            break;
        }
    pthread_mutex_unlock(&live_lock);
}
