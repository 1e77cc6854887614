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
 * SEARCH, for any S, runs two strategies, each with the whole budget, and
 * keeps the farther of their feasible rows: never below either. Both start
 * from one fact — every point of the simplex lies on a ray from α_t to one of
 * its faces, and along a ray JSD(α_t, ·) grows (convex, 0 at α_t) — so half
 * the budget goes to directions: rays toward the vertices and toward uniform
 * random points, each taken to its farthest feasible point. RAYS (the search
 * of 2026-12-02; it found more in the mean on the shipped G2P model and the
 * reversal and copy models, docs/RESULTS.md) scans each ray and
 * bisects after its last feasible point, then walks randomly from the best
 * points of up to four distinct directions, taking the first feasible
 * farther proposal. FOLLOW (the search of 2026-12-03; it finds thin feasible
 * sets, where RAYS can find nothing) scans, scans finer near α_t when nothing on the first scan
 * is feasible, refines; then from the best points of up to four directions:
 * from each a walk along the constraint (the distance's gradient by forward
 * differences, the JSD's projected on the tangent of its level set, the
 * farthest feasible point along that line: a thin feasible set, a slab
 * along a nearly linear output, is walked to its far end), then random walks
 * (a feasible set can be a thin curved band, best at its far ends). A
 * deterministic heuristic: a lower bound on the maximum. And GRID, for S <= 4,
 * every point of the simplex with coordinates k/r: the brute force that
 * checks the search.
 *
 * RAYS, FOLLOW and GRID can also be asked for alone (attend_adversary_method).
 *
 * The candidate rows of a round (a scan, a refinement, a gradient, a walk's
 * proposals; RAYS's next three bisection levels and its next proposals,
 * evaluated ahead of its sequential decisions) are evaluated together:
 * attend_model_adversary encodes N copies of the source, so every row's
 * state entering step t is the model's own,
 * and runs step t once for up to N candidate rows (the weight hook puts them
 * in), its GEMMs over N rows. The rounds do not depend on N: the rows searched
 * are the same for any batch. One allocation per call, sized by S, N and the
 * vocabulary: nothing grows with the number of steps or evaluations.
 *
 * Dimension letters: S source positions, V the output vocabulary.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/divergence.h"
#include "analysis/intervene.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/model.h"

/* A ray's scan: AT_ADV_LIN points k/AT_ADV_LIN, and when the first of them
 * is infeasible (a thin feasible set) AT_ADV_GEO more at 2^-(6..13); then
 * AT_ADV_ROUNDS rounds of AT_ADV_REFINE points after the best. */
#define AT_ADV_LIN 32
#define AT_ADV_GEO 8
#define AT_ADV_REFINE 7
#define AT_ADV_ROUNDS 3
/* Random proposals per round of a walk. */
#define AT_ADV_WALK 16
/* Rows of the scratch batch (the largest round; gradients are cut into it). */
#define AT_ADV_ROWS AT_ADV_LIN
/* Rows per decoder-step call by default: every call runs all its rows,
 * and rounds of fewer points (refinements, walks, gradients) pad the rest;
 * on the shipped G2P model 4-8 rows a call took the least CPU (docs/RESULTS.md). */
#define AT_ADV_BATCH 8
/* The forward difference of the distance's gradient. */
#define AT_ADV_H 1e-4

/* Step t's weights: rows [0, n) replaced by w (active when t >= 0). */
typedef struct {
    const attend_model *m;
    int t, N, n;
    const attend_real *w; /* [n,S] */
} adv_hook;

static void adv_weights(void *user, attend_real *w, const uint8_t *valid, int N, int S) {
    const adv_hook *h = user;
    (void)valid;
    if (h->t < 0 || N != h->N) return;
    if ((size_t)(w - h->m->acts.weights) / ((size_t)N * S) != (size_t)h->t) return;
    memcpy(w, h->w, (size_t)h->n * S * sizeof *w);
}

/* How far the outputs under n attention rows X [n,S] (double) are from the
 * original output, into out [n]: the decoder step recomputed (the model's
 * trial) or a caller's function row by row (attend_attention_adversary). */
typedef void (*adv_distance_fn)(void *user, const double *X, int n, double *out);

typedef struct {
    adv_distance_fn dist;
    void *user;
    int S, cap;           /* cap: rows per call of dist */
    uint64_t seed;        /* of the search's random points */
    long evals, limit;    /* evaluations made; the most allowed */
    long steps;           /* the first strategy's evaluations as it counts them (adv_search_seq) */
    int ahead;            /* 1: the first strategy evaluates one row at a time (a caller's distance);
                             else its bisections 3 levels and its walks AT_ADV_AHEAD proposals a round */
    double *X, *out;      /* [AT_ADV_ROWS,S], [AT_ADV_ROWS]: the batch */
} adv_ctx;

