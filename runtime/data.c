/* Data and their copies; keyed collections; the 2D block-cyclic tiled matrix. */
#include "data_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_device.h"

/* ------------------------------------------------------------ data */

void (*rill_data_copy_release_hook)(rill_data_copy_t *c);

/* Page-locked tile buffers are kept for reuse once freed: registering memory with the CUDA
 * driver takes milliseconds per tile of tens of MB and holds a driver lock meanwhile, which
 * stalls the GPU managers' launches (on two processes with a GPU each, dpotrf N = 32768 ran
 * at 15 TFLOP/s while each rank pinned the host buffers of the tiles it receives). Buffers
 * of the same page-rounded size are reused; at most a bounded total is kept (an eighth of
 * the machine's memory); rill_fini gives the rest back. */
typedef struct pin_buf {
    void *ptr;
    size_t bytes;
    struct pin_buf *next;
} pin_buf_t;
static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static pin_buf_t *pin_free;
static size_t pin_cached;

static size_t tile_bytes(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (size ? size + page - 1 : page) / page * page;
}

/* lazy: a kept page-locked buffer, else a pageable one (page-locked on first use) */
static void *tile_alloc(size_t size, bool *pinned, bool lazy)
{
    void *ptr = NULL;
    *pinned = false;
    if (rill_device_count() > 1) { /* GPUs: whole pages, so each tile registers on its own */
        size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = tile_bytes(size);
        pthread_mutex_lock(&pin_lock);
        for (pin_buf_t **p = &pin_free; *p; p = &(*p)->next)
            if ((*p)->bytes == bytes) {
                pin_buf_t *b = *p;
                *p = b->next;
                pin_cached -= bytes;
                pthread_mutex_unlock(&pin_lock);
                ptr = b->ptr;
                free(b);
                *pinned = true;
                return ptr;
            }
        pthread_mutex_unlock(&pin_lock);
        if (posix_memalign(&ptr, page, bytes))
            return NULL;
        *pinned = !lazy && rill_cuda_host_register(ptr, bytes);
        return ptr;
    }
    if (posix_memalign(&ptr, 64, size ? size : 1))
        return NULL;
    return ptr;
}

void *rill_host_tile_alloc(size_t size, bool *pinned)
{
    return tile_alloc(size, pinned, false);
}

void *rill_host_tile_alloc_lazy(size_t size, bool *pinned)
{
    return tile_alloc(size, pinned, true);
}

void rill_data_copy_pin(rill_data_copy_t *c)
{
    /* on every transfer through a host copy (GPU managers): no lock once it was tried, and
     * a registration that failed is not tried again (the copies stay pageable) */
    if (!c->owns_ptr || __atomic_load_n(&c->pinned, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&c->pin_tried, __ATOMIC_ACQUIRE) || rill_device_count() <= 1)
        return;
    pthread_mutex_lock(&pin_lock); /* two GPUs' managers may want it at once */
    if (!c->pin_tried) {
        __atomic_store_n(&c->pinned, rill_cuda_host_register(c->ptr, tile_bytes(c->data->size)),
                         __ATOMIC_RELEASE);
        __atomic_store_n(&c->pin_tried, true, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&pin_lock);
}

void rill_host_tile_free(void *ptr, size_t size, bool pinned)
{
    if (!ptr)
        return;
    if (pinned) {
        size_t bytes = tile_bytes(size);
        size_t cap = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE) / 8;
        pin_buf_t *b = malloc(sizeof(*b));
        pthread_mutex_lock(&pin_lock);
        if (b && pin_cached + bytes <= cap) {
            *b = (pin_buf_t){ .ptr = ptr, .bytes = bytes, .next = pin_free };
            pin_free = b;
            pin_cached += bytes;
            pthread_mutex_unlock(&pin_lock);
            return;
        }
        pthread_mutex_unlock(&pin_lock);
        free(b);
        rill_cuda_host_unregister(ptr);
    }
    free(ptr);
}

void rill_host_tile_cache_drain(void)
{
    pthread_mutex_lock(&pin_lock);
    pin_buf_t *b = pin_free;
    pin_free = NULL;
    pin_cached = 0;
    pthread_mutex_unlock(&pin_lock);
    while (b) {
        pin_buf_t *next = b->next;
        rill_cuda_host_unregister(b->ptr);
        free(b->ptr);
        free(b);
        b = next;
    }
}

