/*
 * json.c — the strict JSON reader and string escaper declared in json.h.
 *
 * The reader is a recursive descent over the input (recursion depth bounded by
 * max_depth). Nodes go into one growing array in document order, linked by
 * index while parsing (the array may move) and by pointer once it is complete.
 * Decoded strings go into one pool allocated up front: a decoded string plus
 * its NUL is never longer than its quoted source, so len + 1 bytes suffice.
 */
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "io/json.h"
#include "io/text.h"

#define AT_JSON_DEFAULT_NODES ((size_t)1 << 20)
#define AT_JSON_DEFAULT_DEPTH 64
#define AT_JSON_MAX_DEPTH 1024

struct at_json_doc {
    at_json_node *nodes; /* [n] in document order; nodes[0] is the root */
    size_t n;
    char *pool;          /* decoded strings */
};

typedef struct {
    const unsigned char *s;
    size_t len, pos;
    at_json_node *nodes;
    size_t n, cap, max_nodes;
    char *pool;
    size_t pool_used;
    int max_depth;
    size_t err_off;
    attend_error *err;
} parser;

/* ------------------------------------------------------------------ UTF-8 */

int at_json_utf8_valid(const char *s, size_t len, size_t *bad) { return at_utf8_valid(s, len, bad, NULL); }

void at_json_snippet(char dst[AT_JSON_SNIPPET_MAX], const char *s, size_t len) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, o = 0;
    while (i < len) {
        size_t k = (size_t)at_utf8_next(u + i, len - i, NULL, NULL);
        size_t w = k ? k : 1;
        if (o + w > 48) {
            memcpy(dst + o, "...", 3);
            o += 3;
            break;
        }
        char vis[16]; /* control characters and stray bytes as \x1b (attend_text_visible) */
        size_t vl = attend_text_visible(vis, sizeof vis, s + i, w);
        if (o + vl > 48) {
            memcpy(dst + o, "...", 3);
            o += 3;
            break;
        }
        memcpy(dst + o, vis, vl);
        o += vl;
        i += w;
    }
    dst[o] = '\0';
}

/* ----------------------------------------------------------------- errors */

static attend_status fail_at(parser *p, size_t off, attend_status st, const char *fmt, ...)
    AT_PRINTF(4, 5);
