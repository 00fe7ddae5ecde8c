/* hwloc topology and thread binding: chooses this process's cores (launcher binding,
 * split between the processes of a node, runtime_core_list), binds threads to them and
 * precomputes the workers' steal orders by hwloc distance. */
#include "topology.h"

#include "rill/runtime.h"

#include <ctype.h>
#include <errno.h>
#include <hwloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rill/params.h"

struct rill_topo {
    hwloc_topology_t hw;
    int local_rank;
    int local_size;
    bool bind;            /* runtime_bind at init */
    int ncores;           /* distinct cores given to this process */
    hwloc_obj_t *cores;   /* [ncores] CORE (or PU when hwloc knows no cores) objects */
    hwloc_bitmap_t *sets; /* [ncores] each core's cpuset within what the process may use */
    hwloc_bitmap_t all;   /* union of sets: the service threads' binding */
    int nworkers;
    int *worker_core;        /* [nworkers] index in cores[] */
    int *steal;              /* [nworkers][nworkers - 1] */
    int nreserved;           /* cores held back from the workers for service threads */
    int want_reserved;       /* how many were asked for */
    int reserved[16];        /* their index in cores[] */
    atomic_bool bind_warned; /* first failed binding warned about; any thread */
};

/* Handles live as long as the registry (until exit); written by the main thread at
 * registration, read at init (main thread). */
static rill_param_t *param_num_cores;
static rill_param_t *param_bind;
static rill_param_t *param_core_list;

static const rill_param_decl_t topo_params[] = {
    { "runtime_num_cores", RILL_PARAM_INT, RILL_PARAM_LEVEL_USER,
      "Number of worker threads (one per core) of this process; 0: one per core given to the "
      "process. More than the cores given makes workers share cores",
      .v.i = { 0, 0, RILL_MAX_CORES }, .param = &param_num_cores },
    { "runtime_bind", RILL_PARAM_BOOL, RILL_PARAM_LEVEL_USER,
      "Bind each worker thread to its own core, and the service threads to the process's cores",
      .v.b = true, .param = &param_bind },
    { "runtime_core_list", RILL_PARAM_STRING, RILL_PARAM_LEVEL_TUNER,
      "Cores to use instead of the automatic choice: comma list of OS PU indexes and ranges "
      "(\"0,2-3\"), each naming the core that holds that PU (the numbers of taskset and "
      "/proc/cpuinfo). Empty: the cores the launcher gave, split between a node's processes",
      .v.s = { "", NULL }, .param = &param_core_list },
};

rill_status_t rill_topo_register_params(void)
{
    return rill_params_register_table(topo_params, sizeof(topo_params) / sizeof(topo_params[0]));
}

/* ---------------------------------------------------------------- core choice */

/* The object type that stands for a core: CORE, or PU on systems hwloc knows no cores of. */
static hwloc_obj_type_t topo_core_type(hwloc_topology_t hw)
{
    return hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
}

static hwloc_obj_t topo_core_of_pu(hwloc_topology_t hw, hwloc_obj_t pu)
{
    if (topo_core_type(hw) == HWLOC_OBJ_PU)
        return pu;
    return hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_CORE, pu);
}

/* Append core (restricted to within, or whole when within does not meet it). */
static rill_status_t topo_add_core(rill_topo_t *topo, hwloc_obj_t core, hwloc_const_bitmap_t within)
{
    hwloc_bitmap_t set = hwloc_bitmap_dup(core->cpuset);
    if (!set)
        return RILL_ERR_NO_MEMORY;
    if (within && hwloc_bitmap_intersects(set, within))
        hwloc_bitmap_and(set, set, within);
    topo->cores[topo->ncores] = core;
    topo->sets[topo->ncores] = set;
    topo->ncores++;
    return RILL_SUCCESS;
}

static bool topo_core_listed(const rill_topo_t *topo, int from, hwloc_obj_t core)
{
    for (int i = from; i < topo->ncores; i++)
        if (topo->cores[i] == core)
            return true;
    return false;
}

