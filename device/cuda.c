/* The CUDA device module: discovery, selection, and each GPU's resources. */
#include "cuda_device.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rill/params.h"

#include "device.h"

static rill_param_t *p_enabled, *p_max, *p_mask, *p_mem_pct, *p_mem_bytes, *p_streams, *p_workspace,
    *p_urgent;

static const rill_param_decl_t cuda_params[] = {
    { "device_cuda_enabled", RILL_PARAM_BOOL, RILL_PARAM_LEVEL_USER,
      "Run tasks on the CUDA GPUs this process can use (false: CPUs only)", .v.b = true,
      .param = &p_enabled },
    { "device_cuda_max_gpus", RILL_PARAM_INT, RILL_PARAM_LEVEL_USER,
      "Most GPUs one process runs tasks on (0: all of its share of the node's GPUs)",
      .v.i = { 0, 0, RILL_CUDA_MAX_GPUS }, .param = &p_max },
    { "device_cuda_mask", RILL_PARAM_INT, RILL_PARAM_LEVEL_USER,
      "Bit mask of the CUDA device ordinals this process may use (bit i: GPU i; -1: all); the "
      "allowed GPUs are split between the processes of a node",
      .v.i = { -1, -1, 255 }, .param = &p_mask },
    { "device_cuda_memory_use", RILL_PARAM_INT, RILL_PARAM_LEVEL_USER,
      "Percent of each GPU's free memory taken at start as its memory zone (tiles, landing "
      "buffers, workspaces); nothing is allocated from the GPU afterwards",
      .v.i = { 90, 1, 99 }, .param = &p_mem_pct },
    { "device_cuda_memory_size", RILL_PARAM_SIZE, RILL_PARAM_LEVEL_TUNER,
      "Size of each GPU's memory zone in bytes (units k, M, G allowed); 0: use "
      "device_cuda_memory_use instead",
      .v.u = { 0, 0, (uint64_t)1 << 50 }, .param = &p_mem_bytes },
    { "device_cuda_exec_streams", RILL_PARAM_INT, RILL_PARAM_LEVEL_TUNER,
      "Streams per GPU that run task bodies (besides one host-to-device, one device-to-host "
      "and one per peer GPU)",
      .v.i = { 8, 1, RILL_CUDA_MAX_STREAMS }, .param = &p_streams },
    { "device_cuda_urgent_streams", RILL_PARAM_INT, RILL_PARAM_LEVEL_TUNER,
      "Exec streams at the GPU's greatest stream priority, for the tasks inserted "
      "RILL_DTD_URGENT (a factorization's critical path); at least one exec stream stays at "
      "the normal priority",
      .v.i = { 1, 0, RILL_CUDA_MAX_STREAMS - 1 }, .param = &p_urgent },
    { "device_cuda_workspace", RILL_PARAM_SIZE, RILL_PARAM_LEVEL_TUNER,
      "Device workspace per exec stream for task bodies (cuSOLVER's work array), carved from "
      "the zone",
      .v.u = { 32ull << 20, 1ull << 20, (uint64_t)1 << 36 }, .param = &p_workspace },
};

rill_status_t rill_cuda_register_params(void)
{
    return rill_params_register_table(cuda_params, sizeof(cuda_params) / sizeof(cuda_params[0]));
}

#if RILL_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <hwloc.h>
#include <hwloc/cudart.h>

/* The cores nearest to GPU dev as an hwloc list string ("?" when hwloc cannot tell) and
 * the OS index of the NUMA node they belong to (-1 when unknown). */
static void nearest_cores(int dev, char *buf, size_t len, int *numa)
{
    snprintf(buf, len, "?");
    *numa = -1;
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) || hwloc_topology_load(topo)) {
        hwloc_topology_destroy(topo);
        return;
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set && hwloc_cudart_get_device_cpuset(topo, dev, set) == 0 && !hwloc_bitmap_iszero(set)) {
        hwloc_bitmap_list_snprintf(buf, len, set);
        hwloc_obj_t node = NULL;
        while ((node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, node)))
            if (node->cpuset && hwloc_bitmap_intersects(node->cpuset, set)) {
                *numa = (int)node->os_index;
                break;
            }
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
}

