/*
 * train.c — the trainer (shuffled batches, forward, backward, clip, update),
 * data-parallel steps, and evaluation (teacher-forced and greedy).
 * Checkpoints (save, resume, fingerprints) are in train_checkpoint.c.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seq2seq/train_internal.h"
#include "seq2seq/linear.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/extension.h"
#include "seq2seq/model.h"


/* FNV-1a 64 over bytes, continuing from h. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* The training data's fingerprint: per pair in dataset order, its source
 * length, source ids, target length, target ids, each as little-endian int32;
 * with align, then its alignment's link count (-1: none) and links. */
static uint64_t fingerprint_data(const attend_dataset *d, int align) {
    uint64_t h = 0xcbf29ce484222325ULL;
    int n = attend_dataset_size(d);
    for (int i = 0; i < n; i++) {
        const int32_t *src, *tgt;
        int sl, tl;
        if (attend_dataset_get(d, i, &src, &sl, &tgt, &tl, NULL) != ATTEND_OK) continue;
        const int32_t *side[2] = {src, tgt};
        int len[2] = {sl, tl};
        for (int k = 0; k < 2; k++) {
            unsigned char le[4];
            for (int j = -1; j < len[k]; j++) {
                uint32_t v = (uint32_t)(j < 0 ? len[k] : side[k][j]);
                for (int b = 0; b < 4; b++) le[b] = (unsigned char)(v >> (8 * b));
                h = fnv1a(h, le, 4);
            }
        }
        const int32_t *links;
        int nl;
        if (!align || attend_dataset_get_alignment(d, i, &links, &nl, NULL) != ATTEND_OK) continue;
        for (int j = -1; j < 2 * nl; j++) {
            unsigned char le[4];
            uint32_t v = (uint32_t)(j < 0 ? nl : links[j]);
            for (int b = 0; b < 4; b++) le[b] = (unsigned char)(v >> (8 * b));
            h = fnv1a(h, le, 4);
        }
    }
    return h;
}

/* Fisher–Yates with the trainer's RNG; a new epoch begins. */
static void shuffle(attend_trainer *tr) {
    for (int i = 0; i < tr->n; i++) tr->perm[i] = i;
    for (int i = tr->n - 1; i > 0; i--) {
        int j = (int)(attend_rng_next(&tr->rng) % (uint64_t)(i + 1));
        int32_t t = tr->perm[i];
        tr->perm[i] = tr->perm[j];
        tr->perm[j] = t;
    }
    tr->pos = 0;
    if (tr->epoch < INT_MAX) tr->epoch++; /* saturates: 2^31 epochs are not reached by training */
}

