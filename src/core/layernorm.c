/*
 * layernorm.c — layer normalisation over the last dimension (Ba et al. 2016;
 * PyTorch's nn.LayerNorm(C, eps=1e-5)), forward and backward, llm.c style.
 * Sums in double: a row of C values is reduced once per pass.
 *
 * Dimension letters: M rows, C normalised width (core/layernorm.h).
 */
#include <math.h>

#include "core/layernorm.h"

void at_layernorm_forward(attend_real *out, attend_real *mean, attend_real *rstd, const attend_real *x,
                          const attend_real *w, const attend_real *b, int M, int C) {
    // out [M,C], mean [M], rstd [M], x [M,C], w [C], b [C]
    for (int r = 0; r < M; r++) {
        const attend_real *xr = x + (size_t)r * C;
        attend_real *o = out + (size_t)r * C;
        double s = 0;
        for (int i = 0; i < C; i++) s += xr[i];
        double mu = s / C, v = 0;
        for (int i = 0; i < C; i++) {
            double d = xr[i] - mu;
            v += d * d;
        }
        double rs = 1.0 / sqrt(v / C + AT_LAYERNORM_EPS);
        for (int i = 0; i < C; i++) o[i] = (attend_real)(((double)xr[i] - mu) * rs) * w[i] + b[i];
        mean[r] = (attend_real)mu;
        rstd[r] = (attend_real)rs;
    }
}

void at_layernorm_backward(attend_real *dx, attend_real *dw, attend_real *db, const attend_real *dout,
                           const attend_real *x, const attend_real *w, const attend_real *mean,
                           const attend_real *rstd, int M, int C) {
    // dx [M,C] +=, dw [C] +=, db [C] +=, dout [M,C], x [M,C], w [C], mean [M], rstd [M]
    /* forward: xh_i = (x_i - mean) rstd,  out_i = xh_i w_i + b_i
     * ⇒ db_i += dout_i,  dw_i += dout_i xh_i,  with g_i = dout_i w_i:
     *   dx_i += rstd (g_i - mean_k(g_k) - xh_i mean_k(g_k xh_k)) */
    for (int r = 0; r < M; r++) {
        const attend_real *xr = x + (size_t)r * C, *dr = dout + (size_t)r * C;
        attend_real *dxr = dx + (size_t)r * C;
        double mu = mean[r], rs = rstd[r], sg = 0, sgx = 0;
        for (int i = 0; i < C; i++) {
            double xh = ((double)xr[i] - mu) * rs, g = (double)dr[i] * w[i];
            sg += g;
            sgx += g * xh;
            if (db) db[i] += dr[i];
            if (dw) dw[i] += (attend_real)(dr[i] * xh);
        }
        sg /= C;
        sgx /= C;
        for (int i = 0; i < C; i++) {
            double xh = ((double)xr[i] - mu) * rs, g = (double)dr[i] * w[i];
            dxr[i] += (attend_real)(rs * (g - sg - xh * sgx));
        }
    }
}
