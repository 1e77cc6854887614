/*
 * test_model_f64.c — whole-model gradient check in double precision: for every
 * decoder kind, both cells and several score functions, the analytic gradient
 * of the teacher-forced loss (attend_model_backward) against central finite
 * differences of attend_model_forward, over every parameter.
 */
#include <math.h>
#include <stdlib.h>

#include "attend.h"
#include "fd_check.h"
#include "harness.h"

static void check_config_x(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score, int layers,
                           int exclude) {
    attend_model_config cfg = {cell, dec, score, 7, 7, 3, 2, layers, 4, 3, 2, 4, 4, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    char what[128];
    snprintf(what, sizeof what, "%s/%s/%s/L%d%s", attend_cell_name(cell), attend_decoder_name(dec),
             attend_score_name(score), layers, exclude ? "/exclude" : "");
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &cfg, 1234, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (!m) return;
    EXPECT(attend_model_set_pointer_exclude(m, exclude, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    int pointer = dec == ATTEND_DECODER_POINTER;
    attend_dataset *d = fd_tiny_data(pointer);
    attend_batch b;
    attend_batch_alloc(&b, 2, 4, 5, NULL);
    int idx[2] = {0, 1};
    EXPECT(attend_batch_fill(&b, d, idx, 2, pointer, &err) == ATTEND_OK, "%s", err.msg);

    attend_tf_stats st;
    if (exclude) { /* the mask changes the loss (it renormalises over the positions left) */
        attend_tf_stats off;
        attend_model_set_pointer_exclude(m, 0, NULL);
        EXPECT(attend_model_forward(m, &b, &off, &err) == ATTEND_OK, "%s: %s", what, err.msg);
        attend_model_set_pointer_exclude(m, 1, NULL);
        EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_OK, "%s: %s", what, err.msg);
        EXPECT(st.loss < off.loss - 1e-3, "%s: loss with the mask %.6f, without %.6f", what, st.loss, off.loss);
    }
    attend_model_zero_grad(m);
    EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(attend_model_backward(m, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    size_t n = attend_model_param_count(m);
    double *analytic = NULL, *numeric = NULL;
    fd_gradients(m, &b, &analytic, &numeric);
    /* the PAD embedding rows take no gradient at all */
    attend_model_tensor t;
    attend_model_tensor_find(m, "src_emb.weight", &t, NULL);
    for (int k = 0; k < cfg.emb; k++) EXPECT(t.grad[k] == 0, "%s: PAD source row got gradient %g", what, t.grad[k]);
    if (!pointer) {
        attend_model_tensor_find(m, "tgt_emb.weight", &t, NULL);
        for (int k = 0; k < cfg.emb; k++) EXPECT(t.grad[k] == 0, "%s: PAD target row got gradient %g", what, t.grad[k]);
    }
    char label[160];
    snprintf(label, sizeof label, "%s (%zu params, loss %.4f)", what, n, st.loss);
    EXPECT_CLOSE(label, analytic, numeric, n, 1e-7, 1e-5);
    free(analytic);
    free(numeric);
    attend_batch_release(&b);
    attend_dataset_free(d);
    attend_model_free(m);
}

static void check_config(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score, int layers) {
    check_config_x(cell, dec, score, layers, 0);
}

static void test_bahdanau(void) {
    for (int cell = 0; cell < 2; cell++)
        for (int s = 0; s < 4; s++) check_config((attend_cell_kind)cell, ATTEND_DECODER_BAHDANAU, (attend_score_kind)s, 1);
    check_config(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 2);
}

static void test_luong(void) {
    for (int cell = 0; cell < 2; cell++)
        for (int s = 0; s < 4; s++) check_config((attend_cell_kind)cell, ATTEND_DECODER_LUONG, (attend_score_kind)s, 1);
    check_config(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, 2);
}

static void test_none(void) {
    for (int cell = 0; cell < 2; cell++) check_config((attend_cell_kind)cell, ATTEND_DECODER_NONE, ATTEND_SCORE_DOT, 1);
    check_config(ATTEND_CELL_GRU, ATTEND_DECODER_NONE, ATTEND_SCORE_DOT, 2);
}

static void test_pointer(void) {
    for (int cell = 0; cell < 2; cell++) {
        check_config((attend_cell_kind)cell, ATTEND_DECODER_POINTER, ATTEND_SCORE_ADDITIVE, 1);
        check_config((attend_cell_kind)cell, ATTEND_DECODER_POINTER, ATTEND_SCORE_SCALED_DOT, 1);
        /* the exclusion mask (issue 13): teacher forcing with the same mask */
        check_config_x((attend_cell_kind)cell, ATTEND_DECODER_POINTER, ATTEND_SCORE_ADDITIVE, 1, 1);
        check_config_x((attend_cell_kind)cell, ATTEND_DECODER_POINTER, ATTEND_SCORE_GENERAL, 1, 1);
    }
}

int main(void) {
    RUN(test_bahdanau);
    RUN(test_luong);
    RUN(test_none);
    RUN(test_pointer);
    return harness_summary();
}
