/*
 * transformer.c — the Transformer encoder kind (Vaswani et al. 2017; seed
 * 002's self-attention, "the heart of the Transformer"): the source
 * embeddings plus positions, then enc_layers layers of multi-head
 * self-attention over the valid source positions (key padding masked) and a
 * position-wise feed-forward network, each sub-layer with a residual
 * connection and layer norm:
 *
 *   x_0 = emb + PE                         (PE sinusoidal, learned, or none)
 *   pre-norm (default, PyTorch's norm_first=True, with nn.TransformerEncoder's
 *   final norm):
 *     h = x + MHA(LN1(x)),  x' = h + W2 relu(W1 LN2(h) + b1) + b2;  out = LNf(x_L)
 *   post-norm (post_norm = 1, the original paper's):
 *     h = LN1(x + MHA(x)),  x' = LN2(h + W2 relu(W1 h + b1) + b2);  out = x_L
 *
 * Its output enc_top [N,S,E] (E = D = emb) is zero at padding rows, its
 * summary fin_cat [N,E] (the bridge's input) the mean of the valid rows.
 * Tensors (nn.TransformerEncoder's state_dict names, prefixed "encoder."):
 *   encoder.pos_emb [max_positions,D] (learned positions only), then per layer l
 *   encoder.layers.<l>.self_attn.in_proj_weight [3D,D], .in_proj_bias [3D],
 *   .self_attn.out_proj.weight [D,D], .out_proj.bias [D], .linear1.weight
 *   [F,D], .linear1.bias [F], .linear2.weight [D,F], .linear2.bias [D],
 *   .norm1.weight [D], .norm1.bias [D], .norm2.weight [D], .norm2.bias [D],
 *   and (pre-norm) encoder.norm.weight [D], encoder.norm.bias [D].
 * Between layers an extension may transform the input of layer l >= 1
 * (AT_SITE_ENC_LAYER + l: dropout), as between recurrent layers.
 *
 * Dimension letters: see state.h; here D = E the model width, F the
 * feed-forward width (cfg.enc_hidden), H heads, dh = D/H, L layers, M = N·S
 * rows (positions of the batch, padding included).
 */
#include <math.h>
#include <string.h>

#include "core/layernorm.h"
#include "core/mha.h"
#include "seq2seq/encoders/common.h"
#include "seq2seq/encoders/encoder_kind.h"
#include "seq2seq/extension.h"
#include "seq2seq/linear.h"

/* One layer's tensors, [0] in the parameters and [1] in the gradients. */
typedef struct {
    attend_real *in_w[2];  /* [3D,D] Wq; Wk; Wv */
    attend_real *in_b[2];  /* [3D] */
    attend_real *out_w[2]; /* [D,D] */
    attend_real *out_b[2]; /* [D] */
    attend_real *l1_w[2];  /* [F,D] */
    attend_real *l1_b[2];  /* [F] */
    attend_real *l2_w[2];  /* [D,F] */
    attend_real *l2_b[2];  /* [D] */
    attend_real *n1_w[2];  /* [D] */
    attend_real *n1_b[2];  /* [D] */
    attend_real *n2_w[2];  /* [D] */
    attend_real *n2_b[2];  /* [D] */
} tf_layer_tensors;

/* One layer's saved activations (forward) for the backward. */
typedef struct {
    attend_real *a;      /* [M,D] pre-norm: LN1(x), the attention's input; post-norm: x + MHA(x), LN1's input */
    attend_real *h;      /* [M,D] after the first sub-layer */
    attend_real *b;      /* [M,D] pre-norm: LN2(h), the feed-forward's input; post-norm: h + FFN(h), LN2's input */
    attend_real *u;      /* [M,F] relu(W1 · + b1) */
    attend_real *m1, *r1; /* [M] LN1's mean and 1/std */
    attend_real *m2, *r2; /* [M] LN2's */
    attend_real *ws;     /* [attend_mha_workspace_size(N, S, S)] the attention's forward (and backward) */
} tf_layer_acts;

typedef struct {
    tf_layer_tensors t[AT_MAX_LAYERS];
    attend_real *nf_w[2], *nf_b[2]; /* [D] the final norm (pre-norm) */
    attend_real *pos[2];            /* [max_positions,D] learned positions (rows 0 .. S-1 used) */
    tf_layer_acts a[AT_MAX_LAYERS];
    attend_real *x[AT_MAX_LAYERS + 1]; /* [M,D] the residual stream: x[0] = emb + PE, x[l+1] layer l's output */
    attend_real *mf, *rf;              /* [M] the final norm's */
    attend_real *pe;                   /* [S_cap,D] the sinusoidal table (made at create) */
    attend_real *out;                  /* [M,D] enc_top */
    /* backward scratch */
    attend_real *dx, *dx2;             /* [M,D] the stream's gradient (ping-pong) */
    attend_real *dh, *da, *db;         /* [M,D] */
    attend_real *du;                   /* [M,F] */
    int pe_ready;
} tf_state;

