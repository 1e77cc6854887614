/*
 * embed.h — the gradients of embedding lookups and of per-token projection
 * tables (embed.c), shared by the encoder kinds and the decoder kinds. Not
 * installed.
 *
 * Dimension letters: see state.h.
 */
#ifndef ATTEND_SEQ2SEQ_EMBED_H
#define ATTEND_SEQ2SEQ_EMBED_H

#include "seq2seq/state.h"

/* gemb [V,D] += rows drows [R,D] at ids [R]; PAD and negative ids get nothing. */
void at_embedding_backward(attend_real *gemb, const attend_real *drows, const int32_t *ids, size_t R, int D);

/* Backward of a table lookup xg[r] = tab[ids[r]], tab [V,GH] = emb [V,D] Wᵀ + b
 * (W: the first D columns of a weight with row stride ldw): from dxg [R,GH]
 * accumulates gW, gb [GH] and gemb [V,D] (PAD's row excluded); with len, rows
 * are (n, j) of S positions and j >= len[n] reads PAD. Scratch: dtab [V,GH],
 * demb [V,D]. */
void at_table_backward(const attend_model *m, attend_real *dtab, attend_real *demb, attend_real *gemb, attend_real *gW,
                       int ldw, attend_real *gb, const attend_real *dxg, const int32_t *ids, const int32_t *len, int S,
                       size_t R, int V, int GH, const attend_real *emb, const attend_real *W);

#endif
