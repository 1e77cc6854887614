/*
 * model_io.c — model files: the configuration as JSON (the fields every
 * model has, then the extensions' keys and the decoder kind's setting), and
 * save/load/clone of a whole model (parameters + configuration +
 * vocabularies) as safetensors.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/json.h"
#include "io/model_io.h"
#include "io/quantize.h"
#include "seq2seq/linear.h"
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/encoder.h"
#include "seq2seq/encoders/encoder_kind.h"
#include "seq2seq/extension.h"

attend_status attend_model_config_to_json(const attend_model_config *c, char **json, attend_error *err) {
    CHECK(c && json, err, ATTEND_ERR_NULL, "attend_model_config_to_json: %s is NULL", !c ? "cfg" : "json");
    *json = NULL;
    char buf[768];
    int n = snprintf(buf, sizeof buf,
                     "{\"cell\":\"%s\",\"decoder\":\"%s\",\"score\":\"%s\",\"src_vocab\":%d,\"tgt_vocab\":%d,"
                     "\"emb\":%d,\"enc_hidden\":%d,\"enc_layers\":%d,\"dec_hidden\":%d,\"attn\":%d,"
                     "\"max_batch\":%d,\"max_src_len\":%d,\"max_tgt_len\":%d",
                     attend_cell_name(c->cell), attend_decoder_name(c->decoder), attend_score_name(c->score),
                     c->src_vocab, c->tgt_vocab, c->emb, c->enc_hidden, c->enc_layers, c->dec_hidden, c->attn,
                     c->max_batch, c->max_src_len, c->max_tgt_len);
    /* the fields added in 0.2 only when not zero, so older configurations keep their bytes: the stacked
     * decoder's layers, then each extension's keys in the extensions' order */
    if (n > 0 && (size_t)n < sizeof buf && c->dec_layers)
        n += snprintf(buf + n, sizeof buf - (size_t)n, ",\"dec_layers\":%d", c->dec_layers);
    /* the encoder kind (added in 0.3) and its keys, when not the recurrent one */
    const at_encoder_ops *enc = at_encoder_of(c);
    CHECK(enc, err, ATTEND_ERR_ARG, "attend_model_config_to_json: encoder=%d is unknown", (int)c->encoder);
    if (n > 0 && (size_t)n < sizeof buf && c->encoder && enc) {
        n += snprintf(buf + n, sizeof buf - (size_t)n, ",\"encoder\":\"%s\"", attend_encoder_name(c->encoder));
        for (int k = 0; k < enc->nkeys; k++) {
            const at_encoder_key *key = &enc->keys[k];
            int v;
            memcpy(&v, (const char *)c + key->offset, sizeof v);
            if (!(n > 0 && (size_t)n < sizeof buf) || !v) continue;
            if (key->name) n += snprintf(buf + n, sizeof buf - (size_t)n, ",\"%s\":\"%s\"", key->key, key->name(v));
            else n += snprintf(buf + n, sizeof buf - (size_t)n, ",\"%s\":%d", key->key, v);
        }
    }
    for (int i = 0; i < at_ext_count; i++)
        for (int k = 0; k < at_exts[i]->nkeys; k++) {
            const at_ext_key *key = &at_exts[i]->keys[k];
            int v;
            memcpy(&v, (const char *)c + key->offset, sizeof v);
            if (!(n > 0 && (size_t)n < sizeof buf) || !v) continue;
            if (key->name) n += snprintf(buf + n, sizeof buf - (size_t)n, ",\"%s\":\"%s\"", key->key, key->name(v));
            else n += snprintf(buf + n, sizeof buf - (size_t)n, ",\"%s\":%d", key->key, v);
        }
    if (n > 0 && (size_t)n < sizeof buf) n += snprintf(buf + n, sizeof buf - (size_t)n, "}");
    CHECK(n > 0 && (size_t)n < sizeof buf, err, ATTEND_ERR_ARG, "attend_model_config_to_json: config too long");
    *json = malloc((size_t)n + 1);
    CHECK(*json, err, ATTEND_ERR_ALLOC, "attend_model_config_to_json: out of memory");
    memcpy(*json, buf, (size_t)n + 1);
    return at_ok(err);
}

