/* The device abstraction: each device (the CPU, each GPU) is an index and an ops
 * table. Internal. */
#ifndef RILL_DEVICE_H
#define RILL_DEVICE_H

#include "rill/status.h"

#include "log.h"

/** The device layer's log component (device_verbose). */
extern rill_log_comp_t rill_log_device;
#define RILL_LOG_DEVICE (&rill_log_device)

/** Register the device layer's parameters. Main thread. */
rill_status_t rill_device_register_params(void);

#define RILL_MAX_DEVICES 9 /* the CPU + up to 8 GPUs */

typedef enum rill_device_type {
    RILL_DEVICE_CPU = 0,
    RILL_DEVICE_CUDA = 1,
} rill_device_type_t;

typedef struct rill_device_ops {
    const char *name;
    rill_device_type_t type;
} rill_device_ops_t;

typedef struct rill_device {
    int index; /* 0 is the CPU; data copies are indexed by it */
    const rill_device_ops_t *ops;
} rill_device_t;

/** Number of devices (1: the CPU only) and device i. Any thread. */
int rill_device_count(void);
rill_device_t *rill_device_get(int index);
const char *rill_device_type_name(rill_device_type_t type);

#endif
