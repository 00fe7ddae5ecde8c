/* The runtime core's internal structures: context, workers, task classes, tasks,
 * taskpools, and the interface front ends (DTD, PTG) build on. Internal. */
#ifndef RILL_CORE_H
#define RILL_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "rill/data.h"
#include "rill/params.h"
#include "rill/runtime.h"

#include "comm.h"
#include "cuda_device.h"
#include "device.h"
#include "heap.h"
#include "log.h"
#include "mpsc.h"
#include "sync.h"
#include "topology.h"
#include "trace.h"

/** The runtime core's log components: runtime (context, taskpools, termination, the
 * watchdog), sched, data. */
extern rill_log_comp_t rill_log_runtime, rill_log_sched, rill_log_data;
#define RILL_LOG_RUNTIME (&rill_log_runtime)
#define RILL_LOG_SCHED   (&rill_log_sched)
#define RILL_LOG_DATA    (&rill_log_data)

typedef struct rill_worker rill_worker_t;
typedef struct rill_sched_ops rill_sched_ops_t;

/* ------------------------------------------------------------ tasks */

/** What a task body (hook) tells the core. */
typedef enum rill_hook_status {
    RILL_HOOK_DONE = 0,  /* the body ran; release the task */
    RILL_HOOK_ERROR = 1, /* the body failed; the taskpool records it, the task is released */
    RILL_HOOK_ASYNC = 2, /* the body started work that ends later (a transfer): whoever
                          * finishes it calls rill_task_complete */
} rill_hook_status_t;

typedef rill_hook_status_t (*rill_task_hook_fn)(rill_worker_t *w, rill_task_t *task);

#define RILL_MAX_INCARNATIONS 4
#define RILL_MAX_FLOWS        32

/** A task's access to one datum, as the devices see it (rill_task_class_t.flows). */
typedef struct rill_task_flow {
    rill_data_t *data;
    void **ptr;   /* where the body finds the datum's address: the device that runs the task
                   * sets it to its copy (the host copy for the CPU) */
    uint8_t mode; /* RILL_FLOW_READ | RILL_FLOW_WRITE */
} rill_task_flow_t;
#define RILL_FLOW_READ  1
#define RILL_FLOW_WRITE 2

/**
 * A task class as the core sees it. A front end embeds it in its own class and fills
 * the incarnations (one body per device type, tried in order) and complete, which
 * releases the task's successors (handing ready ones to rill_sched_push) and ends
 * the task's life (rill_taskpool_task_done once it is accounted for).
 */
typedef struct rill_task_class {
    const char *name;
    int nb_incarnations;
    struct {
        rill_device_type_t type;
        rill_task_hook_fn hook;
    } incarnations[RILL_MAX_INCARNATIONS];
    void (*complete)(rill_worker_t *w, rill_task_t *task, rill_hook_status_t status);
    /** Optional, for traces: the task's number (returned) and a short summary of its
     * arguments written into args. Called before the body runs. */
    uint64_t (*trace_info)(const rill_task_t *task, char *args, size_t len);
    /** The data the task accesses (at most max, returned), for the devices: where copies
     * must be current before the body runs. NULL: the task touches no datum. */
    int (*flows)(rill_task_t *task, rill_task_flow_t *flows, int max);
    /** Optional: the task's flop count, for the device choice (< 0: unknown). */
    double (*flops)(const rill_task_t *task);
    /** Optional: a GPU body's status word (rill/cuda.h) came back as value != 0; the task
     * fails unless this returns RILL_SUCCESS. Called by the GPU manager before completion. */
    rill_status_t (*status_word)(rill_task_t *task, int value);
    /** Optional, for a CPU body: false when it needs no host copy current (it moves the bytes
     * from wherever they are, as a send straight from GPU memory does), so the newest copy
     * is not brought home first. NULL: always true. */
    bool (*needs_host)(rill_task_t *task);
    /** Optional, called by a GPU manager right after the task's body was enqueued on GPU
     * device dev, launch naming that launch (nonzero, unique per GPU): the front end may
     * hand that GPU puts of the versions the task writes with rill_remote_xfer_t.behind =
     * launch, which it enqueues behind the body on the GPU. Manager thread; must not block. */
    void (*launched)(rill_task_t *task, int dev, uint64_t launch);
} rill_task_class_t;

