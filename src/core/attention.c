/*
 * attention.c — score functions, context, and the one-shot soft attention
 * built from them and the masked softmax (softmax.c).
 *
 * Dimension letters: N batch, T query positions, S source positions,
 * Dq query width, Dk key width, Dv value width, A additive width,
 * P projected-key width (Dk, Dq or A by score kind). Row-major, last index
 * contiguous. Backward functions accumulate (+=) into gradients.
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "internal.h"
#include "core/attention.h"
#include "core/options.h"
#include "core/sparsemax.h"
#include "core/vmath.h"

static const char *kind_name(attend_score_kind kind) {
    switch (kind) {
    case ATTEND_SCORE_DOT: return "dot";
    case ATTEND_SCORE_SCALED_DOT: return "scaled_dot";
    case ATTEND_SCORE_GENERAL: return "general";
    case ATTEND_SCORE_ADDITIVE: return "additive";
    }
    return "unknown";
}


attend_status attend_score_config_check(const attend_score_config *cfg, attend_error *err) {
    CHECK(cfg, err, ATTEND_ERR_NULL, "score config is NULL");
    CHECK(cfg->kind >= ATTEND_SCORE_DOT && cfg->kind <= ATTEND_SCORE_ADDITIVE, err, ATTEND_ERR_ARG,
          "score config: unknown score kind %d", (int)cfg->kind);
    CHECK(cfg->Dq >= 1, err, ATTEND_ERR_SHAPE, "score config: query width Dq=%d, must be >= 1", cfg->Dq);
    CHECK(cfg->Dk >= 1, err, ATTEND_ERR_SHAPE, "score config: key width Dk=%d, must be >= 1", cfg->Dk);
    if (cfg->kind == ATTEND_SCORE_DOT || cfg->kind == ATTEND_SCORE_SCALED_DOT)
        CHECK(cfg->Dq == cfg->Dk, err, ATTEND_ERR_SHAPE,
              "%s score: query width Dq=%d must equal key width Dk=%d (use general or additive "
              "scores for different widths)", kind_name(cfg->kind), cfg->Dq, cfg->Dk);
    if (cfg->kind == ATTEND_SCORE_SCALED_DOT)
        CHECK(isfinite(cfg->scale) && cfg->scale >= 0, err, ATTEND_ERR_ARG,
              "scaled_dot score: scale=%g, must be finite and >= 0 (0 selects 1/sqrt(Dk))", cfg->scale);
    if (cfg->kind == ATTEND_SCORE_ADDITIVE)
        CHECK(cfg->A >= 1, err, ATTEND_ERR_SHAPE, "additive score: attention width A=%d, must be >= 1", cfg->A);
    return at_ok(err);
}

int attend_score_key_width(const attend_score_config *cfg) {
    if (attend_score_config_check(cfg, NULL) != ATTEND_OK) return 0;
    switch (cfg->kind) {
    case ATTEND_SCORE_DOT:
    case ATTEND_SCORE_SCALED_DOT: return cfg->Dk;
    case ATTEND_SCORE_GENERAL: return cfg->Dq;
    case ATTEND_SCORE_ADDITIVE: return cfg->A;
    }
    return 0;
}

double attend_score_effective_scale(const attend_score_config *cfg) {
    if (attend_score_config_check(cfg, NULL) != ATTEND_OK) return 0;
    switch (cfg->kind) {
    case ATTEND_SCORE_DOT:
    case ATTEND_SCORE_GENERAL: return 1.0;
    case ATTEND_SCORE_SCALED_DOT: return cfg->scale > 0 ? cfg->scale : 1.0 / sqrt((double)cfg->Dk);
    case ATTEND_SCORE_ADDITIVE: return 0.0;
    }
    return 0;
}

static attend_status check_params(const char *who, const attend_score_config *cfg,
                                  const attend_score_params *p, attend_error *err) {
    TRY(attend_score_config_check(cfg, err));
    CHECK(p, err, ATTEND_ERR_NULL, "%s: score parameters are NULL", who);
    if (cfg->kind == ATTEND_SCORE_GENERAL)
        CHECK(p->W, err, ATTEND_ERR_NULL, "%s: general score needs W [Dq,Dk], got NULL", who);
    if (cfg->kind == ATTEND_SCORE_ADDITIVE) {
        CHECK(p->Wq, err, ATTEND_ERR_NULL, "%s: additive score needs Wq [A,Dq], got NULL", who);
        CHECK(p->Wk, err, ATTEND_ERR_NULL, "%s: additive score needs Wk [A,Dk], got NULL", who);
        CHECK(p->v, err, ATTEND_ERR_NULL, "%s: additive score needs v [A], got NULL", who);
        CHECK(!cfg->additive_bias || p->b, err, ATTEND_ERR_NULL,
              "%s: additive score with additive_bias=1 needs b [A], got NULL", who);
    }
    return ATTEND_OK;
}

/* ------------------------------------------------------------------ keys */

