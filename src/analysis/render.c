/*
 * render.c — pictures of alignments and results: the text heatmaps for
 * terminals (every style, attend_render_heatmap_text/_style), and what every
 * renderer shares (argument checks, XML escaping). The SVG heatmap is in
 * render_svg.c, the HTML page in render_html.c, line plots in plot.c.
 *
 * Dimension letters: T output (target) steps, S source positions; w [T,S] holds
 * one output step per row, row-major.
 *
 * Every function builds its result in a small growable string (at_sbuf,
 * src/io/text.h) and
 * hands it to the caller, who frees it. Allocation here is fine: rendering is
 * never in a hot loop. Append failures (out of memory, size overflow) latch in
 * the builder and surface once, as ATTEND_ERR_ALLOC, when the string is taken.
 *
 * Numbers are written with "%.*f"/"%.*g" and any ',' turned into '.', so a
 * caller's LC_NUMERIC cannot turn SVG coordinates into "0,5".
 *
 * Conventions the tests and docs rely on:
 *   - Weights may stray outside [0,1] by at most 1e-6 (softmax rounding); such
 *     values are clamped to the bound everywhere they are shown. Further out is
 *     ATTEND_ERR_ARG; NaN/Inf is ATTEND_ERR_NONFINITE naming [t,s].
 *   - T >= 1, S >= 1 and T*S <= 1000000 (AT_RENDER_MAX_CELLS), else
 *     ATTEND_ERR_SHAPE.
 *   - Tokens must be valid UTF-8 (ATTEND_ERR_FORMAT naming the array and
 *     index). NULL token arrays label positions 0, 1, ...
 *   - In XML output, & < > " ' are escaped, and characters XML 1.0 cannot carry
 *     (C0 controls other than tab/newline/CR, U+FFFE, U+FFFF) become U+FFFD.
 *
 * Text heatmap layout (attend_render_heatmap_text), with R the width of the
 * longest output label (at most 12 code points) and every source column 6
 * code points wide:
 *
 *     <R spaces> | <src0> <src1> ... |
 *     <out0 pad R> | cccccc cccccc ... | argmax=<s> (<src token>) w=<w, 2 decimals>
 *     ...
 *     ramp " .:-=+*#%@": ' ' = [0,0.1) ... '@' = [0.9,1] (ten equal bins)
 *
 * Each cell repeats its ramp character across the column's 6 places so rows
 * read as bars. The ramp bin is min(9, floor(10 w + 1e-6)): the 1e-6 keeps
 * float weights such as 0.7f (0.69999999) in the bin their decimal names.
 * Labels longer than their column keep their first width-1 code points and end
 * in '~'; widths count code points (wide CJK glyphs will not line up). Control
 * characters in tokens print as '?', so a token cannot break the layout. The
 * argmax is the first largest weight of the row; its token is printed whole.
 *
 * The grid styles (ATTEND_HEATMAP_SHADE, _PERCENT, _TSV; `attend decode
 * --align`, `attend demo`) draw a box instead, e.g. for a 4-token reversal:
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
 * Columns are as wide as the widest source token (1..6 code points; 3..6 for
 * percent), the label column as the widest output token (1..12); a lone space
 * token shows as '_', longer tokens are cut with '~'. These styles show the
 * weights as given (no range check: a NaN shades as ' ' and counts 0 percent),
 * allow T = 0 ("(no output tokens)") and need both token arrays.
 */#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/render_internal.h"

/* ------------------------------------------------------- heatmap arguments */

/* The label of position i: the token, or its number written into buf. */
const char *at_render_label_of(const char *const *tokens, int i, char buf[16]) {
    if (tokens) return tokens[i];
    snprintf(buf, 16, "%d", i);
    return buf;
}

static attend_status check_tokens(const char *const *tokens, int n, const char *name, attend_error *err) {
    if (!tokens) return ATTEND_OK;
    for (int i = 0; i < n; i++) {
        size_t bad;
        CHECK(tokens[i], err, ATTEND_ERR_NULL, "%s[%d] is NULL", name, i);
        CHECK(at_utf8_valid(tokens[i], strlen(tokens[i]), &bad, NULL), err, ATTEND_ERR_FORMAT,
              "%s[%d]: invalid UTF-8 at byte %zu", name, i, bad);
    }
    return ATTEND_OK;
}

attend_status at_render_check_text(const char *s, const char *name, attend_error *err) {
    size_t bad;
    if (s) CHECK(at_utf8_valid(s, strlen(s), &bad, NULL), err, ATTEND_ERR_FORMAT, "%s: invalid UTF-8 at byte %zu", name, bad);
    return ATTEND_OK;
}

