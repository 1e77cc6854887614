/*
 * stack.c — the stacked decoder RNN (cfg.dec_layers = L > 1; Luong et al.
 * 2015, GNMT): layer 0 takes the kind's cell input (xg, as one layer does),
 * layer l > 0 takes layer l-1's new state; the top layer's states are
 * acts.states, so the kinds' attention queries and features read the top
 * layer unchanged. Every layer starts from the bridge's s_0 (the same
 * [N,Hd] for each: PyTorch's h0 = s0.expand(L, N, Hd)), LSTM cells from 0.
 * Tensors of layer l >= 1: decoder.weight_ih_l<l> [G*Hd, Hd],
 * decoder.weight_hh_l<l>, decoder.bias_ih_l<l>, decoder.bias_hh_l<l>
 * (layer 0 keeps decoder.weight_ih ...), laid out by common.c's
 * at_dec_stack_layout_params / _acts. common.c's cell step hands over to this
 * file when L > 1; one layer never comes here.
 *
 * Dimension letters: see state.h.
 */
#include <string.h>

#include "seq2seq/decoders/decoder.h"
#include "seq2seq/linear.h"

/* Layer l's cell, states [T+1,N,Hd], cell states and saved values. */
static void layer(const attend_model *m, int l, int N, at_cell *cell, attend_real **st, attend_real **cs,
                  attend_real **saved) {
    const at_acts *a = &m->acts;
    int top = l == m->Ld - 1;
    cell->kind = m->cfg.cell;
    cell->I = l == 0 ? m->Din : m->cfg.dec_hidden;
    cell->H = m->cfg.dec_hidden;
    cell->W_ih = l == 0 ? m->p.dec_wih : m->p.dec_up_wih[l];
    cell->W_hh = l == 0 ? m->p.dec_whh : m->p.dec_up_whh[l];
    cell->b_ih = l == 0 ? m->p.dec_bih : m->p.dec_up_bih[l];
    cell->b_hh = l == 0 ? m->p.dec_bhh : m->p.dec_up_bhh[l];
    at_model_cell_copies(m, cell, 0, N); /* the input projections are the step's own */
    *st = top ? a->states : a->lstates[l];
    *cs = top ? a->cstates : a->lcstates[l];
    *saved = top ? a->dec_saved : a->lsaved[l];
}

void at_dec_stack_forward(attend_model *m, int t, int N, const uint8_t *active) {
    at_acts *a = &m->acts;
    int Hd = m->cfg.dec_hidden, GHd = m->G * Hd, lstm = m->cfg.cell == ATTEND_CELL_LSTM;
    size_t cell_w = (size_t)at_cell_saved_width(m->cfg.cell, Hd), NH = (size_t)N * Hd;
    if (t == 0) /* every lower layer starts from the bridge's s_0 (states[0]), c_0 = 0 */
        for (int l = 0; l < m->Ld - 1; l++) {
            memcpy(a->lstates[l], a->states, NH * sizeof(attend_real));
            if (lstm) memset(a->lcstates[l], 0, NH * sizeof(attend_real));
        }
    for (int l = 0; l < m->Ld; l++) {
        at_cell cell;
        attend_real *st, *cs, *saved;
        layer(m, l, N, &cell, &st, &cs, &saved);
        const attend_real *xg = a->xg;
        if (l > 0) { /* xg_up = s^{l-1}_t W_ih_lᵀ + b_ih_l */
            attend_real *below = (l - 1 == m->Ld - 1 ? a->states : a->lstates[l - 1]) + (size_t)(t + 1) * NH;
            at_model_linear(m, N, GHd, Hd, below, Hd, cell.W_ih, Hd, 0, a->xg_up, GHd);
            at_rows_add(a->xg_up, cell.b_ih, (size_t)N, GHd);
            xg = a->xg_up;
        }
        attend_real *s_prev = st + (size_t)t * NH, *c_prev = cs + (size_t)t * NH;
        at_cell_step_forward(&cell, s_prev + NH, lstm ? c_prev + NH : NULL,
                             saved + (size_t)(m->run.infer ? 0 : t) * N * cell_w, xg, s_prev, lstm ? c_prev : NULL,
                             active, N, a->step_scratch);
    }
}

void at_dec_stack_backward(attend_model *m, int t, int N, attend_real *dxg) {
    at_acts *a = &m->acts;
    int Hd = m->cfg.dec_hidden, GHd = m->G * Hd, lstm = m->cfg.cell == ATTEND_CELL_LSTM, L = m->Ld;
    size_t cell_w = (size_t)at_cell_saved_width(m->cfg.cell, Hd), NH = (size_t)N * Hd;
    const uint8_t *active = m->active + (size_t)t * N;
    if (t == m->fwd_T - 1) /* the last step: nothing from later steps yet */
        for (int l = 0; l < L - 1; l++) {
            memset(a->lds[l], 0, NH * sizeof(attend_real));
            memset(a->ldcs[l], 0, NH * sizeof(attend_real));
        }
    for (int l = L - 1; l >= 0; l--) { /* top down: layer l's input gradient reaches layer l-1 first */
        at_cell cell;
        attend_real *st, *cs, *saved;
        layer(m, l, N, &cell, &st, &cs, &saved);
        int top = l == L - 1;
        attend_real *dh = top ? a->ds : a->lds[l], *dc = top ? a->dcs : a->ldcs[l];
        attend_real *dh_prev = top ? a->ds_prev : a->lds_prev, *dc_prev = top ? a->dcs_prev : a->ldcs_prev;
        attend_real *dx = l == 0 ? dxg : a->dxg_up;
        if (!top) {
            memset(dh_prev, 0, NH * sizeof(attend_real));
            memset(dc_prev, 0, NH * sizeof(attend_real));
        }
        if (l > 0) memset(dx, 0, (size_t)N * GHd * sizeof(attend_real));
        at_cell_grads cg_hh = {NULL, l == 0 ? m->g.dec_whh : m->g.dec_up_whh[l], NULL,
                               l == 0 ? m->g.dec_bhh : m->g.dec_up_bhh[l]};
        at_cell_step_backward(&cell, &cg_hh, dx, dh_prev, lstm ? dc_prev : NULL, dh, lstm ? dc : NULL,
                              saved + (size_t)t * N * cell_w, st + (size_t)t * NH, lstm ? cs + (size_t)t * NH : NULL,
                              active, N, a->step_scratch);
        if (l > 0) {
            /* forward: xg_up = s^{l-1}_t W_ih_lᵀ + b_ih_l (s^{l-1}_t: the layer below's new state) */
            const attend_real *below = a->lstates[l - 1] + (size_t)(t + 1) * NH;
            at_gemm(1, 0, GHd, Hd, N, 1, dx, GHd, below, Hd, 1, m->g.dec_up_wih[l], Hd);
            at_rows_sum(m->g.dec_up_bih[l], dx, (size_t)N, GHd);
            at_model_linear_dx(m, N, GHd, Hd, dx, GHd, cell.W_ih, Hd, 1, a->lds[l - 1], Hd);
        }
        if (!top) { /* d s^l_{t-1} becomes layer l's running gradient */
            memcpy(a->lds[l], dh_prev, NH * sizeof(attend_real));
            memcpy(a->ldcs[l], dc_prev, NH * sizeof(attend_real));
        }
    }
    if (t == 0) /* forward: s^l_0 = s_0 for every layer ⇒ d s_0 += Σ_l d s^l_0 */
        for (int l = 0; l < L - 1; l++)
            for (size_t i = 0; i < NH; i++) a->ds_prev[i] += a->lds[l][i];
}