attend_status attend_trainer_create(attend_trainer **out, attend_model *m, const attend_optim_config *opt,
                                    const attend_dataset *train, int batch_size, uint64_t seed,
                                    attend_error *err) {
    const char *who = "attend_trainer_create";
    CHECK(out && m && opt && train, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !out ? "out" : !m ? "model" : !opt ? "optimizer config" : "training data");
    *out = NULL;
    CHECK(m->wdtype == ATTEND_DTYPE_F32, err, ATTEND_ERR_ARG,
          "%s: the model's weights are quantized (%s): training needs the float32 model", who,
          attend_dtype_name(m->wdtype));
    int n = attend_dataset_size(train);
    CHECK(n >= 1, err, ATTEND_ERR_ARG, "%s: the training data is empty", who);
    CHECK(batch_size >= 1 && batch_size <= m->cfg.max_batch, err, ATTEND_ERR_CAPACITY,
          "%s: batch_size=%d outside [1, max_batch=%d]", who, batch_size, m->cfg.max_batch);
    int ms = attend_dataset_max_src_len(train), mt = attend_dataset_max_tgt_len(train);
    CHECK(ms <= m->cfg.max_src_len, err, ATTEND_ERR_CAPACITY,
          "%s: the data has a source of %d tokens, the model's max_src_len is %d", who, ms, m->cfg.max_src_len);
    CHECK(mt <= m->cfg.max_tgt_len, err, ATTEND_ERR_CAPACITY,
          "%s: the data has a target of %d tokens, the model's max_tgt_len is %d", who, mt, m->cfg.max_tgt_len);
    attend_trainer *tr = calloc(1, sizeof *tr);
    CHECK(tr, err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    tr->m = m;
    tr->data = train;
    tr->opt_cfg = *opt;
    tr->seed = seed;
    tr->batch_size = batch_size;
    tr->n = n;
    tr->perm = calloc((size_t)n, sizeof *tr->perm);
    tr->idx = calloc((size_t)batch_size, sizeof *tr->idx);
    attend_status st = tr->perm && tr->idx ? ATTEND_OK : at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    if (!st) st = attend_optim_create(&tr->opt, opt, m->nparams, err);
    if (!st) st = attend_batch_alloc(&tr->batch, batch_size, m->cfg.max_src_len, m->cfg.max_tgt_len + m->dec->eos, err);
    if (st) {
        attend_trainer_free(tr);
        return st;
    }
    attend_rng_seed(&tr->rng, seed);
    shuffle(tr);
    tr->data_hash = fingerprint_data(train, 0);
    tr->shards = tr->nranks = 1;
    *out = tr;
    return at_ok(err);
}

/* Frees the data-parallel buffers (attend_trainer_set_parallel) and forgets them. */
static void parallel_free(attend_trainer *tr) {
    free(tr->node_rank);
    free(tr->node_lo);
    free(tr->node_hi);
    free(tr->part);
    free(tr->sum);
    free(tr->scratch);
    free(tr->lens);
    tr->node_rank = tr->node_lo = tr->node_hi = NULL;
    tr->part = tr->sum = tr->scratch = NULL;
    tr->lens = NULL;
}

void attend_trainer_free(attend_trainer *tr) {
    if (!tr) return;
    free(tr->caller_state);
    attend_optim_free(tr->opt);
    attend_batch_release(&tr->batch);
    free(tr->perm);
    free(tr->idx);
    parallel_free(tr);
    free(tr);
}

long attend_trainer_steps(const attend_trainer *tr) { return tr ? attend_optim_steps(tr->opt) + tr->skipped : 0; }
long attend_trainer_skipped(const attend_trainer *tr) { return tr ? tr->skipped : 0; }
long attend_trainer_nonfinite_run(const attend_trainer *tr) { return tr ? tr->nonfinite_run : 0; }

attend_status attend_trainer_set_max_nonfinite(attend_trainer *tr, long max_run, attend_error *err) {
    CHECK(tr, err, ATTEND_ERR_NULL, "attend_trainer_set_max_nonfinite: trainer is NULL");
    CHECK(max_run >= 0, err, ATTEND_ERR_ARG, "attend_trainer_set_max_nonfinite: max_run=%ld, must be >= 0 (0 = no limit)",
          max_run);
    tr->max_nonfinite = max_run;
    return at_ok(err);
}

attend_status attend_trainer_set_options(attend_trainer *tr, const attend_train_options *o, attend_error *err) {
    const char *who = "attend_trainer_set_options";
    CHECK(tr && o, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !tr ? "trainer" : "options");
    TRY(at_ext_options_range(o, NULL, who, err));
    CHECK(attend_optim_steps(tr->opt) == 0, err, ATTEND_ERR_ARG,
          "%s: the trainer has taken %ld steps; set the options before the first", who, attend_optim_steps(tr->opt));
    /* what does not combine (the extensions' rules), then what the model and the data must offer */
    int broken = at_ext_rule_broken(&tr->m->cfg, o);
    if (broken >= 0) return at_ext_rule_fail(&tr->m->cfg, broken, who, err);
    TRY(at_ext_check_options(tr->m, o, tr->data, who, err));
    /* options that read the data's alignments make them part of its fingerprint */
    tr->data_hash = fingerprint_data(tr->data, at_ext_reads_alignments(o));
    tr->topt = *o;
    attend_forward_options f;
    at_ext_step_options(&f, o, tr->seed, 0, 0);
    at_ext_persist(&tr->m->defaults, &f);
    return at_ok(err);
}

const attend_train_options *attend_trainer_options(const attend_trainer *tr) { return tr ? &tr->topt : NULL; }

/* The teacher-forced forward of rows [row0, row0 + N) of this step's batch
 * (row0: a shard's offset in the whole batch) with the step's options: each
 * extension's per-step values from the trainer's seed and step count
 * (at_ext_step_options). Evaluation and decoding between steps pass their
 * own (none). */
static attend_status train_forward(attend_trainer *tr, long row0, attend_tf_stats *tf, attend_error *err) {
    attend_model *m = tr->m;
    at_run run;
    memset(&run, 0, sizeof run);
    at_ext_step_options(&run.o, &tr->topt, tr->seed, attend_trainer_steps(tr), row0);
    at_ext_persist(&m->defaults, &run.o); /* the loss weights stay on the model, as before per-call options */
    return at_model_forward(m, &tr->batch, &run, tf, err);
}

/* A step whose loss is not finite: no update, the report's gradient norm NaN
 * and the learning rate the step would have had. */
static void skipped_update(const attend_trainer *tr, attend_step_report *r) {
    r->opt.grad_norm = NAN;
    r->opt.lr = attend_optim_lr_at(&tr->opt_cfg, attend_optim_steps(tr->opt));
}

/* Books the optimizer's status st (oerr its message): a non-finite step is
 * skipped and counted, another error returned, success ends a non-finite run. */
static attend_status count_update(attend_trainer *tr, attend_status st, const attend_error *oerr,
                                  attend_step_report *r, attend_error *err) {
    if (st == ATTEND_ERR_NONFINITE) {
        tr->skipped++;
        tr->nonfinite_run++;
        r->skipped = 1;
    } else if (st != ATTEND_OK) {
        return at_fail(err, st, "%s", oerr->msg);
    } else {
        tr->nonfinite_run = 0;
    }
    return ATTEND_OK;
}

/* The end of every step: the optimizer's status booked (count_update), nb
 * pairs consumed, the report, and the stop after max_nonfinite skipped steps
 * in a row. */
static attend_status finish_step(attend_trainer *tr, attend_status st, const attend_error *oerr,
                                 attend_step_report *r, int nb, attend_step_report *rep, attend_error *err) {
    TRY(count_update(tr, st, oerr, r, err));
    tr->pos += nb;
    r->step = attend_trainer_steps(tr);
    r->epoch = tr->epoch;
    if (rep) *rep = *r;
    CHECK(tr->max_nonfinite == 0 || tr->nonfinite_run < tr->max_nonfinite, err, ATTEND_ERR_NONFINITE,
          "attend_trainer_step: %ld non-finite steps in a row (steps %ld-%ld; last: loss %g, gradient norm %g): "
          "training stopped; the weights are those of step %ld",
          tr->nonfinite_run, r->step - tr->nonfinite_run + 1, r->step, r->tf.loss, r->opt.grad_norm,
          r->step - tr->nonfinite_run);
    return at_ok(err);
}

static attend_status parallel_step(attend_trainer *tr, attend_step_report *rep, attend_error *err);

attend_status attend_trainer_step(attend_trainer *tr, attend_step_report *rep, attend_error *err) {
    CHECK(tr, err, ATTEND_ERR_NULL, "attend_trainer_step: trainer is NULL");
    if (tr->shards > 1 || tr->nranks > 1) return parallel_step(tr, rep, err);
    attend_model *m = tr->m;
    /* the next batch_size pairs of the epoch's order (a short last batch is kept) */
    if (tr->pos >= tr->n) shuffle(tr);
    int nb = tr->n - tr->pos < tr->batch_size ? tr->n - tr->pos : tr->batch_size;
    for (int i = 0; i < nb; i++) tr->idx[i] = tr->perm[tr->pos + i];
    TRY(attend_batch_fill(&tr->batch, tr->data, tr->idx, nb, !m->dec->eos, err));
    attend_step_report r;
    memset(&r, 0, sizeof r);
    attend_model_zero_grad(m);
    TRY(train_forward(tr, 0, &r.tf, err));
    /* a non-finite loss skips the update without a backward pass; a non-finite
     * gradient norm is found by the optimizer, which then changes nothing */
    attend_error oerr;
    attend_status st = ATTEND_ERR_NONFINITE;
    if (isfinite(r.tf.loss)) {
        TRY(attend_model_backward(m, err));
        st = attend_optim_step(tr->opt, m->params, m->grads, &r.opt, &oerr);
        at_model_params_changed(m);
    } else {
        skipped_update(tr, &r);
    }
    return finish_step(tr, st, &oerr, &r, nb, rep, err);
}

/* ------------------------------------------------- data-parallel steps */

uint64_t attend_trainer_data_fingerprint(const attend_trainer *tr) { return tr ? tr->data_hash : 0; }
size_t attend_trainer_node_len(const attend_trainer *tr) { return tr ? tr->m->nparams + ATTEND_TRAINER_NODE_STATS : 0; }

/* The rank owning shard k. */
static int shard_owner(const attend_trainer *tr, int k) { return k / (tr->shards / tr->nranks); }

/* Lists the maximal tree nodes inside one rank's range, in DFS order; with
 * list NULL only counts them. */
static int list_nodes(attend_trainer *tr, int lo, int hi, int n, int fill) {
    if (shard_owner(tr, lo) == shard_owner(tr, hi - 1)) {
        if (fill) {
            tr->node_rank[n] = shard_owner(tr, lo);
            tr->node_lo[n] = lo;
            tr->node_hi[n] = hi;
        }
        return n + 1;
    }
    int mid = lo + (hi - lo) / 2;
    return list_nodes(tr, mid, hi, list_nodes(tr, lo, mid, n, fill), fill);
}

attend_status attend_trainer_set_parallel(attend_trainer *tr, int shards, int rank, int nranks,
                                          attend_trainer_exchange_fn exchange, void *user, attend_error *err) {
    const char *who = "attend_trainer_set_parallel";
    CHECK(tr, err, ATTEND_ERR_NULL, "%s: trainer is NULL", who);
    CHECK(shards >= 1 && nranks >= 1 && rank >= 0 && rank < nranks, err, ATTEND_ERR_ARG,
          "%s: shards=%d, rank=%d, nranks=%d: need shards >= 1 and 0 <= rank < nranks", who, shards, rank, nranks);
    CHECK(shards % nranks == 0, err, ATTEND_ERR_ARG, "%s: %d ranks do not divide %d gradient shards", who, nranks,
          shards);
    CHECK(shards <= tr->batch_size, err, ATTEND_ERR_ARG, "%s: %d gradient shards for a batch of %d rows", who,
          shards, tr->batch_size);
    CHECK(exchange || nranks == 1, err, ATTEND_ERR_ARG, "%s: %d ranks need an exchange function", who, nranks);
    parallel_free(tr);
    tr->shards = shards;
    tr->rank = rank;
    tr->nranks = nranks;
    tr->exchange = exchange;
    tr->exchange_user = user;
    tr->node_len = attend_trainer_node_len(tr);
    tr->nnodes = list_nodes(tr, 0, shards, 0, 0);
    tr->depth = 1;
    while ((1 << (tr->depth - 1)) < shards) tr->depth++;
    int mine = 0;
    tr->node_rank = malloc((size_t)tr->nnodes * sizeof(int));
    tr->node_lo = malloc((size_t)tr->nnodes * sizeof(int));
    tr->node_hi = malloc((size_t)tr->nnodes * sizeof(int));
    tr->lens = calloc((size_t)nranks, sizeof(size_t));
    if (tr->node_rank && tr->node_lo && tr->node_hi) {
        list_nodes(tr, 0, shards, 0, 1);
        for (int i = 0; i < tr->nnodes; i++) mine += tr->node_rank[i] == rank;
    }
    size_t L = tr->node_len;
    tr->part = malloc((size_t)(mine ? mine : 1) * L * sizeof(attend_real));
    tr->sum = malloc(L * sizeof(attend_real));
    tr->scratch = malloc((size_t)tr->depth * L * sizeof(attend_real));
    if (!(tr->node_rank && tr->node_lo && tr->node_hi && tr->lens && tr->part && tr->sum && tr->scratch)) {
        tr->shards = tr->nranks = 1; /* back to the plain step */
        tr->rank = 0;
        return at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory (%d nodes of %zu reals)", who, tr->nnodes, L);
    }
    for (int i = 0; i < tr->nnodes; i++) tr->lens[tr->node_rank[i]] += L;
    return at_ok(err);
}

size_t attend_trainer_part_len(const attend_trainer *tr, int rank) {
    return tr && rank >= 0 && rank < tr->nranks && tr->lens ? tr->lens[rank] : 0;
}

/* Rows [*r0, *r1) of shard k in a batch of nb rows. */
static void shard_rows(const attend_trainer *tr, int k, int nb, int *r0, int *r1) {
    *r0 = (int)((long long)k * nb / tr->shards);
    *r1 = (int)((long long)(k + 1) * nb / tr->shards);
}

/* One shard's gradient and statistics into out [node_len]. */
static attend_status shard_grad(attend_trainer *tr, int k, attend_real *out, attend_error *err) {
    attend_model *m = tr->m;
    size_t P = m->nparams;
    int r0, r1;
    shard_rows(tr, k, tr->nb, &r0, &r1);
    memset(out, 0, tr->node_len * sizeof *out);
    if (r1 == r0) return ATTEND_OK; /* a short last batch: an empty shard adds nothing */
    TRY(attend_batch_fill(&tr->batch, tr->data, tr->idx + r0, r1 - r0, !m->dec->eos, err));
    attend_tf_stats tf;
    attend_model_zero_grad(m);
    TRY(train_forward(tr, r0, &tf, err));
    if (isfinite(tf.loss)) {
        m->fwd_count = tr->global_count; /* the mean over the whole batch */
        TRY(attend_model_backward(m, err));
        memcpy(out, m->grads, P * sizeof *out);
    } else {
        for (size_t i = 0; i < P; i++) out[i] = (attend_real)NAN; /* the whole step is skipped */
    }
    out[P + 0] = (attend_real)(tf.loss * tf.tokens);
    out[P + 1] = (attend_real)tf.tokens;
    out[P + 2] = (attend_real)tf.correct_tokens;
    out[P + 3] = (attend_real)tf.seqs;
    out[P + 4] = (attend_real)tf.correct_seqs;
    out[P + 5] = (attend_real)(tf.attn_entropy * tf.tokens);
    return ATTEND_OK;
}

/* The sum of shards [lo,hi) in the fixed tree order into out: computed here
 * (nodes NULL; n = node_len) or, for the maximal nodes, taken from nodes, n
 * reals each (*next counts them in DFS order). */
static attend_status tree_sum(attend_trainer *tr, int lo, int hi, int level, attend_real *out,
                              const attend_real *nodes, size_t n, int *next, attend_error *err) {
    if (nodes && shard_owner(tr, lo) == shard_owner(tr, hi - 1)) {
        memcpy(out, nodes + (size_t)(*next)++ * n, n * sizeof *out);
        return ATTEND_OK;
    }
    if (!nodes && hi - lo == 1) return shard_grad(tr, lo, out, err);
    int mid = lo + (hi - lo) / 2;
    attend_real *right = tr->scratch + (size_t)level * tr->node_len;
    TRY(tree_sum(tr, lo, mid, level + 1, out, nodes, n, next, err));
    TRY(tree_sum(tr, mid, hi, level + 1, right, nodes, n, next, err));
    for (size_t i = 0; i < n; i++) out[i] += right[i];
    return ATTEND_OK;
}

attend_status attend_trainer_reduce(attend_trainer *tr, const attend_real *nodes, size_t n, attend_real *out,
                                    attend_error *err) {
    CHECK(tr && nodes && out, err, ATTEND_ERR_NULL, "attend_trainer_reduce: %s is NULL",
          !tr ? "trainer" : !nodes ? "nodes" : "out");
    CHECK(tr->lens, err, ATTEND_ERR_ARG, "attend_trainer_reduce: call attend_trainer_set_parallel first");
    CHECK(n <= tr->node_len, err, ATTEND_ERR_ARG, "attend_trainer_reduce: n=%zu is more than a node's %zu reals", n,
          tr->node_len);
    int next = 0;
    if (tr->nnodes == 1) memmove(out, nodes, n * sizeof *out);
    else TRY(tree_sum(tr, 0, tr->shards, 0, out, nodes, n, &next, err));
    return at_ok(err);
}

attend_status attend_trainer_step_part(attend_trainer *tr, const attend_real **part, attend_error *err) {
    CHECK(tr && part, err, ATTEND_ERR_NULL, "attend_trainer_step_part: %s is NULL", !tr ? "trainer" : "part");
    CHECK(tr->lens, err, ATTEND_ERR_ARG, "attend_trainer_step_part: call attend_trainer_set_parallel first");
    int eos = tr->m->dec->eos;
    if (tr->pos >= tr->n) shuffle(tr);
    int nb = tr->n - tr->pos < tr->batch_size ? tr->n - tr->pos : tr->batch_size;
    tr->nb = nb;
    tr->global_count = 0;
    for (int i = 0; i < nb; i++) { /* counted tokens: the targets (+ EOS when sequences end with one) */
        tr->idx[i] = tr->perm[tr->pos + i];
        const int32_t *src, *tgt;
        int sl, tl;
        TRY(attend_dataset_get(tr->data, tr->idx[i], &src, &sl, &tgt, &tl, err));
        tr->global_count += tl + eos;
    }
    size_t L = tr->node_len;
    attend_real *out = tr->part;
    for (int i = 0; i < tr->nnodes; i++) {
        if (tr->node_rank[i] != tr->rank) continue;
        TRY(tree_sum(tr, tr->node_lo[i], tr->node_hi[i], 0, out, NULL, L, NULL, err));
        out += L;
    }
    *part = tr->part;
    return at_ok(err);
}

attend_status attend_trainer_step_finish(attend_trainer *tr, const attend_real *all, attend_step_report *rep,
                                         attend_error *err) {
    CHECK(tr && all, err, ATTEND_ERR_NULL, "attend_trainer_step_finish: %s is NULL", !tr ? "trainer" : "all");
    TRY(attend_trainer_reduce(tr, all, tr->node_len, tr->sum, err));
    return attend_trainer_step_apply(tr, tr->sum, rep, err);
}

attend_status attend_trainer_step_apply(attend_trainer *tr, const attend_real *sum, attend_step_report *rep,
                                        attend_error *err) {
    CHECK(tr && sum, err, ATTEND_ERR_NULL, "attend_trainer_step_apply: %s is NULL", !tr ? "trainer" : "sum");
    CHECK(tr->lens, err, ATTEND_ERR_ARG, "attend_trainer_step_apply: call attend_trainer_set_parallel first");
    attend_model *m = tr->m;
    size_t P = m->nparams;
    attend_step_report r;
    memset(&r, 0, sizeof r);
    double tokens = sum[P + 1];
    r.tf.tokens = (int)tokens;
    r.tf.loss = tokens > 0 ? (double)sum[P] / tokens : NAN;
    r.tf.correct_tokens = (int)sum[P + 2];
    r.tf.seqs = (int)sum[P + 3];
    r.tf.correct_seqs = (int)sum[P + 4];
    r.tf.attn_entropy = tokens > 0 ? (double)sum[P + 5] / tokens : 0;
    memcpy(m->grads, sum, P * sizeof *sum);
    attend_error oerr;
    attend_status st = ATTEND_ERR_NONFINITE;
    if (isfinite(r.tf.loss)) {
        st = attend_optim_step(tr->opt, m->params, m->grads, &r.opt, &oerr);
        at_model_params_changed(m);
    } else {
        skipped_update(tr, &r);
    }
    return finish_step(tr, st, &oerr, &r, tr->nb, rep, err);
}

static attend_status parallel_step(attend_trainer *tr, attend_step_report *rep, attend_error *err) {
    const attend_real *part;
    TRY(attend_trainer_step_part(tr, &part, err));
    if (tr->nranks == 1) TRY(attend_trainer_reduce(tr, part, tr->node_len, tr->sum, err));
    else TRY(tr->exchange(tr->exchange_user, tr, part, tr->sum, err));
    return attend_trainer_step_apply(tr, tr->sum, rep, err);
}

/* ------------------------------------------------------------- evaluation */

attend_status attend_model_evaluate(attend_model *m, const attend_dataset *d, int batch_size, int max_pairs,
                                    attend_eval_stats *stats, attend_error *err) {
    const char *who = "attend_model_evaluate";
    CHECK(m && d && stats, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !m ? "model" : !d ? "data" : "stats");
    CHECK(batch_size >= 1 && batch_size <= m->cfg.max_batch, err, ATTEND_ERR_CAPACITY,
          "%s: batch_size=%d outside [1, max_batch=%d]", who, batch_size, m->cfg.max_batch);
    int total = attend_dataset_size(d);
    if (max_pairs > 0 && max_pairs < total) total = max_pairs;
    CHECK(total >= 1, err, ATTEND_ERR_ARG, "%s: no pairs to evaluate", who);
    int S = m->cfg.max_src_len, L = m->cfg.max_tgt_len + 1;
    attend_batch b;
    TRY(attend_batch_alloc(&b, batch_size, S, L, err));
    int32_t *out = malloc((size_t)batch_size * L * sizeof *out), *out_len = malloc((size_t)batch_size * sizeof *out_len);
    int *idx = malloc((size_t)batch_size * sizeof *idx);
    attend_status st = out && out_len && idx ? ATTEND_OK : at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    /* the plain cross-entropy: a run without any training option */
    at_run plain;
    memset(&plain, 0, sizeof plain);
    double loss = 0, ent = 0;
    long tokens = 0, tf_tok = 0, g_tok = 0, g_total = 0;
    int tf_seq = 0, g_seq = 0;
    for (int start = 0; !st && start < total; start += batch_size) {
        int nb = total - start < batch_size ? total - start : batch_size;
        for (int i = 0; i < nb; i++) idx[i] = start + i;
        st = attend_batch_fill(&b, d, idx, nb, !m->dec->eos, err);
        attend_tf_stats tf;
        if (!st) st = at_model_forward(m, &b, &plain, &tf, err);
        if (st) break;
        loss += tf.loss * tf.tokens;
        tokens += tf.tokens;
        tf_tok += tf.correct_tokens;
        tf_seq += tf.correct_seqs;
        ent += tf.attn_entropy * tf.tokens;
        int max_len = m->dec->decode_len(&b);
        st = attend_model_greedy(m, b.src, b.src_len, nb, b.S, max_len, out, out_len, NULL, err);
        for (int n = 0; !st && n < nb; n++) {
            const int32_t *src, *tgt;
            int sl, tl;
            /* attend_batch_fill read the same pairs, so this cannot fail; src/io has
             * no unchecked accessor, so the status is propagated, not dropped. */
            if ((st = attend_dataset_get(d, idx[n], &src, &sl, &tgt, &tl, err))) break;
            int steps = tl + m->dec->eos, right = 0;
            for (int t = 0; t < steps; t++) {
                int32_t want = t < tl ? tgt[t] : ATTEND_EOS;
                int32_t got = t < out_len[n] ? out[(size_t)n * max_len + t] : (t == out_len[n] ? ATTEND_EOS : -2);
                right += got == want;
            }
            g_tok += right;
            g_total += steps;
            g_seq += right == steps && out_len[n] == tl;
        }
    }
    if (!st) {
        stats->pairs = total;
        stats->loss = loss / (double)tokens;
        stats->tf_token_acc = (double)tf_tok / (double)tokens;
        stats->tf_seq_acc = (double)tf_seq / total;
        stats->greedy_token_acc = (double)g_tok / (double)g_total;
        stats->greedy_seq_acc = (double)g_seq / total;
        stats->attn_entropy = tokens ? ent / (double)tokens : 0;
    }
    attend_batch_release(&b);
    free(out);
    free(out_len);
    free(idx);
    return st ? st : at_ok(err);
}
