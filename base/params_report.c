/* The parameters as a run reports them: params_verbose's lines at rill_init, and one JSON
 * array for the runtime report (runtime_report) and the traces' metadata. Uses only the
 * registry's read-only listing (rill_params_info). */
#include "log.h"
#include "params_internal.h"

#include <stdio.h>

const char *rill_param_level_string(int level)
{
    static const char *const names[] = { "?", "user", "tuner", "developer" };
    return level >= RILL_PARAM_LEVEL_USER && level <= RILL_PARAM_LEVEL_DEVELOPER ? names[level]
                                                                                 : names[0];
}

/* "file /path/x.conf:3", "env RILL_MCA_x", "cmdline --mca", "default", "set" */
static void source_text(const rill_param_info_t *info, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s", rill_param_source_string(info->source),
             info->source_detail ? " " : "", info->source_detail ? info->source_detail : "");
}

void rill_params_log(void)
{
    int level = rill_log_params.level;
    if (level < 1)
        return;
    size_t n = rill_params_count(), set = 0;
    rill_param_info_t info;
    for (size_t i = 0; i < n; i++)
        if (rill_params_info(i, &info) == RILL_SUCCESS && info.source != RILL_PARAM_SOURCE_DEFAULT)
            set++;
    RILL_VERBOSE(RILL_LOG_PARAMS, 1, "%zu parameters, %zu of them not at their default%s", n, set,
                 level >= 2 ? " (all listed)"
                 : set      ? ":"
                            : "");
    for (size_t i = 0; i < n; i++) {
        if (rill_params_info(i, &info) != RILL_SUCCESS ||
            (level < 2 && info.source == RILL_PARAM_SOURCE_DEFAULT))
            continue;
        char src[320];
        source_text(&info, src, sizeof(src));
        RILL_VERBOSE(RILL_LOG_PARAMS, 1, "  %s = %s (%s)", info.name, info.value, src);
    }
}

void rill_params_json(rill_strbuf_t *sb)
{
    size_t n = rill_params_count();
    rill_strbuf_printf(sb, "[");
    for (size_t i = 0; i < n; i++) {
        rill_param_info_t info;
        if (rill_params_info(i, &info) != RILL_SUCCESS)
            continue;
        rill_strbuf_printf(sb, "%s{\"name\":", i ? "," : "");
        rill_strbuf_json_string(sb, info.name);
        rill_strbuf_printf(sb, ",\"type\":\"%s\",\"value\":", rill_param_type_string(info.type));
        /* a string's whole value (the listing's text stops at 255 bytes): a long path too */
        rill_param_t *p = NULL;
        const char *whole =
            info.type == RILL_PARAM_STRING && rill_param_lookup(info.name, &p) == RILL_SUCCESS && p
                ? rill_param_get_string(p)
                : NULL;
        rill_strbuf_json_string(sb, whole ? whole : info.value);
        rill_strbuf_printf(sb,
                           ",\"source\":\"%s\",\"where\":", rill_param_source_string(info.source));
        if (info.source_detail)
            rill_strbuf_json_string(sb, info.source_detail);
        else
            rill_strbuf_printf(sb, "null");
        rill_strbuf_printf(sb, ",\"default\":");
        rill_strbuf_json_string(sb, info.def);
        rill_strbuf_printf(sb, ",\"allowed\":");
        rill_strbuf_json_string(sb, info.allowed);
        rill_strbuf_printf(sb, ",\"level\":\"%s\"}", rill_param_level_string(info.level));
    }
    rill_strbuf_printf(sb, "]");
}