static tf_state *st(const attend_model *m) { return m->enc_state; }

/* ------------------------------------------------------------ configuration */

static const char *positions_name(int v) { return attend_positions_name((attend_positions)v); }

static const at_encoder_key KEYS[] = {
    {"heads", offsetof(attend_model_config, heads), NULL, NULL},
    {"positions", offsetof(attend_model_config, positions), positions_name, attend_positions_from_name},
    {"post_norm", offsetof(attend_model_config, post_norm), NULL, NULL},
    {"max_positions", offsetof(attend_model_config, max_positions), NULL, NULL},
};

static attend_status check(const attend_model_config *c, attend_error *err) {
    CHECK(c->heads >= 1 && c->heads <= c->emb, err, ATTEND_ERR_ARG,
          "model config: heads=%d, a transformer encoder needs 1 <= heads <= emb=%d", c->heads, c->emb);
    CHECK(c->emb % c->heads == 0, err, ATTEND_ERR_ARG,
          "model config: heads=%d does not divide emb=%d (the transformer encoder's width)", c->heads, c->emb);
    CHECK(c->post_norm == 0 || c->post_norm == 1, err, ATTEND_ERR_ARG, "model config: post_norm=%d, must be 0 or 1",
          c->post_norm);
    CHECK(c->kernel == 0 && c->conv_relu == 0, err, ATTEND_ERR_ARG,
          "model config: %s=%d is a conv encoder's setting, but encoder is transformer",
          c->kernel ? "kernel" : "conv_relu", c->kernel ? c->kernel : c->conv_relu);
    TRY(at_enc_positions_check(c, err));
    return ATTEND_OK;
}

static int width(const attend_model_config *c) { return c->emb; }

/* one layer: 4D² + 2DF weights */
static double min_params(const attend_model_config *c) {
    double D = c->emb, F = c->enc_hidden;
    return 4 * D * D + 2 * D * F;
}

/* ------------------------------------------------------------------ layout */

static void layout_params(at_param_layout *L) {
    const attend_model_config *c = &L->m->cfg;
    tf_state *s = st(L->m);
    int D = c->emb, F = c->enc_hidden;
    char nm[80]; /* the longest name, layer 7's out_proj.weight, has 42 characters (AT_NAME_MAX 48) */
    at_enc_positions_layout(L, s->pos);
    for (int l = 0; l < c->enc_layers; l++) {
        tf_layer_tensors *t = &s->t[l];
#define NAME(part) (snprintf(nm, sizeof nm, "encoder.layers.%d.%s", l, part), nm)
        /* nn.MultiheadAttention: in_proj xavier_uniform, its bias and out_proj's bias 0 */
        at_param_add_init(L, at_param_slot(L, t->in_w), NAME("self_attn.in_proj_weight"), 3 * D, D, AT_INIT_UNIFORM,
                          sqrt(6.0 / (4.0 * D)));
        at_param_add_init(L, at_param_slot(L, t->in_b), NAME("self_attn.in_proj_bias"), 3 * D, 0, AT_INIT_CONST, 0);
        at_param_add(L, at_param_slot(L, t->out_w), NAME("self_attn.out_proj.weight"), D, D);
        at_param_add_init(L, at_param_slot(L, t->out_b), NAME("self_attn.out_proj.bias"), D, 0, AT_INIT_CONST, 0);
        at_param_add(L, at_param_slot(L, t->l1_w), NAME("linear1.weight"), F, D);
        at_param_add(L, at_param_slot(L, t->l1_b), NAME("linear1.bias"), F, 0);
        at_param_add(L, at_param_slot(L, t->l2_w), NAME("linear2.weight"), D, F);
        at_param_add(L, at_param_slot(L, t->l2_b), NAME("linear2.bias"), D, 0);
        at_param_add_init(L, at_param_slot(L, t->n1_w), NAME("norm1.weight"), D, 0, AT_INIT_CONST, 1);
        at_param_add_init(L, at_param_slot(L, t->n1_b), NAME("norm1.bias"), D, 0, AT_INIT_CONST, 0);
        at_param_add_init(L, at_param_slot(L, t->n2_w), NAME("norm2.weight"), D, 0, AT_INIT_CONST, 1);
        at_param_add_init(L, at_param_slot(L, t->n2_b), NAME("norm2.bias"), D, 0, AT_INIT_CONST, 0);
#undef NAME
    }
    if (!c->post_norm) {
        at_param_add_init(L, at_param_slot(L, s->nf_w), "encoder.norm.weight", D, 0, AT_INIT_CONST, 1);
        at_param_add_init(L, at_param_slot(L, s->nf_b), "encoder.norm.bias", D, 0, AT_INIT_CONST, 0);
    }
}

