/*
 * json.h — a small strict JSON (RFC 8259) reader and a string-escaping writer,
 * private to the library (every name starts with `at_json_`).
 *
 * Reading: at_json_parse turns a buffer (not NUL-terminated) into a tree of
 * nodes held by one at_json_doc. It accepts exactly the RFC 8259 grammar:
 *   - whitespace is space, tab, LF and CR only; no comments, no trailing commas,
 *     no byte-order mark, nothing but whitespace after the top-level value;
 *   - strings must be valid UTF-8 (no overlong forms, no surrogates, nothing above
 *     U+10FFFF) without raw control characters (< 0x20); escapes are \" \\ \/
 *     \b \f \n \r \t and \uXXXX, where a high surrogate must be followed by a
 *     \uXXXX low surrogate (the pair becomes one code point) and lone surrogates
 *     are errors. Decoded strings are UTF-8 and NUL-terminated, but may contain
 *     NUL bytes themselves (from \u0000): use the length;
 *   - numbers follow -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; a number
 *     written without fraction or exponent that fits int64 is an integer
 *     (is_int = 1, i exact, d = (double)i); every number has d, and one whose
 *     magnitude overflows a double is an error;
 *   - duplicate keys in an object are an error unless allowed by the limits.
 * Errors are ATTEND_ERR_FORMAT with the reason and the byte offset ("expected
 * ':' after object key at byte 12"), ATTEND_ERR_CAPACITY when the document has
 * more values than max_nodes or nests deeper than max_depth, ATTEND_ERR_ALLOC.
 *
 * Writing: at_json_escaped_size / at_json_escape produce the quoted, escaped
 * form of a UTF-8 string (sizes first, then write), so callers can size one
 * allocation for a whole document.
 *
 * Thread-safety: no global state; a parsed document is read-only and may be
 * shared between threads.
 */
#ifndef ATTEND_JSON_H
#define ATTEND_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "attend.h"

typedef enum {
    AT_JSON_NULL = 0,
    AT_JSON_BOOL = 1,
    AT_JSON_NUMBER = 2,
    AT_JSON_STRING = 3,
    AT_JSON_ARRAY = 4,
    AT_JSON_OBJECT = 5,
} at_json_type;

typedef struct at_json_node at_json_node;

/* One value. Nodes are stored in document order (a value, then its children);
 * all pointers point into the owning at_json_doc. */
struct at_json_node {
    at_json_type type;
    int b;                     /* BOOL: 0 or 1 */
    int is_int;                /* NUMBER: written as an integer that fits int64 */
    int64_t i;                 /* NUMBER with is_int: the exact value */
    double d;                  /* NUMBER: the value (rounded by strtod) */
    const char *str;           /* STRING: decoded UTF-8, NUL-terminated [len+1] */
    size_t len;                /* STRING: bytes, without the terminating NUL */
    size_t count;              /* ARRAY, OBJECT: number of children */
    const at_json_node *first; /* ARRAY, OBJECT: first child, NULL when empty */
    const at_json_node *next;  /* next sibling in the parent, NULL for the last */
    const char *key;           /* member of an OBJECT: decoded key, NUL-terminated; else NULL */
    size_t key_len;            /* bytes of key */
    size_t offset;             /* byte offset of the value's first character in the input */
    size_t span;               /* nodes in this value's subtree, itself included */
};

typedef struct at_json_doc at_json_doc; /* owns the nodes and decoded strings */

typedef struct {
    size_t max_nodes;         /* values in the document; 0 = 1048576 */
    int max_depth;            /* nested arrays/objects, 0..1024; 0 = 64 (a scalar has depth 0,
                                 [] and {} depth 1); over 1024 is ATTEND_ERR_ARG */
    int allow_duplicate_keys; /* nonzero: keep duplicate keys (lookups find the first) */
} at_json_limits;

/* Parses text [len] (no NUL needed). lim may be NULL (defaults). On error *out
 * is NULL, err names the reason and byte offset, and *err_offset (may be NULL)
 * receives that offset. Allocates the node array and one string pool no larger
 * than len + 1 bytes. */
