/*
 * render_svg.c — the SVG heatmap (attend_render_heatmap_svg), also inlined by
 * the HTML page (render_html.c). Conventions: the top of render.c.
 *
 * Dimension letters: T output (target) steps, S source positions; w [T,S].
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/render_internal.h"

/* ------------------------------------------------------------- SVG heatmap */

/* Sequential scale: linear interpolation from white (w = 0) to dark blue
 * #08306b (w = 1), per sRGB channel, rounded. */
static void scale_colour(double v, char hex[8]) {
    static const int lo[3] = {255, 255, 255}, hi[3] = {0x08, 0x30, 0x6b};
    int c[3];
    for (int i = 0; i < 3; i++) c[i] = (int)lround(lo[i] + v * (hi[i] - lo[i]));
    snprintf(hex, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}

#define AT_CHAR_W 7.8 /* estimated advance of one character at font-size 13 */

/* The heatmap SVG. embed != 0 leaves out the XML declaration (for inlining in
 * HTML) and adds a hidden row-highlight rect (id "attend-rowhl") for the page's
 * script. Arguments are already checked. */
void at_render_heatmap_svg(at_sbuf *b, const attend_real *w, int T, int S, const char *const *src_tokens,
                        const char *const *out_tokens, const char *title, int embed) {
    char buf[16], hex[8];
    size_t src_cp = 1, out_cp = 1;
    for (int s = 0; s < S; s++) {
        size_t n = at_utf8_count(at_render_label_of(src_tokens, s, buf));
        if (n > src_cp) src_cp = n;
    }
    for (int t = 0; t < T; t++) {
        size_t n = at_utf8_count(at_render_label_of(out_tokens, t, buf));
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
        double tw = 16 + (double)at_utf8_count(title) * 9.5;
        if (tw > width) width = tw;
    }
    double height = top + bar_h + 36;

    if (!embed) at_sb_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    at_sb_puts(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"");
    at_sb_f(b, width, 0);
    at_sb_puts(b, "\" height=\"");
    at_sb_f(b, height, 0);
    at_sb_puts(b, "\" viewBox=\"0 0 ");
    at_sb_f(b, width, 0);
    at_sb_put(b, " ", 1);
    at_sb_f(b, height, 0);
    at_sb_puts(b, "\" font-family=\"" AT_FONT_FAMILY "\" font-size=\"13\" role=\"img\" aria-label=\"");
    if (title) at_render_xml(b, title, 0);
    else at_sb_puts(b, "attention heatmap");
    at_sb_puts(b, "\">\n");
    if (title) {
        at_sb_puts(b, "<title>");
        at_render_xml(b, title, 0);
        at_sb_puts(b, "</title>\n");
    }
    at_sb_puts(b, "<defs><linearGradient id=\"attend-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">");
    for (int i = 0; i <= 4; i++) {
        scale_colour(i / 4.0, hex);
        at_sb_puts(b, "<stop offset=\"");
        at_sb_f(b, i / 4.0, 2);
        at_sb_printf(b, "\" stop-color=\"%s\"/>", hex);
    }
    at_sb_puts(b, "</linearGradient></defs>\n");
    at_sb_puts(b, "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    if (title) {
        at_sb_puts(b, "<text x=\"16\" y=\"28\" font-size=\"17\" font-weight=\"bold\" fill=\"#111111\">");
        at_render_xml(b, title, 0);
        at_sb_puts(b, "</text>\n");
    }

    /* source labels along the top */
    at_sb_puts(b, "<g class=\"src-labels\" fill=\"#222222\">\n");
    for (int s = 0; s < S; s++) {
        const char *tok = at_render_label_of(src_tokens, s, buf);
        double x = left + (s + 0.5) * cell, y = top - 8;
        at_sb_puts(b, "<text x=\"");
        at_sb_f(b, x, 2);
        at_sb_puts(b, "\" y=\"");
        at_sb_f(b, y, 2);
        if (rotate) {
            at_sb_puts(b, "\" text-anchor=\"start\" transform=\"rotate(-45 ");
            at_sb_f(b, x, 2);
            at_sb_put(b, " ", 1);
            at_sb_f(b, y, 2);
            at_sb_puts(b, ")");
        } else {
            at_sb_puts(b, "\" text-anchor=\"middle");
        }
        at_sb_printf(b, "\" data-s=\"%d\">", s);
        at_render_xml(b, tok, AT_SVG_LABEL_MAX);
        at_sb_puts(b, "<title>");
        at_render_xml(b, tok, 0);
        at_sb_puts(b, "</title></text>\n");
    }
    at_sb_puts(b, "</g>\n");

    /* output labels down the left */
    at_sb_puts(b, "<g class=\"out-labels\" fill=\"#222222\" text-anchor=\"end\">\n");
    for (int t = 0; t < T; t++) {
        const char *tok = at_render_label_of(out_tokens, t, buf);
        at_sb_puts(b, "<text x=\"");
        at_sb_f(b, left - 8, 2);
        at_sb_puts(b, "\" y=\"");
        at_sb_f(b, top + (t + 0.5) * cell + 4.5, 2);
        at_sb_printf(b, "\" data-t=\"%d\">", t);
        at_render_xml(b, tok, AT_SVG_LABEL_MAX);
        at_sb_puts(b, "<title>");
        at_render_xml(b, tok, 0);
        at_sb_puts(b, "</title></text>\n");
    }
    at_sb_puts(b, "</g>\n");

    /* cells */
    at_sb_puts(b, "<g class=\"cells\" stroke=\"#ffffff\" stroke-width=\"1\">\n");
    for (int t = 0; t < T; t++) {
        const char *ot = at_render_label_of(out_tokens, t, buf);
        for (int s = 0; s < S; s++) {
            char buf2[16];
            const char *st = at_render_label_of(src_tokens, s, buf2);
            double v = at_render_weight_at(w, S, t, s);
            scale_colour(v, hex);
            at_sb_puts(b, "<rect class=\"cell\"");
            at_render_xywh(b, left + s * cell, top + t * cell, cell, cell);
            at_sb_printf(b, " fill=\"%s\" data-t=\"%d\" data-s=\"%d\" data-w=\"", hex, t, s);
            at_sb_f(b, v, 6);
            at_sb_puts(b, "\"><title>");
            at_render_xml(b, ot, 0);
            at_sb_puts(b, " \xE2\x86\x92 "); /* U+2192 RIGHTWARDS ARROW */
            at_render_xml(b, st, 0);
            at_sb_printf(b, " (t=%d, s=%d): w=", t, s);
            at_sb_f(b, v, 6);
            at_sb_puts(b, "</title></rect>\n");
        }
    }
    at_sb_puts(b, "</g>\n<rect");
    at_render_xywh(b, left, top, gw, gh);
    at_sb_puts(b, " fill=\"none\" stroke=\"#9aa5b1\" stroke-width=\"1\"/>\n");
    if (embed) {
        at_sb_puts(b, "<rect id=\"attend-rowhl\"");
        at_render_xywh(b, left - 1.5, top, gw + 3, cell);
        at_sb_puts(b, " data-top=\"");
        at_sb_f(b, top, 2);
        at_sb_puts(b, "\" data-cell=\"");
        at_sb_f(b, cell, 2);
        at_sb_puts(b, "\" fill=\"none\" stroke=\"#d95f02\" stroke-width=\"3\" visibility=\"hidden\" "
                   "pointer-events=\"none\"/>\n");
    }

    /* colour bar with ticks 0, 0.5, 1 */
    at_sb_puts(b, "<g class=\"colour-bar\">\n<rect x=\"");
    at_sb_f(b, bar_x, 2);
    at_sb_puts(b, "\" y=\"");
    at_sb_f(b, top, 2);
    at_sb_puts(b, "\" width=\"14\" height=\"");
    at_sb_f(b, bar_h, 2);
    at_sb_puts(b, "\" fill=\"url(#attend-scale)\" stroke=\"#9aa5b1\" stroke-width=\"1\"/>\n");
    static const char *const tick_text[3] = {"0", "0.5", "1"};
    for (int i = 0; i < 3; i++) {
        double y = top + bar_h * (1 - i / 2.0);
        at_sb_puts(b, "<line x1=\"");
        at_sb_f(b, bar_x + 14, 2);
        at_sb_puts(b, "\" y1=\"");
        at_sb_f(b, y, 2);
        at_sb_puts(b, "\" x2=\"");
        at_sb_f(b, bar_x + 19, 2);
        at_sb_puts(b, "\" y2=\"");
        at_sb_f(b, y, 2);
        at_sb_puts(b, "\" stroke=\"#444444\" stroke-width=\"1\"/><text x=\"");
        at_sb_f(b, bar_x + 22, 2);
        at_sb_puts(b, "\" y=\"");
        at_sb_f(b, y + 4.5, 2);
        at_sb_printf(b, "\" font-size=\"12\" fill=\"#222222\">%s</text>\n", tick_text[i]);
    }
    at_sb_puts(b, "<text x=\"");
    at_sb_f(b, bar_x + 7, 2);
    at_sb_puts(b, "\" y=\"");
    at_sb_f(b, top + bar_h + 20, 2);
    at_sb_puts(b, "\" font-size=\"12\" fill=\"#444444\" text-anchor=\"middle\">weight</text>\n</g>\n</svg>\n");
}

attend_status attend_render_heatmap_svg(char **out, const attend_real *w, int T, int S,
                                        const char *const *src_tokens, const char *const *out_tokens,
                                        const char *title, attend_error *err) {
    TRY(at_render_check_heatmap(out, w, T, S, src_tokens, out_tokens, title, "attend_render_heatmap_svg", err));
    at_sbuf b = {0};
    at_render_heatmap_svg(&b, w, T, S, src_tokens, out_tokens, title, 0);
    return at_sb_finish(&b, out, "attend_render_heatmap_svg", err);
}
