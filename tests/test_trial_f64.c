/*
 * test_trial_f64.c — trial 1's gradient x input by central finite differences,
 * in double precision (attend_f64): with attention_gradient = 1 the importance
 * of source position j at step t is |d/de log p_t(y_t)| with the embedding of
 * token j scaled by (1 + e) (the tokens are distinct, so only position j
 * moves), log p_t from teacher-forced forwards over the first t + 1 steps
 * (attend_forward's loss times its token count, minus the same for t steps).
 * Bahdanau/additive and Luong/general, max_batch 2 (the prefix rows in three
 * chunks).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "harness.h"

enum { S = 5, L = 4, STEPS = L + 1 };

/* Σ_{k<=t} −log p_k(y_k) along base + EOS. */
static double prefix_loss(attend_model *m, const int32_t *src, const int32_t *base, int t) {
    int32_t s[S], slen = S, tin[STEPS], tout[STEPS], tlen = t + 1;
    memcpy(s, src, sizeof s);
    for (int k = 0; k < STEPS; k++) {
        tin[k] = k == 0 ? ATTEND_BOS : base[k - 1];
        tout[k] = k > t ? ATTEND_PAD : k < L ? base[k] : ATTEND_EOS;
    }
    attend_batch b;
    memset(&b, 0, sizeof b);
    b.N = 1;
    b.S = S;
    b.T = STEPS;
    b.src = s;
    b.src_len = &slen;
    b.tgt_in = tin;
    b.tgt_out = tout;
    b.tgt_len = &tlen;
    b.cap_N = 1;
    b.cap_S = S;
    b.cap_T = STEPS;
    attend_tf_stats st;
    attend_error err;
    EXPECT(attend_forward(m, &b, NULL, &st, &err) == ATTEND_OK, "%s", err.msg);
    return st.loss * st.tokens;
}

static void check(attend_decoder_kind dec, attend_score_kind score, const char *label) {
    attend_model_config c;
    memset(&c, 0, sizeof c);
    c.cell = ATTEND_CELL_GRU;
    c.decoder = dec;
    c.score = score;
    c.src_vocab = 10;
    c.tgt_vocab = 9;
    c.emb = 6;
    c.enc_hidden = 4;
    c.enc_layers = 1;
    c.dec_hidden = 8;
    c.attn = 5;
    c.max_batch = 2;
    c.max_src_len = S;
    c.max_tgt_len = L + 1;
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &c, 17, &err) == ATTEND_OK, "%s", err.msg);
    if (!m) return;
    int32_t src[S] = {4, 7, 5, 9, 6}, base[L] = {5, 8, 4, 6};
    double grad[STEPS * S];
    attend_importance_options o = {NULL, 1};
    attend_importance_result r;
    memset(&r, 0, sizeof r);
    r.grad = grad;
    EXPECT(attend_model_importance(m, src, S, base, L, &o, &r, &err) == ATTEND_OK, "%s", err.msg);
    attend_model_tensor emb;
    EXPECT(attend_model_tensor_find(m, "src_emb.weight", &emb, &err) == ATTEND_OK, "%s", err.msg);
    double fd[STEPS * S];
    const double e = 1e-6;
    for (int j = 0; j < S; j++) {
        attend_real *row = emb.data + (size_t)src[j] * c.emb, keep[16];
        memcpy(keep, row, (size_t)c.emb * sizeof *row);
        double lp[2][STEPS];
        for (int side = 0; side < 2; side++) {
            for (int d = 0; d < c.emb; d++) row[d] = keep[d] * (1 + (side ? e : -e));
            double prev = 0;
            for (int t = 0; t < STEPS; t++) {
                double cur = prefix_loss(m, src, base, t);
                lp[side][t] = -(cur - prev); /* log p_t(y_t) */
                prev = cur;
            }
        }
        memcpy(row, keep, (size_t)c.emb * sizeof *row);
        for (int t = 0; t < STEPS; t++) fd[t * S + j] = fabs((lp[1][t] - lp[0][t]) / (2 * e));
    }
    char what[96];
    snprintf(what, sizeof what, "%s: gradient x input vs finite differences", label);
    EXPECT_CLOSE(what, grad, fd, STEPS * S, 1e-7, 1e-5);
    attend_model_free(m);
}

static void test_fd(void) {
    check(ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, "bahdanau/additive");
    check(ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, "luong/general");
}

int main(void) {
    RUN(test_fd);
    return harness_summary();
}
