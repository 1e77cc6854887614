/*
 * test_combos_f64.c — the model features together, in double precision: each
 * feature (dec_layers, coverage, copy, monotonic, the normalizers, dropout,
 * label smoothing, the coverage loss, guided alignment) has its own gradient
 * test; this one checks combinations of them, where a buffer sized for one
 * feature or a backward path that ignores another's gradient would show.
 * For each combination: attend_model_backward against central finite
 * differences of attend_model_forward over every parameter (tolerances of
 * test_coverage_f64.c), and that each regularising term changed the loss.
 * Also: the combinations attend_model_config_check / attend_trainer_set_options
 * refuse are refused with a message naming both features.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "fd_check.h"
#include "harness.h"

/* Vs = 9, Vt = 7 (test_copy_f64.c's data): source ids 4..6 copy as
 * themselves, 7 and 8 as extended ids. Without copy the targets stay < Vt. */
static attend_dataset *combo_data(int copy) {
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    int32_t s1[] = {4, 7, 5, 7}, s2[] = {6, ATTEND_UNK, 8}, s3[] = {4, 6};
    int32_t c1[] = {8, 5, 4, 8}, c2[] = {9, 6, 8}, c3[] = {4};
    int32_t p1[] = {5, 5, 4, 6}, p2[] = {4, 6, 5}, p3[] = {4};
    attend_dataset_add(d, s1, 4, copy ? c1 : p1, 4, NULL);
    attend_dataset_add(d, s2, 3, copy ? c2 : p2, 3, NULL);
    attend_dataset_add(d, s3, 2, copy ? c3 : p3, 1, NULL);
    /* pair 0 aligned (target 1 to two positions, target 2 to none), pair 1 partly, pair 2 not */
    const int32_t l0[] = {3, 0, 1, 1, 2, 1, 0, 3}, l1[] = {0, 0, 2, 2};
    attend_dataset_set_alignment(d, 0, l0, 4, NULL);
    attend_dataset_set_alignment(d, 1, l1, 2, NULL);
    return d;
}

typedef struct {
    double guided, cov_loss, dropout, smoothing;
} combo_opts;

