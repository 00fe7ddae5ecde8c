/* Distributed DTD under stress: random task graphs (random tiles from a small-tile and a
 * large-tile collection with random home ranks, random access modes, priorities and
 * affinities) inserted by every rank, run across the ranks with a window size drawn per
 * repetition, and checked against a sequential run of the same sequence: every task's
 * view of its inputs where it ran, and every tile's final value on its home rank.
 *
 *   test_dtd_stress [--tasks N] [--tiles T] [--reps R] [--seed S] [--window W]
 *
 * Every rank draws the same graphs from the seed. --window fixes dtd_window_size; by
 * default each repetition draws it from 16, 64, 1000 and 8000. Large tiles are above
 * comm_short_limit, so they move by rendezvous; small ones travel in the activation. Run
 * it with runtime_watchdog_action abort so that a hang ends as a failure with the
 * watchdog's report. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rill/rill.h"
#include "test_util.h"

#define MAX_FLOWS   4
#define SMALL_WORDS 2    /* 16 B tiles: inline in the activation */
#define LARGE_WORDS 1536 /* 12 KiB tiles: above the 8 KiB short limit, by rendezvous */

typedef struct task_desc {
    int nflows;
    int tile[MAX_FLOWS]; /* tile index: < ntiles small, else large */
    int mode[MAX_FLOWS];
    int affinity; /* flow given RILL_DTD_AFFINITY, or -1 */
    int32_t priority;
} task_desc_t;

typedef struct graph {
    int ntasks, ntiles; /* ntiles per collection */
    task_desc_t *tasks;
    int *home[2]; /* home rank of each tile of each collection */
} graph_t;

static uint64_t *observed;  /* what each task saw; set only where it ran */
static unsigned char *here; /* 1 for the tasks that ran on this rank */

static uint64_t rng_next(uint64_t *s) /* splitmix64: the same stream on every rank */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    return x ^ (x >> 32);
}

static inline int tile_words(int tile, int ntiles)
{
    return tile < ntiles ? SMALL_WORDS : LARGE_WORDS;
}

/* The work of task id on its tiles (reads the first and last word of each, so a tile that
 * moved only in part shows; an OUTPUT overwrites the whole tile); the same code runs in
 * the body and sequentially. */
static void task_apply(uint64_t id, const task_desc_t *d, uint64_t **tiles, int ntiles)
{
    uint64_t h = id;
    for (int f = 0; f < d->nflows; f++)
        if (d->mode[f] != RILL_DTD_OUTPUT) {
            int last = tile_words(d->tile[f], ntiles) - 1;
            h = mix(mix(h, tiles[f][0]), tiles[f][last]);
        }
    for (int f = 0; f < d->nflows; f++) {
        int last = tile_words(d->tile[f], ntiles) - 1;
        if (d->mode[f] == RILL_DTD_INOUT) {
            tiles[f][0] = mix(h, tiles[f][0] + (uint64_t)f);
            tiles[f][last] = mix(tiles[f][0], 17);
        } else if (d->mode[f] == RILL_DTD_OUTPUT) { /* OUTPUT writes the whole tile */
            tiles[f][0] = mix(h, (uint64_t)f + 1);
            for (int k = 1; k <= last; k++)
                tiles[f][k] = mix(tiles[f][0], (uint64_t)k + 16);
        }
    }
    observed[id] = h;
}

static rill_status_t body(rill_task_t *task)
{
    uint64_t id;
    task_desc_t d;
    int ntiles;
    uint64_t *tiles[MAX_FLOWS] = { 0 };
    rill_dtd_unpack_args(task, &id, &d, &ntiles);
    for (int i = 0; i < ntiles && i < MAX_FLOWS; i++) /* the tiles follow id, d and ntiles */
        tiles[i] = rill_dtd_arg(task, 3 + i);
    task_apply(id, &d, tiles, ntiles);
    here[id] = 1;
    return RILL_SUCCESS;
}

static void make_graph(graph_t *g, int nranks, uint64_t seed)
{
    uint64_t s = seed;
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < g->ntiles; i++)
            g->home[c][i] = (int)(rng_next(&s) % (uint64_t)nranks);
    int all = 2 * g->ntiles;
    for (int t = 0; t < g->ntasks; t++) {
        task_desc_t *d = &g->tasks[t];
        d->nflows = 1 + (int)(rng_next(&s) % MAX_FLOWS);
        for (int f = 0; f < d->nflows; f++) {
            int tile, dup;
            do { /* distinct tiles within one task */
                tile = (int)(rng_next(&s) % (uint64_t)all);
                dup = 0;
                for (int k = 0; k < f; k++)
                    dup |= d->tile[k] == tile;
            } while (dup);
            d->tile[f] = tile;
            int r = (int)(rng_next(&s) % 10); /* reads are the most common access */
            d->mode[f] = r < 5 ? RILL_DTD_INPUT : r < 8 ? RILL_DTD_INOUT : RILL_DTD_OUTPUT;
        }
        d->affinity = rng_next(&s) % 2 ? (int)(rng_next(&s) % (uint64_t)d->nflows) : -1;
        d->priority = (int32_t)(rng_next(&s) % 100);
    }
}

