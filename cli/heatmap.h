/* heatmap.h — an alignment [T,S] as text, for `attend decode --align` and
 * `attend demo`: source tokens across the top, output tokens down the side.
 * The drawing is the library's (attend_render_heatmap_text_style, the grid
 * styles); this prints it. */
#ifndef ATTEND_CLI_HEATMAP_H
#define ATTEND_CLI_HEATMAP_H

#include <stdio.h>

#include "attend.h"

typedef attend_heatmap_style heatmap_style;
#define HEATMAP_SHADE ATTEND_HEATMAP_SHADE     /* one shade character per tenth of weight: " .:-=+*#%@" */
#define HEATMAP_PERCENT ATTEND_HEATMAP_PERCENT /* the weight in hundredths, 0..100 */
#define HEATMAP_TSV ATTEND_HEATMAP_TSV         /* a header row of source tokens, then one row per
                                                  output token with its weights (%.4f) */

/* "shade" "percent" "tsv" -> style; -1 for an unknown name. */
int heatmap_style_from_name(const char *name);

/* Prints w [T,S] (row t: the weights of output token out_tokens[t] over the
 * source tokens src_tokens[0..S)) to f in a grid style; on a library error
 * (out of memory) prints the message to stderr instead. */
void heatmap_print(FILE *f, const attend_real *w, int T, int S, const char *const *src_tokens,
                   const char *const *out_tokens, heatmap_style style);

#endif
