/* Logging with a verbosity level per component (<component>_verbose). Each layer
 * declares its own components (base has params and topo; comm, the runtime core and the
 * front ends declare theirs), so base names no higher layer. Internal. */
#ifndef RILL_BASE_LOG_H
#define RILL_BASE_LOG_H

#include <stdarg.h>

#include "rill/status.h"

/** A component that logs: its name and verbosity (0 = errors and warnings only, 1 = what
 * a user wants to see: bindings, choices; 2.. = debugging). Defined by the layer that
 * owns it with RILL_LOG_COMPONENT; the level is written at registration (main thread,
 * before the threads start) and read by any thread. */
typedef struct rill_log_comp {
    const char *name;
    int level;
} rill_log_comp_t;

#define RILL_LOG_COMPONENT(var, cname) rill_log_comp_t var = { .name = (cname), .level = 0 }

/** Register <comp->name>_verbose and read its value. Registering again re-reads it. Main
 * thread. */
rill_status_t rill_log_register(rill_log_comp_t *comp);

/* base's own components */
extern rill_log_comp_t rill_log_params, rill_log_topo, rill_log_profile;
#define RILL_LOG_PARAMS  (&rill_log_params)
#define RILL_LOG_TOPO    (&rill_log_topo)
#define RILL_LOG_PROFILE (&rill_log_profile) /* traces, graph dumps, statistics */

/** Register base's components (params_verbose, topo_verbose, profile_verbose). Main
 * thread. */
rill_status_t rill_log_register_params(void);
/** The rank printed in every line (-1: none). Set once by the comm layer. */
void rill_log_set_rank(int rank);

/** A public call given NULL for what it needs: says "call: what is NULL" (an error of comp)
 * and returns RILL_ERR_INVALID_ARG. Any thread. */
rill_status_t rill_log_arg_null(const rill_log_comp_t *comp, const char *call, const char *what);

/** Emit one line "[rill <rank> <component>] <kind>: message" on stderr. Any thread. */
void rill_log_emit(const rill_log_comp_t *comp, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define RILL_ERROR(comp, ...) rill_log_emit((comp), "error", __VA_ARGS__)
#define RILL_WARN(comp, ...)  rill_log_emit((comp), "warning", __VA_ARGS__)
#define RILL_VERBOSE(comp, lvl, ...)                                                               \
    do {                                                                                           \
        if ((comp)->level >= (lvl))                                                                \
            rill_log_emit((comp), "info", __VA_ARGS__);                                            \
    } while (0)

#endif
