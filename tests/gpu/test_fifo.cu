/* The port channels' FIFO (device/channel.h host side, rill/channel_device.cuh device side)
 * on one GPU, without rill_init: this test's main thread plays the proxy. One scenario per
 * run (argv[1]):
 *   torture  64 slots; first one GPU thread pushes 100000 triggers (the cached-tail fast
 *            path, many laps), then 64 blocks x 128 threads push 64 triggers each, all while
 *            the host polls and pops. Every trigger carries (pusher, sequence) in fst and a
 *            hash of it in snd, bit 63 of each left to the commit bits (pusher 0's first
 *            trigger is the all-zero payload): each must arrive exactly once, whole (both
 *            halves of one push), and per pusher in order.
 *   stalled  8 slots, a small spin limit, one GPU thread pushes 100 triggers that the host
 *            never pops: the first 8 land, every later push gives up (RILL_FIFO_FAILED), the
 *            kernel ends, and the error record says RILL_DEV_ERR_FIFO_FULL with the position
 *            and the tail.
 *   layout   triggers made by rill_trigger_make (offsets up to 2^40 - 1, sizes up to
 *            RILL_TRIGGER_MAX_BYTES and around the split of their bits, every type) come out
 *            of rill_trigger_unpack unchanged.
 * Each exits 77 (skipped) with the reason when no GPU is usable. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "rill/channel.h"
#include "rill/channel_device.cuh"

extern "C" {
#include "channel.h" /* device/channel.h: internal, C only */
}

#include "cuda_check.cuh"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* snd of a torture trigger: a hash of fst, 0 for fst 0, bit 63 left to the commit bit */
__host__ __device__ static inline uint64_t snd_of(uint64_t fst)
{
    return (fst * 0x9e3779b97f4a7c15ull) & ~(1ull << 63);
}

/* A FIFO with its device words and error record, set up through rill_fifo_init. */
typedef struct fifo_env {
    rill_fifo_t f;
    void *words;
    rill_dev_error_t *err_host, *err_dev;
    cudaStream_t setup;
} fifo_env_t;

static void fifo_env_init(fifo_env_t *e, uint32_t slots, uint32_t id)
{
    memset(e, 0, sizeof(*e));
    CU(cudaMalloc(&e->words, 16));
    CU(cudaHostAlloc((void **)&e->err_host, sizeof(rill_dev_error_t), cudaHostAllocMapped));
    memset(e->err_host, 0, sizeof(*e->err_host));
    CU(cudaHostGetDevicePointer((void **)&e->err_dev, e->err_host, 0));
    CU(cudaStreamCreateWithFlags(&e->setup, cudaStreamNonBlocking));
    char err[256] = "";
    rill_status_t s =
        rill_fifo_init(&e->f, slots, id, e->words, e->err_dev, e->setup, err, sizeof(err));
    CHECK_MSG(s == RILL_SUCCESS, "rill_fifo_init(%u slots): status %d: %s", slots, (int)s, err);
    CHECK_MSG(e->f.size == slots && e->f.dev.size == slots && e->f.dev.id == id,
              "the FIFO has %u slots (device view %u, id %u)", e->f.size, e->f.dev.size,
              e->f.dev.id);
}

static void fifo_env_fini(fifo_env_t *e)
{
    rill_fifo_fini(&e->f);
    cudaStreamDestroy(e->setup);
    cudaFree(e->words);
    cudaFreeHost(e->err_host);
}

static int dev_error_code(const fifo_env_t *e)
{
    return __atomic_load_n(&e->err_host->code, __ATOMIC_ACQUIRE);
}

/* ------------------------------------------------------------ torture */

/* Each thread is a pusher: k triggers (pusher << 32 | sequence, snd_of(that)). A failed push
 * is counted and ends the thread's pushes. */
__global__ void torture_push(rill_fifo_dev_t f, uint32_t k, unsigned long long *failed)
{
    uint64_t pusher = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (uint32_t s = 0; s < k; s++) {
        uint64_t fst = (pusher << 32) | s;
        if (rill_fifo_push(&f, fst, snd_of(fst)) == RILL_FIFO_FAILED) {
            atomicAdd(failed, 1ull);
            return;
        }
    }
}

