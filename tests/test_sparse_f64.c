/*
 * test_sparse_f64.c — the sparse normalisers (src/core/sparsemax.c) against
 * central finite differences in double precision (linked against
 * attend_f64): the masked sparsemax and 1.5-entmax backward, the one-shot
 * attention with each normaliser, and the whole model's gradient with a
 * sparse normaliser (bahdanau and luong decoders, several scores).
 *
 * Method as tests/test_grad_f64.c: L = Σ U · output for a random U, the
 * analytic gradient from backward into zeroed buffers against
 * (L(x + h) − L(x − h)) / 2h, h = 1e-6. Sparsemax is piecewise linear and
 * entmax15 has a kink in its second derivative at the support's edge: a draw
 * with a kept score within 1e-3 of the threshold is drawn again, so the two
 * sides of a difference see the same support. Each kernel check also demands
 * that some weights are exactly 0 (the sparse path is exercised) and that
 * backward accumulates (G0 + 2g after two calls).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "harness.h"

_Static_assert(sizeof(attend_real) == sizeof(double), "test_sparse_f64 must link attend_f64");

#define FD_H 1e-6

static attend_rng rng_;
static double urand(double lo, double hi) { return lo + (hi - lo) * attend_rng_uniform(&rng_); }
static int irand(int lo, int hi) { return lo + (int)(attend_rng_uniform(&rng_) * (hi - lo + 1)); }

static int kept(const uint8_t *valid, const uint8_t *allowed, int causal, int S, int n, int t, int j) {
    return (!valid || valid[n * S + j]) && (!allowed || allowed[t * S + j]) && (!causal || j <= t);
}

/* Does some kept score of row (n,t) lie within `gap` of the map's threshold
 * (on the scale the map compares: z for sparsemax, z/2 for entmax15)? */
static int near_kink(attend_normalizer nz, const double *z, const uint8_t *valid, const uint8_t *allowed, int causal,
                     int T, int S, int n, int t, double gap) {
    double row[64];
    int k = 0;
    for (int j = 0; j < S; j++)
        if (kept(valid, allowed, causal, S, n, t, j)) row[k++] = z[((size_t)n * T + t) * S + j];
    double tau = attend_normalizer_threshold(nz, row, k, NULL);
    for (int i = 0; i < k; i++) {
        double x = nz == ATTEND_NORMALIZER_ENTMAX15 ? row[i] / 2 : row[i];
        if (fabs(x - tau) < gap) return 1;
    }
    return 0;
}

static double loss_of(attend_normalizer nz, const double *z, const double *U, const uint8_t *valid,
                      const uint8_t *allowed, int causal, int N, int T, int S, double *w) {
    attend_masked_normalize_forward(nz, w, z, valid, allowed, causal, N, T, S, NULL);
    double L = 0;
    for (int i = 0; i < N * T * S; i++) L += U[i] * w[i];
    return L;
}

