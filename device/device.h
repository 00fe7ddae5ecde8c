/* The device abstraction: each device (the CPU, each GPU) is an index and an ops
 * table. Internal. */
#ifndef RILL_DEVICE_H
#define RILL_DEVICE_H

#include "rill/status.h"

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
