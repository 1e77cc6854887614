/*
 * trial_textbook.c — `attend trial --textbook`: seed 000's chapter-14 toy
 * (textbook.h: three saved states of a ReLU encoder, dot scores, the read-out
 * r = c_1 + 2 c_2) through the trials of `attend trial`, for the chapter's two
 * queries q1 = [1,0] (例 14.1) and q2 = [0,1] (例 14.2), each an output step:
 *   importance agreement (J&W 4.1): Kendall's tau-b between the attention row
 *     and, over the three tokens, gradient x input |E(x_j) . dr/dE(x_j)|
 *     (attention held constant, as J&W), deletion of the token with the
 *     source re-encoded (Table 14.3's |r' - r|), and removal of the saved
 *     state (Table 14.2's);
 *   adversarial attention (J&W 4.2.2): the row farthest from the model's in
 *     JSD with |r' - r| <= epsilon, by the library's search
 *     (attend_attention_adversary, the one attend_model_adversary runs), and
 *     the exact maximum: r is linear in the weights, so the feasible set is a
 *     slab of the simplex and the convex JSD peaks at one of its vertices;
 *   W&P's uniform baseline: the read-out with weights 1/3.
 * The toy's output is the scalar r, not a distribution: epsilon bounds
 * |r' - r| in r's units (r = a = 0.693 for q1), where a model's trial bounds a
 * total variation. W&P's other tests need training runs and the toy's weights
 * are the chapter's: they do not apply. tools/toy_trial_ref.py recomputes
 * every number independently (PyTorch, SciPy).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attend.h"
#include "cli.h"
#include "textbook.h"

typedef struct {
    const attend_real *h; /* [S,D] the saved states */
    double r0;            /* the read-out under the model's row */
} toy_readout;

/* r under the weights w [S]: the read-out of sum_j w_j h_j, in double. */
static double toy_r(const attend_real *h, const double *w) {
    double c[TB_D] = {0, 0};
    for (int j = 0; j < TB_S; j++)
        for (int d = 0; d < TB_D; d++) c[d] += w[j] * (double)h[j * TB_D + d];
    return c[0] + 2 * c[1];
}

static double toy_distance(void *user, const double *w) {
    const toy_readout *t = user;
    return fabs(toy_r(t->h, w) - t->r0);
}

static double jsd_of(const double *p, const double *q) {
    double js = NAN;
    attend_error err;
    if (attend_divergences(p, q, TB_S, NULL, NULL, &js, &err)) return NAN;
    return js;
}

/* The exact maximum of JSD(a, x) over {x in the simplex: |r(x) - r0| <= eps}
 * into best [S]: r is linear, v_j = r(e_j), so the candidates are the simplex
 * vertices inside the slab and the points where its edges cross r0 +- eps. */
static double toy_exact(const attend_real *h, const double *a, double r0, double eps, double *best) {
    double v[TB_S], x[TB_S], bj = 0;
    for (int j = 0; j < TB_S; j++) {
        for (int k = 0; k < TB_S; k++) x[k] = k == j;
        v[j] = toy_r(h, x);
    }
    memcpy(best, a, sizeof x);
    for (int i = 0; i < TB_S; i++)
        for (int k = i; k < TB_S; k++)
            for (int side = -1; side <= 1; side += 2) {
                double lam = 1;
                if (k == i) {
                    if (side > 0 || fabs(v[i] - r0) > eps) continue;
                } else {
                    if (v[i] == v[k]) continue;
                    lam = (r0 + side * eps - v[k]) / (v[i] - v[k]); /* x = lam e_i + (1 - lam) e_k */
                    if (lam < 0 || lam > 1) continue;
                }
                for (int j = 0; j < TB_S; j++) x[j] = j == i ? lam : j == k ? 1 - lam : 0;
                double js = jsd_of(a, x);
                if (js > bj) bj = js, memcpy(best, x, sizeof x);
            }
    return bj;
}

static void print_row3(const char *label, const double *x) {
    printf("  %-24s %9.6f %9.6f %9.6f", label, x[0], x[1], x[2]);
}

/* tau-b of the values as printed (6 decimals): the chapter's ties are exact
 * (a/3 twice), single-precision rounding would break them. */
static int tau_col(const double *a, const double *imp) {
    double tau, p, x[TB_S], y[TB_S];
    for (int j = 0; j < TB_S; j++) x[j] = round(a[j] * 1e6) / 1e6, y[j] = round(imp[j] * 1e6) / 1e6;
    attend_error err;
    if (attend_kendall_tau_b(x, y, TB_S, &tau, &p, &err)) return cli_lib_fail("trial", &err);
    printf("   %7.4f %7.4f\n", tau, p);
    return 0;
}

