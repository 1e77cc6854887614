/*
 * sparsemax.h — the unchecked forms of the normaliser kernels (sparsemax.c):
 * softmax, sparsemax and 1.5-entmax behind one switch, for the attention
 * kernel and the decoders, which validate once and then call these. Not
 * installed.
 *
 * Dimension letters as in sparsemax.c: G rows of [T,S]; backward forms
 * accumulate (+=) into gradients.
 */
#ifndef ATTEND_CORE_SPARSEMAX_H
#define ATTEND_CORE_SPARSEMAX_H

#include "internal.h"

/* ATTEND_ERR_ARG naming who unless normalizer is a known attend_normalizer. */
attend_status at_normalizer_check(attend_normalizer normalizer, const char *who, attend_error *err);
/* out [G,T,S] = normalizer(scores [G,T,S]) over the kept positions (masks as
 * at_masked_softmax_forward); rows validated by the caller (every row keeps a
 * position, kept scores finite); out and scores distinct unless SOFTMAX. */
void at_masked_normalize_forward(int normalizer, attend_real *out, const attend_real *scores, const uint8_t *valid,
                                 const uint8_t *allowed, int causal, int G, int T, int S, int mask_div);
/* dscores [rows,S] += J(weights [rows,S])ᵀ dweights [rows,S]. */
void at_normalize_backward(int normalizer, attend_real *dscores, const attend_real *dweights,
                           const attend_real *weights, size_t rows, int S);
/* τ of a row zs [n] (n >= 1) sorted in decreasing order; *support (may be
 * NULL) = the support size. Sparsemax: w = max(z − τ, 0). */
double at_sparsemax_tau_sorted(const attend_real *zs, int n, int *support);
/* The same for 1.5-entmax: w = max(z/2 − τ, 0)². */
double at_entmax15_tau_sorted(const attend_real *zs, int n, int *support);

#endif
