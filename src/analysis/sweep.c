/*
 * sweep.c — the length sweep of seed 001: one model per (source length,
 * decoder), trained under one budget, evaluated teacher-forced and greedy;
 * results as rows, CSV and an accuracy-vs-length plot.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "io/text.h"

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The "+name" suffixes of a model name: one line per value of an int field
 * of attend_sweep_model (the suffix sets it; the name shows it when the field
 * holds it), in the order the names list them. */
static const struct {
    const char *name;
    size_t off;
    int value;
} sweep_suffixes[] = {
    {"monotonic", offsetof(attend_sweep_model, monotonic), 1},
    {"coverage", offsetof(attend_sweep_model, coverage), 1},
    {"sparsemax", offsetof(attend_sweep_model, normalizer), ATTEND_NORMALIZER_SPARSEMAX},
    {"entmax15", offsetof(attend_sweep_model, normalizer), ATTEND_NORMALIZER_ENTMAX15},
    {"copy", offsetof(attend_sweep_model, copy), 1},
};
#define N_SUFFIXES (sizeof sweep_suffixes / sizeof sweep_suffixes[0])

static int *suffix_field(attend_sweep_model *m, size_t i) { return (int *)(void *)((char *)m + sweep_suffixes[i].off); }

const char *attend_sweep_model_name(attend_sweep_model model, char *buf, size_t cap) {
    if (!buf || cap == 0) return "";
    if (model.decoder == ATTEND_DECODER_NONE || model.decoder == ATTEND_DECODER_TRANSFORMER)
        snprintf(buf, cap, "%s", attend_decoder_name(model.decoder)); /* no score */
    else snprintf(buf, cap, "%s-%s", attend_decoder_name(model.decoder), attend_score_name(model.score));
    for (size_t i = 0; i < N_SUFFIXES; i++) {
        size_t used = strlen(buf);
        if (*suffix_field(&model, i) == sweep_suffixes[i].value && used < cap)
            snprintf(buf + used, cap - used, "+%s", sweep_suffixes[i].name);
    }
    return buf;
}

attend_status attend_sweep_model_suffix(attend_sweep_model *m, const char *name, attend_error *err) {
    CHECK(m && name, err, ATTEND_ERR_NULL, "attend_sweep_model_suffix: %s is NULL", !m ? "model" : "name");
    char known[256] = "";
    for (size_t i = 0; i < N_SUFFIXES; i++) {
        if (!strcmp(name, sweep_suffixes[i].name)) {
            *suffix_field(m, i) = sweep_suffixes[i].value;
            return at_ok(err);
        }
        size_t used = strlen(known);
        snprintf(known + used, sizeof known - used, "%s+%s", i ? ", " : "", sweep_suffixes[i].name);
    }
    return at_fail(err, ATTEND_ERR_ARG, "attend_sweep_model_suffix: unknown suffix '+%s' (known: %s)", name, known);
}

/* Two rows of the same model: the same name. */
static int same_model(attend_sweep_model a, attend_sweep_model b) {
    char na[96], nb[96];
    return !strcmp(attend_sweep_model_name(a, na, sizeof na), attend_sweep_model_name(b, nb, sizeof nb));
}

