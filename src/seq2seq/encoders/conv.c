/*
 * conv.c — the convolutional encoder kind (ConvS2S's encoder, Gehring et
 * al. 2017; seed 002's Table 8.1 middle row: O(1) sequential operations per
 * layer, a path of O(T/k) between two positions): the source embeddings
 * plus positions, then enc_layers layers of
 *
 *   z = conv_k(mask(x)) = W * window(x) + b      (C = 2D channels, width k, 'same' padding)
 *   x' = sqrt(1/2) · (x + z[:, :D] ⊙ σ(z[:, D:]))   (gated linear unit, residual)
 *   (conv_relu = 1: C = D channels and x' = sqrt(1/2) · (x + relu(z)))
 *
 * where mask zeroes the padding positions before every convolution (so no
 * padding reaches a valid position's window; fairseq's masked_fill). Its
 * output enc_top [N,S,E] (E = D = emb) is zero at padding rows, its summary
 * fin_cat the mean of the valid rows (common.c). Tensors:
 *   encoder.pos_emb [max_positions,D] (learned positions only), then per
 *   layer l encoder.convs.<l>.weight [C, D·k] (nn.Conv1d(D, C, k)'s
 *   weight [C, D, k] in its memory order: element (o, i, t) at o·D·k + i·k
 *   + t) and encoder.convs.<l>.bias [C].
 * Between layers an extension may transform the input of layer l >= 1
 * (AT_SITE_ENC_LAYER + l: dropout).
 *
 * Dimension letters: see state.h; here D = E the width, k the kernel width
 * (cfg.kernel), p = (k-1)/2 the padding, L layers, M = N·S rows.
 */
#include <math.h>
#include <string.h>

#include "seq2seq/encoders/common.h"
#include "seq2seq/encoders/encoder_kind.h"
#include "seq2seq/extension.h"
#include "seq2seq/linear.h"

#define CONV_RES_SCALE 0.70710678118654752440 /* sqrt(1/2) */

typedef struct {
    attend_real *w[AT_MAX_LAYERS][2]; /* [C, D·k] (C = 2D for the GLU, D for the ReLU) */
    attend_real *b[AT_MAX_LAYERS][2]; /* [C] */
    attend_real *pos[2];              /* [max_positions,D] learned positions */
    attend_real *x[AT_MAX_LAYERS + 1]; /* [M,D] x[0] = emb + PE, x[l+1] layer l's output */
    attend_real *cols[AT_MAX_LAYERS]; /* [M, D·k] layer l's windows of mask(x_l) */
    attend_real *z[AT_MAX_LAYERS];    /* [M, C] the convolution's output */
    attend_real *pe;                  /* [max_src_len, D] the sinusoidal table */
    attend_real *out;                 /* [M,D] enc_top */
    attend_real *dx, *dx2;            /* [M,D] the stream's gradient (ping-pong) */
    attend_real *dz;                  /* [M,C] */
    attend_real *dcols;               /* [M, D·k] */
    int pe_ready;
} conv_state;

static conv_state *st(const attend_model *m) { return m->enc_state; }

/* ------------------------------------------------------------ configuration */

static const char *positions_name(int v) { return attend_positions_name((attend_positions)v); }

static const at_encoder_key KEYS[] = {
    {"kernel", offsetof(attend_model_config, kernel), NULL, NULL},
    {"conv_relu", offsetof(attend_model_config, conv_relu), NULL, NULL},
    {"positions", offsetof(attend_model_config, positions), positions_name, attend_positions_from_name},
    {"max_positions", offsetof(attend_model_config, max_positions), NULL, NULL},
};

