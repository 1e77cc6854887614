/*
 * model.c — the recurrent encoder–decoder with attention: configuration,
 * parameters and their layout, activations, create/free, the teacher-forced
 * forward and backward, greedy decoding and forced scoring, and the small
 * interface beam.c and intervene.c decode through. The encoder is in
 * encoder.c; each decoder kind in decoders/<kind>.c, reached only through
 * m->dec (decoders/decoder.h).
 *
 * Dimension letters: see model_internal.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seq2seq/model_internal.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/dropout.h"
#include "seq2seq/copy.h"

/* ------------------------------------------------------------ parameters */

attend_status attend_model_config_check(const attend_model_config *c, attend_error *err) {
    CHECK(c, err, ATTEND_ERR_NULL, "model config is NULL");
    CHECK(c->cell == ATTEND_CELL_GRU || c->cell == ATTEND_CELL_LSTM, err, ATTEND_ERR_ARG,
          "model config: cell=%d is not GRU (0) or LSTM (1)", (int)c->cell);
    CHECK((int)c->decoder >= 0 && (int)c->decoder < at_decoder_count && at_decoders[c->decoder], err,
          ATTEND_ERR_ARG, "model config: decoder=%d is unknown", (int)c->decoder);
    const at_decoder_ops *dec = at_decoders[c->decoder];
    CHECK(c->src_vocab >= 5 && c->src_vocab <= 10000000, err, ATTEND_ERR_SHAPE,
          "model config: src_vocab=%d, must be in [5, 1e7]", c->src_vocab);
    if (!dec->points)
        CHECK(c->tgt_vocab >= 5 && c->tgt_vocab <= 10000000, err, ATTEND_ERR_SHAPE,
              "model config: tgt_vocab=%d, must be in [5, 1e7]", c->tgt_vocab);
    CHECK(c->emb >= 1 && c->emb <= 65536, err, ATTEND_ERR_SHAPE, "model config: emb=%d, must be in [1, 65536]", c->emb);
    CHECK(c->enc_hidden >= 1 && c->enc_hidden <= 32768, err, ATTEND_ERR_SHAPE,
          "model config: enc_hidden=%d, must be in [1, 32768]", c->enc_hidden);
    CHECK(c->enc_layers >= 1 && c->enc_layers <= AT_MAX_LAYERS, err, ATTEND_ERR_SHAPE,
          "model config: enc_layers=%d, must be in [1, %d]", c->enc_layers, AT_MAX_LAYERS);
    CHECK(c->dec_hidden >= 1 && c->dec_hidden <= 65536, err, ATTEND_ERR_SHAPE,
          "model config: dec_hidden=%d, must be in [1, 65536]", c->dec_hidden);
    CHECK(c->max_batch >= 1 && c->max_batch <= 1 << 20, err, ATTEND_ERR_SHAPE,
          "model config: max_batch=%d, must be in [1, 2^20]", c->max_batch);
    CHECK(c->max_src_len >= 1 && c->max_src_len <= 1 << 16, err, ATTEND_ERR_SHAPE,
          "model config: max_src_len=%d, must be in [1, 65536]", c->max_src_len);
    CHECK(c->max_tgt_len >= 1 && c->max_tgt_len <= 1 << 16, err, ATTEND_ERR_SHAPE,
          "model config: max_tgt_len=%d, must be in [1, 65536]", c->max_tgt_len);
    CHECK(c->dec_layers >= 0 && c->dec_layers <= AT_MAX_LAYERS, err, ATTEND_ERR_SHAPE,
          "model config: dec_layers=%d, must be in [0, %d] (0 and 1: one layer)", c->dec_layers, AT_MAX_LAYERS);
    const struct {
        const char *name;
        int v;
    } flags[] = {{"coverage", c->coverage}, {"copy", c->copy}, {"monotonic", c->monotonic}};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        CHECK(flags[i].v == 0 || flags[i].v == 1, err, ATTEND_ERR_ARG, "model config: %s=%d, must be 0 or 1",
              flags[i].name, flags[i].v);
    CHECK((unsigned)c->normalizer <= ATTEND_NORMALIZER_ENTMAX15, err, ATTEND_ERR_ARG,
          "model config: normalizer=%d is not softmax (0), sparsemax (1) or entmax15 (2)", (int)c->normalizer);
    /* what does not combine, naming both */
    CHECK(!c->coverage || dec->attentive, err, ATTEND_ERR_ARG, "model config: coverage with decoder %s, which has no attention",
          attend_decoder_name(c->decoder));
    CHECK(!c->coverage || !dec->points, err, ATTEND_ERR_ARG,
          "model config: coverage with decoder %s: coverage needs a vocabulary decoder with attention (bahdanau, "
          "luong)", attend_decoder_name(c->decoder));
    CHECK(!c->coverage || c->score == ATTEND_SCORE_ADDITIVE, err, ATTEND_ERR_ARG,
          "model config: coverage with score %s: coverage is an input of the additive score", attend_score_name(c->score));
    CHECK(!c->copy || (dec->attentive && !dec->points), err, ATTEND_ERR_ARG,
          "model config: copy with decoder %s: copying needs a vocabulary decoder with attention (bahdanau, luong)",
          attend_decoder_name(c->decoder));
    CHECK(!c->monotonic || (dec->attentive && !dec->points), err, ATTEND_ERR_ARG,
          "model config: monotonic with decoder %s: monotonic attention needs a vocabulary decoder with attention "
          "(bahdanau, luong)", attend_decoder_name(c->decoder));
    CHECK(!c->normalizer || dec->attentive, err, ATTEND_ERR_ARG, "model config: normalizer %s with decoder %s, which has no attention",
          attend_normalizer_name(c->normalizer), attend_decoder_name(c->decoder));
    CHECK(!c->normalizer || !dec->points, err, ATTEND_ERR_ARG,
          "model config: normalizer %s with decoder %s: the pointer's weights are its output distribution, "
          "trained by log-likelihood, which needs softmax", attend_normalizer_name(c->normalizer),
          attend_decoder_name(c->decoder));
    CHECK(!(c->monotonic && c->normalizer), err, ATTEND_ERR_ARG,
          "model config: monotonic with normalizer %s: monotonic attention has its own (sigmoid) weights",
          attend_normalizer_name(c->normalizer));
    if (dec->attentive) {
        attend_score_config sc = {c->score, c->dec_hidden, 2 * c->enc_hidden, c->attn, 1, 0};
        attend_error e2;
        if (attend_score_config_check(&sc, &e2) != ATTEND_OK)
            return at_fail(err, e2.status,
                           "model config: score %d with dec_hidden=%d and encoder width 2*enc_hidden=%d: %s",
                           (int)c->score, c->dec_hidden, 2 * c->enc_hidden, e2.msg);
    }
    return at_ok(err);
}

