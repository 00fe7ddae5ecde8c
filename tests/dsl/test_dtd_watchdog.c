/* A stalled wait says what it waits on: with runtime_watchdog_s = 1, a task that blocks
 * for 2.5 s makes the watchdog report the waiting taskpool and the unfinished writer.
 * With argument "main" (one worker) the main thread itself runs the slow task during its
 * wait: the report names that task. */
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "rill/rill.h"
#include "test_util.h"

static int slow_worker = -1;

static rill_status_t slow_body(rill_task_t *task)
{
    /* only a task on another worker can stall the main thread's wait: on worker 0 (the
     * main thread itself) return at once and the test tries again */
    slow_worker = rill_task_worker_id(task);
    if (slow_worker != 0)
        usleep(2500 * 1000);
    return RILL_SUCCESS;
}

static rill_status_t after_body(rill_task_t *task)
{
    (void)task;
    return RILL_SUCCESS;
}

static rill_status_t stuck_body(rill_task_t *task)
{
    (void)task;
    usleep(2500 * 1000);
    return RILL_SUCCESS;
}

/* One worker: the main thread runs the slow task inside its own wait. */
static int main_thread_runs_it(rill_context_t *ctx)
{
    rill_dtd_class_t *stuck;
    CHECK(rill_dtd_class_create(ctx, "stuck", stuck_body, &stuck) == RILL_SUCCESS);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == RILL_SUCCESS);
    double x = 0;
    rill_data_t *d;
    CHECK(rill_data_create(ctx, &x, sizeof(x), &d) == RILL_SUCCESS);
    test_capture_t cap;
    test_capture_begin(&cap);
    CHECK(rill_dtd_insert_task(tp, stuck, 0, RILL_DTD_INOUT, d, RILL_DTD_ARG_END) == 0);
    rill_status_t s = rill_taskpool_wait(tp);
    char *out = test_capture_end(&cap);
    fputs(out, stderr);
    CHECK(s == RILL_SUCCESS);
    CHECK_MSG(strstr(out, "the main thread waits for the end of a taskpool"),
              "the report does not say what the main thread waits for");
    CHECK_MSG(strstr(out, "worker 0 (the main thread) runs a 'stuck' task"),
              "the report does not name the task the main thread runs");
    free(out);
    rill_taskpool_destroy(&tp);
    rill_data_destroy(&d);
    rill_dtd_class_destroy(&stuck);
    CHECK(rill_fini(&ctx) == RILL_SUCCESS);
    printf("the watchdog named the task the main thread runs\n");
    return 0;
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    bool on_main = argc > 1 && !strcmp(argv[1], "main");
    CHECK(rill_param_set("runtime_watchdog_s", "1") == RILL_SUCCESS);
    if (on_main) {
        CHECK(rill_param_set("runtime_num_cores", "1") == RILL_SUCCESS);
        CHECK(rill_init(&argc, &argv, &ctx) == RILL_SUCCESS);
        return main_thread_runs_it(ctx);
    }
    CHECK(rill_param_set("runtime_num_cores", "2") == RILL_SUCCESS);
    CHECK(rill_init(&argc, &argv, &ctx) == RILL_SUCCESS);
    rill_dtd_class_t *slow, *after;
    CHECK(rill_dtd_class_create(ctx, "slow", slow_body, &slow) == RILL_SUCCESS);
    CHECK(rill_dtd_class_create(ctx, "after", after_body, &after) == RILL_SUCCESS);
    double x = 0;
    rill_data_t *d;
    CHECK(rill_data_create(ctx, &x, sizeof(x), &d) == RILL_SUCCESS);
    char *out = NULL;
    for (int attempt = 0; attempt < 10 && slow_worker != 1; attempt++) {
        free(out);
        rill_taskpool_t *tp;
        CHECK(rill_dtd_taskpool_create(ctx, &tp) == RILL_SUCCESS);
        test_capture_t cap;
        test_capture_begin(&cap);
        CHECK(rill_dtd_insert_task(tp, slow, 0, RILL_DTD_INOUT, d, RILL_DTD_ARG_END) == 0);
        usleep(100 * 1000); /* let worker 1 take it */
        CHECK(rill_dtd_insert_task(tp, after, 0, RILL_DTD_INOUT, d, RILL_DTD_ARG_END) == 0);
        rill_status_t s = rill_taskpool_wait(tp);
        out = test_capture_end(&cap);
        CHECK(s == RILL_SUCCESS);
        rill_taskpool_destroy(&tp);
    }
    CHECK_MSG(slow_worker == 1, "the slow task never ran on worker 1");
    fputs(out, stderr);
    CHECK_MSG(strstr(out, "watchdog: no task completed for"), "no watchdog report");
    CHECK_MSG(strstr(out, "last local writer 'after'"),
              "the report does not name the waiting task");
    free(out);
    rill_data_destroy(&d);
    rill_dtd_class_destroy(&slow);
    rill_dtd_class_destroy(&after);
    CHECK(rill_fini(&ctx) == RILL_SUCCESS);
    printf("the watchdog reported the stalled wait\n");
    return 0;
}
