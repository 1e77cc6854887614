/*
 * bahdanau.c — the BAHDANAU decoder kind (Bahdanau et al. 2015): attention
 * with the previous state s_{t-1} as query, the context fed into the cell,
 * features [s_t; c_t]. Inference at few rows reads the context's input
 * projection from per-source-position projections made once (ctx_proj).
 *
 * Dimension letters: see model_internal.h.
 */
#include <string.h>

#include "seq2seq/decoders/decoder.h"

static void dims(const attend_model_config *c, int E, int *Din, int *F) {
    *Din = c->emb + E;
    *F = c->dec_hidden + E;
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
    m->ctx_proj_on = m->infer && N <= AT_CTX_PROJ_ROWS;
    if (m->ctx_proj_on)
        at_model_linear(m, N * S, GHd, E, m->acts.enc_out[m->cfg.enc_layers - 1], E, m->p.dec_wih + D, m->Din, 0,
                        m->acts.dec_own[0], GHd);
}

static void replicate(attend_model *m, int K, int S) {
    const size_t proj = (size_t)S * m->G * m->cfg.dec_hidden; /* ctx_proj per row */
    if (K > AT_CTX_PROJ_ROWS) m->ctx_proj_on = 0;
    if (m->ctx_proj_on)
        for (int k = 1; k < K; k++)
            memcpy(m->acts.dec_own[0] + (size_t)k * proj, m->acts.dec_own[0], proj * sizeof(attend_real));
}

static void step_forward(attend_model *m, int t, int N, int S, const uint8_t *active, attend_real *feat_row,
                         size_t feat_stride) {
    const attend_real *s_prev = m->acts.states + (size_t)t * N * m->cfg.dec_hidden;
    at_dec_attention_forward(m, t, N, S, s_prev); /* query s_{t-1} */
    at_dec_ctx_fed_forward(m, t, N, S, active, feat_row, feat_stride,
                           m->infer && m->ctx_proj_on ? m->acts.dec_own[0] : NULL);
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
    .points = 0,
    .dims = dims,
    .layout_params = NULL,
    .layout_acts = layout_acts,
    .begin = begin,
    .replicate = replicate,
    .reorder = NULL,
    .step_forward = step_forward,
    .step_backward = step_backward,
    .input_backward = at_dec_ctx_fed_input_backward,
};
