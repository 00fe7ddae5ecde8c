/* Unit test of base/topology: core choice (automatic, split between local
 * processes, runtime_num_cores, runtime_core_list), warnings, binding, steal orders.
 * Passes on a 2-core machine and on bigger ones; adapts when the process is bound. */
#include <hwloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "rill/params.h"
#include "topology.h"

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#define CHECK_OK(call) CHECK((call) == RILL_SUCCESS)

/* The test's own view of the machine, from hwloc directly. */
static hwloc_topology_t hw;
static hwloc_bitmap_t process_set; /* what the process may run on */
static int machine_cores;          /* cores of the machine (allowed by the OS) */
static int given_cores;            /* cores that meet process_set */
static bool whole_machine;         /* process not bound to a subset by its launcher */
static hwloc_obj_type_t core_type;

/* ---------------------------------------------------------------- stderr capture */

typedef struct {
    FILE *tmp;
    int saved;
} capture_t;

static void capture_begin(capture_t *c)
{
    fflush(stderr);
    c->tmp = tmpfile();
    c->saved = dup(2);
    if (!c->tmp || c->saved < 0 || dup2(fileno(c->tmp), 2) < 0) {
        perror("capture_begin");
        exit(1);
    }
}

/* Restore stderr; returns what was written (caller frees) and echoes it for the log. */
static char *capture_end(capture_t *c)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    long size = ftell(c->tmp);
    char *text = calloc(1, (size_t)(size > 0 ? size : 0) + 1);
    rewind(c->tmp);
    if (size > 0 && fread(text, 1, (size_t)size, c->tmp) != (size_t)size)
        text[0] = '\0';
    fclose(c->tmp);
    fprintf(stderr, "%s", text);
    return text;
}

/* ---------------------------------------------------------------- helpers */

static void set_param(const char *name, const char *value)
{
    if (rill_param_set(name, value) != RILL_SUCCESS) {
        fprintf(stderr, "rill_param_set(%s, %s) failed\n", name, value);
        exit(1);
    }
}

static void set_num_cores(int n)
{
    char v[16];
    snprintf(v, sizeof(v), "%d", n);
    set_param("runtime_num_cores", v);
}

/* The cpuset Rill should bind worker w to: its core, within the process set. */
static hwloc_bitmap_t expected_worker_set(const rill_topo_t *topo, int w)
{
    int pu_index = rill_topo_worker_core(topo, w);
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(hw, (unsigned)pu_index);
    if (!pu)
        return NULL;
    hwloc_obj_t core =
        core_type == HWLOC_OBJ_PU ? pu : hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_CORE, pu);
    hwloc_bitmap_t set = hwloc_bitmap_dup(core->cpuset);
    if (hwloc_bitmap_intersects(set, process_set))
        hwloc_bitmap_and(set, set, process_set);
    return set;
}

