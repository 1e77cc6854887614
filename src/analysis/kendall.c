/*
 * kendall.c — Kendall's rank correlation tau-b and its two-sided p-value, as
 * scipy.stats.kendalltau (variant 'b', method 'auto') computes them: the
 * agreement statistic of Jain & Wallace 2019 §4.1 (attention against other
 * importance measures). O(n^2) pair counts and no allocation: the sources a
 * seq2seq model reads are short, and a trial calls this once per output step.
 */
#include <math.h>
#include <string.h>

#include "analysis/kendall.h"

/* The exact null distribution of the number of discordant pairs of n untied
 * values is the Mahonian one (inversions of a uniform permutation). The
 * two-sided p-value of c (the smaller of concordant and discordant pairs) is
 * 2 P(C <= c), from the distribution truncated at c: P_j(k) = (1/j) sum_{i<j}
 * P_{j-1}(k - i), kept normalised at every j so nothing overflows. */
static double kendall_p_exact(int n, long c) {
    if (n <= 2) return 1.0;
    if (c == 0 || c == 1) { /* scipy's closed forms: 2/n! and 2/(n-1)! */
        double f = 1;
        for (int j = 2; j <= n - (int)c; j++) f *= j;
        return 2.0 / f;
    }
    long tot = (long)n * (n - 1) / 2;
    if (4 * c == 2 * tot) return 1.0;
    double prob[AT_KENDALL_EXACT_MAX * (AT_KENDALL_EXACT_MAX - 1) / 4 + 2];
    memset(prob, 0, (size_t)(c + 1) * sizeof *prob);
    prob[0] = 1; /* one value: no inversions */
    for (int j = 2; j <= n; j++) {
        /* new[k] = (1/j) sum_{i=0}^{min(k, j-1)} old[k-i], in place from the top */
        double run = 0;
        for (long k = 0; k <= c; k++) { /* prefix sums first */
            run += prob[k];
            prob[k] = run;
        }
        for (long k = c; k >= 0; k--) {
            double s = prob[k] - (k - j >= 0 ? prob[k - j] : 0);
            prob[k] = s / j;
        }
    }
    double p = 0;
    for (long k = 0; k <= c; k++) p += prob[k];
    p *= 2;
    return p > 1 ? 1 : p < 0 ? 0 : p;
}

void at_kendall_tau_b(const double *x, const double *y, int n, double *tau, double *pvalue) {
    long con = 0, dis = 0;
    double xtie = 0, ytie = 0, x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    for (int i = 0; i < n; i++) {
        long tx = 0, ty = 0; /* the sizes of i's tie groups, i included */
        for (int j = 0; j < n; j++) {
            tx += x[j] == x[i];
            ty += y[j] == y[i];
            if (j > i) {
                double dx = x[j] - x[i], dy = y[j] - y[i];
                if ((dx > 0 && dy > 0) || (dx < 0 && dy < 0)) con++;
                else if ((dx > 0 && dy < 0) || (dx < 0 && dy > 0)) dis++;
            }
        }
        /* sum over groups of t f(t) = sum over members of f(t) */
        xtie += 0.5 * (double)(tx - 1);
        ytie += 0.5 * (double)(ty - 1);
        x0 += (double)(tx - 1) * (double)(tx - 2);
        y0 += (double)(ty - 1) * (double)(ty - 2);
        x1 += (double)(tx - 1) * (double)(2 * tx + 5);
        y1 += (double)(ty - 1) * (double)(2 * ty + 5);
    }
    xtie = floor(xtie + 0.5); /* whole pair counts */
    ytie = floor(ytie + 0.5);
    double tot = (double)n * (n - 1) / 2;
    if (n < 2 || xtie == tot || ytie == tot) {
        *tau = NAN;
        if (pvalue) *pvalue = NAN;
        return;
    }
    double cmd = (double)(con - dis);
    double t = cmd / sqrt(tot - xtie) / sqrt(tot - ytie);
    *tau = t > 1 ? 1 : t < -1 ? -1 : t;
    if (!pvalue) return;
    long mn = dis < (long)tot - dis ? dis : (long)tot - dis;
    if (xtie == 0 && ytie == 0 && (n <= AT_KENDALL_EXACT_MAX || mn <= 1)) {
        *pvalue = kendall_p_exact(n, mn);
        return;
    }
    /* the normal approximation with the tie-corrected variance */
    double m = (double)n * (n - 1.0);
    double var = (m * (2.0 * n + 5) - x1 - y1) / 18 + (2 * xtie * ytie) / m +
                 (n > 2 ? x0 * y0 / (9 * m * (n - 2)) : 0);
    double z = cmd / sqrt(var);
    *pvalue = erfc(fabs(z) / sqrt(2.0));
}

attend_status attend_kendall_tau_b(const double *x, const double *y, int n, double *tau, double *pvalue,
                                   attend_error *err) {
    const char *who = "attend_kendall_tau_b";
    CHECK(x && y && tau, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !x ? "x [n]" : !y ? "y [n]" : "tau");
    CHECK(n >= 0, err, ATTEND_ERR_SHAPE, "%s: n=%d must be >= 0", who, n);
    CHECK(n <= AT_KENDALL_MAX_N, err, ATTEND_ERR_CAPACITY, "%s: n=%d above %d (the pair count would overflow)", who,
          n, AT_KENDALL_MAX_N);
    for (int i = 0; i < n; i++) {
        CHECK(isfinite(x[i]), err, ATTEND_ERR_NONFINITE, "%s: x[%d] is not finite", who, i);
        CHECK(isfinite(y[i]), err, ATTEND_ERR_NONFINITE, "%s: y[%d] is not finite", who, i);
    }
    at_kendall_tau_b(x, y, n, tau, pvalue);
    return at_ok(err);
}