void at_keys_forward(const attend_score_config *cfg, const attend_score_params *p, attend_real *kp,
                     const attend_real *k, int N, int S) {
    // kp [N,S,P], k [N,S,Dk]
    int P = attend_score_key_width(cfg), Dk = cfg->Dk;
    int rows = N * S;
    switch (cfg->kind) {
    case ATTEND_SCORE_DOT:
    case ATTEND_SCORE_SCALED_DOT:
        memcpy(kp, k, (size_t)rows * Dk * sizeof *kp);
        break;
    case ATTEND_SCORE_GENERAL: /* kp [NS,Dq] = k [NS,Dk] Wᵀ, W [Dq,Dk] */
        at_gemm(0, 1, rows, P, Dk, 1, k, Dk, p->W, Dk, 0, kp, P);
        break;
    case ATTEND_SCORE_ADDITIVE: /* kp [NS,A] = k [NS,Dk] Wkᵀ + b */
        at_gemm(0, 1, rows, P, Dk, 1, k, Dk, p->Wk, Dk, 0, kp, P);
        if (cfg->additive_bias) at_rows_add(kp, p->b, (size_t)rows, P);
        break;
    }
}

attend_status attend_keys_forward(const attend_score_config *cfg, const attend_score_params *p,
                                  attend_real *kp, const attend_real *k, int N, int S,
                                  attend_error *err) {
    const char *who = "attend_keys_forward";
    TRY(check_params(who, cfg, p, err));
    CHECK(kp && k, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !kp ? "kp [N,S,P]" : "k [N,S,Dk]");
    int P = attend_score_key_width(cfg), Dk = cfg->Dk;
    TRY(at_attention_check_dims(who, err, N, 1, S, P > Dk ? P : Dk));
    at_keys_forward(cfg, p, kp, k, N, S);
    return at_ok(err);
}

void at_keys_backward(const attend_score_config *cfg, const attend_score_params *p, const attend_score_grads *g,
                      attend_real *dk, const attend_real *dkp, const attend_real *k, int N, int S) {
    // dk [N,S,Dk] += (or NULL), dkp [N,S,P], k [N,S,Dk]
    int P = attend_score_key_width(cfg), Dk = cfg->Dk;
    int rows = N * S;
    switch (cfg->kind) {
    case ATTEND_SCORE_DOT:
    case ATTEND_SCORE_SCALED_DOT: /* forward: kp = k */
        if (dk)
            for (size_t i = 0; i < (size_t)rows * Dk; i++) dk[i] += dkp[i];
        break;
    case ATTEND_SCORE_GENERAL: /* forward: kp = k Wᵀ */
        if (dk) at_gemm(0, 0, rows, Dk, P, 1, dkp, P, p->W, Dk, 1, dk, Dk);
        if (g && g->W) at_gemm(1, 0, P, Dk, rows, 1, dkp, P, k, Dk, 1, g->W, Dk);
        break;
    case ATTEND_SCORE_ADDITIVE: /* forward: kp = k Wkᵀ + b */
        if (dk) at_gemm(0, 0, rows, Dk, P, 1, dkp, P, p->Wk, Dk, 1, dk, Dk);
        if (g && g->Wk) at_gemm(1, 0, P, Dk, rows, 1, dkp, P, k, Dk, 1, g->Wk, Dk);
        if (g && g->b && cfg->additive_bias) at_rows_sum(g->b, dkp, (size_t)rows, P);
        break;
    }
}

