/* Allocation-failure sweep (in the style of Argobots' leak checks).
 *
 * Every allocation Rill makes (malloc, calloc, realloc, posix_memalign, aligned_alloc,
 * strdup, strndup), every thread it starts (pthread_create) and, in builds with MPI,
 * MPI_Init_thread is counted through link-time wrappers (alloc_inject.c, linked with
 * -Wl,--wrap=...; see alloc.cmake). Each scenario below is run once clean to count its
 * C fallible calls, then once for each N = 1 .. C+1 in a forked child where call N fails
 * (ALLOC_SWEEP_JOBS children at once; default: the cores it may use, at most 8).
 * In each child:
 *   - every public call returns RILL_SUCCESS or an error status, never crashes or hangs
 *     (a child is killed after CHILD_TIMEOUT_S seconds);
 *   - an error is returned only when the failure was injected, and a call that returned
 *     RILL_SUCCESS gave a working object (data pointers, tiles, parameter values, task
 *     arguments seen by the bodies, results of the tasks);
 *   - the child destroys what it created (in reverse order, rill_fini when rill_init
 *     succeeded) and exits 0; in the ASan build LeakSanitizer checks that nothing leaked.
 * Run N = C+1 must see no failure and the whole scenario succeed.
 *
 * Scenarios:
 *   runtime  rill_init (a parameter file, the environment and --mca; 2 workers), DTD
 *            classes, data, a collection, a tiled matrix, a DTD taskpool with tile, VALUE
 *            and SCRATCH arguments (inline and out of line), a flush, the wait, an empty
 *            taskpool; everything destroyed; rill_fini;
 *   params   rill_params_load (a file in $HOME, RILL_MCA_param_files, the environment,
 *            --mca), registration of every type, set before and after registration,
 *            lookup, info, unknown names, a bad value, reload, rill_params_reset;
 *   profile  runtime with profile_stats, profile_trace and profile_dot on (their files
 *            written at rill_fini).
 * A child scrubs its stack before it exits, so a stale copy of a lost pointer does not
 * hide a leak from LeakSanitizer.
 *
 * Only the main thread's calls count (the other threads' allocations never fail), so the
 * sequence is the same in every run: the DTD tasks all wait behind a "gate" task that
 * ends once every task is inserted, so no task completes during insertion.
 *
 * MPI: a one-rank Rill calls MPI only to start and stop; in builds with MPI the
 * wrappers answer those calls as a one-process MPI (a real MPI singleton start costs
 * about 1 s per child under ASan). --real-mpi uses the real MPI (slow).
 *
 * Known fatal sites: the ready queues grow while a task completes, where no error can be
 * returned; out of memory there ends the process (abort, with a message): such a child
 * passes if it dies of SIGABRT with that message.
 *
 * GPUs: the children leave them alone (device_cuda_enabled 0): each would start CUDA, a
 * context, streams and library handles (1-2 s on an H100, so minutes for the sweep), for
 * calls that are not the host layers'. --gpu sweeps the runtime scenario with the GPUs on
 * (the device module's and the GPU managers' calls; 1 exec stream, 2% of the memory per
 * child; label gpu), and is skipped (77) where no GPU is usable.
 *
 * Usage: test_alloc_sweep [--real-mpi] [--gpu]      the whole sweep (CTest)
 *        test_alloc_sweep SCENARIO [N] [--real-mpi] [--gpu]
 *                                                    one run in this process, call N failing
 *                                                    (0: none), for a debugger
 * ALLOC_INJECT_TRACE=1 lists every counted call with its caller (for addr2line).
 * Exit 77 (skip) in a ThreadSanitizer build: the sweep looks for leaks and crashes, not
 * races.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <execinfo.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rill/rill.h"
#include "test_util.h"

#include "alloc_inject.h"
#include "params_internal.h"

#if defined(__SANITIZE_THREAD__)
#define SWEEP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SWEEP_TSAN 1
#endif
#endif

#define CHILD_TIMEOUT_S 30
#define MAX_CALLS       20000 /* a scenario with more fallible calls is a runaway */
#define MAX_REPORTED    5     /* failing runs whose output is shown */

/* What a child reports through its pipe when it got to the end. */
typedef struct child_result {
    uint32_t magic;
    long count;    /* fallible calls counted */
    int fired;     /* the failure was injected */
    int completed; /* every call succeeded and the results were checked */
    int errors;    /* calls that returned an error (reported, as they must) */
} child_result_t;
#define RESULT_MAGIC 0x5157ee01u

/* A call that must succeed unless the injected failure hit it: then it says so
 * (RILL_ERR_NO_MEMORY). One failure fails one call: every later call succeeds. */