static int count_lines_with(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void check_steal_permutation(const rill_topo_t *topo)
{
    int n = rill_topo_nworkers(topo);
    if (n < 2)
        return;
    int *order = malloc(sizeof(int) * (size_t)(n - 1));
    char *seen = malloc((size_t)n);
    for (int w = 0; w < n; w++) {
        memset(seen, 0, (size_t)n);
        for (int i = 0; i < n - 1; i++)
            order[i] = -1;
        rill_topo_steal_order(topo, w, order);
        for (int i = 0; i < n - 1; i++) {
            CHECK(order[i] >= 0 && order[i] < n && order[i] != w);
            if (order[i] >= 0 && order[i] < n) {
                CHECK(!seen[order[i]]);
                seen[order[i]] = 1;
            }
        }
    }
    free(seen);
    free(order);
}

/* ---------------------------------------------------------------- tests */

static void test_default(void)
{
    rill_topo_t *topo = NULL;
    set_num_cores(0);
    CHECK_OK(rill_topo_init(0, 1, &topo));
    if (!topo)
        return;
    int n = rill_topo_nworkers(topo);
    CHECK(n == given_cores);
    /* every worker on its own core, inside what the process was given */
    hwloc_bitmap_t cores_seen = hwloc_bitmap_alloc();
    for (int w = 0; w < n; w++) {
        int pu = rill_topo_worker_core(topo, w);
        CHECK(pu >= 0);
        hwloc_bitmap_t set = expected_worker_set(topo, w);
        CHECK(set != NULL);
        if (set) {
            CHECK(!hwloc_bitmap_intersects(set, cores_seen));
            hwloc_bitmap_or(cores_seen, cores_seen, set);
            hwloc_bitmap_free(set);
        }
    }
    CHECK(rill_topo_worker_core(topo, -1) == -1);
    CHECK(rill_topo_worker_core(topo, n) == -1);
    hwloc_bitmap_free(cores_seen);
    check_steal_permutation(topo);

    /* rill_topo_print: a machine line and one line per worker */
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    rill_topo_print(topo, mem);
    fclose(mem);
    printf("%s", buf);
    CHECK(strstr(buf, "machine: ") != NULL);
    CHECK(strstr(buf, "hwloc ") != NULL);
    CHECK(count_lines_with(buf, " -> core ") == n);
    CHECK(strstr(buf, "worker 0 -> core ") != NULL);
    CHECK(strstr(buf, "comm thread (with several ranks): on the workers' cores (PUs ") != NULL);
    free(buf);
    rill_topo_destroy(&topo);
    CHECK(topo == NULL);
    rill_topo_destroy(&topo); /* destroying NULL is a no-op */
}

static void test_local_split(void)
{
    rill_topo_t *t0 = NULL, *t1 = NULL;
    set_num_cores(0);
    CHECK_OK(rill_topo_init(0, 2, &t0));
    CHECK_OK(rill_topo_init(1, 2, &t1));
    if (!t0 || !t1)
        goto out;
    int n0 = rill_topo_nworkers(t0), n1 = rill_topo_nworkers(t1);
    if (whole_machine && machine_cores >= 2) {
        /* disjoint blocks that cover the machine, sizes differing by at most one */
        CHECK(n0 + n1 == machine_cores);
        CHECK(n0 - n1 == 0 || n0 - n1 == 1);
        for (int a = 0; a < n0; a++) {
            hwloc_bitmap_t sa = expected_worker_set(t0, a);
            for (int b = 0; b < n1; b++) {
                hwloc_bitmap_t sb = expected_worker_set(t1, b);
                CHECK(sa && sb && !hwloc_bitmap_intersects(sa, sb));
                hwloc_bitmap_free(sb);
            }
            hwloc_bitmap_free(sa);
        }
    } else {
        /* bound by the launcher (or one core): each uses what it was given */
        printf("local split: process bound to a subset or one core; checking it is kept\n");
        if (!whole_machine && 2 * given_cores > machine_cores) {
            /* the launcher gave more than half the node to a process of two: told */
            rill_topo_t *t = NULL;
            capture_t cap;
            capture_begin(&cap);
            CHECK_OK(rill_topo_init(0, 2, &t));
            char *text = capture_end(&cap);
            CHECK(strstr(text, "the launcher gave this process") != NULL);
            free(text);
            rill_topo_destroy(&t);
        }
        CHECK(n0 == given_cores || (machine_cores < 2 && n0 == 1));
        CHECK(n1 == n0);
    }
out:
    rill_topo_destroy(&t0);
    rill_topo_destroy(&t1);
}

static void test_more_processes_than_cores(void)
{
    if (!whole_machine || machine_cores + 1 > 4096)
        return;
    int lsize = machine_cores + 1;
    rill_topo_t *topo = NULL;
    capture_t cap;
    set_num_cores(0);
    capture_begin(&cap);
    CHECK_OK(rill_topo_init(0, lsize, &topo));
    char *text = capture_end(&cap);
    CHECK(strstr(text, "processes") != NULL);
    CHECK(strstr(text, "share cores") != NULL);
    CHECK(strstr(text, "ppr:") != NULL);
    free(text);
    if (topo)
        CHECK(rill_topo_nworkers(topo) == 1);
    int first_core_pu = topo ? rill_topo_worker_core(topo, 0) : -1;
    rill_topo_destroy(&topo);

    /* the last local rank wraps around onto the first core, without warning again */
    capture_begin(&cap);
    CHECK_OK(rill_topo_init(lsize - 1, lsize, &topo));
    text = capture_end(&cap);
    CHECK(strstr(text, "warning") == NULL);
    free(text);
    if (topo) {
        CHECK(rill_topo_nworkers(topo) == 1);
        CHECK(rill_topo_worker_core(topo, 0) == first_core_pu);
    }
    rill_topo_destroy(&topo);
}

static void test_num_cores_one(void)
{
    rill_topo_t *topo = NULL;
    set_num_cores(1);
    CHECK_OK(rill_topo_init(0, 1, &topo));
    if (topo) {
        CHECK(rill_topo_nworkers(topo) == 1);
        CHECK(rill_topo_worker_core(topo, 0) >= 0);
        int order[1] = { -7 };
        rill_topo_steal_order(topo, 0, order); /* nothing to fill */
        CHECK(order[0] == -7);
    }
    rill_topo_destroy(&topo);
    set_num_cores(0);
}

static void test_oversubscribed(void)
{
    int n = 2 * given_cores;
    if (n > 4096)
        return;
    rill_topo_t *topo = NULL;
    capture_t cap;
    set_num_cores(n);
    capture_begin(&cap);
    CHECK_OK(rill_topo_init(0, 1, &topo));
    char *text = capture_end(&cap);
    char expect[128];
    snprintf(expect, sizeof(expect), "%d workers on %d cores", n, given_cores);
    CHECK(strstr(text, expect) != NULL);
    snprintf(expect, sizeof(expect), "set runtime_num_cores <= %d", given_cores);
    CHECK(strstr(text, expect) != NULL);
    CHECK(strstr(text, "--bind-to none") != NULL);
    free(text);
    if (topo) {
        CHECK(rill_topo_nworkers(topo) == n);
        /* round-robin: worker w and w + given share a core */
        for (int w = 0; w < given_cores; w++)
            CHECK(rill_topo_worker_core(topo, w) == rill_topo_worker_core(topo, w + given_cores));
        check_steal_permutation(topo);
        /* nearest first: the worker on the same core, then by index distance */
        int *order = malloc(sizeof(int) * (size_t)(n - 1));
        rill_topo_steal_order(topo, 0, order);
        CHECK(order[0] == given_cores);
        if (given_cores >= 2)
            CHECK(rill_topo_worker_core(topo, order[1]) != rill_topo_worker_core(topo, 0));
        free(order);
    }
    rill_topo_destroy(&topo);
    set_num_cores(0);
}

/* Init with a core list; returns the status, and the stderr text in *text_p. */
static rill_status_t init_with_list_local(const char *list, int local_size, rill_topo_t **topo_p,
                                          char **text_p)
{
    capture_t cap;
    set_param("runtime_core_list", list);
    capture_begin(&cap);
    rill_status_t status = rill_topo_init(0, local_size, topo_p);
    *text_p = capture_end(&cap);
    set_param("runtime_core_list", "");
    return status;
}

static rill_status_t init_with_list(const char *list, rill_topo_t **topo_p, char **text_p)
{
    return init_with_list_local(list, 1, topo_p, text_p);
}

static void test_core_list(void)
{
    rill_topo_t *topo = NULL;
    char *text;
    char list[64];
    /* PU 0 on usual machines; the first allowed PU when a cgroup hides PU 0 */
    int pu0 = hwloc_bitmap_first(hwloc_topology_get_allowed_cpuset(hw));
    snprintf(list, sizeof(list), "%d", pu0);
    CHECK_OK(init_with_list(list, &topo, &text));
    free(text);
    if (topo) {
        CHECK(rill_topo_nworkers(topo) == 1);
        hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(hw, (unsigned)pu0);
        hwloc_obj_t core =
            core_type == HWLOC_OBJ_PU ? pu : hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_CORE, pu);
        CHECK(hwloc_bitmap_isset(core->cpuset, (unsigned)rill_topo_worker_core(topo, 0)));
    }
    rill_topo_destroy(&topo);

    if (machine_cores >= 2) {
        /* two cores named by their first PU, in the list's order, spaces allowed */
        int a = hwloc_bitmap_first(hwloc_get_obj_by_type(hw, core_type, 1)->cpuset);
        int b = hwloc_bitmap_first(hwloc_get_obj_by_type(hw, core_type, 0)->cpuset);
        snprintf(list, sizeof(list), " %d , %d ", a, b);
        CHECK_OK(init_with_list(list, &topo, &text));
        free(text);
        if (topo) {
            CHECK(rill_topo_nworkers(topo) == 2);
            hwloc_bitmap_t s0 = expected_worker_set(topo, 0), s1 = expected_worker_set(topo, 1);
            CHECK(s0 && hwloc_bitmap_isset(s0, (unsigned)a));
            CHECK(s1 && hwloc_bitmap_isset(s1, (unsigned)b));
            hwloc_bitmap_free(s0);
            hwloc_bitmap_free(s1);
        }
        rill_topo_destroy(&topo);

        /* the same list in two processes of a node: told when they overflow the node */
        CHECK_OK(init_with_list_local(list, 2, &topo, &text));
        bool shared = 2 * 2 > machine_cores; /* 2 processes x 2 workers */
        CHECK((strstr(text, "give each process its own runtime_core_list") != NULL) == shared);
        free(text);
        rill_topo_destroy(&topo);

        /* a range; runtime_num_cores takes the first N of the listed cores */
        int lo = a < b ? a : b, hi = a < b ? b : a;
        snprintf(list, sizeof(list), "%d-%d", lo, hi);
        set_num_cores(1);
        CHECK_OK(init_with_list(list, &topo, &text));
        set_num_cores(0);
        free(text);
        if (topo) {
            CHECK(rill_topo_nworkers(topo) == 1);
            CHECK(rill_topo_worker_core(topo, 0) == lo);
        }
        rill_topo_destroy(&topo);
    }

    /* bad lists: an error naming the entry, and no topology */
    static const struct {
        const char *list;
        const char *expect;
    } bad[] = {
        { "0,x", "entry \"x\"" },           { "99999", "entry \"99999\"" },
        { "0,,1", "entry \"\"" },           { "1-0", "entry \"1-0\"" },
        { "0,0", "entry \"0\"" },           { "-1", "entry \"-1\"" },
        { "0-99999", "entry \"0-99999\"" },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (strcmp(bad[i].list, "0,0") == 0 && pu0 != 0)
            continue;
        topo = NULL;
        rill_status_t s = init_with_list(bad[i].list, &topo, &text);
        CHECK(s == RILL_ERR_INVALID_ARG);
        CHECK(topo == NULL);
        CHECK(strstr(text, "runtime_core_list") != NULL);
        if (!strstr(text, bad[i].expect)) {
            fprintf(stderr, "list \"%s\": message lacks '%s'\n", bad[i].list, bad[i].expect);
            failures++;
        }
        free(text);
        rill_topo_destroy(&topo);
    }
}

