/*
 * model.c — the recurrent encoder–decoder with attention: parameters,
 * teacher-forced forward and backward, greedy decoding. (Beam search lives in
 * beam.c and shares the encoder and the decoder step defined here.)
 *
 * Dimension letters: N batch, S source positions, T decoder steps, D embedding
 * width, H encoder hidden per direction, E = 2H encoder output width, Hd
 * decoder hidden, G gates (3 GRU, 4 LSTM), A attention width, P projected-key
 * width, Din decoder input width, F output feature width, V vocabulary.
 * Per-step buffers are laid out [T,N,...] so one step is contiguous.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seq2seq/model_internal.h"
#include "core/vmath.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* ------------------------------------------------------------ parameters */

static int is_attentive(const attend_model_config *c) {
    return c->decoder == ATTEND_DECODER_BAHDANAU || c->decoder == ATTEND_DECODER_LUONG ||
           c->decoder == ATTEND_DECODER_POINTER;
}

attend_status attend_model_config_check(const attend_model_config *c, attend_error *err) {
    CHECK(c, err, ATTEND_ERR_NULL, "model config is NULL");
    CHECK(c->cell == ATTEND_CELL_GRU || c->cell == ATTEND_CELL_LSTM, err, ATTEND_ERR_ARG,
          "model config: cell=%d is not GRU (0) or LSTM (1)", (int)c->cell);
    CHECK(c->decoder >= ATTEND_DECODER_BAHDANAU && c->decoder <= ATTEND_DECODER_POINTER, err,
          ATTEND_ERR_ARG, "model config: decoder=%d is unknown", (int)c->decoder);
    CHECK(c->src_vocab >= 5 && c->src_vocab <= 10000000, err, ATTEND_ERR_SHAPE,
          "model config: src_vocab=%d, must be in [5, 1e7]", c->src_vocab);
    if (c->decoder != ATTEND_DECODER_POINTER)
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
    if (is_attentive(c)) {
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
 * Walks the parameter tensors in their fixed order. With names != NULL it
 * records names and shapes; with base != NULL it points the fields of v into
 * base. Returns the total count of values.
 */
static size_t layout_tensors(attend_model *m, attend_real *base, at_model_tensors *v, int record) {
    const attend_model_config *c = &m->cfg;
    size_t off = 0;
    int count = 0;
#define REG(field, nm, d0, d1)                                                       \
    do {                                                                             \
        if (record) {                                                                \
            at_tensor_desc *td = &m->desc[count];                                    \
            snprintf(td->name, sizeof td->name, "%s", nm);                           \
            td->ndim = (d1) > 0 ? 2 : 1;                                             \
            td->shape[0] = (d0);                                                     \
            td->shape[1] = (d1) > 0 ? (d1) : 0;                                      \
            td->numel = (size_t)(d0) * (size_t)((d1) > 0 ? (d1) : 1);               \
            td->offset = off;                                                        \
        }                                                                            \
        if (base) v->field = base + off;                                             \
        off += (size_t)(d0) * (size_t)((d1) > 0 ? (d1) : 1);                         \
        count++;                                                                     \
    } while (0)
    char nm[AT_NAME_MAX];
    int D = c->emb, H = c->enc_hidden, E = 2 * H, Hd = c->dec_hidden, G = m->G;
    REG(src_emb, "src_emb.weight", c->src_vocab, D);
    if (c->decoder != ATTEND_DECODER_POINTER) REG(tgt_emb, "tgt_emb.weight", c->tgt_vocab, D);
    for (int l = 0; l < c->enc_layers; l++) {
        int I = l == 0 ? D : E;
        for (int dir = 0; dir < 2; dir++) {
            const char *sfx = dir ? "_reverse" : "";
            snprintf(nm, sizeof nm, "encoder.weight_ih_l%d%s", l, sfx);
            REG(enc_wih[l][dir], nm, G * H, I);
            snprintf(nm, sizeof nm, "encoder.weight_hh_l%d%s", l, sfx);
            REG(enc_whh[l][dir], nm, G * H, H);
            snprintf(nm, sizeof nm, "encoder.bias_ih_l%d%s", l, sfx);
            REG(enc_bih[l][dir], nm, G * H, 0);
            snprintf(nm, sizeof nm, "encoder.bias_hh_l%d%s", l, sfx);
            REG(enc_bhh[l][dir], nm, G * H, 0);
        }
    }
    REG(bridge_w, "bridge.weight", Hd, E);
    REG(bridge_b, "bridge.bias", Hd, 0);
    if (is_attentive(c)) {
        if (c->score == ATTEND_SCORE_GENERAL) REG(attn_W, "attention.W", Hd, E);
        if (c->score == ATTEND_SCORE_ADDITIVE) {
            REG(attn_Wq, "attention.Wq", c->attn, Hd);
            REG(attn_Wk, "attention.Wk", c->attn, E);
            REG(attn_b, "attention.b", c->attn, 0);
            REG(attn_v, "attention.v", c->attn, 0);
        }
    }
    REG(dec_wih, "decoder.weight_ih", G * Hd, m->Din);
    REG(dec_whh, "decoder.weight_hh", G * Hd, Hd);
    REG(dec_bih, "decoder.bias_ih", G * Hd, 0);
    REG(dec_bhh, "decoder.bias_hh", G * Hd, 0);
    if (c->decoder == ATTEND_DECODER_LUONG) REG(comb_w, "combine.weight", Hd, E + Hd);
    if (c->decoder != ATTEND_DECODER_POINTER) {
        REG(out_w, "out.weight", c->tgt_vocab, m->F);
        REG(out_b, "out.bias", c->tgt_vocab, 0);
    }
#undef REG
    if (record) m->ntensors = count;
    return off;
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
        double bound;
        if (!strncmp(n, "encoder.", 8)) bound = 1.0 / sqrt((double)c->enc_hidden);
        else if (!strncmp(n, "decoder.", 8)) bound = 1.0 / sqrt((double)c->dec_hidden);
        else if (!strcmp(n, "attention.v") || !strcmp(n, "attention.b")) bound = 1.0 / sqrt((double)c->attn);
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
    size_t D = (size_t)c->emb, H = (size_t)c->enc_hidden, E = 2 * H, Hd = (size_t)c->dec_hidden;
    size_t GHd = (size_t)m->G * Hd, P = (size_t)(m->P > 0 ? m->P : 1), F = (size_t)m->F;
    size_t V = (size_t)(c->decoder == ATTEND_DECODER_POINTER ? 1 : c->tgt_vocab);
    size_t rnn_saved = at_rnn_layer_saved_size(c->cell, c->max_batch, c->max_src_len, c->enc_hidden);
    size_t rnn_scratch = at_rnn_layer_scratch_size(c->cell, c->max_batch, c->max_src_len, c->enc_hidden);
    size_t step_scratch = at_cell_scratch_size(c->cell, c->max_batch, c->dec_hidden);
    size_t cell_w = (size_t)at_cell_saved_width(c->cell, c->dec_hidden);
    size_t sc_saved = 0;
    if (m->P > 0) {
        int of = 0;
        sc_saved = attend_scores_saved_size(&m->score, c->max_batch, 1, c->max_src_len, &of);
        if (of) return 0;
    }
    at_acts *a = &m->acts;
    size_t off = 0;
    int ok = 1;
#define BUF(field, count)                                                   \
    do {                                                                    \
        size_t cnt_ = (count);                                              \
        if (base) a->field = base + off;                                    \
        if (!at_add_size(off, cnt_, &off)) ok = 0;                          \
    } while (0)
    /* every product below is of configuration values bounded by the config
     * check, so it fits size_t on 64-bit; at_add_size guards the sums */
    BUF(emb_src, N * S * D);
    for (int l = 0; l < c->enc_layers; l++) {
        BUF(enc_out[l], N * S * E);
        for (int dir = 0; dir < 2; dir++) {
            BUF(enc_saved[l][dir], rnn_saved);
            BUF(enc_hfin[l][dir], N * H);
            BUF(enc_cfin[l][dir], N * H);
        }
    }
    BUF(rnn_scratch, rnn_scratch);
#ifdef _OPENMP
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
    BUF(dhf, N * H);
    BUF(dhb, N * H);
    BUF(demb, (T * N > N * S ? T * N : N * S) * D);
    BUF(dz, N * Hd);
    /* decoding */
    BUF(step_logits, N * V);
    /* embedding-projection tables */
    size_t GH = (size_t)m->G * H, Vs = (size_t)c->src_vocab;
    size_t tab_e = m->enc_tab_cap ? Vs * GH : 0, tab_d = m->dec_tab_cap ? V * GHd : 0;
    BUF(enc_tab, 2 * tab_e);
    BUF(dec_tab, tab_d);
    BUF(ctx_proj, c->decoder == ATTEND_DECODER_BAHDANAU ? (N < AT_CTX_PROJ_ROWS ? N : AT_CTX_PROJ_ROWS) * S * GHd : 0);
    BUF(dtab, tab_e > tab_d ? tab_e : tab_d);
#undef BUF
    if (!ok || off > SIZE_MAX / sizeof(attend_real)) return 0;
    *total = off;
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
    m->G = at_cell_gates(c->cell);
    m->E = 2 * c->enc_hidden;
    switch (c->decoder) {
    case ATTEND_DECODER_BAHDANAU:
    case ATTEND_DECODER_NONE: m->Din = c->emb + m->E; m->F = c->dec_hidden + m->E; break;
    case ATTEND_DECODER_LUONG: m->Din = c->emb + c->dec_hidden; m->F = c->dec_hidden; break;
    case ATTEND_DECODER_POINTER: m->Din = c->emb; m->F = 1; break;
    }
    attend_score_config sc = {c->score, c->dec_hidden, m->E, c->attn, 1, 0};
    m->score = sc;
    m->P = is_attentive(c) ? attend_score_key_width(&m->score) : 0;
    m->Tcap = c->max_tgt_len + 1;
    /* a table is kept when it is no larger than the per-position projections it replaces */
    m->enc_tab_cap = (size_t)c->src_vocab <= (size_t)c->max_batch * c->max_src_len;
    m->dec_tab_cap = c->decoder != ATTEND_DECODER_POINTER && (size_t)c->tgt_vocab <= (size_t)c->max_batch * m->Tcap;
    m->nparams = layout_tensors(m, NULL, NULL, 1);
    size_t nacts = 0;
    size_t N = (size_t)c->max_batch, S = (size_t)c->max_src_len, T = (size_t)m->Tcap;
    size_t nints = N * S + N + 2 * N * T + N + (S + 1 + 3 * T + 1);
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
        return at_fail(err, ATTEND_ERR_ALLOC, "attend_model_create: out of memory (%zu bytes of parameters, "
                       "gradients and activations; lower max_batch or the max lengths)", bytes);
    }
    m->active = m->valid + N * S;
    m->fwd_src = m->ints;
    m->fwd_src_len = m->fwd_src + N * S;
    m->fwd_tgt_in = m->fwd_src_len + N;
    m->fwd_tgt_out = m->fwd_tgt_in + N * T;
    m->fwd_tgt_len = m->fwd_tgt_out + N * T;
    m->score_ids = m->fwd_tgt_len + N;
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
    free(m);
}

const attend_model_config *attend_model_get_config(const attend_model *m) { return m ? &m->cfg : NULL; }
int attend_model_tensor_count(const attend_model *m) { return m ? m->ntensors : 0; }
size_t attend_model_param_count(const attend_model *m) { return m ? m->nparams : 0; }
attend_real *attend_model_params(attend_model *m) { return m ? m->params : NULL; }
attend_real *attend_model_grads(attend_model *m) { return m ? m->grads : NULL; }

void attend_model_zero_grad(attend_model *m) {
    if (m) memset(m->grads, 0, m->nparams * sizeof *m->grads);
}

static void fill_tensor(const attend_model *m, int i, attend_model_tensor *t) {
    const at_tensor_desc *td = &m->desc[i];
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

/* ------------------------------------------------------------------ batch */

attend_status attend_batch_alloc(attend_batch *b, int cap_N, int cap_S, int cap_T, attend_error *err) {
    CHECK(b, err, ATTEND_ERR_NULL, "attend_batch_alloc: batch is NULL");
    memset(b, 0, sizeof *b);
    CHECK(cap_N >= 1 && cap_S >= 1 && cap_T >= 1, err, ATTEND_ERR_SHAPE,
          "attend_batch_alloc: capacities N=%d S=%d T=%d must be >= 1", cap_N, cap_S, cap_T);
    size_t ns, nt, total;
    CHECK(at_count(&ns, 2, cap_N, cap_S) && at_count(&nt, 2, cap_N, cap_T) &&
              at_add_size(ns, 2 * nt, &total) && at_add_size(total, 2 * (size_t)cap_N, &total) &&
              total <= SIZE_MAX / sizeof(int32_t),
          err, ATTEND_ERR_SHAPE, "attend_batch_alloc: sizes overflow");
    int32_t *mem = calloc(total, sizeof *mem);
    CHECK(mem, err, ATTEND_ERR_ALLOC, "attend_batch_alloc: out of memory");
    b->src = mem;
    b->src_len = b->src + ns;
    b->tgt_in = b->src_len + cap_N;
    b->tgt_out = b->tgt_in + nt;
    b->tgt_len = b->tgt_out + nt;
    b->cap_N = cap_N;
    b->cap_S = cap_S;
    b->cap_T = cap_T;
    return at_ok(err);
}

void attend_batch_release(attend_batch *b) {
    if (!b) return;
    free(b->src);
    memset(b, 0, sizeof *b);
}

attend_status attend_batch_fill(attend_batch *b, const attend_dataset *d, const int *idx, int n,
                                int pointer, attend_error *err) {
    const char *who = "attend_batch_fill";
    CHECK(b && d && idx, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !b ? "batch" : !d ? "dataset" : "idx");
    CHECK(b->src, err, ATTEND_ERR_ARG, "%s: batch is not allocated (attend_batch_alloc)", who);
    CHECK(n >= 1 && n <= b->cap_N, err, ATTEND_ERR_CAPACITY, "%s: %d rows, capacity is %d", who, n, b->cap_N);
    int S = 0, T = 0;
    for (int i = 0; i < n; i++) {
        const int32_t *src, *tgt;
        int sl, tl;
        TRY(attend_dataset_get(d, idx[i], &src, &sl, &tgt, &tl, err));
        if (sl > S) S = sl;
        if (tl + (pointer ? 0 : 1) > T) T = tl + (pointer ? 0 : 1);
    }
    CHECK(S <= b->cap_S, err, ATTEND_ERR_CAPACITY, "%s: a source has %d tokens, batch capacity is %d", who, S, b->cap_S);
    CHECK(T <= b->cap_T, err, ATTEND_ERR_CAPACITY, "%s: a target needs %d decoder steps, batch capacity is %d",
          who, T, b->cap_T);
    b->N = n;
    b->S = S;
    b->T = T;
    int32_t pad_out = pointer ? -1 : ATTEND_PAD;
    for (int i = 0; i < n; i++) {
        const int32_t *src, *tgt;
        int sl, tl;
        attend_dataset_get(d, idx[i], &src, &sl, &tgt, &tl, NULL);
        int32_t *s = b->src + (size_t)i * S, *ti = b->tgt_in + (size_t)i * T, *to = b->tgt_out + (size_t)i * T;
        for (int j = 0; j < S; j++) s[j] = j < sl ? src[j] : ATTEND_PAD;
        b->src_len[i] = sl;
        if (!pointer) {
            ti[0] = ATTEND_BOS;
            for (int t = 0; t < T; t++) {
                if (t > 0) ti[t] = t - 1 < tl ? tgt[t - 1] : ATTEND_PAD;
                to[t] = t < tl ? tgt[t] : t == tl ? ATTEND_EOS : ATTEND_PAD;
            }
            b->tgt_len[i] = tl + 1;
        } else {
            for (int t = 0; t < T; t++) {
                ti[t] = t == 0 ? -1 : t - 1 < tl ? tgt[t - 1] : -1;
                to[t] = t < tl ? tgt[t] : pad_out;
            }
            b->tgt_len[i] = tl;
        }
    }
    return at_ok(err);
}

/* ---------------------------------------------------------------- encoder */

static void enc_cell(const attend_model *m, const at_model_tensors *w, int l, int dir, at_cell *cell) {
    cell->kind = m->cfg.cell;
    cell->I = l == 0 ? m->cfg.emb : m->E;
    cell->H = m->cfg.enc_hidden;
    cell->W_ih = w->enc_wih[l][dir];
    cell->W_hh = w->enc_whh[l][dir];
    cell->b_ih = w->enc_bih[l][dir];
    cell->b_hh = w->enc_bhh[l][dir];
    cell->q_ih = at_model_qweight(m, cell->W_ih);
    cell->q_hh = at_model_qweight(m, cell->W_hh);
}

static void dec_cell(const attend_model *m, at_cell *cell) {
    cell->kind = m->cfg.cell;
    cell->I = m->Din;
    cell->H = m->cfg.dec_hidden;
    cell->W_ih = m->p.dec_wih;
    cell->W_hh = m->p.dec_whh;
    cell->b_ih = m->p.dec_bih;
    cell->b_hh = m->p.dec_bhh;
    cell->q_ih = at_model_qweight(m, cell->W_ih);
    cell->q_hh = at_model_qweight(m, cell->W_hh);
}

static attend_score_params score_params(const at_model_tensors *w) {
    attend_score_params sp = {w->attn_W, w->attn_Wq, w->attn_Wk, w->attn_b, w->attn_v};
    return sp;
}

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

/* Layer l, direction dir of the encoder over x [N,S,*] (layer 0: the source
 * embeddings, or the per-token table when m->enc_tab_on), using scratch
 * [at_rnn_layer_scratch_size]; writes enc_out[l]'s half dir, enc_hfin/cfin,
 * enc_saved[l][dir] (and the table enc_tab[dir]). */
static void encode_direction(attend_model *m, int l, int dir, const attend_real *x, const int32_t *src,
                             const int32_t *src_len, int N, int S, attend_real *scratch) {
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    int D = c->emb, H = c->enc_hidden, E = m->E, GH = m->G * H, Vs = c->src_vocab;
    at_cell cell;
    enc_cell(m, &m->p, l, dir, &cell);
    if (l == 0 && m->enc_tab_on) {
        /* tab [Vs,G*H] = src_emb W_ihᵀ + b_ih;  xg[n,j] = tab[src[n,j]] (PAD at padding) */
        attend_real *tab = a->enc_tab + (size_t)dir * Vs * GH;
        for (int v = 0; v < Vs; v++) memcpy(tab + (size_t)v * GH, cell.b_ih, (size_t)GH * sizeof *tab);
        at_gemm(0, 1, Vs, GH, D, 1, m->p.src_emb, D, cell.W_ih, D, 1, tab, GH);
        for (int n = 0; n < N; n++)
            for (int j = 0; j < S; j++) {
                int32_t id = j < src_len[n] ? src[(size_t)n * S + j] : ATTEND_PAD;
                memcpy(scratch + ((size_t)n * S + j) * GH, tab + (size_t)id * GH, (size_t)GH * sizeof *tab);
            }
        x = NULL; /* at_rnn_layer_forward reads xg from the scratch */
    }
    (m->infer ? at_rnn_layer_infer : at_rnn_layer_forward)(&cell, dir, a->enc_out[l] + dir * H, E,
                                                           a->enc_hfin[l][dir],
                                                           c->cell == ATTEND_CELL_LSTM ? a->enc_cfin[l][dir] : NULL,
                                                           a->enc_saved[l][dir], x, src_len, NULL, NULL, N, S,
                                                           scratch);
}

void at_model_encode(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S) {
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    int D = c->emb, H = c->enc_hidden, E = m->E, Hd = c->dec_hidden;
    for (int n = 0; n < N; n++)
        for (int j = 0; j < S; j++) {
            int32_t id = j < src_len[n] ? src[(size_t)n * S + j] : ATTEND_PAD;
            memcpy(a->emb_src + ((size_t)n * S + j) * D, m->p.src_emb + (size_t)id * D, D * sizeof(attend_real));
            m->valid[(size_t)n * S + j] = j < src_len[n];
        }
    m->enc_tab_on = m->enc_tab_cap && c->src_vocab < N * S;
    for (int l = 0; l < c->enc_layers; l++) {
        const attend_real *x = l == 0 ? a->emb_src : a->enc_out[l - 1];
        int threaded = 0;
#ifdef _OPENMP
        /* the two directions are independent: one per thread, each streaming
         * its own weights (at batch 1 the layer is a chain of matrix-vector
         * products, bound by reading the weights); products inside run on
         * their thread */
        threaded = a->rnn_scratch2 && N <= AT_ENC_PAIR_ROWS && at_threads((double)N * S * m->G * H * H * 2) > 1;
        if (threaded) {
#pragma omp parallel num_threads(2)
            {
                int nth = omp_get_num_threads(), id = omp_get_thread_num();
                for (int dir = id; dir < 2; dir += nth)
                    encode_direction(m, l, dir, x, src, src_len, N, S, dir ? a->rnn_scratch2 : a->rnn_scratch);
            }
        }
#endif
        if (!threaded)
            for (int dir = 0; dir < 2; dir++) encode_direction(m, l, dir, x, src, src_len, N, S, a->rnn_scratch);
    }
    int top = c->enc_layers - 1;
    for (int n = 0; n < N; n++) {
        memcpy(a->fin_cat + (size_t)n * E, a->enc_hfin[top][0] + (size_t)n * H, H * sizeof(attend_real));
        memcpy(a->fin_cat + (size_t)n * E + H, a->enc_hfin[top][1] + (size_t)n * H, H * sizeof(attend_real));
    }
    /* bridge: s_0 = tanh(fin_cat W_brᵀ + b_br) */
    attend_real *s0 = a->states;
    at_model_linear(m, N, Hd, E, a->fin_cat, E, m->p.bridge_w, E, 0, s0, Hd);
    for (int n = 0; n < N; n++)
        for (int i = 0; i < Hd; i++) {
            attend_real *v = s0 + (size_t)n * Hd + i;
            *v = (attend_real)tanh((double)(*v + m->p.bridge_b[i]));
        }
    memset(a->cstates, 0, (size_t)N * Hd * sizeof(attend_real));
    memset(a->htilde, 0, (size_t)N * Hd * sizeof(attend_real));
    if (m->P > 0) at_model_keys(m, a->kp, a->enc_out[top], N, S);
    /* decoder inputs: tab [Vt,G*Hd] = tgt_emb W_ih[:, :D]ᵀ + b_ih, worth it when a
     * decode of up to Tcap steps projects more rows than the table has
     * (attend_model_forward decides again for its T) */
    int Vt = c->tgt_vocab, GHd = m->G * Hd;
    m->dec_tab_on = m->dec_tab_cap && Vt < N * m->Tcap;
    if (m->dec_tab_on) {
        for (int v = 0; v < Vt; v++) memcpy(a->dec_tab + (size_t)v * GHd, m->p.dec_bih, (size_t)GHd * sizeof(attend_real));
        at_gemm(0, 1, Vt, GHd, D, 1, m->p.tgt_emb, D, m->p.dec_wih, m->Din, 1, a->dec_tab, GHd);
    }
    /* ctx_proj [N,S,G*Hd] = enc_out [N*S,E] W_ih[:, D:]ᵀ (AT_CTX_PROJ_ROWS); padding rows of enc_out are 0 */
    m->ctx_proj_on = m->infer && c->decoder == ATTEND_DECODER_BAHDANAU && N <= AT_CTX_PROJ_ROWS;
    if (m->ctx_proj_on)
        at_model_linear(m, N * S, GHd, E, a->enc_out[top], E, m->p.dec_wih + D, m->Din, 0, a->ctx_proj, GHd);
}

/* x [n] = tanh(x) (Luong's combined state h̃ = tanh(z)). */
AT_KERNEL_VOID(static, tanh_rows, (attend_real *restrict x, size_t n), (x, n)) {
#pragma omp simd
    for (size_t i = 0; i < n; i++) x[i] = at_vtanh(x[i]);
}

/* Attention of step t with query q [N,Hd]: scores[t], weights[t], ctx[t]. */
static void step_attention(attend_model *m, int t, int N, int S, const attend_real *q) {
    at_acts *a = &m->acts;
    attend_score_params sp = score_params(&m->p);
    size_t saved_stride = attend_scores_saved_size(&m->score, m->cfg.max_batch, 1, m->cfg.max_src_len, NULL);
    attend_real *scores = a->scores + (size_t)t * N * S, *w = a->weights + (size_t)t * N * S;
    attend_real *saved = a->sc_saved + (size_t)(m->infer ? 0 : t) * (saved_stride ? saved_stride : 1);
    if (m->score.kind == ATTEND_SCORE_ADDITIVE && m->infer) /* decoding: the tanh values are not kept */
        at_additive_scores(&m->score, &sp, scores, saved, q, a->kp, N, 1, S, 0);
    else
        attend_scores_forward(&m->score, &sp, scores, saved, q, a->kp, N, 1, S, NULL);
    /* rows always keep their valid positions (src_len >= 1 was checked) */
    at_masked_softmax(w, scores, m->valid, NULL, 0, N, 1, S, 1, m->cfg.decoder == ATTEND_DECODER_POINTER, "step",
                      NULL);
    if (m->cfg.decoder == ATTEND_DECODER_POINTER) {
        /* w holds log-probabilities here; keep them in scores' place for the
         * loss and turn w into probabilities for alignments and entropy */
        memcpy(scores, w, (size_t)N * S * sizeof *w);
        for (size_t i = 0; i < (size_t)N * S; i++) w[i] = isfinite(w[i]) ? (attend_real)exp((double)w[i]) : 0;
        return;
    }
    if (m->hook)
        for (int n = 0; n < N; n++) at_weights_edit(w + (size_t)n * S, m->valid + (size_t)n * S, S, m->hook->edit,
                                                    m->hook->perm);
    attend_context_forward(a->ctx + (size_t)t * N * m->E, w, a->enc_out[m->cfg.enc_layers - 1], N, 1, S, m->E, NULL);
}

/* Embedding rows of the decoder inputs y_in [N] into rows [N,D]. */
static void gather_dec_inputs(const attend_model *m, attend_real *rows, const int32_t *y_in, const int32_t *src,
                              int N, int S) {
    int D = m->cfg.emb;
    for (int n = 0; n < N; n++) {
        const attend_real *e;
        if (m->cfg.decoder == ATTEND_DECODER_POINTER) {
            int32_t pos = y_in[n];
            int32_t id = pos >= 0 && pos < S ? src[(size_t)n * S + pos] : ATTEND_BOS;
            e = m->p.src_emb + (size_t)id * D;
        } else {
            e = m->p.tgt_emb + (size_t)y_in[n] * D;
        }
        memcpy(rows + (size_t)n * D, e, D * sizeof(attend_real));
    }
}

void at_model_step(attend_model *m, int t, int N, int S, const int32_t *y_in, const int32_t *src,
                   const uint8_t *active, attend_real *feat_row, size_t feat_stride, int emb_done) {
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    int D = c->emb, Hd = c->dec_hidden, E = m->E, GHd = m->G * Hd, Din = m->Din;
    attend_real *s_prev = a->states + (size_t)t * N * Hd, *s_next = s_prev + (size_t)N * Hd;
    attend_real *c_prev = a->cstates + (size_t)t * N * Hd, *c_next = c_prev + (size_t)N * Hd;
    /* decoding (nothing reads xg_emb back) writes the embedding part straight into xg */
    attend_real *xg_emb = m->infer && !emb_done ? a->xg : a->xg_emb + (size_t)(m->infer ? 0 : t) * N * GHd;
    int lstm = c->cell == ATTEND_CELL_LSTM;
    if (!emb_done) {
        attend_real *rows = a->emb_tgt + (size_t)t * N * D;
        gather_dec_inputs(m, rows, y_in, src, N, S);
        if (m->dec_tab_on) { /* xg_emb = dec_tab[y] */
            AT_PARALLEL_ROWS((double)N * GHd, N, 1, {
                for (int n = lo; n < hi; n++)
                    memcpy(xg_emb + (size_t)n * GHd, a->dec_tab + (size_t)y_in[n] * GHd,
                           (size_t)GHd * sizeof *xg_emb);
            });
        } else { /* xg_emb = rows W_ih[:, :D]ᵀ + b_ih */
            at_model_linear(m, N, GHd, D, rows, D, m->p.dec_wih, Din, 0, xg_emb, GHd);
            at_rows_add(xg_emb, m->p.dec_bih, (size_t)N, GHd);
        }
    }
    if (xg_emb != a->xg)
        AT_PARALLEL_ROWS((double)N * GHd, N, 1,
                         memcpy(a->xg + (size_t)lo * GHd, xg_emb + (size_t)lo * GHd,
                                (size_t)(hi - lo) * GHd * sizeof(attend_real)));
    at_cell cell;
    dec_cell(m, &cell);
    attend_real *ctx = a->ctx + (size_t)t * N * E;
    size_t cell_w = (size_t)at_cell_saved_width(c->cell, Hd);
    attend_real *saved = a->dec_saved + (size_t)(m->infer ? 0 : t) * N * cell_w;
    switch (c->decoder) {
    case ATTEND_DECODER_BAHDANAU:
    case ATTEND_DECODER_NONE:
        if (c->decoder == ATTEND_DECODER_BAHDANAU) step_attention(m, t, N, S, s_prev); /* query s_{t-1} */
        else memcpy(ctx, a->fin_cat, (size_t)N * E * sizeof *ctx);
        if (m->infer && m->ctx_proj_on) /* xg[n] += α_t[n] [1,S] ctx_proj[n] [S,G*Hd] */
            at_gemm_batched(N, 0, 0, 1, GHd, S, 1, a->weights + (size_t)t * N * S, S, (size_t)S, a->ctx_proj, GHd,
                            (size_t)S * GHd, 1, a->xg, GHd, (size_t)GHd);
        else /* xg += c_t W_ih[:, D:]ᵀ */
            at_model_linear(m, N, GHd, E, ctx, E, m->p.dec_wih + D, Din, 1, a->xg, GHd);
        at_cell_step_forward(&cell, s_next, lstm ? c_next : NULL, saved, a->xg, s_prev, lstm ? c_prev : NULL, active,
                             N, a->step_scratch);
        AT_PARALLEL_ROWS((double)N * (Hd + E), N, 1, {
            for (int n = lo; n < hi; n++) { /* feat = [s_t; c_t] */
                memcpy(feat_row + n * feat_stride, s_next + (size_t)n * Hd, Hd * sizeof(attend_real));
                memcpy(feat_row + n * feat_stride + Hd, ctx + (size_t)n * E, E * sizeof(attend_real));
            }
        });
        break;
    case ATTEND_DECODER_LUONG: {
        attend_real *ht_prev = a->htilde + (size_t)t * N * Hd, *ht_next = ht_prev + (size_t)N * Hd;
        /* input feeding: xg += h̃_{t-1} W_ih[:, D:]ᵀ */
        at_model_linear(m, N, GHd, Hd, ht_prev, Hd, m->p.dec_wih + D, Din, 1, a->xg, GHd);
        at_cell_step_forward(&cell, s_next, lstm ? c_next : NULL, saved, a->xg, s_prev, lstm ? c_prev : NULL, active,
                             N, a->step_scratch);
        step_attention(m, t, N, S, s_next); /* query s_t */
        attend_real *cat = a->cat + (size_t)t * N * (E + Hd);
        for (int n = 0; n < N; n++) {
            memcpy(cat + (size_t)n * (E + Hd), ctx + (size_t)n * E, E * sizeof(attend_real));
            memcpy(cat + (size_t)n * (E + Hd) + E, s_next + (size_t)n * Hd, Hd * sizeof(attend_real));
        }
        /* h̃_t = tanh([c_t; s_t] W_cᵀ) */
        at_model_linear(m, N, Hd, E + Hd, cat, E + Hd, m->p.comb_w, E + Hd, 0, ht_next, Hd);
        tanh_rows(ht_next, (size_t)N * Hd);
        for (int n = 0; n < N; n++)
            memcpy(feat_row + n * feat_stride, ht_next + (size_t)n * Hd, Hd * sizeof(attend_real));
        break;
    }
    case ATTEND_DECODER_POINTER:
        at_cell_step_forward(&cell, s_next, lstm ? c_next : NULL, saved, a->xg, s_prev, lstm ? c_prev : NULL, active,
                             N, a->step_scratch);
        step_attention(m, t, N, S, s_next); /* query s_t; log-probs in scores[t] */
        break;
    }
}

/* ------------------------------------------------- teacher-forced forward */

static attend_status check_batch(const attend_model *m, const attend_batch *b, attend_error *err) {
    const char *who = "attend_model_forward";
    const attend_model_config *c = &m->cfg;
    int pointer = c->decoder == ATTEND_DECODER_POINTER;
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
            if (!pointer) {
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
    TRY(check_batch(m, b, err));
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    int N = b->N, S = b->S, T = b->T, D = c->emb, F = m->F, GHd = m->G * c->dec_hidden;
    int pointer = c->decoder == ATTEND_DECODER_POINTER;
    memcpy(m->fwd_src, b->src, (size_t)N * S * sizeof(int32_t));
    memcpy(m->fwd_src_len, b->src_len, (size_t)N * sizeof(int32_t));
    memcpy(m->fwd_tgt_out, b->tgt_out, (size_t)N * T * sizeof(int32_t));
    memcpy(m->fwd_tgt_len, b->tgt_len, (size_t)N * sizeof(int32_t));
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            m->fwd_tgt_in[(size_t)t * N + n] = b->tgt_in[(size_t)n * T + t];
            m->active[(size_t)t * N + n] = t < b->tgt_len[n];
        }
    at_model_encode(m, b->src, b->src_len, N, S);
    /* every step's input embedding projection in one GEMM:
     * xg_emb [T*N,G*Hd] = emb_tgt [T*N,D] W_ih[:, :D]ᵀ + b_ih */
    for (int t = 0; t < T; t++)
        gather_dec_inputs(m, a->emb_tgt + (size_t)t * N * D, m->fwd_tgt_in + (size_t)t * N, b->src, N, S);
    m->dec_tab_on = m->dec_tab_on && c->tgt_vocab < T * N;
    if (m->dec_tab_on) { /* rows of dec_tab (at_model_encode), one per token */
        for (size_t r = 0; r < (size_t)T * N; r++)
            memcpy(a->xg_emb + r * GHd, a->dec_tab + (size_t)m->fwd_tgt_in[r] * GHd, (size_t)GHd * sizeof(attend_real));
    } else {
        at_model_linear(m, T * N, GHd, D, a->emb_tgt, D, m->p.dec_wih, m->Din, 0, a->xg_emb, GHd);
        at_rows_add(a->xg_emb, m->p.dec_bih, (size_t)T * N, GHd);
    }
    for (int t = 0; t < T; t++)
        at_model_step(m, t, N, S, m->fwd_tgt_in + (size_t)t * N, b->src, m->active + (size_t)t * N,
                      a->feat + (size_t)t * F, (size_t)T * F, 1);

    double loss = 0, entropy = 0;
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
            loss -= lp[y];
            int best = 0;
            for (int v = 1; v < width; v++)
                if (lp[v] > lp[best]) best = v;
            if (best == y) correct++;
            else all_right = 0;
            count++;
            if (c->decoder != ATTEND_DECODER_NONE) {
                entropy += row_entropy(a->weights + ((size_t)t * N + n) * S, S);
                ent_rows++;
            }
        }
        seq_ok += all_right;
    }
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

/* Backward of step_attention at step t with query q [N,Hd]: from
 * dctx [N,E] (soft attention) or dscores (POINTER, already in a->dscores)
 * accumulates dq [N,Hd], a->dkp and a->denc (values). */
static void step_attention_backward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *dq) {
    at_acts *a = &m->acts;
    attend_score_params sp = score_params(&m->p);
    attend_score_grads sg = {m->g.attn_W, m->g.attn_Wq, m->g.attn_Wk, m->g.attn_b, m->g.attn_v};
    size_t saved_stride = attend_scores_saved_size(&m->score, m->cfg.max_batch, 1, m->cfg.max_src_len, NULL);
    const attend_real *w = a->weights + (size_t)t * N * S;
    if (m->cfg.decoder != ATTEND_DECODER_POINTER) {
        /* forward: ctx = w V (V = encoder outputs), w = masked_softmax(scores) */
        memset(a->dweights, 0, (size_t)N * S * sizeof(attend_real));
        attend_context_backward(a->dweights, a->denc, a->dctx, w, a->enc_out[m->cfg.enc_layers - 1], N, 1, S, m->E,
                                NULL);
        memset(a->dscores, 0, (size_t)N * S * sizeof(attend_real));
        at_softmax_backward(a->dscores, a->dweights, w, (size_t)N, S);
    }
    attend_scores_backward(&m->score, &sp, &sg, dq, a->dkp, a->dscores,
                           a->sc_saved + (size_t)t * (saved_stride ? saved_stride : 1), q, a->kp, N, 1, S, NULL);
}

