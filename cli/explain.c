/*
 * explain.c — `attend explain`: every worked example of the seeds (the five
 * textbook chapters in /work/shared/seeds, 000 … 004), recomputed with the
 * library and printed as tables a learner can follow: scores, exponentials,
 * denominator, weights, context, each headed by the seed and table it comes from.
 *
 * The CLI prints; the library computes. Scores, weights, contexts, log-probabilities
 * and multi-head outputs come from attend_* calls. What this file computes itself is
 * what the chapters ask the reader to compute by hand from those results: exp(e_j)
 * and their sum for the table columns, the chapter's readout r = c1 + 2·c2, counts,
 * a mean and a standard deviation, and the chapter's toy ReLU encoder (seed 000).
 *
 * Numbers are printed with a fixed number of decimals, so the output is the same
 * bytes with the OpenBLAS and the portable GEMM. Where the seed states an exact
 * value, the value is also named exactly ("1/4 = 0.250000", "a/2 = 0.346574"); the
 * name is recognised from the computed number (a small fraction, a fraction of
 * a = ln 2, or the log of a fraction), never typed in, so a wrong result shows.
 *
 * Dimension letters: N batch, T query positions, S source positions, D key/query
 * width, Dv value width, E embed width, H heads.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "cli.h"

#define LN2 0.69314718055994530942 /* a = ln 2, seed 000 */
#define MAX_S 4                    /* source positions in the hand-sized tables */
#define MAX_D 3                    /* widths in the hand-sized tables */

/* ------------------------------------------------------------ formatting */

/* How a number is named beside its decimals. */
enum { U_DEC, U_ONE, U_A, U_LN };

/* Small rotating set of string buffers, local to one table (no global state). */
typedef struct {
    char s[24][200];
    int i;
} strpool;

static char *pool_next(strpool *p) {
    char *b = p->s[p->i];
    p->i = (p->i + 1) % 24;
    b[0] = '\0';
    return b;
}

/* -0.000000 never appears: values within rounding of zero print as 0. */
static double clean(double x) { return fabs(x) < 5e-7 ? 0.0 : x; }

/* p/q with q <= 12 such that p/q·unit equals x to float accuracy; 0 if none. */
static int fraction_of(double x, double unit, long *p, int *q) {
    double y = x / unit;
    if (!isfinite(y) || fabs(y) > 1e6) return 0;
    for (int d = 1; d <= 12; d++) {
        double n = nearbyint(y * d);
        if (fabs(n / d * unit - x) <= 2e-6 * fmax(1.0, fabs(x))) {
            *p = (long)n;
            *q = d;
            return 1;
        }
    }
    return 0;
}

/* Exact name of x in the given unit ("1/4", "2a/3", "ln 3"), or "" when none. */
static void symbol(char *buf, size_t n, double x, int u) {
    long p;
    int q;
    buf[0] = '\0';
    if (u == U_ONE) {
        if (!fraction_of(x, 1.0, &p, &q)) return;
        if (q == 1) snprintf(buf, n, "%ld", p);
        else snprintf(buf, n, "%ld/%d", p, q);
    } else if (u == U_A) {
        if (!fraction_of(x, LN2, &p, &q)) return;
        const char *sign = p < 0 ? "-" : "";
        long m = labs(p);
        if (m == 0) snprintf(buf, n, "0");
        else if (q == 1 && m == 1) snprintf(buf, n, "%sa", sign);
        else if (q == 1) snprintf(buf, n, "%s%lda", sign, m);
        else if (m == 1) snprintf(buf, n, "%sa/%d", sign, q);
        else snprintf(buf, n, "%s%lda/%d", sign, m, q);
    } else if (u == U_LN) {
        if (x == 0) {
            snprintf(buf, n, "0");
            return;
        }
        double r = exp(x);
        for (int d = 1; d <= 12; d++) {
            double m = nearbyint(r * d);
            if (m >= 1 && fabs(m / d - r) <= 1e-5 * r) {
                if (d == 1) snprintf(buf, n, "ln %.0f", m);
                else snprintf(buf, n, "ln(%.0f/%d)", m, d);
                return;
            }
        }
    }
}

/* "1/4 = 0.250000" when x has an exact name in unit u, else "0.250000". */
static const char *num(strpool *p, double x, int u) {
    char *b = pool_next(p);
    char sym[64];
    if (isinf(x)) {
        snprintf(b, sizeof p->s[0], "%s", x < 0 ? "-inf" : "inf");
        return b;
    }
    symbol(sym, sizeof sym, x, u);
    if (sym[0]) snprintf(b, sizeof p->s[0], "%s = %.6f", sym, clean(x));
    else snprintf(b, sizeof p->s[0], "%.6f", clean(x));
    return b;
}

/* Like num, with a chosen number of decimals and no name. */
static const char *dec(strpool *p, double x, int decimals) {
    char *b = pool_next(p);
    snprintf(b, sizeof p->s[0], "%.*f", decimals, fabs(x) < 0.5 * pow(10, -decimals) ? 0.0 : x);
    return b;
}

/* Exact name only ("a/2"); decimals when there is none; U_DEC: the shortest form
 * ("0.916"), for inputs. */
static const char *sym_only(strpool *p, double x, int u) {
    char *b = pool_next(p);
    symbol(b, sizeof p->s[0], x, u);
    if (!b[0] && u == U_DEC) snprintf(b, sizeof p->s[0], "%g", clean(x)); /* an input as written */
    else if (!b[0]) snprintf(b, sizeof p->s[0], "%.6f", clean(x));
    return b;
}

