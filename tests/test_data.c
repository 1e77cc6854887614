/*
 * test_data.c — vocabularies (add/find, tokenizers, UTF-8 validation, decode,
 * JSON), the dataset store, the built-in tasks and the TSV reader (fixtures in
 * tests/data/, read relative to tests/, the working directory ctest uses).
 */
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "harness.h"

#define EXPECT_STATUS(got, want, err)                                                     \
    EXPECT((got) == (want), "status %s, want %s (msg: %s)", attend_status_name(got),       \
           attend_status_name(want), (err).msg)
#define EXPECT_MSG(err, sub) EXPECT(strstr((err).msg, (sub)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (sub))

static attend_vocab *new_vocab(void) {
    attend_vocab *v = NULL;
    attend_error e;
    attend_status st = attend_vocab_create(&v, &e);
    if (st != ATTEND_OK || !v) {
        fprintf(stderr, "attend_vocab_create failed: %s\n", e.msg);
        exit(1);
    }
    return v;
}

/* ------------------------------------------------------------- vocabulary */

static void test_vocab_specials_add_find(void) {
    attend_vocab *v = new_vocab();
    attend_error e;
    EXPECT(attend_vocab_size(v) == 4, "size %d", attend_vocab_size(v));
    const char *names[4] = {"<pad>", "<bos>", "<eos>", "<unk>"};
    const int ids[4] = {ATTEND_PAD, ATTEND_BOS, ATTEND_EOS, ATTEND_UNK};
    for (int i = 0; i < 4; i++) {
        EXPECT(strcmp(attend_vocab_token(v, ids[i]), names[i]) == 0, "token %d is %s", i, attend_vocab_token(v, i));
        EXPECT(attend_vocab_find(v, names[i], strlen(names[i])) == ids[i], "find %s", names[i]);
    }
    EXPECT(attend_vocab_token(v, 4) == NULL && attend_vocab_token(v, -1) == NULL, "out of range token");
    EXPECT(attend_vocab_find(v, "x", 1) == -1, "absent");

    int32_t id = -7, id2 = -7;
    EXPECT_STATUS(attend_vocab_add(v, "hello", 5, &id, &e), ATTEND_OK, e);
    EXPECT(id == 4, "first added id %d", (int)id);
    EXPECT_STATUS(attend_vocab_add(v, "hello", 5, &id2, &e), ATTEND_OK, e);
    EXPECT(id2 == 4 && attend_vocab_size(v) == 5, "re-add id %d size %d", (int)id2, attend_vocab_size(v));
    EXPECT_STATUS(attend_vocab_add(v, "<eos>", 5, &id, &e), ATTEND_OK, e);
    EXPECT(id == ATTEND_EOS, "special re-add id %d", (int)id);
    EXPECT(attend_vocab_find(v, "hell", 4) == -1, "prefix is not the token");
    EXPECT(attend_vocab_add(v, "hello world", 5, NULL, &e) == ATTEND_OK && attend_vocab_size(v) == 5,
           "len limits the token");
    /* 64-byte token: sixteen 4-byte emoji */
    char big[65] = "";
    for (int i = 0; i < 16; i++) strcat(big, "\xF0\x9F\x98\x80");
    EXPECT_STATUS(attend_vocab_add(v, big, 64, &id, &e), ATTEND_OK, e);
    EXPECT(attend_vocab_find(v, big, 64) == id && strcmp(attend_vocab_token(v, id), big) == 0, "64-byte token");

    /* many tokens force several rehashes and arena blocks; every id stays findable */
    char buf[32];
    const char *first_ptr = attend_vocab_token(v, 4);
    int base = attend_vocab_size(v);
    for (int i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "tok%d", i);
        EXPECT(attend_vocab_add(v, buf, strlen(buf), &id, &e) == ATTEND_OK && id == base + i, "add %s", buf);
    }
    int bad = 0;
    for (int i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "tok%d", i);
        if (attend_vocab_find(v, buf, strlen(buf)) != base + i) bad++;
        if (strcmp(attend_vocab_token(v, base + i), buf) != 0) bad++;
    }
    EXPECT(bad == 0, "%d lookups wrong after growth", bad);
    EXPECT(attend_vocab_token(v, 4) == first_ptr, "token pointers stay valid as the vocabulary grows");

    /* invalid tokens */
    char longtok[66];
    memset(longtok, 'x', 65);
    longtok[65] = '\0';
    struct { const char *s; size_t len; const char *why; } cases[] = {
        {"", 0, "empty"},
        {"a\tb", 3, "tab"},
        {"a\nb", 3, "newline"},
        {"a\rb", 3, "carriage return"},
        {"a\0b", 3, "NUL"},
        {"ab\xC0\xAF", 4, "byte 2"},
        {longtok, 65, "longer than 64"},
    };
    int size = attend_vocab_size(v);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        attend_status st = attend_vocab_add(v, cases[i].s, cases[i].len, &id, &e);
        EXPECT_STATUS(st, ATTEND_ERR_FORMAT, e);
        EXPECT_MSG(e, cases[i].why);
    }
    EXPECT(attend_vocab_size(v) == size, "invalid tokens were added");
    EXPECT(attend_vocab_add(NULL, "a", 1, NULL, &e) == ATTEND_ERR_NULL, "NULL vocab");
    EXPECT(attend_vocab_add(v, NULL, 1, NULL, &e) == ATTEND_ERR_NULL, "NULL token");
    attend_vocab_free(v);
    attend_vocab_free(NULL);
}

