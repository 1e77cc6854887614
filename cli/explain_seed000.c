/*
 * explain_seed000.c — `attend explain` examples of seed 000 (chapter 14):
 * its tables, examples and exercises (conventions: cli/explain.c).
 *
 * Dimension letters: S source positions, D state width.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "cli.h"
#include "explain.h"

/* ------------------------------------------------------ seed 000, chapter 14 */

/* The chapter's source sentence and embeddings (chapter 13, restated in 14):
 * E(红色) = [a,0], E(钥匙) = [-a,a], E(。) = [0,-a]. */
typedef struct {
    const char *word;
    const char *role; /* the seed's name for the saved state: 颜色, 钥匙, 句号 */
    double e[2];      /* embedding, in units of a */
} token;

static const token SENTENCE[3] = {
    {"红色", "颜色", {1, 0}},
    {"钥匙", "钥匙", {-1, 1}},
    {"。", "句号", {0, -1}},
};

/* The chapter's toy encoder: h_t = ReLU(h_{t-1} + E(x_t)), h_0 = 0, for the
 * tokens tok [S] of SENTENCE; h [S,2]. */
static void relu_encode(attend_real *h, const int *tok, int S) {
    double prev[2] = {0, 0};
    for (int t = 0; t < S; t++)
        for (int d = 0; d < 2; d++) {
            double x = prev[d] + SENTENCE[tok[t]].e[d] * LN2;
            prev[d] = x > 0 ? x : 0;
            h[t * 2 + d] = (attend_real)prev[d];
        }
}

/* The chapter's diagnostic readout r = c1 + 2·c2. */
static double readout(const attend_real *c) { return (double)c[0] + 2.0 * (double)c[1]; }

static const attend_real Q1[2] = {1, 0}, Q2[2] = {0, 1};

static void print_encoder(const attend_real *h) {
    strpool p = {0};
    printf("Source [红色, 钥匙, 。] through the chapter's ReLU encoder\n");
    printf("h_t = ReLU(h_{t-1} + E(x_t)), h_0 = 0,");
    printf(" with a = ln 2 = %.6f:\n", LN2);
    for (int t = 0; t < 3; t++) {
        attend_real e[2] = {(attend_real)(SENTENCE[t].e[0] * LN2), (attend_real)(SENTENCE[t].e[1] * LN2)};
        printf("  E(%s) = %s  ->  h_%d = %s\n", SENTENCE[t].word, ex_vec(&p, e, 2, U_A, 1), t + 1,
               ex_vec(&p, h + 2 * t, 2, U_A, 1));
    }
}

static int read_full_sentence(read_result *r, const attend_real *q, attend_real *h, const uint8_t *valid,
                              attend_error *err) {
    static const int all[3] = {0, 1, 2};
    relu_encode(h, all, 3);
    return soft_read(r, ATTEND_SCORE_DOT, q, h, h, valid, 3, 2, 2, err) == ATTEND_OK;
}

static const char *const ROLE_LABELS[3] = {"颜色", "钥匙", "句号"};

static const table_style SEED000_STYLE = {
    .label = ROLE_LABELS, .state_unit = U_A, .score_unit = U_A, .exp_unit = U_ONE,
    .weight_unit = U_ONE, .ctx_unit = U_A,
};

int ex_table14_1(void) {
    attend_error err = {0};
    attend_real h[6];
    read_result r;
    ex_header("seed000-table14.1", "Seed 000 (chapter 14), Example 14.1 and Table 14.1");
    if (!read_full_sentence(&r, Q1, h, NULL, &err)) return ex_lib_fail("soft_read", err.status, &err);
    printf("Read the colour back from the computed source states, with the probe query q1 = [1, 0]\n");
    printf("(a given value, not a learned decoder state). Score: unscaled dot e_j = q·h_j\n");
    printf("(attend_scores_forward, DOT); weights: attend_masked_softmax_forward; context:\n");
    printf("attend_context_forward, with the saved states as both keys and values.\n");
    print_encoder(h);
    printf("Table 14.1:\n");
    ex_print_read_table(&SEED000_STYLE, h, 3, 2, 2, NULL, &r);
    printf("The zero score still has exp(0) = 1, so the 句号 state keeps a positive weight.\n");
    return 0;
}

