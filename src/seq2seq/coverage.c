/*
 * coverage.c — coverage in the model (Tu et al. 2016, "Modeling Coverage for
 * Neural Machine Translation"; See et al. 2017, "Get To The Point"):
 *
 *   the coverage vector  cov_t = Σ_{t'<t} α_t'  [N,S] (cov_0 = 0), kept per
 *                        step in acts.cov [T+1,N,S] and, in beam search,
 *                        reordered with the hypotheses;
 *   the coverage input   (cfg.coverage) e_tj = vᵀ tanh(Wq q_t + Wk h_j + b +
 *                        w_cov cov_tj), the score of core/coverage.c, tensor
 *                        attention.w_cov [A];
 *   the coverage loss    (m->cov_loss = λ > 0, the trainer's coverage_loss)
 *                        λ Σ_t Σ_j min(α_tj, cov_tj) over the counted steps,
 *                        divided by the counted tokens like the cross-entropy.
 *
 * Backward runs over the steps from last to first with a running gradient
 * acts.dcov [N,S] = ∂L/∂cov summed over the later steps: since cov_t sums
 * every earlier α, step t's weights receive it (dα_t += dcov), and then step
 * t's own ∂L/∂cov_t (from the score input and the loss) joins the sum.
 * torch.min's rule at ties (α == cov, e.g. masked positions): half to each.
 *
 * Dimension letters: see model_internal.h.
 */
#include <math.h>
#include <string.h>

#include "seq2seq/decoders/decoder.h"
#include "core/coverage.h"

int at_cov_on(const attend_model *m) {
    return m->dec->attentive && (m->cfg.coverage || (m->cov_loss > 0 && !m->infer));
}

void at_cov_scores_forward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *scores,
                           attend_real *saved) {
    at_acts *a = &m->acts;
    attend_real *cov = a->cov + (size_t)t * N * S;
    if (t == 0) memset(cov, 0, (size_t)N * S * sizeof *cov); /* cov_0 = 0 */
    attend_score_params sp = at_model_score_params(&m->p);
    const at_score_packs wq = at_model_score_packs(m, N);
    at_coverage_scores_forward(&m->score, &sp, m->p.attn_wcov, scores, saved, q, a->kp, cov, N, 1, S, !m->infer, &wq);
}

void at_cov_scores_backward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *dq,
                            attend_real *saved) {
    at_acts *a = &m->acts;
    attend_score_params sp = at_model_score_params(&m->p);
    attend_score_grads sg = at_model_score_grads(&m->g);
    const at_score_packs wq = at_model_score_packs(m, N);
    /* ∂L/∂cov_t joins the running sum a->dcov (used by the earlier steps) */
    at_coverage_scores_backward(&m->score, &sp, &sg, m->p.attn_wcov, m->g.attn_wcov, dq, a->dkp, a->dcov, a->dscores,
                                saved, q, a->cov + (size_t)t * N * S, N, 1, S, &wq);
}

void at_cov_step(attend_model *m, int t, int N, int S) {
    if (!at_cov_on(m)) return;
    at_acts *a = &m->acts;
    attend_real *prev = a->cov + (size_t)t * N * S, *next = prev + (size_t)N * S;
    const attend_real *w = a->weights + (size_t)t * N * S;
    if (t == 0) memset(prev, 0, (size_t)N * S * sizeof *prev);
    for (size_t i = 0; i < (size_t)N * S; i++) next[i] = prev[i] + w[i]; /* cov_{t+1} = cov_t + α_t */
}

void at_cov_reorder(attend_model *m, int t, const int *parent, int n, int live) {
    if (!m->cfg.coverage || !m->dec->attentive || n <= 0) return;
    at_acts *a = &m->acts;
    int S = m->step_S;
    const attend_real *rows = a->cov + (size_t)(t + 1) * live * S;
    attend_real *tmp = a->dcov; /* [max_batch,S], unused while decoding */
    for (int j = 0; j < n; j++) memcpy(tmp + (size_t)j * S, rows + (size_t)parent[j] * S, (size_t)S * sizeof *tmp);
    memcpy(a->cov + (size_t)(t + 1) * n * S, tmp, (size_t)n * S * sizeof *tmp);
}

double at_cov_loss(const attend_model *m, int N, int S, int T) {
    if (!(m->cov_loss > 0) || !m->dec->attentive) return 0;
    const at_acts *a = &m->acts;
    double sum = 0;
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            if (!m->active[(size_t)t * N + n]) continue;
            const attend_real *w = a->weights + ((size_t)t * N + n) * S, *c = a->cov + ((size_t)t * N + n) * S;
            for (int j = 0; j < S; j++) sum += (double)(w[j] < c[j] ? w[j] : c[j]);
        }
    return m->cov_loss * sum;
}

void at_cov_weights_backward(attend_model *m, int t, int N, int S) {
    if (!at_cov_on(m)) return;
    at_acts *a = &m->acts;
    if (t == m->fwd_T - 1) memset(a->dcov, 0, (size_t)N * S * sizeof *a->dcov); /* the last step: nothing later */
    /* cov_{t'} for t' > t sums α_t: their gradients, summed, reach α_t */
    for (size_t i = 0; i < (size_t)N * S; i++) a->dweights[i] += a->dcov[i];
    if (!(m->cov_loss > 0)) return;
    /* forward: loss += (λ/count) Σ_j min(α_tj, cov_tj) on counted steps */
    attend_real g = (attend_real)(m->cov_loss / m->fwd_count), half = g / 2;
    const attend_real *w = a->weights + (size_t)t * N * S, *c = a->cov + (size_t)t * N * S;
    const uint8_t *active = m->active + (size_t)t * N;
    for (int n = 0; n < N; n++) {
        if (!active[n]) continue;
        for (int j = 0; j < S; j++) {
            size_t i = (size_t)n * S + j;
            if (w[i] < c[i]) a->dweights[i] += g;
            else if (w[i] > c[i]) a->dcov[i] += g;
            else {
                a->dweights[i] += half;
                a->dcov[i] += half;
            }
        }
    }
}

attend_status attend_model_set_coverage_loss(attend_model *m, double lambda, attend_error *err) {
    CHECK(m, err, ATTEND_ERR_NULL, "attend_model_set_coverage_loss: model is NULL");
    CHECK(isfinite(lambda) && lambda >= 0, err, ATTEND_ERR_ARG,
          "attend_model_set_coverage_loss: lambda=%g, must be finite and >= 0", lambda);
    CHECK(lambda == 0 || (m->dec->attentive && !m->dec->points), err, ATTEND_ERR_ARG,
          "attend_model_set_coverage_loss: coverage loss with decoder %s: it needs a vocabulary decoder with "
          "attention (bahdanau, luong)", m->dec->name);
    m->cov_loss = lambda;
    m->fwd_ready = 0;
    return at_ok(err);
}

double attend_model_coverage_loss(const attend_model *m) { return m ? m->cov_loss : 0; }