static void test_vocab_encode_decode_char(void) {
    attend_vocab *v = new_vocab();
    attend_error e;
    /* ASCII, 2-byte é, 3-byte 你 好, 4-byte 😀, and the space */
    const char *text = "h\xC3\xA9llo \xE4\xBD\xA0\xE5\xA5\xBD\xF0\x9F\x98\x80!";
    int32_t ids[32];
    int n = -1;
    EXPECT_STATUS(attend_vocab_encode(v, ATTEND_TOKENIZE_CHAR, 1, text, strlen(text), ids, 32, &n, &e),
                  ATTEND_OK, e);
    EXPECT(n == 10, "code points %d, want 10", n);
    EXPECT(strcmp(attend_vocab_token(v, ids[1]), "\xC3\xA9") == 0, "é token");
    EXPECT(strcmp(attend_vocab_token(v, ids[6]), "\xE4\xBD\xA0") == 0, "你 token");
    EXPECT(strcmp(attend_vocab_token(v, ids[8]), "\xF0\x9F\x98\x80") == 0, "emoji token");
    EXPECT(ids[2] == ids[3], "repeated l gets one id");
    EXPECT(attend_vocab_size(v) == 4 + 9, "distinct tokens %d", attend_vocab_size(v) - 4);
    char out[64];
    EXPECT_STATUS(attend_vocab_decode(v, ATTEND_TOKENIZE_CHAR, ids, n, out, sizeof out, &e), ATTEND_OK, e);
    EXPECT(strcmp(out, text) == 0, "round trip \"%s\"", out);

    /* without growing: unknown code points become <unk>, the vocabulary is unchanged */
    int size = attend_vocab_size(v);
    EXPECT_STATUS(attend_vocab_encode(v, ATTEND_TOKENIZE_CHAR, 0, "h\xE4\xB8\x96z", 5, ids, 32, &n, &e),
                  ATTEND_OK, e);
    EXPECT(n == 3 && ids[0] == attend_vocab_find(v, "h", 1) && ids[1] == ATTEND_UNK && ids[2] == ATTEND_UNK,
           "n=%d ids %d %d %d", n, (int)ids[0], (int)ids[1], (int)ids[2]);
    EXPECT(attend_vocab_size(v) == size, "grow=0 added tokens");
    EXPECT_STATUS(attend_vocab_decode(v, ATTEND_TOKENIZE_CHAR, ids, n, out, sizeof out, &e), ATTEND_OK, e);
    EXPECT(strcmp(out, "h<unk><unk>") == 0, "decode unk: \"%s\"", out);

    /* empty text: zero tokens, not an error */
    EXPECT_STATUS(attend_vocab_encode(v, ATTEND_TOKENIZE_CHAR, 1, "", 0, ids, 32, &n, &e), ATTEND_OK, e);
    EXPECT(n == 0, "empty text gives %d ids", n);

    /* too many tokens: capacity error, and nothing was added */
    size = attend_vocab_size(v);
    EXPECT_STATUS(attend_vocab_encode(v, ATTEND_TOKENIZE_CHAR, 1, "pqrs", 4, ids, 3, &n, &e),
                  ATTEND_ERR_CAPACITY, e);
    EXPECT_MSG(e, "more than max_ids=3");
    EXPECT(attend_vocab_size(v) == size && n == 0, "capacity error grew the vocabulary to %d", attend_vocab_size(v));
    EXPECT_STATUS(attend_vocab_encode(v, ATTEND_TOKENIZE_CHAR, 1, "pqr", 3, ids, 3, &n, &e), ATTEND_OK, e);
    EXPECT(n == 3, "exactly max_ids tokens fit");

    /* a tab or newline is not a token */
    EXPECT_STATUS(attend_vocab_encode(v, ATTEND_TOKENIZE_CHAR, 1, "ab\tc", 4, ids, 32, &n, &e), ATTEND_ERR_FORMAT, e);
    EXPECT_MSG(e, "byte 2");
    EXPECT_MSG(e, "tab");
    attend_vocab_free(v);
}

static void test_vocab_encode_decode_space(void) {
    attend_vocab *v = new_vocab();
    attend_error e;
    int32_t ids[16];
    int n;
    const char *text = "  the  cat sat\xE2\x80\xA6 on \xE7\x8C\xAB ";
    EXPECT_STATUS(attend_vocab_encode(v, ATTEND_TOKENIZE_SPACE, 1, text, strlen(text), ids, 16, &n, &e),
                  ATTEND_OK, e);
    EXPECT(n == 5, "words %d", n);
    EXPECT(strcmp(attend_vocab_token(v, ids[2]), "sat\xE2\x80\xA6") == 0, "word with … : %s", attend_vocab_token(v, ids[2]));
    char out[64];
    EXPECT_STATUS(attend_vocab_decode(v, ATTEND_TOKENIZE_SPACE, ids, n, out, sizeof out, &e), ATTEND_OK, e);
    EXPECT(strcmp(out, "the cat sat\xE2\x80\xA6 on \xE7\x8C\xAB") == 0, "decoded \"%s\"", out);

    /* a literal <unk> is the unknown token; <pad>, <bos>, <eos> are reserved */
    EXPECT_STATUS(attend_vocab_encode(v, ATTEND_TOKENIZE_SPACE, 1, "the <unk>", 9, ids, 16, &n, &e), ATTEND_OK, e);
    EXPECT(n == 2 && ids[1] == ATTEND_UNK, "<unk> maps to %d", (int)ids[1]);
    int size = attend_vocab_size(v);
    EXPECT_STATUS(attend_vocab_encode(v, ATTEND_TOKENIZE_SPACE, 1, "new <eos>", 9, ids, 16, &n, &e),
                  ATTEND_ERR_FORMAT, e);
    EXPECT_MSG(e, "byte 4");
    EXPECT_MSG(e, "<eos>");
    EXPECT(attend_vocab_size(v) == size, "\"new\" stayed after the failed call");

    /* a 65-byte word is rejected whether or not the call grows the vocabulary */
    char word[80];
    memset(word, 'w', 65);
    memcpy(word + 65, " x", 3);
    for (int grow = 0; grow <= 1; grow++) {
        EXPECT_STATUS(attend_vocab_encode(v, ATTEND_TOKENIZE_SPACE, grow, word, 67, ids, 16, &n, &e),
                      ATTEND_ERR_FORMAT, e);
        EXPECT_MSG(e, "longer than 64");
    }

    /* decode: stops at EOS, skips PAD and BOS, exact buffer sizes */
    int32_t the = attend_vocab_find(v, "the", 3), cat = attend_vocab_find(v, "cat", 3);
    int32_t seq[] = {ATTEND_BOS, the, ATTEND_PAD, cat, ATTEND_UNK, ATTEND_EOS, the};
    EXPECT_STATUS(attend_vocab_decode(v, ATTEND_TOKENIZE_SPACE, seq, 7, out, sizeof out, &e), ATTEND_OK, e);
    EXPECT(strcmp(out, "the cat <unk>") == 0, "decoded \"%s\"", out);
    EXPECT_STATUS(attend_vocab_decode(v, ATTEND_TOKENIZE_SPACE, seq, 7, out, 14, &e), ATTEND_OK, e);
    EXPECT_STATUS(attend_vocab_decode(v, ATTEND_TOKENIZE_SPACE, seq, 7, out, 13, &e), ATTEND_ERR_CAPACITY, e);
    EXPECT_MSG(e, "needs 14");
    EXPECT(out[0] == '\0', "a failed decode leaves an empty string");
    EXPECT_STATUS(attend_vocab_decode(v, ATTEND_TOKENIZE_CHAR, seq, 7, out, sizeof out, &e), ATTEND_OK, e);
    EXPECT(strcmp(out, "thecat<unk>") == 0, "char join \"%s\"", out);
    int32_t only_eos[] = {ATTEND_EOS, the};
    EXPECT_STATUS(attend_vocab_decode(v, ATTEND_TOKENIZE_SPACE, only_eos, 2, out, 1, &e), ATTEND_OK, e);
    EXPECT(out[0] == '\0', "EOS first gives \"\"");
    int32_t bad_id[] = {the, 9999};
    EXPECT_STATUS(attend_vocab_decode(v, ATTEND_TOKENIZE_SPACE, bad_id, 2, out, sizeof out, &e), ATTEND_ERR_ARG, e);
    EXPECT_MSG(e, "ids[1]=9999");
    attend_vocab_free(v);
}

