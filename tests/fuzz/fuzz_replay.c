/*
 * Runs LLVMFuzzerTestOneInput over files, as libFuzzer would replay them, for builds
 * without libFuzzer (gcc, CI's sanitizer builds): every regular file of each folder named
 * (in name order; names starting with '.' skipped), and each file named.
 * usage: fuzz_params_replay [-v] PATH...   (-v: keep the registry's messages on stderr)
 * Exits 1 if no input was found or one could not be read; a broken invariant aborts.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_params.h"

/* sanitizer_common: where sanitizer reports go (absent without a sanitizer) */
extern void __sanitizer_set_report_fd(void *fd) __attribute__((weak));

static int out_fd = 2; /* the real stderr */

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        dprintf(out_fd, "fuzz_params_replay: cannot open %s\n", path);
        return -1;
    }
    size_t len = 0, cap = 4096;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            dprintf(out_fd, "fuzz_params_replay: out of memory reading %s\n", path);
            return -1;
        }
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap)
            break;
        cap *= 2;
        uint8_t *nb = realloc(buf, cap);
        if (!nb)
            free(buf);
        buf = nb;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        dprintf(out_fd, "fuzz_params_replay: cannot read %s\n", path);
        free(buf);
        return -1;
    }
    /* an exact-size copy, so that ASan catches a read past the input */
    uint8_t *data = malloc(len ? len : 1);
    if (!data) {
        free(buf);
        return -1;
    }
    memcpy(data, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(data, len);
    free(data);
    return 0;
}

static int not_hidden(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

int main(int argc, char **argv)
{
    int verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    int first = 1 + verbose;
    if (first >= argc) {
        fprintf(stderr, "usage: %s [-v] CORPUS_DIR_OR_FILE...\n", argv[0]);
        return 2;
    }
    if (!verbose) {
        /* the registry reports every bad input on stderr: send that to /dev/null, and
         * what matters (broken invariants, sanitizer reports) to the real stderr */
        out_fd = dup(2);
        int null_fd = open("/dev/null", O_WRONLY);
        if (out_fd < 0 || null_fd < 0) {
            perror("fuzz_params_replay");
            return 1;
        }
        fflush(stderr);
        dup2(null_fd, 2);
        close(null_fd);
        rill_fuzz_report_fd = out_fd;
        if (__sanitizer_set_report_fd)
            __sanitizer_set_report_fd((void *)(intptr_t)out_fd);
    }
    int n = 0, bad = 0;
    for (int a = first; a < argc; a++) {
        struct stat st;
        if (stat(argv[a], &st) != 0) {
            dprintf(out_fd, "fuzz_params_replay: no such file or folder: %s\n", argv[a]);
            bad++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad += run_file(argv[a]) != 0;
            n++;
            continue;
        }
        struct dirent **names;
        int k = scandir(argv[a], &names, not_hidden, alphasort);
        if (k < 0) {
            dprintf(out_fd, "fuzz_params_replay: cannot list %s\n", argv[a]);
            bad++;
            continue;
        }
        for (int i = 0; i < k; i++) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[a], names[i]->d_name);
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                bad += run_file(path) != 0;
                n++;
            }
            free(names[i]);
        }
        free(names);
    }
    dprintf(out_fd, "fuzz_params_replay: %d input(s) replayed, %d unreadable\n", n, bad);
    if (n == 0) {
        dprintf(out_fd, "fuzz_params_replay: no input found\n");
        return 1;
    }
    return bad ? 1 : 0;
}