static attend_status fail_at(parser *p, size_t off, attend_status st, const char *fmt, ...) {
    char what[ATTEND_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    p->err_off = off;
    return at_fail(p->err, st, "%s at byte %zu", what, off);
}

/* A printable description of the byte at off, for "unexpected ..." messages. */
static void describe_byte(char out[16], const parser *p, size_t off) {
    if (off >= p->len) {
        snprintf(out, 16, "end of input");
        return;
    }
    unsigned c = p->s[off];
    if (c > 0x20 && c < 0x7F) snprintf(out, 16, "'%c'", (char)c);
    else snprintf(out, 16, "byte 0x%02x", c);
}

/* ------------------------------------------------------------------ parser */

static void skip_ws(parser *p) {
    while (p->pos < p->len) {
        unsigned char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static attend_status new_node(parser *p, at_json_type type, size_t *idx) {
    if (p->n >= p->max_nodes)
        return fail_at(p, p->pos, ATTEND_ERR_CAPACITY, "more than %zu values", p->max_nodes);
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64, bytes;
        if (cap > p->max_nodes) cap = p->max_nodes;
        if (!at_mul_size(cap, sizeof *p->nodes, &bytes))
            return at_fail(p->err, ATTEND_ERR_ALLOC, "JSON: %zu nodes do not fit in memory", cap);
        at_json_node *nodes = realloc(p->nodes, bytes);
        if (!nodes)
            return at_fail(p->err, ATTEND_ERR_ALLOC, "JSON: out of memory for %zu nodes", cap);
        p->nodes = nodes;
        p->cap = cap;
    }
    at_json_node *nd = &p->nodes[p->n];
    memset(nd, 0, sizeof *nd);
    nd->type = type;
    nd->offset = p->pos;
    nd->span = 1;
    *idx = p->n++;
    return ATTEND_OK;
}

static int hex4(const unsigned char *s, uint32_t *out) {
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned c = s[k], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return 0;
        v = v * 16 + d;
    }
    *out = v;
    return 1;
}

int at_json_scan_string(const unsigned char *s, size_t len, size_t *pos, char *out, size_t cap, size_t *out_len,
                        at_json_string_fail *f) {
    size_t start = *pos, i = start + 1, n = 0; /* i: past the opening quote */
    memset(f, 0, sizeof *f);
    f->code = AT_JSON_STRING_OK;
    for (;;) {
        char tmp[4];
        size_t k;
        if (i >= len) {
            f->code = AT_JSON_STRING_UNTERMINATED, f->at = start;
            return 0;
        }
        unsigned c = s[i];
        if (c == '"') {
            i++;
            break;
        }
        if (c < 0x20) {
            f->code = AT_JSON_STRING_CONTROL, f->at = i, f->value = c;
            return 0;
        }
        if (c == '\\') {
            size_t esc = i;
            if (i + 1 >= len) {
                f->code = AT_JSON_STRING_END_IN_ESCAPE, f->at = esc;
                return 0;
            }
            unsigned e = s[i + 1];
            i += 2;
            k = 1;
            switch (e) {
            case '"': tmp[0] = '"'; break;
            case '\\': tmp[0] = '\\'; break;
            case '/': tmp[0] = '/'; break;
            case 'b': tmp[0] = '\b'; break;
            case 'f': tmp[0] = '\f'; break;
            case 'n': tmp[0] = '\n'; break;
            case 'r': tmp[0] = '\r'; break;
            case 't': tmp[0] = '\t'; break;
            case 'u': {
                uint32_t cp;
                f->at = esc;
                if (len - i < 4 || !hex4(s + i, &cp)) {
                    f->code = AT_JSON_STRING_BAD_HEX;
                    return 0;
                }
                i += 4;
                f->value = cp;
                if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    f->code = AT_JSON_STRING_LONE_LOW;
                    return 0;
                }
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    uint32_t lo;
                    if (len - i < 6 || s[i] != '\\' || s[i + 1] != 'u' || !hex4(s + i + 2, &lo) || lo < 0xDC00 ||
                        lo > 0xDFFF) {
                        f->code = AT_JSON_STRING_LONE_HIGH;
                        return 0;
                    }
                    i += 6;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                k = at_utf8_put(tmp, cp);
                break;
            }
            default:
                f->code = AT_JSON_STRING_BAD_ESCAPE, f->at = esc, f->value = e;
                return 0;
            }
        } else {
            const char *why = NULL;
            k = (size_t)at_utf8_next(s + i, len - i, NULL, &why);
            if (k == 0) {
                f->code = AT_JSON_STRING_BAD_UTF8, f->at = i, f->why = why;
                return 0;
            }
            memcpy(tmp, s + i, k);
            i += k;
        }
        if (k > cap - n) {
            f->code = AT_JSON_STRING_TOO_LONG, f->at = start;
            return 0;
        }
        memcpy(out + n, tmp, k);
        n += k;
    }
    *pos = i;
    *out_len = n;
    return 1;
}