static void test_vocab_invalid_utf8(void) {
    struct { const char *s; size_t len; size_t off; const char *why; } cases[] = {
        {"ab\x80", 3, 2, "continuation"},
        {"a\xC0\xAF", 3, 1, "overlong"},
        {"a\xC1\xBF", 3, 1, "overlong"},
        {"ab\xE0\x80\xAF", 5, 2, "overlong"},
        {"\xE0\x9F\xBF", 3, 0, "overlong"},
        {"\xF0\x80\x80\xAF", 4, 0, "overlong"},
        {"\xF0\x8F\xBF\xBF", 4, 0, "overlong"},
        {"x\xED\xA0\x80", 4, 1, "surrogate"},
        {"x\xED\xBF\xBF", 4, 1, "surrogate"},
        {"xy\xF4\x90\x80\x80", 6, 2, "above U+10FFFF"},
        {"\xF5\x80\x80\x80", 4, 0, "above U+10FFFF"},
        {"z\xFF", 2, 1, "never occurs"},
        {"abc\xE4\xBD", 5, 3, "truncated"},
        {"\xE4\x41\x41", 3, 0, "missing continuation"},
        {"ok \xC3", 4, 3, "truncated"},
    };
    attend_vocab *v = new_vocab();
    attend_error e;
    int32_t ids[16];
    int n;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int tok = 0; tok <= 1; tok++) {
            attend_status st = attend_vocab_encode(v, (attend_tokenizer)tok, 1, cases[i].s, cases[i].len, ids,
                                                   16, &n, &e);
            EXPECT_STATUS(st, ATTEND_ERR_FORMAT, e);
            char want[32];
            snprintf(want, sizeof want, "at byte %zu ", cases[i].off);
            EXPECT_MSG(e, want);
            EXPECT_MSG(e, cases[i].why);
        }
    }
    EXPECT(attend_vocab_size(v) == 4, "invalid text added %d tokens", attend_vocab_size(v) - 4);
    /* the boundaries that are valid */
    const char *ok[] = {"\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80",
                        "\xEF\xBF\xBF", "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        attend_status st = attend_vocab_encode(v, ATTEND_TOKENIZE_CHAR, 1, ok[i], strlen(ok[i]), ids, 16, &n, &e);
        EXPECT(st == ATTEND_OK && n == 1, "valid boundary %zu rejected: %s", i, e.msg);
    }
    attend_vocab_free(v);
}

static void test_vocab_json(void) {
    attend_vocab *v = new_vocab();
    attend_error e;
    const char *toks[] = {"a", "say \"hi\"", "back\\slash", "/", "\xC3\xA9t\xC3\xA9", "\xF0\x9F\x98\x80",
                          "\001ctl", "\x08\x0C", "\x7F", "<unk>x", "[1,2]", "\xE4\xBD\xA0\xE5\xA5\xBD"};
    const int nt = (int)(sizeof toks / sizeof toks[0]);
    for (int i = 0; i < nt; i++) attend_vocab_add(v, toks[i], strlen(toks[i]), NULL, &e);
    EXPECT(attend_vocab_size(v) == 4 + nt, "size %d", attend_vocab_size(v));
    char *json = NULL;
    EXPECT_STATUS(attend_vocab_to_json(v, &json, &e), ATTEND_OK, e);
    EXPECT(json && strncmp(json, "[\"<pad>\",\"<bos>\",\"<eos>\",\"<unk>\",\"a\",\"say \\\"hi\\\"\",\"back\\\\slash\"", 63) == 0,
           "json starts %.70s", json ? json : "(null)");
    EXPECT(json && strstr(json, "\\u0001ctl") && strstr(json, "\"\\b\\f\""), "control escapes in %s", json ? json : "");
    attend_vocab *w = NULL;
    EXPECT_STATUS(attend_vocab_from_json(&w, json, &e), ATTEND_OK, e);
    if (w) {
        EXPECT(attend_vocab_size(w) == attend_vocab_size(v), "round trip size %d", attend_vocab_size(w));
        for (int i = 0; i < attend_vocab_size(v); i++)
            EXPECT(strcmp(attend_vocab_token(v, i), attend_vocab_token(w, i)) == 0, "token %d differs", i);
    }
    attend_vocab_free(w);
    free(json);

    /* \u escapes, surrogate pairs, whitespace */
    const char *hand = " [ \"<pad>\" ,\n\"<bos>\",\t\"<eos>\",\r\n\"<unk>\", \"\\u00e9\", \"\\ud83d\\ude00\", "
                       "\"\\u4F60\\u597d\", \"\\/\\\"\" ] \n";
    EXPECT_STATUS(attend_vocab_from_json(&w, hand, &e), ATTEND_OK, e);
    if (w) {
        EXPECT(attend_vocab_size(w) == 8, "size %d", attend_vocab_size(w));
        EXPECT(attend_vocab_find(w, "\xC3\xA9", 2) == 4, "\\u00e9");
        EXPECT(attend_vocab_find(w, "\xF0\x9F\x98\x80", 4) == 5, "surrogate pair");
        EXPECT(attend_vocab_find(w, "\xE4\xBD\xA0\xE5\xA5\xBD", 6) == 6, "CJK escapes");
        EXPECT(attend_vocab_find(w, "/\"", 2) == 7, "\\/ and \\\"");
    }
    attend_vocab_free(w);

    /* malformed: each is ATTEND_ERR_FORMAT with *out NULL and the reason */
#define SP "\"<pad>\",\"<bos>\",\"<eos>\",\"<unk>\""
    struct { const char *json; const char *why; } bad[] = {
        {"", "expected '['"},
        {"{}", "expected '['"},
        {"[", "expected string 0"},
        {"[]", "four specials"},
        {"[\"<pad>\",\"<bos>\",\"<eos>\"]", "four specials"},
        {"[\"<bos>\",\"<pad>\",\"<eos>\",\"<unk>\"]", "expected \"<pad>\""},
        {"[\"<pad>\",\"<bos>\",\"<eos>\",\"x\"]", "expected \"<unk>\""},
        {"[" SP ",]", "expected string 4"},
        {"[" SP ",\"a\"", "expected ',' or ']'"},
        {"[" SP " \"a\"]", "expected ',' or ']'"},
        {"[" SP ",\"ab]", "not terminated"},
        {"[" SP ",\"a\\x\"]", "unknown escape"},
        {"[" SP ",\"\\u12\"]", "4 hex digits"},
        {"[" SP ",\"\\ud83d\"]", "high surrogate"},
        {"[" SP ",\"\\ud83dx\"]", "high surrogate"},
        {"[" SP ",\"\\ud83d\\u0041\"]", "high surrogate"},
        {"[" SP ",\"\\ude00\"]", "low surrogate"},
        {"[" SP ",\"a\tb\"]", "control character 0x09"},
        {"[" SP ",\"\xC0\xAF\"]", "invalid UTF-8"},
        {"[" SP ",\"a\\u0000\"]", "NUL"},
        {"[" SP ",\"a\\tb\"]", "tab"},
        {"[" SP ",\"a\\nb\"]", "newline"},
        {"[" SP ",\"\"]", "empty"},
        {"[" SP ",\"a\",\"b\",\"a\"]", "repeats id 4"},
        {"[" SP ",\"<unk>\"]", "repeats id 3"},
        {"[" SP ",[\"a\"]]", "expected string 4"},
        {"[" SP ",1]", "expected string 4"},
        {"[" SP "] x", "unexpected text after"},
        {"[" SP "][]", "unexpected text after"},
        {"[" SP ",\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"]", "longer than 64"},
    };
#undef SP
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        w = (attend_vocab *)&e; /* must be reset to NULL */
        attend_status st = attend_vocab_from_json(&w, bad[i].json, &e);
        EXPECT(st == ATTEND_ERR_FORMAT, "case %zu %s: status %s (%s)", i, bad[i].json, attend_status_name(st), e.msg);
        EXPECT(w == NULL, "case %zu: *out not NULL", i);
        EXPECT(strstr(e.msg, bad[i].why) && strstr(e.msg, "vocabulary JSON: byte "),
               "case %zu %s: message \"%s\" lacks \"%s\"", i, bad[i].json, e.msg, bad[i].why);
    }
    EXPECT(attend_vocab_from_json(&w, NULL, &e) == ATTEND_ERR_NULL, "NULL json");
    attend_vocab_free(v);
}

