/* Taskpools open at once on the same datum each order their own tasks on it. A taskpool's
 * tracker of a datum sits in the datum's slot when the slot was free, else in the
 * taskpool's map: B's tasks on d must stay ordered after A (which held d's slot) ended, and
 * C, which then takes the free slot, orders its tasks too. The dependencies are read back
 * from the DOT graph (profile_dot), which records each one whether it was done yet or not.
 * The bodies leave the datum alone: tasks of different taskpools are not ordered and may
 * run at once. */
#include <stdatomic.h>

#include "rill/params.h"
#include "rill/rill.h"
#include "test_util.h"

static atomic_int ran;

static rill_status_t add_one(rill_task_t *task)
{
    (void)task;
    atomic_fetch_add(&ran, 1);
    return RILL_SUCCESS;
}

/* the serial of the task labelled "name #serial" in the DOT text, -1 when absent */
static long serial_of(const char *dot, const char *name)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "[label=\"%s #", name);
    const char *p = strstr(dot, pat);
    return p ? atol(p + strlen(pat)) : -1;
}

static int has_edge(const char *dot, long from, long to)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "  t%ld -> t%ld;", from, to);
    return strstr(dot, pat) != NULL;
}

int main(int argc, char **argv)
{
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "/tmp/rill_test_tps_%d", (int)getpid());
    CHECK(rill_param_set("profile_dot", prefix) == RILL_SUCCESS);
    CHECK(rill_param_set("runtime_num_cores", "2") == RILL_SUCCESS);
    rill_context_t *ctx;
    CHECK(rill_init(&argc, &argv, &ctx) == RILL_SUCCESS);
    const char *names[] = { "a1", "b1", "b2", "c1", "c2", "b3" };
    rill_dtd_class_t *cls[6];
    for (int i = 0; i < 6; i++)
        CHECK(rill_dtd_class_create(ctx, names[i], add_one, &cls[i]) == RILL_SUCCESS);
    double x = 0, y = 0;
    rill_data_t *d, *e;
    CHECK(rill_data_create(ctx, &x, sizeof(x), &d) == RILL_SUCCESS);
    CHECK(rill_data_create(ctx, &y, sizeof(y), &e) == RILL_SUCCESS);
#define INSERT(tp, c, datum)                                                                       \
    CHECK(rill_dtd_insert_task(tp, cls[c], 0, RILL_DTD_INOUT, datum, RILL_DTD_ARG_END) ==          \
          RILL_SUCCESS)

    rill_taskpool_t *A, *B, *C;
    CHECK(rill_dtd_taskpool_create(ctx, &A) == RILL_SUCCESS);
    CHECK(rill_dtd_taskpool_create(ctx, &B) == RILL_SUCCESS);
    INSERT(A, 0, d);                              /* A takes d's slot */
    INSERT(B, 1, d);                              /* B's tracker of d goes to B's map */
    CHECK(rill_taskpool_wait(A) == RILL_SUCCESS); /* A ends: d's slot is free */
    CHECK(rill_taskpool_destroy(&A) == RILL_SUCCESS);
    INSERT(B, 2, d); /* must find B's tracker in the map, not start another */
    CHECK(rill_dtd_taskpool_create(ctx, &C) == RILL_SUCCESS);
    INSERT(C, 3, d); /* C takes the free slot */
    INSERT(C, 4, d);
    INSERT(B, 5, d); /* B still in its map while C holds the slot */
    INSERT(B, 5, e);
    CHECK(rill_taskpool_wait(C) == RILL_SUCCESS);
    CHECK(rill_taskpool_wait(B) == RILL_SUCCESS);
    CHECK(rill_taskpool_destroy(&B) == RILL_SUCCESS);
    CHECK(rill_taskpool_destroy(&C) == RILL_SUCCESS);
    CHECK_MSG(atomic_load(&ran) == 7, "%d tasks ran, 7 expected", atomic_load(&ran));
    CHECK(rill_data_destroy(&d) == RILL_SUCCESS);
    CHECK(rill_data_destroy(&e) == RILL_SUCCESS);
    for (int i = 0; i < 6; i++)
        CHECK(rill_dtd_class_destroy(&cls[i]) == RILL_SUCCESS);
    CHECK(rill_fini(&ctx) == RILL_SUCCESS);

    char path[96];
    snprintf(path, sizeof(path), "%s.0.dot", prefix);
    FILE *f = fopen(path, "r");
    CHECK_MSG(f, "no DOT file %s", path);
    static char dot[65536];
    size_t n = fread(dot, 1, sizeof(dot) - 1, f);
    dot[n] = '\0';
    fclose(f);
    unlink(path);
    long s[6];
    for (int i = 0; i < 6; i++) {
        s[i] = serial_of(dot, names[i]);
        CHECK_MSG(s[i] >= 0, "task %s not in the DOT graph:\n%s", names[i], dot);
    }
    /* within each taskpool the tasks on d are chained; across taskpools they are not */
    CHECK_MSG(has_edge(dot, s[1], s[2]), "B's b2 does not follow b1 on d:\n%s", dot);
    CHECK_MSG(has_edge(dot, s[2], s[5]), "B's b3 does not follow b2 on d:\n%s", dot);
    CHECK_MSG(has_edge(dot, s[3], s[4]), "C's c2 does not follow c1 on d:\n%s", dot);
    CHECK_MSG(!has_edge(dot, s[0], s[1]) && !has_edge(dot, s[4], s[5]),
              "a dependency across taskpools:\n%s", dot);
    printf("taskpools A, B, C on one datum: each chain ordered (b1 -> b2 -> b3, c1 -> c2)\n");
    return 0;
}
