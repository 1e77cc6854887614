/*
 * render.c — pictures of alignments and results: a text heatmap for terminals,
 * SVG heatmaps, a self-contained HTML page, and SVG line plots.
 *
 * Dimension letters: T output (target) steps, S source positions; w [T,S] holds
 * one output step per row, row-major.
 *
 * Every function builds its result in a small growable string (sbuf below) and
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
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define AT_RENDER_MAX_CELLS 1000000   /* T*S bound for heatmaps */
#define AT_RENDER_MAX_POINTS 1000000  /* total points of a line plot */
#define AT_RENDER_MAX_SERIES 64
#define AT_RENDER_WEIGHT_TOL 1e-6     /* allowed excursion outside [0,1] */
#define AT_TEXT_SRC_WIDTH 6           /* source column width, code points */
#define AT_TEXT_OUT_WIDTH 12          /* output label width, code points */
#define AT_SVG_LABEL_MAX 20           /* code points of an SVG axis label before "…" */

/* ----------------------------------------------------------- string builder */

typedef struct {
    char *p;     /* NUL-terminated once anything was appended */
    size_t len;  /* bytes, without the NUL */
    size_t cap;  /* bytes allocated */
    int bad;     /* an append failed (out of memory or size overflow) */
} sbuf;

/* Room for `extra` more bytes plus the NUL. */
static int sb_reserve(sbuf *b, size_t extra) {
    size_t need;
    if (b->bad) return 0;
    if (!at_add_size(b->len, extra, &need) || !at_add_size(need, 1, &need)) {
        b->bad = 1;
        return 0;
    }
    if (need <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *q = realloc(b->p, cap);
    if (!q) {
        b->bad = 1;
        return 0;
    }
    b->p = q;
    b->cap = cap;
    return 1;
}

static void sb_put(sbuf *b, const char *s, size_t n) {
    if (!sb_reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_repeat(sbuf *b, char c, int n) {
    if (n <= 0 || !sb_reserve(b, (size_t)n)) return;
    memset(b->p + b->len, c, (size_t)n);
    b->len += (size_t)n;
    b->p[b->len] = '\0';
}

/* printf-style append. Use it for integers and strings; numbers with a
 * fraction go through sb_f/sb_g (locale-proof). */
static void sb_printf(sbuf *b, const char *fmt, ...) AT_PRINTF(2, 3);
static void sb_printf(sbuf *b, const char *fmt, ...) {
    va_list ap;
    if (!sb_reserve(b, 0)) return;
    va_start(ap, fmt);
    int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->bad = 1;
        return;
    }
    if ((size_t)n >= b->cap - b->len) {
        if (!sb_reserve(b, (size_t)n)) return;
        va_start(ap, fmt);
        vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

/* Appends the snprintf result of one number, with ',' as '.' and "-0" as "0". */
static void sb_number(sbuf *b, const char *fmt, int prec, double v) {
    char tmp[64];
    int n = snprintf(tmp, sizeof tmp, fmt, prec, v);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        b->bad = 1;
        return;
    }
    int nonzero = 0;
    for (int i = 0; i < n; i++) {
        if (tmp[i] == ',') tmp[i] = '.';
        if (tmp[i] >= '1' && tmp[i] <= '9') nonzero = 1;
        if (tmp[i] == 'e') break;
    }
    const char *s = tmp;
    if (tmp[0] == '-' && !nonzero) s++;
    sb_puts(b, s);
}
static void sb_f(sbuf *b, double v, int decimals) { sb_number(b, "%.*f", decimals, v); }
static void sb_g(sbuf *b, double v, int digits) { sb_number(b, "%.*g", digits, v); }

/* Hands the built string to *out, or frees it and reports ATTEND_ERR_ALLOC. */
static attend_status sb_finish(sbuf *b, char **out, const char *what, attend_error *err) {
    sb_reserve(b, 0);
    if (b->bad) {
        size_t len = b->len;
        free(b->p);
        b->p = NULL;
        return at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory building the output (%zu bytes so far)", what,
                       len);
    }
    *out = b->p;
    b->p = NULL;
    return at_ok(err);
}

/* ------------------------------------------------------------------- UTF-8 */

/* Length of the well-formed UTF-8 sequence at s (1..4), with its code point in
 * *cp; 0 when the bytes there are not valid UTF-8 (overlong, surrogate, above
 * U+10FFFF, truncated). s is NUL-terminated. */
static int utf8_next(const unsigned char *s, unsigned *cp) {
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    int n;
    unsigned min;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        min = 0x80;
        c &= 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        min = 0x800;
        c &= 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        min = 0x10000;
        c &= 0x07;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3Fu);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    *cp = c;
    return n;
}

/* 1 when s is valid UTF-8; else 0 with the offset of the first bad byte. */
static int utf8_valid(const char *s, size_t *bad) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    unsigned cp;
    while (p[i]) {
        int n = utf8_next(p + i, &cp);
        if (!n) {
            *bad = i;
            return 0;
        }
        i += (size_t)n;
    }
    return 1;
}

/* Code points in a valid UTF-8 string. */
static size_t utf8_count(const char *s) {
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xC0) != 0x80) n++;
    return n;
}

/* Writes s (valid UTF-8) escaped for XML/HTML text and attribute values; when
 * max_cp > 0 and s is longer, its first max_cp - 1 code points and "…". */
static void sb_xml(sbuf *b, const char *s, size_t max_cp) {
    const unsigned char *p = (const unsigned char *)s;
    size_t total = max_cp ? utf8_count(s) : 0, written = 0;
    while (*p) {
        if (max_cp && total > max_cp && written == max_cp - 1) {
            sb_puts(b, "\xE2\x80\xA6"); /* U+2026 HORIZONTAL ELLIPSIS */
            return;
        }
        unsigned cp;
        int n = utf8_next(p, &cp);
        if (!n) n = 1, cp = 0xFFFD; /* not reached for validated input */
        switch (cp) {
        case '&': sb_puts(b, "&amp;"); break;
        case '<': sb_puts(b, "&lt;"); break;
        case '>': sb_puts(b, "&gt;"); break;
        case '"': sb_puts(b, "&quot;"); break;
        case '\'': sb_puts(b, "&#39;"); break;
        default:
            if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xFFFE || cp == 0xFFFF ||
                cp == 0xFFFD)
                sb_puts(b, "\xEF\xBF\xBD"); /* U+FFFD */
            else
                sb_put(b, (const char *)p, (size_t)n);
        }
        p += n;
        written++;
    }
}

