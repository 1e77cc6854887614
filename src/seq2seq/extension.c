/*
 * extension.c — the registry of the model's mechanisms (extension.h) and the
 * dispatchers that call their hooks in registry order. Adding a mechanism:
 * its file src/seq2seq/extensions/<name>.c and one line in AT_EXTENSIONS.
 *
 * The order is part of the file formats: configuration keys are written in
 * it (coverage, copy, monotonic, normalizer), training options recorded in
 * checkpoints in it (dropout, label_smoothing, sampling_prob, sampling_ramp,
 * coverage_loss, guided_alignment), tensors laid out in it (attention.w_cov
 * before attention.r), and the gradients several of them add to one buffer
 * are summed in it.
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "seq2seq/extension.h"
#include "seq2seq/decoders/decoder.h"

#define AT_EXTENSIONS(X) \
    X(at_ext_dropout)    \
    X(at_ext_smoothing)  \
    X(at_ext_sampling)   \
    X(at_ext_coverage)   \
    X(at_ext_copy)       \
    X(at_ext_monotonic)  \
    X(at_ext_sparse)     \
    X(at_ext_guide)      \
    X(at_ext_uniform)    \
    X(at_ext_frozen)     \
    X(at_ext_adversarial)

#define AT_DECLARE(ops) extern const at_ext_ops ops;
AT_EXTENSIONS(AT_DECLARE)
#undef AT_DECLARE

#define AT_ENTRY(ops) &ops,
const at_ext_ops *const at_exts[] = {AT_EXTENSIONS(AT_ENTRY)};
#undef AT_ENTRY

const int at_ext_count = (int)(sizeof at_exts / sizeof at_exts[0]);

/* every extension attached to m with the hook: i its index, e its ops */
#define EACH(m, hook)                                                                  \
    for (int i_ = 0; i_ < at_ext_count; i_++)                                          \
        for (const at_ext_ops *e = at_exts[i_]; e && (m)->ext_state[i_] && e->hook; e = NULL)

void *at_ext_state(const attend_model *m, const at_ext_ops *e) {
    for (int i = 0; i < at_ext_count; i++)
        if (at_exts[i] == e) return m->ext_state[i];
    return NULL;
}

/* ------------------------------------------------------------ configuration */

static int key_value(const attend_model_config *c, const at_ext_key *k) {
    int v;
    memcpy(&v, (const char *)c + k->offset, sizeof v);
    return v;
}

/* The names of a rule's two sides, as the library writes them. */
static void rule_names(const attend_model_config *c, const attend_feature_rule *r, char *f, char *o, size_t cap) {
    int nv = (int)c->normalizer;
    if (!strcmp(r->feature, "normalizer")) snprintf(f, cap, "normalizer %s", attend_normalizer_name(c->normalizer));
    else snprintf(f, cap, "%s", r->feature);
    const at_decoder_ops *dec = at_decoders[c->decoder];
    switch (r->kind) {
    case ATTEND_RULE_ATTENTION:
        snprintf(o, cap, dec->aligns ? "decoder %s, whose multi-head attention has no single attention step to act on"
                                     : "decoder %s, which has no attention weights",
                 dec->name);
        break;
    case ATTEND_RULE_VOCABULARY: snprintf(o, cap, "decoder %s", dec->name); break;
    case ATTEND_RULE_ADDITIVE: snprintf(o, cap, "score %s", attend_score_name(c->score)); break;
    case ATTEND_RULE_EXCLUDES:
        if (!strcmp(r->other, "normalizer")) snprintf(o, cap, "normalizer %s", attend_normalizer_name((attend_normalizer)nv));
        else snprintf(o, cap, "%s", r->other);
        break;
    }
}

/* The feature named `name` is on in c (and t). */
static int feature_on(const char *name, const attend_model_config *c, const attend_train_options *t) {
    for (int i = 0; i < at_ext_count; i++) {
        const at_ext_ops *e = at_exts[i];
        for (int k = 0; k < e->nrules; k++)
            if (!strcmp(e->rules[k].feature, name)) return e->feature_on && e->feature_on(name, c, t);
    }
    return 0;
}

int at_ext_rule_broken(const attend_model_config *c, const attend_train_options *t) {
    const at_decoder_ops *dec = at_decoders[c->decoder];
    int idx = 0;
    for (int i = 0; i < at_ext_count; i++) {
        const at_ext_ops *e = at_exts[i];
        for (int k = 0; k < e->nrules; k++, idx++) {
            const attend_feature_rule *r = &e->rules[k];
            if (!feature_on(r->feature, c, t)) continue;
            int broken = r->kind == ATTEND_RULE_ATTENTION    ? !dec->attentive
                         : r->kind == ATTEND_RULE_VOCABULARY ? !dec->vocabulary
                         : r->kind == ATTEND_RULE_ADDITIVE   ? c->score != ATTEND_SCORE_ADDITIVE
                                                             : feature_on(r->other, c, t);
            if (broken) return idx;
        }
    }
    return -1;
}

