/* A taskpool's mistakes give clear errors and lose nothing: NULL tiles, wrong argument
 * kinds, too many arguments, waiting twice, inserting after the wait, destroying before
 * it, a failing body, a collection made scratch too late; and the insertion window bounds
 * pending tasks. */
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

static rill_status_t failing_body(rill_task_t *task)
{
    (void)task;
    return RILL_ERR_NUMERIC;
}

static int zero_rank(uint64_t key, void *arg)
{
    (void)key;
    (void)arg;
    return 0;
}

static void expect_error(const char *what, rill_status_t got, rill_status_t want, char *msg,
                         const char *needle)
{
    CHECK_MSG(got == want, "%s: status %d, expected %d", what, got, want);
    CHECK_MSG(strstr(msg, needle), "%s: message does not mention '%s': %s", what, needle, msg);
    free(msg);
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    CHECK(rill_param_set("dtd_window_size", "16") == RILL_SUCCESS);
    CHECK(rill_init(&argc, &argv, &ctx) == RILL_SUCCESS);
    rill_dtd_class_t *cls, *bad;
    CHECK(rill_dtd_class_create(ctx, "count", count_body, &cls) == RILL_SUCCESS);
    CHECK(rill_dtd_class_create(ctx, "failing", failing_body, &bad) == RILL_SUCCESS);
    double x = 1;
    rill_data_t *d;
    test_capture_t cap;

    test_capture_begin(&cap);
    rill_status_t s = rill_data_create(ctx, NULL, 8, &d);
    expect_error("NULL data pointer", s, RILL_ERR_INVALID_ARG, test_capture_end(&cap), "NULL");
    CHECK(rill_data_create(ctx, &x, sizeof(x), &d) == RILL_SUCCESS);

    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == RILL_SUCCESS);

    test_capture_begin(&cap);
    s = rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INOUT, (rill_data_t *)NULL, RILL_DTD_ARG_END);
    expect_error("NULL tile", s, RILL_ERR_INVALID_ARG, test_capture_end(&cap),
                 "INOUT tile given as NULL");

    test_capture_begin(&cap);
    s = rill_dtd_insert_task(tp, cls, 0, 42, d, RILL_DTD_ARG_END);
    expect_error("bad kind", s, RILL_ERR_INVALID_ARG, test_capture_end(&cap), "has kind 0x2a");

    rill_data_t *arr[40] = { d, d, NULL };
    test_capture_begin(&cap);
    s = rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INPUT | RILL_DTD_ARRAY, 3, arr, RILL_DTD_ARG_END);
    expect_error("NULL tile in an array", s, RILL_ERR_INVALID_ARG, test_capture_end(&cap),
                 "array of 3 INPUT tiles with a NULL tile");
    test_capture_begin(&cap);
    s = rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INOUT | RILL_DTD_ARRAY, -1, arr,
                             RILL_DTD_ARG_END);
    expect_error("negative array count", s, RILL_ERR_INVALID_ARG, test_capture_end(&cap),
                 "with a negative count");
    for (int i = 0; i < 40; i++)
        arr[i] = d;
    test_capture_begin(&cap);
    s = rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INPUT, d, RILL_DTD_INPUT | RILL_DTD_ARRAY, 32,
                             arr, RILL_DTD_ARG_END);
    expect_error("array too long", s, RILL_ERR_INVALID_ARG, test_capture_end(&cap),
                 "more tiles than fit");
    test_capture_begin(&cap);
    s = rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INPUT | RILL_DTD_ARRAY | RILL_DTD_AFFINITY, 1,
                             arr, RILL_DTD_ARG_END);
    expect_error("affinity on an array", s, RILL_ERR_INVALID_ARG, test_capture_end(&cap),
                 "| RILL_DTD_ARRAY");

    test_capture_begin(&cap);
    s = rill_dtd_insert_task(tp, cls, 0, RILL_DTD_VALUE | RILL_DTD_AFFINITY, sizeof(x), &x,
                             RILL_DTD_ARG_END);
    expect_error("affinity on a value", s, RILL_ERR_INVALID_ARG, test_capture_end(&cap),
                 "allowed: RILL_DTD_VALUE");

    test_capture_begin(&cap);
    /* 33 tile arguments, one more than RILL_DTD_MAX_ARGS */
    s = rill_dtd_insert_task(
        tp, cls, 0, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d,
        RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT,
        d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d,
        RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT,
        d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d,
        RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT,
        d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_INPUT, d,
        RILL_DTD_INPUT, d, RILL_DTD_INPUT, d, RILL_DTD_ARG_END);
    expect_error("too many args", s, RILL_ERR_INVALID_ARG, test_capture_end(&cap),
                 "more than 32 arguments");

    /* the taskpool is still usable after refused insertions; the window (16) bounds
     * what is pending: inserted - completed never exceeds it */
    int inserted = 0;
    for (int i = 0; i < 1000; i++) {
        CHECK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INOUT, d, RILL_DTD_ARG_END) ==
              RILL_SUCCESS);
        inserted++;
        CHECK_MSG(inserted - atomic_load(&ran) <= 16, "%d tasks pending with a window of 16",
                  inserted - atomic_load(&ran));
    }
    test_capture_begin(&cap);
    s = rill_taskpool_destroy(&tp);
    expect_error("destroy before wait", s, RILL_ERR_BAD_STATE, test_capture_end(&cap),
                 "call rill_taskpool_wait first");
    CHECK(tp != NULL);
    CHECK(rill_taskpool_wait(tp) == RILL_SUCCESS);
    CHECK(atomic_load(&ran) == 1000);

    test_capture_begin(&cap);
    s = rill_taskpool_wait(tp);
    expect_error("wait twice", s, RILL_ERR_BAD_STATE, test_capture_end(&cap), "already waited for");
    test_capture_begin(&cap);
    s = rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INOUT, d, RILL_DTD_ARG_END);
    expect_error("insert after wait", s, RILL_ERR_BAD_STATE, test_capture_end(&cap),
                 "already waited for");
    CHECK(rill_taskpool_destroy(&tp) == RILL_SUCCESS && tp == NULL);

    /* a failing body fails the taskpool, names the task, and its successors still run */
    atomic_store(&ran, 0);
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == RILL_SUCCESS);
    test_capture_begin(&cap); /* another worker may run the failing task at once */
    CHECK(rill_dtd_insert_task(tp, bad, 0, RILL_DTD_INOUT, d, RILL_DTD_ARG_END) == RILL_SUCCESS);
    CHECK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INOUT, d, RILL_DTD_ARG_END) == RILL_SUCCESS);
    s = rill_taskpool_wait(tp);
    expect_error("failing body", s, RILL_ERR_TASK, test_capture_end(&cap), "task 'failing' (#");
    CHECK(atomic_load(&ran) == 1);
    CHECK(rill_taskpool_destroy(&tp) == RILL_SUCCESS);

    rill_data_destroy(&d);
    rill_dtd_class_destroy(&cls);
    rill_dtd_class_destroy(&bad);

    /* a matrix distribution that does not exist is refused (and nothing is created) */
    rill_matrix_t *A = NULL;
    CHECK(rill_matrix_create_dist(ctx, 8, 8, 4, 4, 1, 1, (rill_matrix_dist_t)7, &A) ==
              RILL_ERR_INVALID_ARG &&
          A == NULL);
    CHECK(rill_matrix_create_dist(ctx, 8, 8, 4, 4, 1, 1, RILL_MATRIX_DIAGONAL, &A) ==
              RILL_SUCCESS &&
          rill_matrix_dist(A) == RILL_MATRIX_DIAGONAL && rill_matrix_tile_rank(A, 1, 1) == 0);
    CHECK(rill_matrix_destroy(&A) == RILL_SUCCESS);
    CHECK(rill_matrix_create_dist(ctx, 8, 8, 4, 4, 1, 1, RILL_MATRIX_SKEWED, &A) == RILL_SUCCESS &&
          rill_matrix_dist(A) == RILL_MATRIX_SKEWED && rill_matrix_tile_rank(A, 1, 1) == 0);
    CHECK(rill_matrix_destroy(&A) == RILL_SUCCESS);

    /* a scratch collection: set before its first datum, refused after */
    rill_collection_t *dc;
    CHECK(rill_collection_create(ctx, 1 << 20, zero_rank, NULL, &dc) == RILL_SUCCESS);
    CHECK(rill_collection_set_scratch(NULL) == RILL_ERR_INVALID_ARG);
    CHECK(rill_collection_set_scratch(dc) == RILL_SUCCESS);
    rill_data_t *sd = rill_collection_data_of(dc, 3);
    CHECK(sd && rill_data_ptr(sd) && rill_data_size(sd) == 1 << 20);
    ((char *)rill_data_ptr(sd))[(1 << 20) - 1] = 1; /* the storage is there, unzeroed */
    test_capture_begin(&cap);
    s = rill_collection_set_scratch(dc);
    expect_error("scratch after a datum", s, RILL_ERR_BAD_STATE, test_capture_end(&cap),
                 "already has data");
    CHECK(rill_collection_destroy(&dc) == RILL_SUCCESS);
    CHECK(rill_fini(&ctx) == RILL_SUCCESS);
    printf("DTD error paths: all reported\n");
    return 0;
}
