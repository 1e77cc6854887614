/* textbook.c — seed 000's chapter-14 toy (textbook.h). */
#include <math.h>

#include "textbook.h"

const char *const textbook_tokens[TB_S] = {"红色", "钥匙", "。"};

void textbook_embedding(double *e, int x) {
    const double a = log(2.0);
    const double emb[TB_S][TB_D] = {{a, 0}, {-a, a}, {0, -a}}; /* E(红色), E(钥匙), E(。) */
    for (int d = 0; d < TB_D; d++) e[d] = emb[x][d];
}

/* The states h [n,D] and the pre-activations u [n,D] = h_{t-1} + E(x_t) (may
 * be NULL), computed in double. */
static void encode(attend_real *h, double *u, const int *ids, int n) {
    double prev[TB_D] = {0, 0};
    for (int t = 0; t < n; t++) {
        double e[TB_D];
        textbook_embedding(e, ids[t]);
        for (int d = 0; d < TB_D; d++) {
            double x = prev[d] + e[d];
            if (u) u[t * TB_D + d] = x;
            prev[d] = x > 0 ? x : 0;
            h[t * TB_D + d] = (attend_real)prev[d];
        }
    }
}

void textbook_encode(attend_real *h, const int *ids, int n) { encode(h, NULL, ids, n); }

void textbook_encode_backward(double *d_emb, const double *dh, const int *ids, int n) {
    attend_real h[TB_S * TB_D];
    double u[TB_S * TB_D];
    encode(h, u, ids, n);
    double carry[TB_D] = {0, 0}; /* d h_t from h_{t+1} = ReLU(h_t + E(x_{t+1})) */
    for (int t = n - 1; t >= 0; t--)
        for (int d = 0; d < TB_D; d++) {
            double g = dh[t * TB_D + d] + carry[d];     /* d h_t */
            double du = u[t * TB_D + d] > 0 ? g : 0;   /* h_t = ReLU(u_t) */
            d_emb[t * TB_D + d] = du;                  /* u_t = h_{t-1} + E(x_t) */
            carry[d] = du;
        }
}

double textbook_readout(const attend_real *c) { return (double)c[0] + 2 * (double)c[1]; }