static void check_kernel(attend_normalizer nz, int trial) {
    int N = irand(1, 3), T = irand(1, 4), S = irand(2, 7);
    int n_all = N * T * S;
    double *z = malloc(n_all * sizeof *z), *U = malloc(n_all * sizeof *U), *w = malloc(n_all * sizeof *w);
    double *g = calloc(n_all, sizeof *g), *num = malloc(n_all * sizeof *num), *g2 = malloc(n_all * sizeof *g2);
    uint8_t valid[3 * 7], allowed[4 * 7];
    int use_valid = trial % 2, use_allowed = trial % 3 == 1, causal = trial % 4 == 3;
    for (int n = 0; n < N; n++) {
        int len = irand(1, S);
        for (int j = 0; j < S; j++) valid[n * S + j] = j < len;
    }
    for (int t = 0; t < T; t++)
        for (int j = 0; j < S; j++) allowed[t * S + j] = j == 0 || attend_rng_uniform(&rng_) < 0.7;
    const uint8_t *vp = use_valid ? valid : NULL, *ap = use_allowed ? allowed : NULL;
    /* scores spread enough for exact zeros; redrawn while a row sits near a kink */
    for (int tries = 0;; tries++) {
        for (int i = 0; i < n_all; i++) z[i] = urand(-3, 3);
        int bad = 0;
        for (int n = 0; n < N && !bad; n++)
            for (int t = 0; t < T && !bad; t++) bad = near_kink(nz, z, vp, ap, causal, T, S, n, t, 1e-3);
        if (!bad || tries > 100) break;
    }
    for (int i = 0; i < n_all; i++) U[i] = urand(-1, 1);
    attend_error err;
    EXPECT(attend_masked_normalize_forward(nz, w, z, vp, ap, causal, N, T, S, &err) == ATTEND_OK, "forward: %s",
           err.msg);
    /* the weights: a distribution over the kept positions, exact zeros elsewhere */
    for (int n = 0; n < N; n++)
        for (int t = 0; t < T; t++) {
            double sum = 0;
            for (int j = 0; j < S; j++) {
                double x = w[((size_t)n * T + t) * S + j];
                EXPECT(x >= 0, "%s: weight %g < 0", attend_normalizer_name(nz), x);
                if (!kept(vp, ap, causal, S, n, t, j)) EXPECT(x == 0, "masked weight %g", x);
                sum += x;
            }
            EXPECT(fabs(sum - 1) < 1e-12, "%s: row (%d,%d) sums to %.15g", attend_normalizer_name(nz), n, t, sum);
        }
    EXPECT(attend_masked_normalize_backward(nz, g, U, w, N, T, S, &err) == ATTEND_OK, "backward: %s", err.msg);
    for (int i = 0; i < n_all; i++) {
        double keep = z[i];
        z[i] = keep + FD_H;
        double Lp = loss_of(nz, z, U, vp, ap, causal, N, T, S, w);
        z[i] = keep - FD_H;
        double Lm = loss_of(nz, z, U, vp, ap, causal, N, T, S, w);
        z[i] = keep;
        num[i] = (Lp - Lm) / (2 * FD_H);
    }
    char label[96];
    snprintf(label, sizeof label, "%s trial %d N=%d T=%d S=%d", attend_normalizer_name(nz), trial, N, T, S);
    EXPECT_CLOSE(label, g, num, n_all, 1e-8, 1e-6);
    /* accumulation: G0 + 2g (with the unperturbed weights again) */
    attend_masked_normalize_forward(nz, w, z, vp, ap, causal, N, T, S, NULL);
    for (int i = 0; i < n_all; i++) g2[i] = 0.5 + i;
    attend_masked_normalize_backward(nz, g2, U, w, N, T, S, NULL);
    attend_masked_normalize_backward(nz, g2, U, w, N, T, S, NULL);
    for (int i = 0; i < n_all; i++) num[i] = 0.5 + i + 2 * g[i];
    EXPECT_CLOSE("accumulates", g2, num, n_all, 1e-12, 1e-12);
    free(z), free(U), free(w), free(g), free(num), free(g2);
}

static int zeros_seen_[3];

static void test_kernels(void) {
    attend_rng_seed(&rng_, 42);
    for (int nz = 1; nz <= 2; nz++)
        for (int trial = 0; trial < 12; trial++) check_kernel((attend_normalizer)nz, trial);
    /* the draws above must have produced exact zeros at kept positions */
    for (int nz = 1; nz <= 2; nz++) {
        double z[6] = {2.5, -1.0, 0.3, 1.9, -2.2, 0.0}, w[6];
        attend_masked_normalize_forward((attend_normalizer)nz, w, z, NULL, NULL, 0, 1, 1, 6, NULL);
        for (int j = 0; j < 6; j++) zeros_seen_[nz] += w[j] == 0;
        EXPECT(zeros_seen_[nz] >= 2, "%s: %d exact zeros in a spread row", attend_normalizer_name((attend_normalizer)nz),
               zeros_seen_[nz]);
    }
}

/* The one-shot attention with a normaliser: keys → scores → normaliser →
 * context, every input and parameter against finite differences. */
static double attn_loss(attend_normalizer nz, const attend_score_config *cfg, const attend_score_params *p,
                        const double *q, const double *k, const double *v, const uint8_t *valid, int N, int T, int S,
                        int Dv, const double *U, double *ctx, double *w, double *ws, size_t wl) {
    attend_attention_forward_normalized(cfg, p, nz, ctx, w, q, k, v, valid, NULL, 0, N, T, S, Dv, ws, wl, NULL);
    double L = 0;
    for (int i = 0; i < N * T * Dv; i++) L += U[i] * ctx[i];
    return L;
}

