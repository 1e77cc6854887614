/* analysis.h — what `attend align` and `attend intervene` share: a model
 * loaded with capacities for one source text, the text's ids and token labels,
 * and the model's own decoding of it. */
#ifndef ATTEND_CLI_ANALYSIS_H
#define ATTEND_CLI_ANALYSIS_H

#include "attend.h"

typedef struct {
    attend_model *m;
    attend_vocab *sv, *tv;        /* tv is NULL for pointer models */
    attend_tokenizer tok;
    int pointer;
    int32_t *src;                 /* [S] source ids */
    int S;
    const char **src_tok;         /* [S] labels */
    int max_len;                  /* output capacity in tokens */
    int unknown;                  /* source symbols the model does not know */
    const char *text;             /* the source text (the caller's) */
    char *raw;                    /* [S, COPY_LABEL_BYTES] the text's tokens as written (copy labels) */
} analysis;

/* Loads `path` with room for `text` (tokenized with the model's tokenizer),
 * batches of `batch` rows and outputs of max_len tokens (0: the longer of the
 * model's longest training target and 2 S). Symbols the model does not know
 * and sources longer than it was trained on are reported on stderr (and
 * decoded). Returns 0, or 1/2 after printing. */
int analysis_open(analysis *a, const char *cmd, const char *path, const char *text, int batch, int max_len);
void analysis_close(analysis *a);

/* The label of output token id (pointer models: the pointed source token). */
const char *analysis_out_label(const analysis *a, int32_t id);

/* Joins the labels of out [len] into buf (model's tokenizer); "" if it fails. */
const char *analysis_out_text(const analysis *a, const int32_t *out, int len, char *buf, size_t cap);

/* Writes text to path; 0, or 1 after printing "attend CMD: ..." on stderr. */
int analysis_write_file(const char *cmd, const char *path, const char *text);

#endif