/*
 * Walks the parameter tensors in their fixed order (docs/FORMAT.md). With
 * record it records names and shapes; with base != NULL it points the fields
 * of v into base. Returns the total count of values.
 */
static size_t layout_tensors(attend_model *m, attend_real *base, at_model_tensors *v, int record) {
    const attend_model_config *c = &m->cfg;
    const at_decoder_ops *dec = m->dec;
    at_param_layout L = {m, base, base ? v : NULL, record, 0, 0};
#define REG(field, nm, d0, d1) at_param_add(&L, L.v ? &L.v->field : NULL, nm, d0, d1)
    char nm[AT_NAME_MAX];
    int D = c->emb, He = c->enc_hidden, E = 2 * He, Hd = c->dec_hidden, G = m->G;
    REG(src_emb, "src_emb.weight", c->src_vocab, D);
    if (!dec->points) REG(tgt_emb, "tgt_emb.weight", c->tgt_vocab, D);
    for (int l = 0; l < c->enc_layers; l++) {
        int I = l == 0 ? D : E;
        for (int dir = 0; dir < 2; dir++) {
            const char *sfx = dir ? "_reverse" : "";
            snprintf(nm, sizeof nm, "encoder.weight_ih_l%d%s", l, sfx);
            REG(enc_wih[l][dir], nm, G * He, I);
            snprintf(nm, sizeof nm, "encoder.weight_hh_l%d%s", l, sfx);
            REG(enc_whh[l][dir], nm, G * He, He);
            snprintf(nm, sizeof nm, "encoder.bias_ih_l%d%s", l, sfx);
            REG(enc_bih[l][dir], nm, G * He, 0);
            snprintf(nm, sizeof nm, "encoder.bias_hh_l%d%s", l, sfx);
            REG(enc_bhh[l][dir], nm, G * He, 0);
        }
    }
    REG(bridge_w, "bridge.weight", Hd, E);
    REG(bridge_b, "bridge.bias", Hd, 0);
    if (dec->attentive) at_dec_layout_attention(&L);
    REG(dec_wih, "decoder.weight_ih", G * Hd, m->Din);
    REG(dec_whh, "decoder.weight_hh", G * Hd, Hd);
    REG(dec_bih, "decoder.bias_ih", G * Hd, 0);
    REG(dec_bhh, "decoder.bias_hh", G * Hd, 0);
    at_dec_stack_layout_params(&L); /* layers 1 .. dec_layers-1 */
    if (dec->layout_params) dec->layout_params(&L);
    if (!dec->points) {
        REG(out_w, "out.weight", c->tgt_vocab, m->F);
        REG(out_b, "out.bias", c->tgt_vocab, 0);
    }
    if (c->copy) { /* copy.c's tensors */
        REG(copy_wc, "copy.w_c", E, 0);
        REG(copy_ws, "copy.w_s", Hd, 0);
        REG(copy_wx, "copy.w_x", D, 0);
        REG(copy_b, "copy.b", 1, 0);
    }
#undef REG
    if (record) m->ntensors = L.count;
    return L.off;
}

/* PyTorch default initialisation: Embedding N(0,1) with the PAD row zero;
 * RNN weights and biases U(±1/sqrt(hidden)); Linear U(±1/sqrt(fan_in)) for
 * weight and bias; additive v U(±1/sqrt(A)). */
static void init_params(attend_model *m, uint64_t seed) {
    attend_rng rng;
    attend_rng_seed(&rng, seed);
    const attend_model_config *c = &m->cfg;
    for (int i = 0; i < m->ntensors; i++) {
        at_tensor_desc *td = &m->desc[i];
        attend_real *x = m->params + td->offset;
        const char *n = td->name;
        if (strstr(n, "_emb.weight")) {
            for (size_t j = 0; j < td->numel; j += 2) { /* Box–Muller pairs */
                double u1 = attend_rng_uniform(&rng), u2 = attend_rng_uniform(&rng);
                double r = sqrt(-2.0 * log(1.0 - u1));
                x[j] = (attend_real)(r * cos(6.283185307179586 * u2));
                if (j + 1 < td->numel) x[j + 1] = (attend_real)(r * sin(6.283185307179586 * u2));
            }
            for (int d = 0; d < c->emb; d++) x[(size_t)ATTEND_PAD * c->emb + d] = 0;
            continue;
        }
        if (!strcmp(n, "attention.r")) { /* monotonic attention's stopping bias */
            x[0] = (attend_real)AT_MONO_R_INIT;
            continue;
        }
        double bound;
        if (!strncmp(n, "encoder.", 8)) bound = 1.0 / sqrt((double)c->enc_hidden);
        else if (!strncmp(n, "decoder.", 8)) bound = 1.0 / sqrt((double)c->dec_hidden);
        else if (!strcmp(n, "attention.v") || !strcmp(n, "attention.b")) bound = 1.0 / sqrt((double)c->attn);
        else if (!strcmp(n, "attention.w_cov")) bound = 1.0; /* nn.Linear(1, A)'s weight: fan_in 1 */
        else if (!strncmp(n, "copy.", 5)) bound = 1.0 / sqrt((double)(m->E + c->dec_hidden + c->emb)); /* one Linear */
        else {
            /* Linear: fan_in is the weight's second dim; a bias uses its weight's */
            int fan_in = td->ndim == 2 ? (int)td->shape[1] : (int)m->desc[i - 1].shape[1];
            bound = 1.0 / sqrt((double)fan_in);
        }
        for (size_t j = 0; j < td->numel; j++)
            x[j] = (attend_real)((2.0 * attend_rng_uniform(&rng) - 1.0) * bound);
    }
}

/* ----------------------------------------------------------- activations */

/* Points every activation buffer into base (or only counts when base is NULL).
 * Returns 0 on size overflow. */
