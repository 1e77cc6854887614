/*
 * test_wp.c — Wiegreffe & Pinter's training-time tests as extensions, with
 * planted answers (their gradients: test_wp_f64.c):
 *   uniform attention  the weights of a teacher-forced pass and of greedy
 *                      decoding are exactly 1/len (0 on padding); no gradient
 *                      reaches the score tensors; the config key round-trips;
 *   frozen attention   a model frozen to a reference's attention attends
 *                      exactly as the reference (JSD 0 in attend_model_compare,
 *                      > 0 without the option); frozen to a uniform-attention
 *                      reference it computes what the same weights compute
 *                      with uniform_attention (the same loss to 1e-6);
 *   adversarial loss   its value is the mean TVD minus lambda times the mean
 *                      JSD that attend_model_compare measures independently
 *                      (divergence.c), and attend_model_adversarial_jsd
 *                      reports that JSD;
 *   compare            a model against its clone: JSD and TVD 0;
 *   the trainer        runs steps with either option, refuses either without
 *                      a reference; the rules and the errors name the option.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "harness.h"

static attend_model_config cfg_of(attend_decoder_kind dec, attend_score_kind score, int uniform) {
    attend_model_config c = {ATTEND_CELL_GRU, dec, score, 9, 9, 4, 3, 1, 6, 4, 4, 6, 5, 0, 0, 0, 0,
                             ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    c.uniform_attention = uniform;
    return c;
}

/* Four pairs of different lengths over ids 4..8. */
static attend_dataset *data4(void) {
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    int32_t s1[] = {4, 5, 6, 7, 8, 4}, s2[] = {6, 5}, s3[] = {8, 7, 6}, s4[] = {5, 5, 4, 7};
    int32_t t1[] = {8, 4, 7, 6}, t2[] = {5}, t3[] = {6, 7, 8}, t4[] = {7, 4, 5, 5, 6};
    attend_dataset_add(d, s1, 6, t1, 4, NULL);
    attend_dataset_add(d, s2, 2, t2, 1, NULL);
    attend_dataset_add(d, s3, 3, t3, 3, NULL);
    attend_dataset_add(d, s4, 4, t4, 5, NULL);
    return d;
}

static attend_model *make(attend_model_config c, uint64_t seed) {
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &c, seed, &err) == ATTEND_OK, "create: %s", err.msg);
    return m;
}

static void fill(attend_batch *b, const attend_dataset *d) {
    attend_error err;
    int idx[4] = {0, 1, 2, 3};
    attend_batch_alloc(b, 4, 6, 6, NULL);
    EXPECT(attend_batch_fill(b, d, idx, 4, 0, &err) == ATTEND_OK, "fill: %s", err.msg);
}

static double max_abs_grad(const attend_model *m, const char *prefix) {
    double worst = 0;
    for (int i = 0; i < attend_model_tensor_count(m); i++) {
        attend_model_tensor t;
        attend_model_tensor_get(m, i, &t, NULL);
        if (strncmp(t.name, prefix, strlen(prefix))) continue;
        for (size_t k = 0; k < t.numel; k++) worst = fmax(worst, fabs((double)t.grad[k]));
    }
    return worst;
}