static attend_status check(const attend_model_config *c, attend_error *err) {
    CHECK(c->kernel >= 1 && c->kernel % 2 == 1 && c->kernel <= 1025, err, ATTEND_ERR_ARG,
          "model config: kernel=%d, a conv encoder needs an odd kernel width in [1, 1025]", c->kernel);
    CHECK(c->conv_relu == 0 || c->conv_relu == 1, err, ATTEND_ERR_ARG, "model config: conv_relu=%d, must be 0 or 1",
          c->conv_relu);
    CHECK(c->heads == 0 && c->post_norm == 0, err, ATTEND_ERR_ARG,
          "model config: %s=%d is a transformer encoder's setting, but encoder is conv", c->heads ? "heads" : "post_norm",
          c->heads ? c->heads : c->post_norm);
    CHECK((double)c->emb * c->kernel <= 1 << 24, err, ATTEND_ERR_SHAPE,
          "model config: emb=%d times kernel=%d is above 2^24 (a convolution's window)", c->emb, c->kernel);
    return at_enc_positions_check(c, err);
}

static int width(const attend_model_config *c) { return c->emb; }

/* the convolution's output channels: 2D for the GLU, D for the ReLU */
static int channels(const attend_model_config *c) { return c->conv_relu ? c->emb : 2 * c->emb; }

/* one layer: C · D·k weights */
static double min_params(const attend_model_config *c) { return (double)channels(c) * c->emb * c->kernel; }

/* ------------------------------------------------------------------ layout */

static void layout_params(at_param_layout *L) {
    const attend_model_config *c = &L->m->cfg;
    conv_state *s = st(L->m);
    int D = c->emb, k = c->kernel;
    char nm[64];
    at_enc_positions_layout(L, s->pos);
    for (int l = 0; l < c->enc_layers; l++) {
        /* nn.Conv1d: weight and bias U(±1/sqrt(D·k)) (AT_INIT_LINEAR: fan_in = the second dimension) */
        snprintf(nm, sizeof nm, "encoder.convs.%d.weight", l);
        at_param_add(L, at_param_slot(L, s->w[l]), nm, channels(c), D * k);
        snprintf(nm, sizeof nm, "encoder.convs.%d.bias", l);
        at_param_add(L, at_param_slot(L, s->b[l]), nm, channels(c), 0);
    }
}

static void layout_acts(attend_model *m, at_act_layout *L) {
    const attend_model_config *c = &m->cfg;
    conv_state *s = st(m);
    size_t M = (size_t)c->max_batch * (size_t)c->max_src_len, D = (size_t)c->emb, k = (size_t)c->kernel,
           C = (size_t)channels(c);
    for (int l = 0; l <= c->enc_layers; l++) s->x[l] = at_act_take(L, M * D);
    for (int l = 0; l < c->enc_layers; l++) {
        s->cols[l] = at_act_take(L, M * D * k);
        s->z[l] = at_act_take(L, M * C);
    }
    s->pe = at_act_take(L, (size_t)c->max_src_len * D);
    s->out = at_act_take(L, M * D);
    s->dx = at_act_take(L, M * D);
    s->dx2 = at_act_take(L, M * D);
    s->dz = at_act_take(L, M * C);
    s->dcols = at_act_take(L, M * D * k);
    s->pe_ready = 0;
    m->acts.enc_top = s->out;
}

/* ----------------------------------------------------------------- forward */

/* The element-wise loops below run over the pool (at_parallel_rows) by batch
 * entries or rows: each chunk writes only its own rows, so the results do not
 * depend on the thread count. Without this the convolutions' products were
 * the only parallel part of a layer and two threads gave no speed-up (seed
 * 002's Table 8.1: the layer's O(1) sequential operations show as parallelism). */
typedef struct {
    attend_real *out;
    const attend_real *in;
    const int32_t *src_len;
    int S, D, k;
} conv_cols_job;

/* cols [N,S,D·k]: cols[n,j, i·k + t] = x[n, j+t-p, i] where 0 <= j+t-p < src_len[n], else 0 */
static void im2col_chunk(void *ctx, int lo, int hi) {
    const conv_cols_job *J = ctx;
    int S = J->S, D = J->D, k = J->k, p = (k - 1) / 2;
    size_t Dk = (size_t)D * k;
    for (int n = lo; n < hi; n++)
        for (int j = 0; j < S; j++) {
            attend_real *c = J->out + ((size_t)n * S + j) * Dk;
            for (int t = 0; t < k; t++) {
                int jj = j + t - p;
                const attend_real *xr = jj >= 0 && jj < J->src_len[n] ? J->in + ((size_t)n * S + jj) * D : NULL;
                for (int i = 0; i < D; i++) c[(size_t)i * k + t] = xr ? xr[i] : 0;
            }
        }
}

