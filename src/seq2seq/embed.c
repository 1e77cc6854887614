/*
 * embed.c — the gradients of embedding lookups and of per-token projection
 * tables (embed.h).
 *
 * Dimension letters: see state.h.
 */
#include <string.h>

#include "seq2seq/embed.h"
#include "core/isa.h"

void at_embedding_backward(attend_real *gemb, const attend_real *drows, const int32_t *ids, size_t R, int D) {
    for (size_t r = 0; r < R; r++) {
        int32_t id = ids[r];
        if (id <= ATTEND_PAD) continue;
        attend_real *dst = gemb + (size_t)id * D;
        for (int d = 0; d < D; d++) dst[d] += drows[r * D + d];
    }
}

/* dtab [V,GH] += the rows of dxg [R,GH] by token: row r into ids[r]'s row
 * (PAD's past a row's length len[r / S], when len is given). */
AT_KERNEL_VOID(static, scatter_rows,
               (attend_real *restrict dtab, const attend_real *restrict dxg, const int32_t *ids, const int32_t *len,
                int S, size_t R, int GH),
               (dtab, dxg, ids, len, S, R, GH)) {
    for (size_t r = 0; r < R; r++) {
        int32_t id = len && (int)(r % (size_t)S) >= len[r / (size_t)S] ? ATTEND_PAD : ids[r];
        attend_real *restrict d = dtab + (size_t)id * GH;
        const attend_real *restrict x = dxg + r * GH;
#pragma omp simd
        for (int k = 0; k < GH; k++) d[k] += x[k];
    }
}

void at_table_backward(const attend_model *m, attend_real *dtab, attend_real *demb, attend_real *gemb, attend_real *gW,
                       int ldw, attend_real *gb, const attend_real *dxg, const int32_t *ids, const int32_t *len, int S,
                       size_t R, int V, int GH, const attend_real *emb, const attend_real *W) {
    int D = m->cfg.emb;
    memset(dtab, 0, (size_t)V * GH * sizeof *dtab);
    scatter_rows(dtab, dxg, ids, len, S, R, GH);
    at_gemm(1, 0, GH, D, V, 1, dtab, GH, emb, D, 1, gW, ldw); /* W: tab = emb Wᵀ + b */
    at_rows_sum(gb, dtab, (size_t)V, GH);
    /* emb: rows V of demb [V,D] = dtab W, then every row but PAD's */
    at_gemm(0, 0, V, D, GH, 1, dtab, GH, W, ldw, 0, demb, D);
    for (int v = ATTEND_PAD + 1; v < V; v++)
        for (int d = 0; d < D; d++) gemb[(size_t)v * D + d] += demb[(size_t)v * D + d];
}
