/*
 * pointer.c — the POINTER decoder kind (Vinyals et al. 2015): the cell, then
 * attention with s_t as query; the masked log-softmax of the scores is the
 * output distribution over source positions (kept in scores[t] for the
 * loss; weights[t] holds the probabilities for alignments and entropy). No
 * target vocabulary: the input embedding is the source embedding of the
 * previously chosen position (BOS's row at the start). Features: none.
 *
 * With the setting `exclude` (attend_model_set_pointer_exclude; config JSON
 * "pointer_exclude"), a position once chosen is masked out of every later
 * step (its weight is exactly 0, its log-probability −inf): each step clears
 * the previous position (at_model_step's y_in) in the row's validity mask
 * m->valid [N,S], which the encoder set and which is therefore the set of
 * positions not yet chosen. Teacher forcing, greedy, beam and scoring all go
 * through this step, so they share the mask; backward needs nothing more (a
 * masked position has p = 0 and gets no gradient). Beam search moves the mask
 * rows with their hypotheses (declared as per-hypothesis rows).
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <string.h>

#include "seq2seq/decoders/decoder.h"
#include "seq2seq/extension.h"

typedef struct {
    int exclude; /* a chosen position is masked out of later steps */
} pointer_state;

static pointer_state *st(const attend_model *m) { return m->dec_state; }

static void dims(const attend_model_config *c, int E, int *Din, int *F, int *V) {
    (void)E;
    *Din = c->emb;
    *F = 1;
    *V = 1;
}

/* a new pointer model decodes permutations (loading sets the file's setting) */
static void init(attend_model *m) { st(m)->exclude = 1; }
static void clone(attend_model *dst, const attend_model *src) { st(dst)->exclude = st(src)->exclude; }
static int get_key(const attend_model *m) { return st(m)->exclude; }
static void set_key(attend_model *m, int on) { st(m)->exclude = on; }

/* the validity mask's rows follow their hypotheses (the exclusion mask) */
static void layout_acts(attend_model *m, at_act_layout *L) { at_act_rows(L, m->valid, 1, 1, AT_ROWS_STATE); }

/* x_t = src_emb[src[n, y_{t-1}]], or src_emb[BOS] at the start */
static void input_rows(const attend_model *m, attend_real *rows, const int32_t *y_in, const int32_t *src, int N,
                       int S) {
    int D = m->cfg.emb;
    for (int n = 0; n < N; n++) {
        int32_t pos = y_in[n];
        int32_t id = pos >= 0 && pos < S ? src[(size_t)n * S + pos] : ATTEND_BOS;
        memcpy(rows + (size_t)n * D, m->p.src_emb + (size_t)id * D, D * sizeof(attend_real));
    }
}

static int32_t input_id(const attend_model *m, int32_t y) {
    (void)m;
    return y;
}

static void input_rows_backward(attend_model *m, const attend_real *demb, int T, int N, int S) {
    int D = m->cfg.emb;
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            int32_t pos = m->fwd_tgt_in[(size_t)t * N + n];
            int32_t id = pos >= 0 ? m->fwd_src[(size_t)n * S + pos] : ATTEND_BOS;
            const attend_real *dr = demb + ((size_t)t * N + n) * D;
            attend_real *dst = m->g.src_emb + (size_t)id * D;
            for (int d = 0; d < D; d++) dst[d] += dr[d];
        }
}

static attend_status check_targets(const attend_model *m, const attend_batch *b, int n, const char *who,
                                   attend_error *err) {
    int tl = b->tgt_len[n], sl = b->src_len[n], exclude = st(m)->exclude;
    for (int t = 0; t < b->T; t++) {
        int32_t yi = b->tgt_in[(size_t)n * b->T + t], yo = b->tgt_out[(size_t)n * b->T + t];
        CHECK(yi >= -1 && yi < sl && yo >= -1 && yo < sl, err, ATTEND_ERR_ARG,
              "%s: row %d step %d: pointer positions %d -> %d outside [-1,%d)", who, n, t, (int)yi, (int)yo, sl);
        CHECK(t >= tl || yo >= 0, err, ATTEND_ERR_ARG,
              "%s: row %d step %d: no target position inside the target length %d", who, n, t, tl);
        CHECK(!exclude || tl <= sl, err, ATTEND_ERR_ARG,
              "%s: row %d: %d target positions from %d source positions (pointer_exclude: a position "
              "is used once)", who, n, tl, sl);
        if (exclude && t < tl) /* the mask hides every earlier input position */
            for (int u = 1; u <= t; u++)
                CHECK(b->tgt_in[(size_t)n * b->T + u] != yo, err, ATTEND_ERR_ARG,
                      "%s: row %d step %d: target position %d was already chosen at step %d "
                      "(pointer_exclude: a position is used once)", who, n, t, (int)yo, u - 1);
    }
    return ATTEND_OK;
}

static attend_status check_decode(const attend_model *m, const int32_t *src_len, int N, int max_len, const char *who,
                                  attend_error *err) {
    (void)m;
    for (int n = 0; n < N; n++)
        CHECK(src_len[n] <= max_len, err, ATTEND_ERR_CAPACITY,
              "%s: row %d: a pointer decoder emits src_len=%d positions, max_len is %d", who, n, (int)src_len[n],
              max_len);
    return ATTEND_OK;
}

