/*
 * copy_text.h — text side of the copy mechanism (copy_text.c): token spans,
 * copied target ids in the TSV reader. Not installed.
 */
#ifndef ATTEND_COPY_TEXT_H
#define ATTEND_COPY_TEXT_H

#include "../internal.h"

/* Target tokens of a line read as <unk> (tgt [nt], not the literal "<unk>")
 * that occur in the source side become Vt + j, j the first source token with
 * the same bytes (attend_tsv_options.copy). src and tgt text are valid UTF-8. */
void at_copy_extend_targets(attend_tokenizer tok, const char *src, size_t src_len, const char *tgt, size_t tgt_len,
                            int32_t *ids, int nt, int32_t Vt);

#endif