static attend_mha_config mha_cfg(const attend_model_config *c) {
    attend_mha_config mc = {c->emb, c->heads, 0, 0, 1};
    return mc;
}

static void layout_acts(attend_model *m, at_act_layout *L) {
    const attend_model_config *c = &m->cfg;
    tf_state *s = st(m);
    size_t M = (size_t)c->max_batch * (size_t)c->max_src_len, D = (size_t)c->emb, F = (size_t)c->enc_hidden;
    attend_mha_config mc = mha_cfg(c);
    size_t ws = attend_mha_workspace_size(&mc, c->max_batch, c->max_src_len, c->max_src_len);
    if (ws == 0) L->ok = 0; /* an overflow */
    for (int l = 0; l <= c->enc_layers; l++) s->x[l] = at_act_take(L, M * D);
    for (int l = 0; l < c->enc_layers; l++) {
        tf_layer_acts *a = &s->a[l];
        a->a = at_act_take(L, M * D);
        a->h = at_act_take(L, M * D);
        a->b = at_act_take(L, M * D);
        a->u = at_act_take(L, M * F);
        a->m1 = at_act_take(L, M);
        a->r1 = at_act_take(L, M);
        a->m2 = at_act_take(L, M);
        a->r2 = at_act_take(L, M);
        a->ws = at_act_take(L, ws);
    }
    s->mf = at_act_take(L, M);
    s->rf = at_act_take(L, M);
    s->pe = at_act_take(L, (size_t)c->max_src_len * D);
    s->out = at_act_take(L, M * D);
    s->dx = at_act_take(L, M * D);
    s->dx2 = at_act_take(L, M * D);
    s->dh = at_act_take(L, M * D);
    s->da = at_act_take(L, M * D);
    s->db = at_act_take(L, M * D);
    s->du = at_act_take(L, M * F);
    s->pe_ready = 0;
    m->acts.enc_top = s->out;
}

/* ----------------------------------------------------------------- forward */

static attend_mha_params mha_params(const tf_layer_tensors *t, int D) {
    attend_mha_params p = {t->in_w[0],         t->in_w[0] + (size_t)D * D, t->in_w[0] + 2 * (size_t)D * D,
                           t->in_b[0],         t->in_b[0] + D,             t->in_b[0] + 2 * D,
                           t->out_w[0],        t->out_b[0]};
    return p;
}

static attend_mha_grads mha_grads(const tf_layer_tensors *t, int D) {
    attend_mha_grads g = {t->in_w[1],  t->in_w[1] + (size_t)D * D, t->in_w[1] + 2 * (size_t)D * D,
                          t->in_b[1],  t->in_b[1] + D,             t->in_b[1] + 2 * D,
                          t->out_w[1], t->out_b[1]};
    return g;
}

/* y [M,D] = (beta y) + relu(x W1ᵀ + b1) W2ᵀ + b2, saving u [M,F] = relu(x W1ᵀ + b1) */
static void ffn_forward(const attend_model *m, const tf_layer_tensors *t, attend_real *y, attend_real *beta_y,
                        attend_real *u, const attend_real *x, int M, int D, int F) {
    at_model_linear(m, M, F, D, x, D, t->l1_w[0], D, 0, u, F);
    at_rows_add_relu(u, t->l1_b[0], (size_t)M, F);
    /* y = beta_y (the residual) + u W2ᵀ + b2 */
    if (beta_y != y) memcpy(y, beta_y, (size_t)M * D * sizeof *y);
    at_model_linear(m, M, D, F, u, F, t->l2_w[0], F, 1, y, D);
    at_rows_add(y, t->l2_b[0], (size_t)M, D);
}

/* The run's self-attention hook (at_run.self_hook) as the kernel's: layer l's weights. */
typedef struct {
    const attend_model *m;
    int layer;
} self_hook_ctx;

static void self_hook(void *user, attend_real *P, const uint8_t *valid, int N, int H, int T, int S) {
    const self_hook_ctx *h = user;
    (void)T; /* T = S: self-attention */
    h->m->run.self_hook(h->m->run.self_hook_user, h->layer, P, valid, N, H, S);
}

