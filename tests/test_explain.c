/*
 * test_explain.c — the seeds' worked examples (what `attend explain` prints),
 * recomputed here directly with the library and checked against the exact values
 * the seeds state; every check names the seed and table it comes from. The CLI's
 * output itself is checked byte for byte by the golden tests (tests/golden/).
 *
 * Tolerances: the library computes in float (attend_real), so exact values such
 * as 1/4 or a/2 (a = ln 2) are met to a few float roundings: TOL = 2e-6 absolute
 * for numbers up to ~2. Other tolerances are justified where they are used.
 */
#include <stdint.h>
#include <stdlib.h>

#include "attend.h"
#include "harness.h"

#define TOL 2e-6
static const double a = 0.69314718055994530942; /* seed 000: a = ln 2 */

/* ---------------------------------------------------------------- helpers */

typedef struct {
    attend_real score[4], weight[4], ctx[3]; /* [S], [S], [Dv] */
    attend_status status;
    attend_error err;
} read1;

/* One query q [D] against keys k [S,D] and values v [S,Dv], through the library
 * stage by stage (keys, scores, masked softmax, context), as `attend explain` does;
 * the one-shot attend_attention_forward must agree. */
static read1 do_read(attend_score_kind kind, const attend_real *q, const attend_real *k,
                     const attend_real *v, const uint8_t *valid, int S, int D, int Dv) {
    read1 r;
    memset(&r, 0, sizeof r);
    attend_score_config cfg = {.kind = kind, .Dq = D, .Dk = D};
    attend_score_params prm = {0};
    attend_real kp[12];
    r.status = attend_keys_forward(&cfg, &prm, kp, k, 1, S, &r.err);
    if (!r.status) r.status = attend_scores_forward(&cfg, &prm, r.score, NULL, q, kp, 1, 1, S, &r.err);
    if (!r.status) r.status = attend_masked_softmax_forward(r.weight, r.score, valid, NULL, 0, 1, 1, S, &r.err);
    if (!r.status) r.status = attend_context_forward(r.ctx, r.weight, v, 1, 1, S, Dv, &r.err);
    if (r.status) return r;
    /* the one-shot path gives the same numbers */
    attend_real ws[64], w1[4], c1[3];
    size_t nws = attend_attention_workspace_size(&cfg, 1, 1, S);
    attend_error e;
    EXPECT(nws <= 64, "workspace %zu", nws);
    EXPECT(attend_attention_forward(&cfg, &prm, c1, w1, q, k, v, valid, NULL, 0, 1, 1, S, Dv, ws, nws, &e) ==
               ATTEND_OK, "%s", e.msg);
    for (int j = 0; j < S; j++) EXPECT(fabs(w1[j] - r.weight[j]) <= 1e-7, "one-shot weight %d", j);
    for (int d = 0; d < Dv; d++) EXPECT(fabs(c1[d] - r.ctx[d]) <= 1e-7, "one-shot context %d", d);
    return r;
}

/* Compare n float results with exact doubles. */
static void check(const char *what, const attend_real *got, const double *want, int n, double tol) {
    double g[8];
    for (int i = 0; i < n; i++) g[i] = got[i];
    EXPECT_CLOSE(what, g, want, (size_t)n, tol, 0);
}

/* exp(e_j) and their sum over the included positions, as the tables print them. */
static void check_exps(const char *what, const read1 *r, const uint8_t *valid, const double *want_exp,
                       double want_denominator, int S) {
    double e[4], den = 0;
    for (int j = 0; j < S; j++) {
        e[j] = exp((double)r->score[j]);
        if (!valid || valid[j]) den += e[j];
        else e[j] = want_exp[j]; /* excluded: the table prints no exponential */
    }
    EXPECT_CLOSE(what, e, want_exp, (size_t)S, 4 * TOL, 0);
    EXPECT_NEAR("  denominator", den, want_denominator, 8 * TOL);
    double sum = 0;
    for (int j = 0; j < S; j++) sum += r->weight[j];
    EXPECT_NEAR("  sum of the weights", sum, 1.0, TOL);
}

static double readout(const attend_real *c) { return (double)c[0] + 2.0 * (double)c[1]; }

/* ------------------------------------------------------ seed 000, chapter 14 */

/* The chapter's toy encoder: h_t = ReLU(h_{t-1} + E(x_t)), h_0 = 0, with
 * E(红色) = [a,0], E(钥匙) = [-a,a], E(。) = [0,-a]; tok lists token ids 0..2. */
static void relu_encode(attend_real *h, const int *tok, int S) {
    static const double E[3][2] = {{1, 0}, {-1, 1}, {0, -1}}; /* units of a */
    double prev[2] = {0, 0};
    for (int t = 0; t < S; t++)
        for (int d = 0; d < 2; d++) {
            double x = prev[d] + E[tok[t]][d] * a;
            prev[d] = x > 0 ? x : 0;
            h[t * 2 + d] = (attend_real)prev[d];
        }
}

static const int ALL3[3] = {0, 1, 2};
static const attend_real Q1[2] = {1, 0}, Q2[2] = {0, 1};

static void seed000_encoder(void) {
    attend_real h[6];
    relu_encode(h, ALL3, 3);
    const double want[6] = {a, 0, 0, a, 0, 0};
    check("seed000 Ex.14.1 states h1=[a,0] h2=[0,a] h3=[0,0]", h, want, 6, 1e-7);
}

static void seed000_table14_1(void) {
    attend_real h[6];
    relu_encode(h, ALL3, 3);
    read1 r = do_read(ATTEND_SCORE_DOT, Q1, h, h, NULL, 3, 2, 2);
    EXPECT(r.status == ATTEND_OK, "%s", r.err.msg);
    const double sc[3] = {a, 0, 0}, ex[3] = {2, 1, 1}, w[3] = {0.5, 0.25, 0.25}, c[2] = {a / 2, a / 4};
    check("seed000 Table 14.1 scores [a,0,0]", r.score, sc, 3, TOL);
    check_exps("seed000 Table 14.1 exps [2,1,1]", &r, NULL, ex, 4, 3);
    check("seed000 Table 14.1 weights [1/2,1/4,1/4]", r.weight, w, 3, TOL);
    check("seed000 Table 14.1 context [a/2,a/4]", r.ctx, c, 2, TOL);
    const double printed[2] = {0.346574, 0.173287}; /* the seed's decimals */
    check("seed000 Table 14.1 context ~ [0.346574,0.173287]", r.ctx, printed, 2, 5e-7 + TOL);
}

