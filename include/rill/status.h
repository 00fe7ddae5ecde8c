/* Rill status codes: every fallible call returns a rill_status_t. */
#ifndef RILL_STATUS_H
#define RILL_STATUS_H

#include "rill/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Status of a fallible call: RILL_SUCCESS (0) or a negative error. */
typedef enum rill_status {
    RILL_SUCCESS = 0,
    RILL_ERR_INVALID_ARG = -1,   /**< an argument or parameter value is not allowed */
    RILL_ERR_NO_MEMORY = -2,     /**< an allocation failed */
    RILL_ERR_NOT_FOUND = -3,     /**< no such name, key or object */
    RILL_ERR_NOT_SUPPORTED = -4, /**< the operation is not available in this build/component */
    RILL_ERR_BAD_STATE = -5,     /**< the object is not in a state that allows the call */
    RILL_ERR_IO = -6,            /**< a file or system call failed */
    RILL_ERR_COMM = -7,          /**< the communication layer failed (MPI error, dead peer) */
    RILL_ERR_DEVICE = -8,        /**< a device (GPU) call failed */
    RILL_ERR_TIMEOUT = -9,       /**< a wait exceeded its limit */
    RILL_ERR_MISMATCH = -10,     /**< ranks disagree (diverging insertion, grid mismatch) */
    RILL_ERR_NUMERIC = -11,      /**< a numerical failure (matrix not SPD, check failed) */
    RILL_ERR_TASK = -12,         /**< a task body reported an error */
    RILL_ERR_BUSY = -13,         /**< the object is still in use (by a taskpool not waited for) */
} rill_status_t;

/** Short, static, human-readable name of a status ("invalid argument"). Any thread. */
RILL_API const char *rill_status_string(rill_status_t status);

#ifdef __cplusplus
}
#endif
#endif