#define EXPECT_OK_OR_INJECTED(call_status, what)                                                   \
    do {                                                                                           \
        rill_status_t s_ = (call_status);                                                          \
        if (s_ != RILL_SUCCESS) {                                                                  \
            CHECK_MSG(alloc_inject_fired() && s_ == RILL_ERR_NO_MEMORY, "%s returned %s (%d)%s",   \
                      what, rill_status_string(s_), s_,                                            \
                      alloc_inject_fired() ? "" : " without an injected failure");                 \
            errors++;                                                                              \
            CHECK_MSG(errors == 1, "%s failed too, after an earlier call failed", what);           \
        }                                                                                          \
    } while (0)

static int errors; /* calls that failed (with the injection) in this child */

/* ------------------------------------------------------------ scenario: runtime */

#define NWORK 8

static atomic_bool insertion_done;
static atomic_int bad_args; /* a body saw an argument that is not what was inserted */
static atomic_int ran[NWORK + 2];
static double gate_val, xs[4];
static double *coll_ptr[2], *tile_ptr[4];

static rill_status_t gate_body(rill_task_t *task)
{
    double *g = NULL;
    rill_dtd_unpack_args(task, &g);
    if (g != &gate_val) {
        fprintf(stderr, "gate task: tile %p, expected %p\n", (void *)g, (void *)&gate_val);
        atomic_fetch_add(&bad_args, 1);
        return RILL_ERR_INVALID_ARG;
    }
    /* every task waits for this one: none completes while the main thread inserts */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!atomic_load(&insertion_done)) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 20)
            return RILL_ERR_TIMEOUT;
        sched_yield();
    }
    *g += 1;
    atomic_fetch_add(&ran[NWORK], 1);
    return RILL_SUCCESS;
}

/* VALUE idx, SCRATCH 64, INPUT gate, INOUT xs[idx % 4], INPUT collection datum,
 * INOUT matrix tile */
static rill_status_t work_body(rill_task_t *task)
{
    int idx = -1;
    char *scratch = NULL;
    double *g = NULL, *x = NULL, *c = NULL, *tile = NULL;
    rill_dtd_unpack_args(task, &idx, &scratch, &g, &x, &c, &tile);
    if (idx < 0 || idx >= NWORK || !scratch || g != &gate_val || x != &xs[idx % 4] ||
        c != coll_ptr[idx % 2] || tile != tile_ptr[idx % 4]) {
        fprintf(stderr, "work task %d: arguments idx %d scratch %p gate %p x %p coll %p tile %p\n",
                idx, idx, (void *)scratch, (void *)g, (void *)x, (void *)c, (void *)tile);
        atomic_fetch_add(&bad_args, 1);
        return RILL_ERR_INVALID_ARG;
    }
    memset(scratch, 0xab, 64);
    *x += 1;
    *tile += 1;
    atomic_fetch_add(&ran[idx], 1);
    return RILL_SUCCESS;
}

/* VALUE of 3000 bytes and SCRATCH of 8192: stored out of line (task_create's extra) */
#define BIG_VALUE 3000
static rill_status_t big_body(rill_task_t *task)
{
    unsigned char v[BIG_VALUE];
    unsigned char *scratch = NULL;
    double *x = NULL;
    rill_dtd_unpack_args(task, v, &scratch, &x);
    bool ok = scratch && x == &xs[0];
    for (int i = 0; ok && i < BIG_VALUE; i++)
        ok = v[i] == (unsigned char)(i * 7);
    if (!ok) {
        fprintf(stderr, "big task: broken arguments (scratch %p, x %p)\n", (void *)scratch,
                (void *)x);
        atomic_fetch_add(&bad_args, 1);
        return RILL_ERR_INVALID_ARG;
    }
    memset(scratch, 0, 8192);
    *x += 100;
    atomic_fetch_add(&ran[NWORK + 1], 1);
    return RILL_SUCCESS;
}

static int rank0(uint64_t key, void *arg)
{
    (void)key;
    (void)arg;
    return 0;
}

static char sources_dir[64]; /* the parameter files, and the profile outputs */

