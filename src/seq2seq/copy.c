/*
 * copy.c — the pointer-generator output (See et al. 2017): p_gen, the
 * extended vocabulary of each source row, the mixed distribution and its
 * loss, their backward, and the extended distribution of one decoding step.
 * The formulas are in copy.h; tools/make_copy_ref.py computes the same in
 * PyTorch (tests/ref/copy_*.txt, tests/test_copy.c).
 *
 * Dimension letters: see model_internal.h.
 */
#include <math.h>
#include <string.h>

#include "seq2seq/copy.h"
#include "seq2seq/dropout.h"

size_t at_copy_ints(const attend_model_config *c, int Tcap) {
    return (size_t)c->src_vocab + (size_t)c->max_batch * c->max_src_len + (size_t)c->max_batch * Tcap;
}

void at_copy_place_ints(attend_model *m, int32_t *base) {
    const attend_model_config *c = &m->cfg;
    m->copy_map = base;
    m->copy_ext = m->copy_map + c->src_vocab;
    m->copy_best = m->copy_ext + (size_t)c->max_batch * c->max_src_len;
}

void at_copy_default_map(attend_model *m) {
    int Vs = m->cfg.src_vocab, Vt = m->cfg.tgt_vocab;
    for (int s = 0; s < Vs; s++) m->copy_map[s] = s >= 4 && s < Vt ? s : -1;
}

int32_t at_copy_ext_of(const attend_model *m, const int32_t *src, int len, int j) {
    int32_t s = src[j], Vt = m->cfg.tgt_vocab;
    if (s != ATTEND_UNK && s >= 0 && s < m->cfg.src_vocab && m->copy_map[s] >= 0) return m->copy_map[s];
    if (s == ATTEND_UNK) return Vt + j; /* its string is not known here: a token of its own */
    for (int i = 0; i < j && i < len; i++)
        if (src[i] == s) return Vt + i;
    return Vt + j;
}

void at_copy_begin(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S) {
    for (int n = 0; n < N; n++)
        for (int j = 0; j < S; j++)
            m->copy_ext[(size_t)n * S + j] = j < src_len[n] ? at_copy_ext_of(m, src + (size_t)n * S, src_len[n], j) : -1;
}

void at_copy_replicate(attend_model *m, int K, int S) {
    for (int k = 1; k < K; k++) memcpy(m->copy_ext + (size_t)k * S, m->copy_ext, (size_t)S * sizeof *m->copy_ext);
}

/* u = w_cᵀ c + w_sᵀ s + w_xᵀ x + b of one row, in double */
static double pgen_logit(const attend_model *m, const attend_real *c, const attend_real *s, const attend_real *x) {
    const at_model_tensors *p = &m->p;
    double u = (double)p->copy_b[0];
    for (int i = 0; i < m->E; i++) u += (double)p->copy_wc[i] * (double)c[i];
    for (int i = 0; i < m->cfg.dec_hidden; i++) u += (double)p->copy_ws[i] * (double)s[i];
    for (int i = 0; i < m->cfg.emb; i++) u += (double)p->copy_wx[i] * (double)x[i];
    return u;
}

static double sigmoid(double u) { return u >= 0 ? 1.0 / (1.0 + exp(-u)) : exp(u) / (1.0 + exp(u)); }

/* p_gen of row n at step t of N rows */
static double step_pgen(const attend_model *m, int t, int N, int n) {
    const at_acts *a = &m->acts;
    int Hd = m->cfg.dec_hidden, E = m->E, D = m->cfg.emb;
    return sigmoid(pgen_logit(m, a->ctx + ((size_t)t * N + n) * E, a->states + ((size_t)(t + 1) * N + n) * Hd,
                              a->emb_tgt + ((size_t)t * N + n) * D));
}

