/* The DLA testers' shared front: options, runtime start, header, rows, exit status. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "dla_internal.h"
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
            "  -N n          order of the problem, 0..%d (default 1000)\n",
            t->name, DLA_TESTING_MAX_SIZE);
    if (t->features & DLA_TESTING_GEMM)
        fprintf(f,
                "  -M m, -K k    rows of C, inner dimension, 0..%d (default: N)\n"
                "  --transA T|N, --transB T|N   op(A), op(B) (default N)\n"
                "  --alpha a, --beta b          any real, inf and nan included (default 1.0 "
                "and 0.5)\n",
                DLA_TESTING_MAX_SIZE);
    if (t->features & DLA_TESTING_DSL)
        fprintf(f, "  --dsl dtd|ptg the front end: DTD (default) or PTG (apps/dla/*.rill, "
                   "CPU and CUDA bodies)\n");
    if (t->features & DLA_TESTING_PANEL)
        fprintf(f,
                "  --panel p     dpotrf's panel solves: trsm (a dtrsm per tile), inverse (one "
                "dtrtri per\n"
                "                panel, then a dtrmm per tile; on GPUs a gemm) or auto "
                "(default:\n"
                "                inverse with GPUs, trsm without)\n"
                "  --gpu-trmm-block b, --gpu-trinv-leaf l\n"
                "                on GPUs, the inverse panel's dtrmm as gemms over blocks of "
                "b columns (0:\n"
                "                the whole tile; default %d, else at least 64) and its "
                "dtrtri's\n"
                "                recursion down to leaves of l columns (default %d, at "
                "least 64)\n",
                RILL_DLA_GPU_TRMM_BLOCK, RILL_DLA_GPU_TRINV_LEAF);
    if (t->features & DLA_TESTING_NRHS)
        fprintf(f, "  --nrhs r      number of right-hand sides, 1..%d (default 1)\n",
                DLA_TESTING_MAX_SIZE);
    if (t->features & DLA_TESTING_KIND)
        fprintf(f, "  --kind k      the matrix: random (default), dd (diagonally dominant), "
                   "pivot (A(0, 0) = 0:\n"
                   "                elimination without interchanges fails) or singular "
                   "(column N / 2 zero)\n");
    fprintf(f,
            "  -t nb         tile size NB, 1..%d (default 256)\n"
            "  -P p, -Q q    process grid, 1..%d, P x Q = ranks (default: P = ranks, Q = 1)\n"
            "  --dist d      tiles over the grid: cyclic (2D block-cyclic), diagonal (grid row\n"
            "                (i + j) %% P: panels and the triangle's rows spread) or skewed\n"
            "                (the diagonal tiles too: grid row (i + j + j / P) %% P with Q = 1,\n"
            "                else (i + i / lcm(P, Q)) %% P); default\n"
            "                %s\n"
            "  -c cores      cores per process given to Rill, 0..%d (default 0: all it is "
            "given)\n"
            "  -g gpus       GPUs per process, 0..8 (default: all of the process's share of "
            "the node's GPUs; 0: CPUs only)\n"
            "  --nruns r     number of timed runs, 1..1000000 (default 1)\n"
            "  --warmup w    untimed runs before them, 0..100 (default: 1 when a rank uses GPUs,\n"
            "                whose first call of each library kernel loads it, else 0)\n"
            "  -x, --check   check the result against LAPACK/BLAS (threshold %.0f; NaN/Inf "
            "fail)\n"
            "  --seed s      seed of the generated matrices, 0..2^64-1 (default 3872)\n"
            "  --ref         run one LAPACKE/CBLAS call on rank 0 instead (OpenBLAS with -c "
            "threads);\n"
            "                with -x its result is checked the same way\n"
            "  --no-mem-check  do not refuse a run that needs more memory than is available\n"
            "  --mca name value  a runtime parameter (anywhere on the line)\n"
            "  runtime options after --: name value pairs (or --mca name value), e.g.\n"
            "      -- sched gpq runtime_watchdog_s 10\n",
            DLA_TESTING_MAX_SIZE, DLA_TESTING_MAX_SIZE,
            t->features & DLA_TESTING_GEMM ? "cyclic" : "skewed (one rank's GPUs likewise)",
            RILL_MAX_CORES, RILL_DLA_CHECK_THRESHOLD);
}

/* The distributions' names, in rill_matrix_dist_t's order (--dist, the header). */
static const char *const dist_names[] = { "cyclic", "diagonal", "skewed" };

/* The index of arg among the n names, -1 for none (or no arg). */
static int name_index(const char *arg, const char *const *names, int n)
{
    for (int k = 0; arg && k < n; k++)
        if (!strcmp(arg, names[k]))
            return k;
    return -1;
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
    /* a timed run starts: what the GPUs did during it is printed with its row */
    t->gpus_run.n = t->gpus < 8 ? t->gpus : 8;
    for (int g = 0; g < t->gpus_run.n; g++)
        rill_context_gpu_counters(t->ctx, g, &t->gpus_run.start[g]);
}

/* getopt_long's codes of the options without a short form */
enum {
    OPT_NRUNS = 256,
    OPT_WARMUP,
    OPT_NRHS,
    OPT_TRMM_BLOCK,
    OPT_TRINV_LEAF,
    OPT_DSL,
    OPT_DIST,
    OPT_PANEL,
    OPT_NO_MEM_CHECK,
    OPT_NONSPD,
    OPT_KIND,
    OPT_MCA,
    OPT_SEED,
    OPT_TRANSA,
    OPT_TRANSB,
    OPT_ALPHA,
    OPT_BETA,
    OPT_REF,
};