/* A thread that waits until the test lets it go (the comm thread's stand-in). */
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static bool idle_go;
static void *idle_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&idle_lock);
    while (!idle_go)
        pthread_cond_wait(&idle_cond, &idle_lock);
    pthread_mutex_unlock(&idle_lock);
    return NULL;
}

/* Another thread bound to the workers' cores: their union, without a core reserved for a
 * GPU manager (when the process has 2 cores or more to reserve one). */
static void test_bind_thread_to_workers(void)
{
    rill_topo_t *topo = NULL;
    set_num_cores(0);
    CHECK_OK(rill_topo_init(0, 1, &topo));
    if (!topo || !hwloc_topology_is_thissystem(hw)) {
        rill_topo_destroy(&topo);
        return;
    }
    CHECK_OK(rill_topo_reserve(topo, 1, "test manager"));
    int reserved = rill_topo_reserved_core(topo, 0);
    pthread_t t;
    idle_go = false;
    CHECK(pthread_create(&t, NULL, idle_thread, NULL) == 0);
    rill_status_t s = rill_topo_bind_thread_to_workers(topo, t);
    if (s == RILL_ERR_NOT_SUPPORTED) {
        printf("binding not supported here; skipping the thread read-back\n");
    } else {
        CHECK(s == RILL_SUCCESS);
        hwloc_bitmap_t now = hwloc_bitmap_alloc(), want = hwloc_bitmap_alloc();
        for (int w = 0; w < rill_topo_nworkers(topo); w++) {
            hwloc_bitmap_t e = expected_worker_set(topo, w);
            CHECK(e != NULL);
            if (e)
                hwloc_bitmap_or(want, want, e);
            hwloc_bitmap_free(e);
        }
        CHECK(hwloc_get_thread_cpubind(hw, t, now, 0) == 0);
        CHECK(hwloc_bitmap_isequal(now, want));
        if (reserved >= 0) /* the manager's core is not among them */
            CHECK(!hwloc_bitmap_isset(now, (unsigned)reserved));
        printf("thread bound to the workers' cores (%d worker(s)%s)\n", rill_topo_nworkers(topo),
               reserved >= 0 ? ", one core reserved" : "");
        hwloc_bitmap_free(now);
        hwloc_bitmap_free(want);
    }
    pthread_mutex_lock(&idle_lock);
    idle_go = true;
    pthread_cond_signal(&idle_cond);
    pthread_mutex_unlock(&idle_lock);
    pthread_join(t, NULL);
    rill_topo_destroy(&topo);
}

