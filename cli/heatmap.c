/*
 * heatmap.c — renders an alignment w [T,S] (T output tokens, S source tokens)
 * as text. The shade style, for a 4-token reversal:
 *
 *       a b c d
 *     +---------+
 *   d |       @ |
 *   c |     @   |
 *   b |   @ .   |
 *   a | @       |
 *     +---------+
 *     weight per cell: ' ' < 0.1 <= '.' < 0.2 ... '%' < 0.9 <= '@'
 *
 * Dimension letters: T output tokens (rows), S source tokens (columns).
 */
#include "heatmap.h"

#include <math.h>
#include <string.h>

#define SRC_MAX_WIDTH 6
#define OUT_MAX_WIDTH 12

int heatmap_style_from_name(const char *name) {
    if (!strcmp(name, "shade")) return HEATMAP_SHADE;
    if (!strcmp(name, "percent")) return HEATMAP_PERCENT;
    if (!strcmp(name, "tsv")) return HEATMAP_TSV;
    return -1;
}

/* Display width of UTF-8 text: one per code point. */
static int text_width(const char *s) {
    int w = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) w += (*c & 0xC0) != 0x80;
    return w;
}

/* Prints token s in exactly `width` columns: cut with '~' when longer, padded
 * with spaces on the left (right_align) or the right (unless last: no trailing
 * spaces). A lone space shows as '_'. */
static void put_token(FILE *f, const char *s, int width, int right_align, int last) {
    if (!strcmp(s, " ")) s = "_";
    int w = text_width(s);
    if (w > width) {
        int keep = width - 1, seen = 0;
        const char *c = s;
        for (; *c; c++) {
            if ((*c & 0xC0) != 0x80 && seen++ == keep) break;
            fputc(*c, f);
        }
        fputc('~', f);
        return;
    }
    if (right_align)
        for (int i = w; i < width; i++) fputc(' ', f);
    fputs(s, f);
    if (!right_align && !last)
        for (int i = w; i < width; i++) fputc(' ', f);
}

static void pad(FILE *f, int n) {
    for (int i = 0; i < n; i++) fputc(' ', f);
}

static void border(FILE *f, int label_w, int S, int cell_w) {
    pad(f, label_w);
    fputs(" +", f);
    for (int i = 0; i < S * (cell_w + 1) + 1; i++) fputc('-', f);
    fputs("+\n", f);
}

/* The level of weight w; the 1e-6 lets a float 0.7 (0.69999999) count as 0.7. */
static char shade(double w) {
    int level = (int)floor(w * 10.0 + 1e-6);
    if (!(level >= 0)) level = 0; /* also NaN */
    if (level > 9) level = 9;
    return HEATMAP_RAMP[level];
}

void heatmap_print(FILE *f, const attend_real *w, int T, int S, const char *const *src_tokens,
                   const char *const *out_tokens, heatmap_style style) {
    if (style == HEATMAP_TSV) {
        for (int j = 0; j < S; j++) fprintf(f, "\t%s", src_tokens[j]);
        fputc('\n', f);
        for (int t = 0; t < T; t++) {
            fputs(out_tokens[t], f);
            for (int j = 0; j < S; j++) fprintf(f, "\t%.4f", (double)w[(size_t)t * S + j]);
            fputc('\n', f);
        }
        return;
    }
    int label_w = 1, cell_w = 1;
    for (int t = 0; t < T; t++) {
        int tw = text_width(out_tokens[t]);
        if (tw > label_w) label_w = tw;
    }
    for (int j = 0; j < S; j++) {
        int tw = text_width(src_tokens[j]);
        if (tw > cell_w) cell_w = tw;
    }
    if (label_w > OUT_MAX_WIDTH) label_w = OUT_MAX_WIDTH;
    if (cell_w > SRC_MAX_WIDTH) cell_w = SRC_MAX_WIDTH;
    if (style == HEATMAP_PERCENT && cell_w < 3) cell_w = 3;

    pad(f, label_w + 2);
    for (int j = 0; j < S; j++) {
        fputc(' ', f);
        put_token(f, src_tokens[j], cell_w, style == HEATMAP_PERCENT, j == S - 1);
    }
    fputc('\n', f);
    border(f, label_w, S, cell_w);
    for (int t = 0; t < T; t++) {
        put_token(f, out_tokens[t], label_w, 1, 0);
        fputs(" |", f);
        for (int j = 0; j < S; j++) {
            double x = (double)w[(size_t)t * S + j];
            fputc(' ', f);
            if (style == HEATMAP_PERCENT) {
                long pct = isfinite(x) ? lround(x * 100.0) : 0;
                fprintf(f, "%*ld", cell_w, pct);
            } else {
                for (int k = 0; k < cell_w; k++) fputc(shade(x), f);
            }
        }
        fputs(" |\n", f);
    }
    if (T == 0) {
        pad(f, label_w);
        fputs(" | (no output tokens)\n", f);
    }
    border(f, label_w, S, cell_w);
    pad(f, label_w + 2);
    if (style == HEATMAP_PERCENT)
        fputs("weight per cell in hundredths\n", f);
    else
        fputs("weight per cell: ' ' < 0.1 <= '.' < 0.2 ... '%' < 0.9 <= '@'\n", f);
}
