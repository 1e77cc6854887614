/*
 * sparse.c — the sparse attention normalisers in the model (the extension
 * "sparse", config key `normalizer`: sparsemax, Martins & Astudillo 2016, or
 * 1.5-entmax, Peters et al. 2019; the kernels are core/sparsemax.c): they turn
 * a step's scores into weights in place of the masked softmax, leaving exact
 * zeros, and their Jacobians carry the weights' gradient back to the scores.
 * For decoders with attention over a vocabulary (a pointer's weights are its
 * output distribution, trained by log-likelihood, which needs softmax), and
 * not with monotonic attention (which has its own weights).
 *
 * Dimension letters: see state.h.
 */
#include <stddef.h>

#include "seq2seq/extension.h"
#include "core/sparsemax.h"

static int attached(const attend_model_config *c) { return c->normalizer != ATTEND_NORMALIZER_SOFTMAX; }

/* rows always keep their valid positions (src_len >= 1 was checked) */
static int weights(attend_model *m, int t, int N, int S) {
    at_acts *a = &m->acts;
    attend_real *scores = a->scores + (size_t)t * N * S, *w = a->weights + (size_t)t * N * S;
    at_masked_normalize_forward((int)m->cfg.normalizer, w, scores, m->valid, NULL, 0, N, 1, S, 1);
    return 1;
}

static int weights_backward(attend_model *m, int t, int N, int S) {
    at_acts *a = &m->acts;
    const attend_real *w = a->weights + (size_t)t * N * S;
    at_normalize_backward((int)m->cfg.normalizer, a->dscores, a->dweights, w, (size_t)N, S);
    return 1;
}

static int feature_on(const char *f, const attend_model_config *c, const attend_train_options *t) {
    (void)f;
    (void)t;
    return c->normalizer != ATTEND_NORMALIZER_SOFTMAX;
}

static const char *name_of(int v) { return attend_normalizer_name((attend_normalizer)v); }

static const at_ext_key keys[] = {{"normalizer", offsetof(attend_model_config, normalizer), name_of,
                                   attend_normalizer_from_name, ATTEND_NORMALIZER_ENTMAX15,
                                   "softmax (0), sparsemax (1) or entmax15 (2)"}};

static const attend_feature_rule rules[] = {
    {"normalizer", ATTEND_RULE_ATTENTION, NULL, "{f} with {o}: there is no attention to normalise"},
    {"normalizer", ATTEND_RULE_VOCABULARY, NULL,
     "{f} with {o}: the pointer's weights are its output distribution, trained by log-likelihood, which needs "
     "softmax"},
    {"normalizer", ATTEND_RULE_EXCLUDES, "monotonic", "{f} with {o}: monotonic attention has its own (sigmoid) weights"},
};

const at_ext_ops at_ext_sparse = {
    .name = "sparse",
    .keys = keys,
    .nkeys = 1,
    .rules = rules,
    .nrules = 3,
    .feature_on = feature_on,
    .attached = attached,
    .weights = weights,
    .weights_backward = weights_backward,
};
