/* What the benchmarks' argument parsers share (plain C, any benchmark): a whole-string
 * integer in a range. Each benchmark words its own message from the result. */
#ifndef BENCH_ARGS_H
#define BENCH_ARGS_H

#include <errno.h>
#include <stdlib.h>

/* s (all of it) as an integer in [min, max] into *out: 0, else -1 (no number, trailing
 * text, out of range or of long) and *out unchanged. */
static inline int bench_parse_long(const char *s, long min, long max, long *out)
{
    if (!s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

#endif
