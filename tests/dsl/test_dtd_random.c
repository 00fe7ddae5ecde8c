/* Random task graphs over shared tiles, run by the runtime and checked against a
 * sequential execution of the same sequence: every read-after-write, write-after-read
 * and write-after-write order shows up in the values tasks observe and produce. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rill/rill.h"
#include "test_util.h"

#define MAX_FLOWS 4

typedef struct task_desc {
    int nflows;
    int tile[MAX_FLOWS];
    int mode[MAX_FLOWS];
    int32_t priority;
} task_desc_t;

static uint64_t *observed; /* what each task saw, indexed by task number */

static inline uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    return x ^ (x >> 32);
}

/* The work of task id on its tiles; the same code runs in the body and sequentially. */
static void task_apply(uint64_t id, const task_desc_t *d, uint64_t **tiles)
{
    uint64_t h = id;
    for (int f = 0; f < d->nflows; f++)
        if (d->mode[f] != RILL_DTD_OUTPUT)
            h = mix(h, *tiles[f]);
    for (int f = 0; f < d->nflows; f++) {
        if (d->mode[f] == RILL_DTD_INOUT)
            *tiles[f] = mix(h, *tiles[f] + (uint64_t)f);
        else if (d->mode[f] == RILL_DTD_OUTPUT)
            *tiles[f] = mix(h, (uint64_t)f + 1);
    }
    observed[id] = h;
}

static rill_status_t body(rill_task_t *task)
{
    uint64_t id;
    task_desc_t d;
    uint64_t *tiles[MAX_FLOWS] = { 0 };
    rill_dtd_unpack_args(task, &id, &d);
    for (int i = 0; i < d.nflows; i++) /* the tiles follow id and d */
        tiles[i] = rill_dtd_arg(task, 2 + i);
    task_apply(id, &d, tiles);
    return RILL_SUCCESS;
}

