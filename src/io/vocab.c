/*
 * vocab.c — vocabularies: token strings <-> ids, tokenizers (UTF-8 code points
 * or space-separated words), decoding, and the JSON form (an array of strings).
 *
 * Layout: entries [V] in id order point into an arena of fixed 4 KiB blocks
 * (a token is at most 64 bytes, so it never straddles a block and its pointer
 * stays valid until the vocabulary is freed). Lookup is an open-addressing
 * table of ids with linear probing, at most half full, doubled by rehashing.
 * Growth is amortised (this is data loading, not a hot loop).
 *
 * Ids are only ever removed newest first (at_vocab_truncate, used to undo the
 * tokens of a malformed line or a failed call). With linear probing that is
 * exact: the newest key ends its probe chain and no older key's chain passes
 * through its slot, so clearing the slot is enough (a rehash re-inserts in id
 * order and keeps this true).
 *
 * Threads: functions that only read a vocabulary (find, token, decode, to_json,
 * encode with grow == 0) may run at once; add and growing encode may not.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "io/json.h"
#include "io/text.h"


#define ARENA_BLOCK 4096
#define VOCAB_MAX (1 << 30) /* tokens; keeps the slot table and ids far from overflow */

typedef struct arena_block {
    struct arena_block *prev;
    size_t used;
    char data[ARENA_BLOCK];
} arena_block;

typedef struct {
    char *s;           /* NUL-terminated, in the arena */
    uint32_t hash;
    uint8_t len;       /* 1..ATTEND_MAX_TOKEN_BYTES */
    uint8_t new_block; /* this token opened its arena block (undone by freeing it) */
} vocab_entry;

struct attend_vocab {
    int32_t n, cap;      /* tokens, capacity of entries */
    vocab_entry *entries; /* [cap] */
    int32_t *slots;      /* [nslots] id, or -1 when empty */
    size_t nslots;       /* power of two, >= 2 * n */
    arena_block *arena;  /* newest block first */
};

static const char *const specials[4] = {"<pad>", "<bos>", "<eos>", "<unk>"};

