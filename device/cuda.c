/* The CUDA device module: discovery. */
#include "cuda.h"

#include <string.h>

#include "rill/config.h"

#if RILL_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <hwloc.h>
#include <hwloc/cudart.h>

/* The cores nearest to GPU dev as an hwloc list string, or "?" when hwloc cannot tell. */
static void nearest_cores(int dev, char *buf, size_t len)
{
    snprintf(buf, len, "?");
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) || hwloc_topology_load(topo)) {
        hwloc_topology_destroy(topo);
        return;
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set && hwloc_cudart_get_device_cpuset(topo, dev, set) == 0 && !hwloc_bitmap_iszero(set))
        hwloc_bitmap_list_snprintf(buf, len, set);
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
}

rill_status_t rill_cuda_discover(rill_cuda_gpu_info_t *gpus, int max, int *n_p, char *why,
                                 size_t len)
{
    *n_p = 0;
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
        nearest_cores(d, g->nearest_cores, sizeof(g->nearest_cores));
    }
    why[0] = '\0';
    return RILL_SUCCESS;
}

#else

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
                "%s\n",
                gpus[i].ordinal, gpus[i].name, gpus[i].cc_major, gpus[i].cc_minor, gpus[i].sm_count,
                (double)gpus[i].total_mem / (1 << 30), gpus[i].pci_bus_id, gpus[i].nearest_cores);
    fprintf(out, "  (discovery only: tasks do not run on GPUs yet)\n");
}
