/*
 * rnn.h — recurrent cells (GRU, LSTM) and one recurrent layer over a padded
 * batch, forward and backward. Internal to the library (the model uses them);
 * tests include this header directly.
 *
 * PyTorch layout and equations, so weights map 1:1 to nn.GRU / nn.LSTM:
 *   G = 3 gates for GRU (rows r, z, n), G = 4 for LSTM (rows i, f, g, o)
 *   weight_ih [G*H, I], weight_hh [G*H, H], bias_ih [G*H], bias_hh [G*H]
 *   GRU:  r = σ(xr + hr), z = σ(xz + hz), n = tanh(xn + r ⊙ hn), h' = (1−z) ⊙ n + z ⊙ h
 *         where x* = W_i* x + b_i*, h* = W_h* h + b_h*
 *   LSTM: i = σ(·), f = σ(·), g = tanh(·), o = σ(·) of x W_ihᵀ + b_ih + h W_hhᵀ + b_hh,
 *         c' = f ⊙ c + i ⊙ g, h' = o ⊙ tanh(c')
 *
 * Dimension letters: N batch, S sequence length, I input width, H hidden width,
 * G gates. Row-major. Backward functions accumulate (+=) into gradients.
 */
#ifndef ATTEND_RNN_H
#define ATTEND_RNN_H

#include "../internal.h"
#include "quant.h"

/* From this many rows a step's hidden product and gates run fused, split by
 * rows (fewer rows: the product alone, whose columns split over threads). */
#define AT_CELL_FUSE_ROWS 16

typedef struct {
    attend_cell_kind kind;   /* ATTEND_CELL_GRU or ATTEND_CELL_LSTM */
    int I;                   /* input width */
    int H;                   /* hidden width */
    const attend_real *W_ih; /* [G*H, I] */
    const attend_real *W_hh; /* [G*H, H] */
    const attend_real *b_ih; /* [G*H] */
    const attend_real *b_hh; /* [G*H] */
    const at_qweight *q_ih;  /* quantized copies of W_ih / W_hh (inference), or NULL */
    const at_qweight *q_hh;
    const at_packed *pk_ih;  /* W_ihᵀ, W_hhᵀ packed once for x W_ihᵀ, h W_hhᵀ (at_gemm_w), or NULL */
    const at_packed *pk_hh;
    const at_packed *pk_ih_dx; /* W_ih, W_hh packed for the backward's dxg W_ih, da W_hh, or NULL */
    const at_packed *pk_hh_dx;
} at_cell;

typedef struct {
    attend_real *W_ih, *W_hh, *b_ih, *b_hh; /* same shapes; NULL members skipped */
} at_cell_grads;

/* Number of gates G: 3 for GRU, 4 for LSTM. */
int at_cell_gates(attend_cell_kind kind);

/* Values one step saves per batch row for its backward pass. */
int at_cell_saved_width(attend_cell_kind kind, int H);

/* Scratch (attend_real values) one step needs: N*G*H. */
size_t at_cell_scratch_size(attend_cell_kind kind, int N, int H);

/*
 * One step. xg [N,G*H] = x W_ihᵀ + b_ih, precomputed by the caller (one GEMM
 * for all time steps). h_prev [N,H] (and c_prev [N,H] for LSTM; NULL for GRU)
 * → h_out [N,H] (c_out [N,H]). saved [N, at_cell_saved_width] keeps what
 * backward needs. active [N] or NULL: a row with active[n] == 0 copies its
 * state through unchanged (h_out = h_prev, c_out = c_prev), which is how
 * padding is skipped. scratch: at_cell_scratch_size values.
 * h_out may not alias h_prev.
 */
void at_cell_step_forward(const at_cell *cell, attend_real *h_out, attend_real *c_out,
                          attend_real *saved, const attend_real *xg, const attend_real *h_prev,
                          const attend_real *c_prev, const uint8_t *active, int N,
                          attend_real *scratch);

