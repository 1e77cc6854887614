/*
 * test_adversary.c — trial 2, adversarial attention (attend_model_adversary):
 *   - a 3-position toy (a random Bahdanau or Luong model whose output layer is
 *     scaled up so that its output depends on the attention): the search
 *     against the brute force over the simplex (every point k/400), at three
 *     epsilons: both feasible (TVD <= epsilon), the search's JSD within the
 *     grid's resolution of the brute force's;
 *   - planted answers: epsilon = 1 admits every row, so the maximum is the
 *     farthest vertex, max_k JSD(alpha_t, e_k), exactly; epsilon = 0 admits
 *     only rows with the model's output, so the JSD is ~0;
 *   - after the search the model decodes as before (the state entering each
 *     step is its own);
 *   - a long source stays feasible within the evaluation budget;
 *   - progress callbacks, errors;
 *   - attend_attention_adversary (any caller's output) on linear read-outs
 *     r(w) = v . w with |r(w~) - r(alpha)| <= epsilon: the feasible set is a
 *     slab of the simplex, JSD(alpha, .) is convex, so the exact maximum is at
 *     one of the slab's vertices (simplex vertices inside it, simplex edges
 *     crossing its two planes), enumerated here: the search never above it,
 *     always feasible, within the budget, within 1e-6 nats for S = 2-3,
 *     5e-3 for S = 4 and 0.1 for S = 5 (measured: 2.8e-9, 6.9e-9, 1.3e-3,
 *     0.074; before the walk along the constraint: 3.7e-5, 5.6e-3, 0.16,
 *     0.18); the grid never above it; errors;
 *   - batched evaluations (test_batched): the same results with 1, 7 and 32
 *     candidate rows per decoder-step call (test_adversary_f64.c: in double);
 *   - SEARCH is RAYS and FOLLOW, the farther row kept (test_both): per step
 *     exactly the larger of their JSDs, never below either (also for
 *     attend_attention_adversary in test_generic).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attend.h"
#include "harness.h"

static attend_model *toy_batch(attend_decoder_kind dec, uint64_t seed, double out_scale, int max_batch) {
    attend_model_config c;
    memset(&c, 0, sizeof c);
    c.cell = ATTEND_CELL_GRU;
    c.decoder = dec;
    c.score = ATTEND_SCORE_ADDITIVE;
    c.src_vocab = 8;
    c.tgt_vocab = 9;
    c.emb = 6;
    c.enc_hidden = 5;
    c.enc_layers = 1;
    c.dec_hidden = 7;
    c.attn = 6;
    c.max_batch = max_batch;
    c.max_src_len = 40;
    c.max_tgt_len = 40;
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &c, seed, &err) == ATTEND_OK, "%s", err.msg);
    if (!m) return NULL;
    const char *names[2] = {"out.weight", "encoder.weight_ih_l0"};
    double scales[2] = {out_scale, 3.0}; /* sharper outputs, more distinct encoder states */
    for (int i = 0; i < 2; i++) {
        attend_model_tensor t;
        EXPECT(attend_model_tensor_find(m, names[i], &t, &err) == ATTEND_OK, "%s", err.msg);
        for (size_t k = 0; k < t.numel; k++) t.data[k] *= (attend_real)scales[i];
    }
    return m;
}

static attend_model *toy(attend_decoder_kind dec, uint64_t seed, double out_scale) {
    return toy_batch(dec, seed, out_scale, 2);
}

static double jsd(const double *p, const double *q, int n) {
    double js = 0;
    attend_error err;
    EXPECT(attend_divergences(p, q, n, NULL, NULL, &js, &err) == ATTEND_OK, "%s", err.msg);
    return js;
}