static rill_data_copy_t *copy_new(rill_data_t *data, int dev, void *ptr, bool owns, bool pinned,
                                  rill_coherency_t coh)
{
    rill_data_copy_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->data = data;
    c->ptr = ptr;
    c->device = dev;
    atomic_init(&c->version, atomic_load_explicit(&data->version, memory_order_relaxed));
    atomic_init(&c->coherency, (int)coh);
    atomic_init(&c->readers, 0);
    atomic_init(&c->landing, 0);
    c->owns_ptr = owns;
    c->pinned = pinned;
    return c;
}

rill_status_t rill_data_init(rill_data_t *data, rill_context_t *ctx, rill_collection_t *dc,
                             uint64_t key, int home_rank, void *ptr, size_t size, bool owns)
{
    return rill_data_init_pinned(data, ctx, dc, key, home_rank, ptr, size, owns, false);
}

rill_status_t rill_data_init_pinned(rill_data_t *data, rill_context_t *ctx, rill_collection_t *dc,
                                    uint64_t key, int home_rank, void *ptr, size_t size, bool owns,
                                    bool pinned)
{
    memset(data, 0, sizeof(*data));
    data->ctx = ctx;
    data->dc = dc;
    data->key = key;
    data->home_rank = home_rank;
    data->size = size;
    atomic_init(&data->version, 0);
    for (int i = 0; i < RILL_MAX_DEVICES; i++)
        atomic_init(&data->copies[i], NULL);
    if (ptr) {
        rill_data_copy_t *c = copy_new(data, 0, ptr, owns, pinned, RILL_COHERENCY_OWNED);
        if (!c)
            return RILL_ERR_NO_MEMORY;
        atomic_store_explicit(&data->copies[0], c, memory_order_release);
    }
    return RILL_SUCCESS;
}

rill_data_copy_t *rill_data_host_ensure(rill_data_t *data)
{
    rill_data_copy_t *c = rill_data_host_copy(data);
    if (c)
        return c;
    bool pinned;
    /* another rank's datum: with GPUs its versions may land in GPU memory only, so its host
     * buffer is page-locked when a GPU first copies through it (rill_data_copy_pin), not
     * here (registering stalls the GPUs' launches; see rill_host_tile_alloc) */
    void *ptr = tile_alloc(data->size, &pinned, data->home_rank != data->ctx->rank);
    if (!ptr)
        return NULL;
    /* no bytes yet: a receive or a write fills it */
    c = copy_new(data, 0, ptr, true, pinned, RILL_COHERENCY_INVALID);
    if (!c) {
        rill_host_tile_free(ptr, data->size, pinned);
        return NULL;
    }
    atomic_store_explicit(&data->copies[0], c, memory_order_release);
    return c;
}

uint64_t rill_data_wrote(rill_data_t *data, int dev)
{
    uint64_t v = atomic_fetch_add_explicit(&data->version, 1, memory_order_acq_rel) + 1;
    rill_data_copy_t *c = rill_data_copy(data, dev);
    if (c) {
        atomic_store_explicit(&c->version, v, memory_order_release);
        atomic_store_explicit(&c->coherency, RILL_COHERENCY_OWNED, memory_order_release);
    }
    return v;
}

void rill_data_fini(rill_data_t *data)
{
    /* the GPUs' copies first: a copy of one may be landing in the host copy, which is
     * freed last, once every manager let go of its copy (copy_release waits for that) */
    for (int i = RILL_MAX_DEVICES - 1; i >= 0; i--) {
        rill_data_copy_t *c = atomic_load_explicit(&data->copies[i], memory_order_acquire);
        if (!c)
            continue;
        atomic_store_explicit(&data->copies[i], NULL, memory_order_relaxed);
        if (i > 0 && rill_data_copy_release_hook) {
            rill_data_copy_release_hook(c); /* its GPU manager frees it */
            continue;
        }
        if (i > 0)
            free(c->dev_priv); /* the managers stopped: their bookkeeping is ours to free */
        if (c->owns_ptr)
            rill_host_tile_free(c->ptr, data->size, c->pinned);
        free(c);
    }
}

