/*
 * luong.c — the LUONG decoder kind (Luong et al. 2015): the cell first, then
 * attention with the new state s_t as query, the attentional state
 * h̃_t = tanh(W_c [c_t; s_t]) as features, fed into the next step's cell
 * (input feeding). Its own tensor: combine.weight W_c [Hd, E+Hd]; its own
 * buffers: h̃ per step (reordered with beam hypotheses), [c_t; s_t] per step,
 * and their backward's.
 *
 * Dimension letters: see state.h.
 */
#include <string.h>

#include "seq2seq/decoders/decoder.h"
#include "seq2seq/linear.h"
#include "core/vmath.h"

#define COMB 0 /* dec_own[COMB]: combine.weight W_c [Hd, E+Hd] */

/* its buffers: dec_own[HTILDE] [T+1,N,Hd] h̃_0 .. h̃_T, [CAT] [T,N,E+Hd] [c_t; s_t],
 * [DHT] [N,Hd] dh̃ from step t+1 (input feeding), [DCAT] [N,E+Hd] */
enum { HTILDE = 0, CAT = 1, DHT = 2, DCAT = 3 };

static void dims(const attend_model_config *c, int E, int *Din, int *F, int *V) {
    (void)E;
    *Din = c->emb + c->dec_hidden;
    *F = c->dec_hidden;
    *V = c->tgt_vocab;
}

static void layout_params(at_param_layout *L) {
    int E = L->m->E, Hd = L->m->cfg.dec_hidden;
    at_param_add(L, L->v ? &L->v->dec_own[COMB] : NULL, "combine.weight", Hd, E + Hd);
    at_vocab_layout_output(L);
}

static void layout_acts(attend_model *m, at_act_layout *L) {
    at_acts *a = &m->acts;
    size_t N = (size_t)m->cfg.max_batch, T = (size_t)m->Tcap, Hd = (size_t)m->cfg.dec_hidden, E = (size_t)m->E;
    a->dec_own[HTILDE] = at_act_take(L, (T + 1) * N * Hd);
    a->dec_own[CAT] = at_act_take(L, T * N * (E + Hd));
    a->dec_own[DHT] = at_act_take(L, N * Hd);
    a->dec_own[DCAT] = at_act_take(L, N * (E + Hd));
    /* beam search: h̃ rows of step t+1 follow their hypotheses */
    at_act_rows(L, a->dec_own[HTILDE], Hd * sizeof(attend_real), 0, AT_ROWS_STEPS);
}

/* h̃_0 = 0 */
static void begin(attend_model *m, int N, int S) {
    (void)S;
    memset(m->acts.dec_own[HTILDE], 0, (size_t)N * m->cfg.dec_hidden * sizeof(attend_real));
}

/* nothing from step T yet */
static void backward_begin(attend_model *m, int N, int S) {
    (void)S;
    memset(m->acts.dec_own[DHT], 0, (size_t)N * m->cfg.dec_hidden * sizeof(attend_real));
}

/* x [n] = tanh(x) (h̃ = tanh(z)). */
AT_KERNEL_VOID(static, tanh_rows, (attend_real *restrict x, size_t n), (x, n)) {
#pragma omp simd
    for (size_t i = 0; i < n; i++) x[i] = at_vtanh(x[i]);
}

static void step_forward(attend_model *m, int t, int N, int S, const uint8_t *active, attend_real *feat_row,
                         size_t feat_stride) {
    at_acts *a = &m->acts;
    int D = m->cfg.emb, Hd = m->cfg.dec_hidden, E = m->E, GHd = m->G * Hd, Din = m->Din;
    attend_real *s_next = a->states + (size_t)(t + 1) * N * Hd;
    attend_real *ctx = a->ctx + (size_t)t * N * E;
    attend_real *ht_prev = a->dec_own[HTILDE] + (size_t)t * N * Hd, *ht_next = ht_prev + (size_t)N * Hd;
    /* input feeding: xg += h̃_{t-1} W_ih[:, D:]ᵀ */
    at_model_linear(m, N, GHd, Hd, ht_prev, Hd, m->p.dec_wih + D, Din, 1, a->xg, GHd);
    at_dec_cell_forward(m, t, N, active);
    at_dec_attention_forward(m, t, N, S, s_next); /* query s_t */
    attend_real *cat = a->dec_own[CAT] + (size_t)t * N * (E + Hd);
    for (int n = 0; n < N; n++) {
        memcpy(cat + (size_t)n * (E + Hd), ctx + (size_t)n * E, E * sizeof(attend_real));
        memcpy(cat + (size_t)n * (E + Hd) + E, s_next + (size_t)n * Hd, Hd * sizeof(attend_real));
    }
    /* h̃_t = tanh([c_t; s_t] W_cᵀ) */
    at_model_linear(m, N, Hd, E + Hd, cat, E + Hd, m->p.dec_own[COMB], E + Hd, 0, ht_next, Hd);
    tanh_rows(ht_next, (size_t)N * Hd);
    for (int n = 0; n < N; n++)
        memcpy(feat_row + n * feat_stride, ht_next + (size_t)n * Hd, Hd * sizeof(attend_real));
}

