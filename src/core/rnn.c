/*
 * rnn.c — GRU and LSTM cells (PyTorch gate order and equations, so nn.GRU /
 * nn.LSTM weights map 1:1) and one recurrent layer over a padded batch,
 * forward and backward. The interface and the equations are in rnn.h.
 *
 * Dimension letters: N batch, S sequence length, I input width, H hidden width,
 * G gates (GRU 3: r, z, n; LSTM 4: i, f, g, o). Row-major, last index
 * contiguous. Backward functions accumulate (+=) into gradients.
 *
 * What one step saves per row (at_cell_saved_width values):
 *   GRU  [4H]: r, z, n, hn          (hn = W_hn h + b_hn, before the r ⊙)
 *   LSTM [5H]: i, f, g, o, tanh(c')
 * h_prev (and c_prev) are not saved by the step: the caller keeps them.
 *
 * The layer runs steps k = 0 .. K-1, K = max len[n]. At step k row n is
 * active while k < len[n], at time
 *     t = k               (forward)          t = len[n]-1-k   (reverse)
 * so a reverse row starts at its own last token. Inactive rows copy their
 * state through, so after step K-1 every row holds its own final state.
 * Step-major arrays ([S,N,..], [S+1,N,H]) are indexed by step, not time.
 *
 * saved (at_rnn_layer_saved_size values):
 *   gates [S,N,W]    the cell's per-step saves, W = at_cell_saved_width
 *   hs    [S+1,N,H]  hs[0] = h0 (or 0), hs[k+1] = hidden state after step k
 *   cs    [S+1,N,H]  LSTM only: the same for the cell state
 * scratch (at_rnn_layer_scratch_size values):
 *   xg    [N,S,G*H]  forward: x W_ihᵀ + b_ih for every position (one GEMM);
 *                    backward: dxg, the gradient of the same
 *   xs    [N,G*H]    one step's rows of xg (dxg), gathered by time
 *   cell  [N,G*H]    the step functions' own scratch
 *   dh    [2,N,H]    backward: running dh, ping-pong
 *   dc    [2,N,H]    backward, LSTM: running dc, ping-pong
 *   act   [N] bytes  the step's active mask, rounded up to whole attend_reals
 *
 * Preconditions (the model checks them before calling; these functions have
 * no error path): non-NULL weights, 1 <= len[n] <= S, buffers of the sizes
 * the *_size functions report, and finite x at padding positions (their
 * projections are computed with the rest and multiplied by a zero gradient).
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "core/rnn.h"
#include "core/vmath.h"


int at_cell_gates(attend_cell_kind kind) {
    switch (kind) {
    case ATTEND_CELL_GRU: return 3;
    case ATTEND_CELL_LSTM: return 4;
    }
    return 0;
}

int at_cell_saved_width(attend_cell_kind kind, int H) {
    switch (kind) {
    case ATTEND_CELL_GRU: return 4 * H;
    case ATTEND_CELL_LSTM: return 5 * H;
    }
    return 0;
}

size_t at_cell_scratch_size(attend_cell_kind kind, int N, int H) {
    size_t n;
    if (!at_count(&n, 3, N, at_cell_gates(kind), H)) return 0;
    return n;
}

/* ------------------------------------------------------------- one step */

/* The gate nonlinearities of rows [n0,n1), fused in one pass per row over the
 * two pre-activation halves x [N,G*H] and a [N,G*H] (see at_cell_step_forward). */
