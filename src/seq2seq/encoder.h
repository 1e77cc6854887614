/*
 * encoder.h — the encoder around its kind (encoder.c): the source
 * embeddings and their validity mask, the encoder kind (encoders/), the
 * bridge to the decoder's first state and the attention keys; forward and
 * backward. Not installed.
 *
 * Dimension letters: see state.h.
 */
#ifndef ATTEND_SEQ2SEQ_ENCODER_H
#define ATTEND_SEQ2SEQ_ENCODER_H

#include "seq2seq/state.h"

/* The encoder kind of a configuration (cfg.encoder), NULL when unknown. */
const at_encoder_ops *at_encoder_of(const attend_model_config *c);
/* Its tensors in file order (the kind's, then bridge.weight [Hd,E], bridge.bias [Hd]). */
void at_encoder_layout_params(at_param_layout *L);
/* Its buffers (the kind's), and the rows a beam search replicates. */
void at_encoder_layout_acts(attend_model *m, at_act_layout *L);
/* The encoder forward over src [N,S] / src_len [N] (validated by the caller):
 * source embeddings, validity mask, the kind, the bridge s_0 =
 * tanh(W_br fin_cat + b_br), cstates[0] = 0, the projected keys. */
void at_encoder_forward(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S);
/* The encoder backward from ds0 [N,Hd] (d s_0), acts.dfin [N,E], dkp and
 * denc: the bridge, the keys, the kind, the source embeddings. */
void at_encoder_backward(attend_model *m, const attend_real *ds0, int N, int S);

#endif