attend_status attend_keys_backward(const attend_score_config *cfg, const attend_score_params *p,
                                   const attend_score_grads *g, attend_real *dk,
                                   const attend_real *dkp, const attend_real *k, int N, int S,
                                   attend_error *err) {
    const char *who = "attend_keys_backward";
    TRY(check_params(who, cfg, p, err));
    CHECK(dkp && k, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !dkp ? "dkp [N,S,P]" : "k [N,S,Dk]");
    int P = attend_score_key_width(cfg), Dk = cfg->Dk;
    TRY(at_attention_check_dims(who, err, N, 1, S, P > Dk ? P : Dk));
    at_keys_backward(cfg, p, g, dk, dkp, k, N, S);
    return at_ok(err);
}

/* ---------------------------------------------------------------- scores */

size_t attend_scores_saved_size(const attend_score_config *cfg, int N, int T, int S, int *overflow) {
    if (overflow) *overflow = 0;
    if (attend_score_config_check(cfg, NULL) != ATTEND_OK || cfg->kind != ATTEND_SCORE_ADDITIVE) return 0;
    size_t qp, th, total;
    if (!at_count(&qp, 3, N, T, cfg->A) || !at_count(&th, 4, N, T, S, cfg->A) ||
        !at_add_size(qp, th, &total)) {
        if (overflow) *overflow = 1;
        return 0;
    }
    return total;
}

/* Rows r = (n, t) in [r0, r1) of the additive score:
 * forward:  th[r,j,:] = tanh(qp[r,:] + kp[n,j,:]),  scores[r,j] = v · th[r,j,:]
 * (th NULL: the tanh is not stored; inference needs no backward). */
AT_KERNEL_VOID(static, additive_forward,
               (attend_real *restrict scores, attend_real *restrict th, const attend_real *restrict qp,
                const attend_real *restrict kp, const attend_real *restrict v, int r0, int r1, int T, int S, int A),
               (scores, th, qp, kp, v, r0, r1, T, S, A)) {
    // scores [NT,S], th [NT,S,A] (NULL: not saved), qp [NT,A], kp [N,S,A], v [A]
    for (int r = r0; r < r1; r++) {
        const int n = r / T;
        const attend_real *restrict qrow = qp + (size_t)r * A;
        for (int j = 0; j < S; j++) {
            const attend_real *restrict krow = kp + ((size_t)n * S + j) * A;
            attend_real e = 0;
            if (th) {
                attend_real *restrict h = th + ((size_t)r * S + j) * A;
#pragma omp simd reduction(+ : e)
                for (int a = 0; a < A; a++) {
                    attend_real x = at_vtanh(qrow[a] + krow[a]);
                    h[a] = x;
                    e += v[a] * x;
                }
            } else {
#pragma omp simd reduction(+ : e)
                for (int a = 0; a < A; a++) e += v[a] * at_vtanh(qrow[a] + krow[a]);
            }
            scores[(size_t)r * S + j] = e;
        }
    }
}

/* Backward of additive_forward for rows [r0, r1): dqp [NT,A] = (overwritten),
 * dkp [N,S,A] += (may be NULL). Rows of one batch entry n share dkp[n], so a
 * thread's [r0, r1) must hold whole entries (multiples of T). The gradient of
 * v, shared by all rows, is a separate product (additive_v_grad). */
AT_KERNEL_VOID(static, additive_backward,
               (attend_real *restrict dqp, attend_real *restrict dkp, const attend_real *restrict dscores,
                const attend_real *restrict th, const attend_real *restrict v, int r0, int r1, int T, int S, int A),
               (dqp, dkp, dscores, th, v, r0, r1, T, S, A)) {
    for (int r = r0; r < r1; r++) {
        const int n = r / T;
        attend_real *restrict dqrow = dqp + (size_t)r * A;
        for (int a = 0; a < A; a++) dqrow[a] = 0;
        for (int j = 0; j < S; j++) {
            attend_real ds = dscores[(size_t)r * S + j];
            if (ds == 0) continue;
            const attend_real *restrict h = th + ((size_t)r * S + j) * A;
            if (dkp) {
                attend_real *restrict dkrow = dkp + ((size_t)n * S + j) * A;
#pragma omp simd
                for (int a = 0; a < A; a++) {
                    attend_real dpre = ds * v[a] * (1 - h[a] * h[a]);
                    dqrow[a] += dpre;
                    dkrow[a] += dpre;
                }
            } else {
#pragma omp simd
                for (int a = 0; a < A; a++) dqrow[a] += ds * v[a] * (1 - h[a] * h[a]);
            }
        }
    }
}

