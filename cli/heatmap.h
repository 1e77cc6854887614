/* heatmap.h — an alignment [T,S] as text, for `attend decode --align` and
 * `attend demo`: source tokens across the top, output tokens down the side. */
#ifndef ATTEND_CLI_HEATMAP_H
#define ATTEND_CLI_HEATMAP_H

#include <stdio.h>

#include "attend.h"

typedef enum {
    HEATMAP_SHADE = 0,   /* one shade character per tenth of weight: " .:-=+*#%@" */
    HEATMAP_PERCENT = 1, /* the weight in hundredths, 0..100 */
    HEATMAP_TSV = 2,     /* machine-readable: a header row of source tokens, then
                            one row per output token with its weights (%.4f) */
} heatmap_style;

/* The shade ramp, lightest first; weight w uses HEATMAP_RAMP[min(9, floor(10 w))]. */
#define HEATMAP_RAMP " .:-=+*#%@"

/* "shade" "percent" "tsv" -> style; -1 for an unknown name. */
int heatmap_style_from_name(const char *name);

/*
 * Prints w [T,S] (row t: the weights of output token out_tokens[t] over the
 * source tokens src_tokens[0..S)) to f. Every byte the renderer adds is ASCII;
 * tokens are printed as they are (a space token shows as '_' in the text
 * styles), cut to a column width of at most 6 (source) or 12 (output)
 * characters with '~' marking the cut.
 */
void heatmap_print(FILE *f, const attend_real *w, int T, int S, const char *const *src_tokens,
                   const char *const *out_tokens, heatmap_style style);

#endif
