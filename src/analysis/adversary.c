/*
 * adversary.c — trial 2, adversarial attention (Jain & Wallace 2019, §4.2.2)
 * for a seq2seq model: at each output step t along a fixed baseline (the
 * greedy output, teacher-forced: the prefix and the decoder state entering
 * step t are the model's own), the attention row α̃ [S] as far as possible
 * from the model's α_t in Jensen–Shannon divergence whose output distribution
 * stays within ε total variation of the model's:
 *     max JSD(α_t, α̃)  subject to  TVD(p_t(α_t), p_t(α̃)) <= ε,
 * p_t(α̃) the decoder step recomputed under the context c̃ = Σ_j α̃_j h_j (the
 * cell, Luong's h̃ and the output layer: at_model_step with the run's weight
 * hook replacing step t's weights). The state entering step t + 1 is the
 * model's own again (step t re-run without the hook).
 *
 * Two searches: SEARCH, for any S — every point of the simplex lies on a ray
 * from α_t to one of its faces, and along a ray JSD(α_t, ·) grows (convex, 0
 * at α_t), so half the budget goes to directions: rays toward the vertices
 * and toward uniform random points, each taken to its farthest feasible point
 * (a scan, then bisection); the other half to random walks from the best
 * points of up to four distinct directions (a feasible set can be a thin
 * curved band, best at its far ends), each step kept when feasible and
 * farther. A deterministic heuristic: a lower bound on the maximum. And GRID,
 * for S <= 4, every
 * point of the simplex with coordinates k/r: the brute force that checks the
 * search. One allocation per call, sized by S and the vocabulary: nothing
 * grows with the number of steps or evaluations.
 *
 * Dimension letters: S source positions, V the output vocabulary.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/divergence.h"
#include "analysis/intervene.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/model.h"

/* Points of a ray's scan. */
#define AT_ADV_SCAN 32

/* Step t's weights replaced by w (active when t >= 0). */
typedef struct {
    const attend_model *m;
    int t;
    const attend_real *w; /* [S] */
} adv_hook;

static void adv_weights(void *user, attend_real *w, const uint8_t *valid, int N, int S) {
    const adv_hook *h = user;
    (void)valid;
    if (h->t < 0 || N != 1) return;
    if ((size_t)(w - h->m->acts.weights) / (size_t)S != (size_t)h->t) return;
    memcpy(w, h->w, (size_t)S * sizeof *w);
}

/* How far an attention row's output is from the model's: the decoder step
 * recomputed (the model's trial) or a caller's function (attend_attention_adversary). */
typedef double (*adv_distance_fn)(void *user, const double *x);

typedef struct {
    adv_distance_fn dist;
    void *user;
    int S;
    uint64_t seed;        /* of the search's random points */
    long evals;
} adv_ctx;

/* The model's output step t under a replaced attention row. */
typedef struct {
    attend_model *m;
    adv_hook *hook;
    const int32_t *src;
    int S, V, t;
    int32_t y;            /* step t's input token */
    const double *lp0;    /* [V] the model's log-probs at step t */
    double *lp1;          /* [V] scratch */
    attend_real *w;       /* [S] the row evaluated (the hook reads it) */
} adv_model;

/* TVD of step t's output under weights x [S] (double) from the model's. */
static double adv_model_tvd(void *user, const double *x) {
    adv_model *c = user;
    for (int j = 0; j < c->S; j++) c->w[j] = (attend_real)x[j];
    c->hook->t = c->t;
    attend_model *m = c->m;
    at_model_step(m, c->t, 1, c->S, &c->y, c->src, NULL, m->acts.step_feat, (size_t)m->F, 0);
    at_step_logp(m, c->t, c->S, c->lp1, c->V);
    c->hook->t = -1;
    double tv;
    at_logp_divergences(c->lp0, c->lp1, c->V, &tv, NULL, NULL);
    return tv;
}

static double adv_tvd(adv_ctx *c, const double *x) {
    c->evals++;
    return c->dist(c->user, x);
}

static double adv_jsd(const double *a, const double *b, int S) {
    double js;
    at_prob_divergences(a, b, S, NULL, NULL, &js);
    return js;
}