void at_scores_forward(const attend_score_config *cfg, const attend_score_params *p, attend_real *scores,
                       attend_real *saved, const attend_real *q, const attend_real *kp, int N, int T, int S,
                       const at_score_packs *pk) {
    // scores [N,T,S], saved (ADDITIVE: attend_scores_saved_size values), q [N,T,Dq], kp [N,S,P]
    if (cfg->kind != ATTEND_SCORE_ADDITIVE) {
        int P = attend_score_key_width(cfg), Dq = cfg->Dq;
        /* scores[n] [T,S] = scale · q[n] [T,Dq] kp[n]ᵀ [P=Dq,S] */
        attend_real scale = (attend_real)attend_score_effective_scale(cfg);
        at_gemm_batched(N, 0, 1, T, S, Dq, scale, q, Dq, (size_t)T * Dq, kp, P, (size_t)S * P, 0,
                        scores, S, (size_t)T * S);
        return;
    }
    at_additive_scores(cfg, p, scores, saved, q, kp, N, T, S, 1, pk);
}

attend_status attend_scores_forward(const attend_score_config *cfg, const attend_score_params *p,
                                    attend_real *scores, attend_real *saved,
                                    const attend_real *q, const attend_real *kp,
                                    int N, int T, int S, attend_error *err) {
    const char *who = "attend_scores_forward";
    TRY(check_params(who, cfg, p, err));
    CHECK(scores && q && kp, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !scores ? "scores [N,T,S]" : !q ? "q [N,T,Dq]" : "kp [N,S,P]");
    int P = attend_score_key_width(cfg), Dq = cfg->Dq;
    TRY(at_attention_check_dims(who, err, N, T, S, P > Dq ? P : Dq));
    CHECK(cfg->kind != ATTEND_SCORE_ADDITIVE || saved, err, ATTEND_ERR_NULL,
          "%s: additive score needs saved (attend_scores_saved_size values), got NULL", who);
    at_scores_forward(cfg, p, scores, saved, q, kp, N, T, S, NULL);
    return at_ok(err);
}

/* The additive score's rows [lo,hi) of N*T, forward or backward
 * (at_parallel_rows' chunks; the backward's chunks are whole sequences of T
 * rows, as each adds into its sequence's dkp rows). */
typedef struct {
    attend_real *scores, *th, *qp, *dqp, *dkp;
    const attend_real *kp, *dscores, *v;
    int T, S, A;
} additive_job;

static void additive_forward_chunk(void *p, int lo, int hi) {
    const additive_job *j = p;
    additive_forward(j->scores, j->th, j->qp, j->kp, j->v, lo, hi, j->T, j->S, j->A);
}

static void additive_backward_chunk(void *p, int lo, int hi) {
    const additive_job *j = p;
    additive_backward(j->dqp, j->dkp, j->dscores, j->th, j->v, lo, hi, j->T, j->S, j->A);
}

void at_additive_scores(const attend_score_config *cfg, const attend_score_params *p, attend_real *scores,
                        attend_real *saved, const attend_real *q, const attend_real *kp, int N, int T, int S,
                        int keep_tanh, const at_score_packs *pk) {
    // scores [N,T,S], saved [N,T,A] + [N,T,S,A] (keep_tanh), q [N,T,Dq], kp [N,S,A]
    const int A = cfg->A, Dq = cfg->Dq;
    attend_real *qp = saved;                                        /* [N,T,A] */
    attend_real *th = keep_tanh ? saved + (size_t)N * T * A : NULL; /* [N,T,S,A] */
    /* qp [NT,A] = q [NT,Dq] Wqᵀ */
    at_gemm_w(0, 1, N * T, A, Dq, 1, q, Dq, p->Wq, Dq, pk ? pk->wq : NULL, 0, qp, A);
    additive_job j = {scores, th, qp, NULL, NULL, kp, NULL, p->v, T, S, A};
    at_parallel_rows((double)N * T * S * A * 12, N * T, 1, additive_forward_chunk, &j);
}

