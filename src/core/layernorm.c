/*
 * layernorm.c — layer normalisation over the last dimension (Ba et al. 2016;
 * PyTorch's nn.LayerNorm(C, eps=1e-5)), forward and backward, llm.c style.
 * Sums in double: a row of C values is reduced once per pass, in the vector
 * lanes of each instruction-set level (AT_KERNEL, src/core/isa.h).
 *
 * Dimension letters: M rows, C normalised width (core/layernorm.h).
 */
#include <math.h>

#include "core/isa.h"
#include "core/layernorm.h"

/* Rows [r0, r1) of the forward: the mean and the variance summed in double
 * in the vector lanes (#pragma omp simd; the lanes' order is the level's, so
 * the last bits may differ between instruction-set levels, as the softmax's
 * sums do), the normalised value in double. */
AT_KERNEL_VOID(static, layernorm_rows,
               (attend_real *restrict out, attend_real *restrict mean, attend_real *restrict rstd,
                const attend_real *restrict x, const attend_real *restrict w, const attend_real *restrict b, int M,
                int C),
               (out, mean, rstd, x, w, b, M, C)) {
    // out [M,C], mean [M], rstd [M], x [M,C], w [C], b [C]
    for (int r = 0; r < M; r++) {
        const attend_real *restrict xr = x + (size_t)r * C;
        attend_real *restrict o = out + (size_t)r * C;
        double s = 0;
#pragma omp simd reduction(+ : s)
        for (int i = 0; i < C; i++) s += xr[i];
        const double mu = s / C;
        double v = 0;
#pragma omp simd reduction(+ : v)
        for (int i = 0; i < C; i++) {
            const double d = xr[i] - mu;
            v += d * d;
        }
        const double rs = 1.0 / sqrt(v / C + AT_LAYERNORM_EPS);
#pragma omp simd
        for (int i = 0; i < C; i++) o[i] = (attend_real)(((double)xr[i] - mu) * rs) * w[i] + b[i];
        mean[r] = (attend_real)mu;
        rstd[r] = (attend_real)rs;
    }
}

void at_layernorm_forward(attend_real *out, attend_real *mean, attend_real *rstd, const attend_real *x,
                          const attend_real *w, const attend_real *b, int M, int C) {
    // out [M,C], mean [M], rstd [M], x [M,C], w [C], b [C]
    layernorm_rows(out, mean, rstd, x, w, b, M, C);
}

/* The backward's rows: the two row sums in double in the vector lanes, then
 * dx, dw and db elementwise. */
AT_KERNEL_VOID(static, layernorm_backward_rows,
               (attend_real *restrict dx, attend_real *restrict dw, attend_real *restrict db,
                const attend_real *restrict dout, const attend_real *restrict x, const attend_real *restrict w,
                const attend_real *restrict mean, const attend_real *restrict rstd, int M, int C),
               (dx, dw, db, dout, x, w, mean, rstd, M, C)) {
    // dx [M,C] +=, dw [C] += (or NULL), db [C] += (or NULL), dout [M,C], x [M,C], w [C], mean [M], rstd [M]
    /* forward: xh_i = (x_i - mean) rstd,  out_i = xh_i w_i + b_i
     * ⇒ db_i += dout_i,  dw_i += dout_i xh_i,  with g_i = dout_i w_i:
     *   dx_i += rstd (g_i - mean_k(g_k) - xh_i mean_k(g_k xh_k)) */
    for (int r = 0; r < M; r++) {
        const attend_real *restrict xr = x + (size_t)r * C, *restrict dr = dout + (size_t)r * C;
        attend_real *restrict dxr = dx + (size_t)r * C;
        const double mu = mean[r], rs = rstd[r];
        double sg = 0, sgx = 0;
#pragma omp simd reduction(+ : sg, sgx)
        for (int i = 0; i < C; i++) {
            const double xh = ((double)xr[i] - mu) * rs, g = (double)dr[i] * w[i];
            sg += g;
            sgx += g * xh;
        }
        if (db) {
#pragma omp simd
            for (int i = 0; i < C; i++) db[i] += dr[i];
        }
        if (dw) {
#pragma omp simd
            for (int i = 0; i < C; i++) dw[i] += (attend_real)(dr[i] * (((double)xr[i] - mu) * rs));
        }
        sg /= C;
        sgx /= C;
#pragma omp simd
        for (int i = 0; i < C; i++) {
            const double xh = ((double)xr[i] - mu) * rs, g = (double)dr[i] * w[i];
            dxr[i] += (attend_real)(rs * (g - sg - xh * sgx));
        }
    }
}

void at_layernorm_backward(attend_real *dx, attend_real *dw, attend_real *db, const attend_real *dout,
                           const attend_real *x, const attend_real *w, const attend_real *mean,
                           const attend_real *rstd, int M, int C) {
    // dx [M,C] +=, dw [C] +=, db [C] +=, dout [M,C], x [M,C], w [C], mean [M], rstd [M]
    layernorm_backward_rows(dx, dw, db, dout, x, w, mean, rstd, M, C);
}
