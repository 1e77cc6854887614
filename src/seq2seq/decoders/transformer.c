/*
 * transformer.c — the TRANSFORMER decoder kind (Vaswani et al. 2017;
 * nn.TransformerDecoder's layers): the target embeddings plus positions, then
 * dec_layers layers of causal multi-head self-attention, multi-head
 * cross-attention over the encoder's states (key padding masked) and a
 * position-wise feed-forward network, each sub-layer with a residual
 * connection and layer norm:
 *
 *   x_0 = emb + PE                            (positions as the encoder's)
 *   pre-norm (default, norm_first=True, with a final norm):
 *     h1 = x + SA(LN1(x)),  h2 = h1 + CA(LN2(h1)),  x' = h2 + FF(LN3(h2));  feat = LNf(x_L)
 *   post-norm (post_norm = 1):
 *     h1 = LN1(x + SA(x)),  h2 = LN2(h1 + CA(h1)), x' = LN3(h2 + FF(h2));   feat = x_L
 *
 * It runs step by step behind the decoder-kind interface with a key/value
 * cache: step t projects its own keys and values into the cache and attends
 * over the cache's positions 0..t, so no earlier step is recomputed; the
 * cross-attention's keys and values are projected once per source (begin).
 * Teacher forcing runs the same steps; the backward runs them in reverse and
 * accumulates the gradient of every cached key and value, which is complete
 * when its own step's backward consumes it. The features are D = emb wide
 * (the output layer reads them); the alignments are the top layer's
 * cross-attention averaged over the heads. It has no recurrent cell and no
 * bridge (no_cell). The width is emb, the heads, positions and norm order
 * are the transformer encoder's settings (the encoder must be one), the
 * feed-forward width is dec_hidden.
 *
 * Tensors (nn.TransformerDecoder's state_dict names, prefixed "decoder."):
 *   decoder.pos_emb [max_positions,D] (learned positions only), then per
 *   layer l decoder.layers.<l>.self_attn.in_proj_weight [3D,D],
 *   .self_attn.in_proj_bias [3D], .self_attn.out_proj.weight [D,D],
 *   .self_attn.out_proj.bias [D], .multihead_attn.in_proj_weight [3D,D],
 *   .multihead_attn.in_proj_bias [3D], .multihead_attn.out_proj.weight [D,D],
 *   .multihead_attn.out_proj.bias [D], .linear1.weight [F,D], .linear1.bias
 *   [F], .linear2.weight [D,F], .linear2.bias [D], .norm1/2/3.weight [D],
 *   .norm1/2/3.bias [D]; (pre-norm) decoder.norm.weight [D], .bias [D]; then
 *   the output layer out.weight [Vt,D], out.bias [Vt].
 *
 * Dimension letters: see state.h; here D = emb the model width, F the
 * feed-forward width (dec_hidden), H heads, dh = D/H, L layers, Tc the
 * steps' capacity (max_tgt_len + 1).
 */
#include <math.h>
#include <string.h>

#include "core/layernorm.h"
#include "core/vmath.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/encoders/common.h"
#include "seq2seq/linear.h"

/* One layer's tensors, [0] in the parameters and [1] in the gradients. */
typedef struct {
    attend_real *sa_w[2], *sa_b[2];   /* [3D,D] [3D] self-attention in_proj (Wq; Wk; Wv) */
    attend_real *sa_ow[2], *sa_ob[2]; /* [D,D] [D] its out_proj */
    attend_real *ca_w[2], *ca_b[2];   /* [3D,D] [3D] cross-attention in_proj */
    attend_real *ca_ow[2], *ca_ob[2]; /* [D,D] [D] */
    attend_real *l1_w[2], *l1_b[2];   /* [F,D] [F] */
    attend_real *l2_w[2], *l2_b[2];   /* [D,F] [D] */
    attend_real *nw[3][2], *nb[3][2]; /* [D] norm1..3 */
} td_layer_tensors;

/* One layer's values per step, [T,N,...] (inference: slot 0). */
typedef struct {
    attend_real *in[3];      /* [T,N,D] each sub-layer's function input (pre-norm: LN_k's output; post-norm: the stream) */
    attend_real *pre[3];     /* [T,N,D] post-norm: LN_k's input (stream + sub-layer); pre-norm: unused */
    attend_real *out[3];     /* [T,N,D] the stream after sub-layer k (out[2] is the next layer's x) */
    attend_real *mean[3], *rstd[3]; /* [T,N] LN_k's */
    attend_real *q[2];       /* [T,N,D] the self- and cross-attention queries */
    attend_real *o[2];       /* [T,N,D] their outputs before out_proj */
    attend_real *p1;         /* [T,N,H,Tc] self-attention weights: step t's [N,H,t+1] (positions 0..t) */
    attend_real *p2;         /* [T,N,H,S] cross-attention weights */
    attend_real *u;          /* [T,N,F] relu(W1 · + b1) */
} td_layer_acts;

typedef struct {
    td_layer_tensors t[AT_MAX_LAYERS];
    attend_real *nf_w[2], *nf_b[2]; /* [D] the final norm (pre-norm) */
    attend_real *pos[2];            /* [max_positions,D] learned positions */
    td_layer_acts a[AT_MAX_LAYERS];
    attend_real *x0;                /* [T,N,D] emb + PE */
    attend_real *mf, *rf;           /* [T,N] the final norm's */
    attend_real *pe;                /* [Tc,D] the sinusoidal table */
    attend_real *kv;                /* [N][L] keys [D,Tc] (transposed), values [Tc,D]: the self-attention cache */
    attend_real *ckv;               /* [N][L] keys [D,S] (transposed), values [S,D]: the cross-attention's (begin) */
    /* backward */
    attend_real *dkv;               /* [N][L][2][Tc][D] the cache's gradient (accumulated over later steps) */
    attend_real *dckv;              /* [N][L] as ckv */
    attend_real *tk;                /* [N,3D] step t's q, k, v on their way into the cache (backward: [N,D] its
                                       keys' gradient out of the cache) */
    attend_real *ctmp;              /* [N,S,D] the cross keys or values (their gradient) in row layout */
    attend_real *dx, *dh, *da, *dq, *dO; /* [N,D] */
    attend_real *du;                /* [N,F] */
    attend_real *dp, *ds;           /* [N,H,max(Tc,S)] an attention's weight and score gradients */
    int pe_ready;
} td_state;