static void seed000_example14_2(void) {
    attend_real h[6];
    relu_encode(h, ALL3, 3);
    read1 r = do_read(ATTEND_SCORE_DOT, Q2, h, h, NULL, 3, 2, 2);
    EXPECT(r.status == ATTEND_OK, "%s", r.err.msg);
    const double sc[3] = {0, a, 0}, ex[3] = {1, 2, 1}, w[3] = {0.25, 0.5, 0.25}, c[2] = {a / 4, a / 2};
    check("seed000 Ex.14.2 scores [0,a,0]", r.score, sc, 3, TOL);
    check_exps("seed000 Ex.14.2 exps [1,2,1]", &r, NULL, ex, 4, 3);
    check("seed000 Ex.14.2 weights [1/4,1/2,1/4]", r.weight, w, 3, TOL);
    check("seed000 Ex.14.2 context [a/4,a/2]", r.ctx, c, 2, TOL);
}

static void seed000_blue(void) {
    const attend_real A = (attend_real)a, h[6] = {0, 0, 0, A, 0, 0};
    read1 r = do_read(ATTEND_SCORE_DOT, Q1, h, h, NULL, 3, 2, 2);
    EXPECT(r.status == ATTEND_OK, "%s", r.err.msg);
    const double sc[3] = {0, 0, 0}, ex[3] = {1, 1, 1}, w[3] = {1. / 3, 1. / 3, 1. / 3}, c[2] = {0, a / 3};
    check("seed000 §14.4 blue scores [0,0,0]", r.score, sc, 3, TOL);
    check_exps("seed000 §14.4 blue exps [1,1,1]", &r, NULL, ex, 3, 3);
    check("seed000 §14.4 blue weights 1/3 each", r.weight, w, 3, TOL);
    check("seed000 §14.4 blue context [0,a/3]", r.ctx, c, 2, TOL);
}

/* Table 14.2: remove saved state `removed` (-1 none) with the validity mask. */
static read1 remove_saved(int removed, uint8_t *valid) {
    attend_real h[6];
    relu_encode(h, ALL3, 3);
    for (int j = 0; j < 3; j++) valid[j] = (uint8_t)(j != removed);
    return do_read(ATTEND_SCORE_DOT, Q1, h, h, valid, 3, 2, 2);
}

/* Table 14.3: delete input token `removed`, re-encode the other two; h [2,2]. */
static read1 remove_token(int removed, attend_real *h) {
    int tok[2], n = 0;
    for (int t = 0; t < 3; t++)
        if (t != removed) tok[n++] = t;
    relu_encode(h, tok, 2);
    return do_read(ATTEND_SCORE_DOT, Q1, h, h, NULL, 2, 2, 2);
}

static void seed000_table14_2(void) {
    static const double w[4][3] = {{0.5, 0.25, 0.25}, {0, 0.5, 0.5}, {2. / 3, 0, 1. / 3}, {2. / 3, 1. / 3, 0}};
    static const double c[4][2] = {{a / 2, a / 4}, {0, a / 2}, {2 * a / 3, 0}, {2 * a / 3, a / 3}};
    static const double rr[4] = {a, a, 2 * a / 3, 4 * a / 3};
    static const double ex[4][3] = {{2, 1, 1}, {2, 1, 1}, {2, 1, 1}, {2, 1, 1}};
    static const double den[4] = {4, 2, 3, 3};
    static const char *const name[4] = {"none", "1", "2", "3"};
    for (int row = 0; row < 4; row++) {
        uint8_t valid[3];
        char what[96];
        read1 r = remove_saved(row - 1, valid);
        EXPECT(r.status == ATTEND_OK, "%s", r.err.msg);
        snprintf(what, sizeof what, "seed000 Table 14.2 remove %s: exps, denominator", name[row]);
        check_exps(what, &r, valid, ex[row], den[row], 3);
        snprintf(what, sizeof what, "seed000 Table 14.2 remove %s: weights", name[row]);
        check(what, r.weight, w[row], 3, TOL);
        if (row > 0) EXPECT(r.weight[row - 1] == 0, "excluded weight must be exactly 0");
        snprintf(what, sizeof what, "seed000 Table 14.2 remove %s: context", name[row]);
        check(what, r.ctx, c[row], 2, TOL);
        snprintf(what, sizeof what, "seed000 Table 14.2 remove %s: readout r", name[row]);
        EXPECT_NEAR(what, readout(r.ctx), rr[row], 3 * TOL);
    }
    /* zeroing the removed score instead: exp(0) = 1 still counts */
    attend_real zeroed[3] = {0, 0, 0}, wz[3];
    attend_error err;
    EXPECT(attend_masked_softmax_forward(wz, zeroed, NULL, NULL, 0, 1, 1, 3, &err) == ATTEND_OK, "%s", err.msg);
    const double third[3] = {1. / 3, 1. / 3, 1. / 3};
    check("seed000 Ex.14.3 zero score != removal: [1/3,1/3,1/3]", wz, third, 3, TOL);
}

