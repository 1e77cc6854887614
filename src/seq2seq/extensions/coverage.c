/*
 * coverage.c — coverage (the extension "coverage"; Tu et al. 2016, "Modeling
 * Coverage for Neural Machine Translation"; See et al. 2017, "Get To The
 * Point"; Wu et al. 2016 for the beam's penalty):
 *
 *   the coverage vector  cov_t = Σ_{t'<t} α_t'  [N,S] (cov_0 = 0), kept per
 *                        step in cov [T+1,N,S] and, in beam search,
 *                        reordered with the hypotheses;
 *   the coverage input   (config coverage) e_tj = vᵀ tanh(Wq q_t + Wk h_j + b +
 *                        w_cov cov_tj), the score of core/coverage.c, tensor
 *                        attention.w_cov [A];
 *   the coverage loss    (training option coverage_loss = λ > 0)
 *                        λ Σ_t Σ_j min(α_tj, cov_tj) over the counted steps,
 *                        divided by the counted tokens like the cross-entropy;
 *   the beam's penalty   (attend_decode_options.coverage_penalty β) a finished
 *                        hypothesis's score gains β Σ_j log(min(Σ_t α_tj, 1)).
 *
 * Backward runs over the steps from last to first with a running gradient
 * dcov [N,S] = ∂L/∂cov summed over the later steps: since cov_t sums every
 * earlier α, step t's weights receive it (dα_t += dcov), and then step t's own
 * ∂L/∂cov_t (from the score input and the loss) joins the sum. torch.min's
 * rule at ties (α == cov, e.g. masked positions): half to each.
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "seq2seq/extension.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/linear.h"
#include "core/coverage.h"

typedef struct {
    attend_real *wcov[2]; /* attention.w_cov [A] (config coverage): parameters, gradients */
    attend_real *cov;     /* [T+1,N,S] cov_t */
    attend_real *dcov;    /* [N,S] ∂L/∂cov summed over later steps */
} cov_state;

static cov_state *st(const attend_model *m) {
    extern const at_ext_ops at_ext_coverage;
    return at_ext_state(m, &at_ext_coverage);
}

/* The pass keeps the coverage vectors: the config's coverage input, or a coverage loss outside decoding. */
static int cov_on(const attend_model *m) {
    return m->cfg.coverage || (m->run.o.coverage_loss > 0 && !m->run.infer);
}

static double lambda(const attend_model *m) { return m->run.infer ? 0 : m->run.o.coverage_loss; }

static int attached(const attend_model_config *c) { return at_decoders[c->decoder]->attentive; }

static void layout_params(at_param_layout *L, int where) {
    const attend_model_config *c = &L->m->cfg;
    if (where != AT_PARAMS_ATTENTION || !c->coverage) return;
    /* nn.Linear(1, A)'s weight: fan_in 1 */
    at_param_add_init(L, at_param_slot(L, st(L->m)->wcov), "attention.w_cov", c->attn, 0, AT_INIT_UNIFORM, 1.0);
}

static void layout_acts(attend_model *m, at_act_layout *L) {
    cov_state *s = st(m);
    size_t N = (size_t)m->cfg.max_batch, S = (size_t)m->cfg.max_src_len, T = (size_t)m->Tcap;
    s->cov = at_act_take(L, (T + 1) * N * S);
    s->dcov = at_act_take(L, N * S);
    /* the coverage input: cov_{t+1} rows follow their hypotheses in a beam */
    if (m->cfg.coverage) at_act_rows(L, s->cov, sizeof(attend_real), 1, AT_ROWS_STEPS);
}

static int scores(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *sc, attend_real *saved) {
    if (!m->cfg.coverage) return 0;
    cov_state *s = st(m);
    attend_real *cov = s->cov + (size_t)t * N * S;
    if (t == 0) memset(cov, 0, (size_t)N * S * sizeof *cov); /* cov_0 = 0 */
    attend_score_params sp = at_model_score_params(&m->p);
    const at_score_packs wq = at_model_score_packs(m, N);
    at_coverage_scores_forward(&m->score, &sp, s->wcov[0], sc, saved, q, m->acts.kp, cov, N, 1, S, !m->run.infer, &wq);
    return 1;
}

