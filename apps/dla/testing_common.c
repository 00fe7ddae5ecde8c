/* The DLA testers' shared front: options, runtime start, header, rows, exit status. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testing_common.h"

/* Before rill_init the rank is unknown: print usage errors from one process only. */
static int launcher_rank0(void)
{
    const char *vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK" };
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v)
            return atoi(v) == 0;
    }
    return 1;
}

static void usage(const dla_testing_t *t, FILE *f)
{
    fprintf(f,
            "usage: %s [options] [-- runtime options]\n"
            "  -N n          order of the problem (default 1000)\n",
            t->name);
    if (t->features & DLA_TESTING_GEMM)
        fprintf(f, "  -M m, -K k    rows of C, inner dimension (default: N)\n"
                   "  --transA T|N, --transB T|N   op(A), op(B) (default N)\n"
                   "  --alpha a, --beta b          (default 1.0 and 0.5)\n");
    if (t->features & DLA_TESTING_NRHS)
        fprintf(f, "  --nrhs r      number of right-hand sides (default 1)\n");
    fprintf(f,
            "  -t nb         tile size NB (default 256)\n"
            "  -P p, -Q q    process grid (default: P = number of ranks, Q = 1)\n"
            "  -c cores      cores per process given to Rill (default: all it is given)\n"
            "  -g gpus       GPUs per process (only 0 for now)\n"
            "  --nruns r     number of timed runs (default 1)\n"
            "  -x, --check   check the result against LAPACK/BLAS (threshold %.0f)\n"
            "  --seed s      seed of the generated matrices (default 3872)\n"
            "  --ref         run one LAPACKE/CBLAS call on rank 0 instead (OpenBLAS with -c "
            "threads)\n"
            "  runtime options after --: name value pairs (or --mca name value), e.g.\n"
            "      -- sched gpq runtime_watchdog_s 10\n",
            RILL_DLA_CHECK_THRESHOLD);
}

static int usage_error(const dla_testing_t *t, const char *fmt, ...)
{
    if (launcher_rank0()) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "%s: error: ", t->name);
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, " (see --help)\n");
        va_end(ap);
    }
    return 2;
}

static int parse_int(const char *s, long min, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > 1L << 30)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_trans(const char *s, int *out)
{
    if (!strcmp(s, "N") || !strcmp(s, "n") || !strcmp(s, "NoTrans"))
        *out = RILL_DLA_NOTRANS;
    else if (!strcmp(s, "T") || !strcmp(s, "t") || !strcmp(s, "Trans"))
        *out = RILL_DLA_TRANS;
    else
        return -1;
    return 0;
}

int dla_testing_factor_result(dla_testing_t *t, const char *op, rill_status_t si, rill_status_t sw)
{
    if (si != RILL_SUCCESS) {
        dla_testing_error(t, 1, "inserting %s failed: %s", op, rill_status_string(si));
        return 1;
    }
    int info = 0;
    rill_status_t sr = rill_dla_info_allreduce(t->dla, &info);
    if (info > 0) {
        dla_testing_error(t, 1, "matrix is not positive definite (leading minor %d)", info);
        return 1;
    }
    if (sw != RILL_SUCCESS || sr != RILL_SUCCESS) {
        dla_testing_error(t, 1, "%s failed: %s", op,
                          rill_status_string(sw != RILL_SUCCESS ? sw : sr));
        return 1;
    }
    return 0;
}

