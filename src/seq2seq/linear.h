/*
 * linear.h — the model's weight products (linear.c): every product against a
 * weight of the model goes through at_model_linear, which reads the int8/fp16
 * copy of a quantized model. Not installed.
 *
 * Dimension letters: see state.h.
 */
#ifndef ATTEND_SEQ2SEQ_LINEAR_H
#define ATTEND_SEQ2SEQ_LINEAR_H

#include "seq2seq/state.h"

/* The quantized copy of the matrix holding w (a pointer into m->params), or
 * NULL (a float model, or a tensor kept in float). */
const at_qweight *at_model_qweight(const attend_model *m, const attend_real *w);

/* Y [N,out] = beta Y + X [N,in] Wᵀ for W [out,in] at row stride ldw inside
 * m->params: at_linear with W's quantized copy (at_gemm on a float model). */
void at_model_linear(const attend_model *m, int N, int out, int in, const attend_real *X, int ldx,
                     const attend_real *W, int ldw, attend_real beta, attend_real *Y, int ldy);

/* The projected keys kp [N,S,P] of k [N,S,E] (attend_keys_forward with the
 * model's weights), from the quantized copy of W / Wk when there is one. */
void at_model_keys(const attend_model *m, attend_real *kp, const attend_real *k, int N, int S);

#endif