/* Parses the string starting at the opening quote into the pool. */
static attend_status parse_string(parser *p, const char **str, size_t *slen) {
    char *dst = p->pool + p->pool_used;
    at_json_string_fail f;
    if (!at_json_scan_string(p->s, p->len, &p->pos, dst, SIZE_MAX, slen, &f)) {
        unsigned v = (unsigned)f.value;
        switch (f.code) {
        case AT_JSON_STRING_CONTROL:
            return fail_at(p, f.at, ATTEND_ERR_FORMAT, "control character 0x%02x in string (write it as an escape)",
                           v);
        case AT_JSON_STRING_BAD_HEX: return fail_at(p, f.at, ATTEND_ERR_FORMAT, "\\u needs four hex digits");
        case AT_JSON_STRING_LONE_LOW:
            return fail_at(p, f.at, ATTEND_ERR_FORMAT, "low surrogate \\u%04X without a high surrogate before it", v);
        case AT_JSON_STRING_LONE_HIGH:
            return fail_at(p, f.at, ATTEND_ERR_FORMAT, "high surrogate \\u%04X not followed by a \\u low surrogate",
                           v);
        case AT_JSON_STRING_BAD_ESCAPE:
            return fail_at(p, f.at, ATTEND_ERR_FORMAT, "invalid escape '\\%c' in string",
                           v > 0x20 && v < 0x7F ? (char)v : '?');
        case AT_JSON_STRING_BAD_UTF8: return fail_at(p, f.at, ATTEND_ERR_FORMAT, "invalid UTF-8 in string");
        default: /* UNTERMINATED, END_IN_ESCAPE: at the opening quote (p->pos, not moved);
                    TOO_LONG cannot happen (the pool fits the input) */
            return fail_at(p, p->pos, ATTEND_ERR_FORMAT, "unterminated string");
        }
    }
    dst[*slen] = '\0';
    *str = dst;
    p->pool_used += *slen + 1;
    return ATTEND_OK;
}

static attend_status parse_number(parser *p, at_json_node *nd) {
    size_t start = p->pos;
    const unsigned char *s = p->s;
    int neg = 0, integral = 1;
    if (s[p->pos] == '-') {
        neg = 1;
        p->pos++;
    }
    if (p->pos >= p->len || s[p->pos] < '0' || s[p->pos] > '9')
        return fail_at(p, start, ATTEND_ERR_FORMAT, "'-' not followed by a digit");
    if (s[p->pos] == '0') {
        p->pos++;
    } else {
        while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9') p->pos++;
    }
    size_t int_end = p->pos;
    if (p->pos < p->len && s[p->pos] == '.') {
        integral = 0;
        p->pos++;
        if (p->pos >= p->len || s[p->pos] < '0' || s[p->pos] > '9')
            return fail_at(p, p->pos, ATTEND_ERR_FORMAT, "expected a digit after '.'");
        while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9') p->pos++;
    }
    if (p->pos < p->len && (s[p->pos] == 'e' || s[p->pos] == 'E')) {
        integral = 0;
        p->pos++;
        if (p->pos < p->len && (s[p->pos] == '+' || s[p->pos] == '-')) p->pos++;
        if (p->pos >= p->len || s[p->pos] < '0' || s[p->pos] > '9')
            return fail_at(p, p->pos, ATTEND_ERR_FORMAT, "expected a digit in the exponent");
        while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9') p->pos++;
    }
    if (integral) {
        uint64_t mag = 0, limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
        int fits = 1;
        for (size_t k = start + (size_t)neg; k < int_end; k++) {
            uint64_t dgt = (uint64_t)(s[k] - '0');
            if (mag > (limit - dgt) / 10) {
                fits = 0;
                break;
            }
            mag = mag * 10 + dgt;
        }
        if (fits) {
            nd->is_int = 1;
            nd->i = neg ? (mag == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)mag)
                        : (int64_t)mag;
            nd->d = (double)nd->i;
            if (neg && mag == 0) nd->d = -0.0;
            return ATTEND_OK;
        }
    }
    /* strtod needs a NUL-terminated copy; its decimal point follows LC_NUMERIC,
     * so when the locale's is not '.' the copy uses the locale's. */
    size_t n = p->pos - start;
    char small[128], *buf = small;
    if (n + 1 > sizeof small) {
        buf = malloc(n + 1);
        if (!buf) return at_fail(p->err, ATTEND_ERR_ALLOC, "JSON: out of memory for a number");
    }
    memcpy(buf, s + start, n);
    buf[n] = '\0';
    char *end;
    double d = strtod(buf, &end);
    if (end != buf + n) {
        const char *dp = localeconv()->decimal_point;
        char *dot = memchr(buf, '.', n);
        if (dot && dp && dp[0] && !dp[1]) {
            *dot = dp[0];
            d = strtod(buf, &end);
        }
    }
    int parsed = end == buf + n;
    if (buf != small) free(buf);
    if (!parsed) return fail_at(p, start, ATTEND_ERR_FORMAT, "number could not be converted");
    if (isinf(d)) return fail_at(p, start, ATTEND_ERR_FORMAT, "number out of the range of a double");
    nd->d = d;
    return ATTEND_OK;
}

