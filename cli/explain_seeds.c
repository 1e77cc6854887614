/*
 * explain_seeds.c — `attend explain` examples of seeds 001 to 004 (dot and
 * multi-head attention, the pointer walk-through, scaling, padding masks;
 * conventions: cli/explain.c).
 *
 * Dimension letters (the project's table, docs/ARCHITECTURE.md): N batch,
 * T query (target) positions, S source positions, D key/query width (in the
 * multi-head example: the embedding width, attend_mha_config's field E), Dv
 * value width; NH heads (attend_mha_config's field H).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "cli.h"
#include "explain.h"

/* ------------------------------------------------------------- seed 001 */

int ex_seed001_dot(void) {
    attend_error err = {0};
    read_result r, r3;
    strpool p = {0};
    static const attend_real H[9] = {1.0f, 0.0f, 0.2f, 0.5f, 0.5f, 0.1f, 0.1f, 0.9f, 0.3f}; /* [3,3] */
    static const attend_real s_cat[3] = {0.9f, 0.1f, 0.2f};
    static const char *const seed_w[3] = {"0.464", "0.305", "0.231"};
    static const char *const words[3] = {"cat", "sat", "mat"};
    ex_header("seed001-dot", "Seed 001, 从零实现 step 3 (一个带数字的例子): Luong dot attention");
    printf("dot_attention(s_close_to_cat, H): scores H·s, softmax, context = weights·H (K = V = H).\n");
    LIB(soft_read(&r, ATTEND_SCORE_DOT, s_cat, H, H, NULL, 3, 3, 3, &err));
    printf("s = %s\n", ex_vec(&p, s_cat, 3, U_DEC, 1));
    table_style ts = {.label = words, .state_unit = U_DEC, .score_unit = U_DEC, .exp_unit = U_DEC,
                      .weight_unit = U_DEC, .ctx_unit = U_DEC, .seed_weight = seed_w};
    ex_print_read_table(&ts, H, 3, 3, 3, NULL, &r);
    printf("  weights rounded to 3 decimals: [%s %s %s] (seed: weights: [0.464 0.305 0.231])\n",
           ex_dec(&p, r.weight[0], 3), ex_dec(&p, r.weight[1], 3), ex_dec(&p, r.weight[2], 3));
    /* The seed's next step, without numbers: move s next to the third state. */
    LIB(soft_read(&r3, ATTEND_SCORE_DOT, H + 6, H, H, NULL, 3, 3, 3, &err));
    printf("The seed then moves the decoder state close to the third encoder state (it gives no\n");
    printf("numbers; here s = h_3 = [0.1, 0.9, 0.3]): the weight moves to position 3.\n");
    ts.seed_weight = NULL;
    ex_print_read_table(&ts, H, 3, 3, 3, NULL, &r3);
    return 0;
}

/* Standard normal from two uniforms (Box–Muller, cosine branch). */
static double normal(attend_rng *rng) {
    double u1 = 1.0 - attend_rng_uniform(rng); /* (0,1] */
    double u2 = attend_rng_uniform(rng);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}

