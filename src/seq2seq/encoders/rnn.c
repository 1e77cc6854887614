/*
 * rnn.c — the recurrent encoder kind: a stack of enc_layers bidirectional
 * GRU or LSTM layers (PyTorch's nn.GRU/nn.LSTM(bidirectional=True)) over the
 * source embeddings; its output is the top layer's [h_fwd; h_bwd] per
 * position, its summary the top layer's final states. With a small source
 * vocabulary the first layer's input projections are looked up per token from
 * a table (src_emb W_ihᵀ + b_ih) instead of multiplied per position; not when
 * the embeddings are transformed (at_ext_transforms: dropout). Between layers
 * an extension may transform the input of layer l >= 1 (AT_SITE_ENC_LAYER + l).
 * Tensors: encoder.weight_ih_l<l>[_reverse], weight_hh, bias_ih, bias_hh.
 *
 * Dimension letters: see state.h (He per direction, E = 2He).
 */
#include <math.h>
#include <string.h>

#include "seq2seq/encoders/encoder_kind.h"
#include "seq2seq/embed.h"
#include "seq2seq/extension.h"
#include "seq2seq/linear.h"

/* Threaded builds run the encoder's two directions on two threads up to this
 * many rows (where a direction's products are too small to split well);
 * larger batches split each product instead, without a second scratch. */
#define AT_ENC_PAIR_ROWS 64

typedef struct {
    attend_real *out[AT_MAX_LAYERS];         /* [N,S,E] per layer (the top one is acts.enc_top) */
    attend_real *saved[AT_MAX_LAYERS][2];    /* at_rnn_layer_saved_size */
    attend_real *hfin[AT_MAX_LAYERS][2];     /* [N,He] */
    attend_real *cfin[AT_MAX_LAYERS][2];     /* [N,He] (LSTM) */
    attend_real *scratch;                    /* at_rnn_layer_scratch_size */
    attend_real *scratch2;                   /* the same at min(N, AT_ENC_PAIR_ROWS) rows, for the backward
                                                direction on a second thread (threaded builds only; else NULL) */
    attend_real *dnext;                      /* [N,S,E] a lower layer's output gradient */
    attend_real *dhf, *dhb;                  /* [N,He] */
    attend_real *tab;                        /* [2,Vs,G*He] layer 0's projection table, per direction */
    attend_real *dtab;                       /* [Vs,G*He] its gradient */
    int tab_cap;                             /* the table is allocated (Vs <= the rows it replaces) */
    int tab_on;                              /* the last forward used it */
    int tab_kept;                            /* this forward reuses the table an earlier decode made */
    uint64_t tab_gen;                        /* pack_gen + 1 when a decode made the table: later decodes reuse
                                                it (inference; 0 = not made for these parameters) */
} rnn_state;

static rnn_state *st(const attend_model *m) { return m->enc_state; }

static void layout_params(at_param_layout *L) {
    const attend_model_config *c = &L->m->cfg;
    at_model_tensors *v = L->v;
    int D = c->emb, He = c->enc_hidden, E = 2 * He, G = L->m->G;
    double bound = 1.0 / sqrt((double)He); /* nn.GRU / nn.LSTM: U(±1/sqrt(hidden)) */
    char nm[AT_NAME_MAX];
    for (int l = 0; l < c->enc_layers; l++) {
        int I = l == 0 ? D : E;
        for (int dir = 0; dir < 2; dir++) {
            const char *sfx = dir ? "_reverse" : "";
            snprintf(nm, sizeof nm, "encoder.weight_ih_l%d%s", l, sfx);
            at_param_add_init(L, v ? &v->enc_wih[l][dir] : NULL, nm, G * He, I, AT_INIT_UNIFORM, bound);
            snprintf(nm, sizeof nm, "encoder.weight_hh_l%d%s", l, sfx);
            at_param_add_init(L, v ? &v->enc_whh[l][dir] : NULL, nm, G * He, He, AT_INIT_UNIFORM, bound);
            snprintf(nm, sizeof nm, "encoder.bias_ih_l%d%s", l, sfx);
            at_param_add_init(L, v ? &v->enc_bih[l][dir] : NULL, nm, G * He, 0, AT_INIT_UNIFORM, bound);
            snprintf(nm, sizeof nm, "encoder.bias_hh_l%d%s", l, sfx);
            at_param_add_init(L, v ? &v->enc_bhh[l][dir] : NULL, nm, G * He, 0, AT_INIT_UNIFORM, bound);
        }
    }
}