static void test_binding(void)
{
    rill_topo_t *topo = NULL;
    hwloc_bitmap_t saved = hwloc_bitmap_alloc(), now = hwloc_bitmap_alloc();
    hwloc_bitmap_t all = hwloc_bitmap_alloc();
    CHECK(hwloc_get_cpubind(hw, saved, HWLOC_CPUBIND_THREAD) == 0);
    set_num_cores(0);
    CHECK_OK(rill_topo_init(0, 1, &topo));
    if (!topo)
        goto out;
    if (!hwloc_topology_is_thissystem(hw)) {
        printf("topology is not this system's (HWLOC_SYNTHETIC/XML): skipping binding\n");
        goto out;
    }
    for (int w = 0; w < rill_topo_nworkers(topo); w++) {
        rill_status_t s = rill_topo_bind_worker(topo, w);
        if (s == RILL_ERR_NOT_SUPPORTED) {
            printf("binding not supported here; skipping the read-back checks\n");
            goto out_restore;
        }
        CHECK(s == RILL_SUCCESS);
        CHECK(hwloc_get_cpubind(hw, now, HWLOC_CPUBIND_THREAD) == 0);
        hwloc_bitmap_t expect = expected_worker_set(topo, w);
        CHECK(expect && hwloc_bitmap_isequal(now, expect));
        CHECK(hwloc_bitmap_isset(now, (unsigned)rill_topo_worker_core(topo, w)));
        if (expect)
            hwloc_bitmap_or(all, all, expect);
        hwloc_bitmap_free(expect);
    }
    CHECK(rill_topo_bind_worker(topo, -1) == RILL_ERR_INVALID_ARG);
    CHECK_OK(rill_topo_bind_service(topo));
    CHECK(hwloc_get_cpubind(hw, now, HWLOC_CPUBIND_THREAD) == 0);
    CHECK(hwloc_bitmap_isequal(now, all));
out_restore:
    /* later inits read the process binding (the union of its threads'): undo ours */
    CHECK(hwloc_set_cpubind(hw, saved, HWLOC_CPUBIND_THREAD) == 0);
out:
    rill_topo_destroy(&topo);

    /* runtime_bind = false: no binding, no core reported */
    set_param("runtime_bind", "false");
    CHECK_OK(rill_topo_init(0, 1, &topo));
    if (topo && hwloc_topology_is_thissystem(hw)) {
        CHECK(rill_topo_nworkers(topo) == given_cores);
        CHECK(rill_topo_worker_core(topo, 0) == -1);
        CHECK_OK(rill_topo_bind_worker(topo, 0));
        CHECK_OK(rill_topo_bind_service(topo));
        CHECK(hwloc_get_cpubind(hw, now, HWLOC_CPUBIND_THREAD) == 0);
        CHECK(hwloc_bitmap_isequal(now, saved));
    }
    rill_topo_destroy(&topo);
    set_param("runtime_bind", "true");
    hwloc_bitmap_free(saved);
    hwloc_bitmap_free(now);
    hwloc_bitmap_free(all);
}

