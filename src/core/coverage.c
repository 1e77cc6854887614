/*
 * coverage.c — the additive score with a coverage input (Tu et al. 2016,
 * "Modeling Coverage for Neural Machine Translation"; See et al. 2017, "Get
 * To The Point", eq. 11):
 *     e[n,t,j] = vᵀ tanh(Wq q[n,t] + Wk k[n,j] + b + w_cov · cov[n,t,j])
 * where cov[n,t,j] is the coverage of source position j before query t (in
 * the model: the sum of the earlier steps' attention weights). The keys are
 * projected once as for the plain additive score (kp = k Wkᵀ + b,
 * attend_keys_forward); the saved values have the additive score's layout
 * (query projection [N,T,A], then the tanh values [N,T,S,A]).
 *
 * Dimension letters: N batch, T query positions, S source positions,
 * Dq query width, A additive width. Row-major, last index contiguous.
 * Backward functions accumulate (+=) into gradients.
 */
#include <string.h>

#include "internal.h"
#include "core/attention.h"
#include "core/coverage.h"
#include "core/vmath.h"

/* Rows r = (n, t) in [r0, r1):
 * forward:  th[r,j,:] = tanh(qp[r,:] + kp[n,j,:] + wc · cov[r,j]),  scores[r,j] = v · th[r,j,:]
 * (th NULL: the tanh is not stored; inference needs no backward). */
AT_KERNEL_VOID(static, coverage_forward,
               (attend_real *restrict scores, attend_real *restrict th, const attend_real *restrict qp,
                const attend_real *restrict kp, const attend_real *restrict cov, const attend_real *restrict wc,
                const attend_real *restrict v, int r0, int r1, int T, int S, int A),
               (scores, th, qp, kp, cov, wc, v, r0, r1, T, S, A)) {
    // scores [NT,S], th [NT,S,A] (NULL: not saved), qp [NT,A], kp [N,S,A], cov [NT,S], wc [A], v [A]
    for (int r = r0; r < r1; r++) {
        const int n = r / T;
        const attend_real *restrict qrow = qp + (size_t)r * A;
        for (int j = 0; j < S; j++) {
            const attend_real *restrict krow = kp + ((size_t)n * S + j) * A;
            const attend_real c = cov[(size_t)r * S + j];
            attend_real e = 0;
            if (th) {
                attend_real *restrict h = th + ((size_t)r * S + j) * A;
#pragma omp simd reduction(+ : e)
                for (int a = 0; a < A; a++) {
                    attend_real x = at_vtanh(qrow[a] + krow[a] + wc[a] * c);
                    h[a] = x;
                    e += v[a] * x;
                }
            } else {
#pragma omp simd reduction(+ : e)
                for (int a = 0; a < A; a++) e += v[a] * at_vtanh(qrow[a] + krow[a] + wc[a] * c);
            }
            scores[(size_t)r * S + j] = e;
        }
    }
}

/* Backward of coverage_forward for rows [r0, r1): dqp [NT,A] = (overwritten),
 * dkp [N,S,A] += (may be NULL), dcov [NT,S] += (may be NULL). Rows of one
 * batch entry share dkp[n], so a thread's [r0, r1) holds whole entries
 * (multiples of T). The gradients of v and wc, shared by all rows, are
 * separate passes. */