static int scores_backward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *dq,
                           attend_real *saved) {
    if (!m->cfg.coverage) return 0;
    cov_state *s = st(m);
    at_acts *a = &m->acts;
    attend_score_params sp = at_model_score_params(&m->p);
    attend_score_grads sg = at_model_score_grads(&m->g);
    const at_score_packs wq = at_model_score_packs(m, N);
    /* ∂L/∂cov_t joins the running sum dcov (used by the earlier steps) */
    at_coverage_scores_backward(&m->score, &sp, &sg, s->wcov[0], s->wcov[1], dq, a->dkp, s->dcov, a->dscores, saved, q,
                                s->cov + (size_t)t * N * S, N, 1, S, &wq);
    return 1;
}

/* cov_{t+1} = cov_t + α_t (after the weight hook) */
static void weights_after(attend_model *m, int t, int N, int S) {
    if (!cov_on(m)) return;
    cov_state *s = st(m);
    attend_real *prev = s->cov + (size_t)t * N * S, *next = prev + (size_t)N * S;
    const attend_real *w = m->acts.weights + (size_t)t * N * S;
    if (t == 0) memset(prev, 0, (size_t)N * S * sizeof *prev);
    for (size_t i = 0; i < (size_t)N * S; i++) next[i] = prev[i] + w[i];
}

/* λ Σ min(α_tj, cov_tj) over the counted steps (m->active) of the last forward's T steps */
static double loss(attend_model *m, int N, int S, int T) {
    if (!(lambda(m) > 0)) return 0;
    cov_state *s = st(m);
    const at_acts *a = &m->acts;
    double sum = 0;
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            if (!m->active[(size_t)t * N + n]) continue;
            const attend_real *w = a->weights + ((size_t)t * N + n) * S, *c = s->cov + ((size_t)t * N + n) * S;
            for (int j = 0; j < S; j++) sum += (double)(w[j] < c[j] ? w[j] : c[j]);
        }
    return lambda(m) * sum;
}

/* Backward of step t's weights: dweights += the running ∂L/∂cov of the
 * later steps (zeroed at the last step) and the loss's ∂/∂α_t; the loss's
 * ∂/∂cov_t joins dcov. After the context's backward, before the normaliser's. */
static void weights_grad(attend_model *m, int t, int N, int S) {
    if (!cov_on(m)) return;
    cov_state *s = st(m);
    at_acts *a = &m->acts;
    if (t == m->fwd_T - 1) memset(s->dcov, 0, (size_t)N * S * sizeof *s->dcov); /* the last step: nothing later */
    /* cov_{t'} for t' > t sums α_t: their gradients, summed, reach α_t */
    for (size_t i = 0; i < (size_t)N * S; i++) a->dweights[i] += s->dcov[i];
    if (!(lambda(m) > 0)) return;
    /* forward: loss += (λ/count) Σ_j min(α_tj, cov_tj) on counted steps */
    attend_real g = (attend_real)(lambda(m) / m->fwd_count), half = g / 2;
    const attend_real *w = a->weights + (size_t)t * N * S, *c = s->cov + (size_t)t * N * S;
    const uint8_t *active = m->active + (size_t)t * N;
    for (int n = 0; n < N; n++) {
        if (!active[n]) continue;
        for (int j = 0; j < S; j++) {
            size_t i = (size_t)n * S + j;
            if (w[i] < c[i]) a->dweights[i] += g;
            else if (w[i] > c[i]) s->dcov[i] += g;
            else {
                a->dweights[i] += half;
                s->dcov[i] += half;
            }
        }
    }
}

/* Wu et al. 2016 (eq. 14): β Σ_j log(min(Σ_t α_tj, 1)) over a hypothesis's
 * attention history hist [steps,S] and, when last != NULL, one more step
 * last [S]; the sum is floored at 1e-12 inside the log. */
static double hyp_score(const attend_decode_options *o, const attend_real *hist, int steps, const attend_real *last,
                        int S) {
    double beta = o->coverage_penalty;
    if (beta == 0) return 0;
    double cp = 0;
    for (int j = 0; j < S; j++) {
        double c = last ? (double)last[j] : 0;
        for (int t = 0; t < steps; t++) c += (double)hist[(size_t)t * S + j];
        cp += log(c < 1e-12 ? 1e-12 : c > 1 ? 1 : c);
    }
    return beta * cp;
}

