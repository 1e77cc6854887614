/*
 * common.c — positions and the mean summary of the non-recurrent encoder
 * kinds (common.h).
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <string.h>

#include "seq2seq/encoders/common.h"

attend_status at_enc_positions_check(const attend_model_config *c, attend_error *err) {
    CHECK((unsigned)c->positions <= ATTEND_POSITIONS_NONE, err, ATTEND_ERR_ARG,
          "model config: positions=%d is not sinusoidal (0), learned (1) or none (2)", (int)c->positions);
    if (c->positions == ATTEND_POSITIONS_LEARNED)
        CHECK(c->max_positions >= c->max_src_len && c->max_positions <= 1 << 16, err, ATTEND_ERR_ARG,
              "model config: max_src_len=%d exceeds max_positions=%d, the learned positions' rows", c->max_src_len,
              c->max_positions);
    else
        CHECK(c->max_positions == 0, err, ATTEND_ERR_ARG,
              "model config: max_positions=%d applies to learned positions, not positions=%s", c->max_positions,
              attend_positions_name(c->positions));
    return ATTEND_OK;
}

void at_enc_positions_layout(at_param_layout *L, attend_real **pos) {
    const attend_model_config *c = &L->m->cfg;
    /* learned positions: variance 1 like the embeddings (N(0,1)): U(±sqrt 3) */
    if (c->positions == ATTEND_POSITIONS_LEARNED)
        at_param_add_init(L, at_param_slot(L, pos), "encoder.pos_emb", c->max_positions, c->emb, AT_INIT_UNIFORM,
                          sqrt(3.0));
}

/* PE [S_cap,D]: PE[j,2i] = sin(j / 10000^(2i/D)), PE[j,2i+1] = cos(j / 10000^(2i/D)) */
void at_sinusoid_table(attend_real *pe, int S, int D) {
    for (int j = 0; j < S; j++)
        for (int d = 0; d < D; d++) {
            double angle = j / pow(10000.0, (double)(d - d % 2) / D);
            pe[(size_t)j * D + d] = (attend_real)(d % 2 ? cos(angle) : sin(angle));
        }
}

void at_enc_positions_forward(const attend_model *m, attend_real *x0, const attend_real *emb, attend_real *pe,
                              int *pe_ready, attend_real *const *pos, int N, int S) {
    // x0 [N,S,D], emb [N,S,D], pe [max_src_len,D], pos[0] [max_positions,D]
    const attend_model_config *c = &m->cfg;
    int D = c->emb;
    memcpy(x0, emb, (size_t)N * S * D * sizeof *x0);
    const attend_real *p = NULL;
    if (c->positions == ATTEND_POSITIONS_SINUSOIDAL) {
        if (!*pe_ready) {
            at_sinusoid_table(pe, c->max_src_len, D);
            *pe_ready = 1;
        }
        p = pe;
    } else if (c->positions == ATTEND_POSITIONS_LEARNED) {
        p = pos[0];
    }
    if (p)
        for (int n = 0; n < N; n++)
            for (size_t k = 0; k < (size_t)S * D; k++) x0[(size_t)n * S * D + k] += p[k];
}

void at_enc_positions_backward(const attend_model *m, attend_real *const *pos, const attend_real *dx0, int N, int S) {
    // pos[1] [max_positions,D] +=, dx0 [N,S,D]
    const attend_model_config *c = &m->cfg;
    if (c->positions != ATTEND_POSITIONS_LEARNED) return;
    for (int n = 0; n < N; n++)
        for (size_t k = 0; k < (size_t)S * c->emb; k++) pos[1][k] += dx0[(size_t)n * S * c->emb + k];
}

void at_enc_mean_forward(attend_real *out, attend_real *fin, const int32_t *src_len, int N, int S, int D) {
    // out [N,S,D] (padding rows set to 0), fin [N,D], src_len [N]
    for (int n = 0; n < N; n++) {
        attend_real *f = fin + (size_t)n * D;
        memset(f, 0, (size_t)D * sizeof *f);
        for (int j = 0; j < S; j++) {
            attend_real *o = out + ((size_t)n * S + j) * D;
            if (j >= src_len[n]) {
                memset(o, 0, (size_t)D * sizeof *o);
                continue;
            }
            for (int d = 0; d < D; d++) f[d] += o[d];
        }
        attend_real inv = (attend_real)(1.0 / src_len[n]);
        for (int d = 0; d < D; d++) f[d] *= inv;
    }
}

void at_enc_mean_backward(attend_real *dout, const attend_real *denc, const attend_real *dfin, const int32_t *src_len,
                          int N, int S, int D) {
    // dout [N,S,D], denc [N,S,D], dfin [N,D], src_len [N]
    /* forward: out masked, fin = (1/len) Σ_valid out */
    for (int n = 0; n < N; n++) {
        attend_real inv = (attend_real)(1.0 / src_len[n]);
        for (int j = 0; j < S; j++) {
            attend_real *d = dout + ((size_t)n * S + j) * D;
            const attend_real *de = denc + ((size_t)n * S + j) * D, *df = dfin + (size_t)n * D;
            for (int k = 0; k < D; k++) d[k] = j < src_len[n] ? de[k] + df[k] * inv : 0;
        }
    }
}
