/*
 * aer.c — scoring alignments: attention rows as links (argmax per output
 * step, or every weight above a threshold), and links against reference
 * links: precision, recall, F1 and the alignment error rate (Och & Ney 2003;
 * every reference link "sure", so AER = 1 − F1). The alignment trial scores
 * each model's attention against the hand alignments and the EM aligner's.
 */
#include <math.h>

#include "internal.h"

attend_status attend_attention_links(const attend_real *w, int T, int S, double threshold, int32_t *links, int cap,
                                     int *n_links, attend_error *err) {
    const char *who = "attend_attention_links";
    CHECK(w && links && n_links, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !w ? "w [T,S]" : !links ? "links" : "n_links");
    CHECK(T >= 0 && S >= 1, err, ATTEND_ERR_SHAPE, "%s: T=%d must be >= 0 and S=%d >= 1", who, T, S);
    CHECK(isfinite(threshold) && threshold < 1, err, ATTEND_ERR_ARG, "%s: threshold %g must be below 1", who,
          threshold);
    int n = 0;
    for (int t = 0; t < T; t++) {
        const attend_real *r = w + (size_t)t * S;
        int best = 0;
        for (int j = 0; j < S; j++) {
            CHECK(isfinite((double)r[j]), err, ATTEND_ERR_NONFINITE, "%s: w[%d,%d] is not finite", who, t, j);
            if (r[j] > r[best]) best = j;
        }
        for (int j = 0; j < S; j++) {
            int on = threshold > 0 ? (double)r[j] >= threshold : j == best;
            if (!on) continue;
            CHECK(n < cap, err, ATTEND_ERR_CAPACITY, "%s: more than cap=%d links (step %d)", who, cap, t);
            links[2 * n] = j; /* source position first, as the TSV's column */
            links[2 * n + 1] = t;
            n++;
        }
    }
    *n_links = n;
    return at_ok(err);
}

attend_status attend_alignment_count(const int32_t *ref, int n_ref, const int32_t *hyp, int n_hyp,
                                     attend_alignment_counts *c, attend_error *err) {
    const char *who = "attend_alignment_count";
    CHECK(c && (ref || n_ref == 0) && (hyp || n_hyp == 0), err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !c ? "counts" : !ref ? "ref" : "hyp");
    CHECK(n_ref >= 0 && n_hyp >= 0, err, ATTEND_ERR_SHAPE, "%s: n_ref=%d and n_hyp=%d must be >= 0", who, n_ref,
          n_hyp);
    /* distinct links only: a repeated link counts once (O(n^2): a word's links) */
    long nr = 0, nh = 0, both = 0;
    for (int a = 0; a < n_ref; a++) {
        int dup = 0;
        for (int b = 0; b < a && !dup; b++) dup = ref[2 * b] == ref[2 * a] && ref[2 * b + 1] == ref[2 * a + 1];
        nr += !dup;
    }
    for (int a = 0; a < n_hyp; a++) {
        int dup = 0, hit = 0;
        for (int b = 0; b < a && !dup; b++) dup = hyp[2 * b] == hyp[2 * a] && hyp[2 * b + 1] == hyp[2 * a + 1];
        if (dup) continue;
        nh++;
        for (int b = 0; b < n_ref && !hit; b++) hit = ref[2 * b] == hyp[2 * a] && ref[2 * b + 1] == hyp[2 * a + 1];
        both += hit;
    }
    c->ref += nr;
    c->hyp += nh;
    c->both += both;
    return at_ok(err);
}

void attend_alignment_scores(const attend_alignment_counts *c, double *precision, double *recall, double *f1,
                             double *aer) {
    double p = c && c->hyp ? (double)c->both / c->hyp : NAN, r = c && c->ref ? (double)c->both / c->ref : NAN;
    double f = c && c->hyp + c->ref ? 2.0 * c->both / (double)(c->hyp + c->ref) : NAN;
    if (precision) *precision = p;
    if (recall) *recall = r;
    if (f1) *f1 = f;
    if (aer) *aer = 1 - f;
}
