/*
 * test_pointer_perm.c — pointer decoders that decode permutations (issue 13,
 * part 6): with attend_model_set_pointer_exclude a chosen source position is
 * masked out of every later step. On a small random-weight pointer model (its
 * greedy outputs repeat positions without the mask: checked first, so the
 * other checks are not vacuous) over many sources, including "badcab":
 * greedy and beam outputs are permutations; beam with K=1 equals greedy
 * (tokens and alignments, bit for bit); the n-best are distinct permutations
 * whose alignment rows sum to 1 and are exactly 0 on positions chosen before;
 * beam's score (alpha 0) equals attend_model_score's log-probability; scoring
 * a target that repeats a position is an error naming the step; the setting
 * round-trips through a model file, and a file saved without it has no
 * "pointer_exclude" key and loads with the mask off. (The gradient check with
 * the mask is in test_model_f64.c.)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attend.h"
#include "harness.h"

enum { S_MAX = 8, NB = 16, K = 4, N_SRC = 200 };

typedef struct {
    attend_model *m;
    attend_vocab *v;
    int32_t src[N_SRC][S_MAX];
    int len[N_SRC];
} fixture;

static int make(fixture *f, int exclude) {
    attend_error err = {0};
    memset(f, 0, sizeof *f);
    attend_task_config tc = {ATTEND_TASK_SORT, 6, 1, S_MAX, 4, 5};
    attend_dataset *d = NULL;
    EXPECT(attend_dataset_task(&d, &f->v, &tc, &err) == ATTEND_OK, "%s", err.msg);
    attend_dataset_free(d);
    if (!f->v) return 0;
    int V = attend_vocab_size(f->v);
    attend_model_config mc = {ATTEND_CELL_GRU, ATTEND_DECODER_POINTER, ATTEND_SCORE_ADDITIVE, V, V, 8, 8, 1, 16, 8,
                              NB, S_MAX, S_MAX, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    EXPECT(attend_model_create(&f->m, &mc, 7, &err) == ATTEND_OK, "%s", err.msg);
    if (!f->m) return 0;
    EXPECT(attend_model_set_pointer_exclude(f->m, exclude, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_pointer_exclude(f->m) == exclude, "setting not kept");
    /* source 0 is "badcab"; the rest from a fixed LCG over the 6 symbols */
    const char *bad = "badcab";
    for (int j = 0; j < 6; j++) f->src[0][j] = attend_vocab_find(f->v, bad + j, 1);
    f->len[0] = 6;
    EXPECT(f->src[0][0] >= 4, "vocabulary has no 'b'");
    uint32_t r = 12345;
    for (int i = 1; i < N_SRC; i++) {
        r = r * 1103515245u + 12345u;
        f->len[i] = 2 + (int)((r >> 16) % (S_MAX - 1));
        for (int j = 0; j < f->len[i]; j++) {
            r = r * 1103515245u + 12345u;
            f->src[i][j] = 4 + (int32_t)((r >> 16) % 6);
        }
    }
    return 1;
}

static void drop(fixture *f) {
    attend_model_free(f->m);
    attend_vocab_free(f->v);
}

/* 1 when out[0..n) is a permutation of 0..n-1 */
static int is_perm(const int32_t *out, int n) {
    int seen[S_MAX] = {0};
    for (int t = 0; t < n; t++) {
        if (out[t] < 0 || out[t] >= n || seen[out[t]]) return 0;
        seen[out[t]] = 1;
    }
    return 1;
}

static void test_repeats_without_mask(void) {
    fixture f;
    if (!make(&f, 0)) return;
    attend_error err = {0};
    int repeats = 0;
    for (int i = 0; i < N_SRC; i++) {
        int32_t out[S_MAX], out_len, sl = f.len[i];
        EXPECT(attend_model_greedy(f.m, f.src[i], &sl, 1, f.len[i], S_MAX, out, &out_len, NULL, &err) == ATTEND_OK,
               "%s", err.msg);
        repeats += !is_perm(out, f.len[i]);
    }
    printf("  mask off: %d of %d greedy outputs repeat a position\n", repeats, N_SRC);
    EXPECT(repeats > 0, "the random model never repeats: the checks with the mask would prove nothing");
    drop(&f);
}

