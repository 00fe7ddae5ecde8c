/* Another thread's call stack, for the watchdog's reports. Internal. */
#ifndef RILL_BASE_STACK_H
#define RILL_BASE_STACK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

/** Print thread t's call stack on out, one frame per line after indent: the thread is
 *  interrupted by a signal (a real-time one, SIGRTMIN + 6) whose handler records its
 *  return addresses, and the caller names them (backtrace_symbols: a shared library's
 *  exported functions by name, the rest as library+offset for addr2line). Waits at most
 *  timeout_ms for the thread to answer (one blocked with the signal masked, or stopped,
 *  does not); false, with a line saying so, when it did not. One caller at a time. */
bool rill_thread_stack_print(pthread_t t, FILE *out, const char *indent, int timeout_ms);

#endif
