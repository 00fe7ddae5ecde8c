/* The MCA parameter registry: typed parameters whose values come from defaults,
 * files, the RILL_MCA_* environment, `--mca` and code, strongest last (rill/params.h). */
#include "params_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

extern char **environ;

#define ENV_PREFIX      "RILL_MCA_"
#define ENV_PARAM_FILES "RILL_MCA_param_files" /* names the files; not a parameter */
#define HOME_FILE       "/.rill/mca-params.conf"
#define SIZE_EXAMPLES   "a size such as 4096, 64k or 1M"
#define BOOL_ALLOWED    "a boolean: 1/0/true/false/yes/no/on/off"
#define NUM_TEXT_MAX    128           /* longest number or name a numeric/bool/enum value may be */
#define FILE_MAX        (1024 * 1024) /* the largest parameter file read, in bytes */
#define FILE_MAX_TEXT   "1 MiB"
#define QUOTE_MAX       160 /* bytes of a line or value a message quotes */
#define QUOTE_BUF       (QUOTE_MAX * 4 + 48)
#define UTF8_BOM        "\xEF\xBB\xBF"

struct rill_param {
    char *name;
    char *help;
    rill_param_type_t type;
    int level;
    rill_param_source_t source;
    char *source_detail; /* "RILL_MCA_x", "/path:line", "--mca" or NULL; owned */
    bool same_ranks;     /* rill_param_set_same_on_all_ranks */
    /*
     * The value. INT: int64_t bits, SIZE: uint64_t, BOOL: 0/1, ENUM: index in values.
     * STRING: str. Written by the main thread (registration, load, set), read by any
     * thread with an atomic load: `word` is a relaxed aligned word; `str` is stored
     * with release after the string is written and loaded with acquire.
     */
    uint64_t word;
    char *str;
    uint64_t def_word;
    char *def_str; /* STRING default (may be NULL) */
    union {
        struct {
            int64_t min, max;
        } i;
        struct {
            uint64_t min, max;
        } u;
    } range;
    char **values; /* ENUM names, owned */
    size_t nvalues;
    /* STRING values replaced by a later one: a reader on another thread may still
     * hold the old pointer, so they live until rill_params_reset. */
    char **retired;
    size_t nretired;
};

/** One `name = value` pair read from a source, kept as text until registration. */
typedef struct src_entry {
    char *name;
    char *value;
    char *detail; /* as rill_param_info_t.source_detail */
} src_entry_t;

typedef struct src_list {
    src_entry_t *v;
    size_t n, cap;
} src_list_t;

#define NB_SOURCES (RILL_PARAM_SOURCE_SET + 1)

static struct {
    rill_param_t **params; /* sorted by name */
    size_t nparams, cap;
    src_list_t src[NB_SOURCES]; /* indexed by source; DEFAULT stays empty */
    char **warned;              /* unknown names already warned about */
    size_t nwarned, capwarned;
} reg;

/* ------------------------------------------------------------------ small helpers */

static void keep_first(rill_status_t *status, rill_status_t s)
{
    if (*status == RILL_SUCCESS)
        *status = s;
}

/*
 * s as a message shows it, into buf (QUOTE_BUF bytes): a byte outside printable ASCII as
 * \xHH and a backslash as \\, so that no control byte, BOM or invisible character hides
 * in the text; between single quotes when quoted; beyond QUOTE_MAX bytes of s, the rest
 * is cut and the length given: 'abc...' (123456 bytes).
 */
static const char *show_text(const char *s, bool quoted, char *buf)
{
    if (!s)
        s = "(null)";
    size_t len = strlen(s), o = 0;
    if (quoted)
        buf[o++] = '\'';
    for (size_t i = 0; i < len && i < QUOTE_MAX; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\') {
            buf[o++] = '\\';
            buf[o++] = '\\';
        } else if (c < 0x20 || c > 0x7e) {
            o += (size_t)snprintf(buf + o, QUOTE_BUF - o, "\\x%02X", c);
        } else {
            buf[o++] = (char)c;
        }
    }
    if (len > QUOTE_MAX)
        snprintf(buf + o, QUOTE_BUF - o, "...%s (%zu bytes)", quoted ? "'" : "", len);
    else
        snprintf(buf + o, QUOTE_BUF - o, "%s", quoted ? "'" : "");
    return buf;
}