/* Shared argument checks of the heatmaps (see the top of this file). */
attend_status at_render_check_heatmap(char **out, const attend_real *w, int T, int S, const char *const *src_tokens,
                                   const char *const *out_tokens, const char *title, const char *who,
                                   attend_error *err) {
    CHECK(out, err, ATTEND_ERR_NULL, "%s: out is NULL", who);
    *out = NULL;
    CHECK(w, err, ATTEND_ERR_NULL, "%s: weights are NULL", who);
    CHECK(T >= 1 && S >= 1, err, ATTEND_ERR_SHAPE, "%s: T=%d and S=%d must both be >= 1", who, T, S);
    CHECK((long long)T * S <= AT_RENDER_MAX_CELLS, err, ATTEND_ERR_SHAPE,
          "%s: T=%d x S=%d = %lld cells, more than the %d a heatmap may have", who, T, S, (long long)T * S,
          AT_RENDER_MAX_CELLS);
    for (int t = 0; t < T; t++) {
        for (int s = 0; s < S; s++) {
            double v = (double)w[(size_t)t * (size_t)S + (size_t)s];
            CHECK(isfinite(v), err, ATTEND_ERR_NONFINITE, "%s: weight [t=%d,s=%d] is %s", who, t, s,
                  isnan(v) ? "NaN" : (v > 0 ? "+Inf" : "-Inf"));
            CHECK(v >= -AT_RENDER_WEIGHT_TOL && v <= 1 + AT_RENDER_WEIGHT_TOL, err, ATTEND_ERR_ARG,
                  "%s: weight [t=%d,s=%d] = %g is outside [0,1]", who, t, s, v);
        }
    }
    TRY(check_tokens(src_tokens, S, "src_tokens", err));
    TRY(check_tokens(out_tokens, T, "out_tokens", err));
    TRY(at_render_check_text(title, "title", err));
    return ATTEND_OK;
}

double at_render_weight_at(const attend_real *w, int S, int t, int s) {
    double v = (double)w[(size_t)t * (size_t)S + (size_t)s];
    return v < 0 ? 0 : (v > 1 ? 1 : v);
}

static int argmax_row(const attend_real *w, int S, int t) {
    int best = 0;
    for (int s = 1; s < S; s++)
        if (at_render_weight_at(w, S, t, s) > at_render_weight_at(w, S, t, best)) best = s;
    return best;
}

/* Writes s (valid UTF-8) escaped for XML/HTML text and attribute values; when
 * max_cp > 0 and s is longer, its first max_cp - 1 code points and "…". */
void at_render_xywh(at_sbuf *b, double x, double y, double w, double h) {
    at_sb_puts(b, " x=\"");
    at_sb_f(b, x, 2);
    at_sb_puts(b, "\" y=\"");
    at_sb_f(b, y, 2);
    at_sb_puts(b, "\" width=\"");
    at_sb_f(b, w, 2);
    at_sb_puts(b, "\" height=\"");
    at_sb_f(b, h, 2);
    at_sb_puts(b, "\"");
}

void at_render_xml(at_sbuf *b, const char *s, size_t max_cp) {
    const unsigned char *p = (const unsigned char *)s;
    size_t total = max_cp ? at_utf8_count(s) : 0, written = 0;
    while (*p) {
        if (max_cp && total > max_cp && written == max_cp - 1) {
            at_sb_puts(b, "\xE2\x80\xA6"); /* U+2026 HORIZONTAL ELLIPSIS */
            return;
        }
        uint32_t cp;
        int n = at_utf8_next(p, SIZE_MAX, &cp, NULL);
        if (!n) n = 1, cp = 0xFFFD; /* not reached for validated input */
        switch (cp) {
        case '&': at_sb_puts(b, "&amp;"); break;
        case '<': at_sb_puts(b, "&lt;"); break;
        case '>': at_sb_puts(b, "&gt;"); break;
        case '"': at_sb_puts(b, "&quot;"); break;
        case '\'': at_sb_puts(b, "&#39;"); break;
        default:
            if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xFFFE || cp == 0xFFFF ||
                cp == 0xFFFD)
                at_sb_puts(b, "\xEF\xBF\xBD"); /* U+FFFD */
            else
                at_sb_put(b, (const char *)p, (size_t)n);
        }
        p += n;
        written++;
    }
}

/* Writes s (UTF-8) in exactly `width` code points (0: whole, unpadded): when
 * longer, its first width - 1 code points and '~'; when shorter, padded with
 * spaces, on the left with FIT_RIGHT, else on the right unless FIT_LAST.
 * FIT_CTRL prints control characters as '?'; FIT_SPACE shows a lone " " as "_". */
