/*
 * test_concurrent.c — one loaded model decoded from 8 threads at once
 * (issue 17; include/attend.h "Threads"): each thread takes its own
 * attend_model_clone of the shared model (the 8 clones are made at the same
 * time, reading the shared model concurrently), then decodes every source,
 * greedy (batched, with alignments) and beam (width 4, 2-best, with
 * alignments), several rounds. Every output, length, score and alignment must
 * equal, bit for bit, what one thread computes alone. tools/test.sh's tsan
 * configuration runs this under ThreadSanitizer (gcc -fsanitize=thread),
 * which fails the run on any data race.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attend.h"
#include "harness.h"

#define THREADS 8
#define ROUNDS 2
#define NSRC 12   /* sources */
#define S 7       /* longest source */
#define MAXLEN 9  /* decoding limit */
#define BEAM 4
#define NBEST 2

typedef struct {
    int32_t out[NSRC * MAXLEN], out_len[NSRC];
    attend_real galign[NSRC * MAXLEN * S];
    int32_t bout[NSRC][NBEST * MAXLEN], blen[NSRC][NBEST];
    double bscore[NSRC][NBEST];
    attend_real balign[NSRC][NBEST * MAXLEN * S];
    int bn[NSRC];
} results;

static int32_t g_src[NSRC * S], g_src_len[NSRC];
static const attend_model *g_model; /* shared, only read (cloned) by the threads */
static results g_ref;

typedef struct {
    int id;
    results r;
    attend_status st;
    char msg[ATTEND_ERROR_MSG_MAX];
} job;

/* Every source through m: greedy as one batch, beam one by one. */
static attend_status decode_all(attend_model *m, results *r, attend_error *err) {
    memset(r, 0, sizeof *r);
    attend_status st = attend_model_greedy(m, g_src, g_src_len, NSRC, S, MAXLEN, r->out, r->out_len, r->galign, err);
    for (int i = 0; !st && i < NSRC; i++)
        st = attend_model_beam(m, g_src + i * S, g_src_len[i], BEAM, NBEST, MAXLEN, 0.7, r->bout[i], r->blen[i],
                               r->bscore[i], r->balign[i], &r->bn[i], err);
    return st;
}

static void *worker(void *arg) {
    job *j = arg;
    attend_error err = {0};
    attend_model *m = NULL;
    j->st = attend_model_clone(&m, g_model, &err);
    for (int round = 0; !j->st && round < ROUNDS; round++) {
        j->st = decode_all(m, &j->r, &err);
        if (!j->st && memcmp(&j->r, &g_ref, sizeof g_ref) != 0) {
            snprintf(j->msg, sizeof j->msg, "thread %d round %d: results differ from the sequential ones", j->id,
                     round);
            attend_model_free(m);
            return NULL;
        }
    }
    if (j->st) snprintf(j->msg, sizeof j->msg, "thread %d: %.200s", j->id, err.msg);
    attend_model_free(m);
    return NULL;
}

static void test_eight_threads(void) {
    attend_error err = {0};
    /* a small model (random weights: decoding is deterministic all the same),
     * saved and loaded back: the threads share a loaded model */
    attend_vocab *v = NULL;
    attend_task_config tc = {ATTEND_TASK_REVERSE, 6, 1, S, 4, 5};
    attend_dataset *d = NULL;
    EXPECT(attend_dataset_task(&d, &v, &tc, &err) == ATTEND_OK, "%s", err.msg);
    int V = attend_vocab_size(v);
    attend_model_config mc = {ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, V, V, 8, 8, 1, 16, 8,
                              NSRC, S, MAXLEN, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    attend_model *made = NULL, *loaded = NULL;
    EXPECT(attend_model_create(&made, &mc, 11, &err) == ATTEND_OK, "%s", err.msg);
    char path[300];
    const char *t = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/attend-concurrent-%ld.safetensors", t && *t ? t : "/tmp", (long)getpid());
    EXPECT(attend_model_save(made, path, v, v, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_load(&loaded, path, NULL, NULL, NULL, NULL, &err) == ATTEND_OK, "%s", err.msg);
    remove(path);
    attend_model_free(made);
    attend_dataset_free(d);
    attend_vocab_free(v);
    if (!loaded) return;
    /* sources of every length 1..S, symbols 4..V-1 */
    uint64_t x = 12345;
    for (int i = 0; i < NSRC; i++) {
        g_src_len[i] = 1 + i % S;
        for (int k = 0; k < S; k++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            g_src[i * S + k] = k < g_src_len[i] ? 4 + (int32_t)((x >> 33) % (uint64_t)(V - 4)) : ATTEND_PAD;
        }
    }
    /* the reference: one thread, on a clone (the shared model stays unused) */
    g_model = loaded;
    attend_model *solo = NULL;
    EXPECT(attend_model_clone(&solo, loaded, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(solo && decode_all(solo, &g_ref, &err) == ATTEND_OK, "%s", err.msg);
    attend_model_free(solo);
    int emitted = 0;
    for (int i = 0; i < NSRC; i++) emitted += g_ref.out_len[i] + g_ref.bn[i];
    EXPECT(emitted > 0, "the reference decoded nothing");

    static job jobs[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].id = i;
        EXPECT(pthread_create(&th[i], NULL, worker, &jobs[i]) == 0, "pthread_create %d", i);
    }
    int same = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        EXPECT(jobs[i].st == ATTEND_OK && !jobs[i].msg[0], "%s", jobs[i].msg);
        same += jobs[i].st == ATTEND_OK && !jobs[i].msg[0];
    }
    printf("  %d threads x %d rounds x %d sources (greedy + beam %d): %d of %d threads equal the sequential "
           "results bit for bit\n",
           THREADS, ROUNDS, NSRC, BEAM, same, THREADS);
    attend_model_free(loaded);
}

int main(void) {
    RUN(test_eight_threads);
    return harness_summary();
}
