/*
 * heatmap.c — prints an alignment w [T,S] (T output tokens, S source tokens)
 * as text: the library draws it (attend_render_heatmap_text_style; the layout
 * is described at the top of src/analysis/render.c).
 */
#include "heatmap.h"

#include <stdlib.h>
#include <string.h>

int heatmap_style_from_name(const char *name) {
    if (!strcmp(name, "shade")) return HEATMAP_SHADE;
    if (!strcmp(name, "percent")) return HEATMAP_PERCENT;
    if (!strcmp(name, "tsv")) return HEATMAP_TSV;
    return -1;
}

void heatmap_print(FILE *f, const attend_real *w, int T, int S, const char *const *src_tokens,
                   const char *const *out_tokens, heatmap_style style) {
    char *text = NULL;
    attend_error err = {0};
    if (attend_render_heatmap_text_style(&text, w, T, S, src_tokens, out_tokens, style, &err)) {
        char vis[4 * ATTEND_ERROR_MSG_MAX];
        attend_text_visible(vis, sizeof vis, err.msg, strlen(err.msg));
        fprintf(stderr, "attend: heatmap: %s\n", vis);
        return;
    }
    fputs(text, f);
    free(text);
}