rill_status_t rill_data_create(rill_context_t *ctx, void *ptr, size_t size, rill_data_t **data_p)
{
    static atomic_ullong next_key;
    if (!ctx || !data_p) {
        RILL_ERROR(RILL_LOG_DATA, "rill_data_create: ctx and data_p must not be NULL");
        return RILL_ERR_INVALID_ARG;
    }
    if (!ptr) {
        RILL_ERROR(RILL_LOG_DATA,
                   "rill_data_create: the data pointer is NULL (size %zu); pass "
                   "the address of the tile's storage",
                   size);
        return RILL_ERR_INVALID_ARG;
    }
    if (size > RILL_DATUM_MAX) {
        RILL_ERROR(RILL_LOG_DATA, "rill_data_create: a datum of %zu bytes; at most 2^46", size);
        return RILL_ERR_INVALID_ARG;
    }
    rill_data_t *data = malloc(sizeof(*data));
    if (!data)
        return RILL_ERR_NO_MEMORY;
    rill_status_t s = rill_data_init(data, ctx, NULL, atomic_fetch_add(&next_key, 1), ctx->rank,
                                     ptr, size, false);
    if (s != RILL_SUCCESS) {
        free(data);
        return s;
    }
    *data_p = data;
    return RILL_SUCCESS;
}

void rill_data_use(rill_data_t *data, uint32_t tp_id)
{
    data->users++;
    data->user_tp = tp_id;
    if (data->dc)
        rill_collection_use(data->dc, tp_id);
}

void rill_data_unuse(rill_data_t *data)
{
    data->users--;
    if (data->dc)
        rill_collection_unuse(data->dc);
    /* a remote datum's host buffer lives while taskpools use it: the next one receives the
     * version it needs again. Not when a GPU has a copy: its manager may be writing that
     * copy into the buffer (an eviction's write-back, under `landing`) or about to, having
     * read the host copy's address; rill_data_fini frees it once the managers let go */
    rill_data_copy_t *c = rill_data_host_copy(data);
    bool on_gpu = false;
    for (int i = 1; i < RILL_MAX_DEVICES && !on_gpu; i++)
        on_gpu = atomic_load_explicit(&data->copies[i], memory_order_acquire) != NULL;
    if (data->users == 0 && c && data->home_rank != data->ctx->rank && !on_gpu) {
        atomic_store_explicit(&data->copies[0], NULL, memory_order_release);
        if (c->owns_ptr)
            rill_host_tile_free(c->ptr, data->size, c->pinned);
        free(c);
    }
}

rill_status_t rill_data_destroy(rill_data_t **data_p)
{
    if (!data_p || !*data_p)
        return rill_arg_null("rill_data_destroy", data_p ? "*data_p (the datum)" : "data_p");
    if (rill_worker_check_main("rill_data_destroy", true) != RILL_SUCCESS)
        return RILL_ERR_BAD_STATE;
    if ((*data_p)->dc) {
        RILL_ERROR(RILL_LOG_DATA, "rill_data_destroy: this datum belongs to a collection; "
                                  "destroy the collection instead");
        return RILL_ERR_INVALID_ARG;
    }
    if ((*data_p)->users) {
        RILL_ERROR(RILL_LOG_DATA,
                   "rill_data_destroy: the datum (%zu bytes at %p) is used by taskpool %u, which "
                   "was not waited for; call rill_taskpool_wait on it first",
                   (*data_p)->size, rill_data_ptr(*data_p), (*data_p)->user_tp);
        return RILL_ERR_BUSY;
    }
    rill_data_fini(*data_p);
    free(*data_p);
    *data_p = NULL;
    return RILL_SUCCESS;
}

void *rill_data_ptr(const rill_data_t *data)
{
    rill_data_copy_t *c = data ? rill_data_host_copy(data) : NULL;
    /* a remote datum's buffer (rill_data_host_ensure) is not the user's to see */
    return c && data->home_rank == data->ctx->rank ? c->ptr : NULL;
}

size_t rill_data_size(const rill_data_t *data)
{
    return data ? data->size : 0;
}

int rill_data_rank(const rill_data_t *data)
{
    return data ? data->home_rank : -1;
}

