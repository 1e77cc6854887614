/*
 * safetensors_write.c — writing safetensors files (docs/FORMAT.md; the file
 * layout is described at the top of safetensors.c).
 *
 * Everything is validated and the header is sized and built in memory before
 * any file is created; then the file goes through the one atomic writer
 * (outfile.c: a temporary created with O_EXCL|O_NOFOLLOW beside path, fsync,
 * rename, fsync of the directory; an existing path that is not a regular
 * file is refused, since renaming over /dev/null would replace the device).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "io/json.h"
#include "io/safetensors_internal.h"

/* ---------------------------------------------------------------- writing */

static int cmp_str_ptr(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Two-pass emitter: with buf == NULL it only counts bytes. */
typedef struct {
    char *buf;
    size_t n;
    int overflow;
} emitter;

static void emit(emitter *e, const char *s, size_t len) {
    size_t n;
    if (e->overflow || !at_add_size(e->n, len, &n)) {
        e->overflow = 1;
        return;
    }
    if (e->buf) memcpy(e->buf + e->n, s, len);
    e->n = n;
}

static void emit_cstr(emitter *e, const char *s) { emit(e, s, strlen(s)); }

static void emit_json_string(emitter *e, const char *s) {
    size_t len = strlen(s), size = at_json_escaped_size(s, len), n;
    if (e->overflow || size == SIZE_MAX || !at_add_size(e->n, size, &n)) {
        e->overflow = 1;
        return;
    }
    if (e->buf) at_json_escape(e->buf + e->n, s, len);
    e->n = n;
}

static void emit_u64(emitter *e, uint64_t v) {
    char num[24];
    int w = snprintf(num, sizeof num, "%" PRIu64, v);
    emit(e, num, (size_t)w);
}

static void emit_header(emitter *e, const attend_st_entry *entries, int n_entries,
                        const attend_st_meta *meta, int n_meta, const size_t *nbytes) {
    emit_cstr(e, "{");
    if (n_meta > 0) {
        emit_cstr(e, "\"" ST_METADATA "\":{");
        for (int k = 0; k < n_meta; k++) {
            if (k) emit_cstr(e, ",");
            emit_json_string(e, meta[k].key);
            emit_cstr(e, ":");
            emit_json_string(e, meta[k].value);
        }
        emit_cstr(e, "}");
    }
    uint64_t offset = 0;
    for (int k = 0; k < n_entries; k++) {
        const attend_st_entry *t = &entries[k];
        if (k || n_meta > 0) emit_cstr(e, ",");
        emit_json_string(e, t->name);
        emit_cstr(e, ":{\"dtype\":\"");
        emit_cstr(e, attend_dtype_name(t->dtype));
        emit_cstr(e, "\",\"shape\":[");
        for (int d = 0; d < t->ndim; d++) {
            if (d) emit_cstr(e, ",");
            emit_u64(e, (uint64_t)t->shape[d]);
        }
        emit_cstr(e, "],\"data_offsets\":[");
        emit_u64(e, offset);
        emit_cstr(e, ",");
        offset += nbytes[k]; /* the caller checked that the total fits */
        emit_u64(e, offset);
        emit_cstr(e, "]}");
    }
    emit_cstr(e, "}");
}

/* Checks every entry and metadata pair; fills nbytes [n_entries] and *total. */
static attend_status check_entries(const attend_st_entry *entries, int n_entries,
                                   const attend_st_meta *meta, int n_meta, size_t *nbytes,
                                   size_t *total, attend_error *err) {
    char snip[AT_JSON_SNIPPET_MAX];
    *total = 0;
    for (int i = 0; i < n_entries; i++) {
        const attend_st_entry *t = &entries[i];
        CHECK(t->name != NULL, err, ATTEND_ERR_NULL, "attend_st_write: entry %d: name is NULL", i);
        size_t nl = strlen(t->name), bad;
        at_json_snippet(snip, t->name, nl);
        CHECK(nl >= 1, err, ATTEND_ERR_ARG, "attend_st_write: entry %d: empty tensor name", i);
        CHECK(nl <= ST_MAX_NAME, err, ATTEND_ERR_ARG,
              "attend_st_write: entry %d: tensor name '%s' is %zu bytes, more than %d", i, snip,
              nl, ST_MAX_NAME);
        CHECK(at_json_utf8_valid(t->name, nl, &bad), err, ATTEND_ERR_ARG,
              "attend_st_write: entry %d: tensor name '%s' is not valid UTF-8 (byte %zu)", i,
              snip, bad);
        CHECK(strcmp(t->name, ST_METADATA) != 0, err, ATTEND_ERR_ARG,
              "attend_st_write: entry %d: the name '" ST_METADATA "' is reserved", i);
        size_t elsize = attend_dtype_size(t->dtype);
        CHECK(elsize != 0, err, ATTEND_ERR_ARG, "attend_st_write: tensor '%s': unknown dtype %d",
              snip, (int)t->dtype);
        CHECK(t->ndim >= 0 && t->ndim <= ATTEND_MAX_DIMS, err, ATTEND_ERR_ARG,
              "attend_st_write: tensor '%s': ndim %d is outside 0..%d", snip, t->ndim,
              ATTEND_MAX_DIMS);
        for (int d = 0; d < t->ndim; d++)
            CHECK(t->shape[d] >= 0, err, ATTEND_ERR_ARG,
                  "attend_st_write: tensor '%s': shape[%d] is %" PRId64 ", negative", snip, d,
                  t->shape[d]);
        char shp[96];
        at_st_format_shape(shp, t->ndim, t->shape);
        CHECK(at_st_tensor_nbytes(elsize, t->ndim, t->shape, &nbytes[i]), err, ATTEND_ERR_ARG,
              "attend_st_write: tensor '%s': shape %s of %s overflows a size_t", snip, shp,
              attend_dtype_name(t->dtype));
        CHECK(t->data != NULL || nbytes[i] == 0, err, ATTEND_ERR_NULL,
              "attend_st_write: tensor '%s': data is NULL for %zu bytes", snip, nbytes[i]);
        CHECK(at_add_size(*total, nbytes[i], total), err, ATTEND_ERR_ARG,
              "attend_st_write: tensor '%s': total data size overflows a size_t", snip);
    }
    for (int i = 0; i < n_meta; i++) {
        const attend_st_meta *m = &meta[i];
        CHECK(m->key != NULL && m->value != NULL, err, ATTEND_ERR_NULL,
              "attend_st_write: metadata %d: key or value is NULL", i);
        size_t bad;
        at_json_snippet(snip, m->key, strlen(m->key));
        CHECK(at_json_utf8_valid(m->key, strlen(m->key), &bad), err, ATTEND_ERR_ARG,
              "attend_st_write: metadata key '%s' is not valid UTF-8 (byte %zu)", snip, bad);
        CHECK(at_json_utf8_valid(m->value, strlen(m->value), &bad), err, ATTEND_ERR_ARG,
              "attend_st_write: metadata value of '%s' is not valid UTF-8 (byte %zu)", snip, bad);
    }
    return ATTEND_OK;
}

/* Names (tensor names or metadata keys) must be unique: sorts a copy of the
 * pointers and compares neighbours. */
static attend_status check_unique(const char **names, int n, const char *what,
                                  attend_error *err) {
    qsort(names, (size_t)n, sizeof *names, cmp_str_ptr);
    for (int i = 1; i < n; i++)
        if (strcmp(names[i - 1], names[i]) == 0) {
            char snip[AT_JSON_SNIPPET_MAX];
            at_json_snippet(snip, names[i], strlen(names[i]));
            return at_fail(err, ATTEND_ERR_ARG, "attend_st_write: duplicate %s '%s'", what, snip);
        }
    return ATTEND_OK;
}

static attend_status validate_write(const attend_st_entry *entries, int n_entries,
                                    const attend_st_meta *meta, int n_meta, size_t *nbytes,
                                    size_t *total, attend_error *err) {
    TRY(check_entries(entries, n_entries, meta, n_meta, nbytes, total, err));
    int most = n_entries > n_meta ? n_entries : n_meta;
    if (most < 2) return ATTEND_OK;
    const char **names = malloc((size_t)most * sizeof *names);
    CHECK(names != NULL, err, ATTEND_ERR_ALLOC, "attend_st_write: out of memory");
    for (int i = 0; i < n_entries; i++) names[i] = entries[i].name;
    attend_status st = check_unique(names, n_entries, "tensor name", err);
    if (st == ATTEND_OK) {
        for (int i = 0; i < n_meta; i++) names[i] = meta[i].key;
        st = check_unique(names, n_meta, "metadata key", err);
    }
    free(names);
    return st;
}

/* Writes p [n] to f in little-endian order (elements of elsize bytes). */
static attend_status write_le(attend_outfile *f, const unsigned char *p, size_t n, size_t elsize,
                              attend_error *err) {
    if (n == 0) return ATTEND_OK; /* p may be NULL then */
    if (elsize == 1 || at_st_host_is_little_endian()) return attend_outfile_write(f, p, n, err);
    unsigned char chunk[4096];
    while (n > 0) {
        size_t m = n < sizeof chunk ? n : sizeof chunk;
        memcpy(chunk, p, m);
        at_st_swap_elements(chunk, m, elsize);
        TRY(attend_outfile_write(f, chunk, m, err));
        p += m;
        n -= m;
    }
    return ATTEND_OK;
}

/* The first bytes of the file: the length field and the header padded with
 * spaces to a multiple of 8, sized first, then built in one allocation. */
static attend_status build_head(unsigned char **out, size_t *out_len, const char *path,
                                const attend_st_entry *entries, int n_entries,
                                const attend_st_meta *meta, int n_meta, const size_t *nbytes,
                                size_t total, attend_error *err) {
    emitter e = {NULL, 0, 0};
    emit_header(&e, entries, n_entries, meta, n_meta, nbytes);
    CHECK(!e.overflow && e.n <= ST_MAX_HEADER, err, ATTEND_ERR_ARG,
          "attend_st_write: '%s': the JSON header would exceed %u bytes", path, ST_MAX_HEADER);
    size_t padded = (e.n + 7) / 8 * 8, head_len = 8 + padded, file_len;
    CHECK(padded <= ST_MAX_HEADER && at_add_size(head_len, total, &file_len), err,
          ATTEND_ERR_ARG, "attend_st_write: '%s': the file size overflows a size_t", path);
    unsigned char *head = malloc(head_len);
    CHECK(head != NULL, err, ATTEND_ERR_ALLOC, "attend_st_write: out of memory for %zu bytes",
          head_len);
    for (int k = 0; k < 8; k++) head[k] = (unsigned char)((uint64_t)padded >> (8 * k));
    e.buf = (char *)head + 8;
    e.n = 0;
    emit_header(&e, entries, n_entries, meta, n_meta, nbytes);
    memset(head + 8 + e.n, ' ', padded - e.n);
    *out = head;
    *out_len = head_len;
    return ATTEND_OK;
}

/* Writes the file through the one atomic writer (outfile.c): a temporary
 * beside path, fsync, rename, fsync of the directory; its messages are
 * prefixed with the function's name. */
static attend_status write_atomic(const char *path, const unsigned char *head, size_t head_len,
                                  const attend_st_entry *entries, int n_entries,
                                  const size_t *nbytes, attend_error *err) {
    attend_error e = {0};
    attend_outfile *f = NULL;
    attend_status st = attend_outfile_open(&f, path, 0, &e);
    if (!st) st = attend_outfile_write(f, head, head_len, &e);
    for (int k = 0; !st && k < n_entries; k++)
        st = write_le(f, entries[k].data, nbytes[k], attend_dtype_size(entries[k].dtype), &e);
    if (st) attend_outfile_abort(f);
    else st = attend_outfile_commit(f, &e);
    return st ? at_fail(err, st, "attend_st_write: %s", e.msg) : ATTEND_OK;
}

attend_status attend_st_write(const char *path, const attend_st_entry *entries, int n_entries,
                              const attend_st_meta *meta, int n_meta, attend_error *err) {
    CHECK(path != NULL, err, ATTEND_ERR_NULL, "attend_st_write: path is NULL");
    CHECK(n_entries >= 0 && n_meta >= 0, err, ATTEND_ERR_ARG,
          "attend_st_write: n_entries %d and n_meta %d must be >= 0", n_entries, n_meta);
    CHECK(entries != NULL || n_entries == 0, err, ATTEND_ERR_NULL,
          "attend_st_write: entries is NULL for %d entries", n_entries);
    CHECK(meta != NULL || n_meta == 0, err, ATTEND_ERR_NULL,
          "attend_st_write: meta is NULL for %d pairs", n_meta);

    size_t *nbytes = malloc((size_t)(n_entries ? n_entries : 1) * sizeof *nbytes);
    CHECK(nbytes != NULL, err, ATTEND_ERR_ALLOC, "attend_st_write: out of memory");
    size_t total = 0, head_len = 0;
    unsigned char *head = NULL;
    attend_status st = validate_write(entries, n_entries, meta, n_meta, nbytes, &total, err);
    if (st == ATTEND_OK)
        st = build_head(&head, &head_len, path, entries, n_entries, meta, n_meta, nbytes, total,
                        err);
    /* Nothing touched the file system before this point. */
    if (st == ATTEND_OK) st = write_atomic(path, head, head_len, entries, n_entries, nbytes, err);
    free(head);
    free(nbytes);
    return st == ATTEND_OK ? at_ok(err) : st;
}