int ex_seed001_mha(void) {
    attend_error err = {0};
    enum { D = 128, NH = 8, N = 2, T = 5, S = 10 };
    attend_mha_config cfg = {.E = D, .H = NH, .bias = 1};
    attend_rng rng;
    int rc = 1;
    size_t nw = (size_t)4 * D * D + 4 * D, nx = (size_t)N * T * D + 2 * (size_t)N * S * D;
    size_t nws = attend_mha_workspace_size(&cfg, N, T, S);
    attend_real *w = malloc(nw * sizeof *w), *x = malloc(nx * sizeof *x);
    attend_real *out = malloc((size_t)N * T * D * sizeof *out);
    attend_real *avg = malloc((size_t)N * T * S * sizeof *avg);
    attend_real *heads = malloc((size_t)N * NH * T * S * sizeof *heads);
    attend_real *ws = malloc((nws ? nws : 1) * sizeof *ws);
    if (!w || !x || !out || !avg || !heads || !ws || !nws) {
        cli_oom("explain", "the example's arrays");
        goto done;
    }
    ex_header("seed001-mha-shapes", "Seed 001, 实战用法: nn.MultiheadAttention shapes");
    printf("mha = nn.MultiheadAttention(embed_dim=128, num_heads=8, batch_first=True), run with\n");
    printf("attend_mha_forward on query [2,5,128], key [2,10,128], value [2,10,128].\n");
    printf("Weights and inputs are deterministic pseudo-random numbers (attend_rng, seed 1):\n");
    printf("projections uniform in ±sqrt(6/(E+E)) (Xavier, as PyTorch's in_proj), biases 0,\n");
    printf("inputs standard normal (Box–Muller), like torch.randn.\n");
    attend_rng_seed(&rng, 1);
    double bound = sqrt(6.0 / (D + D));
    for (size_t i = 0; i < nw; i++) w[i] = (attend_real)((2 * attend_rng_uniform(&rng) - 1) * bound);
    for (size_t i = 4 * (size_t)D * D; i < nw; i++) w[i] = 0; /* biases */
    for (size_t i = 0; i < nx; i++) x[i] = (attend_real)normal(&rng);
    attend_mha_params prm = {.Wq = w, .Wk = w + D * D, .Wv = w + 2 * D * D, .Wo = w + 3 * D * D,
                             .bq = w + 4 * D * D, .bk = w + 4 * D * D + D, .bv = w + 4 * D * D + 2 * D,
                             .bo = w + 4 * D * D + 3 * D};
    const attend_real *q = x, *k = x + (size_t)N * T * D, *v = k + (size_t)N * S * D;
    attend_status st = attend_mha_forward(&cfg, &prm, out, avg, 1, q, k, v, NULL, NULL, 0, N, T, S, ws, nws, &err);
    if (st == ATTEND_OK)
        st = attend_mha_forward(&cfg, &prm, out, heads, 0, q, k, v, NULL, NULL, 0, N, T, S, ws, nws, &err);
    if (st != ATTEND_OK) {
        ex_lib_fail("attend_mha_forward", st, &err);
        goto done;
    }
    int finite = 1;
    for (size_t i = 0; i < (size_t)N * T * D; i++) finite &= isfinite(out[i]) != 0;
    double worst_avg = 0, worst_head = 0;
    for (int r = 0; r < N * T; r++) {
        double sum = 0;
        for (int j = 0; j < S; j++) sum += avg[r * S + j];
        worst_avg = fmax(worst_avg, fabs(sum - 1));
    }
    for (int r = 0; r < N * NH * T; r++) {
        double sum = 0;
        for (int j = 0; j < S; j++) sum += heads[r * S + j];
        worst_head = fmax(worst_head, fabs(sum - 1));
    }
    printf("  output  [N,T,E] = [%d, %d, %d]   (seed: torch.Size([2, 5, 128])); all %d values finite: %s\n",
           N, T, D, N * T * D, finite ? "yes" : "NO");
    printf("  weights [N,T,S] = [%d, %d, %d]    (seed: torch.Size([2, 5, 10])), averaged over the heads\n",
           N, T, S);
    printf("          as PyTorch does by default; per head [N,H,T,S] = [%d, %d, %d, %d]\n", N, NH, T, S);
    printf("  each of the %d averaged weight rows sums to 1 within 1e-6: %s\n", N * T,
           worst_avg <= 1e-6 ? "yes" : "NO");
    printf("  each of the %d per-head weight rows sums to 1 within 1e-6: %s\n", N * NH * T,
           worst_head <= 1e-6 ? "yes" : "NO");
    printf("  first row of the 5x10 alignment matrix (batch 1, query 1, 3 decimals):\n   ");
    for (int j = 0; j < S; j++) printf(" %.3f", (double)avg[j]);
    printf("\n");
    rc = finite && worst_avg <= 1e-6 && worst_head <= 1e-6 ? 0 : 1;
    if (rc) cli_error("explain", "seed001-mha-shapes: a check failed");
done:
    free(w);
    free(x);
    free(out);
    free(avg);
    free(heads);
    free(ws);
    return rc;
}

