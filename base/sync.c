/* Eventcount on Linux futexes, and a monotonic clock. */
#include "sync.h"

#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long futex(atomic_uint *addr, int op, unsigned val, const struct timespec *ts)
{
    return syscall(SYS_futex, (unsigned *)addr, op, val, ts, NULL, 0);
}

void rill_evcount_init(rill_evcount_t *ev)
{
    atomic_init(&ev->epoch, 0);
    atomic_init(&ev->waiters, 0);
}

uint32_t rill_evcount_prepare(rill_evcount_t *ev)
{
    atomic_fetch_add_explicit(&ev->waiters, 1, memory_order_seq_cst);
    return atomic_load_explicit(&ev->epoch, memory_order_seq_cst);
}

void rill_evcount_cancel(rill_evcount_t *ev)
{
    atomic_fetch_sub_explicit(&ev->waiters, 1, memory_order_relaxed);
}

void rill_evcount_wait(rill_evcount_t *ev, uint32_t key, uint64_t timeout_us)
{
    struct timespec ts, *tsp = NULL;
    if (timeout_us) {
        ts.tv_sec = (time_t)(timeout_us / 1000000);
        ts.tv_nsec = (long)(timeout_us % 1000000) * 1000;
        tsp = &ts;
    }
    /* returns at once (EAGAIN) when the epoch moved since prepare */
    futex(&ev->epoch, FUTEX_WAIT_PRIVATE, key, tsp);
    atomic_fetch_sub_explicit(&ev->waiters, 1, memory_order_relaxed);
}

void rill_evcount_signal(rill_evcount_t *ev, int n)
{
    atomic_fetch_add_explicit(&ev->epoch, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&ev->waiters, memory_order_seq_cst) > 0)
        futex(&ev->epoch, FUTEX_WAKE_PRIVATE, n > 0 ? (unsigned)n : INT_MAX, NULL);
}

uint64_t rill_time_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void rill_thread_name(const char *name)
{
    char n[16]; /* the kernel's limit, with the terminating byte */
    strncpy(n, name, sizeof(n) - 1);
    n[sizeof(n) - 1] = '\0';
    prctl(PR_SET_NAME, (unsigned long)n, 0, 0, 0);
}

uint64_t rill_time_bracket(const uint64_t *lo, const uint64_t *hi, const uint64_t *d, int n,
                           uint64_t *mid)
{
    uint64_t in_lo = 0, in_hi = UINT64_MAX, nar_lo = 0, nar_hi = UINT64_MAX;
    for (int i = 0; i < n; i++) {
        uint64_t l = lo[i] + d[i], h = hi[i] + d[i];
        in_lo = l > in_lo ? l : in_lo;
        in_hi = h < in_hi ? h : in_hi;
        if (h - l < nar_hi - nar_lo) {
            nar_lo = l;
            nar_hi = h;
        }
    }
    if (in_lo > in_hi) { /* they disagree */
        in_lo = nar_lo;
        in_hi = nar_hi;
    }
    *mid = in_lo + (in_hi - in_lo) / 2;
    return in_hi - in_lo;
}