static const char *quote_text(const char *s, char *buf)
{
    return show_text(s, true, buf);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Parameter names: lower case letters, digits and '_'. */
static bool name_is_valid_n(const char *name, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return true;
}

static bool name_is_valid(const char *name)
{
    return name && name_is_valid_n(name, strlen(name));
}

/* Grow *v (elements of size elt) to hold at least need; false if out of memory. */
static bool grow(void **v, size_t *cap, size_t need, size_t elt)
{
    if (need <= *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    void *nv = realloc(*v, ncap * elt);
    if (!nv)
        return false;
    *v = nv;
    *cap = ncap;
    return true;
}

/* Copy s without its leading and trailing blanks into out; false if it does not fit. */
static bool trim_copy(const char *s, char *out, size_t n)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t len = strlen(s);
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        len--;
    if (len >= n)
        return false;
    memcpy(out, s, len);
    out[len] = '\0';
    return true;
}

/* "1G", "64k", "4097": a size with the largest unit that divides it exactly. */
static void format_size(uint64_t v, char *buf, size_t n)
{
    static const char units[] = { 'T', 'G', 'M', 'k' };
    static const int shifts[] = { 40, 30, 20, 10 };
    for (int u = 0; u < 4; u++) {
        uint64_t unit = UINT64_C(1) << shifts[u];
        if (v != 0 && v % unit == 0) {
            snprintf(buf, n, "%" PRIu64 "%c", v / unit, units[u]);
            return;
        }
    }
    snprintf(buf, n, "%" PRIu64, v);
}

/* ------------------------------------------------------------------ value parsing */

static bool parse_int(const char *text, int64_t *v_p)
{
    char s[NUM_TEXT_MAX], *end;
    if (!trim_copy(text, s, sizeof(s)) || !*s)
        return false;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *v_p = v;
    return true;
}

/* Bytes with an optional unit k/M/G/T (powers of 1024, any case), then optional B or iB. */
static bool parse_size(const char *text, uint64_t *v_p)
{
    char s[NUM_TEXT_MAX];
    if (!trim_copy(text, s, sizeof(s)))
        return false;
    const char *c = s;
    if (!isdigit((unsigned char)*c)) /* also rejects "", "-1" and "+1" */
        return false;
    uint64_t v = 0;
    for (; isdigit((unsigned char)*c); c++) {
        unsigned d = (unsigned)(*c - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    while (*c == ' ' || *c == '\t')
        c++;
    int shift = 0;
    switch (*c) {
    case 'k':
    case 'K':
        shift = 10;
        break;
    case 'm':
    case 'M':
        shift = 20;
        break;
    case 'g':
    case 'G':
        shift = 30;
        break;
    case 't':
    case 'T':
        shift = 40;
        break;
    default:
        break;
    }
    if (shift)
        c++;
    if (*c == 'B' || *c == 'b')
        c++;
    else if (shift && (*c == 'i' || *c == 'I') && (c[1] == 'B' || c[1] == 'b'))
        c += 2;
    if (*c != '\0')
        return false;
    if (shift && v > (UINT64_MAX >> shift))
        return false;
    *v_p = v << shift;
    return true;
}

static bool parse_bool(const char *text, bool *v_p)
{
    static const char *const yes[] = { "1", "true", "yes", "on" };
    static const char *const no[] = { "0", "false", "no", "off" };
    char s[NUM_TEXT_MAX];
    if (!trim_copy(text, s, sizeof(s)))
        return false;
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *v_p = true;
            return true;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *v_p = false;
            return true;
        }
    }
    return false;
}

static bool parse_enum(const rill_param_t *p, const char *text, size_t *index_p)
{
    char s[NUM_TEXT_MAX];
    if (!trim_copy(text, s, sizeof(s)))
        return false;
    for (size_t i = 0; i < p->nvalues; i++) {
        if (strcasecmp(s, p->values[i]) == 0) {
            *index_p = i;
            return true;
        }
    }
    return false;
}

/* Parse text for p into *word_p (not for STRING). False if not allowed. */
static bool param_parse(const rill_param_t *p, const char *text, uint64_t *word_p)
{
    switch (p->type) {
    case RILL_PARAM_INT: {
        int64_t v;
        if (!parse_int(text, &v) || v < p->range.i.min || v > p->range.i.max)
            return false;
        *word_p = (uint64_t)v;
        return true;
    }
    case RILL_PARAM_SIZE: {
        uint64_t v;
        if (!parse_size(text, &v) || v < p->range.u.min || v > p->range.u.max)
            return false;
        *word_p = v;
        return true;
    }
    case RILL_PARAM_BOOL: {
        bool v;
        if (!parse_bool(text, &v))
            return false;
        *word_p = v;
        return true;
    }
    case RILL_PARAM_ENUM: {
        size_t i;
        if (!parse_enum(p, text, &i))
            return false;
        *word_p = i;
        return true;
    }
    case RILL_PARAM_STRING:
        break;
    }
    return true;
}

/* ------------------------------------------------------------------ value as text */

/* A word of p's type (or, for STRING, str) as text. */
static void word_text(const rill_param_t *p, uint64_t word, const char *str, char *buf, size_t n)
{
    switch (p->type) {
    case RILL_PARAM_INT:
        snprintf(buf, n, "%" PRId64, (int64_t)word);
        break;
    case RILL_PARAM_SIZE:
        snprintf(buf, n, "%" PRIu64, word);
        break;
    case RILL_PARAM_BOOL:
        snprintf(buf, n, "%s", word ? "true" : "false");
        break;
    case RILL_PARAM_ENUM:
        snprintf(buf, n, "%s", p->values[word]);
        break;
    case RILL_PARAM_STRING:
        snprintf(buf, n, "%s", str ? str : "");
        break;
    }
}

/* What p allows, short for rill_params_info ("1..64", "lfq|gpq", "bool") or as a sentence
 * for error messages ("an integer in 1..64", "one of: lfq, gpq"). */
static void allowed_text(const rill_param_t *p, bool sentence, char *buf, size_t n)
{
    char a[32], b[32];
    const char *num = sentence ? "an integer" : "integer";
    switch (p->type) {
    case RILL_PARAM_INT:
        if (p->range.i.min == INT64_MIN && p->range.i.max == INT64_MAX)
            snprintf(buf, n, "%s", num);
        else if (p->range.i.max == INT64_MAX)
            snprintf(buf, n, "%s>= %" PRId64, sentence ? "an integer " : "", p->range.i.min);
        else if (p->range.i.min == INT64_MIN)
            snprintf(buf, n, "%s<= %" PRId64, sentence ? "an integer " : "", p->range.i.max);
        else
            snprintf(buf, n, "%s%" PRId64 "..%" PRId64, sentence ? "an integer in " : "",
                     p->range.i.min, p->range.i.max);
        break;
    case RILL_PARAM_SIZE: {
        format_size(p->range.u.min, a, sizeof(a));
        format_size(p->range.u.max, b, sizeof(b));
        const char *what = sentence ? SIZE_EXAMPLES : "size";
        if (p->range.u.min == 0 && p->range.u.max == UINT64_MAX)
            snprintf(buf, n, "%s", what);
        else if (p->range.u.max == UINT64_MAX)
            snprintf(buf, n, "%s%s%s", what, sentence ? ", at least " : " >= ", a);
        else
            snprintf(buf, n, "%s%s%s..%s", what, sentence ? ", in " : " ", a, b);
        break;
    }
    case RILL_PARAM_BOOL:
        snprintf(buf, n, "%s", sentence ? BOOL_ALLOWED : "bool");
        break;
    case RILL_PARAM_STRING:
        snprintf(buf, n, "%s", sentence ? "a string" : "string");
        break;
    case RILL_PARAM_ENUM: {
        size_t off = sentence ? (size_t)snprintf(buf, n, "one of:") : 0;
        if (!sentence)
            buf[0] = '\0';
        for (size_t i = 0; i < p->nvalues && off < n; i++)
            off += (size_t)snprintf(buf + off, n - off, "%s%s",
                                    sentence ? (i ? ", " : " ") : (i ? "|" : ""), p->values[i]);
        break;
    }
    }
}

static void where_text(rill_param_source_t source, const char *detail, char *buf, size_t n)
{
    switch (source) {
    case RILL_PARAM_SOURCE_DEFAULT:
        snprintf(buf, n, "default");
        break;
    case RILL_PARAM_SOURCE_FILE:
    case RILL_PARAM_SOURCE_ENV: {
        char shown[QUOTE_BUF];
        snprintf(buf, n, "%s %s", source == RILL_PARAM_SOURCE_FILE ? "file" : "environment",
                 detail ? show_text(detail, false, shown) : "?");
        break;
    }
    case RILL_PARAM_SOURCE_CMDLINE:
        snprintf(buf, n, "--mca");
        break;
    case RILL_PARAM_SOURCE_SET:
        snprintf(buf, n, "rill_param_set");
        break;
    }
}

/* ------------------------------------------------------------------ value update */

/* Room in p->retired for one more string; false if out of memory. */
static bool param_retire_room(rill_param_t *p)
{
    char **nr = realloc(p->retired, (p->nretired + 1) * sizeof(*nr));
    if (!nr)
        return false;
    p->retired = nr;
    return true;
}

/* Make text (may be NULL) the STRING value of p. */
static rill_status_t param_store_string(rill_param_t *p, const char *text)
{
    char *old = p->str;
    if ((!old && !text) || (old && text && strcmp(old, text) == 0))
        return RILL_SUCCESS;
    char *s = dup_or_null(text);
    if (text && !s)
        return RILL_ERR_NO_MEMORY;
    /* room to retire the old value first: a reader may hold it, so it is never freed here */
    if (old && !param_retire_room(p)) {
        free(s);
        return RILL_ERR_NO_MEMORY;
    }
    /* pairs with the acquire load in rill_param_get_string */
    __atomic_store_n(&p->str, s, __ATOMIC_RELEASE);
    if (old)
        p->retired[p->nretired++] = old;
    return RILL_SUCCESS;
}

static rill_status_t param_set_source(rill_param_t *p, rill_param_source_t source,
                                      const char *detail)
{
    char *d = dup_or_null(detail);
    if (detail && !d)
        return RILL_ERR_NO_MEMORY;
    free(p->source_detail);
    p->source_detail = d;
    p->source = source;
    return RILL_SUCCESS;
}

/*
 * Give p the value text from source; a value that is not allowed is reported (one
 * error line) and leaves p unchanged.
 */
static rill_status_t param_apply(rill_param_t *p, const char *text, rill_param_source_t source,
                                 const char *detail)
{
    uint64_t word = 0;
    if (!param_parse(p, text, &word)) {
        char where[QUOTE_BUF + 16], allowed[300], cur[128], quoted[QUOTE_BUF];
        where_text(source, detail, where, sizeof(where));
        allowed_text(p, true, allowed, sizeof(allowed));
        word_text(p, p->word, p->str, cur, sizeof(cur));
        RILL_ERROR(RILL_LOG_PARAMS, "bad value %s for parameter '%s' (%s): expected %s; keeping %s",
                   quote_text(text, quoted), p->name, where, allowed, cur);
        return RILL_ERR_INVALID_ARG;
    }
    rill_status_t status;
    if (p->type == RILL_PARAM_STRING)
        status = param_store_string(p, text);
    else {
        __atomic_store_n(&p->word, word, __ATOMIC_RELAXED);
        status = RILL_SUCCESS;
    }
    if (status == RILL_SUCCESS)
        status = param_set_source(p, source, detail);
    return status;
}

/* ------------------------------------------------------------------ loaded sources */

static void src_list_clear(src_list_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].name);
        free(l->v[i].value);
        free(l->v[i].detail);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* Append a copy of (name, value, detail); with `replace`, first drop an entry of that name. */
