/*
 * common.h — what the non-recurrent encoder kinds (transformer.c, conv.c)
 * share (common.c): positions added to the source embeddings (sinusoidal,
 * learned, none) and the summary fin_cat as the mean of the valid states,
 * forward and backward. Not installed.
 *
 * Dimension letters: see state.h; D the kind's width (= E = emb).
 */
#ifndef ATTEND_ENCODERS_COMMON_H
#define ATTEND_ENCODERS_COMMON_H

#include "seq2seq/state.h"

/* The configuration's positions and max_positions (learned: >= max_src_len; else 0). */
attend_status at_enc_positions_check(const attend_model_config *c, attend_error *err);
/* PE [S,D]: PE[j,2i] = sin(j / 10000^(2i/D)), PE[j,2i+1] = cos(j / 10000^(2i/D))
 * (also the transformer decoder's, decoders/transformer.c). */
void at_sinusoid_table(attend_real *pe, int S, int D);
/* The positions tensor encoder.pos_emb [max_positions, D] (learned positions
 * only; pos as at_param_slot's [2] pointers: params, grads). */
void at_enc_positions_layout(at_param_layout *L, attend_real **pos);
/* x0 [N,S,D] = emb [N,S,D] + PE[j] (sinusoidal: from the table pe
 * [max_src_len, D], made on first use; *pe_ready marks it) or pos[0][j]
 * (learned), or emb alone (none). */
void at_enc_positions_forward(const attend_model *m, attend_real *x0, const attend_real *emb, attend_real *pe,
                              int *pe_ready, attend_real *const *pos, int N, int S);
/* learned positions: pos[1] [max_positions, D] += Σ_n dx0[n] (forward: x0 = emb + pos) */
void at_enc_positions_backward(const attend_model *m, attend_real *const *pos, const attend_real *dx0, int N, int S);
/* out [N,S,D]: padding rows (j >= src_len[n]) set to 0; fin [N,D] = the mean
 * of the valid rows. */
void at_enc_mean_forward(attend_real *out, attend_real *fin, const int32_t *src_len, int N, int S, int D);
/* dout [N,S,D] = denc + dfin / src_len at valid rows, 0 at padding rows
 * (forward: at_enc_mean_forward). */
void at_enc_mean_backward(attend_real *dout, const attend_real *denc, const attend_real *dfin, const int32_t *src_len,
                          int N, int S, int D);

#endif