static rill_status_t discover(rill_cuda_gpu_info_t *gpus, int max, int *n_p, char *why, size_t len);

/* The GPUs do not change while the process lives: discovered once (the CUDA runtime's
 * attempt alone costs a noticeable time without a driver, and rill_init may run often). */
static struct {
    pthread_once_t once;
    rill_status_t status;
    rill_cuda_gpu_info_t gpus[RILL_CUDA_MAX_GPUS];
    int n;
    char why[256];
} found = { .once = PTHREAD_ONCE_INIT };

static void discover_once(void)
{
    found.status = discover(found.gpus, RILL_CUDA_MAX_GPUS, &found.n, found.why, sizeof(found.why));
}

void rill_cuda_env_early(void)
{
    /* Before the process's first CUDA context: the streams of a GPU share its hardware work
     * queues (8 by default), and a stream that waits on a semaphore (cuStreamWaitValue64)
     * blocks every stream that shares its queue, such as the copy stream that would signal
     * it: a deadlock. With 32 queues the runtime's and the application's streams of a GPU
     * rarely share one. The driver reads the variable when it makes the context, which MPI
     * or UCX (both started before the GPUs) may do first: hence rill_init's first step. The
     * user's own setting wins. */
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
}

rill_status_t rill_cuda_discover(rill_cuda_gpu_info_t *gpus, int max, int *n_p, char *why,
                                 size_t len)
{
    pthread_once(&found.once, discover_once);
    *n_p = found.n < max ? found.n : max;
    memcpy(gpus, found.gpus, sizeof(*gpus) * (size_t)*n_p);
    snprintf(why, len, "%s", found.why);
    return found.status;
}

static rill_status_t discover(rill_cuda_gpu_info_t *gpus, int max, int *n_p, char *why, size_t len)
{
    /* no NVIDIA driver at all: say so without starting the CUDA runtime, whose failed start
     * costs a noticeable time in every process (tests start thousands) */
    if (access("/proc/driver/nvidia", F_OK) != 0 && access("/dev/nvidiactl", F_OK) != 0) {
        *n_p = 0;
        snprintf(why, len,
                 "no NVIDIA driver is loaded (no /proc/driver/nvidia, no "
                 "/dev/nvidiactl)");
        return RILL_SUCCESS;
    }
    *n_p = 0;
    rill_cuda_env_early(); /* (rill_init did; rill_info --devices comes here first) */
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        snprintf(why, len, "the CUDA runtime finds no usable GPU: %s (%s)", cudaGetErrorString(e),
                 cudaGetErrorName(e));
        return RILL_SUCCESS;
    }
    if (count == 0) {
        snprintf(why, len, "the CUDA runtime reports no GPU");
        return RILL_SUCCESS;
    }
    for (int d = 0; d < count && *n_p < max; d++) {
        struct cudaDeviceProp p;
        if ((e = cudaGetDeviceProperties(&p, d)) != cudaSuccess) {
            snprintf(why, len, "cudaGetDeviceProperties(%d) failed: %s", d, cudaGetErrorString(e));
            return RILL_ERR_DEVICE;
        }
        rill_cuda_gpu_info_t *g = &gpus[(*n_p)++];
        memset(g, 0, sizeof(*g));
        g->ordinal = d;
        snprintf(g->name, sizeof(g->name), "%.95s", p.name);
        snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "%04x:%02x:%02x.0", (unsigned)p.pciDomainID,
                 (unsigned)p.pciBusID, (unsigned)p.pciDeviceID);
        g->cc_major = p.major;
        g->cc_minor = p.minor;
        g->total_mem = p.totalGlobalMem;
        g->sm_count = p.multiProcessorCount;
        nearest_cores(d, g->nearest_cores, sizeof(g->nearest_cores), &g->numa_node);
        g->sharers = 1;
    }
    why[0] = '\0';
    return RILL_SUCCESS;
}

