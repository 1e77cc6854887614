/*
 * copy.h — the pointer-generator output (See et al. 2017, "Get To The Point"),
 * config flag `copy`, for the BAHDANAU and LUONG decoders. Not installed.
 *
 *   p_gen = σ(w_cᵀ c_t + w_sᵀ s_t + w_xᵀ x_t + b)
 *   P(w)  = p_gen P_vocab(w) + (1 − p_gen) Σ_{j: ext_j = w} α_tj
 *
 * c_t the context of step t, s_t the decoder state after step t's cell
 * (states[t+1]: BAHDANAU's and LUONG's s_t alike; LUONG's attentional state
 * h̃_t is not used), x_t the decoder input embedding (tgt_emb of y_{t-1}).
 * The extended vocabulary has Vt + S ids: ext_j [N,S] is the target id of
 * source position j when the target vocabulary has its token (through the
 * model's source→target map, m->copy_map [Vs]), else Vt + j', j' the first
 * position of the row holding the same source id (an <unk> position: j'
 * = j). A copied id fed back as the next input reads <unk>'s embedding.
 *
 * Dimension letters: see model_internal.h.
 */
#ifndef ATTEND_COPY_H
#define ATTEND_COPY_H

#include "seq2seq/model_internal.h"

/* Its tensors copy.w_c [E], copy.w_s [Hd], copy.w_x [D], copy.b [1] (after
 * out.bias) and buffers copy_pgen, copy_r, copy_da, copy_du [T,N], copy_lpy
 * [N,T], copy_dist [N,Vt+S] are laid out by model.c (layout_tensors,
 * layout_acts), so this file calls nothing of decoders/. */
/* Ints: the map [Vs], ext [N,S], best [N,T] (counted for the id arena). */
size_t at_copy_ints(const attend_model_config *c, int Tcap);
void at_copy_place_ints(attend_model *m, int32_t *base);
/* The default map: id -> id for 4 <= id < min(Vs,Vt) (a shared vocabulary), else -1. */
void at_copy_default_map(attend_model *m);

/* The extended id of source position j of row src [S] (len valid positions). */
int32_t at_copy_ext_of(const attend_model *m, const int32_t *src, int len, int j);
/* ext [N,S] of a batch (at_model_encode). */
void at_copy_begin(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S);
/* Beam search: row 0's ext to rows 1..K-1. */
void at_copy_replicate(attend_model *m, int K, int S);
/* The input id a step reads for a previous output y (a copied id: <unk>). */
static inline int32_t at_copy_input_id(const attend_model *m, int32_t y) {
    return m->cfg.copy && y >= m->cfg.tgt_vocab ? ATTEND_UNK : y;
}

/* Teacher-forced: after logp [N,T,Vt] holds log P_vocab, every counted step's
 * p_gen, log P(y) (lpy), the argmax of the extended distribution (best
 * [N,T]) and what backward needs (r = p_gen P_vocab(y) / P(y), da =
 * −(1 − p_gen)/P(y), du = −(P_vocab(y) − C(y))/P(y) · p_gen(1 − p_gen)). */
void at_copy_forward(attend_model *m, const int32_t *tgt_out, const int32_t *tgt_len, int N, int S, int T);
/* Backward of step t's p_gen: acts.ds += du w_s and the w_*, b, tgt_emb
 * gradients (+=), scaled by inv = 1/count. */
void at_copy_step_backward(attend_model *m, int t, int N, attend_real inv);
/* Inside the attention backward of step t: acts.dctx += du w_c and
 * acts.dweights += da at the positions whose ext is y (scaled by inv). */
void at_copy_attention_backward(attend_model *m, int t, int N, int S);

/* Inference, after step t's logits [N,Vt] are in step_logits: the extended
 * log-distribution [N,Vt+S] (−inf where zero) in acts.copy_dist. */
const attend_real *at_copy_step_dist(attend_model *m, int t, int N, int S);

#endif