static rill_status_t src_list_add(src_list_t *l, const char *name, const char *value,
                                  const char *detail, bool replace)
{
    src_entry_t e = { strdup(name), strdup(value), dup_or_null(detail) };
    if (!e.name || !e.value || (detail && !e.detail) ||
        !grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v))) {
        free(e.name);
        free(e.value);
        free(e.detail);
        return RILL_ERR_NO_MEMORY;
    }
    if (replace) {
        for (size_t i = 0; i < l->n; i++) {
            if (strcmp(l->v[i].name, name) == 0) {
                free(l->v[i].name);
                free(l->v[i].value);
                free(l->v[i].detail);
                memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(*l->v));
                l->n--;
                break;
            }
        }
    }
    l->v[l->n++] = e;
    return RILL_SUCCESS;
}

/* The entry that decides name's value: the strongest source, and in it the last entry. */
static const src_entry_t *src_find(const char *name, rill_param_source_t *source_p)
{
    for (int s = RILL_PARAM_SOURCE_SET; s > RILL_PARAM_SOURCE_DEFAULT; s--) {
        const src_list_t *l = &reg.src[s];
        for (size_t i = l->n; i-- > 0;) {
            if (strcmp(l->v[i].name, name) == 0) {
                *source_p = (rill_param_source_t)s;
                return &l->v[i];
            }
        }
    }
    return NULL;
}

/* Cut a comment: '#' at the start or after a blank. */
static void strip_comment(char *line)
{
    for (char *c = line; *c; c++) {
        if (*c == '#' && (c == line || isspace((unsigned char)c[-1]))) {
            *c = '\0';
            return;
        }
    }
}

/* Blanks off both ends, in place. */
static char *trim_in_place(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t len = strlen(s);
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        s[--len] = '\0';
    return s;
}

/* One line of a parameter file (NUL-terminated, without its newline), which origin:lineno
 * names: its `name = value` goes to the file source; a malformed line is reported. */