/* ------------------------------------------------------------- seed 002 */

int ex_seed002_walk(void) {
    attend_error err = {0};
    read_result r;
    strpool p = {0};
    static const attend_real keys[3] = {0.0f, 0.916f, 0.405f};     /* [3,1] */
    static const attend_real vals[6] = {2, 1, 0, 1, 1, 0};          /* [3,2] */
    static const attend_real q[1] = {1};
    static const char *const words[3] = {"猫", "追", "它"};
    static const char *const seed_exp[3] = {"1.000", "2.500", "1.500"};
    static const char *const seed_w[3] = {"0.200", "0.500", "0.300"};
    attend_score_config cfg = {.kind = ATTEND_SCORE_SCALED_DOT, .Dq = 1, .Dk = 1};
    ex_header("seed002-walkthrough", "Seed 002, §8 主走查: one query, three keys, start to finish");
    printf("Self-attention for 它 in 猫 追 它 with 1-d keys (D_k = 1): scaled dot score k·q/sqrt(D_k),\n");
    printf("scale %s (attend_score_effective_scale). Query q = 1; keys and values as the seed sets\n",
           ex_dec(&p, attend_score_effective_scale(&cfg), 6));
    printf("them: 0.916 and 0.405 are ln 2.5 = 0.916291 and ln 1.5 = 0.405465 rounded, so the\n");
    printf("exponentials come out about 7e-4 below the seed's 2.500 and 1.500, while the weights and the\n");
    printf("output agree with the seed's 3 decimals.\n");
    LIB(soft_read(&r, ATTEND_SCORE_SCALED_DOT, q, keys, vals, NULL, 3, 1, 2, &err));
    table_style ts = {.label = words, .state_head = "key k_j", .ctx_formula = "Σ α_j v_j",
                      .state_unit = U_DEC, .score_unit = U_DEC, .exp_unit = U_DEC, .weight_unit = U_DEC,
                      .ctx_unit = U_DEC, .seed_exp = seed_exp, .seed_weight = seed_w};
    printf("Values v(猫) = [2,1], v(追) = [0,1], v(它) = [1,0].\n");
    ex_print_read_table(&ts, keys, 3, 1, 2, NULL, &r);
    printf("  seed: h(它) = 0.200×[2,1] + 0.500×[0,1] + 0.300×[1,0] = [0.7, 0.7]; here [%s, %s]\n",
           ex_dec(&p, r.ctx[0], 3), ex_dec(&p, r.ctx[1], 3));
    return 0;
}

