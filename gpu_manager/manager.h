/* The GPU managers: one always-on thread per GPU this process uses. Internal. */
#ifndef RILL_GPU_MANAGER_H
#define RILL_GPU_MANAGER_H

#include <stdio.h>

#include "core.h"

/** The gpu_manager layer's log component (gpu_verbose). */
extern rill_log_comp_t rill_log_gpu;
#define RILL_LOG_GPU (&rill_log_gpu)

/** Register the layer's parameters (device_cuda_max_inflight...). Main thread. */
rill_status_t rill_gpu_register_params(void);

/**
 * Start one manager per GPU in ctx->gpus: each binds to its reserved core, makes its GPU
 * current, sets up the GPU's resources (rill_cuda_gpu_open) and registers the GPU as a
 * device. Returns once every manager is up, or with the first error (the message names the
 * GPU and the call; nothing is left running). No GPU: nothing to do. Main thread, in
 * rill_init.
 */
rill_status_t rill_gpu_managers_start(rill_context_t *ctx);

/** Print one line per manager (what it holds, what is in flight) for rill_fini's report
 * and the watchdog. */
void rill_gpu_managers_report(FILE *out);

#endif
