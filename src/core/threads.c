/*
 * threads.c — the library's own worker threads, and how many a call may use.
 *
 * Why not OpenMP: libgomp's idle threads spin at the end of every parallel
 * loop (OMP_WAIT_POLICY is read once, before any library code runs), and its
 * barrier makes the caller wait for every thread of the team, including one
 * the scheduler has not run yet because another process holds its core. In a
 * host process (a C program that computes between calls, Python) both cost
 * far more than the threads bring (issue 25: 300 training steps 9-12 s by
 * default against 0.4-0.6 s on one thread, with other work on the cores).
 *
 * The pool here splits a loop into chunks that threads *claim*: the caller
 * publishes a job, wakes sleeping workers and starts claiming chunks itself; a
 * worker that wakes late finds the chunks taken and goes back to sleep, so the
 * caller never waits for a thread that has not started, only for a chunk
 * another thread is computing. Idle workers spin for at most
 * AT_POOL_SPIN_NS (a decoder step issues its loops microseconds apart), then
 * sleep on a condition variable: between library calls they use no CPU
 * (tests/test_threads.c measures it). Which thread runs a chunk never changes
 * what the chunk computes (the callers split only loops with disjoint writes),
 * so results do not depend on the thread count or on the scheduling.
 *
 * One job at a time: a second caller thread that finds the pool busy (or a
 * call made from inside a chunk) runs its loop on its own thread. The thread
 * count is process-wide (attend_set_threads); after fork() the child starts
 * with no workers.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#ifdef ATTEND_THREADS
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define AT_CPU_RELAX() _mm_pause()
#else
#define AT_CPU_RELAX() ((void)0)
#endif
#endif

#define AT_THREADS_MAX 1024
#define AT_POOL_SPIN_NS 50000 /* 50 µs: the gap between the loops of one decoder step */

/* ------------------------------------------------------ the thread count */

#ifdef ATTEND_THREADS
/* 0: automatic (every core this process may run on); n >= 1: exactly n */
static _Atomic int thread_setting = -1; /* -1: not read from the environment yet */

/* A count from the environment (ATTEND_NUM_THREADS, else OMP_NUM_THREADS,
 * which the command and older scripts set), 0 when neither holds one. */
static int env_threads(void) {
    const char *names[2] = {"ATTEND_NUM_THREADS", "OMP_NUM_THREADS"};
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(names[i]);
        if (!v || !*v) continue;
        char *end;
        errno = 0;
        long n = strtol(v, &end, 10);
        if (errno == 0 && *end == '\0' && n >= 1) return n > AT_THREADS_MAX ? AT_THREADS_MAX : (int)n;
    }
    return 0;
}
#endif

int at_cpu_count(void) {
#if defined(ATTEND_THREADS) && defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n >= 1) return n > AT_THREADS_MAX ? AT_THREADS_MAX : n;
    }
#endif
#if defined(ATTEND_THREADS)
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n >= 1) return n > AT_THREADS_MAX ? AT_THREADS_MAX : (int)n;
#endif
    return 1;
}

attend_status attend_set_threads(int n, attend_error *err) {
    CHECK(n >= 0 && n <= AT_THREADS_MAX, err, ATTEND_ERR_ARG,
          "attend_set_threads: %d threads; expected 0 (automatic) or 1..%d", n, AT_THREADS_MAX);
#ifdef ATTEND_THREADS
    atomic_store(&thread_setting, n);
#else
    CHECK(n <= 1, err, ATTEND_ERR_ARG,
          "attend_set_threads: %d threads, but this build has no threads (configure with -DATTEND_THREADS=ON)", n);
#endif
    return at_ok(err);
}

int attend_threads(void) {
#ifdef ATTEND_THREADS
    int s = atomic_load(&thread_setting);
    if (s < 0) { /* first use: the environment decides the default */
        int e = env_threads();
        int expected = -1;
        atomic_compare_exchange_strong(&thread_setting, &expected, e);
        s = atomic_load(&thread_setting);
    }
    return s > 0 ? s : at_cpu_count();
#else
    return 1;
#endif
}

/* --------------------------------------------------------------- the pool */

#ifdef ATTEND_THREADS

/* A job's ticket: generation (32 bits), chunk count (16), next unclaimed
 * chunk (16). Claiming a chunk is one compare-and-swap on it, so a thread
 * holding an old generation's ticket can never claim a new job's chunk. */
#define TK_GEN(t) ((uint32_t)((t) >> 32))
#define TK_N(t) ((int)(((t) >> 16) & 0xffff))
#define TK_NEXT(t) ((int)((t)&0xffff))
#define TK_MAKE(g, n, next) (((uint64_t)(g) << 32) | ((uint64_t)(n) << 16) | (uint64_t)(next))
#define AT_CHUNKS_MAX 0xffff