/* Parse one decimal PU index of a core list entry; false if it is not one. */
static bool topo_parse_index(const char *s, size_t len, long *value_p)
{
    if (len == 0 || len > 9)
        return false;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *value_p = v;
    return true;
}

/* Take the cores named by runtime_core_list, in list order. process_set is what the
 * launcher gave (a core outside it is used, with a warning). */
static rill_status_t topo_choose_listed(rill_topo_t *topo, const char *list,
                                        hwloc_const_bitmap_t process_set)
{
    rill_status_t status = RILL_SUCCESS;
    char *avail = NULL;
    hwloc_bitmap_list_asprintf(&avail, hwloc_topology_get_allowed_cpuset(topo->hw));
    const char *p = list;

    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        /* trim the entry, so "0, 2-3" is accepted */
        while (len > 0 && isspace((unsigned char)*p)) {
            p++;
            len--;
        }
        while (len > 0 && isspace((unsigned char)p[len - 1]))
            len--;
        int elen = (int)len;
        int entry_start = topo->ncores;

        long first = -1, last = -1;
        const char *dash = memchr(p, '-', len);
        bool ok;
        if (dash) {
            ok = topo_parse_index(p, (size_t)(dash - p), &first) &&
                 topo_parse_index(dash + 1, len - (size_t)(dash - p) - 1, &last);
        } else {
            ok = topo_parse_index(p, len, &first);
            last = first;
        }
        if (!ok) {
            RILL_ERROR(RILL_LOG_TOPO,
                       "runtime_core_list \"%s\": entry \"%.*s\" is not a PU index or a range "
                       "(expected a comma list such as \"0,2-3\")",
                       list, elen, p);
            status = RILL_ERR_INVALID_ARG;
            goto out;
        }
        if (last < first) {
            RILL_ERROR(RILL_LOG_TOPO,
                       "runtime_core_list \"%s\": entry \"%.*s\": range %ld-%ld is reversed "
                       "(write %ld-%ld)",
                       list, elen, p, first, last, last, first);
            status = RILL_ERR_INVALID_ARG;
            goto out;
        }
        for (long pu_index = first; pu_index <= last; pu_index++) {
            hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo->hw, (unsigned)pu_index);
            hwloc_obj_t core = pu ? topo_core_of_pu(topo->hw, pu) : NULL;
            if (!core) {
                RILL_ERROR(RILL_LOG_TOPO,
                           "runtime_core_list \"%s\": entry \"%.*s\": PU %ld does not exist or "
                           "is not available to this process (available PUs: %s)",
                           list, elen, p, pu_index, avail ? avail : "?");
                status = RILL_ERR_INVALID_ARG;
                goto out;
            }
            /* a range over several PUs of one core (SMT) names that core once */
            if (topo_core_listed(topo, entry_start, core))
                continue;
            if (topo_core_listed(topo, 0, core)) {
                RILL_ERROR(RILL_LOG_TOPO,
                           "runtime_core_list \"%s\": entry \"%.*s\": PU %ld is on core %u, "
                           "which the list already names (give one PU per core)",
                           list, elen, p, pu_index, core->logical_index);
                status = RILL_ERR_INVALID_ARG;
                goto out;
            }
            if (!hwloc_bitmap_intersects(core->cpuset, process_set)) {
                char *given = NULL;
                hwloc_bitmap_list_asprintf(&given, process_set);
                RILL_WARN(RILL_LOG_TOPO,
                          "runtime_core_list: PU %ld (core %u) is outside the PUs the launcher "
                          "bound this process to (%s); using it anyway",
                          pu_index, core->logical_index, given ? given : "?");
                free(given);
            }
            status = topo_add_core(topo, core, process_set);
            if (status != RILL_SUCCESS)
                goto out;
        }
        if (!end)
            break;
        p = end + 1;
    }
out:
    free(avail);
    return status;
}

/* The automatic choice: the cores the launcher gave this process; when it gave the
 * whole machine, this process's block of a split between the node's processes. */
