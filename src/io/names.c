/*
 * names.c — the names of the enumerations as written in model files and on
 * the command line, and back. A file of its own so that model.c (whose
 * configuration checks name kinds) and model_io.c both call it without
 * calling each other.
 */
#include <string.h>

#include "attend.h"

static const char *const CELL_NAMES[] = {"gru", "lstm"};
static const char *const DECODER_NAMES[] = {"bahdanau", "luong", "none", "pointer", "transformer", "readout"};
static const char *const SCORE_NAMES[] = {"dot", "scaled_dot", "general", "additive"};
static const char *const TOKENIZER_NAMES[] = {"char", "space"};
static const char *const NORMALIZER_NAMES[] = {"softmax", "sparsemax", "entmax15"};
static const char *const ENCODER_NAMES[] = {"rnn", "transformer", "conv"};
static const char *const POSITIONS_NAMES[] = {"sinusoidal", "learned", "none"};

static int index_of(const char *const *names, int n, const char *name) {
    if (!name) return -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return i;
    return -1;
}

const char *attend_cell_name(attend_cell_kind k) { return (unsigned)k < 2 ? CELL_NAMES[k] : "unknown"; }
const char *attend_decoder_name(attend_decoder_kind k) { return (unsigned)k < 6 ? DECODER_NAMES[k] : "unknown"; }
const char *attend_score_name(attend_score_kind k) { return (unsigned)k < 4 ? SCORE_NAMES[k] : "unknown"; }
const char *attend_tokenizer_name(attend_tokenizer t) { return (unsigned)t < 2 ? TOKENIZER_NAMES[t] : "unknown"; }
int attend_cell_from_name(const char *name) { return index_of(CELL_NAMES, 2, name); }
int attend_decoder_from_name(const char *name) { return index_of(DECODER_NAMES, 6, name); }
int attend_score_from_name(const char *name) { return index_of(SCORE_NAMES, 4, name); }
int attend_tokenizer_from_name(const char *name) { return index_of(TOKENIZER_NAMES, 2, name); }
const char *attend_normalizer_name(attend_normalizer k) { return (unsigned)k < 3 ? NORMALIZER_NAMES[k] : "unknown"; }
int attend_normalizer_from_name(const char *name) { return index_of(NORMALIZER_NAMES, 3, name); }
const char *attend_encoder_name(attend_encoder_kind k) { return (unsigned)k < 3 ? ENCODER_NAMES[k] : "unknown"; }
int attend_encoder_from_name(const char *name) { return index_of(ENCODER_NAMES, 3, name); }
const char *attend_positions_name(attend_positions p) { return (unsigned)p < 3 ? POSITIONS_NAMES[p] : "unknown"; }
int attend_positions_from_name(const char *name) { return index_of(POSITIONS_NAMES, 3, name); }