static void test_uniform(void) {
    attend_dataset *d = data4();
    for (int dec = 0; dec < 2; dec++) {
        attend_model *m = make(cfg_of((attend_decoder_kind)dec, ATTEND_SCORE_ADDITIVE, 1), 11);
        if (!m) continue;
        attend_batch b;
        fill(&b, d);
        attend_error err;
        attend_tf_stats st;
        attend_model_zero_grad(m);
        EXPECT(attend_forward(m, &b, NULL, &st, &err) == ATTEND_OK, "forward: %s", err.msg);
        EXPECT(attend_model_backward(m, &err) == ATTEND_OK, "backward: %s", err.msg);
        double ga = max_abs_grad(m, "attention."), ge = max_abs_grad(m, "encoder.");
        EXPECT(ga == 0 && ge > 0, "%s: score tensors' gradient %g (want 0), the encoder's %g (want > 0)",
               attend_decoder_name((attend_decoder_kind)dec), ga, ge);
        /* greedy decoding attends uniformly too: row n's weights are 1/len exactly */
        int32_t out[4 * 6], out_len[4];
        attend_real align[4 * 6 * 6];
        attend_decode_options o;
        memset(&o, 0, sizeof o);
        o.size = sizeof o;
        o.max_len = 6;
        int n_out = 0;
        attend_model *ms[1] = {m};
        EXPECT(attend_decode(ms, 1, b.src, b.src_len, 4, b.S, &o, out, out_len, NULL, align, &n_out, &err) == ATTEND_OK,
               "decode: %s", err.msg);
        double worst = 0;
        for (int n = 0; n < 4; n++)
            for (int t = 0; t < out_len[n]; t++)
                for (int j = 0; j < b.S; j++) {
                    double want = j < b.src_len[n] ? 1.0 / b.src_len[n] : 0;
                    worst = fmax(worst, fabs((double)align[((size_t)n * 6 + t) * b.S + j] - want));
                }
        EXPECT(worst < 1e-7, "decoded weights differ from 1/len by %g", worst);
        /* the entropy of a uniform row is log(len): the forward's mean entropy */
        double ent = 0;
        int rows = 0;
        for (int n = 0; n < 4; n++) {
            ent += b.tgt_len[n] * log((double)b.src_len[n]);
            rows += b.tgt_len[n];
        }
        EXPECT_NEAR("mean attention entropy = mean log(len)", st.attn_entropy, ent / rows, 1e-5);
        char *json = NULL;
        attend_model_config c = cfg_of((attend_decoder_kind)dec, ATTEND_SCORE_ADDITIVE, 1), back;
        EXPECT(attend_model_config_to_json(&c, &json, &err) == ATTEND_OK, "json: %s", err.msg);
        EXPECT(json && strstr(json, "\"uniform_attention\":1") != NULL, "config JSON without the key: %s",
               json ? json : "(null)");
        EXPECT(json && attend_model_config_from_json(&back, json, strlen(json), &err) == ATTEND_OK &&
                   back.uniform_attention == 1,
               "round trip: %s", err.msg);
        free(json);
        attend_batch_release(&b);
        attend_model_free(m);
    }
    /* the rules */
    attend_model *m = NULL;
    attend_error err;
    attend_model_config c = cfg_of(ATTEND_DECODER_NONE, ATTEND_SCORE_ADDITIVE, 1);
    EXPECT(attend_model_create(&m, &c, 1, &err) == ATTEND_ERR_ARG && strstr(err.msg, "uniform_attention"),
           "decoder none: %s", err.msg);
    c = cfg_of(ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 1);
    c.normalizer = ATTEND_NORMALIZER_SPARSEMAX;
    EXPECT(attend_model_create(&m, &c, 1, &err) == ATTEND_ERR_ARG && strstr(err.msg, "uniform_attention") &&
               strstr(err.msg, "sparsemax"),
           "sparsemax: %s", err.msg);
    c.normalizer = ATTEND_NORMALIZER_SOFTMAX;
    c.uniform_attention = 2;
    EXPECT(attend_model_create(&m, &c, 1, &err) == ATTEND_ERR_ARG && strstr(err.msg, "uniform_attention=2"),
           "flag 2: %s", err.msg);
    attend_model_free(m);
    attend_dataset_free(d);
}