static void seed000_table14_3(void) {
    static const double hs[3][4] = {{0, a, 0, 0}, {a, 0, a, 0}, {a, 0, 0, a}};
    static const double w[3][2] = {{0.5, 0.5}, {0.5, 0.5}, {2. / 3, 1. / 3}};
    static const double ex[3][2] = {{1, 1}, {2, 2}, {2, 1}};
    static const double den[3] = {2, 4, 3};
    static const double c[3][2] = {{0, a / 2}, {a, 0}, {2 * a / 3, a / 3}};
    static const double rr[3] = {a, a, 4 * a / 3};
    static const double r142[3] = {a, 2 * a / 3, 4 * a / 3}; /* Table 14.2, same position */
    static const char *const name[3] = {"红色", "钥匙", "。"};
    for (int t = 0; t < 3; t++) {
        attend_real h[4];
        uint8_t valid[3];
        char what[96];
        read1 r = remove_token(t, h);
        EXPECT(r.status == ATTEND_OK, "%s", r.err.msg);
        snprintf(what, sizeof what, "seed000 Table 14.3 delete %s: re-encoded states", name[t]);
        check(what, h, hs[t], 4, 1e-7);
        snprintf(what, sizeof what, "seed000 Table 14.3 delete %s: exps, denominator", name[t]);
        check_exps(what, &r, NULL, ex[t], den[t], 2);
        snprintf(what, sizeof what, "seed000 Table 14.3 delete %s: weights", name[t]);
        check(what, r.weight, w[t], 2, TOL);
        snprintf(what, sizeof what, "seed000 Table 14.3 delete %s: context", name[t]);
        check(what, r.ctx, c[t], 2, TOL);
        snprintf(what, sizeof what, "seed000 Table 14.3 delete %s: readout r", name[t]);
        EXPECT_NEAR(what, readout(r.ctx), rr[t], 3 * TOL);
        read1 s = remove_saved(t, valid);
        snprintf(what, sizeof what, "seed000 Table 14.2 vs 14.3 %s: saved-state r", name[t]);
        EXPECT_NEAR(what, readout(s.ctx), r142[t], 3 * TOL);
        /* only the 钥匙 row differs between the two interventions */
        EXPECT((fabs(readout(r.ctx) - readout(s.ctx)) > 1e-3) == (t == 1), "row %d", t);
    }
}

static void seed000_exercise1(void) {
    attend_real h[6];
    const attend_real q[2] = {1, 1};
    relu_encode(h, ALL3, 3);
    read1 r = do_read(ATTEND_SCORE_DOT, q, h, h, NULL, 3, 2, 2);
    EXPECT(r.status == ATTEND_OK, "%s", r.err.msg);
    const double sc[3] = {a, a, 0}, ex[3] = {2, 2, 1}, w[3] = {0.4, 0.4, 0.2}, c[2] = {2 * a / 5, 2 * a / 5};
    check("seed000 §14.10 ex.1 scores [a,a,0]", r.score, sc, 3, TOL);
    check_exps("seed000 §14.10 ex.1 exps [2,2,1]", &r, NULL, ex, 5, 3);
    check("seed000 §14.10 ex.1 weights [2/5,2/5,1/5]", r.weight, w, 3, TOL);
    check("seed000 §14.10 ex.1 context [2a/5,2a/5]", r.ctx, c, 2, TOL);
    EXPECT_NEAR("seed000 §14.10 ex.1 readout r = 6a/5", readout(r.ctx), 6 * a / 5, 3 * TOL);
    EXPECT_NEAR("seed000 §14.10 ex.1 c1 + c2 = 4a/5", (double)r.ctx[0] + r.ctx[1], 4 * a / 5, 2 * TOL);
}

static void seed000_exercise2(void) {
    attend_real h[6], wrong[3];
    const attend_real q0[2] = {0, 0};
    relu_encode(h, ALL3, 3);
    read1 r = do_read(ATTEND_SCORE_DOT, Q1, h, h, NULL, 3, 2, 2);
    double sum = 0;
    for (int j = 0; j < 3; j++) {
        wrong[j] = (attend_real)(exp((double)r.score[j]) / 3.0);
        sum += wrong[j];
    }
    const double ww[3] = {2. / 3, 1. / 3, 1. / 3}, w[3] = {0.5, 0.25, 0.25};
    check("seed000 §14.10 ex.2 wrong weights [2/3,1/3,1/3]", wrong, ww, 3, TOL);
    EXPECT_NEAR("seed000 §14.10 ex.2 wrong weights sum to 4/3", sum, 4.0 / 3, 2 * TOL);
    check("seed000 §14.10 ex.2 library weights [1/2,1/4,1/4]", r.weight, w, 3, TOL);
    read1 z = do_read(ATTEND_SCORE_DOT, q0, h, h, NULL, 3, 2, 2);
    EXPECT(z.status == ATTEND_OK, "%s", z.err.msg);
    const double sc[3] = {0, 0, 0}, ex[3] = {1, 1, 1}, third[3] = {1. / 3, 1. / 3, 1. / 3};
    const double c[2] = {a / 3, a / 3};
    check("seed000 §14.10 ex.2 q=[0,0] scores 0", z.score, sc, 3, TOL);
    check_exps("seed000 §14.10 ex.2 q=[0,0] exps, denominator 3", &z, NULL, ex, 3, 3);
    check("seed000 §14.10 ex.2 q=[0,0] weights 1/3", z.weight, third, 3, TOL);
    check("seed000 §14.10 ex.2 q=[0,0] context [a/3,a/3]", z.ctx, c, 2, TOL);
}

static void seed000_exercise3(void) {
    uint8_t valid[3];
    attend_real ht[4], hs[6];
    relu_encode(hs, ALL3, 3);
    read1 s = remove_saved(1, valid);
    read1 t = remove_token(1, ht);
    const double ws[3] = {2. / 3, 0, 1. / 3}, cs[2] = {2 * a / 3, 0};
    const double wt[2] = {0.5, 0.5}, ct[2] = {a, 0}, st[4] = {a, 0, a, 0};
    check("seed000 §14.10 ex.3 saved state removed: weights [2/3,0,1/3]", s.weight, ws, 3, TOL);
    check("seed000 §14.10 ex.3 saved state removed: context [2a/3,0]", s.ctx, cs, 2, TOL);
    check("seed000 §14.10 ex.3 token deleted: states [a,0],[a,0]", ht, st, 4, 1e-7);
    check("seed000 §14.10 ex.3 token deleted: weights [1/2,1/2]", t.weight, wt, 2, TOL);
    check("seed000 §14.10 ex.3 token deleted: context [a,0]", t.ctx, ct, 2, TOL);
    const double old_stop[2] = {0, 0};
    check("seed000 §14.10 ex.3 saved 。 state [0,0]", hs + 4, old_stop, 2, 1e-7);
}

