/*
 * decode.h — decoding through one model or several (decode.c): the checks a
 * list of scorers must pass, a step's output distribution, the beam's
 * replication and reordering of every model's rows, greedy decoding, and the
 * decoding scratch. beam.c, search.c and analysis/intervene.c decode
 * through these, never into the activation arena's layout. Not installed.
 *
 * Dimension letters: see state.h.
 */
#ifndef ATTEND_SEQ2SEQ_DECODE_H
#define ATTEND_SEQ2SEQ_DECODE_H

#include "seq2seq/state.h"

/* The checks every decoding over M scorers (one model: M = 1) makes: M in
 * [1,64], none NULL, distinct handles, one output space (the same decoder
 * output kind and target vocabulary size), a beam's width <= each max_batch
 * (beam 0: greedy), the sources valid for each, max_len within each Tcap,
 * and each decoder kind's and extension's rules (o: the decoding's options). */
attend_status at_decode_check(attend_model *const *models, int M, const int32_t *src, const int32_t *src_len, int N,
                              int S, int beam, int max_len, const attend_decode_options *o, const char *who,
                              attend_error *err);

/* After at_model_step(t) of N rows with features in acts.step_feat: the
 * step's output rows [N,*W]: log-probabilities (*logp = 1) or logits (*logp = 0). */
const attend_real *at_model_step_dist(attend_model *m, int t, int N, int S, int *W, int *logp);

/* Beam search: every declared row of an encoded one-row batch to rows 1..K-1. */
void at_model_replicate(attend_model *m, int K, int S);
/* Beam search: after step t ran `live` rows, row j of step t+1's decoder
 * state becomes row parent[j] (j < n), laid out for n rows at step t+1. */
void at_model_reorder(attend_model *m, int t, const int *parent, int n, int live);

/* bytes of decoding scratch in m, grown when a call needs more (never
 * shrunk, freed with the model): NULL and err set when out of memory. */
void *at_decode_scratch(attend_model *m, size_t bytes, const char *who, attend_error *err);

/* attend_decode_options' align_head: 0, or a head (1..heads) of every
 * model's multi-head decoder (ATTEND_ERR_ARG naming the model and its decoder). */
attend_status at_decode_check_head(attend_model *const *models, int M, int head, const char *who, attend_error *err);

/* Greedy decoding with the mean of M models' step log-probabilities (checked
 * by the caller): src [N,S], src_len [N], out [N,max_len], out_len [N],
 * align NULL or [M,N,max_len,S] (align_head: attend_decode_options'). */
attend_status at_greedy(attend_model *const *models, int M, const int32_t *src, const int32_t *src_len, int N, int S,
                        int max_len, int align_head, int32_t *out, int32_t *out_len, attend_real *align,
                        const char *who, attend_error *err);

#endif
