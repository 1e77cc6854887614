/*
 * adversarial.c — adversarial attention training (the extension
 * "adversarial", training option `adversarial` = λ > 0 with a reference
 * model, attend_forward_options.reference / attend_train_options.reference):
 * Wiegreffe & Pinter 2019's end-to-end adversary (§4). A teacher-forced
 * forward with the option on first runs the reference (the base model) on
 * the same batch (at_model_forward), and its loss is, in place of the
 * cross-entropy, over the counted steps (n,t):
 *
 *     L = (1/count) Σ_{n,t} [ TVD(p_nt, q_nt) − λ JSD(α_nt, β_nt) ]
 *
 * p, α this model's output distribution and attention weights, q, β the
 * reference's (TVD(p,q) = ½ Σ_v |p_v − q_v|; JSD in nats, at most ln 2):
 * the model learns to predict what the base predicts while attending
 * elsewhere. W&P write the push with KL(α‖β); the JSD is bounded, symmetric
 * and the divergence they (and attend_model_compare) report. Its gradients:
 *
 *     ∂TVD/∂logit_u = p_u (g_u − Σ_v p_v g_v),  g_v = ½ sign(p_v − q_v)
 *     ∂JSD/∂α_j     = ½ log(α_j / m_j),          m = (α + β)/2
 *
 * (a tie p_v = q_v takes g_v = 0; a weight α_j = 0 gets no gradient). The
 * reference's log-probabilities and weights are read in the backward too:
 * do not run the reference between this model's forward and its backward.
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "seq2seq/extension.h"
#include "seq2seq/decoders/decoder.h"

typedef struct {
    int on;        /* the last forward took the term */
    int N, S, T;   /* its batch */
    double tvd;    /* its Σ TVD over counted steps */
    double jsd;    /* its Σ JSD over counted steps */
} adv_state;

extern const at_ext_ops at_ext_adversarial;
static adv_state *st(const attend_model *m) { return at_ext_state(m, &at_ext_adversarial); }

static double lambda(const attend_model *m) { return m->run.o.adversarial; }

static attend_status check_reference(const attend_model *m, const attend_model *ref, const char *who,
                                     attend_error *err) {
    CHECK(ref, err, ATTEND_ERR_ARG, "%s: adversarial=%g needs a reference model (the base model)", who, lambda(m));
    CHECK(ref != m, err, ATTEND_ERR_ARG, "%s: adversarial: the reference model is this model", who);
    CHECK(ref->dec->attentive && ref->dec->vocabulary && !ref->cfg.copy, err, ATTEND_ERR_ARG,
          "%s: adversarial: the reference model (decoder %s%s) needs attention and a plain output vocabulary", who,
          ref->dec->name, ref->cfg.copy ? ", copy" : "");
    CHECK(ref->cfg.src_vocab == m->cfg.src_vocab && ref->cfg.tgt_vocab == m->cfg.tgt_vocab, err, ATTEND_ERR_ARG,
          "%s: adversarial: the reference model's vocabularies (%d source, %d target ids) are not this model's "
          "(%d, %d)",
          who, ref->cfg.src_vocab, ref->cfg.tgt_vocab, m->cfg.src_vocab, m->cfg.tgt_vocab);
    return ATTEND_OK;
}

static attend_status forward_begin(attend_model *m, const attend_batch *b, attend_error *err) {
    adv_state *s = st(m);
    s->on = 0;
    s->tvd = s->jsd = 0;
    if (!(lambda(m) > 0) || m->run.infer || m->run.scoring) return ATTEND_OK;
    TRY(check_reference(m, m->run.o.reference, "attend_forward", err));
    s->on = 1;
    s->N = b->N;
    s->S = b->S;
    s->T = b->T;
    return ATTEND_OK;
}

/* the reference's log-probabilities of step t of row n [V] */
static const attend_real *ref_row(const attend_model *m, int n, int t) {
    const adv_state *s = st(m);
    const attend_model *ref = m->run.o.reference;
    int width;
    return ref->dec->output_row(ref, n, t, s->N, s->S, s->T, &width);
}

/* TVD of step t of row n from this model's log-probabilities lp [width] */
static int token_loss(const attend_model *m, int n, int t, int T, const attend_real *lp, int width, int y,
                      double *loss, int *best) {
    (void)T;
    (void)y;
    adv_state *s = st(m);
    if (!s->on) return 0;
    const attend_real *lq = ref_row(m, n, t);
    double tvd = 0;
    for (int v = 0; v < width; v++) tvd += fabs(exp((double)lp[v]) - exp((double)lq[v]));
    tvd *= 0.5;
    s->tvd += tvd;
    *loss += tvd;
    int b = 0;
    for (int v = 1; v < width; v++)
        if (lp[v] > lp[b]) b = v;
    *best = b;
    return 1;
}

/* z [V]: this model's log-probabilities of step t of row n, turned into d L/d logits (inv = 1/count) */
static int token_grad(const attend_model *m, int n, int t, int N, attend_real *z, int V, int y, attend_real inv) {
    (void)N;
    (void)y;
    const adv_state *s = st(m);
    if (!s->on) return 0;
    const attend_real *lq = ref_row(m, n, t);
    /* forward: tvd = ½ Σ_v |p_v − q_v|, p = softmax(logits) */
    double c = 0;
    for (int v = 0; v < V; v++) {
        double p = exp((double)z[v]), q = exp((double)lq[v]);
        double g = p > q ? 0.5 : p < q ? -0.5 : 0;
        c += p * g;
    }
    for (int v = 0; v < V; v++) {
        double p = exp((double)z[v]), q = exp((double)lq[v]);
        double g = p > q ? 0.5 : p < q ? -0.5 : 0;
        z[v] = (attend_real)(p * (g - c) * (double)inv);
    }
    return 1;
}

