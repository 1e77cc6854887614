/*
 * quantize.c — a model's weights stored as int8 or fp16 (attend_model_quantize),
 * read from and checked in model files (the products that read them are in
 * src/seq2seq/linear.c). docs/FORMAT.md, "Quantized model files".
 *
 * The model keeps its float arena filled with the dequantized weights, so every
 * float path (training code, analysis, the products with many rows) computes
 * the same function, and the quantized copies of the weight matrices in one
 * more allocation (qmem), which the small products of inference read.
 */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/quantize.h"
#include "seq2seq/linear.h"

int at_model_quantizable(const at_tensor_desc *td) {
    return td->ndim == 2 && strcmp(td->name, "src_emb.weight") != 0 && strcmp(td->name, "tgt_emb.weight") != 0;
}

attend_dtype attend_model_weight_dtype(const attend_model *m) { return m ? m->wdtype : ATTEND_DTYPE_F32; }

/* One allocation for the quantized copies (64-byte aligned blocks: the
 * matrix, then its scales for I8); fills m->qw and m->wdtype. */
static attend_status quant_alloc(attend_model *m, attend_dtype dtype, const char *who, attend_error *err) {
    size_t esz = dtype == ATTEND_DTYPE_I8 ? 1 : 2, total = 0;
    for (int i = 0; i < m->ntensors; i++) {
        const at_tensor_desc *td = &m->desc[i];
        if (!at_model_quantizable(td)) continue;
        total += (td->numel * esz + 63) / 64 * 64;
        if (dtype == ATTEND_DTYPE_I8) total += ((size_t)td->shape[0] * sizeof(float) + 63) / 64 * 64;
    }
    void *mem = NULL;
    if (posix_memalign(&mem, 64, total ? total : 64) != 0) mem = NULL;
    CHECK(mem, err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes of quantized weights", who, total);
    memset(mem, 0, total);
    free(m->qmem);
    m->qmem = mem;
    m->qbytes = total;
    char *p = mem;
    for (int i = 0; i < m->ntensors; i++) {
        const at_tensor_desc *td = &m->desc[i];
        at_qweight *q = &m->qw[i];
        memset(q, 0, sizeof *q);
        q->dtype = ATTEND_DTYPE_F32;
        if (!at_model_quantizable(td)) continue;
        q->dtype = dtype;
        q->rows = (int)td->shape[0];
        q->cols = (int)td->shape[1];
        q->f = m->params + td->offset;
        if (dtype == ATTEND_DTYPE_I8) q->i8 = (const int8_t *)(void *)p;
        else q->f16 = (const uint16_t *)(void *)p;
        p += (td->numel * esz + 63) / 64 * 64;
        if (dtype == ATTEND_DTYPE_I8) {
            q->scale = (const float *)(void *)p;
            p += ((size_t)td->shape[0] * sizeof(float) + 63) / 64 * 64;
        }
    }
    m->wdtype = dtype;
    return ATTEND_OK;
}

#ifndef ATTEND_DOUBLE
static void quant_drop(attend_model *m) {
    free(m->qmem);
    m->qmem = NULL;
    m->qbytes = 0;
    m->wdtype = ATTEND_DTYPE_F32;
    memset(m->qw, 0, sizeof m->qw);
}
#endif

attend_status at_model_quant_clone(attend_model *dst, const attend_model *src, attend_error *err) {
    if (src->wdtype == ATTEND_DTYPE_F32) return ATTEND_OK;
    TRY(quant_alloc(dst, src->wdtype, "attend_model_clone", err));
    memcpy(dst->qmem, src->qmem, src->qbytes);
    return ATTEND_OK;
}

attend_status attend_model_quantize(attend_model *m, attend_dtype to, attend_error *err) {
    const char *who = "attend_model_quantize";
    CHECK(m, err, ATTEND_ERR_NULL, "%s: model is NULL", who);
    CHECK(to == ATTEND_DTYPE_I8 || to == ATTEND_DTYPE_F16, err, ATTEND_ERR_ARG,
          "%s: dtype %s: weights quantize to I8 or F16", who,
          attend_dtype_name(to) ? attend_dtype_name(to) : "(unknown)");
#ifdef ATTEND_DOUBLE
    return at_fail(err, ATTEND_ERR_ARG, "%s: quantized products are float32; this is the double-precision test build",
                   who);
#else
    /* F16 -> I8: the float copy holds the F16 values exactly, so they are the
     * master the int8 rows are made from (a model shipped as F16 gives its
     * int8 form byte for byte); every other quantized start is refused */
    int from_f16 = m->wdtype == ATTEND_DTYPE_F16 && to == ATTEND_DTYPE_I8;
    for (int i = 0; i < m->ntensors; i++)
        CHECK(m->wdtype == ATTEND_DTYPE_F32 || from_f16 || !at_model_quantizable(&m->desc[i]), err, ATTEND_ERR_ARG,
              "%s: the model is already quantized: tensor '%s' is %s", who, m->desc[i].name,
              attend_dtype_name(m->wdtype));
    for (int i = 0; i < m->ntensors; i++) {
        const at_tensor_desc *td = &m->desc[i];
        if (!at_model_quantizable(td)) continue;
        const float *x = m->params + td->offset;
        for (size_t k = 0; k < td->numel; k++) {
            CHECK(isfinite(x[k]), err, ATTEND_ERR_NONFINITE, "%s: tensor '%s' element %zu is %g", who, td->name, k,
                  (double)x[k]);
            CHECK(to != ATTEND_DTYPE_F16 || fabsf(x[k]) < 65520.0f, err, ATTEND_ERR_ARG,
                  "%s: tensor '%s' element %zu is %g, beyond float16's range (+-65504)", who, td->name, k,
                  (double)x[k]);
        }
    }
    TRY(quant_alloc(m, to, who, err));
    at_model_params_changed(m); /* the dequantized values replace the float ones */
    for (int i = 0; i < m->ntensors; i++) {
        at_qweight *q = &m->qw[i];
        if (q->dtype == ATTEND_DTYPE_F32) continue;
        float *x = m->params + m->desc[i].offset;
        for (int r = 0; r < q->rows; r++) {
            float *row = x + (size_t)r * q->cols;
            if (to == ATTEND_DTYPE_I8) {
                int8_t *qr = (int8_t *)(uintptr_t)(q->i8 + (size_t)r * q->cols);
                float s = at_q8_quantize_row(qr, row, q->cols);
                ((float *)(uintptr_t)q->scale)[r] = s;
                for (int k = 0; k < q->cols; k++) row[k] = (float)qr[k] * s;
            } else {
                uint16_t *hr = (uint16_t *)(uintptr_t)(q->f16 + (size_t)r * q->cols);
                for (int k = 0; k < q->cols; k++) {
                    hr[k] = at_f16_from_float(row[k]);
                    row[k] = at_f16_to_float(hr[k]);
                }
            }
        }
    }
    return at_ok(err);
#endif
}

#ifndef ATTEND_DOUBLE
/* "[a,b]" of a file tensor's shape. */
static void shape_text(char out[96], const attend_st_tensor *t) {
    size_t o = 0;
    out[o++] = '[';
    for (int d = 0; d < t->ndim && o < 70; d++) o += (size_t)snprintf(out + o, 96 - o, "%s%lld", d ? "," : "", (long long)t->shape[d]);
    snprintf(out + o, 96 - o, "]");
}

/* One I8 matrix (with its scales) or F16 matrix of the file into qw and the
 * dequantized arena. */
static attend_status read_quant(attend_model *m, int i, const attend_st_file *f, const attend_st_tensor *t,
                                const char *path, attend_error *err) {
    const at_tensor_desc *td = &m->desc[i];
    at_qweight *q = &m->qw[i];
    char got[96];
    shape_text(got, t);
    CHECK(t->ndim == 2 && t->shape[0] == td->shape[0] && t->shape[1] == td->shape[1], err, ATTEND_ERR_FORMAT,
          "%s: tensor '%s' has shape %s, expected [%lld,%lld]", path, td->name, got, (long long)td->shape[0],
          (long long)td->shape[1]);
    float *dst = m->params + td->offset;
    const int rows = q->rows, cols = q->cols;
    if (q->dtype == ATTEND_DTYPE_F16) {
        uint16_t *h = (uint16_t *)(uintptr_t)q->f16;
        memcpy(h, t->data, td->numel * 2);
        for (size_t k = 0; k < td->numel; k++) {
            CHECK((h[k] & 0x7c00u) != 0x7c00u, err, ATTEND_ERR_FORMAT,
                  "%s: tensor '%s' element %zu is not finite (F16 bits 0x%04x)", path, td->name, k, (unsigned)h[k]);
            dst[k] = at_f16_to_float(h[k]);
        }
        return ATTEND_OK;
    }
    char sname[AT_NAME_MAX + 8];
    snprintf(sname, sizeof sname, "%s.scale", td->name);
    const attend_st_tensor *s = attend_st_find(f, sname);
    CHECK(s, err, ATTEND_ERR_FORMAT, "%s: tensor '%s' is I8 but its scales '%s' are missing", path, td->name, sname);
    shape_text(got, s);
    CHECK(s->dtype == ATTEND_DTYPE_F32 && s->ndim == 1 && s->shape[0] == rows, err, ATTEND_ERR_FORMAT,
          "%s: tensor '%s' is %s %s, expected F32 [%d]", path, sname,
          attend_dtype_name(s->dtype) ? attend_dtype_name(s->dtype) : "?", got, rows);
    int8_t *qi = (int8_t *)(uintptr_t)q->i8;
    float *sc = (float *)(uintptr_t)q->scale;
    memcpy(qi, t->data, td->numel);
    memcpy(sc, s->data, (size_t)rows * sizeof(float));
    for (int r = 0; r < rows; r++) {
        CHECK(isfinite(sc[r]) && sc[r] >= 0, err, ATTEND_ERR_FORMAT,
              "%s: tensor '%s' element %d is %g; a scale must be finite and >= 0", path, sname, r, (double)sc[r]);
        const int8_t *qr = qi + (size_t)r * cols;
        for (int k = 0; k < cols; k++) {
            CHECK(sc[r] > 0 || qr[k] == 0, err, ATTEND_ERR_FORMAT,
                  "%s: tensor '%s' element %d is 0 but row %d of '%s' is not zero (column %d is %d)", path, sname, r,
                  r, td->name, k, (int)qr[k]);
            float v = (float)qr[k] * sc[r];
            CHECK(isfinite(v), err, ATTEND_ERR_FORMAT, "%s: tensor '%s' row %d column %d: %d x scale %g overflows",
                  path, td->name, r, k, (int)qr[k], (double)sc[r]);
            dst[(size_t)r * cols + k] = v;
        }
    }
    return ATTEND_OK;
}

#endif

attend_dtype at_model_file_wdtype(const attend_model *m, const attend_st_file *f) {
    for (int i = 0; i < m->ntensors; i++) {
        if (!at_model_quantizable(&m->desc[i])) continue;
        const attend_st_tensor *t = attend_st_find(f, m->desc[i].name);
        if (t && (t->dtype == ATTEND_DTYPE_I8 || t->dtype == ATTEND_DTYPE_F16)) return t->dtype;
    }
    return ATTEND_DTYPE_F32;
}

attend_status at_model_read_weights(attend_model *m, const attend_st_file *f, const char *path, attend_error *err) {
    at_model_params_changed(m);
    /* the storage: that of the first weight matrix stored I8 or F16, if any */
    attend_dtype dtype = ATTEND_DTYPE_F32;
    const char *first = NULL;
    for (int i = 0; i < m->ntensors && !first; i++) {
        if (!at_model_quantizable(&m->desc[i])) continue;
        const attend_st_tensor *t = attend_st_find(f, m->desc[i].name);
        if (t && (t->dtype == ATTEND_DTYPE_I8 || t->dtype == ATTEND_DTYPE_F16)) {
            dtype = t->dtype;
            first = m->desc[i].name;
        }
    }
    if (dtype != ATTEND_DTYPE_I8 && dtype != ATTEND_DTYPE_F16)
        return at_fail(err, ATTEND_ERR_FORMAT, "%s: no weight matrix is stored I8 or F16 (a float file)", path);
#ifdef ATTEND_DOUBLE
    (void)first;
    return at_fail(err, ATTEND_ERR_FORMAT, "%s: quantized weights (tensor '%s' is %s) need the float32 build", path,
                   first, attend_dtype_name(dtype));
#else
    for (int i = 0; i < m->ntensors; i++) { /* every tensor present, each matrix the same dtype, the rest F32 */
        const at_tensor_desc *td = &m->desc[i];
        const attend_st_tensor *t = attend_st_find(f, td->name);
        CHECK(t, err, ATTEND_ERR_FORMAT, "%s: tensor '%s' is missing", path, td->name);
        if (at_model_quantizable(td))
            CHECK(t->dtype == dtype, err, ATTEND_ERR_FORMAT,
                  "%s: tensor '%s' is %s but '%s' is %s: a quantized file stores every weight matrix as %s", path,
                  td->name, attend_dtype_name(t->dtype) ? attend_dtype_name(t->dtype) : "?", first,
                  attend_dtype_name(dtype), attend_dtype_name(dtype));
        else
            CHECK(t->dtype == ATTEND_DTYPE_F32, err, ATTEND_ERR_FORMAT,
                  "%s: tensor '%s' has dtype %s, expected F32 (only weight matrices are stored quantized)", path,
                  td->name, attend_dtype_name(t->dtype) ? attend_dtype_name(t->dtype) : "?");
    }
    /* the float tensors (embeddings, biases) as always, the matrices here */
    TRY(quant_alloc(m, dtype, "attend_model_load", err));
    attend_status st = ATTEND_OK;
    for (int i = 0; i < m->ntensors && !st; i++) {
        const at_tensor_desc *td = &m->desc[i];
        const attend_st_tensor *t = attend_st_find(f, td->name);
        if (at_model_quantizable(td)) {
            st = read_quant(m, i, f, t, path, err);
            continue;
        }
        char got[96];
        shape_text(got, t);
        int same = t->ndim == td->ndim && t->shape[0] == td->shape[0] && (td->ndim < 2 || t->shape[1] == td->shape[1]);
        if (!same) {
            st = td->ndim == 2 ? at_fail(err, ATTEND_ERR_FORMAT, "%s: tensor '%s' has shape %s, expected [%lld,%lld]",
                                         path, td->name, got, (long long)td->shape[0], (long long)td->shape[1])
                               : at_fail(err, ATTEND_ERR_FORMAT, "%s: tensor '%s' has shape %s, expected [%lld]", path,
                                         td->name, got, (long long)td->shape[0]);
            break;
        }
        float *dst = m->params + td->offset;
        memcpy(dst, t->data, td->numel * sizeof(float));
        for (size_t k = 0; k < td->numel && !st; k++)
            if (!isfinite(dst[k]))
                st = at_fail(err, ATTEND_ERR_FORMAT, "%s: tensor '%s' element %zu is not finite", path, td->name, k);
    }
    if (st) quant_drop(m);
    return st;
#endif
}
