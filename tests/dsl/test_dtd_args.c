/* DTD arguments: values of every size (inline in the task, and large ones stored out of
 * line), per-task scratch buffers, skipped arguments in unpack, rill_dtd_arg; the
 * RILL_DTD_URGENT hint among them is not an argument (no CPU effect); arrays of tiles
 * (RILL_DTD_ARRAY), one argument each, ordered like single tiles; more pointers to unpack
 * than the task has arguments are refused in every build. */
#include <math.h>
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

/* tile = tile mod 1e6 (args: INOUT tile) */
static rill_dtd_class_t *mod_class;
static rill_status_t mod_body(rill_task_t *task)
{
    double *t;
    rill_dtd_unpack_args(task, &t);
    *t = fmod(*t, 1e6);
    return RILL_SUCCESS;
}

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

/* args: VALUE int, INOUT tile. Unpacks too many pointers (refused, nothing written), then
 * only the first (allowed), then all; the tile counts the bodies that saw it all. */
static rill_status_t count_body(rill_task_t *task)
{
    int v = -1, w = -1;
    double *tile = NULL, *extra = (double *)&w;
    if (rill_dtd_unpack_args(task, &v, &tile, &extra) != RILL_ERR_INVALID_ARG || v != -1 || tile ||
        extra != (double *)&w)
        return RILL_ERR_TASK;
    if (rill_dtd_unpack_args(task, &w) != RILL_SUCCESS || w != 7 ||
        rill_dtd_unpack_args(task, NULL, &tile) != RILL_SUCCESS || !tile)
        return RILL_ERR_TASK;
    *tile += 1;
    return RILL_SUCCESS;
}

static void check_unpack_count(rill_context_t *ctx)
{
    rill_dtd_class_t *cls;
    CHECK(rill_dtd_class_create(ctx, "count", count_body, &cls) == RILL_SUCCESS);
    double x = 0;
    rill_data_t *d;
    CHECK(rill_data_create(ctx, &x, sizeof(x), &d) == RILL_SUCCESS);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == RILL_SUCCESS);
    int seven = 7;
    test_capture_t cap;
    test_capture_begin(&cap);
    for (int i = 0; i < 10; i++)
        CHECK(rill_dtd_insert_task(tp, cls, 0, RILL_DTD_VALUE, sizeof(seven), &seven,
                                   RILL_DTD_INOUT, d, RILL_DTD_ARG_END) == RILL_SUCCESS);
    rill_status_t s = rill_taskpool_wait(tp);
    char *out = test_capture_end(&cap);
    CHECK_MSG(s == RILL_SUCCESS && x == 10, "wait %d, tile %g (10 expected)\n%s", s, x, out);
    CHECK_MSG(strstr(out, "3 pointers given to a 'count' task, which has 2 arguments"),
              "the refusal does not name the counts:\n%s", out);
    free(out);
    rill_taskpool_destroy(&tp);
    rill_data_destroy(&d);
    rill_dtd_class_destroy(&cls);
}

/* args: VALUE int n, then n INOUT tiles (an array): each tile = 2 * tile + 1 (order
 * matters: a lost or reordered dependency changes the result) */
static rill_status_t array_body(rill_task_t *task)
{
    int n = *(const int *)rill_dtd_arg(task, 0);
    for (int i = 0; i < n; i++) {
        double *t = rill_dtd_arg(task, 1 + i);
        *t = 2 * *t + 1;
    }
    return rill_dtd_arg(task, 1 + n) == NULL ? RILL_SUCCESS : RILL_ERR_INVALID_ARG;
}

/* Tasks on random windows of tiles given as arrays, against the same updates in order. */
static void check_arrays(rill_context_t *ctx)
{
    enum { NT = 12, NTASKS = 300 };
    double tiles[NT] = { 0 }, ref[NT] = { 0 };
    rill_data_t *d[NT];
    for (int i = 0; i < NT; i++)
        CHECK(rill_data_create(ctx, &tiles[i], sizeof(double), &d[i]) == RILL_SUCCESS);
    rill_dtd_class_t *cls;
    CHECK(rill_dtd_class_create(ctx, "array", array_body, &cls) == RILL_SUCCESS);
    rill_taskpool_t *tp;
    CHECK(rill_dtd_taskpool_create(ctx, &tp) == RILL_SUCCESS);
    unsigned r = 12345;
    for (int t = 0; t < NTASKS; t++) {
        r = r * 1103515245u + 12345u;
        int first = (int)(r >> 8) % NT, n = 1 + (int)(r >> 20) % (NT - first);
        for (int i = first; i < first + n; i++)
            ref[i] = fmod(2 * ref[i] + 1, 1e6);
        CHECK(rill_dtd_insert_task(tp, cls, t % 3, RILL_DTD_VALUE, sizeof(n), &n,
                                   RILL_DTD_INOUT | RILL_DTD_ARRAY, n, d + first,
                                   RILL_DTD_ARRAY | RILL_DTD_INPUT, 0, (rill_data_t **)NULL,
                                   RILL_DTD_ARG_END) == RILL_SUCCESS);
        /* keep the values exact: a modulo task after each (one tile, same order) */
        for (int i = first; i < first + n; i++)
            CHECK(rill_dtd_insert_task(tp, mod_class, 0, RILL_DTD_INOUT, d[i], RILL_DTD_ARG_END) ==
                  RILL_SUCCESS);
    }
    CHECK(rill_taskpool_wait(tp) == RILL_SUCCESS);
    rill_taskpool_destroy(&tp);
    for (int i = 0; i < NT; i++) {
        CHECK_MSG(tiles[i] == ref[i], "tile %d: %g, expected %g", i, tiles[i], ref[i]);
        rill_data_destroy(&d[i]);
    }
    rill_dtd_class_destroy(&cls);
    printf("DTD arrays of tiles: %d tasks checked\n", NTASKS);
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
        /* the hint in the middle of the list: the body sees the same arguments */
        CHECK(rill_dtd_insert_task(tp, cls, id % 7, RILL_DTD_VALUE, sizeof(id), &id, RILL_DTD_VALUE,
                                   sizeof(big), &big, RILL_DTD_URGENT, id % 3 == 0,
                                   RILL_DTD_SCRATCH, (size_t)4096, RILL_DTD_SCRATCH, (size_t)100,
                                   RILL_DTD_INOUT, d, RILL_DTD_ARG_END) == RILL_SUCCESS);
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
    CHECK(rill_dtd_class_create(ctx, "mod", mod_body, &mod_class) == RILL_SUCCESS);
    check_arrays(ctx);
    check_unpack_count(ctx);
    rill_dtd_class_destroy(&mod_class);
    CHECK(rill_fini(&ctx) == RILL_SUCCESS);
    printf("DTD arguments: %d tasks with large values and scratch checked\n", n);
    return 0;
}