static td_state *st(const attend_model *m) { return m->dec_state; }

static int layers(const attend_model_config *c) { return c->dec_layers > 1 ? c->dec_layers : 1; }

/* ----------------------------------------------------------- configuration */

static attend_status check(const attend_model_config *c, int E, attend_error *err) {
    CHECK(c->encoder == ATTEND_ENCODER_TRANSFORMER, err, ATTEND_ERR_ARG,
          "model config: decoder transformer shares the transformer encoder's heads, positions and norm order, "
          "but encoder is %s", attend_encoder_name(c->encoder));
    CHECK(E == c->emb, err, ATTEND_ERR_ARG, "model config: decoder transformer is emb=%d wide, encoder width is %d",
          c->emb, E);
    if (c->positions == ATTEND_POSITIONS_LEARNED)
        CHECK(c->max_positions >= c->max_tgt_len + 1, err, ATTEND_ERR_ARG,
              "model config: decoder transformer: max_tgt_len+1=%d steps exceed max_positions=%d, the learned "
              "positions' rows", c->max_tgt_len + 1, c->max_positions);
    return ATTEND_OK;
}

/* per layer 8D² + 2DF, target embedding and output layer 2 Vt D */
static double min_params(const attend_model_config *c) {
    double D = c->emb, F = c->dec_hidden;
    return layers(c) * (8 * D * D + 2 * D * F) + 2.0 * c->tgt_vocab * D;
}

static void dims(const attend_model_config *c, int E, int *Din, int *F, int *V) {
    (void)E;
    *Din = c->emb;
    *F = c->emb;
    *V = c->tgt_vocab;
}

/* ------------------------------------------------------------------ layout */

static void layout_params(at_param_layout *L) {
    const attend_model_config *c = &L->m->cfg;
    td_state *s = st(L->m);
    int D = c->emb, F = c->dec_hidden;
    char nm[80]; /* the longest, layer 7's multihead_attn.out_proj.weight, has 47 characters (AT_NAME_MAX 48) */
    if (c->positions == ATTEND_POSITIONS_LEARNED) /* variance 1 like the embeddings: U(±sqrt 3) */
        at_param_add_init(L, at_param_slot(L, s->pos), "decoder.pos_emb", c->max_positions, D, AT_INIT_UNIFORM,
                          sqrt(3.0));
    for (int l = 0; l < layers(c); l++) {
        td_layer_tensors *t = &s->t[l];
#define NAME(part) (snprintf(nm, sizeof nm, "decoder.layers.%d.%s", l, part), nm)
        /* nn.MultiheadAttention: in_proj xavier_uniform, its bias and out_proj's bias 0 */
        at_param_add_init(L, at_param_slot(L, t->sa_w), NAME("self_attn.in_proj_weight"), 3 * D, D, AT_INIT_UNIFORM,
                          sqrt(6.0 / (4.0 * D)));
        at_param_add_init(L, at_param_slot(L, t->sa_b), NAME("self_attn.in_proj_bias"), 3 * D, 0, AT_INIT_CONST, 0);
        at_param_add(L, at_param_slot(L, t->sa_ow), NAME("self_attn.out_proj.weight"), D, D);
        at_param_add_init(L, at_param_slot(L, t->sa_ob), NAME("self_attn.out_proj.bias"), D, 0, AT_INIT_CONST, 0);
        at_param_add_init(L, at_param_slot(L, t->ca_w), NAME("multihead_attn.in_proj_weight"), 3 * D, D,
                          AT_INIT_UNIFORM, sqrt(6.0 / (4.0 * D)));
        at_param_add_init(L, at_param_slot(L, t->ca_b), NAME("multihead_attn.in_proj_bias"), 3 * D, 0, AT_INIT_CONST,
                          0);
        at_param_add(L, at_param_slot(L, t->ca_ow), NAME("multihead_attn.out_proj.weight"), D, D);
        at_param_add_init(L, at_param_slot(L, t->ca_ob), NAME("multihead_attn.out_proj.bias"), D, 0, AT_INIT_CONST,
                          0);
        at_param_add(L, at_param_slot(L, t->l1_w), NAME("linear1.weight"), F, D);
        at_param_add(L, at_param_slot(L, t->l1_b), NAME("linear1.bias"), F, 0);
        at_param_add(L, at_param_slot(L, t->l2_w), NAME("linear2.weight"), D, F);
        at_param_add(L, at_param_slot(L, t->l2_b), NAME("linear2.bias"), D, 0);
        for (int k = 0; k < 3; k++) {
            char part[16];
            snprintf(part, sizeof part, "norm%d.weight", k + 1);
            at_param_add_init(L, at_param_slot(L, t->nw[k]), NAME(part), D, 0, AT_INIT_CONST, 1);
            snprintf(part, sizeof part, "norm%d.bias", k + 1);
            at_param_add_init(L, at_param_slot(L, t->nb[k]), NAME(part), D, 0, AT_INIT_CONST, 0);
        }
#undef NAME
    }
    if (!c->post_norm) {
        at_param_add_init(L, at_param_slot(L, s->nf_w), "decoder.norm.weight", D, 0, AT_INIT_CONST, 1);
        at_param_add_init(L, at_param_slot(L, s->nf_b), "decoder.norm.bias", D, 0, AT_INIT_CONST, 0);
    }
    at_vocab_layout_output(L);
}