static void check_attention(attend_normalizer nz, attend_score_kind kind) {
    const int N = 2, T = 3, S = 5, Dq = 3, Dk = 3, Dv = 2, A = 4;
    attend_score_config cfg = {kind, Dq, Dk, A, 1, 0};
    double q[2 * 3 * 3], k[2 * 5 * 3], v[2 * 5 * 2], W[3 * 3], Wq[4 * 3], Wk[4 * 3], b[4], va[4];
    double *params[] = {q, k, v, W, Wq, Wk, b, va};
    size_t sizes[] = {sizeof q, sizeof k, sizeof v, sizeof W, sizeof Wq, sizeof Wk, sizeof b, sizeof va};
    for (int a = 0; a < 8; a++)
        for (size_t i = 0; i < sizes[a] / sizeof(double); i++) params[a][i] = urand(-1.5, 1.5);
    for (int i = 0; i < 4; i++) va[i] *= 3; /* spread the additive scores */
    uint8_t valid[2 * 5] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
    attend_score_params p = {W, Wq, Wk, b, va};
    double gq[18] = {0}, gk[30] = {0}, gv[20] = {0}, gW[9] = {0}, gWq[12] = {0}, gWk[12] = {0}, gb[4] = {0},
           gva[4] = {0};
    attend_score_grads g = {gW, gWq, gWk, gb, gva};
    double *grads[] = {gq, gk, gv, gW, gWq, gWk, gb, gva};
    double U[2 * 3 * 2], ctx[12], w[30];
    for (int i = 0; i < 12; i++) U[i] = urand(-1, 1);
    size_t wl = attend_attention_workspace_size(&cfg, N, T, S);
    double *ws = malloc(wl * sizeof *ws);
    attend_error err;
    EXPECT(attend_attention_forward_normalized(&cfg, &p, nz, ctx, w, q, k, v, valid, NULL, 0, N, T, S, Dv, ws, wl,
                                               &err) == ATTEND_OK,
           "forward: %s", err.msg);
    int zeros = 0;
    for (int i = 0; i < 30; i++) zeros += w[i] == 0;
    EXPECT(attend_attention_backward_normalized(&cfg, &p, nz, &g, gq, gk, gv, U, NULL, w, q, k, v, N, T, S, Dv, ws,
                                                wl, &err) == ATTEND_OK,
           "backward: %s", err.msg);
    int used[8] = {1, 1, 1, kind == ATTEND_SCORE_GENERAL, kind == ATTEND_SCORE_ADDITIVE, kind == ATTEND_SCORE_ADDITIVE,
                   kind == ATTEND_SCORE_ADDITIVE, kind == ATTEND_SCORE_ADDITIVE};
    for (int a = 0; a < 8; a++) {
        if (!used[a]) continue;
        size_t n = sizes[a] / sizeof(double);
        double num[30];
        for (size_t i = 0; i < n; i++) {
            double keep = params[a][i];
            params[a][i] = keep + FD_H;
            double Lp = attn_loss(nz, &cfg, &p, q, k, v, valid, N, T, S, Dv, U, ctx, w, ws, wl);
            params[a][i] = keep - FD_H;
            double Lm = attn_loss(nz, &cfg, &p, q, k, v, valid, N, T, S, Dv, U, ctx, w, ws, wl);
            params[a][i] = keep;
            num[i] = (Lp - Lm) / (2 * FD_H);
        }
        char label[96];
        snprintf(label, sizeof label, "attention %s %s input %d (%d zero weights)", attend_normalizer_name(nz),
                 attend_score_name(kind), a, zeros);
        EXPECT_CLOSE(label, grads[a], num, n, 1e-7, 1e-5);
    }
    free(ws);
}

static void test_attention(void) {
    attend_rng_seed(&rng_, 7);
    for (int nz = 0; nz <= 2; nz++) {
        check_attention((attend_normalizer)nz, ATTEND_SCORE_DOT);
        check_attention((attend_normalizer)nz, ATTEND_SCORE_GENERAL);
        check_attention((attend_normalizer)nz, ATTEND_SCORE_ADDITIVE);
    }
}

/* ---------------------------------------------------------- whole model */

