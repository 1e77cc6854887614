/*
 * intervene.c — interventions on a trained model (seed 000 §14.5, seed 001,
 * seed 004 §08): hide a saved state, delete or replace an input token and
 * re-encode, or overwrite the attention weights (uniform, permuted, top
 * removed), and measure how the output distribution and the decoded output
 * change. Decode-only: uses the model's activation arena, never its gradients.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/divergence.h"
#include "analysis/intervene.h"
#include "seq2seq/decode.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/encoders/encoder_kind.h"
#include "seq2seq/model.h"

/* ---------------------------------------------------------- weight edits */

void at_weights_edit(attend_real *w, const uint8_t *valid, int S, attend_weight_edit edit, const int32_t *perm) {
    switch (edit) {
    case ATTEND_EDIT_UNIFORM: {
        int n = 0;
        for (int j = 0; j < S; j++) n += !valid || valid[j];
        for (int j = 0; j < S; j++) w[j] = (!valid || valid[j]) ? (attend_real)(1.0 / n) : 0;
        break;
    }
    case ATTEND_EDIT_PERMUTE: {
        /* w'_j = w_{perm[j]}; S is small (a source sentence), so a stack copy in
         * chunks keeps this allocation-free */
        attend_real tmp[256];
        if (S <= 256) {
            memcpy(tmp, w, (size_t)S * sizeof *w);
            for (int j = 0; j < S; j++) w[j] = tmp[perm[j]];
        } else { /* follow the cycles of perm: w'_j = w_{perm[j]} */
            for (int start = 0; start < S; start++) {
                /* a cycle is processed from its smallest index only */
                int k = perm[start], smallest = 1;
                while (k != start) {
                    if (k < start) { smallest = 0; break; }
                    k = perm[k];
                }
                if (!smallest) continue;
                attend_real first = w[start];
                int j = start;
                while (perm[j] != start) {
                    w[j] = w[perm[j]];
                    j = perm[j];
                }
                w[j] = first;
            }
        }
        break;
    }
    case ATTEND_EDIT_DROP_TOP: {
        int top = -1;
        for (int j = 0; j < S; j++)
            if ((!valid || valid[j]) && (top < 0 || w[j] > w[top])) top = j;
        double rest = 0;
        for (int j = 0; j < S; j++)
            if (j != top && (!valid || valid[j])) rest += (double)w[j];
        int n_rest = 0;
        for (int j = 0; j < S; j++) n_rest += j != top && (!valid || valid[j]);
        for (int j = 0; j < S; j++) {
            if (j == top || (valid && !valid[j])) w[j] = 0;
            /* the other weights underflowed to 0: spread the mass evenly */
            else w[j] = rest > 0 ? (attend_real)((double)w[j] / rest) : (attend_real)(1.0 / n_rest);
        }
        break;
    }
    }
}

attend_status attend_weights_edit(attend_real *w, const uint8_t *valid, int S, attend_weight_edit edit,
                                  const int32_t *perm, attend_error *err) {
    const char *who = "attend_weights_edit";
    CHECK(w, err, ATTEND_ERR_NULL, "%s: w [S] is NULL", who);
    CHECK(S >= 1, err, ATTEND_ERR_SHAPE, "%s: S=%d must be >= 1", who, S);
    CHECK(edit >= ATTEND_EDIT_UNIFORM && edit <= ATTEND_EDIT_DROP_TOP, err, ATTEND_ERR_ARG, "%s: unknown edit %d", who,
          (int)edit);
    int n_valid = 0;
    for (int j = 0; j < S; j++) n_valid += !valid || valid[j];
    CHECK(n_valid >= 1, err, ATTEND_ERR_MASKED_ROW, "%s: every one of the %d positions is masked", who, S);
    CHECK(edit != ATTEND_EDIT_DROP_TOP || n_valid >= 2, err, ATTEND_ERR_ARG,
          "%s: removing the top weight needs at least 2 valid positions (%d valid)", who, n_valid);
    for (int j = 0; j < S; j++)
        CHECK(isfinite((double)w[j]), err, ATTEND_ERR_NONFINITE, "%s: w[%d] is not finite", who, j);
    if (edit == ATTEND_EDIT_PERMUTE) {
        CHECK(perm, err, ATTEND_ERR_NULL, "%s: PERMUTE needs perm [S]", who);
        /* a permutation: every index once; valid maps to valid */
        for (int j = 0; j < S; j++) {
            CHECK(perm[j] >= 0 && perm[j] < S, err, ATTEND_ERR_ARG, "%s: perm[%d]=%d outside [0,%d)", who, j,
                  (int)perm[j], S);
            for (int k = 0; k < j; k++)
                CHECK(perm[k] != perm[j], err, ATTEND_ERR_ARG, "%s: perm[%d] and perm[%d] are both %d", who, k, j,
                      (int)perm[j]);
            CHECK(!valid || (valid[j] != 0) == (valid[perm[j]] != 0), err, ATTEND_ERR_ARG,
                  "%s: perm[%d]=%d moves weight between a valid and a masked position", who, j, (int)perm[j]);
        }
    }
    at_weights_edit(w, valid, S, edit, perm);
    return at_ok(err);
}

