/* Lifetimes of the objects around a taskpool: a datum, class, collection or matrix that a
 * taskpool not waited for still uses cannot be destroyed (RILL_ERR_BUSY, naming the
 * taskpool); a taskpool that never had a task can be destroyed without a wait; a second
 * rill_init is refused and leaves the first context working; rill_fini runs a taskpool
 * that was never waited for to the end and frees what was not destroyed. Runs with one
 * worker, so inserted tasks wait until the main thread runs them. */
#include <stdatomic.h>
#include <string.h>

#include "rill/rill.h"
#include "test_util.h"

static atomic_int ran;

static rill_status_t count_body(rill_task_t *task)
{
    (void)task;
    atomic_fetch_add(&ran, 1);
    return RILL_SUCCESS;
}

static void expect_error(const char *what, rill_status_t got, rill_status_t want, char *msg,
                         const char *needle)
{
    CHECK_MSG(got == want, "%s: status %d (%s), expected %d", what, got, rill_status_string(got),
              want);
    CHECK_MSG(strstr(msg, needle), "%s: message does not mention '%s': %s", what, needle, msg);
    free(msg);
}

static int rank_zero(uint64_t key, void *arg)
{
    (void)key;
    (void)arg;
    return 0;
}

int main(int argc, char **argv)
{
    rill_context_t *ctx, *ctx2 = NULL;
    CHECK(rill_param_set("runtime_num_cores", "1") == RILL_SUCCESS);
    CHECK(rill_init(&argc, &argv, &ctx) == RILL_SUCCESS);
    test_capture_t cap;

    /* a second rill_init is refused and changes nothing */
    test_capture_begin(&cap);
    rill_status_t s = rill_init(&argc, &argv, &ctx2);
    expect_error("second rill_init", s, RILL_ERR_BAD_STATE, test_capture_end(&cap),
                 "already initialised");
    CHECK(ctx2 == NULL);

    rill_dtd_class_t *cls;
    CHECK(rill_dtd_class_create(ctx, "count", count_body, &cls) == RILL_SUCCESS);
    double x = 1;
    rill_data_t *d;
    CHECK(rill_data_create(ctx, &x, sizeof(x), &d) == RILL_SUCCESS);
    rill_collection_t *dc;
    CHECK(rill_collection_create(ctx, 64, rank_zero, NULL, &dc) == RILL_SUCCESS);
    rill_matrix_t *A;
    test_capture_begin(&cap); /* a grid whose product wraps around in 32 bits */
    s = rill_matrix_create(ctx, 8, 8, 4, 4, 641, 6700417, &A);
    expect_error("grid overflow", s, RILL_ERR_MISMATCH, test_capture_end(&cap), "= 4294967297");
    CHECK(rill_matrix_create(ctx, 8, 8, 4, 4, 1, 1, &A) == RILL_SUCCESS);

    /* a taskpool with no task: destroyed without a wait, nothing leaks */
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == RILL_SUCCESS);
    CHECK(rill_taskpool_destroy(&tp) == RILL_SUCCESS && tp == NULL);

    /* objects in use by a taskpool not waited for */
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == RILL_SUCCESS);
    CHECK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INOUT, d, RILL_DTD_INPUT,
                               rill_collection_data_of(dc, 3), RILL_DTD_INPUT,
                               rill_matrix_tile(A, 1, 1), RILL_DTD_ARG_END) == RILL_SUCCESS);
    CHECK(atomic_load(&ran) == 0);
    test_capture_begin(&cap);
    rill_data_t *dd = d;
    s = rill_data_destroy(&dd);
    expect_error("datum in use", s, RILL_ERR_BUSY, test_capture_end(&cap), "used by taskpool 1");
    CHECK(dd == d);
    test_capture_begin(&cap);
    rill_dtd_class_t *cc = cls;
    s = rill_dtd_class_destroy(&cc);
    expect_error("class in use", s, RILL_ERR_BUSY, test_capture_end(&cap),
                 "class 'count' has tasks in taskpool 1");
    test_capture_begin(&cap);
    rill_collection_t *dcc = dc;
    s = rill_collection_destroy(&dcc);
    expect_error("collection in use", s, RILL_ERR_BUSY, test_capture_end(&cap),
                 "used by taskpool 1");
    test_capture_begin(&cap);
    rill_matrix_t *AA = A;
    s = rill_matrix_destroy(&AA);
    expect_error("matrix in use", s, RILL_ERR_BUSY, test_capture_end(&cap), "used by taskpool 1");
    test_capture_begin(&cap);
    s = rill_taskpool_destroy(&tp);
    expect_error("destroy before wait", s, RILL_ERR_BAD_STATE, test_capture_end(&cap),
                 "call rill_taskpool_wait first");
    /* nothing was lost: the task runs at the wait */
    CHECK(rill_taskpool_wait(tp) == RILL_SUCCESS);
    CHECK(atomic_load(&ran) == 1);
    /* the host tile to change between taskpools: a local tile's storage, NULL elsewhere */
    double *w = rill_matrix_tile_write(A, 1, 1);
    CHECK(w && w == rill_matrix_tile_ptr(A, 1, 1));
    CHECK(rill_matrix_tile_write(A, 2, 0) == NULL);
    /* once the taskpool ended everything may go, before the taskpool itself */
    CHECK(rill_matrix_destroy(&A) == RILL_SUCCESS);
    CHECK(rill_collection_destroy(&dc) == RILL_SUCCESS);
    CHECK(rill_taskpool_destroy(&tp) == RILL_SUCCESS);

    /* rill_fini runs a taskpool never waited for, and frees it and one not destroyed */
    rill_taskpool_t *waited;
    CHECK(rill_dtd_taskpool_create(ctx, &waited) == RILL_SUCCESS);
    CHECK(rill_dtd_insert_task(waited, cls, 0, RILL_DTD_INOUT, d, RILL_DTD_ARG_END) == 0);
    CHECK(rill_taskpool_wait(waited) == RILL_SUCCESS);
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == RILL_SUCCESS);
    for (int i = 0; i < 100; i++)
        CHECK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INOUT, d, RILL_DTD_ARG_END) == 0);
    test_capture_begin(&cap);
    s = rill_fini(&ctx);
    expect_error("fini with a running taskpool", s, RILL_SUCCESS, test_capture_end(&cap),
                 "was not waited for; running it to the end");
    CHECK(ctx == NULL);
    CHECK_MSG(atomic_load(&ran) == 102, "%d tasks ran, expected 102", atomic_load(&ran));
    CHECK(x == 1); /* count_body does not write: the datum is intact */
    CHECK(rill_dtd_class_destroy(&cls) == RILL_SUCCESS);
    CHECK(rill_data_destroy(&d) == RILL_SUCCESS);
    printf("lifetimes: busy objects refused, rill_fini ran what was left\n");
    return 0;
}
