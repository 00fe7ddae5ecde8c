/* The runtime's collectives: allreduce (sum, min, max; in place or not) and barrier,
 * carried out by the comm thread without blocking it (active messages keep flowing
 * while a barrier waits), and an idle engine that does not burn a core. */
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>

#include "rill/config.h"
#include "test_comm_util.h"

static int rank, size;
static atomic_uint_fast64_t pings;

static void ping_handler(rill_comm_t *comm, int src, void *msg, size_t len, void *arg)
{
    (void)comm, (void)src, (void)msg, (void)len, (void)arg;
    atomic_fetch_add_explicit(&pings, 1, memory_order_release);
}

static void *late_sender(void *arg)
{
    rill_comm_t *comm = arg;
    test_sleep_us(200000); /* the main thread is inside the barrier by now */
    CHECK_OK(rill_comm_am_send(comm, 0, 0, "late", 4, 0));
    return NULL;
}

static void check_allreduce(rill_comm_t *comm, int count, int in_place)
{
    uint64_t *in = malloc((size_t)count * 8), *out = malloc((size_t)count * 8);
    static const rill_comm_op_t ops[] = { RILL_COMM_SUM, RILL_COMM_MIN, RILL_COMM_MAX };
    for (int o = 0; o < 3; o++) {
        for (int i = 0; i < count; i++) {
            /* large values: a 32-bit or signed reduction would get them wrong */
            in[i] = ((uint64_t)(rank + 1) << 40) + (uint64_t)i * 3 + 0x8000000000000000ull / 8;
            out[i] = 0;
        }
        uint64_t *src = in;
        if (in_place) {
            memcpy(out, in, (size_t)count * 8);
            src = out;
        }
        CHECK_OK(rill_comm_allreduce_u64(comm, src, out, count, ops[o]));
        for (int i = 0; i < count; i++) {
            uint64_t base = (uint64_t)i * 3 + 0x8000000000000000ull / 8, want;
            if (ops[o] == RILL_COMM_SUM) {
                want = (uint64_t)size * base;
                for (int r = 0; r < size; r++)
                    want += (uint64_t)(r + 1) << 40;
            } else if (ops[o] == RILL_COMM_MIN) {
                want = base + (1ull << 40);
            } else {
                want = base + ((uint64_t)size << 40);
            }
            CHECK(out[i] == want, "allreduce op %d count %d in_place %d: [%d] = %llx, want %llx", o,
                  count, in_place, i, (unsigned long long)out[i], (unsigned long long)want);
        }
    }
    free(in);
    free(out);
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

int main(int argc, char **argv)
{
    rill_comm_t *comm = test_comm_start(&argc, &argv);
    rank = rill_comm_rank(comm);
    size = rill_comm_size(comm);
    CHECK(size >= 2, "run with mpirun -np 2 or more");
    CHECK_OK(rill_comm_am_register(comm, 0, ping_handler, NULL));
    CHECK(rill_comm_allreduce_u64(comm, NULL, NULL, 1, RILL_COMM_SUM) == RILL_ERR_INVALID_ARG,
          "NULL buffers");
    CHECK_OK(rill_comm_barrier(comm));

    int counts[] = { 1, 5, 1000 };
    for (int c = 0; c < 3; c++)
        for (int ip = 0; ip < 2; ip++)
            check_allreduce(comm, counts[c], ip);
    CHECK_OK(rill_comm_allreduce_u64(comm, NULL, NULL, 0, RILL_COMM_SUM));

    /* Many barriers in a row, with traffic in between. */
    double t0 = test_now();
    for (int i = 0; i < 50; i++) {
        CHECK_OK(rill_comm_am_send(comm, (rank + 1) % size, 0, &i, sizeof(i), 0));
        CHECK_OK(rill_comm_barrier(comm));
    }
    test_wait_ge(&pings, 50, 10, "pings");
    if (rank == 0)
        printf("50 barriers in %.3f s\n", test_now() - t0);

    /* The comm thread must keep serving traffic while a barrier is pending: rank size-1
     * enters the barrier and only then (from another thread) sends rank 0 the message
     * that rank 0 waits for before it enters the barrier. A comm thread stuck in a
     * blocking MPI_Barrier would never send it. */
    CHECK_OK(rill_comm_barrier(comm));
    atomic_store(&pings, 0);
    CHECK_OK(rill_comm_barrier(comm));
    pthread_t th;
    if (rank == size - 1)
        CHECK(pthread_create(&th, NULL, late_sender, comm) == 0, "pthread_create");
    if (rank == 0)
        test_wait_ge(&pings, 1, 10, "the message sent during the barrier");
    CHECK_OK(rill_comm_barrier(comm));
    if (rank == size - 1)
        pthread_join(th, NULL);

    /* Idle: over 0.5 s with nothing to do the process uses little CPU (the comm thread
     * sleeps; the main thread sleeps in nanosleep). */
    rill_comm_stats_t s0, s1;
    rill_comm_stats(comm, &s0);
    double w0 = test_now(), c0 = cpu_seconds();
    test_sleep_us(500000);
    double w1 = test_now(), c1 = cpu_seconds();
    rill_comm_stats(comm, &s1);
    double load = (c1 - c0) / (w1 - w0);
    printf("rank %d idle: %.1f%% of a core, %llu sleeps\n", rank, 100 * load,
           (unsigned long long)(s1.sleeps - s0.sleeps));
    /* a spinning comm thread takes a whole core; sleeping, a quarter at most, and half
     * under a sanitizer, whose instrumentation makes each of the ~130 wakeups per second
     * (and MPI's polling inside them) several times dearer (TSan, 4 ranks on 2 cores: 26%) */
    double limit = RILL_SANITIZER[0] ? 0.5 : 0.25;
    CHECK(load < limit, "idle comm thread uses %.0f%% of a core (limit %.0f%%)", 100 * load,
          100 * limit);
    CHECK(s1.sleeps > s0.sleeps, "the comm thread never slept");
    CHECK_OK(rill_comm_barrier(comm));
    CHECK_OK(rill_comm_fini(&comm));
    return 0;
}