static rill_status_t topo_choose_auto(rill_topo_t *topo, hwloc_const_bitmap_t process_set,
                                      bool whole_machine)
{
    hwloc_obj_type_t type = topo_core_type(topo->hw);
    int nmachine = hwloc_get_nbobjs_by_type(topo->hw, type);
    rill_status_t status;

    if (whole_machine && topo->local_size > 1) {
        int lsize = topo->local_size, lrank = topo->local_rank;
        if (nmachine < lsize) {
            /* fewer cores than processes: share, round-robin (warned about by the caller) */
            return topo_add_core(
                topo, hwloc_get_obj_by_type(topo->hw, type, (unsigned)(lrank % nmachine)), NULL);
        }
        /* contiguous blocks; the first (nmachine % lsize) ranks take one core more so no
         * core is left idle */
        int base = nmachine / lsize, extra = nmachine % lsize;
        int first = lrank * base + (lrank < extra ? lrank : extra);
        int count = base + (lrank < extra ? 1 : 0);
        for (int i = first; i < first + count; i++) {
            status = topo_add_core(topo, hwloc_get_obj_by_type(topo->hw, type, (unsigned)i), NULL);
            if (status != RILL_SUCCESS)
                return status;
        }
        return RILL_SUCCESS;
    }
    for (int i = 0; i < nmachine; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo->hw, type, (unsigned)i);
        if (!hwloc_bitmap_intersects(core->cpuset, process_set))
            continue;
        status = topo_add_core(topo, core, process_set);
        if (status != RILL_SUCCESS)
            return status;
    }
    return RILL_SUCCESS;
}

/* ---------------------------------------------------------------- steal orders */

typedef struct {
    int depth; /* depth of the two cores' lowest common ancestor: deeper is nearer */
    int dist;  /* |v - w| */
    int v;
} steal_key_t;

