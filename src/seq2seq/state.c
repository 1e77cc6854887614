/*
 * state.c — the layout walkers of the model's parameters and activations,
 * and the rows a beam search replicates and reorders (state.h).
 *
 * Dimension letters: see state.h.
 */
#include <string.h>

#include "seq2seq/state.h"

/* ---------------------------------------------------------------- layout */

void at_param_add_init(at_param_layout *L, attend_real **slot, const char *name, int d0, int d1, at_init_kind init,
                       double v) {
    size_t numel = (size_t)d0 * (size_t)(d1 > 0 ? d1 : 1);
    if (L->record) {
        at_tensor_desc *td = &L->m->desc[L->count];
        snprintf(td->name, sizeof td->name, "%s", name);
        td->ndim = d1 > 0 ? 2 : 1;
        td->shape[0] = d0;
        td->shape[1] = d1 > 0 ? d1 : 0;
        td->numel = numel;
        td->offset = L->off;
        td->init = init;
        td->init_v = v;
    }
    if (L->base && slot) *slot = L->base + L->off;
    L->off += numel;
    L->count++;
}

void at_param_add(at_param_layout *L, attend_real **slot, const char *name, int d0, int d1) {
    at_param_add_init(L, slot, name, d0, d1, AT_INIT_LINEAR, 0);
}

attend_real *at_act_take(at_act_layout *L, size_t count) {
    attend_real *p = L->base ? L->base + L->off : NULL;
    if (!at_add_size(L->off, count, &L->off)) L->ok = 0;
    return p;
}

int32_t *at_act_ints(at_act_layout *L, size_t count) {
    int32_t *p = L->ibase ? L->ibase + L->ioff : NULL;
    if (!at_add_size(L->ioff, count, &L->ioff)) L->ok = 0;
    return p;
}

void at_act_rows(at_act_layout *L, void *base, size_t unit, int per_source, int kind) {
    attend_model *m = L->m;
    if (!L->base || !base || unit == 0) return;
    if (m->nrows >= AT_ROWS_MAX) { /* a registration error, caught by the tests of every kind */
        L->ok = 0;
        return;
    }
    at_rows *r = &m->rows[m->nrows++];
    r->base = base;
    r->unit = unit;
    r->per_source = per_source;
    r->kind = kind;
}

/* ------------------------------------------------------------------ rows */

void at_gather_rows(void *dst, const void *src, void *tmp, const int *parent, int n, size_t w) {
    unsigned char *t = tmp;
    const unsigned char *s = src;
    for (int j = 0; j < n; j++) memcpy(t + (size_t)j * w, s + (size_t)parent[j] * w, w);
    memcpy(dst, tmp, (size_t)n * w);
}

static size_t row_bytes(const at_rows *r, int S) { return r->unit * (size_t)(r->per_source ? S : 1); }

size_t at_rows_tmp_bytes(const attend_model *m) {
    size_t w = 1;
    for (int i = 0; i < m->nrows; i++) {
        size_t b = row_bytes(&m->rows[i], m->cfg.max_src_len);
        if (b > w) w = b;
    }
    return w * (size_t)m->cfg.max_batch;
}

void at_rows_replicate(attend_model *m, int K, int S) {
    for (int i = 0; i < m->nrows; i++) {
        const at_rows *r = &m->rows[i];
        size_t w = row_bytes(r, S);
        for (int k = 1; k < K; k++) memcpy(r->base + (size_t)k * w, r->base, w);
    }
}

void at_rows_reorder(attend_model *m, int t, const int *parent, int n, int live, int S) {
    for (int i = 0; i < m->nrows; i++) {
        const at_rows *r = &m->rows[i];
        size_t w = row_bytes(r, S);
        if (r->kind == AT_ROWS_STATE)
            at_gather_rows(r->base, r->base, m->rows_tmp, parent, n, w);
        else if (r->kind == AT_ROWS_STEPS) /* step t+1's slot, from `live` rows to n */
            at_gather_rows(r->base + (size_t)(t + 1) * n * w, r->base + (size_t)(t + 1) * live * w, m->rows_tmp, parent,
                           n, w);
    }
}
