/* The README's example, complete: a chain of axpy tasks over small tiles, checked
 * against the same loop run sequentially. Every call's status is checked (TRY): the first
 * failure stops the program with the call and the reason, and a non-zero exit code. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "rill/rill.h"

#define N 64

/* Stop at the first error, saying which call failed and why. */
#define TRY(call)                                                                                  \
    do {                                                                                           \
        rill_status_t s_ = (call);                                                                 \
        if (s_ != RILL_SUCCESS) {                                                                  \
            fprintf(stderr, "dtd_axpy: %s failed: %s\n", #call, rill_status_string(s_));           \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static rill_status_t axpy(rill_task_t *task)
{
    double a, *x, *y;
    rill_status_t s = rill_dtd_unpack_args(task, &a, &x, &y);
    if (s != RILL_SUCCESS)
        return s; /* fails the taskpool: rill_taskpool_wait reports it */
    *y += a * *x;
    return RILL_SUCCESS;
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    TRY(rill_init(&argc, &argv, &ctx)); /* consumes --mca name value */
    if (argc > 1) {                     /* nothing else is an option of this example */
        fprintf(stderr, "usage: %s [--mca name value]...; unknown argument '%s'\n", argv[0],
                argv[1]);
        rill_fini(&ctx);
        return 2;
    }
    double x[N], y[N], ref[N];
    rill_data_t *dx[N], *dy[N];
    for (int i = 0; i < N; i++) {
        x[i] = i;
        y[i] = ref[i] = 1;
        TRY(rill_data_create(ctx, &x[i], sizeof(double), &dx[i]));
        TRY(rill_data_create(ctx, &y[i], sizeof(double), &dy[i]));
    }
    rill_dtd_class_t *cls;
    TRY(rill_dtd_class_create(ctx, "axpy", axpy, &cls));
    rill_taskpool_t *tp;
    TRY(rill_dtd_taskpool_create(ctx, &tp));
    for (int step = 0; step < 100; step++)
        for (int i = 0; i < N; i++) {
            double a = 0.5 + step * 0.01;
            /* y[i] += a * x[(i + step) % N]: reads cross tiles, writes chain on y[i] */
            TRY(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_VALUE, sizeof(a), &a, RILL_DTD_INPUT,
                                     dx[(i + step) % N], RILL_DTD_INOUT, dy[i], RILL_DTD_ARG_END));
            ref[i] += a * x[(i + step) % N];
        }
    TRY(rill_taskpool_wait(tp));
    TRY(rill_taskpool_destroy(&tp));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad |= fabs(y[i] - ref[i]) > 1e-9 * fabs(ref[i]);
    printf("dtd_axpy: %d tasks on %d workers: %s\n", 100 * N, rill_context_nworkers(ctx),
           bad ? "WRONG" : "correct");
    for (int i = 0; i < N; i++) {
        TRY(rill_data_destroy(&dx[i]));
        TRY(rill_data_destroy(&dy[i]));
    }
    TRY(rill_dtd_class_destroy(&cls));
    TRY(rill_fini(&ctx));
    return bad;
}
