/* rill_init / rill_fini: the user's entry points. This layer sits above every framework,
 * so it is where all of their parameters are registered before anything starts. */
#include "rill/info.h"
#include "rill/ptg.h"
#include "rill/runtime.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "core.h"
#include "data_internal.h"
#include "params_internal.h"
#include "cuda_device.h"
#include "dtd_internal.h"
#include "ptg/ptg_internal.h"
#include "manager.h"
#include "proxy.h"
#include "host_channel.h"
#include "remote_dep.h"

/* Register the parameters of every framework, from the bottom layer up. */
static rill_status_t register_all_params(void)
{
    rill_status_t status = rill_core_register_params(); /* base, topology, comm, core */
    rill_status_t s = rill_gpu_register_params();
    if (status == RILL_SUCCESS)
        status = s;
    s = rill_dtd_register_params();
    if (status == RILL_SUCCESS)
        status = s;
    s = rill_ptg_register_params();
    return status != RILL_SUCCESS ? status : s;
}

static atomic_bool context_live;

rill_status_t rill_info_register_params(int *argc, char ***argv)
{
    /* the context's threads read the parameters' values: they are not reloaded under them */
    if (atomic_load(&context_live)) {
        RILL_ERROR(RILL_LOG_RUNTIME, "rill_info_register_params: a context is running (call "
                                     "it before rill_init or after rill_fini)");
        return RILL_ERR_BAD_STATE;
    }
    /* register even when a source is bad, so a tool can still list every parameter */
    rill_status_t s = rill_params_load(argc, argv);
    rill_status_t r = register_all_params();
    return s != RILL_SUCCESS ? s : r;
}

rill_status_t rill_info_print_topology(FILE *out)
{
    if (!out)
        return rill_arg_null("rill_info_print_topology", "the stream (out)");
    /* this process's place on its node, from the launcher, without starting MPI */
    int local_rank, local_size;
    rill_launcher_local(&local_rank, &local_size);
    rill_topo_t *topo;
    rill_status_t s = rill_topo_init(local_rank, local_size, &topo);
    if (s != RILL_SUCCESS)
        return s;
    /* the GPUs rill_init would use, and the cores their managers would take */
    rill_cuda_gpu_info_t gpus[RILL_CUDA_MAX_GPUS];
    int ngpus = 0;
    char why[192];
    if (rill_cuda_select(local_rank, local_size, gpus, RILL_CUDA_MAX_GPUS, &ngpus, why,
                         sizeof(why)) == RILL_SUCCESS &&
        ngpus > 0)
        rill_topo_reserve(topo, ngpus, "GPU manager");
    rill_topo_print(topo, out);
    for (int i = 0; i < ngpus; i++)
        fprintf(out, "  GPU %d (%s, PCI %s): nearest cores %s, NUMA node %d\n", gpus[i].ordinal,
                gpus[i].name, gpus[i].pci_bus_id, gpus[i].nearest_cores, gpus[i].numa_node);
    if (ngpus == 0)
        fprintf(out, "  no GPU: %s\n", why);
    rill_topo_destroy(&topo);
    return RILL_SUCCESS;
}

rill_status_t rill_info_print_devices(FILE *out)
{
    if (!out)
        return rill_arg_null("rill_info_print_devices", "the stream (out)");
    rill_cuda_print_devices(out);
    return RILL_SUCCESS;
}

static rill_status_t init_context(int *argc, char ***argv, rill_context_t **ctx_p);

/* Collective: RILL_ERR_INVALID_ARG on every rank, each naming its own value, when a
 * parameter marked same on all ranks (rill_param_set_same_on_all_ranks: those from which
 * each rank decides alone how a tile moves between it and another rank) differs between
 * ranks: two ranks with different values would each wait for a message the other never
 * sends. The min and max of the values' hashes, the same on all ranks, decide; every rank
 * registered the same parameters (the same build), so the lists line up. */
static rill_status_t params_agree(rill_context_t *ctx)
{
    if (ctx->nranks == 1)
        return RILL_SUCCESS;
    size_t n = 0, np = rill_params_count();
    rill_param_info_t *info = calloc(np ? np : 1, sizeof(*info));
    uint64_t *h = calloc(3 * (np ? np : 1), sizeof(*h));
    if (!info || !h) {
        free(info);
        free(h);
        return RILL_ERR_NO_MEMORY; /* (every rank's allocation is small: none fails alone) */
    }
    for (size_t i = 0; i < np; i++) {
        if (rill_params_info(i, &info[n]) != RILL_SUCCESS || !info[n].same_on_all_ranks)
            continue;
        h[n] = 14695981039346656037ull; /* FNV-1a of the value as text */
        for (const char *c = info[n].value; *c; c++)
            h[n] = (h[n] ^ (unsigned char)*c) * 1099511628211ull;
        n++;
    }
    uint64_t *lo = h + np, *hi = h + 2 * np;
    rill_status_t s =
        n ? rill_context_allreduce_u64(ctx, h, lo, (int)n, RILL_COMM_MIN) : RILL_SUCCESS;
    if (s == RILL_SUCCESS && n)
        s = rill_context_allreduce_u64(ctx, h, hi, (int)n, RILL_COMM_MAX);
    if (s == RILL_SUCCESS)
        for (size_t k = 0; k < n; k++) {
            if (lo[k] == hi[k])
                continue;
            RILL_ERROR(RILL_LOG_RUNTIME,
                       "rill_init: parameter %s differs between ranks (rank %d: %s, from %s%s%s): "
                       "every rank must use the same value, as each decides alone how tiles "
                       "move between ranks; set it the same way for all of them (a RILL_MCA_ "
                       "variable exported to some ranks only, or --mca given to one program "
                       "of an MPMD launch, differs so)",
                       info[k].name, ctx->rank, info[k].value,
                       rill_param_source_string(info[k].source), info[k].source_detail ? " " : "",
                       info[k].source_detail ? info[k].source_detail : "");
            s = RILL_ERR_INVALID_ARG;
        }
    free(info);
    free(h);
    return s;
}