static int steal_key_cmp(const void *a, const void *b)
{
    const steal_key_t *x = a, *y = b;
    if (x->depth != y->depth)
        return x->depth > y->depth ? -1 : 1;
    if (x->dist != y->dist)
        return x->dist < y->dist ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

static rill_status_t topo_compute_steal(rill_topo_t *topo)
{
    int n = topo->nworkers;
    if (n < 2)
        return RILL_SUCCESS;
    topo->steal = malloc(sizeof(int) * (size_t)n * (size_t)(n - 1));
    steal_key_t *keys = malloc(sizeof(*keys) * (size_t)(n - 1));
    if (!topo->steal || !keys) {
        free(keys);
        free(topo->steal); /* rill_topo_init's error path does not free it */
        topo->steal = NULL;
        return RILL_ERR_NO_MEMORY;
    }
    for (int w = 0; w < n; w++) {
        hwloc_obj_t cw = topo->cores[topo->worker_core[w]];
        int k = 0;
        for (int v = 0; v < n; v++) {
            if (v == w)
                continue;
            hwloc_obj_t cv = topo->cores[topo->worker_core[v]];
            keys[k].depth = hwloc_get_common_ancestor_obj(topo->hw, cw, cv)->depth;
            keys[k].dist = abs(v - w);
            keys[k].v = v;
            k++;
        }
        qsort(keys, (size_t)(n - 1), sizeof(*keys), steal_key_cmp);
        for (int i = 0; i < n - 1; i++)
            topo->steal[(size_t)w * (size_t)(n - 1) + (size_t)i] = keys[i].v;
    }
    free(keys);
    return RILL_SUCCESS;
}

/* ---------------------------------------------------------------- init / destroy */

static void topo_worker_line(const rill_topo_t *topo, int w, char *buf, size_t size)
{
    int c = topo->worker_core[w];
    int pu = hwloc_bitmap_first(topo->sets[c]);
    snprintf(buf, size, "worker %d -> core %u (PU %d)%s", w, topo->cores[c]->logical_index, pu,
             topo->bind ? "" : ", not bound (runtime_bind = false)");
}

/* Warn, naming the fix, when workers of this process or processes of this node would
 * share cores. how: how the cores were chosen. */
typedef enum { CHOSEN_SPLIT, CHOSEN_LAUNCHER, CHOSEN_LIST } topo_chosen_t;

static void topo_warn_sharing(const rill_topo_t *topo, int requested, int nmachine,
                              topo_chosen_t how)
{
    int lsize = topo->local_size;
    if (requested > topo->ncores)
        RILL_WARN(RILL_LOG_TOPO,
                  "%d workers on %d cores: workers will share cores; set runtime_num_cores <= %d "
                  "or give the process more cores (mpirun --bind-to none / --map-by ...)",
                  requested, topo->ncores, topo->ncores);
    /* The node-wide view, said once per node by its first process. When Rill split the
     * node itself, only too many processes can make them share (more workers than the
     * block was just warned about). */
    if (lsize < 2 || topo->local_rank != 0 || (long)lsize * topo->nworkers <= nmachine)
        return;
    if (lsize > nmachine)
        RILL_WARN(RILL_LOG_TOPO,
                  "%d processes on this node's %d cores: processes will share cores; run at "
                  "most %d processes per node (mpirun --map-by ppr:%d:node)",
                  lsize, nmachine, nmachine, nmachine);
    else if (how == CHOSEN_LAUNCHER)
        RILL_WARN(RILL_LOG_TOPO,
                  "%d processes x %d workers on this node's %d cores: the launcher gave this "
                  "process %d cores, so processes will share cores; give each its own "
                  "(mpirun --map-by ppr:%d:node:pe=%d --bind-to core) or use --bind-to none and "
                  "Rill splits the node",
                  lsize, topo->nworkers, nmachine, topo->ncores, lsize, nmachine / lsize);
    else if (how == CHOSEN_LIST)
        RILL_WARN(RILL_LOG_TOPO,
                  "%d processes x %d workers on this node's %d cores: processes will share "
                  "cores; give each process its own runtime_core_list, or leave it empty and "
                  "Rill splits the node",
                  lsize, topo->nworkers, nmachine);
}

rill_status_t rill_topo_init(int local_rank, int local_size, rill_topo_t **topo_p)
{
    rill_status_t status;
    rill_topo_t *topo = NULL;
    hwloc_bitmap_t process_set = NULL;

    if (local_size < 1 || local_rank < 0 || local_rank >= local_size) {
        RILL_ERROR(RILL_LOG_TOPO, "local rank %d of %d: need 0 <= local_rank < local_size",
                   local_rank, local_size);
        status = RILL_ERR_INVALID_ARG;
        goto err;
    }
    if ((hwloc_get_api_version() >> 16) != (HWLOC_API_VERSION >> 16)) {
        RILL_ERROR(RILL_LOG_TOPO, "hwloc library API 0x%x does not match the headers' 0x%x",
                   hwloc_get_api_version(), (unsigned)HWLOC_API_VERSION);
        status = RILL_ERR_NOT_SUPPORTED;
        goto err;
    }
    status = rill_topo_register_params();
    if (status != RILL_SUCCESS && !(param_num_cores && param_bind && param_core_list))
        goto err;

    topo = calloc(1, sizeof(*topo));
    if (!topo) {
        status = RILL_ERR_NO_MEMORY;
        goto err;
    }
    topo->local_rank = local_rank;
    topo->local_size = local_size;
    topo->bind = rill_param_get_bool(param_bind);
    atomic_init(&topo->bind_warned, false);

    if (hwloc_topology_init(&topo->hw) != 0) {
        RILL_ERROR(RILL_LOG_TOPO, "hwloc_topology_init failed: %s", strerror(errno));
        status = RILL_ERR_NO_MEMORY;
        goto err_free_topo;
    }
    if (hwloc_topology_load(topo->hw) != 0) {
        RILL_ERROR(RILL_LOG_TOPO, "hwloc_topology_load failed: %s", strerror(errno));
        status = RILL_ERR_IO;
        goto err_destroy_hw;
    }
    hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(topo->hw);

    /* What the launcher gave: the union of the process's threads' bindings, within what
     * the OS (cgroup) allows. */
    process_set = hwloc_bitmap_alloc();
    if (!process_set) {
        status = RILL_ERR_NO_MEMORY;
        goto err_destroy_hw;
    }
    if (hwloc_get_cpubind(topo->hw, process_set, HWLOC_CPUBIND_PROCESS) != 0 ||
        !hwloc_bitmap_intersects(process_set, allowed))
        hwloc_bitmap_copy(process_set, allowed);
    else
        hwloc_bitmap_and(process_set, process_set, allowed);
    bool whole_machine = hwloc_bitmap_isincluded(allowed, process_set);

    int nmachine = hwloc_get_nbobjs_by_type(topo->hw, topo_core_type(topo->hw));
    if (nmachine <= 0) {
        RILL_ERROR(RILL_LOG_TOPO, "hwloc found no cores nor PUs");
        status = RILL_ERR_NOT_SUPPORTED;
        goto err_free_set;
    }
    topo->cores = calloc((size_t)nmachine, sizeof(*topo->cores));
    topo->sets = calloc((size_t)nmachine, sizeof(*topo->sets));
    topo->all = hwloc_bitmap_alloc();
    if (!topo->cores || !topo->sets || !topo->all) {
        status = RILL_ERR_NO_MEMORY;
        goto err_free_cores;
    }

    const char *list = rill_param_get_string(param_core_list);
    while (list && isspace((unsigned char)*list))
        list++;
    bool listed = list && *list;
    if (listed)
        status = topo_choose_listed(topo, rill_param_get_string(param_core_list), process_set);
    else
        status = topo_choose_auto(topo, process_set, whole_machine);
    if (status != RILL_SUCCESS)
        goto err_free_cores;
    for (int i = 0; i < topo->ncores; i++)
        hwloc_bitmap_or(topo->all, topo->all, topo->sets[i]);

    int requested = (int)rill_param_get_int(param_num_cores);
    topo->nworkers = requested > 0 ? requested : topo->ncores;
    topo->worker_core = malloc(sizeof(int) * (size_t)topo->nworkers);
    if (!topo->worker_core) {
        status = RILL_ERR_NO_MEMORY;
        goto err_free_cores;
    }
    for (int w = 0; w < topo->nworkers; w++)
        topo->worker_core[w] = w % topo->ncores;
    status = topo_compute_steal(topo);
    if (status != RILL_SUCCESS)
        goto err_free_workers;

    topo_warn_sharing(topo, requested, nmachine,
                      listed          ? CHOSEN_LIST
                      : whole_machine ? CHOSEN_SPLIT
                                      : CHOSEN_LAUNCHER);
    if (rill_log_topo.level >= 1) {
        char *pus = NULL;
        hwloc_bitmap_list_asprintf(&pus, topo->all);
        RILL_VERBOSE(RILL_LOG_TOPO, 1, "local rank %d of %d: %d workers on %d cores (PUs %s)%s",
                     local_rank, local_size, topo->nworkers, topo->ncores, pus ? pus : "?",
                     listed ? ", from runtime_core_list" : "");
        free(pus);
        for (int w = 0; w < topo->nworkers; w++) {
            char line[128];
            topo_worker_line(topo, w, line, sizeof(line));
            RILL_VERBOSE(RILL_LOG_TOPO, 1, "%s", line);
        }
    }
    hwloc_bitmap_free(process_set);
    *topo_p = topo;
    return RILL_SUCCESS;

err_free_workers:
    free(topo->worker_core);
err_free_cores:
    for (int i = 0; i < topo->ncores; i++)
        hwloc_bitmap_free(topo->sets[i]);
    free(topo->sets);
    free(topo->cores);
    hwloc_bitmap_free(topo->all);
err_free_set:
    hwloc_bitmap_free(process_set);
err_destroy_hw:
    hwloc_topology_destroy(topo->hw);
err_free_topo:
    free(topo);
err:
    return status;
}

static rill_status_t topo_bind(rill_topo_t *topo, hwloc_const_bitmap_t set, const char *who);

rill_status_t rill_topo_reserve(rill_topo_t *topo, int n, const char *who)
{
    if (n <= 0 || topo->nreserved > 0)
        return RILL_SUCCESS;
    if (n > 16)
        n = 16;
    topo->want_reserved = n;
    bool requested = rill_param_get_int(param_num_cores) > 0;
    if (requested || topo->ncores <= n) {
        /* not a warning: runtime_num_cores is the user's choice, and a process with as many
         * cores as GPUs has nothing to spare (rill_info --topology shows it) */
        RILL_VERBOSE(
            RILL_LOG_TOPO, 1,
            "%d %s thread(s) share cores with the workers: %s (this process has %d core%s); "
            "give each process at least %d more core(s) than it has GPUs, or leave "
            "runtime_num_cores at 0",
            n, who, requested ? "runtime_num_cores sets the workers" : "no core is left over",
            topo->ncores, topo->ncores == 1 ? "" : "s", 1);
        return RILL_SUCCESS;
    }
    /* the last cores of the process's set go to the service threads, the first ones keep
     * their workers (the main thread stays worker 0) */
    for (int i = 0; i < n; i++)
        topo->reserved[i] = topo->ncores - 1 - i;
    topo->nreserved = n;
    int nw = topo->ncores - n;
    if (topo->nworkers > nw)
        topo->nworkers = nw;
    free(topo->steal);
    topo->steal = NULL;
    return topo_compute_steal(topo);
}

rill_status_t rill_topo_bind_reserved(rill_topo_t *topo, int i)
{
    if (!topo->bind)
        return RILL_SUCCESS;
    if (i < 0 || i >= topo->nreserved)
        return rill_topo_bind_service(topo);
    return topo_bind(topo, topo->sets[topo->reserved[i]], "service");
}

int rill_topo_reserved_core(const rill_topo_t *topo, int i)
{
    if (!topo->bind || i < 0 || i >= topo->nreserved)
        return -1;
    return (int)hwloc_bitmap_first(topo->sets[topo->reserved[i]]);
}

void rill_topo_destroy(rill_topo_t **topo_p)
{
    rill_topo_t *topo = topo_p ? *topo_p : NULL;
    if (!topo)
        return;
    free(topo->steal);
    free(topo->worker_core);
    for (int i = 0; i < topo->ncores; i++)
        hwloc_bitmap_free(topo->sets[i]);
    free(topo->sets);
    free(topo->cores);
    hwloc_bitmap_free(topo->all);
    hwloc_topology_destroy(topo->hw);
    free(topo);
    *topo_p = NULL;
}

/* ---------------------------------------------------------------- queries and binding */

int rill_topo_nworkers(const rill_topo_t *topo)
{
    return topo->nworkers;
}

int rill_topo_worker_core(const rill_topo_t *topo, int w)
{
    if (!topo->bind || w < 0 || w >= topo->nworkers)
        return -1;
    return hwloc_bitmap_first(topo->sets[topo->worker_core[w]]);
}

/* A binding of thread who to set failed with errno err: warn once per process. */
static rill_status_t topo_bind_failed(rill_topo_t *topo, hwloc_const_bitmap_t set, const char *who,
                                      int err)
{
    /* pairs with nothing: the flag only keeps the warning to one line per process */
    if (!atomic_exchange_explicit(&topo->bind_warned, true, memory_order_relaxed)) {
        char *pus = NULL;
        hwloc_bitmap_list_asprintf(&pus, set);
        RILL_WARN(RILL_LOG_TOPO,
                  "cannot bind the %s thread to PUs %s: %s; threads run unbound (further "
                  "binding failures are not reported; runtime_bind = false silences this)",
                  who, pus ? pus : "?", strerror(err));
        free(pus);
    }
    return RILL_ERR_NOT_SUPPORTED;
}

static rill_status_t topo_bind(rill_topo_t *topo, hwloc_const_bitmap_t set, const char *who)
{
    if (hwloc_set_cpubind(topo->hw, set, HWLOC_CPUBIND_THREAD) == 0)
        return RILL_SUCCESS;
    return topo_bind_failed(topo, set, who, errno);
}

rill_status_t rill_topo_bind_worker(rill_topo_t *topo, int w)
{
    if (w < 0 || w >= topo->nworkers)
        return RILL_ERR_INVALID_ARG;
    if (!topo->bind)
        return RILL_SUCCESS;
    return topo_bind(topo, topo->sets[topo->worker_core[w]], "worker");
}

/* The union of the workers' cores (NULL when out of memory; the caller frees it). */
static hwloc_bitmap_t workers_set(const rill_topo_t *topo)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set)
        for (int w = 0; w < topo->nworkers; w++)
            hwloc_bitmap_or(set, set, topo->sets[topo->worker_core[w]]);
    return set;
}