static rill_status_t read_line(const char *origin, unsigned long lineno, char *line)
{
    strip_comment(line);
    char *s = trim_in_place(line);
    if (!*s)
        return RILL_SUCCESS;
    char *eq = strchr(s, '=');
    size_t nlen = eq ? (size_t)(eq - s) : 0;
    while (nlen > 0 && isspace((unsigned char)s[nlen - 1]))
        nlen--;
    char quoted[QUOTE_BUF], where[QUOTE_BUF];
    show_text(origin, false, where);
    if (eq && nlen == 0) {
        RILL_ERROR(RILL_LOG_PARAMS,
                   "%s:%lu: malformed line %s: the parameter name is empty; expected "
                   "'name = value'",
                   where, lineno, quote_text(s, quoted));
        return RILL_ERR_IO;
    }
    if (!eq || !name_is_valid_n(s, nlen)) {
        RILL_ERROR(RILL_LOG_PARAMS,
                   "%s:%lu: malformed line %s: expected 'name = value' (name: lower case "
                   "letters, digits and '_')",
                   where, lineno, quote_text(s, quoted));
        return RILL_ERR_IO;
    }
    s[nlen] = '\0'; /* the value starts after eq, which this may overwrite */
    size_t dlen = strlen(origin) + 24;
    char *detail = malloc(dlen);
    if (!detail)
        return RILL_ERR_NO_MEMORY;
    snprintf(detail, dlen, "%s:%lu", origin, lineno);
    rill_status_t status =
        src_list_add(&reg.src[RILL_PARAM_SOURCE_FILE], s, trim_in_place(eq + 1), detail, false);
    free(detail);
    return status;
}

rill_status_t rill_params_read_text(const char *origin, const char *text, size_t len)
{
    if (!text && len > 0)
        return RILL_ERR_INVALID_ARG;
    if (!origin)
        origin = "(text)";
    rill_status_t status = RILL_SUCCESS;
    char *line = NULL;
    size_t cap = 0, pos = 0;
    unsigned long lineno = 0;
    /* a UTF-8 byte order mark (as some editors write) before the first line is skipped */
    if (len >= sizeof(UTF8_BOM) - 1 && memcmp(text, UTF8_BOM, sizeof(UTF8_BOM) - 1) == 0)
        pos = sizeof(UTF8_BOM) - 1;
    while (pos < len) {
        const char *start = text + pos;
        const char *nl = memchr(start, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - start) : len - pos;
        pos += n + (nl ? 1 : 0);
        lineno++;
        if (memchr(start, '\0', n)) {
            char where[QUOTE_BUF];
            RILL_ERROR(RILL_LOG_PARAMS,
                       "%s:%lu: malformed line: it holds a NUL byte (is this a text file?)",
                       show_text(origin, false, where), lineno);
            keep_first(&status, RILL_ERR_IO);
            continue;
        }
        if (!grow((void **)&line, &cap, n + 1, 1)) {
            keep_first(&status, RILL_ERR_NO_MEMORY);
            break;
        }
        memcpy(line, start, n);
        line[n] = '\0';
        rill_status_t st = read_line(origin, lineno, line);
        keep_first(&status, st);
        if (st == RILL_ERR_NO_MEMORY)
            break;
    }
    free(line);
    return status;
}

/* What a file that is not a regular file is, for the message refusing it. */
static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISFIFO(mode))
        return "a FIFO (named pipe)";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

/*
 * Read `name = value` lines from path. A missing file is fine when optional. Only a
 * regular file of at most FILE_MAX bytes is read: a device (/dev/zero), a FIFO or a
 * directory is refused before a byte is read (opened without blocking, so a FIFO with no
 * writer does not hang), and a file that holds more is refused after FILE_MAX + 1 bytes
 * (its size as stat gives it is not trusted: /proc files say 0).
 */
