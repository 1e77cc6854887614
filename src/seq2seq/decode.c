/*
 * decode.c — decoding through the model: one step's logits, greedy decoding,
 * forced scoring, and the small interface beam.c and intervene.c decode
 * through (inference mode, replicating and reordering hypotheses' rows, the
 * weight hook), so they never reach into the activation arena's layout.
 *
 * Dimension letters: see model_internal.h.
 */
#include <string.h>

#include "seq2seq/model_internal.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/copy.h"

/* ------------------------------------------------------------------ greedy */

/* logits [N,V] of one step from features feat [N,F]; returns them in a->step_logits. */
void at_model_step_logits(attend_model *m, int N, const attend_real *feat) {
    int V = m->cfg.tgt_vocab, F = m->F;
    at_model_linear(m, N, V, F, feat, F, m->p.out_w, F, 0, m->acts.step_logits, V);
    for (int n = 0; n < N; n++)
        for (int v = 0; v < V; v++) m->acts.step_logits[(size_t)n * V + v] += m->p.out_b[v];
}

const attend_real *at_model_step_dist(attend_model *m, int t, int N, int S, int *W, int *logp) {
    if (m->dec->points) { /* the scores' masked log-softmax, −inf where masked */
        *W = S;
        *logp = 1;
        return m->acts.scores + (size_t)t * N * S;
    }
    at_model_step_logits(m, N, m->acts.step_feat);
    if (m->cfg.copy) { /* the extended distribution, log-probabilities (copy.c) */
        *W = m->cfg.tgt_vocab + S;
        *logp = 1;
        return at_copy_step_dist(m, t, N, S);
    }
    *W = m->cfg.tgt_vocab;
    *logp = 0;
    return m->acts.step_logits;
}

void at_model_begin_infer(attend_model *m) {
    m->fwd_ready = 0;
    m->infer = 1;
}

void at_model_end_infer(attend_model *m) { m->infer = 0; }

int at_model_attentive(const attend_model *m) { return m->dec->attentive; }
int at_model_points(const attend_model *m) { return m->dec->points; }

void at_model_set_weight_hook(attend_model *m, at_weight_hook_fn fn, void *user) {
    m->weight_hook = fn;
    m->weight_hook_user = fn ? user : NULL;
}

void at_model_replicate(attend_model *m, int K, int S) {
    at_acts *a = &m->acts;
    int E = m->E, Hd = m->cfg.dec_hidden, top = m->cfg.enc_layers - 1, P = m->P;
    if (m->dec->replicate) m->dec->replicate(m, K, S);
    if (m->cfg.copy) at_copy_replicate(m, K, S);
    for (int k = 1; k < K; k++) {
        memcpy(a->enc_out[top] + (size_t)k * S * E, a->enc_out[top], (size_t)S * E * sizeof(attend_real));
        if (P > 0) memcpy(a->kp + (size_t)k * S * P, a->kp, (size_t)S * P * sizeof(attend_real));
        memcpy(a->fin_cat + (size_t)k * E, a->fin_cat, (size_t)E * sizeof(attend_real));
        memcpy(a->states + (size_t)k * Hd, a->states, (size_t)Hd * sizeof(attend_real));
        memcpy(m->valid + (size_t)k * S, m->valid, (size_t)S);
    }
    memset(a->cstates, 0, (size_t)K * Hd * sizeof(attend_real));
    memset(a->htilde, 0, (size_t)K * Hd * sizeof(attend_real));
}

/* dst [n,w] = rows [parent[j]] of src (rows of width w), through tmp [n,w] (src and dst may overlap). */
static void gather_rows(attend_real *dst, const attend_real *src, attend_real *tmp, const int *parent, int n,
                        size_t w) {
    for (int j = 0; j < n; j++) memcpy(tmp + (size_t)j * w, src + (size_t)parent[j] * w, w * sizeof *src);
    memcpy(dst, tmp, (size_t)n * w * sizeof *dst);
}