/** A task as the core sees it; front ends embed it first in their task structs. */
struct rill_task {
    union {
        rill_task_t *next;     /* link in ready lists */
        rill_mpsc_node_t link; /* link in a GPU manager's intake (the same word) */
    };
    const rill_task_class_t *tc;
    rill_taskpool_t *tp;
    rill_heap_item_t prio; /* priority (higher runs first); seq set by the scheduler */
    int32_t worker;        /* set by the core before the body runs */
    uint64_t flow_in;      /* traces: a flow that ends when this task starts (0: none);
                            * written before the task is made ready */
    int16_t device;        /* the device chosen to run it (index), -1 until chosen */
    bool urgent;           /* RILL_DTD_URGENT, PTG URGENT: a GPU runs it on an urgent stream */
    int64_t est_ns;        /* its estimated time there, counted in the device's queue */
    void *dev_exec;        /* a GPU run: the exec stream and handles its body enqueues on */
};

/* ------------------------------------------------------------ taskpools */

typedef struct rill_taskpool_ops {
    const char *name;
    /** Called by rill_taskpool_wait before working: close insertion, flush data, drop
     * the front end's hold on the pending count. */
    rill_status_t (*close)(rill_taskpool_t *tp);
    /** Called by the watchdog: print what the taskpool waits on. */
    void (*describe)(rill_taskpool_t *tp, FILE *out);
    /** The taskpool ended on every rank (end of rill_taskpool_wait): drop the claims the
     * front end holds on data and classes, so they may be destroyed. Main thread. */
    void (*ended)(rill_taskpool_t *tp);
    /** Free the front end's part (the core frees the rest). */
    void (*destroy)(rill_taskpool_t *tp);
} rill_taskpool_ops_t;

struct rill_taskpool {
    rill_context_t *ctx;
    const rill_taskpool_ops_t *ops;
    uint32_t id;
    /* tasks alive + actions pending (insertion open, messages in flight); the taskpool
     * has terminated when it drops to 0 (a front end may take counts ahead for tasks it
     * has yet to make, while its insertion is open). On a cache line of its own (padding:
     * taskpools are calloc'd): workers take from it at every completion, while the
     * inserting thread reads the fields around it at every insertion */
    char pad_pending[64];
    atomic_llong pending;
    atomic_int terminated;
    char pad_after[64];
    atomic_int error; /* first rill_status_t error, 0 if none */
    char error_msg[256];
    rill_spinlock_t error_lock;
    bool waited;
    /* a task was marked urgent (DTD, PTG): the GPU managers keep their urgent streams for
     * such tasks (set by the main thread before it inserts the tasks after it; those reach
     * a manager through its intake, whose release/acquire orders this store before) */
    atomic_bool marks_urgent;
    bool used; /* the front end put something in it (a task, a flush): it must be waited */
    rill_taskpool_t *prev, *next; /* the context's live taskpools (main thread) */
};

/** Set up the core part of a taskpool; pending starts at 1 (the front end's hold,
 * dropped by its close). Main thread. */
void rill_taskpool_init(rill_taskpool_t *tp, rill_context_t *ctx, const rill_taskpool_ops_t *ops);
/** Add to / take from the pending count. Dropping it to 0 terminates the taskpool
 * and wakes its waiter. Any thread. */