typedef struct {
    _Atomic uint64_t ticket;
    _Atomic int done;          /* chunks finished in this generation */
    _Atomic int want;          /* workers 0..want-1 may claim chunks of this generation */
    _Atomic int sleepers;      /* workers waiting on `wake` */
    _Atomic int caller_asleep; /* the caller waits on `finished` */
    _Atomic int busy;          /* a caller holds the pool */
    at_chunk_fn fn;            /* the job: written before its ticket is published */
    void *ctx;
    int nworkers;              /* started so far (only the holder of `busy` starts more) */
    pthread_t tid[AT_THREADS_MAX];
    pthread_mutex_t mu;
    pthread_cond_t wake, finished;
} at_pool;

static at_pool pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
                       .finished = PTHREAD_COND_INITIALIZER};
static _Thread_local int in_chunk; /* this thread is running a chunk (or a job): nested loops run here */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void chunk_done(int n) {
    if (atomic_fetch_add(&pool.done, 1) + 1 == n && atomic_load(&pool.caller_asleep)) {
        pthread_mutex_lock(&pool.mu);
        pthread_cond_signal(&pool.finished);
        pthread_mutex_unlock(&pool.mu);
    }
}

/* Claims and runs chunks of generation gen until none is left. */
static void claim_chunks(uint32_t gen) {
    uint64_t t = atomic_load(&pool.ticket);
    while (TK_GEN(t) == gen && TK_NEXT(t) < TK_N(t)) {
        if (atomic_compare_exchange_weak(&pool.ticket, &t, t + 1)) {
            pool.fn(pool.ctx, TK_NEXT(t)); /* the claim orders these reads after the job's writes */
            chunk_done(TK_N(t));
            t = atomic_load(&pool.ticket);
        }
    }
}

static void *worker_main(void *arg) {
    const int id = (int)(intptr_t)arg;
#ifdef __linux__
    pthread_setname_np(pthread_self(), "attend-worker"); /* as top -H and /proc/PID/task/TID/comm show it */
#endif
    in_chunk = 1;
    uint32_t seen = TK_GEN(atomic_load(&pool.ticket));
    for (;;) {
        /* wait for a new generation: spin briefly, then sleep */
        uint64_t t = atomic_load(&pool.ticket);
        if (TK_GEN(t) == seen) {
            const uint64_t until = now_ns() + AT_POOL_SPIN_NS;
            for (int i = 1;; i++) {
                AT_CPU_RELAX();
                t = atomic_load(&pool.ticket);
                if (TK_GEN(t) != seen || ((i & 63) == 0 && now_ns() > until)) break;
            }
            if (TK_GEN(t) == seen) {
                pthread_mutex_lock(&pool.mu);
                atomic_fetch_add(&pool.sleepers, 1);
                while (TK_GEN(t = atomic_load(&pool.ticket)) == seen) pthread_cond_wait(&pool.wake, &pool.mu);
                atomic_fetch_sub(&pool.sleepers, 1);
                pthread_mutex_unlock(&pool.mu);
            }
        }
        seen = TK_GEN(t);
        if (id < atomic_load(&pool.want)) claim_chunks(seen);
    }
    return NULL;
}

/* In a forked child the workers do not exist: start again with none. */
static void pool_after_fork(void) {
    pthread_mutex_init(&pool.mu, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.finished, NULL);
    pool.nworkers = 0;
    atomic_store(&pool.sleepers, 0);
    atomic_store(&pool.caller_asleep, 0);
    atomic_store(&pool.busy, 0);
    in_chunk = 0;
}

/* Starts workers until there are `n` (the caller holds `busy`); returns how
 * many exist (fewer when the system refuses a thread: the loop then runs on
 * the threads there are). */
static int pool_grow(int n) {
    if (n > AT_THREADS_MAX) n = AT_THREADS_MAX;
    if (pool.nworkers >= n) return pool.nworkers;
    static _Atomic int atfork_done = 0;
    if (!atomic_exchange(&atfork_done, 1)) pthread_atfork(NULL, NULL, pool_after_fork);
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return pool.nworkers;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 2u << 20); /* 2 MiB: the chunks' buffers are thread-locals, not on the stack */
    while (pool.nworkers < n) {
        pthread_t t;
        if (pthread_create(&t, &attr, worker_main, (void *)(intptr_t)pool.nworkers) != 0) break;
        pool.tid[pool.nworkers++] = t;
    }
    pthread_attr_destroy(&attr);
    return pool.nworkers;
}

