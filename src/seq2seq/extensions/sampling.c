/*
 * sampling.c — scheduled sampling (Bengio et al. 2015) in the teacher-forced
 * forward (the extension "sampling"; training options `sampling_prob` p and
 * `sampling_ramp`): at training step k each decoder input y_{t-1} (t >= 1) of
 * each row is, with probability p_k, replaced by the model's own argmax
 * prediction of step t-1, made in the same forward (the decoders'
 * teacher-forced forward is already step by step). The schedule is a linear
 * ramp, p_k = p * min(1, k / ramp) (ramp 0: p throughout). The choice is a
 * counter-based hash of (seed, k, the row's index within the step's whole
 * batch, t), not a stream of random numbers: the same for a seed, the same
 * after resuming (nothing to save) and the same however the batch is cut into
 * gradient shards. No gradient flows through the argmax (the chosen token is
 * an input like the reference). Token decoders only, and not with copy (the
 * rules): with a pointer's exclusion mask a fed-back wrong position would mask
 * a later target position, making the loss infinite.
 *
 * Dimension letters: see state.h.
 */
#include <stddef.h>
#include <string.h>

#include "seq2seq/extension.h"
#include "seq2seq/linear.h"

/* splitmix64's finalizer: a bijection of 64 bits that mixes well */
static uint64_t mix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The probability at trainer step `step` (0-based): p * min(1, step / ramp) (ramp 0: p from the start). */
static double ramp_prob(double p, long ramp, long step) {
    if (ramp <= 0 || step >= ramp) return p;
    return p * (double)step / (double)ramp;
}

/* a uniform in [0,1) from (key, row, t) */
static double ss_uniform(uint64_t key, long row, int t) {
    uint64_t z = mix64(mix64(key ^ mix64((uint64_t)row)) ^ (uint64_t)t);
    return (double)(z >> 11) * 0x1.0p-53;
}

/* row n samples at step t */
static int takes(const attend_model *m, int n, int t) {
    return t < m->fwd_tgt_len[n] && ss_uniform(m->run.o.sampling_key, m->run.o.row0 + n, t) < m->run.o.sampling_prob;
}

static int feeds(const attend_model *m) { return !m->run.infer && m->run.o.sampling_prob > 0; }

/* Before step t >= 1 of N rows (T steps): rows that take a sample and are
 * still active get as input fwd_tgt_in[t][n] the argmax of step t-1's
 * logits (features feat, row n at + n*T*F + (t-1)*F) instead of the reference. */
static void feed(attend_model *m, int t, int N, int T) {
    if (!feeds(m) || t < 1) return;
    at_acts *a = &m->acts;
    int F = m->F, V = m->cfg.tgt_vocab, r = 0;
    for (int n = 0; n < N; n++) /* step_feat [r,F]: the sampling rows' features of step t-1 */
        if (takes(m, n, t))
            memcpy(a->step_feat + (size_t)r++ * F, a->feat + ((size_t)n * T + (t - 1)) * F, (size_t)F * sizeof(attend_real));
    if (!r) return;
    /* logits [r,V] = feat W_oᵀ + b_o; the argmax as greedy takes it (the first maximum) */
    at_model_linear(m, r, V, F, a->step_feat, F, m->p.out_w, F, 0, a->step_logits, V);
    for (int n = 0, i = 0; n < N; n++) {
        if (!takes(m, n, t)) continue;
        attend_real *z = a->step_logits + (size_t)i++ * V;
        int best = 0;
        for (int v = 0; v < V; v++) z[v] += m->p.out_b[v];
        for (int v = 1; v < V; v++)
            if (z[v] > z[best]) best = v;
        m->fwd_tgt_in[(size_t)t * N + n] = best;
    }
}

static int feature_on(const char *f, const attend_model_config *c, const attend_train_options *t) {
    (void)f;
    (void)c;
    return t && t->sampling_prob > 0;
}

static void step_options(attend_forward_options *f, const attend_train_options *t, uint64_t seed, long step) {
    f->sampling_prob = ramp_prob(t->sampling_prob, t->sampling_ramp, step);
    f->sampling_key = mix64(mix64(seed) ^ (uint64_t)step);
}

static const at_ext_option options[] = {
    {"sampling_prob", offsetof(attend_train_options, sampling_prob), offsetof(attend_forward_options, sampling_prob), 1,
     0, 0, 0, 0},
    {"sampling_ramp", offsetof(attend_train_options, sampling_ramp), AT_NO_FIELD, 0, 0, 1, 0, 0},
};

static const attend_feature_rule rules[] = {
    {"sampling_prob", ATTEND_RULE_VOCABULARY, NULL,
     "{f} with {o}: scheduled sampling feeds back predicted tokens (a fed-back position would mask a later target "
     "position)"},
    {"sampling_prob", ATTEND_RULE_EXCLUDES, "copy", "{f} with {o}: feeding back copied ids is not built"},
};

const at_ext_ops at_ext_sampling = {
    .name = "sampling",
    .options = options,
    .noptions = 2,
    .rules = rules,
    .nrules = 2,
    .feature_on = feature_on,
    .step_options = step_options,
    .feeds = feeds,
    .feed = feed,
};
