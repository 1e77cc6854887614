/*
 * ref_reader.h — the reader of the PyTorch reference files under tests/ref/
 * (*.txt from tools/ref_model.py and tools/make_rnn_ref.py), shared by
 * tests/test_model_ref.c and tests/test_rnn_ref.c. Include after harness.h.
 *
 * Format: "# comment" lines, then per tensor "<name> <ndim> <dims...>" and
 * its values (row-major, as %lf), to the end of the file.
 */
#ifndef ATTEND_TEST_REF_READER_H
#define ATTEND_TEST_REF_READER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define REF_MAX_TENSORS 128 /* a two-layer transformer encoder and decoder: 99 */
#define REF_MAX_DIMS 4

typedef struct {
    char name[64];
    int ndim;
    int dims[REF_MAX_DIMS];
    size_t n;
    double *v; /* [n] */
} ref_tensor;

typedef struct {
    ref_tensor t[REF_MAX_TENSORS];
    int count;
} ref_file;

static inline void ref_free(ref_file *f) {
    for (int i = 0; i < f->count; i++) free(f->t[i].v);
    f->count = 0;
}

/* Reads the file at path into f; on failure a failed check ("cannot load
 * PATH", and the command `script` that writes the file when it is missing),
 * f emptied, and 0. */
static inline int ref_load(ref_file *f, const char *path, const char *script) {
    memset(f, 0, sizeof *f);
    FILE *fp = fopen(path, "r");
    if (!fp) {
        fprintf(stderr, "  cannot open %s (run %s)\n", path, script);
        EXPECT(0, "cannot load %s", path);
        return 0;
    }
    char tok[64];
    int ok = 1;
    while (ok && fscanf(fp, "%63s", tok) == 1) {
        if (tok[0] == '#') {
            if (fscanf(fp, "%*[^\n]") < 0) break;
            continue;
        }
        if (f->count == REF_MAX_TENSORS) { ok = 0; break; }
        ref_tensor *t = &f->t[f->count];
        memcpy(t->name, tok, sizeof t->name);
        if (fscanf(fp, "%d", &t->ndim) != 1 || t->ndim < 1 || t->ndim > REF_MAX_DIMS) { ok = 0; break; }
        t->n = 1;
        for (int d = 0; d < t->ndim; d++) {
            if (fscanf(fp, "%d", &t->dims[d]) != 1 || t->dims[d] < 1) { ok = 0; break; }
            t->n *= (size_t)t->dims[d];
        }
        if (!ok) break;
        t->v = malloc(t->n * sizeof *t->v);
        for (size_t i = 0; i < t->n && ok; i++) ok = fscanf(fp, "%lf", &t->v[i]) == 1;
        f->count++;
    }
    fclose(fp);
    if (!ok) {
        fprintf(stderr, "  %s: malformed near tensor %d\n", path, f->count);
        EXPECT(0, "cannot load %s", path);
        ref_free(f);
    }
    return ok;
}

/* Tensor by name with ndim dims (and, when dims is not NULL, exactly those
 * sizes); NULL and a failed check when absent or shaped otherwise. */
static inline const ref_tensor *ref_get(const ref_file *f, const char *name, int ndim, const int *dims) {
    for (int i = 0; i < f->count; i++) {
        const ref_tensor *t = &f->t[i];
        if (strcmp(t->name, name) != 0) continue;
        if (!dims) {
            EXPECT(t->ndim == ndim, "tensor %s has %d dims, expected %d", name, t->ndim, ndim);
            return t->ndim == ndim ? t : NULL;
        }
        int same = t->ndim == ndim;
        for (int d = 0; same && d < ndim; d++) same = t->dims[d] == dims[d];
        EXPECT(same, "tensor %s has an unexpected shape", name);
        return same ? t : NULL;
    }
    EXPECT(0, "tensor %s missing", name);
    return NULL;
}

#endif