/* ---------------------------------------------------------------- datasets */

static void test_dataset_store(void) {
    attend_dataset *d = NULL;
    attend_error e;
    EXPECT_STATUS(attend_dataset_create(&d, &e), ATTEND_OK, e);
    EXPECT(attend_dataset_size(d) == 0 && attend_dataset_max_src_len(d) == 0 && attend_dataset_max_tgt_len(d) == 0,
           "empty dataset");
    int32_t buf[300];
    for (int i = 0; i < 300; i++) buf[i] = i;
    for (int i = 0; i < 200; i++)
        EXPECT(attend_dataset_add(d, buf + i, 1 + i % 7, buf + 2 * i / 3, 1 + i % 5, &e) == ATTEND_OK, "add %d", i);
    EXPECT(attend_dataset_size(d) == 200 && attend_dataset_max_src_len(d) == 7 && attend_dataset_max_tgt_len(d) == 5,
           "size %d max %d %d", attend_dataset_size(d), attend_dataset_max_src_len(d), attend_dataset_max_tgt_len(d));
    int wrong = 0;
    for (int i = 0; i < 200; i++) {
        const int32_t *s, *t;
        int ns, nt;
        if (attend_dataset_get(d, i, &s, &ns, &t, &nt, &e) != ATTEND_OK || ns != 1 + i % 7 || nt != 1 + i % 5) {
            wrong++;
            continue;
        }
        for (int j = 0; j < ns; j++) wrong += s[j] != i + j;
        for (int j = 0; j < nt; j++) wrong += t[j] != 2 * i / 3 + j;
    }
    EXPECT(wrong == 0, "%d stored values wrong", wrong);
    const int32_t *s, *t;
    int ns, nt;
    EXPECT_STATUS(attend_dataset_get(d, 200, &s, &ns, &t, &nt, &e), ATTEND_ERR_ARG, e);
    EXPECT_MSG(e, "pair 200");
    EXPECT_STATUS(attend_dataset_add(d, buf, 0, buf, 1, &e), ATTEND_ERR_SHAPE, e);
    int32_t neg[2] = {1, -1};
    EXPECT_STATUS(attend_dataset_add(d, buf, 1, neg, 2, &e), ATTEND_ERR_ARG, e);
    EXPECT_MSG(e, "tgt[1]=-1");
    EXPECT(attend_dataset_size(d) == 200, "failed adds changed the size");
    attend_dataset_free(d);
    attend_dataset_free(NULL);
}

/* ------------------------------------------------------------------ tasks */

static int datasets_equal(const attend_dataset *a, const attend_dataset *b) {
    if (attend_dataset_size(a) != attend_dataset_size(b)) return 0;
    for (int i = 0; i < attend_dataset_size(a); i++) {
        const int32_t *s1, *t1, *s2, *t2;
        int ns1, nt1, ns2, nt2;
        attend_dataset_get(a, i, &s1, &ns1, &t1, &nt1, NULL);
        attend_dataset_get(b, i, &s2, &ns2, &t2, &nt2, NULL);
        if (ns1 != ns2 || nt1 != nt2 || memcmp(s1, s2, (size_t)ns1 * 4) || memcmp(t1, t2, (size_t)nt1 * 4))
            return 0;
    }
    return 1;
}

static void test_task_determinism(void) {
    attend_task_config cfg = {ATTEND_TASK_REVERSE, 12, 3, 9, 200, 7};
    attend_dataset *a, *b, *c;
    attend_vocab *va, *vb, *vc;
    attend_error e;
    EXPECT_STATUS(attend_dataset_task(&a, &va, &cfg, &e), ATTEND_OK, e);
    EXPECT_STATUS(attend_dataset_task(&b, &vb, &cfg, &e), ATTEND_OK, e);
    cfg.seed = 8;
    EXPECT_STATUS(attend_dataset_task(&c, &vc, &cfg, &e), ATTEND_OK, e);
    EXPECT(datasets_equal(a, b), "same seed, different data");
    EXPECT(!datasets_equal(a, c), "different seed, same data");
    /* the first pairs for seed 7, pinned so that the generator (and so every
     * published task) stays the same across releases and platforms; checked
     * against a Python transcription of splitmix64 + xoshiro256** and the
     * rejection sampler (length 3 + below(7), then symbols below(12)) */
    const char *want[3][2] = {{"cge", "egc"}, {"feeehlejl", "ljelheeef"}, {"lhghbb", "bbhghl"}};
    for (int i = 0; i < 3; i++) {
        const int32_t *s, *t;
        int ns, nt;
        char src[32], tgt[32];
        attend_dataset_get(a, i, &s, &ns, &t, &nt, &e);
        attend_vocab_decode(va, ATTEND_TOKENIZE_CHAR, s, ns, src, sizeof src, &e);
        attend_vocab_decode(va, ATTEND_TOKENIZE_CHAR, t, nt, tgt, sizeof tgt, &e);
        printf("  seed 7, pair %d: %s -> %s\n", i, src, tgt);
        EXPECT(!strcmp(src, want[i][0]) && !strcmp(tgt, want[i][1]), "pair %d is %s -> %s, want %s -> %s", i, src,
               tgt, want[i][0], want[i][1]);
    }
    attend_dataset_free(a);
    attend_dataset_free(b);
    attend_dataset_free(c);
    attend_vocab_free(va);
    attend_vocab_free(vb);
    attend_vocab_free(vc);
}

