/*
 * guide.c — guided alignment (the extension "guide", training option
 * `guided_alignment` λ; Chen et al. 2016, "Guided Alignment Training for
 * Topic-Aware Neural Machine Translation"; Marian's --guided-alignment with
 * the "ce" cost): a cross-entropy between the attention weights and word
 * alignments given with the data (attend_batch.align), added to the
 * teacher-forced loss.
 *
 * For row n and decoder step t (predicting target token t) with k >= 1
 * aligned source positions, the reference a_nt is uniform over them and
 *     term_nt = −Σ_s a_nts log(α_nts + ε),   ε = AT_GUIDE_EPS (Marian's 1e-6),
 * α_nt the step's attention weights. The loss gains λ/count Σ_{n,t} term_nt,
 * count being the counted target tokens (the cross-entropy's divisor), and its
 * gradient reaches the attention weights (then the normaliser and the scores)
 * in the decoder's attention backward: dα_nts += −λ/count · a_nts/(α_nts + ε).
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "seq2seq/extension.h"
#include "seq2seq/decoders/decoder.h"

#define AT_GUIDE_EPS 1e-6

typedef struct {
    uint8_t *ref;  /* [Tcap,max_batch,max_src_len] capacity; the forward's [T,N,S]: 1 = aligned
                      (allocated when a λ > 0 is first asked for) */
    int on;        /* the last forward added the term (λ > 0 and the batch had alignments) */
    double sum;    /* its Σ over steps of −Σ_s a_ts log(α_ts + ε), before λ and the 1/count */
} guide_state;

extern const at_ext_ops at_ext_guide;
static guide_state *st(const attend_model *m) { return at_ext_state(m, &at_ext_guide); }

static double lambda(const attend_model *m) { return m->run.infer ? 0 : m->run.o.guided_alignment; }

/* the alignment mask, allocated the first time a λ > 0 needs it */
static attend_status prepare(attend_model *m, const char *who, attend_error *err) {
    guide_state *s = st(m);
    if (s->ref) return ATTEND_OK;
    size_t bytes = (size_t)m->Tcap * (size_t)m->cfg.max_batch * (size_t)m->cfg.max_src_len; /* bounded by the
                                                                                              config check */
    s->ref = calloc(bytes, 1);
    CHECK(s->ref, err, ATTEND_ERR_ALLOC, "%s: out of memory for an alignment mask of %zu bytes", who, bytes);
    return ATTEND_OK;
}

static void release(attend_model *m) {
    guide_state *s = st(m);
    free(s->ref);
    s->ref = NULL;
}

/* Before the steps of a teacher-forced forward: checks b->align against the
 * batch (λ > 0 and b->align != NULL) and keeps it; `on` says whether it did. */
static attend_status forward_begin(attend_model *m, const attend_batch *b, attend_error *err) {
    guide_state *s = st(m);
    s->on = 0;
    s->sum = 0;
    if (!(lambda(m) > 0) || !b->align) return ATTEND_OK;
    TRY(prepare(m, "attend_model_forward", err));
    int N = b->N, S = b->S, T = b->T;
    for (int n = 0; n < N; n++)
        for (int t = 0; t < T; t++) {
            const uint8_t *row = b->align + ((size_t)n * T + t) * S; /* [N,T,S] */
            uint8_t *ref = s->ref + ((size_t)t * N + n) * S;        /* [T,N,S] */
            for (int j = 0; j < S; j++) {
                CHECK(!row[j] || (t < b->tgt_len[n] && j < b->src_len[n]), err, ATTEND_ERR_ARG,
                      "attend_model_forward: row %d step %d: alignment to source position %d outside the row's %d "
                      "source positions and %d steps", n, t, j, (int)b->src_len[n], (int)b->tgt_len[n]);
                ref[j] = row[j] != 0;
            }
        }
    s->on = 1;
    return ATTEND_OK;
}

/* After the steps of a batch of N rows, S positions, T steps: λ times the term's sum */
static double loss(attend_model *m, int N, int S, int T) {
    guide_state *s = st(m);
    if (!s->on) return m->run.o.guided_alignment * 0;
    const attend_real *w = m->acts.weights; /* [T,N,S] */
    double sum = 0;
    for (size_t r = 0; r < (size_t)T * N; r++) {
        const uint8_t *ref = s->ref + r * S;
        int k = 0;
        double row = 0;
        for (int j = 0; j < S; j++)
            if (ref[j]) {
                k++;
                row -= log((double)w[r * S + j] + AT_GUIDE_EPS);
            }
        if (k) sum += row / k;
    }
    s->sum = sum;
    return m->run.o.guided_alignment * sum;
}

