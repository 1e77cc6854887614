/*
 * importance.c — trial 1, importance agreement (Jain & Wallace 2019, §4.1):
 * per output step t of a model's output along a fixed baseline, does the
 * attention row α_t [S] rank the source positions as other importance
 * measures do? Two measures over positions j:
 *   gradient × input  |Σ_d x_jd ∂ log p_t(y_t)/∂x_jd|, x_j the embedding of
 *                     source token j (attention held constant in the gradient
 *                     unless asked otherwise, as J&W do);
 *   leave-one-out     TV(p_t, p_t^{-j}) = ½ Σ_v |p_t(v) − p_t^{-j}(v)|, token j
 *                     deleted and the source re-encoded (intervene.c's pass);
 * and Kendall's τ-b of α_t against each (kendall.c).
 *
 * The per-step gradients come from one teacher-forced batch of prefixes: row
 * r of a chunk carries the baseline's first r+1 steps, so its source-embedding
 * gradient is that of Σ_{k<=r} −log p_k, and step t's is row t's minus row
 * t−1's (carried across chunks of the model's max_batch rows).
 *
 * Frozen attention (options.frozen): every pass reads the given rows instead
 * of the model's weights, through the run's weight hook; after a deletion the
 * row loses the deleted position and is renormalised. A planted answer for
 * the tests, and W&P's "frozen attention" at analysis time.
 *
 * Dimension letters: S source positions, D embedding width, T = steps.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/divergence.h"
#include "analysis/intervene.h"
#include "analysis/kendall.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/model.h"

/* The weight hook of the passes: the frozen rows (original positions S0, one
 * of them deleted: del >= 0), or nothing changed (detached attention). */
typedef struct {
    const attend_model *m;
    const attend_real *frozen; /* [steps,S0] or NULL */
    int S0, del;
} importance_hook;

static void frozen_weights(void *user, attend_real *w, const uint8_t *valid, int N, int S) {
    const importance_hook *h = user;
    if (!h->frozen) return; /* detached: the model's weights, constants to the backward */
    size_t t = (size_t)(w - h->m->acts.weights) / ((size_t)N * S);
    const attend_real *row = h->frozen + t * h->S0;
    for (int n = 0; n < N; n++) {
        attend_real *wn = w + (size_t)n * S;
        const uint8_t *vn = valid + (size_t)n * S;
        double sum = 0;
        int nv = 0;
        for (int j = 0, k = 0; k < h->S0; k++) {
            if (k == h->del) continue;
            wn[j] = vn[j] ? row[k] : 0;
            sum += (double)wn[j];
            nv += vn[j] != 0;
            j++;
        }
        for (int j = 0; j < S; j++) /* renormalised; uniform when nothing is left */
            wn[j] = !vn[j] ? 0 : sum > 0 ? (attend_real)((double)wn[j] / sum) : (attend_real)(1.0 / nv);
    }
}

/* Checks of the frozen rows [steps,S]: finite, >= 0, each summing to 1. */
static attend_status check_frozen(const attend_real *f, int steps, int S, const char *who, attend_error *err) {
    for (int t = 0; t < steps; t++) {
        double sum = 0;
        for (int j = 0; j < S; j++) {
            double v = (double)f[(size_t)t * S + j];
            CHECK(isfinite(v) && v >= 0, err, ATTEND_ERR_ARG, "%s: frozen attention row %d, position %d: %g is not a "
                  "weight", who, t, j, v);
            sum += v;
        }
        CHECK(fabs(sum - 1) <= 1e-4, err, ATTEND_ERR_ARG, "%s: frozen attention row %d sums to %.6g, not 1", who, t,
              sum);
    }
    return ATTEND_OK;
}

