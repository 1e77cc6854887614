/*
 * render_page.c — writes the pages tests/render_chromium.sh opens in headless
 * Chromium: `render_page DIR` writes DIR/page.html (the HTML heatmap of the
 * known alignment below), DIR/heatmap.svg and DIR/plot.svg. The script expects
 * step 2's weights exactly as listed here; change both together.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attend.h"

enum { T = 4, S = 5 };
static const char *const src[S] = {"the", "<black>", "cat", "&", "sat"};
static const char *const out[T] = {"le", "chat", "noir", "s'assit"};
static const attend_real w[T * S] = {
    0.85f, 0.05f, 0.05f, 0.03f, 0.02f,
    0.05f, 0.10f, 0.80f, 0.03f, 0.02f,
    0.02f, 0.70f, 0.15f, 0.05f, 0.08f, /* step 2: "t=2 w=0.020000 0.700000 0.150000 0.050000 0.080000" */
    0.01f, 0.01f, 0.03f, 0.05f, 0.90f,
};

static int write_file(const char *dir, const char *name, const char *text) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "render_page: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: render_page DIR\n");
        return 2;
    }
    attend_error err;
    char *html = NULL, *svg = NULL, *plot = NULL;
    double x[6] = {1, 10, 100, 1000, 10000, 100000};
    double loss[6] = {0.9, 0.7, 0.45, 0.3, 0.22, 0.2}, acc[6] = {0.1, 0.3, 0.55, NAN, 0.8, 0.86};
    attend_plot_series ser[2] = {{"loss", 6, x, loss}, {"accuracy", 6, x, acc}};
    if (attend_render_heatmap_html(&html, w, T, S, src, out, "le chat noir s'assit", &err) ||
        attend_render_heatmap_svg(&svg, w, T, S, src, out, "le chat noir s'assit", &err) ||
        attend_render_line_plot_svg(&plot, ser, 2, "Training", "step", "value", 0, 1, 1, &err)) {
        fprintf(stderr, "render_page: %s: %s\n", attend_status_name(err.status), err.msg);
        return 1;
    }
    int rc = write_file(argv[1], "page.html", html) | write_file(argv[1], "heatmap.svg", svg) |
             write_file(argv[1], "plot.svg", plot);
    free(html);
    free(svg);
    free(plot);
    return rc;
}