/* The options before `--` (and the pairs after it), through getopt_long: fills t, and
 * rargv/rargc with the runtime options for rill_init. An option of a feature the tester
 * lacks is unknown to it. Returns 0, -1 after --help, or 2 (error printed). */
static int parse_options(dla_testing_t *t, int argc, char **argv, char **rargv, int *rargc)
{
    const unsigned features = t->features;
    const struct {
        int code;         /* getopt_long's */
        const char *name; /* as messages say it */
        unsigned feature; /* 0: every tester */
        int *value;
        long min, max;
    } ints[] = {
        { 'N', "-N", 0, &t->N, 0, DLA_TESTING_MAX_SIZE },
        { 'M', "-M", DLA_TESTING_GEMM, &t->M, 0, DLA_TESTING_MAX_SIZE },
        { 'K', "-K", DLA_TESTING_GEMM, &t->K, 0, DLA_TESTING_MAX_SIZE },
        { 't', "-t", 0, &t->NB, 1, DLA_TESTING_MAX_SIZE },
        { 'P', "-P", 0, &t->P, 1, DLA_TESTING_MAX_SIZE },
        { 'Q', "-Q", 0, &t->Q, 1, DLA_TESTING_MAX_SIZE },
        { 'c', "-c", 0, &t->cores, 0, RILL_MAX_CORES }, /* runtime_num_cores' range */
        { 'g', "-g", 0, &t->gpus, 0, 8 },
        { OPT_NRUNS, "--nruns", 0, &t->nruns, 1, 1000000 },
        { OPT_WARMUP, "--warmup", 0, &t->warmup, 0, 100 },
        { OPT_NRHS, "--nrhs", DLA_TESTING_NRHS, &t->nrhs, 1, DLA_TESTING_MAX_SIZE },
        { OPT_TRMM_BLOCK, "--gpu-trmm-block", DLA_TESTING_PANEL, &t->trmm_block, 0,
          DLA_TESTING_MAX_SIZE },
        { OPT_TRINV_LEAF, "--gpu-trinv-leaf", DLA_TESTING_PANEL, &t->trinv_leaf, 64,
          DLA_TESTING_MAX_SIZE },
    };
    const int nints = (int)(sizeof(ints) / sizeof(ints[0]));
    const struct {
        struct option o;
        unsigned feature;
    } all[] = {
        { { "help", no_argument, NULL, 'h' }, 0 },
        { { "check", no_argument, NULL, 'x' }, 0 },
        { { "ref", no_argument, NULL, OPT_REF }, 0 },
        { { "nruns", required_argument, NULL, OPT_NRUNS }, 0 },
        { { "warmup", required_argument, NULL, OPT_WARMUP }, 0 },
        { { "nrhs", required_argument, NULL, OPT_NRHS }, DLA_TESTING_NRHS },
        { { "gpu-trmm-block", required_argument, NULL, OPT_TRMM_BLOCK }, DLA_TESTING_PANEL },
        { { "gpu-trinv-leaf", required_argument, NULL, OPT_TRINV_LEAF }, DLA_TESTING_PANEL },
        { { "dsl", required_argument, NULL, OPT_DSL }, DLA_TESTING_DSL },
        { { "dist", required_argument, NULL, OPT_DIST }, 0 },
        { { "panel", required_argument, NULL, OPT_PANEL }, DLA_TESTING_PANEL },
        { { "no-mem-check", no_argument, NULL, OPT_NO_MEM_CHECK }, 0 },
        { { "nonspd", no_argument, NULL, OPT_NONSPD }, DLA_TESTING_NONSPD },
        { { "kind", required_argument, NULL, OPT_KIND }, DLA_TESTING_KIND },
        { { "mca", required_argument, NULL, OPT_MCA }, 0 },
        { { "seed", required_argument, NULL, OPT_SEED }, 0 },
        { { "transA", required_argument, NULL, OPT_TRANSA }, DLA_TESTING_GEMM },
        { { "transB", required_argument, NULL, OPT_TRANSB }, DLA_TESTING_GEMM },
        { { "alpha", required_argument, NULL, OPT_ALPHA }, DLA_TESTING_GEMM },
        { { "beta", required_argument, NULL, OPT_BETA }, DLA_TESTING_GEMM },
    };
    struct option longs[sizeof(all) / sizeof(all[0]) + 1];
    int nlongs = 0;
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
        if (!all[k].feature || (features & all[k].feature))
            longs[nlongs++] = all[k].o;
    longs[nlongs] = (struct option){ 0 };
    /* '+': stop at the first operand (an error below) or at --; ':': a missing value is ours
     * to say */
    char shorts[32] = "+:hxN:t:P:Q:c:g:";
    if (features & DLA_TESTING_GEMM)
        strcat(shorts, "M:K:");
    opterr = 0;
    optind = 1;
    for (;;) {
        int c = getopt_long(argc, argv, shorts, longs, NULL);
        if (c == -1)
            break;
        const char *v = optarg;
        int k = 0;
        while (k < nints && ints[k].code != (c == ':' ? optopt : c))
            k++;
        if (c == ':' && k < nints)
            return usage_error(t, "option %s needs a value: an integer in [%ld, %ld]", ints[k].name,
                               ints[k].min, ints[k].max);
        if (c == ':' && optopt == OPT_MCA)
            return usage_error(t, "option --mca needs a name and a value: --mca name value");
        if (c == ':' && optopt == OPT_DSL)
            return usage_error(t, "option --dsl needs dtd or ptg");
        if (c == ':' && optopt == OPT_DIST)
            return usage_error(t, "option --dist needs cyclic, diagonal or skewed, got ''");
        if (c == ':' && optopt == OPT_PANEL)
            return usage_error(t, "option --panel needs auto, trsm or inverse, got ''");
        if (c == ':' && optopt == OPT_KIND)
            return usage_error(t, "option --kind needs random, dd, pivot or singular, got ''");
        if (c == ':' && optopt == OPT_SEED)
            return usage_error(t, "option --seed must be an integer in [0, %" PRIu64 "], got ''",
                               UINT64_MAX);
        if (c == ':' && (optopt == OPT_TRANSA || optopt == OPT_TRANSB))
            return usage_error(t, "option --trans%c takes N or T, got ''",
                               optopt == OPT_TRANSA ? 'A' : 'B');
        if (c == ':')
            return usage_error(t, "option %s needs a value", argv[optind - 1]);
        if (c == '?') {
            if (optopt && optopt < 256)
                return usage_error(t, "unknown option '-%c'", optopt);
            return usage_error(t, "unknown option '%s'", argv[optind - 1]);
        }
        if (k < nints) {
            if (rill_args_int(v, ints[k].min, ints[k].max, ints[k].value))
                return usage_error(t, "option %s must be an integer in [%ld, %ld], got '%s'",
                                   ints[k].name, ints[k].min, ints[k].max, v);
            continue;
        }
        switch (c) {
        case 'h':
            if (launcher_rank0())
                usage(t, stdout);
            return -1;
        case 'x':
            t->check = 1;
            break;
        case OPT_REF:
            t->ref = 1;
            break;
        case OPT_NO_MEM_CHECK:
            t->no_mem_check = 1;
            break;
        case OPT_NONSPD:
            t->nonspd = 1;
            break;
        case OPT_DSL:
            if (strcmp(v, "dtd") && strcmp(v, "ptg"))
                return usage_error(t, "option --dsl needs dtd or ptg, not %s", v);
            t->ptg = !strcmp(v, "ptg");
            break;
        case OPT_DIST: {
            int d = name_index(v, dist_names, 3);
            if (d < 0)
                return usage_error(t, "option --dist needs cyclic, diagonal or skewed, got '%s'",
                                   v);
            t->dist = (rill_matrix_dist_t)d;
            break;
        }
        case OPT_PANEL: {
            static const char *const names[] = { "auto", "trsm", "inverse" };
            int d = name_index(v, names, 3);
            if (d < 0)
                return usage_error(t, "option --panel needs auto, trsm or inverse, got '%s'", v);
            t->panel = (rill_dla_panel_t)d;
            break;
        }
        case OPT_KIND: {
            static const char *const names[] = { "random", "dd", "pivot", "singular" };
            int d = name_index(v, names, 4);
            if (d < 0)
                return usage_error(t, "option --kind needs random, dd, pivot or singular, got '%s'",
                                   v);
            t->kind = (dla_kind_t)d;
            break;
        }
        case OPT_MCA: /* rill_init takes it: the same as after -- */
            if (optind >= argc)
                return usage_error(t, "option --mca needs a name and a value: --mca name value");
            rargv[(*rargc)++] = "--mca";
            rargv[(*rargc)++] = (char *)v;
            rargv[(*rargc)++] = argv[optind++];
            break;
        case OPT_SEED:
            if (rill_args_u64(v, &t->seed))
                return usage_error(t,
                                   "option --seed must be an integer in [0, %" PRIu64 "], got '%s'",
                                   UINT64_MAX, v);
            break;
        case OPT_TRANSA:
        case OPT_TRANSB:
            if (parse_trans(v, c == OPT_TRANSA ? &t->transA : &t->transB))
                return usage_error(t, "option --trans%c takes N or T, got '%s'",
                                   c == OPT_TRANSA ? 'A' : 'B', v);
            break;
        case OPT_ALPHA:
        case OPT_BETA:
            if (rill_args_double(v, c == OPT_ALPHA ? &t->alpha : &t->beta))
                return usage_error(t,
                                   "option --%s must be a real number (any double, inf and nan "
                                   "included), got '%s'",
                                   c == OPT_ALPHA ? "alpha" : "beta", v);
            break;
        }
    }
    /* getopt stopped at the end, at an operand (not ours) or after -- */
    int i = optind;
    if (i < argc && strcmp(argv[i - 1], "--"))
        return usage_error(t, "unknown option '%s'", argv[i]);

    /* after --: name value pairs, or --mca name value */
    while (i < argc) {
        if (!strcmp(argv[i], "--mca"))
            i++;
        if (i + 1 >= argc)
            return usage_error(t, "runtime option '%s' after -- needs a value",
                               i < argc ? argv[i] : "--mca");
        rargv[(*rargc)++] = "--mca";
        rargv[(*rargc)++] = argv[i];
        rargv[(*rargc)++] = argv[i + 1];
        i += 2;
    }
    rargv[*rargc] = NULL;

    if (t->trmm_block > 0 && t->trmm_block < 64)
        return usage_error(t,
                           "option --gpu-trmm-block must be 0 (the whole tile) or at least 64, "
                           "got %d",
                           t->trmm_block);
    if (t->M < 0) /* not given */
        t->M = t->N;
    if (t->K < 0)
        t->K = t->N;
    return 0;
}

