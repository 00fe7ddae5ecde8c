/* The trace writer: events recorded per thread in memory (no lock, no I/O while a buffer
 * has room) and written at the end as one Chrome trace-event JSON file per rank,
 * `<profile_trace>.<rank>.json`, which Perfetto and chrome://tracing open. Timestamps come
 * from rill_time_ns() and are aligned across ranks by an offset the comm layer measures.
 * Off by default; when off every recording call is one predictable branch. Internal. */
#ifndef RILL_BASE_TRACE_H
#define RILL_BASE_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "rill/status.h"

/** Track ids (the "tid" of the JSON): workers 0..n-1, then the runtime's own threads. */
enum {
    RILL_TRACE_TID_COMM = 1000,        /* the comm thread */
    RILL_TRACE_TID_GPU_MANAGER = 2000, /* + GPU index */
    RILL_TRACE_TID_GPU_STREAM = 3000,  /* + 100 * GPU index + stream index */
};

/** Whether tracing is on (profile_trace was set). Any thread. */
extern bool rill_trace_enabled;
static inline bool rill_trace_on(void)
{
    return __builtin_expect(rill_trace_enabled, 0);
}

/** Register profile_trace and profile_trace_max_mb, and read them (rill_trace_on is
 * valid from here). Main thread. */
rill_status_t rill_trace_register_params(void);
/** Start a trace for this rank of nranks. Main thread, after the comm layer knows the
 * rank. */
rill_status_t rill_trace_start(int rank, int nranks);
/** Create `<prefix>.<rank>.json` now, so that a path that cannot be written fails the
 * start (RILL_ERR_IO, logged with the path) rather than the end of a whole run. Main
 * thread, after rill_trace_start. */
rill_status_t rill_trace_open(void);
/** The clock alignment measured by the comm layer: aligned = local - offset_ns; times are
 * written relative to origin_ns (an aligned time, the same on every rank). Main thread,
 * before the threads that record start. */
void rill_trace_set_clock(int64_t offset_ns, uint64_t origin_ns);

/** Name the calling thread's track (tid). Each recording thread calls it once first. */
void rill_trace_thread(int tid, const char *name);

/** A further track that the calling thread (only) writes, e.g. a GPU manager's tracks for
 * its streams. NULL when tracing is off or out of memory. */
typedef struct trace_buf rill_trace_track_t;
rill_trace_track_t *rill_trace_track(int tid, const char *name);
/** Make t the calling thread's current track (the events below go there); returns the one
 * it replaces, to switch back. NULL t: nothing changes (returns NULL). */
rill_trace_track_t *rill_trace_switch(rill_trace_track_t *t);

/** A slice [t0, t1] on the calling thread's track. name and args are copied (truncated).
 * cat: "task", "comm", ... (static storage). id: a task number or 0. Any thread. */
void rill_trace_slice(const char *cat, const char *name, uint64_t t0, uint64_t t1, int32_t priority,
                      uint64_t id, const char *args);
/** A flow point on the calling thread's track at t: ph 's' (start), 't' (step) or 'f'
 * (end, bound to the enclosing slice). The same id on both ends, across ranks. */
void rill_trace_flow(char ph, uint64_t id, uint64_t t);
/** A counter sample (a track per name per rank), kept at most once per 20 us per name per
 * thread. name is static storage (compared by address). */
void rill_trace_counter(const char *name, uint64_t t, int64_t value);
/** The same, every sample kept (for counters that change rarely). */
void rill_trace_counter_every(const char *name, uint64_t t, int64_t value);
/** An instant event on the calling thread's track. */
void rill_trace_instant(const char *cat, const char *name, uint64_t t);

/** JSON text (copied) put under otherData.rill_stats, e.g. the end-of-run statistics.
 * Main thread. */
void rill_trace_set_stats(const char *json);

/** Write `<prefix>.<rank>.json` and free every buffer. Every recording thread must have
 * stopped. Returns RILL_ERR_IO (logged with the path) if the file cannot be written.
 * Main thread, at rill_fini. */
rill_status_t rill_trace_finish(void);

/** A flow id from the fields that name a transfer (same on both ranks). */
uint64_t rill_trace_flow_id(uint64_t a, uint64_t b, uint64_t c, uint64_t d);

#endif