static bool runtime_with(bool profile)
{
    char trace[128], dot[128];
    /* named by the child: several children of the sweep run at once */
    snprintf(trace, sizeof(trace), "%s/trace.%d", sources_dir, (int)getpid());
    snprintf(dot, sizeof(dot), "%s/dot.%d", sources_dir, (int)getpid());
    char *args[16] = { "test_alloc_sweep", "--mca", "runtime_num_cores", "2", "keep" };
    int argc = 5;
    if (profile) {
        char *more[] = { "--mca", "profile_stats", "1",   /* statistics at rill_fini */
                         "--mca", "profile_trace", trace, /* a Chrome trace */
                         "--mca", "profile_dot",   dot }; /* the DOT graph */
        for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
            args[argc++] = more[i];
    }
    char **argv = args;
    rill_context_t *ctx = NULL;
    rill_status_t s = rill_init(&argc, &argv, &ctx);
    if (s != RILL_SUCCESS) {
        CHECK_MSG(alloc_inject_fired(), "rill_init: %s without an injected failure",
                  rill_status_string(s));
        CHECK_MSG(ctx == NULL, "a failed rill_init set the context");
        errors++;
        return false; /* nothing was created */
    }
    CHECK(ctx);
    /* the sources were all read: --mca taken out, its value (and the file's) applied */
    CHECK_MSG(argc == 2 && strcmp(argv[1], "keep") == 0, "argc %d after rill_init", argc);
    CHECK_MSG(rill_context_nworkers(ctx) == 2, "%d workers, --mca asked for 2",
              rill_context_nworkers(ctx));
    rill_param_t *win = NULL;
    CHECK(rill_param_lookup("dtd_window_size", &win) == RILL_SUCCESS);
    CHECK_MSG(rill_param_get_int(win) == 1000, "dtd_window_size %lld, the file says 1000",
              (long long)rill_param_get_int(win));

    rill_dtd_class_t *gate = NULL, *work = NULL, *big = NULL;
    EXPECT_OK_OR_INJECTED(rill_dtd_class_create(ctx, "gate", gate_body, &gate), "class gate");
    EXPECT_OK_OR_INJECTED(rill_dtd_class_create(ctx, "work", work_body, &work), "class work");
    EXPECT_OK_OR_INJECTED(rill_dtd_class_create(ctx, "big", big_body, &big), "class big");

    rill_data_t *dg = NULL, *dx[4] = { NULL };
    EXPECT_OK_OR_INJECTED(rill_data_create(ctx, &gate_val, sizeof(gate_val), &dg), "data gate");
    CHECK(!dg || rill_data_ptr(dg) == &gate_val);
    for (int i = 0; i < 4; i++) {
        EXPECT_OK_OR_INJECTED(rill_data_create(ctx, &xs[i], sizeof(xs[i]), &dx[i]), "data x");
        CHECK(!dx[i] || (rill_data_ptr(dx[i]) == &xs[i] && rill_data_size(dx[i]) == 8 &&
                         rill_data_rank(dx[i]) == 0));
    }

    rill_collection_t *dc = NULL;
    rill_data_t *cd[2] = { NULL };
    EXPECT_OK_OR_INJECTED(rill_collection_create(ctx, 64, rank0, NULL, &dc), "collection");
    for (int k = 0; dc && k < 2; k++) {
        cd[k] = rill_collection_data_of(dc, (uint64_t)k * 1000);
        if (!cd[k]) {
            CHECK_MSG(alloc_inject_fired(), "rill_collection_data_of gave NULL without an "
                                            "injected failure");
            CHECK_MSG(++errors == 1, "rill_collection_data_of failed after an earlier call");
            cd[k] = rill_collection_data_of(dc, (uint64_t)k * 1000); /* it works again */
            CHECK(cd[k]);
        }
        coll_ptr[k] = rill_data_ptr(cd[k]);
        CHECK(coll_ptr[k] && rill_data_size(cd[k]) == 64);
        for (int b = 0; b < 8; b++)
            CHECK(coll_ptr[k][b] == 0);
        CHECK(rill_collection_data_of(dc, (uint64_t)k * 1000) == cd[k]);
    }

    rill_matrix_t *A = NULL;
    EXPECT_OK_OR_INJECTED(rill_matrix_create(ctx, 8, 8, 4, 4, 1, 1, &A), "matrix");
    for (int t = 0; A && t < 4; t++) {
        tile_ptr[t] = rill_matrix_tile_ptr(A, t / 2, t % 2);
        CHECK(tile_ptr[t] && rill_matrix_tile(A, t / 2, t % 2) &&
              rill_data_ptr(rill_matrix_tile(A, t / 2, t % 2)) == tile_ptr[t]);
    }

    rill_taskpool_t *tp = NULL, *empty = NULL;
    EXPECT_OK_OR_INJECTED(rill_dtd_taskpool_create(ctx, &tp), "taskpool");
    bool inserted[NWORK + 2] = { false }, insert_failed = false;
    if (tp && gate && dg) {
        s = rill_dtd_insert_task(tp, gate, 5, RILL_DTD_INOUT, dg, RILL_DTD_ARG_END);
        EXPECT_OK_OR_INJECTED(s, "insert gate");
        inserted[NWORK] = s == RILL_SUCCESS;
        insert_failed |= s != RILL_SUCCESS;
    }
    bool can_work = tp && work && dg && dc && A;
    for (int i = 0; can_work && i < 4; i++)
        can_work = dx[i] != NULL;
    for (int i = 0; can_work && i < NWORK; i++) {
        s = rill_dtd_insert_task(tp, work, i, RILL_DTD_VALUE, sizeof(i), &i, RILL_DTD_SCRATCH,
                                 (size_t)64, RILL_DTD_INPUT, dg, RILL_DTD_INOUT, dx[i % 4],
                                 RILL_DTD_INPUT, cd[i % 2], RILL_DTD_INOUT | RILL_DTD_AFFINITY,
                                 rill_matrix_tile(A, (i % 4) / 2, i % 2), RILL_DTD_ARG_END);
        EXPECT_OK_OR_INJECTED(s, "insert work");
        inserted[i] = s == RILL_SUCCESS;
        insert_failed |= s != RILL_SUCCESS;
    }
    if (tp && big && dx[0]) {
        unsigned char v[BIG_VALUE];
        for (int i = 0; i < BIG_VALUE; i++)
            v[i] = (unsigned char)(i * 7);
        s = rill_dtd_insert_task(tp, big, 0, RILL_DTD_VALUE, sizeof(v), v, RILL_DTD_SCRATCH,
                                 (size_t)8192, RILL_DTD_INOUT, dx[0], RILL_DTD_ARG_END);
        EXPECT_OK_OR_INJECTED(s, "insert big");
        inserted[NWORK + 1] = s == RILL_SUCCESS;
        insert_failed |= s != RILL_SUCCESS;
    }
    if (tp && dx[1])
        EXPECT_OK_OR_INJECTED(rill_dtd_data_flush(tp, dx[1]), "flush");
    atomic_store(&insertion_done, true);
    bool wait_ok = true;
    if (tp) {
        s = rill_taskpool_wait(tp);
        /* a task whose insertion ran out of memory failed the taskpool: the wait says so */
        CHECK_MSG(s == RILL_SUCCESS || (insert_failed && s == RILL_ERR_NO_MEMORY),
                  "rill_taskpool_wait returned %s", rill_status_string(s));
        wait_ok = s == RILL_SUCCESS;
    }
    CHECK_MSG(atomic_load(&bad_args) == 0, "%d task(s) ran with broken arguments",
              atomic_load(&bad_args));
    /* a task inserted ran once; a task whose insertion failed did not run */
    for (int i = 0; i < NWORK + 2; i++)
        CHECK_MSG(atomic_load(&ran[i]) == (inserted[i] ? 1 : 0),
                  "task %d: inserted %d, ran %d times", i, inserted[i], atomic_load(&ran[i]));
    if (wait_ok) {
        double expect_x[4] = { 0 }, expect_tile[4] = { 0 };
        for (int i = 0; i < NWORK; i++)
            if (inserted[i]) {
                expect_x[i % 4] += 1;
                expect_tile[(i % 4)] += 1;
            }
        if (inserted[NWORK + 1])
            expect_x[0] += 100;
        for (int j = 0; j < 4; j++) {
            CHECK_MSG(xs[j] == expect_x[j], "x[%d] = %g, expected %g", j, xs[j], expect_x[j]);
            CHECK(!tile_ptr[j] || tile_ptr[j][0] == expect_tile[j]);
        }
        CHECK(gate_val == (inserted[NWORK] ? 1 : 0));
    }

    /* a taskpool that never had a task may be destroyed unwaited */
    EXPECT_OK_OR_INJECTED(rill_dtd_taskpool_create(ctx, &empty), "empty taskpool");
    if (empty)
        CHECK(rill_taskpool_destroy(&empty) == RILL_SUCCESS && !empty);
    if (tp)
        CHECK(rill_taskpool_destroy(&tp) == RILL_SUCCESS && !tp);
    if (A)
        CHECK(rill_matrix_destroy(&A) == RILL_SUCCESS && !A);
    if (dc)
        CHECK(rill_collection_destroy(&dc) == RILL_SUCCESS && !dc);
    for (int i = 3; i >= 0; i--)
        if (dx[i])
            CHECK(rill_data_destroy(&dx[i]) == RILL_SUCCESS && !dx[i]);
    if (dg)
        CHECK(rill_data_destroy(&dg) == RILL_SUCCESS && !dg);
    rill_dtd_class_t **classes[] = { &big, &work, &gate };
    for (int i = 0; i < 3; i++)
        if (*classes[i])
            CHECK(rill_dtd_class_destroy(classes[i]) == RILL_SUCCESS && !*classes[i]);
    CHECK(rill_fini(&ctx) == RILL_SUCCESS && !ctx);
    return errors == 0;
}

