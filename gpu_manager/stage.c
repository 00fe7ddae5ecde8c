/* The GPU manager's staging and eviction: the zone's blocks of each datum (gm_entry_t), the LRU
 * list and eviction with write-back, transfers of copies into the GPU (from the host or a peer
 * GPU) and home (a CPU task needs them). Manager thread. */
#include "gm_internal.h"

#if RILL_HAVE_CUDA

static void lru_append(gm_t *m, gm_entry_t *e);
static bool writeback_start(gm_t *m, gm_entry_t *e, rill_data_copy_t *host, uint64_t v);

void gm_lru_unlink(gm_t *m, gm_entry_t *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        m->lru_head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        m->lru_tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_append(gm_t *m, gm_entry_t *e)
{
    e->prev = m->lru_tail;
    e->next = NULL;
    if (m->lru_tail)
        m->lru_tail->next = e;
    else
        m->lru_head = e;
    m->lru_tail = e;
}

void gm_lru_touch(gm_t *m, gm_entry_t *e)
{
    if (m->lru_tail == e)
        return;
    gm_lru_unlink(m, e);
    lru_append(m, e);
}

/* Take a reader on copy c unless it is being evicted; false when it is. */
bool gm_copy_reader_get(rill_data_copy_t *c)
{
    int r = atomic_load_explicit(&c->readers, memory_order_acquire);
    while (r >= 0)
        if (atomic_compare_exchange_weak_explicit(&c->readers, &r, r + 1, memory_order_acq_rel,
                                                  memory_order_acquire))
            return true;
    return false;
}

void gm_copy_reader_put(rill_data_copy_t *c)
{
    atomic_fetch_sub_explicit(&c->readers, 1, memory_order_release);
}

/* Take c, unread, from its readers while a landing is set up in its block (readers -1, as a
 * write-back holds it): false when something reads it. Another GPU's manager that takes a
 * reader (copy_reader_get) either did so first (then this fails: not now) or does so after
 * copy_unquiesce, whose release store publishes the INVALID coherency and the landing flag
 * set meanwhile: its re-check of the copy's currency then fails. A check of readers == 0
 * followed by the invalidation would let both go ahead (a peer GPU reading bytes as another
 * rank overwrites them). */
bool gm_copy_quiesce(rill_data_copy_t *c)
{
    int zero = 0;
    return atomic_compare_exchange_strong_explicit(&c->readers, &zero, -1, memory_order_acq_rel,
                                                   memory_order_acquire);
}

void gm_copy_unquiesce(rill_data_copy_t *c)
{
    atomic_store_explicit(&c->readers, 0, memory_order_release);
}

/* This GPU's copy of d and its entry, made on first use (no block yet). */
gm_entry_t *gm_entry_of(gm_t *m, rill_data_t *d)
{
    rill_data_copy_t *c = rill_data_copy(d, m->index);
    if (c)
        return c->dev_priv;
    c = calloc(1, sizeof(*c));
    gm_entry_t *e = calloc(1, sizeof(*e));
    if (!c || !e) {
        free(c);
        free(e);
        return NULL;
    }
    c->data = d;
    c->device = m->index;
    atomic_init(&c->version, 0);
    atomic_init(&c->coherency, RILL_COHERENCY_INVALID);
    atomic_init(&c->readers, 0);
    atomic_init(&c->landing, 0);
    c->dev_priv = e;
    e->copy = c;
    e->w_stream = -1;
    /* release: the fields above before the pointer (other GPUs read it with acquire) */
    atomic_store_explicit(&d->copies[m->index], c, memory_order_release);
    return e;
}

/* e gets the zone block at addr (its copy holds nothing yet) and joins the LRU list. */
void gm_entry_set_block(gm_t *m, gm_entry_t *e, uintptr_t addr)
{
    e->block = addr;
    e->copy->ptr = (void *)addr;
    atomic_store_explicit(&e->copy->coherency, RILL_COHERENCY_INVALID, memory_order_release);
    lru_append(m, e);
}

/* Give e's block back (its copy then holds nothing). readers is -1 (eviction) or 0. */
void gm_entry_drop_block(gm_t *m, gm_entry_t *e)
{
    rill_data_copy_t *c = e->copy;
    atomic_store_explicit(&c->coherency, RILL_COHERENCY_INVALID, memory_order_release);
    c->ptr = NULL;
    rill_zone_free(m->res->zone, e->block);
    e->block = 0;
    gm_lru_unlink(m, e);
    /* release: INVALID is seen by whoever takes a reader next */
    atomic_store_explicit(&c->readers, 0, memory_order_release);
}

/* ------------------------------------------------------------ eviction and space */

/* Write e's block home (its copy is the only current one). Takes e as being evicted. */
static bool writeback_start(gm_t *m, gm_entry_t *e, rill_data_copy_t *host, uint64_t v)
{
    gm_op_t *op = gm_op_new(m, OP_WB);
    if (!op)
        return false;
    gm_op_begin(m, op, m->res->d2h, m->trace);
    rill_data_copy_pin(host);
    cudaError_t err = cudaMemcpyAsync(host->ptr, (void *)e->block, e->copy->data->size,
                                      cudaMemcpyDeviceToHost, m->res->d2h);
    if (err == cudaSuccess)
        err = gm_op_record(m, op, m->res->d2h);
    if (err != cudaSuccess) {
        gm_fail_cuda(m, NULL, "cudaMemcpyAsync (write-back before eviction)", err);
        gm_op_free(m, op);
        return false;
    }
    op->nent = 1;
    op->ent[0] = e;
    op->version[0] = v;
    e->writeback = true;
    gm_fifo_push(m, fifo_d2h(m), op);
    atomic_fetch_add_explicit(&m->n_wb, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->b_d2h, e->copy->data->size, memory_order_relaxed);
    return true;
}

/* A block of size bytes, evicting LRU copies no task uses. RILL_ERR_NO_MEMORY: not now (a
 * write-back or a task in flight will free room). */
rill_status_t gm_zone_get(gm_t *m, size_t size, uintptr_t *addr)
{
    if (rill_zone_alloc(m->res->zone, size, addr) == RILL_SUCCESS)
        return RILL_SUCCESS;
    gm_entry_t *e = m->lru_head;
    while (e) {
        gm_entry_t *next = e->next;
        rill_data_copy_t *c = e->copy;
        int zero = 0;
        if (e->writeback || e->xfers > 0 ||
            !atomic_compare_exchange_strong_explicit(&c->readers, &zero, -1, memory_order_acq_rel,
                                                     memory_order_relaxed)) {
            e = next;
            continue;
        }
        /* no task or transfer uses it (readers -1 keeps them off until we are done) */
        rill_data_t *d = c->data;
        rill_data_copy_t *host = rill_data_host_copy(d);
        /* one snapshot of the version for both copies: a write completing between two
         * reads could make a current host copy look stale */
        uint64_t v = atomic_load_explicit(&d->version, memory_order_acquire);
        bool mine =
            atomic_load_explicit(&c->coherency, memory_order_acquire) != RILL_COHERENCY_INVALID &&
            atomic_load_explicit(&c->version, memory_order_acquire) == v;
        bool home = host &&
                    atomic_load_explicit(&host->coherency, memory_order_acquire) !=
                        RILL_COHERENCY_INVALID &&
                    atomic_load_explicit(&host->version, memory_order_acquire) == v;
        /* a task writing it on another GPU makes this copy stale: nothing to save */
        for (int g = 1; mine && g < rill_device_count(); g++) {
            rill_data_copy_t *o = g == m->index ? NULL : rill_data_copy(d, g);
            if (o && atomic_load_explicit(&o->coherency, memory_order_acquire) ==
                         RILL_COHERENCY_EXCLUSIVE)
                mine = false;
        }
        if (mine && host && !home) { /* the only current copy: home first, then free */
            int z = 0;               /* one copy into a host buffer at a time */
            /* holding the flag, the version again: a host writer raises it before it gives
             * the flag back, and then this copy is stale */
            if (!atomic_compare_exchange_strong_explicit(
                    &host->landing, &z, 1, memory_order_acq_rel, memory_order_relaxed) ||
                atomic_load_explicit(&d->version, memory_order_acquire) != v ||
                !writeback_start(m, e, host, v)) {
                if (!z)
                    atomic_store_explicit(&host->landing, 0, memory_order_release);
                atomic_store_explicit(&c->readers, 0, memory_order_release);
            }
            e = next;
            continue;
        }
        gm_entry_drop_block(m, e);
        atomic_fetch_add_explicit(&m->n_evict, 1, memory_order_relaxed);
        if (m->trace)
            rill_trace_instant("gpu", "eviction", rill_time_ns());
        if (rill_zone_alloc(m->res->zone, size, addr) == RILL_SUCCESS)
            return RILL_SUCCESS;
        e = next;
    }
    atomic_fetch_add_explicit(&m->n_nospace, 1, memory_order_relaxed);
    return RILL_ERR_NO_MEMORY;
}

/* Stage one input into e (not current here): from a peer GPU that holds the newest version,
 * else from host memory. The exec stream then waits for e->ready. */
cudaError_t gm_stage_in(gm_t *m, gm_entry_t *e, rill_data_t *d)
{
    uint64_t v = atomic_load_explicit(&d->version, memory_order_acquire);
    size_t size = d->size;
    int ndev = rill_device_count();
    gm_op_t *op = gm_op_new(m, OP_XFER);
    if (!op)
        return cudaErrorMemoryAllocation;
    if (!e->ready && !(e->ready = rill_cuda_event_get(m->res, false))) {
        gm_op_free(m, op);
        return cudaErrorMemoryAllocation;
    }
    cudaError_t err = cudaSuccess;
    int f = -1;
    /* a transfer of an older version may still be landing in the block: the new one goes
     * after it (stream order is per stream; this orders across streams) */
    bool after = e->xfers > 0;
    e->w_stream = -1;                         /* traces: no task here wrote what it will hold */
    for (int g = 1; g < ndev && f < 0; g++) { /* a peer GPU's current copy */
        if (g == m->index || rill_device_get(g)->type != RILL_BODY_CUDA)
            continue;
        rill_data_copy_t *pc = rill_data_copy(d, g);
        /* (a copy whose bytes are still landing from another rank is current only for its
         * own GPU, whose streams wait for the landing: not a source for us yet) */
        if (!pc || !rill_data_copy_current(d, pc) ||
            atomic_load_explicit(&pc->landing, memory_order_acquire) || !gm_copy_reader_get(pc))
            continue;
        if (!rill_data_copy_current(d, pc) || !pc->ptr) { /* lost it meanwhile */
            gm_copy_reader_put(pc);
            continue;
        }
        gm_t *peer = rill_device_get(g)->priv;
        int po = peer->res->info.ordinal;
        f = fifo_peer(m, po);
        if (after)
            err = cudaStreamWaitEvent(m->fifo_stream[f], e->ready, 0);
        gm_op_begin(m, op, m->fifo_stream[f], m->trace);
        op->peer = po;
        if (err == cudaSuccess)
            err = cudaMemcpyPeerAsync((void *)e->block, m->res->info.ordinal, pc->ptr, po, size,
                                      m->fifo_stream[f]);
        op->src[0] = pc;
        atomic_fetch_add_explicit(&m->n_d2d, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&m->b_d2d, size, memory_order_relaxed);
    }
    if (f < 0) {
        rill_data_copy_t *host = rill_data_host_copy(d);
        if (!host || !rill_data_copy_current(d, host)) {
            /* no copy can give its bytes now: the only current one is being written home
             * by another GPU before its eviction (readers -1). Try again once it landed. */
            gm_op_free(m, op);
            return cudaErrorNotReady;
        }
        f = fifo_h2d(m);
        if (after)
            err = cudaStreamWaitEvent(m->fifo_stream[f], e->ready, 0);
        rill_data_copy_pin(host);
        gm_op_begin(m, op, m->fifo_stream[f], m->trace);
        op->peer = -1;
        if (err == cudaSuccess)
            err = cudaMemcpyAsync((void *)e->block, host->ptr, size, cudaMemcpyHostToDevice,
                                  m->fifo_stream[f]);
        atomic_fetch_add_explicit(&m->n_h2d, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&m->b_h2d, size, memory_order_relaxed);
    }
    if (err == cudaSuccess)
        err = cudaEventRecord(e->ready, m->fifo_stream[f]);
    if (err == cudaSuccess)
        err = gm_op_record(m, op, m->fifo_stream[f]);
    if (err != cudaSuccess) {
        if (op->src[0])
            gm_copy_reader_put(op->src[0]);
        gm_op_free(m, op);
        return err;
    }
    e->xfers++;
    e->xfer_version = v;
    op->nent = 1;
    op->ent[0] = e;
    op->version[0] = v;
    gm_fifo_push(m, f, op);
    return cudaSuccess;
}

/* ------------------------------------------------------------ bringing copies home */

/* A CPU body needs the host copies current: move those this GPU holds the newest of. */
void gm_home_start(gm_t *m, rill_task_t *task)
{
    rill_task_flow_t flows[RILL_MAX_FLOWS];
    int n = task->tc->flows ? task->tc->flows(task, flows, RILL_MAX_FLOWS) : 0;
    gm_op_t *op = gm_op_new(m, OP_HOME);
    if (!op) {
        rill_taskpool_fail(task->tp, RILL_ERR_NO_MEMORY, "out of host memory on GPU %d's manager",
                           m->res->info.ordinal);
        rill_task_complete(NULL, task, RILL_HOOK_ERROR);
        return;
    }
    op->task = task;
    gm_op_begin(m, op, m->res->d2h, m->trace);
    for (int i = 0; i < n; i++) {
        rill_data_t *d = flows[i].data;
        rill_data_copy_t *c = rill_data_copy(d, m->index), *host = rill_data_host_copy(d);
        /* (a copy a task is writing right now, EXCLUSIVE, is not copied: its bytes are
         * changing; the task comes back and finds the version its writer leaves) */
        if (!host || !c || rill_data_copy_current(d, host) || !rill_data_copy_current(d, c) ||
            atomic_load_explicit(&c->coherency, memory_order_acquire) == RILL_COHERENCY_EXCLUSIVE)
            continue;
        bool dup = false;
        for (int k = 0; k < op->nent; k++)
            dup |= op->ent[k]->copy == c;
        if (dup || !gm_copy_reader_get(c))
            continue;
        int z = 0; /* one copy into a host buffer at a time; else the task comes back */
        if (!atomic_compare_exchange_strong_explicit(&host->landing, &z, 1, memory_order_acq_rel,
                                                     memory_order_relaxed)) {
            gm_copy_reader_put(c);
            continue;
        }
        /* again, holding the flag: a host writer (PTG's copy into a tile) raises the version
         * before it gives the flag back, so an older copy is not started over its bytes */
        if (rill_data_copy_current(d, host) || !rill_data_copy_current(d, c)) {
            atomic_store_explicit(&host->landing, 0, memory_order_release);
            gm_copy_reader_put(c);
            continue;
        }
        gm_entry_t *ce = c->dev_priv;
        if (ce->ahead) { /* (it holds no version to bring home) */
            atomic_store_explicit(&host->landing, 0, memory_order_release);
            gm_copy_reader_put(c);
            continue;
        }
        cudaError_t err = ce->xfers > 0 ? cudaStreamWaitEvent(m->res->d2h, ce->ready, 0)
                                        : cudaSuccess; /* bytes still landing from a rank */
        rill_data_copy_pin(host);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(host->ptr, c->ptr, d->size, cudaMemcpyDeviceToHost, m->res->d2h);
        if (err != cudaSuccess) {
            atomic_store_explicit(&host->landing, 0, memory_order_release);
            gm_copy_reader_put(c);
            gm_fail_cuda(m, task, "cudaMemcpyAsync (bringing a tile home)", err);
            op->body_failed = true;
            continue;
        }
        op->ent[op->nent] = c->dev_priv;
        op->version[op->nent++] = atomic_load_explicit(&d->version, memory_order_acquire);
        atomic_fetch_add_explicit(&m->n_d2h, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&m->b_d2h, d->size, memory_order_relaxed);
    }
    cudaError_t err = gm_op_record(m, op, m->res->d2h);
    if (err != cudaSuccess) {
        /* no event says when the copies land: wait for the stream's work to drain
         * before releasing them is not allowed here, so fail the task (its copies are
         * released when the op completes below, at once) */
        gm_fail_cuda(m, task, "cudaEventRecord (bringing tiles home)", err);
        op->body_failed = true;
        rill_cuda_event_put(m->res, op->ev, false);
        op->ev = NULL;
    }
    atomic_fetch_add_explicit(&m->n_home, 1, memory_order_relaxed);
    gm_fifo_push(m, fifo_d2h(m), op);
}

/* ------------------------------------------------------------ completion */

/* A GPU's copy of version v landed in host copy host (ok) or failed: the host copy's version
 * only grows (a later write may have moved it on meanwhile), and the next copy into it may
 * start (landing back to 0, release: after the version). */
void gm_host_landed(rill_data_copy_t *host, uint64_t v, bool ok)
{
    uint64_t cur = atomic_load_explicit(&host->version, memory_order_acquire);
    while (ok && (cur < v || atomic_load_explicit(&host->coherency, memory_order_acquire) ==
                                 RILL_COHERENCY_INVALID)) {
        if (cur > v)
            break;
        if (atomic_compare_exchange_weak_explicit(&host->version, &cur, v, memory_order_acq_rel,
                                                  memory_order_acquire)) {
            atomic_store_explicit(&host->coherency, RILL_COHERENCY_SHARED, memory_order_release);
            break;
        }
    }
    atomic_store_explicit(&host->landing, 0, memory_order_release);
}

#endif /* RILL_HAVE_CUDA */