static void layout_acts(attend_model *m, at_act_layout *L) {
    const attend_model_config *c = &m->cfg;
    td_state *s = st(m);
    size_t N = (size_t)c->max_batch, S = (size_t)c->max_src_len, T = (size_t)m->Tcap, D = (size_t)c->emb,
           F = (size_t)c->dec_hidden, H = (size_t)c->heads, Ls = (size_t)layers(c);
    size_t TND = T * N * D, TN = T * N;
    for (int l = 0; l < layers(c); l++) {
        td_layer_acts *a = &s->a[l];
        for (int k = 0; k < 3; k++) {
            a->in[k] = at_act_take(L, TND);
            a->pre[k] = at_act_take(L, c->post_norm ? TND : 0);
            a->out[k] = at_act_take(L, TND);
            a->mean[k] = at_act_take(L, TN);
            a->rstd[k] = at_act_take(L, TN);
        }
        for (int k = 0; k < 2; k++) {
            a->q[k] = at_act_take(L, TND);
            a->o[k] = at_act_take(L, TND);
        }
        a->p1 = at_act_take(L, TN * H * T);
        a->p2 = at_act_take(L, TN * H * S);
        a->u = at_act_take(L, TN * F);
    }
    s->x0 = at_act_take(L, TND);
    s->mf = at_act_take(L, TN);
    s->rf = at_act_take(L, TN);
    s->pe = at_act_take(L, T * D);
    s->kv = at_act_take(L, N * Ls * 2 * T * D);
    s->ckv = at_act_take(L, N * S * Ls * 2 * D);
    s->dkv = at_act_take(L, N * Ls * 2 * T * D);
    s->dckv = at_act_take(L, N * S * Ls * 2 * D);
    s->tk = at_act_take(L, N * 3 * D);
    s->ctmp = at_act_take(L, N * S * D);
    s->dx = at_act_take(L, N * D);
    s->dh = at_act_take(L, N * D);
    s->da = at_act_take(L, N * D);
    s->dq = at_act_take(L, N * D);
    s->dO = at_act_take(L, N * D);
    s->du = at_act_take(L, N * F);
    s->dp = at_act_take(L, N * H * (T > S ? T : S));
    s->ds = at_act_take(L, N * H * (T > S ? T : S));
    s->pe_ready = 0;
    /* beam search: a hypothesis's cache follows it; the cross keys and values are the source's */
    at_act_rows(L, s->kv, Ls * 2 * T * D * sizeof(attend_real), 0, AT_ROWS_STATE);
    at_act_rows(L, s->ckv, Ls * 2 * D * sizeof(attend_real), 1, AT_ROWS_SOURCE);
}

/* --------------------------------------------------------------- pieces */

/* the self-attention cache of row n, layer l: keys (kv 0) transposed [D,Tc]
 * (key j's element i at i·Tc + j: a score row is one axpy per element) or
 * values (kv 1) [Tc,D] */
static attend_real *cache(const attend_model *m, attend_real *base, int n, int l, int kv) {
    size_t Tc = (size_t)m->Tcap, D = (size_t)m->cfg.emb;
    return base + (((size_t)n * layers(&m->cfg) + l) * 2 + kv) * Tc * D;
}

/* the cross keys (kv 0) transposed [D,S] or values (kv 1) [S,D] of row n, layer l */
static attend_real *cross(const attend_model *m, attend_real *base, int n, int l, int kv, int S) {
    size_t D = (size_t)m->cfg.emb, Ls = (size_t)layers(&m->cfg);
    return base + (((size_t)n * Ls + l) * 2 + kv) * (size_t)S * D;
}

/* dst [C,R] (row stride ldd) = src [R,C]ᵀ (row stride lds) */
static void transpose(attend_real *dst, int ldd, const attend_real *src, int lds, int R, int C) {
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) dst[(size_t)c * ldd + r] = src[(size_t)r * lds + c];
}

/* Y [N,D] (row stride ldy) += b [D] on every row */
static void add_bias(attend_real *Y, int ldy, const attend_real *b, int N, int D) {
    if (ldy == D) at_rows_add(Y, b, (size_t)N, D);
    else
        for (int n = 0; n < N; n++) at_rows_add(Y + (size_t)n * ldy, b, 1, D);
}

/* db [D] += Σ_n dY [N,D] (row stride lddy) */
/* db += Σ_rows dY; db NULL for a key bias, whose gradient is exactly zero (it shifts all of a query's
 * scores by q·b_k, which the softmax ignores): summed, it is rounding noise that differs with the thread
 * split and that Adam turns into learning-rate-sized steps, so it is not summed */
static void sum_bias(attend_real *db, const attend_real *dY, int lddy, int N, int D) {
    if (!db) return;
    if (lddy == D) at_rows_sum(db, dY, (size_t)N, D);
    else
        for (int n = 0; n < N; n++) at_rows_sum(db, dY + (size_t)n * lddy, 1, D);
}

/* Y [N,D] (row stride ldy) = X [N,D] Wᵀ + b for W [D,D] (a slice of an in_proj) */
static void proj(const attend_model *m, attend_real *Y, int ldy, const attend_real *X, const attend_real *W,
                 const attend_real *b, int N, int D) {
    at_model_linear(m, N, D, D, X, D, W, D, 0, Y, ldy);
    add_bias(Y, ldy, b, N, D);
}

/* Asks for the next row's keys (kcount values at k) and values (vcount at v)
 * while this row computes: its cache lines are scattered over the arena and
 * the loads of a row's short loops otherwise wait on each line in turn. */
static AT_ALWAYS_INLINE void prefetch_row(const attend_real *k, const attend_real *v, size_t kcount, size_t vcount) {
#if defined(__GNUC__) || defined(__clang__)
    const size_t line = 64 / sizeof(attend_real);
    for (size_t i = 0; i < kcount; i += line) __builtin_prefetch(k + i);
    for (size_t i = 0; i < vcount; i += line) __builtin_prefetch(v + i);
#else
    (void)k, (void)v, (void)kcount, (void)vcount;
#endif
}

