/*
 * divergence.c — total variation, KL and Jensen–Shannon divergence between
 * two distributions, in double: what the interventions (intervene.c) report
 * per step, and the two distances of Jain & Wallace's adversarial attention
 * (JSD between attention rows, TVD between output distributions).
 */
#include <math.h>

#include "analysis/divergence.h"

void at_logp_divergences(const double *a, const double *b, int V, double *tv, double *kl, double *js) {
    double t = 0, k = 0, j = 0;
    for (int v = 0; v < V; v++) {
        double p = exp(a[v]), q = exp(b[v]), mid = 0.5 * (p + q);
        t += fabs(p - q);
        if (p > 0) k += p * (a[v] - b[v]);
        if (mid > 0) {
            double lm = log(mid);
            if (p > 0) j += 0.5 * p * (a[v] - lm);
            if (q > 0) j += 0.5 * q * (b[v] - lm);
        }
    }
    if (tv) *tv = 0.5 * t;
    if (kl) *kl = k < 0 ? 0 : k; /* rounding */
    if (js) *js = j < 0 ? 0 : j;
}

void at_prob_divergences(const double *p, const double *q, int n, double *tv, double *kl, double *js) {
    double t = 0, k = 0, j = 0;
    for (int v = 0; v < n; v++) {
        double mid = 0.5 * (p[v] + q[v]);
        t += fabs(p[v] - q[v]);
        if (p[v] > 0) k += q[v] > 0 ? p[v] * log(p[v] / q[v]) : INFINITY;
        if (p[v] > 0) j += 0.5 * p[v] * log(p[v] / mid);
        if (q[v] > 0) j += 0.5 * q[v] * log(q[v] / mid);
    }
    if (tv) *tv = 0.5 * t;
    if (kl) *kl = k < 0 ? 0 : k;
    if (js) *js = j < 0 ? 0 : j;
}

attend_status attend_divergences(const double *p, const double *q, int n, double *tv, double *kl, double *js,
                                 attend_error *err) {
    const char *who = "attend_divergences";
    CHECK(p && q, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !p ? "p [n]" : "q [n]");
    CHECK(n >= 1, err, ATTEND_ERR_SHAPE, "%s: n=%d must be >= 1", who, n);
    double sp = 0, sq = 0;
    for (int v = 0; v < n; v++) {
        CHECK(isfinite(p[v]) && p[v] >= 0, err, ATTEND_ERR_ARG, "%s: p[%d]=%g is not a probability", who, v, p[v]);
        CHECK(isfinite(q[v]) && q[v] >= 0, err, ATTEND_ERR_ARG, "%s: q[%d]=%g is not a probability", who, v, q[v]);
        sp += p[v];
        sq += q[v];
    }
    CHECK(fabs(sp - 1) <= 1e-6 && fabs(sq - 1) <= 1e-6, err, ATTEND_ERR_ARG,
          "%s: %s sums to %.9g, not 1 (within 1e-6)", who, fabs(sp - 1) > 1e-6 ? "p" : "q",
          fabs(sp - 1) > 1e-6 ? sp : sq);
    at_prob_divergences(p, q, n, tv, kl, js);
    return at_ok(err);
}
