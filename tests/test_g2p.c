/*
 * test_g2p.c — grapheme-to-phoneme (src/tasks/g2p.c, docs/G2P.md): the dictionary
 * parser's edge cases (alternates, comments, stress, bad lines named
 * label:line, skipping), the split (pinned words, determinism, proportions),
 * PER/WER arithmetic on hand-made cases, datasets, the G2P model check, and
 * the shipped model (models/g2p-cmudict.safetensors) pronouncing a fixed list
 * of common words as CMUdict does (a golden test); evaluation and ensembles,
 * stress, the lexicon, IPA, running text and distillation (test_distill).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "attend.h"
#include "harness.h"
#include "../src/io/text.h" /* at_utf8_valid: the library's one UTF-8 check */

#ifndef ATTEND_G2P_SOURCE_DIR
#define ATTEND_G2P_SOURCE_DIR ".."
#endif
#define SHIPPED_MODEL ATTEND_G2P_SOURCE_DIR "/models/g2p-cmudict.safetensors"
#define SAMPLE_DICT ATTEND_G2P_SOURCE_DIR "/data/g2p/cmudict-sample.dict"
#define STRESS_SAMPLE_DICT ATTEND_G2P_SOURCE_DIR "/data/g2p/cmudict-stress-sample.dict"

static attend_g2p_dict *parse(const char *text, int skip, int stress, attend_error *err) {
    attend_g2p_dict *d = NULL;
    attend_g2p_options o = {stress, skip};
    attend_g2p_dict_parse(&d, text, strlen(text), "t.dict", &o, err);
    return d;
}

static void test_parse_alternates(void) {
    attend_error err;
    const char *text = "hello HH AH0 L OW1\n"
                       "world W ER1 L D\n"
                       "HELLO(2) HH EH0 L OW1\r\n"
                       "hello(3)\tHH AH L OW\n" /* equal to (1) once stress is stripped: dropped */
                       "read R IY1 D\n"
                       "read(2) R EH1 D";      /* no newline at the end */
    attend_g2p_dict *d = parse(text, 0, 0, &err);
    EXPECT(d != NULL, "parse failed: %s", err.msg);
    if (!d) return;
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(d, &in);
    EXPECT(in.lines == 6 && in.entries == 5 && in.words == 3 && in.duplicates == 1,
           "lines %d entries %d words %d duplicates %d", in.lines, in.entries, in.words, in.duplicates);
    EXPECT(!strcmp(attend_g2p_dict_word(d, 0), "hello") && !strcmp(attend_g2p_dict_word(d, 1), "world") &&
               !strcmp(attend_g2p_dict_word(d, 2), "read"),
           "word order");
    EXPECT(attend_g2p_dict_prons(d, 0) == 2, "hello has %d pronunciations", attend_g2p_dict_prons(d, 0));
    EXPECT(!strcmp(attend_g2p_dict_pron(d, 0, 0), "HH AH L OW"), "'%s'", attend_g2p_dict_pron(d, 0, 0));
    EXPECT(!strcmp(attend_g2p_dict_pron(d, 0, 1), "HH EH L OW"), "'%s'", attend_g2p_dict_pron(d, 0, 1));
    EXPECT(!strcmp(attend_g2p_dict_pron(d, 2, 1), "R EH D"), "'%s'", attend_g2p_dict_pron(d, 2, 1));
    EXPECT(attend_g2p_dict_pron(d, 0, 2) == NULL && attend_g2p_dict_word(d, 3) == NULL &&
               attend_g2p_dict_prons(d, -1) == 0,
           "out of range");
    EXPECT(in.max_word_len == 5 && in.max_pron_len == 4, "max %d %d", in.max_word_len, in.max_pron_len);
    attend_g2p_dict_free(d);

    /* keep_stress: the three hellos differ */
    d = parse(text, 0, 1, &err);
    EXPECT(d && attend_g2p_dict_prons(d, 0) == 3, "keep_stress: %d", d ? attend_g2p_dict_prons(d, 0) : -1);
    if (d) EXPECT(!strcmp(attend_g2p_dict_pron(d, 0, 0), "HH AH0 L OW1"), "'%s'", attend_g2p_dict_pron(d, 0, 0));
    attend_g2p_dict_free(d);

    /* an alternate listed before its main entry still joins the same word, in file order */
    d = parse("b(2) B IY\nb B EH\n", 0, 0, &err);
    EXPECT(d && attend_g2p_dict_words(d) == 1 && !strcmp(attend_g2p_dict_pron(d, 0, 0), "B IY"), "out-of-order alternate");
    attend_g2p_dict_free(d);
}

static void test_parse_comments(void) {
    attend_error err;
    const char *text = ";;; a CMUdict 0.7b style header\n"
                       "# a hash comment\n"
                       "\n"
                       "   \t \n"
                       "d'artagnan D AH0 R T AE1 NG Y AH0 N # foreign french\n"
                       "x#y EH K S\n" /* '#' inside a word is not a comment */
                       "  ;;; indented comment\n";
    attend_g2p_dict *d = parse(text, 0, 0, &err);
    EXPECT(d != NULL, "parse failed: %s", err.msg);
    if (!d) return;
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(d, &in);
    EXPECT(in.comments == 3 && in.blank == 2 && in.words == 2, "comments %d blank %d words %d", in.comments, in.blank,
           in.words);
    EXPECT(!strcmp(attend_g2p_dict_pron(d, 0, 0), "D AH R T AE NG Y AH N"), "'%s'", attend_g2p_dict_pron(d, 0, 0));
    EXPECT(!strcmp(attend_g2p_dict_word(d, 1), "x#y"), "'%s'", attend_g2p_dict_word(d, 1));
    attend_g2p_dict_free(d);
    /* empty text: no words, not an error */
    d = parse("", 0, 0, &err);
    EXPECT(d && attend_g2p_dict_words(d) == 0, "empty text");
    attend_g2p_dict_free(d);
}

static void test_parse_bad_lines(void) {
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"ok OW K EY\nlonely\n", "t.dict:2: word 'lonely' has no phonemes"},
        {"ok OW K EY\nfoo(x) F UW\n", "t.dict:2: word 'foo(x)': the alternate marker must be (N)"},
        {"foo(0) F UW\n", "t.dict:1: word 'foo(0)': the alternate marker must be (N)"},
        {"foo() F UW\n", "t.dict:1: word 'foo()': the alternate marker must be (N)"},
        {"(2) F UW\n", "t.dict:1: word '(2)': a ')' without an alternate marker"},
        {"foo f uw\n", "t.dict:1: phoneme 'f' is not upper-case letters"},
        {"foo F UW12\n", "t.dict:1: phoneme 'UW12' is not upper-case letters"},
        {"\n\nfo\xff F UW\n", "t.dict:3: word has invalid UTF-8 at byte 3"},
        {"fo\x01o F UW\n", "t.dict:1: word has control character 0x01 at byte 3"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa EY\n", "t.dict:1: word longer than 64"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        attend_error err = {0};
        attend_g2p_dict *d = parse(cases[i].text, 0, 0, &err);
        EXPECT(d == NULL && err.status == ATTEND_ERR_FORMAT, "case %zu: accepted", i);
        EXPECT(!strncmp(err.msg, cases[i].want, strlen(cases[i].want)), "case %zu: message '%s', want '%s...'", i,
               err.msg, cases[i].want);
        attend_g2p_dict_free(d);
    }
    /* skip_malformed: counted, the first one remembered, the good lines kept */
    attend_error err;
    attend_g2p_dict *d = parse("a EY\nbad\nb B IY\nc(x) S IY\nc S IY\n", 1, 0, &err);
    EXPECT(d != NULL, "skip: %s", err.msg);
    if (d) {
        attend_g2p_dict_info in;
        attend_g2p_dict_get_info(d, &in);
        EXPECT(in.skipped == 2 && in.words == 3, "skipped %d words %d", in.skipped, in.words);
        EXPECT(!strcmp(in.first_skipped, "t.dict:2: word 'bad' has no phonemes"), "'%s'", in.first_skipped);
    }
    attend_g2p_dict_free(d);
    /* a missing file */
    attend_g2p_dict *none = NULL;
    EXPECT(attend_g2p_dict_read(&none, "/nonexistent/x.dict", NULL, &err) == ATTEND_ERR_IO && !none &&
               strstr(err.msg, "/nonexistent/x.dict"),
           "missing file: %s", err.msg);
}

static void test_split(void) {
    /* pinned: changing the hash would silently change every reported number */
    static const struct {
        const char *word;
        attend_g2p_split split;
    } pins[] = {{"hello", ATTEND_G2P_TEST}, {"world", ATTEND_G2P_TRAIN},  {"the", ATTEND_G2P_TRAIN},
                {"aarons", ATTEND_G2P_TEST}, {"abating", ATTEND_G2P_DEV}, {"aaron's", ATTEND_G2P_DEV}};
    for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++) {
        attend_g2p_split s = attend_g2p_split_of(pins[i].word, strlen(pins[i].word));
        EXPECT(s == pins[i].split, "%s: %s, want %s", pins[i].word, attend_g2p_split_name(s),
               attend_g2p_split_name(pins[i].split));
    }
    /* proportions over many synthetic words, and the same answer twice */
    int count[3] = {0, 0, 0};
    char w[16];
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(w, sizeof w, "w%d", i);
        attend_g2p_split s = attend_g2p_split_of(w, (size_t)n);
        EXPECT(s == attend_g2p_split_of(w, (size_t)n), "not deterministic for %s", w);
        count[s]++;
    }
    printf("  split of 20000 words: %d / %d / %d\n", count[0], count[1], count[2]);
    EXPECT(count[0] > 17700 && count[0] < 18300 && count[1] > 850 && count[1] < 1150 && count[2] > 850 &&
               count[2] < 1150,
           "proportions %d %d %d", count[0], count[1], count[2]);
    EXPECT(!strcmp(attend_g2p_split_name(ATTEND_G2P_DEV), "dev"), "name");
}