/* Launch blocks x threads pushers of k triggers each and pop everything as the proxy would,
 * checking each trigger as it comes. Returns the number of bad triggers. */
static long torture_phase(fifo_env_t *e, cudaStream_t st, unsigned long long *failed_dev,
                          unsigned long long *failed_host, uint32_t blocks, uint32_t threads,
                          uint32_t k, double timeout_s)
{
    const uint64_t npushers = (uint64_t)blocks * threads, n = npushers * k;
    uint32_t *next = (uint32_t *)calloc(npushers, sizeof(uint32_t));
    CHECK_MSG(next, "out of host memory");
    *failed_host = 0;
    uint64_t pos0 = e->f.tail;
    printf("torture: %u block(s) x %u thread(s) push %u triggers each: %llu triggers, %.1f laps "
           "of the %u-slot FIFO (from position %llu)\n",
           blocks, threads, k, (unsigned long long)n, (double)n / e->f.size, e->f.size,
           (unsigned long long)pos0);
    double t0 = now_s();
    torture_push<<<blocks, threads, 0, st>>>(e->f.dev, k, failed_dev);
    CU(cudaGetLastError());
    uint64_t got = 0, idle = 0;
    long bad = 0;
    double t_done = 0; /* when the kernel was seen finished */
    while (got < n) {
        rill_trigger_t t;
        if (rill_fifo_poll(&e->f, &t)) {
            rill_fifo_pop(&e->f);
            got++;
            uint64_t pusher = t.fst >> 32, seq = t.fst & 0xffffffffull;
            const char *what = NULL;
            if (t.snd != snd_of(t.fst))
                what = "snd does not match fst (a torn or stale trigger)";
            else if (pusher >= npushers || seq >= k)
                what = "pusher or sequence out of range";
            else if (seq != next[pusher])
                what = seq < next[pusher] ? "seen twice or out of order"
                                          : "arrived before an earlier one of its pusher";
            if (what) {
                if (bad < 10)
                    fprintf(stderr,
                            "position %llu: trigger fst 0x%016llx snd 0x%016llx (pusher %llu, "
                            "sequence %llu, expected sequence %u): %s\n",
                            (unsigned long long)(e->f.tail - 1), (unsigned long long)t.fst,
                            (unsigned long long)t.snd, (unsigned long long)pusher,
                            (unsigned long long)seq, pusher < npushers ? next[pusher] : 0, what);
                bad++;
            }
            if (pusher < npushers && seq >= next[pusher])
                next[pusher] = (uint32_t)seq + 1;
            continue;
        }
        if (++idle % 4096)
            continue;
        if (t_done > 0 && now_s() - t_done > 0.5) /* the kernel ended: nothing more comes */
            FAIL("the kernel finished but only %llu of %llu triggers arrived (%llu push(es) "
                 "failed; device error code %d: position %llu, tail %llu)",
                 (unsigned long long)got, (unsigned long long)n, *failed_host, dev_error_code(e),
                 (unsigned long long)e->err_host->expected, (unsigned long long)e->err_host->seen);
        cudaError_t q = t_done > 0 ? cudaSuccess : cudaStreamQuery(st);
        if (q == cudaSuccess && t_done == 0) {
            CU(cudaMemcpy(failed_host, failed_dev, sizeof(*failed_host), cudaMemcpyDeviceToHost));
            t_done = now_s(); /* keep polling a little: what it wrote is arriving */
        } else if (q != cudaSuccess && q != cudaErrorNotReady) {
            FAIL("the push kernel failed: %s", cudaGetErrorString(q));
        }
        if (now_s() - t0 > timeout_s)
            FAIL("timeout: after %.0f s, %llu of %llu triggers arrived (FIFO tail %llu; device "
                 "error code %d)",
                 timeout_s, (unsigned long long)got, (unsigned long long)n,
                 (unsigned long long)e->f.tail, dev_error_code(e));
    }
    double dt = now_s() - t0;
    CU(cudaStreamSynchronize(st));
    CU(cudaMemcpy(failed_host, failed_dev, sizeof(*failed_host), cudaMemcpyDeviceToHost));
    uint64_t incomplete = 0;
    for (uint64_t p = 0; p < npushers; p++)
        incomplete += next[p] != k;
    rill_trigger_t extra;
    bool more = rill_fifo_poll(&e->f, &extra);
    printf("torture: %llu triggers in %.3f s (%.2f M triggers/s), %ld bad, %llu pusher(s) "
           "incomplete, %llu failed push(es)\n",
           (unsigned long long)got, dt, (double)got / dt / 1e6, bad, (unsigned long long)incomplete,
           *failed_host);
    CHECK_MSG(!more, "a trigger beyond the %llu pushed is committed at position %llu",
              (unsigned long long)n, (unsigned long long)e->f.tail);
    CHECK_MSG(incomplete == 0, "%llu pusher(s) did not deliver all %u triggers in order",
              (unsigned long long)incomplete, k);
    CHECK_MSG(e->f.tail == pos0 + n, "the tail is %llu after %llu triggers from %llu",
              (unsigned long long)e->f.tail, (unsigned long long)n, (unsigned long long)pos0);
    free(next);
    return bad;
}

