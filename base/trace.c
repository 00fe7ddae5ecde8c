/* The trace writer: per-thread event buffers, written as Chrome trace-event JSON. */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "params_internal.h"
#include "sync.h"

#define TRACE_CHUNK_EVENTS 16384

typedef struct trace_ev {
    uint64_t t0, t1; /* local ns; t1 only for slices */
    uint64_t id;     /* task number, flow id, counter value */
    int32_t priority;
    char ph;         /* 'X', 's', 't', 'f', 'C', 'i' */
    const char *cat; /* static storage */
    char name[28];   /* copied: the class may be gone when the trace is written */
    char args[80];
} trace_ev_t;

typedef struct trace_chunk {
    struct trace_chunk *next;
    int n;
    trace_ev_t ev[TRACE_CHUNK_EVENTS];
} trace_chunk_t;

/* One per recording thread; only that thread writes it until rill_trace_finish. */
typedef struct trace_buf {
    struct trace_buf *next; /* all buffers, under trace.lock */
    int tid;
    char name[64];
    trace_chunk_t *head, *tail;
    size_t nchunks;
    FILE *spill; /* events written out when the memory budget was used up */
    uint64_t spilled;
    struct {
        const char *name;
        uint64_t t;
    } last_counter[4]; /* counters are sampled: one per name per thread per period */
} trace_buf_t;

#define TRACE_COUNTER_PERIOD_NS 20000

bool rill_trace_enabled;

static struct {
    rill_param_t *p_prefix, *p_max_mb;
    char prefix[4096];
    size_t max_chunks; /* per thread, before spilling to a temporary file */
    int rank, nranks;
    int64_t offset_ns;
    uint64_t origin_ns;
    pthread_mutex_t lock; /* buffers list */
    trace_buf_t *bufs;
    char *stats_json;
    FILE *file; /* <prefix>.<rank>.json, opened at start (rill_trace_open) */
    bool started;
} trace = { .lock = PTHREAD_MUTEX_INITIALIZER };

static _Thread_local trace_buf_t *tl_buf;

static const rill_param_decl_t trace_params[] = {
    { "profile_trace", RILL_PARAM_STRING, RILL_PARAM_LEVEL_USER,
      "Write a Chrome/Perfetto trace: one JSON file per rank, <value>.<rank>.json, at rill_fini "
      "(empty: no trace)",
      .v.s = { "", NULL }, .param = &trace.p_prefix },
    { "profile_trace_max_mb", RILL_PARAM_INT, RILL_PARAM_LEVEL_TUNER,
      "Memory each thread keeps trace events in (MiB); beyond it they are written to a "
      "temporary file",
      .v.i = { 256, 1, 1 << 20 }, .param = &trace.p_max_mb },
};

rill_status_t rill_trace_register_params(void)
{
    rill_status_t s =
        rill_params_register_table(trace_params, sizeof(trace_params) / sizeof(trace_params[0]));
    if (s != RILL_SUCCESS && (!trace.p_prefix || !trace.p_max_mb))
        return s;
    const char *prefix = rill_param_get_string(trace.p_prefix);
    snprintf(trace.prefix, sizeof(trace.prefix), "%s", prefix ? prefix : "");
    trace.max_chunks = ((size_t)rill_param_get_int(trace.p_max_mb) << 20) / sizeof(trace_chunk_t);
    if (trace.max_chunks < 1)
        trace.max_chunks = 1;
    rill_trace_enabled = trace.prefix[0] != '\0';
    return s; /* a bad value was reported (the default kept): rill_init stops on it */
}

rill_status_t rill_trace_start(int rank, int nranks)
{
    trace.rank = rank;
    trace.nranks = nranks;
    trace.started = rill_trace_enabled;
    if (trace.started && trace.origin_ns == 0)
        trace.origin_ns = rill_time_ns() - (uint64_t)trace.offset_ns;
    return RILL_SUCCESS;
}