rill_status_t rill_topo_bind_thread_to_workers(rill_topo_t *topo, pthread_t thread)
{
    if (!topo->bind)
        return RILL_SUCCESS;
    hwloc_bitmap_t set = workers_set(topo);
    if (!set)
        return RILL_ERR_NO_MEMORY;
    rill_status_t s = hwloc_set_thread_cpubind(topo->hw, thread, set, 0) == 0
                          ? RILL_SUCCESS
                          : topo_bind_failed(topo, set, "comm", errno);
    hwloc_bitmap_free(set);
    return s;
}

rill_status_t rill_topo_bind_service(rill_topo_t *topo)
{
    if (!topo->bind)
        return RILL_SUCCESS;
    return topo_bind(topo, topo->all, "service");
}

void rill_topo_steal_order(const rill_topo_t *topo, int w, int *order)
{
    int n = topo->nworkers;
    if (n < 2 || w < 0 || w >= n)
        return;
    memcpy(order, topo->steal + (size_t)w * (size_t)(n - 1), sizeof(int) * (size_t)(n - 1));
}

void rill_topo_summary(const rill_topo_t *topo, char *buf, size_t len)
{
    hwloc_topology_t hw = topo->hw;
    int npkg = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PACKAGE);
    int nnuma = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_NUMANODE);
    int ncore = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE);
    int npu = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PU);
    const char *version = hwloc_obj_get_info_by_name(hwloc_get_root_obj(hw), "hwlocVersion");
    char api[32];
    if (!version) {
        unsigned v = hwloc_get_api_version();
        snprintf(api, sizeof(api), "API %u.%u.%u", v >> 16, (v >> 8) & 0xff, v & 0xff);
        version = api;
    }
    snprintf(buf, len, "%d package%s, %d NUMA node%s, %d core%s, %d PU%s (hwloc %s)", npkg,
             npkg == 1 ? "" : "s", nnuma, nnuma == 1 ? "" : "s", ncore, ncore == 1 ? "" : "s", npu,
             npu == 1 ? "" : "s", version);
}

