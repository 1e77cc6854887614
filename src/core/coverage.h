/*
 * coverage.h — the unchecked forms of the coverage score (coverage.c): the
 * additive score with coverage input, e = vᵀ tanh(Wq q + kp + w_cov · cov).
 * Not installed. Dimension letters as in coverage.c.
 */
#ifndef ATTEND_CORE_COVERAGE_H
#define ATTEND_CORE_COVERAGE_H

#include "internal.h"

/* scores [N,T,S], saved (qp [N,T,A], then tanh values [N,T,S,A] when
 * keep_tanh) from q [N,T,Dq], kp [N,S,A], cov [N,T,S], w_cov [A]. */
void at_coverage_scores_forward(const attend_score_config *cfg, const attend_score_params *p, const attend_real *w_cov,
                                attend_real *scores, attend_real *saved, const attend_real *q, const attend_real *kp,
                                const attend_real *cov, int N, int T, int S, int keep_tanh, const at_score_packs *pk);
/* Backward from dscores [N,T,S]: dq [N,T,Dq], dkp [N,S,A], dcov [N,T,S],
 * g_wcov [A] and g (Wq, v) += (each may be NULL); saved's first N*T*A values
 * are scratch. */
void at_coverage_scores_backward(const attend_score_config *cfg, const attend_score_params *p,
                                 const attend_score_grads *g, const attend_real *w_cov, attend_real *g_wcov,
                                 attend_real *dq, attend_real *dkp, attend_real *dcov, const attend_real *dscores,
                                 attend_real *saved, const attend_real *q, const attend_real *cov, int N, int T,
                                 int S, const at_score_packs *pk);

#endif