/* Gradient × input of every step into g [steps,S]: chunks of prefix rows. */
static attend_status gradient_pass(attend_model *m, const int32_t *src, int S, const int32_t *base, int base_len,
                                   importance_hook *hook, int32_t *ids, double *gprev, double *g, attend_error *err) {
    int steps = base_len + 1, D = m->cfg.emb, Nc = m->cfg.max_batch;
    if (Nc > steps) Nc = steps;
    attend_batch b;
    memset(&b, 0, sizeof b);
    b.src = ids;                              /* [Nc,S] */
    b.src_len = b.src + (size_t)Nc * S;       /* [Nc] */
    b.tgt_in = b.src_len + Nc;                /* [Nc,steps] */
    b.tgt_out = b.tgt_in + (size_t)Nc * steps; /* [Nc,steps] */
    b.tgt_len = b.tgt_out + (size_t)Nc * steps; /* [Nc] */
    b.S = S;
    b.T = steps;
    b.cap_N = Nc;
    b.cap_S = S;
    b.cap_T = steps;
    for (int n = 0; n < Nc; n++) {
        memcpy(b.src + (size_t)n * S, src, (size_t)S * sizeof *src);
        b.src_len[n] = S;
        for (int t = 0; t < steps; t++) {
            b.tgt_in[(size_t)n * steps + t] = t == 0 ? ATTEND_BOS : base[t - 1];
            b.tgt_out[(size_t)n * steps + t] = t < base_len ? base[t] : ATTEND_EOS;
        }
    }
    memset(gprev, 0, (size_t)S * D * sizeof *gprev);
    const attend_real *emb = m->p.src_emb; /* [Vs,D] */
    for (int r0 = 0; r0 < steps; r0 += Nc) {
        b.N = steps - r0 < Nc ? steps - r0 : Nc;
        for (int n = 0; n < b.N; n++) b.tgt_len[n] = r0 + n + 1;
        /* rows past their length read PAD */
        for (int n = 0; n < b.N; n++)
            for (int t = b.tgt_len[n]; t < steps; t++) b.tgt_out[(size_t)n * steps + t] = ATTEND_PAD;
        at_run run;
        memset(&run, 0, sizeof run);
        run.input_grad = 1;
        run.weight_hook = hook ? frozen_weights : NULL;
        run.weight_hook_user = hook;
        attend_tf_stats st;
        TRY(at_model_forward(m, &b, &run, &st, err));
        TRY(attend_model_backward(m, err));
        double count = st.tokens; /* the backward's divisor */
        for (int n = 0; n < b.N; n++) {
            int t = r0 + n;
            const attend_real *dx = m->acts.demb + (size_t)n * S * D; /* [S,D] */
            for (int j = 0; j < S; j++) {
                const attend_real *x = emb + (size_t)src[j] * D;
                double s = 0;
                for (int d = 0; d < D; d++) {
                    double G = count * (double)dx[(size_t)j * D + d];
                    s += (G - gprev[(size_t)j * D + d]) * (double)x[d];
                    gprev[(size_t)j * D + d] = G;
                }
                g[(size_t)t * S + j] = fabs(s);
            }
        }
        /* the rows' targets back for the next chunk */
        for (int n = 0; n < b.N; n++)
            for (int t = 0; t < steps; t++) b.tgt_out[(size_t)n * steps + t] = t < base_len ? base[t] : ATTEND_EOS;
    }
    return ATTEND_OK;
}