static void test_frozen(void) {
    attend_dataset *d = data4();
    attend_error err;
    for (int dec = 0; dec < 2; dec++) {
        attend_decoder_kind k = (attend_decoder_kind)dec;
        attend_model *a = make(cfg_of(k, ATTEND_SCORE_GENERAL, 0), 21), *ref = make(cfg_of(k, ATTEND_SCORE_ADDITIVE, 0), 22);
        attend_model *uref = make(cfg_of(k, ATTEND_SCORE_ADDITIVE, 1), 23), *au = make(cfg_of(k, ATTEND_SCORE_GENERAL, 1), 24);
        if (!a || !ref || !uref || !au) continue;
        /* au: a's weights with uniform attention (the extension adds no tensor) */
        EXPECT(attend_model_param_count(a) == attend_model_param_count(au), "uniform_attention changed the tensors");
        memcpy(attend_model_params(au), attend_model_params(a), attend_model_param_count(a) * sizeof(attend_real));
        attend_compare_stats own, fr;
        EXPECT(attend_model_compare(a, ref, d, 4, 0, 0, &own, &err) == ATTEND_OK, "compare: %s", err.msg);
        EXPECT(attend_model_compare(a, ref, d, 4, 0, 1, &fr, &err) == ATTEND_OK, "compare frozen: %s", err.msg);
        EXPECT(own.jsd_mean > 1e-4 && fr.jsd_max == 0, "%s: JSD own %g, frozen max %g (want > 0, exactly 0)",
               attend_decoder_name(k), own.jsd_mean, fr.jsd_max);
        EXPECT(own.steps == 4 + 1 + 3 + 5 + 4 && fr.steps == own.steps, "steps %d %d", own.steps, fr.steps);
        /* planted: frozen to a uniform-attention reference = the same weights with uniform attention */
        attend_batch b;
        fill(&b, d);
        attend_forward_options fo;
        memset(&fo, 0, sizeof fo);
        fo.size = sizeof fo;
        fo.reference = uref;
        fo.frozen_attention = 1;
        attend_tf_stats s1, s2;
        EXPECT(attend_forward(a, &b, &fo, &s1, &err) == ATTEND_OK, "frozen forward: %s", err.msg);
        EXPECT(attend_forward(au, &b, NULL, &s2, &err) == ATTEND_OK, "uniform forward: %s", err.msg);
        EXPECT_NEAR("frozen to uniform = uniform_attention (loss)", s1.loss, s2.loss, 1e-6);
        EXPECT(s1.correct_tokens == s2.correct_tokens, "correct tokens %d %d", s1.correct_tokens, s2.correct_tokens);
        /* ... and differs from a's own attention */
        attend_tf_stats s0;
        attend_forward(a, &b, NULL, &s0, NULL);
        EXPECT(fabs(s0.loss - s1.loss) > 1e-6, "frozen attention changed nothing (loss %g)", s0.loss);
        /* no gradient to the score tensors */
        attend_forward(a, &b, &fo, &s1, NULL);
        attend_model_zero_grad(a);
        EXPECT(attend_model_backward(a, &err) == ATTEND_OK, "backward: %s", err.msg);
        EXPECT(max_abs_grad(a, "attention.") == 0 && max_abs_grad(a, "encoder.") > 0, "frozen gradients");
        /* errors */
        fo.reference = NULL;
        EXPECT(attend_forward(a, &b, &fo, NULL, &err) == ATTEND_ERR_ARG && strstr(err.msg, "reference"),
               "no reference: %s", err.msg);
        fo.reference = a;
        EXPECT(attend_forward(a, &b, &fo, NULL, &err) == ATTEND_ERR_ARG && strstr(err.msg, "reference"),
               "itself: %s", err.msg);
        fo.reference = ref;
        fo.frozen_attention = 0.5;
        EXPECT(attend_forward(a, &b, &fo, NULL, &err) == ATTEND_ERR_ARG && strstr(err.msg, "frozen_attention=0.5"),
               "0.5: %s", err.msg);
        EXPECT(attend_forward(au, &b, &(attend_forward_options){.size = sizeof fo, .reference = ref,
                                                                .frozen_attention = 1},
                              NULL, &err) == ATTEND_ERR_ARG &&
                   strstr(err.msg, "frozen_attention") && strstr(err.msg, "uniform_attention"),
               "with uniform: %s", err.msg);
        attend_batch_release(&b);
        attend_model_free(a);
        attend_model_free(ref);
        attend_model_free(uref);
        attend_model_free(au);
    }
    attend_dataset_free(d);
}

static void test_adversarial(void) {
    attend_dataset *d = data4();
    attend_error err;
    const double lam = 0.7;
    for (int dec = 0; dec < 2; dec++) {
        attend_decoder_kind k = (attend_decoder_kind)dec;
        attend_model *a = make(cfg_of(k, ATTEND_SCORE_ADDITIVE, 0), 31), *ref = make(cfg_of(k, ATTEND_SCORE_GENERAL, 0), 32);
        if (!a || !ref) continue;
        attend_compare_stats cs;
        EXPECT(attend_model_compare(a, ref, d, 4, 0, 0, &cs, &err) == ATTEND_OK, "compare: %s", err.msg);
        attend_batch b;
        fill(&b, d);
        attend_forward_options fo;
        memset(&fo, 0, sizeof fo);
        fo.size = sizeof fo;
        fo.reference = ref;
        fo.adversarial = lam;
        attend_tf_stats st;
        EXPECT(attend_forward(a, &b, &fo, &st, &err) == ATTEND_OK, "forward: %s", err.msg);
        char what[96];
        snprintf(what, sizeof what, "%s: loss = TVD - lambda JSD", attend_decoder_name(k));
        EXPECT_NEAR(what, st.loss, cs.tvd_mean - lam * cs.jsd_mean, 1e-5);
        EXPECT_NEAR("attend_model_adversarial_jsd = compare's JSD", attend_model_adversarial_jsd(a), cs.jsd_mean, 1e-6);
        EXPECT(cs.tvd_mean > 1e-3 && cs.jsd_mean > 1e-4, "degenerate case: TVD %g JSD %g", cs.tvd_mean, cs.jsd_mean);
        /* a plain forward after it: the cross-entropy, no term */
        attend_tf_stats plain;
        attend_forward(a, &b, NULL, &plain, NULL);
        EXPECT_NEAR("plain loss = compare's cross-entropy", plain.loss, cs.loss_a, 1e-5);
        EXPECT(attend_model_adversarial_jsd(a) == 0, "the term outlived its forward");
        /* errors and rules */
        fo.reference = NULL;
        EXPECT(attend_forward(a, &b, &fo, NULL, &err) == ATTEND_ERR_ARG && strstr(err.msg, "adversarial=0.7"),
               "no reference: %s", err.msg);
        fo.reference = ref;
        fo.label_smoothing = 0.1;
        EXPECT(attend_forward(a, &b, &fo, NULL, &err) == ATTEND_ERR_ARG && strstr(err.msg, "adversarial") &&
                   strstr(err.msg, "label_smoothing"),
               "with smoothing: %s", err.msg);
        fo.label_smoothing = 0;
        fo.adversarial = -1;
        EXPECT(attend_forward(a, &b, &fo, NULL, &err) == ATTEND_ERR_ARG && strstr(err.msg, "adversarial=-1"),
               "negative: %s", err.msg);
        attend_batch_release(&b);
        attend_model_free(a);
        attend_model_free(ref);
    }
    attend_dataset_free(d);
}

