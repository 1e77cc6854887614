/*
 * linear.c — the model's weight products: Y = beta Y + X Wᵀ for a weight
 * matrix W inside the parameter arena, read from its int8/fp16 copy when the
 * model is quantized (src/io/quantize.c makes the copies; src/core/quant.c
 * multiplies them), and the attention keys projected the same way; and the
 * weights' packed copies (at_model_pack): a decoder or encoder step
 * multiplies the same matrices at every time step, and a blocked product
 * would pack its op(B) again each time (1.77 MB for the G2P decoder's
 * weight_hh at every step); packed once per parameter change instead, at
 * load for inference and once per optimizer step in training.
 * Dimension letters: src/seq2seq/state.h.
 */
#include <stdlib.h>

#include "seq2seq/linear.h"

void at_model_params_changed(attend_model *m) { m->pack_gen++; }

void at_model_packs_free(attend_model *m) {
    for (int i = 0; i < m->npacks; i++) free(m->packs[i].buf);
    m->npacks = 0;
}

const at_packed *at_model_pack(const attend_model *cm, int transB, const attend_real *B, int ldb, int K, int N) {
    /* the packed copies are a cache of the parameters: refreshed through a const model */
    attend_model *m = (attend_model *)cm;
    if (K < 1 || N < 1 || at_gemm_uses_blas()) return NULL;
    at_pack_entry *e = NULL;
    for (int i = 0; i < m->npacks; i++) {
        at_pack_entry *x = &m->packs[i];
        if (x->B == B && x->ldb == ldb && x->K == K && x->N == N && x->transB == transB) {
            e = x;
            break;
        }
    }
    if (!e) {
        if (m->npacks == AT_MAX_PACKS) return NULL;
        /* 64-byte aligned, as the per-call packing buffers: a panel row that
         * straddles two cache lines costs every other load a second line */
        const size_t bytes = (at_pack_floats(K, N) * sizeof(attend_real) + 63) / 64 * 64;
        attend_real *buf = aligned_alloc(64, bytes);
        if (!buf) return NULL;
        e = &m->packs[m->npacks++];
        *e = (at_pack_entry){B, ldb, K, N, transB, buf, {0}, m->pack_gen - 1};
    }
    if (e->gen != m->pack_gen) {
        at_pack(&e->pk, e->buf, transB, B, ldb, K, N);
        e->gen = m->pack_gen;
    }
    return &e->pk;
}

/* A blocked product of `rows` rows against W reads a packed copy: two rows
 * or more, and more than a quantized copy multiplies itself. */
static int packs(const at_qweight *q, int rows) { return rows >= 2 && !at_linear_quantized(q, rows); }

void at_model_cell_copies(const attend_model *m, at_cell *cell, int rows_ih, int rows_hh) {
    const int GH = at_cell_gates(cell->kind) * cell->H;
    cell->q_ih = at_model_qweight(m, cell->W_ih);
    cell->q_hh = at_model_qweight(m, cell->W_hh);
    cell->pk_ih = packs(cell->q_ih, rows_ih) ? at_model_pack(m, 1, cell->W_ih, cell->I, cell->I, GH) : NULL;
    cell->pk_hh = packs(cell->q_hh, rows_hh) ? at_model_pack(m, 1, cell->W_hh, cell->H, cell->H, GH) : NULL;
    /* the backward's dxg W_ih and da W_hh (training: float weights) */
    cell->pk_ih_dx = !m->run.infer && rows_ih >= 2 ? at_model_pack(m, 0, cell->W_ih, cell->I, GH, cell->I) : NULL;
    cell->pk_hh_dx = !m->run.infer && rows_hh >= 2 ? at_model_pack(m, 0, cell->W_hh, cell->H, GH, cell->H) : NULL;
}

at_score_packs at_model_score_packs(const attend_model *m, int rows) {
    at_score_packs sp = {NULL, NULL};
    const attend_real *Wq = m->p.attn_Wq;
    const int A = m->score.A, Dq = m->score.Dq;
    if (m->score.kind != ATTEND_SCORE_ADDITIVE || !Wq || rows < 2) return sp;
    if (packs(at_model_qweight(m, Wq), rows)) sp.wq = at_model_pack(m, 1, Wq, Dq, Dq, A);
    if (!m->run.infer) sp.wq_dx = at_model_pack(m, 0, Wq, Dq, A, Dq);
    return sp;
}

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
    const at_qweight *q = at_model_qweight(m, W);
    at_linear(q, packs(q, N) ? at_model_pack(m, 1, W, ldw, in, out) : NULL, N, out, in, X, ldx, W, ldw, beta, Y, ldy);
}

void at_model_linear_dx(const attend_model *m, int N, int out, int in, const attend_real *dY, int lddy,
                        const attend_real *W, int ldw, attend_real beta, attend_real *dX, int lddx) {
    at_gemm_w(0, 0, N, in, out, 1, dY, lddy, W, ldw, N >= 2 ? at_model_pack(m, 0, W, ldw, out, in) : NULL, beta,
              dX, lddx);
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
