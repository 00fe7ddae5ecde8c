/* A collection's datum whose registration in the collection fails (out of memory) is
 * unwound without a double free: its storage is freed once, with the copy that owns it,
 * and rill_collection_data_of returns NULL. The hash-map insertion is made to fail by
 * link-time wrapping (-Wl,--wrap=rill_hmap_put); ASan and glibc catch a double free. */
#include <stdbool.h>

#include "rill/rill.h"
#include "test_util.h"

#include "hmap.h"

rill_status_t __real_rill_hmap_put(rill_hmap_t *map, uint64_t key, void *val);
static bool fail_puts;

rill_status_t __wrap_rill_hmap_put(rill_hmap_t *map, uint64_t key, void *val);
rill_status_t __wrap_rill_hmap_put(rill_hmap_t *map, uint64_t key, void *val)
{
    if (fail_puts)
        return RILL_ERR_NO_MEMORY;
    return __real_rill_hmap_put(map, key, val);
}

static int home_here(uint64_t key, void *arg)
{
    (void)key;
    (void)arg;
    return 0;
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    CHECK(rill_init(&argc, &argv, &ctx) == RILL_SUCCESS);
    rill_collection_t *dc;
    CHECK(rill_collection_create(ctx, 4096, home_here, NULL, &dc) == RILL_SUCCESS);
    fail_puts = true;
    CHECK(rill_collection_data_of(dc, 7) == NULL); /* home storage allocated, then unwound */
    fail_puts = false;
    rill_data_t *d = rill_collection_data_of(dc, 7); /* a later call works */
    CHECK(d && rill_data_ptr(d));
    CHECK(rill_collection_destroy(&dc) == RILL_SUCCESS);
    CHECK(rill_fini(&ctx) == RILL_SUCCESS);
    printf("a failed datum registration is unwound once\n");
    return 0;
}