void attend_permutation(int32_t *perm, int n, uint64_t seed) {
    if (!perm || n <= 0) return;
    for (int i = 0; i < n; i++) perm[i] = i;
    attend_rng rng;
    attend_rng_seed(&rng, seed);
    for (int i = n - 1; i > 0; i--) {
        int k = (int)(attend_rng_next(&rng) % (uint64_t)(i + 1));
        int32_t t = perm[i];
        perm[i] = perm[k];
        perm[k] = t;
    }
}

const char *attend_intervention_name(attend_intervention_kind kind) {
    switch (kind) {
    case ATTEND_IV_REMOVE_STATE: return "remove-state";
    case ATTEND_IV_DELETE_TOKEN: return "delete-token";
    case ATTEND_IV_REPLACE_TOKEN: return "replace-token";
    case ATTEND_IV_UNIFORM: return "uniform";
    case ATTEND_IV_PERMUTE: return "permute";
    case ATTEND_IV_DROP_TOP: return "drop-top";
    }
    return "unknown";
}

const char *attend_intervention_site_name(attend_intervention_site site) {
    switch (site) {
    case ATTEND_SITE_CROSS: return "cross";
    case ATTEND_SITE_ENCODER_SELF: return "encoder-self";
    }
    return "unknown";
}

/* ------------------------------------------------------ model interventions */

/* log-softmax of logits z [V] into lp [V], in double */
static void log_softmax(double *lp, const attend_real *z, int V) {
    double mx = z[0], sum = 0;
    for (int v = 1; v < V; v++)
        if (z[v] > mx) mx = z[v];
    for (int v = 0; v < V; v++) sum += exp((double)z[v] - mx);
    double lse = mx + log(sum);
    for (int v = 0; v < V; v++) lp[v] = (double)z[v] - lse;
}

/* An edit of every step's attention weights, registered as the model's
 * weight hook: perm [S] for PERMUTE. */
typedef struct {
    attend_weight_edit edit;
    const int32_t *perm;
} weight_edit_hook;

static void edit_weights(void *user, attend_real *w, const uint8_t *valid, int N, int S) {
    const weight_edit_hook *h = user;
    for (int n = 0; n < N; n++) at_weights_edit(w + (size_t)n * S, valid + (size_t)n * S, S, h->edit, h->perm);
}

/* row w [S] with key j hidden: w_k / Σ_{k'≠j valid} w_k' for the other valid
 * keys (uniform over them if their weights underflowed to 0), w_j = 0 */
static void remove_key(attend_real *w, const uint8_t *valid, int S, int j) {
    double rest = 0;
    int n = 0;
    for (int k = 0; k < S; k++)
        if (k != j && (!valid || valid[k])) {
            rest += (double)w[k];
            n++;
        }
    for (int k = 0; k < S; k++) {
        if (k == j || (valid && !valid[k])) w[k] = 0;
        else w[k] = rest > 0 ? (attend_real)((double)w[k] / rest) : (attend_real)(1.0 / n);
    }
}