attend_status attend_model_importance(attend_model *m, const int32_t *src, int S, const int32_t *base, int base_len,
                                      const attend_importance_options *o, attend_importance_result *res,
                                      attend_error *err) {
    const char *who = "attend_model_importance";
    CHECK(m && src && res && (base || base_len == 0), err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !m ? "model" : !src ? "src [S]" : !res ? "result" : "base [base_len]");
    const attend_model_config *c = &m->cfg;
    CHECK(m->dec->vocabulary && m->dec->attentive, err, ATTEND_ERR_ARG,
          "%s: decoder '%s': the trial compares attention over source positions with the importance of each "
          "position for an output distribution over the target vocabulary (bahdanau and luong decoders)",
          who, attend_decoder_name(c->decoder));
    CHECK(!c->copy, err, ATTEND_ERR_ARG,
          "%s: copy models are not supported yet (their output space changes with the deleted token)", who);
    int32_t len1 = S;
    TRY(at_model_check_source(m, src, &len1, 1, S, who, err));
    int steps = base_len + 1;
    CHECK(base_len >= 0 && steps <= m->Tcap, err, ATTEND_ERR_CAPACITY,
          "%s: base_len=%d: the baseline and its EOS must fit max_tgt_len+1 = %d steps", who, base_len, m->Tcap);
    for (int t = 0; t < base_len; t++)
        CHECK(base[t] > ATTEND_EOS && base[t] < c->tgt_vocab, err, ATTEND_ERR_ARG,
              "%s: base[%d]=%d is not an output token id in [%d,%d)", who, t, (int)base[t], ATTEND_EOS + 1,
              c->tgt_vocab);
    attend_importance_options opt;
    memset(&opt, 0, sizeof opt);
    if (o) opt = *o;
    CHECK(!(opt.frozen && opt.attention_gradient), err, ATTEND_ERR_ARG,
          "%s: frozen attention has no gradient to follow (attention_gradient = 1 with frozen rows)", who);
    if (opt.frozen) TRY(check_frozen(opt.frozen, steps, S, who, err));

    int V = c->tgt_vocab, D = c->emb, Nc = c->max_batch < steps ? c->max_batch : steps;
    /* one allocation: log-probs [2,steps,V], attention, gradient and LOO
     * importance [3,steps,S] and the previous row's gradient [S,D] in double;
     * the source without one token [S] and the prefix batch's ids */
    size_t nd = 2 * (size_t)steps * V + 3 * (size_t)steps * S + (size_t)S * D;
    size_t ni = (size_t)S + (size_t)Nc * S + Nc + 2 * (size_t)Nc * steps + Nc;
    size_t bytes = nd * sizeof(double) + ni * sizeof(int32_t);
    char *mem = malloc(bytes);
    CHECK(mem, err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes", who, bytes);
    double *lp0 = (double *)(void *)mem, *lp1 = lp0 + (size_t)steps * V;
    double *att = lp1 + (size_t)steps * V, *gi = att + (size_t)steps * S, *li = gi + (size_t)steps * S;
    double *gprev = li + (size_t)steps * S;
    int32_t *src1 = (int32_t *)(void *)(gprev + (size_t)S * D), *ids = src1 + S;

    importance_hook hook = {m, opt.frozen, S, -1};
    int hooked = opt.frozen || !opt.attention_gradient;
    attend_status st = ATTEND_OK;

    /* the baseline: distributions and attention along base */
    at_model_analyse(m, opt.frozen ? frozen_weights : NULL, &hook);
    attend_real *arow = res->attention;
    at_forced_pass(m, src, S, -1, base, base_len, lp0, V, NULL);
    for (int t = 0; t < steps; t++)
        for (int j = 0; j < S; j++) {
            attend_real w = m->acts.weights[(size_t)t * S + j];
            att[(size_t)t * S + j] = (double)w;
            if (arow) arow[(size_t)t * S + j] = w;
        }

    /* leave-one-out: each token deleted in turn, the source re-encoded */
    for (int j = 0; j < S; j++) {
        if (S < 2) {
            for (int t = 0; t < steps; t++) li[(size_t)t * S + j] = 0;
            continue;
        }
        memcpy(src1, src, (size_t)j * sizeof *src);
        memcpy(src1 + j, src + j + 1, (size_t)(S - j - 1) * sizeof *src);
        hook.del = j;
        at_model_analyse(m, opt.frozen ? frozen_weights : NULL, &hook);
        at_forced_pass(m, src1, S - 1, -1, base, base_len, lp1, V, NULL);
        for (int t = 0; t < steps; t++)
            at_logp_divergences(lp0 + (size_t)t * V, lp1 + (size_t)t * V, V, &li[(size_t)t * S + j], NULL, NULL);
    }
    hook.del = -1;
    at_model_analyse(m, NULL, NULL);

    /* gradient x input */
    st = gradient_pass(m, src, S, base, base_len, hooked ? &hook : NULL, ids, gprev, gi, err);
    attend_model_zero_grad(m);
    at_model_analyse(m, NULL, NULL);
    if (st) {
        free(mem);
        return st;
    }

    for (int t = 0; t < steps; t++) {
        const double *a = att + (size_t)t * S;
        double tg, pg, tl, pl;
        at_kendall_tau_b(a, gi + (size_t)t * S, S, &tg, &pg);
        at_kendall_tau_b(a, li + (size_t)t * S, S, &tl, &pl);
        if (res->tau_grad) res->tau_grad[t] = tg;
        if (res->p_grad) res->p_grad[t] = pg;
        if (res->tau_loo) res->tau_loo[t] = tl;
        if (res->p_loo) res->p_loo[t] = pl;
    }
    if (res->grad) memcpy(res->grad, gi, (size_t)steps * S * sizeof *gi);
    if (res->loo) memcpy(res->loo, li, (size_t)steps * S * sizeof *li);
    res->steps = steps;
    free(mem);
    return at_ok(err);
}
