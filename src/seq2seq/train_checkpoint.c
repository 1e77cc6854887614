/*
 * train_checkpoint.c — trainer checkpoints for bit-exact resume: the model,
 * the optimizer moments and state, and the training run's fingerprint
 * (configuration, data, vocabularies), compared on resume with a message per
 * difference.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/json.h"
#include "io/model_io.h"
#include "seq2seq/train_internal.h"
#include "seq2seq/linear.h"

/* ------------------------------------------------------------ checkpoints */

/* The training options a checkpoint records (attend_train_options): each
 * extension's, by name, in the extensions' order (attend_train_option_get). */
/* "optim.state" I64 [8]: optimizer steps, skipped, epoch, pos, rng s[0..3] */
#define STATE_LEN 8

static void run_json(const attend_trainer *tr, char *train_json, size_t n);

attend_status attend_trainer_save(const attend_trainer *tr, const char *path, const attend_vocab *src_vocab,
                                  const attend_vocab *tgt_vocab, attend_tokenizer tok, attend_error *err) {
    CHECK(tr && path, err, ATTEND_ERR_NULL, "attend_trainer_save: %s is NULL", !tr ? "trainer" : "path");
    size_t nstate = 0;
    attend_real *moments = attend_optim_state(tr->opt, &nstate);
    /* the weights are checked by the writer; moments too, so that every
     * checkpoint written can be resumed */
    for (size_t i = 0; i < nstate; i++)
        CHECK(isfinite(moments[i]), err, ATTEND_ERR_NONFINITE,
              "attend_trainer_save: '%s': optimizer moment %zu is %g; not writing a non-finite checkpoint", path, i,
              (double)moments[i]);
    int64_t state[STATE_LEN] = {attend_optim_steps(tr->opt), tr->skipped, tr->epoch, tr->pos, 0, 0, 0, 0};
    for (int i = 0; i < 4; i++) memcpy(&state[4 + i], &tr->rng.s[i], sizeof(int64_t));
    attend_st_entry extra[3];
    memset(extra, 0, sizeof extra);
    extra[0].name = "optim.moments";
    extra[0].dtype = ATTEND_DTYPE_F32;
    extra[0].ndim = 1;
    extra[0].shape[0] = (int64_t)nstate;
    extra[0].data = moments;
    extra[1].name = "optim.state";
    extra[1].dtype = ATTEND_DTYPE_I64;
    extra[1].ndim = 1;
    extra[1].shape[0] = STATE_LEN;
    extra[1].data = state;
    extra[2].name = "optim.order";
    extra[2].dtype = ATTEND_DTYPE_I32;
    extra[2].ndim = 1;
    extra[2].shape[0] = tr->n;
    extra[2].data = tr->perm;
    char train_json[1024];
    run_json(tr, train_json, sizeof train_json);
    /* the caller's own state (attend_trainer_set_caller_state) only when set */
    attend_st_meta meta[2] = {{"attend.train", train_json}, {"attend.caller", tr->caller_state}};
    return at_model_write(tr->m, path, src_vocab, tgt_vocab, tok, "checkpoint", extra, 3, meta,
                          tr->caller_state ? 2 : 1, err);
}

/* The checkpoint's "attend.train": optimizer, batch, data size and fingerprint,
 * and the training options that are set, into buf [n]. */
static void run_json(const attend_trainer *tr, char *train_json, size_t n) {
    const attend_optim_config *o = &tr->opt_cfg;
    snprintf(train_json, n,
             "{\"optimizer\":\"%s\",\"batch_size\":%d,\"data_size\":%d,\"seed\":%llu,\"lr\":%.17g,"
             "\"clip_norm\":%.17g,\"warmup_steps\":%d,\"decay_steps\":%d,\"min_lr\":%.17g,"
             "\"weight_decay\":%.17g,\"momentum\":%.17g,\"beta1\":%.17g,\"beta2\":%.17g,\"eps\":%.17g,"
             "\"data_fnv1a64\":\"%016llx\",\"grad_shards\":%d}",
             o->kind == ATTEND_OPT_ADAM ? "adam" : "sgd", tr->batch_size, tr->n, (unsigned long long)tr->seed, o->lr,
             o->clip_norm, o->warmup_steps, o->decay_steps, o->min_lr, o->weight_decay, o->momentum, o->beta1,
             o->beta2, o->eps, (unsigned long long)tr->data_hash, tr->shards);
    /* the training options only when set, so checkpoints of runs without them keep their bytes */
    size_t u = strlen(train_json);
    for (int k = 0; k < attend_train_option_count(); k++) {
        double v;
        const char *name = attend_train_option_get(&tr->topt, k, &v);
        if (v != 0 && u + 64 < n) {
            u--; /* over the closing brace */
            u += (size_t)snprintf(train_json + u, n - u, ",\"%s\":%.17g}", name, v);
        }
    }
}