/* the fused attention's tiles: scores of AT_TILE keys, AT_TILE_V of a head's values at a time */
#define AT_TILE 8
#define AT_TILE_V 8

/* Rows [n0, n1) of attend_rows, fused per row and head: the scores over the
 * transposed keys (vector lanes over the keys), the masked softmax (-inf at
 * padding, max subtracted, at_vexp; exactly 0 at the padding), the weighted
 * values (lanes over the head's dh values); every sum in a register, every
 * load contiguous across the lanes. */
AT_KERNEL_VOID(static, step_attention_rows,
               (attend_real *restrict o, attend_real *restrict p, const attend_real *restrict q,
                const attend_real *restrict kt, int ldk, const attend_real *restrict vb, size_t nstride,
                const uint8_t *restrict valid, int n0, int n1, int K, int D, int H),
               (o, p, q, kt, ldk, vb, nstride, valid, n0, n1, K, D, H)) {
    // o [N,D], p [N,H,K], q [N,D], kt row n [D,ldk], vb row n [K,D], valid [N,K] or NULL
    const int dh = D / H;
    const attend_real scale = (attend_real)(1.0 / sqrt((double)dh));
    for (int n = n0; n < n1; n++) {
        const attend_real *restrict kn = kt + (size_t)n * nstride, *restrict vn = vb + (size_t)n * nstride;
        if (n + 1 < n1) prefetch_row(kn + nstride, vn + nstride, (size_t)D * ldk, (size_t)K * D);
        const uint8_t *restrict ok = valid ? valid + (size_t)n * K : NULL;
        for (int h = 0; h < H; h++) {
            attend_real *restrict ph = p + ((size_t)n * H + h) * K;
            const attend_real *restrict qh = q + (size_t)n * D + h * dh;
            const attend_real *restrict kh = kn + (size_t)h * dh * ldk;
            /* s_j = Σ_i q_i k_j,i, AT_TILE keys in registers. The last tile ends at K (it overlaps the one
             * before and computes its keys again, with the same bits); with K < AT_TILE <= ldk one tile
             * reads the row's stale columns past K and keeps only the first K. */
            int j0 = 0;
            if (ldk >= AT_TILE)
                for (;; j0 += AT_TILE) {
                    const int start = j0 + AT_TILE <= K ? j0 : K >= AT_TILE ? K - AT_TILE : 0;
                    attend_real acc[AT_TILE] = {0};
                    for (int i = 0; i < dh; i++) {
                        const attend_real qi = qh[i], *restrict kr = kh + (size_t)i * ldk + start;
#pragma omp simd
                        for (int jj = 0; jj < AT_TILE; jj++) acc[jj] += qi * kr[jj];
                    }
                    if (start + AT_TILE <= K) {
#pragma omp simd
                        for (int jj = 0; jj < AT_TILE; jj++) ph[start + jj] = acc[jj];
                    } else {
                        for (int jj = 0; jj < K; jj++) ph[jj] = acc[jj];
                    }
                    if (start + AT_TILE >= K) {
                        j0 = K;
                        break;
                    }
                }
            for (int j = j0; j < K; j++) { /* rows narrower than a tile */
                attend_real acc = 0;
                for (int i = 0; i < dh; i++) acc += qh[i] * kh[(size_t)i * ldk + j];
                ph[j] = acc;
            }
            if (ok) {
#pragma omp simd
                for (int j = 0; j < K; j++) ph[j] = at_vsel(ok[j] != 0, ph[j] * scale, -INFINITY);
            } else {
#pragma omp simd
                for (int j = 0; j < K; j++) ph[j] *= scale;
            }
            attend_real mx = -INFINITY;
#pragma omp simd reduction(max : mx)
            for (int j = 0; j < K; j++) mx = ph[j] > mx ? ph[j] : mx;
            attend_real sum = 0;
#pragma omp simd reduction(+ : sum)
            for (int j = 0; j < K; j++) {
                const attend_real e = at_vexp(ph[j] - mx);
                ph[j] = e;
                sum += e;
            }
            const attend_real inv = 1 / sum; /* sum >= 1: the maximum gives exp(0) */
#pragma omp simd
            for (int j = 0; j < K; j++) ph[j] *= inv;
            attend_real *restrict oh = o + (size_t)n * D + h * dh;
            const attend_real *restrict vh = vn + h * dh;
            int i0 = 0;
            for (; i0 + AT_TILE_V <= dh; i0 += AT_TILE_V) { /* o_i = Σ_j p_j v_j,i, AT_TILE_V values in registers */
                /* two partial sums, over even and odd j (independent chains), added at the end */
                attend_real a0[AT_TILE_V] = {0}, a1[AT_TILE_V] = {0};
                int j = 0;
                for (; j + 2 <= K; j += 2) {
                    const attend_real p0 = ph[j], p1 = ph[j + 1];
                    const attend_real *restrict v0 = vh + (size_t)j * D + i0, *restrict v1 = v0 + D;
#pragma omp simd
                    for (int ii = 0; ii < AT_TILE_V; ii++) {
                        a0[ii] += p0 * v0[ii];
                        a1[ii] += p1 * v1[ii];
                    }
                }
                if (j < K) {
                    const attend_real p0 = ph[j], *restrict v0 = vh + (size_t)j * D + i0;
#pragma omp simd
                    for (int ii = 0; ii < AT_TILE_V; ii++) a0[ii] += p0 * v0[ii];
                }
#pragma omp simd
                for (int ii = 0; ii < AT_TILE_V; ii++) oh[i0 + ii] = a0[ii] + a1[ii];
            }
            for (int i = i0; i < dh; i++) {
                attend_real acc = 0;
                for (int j = 0; j < K; j++) acc += ph[j] * vh[(size_t)j * D + i];
                oh[i] = acc;
            }
        }
    }
}