/* ------------------------------------------------------------ keyed collections */

static rill_status_t collection_init(rill_collection_t *dc, rill_context_t *ctx, size_t datum_size,
                                     rill_collection_rank_fn rank_of, void *arg)
{
    dc->ctx = ctx;
    dc->id = ctx->next_collection_id++;
    dc->datum_size = datum_size;
    dc->rank_of = rank_of;
    dc->arg = arg;
    dc->users = 0;
    dc->user_tp = 0;
    dc->scratch = false;
    rill_hmap_init(&dc->data);
    pthread_mutex_init(&dc->lock, NULL);
    return RILL_SUCCESS;
}

static void collection_fini(rill_collection_t *dc)
{
    RILL_HMAP_FOREACH(&dc->data, e)
    {
        rill_data_fini(e->val);
        free(e->val);
    }
    rill_hmap_fini(&dc->data);
    pthread_mutex_destroy(&dc->lock);
}

rill_status_t rill_collection_create(rill_context_t *ctx, size_t datum_size,
                                     rill_collection_rank_fn rank_of, void *arg,
                                     rill_collection_t **dc_p)
{
    if (!ctx || !rank_of || !dc_p || datum_size == 0 || datum_size > RILL_DATUM_MAX) {
        RILL_ERROR(RILL_LOG_DATA,
                   "rill_collection_create: needs a context, a rank_of function, "
                   "an output pointer and a datum size in 1 .. 2^46 (got %zu)",
                   datum_size);
        return RILL_ERR_INVALID_ARG;
    }
    rill_collection_t *dc = malloc(sizeof(*dc));
    if (!dc)
        return RILL_ERR_NO_MEMORY;
    collection_init(dc, ctx, datum_size, rank_of, arg);
    *dc_p = dc;
    return RILL_SUCCESS;
}

void rill_collection_use(rill_collection_t *dc, uint32_t tp_id)
{
    dc->users++;
    dc->user_tp = tp_id;
}

void rill_collection_unuse(rill_collection_t *dc)
{
    dc->users--;
}

/* A collection in use by a taskpool that has not ended may not go. */
static rill_status_t collection_check_unused(const rill_collection_t *dc, const char *call)
{
    if (!dc->users)
        return RILL_SUCCESS;
    RILL_ERROR(RILL_LOG_DATA,
               "%s: collection %u has data used by taskpool %u, which was not waited for; call "
               "rill_taskpool_wait on it first",
               call, dc->id, dc->user_tp);
    return RILL_ERR_BUSY;
}

rill_status_t rill_collection_destroy(rill_collection_t **dc_p)
{
    if (!dc_p || !*dc_p)
        return rill_arg_null("rill_collection_destroy", dc_p ? "*dc_p (the collection)" : "dc_p");
    if (rill_worker_check_main("rill_collection_destroy", true) != RILL_SUCCESS)
        return RILL_ERR_BAD_STATE;
    rill_status_t s = collection_check_unused(*dc_p, "rill_collection_destroy");
    if (s != RILL_SUCCESS)
        return s;
    collection_fini(*dc_p);
    free(*dc_p);
    *dc_p = NULL;
    return RILL_SUCCESS;
}

rill_status_t rill_collection_set_scratch(rill_collection_t *dc)
{
    if (!dc)
        return rill_arg_null("rill_collection_set_scratch", "the collection");
    if (dc->data.count > 0) {
        RILL_ERROR(RILL_LOG_DATA,
                   "rill_collection_set_scratch: collection %u already has data; call it "
                   "right after rill_collection_create",
                   dc->id);
        return RILL_ERR_BAD_STATE;
    }
    dc->scratch = true;
    return RILL_SUCCESS;
}

int rill_collection_in_use(const rill_collection_t *dc)
{
    return dc && dc->users > 0;
}

int rill_collection_rank_of(const rill_collection_t *dc, uint64_t key)
{
    if (!dc)
        return -1;
    return dc->rank_of(key, dc->arg);
}

/* The datum of key, created on first use with local storage of size bytes when this
 * rank is its home (zero-filled, owned by the datum). */