static void im2col(attend_real *cols, const attend_real *x, const int32_t *src_len, int N, int S, int D, int k) {
    conv_cols_job J = {cols, x, src_len, S, D, k};
    at_parallel_rows((double)N * S * D * k, N, 1, im2col_chunk, &J);
}

/* forward: im2col  ⇒  dx[n, j+t-p, i] += dcols[n,j, i·k + t] (valid positions only); entry n's
 * windows write only entry n's rows */
static void col2im_chunk(void *ctx, int lo, int hi) {
    const conv_cols_job *J = ctx;
    int S = J->S, D = J->D, k = J->k, p = (k - 1) / 2;
    size_t Dk = (size_t)D * k;
    for (int n = lo; n < hi; n++)
        for (int j = 0; j < S; j++) {
            const attend_real *c = J->in + ((size_t)n * S + j) * Dk;
            for (int t = 0; t < k; t++) {
                int jj = j + t - p;
                if (jj < 0 || jj >= J->src_len[n]) continue;
                attend_real *d = J->out + ((size_t)n * S + jj) * D;
                for (int i = 0; i < D; i++) d[i] += c[(size_t)i * k + t];
            }
        }
}

static void col2im(attend_real *dx, const attend_real *dcols, const int32_t *src_len, int N, int S, int D, int k) {
    conv_cols_job J = {dx, dcols, src_len, S, D, k};
    at_parallel_rows((double)N * S * D * k, N, 1, col2im_chunk, &J);
}

/* The gated linear unit (or ReLU) with the residual, over rows [M]: forward
 * y = sqrt(1/2) (x + a ⊙ σ(g)), z = [a, g]  (ReLU: y = sqrt(1/2) (x + relu(z)));
 * backward dx = s dy, da = s dy σ(g), dg = s dy a σ(g)(1 - σ(g))  (ReLU: dz = s dy [z > 0]) */
typedef struct {
    const attend_real *z, *x, *dy; /* [M,C] [M,D] [M,D] */
    attend_real *y, *dz, *dx;      /* [M,D] [M,C] [M,D] */
    int D, C, relu;
} conv_gate_job;

static void gate_forward_chunk(void *ctx, int lo, int hi) {
    const conv_gate_job *J = ctx;
    int D = J->D, C = J->C;
    for (int r = lo; r < hi; r++) {
        const attend_real *zr = J->z + (size_t)r * C, *xr = J->x + (size_t)r * D;
        attend_real *yr = J->y + (size_t)r * D;
        for (int i = 0; i < D; i++) {
            double f = J->relu ? (zr[i] > 0 ? (double)zr[i] : 0) : (double)zr[i] / (1.0 + exp(-(double)zr[D + i]));
            yr[i] = (attend_real)(CONV_RES_SCALE * ((double)xr[i] + f));
        }
    }
}

static void gate_backward_chunk(void *ctx, int lo, int hi) {
    const conv_gate_job *J = ctx;
    int D = J->D, C = J->C;
    for (int r = lo; r < hi; r++) {
        const attend_real *zr = J->z + (size_t)r * C, *dyr = J->dy + (size_t)r * D;
        attend_real *dzr = J->dz + (size_t)r * C, *dxr = J->dx + (size_t)r * D;
        for (int i = 0; i < D; i++) {
            double dy = CONV_RES_SCALE * (double)dyr[i];
            dxr[i] = (attend_real)dy;
            if (J->relu) {
                dzr[i] = zr[i] > 0 ? (attend_real)dy : 0;
                continue;
            }
            double g = 1.0 / (1.0 + exp(-(double)zr[D + i]));
            dzr[i] = (attend_real)(dy * g);
            dzr[D + i] = (attend_real)(dy * (double)zr[i] * g * (1 - g));
        }
    }
}