static void layout_acts(attend_model *m, at_act_layout *L) {
    const attend_model_config *c = &m->cfg;
    rnn_state *s = st(m);
    size_t N = (size_t)c->max_batch, S = (size_t)c->max_src_len, He = (size_t)c->enc_hidden, E = 2 * He;
    size_t saved = at_rnn_layer_saved_size(c->cell, c->max_batch, c->max_src_len, c->enc_hidden);
    size_t scratch = at_rnn_layer_scratch_size(c->cell, c->max_batch, c->max_src_len, c->enc_hidden);
    for (int l = 0; l < c->enc_layers; l++) {
        s->out[l] = at_act_take(L, N * S * E);
        for (int dir = 0; dir < 2; dir++) {
            s->saved[l][dir] = at_act_take(L, saved);
            s->hfin[l][dir] = at_act_take(L, N * He);
            s->cfin[l][dir] = at_act_take(L, N * He);
        }
    }
    s->scratch = at_act_take(L, scratch);
#ifdef ATTEND_THREADS
    s->scratch2 = at_act_take(L, at_rnn_layer_scratch_size(c->cell, c->max_batch < AT_ENC_PAIR_ROWS ? c->max_batch
                                                                                                   : AT_ENC_PAIR_ROWS,
                                                            c->max_src_len, c->enc_hidden));
#endif
    s->dnext = at_act_take(L, N * S * E);
    s->dhf = at_act_take(L, N * He);
    s->dhb = at_act_take(L, N * He);
    /* a table is kept when it is no larger than the per-position projections it replaces */
    s->tab_cap = (size_t)c->src_vocab <= N * S;
    size_t tab = s->tab_cap ? (size_t)c->src_vocab * (size_t)m->G * He : 0;
    s->tab = at_act_take(L, 2 * tab);
    s->dtab = at_act_take(L, tab);
    m->acts.enc_top = s->out[c->enc_layers - 1];
}

/* Layer l, direction dir's cell, with the copies of its weights that
 * products of rows_ih (the input projection; 0: from the table) and rows_hh
 * rows read. */
static void cell_of(const attend_model *m, int l, int dir, int rows_ih, int rows_hh, at_cell *cell) {
    const at_model_tensors *w = &m->p;
    cell->kind = m->cfg.cell;
    cell->I = l == 0 ? m->cfg.emb : m->E;
    cell->H = m->cfg.enc_hidden;
    cell->W_ih = w->enc_wih[l][dir];
    cell->W_hh = w->enc_whh[l][dir];
    cell->b_ih = w->enc_bih[l][dir];
    cell->b_hh = w->enc_bhh[l][dir];
    at_model_cell_copies(m, cell, rows_ih, rows_hh);
}

/* Layer l, direction dir over x [N,S,*] (layer 0: the source embeddings, or
 * the per-token table when tab_on), using scratch [at_rnn_layer_scratch_size];
 * writes out[l]'s half dir, hfin/cfin, saved[l][dir] (and the table tab[dir]). */