rill_status_t rill_trace_open(void)
{
    if (!trace.started || trace.file)
        return RILL_SUCCESS;
    char path[4200];
    snprintf(path, sizeof(path), "%s.%d.json", trace.prefix, trace.rank);
    trace.file = fopen(path, "w");
    if (!trace.file) {
        RILL_ERROR(RILL_LOG_PROFILE,
                   "profile_trace: cannot write %s: %s (the prefix's folder must exist and be "
                   "writable)",
                   path, strerror(errno));
        trace.started = false;
        return RILL_ERR_IO;
    }
    return RILL_SUCCESS;
}

void rill_trace_set_clock(int64_t offset_ns, uint64_t origin_ns)
{
    trace.offset_ns = offset_ns;
    trace.origin_ns = origin_ns;
}

uint64_t rill_trace_flow_id(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    uint64_t h = 1469598103934665603ull;
    uint64_t v[4] = { a, b, c, d };
    for (int i = 0; i < 4; i++) {
        h = (h ^ v[i]) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 31;
    }
    return h >> 11; /* 53 bits: exact in every JSON reader */
}

static trace_buf_t *buf_new(int tid, const char *name)
{
    trace_buf_t *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->tid = tid;
    snprintf(b->name, sizeof(b->name), "%s", name);
    pthread_mutex_lock(&trace.lock);
    b->next = trace.bufs;
    trace.bufs = b;
    pthread_mutex_unlock(&trace.lock);
    return b;
}

void rill_trace_thread(int tid, const char *name)
{
    if (!rill_trace_on())
        return;
    tl_buf = buf_new(tid, name);
}

rill_trace_track_t *rill_trace_track(int tid, const char *name)
{
    return rill_trace_on() ? buf_new(tid, name) : NULL;
}

rill_trace_track_t *rill_trace_switch(rill_trace_track_t *t)
{
    if (!t)
        return NULL;
    trace_buf_t *prev = tl_buf;
    tl_buf = t;
    return prev;
}

static void write_events(FILE *f, int tid, const trace_chunk_t *c, int nev, bool *first);

/* A free event slot of the calling thread, NULL when tracing is off or memory ran out. */
static trace_ev_t *ev_next(void)
{
    trace_buf_t *b = tl_buf;
    if (!b) { /* a thread that did not name itself: its own anonymous track */
        static atomic_int anon = 9000;
        char name[32];
        int tid = atomic_fetch_add(&anon, 1);
        snprintf(name, sizeof(name), "thread %d", tid);
        if (!(b = tl_buf = buf_new(tid, name)))
            return NULL;
    }
    if (!b->tail || b->tail->n == TRACE_CHUNK_EVENTS) {
        if (b->nchunks >= trace.max_chunks && b->head) {
            /* over budget: write the oldest chunk out and reuse it */
            if (!b->spill)
                b->spill = tmpfile();
            trace_chunk_t *c = b->head;
            if (b->spill) {
                bool first = b->spilled == 0;
                write_events(b->spill, b->tid, c, c->n, &first);
                b->spilled += (uint64_t)c->n;
            }
            b->head = c->next;
            if (!b->head)
                b->tail = NULL;
            c->next = NULL;
            c->n = 0;
            if (b->tail)
                b->tail->next = c;
            else
                b->head = c;
            b->tail = c;
        } else {
            trace_chunk_t *c = malloc(sizeof(*c));
            if (!c)
                return NULL;
            c->next = NULL;
            c->n = 0;
            if (b->tail)
                b->tail->next = c;
            else
                b->head = c;
            b->tail = c;
            b->nchunks++;
        }
    }
    return &b->tail->ev[b->tail->n++];
}

/* The next event of the calling thread, with what every kind has; NULL when memory ran
 * out (the event is dropped). name is copied (truncated); args start empty. */