static void forward(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S) {
    (void)src;
    const attend_model_config *c = &m->cfg;
    at_acts *A = &m->acts;
    tf_state *s = st(m);
    int D = c->emb, F = c->enc_hidden, M = N * S;
    attend_mha_config mc = mha_cfg(c);
    /* x_0 = emb + positions */
    at_enc_positions_forward(m, s->x[0], A->emb_src, s->pe, &s->pe_ready, s->pos, N, S);
    for (int l = 0; l < c->enc_layers; l++) {
        const tf_layer_tensors *t = &s->t[l];
        tf_layer_acts *a = &s->a[l];
        attend_real *x = s->x[l], *y = s->x[l + 1];
        if (l > 0) at_ext_site(m, x, N, S, D, 1, AT_SITE_ENC_LAYER + l);
        attend_mha_params mp = mha_params(t, D);
        self_hook_ctx hc = {m, l};
        at_mha_hook hook = {self_hook, &hc};
        const at_mha_hook *hk = m->run.self_hook ? &hook : NULL;
        if (!c->post_norm) {
            /* h = x + MHA(LN1(x)) */
            at_layernorm_forward(a->a, a->m1, a->r1, x, t->n1_w[0], t->n1_b[0], M, D);
            at_self_attention_forward_model(&mc, &mp, a->h, a->a, m->valid, 0, N, S, a->ws, hk);
            for (size_t k = 0; k < (size_t)M * D; k++) a->h[k] += x[k];
            /* y = h + FFN(LN2(h)) */
            at_layernorm_forward(a->b, a->m2, a->r2, a->h, t->n2_w[0], t->n2_b[0], M, D);
            ffn_forward(m, t, y, a->h, a->u, a->b, M, D, F);
        } else {
            /* h = LN1(x + MHA(x)) */
            at_self_attention_forward_model(&mc, &mp, a->a, x, m->valid, 0, N, S, a->ws, hk);
            for (size_t k = 0; k < (size_t)M * D; k++) a->a[k] += x[k];
            at_layernorm_forward(a->h, a->m1, a->r1, a->a, t->n1_w[0], t->n1_b[0], M, D);
            /* y = LN2(h + FFN(h)) */
            ffn_forward(m, t, a->b, a->h, a->u, a->h, M, D, F);
            at_layernorm_forward(y, a->m2, a->r2, a->b, t->n2_w[0], t->n2_b[0], M, D);
        }
    }
    attend_real *top = s->x[c->enc_layers];
    if (!c->post_norm) at_layernorm_forward(s->out, s->mf, s->rf, top, s->nf_w[0], s->nf_b[0], M, D);
    else memcpy(s->out, top, (size_t)M * D * sizeof(attend_real));
    /* padding rows 0; the summary is the mean of the valid rows */
    at_enc_mean_forward(s->out, A->fin_cat, src_len, N, S, D);
}

/* ---------------------------------------------------------------- backward */

/* Layer l's attention weights [N,H,S,S] of the last forward (its mha workspace). */
static const attend_real *self_weights(const attend_model *m, int l, int N, int S) {
    attend_mha_config mc = mha_cfg(&m->cfg);
    return at_mha_weights(&mc, N, S, S, st(m)->a[l].ws);
}

/* forward: y = res + relu(x W1ᵀ + b1) W2ᵀ + b2 (u saved)
 * ⇒ from dy [M,D]: dW2 += dyᵀ u, db2 += Σ dy, du = dy W2 (u > 0), dW1 += duᵀ x,
 *   db1 += Σ du, dx += du W1 (the residual's dy is the caller's) */
static void ffn_backward(const attend_model *m, const tf_layer_tensors *t, attend_real *dx, attend_real *du,
                         const attend_real *dy, const attend_real *u, const attend_real *x, int M, int D, int F) {
    at_gemm(1, 0, D, F, M, 1, dy, D, u, F, 1, t->l2_w[1], F);
    at_rows_sum(t->l2_b[1], dy, (size_t)M, D);
    at_model_linear_dx(m, M, D, F, dy, D, t->l2_w[0], F, 0, du, F);
    for (size_t k = 0; k < (size_t)M * F; k++)
        if (!(u[k] > 0)) du[k] = 0;
    at_gemm(1, 0, F, D, M, 1, du, F, x, D, 1, t->l1_w[1], D);
    at_rows_sum(t->l1_b[1], du, (size_t)M, F);
    at_model_linear_dx(m, M, F, D, du, F, t->l1_w[0], D, 1, dx, D);
}