static void encode_direction(attend_model *m, int l, int dir, const at_cell *cell, const attend_real *x,
                             const int32_t *src, const int32_t *src_len, int N, int S, attend_real *scratch) {
    const attend_model_config *c = &m->cfg;
    rnn_state *s = st(m);
    int D = c->emb, He = c->enc_hidden, E = m->E, GHe = m->G * He, Vs = c->src_vocab;
    if (l == 0 && s->tab_on) {
        /* tab [Vs,G*He] = src_emb W_ihᵀ + b_ih;  xg[n,j] = tab[src[n,j]] (PAD at padding);
         * a decode reuses the table an earlier one made for the same parameters */
        attend_real *tab = s->tab + (size_t)dir * Vs * GHe;
        if (!s->tab_kept) {
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
    (m->run.infer ? at_rnn_layer_infer : at_rnn_layer_forward)(cell, dir, s->out[l] + dir * He, E, s->hfin[l][dir],
                                                               c->cell == ATTEND_CELL_LSTM ? s->cfin[l][dir] : NULL,
                                                               s->saved[l][dir], x, src_len, NULL, NULL, N, S,
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
                     dir ? st(j->m)->scratch2 : st(j->m)->scratch);
}

static void forward(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S) {
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    rnn_state *s = st(m);
    int He = c->enc_hidden, E = m->E;
    /* the per-token table: when it replaces more rows than it has, or (decoding)
     * when an earlier decode made it for these parameters; transformed
     * embeddings (dropout) have none */
    s->tab_kept = m->run.infer && s->tab_gen == m->pack_gen + 1;
    s->tab_on = s->tab_cap && (c->src_vocab < N * S || s->tab_kept) && !at_ext_transforms(m, AT_SITE_SRC_EMB) &&
                !m->run.input_grad;
    for (int l = 0; l < c->enc_layers; l++) {
        /* the input of layers above the first may be transformed, in place (layer l-1's backward does not read
         * its output) */
        if (l > 0) at_ext_site(m, s->out[l - 1], N, S, E, 1, AT_SITE_ENC_LAYER + l);
        const attend_real *x = l == 0 ? a->emb_src : s->out[l - 1];
        /* the cells (and their packed weights) before the directions run */
        at_cell cells[2];
        for (int dir = 0; dir < 2; dir++) cell_of(m, l, dir, l == 0 && s->tab_on ? 0 : N * S, N, &cells[dir]);
        /* the two directions are independent: one chunk each, streaming its
         * own weights (at batch 1 the layer is a chain of matrix-vector
         * products, bound by reading the weights); products inside run on the
         * chunk's thread */
        if (s->scratch2 && N <= AT_ENC_PAIR_ROWS && at_threads((double)N * S * m->G * He * He * 2) > 1) {
            direction_job j = {m, l, cells, x, src, src_len, N, S};
            at_parallel_chunks(2, 2, direction_chunk, &j);
        } else {
            for (int dir = 0; dir < 2; dir++)
                encode_direction(m, l, dir, &cells[dir], x, src, src_len, N, S, s->scratch);
        }
    }
    s->tab_gen = m->run.infer && s->tab_on ? m->pack_gen + 1 : 0; /* training changes the weights */
    s->tab_kept = 0;
    int top = c->enc_layers - 1;
    for (int n = 0; n < N; n++) {
        memcpy(a->fin_cat + (size_t)n * E, s->hfin[top][0] + (size_t)n * He, He * sizeof(attend_real));
        memcpy(a->fin_cat + (size_t)n * E + He, s->hfin[top][1] + (size_t)n * He, He * sizeof(attend_real));
    }
}

static int backward(attend_model *m, int N, int S) {
    const attend_model_config *c = &m->cfg;
    at_acts *a = &m->acts;
    rnn_state *s = st(m);
    int D = c->emb, He = c->enc_hidden, E = m->E, G = m->G, top = c->enc_layers - 1;
    /* top layer down; fin_cat = [h_fwd; h_bwd] of the top layer */
    for (int n = 0; n < N; n++) {
        memcpy(s->dhf + (size_t)n * He, a->dfin + (size_t)n * E, He * sizeof(attend_real));
        memcpy(s->dhb + (size_t)n * He, a->dfin + (size_t)n * E + He, He * sizeof(attend_real));
    }
    attend_real *dout = a->denc, *dnext = s->dnext;
    for (int l = top; l >= 0; l--) {
        const attend_real *x = l == 0 ? a->emb_src : s->out[l - 1];
        int I = l == 0 ? D : E, tab = l == 0 && s->tab_on;
        attend_real *dx = tab ? NULL : l == 0 ? a->demb : dnext;
        if (dx) memset(dx, 0, (size_t)N * S * I * sizeof(attend_real));
        for (int dir = 0; dir < 2; dir++) {
            at_cell ec;
            cell_of(m, l, dir, tab ? 0 : N * S, N, &ec);
            at_cell_grads eg = {m->g.enc_wih[l][dir], m->g.enc_whh[l][dir], m->g.enc_bih[l][dir], m->g.enc_bhh[l][dir]};
            if (tab) eg.W_ih = eg.b_ih = NULL; /* from the table below */
            at_rnn_layer_backward(&ec, &eg, dir, dx, NULL, NULL, dout + dir * He, E,
                                  l == top ? (dir ? s->dhb : s->dhf) : NULL, NULL, s->saved[l][dir], x,
                                  m->fwd_src_len, NULL, NULL, N, S, s->scratch);
            if (tab) /* forward: xg[n,j] = tab[dir][src[n,j]]; dxg is at the start of the scratch */
                at_table_backward(m, s->dtab, a->demb, m->g.src_emb, m->g.enc_wih[0][dir], D, m->g.enc_bih[0][dir],
                                  s->scratch, m->fwd_src, m->fwd_src_len, S, (size_t)N * S, c->src_vocab, G * He,
                                  m->p.src_emb, m->p.enc_wih[0][dir]);
        }
        /* forward: x = site(out[l-1]) (layers l >= 1) */
        if (l > 0) at_ext_site(m, dx, N, S, E, 1, AT_SITE_ENC_LAYER + l);
        attend_real *tmp = dout;
        dout = dnext;
        dnext = tmp;
    }
    return !s->tab_on;
}

/* The recurrent encoder has no settings of its own: the other kinds' are 0. */
static attend_status check(const attend_model_config *c, attend_error *err) {
    CHECK(c->conv_relu == 0, err, ATTEND_ERR_ARG, "model config: conv_relu=%d is a conv encoder's setting, but "
          "encoder is rnn", c->conv_relu);
    CHECK(c->heads == 0 && c->positions == 0 && c->post_norm == 0 && c->max_positions == 0 && c->kernel == 0, err,
          ATTEND_ERR_ARG, "model config: %s=%d is a %s encoder's setting, but encoder is rnn",
          c->heads ? "heads" : c->positions ? "positions" : c->post_norm ? "post_norm" : c->max_positions ? "max_positions" : "kernel",
          c->heads ? c->heads : c->positions ? (int)c->positions : c->post_norm ? c->post_norm : c->max_positions ? c->max_positions : c->kernel,
          c->kernel && !c->heads && !c->positions && !c->post_norm && !c->max_positions ? "conv" : "transformer");
    return ATTEND_OK;
}

static int width(const attend_model_config *c) { return 2 * c->enc_hidden; }

/* the first layer, both directions: 2 G He (D + He) */
static double min_params(const attend_model_config *c) {
    double G = c->cell == ATTEND_CELL_LSTM ? 4 : 3, D = c->emb, H = c->enc_hidden;
    return 2 * G * H * (D + H);
}

const at_encoder_ops at_encoder_rnn = {
    .name = "rnn",
    .state_size = sizeof(rnn_state),
    .check = check,
    .width = width,
    .min_params = min_params,
    .layout_params = layout_params,
    .layout_acts = layout_acts,
    .forward = forward,
    .backward = backward,
};