static rill_data_t *collection_datum(rill_collection_t *dc, uint64_t key, size_t size)
{
    rill_data_t *data = rill_hmap_get(&dc->data, key);
    if (data)
        return data;
    int rank = dc->rank_of(key, dc->arg);
    if (rank < 0 || rank >= dc->ctx->nranks) {
        RILL_ERROR(RILL_LOG_DATA, "collection %u: rank_of(key %llu) = %d, outside 0..%d", dc->id,
                   (unsigned long long)key, rank, dc->ctx->nranks - 1);
        return NULL;
    }
    data = malloc(sizeof(*data));
    if (!data)
        return NULL;
    void *ptr = NULL;
    bool pinned = false;
    if (rank == dc->ctx->rank) {
        ptr = dc->scratch ? rill_host_tile_alloc_lazy(size, &pinned)
                          : rill_host_tile_alloc(size, &pinned);
        if (!ptr) {
            free(data);
            return NULL;
        }
        if (!dc->scratch)
            memset(ptr, 0, size);
    }
    if (rill_data_init_pinned(data, dc->ctx, dc, key, rank, ptr, size, true, pinned) !=
        RILL_SUCCESS) {
        rill_host_tile_free(ptr, size, pinned); /* no copy took it */
        goto err_free_data;
    }
    if (rill_hmap_put(&dc->data, key, data) != RILL_SUCCESS) {
        rill_data_fini(data); /* frees ptr with the copy that owns it */
        goto err_free_data;
    }
    return data;
err_free_data:
    free(data);
    return NULL;
}

rill_data_t *rill_collection_data_of(rill_collection_t *dc, uint64_t key)
{
    if (!dc)
        return NULL;
    pthread_mutex_lock(&dc->lock);
    rill_data_t *d = collection_datum(dc, key, dc->datum_size);
    pthread_mutex_unlock(&dc->lock);
    return d;
}

/* ------------------------------------------------------------ tiled matrices */

struct rill_matrix {
    rill_collection_t dc; /* first: the collection of the tiles */
    int m, n, mb, nb, mt, nt, P, Q;
    rill_matrix_dist_t dist;
    int64_t period; /* skewed on several grid columns: lcm(P, Q) tile rows a shift; else 0 */
    double **local; /* mt x nt: local tile storage, NULL for remote tiles; fixed after create */
    rill_data_t **local_data; /* mt x nt: their data, likewise */
};

/* Skewed on a grid of several columns keeps each tile row on one grid row, as block-cyclic
 * does (a tile goes to no more ranks than there), and shifts it by one every L = lcm(P, Q)
 * tile rows: the first L rows give the diagonal tiles the ranks (i % P, i % Q), those whose
 * grid row and column agree modulo g = gcd(P, Q); each of the next g - 1 shifts takes them
 * to another such class, so that the first P Q diagonal tiles go on every rank; and the
 * longer rows of the triangle take turns. That period, 0 where it does not apply. */
static int64_t skew_period(rill_matrix_dist_t dist, int P, int Q)
{
    if (dist != RILL_MATRIX_SKEWED || Q == 1)
        return 0;
    int a = P, b = Q; /* gcd(P, Q) */
    while (b) {
        int r = a % b;
        a = b;
        b = r;
    }
    return (int64_t)P / a * Q;
}

/* The grid row of tile (i, j) over P grid rows; period: skew_period's (a matrix keeps it,
 * matrix_rank runs for every tile a task names). */
static int grid_row(rill_matrix_dist_t dist, int i, int j, int P, int64_t period)
{
    int64_t shift = 0; /* in 64 bits: i, j < 2^30 tiles */
    if (dist == RILL_MATRIX_DIAGONAL)
        shift = j;
    else if (dist == RILL_MATRIX_SKEWED)
        shift = period ? i / period : (int64_t)j + j / P;
    return (int)((i + shift) % P);
}

int rill_matrix_grid_row(rill_matrix_dist_t dist, int i, int j, int P, int Q)
{
    return grid_row(dist, i, j, P, skew_period(dist, P, Q));
}

static int matrix_rank(const rill_matrix_t *A, int i, int j)
{
    return grid_row(A->dist, i, j, A->P, A->period) * A->Q + (j % A->Q);
}

