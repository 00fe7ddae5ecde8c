/* The runtime report (runtime_report): at rill_fini each rank writes one JSON document of
 * what the run used and did: its command line, every parameter with its value and source,
 * the build, the machine, and the end-of-run statistics (stats.c). With it a run can be
 * repeated exactly, and tools compare runs (tools/rill_tune). Its schema is
 * docs/runtime_report.schema.json; a test validates a report against it. */
#include "core.h"
#include "params_internal.h"
#include "rill/config.h"
#include "strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static rill_param_t *param_report;

static const rill_param_decl_t report_params[] = {
    { "runtime_report", RILL_PARAM_STRING, RILL_PARAM_LEVEL_USER,
      "Write a JSON report of the run at rill_fini to this file (rank 0; rank r > 0 writes "
      "FILE.r): the command line, every parameter with its value and source, the build, the "
      "machine and the run's statistics, to repeat or compare runs. Empty: no report",
      .v.s.def = "", .param = &param_report },
};

rill_status_t rill_report_register_params(void)
{
    return rill_params_register_table(report_params, 1);
}

bool rill_report_wanted(void)
{
    const char *path = param_report ? rill_param_get_string(param_report) : NULL;
    return path && path[0];
}

/* The report's path on this rank: the value on rank 0, value.r on rank r > 0; false when
 * it does not fit in len bytes. */
static bool report_path(const rill_context_t *ctx, char *path, size_t len)
{
    const char *value = rill_param_get_string(param_report);
    int n = ctx->rank == 0 ? snprintf(path, len, "%s", value)
                           : snprintf(path, len, "%s.%d", value, ctx->rank);
    return n >= 0 && (size_t)n < len;
}

/* The process's whole command line, as it was started (Linux: /proc/self/cmdline, the
 * arguments separated by NUL bytes), appended as JSON strings; false where it cannot be read. */
static bool command_from_proc(rill_strbuf_t *sb)
{
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f)
        return false;
    char buf[16384];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    if (n == 0)
        return false;
    buf[n] = '\0'; /* a command line longer than buf is cut */
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
        rill_strbuf_printf(sb, "%s", i ? "," : "");
        rill_strbuf_json_string(sb, buf + i);
    }
    return true;
}

rill_status_t rill_report_open(rill_context_t *ctx, int argc, char **argv)
{
    if (!rill_report_wanted())
        return RILL_SUCCESS;
    char path[4200];
    if (!report_path(ctx, path, sizeof(path))) {
        RILL_ERROR(RILL_LOG_RUNTIME, "runtime_report: the path is longer than %zu bytes",
                   sizeof(path) - 1);
        return RILL_ERR_INVALID_ARG;
    }
    /* opened now, so that a path that cannot be written fails the start, not the end (not
     * inherited by the programs the run starts) */
    ctx->report_file = fopen(path, "we");
    if (!ctx->report_file) {
        RILL_ERROR(RILL_LOG_RUNTIME, "runtime_report: cannot write %s: %s", path, strerror(errno));
        return RILL_ERR_IO;
    }
    ctx->report_start = time(NULL);
    rill_strbuf_t sb = RILL_STRBUF_INIT;
    rill_strbuf_printf(&sb, "[");
    if (!command_from_proc(&sb)) /* the program may have taken its own options out of argv */
        for (int i = 0; argv && i < argc && argv[i]; i++) {
            rill_strbuf_printf(&sb, "%s", i ? "," : "");
            rill_strbuf_json_string(&sb, argv[i]);
        }
    rill_strbuf_printf(&sb, "]");
    if (sb.failed) {
        rill_strbuf_fini(&sb);
        return RILL_ERR_NO_MEMORY;
    }
    ctx->report_command = sb.buf; /* owned by ctx now */
    return RILL_SUCCESS;
}

static void report_build(rill_strbuf_t *sb)
{
    rill_strbuf_printf(sb, "\"build\":{\"version\":\"%s\",\"git\":", RILL_VERSION_STRING);
    rill_strbuf_json_string(sb, RILL_GIT_HASH);
    rill_strbuf_printf(sb, ",\"type\":");
    rill_strbuf_json_string(sb, RILL_BUILD_TYPE);
    rill_strbuf_printf(sb, ",\"compiler\":");
    rill_strbuf_json_string(sb, RILL_C_COMPILER);
    rill_strbuf_printf(sb, ",\"sanitizer\":");
    rill_strbuf_json_string(sb, RILL_SANITIZER);
    rill_strbuf_printf(sb, ",\"hwloc\":");
    rill_strbuf_json_string(sb, RILL_HWLOC_VERSION);
    rill_strbuf_printf(sb, ",\"mpi\":");
    if (RILL_HAVE_MPI)
        rill_strbuf_json_string(sb, RILL_MPI_VERSION);
    else
        rill_strbuf_printf(sb, "null");
    rill_strbuf_printf(sb, ",\"cuda\":");
    if (RILL_HAVE_CUDA)
        rill_strbuf_json_string(sb, RILL_CUDA_VERSION);
    else
        rill_strbuf_printf(sb, "null");
    rill_strbuf_printf(sb, ",\"ucx\":");
    if (RILL_HAVE_UCX)
        rill_strbuf_json_string(sb, RILL_UCX_VERSION);
    else
        rill_strbuf_printf(sb, "null");
    rill_strbuf_printf(sb, ",\"lapacke\":%s}", RILL_HAVE_LAPACKE ? "true" : "false");
}