/* Writes s (valid UTF-8) for the text heatmap in exactly `width` code points:
 * cut to width - 1 plus '~' when longer, padded with spaces when shorter
 * (width 0: whole, unpadded). Control characters print as '?'. */
static void sb_text_fit(sbuf *b, const char *s, size_t width) {
    const unsigned char *p = (const unsigned char *)s;
    size_t total = utf8_count(s), written = 0;
    while (*p) {
        if (width && total > width && written == width - 1) {
            sb_put(b, "~", 1);
            written++;
            break;
        }
        unsigned cp;
        int n = utf8_next(p, &cp);
        if (!n) n = 1, cp = '?';
        if (cp < 0x20 || cp == 0x7F)
            sb_put(b, "?", 1);
        else
            sb_put(b, (const char *)p, (size_t)n);
        p += n;
        written++;
    }
    if (width && written < width) sb_repeat(b, ' ', (int)(width - written));
}

/* ------------------------------------------------------- heatmap arguments */

/* The label of position i: the token, or its number written into buf. */
static const char *label_of(const char *const *tokens, int i, char buf[16]) {
    if (tokens) return tokens[i];
    snprintf(buf, 16, "%d", i);
    return buf;
}

static attend_status check_tokens(const char *const *tokens, int n, const char *name, attend_error *err) {
    if (!tokens) return ATTEND_OK;
    for (int i = 0; i < n; i++) {
        size_t bad;
        CHECK(tokens[i], err, ATTEND_ERR_NULL, "%s[%d] is NULL", name, i);
        CHECK(utf8_valid(tokens[i], &bad), err, ATTEND_ERR_FORMAT, "%s[%d]: invalid UTF-8 at byte %zu", name, i,
              bad);
    }
    return ATTEND_OK;
}

static attend_status check_text(const char *s, const char *name, attend_error *err) {
    size_t bad;
    if (s) CHECK(utf8_valid(s, &bad), err, ATTEND_ERR_FORMAT, "%s: invalid UTF-8 at byte %zu", name, bad);
    return ATTEND_OK;
}

/* Shared argument checks of the heatmaps (see the top of this file). */
static attend_status check_heatmap(char **out, const attend_real *w, int T, int S, const char *const *src_tokens,
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
    TRY(check_text(title, "title", err));
    return ATTEND_OK;
}

static double weight_at(const attend_real *w, int S, int t, int s) {
    double v = (double)w[(size_t)t * (size_t)S + (size_t)s];
    return v < 0 ? 0 : (v > 1 ? 1 : v);
}

static int argmax_row(const attend_real *w, int S, int t) {
    int best = 0;
    for (int s = 1; s < S; s++)
        if (weight_at(w, S, t, s) > weight_at(w, S, t, best)) best = s;
    return best;
}

/* ------------------------------------------------------------ text heatmap */

#define AT_RAMP " .:-=+*#%@"

attend_status attend_render_heatmap_text(char **out, const attend_real *w, int T, int S,
                                         const char *const *src_tokens, const char *const *out_tokens,
                                         attend_error *err) {
    TRY(check_heatmap(out, w, T, S, src_tokens, out_tokens, NULL, "attend_render_heatmap_text", err));
    char buf[16];
    size_t R = 1;
    for (int t = 0; t < T; t++) {
        size_t n = utf8_count(label_of(out_tokens, t, buf));
        if (n > R) R = n;
    }
    if (R > AT_TEXT_OUT_WIDTH) R = AT_TEXT_OUT_WIDTH;

    sbuf b = {0};
    sb_repeat(&b, ' ', (int)R);
    sb_puts(&b, " |");
    for (int s = 0; s < S; s++) {
        sb_put(&b, " ", 1);
        sb_text_fit(&b, label_of(src_tokens, s, buf), AT_TEXT_SRC_WIDTH);
    }
    sb_puts(&b, " |\n");
    for (int t = 0; t < T; t++) {
        sb_text_fit(&b, label_of(out_tokens, t, buf), R);
        sb_puts(&b, " |");
        for (int s = 0; s < S; s++) {
            int bin = (int)floor(10.0 * weight_at(w, S, t, s) + 1e-6);
            if (bin > 9) bin = 9;
            sb_put(&b, " ", 1);
            sb_repeat(&b, AT_RAMP[bin], AT_TEXT_SRC_WIDTH);
        }
        int a = argmax_row(w, S, t);
        sb_printf(&b, " | argmax=%d (", a);
        sb_text_fit(&b, label_of(src_tokens, a, buf), 0);
        sb_puts(&b, ") w=");
        sb_f(&b, weight_at(w, S, t, a), 2);
        sb_put(&b, "\n", 1);
    }
    sb_puts(&b, "ramp \"" AT_RAMP "\": ' ' = [0,0.1) ... '@' = [0.9,1] (ten equal bins)\n");
    return sb_finish(&b, out, "attend_render_heatmap_text", err);
}

/* ------------------------------------------------------------- SVG heatmap */

/* Sequential scale: linear interpolation from white (w = 0) to dark blue
 * #08306b (w = 1), per sRGB channel, rounded. */