/* JSD(a, b) in nats over S positions */
static double jsd(const attend_real *a, const attend_real *b, int S) {
    double d = 0;
    for (int j = 0; j < S; j++) {
        double p = (double)a[j], q = (double)b[j], mid = 0.5 * (p + q);
        if (p > 0) d += 0.5 * p * log(p / mid);
        if (q > 0) d += 0.5 * q * log(q / mid);
    }
    return d;
}

/* −λ Σ JSD over the counted steps */
static double loss(attend_model *m, int N, int S, int T) {
    adv_state *s = st(m);
    if (!s->on) return 0;
    const attend_real *w = m->acts.weights, *r = m->run.o.reference->acts.weights; /* [T,N,S] */
    double sum = 0;
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++)
            if (m->active[(size_t)t * N + n]) sum += jsd(w + ((size_t)t * N + n) * S, r + ((size_t)t * N + n) * S, S);
    s->jsd = sum;
    return -lambda(m) * sum;
}

/* step t: dweights [N,S] += −λ/count · ½ log(α/m) */
static void weights_grad(attend_model *m, int t, int N, int S) {
    const adv_state *s = st(m);
    if (!s->on) return;
    const attend_real *w = m->acts.weights + (size_t)t * N * S;
    const attend_real *r = m->run.o.reference->acts.weights + (size_t)t * N * S;
    double scale = -lambda(m) / m->fwd_count;
    for (int n = 0; n < N; n++) {
        if (!m->active[(size_t)t * N + n]) continue;
        for (int j = 0; j < S; j++) {
            double p = (double)w[(size_t)n * S + j], q = (double)r[(size_t)n * S + j];
            /* forward: jsd += ½ p log(p/mid) + ½ q log(q/mid), mid = (p+q)/2 */
            if (p > 0) m->acts.dweights[(size_t)n * S + j] += (attend_real)(scale * 0.5 * log(2 * p / (p + q)));
        }
    }
}

static int feature_on(const char *f, const attend_model_config *c, const attend_train_options *t) {
    (void)f;
    (void)c;
    return t && t->adversarial > 0;
}

static void step_options(attend_forward_options *f, const attend_train_options *t, uint64_t seed, long step) {
    (void)seed;
    (void)step;
    f->adversarial = t->adversarial;
    if (t->adversarial > 0) f->reference = t->reference;
}

static attend_status check_options(attend_model *m, const attend_train_options *t, const attend_dataset *d,
                                   const char *who, attend_error *err) {
    if (!(t->adversarial > 0)) return ATTEND_OK;
    /* a forward's options reach here without the pointer (at_ext_train_view): forward_begin checks it */
    if (!d && !t->reference) return ATTEND_OK;
    CHECK(t->reference, err, ATTEND_ERR_ARG, "%s: adversarial=%g needs a reference model (the base model)", who,
          t->adversarial);
    return check_reference(m, t->reference, who, err);
}

static const at_ext_option options[] = {
    {"adversarial", offsetof(attend_train_options, adversarial), offsetof(attend_forward_options, adversarial),
     HUGE_VAL, 0, 0, 0, 0},
};

static const attend_feature_rule rules[] = {
    {"adversarial", ATTEND_RULE_ATTENTION, NULL, "{f} with {o}: there is no attention to push away"},
    {"adversarial", ATTEND_RULE_VOCABULARY, NULL, "{f} with {o}: a pointer's attention is its output"},
    {"adversarial", ATTEND_RULE_EXCLUDES, "copy", "{f} with {o}: the extended vocabulary's TVD is not built"},
    {"adversarial", ATTEND_RULE_EXCLUDES, "normalizer",
     "{f} with {o}: the JSD's gradient is infinite at the exact zeros of a sparse normaliser"},
    {"adversarial", ATTEND_RULE_EXCLUDES, "monotonic",
     "{f} with {o}: monotonic weights need not sum to 1, the JSD needs distributions"},
    {"adversarial", ATTEND_RULE_EXCLUDES, "uniform_attention", "{f} with {o}: fixed weights cannot move"},
    {"adversarial", ATTEND_RULE_EXCLUDES, "frozen_attention", "{f} with {o}: given weights cannot move"},
    {"adversarial", ATTEND_RULE_EXCLUDES, "label_smoothing", "{f} with {o}: the loss is the TVD, not a cross-entropy"},
    {"adversarial", ATTEND_RULE_EXCLUDES, "guided_alignment",
     "{f} with {o}: the attention is pushed away from the base, not guided"},
    {"adversarial", ATTEND_RULE_EXCLUDES, "sampling_prob",
     "{f} with {o}: the reference runs teacher-forced, on the reference's inputs"},
};

const at_ext_ops at_ext_adversarial = {
    .name = "adversarial",
    .state_size = sizeof(adv_state),
    .options = options,
    .noptions = 1,
    .rules = rules,
    .nrules = (int)(sizeof rules / sizeof rules[0]),
    .feature_on = feature_on,
    .step_options = step_options,
    .check_options = check_options,
    .forward_begin = forward_begin,
    .token_loss = token_loss,
    .token_grad = token_grad,
    .loss = loss,
    .weights_grad = weights_grad,
};

double attend_model_adversarial_jsd(const attend_model *m) {
    const adv_state *s = m ? st(m) : NULL;
    return s && s->on && m->fwd_count > 0 ? s->jsd / m->fwd_count : 0;
}