static void seed000_exercise4(void) {
    uint8_t valid[3];
    read1 full = remove_saved(-1, valid);
    const double want_r[3] = {a, 2 * a / 3, 4 * a / 3}, want_d[3] = {0, -a / 3, a / 3};
    const double want_w[3] = {0.5, 0.25, 0.25};
    check("seed000 §14.10 ex.4 weights (colour highest)", full.weight, want_w, 3, TOL);
    double got_r[3], got_d[3];
    for (int j = 0; j < 3; j++) {
        read1 r = remove_saved(j, valid);
        got_r[j] = readout(r.ctx);
        got_d[j] = got_r[j] - readout(full.ctx);
    }
    EXPECT_CLOSE("seed000 §14.10 ex.4 r after removal [a,2a/3,4a/3]", got_r, want_r, 3, 3 * TOL, 0);
    EXPECT_CLOSE("seed000 §14.10 ex.4 change in r [0,-a/3,a/3]", got_d, want_d, 3, 6 * TOL, 0);
}

static void seed000_exercise5(void) {
    /* §14.6 and §14.10 ex.5: the number of dot products is the size of the score
     * matrix [T,S]; every entry is written and finite. */
    enum { S = 100, T = 4, D = 2 };
    attend_real k[S * D], q[T * D], sc[T * S + 1];
    attend_rng rng;
    attend_rng_seed(&rng, 14);
    for (int i = 0; i < S * D; i++) k[i] = (attend_real)attend_rng_uniform(&rng);
    for (int i = 0; i < T * D; i++) q[i] = (attend_real)attend_rng_uniform(&rng);
    attend_score_config cfg = {.kind = ATTEND_SCORE_DOT, .Dq = D, .Dk = D};
    attend_score_params prm = {0};
    attend_error err;
    for (int pass = 0; pass < 2; pass++) {
        int s = pass ? S : 3, want = pass ? 400 : 12;
        for (int i = 0; i < T * S + 1; i++) sc[i] = NAN;
        EXPECT(attend_scores_forward(&cfg, &prm, sc, NULL, q, k, 1, T, s, &err) == ATTEND_OK, "%s", err.msg);
        int n = 0;
        for (int i = 0; i < T * S + 1; i++) n += isfinite(sc[i]) != 0;
        EXPECT(n == want, "seed000 §14.6/§14.10: %d dot products, want %d", n, want);
        /* and they are the dot products */
        for (int t = 0; t < T; t++)
            for (int j = 0; j < s; j++) {
                double d = (double)q[t * D] * k[j * D] + (double)q[t * D + 1] * k[j * D + 1];
                EXPECT(fabs(sc[t * s + j] - d) <= 1e-6, "score (%d,%d)", t, j);
            }
    }
    EXPECT(2 * 8 == 16 && 3 * 2 * 8 == 48, "§14.6 bytes");
    EXPECT(S * D == 200 && S * D * 8 == 1600 && T * S == 400, "§14.10 ex.5 counts");
}

static void seed000_all_masked(void) {
    attend_real h[6], w[3] = {7, 7, 7};
    const uint8_t none[3] = {0, 0, 0};
    attend_error err;
    relu_encode(h, ALL3, 3);
    read1 r = do_read(ATTEND_SCORE_DOT, Q1, h, h, none, 3, 2, 2);
    EXPECT(r.status == ATTEND_ERR_MASKED_ROW, "status %s", attend_status_name(r.status));
    EXPECT(strstr(r.err.msg, "every source position is masked") != NULL, "message: %s", r.err.msg);
    /* nothing is written, no all-zero "probabilities" are invented */
    attend_real sc[3] = {(attend_real)a, 0, 0};
    EXPECT(attend_masked_softmax_forward(w, sc, none, NULL, 0, 1, 1, 3, &err) == ATTEND_ERR_MASKED_ROW, "masked");
    EXPECT(w[0] == 7 && w[1] == 7 && w[2] == 7, "weights must be left untouched");
}

/* ------------------------------------------------------------- seed 001 */

static const attend_real H001[9] = {1.0f, 0.0f, 0.2f, 0.5f, 0.5f, 0.1f, 0.1f, 0.9f, 0.3f};

/* Double-precision dot attention over H001, the test's oracle. */
static void dot_attention_ref(const attend_real *s, double *sc, double *w, double *c) {
    double den = 0;
    for (int j = 0; j < 3; j++) {
        sc[j] = 0;
        for (int d = 0; d < 3; d++) sc[j] += (double)H001[j * 3 + d] * s[d];
        den += exp(sc[j]);
    }
    for (int j = 0; j < 3; j++) w[j] = exp(sc[j]) / den;
    for (int d = 0; d < 3; d++) {
        c[d] = 0;
        for (int j = 0; j < 3; j++) c[d] += w[j] * H001[j * 3 + d];
    }
}

