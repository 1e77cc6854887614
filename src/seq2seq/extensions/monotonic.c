/*
 * monotonic.c — monotonic attention in the model (the extension "monotonic",
 * config flag `monotonic`; Raffel et al. 2017; the kernels are
 * core/monotonic.c), for decoders with attention over a vocabulary. The score
 * function's output is the energy e_tj; p_tj = σ(e_tj + r) with the tensor
 * attention.r (starting at AT_MONO_R_INIT: a negative bias, so that the
 * decoder starts by scanning past most positions). A teacher-forced forward
 * (training, evaluation) runs the expected alignment, whose backward runs over
 * j and back over t (α_t depends on α_{t−1}); in a trainer's steps the
 * energies get zero-mean, unit-variance Gaussian noise before the sigmoid
 * (Raffel et al.'s recipe, which drives p towards 0 or 1, so the hard process
 * at test time matches what training saw); evaluation and plain forwards add
 * none. Decoding, forced scoring and interventions run the hard process: each
 * row keeps its attended position, scans on from it and attends to the first
 * position with p >= 0.5, or (none left) to nothing; beam search reorders the
 * positions with the hypotheses.
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "seq2seq/extension.h"
#include "core/monotonic.h"

#define AT_MONO_R_INIT (-4.0)

typedef struct {
    attend_real *r[2];         /* attention.r [1]: parameters, gradients */
    attend_real *p, *q;        /* [T,N,S] the expected alignment's p and q */
    attend_real *dcarry;       /* [N,S] d α_{t−1} from step t's backward */
    attend_real *noise;        /* [N,S] one step's pre-sigmoid training noise */
    int32_t *pos;              /* [max_batch] the hard process's position per row */
} mono_state;

extern const at_ext_ops at_ext_monotonic;
static mono_state *st(const attend_model *m) { return at_ext_state(m, &at_ext_monotonic); }

static int attached(const attend_model_config *c) { return c->monotonic != 0; }

/* the expected alignment: a teacher-forced pass that is not forced scoring */
static int expected(const attend_model *m) { return !m->run.infer && !m->run.scoring; }

static void layout_params(at_param_layout *L, int where) {
    if (where != AT_PARAMS_ATTENTION) return;
    at_param_add_init(L, at_param_slot(L, st(L->m)->r), "attention.r", 1, 0, AT_INIT_CONST, AT_MONO_R_INIT);
}

static void layout_acts(attend_model *m, at_act_layout *L) {
    mono_state *s = st(m);
    size_t N = (size_t)m->cfg.max_batch, S = (size_t)m->cfg.max_src_len, T = (size_t)m->Tcap;
    s->p = at_act_take(L, T * N * S);
    s->q = at_act_take(L, T * N * S);
    s->dcarry = at_act_take(L, N * S);
    s->noise = at_act_take(L, N * S);
    s->pos = at_act_ints(L, N);
    at_act_rows(L, s->pos, sizeof(int32_t), 0, AT_ROWS_STATE);
}