static void check(const char *what, attend_model_config cfg, combo_opts o) {
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &cfg, 4321, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (!m) return;
    attend_dataset *d = combo_data(cfg.copy);
    attend_batch b;
    attend_batch_alloc(&b, 3, 5, 6, NULL);
    int idx[3] = {0, 1, 2};
    EXPECT(attend_batch_fill(&b, d, idx, 3, 0, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    attend_tf_stats plain, st;
    EXPECT(attend_model_forward(m, &b, &plain, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    /* each option on its own changes the loss (it takes part), then all together */
    struct {
        const char *name;
        double v;
    } opt[] = {{"guided", o.guided}, {"cov_loss", o.cov_loss}, {"dropout", o.dropout}, {"smoothing", o.smoothing}};
    for (int k = 0; k < 4; k++) {
        if (o.guided > 0 || k != 0) attend_model_set_guided_alignment(m, k == 0 ? o.guided : 0, NULL);
        if (o.cov_loss > 0 || k != 1) attend_model_set_coverage_loss(m, k == 1 ? o.cov_loss : 0, NULL);
        attend_model_set_dropout(m, k == 2 ? o.dropout : 0, 77, NULL);
        attend_model_set_label_smoothing(m, k == 3 ? o.smoothing : 0, NULL);
        if (opt[k].v == 0) continue;
        EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_OK, "%s: %s", what, err.msg);
        EXPECT(fabs(st.loss - plain.loss) > 1e-6, "%s: %s=%g leaves the loss at %.9g", what, opt[k].name, opt[k].v,
               plain.loss);
    }
    if (o.guided > 0) EXPECT(attend_model_set_guided_alignment(m, o.guided, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (o.cov_loss > 0) EXPECT(attend_model_set_coverage_loss(m, o.cov_loss, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(attend_model_set_dropout(m, o.dropout, 77, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(attend_model_set_label_smoothing(m, o.smoothing, &err) == ATTEND_OK, "%s: %s", what, err.msg);

    attend_model_zero_grad(m);
    EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(attend_model_backward(m, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    size_t n = attend_model_param_count(m);
    double *analytic = NULL, *numeric = NULL;
    fd_gradients(m, &b, &analytic, &numeric);
    char label[300];
    snprintf(label, sizeof label, "%s (%zu params, loss %.4f)", what, n, st.loss);
    EXPECT_CLOSE(label, analytic, numeric, n, 1e-7, 1e-5);
    /* the added layers, coverage and copy tensors take gradient */
    const char *names[] = {"decoder.weight_ih_l1", "attention.w_cov", "copy.w_c", "copy.w_s"};
    int want[] = {cfg.dec_layers > 1, cfg.coverage, cfg.copy, cfg.copy};
    for (int k = 0; k < 4; k++) {
        attend_model_tensor t;
        int found = attend_model_tensor_find(m, names[k], &t, NULL) == ATTEND_OK;
        if (!want[k] || !found) {
            EXPECT(!want[k] || found || k == 0, "%s: %s missing", what, names[k]);
            continue;
        }
        double norm = 0;
        for (size_t i = 0; i < t.numel; i++) norm += fabs(t.grad[i]);
        EXPECT(norm > 1e-8, "%s: %s has no gradient", what, names[k]);
    }
    free(analytic);
    free(numeric);
    attend_batch_release(&b);
    attend_dataset_free(d);
    attend_model_free(m);
}

static attend_model_config base(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score) {
    /* emb 5, enc 3, dec 4: wide enough that dropout keeps some of every vector; two decoder layers */
    attend_model_config c = {cell, dec, score, 9, 7, 5, 3, 1, 4, 3, 3, 5, 6, 2, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    return c;
}

static const combo_opts NONE = {0, 0, 0, 0};

static void test_layers_coverage_copy(void) {
    for (int cell = 0; cell < 2; cell++) {
        attend_model_config c = base((attend_cell_kind)cell, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE);
        c.coverage = 1;
        c.copy = 1;
        check(cell ? "L2+coverage+copy lstm/bahdanau/additive" : "L2+coverage+copy gru/bahdanau/additive", c, NONE);
        c.decoder = ATTEND_DECODER_LUONG;
        check(cell ? "L2+coverage+copy lstm/luong/additive" : "L2+coverage+copy gru/luong/additive", c, NONE);
    }
}

static void test_layers_monotonic_copy(void) {
    for (int cell = 0; cell < 2; cell++) {
        attend_model_config c = base((attend_cell_kind)cell, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL);
        c.monotonic = 1;
        c.copy = 1;
        check(cell ? "L2+monotonic+copy lstm/luong/general" : "L2+monotonic+copy gru/luong/general", c, NONE);
    }
    attend_model_config c = base(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE);
    c.monotonic = 1;
    c.coverage = 1;
    check("L2+monotonic+coverage gru/bahdanau/additive", c, (combo_opts){0, 0.6, 0, 0});
}

static void test_normalizers(void) {
    attend_model_config c = base(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE);
    c.normalizer = ATTEND_NORMALIZER_SPARSEMAX;
    c.coverage = 1;
    check("L2+sparsemax+coverage gru/bahdanau/additive", c, NONE);
    c = base(ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_DOT);
    c.dec_hidden = 6; /* dot needs Hd == 2He */
    c.normalizer = ATTEND_NORMALIZER_ENTMAX15;
    c.copy = 1;
    check("L2+entmax15+copy lstm/luong/dot", c, NONE);
}

static void test_regularisers(void) {
    attend_model_config c = base(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE);
    c.coverage = 1;
    check("L2+coverage+guided+coverage loss gru/bahdanau", c, (combo_opts){0.8, 0.7, 0, 0});
    c.cell = ATTEND_CELL_LSTM;
    c.decoder = ATTEND_DECODER_LUONG;
    check("L2+coverage+guided+coverage loss lstm/luong", c, (combo_opts){0.8, 0.7, 0, 0});
    c.cell = ATTEND_CELL_GRU;
    c.decoder = ATTEND_DECODER_BAHDANAU;
    check("L2+coverage+dropout+smoothing gru/bahdanau", c, (combo_opts){0, 0, 0.3, 0.1});
    c.cell = ATTEND_CELL_LSTM;
    check("L2+coverage+dropout+smoothing+guided+coverage loss lstm/bahdanau", c, (combo_opts){0.5, 0.4, 0.3, 0.1});
    c = base(ATTEND_CELL_GRU, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL);
    c.copy = 1;
    check("L2+copy+dropout gru/luong/general", c, (combo_opts){0, 0, 0.3, 0});
    c.monotonic = 1;
    c.cell = ATTEND_CELL_LSTM;
    check("L2+copy+monotonic+dropout+guided lstm/luong/general", c, (combo_opts){0.6, 0, 0.3, 0});
}

#define REFUSED(st, a, b)                                                                                         \
    EXPECT((st) == ATTEND_ERR_ARG && strstr(err.msg, a) && strstr(err.msg, b), "%s + %s: %s", a, b, err.msg)

static void test_refusals(void) {
    attend_error err;
    attend_model_config c = base(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE);
    c.monotonic = 1;
    c.normalizer = ATTEND_NORMALIZER_SPARSEMAX;
    REFUSED(attend_model_config_check(&c, &err), "monotonic", "sparsemax");
    c.normalizer = ATTEND_NORMALIZER_ENTMAX15;
    REFUSED(attend_model_config_check(&c, &err), "monotonic", "entmax15");
    c = base(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_GENERAL);
    c.coverage = 1;
    REFUSED(attend_model_config_check(&c, &err), "coverage", "general");
    c = base(ATTEND_CELL_GRU, ATTEND_DECODER_POINTER, ATTEND_SCORE_ADDITIVE);
    c.copy = 1;
    REFUSED(attend_model_config_check(&c, &err), "copy", "pointer");

    /* copy + label smoothing, copy + scheduled sampling: on the model and the trainer */
    c = base(ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE);
    c.copy = 1;
    attend_model *m = NULL;
    EXPECT(attend_model_create(&m, &c, 1, &err) == ATTEND_OK, "%s", err.msg);
    if (!m) return;
    REFUSED(attend_model_set_label_smoothing(m, 0.1, &err), "label_smoothing", "copy");
    attend_dataset *d = combo_data(1);
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    attend_trainer *tr = NULL;
    EXPECT(attend_trainer_create(&tr, m, &oc, d, 2, 3, &err) == ATTEND_OK, "%s", err.msg);
    if (tr) {
        attend_train_options o = {0};
        o.label_smoothing = 0.1;
        REFUSED(attend_trainer_set_options(tr, &o, &err), "label_smoothing", "copy");
        o.label_smoothing = 0;
        o.sampling_prob = 0.25;
        REFUSED(attend_trainer_set_options(tr, &o, &err), "sampling_prob", "copy");
        o.sampling_prob = 0;
        o.dropout = 0.2;
        o.guided_alignment = 0.5;
        EXPECT(attend_trainer_set_options(tr, &o, &err) == ATTEND_OK, "copy + dropout + guided: %s", err.msg);
        attend_trainer_free(tr);
    }
    attend_dataset_free(d);
    attend_model_free(m);
}

int main(void) {
    RUN(test_layers_coverage_copy);
    RUN(test_layers_monotonic_copy);
    RUN(test_normalizers);
    RUN(test_regularisers);
    RUN(test_refusals);
    return harness_summary();
}
