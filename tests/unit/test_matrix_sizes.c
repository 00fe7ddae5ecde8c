/* Matrix sizes that cannot fit: every one is refused with a message that names the sizes,
 * never an overflow (UBSan) or a bare "out of memory": int-sized dimensions whose tile
 * counts overflow an int, tiles whose bytes overflow, and matrices larger than the
 * machine's memory. A matrix that fits is still made. */
#include <limits.h>
#include <string.h>

#include "rill/rill.h"
#include "test_util.h"

static void refused(rill_context_t *ctx, int m, int n, int mb, int nb, const char *needle)
{
    rill_matrix_t *A = NULL;
    test_capture_t cap;
    test_capture_begin(&cap);
    rill_status_t s = rill_matrix_create(ctx, m, n, mb, nb, 1, 1, &A);
    char *out = test_capture_end(&cap);
    CHECK_MSG(s != RILL_SUCCESS && !A, "%d x %d, tiles %d x %d: status %d", m, n, mb, nb, s);
    CHECK_MSG(strstr(out, "rill_matrix_create") && strstr(out, needle),
              "%d x %d, tiles %d x %d: the message does not say '%s':\n%s", m, n, mb, nb, needle,
              out);
    free(out);
}

int main(int argc, char **argv)
{
    rill_context_t *ctx;
    CHECK(rill_init(&argc, &argv, &ctx) == RILL_SUCCESS);
    refused(ctx, INT_MAX, INT_MAX, 1, 1, "more than this process can address");
    refused(ctx, INT_MAX, INT_MAX, INT_MAX, INT_MAX, "tiles of");
    refused(ctx, INT_MAX, INT_MAX, 1024, 1024, "2147483647 x 2147483647");
    refused(ctx, 4000000, 4000000, 1024, 1024, "more than this machine's");
    rill_matrix_t *A;
    CHECK(rill_matrix_create(ctx, 1000, 999, 128, 100, 1, 1, &A) == RILL_SUCCESS);
    CHECK(rill_matrix_mt(A) == 8 && rill_matrix_nt(A) == 10);
    CHECK(rill_matrix_destroy(&A) == RILL_SUCCESS);
    CHECK(rill_fini(&ctx) == RILL_SUCCESS);
    printf("matrix sizes that cannot fit: refused with their sizes\n");
    return 0;
}