static trace_ev_t *ev_push(char ph, const char *cat, const char *name, uint64_t t0, uint64_t id)
{
    trace_ev_t *e = ev_next();
    if (!e)
        return NULL;
    e->ph = ph;
    e->cat = cat;
    e->t0 = t0;
    e->id = id;
    snprintf(e->name, sizeof(e->name), "%s", name ? name : "?");
    e->args[0] = '\0';
    return e;
}

void rill_trace_slice(const char *cat, const char *name, uint64_t t0, uint64_t t1, int32_t priority,
                      uint64_t id, const char *args)
{
    if (!rill_trace_on())
        return;
    trace_ev_t *e = ev_push('X', cat, name, t0, id);
    if (!e)
        return;
    e->t1 = t1;
    e->priority = priority;
    if (args)
        snprintf(e->args, sizeof(e->args), "%s", args);
}

void rill_trace_flow(char ph, uint64_t id, uint64_t t)
{
    if (rill_trace_on())
        ev_push(ph, "dep", "remote dependency", t, id);
}

void rill_trace_counter_every(const char *name, uint64_t t, int64_t value)
{
    if (rill_trace_on())
        ev_push('C', "counter", name, t, (uint64_t)value);
}

void rill_trace_counter(const char *name, uint64_t t, int64_t value)
{
    if (!rill_trace_on())
        return;
    trace_buf_t *b = tl_buf;
    if (b) { /* a sample per TRACE_COUNTER_PERIOD_NS is enough to see a counter's shape */
        int slot = 0;
        while (slot < 3 && b->last_counter[slot].name && b->last_counter[slot].name != name)
            slot++;
        if (b->last_counter[slot].name == name &&
            t - b->last_counter[slot].t < TRACE_COUNTER_PERIOD_NS)
            return;
        b->last_counter[slot].name = name;
        b->last_counter[slot].t = t;
    }
    ev_push('C', "counter", name, t, (uint64_t)value);
}

void rill_trace_instant(const char *cat, const char *name, uint64_t t)
{
    if (rill_trace_on())
        ev_push('i', cat, name, t, 0);
}

void rill_trace_set_stats(const char *json)
{
    free(trace.stats_json);
    trace.stats_json = json ? strdup(json) : NULL;
}

/* ------------------------------------------------------------ writing */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* Microseconds since the aligned origin, as text with nanosecond precision. */
static void json_time(FILE *f, uint64_t t)
{
    int64_t ns = (int64_t)(t - (uint64_t)trace.offset_ns - trace.origin_ns);
    fprintf(f, "%s%" PRId64 ".%03" PRId64, ns < 0 ? "-" : "", (ns < 0 ? -ns : ns) / 1000,
            (ns < 0 ? -ns : ns) % 1000);
}

static void write_events(FILE *f, int tid, const trace_chunk_t *c, int nev, bool *first)
{
    for (int i = 0; i < nev; i++) {
        const trace_ev_t *e = &c->ev[i];
        fputs(*first ? "\n" : ",\n", f);
        *first = false;
        fprintf(f, "{\"ph\":\"%c\",\"pid\":%d,", e->ph, trace.rank);
        if (e->ph != 'C')
            fprintf(f, "\"tid\":%d,", tid);
        fputs("\"ts\":", f);
        json_time(f, e->t0);
        fputs(",\"name\":", f);
        json_string(f, e->name);
        fprintf(f, ",\"cat\":\"%s\"", e->cat);
        switch (e->ph) {
        case 'X':
            fprintf(f, ",\"dur\":%" PRIu64 ".%03" PRIu64, (e->t1 - e->t0) / 1000,
                    (e->t1 - e->t0) % 1000);
            fprintf(f, ",\"args\":{\"priority\":%d", e->priority);
            if (e->id)
                fprintf(f, ",\"task\":%" PRIu64, e->id);
            if (e->args[0]) {
                fputs(",\"args\":", f);
                json_string(f, e->args);
            }
            fputs("}}", f);
            break;
        case 's':
        case 't':
        case 'f':
            fprintf(f, ",\"id\":\"0x%" PRIx64 "\"%s}", e->id, e->ph == 'f' ? ",\"bp\":\"e\"" : "");
            break;
        case 'C':
            fprintf(f, ",\"args\":{\"value\":%" PRId64 "}}", (int64_t)e->id);
            break;
        default:
            fputs(",\"s\":\"t\"}", f);
            break;
        }
    }
}