static attend_status json_int_field(const at_json_node *root, const char *key, int *out, attend_error *err) {
    const at_json_node *v = at_json_get(root, key);
    CHECK(v, err, ATTEND_ERR_FORMAT, "model config: field '%s' is missing", key);
    CHECK(v->type == AT_JSON_NUMBER && v->is_int && v->i >= -2147483647 && v->i <= 2147483647, err,
          ATTEND_ERR_FORMAT, "model config: field '%s' must be an integer", key);
    *out = (int)v->i;
    return ATTEND_OK;
}

static attend_status json_name_field(const at_json_node *root, const char *key, int (*from_name)(const char *),
                                     int *out, attend_error *err) {
    const at_json_node *v = at_json_get(root, key);
    CHECK(v, err, ATTEND_ERR_FORMAT, "model config: field '%s' is missing", key);
    CHECK(v->type == AT_JSON_STRING, err, ATTEND_ERR_FORMAT, "model config: field '%s' must be a string", key);
    int k = from_name(v->str);
    char snip[AT_JSON_SNIPPET_MAX];
    at_json_snippet(snip, v->str, v->len);
    CHECK(k >= 0, err, ATTEND_ERR_FORMAT, "model config: field '%s' has unknown value \"%s\"", key, snip);
    *out = k;
    return ATTEND_OK;
}

/* A key some decoder kind keeps in the config JSON (its setting), or NULL. */
static const char *decoder_key(const char *key) {
    for (int d = 0; d < at_decoder_count; d++)
        if (at_decoders[d] && at_decoders[d]->key && !strcmp(at_decoders[d]->key, key)) return at_decoders[d]->key;
    return NULL;
}

/* Some encoder kind's key named key, or NULL. */
static const at_encoder_key *encoder_key(const char *key) {
    for (int e = 0; e < at_encoder_count; e++)
        for (int k = 0; k < at_encoders[e]->nkeys; k++)
            if (!strcmp(at_encoders[e]->keys[k].key, key)) return &at_encoders[e]->keys[k];
    return NULL;
}

/* An extension's key named key, or NULL. */
static const at_ext_key *ext_key(const char *key) {
    for (int i = 0; i < at_ext_count; i++)
        for (int k = 0; k < at_exts[i]->nkeys; k++)
            if (!strcmp(at_exts[i]->keys[k].key, key)) return &at_exts[i]->keys[k];
    return NULL;
}

