/*
 * mha.c — multi-head attention with the semantics of PyTorch's
 * nn.MultiheadAttention (batch_first, no dropout), and self-attention.
 *
 * Dimension letters (the project table, src/seq2seq/state.h): N
 * batch, T query positions, S source positions, D embed (model) width, H
 * heads, dh = D/H head width, Kd/Vd (kdim/vdim) key/value input widths. The
 * public config field attend_mha_config.E is this embed width D (the field
 * keeps PyTorch's embed_dim letter; E elsewhere is the encoder output width).
 * Projections are kept in the flat [N,T,D] layout; head h is the column block
 * [h*dh, (h+1)*dh), reached with a row stride of D, so no transposes are needed.
 * Backward functions accumulate (+=) into gradients. Checked at the door: the
 * public attend_* forms validate and call the unchecked at_* forms (core/mha.h).
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "internal.h"
#include "core/attention.h"
#include "core/mha.h"

static int kdim_of(const attend_mha_config *c) { return c->kdim > 0 ? c->kdim : c->E; }
static int vdim_of(const attend_mha_config *c) { return c->vdim > 0 ? c->vdim : c->E; }

attend_status attend_mha_config_check(const attend_mha_config *cfg, attend_error *err) {
    CHECK(cfg, err, ATTEND_ERR_NULL, "multi-head config is NULL");
    CHECK(cfg->E >= 1, err, ATTEND_ERR_SHAPE, "multi-head config: embed width E=%d, must be >= 1", cfg->E);
    CHECK(cfg->H >= 1, err, ATTEND_ERR_SHAPE, "multi-head config: heads H=%d, must be >= 1", cfg->H);
    CHECK(cfg->E % cfg->H == 0, err, ATTEND_ERR_SHAPE,
          "multi-head config: embed width E=%d is not divisible by heads H=%d", cfg->E, cfg->H);
    CHECK(cfg->kdim >= 0 && cfg->vdim >= 0, err, ATTEND_ERR_SHAPE,
          "multi-head config: kdim=%d vdim=%d, must be >= 0 (0 means E)", cfg->kdim, cfg->vdim);
    return at_ok(err);
}

/* Workspace layout (attend_real values):
 *   Q [N,T,D] | K [N,S,D] | V [N,S,D] | Sc [N,H,T,S] | P [N,H,T,S] | O [N,T,D]      (forward)
 *   dO [N,T,D] | dP [N,H,T,S] | dQ [N,T,D] | dK [N,S,D] | dV [N,S,D]              (backward)
 * Backward reuses Sc for d(scores). */
typedef struct {
    attend_real *Q, *K, *V, *Sc, *P, *O, *dO, *dP, *dQ, *dK, *dV;
    size_t total;
} mha_ws;

/* The slots of the layout above at base (NULL: sizes only); 0 when a size
 * overflows. The unchecked kernels call it on sizes their caller checked. */
static int mha_slots(const attend_mha_config *cfg, int N, int T, int S, attend_real *base, mha_ws *ws) {
    size_t nte, nse, nhts;
    if (!at_count(&nte, 3, N, T, cfg->E) || !at_count(&nse, 3, N, S, cfg->E) ||
        !at_count(&nhts, 4, N, cfg->H, T, S))
        return 0;
    size_t sizes[11] = {nte, nse, nse, nhts, nhts, nte, nte, nhts, nte, nse, nse};
    attend_real **slots[11] = {&ws->Q, &ws->K, &ws->V, &ws->Sc, &ws->P, &ws->O,
                               &ws->dO, &ws->dP, &ws->dQ, &ws->dK, &ws->dV};
    size_t total = 0;
    for (int i = 0; i < 11; i++) {
        *slots[i] = base ? base + total : NULL;
        if (!at_add_size(total, sizes[i], &total)) return 0;
    }
    if (total > SIZE_MAX / sizeof(attend_real)) return 0;
    ws->total = total;
    return 1;
}

static int mha_layout(const attend_mha_config *cfg, int N, int T, int S, attend_real *base, mha_ws *ws) {
    if (attend_mha_config_check(cfg, NULL) != ATTEND_OK) return 0;
    return mha_slots(cfg, N, T, S, base, ws);
}

