/*
 * pointer.c — the POINTER decoder kind (Vinyals et al. 2015): the cell, then
 * attention with s_t as query; the masked log-softmax of the scores is the
 * output distribution over source positions (kept in scores[t] for the
 * loss; weights[t] holds the probabilities for alignments and entropy). No
 * target vocabulary: the input embedding is the source embedding of the
 * previously chosen position (BOS's row at the start). Features: none.
 *
 * With m->pointer_exclude, a position once chosen is masked out of every
 * later step (its weight is exactly 0, its log-probability −inf): each step
 * clears the previous position (at_model_step's y_in) in the row's validity
 * mask m->valid [N,S], which the encoder set and which is therefore the set of
 * positions not yet chosen. Teacher forcing, greedy, beam and scoring all go
 * through this step, so they share the mask; backward needs nothing more (a
 * masked position has p = 0 and gets no gradient). Beam search moves the mask
 * rows with their hypotheses (reorder).
 *
 * Dimension letters: see model_internal.h.
 */
#include <math.h>
#include <string.h>

#include "seq2seq/decoders/decoder.h"

static void dims(const attend_model_config *c, int E, int *Din, int *F) {
    (void)E;
    *Din = c->emb;
    *F = 1;
}

static void step_forward(attend_model *m, int t, int N, int S, const uint8_t *active, attend_real *feat_row,
                         size_t feat_stride) {
    at_acts *a = &m->acts;
    (void)feat_row;
    (void)feat_stride;
    attend_real *s_next = a->states + (size_t)(t + 1) * N * m->cfg.dec_hidden;
    if (m->pointer_exclude && t > 0) /* the previous position is no longer available */
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
    /* forward: loss −= logp[y], logp = masked log-softmax(scores) */
    /* with label smoothing ε the target is q = (1−ε) onehot + ε/k over the k
     * positions not masked: dscores = (p − q)/count */
    const attend_real *lp = a->scores + (size_t)t * N * S;
    memset(a->dscores, 0, (size_t)N * S * sizeof(attend_real));
    for (int n = 0; n < N; n++) {
        if (!active[n]) continue;
        int32_t y = m->fwd_tgt_out[(size_t)n * T + t];
        int k = 0;
        if (m->fwd_ls > 0)
            for (int j = 0; j < S; j++) k += isfinite(lp[(size_t)n * S + j]) != 0;
        attend_real q_other = k ? (attend_real)(m->fwd_ls / k) : 0, q_y = (attend_real)(1 - m->fwd_ls) + q_other;
        for (int j = 0; j < S; j++) {
            int ok = isfinite(lp[(size_t)n * S + j]);
            attend_real p = ok ? (attend_real)exp((double)lp[(size_t)n * S + j]) : 0;
            a->dscores[(size_t)n * S + j] = (p - (j == y ? q_y : ok ? q_other : 0)) * inv;
        }
    }
    at_dec_scores_backward(m, t, N, S, s_next, a->ds); /* query s_t */
    at_dec_cell_backward(m, t, N, dxg);
}

/* beam search: the exclusion mask rows follow their hypotheses. Scratch:
 * step t+1's weight slot [n,S] (not yet written; n > 0 means t+1 < S <= Tcap
 * since every hypothesis finishes at step S-1) holds the gathered bytes. */
static void reorder(attend_model *m, int t, const int *parent, int n, int live) {
    (void)live;
    if (!m->pointer_exclude || n <= 0) return;
    int S = m->step_S;
    uint8_t *tmp = (uint8_t *)(void *)(m->acts.weights + (size_t)(t + 1) * n * S);
    for (int j = 0; j < n; j++) memcpy(tmp + (size_t)j * S, m->valid + (size_t)parent[j] * S, (size_t)S);
    memcpy(m->valid, tmp, (size_t)n * S);
}

const at_decoder_ops at_decoder_pointer = {
    .name = "pointer",
    .attentive = 1,
    .points = 1,
    .dims = dims,
    .layout_params = NULL,
    .layout_acts = NULL,
    .begin = NULL,
    .replicate = NULL,
    .reorder = reorder,
    .step_forward = step_forward,
    .step_backward = step_backward,
    .input_backward = NULL,
};
