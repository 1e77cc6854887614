/*
 * test_coverage_f64.c — coverage (Tu et al. 2016; See et al. 2017) in double
 * precision against central finite differences:
 *   - the kernel attend_coverage_scores_forward/backward (the additive score
 *     with a coverage input): the gradient of Σ r·scores (r fixed, random)
 *     with respect to q, kp, cov, Wq, v and w_cov;
 *   - the whole model with cfg.coverage (the recurrence: cov_t sums every
 *     earlier step's weights, so a step's score reaches back into the earlier
 *     steps), with the coverage loss λ Σ min(α, cov) alone (cov as a running
 *     sum, no coverage input) and with both, for BAHDANAU and LUONG, GRU and
 *     LSTM: every parameter's gradient;
 *   - that the coverage input and the coverage loss change the loss (a test
 *     that the mechanism is present, not only differentiable), that the
 *     coverage loss equals λ Σ min(α, cov) computed here from the forced
 *     alignments, and that the bad combinations are refused naming both.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "fd_check.h"
#include "harness.h"

static double urand(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 9007199254740992.0 * 2 - 1;
}

/* ------------------------------------------------------------- the kernel */

enum { KN = 2, KT = 3, KS = 4, KDQ = 3, KA = 5, KDK = 4 };

static double kernel_loss(const attend_score_config *cfg, const attend_score_params *p, const double *wc,
                          const double *q, const double *kp, const double *cov, const double *r, double *saved) {
    double scores[KN * KT * KS];
    attend_error err;
    if (attend_coverage_scores_forward(cfg, p, wc, scores, saved, q, kp, cov, KN, KT, KS, &err) != ATTEND_OK) return NAN;
    double l = 0;
    for (int i = 0; i < KN * KT * KS; i++) l += r[i] * scores[i];
    return l;
}

