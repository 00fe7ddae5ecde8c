/* CUDA discovery (device/cuda.c) on a machine with GPUs: every GPU has a name, memory, a
 * compute capability, a PCI address and the cores nearest to it (hwloc). Skips (77) with
 * the reason when no GPU is usable, as on CI machines. */
#include <string.h>

#include "cuda_device.h"
#include "test_util.h"

int main(void)
{
    rill_cuda_gpu_info_t gpus[RILL_CUDA_MAX_GPUS];
    int n = -1;
    char why[256];
    CHECK(rill_cuda_discover(gpus, RILL_CUDA_MAX_GPUS, &n, why, sizeof(why)) == RILL_SUCCESS);
    if (n == 0) {
        printf("SKIP: no usable GPU: %s\n", why);
        return 77;
    }
    for (int i = 0; i < n; i++) {
        printf("gpu %d: %s, cc %d.%d, %d SMs, %zu bytes, PCI %s, nearest cores %s\n",
               gpus[i].ordinal, gpus[i].name, gpus[i].cc_major, gpus[i].cc_minor, gpus[i].sm_count,
               gpus[i].total_mem, gpus[i].pci_bus_id, gpus[i].nearest_cores);
        CHECK(gpus[i].ordinal == i);
        CHECK(gpus[i].name[0] && gpus[i].total_mem > ((size_t)1 << 30));
        CHECK(gpus[i].cc_major >= 3 && gpus[i].sm_count > 0);
        CHECK(strlen(gpus[i].pci_bus_id) == 12);
        CHECK_MSG(strcmp(gpus[i].nearest_cores, "?") != 0,
                  "hwloc could not tell the cores near gpu %d", i);
    }
    rill_cuda_print_devices(stdout);
    printf("%d GPU(s) discovered\n", n);
    return 0;
}
