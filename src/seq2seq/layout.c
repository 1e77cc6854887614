/*
 * layout.c — where everything of a model is: the parameter tensors in their
 * file order (docs/FORMAT.md) and their initialisation, and the activation
 * and id arenas: the buffers every model has, then the encoder kind's, the
 * decoder kind's and the extensions' (each lays out its own).
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <string.h>

#include "seq2seq/layout.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/encoder.h"
#include "seq2seq/extension.h"

size_t at_layout_params(attend_model *m, attend_real *base, at_model_tensors *v, int which, int record) {
    const attend_model_config *c = &m->cfg;
    const at_decoder_ops *dec = m->dec;
    at_param_layout L = {m, base, base ? v : NULL, which, record, 0, 0};
    int D = c->emb, Hd = c->dec_hidden, G = m->G;
    double bound = 1.0 / sqrt((double)Hd); /* the decoder cell: U(±1/sqrt(hidden)) */
    at_param_add_init(&L, L.v ? &L.v->src_emb : NULL, "src_emb.weight", c->src_vocab, D, AT_INIT_EMBEDDING, 0);
    if (dec->layout_input) dec->layout_input(&L);
    at_encoder_layout_params(&L);
    if (dec->attentive) at_dec_layout_attention(&L);
    if (!dec->no_cell) {
        at_param_add_init(&L, L.v ? &L.v->dec_wih : NULL, "decoder.weight_ih", G * Hd, m->Din, AT_INIT_UNIFORM, bound);
        at_param_add_init(&L, L.v ? &L.v->dec_whh : NULL, "decoder.weight_hh", G * Hd, Hd, AT_INIT_UNIFORM, bound);
        at_param_add_init(&L, L.v ? &L.v->dec_bih : NULL, "decoder.bias_ih", G * Hd, 0, AT_INIT_UNIFORM, bound);
        at_param_add_init(&L, L.v ? &L.v->dec_bhh : NULL, "decoder.bias_hh", G * Hd, 0, AT_INIT_UNIFORM, bound);
        at_dec_stack_layout_params(&L); /* layers 1 .. dec_layers-1 */
    }
    if (dec->layout_params) dec->layout_params(&L);
    at_ext_layout_params(&L, AT_PARAMS_OUTPUT);
    if (record) m->ntensors = L.count;
    return L.off;
}

/* PyTorch's default initialisation as each tensor's description says:
 * Embedding N(0,1) with the PAD row zero; Linear U(±1/sqrt(fan_in)) for
 * weight and bias; RNN weights and biases and the other uniform ones U(±v). */
void at_init_params(attend_model *m, uint64_t seed) {
    attend_rng rng;
    attend_rng_seed(&rng, seed);
    for (int i = 0; i < m->ntensors; i++) {
        at_tensor_desc *td = &m->desc[i];
        attend_real *x = m->params + td->offset;
        double bound = td->init_v;
        switch (td->init) {
        case AT_INIT_EMBEDDING:
            for (size_t j = 0; j < td->numel; j += 2) { /* Box–Muller pairs */
                double u1 = attend_rng_uniform(&rng), u2 = attend_rng_uniform(&rng);
                double r = sqrt(-2.0 * log(1.0 - u1));
                x[j] = (attend_real)(r * cos(6.283185307179586 * u2));
                if (j + 1 < td->numel) x[j + 1] = (attend_real)(r * sin(6.283185307179586 * u2));
            }
            for (int d = 0; d < td->shape[1]; d++) x[(size_t)ATTEND_PAD * td->shape[1] + d] = 0;
            continue;
        case AT_INIT_CONST:
            for (size_t j = 0; j < td->numel; j++) x[j] = (attend_real)td->init_v;
            continue;
        case AT_INIT_LINEAR: {
            /* fan_in is the weight's second dim; a bias uses its weight's */
            int fan_in = td->ndim == 2 ? (int)td->shape[1] : (int)m->desc[i - 1].shape[1];
            bound = 1.0 / sqrt((double)fan_in);
            break;
        }
        case AT_INIT_UNIFORM: break;
        }
        for (size_t j = 0; j < td->numel; j++) x[j] = (attend_real)((2.0 * attend_rng_uniform(&rng) - 1.0) * bound);
    }
}

