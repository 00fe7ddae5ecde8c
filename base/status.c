/* Names of the status codes. */
#include "rill/status.h"

const char *rill_status_string(rill_status_t status)
{
    switch (status) {
    case RILL_SUCCESS:
        return "success";
    case RILL_ERR_INVALID_ARG:
        return "invalid argument";
    case RILL_ERR_NO_MEMORY:
        return "out of memory";
    case RILL_ERR_NOT_FOUND:
        return "not found";
    case RILL_ERR_NOT_SUPPORTED:
        return "not supported";
    case RILL_ERR_BAD_STATE:
        return "bad state";
    case RILL_ERR_IO:
        return "I/O error";
    case RILL_ERR_COMM:
        return "communication error";
    case RILL_ERR_DEVICE:
        return "device error";
    case RILL_ERR_TIMEOUT:
        return "timeout";
    case RILL_ERR_MISMATCH:
        return "mismatch between ranks";
    case RILL_ERR_NUMERIC:
        return "numerical failure";
    case RILL_ERR_TASK:
        return "task failed";
    case RILL_ERR_BUSY:
        return "still in use";
    }
    return "unknown status";
}
