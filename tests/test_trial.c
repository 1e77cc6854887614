/*
 * test_trial.c — the trials' statistics and trial 1 (importance agreement):
 *   - Kendall's tau-b and its p-value, and TV / KL / JSD, against SciPy on the
 *     fixed inputs of tests/ref/trial_{kendall,divergence}.txt
 *     (/usr/bin/python3 tools/make_trial_ref.py); their errors;
 *   - a planted answer: a model whose encoder reads every token alone (no
 *     recurrence, the update gate shut), whose decoder state never sees the
 *     source (decoder.weight_ih and the bridge zero), on a source of one
 *     repeated token, with attention frozen to rows 2^-rank ordered by a known
 *     permutation per step: the gradient x input of position j is w_tj times
 *     one constant, so tau-b(attention, gradient) is exactly 1 at every step
 *     (bahdanau and luong; a step off by one, a sign or a position mix-up
 *     gives less); leave-one-out is 0 everywhere, to rounding (nothing
 *     changes when one of equal tokens goes);
 *   - leave-one-out equals attend_model_intervene's delete-token TV, step by
 *     step; the detached gradient equals the gradient with the model's own
 *     attention frozen; prefix chunks (max_batch 2 < steps) give the same
 *     gradient as one chunk; errors name what is wrong.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "harness.h"
#include "ref_reader.h"

#define SCRIPT "/usr/bin/python3 tools/make_trial_ref.py"

static void test_kendall_scipy(void) {
    ref_file f;
    if (!ref_load(&f, "ref/trial_kendall.txt", SCRIPT)) return;
    int cases = 0;
    double worst_tau = 0, worst_p = 0;
    for (int i = 0;; i++) {
        char nx[32], ny[32], no[32];
        snprintf(nx, sizeof nx, "k%d_x", i);
        snprintf(ny, sizeof ny, "k%d_y", i);
        snprintf(no, sizeof no, "k%d_out", i);
        int found = 0;
        for (int k = 0; k < f.count; k++) found |= !strcmp(f.t[k].name, nx);
        if (!found) break;
        const ref_tensor *x = ref_get(&f, nx, 1, NULL), *y = ref_get(&f, ny, 1, NULL), *o = ref_get(&f, no, 1, NULL);
        if (!x || !y || !o) break;
        double tau, p;
        attend_error err;
        EXPECT(attend_kendall_tau_b(x->v, y->v, (int)x->n, &tau, &p, &err) == ATTEND_OK, "%s", err.msg);
        double dt = fabs(tau - o->v[0]), dp = fabs(p - o->v[1]) / (o->v[1] > 1e-300 ? o->v[1] : 1);
        EXPECT(dt <= 1e-12, "case %d (n=%zu): tau %.17g, scipy %.17g", i, x->n, tau, o->v[0]);
        EXPECT(dp <= 1e-9, "case %d (n=%zu): p %.17g, scipy %.17g", i, x->n, p, o->v[1]);
        if (dt > worst_tau) worst_tau = dt;
        if (dp > worst_p) worst_p = dp;
        cases++;
    }
    printf("  kendall tau-b against scipy: %d cases, worst |tau diff| %.3e, worst relative p diff %.3e\n", cases,
           worst_tau, worst_p);
    EXPECT(cases >= 10, "only %d cases read", cases);
    ref_free(&f);

    /* NaN for a constant row and n < 2; errors name the element */
    double x[3] = {1, 1, 1}, y[3] = {1, 2, 3}, tau, p;
    attend_error err;
    EXPECT(attend_kendall_tau_b(x, y, 3, &tau, &p, &err) == ATTEND_OK && isnan(tau) && isnan(p), "constant x");
    EXPECT(attend_kendall_tau_b(x, y, 1, &tau, NULL, &err) == ATTEND_OK && isnan(tau), "n = 1");
    y[1] = NAN;
    EXPECT(attend_kendall_tau_b(x, y, 3, &tau, &p, &err) == ATTEND_ERR_NONFINITE && strstr(err.msg, "y[1]"), "%s",
           err.msg);
    EXPECT(attend_kendall_tau_b(NULL, y, 3, &tau, &p, &err) == ATTEND_ERR_NULL && strstr(err.msg, "x [n]"), "%s",
           err.msg);
}