static int decode_len(const attend_batch *b) { return b->S; }

static int finish(int t, int32_t token, int src_len) {
    (void)token;
    return t + 1 == src_len ? 2 : 0;
}

static int candidate(int32_t token) {
    (void)token;
    return 1;
}

/* the output distribution is the step's masked log-softmax, kept in scores */
static const attend_real *output_row(const attend_model *m, int n, int t, int N, int S, int T, int *width) {
    (void)T;
    *width = S;
    return m->acts.scores + ((size_t)t * N + n) * S;
}

static const attend_real *dist(attend_model *m, int t, int N, int S, int *W, int *logp) {
    *W = S;
    *logp = 1;
    return m->acts.scores + (size_t)t * N * S;
}

static void step_forward(attend_model *m, int t, int N, int S, const uint8_t *active, attend_real *feat_row,
                         size_t feat_stride) {
    at_acts *a = &m->acts;
    (void)feat_row;
    (void)feat_stride;
    attend_real *s_next = a->states + (size_t)(t + 1) * N * m->cfg.dec_hidden;
    if (st(m)->exclude && t > 0) /* the previous position is no longer available */
        for (int n = 0; n < N; n++) {
            int32_t y = m->step_y_in[n];
            if ((!active || active[n]) && y >= 0 && y < S) m->valid[(size_t)n * S + y] = 0;
        }
    at_dec_cell_forward(m, t, N, active);
    at_dec_scores_forward(m, t, N, S, s_next, 1); /* query s_t */
    /* w holds log-probabilities here; keep them in scores' place for the
     * loss and turn w into probabilities for alignments and entropy */
    attend_real *scores = a->scores + (size_t)t * N * S, *w = a->weights + (size_t)t * N * S;
    memcpy(scores, w, (size_t)N * S * sizeof *w);
    for (size_t i = 0; i < (size_t)N * S; i++) w[i] = isfinite(w[i]) ? (attend_real)exp((double)w[i]) : 0;
}

static void step_backward(attend_model *m, int t, int N, int S, const attend_real *dfeat_t, size_t dfeat_stride,
                          attend_real *dxg) {
    at_acts *a = &m->acts;
    (void)dfeat_t;
    (void)dfeat_stride;
    int T = m->fwd_T;
    attend_real inv = (attend_real)(1.0 / m->fwd_count);
    const uint8_t *active = m->active + (size_t)t * N;
    attend_real *s_next = a->states + (size_t)(t + 1) * N * m->cfg.dec_hidden;
    /* forward: loss −= logp[y], logp = masked log-softmax(scores) ⇒ dscores = (p − onehot)/count
     * (an extension's target distribution: its own gradient) */
    const attend_real *lp = a->scores + (size_t)t * N * S;
    memset(a->dscores, 0, (size_t)N * S * sizeof(attend_real));
    for (int n = 0; n < N; n++) {
        if (!active[n]) continue;
        int32_t y = m->fwd_tgt_out[(size_t)n * T + t];
        const attend_real *row = lp + (size_t)n * S;
        attend_real *d = a->dscores + (size_t)n * S;
        if (at_ext_position_grad(m, d, row, S, y, inv)) continue;
        for (int j = 0; j < S; j++) {
            int ok = isfinite(row[j]);
            attend_real p = ok ? (attend_real)exp((double)row[j]) : 0;
            d[j] = (p - (attend_real)(j == y)) * inv;
        }
    }
    at_dec_scores_backward(m, t, N, S, s_next, a->ds); /* query s_t */
    at_dec_cell_backward(m, t, N, dxg);
}

const at_decoder_ops at_decoder_pointer = {
    .name = "pointer",
    .attentive = 1,
    .vocabulary = 0,
    .start = -1,
    .eos = 0,
    .state_size = sizeof(pointer_state),
    .dims = dims,
    .layout_acts = layout_acts,
    .init = init,
    .clone = clone,
    .key = "pointer_exclude",
    .get_key = get_key,
    .set_key = set_key,
    .input_rows = input_rows,
    .input_id = input_id,
    .input_rows_backward = input_rows_backward,
    .check_targets = check_targets,
    .check_decode = check_decode,
    .decode_len = decode_len,
    .finish = finish,
    .candidate = candidate,
    .step_forward = step_forward,
    .output_row = output_row,
    .step_backward = step_backward,
    .dist = dist,
};

attend_status attend_model_set_pointer_exclude(attend_model *m, int on, attend_error *err) {
    CHECK(m, err, ATTEND_ERR_NULL, "attend_model_set_pointer_exclude: model is NULL");
    CHECK(on == 0 || on == 1, err, ATTEND_ERR_ARG, "attend_model_set_pointer_exclude: on=%d is not 0 or 1", on);
    CHECK(!on || m->dec == &at_decoder_pointer, err, ATTEND_ERR_ARG,
          "attend_model_set_pointer_exclude: the %s decoder does not point (only decoder=pointer excludes positions)",
          m->dec->name);
    if (m->dec == &at_decoder_pointer) st(m)->exclude = on;
    m->fwd_ready = 0;
    return at_ok(err);
}

int attend_model_pointer_exclude(const attend_model *m) { return m && m->dec == &at_decoder_pointer ? st(m)->exclude : 0; }
