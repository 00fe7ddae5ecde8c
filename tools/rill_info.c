/* rill_info: print Rill's parameters (value, where it came from, help), its build
 * options and the topology it would use. Uses only the public API. */
#include <dirent.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rill/rill.h"

#define HELP_INDENT 6
#define HELP_WIDTH  92

static void usage(FILE *out, const char *prog)
{
    fprintf(out,
            "Usage: %s [options]\n"
            "Print Rill's parameters with their current value, where that value came from\n"
            "and their help; by default the parameters of level 'user'.\n"
            "\n"
            "Options:\n"
            "  --param PATTERN    only parameters whose name contains PATTERN (or matches it,\n"
            "                     if it has * ? or [), of every level; may be repeated\n"
            "  --all              parameters of every level (also --all-levels)\n"
            "  --build            version and build options\n"
            "  --topology         the machine and the binding each worker would get\n"
            "  --devices          the devices: the CPU and the CUDA GPUs, with their nearest "
            "cores\n"
            "  --peers            start Rill (under mpirun: every rank) and print, for each\n"
            "                     other rank, its node, the wire its bytes take (MPI on a\n"
            "                     node, comm_net between nodes) and how GPU tiles reach it:\n"
            "                     GPU direct (CUDA IPC, checked both ways; between nodes\n"
            "                     over the net wire) or host-staged, and whether GPU port\n"
            "                     channels reach its GPUs (CUDA IPC, the net wire, none),\n"
            "                     each with why (comm_ranks_per_node, comm_gpu_direct)\n"
            "  --parsable         the parameters (every level, or those of --param) one per\n"
            "                     line, for scripts: name, type, value, source, default,\n"
            "                     allowed, level, separated by tabs\n"
            "  --mca NAME VALUE   set a parameter, as for any Rill program\n"
            "  --help             this text\n"
            "\n"
            "Values come from, weakest first: default, files ($HOME/.rill/mca-params.conf,\n"
            "then RILL_MCA_param_files), environment (RILL_MCA_<name>), --mca, the program.\n",
            prog);
}

static bool name_matches(const char *name, char **patterns, int npatterns)
{
    if (npatterns == 0)
        return true;
    for (int i = 0; i < npatterns; i++) {
        const char *pat = patterns[i];
        if (strpbrk(pat, "*?[") ? fnmatch(pat, name, 0) == 0 : strstr(name, pat) != NULL)
            return true;
    }
    return false;
}

/* Start Rill (every rank of the run) and print how this rank reaches the others' GPUs. */
static rill_status_t print_peers(int *argc, char ***argv)
{
    rill_context_t *ctx;
    rill_status_t s = rill_init(argc, argv, &ctx);
    if (s != RILL_SUCCESS) {
        fprintf(stderr, "rill_info --peers: rill_init failed: %s\n", rill_status_string(s));
        return s;
    }
    int me = rill_context_rank(ctx), n = rill_context_nranks(ctx);
    char line[8192];
    size_t o = (size_t)snprintf(line, sizeof(line), "rank %d (node %d, %d GPU(s)):", me,
                                rill_context_node(ctx, me), rill_context_ngpus(ctx));
    if (n == 1)
        o += (size_t)snprintf(line + o, sizeof(line) - o, " the only rank (run under mpirun)");
    for (int r = 0; r < n && o < sizeof(line); r++) {
        if (r == me)
            continue;
        const char *why = "", *wire_why = "", *pc_why = "";
        const char *wire = rill_context_wire(ctx, r, &wire_why);
        int direct = rill_context_gpu_direct(ctx, r, &why);
        int pc = rill_port_channel_reach(ctx, r, &pc_why);
        o += (size_t)snprintf(
            line + o, sizeof(line) - o,
            "%s rank %d: node %d, bytes over %s (%s), GPU tiles %s%s%s, GPU port channels %s%s%s",
            o > 0 && line[o - 1] != ':' ? ";" : "", r, rill_context_node(ctx, r), wire ? wire : "?",
            wire_why,
            direct == 3   ? "host-staged pipeline, GPU to GPU in chunks ("
            : direct == 2 ? "GPU direct (over the net wire)"
            : direct      ? "GPU direct (CUDA IPC, checked both ways)"
                          : "host-staged (",
            direct == 1 || direct == 2 ? "" : why, direct == 1 || direct == 2 ? "" : ")",
            pc == 1   ? "over CUDA IPC"
            : pc == 2 ? "over the net wire"
                      : "none (",
            pc ? "" : pc_why, pc ? "" : ")");
    }
    printf("%s\n", line); /* one line per rank: the ranks' lines do not interleave */
    fflush(stdout);
    return rill_fini(&ctx);
}

/* Print text word-wrapped, every line indented by `indent` spaces. */
static void print_wrapped(const char *text, int indent)
{
    const char *s = text;
    while (*s) {
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        /* take as many words as fit in the width (at least one) */
        int avail = HELP_WIDTH - indent, len = 0, last_break = 0;
        while (s[len] && s[len] != '\n' && (len < avail || last_break == 0)) {
            if (s[len] == ' ')
                last_break = len;
            len++;
        }
        if (s[len] && s[len] != '\n' && s[len] != ' ' && last_break > 0)
            len = last_break;
        printf("%*s%.*s\n", indent, "", len, s);
        s += len;
        if (*s == '\n')
            s++;
    }
}

