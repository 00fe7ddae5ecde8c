/* Failure injection for tests linked with the wrappers of alloc_inject.c (see
 * alloc.cmake): every allocation (malloc, calloc, realloc, posix_memalign, aligned_alloc,
 * strdup, strndup) and every pthread_create made by the test and the Rill layers linked
 * into it is counted once armed, and the Nth one fails (NULL / ENOMEM / EAGAIN). Only
 * calls made by the thread that armed the counter count, so the sequence is the same in
 * every run whatever the other threads do. Shared libraries (MPI, hwloc, libc itself)
 * are not wrapped: their allocations are neither counted nor failed.
 *
 * In builds with MPI the wrappers also stand in for the few MPI calls a one-rank Rill
 * makes (init, communicator queries, finalize), so that a forked child does not pay for
 * an MPI singleton start; MPI_Init_thread counts as a fallible call too. */
#ifndef RILL_TEST_ALLOC_INJECT_H
#define RILL_TEST_ALLOC_INJECT_H

#include <stdbool.h>

/** Count from now on, on the calling thread, and fail call number fail_at (1-based; 0:
 * fail none). Resets the count. */
void alloc_inject_arm(long fail_at);
/** Stop counting (the count is kept). */
void alloc_inject_disarm(void);
/** Calls counted since alloc_inject_arm. */
long alloc_inject_count(void);
/** Whether the failure was injected. */
bool alloc_inject_fired(void);
/** Use the real MPI instead of the stand-in (builds with MPI; call before rill_init). */
void alloc_inject_real_mpi(bool real);

#endif
