/*
 * attend.h — attention-based sequence-to-sequence models in plain C11.
 *
 * The public header. Every exported symbol starts with `attend_` (macros and
 * enum values with `ATTEND_`). It includes the five parts, one per layer of the
 * library (docs/ARCHITECTURE.md):
 *   attend/core.h      kernels: attention, multi-head, hard, pointer, RNG, cells, optimizers
 *   attend/io.h        safetensors, output paths, vocabularies, datasets, built-in tasks
 *   attend/seq2seq.h   the encoder–decoder model, model files, evaluation, training
 *   attend/analysis.h  heatmaps and plots, interventions, sweeps
 *   attend/g2p.h       grapheme-to-phoneme on a pronouncing dictionary
 * The conventions every function follows are at the top of attend/core.h.
 */
#ifndef ATTEND_H
#define ATTEND_H

#include "attend/core.h"
#include "attend/io.h"
#include "attend/seq2seq.h"
#include "attend/analysis.h"
#include "attend/g2p.h"

#endif /* ATTEND_H */