#else

void rill_cuda_env_early(void) {}

rill_status_t rill_cuda_discover(rill_cuda_gpu_info_t *gpus, int max, int *n_p, char *why,
                                 size_t len)
{
    (void)gpus;
    (void)max;
    *n_p = 0;
    snprintf(why, len, "this build has no CUDA support (the toolkit was not found at configure)");
    return RILL_SUCCESS;
}

#endif

void rill_cuda_print_devices(FILE *out)
{
    rill_cuda_gpu_info_t gpus[RILL_CUDA_MAX_GPUS];
    int n = 0;
    char why[256];
    rill_status_t s = rill_cuda_discover(gpus, RILL_CUDA_MAX_GPUS, &n, why, sizeof(why));
    fprintf(out, "devices: cpu (host memory)");
    if (s != RILL_SUCCESS || n == 0) {
        fprintf(out, "; no GPU: %s\n", why);
        return;
    }
    fprintf(out, ", %d CUDA GPU(s)\n", n);
    for (int i = 0; i < n; i++)
        fprintf(out,
                "  gpu %d: %s, compute capability %d.%d, %d SMs, %.1f GiB, PCI %s, nearest cores "
                "%s, NUMA node %d\n",
                gpus[i].ordinal, gpus[i].name, gpus[i].cc_major, gpus[i].cc_minor, gpus[i].sm_count,
                (double)gpus[i].total_mem / (1 << 30), gpus[i].pci_bus_id, gpus[i].nearest_cores,
                gpus[i].numa_node);
    if (p_enabled && !rill_param_get_bool(p_enabled))
        fprintf(out, "  device_cuda_enabled is false: tasks run on the CPUs only\n");
}

rill_status_t rill_cuda_select(int local_rank, int local_size, rill_cuda_gpu_info_t *gpus, int max,
                               int *n_p, char *why, size_t len)
{
    *n_p = 0;
    if (p_enabled && !rill_param_get_bool(p_enabled)) {
        snprintf(why, len, "device_cuda_enabled is false");
        return RILL_SUCCESS;
    }
    rill_cuda_gpu_info_t all[RILL_CUDA_MAX_GPUS];
    int n = 0;
    rill_status_t s = rill_cuda_discover(all, RILL_CUDA_MAX_GPUS, &n, why, len);
    if (s != RILL_SUCCESS || n == 0)
        return s;
    int64_t mask = p_mask ? rill_param_get_int(p_mask) : -1;
    int allowed = 0;
    for (int i = 0; i < n; i++)
        if (mask < 0 || (mask >> all[i].ordinal) & 1)
            all[allowed++] = all[i];
    if (allowed == 0) {
        snprintf(why, len, "device_cuda_mask = 0x%llx allows none of the %d GPU(s) found",
                 (unsigned long long)mask, n);
        return RILL_SUCCESS;
    }
    if (local_size < 1 || local_rank < 0 || local_rank >= local_size) {
        local_rank = 0;
        local_size = 1;
    }
    int first, count;
    if (allowed >= local_size) { /* contiguous blocks, sizes differ by at most one */
        int base = allowed / local_size, extra = allowed % local_size;
        first = local_rank * base + (local_rank < extra ? local_rank : extra);
        count = base + (local_rank < extra);
    } else { /* more processes than GPUs: they share */
        first = local_rank % allowed;
        count = 1;
    }
    for (int i = 0; i < allowed; i++) /* processes r with r % allowed == i, or 1 */
        all[i].sharers = allowed >= local_size ? 1 : (local_size - 1 - i) / allowed + 1;
    int most = p_max ? (int)rill_param_get_int(p_max) : 0;
    if (most > 0 && count > most)
        count = most;
    for (int i = 0; i < count && *n_p < max; i++)
        gpus[(*n_p)++] = all[first + i];
    why[0] = '\0';
    return RILL_SUCCESS;
}

