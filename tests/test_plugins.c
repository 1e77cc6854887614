/*
 * test_plugins.c — issue 26's interfaces through the public API:
 *   - options passed per call: attend_forward with attend_forward_options
 *     gives the loss and gradients the deprecated setters + attend_model_forward
 *     give, bit for bit, and leaves nothing on the model (a forward without
 *     options after one with dropout and smoothing is the plain one);
 *   - options structs grow by size: an older (shorter) struct reads zeros
 *     after its size, a newer one is refused when it sets a byte this library
 *     does not know, a size below the size field is refused naming it;
 *   - one beam search over scorers: an ensemble of clones decodes exactly as
 *     the single model (greedy, and beam with a coverage penalty), for a
 *     vocabulary decoder with coverage and for pointer models; mixed output
 *     spaces are refused naming the model;
 *   - the combination rules as data: the rules the mechanisms declare break
 *     where they should, format with the caller's names, and the training
 *     options are listed in checkpoint order.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "harness.h"

enum { V = 11, S = 6, L = 9, N = 5 };

static attend_model *make(attend_decoder_kind dec, int coverage, uint64_t seed) {
    attend_model_config c;
    memset(&c, 0, sizeof c);
    c.cell = ATTEND_CELL_GRU;
    c.decoder = dec;
    c.score = ATTEND_SCORE_ADDITIVE;
    c.src_vocab = c.tgt_vocab = V;
    c.emb = 6;
    c.enc_hidden = 5;
    c.enc_layers = 1;
    c.dec_hidden = 9;
    c.attn = 7;
    c.max_batch = 8;
    c.max_src_len = S;
    c.max_tgt_len = L - 1;
    c.coverage = coverage;
    attend_model *m = NULL;
    attend_error e;
    EXPECT(attend_model_create(&m, &c, seed, &e) == ATTEND_OK, "%s", e.msg);
    return m;
}

static const int32_t SRC[N * S] = {4, 5, 6, 7, 8, 9, 9, 8, 7, 6, 0, 0, 5, 5, 6, 0, 0, 0, 10, 4, 6, 8, 0, 0, 7, 0, 0, 0, 0, 0};
static const int32_t SRC_LEN[N] = {6, 4, 3, 4, 1};

/* a batch of the N sources copying themselves */
static void fill_batch(attend_batch *b) {
    b->N = N;
    b->S = S;
    b->T = S + 1;
    memcpy(b->src, SRC, sizeof SRC);
    memcpy(b->src_len, SRC_LEN, sizeof SRC_LEN);
    for (int n = 0; n < N; n++) {
        b->tgt_len[n] = SRC_LEN[n] + 1;
        for (int t = 0; t < b->T; t++) {
            b->tgt_in[n * b->T + t] = t == 0 ? ATTEND_BOS : t <= SRC_LEN[n] ? SRC[n * S + t - 1] : ATTEND_PAD;
            b->tgt_out[n * b->T + t] = t < SRC_LEN[n] ? SRC[n * S + t] : t == SRC_LEN[n] ? ATTEND_EOS : ATTEND_PAD;
        }
    }
}