AT_KERNEL_VOID(static, cell_gates_forward,
               (attend_cell_kind kind, int H, attend_real *restrict h_out, attend_real *restrict c_out,
                attend_real *restrict saved, const attend_real *restrict xg, size_t xg_stride,
                const attend_real *restrict hg, const attend_real *restrict b_hh, const attend_real *restrict h_prev,
                const attend_real *restrict c_prev, const uint8_t *active, int n0, int n1),
               (kind, H, h_out, c_out, saved, xg, xg_stride, hg, b_hh, h_prev, c_prev, active, n0, n1)) {
    // h_out [N,H], c_out [N,H] (LSTM), saved [N,W], xg [N rows of G*H, xg_stride apart],
    // hg [N,G*H] (h_prev W_hhᵀ, no bias),
    // b_hh [G*H], h_prev [N,H], c_prev [N,H] (LSTM; NULL = zeros), active [N] or NULL
    const int GH = at_cell_gates(kind) * H, W = at_cell_saved_width(kind, H);
    const size_t rowb = (size_t)H * sizeof(attend_real);
    for (int n = n0; n < n1; n++) {
        const attend_real *restrict hp = h_prev + (size_t)n * H; // [H]
        attend_real *restrict ho = h_out + (size_t)n * H;        // [H]
        if (active && !active[n]) { // padding: the state passes through unchanged
            memcpy(ho, hp, rowb);
            if (kind == ATTEND_CELL_LSTM) {
                if (c_prev) memcpy(c_out + (size_t)n * H, c_prev + (size_t)n * H, rowb);
                else memset(c_out + (size_t)n * H, 0, rowb);
            }
            continue;
        }
        const attend_real *restrict x = xg + (size_t)n * xg_stride; // [G*H]
        const attend_real *restrict a = hg + (size_t)n * GH;        // [G*H]
        attend_real *restrict sv = saved + (size_t)n * W;    // [W]
        if (kind == ATTEND_CELL_GRU) {
#pragma omp simd
            for (int j = 0; j < H; j++) {
                attend_real r = at_vsigmoid(x[j] + (a[j] + b_hh[j]));
                attend_real z = at_vsigmoid(x[H + j] + (a[H + j] + b_hh[H + j]));
                attend_real hn = a[2 * H + j] + b_hh[2 * H + j];
                attend_real nn = at_vtanh(x[2 * H + j] + r * hn);
                ho[j] = (1 - z) * nn + z * hp[j];
                sv[j] = r;
                sv[H + j] = z;
                sv[2 * H + j] = nn;
                sv[3 * H + j] = hn;
            }
        } else {
            attend_real *restrict co = c_out + (size_t)n * H; // [H]
            /* c_prev NULL: read a zero row (f ⊙ 0, as PyTorch computes with c0 = 0) */
            if (!c_prev) memset(co, 0, rowb);
            const attend_real *cp = c_prev ? c_prev + (size_t)n * H : co; // [H]
#pragma omp simd
            for (int j = 0; j < H; j++) {
                attend_real i = at_vsigmoid(x[j] + (a[j] + b_hh[j]));
                attend_real f = at_vsigmoid(x[H + j] + (a[H + j] + b_hh[H + j]));
                attend_real g = at_vtanh(x[2 * H + j] + (a[2 * H + j] + b_hh[2 * H + j]));
                attend_real o = at_vsigmoid(x[3 * H + j] + (a[3 * H + j] + b_hh[3 * H + j]));
                attend_real c = f * cp[j] + i * g;
                attend_real tc = at_vtanh(c);
                co[j] = c;
                ho[j] = o * tc;
                sv[j] = i;
                sv[H + j] = f;
                sv[2 * H + j] = g;
                sv[3 * H + j] = o;
                sv[4 * H + j] = tc;
            }
        }
    }
}

/* The gates of one step over rows [lo,hi) (at_parallel_rows' chunks); fused:
 * the chunk's rows of hg first (its share of the whole product of N rows). */
typedef struct {
    const at_cell *cell;
    attend_real *h_out, *c_out, *saved;
    const attend_real *xg;
    size_t xg_stride;
    attend_real *hg;
    const attend_real *h_prev, *c_prev;
    const uint8_t *active;
    int N;
} gates_fwd_job;

static void gates_fwd_rows(void *p, int lo, int hi) {
    const gates_fwd_job *j = p;
    cell_gates_forward(j->cell->kind, j->cell->H, j->h_out, j->c_out, j->saved, j->xg, j->xg_stride, j->hg,
                       j->cell->b_hh, j->h_prev, j->c_prev, j->active, lo, hi);
}

static void step_rows_fused(void *p, int lo, int hi) {
    const gates_fwd_job *j = p;
    const int H = j->cell->H, GH = at_cell_gates(j->cell->kind) * H;
    at_gemm_rows(j->N, 0, 1, hi - lo, GH, H, 1, j->h_prev + (size_t)lo * H, H, j->cell->W_hh, H, j->cell->pk_hh, 0,
                 j->hg + (size_t)lo * GH, GH);
    gates_fwd_rows(p, lo, hi);
}

