/* Link-time wrappers behind alloc_inject.h: the executable is linked with
 * -Wl,--wrap=<name> for each function below (alloc.cmake), so the calls of every object
 * and static library linked into it land in __wrap_<name>, and __real_<name> is the
 * libc (or sanitizer) function. */
#define _GNU_SOURCE
#include "alloc_inject.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rill/config.h"

static long fail_at; /* 1-based; 0: none */
static long count;   /* fallible calls counted since arming */
static bool armed;   /* counting on the arming thread */
static atomic_bool fired;
static _Thread_local bool counting_thread;
static bool trace; /* ALLOC_INJECT_TRACE set: list every counted call on stderr */

void alloc_inject_arm(long n)
{
    fail_at = n;
    count = 0;
    atomic_store(&fired, false);
    counting_thread = true;
    trace = getenv("ALLOC_INJECT_TRACE") != NULL;
    armed = true;
}

void alloc_inject_disarm(void)
{
    armed = false;
}

long alloc_inject_count(void)
{
    return count;
}

bool alloc_inject_fired(void)
{
    return atomic_load(&fired);
}

/* Count a fallible call of the arming thread; true when it is the one to fail. The
 * failure is reported on stderr with the call stack (raw addresses: resolve them with
 * addr2line -e <test> <offset>). */
#define inject(what, size) inject_at((what), (size), __builtin_return_address(0))
static bool inject_at(const char *what, size_t size, void *caller)
{
    if (!counting_thread || !armed) /* other threads read nothing shared */
        return false;
    ++count;
    if (trace) { /* "#n what(size) object+offset": addr2line -e object offset */
        Dl_info info;
        if (dladdr(caller, &info) && info.dli_fname)
            fprintf(stderr, "alloc_inject: #%ld %s(%zu) %s+%#lx\n", count, what, size,
                    info.dli_fname, (unsigned long)((char *)caller - (char *)info.dli_fbase));
    }
    if (count != fail_at)
        return false;
    atomic_store(&fired, true);
    char line[160];
    int n = snprintf(line, sizeof(line), "alloc_inject: failing call #%ld: %s(%zu), from:\n", count,
                     what, size);
    if (n > 0 && write(2, line, (size_t)n) < 0)
        return true;
    void *frames[24];
    int nf = backtrace(frames, 24);
    backtrace_symbols_fd(frames, nf, 2);
    return true;
}

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *ptr, size_t size);
int __real_posix_memalign(void **ptr, size_t align, size_t size);
void *__real_aligned_alloc(size_t align, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
                          void *arg);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *ptr, size_t size);
int __wrap_posix_memalign(void **ptr, size_t align, size_t size);
void *__wrap_aligned_alloc(size_t align, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
                          void *arg);

void *__wrap_malloc(size_t size)
{
    if (inject("malloc", size)) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
    if (inject("calloc", n * size)) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_calloc(n, size);
}

void *__wrap_realloc(void *ptr, size_t size)
{
    if (inject("realloc", size)) { /* the old block stays valid, as with a real failure */
        errno = ENOMEM;
        return NULL;
    }
    return __real_realloc(ptr, size);
}

int __wrap_posix_memalign(void **ptr, size_t align, size_t size)
{
    if (inject("posix_memalign", size))
        return ENOMEM; /* *ptr untouched, as glibc leaves it */
    return __real_posix_memalign(ptr, align, size);
}

void *__wrap_aligned_alloc(size_t align, size_t size)
{
    if (inject("aligned_alloc", size)) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_aligned_alloc(align, size);
}

char *__wrap_strdup(const char *s)
{
    if (inject("strdup", strlen(s) + 1)) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
    if (inject("strndup", strnlen(s, n) + 1)) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_strndup(s, n);
}

int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
                          void *arg)
{
    if (inject("pthread_create", 0))
        return EAGAIN;
    return __real_pthread_create(thread, attr, fn, arg);
}

/* ------------------------------------------------------------ MPI stand-in */

static bool real_mpi;

void alloc_inject_real_mpi(bool real)
{
    real_mpi = real;
}

#if RILL_HAVE_MPI
#include <mpi.h>

