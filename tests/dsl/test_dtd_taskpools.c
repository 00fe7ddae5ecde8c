/* Taskpools open at once on the same datum. Their tasks are not ordered against each other,
 * so while one open taskpool writes a datum no other may use it: the insertion is refused
 * with RILL_ERR_BUSY and changes nothing; reading from several open taskpools is allowed.
 *
 * A taskpool's tracker of a datum sits in the datum's slot when the slot was free, else in
 * the taskpool's map: B's tasks on d must stay ordered after A (which held d's slot) ended
 * and while C holds the slot. The dependencies are read back from the DOT graph
 * (profile_dot), which records each one whether it was done yet or not. */
#include <stdatomic.h>

#include "rill/params.h"
#include "rill/rill.h"
#include "test_util.h"

static atomic_int ran;

static rill_status_t increment(rill_task_t *task)
{
    double *x;
    rill_dtd_unpack_args(task, &x);
    *x += 1;
    return RILL_SUCCESS;
}

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
#define INSERT_AS(tp, c, mode, datum)                                                              \
    rill_dtd_insert_task(tp, cls[c], 0, mode, datum, RILL_DTD_ARG_END)

    rill_taskpool_t *A, *B, *C;
    CHECK(rill_dtd_taskpool_create(ctx, &A) == RILL_SUCCESS);
    CHECK(rill_dtd_taskpool_create(ctx, &B) == RILL_SUCCESS);
    CHECK(INSERT_AS(A, 0, RILL_DTD_INPUT, d) == RILL_SUCCESS); /* A takes d's slot */
    CHECK(INSERT_AS(B, 1, RILL_DTD_INPUT, d) == RILL_SUCCESS); /* B's tracker: B's map */
    /* B may not write d while A, open, reads it; nor A while B reads it */
    test_capture_t cap;
    test_capture_begin(&cap);
    rill_status_t s1 = INSERT_AS(B, 1, RILL_DTD_INOUT, d);
    rill_status_t s2 = INSERT_AS(A, 0, RILL_DTD_OUTPUT, d);
    char *out = test_capture_end(&cap);
    CHECK_MSG(s1 == RILL_ERR_BUSY && s2 == RILL_ERR_BUSY, "writes beside an open reader: %d %d", s1,
              s2);
    CHECK_MSG(strstr(out, "taskpool 1 uses a datum that another open taskpool") &&
                  strstr(out, "not ordered against each other"),
              "the refusal does not say why:\n%s", out);
    free(out);
    CHECK(rill_taskpool_wait(A) == RILL_SUCCESS); /* A ends: d's slot is free */
    CHECK(rill_taskpool_destroy(&A) == RILL_SUCCESS);
    CHECK(rill_dtd_taskpool_create(ctx, &C) == RILL_SUCCESS);
    CHECK(INSERT_AS(C, 3, RILL_DTD_INPUT, d) == RILL_SUCCESS); /* C takes the free slot */
    CHECK(INSERT_AS(B, 2, RILL_DTD_INPUT, d) == RILL_SUCCESS); /* B's map, not C's slot */
    CHECK(INSERT_AS(C, 4, RILL_DTD_INPUT, d) == RILL_SUCCESS);
    CHECK(INSERT_AS(C, 4, RILL_DTD_INOUT, e) == RILL_SUCCESS); /* C writes e */
    test_capture_begin(&cap);
    s1 = INSERT_AS(B, 5, RILL_DTD_INPUT, e); /* B may not read what open C writes */
    out = test_capture_end(&cap);
    CHECK_MSG(s1 == RILL_ERR_BUSY && strstr(out, "uses a datum that taskpool 2 writes"),
              "a read beside an open writer: %d\n%s", s1, out);
    free(out);
    CHECK(rill_taskpool_wait(C) == RILL_SUCCESS);
    CHECK(INSERT_AS(B, 5, RILL_DTD_INOUT, d) == RILL_SUCCESS); /* B alone on d now */
    CHECK(INSERT_AS(B, 5, RILL_DTD_INOUT, e) == RILL_SUCCESS); /* C ended: e is free */
    CHECK(rill_taskpool_wait(B) == RILL_SUCCESS);
    CHECK(rill_taskpool_destroy(&B) == RILL_SUCCESS);
    CHECK(rill_taskpool_destroy(&C) == RILL_SUCCESS);
    CHECK_MSG(atomic_load(&ran) == 8, "%d tasks ran, 8 expected", atomic_load(&ran));

    /* the issue's case: two open taskpools incrementing one datum; the second is refused
     * and the first's count stays exact */
    double z = 0;
    rill_data_t *zd;
    CHECK(rill_data_create(ctx, &z, sizeof(z), &zd) == RILL_SUCCESS);
    rill_dtd_class_t *incr;
    CHECK(rill_dtd_class_create(ctx, "incr", increment, &incr) == RILL_SUCCESS);
    CHECK(rill_dtd_taskpool_create(ctx, &A) == RILL_SUCCESS);
    CHECK(rill_dtd_taskpool_create(ctx, &B) == RILL_SUCCESS);
    int refused = 0;
    test_capture_begin(&cap);
    for (int k = 0; k < 20000; k++) {
        CHECK(rill_dtd_insert_task(A, incr, 0, RILL_DTD_INOUT, zd, RILL_DTD_ARG_END) == 0);
        refused +=
            rill_dtd_insert_task(B, incr, 0, RILL_DTD_INOUT, zd, RILL_DTD_ARG_END) == RILL_ERR_BUSY;
    }
    free(test_capture_end(&cap));
    CHECK(rill_taskpool_wait(B) == RILL_SUCCESS);
    CHECK(rill_taskpool_wait(A) == RILL_SUCCESS);
    CHECK_MSG(refused == 20000 && z == 20000, "refused %d of 20000, datum %g (20000 expected)",
              refused, z);
    CHECK(rill_taskpool_destroy(&A) == RILL_SUCCESS);
    CHECK(rill_taskpool_destroy(&B) == RILL_SUCCESS);
    CHECK(rill_dtd_class_destroy(&incr) == RILL_SUCCESS);
    CHECK(rill_data_destroy(&zd) == RILL_SUCCESS);
    CHECK(rill_data_destroy(&d) == RILL_SUCCESS);
    CHECK(rill_data_destroy(&e) == RILL_SUCCESS);
    for (int i = 0; i < 6; i++)
        CHECK(rill_dtd_class_destroy(&cls[i]) == RILL_SUCCESS);
    CHECK(rill_fini(&ctx) == RILL_SUCCESS);

    char path[96];
    snprintf(path, sizeof(path), "%s.0.dot", prefix);
    FILE *f = fopen(path, "r");
    CHECK_MSG(f, "no DOT file %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    char *dot = malloc((size_t)len + 1);
    CHECK(dot);
    size_t n = fread(dot, 1, (size_t)len, f);
    dot[n] = '\0';
    fclose(f);
    unlink(path);
    long s[6];
    for (int i = 0; i < 6; i++) {
        s[i] = serial_of(dot, names[i]);
        CHECK_MSG(s[i] >= 0, "task %s not in the DOT graph:\n%s", names[i], dot);
    }
    /* B's write of d follows both its reads (one tracker, found in the map each time);
     * across taskpools there are no edges */
    CHECK_MSG(has_edge(dot, s[1], s[5]), "B's b3 does not follow b1 on d:\n%s", dot);
    CHECK_MSG(has_edge(dot, s[2], s[5]), "B's b3 does not follow b2 on d:\n%s", dot);
    CHECK_MSG(!has_edge(dot, s[0], s[5]) && !has_edge(dot, s[3], s[5]) &&
                  !has_edge(dot, s[4], s[5]),
              "a dependency across taskpools:\n%s", dot);
    printf("taskpools A, B, C on one datum: writes beside open users refused, reads shared, "
           "B's chain ordered (b1, b2 -> b3)\n");
    free(dot);
    return 0;
}
