/*
 * text.h — the library's one UTF-8 decoder and one growable string buffer,
 * private to the library (every name starts with `at_`).
 *
 * UTF-8: at_utf8_next accepts exactly the well-formed sequences of RFC 3629:
 * shortest forms only (no overlongs such as C0 80), no UTF-16 surrogates
 * (U+D800..U+DFFF), nothing above U+10FFFF, no sequence cut by the end of the
 * text. Every reader in the library (JSON, vocabularies, rendering, the G2P
 * dictionary) uses it, so they all accept the same set.
 *
 * String buffer: at_sbuf grows by doubling; an append that fails (out of
 * memory, size overflow) latches `bad` and every later append is a no-op, so a
 * builder checks once at the end. Not thread-safe per buffer; no global state.
 */
#ifndef ATTEND_IO_TEXT_H
#define ATTEND_IO_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "../internal.h" /* relative: tests include this header too */

/* ------------------------------------------------------------------ UTF-8 */

/* Length (1..4) of the well-formed UTF-8 sequence at s [n] (n >= 1), with its
 * code point in *cp (may be NULL); 0 when invalid, with the reason in *why (may
 * be NULL): "unexpected continuation byte", "byte 0xF8..0xFF never occurs in
 * UTF-8", "sequence truncated by the end of the text", "missing continuation
 * byte", "overlong encoding", "UTF-16 surrogate code point", "code point above
 * U+10FFFF". Reads no byte past the first one that breaks the sequence, so a
 * NUL-terminated string may pass n = SIZE_MAX. */
int at_utf8_next(const unsigned char *s, size_t n, uint32_t *cp, const char **why);

/* 1 when s [n] is well-formed UTF-8; else 0 with the offset of the first bad
 * sequence in *bad and its reason in *why (either may be NULL). */
int at_utf8_valid(const char *s, size_t n, size_t *bad, const char **why);

/* Writes the UTF-8 form of cp (<= U+10FFFF, not a surrogate) to dst [4];
 * returns its length 1..4. */
size_t at_utf8_put(char *dst, uint32_t cp);

/* Code points in NUL-terminated valid UTF-8 (bytes that are not 10xxxxxx). */
size_t at_utf8_count(const char *s);

/* ------------------------------------------------------------ string buffer */

typedef struct {
    char *p;    /* NUL-terminated once anything was appended [cap] */
    size_t len; /* bytes, without the NUL */
    size_t cap; /* bytes allocated */
    int bad;    /* an append failed (out of memory or size overflow) */
} at_sbuf;

/* Room for `extra` more bytes plus the NUL; 0 (and bad latched) on failure. */
int at_sb_reserve(at_sbuf *b, size_t extra);
void at_sb_put(at_sbuf *b, const char *s, size_t n); /* s [n] */
void at_sb_puts(at_sbuf *b, const char *s);
void at_sb_repeat(at_sbuf *b, char c, int n); /* c n times; n <= 0: nothing */
/* printf-style append: integers and strings; numbers with a fraction go
 * through at_sb_f/at_sb_g where the locale must not matter. */
void at_sb_printf(at_sbuf *b, const char *fmt, ...) AT_PRINTF(2, 3);
/* One number with "%.*f" (decimals) or "%.*g" (digits), ',' written as '.'
 * and a negative zero as "0", whatever the caller's LC_NUMERIC. */
void at_sb_f(at_sbuf *b, double v, int decimals);
void at_sb_g(at_sbuf *b, double v, int digits);
/* Hands the built string to *out (the caller frees it), or frees it and
 * returns ATTEND_ERR_ALLOC "<what>: out of memory building the output (N bytes
 * so far)" when an append failed. */
attend_status at_sb_finish(at_sbuf *b, char **out, const char *what, attend_error *err);

#endif