rill_status_t rill_trace_finish(void)
{
    if (!trace.started)
        return RILL_SUCCESS;
    trace.started = false;
    char path[4200];
    snprintf(path, sizeof(path), "%s.%d.json", trace.prefix, trace.rank);
    FILE *f = trace.file ? trace.file : fopen(path, "w");
    trace.file = NULL;
    rill_status_t status = RILL_SUCCESS;
    if (!f) {
        RILL_ERROR(RILL_LOG_PROFILE, "profile_trace: cannot write %s: %s", path, strerror(errno));
        status = RILL_ERR_IO;
    }
    uint64_t nev = 0;
    if (f) {
        fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
        fprintf(f,
                "\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"rank "
                "%d\"}}",
                trace.rank, trace.rank);
        fprintf(f,
                ",\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":{\"sort_"
                "index\":%d}}",
                trace.rank, trace.rank);
    }
    pthread_mutex_lock(&trace.lock);
    for (trace_buf_t *b = trace.bufs, *next; b; b = next) {
        next = b->next;
        if (f) {
            fprintf(f,
                    ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{"
                    "\"name\":",
                    trace.rank, b->tid);
            json_string(f, b->name);
            fprintf(f,
                    "}},\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_sort_index\","
                    "\"args\":{\"sort_index\":%d}}",
                    trace.rank, b->tid, b->tid);
            if (b->spill) { /* already JSON: copy it */
                fflush(b->spill);
                rewind(b->spill);
                fputc(',', f);
                char tmp[65536];
                size_t n;
                while ((n = fread(tmp, 1, sizeof(tmp), b->spill)) > 0)
                    fwrite(tmp, 1, n, f);
                nev += b->spilled;
            }
        }
        for (trace_chunk_t *c = b->head, *cn; c; c = cn) {
            cn = c->next;
            if (f && c->n) {
                bool first = false;
                write_events(f, b->tid, c, c->n, &first);
                nev += (uint64_t)c->n;
            }
            free(c);
        }
        if (b->spill)
            fclose(b->spill);
        free(b);
    }
    trace.bufs = NULL;
    pthread_mutex_unlock(&trace.lock);
    if (f) {
        fprintf(f,
                "\n],\"otherData\":{\"rill_rank\":%d,\"rill_nranks\":%d,"
                "\"rill_clock_offset_ns\":%" PRId64 ",\"rill_events\":%" PRIu64,
                trace.rank, trace.nranks, trace.offset_ns, nev);
        if (trace.stats_json)
            fprintf(f, ",\"rill_stats\":%s", trace.stats_json);
        rill_strbuf_t params = RILL_STRBUF_INIT; /* the run's parameters, as it can be repeated */
        rill_params_json(&params);
        if (params.buf && !params.failed)
            fprintf(f, ",\"rill_params\":%s", params.buf);
        rill_strbuf_fini(&params);
        fputs("}}\n", f);
        if (fclose(f) != 0) {
            RILL_ERROR(RILL_LOG_PROFILE, "profile_trace: writing %s failed: %s", path,
                       strerror(errno));
            status = RILL_ERR_IO;
        } else {
            RILL_VERBOSE(RILL_LOG_PROFILE, 1, "trace of %" PRIu64 " events written to %s", nev,
                         path);
        }
    }
    free(trace.stats_json);
    trace.stats_json = NULL;
    tl_buf = NULL;
    return status;
}
