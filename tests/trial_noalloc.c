/*
 * trial_noalloc.c — the trials allocate once per call, whatever the number of
 * steps or evaluations: attend_model_adversary and attend_model_importance on
 * a short and a long output of the same source make the same number of
 * allocations (after warm-up: the model's decoding scratch and packed
 * weights), and the adversary's bytes do not depend on the output length;
 * attend_attention_adversary allocates once for a budget of 100 or 10000
 * evaluations (the walks stop early once their steps shrink below 1e-7).
 * Linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
 * (tests/cmake/trial.cmake), as bench/noalloc.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <attend.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static long n_alloc;
static size_t n_bytes;

void *__wrap_malloc(size_t n) {
    n_alloc++;
    n_bytes += n;
    return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t size) {
    n_alloc++;
    n_bytes += n * size;
    return __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t n) {
    n_alloc++;
    n_bytes += n;
    return __real_realloc(p, n);
}

static int failed;

/* |v . w - r0| for attend_attention_adversary: a linear read-out */
static double linear_distance(void *user, const double *w) {
    const double *v = user;
    return __builtin_fabs(v[0] * w[0] + v[1] * w[1] + v[2] * w[2] + v[3] * w[3] - v[4]);
}

static void check(int ok, const char *what, long a, long b) {
    printf("  %-60s %ld / %ld%s\n", what, a, b, ok ? "" : "  <-- FAIL");
    failed += !ok;
}

int main(void) {
    attend_model_config c;
    memset(&c, 0, sizeof c);
    c.cell = ATTEND_CELL_GRU;
    c.decoder = ATTEND_DECODER_BAHDANAU;
    c.score = ATTEND_SCORE_ADDITIVE;
    c.src_vocab = 8;
    c.tgt_vocab = 9;
    c.emb = 6;
    c.enc_hidden = 5;
    c.enc_layers = 1;
    c.dec_hidden = 7;
    c.attn = 6;
    c.max_batch = 4;
    c.max_src_len = 30;
    c.max_tgt_len = 60;
    attend_model *m = NULL;
    attend_error err;
    if (attend_model_create(&m, &c, 1, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    enum { S = 30, LONG = 60, SHORT = 3 };
    int32_t src[S], base[LONG];
    for (int j = 0; j < S; j++) src[j] = 4 + j % 4;
    for (int t = 0; t < LONG; t++) base[t] = 4 + t % 5;
    attend_adversary_options o = {0.01, ATTEND_ADVERSARY_SEARCH, 200, 0, NULL, NULL, 0};
    attend_adversary_result r;
    memset(&r, 0, sizeof r);
    attend_importance_result ir;
    memset(&ir, 0, sizeof ir);
    /* warm-up: both entry points, long */
    if (attend_model_adversary(m, src, S, base, LONG, &o, &r, &err) ||
        attend_model_importance(m, src, S, base, LONG, NULL, &ir, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    long a[2];
    size_t b[2];
    int lens[2] = {SHORT, LONG};
    for (int i = 0; i < 2; i++) {
        n_alloc = 0;
        n_bytes = 0;
        if (attend_model_adversary(m, src, S, base, lens[i], &o, &r, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        a[i] = n_alloc;
        b[i] = n_bytes;
    }
    check(a[0] == 1 && a[1] == 1, "adversary: allocations, 4 steps / 61 steps", a[0], a[1]);
    check(b[0] == b[1], "adversary: bytes, 4 steps / 61 steps", (long)b[0], (long)b[1]);
    check(r.evals > 61 * 100, "adversary: evaluations of the long run (> 6100)", r.evals, 6100);
    for (int i = 0; i < 2; i++) {
        n_alloc = 0;
        if (attend_model_importance(m, src, S, base, lens[i], NULL, &ir, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        a[i] = n_alloc;
    }
    check(a[0] == 1 && a[1] == 1, "importance: allocations, 4 steps / 61 steps", a[0], a[1]);
    attend_model_free(m);
    double alpha[4] = {0.4, 0.3, 0.2, 0.1}, v[5] = {1, -0.5, 0.25, 2, 0.4 - 0.15 + 0.05 + 0.2}, adv[4];
    long budgets[2] = {100, 10000}, evals = 0;
    for (int i = 0; i < 2; i++) {
        attend_adversary_options go = {0.01, ATTEND_ADVERSARY_SEARCH, budgets[i], 0, NULL, NULL, 0};
        n_alloc = 0;
        if (attend_attention_adversary(alpha, 4, linear_distance, v, &go, adv, NULL, NULL, &evals, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        a[i] = n_alloc;
    }
    printf("  (the second call: %ld evaluations)\n", evals);
    check(a[0] == 1 && a[1] == 1 && evals > 1000, "attention adversary: allocations, budget 100 / 10000", a[0],
          a[1]);
    printf("%d passed, %d failed\n", 5 - failed, failed);
    return failed != 0;
}
