/*
 * common.c — what the decoder kinds share: the attention tensors, the decoder
 * cell's step, one step of attention forward and backward (with the
 * extensions' hooks on the scores, the weights and their gradients), and the
 * context-fed step of BAHDANAU and NONE.
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <string.h>

#include "seq2seq/decoders/decoder.h"
#include "seq2seq/extension.h"
#include "seq2seq/linear.h"

/* ---------------------------------------------------------------- layout */

void at_dec_layout_attention(at_param_layout *L) {
    const attend_model_config *c = &L->m->cfg;
    at_model_tensors *v = L->v;
    int E = L->m->E, Hd = c->dec_hidden;
    if (c->score == ATTEND_SCORE_GENERAL) at_param_add(L, v ? &v->attn_W : NULL, "attention.W", Hd, E);
    if (c->score == ATTEND_SCORE_ADDITIVE) {
        at_param_add(L, v ? &v->attn_Wq : NULL, "attention.Wq", c->attn, Hd);
        at_param_add(L, v ? &v->attn_Wk : NULL, "attention.Wk", c->attn, E);
        at_param_add_init(L, v ? &v->attn_b : NULL, "attention.b", c->attn, 0, AT_INIT_UNIFORM, 1.0 / sqrt((double)c->attn));
        at_param_add_init(L, v ? &v->attn_v : NULL, "attention.v", c->attn, 0, AT_INIT_UNIFORM, 1.0 / sqrt((double)c->attn));
    }
    at_ext_layout_params(L, AT_PARAMS_ATTENTION);
}

/* a stacked decoder's (stack.c) upper layers and lower-layer buffers */
void at_dec_stack_layout_params(at_param_layout *L) {
    attend_model *m = L->m;
    at_model_tensors *v = L->v;
    int Hd = m->cfg.dec_hidden, G = m->G;
    char nm[AT_NAME_MAX];
    double bound = 1.0 / sqrt((double)Hd); /* nn.GRU / nn.LSTM: U(±1/sqrt(hidden)) */
    for (int l = 1; l < m->Ld; l++) {
        snprintf(nm, sizeof nm, "decoder.weight_ih_l%d", l);
        at_param_add_init(L, v ? &v->dec_up_wih[l] : NULL, nm, G * Hd, Hd, AT_INIT_UNIFORM, bound);
        snprintf(nm, sizeof nm, "decoder.weight_hh_l%d", l);
        at_param_add_init(L, v ? &v->dec_up_whh[l] : NULL, nm, G * Hd, Hd, AT_INIT_UNIFORM, bound);
        snprintf(nm, sizeof nm, "decoder.bias_ih_l%d", l);
        at_param_add_init(L, v ? &v->dec_up_bih[l] : NULL, nm, G * Hd, 0, AT_INIT_UNIFORM, bound);
        snprintf(nm, sizeof nm, "decoder.bias_hh_l%d", l);
        at_param_add_init(L, v ? &v->dec_up_bhh[l] : NULL, nm, G * Hd, 0, AT_INIT_UNIFORM, bound);
    }
}

void at_dec_stack_layout_acts(attend_model *m, at_act_layout *L) {
    at_acts *a = &m->acts;
    size_t N = (size_t)m->cfg.max_batch, T = (size_t)m->Tcap, Hd = (size_t)m->cfg.dec_hidden;
    size_t GHd = (size_t)m->G * Hd, cell_w = (size_t)at_cell_saved_width(m->cfg.cell, m->cfg.dec_hidden);
    int lstm = m->cfg.cell == ATTEND_CELL_LSTM;
    if (m->Ld < 2) return;
    for (int l = 0; l < m->Ld - 1; l++) {
        a->lstates[l] = at_act_take(L, (T + 1) * N * Hd);
        a->lcstates[l] = at_act_take(L, lstm ? (T + 1) * N * Hd : 0);
        /* beam search: the lower layers' state rows of step t+1 follow their hypotheses */
        at_act_rows(L, a->lstates[l], Hd * sizeof(attend_real), 0, AT_ROWS_STEPS);
        if (lstm) at_act_rows(L, a->lcstates[l], Hd * sizeof(attend_real), 0, AT_ROWS_STEPS);
        a->lsaved[l] = at_act_take(L, T * N * cell_w);
        a->lds[l] = at_act_take(L, N * Hd);
        a->ldcs[l] = at_act_take(L, N * Hd);
    }
    a->lds_prev = at_act_take(L, N * Hd);
    a->ldcs_prev = at_act_take(L, N * Hd);
    a->xg_up = at_act_take(L, N * GHd);
    a->dxg_up = at_act_take(L, N * GHd);
}

/* ------------------------------------------------------------------ cell */

