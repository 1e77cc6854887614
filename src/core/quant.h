/*
 * quant.h — weights stored as int8 (per-row symmetric scales) or fp16, read by
 * the matrix products of inference with the conversion done in registers.
 * Internal to the library.
 *
 * The products are Y [N,out] = beta Y + X [N,in] Wᵀ with W [out,in] row-major
 * at row stride ldw (a column slice of a wider matrix: W + c0, ldw its width):
 *   I8:  W[o,k] = q[o,k] * scale[o]   (q in [-127,127], scale >= 0)
 *   F16: W[o,k] = IEEE binary16 bits h[o,k] widened to float (exact)
 * Activations and sums stay float32. The I8 product multiplies each row's
 * dot product by its scale after the sum: against the float product of the
 * dequantized weights the result differs only by rounding (summation order),
 * which tests/test_quant.c bounds.
 *
 * Dimension letters: N rows of X and Y, out rows of W, in its columns.
 */
#ifndef ATTEND_QUANT_H
#define ATTEND_QUANT_H

#include <stdint.h>

#include "../internal.h"

/* One quantized matrix [rows, cols] and its float copy (the parameter arena
 * keeps the dequantized values, so every float path computes the same
 * function). */
typedef struct {
    attend_dtype dtype;     /* ATTEND_DTYPE_I8 or ATTEND_DTYPE_F16 */
    int rows, cols;
    const attend_real *f;   /* [rows,cols] the dequantized weights (parameter arena) */
    const int8_t *i8;       /* I8:  [rows,cols] */
    const float *scale;     /* I8:  [rows] */
    const uint16_t *f16;    /* F16: [rows,cols] */
} at_qweight;

/* Products with at most this many rows of X read the quantized weights;
 * larger ones are compute-bound and go to at_gemm on the float copy
 * (docs/PERFORMANCE.md, "Quantized weights"). */
#define AT_QUANT_MAX_ROWS 16

/*
 * Y [N,out] = beta Y + X [N,in] Wᵀ, W [out,in] at row stride ldw: exactly
 * at_gemm_w(0, 1, N, out, in, 1, X, ldx, W, ldw, pk, beta, Y, ldy) (pk: Wᵀ
 * packed once, or NULL) when q is NULL (float weights), in double-precision
 * builds, or for more than AT_QUANT_MAX_ROWS rows; otherwise the same product
 * from q's quantized copy, W being a block of q->f (W = q->f + r0 * q->cols +
 * c0, ldw = q->cols).
 */
void at_linear(const at_qweight *q, const at_packed *pk, int N, int out, int in, const attend_real *X, int ldx,
               const attend_real *W, int ldw, attend_real beta, attend_real *Y, int ldy);

/* 1 when at_linear multiplies N rows from q's quantized copy: an int8 or fp16
 * copy, 1..AT_QUANT_MAX_ROWS rows, AVX2 or AVX-512 (without them the
 * conversions run lane by lane and the float copy is faster), float build. */
int at_linear_quantized(const at_qweight *q, int N);

/* The kernels, at the process's level (at_isa()), threads over rows of W:
 * Y [N,out] = beta Y + X [N,in] Wᵀ with W as above (beta = 0 never reads Y). */
void at_q8_gemm(int N, int out, int in, const float *X, int ldx, const int8_t *W, const float *scale, int ldw,
                float beta, float *Y, int ldy);
void at_f16_gemm(int N, int out, int in, const float *X, int ldx, const uint16_t *W, int ldw, float beta, float *Y,
                 int ldy);
/* The same at a given at_isa_level (capped at what the CPU has), on the
 * calling thread: tests compare every level in one process. */
void at_q8_gemm_level(int level, int N, int out, int in, const float *X, int ldx, const int8_t *W, const float *scale,
                      int ldw, float beta, float *Y, int ldy);
void at_f16_gemm_level(int level, int N, int out, int in, const float *X, int ldx, const uint16_t *W, int ldw,
                       float beta, float *Y, int ldy);

/* binary16 <-> float: round to nearest even (values beyond ±65504 become
 * ±Inf, which callers refuse), and the exact widening. */
uint16_t at_f16_from_float(float x);
float at_f16_to_float(uint16_t h);

/* Quantizes w [n] to q [n] in [-127,127] with scale = max|w| / 127 (0 for an
 * all-zero row, then q = 0); returns the scale. w must be finite. */
float at_q8_quantize_row(int8_t *q, const float *w, int n);

#endif