/* The rank that runs a task (the rule of rill_dtd_insert_task): the home of its AFFINITY
 * tile, else of its first written tile, else of its first tile. */
static int exec_rank(const graph_t *g, const task_desc_t *d)
{
    int c0 = d->tile[0] >= g->ntiles;
    if (d->affinity >= 0) {
        int c = d->tile[d->affinity] >= g->ntiles;
        return g->home[c][d->tile[d->affinity] - c * g->ntiles];
    }
    for (int f = 0; f < d->nflows; f++)
        if (d->mode[f] != RILL_DTD_INPUT) {
            int c = d->tile[f] >= g->ntiles;
            return g->home[c][d->tile[f] - c * g->ntiles];
        }
    return g->home[c0][d->tile[0] - c0 * g->ntiles];
}

static int home_of(uint64_t key, void *arg)
{
    return ((const int *)arg)[key];
}

static uint64_t initial(int c, int i, int w)
{
    return mix((uint64_t)(c * 100000 + i), (uint64_t)w);
}

static int parse_arg(const char *name, const char *v, long min, long max, long *out)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end || x < min || x > max) {
        fprintf(stderr, "test_dtd_stress: %s %s: expected an integer in %ld..%ld\n", name, v, min,
                max);
        return -1;
    }
    *out = x;
    return 0;
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    CHECK(rill_init(&argc, &argv, &ctx) == RILL_SUCCESS);
    long ntasks = 2000, ntiles = 40, reps = 4, seed = 1, window = 0;
    for (int i = 1; i < argc; i += 2) {
        long *dst = !strcmp(argv[i], "--tasks")    ? &ntasks
                    : !strcmp(argv[i], "--tiles")  ? &ntiles
                    : !strcmp(argv[i], "--reps")   ? &reps
                    : !strcmp(argv[i], "--seed")   ? &seed
                    : !strcmp(argv[i], "--window") ? &window
                                                   : NULL;
        CHECK_MSG(dst && i + 1 < argc, "unknown option or missing value: %s", argv[i]);
        CHECK(parse_arg(argv[i], argv[i + 1], dst == &window ? 0 : 1, 1L << 24, dst) == 0);
    }
    int me = rill_context_rank(ctx), nranks = rill_context_nranks(ctx);
    graph_t g = { .ntasks = (int)ntasks, .ntiles = (int)ntiles };
    g.tasks = malloc((size_t)ntasks * sizeof(*g.tasks));
    g.home[0] = malloc((size_t)ntiles * sizeof(int));
    g.home[1] = malloc((size_t)ntiles * sizeof(int));
    observed = malloc((size_t)ntasks * sizeof(uint64_t));
    here = malloc((size_t)ntasks);
    uint64_t *ref_observed = malloc((size_t)ntasks * sizeof(uint64_t));
    uint64_t *ref[2];
    ref[0] = malloc((size_t)ntiles * SMALL_WORDS * sizeof(uint64_t));
    ref[1] = malloc((size_t)ntiles * LARGE_WORDS * sizeof(uint64_t));
    rill_data_t **data = malloc((size_t)(2 * ntiles) * sizeof(*data));
    CHECK(g.tasks && g.home[0] && g.home[1] && observed && here && ref_observed && ref[0] &&
          ref[1] && data);
    rill_dtd_class_t *cls;
    CHECK(rill_dtd_class_create(ctx, "stress", body, &cls) == RILL_SUCCESS);
    static const int windows[] = { 16, 64, 1000, 8000 };

    for (long rep = 0; rep < reps; rep++) {
        uint64_t rs = (uint64_t)seed * 1000003u + (uint64_t)rep;
        make_graph(&g, nranks, rs);
        int w = window ? (int)window : windows[mix(rs, 5) % 4];
        char wbuf[32];
        snprintf(wbuf, sizeof(wbuf), "%d", w);
        CHECK(rill_param_set("dtd_window_size", wbuf) == RILL_SUCCESS);

        rill_collection_t *dc[2];
        CHECK(rill_collection_create(ctx, SMALL_WORDS * sizeof(uint64_t), home_of, g.home[0],
                                     &dc[0]) == RILL_SUCCESS);
        CHECK(rill_collection_create(ctx, LARGE_WORDS * sizeof(uint64_t), home_of, g.home[1],
                                     &dc[1]) == RILL_SUCCESS);
        for (int c = 0; c < 2; c++) {
            int words = c ? LARGE_WORDS : SMALL_WORDS;
            for (int i = 0; i < ntiles; i++) {
                data[c * ntiles + i] = rill_collection_data_of(dc[c], (uint64_t)i);
                CHECK(data[c * ntiles + i]);
                uint64_t *p = rill_data_ptr(data[c * ntiles + i]);
                for (int k = 0; k < words; k++) {
                    ref[c][(size_t)i * words + k] = initial(c, i, k);
                    if (p) /* the home rank */
                        p[k] = initial(c, i, k);
                }
            }
        }
        memset(here, 0, (size_t)ntasks);

        rill_taskpool_t *tp;
        CHECK(rill_dtd_taskpool_create(ctx, &tp) == RILL_SUCCESS);
        for (int t = 0; t < ntasks; t++) {
            task_desc_t *d = &g.tasks[t];
            uint64_t id = (uint64_t)t;
            int nt = (int)ntiles;
            rill_data_t *td[MAX_FLOWS] = { 0 };
            int mode[MAX_FLOWS] = { 0 };
            for (int f = 0; f < d->nflows; f++) {
                td[f] = data[d->tile[f]];
                mode[f] = d->mode[f] | (f == d->affinity ? RILL_DTD_AFFINITY : 0);
            }
            rill_status_t s = RILL_ERR_INVALID_ARG;
#define HEAD                                                                                       \
    tp, cls, d->priority, RILL_DTD_VALUE, sizeof(id), &id, RILL_DTD_VALUE, sizeof(*d), d,          \
        RILL_DTD_VALUE, sizeof(nt), &nt
            switch (d->nflows) {
            case 1:
                s = rill_dtd_insert_task(HEAD, mode[0], td[0], RILL_DTD_ARG_END);
                break;
            case 2:
                s = rill_dtd_insert_task(HEAD, mode[0], td[0], mode[1], td[1], RILL_DTD_ARG_END);
                break;
            case 3:
                s = rill_dtd_insert_task(HEAD, mode[0], td[0], mode[1], td[1], mode[2], td[2],
                                         RILL_DTD_ARG_END);
                break;
            case 4:
                s = rill_dtd_insert_task(HEAD, mode[0], td[0], mode[1], td[1], mode[2], td[2],
                                         mode[3], td[3], RILL_DTD_ARG_END);
                break;
            }
#undef HEAD
            CHECK(s == RILL_SUCCESS);
        }
        CHECK(rill_taskpool_wait(tp) == RILL_SUCCESS);
        CHECK(rill_taskpool_destroy(&tp) == RILL_SUCCESS);

        /* the sequential reference, on every rank */
        uint64_t *saved = observed;
        observed = ref_observed;
        for (int t = 0; t < ntasks; t++) {
            uint64_t *tiles[MAX_FLOWS];
            for (int f = 0; f < g.tasks[t].nflows; f++) {
                int tile = g.tasks[t].tile[f], c = tile >= ntiles;
                int words = c ? LARGE_WORDS : SMALL_WORDS;
                tiles[f] = &ref[c][(size_t)(tile - c * ntiles) * words];
            }
            task_apply((uint64_t)t, &g.tasks[t], tiles, (int)ntiles);
        }
        observed = saved;
        int mine = 0;
        for (int t = 0; t < ntasks; t++) {
            int should = exec_rank(&g, &g.tasks[t]) == me;
            CHECK_MSG(here[t] == should, "rep %ld seed %ld: task %d ran %s rank %d", rep, seed, t,
                      here[t] ? "on" : "not on", me);
            if (here[t])
                CHECK_MSG(observed[t] == ref_observed[t],
                          "rep %ld seed %ld window %d: task %d on rank %d saw %llx, sequential "
                          "%llx",
                          rep, seed, w, t, me, (unsigned long long)observed[t],
                          (unsigned long long)ref_observed[t]);
            mine += here[t];
        }
        for (int c = 0; c < 2; c++) {
            int words = c ? LARGE_WORDS : SMALL_WORDS;
            for (int i = 0; i < ntiles; i++) {
                const uint64_t *p = rill_data_ptr(data[c * ntiles + i]);
                if (!p)
                    continue;
                CHECK_MSG(g.home[c][i] == me, "tile %d of collection %d has storage off home", i,
                          c);
                CHECK_MSG(!memcmp(p, &ref[c][(size_t)i * words], (size_t)words * 8),
                          "rep %ld seed %ld window %d: tile %d of collection %d differs on its "
                          "home rank %d",
                          rep, seed, w, i, c, me);
            }
        }
        CHECK(rill_collection_destroy(&dc[1]) == RILL_SUCCESS);
        CHECK(rill_collection_destroy(&dc[0]) == RILL_SUCCESS);
        if (me == 0)
            printf("rep %ld seed %ld: %ld tasks on %d ranks x %d workers, window %d: correct "
                   "(%d ran on rank 0)\n",
                   rep, seed, ntasks, nranks, rill_context_nworkers(ctx), w, mine);
    }
    rill_dtd_class_destroy(&cls);
    CHECK(rill_fini(&ctx) == RILL_SUCCESS);
    free(g.tasks);
    free(g.home[0]);
    free(g.home[1]);
    free(observed);
    free(here);
    free(ref_observed);
    free(ref[0]);
    free(ref[1]);
    free(data);
    return 0;
}