void attend_trainer_fingerprint(const attend_trainer *tr, char out[17]) {
    char json[1024];
    uint64_t h = 1469598103934665603ULL; /* FNV-1a 64 */
    if (tr) {
        run_json(tr, json, sizeof json);
        for (const unsigned char *p = (const unsigned char *)json; *p; p++) h = (h ^ *p) * 1099511628211ULL;
    }
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* ------------------------------------------------------- caller's state */

#define CALLER_STATE_MAX 4096

attend_status attend_trainer_set_caller_state(attend_trainer *tr, const char *text, attend_error *err) {
    const char *who = "attend_trainer_set_caller_state";
    CHECK(tr, err, ATTEND_ERR_NULL, "%s: trainer is NULL", who);
    char *copy = NULL;
    if (text) {
        size_t n = strlen(text);
        CHECK(n <= CALLER_STATE_MAX, err, ATTEND_ERR_ARG, "%s: %zu bytes, more than %d", who, n, CALLER_STATE_MAX);
        CHECK(at_json_utf8_valid(text, n, NULL), err, ATTEND_ERR_ARG, "%s: the text is not valid UTF-8", who);
        copy = malloc(n + 1);
        CHECK(copy, err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
        memcpy(copy, text, n + 1);
    }
    free(tr->caller_state);
    tr->caller_state = copy;
    return at_ok(err);
}

const char *attend_trainer_caller_state(const attend_trainer *tr) { return tr ? tr->caller_state : NULL; }

/* Appends to the differences: the first in full, later ones by name. */
typedef struct {
    char first[200];
    char names[200];
    int count;
    char missing[200]; /* fields an older checkpoint does not record */
} fp_diff;

static void fp_add(fp_diff *d, const char *name, const char *fmt, ...) AT_PRINTF(3, 4);
static void fp_add(fp_diff *d, const char *name, const char *fmt, ...) {
    if (d->count++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->first, sizeof d->first, fmt, ap);
        va_end(ap);
    }
    size_t u = strlen(d->names);
    snprintf(d->names + u, sizeof d->names - u, "%s%s", u ? ", " : "", name);
}

static void fp_missing(fp_diff *d, const char *name) {
    size_t u = strlen(d->missing);
    snprintf(d->missing + u, sizeof d->missing - u, "%s%s", u ? ", " : "", name);
}

/* The first id whose token differs between a stored vocabulary (JSON array)
 * and v, its stored token copied to stored [cap] ("(none)" past the end);
 * -1 when they are equal, -2 when the JSON is unreadable. */
static int vocab_first_diff(const char *json, const attend_vocab *v, char *stored, size_t cap) {
    at_json_doc *doc = NULL;
    if (at_json_parse(&doc, json, strlen(json), NULL, NULL, NULL)) return -2;
    const at_json_node *a = at_json_root(doc);
    int id = -2;
    if (a && a->type == AT_JSON_ARRAY) {
        int n = attend_vocab_size(v), i = 0;
        id = -1;
        for (const at_json_node *c = a->first; c || i < n; c = c ? c->next : NULL, i++) {
            const char *t = i < n ? attend_vocab_token(v, i) : NULL;
            if (!c || c->type != AT_JSON_STRING || !t || strcmp(c->str, t)) {
                snprintf(stored, cap, "%.40s", c && c->type == AT_JSON_STRING ? c->str : "(none)");
                id = i;
                break;
            }
        }
    }
    at_json_free(doc);
    return id;
}

/* Compares what the checkpoint records of its data and options with this
 * run; differences are an error naming the first, or with opt->anyway a note.
 * Fields an older checkpoint does not record are named in the note. */
static attend_status compare_fingerprint(const attend_trainer *tr, const attend_st_file *f, const char *path,
                                         const at_json_node *r, const attend_restore_options *opt,
                                         attend_error *note, attend_error *err) {
    fp_diff d;
    memset(&d, 0, sizeof d);
    const char *sides[2] = {"source", "target"}, *keys[2] = {"attend.src_vocab", "attend.tgt_vocab"};
    const attend_vocab *vs[2] = {opt ? opt->src_vocab : NULL, opt ? opt->tgt_vocab : NULL};
    for (int k = 0; k < 2; k++) {
        const char *json = attend_st_metadata(f, keys[k]);
        if (!vs[k] || !json) continue;
        char stored[48];
        int id = vocab_first_diff(json, vs[k], stored, sizeof stored);
        char name[32];
        snprintf(name, sizeof name, "%s vocabulary", sides[k]);
        if (id == -2) fp_add(&d, name, "its %s vocabulary is unreadable", sides[k]);
        else if (id >= 0) {
            const char *now = id < attend_vocab_size(vs[k]) ? attend_vocab_token(vs[k], id) : "(none)";
            fp_add(&d, name, "%s vocabulary id %d is '%s', in this run '%.40s' (the data's lines changed or moved)",
                   sides[k], id, stored, now);
        }
    }
    if (opt && (opt->src_vocab || opt->tgt_vocab)) {
        const char *tk = attend_st_metadata(f, "attend.tokenizer"), *now = attend_tokenizer_name(opt->tok);
        if (tk && strcmp(tk, now)) fp_add(&d, "tokenizer", "tokenizer is %.20s, in this run %s", tk, now);
    }
    const at_json_node *h = at_json_get(r, "data_fnv1a64");
    char hex[24];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)tr->data_hash);
    CHECK(!h || h->type == AT_JSON_STRING, err, ATTEND_ERR_FORMAT,
          "%s: metadata attend.train: data_fnv1a64 is not a string", path);
    if (!h) fp_missing(&d, "training data");
    else if (strcmp(h->str, hex))
        fp_add(&d, "training data", "training data hash is %.20s, this data's %s (other pairs or another order)",
               h->str, hex);
    const at_json_node *sd = at_json_get(r, "seed");
    CHECK(!sd || sd->type == AT_JSON_NUMBER, err, ATTEND_ERR_FORMAT, "%s: metadata attend.train: seed is not a number",
          path);
    if (!sd) fp_missing(&d, "seed");
    else if (sd->is_int ? (uint64_t)sd->i != tr->seed : (double)tr->seed != sd->d) {
        if (sd->is_int) fp_add(&d, "seed", "seed is %lld, in this run %llu", (long long)sd->i, (unsigned long long)tr->seed);
        else fp_add(&d, "seed", "seed is %g, in this run %llu", sd->d, (unsigned long long)tr->seed);
    }
    const attend_optim_config *o = &tr->opt_cfg;
    struct {
        const char *name;
        double now;
    } nums[] = {{"lr", o->lr},
                {"clip_norm", o->clip_norm},
                {"warmup_steps", o->warmup_steps},
                {"decay_steps", o->decay_steps},
                {"min_lr", o->min_lr},
                {"weight_decay", o->weight_decay},
                {"momentum", o->momentum},
                {"beta1", o->beta1},
                {"beta2", o->beta2},
                {"eps", o->eps}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        const at_json_node *v = at_json_get(r, nums[i].name);
        CHECK(!v || v->type == AT_JSON_NUMBER, err, ATTEND_ERR_FORMAT,
              "%s: metadata attend.train: %s is not a number", path, nums[i].name);
        if (!v) fp_missing(&d, nums[i].name);
        else if (v->d != nums[i].now)
            fp_add(&d, nums[i].name, "%s is %.9g, in this run %.9g", nums[i].name, v->d, nums[i].now);
    }
    /* training options: absent = 0 (off), as every run before they existed */
    for (int k = 0; k < attend_train_option_count(); k++) {
        double now;
        const char *name = attend_train_option_get(&tr->topt, k, &now);
        const at_json_node *x = at_json_get(r, name);
        CHECK(!x || x->type == AT_JSON_NUMBER, err, ATTEND_ERR_FORMAT, "%s: metadata attend.train: %s is not a number",
              path, name);
        double was = x ? x->d : 0;
        if (was != now) fp_add(&d, name, "%s is %.9g, in this run %.9g", name, was, now);
    }
    {
        /* the gradient shards group the batch's sums (attend_trainer_set_parallel):
         * another count is another rounding, not the same run; absent = 1 */
        const at_json_node *v = at_json_get(r, "grad_shards");
        CHECK(!v || v->type == AT_JSON_NUMBER, err, ATTEND_ERR_FORMAT,
              "%s: metadata attend.train: grad_shards is not a number", path);
        double k = v ? v->d : 1;
        if (k != tr->shards)
            fp_add(&d, "grad_shards", "grad_shards is %.9g, in this run %d (the gradients are summed in other groups)",
                   k, tr->shards);
    }
    if (d.count && !(opt && opt->anyway))
        return at_fail(err, ATTEND_ERR_ARG, "%s: checkpoint's %s%s%s%s; resuming needs the same data and options",
                       path, d.first, d.count > 1 ? " (also differ: " : "",
                       d.count > 1 ? strchr(d.names, ',') + 2 : "", d.count > 1 ? ")" : "");
    if (d.count)
        at_fail(note, ATTEND_ERR_ARG, "%s: resumed anyway: checkpoint's %s%s%s%s", path, d.first,
                d.count > 1 ? " (also differ: " : "", d.count > 1 ? strchr(d.names, ',') + 2 : "",
                d.count > 1 ? ")" : "");
    else if (d.missing[0])
        at_fail(note, ATTEND_ERR_FORMAT, "%s: an older checkpoint without a fingerprint of: %s; not compared", path,
                d.missing);
    return ATTEND_OK;
}