/* at_cell_step_forward with the rows of xg xg_stride values apart (the layer
 * reads a step's rows in place when they are evenly spaced, instead of
 * gathering them). */
static void cell_step_forward(const at_cell *cell, attend_real *h_out, attend_real *c_out, attend_real *saved,
                              const attend_real *xg, size_t xg_stride, const attend_real *h_prev,
                              const attend_real *c_prev, const uint8_t *active, int N, attend_real *scratch) {
    const int H = cell->H, GH = at_cell_gates(cell->kind) * H;
    /* hg [N,G*H] = h_prev W_hhᵀ; the gates add b_hh (the value a GEMM onto
     * bias rows would round to, without writing the rows first) */
    attend_real *hg = scratch;
    gates_fwd_job j = {cell, h_out, c_out, saved, xg, xg_stride, hg, h_prev, c_prev, active, N};
    if (N >= AT_CELL_FUSE_ROWS && !at_linear_quantized(cell->q_hh, N)) {
        /* fused: each chunk of rows multiplies its rows of h_prev and runs
         * their gates while the rows of hg are in cache (one pass, one
         * fork/join; the float product's bits, by the whole product's path) */
        at_parallel_rows((double)N * GH * (2.0 * H + 8), N, 16, step_rows_fused, &j);
        return;
    }
    at_linear(cell->q_hh, cell->pk_hh, N, GH, H, h_prev, H, cell->W_hh, H, 0, hg, GH);
    at_parallel_rows((double)N * GH * 8, N, 1, gates_fwd_rows, &j);
}

void at_cell_step_forward(const at_cell *cell, attend_real *h_out, attend_real *c_out,
                          attend_real *saved, const attend_real *xg, const attend_real *h_prev,
                          const attend_real *c_prev, const uint8_t *active, int N,
                          attend_real *scratch) {
    // h_out [N,H], c_out [N,H] (LSTM), saved [N,W], xg [N,G*H], h_prev [N,H],
    // c_prev [N,H] (LSTM; NULL = zeros), active [N] or NULL, scratch [N,G*H]
    cell_step_forward(cell, h_out, c_out, saved, xg, (size_t)at_cell_gates(cell->kind) * cell->H, h_prev, c_prev,
                      active, N, scratch);
}

/* The LSTM's gate gradients of one row, d [4H], from dc in d[H..2H) (the
 * forget gate's slot, overwritten); has_c is a constant at each call, so the
 * loop holds no condition. */
static AT_ALWAYS_INLINE void lstm_gates_backward(attend_real *restrict d, const attend_real *restrict dh,
                                                 const attend_real *restrict sv, const attend_real *restrict cp,
                                                 int H, int has_c) {
    // d [4H], dh [H], sv [5H], cp [H] (has_c) or NULL
#pragma omp simd
    for (int j = 0; j < H; j++) {
        attend_real i = sv[j], f = sv[H + j], gg = sv[2 * H + j], o = sv[3 * H + j];
        attend_real tc = sv[4 * H + j], dc = d[H + j];
        // h' = o ⊙ tanh(c')
        attend_real d_o = dh[j] * tc;
        // c' = f ⊙ c + i ⊙ g
        attend_real di = dc * gg, df = has_c ? dc * cp[j] : 0, dg = dc * i;
        // i, f, o = σ(·), g = tanh(·) of xg + hg
        d[j] = di * i * (1 - i);
        d[H + j] = df * f * (1 - f);
        d[2 * H + j] = dg * (1 - gg * gg);
        d[3 * H + j] = d_o * o * (1 - o);
    }
}

/* Backward of the gate nonlinearities of rows [n0,n1): da [N,G*H] (the
 * pre-activation gradient, 0 on inactive rows), dxg +=, dh_prev +=, dc_prev +=
 * (any of the three may be NULL). */
