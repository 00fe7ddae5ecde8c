/* Introspection for tools such as rill_info: parameters and topology without
 * starting the runtime. */
#ifndef RILL_INFO_H
#define RILL_INFO_H

#include <stdio.h>

#include "rill/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Load the parameter sources (as rill_init does, consuming `--mca name value` from
 * argc/argv) and register the parameters of every framework, without starting any
 * thread, MPI or device. Afterwards rill_params_count/rill_params_info list them all.
 * RILL_ERR_BAD_STATE while a context runs (between rill_init and rill_fini). Main thread.
 */
RILL_API rill_status_t rill_info_register_params(int *argc, char ***argv);

/** Discover the topology as rill_init would (same parameters) and print the machine
 * and the binding each worker would get. Call after rill_info_register_params. */
RILL_API rill_status_t rill_info_print_topology(FILE *out);

/** Discover the devices (the CPU, and the CUDA GPUs the process can see with their
 * nearest cores) and print them, or why no GPU is usable. Creates no GPU context. */
RILL_API rill_status_t rill_info_print_devices(FILE *out);

#ifdef __cplusplus
}
#endif
#endif