static void step_backward(attend_model *m, int t, int N, int S, const attend_real *dfeat_t, size_t dfeat_stride,
                          attend_real *dxg) {
    at_acts *a = &m->acts;
    int D = m->cfg.emb, Hd = m->cfg.dec_hidden, E = m->E, GHd = m->G * Hd, Din = m->Din;
    attend_real *s_next = a->states + (size_t)(t + 1) * N * Hd;
    attend_real *ht_next = a->dec_own[HTILDE] + (size_t)(t + 1) * N * Hd;
    const attend_real *cat = a->dec_own[CAT] + (size_t)t * N * (E + Hd);
    attend_real *dht = a->dec_own[DHT], *dcat = a->dec_own[DCAT];
    /* dh̃_t = dfeat + (input feeding from step t+1, in dht) */
    for (int n = 0; n < N; n++) {
        const attend_real *df = dfeat_t + (size_t)n * dfeat_stride;
        for (int i = 0; i < Hd; i++) {
            size_t k = (size_t)n * Hd + i;
            attend_real h = ht_next[k];
            a->dz[k] = (df[i] + dht[k]) * (1 - h * h); /* forward: h̃ = tanh(z) */
        }
    }
    /* forward: z = [c_t; s_t] W_cᵀ */
    at_gemm(1, 0, Hd, E + Hd, N, 1, a->dz, Hd, cat, E + Hd, 1, m->g.dec_own[COMB], E + Hd);
    at_model_linear_dx(m, N, Hd, E + Hd, a->dz, Hd, m->p.dec_own[COMB], E + Hd, 0, dcat, E + Hd);
    for (int n = 0; n < N; n++) {
        memcpy(a->dctx + (size_t)n * E, dcat + (size_t)n * (E + Hd), E * sizeof(attend_real));
        for (int i = 0; i < Hd; i++) a->ds[(size_t)n * Hd + i] += dcat[(size_t)n * (E + Hd) + E + i];
    }
    at_dec_attention_backward(m, t, N, S, s_next, a->ds); /* query s_t */
    at_dec_cell_backward(m, t, N, dxg);
    /* forward: xg += h̃_{t-1} W_ih[:, D:]ᵀ  ⇒  dh̃_{t-1} = dxg W_ih[:, D:] */
    at_model_linear_dx(m, N, GHd, Hd, dxg, GHd, m->p.dec_wih + D, Din, 0, dht, Hd);
}

static void input_backward(attend_model *m, int T, int N) {
    at_acts *a = &m->acts;
    int D = m->cfg.emb, Hd = m->cfg.dec_hidden, GHd = m->G * Hd, Din = m->Din;
    /* forward: xg = [emb; h̃_{t-1}] W_ihᵀ + b_ih */
    at_gemm(1, 0, GHd, Hd, T * N, 1, a->dxg_all, GHd, a->dec_own[HTILDE], Hd, 1, m->g.dec_wih + D, Din);
}

const at_decoder_ops at_decoder_luong = {
    .name = "luong",
    .attentive = 1,
    AT_VOCAB_OPS,
    .dims = dims,
    .layout_params = layout_params,
    .layout_acts = layout_acts,
    .begin = begin,
    .backward_begin = backward_begin,
    .step_forward = step_forward,
    .step_backward = step_backward,
    .input_backward = input_backward,
};
