/* Priorities are honoured: tasks released together run highest priority first. The
 * tasks are inserted in increasing priority, so a FIFO queue would fail this test. */
#include <stdatomic.h>

#include "rill/rill.h"
#include "test_util.h"

#define NTASKS 2000

static int order[NTASKS];
static atomic_int next_slot;

static rill_status_t gate_body(rill_task_t *task)
{
    (void)task;
    return RILL_SUCCESS;
}

static rill_status_t reader_body(rill_task_t *task)
{
    int prio;
    rill_dtd_unpack_args(task, &prio, NULL);
    order[atomic_fetch_add(&next_slot, 1)] = prio;
    return RILL_SUCCESS;
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    /* one worker: the main thread, which runs nothing until it waits, so the gate
     * releases every reader at once */
    CHECK(rill_param_set("runtime_num_cores", "1") == RILL_SUCCESS);
    CHECK(rill_init(&argc, &argv, &ctx) == RILL_SUCCESS);
    CHECK(rill_context_nworkers(ctx) == 1);
    rill_dtd_class_t *gate, *reader;
    CHECK(rill_dtd_class_create(ctx, "gate", gate_body, &gate) == RILL_SUCCESS);
    CHECK(rill_dtd_class_create(ctx, "reader", reader_body, &reader) == RILL_SUCCESS);
    double g = 0;
    rill_data_t *gd;
    CHECK(rill_data_create(ctx, &g, sizeof(g), &gd) == RILL_SUCCESS);

    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == RILL_SUCCESS);
    CHECK(rill_dtd_insert_task(tp, gate, 0, RILL_DTD_INOUT, gd, RILL_DTD_ARG_END) == RILL_SUCCESS);
    for (int i = 0; i < NTASKS; i++) {
        int prio = (i * 7919) % NTASKS; /* a permutation, mostly increasing in runs */
        CHECK(rill_dtd_insert_task(tp, reader, prio, RILL_DTD_VALUE, sizeof(prio), &prio,
                                   RILL_DTD_INPUT, gd, RILL_DTD_ARG_END) == RILL_SUCCESS);
    }
    CHECK(rill_taskpool_wait(tp) == RILL_SUCCESS);
    CHECK(atomic_load(&next_slot) == NTASKS);
    for (int i = 1; i < NTASKS; i++)
        CHECK_MSG(order[i - 1] > order[i], "position %d ran priority %d before %d", i, order[i - 1],
                  order[i]);
    printf("%d tasks ran in decreasing priority order\n", NTASKS);
    rill_taskpool_destroy(&tp);
    rill_data_destroy(&gd);
    rill_dtd_class_destroy(&gate);
    rill_dtd_class_destroy(&reader);
    CHECK(rill_fini(&ctx) == RILL_SUCCESS);
    return 0;
}
