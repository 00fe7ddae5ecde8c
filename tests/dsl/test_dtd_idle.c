/* An idle process sleeps: after a graph has run, workers with nothing to do wake up
 * rarely (their sleep's time-out grows to 80 ms), so many workers cost little CPU. Run with
 * many workers (runtime_num_cores 48 on CI's 2 cores): each used to look every 10 ms,
 * 100 wake-ups a second each. The per-thread report names what woke. */
#include <stdatomic.h>

#include "rill/rill.h"
#include "test_util.h"

#define NTASKS 4000
#define NTILES 64

static atomic_long ran;

static rill_status_t body(rill_task_t *task)
{
    double *x = rill_dtd_arg(task, 0);
    for (int i = 0; i < 1000; i++)
        *x = *x * 0.5 + 1.0;
    atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
    return RILL_SUCCESS;
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    CHECK(rill_init(&argc, &argv, &ctx) == RILL_SUCCESS);
    int nworkers = rill_context_nworkers(ctx);
    rill_dtd_class_t *cls;
    CHECK(rill_dtd_class_create(ctx, "step", body, &cls) == RILL_SUCCESS);
    static double tiles[NTILES];
    rill_data_t *d[NTILES];
    for (int i = 0; i < NTILES; i++)
        CHECK(rill_data_create(ctx, &tiles[i], sizeof(double), &d[i]) == RILL_SUCCESS);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == RILL_SUCCESS);
    for (int t = 0; t < NTASKS; t++)
        CHECK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INOUT, d[t % NTILES], RILL_DTD_ARG_END) ==
              RILL_SUCCESS);
    CHECK(rill_taskpool_wait(tp) == RILL_SUCCESS);
    CHECK(atomic_load(&ran) == NTASKS);
    rill_taskpool_destroy(&tp);

    /* the time-outs grow 10, 20, 40, 80 ms: settled after 150 ms; then a quiet second */
    usleep(300000);
    static test_threads_t t0, t1;
    test_threads_read(&t0);
    usleep(1000000);
    test_threads_read(&t1);
    int named = 0;
    for (int i = 0; i < t1.n; i++)
        named += strncmp(t1.name[i], "rill-worker", 11) == 0;
    CHECK_MSG(named == nworkers - 1, "%d threads named rill-worker N, expected %d", named,
              nworkers - 1);
    unsigned long long sleeps = 0;
    double used = test_threads_report(stdout, &t0, &t1, 0.002, "rill-worker", &sleeps);
    double per_worker = nworkers > 1 ? (double)sleeps / (nworkers - 1) : 0;
    printf("1 s of idleness, %d workers: %.3f s of CPU, %llu sleeps of the spawned workers "
           "(%.1f each)\n",
           nworkers, used, sleeps, per_worker);
    /* 1 s / 80 ms = 12.5 looks each; 10 ms time-outs gave 100 */
    CHECK_MSG(per_worker < 30,
              "idle workers woke %.1f times each in 1 s (expected about 12, one time-out of "
              "80 ms after another)",
              per_worker);

    for (int i = 0; i < NTILES; i++)
        CHECK(rill_data_destroy(&d[i]) == RILL_SUCCESS);
    CHECK(rill_dtd_class_destroy(&cls) == RILL_SUCCESS);
    CHECK(rill_fini(&ctx) == RILL_SUCCESS);
    return 0;
}