static void test_task_targets(void) {
    for (int task = 0; task <= 2; task++) {
        attend_task_config cfg = {(attend_task)task, 30, 1, 12, 500, 100 + (uint64_t)task};
        attend_dataset *d;
        attend_vocab *v;
        attend_error e;
        EXPECT_STATUS(attend_dataset_task(&d, &v, &cfg, &e), ATTEND_OK, e);
        if (!d) continue;
        EXPECT(attend_vocab_size(v) == 4 + 30, "vocab size %d", attend_vocab_size(v));
        EXPECT(!strcmp(attend_vocab_token(v, 4), "a") && !strcmp(attend_vocab_token(v, 29), "z") &&
                   !strcmp(attend_vocab_token(v, 30), "s26") && !strcmp(attend_vocab_token(v, 33), "s29"),
               "symbol names");
        EXPECT(attend_dataset_size(d) == 500, "count %d", attend_dataset_size(d));
        int bad_len = 0, bad_sym = 0, bad_tgt = 0, seen_len[13] = {0};
        for (int i = 0; i < 500; i++) {
            const int32_t *s, *t;
            int ns, nt;
            attend_dataset_get(d, i, &s, &ns, &t, &nt, &e);
            if (ns < 1 || ns > 12 || nt != ns) {
                bad_len++;
                continue;
            }
            seen_len[ns]++;
            for (int j = 0; j < ns; j++) bad_sym += s[j] < 4 || s[j] >= 34;
            if (task == ATTEND_TASK_COPY) {
                bad_tgt += memcmp(s, t, (size_t)ns * 4) != 0;
            } else if (task == ATTEND_TASK_REVERSE) {
                for (int j = 0; j < ns; j++) bad_tgt += t[j] != s[ns - 1 - j];
            } else {
                /* a permutation of 0..ns-1, symbols non-decreasing, ties in source order */
                int used[12] = {0};
                for (int j = 0; j < ns; j++) {
                    if (t[j] < 0 || t[j] >= ns || used[t[j]]++) {
                        bad_tgt++;
                        break;
                    }
                    if (j > 0 && (s[t[j - 1]] > s[t[j]] || (s[t[j - 1]] == s[t[j]] && t[j - 1] > t[j]))) bad_tgt++;
                }
            }
        }
        EXPECT(bad_len == 0 && bad_sym == 0 && bad_tgt == 0, "task %d: %d bad lengths, %d bad symbols, %d bad targets",
               task, bad_len, bad_sym, bad_tgt);
        for (int L = 1; L <= 12; L++) EXPECT(seen_len[L] > 15, "task %d: length %d seen %d times of ~42", task, L, seen_len[L]);
        EXPECT(attend_dataset_max_src_len(d) == 12 && attend_dataset_max_tgt_len(d) == 12, "max lengths");
        attend_dataset_free(d);
        attend_vocab_free(v);
    }
    /* sort with heavy ties (2 symbols) checks stability explicitly on a pair */
    attend_task_config cfg = {ATTEND_TASK_SORT, 2, 8, 8, 1, 3};
    attend_dataset *d;
    attend_vocab *v;
    attend_error e;
    EXPECT_STATUS(attend_dataset_task(&d, &v, &cfg, &e), ATTEND_OK, e);
    if (d) {
        const int32_t *s, *t;
        int ns, nt;
        attend_dataset_get(d, 0, &s, &ns, &t, &nt, &e);
        int32_t want[8], k = 0;
        for (int sym = 4; sym <= 5; sym++)
            for (int j = 0; j < 8; j++)
                if (s[j] == sym) want[k++] = j;
        EXPECT(ns == 8 && memcmp(t, want, sizeof want) == 0, "stable sort of ties");
    }
    attend_dataset_free(d);
    attend_vocab_free(v);
}

static void test_task_uniform(void) {
    /* 10 symbols, ~20000 draws: chi-square with 9 degrees of freedom; 27.9 is p = 0.001 */
    attend_task_config cfg = {ATTEND_TASK_COPY, 10, 5, 15, 2000, 12345};
    attend_dataset *d;
    attend_vocab *v;
    attend_error e;
    EXPECT_STATUS(attend_dataset_task(&d, &v, &cfg, &e), ATTEND_OK, e);
    if (!d) return;
    double count[10] = {0}, total = 0, lens[11] = {0};
    for (int i = 0; i < attend_dataset_size(d); i++) {
        const int32_t *s, *t;
        int ns, nt;
        attend_dataset_get(d, i, &s, &ns, &t, &nt, &e);
        lens[ns - 5]++;
        for (int j = 0; j < ns; j++) count[s[j] - 4]++, total++;
    }
    double chi = 0, chi_len = 0;
    for (int k = 0; k < 10; k++) chi += (count[k] - total / 10) * (count[k] - total / 10) / (total / 10);
    for (int k = 0; k < 11; k++) chi_len += (lens[k] - 2000.0 / 11) * (lens[k] - 2000.0 / 11) / (2000.0 / 11);
    printf("  symbols: %g draws, chi-square %.2f (9 dof); lengths: chi-square %.2f (10 dof)\n", total, chi, chi_len);
    EXPECT(chi < 27.9, "symbol chi-square %.2f", chi);
    EXPECT(chi_len < 29.6, "length chi-square %.2f", chi_len);
    attend_dataset_free(d);
    attend_vocab_free(v);
}

/* bag: the source symbols in ascending order (a function of the multiset: a
 * permuted source has the same target); shift k: label i = symbol i-k, the blank
 * "_" (id 4 + symbols) before k, alignment i-k -> i for the others */