static int toy_step(int step, const double *query, const double *eps, int n_eps, long max_evals,
                    attend_adversary_method search) {
    const double a_ln2 = log(2.0);
    attend_score_config cfg = {0};
    cfg.kind = ATTEND_SCORE_DOT;
    cfg.Dq = TB_D;
    cfg.Dk = TB_D;
    attend_score_params sp = {0};
    attend_real q[TB_D] = {(attend_real)query[0], (attend_real)query[1]}, h[TB_S * TB_D], w[TB_S], c[TB_D];
    int all[TB_S] = {0, 1, 2};
    textbook_encode(h, all, TB_S);
    attend_error err = {0};
    attend_real work[64];
    size_t ws = attend_attention_workspace_size(&cfg, 1, 1, TB_S);
    if (ws > sizeof work / sizeof work[0] ||
        attend_attention_forward(&cfg, &sp, c, w, q, h, h, NULL, NULL, 0, 1, 1, TB_S, TB_D, work, ws, &err))
        return cli_lib_fail("trial", &err);
    double alpha[TB_S];
    for (int j = 0; j < TB_S; j++) alpha[j] = (double)w[j];
    double r0 = toy_r(h, alpha);
    printf("step %d, query q%d = [%g, %g] (例 14.%d): weights [%.6f, %.6f, %.6f]  context [%.6f, %.6f]  r = %.6f "
           "= %.4f a\n", step, step, query[0], query[1], step, alpha[0], alpha[1], alpha[2], (double)c[0],
           (double)c[1], r0, r0 / a_ln2);

    /* importance: c = sum_j alpha_j h_j, r = c_1 + 2 c_2, so with the weights
     * held constant d r / d h_j = alpha_j [1, 2]; then through the encoder */
    double dh[TB_S * TB_D], demb[TB_S * TB_D], grad[TB_S], del[TB_S], rem[TB_S];
    for (int j = 0; j < TB_S; j++) dh[j * TB_D] = alpha[j], dh[j * TB_D + 1] = 2 * alpha[j];
    textbook_encode_backward(demb, dh, all, TB_S);
    for (int j = 0; j < TB_S; j++) {
        double e[TB_D];
        textbook_embedding(e, j);
        grad[j] = fabs(e[0] * demb[j * TB_D] + e[1] * demb[j * TB_D + 1]);
        /* delete token j and re-encode (Table 14.3) */
        int ids[TB_S - 1], n = 0;
        for (int t = 0; t < TB_S; t++)
            if (t != j) ids[n++] = t;
        attend_real h2[(TB_S - 1) * TB_D], w2[TB_S - 1], c2[TB_D];
        textbook_encode(h2, ids, n);
        if (attend_attention_forward(&cfg, &sp, c2, w2, q, h2, h2, NULL, NULL, 0, 1, 1, n, TB_D, work, ws, &err))
            return cli_lib_fail("trial", &err);
        del[j] = fabs(textbook_readout(c2) - r0);
        /* remove saved state j, renormalise (Table 14.2) */
        attend_intervention rm = {ATTEND_IV_REMOVE_STATE, j, 0, 0, 0, 0, 0};
        attend_real w3[TB_S];
        if (attend_attention_intervene(&cfg, &sp, c2, w3, q, h, h, TB_S, TB_D, &rm, &err))
            return cli_lib_fail("trial", &err);
        rem[j] = fabs(textbook_readout(c2) - r0);
    }
    printf("  %-24s %9s %9s %9s   %7s %7s\n", "importance", textbook_tokens[0], textbook_tokens[1], textbook_tokens[2],
           "tau-b", "p");
    print_row3("attention", alpha);
    printf("\n");
    print_row3("grad x input", grad);
    if (tau_col(alpha, grad)) return 1;
    print_row3("delete-token |r'-r|", del);
    if (tau_col(alpha, del)) return 1;
    print_row3("remove-state |r'-r|", rem);
    if (tau_col(alpha, rem)) return 1;

    /* adversarial attention: the library's search, and the exact maximum */
    toy_readout tr = {h, r0};
    for (int e = 0; e < n_eps; e++) {
        attend_adversary_options o = {eps[e], search, max_evals, 0, NULL, NULL, 0};
        double adv[TB_S], js = 0, d = 0, ex[TB_S];
        long evals = 0;
        if (attend_attention_adversary(alpha, TB_S, toy_distance, &tr, &o, adv, &js, &d, &evals, &err))
            return cli_lib_fail("trial", &err);
        double xj = toy_exact(h, alpha, r0, eps[e], ex);
        printf("  adversary eps %-8g search JSD %.6f |r'-r| %.6f weights [%.6f, %.6f, %.6f] (%ld evaluations)\n",
               eps[e], js, d, adv[0], adv[1], adv[2], evals);
        printf("  adversary eps %-8g exact  JSD %.6f |r'-r| %.6f weights [%.6f, %.6f, %.6f]\n", eps[e], xj,
               toy_distance(&tr, ex), ex[0], ex[1], ex[2]);
    }

    /* W&P's uniform baseline */
    attend_intervention un = {ATTEND_IV_UNIFORM, 0, 0, 0, 0, 0, 0};
    attend_real wu[TB_S], cu[TB_D];
    if (attend_attention_intervene(&cfg, &sp, cu, wu, q, h, h, TB_S, TB_D, &un, &err))
        return cli_lib_fail("trial", &err);
    double u[TB_S] = {(double)wu[0], (double)wu[1], (double)wu[2]};
    double ru = textbook_readout(cu);
    printf("  uniform weights [%.6f, %.6f, %.6f]  r = %.6f = %.4f a  |r'-r| %.6f  JSD %.6f\n", u[0], u[1], u[2], ru,
           ru / a_ln2, fabs(ru - r0), jsd_of(alpha, u));
    return 0;
}

int trial_textbook(const double *eps, int n_eps, long max_evals, attend_adversary_method search) {
    printf("Seed 000, chapter 14, through the trials: source 红色 钥匙 。, the ReLU encoder\n"
           "h_t = ReLU(h_{t-1} + E(x_t)), E(红色) = [a,0], E(钥匙) = [-a,a], E(。) = [0,-a], a = ln 2;\n"
           "dot scores; the output is the chapter's read-out r = c1 + 2 c2 (a scalar: epsilon bounds\n"
           "|r' - r|, in r's units). The chapter's weights, not trained: W&P's seed, diagnostic and\n"
           "adversarial-training tests do not apply; the uniform baseline does.\n\n");
    const double queries[2][TB_D] = {{1, 0}, {0, 1}};
    for (int s = 0; s < 2; s++) {
        if (s) printf("\n");
        if (toy_step(s + 1, queries[s], eps, n_eps, max_evals, search)) return 1;
    }
    return 0;
}
