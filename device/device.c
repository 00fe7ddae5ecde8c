/* The device registry: device 0 is the CPU (host memory); the GPU managers add theirs at
 * init. */
#include "device.h"

#include <string.h>

#include "channel.h"
#include "cuda_device.h"
#include "rill/params.h"

RILL_LOG_COMPONENT(rill_log_device, "device");

static rill_param_t *param_cpu_gflops;

static const rill_param_decl_t device_params[] = {
    { "device_cpu_gflops", RILL_PARAM_INT, RILL_PARAM_LEVEL_TUNER,
      "Speed of one CPU core in GFLOP/s, as the device choice assumes it when it weighs a "
      "task's flop estimate on the CPU against a GPU",
      .v.i = { 30, 1, 1000000 }, .param = &param_cpu_gflops },
};

rill_status_t rill_device_register_params(void)
{
    rill_status_t (*const steps[])(void) = { rill_cuda_register_params,
                                             rill_channel_register_params };
    rill_status_t s = rill_log_register(&rill_log_device);
    rill_status_t r = rill_params_register_table(device_params, 1);
    s = s != RILL_SUCCESS ? s : r;
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        r = steps[i]();
        s = s != RILL_SUCCESS ? s : r;
    }
    return s;
}

double rill_device_cpu_gflops(void)
{
    return param_cpu_gflops ? (double)rill_param_get_int(param_cpu_gflops) : 30.0;
}

static rill_device_t devices[RILL_MAX_DEVICES] = {
    [0] = { .index = 0, .type = RILL_BODY_CPU, .name = "cpu" },
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

rill_status_t rill_device_add(rill_device_type_t type, const char *name,
                              const rill_device_ops_t *ops, void *priv, double gflops,
                              rill_device_t **dev_p)
{
    if (nb_devices == RILL_MAX_DEVICES) {
        RILL_ERROR(RILL_LOG_DEVICE,
                   "cannot add device '%s': at most %d devices (the CPU and %d "
                   "GPUs) per process",
                   name, RILL_MAX_DEVICES, RILL_MAX_DEVICES - 1);
        return RILL_ERR_NO_MEMORY;
    }
    rill_device_t *d = &devices[nb_devices];
    memset(d, 0, sizeof(*d));
    d->index = nb_devices;
    d->type = type;
    snprintf(d->name, sizeof(d->name), "%s", name);
    d->ops = ops;
    d->priv = priv;
    d->gflops = gflops;
    atomic_init(&d->queued_ns, 0);
    atomic_init(&d->queued_tasks, 0);
    nb_devices++;
    *dev_p = d;
    return RILL_SUCCESS;
}

void rill_device_remove_all(void)
{
    for (int i = 1; i < nb_devices; i++)
        memset(&devices[i], 0, sizeof(devices[i]));
    nb_devices = 1;
}

const char *rill_device_type_name(rill_device_type_t type)
{
    switch (type) {
    case RILL_BODY_CPU:
        return "cpu";
    case RILL_BODY_CUDA:
        return "cuda";
    }
    return "?";
}
