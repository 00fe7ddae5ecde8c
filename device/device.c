/* The device registry: device 0 is the CPU (host memory); accelerator modules add
 * theirs at init. */
#include "device.h"

#include <string.h>

RILL_LOG_COMPONENT(rill_log_device, "device");

rill_status_t rill_device_register_params(void)
{
    return rill_log_register(&rill_log_device);
}

static const rill_device_ops_t cpu_device_ops = {
    .name = "cpu",
    .type = RILL_DEVICE_CPU,
};

static rill_device_t devices[RILL_MAX_DEVICES] = {
    [0] = { .index = 0, .ops = &cpu_device_ops },
};
static int nb_devices = 1;

int rill_device_count(void)
{
    return nb_devices;
}

rill_device_t *rill_device_get(int index)
{
    return (index >= 0 && index < nb_devices) ? &devices[index] : NULL;
}

const char *rill_device_type_name(rill_device_type_t type)
{
    switch (type) {
    case RILL_DEVICE_CPU:
        return "cpu";
    case RILL_DEVICE_CUDA:
        return "cuda";
    }
    return "?";
}