int ex_example14_2(void) {
    attend_error err = {0};
    attend_real h[6];
    read_result r;
    strpool p = {0};
    ex_header("seed000-example14.2", "Seed 000 (chapter 14), Example 14.2 and Figure 14.1");
    printf("Same saved states, second probe query q2 = [0, 1]: the score picks the second coordinate.\n");
    if (!read_full_sentence(&r, Q2, h, NULL, &err)) return ex_lib_fail("soft_read", err.status, &err);
    ex_print_read_table(&SEED000_STYLE, h, 3, 2, 2, NULL, &r);
    printf("Read 1 (q1 = [1, 0]) gave [a/2, a/4]; read 2 gives %s: the states did not change,\n",
           ex_vec(&p, r.ctx, 2, U_A, 1));
    printf("the query did (dynamic access).\n");
    return 0;
}

int ex_blue(void) {
    attend_error err = {0};
    read_result r, red;
    attend_real h_red[6];
    strpool p = {0};
    const attend_real a = (attend_real)LN2;
    const attend_real h[6] = {0, 0, 0, a, 0, 0}; /* [3,2] as the seed gives them */
    ex_header("seed000-blue", "Seed 000 (chapter 14), §14.4: the blue source sequence");
    printf("The blue source sequence's saved states, as the seed gives them: [0,0], [0,a], [0,0].\n");
    printf("Its final state [0,0] equals the red sequence's; read with q1 = [1, 0]:\n");
    LIB(soft_read(&r, ATTEND_SCORE_DOT, Q1, h, h, NULL, 3, 2, 2, &err));
    if (!read_full_sentence(&red, Q1, h_red, NULL, &err)) return ex_lib_fail("soft_read", err.status, &err);
    table_style ts = SEED000_STYLE;
    ts.label = NULL;
    ex_print_read_table(&ts, h, 3, 2, 2, NULL, &r);
    printf("Blue context %s differs from red context %s,\n", ex_vec(&p, r.ctx, 2, U_A, 1),
           ex_vec(&p, red.ctx, 2, U_A, 1));
    printf("although both final encoder states are [0, 0].\n");
    return 0;
}

/* Table 14.2: exclude saved state `removed` (0-based; -1 none) with the validity
 * mask and read with q1. */
static int remove_saved(read_result *r, int removed, attend_real *h, uint8_t *valid, attend_error *err) {
    for (int j = 0; j < 3; j++) valid[j] = (uint8_t)(j != removed);
    return read_full_sentence(r, Q1, h, valid, err);
}

/* Table 14.3: delete input token `removed` (0-based), re-encode the remaining two
 * tokens, read with q1. h [2,2]. */
static int remove_token(read_result *r, int removed, attend_real *h, attend_error *err) {
    int tok[2], n = 0;
    for (int t = 0; t < 3; t++)
        if (t != removed) tok[n++] = t;
    relu_encode(h, tok, 2);
    return soft_read(r, ATTEND_SCORE_DOT, Q1, h, h, NULL, 2, 2, 2, err) == ATTEND_OK;
}

int ex_table14_2(void) {
    attend_error err = {0};
    strpool p = {0};
    read_result r[4];
    attend_real h[6];
    uint8_t valid[3];
    ex_header("seed000-table14.2", "Seed 000 (chapter 14), Example 14.3 and Table 14.2");
    printf("Remove one saved state before reading: query q1 = [1, 0] and the other states fixed.\n");
    printf("The removed position is excluded with the validity mask (valid[j] = 0), so it leaves the\n");
    printf("scores, the denominator and the weighted sum, and the softmax renormalises over the rest.\n");
    printf("Readout (the author's diagnostic, not a learned score): r = c1 + 2·c2.\n");
    for (int c = 0; c < 4; c++) {
        if (!remove_saved(&r[c], c - 1, h, valid, &err)) return ex_lib_fail("soft_read", err.status, &err);
        printf("\n");
        if (c == 0) printf("Removed: none    valid = [1 1 1]\n");
        else
            printf("Removed: %d %s    valid = [%d %d %d]\n", c, ROLE_LABELS[c - 1], valid[0], valid[1], valid[2]);
        ex_print_read_table(&SEED000_STYLE, h, 3, 2, 2, valid, &r[c]);
        printf("  readout r = c1 + 2·c2 = %s\n", ex_num(&p, readout(r[c].ctx), U_A));
    }
    printf("\nTable 14.2 (weights in the original source order; 0 = excluded):\n");
    printf("  ");
    ex_cell("removed", 11);
    ex_cell("weights 颜色, 钥匙, 句号", 26);
    ex_cell("context", 14);
    printf("readout r\n");
    for (int c = 0; c < 4; c++) {
        char what[32];
        if (c == 0) snprintf(what, sizeof what, "none");
        else snprintf(what, sizeof what, "%d %s", c, ROLE_LABELS[c - 1]);
        printf("  ");
        ex_cell(what, 11);
        ex_cell(ex_vec(&p, r[c].weight, 3, U_ONE, 1), 26);
        ex_cell(ex_vec(&p, r[c].ctx, 2, U_A, 1), 14);
        printf("%s\n", ex_sym_only(&p, readout(r[c].ctx), U_A));
    }
    /* Contrast: the wrong way, setting the removed score to 0 instead of excluding it. */
    read_result wrong;
    if (!read_full_sentence(&wrong, Q1, h, NULL, &err)) return ex_lib_fail("soft_read", err.status, &err);
    attend_real zeroed[3] = {0, wrong.score[1], wrong.score[2]};
    LIB(attend_masked_softmax_forward(wrong.weight, zeroed, NULL, NULL, 0, 1, 1, 3, &err));
    printf("\nNot the same as setting the removed score to 0: scores %s give weights\n",
           ex_vec(&p, zeroed, 3, U_A, 1));
    printf("%s, because exp(0) = 1 still enters the denominator.\n", ex_vec(&p, wrong.weight, 3, U_ONE, 1));
    return 0;
}

