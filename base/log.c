/* Logging: one line per message on stderr, verbosity per component. */
#include "log.h"

#include <stdio.h>
#include <string.h>

#include "rill/params.h"

static int log_rank = -1;

RILL_LOG_COMPONENT(rill_log_params, "params");
RILL_LOG_COMPONENT(rill_log_topo, "topo");
RILL_LOG_COMPONENT(rill_log_profile, "profile");

rill_status_t rill_log_register(rill_log_comp_t *comp)
{
    char name[64], help[160];
    rill_param_t *p;
    snprintf(name, sizeof(name), "%s_verbose", comp->name);
    snprintf(help, sizeof(help),
             "Verbosity of the %s component (0: errors and warnings, 1: choices and bindings, "
             "2+: debugging)",
             comp->name);
    rill_status_t s = rill_param_register_int(name, help, RILL_PARAM_LEVEL_USER, 0, 0, 100, &p);
    if (s == RILL_SUCCESS || p)
        comp->level = (int)rill_param_get_int(p);
    return s;
}

rill_status_t rill_log_register_params(void)
{
    rill_status_t s = rill_log_register(&rill_log_params);
    rill_status_t t = rill_log_register(&rill_log_topo);
    rill_status_t u = rill_log_register(&rill_log_profile);
    return s != RILL_SUCCESS ? s : t != RILL_SUCCESS ? t : u;
}

void rill_log_set_rank(int rank)
{
    log_rank = rank;
}

void rill_log_emit(const rill_log_comp_t *comp, const char *kind, const char *fmt, ...)
{
    char line[2048];
    int off;
    if (log_rank >= 0)
        off = snprintf(line, sizeof(line), "[rill %d %s] %s: ", log_rank, comp->name, kind);
    else
        off = snprintf(line, sizeof(line), "[rill %s] %s: ", comp->name, kind);
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

rill_status_t rill_log_arg_null(const rill_log_comp_t *comp, const char *call, const char *what)
{
    rill_log_emit(comp, "error", "%s: %s is NULL", call, what);
    return RILL_ERR_INVALID_ARG;
}