static void seed001_dot(void) {
    const attend_real s[3] = {0.9f, 0.1f, 0.2f};
    read1 r = do_read(ATTEND_SCORE_DOT, s, H001, H001, NULL, 3, 3, 3);
    EXPECT(r.status == ATTEND_OK, "%s", r.err.msg);
    /* the seed prints 3 decimals: a correct result is within half a unit, 5e-4 */
    const double seed_w[3] = {0.464, 0.305, 0.231};
    check("seed001 step 3 weights [0.464 0.305 0.231] (3 dp)", r.weight, seed_w, 3, 5e-4);
    double sc[3], w[3], c[3];
    dot_attention_ref(s, sc, w, c);
    const double want_sc[3] = {0.94, 0.52, 0.24};
    check("seed001 step 3 scores [0.94,0.52,0.24]", r.score, want_sc, 3, TOL);
    double ex[3] = {exp(0.94), exp(0.52), exp(0.24)};
    check_exps("seed001 step 3 exps", &r, NULL, ex, ex[0] + ex[1] + ex[2], 3);
    check("seed001 step 3 weights vs double reference", r.weight, w, 3, TOL);
    check("seed001 step 3 context vs double reference", r.ctx, c, 3, TOL);
    /* the seed's next step, no numbers given: s = h_3 moves the weight to position 3 */
    read1 r3 = do_read(ATTEND_SCORE_DOT, H001 + 6, H001, H001, NULL, 3, 3, 3);
    dot_attention_ref(H001 + 6, sc, w, c);
    const double want_sc3[3] = {0.16, 0.53, 0.91};
    check("seed001 s=h_3 scores [0.16,0.53,0.91]", r3.score, want_sc3, 3, TOL);
    check("seed001 s=h_3 weights vs double reference", r3.weight, w, 3, TOL);
    check("seed001 s=h_3 context vs double reference", r3.ctx, c, 3, TOL);
    EXPECT(r3.weight[2] > r3.weight[0] && r3.weight[2] > r3.weight[1], "peak at position 3");
}

/* Box–Muller as in cli/explain.c (the same numbers for the same seed). */
static double normal(attend_rng *rng) {
    double u1 = 1.0 - attend_rng_uniform(rng);
    double u2 = attend_rng_uniform(rng);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}

static void seed001_mha(void) {
    enum { E = 128, H = 8, N = 2, T = 5, S = 10, dh = E / H };
    attend_mha_config cfg = {.E = E, .H = H, .bias = 1};
    attend_rng rng;
    attend_error err;
    size_t nw = (size_t)4 * E * E + 4 * E, nx = (size_t)N * T * E + 2 * (size_t)N * S * E;
    size_t nws = attend_mha_workspace_size(&cfg, N, T, S);
    EXPECT(nws > 0, "workspace size");
    attend_real *w = malloc(nw * sizeof *w), *x = malloc(nx * sizeof *x);
    attend_real *out = malloc((size_t)N * T * E * sizeof *out), *avg = malloc((size_t)N * T * S * sizeof *avg);
    attend_real *heads = malloc((size_t)N * H * T * S * sizeof *heads), *ws = malloc(nws * sizeof *ws);
    double *Qp = malloc((size_t)N * T * E * sizeof *Qp), *Kp = malloc((size_t)N * S * E * sizeof *Kp);
    double *Vp = malloc((size_t)N * S * E * sizeof *Vp), *O = malloc((size_t)N * T * E * sizeof *O);
    double *P = malloc((size_t)N * H * T * S * sizeof *P);
    if (!w || !x || !out || !avg || !heads || !ws || !Qp || !Kp || !Vp || !O || !P) {
        EXPECT(0, "out of memory");
        goto done;
    }
    /* the same deterministic weights and inputs as `attend explain seed001-mha-shapes` */
    attend_rng_seed(&rng, 1);
    double bound = sqrt(6.0 / (E + E));
    for (size_t i = 0; i < nw; i++) w[i] = (attend_real)((2 * attend_rng_uniform(&rng) - 1) * bound);
    for (size_t i = 4 * (size_t)E * E; i < nw; i++) w[i] = 0;
    for (size_t i = 0; i < nx; i++) x[i] = (attend_real)normal(&rng);
    attend_mha_params prm = {.Wq = w, .Wk = w + E * E, .Wv = w + 2 * E * E, .Wo = w + 3 * E * E,
                             .bq = w + 4 * E * E, .bk = w + 4 * E * E + E, .bv = w + 4 * E * E + 2 * E,
                             .bo = w + 4 * E * E + 3 * E};
    const attend_real *q = x, *k = x + (size_t)N * T * E, *v = k + (size_t)N * S * E;
    attend_status st = attend_mha_forward(&cfg, &prm, out, avg, 1, q, k, v, NULL, NULL, 0, N, T, S, ws, nws, &err);
    EXPECT(st == ATTEND_OK, "%s", err.msg);
    st = attend_mha_forward(&cfg, &prm, out, heads, 0, q, k, v, NULL, NULL, 0, N, T, S, ws, nws, &err);
    EXPECT(st == ATTEND_OK, "%s", err.msg);
    /* seed001: output [2,5,128], weights [2,5,10]; each row sums to 1 */
    double worst = 0;
    for (int r = 0; r < N * T; r++) {
        double sum = 0;
        for (int j = 0; j < S; j++) sum += avg[r * S + j];
        worst = fmax(worst, fabs(sum - 1));
    }
    for (int r = 0; r < N * H * T; r++) {
        double sum = 0;
        for (int j = 0; j < S; j++) sum += heads[r * S + j];
        worst = fmax(worst, fabs(sum - 1));
    }
    EXPECT_NEAR("seed001 MHA: worst |row sum - 1| (averaged, per head)", worst, 0, 1e-6);
    /* oracle: nn.MultiheadAttention's formula in double precision */
    for (int r = 0; r < N * T; r++)
        for (int e = 0; e < E; e++) {
            double s = 0;
            for (int i = 0; i < E; i++) s += (double)q[r * E + i] * prm.Wq[e * E + i];
            Qp[r * E + e] = s;
        }
    for (int r = 0; r < N * S; r++)
        for (int e = 0; e < E; e++) {
            double sk = 0, sv = 0;
            for (int i = 0; i < E; i++) {
                sk += (double)k[r * E + i] * prm.Wk[e * E + i];
                sv += (double)v[r * E + i] * prm.Wv[e * E + i];
            }
            Kp[r * E + e] = sk;
            Vp[r * E + e] = sv;
        }
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                double sc[S], mx = -INFINITY, den = 0;
                for (int j = 0; j < S; j++) {
                    double s = 0;
                    for (int d = 0; d < dh; d++)
                        s += Qp[(n * T + t) * E + h * dh + d] * Kp[(n * S + j) * E + h * dh + d];
                    sc[j] = s / sqrt((double)dh);
                    mx = fmax(mx, sc[j]);
                }
                for (int j = 0; j < S; j++) den += exp(sc[j] - mx);
                for (int j = 0; j < S; j++) P[((n * H + h) * T + t) * S + j] = exp(sc[j] - mx) / den;
                for (int d = 0; d < dh; d++) {
                    double o = 0;
                    for (int j = 0; j < S; j++)
                        o += P[((n * H + h) * T + t) * S + j] * Vp[(n * S + j) * E + h * dh + d];
                    O[(n * T + t) * E + h * dh + d] = o;
                }
            }
    double wd = 0, ad = 0, od = 0;
    for (size_t i = 0; i < (size_t)N * H * T * S; i++) wd = fmax(wd, fabs(heads[i] - P[i]));
    for (int n = 0; n < N; n++)
        for (int i = 0; i < T * S; i++) {
            double m = 0;
            for (int h = 0; h < H; h++) m += P[(n * H + h) * T * S + i] / H;
            ad = fmax(ad, fabs(avg[n * T * S + i] - m));
        }
    for (int r = 0; r < N * T; r++)
        for (int e = 0; e < E; e++) {
            double s = 0;
            for (int i = 0; i < E; i++) s += O[r * E + i] * prm.Wo[e * E + i];
            od = fmax(od, fabs(out[r * E + e] - s));
        }
    /* float sums of 128 products of O(1) terms: ~1e-5 is a few roundings */
    EXPECT_NEAR("seed001 MHA per-head weights vs double oracle", wd, 0, 1e-5);
    EXPECT_NEAR("seed001 MHA averaged weights (the printed row) vs oracle", ad, 0, 1e-5);
    EXPECT_NEAR("seed001 MHA output [2,5,128] vs double oracle", od, 0, 1e-4);