/* In step t's attention backward: dweights [N,S] += λ/count · d(term)/dα. */
static void weights_grad(attend_model *m, int t, int N, int S) {
    const guide_state *s = st(m);
    if (!s->on) return;
    const attend_real *w = m->acts.weights + (size_t)t * N * S; /* [N,S] */
    const uint8_t *ref = s->ref + (size_t)t * N * S;           /* [N,S] */
    attend_real *dweights = m->acts.dweights;
    double scale = m->run.o.guided_alignment / m->fwd_count;
    for (int n = 0; n < N; n++) {
        int k = 0;
        for (int j = 0; j < S; j++) k += ref[(size_t)n * S + j];
        if (!k) continue;
        /* forward: term = −(1/k) Σ_{s aligned} log(α_s + ε), times λ/count */
        for (int j = 0; j < S; j++)
            if (ref[(size_t)n * S + j])
                dweights[(size_t)n * S + j] -= (attend_real)(scale / (k * ((double)w[(size_t)n * S + j] + AT_GUIDE_EPS)));
    }
}

static int feature_on(const char *f, const attend_model_config *c, const attend_train_options *t) {
    (void)f;
    (void)c;
    return t && t->guided_alignment > 0;
}

static void step_options(attend_forward_options *f, const attend_train_options *t, uint64_t seed, long step) {
    (void)seed;
    (void)step;
    f->guided_alignment = t->guided_alignment;
}

static attend_status check_options(attend_model *m, const attend_train_options *t, const attend_dataset *d,
                                   const char *who, attend_error *err) {
    if (!(t->guided_alignment > 0)) return ATTEND_OK;
    CHECK(!d || attend_dataset_aligned_pairs(d) > 0, err, ATTEND_ERR_ARG,
          "%s: guided_alignment=%g, but the training data carries no alignments (a TSV's third column of i-j links)",
          who, t->guided_alignment);
    return prepare(m, who, err);
}

static const at_ext_option options[] = {
    {"guided_alignment", offsetof(attend_train_options, guided_alignment),
     offsetof(attend_forward_options, guided_alignment), HUGE_VAL, 0, 0, 1, 1},
};

static const attend_feature_rule rules[] = {
    {"guided_alignment", ATTEND_RULE_ATTENTION, NULL, "{f} with {o}: it has no attention to guide"},
    {"guided_alignment", ATTEND_RULE_VOCABULARY, NULL,
     "{f} with {o}: a pointer's attention is its output distribution, which the target positions train already"},
};

const at_ext_ops at_ext_guide = {
    .name = "guide",
    .state_size = sizeof(guide_state),
    .options = options,
    .noptions = 1,
    .rules = rules,
    .nrules = 2,
    .feature_on = feature_on,
    .step_options = step_options,
    .check_options = check_options,
    .release = release,
    .forward_begin = forward_begin,
    .loss = loss,
    .weights_grad = weights_grad,
};

attend_status attend_model_set_guided_alignment(attend_model *m, double lam, attend_error *err) {
    const char *who = "attend_model_set_guided_alignment";
    CHECK(m, err, ATTEND_ERR_NULL, "%s: model is NULL", who);
    CHECK(isfinite(lam) && lam >= 0, err, ATTEND_ERR_ARG, "%s: guided_alignment=%g, must be in [0, inf)", who, lam);
    attend_train_options t;
    memset(&t, 0, sizeof t);
    t.guided_alignment = lam;
    int broken = at_ext_rule_broken(&m->cfg, &t);
    if (broken >= 0) return at_ext_rule_fail(&m->cfg, broken, who, err);
    if (lam > 0) TRY(check_options(m, &t, NULL, who, err));
    m->defaults.guided_alignment = lam;
    st(m)->on = 0;
    m->fwd_ready = 0;
    return at_ok(err);
}

double attend_model_guided_alignment(const attend_model *m) { return m ? m->defaults.guided_alignment : 0; }

double attend_model_guided_loss(const attend_model *m) {
    const guide_state *s = m ? st(m) : NULL;
    return s && s->on && m->fwd_count > 0 ? s->sum / m->fwd_count : 0;
}
