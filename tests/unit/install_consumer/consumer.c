/* Uses the installed headers and library: one task that doubles a value. */
#include <rill/rill.h>
#include <stdio.h>

static rill_status_t twice(rill_task_t *task)
{
    double *x;
    rill_dtd_unpack_args(task, &x);
    *x *= 2;
    return RILL_SUCCESS;
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    if (rill_init(&argc, &argv, &ctx) != RILL_SUCCESS)
        return 1;
    double x = 21;
    rill_data_t *d;
    rill_dtd_class_t *cls;
    rill_taskpool_t *tp;
    rill_data_create(ctx, &x, sizeof(x), &d);
    rill_dtd_class_create(ctx, "twice", twice, &cls);
    rill_dtd_taskpool_create(ctx, &tp);
    rill_dtd_insert_task(tp, cls, 0, RILL_DTD_INOUT, d, RILL_DTD_ARG_END);
    rill_status_t s = rill_taskpool_wait(tp);
    rill_taskpool_destroy(&tp);
    rill_dtd_class_destroy(&cls);
    rill_data_destroy(&d);
    rill_fini(&ctx);
    printf("consumer: %s %g\n", rill_version_string(), x);
    return s != RILL_SUCCESS || x != 42;
}
