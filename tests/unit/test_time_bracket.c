/* rill_time_bracket (base/sync.c), how the GPU managers place a GPU clock's reference event
 * on the host clock: brackets that agree give the middle of their intersection; one that
 * disagrees with the others (a clock read late) makes the narrowest one win; one sample
 * gives its own middle; the GPU's distances shift each bracket before they meet. */
#include <stdint.h>

#include "sync.h"
#include "test_util.h"

int main(void)
{
    uint64_t mid;
    /* one sample: [100, 110] shifted by 5 */
    CHECK(rill_time_bracket((uint64_t[]){ 100 }, (uint64_t[]){ 110 }, (uint64_t[]){ 5 }, 1, &mid) ==
          10);
    CHECK_MSG(mid == 110, "one bracket's middle: %llu", (unsigned long long)mid);
    /* three samples of the same instant, 1000 and 500 ns before it on the other clock:
     * [1000, 1040] + 1000, [1510, 1530] + 500, [2005, 2050] + 0 meet in [2010, 2030] */
    uint64_t lo[] = { 1000, 1510, 2005 }, hi[] = { 1040, 1530, 2050 }, d[] = { 1000, 500, 0 };
    uint64_t w = rill_time_bracket(lo, hi, d, 3, &mid);
    CHECK_MSG(w == 20 && mid == 2020, "the intersection [2010, 2030]: width %llu, middle %llu",
              (unsigned long long)w, (unsigned long long)mid);
    /* a sample read late lies outside the others: [3000, 3004] cannot hold the instant
     * (after 2030): the narrowest bracket, [2006, 2008] + 0, wins */
    uint64_t lo2[] = { 1000, 3000, 2006 }, hi2[] = { 1040, 3004, 2008 }, d2[] = { 1000, 0, 0 };
    w = rill_time_bracket(lo2, hi2, d2, 3, &mid);
    CHECK_MSG(w == 2 && mid == 2007, "they disagree: the narrowest, width %llu middle %llu",
              (unsigned long long)w, (unsigned long long)mid);
    printf("time brackets: ok\n");
    return 0;
}