static int run_torture(void)
{
    fifo_env_t e;
    fifo_env_init(&e, 64, 7);
    /* a bounded spin: a stalled run fails with the error record instead of spinning 1e8 */
    e.f.dev.spin_limit = 20000000ull;
    cudaStream_t st;
    CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    unsigned long long *failed_dev, failed = 0;
    CU(cudaMalloc((void **)&failed_dev, sizeof(*failed_dev)));
    CU(cudaMemset(failed_dev, 0, sizeof(*failed_dev)));
    /* one pusher: mostly the cached-tail fast path, 1562 laps; its first trigger (at
     * position 0) is the all-zero payload */
    long bad = torture_phase(&e, st, failed_dev, &failed, 1, 1, 100000, 60.0);
    CHECK_MSG(bad == 0 && failed == 0, "single pusher: %ld bad trigger(s), %llu failed push(es)",
              bad, failed);
    /* 8192 pushers on 64 slots: nearly every push finds the FIFO full */
    CU(cudaMemset(failed_dev, 0, sizeof(*failed_dev)));
    bad = torture_phase(&e, st, failed_dev, &failed, 64, 128, 64, 60.0);
    CHECK_MSG(bad == 0 && failed == 0, "8192 pushers: %ld bad trigger(s), %llu failed push(es)",
              bad, failed);
    CHECK_MSG(dev_error_code(&e) == 0, "the device error record says %d", dev_error_code(&e));
    /* the FIFO's device words: head = every position handed out, tail cache <= tail */
    unsigned long long words[2];
    CU(cudaMemcpy(words, e.words, sizeof(words), cudaMemcpyDeviceToHost));
    printf("torture: head %llu, tail %llu, cached tail %llu\n", words[0],
           (unsigned long long)e.f.tail, words[1]);
    CHECK_MSG(words[0] == e.f.tail && words[1] <= e.f.tail,
              "head %llu and cached tail %llu after %llu pops", words[0], words[1],
              (unsigned long long)e.f.tail);
    CU(cudaFree(failed_dev));
    CU(cudaStreamDestroy(st));
    fifo_env_fini(&e);
    return 0;
}

/* ------------------------------------------------------------ stalled */

__global__ void stalled_push(rill_fifo_dev_t f, int n, unsigned long long *pos)
{
    for (int i = 0; i < n; i++)
        pos[i] = rill_fifo_push(&f, (uint64_t)i, (uint64_t)i);
}