size_t attend_mha_workspace_size(const attend_mha_config *cfg, int N, int T, int S) {
    mha_ws ws;
    if (N < 1 || T < 1 || S < 1 || !mha_layout(cfg, N, T, S, NULL, &ws)) return 0;
    return ws.total;
}

static attend_status check_mha(const char *who, const attend_mha_config *cfg, const attend_mha_params *p,
                               int N, int T, int S, attend_real *workspace, size_t workspace_len,
                               mha_ws *ws, attend_error *err) {
    TRY(attend_mha_config_check(cfg, err));
    CHECK(p, err, ATTEND_ERR_NULL, "%s: parameters are NULL", who);
    CHECK(p->Wq && p->Wk && p->Wv && p->Wo, err, ATTEND_ERR_NULL, "%s: weight %s is NULL", who,
          !p->Wq ? "Wq [E,E]" : !p->Wk ? "Wk [E,kdim]" : !p->Wv ? "Wv [E,vdim]" : "Wo [E,E]");
    CHECK(!cfg->bias || (p->bq && p->bk && p->bv && p->bo), err, ATTEND_ERR_NULL,
          "%s: bias=1 but bias %s is NULL", who, !p->bq ? "bq" : !p->bk ? "bk" : !p->bv ? "bv" : "bo");
    CHECK(N >= 1 && T >= 1 && S >= 1, err, ATTEND_ERR_SHAPE,
          "%s: N=%d T=%d S=%d; every dimension must be >= 1", who, N, T, S);
    size_t n;
    CHECK(at_count(&n, 2, N, T) && n <= INT_MAX && at_count(&n, 2, N, S) && n <= INT_MAX,
          err, ATTEND_ERR_SHAPE, "%s: sizes N=%d T=%d S=%d overflow", who, N, T, S);
    CHECK(workspace, err, ATTEND_ERR_NULL, "%s: workspace is NULL", who);
    CHECK(mha_layout(cfg, N, T, S, workspace, ws), err, ATTEND_ERR_SHAPE,
          "%s: workspace size overflows for N=%d T=%d S=%d E=%d H=%d", who, N, T, S, cfg->E, cfg->H);
    CHECK(workspace_len >= ws->total, err, ATTEND_ERR_CAPACITY,
          "%s: workspace holds %zu values, needs %zu (attend_mha_workspace_size)", who, workspace_len,
          ws->total);
    return ATTEND_OK;
}

/* Y [M,D] = X [M,I] Wᵀ + b, W [D,I] */
static void project(attend_real *Y, const attend_real *X, const attend_real *W, const attend_real *b,
                    int M, int I, int D) {
    at_gemm(0, 1, M, D, I, 1, X, I, W, I, 0, Y, D);
    if (b) at_rows_add(Y, b, (size_t)M, D);
}

/* forward: Y = X Wᵀ + b  ⇒  dX += dY W,  dW += dYᵀ X,  db += Σ_rows dY */
static void project_backward(attend_real *dX, attend_real *dW, attend_real *db, const attend_real *dY,
                             const attend_real *X, const attend_real *W, int M, int I, int D) {
    if (dX) at_gemm(0, 0, M, I, D, 1, dY, D, W, I, 1, dX, I);
    if (dW) at_gemm(1, 0, D, I, M, 1, dY, D, X, I, 1, dW, I);
    if (db) at_rows_sum(db, dY, (size_t)M, D);
}

/* The forward after its arguments were checked; returns only the data check
 * of the masked softmax (a NaN score, a row with every position masked),
 * which can only run once the scores exist, and writes out/weights only then. */
