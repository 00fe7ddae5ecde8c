/* The executed task graph of each rank in DOT (profile_dot = <prefix>: <prefix>.<rank>.dot
 * at rill_fini): local tasks, the dependencies between them, and the remote edges of
 * versions sent and received (dashed, to and from a node named after the transfer, the
 * same name in both ranks' files). Recorded by the inserting thread only; bounded by
 * profile_dot_max_tasks. */
#include "dtd_internal.h"
#include "strbuf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool dtd_dot_on;

static struct {
    rill_param_t *p_prefix, *p_max;
    rill_strbuf_t text;
    uint64_t ntasks, max_tasks, last_serial; /* last task recorded */
    bool truncated;
    int rank;
    FILE *file; /* the output, created at rill_init (dtd_dot_init) */
    char path[4200];
} dot;

static const rill_param_decl_t dot_params[] = {
    { "profile_dot", RILL_PARAM_STRING, RILL_PARAM_LEVEL_USER,
      "Write the executed DTD task graph of each rank in DOT, <value>.<rank>.dot, at rill_fini "
      "(empty: none)",
      .v.s = { "", NULL }, .param = &dot.p_prefix },
    { "profile_dot_max_tasks", RILL_PARAM_INT, RILL_PARAM_LEVEL_USER,
      "Most tasks per rank the DOT graph records (the rest is left out, and the file says so)",
      .v.i = { 10000, 1, 1 << 30 }, .param = &dot.p_max },
};

rill_status_t dtd_dot_register_params(void)
{
    return rill_params_register_table(dot_params, sizeof(dot_params) / sizeof(dot_params[0]));
}

rill_status_t dtd_dot_init(int rank)
{
    const char *p = rill_param_get_string(dot.p_prefix);
    dtd_dot_on = p && p[0];
    dot.rank = rank;
    dot.max_tasks = (uint64_t)rill_param_get_int(dot.p_max);
    dot.ntasks = dot.last_serial = 0;
    dot.truncated = false;
    rill_strbuf_fini(&dot.text);
    if (!dtd_dot_on)
        return RILL_SUCCESS;
    /* created now: a path that cannot be written fails the start, not the end of the run */
    snprintf(dot.path, sizeof(dot.path), "%s.%d.dot", p, rank);
    dot.file = fopen(dot.path, "w");
    if (!dot.file) {
        RILL_ERROR(RILL_LOG_DTD,
                   "profile_dot: cannot write %s: %s (the prefix's folder must exist and be "
                   "writable)",
                   dot.path, strerror(errno));
        dtd_dot_on = false;
        return RILL_ERR_IO;
    }
    return RILL_SUCCESS;
}

#define emit(...) rill_strbuf_printf(&dot.text, __VA_ARGS__)

void dtd_dot_task(uint64_t serial, const char *cls, uint32_t tp_id)
{
    if (dot.ntasks >= dot.max_tasks) {
        dot.truncated = true;
        return;
    }
    dot.ntasks++;
    dot.last_serial = serial;
    char name[64];
    snprintf(name, sizeof(name), "%s", cls);
    for (char *c = name; *c; c++)
        if (*c == '"' || *c == '\\')
            *c = '_';
    emit("  t%" PRIu64 " [label=\"%s #%" PRIu64 "\\ntaskpool %u\"];\n", serial, name, serial,
         tp_id);
}

static bool recorded(uint64_t serial)
{
    return dot.ntasks && serial <= dot.last_serial && !(dot.truncated && serial > dot.last_serial);
}

void dtd_dot_edge(uint64_t pred, uint64_t succ)
{
    if (recorded(pred) && recorded(succ))
        emit("  t%" PRIu64 " -> t%" PRIu64 ";\n", pred, succ);
}

void dtd_dot_remote(uint64_t serial, uint64_t flow, bool out, int peer)
{
    if (!recorded(serial))
        return;
    emit("  x%" PRIx64 " [label=\"%s rank %d\", shape=box, style=dashed];\n", flow,
         out ? "to" : "from", peer);
    if (out)
        emit("  t%" PRIu64 " -> x%" PRIx64 " [style=dashed];\n", serial, flow);
    else
        emit("  x%" PRIx64 " -> t%" PRIu64 " [style=dashed];\n", flow, serial);
}

rill_status_t dtd_dot_finish(void)
{
    rill_status_t status = RILL_SUCCESS;
    if (dot.file) {
        FILE *f = dot.file;
        dot.file = NULL;
        fprintf(f, "digraph rank%d {\n  label=\"rank %d: %" PRIu64 " tasks%s\";\n", dot.rank,
                dot.rank, dot.ntasks,
                dot.truncated     ? " (truncated at profile_dot_max_tasks)"
                : dot.text.failed ? " (truncated: out of memory)"
                                  : "");
        if (dot.text.len)
            fwrite(dot.text.buf, 1, dot.text.len, f);
        fputs("}\n", f);
        if (ferror(f) | (fclose(f) != 0)) {
            RILL_ERROR(RILL_LOG_DTD, "profile_dot: writing %s failed: %s", dot.path,
                       strerror(errno));
            status = RILL_ERR_IO;
        }
    }
    rill_strbuf_fini(&dot.text);
    dtd_dot_on = false;
    return status;
}
