/*
 * test_ensemble.c — ensembles and n-best rescoring (issue 14, part 6;
 * src/seq2seq/search.c, beam.c). On small random-weight models (Bahdanau GRU and
 * Luong LSTM) over fixed sources:
 *   - one model: attend_ensemble_greedy / _beam equal attend_model_greedy /
 *     _beam bit for bit (tokens, lengths, scores, alignments);
 *   - two clones of one model: the same, each member's alignment equal to the
 *     single model's;
 *   - two different models (checked to disagree alone, so the rest is not
 *     vacuous): each n-best hypothesis's beam score (alpha 0) equals the mean
 *     of the members' attend_model_score log-probabilities; the greedy output
 *     is the beam-1 output; member k's greedy alignment equals its forced
 *     alignment of the ensemble's output (attend_model_score);
 *   - rescoring: attend_model_rescore = attend_model_score / (len + 1), of the
 *     reversed hypothesis with reverse = 1;
 *   - errors: different target vocabulary sizes (naming model 2), a pointer
 *     model, one handle twice, no models, a bad reverse flag.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "harness.h"

enum { V = 11, S_MAX = 7, L = 10, N_SRC = 24, BEAM = 4, NBEST = 3 };

static int32_t src[N_SRC][S_MAX];
static int32_t src_len[N_SRC];

static void make_sources(void) {
    uint32_t r = 777;
    for (int i = 0; i < N_SRC; i++) {
        r = r * 1103515245u + 12345u;
        src_len[i] = 1 + (int32_t)((r >> 16) % S_MAX);
        for (int j = 0; j < S_MAX; j++) {
            r = r * 1103515245u + 12345u;
            src[i][j] = j < src_len[i] ? 4 + (int32_t)((r >> 16) % (V - 4)) : ATTEND_PAD;
        }
    }
}

static attend_model *make_model(attend_cell_kind cell, attend_decoder_kind dec, int tgt_vocab, uint64_t seed) {
    attend_error err = {0};
    attend_model_config mc = {cell, dec, ATTEND_SCORE_ADDITIVE, V, tgt_vocab, 8, 8, 1, 16, 8,
                              N_SRC, S_MAX, L, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    if (dec == ATTEND_DECODER_POINTER) mc.max_tgt_len = S_MAX;
    attend_model *m = NULL;
    EXPECT(attend_model_create(&m, &mc, seed, &err) == ATTEND_OK, "%s", err.msg);
    if (!m) return NULL;
    /* sharper output distributions than the initialisation's: decisions that differ between models */
    attend_model_tensor t;
    memset(&t, 0, sizeof t);
    if (dec != ATTEND_DECODER_POINTER) {
        EXPECT(attend_model_tensor_find(m, "out.weight", &t, &err) == ATTEND_OK, "%s", err.msg);
        for (size_t i = 0; t.data && i < t.numel; i++) t.data[i] *= 6;
        /* a trained model never emits PAD or BOS; greedy (unlike beam) would consider them */
        EXPECT(attend_model_tensor_find(m, "out.bias", &t, &err) == ATTEND_OK, "%s", err.msg);
        if (t.data) t.data[ATTEND_PAD] = t.data[ATTEND_BOS] = -30;
    }
    return m;
}

static int same_ints(const int32_t *a, const int32_t *b, size_t n) { return memcmp(a, b, n * sizeof *a) == 0; }
static int same_reals(const attend_real *a, const attend_real *b, size_t n) {
    return memcmp(a, b, n * sizeof *a) == 0;
}

