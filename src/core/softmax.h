/*
 * softmax.h — the unchecked forms of the masked softmax (softmax.c) and the
 * attention kernels' shared dimension check. Not installed.
 *
 * Dimension letters as in attention.c: G groups of rows, T query positions,
 * S source positions.
 */
#ifndef ATTEND_CORE_SOFTMAX_H
#define ATTEND_CORE_SOFTMAX_H

#include "internal.h"

/* The shared dimension check of the attention kernels (softmax.c): every
 * count >= 1 and every size product in range; who names the caller, D the
 * widest row width. */
attend_status at_attention_check_dims(const char *who, attend_error *err, int N, int T, int S, int D);
/* at_masked_softmax without its validation pass: every row must keep at least
 * one position (the caller guarantees it). out, scores [G,T,S]. */
void at_masked_softmax_forward(attend_real *out, const attend_real *scores, const uint8_t *valid,
                               const uint8_t *allowed, int causal, int G, int T, int S, int mask_div, int log_out);
/* Pass 1 of at_masked_softmax: every row keeps a position and its kept
 * scores are finite; writes nothing. scores [G,T,S]. */
attend_status at_masked_softmax_check(const attend_real *scores, const uint8_t *valid, const uint8_t *allowed,
                                      int causal, int G, int T, int S, int mask_div, const char *who,
                                      attend_error *err);
#endif
