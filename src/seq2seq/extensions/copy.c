/*
 * copy.c — the pointer-generator output (the extension "copy", config flag
 * `copy`; See et al. 2017, "Get To The Point"), for decoders with attention
 * over a vocabulary (bahdanau, luong):
 *
 *   p_gen = σ(w_cᵀ c_t + w_sᵀ s_t + w_xᵀ x_t + b)
 *   P(w)  = p_gen P_vocab(w) + (1 − p_gen) Σ_{j: ext_j = w} α_tj
 *
 * c_t the context of step t, s_t the decoder state after step t's cell
 * (states[t+1]: BAHDANAU's and LUONG's s_t alike; LUONG's attentional state
 * h̃_t is not used), x_t the decoder input embedding (tgt_emb of y_{t-1}).
 * The extended vocabulary has Vt + S ids: ext_j [N,S] is the target id of
 * source position j when the target vocabulary has its token (through the
 * model's source→target map [Vs]), else Vt + j', j' the first position of
 * the row holding the same source id (an <unk> position: j' = j). A copied id
 * fed back as the next input reads <unk>'s embedding (the decoder's rule for
 * an id beyond its vocabulary). Tensors copy.w_c [E], copy.w_s [Hd], copy.w_x
 * [D], copy.b [1] (after out.bias). tools/make_copy_ref.py computes the same
 * in PyTorch (tests/ref/copy_*.txt, tests/test_copy.c).
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "seq2seq/extension.h"
#include "seq2seq/decoders/decoder.h"

typedef struct {
    attend_real *wc[2], *ws[2], *wx[2], *b[2];  /* [E] [Hd] [D] [1]: parameters, gradients */
    attend_real *pgen, *r, *da, *du;            /* [T,N] p_gen and backward's coefficients */
    attend_real *lpy;                           /* [N,T] log P(y) of the mixture */
    attend_real *dist;                          /* [N,Vt+S] one step's extended distribution */
    int32_t *map;                               /* [Vs] source id -> target id, or -1 */
    int32_t *ext;                               /* [N,S] extended id of each source position */
    int32_t *best;                              /* [N,T] the forward's argmax over the extended distribution */
    attend_real inv;                            /* backward's 1/count */
} copy_state;

extern const at_ext_ops at_ext_copy;
static copy_state *st(const attend_model *m) { return at_ext_state(m, &at_ext_copy); }

static int attached(const attend_model_config *c) { return c->copy != 0; }

static void layout_params(at_param_layout *L, int where) {
    if (where != AT_PARAMS_OUTPUT) return;
    attend_model *m = L->m;
    copy_state *s = st(m);
    int D = m->cfg.emb, E = m->E, Hd = m->cfg.dec_hidden;
    double bound = 1.0 / sqrt((double)(E + Hd + D)); /* one Linear over [c; s; x] */
    at_param_add_init(L, at_param_slot(L, s->wc), "copy.w_c", E, 0, AT_INIT_UNIFORM, bound);
    at_param_add_init(L, at_param_slot(L, s->ws), "copy.w_s", Hd, 0, AT_INIT_UNIFORM, bound);
    at_param_add_init(L, at_param_slot(L, s->wx), "copy.w_x", D, 0, AT_INIT_UNIFORM, bound);
    at_param_add_init(L, at_param_slot(L, s->b), "copy.b", 1, 0, AT_INIT_UNIFORM, bound);
}

static void layout_acts(attend_model *m, at_act_layout *L) {
    copy_state *s = st(m);
    const attend_model_config *c = &m->cfg;
    size_t N = (size_t)c->max_batch, S = (size_t)c->max_src_len, T = (size_t)m->Tcap;
    s->pgen = at_act_take(L, T * N);
    s->r = at_act_take(L, T * N);
    s->da = at_act_take(L, T * N);
    s->du = at_act_take(L, T * N);
    s->lpy = at_act_take(L, N * T);
    s->dist = at_act_take(L, N * ((size_t)c->tgt_vocab + S));
    s->map = at_act_ints(L, (size_t)c->src_vocab);
    s->ext = at_act_ints(L, N * S);
    s->best = at_act_ints(L, N * T);
    at_act_rows(L, s->ext, sizeof(int32_t), 1, AT_ROWS_SOURCE);
}