int dla_testing_init(dla_testing_t *t, int argc, char **argv, const char *name, unsigned features)
{
    memset(t, 0, sizeof(*t));
    t->name = name;
    t->features = features;
    t->N = 1000;
    t->M = t->K = -1; /* -1: not given (the options accept only >= 0) */
    t->NB = 256;
    t->gpus = -1; /* every GPU of the process's share */
    t->P = t->Q = -1;
    t->dist = (rill_matrix_dist_t)-1; /* not given: chosen once the grid is known */
    t->nruns = 1;
    t->trmm_block = RILL_DLA_GPU_TRMM_BLOCK;
    t->trinv_leaf = RILL_DLA_GPU_TRINV_LEAF;
    t->warmup = -1; /* not given: decided once the GPUs are known */
    t->nrhs = 1;
    t->alpha = 1.0;
    t->beta = 0.5;
    t->seed = 3872;

    size_t len = 0;
    for (int i = 0; i < argc && len < sizeof(t->cmdline) - 1; i++)
        len += (size_t)snprintf(t->cmdline + len, sizeof(t->cmdline) - len, "%s%s", i ? " " : "",
                                argv[i]);

    /* runtime options for rill_init: at most 3 entries for every 2 arguments */
    int rargc = 1;
    char **rargv = calloc((size_t)(2 * argc + 2), sizeof(char *));
    if (!rargv)
        return 1;
    rargv[0] = argv[0];
    int rc = parse_options(t, argc, argv, rargv, &rargc);
    if (rc) {
        free(rargv);
        return rc;
    }

    /* -g: 0 runs on the CPUs only; n > 0 on at most n GPUs; -1 (default) on every GPU of
     * the process's share */
    if (t->gpus >= 0) {
        char buf[32];
        snprintf(buf, sizeof(buf), "%d", t->gpus);
        rill_status_t s = t->gpus == 0 ? rill_param_set("device_cuda_enabled", "false")
                                       : rill_param_set("device_cuda_max_gpus", buf);
        if (s != RILL_SUCCESS)
            return usage_error(t, "-g %d: %s", t->gpus, rill_status_string(s));
    }
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
    /* A factorization takes the skewed distribution (one rank included: its GPUs get the
     * tiles likewise): block-cyclic gives some ranks the longer rows of the triangle and
     * the diagonal tiles to P of them (dpotrf N = 65536 on 2 ranks x 1 H200: 93.2 TFLOP/s
     * cyclic, 95.9 skewed, 95.5 on one rank driving both GPUs; N = 98304 on 4 H100s, one
     * run of the 4-GPU suite (tools/rill_bench four): 2 x 2 184.9 cyclic, 191.1 skewed, 4 x 1 190.4
     * skewed; bench/README.md). gemm's work is even either way. */
    if ((int)t->dist < 0)
        t->dist = features & DLA_TESTING_GEMM ? RILL_MATRIX_CYCLIC : RILL_MATRIX_SKEWED;
    /* in 64 bits: 641 x 6700417 is 2^32 + 1, which is 1 in 32-bit arithmetic */
    if (!t->ref && (int64_t)t->P * t->Q != t->nranks) {
        dla_testing_error(t, 1,
                          "process grid P x Q = %d x %d = %" PRId64 " does not match the %d "
                          "ranks of this run; choose P and Q with P x Q = %d",
                          t->P, t->Q, (int64_t)t->P * t->Q, t->nranks, t->nranks);
        rill_fini(&t->ctx);
        return 1;
    }
    t->cores = rill_context_nworkers(t->ctx);
    int asked = t->gpus;
    t->gpus = rill_context_ngpus(t->ctx);
    if (asked > 0 && t->gpus < asked) {
        dla_testing_error(t, 1,
                          "-g %d: this process runs on %d GPU(s)%s%s (see rill_info --devices; "
                          "-g 0 runs on the CPUs)",
                          asked, t->gpus, rill_context_gpu_status(t->ctx)[0] ? ": " : "",
                          rill_context_gpu_status(t->ctx));
        rill_fini(&t->ctx);
        return 1;
    }

    s = rill_dla_create(t->ctx, &t->dla);
    if (s == RILL_SUCCESS)
        s = rill_dla_set_panel(t->dla, t->panel);
    if (s == RILL_SUCCESS)
        s = rill_dla_set_gpu_panel_blocks(t->dla, t->trmm_block, t->trinv_leaf);
    if (s == RILL_SUCCESS) /* (dgetrf's; the dpotrf and dgemm testers create PTG taskpools) */
        s = rill_dla_set_dsl(t->dla, t->ptg ? RILL_DLA_DSL_PTG : RILL_DLA_DSL_DTD);
    if (s != RILL_SUCCESS) {
        dla_testing_error(t, 1, "cannot create the DLA layer: %s", rill_status_string(s));
        rill_fini(&t->ctx);
        return 1;
    }
    if (!t->ref) { /* (--ref: one LAPACKE/CBLAS call per run, on the CPUs) */
        double g = t->gpus > 0;
        rill_dla_allreduce_max(t->dla, &g, 1);
        t->gpus_any = g > 0;
    }
    /* CUDA loads a library kernel's module at its first call (tens of ms each, the GPU
     * manager held meanwhile): with GPUs one untimed run first. Every rank must run as many
     * taskpools: the same choice on all. */
    if (t->ref)
        t->warmup = 0;
    else if (t->warmup < 0)
        t->warmup = t->gpus_any;
    if (t->gpus_any && t->nranks > 1 &&
        !(t->gpus_all = calloc((size_t)t->nranks, sizeof(*t->gpus_all)))) {
        dla_testing_error(t, 0, "rank %d: out of host memory for the %d ranks' GPU counters",
                          t->rank, t->nranks);
        rill_dla_destroy(&t->dla);
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
        printf("# ranks %d, grid %d x %d (%s), cores per rank %d, GPUs per rank %d, seed %llu\n",
               t->nranks, t->P, t->Q, dist_names[t->dist], t->cores, t->gpus,
               (unsigned long long)t->seed);
        for (int g = 0; g < t->gpus; g++)
            printf("# GPU %d of rank 0: %s\n", g, rill_context_gpu_name(t->ctx, g));
        if (features & DLA_TESTING_GEMM)
            printf("# M %d N %d K %d transA %c transB %c alpha %g beta %g\n", t->M, t->N, t->K,
                   t->transA ? 'T' : 'N', t->transB ? 'T' : 'N', t->alpha, t->beta);
        if (features & DLA_TESTING_NRHS)
            printf("# NRHS %d\n", t->nrhs);
        if ((features & DLA_TESTING_PANEL) && !t->ptg)
            printf("# panel solves: %s%s\n",
                   rill_dla_panel(t->dla) == RILL_DLA_PANEL_INVERSE ? "inverse (dtrtri + dtrmm)"
                                                                    : "trsm",
                   t->panel == RILL_DLA_PANEL_AUTO ? " (auto)" : "");
        if ((features & DLA_TESTING_PANEL) && !t->ptg && t->gpus > 0 &&
            rill_dla_panel(t->dla) == RILL_DLA_PANEL_INVERSE)
            printf("# GPU panel kernels: dtrmm blocks of %s%d columns, dtrtri leaves of %d\n",
                   t->trmm_block ? "" : "(the whole tile) ", t->trmm_block ? t->trmm_block : t->NB,
                   t->trinv_leaf);
        if (t->ref)
            printf("# reference: one LAPACKE/CBLAS call on rank 0 with %d OpenBLAS threads\n",
                   t->cores);
        if (t->warmup)
            printf("# warm-up: %d untimed run(s) first (--warmup)\n", t->warmup);
        if (t->check)
            printf("# check: scaled residual < %.0f passes (NaN or Inf fails)%s\n",
                   RILL_DLA_CHECK_THRESHOLD, t->ref ? "; the reference's result is checked" : "");
        fflush(stdout);
    }
    return 0;
}