static bool scenario_runtime(void)
{
    return runtime_with(false);
}

/* the same with the run statistics, a trace and the DOT graph written at rill_fini */
static bool scenario_profile(void)
{
    return runtime_with(true);
}

/* ------------------------------------------------------------ scenario: params */

/* A registration either succeeds with a handle that reads the expected value, or fails
 * with no handle and nothing registered. */
static rill_param_t *registered(rill_status_t s, rill_param_t *p, const char *name)
{
    if (s != RILL_SUCCESS) {
        CHECK_MSG(alloc_inject_fired() && s == RILL_ERR_NO_MEMORY,
                  "registering %s: %s without an injected failure", name, rill_status_string(s));
        CHECK_MSG(!p, "registering %s failed (%s) but gave a handle", name, rill_status_string(s));
        rill_param_t *q = NULL;
        CHECK_MSG(rill_param_lookup(name, &q) == RILL_ERR_NOT_FOUND,
                  "registering %s failed (%s) but the name is registered", name,
                  rill_status_string(s));
        CHECK_MSG(++errors == 1, "registering %s failed after an earlier call failed", name);
        return NULL;
    }
    CHECK_MSG(p, "registering %s succeeded without a handle", name);
    rill_param_t *q = NULL;
    CHECK(rill_param_lookup(name, &q) == RILL_SUCCESS && q == p);
    return p;
}