static void test_task_bag_and_shift(void) {
    attend_error e;
    attend_dataset *d;
    attend_vocab *v;
    attend_task_config bag = {ATTEND_TASK_BAG, 6, 1, 9, 50, 7};
    EXPECT_STATUS(attend_dataset_task(&d, &v, &bag, &e), ATTEND_OK, e);
    EXPECT(attend_vocab_size(v) == 10, "bag vocabulary %d", attend_vocab_size(v));
    for (int i = 0; i < attend_dataset_size(d); i++) {
        const int32_t *s, *t;
        int ns, nt, hs[10] = {0}, ht[10] = {0};
        attend_dataset_get(d, i, &s, &ns, &t, &nt, &e);
        EXPECT(ns == nt, "pair %d: %d vs %d", i, ns, nt);
        for (int j = 0; j < ns; j++) hs[s[j]]++, ht[t[j]]++;
        for (int j = 1; j < nt; j++) EXPECT(t[j - 1] <= t[j], "pair %d not ascending at %d", i, j);
        EXPECT(!memcmp(hs, ht, sizeof hs), "pair %d: target is not the source's multiset", i);
        const int32_t *links;
        int nl;
        attend_dataset_get_alignment(d, i, &links, &nl, &e);
        EXPECT(nl == nt, "pair %d links %d", i, nl);
        for (int j = 0; j < nl; j++) EXPECT(s[links[2 * j]] == t[links[2 * j + 1]], "pair %d link %d", i, j);
    }
    attend_dataset_free(d);
    attend_vocab_free(v);

    attend_task_config sh = {ATTEND_TASK_SHIFT, 5, 4, 12, 40, 3};
    EXPECT_STATUS(attend_dataset_shift_task(&d, &v, &sh, 3, &e), ATTEND_OK, e);
    EXPECT(attend_vocab_size(v) == 10 && !strcmp(attend_vocab_token(v, 9), "_"), "shift vocabulary");
    for (int i = 0; i < attend_dataset_size(d); i++) {
        const int32_t *s, *t, *links;
        int ns, nt, nl;
        attend_dataset_get(d, i, &s, &ns, &t, &nt, &e);
        EXPECT(ns == nt, "pair %d: %d vs %d", i, ns, nt);
        for (int j = 0; j < nt; j++) {
            EXPECT(s[j] >= 4 && s[j] < 9, "pair %d: source symbol %d", i, (int)s[j]);
            EXPECT(t[j] == (j < 3 ? 9 : s[j - 3]), "pair %d label %d = %d", i, j, (int)t[j]);
        }
        attend_dataset_get_alignment(d, i, &links, &nl, &e);
        EXPECT(nl == (nt > 3 ? nt - 3 : 0), "pair %d: %d links", i, nl);
        for (int j = 0; j < nl; j++) EXPECT(links[2 * j + 1] - links[2 * j] == 3, "pair %d link %d", i, j);
    }
    attend_dataset_free(d);
    attend_vocab_free(v);
    /* the shift through the wrong door, a negative shift, another task */
    d = (attend_dataset *)&sh;
    EXPECT_STATUS(attend_dataset_shift_task(&d, &v, &sh, -1, &e), ATTEND_ERR_ARG, e);
    EXPECT_MSG(e, "shift=-1");
    EXPECT(d == NULL, "outputs not NULL");
    EXPECT_STATUS(attend_dataset_shift_task(&d, &v, &bag, 1, &e), ATTEND_ERR_ARG, e);
    EXPECT_MSG(e, "task 3 is not shift");
}

static void test_task_config_errors(void) {
    struct { attend_task_config cfg; const char *why; } cases[] = {
        {{(attend_task)5, 5, 1, 5, 10, 1}, "unknown task 5"},
        {{ATTEND_TASK_SHIFT, 5, 1, 5, 10, 1}, "attend_dataset_shift_task"},
        {{ATTEND_TASK_COPY, 0, 1, 5, 10, 1}, "symbols=0"},
        {{ATTEND_TASK_COPY, 100001, 1, 5, 10, 1}, "symbols=100001"},
        {{ATTEND_TASK_COPY, 5, 0, 5, 10, 1}, "min_len=0"},
        {{ATTEND_TASK_COPY, 5, 6, 5, 10, 1}, "min_len=6 max_len=5"},
        {{ATTEND_TASK_COPY, 5, 1, 100001, 10, 1}, "max_len=100001"},
        {{ATTEND_TASK_COPY, 5, 1, 5, 0, 1}, "count=0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        attend_dataset *d = (attend_dataset *)&cases[i];
        attend_vocab *v = (attend_vocab *)&cases[i];
        attend_error e;
        attend_status st = attend_dataset_task(&d, &v, &cases[i].cfg, &e);
        EXPECT_STATUS(st, ATTEND_ERR_ARG, e);
        EXPECT_MSG(e, cases[i].why);
        EXPECT(d == NULL && v == NULL, "case %zu: outputs not NULL", i);
    }
    /* the extremes are accepted */
    attend_task_config big = {ATTEND_TASK_SORT, 100000, 100000, 100000, 1, 9};
    attend_dataset *d;
    attend_vocab *v;
    attend_error e;
    EXPECT_STATUS(attend_dataset_task(&d, &v, &big, &e), ATTEND_OK, e);
    EXPECT(attend_vocab_size(v) == 100004 && attend_dataset_max_src_len(d) == 100000, "extreme config");
    EXPECT(v && !strcmp(attend_vocab_token(v, 100003), "s99999"), "last symbol name");
    attend_dataset_free(d);
    attend_vocab_free(v);
}

/* -------------------------------------------------------------------- TSV */

static int pair_is(const attend_dataset *d, const attend_vocab *sv, const attend_vocab *tv, attend_tokenizer tok,
                   int i, const char *src, const char *tgt) {
    const int32_t *s, *t;
    int ns, nt;
    char a[256], b[256];
    if (attend_dataset_get(d, i, &s, &ns, &t, &nt, NULL) != ATTEND_OK) return 0;
    if (attend_vocab_decode(sv, tok, s, ns, a, sizeof a, NULL) != ATTEND_OK) return 0;
    if (attend_vocab_decode(tv, tok, t, nt, b, sizeof b, NULL) != ATTEND_OK) return 0;
    if (strcmp(a, src) || strcmp(b, tgt)) {
        fprintf(stderr, "  pair %d is \"%s\" -> \"%s\", want \"%s\" -> \"%s\"\n", i, a, b, src, tgt);
        return 0;
    }
    return 1;
}

static void test_tsv_good(void) {
    attend_vocab *sv = new_vocab(), *tv = new_vocab();
    attend_dataset *d = NULL;
    attend_error e;
    int skipped = -1;
    attend_tsv_options opt = {ATTEND_TOKENIZE_CHAR, 0, 0, 0, 0};
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "data/good_char.tsv", sv, tv, 1, &opt, &skipped, &e), ATTEND_OK, e);
    EXPECT(attend_dataset_size(d) == 3 && skipped == 0, "pairs %d skipped %d", attend_dataset_size(d), skipped);
    EXPECT(pair_is(d, sv, tv, opt.tokenizer, 0, "abc", "cba"), "line 1");
    EXPECT(pair_is(d, sv, tv, opt.tokenizer, 1, "\xE4\xBD\xA0\xE5\xA5\xBD", "\xE5\xA5\xBD\xE4\xBD\xA0"), "line 2");
    EXPECT(pair_is(d, sv, tv, opt.tokenizer, 2, "\xF0\x9F\x98\x80x", "x\xF0\x9F\x98\x80"), "line 3");
    EXPECT(attend_vocab_size(sv) == 4 + 7 && attend_vocab_size(tv) == 4 + 7, "vocab sizes %d %d",
           attend_vocab_size(sv), attend_vocab_size(tv));
    EXPECT(attend_dataset_max_src_len(d) == 3 && attend_dataset_max_tgt_len(d) == 3, "max lengths");
    attend_dataset_free(d);

    /* evaluation data: no growth, unknown tokens are <unk>; a shared vocabulary */
    attend_vocab *shared = new_vocab();
    attend_vocab_add(shared, "a", 1, NULL, &e);
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "data/good_char.tsv", shared, shared, 0, NULL, NULL, &e), ATTEND_OK, e);
    EXPECT(attend_vocab_size(shared) == 5, "grow=0 changed the vocabulary");
    EXPECT(pair_is(d, shared, shared, ATTEND_TOKENIZE_CHAR, 0, "a<unk><unk>", "<unk><unk>a"), "unk mapping");
    attend_dataset_free(d);
    attend_vocab_free(shared);
    attend_vocab_free(sv);
    attend_vocab_free(tv);

    /* CRLF, runs of spaces, no final newline (check the fixture kept its bytes) */
    FILE *f = fopen("data/good_space_crlf.tsv", "rb");
    char raw[256];
    size_t nraw = f ? fread(raw, 1, sizeof raw - 1, f) : 0;
    if (f) fclose(f);
    raw[nraw] = '\0';
    EXPECT(nraw > 0 && strstr(raw, "\r\n") && raw[nraw - 1] != '\n', "fixture lost its CRLF or gained a final newline");
    sv = new_vocab();
    tv = new_vocab();
    opt.tokenizer = ATTEND_TOKENIZE_SPACE;
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "data/good_space_crlf.tsv", sv, tv, 1, &opt, &skipped, &e), ATTEND_OK, e);
    EXPECT(attend_dataset_size(d) == 3, "pairs %d", attend_dataset_size(d));
    EXPECT(pair_is(d, sv, tv, opt.tokenizer, 0, "the cat sat", "le chat"), "line 1");
    EXPECT(pair_is(d, sv, tv, opt.tokenizer, 1, "hello world", "bonjour le monde"), "line 2");
    EXPECT(pair_is(d, sv, tv, opt.tokenizer, 2, "the dog", "le chien"), "line 3 (no newline)");
    EXPECT(attend_vocab_find(tv, "chat\r", 5) < 0 && attend_vocab_find(tv, "chat", 4) >= 0, "CR stripped");
    EXPECT(attend_dataset_max_src_len(d) == 3 && attend_dataset_max_tgt_len(d) == 3, "max lengths");
    attend_dataset_free(d);
    /* max_line_bytes counts the line without CR LF: the longest line (29 bytes) fits exactly */
    opt.max_line_bytes = 29;
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "data/good_space_crlf.tsv", sv, tv, 1, &opt, NULL, &e), ATTEND_OK, e);
    attend_dataset_free(d);
    opt.max_line_bytes = 28;
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "data/good_space_crlf.tsv", sv, tv, 1, &opt, NULL, &e),
                  ATTEND_ERR_FORMAT, e);
    EXPECT_MSG(e, "data/good_space_crlf.tsv:2: line is longer than max_line_bytes=28");
    attend_vocab_free(sv);
    attend_vocab_free(tv);

    /* a byte order mark is not part of line 1, and does not count towards its length */
    attend_vocab *v = new_vocab();
    attend_tsv_options tight = {ATTEND_TOKENIZE_CHAR, 5, 0, 0, 0};
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "data/bom_crlf.tsv", v, v, 1, &tight, NULL, &e), ATTEND_OK, e);
    EXPECT(attend_dataset_size(d) == 2 && pair_is(d, v, v, ATTEND_TOKENIZE_CHAR, 0, "ab", "ba"), "BOM line");
    EXPECT(attend_vocab_size(v) == 4 + 4, "vocabulary %d (BOM or CR became a token?)", attend_vocab_size(v));
    attend_dataset_free(d);
    /* an empty file is an empty dataset */
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "data/empty.tsv", v, v, 1, NULL, &skipped, &e), ATTEND_OK, e);
    EXPECT(d && attend_dataset_size(d) == 0 && skipped == 0, "empty file");
    attend_dataset_free(d);
    attend_vocab_free(v);
}

