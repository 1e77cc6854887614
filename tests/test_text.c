/*
 * test_text.c — the one UTF-8 decoder and the one string buffer
 * (src/io/text.c), and that every reader built on them (JSON strings,
 * vocabulary tokens, heatmap tokens, the G2P dictionary) accepts exactly
 * the same set: RFC 3629's well-formed UTF-8 (no overlongs, no surrogates,
 * nothing above U+10FFFF, nothing truncated).
 *
 * The oracle is written independently here: a sequence is valid when it is
 * the encoding (by the table of RFC 3629 section 4) of a scalar value; every
 * lead byte is tried with every second byte and with continuation bytes at
 * the edges of their range.
 */
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "attend.h"
#include "../src/io/json.h"
#include "../src/io/text.h"

/* The oracle: length of the valid sequence at s [n], 0 when invalid. */
static int oracle_len(const unsigned char *s, size_t n) {
    /* RFC 3629 section 4, one row per lead-byte range: [lo2, hi2] for byte 2 */
    static const struct { unsigned lo, hi, len, lo2, hi2; } rows[] = {
        {0x00, 0x7F, 1, 0, 0},       {0xC2, 0xDF, 2, 0x80, 0xBF}, {0xE0, 0xE0, 3, 0xA0, 0xBF},
        {0xE1, 0xEC, 3, 0x80, 0xBF}, {0xED, 0xED, 3, 0x80, 0x9F}, {0xEE, 0xEF, 3, 0x80, 0xBF},
        {0xF0, 0xF0, 4, 0x90, 0xBF}, {0xF1, 0xF3, 4, 0x80, 0xBF}, {0xF4, 0xF4, 4, 0x80, 0x8F},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        if (s[0] < rows[r].lo || s[0] > rows[r].hi) continue;
        if (rows[r].len == 1) return 1;
        if (n < rows[r].len || s[1] < rows[r].lo2 || s[1] > rows[r].hi2) return 0;
        for (unsigned k = 2; k < rows[r].len; k++)
            if (s[k] < 0x80 || s[k] > 0xBF) return 0;
        return (int)rows[r].len;
    }
    return 0;
}

/* Every code point round-trips through at_utf8_put and at_utf8_next. */
static void test_every_code_point(void) {
    long bad = 0;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        char buf[4];
        size_t n = at_utf8_put(buf, cp);
        uint32_t got = 0xFFFFFFFF;
        int k = at_utf8_next((const unsigned char *)buf, n, &got, NULL);
        if ((size_t)k != n || got != cp || oracle_len((const unsigned char *)buf, n) != (int)n) bad++;
    }
    EXPECT(bad == 0, "%ld code points do not round-trip", bad);
}

/* Lead byte x second byte x edge continuation bytes, truncated at every
 * length: the decoder, the validity check and the JSON check agree with the
 * oracle, and so do the library's readers. */
static void test_same_set_as_oracle(void) {
    static const unsigned char edge[] = {0x00, 0x41, 0x7F, 0x80, 0xBF, 0xC0, 0xFF};
    long checked = 0, bad = 0, accepted = 0;
    for (unsigned b0 = 0; b0 < 256; b0++) {
        for (unsigned b1 = 0; b1 < 256; b1++) {
            for (size_t e2 = 0; e2 < sizeof edge; e2++) {
                for (size_t e3 = 0; e3 < sizeof edge; e3++) {
                    unsigned char s[4] = {(unsigned char)b0, (unsigned char)b1, edge[e2], edge[e3]};
                    for (size_t n = 1; n <= 4; n++) {
                        int want = oracle_len(s, n);
                        uint32_t cp;
                        const char *why = NULL;
                        int got = at_utf8_next(s, n, &cp, &why);
                        if (got != want || (!got && !why)) bad++;
                        /* the whole of s [n] valid */
                        size_t off = 0;
                        int whole = 1;
                        while (whole && off < n) {
                            int k = oracle_len(s + off, n - off);
                            if (!k) whole = 0;
                            off += (size_t)k;
                        }
                        size_t at1 = 99, at2 = 99;
                        if (at_utf8_valid((const char *)s, n, &at1, NULL) != whole) bad++;
                        if (at_json_utf8_valid((const char *)s, n, &at2) != whole || at1 != at2) bad++;
                        accepted += whole;
                        checked++;
                    }
                }
            }
        }
    }
    printf("  %ld sequences checked, %ld accepted\n", checked, accepted);
    EXPECT(bad == 0, "%ld disagreements with the RFC 3629 oracle", bad);
}

/* The reason named for each kind of invalid sequence (vocabulary messages
 * quote it). */
