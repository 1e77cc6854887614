/*
 * plot.c — SVG line plots (attend_render_line_plot_svg): nice axis ticks,
 * linear or log x, markers per series, a legend. Conventions (escaping,
 * locale-proof numbers): the top of render.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/render_internal.h"

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
static void sb_tick(at_sbuf *b, double v, double step, int decimals) {
    if (fabs(v) < step * 1e-9) v = 0;
    if (fabs(v) >= 1e7 || decimals > 6) at_sb_g(b, v, 4);
    else at_sb_f(b, v, decimals);
}

/* A power of ten 10^k as a label: "0.001" .. "100000", else "1e-7", "1e8". */
static void sb_pow10(at_sbuf *b, int k) {
    if (k >= 0 && k <= 5) at_sb_f(b, pow(10, k), 0);
    else if (k < 0 && k >= -4) at_sb_f(b, pow(10, k), -k);
    else at_sb_printf(b, "1e%d", k);
}

/* Series colours (d3 category10, the first eight) and marker shapes. */
static const char *const series_colour[8] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                             "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

/* Marker m (0..7) centred at (x, y): circle, square, triangle up, diamond,
 * triangle down, plus, cross, ring. */
static void sb_marker(at_sbuf *b, int m, double x, double y, const char *colour) {
    const double r = 4;
    switch (m % 8) {
    case 0:
    case 7:
        at_sb_puts(b, "<circle cx=\"");
        at_sb_f(b, x, 2);
        at_sb_puts(b, "\" cy=\"");
        at_sb_f(b, y, 2);
        at_sb_puts(b, "\" r=\"");
        at_sb_f(b, m % 8 ? r - 0.5 : r, 1);
        if (m % 8) at_sb_printf(b, "\" fill=\"#ffffff\" stroke=\"%s\" stroke-width=\"2\"/>", colour);
        else at_sb_printf(b, "\" fill=\"%s\"/>", colour);
        return;
    case 1:
        at_sb_puts(b, "<rect x=\"");
        at_sb_f(b, x - r + 0.5, 2);
        at_sb_puts(b, "\" y=\"");
        at_sb_f(b, y - r + 0.5, 2);
        at_sb_printf(b, "\" width=\"7\" height=\"7\" fill=\"%s\"/>", colour);
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
        at_sb_puts(b, "<path d=\"");
        for (int i = 0; i < n; i++) {
            at_sb_puts(b, i ? " L" : "M");
            at_sb_f(b, x + shape[k][1 + 2 * i] * r, 2);
            at_sb_put(b, " ", 1);
            at_sb_f(b, y + shape[k][2 + 2 * i] * r, 2);
        }
        at_sb_printf(b, " Z\" fill=\"%s\"/>", colour);
        return;
    }
    /* 5 plus, 6 cross: two strokes */
    double a = k == 5 ? r + 0.5 : r;
    at_sb_puts(b, "<path d=\"M");
    if (k == 5) {
        at_sb_f(b, x - a, 2); at_sb_put(b, " ", 1); at_sb_f(b, y, 2); at_sb_puts(b, " L");
        at_sb_f(b, x + a, 2); at_sb_put(b, " ", 1); at_sb_f(b, y, 2); at_sb_puts(b, " M");
        at_sb_f(b, x, 2); at_sb_put(b, " ", 1); at_sb_f(b, y - a, 2); at_sb_puts(b, " L");
        at_sb_f(b, x, 2); at_sb_put(b, " ", 1); at_sb_f(b, y + a, 2);
    } else {
        at_sb_f(b, x - a, 2); at_sb_put(b, " ", 1); at_sb_f(b, y - a, 2); at_sb_puts(b, " L");
        at_sb_f(b, x + a, 2); at_sb_put(b, " ", 1); at_sb_f(b, y + a, 2); at_sb_puts(b, " M");
        at_sb_f(b, x - a, 2); at_sb_put(b, " ", 1); at_sb_f(b, y + a, 2); at_sb_puts(b, " L");
        at_sb_f(b, x + a, 2); at_sb_put(b, " ", 1); at_sb_f(b, y - a, 2);
    }
    at_sb_printf(b, "\" stroke=\"%s\" stroke-width=\"2.5\" fill=\"none\"/>", colour);
}