static void test_tsv_malformed(void) {
    struct {
        const char *file;
        attend_tokenizer tok;
        int max_line, max_tokens;
        const char *why;
    } cases[] = {
        {"bad_missing_tab", ATTEND_TOKENIZE_CHAR, 0, 0, "missing tab between source and target"},
        /* "ab\tcd\tef": a third column is an alignment (issue 13), and "ef" is none */
        {"bad_extra_tab", ATTEND_TOKENIZE_CHAR, 0, 0, "alignment column: 'ef' at byte 6 is not a link i-j"},
        {"bad_empty_line", ATTEND_TOKENIZE_CHAR, 0, 0, "blank line (blank lines are ignored only at the end"},
        {"bad_empty_source", ATTEND_TOKENIZE_CHAR, 0, 0, "empty source side"},
        {"bad_empty_target", ATTEND_TOKENIZE_SPACE, 0, 0, "empty target side"},
        {"bad_utf8", ATTEND_TOKENIZE_CHAR, 0, 0, "target side: invalid UTF-8 at byte 4 (overlong encoding)"},
        {"bad_long_line", ATTEND_TOKENIZE_CHAR, 40, 0, "line is longer than max_line_bytes=40"},
        {"bad_too_many_tokens", ATTEND_TOKENIZE_CHAR, 0, 8, "target side has more than max_tokens=8 tokens"},
        {"bad_nul", ATTEND_TOKENIZE_CHAR, 0, 0, "embedded NUL byte at byte 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[64], want[160];
        snprintf(path, sizeof path, "data/%s.tsv", cases[i].file);
        attend_tsv_options opt = {cases[i].tok, cases[i].max_line, cases[i].max_tokens, 0, 0};
        attend_vocab *sv = new_vocab(), *tv = new_vocab();
        attend_dataset *d = (attend_dataset *)&opt;
        attend_error e;
        int skipped = -1;
        attend_status st = attend_dataset_read_tsv(&d, path, sv, tv, 1, &opt, &skipped, &e);
        EXPECT(st == ATTEND_ERR_FORMAT, "%s: status %s (%s)", path, attend_status_name(st), e.msg);
        snprintf(want, sizeof want, "%s:3: %s", path, cases[i].why);
        EXPECT(strcmp(e.msg, want) == 0 || (strncmp(e.msg, want, strlen(want)) == 0),
               "%s: message \"%s\", want \"%s\"", path, e.msg, want);
        EXPECT(d == NULL, "%s: *out not NULL on error", path);
        /* lines 1 and 2 added tokens before the error; they were taken back */
        EXPECT(attend_vocab_size(sv) == 4 && attend_vocab_size(tv) == 4, "%s: vocabularies kept %d/%d tokens",
               path, attend_vocab_size(sv), attend_vocab_size(tv));

        /* skipping: lines 1, 2 and 4 load, one skipped */
        opt.skip_malformed = 1;
        st = attend_dataset_read_tsv(&d, path, sv, tv, 1, &opt, &skipped, &e);
        EXPECT(st == ATTEND_OK && skipped == 1 && attend_dataset_size(d) == 3, "%s skip: %s, skipped %d, pairs %d",
               path, attend_status_name(st), skipped, attend_dataset_size(d));
        if (st == ATTEND_OK) EXPECT(pair_is(d, sv, tv, opt.tokenizer, 2, "ok", "ko"), "%s: line 4", path);
        attend_dataset_free(d);
        attend_vocab_free(sv);
        attend_vocab_free(tv);
    }
}

static void test_tsv_skip_mixed(void) {
    attend_tsv_options opt = {ATTEND_TOKENIZE_CHAR, 40, 12, 1, 0};
    attend_vocab *v = new_vocab();
    attend_dataset *d = NULL;
    attend_error e;
    int skipped = -1;
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "data/mixed.tsv", v, v, 1, &opt, &skipped, &e), ATTEND_OK, e);
    EXPECT(skipped == 8 && attend_dataset_size(d) == 2, "skipped %d, pairs %d", skipped, attend_dataset_size(d));
    EXPECT(pair_is(d, v, v, opt.tokenizer, 0, "ab", "ba") && pair_is(d, v, v, opt.tokenizer, 1, "cd", "dc"), "good lines");
    /* Q and W occur only in malformed lines: skipped lines add no tokens */
    EXPECT(attend_vocab_find(v, "Q", 1) < 0 && attend_vocab_find(v, "W", 1) < 0, "tokens of skipped lines stayed");
    EXPECT(attend_vocab_size(v) == 4 + 4, "vocabulary %d", attend_vocab_size(v));
    attend_dataset_free(d);
    /* without skipping, the first malformed line is the error, with CRLF line counting intact */
    opt.skip_malformed = 0;
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "data/mixed.tsv", v, v, 1, &opt, &skipped, &e), ATTEND_ERR_FORMAT, e);
    EXPECT_MSG(e, "data/mixed.tsv:2: missing tab");
    attend_vocab_free(v);
}

