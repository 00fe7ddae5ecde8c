/* Another thread's call stack (stack.h). The handler only calls backtrace(), whose first
 * call (it loads the unwinder, libgcc_s) is made beforehand by the caller's thread, so
 * that in the handler it neither allocates nor takes the loader's lock. */
#define _GNU_SOURCE
#include "stack.h"

#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define STACK_MAX 64

static pthread_mutex_t stack_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t stack_once = PTHREAD_ONCE_INIT;
static bool stack_ok;
static void *stack_frames[STACK_MAX];
static int stack_n;
/* The request's number, set by the caller (release) before the signal; the handler reads
 * it (acquire: the caller's reads of an earlier answer's frames happen before the handler
 * writes them again), writes the frames, then stores the number in answered with release:
 * the caller's acquire load that sees its own number sees the frames. A late answer to an earlier
 * request (one that timed out) carries an older number and is not taken for this one's; it may be
 * writing the frames while a later request waits, which is why a request that times out prints
 * none. */
static atomic_uint stack_asked, stack_answered;

static void stack_handler(int sig)
{
    (void)sig;
    int saved = errno;
    unsigned req = atomic_load_explicit(&stack_asked, memory_order_acquire);
    stack_n = backtrace(stack_frames, STACK_MAX);
    atomic_store_explicit(&stack_answered, req, memory_order_release);
    errno = saved;
}

static void stack_install(void)
{
    void *warm[2];
    (void)backtrace(warm, 2); /* loads the unwinder here, not in the handler */
    struct sigaction sa = { 0 };
    sa.sa_handler = stack_handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    stack_ok = sigaction(SIGRTMIN + 6, &sa, NULL) == 0;
}

bool rill_thread_stack_print(pthread_t t, FILE *out, const char *indent, int timeout_ms)
{
    pthread_once(&stack_once, stack_install);
    if (!stack_ok) {
        fprintf(out, "%s(no stack: the signal handler could not be installed)\n", indent);
        return false;
    }
    pthread_mutex_lock(&stack_lock);
    unsigned req = atomic_fetch_add_explicit(&stack_asked, 1, memory_order_release) + 1;
    bool got = false;
    if (pthread_kill(t, SIGRTMIN + 6) == 0) {
        struct timespec ms = { 0, 1000000 };
        for (int i = 0; i < timeout_ms && !got; i++) {
            got = atomic_load_explicit(&stack_answered, memory_order_acquire) == req;
            if (!got)
                nanosleep(&ms, NULL);
        }
    }
    if (!got) {
        fprintf(out, "%s(no stack: the thread did not answer in %d ms)\n", indent, timeout_ms);
        pthread_mutex_unlock(&stack_lock);
        return false;
    }
    /* frame 0 is the handler, frame 1 the signal's return: the thread's own start at 2 */
    char **names = backtrace_symbols(stack_frames, stack_n);
    for (int i = 2; i < stack_n; i++)
        fprintf(out, "%s#%d %s\n", indent, i - 2, names ? names[i] : "?");
    free(names);
    pthread_mutex_unlock(&stack_lock);
    return true;
}
