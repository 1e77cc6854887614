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
 * This file: the formatting, the read table, the plumbing and the dispatch;
 * the examples are in explain_seed000.c and explain_seeds.c.
 *
 * Dimension letters (the project's table, docs/ARCHITECTURE.md): N batch, T
 * query (target) positions, S source positions, D key/query width, Dv value
 * width; in the multi-head example D is the embedding width and NH the heads.
 */
#include <math.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "cli.h"
#include "explain.h"

/* ------------------------------------------------------------ formatting */



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
const char *ex_num(strpool *p, double x, int u) {
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
const char *ex_dec(strpool *p, double x, int decimals) {
    char *b = pool_next(p);
    snprintf(b, sizeof p->s[0], "%.*f", decimals, fabs(x) < 0.5 * pow(10, -decimals) ? 0.0 : x);
    return b;
}

/* Exact name only ("a/2"); decimals when there is none; U_DEC: the shortest form
 * ("0.916"), for inputs. */
const char *ex_sym_only(strpool *p, double x, int u) {
    char *b = pool_next(p);
    symbol(b, sizeof p->s[0], x, u);
    if (!b[0] && u == U_DEC) snprintf(b, sizeof p->s[0], "%g", clean(x)); /* an input as written */
    else if (!b[0]) snprintf(b, sizeof p->s[0], "%.6f", clean(x));
    return b;
}

/* "[a/2 = 0.346574, a/4 = 0.173287]" (names and decimals) or "[a/2, a/4]" (names only). */
const char *ex_vec(strpool *p, const attend_real *x, int n, int u, int names_only) {
    char *b = pool_next(p);
    size_t len = 0, cap = sizeof p->s[0];
    len += (size_t)snprintf(b + len, cap - len, "[");
    for (int i = 0; i < n && len < cap; i++) {
        const char *s = names_only ? ex_sym_only(p, x[i], u) : ex_num(p, x[i], u);
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
void ex_cell(const char *s, int width) {
    int w = text_width(s);
    fputs(s, stdout);
    do putchar(' '); while (++w < width);
}

void ex_header(const char *name, const char *where) {
    printf("== %s ==  %s\n", name, where);
}

/* ------------------------------------------------------ library plumbing */

int ex_lib_fail(const char *what, attend_status st, const attend_error *err) {
    cli_error("explain", "%s failed: %s: %s", what, attend_status_name(st), err->msg);
    return 1;
}



/* keys → scores → masked softmax → context for one query q [D] against keys
 * k [S,D] and values v [S,Dv]; valid [S] or NULL. */
attend_status soft_read(read_result *r, attend_score_kind kind, const attend_real *q,
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


void ex_print_read_table(const table_style *ts, const attend_real *k, int S, int D, int Dv,
                             const uint8_t *valid, const read_result *r) {
    strpool p = {0};
    int wl = ts->label ? 8 : 0, ws = 8 + 6 * D;
    int wsc = ts->score_unit == U_DEC ? 12 : 21, wx = ts->exp_unit == U_DEC ? 12 : 17;
    printf("  ");
    ex_cell("j", 3);
    if (wl) ex_cell("source", wl);
    ex_cell(ts->state_head ? ts->state_head : "state h_j", ws);
    ex_cell("score e_j", wsc);
    ex_cell("exp(e_j)", ts->seed_exp ? wx + 11 : wx);
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
        ex_cell(idx, 3);
        if (wl) ex_cell(ts->label[j], wl);
        ex_cell(ex_vec(&p, k + (size_t)j * D, D, ts->state_unit, 1), ws);
        ex_cell(ex_num(&p, r->score[j], ts->score_unit), wsc);
        if (!in) {
            ex_cell("excluded", ts->seed_exp ? wx + 11 : wx);
        } else if (ts->seed_exp) {
            char both[96];
            snprintf(both, sizeof both, "%s (seed %s)", ex_num(&p, e, ts->exp_unit), ts->seed_exp[j]);
            ex_cell(both, wx + 11);
        } else {
            ex_cell(ex_num(&p, e, ts->exp_unit), wx);
        }
        if (ts->seed_weight) printf("%s (seed %s)\n", ex_num(&p, r->weight[j], ts->weight_unit), ts->seed_weight[j]);
        else printf("%s%s\n", ex_num(&p, r->weight[j], ts->weight_unit), in ? "" : "  (excluded by the mask)");
    }
    printf("  denominator Σ exp(e_j) over the included positions = %s\n", ex_num(&p, denom, ts->exp_unit));
    printf("  sum of the weights = %s\n", ex_num(&p, wsum, U_ONE));
    printf("  context c = %s = %s\n", ts->ctx_formula ? ts->ctx_formula : "Σ α_j h_j",
           ex_vec(&p, r->ctx, Dv, ts->ctx_unit, 0));
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
    {"sparsemax", "sparsemax and entmax15 next to softmax: τ, support, exact zeros", ex_sparsemax},
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
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("explain", "error writing the output: %s", errno ? strerror(errno) : "write error");
        clearerr(stdout);
        return 1;
    }
    return rc;
}

int cmd_explain(int argc, char **argv) {
    cli_set_oom_hint(NULL); /* the options of this command that lower its memory */
    /* argv[0] is "explain"; "--" ends the options: the names after it are examples */
    int dd = argc;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            dd = i;
            break;
        }
    for (int i = 1; i < dd; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            explain_usage(stdout);
            return finish(0);
        }
    }
    if (argc == 2 && !strcmp(argv[1], "--list")) {
        for (int i = 0; i < N_EXAMPLES; i++) printf("%-22s %s\n", EXAMPLES[i].name, EXAMPLES[i].what);
        return finish(0);
    }
    int names = 0;
    for (int i = 1; i < argc; i++) {
        if (i == dd) continue;
        if (i < dd && argv[i][0] == '-') {
            cli_error("explain", "unknown option '%s'", argv[i]);
            explain_usage(stderr);
            return 2;
        }
        if (find_example(argv[i]) < 0) {
            cli_error("explain", "unknown example '%s' (attend explain --list shows the names)", argv[i]);
            return 2;
        }
        names++;
    }
    int rc = 0;
    if (names == 0) {
        for (int i = 0; i < N_EXAMPLES && rc == 0; i++) {
            if (i) printf("\n");
            rc = EXAMPLES[i].run();
        }
    } else {
        int shown = 0;
        for (int i = 1; i < argc && rc == 0; i++) {
            if (i == dd) continue;
            if (shown++) printf("\n");
            rc = EXAMPLES[find_example(argv[i])].run();
        }
    }
    return finish(rc);
}
