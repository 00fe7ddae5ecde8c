/* rillcc: the compiler of Rill's parameterized task-graph language (docs/ptg.md).
 *
 *   rillcc [--check] [--dump] FILE.rill
 *
 * Reads FILE.rill, reports every problem as "FILE:LINE:COLUMN: error: message" with the
 * line and a caret, and exits 1 when there is one (2 when the file cannot be read or a
 * usage error). --dump prints the tree the checks saw. Code generation (C that registers
 * the task classes with the runtime) comes with the PTG runtime; until then rillcc checks. */
#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ast.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: rillcc [--check] [--dump] [-o OUT.c [-H OUT.h]] FILE.rill\n"
                 "  --check  check the file (the default): errors as FILE:LINE:COLUMN\n"
                 "  --dump   print the parsed task classes\n"
                 "  -o OUT.c write the C of the program (its header: -H, default OUT.h);\n"
                 "           the program is named after FILE (potrf.rill: potrf_program,\n"
                 "           potrf_globals_t, potrf_taskpool_create)\n");
}

/* the program's C name: FILE's base name without its extension, other bytes as '_' */
static char *c_name(const char *file)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    size_t n = strcspn(base, ".");
    char *s = malloc(n + 2);
    if (!s)
        return NULL;
    size_t o = 0;
    if (n == 0 || (base[0] >= '0' && base[0] <= '9'))
        s[o++] = 'p';
    for (size_t i = 0; i < n; i++) {
        char ch = base[i];
        s[o++] = ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))
                     ? ch
                     : '_';
    }
    s[o] = '\0';
    return s;
}

/* The whole file at path, or NULL with a message (exit 2). Only a regular file: a
 * directory reads as nothing, a device (/dev/zero) or FIFO never ends. O_NONBLOCK: opening
 * a FIFO with no writer would block before fstat could refuse it. */
static char *read_all(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "rillcc: cannot read '%s': %s\n", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        fprintf(stderr, "rillcc: cannot read '%s': %s\n", path, strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        fprintf(stderr, "rillcc: '%s' is %s, not a regular file: give a .rill file\n", path,
                S_ISDIR(st.st_mode)                          ? "a directory"
                : S_ISFIFO(st.st_mode)                       ? "a FIFO"
                : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                             : "a special file");
        close(fd);
        return NULL;
    }
    if ((unsigned long long)st.st_size > RILLCC_MAX_INPUT) {
        fprintf(stderr, "rillcc: '%s' is %lld bytes: at most %u (16 MiB) of source\n", path,
                (long long)st.st_size, RILLCC_MAX_INPUT);
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    /* one byte more than the limit: a file that grew since fstat is caught too */
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            fprintf(stderr, "rillcc: cannot read '%s': %s\n", path, strerror(errno));
            free(buf);
            buf = NULL;
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (n < cap)
            continue;
        if (cap > RILLCC_MAX_INPUT) {
            fprintf(stderr,
                    "rillcc: '%s' is more than %u bytes (16 MiB): at most that much "
                    "source\n",
                    path, RILLCC_MAX_INPUT);
            free(buf);
            buf = NULL;
            break;
        }
        size_t ncap = cap * 2 > RILLCC_MAX_INPUT + 1 ? RILLCC_MAX_INPUT + 1 : cap * 2;
        char *b = realloc(buf, ncap);
        if (!b) {
            fprintf(stderr, "rillcc: out of memory reading '%s'\n", path);
            free(buf);
        }
        buf = b;
        cap = ncap;
    }
    close(fd);
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    const char *file = NULL, *c_out = NULL, *h_out = NULL;
    bool dump = false;
    static const struct option longs[] = {
        { "check", no_argument, NULL, 'c' },
        { "dump", no_argument, NULL, 'd' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    opterr = 0; /* (the messages are ours) */
    for (int c; (c = getopt_long(argc, argv, ":o:H:h", longs, NULL)) != -1;) {
        switch (c) {
        case 'c': /* (checking is what it always does) */
            break;
        case 'd':
            dump = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'o':
            c_out = optarg;
            break;
        case 'H':
            h_out = optarg;
            break;
        case ':':
            fprintf(stderr, "rillcc: -%c needs a file name\n", optopt);
            return 2;
        default:
            if (optopt > 0 && optopt < 256)
                fprintf(stderr, "rillcc: unknown option '-%c'\n", optopt);
            else
                fprintf(stderr, "rillcc: unknown option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    /* the operands (getopt_long moved them to the end): one file */
    if (optind < argc)
        file = argv[optind];
    if (optind + 1 < argc) {
        fprintf(stderr, "rillcc: one file at a time ('%s' and '%s' given)\n", file,
                argv[optind + 1]);
        return 2;
    }
    if (!file) {
        usage(stderr);
        return 2;
    }
    size_t len = 0;
    char *src = read_all(file, &len);
    if (!src)
        return 2;
    int errors = rillcc_compile(file, src, len, dump ? stdout : NULL);
    if (!errors && c_out) {
        char hbuf[4096];
        if (!h_out) {
            size_t n = strlen(c_out);
            snprintf(hbuf, sizeof(hbuf), "%.*s.h",
                     (int)(n > 2 && !strcmp(c_out + n - 2, ".c") ? n - 2 : n), c_out);
            h_out = hbuf;
        }
        char *name = c_name(file);
        FILE *fc = fopen(c_out, "w"), *fh = fopen(h_out, "w");
        if (!name || !fc || !fh) {
            fprintf(stderr, "rillcc: cannot write '%s': %s\n", !fc ? c_out : h_out,
                    strerror(errno));
            errors = 1;
        } else {
            const char *hb = strrchr(h_out, '/');
            errors = rillcc_generate(&rillcc_prog, name, fc, fh, hb ? hb + 1 : h_out, c_out);
        }
        if (fc && fclose(fc) != 0)
            errors++;
        if (fh && fclose(fh) != 0)
            errors++;
        if (errors) {
            remove(c_out);
            remove(h_out);
        }
        free(name);
    }
    if (errors)
        fprintf(stderr, "%s: %d error%s\n", file, errors, errors == 1 ? "" : "s");
    rillcc_free_all();
    free(src);
    return errors ? 1 : 0;
}
