/*
 * monotonic.c — the model's glue for monotonic attention (config monotonic =
 * 1, BAHDANAU and LUONG; the kernels are core/monotonic.c). The score
 * function's output is the energy e_tj; p_tj = σ(e_tj + r) with the model's
 * tensor attention.r. attend_model_forward (training, evaluation) runs the
 * expected alignment, whose backward runs over j and back over t (α_t
 * depends on α_{t−1}); in a trainer's steps the energies get zero-mean,
 * unit-variance Gaussian noise before the sigmoid (Raffel et al.'s recipe,
 * which drives p towards 0 or 1, so the hard process at test time matches
 * what training saw); evaluation and plain forwards add none. Decoding, forced scoring and interventions run the
 * hard process: each row keeps its attended position, scans on from it and
 * attends to the first position with p >= 0.5, or (none left) to nothing.
 *
 * Dimension letters: see model_internal.h.
 */
#include <math.h>
#include <string.h>

#include "seq2seq/model_internal.h"
#include "core/monotonic.h"

/* splitmix64's finaliser: 64 well-mixed bits of x. */
static uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* A uniform in (0,1) from 53 bits of h. */
static double unit(uint64_t h) { return ((double)(h >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

void at_mono_train_noise(attend_model *m, uint64_t seed, long step, long row0) {
    if (!m->cfg.monotonic) return;
    m->mono_noise_on = 1;
    m->mono_noise_key = mix64(mix64(seed ^ 0x6d6f6e6f746f6e65ULL) + (uint64_t)step);
    m->mono_noise_row0 = row0;
}

/* z [N,S] ~ N(0,1) for step t: Box–Muller on hashes of (key, row, t, j). */
static void fill_noise(const attend_model *m, attend_real *z, int t, int N, int S) {
    for (int n = 0; n < N; n++)
        for (int j = 0; j < S; j++) {
            uint64_t h = mix64(m->mono_noise_key ^ mix64(((uint64_t)(m->mono_noise_row0 + n) << 40) ^
                                                         ((uint64_t)t << 20) ^ (uint64_t)j));
            double u1 = unit(h), u2 = unit(mix64(h));
            z[(size_t)n * S + j] = (attend_real)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
        }
}

void at_mono_weights_forward(attend_model *m, int t, int N, int S) {
    at_acts *a = &m->acts;
    size_t NS = (size_t)N * S;
    const attend_real *e = a->scores + (size_t)t * NS;
    attend_real *w = a->weights + (size_t)t * NS, r = m->p.attn_r[0];
    if (m->mono_expected) {
        if (m->mono_noise_on) fill_noise(m, a->mono_noise, t, N, S);
        at_monotonic_step_forward(w, a->mono_p + (size_t)t * NS, a->mono_q + (size_t)t * NS, e, r,
                                  m->mono_noise_on ? a->mono_noise : NULL, t ? w - NS : NULL, m->valid, NULL, N, S,
                                  (size_t)S);
        return;
    }
    if (t == 0)
        for (int n = 0; n < N; n++) m->mono_pos[n] = 0;
    at_monotonic_hard_step(w, m->mono_pos, e, r, m->valid, NULL, NULL, N, S, (size_t)S);
}

void at_mono_weights_backward(attend_model *m, int t, int N, int S) {
    at_acts *a = &m->acts;
    size_t NS = (size_t)N * S;
    /* d α_t = from the context (dweights) + from step t+1's recurrence (the carry) */
    if (t < m->fwd_T - 1)
        for (size_t i = 0; i < NS; i++) a->dweights[i] += a->mono_dcarry[i];
    memset(a->mono_dcarry, 0, NS * sizeof *a->mono_dcarry);
    /* forward: α_t = expected alignment(e_t + r, α_{t−1}) */
    at_monotonic_step_backward(a->dscores, m->g.attn_r, t ? a->mono_dcarry : NULL, a->dweights,
                               a->mono_p + (size_t)t * NS, a->mono_q + (size_t)t * NS, m->valid, NULL, N, S,
                               (size_t)S);
}

void at_mono_reorder(attend_model *m, const int *parent, int n) {
    int32_t *tmp = m->mono_pos + m->cfg.max_batch;
    for (int j = 0; j < n; j++) tmp[j] = m->mono_pos[parent[j]];
    memcpy(m->mono_pos, tmp, (size_t)n * sizeof *tmp);
}
