/* Logging with a verbosity level per framework (<framework>_verbose). Internal. */
#ifndef RILL_BASE_LOG_H
#define RILL_BASE_LOG_H

#include <stdarg.h>

#include "rill/status.h"

/** The frameworks that log; each has a parameter <name>_verbose. */
typedef enum rill_log_fw {
    RILL_LOG_RUNTIME, /* context, taskpools, termination */
    RILL_LOG_PARAMS,
    RILL_LOG_TOPO,
    RILL_LOG_SCHED,
    RILL_LOG_DATA,
    RILL_LOG_DTD,
    RILL_LOG_PTG,
    RILL_LOG_COMM,
    RILL_LOG_DEVICE,
    RILL_LOG_GPU,
    RILL_LOG_APP,
    RILL_LOG_NB_FW
} rill_log_fw_t;

/** Verbosity per framework: 0 = errors and warnings only, 1 = what a user wants to
 * see (bindings, choices), 2.. = debugging. Written at init, read by any thread. */
extern int rill_log_level[RILL_LOG_NB_FW];

/** Register <framework>_verbose for every framework and read their values. Main thread. */
rill_status_t rill_log_register_params(void);
/** The rank printed in every line (-1: none). Set once by the comm layer. */
void rill_log_set_rank(int rank);
const char *rill_log_fw_name(rill_log_fw_t fw);

/** Emit one line "[rill <rank> <fw>] <kind>: message" on stderr. Any thread. */
void rill_log_emit(rill_log_fw_t fw, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define RILL_ERROR(fw, ...) rill_log_emit((fw), "error", __VA_ARGS__)
#define RILL_WARN(fw, ...)  rill_log_emit((fw), "warning", __VA_ARGS__)
#define RILL_VERBOSE(fw, lvl, ...)                                                                 \
    do {                                                                                           \
        if (rill_log_level[(fw)] >= (lvl))                                                         \
            rill_log_emit((fw), "info", __VA_ARGS__);                                              \
    } while (0)

#endif