static void test_verbose(void)
{
    rill_topo_t *topo = NULL;
    capture_t cap;
    int saved = rill_log_topo.level;
    rill_log_topo.level = 1;
    set_num_cores(0);
    capture_begin(&cap);
    CHECK_OK(rill_topo_init(0, 1, &topo));
    char *text = capture_end(&cap);
    rill_log_topo.level = saved;
    CHECK(strstr(text, "worker 0 -> core ") != NULL);
    CHECK(count_lines_with(text, " -> core ") == given_cores);
    free(text);
    rill_topo_destroy(&topo);
}

static void test_bad_local(void)
{
    rill_topo_t *topo = NULL;
    capture_t cap;
    capture_begin(&cap);
    CHECK(rill_topo_init(2, 2, &topo) == RILL_ERR_INVALID_ARG);
    CHECK(rill_topo_init(0, 0, &topo) == RILL_ERR_INVALID_ARG);
    CHECK(rill_topo_init(-1, 1, &topo) == RILL_ERR_INVALID_ARG);
    char *text = capture_end(&cap);
    CHECK(strstr(text, "local rank") != NULL);
    free(text);
    CHECK(topo == NULL);
}

static void test_bad_param_value(void)
{
    /* the registry's range applies: a negative count is refused and changes nothing */
    CHECK(rill_param_set("runtime_num_cores", "-1") == RILL_ERR_INVALID_ARG);
    CHECK(rill_param_set("runtime_num_cores", "5000") == RILL_ERR_INVALID_ARG);
    rill_param_t *p = NULL;
    CHECK_OK(rill_param_lookup("runtime_num_cores", &p));
    CHECK(p && rill_param_get_int(p) == 0);
}