static int layout_acts(attend_model *m, attend_real *base, size_t *total) {
    const attend_model_config *c = &m->cfg;
    size_t N = (size_t)c->max_batch, S = (size_t)c->max_src_len, T = (size_t)m->Tcap;
    size_t D = (size_t)c->emb, He = (size_t)c->enc_hidden, E = 2 * He, Hd = (size_t)c->dec_hidden;
    size_t GHd = (size_t)m->G * Hd, P = (size_t)(m->P > 0 ? m->P : 1), F = (size_t)m->F;
    size_t V = (size_t)(m->dec->points ? 1 : c->tgt_vocab);
    size_t rnn_saved = at_rnn_layer_saved_size(c->cell, c->max_batch, c->max_src_len, c->enc_hidden);
    size_t rnn_scratch = at_rnn_layer_scratch_size(c->cell, c->max_batch, c->max_src_len, c->enc_hidden);
    size_t step_scratch = at_cell_scratch_size(c->cell, c->max_batch, c->dec_hidden);
    size_t cell_w = (size_t)at_cell_saved_width(c->cell, c->dec_hidden);
    size_t sc_saved = m->sc_saved_stride;
    at_acts *a = &m->acts;
    at_act_layout L = {base, 0, 1};
#define BUF(field, count)                                                   \
    do {                                                                    \
        attend_real *p_ = at_act_take(&L, (count));                         \
        if (base) a->field = p_;                                            \
    } while (0)
    /* every product below is of configuration values bounded by the config
     * check, so it fits size_t on 64-bit; at_add_size guards the sums */
    BUF(emb_src, N * S * D);
    for (int l = 0; l < c->enc_layers; l++) {
        BUF(enc_out[l], N * S * E);
        for (int dir = 0; dir < 2; dir++) {
            BUF(enc_saved[l][dir], rnn_saved);
            BUF(enc_hfin[l][dir], N * He);
            BUF(enc_cfin[l][dir], N * He);
        }
    }
    BUF(rnn_scratch, rnn_scratch);
#ifdef ATTEND_THREADS
    BUF(rnn_scratch2, at_rnn_layer_scratch_size(c->cell, c->max_batch < AT_ENC_PAIR_ROWS ? c->max_batch : AT_ENC_PAIR_ROWS,
                                                c->max_src_len, c->enc_hidden));
#endif
    BUF(fin_cat, N * E);
    BUF(kp, N * S * P);
    BUF(states, (T + 1) * N * Hd);
    BUF(cstates, (T + 1) * N * Hd);
    BUF(htilde, (T + 1) * N * Hd);
    BUF(cat, T * N * (E + Hd));
    BUF(ctx, T * N * E);
    BUF(weights, T * N * S);
    BUF(scores, T * N * S);
    BUF(sc_saved, T * (sc_saved > 0 ? sc_saved : 1));
    BUF(dec_saved, T * N * cell_w);
    BUF(emb_tgt, T * N * D);
    BUF(xg_emb, T * N * GHd);
    BUF(xg, N * GHd);
    BUF(step_scratch, step_scratch);
    BUF(feat, N * T * F);
    BUF(logp, N * T * V);
    /* backward */
    BUF(dfeat, N * T * F);
    BUF(dxg_all, T * N * GHd);
    BUF(ds, N * Hd);
    BUF(ds_prev, N * Hd);
    BUF(dcs, N * Hd);
    BUF(dcs_prev, N * Hd);
    BUF(dht, N * Hd);
    BUF(dcat, N * (E + Hd));
    BUF(dctx, N * E);
    BUF(dweights, N * S);
    BUF(dscores, N * S);
    BUF(dkp, N * S * P);
    BUF(denc, N * S * E);
    BUF(denc2, N * S * E);
    BUF(dfin, N * E);
    BUF(dhf, N * He);
    BUF(dhb, N * He);
    BUF(demb, (T * N > N * S ? T * N : N * S) * D);
    BUF(dz, N * Hd);
    /* decoding */
    BUF(step_logits, N * V);
    /* embedding-projection tables */
    size_t GHe = (size_t)m->G * He, Vs = (size_t)c->src_vocab;
    size_t tab_e = m->enc_tab_cap ? Vs * GHe : 0, tab_d = m->dec_tab_cap ? V * GHd : 0;
    BUF(enc_tab, 2 * tab_e);
    BUF(dec_tab, tab_d);
    BUF(dtab, tab_e > tab_d ? tab_e : tab_d);
    /* the decoder kind's own buffers */
    if (m->dec->layout_acts) m->dec->layout_acts(m, &L);
    at_dec_stack_layout_acts(m, &L); /* a stacked decoder's lower layers */
    /* monotonic attention (monotonic.c) */
    size_t mono = c->monotonic ? 1 : 0;
    BUF(mono_p, mono * T * N * S);
    BUF(mono_q, mono * T * N * S);
    BUF(mono_dcarry, mono * N * S);
    BUF(mono_noise, mono * N * S);
    if (c->copy) { /* copy.c's buffers */
        BUF(copy_pgen, T * N);
        BUF(copy_r, T * N);
        BUF(copy_da, T * N);
        BUF(copy_du, T * N);
        BUF(copy_lpy, N * T);
        BUF(copy_dist, N * ((size_t)c->tgt_vocab + S));
    }
    /* inference */
    BUF(step_feat, N * F);
    BUF(row_tmp, N * Hd);
    /* coverage */
    size_t cov_S = m->dec->attentive ? S : 0;
    BUF(cov, (T + 1) * N * cov_S);
    BUF(dcov, N * cov_S);
#undef BUF
    if (!L.ok || L.off > SIZE_MAX / sizeof(attend_real)) return 0;
    *total = L.off;
    return 1;
}

/* -------------------------------------------------------- create / free */