/* Greedy and beam of the ensemble `ms` [M] equal `single`'s (M = 1, or clones of it), bit for bit. */
static void check_equal_single(attend_model *single, attend_model **ms, int M, const char *what) {
    attend_error err = {0};
    int32_t out1[N_SRC * L], len1[N_SRC], outE[N_SRC * L], lenE[N_SRC];
    static attend_real al1[N_SRC * L * S_MAX], alE[4 * N_SRC * L * S_MAX];
    EXPECT(attend_model_greedy(single, &src[0][0], src_len, N_SRC, S_MAX, L, out1, len1, al1, &err) == ATTEND_OK,
           "%s", err.msg);
    EXPECT(attend_ensemble_greedy(ms, M, &src[0][0], src_len, N_SRC, S_MAX, L, outE, lenE, alE, &err) == ATTEND_OK,
           "%s", err.msg);
    EXPECT(same_ints(out1, outE, N_SRC * L) && same_ints(len1, lenE, N_SRC), "%s: greedy tokens differ", what);
    for (int k = 0; k < M; k++)
        EXPECT(same_reals(al1, alE + (size_t)k * N_SRC * L * S_MAX, (size_t)N_SRC * L * S_MAX),
               "%s: greedy alignment of member %d differs", what, k + 1);
    int nonempty = 0;
    for (int i = 0; i < N_SRC; i++) nonempty += len1[i] > 0;
    EXPECT(nonempty > 0, "%s: every greedy output is empty (a vacuous comparison)", what);
    for (int i = 0; i < N_SRC; i++) {
        int32_t bo1[NBEST * L], bl1[NBEST], boE[NBEST * L], blE[NBEST];
        double sc1[NBEST], scE[NBEST];
        attend_real ba1[NBEST * L * S_MAX], baE[4 * NBEST * L * S_MAX];
        int n1 = 0, nE = 0;
        int S = src_len[i];
        EXPECT(attend_model_beam(single, src[i], S, BEAM, NBEST, L, 0.5, bo1, bl1, sc1, ba1, &n1, &err) == ATTEND_OK,
               "%s", err.msg);
        EXPECT(attend_ensemble_beam(ms, M, src[i], S, BEAM, NBEST, L, 0.5, boE, blE, scE, baE, &nE, &err) ==
                   ATTEND_OK,
               "%s", err.msg);
        EXPECT(n1 == nE, "%s: source %d: %d vs %d hypotheses", what, i, n1, nE);
        if (n1 != nE) continue;
        EXPECT(same_ints(bo1, boE, (size_t)n1 * L) && same_ints(bl1, blE, n1), "%s: source %d: beam tokens differ",
               what, i);
        EXPECT(memcmp(sc1, scE, (size_t)n1 * sizeof *sc1) == 0, "%s: source %d: beam scores differ (%.17g vs %.17g)",
               what, i, sc1[0], scE[0]);
        for (int k = 0; k < M; k++) /* member k's block is [NBEST,L,S]: n1 hypotheses of [L,S] */
            EXPECT(same_reals(ba1, baE + (size_t)k * NBEST * L * S, (size_t)n1 * L * S),
                   "%s: source %d: beam alignment of member %d differs", what, i, k + 1);
    }
}

static void test_one_model_is_the_model(void) {
    attend_model *a = make_model(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, V, 1);
    attend_model *b = make_model(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, V, 2);
    if (a) check_equal_single(a, &a, 1, "bahdanau gru, M=1");
    if (b) check_equal_single(b, &b, 1, "luong lstm, M=1");
    attend_model_free(a);
    attend_model_free(b);
}

static void test_two_clones_are_the_model(void) {
    attend_error err = {0};
    attend_model *a = make_model(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, V, 3);
    attend_model *c[2] = {NULL, NULL};
    if (a) {
        EXPECT(attend_model_clone(&c[0], a, &err) == ATTEND_OK, "%s", err.msg);
        EXPECT(attend_model_clone(&c[1], a, &err) == ATTEND_OK, "%s", err.msg);
    }
    if (c[0] && c[1]) check_equal_single(a, c, 2, "bahdanau gru, two clones");
    attend_model_free(c[0]);
    attend_model_free(c[1]);
    attend_model_free(a);
}