/* The default map: id -> id for 4 <= id < min(Vs,Vt) (a shared vocabulary), else -1. */
static void init(attend_model *m) {
    copy_state *s = st(m);
    int Vs = m->cfg.src_vocab, Vt = m->cfg.tgt_vocab;
    for (int v = 0; v < Vs; v++) s->map[v] = v >= 4 && v < Vt ? v : -1;
}

static void clone(attend_model *dst, const attend_model *src) {
    memcpy(st(dst)->map, st(src)->map, (size_t)src->cfg.src_vocab * sizeof(int32_t));
}

static attend_status load(attend_model *m, const attend_vocab *sv, const attend_vocab *tv, attend_error *err) {
    return attend_model_set_copy_map(m, sv, tv, err); /* from the file's vocabularies */
}

/* The extended id of source position j of row src [S] (len valid positions). */
static int32_t ext_of(const attend_model *m, const int32_t *src, int len, int j) {
    const copy_state *s = st(m);
    int32_t v = src[j], Vt = m->cfg.tgt_vocab;
    if (v != ATTEND_UNK && v >= 0 && v < m->cfg.src_vocab && s->map[v] >= 0) return s->map[v];
    if (v == ATTEND_UNK) return Vt + j; /* its string is not known here: a token of its own */
    for (int i = 0; i < j && i < len; i++)
        if (src[i] == v) return Vt + i;
    return Vt + j;
}

/* ext [N,S] of a batch */
static void begin(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S) {
    copy_state *s = st(m);
    for (int n = 0; n < N; n++)
        for (int j = 0; j < S; j++)
            s->ext[(size_t)n * S + j] = j < src_len[n] ? ext_of(m, src + (size_t)n * S, src_len[n], j) : -1;
}

/* copied ids of a batch: an id Vt + j must be the extended id of position j of its row */
static int accepts_targets(const attend_model *m, const attend_batch *b, int n, int t, attend_error *err,
                           attend_status *stat) {
    const char *who = "attend_model_forward";
    int Vt = m->cfg.tgt_vocab;
    int32_t yi = b->tgt_in[(size_t)n * b->T + t], yo = b->tgt_out[(size_t)n * b->T + t];
    const int32_t *srow = b->src + (size_t)n * b->S;
    int sl = b->src_len[n];
    for (int k = 0; k < 2; k++) {
        int32_t y = k ? yo : yi, j = y - Vt;
        if (!(y < Vt || (j < sl && ext_of(m, srow, sl, j) == y))) {
            *stat = at_fail(err, ATTEND_ERR_ARG,
                            "%s: row %d step %d: copied id %d = %d + source position %d, which is not that row's "
                            "extended id of a source token (a position < %d holding the first occurrence of a token "
                            "the target vocabulary lacks)",
                            who, n, t, (int)y, Vt, (int)j, sl);
            return 0;
        }
    }
    if (!(yi >= 0 && yo >= 0)) {
        *stat = at_fail(err, ATTEND_ERR_ARG, "%s: row %d step %d: target ids %d -> %d are negative", who, n, t, (int)yi,
                        (int)yo);
        return 0;
    }
    return 1;
}

/* u = w_cᵀ c + w_sᵀ s + w_xᵀ x + b of one row, in double */
static double pgen_logit(const attend_model *m, const attend_real *c, const attend_real *s, const attend_real *x) {
    const copy_state *cs = st(m);
    double u = (double)cs->b[0][0];
    for (int i = 0; i < m->E; i++) u += (double)cs->wc[0][i] * (double)c[i];
    for (int i = 0; i < m->cfg.dec_hidden; i++) u += (double)cs->ws[0][i] * (double)s[i];
    for (int i = 0; i < m->cfg.emb; i++) u += (double)cs->wx[0][i] * (double)x[i];
    return u;
}