static rill_status_t load_file(const char *path, bool optional)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (optional && errno == ENOENT)
            return RILL_SUCCESS;
        RILL_ERROR(RILL_LOG_PARAMS, "cannot read parameter file %s: %s", path, strerror(errno));
        return RILL_ERR_IO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        RILL_ERROR(RILL_LOG_PARAMS, "cannot read parameter file %s: %s", path, strerror(errno));
        close(fd);
        return RILL_ERR_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        RILL_ERROR(RILL_LOG_PARAMS,
                   "parameter file %s is %s: expected a regular file of 'name = value' lines", path,
                   file_kind(st.st_mode));
        close(fd);
        return RILL_ERR_IO;
    }
    if (st.st_size > FILE_MAX) {
        RILL_ERROR(RILL_LOG_PARAMS,
                   "parameter file %s is too large (%lld bytes): a parameter file holds at most "
                   "%s (%d bytes)",
                   path, (long long)st.st_size, FILE_MAX_TEXT, FILE_MAX);
        close(fd);
        return RILL_ERR_IO;
    }
    char *text = malloc(FILE_MAX + 1);
    if (!text) {
        close(fd);
        return RILL_ERR_NO_MEMORY;
    }
    size_t len = 0;
    int err = 0;
    while (len < FILE_MAX + 1) {
        ssize_t got = read(fd, text + len, FILE_MAX + 1 - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            err = errno;
            break;
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    rill_status_t status;
    if (err) {
        RILL_ERROR(RILL_LOG_PARAMS, "cannot read parameter file %s: %s", path, strerror(err));
        status = RILL_ERR_IO;
    } else if (len > FILE_MAX) {
        RILL_ERROR(RILL_LOG_PARAMS,
                   "parameter file %s is too large (more than %d bytes): a parameter file holds "
                   "at most %s (%d bytes)",
                   path, FILE_MAX, FILE_MAX_TEXT, FILE_MAX);
        status = RILL_ERR_IO;
    } else {
        status = rill_params_read_text(path, text, len);
        RILL_VERBOSE(RILL_LOG_PARAMS, 2, "read parameter file %s", path);
    }
    free(text);
    return status;
}

static rill_status_t load_files(void)
{
    rill_status_t status = RILL_SUCCESS;
    const char *home = getenv("HOME");
    if (home && *home) {
        size_t len = strlen(home) + sizeof(HOME_FILE);
        char *path = malloc(len);
        if (!path)
            return RILL_ERR_NO_MEMORY;
        snprintf(path, len, "%s%s", home, HOME_FILE);
        keep_first(&status, load_file(path, true));
        free(path);
    }
    const char *list = getenv(ENV_PARAM_FILES);
    if (list && *list) {
        char *copy = strdup(list), *save = NULL;
        if (!copy)
            return RILL_ERR_NO_MEMORY;
        for (char *path = strtok_r(copy, ":", &save); path; path = strtok_r(NULL, ":", &save))
            keep_first(&status, load_file(path, false));
        free(copy);
    }
    return status;
}

/* A RILL_MCA_ variable with an empty name is kept (name "") for rill_params_warn_unknown
 * to report: no parameter can match it. */
rill_status_t rill_params_read_env(char *const *envp)
{
    size_t plen = strlen(ENV_PREFIX);
    for (; envp && *envp; envp++) {
        const char *e = *envp;
        const char *eq = strchr(e, '=');
        /* the prefix ends with '_', so a match puts eq at or after its end */
        if (!eq || strncmp(e, ENV_PREFIX, plen) != 0)
            continue;
        size_t len = (size_t)(eq - e);
        if (len == strlen(ENV_PARAM_FILES) && strncmp(e, ENV_PARAM_FILES, len) == 0)
            continue;
        char *var = strndup(e, len);
        if (!var)
            return RILL_ERR_NO_MEMORY;
        rill_status_t st =
            src_list_add(&reg.src[RILL_PARAM_SOURCE_ENV], var + plen, eq + 1, var, false);
        free(var);
        if (st != RILL_SUCCESS)
            return st;
    }
    return RILL_SUCCESS;
}

/* Take every `--mca name value` out of argv; argv[0] and other arguments stay in order. */
static rill_status_t load_cmdline(int *argc, char ***argv)
{
    if (!argc || !argv || !*argv || *argc <= 0)
        return RILL_SUCCESS;
    rill_status_t status = RILL_SUCCESS;
    int n = *argc, kept = 1;
    char **av = *argv;
    for (int i = 1; i < n; i++) {
        if (strcmp(av[i], "--mca") != 0) {
            av[kept++] = av[i];
            continue;
        }
        if (i + 2 >= n) {
            char shown[QUOTE_BUF];
            RILL_ERROR(RILL_LOG_PARAMS, "--mca %s%s: expected --mca <name> <value>",
                       i + 1 < n ? quote_text(av[i + 1], shown) : "",
                       i + 1 < n ? " (no value)" : "(no name)");
            keep_first(&status, RILL_ERR_INVALID_ARG);
            break; /* the dangling --mca [name] is ours: drop it too */
        }
        if (!av[i + 1][0]) {
            char shown[QUOTE_BUF];
            RILL_ERROR(RILL_LOG_PARAMS,
                       "command line: --mca '' %s: the parameter name is empty; expected "
                       "--mca <name> <value>",
                       quote_text(av[i + 2], shown));
            keep_first(&status, RILL_ERR_INVALID_ARG);
            i += 2; /* ours all the same: taken out of argv */
            continue;
        }
        rill_status_t st =
            src_list_add(&reg.src[RILL_PARAM_SOURCE_CMDLINE], av[i + 1], av[i + 2], "--mca", false);
        if (st != RILL_SUCCESS) {
            keep_first(&status, st);
            /* keep the remaining arguments so argv stays consistent */
            for (int j = i; j < n; j++)
                av[kept++] = av[j];
            break;
        }
        i += 2;
    }
    av[kept] = NULL;
    *argc = kept;
    return status;
}

/* ------------------------------------------------------------------ registry */

/* Index of name in reg.params, or where it would go (*found false). */
static size_t reg_search(const char *name, bool *found)
{
    size_t lo = 0, hi = reg.nparams;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(reg.params[mid]->name, name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static rill_param_t *reg_find(const char *name)
{
    bool found;
    size_t i = reg_search(name, &found);
    return found ? reg.params[i] : NULL;
}

/* Back to the default: the value every resolution starts from. */
static rill_status_t param_set_default(rill_param_t *p)
{
    rill_status_t status = RILL_SUCCESS;
    if (p->type == RILL_PARAM_STRING)
        status = param_store_string(p, p->def_str);
    else
        __atomic_store_n(&p->word, p->def_word, __ATOMIC_RELAXED);
    if (status == RILL_SUCCESS)
        status = param_set_source(p, RILL_PARAM_SOURCE_DEFAULT, NULL);
    return status;
}

/* Take the value from the strongest loaded source that names p, else the default. A bad
 * value leaves p as it was (its default at registration). */
static rill_status_t param_resolve(rill_param_t *p)
{
    rill_param_source_t source;
    const src_entry_t *e = src_find(p->name, &source);
    if (!e)
        return param_set_default(p);
    return param_apply(p, e->value, source, e->detail);
}

static void param_free(rill_param_t *p)
{
    if (!p)
        return;
    free(p->name);
    free(p->help);
    free(p->source_detail);
    free(p->str);
    free(p->def_str);
    for (size_t i = 0; i < p->nvalues; i++)
        free(p->values[i]);
    free(p->values);
    for (size_t i = 0; i < p->nretired; i++)
        free(p->retired[i]);
    free(p->retired);
    free(p);
}

const char *rill_param_type_string(rill_param_type_t type)
{
    switch (type) {
    case RILL_PARAM_INT:
        return "int";
    case RILL_PARAM_SIZE:
        return "size";
    case RILL_PARAM_BOOL:
        return "bool";
    case RILL_PARAM_STRING:
        return "string";
    case RILL_PARAM_ENUM:
        return "enum";
    }
    return "?";
}

/*
 * Check the name and an earlier registration. Returns true when the caller must stop
 * with *status_p (an error, or the existing handle in *param_p).
 */
static bool register_check(const char *name, rill_param_type_t type, rill_param_t **param_p,
                           rill_status_t *status_p)
{
    if (!param_p) {
        RILL_ERROR(RILL_LOG_PARAMS, "registering parameter '%s': no handle to fill",
                   name ? name : "(null)");
        *status_p = RILL_ERR_INVALID_ARG;
        return true;
    }
    *param_p = NULL;
    if (!name_is_valid(name)) {
        char shown[QUOTE_BUF];
        RILL_ERROR(RILL_LOG_PARAMS,
                   "invalid parameter name %s: use lower case letters, digits and '_'",
                   quote_text(name, shown));
        *status_p = RILL_ERR_INVALID_ARG;
        return true;
    }
    rill_param_t *old = reg_find(name);
    if (!old)
        return false;
    if (old->type != type) {
        RILL_ERROR(RILL_LOG_PARAMS, "parameter '%s' registered as %s, then again as %s", name,
                   rill_param_type_string(old->type), rill_param_type_string(type));
        *status_p = RILL_ERR_INVALID_ARG;
        return true;
    }
    *param_p = old;
    *status_p = RILL_SUCCESS;
    return true;
}

static rill_param_t *param_new(const char *name, const char *help, int level,
                               rill_param_type_t type)
{
    rill_param_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->name = strdup(name);
    p->help = strdup(help ? help : "");
    p->type = type;
    p->level = level;
    if (!p->name || !p->help) {
        param_free(p);
        return NULL;
    }
    return p;
}

/* Insert p (its type fields and default filled in), resolve its value, hand it out. */
static rill_status_t register_insert(rill_param_t *p, rill_param_t **param_p)
{
    bool found;
    size_t at = reg_search(p->name, &found);
    if (!grow((void **)&reg.params, &reg.cap, reg.nparams + 1, sizeof(*reg.params))) {
        param_free(p);
        return RILL_ERR_NO_MEMORY;
    }
    memmove(&reg.params[at + 1], &reg.params[at], (reg.nparams - at) * sizeof(*reg.params));
    reg.params[at] = p;
    reg.nparams++;
    rill_status_t status = param_set_default(p);
    if (status == RILL_SUCCESS)
        status = param_resolve(p);
    if (status == RILL_ERR_NO_MEMORY) { /* then nothing is registered (rill/params.h) */
        reg.nparams--;
        memmove(&reg.params[at], &reg.params[at + 1], (reg.nparams - at) * sizeof(*reg.params));
        param_free(p);
        return status;
    }
    /* the handle is given even for a bad value, so the caller can read the default */
    *param_p = p;
    return status;
}

rill_status_t rill_param_register_int(const char *name, const char *help, int level, int64_t def,
                                      int64_t min, int64_t max, rill_param_t **param_p)
{
    rill_status_t status;
    if (register_check(name, RILL_PARAM_INT, param_p, &status))
        return status;
    if (min > max || def < min || def > max) {
        RILL_ERROR(RILL_LOG_PARAMS,
                   "parameter '%s': default %" PRId64 " is not in %" PRId64 "..%" PRId64, name, def,
                   min, max);
        return RILL_ERR_INVALID_ARG;
    }
    rill_param_t *p = param_new(name, help, level, RILL_PARAM_INT);
    if (!p)
        return RILL_ERR_NO_MEMORY;
    p->def_word = (uint64_t)def;
    p->range.i.min = min;
    p->range.i.max = max;
    return register_insert(p, param_p);
}

rill_status_t rill_param_register_size(const char *name, const char *help, int level, uint64_t def,
                                       uint64_t min, uint64_t max, rill_param_t **param_p)
{
    rill_status_t status;
    if (register_check(name, RILL_PARAM_SIZE, param_p, &status))
        return status;
    if (min > max || def < min || def > max) {
        RILL_ERROR(RILL_LOG_PARAMS,
                   "parameter '%s': default %" PRIu64 " is not in %" PRIu64 "..%" PRIu64, name, def,
                   min, max);
        return RILL_ERR_INVALID_ARG;
    }
    rill_param_t *p = param_new(name, help, level, RILL_PARAM_SIZE);
    if (!p)
        return RILL_ERR_NO_MEMORY;
    p->def_word = def;
    p->range.u.min = min;
    p->range.u.max = max;
    return register_insert(p, param_p);
}

rill_status_t rill_param_register_bool(const char *name, const char *help, int level, bool def,
                                       rill_param_t **param_p)
{
    rill_status_t status;
    if (register_check(name, RILL_PARAM_BOOL, param_p, &status))
        return status;
    rill_param_t *p = param_new(name, help, level, RILL_PARAM_BOOL);
    if (!p)
        return RILL_ERR_NO_MEMORY;
    p->def_word = def ? 1 : 0;
    return register_insert(p, param_p);
}

rill_status_t rill_param_register_string(const char *name, const char *help, int level,
                                         const char *def, rill_param_t **param_p)
{
    rill_status_t status;
    if (register_check(name, RILL_PARAM_STRING, param_p, &status))
        return status;
    rill_param_t *p = param_new(name, help, level, RILL_PARAM_STRING);
    if (!p)
        return RILL_ERR_NO_MEMORY;
    p->def_str = dup_or_null(def);
    if (def && !p->def_str) {
        param_free(p);
        return RILL_ERR_NO_MEMORY;
    }
    return register_insert(p, param_p);
}

rill_status_t rill_param_register_enum(const char *name, const char *help, int level,
                                       const char *const *values, const char *def,
                                       rill_param_t **param_p)
{
    rill_status_t status;
    if (register_check(name, RILL_PARAM_ENUM, param_p, &status))
        return status;
    size_t n = 0, def_index = SIZE_MAX;
    for (; values && values[n]; n++)
        if (def && strcmp(values[n], def) == 0)
            def_index = n;
    if (n == 0 || def_index == SIZE_MAX) {
        RILL_ERROR(RILL_LOG_PARAMS, "parameter '%s': default '%s' is not one of its %zu values",
                   name, def ? def : "(null)", n);
        return RILL_ERR_INVALID_ARG;
    }
    rill_param_t *p = param_new(name, help, level, RILL_PARAM_ENUM);
    if (!p)
        return RILL_ERR_NO_MEMORY;
    p->values = calloc(n, sizeof(*p->values));
    if (!p->values) {
        param_free(p);
        return RILL_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < n; i++) {
        p->values[i] = strdup(values[i]);
        if (!p->values[i]) {
            p->nvalues = i;
            param_free(p);
            return RILL_ERR_NO_MEMORY;
        }
    }
    p->nvalues = n;
    p->def_word = def_index;
    return register_insert(p, param_p);
}

/* ------------------------------------------------------------------ getters */

int64_t rill_param_get_int(const rill_param_t *param)
{
    return param ? (int64_t)__atomic_load_n(&param->word, __ATOMIC_RELAXED) : 0;
}

uint64_t rill_param_get_size(const rill_param_t *param)
{
    return param ? __atomic_load_n(&param->word, __ATOMIC_RELAXED) : 0;
}

bool rill_param_get_bool(const rill_param_t *param)
{
    return param ? __atomic_load_n(&param->word, __ATOMIC_RELAXED) != 0 : false;
}

const char *rill_param_get_string(const rill_param_t *param)
{
    if (!param)
        return NULL;
    if (param->type == RILL_PARAM_ENUM)
        return param->values[__atomic_load_n(&param->word, __ATOMIC_RELAXED)];
    if (param->type == RILL_PARAM_STRING)
        /* pairs with the release store in param_store_string */
        return __atomic_load_n(&param->str, __ATOMIC_ACQUIRE);
    return NULL;
}

int rill_param_get_enum(const rill_param_t *param)
{
    return param ? (int)__atomic_load_n(&param->word, __ATOMIC_RELAXED) : 0;
}

rill_status_t rill_param_lookup(const char *name, rill_param_t **param_p)
{
    if (!name)
        return rill_log_arg_null(RILL_LOG_PARAMS, "rill_param_lookup", "the name");
    rill_param_t *p = reg_find(name);
    if (!p)
        return RILL_ERR_NOT_FOUND;
    if (param_p) /* (optional: a look whether the name exists) */
        *param_p = p;
    return RILL_SUCCESS;
}

/* ------------------------------------------------------------------ sources in, set */

rill_status_t rill_params_load(int *argc, char ***argv)
{
    rill_status_t status = RILL_SUCCESS;
    src_list_clear(&reg.src[RILL_PARAM_SOURCE_FILE]);
    src_list_clear(&reg.src[RILL_PARAM_SOURCE_ENV]);
    src_list_clear(&reg.src[RILL_PARAM_SOURCE_CMDLINE]);
    /* every source is read even after an error, so --mca is always taken out of argv */
    keep_first(&status, load_files());
    keep_first(&status, rill_params_read_env(environ));
    keep_first(&status, load_cmdline(argc, argv));
    keep_first(&status, rill_params_resolve());
    return status;
}

rill_status_t rill_params_resolve(void)
{
    rill_status_t status = RILL_SUCCESS;
    for (size_t i = 0; i < reg.nparams; i++)
        keep_first(&status, param_resolve(reg.params[i]));
    return status;
}

rill_status_t rill_param_set(const char *name, const char *value)
{
    if (!name_is_valid(name) || !value) {
        char shown_name[QUOTE_BUF], shown_value[QUOTE_BUF];
        RILL_ERROR(RILL_LOG_PARAMS, "rill_param_set(%s, %s): %s", quote_text(name, shown_name),
                   value ? quote_text(value, shown_value) : "(null)",
                   value ? "invalid parameter name (lower case letters, digits and '_')"
                         : "no value");
        return RILL_ERR_INVALID_ARG;
    }
    rill_param_t *p = reg_find(name);
    if (p) {
        rill_status_t status = param_apply(p, value, RILL_PARAM_SOURCE_SET, NULL);
        if (status != RILL_SUCCESS)
            return status;
    }
    /* kept so that a later rill_params_load (which re-resolves) still sees it */
    return src_list_add(&reg.src[RILL_PARAM_SOURCE_SET], name, value, NULL, true);
}

/* ------------------------------------------------------------------ unknown names */

/*
 * Optimal string alignment distance (Damerau-Levenshtein where no substring is edited
 * twice), ignoring case: inserting, deleting or replacing a character, or swapping two
 * neighbours, costs 1 each. SIZE_MAX if out of memory.
 */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t *rows = malloc(3 * (lb + 1) * sizeof(*rows));
    if (!rows)
        return SIZE_MAX;
    /* distances from a's first i-2, i-1 and i characters to each prefix of b */
    size_t *prev2 = rows, *prev = rows + lb + 1, *cur = rows + 2 * (lb + 1);
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        int ca = tolower((unsigned char)a[i - 1]);
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            int cb = tolower((unsigned char)b[j - 1]);
            size_t best = prev[j - 1] + (ca != cb);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < best)
                best = prev2[j - 2] + 1;
            cur[j] = best;
        }
        size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    size_t d = prev[lb];
    free(rows);
    return d;
}