/* dist [Vt+S] = P(w) of one row from log P_vocab lv [Vt], p_gen g, weights w [S], ext [S] */
static void mix_row(double *best_p, int *best, attend_real *dist, const attend_real *lv, double g, const attend_real *w,
                    const int32_t *ext, int Vt, int S) {
    for (int v = 0; v < Vt; v++) dist[v] = (attend_real)(g * exp((double)lv[v]));
    for (int j = 0; j < S; j++) dist[Vt + j] = 0;
    for (int j = 0; j < S; j++)
        if (ext[j] >= 0) dist[ext[j]] += (attend_real)((1 - g) * (double)w[j]);
    int b = 0;
    for (int v = 1; v < Vt + S; v++)
        if (dist[v] > dist[b]) b = v;
    if (best) *best = b;
    if (best_p) *best_p = dist[b];
}

void at_copy_forward(attend_model *m, const int32_t *tgt_out, const int32_t *tgt_len, int N, int S, int T) {
    at_acts *a = &m->acts;
    int Vt = m->cfg.tgt_vocab;
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            size_t k = (size_t)t * N + n, r = (size_t)n * T + t;
            a->copy_pgen[k] = a->copy_r[k] = a->copy_da[k] = a->copy_du[k] = 0;
            a->copy_lpy[r] = 0;
            m->copy_best[r] = 0;
            if (t >= tgt_len[n]) continue;
            const attend_real *lv = a->logp + r * Vt, *w = a->weights + k * S;
            const int32_t *ext = m->copy_ext + (size_t)n * S;
            int32_t y = tgt_out[r];
            double g = step_pgen(m, t, N, n);
            double pv = y < Vt ? exp((double)lv[y]) : 0, cy = 0;
            for (int j = 0; j < S; j++)
                if (ext[j] == y) cy += (double)w[j];
            double P = g * pv + (1 - g) * cy;
            a->copy_pgen[k] = (attend_real)g;
            a->copy_lpy[r] = (attend_real)log(P);
            /* L = −log P: dlogits = r (p − onehot), dα_j = da [ext_j = y], du = dg g(1 − g) */
            a->copy_r[k] = (attend_real)(P > 0 ? g * pv / P : 0);
            a->copy_da[k] = (attend_real)(P > 0 ? -(1 - g) / P : 0);
            a->copy_du[k] = (attend_real)(P > 0 ? -(pv - cy) / P * g * (1 - g) : 0);
            int best;
            mix_row(NULL, &best, a->copy_dist, lv, g, w, ext, Vt, S);
            m->copy_best[r] = best;
        }
}

void at_copy_step_backward(attend_model *m, int t, int N, attend_real inv) {
    at_acts *a = &m->acts;
    int Hd = m->cfg.dec_hidden, E = m->E, D = m->cfg.emb;
    m->copy_inv = inv;
    for (int n = 0; n < N; n++) {
        attend_real du = a->copy_du[(size_t)t * N + n] * inv;
        if (du == 0) continue;
        const attend_real *c = a->ctx + ((size_t)t * N + n) * E, *s = a->states + ((size_t)(t + 1) * N + n) * Hd;
        const attend_real *x = a->emb_tgt + ((size_t)t * N + n) * D;
        /* forward: u = w_cᵀ c + w_sᵀ s + w_xᵀ x + b, x = tgt_emb[y_in] */
        attend_real *ds = a->ds + (size_t)n * Hd;
        attend_real *gx = m->g.tgt_emb + (size_t)m->fwd_tgt_in[(size_t)t * N + n] * D;
        for (int i = 0; i < Hd; i++) {
            ds[i] += du * m->p.copy_ws[i];
            m->g.copy_ws[i] += du * s[i];
        }
        for (int i = 0; i < E; i++) m->g.copy_wc[i] += du * c[i];
        /* with dropout x = mask ⊙ tgt_emb[y_in] (AT_DROP_DEC_IN, row n, position t): the gradient
         * reaching the embedding goes through the same mask (test_combos_f64: copy + dropout) */
        double dp = m->fwd_drop_p;
        for (int i = 0; i < D; i++) {
            attend_real keep = dp > 0 ? at_dropout_factor(dp, m->fwd_drop_key, AT_DROP_DEC_IN,
                                                          m->fwd_drop_row0 + n, t, i) : 1;
            m->g.copy_wx[i] += du * x[i];
            gx[i] += du * m->p.copy_wx[i] * keep;
        }
        m->g.copy_b[0] += du;
    }
}

