/*
 * uniform.c — uniform attention (the extension "uniform", config flag
 * `uniform_attention`): every step's weights are 1/len over the row's source
 * positions (0 on padding), whatever the query, in training, evaluation and
 * decoding alike. Wiegreffe & Pinter 2019 ("Attention is not not
 * Explanation", §3.1) train such a model as the baseline of the question
 * "does attention matter for this task?": when a model whose context is the
 * plain mean of the encoder states does as well, its learned attention cannot
 * be what the output depends on. The weights are constants: no score is
 * computed (the score tensors stay as created, in the file, unused) and no
 * gradient reaches them. Not to be confused with `attend intervene`'s
 * "uniform" intervention, which swaps uniform weights into a model trained
 * with attention, at test time only.
 *
 * Dimension letters: see state.h.
 */
#include <stddef.h>
#include <string.h>

#include "seq2seq/extension.h"

static int attached(const attend_model_config *c) { return c->uniform_attention != 0; }

/* no scores: the weights below ignore them (zeros, for whoever reads the buffer) */
static int scores(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *out, attend_real *saved) {
    (void)m;
    (void)t;
    (void)q;
    (void)saved;
    memset(out, 0, (size_t)N * S * sizeof *out);
    return 1;
}

static int scores_backward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *dq,
                           attend_real *saved) {
    (void)m, (void)t, (void)N, (void)S, (void)q, (void)dq, (void)saved;
    return 1; /* nothing to carry back: the scores were not used */
}

/* w [N,S] = 1/len_n over row n's valid positions (valid [N,S]; every row has one: src_len >= 1) */
static int weights(attend_model *m, int t, int N, int S) {
    attend_real *w = m->acts.weights + (size_t)t * N * S;
    for (int n = 0; n < N; n++) {
        const uint8_t *v = m->valid + (size_t)n * S;
        int k = 0;
        for (int j = 0; j < S; j++) k += v[j] != 0;
        attend_real u = (attend_real)1 / (attend_real)(k ? k : 1);
        for (int j = 0; j < S; j++) w[(size_t)n * S + j] = v[j] ? u : 0;
    }
    return 1;
}

/* constants: dscores stays zero */
static int weights_backward(attend_model *m, int t, int N, int S) {
    (void)m, (void)t, (void)N, (void)S;
    return 1;
}

static int feature_on(const char *f, const attend_model_config *c, const attend_train_options *t) {
    (void)f;
    (void)t;
    return c->uniform_attention != 0;
}

static const at_ext_key keys[] = {
    {"uniform_attention", offsetof(attend_model_config, uniform_attention), NULL, NULL, 1, NULL}};

static const attend_feature_rule rules[] = {
    {"uniform_attention", ATTEND_RULE_ATTENTION, NULL, "{f} with {o}: there are no attention weights to fix"},
    {"uniform_attention", ATTEND_RULE_VOCABULARY, NULL,
     "{f} with {o}: a pointer's attention is its output distribution"},
    {"uniform_attention", ATTEND_RULE_EXCLUDES, "normalizer", "{f} with {o}: uniform weights need no normaliser"},
    {"uniform_attention", ATTEND_RULE_EXCLUDES, "monotonic", "{f} with {o}: the weights are either uniform or monotonic"},
    {"uniform_attention", ATTEND_RULE_EXCLUDES, "coverage",
     "{f} with {o}: coverage feeds scores that uniform weights ignore"},
    {"uniform_attention", ATTEND_RULE_EXCLUDES, "copy",
     "{f} with {o}: a uniform copy distribution is not a baseline of anything"},
    {"uniform_attention", ATTEND_RULE_EXCLUDES, "guided_alignment",
     "{f} with {o}: fixed weights cannot be guided"},
    {"uniform_attention", ATTEND_RULE_EXCLUDES, "coverage_loss", "{f} with {o}: fixed weights cannot learn coverage"},
};

const at_ext_ops at_ext_uniform = {
    .name = "uniform",
    .keys = keys,
    .nkeys = 1,
    .rules = rules,
    .nrules = (int)(sizeof rules / sizeof rules[0]),
    .feature_on = feature_on,
    .attached = attached,
    .scores = scores,
    .scores_backward = scores_backward,
    .weights = weights,
    .weights_backward = weights_backward,
};