static void sb_line(at_sbuf *b, double x1, double y1, double x2, double y2, const char *extra) {
    at_sb_puts(b, "<line x1=\"");
    at_sb_f(b, x1, 2);
    at_sb_puts(b, "\" y1=\"");
    at_sb_f(b, y1, 2);
    at_sb_puts(b, "\" x2=\"");
    at_sb_f(b, x2, 2);
    at_sb_puts(b, "\" y2=\"");
    at_sb_f(b, y2, 2);
    at_sb_printf(b, "\" %s/>\n", extra);
}

/* Text at (x, y) with extra attributes, content escaped. */
static void sb_text(at_sbuf *b, double x, double y, const char *extra, const char *content) {
    at_sb_puts(b, "<text x=\"");
    at_sb_f(b, x, 2);
    at_sb_puts(b, "\" y=\"");
    at_sb_f(b, y, 2);
    at_sb_printf(b, "\" %s>", extra);
    at_render_xml(b, content, 0);
    at_sb_puts(b, "</text>\n");
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
    TRY(at_render_check_text(title, "title", err));
    TRY(at_render_check_text(x_label, "x_label", err));
    TRY(at_render_check_text(y_label, "y_label", err));
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
            CHECK(at_utf8_valid(p->label, strlen(p->label), &bad, NULL), err, ATTEND_ERR_FORMAT, "%s: series %d label: invalid UTF-8 at byte %zu",
                  who, i, bad);
            size_t n = at_utf8_count(p->label);
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
        double tw = left + (double)at_utf8_count(title) * 9.5;
        if (tw > width) width = tw;
    }

    at_sbuf b = {0};
    at_sb_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"");
    at_sb_f(&b, width, 0);
    at_sb_puts(&b, "\" height=\"");
    at_sb_f(&b, height, 0);
    at_sb_puts(&b, "\" viewBox=\"0 0 ");
    at_sb_f(&b, width, 0);
    at_sb_put(&b, " ", 1);
    at_sb_f(&b, height, 0);
    at_sb_puts(&b, "\" font-family=\"" AT_FONT_FAMILY "\" font-size=\"13\" role=\"img\" aria-label=\"");
    at_render_xml(&b, title ? title : "line plot", 0);
    at_sb_puts(&b, "\">\n");
    if (title) {
        at_sb_puts(&b, "<title>");
        at_render_xml(&b, title, 0);
        at_sb_puts(&b, "</title>\n");
    }
    at_sb_puts(&b, "<defs><clipPath id=\"attend-plot-clip\"><rect");
    at_render_xywh(&b, left, top, pw, ph);
    at_sb_puts(&b, "/></clipPath></defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    if (title) sb_text(&b, left, 30, "font-size=\"17\" font-weight=\"bold\" fill=\"#111111\"", title);

    /* grid, ticks and tick labels */
    at_sb_puts(&b, "<g class=\"y-axis\" font-size=\"12\" fill=\"#333333\" text-anchor=\"end\">\n");
    double y0 = ceil(y_min / ystep - 1e-9) * ystep;
    for (int k = 0; k <= 1000; k++) {
        double v = y0 + k * ystep;
        if (v > y_max + ystep * 1e-9) break;
        double py = top + (y_max - v) / (y_max - y_min) * ph;
        sb_line(&b, left, py, left + pw, py, "stroke=\"#e5e8ec\" stroke-width=\"1\"");
        sb_line(&b, left - 5, py, left, py, "stroke=\"#333333\" stroke-width=\"1\"");
        at_sb_puts(&b, "<text x=\"");
        at_sb_f(&b, left - 8, 2);
        at_sb_puts(&b, "\" y=\"");
        at_sb_f(&b, py + 4, 2);
        at_sb_puts(&b, "\">");
        sb_tick(&b, v, ystep, ydec);
        at_sb_puts(&b, "</text>\n");
    }
    at_sb_puts(&b, "</g>\n<g class=\"x-axis\" font-size=\"12\" fill=\"#333333\" text-anchor=\"middle\">\n");
    if (log_x) {
        int every = (dhi - dlo + 7) / 8;
        for (int d = dlo; d <= dhi; d++) {
            double px = left + (d - ax_lo) / (ax_hi - ax_lo) * pw;
            if ((d - dlo) % every == 0) {
                sb_line(&b, px, top, px, top + ph, "stroke=\"#e5e8ec\" stroke-width=\"1\"");
                sb_line(&b, px, top + ph, px, top + ph + 5, "stroke=\"#333333\" stroke-width=\"1\"");
                at_sb_puts(&b, "<text x=\"");
                at_sb_f(&b, px, 2);
                at_sb_puts(&b, "\" y=\"");
                at_sb_f(&b, top + ph + 19, 2);
                at_sb_puts(&b, "\">");
                sb_pow10(&b, d);
                at_sb_puts(&b, "</text>\n");
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
            at_sb_puts(&b, "<text x=\"");
            at_sb_f(&b, px, 2);
            at_sb_puts(&b, "\" y=\"");
            at_sb_f(&b, top + ph + 19, 2);
            at_sb_puts(&b, "\">");
            sb_tick(&b, v, xstep, xdec);
            at_sb_puts(&b, "</text>\n");
        }
    }
    at_sb_puts(&b, "</g>\n");
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
        at_sb_printf(&b, "<g class=\"series\" data-series=\"%d\">\n", i);
        if (p->n > 0) {
            at_sb_printf(&b, "<path clip-path=\"url(#attend-plot-clip)\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
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
                at_sb_puts(&b, pen ? " L" : (k ? " M" : "M"));
                at_sb_f(&b, left + fx * pw, 2);
                at_sb_put(&b, " ", 1);
                at_sb_f(&b, top + fy * ph, 2);
                pen = 1;
            }
            at_sb_puts(&b, "\"/>\n");
            for (int k = 0; k < p->n; k++) {
                if (isnan(p->y[k])) continue;
                int isolated = (k == 0 || isnan(p->y[k - 1])) && (k == p->n - 1 || isnan(p->y[k + 1]));
                if (k % every && !isolated) continue;
                double fx = log_x ? (log10(p->x[k]) - ax_lo) / (ax_hi - ax_lo) : (p->x[k] - ax_lo) / (ax_hi - ax_lo);
                double fy = (y_max - p->y[k]) / (y_max - y_min);
                if (fy < -0.05 || fy > 1.05) continue;
                sb_marker(&b, i, left + fx * pw, top + fy * ph, colour);
                at_sb_put(&b, "\n", 1);
            }
        }
        at_sb_puts(&b, "</g>\n");
    }

    /* legend */
    at_sb_puts(&b, "<g class=\"legend\" font-size=\"12.5\" fill=\"#111111\">\n<rect");
    at_render_xywh(&b, legend_x, top, legend_w, 10 + 20.0 * n_series);
    at_sb_puts(&b, " fill=\"#ffffff\" stroke=\"#c9ced6\" stroke-width=\"1\"/>\n");
    for (int i = 0; i < n_series; i++) {
        const char *colour = series_colour[i % 8];
        double ly = top + 15 + 20.0 * i;
        char extra[96], name[24];
        snprintf(extra, sizeof extra, "stroke=\"%s\" stroke-width=\"2\"", colour);
        at_sb_printf(&b, "<g class=\"legend-entry\" data-series=\"%d\">", i);
        sb_line(&b, legend_x + 8, ly, legend_x + 36, ly, extra);
        sb_marker(&b, i, legend_x + 22, ly, colour);
        snprintf(name, sizeof name, "series %d", i);
        sb_text(&b, legend_x + 44, ly + 4.5, "", series[i].label ? series[i].label : name);
        at_sb_puts(&b, "</g>\n");
    }
    at_sb_puts(&b, "</g>\n</svg>\n");
    return at_sb_finish(&b, out, who, err);
}