attend_status at_json_parse(at_json_doc **out, const char *text, size_t len,
                            const at_json_limits *lim, size_t *err_offset, attend_error *err);
void at_json_free(at_json_doc *doc); /* NULL is fine */

const at_json_node *at_json_root(const at_json_doc *doc);
size_t at_json_node_count(const at_json_doc *doc);

/* Member of obj whose key is key [key_len]; NULL when absent or obj is not an
 * object. at_json_get takes a NUL-terminated key. */
const at_json_node *at_json_getn(const at_json_node *obj, const char *key, size_t key_len);
const at_json_node *at_json_get(const at_json_node *obj, const char *key);
/* Element index of an array (linear walk); NULL when out of range or not an array. */
const at_json_node *at_json_at(const at_json_node *arr, size_t index);

/* "null", "bool", "number", "string", "array", "object". */
const char *at_json_type_name(at_json_type type);

/* 1 when s [len] is valid UTF-8 (shortest forms, no surrogates, <= U+10FFFF);
 * else 0 with the offset of the first bad byte in *bad (may be NULL). */
int at_json_utf8_valid(const char *s, size_t len, size_t *bad);

/* Why at_json_scan_string stopped. */
typedef enum {
    AT_JSON_STRING_OK = 0,
    AT_JSON_STRING_UNTERMINATED,   /* the text ends inside the string; at: the opening quote */
    AT_JSON_STRING_END_IN_ESCAPE,  /* the text ends right after a backslash; at: the backslash */
    AT_JSON_STRING_CONTROL,        /* a raw byte < 0x20; at: it, value: the byte */
    AT_JSON_STRING_BAD_ESCAPE,     /* \ and a letter JSON does not know; at: the \, value: the letter */
    AT_JSON_STRING_BAD_HEX,        /* \u without four hex digits; at: the \ */
    AT_JSON_STRING_LONE_LOW,       /* \uDC00..\uDFFF first; at: the \, value: the unit */
    AT_JSON_STRING_LONE_HIGH,      /* \uD800..\uDBFF not followed by a \u low surrogate; at, value: likewise */
    AT_JSON_STRING_BAD_UTF8,       /* at: the first byte of the bad sequence, why: the reason (text.h) */
    AT_JSON_STRING_TOO_LONG,       /* the decoded string exceeds cap bytes; at: the opening quote */
} at_json_string_error;

typedef struct {
    at_json_string_error code;
    size_t at;       /* byte offset in the text */
    uint32_t value;  /* see the codes */
    const char *why; /* BAD_UTF8 only */
} at_json_string_fail;

/* The one JSON string decoder (the parser and the vocabulary reader use it):
 * decodes the string whose opening quote is at text[*pos] (text [len]) into
 * out [cap] (not NUL-terminated), escapes and surrogate pairs as the parser
 * accepts them (the top of this file). On success returns 1, *out_len = bytes
 * written and *pos = just past the closing quote; else returns 0 with *f
 * saying why and where (*pos unchanged). */
int at_json_scan_string(const unsigned char *text, size_t len, size_t *pos, char *out, size_t cap,
                        size_t *out_len, at_json_string_fail *f);

/* Bytes of the quoted, escaped JSON form of s [len] (quotes included, no NUL);
 * SIZE_MAX when that does not fit a size_t. s must be valid UTF-8. */
size_t at_json_escaped_size(const char *s, size_t len);
/* Writes that form to dst (at_json_escaped_size bytes, not NUL-terminated) and
 * returns dst + that size. Escapes '"', '\\', and control characters (as \b
 * \f \n \r \t or \u00XX); every other byte is copied unchanged. */
char *at_json_escape(char *dst, const char *s, size_t len);

/* A short printable form of s [len] for error messages, NUL-terminated in dst:
 * at most 48 bytes of s, cut at a character boundary with "..." appended when
 * cut; control characters and bytes of invalid UTF-8 become '?'. */
#define AT_JSON_SNIPPET_MAX 56
void at_json_snippet(char dst[AT_JSON_SNIPPET_MAX], const char *s, size_t len);

#endif