AT_KERNEL_VOID(static, cell_gates_backward,
               (attend_cell_kind kind, int H, attend_real *restrict da, attend_real *restrict dxg,
                attend_real *restrict dh_prev, attend_real *restrict dc_prev, const attend_real *restrict dh_out,
                const attend_real *restrict dc_out, const attend_real *restrict saved,
                const attend_real *restrict h_prev, const attend_real *restrict c_prev, const uint8_t *active,
                int n0, int n1),
               (kind, H, da, dxg, dh_prev, dc_prev, dh_out, dc_out, saved, h_prev, c_prev, active, n0, n1)) {
    const int GH = at_cell_gates(kind) * H, W = at_cell_saved_width(kind, H);
    for (int n = n0; n < n1; n++) {
        attend_real *restrict d = da + (size_t)n * GH;                       // [G*H]
        const attend_real *restrict dh = dh_out + (size_t)n * H;            // [H]
        attend_real *restrict dhp = dh_prev ? dh_prev + (size_t)n * H : NULL; // [H]
        if (active && !active[n]) {
            // forward: h_out = h_prev, c_out = c_prev (passed through)
            memset(d, 0, (size_t)GH * sizeof *d);
            if (dhp) {
#pragma omp simd
                for (int j = 0; j < H; j++) dhp[j] += dh[j];
            }
            if (kind == ATTEND_CELL_LSTM && dc_prev && dc_out) {
                attend_real *restrict dcp = dc_prev + (size_t)n * H;
                const attend_real *restrict dco = dc_out + (size_t)n * H;
#pragma omp simd
                for (int j = 0; j < H; j++) dcp[j] += dco[j];
            }
            continue;
        }
        const attend_real *restrict sv = saved + (size_t)n * W; // [W]
        if (kind == ATTEND_CELL_GRU) {
            const attend_real *restrict hp = h_prev + (size_t)n * H; // [H]
#pragma omp simd
            for (int j = 0; j < H; j++) {
                attend_real r = sv[j], z = sv[H + j], nn = sv[2 * H + j], hn = sv[3 * H + j];
                // h' = (1−z) ⊙ n + z ⊙ h
                attend_real dn = dh[j] * (1 - z);
                attend_real dz = dh[j] * (hp[j] - nn);
                // n = tanh(xn + r ⊙ hn)
                attend_real dan = dn * (1 - nn * nn);
                attend_real dr = dan * hn;
                // z = σ(xz + hz), r = σ(xr + hr)
                d[j] = dr * r * (1 - r);
                d[H + j] = dz * z * (1 - z);
                d[2 * H + j] = dan * r; // the hidden side hn enters as r ⊙ hn
            }
            if (dhp) {
#pragma omp simd
                for (int j = 0; j < H; j++) dhp[j] += dh[j] * sv[H + j];
            }
            if (dxg) {
                attend_real *restrict dx = dxg + (size_t)n * GH; // [G*H]
#pragma omp simd
                for (int j = 0; j < 2 * H; j++) dx[j] += d[j];
#pragma omp simd
                for (int j = 0; j < H; j++) {
                    attend_real nn = sv[2 * H + j];
                    dx[2 * H + j] += dh[j] * (1 - sv[H + j]) * (1 - nn * nn); // dan
                }
            }
        } else {
            const attend_real *restrict cp = c_prev ? c_prev + (size_t)n * H : NULL;   // [H]
            const attend_real *restrict dco = dc_out ? dc_out + (size_t)n * H : NULL;  // [H]
            attend_real *restrict dcp = dc_prev ? dc_prev + (size_t)n * H : NULL;      // [H]
            /* dc, the gradient reaching c', first into d[H..2H) (the forget
             * gate's slot), so that no loop holds a condition */
            attend_real *restrict dcv = d + H; // [H]
            if (dco) {
#pragma omp simd
                for (int j = 0; j < H; j++) {
                    attend_real o = sv[3 * H + j], tc = sv[4 * H + j];
                    dcv[j] = dco[j] + dh[j] * o * (1 - tc * tc);
                }
            } else {
#pragma omp simd
                for (int j = 0; j < H; j++) {
                    attend_real o = sv[3 * H + j], tc = sv[4 * H + j];
                    dcv[j] = 0 + dh[j] * o * (1 - tc * tc);
                }
            }
            if (dcp) {
#pragma omp simd
                for (int j = 0; j < H; j++) dcp[j] += dcv[j] * sv[H + j];
            }
            if (cp) lstm_gates_backward(d, dh, sv, cp, H, 1);
            else lstm_gates_backward(d, dh, sv, NULL, H, 0);
            if (dxg) {
                attend_real *restrict dx = dxg + (size_t)n * GH; // [G*H]
#pragma omp simd
                for (int k = 0; k < GH; k++) dx[k] += d[k];
            }
        }
    }
}