/* "[a/2 = 0.346574, a/4 = 0.173287]" (names and decimals) or "[a/2, a/4]" (names only). */
static const char *vec(strpool *p, const attend_real *x, int n, int u, int names_only) {
    char *b = pool_next(p);
    size_t len = 0, cap = sizeof p->s[0];
    len += (size_t)snprintf(b + len, cap - len, "[");
    for (int i = 0; i < n && len < cap; i++) {
        const char *s = names_only ? sym_only(p, x[i], u) : num(p, x[i], u);
        len += (size_t)snprintf(b + len, cap - len, "%s%s", i ? ", " : "", s);
    }
    if (len < cap) snprintf(b + len, cap - len, "]");
    return b;
}

/* Display width of UTF-8 text: CJK and full-width forms count 2, others 1. */
static int text_width(const char *s) {
    int w = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if ((*c & 0xC0) == 0x80) continue; /* continuation byte */
        w += (*c >= 0xE3 && *c <= 0xE9) || *c == 0xEF ? 2 : 1;
    }
    return w;
}

/* Prints s left-aligned in a column of `width` display cells (at least one space after). */
static void cell(const char *s, int width) {
    int w = text_width(s);
    fputs(s, stdout);
    do putchar(' '); while (++w < width);
}

static void header(const char *name, const char *where) {
    printf("== %s ==  %s\n", name, where);
}

/* ------------------------------------------------------ library plumbing */

static int lib_fail(const char *what, attend_status st, const attend_error *err) {
    fprintf(stderr, "attend explain: %s failed: %s: %s\n", what, attend_status_name(st), err->msg);
    return 1;
}

