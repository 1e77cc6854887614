/*
 * test_declayers_f64.c — the stacked decoder (dec_layers > 1,
 * src/seq2seq/decoders/stack.c) in double precision: for every decoder kind
 * and both cells, the analytic gradient of the teacher-forced loss against
 * central finite differences of the forward over every parameter (the upper
 * layers' decoder.*_l<l> tensors included); the tensor names and shapes; and
 * that dec_layers 0 and 1 are the same one-layer model.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "fd_check.h"
#include "harness.h"


static attend_model_config tiny_config(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score,
                                       int dec_layers) {
    attend_model_config cfg = {cell, dec, score, 7, 7, 3, 2, 1, 4, 3, 2, 4, 4, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    cfg.dec_layers = dec_layers;
    return cfg;
}

static void check_fd(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score, int dec_layers) {
    attend_model_config cfg = tiny_config(cell, dec, score, dec_layers);
    char what[128];
    snprintf(what, sizeof what, "%s/%s/%s/dec_layers %d", attend_cell_name(cell), attend_decoder_name(dec),
             attend_score_name(score), dec_layers);
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &cfg, 77, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (!m) return;
    int pointer = dec == ATTEND_DECODER_POINTER;
    attend_dataset *d = fd_tiny_data(pointer);
    attend_batch b;
    attend_batch_alloc(&b, 2, 4, 5, NULL);
    int idx[2] = {0, 1};
    EXPECT(attend_batch_fill(&b, d, idx, 2, pointer, &err) == ATTEND_OK, "%s", err.msg);
    /* the upper layers' tensors exist, named like PyTorch's stacked RNNs */
    for (int l = 1; l < dec_layers; l++) {
        const char *kinds[] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
        for (int k = 0; k < 4; k++) {
            char nm[64];
            attend_model_tensor t;
            snprintf(nm, sizeof nm, "decoder.%s_l%d", kinds[k], l);
            EXPECT(attend_model_tensor_find(m, nm, &t, &err) == ATTEND_OK, "%s: %s", what, err.msg);
            int G = cell == ATTEND_CELL_LSTM ? 4 : 3;
            EXPECT(t.shape[0] == G * cfg.dec_hidden && (k >= 2 ? t.ndim == 1 : t.shape[1] == cfg.dec_hidden),
                   "%s: %s has the wrong shape", what, nm);
        }
    }
    attend_tf_stats st;
    attend_model_zero_grad(m);
    EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(attend_model_backward(m, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    size_t n = attend_model_param_count(m);
    double *analytic = NULL, *numeric = NULL;
    fd_gradients(m, &b, &analytic, &numeric);
    /* an upper layer's weights take gradient (the check is not vacuous) */
    if (dec_layers > 1) {
        attend_model_tensor t;
        char nm[64];
        snprintf(nm, sizeof nm, "decoder.weight_hh_l%d", dec_layers - 1);
        attend_model_tensor_find(m, nm, &t, NULL);
        double gmax = 0;
        for (size_t i = 0; i < t.numel; i++) gmax = fmax(gmax, fabs(t.grad[i]));
        EXPECT(gmax > 1e-6, "%s: %s has no gradient (max %g)", what, nm, gmax);
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

static void test_fd_every_kind(void) {
    for (int cell = 0; cell < 2; cell++) {
        check_fd((attend_cell_kind)cell, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 2);
        check_fd((attend_cell_kind)cell, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, 2);
        check_fd((attend_cell_kind)cell, ATTEND_DECODER_NONE, ATTEND_SCORE_DOT, 2);
        check_fd((attend_cell_kind)cell, ATTEND_DECODER_POINTER, ATTEND_SCORE_ADDITIVE, 2);
    }
    check_fd(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_SCALED_DOT, 3);
    check_fd(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_GENERAL, 3);
}

/* dec_layers 0 and 1 are one layer: the same tensors, the same loss */
static void test_one_layer_same(void) {
    attend_model *m0 = NULL, *m1 = NULL, *m2 = NULL;
    attend_error err;
    attend_model_config c0 = tiny_config(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 0);
    attend_model_config c1 = c0, c2 = c0;
    c1.dec_layers = 1;
    c2.dec_layers = 2;
    EXPECT(attend_model_create(&m0, &c0, 5, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_create(&m1, &c1, 5, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_create(&m2, &c2, 5, &err) == ATTEND_OK, "%s", err.msg);
    if (!m0 || !m1 || !m2) goto done;
    EXPECT(attend_model_tensor_count(m0) == attend_model_tensor_count(m1) &&
               attend_model_param_count(m0) == attend_model_param_count(m1),
           "dec_layers 0 and 1 differ in tensors");
    EXPECT(attend_model_tensor_count(m2) == attend_model_tensor_count(m1) + 4, "dec_layers 2: %d tensors, 1: %d",
           attend_model_tensor_count(m2), attend_model_tensor_count(m1));
    attend_dataset *d = fd_tiny_data(0);
    attend_batch b;
    attend_batch_alloc(&b, 2, 4, 5, NULL);
    int idx[2] = {0, 1};
    attend_batch_fill(&b, d, idx, 2, 0, NULL);
    attend_tf_stats s0, s1, s2;
    EXPECT(attend_model_forward(m0, &b, &s0, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_forward(m1, &b, &s1, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_forward(m2, &b, &s2, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(s0.loss == s1.loss, "dec_layers 0 loss %.17g, 1 loss %.17g", s0.loss, s1.loss);
    EXPECT(s2.loss != s1.loss, "dec_layers 2 has the one-layer loss %.17g", s2.loss);
    attend_batch_release(&b);
    attend_dataset_free(d);
done:
    attend_model_free(m0);
    attend_model_free(m1);
    attend_model_free(m2);
}

int main(void) {
    RUN(test_fd_every_kind);
    RUN(test_one_layer_same);
    return harness_summary();
}