static attend_status mha_forward(const attend_mha_config *cfg, const attend_mha_params *p, attend_real *out,
                                 attend_real *weights, int average_weights, const attend_real *q, const attend_real *k,
                                 const attend_real *v, const uint8_t *valid, const uint8_t *allowed, int causal, int N,
                                 int T, int S, attend_real *workspace, int check, const at_mha_hook *hook,
                                 const char *who, attend_error *err) {
    // out [N,T,D], weights [N,H,T,S] or [N,T,S] (average_weights) or NULL, q [N,T,D], k [N,S,Kd],
    // v [N,S,Vd], valid [N,S] or NULL, allowed [T,S] or NULL, workspace [attend_mha_workspace_size]
    mha_ws ws;
    mha_slots(cfg, N, T, S, workspace, &ws);
    int D = cfg->E, H = cfg->H, dh = D / H, Kd = kdim_of(cfg), Vd = vdim_of(cfg);
    attend_real scale = (attend_real)(1.0 / sqrt((double)dh));
    project(ws.Q, q, p->Wq, cfg->bias ? p->bq : NULL, N * T, D, D);
    project(ws.K, k, p->Wk, cfg->bias ? p->bk : NULL, N * S, Kd, D);
    project(ws.V, v, p->Wv, cfg->bias ? p->bv : NULL, N * S, Vd, D);
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++) /* Sc[n,h] [T,S] = scale · Q_h[n] [T,dh] K_h[n]ᵀ [dh,S] */
            at_gemm(0, 1, T, S, dh, scale, ws.Q + (size_t)n * T * D + h * dh, D,
                    ws.K + (size_t)n * S * D + h * dh, D, 0, ws.Sc + ((size_t)n * H + h) * T * S, S);
    /* rows are (n,h,t); the key padding row of (n,h) is valid[n] */
    if (check) TRY(at_masked_softmax(ws.P, ws.Sc, valid, allowed, causal, N * H, T, S, H, 0, who, err));
    else at_masked_softmax_forward(ws.P, ws.Sc, valid, allowed, causal, N * H, T, S, H, 0);
    if (hook) hook->fn(hook->user, ws.P, valid, N, H, T, S);
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++) /* O_h[n] [T,dh] = P[n,h] [T,S] V_h[n] [S,dh] */
            at_gemm(0, 0, T, dh, S, 1, ws.P + ((size_t)n * H + h) * T * S, S,
                    ws.V + (size_t)n * S * D + h * dh, D, 0, ws.O + (size_t)n * T * D + h * dh, D);
    project(out, ws.O, p->Wo, cfg->bias ? p->bo : NULL, N * T, D, D);
    if (weights) {
        size_t ts = (size_t)T * S;
        if (!average_weights) {
            memcpy(weights, ws.P, (size_t)N * H * ts * sizeof *weights);
        } else {
            for (int n = 0; n < N; n++)
                for (size_t i = 0; i < ts; i++) {
                    attend_real acc = 0;
                    for (int h = 0; h < H; h++) acc += ws.P[((size_t)n * H + h) * ts + i];
                    weights[(size_t)n * ts + i] = acc / (attend_real)H;
                }
        }
    }
    return check ? at_ok(err) : ATTEND_OK;
}

attend_status at_mha_forward(const attend_mha_config *cfg, const attend_mha_params *p, attend_real *out,
                             attend_real *weights, int average_weights, const attend_real *q, const attend_real *k,
                             const attend_real *v, const uint8_t *valid, const uint8_t *allowed, int causal, int N,
                             int T, int S, attend_real *workspace, const char *who, attend_error *err) {
    return mha_forward(cfg, p, out, weights, average_weights, q, k, v, valid, allowed, causal, N, T, S, workspace, 1,
                       NULL, who, err);
}

const attend_real *at_mha_weights(const attend_mha_config *cfg, int N, int T, int S, const attend_real *workspace) {
    mha_ws ws;
    if (!mha_slots(cfg, N, T, S, (attend_real *)(uintptr_t)workspace, &ws)) return NULL;
    return ws.P;
}

void at_self_attention_forward_model(const attend_mha_config *cfg, const attend_mha_params *p, attend_real *out,
                                     const attend_real *x, const uint8_t *valid, int causal, int N, int T,
                                     attend_real *workspace, const at_mha_hook *hook) {
    // out [N,T,D], x [N,T,D], valid [N,T] or NULL, workspace [attend_mha_workspace_size(cfg, N, T, T)]
    mha_forward(cfg, p, out, NULL, 0, x, x, x, valid, NULL, causal, N, T, T, workspace, 0, hook, NULL, NULL);
}

attend_status attend_mha_forward(const attend_mha_config *cfg, const attend_mha_params *p,
                                 attend_real *out, attend_real *weights, int average_weights,
                                 const attend_real *q, const attend_real *k, const attend_real *v,
                                 const uint8_t *valid, const uint8_t *allowed, int causal,
                                 int N, int T, int S, attend_real *workspace, size_t workspace_len,
                                 attend_error *err) {
    const char *who = "attend_mha_forward";
    mha_ws ws;
    TRY(check_mha(who, cfg, p, N, T, S, workspace, workspace_len, &ws, err));
    CHECK(out && q && k && v, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !out ? "out [N,T,E]" : !q ? "q [N,T,E]" : !k ? "k [N,S,kdim]" : "v [N,S,vdim]");
    return at_mha_forward(cfg, p, out, weights, average_weights, q, k, v, valid, allowed, causal, N, T, S,
                          workspace, who, err);
}