/* One process, one rank: what rill_comm_init and rill_comm_fini ask of MPI when the
 * process was not started by mpirun. */
static int stub_initialized, stub_finalized;

#define REAL_OR(call, args)                                                                        \
    do {                                                                                           \
        if (real_mpi)                                                                              \
            return __real_##call args;                                                             \
    } while (0)

int __real_MPI_Initialized(int *flag);
int __real_MPI_Finalized(int *flag);
int __real_MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int __real_MPI_Query_thread(int *provided);
int __real_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int __real_MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler eh);
int __real_MPI_Comm_rank(MPI_Comm comm, int *rank);
int __real_MPI_Comm_size(MPI_Comm comm, int *size);
int __real_MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newc);
int __real_MPI_Comm_free(MPI_Comm *comm);
int __real_MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *val, int *flag);
int __real_MPI_Finalize(void);
int __real_MPI_Abort(MPI_Comm comm, int code);

int __wrap_MPI_Initialized(int *flag);
int __wrap_MPI_Finalized(int *flag);
int __wrap_MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int __wrap_MPI_Query_thread(int *provided);
int __wrap_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int __wrap_MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler eh);
int __wrap_MPI_Comm_rank(MPI_Comm comm, int *rank);
int __wrap_MPI_Comm_size(MPI_Comm comm, int *size);
int __wrap_MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newc);
int __wrap_MPI_Comm_free(MPI_Comm *comm);
int __wrap_MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *val, int *flag);
int __wrap_MPI_Finalize(void);
int __wrap_MPI_Abort(MPI_Comm comm, int code);

int __wrap_MPI_Initialized(int *flag)
{
    REAL_OR(MPI_Initialized, (flag));
    *flag = stub_initialized;
    return MPI_SUCCESS;
}

int __wrap_MPI_Finalized(int *flag)
{
    REAL_OR(MPI_Finalized, (flag));
    *flag = stub_finalized;
    return MPI_SUCCESS;
}

int __wrap_MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (inject("MPI_Init_thread", 0))
        return MPI_ERR_OTHER;
    REAL_OR(MPI_Init_thread, (argc, argv, required, provided));
    stub_initialized = 1;
    *provided = MPI_THREAD_MULTIPLE;
    return MPI_SUCCESS;
}

int __wrap_MPI_Query_thread(int *provided)
{
    REAL_OR(MPI_Query_thread, (provided));
    *provided = MPI_THREAD_MULTIPLE;
    return MPI_SUCCESS;
}

int __wrap_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    REAL_OR(MPI_Comm_dup, (comm, newcomm));
    *newcomm = comm;
    return MPI_SUCCESS;
}

int __wrap_MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler eh)
{
    REAL_OR(MPI_Comm_set_errhandler, (comm, eh));
    return MPI_SUCCESS;
}

int __wrap_MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    REAL_OR(MPI_Comm_rank, (comm, rank));
    *rank = 0;
    return MPI_SUCCESS;
}

int __wrap_MPI_Comm_size(MPI_Comm comm, int *size)
{
    REAL_OR(MPI_Comm_size, (comm, size));
    *size = 1;
    return MPI_SUCCESS;
}

int __wrap_MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newc)
{
    REAL_OR(MPI_Comm_split_type, (comm, type, key, info, newc));
    *newc = comm;
    return MPI_SUCCESS;
}

int __wrap_MPI_Comm_free(MPI_Comm *comm)
{
    REAL_OR(MPI_Comm_free, (comm));
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int __wrap_MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *val, int *flag)
{
    REAL_OR(MPI_Comm_get_attr, (comm, keyval, val, flag));
    *flag = 0;
    return MPI_SUCCESS;
}

int __wrap_MPI_Finalize(void)
{
    REAL_OR(MPI_Finalize, ());
    stub_finalized = 1;
    return MPI_SUCCESS;
}

int __wrap_MPI_Abort(MPI_Comm comm, int code)
{
    REAL_OR(MPI_Abort, (comm, code));
    fprintf(stderr, "alloc_inject: MPI_Abort(%d)\n", code);
    abort();
}
#endif
