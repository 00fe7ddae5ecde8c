/* The channel primitives, host side: stream memory operations, registered memory and its
 * IPC mappings, port channel FIFOs, bounded stream waits. */
#include "channel.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rill/params.h"

#include "device.h"

static rill_param_t *p_spin, *p_slots, *p_max_waits;

static const rill_param_decl_t channel_params[] = {
    { "device_channel_spin_limit", RILL_PARAM_SIZE, RILL_PARAM_LEVEL_TUNER,
      "Rounds a GPU thread spins on a semaphore, a full FIFO or a flush before it gives up with "
      "an error naming what it waited for (a round is about a quarter to half a microsecond on "
      "a host word): raise it when kernels legitimately wait longer",
      .v.u = { 100000000ull, 1000ull, 1ull << 60 }, .param = &p_spin },
    { "device_channel_fifo_slots", RILL_PARAM_INT, RILL_PARAM_LEVEL_TUNER,
      "Slots of a port channel's FIFO (16 bytes each, pinned host memory); a power of two",
      .v.i = { 512, 2, 1 << 20 }, .param = &p_slots },
    { "device_stream_max_waits", RILL_PARAM_INT, RILL_PARAM_LEVEL_TUNER,
      "Semaphore waits (cuStreamWaitValue64) that may be outstanding on one stream; one more is "
      "refused (enqueued later), since a stream's full command queue blocks the thread that "
      "enqueues",
      .v.i = { 64, 1, 4096 }, .param = &p_max_waits },
};

rill_status_t rill_channel_register_params(void)
{
    return rill_params_register_table(channel_params,
                                      sizeof(channel_params) / sizeof(channel_params[0]));
}

uint64_t rill_channel_spin_limit(void)
{
    return p_spin ? rill_param_get_size(p_spin) : 100000000ull;
}

uint32_t rill_channel_fifo_slots(void)
{
    uint32_t n = p_slots ? (uint32_t)rill_param_get_int(p_slots) : 512;
    uint32_t p = 2;
    while (p < n && p < (1u << 20))
        p <<= 1;
    return p; /* rounded up to a power of two */
}

#if RILL_HAVE_CUDA
#include <cuda.h>         /* the driver API's types and flags */
#include <cudaTypedefs.h> /* its entry points' types, by version */

/* ------------------------------------------------------------ driver entry points */

static pthread_once_t entry_once = PTHREAD_ONCE_INIT;
static PFN_cuStreamWaitValue64_v11070 p_wait64;
static PFN_cuStreamWriteValue64_v11070 p_write64;
static PFN_cuMemGetAddressRange_v3020 p_range;
static char entry_err[160];

static void entry_load(void)
{
    struct {
        const char *name;
        void **fn;
    } want[] = { { "cuStreamWaitValue64", (void **)&p_wait64 },
                 { "cuStreamWriteValue64", (void **)&p_write64 },
                 { "cuMemGetAddressRange", (void **)&p_range } };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        cudaError_t e = cudaGetDriverEntryPointByVersion(want[i].name, want[i].fn, 12000,
                                                         cudaEnableDefault, &q);
        if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !*want[i].fn) {
            snprintf(entry_err, sizeof(entry_err), "the CUDA driver has no %s (%s)", want[i].name,
                     e != cudaSuccess ? cudaGetErrorString(e) : "symbol not found");
            *want[i].fn = NULL;
        }
    }
}

static bool entry_ready(char *err, size_t len)
{
    pthread_once(&entry_once, entry_load);
    if (p_wait64 && p_write64 && p_range)
        return true;
    snprintf(err, len, "%s", entry_err[0] ? entry_err : "CUDA driver entry points missing");
    return false;
}

static void cu_err(char *err, size_t len, const char *call, CUresult r)
{
    snprintf(err, len, "%s failed: CUDA driver error %d", call, (int)r);
}

rill_status_t rill_cu_stream_wait64(cudaStream_t s, const uint64_t *addr, uint64_t value, char *err,
                                    size_t len)
{
    if (!entry_ready(err, len))
        return RILL_ERR_NOT_SUPPORTED;
    CUresult r =
        p_wait64((CUstream)s, (CUdeviceptr)(uintptr_t)addr, value, CU_STREAM_WAIT_VALUE_GEQ);
    if (r != CUDA_SUCCESS) {
        cu_err(err, len, "cuStreamWaitValue64", r);
        return RILL_ERR_DEVICE;
    }
    return RILL_SUCCESS;
}

