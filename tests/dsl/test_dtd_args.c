/* DTD arguments: values of every size (inline in the task, and large ones stored out of
 * line), per-task scratch buffers, skipped arguments in unpack, rill_dtd_arg; the
 * RILL_DTD_URGENT hint among them is not an argument (no CPU effect). */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "rill/rill.h"
#include "test_util.h"

#define BIG 6000 /* larger than the biggest task size class: stored out of line */

typedef struct big {
    unsigned char bytes[BIG];
} big_t;

static atomic_int checked;

static rill_status_t body(rill_task_t *task)
{
    int id;
    big_t big;
    char *scratch, *scratch2;
    double *tile;
    rill_dtd_unpack_args(task, &id, &big, &scratch, NULL, &tile);
    for (int i = 0; i < BIG; i++)
        if (big.bytes[i] != (unsigned char)(id + i))
            return RILL_ERR_INVALID_ARG;
    /* scratch is this task's own: fill it, and it must still hold our pattern */
    memset(scratch, id & 0xff, 4096);
    scratch2 = rill_dtd_arg(task, 3);
    memset(scratch2, (id + 1) & 0xff, 100);
    for (int i = 0; i < 4096; i++)
        if ((unsigned char)scratch[i] != (id & 0xff))
            return RILL_ERR_INVALID_ARG;
    if (rill_dtd_arg(task, 5) != NULL || rill_dtd_arg(task, -1) != NULL)
        return RILL_ERR_INVALID_ARG;
    if (*(int *)rill_dtd_arg(task, 0) != id)
        return RILL_ERR_INVALID_ARG;
    *tile += id;
    atomic_fetch_add(&checked, 1);
    return RILL_SUCCESS;
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    CHECK(rill_init(&argc, &argv, &ctx) == RILL_SUCCESS);
    rill_dtd_class_t *cls;
    CHECK(rill_dtd_class_create(ctx, "args", body, &cls) == RILL_SUCCESS);
    double sum = 0;
    rill_data_t *d;
    CHECK(rill_data_create(ctx, &sum, sizeof(sum), &d) == RILL_SUCCESS);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == RILL_SUCCESS);
    static big_t big;
    const int n = 500;
    double expect = 0;
    for (int id = 0; id < n; id++) {
        for (int i = 0; i < BIG; i++)
            big.bytes[i] = (unsigned char)(id + i);
        /* the value is copied at insertion: changing `big` afterwards must not matter */
        if (id % 3)
            CHECK(rill_dtd_insert_task(tp, cls, id % 7, RILL_DTD_VALUE, sizeof(id), &id,
                                       RILL_DTD_VALUE, sizeof(big), &big, RILL_DTD_SCRATCH,
                                       (size_t)4096, RILL_DTD_SCRATCH, (size_t)100, RILL_DTD_INOUT,
                                       d, RILL_DTD_ARG_END) == RILL_SUCCESS);
        else /* the hint anywhere in the list: the body sees the same arguments */
            CHECK(rill_dtd_insert_task(
                      tp, cls, id % 7, RILL_DTD_VALUE, sizeof(id), &id, RILL_DTD_VALUE, sizeof(big),
                      &big, RILL_DTD_URGENT, RILL_DTD_SCRATCH, (size_t)4096, RILL_DTD_SCRATCH,
                      (size_t)100, RILL_DTD_INOUT, d, RILL_DTD_ARG_END) == RILL_SUCCESS);
        expect += id;
    }
    memset(&big, 0, sizeof(big));
    CHECK(rill_taskpool_wait(tp) == RILL_SUCCESS);
    CHECK(atomic_load(&checked) == n);
    CHECK_MSG(sum == expect, "sum %g, expected %g", sum, expect);
    rill_taskpool_destroy(&tp);
    rill_data_destroy(&d);
    rill_dtd_class_destroy(&cls);
    CHECK(rill_dtd_unpack_args(NULL) == RILL_ERR_INVALID_ARG);
    CHECK(rill_fini(&ctx) == RILL_SUCCESS);
    printf("DTD arguments: %d tasks with large values and scratch checked\n", n);
    return 0;
}
