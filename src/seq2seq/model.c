/*
 * model.c — the recurrent encoder–decoder with attention: create/free and
 * the tensor accessors, encoding a batch and one decoder step, the
 * teacher-forced forward and its backward. What the model is made of lives
 * elsewhere and is reached through one interface each: the layout of its
 * tensors and buffers (layout.c), the encoder (encoder.c and its kind,
 * encoders/), the decoder kind (m->dec, decoders/), and every mechanism
 * (extension.c's dispatchers over extensions/). What a call does is decided
 * by its arguments: the run (state.h) is set by the entry point from them.
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seq2seq/model.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/embed.h"
#include "seq2seq/encoder.h"
#include "seq2seq/encoders/encoder_kind.h"
#include "seq2seq/extension.h"
#include "seq2seq/layout.h"
#include "seq2seq/linear.h"

/* -------------------------------------------------------- create / free */

attend_status attend_model_create(attend_model **out, const attend_model_config *cfg, uint64_t seed,
                                  attend_error *err) {
    CHECK(out, err, ATTEND_ERR_NULL, "attend_model_create: out is NULL");
    *out = NULL;
    TRY(attend_model_config_check(cfg, err));
    attend_model *m = calloc(1, sizeof *m);
    CHECK(m, err, ATTEND_ERR_ALLOC, "attend_model_create: out of memory for the model struct");
    m->cfg = *cfg;
    const attend_model_config *c = &m->cfg;
    m->dec = at_decoders[c->decoder];
    m->enc = at_encoder_of(c);
    m->G = at_cell_gates(c->cell);
    m->Ld = c->dec_layers > 1 && !m->dec->no_cell ? c->dec_layers : 1; /* a stacked recurrent decoder's */
    m->E = m->enc->width(c);
    m->dec->dims(c, m->E, &m->Din, &m->F, &m->V);
    attend_score_config sc = {c->score, c->dec_hidden, m->E, c->attn, 1, 0};
    m->score = sc;
    m->P = m->dec->attentive ? attend_score_key_width(&m->score) : 0;
    int of = 0;
    if (m->P > 0) m->sc_saved_stride = attend_scores_saved_size(&m->score, c->max_batch, 1, c->max_src_len, &of);
    m->Tcap = c->max_tgt_len + 1;
    size_t N = (size_t)c->max_batch, S = (size_t)c->max_src_len, T = (size_t)m->Tcap;
    /* a table is kept when it is no larger than the per-position projections it replaces */
    m->dec_tab_cap = m->dec->vocabulary && !m->dec->no_cell && (size_t)c->tgt_vocab <= N * T;
    /* the kinds' and the extensions' own state, one allocation */
    size_t kinds = (m->enc->state_size + 15) / 16 * 16 + (m->dec->state_size + 15) / 16 * 16;
    unsigned char *states = calloc(kinds + at_ext_state_size(c), 1);
    m->valid = calloc(N * S + T * N, 1);
    if (!states || !m->valid) {
        free(states);
        free(m->valid);
        free(m);
        return at_fail(err, ATTEND_ERR_ALLOC, "attend_model_create: out of memory for the model's state");
    }
    m->active = m->valid + N * S;
    m->enc_state = states;
    m->dec_state = states + (m->enc->state_size + 15) / 16 * 16;
    at_ext_place_state(m, states + kinds);
    m->nparams = at_layout_params(m, NULL, NULL, 0, 1);
    size_t nacts = 0, nints = 0;
    if (of || !at_layout_acts(m, NULL, NULL, &nacts, &nints)) {
        attend_model_free(m);
        return at_fail(err, ATTEND_ERR_SHAPE, "attend_model_create: activation sizes overflow");
    }
    m->nacts = nacts;
    m->nints = nints;
    m->params = calloc(m->nparams, sizeof(attend_real));
    m->grads = calloc(m->nparams, sizeof(attend_real));
    m->act_arena = calloc(nacts, sizeof(attend_real));
    m->ints = calloc(nints, sizeof(int32_t));
    if (m->params && m->grads && m->act_arena && m->ints) {
        at_layout_params(m, m->params, &m->p, 0, 0);
        at_layout_params(m, m->grads, &m->g, 1, 0);
        at_layout_acts(m, m->act_arena, m->ints, &nacts, &nints);
        m->rows_tmp = calloc(at_rows_tmp_bytes(m), 1);
    }
    if (!m->rows_tmp) {
        size_t bytes = (2 * m->nparams + nacts) * sizeof(attend_real);
        attend_model_free(m);
        return at_fail(err, ATTEND_ERR_ALLOC, "attend_model_create: out of memory for %zu bytes of parameters, "
                       "gradients and activations (capacities max_batch=%d, max_src_len=%d, max_tgt_len=%d)", bytes,
                       cfg->max_batch, cfg->max_src_len, cfg->max_tgt_len);
    }
    if (m->dec->init) m->dec->init(m);
    at_ext_init(m);
    at_init_params(m, seed);
    *out = m;
    return at_ok(err);
}

