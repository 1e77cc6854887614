/*
 * dropout.h — inverted dropout of the teacher-forced forward and backward
 * (dropout.c): masks from a counter-based hash, no RNG state. Not installed.
 *
 * The mask of one element is a pure function of (key, site, row, position,
 * element): u = splitmix64-mix chain of those five numbers, uniform in [0,1)
 * from its top 53 bits; the element is kept when u >= p and then scaled by
 * 1/(1-p). `row` is the row's index in the WHOLE batch (m->fwd_drop_row0 + n:
 * a gradient shard's rows keep their masks), `position` the source position j
 * or the decoder step t, `element` the index inside the vector. Forward and
 * backward multiply by the same mask; so do repeated forwards with one key
 * (finite differences). The trainer's key is at_dropout_key(seed, step).
 * tools/make_dropout_ref.py computes the same masks in numpy.
 *
 * Dimension letters: see model_internal.h.
 */
#ifndef ATTEND_DROPOUT_H
#define ATTEND_DROPOUT_H

#include "seq2seq/model_internal.h"

/* the sites (the hash's site number) */
enum {
    AT_DROP_SRC_EMB = 1,   /* source embeddings emb_src [N,S,D] (the encoder's input) */
    AT_DROP_DEC_IN = 2,    /* the decoder's input embeddings emb_tgt [T,N,D] */
    AT_DROP_FEAT = 3,      /* the output features feat [N,T,F] (before the output layer) */
    AT_DROP_ENC_LAYER = 16 /* + l: the input of encoder layer l >= 1, enc_out[l-1] [N,S,E] */
};

/* The key of a trainer step: a hash of the trainer's seed and its step count
 * (skipped steps included, as checkpoints store it). */
uint64_t at_dropout_key(uint64_t seed, long step);

/* The keep-and-scale factor (0 or 1/(1-p)) of one element; p in (0,1). */
attend_real at_dropout_factor(double p, uint64_t key, int site, long row, long pos, long elem);

/* x [A,B,W] *= the mask of the last forward's dropout (m->fwd_drop_*), with
 * the row index from the first dimension (rows_first) or the second; the
 * other is the position. Nothing when m->fwd_drop_p is 0. */
void at_dropout_grid(const attend_model *m, attend_real *x, int A, int B, int W, int rows_first, int site);
/* The dropout of one position pos of N rows, x [N,W] (rows first): what
 * at_dropout_grid does to that position's slice of the grid. */
void at_dropout_rows(const attend_model *m, attend_real *x, int N, int pos, int W, int site);

#endif