static void test_compare(void) {
    attend_dataset *d = data4();
    attend_error err;
    attend_model *a = make(cfg_of(ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, 0), 41), *c = NULL;
    if (!a) return;
    EXPECT(attend_model_clone(&c, a, &err) == ATTEND_OK, "clone: %s", err.msg);
    attend_compare_stats cs;
    EXPECT(attend_model_compare(a, c, d, 3, 0, 0, &cs, &err) == ATTEND_OK, "compare: %s", err.msg);
    EXPECT(cs.jsd_max == 0 && cs.tvd_max == 0 && cs.loss_a == cs.loss_b && cs.acc_a == cs.acc_b && cs.pairs == 4,
           "a model against its clone: JSD %g TVD %g", cs.jsd_max, cs.tvd_max);
    attend_eval_stats ev;
    EXPECT(attend_model_evaluate(a, d, 4, 0, &ev, &err) == ATTEND_OK, "evaluate: %s", err.msg);
    EXPECT_NEAR("compare's loss = attend_model_evaluate's", cs.loss_a, ev.loss, 1e-5);
    EXPECT_NEAR("compare's accuracy = attend_model_evaluate's", cs.acc_a, ev.tf_token_acc, 1e-12);
    EXPECT(attend_model_compare(a, a, d, 3, 0, 0, &cs, &err) == ATTEND_ERR_ARG, "same handle: %s", err.msg);
    EXPECT(attend_model_compare(a, c, d, 99, 0, 0, &cs, &err) == ATTEND_ERR_CAPACITY, "batch: %s", err.msg);
    attend_model *none = make(cfg_of(ATTEND_DECODER_NONE, ATTEND_SCORE_GENERAL, 0), 42);
    EXPECT(attend_model_compare(a, none, d, 3, 0, 0, &cs, &err) == ATTEND_ERR_ARG && strstr(err.msg, "model b"),
           "decoder none: %s", err.msg);
    attend_model_free(none);
    attend_model_free(c);
    attend_model_free(a);
    attend_dataset_free(d);
}

static void test_trainer(void) {
    attend_dataset *d = data4();
    attend_error err;
    attend_model *m = make(cfg_of(ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 0), 51);
    attend_model *base = make(cfg_of(ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 0), 52);
    if (!m || !base) return;
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    for (int which = 0; which < 2; which++) {
        attend_trainer *tr = NULL;
        EXPECT(attend_trainer_create(&tr, m, &oc, d, 4, 7, &err) == ATTEND_OK, "trainer: %s", err.msg);
        if (!tr) continue;
        attend_train_options t;
        memset(&t, 0, sizeof t);
        if (which) t.adversarial = 0.5;
        else t.frozen_attention = 1;
        EXPECT(attend_trainer_set_options(tr, &t, &err) == ATTEND_ERR_ARG && strstr(err.msg, "reference"),
               "without a reference: %s", err.msg);
        t.reference = base;
        EXPECT(attend_trainer_set_options(tr, &t, &err) == ATTEND_OK, "options: %s", err.msg);
        double first = 0, last = 0;
        for (int s = 0; s < 30; s++) {
            attend_step_report r;
            EXPECT(attend_trainer_step(tr, &r, &err) == ATTEND_OK, "step: %s", err.msg);
            if (s == 0) first = r.tf.loss;
            last = r.tf.loss;
        }
        EXPECT(last < first, "%s: the loss did not fall in 30 steps (%g -> %g)", which ? "adversarial" : "frozen",
               first, last);
        attend_trainer_free(tr);
    }
    attend_model_free(m);
    attend_model_free(base);
    attend_dataset_free(d);
}

int main(void) {
    RUN(test_uniform);
    RUN(test_frozen);
    RUN(test_adversarial);
    RUN(test_compare);
    RUN(test_trainer);
    return harness_summary();
}