attend_status attend_model_create(attend_model **out, const attend_model_config *cfg,
                                  uint64_t seed, attend_error *err) {
    CHECK(out, err, ATTEND_ERR_NULL, "attend_model_create: out is NULL");
    *out = NULL;
    TRY(attend_model_config_check(cfg, err));
    attend_model *m = calloc(1, sizeof *m);
    CHECK(m, err, ATTEND_ERR_ALLOC, "attend_model_create: out of memory for the model struct");
    m->cfg = *cfg;
    const attend_model_config *c = &m->cfg;
    m->dec = at_decoders[c->decoder];
    m->pointer_exclude = m->dec->points; /* a new pointer model decodes permutations (loading sets the file's) */
    m->G = at_cell_gates(c->cell);
    m->Ld = c->dec_layers > 1 ? c->dec_layers : 1;
    m->E = 2 * c->enc_hidden;
    m->dec->dims(c, m->E, &m->Din, &m->F);
    attend_score_config sc = {c->score, c->dec_hidden, m->E, c->attn, 1, 0};
    m->score = sc;
    m->P = m->dec->attentive ? attend_score_key_width(&m->score) : 0;
    if (m->P > 0) {
        int of = 0;
        m->sc_saved_stride = attend_scores_saved_size(&m->score, c->max_batch, 1, c->max_src_len, &of);
        if (of) {
            free(m);
            return at_fail(err, ATTEND_ERR_SHAPE, "attend_model_create: activation sizes overflow");
        }
    }
    m->Tcap = c->max_tgt_len + 1;
    /* a table is kept when it is no larger than the per-position projections it replaces */
    m->enc_tab_cap = (size_t)c->src_vocab <= (size_t)c->max_batch * c->max_src_len;
    m->dec_tab_cap = !m->dec->points && (size_t)c->tgt_vocab <= (size_t)c->max_batch * m->Tcap;
    m->nparams = layout_tensors(m, NULL, NULL, 1);
    size_t nacts = 0;
    size_t N = (size_t)c->max_batch, S = (size_t)c->max_src_len, T = (size_t)m->Tcap;
    size_t nints = N * S + N + 2 * N * T + N + (S + 1 + 3 * T + 1) + 2 * N + (c->copy ? at_copy_ints(c, m->Tcap) : 0);
    if (!layout_acts(m, NULL, &nacts)) {
        free(m);
        return at_fail(err, ATTEND_ERR_SHAPE, "attend_model_create: activation sizes overflow");
    }
    m->nacts = nacts;
    m->params = calloc(m->nparams, sizeof(attend_real));
    m->grads = calloc(m->nparams, sizeof(attend_real));
    m->act_arena = calloc(nacts, sizeof(attend_real));
    m->valid = calloc(N * S + T * N, 1);
    m->ints = calloc(nints, sizeof(int32_t));
    if (!m->params || !m->grads || !m->act_arena || !m->valid || !m->ints) {
        size_t bytes = (2 * m->nparams + nacts) * sizeof(attend_real);
        attend_model_free(m);
        return at_fail(err, ATTEND_ERR_ALLOC, "attend_model_create: out of memory for %zu bytes of parameters, "
                       "gradients and activations (capacities max_batch=%d, max_src_len=%d, max_tgt_len=%d)", bytes,
                       cfg->max_batch, cfg->max_src_len, cfg->max_tgt_len);
    }
    m->active = m->valid + N * S;
    m->fwd_src = m->ints;
    m->fwd_src_len = m->fwd_src + N * S;
    m->fwd_tgt_in = m->fwd_src_len + N;
    m->fwd_tgt_out = m->fwd_tgt_in + N * T;
    m->fwd_tgt_len = m->fwd_tgt_out + N * T;
    m->score_ids = m->fwd_tgt_len + N;
    m->mono_pos = m->score_ids + (S + 1 + 3 * T + 1);
    if (c->copy) {
        at_copy_place_ints(m, m->mono_pos + 2 * N);
        at_copy_default_map(m);
    }
    layout_tensors(m, m->params, &m->p, 0);
    layout_tensors(m, m->grads, &m->g, 0);
    layout_acts(m, m->act_arena, &nacts);
    init_params(m, seed);
    *out = m;
    return at_ok(err);
}

void attend_model_free(attend_model *m) {
    if (!m) return;
    free(m->params);
    free(m->grads);
    free(m->act_arena);
    free(m->valid);
    free(m->ints);
    free(m->beam_mem);
    free(m->qmem);
    free(m->guide_ref);
    at_model_packs_free(m);
    free(m);
}

const attend_model_config *attend_model_get_config(const attend_model *m) { return m ? &m->cfg : NULL; }

attend_status attend_model_set_pointer_exclude(attend_model *m, int on, attend_error *err) {
    CHECK(m, err, ATTEND_ERR_NULL, "attend_model_set_pointer_exclude: model is NULL");
    CHECK(on == 0 || on == 1, err, ATTEND_ERR_ARG, "attend_model_set_pointer_exclude: on=%d is not 0 or 1", on);
    CHECK(!on || m->dec->points, err, ATTEND_ERR_ARG,
          "attend_model_set_pointer_exclude: the %s decoder does not point (only decoder=pointer excludes positions)",
          m->dec->name);
    m->pointer_exclude = on;
    m->fwd_ready = 0;
    return at_ok(err);
}

int attend_model_pointer_exclude(const attend_model *m) { return m ? m->pointer_exclude : 0; }

attend_status attend_model_set_label_smoothing(attend_model *m, double eps, attend_error *err) {
    CHECK(m, err, ATTEND_ERR_NULL, "attend_model_set_label_smoothing: model is NULL");
    CHECK(isfinite(eps) && eps >= 0 && eps < 1, err, ATTEND_ERR_ARG,
          "attend_model_set_label_smoothing: label_smoothing=%g, must be in [0, 1)", eps);
    CHECK(eps == 0 || !m->cfg.copy, err, ATTEND_ERR_ARG,
          "attend_model_set_label_smoothing: label_smoothing=%g with a copy model: smoothing over the extended "
          "vocabulary is not defined here", eps);
    m->ls = eps;
    m->fwd_ready = 0;
    return at_ok(err);
}
int attend_model_tensor_count(const attend_model *m) { return m ? m->ntensors : 0; }
size_t attend_model_param_count(const attend_model *m) { return m ? m->nparams : 0; }
attend_real *attend_model_params(attend_model *m) {
    if (!m) return NULL;
    at_model_params_changed(m); /* the caller may write through it */
    return m->params;
}
attend_real *attend_model_grads(attend_model *m) { return m ? m->grads : NULL; }

void attend_model_zero_grad(attend_model *m) {
    if (m) memset(m->grads, 0, m->nparams * sizeof *m->grads);
}

static void fill_tensor(const attend_model *m, int i, attend_model_tensor *t) {
    const at_tensor_desc *td = &m->desc[i];
    /* t->data is writable: the packed copies are refreshed at the next product */
    at_model_params_changed((attend_model *)m);
    t->name = td->name;
    t->ndim = td->ndim;
    t->shape[0] = td->shape[0];
    t->shape[1] = td->shape[1];
    t->numel = td->numel;
    t->data = m->params + td->offset;
    t->grad = m->grads + td->offset;
}