static attend_status check_config(const attend_sweep_config *c, attend_error *err) {
    const char *who = "attend_sweep_run";
    int tsv = c->train || c->dev;
    CHECK(!tsv || (c->train && c->dev), err, ATTEND_ERR_ARG, "%s: TSV mode needs both train and dev data", who);
    if (!tsv) {
        CHECK(c->task == ATTEND_TASK_COPY || c->task == ATTEND_TASK_REVERSE, err, ATTEND_ERR_ARG,
              "%s: the sweep's built-in tasks are copy and reverse (task %d)", who, (int)c->task);
        CHECK(c->train_pairs >= 1 && c->dev_pairs >= 1, err, ATTEND_ERR_ARG,
              "%s: train_pairs=%d and dev_pairs=%d must be >= 1", who, c->train_pairs, c->dev_pairs);
    }
    CHECK(c->lengths && c->n_lengths >= 1, err, ATTEND_ERR_ARG, "%s: no lengths", who);
    for (int i = 0; i < c->n_lengths; i++)
        CHECK(c->lengths[i] >= 1 && (i == 0 || c->lengths[i] > c->lengths[i - 1]), err, ATTEND_ERR_ARG,
              "%s: lengths[%d]=%d: lengths must be >= 1 and increasing", who, i, c->lengths[i]);
    CHECK(c->models && c->n_models >= 1, err, ATTEND_ERR_ARG, "%s: no models", who);
    for (int i = 0; i < c->n_models; i++) {
        CHECK(c->models[i].decoder == ATTEND_DECODER_BAHDANAU || c->models[i].decoder == ATTEND_DECODER_LUONG ||
                  c->models[i].decoder == ATTEND_DECODER_NONE || c->models[i].decoder == ATTEND_DECODER_TRANSFORMER,
              err, ATTEND_ERR_ARG, "%s: models[%d]: decoder '%s' is not one of bahdanau, luong, none, transformer",
              who, i, attend_decoder_name(c->models[i].decoder));
        CHECK(c->models[i].decoder != ATTEND_DECODER_TRANSFORMER || c->encoder == ATTEND_ENCODER_TRANSFORMER, err,
              ATTEND_ERR_ARG, "%s: models[%d]: decoder transformer shares the encoder's heads, positions and norm: it "
              "needs encoder transformer, not encoder %s", who, i, attend_encoder_name(c->encoder));
    }
    for (int i = 0; i < c->n_models; i++) { /* the mechanisms' combination rules, named as the suffixes */
        attend_sweep_model mod = c->models[i];
        CHECK((unsigned)mod.normalizer <= ATTEND_NORMALIZER_ENTMAX15, err, ATTEND_ERR_ARG,
              "%s: models[%d]: normalizer %d is not softmax, sparsemax or entmax15", who, i, mod.normalizer);
        attend_model_config mc;
        memset(&mc, 0, sizeof mc);
        mc.decoder = mod.decoder;
        mc.score = mod.decoder == ATTEND_DECODER_NONE || mod.decoder == ATTEND_DECODER_TRANSFORMER ? ATTEND_SCORE_ADDITIVE : mod.score;
        mc.coverage = mod.coverage;
        mc.copy = mod.copy;
        mc.monotonic = mod.monotonic;
        mc.normalizer = (attend_normalizer)mod.normalizer;
        int broken = attend_feature_rule_broken(&mc, NULL);
        if (broken >= 0) {
            const attend_feature_rule *r = attend_feature_rule_get(broken);
            char f[48], o[48], msg[400];
            snprintf(f, sizeof f, "+%s", !strcmp(r->feature, "normalizer") ? attend_normalizer_name(mc.normalizer)
                                                                           : r->feature);
            if (r->kind == ATTEND_RULE_ADDITIVE) snprintf(o, sizeof o, "score %s", attend_score_name(mc.score));
            else if (r->kind == ATTEND_RULE_EXCLUDES) snprintf(o, sizeof o, "+%s", r->other);
            else snprintf(o, sizeof o, "decoder %s", attend_decoder_name(mc.decoder));
            attend_feature_rule_format(r, f, o, msg, sizeof msg);
            return at_fail(err, ATTEND_ERR_ARG, "%s: models[%d]: %s", who, i, msg);
        }
    }
    CHECK(c->steps >= 1 && c->batch >= 1, err, ATTEND_ERR_ARG, "%s: steps=%d and batch=%d must be >= 1", who,
          c->steps, c->batch);
    return at_ok(err);
}