typedef struct {
    const at_cell *cell;
    attend_real *da, *dxg, *dh_prev, *dc_prev;
    const attend_real *dh_out, *dc_out, *saved, *h_prev, *c_prev;
    const uint8_t *active;
} gates_bwd_job;

static void gates_bwd_rows(void *p, int lo, int hi) {
    const gates_bwd_job *j = p;
    cell_gates_backward(j->cell->kind, j->cell->H, j->da, j->dxg, j->dh_prev, j->dc_prev, j->dh_out, j->dc_out,
                        j->saved, j->h_prev, j->c_prev, j->active, lo, hi);
}

void at_cell_step_backward(const at_cell *cell, const at_cell_grads *g, attend_real *dxg,
                           attend_real *dh_prev, attend_real *dc_prev, const attend_real *dh_out,
                           const attend_real *dc_out, const attend_real *saved,
                           const attend_real *h_prev, const attend_real *c_prev,
                           const uint8_t *active, int N, attend_real *scratch) {
    // dxg [N,G*H] +=, dh_prev [N,H] +=, dc_prev [N,H] += (LSTM), dh_out [N,H],
    // dc_out [N,H] (LSTM; NULL = zeros), saved [N,W], h_prev [N,H],
    // c_prev [N,H] (LSTM; NULL = zeros), active [N] or NULL, scratch [N,G*H].
    // dxg, dh_prev, dc_prev may be NULL (not needed).
    const int H = cell->H, GH = at_cell_gates(cell->kind) * H;
    attend_real *da = scratch; // [N,G*H] gradient of the pre-activations xg + hg
    gates_bwd_job j = {cell, da, dxg, dh_prev, dc_prev, dh_out, dc_out, saved, h_prev, c_prev, active};
    at_parallel_rows((double)N * GH * 4, N, 1, gates_bwd_rows, &j);
    // hg = h_prev W_hhᵀ + b_hh  (inactive rows of da are 0)
    if (dh_prev) at_gemm_w(0, 0, N, H, GH, 1, da, GH, cell->W_hh, H, cell->pk_hh_dx, 1, dh_prev, H);
    if (g && g->W_hh) at_gemm(1, 0, GH, H, N, 1, da, GH, h_prev, H, 1, g->W_hh, H);
    if (g && g->b_hh) at_rows_sum(g->b_hh, da, N, GH);
}

/* ----------------------------------------------------------------- layer */

/* Sizes of saved and scratch (attend_real values) for a layer; 0 when a dim
 * is < 1, the kind is unknown, or a count overflows size_t or (for the
 * dimensions handed to at_gemm) int. */
static int layer_sizes(attend_cell_kind kind, int N, int S, int H, size_t *saved, size_t *scratch) {
    int G = at_cell_gates(kind);
    if (G == 0 || N < 1 || S < 1 || H < 1 || S == INT_MAX || H > INT_MAX / 5) return 0;
    size_t ns, gates, states, xg, steps, tmp;
    int nstates = kind == ATTEND_CELL_LSTM ? 2 : 1;
    if (!at_count(&ns, 2, N, S) || ns > INT_MAX) return 0;
    if (!at_count(&gates, 3, S, N, at_cell_saved_width(kind, H))) return 0;
    if (!at_count(&states, 4, nstates, S + 1, N, H)) return 0;
    if (!at_add_size(gates, states, saved)) return 0;
    if (!at_count(&xg, 4, N, S, G, H) || !at_count(&steps, 4, 2, N, G, H)) return 0;
    if (!at_count(&tmp, 4, 2, nstates, N, H)) return 0;
    size_t act = ((size_t)N + sizeof(attend_real) - 1) / sizeof(attend_real);
    if (!at_add_size(xg, steps, scratch) || !at_add_size(*scratch, tmp, scratch) ||
        !at_add_size(*scratch, act, scratch))
        return 0;
    if (*saved > SIZE_MAX / sizeof(attend_real) || *scratch > SIZE_MAX / sizeof(attend_real)) return 0;
    return 1;
}