int ex_table14_3(void) {
    attend_error err = {0};
    strpool p = {0};
    read_result r, saved;
    attend_real h[4], hs[6];
    uint8_t valid[3];
    ex_header("seed000-table14.3", "Seed 000 (chapter 14), Table 14.3");
    printf("Delete an input token and run the ReLU encoder again on the remaining two tokens\n");
    printf("(E(红色) = [a,0], E(钥匙) = [-a,a], E(。) = [0,-a]), then read with q1 = [1, 0].\n");
    for (int t = 0; t < 3; t++) {
        if (!remove_token(&r, t, h, &err)) return ex_lib_fail("soft_read", err.status, &err);
        const char *labels[2];
        for (int j = 0, n = 0; j < 3; j++)
            if (j != t) labels[n++] = SENTENCE[j].word;
        printf("\nDeleted token: %s (%s)   re-encoded states: %s; %s\n", SENTENCE[t].word, SENTENCE[t].role,
               ex_vec(&p, h, 2, U_A, 1), ex_vec(&p, h + 2, 2, U_A, 1));
        table_style ts = SEED000_STYLE;
        ts.label = labels;
        ex_print_read_table(&ts, h, 2, 2, 2, NULL, &r);
        printf("  readout r = c1 + 2·c2 = %s\n", ex_num(&p, readout(r.ctx), U_A));
    }
    printf("\nTable 14.3, with Table 14.2's readout for the same position:\n");
    printf("  ");
    ex_cell("deleted", 10);
    ex_cell("re-encoded states", 21);
    ex_cell("context", 13);
    ex_cell("readout r", 11);
    printf("Table 14.2 r (saved state removed)\n");
    for (int t = 0; t < 3; t++) {
        if (!remove_token(&r, t, h, &err)) return ex_lib_fail("soft_read", err.status, &err);
        if (!remove_saved(&saved, t, hs, valid, &err)) return ex_lib_fail("soft_read", err.status, &err);
        char states[64];
        snprintf(states, sizeof states, "%s; %s", ex_vec(&p, h, 2, U_A, 1), ex_vec(&p, h + 2, 2, U_A, 1));
        double rt = readout(r.ctx), rs = readout(saved.ctx);
        printf("  ");
        ex_cell(SENTENCE[t].role, 10);
        ex_cell(states, 21);
        ex_cell(ex_vec(&p, r.ctx, 2, U_A, 1), 13);
        ex_cell(ex_sym_only(&p, rt, U_A), 11);
        printf("%s%s\n", ex_sym_only(&p, rs, U_A), fabs(rt - rs) > 1e-6 ? "  <- differs" : "  (same)");
    }
    printf("Deleting the token 钥匙 changes the later 。 state to [a,0]; removing only the saved\n");
    printf("钥匙 state does not, so the two interventions disagree on that row.\n");
    return 0;
}

