/*
 * Fuzz target of the parameter registry (base/params.c). One input is used at
 * once as
 *   - the content of a parameter file (rill_params_read_text, the file reader's parser);
 *   - lines (split on '\n'), each fed as a value to parameters of every type (int with
 *     ranges, size with units, bool, string, enum) through rill_param_set, as a name to
 *     register, look up and set, as the values of an enum, as `--mca` arguments (in
 *     `--mca <line> <line>` triples and raw) and as environment strings (`RILL_MCA_<line>`
 *     and the line itself);
 * then the unknown names are warned about, every parameter is listed, the sources are
 * reloaded and the registry is reset, so nothing is left for the next input (LeakSanitizer
 * sees every leak). Invariants that the API promises abort() when broken; among them, the
 * registry's messages (stderr is a memory stream meanwhile) that quote a malformed line or
 * an unknown name hold no byte outside printable ASCII (they show such bytes as \xHH).
 * Built with libFuzzer (-DRILL_FUZZ=ON, clang) as fuzz_params, and in every build as
 * fuzz_params_replay, which runs this over the committed corpus (a CTest test).
 */
#include "fuzz_params.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params_internal.h"

extern char **environ;

#define MAX_LINES     32 /* lines used as names/values/arguments */
#define MAX_SET_LINES 16 /* lines each parameter is set to */
#define MAX_REG_LINES 8  /* lines registered as names, and as enum values */

int rill_fuzz_report_fd = 2;

static void broken(const char *cond, const char *detail, int line)
{
    dprintf(rill_fuzz_report_fd, "fuzz_params.c:%d: invariant broken: %s (%s)\n", line, cond,
            detail ? detail : "");
    abort();
}

