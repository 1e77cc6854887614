/*
 * test_dropout_f64.c — dropout and label smoothing (issue 14) by finite
 * differences in double precision: with a fixed key every forward drops the
 * same elements, so the analytic gradient of the regularised teacher-forced
 * loss (attend_model_backward) must match central differences of
 * attend_model_forward, over every parameter, for every decoder kind, both
 * cells and a two-layer encoder (the between-layer site). Also: a mask is a
 * function of the key (the same key, the same loss; another key, another
 * loss), dropout changes the loss, and p = 0 / ε = 0 give the plain loss bit
 * for bit.
 */
#include <math.h>
#include <stdlib.h>

#include "attend.h"
#include "fd_check.h"
#include "harness.h"


static double loss_of(attend_model *m, const attend_batch *b) {
    attend_tf_stats st;
    attend_error err;
    if (attend_model_forward(m, b, &st, &err) != ATTEND_OK) return NAN;
    return st.loss;
}

static void check(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score, int layers, double p,
                  double ls) {
    /* emb 5, enc 3, dec 4: wide enough that p = 0.3 keeps some of every vector */
    attend_model_config cfg = {cell, dec, score, 7, 7, 5, 3, layers, 4, 3, 2, 4, 4, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    char what[160];
    snprintf(what, sizeof what, "%s/%s/%s/L%d p=%g ls=%g", attend_cell_name(cell), attend_decoder_name(dec),
             attend_score_name(score), layers, p, ls);
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &cfg, 99, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (!m) return;
    int pointer = dec == ATTEND_DECODER_POINTER;
    attend_dataset *d = fd_tiny_data(pointer);
    attend_batch b;
    attend_batch_alloc(&b, 2, 4, 5, NULL);
    int idx[2] = {0, 1};
    EXPECT(attend_batch_fill(&b, d, idx, 2, pointer, &err) == ATTEND_OK, "%s", err.msg);

    double plain = loss_of(m, &b);
    EXPECT(attend_model_set_dropout(m, p, 0x1234, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(attend_model_set_label_smoothing(m, ls, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    double reg = loss_of(m, &b), again = loss_of(m, &b);
    EXPECT(reg == again, "%s: the same key gave losses %.17g and %.17g", what, reg, again);
    if (p > 0 || ls > 0) EXPECT(fabs(reg - plain) > 1e-6, "%s: regularised loss %.9g equals the plain %.9g", what, reg, plain);
    if (p > 0) {
        attend_model_set_dropout(m, p, 0x1235, NULL);
        double other = loss_of(m, &b);
        EXPECT(fabs(other - reg) > 1e-9, "%s: keys 0x1234 and 0x1235 gave the same loss %.9g", what, reg);
        attend_model_set_dropout(m, p, 0x1234, NULL);
    }

    attend_model_zero_grad(m);
    EXPECT(attend_model_forward(m, &b, NULL, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(attend_model_backward(m, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    size_t n = attend_model_param_count(m);
    double *w = attend_model_params(m), *g = attend_model_grads(m);
    double *analytic = malloc(n * sizeof *analytic), *numeric = malloc(n * sizeof *numeric);
    for (size_t i = 0; i < n; i++) analytic[i] = g[i];
    const double h = 1e-6;
    for (size_t i = 0; i < n; i++) {
        double keep = w[i];
        w[i] = keep + h;
        double lp = loss_of(m, &b);
        w[i] = keep - h;
        double lm = loss_of(m, &b);
        w[i] = keep;
        numeric[i] = (lp - lm) / (2 * h);
    }
    char label[200];
    snprintf(label, sizeof label, "%s (%zu params)", what, n);
    EXPECT_CLOSE(label, analytic, numeric, n, 1e-7, 1e-5);

    /* switched off: the plain loss, bit for bit */
    attend_model_set_dropout(m, 0, 0x1234, NULL);
    attend_model_set_label_smoothing(m, 0, NULL);
    double off = loss_of(m, &b);
    EXPECT(off == plain, "%s: switched off %.17g, plain %.17g", what, off, plain);
    free(analytic);
    free(numeric);
    attend_batch_release(&b);
    attend_dataset_free(d);
    attend_model_free(m);
}

static void test_dropout_grad(void) {
    check(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 2, 0.3, 0);
    check(ATTEND_CELL_LSTM, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_GENERAL, 1, 0.3, 0);
    check(ATTEND_CELL_GRU, ATTEND_DECODER_LUONG, ATTEND_SCORE_ADDITIVE, 1, 0.3, 0);
    check(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, 2, 0.3, 0);
    check(ATTEND_CELL_GRU, ATTEND_DECODER_NONE, ATTEND_SCORE_DOT, 2, 0.3, 0);
    check(ATTEND_CELL_GRU, ATTEND_DECODER_POINTER, ATTEND_SCORE_ADDITIVE, 2, 0.3, 0);
}

static void test_label_smoothing_grad(void) {
    check(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 1, 0, 0.2);
    check(ATTEND_CELL_GRU, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, 1, 0, 0.2);
    check(ATTEND_CELL_LSTM, ATTEND_DECODER_POINTER, ATTEND_SCORE_ADDITIVE, 1, 0, 0.2);
}

static void test_both_grad(void) {
    check(ATTEND_CELL_LSTM, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 2, 0.25, 0.1);
    check(ATTEND_CELL_GRU, ATTEND_DECODER_POINTER, ATTEND_SCORE_GENERAL, 1, 0.25, 0.1);
}

int main(void) {
    RUN(test_dropout_grad);
    RUN(test_label_smoothing_grad);
    RUN(test_both_grad);
    return harness_summary();
}