static void test_two_models_average(void) {
    attend_error err = {0};
    attend_model *ms[2] = {make_model(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, V, 5),
                           make_model(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, V, 6)};
    if (!ms[0] || !ms[1]) goto out;
    int32_t o0[N_SRC * L], l0[N_SRC], o1[N_SRC * L], l1[N_SRC], oE[N_SRC * L], lE[N_SRC];
    static attend_real alE[2 * N_SRC * L * S_MAX];
    EXPECT(attend_model_greedy(ms[0], &src[0][0], src_len, N_SRC, S_MAX, L, o0, l0, NULL, &err) == ATTEND_OK, "%s",
           err.msg);
    EXPECT(attend_model_greedy(ms[1], &src[0][0], src_len, N_SRC, S_MAX, L, o1, l1, NULL, &err) == ATTEND_OK, "%s",
           err.msg);
    EXPECT(!same_ints(o0, o1, N_SRC * L), "the two members decode alike: the test would not see an average");
    EXPECT(attend_ensemble_greedy(ms, 2, &src[0][0], src_len, N_SRC, S_MAX, L, oE, lE, alE, &err) == ATTEND_OK, "%s",
           err.msg);
    double worst_score = 0, worst_align = 0;
    int checked = 0;
    for (int i = 0; i < N_SRC; i++) {
        int S = src_len[i];
        /* greedy = beam of width 1 */
        int32_t bo[NBEST * L], bl[NBEST];
        double sc[NBEST];
        int n = 0;
        EXPECT(attend_ensemble_beam(ms, 2, src[i], S, 1, 1, L, 0, bo, bl, sc, NULL, &n, &err) == ATTEND_OK, "%s",
               err.msg);
        EXPECT(n == 1 && bl[0] == lE[i] && same_ints(bo, oE + (size_t)i * L, lE[i]),
               "source %d: greedy and beam 1 differ", i);
        /* member k's alignment = its forced alignment of the ensemble's output (emitted steps) */
        for (int k = 0; k < 2 && lE[i] < L; k++) {
            double lp;
            attend_real fa[(L + 1) * S_MAX];
            EXPECT(attend_model_score(ms[k], src[i], S, oE + (size_t)i * L, lE[i], &lp, fa, &err) == ATTEND_OK, "%s",
                   err.msg);
            for (int t = 0; t < lE[i]; t++)
                for (int j = 0; j < S; j++) {
                    double d = fabs((double)fa[t * S + j] -
                                    (double)alE[(((size_t)k * N_SRC + i) * L + t) * S_MAX + j]);
                    if (d > worst_align) worst_align = d;
                }
        }
        /* n-best scores (alpha 0) = the mean of the members' forced log-probabilities */
        EXPECT(attend_ensemble_beam(ms, 2, src[i], S, BEAM, NBEST, L, 0, bo, bl, sc, NULL, &n, &err) == ATTEND_OK,
               "%s", err.msg);
        for (int h = 0; h < n; h++) {
            if (bl[h] == L) continue; /* unfinished at max_len: no EOS step in its score */
            double lp0, lp1;
            EXPECT(attend_model_score(ms[0], src[i], S, bo + (size_t)h * L, bl[h], &lp0, NULL, &err) == ATTEND_OK,
                   "%s", err.msg);
            EXPECT(attend_model_score(ms[1], src[i], S, bo + (size_t)h * L, bl[h], &lp1, NULL, &err) == ATTEND_OK,
                   "%s", err.msg);
            double d = fabs(sc[h] - 0.5 * (lp0 + lp1));
            if (d > worst_score) worst_score = d;
            checked++;
        }
    }
    EXPECT(checked > 10, "only %d finished hypotheses checked", checked);
    EXPECT_NEAR("ensemble beam score - mean forced log-prob", worst_score, 0, 1e-4);
    EXPECT_NEAR("member alignment - forced alignment", worst_align, 0, 1e-5);
out:
    attend_model_free(ms[0]);
    attend_model_free(ms[1]);
}