static void test_divergence_scipy(void) {
    ref_file f;
    if (!ref_load(&f, "ref/trial_divergence.txt", SCRIPT)) return;
    int cases = 0;
    double worst = 0;
    for (int i = 0;; i++) {
        char np_[32], nq[32], no[32];
        snprintf(np_, sizeof np_, "d%d_p", i);
        snprintf(nq, sizeof nq, "d%d_q", i);
        snprintf(no, sizeof no, "d%d_out", i);
        int found = 0;
        for (int k = 0; k < f.count; k++) found |= !strcmp(f.t[k].name, np_);
        if (!found) break;
        const ref_tensor *p = ref_get(&f, np_, 1, NULL), *q = ref_get(&f, nq, 1, NULL), *o = ref_get(&f, no, 1, NULL);
        if (!p || !q || !o) break;
        double got[3];
        attend_error err;
        EXPECT(attend_divergences(p->v, q->v, (int)p->n, &got[0], &got[1], &got[2], &err) == ATTEND_OK, "%s",
               err.msg);
        char what[64];
        snprintf(what, sizeof what, "divergences case %d (tv, kl, js)", i);
        EXPECT_CLOSE(what, got, o->v, 3, 1e-12, 1e-12);
        for (int k = 0; k < 3; k++)
            if (isfinite(o->v[k]) && fabs(got[k] - o->v[k]) > worst) worst = fabs(got[k] - o->v[k]);
        cases++;
    }
    EXPECT(cases >= 5, "only %d cases read", cases);
    ref_free(&f);
    double p[2] = {0.5, 0.6}, q[2] = {0.5, 0.5}, tv;
    attend_error err;
    EXPECT(attend_divergences(p, q, 2, &tv, NULL, NULL, &err) == ATTEND_ERR_ARG && strstr(err.msg, "sums to"), "%s",
           err.msg);
    p[1] = -0.5;
    EXPECT(attend_divergences(p, q, 2, &tv, NULL, NULL, &err) == ATTEND_ERR_ARG && strstr(err.msg, "p[1]"), "%s",
           err.msg);
}

/* ------------------------------------------------------------ trial 1 */

enum { PS = 6, PT = 5 }; /* planted: source length, baseline tokens (steps PT+1) */

static attend_model *make_model(attend_decoder_kind dec, int max_batch, uint64_t seed) {
    attend_model_config c;
    memset(&c, 0, sizeof c);
    c.cell = ATTEND_CELL_GRU;
    c.decoder = dec;
    c.score = ATTEND_SCORE_ADDITIVE;
    c.src_vocab = 9;
    c.tgt_vocab = 10;
    c.emb = 5;
    c.enc_hidden = 4;
    c.enc_layers = 1;
    c.dec_hidden = 6;
    c.attn = 5;
    c.max_batch = max_batch;
    c.max_src_len = 8;
    c.max_tgt_len = 8;
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &c, seed, &err) == ATTEND_OK, "%s", err.msg);
    return m;
}

static void fill_tensor(attend_model *m, const char *name, long from, long to, attend_real v) {
    attend_model_tensor t;
    attend_error err;
    if (attend_model_tensor_find(m, name, &t, &err) != ATTEND_OK) {
        EXPECT(0, "%s", err.msg);
        return;
    }
    if (to < 0) to = (long)t.numel;
    for (long i = from; i < to; i++) t.data[i] = v;
}

/* The planted model: the encoder reads each token alone, the decoder state
 * never sees the source. */
static void plant(attend_model *m) {
    int He = attend_model_get_config(m)->enc_hidden;
    const char *dirs[2] = {"", "_reverse"};
    for (int d = 0; d < 2; d++) {
        char name[64];
        snprintf(name, sizeof name, "encoder.weight_hh_l0%s", dirs[d]);
        fill_tensor(m, name, 0, -1, 0);
        snprintf(name, sizeof name, "encoder.bias_ih_l0%s", dirs[d]); /* gates r, z, n: shut z */
        fill_tensor(m, name, He, 2 * He, -30);
        snprintf(name, sizeof name, "encoder.bias_hh_l0%s", dirs[d]);
        fill_tensor(m, name, He, 2 * He, 0);
    }
    fill_tensor(m, "bridge.weight", 0, -1, 0);
    fill_tensor(m, "decoder.weight_ih", 0, -1, 0);
}

/* Row t: weight 2^-rank on position perm_t[rank], normalised. */
static void frozen_rows(attend_real *f, int steps, int S) {
    for (int t = 0; t < steps; t++) {
        int32_t perm[PS];
        attend_permutation(perm, S, 100 + (uint64_t)t);
        double sum = 0;
        for (int r = 0; r < S; r++) sum += ldexp(1.0, -r);
        for (int r = 0; r < S; r++) f[(size_t)t * S + perm[r]] = (attend_real)(ldexp(1.0, -r) / sum);
    }
}

