/* Remote dependencies through the runtime, next to raw MPI in the same run (2 ranks):
 * (a) activation latency: a task on rank 0 releases one on rank 1, which releases one
 *     back (a DTD chain of INOUT tasks on an 8-byte tile alternating between ranks);
 * (b) tile bandwidth: the same chain with tiles of 1 KiB .. 64 MiB, against an MPI
 *     send/recv ping-pong of the same sizes run before Rill starts.
 * Run: mpirun -np 2 bench_comm [--max-mib 64] [--csv FILE] (the table as CSV too, as
 * tools/rill_bench comm reads it) */
#include <errno.h>
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "args.h"
#include "rill/rill.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int hops_for(size_t bytes)
{
    return bytes <= 65536 ? 2000 : bytes <= (4u << 20) ? 200 : 20;
}

/* one-way seconds per message of a blocking ping-pong */
static double mpi_pingpong(size_t bytes, int rank)
{
    char *buf = malloc(bytes ? bytes : 1);
    memset(buf, 1, bytes);
    int iters = hops_for(bytes) / 2;
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now_s();
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        double dt = (now_s() - t0) / (2.0 * iters);
        best = dt < best ? dt : best;
    }
    free(buf);
    return best;
}

static rill_status_t hop_body(rill_task_t *task)
{
    double *anchor, *ball;
    rill_dtd_unpack_args(task, &anchor, &ball);
    ball[0] += 1; /* touch the tile: the next hop sees the update */
    return RILL_SUCCESS;
}

static int rank_is_key(uint64_t key, void *arg)
{
    (void)arg;
    return (int)(key % 2);
}

/* one-way seconds per hop of a task chain alternating between ranks 0 and 1 */
static double rill_chain(rill_context_t *ctx, rill_dtd_class_t *cls, size_t bytes)
{
    rill_collection_t *anchors, *balls;
    rill_collection_create(ctx, sizeof(double), rank_is_key, NULL, &anchors);
    rill_collection_create(ctx, bytes, rank_is_key, NULL, &balls);
    rill_data_t *ball = rill_collection_data_of(balls, 0);
    rill_data_t *anchor[2] = { rill_collection_data_of(anchors, 0),
                               rill_collection_data_of(anchors, 1) };
    int hops = hops_for(bytes);
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        rill_taskpool_t *tp;
        rill_dtd_taskpool_create(ctx, &tp);
        double t0 = now_s();
        for (int h = 0; h < hops; h++)
            rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INOUT | RILL_DTD_AFFINITY, anchor[h % 2],
                                 RILL_DTD_INOUT, ball, RILL_DTD_ARG_END);
        if (rill_taskpool_wait(tp) != RILL_SUCCESS) {
            fprintf(stderr, "bench_comm: the chain failed\n");
            exit(1);
        }
        double dt = (now_s() - t0) / hops;
        rill_taskpool_destroy(&tp);
        best = dt < best ? dt : best;
    }
    rill_collection_destroy(&anchors);
    rill_collection_destroy(&balls);
    return best;
}

/* The largest tile: MPI counts are int, and two ranks hold one each. */
#define MAX_MIB 1024

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -np 2 bench_comm [--max-mib M] [--csv FILE] [--mca name value]...\n"
            "  --max-mib M       largest tile in MiB, 0..%d (default 64; 0: the 8-byte tile "
            "only)\n"
            "  --csv FILE        also write the table to FILE as CSV, on rank 0 (for "
            "tools/rill_bench)\n"
            "  --mca name value  a runtime parameter, for rill_init\n"
            "  -h, --help        this text\n",
            MAX_MIB);
}

/* The options: 0 to go on, -1 after --help, 2 for a bad one (printed on rank 0). --mca
 * pairs stay in argv for rill_init. Every rank parses the same argv, so they agree. */
