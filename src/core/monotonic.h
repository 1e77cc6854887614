/*
 * monotonic.h — the unchecked forms of the monotonic attention kernels
 * (monotonic.c): one decoder step at a time, as the model runs them, with a
 * row stride so the same code serves the model's [T,N,S] buffers and the
 * public [N,T,S] kernels. Not installed.
 *
 * Dimension letters: N batch, T decoder steps, S source positions.
 * Backward forms accumulate (+=) into gradients.
 */
#ifndef ATTEND_CORE_MONOTONIC_H
#define ATTEND_CORE_MONOTONIC_H

#include "internal.h"

/* The choice probability of one energy: p = σ(e + r). */
attend_real at_monotonic_prob(attend_real e, attend_real r);

/*
 * Expected alignment of one step (Raffel et al. 2017: their recurrence in its
 * stable form, without the division by p), row n of every array at + n*ld:
 *   p_j = σ(e_j + r + z_j) where position j is valid, else 0
 *   q_j = (1 − p_{j−1}) q_{j−1} + α'_j        (q_{−1} = 0)
 *   α_j = p_j q_j
 * with α' = alpha_prev, or the one-hot at position 0 when alpha_prev is NULL
 * (the first step), and z = noise [N,S] (training's pre-sigmoid noise; NULL:
 * 0). alpha, p, q [N,S] out; e, alpha_prev [N,S]. Position j
 * of row n is valid when valid[n*S + j] != 0 (valid [N,S], row stride S;
 * NULL: all) and j < len[n] (len [N]; NULL: all).
 */
void at_monotonic_step_forward(attend_real *alpha, attend_real *p, attend_real *q, const attend_real *e,
                               attend_real r, const attend_real *noise, const attend_real *alpha_prev,
                               const uint8_t *valid, const int32_t *len, int N, int S, size_t ld);

/*
 * Backward of at_monotonic_step_forward from dalpha [N,S] (the whole
 * gradient of this step's α: the context's and the next step's): de [N,S] +=,
 * dr [1] += (either may be NULL), dalpha_prev [N,S] += (the gradient of α',
 * NULL at the first step). p, q [N,S] as the forward saved them (with the
 * noise, a constant of the step, inside p).
 */
void at_monotonic_step_backward(attend_real *de, attend_real *dr, attend_real *dalpha_prev, const attend_real *dalpha,
                                const attend_real *p, const attend_real *q, const uint8_t *valid, const int32_t *len,
                                int N, int S, size_t ld);

/*
 * Hard monotonic attention of one step: from the previous position pos[n]
 * (0 at the first step) attend to the first valid j >= pos[n] with
 * p_j = σ(e_j + r) >= 0.5 (alpha one-hot there, pos[n] = j); with none up to
 * S, alpha's row is 0 and pos[n] = S (the decoder has read past the end and
 * attends to nothing from then on). active [N] (NULL: all): inactive rows are
 * left as they are. alpha [N,S] out, e [N,S], pos [N] in/out, valid [N,S].
 */
void at_monotonic_hard_step(attend_real *alpha, int32_t *pos, const attend_real *e, attend_real r,
                            const uint8_t *valid, const int32_t *len, const uint8_t *active, int N, int S,
                            size_t ld);

#endif