static void check_source(rill_param_t *p, rill_param_source_t source)
{
    for (size_t i = 0; i < rill_params_count(); i++) {
        rill_param_info_t info;
        CHECK(rill_params_info(i, &info) == RILL_SUCCESS);
        rill_param_t *q = NULL;
        CHECK(rill_param_lookup(info.name, &q) == RILL_SUCCESS);
        if (q == p) {
            CHECK_MSG(info.source == source, "%s: source %s, expected %s", info.name,
                      rill_param_source_string(info.source), rill_param_source_string(source));
            return;
        }
    }
    CHECK_MSG(false, "a registered parameter is not listed");
}

static bool scenario_params(void)
{
    char *args[] = { "prog",         "--mca", "sweep_cmd_int", "42", "--mca",
                     "sweep_unknwn", "1",     "rest",          NULL };
    int argc = 8;
    char **argv = args;
    rill_status_t s = rill_params_load(&argc, &argv);
    bool loaded = s == RILL_SUCCESS;
    EXPECT_OK_OR_INJECTED(s, "rill_params_load");
    if (loaded)
        CHECK_MSG(argc == 2 && strcmp(argv[1], "rest") == 0, "argc %d after the load", argc);

    rill_param_t *p = NULL;
    /* from the file in $HOME */
    s = rill_param_register_int("sweep_file_int", "from the home file", RILL_PARAM_LEVEL_USER, 1, 0,
                                100, &p);
    rill_param_t *file_int = registered(s, p, "sweep_file_int");
    if (file_int && loaded) {
        CHECK(rill_param_get_int(file_int) == 11);
        check_source(file_int, RILL_PARAM_SOURCE_FILE);
    }
    /* from RILL_MCA_param_files */
    s = rill_param_register_size("sweep_size", "from the listed file", RILL_PARAM_LEVEL_TUNER, 1, 0,
                                 UINT64_MAX, &p);
    rill_param_t *size = registered(s, p, "sweep_size");
    if (size && loaded)
        CHECK(rill_param_get_size(size) == 65536);
    static const char *const names[] = { "alpha", "beta", "gamma", NULL };
    s = rill_param_register_enum("sweep_enum", "from the listed file", RILL_PARAM_LEVEL_USER, names,
                                 "alpha", &p);
    rill_param_t *en = registered(s, p, "sweep_enum");
    if (en && loaded)
        CHECK(rill_param_get_enum(en) == 1 && strcmp(rill_param_get_string(en), "beta") == 0);
    /* from the environment */
    s = rill_param_register_bool("sweep_env_bool", "from the environment", RILL_PARAM_LEVEL_USER,
                                 false, &p);
    rill_param_t *bo = registered(s, p, "sweep_env_bool");
    if (bo && loaded) {
        CHECK(rill_param_get_bool(bo));
        check_source(bo, RILL_PARAM_SOURCE_ENV);
    }
    /* from --mca */
    s = rill_param_register_int("sweep_cmd_int", "from --mca", RILL_PARAM_LEVEL_USER, 0, -5, 50,
                                &p);
    rill_param_t *cmd = registered(s, p, "sweep_cmd_int");
    if (cmd && loaded)
        CHECK(rill_param_get_int(cmd) == 42);
    /* a string: the home file gives it, then code sets it twice (the old values retire) */
    s = rill_param_register_string("sweep_str", "a string", RILL_PARAM_LEVEL_DEVELOPER, "dflt", &p);
    rill_param_t *str = registered(s, p, "sweep_str");
    if (str && loaded)
        CHECK(strcmp(rill_param_get_string(str), "from_home") == 0);
    const char *sets[] = { "set_once", "set_twice" }, *last_set = NULL;
    for (int i = 0; i < 2; i++) {
        s = rill_param_set("sweep_str", sets[i]);
        EXPECT_OK_OR_INJECTED(s, "rill_param_set");
        if (s == RILL_SUCCESS)
            last_set = sets[i];
        if (s == RILL_SUCCESS && str)
            CHECK(strcmp(rill_param_get_string(str), sets[i]) == 0);
    }
    /* set before registration: the value waits for it */
    bool late_set = rill_param_set("sweep_late", "7") == RILL_SUCCESS;
    EXPECT_OK_OR_INJECTED(late_set ? RILL_SUCCESS : RILL_ERR_NO_MEMORY, "rill_param_set (late)");
    s = rill_param_register_int("sweep_late", "set before registration", RILL_PARAM_LEVEL_USER, 3,
                                0, 10, &p);
    rill_param_t *late = registered(s, p, "sweep_late");
    if (late)
        CHECK(rill_param_get_int(late) == (late_set ? 7 : 3));
    /* registering the same name again gives the same handle */
    if (cmd) {
        s = rill_param_register_int("sweep_cmd_int", "again", RILL_PARAM_LEVEL_USER, 0, -5, 50, &p);
        CHECK(s == RILL_SUCCESS && p == cmd);
    }
    int unknown = rill_params_warn_unknown();
    if (loaded)
        CHECK_MSG(unknown >= 1, "%d unknown names, sweep_unknwn is one", unknown);
    for (size_t i = 0; i < rill_params_count(); i++) {
        rill_param_info_t info;
        CHECK(rill_params_info(i, &info) == RILL_SUCCESS && info.name && info.help);
    }

    /* reload: files and environment read again, every parameter re-resolved */
    s = rill_params_load(NULL, NULL);
    EXPECT_OK_OR_INJECTED(s, "rill_params_load (again)");
    if (s == RILL_SUCCESS) {
        if (file_int)
            CHECK(rill_param_get_int(file_int) == 11);
        if (str && last_set) /* the last value set wins over every other source */
            CHECK_MSG(strcmp(rill_param_get_string(str), last_set) == 0,
                      "sweep_str is '%s' after the reload, '%s' was set last",
                      rill_param_get_string(str), last_set);
    }
    /* a bad value: registered all the same, default kept */
    s = rill_param_set("sweep_bad", "not a number"); /* kept for the registration */
    EXPECT_OK_OR_INJECTED(s, "rill_param_set (bad value)");
    bool bad_set = s == RILL_SUCCESS;
    s = rill_param_register_int("sweep_bad", "bad value", RILL_PARAM_LEVEL_USER, 4, 0, 10, &p);
    if (bad_set && s == RILL_ERR_INVALID_ARG)
        CHECK(p && rill_param_get_int(p) == 4);
    else
        registered(s, p, "sweep_bad");
    rill_params_reset(); /* everything freed: LeakSanitizer sees what was lost */
    return errors == 0;
}