size_t at_rnn_layer_saved_size(attend_cell_kind kind, int N, int S, int H) {
    size_t saved, scratch;
    return layer_sizes(kind, N, S, H, &saved, &scratch) ? saved : 0;
}

size_t at_rnn_layer_scratch_size(attend_cell_kind kind, int N, int S, int H) {
    size_t saved, scratch;
    return layer_sizes(kind, N, S, H, &saved, &scratch) ? scratch : 0;
}

/* Pointers into saved and scratch, as laid out at the top of this file. */
typedef struct {
    attend_real *gates; // [S,N,W]
    attend_real *hs;    // [S+1,N,H]
    attend_real *cs;    // [S+1,N,H], NULL for GRU
    attend_real *xg;    // [N,S,G*H]
    attend_real *xs;    // [N,G*H]
    attend_real *cell;  // [N,G*H]
    attend_real *dh;    // [2,N,H]
    attend_real *dc;    // [2,N,H], NULL for GRU
    uint8_t *act;       // [N]
} layer_ws;

static layer_ws layer_layout(const at_cell *cell, attend_real *saved, attend_real *scratch, int N,
                             int S) {
    const int H = cell->H, GH = at_cell_gates(cell->kind) * H;
    const int W = at_cell_saved_width(cell->kind, H);
    const int lstm = cell->kind == ATTEND_CELL_LSTM;
    const size_t NH = (size_t)N * H, NGH = (size_t)N * GH;
    layer_ws ws;
    ws.gates = saved;
    ws.hs = ws.gates + (size_t)S * N * W;
    ws.cs = lstm ? ws.hs + (size_t)(S + 1) * NH : NULL;
    ws.xg = scratch;
    ws.xs = ws.xg + (size_t)S * NGH;
    ws.cell = ws.xs + NGH;
    ws.dh = ws.cell + NGH;
    ws.dc = lstm ? ws.dh + 2 * NH : NULL;
    ws.act = (uint8_t *)(ws.dh + (lstm ? 4 : 2) * NH);
    return ws;
}

/* Marks the rows active at step k and returns the number of them. */
static int step_mask(uint8_t *act, const int32_t *len, int N, int k) {
    int count = 0;
    for (int n = 0; n < N; n++) {
        act[n] = k < len[n];
        count += act[n];
    }
    return count;
}

/* Time position of row n at step k. */
static inline int step_time(int reverse, const int32_t *len, int n, int k) {
    return reverse ? len[n] - 1 - k : k;
}

static int max_len(const int32_t *len, int N) {
    int K = 0;
    for (int n = 0; n < N; n++)
        if (len[n] > K) K = len[n];
    return K;
}

static void layer_forward(const at_cell *cell, int reverse, attend_real *out, int out_stride, attend_real *h_final,
                          attend_real *c_final, attend_real *saved, const attend_real *x, const int32_t *len,
                          const attend_real *h0, const attend_real *c0, int N, int S, attend_real *scratch,
                          int keep_gates);

void at_rnn_layer_forward(const at_cell *cell, int reverse, attend_real *out, int out_stride,
                          attend_real *h_final, attend_real *c_final, attend_real *saved,
                          const attend_real *x, const int32_t *len, const attend_real *h0,
                          const attend_real *c0, int N, int S, attend_real *scratch) {
    layer_forward(cell, reverse, out, out_stride, h_final, c_final, saved, x, len, h0, c0, N, S, scratch, 1);
}

void at_rnn_layer_infer(const at_cell *cell, int reverse, attend_real *out, int out_stride,
                        attend_real *h_final, attend_real *c_final, attend_real *saved,
                        const attend_real *x, const int32_t *len, const attend_real *h0,
                        const attend_real *c0, int N, int S, attend_real *scratch) {
    layer_forward(cell, reverse, out, out_stride, h_final, c_final, saved, x, len, h0, c0, N, S, scratch, 0);
}