AT_KERNEL_VOID(static, coverage_backward,
               (attend_real *restrict dqp, attend_real *restrict dkp, attend_real *restrict dcov,
                const attend_real *restrict dscores, const attend_real *restrict th, const attend_real *restrict wc,
                const attend_real *restrict v, int r0, int r1, int T, int S, int A),
               (dqp, dkp, dcov, dscores, th, wc, v, r0, r1, T, S, A)) {
    for (int r = r0; r < r1; r++) {
        const int n = r / T;
        attend_real *restrict dqrow = dqp + (size_t)r * A;
        for (int a = 0; a < A; a++) dqrow[a] = 0;
        for (int j = 0; j < S; j++) {
            attend_real ds = dscores[(size_t)r * S + j];
            if (ds == 0) continue;
            const attend_real *restrict h = th + ((size_t)r * S + j) * A;
            attend_real *restrict dkrow = dkp ? dkp + ((size_t)n * S + j) * A : NULL;
            attend_real dc = 0;
            /* forward: th = tanh(qp + kp + wc·cov), e = v · th */
#pragma omp simd reduction(+ : dc)
            for (int a = 0; a < A; a++) {
                attend_real dpre = ds * v[a] * (1 - h[a] * h[a]);
                dqrow[a] += dpre;
                dc += dpre * wc[a];
            }
            if (dkrow)
#pragma omp simd
                for (int a = 0; a < A; a++) dkrow[a] += ds * v[a] * (1 - h[a] * h[a]);
            if (dcov) dcov[(size_t)r * S + j] += dc;
        }
    }
}

/* Rows [lo,hi) of N*T, forward or backward (at_parallel_rows' chunks; the
 * backward's are whole sequences of T rows: each adds into its dkp rows). */
typedef struct {
    attend_real *scores, *th, *qp, *dqp, *dkp, *dcov;
    const attend_real *kp, *cov, *dscores, *wc, *v;
    int T, S, A;
} coverage_job;

static void coverage_forward_chunk(void *p, int lo, int hi) {
    const coverage_job *j = p;
    coverage_forward(j->scores, j->th, j->qp, j->kp, j->cov, j->wc, j->v, lo, hi, j->T, j->S, j->A);
}

static void coverage_backward_chunk(void *p, int lo, int hi) {
    const coverage_job *j = p;
    coverage_backward(j->dqp, j->dkp, j->dcov, j->dscores, j->th, j->wc, j->v, lo, hi, j->T, j->S, j->A);
}

void at_coverage_scores_forward(const attend_score_config *cfg, const attend_score_params *p, const attend_real *w_cov,
                                attend_real *scores, attend_real *saved, const attend_real *q, const attend_real *kp,
                                const attend_real *cov, int N, int T, int S, int keep_tanh, const at_score_packs *pk) {
    // scores [N,T,S], saved [N,T,A] + [N,T,S,A] (keep_tanh), q [N,T,Dq], kp [N,S,A], cov [N,T,S], w_cov [A]
    const int A = cfg->A, Dq = cfg->Dq;
    attend_real *qp = saved;                                        /* [N,T,A] */
    attend_real *th = keep_tanh ? saved + (size_t)N * T * A : NULL; /* [N,T,S,A] */
    /* qp [NT,A] = q [NT,Dq] Wqᵀ */
    at_gemm_w(0, 1, N * T, A, Dq, 1, q, Dq, p->Wq, Dq, pk ? pk->wq : NULL, 0, qp, A);
    coverage_job j = {scores, th, qp, NULL, NULL, NULL, kp, cov, NULL, w_cov, p->v, T, S, A};
    at_parallel_rows((double)N * T * S * A * 14, N * T, 1, coverage_forward_chunk, &j);
}

