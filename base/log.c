/* Logging: one line per message on stderr, verbosity per framework. */
#include "log.h"

#include <stdio.h>
#include <string.h>

#include "rill/params.h"

int rill_log_level[RILL_LOG_NB_FW];
static int log_rank = -1;

static const char *const fw_names[RILL_LOG_NB_FW] = {
    [RILL_LOG_RUNTIME] = "runtime", [RILL_LOG_PARAMS] = "params", [RILL_LOG_TOPO] = "topo",
    [RILL_LOG_SCHED] = "sched",     [RILL_LOG_DATA] = "data",     [RILL_LOG_DTD] = "dtd",
    [RILL_LOG_PTG] = "ptg",         [RILL_LOG_COMM] = "comm",     [RILL_LOG_DEVICE] = "device",
    [RILL_LOG_GPU] = "gpu",         [RILL_LOG_APP] = "app",
};

const char *rill_log_fw_name(rill_log_fw_t fw)
{
    return (fw >= 0 && fw < RILL_LOG_NB_FW) ? fw_names[fw] : "?";
}

rill_status_t rill_log_register_params(void)
{
    rill_status_t status = RILL_SUCCESS;
    for (int fw = 0; fw < RILL_LOG_NB_FW; fw++) {
        char name[64], help[128];
        rill_param_t *p;
        snprintf(name, sizeof(name), "%s_verbose", fw_names[fw]);
        snprintf(help, sizeof(help),
                 "Verbosity of the %s framework (0: errors and warnings, 1: choices and "
                 "bindings, 2+: debugging)",
                 fw_names[fw]);
        rill_status_t s = rill_param_register_int(name, help, RILL_PARAM_LEVEL_USER, 0, 0, 100, &p);
        if (s == RILL_SUCCESS || p)
            rill_log_level[fw] = (int)rill_param_get_int(p);
        if (s != RILL_SUCCESS)
            status = s;
    }
    return status;
}

void rill_log_set_rank(int rank)
{
    log_rank = rank;
}

void rill_log_emit(rill_log_fw_t fw, const char *kind, const char *fmt, ...)
{
    char line[2048];
    int off;
    if (log_rank >= 0)
        off =
            snprintf(line, sizeof(line), "[rill %d %s] %s: ", log_rank, rill_log_fw_name(fw), kind);
    else
        off = snprintf(line, sizeof(line), "[rill %s] %s: ", rill_log_fw_name(fw), kind);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + off, sizeof(line) - (size_t)off - 1, fmt, ap);
    va_end(ap);
    size_t len = strlen(line);
    if (len == 0 || line[len - 1] != '\n') {
        line[len] = '\n';
        line[len + 1] = '\0';
    }
    /* one fputs per line so concurrent threads do not interleave inside a line */
    fputs(line, stderr);
}