/* Scatter-add rows drows [R,D] into the embedding gradient at ids [R]; PAD
 * and negative ids get nothing. */
static void embedding_backward(attend_real *gemb, const attend_real *drows, const int32_t *ids, size_t R, int D) {
    for (size_t r = 0; r < R; r++) {
        int32_t id = ids[r];
        if (id <= ATTEND_PAD) continue;
        attend_real *dst = gemb + (size_t)id * D;
        for (int d = 0; d < D; d++) dst[d] += drows[r * D + d];
    }
}

/* Backward of a table lookup xg[r] = tab[ids[r]] with tab [V,GH] = emb [V,D] Wᵀ + b
 * (W: the first D columns of a weight with row stride ldw): from dxg [R,GH]
 * accumulates gW [GH, ldw] (first D columns), gb [GH] and gemb [V,D] (PAD's row
 * excluded, as embedding_backward does). ids [R]; with len != NULL the rows
 * are (n, j) of S positions and j >= len[n] reads PAD (encoder padding). */
/* dtab [V,GH] += the rows of dxg [R,GH] by token: row r into ids[r]'s row
 * (PAD's past a row's length len[r / S], when len is given). */
AT_KERNEL_VOID(static, scatter_rows,
               (attend_real *restrict dtab, const attend_real *restrict dxg, const int32_t *ids, const int32_t *len,
                int S, size_t R, int GH),
               (dtab, dxg, ids, len, S, R, GH)) {
    for (size_t r = 0; r < R; r++) {
        int32_t id = len && (int)(r % (size_t)S) >= len[r / (size_t)S] ? ATTEND_PAD : ids[r];
        attend_real *restrict d = dtab + (size_t)id * GH;
        const attend_real *restrict x = dxg + r * GH;
#pragma omp simd
        for (int k = 0; k < GH; k++) d[k] += x[k];
    }
}

