/*
 * vocab.c — what the decoder kinds with a target vocabulary (BAHDANAU, LUONG,
 * NONE) share: the target embedding of their inputs, the output layer
 * logits = W_o feat + b_o with its log-softmax, loss gradient and decoding
 * distribution, and their targets' rules (ids of the vocabulary, EOS ends a
 * sequence, PAD and BOS are never outputs). An extension may change the
 * output distribution (at_ext_dist, at_ext_output), the per-token loss and
 * its gradient (at_ext_token_loss, at_ext_token_grad) and accept target ids
 * beyond the vocabulary (at_ext_accepts_targets); an output id beyond the
 * vocabulary fed back as an input reads <unk>'s embedding.
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <string.h>

#include "seq2seq/decoders/decoder.h"
#include "seq2seq/extension.h"
#include "seq2seq/embed.h"
#include "seq2seq/linear.h"

void at_vocab_layout_input(at_param_layout *L) {
    const attend_model_config *c = &L->m->cfg;
    at_param_add_init(L, L->v ? &L->v->tgt_emb : NULL, "tgt_emb.weight", c->tgt_vocab, c->emb, AT_INIT_EMBEDDING, 0);
}

void at_vocab_layout_output(at_param_layout *L) {
    const attend_model_config *c = &L->m->cfg;
    at_param_add(L, L->v ? &L->v->out_w : NULL, "out.weight", c->tgt_vocab, L->m->F);
    at_param_add(L, L->v ? &L->v->out_b : NULL, "out.bias", c->tgt_vocab, 0);
}

/* ------------------------------------------------------------------ inputs */

int32_t at_vocab_input_id(const attend_model *m, int32_t y) { return y >= m->cfg.tgt_vocab ? ATTEND_UNK : y; }

void at_vocab_input_rows(const attend_model *m, attend_real *rows, const int32_t *y_in, const int32_t *src, int N,
                         int S) {
    (void)src;
    (void)S;
    int D = m->cfg.emb;
    for (int n = 0; n < N; n++)
        memcpy(rows + (size_t)n * D, m->p.tgt_emb + (size_t)at_vocab_input_id(m, y_in[n]) * D, D * sizeof(attend_real));
}

void at_vocab_input_rows_backward(attend_model *m, const attend_real *demb, int T, int N, int S) {
    (void)S;
    at_embedding_backward(m->g.tgt_emb, demb, m->fwd_tgt_in, (size_t)T * N, m->cfg.emb);
}

/* ----------------------------------------------------------------- targets */

attend_status at_vocab_check_targets(const attend_model *m, const attend_batch *b, int n, const char *who,
                                     attend_error *err) {
    int Vt = m->cfg.tgt_vocab, tl = b->tgt_len[n];
    for (int t = 0; t < b->T; t++) {
        int32_t yi = b->tgt_in[(size_t)n * b->T + t], yo = b->tgt_out[(size_t)n * b->T + t];
        if (yi >= Vt || yo >= Vt) { /* ids an extension may give a meaning (copy) */
            attend_status st;
            if (at_ext_accepts_targets(m, b, n, t, err, &st)) continue;
            if (st) return st;
        }
        CHECK(yi >= 0 && yi < Vt && yo >= 0 && yo < Vt, err, ATTEND_ERR_ARG,
              "%s: row %d step %d: target ids %d -> %d outside the vocabulary [0,%d)", who, n, t, (int)yi, (int)yo, Vt);
        CHECK(t >= tl || yo != ATTEND_PAD, err, ATTEND_ERR_ARG,
              "%s: row %d step %d: PAD as a target inside the target length %d", who, n, t, tl);
    }
    return ATTEND_OK;
}

attend_status at_vocab_check_decode(const attend_model *m, const int32_t *src_len, int N, int max_len,
                                    const char *who, attend_error *err) {
    (void)m;
    (void)src_len;
    (void)N;
    (void)max_len;
    (void)who;
    (void)err;
    return ATTEND_OK;
}

int at_vocab_decode_len(const attend_batch *b) { return b->T; }

int at_vocab_finish(int t, int32_t token, int src_len) {
    (void)t;
    (void)src_len;
    return token == ATTEND_EOS;
}

int at_vocab_candidate(int32_t token) { return token != ATTEND_PAD && token != ATTEND_BOS; }

