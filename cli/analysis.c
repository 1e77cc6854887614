/* analysis.c — loading a model for one source text (align, intervene). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"

int analysis_open(analysis *a, const char *cmd, const char *path, const char *text, int batch, int max_len) {
    memset(a, 0, sizeof *a);
    attend_error err = {0};
    /* first load: the vocabulary and the trained capacities */
    int rc = cli_load_model(cmd, path, 0, 0, 0, &a->m, &a->sv, &a->tv, &a->tok);
    if (rc) return rc;
    const attend_model_config *c = attend_model_get_config(a->m);
    a->pointer = c->decoder == ATTEND_DECODER_POINTER;
    int trained_tgt = c->max_tgt_len;
    size_t n = strlen(text);
    int cap = (int)(n < 4096 ? n : 4096) + 1;
    a->src = malloc((size_t)cap * sizeof *a->src);
    a->src_tok = malloc((size_t)cap * sizeof *a->src_tok);
    if (!a->src || !a->src_tok) {
        fprintf(stderr, "attend %s: out of memory\n", cmd);
        return 1;
    }
    if (attend_vocab_encode(a->sv, a->tok, 0, text, n, a->src, cap, &a->S, &err)) return cli_lib_fail(cmd, &err);
    if (a->S == 0) {
        fprintf(stderr, "attend %s: the source text has no tokens\n", cmd);
        return 2;
    }
    for (int j = 0; j < a->S; j++) a->src_tok[j] = attend_vocab_token(a->sv, a->src[j]);
    a->max_len = max_len ? max_len : (a->pointer ? a->S : (trained_tgt > 2 * a->S ? trained_tgt : 2 * a->S));
    if (a->pointer && a->max_len < a->S) a->max_len = a->S;
    /* second load, sized for this source */
    attend_model_free(a->m);
    a->m = NULL;
    attend_vocab *sv2 = NULL, *tv2 = NULL;
    rc = cli_load_model(cmd, path, batch, a->S, a->max_len, &a->m, &sv2, &tv2, NULL);
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
    memset(a, 0, sizeof *a);
}

const char *analysis_out_label(const analysis *a, int32_t id) {
    const char *t = a->pointer ? (id >= 0 && id < a->S ? a->src_tok[id] : NULL) : attend_vocab_token(a->tv, id);
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
    if (attend_vocab_decode(a->tv, a->tok, out, len, buf, cap, &err)) buf[0] = 0;
    return buf;
}

int analysis_write_file(const char *cmd, const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "attend %s: cannot write %s\n", cmd, path);
        return 1;
    }
    size_t n = strlen(text);
    int bad = fwrite(text, 1, n, f) != n;
    bad |= fclose(f) != 0;
    if (bad) fprintf(stderr, "attend %s: error writing %s\n", cmd, path);
    return bad;
}