static void test_rescore(void) {
    attend_error err = {0};
    attend_model *m = make_model(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, V, 9);
    if (!m) return;
    int32_t hyp[3 * L] = {4, 5, 6, 0, 0, 0, 0, 0, 0, 0, /* */ 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* */ 0};
    int32_t hl[3] = {3, 1, 0};
    double sc[3], rv[3];
    EXPECT(attend_model_rescore(m, src[0], src_len[0], hyp, hl, 3, L, 0, sc, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_rescore(m, src[0], src_len[0], hyp, hl, 3, L, 1, rv, &err) == ATTEND_OK, "%s", err.msg);
    int32_t rev[3] = {6, 5, 4};
    double lp, lpr, lp1, lp0;
    attend_model_score(m, src[0], src_len[0], hyp, 3, &lp, NULL, &err);
    attend_model_score(m, src[0], src_len[0], rev, 3, &lpr, NULL, &err);
    attend_model_score(m, src[0], src_len[0], hyp + L, 1, &lp1, NULL, &err);
    attend_model_score(m, src[0], src_len[0], hyp, 0, &lp0, NULL, &err);
    EXPECT(sc[0] == lp / 4 && sc[1] == lp1 / 2 && sc[2] == lp0, "forward scores %g %g %g", sc[0], sc[1], sc[2]);
    EXPECT(rv[0] == lpr / 4 && rv[1] == sc[1] && rv[2] == sc[2], "reversed scores %g %g %g", rv[0], rv[1], rv[2]);
    EXPECT(lp != lpr, "reversing changed nothing (vacuous)");
    hl[1] = L + 1;
    EXPECT(attend_model_rescore(m, src[0], src_len[0], hyp, hl, 3, L, 0, sc, &err) == ATTEND_ERR_ARG &&
               strstr(err.msg, "hypothesis 1"),
           "bad length: %s", err.msg);
    hl[1] = 1;
    EXPECT(attend_model_rescore(m, src[0], src_len[0], hyp, hl, 3, L, 2, sc, &err) == ATTEND_ERR_ARG, "reverse=2");
    attend_model_free(m);
}

static void test_errors(void) {
    attend_error err = {0};
    attend_model *a = make_model(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, V, 1);
    attend_model *b = make_model(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, V + 1, 2);
    attend_model *p = make_model(ATTEND_CELL_GRU, ATTEND_DECODER_POINTER, V, 3);
    int32_t out[N_SRC * L], len[N_SRC];
    double sc[1];
    int n;
    attend_model *ab[2] = {a, b}, *ap[2] = {a, p}, *aa[2] = {a, a};
    EXPECT(attend_ensemble_greedy(ab, 2, &src[0][0], src_len, N_SRC, S_MAX, L, out, len, NULL, &err) ==
                   ATTEND_ERR_ARG &&
               strstr(err.msg, "model 2 has a target vocabulary of 12 ids, model 1 has 11"),
           "sizes: %s", err.msg);
    EXPECT(attend_ensemble_beam(ab, 2, src[0], src_len[0], 2, 1, L, 0, out, len, sc, NULL, &n, &err) ==
                   ATTEND_ERR_ARG &&
               strstr(err.msg, "model 2"),
           "beam sizes: %s", err.msg);
    EXPECT(attend_ensemble_greedy(ap, 2, &src[0][0], src_len, N_SRC, S_MAX, L, out, len, NULL, &err) ==
                   ATTEND_ERR_ARG &&
               strstr(err.msg, "model 2 is a pointer model"),
           "pointer: %s", err.msg);
    EXPECT(attend_ensemble_greedy(aa, 2, &src[0][0], src_len, N_SRC, S_MAX, L, out, len, NULL, &err) ==
                   ATTEND_ERR_ARG &&
               strstr(err.msg, "same handle"),
           "twice: %s", err.msg);
    EXPECT(attend_ensemble_greedy(ab, 0, &src[0][0], src_len, N_SRC, S_MAX, L, out, len, NULL, &err) ==
               ATTEND_ERR_ARG,
           "no models: %s", err.msg);
    EXPECT(attend_ensemble_greedy(NULL, 1, &src[0][0], src_len, N_SRC, S_MAX, L, out, len, NULL, &err) ==
               ATTEND_ERR_NULL,
           "NULL models: %s", err.msg);
    EXPECT(attend_ensemble_greedy(ab, 1, &src[0][0], src_len, N_SRC, S_MAX, L + 2, out, len, NULL, &err) ==
               ATTEND_ERR_CAPACITY,
           "max_len: %s", err.msg);
    attend_model_free(a);
    attend_model_free(b);
    attend_model_free(p);
}

int main(void) {
    make_sources();
    RUN(test_one_model_is_the_model);
    RUN(test_two_clones_are_the_model);
    RUN(test_two_models_average);
    RUN(test_rescore);
    RUN(test_errors);
    return harness_summary();
}