attend_status attend_model_tensor_get(const attend_model *m, int i, attend_model_tensor *t,
                                      attend_error *err) {
    CHECK(m && t, err, ATTEND_ERR_NULL, "attend_model_tensor_get: %s is NULL", !m ? "model" : "t");
    CHECK(i >= 0 && i < m->ntensors, err, ATTEND_ERR_ARG,
          "attend_model_tensor_get: index %d outside [0,%d)", i, m->ntensors);
    fill_tensor(m, i, t);
    return at_ok(err);
}

attend_status attend_model_tensor_find(const attend_model *m, const char *name,
                                       attend_model_tensor *t, attend_error *err) {
    CHECK(m && name && t, err, ATTEND_ERR_NULL, "attend_model_tensor_find: %s is NULL",
          !m ? "model" : !name ? "name" : "t");
    for (int i = 0; i < m->ntensors; i++)
        if (!strcmp(m->desc[i].name, name)) {
            fill_tensor(m, i, t);
            return at_ok(err);
        }
    return at_fail(err, ATTEND_ERR_ARG, "attend_model_tensor_find: this model has no tensor '%s'", name);
}

/* ------------------------------------------------------- encode and step */

attend_status at_model_check_source(const attend_model *m, const int32_t *src, const int32_t *src_len,
                                    int N, int S, const char *who, attend_error *err) {
    const attend_model_config *c = &m->cfg;
    CHECK(N >= 1 && N <= c->max_batch, err, ATTEND_ERR_CAPACITY, "%s: batch of %d rows, model capacity max_batch=%d",
          who, N, c->max_batch);
    CHECK(S >= 1 && S <= c->max_src_len, err, ATTEND_ERR_CAPACITY,
          "%s: source length %d, model capacity max_src_len=%d", who, S, c->max_src_len);
    for (int n = 0; n < N; n++) {
        CHECK(src_len[n] >= 1 && src_len[n] <= S, err, ATTEND_ERR_SHAPE,
              "%s: row %d: source length %d outside [1,%d] (an empty source has nothing to attend to)", who, n,
              (int)src_len[n], S);
        for (int j = 0; j < src_len[n]; j++) {
            int32_t id = src[(size_t)n * S + j];
            CHECK(id >= 0 && id < c->src_vocab && id != ATTEND_PAD, err, ATTEND_ERR_ARG,
                  "%s: row %d position %d: source id %d outside the vocabulary [1,%d) or PAD", who, n, j, (int)id,
                  c->src_vocab);
        }
    }
    return ATTEND_OK;
}

void at_model_encode(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S) {
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    at_encoder_forward(m, src, src_len, N, S);
    /* decoder inputs: tab [Vt,G*Hd] = tgt_emb W_ih[:, :D]ᵀ + b_ih, worth it when a
     * decode of up to Tcap steps projects more rows than the table has
     * (attend_model_forward decides again for its T) */
    int D = c->emb, Vt = c->tgt_vocab, GHd = m->G * c->dec_hidden;
    const int tab_kept = m->infer && m->dec_tab_gen == m->pack_gen + 1; /* an earlier decode's, same parameters */
    m->dec_tab_on = m->dec_tab_cap && (Vt < N * m->Tcap || tab_kept) && !m->dropping; /* dropout: embeddings dropped */
    if (m->dec_tab_on && !tab_kept) {
        for (int v = 0; v < Vt; v++) memcpy(a->dec_tab + (size_t)v * GHd, m->p.dec_bih, (size_t)GHd * sizeof(attend_real));
        at_gemm(0, 1, Vt, GHd, D, 1, m->p.tgt_emb, D, m->p.dec_wih, m->Din, 1, a->dec_tab, GHd);
    }
    m->dec_tab_gen = m->infer && m->dec_tab_on ? m->pack_gen + 1 : 0;
    if (m->dec->begin) m->dec->begin(m, N, S);
    if (c->copy) at_copy_begin(m, src, src_len, N, S);
}

/* Embedding rows of the decoder inputs y_in [N] into rows [N,D]: the target
 * embedding, or (a pointing kind) the source embedding at the previous
 * position, BOS's at the start. */
static void gather_dec_inputs(const attend_model *m, attend_real *rows, const int32_t *y_in, const int32_t *src,
                              int N, int S) {
    int D = m->cfg.emb;
    for (int n = 0; n < N; n++) {
        const attend_real *e;
        if (m->dec->points) {
            int32_t pos = y_in[n];
            int32_t id = pos >= 0 && pos < S ? src[(size_t)n * S + pos] : ATTEND_BOS;
            e = m->p.src_emb + (size_t)id * D;
        } else {
            e = m->p.tgt_emb + (size_t)at_copy_input_id(m, y_in[n]) * D;
        }
        memcpy(rows + (size_t)n * D, e, D * sizeof(attend_real));
    }
}

void at_model_step(attend_model *m, int t, int N, int S, const int32_t *y_in, const int32_t *src,
                   const uint8_t *active, attend_real *feat_row, size_t feat_stride, int emb_done) {
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    int D = c->emb, GHd = m->G * c->dec_hidden, Din = m->Din;
    /* decoding (nothing reads xg_emb back) writes the embedding part straight into xg */
    attend_real *xg_emb = m->infer && !emb_done ? a->xg : a->xg_emb + (size_t)(m->infer ? 0 : t) * N * GHd;
    if (!emb_done) {
        attend_real *rows = a->emb_tgt + (size_t)t * N * D;
        gather_dec_inputs(m, rows, y_in, src, N, S);
        /* scheduled sampling's step-by-step inputs: the same mask as the
         * whole-grid dropout of attend_model_forward (its backward applies that) */
        if (m->dropping && !m->infer) at_dropout_rows(m, rows, N, t, D, AT_DROP_DEC_IN);
        if (m->dec_tab_on) { /* xg_emb = dec_tab[y] */
            for (int n = 0; n < N; n++)
                memcpy(xg_emb + (size_t)n * GHd, a->dec_tab + (size_t)at_copy_input_id(m, y_in[n]) * GHd,
                       (size_t)GHd * sizeof *xg_emb);
        } else { /* xg_emb = rows W_ih[:, :D]ᵀ + b_ih */
            at_model_linear(m, N, GHd, D, rows, D, m->p.dec_wih, Din, 0, xg_emb, GHd);
            at_rows_add(xg_emb, m->p.dec_bih, (size_t)N, GHd);
        }
    }
    if (xg_emb != a->xg) memcpy(a->xg, xg_emb, (size_t)N * GHd * sizeof(attend_real));
    m->step_y_in = y_in; /* POINTER's exclusion mask reads the previous positions */
    m->step_S = S;
    m->dec->step_forward(m, t, N, S, active, feat_row, feat_stride);
}