static void report_machine(rill_strbuf_t *sb, const rill_context_t *ctx)
{
    char host[256] = "?", summary[192];
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "?");
    host[sizeof(host) - 1] = '\0';
    rill_topo_summary(ctx->topo, summary, sizeof(summary));
    rill_strbuf_printf(sb, "\"machine\":{\"host\":");
    rill_strbuf_json_string(sb, host);
    rill_strbuf_printf(sb, ",\"cores_online\":%ld,\"hwloc\":", sysconf(_SC_NPROCESSORS_ONLN));
    rill_strbuf_json_string(sb, summary);
    rill_strbuf_printf(sb, ",\"worker_cores\":[");
    for (int w = 0; w < rill_topo_nworkers(ctx->topo); w++)
        rill_strbuf_printf(sb, "%s%d", w ? "," : "", rill_topo_worker_core(ctx->topo, w));
    rill_strbuf_printf(sb, "],\"gpus\":[");
    for (int g = 0; g < ctx->ngpus; g++) {
        const rill_cuda_gpu_info_t *gi = &ctx->gpus[g];
        rill_strbuf_printf(sb, "%s{\"name\":", g ? "," : "");
        rill_strbuf_json_string(sb, gi->name);
        rill_strbuf_printf(sb, ",\"pci_bus_id\":");
        rill_strbuf_json_string(sb, gi->pci_bus_id);
        rill_strbuf_printf(sb, ",\"compute_capability\":\"%d.%d\",\"memory_bytes\":%zu}",
                           gi->cc_major, gi->cc_minor, gi->total_mem);
    }
    rill_strbuf_printf(sb, "]");
    if (ctx->ngpus == 0) {
        rill_strbuf_printf(sb, ",\"no_gpu\":");
        rill_strbuf_json_string(sb, ctx->no_gpu_why);
    }
    rill_strbuf_printf(sb, "}");
}

void rill_report_discard(rill_context_t *ctx)
{
    if (!ctx->report_file)
        return;
    fclose(ctx->report_file);
    ctx->report_file = NULL;
    char path[4200];
    if (report_path(ctx, path, sizeof(path)))
        unlink(path); /* the start failed: no report of a run that did not happen */
    free(ctx->report_command);
    ctx->report_command = NULL;
}

rill_status_t rill_report_write(rill_context_t *ctx, const char *stats_json)
{
    FILE *f = ctx->report_file;
    if (!f)
        return RILL_SUCCESS;
    ctx->report_file = NULL;
    char path[4200];
    report_path(ctx, path, sizeof(path)); /* it fitted when it was opened */
    char started[32] = "";
    struct tm tm;
    if (gmtime_r(&ctx->report_start, &tm))
        strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &tm);

    rill_strbuf_t sb = RILL_STRBUF_INIT;
    rill_strbuf_printf(&sb, "{\"rill_runtime_report\":1,\"rank\":%d,\"ranks\":%d,", ctx->rank,
                       ctx->nranks);
    rill_strbuf_printf(&sb, "\"started\":\"%s\",\"command\":%s,", started,
                       ctx->report_command ? ctx->report_command : "[]");
    free(ctx->report_command);
    ctx->report_command = NULL;
    report_build(&sb);
    rill_strbuf_printf(&sb, ",");
    report_machine(&sb, ctx);
    rill_strbuf_printf(&sb, ",\"parameters\":");
    rill_params_json(&sb);
    rill_strbuf_printf(&sb, ",\"statistics\":%s}\n", stats_json ? stats_json : "null");

    rill_status_t status = RILL_SUCCESS;
    bool ok = !sb.failed && fputs(sb.buf, f) >= 0;
    if (fclose(f) != 0 || !ok) {
        RILL_ERROR(RILL_LOG_RUNTIME, "runtime_report: writing %s failed: %s", path,
                   sb.failed ? "out of memory" : strerror(errno));
        status = sb.failed ? RILL_ERR_NO_MEMORY : RILL_ERR_IO;
    } else {
        RILL_VERBOSE(RILL_LOG_RUNTIME, 1, "runtime report written to %s", path);
    }
    rill_strbuf_fini(&sb);
    return status;
}