/* Whether whole, ignoring case, is part followed by '_' and more ("sched_typ" of "sched"). */
static bool extends(const char *whole, const char *part)
{
    size_t n = strlen(part);
    return n >= 3 && strncasecmp(whole, part, n) == 0 && whole[n] == '_' && whole[n + 1];
}

/*
 * The registered name an unknown name most likely meant: the closest within a few
 * edits (1 for names of up to 4 characters, else max(2, length / 4)), or the name that
 * the unknown one extends with a `_suffix` ("sched_typ": "sched"), or the only name that
 * extends the unknown one ("dtd_window": "dtd_window_size"). NULL when none is that
 * close: a suggestion that is not related helps nobody.
 */
static const char *nearest_name(const char *name)
{
    size_t len = strlen(name);
    size_t limit = len < 5 ? 1 : len / 4 > 2 ? len / 4 : 2;
    size_t extending = 0;
    for (size_t i = 0; i < reg.nparams; i++)
        extending += extends(reg.params[i]->name, name);
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (size_t i = 0; i < reg.nparams; i++) {
        const char *known = reg.params[i]->name;
        size_t klen = strlen(known);
        bool related = extends(name, known) || (extending == 1 && extends(known, name));
        /* the distance is at least the difference of the lengths */
        if (!related && (klen > len ? klen - len : len - klen) > limit)
            continue;
        size_t d = edit_distance(name, known);
        if ((d <= limit || related) && d < best_d) {
            best_d = d;
            best = known;
        }
    }
    return best;
}

