/*
 * dropout.c — inverted dropout of the teacher-forced pass (the extension
 * "dropout"; training option `dropout`): at every site of extension.h (the
 * source embeddings, the input of every encoder layer above the first, the
 * decoder's input embeddings, the output features) each element is kept
 * with probability 1 − p and scaled by 1/(1 − p), and the backward multiplies
 * the gradient by the same mask.
 *
 * The mask of one element is a pure function of (key, site, row, position,
 * element): u = splitmix64-mix chain of those five numbers, uniform in [0,1)
 * from its top 53 bits; the element is kept when u >= p. `row` is the row's
 * index in the WHOLE batch (the forward's row0 + n: a gradient shard's rows
 * keep their masks), `position` the source position j or the decoder step t,
 * `element` the index inside the vector. So the same mask comes whatever the
 * batch padding, the gradient shards or the thread count, and a checkpoint
 * needs nothing beyond the trainer's seed and step count: the trainer's key
 * is a hash of the two. tools/make_dropout_ref.py computes the same masks in
 * numpy. The pass's options (attend_forward_options: dropout, dropout_key,
 * row0) are the running call's (m->run); decoding never drops.
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <stddef.h>

#include "seq2seq/extension.h"

/* splitmix64's output function (Steele, Lea, Flood 2014) */
static uint64_t mix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* the hash of everything but the element: one per vector */
static uint64_t vector_base(uint64_t key, int site, long row, long pos) {
    return mix64(mix64(mix64(key ^ (uint64_t)site) ^ (uint64_t)row) ^ (uint64_t)pos);
}

/* u in [0,1) of element e of a vector */
static double uniform(uint64_t base, long e) { return (double)(mix64(base ^ (uint64_t)e) >> 11) * (1.0 / 9007199254740992.0); }

/* p of the running pass (0 while decoding) */
static double pass_p(const attend_model *m) { return m->run.infer ? 0 : m->run.o.dropout; }

/* Rows [lo,hi) of the first axis of a site's grid (at_parallel_rows' chunks). */
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

static void site(const attend_model *m, attend_real *x, int A, int B, int W, int rows_first, int s) {
    double p = pass_p(m);
    if (!(p > 0)) return;
    grid_job j = {x, B, W, rows_first, s, p, (attend_real)(1.0 / (1.0 - p)), m->run.o.dropout_key, m->run.o.row0};
    at_parallel_rows((double)A * B * W * 4, A, 1, grid_rows, &j);
}

static void site_rows(const attend_model *m, attend_real *x, int N, int pos, int W, int s) {
    double p = pass_p(m);
    if (!(p > 0)) return;
    attend_real scale = (attend_real)(1.0 / (1.0 - p));
    for (int n = 0; n < N; n++) {
        uint64_t base = vector_base(m->run.o.dropout_key, s, m->run.o.row0 + n, pos);
        attend_real *v = x + (size_t)n * W;
        for (int e = 0; e < W; e++) v[e] = uniform(base, e) >= p ? v[e] * scale : 0;
    }
}

/* The keep-and-scale factor (0 or 1/(1-p)) of one element; 1 without dropout. */
static attend_real site_factor(const attend_model *m, int s, long row, long pos, long elem) {
    double p = pass_p(m);
    if (!(p > 0)) return 1;
    return uniform(vector_base(m->run.o.dropout_key, s, m->run.o.row0 + row, pos), elem) >= p
               ? (attend_real)(1.0 / (1.0 - p))
               : 0;
}

static int transforms(const attend_model *m, int s) {
    (void)s;
    return pass_p(m) > 0;
}

/* The trainer's key of a step: a hash of its seed and step count (skipped steps included, as checkpoints store it). */
static void step_options(attend_forward_options *f, const attend_train_options *t, uint64_t seed, long step) {
    f->dropout = t->dropout;
    f->dropout_key = mix64(mix64(seed) ^ (uint64_t)step);
}

static const at_ext_option options[] = {
    {"dropout", offsetof(attend_train_options, dropout), offsetof(attend_forward_options, dropout), 1, 1, 0, 0, 0},
};

const at_ext_ops at_ext_dropout = {
    .name = "dropout",
    .options = options,
    .noptions = 1,
    .step_options = step_options,
    .transforms = transforms,
    .site = site,
    .site_rows = site_rows,
    .site_factor = site_factor,
};

attend_status attend_model_set_dropout(attend_model *m, double p, uint64_t key, attend_error *err) {
    CHECK(m, err, ATTEND_ERR_NULL, "attend_model_set_dropout: model is NULL");
    CHECK(isfinite(p) && p >= 0 && p < 1, err, ATTEND_ERR_ARG, "attend_model_set_dropout: dropout=%g, must be in [0, 1)",
          p);
    m->defaults.dropout = p;
    m->defaults.dropout_key = key;
    m->defaults.row0 = 0;
    m->fwd_ready = 0;
    return at_ok(err);
}