/* The process's one context (context_live, above): a second would start a second set of
 * workers and a second comm thread on the same cores and MPI, and share the DTD layer's
 * pools. */

rill_status_t rill_init(int *argc, char ***argv, rill_context_t **ctx_p)
{
    if (!ctx_p)
        return rill_arg_null("rill_init", "ctx_p (where the context goes)");
    if (atomic_exchange(&context_live, true)) {
        RILL_ERROR(RILL_LOG_RUNTIME,
                   "rill_init: Rill is already initialised in this process; there is one "
                   "context per process: use the one rill_init returned (or call rill_fini on "
                   "it first)");
        return RILL_ERR_BAD_STATE;
    }
    rill_status_t status = init_context(argc, argv, ctx_p);
    if (status != RILL_SUCCESS)
        atomic_store(&context_live, false);
    return status;
}

static rill_status_t init_context(int *argc, char ***argv, rill_context_t **ctx_p)
{
    rill_status_t status = rill_params_load(argc, argv);
    if (status != RILL_SUCCESS)
        return status;
    /* a bad value was reported by name: refuse to start rather than run with a default
     * the user did not ask for */
    status = register_all_params();
    if (status != RILL_SUCCESS) {
        RILL_ERROR(RILL_LOG_RUNTIME, "rill_init: fix the parameter value(s) reported above");
        return status;
    }
    rill_context_t *ctx;
    status = rill_context_create(argc, argv, &ctx);
    if (status != RILL_SUCCESS)
        return status;
    if (ctx->rank == 0)
        rill_params_warn_unknown();
    rill_params_log(); /* params_verbose: what this rank runs with */
    /* the GPU managers: every GPU of this process up (or a clear error) before tasks (the
     * first collective: a rank whose runtime failed to start meets it in rill_context_create) */
    status = rill_init_agree(ctx->comm, rill_gpu_managers_start(ctx), RILL_INIT_STEP_GPUS);
    if (status == RILL_SUCCESS)
        status = params_agree(ctx); /* the same result on every rank */
    if (status == RILL_SUCCESS) {
        /* the GPUs of the node's ranks reach each other's memory (CUDA IPC, checked) */
        status = rill_gpu_channels_connect(ctx);
        if (status == RILL_SUCCESS) /* a trace path that cannot be written fails here */
            status = rill_trace_open();
        if (status == RILL_SUCCESS) /* so does a report's */
            status = rill_report_open(ctx, argc ? *argc : 0, argv ? *argv : NULL);
        if (status == RILL_SUCCESS) /* the remote dependencies' message tags */
            status = rill_rdep_init(ctx);
        if (status == RILL_SUCCESS) /* the host channels' message tag */
            status = rill_hchan_init(ctx);
        if (status == RILL_SUCCESS)
            status = rill_dtd_init(ctx);
        if (status == RILL_SUCCESS)
            status = rill_ptg_init(ctx); /* its message tag: every rank in the same order */
        /* every rank installs its message handlers before any rank may send to it: a rank
         * that finished rill_init early would otherwise reach a slower one before its DTD
         * handler exists (the message is held, but counted and warned about) */
        status = rill_init_agree(ctx->comm, status, RILL_INIT_STEP_LAYERS);
    }
    if (status != RILL_SUCCESS) {
        rill_report_discard(ctx);
        rill_context_destroy(&ctx);
        rill_dtd_fini();
        rill_rdep_fini();
        rill_hchan_fini();
        return status;
    }
    rill_watchdog_init_done(ctx);
    *ctx_p = ctx;
    return RILL_SUCCESS;
}

rill_status_t rill_fini(rill_context_t **ctx_p)
{
    if (!ctx_p || !*ctx_p) {
        RILL_ERROR(RILL_LOG_RUNTIME, "rill_fini: needs the address of a context from rill_init");
        return RILL_ERR_INVALID_ARG;
    }
    if (rill_worker_check_main("rill_fini", false) != RILL_SUCCESS)
        return RILL_ERR_BAD_STATE;
    rill_status_t status = rill_context_destroy(ctx_p);
    rill_host_tile_cache_drain(); /* the page-locked tile buffers kept for reuse */
    rill_gpu_channels_forget();
    rill_ptg_fini();
    rill_status_t s = rill_dtd_fini(); /* a lost DOT graph fails the run */
    rill_rdep_fini();
    rill_hchan_fini();
    if (status == RILL_SUCCESS)
        status = s;
    atomic_store(&context_live, false);
    return status;
}
