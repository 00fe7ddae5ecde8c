/* The calls that build, wait for or end the runtime's work, made from inside a task body:
 * each is refused with RILL_ERR_BAD_STATE and a message saying so, and changes nothing (the
 * objects stay valid, the run ends normally). rill_fini from a body once returned success
 * and freed the context under the running tasks. Run with 1 worker (the bodies run on the
 * main thread, inside its wait) and with 2 (they may run on the other worker). */
#include <stdatomic.h>
#include <string.h>

#include "rill/rill.h"
#include "test_util.h"

static rill_context_t *g_ctx;
static rill_taskpool_t *g_tp;
static rill_dtd_class_t *g_cls;
static rill_data_t *g_data;
static rill_collection_t *g_dc;
static rill_matrix_t *g_A;
static atomic_int refused, bodies;

static void expect_refused(rill_status_t s)
{
    if (s == RILL_ERR_BAD_STATE)
        atomic_fetch_add(&refused, 1);
}

enum { NCALLS = 11 };

static rill_status_t reenter(rill_task_t *task)
{
    (void)task;
    rill_context_t *ctx = g_ctx;
    rill_taskpool_t *tp = g_tp, *tp2 = NULL;
    rill_dtd_class_t *cls = g_cls;
    rill_data_t *d = g_data;
    rill_collection_t *dc = g_dc;
    rill_matrix_t *A = g_A;
    expect_refused(rill_fini(&ctx));
    expect_refused(rill_taskpool_wait(tp));
    expect_refused(rill_taskpool_destroy(&tp));
    expect_refused(rill_dtd_taskpool_create(g_ctx, &tp2));
    expect_refused(rill_dtd_insert_task(g_tp, g_cls, 0, RILL_DTD_ARG_END));
    expect_refused(rill_dtd_data_flush(g_tp, g_data));
    expect_refused(rill_dtd_data_discard(g_tp, g_data));
    expect_refused(rill_dtd_class_destroy(&cls));
    expect_refused(rill_data_destroy(&d));
    expect_refused(rill_collection_destroy(&dc));
    expect_refused(rill_matrix_destroy(&A));
    /* refused calls leave their objects alone */
    if (ctx != g_ctx || tp != g_tp || tp2 || cls != g_cls || d != g_data || dc != g_dc || A != g_A)
        return RILL_ERR_TASK;
    atomic_fetch_add(&bodies, 1);
    return RILL_SUCCESS;
}

static int zero(uint64_t key, void *arg)
{
    (void)key;
    (void)arg;
    return 0;
}

int main(int argc, char **argv)
{
    CHECK(rill_init(&argc, &argv, &g_ctx) == RILL_SUCCESS);
    CHECK(rill_dtd_class_create(g_ctx, "reenter", reenter, &g_cls) == RILL_SUCCESS);
    static double x;
    CHECK(rill_data_create(g_ctx, &x, sizeof(x), &g_data) == RILL_SUCCESS);
    CHECK(rill_collection_create(g_ctx, sizeof(double), zero, NULL, &g_dc) == RILL_SUCCESS);
    CHECK(rill_matrix_create(g_ctx, 8, 8, 4, 4, 1, 1, &g_A) == RILL_SUCCESS);
    CHECK(rill_dtd_taskpool_create(g_ctx, &g_tp) == RILL_SUCCESS);
    test_capture_t cap;
    test_capture_begin(&cap);
    const int n = 4;
    for (int i = 0; i < n; i++)
        CHECK(rill_dtd_insert_task(g_tp, g_cls, 0, RILL_DTD_ARG_END) == RILL_SUCCESS);
    rill_status_t s = rill_taskpool_wait(g_tp);
    char *out = test_capture_end(&cap);
    CHECK_MSG(s == RILL_SUCCESS && atomic_load(&bodies) == n && atomic_load(&refused) == n * NCALLS,
              "wait %d, %d bodies of %d, %d calls refused of %d\n%s", s, atomic_load(&bodies), n,
              atomic_load(&refused), n * NCALLS, out);
    CHECK_MSG(strstr(out, "rill_fini must be called from the main thread") &&
                  (strstr(out, "called from a task body") || strstr(out, "from a worker thread")),
              "the refusal does not say why:\n%s", out);
    free(out);
    CHECK(rill_taskpool_destroy(&g_tp) == RILL_SUCCESS);
    CHECK(rill_matrix_destroy(&g_A) == RILL_SUCCESS);
    CHECK(rill_collection_destroy(&g_dc) == RILL_SUCCESS);
    CHECK(rill_data_destroy(&g_data) == RILL_SUCCESS);
    CHECK(rill_dtd_class_destroy(&g_cls) == RILL_SUCCESS);
    CHECK(rill_fini(&g_ctx) == RILL_SUCCESS);
    printf("%d calls from task bodies refused, the run ended normally\n", n * NCALLS);
    return 0;
}
