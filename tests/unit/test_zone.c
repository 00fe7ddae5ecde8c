/* The zone allocator (device/zone.c) against a model: random allocations and frees of
 * random sizes; every block inside the zone, aligned, disjoint from every other; the
 * bytes in use add up; a free of an unknown or freed address is refused; once everything
 * is freed the zone is one free segment again (neighbours were merged); a request larger
 * than the largest free segment is refused without changing anything. */
#include <stdint.h>
#include <stdlib.h>

#include "test_util.h"
#include "zone.h"

#define MAXB 512

typedef struct blk {
    uintptr_t addr;
    size_t size; /* rounded */
} blk_t;

static size_t round_up(size_t s, size_t a)
{
    return s ? (s + a - 1) / a * a : a;
}

int main(void)
{
    rill_zone_t *z;
    CHECK(rill_zone_create(0x1000, 100, 48, &z) == RILL_ERR_INVALID_ARG);   /* not a power of 2 */
    CHECK(rill_zone_create(0x1001, 4096, 256, &z) == RILL_ERR_INVALID_ARG); /* base unaligned */
    CHECK(rill_zone_create(0x1000, 100, 256, &z) == RILL_ERR_INVALID_ARG);  /* under a unit */

    const uintptr_t base = (uintptr_t)1 << 40;
    const size_t align = 256, size = (64 << 20) + 100; /* a ragged tail is dropped */
    CHECK(rill_zone_create(base, size, align, &z) == RILL_SUCCESS);
    CHECK(rill_zone_size(z) == (64 << 20));
    blk_t blocks[MAXB];
    int n = 0, double_frees = 0;
    size_t used = 0;
    srand(7);
    for (int step = 0; step < 200000; step++) {
        int r = rand() % 100;
        if (r < 55 && n < MAXB) {
            size_t want =
                (rand() % 4 == 0) ? (size_t)(rand() % (4 << 20)) : (size_t)(rand() % 9000);
            uintptr_t a = 0;
            size_t largest = rill_zone_largest_free(z);
            rill_status_t s = rill_zone_alloc(z, want, &a);
            if (round_up(want, align) > largest) {
                CHECK_MSG(s == RILL_ERR_NO_MEMORY, "step %d: %zu B granted, largest free %zu", step,
                          want, largest);
                CHECK(rill_zone_used(z) == used);
                continue;
            }
            CHECK_MSG(s == RILL_SUCCESS, "step %d: %zu B refused with %zu B free in one piece",
                      step, want, largest);
            size_t rs = round_up(want, align);
            CHECK(a % align == 0 && a >= base && a + rs <= base + rill_zone_size(z));
            for (int i = 0; i < n; i++)
                CHECK_MSG(a + rs <= blocks[i].addr || blocks[i].addr + blocks[i].size <= a,
                          "step %d: block %#lx+%zu overlaps %#lx+%zu", step, (unsigned long)a, rs,
                          (unsigned long)blocks[i].addr, blocks[i].size);
            blocks[n++] = (blk_t){ a, rs };
            used += rs;
        } else if (n > 0) {
            int i = rand() % n;
            CHECK(rill_zone_free(z, blocks[i].addr) == RILL_SUCCESS);
            used -= blocks[i].size;
            if (double_frees < 5 && rand() % 50 == 0) { /* a second free is refused */
                CHECK(rill_zone_free(z, blocks[i].addr) == RILL_ERR_NOT_FOUND);
                double_frees++;
            }
            blocks[i] = blocks[--n];
        }
        CHECK(rill_zone_used(z) == used && rill_zone_nblocks(z) == (size_t)n);
    }
    CHECK(rill_zone_free(z, base + 3) == RILL_ERR_NOT_FOUND); /* not a block start */
    while (n > 0)
        CHECK(rill_zone_free(z, blocks[--n].addr) == RILL_SUCCESS);
    CHECK(rill_zone_used(z) == 0 && rill_zone_largest_free(z) == rill_zone_size(z));
    uintptr_t a;
    CHECK(rill_zone_alloc(z, rill_zone_size(z) + 1, &a) == RILL_ERR_NO_MEMORY);
    CHECK(rill_zone_alloc(z, rill_zone_size(z), &a) == RILL_SUCCESS && a == base);
    CHECK(rill_zone_alloc(z, 1, &a) == RILL_ERR_NO_MEMORY);
    rill_zone_destroy(&z);
    CHECK(z == NULL);
    printf("zone allocator: 200000 random steps match the model\n");
    return 0;
}
