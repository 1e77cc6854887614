/*
 * none.c — the NONE decoder kind (no attention): the context is the
 * encoder's final states [h_fwd; h_bwd] at every step, fed into the cell as
 * BAHDANAU's; features [s_t; c]. The baseline of the attention experiments.
 *
 * Dimension letters: see state.h.
 */
#include <string.h>

#include "seq2seq/decoders/decoder.h"

static void dims(const attend_model_config *c, int E, int *Din, int *F, int *V) {
    *Din = c->emb + E;
    *F = c->dec_hidden + E;
    *V = c->tgt_vocab;
}

static void step_forward(attend_model *m, int t, int N, int S, const uint8_t *active, attend_real *feat_row,
                         size_t feat_stride) {
    attend_real *ctx = m->acts.ctx + (size_t)t * N * m->E;
    memcpy(ctx, m->acts.fin_cat, (size_t)N * m->E * sizeof *ctx); /* c_t = fin_cat */
    at_dec_ctx_fed_forward(m, t, N, S, active, feat_row, feat_stride, NULL);
}

static void step_backward(attend_model *m, int t, int N, int S, const attend_real *dfeat_t, size_t dfeat_stride,
                          attend_real *dxg) {
    at_acts *a = &m->acts;
    (void)S;
    at_dec_ctx_fed_backward(m, t, N, dfeat_t, dfeat_stride, dxg);
    /* forward: c_t = fin_cat */
    for (size_t i = 0; i < (size_t)N * m->E; i++) a->dfin[i] += a->dctx[i];
}

const at_decoder_ops at_decoder_none = {
    .name = "none",
    .attentive = 0,
    AT_VOCAB_OPS,
    .dims = dims,
    .layout_params = at_vocab_layout_output,
    .step_forward = step_forward,
    .step_backward = step_backward,
    .input_backward = at_dec_ctx_fed_input_backward,
};
