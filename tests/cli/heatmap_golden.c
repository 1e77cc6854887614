/*
 * heatmap_golden.c — golden test of the alignment renderer (cli/heatmap.c).
 * Renders fixed alignments in every style and compares the bytes with
 * tests/cli/heatmap_golden.txt. The weights are exact in float and pass
 * through no matrix product, so the output is the same on every build.
 *
 *   heatmap_golden GOLDEN            compare (exit 1 and the first difference)
 *   heatmap_golden --update GOLDEN   rewrite GOLDEN (review it before committing)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap.h"

/* Every ramp level and its boundaries: 0, 0.05, 0.1, 0.15 ... 0.9, 1. */
static void render(FILE *f) {
    /* a 3-token reversal [T=3,S=3], with a little weight off the anti-diagonal */
    static const attend_real rev[3 * 3] = {
        0.0f, 0.125f, 0.875f, /* c */
        0.0f, 1.0f, 0.0f,     /* b */
        0.75f, 0.25f, 0.0f,   /* a */
    };
    static const char *const rev_src[3] = {"a", "b", "c"};
    static const char *const rev_out[3] = {"c", "b", "a"};
    /* the ramp: row t holds weight t/10 + 1/20 in column 0 and t/10 in column 1 */
    attend_real ramp[11 * 2];
    static const char *const ramp_src[2] = {"mid", "low"};
    static const char *const ramp_out[11] = {"w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9", "w10"};
    for (int t = 0; t <= 10; t++) {
        ramp[t * 2 + 0] = t < 10 ? (attend_real)(t * 0.1 + 0.05) : 1.0f;
        ramp[t * 2 + 1] = (attend_real)(t * 0.1);
    }
    /* words: long tokens are cut, a space token shows as '_', UTF-8 counts per code point */
    static const attend_real words[2 * 4] = {
        0.5f, 0.5f, 0.0f, 0.0f,
        0.0f, 0.0f, 0.25f, 0.75f,
    };
    static const char *const words_src[4] = {"the", "attention", " ", "\xc3\xa9t\xc3\xa9"};
    static const char *const words_out[2] = {"l'attention", "extraordinarily-long"};

    for (int style = HEATMAP_SHADE; style <= HEATMAP_TSV; style++) {
        static const char *const names[3] = {"shade", "percent", "tsv"};
        fprintf(f, "== reversal, %s ==\n", names[style]);
        heatmap_print(f, rev, 3, 3, rev_src, rev_out, (heatmap_style)style);
        fprintf(f, "== ramp, %s ==\n", names[style]);
        heatmap_print(f, ramp, 11, 2, ramp_src, ramp_out, (heatmap_style)style);
        fprintf(f, "== words, %s ==\n", names[style]);
        heatmap_print(f, words, 2, 4, words_src, words_out, (heatmap_style)style);
    }
    fprintf(f, "== no output tokens ==\n");
    heatmap_print(f, rev, 0, 3, rev_src, rev_out, HEATMAP_SHADE);
}

static char *slurp(FILE *f, size_t *len) {
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) free(b);
            b = nb;
        }
    }
    *len = n;
    return b;
}

int main(int argc, char **argv) {
    int update = argc == 3 && !strcmp(argv[1], "--update");
    if (argc != 2 && !update) {
        fprintf(stderr, "usage: heatmap_golden [--update] GOLDEN\n");
        return 2;
    }
    const char *path = argv[argc - 1];
    if (update) {
        FILE *f = fopen(path, "wb");
        if (!f) return perror(path), 1;
        render(f);
        if (fclose(f)) return perror(path), 1;
        printf("heatmap_golden: wrote %s\n", path);
        return 0;
    }
    FILE *tmp = tmpfile();
    FILE *g = fopen(path, "rb");
    if (!tmp || !g) return perror(!tmp ? "tmpfile" : path), 1;
    render(tmp);
    rewind(tmp);
    size_t n_got, n_want;
    char *got = slurp(tmp, &n_got), *want = slurp(g, &n_want);
    fclose(tmp);
    fclose(g);
    if (!got || !want) return fprintf(stderr, "heatmap_golden: out of memory\n"), 1;
    size_t i = 0, line = 1;
    while (i < n_got && i < n_want && got[i] == want[i]) line += got[i++] == '\n';
    int same = n_got == n_want && i == n_got;
    if (!same) {
        size_t a = i;
        while (a > 0 && got[a - 1] != '\n') a--;
        size_t eg = a, ew = a;
        while (eg < n_got && got[eg] != '\n') eg++;
        while (ew < n_want && want[ew] != '\n') ew++;
        fprintf(stderr, "heatmap_golden: %s line %zu differs\n  got:  %.*s\n  want: %.*s\n", path, line,
                (int)(eg - a), got + a, (int)(ew > a ? ew - a : 0), n_want > a ? want + a : "");
    }
    printf("heatmap_golden: %d passed, %d failed\n", same, !same);
    free(got);
    free(want);
    return same ? 0 : 1;
}