void rill_topo_print(const rill_topo_t *topo, FILE *out)
{
    char summary[192];
    rill_topo_summary(topo, summary, sizeof(summary));
    fprintf(out, "machine: %s\n", summary);
    char *pus = NULL;
    hwloc_bitmap_list_asprintf(&pus, topo->all);
    fprintf(out, "process: local rank %d of %d, %d worker%s on %d core%s (PUs %s), binding %s\n",
            topo->local_rank, topo->local_size, topo->nworkers, topo->nworkers == 1 ? "" : "s",
            topo->ncores, topo->ncores == 1 ? "" : "s", pus ? pus : "?", topo->bind ? "on" : "off");
    free(pus);
    for (int w = 0; w < topo->nworkers; w++) {
        char line[128];
        topo_worker_line(topo, w, line, sizeof(line));
        fprintf(out, "%s\n", line);
    }
    for (int i = 0; i < topo->nreserved; i++)
        fprintf(out, "  GPU manager %d: core with PU %d, reserved (no worker runs there)\n", i,
                (int)hwloc_bitmap_first(topo->sets[topo->reserved[i]]));
    hwloc_bitmap_t ws = topo->bind ? workers_set(topo) : NULL;
    char *wpus = NULL;
    if (ws && hwloc_bitmap_list_asprintf(&wpus, ws) >= 0)
        fprintf(out, "  comm thread (with several ranks): on the workers' cores (PUs %s)\n", wpus);
    free(wpus);
    hwloc_bitmap_free(ws);
    if (topo->want_reserved > topo->nreserved)
        fprintf(out, "  %d GPU manager(s) share the workers' cores (%s)\n", topo->want_reserved,
                rill_param_get_int(param_num_cores) > 0 ? "runtime_num_cores sets the workers"
                                                        : "no core to spare");
}