static void scale_colour(double v, char hex[8]) {
    static const int lo[3] = {255, 255, 255}, hi[3] = {0x08, 0x30, 0x6b};
    int c[3];
    for (int i = 0; i < 3; i++) c[i] = (int)lround(lo[i] + v * (hi[i] - lo[i]));
    snprintf(hex, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}

#define AT_FONT_FAMILY "DejaVu Sans, Helvetica, Arial, sans-serif"
#define AT_CHAR_W 7.8 /* estimated advance of one character at font-size 13 */

/* The heatmap SVG. embed != 0 leaves out the XML declaration (for inlining in
 * HTML) and adds a hidden row-highlight rect (id "attend-rowhl") for the page's
 * script. Arguments are already checked. */
static void heatmap_svg(sbuf *b, const attend_real *w, int T, int S, const char *const *src_tokens,
                        const char *const *out_tokens, const char *title, int embed) {
    char buf[16], hex[8];
    size_t src_cp = 1, out_cp = 1;
    for (int s = 0; s < S; s++) {
        size_t n = utf8_count(label_of(src_tokens, s, buf));
        if (n > src_cp) src_cp = n;
    }
    for (int t = 0; t < T; t++) {
        size_t n = utf8_count(label_of(out_tokens, t, buf));
        if (n > out_cp) out_cp = n;
    }
    if (src_cp > AT_SVG_LABEL_MAX) src_cp = AT_SVG_LABEL_MAX;
    if (out_cp > AT_SVG_LABEL_MAX) out_cp = AT_SVG_LABEL_MAX;

    int big = T > S ? T : S;
    double cell = floor(560.0 / big);
    if (cell > 40) cell = 40;
    if (cell < 14) cell = 14;
    double src_w = (double)src_cp * AT_CHAR_W;
    int rotate = src_w > cell - 4;
    double left = 16 + (double)out_cp * AT_CHAR_W + 8;
    double top = 12 + (title ? 30 : 0) + (rotate ? src_w * 0.7072 + 12 : 22);
    double gw = S * cell, gh = T * cell;
    double bar_x = left + gw + 24, bar_h = gh < 120 ? 120 : gh;
    double width = bar_x + 14 + 48;
    if (rotate && left + gw - cell / 2 + src_w * 0.7072 + 12 > width) width = left + gw - cell / 2 + src_w * 0.7072 + 12;
    if (title) {
        double tw = 16 + (double)utf8_count(title) * 9.5;
        if (tw > width) width = tw;
    }
    double height = top + bar_h + 36;

    if (!embed) sb_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    sb_puts(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"");
    sb_f(b, width, 0);
    sb_puts(b, "\" height=\"");
    sb_f(b, height, 0);
    sb_puts(b, "\" viewBox=\"0 0 ");
    sb_f(b, width, 0);
    sb_put(b, " ", 1);
    sb_f(b, height, 0);
    sb_puts(b, "\" font-family=\"" AT_FONT_FAMILY "\" font-size=\"13\" role=\"img\" aria-label=\"");
    if (title) sb_xml(b, title, 0);
    else sb_puts(b, "attention heatmap");
    sb_puts(b, "\">\n");
    if (title) {
        sb_puts(b, "<title>");
        sb_xml(b, title, 0);
        sb_puts(b, "</title>\n");
    }
    sb_puts(b, "<defs><linearGradient id=\"attend-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">");
    for (int i = 0; i <= 4; i++) {
        scale_colour(i / 4.0, hex);
        sb_puts(b, "<stop offset=\"");
        sb_f(b, i / 4.0, 2);
        sb_printf(b, "\" stop-color=\"%s\"/>", hex);
    }
    sb_puts(b, "</linearGradient></defs>\n");
    sb_puts(b, "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    if (title) {
        sb_puts(b, "<text x=\"16\" y=\"28\" font-size=\"17\" font-weight=\"bold\" fill=\"#111111\">");
        sb_xml(b, title, 0);
        sb_puts(b, "</text>\n");
    }

    /* source labels along the top */
    sb_puts(b, "<g class=\"src-labels\" fill=\"#222222\">\n");
    for (int s = 0; s < S; s++) {
        const char *tok = label_of(src_tokens, s, buf);
        double x = left + (s + 0.5) * cell, y = top - 8;
        sb_puts(b, "<text x=\"");
        sb_f(b, x, 2);
        sb_puts(b, "\" y=\"");
        sb_f(b, y, 2);
        if (rotate) {
            sb_puts(b, "\" text-anchor=\"start\" transform=\"rotate(-45 ");
            sb_f(b, x, 2);
            sb_put(b, " ", 1);
            sb_f(b, y, 2);
            sb_puts(b, ")");
        } else {
            sb_puts(b, "\" text-anchor=\"middle");
        }
        sb_printf(b, "\" data-s=\"%d\">", s);
        sb_xml(b, tok, AT_SVG_LABEL_MAX);
        sb_puts(b, "<title>");
        sb_xml(b, tok, 0);
        sb_puts(b, "</title></text>\n");
    }
    sb_puts(b, "</g>\n");

    /* output labels down the left */
    sb_puts(b, "<g class=\"out-labels\" fill=\"#222222\" text-anchor=\"end\">\n");
    for (int t = 0; t < T; t++) {
        const char *tok = label_of(out_tokens, t, buf);
        sb_puts(b, "<text x=\"");
        sb_f(b, left - 8, 2);
        sb_puts(b, "\" y=\"");
        sb_f(b, top + (t + 0.5) * cell + 4.5, 2);
        sb_printf(b, "\" data-t=\"%d\">", t);
        sb_xml(b, tok, AT_SVG_LABEL_MAX);
        sb_puts(b, "<title>");
        sb_xml(b, tok, 0);
        sb_puts(b, "</title></text>\n");
    }
    sb_puts(b, "</g>\n");

    /* cells */
    sb_puts(b, "<g class=\"cells\" stroke=\"#ffffff\" stroke-width=\"1\">\n");
    for (int t = 0; t < T; t++) {
        const char *ot = label_of(out_tokens, t, buf);
        for (int s = 0; s < S; s++) {
            char buf2[16];
            const char *st = label_of(src_tokens, s, buf2);
            double v = weight_at(w, S, t, s);
            scale_colour(v, hex);
            sb_puts(b, "<rect class=\"cell\" x=\"");
            sb_f(b, left + s * cell, 2);
            sb_puts(b, "\" y=\"");
            sb_f(b, top + t * cell, 2);
            sb_puts(b, "\" width=\"");
            sb_f(b, cell, 2);
            sb_puts(b, "\" height=\"");
            sb_f(b, cell, 2);
            sb_printf(b, "\" fill=\"%s\" data-t=\"%d\" data-s=\"%d\" data-w=\"", hex, t, s);
            sb_f(b, v, 6);
            sb_puts(b, "\"><title>");
            sb_xml(b, ot, 0);
            sb_puts(b, " \xE2\x86\x92 "); /* U+2192 RIGHTWARDS ARROW */
            sb_xml(b, st, 0);
            sb_printf(b, " (t=%d, s=%d): w=", t, s);
            sb_f(b, v, 6);
            sb_puts(b, "</title></rect>\n");
        }
    }
    sb_puts(b, "</g>\n<rect x=\"");
    sb_f(b, left, 2);
    sb_puts(b, "\" y=\"");
    sb_f(b, top, 2);
    sb_puts(b, "\" width=\"");
    sb_f(b, gw, 2);
    sb_puts(b, "\" height=\"");
    sb_f(b, gh, 2);
    sb_puts(b, "\" fill=\"none\" stroke=\"#9aa5b1\" stroke-width=\"1\"/>\n");
    if (embed) {
        sb_puts(b, "<rect id=\"attend-rowhl\" x=\"");
        sb_f(b, left - 1.5, 2);
        sb_puts(b, "\" y=\"");
        sb_f(b, top, 2);
        sb_puts(b, "\" width=\"");
        sb_f(b, gw + 3, 2);
        sb_puts(b, "\" height=\"");
        sb_f(b, cell, 2);
        sb_puts(b, "\" data-top=\"");
        sb_f(b, top, 2);
        sb_puts(b, "\" data-cell=\"");
        sb_f(b, cell, 2);
        sb_puts(b, "\" fill=\"none\" stroke=\"#d95f02\" stroke-width=\"3\" visibility=\"hidden\" "
                   "pointer-events=\"none\"/>\n");
    }

    /* colour bar with ticks 0, 0.5, 1 */
    sb_puts(b, "<g class=\"colour-bar\">\n<rect x=\"");
    sb_f(b, bar_x, 2);
    sb_puts(b, "\" y=\"");
    sb_f(b, top, 2);
    sb_puts(b, "\" width=\"14\" height=\"");
    sb_f(b, bar_h, 2);
    sb_puts(b, "\" fill=\"url(#attend-scale)\" stroke=\"#9aa5b1\" stroke-width=\"1\"/>\n");
    static const char *const tick_text[3] = {"0", "0.5", "1"};
    for (int i = 0; i < 3; i++) {
        double y = top + bar_h * (1 - i / 2.0);
        sb_puts(b, "<line x1=\"");
        sb_f(b, bar_x + 14, 2);
        sb_puts(b, "\" y1=\"");
        sb_f(b, y, 2);
        sb_puts(b, "\" x2=\"");
        sb_f(b, bar_x + 19, 2);
        sb_puts(b, "\" y2=\"");
        sb_f(b, y, 2);
        sb_puts(b, "\" stroke=\"#444444\" stroke-width=\"1\"/><text x=\"");
        sb_f(b, bar_x + 22, 2);
        sb_puts(b, "\" y=\"");
        sb_f(b, y + 4.5, 2);
        sb_printf(b, "\" font-size=\"12\" fill=\"#222222\">%s</text>\n", tick_text[i]);
    }
    sb_puts(b, "<text x=\"");
    sb_f(b, bar_x + 7, 2);
    sb_puts(b, "\" y=\"");
    sb_f(b, top + bar_h + 20, 2);
    sb_puts(b, "\" font-size=\"12\" fill=\"#444444\" text-anchor=\"middle\">weight</text>\n</g>\n</svg>\n");
}

attend_status attend_render_heatmap_svg(char **out, const attend_real *w, int T, int S,
                                        const char *const *src_tokens, const char *const *out_tokens,
                                        const char *title, attend_error *err) {
    TRY(check_heatmap(out, w, T, S, src_tokens, out_tokens, title, "attend_render_heatmap_svg", err));
    sbuf b = {0};
    heatmap_svg(&b, w, T, S, src_tokens, out_tokens, title, 0);
    return sb_finish(&b, out, "attend_render_heatmap_svg", err);
}

/* ------------------------------------------------------------ HTML heatmap */

/* The page is written as polyglot XHTML (it parses the same as HTML and as
 * XML), and the script uses neither '<' nor '&', so it needs no CDATA. */
static const char html_css[] =
    "body{font:15px/1.45 system-ui,\"Segoe UI\",Roboto,\"DejaVu Sans\",Helvetica,Arial,sans-serif;"
    "color:#111;background:#fff;margin:24px;max-width:1100px}\n"
    "h1{font-size:20px;margin:0 0 4px}\n"
    ".hint{color:#555;margin:0 0 12px}\n"
    ".label{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:#555;margin:14px 0 4px}\n"
    ".row{display:flex;flex-wrap:wrap;gap:6px}\n"
    ".tok{display:inline-flex;flex-direction:column;align-items:center;min-width:30px;padding:3px 8px;"
    "border:1px solid #c3cfdd;border-radius:4px;font:15px/1.4 \"DejaVu Sans Mono\",Menlo,Consolas,monospace;"
    "white-space:pre;color:#111;background:#fff}\n"
    ".src small{font-size:11px;line-height:1.2;opacity:.85;min-height:13px}\n"
    "button.tok{background:#f3f5f8;cursor:pointer}\n"
    "button.tok:hover{border-color:#08306b}\n"
    "button.tok:focus{outline:3px solid #d95f02;outline-offset:1px}\n"
    "button.tok.on{background:#08306b;color:#fff;border-color:#08306b}\n"
    ".sel{margin:14px 0 0;font-size:13px;color:#333}\n"
    "#selected{font-family:\"DejaVu Sans Mono\",Menlo,Consolas,monospace;word-break:break-all}\n"
    "figure{margin:18px 0 0;overflow-x:auto}\n"
    "svg rect.cell:hover{stroke:#d95f02;stroke-width:2px}\n";

static const char html_js[] =
    "(function () {\n"
    "  \"use strict\";\n"
    "  var W = JSON.parse(document.getElementById(\"attend-weights\").textContent);\n"
    "  var T = W.length;\n"
    "  var srcs = document.querySelectorAll(\"#attend-src .tok\");\n"
    "  var outs = document.querySelectorAll(\"#attend-out .tok\");\n"
    "  var sel = document.getElementById(\"selected\");\n"
    "  var hl = document.getElementById(\"attend-rowhl\");\n"
    "  function fmt(w) { return w.toFixed(6); }\n"
    "  function select(t) {\n"
    "    if (!(t >= 0) || !(T > t)) return;\n"
    "    var row = W[t];\n"
    "    Array.prototype.forEach.call(srcs, function (el, s) {\n"
    "      var w = row[s];\n"
    "      el.style.backgroundColor = \"rgba(8,48,107,\" + w + \")\";\n"
    "      el.style.color = w > 0.5 ? \"#fff\" : \"#111\";\n"
    "      el.setAttribute(\"data-w\", fmt(w));\n"
    "      el.title = \"w=\" + fmt(w);\n"
    "      el.querySelector(\"small\").textContent = w.toFixed(2);\n"
    "    });\n"
    "    Array.prototype.forEach.call(outs, function (el, u) {\n"
    "      el.classList.toggle(\"on\", u === t);\n"
    "      el.setAttribute(\"aria-pressed\", u === t ? \"true\" : \"false\");\n"
    "    });\n"
    "    sel.textContent = \"t=\" + t + \" w=\" + row.map(fmt).join(\" \");\n"
    "    if (hl) {\n"
    "      hl.setAttribute(\"y\", String(Number(hl.getAttribute(\"data-top\")) +\n"
    "                                   t * Number(hl.getAttribute(\"data-cell\"))));\n"
    "      hl.setAttribute(\"visibility\", \"visible\");\n"
    "    }\n"
    "  }\n"
    "  Array.prototype.forEach.call(outs, function (el, t) {\n"
    "    el.addEventListener(\"mouseenter\", function () { select(t); });\n"
    "    el.addEventListener(\"focus\", function () { select(t); });\n"
    "    el.addEventListener(\"click\", function () { select(t); });\n"
    "    el.addEventListener(\"keydown\", function (e) {\n"
    "      var k = e.key === \"ArrowRight\" ? 1 : (e.key === \"ArrowLeft\" ? -1 : 0);\n"
    "      if (k === 0) return;\n"
    "      var u = t + k;\n"
    "      if (u >= 0) { if (T > u) { outs[u].focus(); e.preventDefault(); } }\n"
    "    });\n"
    "  });\n"
    "  Array.prototype.forEach.call(document.querySelectorAll(\"rect.cell\"), function (el) {\n"
    "    el.addEventListener(\"mouseenter\", function () {\n"
    "      select(Number(el.getAttribute(\"data-t\")));\n"
    "    });\n"
    "  });\n"
    "  function fromHash() {\n"
    "    var m = /^#t=([0-9]+)$/.exec(window.location.hash);\n"
    "    if (m) select(parseInt(m[1], 10));\n"
    "  }\n"
    "  window.addEventListener(\"hashchange\", fromHash);\n"
    "  fromHash();\n"
    "})();\n";

attend_status attend_render_heatmap_html(char **out, const attend_real *w, int T, int S,
                                         const char *const *src_tokens, const char *const *out_tokens,
                                         const char *title, attend_error *err) {
    TRY(check_heatmap(out, w, T, S, src_tokens, out_tokens, title, "attend_render_heatmap_html", err));
    char buf[16];
    const char *heading = title ? title : "Attention alignment";
    sbuf b = {0};
    sb_puts(&b, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\" xml:lang=\"en\">\n"
                "<head>\n<meta charset=\"utf-8\"/>\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>");
    sb_xml(&b, heading, 0);
    sb_puts(&b, "</title>\n<style>\n");
    sb_puts(&b, html_css);
    sb_puts(&b, "</style>\n</head>\n<body>\n<h1>");
    sb_xml(&b, heading, 0);
    sb_printf(&b, "</h1>\n<p class=\"hint\">%d output steps over %d source tokens. Hover an output token, or "
                  "focus one with Tab (arrow keys move), to shade each source token by its weight.</p>\n",
              T, S);

    sb_puts(&b, "<div class=\"label\" id=\"attend-src-label\">Source</div>\n"
                "<div class=\"row\" id=\"attend-src\" aria-labelledby=\"attend-src-label\">\n");
    for (int s = 0; s < S; s++) {
        sb_printf(&b, "<span class=\"tok src\" data-s=\"%d\">", s);
        sb_xml(&b, label_of(src_tokens, s, buf), 0);
        sb_puts(&b, "<small></small></span>\n");
    }
    sb_puts(&b, "</div>\n<div class=\"label\" id=\"attend-out-label\">Output</div>\n"
                "<div class=\"row\" id=\"attend-out\" aria-labelledby=\"attend-out-label\">\n");
    for (int t = 0; t < T; t++) {
        sb_printf(&b, "<button type=\"button\" class=\"tok out\" data-t=\"%d\" aria-pressed=\"false\">", t);
        sb_xml(&b, label_of(out_tokens, t, buf), 0);
        sb_puts(&b, "</button>\n");
    }
    sb_puts(&b, "</div>\n<p class=\"sel\" aria-live=\"polite\">Selected: <span id=\"selected\"></span></p>\n"
                "<figure>\n");
    heatmap_svg(&b, w, T, S, src_tokens, out_tokens, NULL, 1);
    sb_puts(&b, "</figure>\n<script type=\"application/json\" id=\"attend-weights\">[");
    for (int t = 0; t < T; t++) {
        sb_puts(&b, t ? ",\n[" : "\n[");
        for (int s = 0; s < S; s++) {
            if (s) sb_put(&b, ",", 1);
            sb_f(&b, weight_at(w, S, t, s), 6);
        }
        sb_put(&b, "]", 1);
    }
    sb_puts(&b, "]</script>\n<script>\n");
    sb_puts(&b, html_js);
    sb_puts(&b, "</script>\n</body>\n</html>\n");
    return sb_finish(&b, out, "attend_render_heatmap_html", err);
}

/* --------------------------------------------------------------- line plot */

/* Heckbert's "nice numbers": 1, 2, 5 or 10 times a power of ten near x > 0. */
static double nice_num(double x, int round_it) {
    double e = floor(log10(x)), f = x / pow(10, e), nf;
    if (round_it) nf = f < 1.5 ? 1 : (f < 3 ? 2 : (f < 7 ? 5 : 10));
    else nf = f <= 1 ? 1 : (f <= 2 ? 2 : (f <= 5 ? 5 : 10));
    return nf * pow(10, e);
}

/* Decimals that show multiples of step exactly (0 for step >= 1). */
static int step_decimals(double step) {
    int d = (int)-floor(log10(step) + 1e-9);
    return d < 0 ? 0 : d;
}

/* A tick label: fixed decimals for ordinary magnitudes, %g beyond them. */
static void sb_tick(sbuf *b, double v, double step, int decimals) {
    if (fabs(v) < step * 1e-9) v = 0;
    if (fabs(v) >= 1e7 || decimals > 6) sb_g(b, v, 4);
    else sb_f(b, v, decimals);
}

/* A power of ten 10^k as a label: "0.001" .. "100000", else "1e-7", "1e8". */
static void sb_pow10(sbuf *b, int k) {
    if (k >= 0 && k <= 5) sb_f(b, pow(10, k), 0);
    else if (k < 0 && k >= -4) sb_f(b, pow(10, k), -k);
    else sb_printf(b, "1e%d", k);
}

/* Series colours (d3 category10, the first eight) and marker shapes. */
static const char *const series_colour[8] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                             "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

/* Marker m (0..7) centred at (x, y): circle, square, triangle up, diamond,
 * triangle down, plus, cross, ring. */
static void sb_marker(sbuf *b, int m, double x, double y, const char *colour) {
    const double r = 4;
    switch (m % 8) {
    case 0:
    case 7:
        sb_puts(b, "<circle cx=\"");
        sb_f(b, x, 2);
        sb_puts(b, "\" cy=\"");
        sb_f(b, y, 2);
        sb_puts(b, "\" r=\"");
        sb_f(b, m % 8 ? r - 0.5 : r, 1);
        if (m % 8) sb_printf(b, "\" fill=\"#ffffff\" stroke=\"%s\" stroke-width=\"2\"/>", colour);
        else sb_printf(b, "\" fill=\"%s\"/>", colour);
        return;
    case 1:
        sb_puts(b, "<rect x=\"");
        sb_f(b, x - r + 0.5, 2);
        sb_puts(b, "\" y=\"");
        sb_f(b, y - r + 0.5, 2);
        sb_printf(b, "\" width=\"7\" height=\"7\" fill=\"%s\"/>", colour);
        return;
    default: break;
    }
    static const double shape[6][9] = {
        /* n, then up to 4 (dx, dy) pairs, in units of r */
        {0},
        {0},
        {3, 0, -1.25, 1.1, 0.8, -1.1, 0.8, 0},  /* triangle up */
        {4, 0, -1.3, 1.3, 0, 0, 1.3, -1.3, 0},  /* diamond */
        {3, 0, 1.25, 1.1, -0.8, -1.1, -0.8, 0}, /* triangle down */
        {0},
    };
    int k = m % 8;
    if (k >= 2 && k <= 4) {
        int n = (int)shape[k][0];
        sb_puts(b, "<path d=\"");
        for (int i = 0; i < n; i++) {
            sb_puts(b, i ? " L" : "M");
            sb_f(b, x + shape[k][1 + 2 * i] * r, 2);
            sb_put(b, " ", 1);
            sb_f(b, y + shape[k][2 + 2 * i] * r, 2);
        }
        sb_printf(b, " Z\" fill=\"%s\"/>", colour);
        return;
    }
    /* 5 plus, 6 cross: two strokes */
    double a = k == 5 ? r + 0.5 : r;
    sb_puts(b, "<path d=\"M");
    if (k == 5) {
        sb_f(b, x - a, 2); sb_put(b, " ", 1); sb_f(b, y, 2); sb_puts(b, " L");
        sb_f(b, x + a, 2); sb_put(b, " ", 1); sb_f(b, y, 2); sb_puts(b, " M");
        sb_f(b, x, 2); sb_put(b, " ", 1); sb_f(b, y - a, 2); sb_puts(b, " L");
        sb_f(b, x, 2); sb_put(b, " ", 1); sb_f(b, y + a, 2);
    } else {
        sb_f(b, x - a, 2); sb_put(b, " ", 1); sb_f(b, y - a, 2); sb_puts(b, " L");
        sb_f(b, x + a, 2); sb_put(b, " ", 1); sb_f(b, y + a, 2); sb_puts(b, " M");
        sb_f(b, x - a, 2); sb_put(b, " ", 1); sb_f(b, y + a, 2); sb_puts(b, " L");
        sb_f(b, x + a, 2); sb_put(b, " ", 1); sb_f(b, y - a, 2);
    }
    sb_printf(b, "\" stroke=\"%s\" stroke-width=\"2.5\" fill=\"none\"/>", colour);
}

static void sb_line(sbuf *b, double x1, double y1, double x2, double y2, const char *extra) {
    sb_puts(b, "<line x1=\"");
    sb_f(b, x1, 2);
    sb_puts(b, "\" y1=\"");
    sb_f(b, y1, 2);
    sb_puts(b, "\" x2=\"");
    sb_f(b, x2, 2);
    sb_puts(b, "\" y2=\"");
    sb_f(b, y2, 2);
    sb_printf(b, "\" %s/>\n", extra);
}

/* Text at (x, y) with extra attributes, content escaped. */
static void sb_text(sbuf *b, double x, double y, const char *extra, const char *content) {
    sb_puts(b, "<text x=\"");
    sb_f(b, x, 2);
    sb_puts(b, "\" y=\"");
    sb_f(b, y, 2);
    sb_printf(b, "\" %s>", extra);
    sb_xml(b, content, 0);
    sb_puts(b, "</text>\n");
}

attend_status attend_render_line_plot_svg(char **out, const attend_plot_series *series, int n_series,
                                          const char *title, const char *x_label, const char *y_label,
                                          double y_min, double y_max, int log_x, attend_error *err) {
    static const char who[] = "attend_render_line_plot_svg";
    CHECK(out, err, ATTEND_ERR_NULL, "%s: out is NULL", who);
    *out = NULL;
    CHECK(series, err, ATTEND_ERR_NULL, "%s: series is NULL", who);
    CHECK(n_series >= 1 && n_series <= AT_RENDER_MAX_SERIES, err, ATTEND_ERR_SHAPE,
          "%s: n_series=%d, expected 1..%d", who, n_series, AT_RENDER_MAX_SERIES);
    CHECK(isfinite(y_min) && isfinite(y_max) && y_min < y_max && isfinite(y_max - y_min), err, ATTEND_ERR_ARG,
          "%s: y range [%g, %g] must be finite with y_min < y_max", who, y_min, y_max);
    TRY(check_text(title, "title", err));
    TRY(check_text(x_label, "x_label", err));
    TRY(check_text(y_label, "y_label", err));
    long long total = 0;
    double xlo = INFINITY, xhi = -INFINITY;
    size_t label_cp = 1;
    for (int i = 0; i < n_series; i++) {
        const attend_plot_series *p = &series[i];
        size_t bad;
        CHECK(p->n >= 0, err, ATTEND_ERR_SHAPE, "%s: series %d has n=%d points", who, i, p->n);
        total += p->n;
        CHECK(total <= AT_RENDER_MAX_POINTS, err, ATTEND_ERR_SHAPE, "%s: more than %d points in all", who,
              AT_RENDER_MAX_POINTS);
        CHECK(p->n == 0 || (p->x && p->y), err, ATTEND_ERR_NULL, "%s: series %d has n=%d but x or y is NULL",
              who, i, p->n);
        if (p->label) {
            CHECK(utf8_valid(p->label, &bad), err, ATTEND_ERR_FORMAT, "%s: series %d label: invalid UTF-8 at byte %zu",
                  who, i, bad);
            size_t n = utf8_count(p->label);
            if (n > label_cp) label_cp = n;
        } else if (label_cp < 9) {
            label_cp = 9;
        }
        for (int k = 0; k < p->n; k++) {
            double x = p->x[k], y = p->y[k];
            CHECK(isfinite(x), err, ATTEND_ERR_NONFINITE, "%s: series %d x[%d] is %s", who, i, k,
                  isnan(x) ? "NaN" : "infinite");
            CHECK(!isinf(y), err, ATTEND_ERR_NONFINITE, "%s: series %d y[%d] is infinite (NaN leaves a gap)",
                  who, i, k);
            CHECK(!log_x || x > 0, err, ATTEND_ERR_ARG, "%s: series %d x[%d] = %g, but a log x axis needs x > 0",
                  who, i, k, x);
            if (x < xlo) xlo = x;
            if (x > xhi) xhi = x;
        }
    }
    if (label_cp > 40) label_cp = 40;

    /* x axis: nice bounds and ticks (decades on a log axis) */
    double ax_lo, ax_hi, xstep = 1;
    int xdec = 0, dlo = 0, dhi = 1;
    if (log_x) {
        if (!(xlo <= xhi)) xlo = 1, xhi = 10;
        dlo = (int)floor(log10(xlo) + 1e-9);
        dhi = (int)ceil(log10(xhi) - 1e-9);
        if (dhi <= dlo) dhi = dlo + 1;
        ax_lo = dlo;
        ax_hi = dhi;
    } else {
        if (!(xlo <= xhi)) xlo = 0, xhi = 1;
        if (xlo == xhi) {
            double pad = fabs(xlo) > 1 ? fabs(xlo) * 0.05 : 0.5;
            xlo -= pad;
            xhi += pad;
        }
        CHECK(isfinite(xhi - xlo), err, ATTEND_ERR_ARG, "%s: x range [%g, %g] is too wide to plot", who, xlo, xhi);
        xstep = nice_num(nice_num(xhi - xlo, 0) / 5, 1);
        ax_lo = floor(xlo / xstep + 1e-9) * xstep;
        ax_hi = ceil(xhi / xstep - 1e-9) * xstep;
        if (ax_hi <= ax_lo) ax_hi = ax_lo + xstep;
        xdec = step_decimals(xstep);
    }
    double ystep = nice_num(nice_num(y_max - y_min, 0) / 5, 1);
    int ydec = step_decimals(ystep);

    /* geometry */
    double legend_w = 44 + (double)label_cp * 7.2 + 12;
    double left = y_label ? 78 : 62, top = title ? 48 : 20, bottom = x_label ? 58 : 38;
    double pw = 520, ph = 300;
    double legend_x = left + pw + 20;
    double width = legend_x + legend_w + 12, height = top + ph + bottom;
    if (title) {
        double tw = left + (double)utf8_count(title) * 9.5;
        if (tw > width) width = tw;
    }

    sbuf b = {0};
    sb_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"");
    sb_f(&b, width, 0);
    sb_puts(&b, "\" height=\"");
    sb_f(&b, height, 0);
    sb_puts(&b, "\" viewBox=\"0 0 ");
    sb_f(&b, width, 0);
    sb_put(&b, " ", 1);
    sb_f(&b, height, 0);
    sb_puts(&b, "\" font-family=\"" AT_FONT_FAMILY "\" font-size=\"13\" role=\"img\" aria-label=\"");
    sb_xml(&b, title ? title : "line plot", 0);
    sb_puts(&b, "\">\n");
    if (title) {
        sb_puts(&b, "<title>");
        sb_xml(&b, title, 0);
        sb_puts(&b, "</title>\n");
    }
    sb_puts(&b, "<defs><clipPath id=\"attend-plot-clip\"><rect x=\"");
    sb_f(&b, left, 2);
    sb_puts(&b, "\" y=\"");
    sb_f(&b, top, 2);
    sb_puts(&b, "\" width=\"");
    sb_f(&b, pw, 2);
    sb_puts(&b, "\" height=\"");
    sb_f(&b, ph, 2);
    sb_puts(&b, "\"/></clipPath></defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    if (title) sb_text(&b, left, 30, "font-size=\"17\" font-weight=\"bold\" fill=\"#111111\"", title);

    /* grid, ticks and tick labels */
    sb_puts(&b, "<g class=\"y-axis\" font-size=\"12\" fill=\"#333333\" text-anchor=\"end\">\n");
    double y0 = ceil(y_min / ystep - 1e-9) * ystep;
    for (int k = 0; k <= 1000; k++) {
        double v = y0 + k * ystep;
        if (v > y_max + ystep * 1e-9) break;
        double py = top + (y_max - v) / (y_max - y_min) * ph;
        sb_line(&b, left, py, left + pw, py, "stroke=\"#e5e8ec\" stroke-width=\"1\"");
        sb_line(&b, left - 5, py, left, py, "stroke=\"#333333\" stroke-width=\"1\"");
        sb_puts(&b, "<text x=\"");
        sb_f(&b, left - 8, 2);
        sb_puts(&b, "\" y=\"");
        sb_f(&b, py + 4, 2);
        sb_puts(&b, "\">");
        sb_tick(&b, v, ystep, ydec);
        sb_puts(&b, "</text>\n");
    }
    sb_puts(&b, "</g>\n<g class=\"x-axis\" font-size=\"12\" fill=\"#333333\" text-anchor=\"middle\">\n");
    if (log_x) {
        int every = (dhi - dlo + 7) / 8;
        for (int d = dlo; d <= dhi; d++) {
            double px = left + (d - ax_lo) / (ax_hi - ax_lo) * pw;
            if ((d - dlo) % every == 0) {
                sb_line(&b, px, top, px, top + ph, "stroke=\"#e5e8ec\" stroke-width=\"1\"");
                sb_line(&b, px, top + ph, px, top + ph + 5, "stroke=\"#333333\" stroke-width=\"1\"");
                sb_puts(&b, "<text x=\"");
                sb_f(&b, px, 2);
                sb_puts(&b, "\" y=\"");
                sb_f(&b, top + ph + 19, 2);
                sb_puts(&b, "\">");
                sb_pow10(&b, d);
                sb_puts(&b, "</text>\n");
            }
            if (dhi - dlo <= 4 && d < dhi) {
                for (int m = 2; m <= 9; m++) {
                    double mx = left + (d + log10((double)m) - ax_lo) / (ax_hi - ax_lo) * pw;
                    sb_line(&b, mx, top + ph, mx, top + ph + 3, "stroke=\"#333333\" stroke-width=\"1\"");
                }
            }
        }
    } else {
        for (int k = 0; k <= 1000; k++) {
            double v = ax_lo + k * xstep;
            if (v > ax_hi + xstep * 1e-9) break;
            double px = left + (v - ax_lo) / (ax_hi - ax_lo) * pw;
            sb_line(&b, px, top, px, top + ph, "stroke=\"#e5e8ec\" stroke-width=\"1\"");
            sb_line(&b, px, top + ph, px, top + ph + 5, "stroke=\"#333333\" stroke-width=\"1\"");
            sb_puts(&b, "<text x=\"");
            sb_f(&b, px, 2);
            sb_puts(&b, "\" y=\"");
            sb_f(&b, top + ph + 19, 2);
            sb_puts(&b, "\">");
            sb_tick(&b, v, xstep, xdec);
            sb_puts(&b, "</text>\n");
        }
    }
    sb_puts(&b, "</g>\n");
    /* axes */
    sb_line(&b, left, top, left, top + ph, "stroke=\"#333333\" stroke-width=\"1.2\"");
    sb_line(&b, left, top + ph, left + pw, top + ph, "stroke=\"#333333\" stroke-width=\"1.2\"");
    if (x_label) sb_text(&b, left + pw / 2, top + ph + 44, "text-anchor=\"middle\" fill=\"#111111\"", x_label);
    if (y_label) {
        char attrs[128];
        double cx = 20, cy = top + ph / 2;
        snprintf(attrs, sizeof attrs, "text-anchor=\"middle\" fill=\"#111111\" transform=\"rotate(-90 %d %d)\"",
                 (int)cx, (int)cy);
        sb_text(&b, cx, cy, attrs, y_label);
    }

    /* series: one path per run of finite y, clipped to the plot area; markers on
     * (a thinned set of) the points inside the y range, unclipped so that
     * points on the frame show whole */
    for (int i = 0; i < n_series; i++) {
        const attend_plot_series *p = &series[i];
        const char *colour = series_colour[i % 8];
        int every = p->n > 60 ? (p->n + 29) / 30 : 1;
        sb_printf(&b, "<g class=\"series\" data-series=\"%d\">\n", i);
        if (p->n > 0) {
            sb_printf(&b, "<path clip-path=\"url(#attend-plot-clip)\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                          "stroke-linejoin=\"round\" d=\"", colour);
            int pen = 0;
            for (int k = 0; k < p->n; k++) {
                if (isnan(p->y[k])) {
                    pen = 0;
                    continue;
                }
                double fx = log_x ? (log10(p->x[k]) - ax_lo) / (ax_hi - ax_lo) : (p->x[k] - ax_lo) / (ax_hi - ax_lo);
                double fy = (y_max - p->y[k]) / (y_max - y_min);
                if (fy < -10) fy = -10;
                if (fy > 11) fy = 11;
                sb_puts(&b, pen ? " L" : (k ? " M" : "M"));
                sb_f(&b, left + fx * pw, 2);
                sb_put(&b, " ", 1);
                sb_f(&b, top + fy * ph, 2);
                pen = 1;
            }
            sb_puts(&b, "\"/>\n");
            for (int k = 0; k < p->n; k++) {
                if (isnan(p->y[k])) continue;
                int isolated = (k == 0 || isnan(p->y[k - 1])) && (k == p->n - 1 || isnan(p->y[k + 1]));
                if (k % every && !isolated) continue;
                double fx = log_x ? (log10(p->x[k]) - ax_lo) / (ax_hi - ax_lo) : (p->x[k] - ax_lo) / (ax_hi - ax_lo);
                double fy = (y_max - p->y[k]) / (y_max - y_min);
                if (fy < -0.05 || fy > 1.05) continue;
                sb_marker(&b, i, left + fx * pw, top + fy * ph, colour);
                sb_put(&b, "\n", 1);
            }
        }
        sb_puts(&b, "</g>\n");
    }

    /* legend */
    sb_puts(&b, "<g class=\"legend\" font-size=\"12.5\" fill=\"#111111\">\n<rect x=\"");
    sb_f(&b, legend_x, 2);
    sb_puts(&b, "\" y=\"");
    sb_f(&b, top, 2);
    sb_puts(&b, "\" width=\"");
    sb_f(&b, legend_w, 2);
    sb_puts(&b, "\" height=\"");
    sb_f(&b, 10 + 20.0 * n_series, 2);
    sb_puts(&b, "\" fill=\"#ffffff\" stroke=\"#c9ced6\" stroke-width=\"1\"/>\n");
    for (int i = 0; i < n_series; i++) {
        const char *colour = series_colour[i % 8];
        double ly = top + 15 + 20.0 * i;
        char extra[96], name[24];
        snprintf(extra, sizeof extra, "stroke=\"%s\" stroke-width=\"2\"", colour);
        sb_printf(&b, "<g class=\"legend-entry\" data-series=\"%d\">", i);
        sb_line(&b, legend_x + 8, ly, legend_x + 36, ly, extra);
        sb_marker(&b, i, legend_x + 22, ly, colour);
        snprintf(name, sizeof name, "series %d", i);
        sb_text(&b, legend_x + 44, ly + 4.5, "", series[i].label ? series[i].label : name);
        sb_puts(&b, "</g>\n");
    }
    sb_puts(&b, "</g>\n</svg>\n");
    return sb_finish(&b, out, who, err);
}