static attend_status check_train_meta(const attend_trainer *tr, const attend_st_file *f, const char *path,
                                      const char *json, const attend_restore_options *ropt, attend_error *note,
                                      attend_error *err) {
    at_json_doc *doc = NULL;
    attend_status pst = at_json_parse(&doc, json, strlen(json), NULL, NULL, err);
    if (pst) {
        char inner[ATTEND_ERROR_MSG_MAX];
        snprintf(inner, sizeof inner, "%s", err ? err->msg : "");
        return at_fail(err, pst, "%s: metadata attend.train: %s", path, inner);
    }
    const at_json_node *r = at_json_root(doc);
    const at_json_node *opt = at_json_get(r, "optimizer"), *bs = at_json_get(r, "batch_size"),
                       *ds = at_json_get(r, "data_size");
    attend_status st = ATTEND_OK;
    if (!opt || opt->type != AT_JSON_STRING || !bs || !bs->is_int || !ds || !ds->is_int)
        st = at_fail(err, ATTEND_ERR_FORMAT, "%s: metadata attend.train lacks optimizer/batch_size/data_size", path);
    else if (strcmp(opt->str, tr->opt_cfg.kind == ATTEND_OPT_ADAM ? "adam" : "sgd"))
        st = at_fail(err, ATTEND_ERR_ARG, "%s: checkpoint optimizer is %s, this run uses %s", path, opt->str,
                     tr->opt_cfg.kind == ATTEND_OPT_ADAM ? "adam" : "sgd");
    else if (bs->i != tr->batch_size)
        st = at_fail(err, ATTEND_ERR_ARG, "%s: checkpoint batch size is %lld, this run uses %d", path,
                     (long long)bs->i, tr->batch_size);
    else if (ds->i != tr->n)
        st = at_fail(err, ATTEND_ERR_ARG, "%s: checkpoint was trained on %lld pairs, this data has %d", path,
                     (long long)ds->i, tr->n);
    if (!st) st = compare_fingerprint(tr, f, path, r, ropt, note, err);
    at_json_free(doc);
    return st;
}