/* The farthest feasible point of the ray a + λ (d − a), λ in [0, 1], into x
 * [S]: a scan at λ = k/AT_ADV_SCAN (the feasible set need not be star-shaped:
 * along a ray the TVD can rise above epsilon and come back), then
 * bisection after the last feasible λ. JSD(a, ·) grows along the ray (convex,
 * 0 at a), so that point is the ray's best. Returns its JSD, *tv its TVD. */
static double adv_ray(adv_ctx *c, const double *a, const double *d, double eps, double *x, double *tv_out) {
    int S = c->S;
    double lo = 0, lo_tv = 0, hi = -1;
    for (int i = 1; i <= AT_ADV_SCAN; i++) {
        double lam = (double)i / AT_ADV_SCAN;
        for (int j = 0; j < S; j++) x[j] = (1 - lam) * a[j] + lam * d[j];
        double tv = adv_tvd(c, x);
        if (tv <= eps) lo = lam, lo_tv = tv, hi = i < AT_ADV_SCAN ? (double)(i + 1) / AT_ADV_SCAN : -1;
    }
    for (int it = 0; hi > 0 && it < 12; it++) {
        double lam = 0.5 * (lo + hi);
        for (int j = 0; j < S; j++) x[j] = (1 - lam) * a[j] + lam * d[j];
        double tv = adv_tvd(c, x);
        if (tv <= eps) lo = lam, lo_tv = tv;
        else hi = lam;
    }
    for (int j = 0; j < S; j++) x[j] = (1 - lo) * a[j] + lo * d[j];
    *tv_out = lo_tv;
    return lo > 0 ? adv_jsd(a, x, S) : 0;
}

/* d [S] := the point where the ray from a through p leaves the simplex (p != a). */
static int adv_to_face(const double *a, const double *p, double *d, int S) {
    double mu = INFINITY;
    for (int j = 0; j < S; j++) {
        double step = p[j] - a[j];
        if (step < 0) {
            double m = -a[j] / step;
            if (m < mu) mu = m;
        }
    }
    if (!isfinite(mu)) return 0;
    for (int j = 0; j < S; j++) {
        d[j] = a[j] + mu * (p[j] - a[j]);
        if (d[j] < 0) d[j] = 0;
    }
    return 1;
}

static double adv_uniform(attend_rng *r) { return (double)(attend_rng_next(r) >> 11) * 0x1p-53; }

/* The best feasible points of the ray phase in up to AT_ADV_STARTS distinct
 * classes (the position whose weight grew most), best first: where the local
 * phase starts (a feasible set can be a thin curved band with two far ends). */
#define AT_ADV_STARTS 4
typedef struct {
    int n;
    int cls[AT_ADV_STARTS];
    double js[AT_ADV_STARTS], tv[AT_ADV_STARTS];
    double *x[AT_ADV_STARTS]; /* [S] each */
} adv_starts;

static void adv_offer(adv_starts *st, const double *a, const double *x, double js, double tv, int S) {
    if (js <= 0) return;
    int cls = 0;
    for (int j = 1; j < S; j++)
        if (x[j] - a[j] > x[cls] - a[cls]) cls = j;
    int at = -1;
    for (int i = 0; i < st->n; i++)
        if (st->cls[i] == cls) at = i;
    if (at >= 0 && st->js[at] >= js) return;
    if (at < 0) { /* a new class: the last slot, if it beats it */
        if (st->n < AT_ADV_STARTS) at = st->n++;
        else if (js > st->js[AT_ADV_STARTS - 1]) at = AT_ADV_STARTS - 1;
        else return;
    }
    st->cls[at] = cls;
    st->js[at] = js;
    st->tv[at] = tv;
    memcpy(st->x[at], x, (size_t)S * sizeof *x);
    for (; at > 0 && st->js[at] > st->js[at - 1]; at--) { /* best first */
        int c = st->cls[at];
        double j = st->js[at], t = st->tv[at], *p = st->x[at];
        st->cls[at] = st->cls[at - 1], st->js[at] = st->js[at - 1], st->tv[at] = st->tv[at - 1];
        st->x[at] = st->x[at - 1];
        st->cls[at - 1] = c, st->js[at - 1] = j, st->tv[at - 1] = t, st->x[at - 1] = p;
    }
}