int attend_feature_rule_count(void) {
    int n = 0;
    for (int i = 0; i < at_ext_count; i++) n += at_exts[i]->nrules;
    return n;
}

const attend_feature_rule *attend_feature_rule_get(int idx) {
    for (int i = 0; i < at_ext_count && idx >= 0; i++) {
        if (idx < at_exts[i]->nrules) return &at_exts[i]->rules[idx];
        idx -= at_exts[i]->nrules;
    }
    return NULL;
}

int attend_feature_rule_broken(const attend_model_config *cfg, const attend_train_options *t) {
    if (!cfg || (int)cfg->decoder < 0 || (int)cfg->decoder >= at_decoder_count || !at_decoders[cfg->decoder]) return -1;
    return at_ext_rule_broken(cfg, t);
}

size_t attend_feature_rule_format(const attend_feature_rule *r, const char *f, const char *o, char *buf, size_t cap) {
    if (!buf || cap == 0) return 0;
    buf[0] = 0;
    if (!r) return 0;
    size_t u = 0;
    for (const char *s = r->text; *s && u + 1 < cap; s++) {
        const char *ins = NULL;
        if (s[0] == '{' && (s[1] == 'f' || s[1] == 'o') && s[2] == '}') ins = s[1] == 'f' ? f : o;
        if (ins) {
            int k = snprintf(buf + u, cap - u, "%s", ins ? ins : "");
            u += k < 0 ? 0 : (size_t)k;
            if (u >= cap) u = cap - 1;
            s += 2;
        } else {
            buf[u++] = *s;
        }
    }
    buf[u] = 0;
    return u;
}

attend_status at_ext_rule_fail(const attend_model_config *c, int i, const char *who, attend_error *err) {
    const attend_feature_rule *r = attend_feature_rule_get(i);
    char f[96], o[96], msg[400];
    rule_names(c, r, f, o, sizeof f);
    attend_feature_rule_format(r, f, o, msg, sizeof msg);
    return at_fail(err, ATTEND_ERR_ARG, "%s: %s", who, msg);
}

attend_status at_ext_config_check(const attend_model_config *c, attend_error *err) {
    for (int i = 0; i < at_ext_count; i++) {
        const at_ext_ops *e = at_exts[i];
        for (int k = 0; k < e->nkeys; k++) {
            const at_ext_key *key = &e->keys[k];
            int v = key_value(c, key);
            if (!key->name)
                CHECK(v == 0 || v == 1, err, ATTEND_ERR_ARG, "model config: %s=%d, must be 0 or 1", key->key, v);
            else
                CHECK((unsigned)v <= (unsigned)key->max, err, ATTEND_ERR_ARG, "model config: %s=%d is not %s", key->key, v,
                      key->values);
        }
    }
    int broken = at_ext_rule_broken(c, NULL);
    if (broken >= 0) return at_ext_rule_fail(c, broken, "model config", err);
    return ATTEND_OK;
}