void at_dec_cell(const attend_model *m, at_cell *cell, int N) {
    cell->kind = m->cfg.cell;
    cell->I = m->Din;
    cell->H = m->cfg.dec_hidden;
    cell->W_ih = m->p.dec_wih;
    cell->W_hh = m->p.dec_whh;
    cell->b_ih = m->p.dec_bih;
    cell->b_hh = m->p.dec_bhh;
    at_model_cell_copies(m, cell, 0, N); /* the input projection is the step's own (xg) */
}

void at_dec_cell_forward(attend_model *m, int t, int N, const uint8_t *active) {
    if (m->Ld > 1) {
        at_dec_stack_forward(m, t, N, active);
        return;
    }
    at_acts *a = &m->acts;
    int Hd = m->cfg.dec_hidden, lstm = m->cfg.cell == ATTEND_CELL_LSTM;
    attend_real *s_prev = a->states + (size_t)t * N * Hd, *s_next = s_prev + (size_t)N * Hd;
    attend_real *c_prev = a->cstates + (size_t)t * N * Hd, *c_next = c_prev + (size_t)N * Hd;
    size_t cell_w = (size_t)at_cell_saved_width(m->cfg.cell, Hd);
    attend_real *saved = a->dec_saved + (size_t)(m->run.infer ? 0 : t) * N * cell_w;
    at_cell cell;
    at_dec_cell(m, &cell, N);
    at_cell_step_forward(&cell, s_next, lstm ? c_next : NULL, saved, a->xg, s_prev, lstm ? c_prev : NULL, active, N,
                         a->step_scratch);
}

void at_dec_cell_backward(attend_model *m, int t, int N, attend_real *dxg) {
    if (m->Ld > 1) {
        at_dec_stack_backward(m, t, N, dxg);
        return;
    }
    at_acts *a = &m->acts;
    int Hd = m->cfg.dec_hidden, lstm = m->cfg.cell == ATTEND_CELL_LSTM;
    attend_real *s_prev = a->states + (size_t)t * N * Hd;
    attend_real *c_prev = a->cstates + (size_t)t * N * Hd;
    size_t cell_w = (size_t)at_cell_saved_width(m->cfg.cell, Hd);
    at_cell cell;
    at_dec_cell(m, &cell, N);
    at_cell_grads cg_hh = {NULL, m->g.dec_whh, NULL, m->g.dec_bhh}; /* W_ih, b_ih: one GEMM after the loop */
    at_cell_step_backward(&cell, &cg_hh, dxg, a->ds_prev, lstm ? a->dcs_prev : NULL, a->ds, lstm ? a->dcs : NULL,
                          a->dec_saved + (size_t)t * N * cell_w, s_prev, lstm ? c_prev : NULL,
                          m->active + (size_t)t * N, N, a->step_scratch);
}

/* ------------------------------------------------------------- attention */

void at_dec_scores_forward(attend_model *m, int t, int N, int S, const attend_real *q, int log_out) {
    at_acts *a = &m->acts;
    attend_score_params sp = at_model_score_params(&m->p);
    size_t saved_stride = m->sc_saved_stride;
    attend_real *scores = a->scores + (size_t)t * N * S, *w = a->weights + (size_t)t * N * S;
    attend_real *saved = a->sc_saved + (size_t)(m->run.infer ? 0 : t) * (saved_stride ? saved_stride : 1);
    if (at_ext_scores(m, t, N, S, q, scores, saved)) {
        /* an extension's score */
    } else if (m->score.kind == ATTEND_SCORE_ADDITIVE && m->run.infer) { /* decoding: the tanh values are not kept */
        const at_score_packs wq = at_model_score_packs(m, N);
        at_additive_scores(&m->score, &sp, scores, saved, q, a->kp, N, 1, S, 0, &wq);
    } else {
        const at_score_packs wq = at_model_score_packs(m, N);
        at_scores_forward(&m->score, &sp, scores, saved, q, a->kp, N, 1, S, &wq);
    }
    /* rows always keep their valid positions (src_len >= 1 was checked);
     * the weights by the masked softmax (log_out: POINTER's log-probabilities)
     * unless an extension makes them */
    if (!log_out && at_ext_weights(m, t, N, S)) return;
    at_masked_softmax_forward(w, scores, m->valid, NULL, 0, N, 1, S, 1, log_out);
}

void at_dec_attention_forward(attend_model *m, int t, int N, int S, const attend_real *q) {
    at_acts *a = &m->acts;
    attend_real *w = a->weights + (size_t)t * N * S;
    at_dec_scores_forward(m, t, N, S, q, 0);
    if (m->run.weight_hook) m->run.weight_hook(m->run.weight_hook_user, w, m->valid, N, S);
    at_ext_weights_after(m, t, N, S); /* the weights read, after any edit */
    at_context_forward(a->ctx + (size_t)t * N * m->E, w, a->enc_top, N, 1, S, m->E);
}