void at_copy_attention_backward(attend_model *m, int t, int N, int S) {
    at_acts *a = &m->acts;
    int E = m->E, T = m->fwd_T;
    attend_real inv = m->copy_inv;
    for (int n = 0; n < N; n++) {
        size_t k = (size_t)t * N + n;
        attend_real du = a->copy_du[k] * inv, da = a->copy_da[k] * inv;
        /* forward: u = w_cᵀ c_t + ... */
        for (int i = 0; i < E; i++) a->dctx[(size_t)n * E + i] += du * m->p.copy_wc[i];
        if (da == 0) continue;
        /* forward: P(y) = ... + (1 − p_gen) Σ_{j: ext_j = y} α_tj */
        int32_t y = m->fwd_tgt_out[(size_t)n * T + t];
        const int32_t *ext = m->copy_ext + (size_t)n * S;
        for (int j = 0; j < S; j++)
            if (ext[j] == y) a->dweights[(size_t)n * S + j] += da;
    }
}

const attend_real *at_copy_step_dist(attend_model *m, int t, int N, int S) {
    at_acts *a = &m->acts;
    int Vt = m->cfg.tgt_vocab, W = Vt + S;
    for (int n = 0; n < N; n++) {
        attend_real *z = a->step_logits + (size_t)n * Vt, *dist = a->copy_dist + (size_t)n * W;
        /* log-softmax of the logits in place */
        attend_real mx = z[0];
        for (int v = 1; v < Vt; v++)
            if (z[v] > mx) mx = z[v];
        double sum = 0;
        for (int v = 0; v < Vt; v++) sum += exp((double)z[v] - (double)mx);
        double lse = (double)mx + log(sum);
        for (int v = 0; v < Vt; v++) z[v] = (attend_real)((double)z[v] - lse);
        double g = step_pgen(m, t, N, n);
        mix_row(NULL, NULL, dist, z, g, a->weights + ((size_t)t * N + n) * S, m->copy_ext + (size_t)n * S, Vt, S);
        for (int v = 0; v < W; v++) dist[v] = dist[v] > 0 ? (attend_real)log((double)dist[v]) : (attend_real)-INFINITY;
    }
    return a->copy_dist;
}

/* ------------------------------------------------------------ public */

attend_status attend_model_set_copy_map(attend_model *m, const attend_vocab *src_vocab, const attend_vocab *tgt_vocab,
                                        attend_error *err) {
    const char *who = "attend_model_set_copy_map";
    CHECK(m && src_vocab && tgt_vocab, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !m ? "model" : !src_vocab ? "src_vocab" : "tgt_vocab");
    CHECK(m->cfg.copy, err, ATTEND_ERR_ARG, "%s: the model has no copy mechanism (config copy=0)", who);
    CHECK(attend_vocab_size(src_vocab) == m->cfg.src_vocab && attend_vocab_size(tgt_vocab) == m->cfg.tgt_vocab, err,
          ATTEND_ERR_SHAPE, "%s: vocabularies of %d and %d tokens, the model has src_vocab=%d, tgt_vocab=%d", who,
          attend_vocab_size(src_vocab), attend_vocab_size(tgt_vocab), m->cfg.src_vocab, m->cfg.tgt_vocab);
    for (int32_t s = 0; s < m->cfg.src_vocab; s++) {
        const char *tk = attend_vocab_token(src_vocab, s);
        m->copy_map[s] = s < 4 ? -1 : attend_vocab_find(tgt_vocab, tk, strlen(tk));
    }
    m->fwd_ready = 0;
    return at_ok(err);
}

int32_t attend_model_copy_target(const attend_model *m, int32_t src_id) {
    if (!m || !m->cfg.copy || src_id < 0 || src_id >= m->cfg.src_vocab) return -1;
    return m->copy_map[src_id];
}
