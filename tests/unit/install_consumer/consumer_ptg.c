/* Runs count.rill, compiled by the installed rillcc through rill_add_ptg. */
#include <stdio.h>

#include <rill/rill.h>

#include "count.h"

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    rill_matrix_t *A;
    rill_taskpool_t *tp;
    if (rill_init(&argc, &argv, &ctx) != RILL_SUCCESS ||
        rill_matrix_create(ctx, 1, 1, 1, 1, 1, 1, &A) != RILL_SUCCESS)
        return 1;
    count_globals_t g = { .N = 1000, .A = A };
    if (count_taskpool_create(ctx, &g, &tp) != RILL_SUCCESS ||
        rill_taskpool_wait(tp) != RILL_SUCCESS || rill_taskpool_destroy(&tp) != RILL_SUCCESS)
        return 1;
    double v = rill_matrix_tile_ptr(A, 0, 0)[0];
    rill_matrix_destroy(&A);
    rill_fini(&ctx);
    if (v != 1000.0) {
        fprintf(stderr, "consumer_ptg: %g, expected 1000\n", v);
        return 1;
    }
    printf("consumer_ptg: a PTG program built with the installed rillcc ran\n");
    return 0;
}