typedef struct {
    attend_real *o, *p;
    const attend_real *q, *kt, *vb;
    int ldk, K, D, H;
    size_t nstride;
    const uint8_t *valid;
} step_attention_job;

static void step_attention_chunk(void *ctx, int lo, int hi) {
    const step_attention_job *j = ctx;
    step_attention_rows(j->o, j->p, j->q, j->kt, j->ldk, j->vb, j->nstride, j->valid, lo, hi, j->K, j->D, j->H);
}

/* One query row per n over K keys, every head h (dh = D/H wide):
 *   p [N,H,K] = softmax_j(q_n,h · k_n,j,h / sqrt(dh)) over the keys j < K
 *               (key padding valid [N,K], or NULL),
 *   o [N,D]   = Σ_j p_n,h,j v_n,j,h per head,
 * with row n's keys transposed at kt + n·nstride (element i of key j at
 * i·ldk + j) and its values [K,D] at vb + n·nstride. The rows are split
 * over the library's threads (whole rows: the bits do not depend on the
 * thread count). */
static void attend_rows(attend_real *o, attend_real *p, const attend_real *q, const attend_real *kt, int ldk,
                        const attend_real *vb, size_t nstride, const uint8_t *valid, int N, int K, int D, int H) {
    step_attention_job j = {o, p, q, kt, vb, ldk, K, D, H, nstride, valid};
    at_parallel_rows(4.0 * N * K * D, N, 1, step_attention_chunk, &j);
}

/* Backward of attend_rows: from dO [N,D]: dq [N,D] (=), the keys' and values'
 * gradients dkt, dvb (the layout of kt, vb) +=, with the forward's p [N,H,K],
 * q, keys and values; dp, ds [N,H,K] scratch. */
static void attend_rows_backward(attend_real *dq, attend_real *dkt, attend_real *dvb, attend_real *dp, attend_real *ds,
                                 const attend_real *dO, const attend_real *p, const attend_real *q,
                                 const attend_real *kt, int ldk, const attend_real *vb, size_t nstride, int N, int K,
                                 int D, int H) {
    int dh = D / H;
    attend_real scale = (attend_real)(1.0 / sqrt((double)dh));
    size_t HK = (size_t)H * K;
    for (int h = 0; h < H; h++) {
        /* forward: o = Σ_j p_j v_j  ⇒  dp_j = dO·v_j (dp [1,K] = dO [1,dh] Vᵀ), dv_j += p_j dO (rank 1) */
        at_gemm_batched(N, 0, 1, 1, K, dh, 1, dO + h * dh, dh, (size_t)D, vb + h * dh, D, nstride, 0,
                        dp + (size_t)h * K, K, HK);
        at_gemm_batched(N, 0, 0, K, dh, 1, 1, p + (size_t)h * K, 1, HK, dO + h * dh, dh, (size_t)D, 1, dvb + h * dh,
                        D, nstride);
    }
    /* forward: p = softmax(s)  ⇒  ds_j = p_j (dp_j − Σ p dp) */
    memset(ds, 0, (size_t)N * HK * sizeof *ds);
    at_softmax_backward(ds, dp, p, (size_t)N * H, K);
    for (int h = 0; h < H; h++) {
        /* forward: s = scale q Kᵀ  ⇒  dq = scale ds (Kᵀ)ᵀ ([1,K][K,dh]), dKᵀ [dh,K] += scale qᵀ ds (rank 1) */
        at_gemm_batched(N, 0, 1, 1, dh, K, scale, ds + (size_t)h * K, K, HK, kt + (size_t)h * dh * ldk, ldk, nstride,
                        0, dq + h * dh, D, (size_t)D);
        at_gemm_batched(N, 0, 0, dh, K, 1, scale, q + h * dh, 1, (size_t)D, ds + (size_t)h * K, K, HK, 1,
                        dkt + (size_t)h * dh * ldk, ldk, nstride);
    }
}

/* ----------------------------------------------------------------- forward */

/* PE [Tc,D] as the encoder's (encoders/common.c) */
static void positions_rows(attend_model *m, attend_real *x0, const attend_real *emb, int t, int N) {
    const attend_model_config *c = &m->cfg;
    td_state *s = st(m);
    int D = c->emb;
    memcpy(x0, emb, (size_t)N * D * sizeof *x0);
    const attend_real *p = NULL;
    if (c->positions == ATTEND_POSITIONS_SINUSOIDAL) {
        if (!s->pe_ready) {
            at_sinusoid_table(s->pe, m->Tcap, D);
            s->pe_ready = 1;
        }
        p = s->pe + (size_t)t * D;
    } else if (c->positions == ATTEND_POSITIONS_LEARNED) {
        p = s->pos[0] + (size_t)t * D;
    }
    if (p)
        for (int n = 0; n < N; n++)
            for (int d = 0; d < D; d++) x0[(size_t)n * D + d] += p[d];
}

/* the cross-attention keys (transposed) and values of every layer from the encoder's states, once per source */
static void begin(attend_model *m, int N, int S) {
    td_state *s = st(m);
    int D = m->cfg.emb;
    for (int l = 0; l < layers(&m->cfg); l++) {
        const td_layer_tensors *t = &s->t[l];
        for (int kv = 0; kv < 2; kv++) {
            const attend_real *W = t->ca_w[0] + (size_t)(1 + kv) * D * D, *b = t->ca_b[0] + (size_t)(1 + kv) * D;
            at_model_linear(m, N * S, D, D, m->acts.enc_top, D, W, D, 0, s->ctmp, D);
            at_rows_add(s->ctmp, b, (size_t)N * S, D);
            for (int n = 0; n < N; n++) {
                const attend_real *src = s->ctmp + (size_t)n * S * D;
                if (kv) memcpy(cross(m, s->ckv, n, l, 1, S), src, (size_t)S * D * sizeof *src);
                else transpose(cross(m, s->ckv, n, l, 0, S), S, src, D, S, D);
            }
        }
    }
}