/* splitmix64's finaliser: 64 well-mixed bits of x. */
static uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* A uniform in (0,1) from 53 bits of h. */
static double unit(uint64_t h) { return ((double)(h >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

/* The trainer's noise of step `step` of a run seeded `seed`: every shard and every resumed run draws the same. */
static void step_options(attend_forward_options *f, const attend_train_options *t, uint64_t seed, long step) {
    (void)t;
    f->monotonic_noise = 1;
    f->monotonic_key = mix64(mix64(seed ^ 0x6d6f6e6f746f6e65ULL) + (uint64_t)step);
}

/* z [N,S] ~ N(0,1) for step t: Box–Muller on hashes of (key, row, t, j). */
static void fill_noise(const attend_model *m, attend_real *z, int t, int N, int S) {
    uint64_t key = m->run.o.monotonic_key;
    long row0 = m->run.o.row0;
    for (int n = 0; n < N; n++)
        for (int j = 0; j < S; j++) {
            uint64_t h = mix64(key ^ mix64(((uint64_t)(row0 + n) << 40) ^ ((uint64_t)t << 20) ^ (uint64_t)j));
            double u1 = unit(h), u2 = unit(mix64(h));
            z[(size_t)n * S + j] = (attend_real)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
        }
}

/* Step t's weights [N,S] from its energies scores[t]: the expected alignment
 * from weights[t−1], else the hard process from the positions (0 at t = 0). */
static int weights(attend_model *m, int t, int N, int S) {
    mono_state *s = st(m);
    at_acts *a = &m->acts;
    size_t NS = (size_t)N * S;
    const attend_real *e = a->scores + (size_t)t * NS;
    attend_real *w = a->weights + (size_t)t * NS, r = s->r[0][0];
    if (expected(m)) {
        int noisy = m->run.o.monotonic_noise != 0;
        if (noisy) fill_noise(m, s->noise, t, N, S);
        at_monotonic_step_forward(w, s->p + (size_t)t * NS, s->q + (size_t)t * NS, e, r, noisy ? s->noise : NULL,
                                  t ? w - NS : NULL, m->valid, NULL, N, S, (size_t)S);
        return 1;
    }
    if (t == 0)
        for (int n = 0; n < N; n++) s->pos[n] = 0;
    at_monotonic_hard_step(w, s->pos, e, r, m->valid, NULL, NULL, N, S, (size_t)S);
    return 1;
}

/* Its backward from acts.dweights (d α_t from the context): dscores +=, the
 * gradient of r +=, and dcarry (d α_{t−1}, added to step t−1's). */
static int weights_backward(attend_model *m, int t, int N, int S) {
    mono_state *s = st(m);
    at_acts *a = &m->acts;
    size_t NS = (size_t)N * S;
    /* d α_t = from the context (dweights) + from step t+1's recurrence (the carry) */
    if (t < m->fwd_T - 1)
        for (size_t i = 0; i < NS; i++) a->dweights[i] += s->dcarry[i];
    memset(s->dcarry, 0, NS * sizeof *s->dcarry);
    /* forward: α_t = expected alignment(e_t + r, α_{t−1}) */
    at_monotonic_step_backward(a->dscores, s->r[1], t ? s->dcarry : NULL, a->dweights, s->p + (size_t)t * NS,
                               s->q + (size_t)t * NS, m->valid, NULL, N, S, (size_t)S);
    return 1;
}

/* forced scoring makes the hard choices: nothing to differentiate */
static attend_status forward_begin(attend_model *m, const attend_batch *b, attend_error *err) {
    (void)b;
    (void)err;
    if (m->run.scoring) m->run.no_backward = 1;
    return ATTEND_OK;
}

static int feature_on(const char *f, const attend_model_config *c, const attend_train_options *t) {
    (void)f;
    (void)t;
    return c->monotonic != 0;
}

static const at_ext_key keys[] = {{"monotonic", offsetof(attend_model_config, monotonic), NULL, NULL, 1, NULL}};

static const attend_feature_rule rules[] = {
    {"monotonic", ATTEND_RULE_ATTENTION, NULL,
     "{f} with {o}: monotonic attention needs a decoder that attends over a vocabulary (bahdanau, luong)"},
    {"monotonic", ATTEND_RULE_VOCABULARY, NULL,
     "{f} with {o}: monotonic attention needs a decoder that attends over a vocabulary (bahdanau, luong)"},
};

const at_ext_ops at_ext_monotonic = {
    .name = "monotonic",
    .state_size = sizeof(mono_state),
    .keys = keys,
    .nkeys = 1,
    .rules = rules,
    .nrules = 2,
    .feature_on = feature_on,
    .attached = attached,
    .step_options = step_options,
    .layout_params = layout_params,
    .layout_acts = layout_acts,
    .forward_begin = forward_begin,
    .weights = weights,
    .weights_backward = weights_backward,
};