static void forward(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S) {
    (void)src;
    const attend_model_config *c = &m->cfg;
    at_acts *A = &m->acts;
    conv_state *s = st(m);
    int D = c->emb, k = c->kernel, M = N * S, Dk = D * k, C = channels(c);
    at_enc_positions_forward(m, s->x[0], A->emb_src, s->pe, &s->pe_ready, s->pos, N, S);
    for (int l = 0; l < c->enc_layers; l++) {
        attend_real *x = s->x[l], *y = s->x[l + 1], *z = s->z[l];
        if (l > 0) at_ext_site(m, x, N, S, D, 1, AT_SITE_ENC_LAYER + l);
        /* z [M,C] = cols W_lᵀ + b_l */
        im2col(s->cols[l], x, src_len, N, S, D, k);
        at_model_linear(m, M, C, Dk, s->cols[l], Dk, s->w[l][0], Dk, 0, z, C);
        at_rows_add(z, s->b[l][0], (size_t)M, C);
        /* y = sqrt(1/2) (x + GLU(z))  (or relu(z)) */
        conv_gate_job J = {.z = z, .x = x, .y = y, .D = D, .C = C, .relu = c->conv_relu};
        at_parallel_rows((double)M * D * 24, M, 1, gate_forward_chunk, &J);
    }
    memcpy(s->out, s->x[c->enc_layers], (size_t)M * D * sizeof(attend_real));
    at_enc_mean_forward(s->out, A->fin_cat, src_len, N, S, D);
}

/* ---------------------------------------------------------------- backward */

static int backward(attend_model *m, int N, int S) {
    const attend_model_config *c = &m->cfg;
    at_acts *A = &m->acts;
    conv_state *s = st(m);
    int D = c->emb, k = c->kernel, M = N * S, Dk = D * k, C = channels(c);
    size_t MD = (size_t)M * D;
    const int32_t *src_len = m->fwd_src_len;
    /* forward: out = x_L masked, fin = mean of its valid rows */
    attend_real *dx = s->dx, *dnext = s->dx2;
    at_enc_mean_backward(dx, A->denc, A->dfin, src_len, N, S, D);
    for (int l = c->enc_layers - 1; l >= 0; l--) {
        const attend_real *z = s->z[l];
        /* forward: y = s (x + GLU(z))  (or relu(z)): gate_backward_chunk */
        conv_gate_job J = {.z = z, .dy = dx, .dz = s->dz, .dx = dnext, .D = D, .C = C, .relu = c->conv_relu};
        at_parallel_rows((double)M * D * 30, M, 1, gate_backward_chunk, &J);
        /* forward: z = cols Wᵀ + b  ⇒  dW += dzᵀ cols, db += Σ dz, dcols = dz W */
        at_gemm(1, 0, C, Dk, M, 1, s->dz, C, s->cols[l], Dk, 1, s->w[l][1], Dk);
        at_rows_sum(s->b[l][1], s->dz, (size_t)M, C);
        at_model_linear_dx(m, M, C, Dk, s->dz, C, s->w[l][0], Dk, 0, s->dcols, Dk);
        /* forward: cols = im2col(mask(x)) */
        col2im(dnext, s->dcols, src_len, N, S, D, k);
        /* forward: x = site(x_l) (layers l >= 1) */
        if (l > 0) at_ext_site(m, dnext, N, S, D, 1, AT_SITE_ENC_LAYER + l);
        attend_real *tmp = dx;
        dx = dnext;
        dnext = tmp;
    }
    /* forward: x_0 = emb + pos */
    memcpy(A->demb, dx, MD * sizeof *dx);
    at_enc_positions_backward(m, s->pos, dx, N, S);
    return 1;
}

const at_encoder_ops at_encoder_conv = {
    .name = "conv",
    .state_size = sizeof(conv_state),
    .keys = KEYS,
    .nkeys = (int)(sizeof KEYS / sizeof KEYS[0]),
    .check = check,
    .width = width,
    .min_params = min_params,
    .layout_params = layout_params,
    .layout_acts = layout_acts,
    .forward = forward,
    .backward = backward,
};