static attend_model_config model_config(const attend_sweep_config *c, attend_sweep_model mod, int vs, int vt,
                                        int max_src, int max_tgt) {
    attend_model_config mc;
    memset(&mc, 0, sizeof mc);
    mc.cell = c->cell;
    mc.decoder = mod.decoder;
    mc.score = mod.decoder == ATTEND_DECODER_NONE || mod.decoder == ATTEND_DECODER_TRANSFORMER ? ATTEND_SCORE_ADDITIVE : mod.score;
    mc.src_vocab = vs;
    mc.tgt_vocab = vt;
    mc.emb = c->emb;
    mc.enc_hidden = c->enc_hidden;
    mc.enc_layers = 1;
    mc.dec_hidden = c->dec_hidden;
    mc.attn = c->attn;
    mc.max_batch = c->batch;
    mc.max_src_len = max_src;
    mc.max_tgt_len = max_tgt;
    mc.monotonic = mod.monotonic;
    mc.coverage = mod.coverage;
    mc.copy = mod.copy;
    mc.normalizer = (attend_normalizer)mod.normalizer;
    mc.encoder = c->encoder;
    if (c->encoder != ATTEND_ENCODER_RNN) {
        mc.heads = c->heads;
        mc.positions = c->positions;
        mc.post_norm = c->post_norm;
        mc.kernel = c->kernel;
        mc.conv_relu = c->conv_relu;
        if (mc.positions == ATTEND_POSITIONS_LEARNED) { /* the table: the longest source, a transformer's steps */
            mc.max_positions = max_src;
            if (mod.decoder == ATTEND_DECODER_TRANSFORMER && max_tgt + 1 > mc.max_positions)
                mc.max_positions = max_tgt + 1;
        }
    }
    return mc;
}

/* Trains one model on train; returns it in *out with the timing in row. */
static attend_status train_one(const attend_sweep_config *c, const attend_model_config *mc, const attend_dataset *train,
                               attend_model **out, attend_sweep_row *row, attend_error *err) {
    attend_model *m = NULL;
    attend_trainer *tr = NULL;
    TRY(attend_model_create(&m, mc, c->seed, err));
    attend_status st = ATTEND_OK;
    if (mc->copy && c->src_vocab_map && c->tgt_vocab_map) /* TSV mode: two vocabularies */
        st = attend_model_set_copy_map(m, c->src_vocab_map, c->tgt_vocab_map, err);
    if (!st) st = attend_trainer_create(&tr, m, &c->optim, train, c->batch, c->seed, err);
    double t0 = now_seconds();
    for (int s = 0; !st && s < c->steps; s++) st = attend_trainer_step(tr, NULL, err);
    row->train_seconds = now_seconds() - t0;
    row->samples_per_s = row->train_seconds > 0 ? (double)c->steps * c->batch / row->train_seconds : 0;
    attend_trainer_free(tr);
    if (st) {
        attend_model_free(m);
        return st;
    }
    *out = m;
    return ATTEND_OK;
}

static double mean_log_len(const attend_dataset *d) {
    int n = attend_dataset_size(d);
    double sum = 0;
    for (int i = 0; i < n; i++) {
        const int32_t *s, *t;
        int sl, tl;
        attend_dataset_get(d, i, &s, &sl, &t, &tl, NULL);
        sum += log((double)sl);
    }
    return n ? sum / n : NAN;
}

static void empty_row(attend_sweep_row *row) {
    memset(&row->eval, 0, sizeof row->eval);
    row->eval.loss = row->eval.tf_token_acc = row->eval.tf_seq_acc = NAN;
    row->eval.greedy_token_acc = row->eval.greedy_seq_acc = row->eval.attn_entropy = NAN;
    row->uniform_entropy = NAN;
}

static attend_status evaluate_into(attend_model *m, const attend_dataset *dev, int batch, attend_sweep_row *row,
                                   attend_error *err) {
    if (attend_dataset_size(dev) == 0) {
        empty_row(row);
        return at_ok(err);
    }
    TRY(attend_model_evaluate(m, dev, batch, 0, &row->eval, err));
    row->uniform_entropy = mean_log_len(dev);
    return ATTEND_OK;
}