static void test_forward_options(void) {
    attend_error e;
    attend_model *a = make(ATTEND_DECODER_BAHDANAU, 0, 3), *b = NULL;
    EXPECT(attend_model_clone(&b, a, &e) == ATTEND_OK, "%s", e.msg);
    attend_batch bt;
    EXPECT(attend_batch_alloc(&bt, N, S, S + 1, &e) == ATTEND_OK, "%s", e.msg);
    fill_batch(&bt);
    size_t P = attend_model_param_count(a);
    /* the deprecated setters on a, the per-call options on b */
    attend_model_set_dropout(a, 0.3, 99, NULL);
    attend_model_set_label_smoothing(a, 0.1, NULL);
    attend_model_set_coverage_loss(a, 0.7, NULL);
    attend_forward_options o = ATTEND_OPTIONS_INIT(attend_forward_options);
    o.dropout = 0.3;
    o.dropout_key = 99;
    o.label_smoothing = 0.1;
    o.coverage_loss = 0.7;
    attend_tf_stats sa, sb;
    attend_model_zero_grad(a);
    attend_model_zero_grad(b);
    EXPECT(attend_model_forward(a, &bt, &sa, &e) == ATTEND_OK && attend_model_backward(a, &e) == ATTEND_OK, "%s",
           e.msg);
    EXPECT(attend_forward(b, &bt, &o, &sb, &e) == ATTEND_OK && attend_model_backward(b, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(sa.loss == sb.loss, "setters %.9g, options %.9g", sa.loss, sb.loss);
    EXPECT(!memcmp(attend_model_grads(a), attend_model_grads(b), P * sizeof(attend_real)),
           "the gradients differ between the setters and the options");
    printf("  options per call = deprecated setters: loss %.7f, %zu gradients bit for bit\n", sb.loss, P);
    /* nothing stays on b: its next forward without options is the plain one, as a's with setters cleared */
    attend_model_set_dropout(a, 0, 0, NULL);
    attend_model_set_label_smoothing(a, 0, NULL);
    attend_model_set_coverage_loss(a, 0, NULL);
    EXPECT(attend_model_forward(a, &bt, &sa, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(attend_forward(b, &bt, NULL, &sb, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(sa.loss == sb.loss && sb.loss != 0, "after options, a plain forward: %.9g vs %.9g", sb.loss, sa.loss);
    /* options checked per call: a value out of range, a rule broken */
    o.dropout = 1;
    EXPECT(attend_forward(b, &bt, &o, &sb, &e) == ATTEND_ERR_ARG && strstr(e.msg, "dropout=1"), "%s", e.msg);
    attend_model *p = make(ATTEND_DECODER_NONE, 0, 4);
    attend_forward_options g = ATTEND_OPTIONS_INIT(attend_forward_options);
    g.guided_alignment = 1;
    EXPECT(attend_forward(p, &bt, &g, &sb, &e) == ATTEND_ERR_ARG && strstr(e.msg, "guided_alignment with decoder none"),
           "%s", e.msg);
    /* sizes: an older struct (up to dropout_key) reads zeros after it */
    attend_forward_options old;
    memset(&old, 0x7f, sizeof old); /* garbage after its size must not be read */
    old.size = offsetof(attend_forward_options, label_smoothing);
    old.dropout = 0;
    old.dropout_key = 0;
    EXPECT(attend_forward(b, &bt, &old, &sb, &e) == ATTEND_OK && sb.loss == sa.loss, "older size: %s", e.msg);
    /* a newer struct with a byte set beyond what this library knows */
    unsigned char big[sizeof(attend_forward_options) + 16];
    memset(big, 0, sizeof big);
    attend_forward_options *nb = (attend_forward_options *)(void *)big;
    nb->size = sizeof big;
    EXPECT(attend_forward(b, &bt, nb, &sb, &e) == ATTEND_OK, "newer size, zero tail: %s", e.msg);
    big[sizeof(attend_forward_options) + 3] = 1;
    EXPECT(attend_forward(b, &bt, nb, &sb, &e) == ATTEND_ERR_ARG && strstr(e.msg, "attend_forward_options.size"), "%s",
           e.msg);
    attend_forward_options zero;
    memset(&zero, 0, sizeof zero);
    EXPECT(attend_forward(b, &bt, &zero, &sb, &e) == ATTEND_ERR_ARG && strstr(e.msg, "sizeof(attend_forward_options)"),
           "%s", e.msg);
    attend_batch_release(&bt);
    attend_model_free(a);
    attend_model_free(b);
    attend_model_free(p);
}

/* An ensemble of two clones of m decodes as m: greedy, and beam search with a coverage penalty. */
static void check_clones(attend_model *m, double penalty, int short_len, const char *what) {
    attend_error e;
    attend_model *c = NULL;
    EXPECT(attend_model_clone(&c, m, &e) == ATTEND_OK, "%s", e.msg);
    attend_model *one[1] = {m}, *two[2] = {m, c};
    int32_t o1[N * L], l1[N], o2[N * L], l2[N];
    static attend_real a1[N * L * S], a2[2 * N * L * S];
    attend_decode_options go = ATTEND_OPTIONS_INIT(attend_decode_options);
    go.max_len = L;
    EXPECT(attend_decode(one, 1, SRC, SRC_LEN, N, S, &go, o1, l1, NULL, a1, NULL, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(attend_decode(two, 2, SRC, SRC_LEN, N, S, &go, o2, l2, NULL, a2, NULL, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(!memcmp(o1, o2, sizeof o1) && !memcmp(l1, l2, sizeof l1), "%s: greedy tokens differ", what);
    EXPECT(!memcmp(a1, a2, sizeof a1) && !memcmp(a1, a2 + N * L * S, sizeof a1), "%s: greedy alignments differ", what);
    attend_decode_options bo = ATTEND_OPTIONS_INIT(attend_decode_options);
    bo.beam = 4;
    bo.nbest = 3;
    bo.max_len = L;
    bo.alpha = 0.5;
    bo.coverage_penalty = penalty;
    int32_t bo1[3 * L], bl1[3], bo2[3 * L], bl2[3];
    double s1[3], s2[3];
    int n1 = 0, n2 = 0;
    static attend_real ba1[3 * L * S], ba2[2 * 3 * L * S];
    EXPECT(attend_decode(one, 1, SRC, NULL, 1, S, &bo, bo1, bl1, s1, ba1, &n1, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(attend_decode(two, 2, SRC, NULL, 1, S, &bo, bo2, bl2, s2, ba2, &n2, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(n1 == n2 && n1 >= 1 && !memcmp(bo1, bo2, (size_t)n1 * L * sizeof *bo1) &&
               !memcmp(bl1, bl2, (size_t)n1 * sizeof *bl1) && !memcmp(s1, s2, (size_t)n1 * sizeof *s1),
           "%s: beam differs (%d vs %d hypotheses, best %.9g vs %.9g)", what, n1, n2, s1[0], s2[0]);
    EXPECT(!memcmp(ba1, ba2, (size_t)n1 * L * S * sizeof *ba1) &&
               !memcmp(ba1, ba2 + (size_t)3 * L * S, (size_t)n1 * L * S * sizeof *ba1),
           "%s: beam alignments differ", what);
    /* the penalty changes the scores when some position gets less than a unit of attention in total
     * (short outputs over 6 positions; a pointer's are always 6) */
    double s0[3];
    bo.max_len = short_len;
    EXPECT(attend_decode(two, 2, SRC, NULL, 1, S, &bo, bo2, bl2, s2, ba2, &n2, &e) == ATTEND_OK, "%s", e.msg);
    bo.coverage_penalty = 0;
    EXPECT(attend_decode(two, 2, SRC, NULL, 1, S, &bo, bo2, bl2, s0, ba2, &n2, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(s0[0] > s2[0], "%s: the coverage penalty lowered nothing (%.9g, %.9g)", what, s0[0], s2[0]);
    printf("  %s: ensemble of 2 clones = the model (greedy %d tokens; beam %d hypotheses, best %.6f; max_len %d: "
           "%.6f with the penalty, %.6f without)\n", what, l1[0], n1, s1[0], short_len, s2[0], s0[0]);
    attend_model_free(c);
}

static void test_ensembles(void) {
    attend_error e;
    attend_model *cov = make(ATTEND_DECODER_BAHDANAU, 1, 5), *ptr = make(ATTEND_DECODER_POINTER, 0, 6),
                 *luo = make(ATTEND_DECODER_LUONG, 0, 7);
    check_clones(cov, 0.7, 2, "bahdanau + coverage");
    check_clones(luo, 0.4, 2, "luong");
    check_clones(ptr, 0.3, S, "pointer");
    /* two different pointer models: an ensemble of pointers emits a permutation of each source */
    attend_model *ptr2 = make(ATTEND_DECODER_POINTER, 0, 8);
    attend_model *pp[2] = {ptr, ptr2}, *mixed[2] = {luo, ptr};
    int32_t out[N * L], len[N];
    attend_decode_options go = ATTEND_OPTIONS_INIT(attend_decode_options);
    go.max_len = L;
    EXPECT(attend_decode(pp, 2, SRC, SRC_LEN, N, S, &go, out, len, NULL, NULL, NULL, &e) == ATTEND_OK, "%s", e.msg);
    for (int n = 0; n < N; n++) {
        int seen[S] = {0}, ok = len[n] == SRC_LEN[n];
        for (int t = 0; ok && t < len[n]; t++) ok = out[n * L + t] >= 0 && out[n * L + t] < len[n] && !seen[out[n * L + t]]++;
        EXPECT(ok, "pointer ensemble: row %d is not a permutation of its %d positions", n, SRC_LEN[n]);
    }
    EXPECT(attend_decode(mixed, 2, SRC, SRC_LEN, N, S, &go, out, len, NULL, NULL, NULL, &e) == ATTEND_ERR_ARG &&
               strstr(e.msg, "model 2 is a pointer model"), "%s", e.msg);
    /* beam search's options with greedy, and options out of range */
    go.coverage_penalty = 1;
    EXPECT(attend_decode(pp, 2, SRC, SRC_LEN, N, S, &go, out, len, NULL, NULL, NULL, &e) == ATTEND_ERR_ARG &&
               strstr(e.msg, "coverage_penalty=1 is an option of beam search"), "%s", e.msg);
    attend_decode_options bad = ATTEND_OPTIONS_INIT(attend_decode_options);
    bad.beam = 65;
    bad.max_len = L;
    double sc[1];
    int n_out;
    EXPECT(attend_decode(pp, 1, SRC, NULL, 1, S, &bad, out, len, sc, NULL, &n_out, &e) == ATTEND_ERR_ARG &&
               strstr(e.msg, "beam width 65"), "%s", e.msg);
    bad.beam = 2;
    EXPECT(attend_decode(pp, 1, SRC, SRC_LEN, 2, S, &bad, out, len, sc, NULL, &n_out, &e) == ATTEND_ERR_ARG &&
               strstr(e.msg, "one source at a time"), "%s", e.msg);
    attend_model_free(cov);
    attend_model_free(ptr);
    attend_model_free(ptr2);
    attend_model_free(luo);
}

static void test_rules(void) {
    int n = attend_feature_rule_count();
    EXPECT(n >= 10, "only %d rules", n);
    attend_model_config c;
    memset(&c, 0, sizeof c);
    c.cell = ATTEND_CELL_GRU;
    c.decoder = ATTEND_DECODER_NONE;
    c.score = ATTEND_SCORE_ADDITIVE;
    c.copy = 1;
    int i = attend_feature_rule_broken(&c, NULL);
    const attend_feature_rule *r = attend_feature_rule_get(i);
    EXPECT(r && !strcmp(r->feature, "copy") && r->kind == ATTEND_RULE_ATTENTION, "copy with none: rule %d", i);
    char msg[300];
    attend_feature_rule_format(r, "--copy", "--decoder none", msg, sizeof msg);
    EXPECT(!strncmp(msg, "--copy with --decoder none: ", 28), "%s", msg);
    c.copy = 0;
    c.decoder = ATTEND_DECODER_BAHDANAU;
    c.monotonic = 1;
    c.normalizer = ATTEND_NORMALIZER_SPARSEMAX;
    i = attend_feature_rule_broken(&c, NULL);
    r = attend_feature_rule_get(i);
    EXPECT(r && r->kind == ATTEND_RULE_EXCLUDES && !strcmp(r->feature, "normalizer") && !strcmp(r->other, "monotonic"),
           "normalizer with monotonic: rule %d", i);
    c.monotonic = 0;
    c.normalizer = ATTEND_NORMALIZER_SOFTMAX;
    c.coverage = 1;
    c.score = ATTEND_SCORE_DOT;
    r = attend_feature_rule_get(attend_feature_rule_broken(&c, NULL));
    EXPECT(r && r->kind == ATTEND_RULE_ADDITIVE, "coverage with dot");
    c.score = ATTEND_SCORE_ADDITIVE;
    c.copy = 1;
    EXPECT(attend_feature_rule_broken(&c, NULL) == -1, "coverage + copy on bahdanau/additive is allowed");
    attend_train_options t;
    memset(&t, 0, sizeof t);
    t.label_smoothing = 0.1;
    r = attend_feature_rule_get(attend_feature_rule_broken(&c, &t));
    EXPECT(r && !strcmp(r->feature, "label_smoothing") && !strcmp(r->other, "copy"), "smoothing with copy");
    /* the training options in checkpoint order */
    const char *want[] = {"dropout", "label_smoothing", "sampling_prob", "sampling_ramp", "coverage_loss",
                          "guided_alignment"};
    EXPECT(attend_train_option_count() == 6, "%d training options", attend_train_option_count());
    t.sampling_ramp = 40;
    for (int k = 0; k < 6; k++) {
        double v = -1;
        const char *name = attend_train_option_get(&t, k, &v);
        EXPECT(name && !strcmp(name, want[k]), "option %d is %s", k, name ? name : "(none)");
        if (k == 3) EXPECT(v == 40, "sampling_ramp read %g", v);
    }
    EXPECT(!attend_train_option_get(&t, 6, NULL) && !attend_feature_rule_get(n), "past the end");
    printf("  %d rules, %d training options\n", n, attend_train_option_count());
}

/* attend_attention_compute/_gradient with options = the _normalized forms, bit for bit */
static void test_attention_options(void) {
    enum { AN = 2, AT = 3, AS = 5, AD = 4 };
    attend_error e;
    attend_score_config cfg = {ATTEND_SCORE_DOT, AD, AD, 0, 0, 0};
    attend_score_params p = {0};
    attend_score_grads g = {0};
    attend_real q[AN * AT * AD], k[AN * AS * AD], v[AN * AS * AD];
    for (int i = 0; i < AN * AT * AD; i++) q[i] = (attend_real)sin(0.7 * i);
    for (int i = 0; i < AN * AS * AD; i++) k[i] = (attend_real)cos(0.3 * i), v[i] = (attend_real)sin(0.11 * i + 1);
    uint8_t valid[AN * AS] = {1, 1, 1, 0, 0, 1, 1, 1, 1, 1};
    size_t ws = attend_attention_workspace_size(&cfg, AN, AT, AS);
    attend_real *w1 = calloc(ws, sizeof *w1), *w2 = calloc(ws, sizeof *w2);
    attend_real c1[AN * AT * AD], c2[AN * AT * AD], a1[AN * AT * AS], a2[AN * AT * AS];
    attend_real dq1[AN * AT * AD] = {0}, dq2[AN * AT * AD] = {0}, dk1[AN * AS * AD] = {0}, dk2[AN * AS * AD] = {0};
    attend_real dctx[AN * AT * AD];
    for (int i = 0; i < AN * AT * AD; i++) dctx[i] = (attend_real)(0.1 * (i % 7) - 0.3);
    attend_attention_options o = ATTEND_OPTIONS_INIT(attend_attention_options);
    o.normalizer = ATTEND_NORMALIZER_SPARSEMAX;
    o.valid = valid;
    EXPECT(attend_attention_forward_normalized(&cfg, &p, ATTEND_NORMALIZER_SPARSEMAX, c1, a1, q, k, v, valid, NULL, 0,
                                               AN, AT, AS, AD, w1, ws, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(attend_attention_compute(&cfg, &p, &o, c2, a2, q, k, v, AN, AT, AS, AD, w2, ws, &e) == ATTEND_OK, "%s",
           e.msg);
    EXPECT(!memcmp(c1, c2, sizeof c1) && !memcmp(a1, a2, sizeof a1), "compute differs from forward_normalized");
    EXPECT(attend_attention_backward_normalized(&cfg, &p, ATTEND_NORMALIZER_SPARSEMAX, &g, dq1, dk1, NULL, dctx, NULL,
                                                a1, q, k, v, AN, AT, AS, AD, w1, ws, &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(attend_attention_gradient(&cfg, &p, &o, &g, dq2, dk2, NULL, dctx, NULL, a2, q, k, v, AN, AT, AS, AD, w2, ws,
                                     &e) == ATTEND_OK, "%s", e.msg);
    EXPECT(!memcmp(dq1, dq2, sizeof dq1) && !memcmp(dk1, dk2, sizeof dk1), "gradient differs from backward_normalized");
    o.normalizer = (attend_normalizer)7;
    EXPECT(attend_attention_compute(&cfg, &p, &o, c2, a2, q, k, v, AN, AT, AS, AD, w2, ws, &e) == ATTEND_ERR_ARG,
           "an unknown normaliser accepted");
    printf("  attend_attention_compute/_gradient (sparsemax, a padding mask) = the _normalized forms, bit for bit\n");
    free(w1);
    free(w2);
}

int main(void) {
    RUN(test_forward_options);
    RUN(test_ensembles);
    RUN(test_rules);
    RUN(test_attention_options);
    return harness_summary();
}