/* The option's value in t (or f), as a double. */
static double option_value(const at_ext_option *o, const attend_train_options *t, const attend_forward_options *f) {
    if (t) {
        const char *p = (const char *)t + o->train_offset;
        if (o->is_long) {
            long v;
            memcpy(&v, p, sizeof v);
            return (double)v;
        }
        double v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    if (o->fwd_offset == AT_NO_FIELD) return 0;
    double v;
    memcpy(&v, (const char *)f + o->fwd_offset, sizeof v);
    return v;
}

attend_status at_ext_options_range(const attend_train_options *t, const attend_forward_options *f, const char *who,
                                   attend_error *err) {
    for (int i = 0; i < at_ext_count; i++)
        for (int k = 0; k < at_exts[i]->noptions; k++) {
            const at_ext_option *o = &at_exts[i]->options[k];
            if (!t && o->fwd_offset == AT_NO_FIELD) continue;
            double v = option_value(o, t, f);
            if (o->is_long) {
                CHECK(v >= 0, err, ATTEND_ERR_ARG, "%s: %s=%ld, must be >= 0", who, o->name, (long)v);
                continue;
            }
            CHECK(isfinite(v) && v >= 0 && (o->hi_open ? v < o->hi : v <= o->hi), err, ATTEND_ERR_ARG,
                  "%s: %s=%g, must be in [0, %s", who, o->name, v,
                  o->hi == HUGE_VAL ? "inf)" : o->hi_open ? "1)" : "1]");
        }
    return ATTEND_OK;
}

int attend_train_option_count(void) {
    int n = 0;
    for (int i = 0; i < at_ext_count; i++) n += at_exts[i]->noptions;
    return n;
}

const char *attend_train_option_get(const attend_train_options *t, int idx, double *value) {
    for (int i = 0; i < at_ext_count && idx >= 0; i++) {
        if (idx < at_exts[i]->noptions) {
            const at_ext_option *o = &at_exts[i]->options[idx];
            if (value) *value = t ? option_value(o, t, NULL) : 0;
            return o->name;
        }
        idx -= at_exts[i]->noptions;
    }
    return NULL;
}

void at_ext_train_view(attend_train_options *t, const attend_forward_options *f) {
    memset(t, 0, sizeof *t);
    for (int i = 0; i < at_ext_count; i++)
        for (int k = 0; k < at_exts[i]->noptions; k++) {
            const at_ext_option *o = &at_exts[i]->options[k];
            if (o->fwd_offset != AT_NO_FIELD && !o->is_long)
                memcpy((char *)t + o->train_offset, (const char *)f + o->fwd_offset, sizeof(double));
        }
}

int at_ext_reads_alignments(const attend_train_options *t) {
    for (int i = 0; i < at_ext_count; i++)
        for (int k = 0; k < at_exts[i]->noptions; k++) {
            const at_ext_option *o = &at_exts[i]->options[k];
            if (o->reads_alignments && option_value(o, t, NULL) != 0) return 1;
        }
    return 0;
}

void at_ext_persist(attend_forward_options *defaults, const attend_forward_options *f) {
    for (int i = 0; i < at_ext_count; i++)
        for (int k = 0; k < at_exts[i]->noptions; k++) {
            const at_ext_option *o = &at_exts[i]->options[k];
            if (o->persists && o->fwd_offset != AT_NO_FIELD)
                memcpy((char *)defaults + o->fwd_offset, (const char *)f + o->fwd_offset, sizeof(double));
        }
}

attend_status at_ext_check_options(attend_model *m, const attend_train_options *t, const attend_dataset *d,
                                   const char *who, attend_error *err) {
    EACH(m, check_options) TRY(e->check_options(m, t, d, who, err));
    return ATTEND_OK;
}

void at_ext_step_options(attend_forward_options *f, const attend_train_options *t, uint64_t seed, long step,
                         long row0) {
    memset(f, 0, sizeof *f);
    f->size = sizeof *f;
    f->row0 = row0;
    for (int i = 0; i < at_ext_count; i++)
        if (at_exts[i]->step_options) at_exts[i]->step_options(f, t, seed, step);
}

/* ------------------------------------------------------------------ model */

void at_ext_layout_params(at_param_layout *L, int where) {
    EACH(L->m, layout_params) e->layout_params(L, where);
}

void at_ext_layout_acts(attend_model *m, at_act_layout *L) {
    EACH(m, layout_acts) e->layout_acts(m, L);
}

/* state bytes of one attached extension: at least 16 (a state pointer marks it attached), 16-byte multiples */
static size_t state_bytes(const at_ext_ops *e) { return (e->state_size + 31) / 16 * 16; }

size_t at_ext_state_size(const attend_model_config *c) {
    size_t n = 0;
    for (int i = 0; i < at_ext_count; i++)
        if (!at_exts[i]->attached || at_exts[i]->attached(c)) n += state_bytes(at_exts[i]);
    return n;
}

void at_ext_place_state(attend_model *m, unsigned char *mem) {
    for (int i = 0; i < at_ext_count; i++) {
        m->ext_state[i] = NULL;
        if (at_exts[i]->attached && !at_exts[i]->attached(&m->cfg)) continue;
        m->ext_state[i] = mem;
        mem += state_bytes(at_exts[i]);
    }
}

void at_ext_init(attend_model *m) {
    EACH(m, init) e->init(m);
}

void at_ext_clone(attend_model *dst, const attend_model *src) {
    EACH(dst, clone) e->clone(dst, src);
}

attend_status at_ext_load(attend_model *m, const attend_vocab *sv, const attend_vocab *tv, attend_error *err) {
    EACH(m, load) TRY(e->load(m, sv, tv, err));
    return ATTEND_OK;
}

void at_ext_release(attend_model *m) {
    EACH(m, release) e->release(m);
}

int at_ext_accepts_targets(const attend_model *m, const attend_batch *b, int n, int t, attend_error *err,
                           attend_status *st) {
    *st = ATTEND_OK;
    EACH(m, accepts_targets) if (e->accepts_targets(m, b, n, t, err, st) || *st) return *st == ATTEND_OK;
    return 0;
}

/* ------------------------------------------------------------------ a pass */

attend_status at_ext_forward_begin(attend_model *m, const attend_batch *b, attend_error *err) {
    EACH(m, forward_begin) TRY(e->forward_begin(m, b, err));
    return ATTEND_OK;
}

void at_ext_begin(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S) {
    EACH(m, begin) e->begin(m, src, src_len, N, S);
}

int at_ext_transforms(const attend_model *m, int site) {
    EACH(m, transforms) if (e->transforms(m, site)) return 1;
    return 0;
}

void at_ext_site(const attend_model *m, attend_real *x, int A, int B, int W, int rows_first, int site) {
    EACH(m, site) e->site(m, x, A, B, W, rows_first, site);
}

void at_ext_site_rows(const attend_model *m, attend_real *x, int N, int pos, int W, int site) {
    EACH(m, site_rows) e->site_rows(m, x, N, pos, W, site);
}

attend_real at_ext_site_factor(const attend_model *m, int site, long row, long pos, long elem) {
    attend_real f = 1;
    EACH(m, site_factor) f *= e->site_factor(m, site, row, pos, elem);
    return f;
}

int at_ext_feeds(const attend_model *m) {
    EACH(m, feeds) if (e->feeds(m)) return 1;
    return 0;
}

void at_ext_feed(attend_model *m, int t, int N, int T) {
    EACH(m, feed) e->feed(m, t, N, T);
}

int at_ext_scores(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *scores, attend_real *saved) {
    EACH(m, scores) if (e->scores(m, t, N, S, q, scores, saved)) return 1;
    return 0;
}

int at_ext_scores_backward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *dq,
                           attend_real *saved) {
    EACH(m, scores_backward) if (e->scores_backward(m, t, N, S, q, dq, saved)) return 1;
    return 0;
}