/* ------------------------------------------------- teacher-forced forward */

static attend_status check_batch(const attend_model *m, const attend_batch *b, attend_error *err) {
    const char *who = "attend_model_forward";
    const attend_model_config *c = &m->cfg;
    int pointer = m->dec->points;
    CHECK(b->src && b->src_len && b->tgt_in && b->tgt_out && b->tgt_len, err, ATTEND_ERR_NULL,
          "%s: batch arrays are NULL (attend_batch_alloc)", who);
    TRY(at_model_check_source(m, b->src, b->src_len, b->N, b->S, who, err));
    CHECK(b->T >= 1 && b->T <= m->Tcap, err, ATTEND_ERR_CAPACITY,
          "%s: %d decoder steps, model capacity is max_tgt_len+1 = %d", who, b->T, m->Tcap);
    for (int n = 0; n < b->N; n++) {
        int tl = b->tgt_len[n];
        CHECK(tl >= 1 && tl <= b->T, err, ATTEND_ERR_SHAPE, "%s: row %d: target steps %d outside [1,%d]", who, n, tl,
              b->T);
        for (int t = 0; t < b->T; t++) {
            int32_t yi = b->tgt_in[(size_t)n * b->T + t], yo = b->tgt_out[(size_t)n * b->T + t];
            if (!pointer && c->copy && (yi >= c->tgt_vocab || yo >= c->tgt_vocab)) { /* copied ids */
                const int32_t *srow = b->src + (size_t)n * b->S;
                int sl = b->src_len[n];
                for (int k = 0; k < 2; k++) {
                    int32_t y = k ? yo : yi, j = y - c->tgt_vocab;
                    CHECK(y < c->tgt_vocab || (j < sl && at_copy_ext_of(m, srow, sl, j) == y), err, ATTEND_ERR_ARG,
                          "%s: row %d step %d: copied id %d = %d + source position %d, which is not that row's "
                          "extended id of a source token (a position < %d holding the first occurrence of a token "
                          "the target vocabulary lacks)", who, n, t, (int)y, c->tgt_vocab, (int)j, sl);
                }
                CHECK(yi >= 0 && yo >= 0, err, ATTEND_ERR_ARG, "%s: row %d step %d: target ids %d -> %d are negative",
                      who, n, t, (int)yi, (int)yo);
            } else if (!pointer) {
                CHECK(yi >= 0 && yi < c->tgt_vocab && yo >= 0 && yo < c->tgt_vocab, err, ATTEND_ERR_ARG,
                      "%s: row %d step %d: target ids %d -> %d outside the vocabulary [0,%d)", who, n, t, (int)yi,
                      (int)yo, c->tgt_vocab);
                CHECK(t >= tl || yo != ATTEND_PAD, err, ATTEND_ERR_ARG,
                      "%s: row %d step %d: PAD as a target inside the target length %d", who, n, t, tl);
            } else {
                int sl = b->src_len[n];
                CHECK(yi >= -1 && yi < sl && yo >= -1 && yo < sl, err, ATTEND_ERR_ARG,
                      "%s: row %d step %d: pointer positions %d -> %d outside [-1,%d)", who, n, t, (int)yi, (int)yo,
                      sl);
                CHECK(t >= tl || yo >= 0, err, ATTEND_ERR_ARG,
                      "%s: row %d step %d: no target position inside the target length %d", who, n, t, tl);
                CHECK(!m->pointer_exclude || tl <= sl, err, ATTEND_ERR_ARG,
                      "%s: row %d: %d target positions from %d source positions (pointer_exclude: a position "
                      "is used once)", who, n, tl, sl);
                if (m->pointer_exclude && t < tl) /* the mask hides every earlier input position */
                    for (int u = 1; u <= t; u++)
                        CHECK(b->tgt_in[(size_t)n * b->T + u] != yo, err, ATTEND_ERR_ARG,
                              "%s: row %d step %d: target position %d was already chosen at step %d "
                              "(pointer_exclude: a position is used once)", who, n, t, (int)yo, u - 1);
            }
        }
    }
    return ATTEND_OK;
}

static double row_entropy(const attend_real *w, int S) {
    double h = 0;
    for (int j = 0; j < S; j++)
        if (w[j] > 0) h -= (double)w[j] * log((double)w[j]);
    return h;
}

