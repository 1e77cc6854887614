/*
 * test_wp_f64.c — the gradients of Wiegreffe & Pinter's training-time
 * extensions in double precision, attend_model_backward against central
 * finite differences of attend_forward over every parameter:
 *   adversarial  the loss mean TVD(p, q) − λ mean JSD(α, β) to a reference
 *                model (both decoders and cells, additive and general
 *                scores): the TVD's gradient through the softmax output, the
 *                JSD's through the attention's softmax into the scores;
 *   frozen       the reference's weights as constants (score tensors: 0);
 *   uniform      uniform_attention's constant weights.
 * The batch: four pairs of different lengths (padding, rows that stop early).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "harness.h"

static attend_dataset *data4(void) {
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    int32_t s1[] = {4, 5, 6, 7, 4}, s2[] = {6, 5}, s3[] = {7, 6, 4}, s4[] = {5, 5, 4, 7};
    int32_t t1[] = {7, 4, 6}, t2[] = {5}, t3[] = {6, 7, 4, 5}, t4[] = {4, 6};
    attend_dataset_add(d, s1, 5, t1, 3, NULL);
    attend_dataset_add(d, s2, 2, t2, 1, NULL);
    attend_dataset_add(d, s3, 3, t3, 4, NULL);
    attend_dataset_add(d, s4, 4, t4, 2, NULL);
    return d;
}

/* what: the case; o: the forward's options. Analytic vs numeric over every parameter. */
static void check(const char *what, attend_model *m, const attend_batch *b, const attend_forward_options *o) {
    attend_error err;
    attend_tf_stats st;
    attend_model_zero_grad(m);
    EXPECT(attend_forward(m, b, o, &st, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(attend_model_backward(m, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    size_t n = attend_model_param_count(m);
    double *p = attend_model_params(m), *g = attend_model_grads(m);
    double *ana = malloc(n * sizeof *ana), *num = malloc(n * sizeof *num);
    memcpy(ana, g, n * sizeof *ana);
    const double h = 1e-6;
    for (size_t i = 0; i < n; i++) {
        double keep = p[i];
        attend_tf_stats sp, sm;
        p[i] = keep + h;
        attend_forward(m, b, o, &sp, NULL);
        p[i] = keep - h;
        attend_forward(m, b, o, &sm, NULL);
        p[i] = keep;
        num[i] = (sp.loss - sm.loss) / (2 * h);
    }
    char label[160];
    snprintf(label, sizeof label, "%s (%zu params, loss %.4f)", what, n, st.loss);
    EXPECT_CLOSE(label, ana, num, n, 1e-7, 1e-5);
    free(ana);
    free(num);
}

static attend_model *make(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score, int uniform,
                          uint64_t seed) {
    attend_model_config c = {cell, dec, score, 8, 8, 3, 2, 1, 4, 3, 4, 5, 4, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX,
                             ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    c.uniform_attention = uniform;
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &c, seed, &err) == ATTEND_OK, "create: %s", err.msg);
    return m;
}

static void run_cases(int mode) { /* 0 adversarial, 1 frozen, 2 uniform */
    attend_dataset *d = data4();
    attend_batch b;
    attend_batch_alloc(&b, 4, 5, 5, NULL);
    int idx[4] = {0, 1, 2, 3};
    attend_error err;
    EXPECT(attend_batch_fill(&b, d, idx, 4, 0, &err) == ATTEND_OK, "fill: %s", err.msg);
    static const attend_score_kind scores[2] = {ATTEND_SCORE_ADDITIVE, ATTEND_SCORE_GENERAL};
    for (int cell = 0; cell < 2; cell++)
        for (int dec = 0; dec < 2; dec++)
            for (int s = 0; s < 2; s++) {
                if (mode && s) continue; /* constants: one score kind is enough */
                attend_model *m = make((attend_cell_kind)cell, (attend_decoder_kind)dec, scores[s], mode == 2, 100 + s);
                attend_model *ref = make((attend_cell_kind)cell, (attend_decoder_kind)dec, scores[1 - s], 0, 200 + s);
                if (!m || !ref) continue;
                attend_forward_options o;
                memset(&o, 0, sizeof o);
                o.size = sizeof o;
                if (mode == 0) o.adversarial = 0.8;
                if (mode == 1) o.frozen_attention = 1;
                if (mode < 2) o.reference = ref;
                char what[96];
                snprintf(what, sizeof what, "%s %s/%s/%s", mode == 0 ? "adversarial" : mode == 1 ? "frozen" : "uniform",
                         attend_cell_name((attend_cell_kind)cell), attend_decoder_name((attend_decoder_kind)dec),
                         attend_score_name(scores[s]));
                check(what, m, &b, mode < 2 ? &o : NULL);
                attend_model_free(m);
                attend_model_free(ref);
            }
    attend_batch_release(&b);
    attend_dataset_free(d);
}

static void test_adversarial(void) { run_cases(0); }
static void test_frozen(void) { run_cases(1); }
static void test_uniform(void) { run_cases(2); }

int main(void) {
    RUN(test_adversarial);
    RUN(test_frozen);
    RUN(test_uniform);
    return harness_summary();
}