/* ------------------------------------------------------------ memory estimate */

/* *acc += a * b * c, or 1 when a product or the sum does not fit in 64 bits. */
static int add_product(uint64_t *acc, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t ab, abc;
    return __builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc) ||
           __builtin_add_overflow(*acc, abc, acc);
}

/* Bytes a rank pays per tile besides its storage, whether the tile is local or not (every
 * rank inserts every task, so every rank holds a descriptor of every tile): the datum,
 * its hash-map entry and the matrix's pointer. An estimate. */
#define DLA_TILE_OVERHEAD 256

/* The first unsigned integer in the file (0: none, or "max"). */
static uint64_t read_u64(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned long long v = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%llu", &v) != 1)
        v = 0;
    fclose(f);
    return v;
}

/* The value of `key N` in a memory.stat file (0 if absent). */
static uint64_t read_stat(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    char name[64];
    unsigned long long v, found = 0;
    if (!f)
        return 0;
    while (fscanf(f, "%63s %llu", name, &v) == 2)
        if (!strcmp(name, key)) {
            found = v;
            break;
        }
    fclose(f);
    return found;
}

/* Room left under one cgroup's limit (limit - usage + reclaimable page cache), if it has
 * a limit: lowers *avail and names the source. */
static void cgroup_room(const char *limit_path, const char *usage_path, const char *stat_path,
                        const char *stat_key, const char *what, uint64_t *avail,
                        const char **source)
{
    uint64_t limit = read_u64(limit_path);
    if (limit == 0 || limit >= (UINT64_C(1) << 60)) /* absent, "max", or v1's "no limit" */
        return;
    uint64_t usage = read_u64(usage_path), cache = read_stat(stat_path, stat_key);
    usage = usage > cache ? usage - cache : 0;
    uint64_t room = limit > usage ? limit - usage : 0;
    if (room < *avail) {
        *avail = room;
        *source = what;
    }
}