/* Why a token (already valid UTF-8) may not be in a vocabulary, or NULL. */
static const char *token_rule(const char *s, size_t len) {
    if (len == 0) return "is empty";
    if (len > ATTEND_MAX_TOKEN_BYTES) return "is longer than 64 bytes";
    for (size_t i = 0; i < len; i++) {
        switch (s[i]) {
        case '\0': return "contains a NUL byte";
        case '\t': return "contains a tab";
        case '\n': return "contains a newline";
        case '\r': return "contains a carriage return";
        default: break;
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------- the table */

static uint32_t hash_bytes(const char *s, size_t len) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

static int32_t lookup(const attend_vocab *v, const char *s, size_t len, uint32_t h) {
    size_t mask = v->nslots - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        int32_t id = v->slots[i];
        if (id < 0) return -1;
        const vocab_entry *e = &v->entries[id];
        if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0) return id;
    }
}

static void place(int32_t *slots, size_t nslots, uint32_t h, int32_t id) {
    size_t mask = nslots - 1, i = h & mask;
    while (slots[i] >= 0) i = (i + 1) & mask;
    slots[i] = id;
}

/* Appends a token known to be valid and absent. */
static attend_status append(attend_vocab *v, const char *s, size_t len, uint32_t h, int32_t *id,
                            attend_error *err) {
    CHECK(v->n < VOCAB_MAX, err, ATTEND_ERR_CAPACITY,
          "vocabulary is full (%d tokens)", (int)v->n);
    if (v->n == v->cap) {
        int32_t cap = v->cap * 2;
        size_t bytes;
        CHECK(at_mul_size((size_t)cap, sizeof *v->entries, &bytes), err, ATTEND_ERR_ALLOC,
              "vocabulary: %d entries overflow size_t", (int)cap);
        vocab_entry *e = realloc(v->entries, bytes);
        CHECK(e, err, ATTEND_ERR_ALLOC, "vocabulary: out of memory growing to %d entries", (int)cap);
        v->entries = e;
        v->cap = cap;
    }
    if (2 * ((size_t)v->n + 1) > v->nslots) {
        size_t ns = v->nslots * 2, bytes;
        CHECK(at_mul_size(ns, sizeof *v->slots, &bytes), err, ATTEND_ERR_ALLOC,
              "vocabulary: hash table of %zu slots overflows size_t", ns);
        int32_t *slots = malloc(bytes);
        CHECK(slots, err, ATTEND_ERR_ALLOC, "vocabulary: out of memory for %zu hash slots", ns);
        for (size_t i = 0; i < ns; i++) slots[i] = -1;
        for (int32_t i = 0; i < v->n; i++) place(slots, ns, v->entries[i].hash, i);
        free(v->slots);
        v->slots = slots;
        v->nslots = ns;
    }
    int new_block = 0;
    if (!v->arena || v->arena->used + len + 1 > ARENA_BLOCK) {
        arena_block *b = malloc(sizeof *b);
        CHECK(b, err, ATTEND_ERR_ALLOC, "vocabulary: out of memory for token storage");
        b->prev = v->arena;
        b->used = 0;
        v->arena = b;
        new_block = 1;
    }
    char *dst = v->arena->data + v->arena->used;
    memcpy(dst, s, len);
    dst[len] = '\0';
    v->arena->used += len + 1;
    v->entries[v->n] = (vocab_entry){dst, h, (uint8_t)len, (uint8_t)new_block};
    place(v->slots, v->nslots, h, v->n);
    if (id) *id = v->n;
    v->n++;
    return ATTEND_OK;
}

/* Removes the tokens with ids >= n, newest first (see the file comment).
 * n below the four specials is raised to 4. */
void at_vocab_truncate(attend_vocab *v, int n) {
    if (!v) return;
    if (n < 4) n = 4;
    while (v->n > n) {
        int32_t id = --v->n;
        vocab_entry *e = &v->entries[id];
        size_t mask = v->nslots - 1, i = e->hash & mask;
        while (v->slots[i] != id) i = (i + 1) & mask;
        v->slots[i] = -1;
        if (e->new_block) {
            arena_block *b = v->arena;
            v->arena = b->prev;
            free(b);
        } else {
            v->arena->used -= (size_t)e->len + 1;
        }
    }
}

/* ------------------------------------------------------------ public: basic */

attend_status attend_vocab_create(attend_vocab **out, attend_error *err) {
    CHECK(out, err, ATTEND_ERR_NULL, "attend_vocab_create: out is NULL");
    *out = NULL;
    attend_vocab *v = calloc(1, sizeof *v);
    CHECK(v, err, ATTEND_ERR_ALLOC, "attend_vocab_create: out of memory");
    v->cap = 16;
    v->nslots = 32;
    v->entries = malloc((size_t)v->cap * sizeof *v->entries);
    v->slots = malloc(v->nslots * sizeof *v->slots);
    if (!v->entries || !v->slots) {
        attend_vocab_free(v);
        return at_fail(err, ATTEND_ERR_ALLOC, "attend_vocab_create: out of memory");
    }
    for (size_t i = 0; i < v->nslots; i++) v->slots[i] = -1;
    for (int i = 0; i < 4; i++) {
        const char *s = specials[i];
        size_t len = strlen(s);
        attend_status st = append(v, s, len, hash_bytes(s, len), NULL, err);
        if (st != ATTEND_OK) {
            attend_vocab_free(v);
            return st;
        }
    }
    *out = v;
    return at_ok(err);
}

void attend_vocab_free(attend_vocab *v) {
    if (!v) return;
    while (v->arena) {
        arena_block *b = v->arena;
        v->arena = b->prev;
        free(b);
    }
    free(v->entries);
    free(v->slots);
    free(v);
}

int attend_vocab_size(const attend_vocab *v) { return v ? (int)v->n : 0; }

attend_status attend_vocab_add(attend_vocab *v, const char *token, size_t len, int32_t *id,
                               attend_error *err) {
    CHECK(v && token, err, ATTEND_ERR_NULL, "attend_vocab_add: %s is NULL", !v ? "vocabulary" : "token");
    size_t bad;
    const char *why;
    if (len <= ATTEND_MAX_TOKEN_BYTES)
        CHECK(at_utf8_valid(token, len, &bad, &why), err, ATTEND_ERR_FORMAT,
              "attend_vocab_add: token is not valid UTF-8 at byte %zu (%s)", bad, why);
    why = token_rule(token, len);
    CHECK(!why, err, ATTEND_ERR_FORMAT, "attend_vocab_add: token of %zu bytes %s", len, why);
    uint32_t h = hash_bytes(token, len);
    int32_t found = lookup(v, token, len, h);
    if (found >= 0) {
        if (id) *id = found;
        return at_ok(err);
    }
    TRY(append(v, token, len, h, id, err));
    return at_ok(err);
}

int32_t attend_vocab_find(const attend_vocab *v, const char *token, size_t len) {
    if (!v || !token || len == 0 || len > ATTEND_MAX_TOKEN_BYTES) return -1;
    return lookup(v, token, len, hash_bytes(token, len));
}

const char *attend_vocab_token(const attend_vocab *v, int32_t id) {
    if (!v || id < 0 || id >= v->n) return NULL;
    return v->entries[id].s;
}

/* ---------------------------------------------------------- encode, decode */

/* attend_vocab_encode with byte offsets in messages counted from `base` (the
 * offset of text in a longer line). On any error the vocabulary is restored to
 * its size at entry, so a failed call adds nothing. More than max_ids tokens is
 * ATTEND_ERR_CAPACITY with *n_ids = -1 (other errors leave *n_ids = 0). */
attend_status at_vocab_encode(attend_vocab *v, attend_tokenizer tok, int grow, const char *text,
                              size_t len, size_t base, int32_t *ids, int max_ids, int *n_ids,
                              attend_error *err) {
    const char *who = "attend_vocab_encode";
    CHECK(v && (text || len == 0) && (ids || max_ids == 0) && n_ids, err, ATTEND_ERR_NULL,
          "%s: %s is NULL", who, !v ? "vocabulary" : !n_ids ? "n_ids" : !text ? "text" : "ids");
    *n_ids = 0;
    CHECK(tok == ATTEND_TOKENIZE_CHAR || tok == ATTEND_TOKENIZE_SPACE, err, ATTEND_ERR_ARG,
          "%s: unknown tokenizer %d", who, (int)tok);
    CHECK(max_ids >= 0, err, ATTEND_ERR_ARG, "%s: max_ids=%d, must be >= 0", who, max_ids);
    size_t bad;
    const char *why;
    CHECK(len == 0 || at_utf8_valid(text, len, &bad, &why), err, ATTEND_ERR_FORMAT,
          "invalid UTF-8 at byte %zu (%s)", base + bad, why);

    int32_t n0 = v->n;
    attend_status st = ATTEND_OK;
    int count = 0;
    size_t i = 0;
    while (i < len) {
        size_t start = i, tlen;
        if (tok == ATTEND_TOKENIZE_SPACE) {
            if (text[i] == ' ') {
                i++;
                continue;
            }
            while (i < len && text[i] != ' ') i++;
            tlen = i - start;
        } else {
            uint32_t cp;
            tlen = (size_t)at_utf8_next((const unsigned char *)text + i, len - i, &cp, &why);
            i += tlen;
        }
        const char *s = text + start;
        if (count == max_ids) {
            at_vocab_truncate(v, n0);
            *n_ids = -1;
            return at_fail(err, ATTEND_ERR_CAPACITY, "more than max_ids=%d tokens (token %d starts at byte %zu)",
                           max_ids, count + 1, base + start);
        }
        why = token_rule(s, tlen);
        if (why) {
            st = at_fail(err, ATTEND_ERR_FORMAT, "token at byte %zu %s", base + start, why);
            break;
        }
        uint32_t h = hash_bytes(s, tlen);
        int32_t id = lookup(v, s, tlen, h);
        if (id >= 0 && id < 3) {
            st = at_fail(err, ATTEND_ERR_FORMAT,
                         "token at byte %zu is the reserved %s (only <unk> may appear in text)",
                         base + start, specials[id]);
            break;
        }
        if (id < 0 && grow) {
            st = append(v, s, tlen, h, &id, err);
            if (st != ATTEND_OK) break;
        }
        ids[count++] = id < 0 ? ATTEND_UNK : id;
    }
    if (st != ATTEND_OK) {
        at_vocab_truncate(v, n0);
        return st;
    }
    *n_ids = count;
    return at_ok(err);
}

/*
 * Besides the header's contract: the tokens <pad>, <bos> and <eos> may not
 * appear in text (ATTEND_ERR_FORMAT; a literal "<unk>" is the unknown token),
 * every token obeys attend_vocab_add's rules whether or not grow is set (so
 * training and evaluation text are held to the same rules), and a failed call
 * leaves the vocabulary as it was.
 */
attend_status attend_vocab_encode(attend_vocab *v, attend_tokenizer tok, int grow,
                                  const char *text, size_t len, int32_t *ids, int max_ids,
                                  int *n_ids, attend_error *err) {
    attend_status st = at_vocab_encode(v, tok, grow, text, len, 0, ids, max_ids, n_ids, err);
    if (st != ATTEND_OK && n_ids) *n_ids = 0;
    if (st != ATTEND_OK && st != ATTEND_ERR_NULL && st != ATTEND_ERR_ARG && err) {
        char inner[ATTEND_ERROR_MSG_MAX];
        memcpy(inner, err->msg, sizeof inner);
        at_fail(err, st, "attend_vocab_encode: %s", inner);
    }
    return st;
}

attend_status attend_vocab_decode(const attend_vocab *v, attend_tokenizer tok, const int32_t *ids,
                                  int n, char *buf, size_t cap, attend_error *err) {
    const char *who = "attend_vocab_decode";
    CHECK(v && (ids || n == 0) && buf, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !v ? "vocabulary" : !buf ? "buf" : "ids");
    CHECK(tok == ATTEND_TOKENIZE_CHAR || tok == ATTEND_TOKENIZE_SPACE, err, ATTEND_ERR_ARG,
          "%s: unknown tokenizer %d", who, (int)tok);
    CHECK(n >= 0, err, ATTEND_ERR_ARG, "%s: n=%d, must be >= 0", who, n);
    if (cap > 0) buf[0] = '\0';
    /* first pass: check ids and measure, so a short buffer reports what it needs */
    size_t need = 1;
    int written = 0;
    for (int i = 0; i < n && ids[i] != ATTEND_EOS; i++) {
        int32_t id = ids[i];
        CHECK(id >= 0 && id < v->n, err, ATTEND_ERR_ARG,
              "%s: ids[%d]=%d is out of range (vocabulary size %d)", who, i, (int)id, (int)v->n);
        if (id == ATTEND_PAD || id == ATTEND_BOS) continue;
        size_t t = v->entries[id].len + (tok == ATTEND_TOKENIZE_SPACE && written ? 1 : 0);
        CHECK(at_add_size(need, t, &need), err, ATTEND_ERR_CAPACITY, "%s: text size overflows size_t", who);
        written++;
    }
    CHECK(need <= cap, err, ATTEND_ERR_CAPACITY,
          "%s: buffer of %zu bytes is too small, the text needs %zu (with its NUL)", who, cap, need);
    size_t pos = 0;
    written = 0;
    for (int i = 0; i < n && ids[i] != ATTEND_EOS; i++) {
        int32_t id = ids[i];
        if (id == ATTEND_PAD || id == ATTEND_BOS) continue;
        if (tok == ATTEND_TOKENIZE_SPACE && written) buf[pos++] = ' ';
        memcpy(buf + pos, v->entries[id].s, v->entries[id].len);
        pos += v->entries[id].len;
        written++;
    }
    buf[pos] = '\0';
    return at_ok(err);
}

/* -------------------------------------------------------------------- JSON */

/* Tokens hold no NUL, tab, newline or carriage return (token_rule), so
 * json.c's escaping writes them as every earlier version of this file did. */
attend_status attend_vocab_to_json(const attend_vocab *v, char **json, attend_error *err) {
    CHECK(v && json, err, ATTEND_ERR_NULL, "attend_vocab_to_json: %s is NULL", !v ? "vocabulary" : "json");
    *json = NULL;
    size_t size = 3; /* "[", "]", NUL */
    for (int32_t id = 0; id < v->n; id++) {
        const vocab_entry *e = &v->entries[id];
        size_t t = at_json_escaped_size(e->s, e->len);
        CHECK(t != SIZE_MAX && at_add_size(size, t + (id > 0), &size), err, ATTEND_ERR_ALLOC,
              "attend_vocab_to_json: size overflows size_t");
    }
    char *s = malloc(size), *p = s;
    CHECK(s, err, ATTEND_ERR_ALLOC, "attend_vocab_to_json: out of memory for %zu bytes", size);
    *p++ = '[';
    for (int32_t id = 0; id < v->n; id++) {
        const vocab_entry *e = &v->entries[id];
        if (id > 0) *p++ = ',';
        p = at_json_escape(p, e->s, e->len);
    }
    *p++ = ']';
    *p = '\0';
    *json = s;
    return at_ok(err);
}

/* A minimal strict reader for exactly one JSON array of strings. */
typedef struct {
    const char *s;
    size_t n, i;
    attend_error *err;
} json_reader;

#define JFAIL(r, at, ...) at_json_fail_((r), (at), __VA_ARGS__)

static attend_status at_json_fail_(json_reader *r, size_t at, const char *fmt, ...) AT_PRINTF(3, 4);
static attend_status at_json_fail_(json_reader *r, size_t at, const char *fmt, ...) {
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return at_fail(r->err, ATTEND_ERR_FORMAT, "vocabulary JSON: byte %zu: %s", at, what);
}

static void json_ws(json_reader *r) {
    while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' ||
                           r->s[r->i] == '\r'))
        r->i++;
}