void at_scores_backward(const attend_score_config *cfg, const attend_score_params *p, const attend_score_grads *g,
                        attend_real *dq, attend_real *dkp, const attend_real *dscores, attend_real *saved,
                        const attend_real *q, const attend_real *kp, int N, int T, int S, const at_score_packs *pk) {
    // dq [N,T,Dq] += (or NULL), dkp [N,S,P] += (or NULL), dscores [N,T,S], saved (the forward's), q [N,T,Dq], kp [N,S,P]
    int P = attend_score_key_width(cfg), Dq = cfg->Dq;
    if (cfg->kind != ATTEND_SCORE_ADDITIVE) {
        /* forward: scores[n] = scale · q[n] kp[n]ᵀ */
        attend_real scale = (attend_real)attend_score_effective_scale(cfg);
        if (dq) /* dq[n] [T,Dq] += scale · dscores[n] [T,S] kp[n] [S,Dq] */
            at_gemm_batched(N, 0, 0, T, Dq, S, scale, dscores, S, (size_t)T * S, kp, P,
                            (size_t)S * P, 1, dq, Dq, (size_t)T * Dq);
        if (dkp) /* dkp[n] [S,Dq] += scale · dscores[n]ᵀ [S,T] q[n] [T,Dq] */
            at_gemm_batched(N, 1, 0, S, Dq, T, scale, dscores, S, (size_t)T * S, q, Dq,
                            (size_t)T * Dq, 1, dkp, P, (size_t)S * P);
        return;
    }
    int A = cfg->A;
    attend_real *dqp = saved;                              /* [N,T,A] scratch */
    const attend_real *th = saved + (size_t)N * T * A;     /* [N,T,S,A] */
    additive_job j = {NULL, (attend_real *)th, NULL, dqp, dkp, NULL, dscores, p->v, T, S, A};
    at_parallel_rows((double)N * T * S * A * 4, N * T, T, additive_backward_chunk, &j);
    /* gv [A] += Σ_{r,j} dscores[r,j] th[r,j,:]: dscores [1, NT·S] th [NT·S, A] */
    if (g && g->v) at_gemm(0, 0, 1, A, N * T * S, 1, dscores, N * T * S, th, A, 1, g->v, A);
    /* forward: qp = q Wqᵀ */
    if (dq) at_gemm_w(0, 0, N * T, Dq, A, 1, dqp, A, p->Wq, Dq, pk ? pk->wq_dx : NULL, 1, dq, Dq);
    if (g && g->Wq) at_gemm(1, 0, A, Dq, N * T, 1, dqp, A, q, Dq, 1, g->Wq, Dq);
}

attend_status attend_scores_backward(const attend_score_config *cfg, const attend_score_params *p,
                                     const attend_score_grads *g, attend_real *dq,
                                     attend_real *dkp, const attend_real *dscores,
                                     attend_real *saved, const attend_real *q,
                                     const attend_real *kp, int N, int T, int S,
                                     attend_error *err) {
    const char *who = "attend_scores_backward";
    TRY(check_params(who, cfg, p, err));
    CHECK(dscores && q && kp, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !dscores ? "dscores [N,T,S]" : !q ? "q [N,T,Dq]" : "kp [N,S,P]");
    int P = attend_score_key_width(cfg), Dq = cfg->Dq;
    TRY(at_attention_check_dims(who, err, N, T, S, P > Dq ? P : Dq));
    CHECK(cfg->kind != ATTEND_SCORE_ADDITIVE || saved, err, ATTEND_ERR_NULL,
          "%s: additive score needs the forward's saved values, got NULL", who);
    at_scores_backward(cfg, p, g, dq, dkp, dscores, saved, q, kp, N, T, S, NULL);
    return at_ok(err);
}

/* --------------------------------------------------------------- context */

void at_context_forward(attend_real *ctx, const attend_real *weights, const attend_real *v, int N, int T, int S,
                        int Dv) {
    // ctx [N,T,Dv], weights [N,T,S], v [N,S,Dv]
    /* ctx[n] [T,Dv] = weights[n] [T,S] v[n] [S,Dv] */
    at_gemm_batched(N, 0, 0, T, Dv, S, 1, weights, S, (size_t)T * S, v, Dv, (size_t)S * Dv, 0,
                    ctx, Dv, (size_t)T * Dv);
}

attend_status attend_context_forward(attend_real *ctx, const attend_real *weights,
                                     const attend_real *v, int N, int T, int S, int Dv,
                                     attend_error *err) {
    const char *who = "attend_context_forward";
    CHECK(ctx && weights && v, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !ctx ? "ctx [N,T,Dv]" : !weights ? "weights [N,T,S]" : "v [N,S,Dv]");
    TRY(at_attention_check_dims(who, err, N, T, S, Dv));
    at_context_forward(ctx, weights, v, N, T, S, Dv);
    return at_ok(err);
}

