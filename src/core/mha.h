/*
 * mha.h — the unchecked forms of the multi-head attention kernels (mha.c).
 * Each public attend_x validates its arguments (config, parameters, shapes,
 * workspace size) and calls at_x; library code that has validated once calls
 * at_x directly. Not installed.
 *
 * Dimension letters as in mha.c: N batch, T query positions, S source
 * positions, D embed width (the config field E), H heads, Kd/Vd key/value
 * input widths (kdim/vdim, 0 meaning D). workspace holds at least
 * attend_mha_workspace_size(cfg, N, T, S) values. Backward forms accumulate
 * (+=) into gradients.
 */
#ifndef ATTEND_CORE_MHA_H
#define ATTEND_CORE_MHA_H

#include "internal.h"

/* attend_mha_forward unchecked: out [N,T,D], weights [N,H,T,S] ([N,T,S] when
 * average_weights) or NULL, from q [N,T,D], k [N,S,Kd], v [N,S,Vd]. Returns
 * only the masked softmax's data check (a non-finite score, a row with every
 * position masked), named after who, which needs the scores it computes. */
attend_status at_mha_forward(const attend_mha_config *cfg, const attend_mha_params *p, attend_real *out,
                             attend_real *weights, int average_weights, const attend_real *q, const attend_real *k,
                             const attend_real *v, const uint8_t *valid, const uint8_t *allowed, int causal, int N,
                             int T, int S, attend_real *workspace, const char *who, attend_error *err);
/* attend_mha_backward unchecked: dq [N,T,D], dk [N,S,Kd], dv [N,S,Vd] (each
 * or NULL) and g (or NULL) += from dout [N,T,D]; workspace is the forward's. */
void at_mha_backward(const attend_mha_config *cfg, const attend_mha_params *p, const attend_mha_grads *g,
                     attend_real *dq, attend_real *dk, attend_real *dv, const attend_real *dout, const attend_real *q,
                     const attend_real *k, const attend_real *v, int N, int T, int S, attend_real *workspace);
/* attend_self_attention_forward unchecked (Kd = Vd = D): at_mha_forward with
 * q = k = v = x [N,T,D], valid [N,T] or NULL. */
attend_status at_self_attention_forward(const attend_mha_config *cfg, const attend_mha_params *p, attend_real *out,
                                        attend_real *weights, int average_weights, const attend_real *x,
                                        const uint8_t *valid, int causal, int N, int T, attend_real *workspace,
                                        const char *who, attend_error *err);
/* The attention weights P [N,H,T,S] a forward with these dimensions left in
 * workspace (rows of padded queries as the forward left them). */
const attend_real *at_mha_weights(const attend_mha_config *cfg, int N, int T, int S, const attend_real *workspace);
/* An edit of the weights P [N,H,T,S] (valid [N,S] the key padding, or NULL)
 * after the masked softmax and before they weight the values: an analysis
 * hook (the interventions on a transformer encoder's self-attention). The
 * weights it leaves stay in the workspace (at_mha_weights reads them); a
 * backward through them is not a gradient of the edit. */
typedef struct {
    void (*fn)(void *user, attend_real *P, const uint8_t *valid, int N, int H, int T, int S);
    void *user;
} at_mha_hook;
/* Self-attention inside the model (no weights out): at_self_attention_forward
 * without the masked softmax's data pass, so nothing is refused: every row
 * must keep a position (valid has one per row), and a non-finite score
 * propagates into out as the recurrent cells' NaNs do (the trainer's
 * non-finite step check sees it). hook: NULL, or an edit of the weights. */
void at_self_attention_forward_model(const attend_mha_config *cfg, const attend_mha_params *p, attend_real *out,
                                     const attend_real *x, const uint8_t *valid, int causal, int N, int T,
                                     attend_real *workspace, const at_mha_hook *hook);
/* attend_self_attention_backward unchecked: dx [N,T,D] += from dout [N,T,D]. */
void at_self_attention_backward(const attend_mha_config *cfg, const attend_mha_params *p, const attend_mha_grads *g,
                                attend_real *dx, const attend_real *dout, const attend_real *x, int N, int T,
                                attend_real *workspace);

#endif