/* The config JSON into *c, and the decoder kind's optional setting (0 when absent) into *setting. */
static attend_status config_parse(attend_model_config *c, int *setting, const char *json, size_t len,
                                  attend_error *err) {
    at_json_doc *doc = NULL;
    at_json_limits lim = {1024, 4, 0};
    TRY(at_json_parse(&doc, json, len, &lim, NULL, err));
    const at_json_node *root = at_json_root(doc);
    attend_model_config t;
    memset(&t, 0, sizeof t);
    int cell = 0, dec = 0, score = 0;
    attend_status st = ATTEND_OK;
    if (root->type != AT_JSON_OBJECT)
        st = at_fail(err, ATTEND_ERR_FORMAT, "model config: not a JSON object");
    if (!st) st = json_name_field(root, "cell", attend_cell_from_name, &cell, err);
    if (!st) st = json_name_field(root, "decoder", attend_decoder_from_name, &dec, err);
    if (!st) st = json_name_field(root, "score", attend_score_from_name, &score, err);
    struct {
        const char *key;
        int *dst;
    } ints[] = {{"src_vocab", &t.src_vocab},     {"tgt_vocab", &t.tgt_vocab},   {"emb", &t.emb},
                {"enc_hidden", &t.enc_hidden},   {"enc_layers", &t.enc_layers}, {"dec_hidden", &t.dec_hidden},
                {"attn", &t.attn},               {"max_batch", &t.max_batch},   {"max_src_len", &t.max_src_len},
                {"max_tgt_len", &t.max_tgt_len}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0] && !st; i++) st = json_int_field(root, ints[i].key, ints[i].dst, err);
    /* optional fields added in 0.2: 0 when absent; ranges checked by attend_model_config_check */
    if (!st && at_json_get(root, "dec_layers")) st = json_int_field(root, "dec_layers", &t.dec_layers, err);
    /* added in 0.3: the encoder kind (rnn when absent) and every kind's keys (the kind's check refuses another's) */
    int encoder = 0;
    if (!st && at_json_get(root, "encoder")) st = json_name_field(root, "encoder", attend_encoder_from_name, &encoder, err);
    t.encoder = (attend_encoder_kind)encoder;
    for (int e = 0; e < at_encoder_count && !st; e++)
        for (int k = 0; k < at_encoders[e]->nkeys && !st; k++) {
            const at_encoder_key *key = &at_encoders[e]->keys[k];
            if (!at_json_get(root, key->key)) continue;
            int v = 0;
            st = key->name ? json_name_field(root, key->key, key->from_name, &v, err)
                           : json_int_field(root, key->key, &v, err);
            if (!st) memcpy((char *)&t + key->offset, &v, sizeof v);
        }
    for (int i = 0; i < at_ext_count && !st; i++)
        for (int k = 0; k < at_exts[i]->nkeys && !st; k++) {
            const at_ext_key *key = &at_exts[i]->keys[k];
            if (!at_json_get(root, key->key)) continue;
            int v = 0;
            st = key->name ? json_name_field(root, key->key, key->from_name, &v, err)
                           : json_int_field(root, key->key, &v, err);
            if (!st) memcpy((char *)&t + key->offset, &v, sizeof v);
        }
    /* optional: the decoder kind's setting (not an attend_model_config field): checked here, read by the loader */
    int set = 0;
    for (const at_json_node *kv = root->first; kv && !st; kv = kv->next) {
        const char *dk = decoder_key(kv->key);
        if (!dk) continue;
        const at_decoder_ops *d = (unsigned)dec < (unsigned)at_decoder_count ? at_decoders[dec] : NULL;
        st = json_int_field(root, dk, &set, err);
        if (!st && (set != 0 && set != 1))
            st = at_fail(err, ATTEND_ERR_FORMAT, "model config: field '%s' is %d, must be 0 or 1", dk, set);
        if (!st && set && (!d || !d->key || strcmp(d->key, dk)))
            st = at_fail(err, ATTEND_ERR_FORMAT, "model config: '%s' is 1 but decoder %s has no such setting", dk,
                         d ? d->name : "?");
    }
    if (!st)
        for (const at_json_node *kv = root->first; kv; kv = kv->next) {
            int known = !strcmp(kv->key, "cell") || !strcmp(kv->key, "decoder") || !strcmp(kv->key, "score") ||
                        !strcmp(kv->key, "dec_layers") || !strcmp(kv->key, "encoder") || encoder_key(kv->key) ||
                        ext_key(kv->key) || decoder_key(kv->key);
            for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) known |= !strcmp(kv->key, ints[i].key);
            if (!known) {
                char snip[AT_JSON_SNIPPET_MAX];
                at_json_snippet(snip, kv->key, kv->key_len);
                st = at_fail(err, ATTEND_ERR_FORMAT, "model config: unknown field '%s'", snip);
                break;
            }
        }
    at_json_free(doc);
    if (st) return st;
    t.cell = (attend_cell_kind)cell;
    t.decoder = (attend_decoder_kind)dec;
    t.score = (attend_score_kind)score;
    TRY(attend_model_config_check(&t, err));
    *c = t;
    *setting = set;
    return at_ok(err);
}

attend_status attend_model_config_from_json(attend_model_config *c, const char *json, size_t len,
                                            attend_error *err) {
    CHECK(c && json, err, ATTEND_ERR_NULL, "attend_model_config_from_json: %s is NULL", !c ? "cfg" : "json");
    int setting;
    return config_parse(c, &setting, json, len, err);
}