#define LIB(call)                                                     \
    do {                                                              \
        attend_status st_ = (call);                                   \
        if (st_ != ATTEND_OK) return lib_fail(#call, st_, &err);      \
    } while (0)

/* One query read of S saved states, through the library one stage at a time
 * (the stages the tables show). */
typedef struct {
    attend_real score[MAX_S];  /* [S] e_j */
    attend_real weight[MAX_S]; /* [S] α_j */
    attend_real ctx[MAX_D];    /* [Dv] c */
} read_result;

/* keys → scores → masked softmax → context for one query q [D] against keys
 * k [S,D] and values v [S,Dv]; valid [S] or NULL. */
static attend_status soft_read(read_result *r, attend_score_kind kind, const attend_real *q,
                               const attend_real *k, const attend_real *v, const uint8_t *valid,
                               int S, int D, int Dv, attend_error *err) {
    attend_score_config cfg = {.kind = kind, .Dq = D, .Dk = D};
    attend_score_params params = {0};
    attend_real kp[MAX_S * MAX_D]; /* [S,D] */
    attend_status st = attend_keys_forward(&cfg, &params, kp, k, 1, S, err);
    if (st == ATTEND_OK) st = attend_scores_forward(&cfg, &params, r->score, NULL, q, kp, 1, 1, S, err);
    if (st == ATTEND_OK) st = attend_masked_softmax_forward(r->weight, r->score, valid, NULL, 0, 1, 1, S, err);
    if (st == ATTEND_OK) st = attend_context_forward(r->ctx, r->weight, v, 1, 1, S, Dv, err);
    return st;
}

/* The seed's read table: one row per saved state with its score, exp(score) and
 * weight, then the denominator and the context. labels [S] may be NULL; states
 * k [S,D] are named in state_unit, scores in score_unit. Excluded positions
 * (valid[j] == 0) show no exponential and weight 0. */
typedef struct {
    const char *const *label; /* [S] or NULL */
    const char *state_head;   /* heading of the state column; NULL: "state h_j" */
    const char *ctx_formula;  /* NULL: "Σ α_j h_j" (the states are the values) */
    int state_unit, score_unit, exp_unit, weight_unit, ctx_unit;
    const char *const *seed_exp;    /* [S] the seed's printed exponentials, or NULL */
    const char *const *seed_weight; /* [S] the seed's printed weights, or NULL */
} table_style;

static void print_read_table(const table_style *ts, const attend_real *k, int S, int D, int Dv,
                             const uint8_t *valid, const read_result *r) {
    strpool p = {0};
    int wl = ts->label ? 8 : 0, ws = 8 + 6 * D;
    int wsc = ts->score_unit == U_DEC ? 12 : 21, wx = ts->exp_unit == U_DEC ? 12 : 17;
    printf("  ");
    cell("j", 3);
    if (wl) cell("source", wl);
    cell(ts->state_head ? ts->state_head : "state h_j", ws);
    cell("score e_j", wsc);
    cell("exp(e_j)", ts->seed_exp ? wx + 11 : wx);
    printf("weight α_j = exp(e_j) / Σ\n");
    double denom = 0, wsum = 0;
    for (int j = 0; j < S; j++) {
        int in = !valid || valid[j];
        double e = exp((double)r->score[j]);
        if (in) denom += e;
        wsum += r->weight[j];
        char idx[16];
        snprintf(idx, sizeof idx, "%d", j + 1);
        printf("  ");
        cell(idx, 3);
        if (wl) cell(ts->label[j], wl);
        cell(vec(&p, k + (size_t)j * D, D, ts->state_unit, 1), ws);
        cell(num(&p, r->score[j], ts->score_unit), wsc);
        if (!in) {
            cell("excluded", ts->seed_exp ? wx + 11 : wx);
        } else if (ts->seed_exp) {
            char both[96];
            snprintf(both, sizeof both, "%s (seed %s)", num(&p, e, ts->exp_unit), ts->seed_exp[j]);
            cell(both, wx + 11);
        } else {
            cell(num(&p, e, ts->exp_unit), wx);
        }
        if (ts->seed_weight) printf("%s (seed %s)\n", num(&p, r->weight[j], ts->weight_unit), ts->seed_weight[j]);
        else printf("%s%s\n", num(&p, r->weight[j], ts->weight_unit), in ? "" : "  (excluded by the mask)");
    }
    printf("  denominator Σ exp(e_j) over the included positions = %s\n", num(&p, denom, ts->exp_unit));
    printf("  sum of the weights = %s\n", num(&p, wsum, U_ONE));
    printf("  context c = %s = %s\n", ts->ctx_formula ? ts->ctx_formula : "Σ α_j h_j",
           vec(&p, r->ctx, Dv, ts->ctx_unit, 0));
}

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
        printf("  E(%s) = %s  ->  h_%d = %s\n", SENTENCE[t].word, vec(&p, e, 2, U_A, 1), t + 1,
               vec(&p, h + 2 * t, 2, U_A, 1));
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

static int ex_table14_1(void) {
    attend_error err = {0};
    attend_real h[6];
    read_result r;
    header("seed000-table14.1", "Seed 000 (chapter 14), Example 14.1 and Table 14.1");
    if (!read_full_sentence(&r, Q1, h, NULL, &err)) return lib_fail("soft_read", err.status, &err);
    printf("Read the colour back from the computed source states, with the probe query q1 = [1, 0]\n");
    printf("(a given value, not a learned decoder state). Score: unscaled dot e_j = q·h_j\n");
    printf("(attend_scores_forward, DOT); weights: attend_masked_softmax_forward; context:\n");
    printf("attend_context_forward, with the saved states as both keys and values.\n");
    print_encoder(h);
    printf("Table 14.1:\n");
    print_read_table(&SEED000_STYLE, h, 3, 2, 2, NULL, &r);
    printf("The zero score still has exp(0) = 1, so the 句号 state keeps a positive weight.\n");
    return 0;
}

static int ex_example14_2(void) {
    attend_error err = {0};
    attend_real h[6];
    read_result r;
    strpool p = {0};
    header("seed000-example14.2", "Seed 000 (chapter 14), Example 14.2 and Figure 14.1");
    printf("Same saved states, second probe query q2 = [0, 1]: the score picks the second coordinate.\n");
    if (!read_full_sentence(&r, Q2, h, NULL, &err)) return lib_fail("soft_read", err.status, &err);
    print_read_table(&SEED000_STYLE, h, 3, 2, 2, NULL, &r);
    printf("Read 1 (q1 = [1, 0]) gave [a/2, a/4]; read 2 gives %s: the states did not change,\n",
           vec(&p, r.ctx, 2, U_A, 1));
    printf("the query did (dynamic access).\n");
    return 0;
}

static int ex_blue(void) {
    attend_error err = {0};
    read_result r, red;
    attend_real h_red[6];
    strpool p = {0};
    const attend_real a = (attend_real)LN2;
    const attend_real h[6] = {0, 0, 0, a, 0, 0}; /* [3,2] as the seed gives them */
    header("seed000-blue", "Seed 000 (chapter 14), §14.4: the blue source sequence");
    printf("The blue source sequence's saved states, as the seed gives them: [0,0], [0,a], [0,0].\n");
    printf("Its final state [0,0] equals the red sequence's; read with q1 = [1, 0]:\n");
    LIB(soft_read(&r, ATTEND_SCORE_DOT, Q1, h, h, NULL, 3, 2, 2, &err));
    if (!read_full_sentence(&red, Q1, h_red, NULL, &err)) return lib_fail("soft_read", err.status, &err);
    table_style ts = SEED000_STYLE;
    ts.label = NULL;
    print_read_table(&ts, h, 3, 2, 2, NULL, &r);
    printf("Blue context %s differs from red context %s,\n", vec(&p, r.ctx, 2, U_A, 1),
           vec(&p, red.ctx, 2, U_A, 1));
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

static int ex_table14_2(void) {
    attend_error err = {0};
    strpool p = {0};
    read_result r[4];
    attend_real h[6];
    uint8_t valid[3];
    header("seed000-table14.2", "Seed 000 (chapter 14), Example 14.3 and Table 14.2");
    printf("Remove one saved state before reading: query q1 = [1, 0] and the other states fixed.\n");
    printf("The removed position is excluded with the validity mask (valid[j] = 0), so it leaves the\n");
    printf("scores, the denominator and the weighted sum, and the softmax renormalises over the rest.\n");
    printf("Readout (the author's diagnostic, not a learned score): r = c1 + 2·c2.\n");
    for (int c = 0; c < 4; c++) {
        if (!remove_saved(&r[c], c - 1, h, valid, &err)) return lib_fail("soft_read", err.status, &err);
        printf("\n");
        if (c == 0) printf("Removed: none    valid = [1 1 1]\n");
        else
            printf("Removed: %d %s    valid = [%d %d %d]\n", c, ROLE_LABELS[c - 1], valid[0], valid[1], valid[2]);
        print_read_table(&SEED000_STYLE, h, 3, 2, 2, valid, &r[c]);
        printf("  readout r = c1 + 2·c2 = %s\n", num(&p, readout(r[c].ctx), U_A));
    }
    printf("\nTable 14.2 (weights in the original source order; 0 = excluded):\n");
    printf("  ");
    cell("removed", 11);
    cell("weights 颜色, 钥匙, 句号", 26);
    cell("context", 14);
    printf("readout r\n");
    for (int c = 0; c < 4; c++) {
        char what[32];
        if (c == 0) snprintf(what, sizeof what, "none");
        else snprintf(what, sizeof what, "%d %s", c, ROLE_LABELS[c - 1]);
        printf("  ");
        cell(what, 11);
        cell(vec(&p, r[c].weight, 3, U_ONE, 1), 26);
        cell(vec(&p, r[c].ctx, 2, U_A, 1), 14);
        printf("%s\n", sym_only(&p, readout(r[c].ctx), U_A));
    }
    /* Contrast: the wrong way, setting the removed score to 0 instead of excluding it. */
    read_result wrong;
    if (!read_full_sentence(&wrong, Q1, h, NULL, &err)) return lib_fail("soft_read", err.status, &err);
    attend_real zeroed[3] = {0, wrong.score[1], wrong.score[2]};
    LIB(attend_masked_softmax_forward(wrong.weight, zeroed, NULL, NULL, 0, 1, 1, 3, &err));
    printf("\nNot the same as setting the removed score to 0: scores %s give weights\n",
           vec(&p, zeroed, 3, U_A, 1));
    printf("%s, because exp(0) = 1 still enters the denominator.\n", vec(&p, wrong.weight, 3, U_ONE, 1));
    return 0;
}

static int ex_table14_3(void) {
    attend_error err = {0};
    strpool p = {0};
    read_result r, saved;
    attend_real h[4], hs[6];
    uint8_t valid[3];
    header("seed000-table14.3", "Seed 000 (chapter 14), Table 14.3");
    printf("Delete an input token and run the ReLU encoder again on the remaining two tokens\n");
    printf("(E(红色) = [a,0], E(钥匙) = [-a,a], E(。) = [0,-a]), then read with q1 = [1, 0].\n");
    for (int t = 0; t < 3; t++) {
        if (!remove_token(&r, t, h, &err)) return lib_fail("soft_read", err.status, &err);
        const char *labels[2];
        for (int j = 0, n = 0; j < 3; j++)
            if (j != t) labels[n++] = SENTENCE[j].word;
        printf("\nDeleted token: %s (%s)   re-encoded states: %s; %s\n", SENTENCE[t].word, SENTENCE[t].role,
               vec(&p, h, 2, U_A, 1), vec(&p, h + 2, 2, U_A, 1));
        table_style ts = SEED000_STYLE;
        ts.label = labels;
        print_read_table(&ts, h, 2, 2, 2, NULL, &r);
        printf("  readout r = c1 + 2·c2 = %s\n", num(&p, readout(r.ctx), U_A));
    }
    printf("\nTable 14.3, with Table 14.2's readout for the same position:\n");
    printf("  ");
    cell("deleted", 10);
    cell("re-encoded states", 21);
    cell("context", 13);
    cell("readout r", 11);
    printf("Table 14.2 r (saved state removed)\n");
    for (int t = 0; t < 3; t++) {
        if (!remove_token(&r, t, h, &err)) return lib_fail("soft_read", err.status, &err);
        if (!remove_saved(&saved, t, hs, valid, &err)) return lib_fail("soft_read", err.status, &err);
        char states[64];
        snprintf(states, sizeof states, "%s; %s", vec(&p, h, 2, U_A, 1), vec(&p, h + 2, 2, U_A, 1));
        double rt = readout(r.ctx), rs = readout(saved.ctx);
        printf("  ");
        cell(SENTENCE[t].role, 10);
        cell(states, 21);
        cell(vec(&p, r.ctx, 2, U_A, 1), 13);
        cell(sym_only(&p, rt, U_A), 11);
        printf("%s%s\n", sym_only(&p, rs, U_A), fabs(rt - rs) > 1e-6 ? "  <- differs" : "  (same)");
    }
    printf("Deleting the token 钥匙 changes the later 。 state to [a,0]; removing only the saved\n");
    printf("钥匙 state does not, so the two interventions disagree on that row.\n");
    return 0;
}

static int ex_exercise1(void) {
    attend_error err = {0};
    strpool p = {0};
    attend_real h[6];
    read_result r;
    const attend_real q[2] = {1, 1};
    header("seed000-exercise1", "Seed 000 (chapter 14), §14.9 exercise 1 (answer in §14.10)");
    printf("Another query: q = [1, 1] on the original three states.\n");
    if (!read_full_sentence(&r, q, h, NULL, &err)) return lib_fail("soft_read", err.status, &err);
    print_read_table(&SEED000_STYLE, h, 3, 2, 2, NULL, &r);
    printf("  readout r = c1 + 2·c2 = %s\n", num(&p, readout(r.ctx), U_A));
    printf("The weights sum to 1; the two context coordinates sum to %s, which need not be 1.\n",
           sym_only(&p, (double)r.ctx[0] + r.ctx[1], U_A));
    return 0;
}

static int ex_exercise2(void) {
    attend_error err = {0};
    strpool p = {0};
    attend_real h[6], wrong[3];
    read_result r, zero;
    const attend_real q0[2] = {0, 0};
    header("seed000-exercise2", "Seed 000 (chapter 14), §14.9 exercise 2 (answer in §14.10)");
    if (!read_full_sentence(&r, Q1, h, NULL, &err)) return lib_fail("soft_read", err.status, &err);
    double sum_wrong = 0;
    for (int j = 0; j < 3; j++) {
        wrong[j] = (attend_real)(exp((double)r.score[j]) / 3.0);
        sum_wrong += wrong[j];
    }
    printf("The denominator. A reader divides Example 14.1's exponentials [2, 1, 1] by the number of\n");
    printf("positions, 3:\n");
    printf("  wrong weights  exp(e_j) / 3  = %s, summing to %s: not a distribution\n",
           vec(&p, wrong, 3, U_ONE, 1), sym_only(&p, sum_wrong, U_ONE));
    printf("  library        exp(e_j) / Σ  = %s (denominator 2 + 1 + 1 = 4)\n", vec(&p, r.weight, 3, U_ONE, 1));
    printf("With the zero query q = [0, 0] every score is 0 and the denominator really is 3:\n");
    if (!read_full_sentence(&zero, q0, h, NULL, &err)) return lib_fail("soft_read", err.status, &err);
    print_read_table(&SEED000_STYLE, h, 3, 2, 2, NULL, &zero);
    return 0;
}

static int ex_exercise3(void) {
    attend_error err = {0};
    strpool p = {0};
    attend_real hs[6], ht[4];
    uint8_t valid[3];
    read_result saved, retok;
    header("seed000-exercise3", "Seed 000 (chapter 14), §14.9 exercise 3 (answer in §14.10)");
    printf("Two ways to delete 钥匙, read with q1 = [1, 0]:\n");
    if (!remove_saved(&saved, 1, hs, valid, &err)) return lib_fail("soft_read", err.status, &err);
    if (!remove_token(&retok, 1, ht, &err)) return lib_fail("soft_read", err.status, &err);
    printf("  remove the saved state   remaining %s, %s   weights %s   context %s\n",
           vec(&p, hs, 2, U_A, 1), vec(&p, hs + 4, 2, U_A, 1), vec(&p, saved.weight, 3, U_ONE, 1),
           vec(&p, saved.ctx, 2, U_A, 1));
    printf("  delete the input token   re-encoded %s, %s  weights %s        context %s\n",
           vec(&p, ht, 2, U_A, 1), vec(&p, ht + 2, 2, U_A, 1), vec(&p, retok.weight, 2, U_ONE, 1),
           vec(&p, retok.ctx, 2, U_A, 1));
    printf("The state that changed is 。's: %s as saved, %s after re-encoding, because no 钥匙\n",
           vec(&p, hs + 4, 2, U_A, 1), vec(&p, ht + 2, 2, U_A, 1));
    printf("embedding cancels the colour coordinate any more.\n");
    return 0;
}

static int ex_exercise4(void) {
    attend_error err = {0};
    strpool p = {0};
    attend_real h[6];
    uint8_t valid[3];
    read_result full, r;
    header("seed000-exercise4", "Seed 000 (chapter 14), §14.9 exercise 4 (answer in §14.10)");
    printf("Test the claim \"the highest-weight state has the largest effect\" on the readout\n");
    printf("r = c1 + 2·c2, intervention: remove one saved state (Table 14.2), query q1 = [1, 0].\n");
    if (!remove_saved(&full, -1, h, valid, &err)) return lib_fail("soft_read", err.status, &err);
    double r0 = readout(full.ctx);
    printf("  ");
    cell("state", 8);
    cell("weight α_j", 12);
    cell("r after removal", 17);
    printf("change in r\n");
    for (int j = 0; j < 3; j++) {
        if (!remove_saved(&r, j, h, valid, &err)) return lib_fail("soft_read", err.status, &err);
        printf("  ");
        cell(ROLE_LABELS[j], 8);
        cell(sym_only(&p, full.weight[j], U_ONE), 12);
        cell(sym_only(&p, readout(r.ctx), U_A), 17);
        printf("%s\n", sym_only(&p, readout(r.ctx) - r0, U_A));
    }
    printf("Removing the highest-weight state (颜色, 1/2) leaves r = %s unchanged; removing 钥匙 moves it.\n",
           sym_only(&p, r0, U_A));
    return 0;
}

static int ex_exercise5(void) {
    attend_error err = {0};
    attend_rng rng;
    enum { S = 100, T = 4, D = 2 };
    attend_real k[S * D], q[T * D], scores[T * S]; /* [S,D], [T,D], [T,S] */
    attend_score_config cfg = {.kind = ATTEND_SCORE_DOT, .Dq = D, .Dk = D};
    attend_score_params params = {0};
    header("seed000-exercise5", "Seed 000 (chapter 14), §14.6 and §14.9 exercise 5 (answer in §14.10)");
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

static int ex_all_masked(void) {
    attend_error err = {0};
    attend_real h[6];
    read_result r;
    const uint8_t none[3] = {0, 0, 0};
    header("seed000-all-masked", "Seed 000 (chapter 14), end of §14.5");
    printf("At least one state must stay readable. Excluding all three positions (valid = [0 0 0])\n");
    printf("leaves no positive denominator; the library reports an error instead of inventing\n");
    printf("all-zero \"probabilities\":\n");
    if (read_full_sentence(&r, Q1, h, none, &err)) {
        fprintf(stderr, "attend explain: a read with every position masked succeeded\n");
        return 1;
    }
    printf("  %s: %s\n", attend_status_name(err.status), err.msg);
    return err.status == ATTEND_ERR_MASKED_ROW ? 0 : lib_fail("soft_read", err.status, &err);
}

/* ------------------------------------------------------------- seed 001 */

static int ex_seed001_dot(void) {
    attend_error err = {0};
    read_result r, r3;
    strpool p = {0};
    static const attend_real H[9] = {1.0f, 0.0f, 0.2f, 0.5f, 0.5f, 0.1f, 0.1f, 0.9f, 0.3f}; /* [3,3] */
    static const attend_real s_cat[3] = {0.9f, 0.1f, 0.2f};
    static const char *const seed_w[3] = {"0.464", "0.305", "0.231"};
    static const char *const words[3] = {"cat", "sat", "mat"};
    header("seed001-dot", "Seed 001, 从零实现 step 3 (一个带数字的例子): Luong dot attention");
    printf("dot_attention(s_close_to_cat, H): scores H·s, softmax, context = weights·H (K = V = H).\n");
    LIB(soft_read(&r, ATTEND_SCORE_DOT, s_cat, H, H, NULL, 3, 3, 3, &err));
    printf("s = %s\n", vec(&p, s_cat, 3, U_DEC, 1));
    table_style ts = {.label = words, .state_unit = U_DEC, .score_unit = U_DEC, .exp_unit = U_DEC,
                      .weight_unit = U_DEC, .ctx_unit = U_DEC, .seed_weight = seed_w};
    print_read_table(&ts, H, 3, 3, 3, NULL, &r);
    printf("  weights rounded to 3 decimals: [%s %s %s] (seed: weights: [0.464 0.305 0.231])\n",
           dec(&p, r.weight[0], 3), dec(&p, r.weight[1], 3), dec(&p, r.weight[2], 3));
    /* The seed's next step, without numbers: move s next to the third state. */
    LIB(soft_read(&r3, ATTEND_SCORE_DOT, H + 6, H, H, NULL, 3, 3, 3, &err));
    printf("The seed then moves the decoder state close to the third encoder state (it gives no\n");
    printf("numbers; here s = h_3 = [0.1, 0.9, 0.3]): the weight moves to position 3.\n");
    ts.seed_weight = NULL;
    print_read_table(&ts, H, 3, 3, 3, NULL, &r3);
    return 0;
}

/* Standard normal from two uniforms (Box–Muller, cosine branch). */
static double normal(attend_rng *rng) {
    double u1 = 1.0 - attend_rng_uniform(rng); /* (0,1] */
    double u2 = attend_rng_uniform(rng);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}

static int ex_seed001_mha(void) {
    attend_error err = {0};
    enum { E = 128, H = 8, N = 2, T = 5, S = 10 };
    attend_mha_config cfg = {.E = E, .H = H, .bias = 1};
    attend_rng rng;
    int rc = 1;
    size_t nw = (size_t)4 * E * E + 4 * E, nx = (size_t)N * T * E + 2 * (size_t)N * S * E;
    size_t nws = attend_mha_workspace_size(&cfg, N, T, S);
    attend_real *w = malloc(nw * sizeof *w), *x = malloc(nx * sizeof *x);
    attend_real *out = malloc((size_t)N * T * E * sizeof *out);
    attend_real *avg = malloc((size_t)N * T * S * sizeof *avg);
    attend_real *heads = malloc((size_t)N * H * T * S * sizeof *heads);
    attend_real *ws = malloc((nws ? nws : 1) * sizeof *ws);
    if (!w || !x || !out || !avg || !heads || !ws || !nws) {
        fprintf(stderr, "attend explain: out of memory\n");
        goto done;
    }
    header("seed001-mha-shapes", "Seed 001, 实战用法: nn.MultiheadAttention shapes");
    printf("mha = nn.MultiheadAttention(embed_dim=128, num_heads=8, batch_first=True), run with\n");
    printf("attend_mha_forward on query [2,5,128], key [2,10,128], value [2,10,128].\n");
    printf("Weights and inputs are deterministic pseudo-random numbers (attend_rng, seed 1):\n");
    printf("projections uniform in ±sqrt(6/(E+E)) (Xavier, as PyTorch's in_proj), biases 0,\n");
    printf("inputs standard normal (Box–Muller), like torch.randn.\n");
    attend_rng_seed(&rng, 1);
    double bound = sqrt(6.0 / (E + E));
    for (size_t i = 0; i < nw; i++) w[i] = (attend_real)((2 * attend_rng_uniform(&rng) - 1) * bound);
    for (size_t i = 4 * (size_t)E * E; i < nw; i++) w[i] = 0; /* biases */
    for (size_t i = 0; i < nx; i++) x[i] = (attend_real)normal(&rng);
    attend_mha_params prm = {.Wq = w, .Wk = w + E * E, .Wv = w + 2 * E * E, .Wo = w + 3 * E * E,
                             .bq = w + 4 * E * E, .bk = w + 4 * E * E + E, .bv = w + 4 * E * E + 2 * E,
                             .bo = w + 4 * E * E + 3 * E};
    const attend_real *q = x, *k = x + (size_t)N * T * E, *v = k + (size_t)N * S * E;
    attend_status st = attend_mha_forward(&cfg, &prm, out, avg, 1, q, k, v, NULL, NULL, 0, N, T, S, ws, nws, &err);
    if (st == ATTEND_OK)
        st = attend_mha_forward(&cfg, &prm, out, heads, 0, q, k, v, NULL, NULL, 0, N, T, S, ws, nws, &err);
    if (st != ATTEND_OK) {
        lib_fail("attend_mha_forward", st, &err);
        goto done;
    }
    int finite = 1;
    for (size_t i = 0; i < (size_t)N * T * E; i++) finite &= isfinite(out[i]) != 0;
    double worst_avg = 0, worst_head = 0;
    for (int r = 0; r < N * T; r++) {
        double sum = 0;
        for (int j = 0; j < S; j++) sum += avg[r * S + j];
        worst_avg = fmax(worst_avg, fabs(sum - 1));
    }
    for (int r = 0; r < N * H * T; r++) {
        double sum = 0;
        for (int j = 0; j < S; j++) sum += heads[r * S + j];
        worst_head = fmax(worst_head, fabs(sum - 1));
    }
    printf("  output  [N,T,E] = [%d, %d, %d]   (seed: torch.Size([2, 5, 128])); all %d values finite: %s\n",
           N, T, E, N * T * E, finite ? "yes" : "NO");
    printf("  weights [N,T,S] = [%d, %d, %d]    (seed: torch.Size([2, 5, 10])), averaged over the heads\n",
           N, T, S);
    printf("          as PyTorch does by default; per head [N,H,T,S] = [%d, %d, %d, %d]\n", N, H, T, S);
    printf("  each of the %d averaged weight rows sums to 1 within 1e-6: %s\n", N * T,
           worst_avg <= 1e-6 ? "yes" : "NO");
    printf("  each of the %d per-head weight rows sums to 1 within 1e-6: %s\n", N * H * T,
           worst_head <= 1e-6 ? "yes" : "NO");
    printf("  first row of the 5x10 alignment matrix (batch 1, query 1, 3 decimals):\n   ");
    for (int j = 0; j < S; j++) printf(" %.3f", (double)avg[j]);
    printf("\n");
    rc = finite && worst_avg <= 1e-6 && worst_head <= 1e-6 ? 0 : 1;
    if (rc) fprintf(stderr, "attend explain: seed001-mha-shapes: a check failed\n");
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

static int ex_seed002_walk(void) {
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
    header("seed002-walkthrough", "Seed 002, §8 主走查: one query, three keys, start to finish");
    printf("Self-attention for 它 in 猫 追 它 with 1-d keys (D_k = 1): scaled dot score k·q/sqrt(D_k),\n");
    printf("scale %s (attend_score_effective_scale). Query q = 1; keys and values as the seed sets\n",
           dec(&p, attend_score_effective_scale(&cfg), 6));
    printf("them: 0.916 and 0.405 are ln 2.5 = 0.916291 and ln 1.5 = 0.405465 rounded, so the\n");
    printf("exponentials come out about 7e-4 below the seed's 2.500 and 1.500, while the weights and the\n");
    printf("output agree with the seed's 3 decimals.\n");
    LIB(soft_read(&r, ATTEND_SCORE_SCALED_DOT, q, keys, vals, NULL, 3, 1, 2, &err));
    table_style ts = {.label = words, .state_head = "key k_j", .ctx_formula = "Σ α_j v_j",
                      .state_unit = U_DEC, .score_unit = U_DEC, .exp_unit = U_DEC, .weight_unit = U_DEC,
                      .ctx_unit = U_DEC, .seed_exp = seed_exp, .seed_weight = seed_w};
    printf("Values v(猫) = [2,1], v(追) = [0,1], v(它) = [1,0].\n");
    print_read_table(&ts, keys, 3, 1, 2, NULL, &r);
    printf("  seed: h(它) = 0.200×[2,1] + 0.500×[0,1] + 0.300×[1,0] = [0.7, 0.7]; here [%s, %s]\n",
           dec(&p, r.ctx[0], 3), dec(&p, r.ctx[1], 3));
    return 0;
}

static int ex_seed002_pointer(void) {
    attend_error err = {0};
    strpool p = {0};
    enum { S = 3 };
    static const double x[S] = {20, 5, 10};
    attend_real scores[S], logp[S * S]; /* [S], [T=S,S] */
    uint8_t valid[S] = {1, 1, 1};
    int32_t pick[S];
    header("seed002-pointer", "Seed 002, §5 指针网络 (pointer network)");
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
        cell("j", 3);
        cell("x_j", 5);
        cell("score e_j = ln x_j", 20);
        cell("log p_j", 22);
        printf("p_j\n");
        for (int j = 0; j < S; j++) {
            double lp = logp[t * S + j], pj = isinf(lp) ? 0.0 : exp(lp);
            char idx[16], xv[32];
            snprintf(idx, sizeof idx, "%d", j + 1);
            snprintf(xv, sizeof xv, "%.0f", x[j]);
            printf("  ");
            cell(idx, 3);
            cell(xv, 5);
            cell(num(&p, scores[j], U_LN), 20);
            cell(isinf(lp) ? "-inf (excluded)" : num(&p, lp, U_LN), 22);
            printf("%s%s\n", num(&p, pj, U_ONE), j == pick[t] ? "   <- pointer" : "");
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

static int ex_seed003_scale(void) {
    attend_error err = {0};
    attend_rng rng;
    enum { P = 10000, D = 64, ROWS = 1000, COLS = 10 };
    int rc = 1;
    attend_real *q = malloc((size_t)P * D * sizeof *q), *k = malloc((size_t)P * D * sizeof *k);
    attend_real *kp = malloc((size_t)P * D * sizeof *kp);
    attend_real *raw = malloc(P * sizeof *raw), *scaled = malloc(P * sizeof *scaled);
    attend_real *wts = malloc(P * sizeof *wts);
    if (!q || !k || !kp || !raw || !scaled || !wts) {
        fprintf(stderr, "attend explain: out of memory\n");
        goto done;
    }
    header("seed003-scale", "Seed 003, §4.2 為什麼要除以 √d_k (why scale the dot product)");
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
        lib_fail("attend_scores_forward", st, &err);
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
    cell("score", 36);
    cell("mean", 8);
    cell("std (n-1)", 11);
    cell("seed", 16);
    printf("|e| > 20\n");
    const char *names[2] = {"DOT          q·k", "SCALED_DOT   q·k / sqrt(64)"};
    const char *seeds[2] = {"≈ √64 = 8", "≈ 1"};
    for (int c = 0; c < 2; c++) {
        char cnt[32];
        snprintf(cnt, sizeof cnt, "%d of %d", beyond20[c], P);
        printf("  ");
        cell(names[c], 36);
        printf("%-8.3f%-11.3f", fabs(m[c]) < 5e-4 ? 0.0 : m[c], sd[c]);
        cell(seeds[c], 16);
        printf("%s\n", cnt);
    }
    printf("  scale applied by SCALED_DOT (attend_score_effective_scale, scale = 0): %.6f = 1/sqrt(64)\n",
           attend_score_effective_scale(&sdot));
    /* Saturation: softmax over rows of 10 scores (attend_masked_softmax_forward). */
    double top[2] = {0, 0};
    for (int c = 0; c < 2; c++) {
        st = attend_masked_softmax_forward(wts, e[c], NULL, NULL, 0, ROWS, 1, COLS, &err);
        if (st != ATTEND_OK) {
            lib_fail("attend_masked_softmax_forward", st, &err);
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
    print_read_table(&ts, h, 3, 2, 2, valid, &r);
}

static int ex_seed004_example(void) {
    attend_error err = {0};
    strpool p = {0};
    attend_real e[3] = {0, (attend_real)log(2.0), (attend_real)log(3.0)};
    attend_real w[3], c[2], wz[3], cz[2];
    const uint8_t pad3[3] = {1, 1, 0};
    header("seed004-example", "Seed 004, §03 用三个源位置手算一次「重新取证」");
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
           vec(&p, wz, 3, U_ONE, 1));
    printf("sum to %s < 1 and the context %s shrinks.\n", sym_only(&p, (double)wz[0] + wz[1] + wz[2], U_ONE),
           vec(&p, cz, 2, U_ONE, 1));
    return 0;
}

static int ex_seed004_exercise(void) {
    attend_error err = {0};
    strpool p = {0};
    attend_real e[3] = {(attend_real)log(4.0), (attend_real)log(2.0), 0};
    attend_real w[3], c[2], hz[6];
    const uint8_t pad2[3] = {1, 0, 1};
    header("seed004-exercise", "Seed 004, §12 思考题与小练习, exercise 1");
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
           vec(&p, w, 3, U_ONE, 1));
    printf("%s of the probability mass, and the context is %s instead of the masked one.\n",
           sym_only(&p, w[1], U_ONE), vec(&p, c, 2, U_ONE, 1));
    return 0;
}

/* ------------------------------------------------------------- dispatch */

typedef struct {
    const char *name;
    const char *what;
    int (*run)(void);
} example;

static const example EXAMPLES[] = {
    {"seed000-table14.1", "Table 14.1: weights and context for query [1,0]", ex_table14_1},
    {"seed000-example14.2", "Example 14.2: the same states, query [0,1]", ex_example14_2},
    {"seed000-blue", "§14.4: the blue sequence, 1/3 each, context [0,a/3]", ex_blue},
    {"seed000-table14.2", "Table 14.2: remove a saved state (mask) and renormalise", ex_table14_2},
    {"seed000-table14.3", "Table 14.3: delete an input token and re-encode", ex_table14_3},
    {"seed000-exercise1", "§14.9 ex. 1: query [1,1]", ex_exercise1},
    {"seed000-exercise2", "§14.9 ex. 2: the wrong denominator; query [0,0]", ex_exercise2},
    {"seed000-exercise3", "§14.9 ex. 3: the two ways to delete 钥匙", ex_exercise3},
    {"seed000-exercise4", "§14.9 ex. 4: highest weight is not largest effect", ex_exercise4},
    {"seed000-exercise5", "§14.6, §14.9 ex. 5: storage and dot-product counts", ex_exercise5},
    {"seed000-all-masked", "§14.5: every position excluded is an error", ex_all_masked},
    {"seed001-dot", "dot attention on H with s = [0.9,0.1,0.2]", ex_seed001_dot},
    {"seed001-mha-shapes", "nn.MultiheadAttention shapes via attend_mha_forward", ex_seed001_mha},
    {"seed002-walkthrough", "§8: one query, three keys, output [0.7,0.7]", ex_seed002_walk},
    {"seed002-pointer", "§5: pointer over 20, 5, 10 -> 1, 3, 2", ex_seed002_pointer},
    {"seed003-scale", "§4.2: std of q·k is ~8, scaled ~1", ex_seed003_scale},
    {"seed004-example", "§03: energies [0,ln2,ln3], with and without padding", ex_seed004_example},
    {"seed004-exercise", "§12 ex. 1: [ln4,ln2,0]; masking vs zeroing a state", ex_seed004_exercise},
};
#define N_EXAMPLES ((int)(sizeof EXAMPLES / sizeof EXAMPLES[0]))

static void explain_usage(FILE *f) {
    fprintf(f,
            "usage: attend explain [NAME ...]\n"
            "       attend explain --list\n"
            "\n"
            "Reproduces the worked examples of the seeds (the textbook chapters 000-004) with the\n"
            "library and prints them as tables: scores, exponentials, denominator, weights and\n"
            "context, each headed by the seed and table it comes from. Exact values are named\n"
            "beside the decimals (\"1/4 = 0.250000\", a = ln 2).\n"
            "\n"
            "  (no NAME)   print every example, in order\n"
            "  NAME ...    print the named examples (e.g. seed000-table14.1)\n"
            "  --list      list the example names\n"
            "  --help      this message\n"
            "\n"
            "Exit status: 0 ok, 1 a library call failed, 2 bad usage or unknown name.\n");
}

static int find_example(const char *name) {
    for (int i = 0; i < N_EXAMPLES; i++)
        if (!strcmp(EXAMPLES[i].name, name)) return i;
    return -1;
}

static int finish(int rc) {
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "attend explain: error writing the output\n");
        return 1;
    }
    return rc;
}

int cmd_explain(int argc, char **argv) {
    /* argv[0] is "explain" */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            explain_usage(stdout);
            return finish(0);
        }
    }
    if (argc == 2 && !strcmp(argv[1], "--list")) {
        for (int i = 0; i < N_EXAMPLES; i++) printf("%-22s %s\n", EXAMPLES[i].name, EXAMPLES[i].what);
        return finish(0);
    }
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') {
            fprintf(stderr, "attend explain: unknown option '%s'\n", argv[i]);
            explain_usage(stderr);
            return 2;
        }
        if (find_example(argv[i]) < 0) {
            fprintf(stderr, "attend explain: unknown example '%s' (attend explain --list shows the names)\n",
                    argv[i]);
            return 2;
        }
    }
    int rc = 0;
    if (argc == 1) {
        for (int i = 0; i < N_EXAMPLES && rc == 0; i++) {
            if (i) printf("\n");
            rc = EXAMPLES[i].run();
        }
    } else {
        for (int i = 1; i < argc && rc == 0; i++) {
            if (i > 1) printf("\n");
            rc = EXAMPLES[find_example(argv[i])].run();
        }
    }
    return finish(rc);
}
