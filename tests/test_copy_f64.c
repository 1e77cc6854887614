/*
 * test_copy_f64.c — gradient check of the copy mechanism (src/seq2seq/extensions/copy.c)
 * in double precision: the analytic gradient of the teacher-forced loss
 * −log P(y) of the pointer-generator mixture against central finite
 * differences of attend_model_forward, over every parameter (the copy
 * tensors, and everything p_gen, α and P_vocab reach), for BAHDANAU and
 * LUONG, GRU and LSTM, several scores. The batch's targets hold vocabulary
 * ids, ids a source token copies into (the map from a shared vocabulary), and
 * extended ids Vt + j (source ids beyond the target vocabulary, a repeat, an
 * <unk>), and the copied ids are fed back as inputs (read as <unk>).
 */
#include <math.h>
#include <stdlib.h>

#include "attend.h"
#include "fd_check.h"
#include "harness.h"

static void check(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score) {
    /* Vs = 9, Vt = 7: source ids 4..6 copy as themselves, 7 and 8 as extended ids */
    attend_model_config cfg = {cell, dec, score, 9, 7, 3, 2, 1, 4, 3, 3, 5, 6, 0, 0, 1, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    char what[128];
    snprintf(what, sizeof what, "copy %s/%s/%s", attend_cell_name(cell), attend_decoder_name(dec),
             attend_score_name(score));
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &cfg, 4321, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (!m) return;
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    /* row 0: 7 at 1 and 3 (Vt+1), 5; row 1: <unk> at 1 (Vt+1), 8 at 2 (Vt+2); row 2: 4 (copies as 4) */
    int32_t s1[] = {4, 7, 5, 7}, s2[] = {6, ATTEND_UNK, 8}, s3[] = {4, 6};
    int32_t t1[] = {8, 5, 4, 8}, t2[] = {9, 6, 8}, t3[] = {4};
    attend_dataset_add(d, s1, 4, t1, 4, NULL);
    attend_dataset_add(d, s2, 3, t2, 3, NULL);
    attend_dataset_add(d, s3, 2, t3, 1, NULL);
    attend_batch b;
    attend_batch_alloc(&b, 3, 5, 6, NULL);
    int idx[3] = {0, 1, 2};
    EXPECT(attend_batch_fill(&b, d, idx, 3, 0, &err) == ATTEND_OK, "%s", err.msg);
    attend_tf_stats st;
    attend_model_zero_grad(m);
    EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(attend_model_backward(m, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    size_t n = attend_model_param_count(m);
    double *analytic = NULL, *numeric = NULL;
    fd_gradients(m, &b, &analytic, &numeric);
    /* the copy tensors take part: their gradients are not zero */
    const char *names[] = {"copy.w_c", "copy.w_s", "copy.w_x", "copy.b"};
    for (int k = 0; k < 4; k++) {
        attend_model_tensor t;
        EXPECT(attend_model_tensor_find(m, names[k], &t, &err) == ATTEND_OK, "%s", err.msg);
        double norm = 0;
        for (size_t i = 0; i < t.numel; i++) norm += fabs(t.grad[i]);
        EXPECT(norm > 1e-6, "%s: %s has no gradient", what, names[k]);
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

static void test_bahdanau(void) {
    check(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE);
    check(ATTEND_CELL_LSTM, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_GENERAL);
}

static void test_luong(void) {
    check(ATTEND_CELL_GRU, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL);
    check(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_ADDITIVE);
}

int main(void) {
    RUN(test_bahdanau);
    RUN(test_luong);
    return harness_summary();
}
