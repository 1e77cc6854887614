/*
 * model_io.h — model files (model_io.c): writing a model with extra tensors
 * and metadata (checkpoints), and reading a file's tensors into a model. Not
 * installed.
 *
 * Dimension letters: see src/seq2seq/state.h.
 */
#ifndef ATTEND_IO_MODEL_IO_H
#define ATTEND_IO_MODEL_IO_H

#include "seq2seq/state.h"

/* Writes a model file with the given "attend.format" plus extra tensors and
 * metadata (checkpoints). */
attend_status at_model_write(const attend_model *m, const char *path, const attend_vocab *src_vocab,
                             const attend_vocab *tgt_vocab, attend_tokenizer tok, const char *format,
                             const attend_st_entry *extra, int n_extra, const attend_st_meta *extra_meta,
                             int n_extra_meta, attend_error *err);
/* Copies the tensors of a model file into m, checking names, dtypes, shapes
 * and finiteness; path names the file in messages. */
attend_status at_model_read_tensors(attend_model *m, const attend_st_file *f, const char *path, attend_error *err);

#endif
