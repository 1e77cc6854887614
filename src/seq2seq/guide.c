/*
 * guide.c — guided alignment (Chen et al. 2016, "Guided Alignment Training
 * for Topic-Aware Neural Machine Translation"; Marian's --guided-alignment
 * with the "ce" cost): a cross-entropy between the attention weights and word
 * alignments given with the data, added to the teacher-forced loss.
 *
 * For row n and decoder step t (predicting target token t) with k >= 1
 * aligned source positions, the reference a_nt is uniform over them and
 *     term_nt = −Σ_s a_nts log(α_nts + ε),   ε = AT_GUIDE_EPS (Marian's 1e-6),
 * α_nt the step's attention weights. The loss gains λ/count Σ_{n,t} term_nt,
 * count being the counted target tokens (the cross-entropy's divisor), and its
 * gradient reaches the attention weights (then the normaliser and the scores)
 * in the decoder's attention backward: dα_nts += −λ/count · a_nts/(α_nts + ε).
 *
 * Dimension letters: see model_internal.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seq2seq/model_internal.h"
#include "seq2seq/decoders/decoder.h"

#define AT_GUIDE_EPS 1e-6

attend_status attend_model_set_guided_alignment(attend_model *m, double lambda, attend_error *err) {
    const char *who = "attend_model_set_guided_alignment";
    CHECK(m, err, ATTEND_ERR_NULL, "%s: model is NULL", who);
    CHECK(isfinite(lambda) && lambda >= 0, err, ATTEND_ERR_ARG, "%s: guided_alignment=%g, must be in [0, inf)", who,
          lambda);
    CHECK(lambda == 0 || m->dec->attentive, err, ATTEND_ERR_ARG,
          "%s: guided_alignment with decoder %s, which has no attention weights", who, m->dec->name);
    CHECK(lambda == 0 || !m->dec->points, err, ATTEND_ERR_ARG,
          "%s: guided_alignment with decoder %s: its attention is its output distribution, which the target "
          "positions train already", who, m->dec->name);
    if (lambda > 0 && !m->guide_ref) {
        size_t bytes = (size_t)m->Tcap * (size_t)m->cfg.max_batch * (size_t)m->cfg.max_src_len; /* bounded by the
                                                                                                  config check */
        m->guide_ref = calloc(bytes, 1);
        CHECK(m->guide_ref, err, ATTEND_ERR_ALLOC, "%s: out of memory for an alignment mask of %zu bytes", who,
              bytes);
    }
    m->guide = lambda;
    m->guide_on = 0;
    m->fwd_ready = 0;
    return at_ok(err);
}

double attend_model_guided_alignment(const attend_model *m) { return m ? m->guide : 0; }

double attend_model_guided_loss(const attend_model *m) {
    return m && m->guide_on && m->fwd_count > 0 ? m->guide_sum / m->fwd_count : 0;
}

attend_status at_guide_begin(attend_model *m, const attend_batch *b, attend_error *err) {
    m->guide_on = 0;
    m->guide_sum = 0;
    if (!(m->guide > 0) || !b->align) return ATTEND_OK;
    int N = b->N, S = b->S, T = b->T;
    for (int n = 0; n < N; n++)
        for (int t = 0; t < T; t++) {
            const uint8_t *row = b->align + ((size_t)n * T + t) * S; /* [N,T,S] */
            uint8_t *ref = m->guide_ref + ((size_t)t * N + n) * S;   /* [T,N,S] */
            for (int s = 0; s < S; s++) {
                CHECK(!row[s] || (t < b->tgt_len[n] && s < b->src_len[n]), err, ATTEND_ERR_ARG,
                      "attend_model_forward: row %d step %d: alignment to source position %d outside the row's %d "
                      "source positions and %d steps", n, t, s, (int)b->src_len[n], (int)b->tgt_len[n]);
                ref[s] = row[s] != 0;
            }
        }
    m->guide_on = 1;
    return ATTEND_OK;
}

double at_guide_loss(attend_model *m, int N, int S, int T) {
    if (!m->guide_on) return 0;
    const attend_real *w = m->acts.weights; /* [T,N,S] */
    double sum = 0;
    for (size_t r = 0; r < (size_t)T * N; r++) {
        const uint8_t *ref = m->guide_ref + r * S;
        int k = 0;
        double row = 0;
        for (int s = 0; s < S; s++)
            if (ref[s]) {
                k++;
                row -= log((double)w[r * S + s] + AT_GUIDE_EPS);
            }
        if (k) sum += row / k;
    }
    m->guide_sum = sum;
    return sum;
}

void at_guide_backward(const attend_model *m, int t, int N, int S, attend_real *dweights) {
    if (!m->guide_on) return;
    const attend_real *w = m->acts.weights + (size_t)t * N * S; /* [N,S] */
    const uint8_t *ref = m->guide_ref + (size_t)t * N * S;     /* [N,S] */
    double scale = m->guide / m->fwd_count;
    for (int n = 0; n < N; n++) {
        int k = 0;
        for (int s = 0; s < S; s++) k += ref[(size_t)n * S + s];
        if (!k) continue;
        /* forward: term = −(1/k) Σ_{s aligned} log(α_s + ε), times λ/count */
        for (int s = 0; s < S; s++)
            if (ref[(size_t)n * S + s])
                dweights[(size_t)n * S + s] -= (attend_real)(scale / (k * ((double)w[(size_t)n * S + s] + AT_GUIDE_EPS)));
    }
}
