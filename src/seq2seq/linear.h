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
 * m->params: at_linear with W's quantized copy, or (float products of two
 * rows or more) its packed copy. */
void at_model_linear(const attend_model *m, int N, int out, int in, const attend_real *X, int ldx,
                     const attend_real *W, int ldw, attend_real beta, attend_real *Y, int ldy);

/* The backward of at_model_linear's input: dX [N,in] = beta dX + dY [N,out] W,
 * through W's packed copy (op(B) = W) for two rows or more. */
void at_model_linear_dx(const attend_model *m, int N, int out, int in, const attend_real *dY, int lddy,
                        const attend_real *W, int ldw, attend_real beta, attend_real *dX, int lddx);

/* A packed copy of op(B) for at_gemm_w: transB 1 packs Wᵀ of W [N,K] (the
 * forward's X Wᵀ), 0 packs W [K,N] itself (the backward's dY W); B at row
 * stride ldb inside m->params. Made on first use (one allocation, kept until
 * attend_model_free) and packed again when the parameters changed since (m's
 * pack_gen). NULL when OpenBLAS runs the products, when AT_MAX_PACKS views
 * are packed already, or when the allocation fails: the product then packs
 * as it goes (the same bits). The copies are a cache of the parameters, so
 * a const model refreshes them; like any decoding call, not thread-safe on
 * one model. */
const at_packed *at_model_pack(const attend_model *m, int transB, const attend_real *B, int ldb, int K, int N);

/* The cell's quantized copies (q_ih, q_hh) and the packed copies its
 * products read (pk_*): for the input projection over rows_ih rows (0: the
 * caller projects the input itself) and the hidden one over rows_hh rows;
 * the backward's only when training. */
void at_model_cell_copies(const attend_model *m, at_cell *cell, int rows_ih, int rows_hh);

/* The packed copies of the additive score's Wq for a step of `rows` query
 * rows (none for other scores or one row). */
at_score_packs at_model_score_packs(const attend_model *m, int rows);

/* Every write of the parameter arena ends here: the packed copies are stale
 * (called by create, load, clone, quantize, resume, each optimizer step, each
 * teacher-forced forward, and the accessors that hand out writable pointers). */
void at_model_params_changed(attend_model *m);

/* Frees the packed copies (attend_model_free). */
void at_model_packs_free(attend_model *m);

/* The projected keys kp [N,S,P] of k [N,S,E] (attend_keys_forward with the
 * model's weights), from the quantized copy of W / Wk when there is one. */
void at_model_keys(const attend_model *m, attend_real *kp, const attend_real *k, int N, int S);

#endif
