/* textbook.h — seed 000's chapter-14 toy, shared by `attend intervene
 * --textbook` (Tables 14.2 and 14.3) and `attend trial --textbook` (the
 * trials on it): the source 红色 钥匙 。 (token ids 0, 1, 2), the embeddings
 * E(红色) = [a,0], E(钥匙) = [-a,a], E(。) = [0,-a] with a = ln 2, the ReLU
 * encoder h_t = ReLU(h_{t-1} + E(x_t)) (h_0 = 0), dot scores against a given
 * query, and the chapter's read-out r = c_1 + 2 c_2 of the context. Its
 * weights are the chapter's, fixed: nothing is trained. */
#ifndef ATTEND_CLI_TEXTBOOK_H
#define ATTEND_CLI_TEXTBOOK_H

#include "attend.h"

#define TB_S 3 /* source positions */
#define TB_D 2 /* state width */

extern const char *const textbook_tokens[TB_S]; /* 红色 钥匙 。 */

/* E(x) [D] of token id x (0, 1, 2), in double. */
void textbook_embedding(double *e, int x);

/* The states h [n,D] of the tokens ids [n] (a subsequence of 0 1 2). */
void textbook_encode(attend_real *h, const int *ids, int n);

/* d_emb [n,D] := the gradient of sum_t dh[t] . h_t [n,D] with respect to the
 * embeddings E(x_t) fed to the encoder (the ReLU's derivative at 0 taken as 0,
 * PyTorch's convention: the chapter's pre-activations sit exactly on it). */
void textbook_encode_backward(double *d_emb, const double *dh, const int *ids, int n);

/* The chapter's read-out r = c_1 + 2 c_2 of a context c [D]. */
double textbook_readout(const attend_real *c);

/* `attend trial --textbook` (cli/trial_textbook.c): the toy through the trials,
 * at the adversary's bounds eps [n_eps] on |r' - r|, by the search `search`
 * (attend_adversary_method); 0, or 1 after a message. */
int trial_textbook(const double *eps, int n_eps, long max_evals, attend_adversary_method search);

#endif