static void test_dataset(void) {
    attend_error err;
    attend_g2p_dict *d = parse("hello HH AH L OW\nhello(2) HH EH L OW\nworld W ER L D\n", 0, 0, &err);
    attend_vocab *gv = NULL, *pv = NULL;
    attend_dataset *ds = NULL;
    attend_vocab_create(&gv, &err);
    attend_vocab_create(&pv, &err);
    EXPECT(attend_g2p_dataset(&ds, d, ATTEND_G2P_ALL, gv, pv, 1, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_dataset_size(ds) == 3, "pairs %d", attend_dataset_size(ds));
    EXPECT(attend_vocab_size(gv) == 4 + 7 && attend_vocab_size(pv) == 4 + 8, "vocab %d %d", attend_vocab_size(gv),
           attend_vocab_size(pv));
    const int32_t *s, *t;
    int sl, tl;
    if (attend_dataset_size(ds) == 3 && attend_dataset_get(ds, 1, &s, &sl, &t, &tl, &err) == ATTEND_OK) {
        char buf[64];
        attend_vocab_decode(pv, ATTEND_TOKENIZE_SPACE, t, tl, buf, sizeof buf, &err);
        EXPECT(sl == 5 && tl == 4 && !strcmp(buf, "HH EH L OW"), "pair 1: %d %d '%s'", sl, tl, buf);
    }
    attend_dataset_free(ds);
    ds = NULL;
    /* one part only: hello is a test word, world a training word */
    EXPECT(attend_g2p_dataset(&ds, d, ATTEND_G2P_TEST, gv, pv, 0, &err) == ATTEND_OK && attend_dataset_size(ds) == 2,
           "test part: %d pairs", attend_dataset_size(ds));
    attend_dataset_free(ds);
    attend_vocab_free(gv);
    attend_vocab_free(pv);
    attend_g2p_dict_free(d);
}

static void test_edit_distance_and_rates(void) {
    /* kitten -> sitting: 3 (two substitutions, one insertion) */
    const int32_t kitten[] = {'k', 'i', 't', 't', 'e', 'n'}, sitting[] = {'s', 'i', 't', 't', 'i', 'n', 'g'};
    EXPECT(attend_g2p_edit_distance(kitten, 6, sitting, 7) == 3, "kitten/sitting");
    EXPECT(attend_g2p_edit_distance(sitting, 7, kitten, 6) == 3, "symmetric");
    EXPECT(attend_g2p_edit_distance(kitten, 0, sitting, 7) == 7, "empty a");
    EXPECT(attend_g2p_edit_distance(kitten, 6, NULL, 0) == 6, "empty b");
    EXPECT(attend_g2p_edit_distance(kitten, 6, kitten, 6) == 0, "equal");
    EXPECT(attend_g2p_edit_distance(kitten, 65, kitten, 6) == -1, "too long");

    /* three words, phonemes as small ids:
     *   w1 refs {1 2 3 4}, {1 5 3 4}; output 1 5 3 4 -> right (second ref), 0 errors / 4
     *   w2 ref  {6 7 8};              output 6 8     -> wrong, 1 deletion / 3
     *   w3 refs {9 9 9 9 9}, {9 9};   output 9 9 9   -> wrong, closest ref {9 9}: 1 / 2
     * WER = 2/3, PER = (0+1+1)/(4+3+2) = 2/9 */
    attend_g2p_counts c;
    memset(&c, 0, sizeof c);
    attend_error err;
    const int32_t r1a[] = {1, 2, 3, 4}, r1b[] = {1, 5, 3, 4}, h1[] = {1, 5, 3, 4};
    const int32_t *refs1[] = {r1a, r1b};
    int lens1[] = {4, 4};
    EXPECT(attend_g2p_count_word(&c, h1, 4, refs1, lens1, 2, &err) == ATTEND_OK, "%s", err.msg);
    const int32_t r2[] = {6, 7, 8}, h2[] = {6, 8};
    const int32_t *refs2[] = {r2};
    int lens2[] = {3};
    EXPECT(attend_g2p_count_word(&c, h2, 2, refs2, lens2, 1, &err) == ATTEND_OK, "%s", err.msg);
    const int32_t r3a[] = {9, 9, 9, 9, 9}, r3b[] = {9, 9}, h3[] = {9, 9, 9};
    const int32_t *refs3[] = {r3a, r3b};
    int lens3[] = {5, 2};
    EXPECT(attend_g2p_count_word(&c, h3, 3, refs3, lens3, 2, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(c.words == 3 && c.wrong == 2 && c.phone_errors == 2 && c.ref_phones == 9, "counts %ld %ld %ld %ld", c.words,
           c.wrong, c.phone_errors, c.ref_phones);
    EXPECT_NEAR("WER 2/3", attend_g2p_wer(&c), 2.0 / 3.0, 1e-15);
    EXPECT_NEAR("PER 2/9", attend_g2p_per(&c), 2.0 / 9.0, 1e-15);
    /* an empty output against a 4-phoneme reference: 4 errors */
    attend_g2p_counts e;
    memset(&e, 0, sizeof e);
    attend_g2p_count_word(&e, NULL, 0, refs1, lens1, 1, &err);
    EXPECT(e.wrong == 1 && e.phone_errors == 4 && e.ref_phones == 4, "empty output");
    /* bad arguments */
    EXPECT(attend_g2p_count_word(&c, h1, 4, refs1, lens1, 0, &err) == ATTEND_ERR_ARG, "no refs");
    int zero[] = {0};
    EXPECT(attend_g2p_count_word(&c, h1, 4, refs1, zero, 1, &err) == ATTEND_ERR_CAPACITY, "empty ref");
    attend_g2p_counts none;
    memset(&none, 0, sizeof none);
    EXPECT(attend_g2p_wer(&none) == 0 && attend_g2p_per(&none) == 0 && attend_g2p_wer(NULL) == 0, "empty counts");
}

/* A model file that is not a G2P model is refused, naming why. */
static void test_model_check(void) {
    attend_error err;
    attend_vocab *v = NULL;
    attend_vocab_create(&v, &err);
    attend_vocab_add(v, "a", 1, NULL, &err);
    attend_vocab_add(v, "b", 1, NULL, &err);
    attend_model_config c;
    memset(&c, 0, sizeof c);
    c.cell = ATTEND_CELL_GRU;
    c.decoder = ATTEND_DECODER_BAHDANAU;
    c.score = ATTEND_SCORE_ADDITIVE;
    c.src_vocab = c.tgt_vocab = attend_vocab_size(v);
    c.emb = c.enc_hidden = c.dec_hidden = c.attn = 4;
    c.enc_layers = 1;
    c.max_batch = 1;
    c.max_src_len = c.max_tgt_len = 4;
    attend_model *m = NULL, *got = NULL;
    attend_vocab *gv = NULL, *pv = NULL;
    EXPECT(attend_model_create(&m, &c, 1, &err) == ATTEND_OK, "%s", err.msg);
    char path[64];
    snprintf(path, sizeof path, "/tmp/attend_test_g2p_%ld.safetensors", (long)getpid());
    attend_model_save(m, path, v, v, ATTEND_TOKENIZE_SPACE, &err);
    EXPECT(attend_g2p_model_load(&got, path, NULL, &gv, &pv, &err) == ATTEND_ERR_FORMAT && !got && !gv &&
               strstr(err.msg, "tokenizer is 'space'"),
           "space tokenizer: %s", err.msg);
    attend_model_save(m, path, v, v, ATTEND_TOKENIZE_CHAR, &err);
    EXPECT(attend_g2p_model_load(&got, path, NULL, &gv, &pv, &err) == ATTEND_ERR_FORMAT &&
               strstr(err.msg, "output token 4 'a' is not a phoneme"),
           "lower-case outputs: %s", err.msg);
    remove(path);
    attend_model_free(m);
    attend_vocab_free(v);
}

/* 1 when s is one of the '|'-separated alternatives in list. */
static int one_of(const char *s, const char *list) {
    size_t n = strlen(s);
    for (const char *p = list;;) {
        size_t k = strcspn(p, "|");
        if (k == n && !strncmp(p, s, n)) return 1;
        if (!p[k]) return 0;
        p += k + 1;
    }
}

/* The shipped model says these common words as CMUdict does (any of the
 * word's pronunciations). Most are training words; "hello" is a test word. */
static void test_shipped_model(void) {
    /* every CMUdict pronunciation of the word, separated by '|' */
    static const char *const golden[][2] = {
        {"hello", "HH AH L OW|HH EH L OW"},
        {"world", "W ER L D"},
        {"the", "DH AH|DH IY"},
        {"cat", "K AE T"},
        {"dog", "D AO G"},
        {"computer", "K AH M P Y UW T ER"},
        {"language", "L AE NG G W AH JH|L AE NG G W IH JH"},
        {"water", "W AO T ER"},
        {"house", "HH AW S"},
        {"phone", "F OW N"},
        {"speech", "S P IY CH"},
        {"attention", "AH T EH N SH AH N"},
        {"thinking", "TH IH NG K IH NG"},
        {"quickly", "K W IH K L IY"},
        {"bright", "B R AY T"},
        {"train", "T R EY N"},
    };
    attend_error err;
    attend_model *m = NULL;
    attend_vocab *gv = NULL, *pv = NULL;
    attend_model_config cap;
    memset(&cap, 0, sizeof cap);
    cap.max_batch = 1;
    cap.max_src_len = 32;
    cap.max_tgt_len = 32;
    EXPECT(attend_g2p_model_load(&m, SHIPPED_MODEL, &cap, &gv, &pv, &err) == ATTEND_OK, "%s", err.msg);
    if (!m) return;
    /* the file within 5 MB (issue 14: fp16 storage allowed) */
    FILE *f = fopen(SHIPPED_MODEL, "rb");
    long bytes = -1;
    if (f && fseek(f, 0, SEEK_END) == 0) bytes = ftell(f);
    if (f) fclose(f);
    EXPECT(bytes > 0 && bytes <= 5000000, "the shipped model file is %ld bytes, over 5 MB (%zu parameters)", bytes,
           attend_model_param_count(m));
    char out[1024];
    int right = 0, n = (int)(sizeof golden / sizeof golden[0]);
    for (int i = 0; i < n; i++) {
        attend_status st = attend_g2p_pronounce(m, gv, pv, golden[i][0], strlen(golden[i][0]), out, sizeof out, &err);
        EXPECT(st == ATTEND_OK, "%s: %s", golden[i][0], err.msg);
        int ok = one_of(out, golden[i][1]);
        EXPECT(ok, "%s: got '%s', want one of '%s'", golden[i][0], out, golden[i][1]);
        right += ok;
    }
    printf("  shipped model: %d/%d golden words right\n", right, n);
    /* upper case is folded; an over-long word or a space is refused */
    EXPECT(attend_g2p_pronounce(m, gv, pv, "HeLLo", 5, out, sizeof out, &err) == ATTEND_OK &&
               one_of(out, golden[0][1]),
           "HeLLo: '%s'", out);
    EXPECT(attend_g2p_pronounce(m, gv, pv, "two words", 9, out, sizeof out, &err) == ATTEND_ERR_ARG, "space");
    EXPECT(attend_g2p_pronounce(m, gv, pv, "", 0, out, sizeof out, &err) == ATTEND_ERR_ARG, "empty");
    char longw[40];
    memset(longw, 'a', sizeof longw);
    EXPECT(attend_g2p_pronounce(m, gv, pv, longw, sizeof longw, out, sizeof out, &err) == ATTEND_ERR_CAPACITY,
           "40 letters with max_src_len 32: %s", err.msg);
    EXPECT(attend_g2p_pronounce(m, gv, pv, "hello", 5, out, 4, &err) == ATTEND_ERR_CAPACITY, "small buffer");
    attend_model_free(m);
    attend_vocab_free(gv);
    attend_vocab_free(pv);
}

/* The committed sample and the shipped model with room for its words
 * (max_batch 16); *m is NULL when either could not be loaded (reported). */
static void load_sample_and_model(attend_g2p_dict **d, attend_model **m, attend_vocab **gv, attend_vocab **pv) {
    attend_error err;
    *m = NULL;
    *gv = *pv = NULL;
    EXPECT(attend_g2p_dict_read(d, SAMPLE_DICT, NULL, &err) == ATTEND_OK, "%s", err.msg);
    if (!*d) return;
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(*d, &in);
    EXPECT(in.comments == 3 && in.entries > 3000, "sample: %d comments, %d entries", in.comments, in.entries);
    attend_model_config cap;
    memset(&cap, 0, sizeof cap);
    cap.max_batch = 16;
    cap.max_src_len = in.max_word_len;
    EXPECT(attend_g2p_model_load(m, SHIPPED_MODEL, &cap, gv, pv, &err) == ATTEND_OK, "%s", err.msg);
}

/* Evaluation of the shipped model on the committed sample: counts add up,
 * greedy and beam agree on the word count, rates are sane. */
static void test_evaluate_sample(void) {
    attend_error err;
    attend_g2p_dict *d = NULL;
    attend_model *m = NULL;
    attend_vocab *gv = NULL, *pv = NULL;
    load_sample_and_model(&d, &m, &gv, &pv);
    if (!d) return;
    long dev_words = 0;
    for (int w = 0; w < attend_g2p_dict_words(d); w++)
        dev_words += attend_g2p_split_of(attend_g2p_dict_word(d, w), strlen(attend_g2p_dict_word(d, w))) ==
                     ATTEND_G2P_DEV;
    if (m) {
        attend_g2p_counts g, b;
        attend_g2p_eval_options eo = {0, 0, 16, 0, 0, 0};
        EXPECT(attend_g2p_evaluate(m, d, ATTEND_G2P_DEV, gv, pv, &eo, &g, &err) == ATTEND_OK, "%s", err.msg);
        eo.beam = 4;
        EXPECT(attend_g2p_evaluate(m, d, ATTEND_G2P_DEV, gv, pv, &eo, &b, &err) == ATTEND_OK, "%s", err.msg);
        printf("  sample dev: %ld words, greedy PER %.2f%% WER %.2f%%, beam 4 PER %.2f%% WER %.2f%%\n", g.words,
               100 * attend_g2p_per(&g), 100 * attend_g2p_wer(&g), 100 * attend_g2p_per(&b), 100 * attend_g2p_wer(&b));
        EXPECT(g.words == dev_words && b.words == dev_words, "words %ld %ld, want %ld", g.words, b.words, dev_words);
        EXPECT(attend_g2p_wer(&g) < 0.5 && attend_g2p_per(&g) < 0.15, "greedy rates too high");
        EXPECT(g.phone_errors <= g.ref_phones * 2 && g.wrong <= g.words, "counts");
        /* max_words and a batch above max_batch */
        eo.beam = 0;
        eo.max_words = 10;
        EXPECT(attend_g2p_evaluate(m, d, ATTEND_G2P_DEV, gv, pv, &eo, &g, &err) == ATTEND_OK && g.words == 10,
               "max_words: %ld", g.words);
        eo.batch = 17;
        EXPECT(attend_g2p_evaluate(m, d, ATTEND_G2P_DEV, gv, pv, &eo, &g, &err) == ATTEND_ERR_CAPACITY, "batch 17");
    }
    attend_model_free(m);
    attend_vocab_free(gv);
    attend_vocab_free(pv);
    attend_g2p_dict_free(d);
}

/* An ensemble evaluation (issue 14 part 7): one model is attend_g2p_evaluate
 * exactly; two clones of it give the same counts (greedy and beam) and the
 * same pronunciations one word at a time (attend_g2p_pronounce_ensemble,
 * issue 29); the coverage penalty and bad arguments are refused. */
static void test_evaluate_ensemble(void) {
    attend_error err;
    attend_g2p_dict *d = NULL;
    attend_model *m = NULL, *m2 = NULL;
    attend_vocab *gv = NULL, *pv = NULL;
    load_sample_and_model(&d, &m, &gv, &pv);
    if (!d) return;
    EXPECT(!m || attend_model_clone(&m2, m, &err) == ATTEND_OK, "%s", err.msg);
    if (m && m2) {
        EXPECT(!attend_g2p_vocab_has_stress(pv), "the shipped model has no stress");
        attend_model *both[2] = {m, m2};
        for (int beam = 0; beam <= 3; beam += 3) {
            attend_g2p_eval_options eo = {beam, 0, 16, 120, 0, 0};
            attend_g2p_counts one, ens1, ens2;
            EXPECT(attend_g2p_evaluate(m, d, ATTEND_G2P_DEV, gv, pv, &eo, &one, &err) == ATTEND_OK, "%s", err.msg);
            EXPECT(attend_g2p_evaluate_ensemble(both, 1, d, ATTEND_G2P_DEV, gv, pv, &eo, &ens1, &err) == ATTEND_OK,
                   "%s", err.msg);
            EXPECT(attend_g2p_evaluate_ensemble(both, 2, d, ATTEND_G2P_DEV, gv, pv, &eo, &ens2, &err) == ATTEND_OK,
                   "%s", err.msg);
            EXPECT(!memcmp(&one, &ens1, sizeof one) && !memcmp(&one, &ens2, sizeof one),
                   "beam %d: single %ld/%ld/%ld, M=1 %ld/%ld/%ld, two clones %ld/%ld/%ld", beam, one.wrong,
                   one.phone_errors, one.ref_phones, ens1.wrong, ens1.phone_errors, ens1.ref_phones, ens2.wrong,
                   ens2.phone_errors, ens2.ref_phones);
            EXPECT(one.words == 120, "words %ld", one.words);
        }
        /* pronouncing one word: an ensemble of two clones says what one model says */
        const char *words[] = {"hello", "attention", "xylophone", "read", "quixotic"};
        for (int i = 0; i < 5; i++) {
            char one[256], two[256];
            EXPECT(attend_g2p_pronounce(m, gv, pv, words[i], strlen(words[i]), one, sizeof one, &err) == ATTEND_OK,
                   "%s", err.msg);
            EXPECT(attend_g2p_pronounce_ensemble(both, 2, gv, pv, words[i], strlen(words[i]), two, sizeof two,
                                                 &err) == ATTEND_OK,
                   "%s", err.msg);
            EXPECT(!strcmp(one, two) && one[0], "%s: one model '%s', two clones '%s'", words[i], one, two);
        }
        char buf[64];
        attend_model *holey1[2] = {m, NULL};
        EXPECT(attend_g2p_pronounce_ensemble(holey1, 2, gv, pv, "cat", 3, buf, sizeof buf, &err) == ATTEND_ERR_NULL &&
                   strstr(err.msg, "model 1 is NULL"),
               "NULL member: %s", err.msg);
        EXPECT(attend_g2p_pronounce_ensemble(both, 0, gv, pv, "cat", 3, buf, sizeof buf, &err) == ATTEND_ERR_ARG,
               "0 models: %s", err.msg);
        attend_g2p_eval_options eo = {3, 0, 16, 10, 0.2, 0};
        attend_g2p_counts c;
        EXPECT(attend_g2p_evaluate_ensemble(both, 2, d, ATTEND_G2P_DEV, gv, pv, &eo, &c, &err) == ATTEND_ERR_ARG &&
                   strstr(err.msg, "coverage penalty"),
               "coverage penalty with 2 models: %s", err.msg);
        EXPECT(attend_g2p_evaluate_ensemble(both, 0, d, ATTEND_G2P_DEV, gv, pv, &eo, &c, &err) == ATTEND_ERR_ARG,
               "0 models");
        attend_model *holey[2] = {m, NULL};
        eo.coverage_penalty = 0;
        EXPECT(attend_g2p_evaluate_ensemble(holey, 2, d, ATTEND_G2P_DEV, gv, pv, &eo, &c, &err) == ATTEND_ERR_NULL &&
                   strstr(err.msg, "model 1"),
               "NULL member: %s", err.msg);
    }
    attend_model_free(m);
    attend_model_free(m2);
    attend_vocab_free(gv);
    attend_vocab_free(pv);
    attend_g2p_dict_free(d);
}

/* 1 when word w of a and word v of b are the same word with the same
 * pronunciations in the same order. */
static int same_word(const attend_g2p_dict *a, int w, const attend_g2p_dict *b, int v) {
    if (strcmp(attend_g2p_dict_word(a, w), attend_g2p_dict_word(b, v)) ||
        attend_g2p_dict_prons(a, w) != attend_g2p_dict_prons(b, v))
        return 0;
    for (int k = 0; k < attend_g2p_dict_prons(a, w); k++)
        if (strcmp(attend_g2p_dict_pron(a, w, k), attend_g2p_dict_pron(b, v, k))) return 0;
    return 1;
}

static int same_dict(const attend_g2p_dict *a, const attend_g2p_dict *b) {
    if (attend_g2p_dict_words(a) != attend_g2p_dict_words(b)) return 0;
    for (int w = 0; w < attend_g2p_dict_words(a); w++)
        if (!same_word(a, w, b, w)) return 0;
    return 1;
}

/* attend_g2p_distill (issue 29 item 4) with planted answers: a dictionary of
 * the teacher's own pronunciations gives agree == words and itself back; on
 * the sample, every train word keeps its references first (BOTH) and gets the
 * teacher's one-word pronunciation (attend_g2p_pronounce, an independent
 * route) last when it differs from all of them, or alone (TEACHER); every
 * other word keeps its references; an ensemble of two clones gives what one
 * model gives; outputs cut at the length limit keep the references; errors. */
static void test_distill(void) {
    attend_error err;
    attend_g2p_dict *d = NULL, *own = NULL, *out = NULL, *out2 = NULL;
    attend_model *m = NULL, *m2 = NULL;
    attend_vocab *gv = NULL, *pv = NULL;
    load_sample_and_model(&d, &m, &gv, &pv);
    if (!d || !m) goto done;
    EXPECT(attend_model_clone(&m2, m, &err) == ATTEND_OK, "%s", err.msg);
    if (!m2) goto done;
    attend_model *both[2] = {m, m2};
    int nw = attend_g2p_dict_words(d);
    long train = 0;
    char pron[256];
    /* the teacher's own pronunciations (batch 1) as a dictionary */
    size_t cap = (size_t)nw * 300, len = 0;
    char *text = malloc(cap);
    EXPECT(text != NULL, "out of memory");
    if (!text) goto done;
    for (int w = 0; w < nw; w++) {
        const char *word = attend_g2p_dict_word(d, w);
        train += attend_g2p_split_of(word, strlen(word)) == ATTEND_G2P_TRAIN;
        EXPECT(attend_g2p_pronounce(m, gv, pv, word, strlen(word), pron, sizeof pron, &err) == ATTEND_OK, "%s: %s",
               word, err.msg);
        len += (size_t)snprintf(text + len, cap - len, "%s %s\n", word, pron);
    }
    EXPECT(attend_g2p_dict_parse(&own, text, len, "own", NULL, &err) == ATTEND_OK, "%s", err.msg);
    free(text);
    if (!own) goto done;
    for (int tg = ATTEND_G2P_TARGETS_TEACHER; tg <= ATTEND_G2P_TARGETS_BOTH; tg++) {
        attend_g2p_distill_info di = {-1, -1, -1, -1};
        EXPECT(attend_g2p_distill(both, 1, own, ATTEND_G2P_TRAIN, gv, pv, (attend_g2p_targets)tg, &out, &di, &err) ==
                   ATTEND_OK,
               "%s", err.msg);
        EXPECT(di.words == train && di.agree == train && di.differ == 0 && di.failed == 0,
               "own pronunciations, targets %d: words %ld (train %ld) agree %ld differ %ld failed %ld", tg, di.words,
               train, di.agree, di.differ, di.failed);
        EXPECT(out && same_dict(out, own), "own pronunciations, targets %d: not the dictionary itself", tg);
        attend_g2p_dict_free(out);
        out = NULL;
    }
    /* the sample: references kept first, the teacher's pronunciation after */
    for (int tg = ATTEND_G2P_TARGETS_TEACHER; tg <= ATTEND_G2P_TARGETS_BOTH; tg++) {
        attend_g2p_distill_info di = {0, 0, 0, 0};
        EXPECT(attend_g2p_distill(both, 1, d, ATTEND_G2P_TRAIN, gv, pv, (attend_g2p_targets)tg, &out, &di, &err) ==
                   ATTEND_OK,
               "%s", err.msg);
        EXPECT(attend_g2p_distill(both, 2, d, ATTEND_G2P_TRAIN, gv, pv, (attend_g2p_targets)tg, &out2, NULL, &err) ==
                   ATTEND_OK,
               "%s", err.msg);
        if (!out || !out2) break;
        EXPECT(same_dict(out, out2), "targets %d: an ensemble of two clones differs from one model", tg);
        EXPECT(attend_g2p_dict_words(out) == nw, "targets %d: %d words, want %d", tg, attend_g2p_dict_words(out), nw);
        long agree = 0, differ = 0, bad = 0, outside = 0;
        for (int w = 0; w < nw && w < attend_g2p_dict_words(out); w++) {
            const char *word = attend_g2p_dict_word(d, w);
            if (attend_g2p_split_of(word, strlen(word)) != ATTEND_G2P_TRAIN) {
                outside++;
                bad += !same_word(d, w, out, w);
                continue;
            }
            EXPECT(attend_g2p_pronounce(m, gv, pv, word, strlen(word), pron, sizeof pron, &err) == ATTEND_OK, "%s",
                   err.msg);
            int c = attend_g2p_dict_prons(d, w), eq = 0;
            for (int k = 0; k < c; k++) eq |= !strcmp(attend_g2p_dict_pron(d, w, k), pron);
            agree += eq;
            differ += !eq;
            int n = attend_g2p_dict_prons(out, w), ok = !strcmp(attend_g2p_dict_word(out, w), word);
            if (tg == ATTEND_G2P_TARGETS_TEACHER) {
                ok = ok && n == 1 && !strcmp(attend_g2p_dict_pron(out, w, 0), pron);
            } else {
                ok = ok && n == c + !eq;
                for (int k = 0; ok && k < c; k++)
                    ok = !strcmp(attend_g2p_dict_pron(out, w, k), attend_g2p_dict_pron(d, w, k));
                if (ok && !eq) ok = !strcmp(attend_g2p_dict_pron(out, w, c), pron);
            }
            if (!ok && bad < 3)
                EXPECT(0, "targets %d: '%s' has %d pronunciations, first '%s'; teacher '%s'", tg, word, n,
                       n ? attend_g2p_dict_pron(out, w, 0) : "", pron);
            bad += !ok;
        }
        EXPECT(bad == 0, "targets %d: %ld words wrong", tg, bad);
        EXPECT(di.words == train && di.agree == agree && di.differ == differ && di.failed == 0,
               "targets %d: words %ld agree %ld differ %ld failed %ld, want %ld %ld %ld 0", tg, di.words, di.agree,
               di.differ, di.failed, train, agree, differ);
        EXPECT(outside > 300 && differ > 0 && agree > differ, "sample: %ld outside train, %ld agree, %ld differ",
               outside, agree, differ);
        attend_g2p_dict_free(out);
        attend_g2p_dict_free(out2);
        out = out2 = NULL;
    }
    /* ALL: every word decoded */
    {
        attend_g2p_distill_info di = {0, 0, 0, 0};
        EXPECT(attend_g2p_distill(both, 1, d, ATTEND_G2P_ALL, gv, pv, ATTEND_G2P_TARGETS_BOTH, &out, &di, &err) ==
                       ATTEND_OK &&
                   di.words == nw,
               "split all: %ld words of %d (%s)", di.words, nw, err.msg);
        attend_g2p_dict_free(out);
        out = NULL;
    }
    /* a teacher cut at the length limit: outputs of 3 phonemes or more are
     * unusable and keep the references */
    {
        attend_model *shortm = NULL;
        attend_vocab *g2 = NULL, *p2 = NULL;
        attend_model_config capc;
        memset(&capc, 0, sizeof capc);
        capc.max_batch = 16;
        capc.max_src_len = 40;
        capc.max_tgt_len = 2;
        EXPECT(attend_g2p_model_load(&shortm, SHIPPED_MODEL, &capc, &g2, &p2, &err) == ATTEND_OK, "%s", err.msg);
        attend_g2p_distill_info di = {0, 0, 0, 0};
        if (shortm)
            EXPECT(attend_g2p_distill(&shortm, 1, own, ATTEND_G2P_TRAIN, g2, p2, ATTEND_G2P_TARGETS_TEACHER, &out, &di,
                                      &err) == ATTEND_OK,
                   "%s", err.msg);
        long longer = 0;
        for (int w = 0; out && w < nw; w++) {
            const char *word = attend_g2p_dict_word(own, w), *p = attend_g2p_dict_pron(own, w, 0);
            int nph = 1;
            for (const char *c = p; *c; c++) nph += *c == ' ';
            if (attend_g2p_split_of(word, strlen(word)) == ATTEND_G2P_TRAIN) longer += nph >= 3;
        }
        EXPECT(out && same_dict(out, own) && di.failed == longer && longer > 100 &&
                   di.agree + di.differ + di.failed == di.words,
               "cut teacher: failed %ld, want %ld; agree %ld differ %ld words %ld", di.failed, longer, di.agree,
               di.differ, di.words);
        attend_g2p_dict_free(out);
        out = NULL;
        attend_model_free(shortm);
        attend_vocab_free(g2);
        attend_vocab_free(p2);
    }
    /* bad input */
    {
        attend_g2p_targets T = ATTEND_G2P_TARGETS_BOTH;
        out = (attend_g2p_dict *)1;
        EXPECT(attend_g2p_distill(NULL, 1, d, ATTEND_G2P_TRAIN, gv, pv, T, &out, NULL, &err) == ATTEND_ERR_NULL &&
                   !out && strstr(err.msg, "models is NULL"),
               "NULL models: %s", err.msg);
        EXPECT(attend_g2p_distill(both, 1, NULL, ATTEND_G2P_TRAIN, gv, pv, T, &out, NULL, &err) == ATTEND_ERR_NULL &&
                   strstr(err.msg, "dictionary is NULL"),
               "NULL dictionary: %s", err.msg);
        EXPECT(attend_g2p_distill(both, 1, d, ATTEND_G2P_TRAIN, gv, pv, T, NULL, NULL, &err) == ATTEND_ERR_NULL,
               "NULL out: %s", err.msg);
        EXPECT(attend_g2p_distill(both, 0, d, ATTEND_G2P_TRAIN, gv, pv, T, &out, NULL, &err) == ATTEND_ERR_ARG &&
                   strstr(err.msg, "0 models"),
               "0 models: %s", err.msg);
        attend_model *holey[2] = {m, NULL};
        EXPECT(attend_g2p_distill(holey, 2, d, ATTEND_G2P_TRAIN, gv, pv, T, &out, NULL, &err) == ATTEND_ERR_NULL &&
                   strstr(err.msg, "model 1 is NULL"),
               "NULL member: %s", err.msg);
        EXPECT(attend_g2p_distill(both, 1, d, (attend_g2p_split)9, gv, pv, T, &out, NULL, &err) == ATTEND_ERR_ARG &&
                   strstr(err.msg, "split 9"),
               "split 9: %s", err.msg);
        EXPECT(attend_g2p_distill(both, 1, d, ATTEND_G2P_TRAIN, gv, pv, (attend_g2p_targets)0, &out, NULL, &err) ==
                       ATTEND_ERR_ARG &&
                   strstr(err.msg, "targets 0"),
               "targets 0: %s", err.msg);
        /* an ensemble of members with different phone sets: the shipped stress model */
        attend_model *sm = NULL;
        attend_vocab *sg = NULL, *sp = NULL;
        EXPECT(attend_g2p_model_load(&sm, ATTEND_G2P_SOURCE_DIR "/models/g2p-cmudict-stress.safetensors", NULL, &sg,
                                     &sp, &err) == ATTEND_OK,
               "%s", err.msg);
        if (sm) {
            attend_model *mixed[2] = {m, sm};
            char want[128];
            snprintf(want, sizeof want, "model 1 has %d phonemes, the vocabulary given has %d", attend_vocab_size(sp),
                     attend_vocab_size(pv));
            EXPECT(attend_g2p_distill(mixed, 2, d, ATTEND_G2P_TRAIN, gv, pv, T, &out, NULL, &err) == ATTEND_ERR_ARG &&
                       !out && strstr(err.msg, want),
                   "different phone sets: %s (want '%s')", err.msg, want);
        }
        attend_model_free(sm);
        attend_vocab_free(sg);
        attend_vocab_free(sp);
        /* a train word longer than the teacher's max_src_len is named */
        char word[80] = "pneumonoultramicroscopicsilicovolcanoconiosis";
        for (char c = 'a'; attend_g2p_split_of(word, strlen(word)) != ATTEND_G2P_TRAIN; c++) {
            size_t n = strlen(word);
            word[n] = c;
            word[n + 1] = '\0';
        }
        char line[160];
        snprintf(line, sizeof line, "cat K AE T\n%s N UW\n", word);
        attend_g2p_dict *ld = NULL;
        EXPECT(attend_g2p_dict_parse(&ld, line, strlen(line), "long", NULL, &err) == ATTEND_OK, "%s", err.msg);
        if (ld)
            EXPECT(attend_g2p_distill(both, 1, ld, ATTEND_G2P_TRAIN, gv, pv, T, &out, NULL, &err) ==
                           ATTEND_ERR_CAPACITY &&
                       !out && strstr(err.msg, word) && strstr(err.msg, "max_src_len"),
                   "long word: %s", err.msg);
        attend_g2p_dict_free(ld);
        out = NULL;
    }
done:
    attend_g2p_dict_free(own);
    attend_model_free(m);
    attend_model_free(m2);
    attend_vocab_free(gv);
    attend_vocab_free(pv);
    attend_g2p_dict_free(d);
}

/* The stress letters of a phoneme: its text without a trailing digit. */
static size_t stress_free_len(const char *t) {
    size_t n = strlen(t);
    return n >= 2 && t[n - 1] >= '0' && t[n - 1] <= '9' ? n - 1 : n;
}

/* A space-separated pronunciation as ids of stress-free phonemes, interned in
 * names [cap][8] (an independent route to what ignore_stress compares). */
static int intern_pron(const char *p, char (*names)[8], int *nnames, int cap, int32_t *ids) {
    int n = 0;
    while (*p) {
        size_t len = strcspn(p, " ");
        char tok[8] = {0};
        memcpy(tok, p, len < 7 ? len : 7);
        tok[stress_free_len(tok)] = '\0';
        int id = -1;
        for (int k = 0; k < *nnames; k++)
            if (!strcmp(names[k], tok)) id = k;
        if (id < 0 && *nnames < cap) {
            strcpy(names[*nnames], tok);
            id = (*nnames)++;
        }
        ids[n++] = id;
        p += len;
        while (*p == ' ') p++;
    }
    return n;
}

/* keep_stress end to end: a small model trained on the committed stressed
 * sample learns stressed phonemes (attend_g2p_vocab_has_stress), and the
 * ignore_stress counts equal ones computed here from the decoded text with
 * the digits dropped. */
static void test_stress(void) {
    attend_error err;
    attend_g2p_dict *d = NULL;
    attend_g2p_options o = {1, 0};
    EXPECT(attend_g2p_dict_read(&d, STRESS_SAMPLE_DICT, &o, &err) == ATTEND_OK, "%s", err.msg);
    if (!d) return;
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(d, &in);
    attend_vocab *gv = NULL, *pv = NULL;
    attend_dataset *train = NULL;
    attend_model *m = NULL;
    attend_trainer *tr = NULL;
    EXPECT(attend_vocab_create(&gv, &err) == ATTEND_OK && attend_vocab_create(&pv, &err) == ATTEND_OK &&
               attend_g2p_dataset(&train, d, ATTEND_G2P_TRAIN, gv, pv, 1, &err) == ATTEND_OK,
           "%s", err.msg);
    if (!train) goto done;
    EXPECT(attend_g2p_vocab_has_stress(pv) && attend_vocab_size(pv) > 4 + 60, "stressed phonemes: %d",
           attend_vocab_size(pv) - 4);
    attend_model_config mc;
    memset(&mc, 0, sizeof mc);
    mc.cell = ATTEND_CELL_GRU;
    mc.decoder = ATTEND_DECODER_BAHDANAU;
    mc.score = ATTEND_SCORE_ADDITIVE;
    mc.src_vocab = attend_vocab_size(gv);
    mc.tgt_vocab = attend_vocab_size(pv);
    mc.emb = 16;
    mc.enc_hidden = 32;
    mc.enc_layers = 1;
    mc.dec_hidden = 64;
    mc.attn = 32;
    mc.max_batch = 32;
    mc.max_src_len = in.max_word_len;
    mc.max_tgt_len = in.max_pron_len;
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = 5e-3;
    EXPECT(attend_model_create(&m, &mc, 7, &err) == ATTEND_OK &&
               attend_trainer_create(&tr, m, &oc, train, 32, 7, &err) == ATTEND_OK,
           "%s", err.msg);
    if (!tr) goto done;
    attend_step_report rep;
    for (int s = 0; s < 300; s++) EXPECT(attend_trainer_step(tr, &rep, &err) == ATTEND_OK, "%s", err.msg);
    attend_g2p_eval_options eo = {0, 0, 32, 0, 0, 0};
    attend_g2p_counts kept, ignored;
    EXPECT(attend_g2p_evaluate(m, d, ATTEND_G2P_DEV, gv, pv, &eo, &kept, &err) == ATTEND_OK, "%s", err.msg);
    eo.ignore_stress = 1;
    EXPECT(attend_g2p_evaluate(m, d, ATTEND_G2P_DEV, gv, pv, &eo, &ignored, &err) == ATTEND_OK, "%s", err.msg);
    /* the same counts from the decoded text */
    attend_g2p_counts want = {0, 0, 0, 0};
    char names[128][8];
    int nnames = 0, with_digit = 0;
    for (int w = 0; w < attend_g2p_dict_words(d); w++) {
        const char *word = attend_g2p_dict_word(d, w);
        if (attend_g2p_split_of(word, strlen(word)) != ATTEND_G2P_DEV) continue;
        char out[ATTEND_G2P_MAX_LEN * 8];
        EXPECT(attend_g2p_pronounce(m, gv, pv, word, strlen(word), out, sizeof out, &err) == ATTEND_OK, "%s",
               err.msg);
        with_digit += strpbrk(out, "012") != NULL;
        int32_t hyp[ATTEND_G2P_MAX_LEN], refs[8][ATTEND_G2P_MAX_LEN];
        const int32_t *refp[8];
        int ref_lens[8], nh = intern_pron(out, names, &nnames, 128, hyp), nr = attend_g2p_dict_prons(d, w);
        for (int r = 0; r < nr && r < 8; r++) {
            ref_lens[r] = intern_pron(attend_g2p_dict_pron(d, w, r), names, &nnames, 128, refs[r]);
            refp[r] = refs[r];
        }
        EXPECT(attend_g2p_count_word(&want, hyp, nh, refp, ref_lens, nr < 8 ? nr : 8, &err) == ATTEND_OK, "%s",
               err.msg);
    }
    printf("  stressed sample dev: %ld words; with stress PER %.2f%% WER %.2f%%, ignoring it PER %.2f%% WER "
           "%.2f%%; %d outputs carry a stress digit\n",
           kept.words, 100 * attend_g2p_per(&kept), 100 * attend_g2p_wer(&kept), 100 * attend_g2p_per(&ignored),
           100 * attend_g2p_wer(&ignored), with_digit);
    EXPECT(with_digit > kept.words / 2, "only %d of %ld outputs have stress digits", with_digit, kept.words);
    EXPECT(!memcmp(&want, &ignored, sizeof want), "ignore_stress %ld/%ld/%ld/%ld, from the text %ld/%ld/%ld/%ld",
           ignored.words, ignored.wrong, ignored.phone_errors, ignored.ref_phones, want.words, want.wrong,
           want.phone_errors, want.ref_phones);
    EXPECT(ignored.wrong <= kept.wrong && ignored.phone_errors < kept.phone_errors,
           "ignoring stress should forgive some phonemes: %ld vs %ld wrong words, %ld vs %ld phoneme errors",
           ignored.wrong, kept.wrong, ignored.phone_errors, kept.phone_errors);
done:
    attend_trainer_free(tr);
    attend_model_free(m);
    attend_dataset_free(train);
    attend_vocab_free(gv);
    attend_vocab_free(pv);
    attend_g2p_dict_free(d);
}

/* The lexicon (issue 29): built from a parsed dictionary, looked up with case
 * folded, alternates in order, the file form saved and loaded back byte for
 * byte, damaged files refused, the model's phoneme set checked. */
static void test_lexicon(void) {
    attend_error err;
    const char *text = "read R IY D\nread(2) R EH D\nHELLO HH AH L OW\nhello(2) HH EH L OW\na AH\na(2) EY\n"
                       "zebra Z IY B R AH\ndon't D OW N T\n";
    attend_g2p_dict *d = parse(text, 0, 0, &err);
    EXPECT(d != NULL, "%s", err.msg);
    attend_g2p_lexicon *lx = NULL, *back = NULL;
    EXPECT(attend_g2p_lexicon_from_dict(&lx, d, &err) == ATTEND_OK, "%s", err.msg);
    if (!lx) {
        attend_g2p_dict_free(d);
        return;
    }
    attend_g2p_lexicon_info in;
    attend_g2p_lexicon_get_info(lx, &in);
    EXPECT(in.words == 5 && in.entries == 8 && in.stress == 0, "info: %d words %d entries stress %d", in.words,
           in.entries, in.stress);
    /* sorted by strcmp: a, don't, hello, read, zebra */
    const char *order[] = {"a", "don't", "hello", "read", "zebra"};
    for (int w = 0; w < 5; w++)
        EXPECT(!strcmp(attend_g2p_lexicon_word(lx, w), order[w]), "word %d: %s", w, attend_g2p_lexicon_word(lx, w));
    char out[128];
    int w = attend_g2p_lexicon_find(lx, "Read", 4);
    EXPECT(w == 3 && attend_g2p_lexicon_prons(lx, w) == 2, "read: %d", w);
    EXPECT(attend_g2p_lexicon_pron(lx, w, 0, out, sizeof out, &err) == ATTEND_OK && !strcmp(out, "R IY D"), "%s", out);
    EXPECT(attend_g2p_lexicon_pron(lx, w, 1, out, sizeof out, &err) == ATTEND_OK && !strcmp(out, "R EH D"), "%s", out);
    EXPECT(attend_g2p_lexicon_pron(lx, w, 2, out, sizeof out, &err) == ATTEND_ERR_ARG &&
               strstr(err.msg, "'read' has 2 pronunciations, not 3"),
           "%s", err.msg);
    EXPECT(attend_g2p_lexicon_pron(lx, w, 0, out, 4, &err) == ATTEND_ERR_CAPACITY, "cap 4: %s", err.msg);
    w = attend_g2p_lexicon_find(lx, "HELLO", 5);
    EXPECT(w == 2 && attend_g2p_lexicon_pron(lx, w, 0, out, sizeof out, &err) == ATTEND_OK &&
               !strcmp(out, "HH AH L OW"),
           "hello: %d %s", w, out);
    EXPECT(attend_g2p_lexicon_find(lx, "don't", 5) == 1, "don't");
    EXPECT(attend_g2p_lexicon_find(lx, "hell", 4) < 0 && attend_g2p_lexicon_find(lx, "hello!", 6) < 0 &&
               attend_g2p_lexicon_find(lx, "", 0) < 0 && attend_g2p_lexicon_find(NULL, "a", 1) < 0 &&
               attend_g2p_lexicon_find(lx, "zz", 2) < 0 && attend_g2p_lexicon_find(lx, "a\0b", 3) < 0,
           "absent words");
    EXPECT(attend_g2p_lexicon_word(lx, 5) == NULL && attend_g2p_lexicon_prons(lx, -1) == 0, "out of range");
    /* the file form: saved, loaded back, identical lookups */
    char path[] = "test_g2p_lexicon.bin";
    /* a FIFO (or device) at the path is refused, not replaced by a regular file (the project's one writer) */
    char fifo[] = "test_g2p_lexicon.fifo";
    remove(fifo);
    if (mkfifo(fifo, 0600) == 0) {
        struct stat fs;
        EXPECT(attend_g2p_lexicon_save(lx, fifo, &err) == ATTEND_ERR_IO && strstr(err.msg, fifo) &&
                   stat(fifo, &fs) == 0 && S_ISFIFO(fs.st_mode),
               "save onto a FIFO: %s", err.msg);
        remove(fifo);
    }
    EXPECT(attend_g2p_lexicon_save(lx, path, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_g2p_lexicon_load(&back, path, &err) == ATTEND_OK, "%s", err.msg);
    if (back) {
        attend_g2p_lexicon_info ib;
        attend_g2p_lexicon_get_info(back, &ib);
        EXPECT(ib.words == 5 && ib.entries == 8 && ib.bytes == in.bytes, "loaded: %d %d %zu", ib.words, ib.entries,
               ib.bytes);
        w = attend_g2p_lexicon_find(back, "a", 1);
        EXPECT(w == 0 && attend_g2p_lexicon_pron(back, w, 1, out, sizeof out, &err) == ATTEND_OK && !strcmp(out, "EY"),
               "a(2): %s", out);
    }
    /* damaged copies: every truncation, and single flipped bytes, are refused or read consistently, never misread */
    FILE *f = fopen(path, "rb");
    unsigned char buf[4096];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    EXPECT(n == in.bytes, "file size %zu, want %zu", n, in.bytes);
    int refused = 0;
    for (size_t cut = 0; cut < n; cut++) {
        f = fopen(path, "wb");
        if (f) {
            fwrite(buf, 1, cut, f);
            fclose(f);
        }
        attend_g2p_lexicon *bad = NULL;
        attend_status st = attend_g2p_lexicon_load(&bad, path, &err);
        refused += st == ATTEND_ERR_FORMAT && bad == NULL && strstr(err.msg, path) != NULL;
        attend_g2p_lexicon_free(bad);
    }
    EXPECT(refused == (int)n, "%d of %zu truncations refused with the path named", refused, n);
    refused = 0;
    /* a flipped byte anywhere: refused (the checksum), never read as another lexicon */
    for (size_t at = 0; at < n; at++) {
        unsigned char keep = buf[at];
        buf[at] ^= 0x5A;
        f = fopen(path, "wb");
        if (f) {
            fwrite(buf, 1, n, f);
            fclose(f);
        }
        buf[at] = keep;
        attend_g2p_lexicon *bad = NULL;
        attend_status st = attend_g2p_lexicon_load(&bad, path, &err);
        refused += st == ATTEND_ERR_FORMAT && bad == NULL && strstr(err.msg, path) != NULL;
        if (st == ATTEND_OK) {
            attend_g2p_lexicon_info ibad;
            attend_g2p_lexicon_get_info(bad, &ibad);
            for (int k = 0; k < ibad.words; k++)
                for (int j = 0; j < attend_g2p_lexicon_prons(bad, k); j++)
                    (void)attend_g2p_lexicon_pron(bad, k, j, out, sizeof out, &err);
        }
        attend_g2p_lexicon_free(bad);
    }
    EXPECT(refused == (int)n, "%d of %zu single flipped bytes refused with the path named", refused, n);
    remove(path);
    attend_g2p_lexicon_free(back); /* the failing loads below set back to NULL first */
    back = NULL;
    EXPECT(attend_g2p_lexicon_load(&back, "no/such/lexicon.bin", &err) == ATTEND_ERR_IO &&
               strstr(err.msg, "no/such/lexicon.bin"),
           "missing: %s", err.msg);
    EXPECT(attend_g2p_lexicon_load(&back, SAMPLE_DICT, &err) == ATTEND_ERR_FORMAT &&
               strstr(err.msg, "not an attend lexicon file"),
           "text as file form: %s", err.msg);
    /* the model's phonemes: the shipped model knows these; a strange one is named with its first word */
    attend_model *m = NULL;
    attend_vocab *gv = NULL, *pv = NULL;
    EXPECT(attend_g2p_model_load(&m, SHIPPED_MODEL, NULL, &gv, &pv, &err) == ATTEND_OK, "%s", err.msg);
    if (pv) {
        EXPECT(attend_g2p_lexicon_check_phonemes(lx, pv, "t.dict", &err) == ATTEND_OK, "%s", err.msg);
        attend_g2p_dict *d2 = parse("ok OW K EY\nodd AA XQ D\n", 0, 0, &err);
        attend_g2p_lexicon *l2 = NULL;
        EXPECT(d2 && attend_g2p_lexicon_from_dict(&l2, d2, &err) == ATTEND_OK, "%s", err.msg);
        EXPECT(attend_g2p_lexicon_check_phonemes(l2, pv, "odd.dict", &err) == ATTEND_ERR_ARG &&
                   strstr(err.msg, "odd.dict: phoneme 'XQ' (first in 'odd')"),
               "%s", err.msg);
        attend_g2p_lexicon_free(l2);
        attend_g2p_dict_free(d2);
        d2 = parse("ok OW1 K EY2\n", 0, 1, &err);
        EXPECT(d2 && attend_g2p_lexicon_from_dict(&l2, d2, &err) == ATTEND_OK, "%s", err.msg);
        attend_g2p_lexicon_get_info(l2, &in);
        EXPECT(in.stress == 1, "stress flag");
        EXPECT(attend_g2p_lexicon_check_phonemes(l2, pv, "s.dict", &err) == ATTEND_ERR_ARG &&
                   strstr(err.msg, "stress digits"),
               "%s", err.msg);
        attend_g2p_lexicon_free(l2);
        attend_g2p_dict_free(d2);
    }
    attend_model_free(m);
    attend_vocab_free(gv);
    attend_vocab_free(pv);
    /* reading a text file: malformed lines are path:line, or skipped */
    char tpath[] = "test_g2p_lexicon.dict";
    f = fopen(tpath, "w");
    if (f) {
        fputs("ok OW K EY\nbad(x) B AE D\n", f);
        fclose(f);
    }
    attend_g2p_lexicon *l3 = NULL;
    attend_g2p_dict_info di;
    EXPECT(attend_g2p_lexicon_read(&l3, tpath, NULL, &di, &err) == ATTEND_ERR_FORMAT && !l3 &&
               strstr(err.msg, "test_g2p_lexicon.dict:2:"),
           "%s", err.msg);
    attend_g2p_options so = {0, 1};
    EXPECT(attend_g2p_lexicon_read(&l3, tpath, &so, &di, &err) == ATTEND_OK && di.skipped == 1, "%s", err.msg);
    attend_g2p_lexicon_get_info(l3, &in);
    EXPECT(in.words == 1 && in.source_size == 25 && in.source_mtime_ns > 0, "read: %d words, size %lld", in.words,
           (long long)in.source_size);
    attend_g2p_lexicon_free(l3);
    remove(tpath);
    EXPECT(attend_g2p_lexicon_from_dict(NULL, d, &err) == ATTEND_ERR_NULL, "NULL out");
    EXPECT(attend_g2p_lexicon_from_dict(&l3, NULL, &err) == ATTEND_ERR_NULL && !l3, "NULL dict");
    attend_g2p_lexicon_free(NULL);
    attend_g2p_lexicon_free(back);
    attend_g2p_lexicon_free(lx);
    attend_g2p_dict_free(d);
}

/* IPA (issue 29): the table and the stress rule of docs/G2P.md, "IPA output",
 * on words worked out by hand from that rule (CMUdict's stressed entries). */
static void test_ipa(void) {
    static const char *const cases[][2] = {
        {"HH AH0 L OW1", "həˈloʊ"},                       /* hello: onset L */
        {"HH AH L OW", "həloʊ"},                          /* stress-free: no marks, AH is ə */
        {"AH0 T EH1 N SH AH0 N", "əˈtɛnʃən"},             /* attention */
        {"AE1 B S T R AE2 K T", "ˈæbˌstɹækt"},            /* abstract: S T R is an onset, B S T R is not */
        {"K AE1 T", "ˈkæt"},                              /* cat: a first vowel takes all consonants before it */
        {"S T R IY1 T", "ˈstɹit"},                        /* street */
        {"EH1 K S T R AH0", "ˈɛkstɹə"},                   /* extra: only stressed vowels are marked */
        {"AH0 M B R EH1 L AH0", "əmˈbɹɛlə"},              /* umbrella: B R, not M B R */
        {"EH0 K S P L OY1 T", "ɛkˈsplɔɪt"},               /* exploit: S P L (of K S P L: at most three) */
        {"N AY1 T IH0 NG G EY2 L", "ˈnaɪtɪŋˌɡeɪl"},       /* nightingale: NG G is no onset, G is */
        {"AH0 S EH1 N D", "əˈsɛnd"},                      /* ascend */
        {"R IY0 AE1 K T", "ɹiˈækt"},                      /* react: no consonant between the vowels */
        {"S IH1 NG IH0 NG", "ˈsɪŋɪŋ"},                     /* singing: NG alone is no onset */
        {"CH ER1 CH", "ˈtʃɝtʃ"},                          /* church: ER1 */
        {"M EH1 ZH ER0", "ˈmɛʒɚ"},                        /* measure: ER0 */
        {"JH AH1 JH", "ˈdʒʌdʒ"},                          /* judge: AH1 is ʌ */
        {"DH AY1", "ˈðaɪ"},                               /* thy */
        {"TH IH1 NG K", "ˈθɪŋk"},                         /* think */
        {"B OY1", "ˈbɔɪ"},
        {"K AW1", "ˈkaʊ"},
        {"G OW1", "ˈɡoʊ"},                                /* ɡ is U+0261 */
        {"Y EH1 S", "ˈjɛs"},
        {"W AY1", "ˈwaɪ"},
        {"B UH1 K", "ˈbʊk"},
        {"F AA1 DH ER0", "ˈfɑðɚ"},
        {"TH AO1 T", "ˈθɔt"},
        {"B EY1", "ˈbeɪ"},
        {"B IY1", "ˈbi"},
        {"B L UW1", "ˈblu"},
        {"HH AW1 S", "ˈhaʊs"},
        {"V IH1 ZH AH0 N", "ˈvɪʒən"},
        {"IH2 N F ER0 M EY1 SH AH0 N", "ˌɪnfɚˈmeɪʃən"},   /* information: M, the one consonant before EY1 */
        {"K AA2 N T R AH0 B Y UW1 SH AH0 N", "ˌkɑntɹəˈbjuʃən"}, /* contribution: B Y */
        {"AH0 K W AY1 R", "əˈkwaɪɹ"},                     /* acquire: K W */
        {"", ""},
    };
    attend_error err;
    char out[256];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        EXPECT(attend_g2p_ipa(cases[k][0], out, sizeof out, &err) == ATTEND_OK, "'%s': %s", cases[k][0], err.msg);
        EXPECT(!strcmp(out, cases[k][1]), "'%s': got '%s', want '%s'", cases[k][0], out, cases[k][1]);
    }
    EXPECT(attend_g2p_ipa("HH XX L", out, sizeof out, &err) == ATTEND_ERR_ARG && strstr(err.msg, "'XX' (phoneme 2)"),
           "%s", err.msg);
    EXPECT(attend_g2p_ipa("K1 AE T", out, sizeof out, &err) == ATTEND_ERR_ARG && strstr(err.msg, "vowels only"), "%s",
           err.msg);
    EXPECT(attend_g2p_ipa("AH3", out, sizeof out, &err) == ATTEND_ERR_ARG, "AH3: %s", err.msg);
    EXPECT(attend_g2p_ipa("HH AH0 L OW1", out, 5, &err) == ATTEND_ERR_CAPACITY && out[0] == '\0', "cap: %s", err.msg);
    EXPECT(attend_g2p_ipa(NULL, out, sizeof out, &err) == ATTEND_ERR_NULL, "NULL");
}

/* ------------------------------------------------------------ running text */

/* Decodes the table's escapes (\xNN, \uXXXX, \t, \n, \\) of s into out [cap]; its length. */
static size_t unescape(const char *s, char *out, size_t cap) {
    size_t o = 0;
    for (size_t i = 0; s[i] && o + 5 < cap; i++) {
        if (s[i] != '\\' || !s[i + 1]) {
            out[o++] = s[i];
            continue;
        }
        char c = s[++i];
        if (c == 't') out[o++] = '\t';
        else if (c == 'n') out[o++] = '\n';
        else if (c == '\\') out[o++] = '\\';
        else if (c == 'x' || c == 'u') {
            int nd = c == 'x' ? 2 : 4;
            unsigned v = 0;
            for (int k = 0; k < nd && s[i + 1]; k++) {
                char h = s[++i];
                v = v * 16 + (unsigned)(h <= '9' ? h - '0' : (h | 32) - 'a' + 10);
            }
            if (c == 'x') out[o++] = (char)v;
            else if (v < 0x80) out[o++] = (char)v;
            else if (v < 0x800) {
                out[o++] = (char)(0xC0 | (v >> 6));
                out[o++] = (char)(0x80 | (v & 63));
            } else {
                out[o++] = (char)(0xE0 | (v >> 12));
                out[o++] = (char)(0x80 | ((v >> 6) & 63));
                out[o++] = (char)(0x80 | (v & 63));
            }
        } else out[o++] = c;
    }
    out[o] = '\0';
    return o;
}

/* 1 when s has a control character (C0, DEL, C1 as UTF-8) or is not UTF-8. */
static int has_control(const char *s) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; u[i]; i++) {
        if (u[i] < 0x20 && u[i] != '\n') return 1; /* notes are lines */
        if (u[i] == 0x7F) return 1;
        if (u[i] == 0xC2 && u[i + 1] >= 0x80 && u[i + 1] <= 0x9F) return 1;
    }
    return 0;
}

/* The hand-written table of tests/data/g2p/text_cases.tsv (docs/G2P.md,
 * "Running text"): every sentence's tokens, through the library. */
static void test_text_table(void) {
    const char *path = ATTEND_G2P_SOURCE_DIR "/tests/data/g2p/text_cases.tsv";
    FILE *f = fopen(path, "rb");
    EXPECT(f != NULL, "cannot open %s", path);
    if (!f) return;
    attend_error err;
    attend_g2p_lexicon *lx = NULL;
    EXPECT(attend_g2p_lexicon_read(&lx, ATTEND_G2P_SOURCE_DIR "/tests/data/g2p/text_lexicon.dict", NULL, NULL,
                                   &err) == ATTEND_OK, "%s", err.msg);
    char line[4096], text[4096];
    int cases = 0, wrong = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
        if (!n || line[0] == '#') continue;
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        EXPECT(t1 && t2, "%s:%d: not three columns", path, lineno);
        if (!t1 || !t2) continue;
        *t1 = *t2 = '\0';
        size_t len = unescape(t1 + 1, text, sizeof text);
        char *out = NULL, *notes = NULL;
        attend_g2p_text_info info;
        attend_status st = attend_g2p_text_normalize(text, len, !strcmp(line, "x") ? lx : NULL, &out, &notes, &info,
                                                     &err);
        cases++;
        EXPECT(st == ATTEND_OK, "%s:%d: %s", path, lineno, err.msg);
        if (st == ATTEND_OK && strcmp(out, t2 + 1)) {
            wrong++;
            EXPECT(0, "%s:%d: '%s'\n      got  '%s'\n      want '%s'", path, lineno, t1 + 1, out, t2 + 1);
        }
        if (st == ATTEND_OK) {
            EXPECT(!has_control(out) && !has_control(notes), "%s:%d: a control character in the output", path,
                   lineno);
            int toks = 0;
            for (const char *p = out; *p; p++) toks += (p == out || p[-1] == ' ') && *p != ' ';
            EXPECT(toks == info.tokens, "%s:%d: %d tokens, info says %d", path, lineno, toks, info.tokens);
        }
        attend_g2p_text_free(out);
        attend_g2p_text_free(notes);
    }
    fclose(f);
    attend_g2p_lexicon_free(lx);
    printf("  running-text table: %d sentences, %d wrong\n", cases, wrong);
    EXPECT(cases >= 200, "only %d sentences in %s", cases, path);
}