void at_context_backward(attend_real *dweights, attend_real *dv, const attend_real *dctx, const attend_real *weights,
                         const attend_real *v, int N, int T, int S, int Dv) {
    // dweights [N,T,S] += (or NULL), dv [N,S,Dv] += (or NULL), dctx [N,T,Dv], weights [N,T,S], v [N,S,Dv]
    /* forward: ctx[n] = weights[n] v[n] */
    if (dweights) /* dweights[n] [T,S] += dctx[n] [T,Dv] v[n]ᵀ [Dv,S] */
        at_gemm_batched(N, 0, 1, T, S, Dv, 1, dctx, Dv, (size_t)T * Dv, v, Dv, (size_t)S * Dv, 1,
                        dweights, S, (size_t)T * S);
    if (dv) /* dv[n] [S,Dv] += weights[n]ᵀ [S,T] dctx[n] [T,Dv] */
        at_gemm_batched(N, 1, 0, S, Dv, T, 1, weights, S, (size_t)T * S, dctx, Dv, (size_t)T * Dv, 1,
                        dv, Dv, (size_t)S * Dv);
}

attend_status attend_context_backward(attend_real *dweights, attend_real *dv,
                                      const attend_real *dctx, const attend_real *weights,
                                      const attend_real *v, int N, int T, int S, int Dv,
                                      attend_error *err) {
    const char *who = "attend_context_backward";
    CHECK(dctx && weights && v, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !dctx ? "dctx [N,T,Dv]" : !weights ? "weights [N,T,S]" : "v [N,S,Dv]");
    TRY(at_attention_check_dims(who, err, N, T, S, Dv));
    at_context_backward(dweights, dv, dctx, weights, v, N, T, S, Dv);
    return at_ok(err);
}

/* ---------------------------------------------------- one-shot attention */

/* Workspace layout (attend_real values):
 *   kp [N,S,P] | scores [N,T,S] | saved (attend_scores_saved_size) | dweights [N,T,S] | dkp [N,S,P]
 * Backward reuses the scores region for dscores. */
typedef struct {
    attend_real *kp, *scores, *saved, *dweights, *dkp;
    size_t total;
} attention_ws;

static int attention_ws_layout(const attend_score_config *cfg, int N, int T, int S,
                               attend_real *base, attention_ws *ws) {
    int P = attend_score_key_width(cfg);
    if (P < 1) return 0;
    size_t nkp, nsc, nsaved, total = 0;
    int overflow = 0;
    if (!at_count(&nkp, 3, N, S, P) || !at_count(&nsc, 3, N, T, S)) return 0;
    nsaved = attend_scores_saved_size(cfg, N, T, S, &overflow);
    if (overflow) return 0;
    size_t sizes[5] = {nkp, nsc, nsaved, nsc, nkp};
    attend_real **slots[5] = {&ws->kp, &ws->scores, &ws->saved, &ws->dweights, &ws->dkp};
    for (int i = 0; i < 5; i++) {
        *slots[i] = base ? base + total : NULL;
        if (!at_add_size(total, sizes[i], &total)) return 0;
    }
    if (total > SIZE_MAX / sizeof(attend_real)) return 0;
    ws->total = total;
    return 1;
}

size_t attend_attention_workspace_size(const attend_score_config *cfg, int N, int T, int S) {
    attention_ws ws;
    if (N < 1 || T < 1 || S < 1 || !attention_ws_layout(cfg, N, T, S, NULL, &ws)) return 0;
    return ws.total;
}

static attend_status check_attention_args(const char *who, const attend_score_config *cfg,
                                          const attend_score_params *p, int N, int T, int S, int Dv,
                                          attend_real *workspace, size_t workspace_len,
                                          attention_ws *ws, attend_error *err) {
    TRY(check_params(who, cfg, p, err));
    int P = attend_score_key_width(cfg);
    int widest = P;
    if (cfg->Dq > widest) widest = cfg->Dq;
    if (cfg->Dk > widest) widest = cfg->Dk;
    if (Dv > widest) widest = Dv;
    TRY(at_attention_check_dims(who, err, N, T, S, widest));
    CHECK(Dv >= 1, err, ATTEND_ERR_SHAPE, "%s: value width Dv=%d, must be >= 1", who, Dv);
    CHECK(workspace, err, ATTEND_ERR_NULL, "%s: workspace is NULL", who);
    CHECK(attention_ws_layout(cfg, N, T, S, workspace, ws), err, ATTEND_ERR_SHAPE,
          "%s: workspace size overflows for N=%d T=%d S=%d", who, N, T, S);
    CHECK(workspace_len >= ws->total, err, ATTEND_ERR_CAPACITY,
          "%s: workspace holds %zu values, needs %zu (attend_attention_workspace_size)", who,
          workspace_len, ws->total);
    return ATTEND_OK;
}