/* Task mode: data and a model per (length, decoder). */
static attend_status run_tasks(const attend_sweep_config *c, attend_sweep_row *rows, attend_sweep_callback cb,
                               void *user, attend_error *err) {
    int total = c->n_lengths * c->n_models;
    for (int li = 0; li < c->n_lengths; li++) {
        int L = c->lengths[li];
        attend_task_config tc = {c->task, c->symbols, L, L, c->train_pairs, c->seed * 1000003u + (uint64_t)L};
        attend_task_config dc = tc;
        dc.count = c->dev_pairs;
        dc.seed = tc.seed ^ 0x5eed5eed5eedULL;
        attend_dataset *train = NULL, *dev = NULL;
        attend_vocab *v1 = NULL, *v2 = NULL;
        attend_status st = attend_dataset_task(&train, &v1, &tc, err);
        if (!st) st = attend_dataset_task(&dev, &v2, &dc, err);
        int V = v1 ? attend_vocab_size(v1) : 0;
        for (int mi = 0; !st && mi < c->n_models; mi++) {
            attend_sweep_row *row = rows + (size_t)li * c->n_models + mi;
            memset(row, 0, sizeof *row);
            row->length = row->min_length = L;
            row->model = c->models[mi];
            attend_model_config mc = model_config(c, c->models[mi], V, V, L, L);
            attend_model *m = NULL;
            double t0 = now_seconds();
            st = train_one(c, &mc, train, &m, row, err);
            if (!st) st = evaluate_into(m, dev, c->batch, row, err);
            row->wall_seconds = now_seconds() - t0;
            attend_model_free(m);
            if (!st && cb) cb(user, row, li * c->n_models + mi, total);
        }
        attend_dataset_free(train);
        attend_dataset_free(dev);
        attend_vocab_free(v1);
        attend_vocab_free(v2);
        if (st) return st;
    }
    return ATTEND_OK;
}