static void brute_force_case(attend_decoder_kind dec, const char *label) {
    attend_model *m = toy(dec, 5, 12.0);
    if (!m) return;
    int32_t src[3] = {5, 7, 4}, base[2] = {6, 8};
    enum { ST = 3 };
    const double eps[3] = {0.005, 0.02, 0.1};
    double worst_gap = 0, worst_over = 0, bound_hits = 0;
    for (int e = 0; e < 3; e++) {
        attend_adversary_options so = {eps[e], ATTEND_ADVERSARY_SEARCH, 4000, 0, NULL, NULL, 0};
        attend_adversary_options go = {eps[e], ATTEND_ADVERSARY_GRID, 0, 400, NULL, NULL, 0};
        double js_s[ST], tv_s[ST], js_g[ST], tv_g[ST];
        attend_real adv_s[ST * 3], adv_g[ST * 3];
        attend_adversary_result rs = {adv_s, js_s, tv_s, 0, 0, 0, 0};
        attend_adversary_result rg = {adv_g, js_g, tv_g, 0, 0, 0, 0};
        attend_error err;
        EXPECT(attend_model_adversary(m, src, 3, base, 2, &so, &rs, &err) == ATTEND_OK, "%s", err.msg);
        EXPECT(attend_model_adversary(m, src, 3, base, 2, &go, &rg, &err) == ATTEND_OK, "%s", err.msg);
        EXPECT(rs.steps == ST && rg.steps == ST, "steps %d %d", rs.steps, rg.steps);
        for (int t = 0; t < ST; t++) {
            EXPECT(tv_s[t] <= eps[e] && tv_g[t] <= eps[e], "%s eps %g step %d: TVD %g / %g", label, eps[e], t,
                   tv_s[t], tv_g[t]);
            double gap = js_g[t] - js_s[t], over = js_s[t] - js_g[t];
            if (gap > worst_gap) worst_gap = gap;
            if (over > worst_over) worst_over = over;
            bound_hits += tv_g[t] > 0.5 * eps[e];
            /* the search finds what the brute force finds, to the grid's resolution */
            EXPECT(gap <= 2e-3, "%s eps %g step %d: search JSD %.6f, brute force %.6f", label, eps[e], t, js_s[t],
                   js_g[t]);
            EXPECT(over <= 1e-2, "%s eps %g step %d: search JSD %.6f above the brute force's %.6f by more than "
                   "the grid's resolution", label, eps[e], t, js_s[t], js_g[t]);
            double rs_sum = 0;
            for (int j = 0; j < 3; j++) rs_sum += (double)adv_s[t * 3 + j];
            EXPECT(fabs(rs_sum - 1) < 1e-5, "row sums to %g", rs_sum);
        }
    }
    printf("  %s 3-position toy: search vs brute force (1/400): worst shortfall %.2e, worst excess %.2e; "
           "%g of 9 optima on the constraint\n", label, worst_gap, worst_over, bound_hits);
    /* the constraint must matter somewhere, or the toy tests nothing */
    EXPECT(bound_hits >= 3, "%s: only %g optima near the TVD bound", label, bound_hits);
    attend_model_free(m);
}

static void test_brute_force(void) {
    brute_force_case(ATTEND_DECODER_BAHDANAU, "bahdanau");
    brute_force_case(ATTEND_DECODER_LUONG, "luong");
}

typedef struct {
    int calls, last, total;
} progress_log;

static void on_progress(void *user, int done, int total) {
    progress_log *p = user;
    EXPECT(done == p->last + 1, "progress %d after %d", done, p->last);
    p->calls++;
    p->last = done;
    p->total = total;
}