static attend_status attention_forward(const char *who, const attend_score_config *cfg, const attend_score_params *p,
                                       attend_normalizer normalizer, attend_real *ctx, attend_real *weights,
                                       const attend_real *q, const attend_real *k, const attend_real *v,
                                       const uint8_t *valid, const uint8_t *allowed, int causal, int N, int T, int S,
                                       int Dv, attend_real *workspace, size_t workspace_len, attend_error *err) {
    attention_ws ws;
    TRY(at_normalizer_check(normalizer, who, err));
    TRY(check_attention_args(who, cfg, p, N, T, S, Dv, workspace, workspace_len, &ws, err));
    CHECK(ctx && weights && q && k && v, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !ctx ? "ctx [N,T,Dv]" : !weights ? "weights [N,T,S]" : !q ? "q [N,T,Dq]" : !k ? "k [N,S,Dk]" : "v [N,S,Dv]");
    at_keys_forward(cfg, p, ws.kp, k, N, S);
    at_scores_forward(cfg, p, ws.scores, ws.saved, q, ws.kp, N, T, S, NULL);
    /* masks (and the scores' finiteness) are validated before weights or ctx are touched */
    TRY(at_masked_softmax_check(ws.scores, valid, allowed, causal, N, T, S, 1, who, err));
    at_masked_normalize_forward((int)normalizer, weights, ws.scores, valid, allowed, causal, N, T, S, 1);
    at_context_forward(ctx, weights, v, N, T, S, Dv);
    return at_ok(err);
}

attend_status attend_attention_forward(const attend_score_config *cfg,
                                       const attend_score_params *p, attend_real *ctx,
                                       attend_real *weights, const attend_real *q,
                                       const attend_real *k, const attend_real *v,
                                       const uint8_t *valid, const uint8_t *allowed, int causal,
                                       int N, int T, int S, int Dv, attend_real *workspace,
                                       size_t workspace_len, attend_error *err) {
    return attention_forward("attend_attention_forward", cfg, p, ATTEND_NORMALIZER_SOFTMAX, ctx, weights, q, k, v,
                             valid, allowed, causal, N, T, S, Dv, workspace, workspace_len, err);
}

attend_status attend_attention_forward_normalized(const attend_score_config *cfg, const attend_score_params *p,
                                                  attend_normalizer normalizer, attend_real *ctx,
                                                  attend_real *weights, const attend_real *q, const attend_real *k,
                                                  const attend_real *v, const uint8_t *valid,
                                                  const uint8_t *allowed, int causal, int N, int T, int S, int Dv,
                                                  attend_real *workspace, size_t workspace_len, attend_error *err) {
    return attention_forward("attend_attention_forward_normalized", cfg, p, normalizer, ctx, weights, q, k, v, valid,
                             allowed, causal, N, T, S, Dv, workspace, workspace_len, err);
}

attend_status attend_attention_compute(const attend_score_config *cfg, const attend_score_params *p,
                                       const attend_attention_options *o, attend_real *ctx, attend_real *weights,
                                       const attend_real *q, const attend_real *k, const attend_real *v, int N, int T,
                                       int S, int Dv, attend_real *workspace, size_t workspace_len, attend_error *err) {
    const char *who = "attend_attention_compute";
    attend_attention_options d;
    memset(&d, 0, sizeof d);
    if (o) TRY(at_options_read(&d, sizeof d, o, o->size, "attend_attention_options", who, err));
    return attention_forward(who, cfg, p, d.normalizer, ctx, weights, q, k, v, d.valid, d.allowed, d.causal, N, T, S,
                             Dv, workspace, workspace_len, err);
}

