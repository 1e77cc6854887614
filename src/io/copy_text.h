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

/* Training data (grow): target tokens unknown to tgt_vocab that occur in the
 * line's source are not added to it but read as AT_COPY_MARK + j (j the
 * first source token with the same text); others are added. */
#define AT_COPY_MARK (INT32_MAX - (1 << 20))
attend_status at_copy_grow_targets(attend_tokenizer tok, const char *src, size_t src_len, const char *tgt,
                                   size_t tgt_len, int32_t *ids, int nt, attend_vocab *tv, attend_error *err);
/* After reading with grow: every AT_COPY_MARK + j of a pair's target (src
 * [ns]) becomes the target id of source token j when tgt_vocab has it, else
 * Vt + the first position holding the same source id. */
void at_copy_resolve(int32_t *tgt, int nt, const int32_t *src, int ns, const attend_vocab *sv, const attend_vocab *tv);

#endif