static int parse_options(int argc, char **argv, int rank, size_t *max_bytes, const char **csv_path)
{
    enum { OPT_MAX_MIB = 256, OPT_CSV, OPT_MCA };
    static const struct option longs[] = {
        { "help", no_argument, NULL, 'h' },
        { "max-mib", required_argument, NULL, OPT_MAX_MIB },
        { "csv", required_argument, NULL, OPT_CSV },
        { "mca", required_argument, NULL, OPT_MCA },
        { NULL, 0, NULL, 0 },
    };
    opterr = 0; /* (the messages are ours) */
    for (int c; (c = getopt_long(argc, argv, "+:h", longs, NULL)) != -1;) {
        const char *v = c == ':' ? NULL : optarg;
        long mib;
        switch (c == ':' ? optopt : c) {
        case 'h':
            if (rank == 0)
                usage(stdout);
            return -1;
        case OPT_MCA: /* (the pair stays in argv for rill_init) */
            if (c == ':' || optind >= argc) {
                if (rank == 0)
                    fprintf(stderr, "bench_comm: error: option --mca needs a name and a value: "
                                    "--mca name value (see --help)\n");
                return 2;
            }
            optind++;
            break;
        case OPT_MAX_MIB:
            if (rill_args_long(v, 0, MAX_MIB, &mib)) {
                if (rank == 0)
                    fprintf(stderr,
                            "bench_comm: error: option --max-mib must be an integer in [0, %d], "
                            "got %s%s%s (see --help)\n",
                            MAX_MIB, v ? "'" : "nothing", v ? v : "", v ? "'" : "");
                return 2;
            }
            *max_bytes = (size_t)mib << 20;
            break;
        case OPT_CSV:
            if (!v || !*v || *v == '-') { /* "--csv --max-mib 4" forgot the name */
                if (rank == 0)
                    fprintf(stderr,
                            "bench_comm: error: option --csv needs a file name, got %s%s%s "
                            "(see --help)\n",
                            v ? "'" : "nothing", v ? v : "", v ? "'" : "");
                return 2;
            }
            *csv_path = v;
            break;
        default: /* '?': unknown (a short one by its letter) */
            if (rank == 0 && optopt > 0 && optopt < 256)
                fprintf(stderr, "bench_comm: error: unknown option '-%c' (see --help)\n", optopt);
            else if (rank == 0)
                fprintf(stderr, "bench_comm: error: unknown option '%s' (see --help)\n",
                        argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) { /* an operand: none is taken */
        if (rank == 0)
            fprintf(stderr, "bench_comm: error: unknown option '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t max_bytes = 64u << 20;
    const char *csv_path = NULL;
    int rc = parse_options(argc, argv, rank, &max_bytes, &csv_path);
    if (rc) {
        MPI_Finalize();
        return rc < 0 ? 0 : rc;
    }
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "bench_comm: run with 2 ranks (mpirun -np 2), not %d\n", size);
        MPI_Finalize();
        return 2;
    }
    /* rank 0 writes the CSV: open it before measuring, so a bad path is refused at once
     * (by every rank) */
    FILE *csv = NULL;
    int csv_ok = 1;
    if (csv_path && rank == 0 && !(csv = fopen(csv_path, "w"))) {
        fprintf(stderr, "bench_comm: error: option --csv: cannot write '%s': %s\n", csv_path,
                strerror(errno));
        csv_ok = 0;
    }
    MPI_Bcast(&csv_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!csv_ok) {
        MPI_Finalize();
        return 2;
    }

    /* raw MPI first, while this thread may still call MPI */
    enum { NS = 17 };
    size_t sizes[NS];
    double mpi_t[NS], rill_t[NS];
    int ns = 0;
    sizes[ns++] = 8;
    for (size_t b = 1024; b <= max_bytes && ns < NS; b *= 4)
        sizes[ns++] = b;
    for (int i = 0; i < ns; i++)
        mpi_t[i] = mpi_pingpong(sizes[i], rank);

    rill_context_t *ctx;
    if (rill_init(&argc, &argv, &ctx) != RILL_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    rill_dtd_class_t *cls;
    rill_dtd_class_create(ctx, "hop", hop_body, &cls);
    for (int i = 0; i < ns; i++)
        rill_t[i] = rill_chain(ctx, cls, sizes[i]);

    if (rank == 0) {
        printf("# Rill %s: remote dependencies between 2 ranks, best of 3\n",
               rill_version_string());
        printf("# (a) activation latency: task on rank 0 -> task on rank 1 -> back\n");
        printf("#     Rill one hop (task end -> remote task start, 8-byte tile inline): %.2f us,"
               " round trip %.2f us; MPI one-way 8 B: %.2f us\n",
               rill_t[0] * 1e6, 2 * rill_t[0] * 1e6, mpi_t[0] * 1e6);
        printf("# (b) tile transfer through the runtime vs MPI_Send/MPI_Recv ping-pong\n");
        printf("%12s %14s %14s %14s %14s %8s\n", "bytes", "rill_us/hop", "rill_GB/s", "mpi_us/msg",
               "mpi_GB/s", "ratio");
        for (int i = 0; i < ns; i++)
            printf("%12zu %14.2f %14.3f %14.2f %14.3f %8.2f\n", sizes[i], rill_t[i] * 1e6,
                   (double)sizes[i] / rill_t[i] / 1e9, mpi_t[i] * 1e6,
                   (double)sizes[i] / mpi_t[i] / 1e9, mpi_t[i] / rill_t[i]);
    }
    if (csv) {
        char date[32];
        time_t now = time(NULL);
        struct utsname un;
        strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", localtime(&now));
        fprintf(csv, "# bench_comm: Rill %s, %s, %s\n", rill_version_string(), date,
                uname(&un) == 0 ? un.nodename : "?");
        fprintf(csv, "# remote dependencies between 2 ranks, best of 3; a hop is task end on "
                     "one rank -> dependent task start on the other, the tile included; MPI: "
                     "MPI_Send/MPI_Recv ping-pong, one way\n");
        fprintf(csv, "bytes,rill_us_per_hop,rill_GBps,mpi_us_per_msg,mpi_GBps,ratio\n");
        for (int i = 0; i < ns; i++)
            fprintf(csv, "%zu,%.2f,%.3f,%.2f,%.3f,%.2f\n", sizes[i], rill_t[i] * 1e6,
                    (double)sizes[i] / rill_t[i] / 1e9, mpi_t[i] * 1e6,
                    (double)sizes[i] / mpi_t[i] / 1e9, mpi_t[i] / rill_t[i]);
        if (fclose(csv) != 0) {
            fprintf(stderr, "bench_comm: error writing '%s': %s\n", csv_path, strerror(errno));
            rc = 1;
        }
    }
    rill_dtd_class_destroy(&cls);
    rill_fini(&ctx);
    MPI_Finalize();
    return rc;
}