static double sigmoid(double u) { return u >= 0 ? 1.0 / (1.0 + exp(-u)) : exp(u) / (1.0 + exp(u)); }

/* p_gen of row n at step t of N rows */
static double step_pgen(const attend_model *m, int t, int N, int n) {
    const at_acts *a = &m->acts;
    int Hd = m->cfg.dec_hidden, E = m->E, D = m->cfg.emb;
    return sigmoid(pgen_logit(m, a->ctx + ((size_t)t * N + n) * E, a->states + ((size_t)(t + 1) * N + n) * Hd,
                              a->emb_tgt + ((size_t)t * N + n) * D));
}

/* dist [Vt+S] = P(w) of one row from log P_vocab lv [Vt], p_gen g, weights w [S], ext [S] */
static void mix_row(int *best, attend_real *dist, const attend_real *lv, double g, const attend_real *w,
                    const int32_t *ext, int Vt, int S) {
    for (int v = 0; v < Vt; v++) dist[v] = (attend_real)(g * exp((double)lv[v]));
    for (int j = 0; j < S; j++) dist[Vt + j] = 0;
    for (int j = 0; j < S; j++)
        if (ext[j] >= 0) dist[ext[j]] += (attend_real)((1 - g) * (double)w[j]);
    int b = 0;
    for (int v = 1; v < Vt + S; v++)
        if (dist[v] > dist[b]) b = v;
    if (best) *best = b;
}

/* Teacher-forced: after logp [N,T,Vt] holds log P_vocab, every counted step's
 * p_gen, log P(y) (lpy), the argmax of the extended distribution (best
 * [N,T]) and what backward needs (r = p_gen P_vocab(y) / P(y), da =
 * −(1 − p_gen)/P(y), du = −(P_vocab(y) − C(y))/P(y) · p_gen(1 − p_gen)). */
static void output(attend_model *m, const int32_t *tgt_out, const int32_t *tgt_len, int N, int S, int T) {
    copy_state *s = st(m);
    at_acts *a = &m->acts;
    int Vt = m->cfg.tgt_vocab;
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            size_t k = (size_t)t * N + n, r = (size_t)n * T + t;
            s->pgen[k] = s->r[k] = s->da[k] = s->du[k] = 0;
            s->lpy[r] = 0;
            s->best[r] = 0;
            if (t >= tgt_len[n]) continue;
            const attend_real *lv = a->logp + r * Vt, *w = a->weights + k * S;
            const int32_t *ext = s->ext + (size_t)n * S;
            int32_t y = tgt_out[r];
            double g = step_pgen(m, t, N, n);
            double pv = y < Vt ? exp((double)lv[y]) : 0, cy = 0;
            for (int j = 0; j < S; j++)
                if (ext[j] == y) cy += (double)w[j];
            double P = g * pv + (1 - g) * cy;
            s->pgen[k] = (attend_real)g;
            s->lpy[r] = (attend_real)log(P);
            /* L = −log P: dlogits = r (p − onehot), dα_j = da [ext_j = y], du = dg g(1 − g) */
            s->r[k] = (attend_real)(P > 0 ? g * pv / P : 0);
            s->da[k] = (attend_real)(P > 0 ? -(1 - g) / P : 0);
            s->du[k] = (attend_real)(P > 0 ? -(pv - cy) / P * g * (1 - g) : 0);
            int best;
            mix_row(&best, s->dist, lv, g, w, ext, Vt, S);
            s->best[r] = best;
        }
}

/* the mixture's loss −log P(y) and its argmax (label smoothing is refused with copy: a rule) */
static int token_loss(const attend_model *m, int n, int t, int T, const attend_real *lp, int width, int y,
                      double *loss, int *best) {
    (void)lp;
    (void)width;
    (void)y;
    const copy_state *s = st(m);
    *loss -= s->lpy[(size_t)n * T + t];
    *best = s->best[(size_t)n * T + t];
    return 1;
}