attend_status at_model_write(const attend_model *m, const char *path, const attend_vocab *src_vocab,
                             const attend_vocab *tgt_vocab, attend_tokenizer tok, const char *format,
                             const attend_st_entry *extra, int n_extra, const attend_st_meta *extra_meta,
                             int n_extra_meta, attend_error *err) {
    const char *who = "attend_model_save";
    CHECK(m && path && src_vocab, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !m ? "model" : !path ? "path" : "src_vocab");
    int vocabulary = m->dec->vocabulary;
    CHECK(!vocabulary || tgt_vocab, err, ATTEND_ERR_NULL, "%s: tgt_vocab is NULL", who);
    CHECK(attend_vocab_size(src_vocab) == m->cfg.src_vocab, err, ATTEND_ERR_SHAPE,
          "%s: source vocabulary has %d tokens, the model %d", who, attend_vocab_size(src_vocab), m->cfg.src_vocab);
    CHECK(!vocabulary || attend_vocab_size(tgt_vocab) == m->cfg.tgt_vocab, err, ATTEND_ERR_SHAPE,
          "%s: target vocabulary has %d tokens, the model %d", who, attend_vocab_size(tgt_vocab), m->cfg.tgt_vocab);
    CHECK(tok == ATTEND_TOKENIZE_CHAR || tok == ATTEND_TOKENIZE_SPACE, err, ATTEND_ERR_ARG, "%s: unknown tokenizer %d",
          who, (int)tok);
    CHECK(n_extra >= 0 && n_extra <= 16 && n_extra_meta >= 0 && n_extra_meta <= 8, err, ATTEND_ERR_ARG,
          "%s: too many extra entries", who);
    /* a file with NaN/Inf weights would not load again (the loader refuses them):
     * refuse to write one, and leave whatever is at path untouched */
    for (int i = 0; i < m->ntensors; i++) {
        const at_tensor_desc *td = &m->desc[i];
        const attend_real *x = m->params + td->offset;
        for (size_t k = 0; k < td->numel; k++)
            CHECK(isfinite(x[k]), err, ATTEND_ERR_NONFINITE,
                  "%s: '%s': tensor '%s' element %zu is %g; not writing non-finite weights", who, path, td->name, k,
                  (double)x[k]);
    }
#ifndef ATTEND_DOUBLE
    /* a quantized model writes its int8/fp16 copies, not the float arena: a
     * weight changed after quantization (attend_model_tensor_find's pointer)
     * would be lost without a word, so refuse, naming the first one */
    for (int i = 0; i < m->ntensors && m->wdtype != ATTEND_DTYPE_F32; i++) {
        const at_qweight *q = &m->qw[i];
        if (q->dtype == ATTEND_DTYPE_F32) continue;
        const at_tensor_desc *td = &m->desc[i];
        const float *x = m->params + td->offset;
        for (size_t k = 0; k < td->numel; k++) {
            float v = q->dtype == ATTEND_DTYPE_I8 ? (float)q->i8[k] * q->scale[k / (size_t)q->cols]
                                                  : at_f16_to_float(q->f16[k]);
            CHECK(x[k] == v, err, ATTEND_ERR_ARG,
                  "%s: tensor '%s' element %zu changed after quantization (%g; %s copy %g) and would not be "
                  "saved: quantize the changed float model again",
                  who, td->name, k, (double)x[k], attend_dtype_name(q->dtype), (double)v);
        }
    }
#endif
#ifdef ATTEND_DOUBLE
    (void)format;
    (void)extra;
    (void)extra_meta;
    return at_fail(err, ATTEND_ERR_ARG, "%s: model files hold F32; this is the double-precision test build", who);
#else
    char *cfg_json = NULL, *sv = NULL, *tv = NULL;
    attend_status st = attend_model_config_to_json(&m->cfg, &cfg_json, err);
    if (!st && m->dec->key && m->dec->get_key(m)) { /* the kind's setting only when on: other files keep their bytes */
        size_t n = strlen(cfg_json), add = strlen(m->dec->key) + 8;
        char *grown = realloc(cfg_json, n + add);
        if (!grown) st = at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory for the config", who);
        else {
            cfg_json = grown;
            snprintf(cfg_json + n - 1, add + 1, ",\"%s\":1}", m->dec->key);
        }
    }
    if (!st) st = attend_vocab_to_json(src_vocab, &sv, err);
    if (!st && vocabulary) st = attend_vocab_to_json(tgt_vocab, &tv, err);
    if (!st) {
        /* a quantized model writes its matrices as stored (I8 with "<name>.scale", or F16) */
        attend_st_entry entries[2 * AT_MAX_TENSORS + 16];
        char scale_names[AT_MAX_TENSORS][AT_NAME_MAX + 8];
        int ne = 0;
        for (int i = 0; i < m->ntensors; i++) {
            const at_tensor_desc *td = &m->desc[i];
            const at_qweight *q = &m->qw[i];
            attend_st_entry *e = &entries[ne++];
            memset(e, 0, sizeof *e);
            e->name = td->name;
            e->dtype = ATTEND_DTYPE_F32;
            e->ndim = td->ndim;
            e->shape[0] = td->shape[0];
            e->shape[1] = td->shape[1];
            e->data = m->params + td->offset;
            if (m->wdtype == ATTEND_DTYPE_F32 || q->dtype == ATTEND_DTYPE_F32) continue;
            e->dtype = q->dtype;
            e->data = q->dtype == ATTEND_DTYPE_I8 ? (const void *)q->i8 : (const void *)q->f16;
            if (q->dtype == ATTEND_DTYPE_I8) {
                snprintf(scale_names[i], sizeof scale_names[i], "%s.scale", td->name);
                attend_st_entry *se = &entries[ne++];
                memset(se, 0, sizeof *se);
                se->name = scale_names[i];
                se->dtype = ATTEND_DTYPE_F32;
                se->ndim = 1;
                se->shape[0] = q->rows;
                se->data = q->scale;
            }
        }
        for (int i = 0; i < n_extra; i++) entries[ne + i] = extra[i];
        attend_st_meta meta[5 + 8] = {{"attend.format", format},
                                      {"attend.config", cfg_json},
                                      {"attend.tokenizer", attend_tokenizer_name(tok)},
                                      {"attend.src_vocab", sv},
                                      {"attend.tgt_vocab", tv ? tv : "[]"}};
        for (int i = 0; i < n_extra_meta; i++) meta[5 + i] = extra_meta[i];
        st = attend_st_write(path, entries, ne + n_extra, meta, 5 + n_extra_meta, err);
    }
    free(cfg_json);
    free(sv);
    free(tv);
    return st;
#endif
}

