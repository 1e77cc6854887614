/*
 * test_guide_f64.c — guided alignment's gradient in double precision: for the
 * attentive token decoders (bahdanau, luong), both cells and every score
 * function, attend_model_backward of the loss with the alignment term against
 * central finite differences of attend_model_forward, over every parameter.
 * Also with monotonic attention's weights. The batch has a step with two aligned positions, steps with none, the EOS
 * step and a row without any alignment; lambda 0.8. Also: the term's value
 * from the attention weights themselves (attend_model_score's alignment), and
 * that it changes the loss by exactly lambda times itself.
 */
#include <math.h>
#include <stdlib.h>

#include "attend.h"
#include "fd_check.h"
#include "harness.h"

#define LAMBDA 0.8

/* Two pairs (lengths 4 -> 3 and 2 -> 1); pair 0 aligned (target 1 to two
 * positions, target 2 to none), pair 1 not. */
static attend_dataset *tiny_data(void) {
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    int32_t s1[] = {4, 5, 6, 4}, s2[] = {6, 5}, t1[] = {5, 4, 6}, t2[] = {4};
    attend_dataset_add(d, s1, 4, t1, 3, NULL);
    attend_dataset_add(d, s2, 2, t2, 1, NULL);
    const int32_t links[] = {3, 0, 1, 1, 2, 1};
    attend_dataset_set_alignment(d, 0, links, 3, NULL);
    return d;
}

static void check_config_x(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score, int monotonic) {
    attend_model_config cfg = {cell, dec, score, 7, 7, 3, 2, 1, 4, 3, 2, 4, 4, 0, 0, 0, monotonic,
                               ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    char what[128];
    snprintf(what, sizeof what, "%s/%s/%s%s", attend_cell_name(cell), attend_decoder_name(dec),
             attend_score_name(score), monotonic ? "/monotonic" : "");
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &cfg, 4321, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (!m) return;
    attend_dataset *d = tiny_data();
    attend_batch b;
    attend_batch_alloc(&b, 2, 4, 5, NULL);
    int idx[2] = {0, 1};
    EXPECT(attend_batch_fill(&b, d, idx, 2, 0, &err) == ATTEND_OK, "%s", err.msg);

    attend_tf_stats off, st;
    EXPECT(attend_model_forward(m, &b, &off, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(attend_model_set_guided_alignment(m, LAMBDA, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    attend_model_zero_grad(m);
    EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    double g = attend_model_guided_loss(m);
    EXPECT(fabs(st.loss - off.loss - LAMBDA * g) < 1e-12, "%s: loss %.15g, cross-entropy %.15g, term %.15g", what,
           st.loss, off.loss, g);
    /* the term from the weights attend_model_score reports for pair 0: steps 0
     * (position 3) and 1 (positions 1 and 2, half each); 4 + 2 counted tokens */
    const int32_t s1[] = {4, 5, 6, 4}, t1[] = {5, 4, 6};
    double align[4 * 4], lp;
    EXPECT(attend_model_score(m, s1, 4, t1, 3, &lp, align, &err) == ATTEND_OK, "%s", err.msg);
    double want = (-log(align[0 * 4 + 3] + 1e-6) - 0.5 * (log(align[1 * 4 + 1] + 1e-6) + log(align[1 * 4 + 2] + 1e-6))) / 6;
    /* (monotonic attention decodes with hard attention: its scoring weights are not the expected ones) */
    if (!monotonic) EXPECT(fabs(g - want) < 1e-12, "%s: term %.15g, from the weights %.15g", what, g, want);
    EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_OK, "%s: %s", what, err.msg);

    EXPECT(attend_model_backward(m, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    size_t n = attend_model_param_count(m);
    double *analytic = NULL, *numeric = NULL;
    fd_gradients(m, &b, &analytic, &numeric);
    char label[1024];
    snprintf(label, sizeof label, "%s (%zu params, loss %.4f, term %.4f)", what, n, st.loss, g);
    EXPECT_CLOSE(label, analytic, numeric, n, 1e-7, 1e-5);
    /* the term's own gradient is not zero: with lambda 0 the gradients differ */
    attend_model_set_guided_alignment(m, 0, NULL);
    attend_model_zero_grad(m);
    attend_model_forward(m, &b, NULL, NULL);
    attend_model_backward(m, NULL);
    double diff = 0;
    const double *grad = attend_model_grads(m);
    for (size_t i = 0; i < n; i++) diff = fmax(diff, fabs(grad[i] - analytic[i]));
    EXPECT(diff > 1e-4, "%s: the term changed no gradient (max difference %g)", what, diff);
    free(analytic);
    free(numeric);
    attend_batch_release(&b);
    attend_dataset_free(d);
    attend_model_free(m);
}

static void check_config(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score) {
    check_config_x(cell, dec, score, 0);
}

static void test_bahdanau(void) {
    for (int cell = 0; cell < 2; cell++)
        for (int s = 0; s < 4; s++) check_config((attend_cell_kind)cell, ATTEND_DECODER_BAHDANAU, (attend_score_kind)s);
}

static void test_luong(void) {
    for (int cell = 0; cell < 2; cell++)
        for (int s = 0; s < 4; s++) check_config((attend_cell_kind)cell, ATTEND_DECODER_LUONG, (attend_score_kind)s);
}

/* monotonic attention's weights (Raffel et al.): the term's gradient goes
 * through their recurrence instead of the softmax */
static void test_monotonic(void) {
    check_config_x(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 1);
    check_config_x(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, 1);
}

int main(void) {
    RUN(test_bahdanau);
    RUN(test_luong);
    RUN(test_monotonic);
    return harness_summary();
}
