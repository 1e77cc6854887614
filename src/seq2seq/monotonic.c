/*
 * monotonic.c — the model's glue for monotonic attention (config monotonic =
 * 1, BAHDANAU and LUONG; the kernels are core/monotonic.c). The score
 * function's output is the energy e_tj; p_tj = σ(e_tj + r) with the model's
 * tensor attention.r. attend_model_forward (training, evaluation) runs the
 * expected alignment, whose backward runs over j and back over t (α_t
 * depends on α_{t−1}); decoding, forced scoring and interventions run the
 * hard process: each row keeps its attended position, scans on from it and
 * attends to the first position with p >= 0.5, or (none left) to nothing.
 *
 * Dimension letters: see model_internal.h.
 */
#include <string.h>

#include "seq2seq/model_internal.h"
#include "core/monotonic.h"

void at_mono_weights_forward(attend_model *m, int t, int N, int S) {
    at_acts *a = &m->acts;
    size_t NS = (size_t)N * S;
    const attend_real *e = a->scores + (size_t)t * NS;
    attend_real *w = a->weights + (size_t)t * NS, r = m->p.attn_r[0];
    if (m->mono_expected) {
        at_monotonic_step_forward(w, a->mono_p + (size_t)t * NS, a->mono_q + (size_t)t * NS, e, r,
                                  t ? w - NS : NULL, m->valid, NULL, N, S, (size_t)S);
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
