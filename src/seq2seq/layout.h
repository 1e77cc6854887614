/*
 * layout.h — the parameter tensors in file order and their initialisation,
 * and the activation and id arenas (layout.c), for attend_model_create. Not
 * installed.
 *
 * Dimension letters: see state.h.
 */
#ifndef ATTEND_SEQ2SEQ_LAYOUT_H
#define ATTEND_SEQ2SEQ_LAYOUT_H

#include "seq2seq/state.h"

/* Walks the parameter tensors in their fixed order (docs/FORMAT.md). With
 * record it records names, shapes and initialisations; with base != NULL it
 * points the fields of v (which: 0 parameters, 1 gradients) and the kinds'
 * and extensions' slots into base. Returns the total count of values. */
size_t at_layout_params(attend_model *m, attend_real *base, at_model_tensors *v, int which, int record);
/* Every tensor's initial values from seed, as its description says. */
void at_init_params(attend_model *m, uint64_t seed);
/* Points every activation buffer into base and every id buffer into ibase
 * (or only counts when they are NULL), declaring the beam's rows; the totals
 * in *total reals and *itotal ids. Returns 0 on size overflow. */
int at_layout_acts(attend_model *m, attend_real *base, int32_t *ibase, size_t *total, size_t *itotal);

#endif
