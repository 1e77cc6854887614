/* copy_label.c — output token labels of copy models (decode --align, align, intervene). */
#include <string.h>

#include "copy_label.h"

const char *copy_label(const attend_vocab *tv, attend_tokenizer tok, int32_t id, const char *text, size_t len,
                       char *buf) {
    int V = attend_vocab_size(tv);
    if (id < V) return attend_vocab_token(tv, id);
    size_t st, tl;
    if (!text || attend_text_token(tok, text, len, id - V, &st, &tl, NULL) != ATTEND_OK || tl >= COPY_LABEL_BYTES)
        return NULL;
    memcpy(buf, text + st, tl);
    buf[tl] = '\0';
    return buf;
}