static attend_status check_decode(attend_model *const *models, int M, const attend_decode_options *o, const char *who,
                                  attend_error *err) {
    double beta = o->coverage_penalty;
    CHECK(isfinite(beta) && beta >= 0, err, ATTEND_ERR_ARG, "%s: coverage_penalty=%g must be >= 0", who, beta);
    CHECK(beta == 0 || o->beam > 0, err, ATTEND_ERR_ARG,
          "%s: coverage_penalty=%g is an option of beam search (beam=0 is greedy)", who, beta);
    for (int k = 0; k < M && beta > 0; k++)
        CHECK(at_decoders[models[k]->cfg.decoder]->attentive, err, ATTEND_ERR_ARG,
              "%s: coverage_penalty=%g with decoder %s, which has no attention", who, beta,
              attend_decoder_name(models[k]->cfg.decoder));
    return ATTEND_OK;
}

static int feature_on(const char *f, const attend_model_config *c, const attend_train_options *t) {
    if (!strcmp(f, "coverage")) return c->coverage != 0;
    return t && t->coverage_loss > 0;
}

static void step_options(attend_forward_options *f, const attend_train_options *t, uint64_t seed, long step) {
    (void)seed;
    (void)step;
    f->coverage_loss = t->coverage_loss;
}

static const at_ext_key keys[] = {{"coverage", offsetof(attend_model_config, coverage), NULL, NULL, 1, NULL}};

static const at_ext_option options[] = {
    {"coverage_loss", offsetof(attend_train_options, coverage_loss), offsetof(attend_forward_options, coverage_loss),
     HUGE_VAL, 0, 0, 1, 0},
};

static const attend_feature_rule rules[] = {
    {"coverage", ATTEND_RULE_ATTENTION, NULL, "{f} with {o}: coverage needs attention (bahdanau or luong)"},
    {"coverage", ATTEND_RULE_VOCABULARY, NULL,
     "{f} with {o}: coverage needs a decoder with attention over a vocabulary (bahdanau, luong)"},
    {"coverage", ATTEND_RULE_ADDITIVE, NULL,
     "coverage needs attention with the additive score, of which it is an input ({f} with {o})"},
    {"coverage_loss", ATTEND_RULE_ATTENTION, NULL,
     "{f} with {o}: the coverage loss needs a decoder with attention over a vocabulary (bahdanau, luong)"},
    {"coverage_loss", ATTEND_RULE_VOCABULARY, NULL,
     "{f} with {o}: the coverage loss needs a decoder with attention over a vocabulary (bahdanau, luong)"},
};

const at_ext_ops at_ext_coverage = {
    .name = "coverage",
    .state_size = sizeof(cov_state),
    .keys = keys,
    .nkeys = 1,
    .options = options,
    .noptions = 1,
    .rules = rules,
    .nrules = 5,
    .feature_on = feature_on,
    .attached = attached,
    .step_options = step_options,
    .layout_params = layout_params,
    .layout_acts = layout_acts,
    .scores = scores,
    .scores_backward = scores_backward,
    .weights_after = weights_after,
    .weights_grad = weights_grad,
    .loss = loss,
    .hyp_score = hyp_score,
    .check_decode = check_decode,
};

attend_status attend_model_set_coverage_loss(attend_model *m, double lam, attend_error *err) {
    const char *who = "attend_model_set_coverage_loss";
    CHECK(m, err, ATTEND_ERR_NULL, "%s: model is NULL", who);
    CHECK(isfinite(lam) && lam >= 0, err, ATTEND_ERR_ARG, "%s: lambda=%g, must be finite and >= 0", who, lam);
    attend_train_options t;
    memset(&t, 0, sizeof t);
    t.coverage_loss = lam;
    int broken = at_ext_rule_broken(&m->cfg, &t);
    if (broken >= 0) return at_ext_rule_fail(&m->cfg, broken, who, err);
    m->defaults.coverage_loss = lam;
    m->fwd_ready = 0;
    return at_ok(err);
}

double attend_model_coverage_loss(const attend_model *m) { return m ? m->defaults.coverage_loss : 0; }
