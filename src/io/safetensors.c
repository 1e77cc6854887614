/*
 * safetensors.c — reading safetensors files (docs/FORMAT.md), and the
 * helpers the writer (safetensors_write.c) shares.
 *
 * File: u64 little-endian header length L, L bytes of JSON header (padded with
 * spaces to a multiple of 8 when we write it), then the data buffer, in which
 * every tensor occupies data_offsets [begin, end), little-endian, C order.
 *
 * Reading: one allocation holds the whole file; the header is parsed with the
 * strict JSON reader (json.h) into a temporary tree and checked; a second
 * allocation (the index) holds the handle, the tensor descriptors, a by-name
 * order for lookups, the metadata pairs and copies of all names and strings.
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

struct attend_st_file {
    unsigned char *buf;                /* [len] the whole file; freed by close */
    size_t len;
    int n;                             /* tensors */
    attend_st_tensor *tensors;         /* [n] in file (header) order */
    const attend_st_tensor **by_name;  /* [n] sorted by name */
    int n_meta;
    attend_st_meta *meta;              /* [n_meta] sorted by key */
};

size_t attend_dtype_size(attend_dtype dtype) {
    switch (dtype) {
    case ATTEND_DTYPE_F32: return 4;
    case ATTEND_DTYPE_F64: return 8;
    case ATTEND_DTYPE_I32: return 4;
    case ATTEND_DTYPE_I64: return 8;
    case ATTEND_DTYPE_U8: return 1;
    case ATTEND_DTYPE_I8: return 1;
    case ATTEND_DTYPE_F16: return 2;
    }
    return 0;
}

const char *attend_dtype_name(attend_dtype dtype) {
    switch (dtype) {
    case ATTEND_DTYPE_F32: return "F32";
    case ATTEND_DTYPE_F64: return "F64";
    case ATTEND_DTYPE_I32: return "I32";
    case ATTEND_DTYPE_I64: return "I64";
    case ATTEND_DTYPE_U8: return "U8";
    case ATTEND_DTYPE_I8: return "I8";
    case ATTEND_DTYPE_F16: return "F16";
    }
    return NULL;
}

/* -------------------------------------------------------------- helpers */