void at_dec_scores_backward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *dq) {
    at_acts *a = &m->acts;
    attend_score_params sp = at_model_score_params(&m->p);
    attend_score_grads sg = at_model_score_grads(&m->g);
    size_t saved_stride = m->sc_saved_stride;
    attend_real *saved = a->sc_saved + (size_t)t * (saved_stride ? saved_stride : 1);
    if (!at_ext_scores_backward(m, t, N, S, q, dq, saved)) {
        const at_score_packs wq = at_model_score_packs(m, N);
        at_scores_backward(&m->score, &sp, &sg, dq, a->dkp, a->dscores, saved, q, a->kp, N, 1, S, &wq);
    }
}

void at_dec_attention_backward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *dq) {
    at_acts *a = &m->acts;
    const attend_real *w = a->weights + (size_t)t * N * S;
    /* forward: ctx = w V (V = encoder outputs), w = masked normalizer(scores) */
    memset(a->dweights, 0, (size_t)N * S * sizeof(attend_real));
    at_ext_context_backward(m, t, N, S); /* extensions reading c_t or α_t before the context's gradient */
    at_context_backward(a->dweights, a->denc, a->dctx, w, a->enc_top, N, 1, S, m->E);
    at_ext_weights_grad(m, t, N, S); /* extensions' gradients of α_t (later steps' sums, loss terms) */
    memset(a->dscores, 0, (size_t)N * S * sizeof(attend_real));
    if (!at_ext_weights_backward(m, t, N, S)) at_softmax_backward(a->dscores, a->dweights, w, (size_t)N, S);
    at_dec_scores_backward(m, t, N, S, q, dq);
}

/* ------------------------------------------------ context-fed step (BAHDANAU, NONE) */

void at_dec_ctx_fed_forward(attend_model *m, int t, int N, int S, const uint8_t *active, attend_real *feat_row,
                            size_t feat_stride, const attend_real *ctx_proj) {
    at_acts *a = &m->acts;
    int D = m->cfg.emb, Hd = m->cfg.dec_hidden, E = m->E, GHd = m->G * Hd, Din = m->Din;
    attend_real *s_next = a->states + (size_t)(t + 1) * N * Hd;
    attend_real *ctx = a->ctx + (size_t)t * N * E;
    if (ctx_proj) /* xg[n] += α_t[n] [1,S] ctx_proj[n] [S,G*Hd] */
        at_gemm_batched(N, 0, 0, 1, GHd, S, 1, a->weights + (size_t)t * N * S, S, (size_t)S, ctx_proj, GHd,
                        (size_t)S * GHd, 1, a->xg, GHd, (size_t)GHd);
    else /* xg += c_t W_ih[:, D:]ᵀ */
        at_model_linear(m, N, GHd, E, ctx, E, m->p.dec_wih + D, Din, 1, a->xg, GHd);
    at_dec_cell_forward(m, t, N, active);
    for (int n = 0; n < N; n++) { /* feat = [s_t; c_t] */
        memcpy(feat_row + n * feat_stride, s_next + (size_t)n * Hd, Hd * sizeof(attend_real));
        memcpy(feat_row + n * feat_stride + Hd, ctx + (size_t)n * E, E * sizeof(attend_real));
    }
}

void at_dec_ctx_fed_backward(attend_model *m, int t, int N, const attend_real *dfeat_t, size_t dfeat_stride,
                             attend_real *dxg) {
    at_acts *a = &m->acts;
    int D = m->cfg.emb, Hd = m->cfg.dec_hidden, E = m->E, GHd = m->G * Hd, Din = m->Din;
    (void)t;
    /* forward: feat = [s_t; c_t] */
    for (int n = 0; n < N; n++) {
        const attend_real *df = dfeat_t + (size_t)n * dfeat_stride;
        for (int i = 0; i < Hd; i++) a->ds[(size_t)n * Hd + i] += df[i];
        memcpy(a->dctx + (size_t)n * E, df + Hd, E * sizeof(attend_real));
    }
    /* forward: s_t = cell(xg, s_{t-1}) */
    at_dec_cell_backward(m, t, N, dxg);
    /* forward: xg += c_t W_ih[:, D:]ᵀ */
    at_model_linear_dx(m, N, GHd, E, dxg, GHd, m->p.dec_wih + D, Din, 1, a->dctx, E);
}

void at_dec_ctx_fed_input_backward(attend_model *m, int T, int N) {
    at_acts *a = &m->acts;
    int D = m->cfg.emb, E = m->E, GHd = m->G * m->cfg.dec_hidden, Din = m->Din;
    /* forward: xg = [emb; c_t] W_ihᵀ + b_ih */
    at_gemm(1, 0, GHd, E, T * N, 1, a->dxg_all, GHd, a->ctx, E, 1, m->g.dec_wih + D, Din);
}