/* ------------------------------------------------------------ driver */

typedef struct scenario {
    const char *name;
    bool (*run)(void); /* true when every call succeeded and the results were checked */
} scenario_t;

static const scenario_t scenarios[] = {
    { "runtime", scenario_runtime },
    { "params", scenario_params },
    { "profile", scenario_profile },
};
#define NB_SCENARIOS ((int)(sizeof(scenarios) / sizeof(scenarios[0])))

/* The fatal ends by design: a message on stderr, then abort(). */
static const char *const known_fatal[] = {
    "out of memory growing a ready queue", /* runtime/sched.c: completing a task */
};

/* Clear the stack the scenario used: LeakSanitizer scans it, and a dead frame that still
 * holds a lost pointer would hide the leak. */
static __attribute__((noinline)) void scrub_stack(void)
{
    volatile char junk[256 << 10];
    memset((char *)junk, 0, sizeof(junk));
}

static child_result_t run_here(const scenario_t *sc, long fail_at)
{
    alloc_inject_arm(fail_at);
    bool completed = sc->run();
    alloc_inject_disarm();
    scrub_stack();
    child_result_t r = { RESULT_MAGIC, alloc_inject_count(), alloc_inject_fired(), completed,
                         errors };
    return r;
}

typedef enum { RUN_OK, RUN_FATAL_KNOWN, RUN_FAILED } run_outcome_t;

/* A child running the scenario with call fail_at failing; its output goes to out_fd. */
typedef struct child {
    long fail_at;
    pid_t pid;
    int result_fd; /* the read end of its result pipe */
    int out_fd;    /* a temporary file of its own */
} child_t;