int at_st_host_is_little_endian(void) {
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* Reverses the bytes of every elsize-byte element of p [nbytes]. */
void at_st_swap_elements(unsigned char *p, size_t nbytes, size_t elsize) {
    for (size_t k = 0; k + elsize <= nbytes; k += elsize)
        for (size_t a = 0, b = elsize - 1; a < b; a++, b--) {
            unsigned char t = p[k + a];
            p[k + a] = p[k + b];
            p[k + b] = t;
        }
}

void at_st_error_text(char out[128], int e) {
    if (strerror_r(e, out, 128) != 0) snprintf(out, 128, "error %d", e);
}

/* "[2,3,0]" (truncated with "..." when it would not fit). */
void at_st_format_shape(char out[96], int ndim, const int64_t *shape) {
    size_t o = 0;
    out[o++] = '[';
    for (int k = 0; k < ndim; k++) {
        char num[24];
        int w = snprintf(num, sizeof num, "%s%" PRId64, k ? "," : "", shape[k]);
        if (o + (size_t)w + 5 > 96) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        memcpy(out + o, num, (size_t)w);
        o += (size_t)w;
    }
    out[o++] = ']';
    out[o] = '\0';
}

/* nbytes = elsize * prod(shape) in size_t; 0 on overflow (or a negative dim). */
int at_st_tensor_nbytes(size_t elsize, int ndim, const int64_t *shape, size_t *nbytes) {
    size_t total = elsize;
    for (int k = 0; k < ndim; k++) {
        if (shape[k] < 0 || (uint64_t)shape[k] > SIZE_MAX) return 0;
        if (!at_mul_size(total, (size_t)shape[k], &total)) return 0;
    }
    *nbytes = total;
    return 1;
}

/* ---------------------------------------------------------------- reading */

/* Layout of the index allocation: the handle, then its arrays, then strings. */
static int place(size_t *off, size_t count, size_t elsize, size_t align, size_t *at) {
    size_t o = *off, bytes;
    if (!at_add_size(o, align - 1, &o)) return 0;
    o = o / align * align;
    if (!at_mul_size(count, elsize, &bytes) || !at_add_size(o, bytes, off)) return 0;
    *at = o;
    return 1;
}

static int cmp_tensor_name(const void *a, const void *b) {
    const attend_st_tensor *x = *(const attend_st_tensor *const *)a;
    const attend_st_tensor *y = *(const attend_st_tensor *const *)b;
    return strcmp(x->name, y->name);
}

static int cmp_tensor_offset(const void *a, const void *b) {
    const attend_st_tensor *x = *(const attend_st_tensor *const *)a;
    const attend_st_tensor *y = *(const attend_st_tensor *const *)b;
    const char *xd = x->data, *yd = y->data;
    if (xd != yd) return xd < yd ? -1 : 1;
    return x->nbytes < y->nbytes ? -1 : x->nbytes > y->nbytes;
}

static int cmp_meta_key(const void *a, const void *b) {
    return strcmp(((const attend_st_meta *)a)->key, ((const attend_st_meta *)b)->key);
}

static int key_is(const at_json_node *m, const char *word) {
    size_t wl = strlen(word);
    return m->key_len == wl && memcmp(m->key, word, wl) == 0;
}

/* Copies s [len] (no NUL inside) into the string area. */
static const char *copy_str(char **pool, const char *s, size_t len) {
    char *d = *pool;
    memcpy(d, s, len);
    d[len] = '\0';
    *pool += len + 1;
    return d;
}

/* Checks __metadata__: an object of strings without NUL bytes. */
static attend_status check_metadata(const at_json_node *md, const char *label, size_t *n_meta,
                                    size_t *bytes, attend_error *err) {
    CHECK(md->type == AT_JSON_OBJECT, err, ATTEND_ERR_FORMAT,
          "%s: " ST_METADATA " is a JSON %s, not an object of strings", label,
          at_json_type_name(md->type));
    char snip[AT_JSON_SNIPPET_MAX];
    for (const at_json_node *m = md->first; m; m = m->next) {
        at_json_snippet(snip, m->key, m->key_len);
        CHECK(m->type == AT_JSON_STRING, err, ATTEND_ERR_FORMAT,
              "%s: " ST_METADATA " value of '%s' is a JSON %s, not a string", label, snip,
              at_json_type_name(m->type));
        CHECK(!memchr(m->key, 0, m->key_len) && !memchr(m->str, 0, m->len), err,
              ATTEND_ERR_FORMAT, "%s: " ST_METADATA " key or value of '%s' contains a NUL byte",
              label, snip);
        size_t b = m->key_len + 1 + m->len + 1; /* both are shorter than the header */
        *bytes += b;
    }
    *n_meta = md->count;
    return ATTEND_OK;
}

/* Checks one tensor entry and fills t (name excepted). data_len: buffer size. */
static attend_status check_tensor(const at_json_node *e, const char *label,
                                  const unsigned char *data, size_t data_len,
                                  attend_st_tensor *t, attend_error *err) {
    char snip[AT_JSON_SNIPPET_MAX];
    at_json_snippet(snip, e->key, e->key_len);
    CHECK(e->key_len >= 1, err, ATTEND_ERR_FORMAT, "%s: a tensor has an empty name", label);
    CHECK(!memchr(e->key, 0, e->key_len), err, ATTEND_ERR_FORMAT,
          "%s: tensor '%s': the name contains a NUL byte", label, snip);
    CHECK(e->type == AT_JSON_OBJECT, err, ATTEND_ERR_FORMAT,
          "%s: tensor '%s': entry is a JSON %s, not an object", label, snip,
          at_json_type_name(e->type));
    const at_json_node *dtype = NULL, *shape = NULL, *offs = NULL;
    for (const at_json_node *m = e->first; m; m = m->next) {
        const at_json_node **slot = key_is(m, "dtype")          ? &dtype
                                    : key_is(m, "shape")        ? &shape
                                    : key_is(m, "data_offsets") ? &offs
                                                                : NULL;
        char ksnip[AT_JSON_SNIPPET_MAX];
        at_json_snippet(ksnip, m->key, m->key_len);
        CHECK(slot != NULL, err, ATTEND_ERR_FORMAT, "%s: tensor '%s': unknown key '%s'", label,
              snip, ksnip);
        CHECK(*slot == NULL, err, ATTEND_ERR_FORMAT, "%s: tensor '%s': key '%s' appears twice",
              label, snip, ksnip);
        *slot = m;
    }
    CHECK(dtype && shape && offs, err, ATTEND_ERR_FORMAT, "%s: tensor '%s': missing \"%s\"",
          label, snip, !dtype ? "dtype" : !shape ? "shape" : "data_offsets");

    CHECK(dtype->type == AT_JSON_STRING, err, ATTEND_ERR_FORMAT,
          "%s: tensor '%s': dtype is a JSON %s, not a string", label, snip,
          at_json_type_name(dtype->type));
    int found = 0;
    for (int d = ATTEND_DTYPE_F32; d <= ATTEND_DTYPE_F16 && !found; d++)
        if (strcmp(dtype->str, attend_dtype_name((attend_dtype)d)) == 0 &&
            dtype->len == strlen(dtype->str)) {
            t->dtype = (attend_dtype)d;
            found = 1;
        }
    char dsnip[AT_JSON_SNIPPET_MAX];
    at_json_snippet(dsnip, dtype->str, dtype->len);
    CHECK(found, err, ATTEND_ERR_FORMAT,
          "%s: tensor '%s': unknown dtype '%s' (known: F32 F64 I32 I64 U8 I8 F16)", label, snip, dsnip);

    CHECK(shape->type == AT_JSON_ARRAY, err, ATTEND_ERR_FORMAT,
          "%s: tensor '%s': shape is a JSON %s, not an array", label, snip,
          at_json_type_name(shape->type));
    CHECK(shape->count <= ATTEND_MAX_DIMS, err, ATTEND_ERR_FORMAT,
          "%s: tensor '%s': shape has %zu dims, more than %d", label, snip, shape->count,
          ATTEND_MAX_DIMS);
    t->ndim = (int)shape->count;
    int d = 0;
    for (const at_json_node *v = shape->first; v; v = v->next, d++) {
        CHECK(v->type == AT_JSON_NUMBER && v->is_int && v->i >= 0, err, ATTEND_ERR_FORMAT,
              "%s: tensor '%s': shape[%d] is not a non-negative integer", label, snip, d);
        t->shape[d] = v->i;
    }

    const at_json_node *b = at_json_at(offs, 0), *en = at_json_at(offs, 1);
    CHECK(offs->type == AT_JSON_ARRAY && offs->count == 2 && b->type == AT_JSON_NUMBER &&
              b->is_int && b->i >= 0 && en->type == AT_JSON_NUMBER && en->is_int && en->i >= 0,
          err, ATTEND_ERR_FORMAT,
          "%s: tensor '%s': data_offsets is not [begin, end] of two non-negative integers", label,
          snip);
    uint64_t begin = (uint64_t)b->i, end = (uint64_t)en->i;
    CHECK(begin <= end, err, ATTEND_ERR_FORMAT,
          "%s: tensor '%s': data_offsets begin %" PRIu64 " > end %" PRIu64, label, snip, begin,
          end);
    CHECK(end <= (uint64_t)data_len, err, ATTEND_ERR_FORMAT,
          "%s: tensor '%s': data_offsets end %" PRIu64 " is beyond the %zu-byte data buffer",
          label, snip, end, data_len);

    char shp[96];
    at_st_format_shape(shp, t->ndim, t->shape);
    const char *dname = attend_dtype_name(t->dtype);
    CHECK(at_st_tensor_nbytes(attend_dtype_size(t->dtype), t->ndim, t->shape, &t->nbytes), err,
          ATTEND_ERR_FORMAT, "%s: tensor '%s': shape %s of %s overflows a size_t", label, snip,
          shp, dname);
    CHECK(t->nbytes == (size_t)(end - begin), err, ATTEND_ERR_FORMAT,
          "%s: tensor '%s': data_offsets span %" PRIu64 " bytes, but shape %s of %s needs %zu",
          label, snip, end - begin, shp, dname, t->nbytes);
    t->data = data + begin;
    return ATTEND_OK;
}

/* Tensors must tile the data buffer: sorted by offset, each starts where the
 * previous one ended, and the last one ends at the end of the buffer. */
static attend_status check_coverage(const attend_st_tensor **order, int n,
                                    const unsigned char *data, size_t data_len, const char *label,
                                    attend_error *err) {
    qsort(order, (size_t)n, sizeof *order, cmp_tensor_offset);
    size_t expected = 0;
    const attend_st_tensor *prev = NULL; /* the tensor that ends at `expected` */
    char s1[AT_JSON_SNIPPET_MAX], s2[AT_JSON_SNIPPET_MAX];
    for (int i = 0; i < n; i++) {
        const attend_st_tensor *t = order[i];
        size_t begin = (size_t)((const unsigned char *)t->data - data);
        at_json_snippet(s2, t->name, strlen(t->name));
        if (begin < expected) {
            at_json_snippet(s1, prev->name, strlen(prev->name));
            size_t pb = (size_t)((const unsigned char *)prev->data - data);
            return at_fail(err, ATTEND_ERR_FORMAT,
                           "%s: tensors '%s' [%zu, %zu) and '%s' [%zu, %zu) overlap", label, s1,
                           pb, expected, s2, begin, begin + t->nbytes);
        }
        CHECK(begin == expected, err, ATTEND_ERR_FORMAT,
              "%s: gap of %zu bytes before tensor '%s' (data bytes [%zu, %zu) belong to no tensor)",
              label, begin - expected, s2, expected, begin);
        expected = begin + t->nbytes;
        if (t->nbytes > 0) prev = t;
    }
    CHECK(expected == data_len, err, ATTEND_ERR_FORMAT,
          "%s: the last %zu bytes of the %zu-byte data buffer belong to no tensor", label,
          data_len - expected, data_len);
    return ATTEND_OK;
}

/* Builds the index for the parsed header root; fills *out. */
static attend_status build_index(attend_st_file **out, const at_json_node *root,
                                 unsigned char *buf, size_t len, size_t data_start,
                                 const char *label, attend_error *err) {
    const at_json_node *md = NULL;
    size_t n = 0, n_meta = 0, bytes = 0;
    for (const at_json_node *m = root->first; m; m = m->next) {
        if (key_is(m, ST_METADATA)) {
            CHECK(md == NULL, err, ATTEND_ERR_FORMAT, "%s: " ST_METADATA " appears twice", label);
            md = m;
            TRY(check_metadata(m, label, &n_meta, &bytes, err));
        } else {
            n++;
            bytes += m->key_len + 1; /* names are shorter than the header */
        }
    }
    CHECK(n <= INT_MAX && n_meta <= INT_MAX, err, ATTEND_ERR_FORMAT, "%s: too many tensors",
          label);

    size_t size = 0, at_tensors, at_order, at_meta, at_str, at_self;
    CHECK(place(&size, 1, sizeof(attend_st_file), _Alignof(attend_st_file), &at_self) &&
              place(&size, n, sizeof(attend_st_tensor), _Alignof(attend_st_tensor),
                    &at_tensors) &&
              place(&size, n, sizeof(attend_st_tensor *), _Alignof(attend_st_tensor *),
                    &at_order) &&
              place(&size, n_meta, sizeof(attend_st_meta), _Alignof(attend_st_meta), &at_meta) &&
              place(&size, bytes, 1, 1, &at_str),
          err, ATTEND_ERR_ALLOC, "%s: the index size overflows a size_t", label);
    char *block = malloc(size);
    CHECK(block != NULL, err, ATTEND_ERR_ALLOC, "%s: out of memory for a %zu-byte index", label,
          size);
    attend_st_file *f = (attend_st_file *)(void *)(block + at_self);
    f->buf = buf;
    f->len = len;
    f->n = (int)n;
    f->tensors = (attend_st_tensor *)(void *)(block + at_tensors);
    f->by_name = (const attend_st_tensor **)(void *)(block + at_order);
    f->n_meta = (int)n_meta;
    f->meta = (attend_st_meta *)(void *)(block + at_meta);
    char *pool = block + at_str;

    const unsigned char *data = buf + data_start;
    size_t data_len = len - data_start;
    attend_status st = ATTEND_OK;
    size_t i = 0;
    for (const at_json_node *m = root->first; m && st == ATTEND_OK; m = m->next) {
        if (m == md) continue;
        attend_st_tensor *t = &f->tensors[i];
        memset(t, 0, sizeof *t);
        st = check_tensor(m, label, data, data_len, t, err);
        if (st == ATTEND_OK) {
            t->name = copy_str(&pool, m->key, m->key_len);
            f->by_name[i] = t;
            i++;
        }
    }
    /* Names first (two entries with one name usually overlap as well), then the
     * layout by offset, then back to name order for attend_st_find. */
    if (st == ATTEND_OK) {
        qsort(f->by_name, n, sizeof *f->by_name, cmp_tensor_name);
        for (size_t k = 1; k < n && st == ATTEND_OK; k++)
            if (strcmp(f->by_name[k - 1]->name, f->by_name[k]->name) == 0) {
                char snip[AT_JSON_SNIPPET_MAX];
                at_json_snippet(snip, f->by_name[k]->name, strlen(f->by_name[k]->name));
                st = at_fail(err, ATTEND_ERR_FORMAT, "%s: duplicate tensor name '%s'", label, snip);
            }
    }
    if (st == ATTEND_OK) st = check_coverage(f->by_name, f->n, data, data_len, label, err);
    if (st == ATTEND_OK) qsort(f->by_name, n, sizeof *f->by_name, cmp_tensor_name);
    if (st == ATTEND_OK && md) {
        size_t k = 0;
        for (const at_json_node *m = md->first; m; m = m->next, k++) {
            f->meta[k].key = copy_str(&pool, m->key, m->key_len);
            f->meta[k].value = copy_str(&pool, m->str, m->len);
        }
        qsort(f->meta, n_meta, sizeof *f->meta, cmp_meta_key);
        for (k = 1; k < n_meta && st == ATTEND_OK; k++)
            if (strcmp(f->meta[k - 1].key, f->meta[k].key) == 0) {
                char snip[AT_JSON_SNIPPET_MAX];
                at_json_snippet(snip, f->meta[k].key, strlen(f->meta[k].key));
                st = at_fail(err, ATTEND_ERR_FORMAT, "%s: duplicate " ST_METADATA " key '%s'",
                             label, snip);
            }
    }
    if (st != ATTEND_OK) {
        free(block);
        return st;
    }
    if (!at_st_host_is_little_endian())
        for (int k = 0; k < f->n; k++)
            at_st_swap_elements((unsigned char *)(uintptr_t)f->tensors[k].data, f->tensors[k].nbytes,
                          attend_dtype_size(f->tensors[k].dtype));
    *out = f;
    return ATTEND_OK;
}

/* Parses buf [len] (taking ownership: freed on error, kept by the handle). */
static attend_status parse_owned(attend_st_file **out, unsigned char *buf, size_t len,
                                 const char *label, attend_error *err) {
    attend_status st = ATTEND_OK;
    uint64_t hl = 0;
    if (len < 8) {
        st = at_fail(err, ATTEND_ERR_FORMAT,
                     "%s: %zu bytes, shorter than the 8-byte header length field", label, len);
    } else {
        for (int k = 7; k >= 0; k--) hl = hl << 8 | buf[k];
        if (hl == 0)
            st = at_fail(err, ATTEND_ERR_FORMAT, "%s: header length is 0", label);
        else if (hl > ST_MAX_HEADER)
            st = at_fail(err, ATTEND_ERR_FORMAT,
                         "%s: header length %" PRIu64 " exceeds the limit of %u bytes", label, hl,
                         ST_MAX_HEADER);
        else if (hl > (uint64_t)(len - 8))
            st = at_fail(err, ATTEND_ERR_FORMAT,
                         "%s: header length %" PRIu64
                         " exceeds the %zu bytes after the length field (file truncated?)",
                         label, hl, len - 8);
    }
    at_json_doc *doc = NULL;
    if (st == ATTEND_OK) {
        at_json_limits lim = {ST_JSON_NODES, ST_JSON_DEPTH, 1};
        st = at_json_parse(&doc, (const char *)buf + 8, (size_t)hl, &lim, NULL, err);
        if (st != ATTEND_OK && st != ATTEND_ERR_ALLOC) {
            char why[ATTEND_ERROR_MSG_MAX];
            memcpy(why, err ? err->msg : "", err ? sizeof why : 1);
            st = at_fail(err, ATTEND_ERR_FORMAT, "%s: header JSON: %s of the header", label, why);
        }
    }
    if (st == ATTEND_OK) {
        const at_json_node *root = at_json_root(doc);
        if (root->type != AT_JSON_OBJECT)
            st = at_fail(err, ATTEND_ERR_FORMAT, "%s: header is a JSON %s, not an object", label,
                         at_json_type_name(root->type));
        else
            st = build_index(out, root, buf, len, 8 + (size_t)hl, label, err);
    }
    at_json_free(doc);
    if (st != ATTEND_OK) {
        free(buf);
        return st;
    }
    return at_ok(err);
}

attend_status attend_st_parse(attend_st_file **out, const void *bytes, size_t len,
                              const char *label, attend_error *err) {
    CHECK(out != NULL, err, ATTEND_ERR_NULL, "attend_st_parse: out is NULL");
    *out = NULL;
    if (!label) label = "<memory>";
    CHECK(bytes != NULL || len == 0, err, ATTEND_ERR_NULL, "%s: bytes is NULL", label);
    unsigned char *buf = malloc(len ? len : 1);
    CHECK(buf != NULL, err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes", label, len);
    if (len) memcpy(buf, bytes, len);
    return parse_owned(out, buf, len, label, err);
}

attend_status attend_st_open(attend_st_file **out, const char *path, size_t max_bytes,
                             attend_error *err) {
    CHECK(out != NULL, err, ATTEND_ERR_NULL, "attend_st_open: out is NULL");
    *out = NULL;
    CHECK(path != NULL, err, ATTEND_ERR_NULL, "attend_st_open: path is NULL");
    if (max_bytes == 0) max_bytes = ST_DEFAULT_MAX_BYTES;
    char why[128];
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; anything but a
     * regular file is refused at once, before a byte is read */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        at_st_error_text(why, errno);
        return at_fail(err, ATTEND_ERR_IO, "%s: cannot open: %s", path, why);
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        at_st_error_text(why, errno);
        close(fd);
        return at_fail(err, ATTEND_ERR_IO, "%s: cannot stat: %s", path, why);
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return at_fail(err, ATTEND_ERR_IO, "%s: %s, not a regular file: a model or checkpoint must be a file",
                       path, S_ISDIR(sb.st_mode)    ? "a directory"
                             : S_ISFIFO(sb.st_mode) ? "a FIFO"
                             : S_ISCHR(sb.st_mode)  ? "a character device"
                             : S_ISBLK(sb.st_mode)  ? "a block device"
                             : S_ISSOCK(sb.st_mode) ? "a socket"
                                                    : "not a file");
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *fp = fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 ? fdopen(fd, "rb") : NULL;
    if (!fp) {
        at_st_error_text(why, errno);
        close(fd);
        return at_fail(err, ATTEND_ERR_IO, "%s: cannot open: %s", path, why);
    }
    if ((uintmax_t)sb.st_size > (uintmax_t)max_bytes) {
        fclose(fp);
        return at_fail(err, ATTEND_ERR_CAPACITY, "%s: %jd bytes exceeds the limit of %zu bytes",
                       path, (intmax_t)sb.st_size, max_bytes);
    }
    size_t len = (size_t)sb.st_size;
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf) {
        fclose(fp);
        return at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes", path, len);
    }
    size_t got = fread(buf, 1, len, fp);
    int e = errno, bad = ferror(fp), grew = got == len && getc(fp) != EOF;
    fclose(fp);
    if (got != len || bad || grew) {
        free(buf);
        if (bad) {
            at_st_error_text(why, e);
            return at_fail(err, ATTEND_ERR_IO, "%s: read failed: %s", path, why);
        }
        return at_fail(err, ATTEND_ERR_IO, "%s: the file changed size while being read", path);
    }
    return parse_owned(out, buf, len, path, err);
}

void attend_st_close(attend_st_file *f) {
    if (!f) return;
    free(f->buf);
    free(f); /* the handle is at the start of the index block */
}

int attend_st_count(const attend_st_file *f) { return f ? f->n : 0; }

const attend_st_tensor *attend_st_get(const attend_st_file *f, int i) {
    return f && i >= 0 && i < f->n ? &f->tensors[i] : NULL;
}

const attend_st_tensor *attend_st_find(const attend_st_file *f, const char *name) {
    if (!f || !name) return NULL;
    size_t lo = 0, hi = (size_t)f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(f->by_name[mid]->name, name);
        if (c == 0) return f->by_name[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

const char *attend_st_metadata(const attend_st_file *f, const char *key) {
    if (!f || !key) return NULL;
    size_t lo = 0, hi = (size_t)f->n_meta;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(f->meta[mid].key, key);
        if (c == 0) return f->meta[mid].value;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

