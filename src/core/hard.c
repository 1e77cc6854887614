/*
 * hard.c — hard attention (one position per query: argmax or sampled) and the
 * pointer distribution (the attention weights used as the output, with
 * log-probabilities and a negative log-likelihood for training).
 *
 * Dimension letters: N batch, T query positions, S source positions, Dv value width.
 */
#include <limits.h>
#include <math.h>

#include "internal.h"

static attend_status check_nts(const char *who, attend_error *err, int N, int T, int S, int D) {
    CHECK(N >= 1 && T >= 1 && S >= 1 && D >= 1, err, ATTEND_ERR_SHAPE,
          "%s: N=%d T=%d S=%d width=%d; every dimension must be >= 1", who, N, T, S, D);
    size_t n;
    CHECK(at_count(&n, 4, N, T, S, D) && n <= SIZE_MAX / sizeof(attend_real), err, ATTEND_ERR_SHAPE,
          "%s: sizes N=%d T=%d S=%d width=%d overflow", who, N, T, S, D);
    return ATTEND_OK;
}

attend_status attend_hard_argmax(int32_t *idx, const attend_real *weights, int N, int T, int S,
                                 attend_error *err) {
    const char *who = "attend_hard_argmax";
    CHECK(idx && weights, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !idx ? "idx [N,T]" : "weights [N,T,S]");
    TRY(check_nts(who, err, N, T, S, 1));
    for (size_t r = 0; r < (size_t)N * T; r++) {
        const attend_real *w = weights + r * S;
        for (int j = 0; j < S; j++)
            CHECK(!isnan(w[j]), err, ATTEND_ERR_NONFINITE, "%s: row (n=%d, t=%d): weight at position %d is NaN",
                  who, (int)(r / T), (int)(r % T), j);
    }
    for (size_t r = 0; r < (size_t)N * T; r++) {
        const attend_real *w = weights + r * S;
        int best = 0;
        for (int j = 1; j < S; j++)
            if (w[j] > w[best]) best = j;
        idx[r] = best;
    }
    return at_ok(err);
}

attend_status attend_hard_sample(int32_t *idx, const attend_real *weights, attend_rng *rng,
                                 int N, int T, int S, attend_error *err) {
    const char *who = "attend_hard_sample";
    CHECK(idx && weights && rng, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !idx ? "idx [N,T]" : !weights ? "weights [N,T,S]" : "rng");
    TRY(check_nts(who, err, N, T, S, 1));
    for (size_t r = 0; r < (size_t)N * T; r++) {
        const attend_real *w = weights + r * S;
        double sum = 0;
        for (int j = 0; j < S; j++) {
            CHECK(isfinite(w[j]) && w[j] >= 0, err, ATTEND_ERR_ARG,
                  "%s: row (n=%d, t=%d): weight at position %d is %g; weights must be finite and >= 0",
                  who, (int)(r / T), (int)(r % T), j, (double)w[j]);
            sum += w[j];
        }
        CHECK(fabs(sum - 1.0) <= 1e-3, err, ATTEND_ERR_ARG,
              "%s: row (n=%d, t=%d): weights sum to %.6g, not 1", who, (int)(r / T), (int)(r % T), sum);
    }
    for (size_t r = 0; r < (size_t)N * T; r++) {
        const attend_real *w = weights + r * S;
        double sum = 0;
        for (int j = 0; j < S; j++) sum += w[j];
        /* inverse CDF on the row's own total, so rounding never walks off the end */
        double u = attend_rng_uniform(rng) * sum, acc = 0;
        int pick = -1, last_positive = 0;
        for (int j = 0; j < S; j++) {
            if (w[j] <= 0) continue;
            last_positive = j;
            acc += w[j];
            if (u < acc) {
                pick = j;
                break;
            }
        }
        idx[r] = pick >= 0 ? pick : last_positive;
    }
    return at_ok(err);
}

static attend_status check_indices(const char *who, const int32_t *idx, int N, int T, int S,
                                   attend_error *err) {
    for (size_t r = 0; r < (size_t)N * T; r++)
        CHECK(idx[r] >= 0 && idx[r] < S, err, ATTEND_ERR_ARG,
              "%s: row (n=%d, t=%d): position %d is outside [0,%d)", who, (int)(r / T), (int)(r % T),
              (int)idx[r], S);
    return ATTEND_OK;
}

attend_status attend_hard_context_forward(attend_real *ctx, const int32_t *idx,
                                          const attend_real *v, int N, int T, int S, int Dv,
                                          attend_error *err) {
    const char *who = "attend_hard_context_forward";
    CHECK(ctx && idx && v, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !ctx ? "ctx [N,T,Dv]" : !idx ? "idx [N,T]" : "v [N,S,Dv]");
    TRY(check_nts(who, err, N, T, S, Dv));
    TRY(check_indices(who, idx, N, T, S, err));
    for (int n = 0; n < N; n++)
        for (int t = 0; t < T; t++) {
            size_t r = (size_t)n * T + t;
            const attend_real *src = v + ((size_t)n * S + idx[r]) * Dv;
            for (int d = 0; d < Dv; d++) ctx[r * Dv + d] = src[d];
        }
    return at_ok(err);
}

