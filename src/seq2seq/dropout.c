/*
 * dropout.c — inverted dropout masks from a counter-based hash (dropout.h):
 * the same mask for a (key, site, row, position, element) whatever the batch
 * padding, the gradient shards or the thread count, and nothing to save in a
 * checkpoint beyond the trainer's seed and step count.
 *
 * Dimension letters: see model_internal.h.
 */
#include <math.h>

#include "seq2seq/dropout.h"

/* splitmix64's output function (Steele, Lea, Flood 2014) */
static uint64_t mix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t at_dropout_key(uint64_t seed, long step) { return mix64(mix64(seed) ^ (uint64_t)step); }

/* the hash of everything but the element: one per vector */
static uint64_t vector_base(uint64_t key, int site, long row, long pos) {
    return mix64(mix64(mix64(key ^ (uint64_t)site) ^ (uint64_t)row) ^ (uint64_t)pos);
}

/* u in [0,1) of element e of a vector */
static double uniform(uint64_t base, long e) { return (double)(mix64(base ^ (uint64_t)e) >> 11) * (1.0 / 9007199254740992.0); }

attend_real at_dropout_factor(double p, uint64_t key, int site, long row, long pos, long elem) {
    return uniform(vector_base(key, site, row, pos), elem) >= p ? (attend_real)(1.0 / (1.0 - p)) : 0;
}

/* Rows [lo,hi) of the first axis of at_dropout_grid (at_parallel_rows' chunks). */
typedef struct {
    attend_real *x;
    int B, W, rows_first, site;
    double p;
    attend_real scale;
    uint64_t key;
    long row0;
} grid_job;

static void grid_rows(void *pj, int lo, int hi) {
    const grid_job *j = pj;
    for (int a = lo; a < hi; a++)
        for (int b = 0; b < j->B; b++) {
            long row = j->row0 + (j->rows_first ? a : b), pos = j->rows_first ? b : a;
            uint64_t base = vector_base(j->key, j->site, row, pos);
            attend_real *v = j->x + ((size_t)a * j->B + b) * j->W;
            for (int e = 0; e < j->W; e++) v[e] = uniform(base, e) >= j->p ? v[e] * j->scale : 0;
        }
}

void at_dropout_grid(const attend_model *m, attend_real *x, int A, int B, int W, int rows_first, int site) {
    double p = m->fwd_drop_p;
    if (!(p > 0)) return;
    attend_real scale = (attend_real)(1.0 / (1.0 - p));
    uint64_t key = m->fwd_drop_key;
    long row0 = m->fwd_drop_row0;
    grid_job j = {x, B, W, rows_first, site, p, scale, key, row0};
    at_parallel_rows((double)A * B * W * 4, A, 1, grid_rows, &j);
}

void at_dropout_rows(const attend_model *m, attend_real *x, int N, int pos, int W, int site) {
    double p = m->fwd_drop_p;
    if (!(p > 0)) return;
    attend_real scale = (attend_real)(1.0 / (1.0 - p));
    for (int n = 0; n < N; n++) {
        uint64_t base = vector_base(m->fwd_drop_key, site, m->fwd_drop_row0 + n, pos);
        attend_real *v = x + (size_t)n * W;
        for (int e = 0; e < W; e++) v[e] = uniform(base, e) >= p ? v[e] * scale : 0;
    }
}

attend_status attend_model_set_dropout(attend_model *m, double p, uint64_t key, attend_error *err) {
    CHECK(m, err, ATTEND_ERR_NULL, "attend_model_set_dropout: model is NULL");
    CHECK(isfinite(p) && p >= 0 && p < 1, err, ATTEND_ERR_ARG, "attend_model_set_dropout: dropout=%g, must be in [0, 1)",
          p);
    m->drop_p = p;
    m->drop_key = key;
    m->drop_row0 = 0;
    m->fwd_ready = 0;
    return at_ok(err);
}