void at_self_edit_weights(void *user, int layer, attend_real *P, const uint8_t *valid, int N, int H, int S) {
    const at_self_edit *e = user;
    if (e->layer && layer != e->layer - 1) return;
    attend_weight_edit edit = e->kind == ATTEND_IV_UNIFORM   ? ATTEND_EDIT_UNIFORM
                              : e->kind == ATTEND_IV_PERMUTE ? ATTEND_EDIT_PERMUTE
                                                             : ATTEND_EDIT_DROP_TOP;
    for (int n = 0; n < N; n++) {
        const uint8_t *vn = valid ? valid + (size_t)n * S : NULL;
        for (int h = 0; h < H; h++) {
            if (e->head && h != e->head - 1) continue;
            for (int t = 0; t < S; t++) {
                if (vn && !vn[t]) continue; /* a padded query: its row is not read */
                attend_real *w = P + (((size_t)n * H + h) * S + t) * S;
                if (e->kind == ATTEND_IV_REMOVE_STATE) remove_key(w, vn, S, e->position);
                else at_weights_edit(w, vn, S, edit, e->perm);
            }
        }
    }
}

/* Encodes src [S] as one row and applies the saved-state removal, if any. */
static void encode_one(attend_model *m, const int32_t *src, int S, int removed) {
    int32_t len = S;
    at_model_encode(m, src, &len, 1, S);
    if (removed >= 0) m->valid[removed] = 0;
}

void at_step_logp_rows(attend_model *m, int t, int N, int S, int n, double *lp, int W) {
    int Wd, is_logp;
    const attend_real *d = at_model_step_dist(m, t, N, S, &Wd, &is_logp);
    for (int r = 0; r < n; r++, d += Wd, lp += W) {
        if (!is_logp) {
            log_softmax(lp, d, Wd);
            for (int v = Wd; v < W; v++) lp[v] = -INFINITY;
            continue;
        }
        for (int v = 0; v < W; v++) lp[v] = v < Wd ? (double)d[v] : -INFINITY;
    }
}

void at_step_logp(attend_model *m, int t, int S, double *lp, int W) { at_step_logp_rows(m, t, 1, S, 1, lp, W); }

void at_forced_pass(attend_model *m, const int32_t *src, int S, int removed, const int32_t *base, int base_len,
                        double *lp, int W, attend_real *align) {
    int F = m->F, attentive = m->dec->attentive || m->dec->aligns;
    encode_one(m, src, S, removed);
    for (int t = 0; t <= base_len; t++) {
        int32_t y = t == 0 ? ATTEND_BOS : base[t - 1];
        at_model_step(m, t, 1, S, &y, src, NULL, m->acts.step_feat, (size_t)F, 0);
        at_step_logp(m, t, S, lp + (size_t)t * W, W);
        if (align) {
            if (attentive) memcpy(align + (size_t)t * S, m->acts.weights + (size_t)t * S, (size_t)S * sizeof *align);
            else memset(align + (size_t)t * S, 0, (size_t)S * sizeof *align);
        }
    }
}

/* Free-running greedy decoding of one source under the current hook. */
static int greedy_pass(attend_model *m, const int32_t *src, int S, int removed, int max_len, int32_t *out,
                       attend_real *align) {
    int F = m->F, attentive = m->dec->attentive || m->dec->aligns;
    encode_one(m, src, S, removed);
    int32_t y = ATTEND_BOS;
    if (align) memset(align, 0, (size_t)max_len * S * sizeof *align);
    for (int t = 0; t < max_len; t++) {
        at_model_step(m, t, 1, S, &y, src, NULL, m->acts.step_feat, (size_t)F, 0);
        int V, is_logp; /* the output space: the vocabulary, or an extension's (copy: the extended one) */
        const attend_real *z = at_model_step_dist(m, t, 1, S, &V, &is_logp);
        int best = 0;
        for (int v = 1; v < V; v++)
            if (z[v] > z[best]) best = v;
        if (best == ATTEND_EOS) return t;
        if (out) out[t] = best;
        if (align && attentive) memcpy(align + (size_t)t * S, m->acts.weights + (size_t)t * S, (size_t)S * sizeof *align);
        y = best;
    }
    return max_len;
}