int ex_seed002_pointer(void) {
    attend_error err = {0};
    strpool p = {0};
    enum { S = 3 };
    static const double x[S] = {20, 5, 10};
    attend_real scores[S], logp[S * S]; /* [S], [T=S,S] */
    uint8_t valid[S] = {1, 1, 1};
    int32_t pick[S];
    ex_header("seed002-pointer", "Seed 002, §5 指针网络 (pointer network)");
    printf("A pointer network keeps only the first step: the attention distribution itself is the\n");
    printf("output, a soft pointer to an input position. Seed: input 20, 5, 10 -> output indices\n");
    printf("1, 3, 2 (1-based). Those list the values largest first (20, 10, 5); smallest first\n");
    printf("would be 2, 3, 1.\n");
    printf("Scores here are ILLUSTRATIVE, NOT LEARNED: e_j = ln x_j, so p_j is proportional to x_j.\n");
    printf("A trained pointer network would compute them from its encoder and decoder states.\n");
    printf("Each step: attend_pointer_logprobs_forward (positions already pointed to are excluded\n");
    printf("with the validity mask), then attend_hard_argmax picks the position.\n");
    for (int j = 0; j < S; j++) scores[j] = (attend_real)log(x[j]);
    for (int t = 0; t < S; t++) {
        LIB(attend_pointer_logprobs_forward(logp + t * S, scores, valid, NULL, 0, 1, 1, S, &err));
        LIB(attend_hard_argmax(&pick[t], logp + t * S, 1, 1, S, &err));
        printf("\nstep %d   valid = [%d %d %d]\n  ", t + 1, valid[0], valid[1], valid[2]);
        ex_cell("j", 3);
        ex_cell("x_j", 5);
        ex_cell("score e_j = ln x_j", 20);
        ex_cell("log p_j", 22);
        printf("p_j\n");
        for (int j = 0; j < S; j++) {
            double lp = logp[t * S + j], pj = isinf(lp) ? 0.0 : exp(lp);
            char idx[16], xv[32];
            snprintf(idx, sizeof idx, "%d", j + 1);
            snprintf(xv, sizeof xv, "%.0f", x[j]);
            printf("  ");
            ex_cell(idx, 3);
            ex_cell(xv, 5);
            ex_cell(ex_num(&p, scores[j], U_LN), 20);
            ex_cell(isinf(lp) ? "-inf (excluded)" : ex_num(&p, lp, U_LN), 22);
            printf("%s%s\n", ex_num(&p, pj, U_ONE), j == pick[t] ? "   <- pointer" : "");
        }
        valid[pick[t]] = 0;
    }
    printf("\npointer output (1-based): %d, %d, %d   (seed: 1, 3, 2)\n", pick[0] + 1, pick[1] + 1, pick[2] + 1);
    double loss;
    int count;
    int32_t target[S] = {0, 2, 1};
    LIB(attend_pointer_nll_forward(&loss, &count, logp, target, 1, S, S, &err));
    printf("Training loss for the targets 1, 3, 2 (attend_pointer_nll_forward over the %d steps):\n", count);
    printf("  mean NLL = -(ln(4/7) + ln(2/3) + ln 1) / 3 = %.6f\n", loss);
    return 0;
}

/* ------------------------------------------------------------- seed 003 */