rill_status_t rill_cu_stream_write64(cudaStream_t s, uint64_t *addr, uint64_t value, char *err,
                                     size_t len)
{
    if (!entry_ready(err, len))
        return RILL_ERR_NOT_SUPPORTED;
    /* default flags: the write waits for the stream's earlier work and is preceded by a
     * memory barrier, so that work's writes are visible before the value */
    CUresult r =
        p_write64((CUstream)s, (CUdeviceptr)(uintptr_t)addr, value, CU_STREAM_WRITE_VALUE_DEFAULT);
    if (r != CUDA_SUCCESS) {
        cu_err(err, len, "cuStreamWriteValue64", r);
        return RILL_ERR_DEVICE;
    }
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------ registered memory */

static uint64_t process_id;
static pthread_once_t process_once = PTHREAD_ONCE_INIT;

static void process_id_make(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t v = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec;
    process_id = v ? v : 1;
}

uint64_t rill_regmem_process_id(void)
{
    pthread_once(&process_once, process_id_make);
    return process_id;
}

rill_status_t rill_regmem_describe(const void *ptr, size_t size, int ordinal, int rank,
                                   uint64_t node, rill_regmem_t *r, char *err, size_t len)
{
    memset(r, 0, sizeof(*r));
    if (!entry_ready(err, len))
        return RILL_ERR_NOT_SUPPORTED;
    CUdeviceptr base = 0;
    size_t bsize = 0;
    CUresult cr = p_range(&base, &bsize, (CUdeviceptr)(uintptr_t)ptr);
    if (cr != CUDA_SUCCESS) {
        snprintf(err, len,
                 "%p is not device memory of GPU %d (cuMemGetAddressRange: CUDA driver error %d)",
                 ptr, ordinal, (int)cr);
        return RILL_ERR_INVALID_ARG;
    }
    uint64_t off = (uint64_t)(uintptr_t)ptr - (uint64_t)base;
    if (off + size > bsize) {
        snprintf(err, len,
                 "[%p, + %zu) runs past the end of its allocation (%zu bytes at 0x%llx): a "
                 "registered region lies in one allocation",
                 ptr, size, bsize, (unsigned long long)base);
        return RILL_ERR_INVALID_ARG;
    }
    cudaIpcMemHandle_t h;
    cudaError_t e = cudaIpcGetMemHandle(&h, (void *)(uintptr_t)base);
    if (e != cudaSuccess) {
        snprintf(err, len, "cudaIpcGetMemHandle on GPU %d: %s", ordinal, cudaGetErrorString(e));
        return RILL_ERR_DEVICE;
    }
    _Static_assert(sizeof(h) <= sizeof(r->ipc), "IPC handle size");
    memcpy(r->ipc, &h, sizeof(h));
    r->magic = RILL_REGMEM_MAGIC;
    r->rank = rank;
    r->ordinal = ordinal;
    r->process = rill_regmem_process_id();
    r->node = node;
    r->base = (uint64_t)base;
    r->base_size = bsize;
    r->offset = off;
    r->size = size;
    return RILL_SUCCESS;
}

/* IPC mappings of other processes' allocations: one per (process, allocation, device current
 * here), opened once and closed at rill_fini, so a second rill_init finds none left. Per
 * device: a mapping is opened in the current device's context, with peer access enabled
 * from that device. */
typedef struct ipc_map {
    uint64_t process, base;
    int ordinal; /* the device current when it was opened */
    void *ptr;
    struct ipc_map *next;
} ipc_map_t;
static pthread_mutex_t ipc_lock = PTHREAD_MUTEX_INITIALIZER;
static ipc_map_t *ipc_maps;

rill_status_t rill_regmem_map(const rill_regmem_t *r, void **ptr, char *err, size_t len)
{
    *ptr = NULL;
    if (r->magic != RILL_REGMEM_MAGIC) {
        snprintf(err, len, "not a registered-memory descriptor (bad magic 0x%08x)", r->magic);
        return RILL_ERR_INVALID_ARG;
    }
    if (r->process == rill_regmem_process_id()) { /* this process: peer access suffices */
        *ptr = (char *)(uintptr_t)r->base + r->offset;
        return RILL_SUCCESS;
    }
    int cur = -1;
    cudaGetDevice(&cur);
    pthread_mutex_lock(&ipc_lock);
    ipc_map_t *m = ipc_maps;
    while (m && !(m->process == r->process && m->base == r->base && m->ordinal == cur))
        m = m->next;
    rill_status_t s = RILL_SUCCESS;
    if (!m) {
        cudaIpcMemHandle_t h;
        memcpy(&h, r->ipc, sizeof(h));
        void *p = NULL;
        cudaError_t e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
        if (e != cudaSuccess) {
            snprintf(err, len, "cudaIpcOpenMemHandle of rank %d's GPU %d memory: %s (%s)", r->rank,
                     r->ordinal, cudaGetErrorString(e), cudaGetErrorName(e));
            s = RILL_ERR_DEVICE;
        } else if (!(m = malloc(sizeof(*m)))) {
            cudaIpcCloseMemHandle(p);
            snprintf(err, len, "out of host memory");
            s = RILL_ERR_NO_MEMORY;
        } else {
            *m = (ipc_map_t){
                .process = r->process, .base = r->base, .ordinal = cur, .ptr = p, .next = ipc_maps
            };
            ipc_maps = m;
        }
    }
    if (m)
        *ptr = (char *)m->ptr + r->offset;
    pthread_mutex_unlock(&ipc_lock);
    return s;
}

void rill_regmem_unmap_all(int ordinal)
{
    pthread_mutex_lock(&ipc_lock);
    ipc_map_t **pp = &ipc_maps;
    while (*pp) {
        ipc_map_t *m = *pp;
        if (ordinal >= 0 && m->ordinal != ordinal) {
            pp = &m->next;
            continue;
        }
        cudaIpcCloseMemHandle(m->ptr);
        *pp = m->next;
        free(m);
    }
    pthread_mutex_unlock(&ipc_lock);
}

/* ------------------------------------------------------------ FIFO */

rill_status_t rill_fifo_init(rill_fifo_t *f, uint32_t size, uint32_t id, void *dev_words,
                             rill_dev_error_t *err_dev, cudaStream_t s, char *err, size_t len)
{
    memset(f, 0, sizeof(*f));
    if (size < 2 || (size & (size - 1))) {
        snprintf(err, len, "FIFO size %u is not a power of two >= 2", size);
        return RILL_ERR_INVALID_ARG;
    }
    cudaError_t e = cudaHostAlloc((void **)&f->ring, sizeof(rill_trigger_t) * size,
                                  cudaHostAllocMapped | cudaHostAllocPortable);
    if (e == cudaSuccess)
        e = cudaHostAlloc((void **)&f->tail_word, 64, cudaHostAllocMapped | cudaHostAllocPortable);
    if (e != cudaSuccess) {
        snprintf(err, len, "cudaHostAlloc of a FIFO (%u slots): %s", size, cudaGetErrorString(e));
        rill_fifo_fini(f);
        return RILL_ERR_NO_MEMORY;
    }
    memset(f->ring, 0, sizeof(rill_trigger_t) * size);
    memset(f->tail_word, 0, 64);
    f->size = size;
    f->dev.size = size;
    f->dev.id = id;
    f->dev.spin_limit = rill_channel_spin_limit();
    f->dev.err = err_dev;
    f->dev.head = (unsigned long long *)dev_words;
    f->dev.tail_cache = (uint64_t *)dev_words + 1;
    if ((e = cudaHostGetDevicePointer((void **)&f->dev.ring, f->ring, 0)) != cudaSuccess ||
        (e = cudaHostGetDevicePointer((void **)&f->dev.tail, f->tail_word, 0)) != cudaSuccess ||
        (e = cudaMemsetAsync(dev_words, 0, 16, s)) != cudaSuccess ||
        (e = cudaStreamSynchronize(s)) != cudaSuccess) {
        snprintf(err, len, "setting up a FIFO: %s", cudaGetErrorString(e));
        rill_fifo_fini(f);
        return RILL_ERR_DEVICE;
    }
    return RILL_SUCCESS;
}

void rill_fifo_fini(rill_fifo_t *f)
{
    if (f->ring)
        cudaFreeHost(f->ring);
    if (f->tail_word)
        cudaFreeHost(f->tail_word);
    f->ring = NULL;
    f->tail_word = NULL;
}

/* ------------------------------------------------------------ bounded stream waits */

/* Per stream, the events recorded behind its outstanding waits (a ring): a wait is
 * outstanding until the stream passed it. A few streams at most: a list under a lock. */
typedef struct stream_waits {
    cudaStream_t stream;
    int device;
    cudaEvent_t *ev;
    int cap, head, count;
    struct stream_waits *next;
} stream_waits_t;
static pthread_mutex_t waits_lock = PTHREAD_MUTEX_INITIALIZER;
static stream_waits_t *waits;

static void waits_reap(stream_waits_t *w)
{
    while (w->count > 0 && cudaEventQuery(w->ev[w->head]) == cudaSuccess) {
        w->head = (w->head + 1) % w->cap;
        w->count--;
    }
}

rill_status_t rill_sem_stream_wait(cudaStream_t stream, const uint64_t *sem, uint64_t value)
{
    if (!sem) {
        RILL_ERROR(RILL_LOG_DEVICE, "rill_sem_stream_wait: the semaphore is NULL");
        return RILL_ERR_INVALID_ARG;
    }
    char err[200];
    int cap = p_max_waits ? (int)rill_param_get_int(p_max_waits) : 64;
    int dev = -1, cur = -1;
    cudaError_t e = cudaStreamGetDevice(stream, &dev);
    if (e != cudaSuccess) {
        RILL_ERROR(RILL_LOG_DEVICE, "rill_sem_stream_wait: stream %p: %s", (void *)stream,
                   cudaGetErrorString(e));
        return RILL_ERR_INVALID_ARG;
    }
    cudaGetDevice(&cur);
    pthread_mutex_lock(&waits_lock);
    stream_waits_t *w = waits;
    while (w && !(w->stream == stream && w->device == dev))
        w = w->next;
    if (!w && (w = calloc(1, sizeof(*w)))) {
        w->stream = stream;
        w->device = dev;
        w->cap = cap;
        w->ev = calloc((size_t)cap, sizeof(cudaEvent_t));
        /* the whole ring now, before any wait of this stream is outstanding: creating an
         * event later, while the stream is blocked on a semaphore that another thread's
         * enqueue must release, is one more CUDA call that may wait on the driver */
        if (w->ev && dev != cur)
            cudaSetDevice(dev);
        for (int k = 0; w->ev && k < cap; k++)
            if (cudaEventCreateWithFlags(&w->ev[k], cudaEventDisableTiming) != cudaSuccess) {
                w->ev[k] = NULL; /* made on first use instead */
                cudaGetLastError();
                break;
            }
        if (w->ev && dev != cur)
            cudaSetDevice(cur);
        if (!w->ev) {
            free(w);
            w = NULL;
        } else {
            w->next = waits;
            waits = w;
        }
    }
    rill_status_t s = RILL_SUCCESS;
    if (!w) {
        s = RILL_ERR_NO_MEMORY;
        goto out;
    }
    waits_reap(w);
    if (w->count >= w->cap) {
        RILL_VERBOSE(RILL_LOG_DEVICE, 2,
                     "stream %p: %d semaphore waits outstanding (device_stream_max_waits): "
                     "enqueue this one later",
                     (void *)stream, w->count);
        s = RILL_ERR_BUSY;
        goto out;
    }
    if ((s = rill_cu_stream_wait64(stream, sem, value, err, sizeof(err))) != RILL_SUCCESS) {
        RILL_ERROR(RILL_LOG_DEVICE, "semaphore %p >= %llu on stream %p: %s", (const void *)sem,
                   (unsigned long long)value, (void *)stream, err);
        goto out;
    }
    int slot = (w->head + w->count) % w->cap;
    if (dev != cur)
        cudaSetDevice(dev); /* the event must belong to the stream's device */
    if (!w->ev[slot])
        e = cudaEventCreateWithFlags(&w->ev[slot], cudaEventDisableTiming);
    if (e == cudaSuccess)
        e = cudaEventRecord(w->ev[slot], stream);
    if (dev != cur)
        cudaSetDevice(cur);
    if (e != cudaSuccess) {
        RILL_ERROR(RILL_LOG_DEVICE, "recording an event behind a semaphore wait: %s",
                   cudaGetErrorString(e));
        s = RILL_ERR_DEVICE;
        goto out;
    }
    w->count++;
out:
    pthread_mutex_unlock(&waits_lock);
    return s;
}

rill_status_t rill_sem_stream_write(cudaStream_t stream, uint64_t *sem, uint64_t value)
{
    if (!sem) {
        RILL_ERROR(RILL_LOG_DEVICE, "rill_sem_stream_write: the semaphore is NULL");
        return RILL_ERR_INVALID_ARG;
    }
    char err[200];
    rill_status_t s = rill_cu_stream_write64(stream, sem, value, err, sizeof(err));
    if (s != RILL_SUCCESS)
        RILL_ERROR(RILL_LOG_DEVICE, "semaphore %p := %llu on stream %p: %s", (void *)sem,
                   (unsigned long long)value, (void *)stream, err);
    return s;
}

void rill_stream_waits_release(void)
{
    pthread_mutex_lock(&waits_lock);
    while (waits) {
        stream_waits_t *w = waits;
        waits = w->next;
        for (int i = 0; i < w->cap; i++)
            if (w->ev[i])
                cudaEventDestroy(w->ev[i]);
        free(w->ev);
        free(w);
    }
    pthread_mutex_unlock(&waits_lock);
}
#endif
