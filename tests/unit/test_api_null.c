/* Every public call given NULL where it takes a pointer: a status call returns
 * RILL_ERR_INVALID_ARG, a query returns its documented "none" value (-1, 0, NULL), and
 * nothing crashes. Once with no context at all, then with a live context and NULL for the
 * other pointers (outputs, objects). A crash here names the call that made it (each call is
 * announced on stdout before it is made). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rill/channel.h"
#include "rill/ptg.h"
#include "rill/rill.h"
#if RILL_HAVE_CUDA
#include "rill/cuda.h"
#endif
#include "test_util.h"

static int checked, silent;

/* A refusal says why: something on stderr (most name the call). */
static void said_why(const char *call, char *err)
{
    if (!err || !err[0]) {
        printf("    SILENT: %s said nothing\n", call);
        silent++;
    }
    free(err);
}

/* a status call must also say why on stderr */
#define STATUS(call)                                                                               \
    do {                                                                                           \
        printf("  %s\n", #call);                                                                   \
        fflush(stdout);                                                                            \
        test_capture_t cap_;                                                                       \
        test_capture_begin(&cap_);                                                                 \
        rill_status_t s_ = (call);                                                                 \
        char *err_ = test_capture_end(&cap_);                                                      \
        CHECK_MSG(s_ == RILL_ERR_INVALID_ARG, "%s returned %d (%s), not RILL_ERR_INVALID_ARG",     \
                  #call, s_, rill_status_string(s_));                                              \
        said_why(#call, err_);                                                                     \
        checked++;                                                                                 \
    } while (0)
#define VALUE(call, none)                                                                          \
    do {                                                                                           \
        printf("  %s\n", #call);                                                                   \
        fflush(stdout);                                                                            \
        CHECK_MSG((call) == (none), "%s did not return %s", #call, #none);                         \
        checked++;                                                                                 \
    } while (0)

static int rank0(uint64_t key, void *arg)
{
    (void)key;
    (void)arg;
    return 0;
}

static rill_status_t nop(rill_task_t *t)
{
    (void)t;
    return RILL_SUCCESS;
}

/* the calls that take an object, each given none */
static void objects_null(rill_context_t *ctx)
{
    /* runtime.h */
    STATUS(rill_fini(NULL));
    rill_context_t *no_ctx = NULL;
    STATUS(rill_fini(&no_ctx));
    VALUE(rill_context_rank(NULL), -1);
    VALUE(rill_context_nranks(NULL), -1);
    VALUE(rill_context_local_nranks(NULL), -1);
    VALUE(rill_context_local_rank(NULL), -1);
    VALUE(rill_context_nworkers(NULL), -1);
    VALUE(rill_context_ngpus(NULL), -1);
    VALUE(rill_context_gpu_name(NULL, 0), NULL);
    VALUE(rill_context_gpu_status(NULL), NULL);
    rill_gpu_counters_t gc;
    STATUS(rill_context_gpu_counters(NULL, 0, &gc));
    STATUS(rill_context_gpu_counters(ctx, 0, NULL));
    char buf[64];
    STATUS(rill_context_allgather(NULL, buf, 1, buf));
    STATUS(rill_context_allgather(ctx, NULL, 1, buf));
    STATUS(rill_context_allgather(ctx, buf, 1, NULL));
    VALUE(rill_context_gpu_direct(NULL, 0, NULL), 0);
    VALUE(rill_context_node(NULL, 0), -1);
    VALUE(rill_context_wire(NULL, 0, NULL) == NULL, 1);
    STATUS(rill_taskpool_wait(NULL));
    STATUS(rill_taskpool_destroy(NULL));
    rill_taskpool_t *no_tp = NULL;
    STATUS(rill_taskpool_destroy(&no_tp));
    VALUE(rill_task_worker_id(NULL), -1);
    VALUE(rill_task_context(NULL), NULL);
    /* data.h */
    STATUS(rill_data_create(NULL, buf, 8, NULL));
    STATUS(rill_data_create(ctx, NULL, 8, NULL));
    STATUS(rill_data_destroy(NULL));
    rill_data_t *no_data = NULL;
    STATUS(rill_data_destroy(&no_data));
    VALUE(rill_data_ptr(NULL), NULL);
    VALUE(rill_data_size(NULL), 0);
    VALUE(rill_data_rank(NULL), -1);
    STATUS(rill_collection_create(NULL, 8, rank0, NULL, NULL));
    STATUS(rill_collection_create(ctx, 8, NULL, NULL, NULL));
    STATUS(rill_collection_destroy(NULL));
    rill_collection_t *no_dc = NULL;
    STATUS(rill_collection_destroy(&no_dc));
    STATUS(rill_collection_set_scratch(NULL));
    VALUE(rill_collection_in_use(NULL), 0);
    VALUE(rill_collection_rank_of(NULL, 0), -1);
    VALUE(rill_collection_data_of(NULL, 0), NULL);
    STATUS(rill_matrix_create(NULL, 8, 8, 4, 4, 1, 1, NULL));
    STATUS(rill_matrix_create(ctx, 8, 8, 4, 4, 1, 1, NULL));
    STATUS(rill_matrix_create_dist(ctx, 8, 8, 4, 4, 1, 1, RILL_MATRIX_CYCLIC, NULL));
    STATUS(rill_matrix_destroy(NULL));
    rill_matrix_t *no_A = NULL;
    STATUS(rill_matrix_destroy(&no_A));
    VALUE((int)rill_matrix_dist(NULL), -1);
    VALUE(rill_matrix_m(NULL), -1);
    VALUE(rill_matrix_n(NULL), -1);
    VALUE(rill_matrix_mb(NULL), -1);
    VALUE(rill_matrix_nb(NULL), -1);
    VALUE(rill_matrix_mt(NULL), -1);
    VALUE(rill_matrix_nt(NULL), -1);
    VALUE(rill_matrix_tile_rows(NULL, 0), -1);
    VALUE(rill_matrix_tile_cols(NULL, 0), -1);
    VALUE(rill_matrix_tile_rank(NULL, 0, 0), -1);
    VALUE(rill_matrix_tile(NULL, 0, 0), NULL);
    VALUE(rill_matrix_tile_ptr(NULL, 0, 0), NULL);
    VALUE(rill_matrix_tile_write(NULL, 0, 0), NULL);
    STATUS(rill_matrix_advise_gpus(NULL));
    VALUE(rill_matrix_collection(NULL), NULL);
    /* dtd.h */
    STATUS(rill_dtd_class_create(NULL, "c", nop, NULL));
    STATUS(rill_dtd_class_create(ctx, NULL, nop, NULL));
    STATUS(rill_dtd_class_add_body(NULL, RILL_BODY_CPU, nop));
    STATUS(rill_dtd_class_set_flops(NULL, NULL));
    STATUS(rill_dtd_class_set_status_handler(NULL, NULL));
    STATUS(rill_dtd_class_destroy(NULL));
    rill_dtd_class_t *no_cls = NULL;
    STATUS(rill_dtd_class_destroy(&no_cls));
    STATUS(rill_dtd_taskpool_create(NULL, NULL));
    STATUS(rill_dtd_taskpool_create(ctx, NULL));
    STATUS(rill_dtd_insert_task(NULL, NULL, 0, RILL_DTD_ARG_END));
    STATUS(rill_dtd_unpack_args(NULL));
    VALUE(rill_dtd_arg(NULL, 0), NULL);
    STATUS(rill_dtd_data_flush(NULL, NULL));
    STATUS(rill_dtd_data_discard(NULL, NULL));
    /* ptg.h */
    STATUS(rill_ptg_taskpool_create(NULL, NULL, NULL, NULL));
    STATUS(rill_ptg_taskpool_create(ctx, NULL, NULL, NULL));
    STATUS(rill_ptg_init(NULL));
    rill_ptg_deliver(NULL, 0, NULL, 0, 0); /* generated code's calls: no effect */
    rill_ptg_in_tile(NULL, 0, NULL, 0, 0);
    rill_ptg_in_datum(NULL, 0, NULL, 0);
    rill_ptg_new_datum(NULL, 0, NULL, 0);
    rill_ptg_write_datum(NULL, NULL, 0, 0);
    rill_ptg_new_tile(NULL, 0, NULL, 0, 0);
    rill_ptg_write_tile(NULL, NULL, 0, 0, 0);
    /* params.h */
    VALUE(rill_params_load(NULL, NULL), RILL_SUCCESS); /* no command line: allowed */
    rill_param_t *p;
    STATUS(rill_param_register_int(NULL, "h", 0, 0, 0, 1, &p));
    STATUS(rill_param_register_size(NULL, "h", 0, 0, 0, 1, &p));
    STATUS(rill_param_register_bool(NULL, "h", 0, false, &p));
    STATUS(rill_param_register_string(NULL, "h", 0, "x", &p));
    STATUS(rill_param_register_enum(NULL, "h", 0, NULL, "x", &p));
    STATUS(rill_param_register_enum("test_null_enum", "h", 0, NULL, "x", &p));
    VALUE(rill_param_get_int(NULL), 0);
    VALUE(rill_param_get_size(NULL), 0);
    VALUE(rill_param_get_bool(NULL), false);
    VALUE(rill_param_get_string(NULL), NULL);
    VALUE(rill_param_get_enum(NULL), 0);
    STATUS(rill_param_set_same_on_all_ranks(NULL));
    STATUS(rill_param_lookup(NULL, &p));
    VALUE(rill_param_lookup("runtime_num_cores", NULL), RILL_SUCCESS); /* does it exist */
    STATUS(rill_param_set(NULL, "1"));
    STATUS(rill_param_set("runtime_num_cores", NULL));
    STATUS(rill_params_info(0, NULL));
    /* info.h */
    VALUE(rill_info_register_params(NULL, NULL), RILL_ERR_BAD_STATE); /* a context runs */
    STATUS(rill_info_print_topology(NULL));
    STATUS(rill_info_print_devices(NULL));
    /* channel.h */
    void *vp;
    STATUS(rill_gpu_alloc(NULL, 0, 64, &vp));
    STATUS(rill_gpu_alloc(ctx, 0, 64, NULL));
    STATUS(rill_gpu_free(NULL, 0, buf));
    rill_regmem_t reg = { 0 };
    STATUS(rill_regmem_get(NULL, 0, buf, 8, &reg));
    STATUS(rill_regmem_get(ctx, 0, buf, 8, NULL));
    rill_sem_t sem = { 0 };
    STATUS(rill_sem_create(NULL, 0, &sem));
    STATUS(rill_sem_create(ctx, 0, NULL));
    STATUS(rill_sem_destroy(NULL, 0, &sem));
    STATUS(rill_sem_destroy(ctx, 0, NULL));
    rill_port_channel_t *pc = NULL;
    STATUS(rill_port_channel_create(NULL, 0, &reg, &reg, &sem, &sem, &pc));
    STATUS(rill_port_channel_create(ctx, 0, NULL, NULL, NULL, NULL, NULL));
    VALUE(rill_port_channel_destroy(NULL, &pc), RILL_SUCCESS); /* nothing to destroy */
    STATUS(rill_port_channel_destroy(ctx, NULL));
    rill_port_channel_dev_t pdev = rill_port_channel_device(NULL);
    (void)pdev;
    uint64_t pos;
    STATUS(rill_port_channel_push(NULL, 0, 0, 0, 8, &pos));
    STATUS(rill_port_channel_wait_flushed(NULL, 0, 1.0));
    rill_memory_channel_t *mc = NULL;
    STATUS(rill_memory_channel_create(NULL, 0, &reg, &reg, &sem, &sem, &mc));
    STATUS(rill_memory_channel_create(ctx, 0, NULL, NULL, NULL, NULL, NULL));
    VALUE(rill_memory_channel_destroy(NULL, &mc), RILL_SUCCESS);
    STATUS(rill_memory_channel_destroy(ctx, NULL));
    rill_memory_channel_dev_t mdev = rill_memory_channel_device(NULL);
    (void)mdev;
    STATUS(rill_sem_stream_wait(NULL, NULL, 1));
    STATUS(rill_sem_stream_write(NULL, NULL, 1));
    VALUE(rill_channel_device_error(NULL, 0, buf, sizeof(buf)), 0); /* no error to tell */
    rill_channel_counters_t cc;
    STATUS(rill_channel_counters(NULL, 0, &cc));
    STATUS(rill_channel_counters(ctx, 0, NULL));
#if RILL_HAVE_CUDA
    /* cuda.h */
    VALUE(rill_cuda_stream(NULL), NULL);
    VALUE(rill_cuda_cublas(NULL), NULL);
    VALUE(rill_cuda_cusolver(NULL), NULL);
    VALUE(rill_cuda_workspace(NULL, NULL), NULL);
    VALUE(rill_cuda_status_word(NULL), NULL);
    VALUE(rill_cuda_device(NULL), -1);
#endif
    VALUE(rill_status_string((rill_status_t)12345) != NULL, 1);
}

int main(int argc, char **argv)
{
    /* before any context: rill_init itself, and the tools' registration (no command line) */
    STATUS(rill_init(&argc, &argv, NULL));
    VALUE(rill_info_register_params(NULL, NULL), RILL_SUCCESS);
    rill_context_t *ctx;
    CHECK(rill_init(&argc, &argv, &ctx) == RILL_SUCCESS);
    objects_null(ctx); /* (the refusals' messages go to stderr) */
    CHECK(rill_fini(&ctx) == RILL_SUCCESS);
    printf("%d public calls given NULL: refused, none crashed; %d said nothing\n", checked, silent);
    return silent ? 1 : 0;
}
