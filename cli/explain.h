/*
 * explain.h — what the files of `attend explain` share: number formatting,
 * the read table, the library plumbing (cli/explain.c), and the examples
 * (cli/explain_seed000.c: seed 000, chapter 14; cli/explain_seeds.c: seeds
 * 001-004; cli/explain_sparse.c: the sparse normalisers on seed scores),
 * listed in cli/explain.c's table.
 *
 * Dimension letters: S source positions, D key/query width, Dv value width.
 */
#ifndef ATTEND_CLI_EXPLAIN_H
#define ATTEND_CLI_EXPLAIN_H

#include <stdint.h>
#include <stdio.h>

#include "attend.h"

#define LN2 0.69314718055994530942 /* a = ln 2, seed 000 */
#define MAX_S 4                    /* source positions in the hand-sized tables */
#define MAX_D 3                    /* widths in the hand-sized tables */

/* How a number is named beside its decimals. */
enum { U_DEC, U_ONE, U_A, U_LN };

/* Small rotating set of string buffers, local to one table (no global state). */
typedef struct {
    char s[24][200];
    int i;
} strpool;

#define LIB(call)                                                     \
    do {                                                              \
        attend_status st_ = (call);                                   \
        if (st_ != ATTEND_OK) return ex_lib_fail(#call, st_, &err);      \
    } while (0)

/* One query read of S saved states, through the library one stage at a time
 * (the stages the tables show). */
typedef struct {
    attend_real score[MAX_S];  /* [S] e_j */
    attend_real weight[MAX_S]; /* [S] α_j */
    attend_real ctx[MAX_D];    /* [Dv] c */
} read_result;

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

const char *ex_num(strpool *p, double x, int u);
const char *ex_dec(strpool *p, double x, int decimals);
const char *ex_sym_only(strpool *p, double x, int u);
const char *ex_vec(strpool *p, const attend_real *x, int n, int u, int names_only);
void ex_cell(const char *s, int width);
void ex_header(const char *name, const char *where);
int ex_lib_fail(const char *what, attend_status st, const attend_error *err);
attend_status soft_read(read_result *r, attend_score_kind kind, const attend_real *q,
                               const attend_real *k, const attend_real *v, const uint8_t *valid,
                               int S, int D, int Dv, attend_error *err);
void ex_print_read_table(const table_style *ts, const attend_real *k, int S, int D, int Dv,
                             const uint8_t *valid, const read_result *r);

/* The examples: each prints its tables; 0, or 1 after a message. */
int ex_table14_1(void);
int ex_example14_2(void);
int ex_blue(void);
int ex_table14_2(void);
int ex_table14_3(void);
int ex_exercise1(void);
int ex_exercise2(void);
int ex_exercise3(void);
int ex_exercise4(void);
int ex_exercise5(void);
int ex_all_masked(void);
int ex_seed001_dot(void);
int ex_seed001_mha(void);
int ex_seed002_walk(void);
int ex_seed002_pointer(void);
int ex_seed003_scale(void);
int ex_seed004_example(void);
int ex_seed004_exercise(void);
int ex_sparsemax(void); /* cli/explain_sparse.c */

#endif