static void test_kernel(void) {
    attend_score_config cfg = {ATTEND_SCORE_ADDITIVE, KDQ, KDK, KA, 1, 0};
    uint64_t s = 7;
    double Wq[KA * KDQ], Wk[KA * KDK], b[KA], v[KA], wc[KA];
    double q[KN * KT * KDQ], kp[KN * KS * KA], cov[KN * KT * KS], r[KN * KT * KS];
    double *all[] = {Wq, Wk, b, v, wc, q, kp, cov, r};
    size_t sizes[] = {KA * KDQ, KA * KDK, KA, KA, KA, KN * KT * KDQ, KN * KS * KA, KN * KT * KS, KN * KT * KS};
    for (int k = 0; k < 9; k++)
        for (size_t i = 0; i < sizes[k]; i++) all[k][i] = urand(&s);
    for (size_t i = 0; i < KN * KT * KS; i++) cov[i] = 1.5 * (cov[i] + 1); /* coverage >= 0 */
    attend_score_params p = {NULL, Wq, Wk, b, v};
    int of = 0;
    size_t ns = attend_scores_saved_size(&cfg, KN, KT, KS, &of);
    double *saved = malloc(ns * sizeof *saved);
    double gWq[KA * KDQ] = {0}, gv[KA] = {0}, gwc[KA] = {0}, dq[KN * KT * KDQ] = {0}, dkp[KN * KS * KA] = {0},
           dcov[KN * KT * KS] = {0};
    attend_score_grads g = {NULL, gWq, NULL, NULL, gv};
    attend_error err;
    kernel_loss(&cfg, &p, wc, q, kp, cov, r, saved);
    EXPECT(attend_coverage_scores_backward(&cfg, &p, &g, wc, gwc, dq, dkp, dcov, r, saved, q, kp, cov, KN, KT, KS,
                                           &err) == ATTEND_OK, "%s", err.msg);
    struct {
        const char *name;
        double *x, *grad;
        size_t n;
    } checks[] = {{"Wq", Wq, gWq, KA * KDQ}, {"v", v, gv, KA},   {"w_cov", wc, gwc, KA},
                  {"q", q, dq, KN * KT * KDQ}, {"kp", kp, dkp, KN * KS * KA}, {"cov", cov, dcov, KN * KT * KS}};
    for (size_t c = 0; c < sizeof checks / sizeof checks[0]; c++) {
        double *num = malloc(checks[c].n * sizeof *num);
        for (size_t i = 0; i < checks[c].n; i++) {
            double keep = checks[c].x[i], h = 1e-6;
            checks[c].x[i] = keep + h;
            double lp = kernel_loss(&cfg, &p, wc, q, kp, cov, r, saved);
            checks[c].x[i] = keep - h;
            double lm = kernel_loss(&cfg, &p, wc, q, kp, cov, r, saved);
            checks[c].x[i] = keep;
            num[i] = (lp - lm) / (2 * h);
        }
        char label[64];
        snprintf(label, sizeof label, "coverage score d%s", checks[c].name);
        EXPECT_CLOSE(label, checks[c].grad, num, checks[c].n, 1e-8, 1e-6);
        free(num);
    }
    /* w_cov = 0 gives the plain additive score: coverage is the only difference */
    double zero[KA] = {0}, s1[KN * KT * KS], s2[KN * KT * KS];
    EXPECT(attend_coverage_scores_forward(&cfg, &p, zero, s1, saved, q, kp, cov, KN, KT, KS, &err) == ATTEND_OK, "%s",
           err.msg);
    EXPECT(attend_scores_forward(&cfg, &p, s2, saved, q, kp, KN, KT, KS, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT_CLOSE("w_cov = 0 vs additive", s1, s2, (size_t)KN * KT * KS, 1e-12, 1e-12);
    /* bad input */
    attend_score_config dot = {ATTEND_SCORE_DOT, KDQ, KDQ, 0, 1, 0};
    EXPECT(attend_coverage_scores_forward(&dot, &p, wc, s1, saved, q, kp, cov, KN, KT, KS, &err) == ATTEND_ERR_ARG &&
               strstr(err.msg, "additive"), "dot score accepted: %s", err.msg);
    EXPECT(attend_coverage_scores_forward(&cfg, &p, NULL, s1, saved, q, kp, cov, KN, KT, KS, &err) == ATTEND_ERR_NULL &&
               strstr(err.msg, "w_cov"), "NULL w_cov accepted: %s", err.msg);
    free(saved);
}

/* -------------------------------------------------------------- the model */

static attend_dataset *tiny_data(void) {
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    int32_t s1[] = {4, 5, 6, 4}, s2[] = {6, 5}, t1[] = {5, 4, 6}, t2[] = {4};
    attend_dataset_add(d, s1, 4, t1, 3, NULL);
    attend_dataset_add(d, s2, 2, t2, 1, NULL);
    return d;
}

/* λ Σ_{n,t<steps} Σ_j min(α_tj, cov_tj) from forced alignments, one row at a time */
static double cov_loss_by_hand(attend_model *m, const attend_dataset *d, double lambda) {
    double sum = 0;
    for (int i = 0; i < 2; i++) {
        const int32_t *src, *tgt;
        int sl, tl;
        attend_dataset_get(d, i, &src, &sl, &tgt, &tl, NULL);
        double lp;
        double align[8 * 8];
        attend_model_score(m, src, sl, tgt, tl, &lp, align, NULL);
        double cov[8] = {0};
        for (int t = 0; t <= tl; t++)
            for (int j = 0; j < sl; j++) {
                double a = align[t * sl + j];
                sum += a < cov[j] ? a : cov[j];
                cov[j] += a;
            }
    }
    return lambda * sum;
}

static void check_model(attend_cell_kind cell, attend_decoder_kind dec, int coverage, double lambda) {
    attend_model_config cfg = {cell, dec, ATTEND_SCORE_ADDITIVE, 7, 7, 3, 2, 1, 4, 3, 2, 4, 4, 0, coverage, 0, 0,
                               ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    char what[128];
    snprintf(what, sizeof what, "%s/%s/coverage=%d/lambda=%g", attend_cell_name(cell), attend_decoder_name(dec),
             coverage, lambda);
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &cfg, 99, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (!m) return;
    attend_model_tensor wt;
    EXPECT((attend_model_tensor_find(m, "attention.w_cov", &wt, NULL) == ATTEND_OK) == (coverage == 1),
           "%s: attention.w_cov present iff coverage", what);
    attend_dataset *d = tiny_data();
    attend_batch b;
    attend_batch_alloc(&b, 2, 4, 5, NULL);
    int idx[2] = {0, 1};
    EXPECT(attend_batch_fill(&b, d, idx, 2, 0, &err) == ATTEND_OK, "%s", err.msg);
    attend_tf_stats st, ce;
    EXPECT(attend_model_forward(m, &b, &ce, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(attend_model_set_coverage_loss(m, lambda, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    attend_model_zero_grad(m);
    EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (lambda > 0) { /* the loss added is λ Σ min(α, cov) / tokens */
        double want = cov_loss_by_hand(m, d, lambda) / st.tokens;
        EXPECT(want > 1e-3, "%s: coverage loss %g too small to test", what, want);
        EXPECT_NEAR("coverage loss", st.loss - ce.loss, want, 1e-12);
        EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    }
    EXPECT(attend_model_backward(m, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    size_t n = attend_model_param_count(m);
    double *analytic = NULL, *numeric = NULL;
    fd_gradients(m, &b, &analytic, &numeric);
    char label[200];
    snprintf(label, sizeof label, "%s (%zu params, loss %.4f)", what, n, st.loss);
    EXPECT_CLOSE(label, analytic, numeric, n, 1e-7, 1e-5);
    if (coverage) { /* w_cov takes gradient, and zeroing it changes the loss (it is used) */
        attend_model_tensor_find(m, "attention.w_cov", &wt, NULL);
        double gn = 0;
        for (size_t i = 0; i < wt.numel; i++) gn += fabs(wt.grad[i]);
        EXPECT(gn > 1e-6, "%s: w_cov gradient %g", what, gn);
        for (size_t i = 0; i < wt.numel; i++) wt.data[i] = 0;
        attend_tf_stats z;
        attend_model_forward(m, &b, &z, NULL);
        EXPECT(fabs(z.loss - st.loss) > 1e-6, "%s: w_cov = 0 leaves the loss at %.9g (was %.9g)", what, z.loss, st.loss);
    }
    free(analytic);
    free(numeric);
    attend_batch_release(&b);
    attend_dataset_free(d);
    attend_model_free(m);
}

static void test_model(void) {
    for (int cell = 0; cell < 2; cell++)
        for (int k = 0; k < 2; k++) {
            attend_decoder_kind dec = k ? ATTEND_DECODER_LUONG : ATTEND_DECODER_BAHDANAU;
            check_model((attend_cell_kind)cell, dec, 1, 0);   /* coverage input */
            check_model((attend_cell_kind)cell, dec, 0, 0.7); /* coverage loss, running sum only */
            check_model((attend_cell_kind)cell, dec, 1, 0.7); /* both (See et al.) */
        }
}

static void test_refusals(void) {
    attend_model_config cfg = {ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_GENERAL, 7, 7, 3, 2, 1, 4, 3, 2,
                               4, 4, 0, 1, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &cfg, 1, &err) == ATTEND_ERR_ARG && strstr(err.msg, "coverage") &&
               strstr(err.msg, "general"), "coverage with general: %s", err.msg);
    cfg.score = ATTEND_SCORE_ADDITIVE;
    cfg.decoder = ATTEND_DECODER_POINTER;
    EXPECT(attend_model_create(&m, &cfg, 1, &err) == ATTEND_ERR_ARG && strstr(err.msg, "coverage") &&
               strstr(err.msg, "pointer"), "coverage with pointer: %s", err.msg);
    cfg.decoder = ATTEND_DECODER_NONE;
    EXPECT(attend_model_create(&m, &cfg, 1, &err) == ATTEND_ERR_ARG && strstr(err.msg, "coverage") &&
               strstr(err.msg, "none"), "coverage with none: %s", err.msg);
    cfg.coverage = 0;
    EXPECT(attend_model_create(&m, &cfg, 1, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_set_coverage_loss(m, 0.5, &err) == ATTEND_ERR_ARG && strstr(err.msg, "none"),
           "coverage loss with none: %s", err.msg);
    EXPECT(attend_model_set_coverage_loss(m, 0, &err) == ATTEND_OK, "%s", err.msg);
    attend_model_free(m);
    cfg.decoder = ATTEND_DECODER_BAHDANAU;
    EXPECT(attend_model_create(&m, &cfg, 1, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_set_coverage_loss(m, -1, &err) == ATTEND_ERR_ARG, "negative lambda accepted");
    EXPECT(attend_model_set_coverage_loss(m, NAN, &err) == ATTEND_ERR_ARG, "NaN lambda accepted");
    attend_model_free(m);
}

int main(void) {
    RUN(test_kernel);
    RUN(test_model);
    RUN(test_refusals);
    return harness_summary();
}
