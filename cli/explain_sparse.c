/*
 * explain_sparse.c — `attend explain sparsemax`: the sparse normalisers
 * (sparsemax, Martins & Astudillo 2016; 1.5-entmax, Peters et al. 2019) on
 * score vectors of the seeds' softmax examples, next to the softmax
 * (conventions: cli/explain.c).
 *
 * The library computes the weights (attend_masked_normalize_forward) and the
 * thresholds τ with their support sizes (attend_normalizer_threshold); this
 * file prints them and, as the papers' algorithm asks the reader to, the
 * sorted scores, their running sums and the support test for each k.
 *
 * Dimension letters: S source positions.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attend.h"
#include "cli.h"
#include "explain.h"

/* A score vector [S] of a seed example, printed with unit u. */
typedef struct {
    const char *from;
    attend_real e[MAX_S];
    int S, unit;
} score_case;

/* The weights of each normaliser, the thresholds and supports of one case. */
typedef struct {
    attend_real w[3][MAX_S]; /* [normalizer][S] */
    double tau[3];
    int support[3];
} normalized;

static int normalize_all(const score_case *c, normalized *r) {
    attend_error err = {0};
    for (int nz = 0; nz < 3; nz++) {
        LIB(attend_masked_normalize_forward((attend_normalizer)nz, r->w[nz], c->e, NULL, NULL, 0, 1, 1, c->S, &err));
        r->tau[nz] = attend_normalizer_threshold((attend_normalizer)nz, c->e, c->S, &r->support[nz]);
        if (!isfinite(r->tau[nz])) {
            cli_error("explain", "attend_normalizer_threshold failed");
            return 1;
        }
    }
    return 0;
}

/* "0 (exact zero)" for a weight that is exactly 0, else its value. */
static const char *weight_str(strpool *p, attend_real w) {
    return w == 0 ? "0 (exact zero)" : ex_num(p, w, U_ONE);
}

static void print_weights(const score_case *c, const normalized *r) {
    strpool p = {0};
    printf("  ");
    ex_cell("j", 3);
    ex_cell("score e_j", 21);
    ex_cell("softmax", 18);
    ex_cell("sparsemax", 18);
    printf("entmax15\n");
    for (int j = 0; j < c->S; j++) {
        char idx[8];
        snprintf(idx, sizeof idx, "%d", j + 1);
        printf("  ");
        ex_cell(idx, 3);
        ex_cell(ex_num(&p, c->e[j], c->unit), 21);
        ex_cell(weight_str(&p, r->w[0][j]), 18);
        ex_cell(weight_str(&p, r->w[1][j]), 18);
        printf("%s\n", weight_str(&p, r->w[2][j]));
    }
    int zeros[3] = {0, 0, 0};
    double sum[3] = {0, 0, 0};
    for (int nz = 0; nz < 3; nz++)
        for (int j = 0; j < c->S; j++) {
            zeros[nz] += r->w[nz][j] == 0;
            sum[nz] += r->w[nz][j];
        }
    printf("  sums of the weights: %s, %s, %s; exact zeros: %d, %d, %d\n", ex_dec(&p, sum[0], 6),
           ex_dec(&p, sum[1], 6), ex_dec(&p, sum[2], 6), zeros[0], zeros[1], zeros[2]);
}

/* The sort-based support test of sparsemax, step by step (Martins &
 * Astudillo 2016, Algorithm 1), from the library's τ and support. */
static void print_sparsemax_steps(const score_case *c, const normalized *r) {
    strpool p = {0};
    attend_real z[MAX_S];
    memcpy(z, c->e, (size_t)c->S * sizeof *z);
    for (int i = 1; i < c->S; i++) /* decreasing order, by hand */
        for (int j = i; j > 0 && z[j - 1] < z[j]; j--) {
            attend_real t = z[j];
            z[j] = z[j - 1];
            z[j - 1] = t;
        }
    printf("  sparsemax: sort the scores, z_(1) >= ... >= z_(%d); k is in the support while\n", c->S);
    printf("  1 + k·z_(k) > z_(1) + ... + z_(k):\n");
    printf("    ");
    ex_cell("k", 3);
    ex_cell("z_(k)", 12);
    ex_cell("Σ_{i<=k} z_(i)", 16);
    ex_cell("1 + k·z_(k)", 14);
    printf("in the support\n");
    double cum = 0;
    for (int k = 1; k <= c->S; k++) {
        cum += z[k - 1];
        double lhs = 1 + k * (double)z[k - 1];
        char idx[8];
        snprintf(idx, sizeof idx, "%d", k);
        printf("    ");
        ex_cell(idx, 3);
        ex_cell(ex_dec(&p, z[k - 1], 6), 12);
        ex_cell(ex_dec(&p, cum, 6), 16);
        ex_cell(ex_dec(&p, lhs, 6), 14);
        printf("%s\n", lhs > cum ? "yes" : "no");
    }
    printf("  support k* = %d, τ = (z_(1) + ... + z_(k*) - 1) / k* = %s; w_j = max(e_j - τ, 0)\n",
           r->support[1], ex_dec(&p, r->tau[1], 6));
    printf("  entmax15: w_j = max(e_j/2 - τ, 0)² with τ = %s (Peters et al. 2019, sort-based,\n",
           ex_dec(&p, r->tau[2], 6));
    printf("  alpha = 1.5), support %d of %d; softmax: w_j = exp(e_j - τ) with τ = log Σ exp(e_j) = %s.\n",
           r->support[2], c->S, ex_dec(&p, r->tau[0], 6));
}

int ex_sparsemax(void) {
    const score_case cases[2] = {
        {"seed 004 §12 exercise 1's energies [ln 4, ln 2, 0] (seed004-exercise)",
         {(attend_real)log(4.0), (attend_real)log(2.0), 0},
         3,
         U_LN},
        {"seed 001's dot scores H·s, s = [0.9, 0.1, 0.2] (seed001-dot)", {0.94f, 0.52f, 0.24f}, 3, U_DEC},
    };
    ex_header("sparsemax", "Sparse normalisers (Martins & Astudillo 2016; Peters et al. 2019) on seed scores");
    printf("Each normaliser turns a row of scores into weights that sum to 1; softmax is never 0,\n");
    printf("sparsemax (the Euclidean projection onto the simplex) and entmax15 cut at a threshold τ\n");
    printf("and give exactly 0 below it. Weights: attend_masked_normalize_forward; τ and support:\n");
    printf("attend_normalizer_threshold; `attend train --normalizer NAME` trains with one.\n");
    for (int i = 0; i < 2; i++) {
        normalized r;
        if (normalize_all(&cases[i], &r)) return 1;
        printf("\n%s:\n", cases[i].from);
        print_weights(&cases[i], &r);
        print_sparsemax_steps(&cases[i], &r);
    }
    printf("\nThe same support test leaves all of seed 001's small scores in: sparsemax is not\n");
    printf("scale-invariant (softmax is not either, but never reaches 0), so larger score gaps\n");
    printf("give more exact zeros.\n");
    return 0;
}