int ex_exercise1(void) {
    attend_error err = {0};
    strpool p = {0};
    attend_real h[6];
    read_result r;
    const attend_real q[2] = {1, 1};
    ex_header("seed000-exercise1", "Seed 000 (chapter 14), §14.9 exercise 1 (answer in §14.10)");
    printf("Another query: q = [1, 1] on the original three states.\n");
    if (!read_full_sentence(&r, q, h, NULL, &err)) return ex_lib_fail("soft_read", err.status, &err);
    ex_print_read_table(&SEED000_STYLE, h, 3, 2, 2, NULL, &r);
    printf("  readout r = c1 + 2·c2 = %s\n", ex_num(&p, readout(r.ctx), U_A));
    printf("The weights sum to 1; the two context coordinates sum to %s, which need not be 1.\n",
           ex_sym_only(&p, (double)r.ctx[0] + r.ctx[1], U_A));
    return 0;
}

int ex_exercise2(void) {
    attend_error err = {0};
    strpool p = {0};
    attend_real h[6], wrong[3];
    read_result r, zero;
    const attend_real q0[2] = {0, 0};
    ex_header("seed000-exercise2", "Seed 000 (chapter 14), §14.9 exercise 2 (answer in §14.10)");
    if (!read_full_sentence(&r, Q1, h, NULL, &err)) return ex_lib_fail("soft_read", err.status, &err);
    double sum_wrong = 0;
    for (int j = 0; j < 3; j++) {
        wrong[j] = (attend_real)(exp((double)r.score[j]) / 3.0);
        sum_wrong += wrong[j];
    }
    printf("The denominator. A reader divides Example 14.1's exponentials [2, 1, 1] by the number of\n");
    printf("positions, 3:\n");
    printf("  wrong weights  exp(e_j) / 3  = %s, summing to %s: not a distribution\n",
           ex_vec(&p, wrong, 3, U_ONE, 1), ex_sym_only(&p, sum_wrong, U_ONE));
    printf("  library        exp(e_j) / Σ  = %s (denominator 2 + 1 + 1 = 4)\n", ex_vec(&p, r.weight, 3, U_ONE, 1));
    printf("With the zero query q = [0, 0] every score is 0 and the denominator really is 3:\n");
    if (!read_full_sentence(&zero, q0, h, NULL, &err)) return ex_lib_fail("soft_read", err.status, &err);
    ex_print_read_table(&SEED000_STYLE, h, 3, 2, 2, NULL, &zero);
    return 0;
}

int ex_exercise3(void) {
    attend_error err = {0};
    strpool p = {0};
    attend_real hs[6], ht[4];
    uint8_t valid[3];
    read_result saved, retok;
    ex_header("seed000-exercise3", "Seed 000 (chapter 14), §14.9 exercise 3 (answer in §14.10)");
    printf("Two ways to delete 钥匙, read with q1 = [1, 0]:\n");
    if (!remove_saved(&saved, 1, hs, valid, &err)) return ex_lib_fail("soft_read", err.status, &err);
    if (!remove_token(&retok, 1, ht, &err)) return ex_lib_fail("soft_read", err.status, &err);
    printf("  remove the saved state   remaining %s, %s   weights %s   context %s\n",
           ex_vec(&p, hs, 2, U_A, 1), ex_vec(&p, hs + 4, 2, U_A, 1), ex_vec(&p, saved.weight, 3, U_ONE, 1),
           ex_vec(&p, saved.ctx, 2, U_A, 1));
    printf("  delete the input token   re-encoded %s, %s  weights %s        context %s\n",
           ex_vec(&p, ht, 2, U_A, 1), ex_vec(&p, ht + 2, 2, U_A, 1), ex_vec(&p, retok.weight, 2, U_ONE, 1),
           ex_vec(&p, retok.ctx, 2, U_A, 1));
    printf("The state that changed is 。's: %s as saved, %s after re-encoding, because no 钥匙\n",
           ex_vec(&p, hs + 4, 2, U_A, 1), ex_vec(&p, ht + 2, 2, U_A, 1));
    printf("embedding cancels the colour coordinate any more.\n");
    return 0;
}