static void table_backward(attend_model *m, attend_real *gemb, attend_real *gW, int ldw, attend_real *gb,
                           const attend_real *dxg, const int32_t *ids, const int32_t *len, int S, size_t R, int V,
                           int GH, const attend_real *emb, const attend_real *W) {
    at_acts *a = &m->acts;
    int D = m->cfg.emb;
    attend_real *dtab = a->dtab; /* [V,GH] */
    memset(dtab, 0, (size_t)V * GH * sizeof *dtab);
    scatter_rows(dtab, dxg, ids, len, S, R, GH);
    at_gemm(1, 0, GH, D, V, 1, dtab, GH, emb, D, 1, gW, ldw); /* W: tab = emb Wᵀ + b */
    at_rows_sum(gb, dtab, (size_t)V, GH);
    /* emb: rows V of demb [V,D] = dtab W, then every row but PAD's */
    at_gemm(0, 0, V, D, GH, 1, dtab, GH, W, ldw, 0, a->demb, D);
    for (int v = ATTEND_PAD + 1; v < V; v++)
        for (int d = 0; d < D; d++) gemb[(size_t)v * D + d] += a->demb[(size_t)v * D + d];
}

attend_status attend_model_backward(attend_model *m, attend_error *err) {
    CHECK(m, err, ATTEND_ERR_NULL, "attend_model_backward: model is NULL");
    CHECK(m->fwd_ready, err, ATTEND_ERR_ARG, "attend_model_backward: no forward pass to differentiate "
                                             "(call attend_model_forward first)");
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    int N = m->fwd_N, S = m->fwd_S, T = m->fwd_T, count = m->fwd_count;
    int D = c->emb, H = c->enc_hidden, E = m->E, Hd = c->dec_hidden, G = m->G, GHd = G * Hd, F = m->F, Din = m->Din;
    int lstm = c->cell == ATTEND_CELL_LSTM;
    int pointer = c->decoder == ATTEND_DECODER_POINTER, top = c->enc_layers - 1;
    attend_real inv = (attend_real)(1.0 / count);

    /* loss = −(1/count) Σ logp[y] over counted steps ⇒ dlogits = (p − onehot)/count */
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
                for (int v = 0; v < V; v++) z[v] = (attend_real)exp((double)z[v]) * inv;
                z[y] -= inv;
            }
        /* forward: logits = feat W_oᵀ + b_o */
        at_gemm(1, 0, V, F, N * T, 1, dlogits, V, a->feat, F, 1, m->g.out_w, F);
        at_rows_sum(m->g.out_b, dlogits, (size_t)N * T, V);
        at_gemm(0, 0, N * T, F, V, 1, dlogits, V, m->p.out_w, F, 0, a->dfeat, F);
    }
    memset(a->ds, 0, (size_t)N * Hd * sizeof(attend_real));
    memset(a->dcs, 0, (size_t)N * Hd * sizeof(attend_real));
    memset(a->dht, 0, (size_t)N * Hd * sizeof(attend_real));
    memset(a->dkp, 0, (size_t)N * S * (m->P > 0 ? m->P : 1) * sizeof(attend_real));
    memset(a->denc, 0, (size_t)N * S * E * sizeof(attend_real));
    memset(a->dfin, 0, (size_t)N * E * sizeof(attend_real));
    at_cell cell;
    dec_cell(m, &cell);
    at_cell_grads cg_hh = {NULL, m->g.dec_whh, NULL, m->g.dec_bhh}; /* W_ih, b_ih: one GEMM after the loop */
    size_t cell_w = (size_t)at_cell_saved_width(c->cell, Hd);

    for (int t = T - 1; t >= 0; t--) {
        attend_real *s_prev = a->states + (size_t)t * N * Hd, *s_next = s_prev + (size_t)N * Hd;
        attend_real *c_prev = a->cstates + (size_t)t * N * Hd;
        const uint8_t *active = m->active + (size_t)t * N;
        attend_real *dxg = a->dxg_all + (size_t)t * N * GHd;
        const attend_real *dfeat_t = a->dfeat + (size_t)t * F; /* row n at + n*T*F */
        memset(dxg, 0, (size_t)N * GHd * sizeof *dxg);
        memset(a->ds_prev, 0, (size_t)N * Hd * sizeof(attend_real));
        memset(a->dcs_prev, 0, (size_t)N * Hd * sizeof(attend_real));
        switch (c->decoder) {
        case ATTEND_DECODER_BAHDANAU:
        case ATTEND_DECODER_NONE:
            /* forward: feat = [s_t; c_t] */
            for (int n = 0; n < N; n++) {
                const attend_real *df = dfeat_t + (size_t)n * T * F;
                for (int i = 0; i < Hd; i++) a->ds[(size_t)n * Hd + i] += df[i];
                memcpy(a->dctx + (size_t)n * E, df + Hd, E * sizeof(attend_real));
            }
            /* forward: s_t = cell(xg, s_{t-1}) */
            at_cell_step_backward(&cell, &cg_hh, dxg, a->ds_prev, lstm ? a->dcs_prev : NULL, a->ds,
                                  lstm ? a->dcs : NULL, a->dec_saved + (size_t)t * N * cell_w, s_prev,
                                  lstm ? c_prev : NULL, active, N, a->step_scratch);
            /* forward: xg += c_t W_ih[:, D:]ᵀ */
            at_gemm(0, 0, N, E, GHd, 1, dxg, GHd, m->p.dec_wih + D, Din, 1, a->dctx, E);
            if (c->decoder == ATTEND_DECODER_BAHDANAU)
                step_attention_backward(m, t, N, S, s_prev, a->ds_prev); /* query s_{t-1} */
            else
                for (size_t i = 0; i < (size_t)N * E; i++) a->dfin[i] += a->dctx[i];
            break;
        case ATTEND_DECODER_LUONG: {
            attend_real *ht_next = a->htilde + (size_t)(t + 1) * N * Hd;
            const attend_real *cat = a->cat + (size_t)t * N * (E + Hd);
            /* dh̃_t = dfeat + (input feeding from step t+1, in dht) */
            for (int n = 0; n < N; n++) {
                const attend_real *df = dfeat_t + (size_t)n * T * F;
                for (int i = 0; i < Hd; i++) {
                    size_t k = (size_t)n * Hd + i;
                    attend_real h = ht_next[k];
                    a->dz[k] = (df[i] + a->dht[k]) * (1 - h * h); /* forward: h̃ = tanh(z) */
                }
            }
            /* forward: z = [c_t; s_t] W_cᵀ */
            at_gemm(1, 0, Hd, E + Hd, N, 1, a->dz, Hd, cat, E + Hd, 1, m->g.comb_w, E + Hd);
            at_gemm(0, 0, N, E + Hd, Hd, 1, a->dz, Hd, m->p.comb_w, E + Hd, 0, a->dcat, E + Hd);
            for (int n = 0; n < N; n++) {
                memcpy(a->dctx + (size_t)n * E, a->dcat + (size_t)n * (E + Hd), E * sizeof(attend_real));
                for (int i = 0; i < Hd; i++) a->ds[(size_t)n * Hd + i] += a->dcat[(size_t)n * (E + Hd) + E + i];
            }
            step_attention_backward(m, t, N, S, s_next, a->ds); /* query s_t */
            at_cell_step_backward(&cell, &cg_hh, dxg, a->ds_prev, lstm ? a->dcs_prev : NULL, a->ds,
                                  lstm ? a->dcs : NULL, a->dec_saved + (size_t)t * N * cell_w, s_prev,
                                  lstm ? c_prev : NULL, active, N, a->step_scratch);
            /* forward: xg += h̃_{t-1} W_ih[:, D:]ᵀ  ⇒  dh̃_{t-1} = dxg W_ih[:, D:] */
            at_gemm(0, 0, N, Hd, GHd, 1, dxg, GHd, m->p.dec_wih + D, Din, 0, a->dht, Hd);
            break;
        }
        case ATTEND_DECODER_POINTER: {
            /* forward: loss −= logp[y], logp = masked log-softmax(scores) */
            const attend_real *lp = a->scores + (size_t)t * N * S;
            memset(a->dscores, 0, (size_t)N * S * sizeof(attend_real));
            for (int n = 0; n < N; n++) {
                if (!active[n]) continue;
                int32_t y = m->fwd_tgt_out[(size_t)n * T + t];
                for (int j = 0; j < S; j++) {
                    attend_real p = isfinite(lp[(size_t)n * S + j]) ? (attend_real)exp((double)lp[(size_t)n * S + j]) : 0;
                    a->dscores[(size_t)n * S + j] = (p - (j == y ? 1 : 0)) * inv;
                }
            }
            step_attention_backward(m, t, N, S, s_next, a->ds); /* query s_t */
            at_cell_step_backward(&cell, &cg_hh, dxg, a->ds_prev, lstm ? a->dcs_prev : NULL, a->ds,
                                  lstm ? a->dcs : NULL, a->dec_saved + (size_t)t * N * cell_w, s_prev,
                                  lstm ? c_prev : NULL, active, N, a->step_scratch);
            break;
        }
        }
        /* d s_{t-1} becomes the running state gradient */
        attend_real *tmp = a->ds;
        a->ds = a->ds_prev;
        a->ds_prev = tmp;
        tmp = a->dcs;
        a->dcs = a->dcs_prev;
        a->dcs_prev = tmp;
    }

    /* decoder input projection for all steps at once:
     * forward: xg = [emb; extra] W_ihᵀ + b_ih with extra = c_t (BAHDANAU, NONE) or h̃_{t-1} (LUONG) */
    if (c->decoder == ATTEND_DECODER_BAHDANAU || c->decoder == ATTEND_DECODER_NONE)
        at_gemm(1, 0, GHd, E, T * N, 1, a->dxg_all, GHd, a->ctx, E, 1, m->g.dec_wih + D, Din);
    else if (c->decoder == ATTEND_DECODER_LUONG)
        at_gemm(1, 0, GHd, Hd, T * N, 1, a->dxg_all, GHd, a->htilde, Hd, 1, m->g.dec_wih + D, Din);
    if (m->dec_tab_on) {
        /* forward: xg_emb[r] = dec_tab[y_r], dec_tab = tgt_emb W_ih[:, :D]ᵀ + b_ih */
        table_backward(m, m->g.tgt_emb, m->g.dec_wih, Din, m->g.dec_bih, a->dxg_all, m->fwd_tgt_in, NULL, 0,
                       (size_t)T * N, c->tgt_vocab, GHd, m->p.tgt_emb, m->p.dec_wih);
    } else if (!pointer) {
        at_gemm(1, 0, GHd, D, T * N, 1, a->dxg_all, GHd, a->emb_tgt, D, 1, m->g.dec_wih, Din);
        at_rows_sum(m->g.dec_bih, a->dxg_all, (size_t)T * N, GHd);
        at_gemm(0, 0, T * N, D, GHd, 1, a->dxg_all, GHd, m->p.dec_wih, Din, 0, a->demb, D);
        embedding_backward(m->g.tgt_emb, a->demb, m->fwd_tgt_in, (size_t)T * N, D);
    } else {
        at_gemm(1, 0, GHd, D, T * N, 1, a->dxg_all, GHd, a->emb_tgt, D, 1, m->g.dec_wih, Din);
        at_rows_sum(m->g.dec_bih, a->dxg_all, (size_t)T * N, GHd);
        at_gemm(0, 0, T * N, D, GHd, 1, a->dxg_all, GHd, m->p.dec_wih, Din, 0, a->demb, D);
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
    /* bridge: s_0 = tanh(z), z = fin_cat W_brᵀ + b_br */
    for (size_t k = 0; k < (size_t)N * Hd; k++) {
        attend_real s0 = a->states[k];
        a->dz[k] = a->ds[k] * (1 - s0 * s0);
    }
    at_gemm(1, 0, Hd, E, N, 1, a->dz, Hd, a->fin_cat, E, 1, m->g.bridge_w, E);
    for (int n = 0; n < N; n++)
        for (int i = 0; i < Hd; i++) m->g.bridge_b[i] += a->dz[(size_t)n * Hd + i];
    at_gemm(0, 0, N, E, Hd, 1, a->dz, Hd, m->p.bridge_w, E, 1, a->dfin, E);
    /* keys: kp = project(encoder outputs) */
    if (m->P > 0) {
        attend_score_params sp = score_params(&m->p);
        attend_score_grads sg = {m->g.attn_W, m->g.attn_Wq, m->g.attn_Wk, m->g.attn_b, m->g.attn_v};
        attend_keys_backward(&m->score, &sp, &sg, a->denc, a->dkp, a->enc_out[top], N, S, NULL);
    }
    /* encoder, top layer down; fin_cat = [h_fwd; h_bwd] of the top layer */
    for (int n = 0; n < N; n++) {
        memcpy(a->dhf + (size_t)n * H, a->dfin + (size_t)n * E, H * sizeof(attend_real));
        memcpy(a->dhb + (size_t)n * H, a->dfin + (size_t)n * E + H, H * sizeof(attend_real));
    }
    attend_real *dout = a->denc, *dnext = a->denc2;
    for (int l = top; l >= 0; l--) {
        const attend_real *x = l == 0 ? a->emb_src : a->enc_out[l - 1];
        int I = l == 0 ? D : E, tab = l == 0 && m->enc_tab_on;
        attend_real *dx = tab ? NULL : l == 0 ? a->demb : dnext;
        if (dx) memset(dx, 0, (size_t)N * S * I * sizeof(attend_real));
        for (int dir = 0; dir < 2; dir++) {
            at_cell ec;
            enc_cell(m, &m->p, l, dir, &ec);
            at_cell_grads eg = {m->g.enc_wih[l][dir], m->g.enc_whh[l][dir], m->g.enc_bih[l][dir], m->g.enc_bhh[l][dir]};
            if (tab) eg.W_ih = eg.b_ih = NULL; /* from the table below */
            at_rnn_layer_backward(&ec, &eg, dir, dx, NULL, NULL, dout + dir * H, E,
                                  l == top ? (dir ? a->dhb : a->dhf) : NULL, NULL, a->enc_saved[l][dir], x,
                                  m->fwd_src_len, NULL, NULL, N, S, a->rnn_scratch);
            if (tab) /* forward: xg[n,j] = enc_tab[dir][src[n,j]]; dxg is at the start of rnn_scratch */
                table_backward(m, m->g.src_emb, m->g.enc_wih[0][dir], D, m->g.enc_bih[0][dir], a->rnn_scratch,
                               m->fwd_src, m->fwd_src_len, S, (size_t)N * S, c->src_vocab, G * H, m->p.src_emb,
                               m->p.enc_wih[0][dir]);
        }
        attend_real *tmp = dout;
        dout = dnext;
        dnext = tmp;
    }
    if (!m->enc_tab_on) embedding_backward(m->g.src_emb, a->demb, m->fwd_src, (size_t)N * S, D);
    m->fwd_ready = 0; /* the log-probabilities were turned into gradients in place */
    return at_ok(err);
}