/* out [N,D] = x [N,D] + f W_oᵀ + b_o (a sub-layer's residual) */
static void residual_out(const attend_model *m, attend_real *out, const attend_real *x, const attend_real *f,
                         const attend_real *W, const attend_real *b, int N, int D) {
    memcpy(out, x, (size_t)N * D * sizeof *out);
    at_model_linear(m, N, D, D, f, D, W, D, 1, out, D);
    at_rows_add(out, b, (size_t)N, D);
}

static void step_forward(attend_model *m, int t, int N, int S, const uint8_t *active, attend_real *feat_row,
                         size_t feat_stride) {
    (void)active; /* a finished row runs on: nothing later reads it (causal) */
    const attend_model_config *c = &m->cfg;
    td_state *s = st(m);
    int D = c->emb, F = c->dec_hidden, H = c->heads, Tc = m->Tcap, Ls = layers(c), post = c->post_norm;
    size_t slot = (size_t)(m->run.infer ? 0 : t), ND = (size_t)N * D;
    /* row n's cache and cross keys/values: n·kv_stride, n·ckv_stride from row 0's */
    const size_t kv_stride = (size_t)Ls * 2 * Tc * D, ckv_stride = (size_t)S * Ls * 2 * D;
    attend_real *x = s->x0 + slot * ND;
    positions_rows(m, x, m->acts.emb_tgt + (size_t)t * ND, t, N);
    for (int l = 0; l < Ls; l++) {
        const td_layer_tensors *w = &s->t[l];
        td_layer_acts *a = &s->a[l];
        attend_real *in[3], *pre[3], *out[3], *mean[3], *rstd[3];
        for (int k = 0; k < 3; k++) {
            in[k] = a->in[k] + slot * ND;
            pre[k] = post ? a->pre[k] + slot * ND : NULL;
            out[k] = a->out[k] + slot * ND;
            mean[k] = a->mean[k] + slot * N;
            rstd[k] = a->rstd[k] + slot * N;
        }
        attend_real *q1 = a->q[0] + slot * ND, *o1 = a->o[0] + slot * ND;
        attend_real *q2 = a->q[1] + slot * ND, *o2 = a->o[1] + slot * ND;
        attend_real *p1 = a->p1 + slot * N * H * Tc, *p2 = a->p2 + slot * N * H * S;
        attend_real *u = a->u + slot * N * F;
        const attend_real *stream = x; /* the residual stream entering each sub-layer */
        for (int k = 0; k < 3; k++) {
            /* the sub-layer's function input */
            if (!post) at_layernorm_forward(in[k], mean[k], rstd[k], stream, w->nw[k][0], w->nb[k][0], N, D);
            else memcpy(in[k], stream, ND * sizeof *x);
            attend_real *r = post ? pre[k] : out[k]; /* stream + f(in) */
            if (k == 0) { /* causal self-attention over the cache's positions 0..t */
                /* q, k, v [N,3D] in one product; the query to q1, the key into column t of the transposed
                 * cache, the value into row t */
                at_model_linear(m, N, 3 * D, D, in[0], D, w->sa_w[0], D, 0, s->tk, 3 * D);
                at_rows_add(s->tk, w->sa_b[0], (size_t)N, 3 * D);
                for (int n = 0; n < N; n++) {
                    const attend_real *qkv = s->tk + (size_t)n * 3 * D;
                    memcpy(q1 + (size_t)n * D, qkv, (size_t)D * sizeof *qkv);
                    transpose(cache(m, s->kv, n, l, 0) + t, Tc, qkv + D, D, 1, D);
                    memcpy(cache(m, s->kv, n, l, 1) + (size_t)t * D, qkv + 2 * D, (size_t)D * sizeof *qkv);
                }
                attend_rows(o1, p1, q1, cache(m, s->kv, 0, l, 0), Tc, cache(m, s->kv, 0, l, 1), kv_stride, NULL, N,
                            t + 1, D, H);
                residual_out(m, r, stream, o1, w->sa_ow[0], w->sa_ob[0], N, D);
            } else if (k == 1) { /* cross-attention over the valid source positions */
                proj(m, q2, D, in[1], w->ca_w[0], w->ca_b[0], N, D);
                attend_rows(o2, p2, q2, cross(m, s->ckv, 0, l, 0, S), S, cross(m, s->ckv, 0, l, 1, S), ckv_stride,
                            m->valid, N, S, D, H);
                residual_out(m, r, stream, o2, w->ca_ow[0], w->ca_ob[0], N, D);
            } else { /* feed-forward: stream + relu(in W1ᵀ + b1) W2ᵀ + b2 */
                at_model_linear(m, N, F, D, in[2], D, w->l1_w[0], D, 0, u, F);
                at_rows_add_relu(u, w->l1_b[0], (size_t)N, F);
                memcpy(r, stream, ND * sizeof *x);
                at_model_linear(m, N, D, F, u, F, w->l2_w[0], F, 1, r, D);
                at_rows_add(r, w->l2_b[0], (size_t)N, D);
            }
            if (post) at_layernorm_forward(out[k], mean[k], rstd[k], pre[k], w->nw[k][0], w->nb[k][0], N, D);
            stream = out[k];
        }
        x = out[2];
    }
    /* features: LNf(x_L) (pre-norm) or x_L, row n at feat_row + n·feat_stride */
    for (int n = 0; n < N; n++) {
        attend_real *fr = feat_row + (size_t)n * feat_stride;
        if (!post) at_layernorm_forward(fr, s->mf + slot * N + n, s->rf + slot * N + n, x + (size_t)n * D,
                                        s->nf_w[0], s->nf_b[0], 1, D);
        else memcpy(fr, x + (size_t)n * D, (size_t)D * sizeof *fr);
    }
    /* alignments: the top layer's cross-attention weights averaged over the heads, or (decoding with
     * align_head h) head h's */
    const attend_real *ptop = s->a[Ls - 1].p2 + slot * N * H * S;
    attend_real *wt = m->acts.weights + (size_t)t * N * S;
    const int head = m->run.align_head;
    for (int n = 0; n < N; n++) {
        if (head >= 1 && head <= H) {
            memcpy(wt + (size_t)n * S, ptop + ((size_t)n * H + head - 1) * S, (size_t)S * sizeof *wt);
            continue;
        }
        for (int j = 0; j < S; j++) {
            double acc = 0;
            for (int h = 0; h < H; h++) acc += ptop[((size_t)n * H + h) * S + j];
            wt[(size_t)n * S + j] = (attend_real)(acc / H);
        }
    }
}

