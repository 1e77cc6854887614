/*
 * decoder.h — the one internal interface of a decoder kind (decoders/<kind>.c)
 * and the helpers the kinds share (common.c). model.c dispatches through
 * m->dec = at_decoders[cfg.decoder] and never names a kind. Not installed.
 *
 * Adding a decoder kind: a new file decoders/<kind>.c defining
 * `const at_decoder_ops at_decoder_<kind>`, one line in registry.c, and the
 * public enum value and name (include/attend/seq2seq.h, model_io.c's names).
 *
 * Dimension letters: see model_internal.h.
 */
#ifndef ATTEND_DECODER_H
#define ATTEND_DECODER_H

#include "seq2seq/model_internal.h"

/* Walks the parameter tensors in file order: counts values, records names
 * and shapes (record), points the fields of v into base (base != NULL). */
typedef struct {
    attend_model *m;
    attend_real *base;
    at_model_tensors *v; /* NULL while counting */
    int record;
    size_t off;
    int count;
} at_param_layout;

/* Appends tensor `name` [d0] (d1 == 0) or [d0,d1]; *slot (slot != NULL)
 * points at it in L->base. */
void at_param_add(at_param_layout *L, attend_real **slot, const char *name, int d0, int d1);

/* Walks the activation buffers: at_act_take returns the next count values
 * of base (NULL while counting) and clears ok on size overflow. */
typedef struct {
    attend_real *base;
    size_t off;
    int ok;
} at_act_layout;

attend_real *at_act_take(at_act_layout *L, size_t count);

struct at_decoder_ops {
    const char *name;
    int attentive; /* attention weights per step: attention.* tensors, projected keys */
    int points;    /* outputs are source positions: no tgt_emb, out layer or target vocabulary */
    /* the decoder cell's input width Din and the output feature width F */
    void (*dims)(const attend_model_config *c, int E, int *Din, int *F);
    /* the kind's own tensors, after the decoder cell's (NULL: none) */
    void (*layout_params)(at_param_layout *L);
    /* the kind's own activation buffers, into m->acts.dec_own (NULL: none) */
    void (*layout_acts)(attend_model *m, at_act_layout *L);
    /* after the encoder and the decoder-input table (NULL: nothing) */
    void (*begin)(attend_model *m, int N, int S);
    /* beam search: row 0's per-source buffers to rows 1..K-1 (NULL: nothing) */
    void (*replicate)(attend_model *m, int K, int S);
    /* beam search: the kind's own state rows of step t+1 follow parent (NULL: nothing) */
    void (*reorder)(attend_model *m, int t, const int *parent, int n, int live);
    /* step t after xg holds the embedding part of the cell input: reads
     * states[t], writes states[t+1], ctx[t], weights[t] (POINTER: log-probs in
     * scores[t]) and features feat_row (row n at + n*feat_stride) */
    void (*step_forward)(attend_model *m, int t, int N, int S, const uint8_t *active, attend_real *feat_row,
                         size_t feat_stride);
    /* backward of step t: from dfeat_t (row n at + n*dfeat_stride) and
     * acts.ds/dcs (d s_t, d c_t) into dxg [N,G*Hd] (zeroed), acts.ds_prev /
     * dcs_prev (d s_{t-1}, zeroed), gradients, dkp, denc, dfin */
    void (*step_backward)(attend_model *m, int t, int N, int S, const attend_real *dfeat_t, size_t dfeat_stride,
                          attend_real *dxg);
    /* after all steps: gradient of W_ih[:, D:] from dxg_all [T,N,G*Hd] (NULL: nothing) */
    void (*input_backward)(attend_model *m, int T, int N);
};

/* registry.c: indexed by attend_decoder_kind; NULL where none is registered */
extern const at_decoder_ops *const at_decoders[];
extern const int at_decoder_count;

/* ---------------------------------------------------------- common.c */

/* The attention tensors of score kind cfg.score (attentive kinds, before the cell's). */
void at_dec_layout_attention(at_param_layout *L);
/* The decoder cell over the parameters, with the weight copies its products of N rows read. */
void at_dec_cell(const attend_model *m, at_cell *cell, int N);
/* s_{t+1} (c_{t+1}) = cell(xg, s_t (c_t)) for N rows, active [N] or NULL. */
void at_dec_cell_forward(attend_model *m, int t, int N, const uint8_t *active);
/* forward: s_{t+1} = cell(xg, s_t): from ds (dcs) into dxg, ds_prev (dcs_prev), W_hh, b_hh. */
void at_dec_cell_backward(attend_model *m, int t, int N, attend_real *dxg);
/* scores[t] and weights[t] = masked (log-)softmax of step t with query q [N,Hd]. */
void at_dec_scores_forward(attend_model *m, int t, int N, int S, const attend_real *q, int log_out);
/* Soft attention of step t with query q [N,Hd]: scores, weights (then the
 * weight hook), ctx[t] = weights · encoder outputs. */
void at_dec_attention_forward(attend_model *m, int t, int N, int S, const attend_real *q);
/* Backward of the scores of step t from acts.dscores: dq [N,Hd] +=, dkp +=. */
void at_dec_scores_backward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *dq);
/* Backward of at_dec_attention_forward from acts.dctx: denc, dkp, dq [N,Hd] +=. */
void at_dec_attention_backward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *dq);
/* Context-fed kinds (BAHDANAU, NONE) once ctx[t] is set: xg += c_t W_ih[:, D:]ᵀ
 * (or α_t ctx_proj when ctx_proj != NULL), the cell, feat = [s_t; c_t]. */
void at_dec_ctx_fed_forward(attend_model *m, int t, int N, int S, const uint8_t *active, attend_real *feat_row,
                            size_t feat_stride, const attend_real *ctx_proj);
/* Its backward down to acts.dctx (d c_t). */
void at_dec_ctx_fed_backward(attend_model *m, int t, int N, const attend_real *dfeat_t, size_t dfeat_stride,
                             attend_real *dxg);
/* Its W_ih[:, D:] gradient over all steps. */
void at_dec_ctx_fed_input_backward(attend_model *m, int T, int N);

/* A stacked decoder (m->Ld > 1, stack.c): layers 1 .. L-1's tensors (after layer 0's). */
void at_dec_stack_layout_params(at_param_layout *L);
/* Its buffers: the lower layers' states, saved values, running gradients. */
void at_dec_stack_layout_acts(attend_model *m, at_act_layout *L);

/* ----------------------------------------------------------- stack.c */

/* at_dec_cell_forward / _backward of every layer (top layer: states, ds). */
void at_dec_stack_forward(attend_model *m, int t, int N, const uint8_t *active);
void at_dec_stack_backward(attend_model *m, int t, int N, attend_real *dxg);
/* Beam search: the lower layers' state rows of step t+1 follow parent. */
void at_dec_stack_reorder(attend_model *m, int t, const int *parent, int n, int live);

#endif