/* ------------------------------------------------------------------ greedy */

/* logits [N,V] of one step from features feat [N,F]; returns them in a->step_logits. */
void at_model_step_logits(attend_model *m, int N, const attend_real *feat) {
    int V = m->cfg.tgt_vocab, F = m->F;
    at_model_linear(m, N, V, F, feat, F, m->p.out_w, F, 0, m->acts.step_logits, V);
    for (int n = 0; n < N; n++)
        for (int v = 0; v < V; v++) m->acts.step_logits[(size_t)n * V + v] += m->p.out_b[v];
}

attend_status attend_model_greedy(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S,
                                  int max_len, int32_t *out, int32_t *out_len, attend_real *align,
                                  attend_error *err) {
    const char *who = "attend_model_greedy";
    CHECK(m && src && src_len && out && out_len, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !m ? "model" : !src ? "src [N,S]" : !src_len ? "src_len [N]" : !out ? "out [N,max_len]" : "out_len [N]");
    TRY(at_model_check_source(m, src, src_len, N, S, who, err));
    CHECK(max_len >= 1 && max_len <= m->Tcap, err, ATTEND_ERR_CAPACITY,
          "%s: max_len=%d outside [1, max_tgt_len+1 = %d]", who, max_len, m->Tcap);
    int pointer = m->cfg.decoder == ATTEND_DECODER_POINTER;
    if (pointer)
        for (int n = 0; n < N; n++)
            CHECK(src_len[n] <= max_len, err, ATTEND_ERR_CAPACITY,
                  "%s: row %d: a pointer decoder emits src_len=%d positions, max_len is %d", who, n, (int)src_len[n],
                  max_len);
    m->fwd_ready = 0; /* decoding reuses the activation buffers */
    at_acts *a = &m->acts;
    int F = m->F, V = m->cfg.tgt_vocab;
    int32_t *y = m->fwd_tgt_in; /* [N] previous tokens */
    m->infer = 1;
    at_model_encode(m, src, src_len, N, S);
    for (int n = 0; n < N; n++) {
        y[n] = pointer ? -1 : ATTEND_BOS;
        out_len[n] = -1; /* -1 = still running */
        for (int t = 0; t < max_len; t++) out[(size_t)n * max_len + t] = ATTEND_PAD;
    }
    if (align) memset(align, 0, (size_t)N * max_len * S * sizeof *align);
    int running = N;
    for (int t = 0; t < max_len && running > 0; t++) {
        uint8_t *active = m->active + (size_t)t * N;
        for (int n = 0; n < N; n++) active[n] = out_len[n] < 0;
        at_model_step(m, t, N, S, y, src, active, a->dfeat, (size_t)F, 0);
        if (!pointer) at_model_step_logits(m, N, a->dfeat);
        for (int n = 0; n < N; n++) {
            if (!active[n]) continue;
            const attend_real *row = pointer ? a->scores + ((size_t)t * N + n) * S : a->step_logits + (size_t)n * V;
            int width = pointer ? src_len[n] : V, best = 0;
            for (int v = 1; v < width; v++)
                if (row[v] > row[best]) best = v;
            if (!pointer && best == ATTEND_EOS) {
                out_len[n] = t;
                running--;
                continue;
            }
            out[(size_t)n * max_len + t] = best;
            if (align && m->cfg.decoder != ATTEND_DECODER_NONE)
                memcpy(align + ((size_t)n * max_len + t) * S, a->weights + ((size_t)t * N + n) * S,
                       S * sizeof *align);
            y[n] = best;
            if (pointer && t + 1 == src_len[n]) {
                out_len[n] = t + 1;
                running--;
            }
        }
    }
    for (int n = 0; n < N; n++)
        if (out_len[n] < 0) out_len[n] = max_len;
    m->infer = 0;
    return at_ok(err);
}

