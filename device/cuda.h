/* The CUDA device module, first part: discovery of the GPUs this process can use, with
 * their nearest cores (hwloc). Host code on the CUDA runtime; compiled to stubs that report
 * "not built" when the toolkit was not found at configure time. Internal. */
#ifndef RILL_DEVICE_CUDA_H
#define RILL_DEVICE_CUDA_H

#include <stddef.h>
#include <stdio.h>

#include "rill/status.h"

#define RILL_CUDA_MAX_GPUS 8

/** What discovery found of one GPU. */
typedef struct rill_cuda_gpu_info {
    int ordinal; /* CUDA device ordinal */
    char name[96];
    char pci_bus_id[32]; /* "0000:18:00.0" */
    int cc_major, cc_minor;
    size_t total_mem;
    int sm_count;
    char nearest_cores[128]; /* hwloc list of the cores nearest to it ("0-15"), or "?" */
} rill_cuda_gpu_info_t;

/** Discover the GPUs: *n_p of them (at most max) into gpus. 0 GPUs is not an error; why
 * none are usable (no toolkit at build time, no driver, no device) is written into why
 * (len bytes). Any thread (makes no context: only device properties are read). */
rill_status_t rill_cuda_discover(rill_cuda_gpu_info_t *gpus, int max, int *n_p, char *why,
                                 size_t len);

/** Print one line per GPU (or why there is none) to out, for rill_info --devices. */
void rill_cuda_print_devices(FILE *out);

#endif