/* The distances of the batch's first n rows (n <= AT_ADV_ROWS), cap rows a
 * call; 0 (nothing evaluated) when the budget has no room for them. */
static int adv_eval(adv_ctx *c, int n) {
    if (n > c->limit - c->evals) return 0;
    for (int i = 0; i < n; i += c->cap) {
        int k = n - i < c->cap ? n - i : c->cap;
        c->dist(c->user, c->X + (size_t)i * c->S, k, c->out + i);
    }
    c->evals += n;
    return 1;
}

/* The model's output step t under replaced attention rows, N rows a call. */
typedef struct {
    attend_model *m;
    adv_hook *hook;
    const int32_t *src;   /* [N,S] the source, replicated */
    int S, V, N, t;
    int32_t *y;           /* [N] step t's input token, replicated */
    const double *lp0;    /* [V] the model's log-probs at step t */
    double *lp1;          /* [N,V] scratch */
    attend_real *w;       /* [N,S] the rows evaluated (the hook reads them) */
} adv_model;

/* TVD of step t's output under each of the n rows X [n,S] (n <= N) from the
 * model's; rows n..N-1 of the call keep the model's own weights. */
static void adv_model_tvd(void *user, const double *X, int n, double *out) {
    adv_model *c = user;
    for (size_t i = 0; i < (size_t)n * c->S; i++) c->w[i] = (attend_real)X[i];
    c->hook->t = c->t;
    c->hook->n = n;
    attend_model *m = c->m;
    at_model_step(m, c->t, c->N, c->S, c->y, c->src, NULL, m->acts.step_feat, (size_t)m->F, 0);
    at_step_logp_rows(m, c->t, c->N, c->S, n, c->lp1, c->V);
    c->hook->t = -1;
    for (int i = 0; i < n; i++) at_logp_divergences(c->lp0, c->lp1 + (size_t)i * c->V, c->V, &out[i], NULL, NULL);
}

/* A caller's distance, one row at a time. */
typedef struct {
    attend_output_distance_fn f;
    void *user;
    int S;
} adv_caller;

static void adv_caller_dist(void *user, const double *X, int n, double *out) {
    const adv_caller *c = user;
    for (int i = 0; i < n; i++) out[i] = c->f(c->user, X + (size_t)i * c->S);
}

static double adv_jsd(const double *a, const double *b, int S) {
    double js;
    at_prob_divergences(a, b, S, NULL, NULL, &js);
    return js;
}

/* Fills the batch with o + lam[i] (e − o), evaluates it and offers its
 * feasible points to the best (*bl, *bj, *btv); returns the number of
 * points (-1: out of budget). */
static int adv_points(adv_ctx *c, const double *a, const double *o, const double *e, const double *lam, int n,
                      double eps, double *bl, double *bj, double *btv) {
    int S = c->S;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < S; j++) c->X[(size_t)i * S + j] = (1 - lam[i]) * o[j] + lam[i] * e[j];
    if (!adv_eval(c, n)) return -1;
    for (int i = 0; i < n; i++) {
        if (!(c->out[i] <= eps)) continue;
        double js = adv_jsd(a, c->X + (size_t)i * S, S);
        if (js > *bj) *bj = js, *bl = lam[i], *btv = c->out[i];
    }
    return n;
}

/* The best feasible point (largest JSD(a, ·), distance <= eps) of the
 * segment o + λ (e − o), λ in (0, 1], o feasible with JSD oj and distance
 * otv: a scan at λ = k/AT_ADV_LIN (the feasible set need not be convex: the
 * distance can rise above eps and come back); when nothing there is feasible
 * a scan at λ = 2^-13..2^-6 (a thin feasible set); then rounds of refinement
 * between the last feasible point and the infeasible one after it (on a ray
 * from a, or a line leaving o uphill, JSD grows along the line: the farthest
 * feasible point is the best). x [S] gets the best (o when nothing beats
 * oj); returns its JSD, *tv its distance. */
