/* One rank (no mpirun, or a build without MPI): rank 0 of 1, no comm thread; active
 * messages and GETs to self are refused; collectives are local copies. */
#include <string.h>

#include "test_comm_util.h"

static void never(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)comm, (void)src, (void)msg, (void)len, (void)arg;
    CHECK(0, "no message can arrive");
}

int main(int argc, char **argv)
{
    rill_comm_t *comm = test_comm_start(&argc, &argv);
    CHECK(rill_comm_size(comm) == 1 && rill_comm_rank(comm) == 0, "rank %d of %d",
          rill_comm_rank(comm), rill_comm_size(comm));
    CHECK(rill_comm_local_size(comm) == 1 && rill_comm_local_rank(comm) == 0, "local rank");
    CHECK(rill_comm_short_limit(comm) == 8192, "default short limit %zu",
          rill_comm_short_limit(comm));
    CHECK_OK(rill_comm_am_register(comm, 3, never, NULL));
    CHECK(rill_comm_am_send(comm, 0, 3, "x", 1, 0) == RILL_ERR_INVALID_ARG, "AM to self");
    uint64_t in[3] = { 1, 2, 3 }, out[3] = { 0 }, h1, h2;
    CHECK_OK(rill_comm_allreduce_u64(comm, in, out, 3, RILL_COMM_SUM));
    CHECK(memcmp(in, out, sizeof(in)) == 0, "allreduce on one rank copies");
    CHECK_OK(rill_comm_barrier(comm));
    CHECK_OK(rill_comm_expose(comm, in, sizeof(in), 1, NULL, NULL, &h1));
    CHECK_OK(rill_comm_expose(comm, in, sizeof(in), 1, NULL, NULL, &h2));
    CHECK(h1 != h2, "handles are unique");
    CHECK(rill_comm_get(comm, 0, h1, out, sizeof(out), 0, NULL, NULL) == RILL_ERR_INVALID_ARG,
          "GET from self");
    CHECK_OK(rill_comm_fini(&comm));
    printf("single rank: ok\n");
    return 0;
}