attend_status attend_hard_context_backward(attend_real *dv, const attend_real *dctx,
                                           const int32_t *idx, int N, int T, int S, int Dv,
                                           attend_error *err) {
    const char *who = "attend_hard_context_backward";
    CHECK(dv && dctx && idx, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !dv ? "dv [N,S,Dv]" : !dctx ? "dctx [N,T,Dv]" : "idx [N,T]");
    TRY(check_nts(who, err, N, T, S, Dv));
    TRY(check_indices(who, idx, N, T, S, err));
    /* forward: ctx[n,t,:] = v[n, idx[n,t], :] */
    for (int n = 0; n < N; n++)
        for (int t = 0; t < T; t++) {
            size_t r = (size_t)n * T + t;
            attend_real *dst = dv + ((size_t)n * S + idx[r]) * Dv;
            for (int d = 0; d < Dv; d++) dst[d] += dctx[r * Dv + d];
        }
    return at_ok(err);
}

/* --------------------------------------------------------------- pointer */

attend_status attend_pointer_logprobs_forward(attend_real *logp, const attend_real *scores,
                                              const uint8_t *valid, const uint8_t *allowed,
                                              int causal, int N, int T, int S,
                                              attend_error *err) {
    const char *who = "attend_pointer_logprobs_forward";
    CHECK(logp && scores, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !logp ? "logp [N,T,S]" : "scores [N,T,S]");
    TRY(check_nts(who, err, N, T, S, 1));
    return at_masked_softmax(logp, scores, valid, allowed, causal, N, T, S, 1, 1, who, err);
}

static attend_status check_targets(const char *who, const attend_real *logp, const int32_t *targets,
                                   int N, int T, int S, int *count, attend_error *err) {
    int c = 0;
    for (size_t r = 0; r < (size_t)N * T; r++) {
        int32_t y = targets[r];
        if (y < 0) {
            CHECK(y == -1, err, ATTEND_ERR_ARG, "%s: row (n=%d, t=%d): target %d; use -1 to ignore a row",
                  who, (int)(r / T), (int)(r % T), (int)y);
            continue;
        }
        CHECK(y < S, err, ATTEND_ERR_ARG, "%s: row (n=%d, t=%d): target position %d is outside [0,%d)",
              who, (int)(r / T), (int)(r % T), (int)y, S);
        CHECK(isfinite(logp[r * S + y]), err, ATTEND_ERR_ARG,
              "%s: row (n=%d, t=%d): target position %d is masked (probability 0)", who,
              (int)(r / T), (int)(r % T), (int)y);
        c++;
    }
    *count = c;
    return ATTEND_OK;
}

attend_status attend_pointer_nll_forward(double *loss, int *count, const attend_real *logp,
                                         const int32_t *targets, int N, int T, int S,
                                         attend_error *err) {
    const char *who = "attend_pointer_nll_forward";
    CHECK(loss && logp && targets, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !loss ? "loss" : !logp ? "logp [N,T,S]" : "targets [N,T]");
    TRY(check_nts(who, err, N, T, S, 1));
    int c;
    TRY(check_targets(who, logp, targets, N, T, S, &c, err));
    double total = 0;
    for (size_t r = 0; r < (size_t)N * T; r++)
        if (targets[r] >= 0) total -= logp[r * S + targets[r]];
    *loss = c > 0 ? total / c : 0.0;
    if (count) *count = c;
    return at_ok(err);
}

attend_status attend_pointer_nll_backward(attend_real *dscores, const attend_real *logp,
                                          const int32_t *targets, int N, int T, int S,
                                          attend_error *err) {
    const char *who = "attend_pointer_nll_backward";
    CHECK(dscores && logp && targets, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !dscores ? "dscores [N,T,S]" : !logp ? "logp [N,T,S]" : "targets [N,T]");
    TRY(check_nts(who, err, N, T, S, 1));
    int c;
    TRY(check_targets(who, logp, targets, N, T, S, &c, err));
    if (c == 0) return at_ok(err);
    /* forward: loss = −(1/c) Σ_rows logp[y], logp = s − logsumexp(s over included)
     * ⇒ ∂loss/∂s_j = (p_j − [j = y]) / c, and 0 at excluded positions (p_j = 0). */
    attend_real inv = (attend_real)(1.0 / c);
    for (size_t r = 0; r < (size_t)N * T; r++) {
        if (targets[r] < 0) continue;
        const attend_real *lp = logp + r * S;
        attend_real *ds = dscores + r * S;
        for (int j = 0; j < S; j++) {
            attend_real pj = isfinite(lp[j]) ? (attend_real)exp((double)lp[j]) : 0;
            ds[j] += (pj - (j == targets[r] ? 1 : 0)) * inv;
        }
    }
    return at_ok(err);
}
