/*
 * attention.h — the unchecked forms of the attention kernels (attention.c;
 * the masked softmax's are in softmax.h, included here).
 * Each public attend_x validates its arguments and calls at_x; library code
 * that has validated once (the model at create/load and at its entry points)
 * calls at_x directly in its loops. Not installed.
 *
 * Dimension letters as in attention.c: N batch, T query positions, S source
 * positions, Dq query width, Dk key width, Dv value width, P projected-key
 * width. Backward forms accumulate (+=) into gradients.
 */
#ifndef ATTEND_CORE_ATTENTION_H
#define ATTEND_CORE_ATTENTION_H

#include "internal.h"
#include "core/softmax.h"

/* attend_keys_forward unchecked: kp [N,S,P] from k [N,S,Dk]. */
void at_keys_forward(const attend_score_config *cfg, const attend_score_params *p, attend_real *kp,
                     const attend_real *k, int N, int S);
/* attend_keys_backward unchecked: dk [N,S,Dk] (or NULL) and g += from dkp [N,S,P]. */
void at_keys_backward(const attend_score_config *cfg, const attend_score_params *p, const attend_score_grads *g,
                      attend_real *dk, const attend_real *dkp, const attend_real *k, int N, int S);
/* attend_scores_forward unchecked: scores [N,T,S], saved (ADDITIVE) from q [N,T,Dq], kp [N,S,P]. */
void at_scores_forward(const attend_score_config *cfg, const attend_score_params *p, attend_real *scores,
                       attend_real *saved, const attend_real *q, const attend_real *kp, int N, int T, int S,
                       const at_score_packs *pk);
/* attend_scores_backward unchecked: dq [N,T,Dq], dkp [N,S,P] (each or NULL) and g +=. */
void at_scores_backward(const attend_score_config *cfg, const attend_score_params *p, const attend_score_grads *g,
                        attend_real *dq, attend_real *dkp, const attend_real *dscores, attend_real *saved,
                        const attend_real *q, const attend_real *kp, int N, int T, int S, const at_score_packs *pk);
/* attend_context_forward unchecked: ctx [N,T,Dv] = weights [N,T,S] v [N,S,Dv]. */
void at_context_forward(attend_real *ctx, const attend_real *weights, const attend_real *v, int N, int T, int S,
                        int Dv);
/* attend_context_backward unchecked: dweights [N,T,S], dv [N,S,Dv] (each or NULL) +=. */
void at_context_backward(attend_real *dweights, attend_real *dv, const attend_real *dctx, const attend_real *weights,
                         const attend_real *v, int N, int T, int S, int Dv);

#endif
