/*
 * search.h — the one decoding entry (search.c). Not installed.
 *
 * Dimension letters: see state.h.
 */
#ifndef ATTEND_SEQ2SEQ_SEARCH_H
#define ATTEND_SEQ2SEQ_SEARCH_H

#include "seq2seq/state.h"

/* attend_decode and the old names' wrappers (with their own who): greedy
 * (o->beam == 0) of N sources or beam search of one, by M models, every
 * argument checked. */
attend_status at_decode(attend_model *const *models, int M, const int32_t *src, const int32_t *src_len, int N, int S,
                        const attend_decode_options *o, int32_t *out, int32_t *out_len, double *score,
                        attend_real *align, int *n_out, const char *who, attend_error *err);

#endif