static void test_greedy_and_beam(void) {
    fixture f;
    if (!make(&f, 1)) return;
    attend_error err = {0};
    static attend_real galign[S_MAX * S_MAX], balign[K * S_MAX * S_MAX];
    int bad_greedy = 0, bad_beam = 0, k1_diff = 0, dup = 0, rows_bad = 0, excl_bad = 0, score_bad = 0;
    for (int i = 0; i < N_SRC; i++) {
        int S = f.len[i];
        int32_t g[S_MAX], glen, sl = S;
        EXPECT(attend_model_greedy(f.m, f.src[i], &sl, 1, S, S_MAX, g, &glen, galign, &err) == ATTEND_OK, "%s",
               err.msg);
        bad_greedy += glen != S || !is_perm(g, S);
        if (i == 0) {
            printf("  badcab greedy:");
            for (int t = 0; t < glen; t++) printf(" %d", (int)g[t]);
            printf("\n");
        }
        /* K = 1 is greedy */
        int32_t b[K * S_MAX], blen[K], n_out = 0;
        double sc[K];
        EXPECT(attend_model_beam(f.m, f.src[i], S, 1, 1, S_MAX, 0, b, blen, sc, balign, &n_out, &err) == ATTEND_OK,
               "%s", err.msg);
        k1_diff += n_out != 1 || blen[0] != glen || memcmp(b, g, (size_t)S * sizeof *b) ||
                   memcmp(balign, galign, (size_t)S * S_MAX * sizeof *galign);
        /* K hypotheses */
        EXPECT(attend_model_beam(f.m, f.src[i], S, K, K, S_MAX, 0, b, blen, sc, balign, &n_out, &err) == ATTEND_OK,
               "%s", err.msg);
        for (int h = 0; h < n_out; h++) {
            const int32_t *o = b + (size_t)h * S_MAX;
            bad_beam += blen[h] != S || !is_perm(o, S);
            for (int h2 = 0; h2 < h; h2++) dup += !memcmp(o, b + (size_t)h2 * S_MAX, (size_t)S * sizeof *o);
            for (int t = 0; t < S; t++) {
                const attend_real *w = balign + ((size_t)h * S_MAX + t) * S;
                double sum = 0;
                for (int j = 0; j < S; j++) sum += w[j];
                rows_bad += fabs(sum - 1) > 1e-5;
                for (int u = 0; u < t; u++) excl_bad += w[o[u]] != 0;
            }
            double logp = 0;
            EXPECT(attend_model_score(f.m, f.src[i], S, o, S, &logp, NULL, &err) == ATTEND_OK, "%s", err.msg);
            score_bad += fabs(logp - sc[h]) > 1e-3 * (1 + fabs(logp));
        }
        if (S >= 3) EXPECT(n_out == K || n_out >= 2, "source %d: only %d hypotheses", i, n_out);
    }
    EXPECT(bad_greedy == 0, "%d greedy outputs are not permutations", bad_greedy);
    EXPECT(bad_beam == 0, "%d beam hypotheses are not permutations", bad_beam);
    EXPECT(k1_diff == 0, "%d sources: beam K=1 differs from greedy", k1_diff);
    EXPECT(dup == 0, "%d duplicate n-best pairs", dup);
    EXPECT(rows_bad == 0, "%d alignment rows do not sum to 1", rows_bad);
    EXPECT(excl_bad == 0, "%d weights on excluded positions are not 0", excl_bad);
    EXPECT(score_bad == 0, "%d beam scores differ from attend_model_score", score_bad);
    drop(&f);
}

static void test_score_repeat_is_error(void) {
    fixture f;
    if (!make(&f, 1)) return;
    attend_error err = {0};
    int32_t tgt[6] = {1, 4, 0, 3, 2, 2}; /* the repeat of issue 13: position 2 at steps 4 and 5 */
    double logp = 0;
    EXPECT(attend_model_score(f.m, f.src[0], 6, tgt, 6, &logp, NULL, &err) == ATTEND_ERR_ARG, "repeat accepted");
    EXPECT(strstr(err.msg, "step 5") && strstr(err.msg, "already chosen at step 4"), "message: %s", err.msg);
    attend_model_set_pointer_exclude(f.m, 0, NULL);
    EXPECT(attend_model_score(f.m, f.src[0], 6, tgt, 6, &logp, NULL, &err) == ATTEND_OK, "%s", err.msg);
    /* only a pointing decoder takes the setting */
    attend_model *bm = NULL;
    attend_model_config mc = *attend_model_get_config(f.m);
    mc.decoder = ATTEND_DECODER_BAHDANAU;
    EXPECT(attend_model_create(&bm, &mc, 1, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_set_pointer_exclude(bm, 1, &err) == ATTEND_ERR_ARG, "bahdanau took pointer_exclude");
    attend_model_free(bm);
    drop(&f);
}

static int file_has(const char *path, const char *needle) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return -1;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(buf + i, needle, k)) return 1;
    return 0;
}

static void test_file(void) {
    char path[300];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/attend-pointer-perm-%ld.safetensors", tmp && *tmp ? tmp : "/tmp", (long)getpid());
    for (int on = 0; on < 2; on++) {
        fixture f;
        if (!make(&f, on)) return;
        attend_error err = {0};
        EXPECT(attend_model_save(f.m, path, f.v, NULL, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
        EXPECT(file_has(path, "pointer_exclude\\\":1") == on, "on=%d: the file's key (escaped in the header)", on);
        EXPECT(file_has(path, "pointer_exclude") == on, "on=%d: a file without the setting names it", on);
        attend_model *l = NULL;
        EXPECT(attend_model_load(&l, path, NULL, NULL, NULL, NULL, &err) == ATTEND_OK, "%s", err.msg);
        if (l) {
            EXPECT(attend_model_pointer_exclude(l) == on, "on=%d: loaded as %d", on, attend_model_pointer_exclude(l));
            attend_model *c = NULL;
            EXPECT(attend_model_clone(&c, l, &err) == ATTEND_OK, "%s", err.msg);
            EXPECT(attend_model_pointer_exclude(c) == on, "on=%d: the clone lost it", on);
            int diff = 0;
            for (int i = 0; i < 40; i++) {
                int32_t a[S_MAX], b[S_MAX], al, bl, sl = f.len[i];
                attend_model_greedy(f.m, f.src[i], &sl, 1, f.len[i], S_MAX, a, &al, NULL, NULL);
                attend_model_greedy(l, f.src[i], &sl, 1, f.len[i], S_MAX, b, &bl, NULL, NULL);
                diff += al != bl || memcmp(a, b, (size_t)al * sizeof *a);
            }
            EXPECT(diff == 0, "on=%d: %d sources decode differently after loading", on, diff);
            attend_model_free(c);
            attend_model_free(l);
        }
        remove(path);
        drop(&f);
    }
}

int main(void) {
    RUN(test_repeats_without_mask);
    RUN(test_greedy_and_beam);
    RUN(test_score_repeat_is_error);
    RUN(test_file);
    return harness_summary();
}
