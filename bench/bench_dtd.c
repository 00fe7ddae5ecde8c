/* DTD task overhead, in the shape of PaRSEC's DTD insertion benchmark: NTASKS
 * independent tasks, each with one value and F distinct tiles in INOUT mode, inserted by
 * the main thread and run to completion; time per task from the first insertion to the
 * end of the wait. Also a dependency chain (every task INOUT on one tile). Each worker
 * count runs in its own child process; the parent prints the table (and writes it as CSV
 * with --csv FILE, which tools/rill_bench dtd reads). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rill/rill.h"

#include "args.h"

static rill_status_t empty_body(rill_task_t *task)
{
    (void)task;
    return RILL_SUCCESS;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const int flows[] = { 1, 2, 5, 10, 15 };
#define NFLOWS 5
#define MAXF   15

/* seconds per task, best of reps, for F flows (F == 0: the chain) */
static double run(rill_context_t *ctx, rill_dtd_class_t *cls, int ntasks, int F, int reps,
                  rill_data_t **tiles)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        rill_taskpool_t *tp;
        rill_dtd_taskpool_create(ctx, &tp);
        double t0 = now_s();
        for (int i = 0; i < ntasks; i++) {
            rill_data_t **t = F ? &tiles[(size_t)i * (size_t)F] : tiles;
            int v = i;
#define T(k) RILL_DTD_INOUT, t[k]
            switch (F) {
            case 0:
            case 1:
                rill_dtd_insert_task(tp, cls, 0, RILL_DTD_VALUE, sizeof(v), &v, T(0), 0);
                break;
            case 2:
                rill_dtd_insert_task(tp, cls, 0, RILL_DTD_VALUE, sizeof(v), &v, T(0), T(1), 0);
                break;
            case 5:
                rill_dtd_insert_task(tp, cls, 0, RILL_DTD_VALUE, sizeof(v), &v, T(0), T(1), T(2),
                                     T(3), T(4), 0);
                break;
            case 10:
                rill_dtd_insert_task(tp, cls, 0, RILL_DTD_VALUE, sizeof(v), &v, T(0), T(1), T(2),
                                     T(3), T(4), T(5), T(6), T(7), T(8), T(9), 0);
                break;
            case 15:
                rill_dtd_insert_task(tp, cls, 0, RILL_DTD_VALUE, sizeof(v), &v, T(0), T(1), T(2),
                                     T(3), T(4), T(5), T(6), T(7), T(8), T(9), T(10), T(11), T(12),
                                     T(13), T(14), 0);
                break;
            }
#undef T
        }
        if (rill_taskpool_wait(tp) != RILL_SUCCESS) {
            fprintf(stderr, "bench_dtd: the taskpool failed\n");
            exit(1);
        }
        double dt = now_s() - t0;
        rill_taskpool_destroy(&tp);
        if (dt < best)
            best = dt;
    }
    return best / ntasks;
}

/* Child: one context with `workers` workers; writes one line of per-task microseconds.
 * rargv holds the runtime options (--mca name value) for rill_init. */
static int child(int workers, int ntasks, int reps, int out_fd, int rargc, char **rargv)
{
    char n[16];
    snprintf(n, sizeof(n), "%d", workers);
    rill_param_set("runtime_num_cores", n);
    rill_context_t *ctx;
    if (rill_init(&rargc, &rargv, &ctx) != RILL_SUCCESS)
        return 1;
    rill_dtd_class_t *cls;
    rill_dtd_class_create(ctx, "empty", empty_body, &cls);
    size_t ntiles = (size_t)ntasks * MAXF;
    double *store = calloc(ntiles, sizeof(double));
    rill_data_t **tiles = calloc(ntiles, sizeof(*tiles));
    if (!store || !tiles) {
        fprintf(stderr, "bench_dtd: out of memory for %zu tiles\n", ntiles);
        return 1;
    }
    for (size_t i = 0; i < ntiles; i++)
        if (rill_data_create(ctx, &store[i], sizeof(double), &tiles[i]) != RILL_SUCCESS) {
            fprintf(stderr, "bench_dtd: cannot create %zu tiles\n", ntiles);
            return 1;
        }
    char line[512];
    int off = snprintf(line, sizeof(line), "%d", rill_context_nworkers(ctx));
    for (int f = 0; f < NFLOWS; f++)
        off += snprintf(line + off, sizeof(line) - (size_t)off, " %.3f",
                        1e6 * run(ctx, cls, ntasks, flows[f], reps, tiles));
    off += snprintf(line + off, sizeof(line) - (size_t)off, " %.3f\n",
                    1e6 * run(ctx, cls, ntasks, 0, reps, tiles));
    if (write(out_fd, line, (size_t)off) != off)
        return 1;
    for (size_t i = 0; i < ntiles; i++)
        rill_data_destroy(&tiles[i]);
    free(tiles);
    free(store);
    rill_dtd_class_destroy(&cls);
    rill_fini(&ctx);
    return 0;
}