static void test_reasons(void) {
    static const struct { const char *s; const char *why; } cases[] = {
        {"\x80", "unexpected continuation byte"},
        {"\xF8\x88\x80\x80", "byte 0xF8..0xFF never occurs in UTF-8"},
        {"\xE2\x82", "sequence truncated by the end of the text"},
        {"\xC3\x41", "missing continuation byte"},
        {"\xC0\xAF", "overlong encoding"},
        {"\xE0\x80\xAF", "overlong encoding"},
        {"\xF0\x80\x80\xAF", "overlong encoding"},
        {"\xED\xA0\x80", "UTF-16 surrogate code point"},
        {"\xF4\x90\x80\x80", "code point above U+10FFFF"},
        {"\xF7\xBF\xBF\xBF", "code point above U+10FFFF"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *why = NULL;
        size_t bad = 99;
        int ok = at_utf8_valid(cases[i].s, strlen(cases[i].s), &bad, &why);
        EXPECT(!ok && bad == 0 && why && !strcmp(why, cases[i].why), "case %zu: ok %d why %s", i, ok,
               why ? why : "(none)");
    }
    /* a NUL-terminated string may pass SIZE_MAX: the NUL breaks the sequence */
    const char *why = NULL;
    EXPECT(at_utf8_next((const unsigned char *)"\xE2\x82", SIZE_MAX, NULL, &why) == 0 && why &&
               !strcmp(why, "missing continuation byte"),
           "NUL-terminated truncation: %s", why ? why : "(none)");
    size_t bad = 0;
    EXPECT(!at_utf8_valid("ab\xC3\xA9\xED\xBF\xBF", 7, &bad, NULL) && bad == 4, "offset of the surrogate: %zu",
           bad);
    EXPECT(at_utf8_count("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80") == 4, "code points of a 4-width mix");
}

/* The readers built on the decoder refuse the same sequences. */
static void test_readers_agree(void) {
    static const char *const bad_tokens[] = {"\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82"};
    for (size_t i = 0; i < sizeof bad_tokens / sizeof bad_tokens[0]; i++) {
        const char *tok = bad_tokens[i];
        attend_error err = {0};
        attend_vocab *v = NULL;
        int32_t id;
        EXPECT(attend_vocab_create(&v, &err) == ATTEND_OK, "%s", err.msg);
        EXPECT(attend_vocab_add(v, tok, strlen(tok), &id, &err) == ATTEND_ERR_FORMAT && strstr(err.msg, "UTF-8"),
               "vocab token %zu: %s", i, err.msg);
        attend_vocab_free(v);

        const attend_real w[1] = {1};
        const char *src[1] = {tok}, *out[1] = {"x"};
        char *text = NULL;
        EXPECT(attend_render_heatmap_text(&text, w, 1, 1, src, out, &err) == ATTEND_ERR_FORMAT && !text &&
                   strstr(err.msg, "src_tokens[0]: invalid UTF-8 at byte 0"),
               "heatmap token %zu: %s", i, err.msg);

        char json[32];
        snprintf(json, sizeof json, "[\"%s\"]", tok);
        at_json_doc *doc = NULL;
        EXPECT(at_json_parse(&doc, json, strlen(json), NULL, NULL, &err) == ATTEND_ERR_FORMAT && !doc &&
                   strstr(err.msg, "invalid UTF-8 in string"),
               "JSON string %zu: %s", i, err.msg);
        at_json_free(doc);
    }
}

/* The vocabulary reader and the JSON parser share one string decoder but keep
 * their own messages and offsets; the vocabulary writer escapes as it always
 * did (tokens hold no tab, newline, CR or NUL). */
static void test_vocab_json_strings(void) {
#define SP "[\"<pad>\",\"<bos>\",\"<eos>\",\"<unk>\","
    static const struct { const char *json, *msg; } vocab_cases[] = {
        {SP "\"ab\\", "vocabulary JSON: byte 36: string 4 is not terminated"},
        {SP "\"ab", "vocabulary JSON: byte 33: string 4 is not terminated"},
        {SP "\"a\x01\"]", "vocabulary JSON: byte 35: control character 0x01 in string 4 must be escaped"},
        {SP "\"a\\ \"]", "vocabulary JSON: byte 35: unknown escape \\ "},
        {SP "\"\\u12g4\"]", "vocabulary JSON: byte 34: \\u must be followed by 4 hex digits"},
        {SP "\"\\uDC01\"]", "vocabulary JSON: byte 34: \\uDC01 is a low surrogate without a high surrogate before it"},
        {SP "\"\\uD801x\"]", "vocabulary JSON: byte 34: \\uD801 is a high surrogate not followed by a \\u low surrogate"},
        {SP "\"a\xE0\x80\xAF\"]", "vocabulary JSON: byte 35: invalid UTF-8 in string 4 (overlong encoding)"},
    };
#undef SP
    for (size_t i = 0; i < sizeof vocab_cases / sizeof vocab_cases[0]; i++) {
        attend_error err = {0};
        attend_vocab *v = NULL;
        EXPECT(attend_vocab_from_json(&v, vocab_cases[i].json, &err) == ATTEND_ERR_FORMAT && !v &&
                   !strcmp(err.msg, vocab_cases[i].msg),
               "vocab case %zu: \"%s\", expected \"%s\"", i, err.msg, vocab_cases[i].msg);
        attend_vocab_free(v);
    }
    static const struct { const char *json, *msg; } json_cases[] = {
        {"[\"ab\\", "unterminated string at byte 1"},
        {"[\"a\\ \"]", "invalid escape '\\?' in string at byte 3"},
        {"[\"\\uD801x\"]", "high surrogate \\uD801 not followed by a \\u low surrogate at byte 2"},
    };
    for (size_t i = 0; i < sizeof json_cases / sizeof json_cases[0]; i++) {
        attend_error err = {0};
        at_json_doc *doc = NULL;
        EXPECT(at_json_parse(&doc, json_cases[i].json, strlen(json_cases[i].json), NULL, NULL, &err) ==
                       ATTEND_ERR_FORMAT &&
                   !strcmp(err.msg, json_cases[i].msg),
               "JSON case %zu: \"%s\", expected \"%s\"", i, err.msg, json_cases[i].msg);
        at_json_free(doc);
    }
    /* the writer, byte for byte */
    attend_error err = {0};
    attend_vocab *v = NULL;
    char *json = NULL;
    static const char *const toks[] = {"a\"b", "\\", "\b\f\x01", "\xC3\xA9\x7F"};
    EXPECT(attend_vocab_create(&v, &err) == ATTEND_OK, "%s", err.msg);
    for (int i = 0; i < 4; i++) {
        int32_t id;
        EXPECT(attend_vocab_add(v, toks[i], strlen(toks[i]), &id, &err) == ATTEND_OK, "%s", err.msg);
    }
    EXPECT(attend_vocab_to_json(v, &json, &err) == ATTEND_OK, "%s", err.msg);
    static const char want[] =
        "[\"<pad>\",\"<bos>\",\"<eos>\",\"<unk>\",\"a\\\"b\",\"\\\\\",\"\\b\\f\\u0001\",\"\xC3\xA9\x7F\"]";
    EXPECT(json && !strcmp(json, want), "vocabulary JSON: %s", json ? json : "(none)");
    attend_vocab *back = NULL;
    EXPECT(json && attend_vocab_from_json(&back, json, &err) == ATTEND_OK && attend_vocab_size(back) == 8 &&
               !strcmp(attend_vocab_token(back, 6), "\b\f\x01"),
           "round trip: %s", err.msg);
    attend_vocab_free(back);
    free(json);
    attend_vocab_free(v);
}

/* The string buffer: growth past its first block, printf longer than the
 * room left, repeats, locale-proof numbers, and a latched failure. */
static void test_sbuf(void) {
    at_sbuf b = {0};
    for (int i = 0; i < 500; i++) at_sb_printf(&b, "%03d,", i);
    EXPECT(!b.bad && b.len == 2000 && !memcmp(b.p + 1996, "499,", 4), "500 printf appends: len %zu", b.len);
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    at_sb_printf(&b, "[%s]", big);
    EXPECT(b.len == 2000 + 3001 && b.p[b.len] == '\0' && b.p[b.len - 1] == ']', "one long printf: len %zu", b.len);
    at_sb_repeat(&b, '-', 3);
    at_sb_repeat(&b, '-', 0);
    at_sb_put(&b, "ab", 1);
    at_sb_f(&b, -0.0001, 2);
    at_sb_puts(&b, " ");
    at_sb_g(&b, 1234567.0, 3);
    static const char want_tail[] = "---a0.00 1.23e+06"; /* -0.0001 as "%.2f" is "-0.00": written "0.00" */
    EXPECT(b.len == 5001 + sizeof want_tail - 1 && !strcmp(b.p + 5001, want_tail), "tail: %s", b.p + 5001);
    char *out = NULL;
    attend_error err = {0};
    size_t len = b.len;
    EXPECT(at_sb_finish(&b, &out, "test", &err) == ATTEND_OK && out && strlen(out) == len && !b.p,
           "finish: %s", err.msg);
    free(out);

    at_sbuf f = {0};
    at_sb_puts(&f, "kept");
    EXPECT(!at_sb_reserve(&f, SIZE_MAX) && f.bad, "an impossible size latches the failure");
    at_sb_puts(&f, "more");
    EXPECT(f.len == 4, "appends after a failure are no-ops: len %zu", f.len);
    out = NULL;
    EXPECT(at_sb_finish(&f, &out, "test", &err) == ATTEND_ERR_ALLOC && !f.p &&
               !strcmp(err.msg, "test: out of memory building the output (4 bytes so far)"),
           "finish after a failure: %s", err.msg);
}

int main(void) {
    RUN(test_every_code_point);
    RUN(test_same_set_as_oracle);
    RUN(test_reasons);
    RUN(test_readers_agree);
    RUN(test_vocab_json_strings);
    RUN(test_sbuf);
    return harness_summary();
}
