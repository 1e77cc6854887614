/*
 * sampling.c — scheduled sampling (Bengio et al. 2015) in the teacher-forced
 * forward: at training step k each decoder input y_{t-1} (t >= 1) of each row
 * is, with probability p_k, replaced by the model's own argmax prediction of
 * step t-1, made in the same forward (the decoders' teacher-forced forward is
 * already step by step). The schedule is a linear ramp, p_k = p * min(1, k /
 * ramp) (ramp 0: p throughout). The choice is a counter-based hash of (seed,
 * k, the row's index within the step's whole batch, t), not a stream of
 * random numbers: the same for a seed, the same after resuming (nothing to
 * save) and the same however the batch is cut into gradient shards. No
 * gradient flows through the argmax (the chosen token is an input like the
 * reference). Token decoders only: the pointer decoder is refused by
 * attend_trainer_set_options (with its exclusion mask a fed-back wrong
 * position would mask a later target position, making the loss infinite).
 *
 * Dimension letters: see model_internal.h.
 */
#include <string.h>

#include "seq2seq/model_internal.h"

/* splitmix64's finalizer: a bijection of 64 bits that mixes well */
static uint64_t mix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double at_ss_prob(double p, long ramp, long step) {
    if (ramp <= 0 || step >= ramp) return p;
    return p * (double)step / (double)ramp;
}

uint64_t at_ss_key(uint64_t seed, long step) { return mix64(mix64(seed) ^ (uint64_t)step); }

/* a uniform in [0,1) from (key, row, t) */
static double ss_uniform(uint64_t key, long row, int t) {
    uint64_t z = mix64(mix64(key ^ mix64((uint64_t)row)) ^ (uint64_t)t);
    return (double)(z >> 11) * 0x1.0p-53;
}

/* row n samples at step t */
static int ss_takes(const attend_model *m, int n, int t) {
    return t < m->fwd_tgt_len[n] && ss_uniform(m->ss_key, m->ss_row0 + n, t) < m->ss_prob;
}

void at_ss_feed(attend_model *m, int t, int N, int T) {
    at_acts *a = &m->acts;
    int F = m->F, V = m->cfg.tgt_vocab, r = 0;
    for (int n = 0; n < N; n++) /* step_feat [r,F]: the sampling rows' features of step t-1 */
        if (ss_takes(m, n, t))
            memcpy(a->step_feat + (size_t)r++ * F, a->feat + ((size_t)n * T + (t - 1)) * F, (size_t)F * sizeof(attend_real));
    if (!r) return;
    /* logits [r,V] = feat W_oᵀ + b_o; the argmax as greedy takes it (the first maximum) */
    at_model_linear(m, r, V, F, a->step_feat, F, m->p.out_w, F, 0, a->step_logits, V);
    for (int n = 0, i = 0; n < N; n++) {
        if (!ss_takes(m, n, t)) continue;
        attend_real *z = a->step_logits + (size_t)i++ * V;
        int best = 0;
        for (int v = 0; v < V; v++) z[v] += m->p.out_b[v];
        for (int v = 1; v < V; v++)
            if (z[v] > z[best]) best = v;
        m->fwd_tgt_in[(size_t)t * N + n] = best;
    }
}