static int matrix_rank_of(uint64_t key, void *arg)
{
    const rill_matrix_t *A = arg;
    return matrix_rank(A, (int)(key / (uint64_t)A->nt), (int)(key % (uint64_t)A->nt));
}

rill_status_t rill_matrix_create(rill_context_t *ctx, int m, int n, int mb, int nb, int P, int Q,
                                 rill_matrix_t **A_p)
{
    return rill_matrix_create_dist(ctx, m, n, mb, nb, P, Q, RILL_MATRIX_CYCLIC, A_p);
}

rill_status_t rill_matrix_create_dist(rill_context_t *ctx, int m, int n, int mb, int nb, int P,
                                      int Q, rill_matrix_dist_t dist, rill_matrix_t **A_p)
{
    if (!ctx || !A_p)
        return rill_arg_null("rill_matrix_create_dist", ctx ? "A_p" : "the context");
    if (m < 0 || n < 0 || mb <= 0 || nb <= 0 || P <= 0 || Q <= 0) {
        RILL_ERROR(RILL_LOG_DATA,
                   "rill_matrix_create: m=%d n=%d mb=%d nb=%d P=%d Q=%d: sizes must be >= 0, tile "
                   "sizes and the process grid > 0",
                   m, n, mb, nb, P, Q);
        return RILL_ERR_INVALID_ARG;
    }
    if (dist != RILL_MATRIX_CYCLIC && dist != RILL_MATRIX_DIAGONAL && dist != RILL_MATRIX_SKEWED) {
        RILL_ERROR(RILL_LOG_DATA,
                   "rill_matrix_create_dist: distribution %d: allowed are RILL_MATRIX_CYCLIC "
                   "(0), RILL_MATRIX_DIAGONAL (1) and RILL_MATRIX_SKEWED (2)",
                   (int)dist);
        return RILL_ERR_INVALID_ARG;
    }
    if ((long long)P * Q != ctx->nranks) { /* in 64 bits: 641 x 6700417 wraps to 1 in int */
        RILL_ERROR(RILL_LOG_DATA,
                   "rill_matrix_create: the process grid P x Q = %d x %d = %lld does not match "
                   "the %d rank(s) of this run; choose P and Q with P * Q = %d",
                   P, Q, (long long)P * Q, ctx->nranks, ctx->nranks);
        return RILL_ERR_MISMATCH;
    }
    /* sizes in 64 bits: m + mb - 1 and mt * nt overflow an int for large matrices */
    const long long mt = ((long long)m + mb - 1) / mb, nt = ((long long)n + nb - 1) / nb;
    const long double tile_bytes = (long double)mb * (long double)nb * 8.0L;
    const unsigned long long ntiles = (unsigned long long)mt * (unsigned long long)nt;
    /* the tiles this rank holds (at most those of its share, rounded up) */
    const unsigned long long mine = ntiles / (unsigned long long)ctx->nranks + mt + nt;
    const long double bytes = (long double)mine * (long double)tile_bytes;
    if (bytes > (long double)SIZE_MAX / 2 || tile_bytes > (long double)SIZE_MAX / 2 ||
        ntiles > SIZE_MAX / (2 * sizeof(void *))) {
        RILL_ERROR(RILL_LOG_DATA,
                   "rill_matrix_create: an %d x %d matrix of %d x %d tiles on %d rank(s) is "
                   "%llu x %llu tiles of %.3Lg bytes, about %.3Lg bytes per "
                   "rank: more than this process can address; choose smaller sizes or more ranks",
                   m, n, mb, nb, ctx->nranks, (unsigned long long)mt, (unsigned long long)nt,
                   tile_bytes, bytes);
        return RILL_ERR_INVALID_ARG;
    }
    /* the local tiles are allocated here: more than the machine's memory can only end in
     * the kernel killing the process later (ranks of one node share it: each is told) */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    long double phys = pages > 0 && page > 0 ? (long double)pages * page : 0;
    if (phys > 0 && (long double)(ntiles / (unsigned long long)ctx->nranks) * tile_bytes > phys) {
        RILL_ERROR(RILL_LOG_DATA,
                   "rill_matrix_create: an %d x %d matrix on %d rank(s) needs about %.3Lg bytes "
                   "of tiles per rank, more than this machine's %.3Lg bytes of memory; choose "
                   "smaller sizes or more ranks",
                   m, n, ctx->nranks,
                   (long double)(ntiles / (unsigned long long)ctx->nranks) * tile_bytes, phys);
        return RILL_ERR_NO_MEMORY;
    }
    rill_matrix_t *A = calloc(1, sizeof(*A));
    if (!A)
        return RILL_ERR_NO_MEMORY;
    A->m = m;
    A->n = n;
    A->mb = mb;
    A->nb = nb;
    A->mt = (int)mt;
    A->nt = (int)nt;
    A->P = P;
    A->Q = Q;
    A->dist = dist;
    A->period = skew_period(dist, P, Q);
    collection_init(&A->dc, ctx, (size_t)mb * (size_t)nb * sizeof(double), matrix_rank_of, A);
    A->local = calloc((size_t)A->mt * (size_t)A->nt + 1, sizeof(double *));
    A->local_data = calloc((size_t)A->mt * (size_t)A->nt + 1, sizeof(rill_data_t *));
    if (!A->local || !A->local_data)
        goto err_nomem;
    /* create the local tiles now so their storage exists for in-place generation */
    for (int i = 0; i < A->mt; i++)
        for (int j = 0; j < A->nt; j++) {
            if (rill_matrix_tile_rank(A, i, j) != ctx->rank)
                continue;
            rill_data_t *d = rill_matrix_tile(A, i, j);
            if (!d)
                goto err_nomem;
            A->local[(size_t)i * (size_t)A->nt + (size_t)j] = rill_data_ptr(d);
            A->local_data[(size_t)i * (size_t)A->nt + (size_t)j] = d;
        }
    *A_p = A;
    return RILL_SUCCESS;

err_nomem:
    RILL_ERROR(RILL_LOG_DATA,
               "rill_matrix_create: out of memory for an %d x %d matrix of %d x %d tiles on %d "
               "rank(s) (%d x %d tiles of %.3Lg bytes; this rank holds about %.3Lg bytes)",
               m, n, mb, nb, ctx->nranks, A->mt, A->nt, tile_bytes, bytes);
    collection_fini(&A->dc);
    free(A->local);
    free(A->local_data);
    free(A);
    return RILL_ERR_NO_MEMORY;
}