/* ------------------------------------------------------------ forced score */

attend_status attend_model_score(attend_model *m, const int32_t *src, int S, const int32_t *tgt, int T,
                                 double *logp, attend_real *align, attend_error *err) {
    const char *who = "attend_model_score";
    CHECK(m && src && tgt && logp, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !m ? "model" : !src ? "src [S]" : !tgt ? "tgt [T]" : "logp");
    int pointer = m->cfg.decoder == ATTEND_DECODER_POINTER;
    CHECK(T >= (pointer ? 1 : 0) && T <= m->cfg.max_tgt_len, err, ATTEND_ERR_CAPACITY,
          "%s: target length %d outside [%d, max_tgt_len=%d]", who, T, pointer ? 1 : 0, m->cfg.max_tgt_len);
    CHECK(S >= 1 && S <= m->cfg.max_src_len, err, ATTEND_ERR_CAPACITY, "%s: source length %d outside [1, %d]", who, S,
          m->cfg.max_src_len);
    int steps = pointer ? T : T + 1;
    /* the one-row batch lives in its own part of the id arena (score_ids),
     * which attend_model_forward copies from; nothing is allocated */
    int32_t *mem = m->score_ids;
    attend_batch b;
    memset(&b, 0, sizeof b);
    b.N = 1;
    b.S = S;
    b.T = steps;
    b.src = mem;
    b.src_len = b.src + S;
    b.tgt_in = b.src_len + 1;
    b.tgt_out = b.tgt_in + steps;
    b.tgt_len = b.tgt_out + steps;
    memcpy(b.src, src, (size_t)S * sizeof *src);
    b.src_len[0] = S;
    b.tgt_len[0] = steps;
    for (int t = 0; t < steps; t++) {
        if (pointer) {
            b.tgt_in[t] = t == 0 ? -1 : tgt[t - 1];
            b.tgt_out[t] = tgt[t];
        } else {
            b.tgt_in[t] = t == 0 ? ATTEND_BOS : tgt[t - 1];
            b.tgt_out[t] = t < T ? tgt[t] : ATTEND_EOS;
        }
    }
    attend_tf_stats st;
    attend_status rc = attend_model_forward(m, &b, &st, err);
    if (rc == ATTEND_OK) {
        *logp = -st.loss * st.tokens;
        if (align) {
            if (m->cfg.decoder == ATTEND_DECODER_NONE) memset(align, 0, (size_t)steps * S * sizeof *align);
            else /* weights are [T,N,S] with N = 1 */
                memcpy(align, m->acts.weights, (size_t)steps * S * sizeof *align);
        }
    }
    return rc;
}