static attend_status parse_value(parser *p, int depth, size_t *out);

static attend_status parse_container(parser *p, int depth, size_t *out) {
    int is_obj = p->s[p->pos] == '{';
    char close = is_obj ? '}' : ']';
    if (depth + 1 > p->max_depth)
        return fail_at(p, p->pos, ATTEND_ERR_CAPACITY, "nesting deeper than %d", p->max_depth);
    size_t idx = 0;
    TRY(new_node(p, is_obj ? AT_JSON_OBJECT : AT_JSON_ARRAY, &idx));
    *out = idx;
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == (unsigned char)close) {
        p->pos++;
        return ATTEND_OK;
    }
    size_t count = 0;
    for (;;) {
        const char *key = NULL;
        size_t key_len = 0, child = 0;
        skip_ws(p);
        if (is_obj) {
            if (p->pos >= p->len || p->s[p->pos] != '"') {
                char got[16];
                describe_byte(got, p, p->pos);
                return fail_at(p, p->pos, ATTEND_ERR_FORMAT, "expected a string key, found %s",
                               got);
            }
            TRY(parse_string(p, &key, &key_len));
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                char got[16];
                describe_byte(got, p, p->pos);
                return fail_at(p, p->pos, ATTEND_ERR_FORMAT,
                               "expected ':' after object key, found %s", got);
            }
            p->pos++;
        }
        TRY(parse_value(p, depth + 1, &child));
        p->nodes[child].key = key;
        p->nodes[child].key_len = key_len;
        count++;
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == (unsigned char)close) {
            p->pos++;
            break;
        }
        char got[16];
        describe_byte(got, p, p->pos);
        return fail_at(p, p->pos, ATTEND_ERR_FORMAT, "expected ',' or '%c' in %s, found %s",
                       close, is_obj ? "object" : "array", got);
    }
    p->nodes[idx].count = count;
    p->nodes[idx].span = p->n - idx;
    return ATTEND_OK;
}

static attend_status parse_value(parser *p, int depth, size_t *out) {
    skip_ws(p);
    if (p->pos >= p->len)
        return fail_at(p, p->pos, ATTEND_ERR_FORMAT, "expected a value, found end of input");
    unsigned c = p->s[p->pos];
    if (c == '{' || c == '[') return parse_container(p, depth, out);
    size_t idx = 0;
    if (c == '"') {
        TRY(new_node(p, AT_JSON_STRING, &idx));
        const char *str;
        size_t slen;
        TRY(parse_string(p, &str, &slen));
        p->nodes[idx].str = str;
        p->nodes[idx].len = slen;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        TRY(new_node(p, AT_JSON_NUMBER, &idx));
        TRY(parse_number(p, &p->nodes[idx]));
    } else {
        static const char *const words[3] = {"true", "false", "null"};
        int w = c == 't' ? 0 : c == 'f' ? 1 : c == 'n' ? 2 : -1;
        size_t wl = w >= 0 ? strlen(words[w]) : 0;
        if (w < 0 || p->len - p->pos < wl || memcmp(p->s + p->pos, words[w], wl) != 0) {
            char got[16];
            describe_byte(got, p, p->pos);
            return fail_at(p, p->pos, ATTEND_ERR_FORMAT, "expected a value, found %s", got);
        }
        TRY(new_node(p, w == 2 ? AT_JSON_NULL : AT_JSON_BOOL, &idx));
        p->nodes[idx].b = w == 0;
        p->pos += wl;
    }
    *out = idx;
    return ATTEND_OK;
}

/* ------------------------------------------------------------ after parsing */

static void link_nodes(at_json_node *nodes, size_t n) {
    for (size_t k = 0; k < n; k++) {
        at_json_node *nd = &nodes[k];
        if ((nd->type != AT_JSON_ARRAY && nd->type != AT_JSON_OBJECT) || nd->count == 0) continue;
        nd->first = &nodes[k + 1];
        size_t c = k + 1;
        for (size_t j = 0; j < nd->count; j++) {
            size_t nxt = c + nodes[c].span;
            nodes[c].next = j + 1 < nd->count ? &nodes[nxt] : NULL;
            c = nxt;
        }
    }
}