attend_status attend_model_clone(attend_model **out, const attend_model *src, attend_error *err) {
    CHECK(out && src, err, ATTEND_ERR_NULL, "attend_model_clone: %s is NULL", !out ? "out" : "src");
    *out = NULL;
    attend_model *m = NULL;
    TRY(attend_model_create(&m, &src->cfg, 0, err)); /* the seed's weights are replaced below */
    if (m->nparams != src->nparams) { /* the same configuration gives the same layout */
        attend_model_free(m);
        return at_fail(err, ATTEND_ERR_SHAPE, "attend_model_clone: %zu parameters, the source has %zu", m->nparams,
                       src->nparams);
    }
    memcpy(m->params, src->params, src->nparams * sizeof *m->params);
    at_model_params_changed(m);
    if (m->dec->clone) m->dec->clone(m, src);
    at_ext_clone(m, src);
    attend_status st = at_model_quant_clone(m, src, err);
    if (st) {
        attend_model_free(m);
        return st;
    }
    *out = m;
    return at_ok(err);
}

attend_status attend_model_save(const attend_model *m, const char *path, const attend_vocab *src_vocab,
                                 const attend_vocab *tgt_vocab, attend_tokenizer tok, attend_error *err) {
    return at_model_write(m, path, src_vocab, tgt_vocab, tok, "model", NULL, 0, NULL, 0, err);
}

attend_status attend_model_save_meta(const attend_model *m, const char *path, const attend_vocab *src_vocab,
                                     const attend_vocab *tgt_vocab, attend_tokenizer tok, const attend_st_meta *meta,
                                     int n_meta, attend_error *err) {
    const char *who = "attend_model_save_meta";
    CHECK(n_meta >= 0 && n_meta <= 4 && (meta || n_meta == 0), err, ATTEND_ERR_ARG,
          "%s: %d metadata pairs (0 to 4, meta not NULL)", who, n_meta);
    static const char *const own[] = {"attend.format", "attend.config", "attend.tokenizer", "attend.src_vocab",
                                      "attend.tgt_vocab"};
    for (int i = 0; i < n_meta; i++) {
        CHECK(meta[i].key && meta[i].value, err, ATTEND_ERR_NULL, "%s: metadata %d: key or value is NULL", who, i);
        for (int k = 0; k < 5; k++)
            CHECK(strcmp(meta[i].key, own[k]), err, ATTEND_ERR_ARG, "%s: metadata key '%s' is the file's own", who,
                  own[k]);
    }
    return at_model_write(m, path, src_vocab, tgt_vocab, tok, "model", NULL, 0, meta, n_meta, err);
}