static int backward(attend_model *m, int N, int S) {
    const attend_model_config *c = &m->cfg;
    at_acts *A = &m->acts;
    tf_state *s = st(m);
    int D = c->emb, F = c->enc_hidden, M = N * S;
    size_t MD = (size_t)M * D;
    attend_mha_config mc = mha_cfg(c);
    /* forward: out = x_L masked (padding rows 0), fin = mean of the valid rows of out */
    attend_real *dout = s->dh;
    at_enc_mean_backward(dout, A->denc, A->dfin, m->fwd_src_len, N, S, D);
    attend_real *dx = s->dx, *dnext = s->dx2;
    if (!c->post_norm) { /* forward: out = LNf(x_L) */
        memset(dx, 0, MD * sizeof *dx);
        at_layernorm_backward(dx, s->nf_w[1], s->nf_b[1], dout, s->x[c->enc_layers], s->nf_w[0], s->mf, s->rf, M, D);
    } else {
        memcpy(dx, dout, MD * sizeof *dx);
    }
    for (int l = c->enc_layers - 1; l >= 0; l--) {
        const tf_layer_tensors *t = &s->t[l];
        tf_layer_acts *a = &s->a[l];
        const attend_real *x = s->x[l];
        attend_mha_params mp = mha_params(t, D);
        attend_mha_grads mg = mha_grads(t, D);
        /* dx: d x_{l+1}; dnext becomes d x_l */
        if (!c->post_norm) {
            /* forward: y = h + FFN(b), b = LN2(h)  ⇒ dh = dy + LN2ᵀ(FFNᵀ(dy)) */
            memcpy(s->dh, dx, MD * sizeof *dx);
            memset(s->db, 0, MD * sizeof *dx);
            ffn_backward(m, t, s->db, s->du, dx, a->u, a->b, M, D, F);
            at_layernorm_backward(s->dh, t->n2_w[1], t->n2_b[1], s->db, a->h, t->n2_w[0], a->m2, a->r2, M, D);
            /* forward: h = x + MHA(a), a = LN1(x)  ⇒ dx = dh + LN1ᵀ(MHAᵀ(dh)) */
            memcpy(dnext, s->dh, MD * sizeof *dx);
            memset(s->da, 0, MD * sizeof *dx);
            at_self_attention_backward(&mc, &mp, &mg, s->da, s->dh, a->a, N, S, a->ws);
            at_layernorm_backward(dnext, t->n1_w[1], t->n1_b[1], s->da, x, t->n1_w[0], a->m1, a->r1, M, D);
        } else {
            /* forward: y = LN2(b), b = h + FFN(h)  ⇒ db = LN2ᵀ(dy), dh = db + FFNᵀ(db) */
            memset(s->db, 0, MD * sizeof *dx);
            at_layernorm_backward(s->db, t->n2_w[1], t->n2_b[1], dx, a->b, t->n2_w[0], a->m2, a->r2, M, D);
            memcpy(s->dh, s->db, MD * sizeof *dx);
            ffn_backward(m, t, s->dh, s->du, s->db, a->u, a->h, M, D, F);
            /* forward: h = LN1(a), a = x + MHA(x)  ⇒ da = LN1ᵀ(dh), dx = da + MHAᵀ(da) */
            memset(s->da, 0, MD * sizeof *dx);
            at_layernorm_backward(s->da, t->n1_w[1], t->n1_b[1], s->dh, a->a, t->n1_w[0], a->m1, a->r1, M, D);
            memcpy(dnext, s->da, MD * sizeof *dx);
            at_self_attention_backward(&mc, &mp, &mg, dnext, s->da, x, N, S, a->ws);
        }
        /* forward: x = site(x_l) (layers l >= 1) */
        if (l > 0) at_ext_site(m, dnext, N, S, D, 1, AT_SITE_ENC_LAYER + l);
        attend_real *tmp = dx;
        dx = dnext;
        dnext = tmp;
    }
    /* forward: x_0 = emb + pos  ⇒ demb = dx_0, dpos[j] += Σ_n dx_0[n,j] */
    memcpy(A->demb, dx, MD * sizeof *dx);
    at_enc_positions_backward(m, s->pos, dx, N, S);
    return 1;
}

const at_encoder_ops at_encoder_transformer = {
    .name = "transformer",
    .state_size = sizeof(tf_state),
    .keys = KEYS,
    .nkeys = (int)(sizeof KEYS / sizeof KEYS[0]),
    .check = check,
    .width = width,
    .min_params = min_params,
    .layout_params = layout_params,
    .layout_acts = layout_acts,
    .forward = forward,
    .self_weights = self_weights,
    .backward = backward,
};