static double adv_line(adv_ctx *c, const double *a, const double *o, double oj, double otv, const double *e,
                       double eps, double *x, double *tv) {
    int S = c->S;
    double bl = 0, bj = oj, btv = otv, lam[AT_ADV_ROWS];
    for (int i = 0; i < AT_ADV_LIN; i++) lam[i] = (double)(i + 1) / AT_ADV_LIN;
    int n = adv_points(c, a, o, e, lam, AT_ADV_LIN, eps, &bl, &bj, &btv);
    double lo = 0, hi = -1; /* the bracket: lo feasible (0: o itself), hi infeasible */
    for (int i = 0; i < n; i++) {
        if (c->out[i] <= eps) lo = lam[i], hi = -1;
        else if (hi < 0) hi = lam[i];
    }
    if (n > 0 && lo == 0) { /* nothing feasible on the scan */
        for (int i = 0; i < AT_ADV_GEO; i++) lam[i] = ldexp(1.0, -(5 + AT_ADV_GEO - i));
        n = adv_points(c, a, o, e, lam, AT_ADV_GEO, eps, &bl, &bj, &btv);
        hi = lam[0];
        for (int i = 0; i < n; i++) {
            if (c->out[i] <= eps) lo = lam[i], hi = i + 1 < n ? lam[i + 1] : (double)1 / AT_ADV_LIN;
            else break;
        }
    }
    for (int r = 0; n > 0 && hi > 0 && r < AT_ADV_ROUNDS; r++) {
        for (int i = 0; i < AT_ADV_REFINE; i++) lam[i] = lo + (hi - lo) * (i + 1) / (AT_ADV_REFINE + 1);
        n = adv_points(c, a, o, e, lam, AT_ADV_REFINE, eps, &bl, &bj, &btv);
        for (int i = 0; i < n; i++) {
            if (!(c->out[i] <= eps)) {
                hi = lam[i];
                break;
            }
            lo = lam[i];
        }
    }
    for (int j = 0; j < S; j++) x[j] = (1 - bl) * o[j] + bl * e[j];
    *tv = btv;
    return bj;
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

/* Scratch of the local phases: [4,S]. */
typedef struct {
    double *g, *d, *e, *x;
} adv_scratch;

/* The walk along the constraint from cur (feasible, JSD *cj, distance *ct),
 * until the budget's mark `until` or no progress: the distance's gradient g
 * by forward differences toward each vertex on the free positions (weight >
 * 0), the JSD's gradient 1/2 log(x/m) projected on the tangent of the level
 * set of the distance (minus its component along g when that one points
 * outward) and on the simplex's plane, then the farthest feasible point of
 * the line to the simplex's face along it. A thin feasible set (a slab
 * along a nearly linear output) is walked to its far end in a few lines,
 * where random steps would need many. */
static void adv_follow(adv_ctx *c, const double *a, double eps, double *cur, double *cj, double *ct, long until,
                       adv_scratch *w) {
    int S = c->S;
    double *g = w->g, *d = w->d, *e = w->e, *x = w->x;
    for (int it = 0; it < 4 * S + 8; it++) {
        int F = 0; /* the free positions' count */
        for (int j = 0; j < S; j++) F += cur[j] > 0;
        if (F < 2 || c->evals + F + AT_ADV_LIN > until) return;
        /* the distance's gradient, AT_ADV_ROWS rows a batch */
        for (int j0 = 0; j0 < S;) {
            int n = 0, js[AT_ADV_ROWS];
            for (; j0 < S && n < AT_ADV_ROWS; j0++) {
                if (!(cur[j0] > 0)) continue;
                double *row = c->X + (size_t)n * S;
                for (int j = 0; j < S; j++) row[j] = (1 - AT_ADV_H) * cur[j] + AT_ADV_H * (j == j0);
                js[n++] = j0;
            }
            if (n == 0) break;
            if (!adv_eval(c, n)) return;
            for (int i = 0; i < n; i++) {
                if (!isfinite(c->out[i])) return;
                g[js[i]] = (c->out[i] - *ct) / AT_ADV_H;
            }
        }
        double mg = 0, mj = 0;
        for (int j = 0; j < S; j++) {
            if (!(cur[j] > 0)) continue;
            d[j] = 0.5 * log(2 * cur[j] / (a[j] + cur[j]));
            mg += g[j], mj += d[j];
        }
        double dot = 0, gg = 0, dd = 0;
        for (int j = 0; j < S; j++) {
            if (!(cur[j] > 0)) {
                g[j] = d[j] = 0;
                continue;
            }
            g[j] -= mg / F, d[j] -= mj / F;
            dot += d[j] * g[j], gg += g[j] * g[j];
        }
        if (gg > 0 && dot > 0) /* keep the distance: the tangent, tilted inward by 1e-3 */
            for (int j = 0; j < S; j++) d[j] -= dot / gg * g[j];
        for (int j = 0; j < S; j++) dd += d[j] * d[j];
        if (!(dd > 1e-24)) return;
        if (gg > 0 && dot > 0)
            for (int j = 0; j < S; j++) d[j] -= 1e-3 * sqrt(dd / gg) * g[j];
        double mu = INFINITY; /* to the simplex's face */
        for (int j = 0; j < S; j++)
            if (d[j] < 0 && cur[j] / -d[j] < mu) mu = cur[j] / -d[j];
        if (!isfinite(mu)) return;
        for (int j = 0; j < S; j++) {
            e[j] = cur[j] + mu * d[j];
            if (e[j] < 0 || (d[j] < 0 && cur[j] / -d[j] == mu)) e[j] = 0;
        }
        double tv, js = adv_line(c, a, cur, *cj, *ct, e, eps, x, &tv);
        if (!(js > *cj + 1e-12)) return;
        memcpy(cur, x, (size_t)S * sizeof *x);
        *cj = js, *ct = tv;
    }
}

/* Random walk from cur (feasible, JSD *cj, distance *ct) until the budget's
 * mark: rounds of AT_ADV_WALK zero-sum steps of size sigma, the farther ones
 * evaluated in one batch, the farthest feasible kept; sigma halved after 4S
 * proposals without a step. */
/* A walk's proposals that are not farther cost no evaluation, so from a
 * point no move leaves (a vertex the output ignores) the budget alone would
 * let it halve sigma 22 times over 4S proposals each: O(S^2) work whatever
 * max_evals says (43 s at S = 2000). It also stops after this many proposals
 * per evaluation it may make (plus a floor): never reached at the source
 * lengths of real models (88 S proposals in all, under the floor for S <= 46). */
#define AT_ADV_PROPOSALS(budget) (256 * (long)(budget) + 4096)

static void adv_walk(adv_ctx *c, const double *a, double eps, double *cur, double *cj, double *ct, long until,
                     attend_rng *rng, adv_scratch *w) {
    int S = c->S;
    double sigma = 0.25, *d = w->d;
    int misses = 0;
    long proposals = 0, max_proposals = AT_ADV_PROPOSALS(until - c->evals);
    while (c->evals < until && sigma >= 1e-7 && proposals < max_proposals) {
        proposals += AT_ADV_WALK;
        int n = 0;
        for (int k = 0; k < AT_ADV_WALK; k++) {
            double mean = 0, sum = 0, *p = c->X + (size_t)n * S;
            for (int j = 0; j < S; j++) d[j] = adv_uniform(rng) - 0.5, mean += d[j];
            for (int j = 0; j < S; j++) {
                p[j] = cur[j] + sigma * (d[j] - mean / S);
                if (p[j] < 0) p[j] = 0;
                sum += p[j];
            }
            for (int j = 0; j < S; j++) p[j] /= sum;
            if (adv_jsd(a, p, S) > *cj) n++; /* only the farther ones are evaluated */
        }
        if (n > until - c->evals) n = (int)(until - c->evals);
        int best = -1;
        if (n > 0) {
            if (!adv_eval(c, n)) return;
            double bj = *cj;
            for (int i = 0; i < n; i++) {
                if (!(c->out[i] <= eps)) continue;
                double js = adv_jsd(a, c->X + (size_t)i * S, S);
                if (js > bj) bj = js, best = i;
            }
        }
        if (best >= 0) {
            memcpy(cur, c->X + (size_t)best * S, (size_t)S * sizeof *cur);
            *cj = adv_jsd(a, cur, S);
            *ct = c->out[best];
            misses = 0;
        } else if ((misses += AT_ADV_WALK) >= 4 * S) {
            sigma *= 0.5;
            misses = 0;
        }
    }
}

/* ----------------------------------------------------------------------
 * The first strategy: the search of 2026-12-02 (rays scanned at k/AT_ADV_LIN
 * and bisected 12 times; then random walks that keep the first feasible
 * farther proposal), made as it was one evaluation at a time: its
 * evaluations (c->steps, what its budget counts) and its rows are the
 * same; only the calls are batched. A bisection's next 3 levels (7 points)
 * are evaluated together and the path read from them; a walk's next
 * AT_ADV_AHEAD farther proposals (as the walk makes them while none is
 * accepted) are evaluated together, and the walk goes on after the first
 * feasible one, from the random state after it (the rows after it are
 * evaluated, not counted, not used). */
#define AT_ADV_BISECT 12
#define AT_ADV_AHEAD 4

/* The farthest feasible point of the ray a + λ (d − a), λ in [0, 1], into
 * x [S]: the scan at λ = k/AT_ADV_LIN (the distance can rise above eps and
 * come back), then AT_ADV_BISECT bisections after the last feasible λ.
 * Returns its JSD (0 when nothing on the scan is feasible), *tv its
 * distance. */
static double adv_ray_seq(adv_ctx *c, const double *a, const double *d, double eps, double *x, double *tv) {
    int S = c->S;
    double lo = 0, lo_tv = 0, hi = -1, lam[AT_ADV_ROWS];
    for (int i = 0; i < AT_ADV_LIN; i++) {
        lam[i] = (double)(i + 1) / AT_ADV_LIN;
        for (int j = 0; j < S; j++) c->X[(size_t)i * S + j] = (1 - lam[i]) * a[j] + lam[i] * d[j];
    }
    adv_eval(c, AT_ADV_LIN);
    c->steps += AT_ADV_LIN;
    for (int i = 0; i < AT_ADV_LIN; i++)
        if (c->out[i] <= eps) lo = lam[i], lo_tv = c->out[i], hi = i + 1 < AT_ADV_LIN ? lam[i + 1] : -1;
    for (int it = 0; hi > 0 && it < AT_ADV_BISECT; it += c->ahead == 1 ? 1 : 3) {
        /* the 7 points a bisection can visit in 3 levels, by its own arithmetic: node k of level l (heap order) */
        double L[8], H[8], mid[8];
        L[1] = lo, H[1] = hi;
        for (int k = 1; k < 8; k++) {
            mid[k] = 0.5 * (L[k] + H[k]);
            if (2 * k + 1 < 8) L[2 * k] = L[k], H[2 * k] = mid[k], L[2 * k + 1] = mid[k], H[2 * k + 1] = H[k];
        }
        int levels = c->ahead == 1 ? 1 : AT_ADV_BISECT - it < 3 ? AT_ADV_BISECT - it : 3, n = (1 << levels) - 1;
        for (int k = 1; k <= n; k++)
            for (int j = 0; j < S; j++) c->X[(size_t)(k - 1) * S + j] = (1 - mid[k]) * a[j] + mid[k] * d[j];
        adv_eval(c, n);
        for (int l = 0, k = 1; l < levels; l++) { /* the path: right (k = 2k + 1) when feasible */
            c->steps++;
            if (c->out[k - 1] <= eps) lo = mid[k], lo_tv = c->out[k - 1], k = 2 * k + 1;
            else hi = mid[k], k = 2 * k;
        }
    }
    for (int j = 0; j < S; j++) x[j] = (1 - lo) * a[j] + lo * d[j];
    *tv = lo_tv;
    return lo > 0 ? adv_jsd(a, x, S) : 0;
}

/* The walk from cur (feasible, JSD *cj, distance *ct) until c->steps
 * reaches `until`: zero-sum steps of size sigma; a proposal farther than cur
 * is evaluated and taken when feasible; sigma halved after 4S proposals
 * without a step (a proposal not farther, or not feasible). */
static void adv_walk_seq(adv_ctx *c, const double *a, double eps, double *cur, double *cj, double *ct, long until,
                         attend_rng *rng, adv_scratch *w) {
    int S = c->S;
    double sigma = 0.25, *d = w->d;
    int misses = 0;
    long proposals = 0, max_proposals = AT_ADV_PROPOSALS(until - c->steps);
    while (c->steps < until && sigma >= 1e-7 && proposals < max_proposals) {
        /* the next farther proposals while none is taken, with the walk's state after each */
        attend_rng r = *rng, after[AT_ADV_AHEAD];
        double s = sigma, sig[AT_ADV_AHEAD];
        int mi = misses, n = 0;
        long lg = c->steps;
        while (n < (c->ahead == 1 ? 1 : AT_ADV_AHEAD) && lg < until && s >= 1e-7) {
            double mean = 0, sum = 0, *p = c->X + (size_t)n * S;
            for (int j = 0; j < S; j++) d[j] = adv_uniform(&r) - 0.5, mean += d[j];
            for (int j = 0; j < S; j++) {
                p[j] = cur[j] + s * (d[j] - mean / S);
                if (p[j] < 0) p[j] = 0;
                sum += p[j];
            }
            for (int j = 0; j < S; j++) p[j] /= sum;
            proposals++;
            if (adv_jsd(a, p, S) > *cj) after[n] = r, sig[n] = s, n++, lg++;
            if (++mi >= 4 * S) s *= 0.5, mi = 0; /* as if not taken */
        }
        int took = -1;
        if (n > 0) {
            adv_eval(c, n);
            for (int i = 0; i < n && took < 0; i++)
                if (c->out[i] <= eps) took = i;
        }
        if (took < 0) { /* none taken: the walk's state after them all */
            *rng = r, sigma = s, misses = mi;
            c->steps = lg;
            continue;
        }
        memcpy(cur, c->X + (size_t)took * S, (size_t)S * sizeof *cur);
        *cj = adv_jsd(a, cur, S);
        *ct = c->out[took];
        *rng = after[took], sigma = sig[took], misses = 0;
        c->steps += took + 1;
    }
}

/* The first strategy: rays toward the vertices, then toward uniform random
 * points while half the budget lasts, each to its farthest feasible point;
 * then from the best of up to AT_ADV_STARTS distinct classes a walk each,
 * the rest of the budget shared. best [S] starts at a. */
static void adv_search_seq(adv_ctx *c, const double *a, double eps, long budget, double *best, double *best_tv,
                           adv_scratch *w, adv_starts *st) {
    int S = c->S;
    double *x = w->x, *d = w->e, *p = w->g;
    memcpy(best, a, (size_t)S * sizeof *best);
    double bj = 0, tv;
    *best_tv = 0;
    st->n = 0;
    if (S < 2) return;
    c->limit = LONG_MAX; /* its own count: c->steps */
    long start = c->steps = 0;
    attend_rng rng;
    attend_rng_seed(&rng, 0x61747461636bULL + c->seed);
    for (int k = 0; k < S && c->steps - start < budget; k++) { /* the vertices */
        for (int j = 0; j < S; j++) d[j] = j == k;
        double js = adv_ray_seq(c, a, d, eps, x, &tv);
        adv_offer(st, a, x, js, tv, S);
    }
    while (c->steps - start < budget / 2) { /* uniform points of the simplex */
        double sum = 0;
        for (int j = 0; j < S; j++) p[j] = -log(1 - adv_uniform(&rng)), sum += p[j];
        for (int j = 0; j < S; j++) p[j] /= sum;
        if (!adv_to_face(a, p, d, S)) continue;
        double js = adv_ray_seq(c, a, d, eps, x, &tv);
        adv_offer(st, a, x, js, tv, S);
    }
    for (int i = 0; i < st->n; i++) { /* walks from the starts, the rest of the budget shared */
        long until = c->steps + (budget - (c->steps - start)) / (st->n - i);
        double *cur = st->x[i], cj = st->js[i], ct = st->tv[i];
        adv_walk_seq(c, a, eps, cur, &cj, &ct, until, &rng, w);
        if (cj > bj) bj = cj, *best_tv = ct, memcpy(best, cur, (size_t)S * sizeof *best);
    }
}

/* ----------------------------------------------------------------------
 * The second strategy: the search of 2026-12-03. */

/* SEARCH: every point of the simplex lies on a ray from a to one of its
 * faces, so the first phase (half the budget; all the vertices at least)
 * searches directions: rays toward the vertices and toward uniform random
 * points, each to its farthest feasible point. The rest of the budget is
 * shared by the best points of distinct classes: from each, a walk along
 * the constraint (at most two thirds of its share), then a random walk.
 * best [S] starts at a. */
static void adv_search_walk(adv_ctx *c, const double *a, double eps, long budget, double *best, double *best_tv,
                            adv_scratch *w, adv_starts *st) {
    int S = c->S;
    double *x = w->x, *d = w->e, *p = w->g;
    memcpy(best, a, (size_t)S * sizeof *best);
    double bj = 0, tv;
    *best_tv = 0;
    st->n = 0;
    if (S < 2) return;
    long start = c->evals;
    c->limit = start + budget;
    attend_rng rng;
    attend_rng_seed(&rng, 0x61747461636bULL + c->seed);
    for (int k = 0; k < S && c->evals + AT_ADV_LIN <= c->limit; k++) { /* the vertices */
        for (int j = 0; j < S; j++) d[j] = j == k;
        double js = adv_line(c, a, a, 0, 0, d, eps, x, &tv);
        adv_offer(st, a, x, js, tv, S);
    }
    while (c->evals + AT_ADV_LIN <= start + budget / 2) { /* uniform points of the simplex */
        double sum = 0;
        for (int j = 0; j < S; j++) p[j] = -log(1 - adv_uniform(&rng)), sum += p[j];
        for (int j = 0; j < S; j++) p[j] /= sum;
        if (!adv_to_face(a, p, d, S)) continue;
        double js = adv_line(c, a, a, 0, 0, d, eps, x, &tv);
        adv_offer(st, a, x, js, tv, S);
    }
    for (int i = 0; i < st->n; i++) { /* from the starts, the rest of the budget shared */
        long share = (c->limit - c->evals) / (st->n - i), until = c->evals + share;
        double *cur = st->x[i], cj = st->js[i], ct = st->tv[i];
        adv_follow(c, a, eps, cur, &cj, &ct, c->evals + share * 2 / 3, w);
        adv_walk(c, a, eps, cur, &cj, &ct, until, &rng, w);
        if (cj > bj) bj = cj, *best_tv = ct, memcpy(best, cur, (size_t)S * sizeof *best);
    }
}

/* SEARCH: both strategies, each with the budget, and the farther of their
 * feasible rows (the first strategy's on a tie): never below either. The
 * first is the better one on the models' steps (random walks find curved
 * feasible bands), the second on thin feasible sets (a slab along a nearly
 * linear output: the toy's, small epsilons). best, other [S]. */
static void adv_search(adv_ctx *c, attend_adversary_method method, const double *a, double eps, long budget,
                       double *best, double *best_tv, double *other, adv_scratch *w, adv_starts *st) {
    int S = c->S;
    double tv2;
    if (method == ATTEND_ADVERSARY_RAYS) {
        adv_search_seq(c, a, eps, budget, best, best_tv, w, st);
        return;
    }
    if (method == ATTEND_ADVERSARY_FOLLOW) {
        adv_search_walk(c, a, eps, budget, best, best_tv, w, st);
        return;
    }
    adv_search_seq(c, a, eps, budget, best, best_tv, w, st);
    adv_search_walk(c, a, eps, budget, other, &tv2, w, st);
    if (adv_jsd(a, other, S) > adv_jsd(a, best, S)) {
        memcpy(best, other, (size_t)S * sizeof *best);
        *best_tv = tv2;
    }
}

/* The points k/grid of the simplex over S positions: C(grid + S - 1, S - 1).
 * Each is one evaluation; S = 4 at grid 4096 would be 1.1e10 a step. */
#define AT_ADV_GRID_POINTS 2e7
static double adv_grid_points(int S, int grid) {
    double p = 1;
    for (int k = 1; k < S; k++) p = p * (grid + k) / k;
    return p;
}

/* GRID: every point k/r of the simplex (S <= 4), those farther than the best
 * so far evaluated AT_ADV_ROWS at a time (the first of equals kept). */
static void adv_grid(adv_ctx *c, const double *a, double eps, int r, double *best, double *best_tv) {
    int S = c->S;
    memcpy(best, a, (size_t)S * sizeof *best);
    double bj = 0;
    *best_tv = 0;
    c->limit = LONG_MAX;
    int k[4] = {0, 0, 0, 0}, n = 0, done = 0;
    while (!done) {
        int used = 0;
        for (int j = 0; j < S - 1; j++) used += k[j];
        if (used <= r) {
            double *x = c->X + (size_t)n * S;
            for (int j = 0; j < S - 1; j++) x[j] = (double)k[j] / r;
            x[S - 1] = (double)(r - used) / r;
            if (adv_jsd(a, x, S) > bj) n++;
        }
        int j = 0; /* the next point of the S-1 counters */
        while (j < S - 1 && ++k[j] > r) k[j++] = 0;
        done = j == S - 1;
        if (n == AT_ADV_ROWS || (done && n > 0)) {
            adv_eval(c, n);
            for (int i = 0; i < n; i++) {
                const double *x = c->X + (size_t)i * S;
                double js = adv_jsd(a, x, S);
                if (js > bj && c->out[i] <= eps) {
                    bj = js;
                    *best_tv = c->out[i];
                    memcpy(best, x, (size_t)S * sizeof *best);
                }
            }
            n = 0;
        }
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
    CHECK(o->method >= ATTEND_ADVERSARY_SEARCH && o->method <= ATTEND_ADVERSARY_FOLLOW, err, ATTEND_ERR_ARG,
          "%s: unknown method %d", who, (int)o->method);
    CHECK(o->method != ATTEND_ADVERSARY_GRID || (S <= 4 && o->grid >= 1 && o->grid <= 4096), err, ATTEND_ERR_ARG,
          "%s: the grid search takes S <= 4 (S=%d) and a resolution in [1, 4096] (grid=%d)", who, S, o->grid);
    CHECK(o->method != ATTEND_ADVERSARY_GRID || adv_grid_points(S, o->grid) <= AT_ADV_GRID_POINTS, err,
          ATTEND_ERR_ARG, "%s: grid=%d over S=%d positions is %.3g points a step (at most %.0e: a lower resolution)",
          who, o->grid, S, adv_grid_points(S, o->grid), AT_ADV_GRID_POINTS);
    long budget = o->max_evals > 0 ? o->max_evals : 1000;
    int N = o->batch > 0 ? o->batch : AT_ADV_BATCH;
    if (o->batch <= 0 && N > m->cfg.max_batch) N = m->cfg.max_batch;
    CHECK(o->batch >= 0 && N <= m->cfg.max_batch, err, ATTEND_ERR_CAPACITY,
          "%s: batch=%d rows per decoder step: the model holds max_batch = %d", who, o->batch, m->cfg.max_batch);

    int V = c->tgt_vocab;
    /* one allocation, in double: log-probs [V] and [N,V]; the model's row,
     * the best and the local scratch [6,S]; the search's starts
     * [AT_ADV_STARTS,S]; the second strategy's best [S]; the batch [AT_ADV_ROWS,S] and [AT_ADV_ROWS]; then
     * the evaluated rows [N,S] (attend_real), the source [N,S] and the
     * tokens [N] (int32) */
    size_t dbl = (size_t)V * (1 + (size_t)N) + (7 + AT_ADV_STARTS + (size_t)AT_ADV_ROWS) * (size_t)S + AT_ADV_ROWS;
    size_t bytes = dbl * sizeof(double) + (size_t)N * S * sizeof(attend_real) + ((size_t)N * S + 2 * (size_t)N) * sizeof(int32_t);
    char *mem = malloc(bytes);
    CHECK(mem, err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes", who, bytes);
    double *lp0 = (double *)(void *)mem, *lp1 = lp0 + V, *a = lp1 + (size_t)N * V, *best = a + S;
    adv_scratch w = {best + S, best + 2 * (size_t)S, best + 3 * (size_t)S, best + 4 * (size_t)S};
    adv_starts starts;
    for (int i = 0; i < AT_ADV_STARTS; i++) starts.x[i] = w.x + S + (size_t)i * S;
    double *other = starts.x[AT_ADV_STARTS - 1] + S, *X = other + S, *out = X + (size_t)AT_ADV_ROWS * S;
    attend_real *wr = (attend_real *)(void *)(out + AT_ADV_ROWS);
    int32_t *srcN = (int32_t *)(void *)(wr + (size_t)N * S), *lenN = srcN + (size_t)N * S, *yN = lenN + N;
    for (int n = 0; n < N; n++) {
        memcpy(srcN + (size_t)n * S, src, (size_t)S * sizeof *src);
        lenN[n] = S;
    }

    adv_hook hook = {m, -1, N, 0, wr};
    adv_model mc = {m, &hook, srcN, S, V, N, 0, yN, lp0, lp1, wr};
    adv_ctx cx = {adv_model_tvd, &mc, S, N, 0, 0, 0, 0, AT_ADV_AHEAD, X, out};
    at_model_analyse(m, adv_weights, &hook);
    at_model_encode(m, srcN, lenN, N, S); /* N copies of the source: every row's state is the model's own */
    double js_sum = 0;
    res->jsd_max = 0;
    for (int t = 0; t < steps; t++) {
        mc.t = t;
        for (int n = 0; n < N; n++) yN[n] = t == 0 ? ATTEND_BOS : base[t - 1];
        cx.seed = (uint64_t)t;
        /* the model's own step: α_t and p_t (row 0) */
        at_model_step(m, t, N, S, yN, srcN, NULL, m->acts.step_feat, (size_t)m->F, 0);
        at_step_logp_rows(m, t, N, S, 1, lp0, V);
        for (int j = 0; j < S; j++) a[j] = (double)m->acts.weights[(size_t)t * N * S + j];
        double tv = 0;
        if (o->method == ATTEND_ADVERSARY_GRID) adv_grid(&cx, a, o->epsilon, o->grid, best, &tv);
        else adv_search(&cx, o->method, a, o->epsilon, budget, best, &tv, other, &w, &starts);
        double js = adv_jsd(a, best, S);
        if (res->adversary)
            for (int j = 0; j < S; j++) res->adversary[(size_t)t * S + j] = (attend_real)best[j];
        if (res->jsd) res->jsd[t] = js;
        if (res->tvd) res->tvd[t] = tv;
        js_sum += js;
        if (js > res->jsd_max) res->jsd_max = js;
        /* the model's own step again: the state entering step t + 1 */
        at_model_step(m, t, N, S, yN, srcN, NULL, m->acts.step_feat, (size_t)m->F, 0);
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
    CHECK(o->method >= ATTEND_ADVERSARY_SEARCH && o->method <= ATTEND_ADVERSARY_FOLLOW, err, ATTEND_ERR_ARG,
          "%s: unknown method %d", who, (int)o->method);
    CHECK(o->method != ATTEND_ADVERSARY_GRID || (S <= 4 && o->grid >= 1 && o->grid <= 4096), err, ATTEND_ERR_ARG,
          "%s: the grid search takes S <= 4 (S=%d) and a resolution in [1, 4096] (grid=%d)", who, S, o->grid);
    CHECK(o->method != ATTEND_ADVERSARY_GRID || adv_grid_points(S, o->grid) <= AT_ADV_GRID_POINTS, err,
          ATTEND_ERR_ARG, "%s: grid=%d over S=%d positions is %.3g points a step (at most %.0e: a lower resolution)",
          who, o->grid, S, adv_grid_points(S, o->grid), AT_ADV_GRID_POINTS);
    long budget = o->max_evals > 0 ? o->max_evals : 1000;
    /* one allocation: the best and the local scratch [5,S], the search's
     * starts [AT_ADV_STARTS,S], the second strategy's best [S], the batch
     * [AT_ADV_ROWS,S] and [AT_ADV_ROWS] */
    size_t bytes = ((6 + AT_ADV_STARTS + (size_t)AT_ADV_ROWS) * (size_t)S + AT_ADV_ROWS) * sizeof(double);
    double *best = malloc(bytes);
    CHECK(best, err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes", who, bytes);
    adv_scratch w = {best + S, best + 2 * (size_t)S, best + 3 * (size_t)S, best + 4 * (size_t)S};
    adv_starts starts;
    for (int i = 0; i < AT_ADV_STARTS; i++) starts.x[i] = w.x + S + (size_t)i * S;
    double *other = starts.x[AT_ADV_STARTS - 1] + S, *X = other + S;
    adv_caller caller = {distance, user, S};
    adv_ctx cx = {adv_caller_dist, &caller, S, AT_ADV_ROWS, 0, 0, 0, 0, 1, X, X + (size_t)AT_ADV_ROWS * S};
    double dv = 0;
    if (o->method == ATTEND_ADVERSARY_GRID) adv_grid(&cx, alpha, o->epsilon, o->grid, best, &dv);
    else adv_search(&cx, o->method, alpha, o->epsilon, budget, best, &dv, other, &w, &starts);
    memcpy(adversary, best, (size_t)S * sizeof *best);
    if (jsd) *jsd = adv_jsd(alpha, best, S);
    if (dist) *dist = dv;
    if (evals) *evals = cx.evals;
    free(best);
    return at_ok(err);
}