static void test_tsv_io_and_args(void) {
    attend_vocab *v = new_vocab();
    attend_dataset *d = (attend_dataset *)v;
    attend_error e;
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "data/no_such_file.tsv", v, v, 1, NULL, NULL, &e), ATTEND_ERR_IO, e);
    EXPECT_MSG(e, "data/no_such_file.tsv");
    EXPECT(d == NULL, "*out not NULL");
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "data", v, v, 1, NULL, NULL, &e), ATTEND_ERR_IO, e);
    EXPECT_MSG(e, "data");
    attend_tsv_options opt = {(attend_tokenizer)5, 0, 0, 0, 0};
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "data/good_char.tsv", v, v, 1, &opt, NULL, &e), ATTEND_ERR_ARG, e);
    opt.tokenizer = ATTEND_TOKENIZE_CHAR;
    opt.max_tokens = -1;
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "data/good_char.tsv", v, v, 1, &opt, NULL, &e), ATTEND_ERR_ARG, e);
    EXPECT_STATUS(attend_dataset_read_tsv(&d, NULL, v, v, 1, NULL, NULL, &e), ATTEND_ERR_NULL, e);
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "data/good_char.tsv", v, NULL, 1, NULL, NULL, &e), ATTEND_ERR_NULL, e);
    EXPECT(attend_vocab_size(v) == 4, "vocabulary changed");
    attend_vocab_free(v);
}

/* Issue 28: blank lines at the end are ignored (one in the middle is
 * malformed, or skipped and counted); "-" reads standard input. */
static void test_tsv_blank_and_stdin(void) {
    const char *path = "/tmp/attend-test-data-blank.tsv";
    FILE *f = fopen(path, "wb");
    EXPECT(f && fputs("ab\tba\ncd\tdc\n\n  \t \n\r\n", f) >= 0 && fclose(f) == 0, "write %s", path);
    attend_vocab *v = new_vocab();
    attend_dataset *d = NULL;
    attend_error e;
    int skipped = -1;
    EXPECT_STATUS(attend_dataset_read_tsv(&d, path, v, v, 1, NULL, &skipped, &e), ATTEND_OK, e);
    EXPECT(d && attend_dataset_size(d) == 2 && skipped == 0, "pairs %d skipped %d", d ? attend_dataset_size(d) : -1,
           skipped);
    attend_dataset_free(d);
    f = fopen(path, "wb");
    EXPECT(f && fputs("ab\tba\n\n \ncd\tdc\n\n", f) >= 0 && fclose(f) == 0, "write %s", path);
    EXPECT_STATUS(attend_dataset_read_tsv(&d, path, v, v, 1, NULL, &skipped, &e), ATTEND_ERR_FORMAT, e);
    char want[128];
    snprintf(want, sizeof want, "%s:2: blank line", path);
    EXPECT_MSG(e, want);
    attend_tsv_options opt = {ATTEND_TOKENIZE_CHAR, 0, 0, 1, 0};
    EXPECT_STATUS(attend_dataset_read_tsv(&d, path, v, v, 1, &opt, &skipped, &e), ATTEND_OK, e);
    EXPECT(d && attend_dataset_size(d) == 2 && skipped == 2, "pairs %d skipped %d", d ? attend_dataset_size(d) : -1,
           skipped);
    attend_dataset_free(d);
    /* standard input */
    EXPECT(freopen(path, "rb", stdin) != NULL, "freopen");
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "-", v, v, 1, NULL, &skipped, &e), ATTEND_ERR_FORMAT, e);
    EXPECT_MSG(e, "<stdin>:2: blank line");
    EXPECT(freopen(path, "rb", stdin) != NULL, "freopen");
    EXPECT_STATUS(attend_dataset_read_tsv(&d, "-", v, v, 1, &opt, &skipped, &e), ATTEND_OK, e);
    EXPECT(d && attend_dataset_size(d) == 2, "pairs from stdin %d", d ? attend_dataset_size(d) : -1);
    attend_dataset_free(d);
    attend_vocab_free(v);
    remove(path);
}

int main(void) {
    RUN(test_vocab_specials_add_find);
    RUN(test_vocab_encode_decode_char);
    RUN(test_vocab_encode_decode_space);
    RUN(test_vocab_invalid_utf8);
    RUN(test_vocab_json);
    RUN(test_dataset_store);
    RUN(test_task_determinism);
    RUN(test_task_targets);
    RUN(test_task_uniform);
    RUN(test_task_config_errors);
    RUN(test_task_bag_and_shift);
    RUN(test_tsv_good);
    RUN(test_tsv_malformed);
    RUN(test_tsv_skip_mixed);
    RUN(test_tsv_io_and_args);
    RUN(test_tsv_blank_and_stdin);
    return harness_summary();
}
