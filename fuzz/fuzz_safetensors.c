/*
 * fuzz_safetensors.c — the safetensors reader (attend_st_parse, and
 * attend_st_open on the same bytes from a file). Invariants beyond "no crash":
 * a rejected file leaves *out NULL with a message naming the label; an
 * accepted one is self-consistent (each tensor's byte count is its dtype size
 * times its shape, its bytes lie inside the file and are readable, every name
 * and metadata key is found again by lookup), both entry points agree, and
 * writing the accepted tensors back and reading them again gives the same
 * tensors.
 */
#include "fuzz.h"

#include "attend.h"

static void check_accepted(const attend_st_file *f, const uint8_t *data, size_t size) {
    int n = attend_st_count(f);
    FUZZ_CHECK(n >= 0, "count %d", n);
    for (int i = 0; i < n; i++) {
        const attend_st_tensor *t = attend_st_get(f, i);
        FUZZ_CHECK(t && t->name && t->name[0], "tensor %d", i);
        FUZZ_CHECK(t->ndim >= 0 && t->ndim <= ATTEND_MAX_DIMS, "ndim %d", t->ndim);
        size_t want = attend_dtype_size(t->dtype);
        FUZZ_CHECK(want > 0, "dtype %d", (int)t->dtype);
        for (int d = 0; d < t->ndim; d++) {
            FUZZ_CHECK(t->shape[d] >= 0, "negative dim");
            want *= (size_t)t->shape[d]; /* accepted: cannot overflow (nbytes <= size) */
        }
        FUZZ_CHECK(want == t->nbytes, "'%s': nbytes %zu, shape says %zu", t->name, t->nbytes, want);
        FUZZ_CHECK(t->nbytes <= size, "'%s': %zu bytes in a %zu-byte file", t->name, t->nbytes, size);
        /* read every byte (ASan/valgrind catch reads outside the buffer), by memcpy
         * as callers must: data need not be aligned for the dtype */
        volatile unsigned char sink = 0;
        const unsigned char *p = t->data;
        for (size_t b = 0; b < t->nbytes; b++) sink ^= p[b];
        (void)sink;
        FUZZ_CHECK(attend_st_find(f, t->name) == t, "'%s' is not found by name", t->name);
    }
    (void)data;
}

/* Writes the tensors and metadata keys we know back to a file and reads them again. */
static void check_rewrite(const attend_st_file *f) {
    int n = attend_st_count(f);
    if (n > 64) return;
    attend_st_entry e[64];
    for (int i = 0; i < n; i++) {
        const attend_st_tensor *t = attend_st_get(f, i);
        memset(&e[i], 0, sizeof e[i]);
        e[i].name = t->name;
        e[i].dtype = t->dtype;
        e[i].ndim = t->ndim;
        memcpy(e[i].shape, t->shape, sizeof t->shape);
        e[i].data = t->data;
    }
    char path[600];
    snprintf(path, sizeof path, "%s.rewrite", fuzz_write_file((const uint8_t *)"", 0));
    attend_error err;
    attend_status st = attend_st_write(path, e, n, NULL, 0, &err);
    if (st != ATTEND_OK) {
        /* the writer is stricter (names of 1..255 bytes): only ARG is acceptable */
        FUZZ_CHECK(st == ATTEND_ERR_ARG, "rewrite: %s", err.msg);
        return;
    }
    attend_st_file *g = NULL;
    FUZZ_CHECK(attend_st_open(&g, path, 0, &err) == ATTEND_OK, "re-read: %s", err.msg);
    FUZZ_CHECK(attend_st_count(g) == n, "re-read count");
    for (int i = 0; i < n; i++) {
        const attend_st_tensor *a = attend_st_get(f, i), *b = attend_st_get(g, i);
        FUZZ_CHECK(!strcmp(a->name, b->name) && a->dtype == b->dtype && a->ndim == b->ndim &&
                       a->nbytes == b->nbytes && !memcmp(a->shape, b->shape, sizeof a->shape) &&
                       (a->nbytes == 0 || !memcmp(a->data, b->data, a->nbytes)),
                   "tensor %d differs after a rewrite", i);
    }
    attend_st_close(g);
    remove(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    attend_st_file *f = (attend_st_file *)(uintptr_t)1; /* must be reset */
    attend_error err;
    attend_status st = attend_st_parse(&f, data, size, "fuzz", &err);
    if (st != ATTEND_OK) {
        FUZZ_CHECK(f == NULL, "rejected, but *out was set");
        FUZZ_CHECK(st == ATTEND_ERR_FORMAT || st == ATTEND_ERR_ALLOC, "status %s", attend_status_name(st));
        fuzz_check_message(err.msg, "fuzz: ");
    } else {
        check_accepted(f, data, size);
    }
    /* the file path agrees with the in-memory one */
    const char *path = fuzz_write_file(data, size);
    attend_st_file *g = NULL;
    attend_error err2;
    attend_status st2 = attend_st_open(&g, path, 0, &err2);
    FUZZ_CHECK(st2 == st, "open says %s, parse says %s", attend_status_name(st2), attend_status_name(st));
    if (st != ATTEND_OK) {
        /* the same message, with the path instead of the label */
        const char *a = err.msg + 4, *b = err2.msg + strlen(path);
        size_t k = strlen(a) < strlen(b) ? strlen(a) : strlen(b); /* either may be cut at 255 */
        FUZZ_CHECK(!strncmp(err2.msg, path, strlen(path)) && !strncmp(a, b, k), "messages differ: '%s' vs '%s'",
                   err.msg, err2.msg);
    } else {
        FUZZ_CHECK(attend_st_count(g) == attend_st_count(f), "counts differ");
        check_rewrite(f);
    }
    attend_st_close(g);
    attend_st_close(f);
    return 0;
}