static void print_param(const rill_param_info_t *info, bool show_level)
{
    bool quote = info->type == RILL_PARAM_STRING;
    printf("  %s = %s%s%s (%s", info->name, quote ? "\"" : "", info->value, quote ? "\"" : "",
           rill_param_source_string(info->source));
    if (info->source_detail)
        printf(": %s", info->source_detail);
    printf(")");
    if (show_level)
        printf(" [%s]", rill_param_level_string(info->level));
    printf("\n");
    if (info->help && *info->help)
        print_wrapped(info->help, HELP_INDENT);
    printf("%*sallowed: %s; default: %s%s%s%s\n", HELP_INDENT, "", info->allowed, quote ? "\"" : "",
           info->def, quote ? "\"" : "",
           info->same_on_all_ranks ? "; the same on every rank (rill_init checks)" : "");
}

/* One field of a --parsable line: a tab or a line break inside it (a string's value) prints
 * as a space, so the line keeps its columns. */
static void print_field(const char *text, bool last)
{
    for (const char *c = text; *c; c++)
        putchar(*c == '\t' || *c == '\n' || *c == '\r' ? ' ' : *c);
    putchar(last ? '\n' : '\t');
}

/* One line per parameter: name, type, value, source, default, allowed, level. */
static void print_param_parsable(const rill_param_info_t *info)
{
    print_field(info->name, false);
    print_field(rill_param_type_string(info->type), false);
    print_field(info->value, false);
    print_field(rill_param_source_string(info->source), false);
    print_field(info->def, false);
    print_field(info->allowed, false);
    print_field(rill_param_level_string(info->level), true);
}

/* The parameters to show: USER only unless all_levels, patterns or parsable. Returns how
 * many. */
static size_t print_params(bool all_levels, bool parsable, char **patterns, int npatterns)
{
    size_t shown = 0, n = rill_params_count();
    bool every_level = all_levels || parsable || npatterns > 0;
    if (!parsable)
        printf("Parameters (%s):\n",
               every_level ? "every level" : "level user; --all for every level");
    for (size_t i = 0; i < n; i++) {
        rill_param_info_t info;
        if (rill_params_info(i, &info) != RILL_SUCCESS)
            continue;
        if (!every_level && info.level != RILL_PARAM_LEVEL_USER)
            continue;
        if (!name_matches(info.name, patterns, npatterns))
            continue;
        if (parsable)
            print_param_parsable(&info);
        else
            print_param(&info, every_level);
        shown++;
    }
    return shown;
}

static const char *yes_no(int have)
{
    return have ? "yes" : "no";
}

#define NVIDIA_GPUS_DIR "/proc/driver/nvidia/gpus"