int at_layout_acts(attend_model *m, attend_real *base, int32_t *ibase, size_t *total, size_t *itotal) {
    const attend_model_config *c = &m->cfg;
    size_t N = (size_t)c->max_batch, S = (size_t)c->max_src_len, T = (size_t)m->Tcap;
    size_t D = (size_t)c->emb, E = (size_t)m->E, Hd = (size_t)c->dec_hidden;
    size_t GHd = (size_t)m->G * Hd, P = (size_t)(m->P > 0 ? m->P : 1), F = (size_t)m->F, V = (size_t)m->V;
    size_t step_scratch = at_cell_scratch_size(c->cell, c->max_batch, c->dec_hidden);
    size_t cell_w = (size_t)at_cell_saved_width(c->cell, c->dec_hidden);
    size_t sc_saved = m->sc_saved_stride;
    at_acts *a = &m->acts;
    at_act_layout L = {m, base, 0, ibase, 0, 1};
    m->nrows = 0;
#define BUF(field, count)                                                   \
    do {                                                                    \
        attend_real *p_ = at_act_take(&L, (count));                         \
        if (base) a->field = p_;                                            \
    } while (0)
    /* every product below is of configuration values bounded by the config
     * check, so it fits size_t on 64-bit; at_add_size guards the sums */
    BUF(emb_src, N * S * D);
    BUF(fin_cat, N * E);
    BUF(kp, N * S * P);
    at_encoder_layout_acts(m, &L);
    BUF(states, (T + 1) * N * Hd);
    BUF(cstates, (T + 1) * N * Hd);
    /* beam search: s_{t+1} (and c_{t+1}) rows follow their hypotheses */
    at_act_rows(&L, a->states, Hd * sizeof(attend_real), 0, AT_ROWS_STEPS);
    if (c->cell == ATTEND_CELL_LSTM) at_act_rows(&L, a->cstates, Hd * sizeof(attend_real), 0, AT_ROWS_STEPS);
    BUF(ctx, T * N * E);
    BUF(weights, T * N * S);
    BUF(scores, T * N * S);
    BUF(sc_saved, T * (sc_saved > 0 ? sc_saved : 1));
    BUF(dec_saved, T * N * cell_w);
    BUF(emb_tgt, T * N * D);
    BUF(xg_emb, T * N * GHd);
    BUF(xg, N * GHd);
    BUF(step_scratch, step_scratch);
    BUF(feat, N * T * F);
    BUF(logp, N * T * V);
    /* backward */
    BUF(dfeat, N * T * F);
    BUF(dxg_all, T * N * GHd);
    BUF(ds, N * Hd);
    BUF(ds_prev, N * Hd);
    BUF(dcs, N * Hd);
    BUF(dcs_prev, N * Hd);
    BUF(dctx, N * E);
    BUF(dweights, N * S);
    BUF(dscores, N * S);
    BUF(dkp, N * S * P);
    BUF(denc, N * S * E);
    BUF(dfin, N * E);
    BUF(demb, (T * N > N * S ? T * N : N * S) * D);
    BUF(dz, N * Hd);
    /* decoding */
    BUF(step_logits, N * V);
    BUF(step_feat, N * F);
    BUF(row_tmp, N * Hd);
    /* the decoder-input projection table */
    size_t tab = m->dec_tab_cap ? V * GHd : 0;
    BUF(dec_tab, tab);
    BUF(dtab, tab);
#undef BUF
    /* the decoder kind's own buffers, a stacked decoder's lower layers, the extensions' */
    if (m->dec->layout_acts) m->dec->layout_acts(m, &L);
    at_dec_stack_layout_acts(m, &L);
    at_ext_layout_acts(m, &L);
    /* the ids every model keeps: the last forward's batch [N,S] [N] [T,N] [N,T] [N], forced scoring's row */
    int32_t *ids = at_act_ints(&L, N * S + N + 2 * N * T + N + (S + 1 + 3 * T + 1));
    if (ibase) {
        m->fwd_src = ids;
        m->fwd_src_len = m->fwd_src + N * S;
        m->fwd_tgt_in = m->fwd_src_len + N;
        m->fwd_tgt_out = m->fwd_tgt_in + N * T;
        m->fwd_tgt_len = m->fwd_tgt_out + N * T;
        m->score_ids = m->fwd_tgt_len + N;
    }
    if (!L.ok || L.off > SIZE_MAX / sizeof(attend_real) || L.ioff > SIZE_MAX / sizeof(int32_t)) return 0;
    *total = L.off;
    *itotal = L.ioff;
    return 1;
}