done:
    free(w);
    free(x);
    free(out);
    free(avg);
    free(heads);
    free(ws);
    free(Qp);
    free(Kp);
    free(Vp);
    free(O);
    free(P);
}

/* ------------------------------------------------------------- seed 002 */

static void seed002_walkthrough(void) {
    const attend_real keys[3] = {0.0f, 0.916f, 0.405f}, vals[6] = {2, 1, 0, 1, 1, 0}, q[1] = {1};
    attend_score_config cfg = {.kind = ATTEND_SCORE_SCALED_DOT, .Dq = 1, .Dk = 1};
    EXPECT(attend_score_effective_scale(&cfg) == 1.0, "D_k = 1: scale 1/sqrt(1) = 1");
    read1 r = do_read(ATTEND_SCORE_SCALED_DOT, q, keys, vals, NULL, 3, 1, 2);
    EXPECT(r.status == ATTEND_OK, "%s", r.err.msg);
    const double sc[3] = {0, 0.916, 0.405};
    check("seed002 §8 scores (0, 0.916, 0.405)", r.score, sc, 3, TOL);
    /* The seed's keys are ln 2.5 and ln 1.5 rounded to 3 decimals (|Δk| <= 5e-4),
     * so each exponential is within a relative 5e-4 of the seed's 1, 2.5, 1.5
     * (<= 1.25e-3 absolute) and their sum within 2e-3 of 5; the weights are ratios
     * in which the errors largely cancel, within 5e-4 (half a unit of the seed's
     * 3 decimals), and so is the output. */
    double ex[3], den = 0;
    for (int j = 0; j < 3; j++) den += ex[j] = exp((double)r.score[j]);
    const double seed_ex[3] = {1.0, 2.5, 1.5}, seed_w[3] = {0.2, 0.5, 0.3}, seed_c[2] = {0.7, 0.7};
    EXPECT_CLOSE("seed002 §8 exps ~ (1.000, 2.500, 1.500)", ex, seed_ex, 3, 1.25e-3, 0);
    EXPECT_NEAR("seed002 §8 sum ~ 5.000", den, 5.0, 2e-3);
    check("seed002 §8 weights (0.200, 0.500, 0.300)", r.weight, seed_w, 3, 5e-4);
    check("seed002 §8 output [0.7, 0.7]", r.ctx, seed_c, 2, 5e-4);
    /* and exactly what the rounded keys give */
    double w[3] = {ex[0] / den, ex[1] / den, ex[2] / den};
    double c[2] = {2 * w[0] + w[2], w[0] + w[1]};
    const double exact_ex[3] = {1.0, exp(0.916), exp(0.405)};
    EXPECT_CLOSE("seed002 §8 exps = exp(keys)", ex, exact_ex, 3, 1e-6, 0);
    check("seed002 §8 weights vs double reference", r.weight, w, 3, TOL);
    check("seed002 §8 output vs double reference", r.ctx, c, 2, TOL);
}