/* TSV mode: a model per decoder on all of train; dev split into length buckets. */
static attend_status run_tsv(const attend_sweep_config *c, attend_sweep_row *rows, attend_sweep_callback cb,
                             void *user, attend_error *err) {
    const char *who = "attend_sweep_run";
    CHECK(c->src_vocab >= 5 && c->tgt_vocab >= 5, err, ATTEND_ERR_ARG,
          "%s: TSV mode needs src_vocab and tgt_vocab (>= 5), got %d and %d", who, c->src_vocab, c->tgt_vocab);
    int max_src = attend_dataset_max_src_len(c->train), max_tgt = attend_dataset_max_tgt_len(c->train);
    int dsrc = attend_dataset_max_src_len(c->dev), dtgt = attend_dataset_max_tgt_len(c->dev);
    if (dsrc > max_src) max_src = dsrc;
    if (dtgt > max_tgt) max_tgt = dtgt;
    CHECK(attend_dataset_size(c->train) >= 1, err, ATTEND_ERR_ARG, "%s: the training data is empty", who);
    /* one dev subset per bucket */
    attend_dataset **bucket = calloc((size_t)c->n_lengths, sizeof *bucket);
    CHECK(bucket, err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    attend_status st = ATTEND_OK;
    for (int li = 0; !st && li < c->n_lengths; li++) st = attend_dataset_create(&bucket[li], err);
    for (int i = 0; !st && i < attend_dataset_size(c->dev); i++) {
        const int32_t *s, *t;
        int sl, tl;
        st = attend_dataset_get(c->dev, i, &s, &sl, &t, &tl, err);
        int lo = 1;
        for (int li = 0; !st && li < c->n_lengths; lo = c->lengths[li] + 1, li++)
            if (sl >= lo && sl <= c->lengths[li]) {
                st = attend_dataset_add(bucket[li], s, sl, t, tl, err);
                break;
            }
    }
    int total = c->n_lengths * c->n_models;
    for (int mi = 0; !st && mi < c->n_models; mi++) {
        attend_model_config mc = model_config(c, c->models[mi], c->src_vocab, c->tgt_vocab, max_src, max_tgt);
        attend_model *m = NULL;
        attend_sweep_row timing;
        memset(&timing, 0, sizeof timing);
        double t0 = now_seconds();
        st = train_one(c, &mc, c->train, &m, &timing, err);
        for (int li = 0, lo = 1; !st && li < c->n_lengths; lo = c->lengths[li] + 1, li++) {
            attend_sweep_row *row = rows + (size_t)li * c->n_models + mi;
            *row = timing;
            row->length = c->lengths[li];
            row->min_length = lo;
            row->model = c->models[mi];
            double e0 = now_seconds();
            st = evaluate_into(m, bucket[li], c->batch, row, err);
            row->wall_seconds = (li == 0 ? e0 - t0 : 0) + now_seconds() - e0; /* training counted once */
        }
        attend_model_free(m);
        for (int li = 0; !st && cb && li < c->n_lengths; li++)
            cb(user, rows + (size_t)li * c->n_models + mi, mi * c->n_lengths + li, total);
    }
    for (int li = 0; li < c->n_lengths; li++) attend_dataset_free(bucket[li]);
    free(bucket);
    return st;
}

attend_status attend_sweep_run(const attend_sweep_config *cfg, attend_sweep_row *rows, attend_sweep_callback cb,
                               void *user, attend_error *err) {
    CHECK(cfg && rows, err, ATTEND_ERR_NULL, "attend_sweep_run: %s is NULL", !cfg ? "config" : "rows");
    TRY(check_config(cfg, err));
    return cfg->train ? run_tsv(cfg, rows, cb, user, err) : run_tasks(cfg, rows, cb, user, err);
}

/* ------------------------------------------------------------------ output */

#define SWEEP_CSV_HEADER                                                                                        \
    "model,decoder,score,length,min_length,pairs,greedy_seq_acc,greedy_token_acc,tf_seq_acc,tf_token_acc,loss," \
    "attn_entropy,uniform_entropy,samples_per_s,train_seconds,wall_seconds"


/* a rate, or an empty field when undefined */
static void sb_num(at_sbuf *b, double x, const char *fmt) {
    if (isfinite(x)) at_sb_printf(b, fmt, x);
    at_sb_printf(b, ",");
}

attend_status attend_sweep_csv(const attend_sweep_row *rows, int n_rows, char **out, attend_error *err) {
    CHECK(rows && out, err, ATTEND_ERR_NULL, "attend_sweep_csv: %s is NULL", !rows ? "rows" : "out");
    *out = NULL;
    at_sbuf b = {0};
    at_sb_printf(&b, "%s\n", SWEEP_CSV_HEADER);
    for (int i = 0; i < n_rows; i++) {
        const attend_sweep_row *r = rows + i;
        char name[64];
        int none = r->model.decoder == ATTEND_DECODER_NONE || r->model.decoder == ATTEND_DECODER_TRANSFORMER;
        at_sb_printf(&b, "%s,%s,%s,%d,%d,%d,", attend_sweep_model_name(r->model, name, sizeof name),
                  attend_decoder_name(r->model.decoder), none ? "" : attend_score_name(r->model.score), r->length,
                  r->min_length, r->eval.pairs);
        sb_num(&b, r->eval.greedy_seq_acc, "%.4f");
        sb_num(&b, r->eval.greedy_token_acc, "%.4f");
        sb_num(&b, r->eval.tf_seq_acc, "%.4f");
        sb_num(&b, r->eval.tf_token_acc, "%.4f");
        sb_num(&b, r->eval.loss, "%.5f");
        sb_num(&b, r->eval.attn_entropy, "%.4f");
        sb_num(&b, r->uniform_entropy, "%.4f");
        at_sb_printf(&b, "%.1f,%.2f,%.2f\n", r->samples_per_s, r->train_seconds, r->wall_seconds);
    }
    if (b.bad) {
        free(b.p);
        return at_fail(err, ATTEND_ERR_ALLOC, "attend_sweep_csv: out of memory");
    }
    *out = b.p;
    return at_ok(err);
}

attend_status attend_sweep_plot_svg(const attend_sweep_row *rows, int n_rows, const char *title, char **out,
                                    attend_error *err) {
    const char *who = "attend_sweep_plot_svg";
    CHECK(rows && out, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !rows ? "rows" : "out");
    *out = NULL;
    CHECK(n_rows >= 1, err, ATTEND_ERR_ARG, "%s: no rows", who);
    /* models in order of first appearance; points in row order */
    attend_sweep_model *models = malloc((size_t)n_rows * sizeof *models);
    attend_plot_series *series = malloc((size_t)n_rows * sizeof *series);
    double *xy = malloc(2 * (size_t)n_rows * n_rows * sizeof *xy);
    char *names = malloc((size_t)n_rows * 64);
    attend_status st = models && series && xy && names ? ATTEND_OK : at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    int nm = 0;
    double xmin = INFINITY, xmax = -INFINITY;
    for (int i = 0; !st && i < n_rows; i++) {
        int k = 0;
        while (k < nm && !same_model(models[k], rows[i].model)) k++;
        if (k == nm) {
            models[nm] = rows[i].model;
            series[nm].label = attend_sweep_model_name(rows[i].model, names + (size_t)nm * 64, 64);
            series[nm].n = 0;
            series[nm].x = xy + (size_t)2 * nm * n_rows;
            series[nm].y = xy + (size_t)(2 * nm + 1) * n_rows;
            nm++;
        }
        double *x = (double *)series[k].x, *y = (double *)series[k].y;
        x[series[k].n] = rows[i].length;
        y[series[k].n] = rows[i].eval.pairs > 0 ? rows[i].eval.greedy_seq_acc : NAN;
        series[k].n++;
        if (rows[i].length < xmin) xmin = rows[i].length;
        if (rows[i].length > xmax) xmax = rows[i].length;
    }
    if (!st)
        st = attend_render_line_plot_svg(out, series, nm, title ? title : "Full-sequence accuracy (greedy) by source length",
                                         "source length (tokens)", "full-sequence accuracy", 0, 1,
                                         xmax >= 8 * xmin, err);
    free(models);
    free(series);
    free(xy);
    free(names);
    return st;
}

/* ------------------------------------------------------------ CSV input */

/* field [a,b) as a double; empty → NaN; 0 on a malformed number */
static int field_double(const char *a, const char *b, double *out) {
    if (a == b) {
        *out = NAN;
        return 1;
    }
    char buf[64];
    if ((size_t)(b - a) >= sizeof buf) return 0;
    memcpy(buf, a, (size_t)(b - a));
    buf[b - a] = 0;
    char *end;
    *out = strtod(buf, &end);
    return *end == 0 && (isfinite(*out) || isnan(*out));
}

static int field_int(const char *a, const char *b, int lo, int *out) {
    double x;
    if (!field_double(a, b, &x) || !isfinite(x) || x != floor(x) || x < lo || x > 1e9) return 0;
    *out = (int)x;
    return 1;
}

attend_status attend_sweep_csv_parse(const char *text, size_t len, const char *label, attend_sweep_row *rows, int cap,
                                     int *n_rows, attend_error *err) {
    const char *who = "attend_sweep_csv_parse";
    CHECK(text && rows && n_rows, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !text ? "text" : !rows ? "rows" : "n_rows");
    if (!label) label = "csv";
    *n_rows = 0;
    static const char *const names[16] = {"model",          "decoder",      "score",         "length",
                                          "min_length",     "pairs",        "greedy_seq_acc", "greedy_token_acc",
                                          "tf_seq_acc",     "tf_token_acc", "loss",          "attn_entropy",
                                          "uniform_entropy", "samples_per_s", "train_seconds", "wall_seconds"};
    const char *p = text, *end = text + len;
    int line = 0;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *stop = eol ? eol : end;
        line++;
        const char *le = stop > p && stop[-1] == '\r' ? stop - 1 : stop;
        if (line == 1) {
            size_t hl = strlen(SWEEP_CSV_HEADER);
            CHECK((size_t)(le - p) == hl && !memcmp(p, SWEEP_CSV_HEADER, hl), err, ATTEND_ERR_FORMAT,
                  "%s: %s:1: not the header of attend_sweep_csv (\"%.40s...\")", who, label, SWEEP_CSV_HEADER);
        } else if (le > p) {
            CHECK(*n_rows < cap, err, ATTEND_ERR_CAPACITY, "%s: %s:%d: more than %d rows", who, label, line, cap);
            const char *f[17];
            int nf = 0;
            f[nf++] = p;
            for (const char *c = p; c < le; c++)
                if (*c == ',') {
                    CHECK(nf < 16, err, ATTEND_ERR_FORMAT, "%s: %s:%d: more than 16 fields", who, label, line);
                    f[nf++] = c + 1;
                }
            CHECK(nf == 16, err, ATTEND_ERR_FORMAT, "%s: %s:%d: %d fields, expected 16", who, label, line, nf);
            f[16] = le + 1; /* field i is [f[i], f[i+1]-1) */
            attend_sweep_row *r = rows + *n_rows;
            memset(r, 0, sizeof *r);
            char name[32];
            int ok = 1, bad = -1;
#define FIELD(i) f[i], f[(i) + 1] - 1
            size_t dl = (size_t)(f[2] - 1 - f[1]), sl = (size_t)(f[3] - 1 - f[2]);
            if (dl >= sizeof name) bad = 1;
            else {
                memcpy(name, f[1], dl);
                name[dl] = 0;
                int d = attend_decoder_from_name(name);
                if (d < 0 || d == ATTEND_DECODER_POINTER) bad = 1;
                else r->model.decoder = (attend_decoder_kind)d;
            }
            if (bad < 0 && (r->model.decoder == ATTEND_DECODER_NONE || r->model.decoder == ATTEND_DECODER_TRANSFORMER)) {
                if (sl) bad = 2;
                r->model.score = ATTEND_SCORE_ADDITIVE;
            } else if (bad < 0) {
                if (sl >= sizeof name) bad = 2;
                else {
                    memcpy(name, f[2], sl);
                    name[sl] = 0;
                    int sc = attend_score_from_name(name);
                    if (sc < 0) bad = 2;
                    else r->model.score = (attend_score_kind)sc;
                }
            }
            /* the model's "+name" suffixes (field 1 names only the decoder) */
            const char *plus = memchr(f[0], '+', (size_t)(f[1] - 1 - f[0]));
            while (bad < 0 && plus) {
                const char *next = memchr(plus + 1, '+', (size_t)(f[1] - 1 - (plus + 1)));
                size_t nl = (size_t)((next ? next : f[1] - 1) - (plus + 1));
                if (nl >= sizeof name) bad = 0;
                else {
                    memcpy(name, plus + 1, nl);
                    name[nl] = 0;
                    if (attend_sweep_model_suffix(&r->model, name, NULL)) bad = 0;
                }
                plus = next;
            }
            double *dst[10] = {&r->eval.greedy_seq_acc, &r->eval.greedy_token_acc, &r->eval.tf_seq_acc,
                               &r->eval.tf_token_acc,   &r->eval.loss,             &r->eval.attn_entropy,
                               &r->uniform_entropy,     &r->samples_per_s,         &r->train_seconds,
                               &r->wall_seconds};
            if (bad < 0 && !field_int(FIELD(3), 1, &r->length)) bad = 3;
            if (bad < 0 && !field_int(FIELD(4), 1, &r->min_length)) bad = 4;
            if (bad < 0 && !field_int(FIELD(5), 0, &r->eval.pairs)) bad = 5;
            for (int i = 0; bad < 0 && i < 10; i++)
                if (!field_double(FIELD(6 + i), dst[i])) bad = 6 + i;
#undef FIELD
            ok = bad < 0;
            CHECK(ok, err, ATTEND_ERR_FORMAT, "%s: %s:%d: field %d (%s) is malformed", who, label, line, bad + 1,
                  names[bad]);
            (*n_rows)++;
        }
        p = eol ? eol + 1 : end;
    }
    CHECK(line >= 1, err, ATTEND_ERR_FORMAT, "%s: %s: empty (no header)", who, label);
    return at_ok(err);
}
