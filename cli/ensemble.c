/*
 * ensemble.c — the CLI's ensemble helpers (ensemble.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "ensemble.h"

#include "args.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int cli_is_model_file(const char *path) {
    struct stat st;
    /* only a regular file is looked into: a FIFO or device is input, and
     * reading it here would take what decode should read */
    if (!path || !strcmp(path, "-") || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char h[9];
    size_t got = fread(h, 1, sizeof h, f);
    fclose(f);
    if (got != sizeof h) return 0;
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | h[i];
    return n >= 2 && n < ((uint64_t)1 << 32) && h[8] == '{';
}

static const char *show(const char *s) { return s ? s : "(none)"; }

/* The first id where two vocabularies differ (or -1), by token. */
static int vocab_diff(const attend_vocab *a, const attend_vocab *b) {
    int na = attend_vocab_size(a), nb = attend_vocab_size(b), n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        const char *x = attend_vocab_token(a, i), *y = attend_vocab_token(b, i);
        if (!x || !y || strcmp(x, y)) return i;
    }
    return -1;
}

static int vocab_check(const char *cmd, const char *side, const cli_member *a, const attend_vocab *va,
                       const cli_member *b, const attend_vocab *vb, int nb) {
    int id = vocab_diff(va, vb);
    if (id < 0) return 0;
    const char *x = attend_vocab_token(va, id), *y = attend_vocab_token(vb, id);
    if (!y)
        cli_error(cmd, "model %d (%s): %s vocabulary has %d ids, model 1 (%s) has %d (id %d is '%s')", nb, b->path, side, attend_vocab_size(vb), a->path, attend_vocab_size(va), id, show(x));
    else if (!x)
        cli_error(cmd, "model %d (%s): %s vocabulary has %d ids, model 1 (%s) has %d (id %d is '%s')", nb, b->path, side, attend_vocab_size(vb), a->path, attend_vocab_size(va), id, y);
    else
        cli_error(cmd, "model %d (%s): %s vocabulary id %d is '%s', model 1 (%s) has '%s'", nb,
                b->path, side, id, y, a->path, x);
    return 1;
}

int cli_ensemble_check(const char *cmd, const cli_member *a, const cli_member *b, int nb) {
    int pa = a->cfg.decoder == ATTEND_DECODER_POINTER, pb = b->cfg.decoder == ATTEND_DECODER_POINTER;
    if (pa != pb) { /* pointers average distributions over source positions, the others over a vocabulary */
        cli_error(cmd,
                  "model %d (%s) is a pointer model (%s decoder) and model %d (%s) is not: an ensemble averages "
                  "distributions over one output space",
                  pa ? 1 : nb, pa ? a->path : b->path, attend_decoder_name((pa ? a : b)->cfg.decoder), pa ? nb : 1,
                  pa ? b->path : a->path);
        return 1;
    }
    if (a->tok != b->tok) {
        cli_error(cmd, "model %d (%s): tokenizer %s, model 1 (%s) has %s", nb, b->path,
                attend_tokenizer_name(b->tok), a->path, attend_tokenizer_name(a->tok));
        return 1;
    }
    if (!pa && vocab_check(cmd, "target", a, a->tv, b, b->tv, nb)) return 1; /* a pointer's outputs are positions */
    return vocab_check(cmd, "source", a, a->sv, b, b->sv, nb);
}