/* −log P(y) of the mixture ⇒ dlogits = r (p − onehot)/count */
static int token_grad(const attend_model *m, int n, int t, int N, attend_real *z, int V, int y, attend_real inv) {
    attend_real sc = inv * st(m)->r[(size_t)t * N + n];
    for (int v = 0; v < V; v++) z[v] = (attend_real)exp((double)z[v]) * sc;
    if (y < V) z[y] -= sc;
    return 1;
}

/* Backward of step t's p_gen: acts.ds += du w_s and the w_*, b, tgt_emb gradients (+=), scaled by inv = 1/count. */
static void step_backward(attend_model *m, int t, int N, attend_real inv) {
    copy_state *s = st(m);
    at_acts *a = &m->acts;
    int Hd = m->cfg.dec_hidden, E = m->E, D = m->cfg.emb;
    s->inv = inv;
    for (int n = 0; n < N; n++) {
        attend_real du = s->du[(size_t)t * N + n] * inv;
        if (du == 0) continue;
        const attend_real *c = a->ctx + ((size_t)t * N + n) * E, *sn = a->states + ((size_t)(t + 1) * N + n) * Hd;
        const attend_real *x = a->emb_tgt + ((size_t)t * N + n) * D;
        /* forward: u = w_cᵀ c + w_sᵀ s + w_xᵀ x + b, x = tgt_emb[y_in] */
        attend_real *ds = a->ds + (size_t)n * Hd;
        attend_real *gx = m->g.tgt_emb + (size_t)m->fwd_tgt_in[(size_t)t * N + n] * D;
        for (int i = 0; i < Hd; i++) {
            ds[i] += du * s->ws[0][i];
            s->ws[1][i] += du * sn[i];
        }
        for (int i = 0; i < E; i++) s->wc[1][i] += du * c[i];
        /* x may be transformed at its site (dropout: x = mask ⊙ tgt_emb[y_in], row n, position t): the
         * gradient reaching the embedding goes through the same factor (test_combos_f64: copy + dropout) */
        for (int i = 0; i < D; i++) {
            attend_real keep = at_ext_site_factor(m, AT_SITE_DEC_IN, n, t, i);
            s->wx[1][i] += du * x[i];
            gx[i] += du * s->wx[0][i] * keep;
        }
        s->b[1][0] += du;
    }
}

/* Inside the attention backward of step t, before the context's: acts.dctx += du w_c and
 * acts.dweights += da at the positions whose ext is y (scaled by inv). */
static void context_backward(attend_model *m, int t, int N, int S) {
    copy_state *s = st(m);
    at_acts *a = &m->acts;
    int E = m->E, T = m->fwd_T;
    attend_real inv = s->inv;
    for (int n = 0; n < N; n++) {
        size_t k = (size_t)t * N + n;
        attend_real du = s->du[k] * inv, da = s->da[k] * inv;
        /* forward: u = w_cᵀ c_t + ... */
        for (int i = 0; i < E; i++) a->dctx[(size_t)n * E + i] += du * s->wc[0][i];
        if (da == 0) continue;
        /* forward: P(y) = ... + (1 − p_gen) Σ_{j: ext_j = y} α_tj */
        int32_t y = m->fwd_tgt_out[(size_t)n * T + t];
        const int32_t *ext = s->ext + (size_t)n * S;
        for (int j = 0; j < S; j++)
            if (ext[j] == y) a->dweights[(size_t)n * S + j] += da;
    }
}

/* Decoding, after step t's logits [N,Vt] are in step_logits: the extended
 * log-distribution [N,Vt+S] (−inf where zero). */
static const attend_real *dist(attend_model *m, int t, int N, int S, int *W) {
    copy_state *s = st(m);
    at_acts *a = &m->acts;
    int Vt = m->cfg.tgt_vocab, Wd = Vt + S;
    for (int n = 0; n < N; n++) {
        attend_real *z = a->step_logits + (size_t)n * Vt, *d = s->dist + (size_t)n * Wd;
        /* log-softmax of the logits in place */
        attend_real mx = z[0];
        for (int v = 1; v < Vt; v++)
            if (z[v] > mx) mx = z[v];
        double sum = 0;
        for (int v = 0; v < Vt; v++) sum += exp((double)z[v] - (double)mx);
        double lse = (double)mx + log(sum);
        for (int v = 0; v < Vt; v++) z[v] = (attend_real)((double)z[v] - lse);
        double g = step_pgen(m, t, N, n);
        mix_row(NULL, d, z, g, a->weights + ((size_t)t * N + n) * S, s->ext + (size_t)n * S, Vt, S);
        for (int v = 0; v < Wd; v++) d[v] = d[v] > 0 ? (attend_real)log((double)d[v]) : (attend_real)-INFINITY;
    }
    *W = Wd;
    return s->dist;
}