void at_coverage_scores_backward(const attend_score_config *cfg, const attend_score_params *p,
                                 const attend_score_grads *g, const attend_real *w_cov, attend_real *g_wcov,
                                 attend_real *dq, attend_real *dkp, attend_real *dcov, const attend_real *dscores,
                                 attend_real *saved, const attend_real *q, const attend_real *cov, int N, int T,
                                 int S, const at_score_packs *pk) {
    // dq [N,T,Dq] +=, dkp [N,S,A] +=, dcov [N,T,S] +=, g_wcov [A] += (each or NULL); dscores [N,T,S],
    // saved (the forward's, keep_tanh), q [N,T,Dq], cov [N,T,S], w_cov [A]
    const int A = cfg->A, Dq = cfg->Dq;
    attend_real *dqp = saved;                          /* [N,T,A] scratch */
    const attend_real *th = saved + (size_t)N * T * A; /* [N,T,S,A] */
    coverage_job j = {NULL, (attend_real *)th, NULL, dqp, dkp, dcov, NULL, NULL, dscores, w_cov, p->v, T, S, A};
    at_parallel_rows((double)N * T * S * A * 6, N * T, T, coverage_backward_chunk, &j);
    /* gv [A] += Σ_{r,j} dscores[r,j] th[r,j,:]: dscores [1, NT·S] th [NT·S, A] */
    if (g && g->v) at_gemm(0, 0, 1, A, N * T * S, 1, dscores, N * T * S, th, A, 1, g->v, A);
    /* g_wcov [A] += Σ_{r,j} dscores[r,j] cov[r,j] v (1 − th[r,j,:]²) */
    if (g_wcov)
        for (size_t rj = 0; rj < (size_t)N * T * S; rj++) {
            attend_real u = dscores[rj] * cov[rj];
            if (u == 0) continue;
            const attend_real *h = th + rj * A;
            for (int a = 0; a < A; a++) g_wcov[a] += u * p->v[a] * (1 - h[a] * h[a]);
        }
    /* forward: qp = q Wqᵀ */
    if (dq) at_gemm_w(0, 0, N * T, Dq, A, 1, dqp, A, p->Wq, Dq, pk ? pk->wq_dx : NULL, 1, dq, Dq);
    if (g && g->Wq) at_gemm(1, 0, A, Dq, N * T, 1, dqp, A, q, Dq, 1, g->Wq, Dq);
}

static attend_status check(const char *who, const attend_score_config *cfg, const attend_score_params *p,
                           const attend_real *w_cov, const attend_real *saved, const attend_real *q,
                           const attend_real *kp, const attend_real *cov, int N, int T, int S, attend_error *err) {
    TRY(attend_score_config_check(cfg, err));
    CHECK(cfg->kind == ATTEND_SCORE_ADDITIVE, err, ATTEND_ERR_ARG,
          "%s: score kind %d: coverage is an input of the additive score only", who, (int)cfg->kind);
    CHECK(p && p->Wq && p->v && w_cov, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !p ? "score parameters" : !p->Wq ? "Wq [A,Dq]" : !p->v ? "v [A]" : "w_cov [A]");
    CHECK(saved && q && kp && cov, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !saved ? "saved (attend_scores_saved_size values)" : !q ? "q [N,T,Dq]" : !kp ? "kp [N,S,A]" : "cov [N,T,S]");
    return at_attention_check_dims(who, err, N, T, S, cfg->A > cfg->Dq ? cfg->A : cfg->Dq);
}

attend_status attend_coverage_scores_forward(const attend_score_config *cfg, const attend_score_params *p,
                                             const attend_real *w_cov, attend_real *scores, attend_real *saved,
                                             const attend_real *q, const attend_real *kp, const attend_real *cov,
                                             int N, int T, int S, attend_error *err) {
    const char *who = "attend_coverage_scores_forward";
    TRY(check(who, cfg, p, w_cov, saved, q, kp, cov, N, T, S, err));
    CHECK(scores, err, ATTEND_ERR_NULL, "%s: scores [N,T,S] is NULL", who);
    at_coverage_scores_forward(cfg, p, w_cov, scores, saved, q, kp, cov, N, T, S, 1, NULL);
    return at_ok(err);
}

attend_status attend_coverage_scores_backward(const attend_score_config *cfg, const attend_score_params *p,
                                              const attend_score_grads *g, const attend_real *w_cov,
                                              attend_real *g_wcov, attend_real *dq, attend_real *dkp,
                                              attend_real *dcov, const attend_real *dscores, attend_real *saved,
                                              const attend_real *q, const attend_real *kp, const attend_real *cov,
                                              int N, int T, int S, attend_error *err) {
    const char *who = "attend_coverage_scores_backward";
    TRY(check(who, cfg, p, w_cov, saved, q, kp, cov, N, T, S, err));
    CHECK(dscores, err, ATTEND_ERR_NULL, "%s: dscores [N,T,S] is NULL", who);
    at_coverage_scores_backward(cfg, p, g, w_cov, g_wcov, dq, dkp, dcov, dscores, saved, q, cov, N, T, S, NULL);
    return at_ok(err);
}