/* GPUs the NVIDIA driver lists (one folder each), or -1 when no driver is loaded. */
static int nvidia_gpu_count(void)
{
    DIR *d = opendir(NVIDIA_GPUS_DIR);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* What was found at configure time is not what this build can use: say both. The CUDA
 * device module does discovery only so far (device/cuda.c): no task runs on a GPU whatever
 * the toolkit or the machine; update this as the module grows. */
static void print_build(void)
{
    printf("Build:\n");
    printf("  version:      %s\n", RILL_VERSION_STRING);
    printf("  git hash:     %s\n", RILL_GIT_HASH);
    printf("  build type:   %s\n", RILL_BUILD_TYPE[0] ? RILL_BUILD_TYPE : "(none)");
    printf("  compiler:     %s\n", RILL_C_COMPILER);
    printf("  sanitizer:    %s\n", RILL_SANITIZER[0] ? RILL_SANITIZER : "none");
    printf("  hwloc:        %s\n", RILL_HWLOC_VERSION);
    printf("  MPI:          %s", yes_no(RILL_HAVE_MPI));
    if (RILL_HAVE_MPI && RILL_MPI_VERSION[0])
        printf(" (MPI %s)", RILL_MPI_VERSION);
    printf("\n  LAPACKE:      %s\n", yes_no(RILL_HAVE_LAPACKE));
    if (RILL_HAVE_CUDA)
        printf("  CUDA toolkit: found at configure (%s): GPU managers, CUDA task bodies, "
               "cuBLAS/cuSOLVER\n",
               RILL_CUDA_VERSION[0] ? RILL_CUDA_VERSION : "version unknown");
    else
        printf("  CUDA toolkit: not found at configure (or RILL_WITH_CUDA=OFF)\n");
    printf("  GPU support:  %s\n", RILL_HAVE_CUDA
                                       ? "tasks with CUDA bodies run on the GPUs (one manager "
                                         "thread per GPU; see --devices)"
                                       : "not built (no CUDA toolkit at configure)");
    int gpus = nvidia_gpu_count();
    if (gpus < 0)
        printf("  GPU devices:  no NVIDIA driver loaded\n");
    else
        printf("  GPU devices:  the NVIDIA driver lists %d GPU(s) in " NVIDIA_GPUS_DIR "\n", gpus);
    printf("  UCX:          %s\n", RILL_HAVE_UCX ? "UCX " RILL_UCX_VERSION
                                                   ": the wire between nodes (comm_net)"
                                                 : "not built (no UCX at configure): MPI "
                                                   "carries everything between nodes");
    printf("  ibverbs:      %s\n", RILL_HAVE_IBVERBS
                                       ? "found at configure; not used directly (UCX reaches "
                                         "InfiniBand through it)"
                                       : "not found at configure (not used directly)");
}

int main(int argc, char **argv)
{
    const char *prog = argc > 0 && argv[0] ? argv[0] : "rill_info";
    /* the command line as given, for rill_init (--peers): it reads --mca again */
    int argc0 = argc;
    char **argv0 = malloc(sizeof(char *) * (size_t)(argc + 1));
    if (!argv0) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return 1;
    }
    memcpy(argv0, argv, sizeof(char *) * (size_t)(argc + 1));
    /* first, so that --mca is taken out of argv before the options are read */
    rill_status_t reg_status = rill_info_register_params(&argc, &argv);

    bool all_levels = false, build = false, topology = false, devices = false, peers = false,
         parsable = false;
    char **patterns = calloc((size_t)(argc > 0 ? argc : 1), sizeof(*patterns));
    int npatterns = 0;
    if (!patterns) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return 1;
    }
    static const struct option options[] = {
        { "help", no_argument, NULL, 'h' },        { "all", no_argument, NULL, 'a' },
        { "all-levels", no_argument, NULL, 'a' },  { "build", no_argument, NULL, 'b' },
        { "topology", no_argument, NULL, 't' },    { "devices", no_argument, NULL, 'd' },
        { "peers", no_argument, NULL, 'p' },       { "parsable", no_argument, NULL, 'P' },
        { "param", required_argument, NULL, 'm' }, { NULL, 0, NULL, 0 },
    };
    static const char allowed[] = "--param PATTERN, --all, --all-levels, --build, --topology, "
                                  "--devices, --peers, --parsable, --mca NAME VALUE, --help";
    opterr = 0; /* the messages below say what is allowed */
    int bad = 0;
    for (int c; !bad && (c = getopt_long(argc, argv, "+h", options, NULL)) != -1;) {
        switch (c) {
        case 'h':
            usage(stdout, prog);
            free(patterns);
            free(argv0);
            return 0;
        case 'a':
            all_levels = true;
            break;
        case 'b':
            build = true;
            break;
        case 't':
            topology = true;
            break;
        case 'd':
            devices = true;
            break;
        case 'p':
            peers = true;
            break;
        case 'P':
            parsable = true;
            break;
        case 'm':
            patterns[npatterns++] = optarg;
            break;
        default: /* '?': an unknown option, or --param without its PATTERN */
            if (optopt == 'm')
                fprintf(stderr, "%s: --param needs a PATTERN\n", prog);
            else
                fprintf(stderr, "%s: unknown option '%s'; allowed: %s\n", prog, argv[optind - 1],
                        allowed);
            bad = 1;
        }
    }
    if (!bad && optind < argc) {
        fprintf(stderr, "%s: unknown option '%s'; allowed: %s\n", prog, argv[optind], allowed);
        bad = 1;
    }
    if (bad) {
        free(patterns);
        free(argv0);
        return 2;
    }

    int rc = reg_status == RILL_SUCCESS ? 0 : 1;
    if (reg_status != RILL_SUCCESS)
        fprintf(stderr, "%s: loading the parameters: %s (see above)\n", prog,
                rill_status_string(reg_status));
    rill_params_warn_unknown();

    if (!parsable) /* (its output is the parameters' lines alone) */
        printf("Rill %s\n", rill_version_string());
    bool params =
        (!build && !topology && !devices && !peers) || all_levels || parsable || npatterns > 0;
    if (build)
        print_build();
    if (params) {
        size_t shown = print_params(all_levels, parsable, patterns, npatterns);
        if (shown == 0 && npatterns > 0) {
            fprintf(stderr, "%s: no parameter matches", prog);
            for (int i = 0; i < npatterns; i++)
                fprintf(stderr, " '%s'", patterns[i]);
            fprintf(stderr, "\n");
            rc = 1;
        }
    }
    if (topology) {
        fflush(stdout);
        rill_status_t s = rill_info_print_topology(stdout);
        if (s != RILL_SUCCESS) {
            fprintf(stderr, "%s: topology: %s\n", prog, rill_status_string(s));
            rc = 1;
        }
    }
    if (devices) {
        fflush(stdout);
        rill_info_print_devices(stdout);
    }
    if (peers) {
        fflush(stdout);
        if (print_peers(&argc0, &argv0) != RILL_SUCCESS)
            rc = 1;
    }
    free(patterns);
    free(argv0);
    return rc;
}