/* Whether name appears before entry i of source s, in a stronger source or earlier in s. */
static bool seen_before(const char *name, int s, size_t i)
{
    for (int t = RILL_PARAM_SOURCE_SET; t >= s; t--) {
        const src_list_t *l = &reg.src[t];
        size_t end = t == s ? i : l->n;
        for (size_t k = 0; k < end; k++)
            if (strcmp(l->v[k].name, name) == 0)
                return true;
    }
    return false;
}

static bool already_warned(const char *name)
{
    for (size_t i = 0; i < reg.nwarned; i++)
        if (strcmp(reg.warned[i], name) == 0)
            return true;
    return false;
}

int rill_params_warn_unknown(void)
{
    int count = 0;
    for (int s = RILL_PARAM_SOURCE_SET; s > RILL_PARAM_SOURCE_DEFAULT; s--) {
        const src_list_t *l = &reg.src[s];
        for (size_t i = 0; i < l->n; i++) {
            const src_entry_t *e = &l->v[i];
            if (reg_find(e->name) || seen_before(e->name, s, i))
                continue;
            count++;
            if (already_warned(e->name))
                continue;
            char where[QUOTE_BUF + 16], shown[QUOTE_BUF], value[QUOTE_BUF];
            where_text((rill_param_source_t)s, e->detail, where, sizeof(where));
            const char *near = e->name[0] ? nearest_name(e->name) : NULL;
            if (!e->name[0]) /* only a RILL_MCA_=value variable gives one */
                RILL_WARN(RILL_LOG_PARAMS,
                          "environment: the variable %s=%s has an empty parameter name; "
                          "ignored (expected %s<name>=<value>)",
                          show_text(e->detail ? e->detail : ENV_PREFIX, false, shown),
                          show_text(e->value, false, value), ENV_PREFIX);
            else if (near)
                RILL_WARN(RILL_LOG_PARAMS, "unknown parameter %s (%s); did you mean '%s'?",
                          quote_text(e->name, shown), where, near);
            else
                RILL_WARN(RILL_LOG_PARAMS, "unknown parameter %s (%s)", quote_text(e->name, shown),
                          where);
            char *copy = strdup(e->name);
            if (copy &&
                grow((void **)&reg.warned, &reg.capwarned, reg.nwarned + 1, sizeof(*reg.warned)))
                reg.warned[reg.nwarned++] = copy;
            else
                free(copy); /* may warn again later; harmless */
        }
    }
    return count;
}