/* Copies the file's tensors into m, checking names, dtypes and shapes. */
attend_status at_model_read_tensors(attend_model *m, const attend_st_file *f, const char *path, attend_error *err) {
    int found = 0;
    at_model_params_changed(m);
    for (int i = 0; i < m->ntensors; i++) {
        const at_tensor_desc *td = &m->desc[i];
        const attend_st_tensor *t = attend_st_find(f, td->name);
        CHECK(t, err, ATTEND_ERR_FORMAT, "%s: tensor '%s' is missing", path, td->name);
        CHECK(t->dtype != ATTEND_DTYPE_I8 && t->dtype != ATTEND_DTYPE_F16, err, ATTEND_ERR_FORMAT,
              "%s: tensor '%s' is %s: quantized weights are for inference only; training and resuming need the "
              "float32 model",
              path, td->name, attend_dtype_name(t->dtype));
        CHECK(t->dtype == ATTEND_DTYPE_F32, err, ATTEND_ERR_FORMAT, "%s: tensor '%s' has dtype %s, expected F32", path,
              td->name, attend_dtype_name(t->dtype) ? attend_dtype_name(t->dtype) : "?");
        int same = t->ndim == td->ndim && t->shape[0] == td->shape[0] && (td->ndim < 2 || t->shape[1] == td->shape[1]);
        if (!same) {
            char got[96] = "[", want[64];
            for (int d = 0; d < t->ndim; d++) {
                size_t l = strlen(got);
                snprintf(got + l, sizeof got - l, "%s%lld", d ? "," : "", (long long)t->shape[d]);
            }
            strncat(got, "]", sizeof got - strlen(got) - 1);
            if (td->ndim == 2)
                snprintf(want, sizeof want, "[%lld,%lld]", (long long)td->shape[0], (long long)td->shape[1]);
            else
                snprintf(want, sizeof want, "[%lld]", (long long)td->shape[0]);
            return at_fail(err, ATTEND_ERR_FORMAT, "%s: tensor '%s' has shape %s, expected %s", path, td->name, got,
                           want);
        }
        attend_real *dst = m->params + td->offset;
        const unsigned char *src = t->data;
        for (size_t k = 0; k < td->numel; k++) {
            float v;
            memcpy(&v, src + 4 * k, 4);
            CHECK(v == v && v - v == 0, err, ATTEND_ERR_FORMAT, "%s: tensor '%s' element %zu is not finite", path,
                  td->name, k);
            dst[k] = (attend_real)v;
        }
        found++;
    }
    return ATTEND_OK;
}

/* Rewrites the message of a failed call as "<path>: <what>: <message>". */
static attend_status name_error(attend_error *err, attend_status st, const char *path, const char *what) {
    char inner[ATTEND_ERROR_MSG_MAX];
    snprintf(inner, sizeof inner, "%s", err ? err->msg : "");
    return at_fail(err, st, "%s: %s: %s", path, what, inner);
}

/* A file must not make the loader allocate more than its contents justify.
 * attend_model_create sizes the parameters from the configuration and the
 * activations from the capacities, so both are bounded first, from sizes
 * alone (double precision: no overflow):
 *  - parameters: a lower bound on the count the configuration implies (a
 *    subset of the tensors the model always has) must not exceed the values
 *    the file's tensors hold, which the file's size bounds;
 *  - activations: when any capacity comes from the file, a lower bound on the
 *    activation arena (a subset of its buffers) must stay under
 *    AT_LOAD_MAX_ACT_BYTES; a caller that wants more passes its capacities. */
#define AT_LOAD_MAX_ACT_BYTES ((double)(1u << 30))

static double min_params(const attend_model_config *c) {
    const at_encoder_ops *enc = at_encoder_of(c); /* known: the configuration was checked */
    double G = c->cell == ATTEND_CELL_LSTM ? 4 : 3, D = c->emb, E = enc->width(c), Hd = c->dec_hidden;
    const at_decoder_ops *dec = at_decoders[c->decoder];
    double n = (double)c->src_vocab * D        /* source embedding */
               + enc->min_params(c);           /* the encoder kind's (RNN: the first layer, both directions) */
    if (dec->no_cell) return n + dec->min_params(c); /* its layers, target embedding and output layer */
    n += Hd * E                                /* bridge */
         + G * Hd * (Hd + D);                  /* decoder cell */
    if (c->dec_layers > 1) n += (c->dec_layers - 1) * 2 * G * Hd * Hd; /* a stacked decoder's upper layers */
    if (dec->vocabulary) n += (double)c->tgt_vocab * (D + Hd); /* target embedding, output */
    if (dec->attentive && c->score == ATTEND_SCORE_ADDITIVE) n += (double)c->attn * (Hd + E);
    return n;
}