attend_status attend_model_forward(attend_model *m, const attend_batch *b, attend_tf_stats *stats,
                                   attend_error *err) {
    CHECK(m && b, err, ATTEND_ERR_NULL, "attend_model_forward: %s is NULL", !m ? "model" : "batch");
    m->fwd_ready = 0;
    /* a training step's forward (and anything a caller wrote into the
     * parameters since the last one): its backward reuses these packings */
    at_model_params_changed(m);
    attend_status bad = check_batch(m, b, err);
    if (!bad) bad = at_guide_begin(m, b, err);
    if (bad) {
        m->mono_noise_on = 0; /* a trainer's noise is for this forward only */
        return bad;
    }
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    int N = b->N, S = b->S, T = b->T, D = c->emb, F = m->F, GHd = m->G * c->dec_hidden;
    int pointer = m->dec->points;
    /* the training switches of this forward, kept for its backward */
    m->fwd_drop_p = m->drop_p;
    m->fwd_drop_key = m->drop_key;
    m->fwd_drop_row0 = m->drop_row0;
    m->fwd_ls = m->ls;
    m->dropping = m->fwd_drop_p > 0;
    memcpy(m->fwd_src, b->src, (size_t)N * S * sizeof(int32_t));
    memcpy(m->fwd_src_len, b->src_len, (size_t)N * sizeof(int32_t));
    memcpy(m->fwd_tgt_out, b->tgt_out, (size_t)N * T * sizeof(int32_t));
    memcpy(m->fwd_tgt_len, b->tgt_len, (size_t)N * sizeof(int32_t));
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            m->fwd_tgt_in[(size_t)t * N + n] = at_copy_input_id(m, b->tgt_in[(size_t)n * T + t]); /* copy: <unk> */
            m->active[(size_t)t * N + n] = t < b->tgt_len[n];
        }
    at_model_encode(m, b->src, b->src_len, N, S);
    /* scheduled sampling (sampling.c): each step's inputs are chosen after
     * the step before, so their projections are made step by step */
    int ss = m->ss_prob > 0 && !pointer;
    /* every step's input embedding projection in one GEMM:
     * xg_emb [T*N,G*Hd] = emb_tgt [T*N,D] W_ih[:, :D]ᵀ + b_ih */
    for (int t = 0; !ss && t < T; t++)
        gather_dec_inputs(m, a->emb_tgt + (size_t)t * N * D, m->fwd_tgt_in + (size_t)t * N, b->src, N, S);
    if (m->dropping) at_dropout_grid(m, a->emb_tgt, T, N, D, 0, AT_DROP_DEC_IN); /* dec_tab_on is 0 */
    m->dec_tab_on = m->dec_tab_on && c->tgt_vocab < T * N;
    if (ss) {
        /* at_model_step below */
    } else if (m->dec_tab_on) { /* rows of dec_tab (at_model_encode), one per token */
        for (size_t r = 0; r < (size_t)T * N; r++)
            memcpy(a->xg_emb + r * GHd, a->dec_tab + (size_t)m->fwd_tgt_in[r] * GHd, (size_t)GHd * sizeof(attend_real));
    } else {
        at_model_linear(m, T * N, GHd, D, a->emb_tgt, D, m->p.dec_wih, m->Din, 0, a->xg_emb, GHd);
        at_rows_add(a->xg_emb, m->p.dec_bih, (size_t)T * N, GHd);
    }
    m->mono_expected = !m->mono_scoring; /* MONOTONIC: training's expected alignment */
    for (int t = 0; t < T; t++) {
        if (ss && t > 0) at_ss_feed(m, t, N, T);
        at_model_step(m, t, N, S, m->fwd_tgt_in + (size_t)t * N, b->src, m->active + (size_t)t * N,
                      a->feat + (size_t)t * F, (size_t)T * F, !ss);
    }
    m->mono_expected = m->mono_noise_on = 0;
    /* the features are dropped after every step ran: scheduled sampling's
     * predictions (at_ss_feed) read them undropped, as decoding would */
    if (m->dropping && !pointer) at_dropout_grid(m, a->feat, N, T, F, 1, AT_DROP_FEAT);
    m->dropping = 0;

    double loss = 0, entropy = 0;
    double ls = m->fwd_ls; /* label smoothing: the loss of the target (1-ε) onehot + ε uniform */
    int count = 0, correct = 0, seq_ok = 0, ent_rows = 0;
    if (!pointer) {
        int V = c->tgt_vocab;
        /* logits [N*T,V] = feat [N*T,F] W_oᵀ + b_o, then log-softmax per row */
        at_model_linear(m, N * T, V, F, a->feat, F, m->p.out_w, F, 0, a->logp, V);
        for (size_t r = 0; r < (size_t)N * T; r++) {
            attend_real *z = a->logp + r * V;
            /* the maximum of the biased logits: a shift taken before the bias
             * could exceed them all, underflow every exp to 0 and make the
             * loss -inf */
            for (int v = 0; v < V; v++) z[v] += m->p.out_b[v];
            attend_real mx = z[0];
            for (int v = 1; v < V; v++)
                if (z[v] > mx) mx = z[v];
            double sum = 0;
            for (int v = 0; v < V; v++) sum += exp((double)z[v] - (double)mx);
            double lse = (double)mx + log(sum);
            for (int v = 0; v < V; v++) z[v] = (attend_real)((double)z[v] - lse);
        }
        if (c->copy) at_copy_forward(m, b->tgt_out, b->tgt_len, N, S, T);
    }
    for (int n = 0; n < N; n++) {
        int all_right = 1;
        for (int t = 0; t < b->tgt_len[n]; t++) {
            int32_t y = b->tgt_out[(size_t)n * T + t];
            const attend_real *lp;
            int width;
            if (!pointer) {
                lp = a->logp + ((size_t)n * T + t) * c->tgt_vocab;
                width = c->tgt_vocab;
            } else {
                lp = a->scores + ((size_t)t * N + n) * S;
                width = S;
            }
            int best = 0;
            if (c->copy) { /* the mixture (copy.c; label smoothing is refused with copy) */
                loss -= m->acts.copy_lpy[(size_t)n * T + t];
                best = m->copy_best[(size_t)n * T + t];
            } else {
                if (ls > 0) { /* uniform over the classes (POINTER: over the positions not masked) */
                    double sum = 0;
                    int k = 0;
                    for (int v = 0; v < width; v++)
                        if (isfinite(lp[v])) sum += (double)lp[v], k++;
                    loss -= (1 - ls) * (double)lp[y] + ls * sum / k;
                } else {
                    loss -= lp[y];
                }
                for (int v = 1; v < width; v++)
                    if (lp[v] > lp[best]) best = v;
            }
            if (best == y) correct++;
            else all_right = 0;
            count++;
            if (m->dec->attentive) {
                entropy += row_entropy(a->weights + ((size_t)t * N + n) * S, S);
                ent_rows++;
            }
        }
        seq_ok += all_right;
    }
    loss += at_cov_loss(m, N, S, T); /* λ Σ min(α, cov); 0 without a coverage loss */
    loss += m->guide * at_guide_loss(m, N, S, T); /* guided alignment (guide.c); 0 when off */
    m->fwd_N = N;
    m->fwd_S = S;
    m->fwd_T = T;
    m->fwd_count = count;
    m->fwd_ready = 1;
    if (stats) {
        stats->loss = loss / count;
        stats->tokens = count;
        stats->correct_tokens = correct;
        stats->seqs = N;
        stats->correct_seqs = seq_ok;
        stats->attn_entropy = ent_rows ? entropy / ent_rows : 0;
    }
    return at_ok(err);
}

/* -------------------------------------------------------------- backward */

