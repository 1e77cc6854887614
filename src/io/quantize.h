/*
 * quantize.h — a model's weights stored as int8 or fp16 (quantize.c): which
 * tensors are stored so, reading them from a file, and copying them into a
 * clone. The products that read them are in src/seq2seq/linear.c. Not
 * installed.
 *
 * Dimension letters: see src/seq2seq/state.h.
 */
#ifndef ATTEND_IO_QUANTIZE_H
#define ATTEND_IO_QUANTIZE_H

#include "seq2seq/state.h"

/* The tensor is stored quantized in a quantized model: a 2-D weight matrix
 * other than the embedding tables. */
int at_model_quantizable(const at_tensor_desc *td);

/* The storage of a model file's weight matrices: I8 or F16 when the first
 * weight matrix present is stored so, else F32. */
attend_dtype at_model_file_wdtype(const attend_model *m, const attend_st_file *f);

/* Reads a quantized model file's weights into m (attend_model_load; float
 * files go to at_model_read_tensors): matrices stored I8 (with
 * "<name>.scale") or F16 fill the quantized copies and the dequantized arena,
 * every value checked. */
attend_status at_model_read_weights(attend_model *m, const attend_st_file *f, const char *path, attend_error *err);

/* Gives dst (same configuration, weights already copied) src's quantized copies. */
attend_status at_model_quant_clone(attend_model *dst, const attend_model *src, attend_error *err);

#endif