static void make_graph(task_desc_t *descs, int ntasks, int ntiles, unsigned seed)
{
    srand(seed);
    for (int t = 0; t < ntasks; t++) {
        task_desc_t *d = &descs[t];
        d->nflows = 1 + rand() % MAX_FLOWS;
        if (d->nflows > ntiles)
            d->nflows = ntiles;
        for (int f = 0; f < d->nflows; f++) {
            int tile, dup;
            do { /* distinct tiles within one task */
                tile = rand() % ntiles;
                dup = 0;
                for (int g = 0; g < f; g++)
                    dup |= d->tile[g] == tile;
            } while (dup);
            d->tile[f] = tile;
            int r = rand() % 10; /* reads are the most common access */
            d->mode[f] = r < 5 ? RILL_DTD_INPUT : r < 8 ? RILL_DTD_INOUT : RILL_DTD_OUTPUT;
        }
        d->priority = rand() % 100;
    }
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    CHECK(rill_init(&argc, &argv, &ctx) == RILL_SUCCESS);
    int ntasks = 100000, ntiles = 500, reps = 3;
    unsigned seed = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--tasks"))
            ntasks = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--tiles"))
            ntiles = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            seed = (unsigned)atoi(argv[i + 1]);
    }
    task_desc_t *descs = malloc((size_t)ntasks * sizeof(*descs));
    uint64_t *tiles = malloc((size_t)ntiles * sizeof(uint64_t));
    uint64_t *ref_tiles = malloc((size_t)ntiles * sizeof(uint64_t));
    uint64_t *ref_observed = malloc((size_t)ntasks * sizeof(uint64_t));
    observed = malloc((size_t)ntasks * sizeof(uint64_t));
    rill_data_t **data = malloc((size_t)ntiles * sizeof(*data));
    rill_dtd_class_t *cls;
    CHECK(rill_dtd_class_create(ctx, "random", body, &cls) == RILL_SUCCESS);

    for (int rep = 0; rep < reps; rep++) {
        make_graph(descs, ntasks, ntiles, seed + (unsigned)rep);
        for (int i = 0; i < ntiles; i++)
            tiles[i] = ref_tiles[i] = (uint64_t)i * 7919u;
        memset(observed, 0, (size_t)ntasks * sizeof(uint64_t));
        for (int i = 0; i < ntiles; i++)
            CHECK(rill_data_create(ctx, &tiles[i], sizeof(uint64_t), &data[i]) == RILL_SUCCESS);

        rill_taskpool_t *tp;
        CHECK(rill_dtd_taskpool_create(ctx, &tp) == RILL_SUCCESS);
        for (int t = 0; t < ntasks; t++) {
            task_desc_t *d = &descs[t];
            uint64_t id = (uint64_t)t;
            rill_data_t *td[MAX_FLOWS] = { 0 };
            int mode[MAX_FLOWS] = { 0 };
            for (int f = 0; f < d->nflows; f++) {
                td[f] = data[d->tile[f]];
                mode[f] = d->mode[f];
            }
            rill_status_t s = RILL_ERR_INVALID_ARG;
            switch (d->nflows) {
            case 1:
                s = rill_dtd_insert_task(tp, cls, d->priority, RILL_DTD_VALUE, sizeof(id), &id,
                                         RILL_DTD_VALUE, sizeof(*d), d, mode[0], td[0],
                                         RILL_DTD_ARG_END);
                break;
            case 2:
                s = rill_dtd_insert_task(tp, cls, d->priority, RILL_DTD_VALUE, sizeof(id), &id,
                                         RILL_DTD_VALUE, sizeof(*d), d, mode[0], td[0], mode[1],
                                         td[1], RILL_DTD_ARG_END);
                break;
            case 3:
                s = rill_dtd_insert_task(tp, cls, d->priority, RILL_DTD_VALUE, sizeof(id), &id,
                                         RILL_DTD_VALUE, sizeof(*d), d, mode[0], td[0], mode[1],
                                         td[1], mode[2], td[2], RILL_DTD_ARG_END);
                break;
            case 4:
                s = rill_dtd_insert_task(tp, cls, d->priority, RILL_DTD_VALUE, sizeof(id), &id,
                                         RILL_DTD_VALUE, sizeof(*d), d, mode[0], td[0], mode[1],
                                         td[1], mode[2], td[2], mode[3], td[3], RILL_DTD_ARG_END);
                break;
            }
            CHECK(s == RILL_SUCCESS);
        }
        CHECK(rill_taskpool_wait(tp) == RILL_SUCCESS);
        CHECK(rill_taskpool_destroy(&tp) == RILL_SUCCESS);

        /* the sequential reference */
        uint64_t *saved = observed;
        observed = ref_observed;
        for (int t = 0; t < ntasks; t++) {
            uint64_t *tp_[MAX_FLOWS];
            for (int f = 0; f < descs[t].nflows; f++)
                tp_[f] = &ref_tiles[descs[t].tile[f]];
            task_apply((uint64_t)t, &descs[t], tp_);
        }
        observed = saved;
        for (int t = 0; t < ntasks; t++)
            CHECK_MSG(observed[t] == ref_observed[t], "rep %d: task %d saw %llx, sequential %llx",
                      rep, t, (unsigned long long)observed[t], (unsigned long long)ref_observed[t]);
        for (int i = 0; i < ntiles; i++)
            CHECK_MSG(tiles[i] == ref_tiles[i], "rep %d: tile %d differs", rep, i);
        for (int i = 0; i < ntiles; i++)
            rill_data_destroy(&data[i]);
    }
    printf("random DAGs: %d x %d tasks on %d tiles, %d workers: match the sequential run\n", reps,
           ntasks, ntiles, rill_context_nworkers(ctx));
    rill_dtd_class_destroy(&cls);
    CHECK(rill_fini(&ctx) == RILL_SUCCESS);
    free(descs);
    free(tiles);
    free(ref_tiles);
    free(ref_observed);
    free(observed);
    free(data);
    return 0;
}