attend_status attend_model_intervene(attend_model *m, const int32_t *src, int S, const int32_t *base, int base_len,
                                     int max_len, const attend_intervention *iv, attend_intervention_result *res,
                                     attend_error *err) {
    const char *who = "attend_model_intervene";
    CHECK(m && src && iv && res && (base || base_len == 0), err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !m ? "model" : !src ? "src [S]" : !iv ? "intervention" : !res ? "result" : "base [base_len]");
    const attend_model_config *c = &m->cfg;
    CHECK(m->dec->vocabulary, err, ATTEND_ERR_ARG,
          "%s: a pointer decoder's output is its attention; interventions compare distributions over the "
          "target vocabulary", who);
    CHECK(iv->kind >= ATTEND_IV_REMOVE_STATE && iv->kind <= ATTEND_IV_DROP_TOP, err, ATTEND_ERR_ARG,
          "%s: unknown intervention %d", who, (int)iv->kind);
    int on_weights = iv->kind != ATTEND_IV_DELETE_TOKEN && iv->kind != ATTEND_IV_REPLACE_TOKEN;
    CHECK(iv->site == ATTEND_SITE_CROSS || iv->site == ATTEND_SITE_ENCODER_SELF, err, ATTEND_ERR_ARG,
          "%s: unknown site %d (0 cross, 1 encoder-self)", who, iv->site);
    int self = iv->site == ATTEND_SITE_ENCODER_SELF;
    if (!self) {
        CHECK(iv->layer == 0 && iv->head == 0, err, ATTEND_ERR_ARG,
              "%s: layer=%d head=%d choose encoder self-attention, but the site is cross (the decoder's "
              "attention); set site encoder-self", who, iv->layer, iv->head);
    } else {
        CHECK(on_weights, err, ATTEND_ERR_ARG,
              "%s: %s changes the source itself, not an attention site: site encoder-self takes remove-state, "
              "uniform, permute and drop-top", who, attend_intervention_name(iv->kind));
        CHECK(m->enc->self_weights, err, ATTEND_ERR_ARG,
              "%s: site encoder-self needs an encoder with self-attention, but the model's encoder is %s (the "
              "transformer encoder has)", who, attend_encoder_name(c->encoder));
        int L = c->enc_layers > 0 ? c->enc_layers : 1;
        CHECK(iv->layer >= 0 && iv->layer <= L, err, ATTEND_ERR_ARG,
              "%s: layer=%d outside [0 (every layer), enc_layers=%d]", who, iv->layer, L);
        CHECK(iv->head >= 0 && iv->head <= c->heads, err, ATTEND_ERR_ARG,
              "%s: head=%d outside [0 (every head), heads=%d]", who, iv->head, c->heads);
    }
    CHECK(!(on_weights && !self && !m->dec->attentive), err, ATTEND_ERR_ARG,
          "%s: %s edits a decoder step's attention weights, and decoder '%s' has %s (delete-token and "
          "replace-token work)", who, attend_intervention_name(iv->kind), m->dec->name,
          m->dec->aligns ? "multi-head attention with no single weight row to edit" : "no attention");
    int32_t len1 = S;
    TRY(at_model_check_source(m, src, &len1, 1, S, who, err));
    CHECK(base_len >= 0 && base_len + 1 <= m->Tcap, err, ATTEND_ERR_CAPACITY,
          "%s: base_len=%d: the baseline and its EOS must fit max_tgt_len+1 = %d steps", who, base_len, m->Tcap);
    CHECK(max_len >= 1 && max_len <= m->Tcap, err, ATTEND_ERR_CAPACITY, "%s: max_len=%d outside [1, %d]", who,
          max_len, m->Tcap);
    for (int t = 0; t < base_len; t++)
        CHECK(base[t] >= ATTEND_UNK && base[t] < c->tgt_vocab + (c->copy ? S : 0), err, ATTEND_ERR_ARG,
              "%s: base[%d]=%d is not an output token id in [%d,%d)", who, t, (int)base[t], ATTEND_UNK,
              c->tgt_vocab + (c->copy ? S : 0));
    int positional = iv->kind == ATTEND_IV_REMOVE_STATE || iv->kind == ATTEND_IV_DELETE_TOKEN ||
                     iv->kind == ATTEND_IV_REPLACE_TOKEN;
    if (positional)
        CHECK(iv->position >= 0 && iv->position < S, err, ATTEND_ERR_ARG, "%s: position %d outside [0,%d)", who,
              iv->position, S);
    CHECK(!(iv->kind == ATTEND_IV_REMOVE_STATE || iv->kind == ATTEND_IV_DROP_TOP) || S >= 2, err,
          ATTEND_ERR_MASKED_ROW, "%s: %s on a 1-token source would leave no position to attend to", who,
          attend_intervention_name(iv->kind));
    CHECK(iv->kind != ATTEND_IV_DELETE_TOKEN || S >= 2, err, ATTEND_ERR_ARG,
          "%s: deleting the only token would leave an empty source", who);
    if (iv->kind == ATTEND_IV_REPLACE_TOKEN)
        CHECK(iv->token >= ATTEND_UNK && iv->token < c->src_vocab, err, ATTEND_ERR_ARG,
              "%s: replacement token %d outside [%d,%d)", who, (int)iv->token, ATTEND_UNK, c->src_vocab);

    int V = c->tgt_vocab + (c->copy ? S : 0), steps = base_len + 1; /* copy: the extended vocabulary */
    /* one allocation: the edited source [S], the permutation [S], base and
     * intervened log-probs [steps,V] each */
    size_t bytes = 2 * (size_t)steps * V * sizeof(double) + 2 * (size_t)S * sizeof(int32_t);
    char *mem = malloc(bytes);
    CHECK(mem, err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes", who, bytes);
    double *lp0 = (double *)(void *)mem, *lp1 = lp0 + (size_t)steps * V;
    int32_t *src1 = (int32_t *)(void *)(lp1 + (size_t)steps * V), *perm = src1 + S;

    at_model_analyse(m, NULL, NULL); /* the activations are reused */
    at_forced_pass(m, src, S, -1, base, base_len, lp0, V, NULL);

    int S1 = S, removed = -1;
    at_self_edit self_edit = {iv->kind, iv->layer, iv->head, iv->position, perm};
    memcpy(src1, src, (size_t)S * sizeof *src);
    weight_edit_hook hook = {ATTEND_EDIT_UNIFORM, NULL};
    switch (iv->kind) {
    case ATTEND_IV_REMOVE_STATE: removed = self ? -1 : iv->position; break;
    case ATTEND_IV_DELETE_TOKEN:
        memmove(src1 + iv->position, src1 + iv->position + 1, (size_t)(S - iv->position - 1) * sizeof *src1);
        S1 = S - 1;
        break;
    case ATTEND_IV_REPLACE_TOKEN: src1[iv->position] = iv->token; break;
    case ATTEND_IV_UNIFORM: hook.edit = ATTEND_EDIT_UNIFORM; break;
    case ATTEND_IV_PERMUTE:
        hook.edit = ATTEND_EDIT_PERMUTE;
        attend_permutation(perm, S, iv->seed);
        hook.perm = perm;
        break;
    case ATTEND_IV_DROP_TOP: hook.edit = ATTEND_EDIT_DROP_TOP; break;
    }
    if (self) {
        at_model_analyse_self(m, at_self_edit_weights, &self_edit);
    } else if (on_weights && iv->kind != ATTEND_IV_REMOVE_STATE) {
        at_model_analyse(m, edit_weights, &hook);
    }
    at_forced_pass(m, src1, S1, removed, base, base_len, lp1, V, res->forced_align);
    int del = c->copy && iv->kind == ATTEND_IV_DELETE_TOKEN ? iv->position : -1;
    if (del >= 0) /* copy: the shortened source's copied ids back to the original positions */
        for (int t = 0; t < steps; t++) {
            double *row = lp1 + (size_t)t * V + c->tgt_vocab;
            for (int j = S - 1; j > del; j--) row[j] = row[j - 1];
            row[del] = -INFINITY;
        }

    double tv_sum = 0, kl_sum = 0, js_sum = 0;
    res->tv_max = res->kl_max = res->js_max = 0;
    for (int t = 0; t < steps; t++) {
        const double *a = lp0 + (size_t)t * V, *b = lp1 + (size_t)t * V;
        double tv, kl, js;
        at_logp_divergences(a, b, V, &tv, &kl, &js);
        if (res->tv) res->tv[t] = tv;
        if (res->kl) res->kl[t] = kl;
        if (res->js) res->js[t] = js;
        tv_sum += tv;
        kl_sum += kl;
        js_sum += js;
        if (tv > res->tv_max) res->tv_max = tv;
        if (kl > res->kl_max) res->kl_max = kl;
        if (js > res->js_max) res->js_max = js;
    }
    res->steps = steps;
    res->src_len = S1;
    res->tv_mean = tv_sum / steps;
    res->kl_mean = kl_sum / steps;
    res->js_mean = js_sum / steps;

    /* free-running output under the intervention; the tokens go to a scratch
     * row when the caller did not ask for them */
    int32_t *out = res->out;
    int32_t *scratch = NULL;
    if (!out) {
        scratch = malloc((size_t)max_len * sizeof *scratch);
        if (!scratch) {
            at_model_analyse(m, NULL, NULL);
            free(mem);
            return at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
        }
        out = scratch;
    }
    res->out_len = greedy_pass(m, src1, S1, removed, max_len, out, res->out_align);
    for (int t = 0; del >= 0 && t < res->out_len; t++) /* copied ids name original source positions */
        if (out[t] >= c->tgt_vocab + del) out[t]++;
    res->changed = res->out_len != base_len;
    for (int t = 0; t < res->out_len && !res->changed; t++) res->changed = out[t] != base[t];
    at_model_analyse(m, NULL, NULL);
    free(scratch);
    free(mem);
    return at_ok(err);
}

/* ------------------------------------------------- one attention read-out */

attend_status attend_attention_intervene(const attend_score_config *cfg, const attend_score_params *p,
                                         attend_real *ctx, attend_real *weights, const attend_real *q,
                                         const attend_real *k, const attend_real *v, int S, int Dv,
                                         const attend_intervention *iv, attend_error *err) {
    const char *who = "attend_attention_intervene";
    CHECK(cfg && p && ctx && weights && q && k && v && iv, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !cfg ? "config" : !p ? "params" : !ctx ? "ctx [Dv]" : !weights ? "weights [S]" : !q ? "q [Dq]"
          : !k ? "k [S,Dk]" : !v ? "v [S,Dv]" : "intervention");
    CHECK(S >= 1 && Dv >= 1, err, ATTEND_ERR_SHAPE, "%s: S=%d and Dv=%d must be >= 1", who, S, Dv);
    CHECK(iv->kind == ATTEND_IV_REMOVE_STATE || iv->kind == ATTEND_IV_UNIFORM || iv->kind == ATTEND_IV_PERMUTE ||
              iv->kind == ATTEND_IV_DROP_TOP,
          err, ATTEND_ERR_ARG, "%s: %s needs an encoder to re-run; use attend_model_intervene", who,
          attend_intervention_name(iv->kind));
    if (iv->kind == ATTEND_IV_REMOVE_STATE)
        CHECK(iv->position >= 0 && iv->position < S, err, ATTEND_ERR_ARG, "%s: position %d outside [0,%d)", who,
              iv->position, S);
    CHECK(!(iv->kind == ATTEND_IV_REMOVE_STATE || iv->kind == ATTEND_IV_DROP_TOP) || S >= 2, err,
          ATTEND_ERR_MASKED_ROW, "%s: %s with S=1 would leave no position to attend to", who,
          attend_intervention_name(iv->kind));
    TRY(attend_score_config_check(cfg, err));
    size_t ws = attend_attention_workspace_size(cfg, 1, 1, S);
    CHECK(ws > 0, err, ATTEND_ERR_CAPACITY, "%s: the workspace size overflows", who);
    size_t bytes = ws * sizeof(attend_real) + (size_t)S * (sizeof(uint8_t) + sizeof(int32_t));
    char *mem = malloc(bytes);
    CHECK(mem, err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes", who, bytes);
    attend_real *work = (attend_real *)(void *)mem;
    int32_t *perm = (int32_t *)(void *)(work + ws);
    uint8_t *valid = (uint8_t *)(perm + S);
    for (int j = 0; j < S; j++) valid[j] = !(iv->kind == ATTEND_IV_REMOVE_STATE && j == iv->position);
    attend_status st = attend_attention_forward(cfg, p, ctx, weights, q, k, v, valid, NULL, 0, 1, 1, S, Dv, work, ws, err);
    if (!st && iv->kind != ATTEND_IV_REMOVE_STATE) {
        attend_weight_edit edit = iv->kind == ATTEND_IV_UNIFORM   ? ATTEND_EDIT_UNIFORM
                                  : iv->kind == ATTEND_IV_PERMUTE ? ATTEND_EDIT_PERMUTE
                                                                  : ATTEND_EDIT_DROP_TOP;
        attend_permutation(perm, S, iv->seed);
        st = attend_weights_edit(weights, NULL, S, edit, perm, err);
        if (!st) st = attend_context_forward(ctx, weights, v, 1, 1, S, Dv, err);
    }
    free(mem);
    return st;
}