/* ------------------------------------------------------------------ output */

void at_vocab_output_forward(attend_model *m, int N, int S, int T) {
    at_acts *a = &m->acts;
    int V = m->cfg.tgt_vocab, F = m->F;
    /* the features are transformed after every step ran: an extension that
     * feeds predictions back (at_ext_feed) read them untransformed, as
     * decoding would */
    at_ext_site(m, a->feat, N, T, F, 1, AT_SITE_FEAT);
    /* logits [N*T,V] = feat [N*T,F] W_oᵀ + b_o, then log-softmax per row */
    at_model_linear(m, N * T, V, F, a->feat, F, m->p.out_w, F, 0, a->logp, V);
    for (size_t r = 0; r < (size_t)N * T; r++) {
        attend_real *z = a->logp + r * V;
        /* the maximum of the biased logits: a shift taken before the bias
         * could exceed them all, underflow every exp to 0 and make the
         * loss -inf */
        for (int v = 0; v < V; v++) z[v] += m->p.out_b[v];
        attend_real mx = z[0];
        for (int v = 1; v < V; v++)
            if (z[v] > mx) mx = z[v];
        double sum = 0;
        for (int v = 0; v < V; v++) sum += exp((double)z[v] - (double)mx);
        double lse = (double)mx + log(sum);
        for (int v = 0; v < V; v++) z[v] = (attend_real)((double)z[v] - lse);
    }
    at_ext_output(m, m->fwd_tgt_out, m->fwd_tgt_len, N, S, T);
}

const attend_real *at_vocab_output_row(const attend_model *m, int n, int t, int N, int S, int T, int *width) {
    (void)N;
    (void)S;
    *width = m->cfg.tgt_vocab;
    return m->acts.logp + ((size_t)n * T + t) * m->cfg.tgt_vocab;
}

/* loss = −(1/count) Σ logp[y] over counted steps ⇒ dlogits = (p − onehot)/count
 * (an extension's loss: its own gradient) */
void at_vocab_output_backward(attend_model *m, int N, int S, int T, attend_real inv) {
    (void)S;
    at_acts *a = &m->acts;
    int V = m->cfg.tgt_vocab, F = m->F;
    attend_real *dlogits = a->logp; /* p − onehot in place; logp is not needed again */
    for (int n = 0; n < N; n++)
        for (int t = 0; t < T; t++) {
            attend_real *z = dlogits + ((size_t)n * T + t) * V;
            if (t >= m->fwd_tgt_len[n]) {
                memset(z, 0, V * sizeof *z);
                continue;
            }
            int32_t y = m->fwd_tgt_out[(size_t)n * T + t];
            if (at_ext_token_grad(m, n, t, N, z, V, y, inv)) continue;
            for (int v = 0; v < V; v++) z[v] = (attend_real)exp((double)z[v]) * inv;
            z[y] -= inv;
        }
    /* forward: logits = feat W_oᵀ + b_o */
    at_gemm(1, 0, V, F, N * T, 1, dlogits, V, a->feat, F, 1, m->g.out_w, F);
    at_rows_sum(m->g.out_b, dlogits, (size_t)N * T, V);
    at_gemm(0, 0, N * T, F, V, 1, dlogits, V, m->p.out_w, F, 0, a->dfeat, F);
    at_ext_site(m, a->dfeat, N, T, F, 1, AT_SITE_FEAT); /* forward: feat = site(features) */
}

/* ---------------------------------------------------------------- decoding */

void at_vocab_step_logits(attend_model *m, int N, const attend_real *feat) {
    int V = m->cfg.tgt_vocab, F = m->F;
    at_model_linear(m, N, V, F, feat, F, m->p.out_w, F, 0, m->acts.step_logits, V);
    for (int n = 0; n < N; n++)
        for (int v = 0; v < V; v++) m->acts.step_logits[(size_t)n * V + v] += m->p.out_b[v];
}

const attend_real *at_vocab_dist(attend_model *m, int t, int N, int S, int *W, int *logp) {
    at_vocab_step_logits(m, N, m->acts.step_feat);
    const attend_real *d = at_ext_dist(m, t, N, S, W); /* log-probabilities of an extension's output space */
    if (d) {
        *logp = 1;
        return d;
    }
    *W = m->cfg.tgt_vocab;
    *logp = 0;
    return m->acts.step_logits;
}