void at_mha_backward(const attend_mha_config *cfg, const attend_mha_params *p, const attend_mha_grads *g,
                     attend_real *dq, attend_real *dk, attend_real *dv, const attend_real *dout, const attend_real *q,
                     const attend_real *k, const attend_real *v, int N, int T, int S, attend_real *workspace) {
    // dq [N,T,D], dk [N,S,Kd], dv [N,S,Vd] (each += or NULL), dout [N,T,D], q [N,T,D], k [N,S,Kd],
    // v [N,S,Vd], workspace [attend_mha_workspace_size] holding the forward's
    mha_ws ws;
    mha_slots(cfg, N, T, S, workspace, &ws);
    int D = cfg->E, H = cfg->H, dh = D / H, Kd = kdim_of(cfg), Vd = vdim_of(cfg);
    attend_real scale = (attend_real)(1.0 / sqrt((double)dh));
    int bias = cfg->bias && g;
    size_t ntd = (size_t)N * T * D, nsd = (size_t)N * S * D, nhts = (size_t)N * H * T * S;
    /* forward: out = O Woᵀ + bo */
    memset(ws.dO, 0, ntd * sizeof *ws.dO);
    project_backward(ws.dO, g ? g->Wo : NULL, bias ? g->bo : NULL, dout, ws.O, p->Wo, N * T, D, D);
    /* forward: O_h[n] = P[n,h] V_h[n] */
    memset(ws.dV, 0, nsd * sizeof *ws.dV);
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++) {
            const attend_real *dOh = ws.dO + (size_t)n * T * D + h * dh;
            const attend_real *Ph = ws.P + ((size_t)n * H + h) * T * S;
            /* dP[n,h] [T,S] = dO_h [T,dh] V_hᵀ [dh,S] */
            at_gemm(0, 1, T, S, dh, 1, dOh, D, ws.V + (size_t)n * S * D + h * dh, D, 0,
                    ws.dP + ((size_t)n * H + h) * T * S, S);
            /* dV_h [S,dh] += Pᵀ [S,T] dO_h [T,dh] */
            at_gemm(1, 0, S, dh, T, 1, Ph, S, dOh, D, 1, ws.dV + (size_t)n * S * D + h * dh, D);
        }
    /* forward: P = masked_softmax(Sc) */
    attend_real *dSc = ws.Sc;
    memset(dSc, 0, nhts * sizeof *dSc);
    at_softmax_backward(dSc, ws.dP, ws.P, (size_t)N * H * T, S);
    /* forward: Sc[n,h] = scale · Q_h K_hᵀ */
    memset(ws.dQ, 0, ntd * sizeof *ws.dQ);
    memset(ws.dK, 0, nsd * sizeof *ws.dK);
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++) {
            const attend_real *dS = dSc + ((size_t)n * H + h) * T * S;
            at_gemm(0, 0, T, dh, S, scale, dS, S, ws.K + (size_t)n * S * D + h * dh, D, 1,
                    ws.dQ + (size_t)n * T * D + h * dh, D);
            at_gemm(1, 0, S, dh, T, scale, dS, S, ws.Q + (size_t)n * T * D + h * dh, D, 1,
                    ws.dK + (size_t)n * S * D + h * dh, D);
        }
    /* forward: Q = q Wqᵀ + bq, K = k Wkᵀ + bk, V = v Wvᵀ + bv. bk's gradient is exactly zero: it adds
     * q_i·bk to all of query i's scores, which the softmax ignores. Summed from dK it is rounding noise
     * that differs with the thread split and that Adam, dividing by its own scale, turns into
     * learning-rate-sized steps; so g->bk is left as it is. */
    project_backward(dq, g ? g->Wq : NULL, bias ? g->bq : NULL, ws.dQ, q, p->Wq, N * T, D, D);
    project_backward(dk, g ? g->Wk : NULL, NULL, ws.dK, k, p->Wk, N * S, Kd, D);
    project_backward(dv, g ? g->Wv : NULL, bias ? g->bv : NULL, ws.dV, v, p->Wv, N * S, Vd, D);
}

