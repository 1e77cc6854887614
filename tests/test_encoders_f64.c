/*
 * test_encoders_f64.c — the transformer and conv encoder kinds (issue 27,
 * src/seq2seq/encoders/transformer.c, conv.c) in double precision: the analytic
 * gradient of the teacher-forced loss against central finite differences
 * over every parameter, for pre-norm and post-norm, kernels 1, 3 and 5,
 * sinusoidal, learned and no positions, one and two layers, under the recurrent decoders, on the
 * tiny batch of fd_check.h (two sources of different lengths: the key
 * padding mask and the padding rows); and with dropout between the layers
 * (a fixed mask per key, so the loss is a smooth function of the weights).
 * And the readout decoder kind (decoders/readout.c) over the three encoders.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "fd_check.h"
#include "harness.h"

/* heads > 0: a transformer encoder; heads < 0: a conv encoder of kernel width -heads */
static void check(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score, int layers, int heads,
                  attend_positions pos, int post_norm, double dropout) {
    /* emb 4 = E, feed-forward 5, dec_hidden 4 (dot scores need Hd = E) */
    attend_model_config cfg = {.cell = cell, .decoder = dec, .score = score, .src_vocab = 7, .tgt_vocab = 7,
                               .emb = 4, .enc_hidden = 5, .enc_layers = layers, .dec_hidden = 4, .attn = 3,
                               .max_batch = 2, .max_src_len = 4, .max_tgt_len = 4};
    cfg.encoder = heads > 0 ? ATTEND_ENCODER_TRANSFORMER : ATTEND_ENCODER_CONV;
    cfg.heads = heads > 0 ? heads : 0;
    cfg.kernel = heads < 0 ? -heads : 0;
    cfg.positions = pos;
    cfg.post_norm = heads > 0 ? post_norm : 0;
    cfg.conv_relu = heads < 0 ? post_norm : 0; /* a conv encoder: 1 the ReLU variant */
    cfg.max_positions = pos == ATTEND_POSITIONS_LEARNED ? 6 : 0; /* more rows than the sources use */
    if (dec == ATTEND_DECODER_TRANSFORMER) cfg.dec_layers = layers; /* as many layers as the encoder */
    char what[160];
    snprintf(what, sizeof what, "%s %s/%s/%s L%d %s%d %s %s%s", heads > 0 ? "transformer" : "conv",
             attend_cell_name(cell), attend_decoder_name(dec), attend_score_name(score), layers, heads > 0 ? "H" : "k",
             heads > 0 ? heads : -heads, attend_positions_name(pos),
             heads < 0 ? (post_norm ? "relu" : "glu") : post_norm ? "post" : "pre",
             dropout > 0 ? " dropout" : "");
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &cfg, 2701, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (!m) return;
    int pointer = dec == ATTEND_DECODER_POINTER;
    attend_dataset *d = fd_tiny_data(pointer);
    attend_batch b;
    attend_batch_alloc(&b, 2, 4, 5, NULL);
    int idx[2] = {0, 1};
    EXPECT(attend_batch_fill(&b, d, idx, 2, pointer, &err) == ATTEND_OK, "%s", err.msg);
    if (dropout > 0) { /* the deprecated setter fills the options attend_model_forward (and fd_gradients) use */
        EXPECT(attend_model_set_dropout(m, dropout, 7, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    }
    attend_tf_stats st;
    attend_model_zero_grad(m);
    EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(attend_model_backward(m, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    size_t n = attend_model_param_count(m);
    double *analytic = NULL, *numeric = NULL;
    fd_gradients(m, &b, &analytic, &numeric);
    attend_model_tensor t;
    attend_model_tensor_find(m, "src_emb.weight", &t, NULL);
    for (int k = 0; k < cfg.emb; k++) EXPECT(t.grad[k] == 0, "%s: PAD source row got gradient %g", what, t.grad[k]);
    /* a key bias shifts all of a query's scores alike: its gradient is exactly zero, not rounding noise
     * (which Adam would turn into steps); the finite differences below agree with the zero */
    for (int i = 0; i < attend_model_tensor_count(m); i++) {
        attend_model_tensor_get(m, i, &t, NULL);
        size_t nl = strlen(t.name), sl = strlen("in_proj_bias");
        if (nl < sl || strcmp(t.name + nl - sl, "in_proj_bias") != 0) continue;
        size_t E = t.numel / 3;
        for (size_t k = E; k < 2 * E; k++)
            EXPECT(t.grad[k] == 0, "%s: %s key bias [%zu] got gradient %g", what, t.name, k - E, t.grad[k]);
    }
    char label[220];
    snprintf(label, sizeof label, "%s (%zu params, loss %.4f)", what, n, st.loss);
    EXPECT_CLOSE(label, analytic, numeric, n, 1e-7, 1e-5);
    free(analytic);
    free(numeric);
    attend_batch_release(&b);
    attend_dataset_free(d);
    attend_model_free(m);
}

static void test_pre_norm(void) {
    check(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 1, 2, ATTEND_POSITIONS_SINUSOIDAL, 0, 0);
    check(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_SCALED_DOT, 2, 4, ATTEND_POSITIONS_LEARNED, 0, 0);
    check(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, 2, 1, ATTEND_POSITIONS_NONE, 0, 0);
}

static void test_post_norm(void) {
    check(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 2, 2, ATTEND_POSITIONS_SINUSOIDAL, 1, 0);
    check(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_DOT, 1, 2, ATTEND_POSITIONS_LEARNED, 1, 0);
}

static void test_other_decoders(void) {
    check(ATTEND_CELL_GRU, ATTEND_DECODER_NONE, ATTEND_SCORE_DOT, 1, 2, ATTEND_POSITIONS_SINUSOIDAL, 0, 0);
    check(ATTEND_CELL_GRU, ATTEND_DECODER_POINTER, ATTEND_SCORE_ADDITIVE, 2, 2, ATTEND_POSITIONS_LEARNED, 0, 0);
}

/* dropout's site between layers (AT_SITE_ENC_LAYER + l) and on the source embeddings */
static void test_dropout(void) {
    check(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 2, 2, ATTEND_POSITIONS_SINUSOIDAL, 0, 0.3);
    check(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 2, 2, ATTEND_POSITIONS_LEARNED, 1, 0.3);
}

/* the conv encoder: kernels 1 (no neighbours), 3 and 5 (wider than the shorter source: padding and the edges) */
static void test_conv(void) {
    check(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 2, -3, ATTEND_POSITIONS_SINUSOIDAL, 0, 0);
    check(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, 1, -5, ATTEND_POSITIONS_LEARNED, 0, 0);
    check(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_DOT, 1, -1, ATTEND_POSITIONS_NONE, 0, 0);
    check(ATTEND_CELL_GRU, ATTEND_DECODER_POINTER, ATTEND_SCORE_ADDITIVE, 2, -3, ATTEND_POSITIONS_LEARNED, 0, 0);
    check(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 2, -3, ATTEND_POSITIONS_SINUSOIDAL, 0, 0.3);
    /* the ReLU variant (post_norm carries conv_relu here) */
    check(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 2, -3, ATTEND_POSITIONS_LEARNED, 1, 0);
    check(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, 1, -5, ATTEND_POSITIONS_NONE, 1, 0);
}

/* the transformer decoder (decoders/transformer.c): causal self-attention
 * through its key/value cache, cross-attention, feed-forward; pre- and
 * post-norm, one and two layers, every positions kind, dropout on its inputs */
static void test_transformer_decoder(void) {
    attend_decoder_kind td = ATTEND_DECODER_TRANSFORMER;
    check(ATTEND_CELL_GRU, td, ATTEND_SCORE_ADDITIVE, 1, 2, ATTEND_POSITIONS_SINUSOIDAL, 0, 0);
    check(ATTEND_CELL_GRU, td, ATTEND_SCORE_ADDITIVE, 2, 4, ATTEND_POSITIONS_LEARNED, 0, 0);
    check(ATTEND_CELL_GRU, td, ATTEND_SCORE_ADDITIVE, 2, 2, ATTEND_POSITIONS_SINUSOIDAL, 1, 0);
    check(ATTEND_CELL_GRU, td, ATTEND_SCORE_ADDITIVE, 1, 1, ATTEND_POSITIONS_NONE, 1, 0);
    check(ATTEND_CELL_GRU, td, ATTEND_SCORE_ADDITIVE, 2, 2, ATTEND_POSITIONS_LEARNED, 0, 0.3);
}

/* the readout decoder (decoders/readout.c): one label per source position from
 * its top encoder state, under each encoder kind; two sources of lengths 4 and 2
 * (the shorter one's padding positions get no label and no gradient) */
static void check_readout(attend_encoder_kind enc, int layers, attend_positions pos, double dropout) {
    attend_model_config cfg = {.cell = ATTEND_CELL_GRU, .decoder = ATTEND_DECODER_READOUT, .src_vocab = 7,
                               .tgt_vocab = 8, .emb = 4, .enc_hidden = enc == ATTEND_ENCODER_RNN ? 3 : 5,
                               .enc_layers = layers, .dec_hidden = 1, .attn = 1, .max_batch = 2, .max_src_len = 4,
                               .max_tgt_len = 4};
    cfg.encoder = enc;
    if (enc != ATTEND_ENCODER_RNN) cfg.positions = pos;
    if (enc == ATTEND_ENCODER_TRANSFORMER) cfg.heads = 2;
    if (enc == ATTEND_ENCODER_CONV) cfg.kernel = 3;
    if (pos == ATTEND_POSITIONS_LEARNED) cfg.max_positions = 4;
    char what[96];
    snprintf(what, sizeof what, "readout over %s L%d %s%s", attend_encoder_name(enc), layers,
             enc == ATTEND_ENCODER_RNN ? "" : attend_positions_name(pos), dropout > 0 ? " dropout" : "");
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &cfg, 2702, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (!m) return;
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    int32_t s1[] = {4, 5, 6, 4}, s2[] = {6, 5}, t1[] = {7, 4, 5, 6}, t2[] = {7, 6};
    attend_dataset_add(d, s1, 4, t1, 4, NULL);
    attend_dataset_add(d, s2, 2, t2, 2, NULL);
    attend_batch b;
    attend_batch_alloc(&b, 2, 4, 4, NULL);
    int idx[2] = {0, 1};
    EXPECT(attend_batch_fill(&b, d, idx, 2, 1, &err) == ATTEND_OK, "%s", err.msg);
    if (dropout > 0) EXPECT(attend_model_set_dropout(m, dropout, 7, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    attend_tf_stats st;
    attend_model_zero_grad(m);
    EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(st.tokens == 6, "%s: %d labels counted, want 6 (4 + 2, no EOS)", what, st.tokens);
    EXPECT(attend_model_backward(m, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    size_t n = attend_model_param_count(m);
    double *analytic = NULL, *numeric = NULL;
    fd_gradients(m, &b, &analytic, &numeric);
    char label[160];
    snprintf(label, sizeof label, "%s (%zu params, loss %.4f)", what, n, st.loss);
    EXPECT_CLOSE(label, analytic, numeric, n, 1e-7, 1e-5);
    free(analytic);
    free(numeric);
    attend_batch_release(&b);
    attend_dataset_free(d);
    attend_model_free(m);
}

static void test_readout(void) {
    check_readout(ATTEND_ENCODER_RNN, 1, ATTEND_POSITIONS_SINUSOIDAL, 0);
    check_readout(ATTEND_ENCODER_RNN, 2, ATTEND_POSITIONS_SINUSOIDAL, 0.3);
    check_readout(ATTEND_ENCODER_TRANSFORMER, 2, ATTEND_POSITIONS_SINUSOIDAL, 0);
    check_readout(ATTEND_ENCODER_TRANSFORMER, 1, ATTEND_POSITIONS_LEARNED, 0);
    check_readout(ATTEND_ENCODER_TRANSFORMER, 1, ATTEND_POSITIONS_NONE, 0);
    check_readout(ATTEND_ENCODER_CONV, 2, ATTEND_POSITIONS_SINUSOIDAL, 0);
}

int main(void) {
    RUN(test_readout);
    RUN(test_transformer_decoder);
    RUN(test_conv);
    RUN(test_pre_norm);
    RUN(test_post_norm);
    RUN(test_other_decoders);
    RUN(test_dropout);
    return harness_summary();
}