rill_status_t rill_matrix_advise_gpus(rill_matrix_t *A)
{
    if (!A)
        return rill_arg_null("rill_matrix_advise_gpus", "the matrix");
    int ngpus = rill_device_count() - 1;
    if (ngpus < 2)
        return RILL_SUCCESS;
    /* over the GPUs as the ranks' tiles over the grid rows, diagonally for a cyclic matrix
     * (its own GPU for each tile row of a rank, as for its rows, would give one GPU the
     * longer rows of the triangle) */
    rill_matrix_dist_t by = A->dist == RILL_MATRIX_CYCLIC ? RILL_MATRIX_DIAGONAL : A->dist;
    for (int i = 0; i < A->mt; i++)
        for (int j = 0; j < A->nt; j++) {
            if (rill_matrix_tile_rank(A, i, j) != A->dc.ctx->rank)
                continue;
            rill_data_t *d = rill_matrix_tile(A, i, j);
            if (!d)
                return RILL_ERR_NO_MEMORY;
            d->advised = 1 + grid_row(by, i / A->P, j / A->Q, ngpus, 0); /* (ngpus x 1) */
        }
    return RILL_SUCCESS;
}

rill_status_t rill_matrix_destroy(rill_matrix_t **A_p)
{
    if (!A_p || !*A_p)
        return rill_arg_null("rill_matrix_destroy", A_p ? "*A_p (the matrix)" : "A_p");
    if (rill_worker_check_main("rill_matrix_destroy", true) != RILL_SUCCESS)
        return RILL_ERR_BAD_STATE;
    rill_status_t s = collection_check_unused(&(*A_p)->dc, "rill_matrix_destroy");
    if (s != RILL_SUCCESS)
        return s;
    collection_fini(&(*A_p)->dc);
    free((*A_p)->local);
    free((*A_p)->local_data);
    free(*A_p);
    *A_p = NULL;
    return RILL_SUCCESS;
}

