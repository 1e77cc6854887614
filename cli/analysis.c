/* analysis.c — loading a model for one source text (align, intervene). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis.h"
#include "cli.h"
#include "copy_label.h"
#include "outputs.h"

int analysis_open(analysis *a, const char *cmd, const char *path, const char *text, int batch, int max_len) {
    memset(a, 0, sizeof *a);
    attend_error err = {0};
    /* the trained capacities from the file's configuration, then a first load
     * at the smallest capacities for the vocabulary (the file's own may ask
     * for far more memory than one text needs) */
    attend_model_config trained;
    memset(&trained, 0, sizeof trained);
    {
        attend_st_file *f = NULL;
        if (attend_st_open(&f, path, 0, &err)) return cli_lib_fail(cmd, &err);
        const char *cj = attend_st_metadata(f, "attend.config");
        if (cj && attend_model_config_from_json(&trained, cj, strlen(cj), &err)) memset(&trained, 0, sizeof trained);
        attend_st_close(f);
    }
    int rc = cli_load_model(cmd, path, 1, 1, 1, &a->m, &a->sv, &a->tv, &a->tok);
    if (rc) return rc;
    const attend_model_config *c = &trained;
    a->pointer = attend_model_get_config(a->m)->decoder == ATTEND_DECODER_POINTER;
    int trained_tgt = c->max_tgt_len;
    size_t n = strlen(text);
    int cap = (int)(n < 4096 ? n : 4096) + 1;
    a->src = malloc((size_t)cap * sizeof *a->src);
    a->src_tok = malloc((size_t)cap * sizeof *a->src_tok);
    if (!a->src || !a->src_tok) {
        cli_oom(cmd, "the source text's tokens");
        return 1;
    }
    if (attend_vocab_encode(a->sv, a->tok, 0, text, n, a->src, cap, &a->S, &err)) return cli_lib_fail(cmd, &err);
    if (a->S == 0) {
        cli_error(cmd, "the source text has no tokens");
        return 2;
    }
    for (int j = 0; j < a->S; j++) a->src_tok[j] = attend_vocab_token(a->sv, a->src[j]);
    a->text = text;
    a->raw = calloc((size_t)a->S, COPY_LABEL_BYTES); /* a copy model's outputs name source tokens */
    if (!a->raw) {
        cli_oom(cmd, "the source tokens' labels");
        return 1;
    }
    for (int j = 0; j < a->S; j++) {
        size_t st, tl;
        if (attend_text_token(a->tok, text, n, j, &st, &tl, NULL) == ATTEND_OK && tl < COPY_LABEL_BYTES)
            memcpy(a->raw + (size_t)j * COPY_LABEL_BYTES, text + st, tl);
    }
    /* what the model will not read as written */
    char shown[160];
    a->unknown = cli_unknown_symbols(text, n, a->tok, a->src, a->S, shown, sizeof shown);
    if (a->unknown)
        cli_error(cmd, "%d of %d source symbols unknown to the model%s%s%s, read as <unk>; %s",
                a->unknown, a->S, shown[0] ? " (" : "", shown, shown[0] ? ")" : "",
                a->tok == ATTEND_TOKENIZE_CHAR ? "the model reads every character as a symbol, spaces included"
                                               : "the model reads space-separated tokens");
    if (a->S > c->max_src_len)
        cli_error(cmd, "%d source tokens, longer than the model's training sources (up to %d): expect "
                        "mistakes", a->S, c->max_src_len);
    a->max_len = max_len ? max_len : (a->pointer ? a->S : (trained_tgt > 2 * a->S ? trained_tgt : 2 * a->S));
    if (a->pointer && a->max_len < a->S) a->max_len = a->S;
    /* a transformer decoder's learned positions: no more steps than the table's rows (as decode caps it) */
    if (!max_len && c->decoder == ATTEND_DECODER_TRANSFORMER && c->positions == ATTEND_POSITIONS_LEARNED &&
        c->max_positions > 0 && a->max_len > c->max_positions - 1)
        a->max_len = c->max_positions - 1;
    /* second load, sized for this source */
    attend_model_free(a->m);
    a->m = NULL;
    attend_vocab *sv2 = NULL, *tv2 = NULL;
    attend_model_config mcap;
    memset(&mcap, 0, sizeof mcap);
    mcap.max_batch = batch;
    mcap.max_src_len = a->S;
    mcap.max_tgt_len = a->max_len;
    attend_status st = attend_model_load(&a->m, path, &mcap, &sv2, &tv2, NULL, &err);
    if (st == ATTEND_ERR_ALLOC) /* the command's hint (cli_set_oom_hint) names its own options */
        cli_error(cmd, "not enough memory for a source of %d tokens, outputs of up to %d and %d rows (%s): %s", a->S,
                  a->max_len, batch, err.msg, cli_get_oom_hint() ? cli_get_oom_hint() : "use a shorter text");
    else if (st) cli_lib_fail(cmd, &err);
    rc = st ? 1 : 0;
    attend_vocab_free(sv2);
    attend_vocab_free(tv2);
    return rc;
}

void analysis_close(analysis *a) {
    attend_model_free(a->m);
    attend_vocab_free(a->sv);
    attend_vocab_free(a->tv);
    free(a->src);
    free(a->src_tok);
    free(a->raw);
    memset(a, 0, sizeof *a);
}

const char *analysis_out_label(const analysis *a, int32_t id) {
    int V = a->tv ? attend_vocab_size(a->tv) : 0;
    const char *t = a->pointer              ? (id >= 0 && id < a->S ? a->src_tok[id] : NULL)
                    : id >= V && id < V + a->S ? a->raw + (size_t)(id - V) * COPY_LABEL_BYTES /* a copy */
                                             : attend_vocab_token(a->tv, id);
    return t ? t : "?";
}

const char *analysis_out_text(const analysis *a, const int32_t *out, int len, char *buf, size_t cap) {
    attend_error err = {0};
    if (a->pointer) {
        size_t used = 0;
        buf[0] = 0;
        for (int t = 0; t < len && used < cap; t++) {
            int k = snprintf(buf + used, cap - used, "%s%d", t ? " " : "", (int)out[t]);
            if (k < 0) break;
            used += (size_t)k;
        }
        return buf;
    }
    if (attend_vocab_decode_copy(a->tv, a->tok, out, len, a->text, strlen(a->text), buf, cap, &err)) buf[0] = 0;
    return buf;
}

int analysis_write_file(const char *cmd, const char *path, const char *text) {
    attend_error err = {0};
    struct stat sb;
    int had = stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
    if (attend_file_write(cli_write_path(path), text, strlen(text), ATTEND_OUTPUT_ALLOW_SPECIAL, &err) == ATTEND_OK)
        return 0;
    cli_error(cmd, "%s%s%s%s", err.msg, had ? " (the previous " : "", had ? path : "", had ? " is unchanged)" : "");
    return 1;
}