void at_parallel_chunks(int nt, int nchunks, at_chunk_fn fn, void *ctx) {
    if (nchunks <= 0) return;
    if (nchunks > AT_CHUNKS_MAX) nchunks = AT_CHUNKS_MAX; /* callers size chunks from nt; never reached */
    int expected = 0;
    if (nt <= 1 || nchunks == 1 || in_chunk || !atomic_compare_exchange_strong(&pool.busy, &expected, 1)) {
        for (int c = 0; c < nchunks; c++) fn(ctx, c);
        return;
    }
    int workers = pool_grow(nt - 1);
    if (workers > nt - 1) workers = nt - 1;
    if (workers < 1) {
        atomic_store(&pool.busy, 0);
        for (int c = 0; c < nchunks; c++) fn(ctx, c);
        return;
    }
    in_chunk = 1;
    pool.fn = fn;
    pool.ctx = ctx;
    atomic_store(&pool.done, 0);
    atomic_store(&pool.want, workers);
    const uint32_t gen = TK_GEN(atomic_load(&pool.ticket)) + 1;
    atomic_store(&pool.ticket, TK_MAKE(gen, nchunks, 0)); /* publish */
    if (atomic_load(&pool.sleepers) > 0) {
        pthread_mutex_lock(&pool.mu);
        pthread_cond_broadcast(&pool.wake);
        pthread_mutex_unlock(&pool.mu);
    }
    claim_chunks(gen);
    /* every chunk is claimed: wait for the ones other threads still run */
    if (atomic_load(&pool.done) != nchunks) {
        const uint64_t until = now_ns() + AT_POOL_SPIN_NS;
        for (int i = 1; atomic_load(&pool.done) != nchunks; i++) {
            AT_CPU_RELAX();
            if ((i & 63) == 0 && now_ns() > until) {
                pthread_mutex_lock(&pool.mu);
                atomic_store(&pool.caller_asleep, 1);
                while (atomic_load(&pool.done) != nchunks) pthread_cond_wait(&pool.finished, &pool.mu);
                atomic_store(&pool.caller_asleep, 0);
                pthread_mutex_unlock(&pool.mu);
                break;
            }
        }
    }
    in_chunk = 0;
    atomic_store(&pool.busy, 0);
}

int at_threads(double work) {
    /* below ~64k multiply-adds waking a thread costs more than it saves */
    if (work < 65536.0 || in_chunk) return 1;
    int nt = attend_threads();
    double most = work / 32768.0; /* at least 32k per thread */
    if (most < nt) nt = (int)most;
    return nt < 1 ? 1 : nt;
}

#else /* no threads: every loop runs on the caller */

void at_parallel_chunks(int nt, int nchunks, at_chunk_fn fn, void *ctx) {
    (void)nt;
    for (int c = 0; c < nchunks; c++) fn(ctx, c);
}

int at_threads(double work) {
    (void)work;
    return 1;
}

#endif

/* ------------------------------------------------------- rows over chunks */

typedef struct {
    at_rows_fn fn;
    void *ctx;
    int n, align, nchunks;
} rows_job;

/* Chunk c of n rows in blocks of `align`: [lo, hi), the blocks dealt evenly. */
void at_chunk_range(int n, int align, int nchunks, int c, int *lo, int *hi) {
    int blocks = (n + align - 1) / align;
    int b0 = (int)((long)blocks * c / nchunks), b1 = (int)((long)blocks * (c + 1) / nchunks);
    *lo = b0 * align < n ? b0 * align : n;
    *hi = b1 * align < n ? b1 * align : n;
}

static void rows_chunk(void *p, int c) {
    const rows_job *j = p;
    int lo, hi;
    at_chunk_range(j->n, j->align, j->nchunks, c, &lo, &hi);
    if (hi > lo) j->fn(j->ctx, lo, hi);
}

void at_parallel_rows(double work, int n, int align, at_rows_fn fn, void *ctx) {
    if (n <= 0) return;
    if (align < 1) align = 1;
    int nt = at_threads(work);
    int blocks = (n + align - 1) / align;
    if (nt > blocks) nt = blocks;
    if (nt <= 1) {
        fn(ctx, 0, n);
        return;
    }
    /* two chunks a thread: a thread another process delays leaves the
     * caller half its share to take over, not all of it */
    int nchunks = 2 * nt < blocks ? 2 * nt : blocks;
    rows_job j = {fn, ctx, n, align, nchunks};
    at_parallel_chunks(nt, nchunks, rows_chunk, &j);
}
