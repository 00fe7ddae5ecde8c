/* Aggregation on and off, with MPI initialised by the application (the engine uses it
 * and leaves it initialised): the same burst of small active messages must take far
 * fewer MPI messages with aggregation on, and arrive in priority order both ways. */
#include <mpi.h>
#include <string.h>

#include "test_comm_burst.h"

#define N_MSGS 1000

int main(int argc, char **argv)
{
    int provided = 0;
    CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided) == MPI_SUCCESS,
          "MPI_Init_thread");
    CHECK_OK(rill_params_load(&argc, &argv));
    CHECK_OK(rill_log_register_params());
    CHECK_OK(rill_comm_register_params());
    uint64_t mpi_msgs[2] = { 0, 0 };
    for (int agg = 1; agg >= 0; agg--) {
        CHECK_OK(rill_param_set("comm_aggregate", agg ? "yes" : "no"));
        rill_comm_t *comm = NULL;
        CHECK_OK(rill_comm_init(&argc, &argv, &comm));
        int rank = test_rank = rill_comm_rank(comm), size = rill_comm_size(comm);
        CHECK(size >= 2, "run with mpirun -np 2 or more");
        for (int t = 1; t <= BURST_NB_TAGS; t++)
            CHECK_OK(rill_comm_am_register(comm, t, burst_handler, NULL));
        CHECK_OK(rill_comm_am_register(comm, BURST_TAG_HOLD, burst_hold_handler, NULL));
        CHECK_OK(rill_comm_barrier(comm));

        rill_comm_stats_t s0, s1;
        rill_comm_stats(comm, &s0);
        burst_run(comm, N_MSGS, 64, 1234);
        rill_comm_stats(comm, &s1);
        uint64_t msgs = s1.mpi_msgs_sent - s0.mpi_msgs_sent;
        uint64_t ams = s1.am_sent - s0.am_sent;
        if (rank == 0) {
            printf("aggregation %s: %llu AMs in %llu MPI messages (%llu aggregated)\n",
                   agg ? "on" : "off", (unsigned long long)ams, (unsigned long long)msgs,
                   (unsigned long long)(s1.am_aggregated - s0.am_aggregated));
            CHECK(ams == N_MSGS + 1, "rank 0 sent %llu AMs", (unsigned long long)ams);
            if (agg)
                CHECK(msgs <= N_MSGS / 20 && s1.am_aggregated - s0.am_aggregated >= N_MSGS,
                      "aggregation on: %llu MPI messages", (unsigned long long)msgs);
            else
                CHECK(msgs == ams && s1.am_aggregated == s0.am_aggregated,
                      "aggregation off: %llu MPI messages for %llu AMs", (unsigned long long)msgs,
                      (unsigned long long)ams);
        }
        mpi_msgs[agg] = msgs;
        CHECK_OK(rill_comm_fini(&comm));
        CHECK(comm == NULL, "fini clears the handle");
    }
    int finalized = 1;
    MPI_Finalized(&finalized);
    CHECK(!finalized, "the engine finalized MPI that the application initialised");
    (void)mpi_msgs;
    MPI_Finalize();
    return 0;
}