int at_ext_weights(attend_model *m, int t, int N, int S) {
    EACH(m, weights) if (e->weights(m, t, N, S)) return 1;
    return 0;
}

int at_ext_weights_backward(attend_model *m, int t, int N, int S) {
    EACH(m, weights_backward) if (e->weights_backward(m, t, N, S)) return 1;
    return 0;
}

void at_ext_weights_after(attend_model *m, int t, int N, int S) {
    EACH(m, weights_after) e->weights_after(m, t, N, S);
}

void at_ext_context_backward(attend_model *m, int t, int N, int S) {
    EACH(m, context_backward) e->context_backward(m, t, N, S);
}

void at_ext_weights_grad(attend_model *m, int t, int N, int S) {
    EACH(m, weights_grad) e->weights_grad(m, t, N, S);
}

void at_ext_output(attend_model *m, const int32_t *tgt_out, const int32_t *tgt_len, int N, int S, int T) {
    EACH(m, output) e->output(m, tgt_out, tgt_len, N, S, T);
}

int at_ext_token_loss(const attend_model *m, int n, int t, int T, const attend_real *lp, int width, int y, double *loss,
                      int *best) {
    EACH(m, token_loss) if (e->token_loss(m, n, t, T, lp, width, y, loss, best)) return 1;
    return 0;
}

int at_ext_token_grad(const attend_model *m, int n, int t, int N, attend_real *z, int V, int y, attend_real inv) {
    EACH(m, token_grad) if (e->token_grad(m, n, t, N, z, V, y, inv)) return 1;
    return 0;
}

int at_ext_position_grad(const attend_model *m, attend_real *dscores, const attend_real *lp, int S, int y,
                         attend_real inv) {
    EACH(m, position_grad) if (e->position_grad(m, dscores, lp, S, y, inv)) return 1;
    return 0;
}

void at_ext_loss(attend_model *m, int N, int S, int T, double *loss) {
    EACH(m, loss) *loss += e->loss(m, N, S, T);
}

void at_ext_step_backward(attend_model *m, int t, int N, attend_real inv) {
    EACH(m, step_backward) e->step_backward(m, t, N, inv);
}

const attend_real *at_ext_dist(attend_model *m, int t, int N, int S, int *W) {
    EACH(m, dist) {
        const attend_real *d = e->dist(m, t, N, S, W);
        if (d) return d;
    }
    return NULL;
}

/* --------------------------------------------------------------- decoding */

attend_status at_ext_check_decode(attend_model *const *models, int M, const attend_decode_options *o, const char *who,
                                  attend_error *err) {
    for (int i = 0; i < at_ext_count; i++)
        if (at_exts[i]->check_decode) TRY(at_exts[i]->check_decode(models, M, o, who, err));
    return ATTEND_OK;
}

double at_ext_hyp_score(const attend_decode_options *o, const attend_real *hist, int steps, const attend_real *last,
                        int S) {
    double sum = 0;
    for (int i = 0; i < at_ext_count; i++)
        if (at_exts[i]->hyp_score) sum += at_exts[i]->hyp_score(o, hist, steps, last, S);
    return sum;
}
