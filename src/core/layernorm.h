/*
 * layernorm.h — layer normalisation (nn.LayerNorm over the last dimension,
 * eps 1e-5, elementwise affine) forward and backward (layernorm.c). Internal
 * (at_ names, unchecked: the caller sizes every buffer). Not installed.
 *
 * Dimension letters: M rows (N·S positions), C the normalised width.
 * Backward accumulates (+=) into dx, dw and db.
 */
#ifndef ATTEND_CORE_LAYERNORM_H
#define ATTEND_CORE_LAYERNORM_H

#include "internal.h"

#define AT_LAYERNORM_EPS 1e-5

/* out [M,C] = (x - mean) * rstd * w + b per row; saves mean [M] and rstd [M]
 * (1/sqrt(var + eps), the biased variance) for the backward. out may not
 * alias x. */
void at_layernorm_forward(attend_real *out, attend_real *mean, attend_real *rstd, const attend_real *x,
                          const attend_real *w, const attend_real *b, int M, int C);
/* dx [M,C] +=, dw [C] +=, db [C] += (dw, db may be NULL) from dout [M,C],
 * the forward's x [M,C], w [C], mean [M], rstd [M]. dx may not alias dout. */
void at_layernorm_backward(attend_real *dx, attend_real *dw, attend_real *db, const attend_real *dout,
                           const attend_real *x, const attend_real *w, const attend_real *mean,
                           const attend_real *rstd, int M, int C);

#endif