static double min_activation_bytes(const attend_model_config *c) {
    double N = c->max_batch, S = c->max_src_len, T = (double)c->max_tgt_len + 1, D = c->emb,
           E = at_encoder_of(c)->width(c), Hd = c->dec_hidden,
           V = at_decoders[c->decoder]->vocabulary ? c->tgt_vocab : 1;
    double n = N * S * D + (c->enc_layers + 2) * N * S * E /* embeddings, layer outputs and their gradients */
               + 3 * (T + 1) * N * Hd + T * N * (2 * E + Hd)  /* decoder states, inputs, contexts */
               + 2 * T * N * S + N * T * V;                   /* attention weights and scores, log-probabilities */
    return n * (double)sizeof(attend_real);
}

static attend_status check_sizes(const attend_st_file *f, const attend_model_config *cfg, int file_capacity,
                                 const char *path, attend_error *err) {
    double held = 0;
    for (int i = 0; i < attend_st_count(f); i++) {
        const attend_st_tensor *t = attend_st_get(f, i);
        if (strncmp(t->name, "optim.", 6)) held += (double)(t->nbytes / attend_dtype_size(t->dtype));
    }
    double need = min_params(cfg);
    CHECK(need <= held, err, ATTEND_ERR_FORMAT,
          "%s: attend.config needs at least %.0f parameters, the file's tensors hold %.0f values", path, need, held);
    double act = min_activation_bytes(cfg);
    CHECK(!file_capacity || act <= AT_LOAD_MAX_ACT_BYTES, err, ATTEND_ERR_CAPACITY,
          "%s: the file's capacities (max_batch=%d, max_src_len=%d, max_tgt_len=%d) need over %.0f MiB of "
          "activations, more than the %.0f MiB a file may ask for; pass smaller capacities",
          path, cfg->max_batch, cfg->max_src_len, cfg->max_tgt_len, act / 1048576, AT_LOAD_MAX_ACT_BYTES / 1048576);
    return ATTEND_OK;
}