/* SEARCH: every point of the simplex lies on a ray from a to one of its
 * faces, so the first phase searches directions: rays toward the vertices and
 * toward uniform random points, each to its farthest feasible point. The
 * second phase walks from the best points of distinct classes: random
 * zero-sum steps of size sigma, kept when feasible and farther, sigma halved
 * after 4S misses. best [S] starts at a; scratch x, d, p [S] each and the
 * starts' points. */
static void adv_search(adv_ctx *c, const double *a, double eps, long budget, double *best, double *best_tv,
                       double *x, double *d, double *p, adv_starts *st) {
    int S = c->S;
    memcpy(best, a, (size_t)S * sizeof *best);
    double bj = 0, tv;
    *best_tv = 0;
    st->n = 0;
    if (S < 2) return;
    long start = c->evals;
    attend_rng rng;
    attend_rng_seed(&rng, 0x61747461636bULL + c->seed);
    for (int k = 0; k < S && c->evals - start < budget; k++) { /* the vertices */
        for (int j = 0; j < S; j++) d[j] = j == k;
        double js = adv_ray(c, a, d, eps, x, &tv);
        adv_offer(st, a, x, js, tv, S);
    }
    while (c->evals - start < budget / 2) { /* uniform points of the simplex */
        double sum = 0;
        for (int j = 0; j < S; j++) p[j] = -log(1 - adv_uniform(&rng)), sum += p[j];
        for (int j = 0; j < S; j++) p[j] /= sum;
        if (!adv_to_face(a, p, d, S)) continue;
        double js = adv_ray(c, a, d, eps, x, &tv);
        adv_offer(st, a, x, js, tv, S);
    }
    for (int i = 0; i < st->n; i++) { /* walks from the starts, the rest of the budget shared */
        long until = c->evals + (budget - (c->evals - start)) / (st->n - i);
        double *cur = st->x[i], cj = st->js[i], ct = st->tv[i], sigma = 0.25;
        int misses = 0;
        while (c->evals < until && sigma >= 1e-7) {
            double mean = 0, sum = 0;
            for (int j = 0; j < S; j++) d[j] = adv_uniform(&rng) - 0.5, mean += d[j];
            for (int j = 0; j < S; j++) {
                p[j] = cur[j] + sigma * (d[j] - mean / S);
                if (p[j] < 0) p[j] = 0;
                sum += p[j];
            }
            for (int j = 0; j < S; j++) p[j] /= sum;
            double js = adv_jsd(a, p, S);
            if (js > cj && (tv = adv_tvd(c, p)) <= eps) {
                memcpy(cur, p, (size_t)S * sizeof *p);
                cj = js;
                ct = tv;
                misses = 0;
            } else if (++misses >= 4 * S) {
                sigma *= 0.5;
                misses = 0;
            }
        }
        if (cj > bj) bj = cj, *best_tv = ct, memcpy(best, cur, (size_t)S * sizeof *best);
    }
}

/* GRID: every point k/r of the simplex (S <= 4). */
static void adv_grid(adv_ctx *c, const double *a, double eps, int r, double *best, double *best_tv, double *x) {
    int S = c->S;
    memcpy(best, a, (size_t)S * sizeof *best);
    double bj = 0;
    *best_tv = 0;
    int k[4] = {0, 0, 0, 0};
    for (;;) {
        int used = 0;
        for (int j = 0; j < S - 1; j++) used += k[j];
        if (used <= r) {
            for (int j = 0; j < S - 1; j++) x[j] = (double)k[j] / r;
            x[S - 1] = (double)(r - used) / r;
            double js = adv_jsd(a, x, S);
            if (js > bj) {
                double tv = adv_tvd(c, x);
                if (tv <= eps) {
                    bj = js;
                    *best_tv = tv;
                    memcpy(best, x, (size_t)S * sizeof *best);
                }
            }
        }
        int j = 0; /* the next point of the S-1 counters */
        while (j < S - 1 && ++k[j] > r) k[j++] = 0;
        if (j == S - 1) break;
    }
}