/* Reads the string starting at the opening quote r->i into out (at most
 * ATTEND_MAX_TOKEN_BYTES bytes; a longer string is an error), with json.c's
 * string decoder and this reader's messages. */
static attend_status json_string(json_reader *r, char *out, size_t *len, int index) {
    at_json_string_fail f;
    if (at_json_scan_string((const unsigned char *)r->s, r->n, &r->i, out, ATTEND_MAX_TOKEN_BYTES, len, &f))
        return ATTEND_OK;
    unsigned v = (unsigned)f.value;
    switch (f.code) {
    case AT_JSON_STRING_CONTROL:
        return JFAIL(r, f.at, "control character 0x%02X in string %d must be escaped", v, index);
    case AT_JSON_STRING_BAD_HEX: return JFAIL(r, f.at, "\\u must be followed by 4 hex digits");
    case AT_JSON_STRING_LONE_LOW:
        return JFAIL(r, f.at, "\\u%04X is a low surrogate without a high surrogate before it", v);
    case AT_JSON_STRING_LONE_HIGH:
        return JFAIL(r, f.at, "\\u%04X is a high surrogate not followed by a \\u low surrogate", v);
    case AT_JSON_STRING_BAD_ESCAPE:
        return JFAIL(r, f.at, "unknown escape \\%c", (v >= 0x20 && v < 0x7F) ? (char)v : '?');
    case AT_JSON_STRING_BAD_UTF8: return JFAIL(r, f.at, "invalid UTF-8 in string %d (%s)", index, f.why);
    case AT_JSON_STRING_TOO_LONG:
        return JFAIL(r, f.at, "string %d is longer than %d bytes", index, ATTEND_MAX_TOKEN_BYTES);
    default: /* UNTERMINATED (at the quote), END_IN_ESCAPE (at the backslash) */
        return JFAIL(r, f.at, "string %d is not terminated", index);
    }
}

