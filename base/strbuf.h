/* A growable text buffer for reports and dumps (statistics, DOT graphs). Internal. */
#ifndef RILL_BASE_STRBUF_H
#define RILL_BASE_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct rill_strbuf {
    char *buf; /* NUL-terminated once anything was appended; NULL before */
    size_t len, cap;
    bool failed; /* an allocation failed: later appends are dropped */
} rill_strbuf_t;

#define RILL_STRBUF_INIT                                                                           \
    {                                                                                              \
        NULL, 0, 0, false                                                                          \
    }

/** Append printf-formatted text, growing the buffer; on allocation failure the buffer keeps
 * what it had and failed is set. Owner's thread. */
void rill_strbuf_printf(rill_strbuf_t *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/** Append s as a JSON string: quoted, with '"' and '\' escaped and control characters as
 * \u00XX (other bytes as they are: Rill's text is UTF-8 or ASCII). Owner's thread. */
void rill_strbuf_json_string(rill_strbuf_t *sb, const char *s);
/** Free the text and reset. */
void rill_strbuf_fini(rill_strbuf_t *sb);

#endif