#define ENSURE(cond, detail)                                                                       \
    do {                                                                                           \
        if (!(cond))                                                                               \
            broken(#cond, (detail), __LINE__);                                                     \
    } while (0)

/* ------------------------------------------------------------ fixed parameters */

typedef struct fixed {
    const char *name;
    rill_param_type_t type;
    int64_t imin, imax, idef;
    uint64_t umin, umax, udef;
    const char *sdef;
    const char *const *values;
    size_t nvalues;
    rill_param_t *p;
} fixed_t;

static const char *const sched_values[] = { "lfq", "gpq", NULL };
static char many_names[40][16];
static const char *many_values[41];

static fixed_t fixed[] = {
    { .name = "dtd_window_size",
      .type = RILL_PARAM_INT,
      .imin = 1,
      .imax = INT64_MAX,
      .idef = 8000 },
    { .name = "int_small", .type = RILL_PARAM_INT, .imin = 1, .imax = 64, .idef = 8 },
    { .name = "int_neg", .type = RILL_PARAM_INT, .imin = -5, .imax = 5, .idef = -1 },
    { .name = "int_any", .type = RILL_PARAM_INT, .imin = INT64_MIN, .imax = INT64_MAX },
    { .name = "comm_short_limit",
      .type = RILL_PARAM_SIZE,
      .umin = 0,
      .umax = UINT64_MAX,
      .udef = 8192 },
    { .name = "size_range",
      .type = RILL_PARAM_SIZE,
      .umin = 4096,
      .umax = UINT64_C(1) << 30,
      .udef = 65536 },
    { .name = "runtime_bind", .type = RILL_PARAM_BOOL, .idef = 1 },
    { .name = "runtime_core_list", .type = RILL_PARAM_STRING, .sdef = NULL },
    { .name = "str_def", .type = RILL_PARAM_STRING, .sdef = "default" },
    { .name = "sched", .type = RILL_PARAM_ENUM, .values = sched_values, .nvalues = 2 },
    { .name = "enum_many", .type = RILL_PARAM_ENUM, .values = many_values, .nvalues = 40 },
};
#define NB_FIXED (sizeof(fixed) / sizeof(fixed[0]))

static rill_status_t register_one(fixed_t *f, rill_param_t **p)
{
    switch (f->type) {
    case RILL_PARAM_INT:
        return rill_param_register_int(f->name, "fuzz", 1, f->idef, f->imin, f->imax, p);
    case RILL_PARAM_SIZE:
        return rill_param_register_size(f->name, "fuzz", 1, f->udef, f->umin, f->umax, p);
    case RILL_PARAM_BOOL:
        return rill_param_register_bool(f->name, "fuzz", 1, f->idef != 0, p);
    case RILL_PARAM_STRING:
        return rill_param_register_string(f->name, "fuzz", 2, f->sdef, p);
    case RILL_PARAM_ENUM:
        return rill_param_register_enum(f->name, "fuzz", 3, f->values, f->values[0], p);
    }
    return RILL_ERR_INVALID_ARG;
}

/* Register the fixed parameters; a second call must give the same handles. */
static void register_fixed(bool again)
{
    for (size_t i = 0; i < NB_FIXED; i++) {
        rill_param_t *p = NULL;
        rill_status_t s = register_one(&fixed[i], &p);
        ENSURE(s == RILL_SUCCESS || s == RILL_ERR_INVALID_ARG, fixed[i].name);
        ENSURE(p != NULL, fixed[i].name); /* a bad loaded value still gives the handle */
        if (again)
            ENSURE(p == fixed[i].p, fixed[i].name);
        fixed[i].p = p;
    }
}

/* The value of every fixed parameter is one it allows. */
static void check_fixed(void)
{
    for (size_t i = 0; i < NB_FIXED; i++) {
        const fixed_t *f = &fixed[i];
        switch (f->type) {
        case RILL_PARAM_INT: {
            int64_t v = rill_param_get_int(f->p);
            ENSURE(v >= f->imin && v <= f->imax, f->name);
            break;
        }
        case RILL_PARAM_SIZE: {
            uint64_t v = rill_param_get_size(f->p);
            ENSURE(v >= f->umin && v <= f->umax, f->name);
            break;
        }
        case RILL_PARAM_BOOL:
            (void)rill_param_get_bool(f->p);
            break;
        case RILL_PARAM_STRING: {
            const char *s = rill_param_get_string(f->p);
            ENSURE(s || !f->sdef, f->name);
            if (s)
                (void)strlen(s);
            break;
        }
        case RILL_PARAM_ENUM: {
            int e = rill_param_get_enum(f->p);
            ENSURE(e >= 0 && (size_t)e < f->nvalues, f->name);
            const char *s = rill_param_get_string(f->p);
            ENSURE(s && strcmp(s, f->values[e]) == 0, f->name);
            break;
        }
        }
    }
}

/* ------------------------------------------------------------ helpers */

static bool valid_name(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

static rill_param_info_t info_of(const char *name)
{
    rill_param_info_t info;
    memset(&info, 0, sizeof(info));
    for (size_t i = 0; i < rill_params_count(); i++) {
        ENSURE(rill_params_info(i, &info) == RILL_SUCCESS, name);
        if (strcmp(info.name, name) == 0)
            return info;
    }
    ENSURE(!"registered parameter listed", name);
    return info;
}

/* Set name (registered, of any type) to text; an accepted value must be read back the
 * same, and its text form (rill_params_info) must be accepted again. */
static void set_and_check(const char *name, const char *text)
{
    rill_param_t *p = NULL;
    ENSURE(rill_param_lookup(name, &p) == RILL_SUCCESS && p, name);
    rill_status_t s = rill_param_set(name, text);
    if (s != RILL_SUCCESS) {
        ENSURE(s == RILL_ERR_INVALID_ARG || s == RILL_ERR_NO_MEMORY, name);
        return;
    }
    rill_param_info_t info = info_of(name);
    ENSURE(info.source == RILL_PARAM_SOURCE_SET, name);
    if (info.type == RILL_PARAM_STRING) {
        const char *v = rill_param_get_string(p);
        ENSURE(v && strcmp(v, text) == 0, name);
        return;
    }
    uint64_t before = rill_param_get_size(p); /* the raw word, whatever the type */
    char value[sizeof(info.value)];
    memcpy(value, info.value, sizeof(value));
    ENSURE(rill_param_set(name, value) == RILL_SUCCESS, value);
    ENSURE(rill_param_get_size(p) == before, value);
}

/* Split data on '\n' into at most MAX_LINES NUL-terminated copies (a NUL byte ends a
 * line's C string early: the API takes C strings). */
static size_t split_lines(const uint8_t *data, size_t size, char **lines)
{
    size_t n = 0, pos = 0;
    while (pos < size && n < MAX_LINES) {
        const uint8_t *nl = memchr(data + pos, '\n', size - pos);
        size_t len = nl ? (size_t)(nl - (data + pos)) : size - pos;
        char *s = malloc(len + 1);
        if (!s)
            break;
        memcpy(s, data + pos, len);
        s[len] = '\0';
        lines[n++] = s;
        pos += len + 1;
    }
    return n;
}

/* Once: no RILL_MCA_* variable and no HOME, so that rill_params_load reads only argv. */
static void clean_process_env(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    for (int i = 0; i < 40; i++) {
        snprintf(many_names[i], sizeof(many_names[i]), "value_%02d%s", i, i % 3 ? "" : "_x");
        many_values[i] = many_names[i];
    }
    many_values[40] = NULL;
    unsetenv("HOME");
    for (;;) {
        char name[512] = "";
        for (char **e = environ; e && *e; e++) {
            size_t len = strcspn(*e, "=");
            if (strncmp(*e, "RILL_MCA_", 9) == 0 && len < sizeof(name)) {
                memcpy(name, *e, len);
                name[len] = '\0';
                break;
            }
        }
        if (!name[0])
            break;
        unsetenv(name);
    }
}

/* ------------------------------------------------------------ the messages */

static FILE *real_stderr;
static char *msg_buf;
static size_t msg_len;

/* Catch the registry's messages (log.c writes them to stderr) in memory. */
static void messages_begin(void)
{
    real_stderr = stderr;
    FILE *m = open_memstream(&msg_buf, &msg_len);
    if (m)
        stderr = m;
}

/* Give stderr back; each message that quotes what the input gave must show it escaped. */
static void messages_end(void)
{
    if (stderr == real_stderr)
        return;
    fclose(stderr);
    stderr = real_stderr;
    for (char *line = msg_buf; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char saved = line[len];
        line[len] = '\0';
        /* the message itself, not a quote of the input (which may hold these words) */
        if (strncmp(line, "[rill params] error: fuzz.conf:", 31) == 0 ||
            strncmp(line, "[rill params] warning: unknown parameter ", 41) == 0) {
            for (size_t i = 0; i < len; i++)
                ENSURE(line[i] >= 0x20 && line[i] < 0x7f, line);
        }
        line[len] = saved;
        line += len + (nl ? 1 : 0);
    }
    if (rill_fuzz_report_fd == 2 && msg_buf) /* where stderr is kept (-v): shown */
        fputs(msg_buf, stderr);
    free(msg_buf);
    msg_buf = NULL;
    msg_len = 0;
}

/* ------------------------------------------------------------ the target */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    clean_process_env();
    rill_params_reset();
    messages_begin();
    char *lines[MAX_LINES];
    size_t nlines = split_lines(data, size, lines);
    bool register_first = size > 0 && (data[0] & 1);

    if (register_first)
        register_fixed(false);

    /* the command line: `--mca a b` triples of the lines, then the lines as they are */
    size_t npairs = nlines / 2 > 6 ? 6 : nlines / 2;
    int argc = 0;
    char *args[1 + 3 * 6 + MAX_LINES + 1];
    char *orig[sizeof(args) / sizeof(args[0])];
    static char prog[] = "fuzz", mca[] = "--mca";
    args[argc++] = prog;
    for (size_t i = 0; i < npairs; i++) {
        args[argc++] = mca;
        args[argc++] = lines[2 * i];
        args[argc++] = lines[2 * i + 1];
    }
    for (size_t i = 0; i < nlines; i++)
        args[argc++] = lines[i];
    args[argc] = NULL;
    memcpy(orig, args, sizeof(args));
    int argc0 = argc;
    char **argv = args;
    rill_status_t s = rill_params_load(&argc, &argv);
    ENSURE(argv == args && argc >= 1 && argc <= argc0 && argv[argc] == NULL, "argv");
    ENSURE(argv[0] == prog, "argv[0]");
    if (s != RILL_ERR_NO_MEMORY) {
        /* what is left is in its order, and holds no --mca */
        int k = 1;
        for (int i = 1; i < argc; i++) {
            ENSURE(strcmp(argv[i], "--mca") != 0, "--mca left in argv");
            while (k < argc0 && orig[k] != argv[i])
                k++;
            ENSURE(k < argc0, "argv order");
            k++;
        }
    }

    /* the whole input as a parameter file */
    s = rill_params_read_text("fuzz.conf", (const char *)data, size);
    ENSURE(s == RILL_SUCCESS || s == RILL_ERR_IO || s == RILL_ERR_NO_MEMORY, "read_text");

    /* the lines as environment strings, with the RILL_MCA_ prefix and as they are */
    char *envp[2 * MAX_LINES + 1], *prefixed[MAX_LINES];
    size_t nenv = 0;
    for (size_t i = 0; i < nlines; i++) {
        size_t len = strlen(lines[i]);
        prefixed[i] = malloc(len + 10);
        if (prefixed[i]) {
            memcpy(prefixed[i], "RILL_MCA_", 9);
            memcpy(prefixed[i] + 9, lines[i], len + 1);
            envp[nenv++] = prefixed[i];
        }
        envp[nenv++] = lines[i];
    }
    envp[nenv] = NULL;
    s = rill_params_read_env(envp);
    ENSURE(s == RILL_SUCCESS || s == RILL_ERR_NO_MEMORY, "read_env");
    (void)rill_params_resolve();
    if (register_first)
        check_fixed();
    register_fixed(register_first);
    check_fixed();

    /* lines as names of every type, and as the values of an enum */
    for (size_t i = 0; i < nlines && i < MAX_REG_LINES; i++) {
        fixed_t f = { .name = lines[i],
                      .type = (rill_param_type_t)(i % 5),
                      .imin = -10,
                      .imax = 10,
                      .umin = 0,
                      .umax = 1 << 20,
                      .sdef = "x",
                      .values = sched_values,
                      .nvalues = 2 };
        rill_param_t *p = NULL;
        s = register_one(&f, &p);
        if (!valid_name(lines[i]))
            ENSURE(s == RILL_ERR_INVALID_ARG && !p, lines[i]);
        if (p) {
            rill_param_t *q = NULL;
            ENSURE(rill_param_lookup(lines[i], &q) == RILL_SUCCESS && q == p, lines[i]);
        }
    }
    if (nlines > 0) {
        const char *values[MAX_REG_LINES + 1];
        size_t nv = 0;
        for (; nv < nlines && nv < MAX_REG_LINES; nv++)
            values[nv] = lines[nv];
        values[nv] = NULL;
        rill_param_t *p = NULL;
        s = rill_param_register_enum("fz_line_enum", "lines", 1, values, values[nv - 1], &p);
        /* no handle only if a line registered that name with another type */
        ENSURE(p ? s == RILL_SUCCESS || s == RILL_ERR_INVALID_ARG : s == RILL_ERR_INVALID_ARG,
               "fz_line_enum");
        if (p && rill_param_get_string(p) && rill_param_get_size(p) < nv) {
            for (size_t i = 0; i < nlines && i < MAX_SET_LINES; i++)
                set_and_check("fz_line_enum", lines[i]);
        }
    }

    /* every line as a value of every fixed parameter, and as a name to set */
    for (size_t i = 0; i < nlines && i < MAX_SET_LINES; i++) {
        for (size_t k = 0; k < NB_FIXED; k++)
            set_and_check(fixed[k].name, lines[i]);
        rill_param_t *p = NULL;
        if (rill_param_lookup(lines[i], &p) == RILL_SUCCESS)
            ENSURE(p != NULL, lines[i]);
        s = rill_param_set(lines[i], i + 1 < nlines ? lines[i + 1] : "");
        if (!valid_name(lines[i]))
            ENSURE(s == RILL_ERR_INVALID_ARG, lines[i]);
    }
    check_fixed();

    /* unknown names: warned once, counted the same every time */
    int unknown = rill_params_warn_unknown();
    ENSURE(unknown >= 0 && rill_params_warn_unknown() == unknown, "warn_unknown");

    /* the listing: in strict name order, every field filled */
    size_t count = rill_params_count();
    const char *prev = "";
    for (size_t i = 0; i < count; i++) {
        rill_param_info_t info;
        ENSURE(rill_params_info(i, &info) == RILL_SUCCESS, "info");
        ENSURE(info.name && valid_name(info.name) && strcmp(prev, info.name) < 0, info.name);
        prev = info.name; /* valid until the reset */
        ENSURE(memchr(info.value, '\0', sizeof(info.value)) &&
                   memchr(info.allowed, '\0', sizeof(info.allowed)) &&
                   memchr(info.def, '\0', sizeof(info.def)),
               info.name);
        ENSURE(strcmp(rill_param_source_string(info.source), "?") != 0, info.name);
    }
    ENSURE(rill_params_info(count, &(rill_param_info_t){ 0 }) == RILL_ERR_NOT_FOUND, "info end");

    /* a reload: the file, environment and argv values go, the set values stay */
    (void)rill_params_load(NULL, NULL);
    check_fixed();

    rill_params_reset();
    for (size_t i = 0; i < nlines; i++) {
        free(prefixed[i]);
        free(lines[i]);
    }
    messages_end();
    return 0;
}
