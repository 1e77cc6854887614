/*
 * frozen.c — attention given by another model (the extension "frozen",
 * training option `frozen_attention` = 1 with a reference model,
 * attend_forward_options.reference / attend_train_options.reference):
 * Wiegreffe & Pinter 2019's diagnostic transfer (§3.3). A teacher-forced
 * forward with the option on first runs the reference model's own
 * teacher-forced forward on the same batch (at_model_forward), then uses, at
 * every step t, the reference's weights of step t [N,S] in place of its own:
 * no score is computed, the weights are constants (no gradient reaches the
 * score tensors). A model trained so learns to use the reference's attention
 * as given: how well it then does says how much usable information that
 * attention carries (W&P: "frozen weights from pretrained models"; their
 * diagnostic is an MLP, here it is the model's own decoder, so its encoder
 * and recurrence still see the whole source).
 *
 * Only teacher-forced passes take it: decoding (greedy, beam), forced
 * scoring and the analyses run the model's own attention; evaluate such a
 * model teacher-forced with the option (attend_model_compare).
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "seq2seq/extension.h"
#include "seq2seq/decoders/decoder.h"

/* the pass takes the reference's weights (at_model_forward ran the reference first) */
static int on(const attend_model *m) {
    return !m->run.infer && !m->run.scoring && m->run.o.frozen_attention > 0 && m->run.o.reference;
}

static attend_status check_reference(const attend_model *m, const attend_model *ref, const char *who,
                                     attend_error *err) {
    CHECK(ref, err, ATTEND_ERR_ARG, "%s: frozen_attention=1 needs a reference model (the attention's source)", who);
    CHECK(ref != m, err, ATTEND_ERR_ARG, "%s: frozen_attention: the reference model is this model", who);
    CHECK(ref->dec->attentive, err, ATTEND_ERR_ARG,
          "%s: frozen_attention: the reference model's decoder %s has no attention weights", who, ref->dec->name);
    CHECK(ref->cfg.src_vocab == m->cfg.src_vocab && ref->cfg.tgt_vocab == m->cfg.tgt_vocab, err, ATTEND_ERR_ARG,
          "%s: frozen_attention: the reference model's vocabularies (%d source, %d target ids) are not this model's "
          "(%d, %d)",
          who, ref->cfg.src_vocab, ref->cfg.tgt_vocab, m->cfg.src_vocab, m->cfg.tgt_vocab);
    return ATTEND_OK;
}

static attend_status forward_begin(attend_model *m, const attend_batch *b, attend_error *err) {
    (void)b;
    if (!(m->run.o.frozen_attention > 0) || m->run.infer || m->run.scoring) return ATTEND_OK;
    CHECK(m->run.o.frozen_attention == 1, err, ATTEND_ERR_ARG, "attend_forward: frozen_attention=%g, must be 0 or 1",
          m->run.o.frozen_attention);
    return check_reference(m, m->run.o.reference, "attend_forward", err);
}

/* no scores: the weights below replace them */
static int scores(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *out, attend_real *saved) {
    (void)t;
    (void)q;
    (void)saved;
    if (!on(m)) return 0;
    memset(out, 0, (size_t)N * S * sizeof *out);
    return 1;
}

static int scores_backward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *dq,
                           attend_real *saved) {
    (void)t, (void)N, (void)S, (void)q, (void)dq, (void)saved;
    return on(m);
}

/* step t's weights [N,S]: the reference's of the same step of the same batch */
static int weights(attend_model *m, int t, int N, int S) {
    if (!on(m)) return 0;
    const attend_model *ref = m->run.o.reference;
    memcpy(m->acts.weights + (size_t)t * N * S, ref->acts.weights + (size_t)t * N * S,
           (size_t)N * S * sizeof(attend_real));
    return 1;
}

static int weights_backward(attend_model *m, int t, int N, int S) {
    (void)t, (void)N, (void)S;
    return on(m); /* constants: dscores stays zero */
}

static int feature_on(const char *f, const attend_model_config *c, const attend_train_options *t) {
    (void)f;
    (void)c;
    return t && t->frozen_attention > 0;
}

static void step_options(attend_forward_options *f, const attend_train_options *t, uint64_t seed, long step) {
    (void)seed;
    (void)step;
    f->frozen_attention = t->frozen_attention;
    if (t->frozen_attention > 0) f->reference = t->reference;
}

static attend_status check_options(attend_model *m, const attend_train_options *t, const attend_dataset *d,
                                   const char *who, attend_error *err) {
    (void)d;
    if (!(t->frozen_attention > 0)) return ATTEND_OK;
    CHECK(t->frozen_attention == 1, err, ATTEND_ERR_ARG, "%s: frozen_attention=%g, must be 0 or 1", who,
          t->frozen_attention);
    /* a forward's options reach here without the pointer (at_ext_train_view): forward_begin checks it */
    if (!d && !t->reference) return ATTEND_OK;
    return check_reference(m, t->reference, who, err);
}

static const at_ext_option options[] = {
    {"frozen_attention", offsetof(attend_train_options, frozen_attention),
     offsetof(attend_forward_options, frozen_attention), 1, 0, 0, 0, 0},
};

static const attend_feature_rule rules[] = {
    {"frozen_attention", ATTEND_RULE_ATTENTION, NULL, "{f} with {o}: there are no attention weights to replace"},
    {"frozen_attention", ATTEND_RULE_VOCABULARY, NULL, "{f} with {o}: a pointer's attention is its output"},
    {"frozen_attention", ATTEND_RULE_EXCLUDES, "normalizer", "{f} with {o}: the given weights need no normaliser"},
    {"frozen_attention", ATTEND_RULE_EXCLUDES, "monotonic", "{f} with {o}: the weights are either given or monotonic"},
    {"frozen_attention", ATTEND_RULE_EXCLUDES, "coverage",
     "{f} with {o}: coverage feeds scores that given weights ignore"},
    {"frozen_attention", ATTEND_RULE_EXCLUDES, "copy", "{f} with {o}: a copy distribution given by another model is not built"},
    {"frozen_attention", ATTEND_RULE_EXCLUDES, "uniform_attention", "{f} with {o}: the weights are fixed already"},
    {"frozen_attention", ATTEND_RULE_EXCLUDES, "guided_alignment", "{f} with {o}: given weights cannot be guided"},
    {"frozen_attention", ATTEND_RULE_EXCLUDES, "coverage_loss", "{f} with {o}: given weights cannot learn coverage"},
    {"frozen_attention", ATTEND_RULE_EXCLUDES, "sampling_prob",
     "{f} with {o}: the reference runs teacher-forced, on the reference's inputs"},
};

const at_ext_ops at_ext_frozen = {
    .name = "frozen",
    .options = options,
    .noptions = 1,
    .rules = rules,
    .nrules = (int)(sizeof rules / sizeof rules[0]),
    .feature_on = feature_on,
    .step_options = step_options,
    .check_options = check_options,
    .forward_begin = forward_begin,
    .scores = scores,
    .scores_backward = scores_backward,
    .weights = weights,
    .weights_backward = weights_backward,
};
