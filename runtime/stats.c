/* End-of-run statistics: per worker busy/idle time and tasks, per task class count and
 * mean time, comm traffic per peer and protocol, the comm thread's polling vs sleeping.
 * Collected only when asked (profile_stats, runtime_verbose >= 1, a trace or a runtime
 * report), printed as one table per rank at rill_fini, put in the trace's metadata and in
 * the runtime report. */
#include "core.h"
#include "strbuf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rill_param_t *param_stats;

static const rill_param_decl_t stats_params[] = {
    { "profile_stats", RILL_PARAM_BOOL, RILL_PARAM_LEVEL_USER,
      "Print end-of-run statistics per rank at rill_fini (also printed with runtime_verbose >= "
      "1, and put in traces)",
      .v.b = false, .param = &param_stats },
};

rill_status_t rill_stats_register_params(void)
{
    return rill_params_register_table(stats_params, 1);
}

bool rill_stats_wanted(void)
{
    return (param_stats && rill_param_get_bool(param_stats)) || rill_log_runtime.level >= 1 ||
           rill_trace_on() || rill_report_wanted();
}

/* A worker's row for class tc (created on first use; the last row takes what does not fit). */
static rill_class_stat_t *class_row(rill_worker_t *w, const rill_task_class_t *tc)
{
    uint32_t h = (uint32_t)(((uintptr_t)tc >> 4) * 2654435761u) % RILL_STATS_CLASSES;
    for (int i = 0; i < RILL_STATS_CLASSES; i++) {
        rill_class_stat_t *r = &w->stats.classes[(h + (uint32_t)i) % RILL_STATS_CLASSES];
        if (r->tc == tc)
            return r;
        if (!r->tc) {
            r->tc = tc;
            snprintf(r->name, sizeof(r->name), "%s", tc->name ? tc->name : "?");
            for (char *c = r->name; *c; c++) /* it goes into JSON as is */
                if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
                    *c = '_';
            return r;
        }
    }
    return NULL;
}

void rill_stats_task(rill_worker_t *w, const rill_task_class_t *tc, uint64_t ns)
{
    w->stats.ntasks++;
    w->stats.busy_ns += ns;
    rill_class_stat_t *r = class_row(w, tc);
    if (r) {
        r->count++;
        r->ns += ns;
    } else {
        w->stats.unclassified++;
    }
}

typedef struct merged_class {
    char name[32];
    uint64_t count, ns;
} merged_class_t;

static int by_time(const void *a, const void *b)
{
    const merged_class_t *x = a, *y = b;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : strcmp(x->name, y->name);
}

