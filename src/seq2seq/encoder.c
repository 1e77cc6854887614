/*
 * encoder.c — the encoder of the seq2seq model: source embeddings (or the
 * per-token input-projection table), the bidirectional RNN stack, the
 * bridge s_0 = tanh(W_br [h_fwd; h_bwd] + b_br) and the attention keys;
 * forward and backward. The embedding and table gradients are shared with
 * the decoder input (model.c).
 *
 * Dimension letters: see model_internal.h (He per direction, E = 2He).
 */
#include <math.h>
#include <string.h>

#include "seq2seq/model_internal.h"
#include "seq2seq/dropout.h"
#include "core/vmath.h"


/* Layer l, direction dir's cell, with the copies of its weights that
 * products of rows_ih (the input projection; 0: from the table) and rows_hh
 * rows read. */
static void enc_cell(const attend_model *m, const at_model_tensors *w, int l, int dir, int rows_ih, int rows_hh,
                     at_cell *cell) {
    cell->kind = m->cfg.cell;
    cell->I = l == 0 ? m->cfg.emb : m->E;
    cell->H = m->cfg.enc_hidden;
    cell->W_ih = w->enc_wih[l][dir];
    cell->W_hh = w->enc_whh[l][dir];
    cell->b_ih = w->enc_bih[l][dir];
    cell->b_hh = w->enc_bhh[l][dir];
    at_model_cell_copies(m, cell, rows_ih, rows_hh);
}

/* Layer l, direction dir of the encoder over x [N,S,*] (layer 0: the source
 * embeddings, or the per-token table when m->enc_tab_on), using scratch
 * [at_rnn_layer_scratch_size]; writes enc_out[l]'s half dir, enc_hfin/cfin,
 * enc_saved[l][dir] (and the table enc_tab[dir]). */
static void encode_direction(attend_model *m, int l, int dir, const at_cell *cell, const attend_real *x,
                             const int32_t *src, const int32_t *src_len, int N, int S, attend_real *scratch) {
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    int D = c->emb, He = c->enc_hidden, E = m->E, GHe = m->G * He, Vs = c->src_vocab;
    if (l == 0 && m->enc_tab_on) {
        /* tab [Vs,G*He] = src_emb W_ihᵀ + b_ih;  xg[n,j] = tab[src[n,j]] (PAD at padding);
         * a decode reuses the table an earlier one made for the same parameters */
        attend_real *tab = a->enc_tab + (size_t)dir * Vs * GHe;
        if (!(m->infer && m->enc_tab_gen == m->pack_gen + 1)) {
            for (int v = 0; v < Vs; v++) memcpy(tab + (size_t)v * GHe, cell->b_ih, (size_t)GHe * sizeof *tab);
            at_gemm(0, 1, Vs, GHe, D, 1, m->p.src_emb, D, cell->W_ih, D, 1, tab, GHe);
        }
        for (int n = 0; n < N; n++)
            for (int j = 0; j < S; j++) {
                int32_t id = j < src_len[n] ? src[(size_t)n * S + j] : ATTEND_PAD;
                memcpy(scratch + ((size_t)n * S + j) * GHe, tab + (size_t)id * GHe, (size_t)GHe * sizeof *tab);
            }
        x = NULL; /* at_rnn_layer_forward reads xg from the scratch */
    }
    (m->infer ? at_rnn_layer_infer : at_rnn_layer_forward)(cell, dir, a->enc_out[l] + dir * He, E,
                                                           a->enc_hfin[l][dir],
                                                           c->cell == ATTEND_CELL_LSTM ? a->enc_cfin[l][dir] : NULL,
                                                           a->enc_saved[l][dir], x, src_len, NULL, NULL, N, S,
                                                           scratch);
}

/* One direction of an encoder layer on its own thread (at_parallel_chunks'
 * chunk c = direction c, with a scratch of its own). */
typedef struct {
    attend_model *m;
    int l;
    const at_cell *cells; /* [2] */
    const attend_real *x;
    const int32_t *src, *src_len;
    int N, S;
} direction_job;