int main(void)
{
    CHECK_OK(rill_params_load(NULL, NULL));
    CHECK_OK(rill_log_register_params());
    CHECK_OK(rill_topo_register_params());
    CHECK_OK(rill_topo_register_params()); /* twice is harmless */

    hwloc_topology_init(&hw);
    hwloc_topology_load(hw);
    core_type = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(hw);
    process_set = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(hw, process_set, HWLOC_CPUBIND_PROCESS) != 0)
        hwloc_bitmap_copy(process_set, allowed);
    hwloc_bitmap_and(process_set, process_set, allowed);
    whole_machine = hwloc_bitmap_isincluded(allowed, process_set);
    machine_cores = hwloc_get_nbobjs_by_type(hw, core_type);
    for (int i = 0; i < machine_cores; i++)
        if (hwloc_bitmap_intersects(hwloc_get_obj_by_type(hw, core_type, (unsigned)i)->cpuset,
                                    process_set))
            given_cores++;
    printf("machine: %d cores, %d given to this process%s\n", machine_cores, given_cores,
           whole_machine ? " (the whole machine)" : " (bound to a subset)");

    test_default();
    test_local_split();
    test_more_processes_than_cores();
    test_num_cores_one();
    test_oversubscribed();
    test_core_list();
    test_binding();
    test_bind_thread_to_workers();
    test_verbose();
    test_bad_local();
    test_bad_param_value();

    hwloc_bitmap_free(process_set);
    hwloc_topology_destroy(hw);
    if (failures) {
        fprintf(stderr, "test_topology: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_topology: all checks passed\n");
    return 0;
}