/* Memory available to this process: MemAvailable, lowered by a cgroup v2 or v1 limit.
 * UINT64_MAX when nothing could be read. */
static uint64_t memory_available(const char **source)
{
    uint64_t avail = UINT64_MAX;
    *source = "unknown";
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kb;
        while (fgets(line, sizeof(line), f))
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
                avail = (uint64_t)kb * 1024;
                *source = "MemAvailable in /proc/meminfo";
                break;
            }
        fclose(f);
    }
    /* this process's cgroups (v2: "0::/path", v1 memory: "N:memory:/path"), then the roots
     * the container shows */
    char v2[600] = "", v1[600] = "";
    f = fopen("/proc/self/cgroup", "r");
    if (f) {
        char line[600];
        while (fgets(line, sizeof(line), f)) {
            line[strcspn(line, "\n")] = '\0';
            char *p;
            if (!strncmp(line, "0::", 3))
                snprintf(v2, sizeof(v2), "%s", line + 3);
            else if ((p = strstr(line, ":memory:")))
                snprintf(v1, sizeof(v1), "%s", p + 8);
        }
        fclose(f);
    }
    const char *v2dirs[] = { v2, "" }, *v1dirs[] = { v1, "" };
    char a[1200], b[1200], c[1200];
    for (int k = 0; k < 2; k++) {
        snprintf(a, sizeof(a), "/sys/fs/cgroup%s/memory.max", v2dirs[k]);
        snprintf(b, sizeof(b), "/sys/fs/cgroup%s/memory.current", v2dirs[k]);
        snprintf(c, sizeof(c), "/sys/fs/cgroup%s/memory.stat", v2dirs[k]);
        cgroup_room(a, b, c, "inactive_file", "the cgroup v2 limit (memory.max - memory.current)",
                    &avail, source);
        snprintf(a, sizeof(a), "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", v1dirs[k]);
        snprintf(b, sizeof(b), "/sys/fs/cgroup/memory%s/memory.usage_in_bytes", v1dirs[k]);
        snprintf(c, sizeof(c), "/sys/fs/cgroup/memory%s/memory.stat", v1dirs[k]);
        cgroup_room(a, b, c, "total_inactive_file",
                    "the cgroup v1 limit (memory.limit_in_bytes - memory.usage_in_bytes)", &avail,
                    source);
    }
    return avail;
}

