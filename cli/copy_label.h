/* copy_label.h — output token labels of copy models (ids >= Vt name a source token). */
#ifndef ATTEND_CLI_COPY_LABEL_H
#define ATTEND_CLI_COPY_LABEL_H

#include "attend.h"

#define COPY_LABEL_BYTES (ATTEND_MAX_TOKEN_BYTES + 1)

/* The label of output id: its target token, or for id >= the vocabulary's
 * size the source token id − Vt of text [len] (written into buf
 * [COPY_LABEL_BYTES]); NULL when neither exists. */
const char *copy_label(const attend_vocab *tv, attend_tokenizer tok, int32_t id, const char *text, size_t len,
                       char *buf);

#endif
