/*
 * model.h — the model's own functions (model.c) that decoding, the trainer,
 * the analysis and the model files call: encoding a batch, one decoder step,
 * the teacher-forced forward of a run, the source check. Not installed; the
 * lower rooms (state, the kinds, the extensions) never include it.
 *
 * Dimension letters: see state.h.
 */
#ifndef ATTEND_SEQ2SEQ_MODEL_H
#define ATTEND_SEQ2SEQ_MODEL_H

#include "seq2seq/state.h"

/* Starts a decoding run (greedy, beam): m->run = {infer = 1}; the last
 * forward is no longer differentiable. */
void at_model_infer(attend_model *m);
/* Starts an analysis run (interventions): forced and free-running passes
 * outside training with every step's buffers kept (infer = 0) and decoding's
 * hard choices (scoring = 1), the weight hook hook(user) or none. */
void at_model_analyse(attend_model *m, at_weight_hook_fn hook, void *user);
/* After at_model_analyse: the encoder's self-attention weights edited by
 * hook too (NULL: none), until the next at_model_analyse/at_model_infer. */
void at_model_analyse_self(attend_model *m, at_self_hook_fn hook, void *user);

/* Runs the encoder over src [N,S] / src_len [N] (validated by the caller),
 * filling enc_top, fin_cat, states[0] (the bridge), cstates[0] = 0, kp and
 * the validity mask, then the decoder-input table and the decoder kind's and
 * extensions' per-source preparation. */
void at_model_encode(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S);

/* One decoder step t (0-based) for N rows: y_in [N] are the previous tokens
 * (POINTER: previous positions, -1 = start; src is needed to look them up),
 * active [N] or NULL. Reads states[t], writes states[t+1], ctx[t], weights[t]
 * and the output features into feat_row (row n at feat_row + n*feat_stride).
 * emb_done != 0 means xg_emb[t] is already computed (teacher forcing). */
void at_model_step(attend_model *m, int t, int N, int S, const int32_t *y_in, const int32_t *src,
                   const uint8_t *active, attend_real *feat_row, size_t feat_stride, int emb_done);

/* The teacher-forced forward of batch b under run (its options; scoring:
 * forced scoring's hard choices), keeping the activations for backward. */
attend_status at_model_forward(attend_model *m, const attend_batch *b, const at_run *run, attend_tf_stats *stats,
                               attend_error *err);

/* Validates src [N,S] ids and lengths against the configuration. */
attend_status at_model_check_source(const attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S,
                                    const char *who, attend_error *err);

#endif
