/*
 * beam.h — the one beam search (beam.c). Not installed.
 *
 * Dimension letters: see state.h.
 */
#ifndef ATTEND_SEQ2SEQ_BEAM_H
#define ATTEND_SEQ2SEQ_BEAM_H

#include "seq2seq/state.h"

/* Beam search over the mean of M models' step log-probabilities (checked by
 * the caller: at_decode_check) for one source src [S]: out [nbest,L],
 * out_len [nbest], score [nbest], align NULL or [M,nbest,L,S], *n_out. */
attend_status at_beam(attend_model *const *models, int M, const int32_t *src, int S, const attend_decode_options *o,
                      int32_t *out, int32_t *out_len, double *score, attend_real *align, int *n_out, const char *who,
                      attend_error *err);

#endif
