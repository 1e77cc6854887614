/*
 * linear.c — the model's weight products: Y = beta Y + X Wᵀ for a weight
 * matrix W inside the parameter arena, read from its int8/fp16 copy when the
 * model is quantized (src/io/quantize.c makes the copies; src/core/quant.c
 * multiplies them), and the attention keys projected the same way.
 * Dimension letters: src/seq2seq/state.h.
 */
#include "seq2seq/linear.h"

const at_qweight *at_model_qweight(const attend_model *m, const attend_real *w) {
    if (m->wdtype == ATTEND_DTYPE_F32) return NULL;
    uintptr_t p = (uintptr_t)w;
    for (int i = 0; i < m->ntensors; i++) {
        const at_qweight *q = &m->qw[i];
        if (q->dtype == ATTEND_DTYPE_F32) continue;
        uintptr_t b = (uintptr_t)q->f, e = (uintptr_t)(q->f + (size_t)q->rows * q->cols);
        if (p >= b && p < e) return q;
    }
    return NULL;
}

void at_model_linear(const attend_model *m, int N, int out, int in, const attend_real *X, int ldx,
                     const attend_real *W, int ldw, attend_real beta, attend_real *Y, int ldy) {
    at_linear(at_model_qweight(m, W), N, out, in, X, ldx, W, ldw, beta, Y, ldy);
}

void at_model_keys(const attend_model *m, attend_real *kp, const attend_real *k, int N, int S) {
    const attend_real *W = m->score.kind == ATTEND_SCORE_GENERAL    ? m->p.attn_W
                           : m->score.kind == ATTEND_SCORE_ADDITIVE ? m->p.attn_Wk
                                                                    : NULL;
    if (W && at_model_qweight(m, W)) { /* kp [NS,P] = k [NS,E] Wᵀ (+ b) */
        at_model_linear(m, N * S, m->P, m->E, k, m->E, W, m->E, 0, kp, m->P);
        if (m->score.kind == ATTEND_SCORE_ADDITIVE && m->score.additive_bias)
            at_rows_add(kp, m->p.attn_b, (size_t)N * S, m->P);
        return;
    }
    attend_score_params sp = at_model_score_params(&m->p);
    at_keys_forward(&m->score, &sp, kp, k, N, S);
}