/* Unknown characters: one note per chunk, what was done with each; never a
 * control character in the output or the notes, whatever the bytes. */
static void test_text_notes(void) {
    static const char *const cases[][3] = {
        /* text, tokens, notes */
        {"a\x01" "b c", "ab C", "'a<U+0001>b': U+0001 skipped\n"},
        {"\xe4\xb8\xad\xe6\x96\x87 ok", "\xe4\xb8\xad\xe6\x96\x87 ok",
         "'\xe4\xb8\xad\xe6\x96\x87': U+4E2D kept, U+6587 kept\n"},
        {"bad\xff" "byte", "badbyte", "'bad<0xFF>byte': byte 0xFF skipped (not UTF-8)\n"},
        {"x\x1b[31mred\x1b[0m", "X | thirty one mred | zero M",
         "'x<U+001B>[31mred<U+001B>[0m': U+001B skipped\n"},
        {"#tag #1", "tag number one", "'<U+0023>tag': U+0023 skipped\n"},
        {"\xc2\xa9 2024 \xe2\x84\xa2\xe2\x84\xa2", "twenty twenty four",
         "'<U+00A9>': U+00A9 skipped\n'<U+2122><U+2122>': U+2122 skipped\n"},
        {"plain text", "plain text", ""},
        {"r\xc2\x9b" "ed", "red", "'r<U+009B>ed': U+009B skipped\n"},
        /* a ',' or ':' after the decimal point splits the run like one before it (it was read as a digit:
         * UBSan, an index of -4 into the digit names) */
        {"1.5,3 2.5:30", "one point five | three two point five | thirty", ""},
    };
    attend_error err;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *out = NULL, *notes = NULL;
        attend_g2p_text_info info;
        EXPECT(attend_g2p_text_normalize(cases[k][0], strlen(cases[k][0]), NULL, &out, &notes, &info, &err) ==
                   ATTEND_OK, "case %zu: %s", k, err.msg);
        EXPECT(out && !strcmp(out, cases[k][1]), "case %zu: tokens '%s', want '%s'", k, out ? out : "(null)",
               cases[k][1]);
        EXPECT(notes && !strcmp(notes, cases[k][2]), "case %zu: notes '%s', want '%s'", k, notes ? notes : "(null)",
               cases[k][2]);
        attend_g2p_text_free(out);
        attend_g2p_text_free(notes);
    }
    /* random bytes: always OK, never a control character or bad UTF-8 out */
    uint64_t x = 0x9E3779B97F4A7C15ull;
    int bad = 0;
    for (int r = 0; r < 3000; r++) {
        char buf[64];
        size_t n = (size_t)(r % 63) + 1;
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            /* mostly printable ASCII and digits, with every byte value possible */
            unsigned v = (unsigned)(x >> 24) & 0xFF;
            static const char pool[] = " 0123456789$,.:-'aAbBzZ%#&/\x01\x1b\xc2\x9b\xe2\x80\xae\xf0";
            buf[i] = v < 160 ? pool[v % (sizeof pool - 1)] : (char)v;
        }
        char *out = NULL, *notes = NULL;
        if (attend_g2p_text_normalize(buf, n, NULL, &out, &notes, NULL, &err) != ATTEND_OK) bad++;
        else if (has_control(out) || has_control(notes) || strchr(out, '\n') ||
                 !at_utf8_valid(out, strlen(out), NULL, NULL) || !at_utf8_valid(notes, strlen(notes), NULL, NULL))
            bad++;
        attend_g2p_text_free(out);
        attend_g2p_text_free(notes);
    }
    EXPECT(bad == 0, "%d of 3000 random texts failed or printed a control character", bad);
    /* a spelled letter carries only apostrophe suffixes (what attend_g2p_token_pronounce reads); any other tail
     * after an acronym's apostrophe is a word of its own, never cut (it was cut at 78 bytes, inside a character) */
    static const char *const tails[][2] = {
        {"OK'ed", "O K ed"},   {"FBI's", "F B I's"},     {"n't", "N T"},
        {"TV'd've", "T V'd've"}, {"AB'\xd0\xb6\xd0\xb6", "A B \xd0\xb6\xd0\xb6"},
    };
    for (size_t k = 0; k < sizeof tails / sizeof tails[0]; k++) {
        char *o = NULL;
        EXPECT(attend_g2p_text_normalize(tails[k][0], strlen(tails[k][0]), NULL, &o, NULL, NULL, &err) == ATTEND_OK &&
                   o && !strcmp(o, tails[k][1]), "'%s': tokens '%s', want '%s'", tails[k][0], o ? o : "(null)",
               tails[k][1]);
        attend_g2p_text_free(o);
    }
    {
        char long_tail[3 + 40 * 2 + 1] = "AB'";
        for (int i = 0; i < 40; i++) memcpy(long_tail + 3 + 2 * i, "\xd0\xb6", 2);
        long_tail[sizeof long_tail - 1] = '\0';
        char *o = NULL;
        EXPECT(attend_g2p_text_normalize(long_tail, strlen(long_tail), NULL, &o, NULL, NULL, &err) == ATTEND_OK && o &&
                   at_utf8_valid(o, strlen(o), NULL, NULL) && strstr(o, long_tail + 3),
               "AB' + 40 x U+0436: '%s'", o ? o : "(null)");
        attend_g2p_text_free(o);
    }
    /* a word that switches between letters and digits 32 000 times: no deep recursion (a stack overflow at -O0
     * and under ASan); the first switches are read, the rest skipped with a note */
    {
        size_t n = 64000;
        char *deep = malloc(n + 1);
        for (size_t i = 0; i < n; i++) deep[i] = i % 2 ? '1' : 'a';
        deep[n] = '\0';
        char *o = NULL, *nt = NULL;
        EXPECT(attend_g2p_text_normalize(deep, n, NULL, &o, &nt, NULL, &err) == ATTEND_OK && o && nt &&
                   !strncmp(o, "a one a one", 11) && strstr(nt, "'a1a1a1") &&
                   strstr(nt, "the rest of the word skipped\n") &&
                   strlen(nt) < 200,
               "a1 x 32000: %s / notes '%s'", err.msg, nt ? nt : "(null)");
        attend_g2p_text_free(o);
        attend_g2p_text_free(nt);
        /* the same depth of '$' signs and of '--' */
        for (size_t i = 0; i < n; i++) deep[i] = "$-"[i % 2];
        EXPECT(attend_g2p_text_normalize(deep, n, NULL, &o, &nt, NULL, &err) == ATTEND_OK, "$- x 32000: %s",
               err.msg);
        attend_g2p_text_free(o);
        attend_g2p_text_free(nt);
        free(deep);
    }
    char *out = (char *)1;
    EXPECT(attend_g2p_text_normalize(NULL, 3, NULL, &out, NULL, NULL, &err) == ATTEND_ERR_NULL && out == NULL,
           "NULL text: %s", err.msg);
    EXPECT(attend_g2p_text_normalize("a", 1, NULL, NULL, NULL, NULL, &err) == ATTEND_ERR_NULL, "NULL out");
    EXPECT(attend_g2p_text_normalize(NULL, 0, NULL, &out, NULL, NULL, &err) == ATTEND_OK && out && !*out,
           "empty text: %s", err.msg);
    attend_g2p_text_free(out);
}

