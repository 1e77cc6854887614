/*
 * test_monotonic_f64.c — monotonic attention's gradients by central finite
 * differences in double precision (linked against attend_f64): the kernel
 * (attend_monotonic_forward/backward: the recurrence over j and over t,
 * masks, the bias r) and the whole model with monotonic = 1 (BAHDANAU and
 * LUONG, GRU and LSTM, additive and general scores): attend_model_backward
 * against differences of attend_model_forward's loss over every parameter,
 * attention.r included.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "attend.h"
#include "fd_check.h"
#include "harness.h"

_Static_assert(sizeof(attend_real) == sizeof(double), "test_monotonic_f64 must link attend_f64");

static attend_rng rng_;
static double urand(double lo, double hi) { return lo + (hi - lo) * attend_rng_uniform(&rng_); }
static int irand(int lo, int hi) { return lo + (int)(attend_rng_uniform(&rng_) * (hi - lo + 1)); }

/* L = Σ U · α of attend_monotonic_forward. */
static double kernel_loss(const double *e, double r, const int32_t *len, const double *U, int N, int T, int S,
                          double *a, double *p, double *q) {
    attend_monotonic_forward(a, p, q, e, r, len, N, T, S, NULL);
    double L = 0;
    for (size_t i = 0; i < (size_t)N * T * S; i++) L += U[i] * a[i];
    return L;
}

static void kernel_gradients(void) {
    attend_rng_seed(&rng_, 42);
    double worst = 0;
    for (int trial = 0; trial < 12; trial++) {
        int N = irand(1, 3), T = irand(1, 5), S = irand(1, 6);
        size_t n = (size_t)N * T * S;
        double *e = malloc(n * sizeof *e), *U = malloc(n * sizeof *U), *a = malloc(n * sizeof *a);
        double *p = malloc(n * sizeof *p), *q = malloc(n * sizeof *q), *de = malloc(n * sizeof *de);
        double *num = malloc((n + 1) * sizeof *num), *ana = malloc((n + 1) * sizeof *ana);
        double *work = malloc(2 * (size_t)N * S * sizeof *work);
        int32_t *len = malloc((size_t)N * sizeof *len);
        for (size_t i = 0; i < n; i++) e[i] = urand(-3, 3), U[i] = urand(-1, 1);
        for (int k = 0; k < N; k++) len[k] = trial % 2 ? irand(1, S) : S;
        double r = urand(-2, 1), dr = 0;
        kernel_loss(e, r, trial % 3 == 2 ? NULL : len, U, N, T, S, a, p, q);
        const int32_t *lp = trial % 3 == 2 ? NULL : len;
        /* accumulation: start from G0 = 0.5 and call backward twice */
        for (size_t i = 0; i < n; i++) de[i] = 0.5;
        dr = 0.5;
        attend_error err;
        for (int rep = 0; rep < 2; rep++)
            EXPECT(attend_monotonic_backward(de, &dr, U, p, q, lp, N, T, S, work, &err) == ATTEND_OK, "%s", err.msg);
        for (size_t i = 0; i < n; i++) ana[i] = (de[i] - 0.5) / 2;
        ana[n] = (dr - 0.5) / 2;
        const double h = 1e-6;
        for (size_t i = 0; i <= n; i++) {
            double *x = i < n ? &e[i] : &r, keep = *x;
            *x = keep + h;
            double Lp = kernel_loss(e, r, lp, U, N, T, S, a, p, q);
            *x = keep - h;
            double Lm = kernel_loss(e, r, lp, U, N, T, S, a, p, q);
            *x = keep;
            num[i] = (Lp - Lm) / (2 * h);
        }
        for (size_t i = 0; i <= n; i++) {
            double rel = fabs(ana[i] - num[i]) / fmax(fabs(num[i]), 1e-2);
            if (rel > worst) worst = rel;
        }
        char what[96];
        snprintf(what, sizeof what, "kernel N=%d T=%d S=%d%s de, dr", N, T, S, trial % 2 ? " (lengths)" : "");
        EXPECT_CLOSE(what, ana, num, n + 1, 1e-8, 1e-6);
        free(e), free(U), free(a), free(p), free(q), free(de), free(num), free(ana), free(work), free(len);
    }
    printf("  kernel: worst relative error %.3e\n", worst);
}

/* ------------------------------------------------------------------ model */

static attend_dataset *tiny_data(void) {
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    int32_t s1[] = {4, 5, 6, 4}, s2[] = {6, 5}, t1[] = {5, 4, 6}, t2[] = {4};
    attend_dataset_add(d, s1, 4, t1, 3, NULL);
    attend_dataset_add(d, s2, 2, t2, 1, NULL);
    return d;
}

static void check_model(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score, double r) {
    attend_model_config cfg = {cell, dec, score, 7, 7, 3, 2, 1, 4, 3, 2, 4, 4, 0, 0, 0, 1, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    char what[160];
    snprintf(what, sizeof what, "%s/%s/%s/monotonic r=%g", attend_cell_name(cell), attend_decoder_name(dec),
             attend_score_name(score), r);
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &cfg, 99, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (!m) return;
    attend_model_tensor rt;
    EXPECT(attend_model_tensor_find(m, "attention.r", &rt, &err) == ATTEND_OK && rt.numel == 1, "%s", err.msg);
    EXPECT(rt.data[0] == -4.0, "%s: attention.r starts at %g, not -4", what, rt.data[0]);
    rt.data[0] = r;
    attend_dataset *d = tiny_data();
    attend_batch b;
    attend_batch_alloc(&b, 2, 4, 5, NULL);
    int idx[2] = {0, 1};
    EXPECT(attend_batch_fill(&b, d, idx, 2, 0, &err) == ATTEND_OK, "%s", err.msg);
    attend_tf_stats st;
    attend_model_zero_grad(m);
    EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(attend_model_backward(m, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    size_t n = attend_model_param_count(m);
    double *analytic = NULL, *numeric = NULL;
    fd_gradients(m, &b, &analytic, &numeric);
    EXPECT(fabs(rt.grad[0]) > 1e-6, "%s: attention.r got no gradient (%g)", what, rt.grad[0]);
    char label[200];
    snprintf(label, sizeof label, "%s (%zu params, loss %.4f, dr %.3g)", what, n, st.loss, rt.grad[0]);
    EXPECT_CLOSE(label, analytic, numeric, n, 1e-7, 1e-5);
    free(analytic);
    free(numeric);
    attend_batch_release(&b);
    attend_dataset_free(d);
    attend_model_free(m);
}

static void model_gradients(void) {
    check_model(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, -4);
    check_model(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 0.5);
    check_model(ATTEND_CELL_LSTM, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_GENERAL, 0);
    check_model(ATTEND_CELL_GRU, ATTEND_DECODER_LUONG, ATTEND_SCORE_ADDITIVE, 0.5);
    check_model(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_SCALED_DOT, -1);
}

int main(void) {
    RUN(kernel_gradients);
    RUN(model_gradients);
    return harness_summary();
}
