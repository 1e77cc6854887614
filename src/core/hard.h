/*
 * hard.h — the unchecked forms of the hard-attention and pointer kernels
 * (hard.c). Each public attend_x validates its arguments (and, for these
 * kernels, the data the arguments point at: NaN weights, index ranges,
 * masked targets) and calls at_x; library code that has validated once calls
 * at_x directly. Not installed.
 *
 * Dimension letters as in hard.c: N batch, T query positions, S source
 * positions, Dv value width. Backward forms accumulate (+=) into gradients.
 */
#ifndef ATTEND_CORE_HARD_H
#define ATTEND_CORE_HARD_H

#include "internal.h"

/* attend_hard_argmax unchecked: idx [N,T] from weights [N,T,S] (no NaN). */
void at_hard_argmax(int32_t *idx, const attend_real *weights, int N, int T, int S);
/* attend_hard_sample unchecked: idx [N,T] from weights [N,T,S] (rows finite,
 * >= 0, summing to 1 within 1e-3). */
void at_hard_sample(int32_t *idx, const attend_real *weights, attend_rng *rng, int N, int T, int S);
/* attend_hard_context_forward unchecked: ctx [N,T,Dv] from v [N,S,Dv] at idx [N,T] (each in [0,S)). */
void at_hard_context_forward(attend_real *ctx, const int32_t *idx, const attend_real *v, int N, int T, int S,
                             int Dv);
/* attend_hard_context_backward unchecked: dv [N,S,Dv] += from dctx [N,T,Dv] at idx [N,T]. */
void at_hard_context_backward(attend_real *dv, const attend_real *dctx, const int32_t *idx, int N, int T, int S,
                              int Dv);
/* attend_pointer_logprobs_forward unchecked: logp [N,T,S] from scores [N,T,S]
 * (at_masked_softmax_check passed). */
void at_pointer_logprobs_forward(attend_real *logp, const attend_real *scores, const uint8_t *valid,
                                 const uint8_t *allowed, int causal, int N, int T, int S);
/* attend_pointer_nll_forward unchecked: mean NLL over rows with target >= 0
 * (every target -1 or in [0,S) and unmasked); count (or NULL) gets their number. */
void at_pointer_nll_forward(double *loss, int *count, const attend_real *logp, const int32_t *targets, int N, int T,
                            int S);
/* attend_pointer_nll_backward unchecked: dscores [N,T,S] += ∂loss/∂scores. */
void at_pointer_nll_backward(attend_real *dscores, const attend_real *logp, const int32_t *targets, int N, int T,
                             int S);

#endif
