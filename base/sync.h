/* Synchronisation primitives: spinlock, eventcount (futex), CPU relax. Internal. */
#ifndef RILL_BASE_SYNC_H
#define RILL_BASE_SYNC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

static inline void rill_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* ------------------------------------------------------------ spinlock */

/** Test-and-test-and-set lock, for short critical sections that never block. */
typedef struct rill_spinlock {
    atomic_int locked;
} rill_spinlock_t;

#define RILL_SPINLOCK_INIT                                                                         \
    {                                                                                              \
        0                                                                                          \
    }

static inline void rill_spinlock_init(rill_spinlock_t *l)
{
    atomic_init(&l->locked, 0);
}

static inline void rill_spinlock_lock(rill_spinlock_t *l)
{
    for (;;) {
        /* acquire pairs with the release store in rill_spinlock_unlock */
        if (!atomic_exchange_explicit(&l->locked, 1, memory_order_acquire))
            return;
        while (atomic_load_explicit(&l->locked, memory_order_relaxed))
            rill_cpu_relax();
    }
}

static inline bool rill_spinlock_trylock(rill_spinlock_t *l)
{
    return !atomic_load_explicit(&l->locked, memory_order_relaxed) &&
           !atomic_exchange_explicit(&l->locked, 1, memory_order_acquire);
}

static inline void rill_spinlock_unlock(rill_spinlock_t *l)
{
    atomic_store_explicit(&l->locked, 0, memory_order_release);
}

/* ------------------------------------------------------------ eventcount */

/**
 * An eventcount lets threads sleep until "something changed" without a lost wakeup.
 * A waiter calls prepare (registers itself, reads the epoch), re-checks its
 * condition, then wait(key) or cancel. A signaller publishes its change, then calls
 * signal (bumps the epoch, wakes sleepers if any registered).
 *
 * Ordering: prepare's waiters increment and epoch load, and signal's epoch increment
 * and waiters load, are all seq_cst, so they sit in one total order. If the signaller
 * reads waiters == 0, its epoch bump precedes the waiter's registration, hence the
 * waiter's epoch read and its re-check of the condition come after the published
 * change and see it. Otherwise the signaller wakes the futex; a waiter that has not
 * slept yet finds epoch != key and the futex wait returns at once.
 */
typedef struct rill_evcount {
    atomic_uint epoch;
    atomic_int waiters;
} rill_evcount_t;

void rill_evcount_init(rill_evcount_t *ev);
uint32_t rill_evcount_prepare(rill_evcount_t *ev);
void rill_evcount_cancel(rill_evcount_t *ev);
/** Sleep until signalled after prepare returned key, or timeout_us elapsed (0: no limit). */
void rill_evcount_wait(rill_evcount_t *ev, uint32_t key, uint64_t timeout_us);
/** Wake up to n sleepers (n <= 0: all). */
void rill_evcount_signal(rill_evcount_t *ev, int n);

/** Monotonic time in nanoseconds. */
uint64_t rill_time_ns(void);

/** Name the calling thread as top -H, ps -L, gdb and perf show it (the first 15 bytes). */
void rill_thread_name(const char *name);

/**
 * An instant of another clock (a GPU's) placed on the host's: sample i lies in [lo[i],
 * hi[i]] on the host clock and d[i] ns before the instant (on the other clock), so each
 * shifted bracket [lo[i] + d[i], hi[i] + d[i]] holds the instant. *mid gets the middle of
 * their intersection, or of the narrowest one when they do not intersect (a sample whose
 * bracket was wrong, e.g. a clock read late); returns that width in ns. n >= 1.
 */
uint64_t rill_time_bracket(const uint64_t *lo, const uint64_t *hi, const uint64_t *d, int n,
                           uint64_t *mid);

#endif
