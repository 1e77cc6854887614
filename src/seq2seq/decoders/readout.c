/*
 * readout.c — the READOUT decoder kind (issue 27, seed 002's Table 8.1): an
 * encoder-only labelling head. Output t is read from source position t's top
 * encoder state alone, through a linear layer and a softmax over the target
 * vocabulary:
 *
 *     logits_t = W_o enc_top[t] + b_o,   t = 0 .. src_len-1
 *
 * No recurrent cell, no attention, no input embedding: the previous outputs
 * are not read (a labelling, not a generation), so teacher forcing, greedy
 * and beam search give the same argmax per position. A sequence has exactly
 * src_len outputs and no EOS (eos = 0). Whatever position t's label needs
 * from other positions must travel through the encoder: y_t = x_{t-k} needs a
 * path of length k inside it (seed 002's "longest path between two positions":
 * O(k) steps for the recurrent encoder, O(k/kernel) layers for the
 * convolutional one, one layer for self-attention) — with an attentive decoder
 * every source state is one step away, which would measure nothing.
 *
 * Tensors: out.weight [Vt,E], out.bias [Vt] (the vocabulary kinds' output layer,
 * vocab.c). Features F = E.
 *
 * Dimension letters: see state.h.
 */
#include <string.h>

#include "seq2seq/decoders/decoder.h"

static void dims(const attend_model_config *c, int E, int *Din, int *F, int *V) {
    *Din = c->emb; /* unused: no cell */
    *F = E;
    *V = c->tgt_vocab;
}

static attend_status check(const attend_model_config *c, int E, attend_error *err) {
    (void)E;
    CHECK(c->max_tgt_len >= c->max_src_len, err, ATTEND_ERR_ARG,
          "model config: decoder readout labels every source position, but max_tgt_len=%d is below "
          "max_src_len=%d", c->max_tgt_len, c->max_src_len);
    return ATTEND_OK;
}

/* the output layer Vt (E + 1) */
static double min_params(const attend_model_config *c) {
    return (double)c->tgt_vocab * (attend_model_encoder_width(c) + 1);
}

/* the previous outputs are not read: the rows stay zero */
static void input_rows(const attend_model *m, attend_real *rows, const int32_t *y_in, const int32_t *src, int N,
                       int S) {
    (void)y_in;
    (void)src;
    (void)S;
    memset(rows, 0, (size_t)N * m->cfg.emb * sizeof *rows);
}

static int32_t input_id(const attend_model *m, int32_t y) {
    (void)m;
    return y;
}

static void input_rows_backward(attend_model *m, const attend_real *demb, int T, int N, int S) {
    (void)m;
    (void)demb;
    (void)T;
    (void)N;
    (void)S;
}

/* targets: one label of the vocabulary per source position (tgt_len = src_len), never PAD or BOS */
static attend_status check_targets(const attend_model *m, const attend_batch *b, int n, const char *who,
                                   attend_error *err) {
    int Vt = m->cfg.tgt_vocab, tl = b->tgt_len[n], sl = b->src_len[n];
    CHECK(tl == sl, err, ATTEND_ERR_ARG,
          "%s: row %d: %d target labels for %d source positions (decoder readout: one label per position)", who, n,
          tl, sl);
    for (int t = 0; t < tl; t++) {
        int32_t yo = b->tgt_out[(size_t)n * b->T + t];
        CHECK(yo >= 0 && yo < Vt && yo != ATTEND_PAD && yo != ATTEND_BOS, err, ATTEND_ERR_ARG,
              "%s: row %d step %d: target label %d outside the vocabulary [0,%d) or PAD/BOS", who, n, t, (int)yo,
              Vt);
    }
    return ATTEND_OK;
}

static attend_status check_decode(const attend_model *m, const int32_t *src_len, int N, int max_len, const char *who,
                                  attend_error *err) {
    (void)m;
    for (int n = 0; n < N; n++)
        CHECK(src_len[n] <= max_len, err, ATTEND_ERR_CAPACITY,
              "%s: row %d: a readout decoder emits src_len=%d labels, max_len is %d", who, n, (int)src_len[n],
              max_len);
    return ATTEND_OK;
}

static int decode_len(const attend_batch *b) { return b->S; }

static int finish(int t, int32_t token, int src_len) {
    (void)token;
    return t + 1 >= src_len ? 2 : 0;
}

/* feat_t [N,F] (row n at + n*feat_stride) = enc_top [N,S,E] at position t (zeros past the source) */
static void step_forward(attend_model *m, int t, int N, int S, const uint8_t *active, attend_real *feat_row,
                         size_t feat_stride) {
    int E = m->E;
    for (int n = 0; n < N; n++) {
        attend_real *f = feat_row + (size_t)n * feat_stride;
        if (t < S && (!active || active[n]))
            memcpy(f, m->acts.enc_top + ((size_t)n * S + t) * E, (size_t)E * sizeof *f);
        else
            memset(f, 0, (size_t)E * sizeof *f);
    }
}

/* backward of step t (accumulates into denc [N,S,E]):
 * forward: feat_t[n] = enc_top[n,t]  ⇒  denc[n,t] += dfeat_t[n] */
static void step_backward(attend_model *m, int t, int N, int S, const attend_real *dfeat_t, size_t dfeat_stride,
                          attend_real *dxg) {
    (void)dxg;
    int E = m->E, D = m->cfg.emb;
    const uint8_t *active = m->active + (size_t)t * N;
    for (int n = 0; n < N; n++) {
        if (t >= S || !active[n]) continue;
        attend_real *d = m->acts.denc + ((size_t)n * S + t) * E;
        const attend_real *g = dfeat_t + (size_t)n * dfeat_stride;
        for (int e = 0; e < E; e++) d[e] += g[e];
    }
    /* no input embedding: its gradient rows are zero */
    memset(m->acts.demb + (size_t)t * N * D, 0, (size_t)N * D * sizeof(attend_real));
}

const at_decoder_ops at_decoder_readout = {
    .name = "readout",
    .attentive = 0,
    .no_cell = 1,
    .vocabulary = 1,
    .start = ATTEND_BOS,
    .eos = 0,
    .dims = dims,
    .check = check,
    .min_params = min_params,
    .layout_params = at_vocab_layout_output,
    .input_rows = input_rows,
    .input_id = input_id,
    .input_rows_backward = input_rows_backward,
    .check_targets = check_targets,
    .check_decode = check_decode,
    .decode_len = decode_len,
    .finish = finish,
    .candidate = at_vocab_candidate,
    .step_forward = step_forward,
    .output_forward = at_vocab_output_forward,
    .output_row = at_vocab_output_row,
    .output_backward = at_vocab_output_backward,
    .step_backward = step_backward,
    .dist = at_vocab_dist,
};
