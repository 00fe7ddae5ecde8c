/* rill_thread_stack_print (base/stack.c): a thread blocked in a wait answers with its
 * stack, which names the function it waits in (exported: ENABLE_EXPORTS); a thread that
 * masks the signal does not answer, and the caller says so within its time limit instead
 * of waiting; a third request after that still works (no state left behind). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "stack.h"
#include "test_util.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool go, masked_ready;

/* not static, not inlined: its name is in the frames */
__attribute__((noinline)) void stack_test_blocked_here(void)
{
    pthread_mutex_lock(&lock);
    while (!go)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
}

static void *blocked(void *arg)
{
    (void)arg;
    stack_test_blocked_here();
    return NULL;
}

static void *masked(void *arg)
{
    (void)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGRTMIN + 6);
    pthread_sigmask(SIG_BLOCK, &s, NULL);
    pthread_mutex_lock(&lock);
    masked_ready = true;
    pthread_cond_broadcast(&cond);
    while (!go)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static char *stack_of(pthread_t t, int timeout_ms, bool *answered)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    CHECK(out);
    *answered = rill_thread_stack_print(t, out, "  ", timeout_ms);
    fclose(out);
    return text;
}

int main(void)
{
    pthread_t a, b;
    CHECK(pthread_create(&a, NULL, blocked, NULL) == 0);
    CHECK(pthread_create(&b, NULL, masked, NULL) == 0);
    pthread_mutex_lock(&lock);
    while (!masked_ready)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    struct timespec ms50 = { 0, 50000000 }; /* let thread a reach its wait */
    nanosleep(&ms50, NULL);

    bool answered;
    char *s = stack_of(a, 5000, &answered);
    printf("blocked thread:\n%s", s);
    CHECK_MSG(answered && strstr(s, "  #0 ") && strstr(s, "stack_test_blocked_here"),
              "the blocked thread's stack names the function it waits in:\n%s", s);
    free(s);

    s = stack_of(b, 200, &answered);
    printf("masked thread:\n%s", s);
    CHECK_MSG(!answered && strstr(s, "did not answer in 200 ms") && !strstr(s, "#0"),
              "a thread that masks the signal is reported as not answering:\n%s", s);
    free(s);

    s = stack_of(a, 5000, &answered);
    CHECK_MSG(answered && strstr(s, "stack_test_blocked_here"), "asked again:\n%s", s);
    free(s);

    pthread_mutex_lock(&lock);
    go = true;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("thread stacks: ok\n");
    return 0;
}