static int run_stalled(void)
{
    const int n = 100, slots = 8;
    const uint64_t limit = 20000;
    fifo_env_t e;
    fifo_env_init(&e, slots, 42);
    e.f.dev.spin_limit = limit;
    cudaStream_t st;
    CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    unsigned long long *pos_dev, pos[n];
    CU(cudaMalloc((void **)&pos_dev, sizeof(pos)));
    double t0 = now_s();
    stalled_push<<<1, 1, 0, st>>>(e.f.dev, n, pos_dev);
    CU(cudaGetLastError());
    cudaError_t q;
    while ((q = cudaStreamQuery(st)) == cudaErrorNotReady) {
        if (now_s() - t0 > 120)
            FAIL("the kernel pushing into a FIFO nobody pops has not returned after 120 s: a "
                 "push does not give up (spin limit %llu)",
                 (unsigned long long)limit);
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    double dt = now_s() - t0;
    CHECK_MSG(q == cudaSuccess, "the push kernel failed: %s", cudaGetErrorString(q));
    CU(cudaMemcpy(pos, pos_dev, sizeof(pos), cudaMemcpyDeviceToHost));
    printf("stalled: %d pushes into %d slots that nobody pops, spin limit %llu: the kernel "
           "returned after %.3f s (%.1f ms per failed push)\n",
           n, slots, (unsigned long long)limit, dt, dt * 1e3 / (n - slots));
    for (int i = 0; i < n; i++) {
        unsigned long long want = i < slots ? (unsigned long long)i : RILL_FIFO_FAILED;
        CHECK_MSG(pos[i] == want, "push %d returned %llu, expected %llu", i, pos[i], want);
    }
    const rill_dev_error_t *r = e.err_host;
    int code = dev_error_code(&e);
    printf("stalled: error record: code %d, id %u, expected %llu, seen %llu, spins %llu\n", code,
           r->id, (unsigned long long)r->expected, (unsigned long long)r->seen,
           (unsigned long long)r->spins);
    CHECK_MSG(code == RILL_DEV_ERR_FIFO_FULL, "error code %d, expected RILL_DEV_ERR_FIFO_FULL",
              code);
    CHECK_MSG(r->id == 42, "the record names channel %u, expected 42", r->id);
    CHECK_MSG(r->expected == (uint64_t)slots && r->seen == 0,
              "the first failed push was position %d with the tail at 0 (record: %llu, %llu)",
              slots, (unsigned long long)r->expected, (unsigned long long)r->seen);
    CHECK_MSG(r->spins > limit, "the record's spins %llu do not pass the limit %llu",
              (unsigned long long)r->spins, (unsigned long long)limit);
    /* the 8 pushes that got a slot are in the ring, whole and in order; nothing after them */
    for (int i = 0; i < slots; i++) {
        rill_trigger_t t;
        CHECK_MSG(rill_fifo_poll(&e.f, &t), "trigger %d of the full FIFO is not committed", i);
        CHECK_MSG(t.fst == (uint64_t)i && t.snd == (uint64_t)i,
                  "trigger %d is (%llu, %llu), expected (%d, %d)", i, (unsigned long long)t.fst,
                  (unsigned long long)t.snd, i, i);
        rill_fifo_pop(&e.f);
    }
    rill_trigger_t t;
    CHECK_MSG(!rill_fifo_poll(&e.f, &t),
              "position %d holds a committed trigger though every push after position %d failed",
              slots, slots - 1);
    CU(cudaFree(pos_dev));
    CU(cudaStreamDestroy(st));
    fifo_env_fini(&e);
    return 0;
}

/* ------------------------------------------------------------ layout */

static uint64_t xorshift(uint64_t x)
{
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

typedef struct layout_case {
    unsigned type;
    uint64_t dst, src, size;
} layout_case_t;

__global__ void layout_push(rill_fifo_dev_t f, const layout_case_t *c, int n,
                            unsigned long long *failed)
{
    for (int i = 0; i < n; i++) {
        uint64_t fst, snd;
        rill_trigger_make(c[i].type, c[i].dst, c[i].src, c[i].size, &fst, &snd);
        if (rill_fifo_push(&f, fst, snd) == RILL_FIFO_FAILED)
            atomicAdd(failed, 1ull);
    }
}

static int run_layout(void)
{
    enum { N = 60 };
    /* offsets: 40 bits; sizes: RILL_TRIGGER_MAX_BYTES, split between the two halves */
    const uint64_t off = RILL_TRIGGER_OFF_MASK, big = RILL_TRIGGER_MAX_BYTES;
    const int split = 23; /* size bits 0-22 in fst, the rest in snd (channel_device.cuh) */
    layout_case_t c[N] = {
        { RILL_PC_PUT, 0, 0, 0 },
        { RILL_PC_PUT | RILL_PC_SIGNAL | RILL_PC_FLUSH, off, off, big },
        { RILL_PC_SIGNAL, 0, 0, 0 },
        { RILL_PC_FLUSH, 0, 0, 0 },
        { RILL_PC_PUT, 1, 2, 1ull << split },
        { RILL_PC_PUT, 3, 5, (1ull << split) - 1 },
        { RILL_PC_PUT | RILL_PC_SIGNAL, off - 1, 1, (1ull << split) + 1 },
        { RILL_PC_PUT | RILL_PC_FLUSH, 12345, off, (big >> 1) + 1 },
    };
    uint64_t x = 0x243f6a8885a308d3ull;
    for (int i = 8; i < N; i++) {
        x = xorshift(x);
        c[i].type = 1 + (unsigned)(x % 7);
        c[i].dst = (x >> 3) & off;
        x = xorshift(x);
        c[i].src = x & off;
        x = xorshift(x);
        c[i].size = x & (i % 2 ? big : (1ull << split) - 1); /* any, or within fst's part */
    }
    fifo_env_t e;
    fifo_env_init(&e, 64, 3);
    layout_case_t *c_dev;
    unsigned long long *failed_dev, failed = 0;
    CU(cudaMalloc((void **)&c_dev, sizeof(c)));
    CU(cudaMalloc((void **)&failed_dev, sizeof(failed)));
    CU(cudaMemcpy(c_dev, c, sizeof(c), cudaMemcpyHostToDevice));
    CU(cudaMemset(failed_dev, 0, sizeof(failed)));
    layout_push<<<1, 1>>>(e.f.dev, c_dev, N, failed_dev);
    CU(cudaGetLastError());
    CU(cudaDeviceSynchronize());
    CU(cudaMemcpy(&failed, failed_dev, sizeof(failed), cudaMemcpyDeviceToHost));
    CHECK_MSG(failed == 0, "%llu push(es) failed into a FIFO with room", failed);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        rill_trigger_t t;
        CHECK_MSG(rill_fifo_poll(&e.f, &t), "trigger %d is not committed", i);
        rill_fifo_pop(&e.f);
        unsigned type;
        uint64_t dst, src, size;
        rill_trigger_unpack(&t, &type, &dst, &src, &size);
        if (type != c[i].type || dst != c[i].dst || src != c[i].src || size != c[i].size) {
            fprintf(stderr,
                    "case %d: made (type %u, dst %llu, src %llu, size %llu), unpacked (type %u, "
                    "dst %llu, src %llu, size %llu)\n",
                    i, c[i].type, (unsigned long long)c[i].dst, (unsigned long long)c[i].src,
                    (unsigned long long)c[i].size, type, (unsigned long long)dst,
                    (unsigned long long)src, (unsigned long long)size);
            bad++;
        }
    }
    printf("layout: %d triggers (offsets up to 2^40 - 1, sizes up to %llu, all types): %d wrong\n",
           N, (unsigned long long)big, bad);
    CHECK_MSG(bad == 0, "%d trigger(s) changed between rill_trigger_make and rill_trigger_unpack",
              bad);
    CU(cudaFree(c_dev));
    CU(cudaFree(failed_dev));
    fifo_env_fini(&e);
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "torture";
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines reach a log even if the test is killed */
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        printf("SKIP: no usable GPU: %s\n",
               e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found none");
        return 77;
    }
    CU(cudaSetDevice(0));
    cudaDeviceProp prop;
    CU(cudaGetDeviceProperties(&prop, 0));
    printf("GPU 0: %s (cc %d.%d); FIFO default spin limit %llu\n", prop.name, prop.major,
           prop.minor, (unsigned long long)rill_channel_spin_limit());
    int rc;
    if (!strcmp(what, "torture"))
        rc = run_torture();
    else if (!strcmp(what, "stalled"))
        rc = run_stalled();
    else if (!strcmp(what, "layout"))
        rc = run_layout();
    else {
        fprintf(stderr, "unknown scenario '%s': torture, stalled, layout\n", what);
        rc = 2;
    }
    printf("%s: %s\n", what, rc == 0 ? "PASS" : "FAIL");
    return rc;
}