static const char *human(uint64_t bytes, char *buf, size_t len)
{
    const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
    return buf;
}

int dla_testing_memory(dla_testing_t *t, const dla_testing_dims_t *tiled, int ntiled,
                       const dla_testing_dims_t *dense, int ndense)
{
    /* one rank's tiles: rank 0 (grid position (0, 0)) holds the most, ceil(mt / P) x
     * ceil(nt / Q); the runtime stores every tile at NB x NB, ragged ones included */
    const uint64_t nb = (uint64_t)t->NB;
    uint64_t tiles = 0, dense_bytes = 0;
    int overflow = 0;
    for (int k = 0; k < ntiled; k++) {
        uint64_t mt = ((uint64_t)tiled[k].m + nb - 1) / nb,
                 nt = ((uint64_t)tiled[k].n + nb - 1) / nb;
        uint64_t lmt = (mt + (uint64_t)t->P - 1) / (uint64_t)t->P;
        uint64_t lnt = (nt + (uint64_t)t->Q - 1) / (uint64_t)t->Q;
        overflow |= add_product(&tiles, lmt * lnt, nb * nb, sizeof(double));
        overflow |= add_product(&tiles, mt, nt, DLA_TILE_OVERHEAD);
    }
    for (int k = 0; k < ndense; k++)
        overflow |=
            add_product(&dense_bytes, (uint64_t)dense[k].m, (uint64_t)dense[k].n, sizeof(double));
    const int nlocal = rill_context_local_nranks(t->ctx);
    uint64_t need = 0;
    overflow |= add_product(&need, tiles, (uint64_t)nlocal, 1);
    if (t->rank == 0) /* the reference and the check's buffers are on rank 0 */
        overflow |= __builtin_add_overflow(need, dense_bytes, &need);

    const char *source;
    uint64_t avail = memory_available(&source);
    int short_of = overflow || (!t->no_mem_check && need > avail);

    /* agree: every rank stops if one does; rank 0 speaks when it is one of them */
    double v[2] = { t->rank == 0 && short_of, short_of };
    if (t->nranks > 1 && rill_dla_allreduce_max(t->dla, v, 2) != RILL_SUCCESS)
        v[1] = 1.0;
    if (v[1] == 0.0)
        return 0;
    if (short_of && (t->rank == 0 || v[0] == 0.0)) {
        char who[32] = "", b1[32], b2[32], b3[32], b4[32];
        if (t->nranks > 1)
            snprintf(who, sizeof(who), "rank %d: ", t->rank);
        char sizes[96];
        if (t->features & DLA_TESTING_GEMM)
            snprintf(sizes, sizeof(sizes), "M %d, N %d, K %d", t->M, t->N, t->K);
        else
            snprintf(sizes, sizeof(sizes), "N %d", t->N);
        if (overflow)
            dla_testing_error(t, 0,
                              "%sthe memory this run needs does not fit in 64-bit byte counts "
                              "(size_t overflow): %s, NB %d; choose smaller sizes",
                              who, sizes, t->NB);
        else
            dla_testing_error(t, 0,
                              "%snot enough memory: this run needs about %s on this node (%d "
                              "rank(s) x %s of tiles at NB x NB = %d x %d%s%s%s) but %s are "
                              "available (%s); use smaller sizes or more nodes, or "
                              "--no-mem-check to try anyway",
                              who, human(need, b1, sizeof(b1)), nlocal,
                              human(tiles, b2, sizeof(b2)), t->NB, t->NB,
                              t->rank == 0 && dense_bytes ? ", plus " : "",
                              t->rank == 0 && dense_bytes ? human(dense_bytes, b3, sizeof(b3)) : "",
                              t->rank == 0 && dense_bytes
                                  ? " of dense buffers for the reference and the check on rank 0"
                                  : "",
                              human(avail, b4, sizeof(b4)), source);
    }
    t->failed = 1;
    return 1;
}