static void layer_forward(const at_cell *cell, int reverse, attend_real *out, int out_stride, attend_real *h_final,
                          attend_real *c_final, attend_real *saved, const attend_real *x, const int32_t *len,
                          const attend_real *h0, const attend_real *c0, int N, int S, attend_real *scratch,
                          int keep_gates) {
    // out [N,S,out_stride] (H used per row), h_final [N,H], c_final [N,H] (LSTM, may be NULL),
    // saved [at_rnn_layer_saved_size], x [N,S,I], len [N], h0 [N,H] or NULL,
    // c0 [N,H] or NULL, scratch [at_rnn_layer_scratch_size]
    const int H = cell->H, I = cell->I, GH = at_cell_gates(cell->kind) * H;
    const int W = at_cell_saved_width(cell->kind, H);
    const size_t NH = (size_t)N * H, rowb = (size_t)H * sizeof(attend_real);
    layer_ws ws = layer_layout(cell, saved, scratch, N, S);

    // xg [N*S,G*H] = x [N*S,I] W_ihᵀ + b_ih: one GEMM for every time step
    // (x == NULL: the caller has put xg at the start of scratch)
    if (x) {
        for (size_t r = 0; r < (size_t)N * S; r++)
            memcpy(ws.xg + r * GH, cell->b_ih, (size_t)GH * sizeof(attend_real));
        at_linear(cell->q_ih, cell->pk_ih, N * S, GH, I, x, I, cell->W_ih, I, 1, ws.xg, GH);
    }

    if (h0) memcpy(ws.hs, h0, NH * sizeof(attend_real));
    else memset(ws.hs, 0, NH * sizeof(attend_real));
    if (ws.cs) {
        if (c0) memcpy(ws.cs, c0, NH * sizeof(attend_real));
        else memset(ws.cs, 0, NH * sizeof(attend_real));
    }

    const int K = max_len(len, N);
    int same_len = 1; /* every row at the same time at each step, reversed or not */
    for (int n = 1; n < N; n++) same_len &= len[n] == len[0];
    for (int k = 0; k < K; k++) {
        int count = step_mask(ws.act, len, N, k);
        const attend_real *xk = ws.xs; // this step's rows of xg, GH or S*GH apart
        size_t xk_stride = (size_t)GH;
        if (count == N && (!reverse || same_len)) { /* evenly spaced: read them in place */
            xk = ws.xg + (size_t)step_time(reverse, len, 0, k) * GH;
            xk_stride = (size_t)S * GH;
        } else {
            for (int n = 0; n < N; n++) // gather this step's rows of xg
                if (ws.act[n])
                    memcpy(ws.xs + (size_t)n * GH,
                           ws.xg + ((size_t)n * S + step_time(reverse, len, n, k)) * GH,
                           (size_t)GH * sizeof(attend_real));
        }
        attend_real *h_next = ws.hs + (size_t)(k + 1) * NH; // [N,H]
        cell_step_forward(cell, h_next, ws.cs ? ws.cs + (size_t)(k + 1) * NH : NULL,
                          ws.gates + (size_t)(keep_gates ? k : 0) * N * W, xk, xk_stride, ws.hs + (size_t)k * NH,
                          ws.cs ? ws.cs + (size_t)k * NH : NULL, count == N ? NULL : ws.act, N, ws.cell);
        for (int n = 0; n < N; n++)
            if (ws.act[n])
                memcpy(out + ((size_t)n * S + step_time(reverse, len, n, k)) * out_stride,
                       h_next + (size_t)n * H, rowb);
    }
    for (int n = 0; n < N; n++) // zeros at padding
        for (int t = len[n]; t < S; t++) memset(out + ((size_t)n * S + t) * out_stride, 0, rowb);
    if (h_final) memcpy(h_final, ws.hs + (size_t)K * NH, NH * sizeof(attend_real));
    if (c_final && ws.cs) memcpy(c_final, ws.cs + (size_t)K * NH, NH * sizeof(attend_real));
}