void rill_taskpool_pending_add(rill_taskpool_t *tp, long long n);
void rill_taskpool_pending_sub(rill_taskpool_t *tp, long long n);
/** Record an error (the first one wins, later ones are logged only). Any thread. */
void rill_taskpool_fail(rill_taskpool_t *tp, rill_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------ workers and context */

#define RILL_STATS_CLASSES 64 /* task classes counted per worker (stats.c) */

/** A worker's count of one task class (stats.c). */
typedef struct rill_class_stat {
    const rill_task_class_t *tc;
    char name[32];
    uint64_t count, ns;
} rill_class_stat_t;

/** What a worker did, for the end-of-run statistics; written by that worker only, read
 * after it stopped. */
typedef struct rill_worker_stats {
    uint64_t ntasks, busy_ns, unclassified;
    rill_class_stat_t classes[RILL_STATS_CLASSES];
} rill_worker_stats_t;

struct rill_worker {
    int id;
    rill_context_t *ctx;
    pthread_t thread;
    void *sched_data; /* the scheduler's per-worker state */
    int *steal_order; /* other workers, nearest first */
    bool last_look;   /* its look before sleeping: thieves wait for a held lock (sched.c) */
    /* for the watchdog: the class name of the task running (NULL between tasks) and how
     * many tasks this worker started; written by the worker, read by the watchdog */
    _Atomic(const char *) running;
    atomic_ullong nstarted;
    rill_worker_stats_t stats;
};

#define RILL_MAX_WAITS 8 /* nesting depth of the main thread's blocking waits */

/** What the watchdog knows (watchdog.c): the main thread's blocking waits, innermost
 * last, under lock. */
typedef struct rill_watchdog {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* the watchdog thread sleeps on it */
    struct {
        const char *what;    /* static storage */
        rill_taskpool_t *tp; /* the taskpool waited for, or NULL */
    } waits[RILL_MAX_WAITS];
    int nwaits;
    uint64_t last_change; /* last progress or new wait (ns) */
    bool stop, started;
    bool no_workers; /* the workers are gone (rill_fini): stop looking at them */
    bool no_devices; /* the GPU managers stop (rill_fini): stop asking them */
    bool in_init;    /* rill_init has not returned: waits get watchdog_init_ns */
    int action;      /* 0: warn, 1: abort the job */
    pthread_t thread;
} rill_watchdog_t;

struct rill_context {
    int rank, nranks;
    int nworkers;
    rill_worker_t *workers; /* workers[0] is the main thread */
    rill_topo_t *topo;
    rill_comm_t *comm;
    const rill_sched_ops_t *sched;
    void *sched_state;
    /* idle and progress each on a cache line of its own (padding: the context is calloc'd,
     * 16-byte aligned): the main thread signals idle at every push while a worker adds to
     * progress at every completion, and sharing a line made each pay for the other */
    char pad_idle[64];
    rill_evcount_t idle; /* idle workers sleep here; pushes and terminations signal */
    char pad_progress[64];
    atomic_ullong progress; /* tasks completed, for the watchdog */
    char pad_after[64];
    atomic_bool shutdown;
    _Atomic uint32_t next_taskpool_id; /* main thread; read by the comm thread (dtd_seq) */
    uint32_t next_collection_id;
    int idle_spin_us;          /* how long an idle worker looks for work before sleeping */
    int max_spinners;          /* runtime_idle_spinners; 0: no limit (then not counted) */
    atomic_int spinners;       /* spawned workers looking for work, counted (context.c) */
    uint64_t watchdog_ns;      /* report a stall after this long (0: never) */
    uint64_t watchdog_init_ns; /* inside rill_init: at least this long */
    rill_watchdog_t watchdog;
    atomic_int nb_taskpools;
    rill_taskpool_t *taskpools; /* live taskpools, newest first (main thread) */
    bool stats_on;              /* collect end-of-run statistics (stats.c) */
    uint64_t stats_start_ns;
    FILE *report_file;    /* runtime_report's file, open from rill_init (report.c) */
    char *report_command; /* the command line, as a JSON array */
    time_t report_start;
    atomic_llong trace_ready;   /* traces: tasks made ready and not yet picked */
    atomic_llong trace_running; /* traces: tasks started and not completed */
    int device_choice;          /* runtime_device: 0 auto, 1 cpu, 2 gpu */
    /* the GPUs this process uses (rill_cuda_select at creation; their managers start in
     * rill_init), or why none */
    int ngpus;
    rill_cuda_gpu_info_t gpus[RILL_CUDA_MAX_GPUS];
    char no_gpu_why[192];
    /* set by the layer that started service threads above the core (the GPU managers):
     * called by rill_context_destroy once every taskpool ended, before the workers stop */
    void (*services_stop)(rill_context_t *ctx);
};

/** The calling thread's worker (NULL on threads that are not workers). */
rill_worker_t *rill_worker_self(void);
/** RILL_SUCCESS when the caller is the main thread (the one that called rill_init) and not
 * inside a task body; else says so, naming call, and returns RILL_ERR_BAD_STATE. The calls
 * that build, wait for or end the runtime's work (insert, wait, fini) check it. With
 * any_other_thread, a thread Rill did not start passes too (destroying an object after
 * rill_fini): only task bodies and workers are refused. Any thread. */
rill_status_t rill_worker_check_main(const char *call, bool any_other_thread);

/** A public call of the runtime or a front end given NULL for what it needs: says so
 * (rill_log_arg_null) and returns RILL_ERR_INVALID_ARG. Any thread. */
#define rill_arg_null(call, what) rill_log_arg_null(RILL_LOG_RUNTIME, (call), (what))

/** Run one task: choose its device; on a GPU hand it to that GPU's manager; on the CPU,
 * have the host copies of its data brought up to date first (by the GPU that holds them),
 * then run the body and complete it. Worker threads. */
void rill_task_execute(rill_worker_t *w, rill_task_t *task);
/** Run a ready task's CPU body on the calling thread, which is not a worker (the comm
 * thread: a body that only hands work to a GPU manager, so that no worker's wake-up and
 * dispatch sits on a remote dependency's path), and complete it unless the body returns
 * RILL_HOOK_ASYNC. Traced like a worker's run (a slice on this thread's track; not in the
 * workers' statistics). The task
 * must not need host copies brought home (no GPU holds newer bytes of what it touches).
 * Any thread. */
void rill_task_run_here(rill_context_t *ctx, rill_task_t *task);
/** The device that should run task (device choice, docs/architecture.md): a forced choice
 * (runtime_device), else the GPU the datum it writes is advised to, else the device
 * that holds the newest copy of the datum it writes, else the least loaded by queued work
 * plus the task's estimated time there. 0 (the CPU) when no GPU is used. Any thread. */
int rill_task_choose_device(rill_context_t *ctx, rill_task_t *task);
/** Account task, chosen for device dev, in dev's queue (the manager takes it out). */
void rill_task_enqueued(rill_task_t *task, int dev);

/** A thread that runs tasks itself (a GPU manager) installs a sink: tasks it makes ready
 * (rill_sched_push on that thread) that choose its device go straight to take(), the
 * others to the scheduler. NULL removes it. The calling thread only. */
void rill_sched_set_sink(int device, void (*take)(void *arg, rill_task_t *task), void *arg);

/** Complete a task whose hook returned RILL_HOOK_ASYNC. w is NULL off the workers (the
 * comm thread). Any thread. */
void rill_task_complete(rill_worker_t *w, rill_task_t *task, rill_hook_status_t status);

/** Make the calling worker run tasks until cond(arg) holds: the loop of every worker
 * (the spawned ones run it until rill_fini, the main thread while it waits). When idle
 * it spins for runtime_idle_spin_us, yielding, then sleeps until work is pushed or a
 * taskpool terminates (cond is re-checked on each wake). Worker threads. */
void rill_worker_work_until(rill_worker_t *w, bool (*cond)(void *arg), void *arg);

/** A blocking wait of the runtime: run tasks until cond(arg) holds, watched by the
 * watchdog, which reports what (static storage) and tp's state when no task completes
 * for runtime_watchdog_s. Every blocking wait of the main thread goes through here (the
 * taskpool wait, the DTD window, collectives). Main thread. */
void rill_context_wait(rill_worker_t *w, bool (*cond)(void *arg), void *arg, const char *what,
                       rill_taskpool_t *tp);

/** The watchdog's record of the main thread's blocking waits (watchdog.c). enter/leave
 * nest. Main thread. */
void rill_watchdog_enter(rill_context_t *ctx, const char *what, rill_taskpool_t *tp);
void rill_watchdog_leave(rill_context_t *ctx);
/** Start the watchdog thread (when runtime_watchdog_s > 0) / stop it. forget_workers
 * tells it, before ctx->workers is freed, that they are gone (it keeps watching the
 * waits that follow, e.g. the final barrier). Main thread. */
rill_status_t rill_watchdog_start(rill_context_t *ctx, int action);
void rill_watchdog_forget_workers(rill_context_t *ctx);
/** rill_init is done: waits get runtime_watchdog_s from now on. Main thread. */
void rill_watchdog_init_done(rill_context_t *ctx);
void rill_watchdog_stop(rill_context_t *ctx);

/** End-of-run statistics (stats.c): the profile_stats parameter; whether they are wanted
 * (profile_stats, runtime_verbose >= 1, or a trace); one task of class tc that ran ns on
 * w (that worker); the report at rill_fini (printed, and put in the trace). */
rill_status_t rill_stats_register_params(void);
bool rill_stats_wanted(void);
void rill_stats_task(rill_worker_t *w, const rill_task_class_t *tc, uint64_t ns);
/* Returns the statistics as JSON (malloc'd, for the runtime report), or NULL. */
char *rill_stats_report(rill_context_t *ctx);

/** The runtime report (report.c): its parameter; whether one is wanted; its file opened
 * and the command line kept (rill_init: an unwritable path fails the start); the report
 * written at rill_fini with the statistics' JSON (NULL: none). Main thread. */
rill_status_t rill_report_register_params(void);
bool rill_report_wanted(void);
rill_status_t rill_report_open(rill_context_t *ctx, int argc, char **argv);
rill_status_t rill_report_write(rill_context_t *ctx, const char *stats_json);
/* rill_init failed after the report's file was opened: close and remove it. */
void rill_report_discard(rill_context_t *ctx);

/** A task slice's arguments (its class's trace_info in args, len bytes): " urgent" added
 * for a task inserted urgent, when it fits. */
void rill_task_trace_urgent(const rill_task_t *task, char *args, size_t len);

/** Core parameters (scheduler, idle spin, watchdog) and context creation/destruction,
 * used by rill_init/rill_fini in the DSL layer. */
rill_status_t rill_core_register_params(void);
rill_status_t rill_context_create(int *argc, char ***argv, rill_context_t **ctx_p);

/** The steps of rill_init after the message layer starts, each ended by an agreement. */
enum rill_init_step {
    RILL_INIT_STEP_RUNTIME = 1, /* the rest of rill_context_create (it agrees on failure) */
    RILL_INIT_STEP_GPUS,        /* the GPU managers */
    RILL_INIT_STEP_LAYERS,      /* the GPU channels and the task layers */
};
/** Every rank learns whether every rank got through a step of rill_init (status: this
 * rank's outcome): the steps after it are collective, so a rank that failed alone and
 * stopped would leave the others waiting in them (or crashing when it finalised MPI).
 * The ranks that did not fail name the first one that did, and the step, and fail too
 * (RILL_ERR_DEVICE when that rank could not start its GPUs, else RILL_ERR_COMM). A
 * rank that fails inside rill_context_create agrees there (RILL_INIT_STEP_RUNTIME), in
 * the collective the others run after RILL_INIT_STEP_GPUS. Collective; also a barrier. */
rill_status_t rill_init_agree(rill_comm_t *comm, rill_status_t status, enum rill_init_step step);

/** The comm engine's services the front ends use, through the core: an element-wise
 * reduction of count counters over every rank (rill_comm_allreduce_u64's rules: every rank
 * in the same order, main thread, which keeps running tasks meanwhile), and this
 * process's place on its node as the launcher set it (before MPI starts). */
rill_status_t rill_context_allreduce_u64(rill_context_t *ctx, const uint64_t *in, uint64_t *out,
                                         int count, rill_comm_op_t op);
void rill_launcher_local(int *rank_p, int *size_p);
rill_status_t rill_context_destroy(rill_context_t **ctx_p);

#endif