attend_status attend_model_backward(attend_model *m, attend_error *err) {
    CHECK(m, err, ATTEND_ERR_NULL, "attend_model_backward: model is NULL");
    CHECK(m->fwd_ready, err, ATTEND_ERR_ARG, "attend_model_backward: no forward pass to differentiate "
                                             "(call attend_model_forward first)");
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    int N = m->fwd_N, S = m->fwd_S, T = m->fwd_T, count = m->fwd_count;
    int D = c->emb, E = m->E, Hd = c->dec_hidden, GHd = m->G * Hd, F = m->F, Din = m->Din;
    int pointer = m->dec->points;
    attend_real inv = (attend_real)(1.0 / count);

    /* loss = −(1/count) Σ logp[y] over counted steps ⇒ dlogits = (p − onehot)/count;
     * with label smoothing ε: −(1/count) Σ_v q_v logp[v], q = (1−ε) onehot + ε/V,
     * ⇒ dlogits = (p − q)/count */
    double ls = m->fwd_ls;
    if (!pointer) {
        int V = c->tgt_vocab;
        attend_real *dlogits = a->logp; /* p − onehot in place; logp is not needed again */
        for (int n = 0; n < N; n++)
            for (int t = 0; t < T; t++) {
                attend_real *z = dlogits + ((size_t)n * T + t) * V;
                if (t >= m->fwd_tgt_len[n]) {
                    memset(z, 0, V * sizeof *z);
                    continue;
                }
                int32_t y = m->fwd_tgt_out[(size_t)n * T + t];
                if (c->copy) {
                    /* copy: −log P(y) of the mixture ⇒ dlogits = r (p − onehot)/count (copy.c) */
                    attend_real sc = inv * a->copy_r[(size_t)t * N + n];
                    for (int v = 0; v < V; v++) z[v] = (attend_real)exp((double)z[v]) * sc;
                    if (y < V) z[y] -= sc;
                } else if (ls > 0) {
                    attend_real qv = (attend_real)(ls / V);
                    for (int v = 0; v < V; v++) z[v] = ((attend_real)exp((double)z[v]) - qv) * inv;
                    z[y] -= (attend_real)(1 - ls) * inv;
                } else {
                    for (int v = 0; v < V; v++) z[v] = (attend_real)exp((double)z[v]) * inv;
                    z[y] -= inv;
                }
            }
        /* forward: logits = feat W_oᵀ + b_o */
        at_gemm(1, 0, V, F, N * T, 1, dlogits, V, a->feat, F, 1, m->g.out_w, F);
        at_rows_sum(m->g.out_b, dlogits, (size_t)N * T, V);
        at_gemm(0, 0, N * T, F, V, 1, dlogits, V, m->p.out_w, F, 0, a->dfeat, F);
        at_dropout_grid(m, a->dfeat, N, T, F, 1, AT_DROP_FEAT); /* forward: feat = mask ⊙ features */
    }
    memset(a->ds, 0, (size_t)N * Hd * sizeof(attend_real));
    memset(a->dcs, 0, (size_t)N * Hd * sizeof(attend_real));
    memset(a->dht, 0, (size_t)N * Hd * sizeof(attend_real));
    memset(a->dkp, 0, (size_t)N * S * (m->P > 0 ? m->P : 1) * sizeof(attend_real));
    memset(a->denc, 0, (size_t)N * S * E * sizeof(attend_real));
    memset(a->dfin, 0, (size_t)N * E * sizeof(attend_real));
    for (int t = T - 1; t >= 0; t--) {
        attend_real *dxg = a->dxg_all + (size_t)t * N * GHd;
        const attend_real *dfeat_t = a->dfeat + (size_t)t * F; /* row n at + n*T*F */
        memset(dxg, 0, (size_t)N * GHd * sizeof *dxg);
        memset(a->ds_prev, 0, (size_t)N * Hd * sizeof(attend_real));
        memset(a->dcs_prev, 0, (size_t)N * Hd * sizeof(attend_real));
        if (c->copy) at_copy_step_backward(m, t, N, inv); /* d s_t, w_*, b, x_t of p_gen */
        m->dec->step_backward(m, t, N, S, dfeat_t, (size_t)T * F, dxg);
        /* d s_{t-1} becomes the running state gradient */
        attend_real *tmp = a->ds;
        a->ds = a->ds_prev;
        a->ds_prev = tmp;
        tmp = a->dcs;
        a->dcs = a->dcs_prev;
        a->dcs_prev = tmp;
    }

    /* decoder input projection for all steps at once:
     * forward: xg = [emb; extra] W_ihᵀ + b_ih; the kind's extra part first */
    if (m->dec->input_backward) m->dec->input_backward(m, T, N);
    if (m->dec_tab_on) {
        /* forward: xg_emb[r] = dec_tab[y_r], dec_tab = tgt_emb W_ih[:, :D]ᵀ + b_ih */
        at_table_backward(m, m->g.tgt_emb, m->g.dec_wih, Din, m->g.dec_bih, a->dxg_all, m->fwd_tgt_in, NULL, 0,
                          (size_t)T * N, c->tgt_vocab, GHd, m->p.tgt_emb, m->p.dec_wih);
    } else if (!pointer) {
        at_gemm(1, 0, GHd, D, T * N, 1, a->dxg_all, GHd, a->emb_tgt, D, 1, m->g.dec_wih, Din);
        at_rows_sum(m->g.dec_bih, a->dxg_all, (size_t)T * N, GHd);
        at_gemm(0, 0, T * N, D, GHd, 1, a->dxg_all, GHd, m->p.dec_wih, Din, 0, a->demb, D);
        at_dropout_grid(m, a->demb, T, N, D, 0, AT_DROP_DEC_IN); /* forward: x = mask ⊙ emb */
        at_embedding_backward(m->g.tgt_emb, a->demb, m->fwd_tgt_in, (size_t)T * N, D);
    } else {
        at_gemm(1, 0, GHd, D, T * N, 1, a->dxg_all, GHd, a->emb_tgt, D, 1, m->g.dec_wih, Din);
        at_rows_sum(m->g.dec_bih, a->dxg_all, (size_t)T * N, GHd);
        at_gemm(0, 0, T * N, D, GHd, 1, a->dxg_all, GHd, m->p.dec_wih, Din, 0, a->demb, D);
        at_dropout_grid(m, a->demb, T, N, D, 0, AT_DROP_DEC_IN); /* forward: x = mask ⊙ emb */
        /* x_t = src_emb[src[n, y_{t-1}]] or src_emb[BOS] at the start */
        for (int t = 0; t < T; t++)
            for (int n = 0; n < N; n++) {
                int32_t pos = m->fwd_tgt_in[(size_t)t * N + n];
                int32_t id = pos >= 0 ? m->fwd_src[(size_t)n * S + pos] : ATTEND_BOS;
                const attend_real *dr = a->demb + ((size_t)t * N + n) * D;
                attend_real *dst = m->g.src_emb + (size_t)id * D;
                for (int d = 0; d < D; d++) dst[d] += dr[d];
            }
    }
    at_encoder_backward(m, a->ds, N, S);

    m->fwd_ready = 0; /* the log-probabilities were turned into gradients in place */
    return at_ok(err);
}