void attend_model_free(attend_model *m) {
    if (!m) return;
    if (m->enc_state) at_ext_release(m);
    free(m->params);
    free(m->grads);
    free(m->act_arena);
    free(m->valid);
    free(m->ints);
    free(m->rows_tmp);
    free(m->scratch);
    free(m->qmem);
    at_model_packs_free(m);
    free(m->enc_state); /* the block of every own state */
    free(m);
}

const attend_model_config *attend_model_get_config(const attend_model *m) { return m ? &m->cfg : NULL; }
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

attend_status attend_model_tensor_get(const attend_model *m, int i, attend_model_tensor *t, attend_error *err) {
    CHECK(m && t, err, ATTEND_ERR_NULL, "attend_model_tensor_get: %s is NULL", !m ? "model" : "t");
    CHECK(i >= 0 && i < m->ntensors, err, ATTEND_ERR_ARG, "attend_model_tensor_get: index %d outside [0,%d)", i,
          m->ntensors);
    fill_tensor(m, i, t);
    return at_ok(err);
}

attend_status attend_model_tensor_find(const attend_model *m, const char *name, attend_model_tensor *t,
                                       attend_error *err) {
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

attend_status at_model_check_source(const attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S,
                                    const char *who, attend_error *err) {
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

void at_model_infer(attend_model *m) {
    memset(&m->run, 0, sizeof m->run);
    m->run.infer = 1;
    m->fwd_ready = 0;
}

void at_model_analyse(attend_model *m, at_weight_hook_fn hook, void *user) {
    memset(&m->run, 0, sizeof m->run);
    m->run.scoring = 1;
    m->run.weight_hook = hook;
    m->run.weight_hook_user = hook ? user : NULL;
    m->fwd_ready = 0;
}

void at_model_analyse_self(attend_model *m, at_self_hook_fn hook, void *user) {
    m->run.self_hook = hook;
    m->run.self_hook_user = hook ? user : NULL;
}

void at_model_encode(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S) {
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    at_encoder_forward(m, src, src_len, N, S);
    /* decoder inputs: tab [Vt,G*Hd] = tgt_emb W_ih[:, :D]ᵀ + b_ih, worth it when a
     * decode of up to Tcap steps projects more rows than the table has
     * (at_model_forward decides again for its T); not when the inputs are transformed */
    int D = c->emb, Vt = c->tgt_vocab, GHd = m->G * c->dec_hidden;
    const int tab_kept = m->run.infer && m->dec_tab_gen == m->pack_gen + 1; /* an earlier decode's, same parameters */
    m->dec_tab_on = m->dec_tab_cap && (Vt < N * m->Tcap || tab_kept) && !at_ext_transforms(m, AT_SITE_DEC_IN);
    if (m->dec_tab_on && !tab_kept) {
        for (int v = 0; v < Vt; v++) memcpy(a->dec_tab + (size_t)v * GHd, m->p.dec_bih, (size_t)GHd * sizeof(attend_real));
        at_gemm(0, 1, Vt, GHd, D, 1, m->p.tgt_emb, D, m->p.dec_wih, m->Din, 1, a->dec_tab, GHd);
    }
    m->dec_tab_gen = m->run.infer && m->dec_tab_on ? m->pack_gen + 1 : 0;
    if (m->dec->begin) m->dec->begin(m, N, S);
    at_ext_begin(m, src, src_len, N, S);
}

void at_model_step(attend_model *m, int t, int N, int S, const int32_t *y_in, const int32_t *src,
                   const uint8_t *active, attend_real *feat_row, size_t feat_stride, int emb_done) {
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    int D = c->emb, GHd = m->G * c->dec_hidden, Din = m->Din, infer = m->run.infer;
    /* decoding (nothing reads xg_emb back) writes the embedding part straight into xg */
    attend_real *xg_emb = infer && !emb_done ? a->xg : a->xg_emb + (size_t)(infer ? 0 : t) * N * GHd;
    if (!emb_done) {
        attend_real *rows = a->emb_tgt + (size_t)t * N * D;
        m->dec->input_rows(m, rows, y_in, src, N, S);
        /* inputs chosen step by step: the same transform as the whole grid's in at_model_forward */
        if (!infer) at_ext_site_rows(m, rows, N, t, D, AT_SITE_DEC_IN);
        if (m->dec->no_cell) { /* the kind reads the rows themselves */
        } else if (m->dec_tab_on) { /* xg_emb = dec_tab[y] */
            for (int n = 0; n < N; n++)
                memcpy(xg_emb + (size_t)n * GHd, a->dec_tab + (size_t)m->dec->input_id(m, y_in[n]) * GHd,
                       (size_t)GHd * sizeof *xg_emb);
        } else { /* xg_emb = rows W_ih[:, :D]ᵀ + b_ih */
            at_model_linear(m, N, GHd, D, rows, D, m->p.dec_wih, Din, 0, xg_emb, GHd);
            at_rows_add(xg_emb, m->p.dec_bih, (size_t)N, GHd);
        }
    }
    if (xg_emb != a->xg && !m->dec->no_cell) memcpy(a->xg, xg_emb, (size_t)N * GHd * sizeof(attend_real));
    m->step_y_in = y_in; /* what a kind remembers of the previous outputs (a pointer's exclusion) */
    m->step_S = S;
    m->dec->step_forward(m, t, N, S, active, feat_row, feat_stride);
}

/* ------------------------------------------------- teacher-forced forward */

static attend_status check_batch(const attend_model *m, const attend_batch *b, const char *who, attend_error *err) {
    CHECK(b->src && b->src_len && b->tgt_in && b->tgt_out && b->tgt_len, err, ATTEND_ERR_NULL,
          "%s: batch arrays are NULL (attend_batch_alloc)", who);
    TRY(at_model_check_source(m, b->src, b->src_len, b->N, b->S, who, err));
    CHECK(b->T >= 1 && b->T <= m->Tcap, err, ATTEND_ERR_CAPACITY,
          "%s: %d decoder steps, model capacity is max_tgt_len+1 = %d", who, b->T, m->Tcap);
    for (int n = 0; n < b->N; n++) {
        int tl = b->tgt_len[n];
        CHECK(tl >= 1 && tl <= b->T, err, ATTEND_ERR_SHAPE, "%s: row %d: target steps %d outside [1,%d]", who, n, tl,
              b->T);
        TRY(m->dec->check_targets(m, b, n, who, err));
    }
    return ATTEND_OK;
}

static double row_entropy(const attend_real *w, int S) {
    double h = 0;
    for (int j = 0; j < S; j++)
        if (w[j] > 0) h -= (double)w[j] * log((double)w[j]);
    return h;
}

attend_status at_model_forward(attend_model *m, const attend_batch *b, const at_run *run, attend_tf_stats *stats,
                               attend_error *err) {
    m->fwd_ready = 0;
    /* a reference model named by the options runs first, on the same batch (its plain teacher-forced
     * pass): the extensions that compare with it (frozen, adversarial) read its activations */
    attend_model *ref = run->o.reference;
    if (ref && !run->infer && !run->scoring) {
        CHECK(ref != m, err, ATTEND_ERR_ARG,
              "attend_forward: the reference model is this model (attend_model_clone for a copy)");
        CHECK(ref->cfg.src_vocab == m->cfg.src_vocab && ref->dec->vocabulary == m->dec->vocabulary &&
                  (!m->dec->vocabulary || ref->cfg.tgt_vocab == m->cfg.tgt_vocab),
              err, ATTEND_ERR_ARG,
              "attend_forward: the reference model's vocabularies (%d source, %d target ids, decoder %s) do not "
              "match this model's (%d, %d, decoder %s)",
              ref->cfg.src_vocab, ref->cfg.tgt_vocab, ref->dec->name, m->cfg.src_vocab, m->cfg.tgt_vocab,
              m->dec->name);
        at_run plain;
        memset(&plain, 0, sizeof plain);
        attend_status st = at_model_forward(ref, b, &plain, NULL, err);
        if (st) {
            char msg[ATTEND_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            return at_fail(err, st, "reference model: %s", msg);
        }
    }
    m->run = *run;
    /* a training step's forward (and anything a caller wrote into the
     * parameters since the last one): its backward reuses these packings */
    at_model_params_changed(m);
    TRY(check_batch(m, b, "attend_model_forward", err));
    TRY(at_ext_forward_begin(m, b, err));
    at_acts *a = &m->acts;
    int N = b->N, S = b->S, T = b->T, D = m->cfg.emb, F = m->F, GHd = m->G * m->cfg.dec_hidden;
    memcpy(m->fwd_src, b->src, (size_t)N * S * sizeof(int32_t));
    memcpy(m->fwd_src_len, b->src_len, (size_t)N * sizeof(int32_t));
    memcpy(m->fwd_tgt_out, b->tgt_out, (size_t)N * T * sizeof(int32_t));
    memcpy(m->fwd_tgt_len, b->tgt_len, (size_t)N * sizeof(int32_t));
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            m->fwd_tgt_in[(size_t)t * N + n] = m->dec->input_id(m, b->tgt_in[(size_t)n * T + t]);
            m->active[(size_t)t * N + n] = t < b->tgt_len[n];
        }
    at_model_encode(m, b->src, b->src_len, N, S);
    /* inputs chosen step by step (at_ext_feeds) get their projections step by step */
    int feeds = at_ext_feeds(m);
    /* every step's input embedding projection in one GEMM:
     * xg_emb [T*N,G*Hd] = emb_tgt [T*N,D] W_ih[:, :D]ᵀ + b_ih */
    for (int t = 0; !feeds && t < T; t++)
        m->dec->input_rows(m, a->emb_tgt + (size_t)t * N * D, m->fwd_tgt_in + (size_t)t * N, b->src, N, S);
    at_ext_site(m, a->emb_tgt, T, N, D, 0, AT_SITE_DEC_IN); /* a transform disables the table (encode) */
    m->dec_tab_on = m->dec_tab_on && m->V < T * N;
    if (feeds || m->dec->no_cell) {
        /* at_model_step below; a kind without a cell reads emb_tgt */
    } else if (m->dec_tab_on) { /* rows of dec_tab (at_model_encode), one per token */
        for (size_t r = 0; r < (size_t)T * N; r++)
            memcpy(a->xg_emb + r * GHd, a->dec_tab + (size_t)m->fwd_tgt_in[r] * GHd, (size_t)GHd * sizeof(attend_real));
    } else {
        at_model_linear(m, T * N, GHd, D, a->emb_tgt, D, m->p.dec_wih, m->Din, 0, a->xg_emb, GHd);
        at_rows_add(a->xg_emb, m->p.dec_bih, (size_t)T * N, GHd);
    }
    for (int t = 0; t < T; t++) {
        if (feeds && t > 0) at_ext_feed(m, t, N, T);
        at_model_step(m, t, N, S, m->fwd_tgt_in + (size_t)t * N, b->src, m->active + (size_t)t * N,
                      a->feat + (size_t)t * F, (size_t)T * F, !feeds);
    }
    if (m->dec->output_forward) m->dec->output_forward(m, N, S, T);

    double loss = 0, entropy = 0;
    int count = 0, correct = 0, seq_ok = 0, ent_rows = 0;
    for (int n = 0; n < N; n++) {
        int all_right = 1;
        for (int t = 0; t < b->tgt_len[n]; t++) {
            int32_t y = b->tgt_out[(size_t)n * T + t];
            int width, best = 0;
            const attend_real *lp = m->dec->output_row(m, n, t, N, S, T, &width);
            if (!at_ext_token_loss(m, n, t, T, lp, width, y, &loss, &best)) { /* −log p(y), the first maximum */
                loss -= lp[y];
                for (int v = 1; v < width; v++)
                    if (lp[v] > lp[best]) best = v;
            }
            if (best == y) correct++;
            else all_right = 0;
            count++;
            if (m->dec->attentive || m->dec->aligns) {
                entropy += row_entropy(a->weights + ((size_t)t * N + n) * S, S);
                ent_rows++;
            }
        }
        seq_ok += all_right;
    }
    at_ext_loss(m, N, S, T, &loss); /* the extensions' loss terms */
    m->fwd_N = N;
    m->fwd_S = S;
    m->fwd_T = T;
    m->fwd_count = count;
    m->fwd_ready = !m->run.no_backward;
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
    at_acts *a = &m->acts;
    int N = m->fwd_N, S = m->fwd_S, T = m->fwd_T;
    int D = m->cfg.emb, E = m->E, Hd = m->cfg.dec_hidden, GHd = m->G * Hd, F = m->F, Din = m->Din;
    attend_real inv = (attend_real)(1.0 / m->fwd_count);
    if (m->dec->output_backward) m->dec->output_backward(m, N, S, T, inv); /* into dfeat */
    memset(a->ds, 0, (size_t)N * Hd * sizeof(attend_real));
    memset(a->dcs, 0, (size_t)N * Hd * sizeof(attend_real));
    memset(a->dkp, 0, (size_t)N * S * (m->P > 0 ? m->P : 1) * sizeof(attend_real));
    memset(a->denc, 0, (size_t)N * S * E * sizeof(attend_real));
    memset(a->dfin, 0, (size_t)N * E * sizeof(attend_real));
    if (m->dec->backward_begin) m->dec->backward_begin(m, N, S);
    for (int t = T - 1; t >= 0; t--) {
        attend_real *dxg = a->dxg_all + (size_t)t * N * GHd;
        const attend_real *dfeat_t = a->dfeat + (size_t)t * F; /* row n at + n*T*F */
        memset(dxg, 0, (size_t)N * GHd * sizeof *dxg);
        memset(a->ds_prev, 0, (size_t)N * Hd * sizeof(attend_real));
        memset(a->dcs_prev, 0, (size_t)N * Hd * sizeof(attend_real));
        at_ext_step_backward(m, t, N, inv);
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
    if (m->dec->no_cell) {
        /* the kind's step_backward wrote d emb_tgt into demb */
        at_ext_site(m, a->demb, T, N, D, 0, AT_SITE_DEC_IN); /* forward: x = site(emb) */
        m->dec->input_rows_backward(m, a->demb, T, N, S);
    } else if (m->dec_tab_on) {
        /* forward: xg_emb[r] = dec_tab[y_r], dec_tab = tgt_emb W_ih[:, :D]ᵀ + b_ih */
        at_table_backward(m, a->dtab, a->demb, m->g.tgt_emb, m->g.dec_wih, Din, m->g.dec_bih, a->dxg_all,
                          m->fwd_tgt_in, NULL, 0, (size_t)T * N, m->V, GHd, m->p.tgt_emb, m->p.dec_wih);
    } else {
        at_gemm(1, 0, GHd, D, T * N, 1, a->dxg_all, GHd, a->emb_tgt, D, 1, m->g.dec_wih, Din);
        at_rows_sum(m->g.dec_bih, a->dxg_all, (size_t)T * N, GHd);
        at_gemm(0, 0, T * N, D, GHd, 1, a->dxg_all, GHd, m->p.dec_wih, Din, 0, a->demb, D);
        at_ext_site(m, a->demb, T, N, D, 0, AT_SITE_DEC_IN); /* forward: x = site(emb) */
        m->dec->input_rows_backward(m, a->demb, T, N, S);
    }
    at_encoder_backward(m, a->ds, N, S);

    m->fwd_ready = 0; /* the log-probabilities were turned into gradients in place */
    return at_ok(err);
}

/* ----------------------------------------------------------- public forward */

attend_status attend_forward(attend_model *m, const attend_batch *b, const attend_forward_options *o,
                             attend_tf_stats *stats, attend_error *err) {
    const char *who = "attend_forward";
    CHECK(m && b, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !m ? "model" : "batch");
    at_run run;
    memset(&run, 0, sizeof run);
    if (o) TRY(at_options_read(&run.o, sizeof run.o, o, o->size, "attend_forward_options", who, err));
    run.o.size = sizeof run.o;
    TRY(at_ext_options_range(NULL, &run.o, who, err));
    attend_train_options t;
    at_ext_train_view(&t, &run.o);
    int broken = at_ext_rule_broken(&m->cfg, &t);
    if (broken >= 0) return at_ext_rule_fail(&m->cfg, broken, who, err);
    TRY(at_ext_check_options(m, &t, NULL, who, err));
    return at_model_forward(m, b, &run, stats, err);
}