char *rill_stats_report(rill_context_t *ctx)
{
    if (!ctx->stats_on)
        return NULL;
    uint64_t wall = rill_time_ns() - ctx->stats_start_ns;
    merged_class_t classes[RILL_STATS_CLASSES * 4];
    int nclasses = 0;
    for (int i = 0; i < ctx->nworkers; i++)
        for (int k = 0; k < RILL_STATS_CLASSES; k++) {
            const rill_class_stat_t *r = &ctx->workers[i].stats.classes[k];
            if (!r->tc)
                continue;
            int j = 0;
            while (j < nclasses && strcmp(classes[j].name, r->name))
                j++;
            if (j == nclasses) {
                if (nclasses == (int)(sizeof(classes) / sizeof(classes[0])))
                    continue;
                snprintf(classes[j].name, sizeof(classes[j].name), "%s", r->name);
                classes[j].count = classes[j].ns = 0;
                nclasses++;
            }
            classes[j].count += r->count;
            classes[j].ns += r->ns;
        }
    qsort(classes, (size_t)nclasses, sizeof(classes[0]), by_time);

    rill_strbuf_t txt = RILL_STRBUF_INIT, js = RILL_STRBUF_INIT;
    rill_strbuf_printf(&txt, "[rill %d stats] run of %.3f s on rank %d of %d\n", ctx->rank,
                       (double)wall / 1e9, ctx->rank, ctx->nranks);
    rill_strbuf_printf(&txt, "[rill %d stats]   worker      tasks    busy_s    idle_s  busy%%\n",
                       ctx->rank);
    rill_strbuf_printf(&js, "{\"wall_s\":%.6f,\"workers\":[", (double)wall / 1e9);
    for (int i = 0; i < ctx->nworkers; i++) {
        const rill_worker_stats_t *s = &ctx->workers[i].stats;
        double busy = (double)s->busy_ns / 1e9, idle = (double)wall / 1e9 - busy;
        rill_strbuf_printf(&txt, "[rill %d stats]   %6d %10" PRIu64 " %9.3f %9.3f %5.1f\n",
                           ctx->rank, i, s->ntasks, busy, idle > 0 ? idle : 0,
                           wall ? 100.0 * (double)s->busy_ns / (double)wall : 0);
        rill_strbuf_printf(&js, "%s{\"worker\":%d,\"tasks\":%" PRIu64 ",\"busy_s\":%.6f}",
                           i ? "," : "", i, s->ntasks, busy);
    }
    rill_strbuf_printf(&txt,
                       "[rill %d stats]   class                         count   mean_us  "
                       "total_s\n",
                       ctx->rank);
    rill_strbuf_printf(&js, "],\"classes\":[");
    for (int j = 0; j < nclasses; j++) {
        double mean = classes[j].count ? (double)classes[j].ns / 1e3 / (double)classes[j].count : 0;
        rill_strbuf_printf(&txt, "[rill %d stats]   %-28s %7" PRIu64 " %9.1f %8.3f\n", ctx->rank,
                           classes[j].name, classes[j].count, mean, (double)classes[j].ns / 1e9);
        rill_strbuf_printf(&js, "%s{\"class\":\"%s\",\"count\":%" PRIu64 ",\"mean_us\":%.3f}",
                           j ? "," : "", classes[j].name, classes[j].count, mean);
    }
    rill_strbuf_printf(&js, "],\"peers\":[");
    if (ctx->nranks > 1) {
        rill_strbuf_printf(&txt,
                           "[rill %d stats]   peer  msgs_out  inline_B_out  rdv_out     rdv_B_out  "
                           "msgs_in  inline_B_in  rdv_in     rdv_B_in  node wire\n",
                           ctx->rank);
        int first = 1;
        for (int p = 0; p < ctx->nranks; p++) {
            if (p == ctx->rank)
                continue;
            rill_comm_peer_stats_t ps;
            rill_comm_peer_stats(ctx->comm, p, &ps);
            const char *wire = rill_comm_peer_wire(ctx->comm, p, NULL);
            rill_strbuf_printf(
                &txt,
                "[rill %d stats]   %4d %9" PRIu64 " %13" PRIu64 " %8" PRIu64 " %13" PRIu64
                " %8" PRIu64 " %12" PRIu64 " %7" PRIu64 " %12" PRIu64 " %5d %s\n",
                ctx->rank, p, ps.am_sent, ps.am_bytes_sent, ps.rdv_sent, ps.rdv_bytes_sent,
                ps.am_recv, ps.am_bytes_recv, ps.rdv_recv, ps.rdv_bytes_recv,
                rill_comm_node_of(ctx->comm, p), wire ? wire : "?");
            rill_strbuf_printf(
                &js,
                "%s{\"peer\":%d,\"am_sent\":%" PRIu64 ",\"am_bytes_sent\":%" PRIu64
                ",\"rdv_sent\":%" PRIu64 ",\"rdv_bytes_sent\":%" PRIu64 ",\"am_recv\":%" PRIu64
                ",\"am_bytes_recv\":%" PRIu64 ",\"rdv_recv\":%" PRIu64
                ",\"rdv_bytes_recv\":%" PRIu64 ",\"net_bytes_sent\":%" PRIu64
                ",\"net_bytes_recv\":%" PRIu64 ",\"node\":%d,\"wire\":\"%s\"}",
                first ? "" : ",", p, ps.am_sent, ps.am_bytes_sent, ps.rdv_sent, ps.rdv_bytes_sent,
                ps.am_recv, ps.am_bytes_recv, ps.rdv_recv, ps.rdv_bytes_recv, ps.net_bytes_sent,
                ps.net_bytes_recv, rill_comm_node_of(ctx->comm, p), wire ? wire : "?");
            first = 0;
        }
        rill_comm_stats_t cs;
        rill_comm_stats(ctx->comm, &cs);
        double th = (double)cs.thread_ns / 1e9, sl = (double)cs.sleep_ns / 1e9;
        rill_strbuf_printf(
            &txt,
            "[rill %d stats]   comm thread: %.3f s, polling %.3f s, sleeping %.3f s (%" PRIu64
            " sleeps); %" PRIu64 " turns over 0.5 ms (%.3f s), %" PRIu64
            " wake-ups over 0.5 ms late (%.3f s)\n",
            ctx->rank, th, th > sl ? th - sl : 0, sl, cs.sleeps, cs.slow_turns,
            (double)cs.slow_ns / 1e9, cs.late_wakes, (double)cs.late_ns / 1e9);
        rill_strbuf_printf(&js,
                           "],\"comm_thread\":{\"polling_s\":%.6f,\"sleeping_s\":%.6f,"
                           "\"slow_turns\":%" PRIu64 ",\"slow_s\":%.6f,\"late_wakes\":%" PRIu64
                           ",\"late_s\":%.6f",
                           th > sl ? th - sl : 0, sl, cs.slow_turns, (double)cs.slow_ns / 1e9,
                           cs.late_wakes, (double)cs.late_ns / 1e9);
        rill_strbuf_printf(&js, "}}");
    } else {
        rill_strbuf_printf(&js, "]}");
    }
    if (txt.buf &&
        ((param_stats && rill_param_get_bool(param_stats)) || rill_log_runtime.level >= 1))
        fputs(txt.buf, stderr);
    char *json = NULL;
    if (js.buf && !js.failed) {
        if (rill_trace_on())
            rill_trace_set_stats(js.buf);
        json = js.buf; /* the caller's now */
    } else {
        rill_strbuf_fini(&js);
    }
    rill_strbuf_fini(&txt);
    return json;
}