static void start_child(const scenario_t *sc, child_t *c)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    CHECK(ftruncate(c->out_fd, 0) == 0 && lseek(c->out_fd, 0, SEEK_SET) == 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(c->out_fd, 1);
        dup2(c->out_fd, 2);
        alarm(CHILD_TIMEOUT_S);
        child_result_t r = run_here(sc, c->fail_at);
        fflush(stdout);
        fflush(stderr);
        if (write(fds[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
            _exit(2);
        close(fds[1]);
        exit(0); /* LeakSanitizer runs at exit */
    }
    close(fds[1]);
    c->pid = pid;
    c->result_fd = fds[0];
}

/* Wait for child c and say how it ended. */
static run_outcome_t finish_child(child_t *c, child_result_t *res, char *why, size_t why_len)
{
    memset(res, 0, sizeof(*res));
    ssize_t got = 0, n;
    while (got < (ssize_t)sizeof(*res) &&
           (n = read(c->result_fd, (char *)res + got, sizeof(*res) - (size_t)got)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        got += n;
    }
    close(c->result_fd);
    int st;
    while (waitpid(c->pid, &st, 0) < 0)
        CHECK(errno == EINTR);
    bool reported = got == (ssize_t)sizeof(*res) && res->magic == RESULT_MAGIC;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && reported)
        return RUN_OK;
    static char buf[1 << 16];
    ssize_t len = pread(c->out_fd, buf, sizeof(buf) - 1, 0);
    buf[len > 0 ? len : 0] = '\0';
    /* a known fatal site, reached by the injected failure: its message is in the output */
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && strstr(buf, "alloc_inject: failing call") &&
        !strstr(buf, "Sanitizer"))
        for (size_t i = 0; i < sizeof(known_fatal) / sizeof(known_fatal[0]); i++)
            if (strstr(buf, known_fatal[i])) {
                snprintf(why, why_len, "%s", known_fatal[i]);
                return RUN_FATAL_KNOWN;
            }
    if (strstr(buf, "LeakSanitizer"))
        snprintf(why, why_len, "LeakSanitizer found a leak");
    else if (strstr(buf, "AddressSanitizer"))
        snprintf(why, why_len, "AddressSanitizer found an error");
    else if (strstr(buf, "runtime error:"))
        snprintf(why, why_len, "UndefinedBehaviorSanitizer found an error");
    else if (WIFSIGNALED(st))
        snprintf(why, why_len, "killed by signal %d (%s)%s", WTERMSIG(st), strsignal(WTERMSIG(st)),
                 WTERMSIG(st) == SIGALRM ? ": it hung" : "");
    else if (WEXITSTATUS(st) == 0)
        snprintf(why, why_len, "exited 0 before the end of the scenario");
    else
        snprintf(why, why_len, "exit status %d%s", WEXITSTATUS(st),
                 WEXITSTATUS(st) == 1 ? " (a check failed)" : "");
    return RUN_FAILED;
}

static void show_output(int out_fd)
{
    char buf[6000];
    ssize_t len = pread(out_fd, buf, sizeof(buf) - 1, 0);
    buf[len > 0 ? len : 0] = '\0';
    fprintf(stderr, "---- its output%s:\n%s----\n",
            len == (ssize_t)sizeof(buf) - 1 ? " (first 6000 bytes)" : "", buf);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Count the scenario's calls in a clean run, then fail each in turn, njobs children at once
 * (children[0 .. njobs-1], each with its own output file), reaped in the order of N. */
static int sweep(const scenario_t *sc, const char *self, child_t *children, int njobs)
{
    double t0 = now_s();
    child_result_t r;
    char why[256];
    children[0].fail_at = 0;
    start_child(sc, &children[0]);
    if (finish_child(&children[0], &r, why, sizeof(why)) != RUN_OK || !r.completed) {
        fprintf(stderr, "%s: the clean run failed (%s)\n", sc->name, r.completed ? why : "errors");
        show_output(children[0].out_fd);
        return 1;
    }
    long total = r.count;
    CHECK_MSG(total > 0 && total < MAX_CALLS, "%s: %ld fallible calls", sc->name, total);
    int failed = 0, fatal = 0, drift = 0;
    long reported_errors = 0, next = 1;
    for (long n = 1; n <= total + 1; n++) {
        while (next <= total + 1 && next < n + njobs) { /* keep njobs children running */
            child_t *c = &children[next % njobs];
            c->fail_at = next++;
            start_child(sc, c);
        }
        child_t *c = &children[n % njobs];
        run_outcome_t o = finish_child(c, &r, why, sizeof(why));
        if (o == RUN_OK && n > total && (r.fired || !r.completed)) {
            o = RUN_FAILED;
            snprintf(why, sizeof(why), "run %ld after the last call: %s", n,
                     r.fired ? "a failure was injected (more calls than the clean run)"
                             : "not completed");
        }
        if (o == RUN_OK) {
            reported_errors += r.errors;
            if (n <= total && !r.fired)
                drift++; /* fewer calls than the clean run: the sequence changed */
            continue;
        }
        if (o == RUN_FATAL_KNOWN) {
            fatal++;
            printf("  %s N=%ld: ended on purpose (%s)\n", sc->name, n, why);
            continue;
        }
        failed++;
        if (failed <= MAX_REPORTED) {
            fprintf(stderr, "%s: FAILED with call %ld of %ld failing: %s\n  reproduce: %s %s %ld\n",
                    sc->name, n, total, why, self, sc->name, n);
            show_output(c->out_fd);
        }
    }
    printf("%s: %ld fallible calls in a clean run; N = 1..%ld swept in %.1f s, %d at once: %ld "
           "errors returned, %d deliberate aborts, %d runs where N was not reached, %d failures\n",
           sc->name, total, total + 1, now_s() - t0, njobs, reported_errors, fatal, drift, failed);
    return failed ? 1 : 0;
}

/* Children at once: ALLOC_SWEEP_JOBS, else the cores this process may use, at most 8. */
static int sweep_jobs(void)
{
    const char *env = getenv("ALLOC_SWEEP_JOBS");
    long j = env && *env ? strtol(env, NULL, 10) : 0;
    if (j <= 0) {
        cpu_set_t set;
        j = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
        j = j > 8 ? 8 : j;
    }
    return j > 64 ? 64 : (int)j;
}

/* $HOME/.rill/mca-params.conf and a file for RILL_MCA_param_files, in a fresh folder. */
static void make_sources(void)
{
    char *dir = sources_dir;
    snprintf(dir, sizeof(sources_dir), "/tmp/rill_alloc_sweep.XXXXXX");
    CHECK(mkdtemp(dir));
    char path[512];
    snprintf(path, sizeof(path), "%s/.rill", dir);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(path, sizeof(path), "%s/.rill/mca-params.conf", dir);
    FILE *f = fopen(path, "w");
    CHECK(f);
    fprintf(f, "# the sweep's home file\nsweep_file_int = 11\nsweep_str = from_home\n"
               "dtd_window_size = 1000 # a runtime parameter\n");
    fclose(f);
    snprintf(path, sizeof(path), "%s/listed.conf", dir);
    f = fopen(path, "w");
    CHECK(f);
    fprintf(f, "sweep_size = 64k\n\nsweep_enum = Beta\n");
    fclose(f);
    CHECK(setenv("HOME", dir, 1) == 0);
    CHECK(setenv("RILL_MCA_param_files", path, 1) == 0);
    CHECK(setenv("RILL_MCA_sweep_env_bool", "yes", 1) == 0);
    CHECK(setenv("RILL_MCA_runtime_bind", "0", 1) == 0); /* no binding of the children */
}

/* Whether Rill finds a usable GPU, asked in a child (CUDA started in this process would not
 * work in the children it forks). */
static bool gpus_usable(void)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        rill_context_t *ctx = NULL;
        alloc_inject_disarm();
        int n = rill_init(NULL, NULL, &ctx) == RILL_SUCCESS ? rill_context_ngpus(ctx) : 0;
        if (ctx)
            rill_fini(&ctx);
        _exit(n > 0 ? 0 : 1);
    }
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void remove_sources(const char *dir)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/.rill/mca-params.conf", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/.rill", dir);
    rmdir(path);
    DIR *d = opendir(dir); /* listed.conf and the children's traces and graphs */
    if (d) {
        for (struct dirent *e; (e = readdir(d));)
            if (e->d_name[0] != '.') {
                snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(dir);
}

static void remove_sources_at_exit(void)
{
    remove_sources(sources_dir);
}

int main(int argc, char **argv)
{
#ifdef SWEEP_TSAN
    printf("skipped under ThreadSanitizer: the sweep forks a child per N and looks for leaks "
           "and crashes, not races (it runs in the release and ASan builds)\n");
    return 77;
#endif
    bool real_mpi = false, gpu = false;
    const char *only = NULL;
    long fail_at = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--real-mpi") == 0)
            real_mpi = true;
        else if (strcmp(argv[i], "--gpu") == 0)
            gpu = true;
        else if (!only)
            only = argv[i];
        else
            fail_at = atol(argv[i]);
    }
    alloc_inject_real_mpi(real_mpi);
    if (gpu) { /* a small share of the GPUs per child: several run at once */
        CHECK(setenv("RILL_MCA_device_cuda_exec_streams", "1", 1) == 0);
        CHECK(setenv("RILL_MCA_device_cuda_memory_use", "2", 1) == 0);
        if (!gpus_usable()) {
            printf("skipped: no usable GPU (the --gpu sweep needs one)\n");
            return 77;
        }
    } else {
        CHECK(setenv("RILL_MCA_device_cuda_enabled", "0", 1) == 0);
    }
    make_sources();
    /* load the unwinder once, before any child needs a backtrace */
    void *frames[4];
    backtrace(frames, 4);

    int status = 0;
    if (only) { /* one run in this process (no child: the folder goes even if a check fails) */
        atexit(remove_sources_at_exit);
        const scenario_t *sc = NULL;
        for (int i = 0; i < NB_SCENARIOS; i++)
            if (strcmp(scenarios[i].name, only) == 0)
                sc = &scenarios[i];
        CHECK_MSG(sc, "unknown scenario '%s' (runtime, params, profile)", only);
        child_result_t r = run_here(sc, fail_at < 0 ? 0 : fail_at);
        printf("%s with call %ld failing: %ld calls, failure %s, %d errors returned, %s\n",
               sc->name, fail_at < 0 ? 0 : fail_at, r.count, r.fired ? "injected" : "not reached",
               r.errors, r.completed ? "completed" : "not completed");
    } else {
        int njobs = sweep_jobs();
        child_t children[64];
        FILE *outs[64];
        for (int i = 0; i < njobs; i++) {
            CHECK((outs[i] = tmpfile()) != NULL);
            children[i].out_fd = fileno(outs[i]);
        }
        for (int i = 0; i < NB_SCENARIOS; i++)
            if (!gpu || strcmp(scenarios[i].name, "runtime") == 0)
                status |= sweep(&scenarios[i], argv[0], children, njobs);
        for (int i = 0; i < njobs; i++)
            fclose(outs[i]);
        remove_sources(sources_dir);
    }
    return status;
}