/* ---------------------------------------------------------------- backward */

static void backward_begin(attend_model *m, int N, int S) {
    td_state *s = st(m);
    size_t D = (size_t)m->cfg.emb, Ls = (size_t)layers(&m->cfg);
    memset(s->dkv, 0, (size_t)N * Ls * 2 * m->Tcap * D * sizeof(attend_real));
    memset(s->dckv, 0, (size_t)N * S * Ls * 2 * D * sizeof(attend_real));
}

/* forward: r = x + f W_oᵀ + b_o  ⇒  dW_o += drᵀ f, db_o += Σ dr, df = dr W_o (the residual's dr is the caller's) */
static void residual_out_backward(const attend_model *m, attend_real *df, attend_real *dW, attend_real *db,
                                  const attend_real *dr, const attend_real *f, const attend_real *W, int N, int D) {
    at_gemm(1, 0, D, D, N, 1, dr, D, f, D, 1, dW, D);
    at_rows_sum(db, dr, (size_t)N, D);
    at_model_linear_dx(m, N, D, D, dr, D, W, D, 0, df, D);
}

/* forward: Y = X Wᵀ + b (Y [N,D] at row stride ldy, W [D,D])  ⇒  dW += dYᵀ X, db += Σ dY, dX += dY W */
static void proj_backward(const attend_model *m, attend_real *dX, attend_real *dW, attend_real *db,
                          const attend_real *dY, int lddy, const attend_real *X, const attend_real *W, int N, int D) {
    at_gemm(1, 0, D, D, N, 1, dY, lddy, X, D, 1, dW, D);
    sum_bias(db, dY, lddy, N, D);
    at_model_linear_dx(m, N, D, D, dY, lddy, W, D, 1, dX, D);
}