void at_rnn_layer_backward(const at_cell *cell, const at_cell_grads *g, int reverse,
                           attend_real *dx, attend_real *dh0, attend_real *dc0,
                           const attend_real *dout, int out_stride, const attend_real *dh_final,
                           const attend_real *dc_final, const attend_real *saved,
                           const attend_real *x, const int32_t *len, const attend_real *h0,
                           const attend_real *c0, int N, int S, attend_real *scratch) {
    // dx [N,S,I] += (may be NULL), dh0 [N,H] +=, dc0 [N,H] += (may be NULL),
    // dout [N,S,out_stride] (H used per row; may be NULL = zeros), dh_final [N,H],
    // dc_final [N,H] (may be NULL), saved and x, len, h0, c0 as in the forward,
    // scratch [at_rnn_layer_scratch_size]
    (void)h0; // the forward copied h0 and c0 into saved (hs[0], cs[0])
    (void)c0;
    const int H = cell->H, I = cell->I, GH = at_cell_gates(cell->kind) * H;
    const int W = at_cell_saved_width(cell->kind, H);
    const size_t NH = (size_t)N * H, NS = (size_t)N * S;
    // backward only reads saved; the layout helper serves both directions
    layer_ws ws = layer_layout(cell, (attend_real *)saved, scratch, N, S);
    const int lstm = ws.cs != NULL;

    attend_real *dxg = ws.xg; // [N*S,G*H], 0 at padding positions
    memset(dxg, 0, NS * GH * sizeof *dxg);
    attend_real *dh_cur = ws.dh, *dh_nxt = ws.dh + NH; // [N,H] each
    attend_real *dc_cur = ws.dc, *dc_nxt = lstm ? ws.dc + NH : NULL;
    if (dh_final) memcpy(dh_cur, dh_final, NH * sizeof *dh_cur);
    else memset(dh_cur, 0, NH * sizeof *dh_cur);
    if (lstm) {
        if (dc_final) memcpy(dc_cur, dc_final, NH * sizeof *dc_cur);
        else memset(dc_cur, 0, NH * sizeof *dc_cur);
    }

    for (int k = max_len(len, N) - 1; k >= 0; k--) {
        int count = step_mask(ws.act, len, N, k);
        // forward: out[n,t] = h_next[n] for active rows
        if (dout)
            for (int n = 0; n < N; n++) {
                if (!ws.act[n]) continue;
                const attend_real *restrict d =
                    dout + ((size_t)n * S + step_time(reverse, len, n, k)) * out_stride; // [H]
                attend_real *restrict dh = dh_cur + (size_t)n * H;                       // [H]
#pragma omp simd
                for (int j = 0; j < H; j++) dh[j] += d[j];
            }
        memset(ws.xs, 0, (size_t)N * GH * sizeof *ws.xs);
        memset(dh_nxt, 0, NH * sizeof *dh_nxt);
        if (lstm) memset(dc_nxt, 0, NH * sizeof *dc_nxt);
        // forward: at_cell_step_forward(h[k+1], c[k+1], gates[k], xs, h[k], c[k], act)
        at_cell_step_backward(cell, g, ws.xs, dh_nxt, dc_nxt, dh_cur, dc_cur,
                              ws.gates + (size_t)k * N * W, ws.hs + (size_t)k * NH,
                              lstm ? ws.cs + (size_t)k * NH : NULL, count == N ? NULL : ws.act, N,
                              ws.cell);
        // forward: xs[n] = xg[n,t] (gather); each (n,t) is visited once
        for (int n = 0; n < N; n++)
            if (ws.act[n])
                memcpy(dxg + ((size_t)n * S + step_time(reverse, len, n, k)) * GH,
                       ws.xs + (size_t)n * GH, (size_t)GH * sizeof *dxg);
        attend_real *tmp = dh_cur;
        dh_cur = dh_nxt;
        dh_nxt = tmp;
        tmp = dc_cur;
        dc_cur = dc_nxt;
        dc_nxt = tmp;
    }
    // forward: hs[0] = h0, cs[0] = c0
    if (dh0) at_rows_sum(dh0, dh_cur, 1, (int)NH);
    if (lstm && dc0) at_rows_sum(dc0, dc_cur, 1, (int)NH);

    // forward: xg [N*S,G*H] = x [N*S,I] W_ihᵀ + b_ih
    // (dxg stays at the start of scratch for a caller that takes it from there)
    if (dx) at_gemm_w(0, 0, N * S, I, GH, 1, dxg, GH, cell->W_ih, I, cell->pk_ih_dx, 1, dx, I);
    if (g && g->W_ih) at_gemm(1, 0, GH, I, N * S, 1, dxg, GH, x, I, 1, g->W_ih, I);
    if (g && g->b_ih) at_rows_sum(g->b_ih, dxg, NS, GH);
}