/* ------------------------------------------------------------ result rows */

/* One GPU's line of a result row: its exec streams' busy time and the bytes it moved
 * between c0 and c (rank: -1 in a run of one rank). */
static void print_gpu(const dla_testing_t *t, int rank, int g, const rill_gpu_counters_t *c,
                      const rill_gpu_counters_t *c0, double time_s)
{
    char who[32] = "";
    if (rank >= 0)
        snprintf(who, sizeof(who), "rank %d, ", rank);
    if (c->timed)
        printf("#   %sGPU %d: exec streams busy %.1f%% of the run, ", who, g,
               time_s > 0 ? 100.0 * (c->busy_s - c0->busy_s) / time_s : 0.0);
    else /* (device_cuda_timing 1 measures it) */
        printf("#   %sGPU %d: exec streams' busy time not measured, ", who, g);
    printf("%llu tasks; H2D %.1f MB, D2H %.1f MB, D2D %.1f MB; %llu evictions",
           c->tasks - c0->tasks, (double)(c->h2d_bytes - c0->h2d_bytes) / 1e6,
           (double)(c->d2h_bytes - c0->d2h_bytes) / 1e6,
           (double)(c->d2d_bytes - c0->d2d_bytes) / 1e6, c->evictions - c0->evictions);
    if (t->nranks > 1) /* tiles from / to other ranks' GPUs (GPU-direct) */
        printf("; from ranks' GPUs %.1f MB (%llu landings announced ahead, the landing stream "
               "waited %.1f ms%s), to them %.1f MB (%llu of %llu puts behind their producer "
               "on the GPU)",
               (double)(c->remote_in_bytes - c0->remote_in_bytes) / 1e6,
               c->remote_early - c0->remote_early, 1e3 * (c->remote_wait_s - c0->remote_wait_s),
               c->timed ? "" : " (untimed)",
               (double)(c->remote_out_bytes - c0->remote_out_bytes) / 1e6,
               c->remote_behind - c0->remote_behind, c->remote_out - c0->remote_out);
    printf("\n");
}

int dla_testing_row(dla_testing_t *t, double time_s, double gflops, rill_status_t cs, double resid)
{
    if (t->check && cs != RILL_SUCCESS && cs != RILL_ERR_NUMERIC) {
        dla_testing_error(t, 1, "the check failed to run: %s", rill_status_string(cs));
        return 1;
    }
    char why[200] = "";
    if (t->check) {
        if (cs == RILL_ERR_NUMERIC)
            snprintf(why, sizeof(why), "the result contains NaN or Inf");
        else if (!isfinite(resid))
            snprintf(why, sizeof(why),
                     "the scaled residual is %g: the inputs or the reference contain NaN or Inf",
                     resid);
        else if (resid < 0.0)
            snprintf(why, sizeof(why), "the scaled residual %g is negative (a norm failed)", resid);
        else if (!(resid < RILL_DLA_CHECK_THRESHOLD))
            snprintf(why, sizeof(why), "the scaled residual %.3e is not below %.0f", resid,
                     RILL_DLA_CHECK_THRESHOLD);
        if (why[0])
            t->failed = 1;
    }
    /* every rank's GPUs over the run, to rank 0 (a collective: every rank makes the same
     * rows, and gpus_any is the same on all) */
    const dla_testing_gpus_t *gpus = NULL;
    int ngpus_ranks = 0; /* the ranks in gpus */
    if (!t->ref && t->gpus_any) {
        dla_testing_gpus_t *mine = &t->gpus_run;
        for (int g = 0; g < mine->n; g++)
            mine->read[g] = rill_context_gpu_counters(t->ctx, g, &mine->end[g]) == RILL_SUCCESS;
        gpus = mine;
        ngpus_ranks = 1;
        if (t->nranks > 1) {
            rill_status_t s = rill_context_allgather(t->ctx, mine, sizeof(*mine), t->gpus_all);
            if (s == RILL_SUCCESS) {
                gpus = t->gpus_all;
                ngpus_ranks = t->nranks;
            } else if (t->rank == 0) /* rank 0's own GPUs then */
                fprintf(stderr, "%s: warning: cannot gather the ranks' GPU counters: %s\n", t->name,
                        rill_status_string(s));
        }
    }
    if (t->rank == 0) {
        if (!t->titled) { /* the column titles come with the first row (not before an error) */
            if (t->features & DLA_TESTING_GEMM)
                printf("%6s %6s %6s ", "M", "N", "K");
            else
                printf("%6s ", "N");
            printf("%5s %3s %3s %5s %4s %10s %9s %10s %6s\n", "NB", "P", "Q", "cores", "gpus",
                   "time_s", "gflops", "residual", "status");
            t->titled = 1;
        }
        char nb[16], r[32];
        if (t->ref)
            snprintf(nb, sizeof(nb), "-");
        else
            snprintf(nb, sizeof(nb), "%d", t->NB);
        if (t->check)
            snprintf(r, sizeof(r), "%.3e", resid);
        else
            snprintf(r, sizeof(r), "-");
        if (t->features & DLA_TESTING_GEMM)
            printf("%6d %6d %6d ", t->M, t->N, t->K);
        else
            printf("%6d ", t->N);
        printf("%5s %3d %3d %5d %4d %10.4f %9.2f %10s %6s\n", nb, t->ref ? 1 : t->P,
               t->ref ? 1 : t->Q, t->cores, t->gpus, time_s, gflops, r,
               t->check ? (why[0] ? "FAIL" : "PASS") : "-");
        /* the GPUs during the run: streams' busy time and bytes moved */
        for (int k = 0; k < ngpus_ranks; k++)
            for (int g = 0; g < gpus[k].n; g++)
                if (gpus[k].read[g])
                    print_gpu(t, t->nranks > 1 ? k : -1, g, &gpus[k].end[g], &gpus[k].start[g],
                              time_s);
        fflush(stdout);
    }
    if (why[0])
        dla_testing_error(t, 1, "check failed: %s", why);
    return 0;
}