static int key_cmp(const void *a, const void *b) {
    const at_json_node *x = *(const at_json_node *const *)a, *y = *(const at_json_node *const *)b;
    size_t m = x->key_len < y->key_len ? x->key_len : y->key_len;
    int r = memcmp(x->key, y->key, m);
    if (r) return r;
    if (x->key_len != y->key_len) return x->key_len < y->key_len ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int same_key(const at_json_node *x, const at_json_node *y) {
    return x->key_len == y->key_len && memcmp(x->key, y->key, x->key_len) == 0;
}

/* First object (in document order) holding a duplicate key: its later member. */
static attend_status check_duplicates(parser *p) {
    const at_json_node **scratch = NULL;
    size_t scratch_cap = 0;
    attend_status st = ATTEND_OK;
    for (size_t k = 0; k < p->n && st == ATTEND_OK; k++) {
        const at_json_node *nd = &p->nodes[k];
        if (nd->type != AT_JSON_OBJECT || nd->count < 2) continue;
        const at_json_node *dup = NULL;
        if (nd->count <= 8) {
            for (const at_json_node *a = nd->first; a && !dup; a = a->next)
                for (const at_json_node *b = a->next; b; b = b->next)
                    if (same_key(a, b)) {
                        dup = b;
                        break;
                    }
        } else {
            if (nd->count > scratch_cap) {
                free(scratch);
                scratch_cap = nd->count; /* count < n, so the product below fits */
                scratch = malloc(scratch_cap * sizeof *scratch);
                if (!scratch)
                    return at_fail(p->err, ATTEND_ERR_ALLOC,
                                   "JSON: out of memory checking %zu keys", nd->count);
            }
            size_t m = 0;
            for (const at_json_node *a = nd->first; a; a = a->next) scratch[m++] = a;
            qsort(scratch, m, sizeof *scratch, key_cmp);
            for (size_t j = 1; j < m && !dup; j++)
                if (same_key(scratch[j - 1], scratch[j])) dup = scratch[j];
        }
        if (dup) {
            char snip[AT_JSON_SNIPPET_MAX];
            at_json_snippet(snip, dup->key, dup->key_len);
            st = fail_at(p, dup->offset, ATTEND_ERR_FORMAT, "duplicate key \"%s\" for the value",
                         snip);
        }
    }
    free(scratch);
    return st;
}

attend_status at_json_parse(at_json_doc **out, const char *text, size_t len,
                            const at_json_limits *lim, size_t *err_offset, attend_error *err) {
    CHECK(out != NULL, err, ATTEND_ERR_NULL, "at_json_parse: out is NULL");
    *out = NULL;
    if (err_offset) *err_offset = 0;
    CHECK(text != NULL || len == 0, err, ATTEND_ERR_NULL, "at_json_parse: text is NULL");
    parser p;
    memset(&p, 0, sizeof p);
    p.s = (const unsigned char *)text;
    p.len = len;
    p.err = err;
    p.max_nodes = lim && lim->max_nodes ? lim->max_nodes : AT_JSON_DEFAULT_NODES;
    p.max_depth = lim && lim->max_depth ? lim->max_depth : AT_JSON_DEFAULT_DEPTH;
    CHECK(p.max_depth >= 1 && p.max_depth <= AT_JSON_MAX_DEPTH, err, ATTEND_ERR_ARG,
          "at_json_parse: max_depth %d is outside 0..%d", p.max_depth, AT_JSON_MAX_DEPTH);
    size_t pool_bytes;
    CHECK(at_add_size(len, 1, &pool_bytes), err, ATTEND_ERR_ALLOC,
          "JSON: %zu bytes of input are too many", len);
    p.pool = malloc(pool_bytes);
    CHECK(p.pool != NULL, err, ATTEND_ERR_ALLOC, "JSON: out of memory for %zu bytes of strings",
          pool_bytes);

    size_t root = 0;
    attend_status st = parse_value(&p, 0, &root);
    if (st == ATTEND_OK) {
        skip_ws(&p);
        if (p.pos < p.len) {
            char got[16];
            describe_byte(got, &p, p.pos);
            st = fail_at(&p, p.pos, ATTEND_ERR_FORMAT, "unexpected %s after the value", got);
        }
    }
    if (st == ATTEND_OK) {
        link_nodes(p.nodes, p.n);
        if (!(lim && lim->allow_duplicate_keys)) st = check_duplicates(&p);
    }
    at_json_doc *doc = NULL;
    if (st == ATTEND_OK) {
        doc = malloc(sizeof *doc);
        if (!doc) st = at_fail(err, ATTEND_ERR_ALLOC, "JSON: out of memory");
    }
    if (st != ATTEND_OK) {
        if (err_offset) *err_offset = p.err_off;
        free(p.nodes);
        free(p.pool);
        return st;
    }
    doc->nodes = p.nodes;
    doc->n = p.n;
    doc->pool = p.pool;
    *out = doc;
    return at_ok(err);
}

void at_json_free(at_json_doc *doc) {
    if (!doc) return;
    free(doc->nodes);
    free(doc->pool);
    free(doc);
}

const at_json_node *at_json_root(const at_json_doc *doc) { return doc && doc->n ? doc->nodes : NULL; }

size_t at_json_node_count(const at_json_doc *doc) { return doc ? doc->n : 0; }

const at_json_node *at_json_getn(const at_json_node *obj, const char *key, size_t key_len) {
    if (!obj || obj->type != AT_JSON_OBJECT || (!key && key_len)) return NULL;
    for (const at_json_node *m = obj->first; m; m = m->next)
        if (m->key_len == key_len && memcmp(m->key, key, key_len) == 0) return m;
    return NULL;
}

const at_json_node *at_json_get(const at_json_node *obj, const char *key) {
    return key ? at_json_getn(obj, key, strlen(key)) : NULL;
}

const at_json_node *at_json_at(const at_json_node *arr, size_t index) {
    if (!arr || arr->type != AT_JSON_ARRAY || index >= arr->count) return NULL;
    const at_json_node *e = arr->first;
    while (index--) e = e->next;
    return e;
}

const char *at_json_type_name(at_json_type type) {
    switch (type) {
    case AT_JSON_NULL: return "null";
    case AT_JSON_BOOL: return "bool";
    case AT_JSON_NUMBER: return "number";
    case AT_JSON_STRING: return "string";
    case AT_JSON_ARRAY: return "array";
    case AT_JSON_OBJECT: return "object";
    }
    return "unknown";
}

/* ------------------------------------------------------------------ writer */

static size_t escaped_byte_size(unsigned char c) {
    if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t')
        return 2;
    return c < 0x20 ? 6 : 1;
}

size_t at_json_escaped_size(const char *s, size_t len) {
    size_t total = 2;
    for (size_t k = 0; k < len; k++)
        if (!at_add_size(total, escaped_byte_size((unsigned char)s[k]), &total)) return SIZE_MAX;
    return total;
}

char *at_json_escape(char *dst, const char *s, size_t len) {
    static const char hex[] = "0123456789abcdef";
    *dst++ = '"';
    for (size_t k = 0; k < len; k++) {
        unsigned char c = (unsigned char)s[k];
        char e = 0;
        switch (c) {
        case '"': e = '"'; break;
        case '\\': e = '\\'; break;
        case '\b': e = 'b'; break;
        case '\f': e = 'f'; break;
        case '\n': e = 'n'; break;
        case '\r': e = 'r'; break;
        case '\t': e = 't'; break;
        default: break;
        }
        if (e) {
            *dst++ = '\\';
            *dst++ = e;
        } else if (c < 0x20) {
            memcpy(dst, "\\u00", 4);
            dst[4] = hex[c >> 4];
            dst[5] = hex[c & 15];
            dst += 6;
        } else {
            *dst++ = (char)c;
        }
    }
    *dst++ = '"';
    return dst;
}
