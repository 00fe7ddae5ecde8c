/* Command-line values for the programs around the library (the testers, the benchmarks, the
 * tools): whole-string numbers in a range. The options themselves go through getopt_long;
 * each program words its messages from what these return (the option, the value given, what
 * is allowed). Header only: nothing of it is in librill. */
#ifndef RILL_ARGS_H
#define RILL_ARGS_H

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* s (all of it, base 10) as an integer in [min, max] into *out: 0, else -1 (NULL, no number,
 * trailing text, out of range or of long) and *out unchanged. */
static inline int rill_args_long(const char *s, long min, long max, long *out)
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

/* The same into an int (min and max within int's range). */
static inline int rill_args_int(const char *s, long min, long max, int *out)
{
    long v;
    if (rill_args_long(s, min, max, &v))
        return -1;
    *out = (int)v;
    return 0;
}

/* s as an unsigned 64-bit integer (decimal, or 0x... hexadecimal; leading blanks allowed, no
 * sign: strtoull would take "-1" as 2^64 - 1): 0, else -1 and *out unchanged. */
static inline int rill_args_u64(const char *s, uint64_t *out)
{
    while (s && isspace((unsigned char)*s))
        s++;
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

/* s (all of it) as a double (inf and nan included): 0, else -1 and *out unchanged. */
static inline int rill_args_double(const char *s, double *out)
{
    if (!s)
        return -1;
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end)
        return -1;
    *out = v;
    return 0;
}

#endif