static void test_planted(void) {
    attend_model *m = toy(ATTEND_DECODER_BAHDANAU, 9, 4.0);
    if (!m) return;
    enum { S = 6, L = 4 };
    int32_t src[S] = {4, 5, 6, 7, 5, 4}, base[L] = {5, 6, 7, 8};
    /* the model's own rows */
    attend_real att[(L + 1) * S];
    attend_importance_result ir;
    memset(&ir, 0, sizeof ir);
    ir.attention = att;
    attend_error err;
    EXPECT(attend_model_importance(m, src, S, base, L, NULL, &ir, &err) == ATTEND_OK, "%s", err.msg);
    /* epsilon 1: the farthest vertex */
    double js[L + 1], tv[L + 1], want[L + 1];
    progress_log pl = {0, 0, 0};
    attend_adversary_options o = {1.0, ATTEND_ADVERSARY_SEARCH, 0, 0, on_progress, &pl, 0};
    attend_adversary_result r = {NULL, js, tv, 0, 0, 0, 0};
    EXPECT(attend_model_adversary(m, src, S, base, L, &o, &r, &err) == ATTEND_OK, "%s", err.msg);
    for (int t = 0; t <= L; t++) {
        double a[S], e[S];
        for (int j = 0; j < S; j++) a[j] = (double)att[t * S + j];
        want[t] = 0;
        for (int k = 0; k < S; k++) {
            for (int j = 0; j < S; j++) e[j] = j == k;
            double v = jsd(a, e, S);
            if (v > want[t]) want[t] = v;
        }
    }
    EXPECT_CLOSE("epsilon 1: JSD = the farthest vertex's", js, want, L + 1, 1e-6, 0);
    EXPECT(pl.calls == L + 1 && pl.total == L + 1, "progress: %d calls, total %d", pl.calls, pl.total);
    /* epsilon 0: nothing moves */
    o.epsilon = 0;
    o.progress = NULL;
    EXPECT(attend_model_adversary(m, src, S, base, L, &o, &r, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(r.jsd_max <= 1e-6, "epsilon 0: JSD %g", r.jsd_max);
    /* the state entering each step is the model's own: the search leaves the
     * model's decoding as it was */
    attend_real att2[(L + 1) * S];
    ir.attention = att2;
    EXPECT(attend_model_importance(m, src, S, base, L, NULL, &ir, &err) == ATTEND_OK, "%s", err.msg);
    double a1[(L + 1) * S], a2[(L + 1) * S];
    for (int i = 0; i < (L + 1) * S; i++) a1[i] = att[i], a2[i] = att2[i];
    EXPECT_CLOSE("attention after the search = before", a2, a1, (size_t)(L + 1) * S, 0, 0);

    /* errors */
    o.epsilon = 2;
    EXPECT(attend_model_adversary(m, src, S, base, L, &o, &r, &err) == ATTEND_ERR_ARG && strstr(err.msg, "epsilon=2"),
           "%s", err.msg);
    attend_adversary_options g = {0.01, ATTEND_ADVERSARY_GRID, 0, 10, NULL, NULL, 0};
    EXPECT(attend_model_adversary(m, src, S, base, L, &g, &r, &err) == ATTEND_ERR_ARG && strstr(err.msg, "S <= 4"),
           "%s", err.msg);
    EXPECT(attend_model_adversary(m, src, S, base, L, NULL, &r, &err) == ATTEND_ERR_NULL && strstr(err.msg, "options"),
           "%s", err.msg);
    attend_model_free(m);
}

/* A long source and output: the search runs in one allocation (checked by
 * trial_noalloc) and stays feasible at every step. */
static void test_long(void) {
    attend_model *m = toy(ATTEND_DECODER_LUONG, 3, 6.0);
    if (!m) return;
    enum { S = 40, L = 30 };
    int32_t src[S], base[L];
    for (int j = 0; j < S; j++) src[j] = 4 + (j * 7) % 4;
    for (int t = 0; t < L; t++) base[t] = 4 + (t * 5) % 5;
    double tv[L + 1];
    attend_adversary_options o = {0.01, ATTEND_ADVERSARY_SEARCH, 300, 0, NULL, NULL, 0};
    attend_adversary_result r = {NULL, NULL, tv, 0, 0, 0, 0};
    attend_error err;
    EXPECT(attend_model_adversary(m, src, S, base, L, &o, &r, &err) == ATTEND_OK, "%s", err.msg);
    double worst = 0;
    for (int t = 0; t <= L; t++) worst = tv[t] > worst ? tv[t] : worst;
    EXPECT(worst <= 0.01, "TVD %g above epsilon", worst);
    /* two strategies of 300 each; the first also evaluates rows it may not use (its bisections' other
     * branches, the proposals after an accepted one): at most 4 budgets a step */
    EXPECT(r.evals <= (long)(L + 1) * 4 * 300, "evals %ld beyond the budget", r.evals);
    printf("  long source (S=%d, %d steps): mean JSD %.4f, max %.4f, %ld evaluations\n", S, L + 1, r.jsd_mean,
           r.jsd_max, r.evals);
    attend_model_free(m);
}

/* Batched evaluations (N candidate rows per decoder-step call, the source and
 * the state entering the step replicated over the rows) give the unbatched
 * search's results: batch 1 (one row a call), 7 (rounds cut into uneven
 * calls) and 32 (a scan a call), both decoders, the search and the grid.
 * One row a call takes the GEMM's vector path, several its blocked path:
 * their float sums round differently, and a flip of one feasibility test
 * sends the search elsewhere; so in float (this file) the grid (fixed
 * points) must agree for every batch and the search for batch 7 and 32
 * exactly, while batch 1 must only stay feasible; built in double
 * (test_adversary_f64.c) the search must agree for every batch to 1e-9. A
 * batch beyond max_batch, or negative, is an error. */
static void test_batched(void) {
    const int dbl = sizeof(attend_real) == sizeof(double);
    const attend_decoder_kind decs[2] = {ATTEND_DECODER_BAHDANAU, ATTEND_DECODER_LUONG};
    enum { S = 4, L = 3 };
    int32_t src[S] = {4, 6, 5, 7}, base[L] = {5, 7, 6};
    double worst[2] = {0, 0}; /* JSD diff: batch 7/32 vs 1, 32 vs 7 */
    long evals[3] = {0};
    for (int k = 0; k < 2; k++) {
        attend_model *m = toy_batch(decs[k], 11, 8.0, 32);
        if (!m) return;
        for (int method = 0; method < 2; method++)
            for (int e = 0; e < 2; e++) {
                const double eps = e ? 0.05 : 0.005;
                const int batches[3] = {1, 7, 32};
                double js[3][L + 1];
                for (int b = 0; b < 3; b++) {
                    double tv[L + 1];
                    attend_adversary_options o = {eps, method ? ATTEND_ADVERSARY_GRID : ATTEND_ADVERSARY_SEARCH,
                                                  1500, 12, NULL, NULL, batches[b]};
                    attend_adversary_result r = {NULL, js[b], tv, 0, 0, 0, 0};
                    attend_error err;
                    EXPECT(attend_model_adversary(m, src, S, base, L, &o, &r, &err) == ATTEND_OK, "%s", err.msg);
                    for (int t = 0; t <= L; t++) EXPECT(tv[t] <= eps, "batch %d step %d: TVD %g", batches[b], t, tv[t]);
                    if (!method) evals[b] += r.evals;
                }
                for (int t = 0; t <= L; t++) {
                    double d1 = fmax(fabs(js[1][t] - js[0][t]), fabs(js[2][t] - js[0][t]));
                    double d2 = fabs(js[2][t] - js[1][t]);
                    if (method || dbl) {
                        if (d1 > worst[0]) worst[0] = d1;
                        EXPECT(d1 <= (dbl ? 1e-9 : 1e-6), "%s %s eps %g step %d: JSD batch 1 %.12f, 7 %.12f, 32 %.12f",
                               k ? "luong" : "bahdanau", method ? "grid" : "search", eps, t, js[0][t], js[1][t],
                               js[2][t]);
                    }
                    if (d2 > worst[1]) worst[1] = d2;
                    EXPECT(d2 <= (dbl ? 1e-9 : 1e-6), "%s %s eps %g step %d: JSD batch 7 %.12f, 32 %.12f",
                           k ? "luong" : "bahdanau", method ? "grid" : "search", eps, t, js[1][t], js[2][t]);
                }
            }
        /* batch beyond the capacity, or negative */
        attend_adversary_options o = {0.01, ATTEND_ADVERSARY_SEARCH, 100, 0, NULL, NULL, 33};
        attend_adversary_result r = {NULL, NULL, NULL, 0, 0, 0, 0};
        attend_error err;
        EXPECT(attend_model_adversary(m, src, S, base, L, &o, &r, &err) == ATTEND_ERR_CAPACITY &&
                   strstr(err.msg, "batch=33") && strstr(err.msg, "max_batch = 32"), "%s", err.msg);
        o.batch = -1;
        EXPECT(attend_model_adversary(m, src, S, base, L, &o, &r, &err) == ATTEND_ERR_CAPACITY &&
                   strstr(err.msg, "batch=-1"), "%s", err.msg);
        attend_model_free(m);
    }
    EXPECT(!dbl || (evals[0] == evals[1] && evals[1] == evals[2]), "evaluations differ with the batch: %ld %ld %ld",
           evals[0], evals[1], evals[2]);
    printf("  batched (1, 7, 32 rows a call), %s: worst JSD diff vs one row a call %.2e (%s), 7 vs 32 rows %.2e; "
           "search evaluations %ld / %ld / %ld\n", dbl ? "double" : "float", worst[0], dbl ? "grid and search" : "grid",
           worst[1], evals[0], evals[1], evals[2]);
}

/* SEARCH runs RAYS and FOLLOW, each with the whole budget, and keeps the
 * farther row: per step its JSD is the larger of theirs exactly (their rows
 * are the same whether run alone or together), never below either; each
 * strategy alone is feasible. On the toys of test_brute_force and test_long's
 * long source, Bahdanau and Luong, three epsilons (and test_generic below for
 * attend_attention_adversary). */
static void test_both(void) {
    const attend_decoder_kind decs[2] = {ATTEND_DECODER_BAHDANAU, ATTEND_DECODER_LUONG};
    int firsts = 0, seconds = 0, cases = 0;
    for (int k = 0; k < 2; k++)
        for (int shape = 0; shape < 2; shape++) {
            attend_model *m = shape ? toy(decs[k], 3, 6.0) : toy_batch(decs[k], 11, 8.0, 32);
            if (!m) return;
            enum { SMAX = 12, LMAX = 6 };
            int S = shape ? SMAX : 4, L = shape ? LMAX : 3;
            int32_t src[SMAX], base[LMAX];
            for (int j = 0; j < S; j++) src[j] = 4 + (j * 7) % 4;
            for (int t = 0; t < L; t++) base[t] = 4 + (t * 5) % 5;
            const double eps[3] = {0.001, 0.01, 0.05};
            for (int e = 0; e < 3; e++) {
                const attend_adversary_method ms[3] = {ATTEND_ADVERSARY_SEARCH, ATTEND_ADVERSARY_RAYS,
                                                       ATTEND_ADVERSARY_FOLLOW};
                double js[3][LMAX + 1], tv[3][LMAX + 1];
                long evals[3];
                for (int i = 0; i < 3; i++) {
                    attend_adversary_options o = {eps[e], ms[i], 400, 0, NULL, NULL, 0};
                    attend_adversary_result r = {NULL, js[i], tv[i], 0, 0, 0, 0};
                    attend_error err;
                    EXPECT(attend_model_adversary(m, src, S, base, L, &o, &r, &err) == ATTEND_OK, "%s", err.msg);
                    evals[i] = r.evals;
                    for (int t = 0; t <= L; t++)
                        EXPECT(tv[i][t] <= eps[e], "method %d step %d: TVD %g above %g", (int)ms[i], t, tv[i][t],
                               eps[e]);
                }
                EXPECT(evals[0] == evals[1] + evals[2], "SEARCH evaluated %ld rows, RAYS %ld + FOLLOW %ld", evals[0],
                       evals[1], evals[2]);
                for (int t = 0; t <= L; t++) {
                    double want = fmax(js[1][t], js[2][t]);
                    EXPECT(js[0][t] == want, "%s S %d eps %g step %d: SEARCH %.12f, RAYS %.12f, FOLLOW %.12f",
                           k ? "luong" : "bahdanau", S, eps[e], t, js[0][t], js[1][t], js[2][t]);
                    firsts += js[1][t] > js[2][t];
                    seconds += js[2][t] > js[1][t];
                    cases++;
                }
            }
            attend_model_free(m);
        }
    printf("  SEARCH = max(RAYS, FOLLOW) at %d steps (RAYS farther at %d, FOLLOW at %d)\n", cases, firsts, seconds);
}

/* ---------------------------------------------- attend_attention_adversary */

typedef struct {
    const double *v; /* [S] the read-out's weights */
    double r0;
    int S;
    long calls;
} linear_readout;

static double linear_distance(void *user, const double *w) {
    linear_readout *l = user;
    double r = 0;
    for (int j = 0; j < l->S; j++) r += l->v[j] * w[j];
    l->calls++;
    return fabs(r - l->r0);
}

/* The exact maximum of JSD(a, x) over {x in the simplex: |v.x - r0| <= eps}. */
static double linear_exact(const double *a, const double *v, double r0, double eps, int S) {
    double best = 0, x[8];
    for (int i = 0; i < S; i++) { /* simplex vertices inside the slab */
        if (fabs(v[i] - r0) > eps) continue;
        for (int j = 0; j < S; j++) x[j] = j == i;
        double js = jsd(a, x, S);
        if (js > best) best = js;
    }
    for (int i = 0; i < S; i++) /* edges e_i-e_k crossing r0 - eps and r0 + eps */
        for (int k = i + 1; k < S; k++)
            for (int side = -1; side <= 1; side += 2) {
                double target = r0 + side * eps;
                if (v[i] == v[k]) continue;
                double lam = (target - v[k]) / (v[i] - v[k]); /* x = lam e_i + (1 - lam) e_k */
                if (lam < 0 || lam > 1) continue;
                for (int j = 0; j < S; j++) x[j] = j == i ? lam : j == k ? 1 - lam : 0;
                double js = jsd(a, x, S);
                if (js > best) best = js;
            }
    return best;
}

static void test_generic(void) {
    attend_rng rng;
    attend_rng_seed(&rng, 31);
    double worst[6] = {0};
    int cases = 0;
    for (int S = 2; S <= 5; S++)
        for (int rep = 0; rep < 6; rep++) {
            double a[8], v[8], sum = 0, r0 = 0;
            for (int j = 0; j < S; j++) a[j] = 0.05 + (double)(attend_rng_next(&rng) >> 11) * 0x1p-53, sum += a[j];
            for (int j = 0; j < S; j++) {
                a[j] /= sum;
                v[j] = 2 * ((double)(attend_rng_next(&rng) >> 11) * 0x1p-53) - 1;
                r0 += v[j] * a[j];
            }
            const double eps[3] = {0.01, 0.05, 0.2};
            for (int e = 0; e < 3; e++) {
                linear_readout l = {v, r0, S, 0};
                attend_adversary_options o = {eps[e], ATTEND_ADVERSARY_SEARCH, 2000, 0, NULL, NULL, 0};
                double adv[8], js = -1, d = -1;
                long evals = 0;
                attend_error err;
                EXPECT(attend_attention_adversary(a, S, linear_distance, &l, &o, adv, &js, &d, &evals, &err) ==
                           ATTEND_OK, "%s", err.msg);
                double exact = linear_exact(a, v, r0, eps[e], S);
                EXPECT(d <= eps[e] && fabs(linear_distance(&l, adv) - d) < 1e-12, "S %d eps %g: distance %g", S,
                       eps[e], d);
                EXPECT(fabs(jsd(a, adv, S) - js) < 1e-12, "S %d: the JSD returned is not the row's", S);
                EXPECT(js <= exact + 1e-12, "S %d eps %g: JSD %.9f above the exact maximum %.9f", S, eps[e], js,
                       exact);
                const double tol = S <= 3 ? 1e-6 : S == 4 ? 5e-3 : 0.1;
                EXPECT(exact - js <= tol, "S %d eps %g: JSD %.6f, exact maximum %.6f", S, eps[e], js, exact);
                /* two strategies of 2000 each; the first may finish its last ray (32 + 12) past its own */
                EXPECT(evals == l.calls - 1 && evals <= 2 * 2000 + 44, "evals %ld, calls %ld", evals, l.calls);
                for (int m = ATTEND_ADVERSARY_RAYS; m <= ATTEND_ADVERSARY_FOLLOW; m++) { /* never below either */
                    attend_adversary_options one = o;
                    double adv1[8], js1 = -1;
                    one.method = (attend_adversary_method)m;
                    EXPECT(attend_attention_adversary(a, S, linear_distance, &l, &one, adv1, &js1, NULL, NULL, &err) ==
                               ATTEND_OK, "%s", err.msg);
                    EXPECT(js >= js1, "S %d eps %g: SEARCH %.9f below method %d's %.9f", S, eps[e], js, m, js1);
                }
                if (exact - js > worst[S]) worst[S] = exact - js;
                cases++;
                if (S <= 4) {
                    attend_adversary_options g = {eps[e], ATTEND_ADVERSARY_GRID, 0, 200, NULL, NULL, 0};
                    double gj = -1, gd = -1;
                    EXPECT(attend_attention_adversary(a, S, linear_distance, &l, &g, adv, &gj, &gd, NULL, &err) ==
                               ATTEND_OK, "%s", err.msg);
                    EXPECT(gd <= eps[e] && gj <= exact + 1e-12, "S %d grid: JSD %.9f (exact %.9f), distance %g", S,
                           gj, exact, gd);
                }
            }
        }
    printf("  linear read-outs, %d cases: search vs exact vertex enumeration, worst shortfall S=2 %.1e, S=3 %.1e, "
           "S=4 %.1e, S=5 %.1e\n", cases, worst[2], worst[3], worst[4], worst[5]);
    /* errors name what is wrong */
    double a[3] = {0.5, 0.25, 0.25}, bad[3] = {0.5, 0.5, 0.5}, out[3], v[3] = {1, 2, 0};
    linear_readout l = {v, 1, 3, 0};
    attend_adversary_options o = {0.01, ATTEND_ADVERSARY_SEARCH, 100, 0, NULL, NULL, 0};
    attend_error err;
    EXPECT(attend_attention_adversary(NULL, 3, linear_distance, &l, &o, out, NULL, NULL, NULL, &err) ==
               ATTEND_ERR_NULL && strstr(err.msg, "alpha"), "%s", err.msg);
    EXPECT(attend_attention_adversary(a, 3, NULL, &l, &o, out, NULL, NULL, NULL, &err) == ATTEND_ERR_NULL &&
               strstr(err.msg, "distance"), "%s", err.msg);
    EXPECT(attend_attention_adversary(a, 0, linear_distance, &l, &o, out, NULL, NULL, NULL, &err) ==
               ATTEND_ERR_SHAPE, "%s", err.msg);
    EXPECT(attend_attention_adversary(bad, 3, linear_distance, &l, &o, out, NULL, NULL, NULL, &err) ==
               ATTEND_ERR_ARG && strstr(err.msg, "sums to 1.5"), "%s", err.msg);
    bad[1] = -0.25;
    EXPECT(attend_attention_adversary(bad, 3, linear_distance, &l, &o, out, NULL, NULL, NULL, &err) ==
               ATTEND_ERR_ARG && strstr(err.msg, "alpha[1]"), "%s", err.msg);
    o.epsilon = -1;
    EXPECT(attend_attention_adversary(a, 3, linear_distance, &l, &o, out, NULL, NULL, NULL, &err) ==
               ATTEND_ERR_ARG && strstr(err.msg, "epsilon"), "%s", err.msg);
    o.epsilon = 0.01;
    o.method = ATTEND_ADVERSARY_GRID;
    o.grid = 0;
    EXPECT(attend_attention_adversary(a, 3, linear_distance, &l, &o, out, NULL, NULL, NULL, &err) ==
               ATTEND_ERR_ARG && strstr(err.msg, "grid"), "%s", err.msg);
    /* the points a step, not only the resolution, are bounded: S = 4 at 4096 would be 1.1e10 evaluations */
    double a4[4] = {0.25, 0.25, 0.25, 0.25}, v4[4] = {1, -1, 0.5, 0}, out4[4];
    linear_readout l4 = {v4, 0.125, 4, 0};
    o.grid = 4096;
    EXPECT(attend_attention_adversary(a4, 4, linear_distance, &l4, &o, out4, NULL, NULL, NULL, &err) ==
               ATTEND_ERR_ARG && strstr(err.msg, "grid=4096 over S=4 positions is 1.15e+10 points"),
           "%s", err.msg);
    o.grid = 491; /* the largest S = 4 takes */
    EXPECT(attend_attention_adversary(a4, 4, linear_distance, &l4, &o, out4, NULL, NULL, NULL, &err) == ATTEND_OK,
           "grid 491: %s", err.msg);
    o.grid = 492;
    EXPECT(attend_attention_adversary(a4, 4, linear_distance, &l4, &o, out4, NULL, NULL, NULL, &err) ==
               ATTEND_ERR_ARG, "grid 492: %s", err.msg);
}

static double zero_distance(void *user, const double *w) {
    (void)user, (void)w;
    return 0;
}

/* A walk from a point no move leaves farther (every row feasible, the search
 * already at a vertex) evaluates nothing, so the budget never ran out: it
 * halved its step 22 times over 4S proposals each, O(S^2) work (S = 2000:
 * 43 s, S = 4000: over 300 s). Its proposals are now bounded by its budget
 * (AT_ADV_PROPOSALS): S = 4000 takes ~3 s here. Run in a child with a
 * 120 s alarm, so the old behaviour (over 300 s on a quiet core, more under
 * sanitizers) fails rather than hangs the suite. */
static void test_stuck_walk(void) {
    pid_t pid = fork();
    if (pid == 0) {
        alarm(120);
        enum { S = 4000 };
        static double a[S], adv[S];
        for (int j = 0; j < S; j++) a[j] = 1.0 / S;
        attend_adversary_options o = {0.01, ATTEND_ADVERSARY_SEARCH, 0, 0, NULL, NULL, 0};
        double js = 0;
        long evals = 0;
        attend_error err;
        int ok = attend_attention_adversary(a, S, zero_distance, NULL, &o, adv, &js, NULL, &evals, &err) ==
                     ATTEND_OK && js > 0.6 && evals <= 2 * 1000 + 44;
        _exit(ok ? 0 : 3);
    }
    int status = 0;
    EXPECT(pid > 0 && waitpid(pid, &status, 0) == pid, "fork/waitpid");
    int sig = WIFSIGNALED(status);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "S = 4000, zero distance: %s %d",
           sig ? "killed by signal" : "exit", sig ? WTERMSIG(status) : WEXITSTATUS(status));
}

int main(void) {
#ifdef ADVERSARY_F64_ONLY
    RUN(test_batched);
    return harness_summary();
#endif
    RUN(test_brute_force);
    RUN(test_planted);
    RUN(test_long);
    RUN(test_batched);
    RUN(test_both);
    RUN(test_generic);
    RUN(test_stuck_walk);
    return harness_summary();
}