#if RILL_HAVE_CUDA

#define CU_TRY(call)                                                                               \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            snprintf(err, len, "%s failed on GPU %d: %s (%s)", #call, info->ordinal,               \
                     cudaGetErrorString(e_), cudaGetErrorName(e_));                                \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

#define LIB_TRY(call, okv)                                                                         \
    do {                                                                                           \
        int e_ = (int)(call);                                                                      \
        if (e_ != (int)(okv)) {                                                                    \
            snprintf(err, len, "%s failed on GPU %d: status %d", #call, info->ordinal, e_);        \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

/*
 * cuBLAS and cuSOLVER are loaded (dlopen) when the first GPU is opened, not linked: a
 * process on a machine without a GPU (or with GPUs disabled) never maps their several
 * hundred megabytes, which otherwise cost every process start about 0.1 s and 260 MB of
 * address space. Only the handle calls below are made by the runtime; task bodies that
 * call cuBLAS link it themselves (Rill::rill names it in its link interface), and
 * dlopen then finds that same library already loaded. The names go through cublas_v2.h's
 * macros (cublasCreate is cublasCreate_v2), so the symbol matches the header's.
 */
#define RILL_STR_(x) #x
#define RILL_STR(x)  RILL_STR_(x)
#define CUDA_LIB_FUNCS(X)                                                                          \
    X(blas, cublasCreate)                                                                          \
    X(blas, cublasSetStream)                                                                       \
    X(blas, cublasSetWorkspace)                                                                    \
    X(blas, cublasDestroy)                                                                         \
    X(solver, cusolverDnCreate)                                                                    \
    X(solver, cusolverDnSetStream)                                                                 \
    X(solver, cusolverDnDestroy)

static struct {
#define X(lib, f) __typeof__(f) *f;
    CUDA_LIB_FUNCS(X)
#undef X
} cl;
static pthread_once_t cl_once = PTHREAD_ONCE_INIT;
static bool cl_ok;       /* loaded (set once, under cl_once) */
static char cl_err[512]; /* else why not */

/* dlopen the library: by the soname of the toolkit Rill was built with, then by the path
 * CMake found at build time */
static void *cuda_lib_open(const char *soname, const char *path)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_GLOBAL);
    if (!h && path[0])
        h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(cl_err, sizeof(cl_err), "cannot load %s (%s): %s", soname, path,
                 e ? e : "unknown reason");
    }
    return h;
}