static void direction_chunk(void *p, int dir) {
    const direction_job *j = p;
    encode_direction(j->m, j->l, dir, &j->cells[dir], j->x, j->src, j->src_len, j->N, j->S,
                     dir ? j->m->acts.rnn_scratch2 : j->m->acts.rnn_scratch);
}

void at_encoder_forward(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S) {
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    int D = c->emb, He = c->enc_hidden, E = m->E, Hd = c->dec_hidden;
    for (int n = 0; n < N; n++)
        for (int j = 0; j < S; j++) {
            int32_t id = j < src_len[n] ? src[(size_t)n * S + j] : ATTEND_PAD;
            memcpy(a->emb_src + ((size_t)n * S + j) * D, m->p.src_emb + (size_t)id * D, D * sizeof(attend_real));
            m->valid[(size_t)n * S + j] = j < src_len[n];
        }
    /* training with dropout: the embeddings are dropped, so no per-token table */
    if (m->dropping) at_dropout_grid(m, a->emb_src, N, S, D, 1, AT_DROP_SRC_EMB);
    /* the per-token table: when it replaces more rows than it has, or (decoding)
     * when an earlier decode made it for these parameters */
    const int tab_kept = m->infer && m->enc_tab_gen == m->pack_gen + 1;
    m->enc_tab_on = m->enc_tab_cap && (c->src_vocab < N * S || tab_kept) && !m->dropping;
    for (int l = 0; l < c->enc_layers; l++) {
        /* dropout between layers: in place (layer l-1's backward does not read its output) */
        if (l > 0 && m->dropping) at_dropout_grid(m, a->enc_out[l - 1], N, S, E, 1, AT_DROP_ENC_LAYER + l);
        const attend_real *x = l == 0 ? a->emb_src : a->enc_out[l - 1];
        /* the cells (and their packed weights) before the directions run */
        at_cell cells[2];
        for (int dir = 0; dir < 2; dir++)
            enc_cell(m, &m->p, l, dir, l == 0 && m->enc_tab_on ? 0 : N * S, N, &cells[dir]);
        /* the two directions are independent: one chunk each, streaming its
         * own weights (at batch 1 the layer is a chain of matrix-vector
         * products, bound by reading the weights); products inside run on the
         * chunk's thread */
        if (a->rnn_scratch2 && N <= AT_ENC_PAIR_ROWS && at_threads((double)N * S * m->G * He * He * 2) > 1) {
            direction_job j = {m, l, cells, x, src, src_len, N, S};
            at_parallel_chunks(2, 2, direction_chunk, &j);
        } else {
            for (int dir = 0; dir < 2; dir++)
                encode_direction(m, l, dir, &cells[dir], x, src, src_len, N, S, a->rnn_scratch);
        }
    }
    m->enc_tab_gen = m->infer && m->enc_tab_on ? m->pack_gen + 1 : 0; /* training changes the weights */
    int top = c->enc_layers - 1;
    for (int n = 0; n < N; n++) {
        memcpy(a->fin_cat + (size_t)n * E, a->enc_hfin[top][0] + (size_t)n * He, He * sizeof(attend_real));
        memcpy(a->fin_cat + (size_t)n * E + He, a->enc_hfin[top][1] + (size_t)n * He, He * sizeof(attend_real));
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
}

/* ------------------------------------------------------------- backward */

void at_embedding_backward(attend_real *gemb, const attend_real *drows, const int32_t *ids, size_t R, int D) {
    for (size_t r = 0; r < R; r++) {
        int32_t id = ids[r];
        if (id <= ATTEND_PAD) continue;
        attend_real *dst = gemb + (size_t)id * D;
        for (int d = 0; d < D; d++) dst[d] += drows[r * D + d];
    }
}

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

void at_table_backward(attend_model *m, attend_real *gemb, attend_real *gW, int ldw, attend_real *gb,
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

void at_encoder_backward(attend_model *m, const attend_real *ds0, int N, int S) {
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    int D = c->emb, He = c->enc_hidden, E = m->E, Hd = c->dec_hidden, G = m->G, top = c->enc_layers - 1;
    /* bridge: s_0 = tanh(z), z = fin_cat W_brᵀ + b_br */
    for (size_t k = 0; k < (size_t)N * Hd; k++) {
        attend_real s0 = a->states[k];
        a->dz[k] = ds0[k] * (1 - s0 * s0);
    }
    at_gemm(1, 0, Hd, E, N, 1, a->dz, Hd, a->fin_cat, E, 1, m->g.bridge_w, E);
    for (int n = 0; n < N; n++)
        for (int i = 0; i < Hd; i++) m->g.bridge_b[i] += a->dz[(size_t)n * Hd + i];
    at_gemm(0, 0, N, E, Hd, 1, a->dz, Hd, m->p.bridge_w, E, 1, a->dfin, E);
    /* keys: kp = project(encoder outputs) */
    if (m->P > 0) {
        attend_score_params sp = at_model_score_params(&m->p);
        attend_score_grads sg = at_model_score_grads(&m->g);
        at_keys_backward(&m->score, &sp, &sg, a->denc, a->dkp, a->enc_out[top], N, S);
    }
    /* encoder, top layer down; fin_cat = [h_fwd; h_bwd] of the top layer */
    for (int n = 0; n < N; n++) {
        memcpy(a->dhf + (size_t)n * He, a->dfin + (size_t)n * E, He * sizeof(attend_real));
        memcpy(a->dhb + (size_t)n * He, a->dfin + (size_t)n * E + He, He * sizeof(attend_real));
    }
    attend_real *dout = a->denc, *dnext = a->denc2;
    for (int l = top; l >= 0; l--) {
        const attend_real *x = l == 0 ? a->emb_src : a->enc_out[l - 1];
        int I = l == 0 ? D : E, tab = l == 0 && m->enc_tab_on;
        attend_real *dx = tab ? NULL : l == 0 ? a->demb : dnext;
        if (dx) memset(dx, 0, (size_t)N * S * I * sizeof(attend_real));
        for (int dir = 0; dir < 2; dir++) {
            at_cell ec;
            enc_cell(m, &m->p, l, dir, tab ? 0 : N * S, N, &ec);
            at_cell_grads eg = {m->g.enc_wih[l][dir], m->g.enc_whh[l][dir], m->g.enc_bih[l][dir], m->g.enc_bhh[l][dir]};
            if (tab) eg.W_ih = eg.b_ih = NULL; /* from the table below */
            at_rnn_layer_backward(&ec, &eg, dir, dx, NULL, NULL, dout + dir * He, E,
                                  l == top ? (dir ? a->dhb : a->dhf) : NULL, NULL, a->enc_saved[l][dir], x,
                                  m->fwd_src_len, NULL, NULL, N, S, a->rnn_scratch);
            if (tab) /* forward: xg[n,j] = enc_tab[dir][src[n,j]]; dxg is at the start of rnn_scratch */
                at_table_backward(m, m->g.src_emb, m->g.enc_wih[0][dir], D, m->g.enc_bih[0][dir], a->rnn_scratch,
                                  m->fwd_src, m->fwd_src_len, S, (size_t)N * S, c->src_vocab, G * He, m->p.src_emb,
                                  m->p.enc_wih[0][dir]);
        }
        /* forward: x = mask ⊙ enc_out[l-1] (layers l >= 1) */
        if (l > 0) at_dropout_grid(m, dx, N, S, E, 1, AT_DROP_ENC_LAYER + l);
        attend_real *tmp = dout;
        dout = dnext;
        dnext = tmp;
    }
    if (!m->enc_tab_on) {
        at_dropout_grid(m, a->demb, N, S, D, 1, AT_DROP_SRC_EMB); /* forward: x = mask ⊙ emb */
        at_embedding_backward(m->g.src_emb, a->demb, m->fwd_src, (size_t)N * S, D);
    }
}
