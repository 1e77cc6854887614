/*
 * intervene.h — the passes of the interventions (intervene.c) that the
 * trials reuse. Decode-only: the model's activation arena, under the run
 * at_model_analyse set (its weight hook, if any).
 */
#ifndef ATTEND_ANALYSIS_INTERVENE_H
#define ATTEND_ANALYSIS_INTERVENE_H

#include "seq2seq/state.h"

/* Teacher-forced pass of one source src [S] along base [base_len] (+ EOS),
 * with saved state `removed` hidden (-1: none): log-probs lp [steps,W]
 * (steps = base_len + 1; -inf beyond the model's output space), and the
 * weights of every step into align [steps,S] (NULL allowed; zeros without
 * attention). */
void at_forced_pass(attend_model *m, const int32_t *src, int S, int removed, const int32_t *base, int base_len,
                    double *lp, int W, attend_real *align);

/* After at_model_step(t) of one row: the step's log-probabilities into lp [W]
 * (log-softmax of the logits, or an extension's output space; -inf beyond). */
void at_step_logp(attend_model *m, int t, int S, double *lp, int W);
/* The same after at_model_step(t) of N rows, for the first n: lp [n,W]. */
void at_step_logp_rows(attend_model *m, int t, int N, int S, int n, double *lp, int W);

/* An intervention on an encoder's self-attention (site ENCODER_SELF), the
 * model's at_self_hook_fn at_self_edit_weights with user = at_self_edit:
 * every valid query row of the chosen layers and heads of P [N,H,S,S] edited
 * in place (REMOVE_STATE: key `position` set to 0 and the row renormalised
 * over the other valid keys; UNIFORM, PERMUTE (perm [S]), DROP_TOP:
 * at_weights_edit over the valid keys). No allocation. */
typedef struct {
    attend_intervention_kind kind;
    int layer, head;     /* 1-based; 0 = every layer / head */
    int position;        /* REMOVE_STATE: the hidden key */
    const int32_t *perm; /* PERMUTE: [S] */
} at_self_edit;
void at_self_edit_weights(void *user, int layer, attend_real *P, const uint8_t *valid, int N, int H, int S);

#endif
