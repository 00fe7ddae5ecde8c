/* rill_init / rill_fini: the user's entry points. This layer sits above every framework,
 * so it is where all of their parameters are registered before anything starts. */
#include "rill/info.h"
#include "rill/runtime.h"

#include <stdlib.h>

#include "core.h"
#include "dtd_internal.h"

/* Register the parameters of every framework, from the bottom layer up. */
static rill_status_t register_all_params(void)
{
    rill_status_t status = rill_core_register_params(); /* base, topology, comm, core */
    rill_status_t s = rill_dtd_register_params();
    return status != RILL_SUCCESS ? status : s;
}

rill_status_t rill_info_register_params(int *argc, char ***argv)
{
    /* register even when a source is bad, so a tool can still list every parameter */
    rill_status_t s = rill_params_load(argc, argv);
    rill_status_t r = register_all_params();
    return s != RILL_SUCCESS ? s : r;
}

rill_status_t rill_info_print_topology(FILE *out)
{
    /* the local rank/size the launcher gives, as the comm engine would find them */
    const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    const char *ls = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    rill_topo_t *topo;
    rill_status_t s = rill_topo_init(lr ? atoi(lr) : 0, ls ? atoi(ls) : 1, &topo);
    if (s != RILL_SUCCESS)
        return s;
    rill_topo_print(topo, out);
    rill_topo_destroy(&topo);
    return RILL_SUCCESS;
}

rill_status_t rill_init(int *argc, char ***argv, rill_context_t **ctx_p)
{
    if (!ctx_p)
        return RILL_ERR_INVALID_ARG;
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
    status = rill_dtd_init(ctx);
    if (status != RILL_SUCCESS) {
        rill_context_destroy(&ctx);
        return status;
    }
    *ctx_p = ctx;
    return RILL_SUCCESS;
}

rill_status_t rill_fini(rill_context_t **ctx_p)
{
    if (!ctx_p || !*ctx_p)
        return RILL_ERR_INVALID_ARG;
    rill_status_t status = rill_context_destroy(ctx_p);
    rill_dtd_fini();
    return status;
}
