/*
 * encoder.c — the encoder of the seq2seq model around its kind
 * (encoders/encoder_kind.h): the source embeddings and their validity mask
 * (an extension may transform them: AT_SITE_SRC_EMB), the kind's states, the
 * bridge s_0 = tanh(W_br fin_cat + b_br) and the attention keys; forward and
 * backward.
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <string.h>

#include "seq2seq/encoder.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/encoders/encoder_kind.h"
#include "seq2seq/embed.h"
#include "seq2seq/extension.h"
#include "seq2seq/linear.h"

const at_encoder_ops *at_encoder_of(const attend_model_config *c) {
    return (unsigned)c->encoder < (unsigned)at_encoder_count ? at_encoders[c->encoder] : NULL;
}

int attend_model_encoder_width(const attend_model_config *c) {
    const at_encoder_ops *k = c ? at_encoder_of(c) : NULL;
    return k ? k->width(c) : 0;
}

void at_encoder_layout_params(at_param_layout *L) {
    attend_model *m = L->m;
    int Hd = m->cfg.dec_hidden, E = m->E;
    m->enc->layout_params(L);
    if (m->dec->no_cell) return; /* no recurrent decoder state to start */
    at_param_add(L, L->v ? &L->v->bridge_w : NULL, "bridge.weight", Hd, E);
    at_param_add(L, L->v ? &L->v->bridge_b : NULL, "bridge.bias", Hd, 0);
}

void at_encoder_layout_acts(attend_model *m, at_act_layout *L) {
    at_acts *a = &m->acts;
    m->enc->layout_acts(m, L);
    /* a beam search starts from one source row: its states, summary, keys and mask in every hypothesis */
    at_act_rows(L, a->enc_top, (size_t)m->E * sizeof(attend_real), 1, AT_ROWS_SOURCE);
    at_act_rows(L, a->fin_cat, (size_t)m->E * sizeof(attend_real), 0, AT_ROWS_SOURCE);
    if (m->P > 0) at_act_rows(L, a->kp, (size_t)m->P * sizeof(attend_real), 1, AT_ROWS_SOURCE);
    at_act_rows(L, m->valid, 1, 1, AT_ROWS_SOURCE);
}

void at_encoder_forward(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S) {
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    int D = c->emb, E = m->E, Hd = c->dec_hidden;
    for (int n = 0; n < N; n++)
        for (int j = 0; j < S; j++) {
            int32_t id = j < src_len[n] ? src[(size_t)n * S + j] : ATTEND_PAD;
            memcpy(a->emb_src + ((size_t)n * S + j) * D, m->p.src_emb + (size_t)id * D, D * sizeof(attend_real));
            m->valid[(size_t)n * S + j] = j < src_len[n];
        }
    at_ext_site(m, a->emb_src, N, S, D, 1, AT_SITE_SRC_EMB);
    m->enc->forward(m, src, src_len, N, S);
    if (!m->dec->no_cell) { /* bridge: s_0 = tanh(fin_cat W_brᵀ + b_br) */
        attend_real *s0 = a->states;
        at_model_linear(m, N, Hd, E, a->fin_cat, E, m->p.bridge_w, E, 0, s0, Hd);
        for (int n = 0; n < N; n++)
            for (int i = 0; i < Hd; i++) {
                attend_real *v = s0 + (size_t)n * Hd + i;
                *v = (attend_real)tanh((double)(*v + m->p.bridge_b[i]));
            }
        memset(a->cstates, 0, (size_t)N * Hd * sizeof(attend_real));
    }
    if (m->P > 0) at_model_keys(m, a->kp, a->enc_top, N, S);
}

void at_encoder_backward(attend_model *m, const attend_real *ds0, int N, int S) {
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    int D = c->emb, E = m->E, Hd = c->dec_hidden;
    if (!m->dec->no_cell) { /* bridge: s_0 = tanh(z), z = fin_cat W_brᵀ + b_br */
        for (size_t k = 0; k < (size_t)N * Hd; k++) {
            attend_real s0 = a->states[k];
            a->dz[k] = ds0[k] * (1 - s0 * s0);
        }
        at_gemm(1, 0, Hd, E, N, 1, a->dz, Hd, a->fin_cat, E, 1, m->g.bridge_w, E);
        for (int n = 0; n < N; n++)
            for (int i = 0; i < Hd; i++) m->g.bridge_b[i] += a->dz[(size_t)n * Hd + i];
        at_gemm(0, 0, N, E, Hd, 1, a->dz, Hd, m->p.bridge_w, E, 1, a->dfin, E);
    }
    /* keys: kp = project(encoder outputs) */
    if (m->P > 0) {
        attend_score_params sp = at_model_score_params(&m->p);
        attend_score_grads sg = at_model_score_grads(&m->g);
        at_keys_backward(&m->score, &sp, &sg, a->denc, a->dkp, a->enc_top, N, S);
    }
    if (m->enc->backward(m, N, S)) {
        at_ext_site(m, a->demb, N, S, D, 1, AT_SITE_SRC_EMB); /* forward: x = site(emb) */
        at_embedding_backward(m->g.src_emb, a->demb, m->fwd_src, (size_t)N * S, D);
    }
}