int ex_exercise4(void) {
    attend_error err = {0};
    strpool p = {0};
    attend_real h[6];
    uint8_t valid[3];
    read_result full, r;
    ex_header("seed000-exercise4", "Seed 000 (chapter 14), §14.9 exercise 4 (answer in §14.10)");
    printf("Test the claim \"the highest-weight state has the largest effect\" on the readout\n");
    printf("r = c1 + 2·c2, intervention: remove one saved state (Table 14.2), query q1 = [1, 0].\n");
    if (!remove_saved(&full, -1, h, valid, &err)) return ex_lib_fail("soft_read", err.status, &err);
    double r0 = readout(full.ctx);
    printf("  ");
    ex_cell("state", 8);
    ex_cell("weight α_j", 12);
    ex_cell("r after removal", 17);
    printf("change in r\n");
    for (int j = 0; j < 3; j++) {
        if (!remove_saved(&r, j, h, valid, &err)) return ex_lib_fail("soft_read", err.status, &err);
        printf("  ");
        ex_cell(ROLE_LABELS[j], 8);
        ex_cell(ex_sym_only(&p, full.weight[j], U_ONE), 12);
        ex_cell(ex_sym_only(&p, readout(r.ctx), U_A), 17);
        printf("%s\n", ex_sym_only(&p, readout(r.ctx) - r0, U_A));
    }
    printf("Removing the highest-weight state (颜色, 1/2) leaves r = %s unchanged; removing 钥匙 moves it.\n",
           ex_sym_only(&p, r0, U_A));
    return 0;
}

int ex_exercise5(void) {
    attend_error err = {0};
    attend_rng rng;
    enum { S = 100, T = 4, D = 2 };
    attend_real k[S * D], q[T * D], scores[T * S]; /* [S,D], [T,D], [T,S] */
    attend_score_config cfg = {.kind = ATTEND_SCORE_DOT, .Dq = D, .Dk = D};
    attend_score_params params = {0};
    ex_header("seed000-exercise5", "Seed 000 (chapter 14), §14.6 and §14.9 exercise 5 (answer in §14.10)");
    attend_rng_seed(&rng, 14);
    for (int i = 0; i < S * D; i++) k[i] = (attend_real)attend_rng_uniform(&rng);
    for (int i = 0; i < T * D; i++) q[i] = (attend_real)attend_rng_uniform(&rng);
    /* §14.6: the small example, 3 states of width 2, 4 output steps */
    int s_small = 3;
    LIB(attend_scores_forward(&cfg, &params, scores, NULL, q, k, 1, T, s_small, &err));
    int n_small = 0;
    for (int i = 0; i < T * s_small; i++) n_small += isfinite(scores[i]) != 0;
    printf("Logical storage, assuming 8 bytes per number as the seed does (this build's attend_real\n");
    printf("is %zu bytes), and dot products counted from the library's score matrix [T,S]:\n",
           sizeof(attend_real));
    printf("  §14.6: fixed context 2 numbers = %d bytes; %d saved states x %d = %d numbers = %d bytes;\n",
           2 * 8, s_small, D, s_small * D, s_small * D * 8);
    printf("         attend_scores_forward over %d steps x %d states -> %d dot products\n", T, s_small, n_small);
    LIB(attend_scores_forward(&cfg, &params, scores, NULL, q, k, 1, T, S, &err));
    int n = 0;
    for (int i = 0; i < T * S; i++) n += isfinite(scores[i]) != 0;
    printf("  exercise 5: %d saved states x %d = %d numbers x 8 bytes = %d bytes;\n", S, D, S * D, S * D * 8);
    printf("         attend_scores_forward over %d steps x %d states -> %d dot products\n", T, S, n);
    printf("Each two-dimensional dot product is 2 multiplications and 1 addition. The encoder still\n");
    printf("updates the source states in order and the decoder the target states in order, even\n");
    printf("when the target tokens are known (teacher forcing).\n");
    return 0;
}

int ex_all_masked(void) {
    attend_error err = {0};
    attend_real h[6];
    read_result r;
    const uint8_t none[3] = {0, 0, 0};
    ex_header("seed000-all-masked", "Seed 000 (chapter 14), end of §14.5");
    printf("At least one state must stay readable. Excluding all three positions (valid = [0 0 0])\n");
    printf("leaves no positive denominator; the library reports an error instead of inventing\n");
    printf("all-zero \"probabilities\":\n");
    if (read_full_sentence(&r, Q1, h, none, &err)) {
        cli_error("explain", "a read with every position masked succeeded");
        return 1;
    }
    printf("  %s: %s\n", attend_status_name(err.status), err.msg);
    return err.status == ATTEND_ERR_MASKED_ROW ? 0 : ex_lib_fail("soft_read", err.status, &err);
}