int ex_seed003_scale(void) {
    attend_error err = {0};
    attend_rng rng;
    enum { P = 10000, D = 64, ROWS = 1000, COLS = 10 };
    int rc = 1;
    attend_real *q = malloc((size_t)P * D * sizeof *q), *k = malloc((size_t)P * D * sizeof *k);
    attend_real *kp = malloc((size_t)P * D * sizeof *kp);
    attend_real *raw = malloc(P * sizeof *raw), *scaled = malloc(P * sizeof *scaled);
    attend_real *wts = malloc(P * sizeof *wts);
    if (!q || !k || !kp || !raw || !scaled || !wts) {
        cli_oom("explain", "the example's arrays");
        goto done;
    }
    ex_header("seed003-scale", "Seed 003, §4.2 為什麼要除以 √d_k (why scale the dot product)");
    printf("10000 pairs of 64-d standard normal vectors q, k (attend_rng seed 7, Box–Muller), one\n");
    printf("pair per batch row: attend_scores_forward with N = 10000, T = S = 1, D = 64.\n");
    attend_rng_seed(&rng, 7);
    for (size_t i = 0; i < (size_t)P * D; i++) q[i] = (attend_real)normal(&rng);
    for (size_t i = 0; i < (size_t)P * D; i++) k[i] = (attend_real)normal(&rng);
    attend_score_params prm = {0};
    attend_score_config dot = {.kind = ATTEND_SCORE_DOT, .Dq = D, .Dk = D};
    attend_score_config sdot = {.kind = ATTEND_SCORE_SCALED_DOT, .Dq = D, .Dk = D, .scale = 0};
    attend_status st = attend_keys_forward(&dot, &prm, kp, k, P, 1, &err);
    if (st == ATTEND_OK) st = attend_scores_forward(&dot, &prm, raw, NULL, q, kp, P, 1, 1, &err);
    if (st == ATTEND_OK) st = attend_keys_forward(&sdot, &prm, kp, k, P, 1, &err);
    if (st == ATTEND_OK) st = attend_scores_forward(&sdot, &prm, scaled, NULL, q, kp, P, 1, 1, &err);
    if (st != ATTEND_OK) {
        ex_lib_fail("attend_scores_forward", st, &err);
        goto done;
    }
    double m[2] = {0, 0}, sd[2] = {0, 0};
    int beyond20[2] = {0, 0};
    const attend_real *e[2] = {raw, scaled};
    for (int c = 0; c < 2; c++) {
        for (int i = 0; i < P; i++) m[c] += e[c][i];
        m[c] /= P;
        for (int i = 0; i < P; i++) {
            sd[c] += (e[c][i] - m[c]) * (e[c][i] - m[c]);
            beyond20[c] += fabs((double)e[c][i]) > 20;
        }
        sd[c] = sqrt(sd[c] / (P - 1)); /* like torch's .std(): n - 1 */
    }
    printf("  ");
    ex_cell("score", 36);
    ex_cell("mean", 8);
    ex_cell("std (n-1)", 11);
    ex_cell("seed", 16);
    printf("|e| > 20\n");
    const char *names[2] = {"DOT          q·k", "SCALED_DOT   q·k / sqrt(64)"};
    const char *seeds[2] = {"≈ √64 = 8", "≈ 1"};
    for (int c = 0; c < 2; c++) {
        char cnt[32];
        snprintf(cnt, sizeof cnt, "%d of %d", beyond20[c], P);
        printf("  ");
        ex_cell(names[c], 36);
        printf("%-8.3f%-11.3f", fabs(m[c]) < 5e-4 ? 0.0 : m[c], sd[c]);
        ex_cell(seeds[c], 16);
        printf("%s\n", cnt);
    }
    printf("  scale applied by SCALED_DOT (attend_score_effective_scale, scale = 0): %.6f = 1/sqrt(64)\n",
           attend_score_effective_scale(&sdot));
    /* Saturation: softmax over rows of 10 scores (attend_masked_softmax_forward). */
    double top[2] = {0, 0};
    for (int c = 0; c < 2; c++) {
        st = attend_masked_softmax_forward(wts, e[c], NULL, NULL, 0, ROWS, 1, COLS, &err);
        if (st != ATTEND_OK) {
            ex_lib_fail("attend_masked_softmax_forward", st, &err);
            goto done;
        }
        for (int r = 0; r < ROWS; r++) {
            double best = 0;
            for (int j = 0; j < COLS; j++) best = fmax(best, wts[r * COLS + j]);
            top[c] += best / ROWS;
        }
    }
    printf("Softmax over the same scores in %d rows of %d: mean largest weight %.3f unscaled, %.3f\n",
           ROWS, COLS, top[0], top[1]);
    printf("scaled. Unscaled rows are close to one-hot (saturated, tiny gradients); scaled rows are not.\n");
    rc = 0;
done:
    free(q);
    free(k);
    free(kp);
    free(raw);
    free(scaled);
    free(wts);
    return rc;
}

/* ------------------------------------------------------------- seed 004 */

static const attend_real H004[6] = {1, 0, 0, 2, 2, 2}; /* [3,2]: h_1, h_2, h_3 */

/* One row of energies → masked softmax → context (the seed gives the energies,
 * so no score function is involved). */
static void print_energy_table(const attend_real *energy, const attend_real *h, const uint8_t *valid,
                               const attend_real *w, const attend_real *c) {
    read_result r;
    memcpy(r.score, energy, 3 * sizeof *energy);
    memcpy(r.weight, w, 3 * sizeof *w);
    memcpy(r.ctx, c, 2 * sizeof *c);
    table_style ts = {.state_unit = U_ONE, .score_unit = U_LN, .exp_unit = U_ONE, .weight_unit = U_ONE,
                      .ctx_unit = U_ONE};
    ex_print_read_table(&ts, h, 3, 2, 2, valid, &r);
}

