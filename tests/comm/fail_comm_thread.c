/* LD_PRELOAD library for test_comm_thread_fail_np2: pthread_create fails (EAGAIN) when
 * called from rill_comm_mpi_start_thread (librill's comm thread) in the MPI rank named by
 * RILL_TEST_FAIL_COMM_THREAD_RANK; every other call goes to the real one. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
    static create_fn real;
    if (!real)
        real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    const char *want = getenv("RILL_TEST_FAIL_COMM_THREAD_RANK");
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    Dl_info info;
    if (want && rank && !strcmp(want, rank) && dladdr(__builtin_return_address(0), &info) &&
        info.dli_sname && !strcmp(info.dli_sname, "rill_comm_mpi_start_thread"))
        return EAGAIN;
    return real ? real(thread, attr, start, arg) : ENOSYS;
}
