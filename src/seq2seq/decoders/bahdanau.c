/*
 * bahdanau.c — the BAHDANAU decoder kind (Bahdanau et al. 2015): attention
 * with the previous state s_{t-1} as query, the context fed into the cell,
 * features [s_t; c_t]. Inference at few rows reads the context's input
 * projection from per-source-position projections made once (ctx_proj).
 *
 * Dimension letters: see state.h.
 */
#include <string.h>

#include "seq2seq/decoders/decoder.h"
#include "seq2seq/linear.h"

/* Inference at up to this many rows (batch 1, a beam) reads the context's
 * input projection c_t W_ih[:, D:]ᵀ = Σ_j α_tj (h_j W_ih[:, D:]ᵀ) from
 * per-position projections made once per source (one GEMM), instead of a
 * matrix-vector product over the largest weight matrix at every step. */
#define AT_CTX_PROJ_ROWS 8

typedef struct {
    int ctx_proj_on; /* the last encode filled ctx_proj (inference, few rows) */
} bahdanau_state;

static bahdanau_state *st(const attend_model *m) { return m->dec_state; }

static void dims(const attend_model_config *c, int E, int *Din, int *F, int *V) {
    *Din = c->emb + E;
    *F = c->dec_hidden + E;
    *V = c->tgt_vocab;
}

/* dec_own[0] ctx_proj [min(N, AT_CTX_PROJ_ROWS),S,G*Hd] */
static void layout_acts(attend_model *m, at_act_layout *L) {
    size_t N = (size_t)m->cfg.max_batch, S = (size_t)m->cfg.max_src_len;
    size_t GHd = (size_t)m->G * (size_t)m->cfg.dec_hidden;
    m->acts.dec_own[0] = at_act_take(L, (N < AT_CTX_PROJ_ROWS ? N : AT_CTX_PROJ_ROWS) * S * GHd);
}

/* ctx_proj [N,S,G*Hd] = enc_out [N*S,E] W_ih[:, D:]ᵀ (inference at up to
 * AT_CTX_PROJ_ROWS rows); padding rows of enc_out are 0 */
static void begin(attend_model *m, int N, int S) {
    int D = m->cfg.emb, E = m->E, GHd = m->G * m->cfg.dec_hidden;
    st(m)->ctx_proj_on = m->run.infer && N <= AT_CTX_PROJ_ROWS;
    if (st(m)->ctx_proj_on)
        at_model_linear(m, N * S, GHd, E, m->acts.enc_top, E, m->p.dec_wih + D, m->Din, 0, m->acts.dec_own[0], GHd);
}

static void replicate(attend_model *m, int K, int S) {
    const size_t proj = (size_t)S * m->G * m->cfg.dec_hidden; /* ctx_proj per row */
    if (K > AT_CTX_PROJ_ROWS) st(m)->ctx_proj_on = 0;
    if (st(m)->ctx_proj_on)
        for (int k = 1; k < K; k++)
            memcpy(m->acts.dec_own[0] + (size_t)k * proj, m->acts.dec_own[0], proj * sizeof(attend_real));
}

static void step_forward(attend_model *m, int t, int N, int S, const uint8_t *active, attend_real *feat_row,
                         size_t feat_stride) {
    const attend_real *s_prev = m->acts.states + (size_t)t * N * m->cfg.dec_hidden;
    at_dec_attention_forward(m, t, N, S, s_prev); /* query s_{t-1} */
    at_dec_ctx_fed_forward(m, t, N, S, active, feat_row, feat_stride,
                           m->run.infer && st(m)->ctx_proj_on ? m->acts.dec_own[0] : NULL);
}

static void step_backward(attend_model *m, int t, int N, int S, const attend_real *dfeat_t, size_t dfeat_stride,
                          attend_real *dxg) {
    const attend_real *s_prev = m->acts.states + (size_t)t * N * m->cfg.dec_hidden;
    at_dec_ctx_fed_backward(m, t, N, dfeat_t, dfeat_stride, dxg);
    at_dec_attention_backward(m, t, N, S, s_prev, m->acts.ds_prev); /* query s_{t-1} */
}

const at_decoder_ops at_decoder_bahdanau = {
    .name = "bahdanau",
    .attentive = 1,
    AT_VOCAB_OPS,
    .state_size = sizeof(bahdanau_state),
    .dims = dims,
    .layout_params = at_vocab_layout_output,
    .layout_acts = layout_acts,
    .begin = begin,
    .replicate = replicate,
    .step_forward = step_forward,
    .step_backward = step_backward,
    .input_backward = at_dec_ctx_fed_input_backward,
};
