/*
 * render_internal.h — what the renderers (render.c, render_svg.c,
 * render_html.c, plot.c) share, private to the library. The conventions
 * (weights, tokens, escaping) are written at the top of render.c.
 *
 * Dimension letters: T output (target) steps, S source positions.
 */
#ifndef ATTEND_RENDER_INTERNAL_H
#define ATTEND_RENDER_INTERNAL_H

#include "internal.h"
#include "io/text.h"

#define AT_RENDER_MAX_CELLS 1000000   /* T*S bound for heatmaps */
#define AT_RENDER_MAX_POINTS 1000000  /* total points of a line plot */
#define AT_RENDER_MAX_SERIES 64
#define AT_RENDER_WEIGHT_TOL 1e-6     /* allowed excursion outside [0,1] */
#define AT_TEXT_SRC_WIDTH 6           /* source column width, code points */
#define AT_TEXT_OUT_WIDTH 12          /* output label width, code points */
#define AT_SVG_LABEL_MAX 20           /* code points of an SVG axis label before "…" */
#define AT_FONT_FAMILY "DejaVu Sans, Helvetica, Arial, sans-serif"

/* The label of position i: the token, or its number written into buf. */
const char *at_render_label_of(const char *const *tokens, int i, char buf[16]);
/* title (may be NULL) must be valid UTF-8; name names it in the message. */
attend_status at_render_check_text(const char *s, const char *name, attend_error *err);
/* The argument checks every heatmap shares (the top of render.c); who names
 * the public function in messages. Sets *out = NULL first. */
attend_status at_render_check_heatmap(char **out, const attend_real *w, int T, int S, const char *const *src_tokens,
                                      const char *const *out_tokens, const char *title, const char *who,
                                      attend_error *err);
/* w [T,S] at [t,s], clamped to [0,1]. */
double at_render_weight_at(const attend_real *w, int S, int t, int s);
/* Writes s (valid UTF-8) escaped for XML/HTML text and attribute values; when
 * max_cp > 0 and s is longer, its first max_cp - 1 code points and "…". */
void at_render_xml(at_sbuf *b, const char *s, size_t max_cp);

/* Appends ` x="X" y="Y" width="W" height="H"` (two decimals each, the
 * locale-independent at_sb_f): the box of an SVG <rect>. */
void at_render_xywh(at_sbuf *b, double x, double y, double w, double h);
/* The heatmap SVG of w [T,S] (arguments already checked); embed != 0 leaves
 * out the XML declaration and adds the row highlight the HTML page uses. */
void at_render_heatmap_svg(at_sbuf *b, const attend_real *w, int T, int S, const char *const *src_tokens,
                           const char *const *out_tokens, const char *title, int embed);

#endif