#define MAX_TASKS   1000000 /* 15 tiles each: about 5 GB of data descriptors at the top */
#define MAX_REPS    1000
#define MAX_WORKERS 1024 /* per run */
#define MAX_RUNS    16   /* worker counts in --workers */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_dtd [--tasks N] [--reps R] [--workers W,...] [--csv FILE] "
            "[--mca name value]...\n"
            "  --tasks N         independent tasks per run, 1..%d (default 100000)\n"
            "  --reps R          runs of each case, the best is kept, 1..%d (default 3)\n"
            "  --workers W,...   the worker counts, a row each, 1..%d, at most %d of them "
            "(default 1,2)\n"
            "  --csv FILE        also write the table to FILE as CSV (for tools/rill_bench)\n"
            "  --mca name value  a runtime parameter, for rill_init\n"
            "  -h, --help        this text\n",
            MAX_TASKS, MAX_REPS, MAX_WORKERS, MAX_RUNS);
}

/* "1,2,8" into counts[] (each in [1, MAX_WORKERS], at most MAX_RUNS): how many, or -1. */
static int parse_workers(const char *s, int *counts)
{
    int n = 0;
    char buf[256];
    if (!s || strlen(s) >= sizeof(buf))
        return -1;
    strcpy(buf, s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (n == MAX_RUNS || rill_args_int(tok, 1, MAX_WORKERS, &counts[n++]))
            return -1;
    return n > 0 && s[strlen(s) - 1] != ',' && s[0] != ',' && !strstr(s, ",,") ? n : -1;
}

int main(int argc, char **argv)
{
    int ntasks = 100000, reps = 3;
    int nruns = 2, counts[MAX_RUNS] = { 1, 2 };
    const char *csv_path = NULL;
    int rargc = 1;
    char **rargv = calloc((size_t)argc + 1, sizeof(char *));
    if (!rargv)
        return 1;
    rargv[0] = argv[0];
    enum { OPT_TASKS = 256, OPT_REPS, OPT_WORKERS, OPT_CSV, OPT_MCA };
    static const struct option longs[] = {
        { "help", no_argument, NULL, 'h' },
        { "tasks", required_argument, NULL, OPT_TASKS },
        { "reps", required_argument, NULL, OPT_REPS },
        { "workers", required_argument, NULL, OPT_WORKERS },
        { "csv", required_argument, NULL, OPT_CSV },
        { "mca", required_argument, NULL, OPT_MCA },
        { NULL, 0, NULL, 0 },
    };
    opterr = 0; /* (the messages are ours) */
    for (int c; (c = getopt_long(argc, argv, "+:h", longs, NULL)) != -1;) {
        const char *o = c == ':' || c == '?' ? argv[optind - 1] : NULL;
        const char *v = c == ':' ? NULL : optarg;
        int code = c == ':' ? optopt : c;
        char must[96] = "";
        bool ok = true;
        switch (code) {
        case 'h':
            usage(stdout);
            free(rargv);
            return 0;
        case OPT_MCA:
            if (c == ':' || optind >= argc) {
                fprintf(stderr, "bench_dtd: error: option --mca needs a name and a value: --mca "
                                "name value (see --help)\n");
                free(rargv);
                return 2;
            }
            rargv[rargc++] = "--mca";
            rargv[rargc++] = optarg;
            rargv[rargc++] = argv[optind++];
            continue;
        case OPT_CSV:
            if (!v || !*v || *v == '-') { /* "--csv --tasks 5" forgot the name */
                fprintf(stderr,
                        "bench_dtd: error: option --csv needs a file name, got %s%s%s "
                        "(see --help)\n",
                        v ? "'" : "nothing", v ? v : "", v ? "'" : "");
                free(rargv);
                return 2;
            }
            csv_path = v;
            continue;
        case OPT_WORKERS:
            o = "--workers";
            snprintf(must, sizeof(must),
                     "a comma-separated list of 1 to %d worker counts, each in [1, %d]", MAX_RUNS,
                     MAX_WORKERS);
            ok = (nruns = parse_workers(v, counts)) > 0;
            break;
        case OPT_TASKS:
        case OPT_REPS:
            o = code == OPT_TASKS ? "--tasks" : "--reps";
            snprintf(must, sizeof(must), "an integer in [1, %d]",
                     code == OPT_TASKS ? MAX_TASKS : MAX_REPS);
            ok = !rill_args_int(v, 1, code == OPT_TASKS ? MAX_TASKS : MAX_REPS,
                                code == OPT_TASKS ? &ntasks : &reps);
            break;
        default: /* '?': unknown (a short one by its letter) */
            if (optopt > 0 && optopt < 256)
                fprintf(stderr, "bench_dtd: error: unknown option '-%c' (see --help)\n", optopt);
            else
                fprintf(stderr, "bench_dtd: error: unknown option '%s' (see --help)\n", o);
            free(rargv);
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "bench_dtd: error: option %s must be %s, got %s%s%s (see --help)\n", o,
                    must, v ? "'" : "nothing", v ? v : "", v ? "'" : "");
            free(rargv);
            return 2;
        }
    }
    if (optind < argc) { /* an operand: none is taken */
        fprintf(stderr, "bench_dtd: error: unknown option '%s' (see --help)\n", argv[optind]);
        free(rargv);
        return 2;
    }
    rargv[rargc] = NULL;
    /* open the CSV before running anything, so a bad path is refused at once */
    FILE *csv = NULL;
    if (csv_path && !(csv = fopen(csv_path, "w"))) {
        fprintf(stderr, "bench_dtd: error: option --csv: cannot write '%s': %s\n", csv_path,
                strerror(errno));
        free(rargv);
        return 2;
    }
    if (csv) {
        char date[32];
        time_t now = time(NULL);
        struct utsname un;
        strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", localtime(&now));
        fprintf(csv, "# bench_dtd: Rill %s, %s, %s\n", rill_version_string(), date,
                uname(&un) == 0 ? un.nodename : "?");
        fprintf(csv,
                "# %d independent tasks, best of %d; per-task microseconds from first "
                "insertion to end of wait; F = INOUT tiles per task\n",
                ntasks, reps);
        fprintf(csv, "workers,F1_us,F2_us,F5_us,F10_us,F15_us,chain_us,tasks_per_s_F1\n");
    }
    printf("# Rill %s: DTD task overhead, %d independent tasks, best of %d\n",
           rill_version_string(), ntasks, reps);
    printf("# per-task time (us) from first insertion to end of wait; F = INOUT tiles per task\n");
    printf("# PaRSEC DTD (its own insertion benchmark, 2-core EPYC): F=1 2.8/2.7, F=2 6.5/7.6, "
           "F=5 42/22, F=10 94/44, F=15 160/128 us (1/2 workers)\n");
    printf("%-8s %8s %8s %8s %8s %8s %10s %12s\n", "workers", "F=1", "F=2", "F=5", "F=10", "F=15",
           "chain", "tasks/s(F=1)");
    for (int k = 0; k < nruns; k++) {
        int workers = counts[k];
        int fds[2];
        if (pipe(fds) != 0)
            return 1;
        fflush(NULL); /* the child must not inherit (and flush again) buffered output */
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            _exit(child(workers, ntasks, reps, fds[1], rargc, rargv));
        }
        close(fds[1]);
        char buf[512] = { 0 };
        ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
        close(fds[0]);
        int st;
        waitpid(pid, &st, 0);
        int w;
        double v[NFLOWS + 1];
        if (n <= 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
            sscanf(buf, "%d %lf %lf %lf %lf %lf %lf", &w, &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5]) != 7) {
            fprintf(stderr, "bench_dtd: the run with %d workers failed\n", workers);
            return 1;
        }
        printf("%-8d %8.2f %8.2f %8.2f %8.2f %8.2f %10.2f %12.0f\n", w, v[0], v[1], v[2], v[3],
               v[4], v[5], 1e6 / v[0]);
        if (csv)
            fprintf(csv, "%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.0f\n", w, v[0], v[1], v[2], v[3], v[4],
                    v[5], 1e6 / v[0]);
    }
    free(rargv);
    if (csv && fclose(csv) != 0) {
        fprintf(stderr, "bench_dtd: error writing '%s': %s\n", csv_path, strerror(errno));
        return 1;
    }
    return 0;
}