attend_status attend_model_adversary(attend_model *m, const int32_t *src, int S, const int32_t *base, int base_len,
                                     const attend_adversary_options *o, attend_adversary_result *res,
                                     attend_error *err) {
    const char *who = "attend_model_adversary";
    CHECK(m && src && o && res && (base || base_len == 0), err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !m ? "model" : !src ? "src [S]" : !o ? "options" : !res ? "result" : "base [base_len]");
    const attend_model_config *c = &m->cfg;
    CHECK(m->dec->vocabulary && m->dec->attentive, err, ATTEND_ERR_ARG,
          "%s: decoder '%s': adversarial attention needs attention and an output over the target vocabulary "
          "(bahdanau and luong decoders)", who, attend_decoder_name(c->decoder));
    CHECK(!c->copy && !c->coverage && !c->monotonic, err, ATTEND_ERR_ARG,
          "%s: %s models are not supported (their later steps read this step's attention)", who,
          c->copy ? "copy" : c->coverage ? "coverage" : "monotonic");
    int32_t len1 = S;
    TRY(at_model_check_source(m, src, &len1, 1, S, who, err));
    int steps = base_len + 1;
    CHECK(base_len >= 0 && steps <= m->Tcap, err, ATTEND_ERR_CAPACITY,
          "%s: base_len=%d: the baseline and its EOS must fit max_tgt_len+1 = %d steps", who, base_len, m->Tcap);
    for (int t = 0; t < base_len; t++)
        CHECK(base[t] > ATTEND_EOS && base[t] < c->tgt_vocab, err, ATTEND_ERR_ARG,
              "%s: base[%d]=%d is not an output token id in [%d,%d)", who, t, (int)base[t], ATTEND_EOS + 1,
              c->tgt_vocab);
    CHECK(isfinite(o->epsilon) && o->epsilon >= 0 && o->epsilon <= 1, err, ATTEND_ERR_ARG,
          "%s: epsilon=%g outside [0, 1] (a total variation)", who, o->epsilon);
    CHECK(o->method == ATTEND_ADVERSARY_SEARCH || o->method == ATTEND_ADVERSARY_GRID, err, ATTEND_ERR_ARG,
          "%s: unknown method %d", who, (int)o->method);
    CHECK(o->method != ATTEND_ADVERSARY_GRID || (S <= 4 && o->grid >= 1 && o->grid <= 4096), err, ATTEND_ERR_ARG,
          "%s: the grid search takes S <= 4 (S=%d) and a resolution in [1, 4096] (grid=%d)", who, S, o->grid);
    long budget = o->max_evals > 0 ? o->max_evals : 1000;

    int V = c->tgt_vocab;
    /* one allocation: log-probs [2,V]; the model's row, the best, scratch [3,S]
     * and the search's starts [AT_ADV_STARTS,S] in double; the evaluated row [S] */
    size_t bytes = (2 * (size_t)V + (5 + AT_ADV_STARTS) * (size_t)S) * sizeof(double) + (size_t)S * sizeof(attend_real);
    char *mem = malloc(bytes);
    CHECK(mem, err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes", who, bytes);
    double *lp0 = (double *)(void *)mem, *lp1 = lp0 + V, *a = lp1 + V, *best = a + S, *x = best + S;
    double *d = x + S, *pt = d + S;
    adv_starts starts;
    for (int i = 0; i < AT_ADV_STARTS; i++) starts.x[i] = pt + S + (size_t)i * S;
    attend_real *w = (attend_real *)(void *)(pt + S + (size_t)AT_ADV_STARTS * S);

    adv_hook hook = {m, -1, w};
    adv_model mc = {m, &hook, src, S, V, 0, ATTEND_BOS, lp0, lp1, w};
    adv_ctx cx = {adv_model_tvd, &mc, S, 0, 0};
    at_model_analyse(m, adv_weights, &hook);
    int32_t len = S;
    at_model_encode(m, src, &len, 1, S);
    double js_sum = 0;
    res->jsd_max = 0;
    for (int t = 0; t < steps; t++) {
        mc.t = t;
        mc.y = t == 0 ? ATTEND_BOS : base[t - 1];
        cx.seed = (uint64_t)t;
        /* the model's own step: α_t and p_t */
        at_model_step(m, t, 1, S, &mc.y, src, NULL, m->acts.step_feat, (size_t)m->F, 0);
        at_step_logp(m, t, S, lp0, V);
        for (int j = 0; j < S; j++) a[j] = (double)m->acts.weights[(size_t)t * S + j];
        double tv = 0;
        if (o->method == ATTEND_ADVERSARY_GRID) adv_grid(&cx, a, o->epsilon, o->grid, best, &tv, x);
        else adv_search(&cx, a, o->epsilon, budget, best, &tv, x, d, pt, &starts);
        double js = adv_jsd(a, best, S);
        if (res->adversary)
            for (int j = 0; j < S; j++) res->adversary[(size_t)t * S + j] = (attend_real)best[j];
        if (res->jsd) res->jsd[t] = js;
        if (res->tvd) res->tvd[t] = tv;
        js_sum += js;
        if (js > res->jsd_max) res->jsd_max = js;
        /* the model's own step again: the state entering step t + 1 */
        at_model_step(m, t, 1, S, &mc.y, src, NULL, m->acts.step_feat, (size_t)m->F, 0);
        if (o->progress) o->progress(o->progress_user, t + 1, steps);
    }
    at_model_analyse(m, NULL, NULL);
    res->steps = steps;
    res->jsd_mean = js_sum / steps;
    res->evals = cx.evals;
    free(mem);
    return at_ok(err);
}

attend_status attend_attention_adversary(const double *alpha, int S, attend_output_distance_fn distance, void *user,
                                         const attend_adversary_options *o, double *adversary, double *jsd,
                                         double *dist, long *evals, attend_error *err) {
    const char *who = "attend_attention_adversary";
    CHECK(alpha && distance && o && adversary, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !alpha ? "alpha [S]" : !distance ? "distance" : !o ? "options" : "adversary [S]");
    CHECK(S >= 1 && S <= 1000000, err, ATTEND_ERR_SHAPE, "%s: S=%d outside [1, 1000000]", who, S);
    double sum = 0;
    for (int j = 0; j < S; j++) {
        CHECK(isfinite(alpha[j]) && alpha[j] >= 0, err, ATTEND_ERR_ARG,
              "%s: alpha[%d]=%g is not a finite weight >= 0", who, j, alpha[j]);
        sum += alpha[j];
    }
    CHECK(fabs(sum - 1) <= 1e-6, err, ATTEND_ERR_ARG, "%s: alpha sums to %.9g, not 1", who, sum);
    CHECK(isfinite(o->epsilon) && o->epsilon >= 0, err, ATTEND_ERR_ARG,
          "%s: epsilon=%g is not a finite bound >= 0", who, o->epsilon);
    CHECK(o->method == ATTEND_ADVERSARY_SEARCH || o->method == ATTEND_ADVERSARY_GRID, err, ATTEND_ERR_ARG,
          "%s: unknown method %d", who, (int)o->method);
    CHECK(o->method != ATTEND_ADVERSARY_GRID || (S <= 4 && o->grid >= 1 && o->grid <= 4096), err, ATTEND_ERR_ARG,
          "%s: the grid search takes S <= 4 (S=%d) and a resolution in [1, 4096] (grid=%d)", who, S, o->grid);
    long budget = o->max_evals > 0 ? o->max_evals : 1000;
    /* one allocation: the best and scratch [4,S], the search's starts [AT_ADV_STARTS,S] */
    size_t bytes = (4 + AT_ADV_STARTS) * (size_t)S * sizeof(double);
    double *best = malloc(bytes);
    CHECK(best, err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes", who, bytes);
    double *x = best + S, *d = x + S, *pt = d + S;
    adv_starts starts;
    for (int i = 0; i < AT_ADV_STARTS; i++) starts.x[i] = pt + S + (size_t)i * S;
    adv_ctx cx = {distance, user, S, 0, 0};
    double dv = 0;
    if (o->method == ATTEND_ADVERSARY_GRID) adv_grid(&cx, alpha, o->epsilon, o->grid, best, &dv, x);
    else adv_search(&cx, alpha, o->epsilon, budget, best, &dv, x, d, pt, &starts);
    memcpy(adversary, best, (size_t)S * sizeof *best);
    if (jsd) *jsd = adv_jsd(alpha, best, S);
    if (dist) *dist = dv;
    if (evals) *evals = cx.evals;
    free(best);
    return at_ok(err);
}
