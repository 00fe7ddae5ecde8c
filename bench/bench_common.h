/* What the CUDA benchmarks of two ranks share (bench_channels, bench_hop_ref): die() prints
 * "PROG (rank r): error: ..." and ends the process; CUDA_CHECK and NCCL_CHECK name the call,
 * file:line and the error; bench_gpu_t describes a rank's GPU and bench_print_env prints the
 * CUDA / NCCL versions and both ranks' GPUs as '#' lines. Include after defining PROG (and
 * after nccl.h when BENCH_HAVE_NCCL). A benchmark whose peer may be left waiting sets
 * bench_die_hook to take it down too (MPI_Abort). */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static int g_rank = -1;
static void (*bench_die_hook)(void);

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, PROG " (rank %d): error: ", g_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    if (bench_die_hook)
        bench_die_hook();
    _exit(1); /* no atexit handlers: runtime threads or the peer may still be running */
}

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            die("%s failed at %s:%d: %s: %s", #call, __FILE__, __LINE__, cudaGetErrorName(e_),     \
                cudaGetErrorString(e_));                                                           \
    } while (0)
#if BENCH_HAVE_NCCL
#define NCCL_CHECK(call)                                                                           \
    do {                                                                                           \
        ncclResult_t r_ = (call);                                                                  \
        if (r_ != ncclSuccess)                                                                     \
            die("%s failed at %s:%d: %s (%d)", #call, __FILE__, __LINE__, ncclGetErrorString(r_),  \
                (int)r_);                                                                          \
    } while (0)
#endif

/** A rank's GPU, as exchanged between the ranks and printed. */
typedef struct bench_gpu {
    int ordinal, nsm, pci_domain, pci_bus, pci_device;
    char name[256];
} bench_gpu_t;

static void bench_gpu_get(int ordinal, bench_gpu_t *g)
{
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
    g->ordinal = ordinal;
    g->nsm = prop.multiProcessorCount;
    g->pci_domain = prop.pciDomainID;
    g->pci_bus = prop.pciBusID;
    g->pci_device = prop.pciDeviceID;
    snprintf(g->name, sizeof(g->name), "%s", prop.name);
}

/* '#' lines: the CUDA runtime and driver, NCCL (or why not), each rank's GPU, and a warning
 * when both ranks use the same one. */
static void bench_print_env(const bench_gpu_t g[2])
{
    int rt = 0, drv = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    CUDA_CHECK(cudaDriverGetVersion(&drv));
    printf("# CUDA runtime %d.%d, driver %d.%d", rt / 1000, (rt % 1000) / 10, drv / 1000,
           (drv % 1000) / 10);
#if BENCH_HAVE_NCCL
    int nv = 0;
    NCCL_CHECK(ncclGetVersion(&nv));
    printf(", NCCL %d.%d.%d (NCCL_NVLS_ENABLE=0)\n", nv / 10000, (nv % 10000) / 100, nv % 100);
#else
    printf(", NCCL: not built (nccl.h or libnccl not found when configuring): no NCCL "
           "figures\n");
#endif
    for (int r = 0; r < 2; r++)
        printf("# rank %d: %s, CUDA device %d, PCI %04x:%02x:%02x, %d SMs\n", r, g[r].name,
               g[r].ordinal, g[r].pci_domain, g[r].pci_bus, g[r].pci_device, g[r].nsm);
    if (g[0].pci_domain == g[1].pci_domain && g[0].pci_bus == g[1].pci_bus &&
        g[0].pci_device == g[1].pci_device)
        printf("# warning: both ranks use the same GPU: these are not GPU-to-GPU figures\n");
}

#endif