static void step_backward(attend_model *m, int t, int N, int S, const attend_real *dfeat_t, size_t dfeat_stride,
                          attend_real *dxg) {
    (void)dxg;
    const attend_model_config *c = &m->cfg;
    td_state *s = st(m);
    int D = c->emb, F = c->dec_hidden, H = c->heads, Tc = m->Tcap, Ls = layers(c), post = c->post_norm;
    size_t slot = (size_t)t, ND = (size_t)N * D;
    const size_t kv_stride = (size_t)Ls * 2 * Tc * D, ckv_stride = (size_t)S * Ls * 2 * D;
    attend_real *dx = s->dx, *dh = s->dh, *da = s->da, *dq = s->dq, *dO = s->dO;
    const attend_real *xL = Ls > 0 ? s->a[Ls - 1].out[2] + slot * ND : NULL;
    /* forward: feat = LNf(x_L) (pre-norm) or x_L */
    if (!post) {
        memset(dx, 0, ND * sizeof *dx);
        for (int n = 0; n < N; n++)
            at_layernorm_backward(dx + (size_t)n * D, s->nf_w[1], s->nf_b[1], dfeat_t + (size_t)n * dfeat_stride,
                                  xL + (size_t)n * D, s->nf_w[0], s->mf + slot * N + n, s->rf + slot * N + n, 1, D);
    } else {
        for (int n = 0; n < N; n++)
            memcpy(dx + (size_t)n * D, dfeat_t + (size_t)n * dfeat_stride, (size_t)D * sizeof *dx);
    }
    for (int l = Ls - 1; l >= 0; l--) {
        const td_layer_tensors *w = &s->t[l];
        td_layer_acts *a = &s->a[l];
        const attend_real *x = l > 0 ? s->a[l - 1].out[2] + slot * ND : s->x0 + slot * ND;
        /* dx: the gradient of out[2]; walk the sub-layers down to the layer's input */
        for (int k = 2; k >= 0; k--) {
            const attend_real *in = a->in[k] + slot * ND;
            const attend_real *stream = k > 0 ? a->out[k - 1] + slot * ND : x;
            const attend_real *mean = a->mean[k] + slot * N, *rstd = a->rstd[k] + slot * N;
            /* dr: the gradient of stream + f(in); post-norm: through LN_k first */
            attend_real *dr = dx;
            if (post) { /* forward: out = LN_k(pre) */
                memset(dh, 0, ND * sizeof *dh);
                at_layernorm_backward(dh, w->nw[k][1], w->nb[k][1], dx, a->pre[k] + slot * ND, w->nw[k][0], mean,
                                      rstd, N, D);
                dr = dh;
            }
            /* d in = fᵀ(dr) into da */
            memset(da, 0, ND * sizeof *da);
            if (k == 2) { /* forward: r = stream + relu(in W1ᵀ + b1) W2ᵀ + b2 */
                const attend_real *u = a->u + slot * N * F;
                at_gemm(1, 0, D, F, N, 1, dr, D, u, F, 1, w->l2_w[1], F);
                at_rows_sum(w->l2_b[1], dr, (size_t)N, D);
                at_model_linear_dx(m, N, D, F, dr, D, w->l2_w[0], F, 0, s->du, F);
                for (size_t i = 0; i < (size_t)N * F; i++)
                    if (!(u[i] > 0)) s->du[i] = 0;
                at_gemm(1, 0, F, D, N, 1, s->du, F, in, D, 1, w->l1_w[1], D);
                at_rows_sum(w->l1_b[1], s->du, (size_t)N, F);
                at_model_linear_dx(m, N, F, D, s->du, F, w->l1_w[0], D, 1, da, D);
            } else if (k == 1) { /* forward: r = stream + CA(q2 = in Wq'ᵀ + bq') W_o'ᵀ + b_o' */
                const attend_real *q2 = a->q[1] + slot * ND, *o2 = a->o[1] + slot * ND;
                const attend_real *p2 = a->p2 + slot * N * H * S;
                residual_out_backward(m, dO, w->ca_ow[1], w->ca_ob[1], dr, o2, w->ca_ow[0], N, D);
                attend_rows_backward(dq, cross(m, s->dckv, 0, l, 0, S), cross(m, s->dckv, 0, l, 1, S), s->dp, s->ds,
                                     dO, p2, q2, cross(m, s->ckv, 0, l, 0, S), S, cross(m, s->ckv, 0, l, 1, S),
                                     ckv_stride, N, S, D, H);
                proj_backward(m, da, w->ca_w[1], w->ca_b[1], dq, D, in, w->ca_w[0], N, D);
            } else { /* forward: r = stream + SA(in) W_oᵀ + b_o, q1, k_t, v_t = in W_{q,k,v}ᵀ + b */
                const attend_real *q1 = a->q[0] + slot * ND, *o1 = a->o[0] + slot * ND;
                const attend_real *p1 = a->p1 + slot * N * H * Tc;
                residual_out_backward(m, dO, w->sa_ow[1], w->sa_ob[1], dr, o1, w->sa_ow[0], N, D);
                attend_rows_backward(dq, cache(m, s->dkv, 0, l, 0), cache(m, s->dkv, 0, l, 1), s->dp, s->ds, dO, p1,
                                     q1, cache(m, s->kv, 0, l, 0), Tc, cache(m, s->kv, 0, l, 1), kv_stride, N, t + 1,
                                     D, H);
                proj_backward(m, da, w->sa_w[1], w->sa_b[1], dq, D, in, w->sa_w[0], N, D);
                /* step t's own key (column t of the transposed cache) and value (row t): every later step
                 * has added its part (reverse order) */
                for (int n = 0; n < N; n++) transpose(s->tk + (size_t)n * D, D, cache(m, s->dkv, n, l, 0) + t, Tc, D, 1);
                proj_backward(m, da, w->sa_w[1] + (size_t)D * D, NULL, s->tk, D, in, /* key bias: see sum_bias */
                              w->sa_w[0] + (size_t)D * D, N, D);
                proj_backward(m, da, w->sa_w[1] + (size_t)2 * D * D, w->sa_b[1] + 2 * D,
                              cache(m, s->dkv, 0, l, 1) + (size_t)t * D, (int)kv_stride, in,
                              w->sa_w[0] + (size_t)2 * D * D, N, D);
            }
            /* d stream = dr + (pre-norm) LN_kᵀ(d in) or (post-norm) d in */
            if (dr != dx) memcpy(dx, dr, ND * sizeof *dx);
            if (!post) at_layernorm_backward(dx, w->nw[k][1], w->nb[k][1], da, stream, w->nw[k][0], mean, rstd, N, D);
            else
                for (size_t i = 0; i < ND; i++) dx[i] += da[i];
        }
    }
    /* forward: x_0 = emb + PE  ⇒  demb rows t·N + n, learned positions' row t */
    memcpy(m->acts.demb + (size_t)t * ND, dx, ND * sizeof *dx);
    if (c->positions == ATTEND_POSITIONS_LEARNED) at_rows_sum(s->pos[1] + (size_t)t * D, dx, (size_t)N, D);
}

/* after every step: the cross keys' and values' gradient into their weights and the encoder's states */
static void input_backward(attend_model *m, int T, int N) {
    (void)T;
    td_state *s = st(m);
    int D = m->cfg.emb, S = m->fwd_S;
    for (int l = 0; l < layers(&m->cfg); l++) {
        const td_layer_tensors *w = &s->t[l];
        for (int kv = 0; kv < 2; kv++) { /* the gradient in row layout [N,S,D] (keys transposed back) */
            attend_real *dY = s->ctmp;
            for (int n = 0; n < N; n++) {
                const attend_real *src = cross(m, s->dckv, n, l, kv, S);
                if (kv) memcpy(dY + (size_t)n * S * D, src, (size_t)S * D * sizeof *src);
                else transpose(dY + (size_t)n * S * D, D, src, S, D, S);
            }
            /* forward: Y = enc Wᵀ + b  ⇒  dW += dYᵀ enc, db += Σ dY, denc += dY W */
            at_gemm(1, 0, D, D, N * S, 1, dY, D, m->acts.enc_top, D, 1, w->ca_w[1] + (size_t)(1 + kv) * D * D, D);
            if (kv) at_rows_sum(w->ca_b[1] + 2 * (size_t)D, dY, (size_t)N * S, D); /* key bias: see sum_bias */
            at_model_linear_dx(m, N * S, D, D, dY, D, w->ca_w[0] + (size_t)(1 + kv) * D * D, D, 1, m->acts.denc, D);
        }
    }
}

const at_decoder_ops at_decoder_transformer = {
    .name = "transformer",
    .attentive = 0,
    .no_cell = 1,
    .aligns = 1,
    .head_aligns = 1,
    AT_VOCAB_OPS,
    .state_size = sizeof(td_state),
    .check = check,
    .min_params = min_params,
    .dims = dims,
    .layout_params = layout_params,
    .layout_acts = layout_acts,
    .begin = begin,
    .backward_begin = backward_begin,
    .step_forward = step_forward,
    .step_backward = step_backward,
    .input_backward = input_backward,
};