static void seed002_pointer(void) {
    /* Illustrative scores e_j = ln x_j for the input 20, 5, 10: p_j ∝ x_j among the
     * positions not yet pointed to; the seed's output is 1, 3, 2 (1-based). */
    const double x[3] = {20, 5, 10};
    const double want_p[3][3] = {{4. / 7, 1. / 7, 2. / 7}, {0, 1. / 3, 2. / 3}, {0, 1, 0}};
    const int want_pick[3] = {0, 2, 1};
    attend_real sc[3], logp[9];
    uint8_t valid[3] = {1, 1, 1};
    attend_error err;
    for (int j = 0; j < 3; j++) sc[j] = (attend_real)log(x[j]);
    for (int t = 0; t < 3; t++) {
        int32_t pick = -1;
        char what[96];
        EXPECT(attend_pointer_logprobs_forward(logp + 3 * t, sc, valid, NULL, 0, 1, 1, 3, &err) == ATTEND_OK,
               "%s", err.msg);
        EXPECT(attend_hard_argmax(&pick, logp + 3 * t, 1, 1, 3, &err) == ATTEND_OK, "%s", err.msg);
        double p[3], lp[3], want_lp[3];
        for (int j = 0; j < 3; j++) {
            p[j] = isinf(logp[3 * t + j]) ? 0 : exp((double)logp[3 * t + j]);
            lp[j] = logp[3 * t + j];
            want_lp[j] = want_p[t][j] > 0 ? log(want_p[t][j]) : -INFINITY;
            if (!valid[j]) EXPECT(isinf(logp[3 * t + j]) && logp[3 * t + j] < 0, "excluded -> -inf");
        }
        snprintf(what, sizeof what, "seed002 §5 pointer step %d: p", t + 1);
        EXPECT_CLOSE(what, p, want_p[t], 3, TOL, 0);
        snprintf(what, sizeof what, "seed002 §5 pointer step %d: log p", t + 1);
        EXPECT_CLOSE(what, lp, want_lp, 3, 4 * TOL, 0);
        EXPECT(pick == want_pick[t], "seed002 §5 step %d picks %d (1-based), want %d", t + 1, pick + 1,
               want_pick[t] + 1);
        if (pick >= 0 && pick < 3) valid[pick] = 0;
    }
    const int32_t target[3] = {0, 2, 1};
    double loss = -1;
    int count = 0;
    EXPECT(attend_pointer_nll_forward(&loss, &count, logp, target, 1, 3, 3, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(count == 3, "count %d", count);
    EXPECT_NEAR("seed002 §5 pointer NLL -(ln 4/7 + ln 2/3 + ln 1)/3", loss,
                -(log(4.0 / 7) + log(2.0 / 3)) / 3, 4 * TOL);
}

/* ------------------------------------------------------------- seed 003 */

static void seed003_scale(void) {
    /* The same draws as `attend explain seed003-scale`: seed 7, q then k. */
    enum { P = 10000, D = 64 };
    attend_rng rng;
    attend_error err;
    attend_real *q = malloc((size_t)P * D * sizeof *q), *k = malloc((size_t)P * D * sizeof *k);
    attend_real *kp = malloc((size_t)P * D * sizeof *kp), *e[2], *wts = malloc(P * sizeof *wts);
    e[0] = malloc(P * sizeof *e[0]);
    e[1] = malloc(P * sizeof *e[1]);
    if (!q || !k || !kp || !e[0] || !e[1] || !wts) {
        EXPECT(0, "out of memory");
        goto done;
    }
    attend_rng_seed(&rng, 7);
    for (size_t i = 0; i < (size_t)P * D; i++) q[i] = (attend_real)normal(&rng);
    for (size_t i = 0; i < (size_t)P * D; i++) k[i] = (attend_real)normal(&rng);
    attend_score_params prm = {0};
    attend_score_config cfg[2] = {{.kind = ATTEND_SCORE_DOT, .Dq = D, .Dk = D},
                                  {.kind = ATTEND_SCORE_SCALED_DOT, .Dq = D, .Dk = D, .scale = 0}};
    EXPECT(attend_score_effective_scale(&cfg[1]) == 0.125, "1/sqrt(64)");
    double m[2] = {0, 0}, sd[2] = {0, 0}, top[2] = {0, 0};
    int beyond[2] = {0, 0};
    for (int c = 0; c < 2; c++) {
        EXPECT(attend_keys_forward(&cfg[c], &prm, kp, k, P, 1, &err) == ATTEND_OK, "%s", err.msg);
        EXPECT(attend_scores_forward(&cfg[c], &prm, e[c], NULL, q, kp, P, 1, 1, &err) == ATTEND_OK, "%s", err.msg);
        for (int i = 0; i < P; i++) m[c] += e[c][i];
        m[c] /= P;
        for (int i = 0; i < P; i++) {
            sd[c] += (e[c][i] - m[c]) * (e[c][i] - m[c]);
            beyond[c] += fabs((double)e[c][i]) > 20;
        }
        sd[c] = sqrt(sd[c] / (P - 1));
        EXPECT(attend_masked_softmax_forward(wts, e[c], NULL, NULL, 0, P / 10, 1, 10, &err) == ATTEND_OK, "%s",
               err.msg);
        for (int r = 0; r < P / 10; r++) {
            double best = 0;
            for (int j = 0; j < 10; j++) best = fmax(best, wts[r * 10 + j]);
            top[c] += best / (P / 10);
        }
    }
    /* Statistical tolerances, 5 standard errors for n = 10000 pairs. A raw dot product
     * X = Σ_64 q_i k_i has E X = 0, Var X = 64, E X^4 = 64·9 + 3·64·63 = 12672, so the
     * sample variance has sd sqrt((12672 - 64^2)/n) = 0.93 and the sample std
     * sd ~ 0.93/(2·8) = 0.058: |std - 8| <= 0.3, and scaled by 1/8, |std - 1| <= 0.0375.
     * The mean has sd 8/sqrt(n) = 0.08: |mean| <= 0.4 (scaled 0.05). */
    EXPECT_NEAR("seed003 raw dot std ~ sqrt(64) = 8", sd[0], 8.0, 0.3);
    EXPECT_NEAR("seed003 scaled dot std ~ 1", sd[1], 1.0, 0.0375);
    EXPECT_NEAR("seed003 raw mean ~ 0", m[0], 0.0, 0.4);
    EXPECT_NEAR("seed003 scaled mean ~ 0", m[1], 0.0, 0.05);
    EXPECT_NEAR("seed003 scaled std = raw std / 8", sd[1], sd[0] / 8, 1e-6 * sd[0]);
    /* |X| > 20 (the seed's "±20"): P = 0.0137 (2e5-sample Monte Carlo; 0.0124 for a
     * normal), binomial sd sqrt(n·p·(1-p)) = 11.6: 137 ± 58. Scaled, |X| would need
     * to exceed 160 = 20 sd: never. */
    EXPECT(beyond[0] >= 79 && beyond[0] <= 195, "seed003 raw |e| > 20: %d of 10000", beyond[0]);
    EXPECT(beyond[1] == 0, "seed003 scaled |e| > 20: %d of 10000", beyond[1]);
    /* Mean largest softmax weight over 1000 rows of 10: Monte Carlo (2e5 rows,
     * Python) gives 0.866 (row sd 0.171) unscaled and 0.322 (row sd 0.112) scaled;
     * 5 standard errors over 1000 rows are 0.027 and 0.018. */
    EXPECT_NEAR("seed003 mean max weight, unscaled (saturated)", top[0], 0.866, 0.03);
    EXPECT_NEAR("seed003 mean max weight, scaled", top[1], 0.322, 0.02);
done:
    free(q);
    free(k);
    free(kp);
    free(e[0]);
    free(e[1]);
    free(wts);
}

/* ------------------------------------------------------------- seed 004 */

static const attend_real H004[6] = {1, 0, 0, 2, 2, 2};

/* energies e [3] → weights w [3] → context c [2] over states h [3,2]. */
static void energy_read(attend_real *w, attend_real *c, const attend_real *e, const attend_real *h,
                        const uint8_t *valid) {
    attend_error err;
    EXPECT(attend_masked_softmax_forward(w, e, valid, NULL, 0, 1, 1, 3, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_context_forward(c, w, h, 1, 1, 3, 2, &err) == ATTEND_OK, "%s", err.msg);
}

static void check_energy_exps(const char *what, const attend_real *e, const uint8_t *valid, const double *want,
                              double want_den) {
    double x[3], den = 0;
    for (int j = 0; j < 3; j++) {
        x[j] = exp((double)e[j]);
        if (!valid || valid[j]) den += x[j];
    }
    EXPECT_CLOSE(what, x, want, 3, 4 * TOL, 0);
    EXPECT_NEAR("  denominator", den, want_den, 8 * TOL);
}

static void seed004_example(void) {
    attend_real e[3] = {0, (attend_real)log(2.0), (attend_real)log(3.0)}, w[3], c[2];
    const uint8_t pad3[3] = {1, 1, 0};
    const double ex[3] = {1, 2, 3};
    energy_read(w, c, e, H004, NULL);
    check_energy_exps("seed004 §03 numerators [1,2,3]", e, NULL, ex, 6);
    const double w1[3] = {1. / 6, 2. / 6, 3. / 6}, c1[2] = {7. / 6, 5. / 3};
    check("seed004 §03 weights [1/6,2/6,3/6]", w, w1, 3, TOL);
    check("seed004 §03 context [7/6,5/3]", c, c1, 2, TOL);
    energy_read(w, c, e, H004, pad3);
    check_energy_exps("seed004 §03 masked: numerators, denominator 3", e, pad3, ex, 3);
    const double w2[3] = {1. / 3, 2. / 3, 0}, c2[2] = {1. / 3, 4. / 3};
    check("seed004 §03 third masked: weights [1/3,2/3,0]", w, w2, 3, TOL);
    EXPECT(w[2] == 0, "masked weight exactly 0");
    check("seed004 §03 third masked: context [1/3,4/3]", c, c2, 2, TOL);
    /* the wrong order: softmax, then zero the padding weight */
    energy_read(w, c, e, H004, NULL);
    w[2] = 0;
    attend_error err;
    EXPECT(attend_context_forward(c, w, H004, 1, 1, 3, 2, &err) == ATTEND_OK, "%s", err.msg);
    const double w3[3] = {1. / 6, 1. / 3, 0}, c3[2] = {1. / 6, 2. / 3};
    check("seed004 §03 softmax-then-zero: weights [1/6,1/3,0]", w, w3, 3, TOL);
    EXPECT_NEAR("seed004 §03 softmax-then-zero: weights sum to 1/2", (double)w[0] + w[1] + w[2], 0.5, TOL);
    check("seed004 §03 softmax-then-zero: context [1/6,2/3]", c, c3, 2, TOL);
}

static void seed004_exercise(void) {
    attend_real e[3] = {(attend_real)log(4.0), (attend_real)log(2.0), 0}, w[3], c[2], hz[6];
    const uint8_t pad2[3] = {1, 0, 1};
    const double ex[3] = {4, 2, 1};
    energy_read(w, c, e, H004, NULL);
    check_energy_exps("seed004 §12 ex.1 numerators [4,2,1]", e, NULL, ex, 7);
    const double w1[3] = {4. / 7, 2. / 7, 1. / 7}, c1[2] = {6. / 7, 6. / 7};
    check("seed004 §12 ex.1 no mask: weights [4/7,2/7,1/7]", w, w1, 3, TOL);
    check("seed004 §12 ex.1 no mask: context [6/7,6/7]", c, c1, 2, TOL);
    energy_read(w, c, e, H004, pad2);
    check_energy_exps("seed004 §12 ex.1 masked: numerators, denominator 5", e, pad2, ex, 5);
    const double w2[3] = {4. / 5, 0, 1. / 5}, c2[2] = {6. / 5, 2. / 5};
    check("seed004 §12 ex.1 second masked: weights [4/5,0,1/5]", w, w2, 3, TOL);
    check("seed004 §12 ex.1 second masked: context [6/5,2/5]", c, c2, 2, TOL);
    memcpy(hz, H004, sizeof hz);
    hz[2] = hz[3] = 0;
    energy_read(w, c, e, hz, NULL);
    const double c3[2] = {6. / 7, 2. / 7};
    check("seed004 §12 ex.1 zeroed state: weights unchanged [4/7,2/7,1/7]", w, w1, 3, TOL);
    check("seed004 §12 ex.1 zeroed state: context [6/7,2/7]", c, c3, 2, TOL);
}

int main(void) {
    RUN(seed000_encoder);
    RUN(seed000_table14_1);
    RUN(seed000_example14_2);
    RUN(seed000_blue);
    RUN(seed000_table14_2);
    RUN(seed000_table14_3);
    RUN(seed000_exercise1);
    RUN(seed000_exercise2);
    RUN(seed000_exercise3);
    RUN(seed000_exercise4);
    RUN(seed000_exercise5);
    RUN(seed000_all_masked);
    RUN(seed001_dot);
    RUN(seed001_mha);
    RUN(seed002_walkthrough);
    RUN(seed002_pointer);
    RUN(seed003_scale);
    RUN(seed004_example);
    RUN(seed004_exercise);
    return harness_summary();
}