enum { FIT_RIGHT = 1, FIT_LAST = 2, FIT_CTRL = 4, FIT_SPACE = 8 };
static void fit(at_sbuf *b, const char *s, size_t width, int flags) {
    if ((flags & FIT_SPACE) && !strcmp(s, " ")) s = "_";
    size_t total = at_utf8_count(s), written = 0;
    if (width && total < width && (flags & FIT_RIGHT)) at_sb_repeat(b, ' ', (int)(width - total));
    for (const char *p = s; *p; written++) {
        if (width && total > width && written == width - 1) {
            at_sb_put(b, "~", 1);
            written++;
            break;
        }
        size_t n = 1;
        while (((unsigned char)p[n] & 0xC0) == 0x80) n++;
        unsigned char c = (unsigned char)p[0];
        if ((flags & FIT_CTRL) && (c < 0x20 || c == 0x7F))
            at_sb_put(b, "?", 1);
        else
            at_sb_put(b, p, n);
        p += n;
    }
    if (width && written < width && !(flags & (FIT_RIGHT | FIT_LAST))) at_sb_repeat(b, ' ', (int)(width - written));
}

/* The ramp character of weight w: min(9, floor(10 w + 1e-6)); the 1e-6 lets
 * a float 0.7 (0.69999999) count as 0.7. Negative and NaN: ' '. */
#define AT_RAMP " .:-=+*#%@"
static char shade(double w) {
    int level = (int)floor(w * 10.0 + 1e-6);
    if (!(level >= 0)) level = 0;
    if (level > 9) level = 9;
    return AT_RAMP[level];
}

/* ------------------------------------------------------------ text heatmap */

static attend_status heatmap_ramp(char **out, const attend_real *w, int T, int S, const char *const *src_tokens,
                                  const char *const *out_tokens, const char *who, attend_error *err) {
    TRY(at_render_check_heatmap(out, w, T, S, src_tokens, out_tokens, NULL, who, err));
    char buf[16];
    size_t R = 1;
    for (int t = 0; t < T; t++) {
        size_t n = at_utf8_count(at_render_label_of(out_tokens, t, buf));
        if (n > R) R = n;
    }
    if (R > AT_TEXT_OUT_WIDTH) R = AT_TEXT_OUT_WIDTH;

    at_sbuf b = {0};
    at_sb_repeat(&b, ' ', (int)R);
    at_sb_puts(&b, " |");
    for (int s = 0; s < S; s++) {
        at_sb_put(&b, " ", 1);
        fit(&b, at_render_label_of(src_tokens, s, buf), AT_TEXT_SRC_WIDTH, FIT_CTRL);
    }
    at_sb_puts(&b, " |\n");
    for (int t = 0; t < T; t++) {
        fit(&b, at_render_label_of(out_tokens, t, buf), R, FIT_CTRL);
        at_sb_puts(&b, " |");
        for (int s = 0; s < S; s++) {
            at_sb_put(&b, " ", 1);
            at_sb_repeat(&b, shade(at_render_weight_at(w, S, t, s)), AT_TEXT_SRC_WIDTH);
        }
        int a = argmax_row(w, S, t);
        at_sb_printf(&b, " | argmax=%d (", a);
        fit(&b, at_render_label_of(src_tokens, a, buf), 0, FIT_CTRL);
        at_sb_puts(&b, ") w=");
        at_sb_f(&b, at_render_weight_at(w, S, t, a), 2);
        at_sb_put(&b, "\n", 1);
    }
    at_sb_puts(&b, "ramp \"" AT_RAMP "\": ' ' = [0,0.1) ... '@' = [0.9,1] (ten equal bins)\n");
    return at_sb_finish(&b, out, who, err);
}