/*
 * Backward of one step: from dh_out [N,H] (and dc_out [N,H] for LSTM, may be
 * NULL meaning zero) accumulates dxg [N,G*H] +=, dh_prev [N,H] +=,
 * dc_prev [N,H] += (LSTM), and the W_hh / b_hh gradients (W_ih and b_ih
 * gradients are the caller's: they follow from dxg with one GEMM). Inactive
 * rows pass dh_out (dc_out) straight to dh_prev (dc_prev).
 */
void at_cell_step_backward(const at_cell *cell, const at_cell_grads *g, attend_real *dxg,
                           attend_real *dh_prev, attend_real *dc_prev, const attend_real *dh_out,
                           const attend_real *dc_out, const attend_real *saved,
                           const attend_real *h_prev, const attend_real *c_prev,
                           const uint8_t *active, int N, attend_real *scratch);

/*
 * One recurrent layer over a padded batch: x [N,S,I] with lengths len [N]
 * (1 <= len[n] <= S). reverse == 0 runs t = 0..len-1; reverse != 0 runs
 * t = len-1..0 for each sequence (starting at its own last token, never at
 * padding). Outputs out[n,t,:] (row stride out_stride >= H, so two directions
 * can write the halves of one [N,S,2H] buffer) for t < len[n], and 0 at padding;
 * h_final [N,H] (c_final [N,H] for LSTM, may be NULL) is each sequence's last
 * state. h0 / c0 [N,H] may be NULL (zeros).
 * The layer saves what backward needs in `saved` (at_rnn_layer_saved_size
 * values) and uses `scratch` (at_rnn_layer_scratch_size values).
 */
size_t at_rnn_layer_saved_size(attend_cell_kind kind, int N, int S, int H);
size_t at_rnn_layer_scratch_size(attend_cell_kind kind, int N, int S, int H);

void at_rnn_layer_forward(const at_cell *cell, int reverse, attend_real *out, int out_stride,
                          attend_real *h_final, attend_real *c_final, attend_real *saved,
                          const attend_real *x, const int32_t *len, const attend_real *h0,
                          const attend_real *c0, int N, int S, attend_real *scratch);

/* at_rnn_layer_forward for inference: every step's gate values go to the
 * first step's slot of saved (nothing to differentiate later), so a decode
 * touches S times less of it; the states and outputs are the same. */
void at_rnn_layer_infer(const at_cell *cell, int reverse, attend_real *out, int out_stride,
                        attend_real *h_final, attend_real *c_final, attend_real *saved,
                        const attend_real *x, const int32_t *len, const attend_real *h0,
                        const attend_real *c0, int N, int S, attend_real *scratch);

/*
 * x may be NULL: then the caller has already written xg [N,S,G*H] =
 * x W_ihᵀ + b_ih at the start of scratch (the model looks the first layer's
 * rows up in a per-token table). Likewise at_rnn_layer_backward leaves
 * dxg [N,S,G*H] (0 at padding) at the start of scratch, so a caller that
 * passes dx = NULL and NULL W_ih / b_ih gradients can finish those itself.
 */

/*
 * Backward of at_rnn_layer_forward: from dout [N,S,*] (row stride out_stride;
 * padding rows ignored), dh_final [N,H] and dc_final [N,H] (either may be
 * NULL) accumulates dx [N,S,I] (may be NULL), dh0 / dc0 [N,H] (may be NULL)
 * and all four parameter gradients. x, len, h0, c0 and saved are the forward's.
 */
void at_rnn_layer_backward(const at_cell *cell, const at_cell_grads *g, int reverse,
                           attend_real *dx, attend_real *dh0, attend_real *dc0,
                           const attend_real *dout, int out_stride, const attend_real *dh_final,
                           const attend_real *dc_final, const attend_real *saved,
                           const attend_real *x, const int32_t *len, const attend_real *h0,
                           const attend_real *c0, int N, int S, attend_real *scratch);

#endif
