/*
 * text.c — the UTF-8 decoder and the string buffer (text.h).
 */
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ UTF-8 */

int at_utf8_next(const unsigned char *s, size_t n, uint32_t *cp, const char **why) {
    const char *w = NULL;
    unsigned c = s[0];
    int k = 0;
    uint32_t u = 0, min = 0;
    if (c < 0x80) {
        if (cp) *cp = c;
        return 1;
    }
    if (c < 0xC0) w = "unexpected continuation byte";
    else if (c < 0xE0) k = 2, u = c & 0x1F, min = 0x80;
    else if (c < 0xF0) k = 3, u = c & 0x0F, min = 0x800;
    else if (c < 0xF8) k = 4, u = c & 0x07, min = 0x10000;
    else w = "byte 0xF8..0xFF never occurs in UTF-8";
    for (int i = 1; !w && i < k; i++) {
        if ((size_t)i >= n) w = "sequence truncated by the end of the text";
        else if ((s[i] & 0xC0) != 0x80) w = "missing continuation byte";
        else u = (u << 6) | (s[i] & 0x3F);
    }
    if (!w && u < min) w = "overlong encoding";
    if (!w && u >= 0xD800 && u <= 0xDFFF) w = "UTF-16 surrogate code point";
    if (!w && u > 0x10FFFF) w = "code point above U+10FFFF";
    if (w) {
        if (why) *why = w;
        return 0;
    }
    if (cp) *cp = u;
    return k;
}

int at_utf8_valid(const char *s, size_t n, size_t *bad, const char **why) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        int k = at_utf8_next(u + i, n - i, NULL, why);
        if (!k) {
            if (bad) *bad = i;
            return 0;
        }
        i += (size_t)k;
    }
    return 1;
}

size_t at_utf8_put(char *dst, uint32_t cp) {
    if (cp < 0x80) {
        dst[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        dst[0] = (char)(0xC0 | (cp >> 6));
        dst[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        dst[0] = (char)(0xE0 | (cp >> 12));
        dst[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        dst[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    dst[0] = (char)(0xF0 | (cp >> 18));
    dst[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    dst[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    dst[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t at_utf8_count(const char *s) {
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xC0) != 0x80) n++;
    return n;
}

/* ------------------------------------------------------------ visible text */

size_t attend_text_visible(char *dst, size_t cap, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        char esc[8];
        size_t w, k = 0;
        uint32_t cp = 0;
        int len = u ? at_utf8_next(u + i, n - i, &cp, NULL) : 0;
        if (len == 1 && (u[i] < 0x20 || u[i] == 0x7F)) { /* C0 controls, DEL */
            esc[0] = '\\', esc[1] = 'x', esc[2] = hex[u[i] >> 4], esc[3] = hex[u[i] & 15], k = 4;
            w = 1;
        } else if (len == 0) { /* not UTF-8: the byte itself (0x9B is CSI on 8-bit terminals) */
            esc[0] = '\\', esc[1] = 'x', esc[2] = hex[u[i] >> 4], esc[3] = hex[u[i] & 15], k = 4;
            w = 1;
        } else if (cp >= 0x80 && cp <= 0x9F) { /* C1 controls */
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[cp >> 4], esc[5] = hex[cp & 15], k = 6;
            w = (size_t)len;
        } else {
            w = (size_t)len;
        }
        if (k) {
            for (size_t j = 0; j < k; j++, o++)
                if (o + 1 < cap) dst[o] = esc[j];
        } else {
            for (size_t j = 0; j < w; j++, o++)
                if (o + 1 < cap) dst[o] = (char)u[i + j];
        }
        i += w;
    }
    if (cap) dst[o < cap ? o : cap - 1] = '\0';
    return o;
}

/* ------------------------------------------------------------ string buffer */

int at_sb_reserve(at_sbuf *b, size_t extra) {
    size_t need;
    if (b->bad) return 0;
    if (!at_add_size(b->len, extra, &need) || !at_add_size(need, 1, &need)) {
        b->bad = 1;
        return 0;
    }
    if (need <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *q = realloc(b->p, cap);
    if (!q) {
        b->bad = 1;
        return 0;
    }
    b->p = q;
    b->cap = cap;
    return 1;
}

void at_sb_put(at_sbuf *b, const char *s, size_t n) {
    if (!at_sb_reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void at_sb_puts(at_sbuf *b, const char *s) { at_sb_put(b, s, strlen(s)); }

void at_sb_repeat(at_sbuf *b, char c, int n) {
    if (n <= 0 || !at_sb_reserve(b, (size_t)n)) return;
    memset(b->p + b->len, c, (size_t)n);
    b->len += (size_t)n;
    b->p[b->len] = '\0';
}

void at_sb_printf(at_sbuf *b, const char *fmt, ...) {
    va_list ap;
    if (!at_sb_reserve(b, 0)) return;
    va_start(ap, fmt);
    int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->bad = 1;
        return;
    }
    if ((size_t)n >= b->cap - b->len) {
        if (!at_sb_reserve(b, (size_t)n)) return;
        va_start(ap, fmt);
        vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

/* Appends the snprintf result of one number, with ',' as '.' and "-0" as "0". */
static void sb_number(at_sbuf *b, const char *fmt, int prec, double v) {
    char tmp[64];
    int n = snprintf(tmp, sizeof tmp, fmt, prec, v);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        b->bad = 1;
        return;
    }
    int nonzero = 0;
    for (int i = 0; i < n; i++) {
        if (tmp[i] == ',') tmp[i] = '.';
        if (tmp[i] >= '1' && tmp[i] <= '9') nonzero = 1;
        if (tmp[i] == 'e') break;
    }
    const char *s = tmp;
    if (tmp[0] == '-' && !nonzero) s++;
    at_sb_puts(b, s);
}

void at_sb_f(at_sbuf *b, double v, int decimals) { sb_number(b, "%.*f", decimals, v); }
void at_sb_g(at_sbuf *b, double v, int digits) { sb_number(b, "%.*g", digits, v); }

attend_status at_sb_finish(at_sbuf *b, char **out, const char *what, attend_error *err) {
    at_sb_reserve(b, 0);
    if (b->bad) {
        size_t len = b->len;
        free(b->p);
        b->p = NULL;
        return at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory building the output (%zu bytes so far)", what,
                       len);
    }
    *out = b->p;
    b->p = NULL;
    return at_ok(err);
}