static void cuda_libs_load(void)
{
    void *blas = cuda_lib_open("libcublas.so." RILL_STR(CUBLAS_VER_MAJOR), RILL_CUBLAS_PATH);
    void *solver =
        blas ? cuda_lib_open("libcusolver.so." RILL_STR(CUSOLVER_VER_MAJOR), RILL_CUSOLVER_PATH)
             : NULL;
    if (!solver)
        return; /* cl_err says why */
#define X(lib, f)                                                                                  \
    if (!(cl.f = (__typeof__(f) *)dlsym(lib, RILL_STR(f)))) {                                      \
        snprintf(cl_err, sizeof(cl_err), "%s has no %s", #lib, RILL_STR(f));                       \
        return;                                                                                    \
    }
    CUDA_LIB_FUNCS(X)
#undef X
    cl_ok = true;
}

/* whether cuBLAS and cuSOLVER are loaded (the first call loads them; any thread:
 * pthread_once orders cl and cl_err before every return) */
static bool cuda_libs_ready(void)
{
    pthread_once(&cl_once, cuda_libs_load);
    return cl_ok;
}

void rill_cuda_config_from_params(rill_cuda_gpu_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->memory_use_pct = p_mem_pct ? (int)rill_param_get_int(p_mem_pct) : 90;
    cfg->memory_bytes = p_mem_bytes ? rill_param_get_size(p_mem_bytes) : 0;
    cfg->exec_streams = p_streams ? (int)rill_param_get_int(p_streams) : 8;
    cfg->urgent_streams = p_urgent ? (int)rill_param_get_int(p_urgent) : 1;
    cfg->workspace = p_workspace ? rill_param_get_size(p_workspace) : (32u << 20);
}

static rill_status_t carve(rill_cuda_gpu_t *g, size_t size, void **p, char *err, size_t len,
                           const char *what)
{
    uintptr_t a;
    if (rill_zone_alloc(g->zone, size, &a) != RILL_SUCCESS) {
        snprintf(err, len,
                 "GPU %d: its memory zone of %zu bytes cannot hold the %s (%zu bytes); raise "
                 "device_cuda_memory_use or device_cuda_memory_size, or lower "
                 "device_cuda_workspace / device_cuda_exec_streams",
                 g->info.ordinal, g->zone_bytes, what, size);
        return RILL_ERR_NO_MEMORY;
    }
    *p = (void *)a;
    return RILL_SUCCESS;
}

rill_status_t rill_cuda_gpu_open(const rill_cuda_gpu_info_t *info,
                                 const rill_cuda_gpu_config_t *cfg, rill_cuda_gpu_t **gpu_p,
                                 char *err, size_t len)
{
    rill_status_t st = RILL_ERR_DEVICE;
    rill_cuda_gpu_t *g = calloc(1, sizeof(*g));
    if (!g) {
        snprintf(err, len, "out of host memory");
        return RILL_ERR_NO_MEMORY;
    }
    g->info = *info;
    if (!cuda_libs_ready()) {
        snprintf(err, len, "GPU %d: %s (the runtime needs cuBLAS and cuSOLVER for GPUs)",
                 info->ordinal, cl_err);
        goto fail;
    }
    cudaError_t se = cudaSetDevice(info->ordinal); /* creates this process's context */
    if (se != cudaSuccess) {
        /* out of memory: seen with many processes on one GPU (a test suite run in parallel
         * on one H100) */
        snprintf(err, len, "creating a CUDA context on GPU %d failed: %s (%s)%s", info->ordinal,
                 cudaGetErrorString(se), cudaGetErrorName(se),
                 se != cudaErrorMemoryAllocation
                     ? ""
                     : "; other processes hold its memory: each process that uses a GPU takes "
                       "device_cuda_memory_use percent of the memory free when it starts (90 by "
                       "default): lower it where processes share a GPU, or run fewer at once");
        goto fail;
    }
    /* bodies and the manager poll events: no blocking synchronisation anywhere */
    size_t free_b = 0, total_b = 0;
    CU_TRY(cudaMemGetInfo(&free_b, &total_b));
    /* a GPU shared by several processes of the node: each takes its part of the whole (the
     * free memory depends on who started first) */
    int sharers = info->sharers > 1 ? info->sharers : 1;
    size_t want = cfg->memory_bytes ? cfg->memory_bytes
                  : sharers > 1 ? (size_t)((double)total_b * cfg->memory_use_pct / 100.0 / sharers)
                                : (size_t)((double)free_b * cfg->memory_use_pct / 100.0);
    /* a share of the total can exceed what another process left free: take 90% of that
     * instead; a size asked by device_cuda_memory_size is never shrunk (too large is an
     * error below) */
    if (!cfg->memory_bytes && sharers > 1 && want > free_b)
        want = free_b * 9 / 10;
    want &= ~(size_t)((1 << 20) - 1); /* whole MiB */
    if (want < (8u << 20) || want > free_b) {
        snprintf(err, len,
                 "GPU %d: a memory zone of %zu bytes is asked (device_cuda_memory_size / "
                 "device_cuda_memory_use) with %zu bytes free; allowed: 8 MiB up to the free "
                 "memory",
                 info->ordinal, want, free_b);
        st = RILL_ERR_INVALID_ARG;
        goto fail;
    }
    CU_TRY(cudaMalloc(&g->zone_base, want));
    g->zone_bytes = want;
    if (rill_zone_create((uintptr_t)g->zone_base, want, 256, &g->zone) != RILL_SUCCESS) {
        snprintf(err, len, "GPU %d: cannot set up the zone allocator", info->ordinal);
        goto fail;
    }
    int lo, hi; /* greatest priority = lowest number */
    CU_TRY(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CU_TRY(cudaStreamCreateWithPriority(&g->h2d, cudaStreamNonBlocking, hi));
    CU_TRY(cudaStreamCreateWithPriority(&g->d2h, cudaStreamNonBlocking, hi));
    for (int i = 0; i < cfg->npeers; i++) {
        int p = cfg->peers[i];
        if (p < 0 || p >= RILL_CUDA_MAX_GPUS || p == info->ordinal)
            continue;
        int can = 0;
        CU_TRY(cudaDeviceCanAccessPeer(&can, info->ordinal, p));
        if (can) {
            cudaError_t e = cudaDeviceEnablePeerAccess(p, 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled)
                (void)cudaGetLastError();
            else
                CU_TRY(e);
        }
        CU_TRY(cudaStreamCreateWithPriority(&g->peer[p], cudaStreamNonBlocking, hi));
    }
    g->nexec = cfg->exec_streams;
    /* at least one stream at the normal priority; none urgent with a single stream */
    g->nurgent = cfg->urgent_streams < g->nexec ? cfg->urgent_streams : g->nexec - 1;
    for (int i = 0; i < g->nexec; i++) {
        rill_cuda_exec_t *x = &g->exec[i];
        x->index = i;
        /* exec streams 0 .. nurgent-1 have the greatest priority: the GPU manager puts the
         * most urgent tasks (a factorization's panel) there, ahead of the bulk on the others */
        if (i < g->nurgent)
            CU_TRY(cudaStreamCreateWithPriority(&x->stream, cudaStreamNonBlocking, hi));
        else
            CU_TRY(cudaStreamCreateWithFlags(&x->stream, cudaStreamNonBlocking));
        LIB_TRY(cl.cublasCreate(&x->cublas), CUBLAS_STATUS_SUCCESS);
        LIB_TRY(cl.cublasSetStream(x->cublas, x->stream), CUBLAS_STATUS_SUCCESS);
        /* cuBLAS would otherwise allocate its workspace from the device on first use */
        void *cws;
        /* carve's status apart from st: st stays an error for the calls after it (a
         * cuSOLVER handle that cannot be made returned success, and the manager used a GPU
         * it never got: the segfault at 0x4c0 of GPU runs out of memory) */
        rill_status_t cs;
        if ((cs = carve(g, 32u << 20, &cws, err, len, "cuBLAS workspace")) != RILL_SUCCESS) {
            st = cs;
            goto fail;
        }
        LIB_TRY(cl.cublasSetWorkspace(x->cublas, cws, 32u << 20), CUBLAS_STATUS_SUCCESS);
        LIB_TRY(cl.cusolverDnCreate(&x->cusolver), CUSOLVER_STATUS_SUCCESS);
        LIB_TRY(cl.cusolverDnSetStream(x->cusolver, x->stream), CUSOLVER_STATUS_SUCCESS);
        if ((cs = carve(g, cfg->workspace, &x->workspace, err, len, "exec stream workspace")) !=
            RILL_SUCCESS) {
            st = cs;
            goto fail;
        }
        x->workspace_size = cfg->workspace;
    }
    g->nstatus = cfg->nstatus > 0 ? cfg->nstatus : 1;
    CU_TRY(cudaHostAlloc((void **)&g->status_host, sizeof(int) * (size_t)g->nstatus,
                         cudaHostAllocMapped | cudaHostAllocPortable));
    memset(g->status_host, 0, sizeof(int) * (size_t)g->nstatus);
    CU_TRY(cudaHostGetDevicePointer((void **)&g->status_dev, g->status_host, 0));
    g->cap_events = 256;
    g->events = malloc(sizeof(cudaEvent_t) * (size_t)g->cap_events);
    if (!g->events) {
        snprintf(err, len, "out of host memory");
        st = RILL_ERR_NO_MEMORY;
        goto fail;
    }
    for (; g->nevents < g->cap_events; g->nevents++)
        CU_TRY(cudaEventCreateWithFlags(&g->events[g->nevents], cudaEventDisableTiming));
    *gpu_p = g;
    return RILL_SUCCESS;
fail:
    rill_cuda_gpu_close(&g);
    return st;
}

void rill_cuda_gpu_close(rill_cuda_gpu_t **gpu_p)
{
    rill_cuda_gpu_t *g = *gpu_p;
    if (!g)
        return;
    for (int i = 0; i < g->nexec; i++) {
        rill_cuda_exec_t *x = &g->exec[i];
        if (x->cusolver)
            cl.cusolverDnDestroy(x->cusolver);
        if (x->cublas)
            cl.cublasDestroy(x->cublas);
        if (x->stream)
            cudaStreamDestroy(x->stream);
    }
    for (int p = 0; p < RILL_CUDA_MAX_GPUS; p++)
        if (g->peer[p])
            cudaStreamDestroy(g->peer[p]);
    if (g->h2d)
        cudaStreamDestroy(g->h2d);
    if (g->d2h)
        cudaStreamDestroy(g->d2h);
    for (int i = 0; i < g->nevents; i++)
        cudaEventDestroy(g->events[i]);
    free(g->events);
    for (int i = 0; i < g->ntevents; i++)
        cudaEventDestroy(g->tevents[i]);
    free(g->tevents);
    if (g->status_host)
        cudaFreeHost(g->status_host);
    rill_zone_destroy(&g->zone);
    if (g->zone_base)
        cudaFree(g->zone_base);
    (void)cudaGetLastError();
    free(g);
    *gpu_p = NULL;
}

cudaEvent_t rill_cuda_event_get(rill_cuda_gpu_t *gpu, bool timing)
{
    cudaEvent_t ev = NULL;
    if (timing && gpu->ntevents > 0)
        return gpu->tevents[--gpu->ntevents];
    if (!timing && gpu->nevents > 0)
        return gpu->events[--gpu->nevents];
    if (cudaEventCreateWithFlags(&ev, timing ? cudaEventDefault : cudaEventDisableTiming) !=
        cudaSuccess)
        return NULL;
    return ev;
}

void rill_cuda_event_put(rill_cuda_gpu_t *gpu, cudaEvent_t ev, bool timing)
{
    if (!ev)
        return;
    cudaEvent_t **pool = timing ? &gpu->tevents : &gpu->events;
    int *n = timing ? &gpu->ntevents : &gpu->nevents,
        *cap = timing ? &gpu->cap_tevents : &gpu->cap_events;
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 64;
        cudaEvent_t *e = realloc(*pool, sizeof(*e) * (size_t)c);
        if (!e) {
            cudaEventDestroy(ev);
            return;
        }
        *pool = e;
        *cap = c;
    }
    (*pool)[(*n)++] = ev;
}

bool rill_cuda_host_register(void *ptr, size_t size)
{
    if (!ptr || !size)
        return false;
    cudaError_t e = cudaHostRegister(ptr, size, cudaHostRegisterPortable);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        RILL_VERBOSE(RILL_LOG_DEVICE, 2,
                     "cudaHostRegister(%p, %zu): %s: that tile is copied "
                     "from pageable memory",
                     ptr, size, cudaGetErrorString(e));
        return false;
    }
    return true;
}

void rill_cuda_host_unregister(void *ptr)
{
    if (ptr && cudaHostUnregister(ptr) != cudaSuccess)
        (void)cudaGetLastError();
}

#else

bool rill_cuda_host_register(void *ptr, size_t size)
{
    (void)ptr;
    (void)size;
    return false;
}

void rill_cuda_host_unregister(void *ptr)
{
    (void)ptr;
}

#endif
