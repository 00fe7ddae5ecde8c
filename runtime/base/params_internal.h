/* Internal entry points of the parameter registry (runtime/base/params.c). */
#ifndef RILL_BASE_PARAMS_INTERNAL_H
#define RILL_BASE_PARAMS_INTERNAL_H

#include "rill/params.h"

/**
 * Free every registered parameter, every loaded source (files, environment,
 * command line, rill_param_set values) and the record of names already warned
 * about, leaving the registry as at process start. Every rill_param_t handle and
 * every string a getter or rill_params_info returned becomes invalid. For tests
 * that need a clean registry. Main thread, with no other thread reading a value.
 */
void rill_params_reset(void);

#endif