attend_status attend_mha_backward(const attend_mha_config *cfg, const attend_mha_params *p,
                                  const attend_mha_grads *g, attend_real *dq, attend_real *dk,
                                  attend_real *dv, const attend_real *dout, const attend_real *q,
                                  const attend_real *k, const attend_real *v, int N, int T, int S,
                                  attend_real *workspace, size_t workspace_len, attend_error *err) {
    const char *who = "attend_mha_backward";
    mha_ws ws;
    TRY(check_mha(who, cfg, p, N, T, S, workspace, workspace_len, &ws, err));
    CHECK(dout && q && k && v, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !dout ? "dout [N,T,E]" : !q ? "q [N,T,E]" : !k ? "k [N,S,kdim]" : "v [N,S,vdim]");
    at_mha_backward(cfg, p, g, dq, dk, dv, dout, q, k, v, N, T, S, workspace);
    return at_ok(err);
}

/* kdim and vdim equal the embed width D (q, k, v are one sequence). */
static attend_status check_self(const char *who, const attend_mha_config *cfg, const char *tail,
                                attend_error *err) {
    TRY(attend_mha_config_check(cfg, err));
    CHECK(kdim_of(cfg) == cfg->E && vdim_of(cfg) == cfg->E, err, ATTEND_ERR_SHAPE,
          "%s: kdim=%d vdim=%d must equal E=%d%s", who, kdim_of(cfg), vdim_of(cfg), cfg->E, tail);
    return ATTEND_OK;
}

attend_status at_self_attention_forward(const attend_mha_config *cfg, const attend_mha_params *p, attend_real *out,
                                        attend_real *weights, int average_weights, const attend_real *x,
                                        const uint8_t *valid, int causal, int N, int T, attend_real *workspace,
                                        const char *who, attend_error *err) {
    // out [N,T,D], x [N,T,D], valid [N,T] or NULL
    return at_mha_forward(cfg, p, out, weights, average_weights, x, x, x, valid, NULL, causal, N, T, T, workspace,
                          who, err);
}

attend_status attend_self_attention_forward(const attend_mha_config *cfg, const attend_mha_params *p,
                                            attend_real *out, attend_real *weights, int average_weights,
                                            const attend_real *x, const uint8_t *valid, int causal,
                                            int N, int T, attend_real *workspace, size_t workspace_len,
                                            attend_error *err) {
    TRY(check_self("attend_self_attention_forward", cfg, " (q, k, v are one sequence)", err));
    const char *who = "attend_mha_forward"; /* the messages name the kernel that checks, as before */
    mha_ws ws;
    TRY(check_mha(who, cfg, p, N, T, T, workspace, workspace_len, &ws, err));
    CHECK(out && x, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !out ? "out [N,T,E]" : "q [N,T,E]");
    return at_self_attention_forward(cfg, p, out, weights, average_weights, x, valid, causal, N, T, workspace, who,
                                     err);
}

void at_self_attention_backward(const attend_mha_config *cfg, const attend_mha_params *p, const attend_mha_grads *g,
                                attend_real *dx, const attend_real *dout, const attend_real *x, int N, int T,
                                attend_real *workspace) {
    // dx [N,T,D] (+=), dout [N,T,D], x [N,T,D]
    /* x feeds q, k and v: its gradient is the sum of the three */
    at_mha_backward(cfg, p, g, dx, dx, dx, dout, x, x, x, N, T, T, workspace);
}

attend_status attend_self_attention_backward(const attend_mha_config *cfg, const attend_mha_params *p,
                                             const attend_mha_grads *g, attend_real *dx,
                                             const attend_real *dout, const attend_real *x, int N, int T,
                                             attend_real *workspace, size_t workspace_len,
                                             attend_error *err) {
    TRY(check_self("attend_self_attention_backward", cfg, "", err));
    const char *who = "attend_mha_backward"; /* the messages name the kernel that checks, as before */
    mha_ws ws;
    TRY(check_mha(who, cfg, p, N, T, T, workspace, workspace_len, &ws, err));
    CHECK(dout && x, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !dout ? "dout [N,T,E]" : "q [N,T,E]");
    at_self_attention_backward(cfg, p, g, dx, dout, x, N, T, workspace);
    return at_ok(err);
}