/* An ensemble averages one output space; a copy model's is each source's extended vocabulary. */
static attend_status check_decode(attend_model *const *models, int M, const attend_decode_options *o, const char *who,
                                  attend_error *err) {
    (void)o;
    for (int k = 0; k < M && M > 1; k++)
        CHECK(!st(models[k]), err, ATTEND_ERR_ARG,
              "%s: model %d copies (config copy): its output space is each source's extended vocabulary, which an "
              "ensemble does not average", who, k + 1);
    return ATTEND_OK;
}

static int feature_on(const char *f, const attend_model_config *c, const attend_train_options *t) {
    (void)f;
    (void)t;
    return c->copy != 0;
}

static const at_ext_key keys[] = {{"copy", offsetof(attend_model_config, copy), NULL, NULL, 1, NULL}};

static const attend_feature_rule rules[] = {
    {"copy", ATTEND_RULE_ATTENTION, NULL,
     "{f} with {o}: copying mixes the vocabulary with the attention over the source, so it needs bahdanau or luong"},
    {"copy", ATTEND_RULE_VOCABULARY, NULL,
     "{f} with {o}: copying mixes the vocabulary with the attention over the source, so it needs bahdanau or luong"},
};

const at_ext_ops at_ext_copy = {
    .name = "copy",
    .state_size = sizeof(copy_state),
    .keys = keys,
    .nkeys = 1,
    .rules = rules,
    .nrules = 2,
    .feature_on = feature_on,
    .attached = attached,
    .layout_params = layout_params,
    .layout_acts = layout_acts,
    .init = init,
    .clone = clone,
    .load = load,
    .accepts_targets = accepts_targets,
    .begin = begin,
    .output = output,
    .token_loss = token_loss,
    .token_grad = token_grad,
    .step_backward = step_backward,
    .context_backward = context_backward,
    .dist = dist,
    .check_decode = check_decode,
};

/* ------------------------------------------------------------ public */

attend_status attend_model_set_copy_map(attend_model *m, const attend_vocab *src_vocab, const attend_vocab *tgt_vocab,
                                        attend_error *err) {
    const char *who = "attend_model_set_copy_map";
    CHECK(m && src_vocab && tgt_vocab, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !m ? "model" : !src_vocab ? "src_vocab" : "tgt_vocab");
    copy_state *s = st(m);
    CHECK(s, err, ATTEND_ERR_ARG, "%s: the model has no copy mechanism (config copy=0)", who);
    CHECK(attend_vocab_size(src_vocab) == m->cfg.src_vocab && attend_vocab_size(tgt_vocab) == m->cfg.tgt_vocab, err,
          ATTEND_ERR_SHAPE, "%s: vocabularies of %d and %d tokens, the model has src_vocab=%d, tgt_vocab=%d", who,
          attend_vocab_size(src_vocab), attend_vocab_size(tgt_vocab), m->cfg.src_vocab, m->cfg.tgt_vocab);
    for (int32_t v = 0; v < m->cfg.src_vocab; v++) {
        const char *tk = attend_vocab_token(src_vocab, v);
        s->map[v] = v < 4 ? -1 : attend_vocab_find(tgt_vocab, tk, strlen(tk));
    }
    m->fwd_ready = 0;
    return at_ok(err);
}

int32_t attend_model_copy_target(const attend_model *m, int32_t src_id) {
    const copy_state *s = m ? st(m) : NULL;
    if (!s || src_id < 0 || src_id >= m->cfg.src_vocab) return -1;
    return s->map[src_id];
}
