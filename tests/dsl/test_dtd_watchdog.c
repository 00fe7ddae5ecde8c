/* A stalled wait says what it waits on: with runtime_watchdog_s = 1, a task that blocks
 * for 2.5 s makes the watchdog report the waiting taskpool and the unfinished writer.
 * With argument "main" (one worker) the main thread itself runs the slow task during its
 * wait: the report names that task. With argument "init", the same stall as if inside
 * rill_init (where the other ranks may take seconds to start their GPUs) is not reported
 * within runtime_watchdog_init_s, and is once that is 0. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "rill/rill.h"
#include "test_util.h"

#include "core.h" /* internal: the watchdog's state, to stand inside rill_init */

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

/* A taskpool whose wait stalls 2.5 s on a task that worker 1 runs: what stderr got. */
static char *stalled_wait(rill_context_t *ctx, rill_dtd_class_t *slow, rill_dtd_class_t *after,
                          rill_data_t *d)
{
    char *out = NULL;
    slow_worker = -1;
    for (int attempt = 0; attempt < 10 && slow_worker != 1; attempt++) {
        free(out);
        rill_taskpool_t *tp;
        if (rill_dtd_taskpool_create(ctx, &tp) != RILL_SUCCESS)
            return NULL;
        test_capture_t cap;
        test_capture_begin(&cap);
        rill_status_t s = rill_dtd_insert_task(tp, slow, 0, RILL_DTD_INOUT, d, RILL_DTD_ARG_END);
        usleep(100 * 1000); /* let worker 1 take it */
        if (s == RILL_SUCCESS)
            s = rill_dtd_insert_task(tp, after, 0, RILL_DTD_INOUT, d, RILL_DTD_ARG_END);
        rill_status_t w = rill_taskpool_wait(tp);
        out = test_capture_end(&cap);
        rill_taskpool_destroy(&tp);
        if (s != RILL_SUCCESS || w != RILL_SUCCESS) {
            free(out);
            return NULL;
        }
    }
    if (slow_worker != 1) {
        fprintf(stderr, "the slow task never ran on worker 1\n");
        free(out);
        return NULL;
    }
    return out;
}

/* As if inside rill_init (on), with runtime_watchdog_init_s = init_s; under the watchdog's
 * lock, which its thread holds while it reads them. */
static void set_in_init(rill_context_t *ctx, bool on, uint64_t init_s)
{
    pthread_mutex_lock(&ctx->watchdog.lock);
    ctx->watchdog.in_init = on;
    ctx->watchdog_init_ns = init_s * 1000000000ull;
    pthread_mutex_unlock(&ctx->watchdog.lock);
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    bool on_main = argc > 1 && !strcmp(argv[1], "main");
    bool in_init = argc > 1 && !strcmp(argv[1], "init");
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
    if (in_init) {
        set_in_init(ctx, true, 120); /* runtime_watchdog_init_s's default */
        char *quiet = stalled_wait(ctx, slow, after, d);
        CHECK(quiet);
        fputs(quiet, stderr);
        CHECK_MSG(!strstr(quiet, "watchdog: no task completed for"),
                  "a 2.5 s wait inside rill_init was reported (runtime_watchdog_init_s is 120)");
        free(quiet);
        set_in_init(ctx, true, 0); /* runtime_watchdog_init_s = 0: runtime_watchdog_s */
    }
    char *out = stalled_wait(ctx, slow, after, d);
    CHECK(out);
    if (in_init)
        set_in_init(ctx, false, 120);
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
