/* A rank that dies mid-traffic must end the whole job instead of leaving the others
 * waiting: every rank floods the others with active messages and rank 1 kills itself
 * with SIGKILL. Run by test_comm_kill.sh, which expects mpirun to fail fast and name
 * rank 1. The survivors would wait a minute on their own: only mpirun ends them in time. */
#include <signal.h>
#include <string.h>

#include "test_comm_util.h"

static atomic_uint_fast64_t received;

static void count_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)comm, (void)src, (void)msg, (void)len, (void)arg;
    atomic_fetch_add_explicit(&received, 1, memory_order_relaxed);
}

int main(int argc, char **argv)
{
    rill_comm_t *comm = test_comm_start(&argc, &argv);
    int rank = rill_comm_rank(comm), size = rill_comm_size(comm);
    CHECK(size >= 2, "run with mpirun -np 2 or more");
    CHECK_OK(rill_comm_am_register(comm, 0, count_handler, NULL));
    CHECK_OK(rill_comm_barrier(comm));
    char msg[512];
    memset(msg, rank, sizeof(msg));
    double t0 = test_now();
    for (uint64_t i = 0;; i++) {
        for (int dst = 0; dst < size; dst++)
            if (dst != rank)
                CHECK_OK(rill_comm_am_send(comm, dst, 0, msg, 1 + i % sizeof(msg), 0));
        if (rank == 1 && test_now() - t0 > 0.3) {
            fprintf(stderr, "rank 1: killing myself after %llu messages received\n",
                    (unsigned long long)atomic_load(&received));
            fflush(stderr);
            raise(SIGKILL);
        }
        if (test_now() - t0 > 60)
            break;
        test_sleep_us(i % 64 == 0 ? 1000 : 0);
    }
    /* not reached when mpirun does its job; a collective would hang here */
    CHECK_OK(rill_comm_barrier(comm));
    CHECK_OK(rill_comm_fini(&comm));
    return 0;
}