static attend_status attention_backward(const char *who, const attend_score_config *cfg, const attend_score_params *p,
                                        attend_normalizer normalizer, const attend_score_grads *g, attend_real *dq,
                                        attend_real *dk, attend_real *dv, const attend_real *dctx,
                                        const attend_real *dweights, const attend_real *weights, const attend_real *q,
                                        const attend_real *k, const attend_real *v, int N, int T, int S, int Dv,
                                        attend_real *workspace, size_t workspace_len, attend_error *err) {
    attention_ws ws;
    TRY(at_normalizer_check(normalizer, who, err));
    TRY(check_attention_args(who, cfg, p, N, T, S, Dv, workspace, workspace_len, &ws, err));
    CHECK(dctx && weights && q && k && v, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !dctx ? "dctx [N,T,Dv]" : !weights ? "weights [N,T,S]" : !q ? "q [N,T,Dq]" : !k ? "k [N,S,Dk]" : "v [N,S,Dv]");
    size_t nsc = (size_t)N * T * S, nkp = (size_t)N * S * attend_score_key_width(cfg);
    /* dweights = (caller's loss on the weights) + ∂ctx/∂weights */
    if (dweights) memcpy(ws.dweights, dweights, nsc * sizeof *ws.dweights);
    else memset(ws.dweights, 0, nsc * sizeof *ws.dweights);
    at_context_backward(ws.dweights, dv, dctx, weights, v, N, T, S, Dv);
    attend_real *dscores = ws.scores; /* scores are not needed by backward */
    memset(dscores, 0, nsc * sizeof *dscores);
    /* forward: weights = normalizer(scores) */
    at_normalize_backward((int)normalizer, dscores, ws.dweights, weights, (size_t)N * T, S);
    memset(ws.dkp, 0, nkp * sizeof *ws.dkp);
    at_scores_backward(cfg, p, g, dq, ws.dkp, dscores, ws.saved, q, ws.kp, N, T, S, NULL);
    at_keys_backward(cfg, p, g, dk, ws.dkp, k, N, S);
    return at_ok(err);
}

attend_status attend_attention_backward(const attend_score_config *cfg,
                                        const attend_score_params *p, const attend_score_grads *g,
                                        attend_real *dq, attend_real *dk, attend_real *dv,
                                        const attend_real *dctx, const attend_real *dweights,
                                        const attend_real *weights, const attend_real *q,
                                        const attend_real *k, const attend_real *v, int N, int T,
                                        int S, int Dv, attend_real *workspace,
                                        size_t workspace_len, attend_error *err) {
    return attention_backward("attend_attention_backward", cfg, p, ATTEND_NORMALIZER_SOFTMAX, g, dq, dk, dv, dctx,
                              dweights, weights, q, k, v, N, T, S, Dv, workspace, workspace_len, err);
}

attend_status attend_attention_backward_normalized(const attend_score_config *cfg, const attend_score_params *p,
                                                   attend_normalizer normalizer, const attend_score_grads *g,
                                                   attend_real *dq, attend_real *dk, attend_real *dv,
                                                   const attend_real *dctx, const attend_real *dweights,
                                                   const attend_real *weights, const attend_real *q,
                                                   const attend_real *k, const attend_real *v, int N, int T, int S,
                                                   int Dv, attend_real *workspace, size_t workspace_len,
                                                   attend_error *err) {
    return attention_backward("attend_attention_backward_normalized", cfg, p, normalizer, g, dq, dk, dv, dctx,
                              dweights, weights, q, k, v, N, T, S, Dv, workspace, workspace_len, err);
}

attend_status attend_attention_gradient(const attend_score_config *cfg, const attend_score_params *p,
                                        const attend_attention_options *o, const attend_score_grads *g,
                                        attend_real *dq, attend_real *dk, attend_real *dv, const attend_real *dctx,
                                        const attend_real *dweights, const attend_real *weights,
                                        const attend_real *q, const attend_real *k, const attend_real *v, int N,
                                        int T, int S, int Dv, attend_real *workspace, size_t workspace_len,
                                        attend_error *err) {
    const char *who = "attend_attention_gradient";
    attend_attention_options d;
    memset(&d, 0, sizeof d);
    if (o) TRY(at_options_read(&d, sizeof d, o, o->size, "attend_attention_options", who, err));
    return attention_backward(who, cfg, p, d.normalizer, g, dq, dk, dv, dctx, dweights, weights, q, k, v, N, T, S, Dv,
                              workspace, workspace_len, err);
}
