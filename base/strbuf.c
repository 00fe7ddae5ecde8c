/* A growable text buffer. */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void rill_strbuf_printf(rill_strbuf_t *sb, const char *fmt, ...)
{
    while (!sb->failed) {
        va_list ap;
        va_start(ap, fmt);
        int n = sb->buf ? vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap) : -1;
        va_end(ap);
        if (n >= 0 && sb->len + (size_t)n < sb->cap) {
            sb->len += (size_t)n;
            return;
        }
        size_t cap = sb->cap ? 2 * sb->cap + (n > 0 ? (size_t)n : 0) : 4096;
        char *b = realloc(sb->buf, cap);
        if (!b) {
            sb->failed = true;
            if (sb->buf)
                sb->buf[sb->len] = '\0';
            return;
        }
        sb->buf = b;
        sb->cap = cap;
    }
}

void rill_strbuf_json_string(rill_strbuf_t *sb, const char *s)
{
    rill_strbuf_printf(sb, "\"");
    const char *run = s; /* the bytes since the last one escaped */
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c != '"' && c != '\\' && c >= 0x20)
            continue;
        rill_strbuf_printf(sb, "%.*s", (int)(s - run), run);
        if (c == '"' || c == '\\')
            rill_strbuf_printf(sb, "\\%c", c);
        else
            rill_strbuf_printf(sb, "\\u%04x", c);
        run = s + 1;
    }
    rill_strbuf_printf(sb, "%s\"", run);
}

void rill_strbuf_fini(rill_strbuf_t *sb)
{
    free(sb->buf);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    sb->failed = false;
}