void dla_testing_error(dla_testing_t *t, int rank0_only, const char *fmt, ...)
{
    t->failed = 1;
    if (rank0_only && t->rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: error: ", t->name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(stderr);
}

double dla_testing_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void dla_testing_barrier(dla_testing_t *t)
{
    if (t->nranks > 1)
        rill_dla_allreduce_max(t->dla, NULL, 0);
}

int dla_testing_init(dla_testing_t *t, int argc, char **argv, const char *name, unsigned features)
{
    memset(t, 0, sizeof(*t));
    t->name = name;
    t->features = features;
    t->N = 1000;
    t->M = t->K = -1;
    t->NB = 256;
    t->P = t->Q = -1;
    t->nruns = 1;
    t->nrhs = 1;
    t->alpha = 1.0;
    t->beta = 0.5;
    t->seed = 3872;

    size_t len = 0;
    for (int i = 0; i < argc && len < sizeof(t->cmdline) - 1; i++)
        len += (size_t)snprintf(t->cmdline + len, sizeof(t->cmdline) - len, "%s%s", i ? " " : "",
                                argv[i]);

    int dashdash = argc;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int *ip = NULL;
        long min = 0;
        if (!strcmp(o, "--")) {
            dashdash = i;
            break;
        }
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            if (launcher_rank0())
                usage(t, stdout);
            return -1;
        }
        if (!strcmp(o, "-x") || !strcmp(o, "--check")) {
            t->check = 1;
            continue;
        }
        if (!strcmp(o, "--ref")) {
            t->ref = 1;
            continue;
        }
        if (!strcmp(o, "--nonspd") && (features & DLA_TESTING_NONSPD)) {
            t->nonspd = 1;
            continue;
        }
        if (!strcmp(o, "-N"))
            ip = &t->N;
        else if (!strcmp(o, "-M") && (features & DLA_TESTING_GEMM))
            ip = &t->M;
        else if (!strcmp(o, "-K") && (features & DLA_TESTING_GEMM))
            ip = &t->K;
        else if (!strcmp(o, "-t"))
            ip = &t->NB;
        else if (!strcmp(o, "-P"))
            ip = &t->P;
        else if (!strcmp(o, "-Q"))
            ip = &t->Q;
        else if (!strcmp(o, "-c"))
            ip = &t->cores;
        else if (!strcmp(o, "-g"))
            ip = &t->gpus;
        else if (!strcmp(o, "--nruns"))
            ip = &t->nruns;
        else if (!strcmp(o, "--nrhs") && (features & DLA_TESTING_NRHS))
            ip = &t->nrhs;
        if (ip) {
            min = -(1L << 30); /* ranges are checked below, with a message per option */
            if (!v || parse_int(v, min, ip))
                return usage_error(t, "option %s needs an integer, got '%s'", o, v ? v : "");
            i++;
            continue;
        }
        if (!strcmp(o, "--seed")) {
            char *end;
            if (!v)
                return usage_error(t, "option --seed needs a value");
            errno = 0;
            t->seed = strtoull(v, &end, 0);
            if (errno || *end || end == v)
                return usage_error(t, "option --seed needs an unsigned integer, got '%s'", v);
            i++;
            continue;
        }
        if ((features & DLA_TESTING_GEMM) && (!strcmp(o, "--transA") || !strcmp(o, "--transB"))) {
            if (!v || parse_trans(v, o[7] == 'A' ? &t->transA : &t->transB))
                return usage_error(t, "option %s takes N or T, got '%s'", o, v ? v : "");
            i++;
            continue;
        }
        if ((features & DLA_TESTING_GEMM) && (!strcmp(o, "--alpha") || !strcmp(o, "--beta"))) {
            char *end;
            if (!v)
                return usage_error(t, "option %s needs a value", o);
            double d = strtod(v, &end);
            if (*end || end == v)
                return usage_error(t, "option %s needs a number, got '%s'", o, v);
            *(o[2] == 'a' ? &t->alpha : &t->beta) = d;
            i++;
            continue;
        }
        return usage_error(t, "unknown option '%s'", o);
    }

    if (t->M < 0)
        t->M = t->N;
    if (t->K < 0)
        t->K = t->N;
    if (t->N < 0)
        return usage_error(t, "matrix size -N must be >= 0, got %d", t->N);
    if (t->M < 0 || t->K < 0)
        return usage_error(t, "matrix sizes -M and -K must be >= 0 (M = %d, K = %d)", t->M, t->K);
    if (t->NB <= 0)
        return usage_error(t, "tile size -t must be positive, got %d", t->NB);
    if (t->nruns < 1)
        return usage_error(t, "--nruns must be at least 1, got %d", t->nruns);
    if (t->nrhs < 1)
        return usage_error(t, "--nrhs must be at least 1, got %d", t->nrhs);
    if (t->cores < 0)
        return usage_error(t, "-c must be >= 1 (or 0 for every core given), got %d", t->cores);
    if (t->gpus < 0)
        return usage_error(t, "-g must be >= 0, got %d", t->gpus);
    if (t->gpus > 0)
        return usage_error(t,
                           "-g %d: GPU support is not built yet in the DLA testers; only -g 0 "
                           "is accepted",
                           t->gpus);
    if (t->P == 0 || t->Q == 0 || t->P < -1 || t->Q < -1)
        return usage_error(t, "-P and -Q must be positive (P = %d, Q = %d)", t->P, t->Q);

    /* runtime options: argv[dashdash+1..] as name value pairs or --mca name value */
    int rargc = 1;
    char **rargv = calloc((size_t)(3 * argc + 2), sizeof(char *));
    if (!rargv)
        return 1;
    rargv[0] = argv[0];
    for (int i = dashdash + 1; i < argc;) {
        if (!strcmp(argv[i], "--mca"))
            i++;
        if (i + 1 >= argc) {
            free(rargv);
            return usage_error(t, "runtime option '%s' after -- needs a value",
                               i < argc ? argv[i] : "--mca");
        }
        rargv[rargc++] = "--mca";
        rargv[rargc++] = argv[i];
        rargv[rargc++] = argv[i + 1];
        i += 2;
    }
    rargv[rargc] = NULL;

    if (t->cores > 0) {
        char buf[32];
        snprintf(buf, sizeof(buf), "%d", t->cores);
        /* set before rill_init: the value waits for the parameter's registration */
        rill_status_t s = rill_param_set("runtime_num_cores", buf);
        if (s != RILL_SUCCESS) {
            free(rargv);
            return usage_error(t, "-c %d: %s", t->cores, rill_status_string(s));
        }
    }

    rill_status_t s = rill_init(&rargc, &rargv, &t->ctx);
    if (s != RILL_SUCCESS) {
        free(rargv);
        if (launcher_rank0())
            fprintf(stderr, "%s: error: rill_init failed: %s\n", t->name, rill_status_string(s));
        return 1;
    }
    free(rargv);
    t->rank = rill_context_rank(t->ctx);
    t->nranks = rill_context_nranks(t->ctx);
    if (t->P < 0 && t->Q < 0) {
        t->P = t->nranks;
        t->Q = 1;
    } else if (t->P < 0) {
        t->P = t->Q <= t->nranks && t->nranks % t->Q == 0 ? t->nranks / t->Q : 1;
    } else if (t->Q < 0) {
        t->Q = t->P <= t->nranks && t->nranks % t->P == 0 ? t->nranks / t->P : 1;
    }
    t->cores = rill_context_nworkers(t->ctx);

    s = rill_dla_create(t->ctx, &t->dla);
    if (s != RILL_SUCCESS) {
        dla_testing_error(t, 1, "cannot create the DLA layer: %s", rill_status_string(s));
        rill_fini(&t->ctx);
        return 1;
    }

    if (t->rank == 0) {
        time_t now = time(NULL);
        char date[64];
        strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %z", localtime(&now));
        /* the version string names the library's git hash */
        printf("# %s: Rill %s, %s build\n", t->name, rill_version_string(), RILL_BUILD_TYPE);
        printf("# command: %s\n", t->cmdline);
        printf("# date: %s\n", date);
        printf("# ranks %d, grid %d x %d, cores per rank %d, GPUs per rank %d, seed %llu\n",
               t->nranks, t->P, t->Q, t->cores, t->gpus, (unsigned long long)t->seed);
        if (features & DLA_TESTING_GEMM)
            printf("# M %d N %d K %d transA %c transB %c alpha %g beta %g\n", t->M, t->N, t->K,
                   t->transA ? 'T' : 'N', t->transB ? 'T' : 'N', t->alpha, t->beta);
        if (features & DLA_TESTING_NRHS)
            printf("# NRHS %d\n", t->nrhs);
        if (t->ref)
            printf("# reference: one LAPACKE/CBLAS call on rank 0 with %d OpenBLAS threads\n",
                   t->cores);
        if (t->check)
            printf("# check: scaled residual < %.0f passes\n", RILL_DLA_CHECK_THRESHOLD);
        printf("%6s %5s %3s %3s %5s %4s %10s %9s %10s %6s\n", "N", "NB", "P", "Q", "cores", "gpus",
               "time_s", "gflops", "residual", "status");
        fflush(stdout);
    }
    return 0;
}