attend_status attend_model_load(attend_model **out, const char *path, const attend_model_config *capacity,
                                attend_vocab **src_vocab, attend_vocab **tgt_vocab, attend_tokenizer *tok,
                                attend_error *err) {
    const char *who = "attend_model_load";
    CHECK(out && path, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !out ? "out" : "path");
    *out = NULL;
    if (src_vocab) *src_vocab = NULL;
    if (tgt_vocab) *tgt_vocab = NULL;
    attend_st_file *f = NULL;
    TRY(attend_st_open(&f, path, 0, err));
    attend_model *m = NULL;
    attend_vocab *sv = NULL, *tv = NULL;
    attend_model_config cfg;
    attend_status st = ATTEND_OK;
    const char *fmt = attend_st_metadata(f, "attend.format");
    const char *cj = attend_st_metadata(f, "attend.config");
    const char *tk = attend_st_metadata(f, "attend.tokenizer");
    const char *sj = attend_st_metadata(f, "attend.src_vocab");
    const char *tj = attend_st_metadata(f, "attend.tgt_vocab");
    if (!fmt || (strcmp(fmt, "model") && strcmp(fmt, "checkpoint")))
        st = at_fail(err, ATTEND_ERR_FORMAT, "%s: not an attend model file (metadata attend.format is %s)", path,
                     fmt ? "unexpected" : "missing");
    else if (!cj || !tk || !sj || !tj)
        st = at_fail(err, ATTEND_ERR_FORMAT, "%s: metadata '%s' is missing", path,
                     !cj ? "attend.config" : !tk ? "attend.tokenizer" : !sj ? "attend.src_vocab" : "attend.tgt_vocab");
    int setting = 0;
    if (!st && (st = config_parse(&cfg, &setting, cj, strlen(cj), err))) /* a bad file, whatever the reason */
        st = name_error(err, st == ATTEND_ERR_ALLOC ? st : ATTEND_ERR_FORMAT, path, "metadata attend.config");
    if (!st && attend_tokenizer_from_name(tk) < 0)
        st = at_fail(err, ATTEND_ERR_FORMAT, "%s: unknown tokenizer in metadata", path);
    int file_capacity = 1;
    if (!st && capacity) {
        if (capacity->max_batch > 0) cfg.max_batch = capacity->max_batch;
        if (capacity->max_src_len > 0) cfg.max_src_len = capacity->max_src_len;
        if (capacity->max_tgt_len > 0) cfg.max_tgt_len = capacity->max_tgt_len;
        file_capacity = capacity->max_batch <= 0 || capacity->max_src_len <= 0 || capacity->max_tgt_len <= 0;
        if ((st = attend_model_config_check(&cfg, err))) name_error(err, st, path, "capacities");
    }
    if (!st) st = check_sizes(f, &cfg, file_capacity, path, err);
    if (!st && (st = attend_vocab_from_json(&sv, sj, err))) name_error(err, st, path, "metadata attend.src_vocab");
    if (!st && at_decoders[cfg.decoder]->vocabulary && (st = attend_vocab_from_json(&tv, tj, err)))
        name_error(err, st, path, "metadata attend.tgt_vocab");
    if (!st && attend_vocab_size(sv) != cfg.src_vocab)
        st = at_fail(err, ATTEND_ERR_FORMAT, "%s: source vocabulary has %d tokens, config says %d", path,
                     attend_vocab_size(sv), cfg.src_vocab);
    if (!st && tv && attend_vocab_size(tv) != cfg.tgt_vocab)
        st = at_fail(err, ATTEND_ERR_FORMAT, "%s: target vocabulary has %d tokens, config says %d", path,
                     attend_vocab_size(tv), cfg.tgt_vocab);
    if (!st && (st = attend_model_create(&m, &cfg, 0, err))) name_error(err, st, path, "model");
    if (!st && m->dec->set_key) m->dec->set_key(m, setting); /* absent from older files: 0, as they decoded */
    if (!st) st = at_ext_load(m, sv, tv, err); /* what the extensions read from the file's vocabularies */
    if (!st) /* float files as always; quantized ones through quantize.c */
        st = at_model_file_wdtype(m, f) == ATTEND_DTYPE_F32 ? at_model_read_tensors(m, f, path, err)
                                                             : at_model_read_weights(m, f, path, err);
    if (!st) {
        int extra = attend_st_count(f) - m->ntensors;
        if (m->wdtype == ATTEND_DTYPE_I8) /* the scales of the I8 matrices, read with them */
            for (int i = 0; i < m->ntensors; i++) extra -= m->qw[i].dtype == ATTEND_DTYPE_I8;
        /* checkpoints carry optimizer tensors under "optim." */
        for (int i = 0; i < attend_st_count(f) && extra > 0; i++)
            if (!strncmp(attend_st_get(f, i)->name, "optim.", 6)) extra--;
        if (extra > 0) {
            for (int i = 0; i < attend_st_count(f); i++) {
                const char *nm = attend_st_get(f, i)->name;
                attend_model_tensor t;
                size_t nl = strlen(nm);
                int scale = 0; /* "<matrix>.scale" of an I8 matrix */
                if (m->wdtype == ATTEND_DTYPE_I8 && nl > 6 && !strcmp(nm + nl - 6, ".scale") && nl - 6 < AT_NAME_MAX) {
                    char base[AT_NAME_MAX];
                    memcpy(base, nm, nl - 6);
                    base[nl - 6] = 0;
                    for (int k = 0; k < m->ntensors; k++)
                        scale |= m->qw[k].dtype == ATTEND_DTYPE_I8 && !strcmp(m->desc[k].name, base);
                }
                if (!scale && strncmp(nm, "optim.", 6) && attend_model_tensor_find(m, nm, &t, NULL) != ATTEND_OK) {
                    char snip[AT_JSON_SNIPPET_MAX];
                    at_json_snippet(snip, nm, strlen(nm));
                    st = at_fail(err, ATTEND_ERR_FORMAT, "%s: unexpected tensor '%s' for a %s/%s model", path, snip,
                                 attend_decoder_name(cfg.decoder), attend_score_name(cfg.score));
                    break;
                }
            }
        }
    }
    if (!st && tok) *tok = (attend_tokenizer)attend_tokenizer_from_name(tk);
    attend_st_close(f);
    if (st) {
        attend_model_free(m);
        attend_vocab_free(sv);
        attend_vocab_free(tv);
        return st;
    }
    *out = m;
    if (src_vocab) *src_vocab = sv;
    else attend_vocab_free(sv);
    if (tgt_vocab) *tgt_vocab = tv;
    else attend_vocab_free(tv);
    return at_ok(err);
}