int rill_matrix_m(const rill_matrix_t *A)
{
    if (!A)
        return -1;
    return A->m;
}
int rill_matrix_n(const rill_matrix_t *A)
{
    if (!A)
        return -1;
    return A->n;
}
int rill_matrix_mb(const rill_matrix_t *A)
{
    if (!A)
        return -1;
    return A->mb;
}
int rill_matrix_nb(const rill_matrix_t *A)
{
    if (!A)
        return -1;
    return A->nb;
}
int rill_matrix_mt(const rill_matrix_t *A)
{
    if (!A)
        return -1;
    return A->mt;
}
int rill_matrix_nt(const rill_matrix_t *A)
{
    if (!A)
        return -1;
    return A->nt;
}
int rill_matrix_P(const rill_matrix_t *A)
{
    if (!A)
        return -1;
    return A->P;
}
int rill_matrix_Q(const rill_matrix_t *A)
{
    if (!A)
        return -1;
    return A->Q;
}

int rill_matrix_tile_rows(const rill_matrix_t *A, int i)
{
    if (!A || i < 0 || i >= A->mt)
        return -1;
    return (i == A->mt - 1 && A->m % A->mb) ? A->m % A->mb : A->mb;
}

int rill_matrix_tile_cols(const rill_matrix_t *A, int j)
{
    if (!A || j < 0 || j >= A->nt)
        return -1;
    return (j == A->nt - 1 && A->n % A->nb) ? A->n % A->nb : A->nb;
}

int rill_matrix_tile_rank(const rill_matrix_t *A, int i, int j)
{
    if (!A || i < 0 || j < 0 || i >= A->mt || j >= A->nt)
        return -1;
    return matrix_rank(A, i, j);
}

rill_matrix_dist_t rill_matrix_dist(const rill_matrix_t *A)
{
    if (!A)
        return (rill_matrix_dist_t)-1;
    return A->dist;
}

rill_data_t *rill_matrix_tile(rill_matrix_t *A, int i, int j)
{
    if (!A)
        return NULL;
    if (i < 0 || j < 0 || i >= A->mt || j >= A->nt) {
        RILL_ERROR(RILL_LOG_DATA, "rill_matrix_tile(%d, %d): outside the %d x %d tiles", i, j,
                   A->mt, A->nt);
        return NULL;
    }
    size_t bytes =
        (size_t)rill_matrix_tile_rows(A, i) * (size_t)rill_matrix_tile_cols(A, j) * sizeof(double);
    pthread_mutex_lock(&A->dc.lock);
    rill_data_t *d = collection_datum(&A->dc, (uint64_t)i * (uint64_t)A->nt + (uint64_t)j, bytes);
    pthread_mutex_unlock(&A->dc.lock);
    return d;
}

double *rill_matrix_tile_ptr(rill_matrix_t *A, int i, int j)
{
    if (!A)
        return NULL;
    if (i < 0 || j < 0 || i >= A->mt || j >= A->nt)
        return NULL;
    return A->local[(size_t)i * (size_t)A->nt + (size_t)j];
}

double *rill_matrix_tile_write(rill_matrix_t *A, int i, int j)
{
    rill_data_t *d = rill_matrix_tile_local(A, i, j);
    if (!d)
        return NULL;
    rill_data_copy_t *h = rill_data_copy(d, 0);
    if (!h || !rill_data_copy_current(d, h)) {
        RILL_ERROR(RILL_LOG_DATA,
                   "rill_matrix_tile_write: tile (%d, %d)'s newest version is not in host "
                   "memory; wait for the taskpool that writes it first",
                   i, j);
        return NULL;
    }
    rill_data_wrote(d, 0); /* the host copy alone is current: GPU copies are stale */
    return rill_matrix_tile_ptr(A, i, j);
}

rill_data_t *rill_matrix_tile_local(rill_matrix_t *A, int i, int j)
{
    if (!A)
        return NULL;
    if (i < 0 || j < 0 || i >= A->mt || j >= A->nt)
        return NULL;
    return A->local_data[(size_t)i * (size_t)A->nt + (size_t)j];
}

rill_collection_t *rill_matrix_collection(rill_matrix_t *A)
{
    if (!A)
        return NULL;
    return &A->dc;
}