static void check_model(attend_decoder_kind dec, attend_score_kind score, attend_normalizer nz) {
    attend_model_config cfg = {ATTEND_CELL_GRU, dec, score, 7, 7, 3, 2, 1, 4, 3, 2, 5, 4, 0, 0, 0, 0, nz, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    char what[96];
    snprintf(what, sizeof what, "%s/%s/%s", attend_decoder_name(dec), attend_score_name(score),
             attend_normalizer_name(nz));
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &cfg, 99, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (!m) return;
    /* sharpen the scores so that the weights have exact zeros: a larger
     * attention tensor, or (dot) saturated encoder and decoder states */
    const char *sharp = score == ATTEND_SCORE_ADDITIVE ? "attention.v" : score == ATTEND_SCORE_GENERAL ? "attention.W" : NULL;
    const double gain = nz == ATTEND_NORMALIZER_ENTMAX15 ? 30 : 10;
    attend_model_tensor t;
    for (int i = 0; i < attend_model_tensor_count(m); i++) {
        if (attend_model_tensor_get(m, i, &t, NULL) != ATTEND_OK) continue;
        if (sharp && !strcmp(t.name, sharp))
            for (size_t j = 0; j < t.numel; j++) t.data[j] *= gain;
        if (!sharp && (!strncmp(t.name, "encoder.", 8) || !strncmp(t.name, "src_emb", 7) || !strncmp(t.name, "decoder.", 8)))
            for (size_t j = 0; j < t.numel; j++) t.data[j] *= gain / 2.5;
    }
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    int32_t s1[] = {4, 5, 6, 4, 6}, s2[] = {6, 5}, t1[] = {5, 4, 6}, t2[] = {4};
    attend_dataset_add(d, s1, 5, t1, 3, NULL);
    attend_dataset_add(d, s2, 2, t2, 1, NULL);
    attend_batch b;
    attend_batch_alloc(&b, 2, 5, 5, NULL);
    int idx[2] = {0, 1};
    EXPECT(attend_batch_fill(&b, d, idx, 2, 0, &err) == ATTEND_OK, "%s", err.msg);
    attend_tf_stats st;
    attend_model_zero_grad(m);
    EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(isfinite(st.attn_entropy), "%s: attention entropy %g", what, st.attn_entropy);
    EXPECT(attend_model_backward(m, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    /* the alignment of the first pair has exact zeros at kept positions */
    double logp, align[4 * 5];
    EXPECT(attend_model_score(m, s1, 5, t1, 3, &logp, align, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    int zeros = 0;
    for (int i = 0; i < 4 * 5; i++) zeros += align[i] == 0;
    EXPECT(zeros > 0, "%s: no exact zero in the alignment", what);
    size_t n = attend_model_param_count(m);
    double *p = attend_model_params(m), *gr = attend_model_grads(m);
    double *analytic = malloc(n * sizeof *analytic), *numeric = malloc(n * sizeof *numeric);
    memcpy(analytic, gr, n * sizeof *analytic);
    for (size_t i = 0; i < n; i++) {
        double keep = p[i];
        attend_tf_stats sp, sm;
        p[i] = keep + FD_H;
        attend_model_forward(m, &b, &sp, NULL);
        p[i] = keep - FD_H;
        attend_model_forward(m, &b, &sm, NULL);
        p[i] = keep;
        numeric[i] = (sp.loss - sm.loss) / (2 * FD_H);
    }
    char label[256];
    snprintf(label, sizeof label, "%s (%zu params, loss %.4f, %d zero weights of 20)", what, n, st.loss, zeros);
    EXPECT_CLOSE(label, analytic, numeric, n, 1e-7, 1e-5);
    free(analytic);
    free(numeric);
    attend_batch_release(&b);
    attend_dataset_free(d);
    attend_model_free(m);
}

static void test_model(void) {
    for (int nz = 1; nz <= 2; nz++) {
        check_model(ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, (attend_normalizer)nz);
        check_model(ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, (attend_normalizer)nz);
        check_model(ATTEND_DECODER_LUONG, ATTEND_SCORE_DOT, (attend_normalizer)nz);
    }
}

int main(void) {
    RUN(test_kernels);
    RUN(test_attention);
    RUN(test_model);
    return harness_summary();
}