/* The grid styles (the top of this file); arguments are checked. */
static void heatmap_grid(at_sbuf *b, const attend_real *w, int T, int S, const char *const *src_tokens,
                         const char *const *out_tokens, attend_heatmap_style style) {
    if (style == ATTEND_HEATMAP_TSV) {
        for (int s = 0; s < S; s++) at_sb_printf(b, "\t%s", src_tokens[s]);
        at_sb_put(b, "\n", 1);
        for (int t = 0; t < T; t++) {
            at_sb_puts(b, out_tokens[t]);
            for (int s = 0; s < S; s++) at_sb_printf(b, "\t%.4f", (double)w[(size_t)t * S + s]);
            at_sb_put(b, "\n", 1);
        }
        return;
    }
    int pct = style == ATTEND_HEATMAP_PERCENT;
    size_t label_w = 1, cell_w = 1;
    for (int t = 0; t < T; t++) {
        size_t n = at_utf8_count(out_tokens[t]);
        if (n > label_w) label_w = n;
    }
    for (int s = 0; s < S; s++) {
        size_t n = at_utf8_count(src_tokens[s]);
        if (n > cell_w) cell_w = n;
    }
    if (label_w > AT_TEXT_OUT_WIDTH) label_w = AT_TEXT_OUT_WIDTH;
    if (cell_w > AT_TEXT_SRC_WIDTH) cell_w = AT_TEXT_SRC_WIDTH;
    if (pct && cell_w < 3) cell_w = 3;
    int border_len = S * ((int)cell_w + 1) + 1;

    at_sb_repeat(b, ' ', (int)label_w + 2);
    for (int s = 0; s < S; s++) {
        at_sb_put(b, " ", 1);
        fit(b, src_tokens[s], cell_w, FIT_SPACE | (pct ? FIT_RIGHT : 0) | (s == S - 1 ? FIT_LAST : 0));
    }
    at_sb_put(b, "\n", 1);
    for (int pass = 0; pass < 2; pass++) {
        at_sb_repeat(b, ' ', (int)label_w);
        at_sb_puts(b, " +");
        at_sb_repeat(b, '-', border_len);
        at_sb_puts(b, "+\n");
        for (int t = 0; !pass && t < T; t++) {
            fit(b, out_tokens[t], label_w, FIT_SPACE | FIT_RIGHT);
            at_sb_puts(b, " |");
            for (int s = 0; s < S; s++) {
                double x = (double)w[(size_t)t * S + s];
                at_sb_put(b, " ", 1);
                if (pct)
                    at_sb_printf(b, "%*ld", (int)cell_w, isfinite(x) ? lround(x * 100.0) : 0L);
                else
                    at_sb_repeat(b, shade(x), (int)cell_w);
            }
            at_sb_puts(b, " |\n");
        }
        if (!pass && T == 0) {
            at_sb_repeat(b, ' ', (int)label_w);
            at_sb_puts(b, " | (no output tokens)\n");
        }
    }
    at_sb_repeat(b, ' ', (int)label_w + 2);
    at_sb_puts(b, pct ? "weight per cell in hundredths\n"
                      : "weight per cell: ' ' < 0.1 <= '.' < 0.2 ... '%' < 0.9 <= '@'\n");
}

attend_status attend_render_heatmap_text(char **out, const attend_real *w, int T, int S,
                                         const char *const *src_tokens, const char *const *out_tokens,
                                         attend_error *err) {
    return heatmap_ramp(out, w, T, S, src_tokens, out_tokens, "attend_render_heatmap_text", err);
}

attend_status attend_render_heatmap_text_style(char **out, const attend_real *w, int T, int S,
                                               const char *const *src_tokens, const char *const *out_tokens,
                                               attend_heatmap_style style, attend_error *err) {
    static const char who[] = "attend_render_heatmap_text_style";
    if (style == ATTEND_HEATMAP_RAMP) return heatmap_ramp(out, w, T, S, src_tokens, out_tokens, who, err);
    CHECK(out, err, ATTEND_ERR_NULL, "%s: out is NULL", who);
    *out = NULL;
    CHECK(style == ATTEND_HEATMAP_SHADE || style == ATTEND_HEATMAP_PERCENT || style == ATTEND_HEATMAP_TSV, err,
          ATTEND_ERR_ARG, "%s: unknown style %d", who, (int)style);
    CHECK(T >= 0 && S >= 0, err, ATTEND_ERR_SHAPE, "%s: T=%d and S=%d must both be >= 0", who, T, S);
    CHECK((long long)T * S <= AT_RENDER_MAX_CELLS, err, ATTEND_ERR_SHAPE,
          "%s: T=%d x S=%d = %lld cells, more than the %d a heatmap may have", who, T, S, (long long)T * S,
          AT_RENDER_MAX_CELLS);
    CHECK(w || (long long)T * S == 0, err, ATTEND_ERR_NULL, "%s: weights are NULL", who);
    CHECK((src_tokens || S == 0) && (out_tokens || T == 0), err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          src_tokens || S == 0 ? "out_tokens" : "src_tokens");
    for (int s = 0; s < S; s++) CHECK(src_tokens[s], err, ATTEND_ERR_NULL, "%s: src_tokens[%d] is NULL", who, s);
    for (int t = 0; t < T; t++) CHECK(out_tokens[t], err, ATTEND_ERR_NULL, "%s: out_tokens[%d] is NULL", who, t);
    at_sbuf b = {0};
    heatmap_grid(&b, w, T, S, src_tokens, out_tokens, style);
    return at_sb_finish(&b, out, who, err);
}