/* ------------------------------------------------------------------ introspection */

size_t rill_params_count(void)
{
    return reg.nparams;
}

rill_status_t rill_params_info(size_t i, rill_param_info_t *info_p)
{
    if (!info_p)
        return rill_log_arg_null(RILL_LOG_PARAMS, "rill_params_info", "info_p");
    if (i >= reg.nparams)
        return RILL_ERR_NOT_FOUND;
    const rill_param_t *p = reg.params[i];
    rill_param_info_t *info = info_p;
    info->name = p->name;
    info->help = p->help;
    info->type = p->type;
    info->level = p->level;
    info->source = p->source;
    info->source_detail = p->source_detail;
    word_text(p, p->word, p->str, info->value, sizeof(info->value));
    allowed_text(p, false, info->allowed, sizeof(info->allowed));
    word_text(p, p->def_word, p->def_str, info->def, sizeof(info->def));
    info->same_on_all_ranks = p->same_ranks;
    return RILL_SUCCESS;
}

rill_status_t rill_params_register_table(const rill_param_decl_t *decls, size_t n)
{
    rill_status_t status = RILL_SUCCESS;
    for (size_t k = 0; decls && k < n; k++) {
        const rill_param_decl_t *d = &decls[k];
        rill_param_t *p = NULL;
        rill_status_t s;
        switch (d->type) {
        case RILL_PARAM_INT:
            s = rill_param_register_int(d->name, d->help, d->level, d->v.i.def, d->v.i.min,
                                        d->v.i.max, &p);
            break;
        case RILL_PARAM_SIZE:
            s = rill_param_register_size(d->name, d->help, d->level, d->v.u.def, d->v.u.min,
                                         d->v.u.max, &p);
            break;
        case RILL_PARAM_BOOL:
            s = rill_param_register_bool(d->name, d->help, d->level, d->v.b, &p);
            break;
        case RILL_PARAM_STRING:
            s = rill_param_register_string(d->name, d->help, d->level, d->v.s.def, &p);
            break;
        case RILL_PARAM_ENUM:
            s = rill_param_register_enum(d->name, d->help, d->level, d->v.s.values, d->v.s.def, &p);
            break;
        default:
            RILL_ERROR(RILL_LOG_PARAMS, "parameter '%s': declared with no type (%d)",
                       d->name ? d->name : "(null)", (int)d->type);
            s = RILL_ERR_INVALID_ARG;
        }
        /* (a bad value from a source still registers it: it is marked all the same) */
        if (p && (d->flags & RILL_PARAM_SAME_ON_ALL_RANKS)) {
            rill_status_t m = rill_param_set_same_on_all_ranks(p);
            s = s != RILL_SUCCESS ? s : m;
        }
        if (d->param)
            *d->param = p;
        if (s != RILL_SUCCESS && status == RILL_SUCCESS)
            status = s;
    }
    return status;
}

rill_status_t rill_param_set_same_on_all_ranks(rill_param_t *param)
{
    if (!param)
        return rill_log_arg_null(RILL_LOG_PARAMS, "rill_param_set_same_on_all_ranks",
                                 "the parameter");
    param->same_ranks = true;
    return RILL_SUCCESS;
}

const char *rill_param_source_string(rill_param_source_t source)
{
    switch (source) {
    case RILL_PARAM_SOURCE_DEFAULT:
        return "default";
    case RILL_PARAM_SOURCE_FILE:
        return "file";
    case RILL_PARAM_SOURCE_ENV:
        return "env";
    case RILL_PARAM_SOURCE_CMDLINE:
        return "cmdline";
    case RILL_PARAM_SOURCE_SET:
        return "set";
    }
    return "?";
}

void rill_params_reset(void)
{
    for (size_t i = 0; i < reg.nparams; i++)
        param_free(reg.params[i]);
    free(reg.params);
    for (int s = 0; s < NB_SOURCES; s++)
        src_list_clear(&reg.src[s]);
    for (size_t i = 0; i < reg.nwarned; i++)
        free(reg.warned[i]);
    free(reg.warned);
    memset(&reg, 0, sizeof(reg));
}