/* Tokens to phonemes: letters, the lexicon, apostrophe suffixes, the model. */
static void test_token_pronounce(void) {
    static const char lex_text[] = "shouldn't SH UH D AH N T\ncat K AE T\nbus B AH S\ndog D AO G\nfbi EH F B IY AY\n"
                                   "do D UW\nit IH T\nyou Y UW\nthey DH EY\ni AY\nshould SH UH D\nwe W IY\n";
    attend_error err;
    attend_g2p_dict *d = NULL;
    attend_g2p_lexicon *lx = NULL;
    EXPECT(attend_g2p_dict_parse(&d, lex_text, sizeof lex_text - 1, "lex", NULL, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_g2p_lexicon_from_dict(&lx, d, &err) == ATTEND_OK, "%s", err.msg);
    static const char *const cases[][3] = {
        {"shouldn't've", "SH UH D AH N T AH V", "lexicon+suffix"}, /* 've after a consonant */
        {"cat's", "K AE T S", "lexicon+suffix"},                  /* 's after T */
        {"bus's", "B AH S IH Z", "lexicon+suffix"},               /* after S */
        {"dog's", "D AO G Z", "lexicon+suffix"},                  /* after G */
        {"it'll", "IH T AH L", "lexicon+suffix"},
        {"you'll", "Y UW L", "lexicon+suffix"},                   /* after a vowel */
        {"they'd", "DH EY D", "lexicon+suffix"},
        {"it'd", "IH T AH D", "lexicon+suffix"},
        {"you're", "Y UW R", "lexicon+suffix"},
        {"we've", "W IY V", "lexicon+suffix"},
        {"i'm", "AY M", "lexicon+suffix"},
        {"shouldn't", "SH UH D AH N T", "lexicon"},
        {"fbi's", "EH F B IY AY Z", "lexicon+suffix"},
        {"cat", "K AE T", "lexicon"},
        {"F", "EH F", "letters"},
        {"W", "D AH B AH L Y UW", "letters"},
        {"I's", "AY Z", "letters"},
        {"S's", "EH S IH Z", "letters"},
        {"K'd", "K EY D", "letters"},
        {"|", "", "break"},
        {"||", "", "break"},
    };
    char out[256];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        attend_g2p_source src = ATTEND_G2P_SOURCE_MODEL;
        EXPECT(attend_g2p_token_pronounce(NULL, 0, NULL, NULL, lx, cases[k][0], strlen(cases[k][0]), out, sizeof out,
                                          &src, &err) == ATTEND_OK, "'%s': %s", cases[k][0], err.msg);
        EXPECT(!strcmp(out, cases[k][1]) && !strcmp(attend_g2p_source_name(src), cases[k][2]),
               "'%s': got '%s' (%s), want '%s' (%s)", cases[k][0], out, attend_g2p_source_name(src), cases[k][1],
               cases[k][2]);
    }
    attend_g2p_source src;
    EXPECT(attend_g2p_token_pronounce(NULL, 0, NULL, NULL, lx, "hello", 5, out, sizeof out, &src, &err) ==
               ATTEND_ERR_ARG && strstr(err.msg, "'hello': not in the lexicon"), "no model: %s", err.msg);
    EXPECT(attend_g2p_token_pronounce(NULL, 0, NULL, NULL, lx, "a\x01", 2, out, sizeof out, &src, &err) ==
               ATTEND_ERR_ARG, "control: %s", err.msg);
    EXPECT(attend_g2p_token_pronounce(NULL, 0, NULL, NULL, lx, "shouldn't've", 12, out, 8, &src, &err) ==
               ATTEND_ERR_CAPACITY, "cap: %s", err.msg);
    /* a token is bytes with a length, not a string: a message names those bytes and nothing after them */
    struct {
        char tok[3];
        char after[8];
    } span = {{'A', '\'', 'x'}, "SECRET"};
    EXPECT(attend_g2p_token_pronounce(NULL, 0, NULL, NULL, lx, span.tok, 3, out, sizeof out, &src, &err) ==
               ATTEND_ERR_ARG && strstr(err.msg, "'A'x': a letter with an unknown suffix") &&
               !strstr(err.msg, "SECRET"),
           "unknown suffix: %s", err.msg);
    struct {
        char tok[1];
        char after[8];
    } one = {{'W'}, "SECRET"};
    EXPECT(attend_g2p_token_pronounce(NULL, 0, NULL, NULL, lx, one.tok, 1, out, 4, &src, &err) ==
               ATTEND_ERR_CAPACITY && strstr(err.msg, "'W': the pronunciation needs") && !strstr(err.msg, "SECRET"),
           "cap, one letter: %s", err.msg);
    /* every token the normalizer writes is one the pronouncer reads (or a word it has no model for) */
    {
        static const char *const texts[] = {"The plan was OK'ed by the CEO.", "NASA'nin FBI'x n't CAN'T I'M",
                                            "R2-D2's 3rd MP3s AT&T's U.S.'s", "x'y'z 'quoted' JFK'S"};
        for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
            char *o = NULL;
            EXPECT(attend_g2p_text_normalize(texts[k], strlen(texts[k]), lx, &o, NULL, NULL, &err) == ATTEND_OK, "%s",
                   err.msg);
            for (char *tk = o; tk && *tk;) {
                size_t n = strcspn(tk, " ");
                attend_status st = attend_g2p_token_pronounce(NULL, 0, NULL, NULL, lx, tk, n, out, sizeof out, &src,
                                                              &err);
                EXPECT(st == ATTEND_OK || (st == ATTEND_ERR_ARG && strstr(err.msg, "not in the lexicon, and no model")),
                       "'%s': token '%.*s': %s", texts[k], (int)n, tk, err.msg);
                tk += n;
                while (*tk == ' ') tk++;
            }
            attend_g2p_text_free(o);
        }
    }
    /* the shipped model for what the lexicon lacks, with a suffix after it */
    attend_model *m = NULL;
    attend_vocab *gv = NULL, *pv = NULL;
    attend_model_config cap;
    memset(&cap, 0, sizeof cap);
    cap.max_batch = 1;
    cap.max_src_len = ATTEND_G2P_MAX_LEN;
    EXPECT(attend_g2p_model_load(&m, SHIPPED_MODEL, &cap, &gv, &pv, &err) == ATTEND_OK, "%s", err.msg);
    if (m) {
        char want[256];
        EXPECT(attend_g2p_pronounce(m, gv, pv, "hello", 5, want, sizeof want, &err) == ATTEND_OK, "%s", err.msg);
        EXPECT(attend_g2p_token_pronounce(&m, 1, gv, pv, lx, "hello", 5, out, sizeof out, &src, &err) == ATTEND_OK &&
                   !strcmp(out, want) && src == ATTEND_G2P_SOURCE_MODEL, "hello: '%s' (%s), want '%s'", out,
               attend_g2p_source_name(src), want);
        char want2[300];
        snprintf(want2, sizeof want2, "%s Z", want); /* the model's hello ends in a vowel (OW) */
        EXPECT(attend_g2p_token_pronounce(&m, 1, gv, pv, lx, "hello's", 7, out, sizeof out, &src, &err) ==
                       ATTEND_OK && !strcmp(out, want2) && src == ATTEND_G2P_SOURCE_MODEL_SUFFIX,
               "hello's: '%s' (%s), want '%s'", out, attend_g2p_source_name(src), want2);
        EXPECT(attend_g2p_token_pronounce(&m, 1, gv, pv, lx, "cat", 3, out, sizeof out, &src, &err) == ATTEND_OK &&
                   !strcmp(out, "K AE T") && src == ATTEND_G2P_SOURCE_LEXICON, "cat with a model: '%s'", out);
    }
    attend_model_free(m);
    attend_vocab_free(gv);
    attend_vocab_free(pv);
    attend_g2p_lexicon_free(lx);
    attend_g2p_dict_free(d);
}

int main(void) {
    RUN(test_parse_alternates);
    RUN(test_parse_comments);
    RUN(test_parse_bad_lines);
    RUN(test_split);
    RUN(test_dataset);
    RUN(test_edit_distance_and_rates);
    RUN(test_model_check);
    RUN(test_shipped_model);
    RUN(test_evaluate_sample);
    RUN(test_evaluate_ensemble);
    RUN(test_distill);
    RUN(test_stress);
    RUN(test_lexicon);
    RUN(test_ipa);
    RUN(test_text_table);
    RUN(test_text_notes);
    RUN(test_token_pronounce);
    return harness_summary();
}