attend_status attend_vocab_from_json(attend_vocab **out, const char *json, attend_error *err) {
    CHECK(out && json, err, ATTEND_ERR_NULL, "attend_vocab_from_json: %s is NULL", !out ? "out" : "json");
    *out = NULL;
    attend_vocab *v;
    TRY(attend_vocab_create(&v, err));
    json_reader r = {json, strlen(json), 0, err};
    attend_status st = ATTEND_OK;
    int count = 0;
    json_ws(&r);
    if (r.i >= r.n || json[r.i] != '[') {
        st = JFAIL(&r, r.i, "expected '[' (a vocabulary is an array of strings)");
        goto done;
    }
    r.i++;
    json_ws(&r);
    if (r.i < r.n && json[r.i] == ']') {
        r.i++;
    } else {
        for (;;) {
            size_t at = r.i, len = 0;
            char tok[ATTEND_MAX_TOKEN_BYTES];
            if (r.i >= r.n || json[r.i] != '"') {
                st = JFAIL(&r, at, "expected string %d%s", count, r.i >= r.n ? ", found the end of the text" : "");
                goto done;
            }
            if ((st = json_string(&r, tok, &len, count)) != ATTEND_OK) goto done;
            const char *why = token_rule(tok, len);
            if (why) {
                st = JFAIL(&r, at, "string %d %s", count, why);
                goto done;
            }
            int32_t id = attend_vocab_find(v, tok, len);
            if (count < 4) {
                if (id != count) {
                    st = JFAIL(&r, at, "string %d is \"%.*s\", expected \"%s\" (the specials <pad>, "
                               "<bos>, <eos>, <unk> come first)", count, (int)len, tok, specials[count]);
                    goto done;
                }
            } else {
                if (id >= 0) {
                    st = JFAIL(&r, at, "string %d \"%.*s\" repeats id %d", count, (int)len, tok, (int)id);
                    goto done;
                }
                if ((st = append(v, tok, len, hash_bytes(tok, len), NULL, err)) != ATTEND_OK) goto done;
            }
            count++;
            json_ws(&r);
            if (r.i < r.n && json[r.i] == ',') {
                r.i++;
                json_ws(&r);
                continue;
            }
            if (r.i < r.n && json[r.i] == ']') {
                r.i++;
                break;
            }
            st = JFAIL(&r, r.i, "expected ',' or ']' after string %d", count - 1);
            goto done;
        }
    }
    json_ws(&r);
    if (r.i < r.n) {
        st = JFAIL(&r, r.i, "unexpected text after the array");
        goto done;
    }
    if (count < 4) {
        st = JFAIL(&r, r.i, "%d strings; the four specials <pad>, <bos>, <eos>, <unk> must come first",
                   count);
        goto done;
    }
done:
    if (st != ATTEND_OK) {
        attend_vocab_free(v);
        return st;
    }
    *out = v;
    return at_ok(err);
}