void at_model_reorder(attend_model *m, int t, const int *parent, int n, int live) {
    at_acts *a = &m->acts;
    size_t Hd = (size_t)m->cfg.dec_hidden;
    /* the state arrays are indexed [t][rows][Hd]: step t+1's rows move from
     * the layout of `live` rows to that of n rows, in their hypotheses' order */
    gather_rows(a->states + (size_t)(t + 1) * n * Hd, a->states + (size_t)(t + 1) * live * Hd, a->row_tmp, parent, n,
                Hd);
    if (m->cfg.cell == ATTEND_CELL_LSTM)
        gather_rows(a->cstates + (size_t)(t + 1) * n * Hd, a->cstates + (size_t)(t + 1) * live * Hd, a->row_tmp,
                    parent, n, Hd);
    at_dec_stack_reorder(m, t, parent, n, live);
    if (m->dec->reorder) m->dec->reorder(m, t, parent, n, live);
    if (m->cfg.monotonic) at_mono_reorder(m, parent, n);
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
    int pointer = m->dec->points;
    if (pointer)
        for (int n = 0; n < N; n++)
            CHECK(src_len[n] <= max_len, err, ATTEND_ERR_CAPACITY,
                  "%s: row %d: a pointer decoder emits src_len=%d positions, max_len is %d", who, n, (int)src_len[n],
                  max_len);
    at_acts *a = &m->acts;
    int F = m->F, V = m->cfg.tgt_vocab;
    int32_t *y = m->fwd_tgt_in; /* [N] previous tokens */
    at_model_begin_infer(m); /* decoding reuses the activation buffers */
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
        at_model_step(m, t, N, S, y, src, active, a->step_feat, (size_t)F, 0);
        const attend_real *ext = NULL; /* copy: the extended distribution [N,V+S] */
        if (!pointer) at_model_step_logits(m, N, a->step_feat);
        if (m->cfg.copy) ext = at_copy_step_dist(m, t, N, S);
        for (int n = 0; n < N; n++) {
            if (!active[n]) continue;
            const attend_real *row = pointer ? a->scores + ((size_t)t * N + n) * S
                                     : ext   ? ext + (size_t)n * (V + S)
                                             : a->step_logits + (size_t)n * V;
            int width = pointer ? src_len[n] : ext ? V + S : V, best = 0;
            for (int v = 1; v < width; v++)
                if (row[v] > row[best]) best = v;
            if (!pointer && best == ATTEND_EOS) {
                out_len[n] = t;
                running--;
                continue;
            }
            out[(size_t)n * max_len + t] = best;
            if (align && m->dec->attentive)
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
    at_model_end_infer(m);
    return at_ok(err);
}

/* ------------------------------------------------------------ forced score */

attend_status attend_model_score(attend_model *m, const int32_t *src, int S, const int32_t *tgt, int T,
                                 double *logp, attend_real *align, attend_error *err) {
    const char *who = "attend_model_score";
    CHECK(m && src && tgt && logp, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !m ? "model" : !src ? "src [S]" : !tgt ? "tgt [T]" : "logp");
    int pointer = m->dec->points;
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
    double drop_p = m->drop_p, ls = m->ls; /* scoring neither drops nor smooths */
    m->drop_p = m->ls = 0;
    m->mono_scoring = 1; /* MONOTONIC: the hard process, as decoding runs it */
    attend_status rc = attend_model_forward(m, &b, &st, err);
    m->mono_scoring = 0;
    if (m->cfg.monotonic) m->fwd_ready = 0; /* hard choices: nothing to differentiate */
    m->drop_p = drop_p;
    m->ls = ls;
    if (rc == ATTEND_OK) {
        *logp = -st.loss * st.tokens;
        if (align) {
            if (!m->dec->attentive) memset(align, 0, (size_t)steps * S * sizeof *align);
            else /* weights are [T,N,S] with N = 1 */
                memcpy(align, m->acts.weights, (size_t)steps * S * sizeof *align);
        }
    }
    return rc;
}