static void test_planted(attend_decoder_kind dec, const char *label) {
    attend_model *m = make_model(dec, 4, 7); /* 4 prefix rows a chunk: two chunks for 6 steps */
    if (!m) return;
    plant(m);
    int32_t src[PS] = {6, 6, 6, 6, 6, 6}, base[PT] = {4, 7, 5, 9, 8};
    int steps = PT + 1;
    attend_real frozen[(PT + 1) * PS], att[(PT + 1) * PS];
    double grad[(PT + 1) * PS], loo[(PT + 1) * PS], tg[PT + 1], pg[PT + 1], tl[PT + 1], pl[PT + 1];
    frozen_rows(frozen, steps, PS);
    attend_importance_options o = {frozen, 0};
    attend_importance_result r = {att, grad, loo, tg, pg, tl, pl, 0};
    attend_error err;
    EXPECT(attend_model_importance(m, src, PS, base, PT, &o, &r, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(r.steps == steps, "steps %d", r.steps);
    double ones[PT + 1], zeros[(PT + 1) * PS], fz[(PT + 1) * PS], az[(PT + 1) * PS];
    for (int t = 0; t < steps; t++) ones[t] = 1;
    for (int i = 0; i < steps * PS; i++) {
        zeros[i] = 0;
        fz[i] = frozen[i];
        az[i] = att[i];
    }
    char what[96];
    snprintf(what, sizeof what, "%s planted: tau-b(attention, gradient)", label);
    EXPECT_CLOSE(what, tg, ones, (size_t)steps, 1e-12, 0);
    snprintf(what, sizeof what, "%s planted: attention = the frozen rows", label);
    EXPECT_CLOSE(what, az, fz, (size_t)steps * PS, 0, 0);
    snprintf(what, sizeof what, "%s planted: leave-one-out of equal tokens", label);
    EXPECT_CLOSE(what, loo, zeros, (size_t)steps * PS, 1e-6, 0);
    for (int t = 0; t < steps; t++) {
        EXPECT(pg[t] > 0 && pg[t] < 0.01, "%s step %d: p %g (exact null, n = 6: 2/720)", label, t, pg[t]);
        /* gradient / weight: one constant per step */
        double k0 = grad[(size_t)t * PS] / (double)frozen[(size_t)t * PS];
        for (int j = 1; j < PS; j++) {
            double k = grad[(size_t)t * PS + j] / (double)frozen[(size_t)t * PS + j];
            EXPECT(fabs(k - k0) <= 1e-3 * fabs(k0), "%s step %d position %d: gradient/weight %g, position 0 %g",
                   label, t, j, k, k0);
        }
    }
    /* the same answer in one chunk of prefix rows */
    attend_model *m1 = make_model(dec, 8, 7);
    if (m1) {
        plant(m1);
        double grad1[(PT + 1) * PS];
        attend_importance_result r1 = {NULL, grad1, NULL, NULL, NULL, NULL, NULL, 0};
        EXPECT(attend_model_importance(m1, src, PS, base, PT, &o, &r1, &err) == ATTEND_OK, "%s", err.msg);
        snprintf(what, sizeof what, "%s planted: gradient, 1 chunk vs 2", label);
        EXPECT_CLOSE(what, grad1, grad, (size_t)steps * PS, 1e-6, 1e-4);
        attend_model_free(m1);
    }
    attend_model_free(m);
}

static void test_planted_both(void) {
    test_planted(ATTEND_DECODER_BAHDANAU, "bahdanau");
    test_planted(ATTEND_DECODER_LUONG, "luong");
}

/* A random model (no planting): leave-one-out against the intervention code,
 * detached = frozen to its own attention, and the gradients left zero. */
static void test_consistency(void) {
    attend_model *m = make_model(ATTEND_DECODER_BAHDANAU, 3, 11);
    if (!m) return;
    int32_t src[PS] = {4, 7, 5, 8, 6, 4}, base[PT] = {5, 9, 4, 6, 7};
    int steps = PT + 1;
    attend_real att[(PT + 1) * PS];
    double grad[(PT + 1) * PS], loo[(PT + 1) * PS], tg[PT + 1], tl[PT + 1];
    attend_importance_result r = {att, grad, loo, tg, NULL, tl, NULL, 0};
    attend_error err;
    EXPECT(attend_model_importance(m, src, PS, base, PT, NULL, &r, &err) == ATTEND_OK, "%s", err.msg);
    /* leave-one-out = delete-token TV */
    double tv[PT + 1], want[(PT + 1) * PS], got[(PT + 1) * PS];
    for (int j = 0; j < PS; j++) {
        attend_intervention iv = {ATTEND_IV_DELETE_TOKEN, j, 0, 0, 0, 0, 0};
        attend_intervention_result ir;
        memset(&ir, 0, sizeof ir);
        ir.tv = tv;
        EXPECT(attend_model_intervene(m, src, PS, base, PT, 8, &iv, &ir, &err) == ATTEND_OK, "%s", err.msg);
        for (int t = 0; t < steps; t++) {
            want[t * PS + j] = tv[t];
            got[t * PS + j] = loo[t * PS + j];
        }
    }
    EXPECT_CLOSE("leave-one-out = intervene delete-token TV", got, want, (size_t)steps * PS, 1e-12, 0);
    /* the gradients are left zero */
    attend_real *g = attend_model_grads(m);
    size_t np = attend_model_param_count(m), nz = 0;
    for (size_t i = 0; i < np; i++) nz += g[i] != 0;
    EXPECT(nz == 0, "%zu gradient values left non-zero", nz);
    /* detached = frozen to the model's own attention */
    double grad2[(PT + 1) * PS];
    attend_importance_options o = {att, 0};
    attend_importance_result r2 = {NULL, grad2, NULL, NULL, NULL, NULL, NULL, 0};
    EXPECT(attend_model_importance(m, src, PS, base, PT, &o, &r2, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT_CLOSE("detached gradient = frozen to its own attention", grad2, grad, (size_t)steps * PS, 1e-6, 1e-4);
    /* every tau in [-1, 1] */
    for (int t = 0; t < steps; t++)
        EXPECT(tg[t] >= -1 && tg[t] <= 1 && tl[t] >= -1 && tl[t] <= 1, "step %d: tau %g %g", t, tg[t], tl[t]);
    /* the gradient through the attention differs from the detached one */
    double grad3[(PT + 1) * PS];
    attend_importance_options o3 = {NULL, 1};
    attend_importance_result r3 = {NULL, grad3, NULL, NULL, NULL, NULL, NULL, 0};
    EXPECT(attend_model_importance(m, src, PS, base, PT, &o3, &r3, &err) == ATTEND_OK, "%s", err.msg);
    double diff = 0;
    for (int i = 0; i < steps * PS; i++) diff += fabs(grad3[i] - grad[i]);
    EXPECT(diff > 1e-6, "attention_gradient made no difference (%g)", diff);

    /* errors */
    int32_t bad_base[2] = {4, 99};
    EXPECT(attend_model_importance(m, src, PS, bad_base, 2, NULL, &r, &err) == ATTEND_ERR_ARG &&
               strstr(err.msg, "base[1]=99"), "%s", err.msg);
    EXPECT(attend_model_importance(m, src, PS, base, 20, NULL, &r, &err) == ATTEND_ERR_CAPACITY &&
               strstr(err.msg, "base_len=20"), "%s", err.msg);
    attend_real bad[(PT + 1) * PS];
    memcpy(bad, att, sizeof bad);
    bad[2 * PS + 3] += 0.5f;
    attend_importance_options ob = {bad, 0};
    EXPECT(attend_model_importance(m, src, PS, base, PT, &ob, &r, &err) == ATTEND_ERR_ARG &&
               strstr(err.msg, "row 2 sums"), "%s", err.msg);
    attend_importance_options oc = {att, 1};
    EXPECT(attend_model_importance(m, src, PS, base, PT, &oc, &r, &err) == ATTEND_ERR_ARG &&
               strstr(err.msg, "frozen"), "%s", err.msg);
    EXPECT(attend_model_importance(m, NULL, PS, base, PT, NULL, &r, &err) == ATTEND_ERR_NULL &&
               strstr(err.msg, "src"), "%s", err.msg);
    attend_model_free(m);
    attend_model *mn = make_model(ATTEND_DECODER_NONE, 3, 1);
    if (mn) {
        EXPECT(attend_model_importance(mn, src, PS, base, PT, NULL, &r, &err) == ATTEND_ERR_ARG &&
                   strstr(err.msg, "'none'"), "%s", err.msg);
        attend_model_free(mn);
    }
}

int main(void) {
    RUN(test_kendall_scipy);
    RUN(test_divergence_scipy);
    RUN(test_planted_both);
    RUN(test_consistency);
    return harness_summary();
}