void dla_testing_row(dla_testing_t *t, double time_s, double gflops, double resid)
{
    int checked = resid >= 0 || resid != resid;
    int pass = checked && resid < RILL_DLA_CHECK_THRESHOLD;
    if (checked && !pass)
        t->failed = 1;
    if (t->rank != 0)
        return;
    char nb[16], r[32];
    if (t->ref)
        snprintf(nb, sizeof(nb), "-");
    else
        snprintf(nb, sizeof(nb), "%d", t->NB);
    if (checked)
        snprintf(r, sizeof(r), "%.3e", resid);
    else
        snprintf(r, sizeof(r), "-");
    printf("%6d %5s %3d %3d %5d %4d %10.4f %9.2f %10s %6s\n", t->N, nb, t->ref ? 1 : t->P,
           t->ref ? 1 : t->Q, t->cores, t->gpus, time_s, gflops, r,
           checked ? (pass ? "PASS" : "FAIL") : "-");
    fflush(stdout);
}

rill_matrix_t *dla_testing_matrix(dla_testing_t *t, const char *what, int m, int n)
{
    rill_matrix_t *A = NULL;
    rill_status_t s = rill_matrix_create(t->ctx, m, n, t->NB, t->NB, t->P, t->Q, &A);
    if (s == RILL_SUCCESS)
        return A;
    if (s == RILL_ERR_MISMATCH)
        dla_testing_error(t, 1,
                          "process grid P x Q = %d x %d does not match the %d ranks of this "
                          "run",
                          t->P, t->Q, t->nranks);
    else
        dla_testing_error(t, 1, "cannot create %s (%d x %d, NB %d, grid %d x %d): %s", what, m, n,
                          t->NB, t->P, t->Q, rill_status_string(s));
    return NULL;
}

int dla_testing_fini(dla_testing_t *t)
{
    if (t->dla)
        rill_dla_destroy(&t->dla);
    if (t->ctx)
        rill_fini(&t->ctx);
    return t->failed ? 1 : 0;
}