attend_status attend_trainer_restore(attend_trainer *tr, const char *path, const attend_restore_options *o,
                                     attend_error *note, attend_error *err) {
    const char *who = "attend_trainer_resume";
    if (note) at_ok(note);
    attend_restore_options d;
    memset(&d, 0, sizeof d);
    if (o) TRY(at_options_read(&d, sizeof d, o, o->size, "attend_restore_options", "attend_trainer_restore", err));
    const attend_restore_options *opt = o ? &d : NULL;
    CHECK(tr && path, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !tr ? "trainer" : "path");
    attend_st_file *f = NULL;
    TRY(attend_st_open(&f, path, 0, err));
    attend_model *m = tr->m;
    attend_status st = ATTEND_OK;
    const char *fmt = attend_st_metadata(f, "attend.format"), *cj = attend_st_metadata(f, "attend.config"),
               *tj = attend_st_metadata(f, "attend.train");
    attend_model_config cfg;
    if (!fmt || strcmp(fmt, "checkpoint"))
        st = at_fail(err, ATTEND_ERR_FORMAT, "%s: not a checkpoint (attend.format is %s)", path, fmt ? fmt : "missing");
    else if (!cj || !tj)
        st = at_fail(err, ATTEND_ERR_FORMAT, "%s: metadata %s is missing", path, !cj ? "attend.config" : "attend.train");
    if (!st && (st = attend_model_config_from_json(&cfg, cj, strlen(cj), err))) {
        char inner[ATTEND_ERROR_MSG_MAX];
        snprintf(inner, sizeof inner, "%s", err ? err->msg : "");
        st = at_fail(err, st == ATTEND_ERR_ALLOC ? st : ATTEND_ERR_FORMAT, "%s: metadata attend.config: %s", path, inner);
    }
    if (!st) {
        cfg.max_batch = m->cfg.max_batch;
        cfg.max_src_len = m->cfg.max_src_len;
        cfg.max_tgt_len = m->cfg.max_tgt_len;
        char field[32], was[32], now[32];
        if (attend_model_config_diff(&cfg, &m->cfg, 0, field, was, now))
            st = at_fail(err, ATTEND_ERR_ARG, "%s: checkpoint is for another model: its %s is %s, this run's %s", path,
                         field, was, now);
    }
    if (!st) st = check_train_meta(tr, f, path, tj, opt, note, err);
    size_t nstate = 0;
    attend_real *moments = attend_optim_state(tr->opt, &nstate);
    const attend_st_tensor *tm = attend_st_find(f, "optim.moments"), *ts = attend_st_find(f, "optim.state"),
                           *to = attend_st_find(f, "optim.order");
    if (!st && (!tm || tm->dtype != ATTEND_DTYPE_F32 || tm->ndim != 1 || tm->shape[0] != (int64_t)nstate))
        st = at_fail(err, ATTEND_ERR_FORMAT, "%s: tensor 'optim.moments' is missing or not F32 [%zu]", path, nstate);
    if (!st && (!ts || ts->dtype != ATTEND_DTYPE_I64 || ts->ndim != 1 || ts->shape[0] != STATE_LEN))
        st = at_fail(err, ATTEND_ERR_FORMAT, "%s: tensor 'optim.state' is missing or not I64 [%d]", path, STATE_LEN);
    if (!st && (!to || to->dtype != ATTEND_DTYPE_I32 || to->ndim != 1 || to->shape[0] != tr->n))
        st = at_fail(err, ATTEND_ERR_FORMAT, "%s: tensor 'optim.order' is missing or not I32 [%d]", path, tr->n);
    int64_t state[STATE_LEN];
    if (!st) { /* steps, skipped, epoch, position, RNG state */
        memcpy(state, ts->data, sizeof state);
        const char *bad = state[0] < 0 || state[0] > LONG_MAX / 2   ? "step count"
                          : state[1] < 0 || state[1] > LONG_MAX / 2 ? "skipped-step count"
                          : state[2] < 1 || state[2] > INT_MAX / 2  ? "epoch"
                          : state[3] < 0 || state[3] > tr->n        ? "data position"
                          : !(state[4] | state[5] | state[6] | state[7]) ? "RNG state (all zero)"
                                                                         : NULL;
        if (bad)
            st = at_fail(err, ATTEND_ERR_FORMAT, "%s: tensor 'optim.state' holds an impossible %s (%lld %lld %lld %lld)",
                         path, bad, (long long)state[0], (long long)state[1], (long long)state[2], (long long)state[3]);
    }
    for (size_t i = 0; !st && i < nstate; i++) {
        float v;
        memcpy(&v, (const char *)tm->data + 4 * i, 4);
        if (!isfinite(v))
            st = at_fail(err, ATTEND_ERR_FORMAT, "%s: tensor 'optim.moments' element %zu is not finite (%g)", path, i,
                         (double)v);
    }
    if (!st) { /* the order must be a permutation of 0..n-1 */
        char *seen = calloc((size_t)tr->n, 1);
        if (!seen) st = at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
        for (int i = 0; !st && i < tr->n; i++) {
            int32_t v;
            memcpy(&v, (const char *)to->data + 4 * (size_t)i, 4);
            if (v < 0 || v >= tr->n || seen[v]) st = at_fail(err, ATTEND_ERR_FORMAT, "%s: 'optim.order' is not a permutation", path);
            else seen[v] = 1;
        }
        free(seen);
    }
    /* the caller's state (attend_trainer_set_caller_state), copied before anything changes */
    char *caller = NULL;
    const char *cs = st ? NULL : attend_st_metadata(f, "attend.caller");
    if (cs && strlen(cs) > CALLER_STATE_MAX)
        st = at_fail(err, ATTEND_ERR_FORMAT, "%s: metadata attend.caller is %zu bytes, more than %d", path, strlen(cs),
                     CALLER_STATE_MAX);
    else if (cs && !(caller = malloc(strlen(cs) + 1)))
        st = at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    else if (cs)
        memcpy(caller, cs, strlen(cs) + 1);
    if (!st) { /* weights last: on failure the previous values are put back */
        attend_real *backup = malloc(m->nparams * sizeof *backup);
        if (!backup) st = at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
        else {
            memcpy(backup, m->params, m->nparams * sizeof *backup);
            st = at_model_read_tensors(m, f, path, err);
            if (st) memcpy(m->params, backup, m->nparams * sizeof *backup);
            at_model_params_changed(m);
            free(backup);
        }
    }
    if (!st) {
        for (size_t i = 0; i < nstate; i++) {
            float v;
            memcpy(&v, (const char *)tm->data + 4 * i, 4);
            moments[i] = (attend_real)v;
        }
        attend_optim_set_steps(tr->opt, (long)state[0]);
        tr->skipped = (long)state[1];
        tr->nonfinite_run = 0; /* not stored: a resumed run counts afresh */
        tr->epoch = (int)state[2];
        tr->pos = (int)state[3];
        for (int i = 0; i < 4; i++) memcpy(&tr->rng.s[i], &state[4 + i], sizeof(uint64_t));
        memcpy(tr->perm, to->data, (size_t)tr->n * sizeof(int32_t));
    }
    if (!st) { /* the caller's state, or none (an older checkpoint, or none was set) */
        free(tr->caller_state);
        tr->caller_state = caller;
        caller = NULL;
    }
    free(caller);
    attend_st_close(f);
    return st ? st : at_ok(err);
}

attend_status attend_trainer_resume(attend_trainer *tr, const char *path, attend_error *err) {
    return attend_trainer_restore(tr, path, NULL, NULL, err);
}

attend_status attend_trainer_resume_checked(attend_trainer *tr, const char *path, const attend_resume_options *opt,
                                            attend_error *note, attend_error *err) {
    if (!opt) return attend_trainer_restore(tr, path, NULL, note, err);
    attend_restore_options o = {sizeof o, opt->src_vocab, opt->tgt_vocab, opt->tok, opt->anyway};
    return attend_trainer_restore(tr, path, &o, note, err);
}