int ex_seed004_example(void) {
    attend_error err = {0};
    strpool p = {0};
    attend_real e[3] = {0, (attend_real)log(2.0), (attend_real)log(3.0)};
    attend_real w[3], c[2], wz[3], cz[2];
    const uint8_t pad3[3] = {1, 1, 0};
    ex_header("seed004-example", "Seed 004, §03 用三个源位置手算一次「重新取证」");
    printf("Energies e_t = [0, ln 2, ln 3] are given; source states h_1 = [1,0], h_2 = [0,2],\n");
    printf("h_3 = [2,2]. attend_masked_softmax_forward, then attend_context_forward.\n");
    LIB(attend_masked_softmax_forward(w, e, NULL, NULL, 0, 1, 1, 3, &err));
    LIB(attend_context_forward(c, w, H004, 1, 1, 3, 2, &err));
    print_energy_table(e, H004, NULL, w, c);
    printf("  (the seed writes the weights unreduced, [1/6, 2/6, 3/6]: numerators [1, 2, 3] over 6)\n");
    printf("\nThe third position is padding: exclude it with the validity mask valid = [1 1 0]\n");
    printf("(the library's equivalent of an energy of -inf before the softmax):\n");
    LIB(attend_masked_softmax_forward(w, e, pad3, NULL, 0, 1, 1, 3, &err));
    LIB(attend_context_forward(c, w, H004, 1, 1, 3, 2, &err));
    print_energy_table(e, H004, pad3, w, c);
    /* The wrong order the seed warns about: softmax first, then zero the padding weight. */
    LIB(attend_masked_softmax_forward(wz, e, NULL, NULL, 0, 1, 1, 3, &err));
    wz[2] = 0;
    LIB(attend_context_forward(cz, wz, H004, 1, 1, 3, 2, &err));
    printf("\nWrong order: softmax first, then multiply the padding weight by 0: weights %s\n",
           ex_vec(&p, wz, 3, U_ONE, 1));
    printf("sum to %s < 1 and the context %s shrinks.\n", ex_sym_only(&p, (double)wz[0] + wz[1] + wz[2], U_ONE),
           ex_vec(&p, cz, 2, U_ONE, 1));
    return 0;
}

int ex_seed004_exercise(void) {
    attend_error err = {0};
    strpool p = {0};
    attend_real e[3] = {(attend_real)log(4.0), (attend_real)log(2.0), 0};
    attend_real w[3], c[2], hz[6];
    const uint8_t pad2[3] = {1, 0, 1};
    ex_header("seed004-exercise", "Seed 004, §12 思考题与小练习, exercise 1");
    printf("Energies [ln 4, ln 2, 0] on the same states h_1 = [1,0], h_2 = [0,2], h_3 = [2,2].\n");
    printf("\nNo mask:\n");
    LIB(attend_masked_softmax_forward(w, e, NULL, NULL, 0, 1, 1, 3, &err));
    LIB(attend_context_forward(c, w, H004, 1, 1, 3, 2, &err));
    print_energy_table(e, H004, NULL, w, c);
    printf("\nSecond position is padding, excluded with valid = [1 0 1]:\n");
    LIB(attend_masked_softmax_forward(w, e, pad2, NULL, 0, 1, 1, 3, &err));
    LIB(attend_context_forward(c, w, H004, 1, 1, 3, 2, &err));
    print_energy_table(e, H004, pad2, w, c);
    printf("\nOnly setting the second state to zero (h_2 = [0,0]), no mask:\n");
    memcpy(hz, H004, sizeof hz);
    hz[2] = hz[3] = 0;
    LIB(attend_masked_softmax_forward(w, e, NULL, NULL, 0, 1, 1, 3, &err));
    LIB(attend_context_forward(c, w, hz, 1, 1, 3, 2, &err));
    print_energy_table(e, hz, NULL, w, c);
    printf("Zeroing the state is not masking: the weights stay %s, the zero state still takes\n",
           ex_vec(&p, w, 3, U_ONE, 1));
    printf("%s of the probability mass, and the context is %s instead of the masked one.\n",
           ex_sym_only(&p, w[1], U_ONE), ex_vec(&p, c, 2, U_ONE, 1));
    return 0;
}