rill_matrix_t *dla_testing_matrix(dla_testing_t *t, const char *what, int m, int n)
{
    rill_matrix_t *A = NULL;
    rill_status_t s = rill_matrix_create_dist(t->ctx, m, n, t->NB, t->NB, t->P, t->Q, t->dist, &A);
    if (s == RILL_SUCCESS) /* several GPUs: each tile's writers on one of them */
        s = rill_matrix_advise_gpus(A);
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
    free(t->gpus_all);
    t->gpus_all = NULL;
    if (t->dla)
        rill_dla_destroy(&t->dla);
    if (t->ctx) { /* a lost trace or task graph fails the run too */
        rill_status_t s = rill_fini(&t->ctx);
        if (s != RILL_SUCCESS) {
            fprintf(stderr, "%s: error: rill_fini failed: %s\n", t->name ? t->name : "testing",
                    rill_status_string(s));
            t->failed = 1;
        }
    }
    return t->failed ? 1 : 0;
}

/* ------------------------------------------------------------ --kind matrices */

/* The column --kind singular zeroes. */
static int zero_col(const dla_testing_t *t)
{
    return t->N / 2;
}

/* (testing_common.h) */
void dla_testing_kind_dense(const dla_testing_t *t, double *a)
{
    const int n = t->N, ld = n > 0 ? n : 1;
    if (t->kind == DLA_KIND_DD)
        rill_dla_dplgsy_dense(n, a, ld, n, t->seed);
    else
        rill_dla_dplrnt_dense(n, n, a, ld, t->seed);
    if (t->kind == DLA_KIND_PIVOT && n > 0)
        a[0] = 0.0;
    if (t->kind == DLA_KIND_SINGULAR && n > 0)
        memset(a + (size_t)zero_col(t) * ld, 0, (size_t)n * sizeof(double));
}

/* --kind singular on the tiles: column c of tile column c / nb zeroed where it lives. */
typedef struct zero_args {
    int col, rows, ld;
} zero_args_t;

static rill_status_t body_zero_col(rill_task_t *task)
{
    const zero_args_t *z = rill_dtd_arg(task, 0);
    double *tile = rill_dtd_arg(task, 1);
    memset(tile + (size_t)z->col * z->ld, 0, (size_t)z->rows * sizeof(double));
    return RILL_SUCCESS;
}

rill_status_t dla_testing_kind_tiled(dla_testing_t *t, rill_matrix_t *A)
{
    rill_status_t s = t->kind == DLA_KIND_DD ? rill_dla_dplgsy(t->dla, A, t->N, t->seed)
                                             : rill_dla_dplrnt(t->dla, A, t->seed);
    if (s == RILL_SUCCESS && t->kind == DLA_KIND_PIVOT && t->N > 0)
        s = rill_dla_set_diag(t->dla, A, 0, 0.0);
    if (s != RILL_SUCCESS || t->kind != DLA_KIND_SINGULAR || t->N == 0)
        return s;
    rill_dtd_class_t *cls = NULL;
    rill_taskpool_t *tp = NULL;
    if ((s = rill_dtd_class_create(t->ctx, "zero_column", body_zero_col, &cls)) != RILL_SUCCESS ||
        (s = rill_dtd_taskpool_create(t->ctx, &tp)) != RILL_SUCCESS) {
        if (cls)
            rill_dtd_class_destroy(&cls);
        return s;
    }
    const int c = zero_col(t), nb = rill_matrix_nb(A), j = c / nb;
    for (int i = 0; i < rill_matrix_mt(A) && s == RILL_SUCCESS; i++) {
        zero_args_t z = { c - j * nb, rill_matrix_tile_rows(A, i), rill_matrix_tile_rows(A, i) };
        s = rill_dtd_insert_task(tp, cls, 0, RILL_DTD_VALUE, sizeof(z), &z,
                                 RILL_DTD_INOUT | RILL_DTD_AFFINITY, rill_matrix_tile(A, i, j),
                                 RILL_DTD_ARG_END);
    }
    rill_status_t w = dla_wait(&tp);
    rill_dtd_class_destroy(&cls);
    return s != RILL_SUCCESS ? s : w;
}
