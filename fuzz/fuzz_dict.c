/*
 * fuzz_dict.c — CMUdict-style dictionary lines (attend_g2p_dict_parse,
 * src/tasks/g2p.c) and the datasets made from them. The first input byte picks the
 * options (keep_stress, skip_malformed); the rest is the dictionary text.
 * Invariants: a refusal returns no dictionary and a message starting with the
 * label; an accepted dictionary's counts agree with its contents (every word
 * non-empty, lower-case ASCII, found with at least one pronunciation of
 * upper-case phonemes joined by single spaces, stress digits only when kept),
 * no word or pronunciation is longer than ATTEND_G2P_MAX_LEN, and the
 * training dataset made from it has in-range ids.
 */
#include "fuzz.h"

#include "attend.h"

static void check_pron(const char *p, int keep_stress) {
    FUZZ_CHECK(p && *p && *p != ' ', "empty pronunciation or leading space");
    int phonemes = 1;
    for (const char *c = p; *c; c++) {
        if (*c == ' ') {
            FUZZ_CHECK(c[1] && c[1] != ' ', "pronunciation '%s': not single spaces", p);
            phonemes++;
        } else if (*c >= '0' && *c <= '9') {
            FUZZ_CHECK(keep_stress, "pronunciation '%s' keeps a stress digit", p);
            FUZZ_CHECK(c > p && c[-1] >= 'A' && c[-1] <= 'Z' && (c[1] == ' ' || !c[1]), "stray digit in '%s'", p);
        } else {
            FUZZ_CHECK(*c >= 'A' && *c <= 'Z', "pronunciation '%s' has byte 0x%02x", p, (unsigned char)*c);
        }
    }
    FUZZ_CHECK(phonemes <= ATTEND_G2P_MAX_LEN, "%d phonemes", phonemes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    attend_g2p_options opt = {data[0] & 1, (data[0] >> 1) & 1};
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    attend_g2p_dict *d = (attend_g2p_dict *)(uintptr_t)1;
    attend_error err;
    attend_status st = attend_g2p_dict_parse(&d, text, len, "dict", &opt, &err);
    if (st != ATTEND_OK) {
        FUZZ_CHECK(d == NULL, "refused, but a dictionary was returned");
        FUZZ_CHECK(st == ATTEND_ERR_FORMAT || st == ATTEND_ERR_ALLOC || st == ATTEND_ERR_CAPACITY, "status %s: %s",
                   attend_status_name(st), err.msg);
        FUZZ_CHECK(!opt.skip_malformed || st != ATTEND_ERR_FORMAT, "a format error in skip mode: %s", err.msg);
        fuzz_check_message(err.msg, "dict:");
        return 0;
    }
    attend_g2p_dict_info info;
    attend_g2p_dict_get_info(d, &info);
    int words = attend_g2p_dict_words(d), entries = 0;
    FUZZ_CHECK(words == info.words && words >= 0, "words %d, info %d", words, info.words);
    FUZZ_CHECK(opt.skip_malformed || info.skipped == 0, "skipped %d without skip mode", info.skipped);
    for (int w = 0; w < words; w++) {
        const char *word = attend_g2p_dict_word(d, w);
        FUZZ_CHECK(word && *word, "word %d empty", w);
        for (const char *c = word; *c; c++) FUZZ_CHECK(!(*c >= 'A' && *c <= 'Z'), "word '%s' not lower-cased", word);
        int np = attend_g2p_dict_prons(d, w);
        FUZZ_CHECK(np >= 1, "word '%s' has %d pronunciations", word, np);
        for (int k = 0; k < np; k++) check_pron(attend_g2p_dict_pron(d, w, k), opt.keep_stress);
        FUZZ_CHECK(attend_g2p_dict_pron(d, w, np) == NULL, "pronunciation past the end");
        entries += np;
    }
    FUZZ_CHECK(entries == info.entries, "entries %d, info %d", entries, info.entries);
    FUZZ_CHECK(attend_g2p_dict_word(d, words) == NULL && attend_g2p_dict_word(d, -1) == NULL, "word out of range");
    FUZZ_CHECK(info.max_word_len <= ATTEND_G2P_MAX_LEN && info.max_pron_len <= ATTEND_G2P_MAX_LEN, "lengths %d %d",
               info.max_word_len, info.max_pron_len);
    /* the dataset of every word */
    attend_vocab *g = NULL, *p = NULL;
    attend_vocab_create(&g, NULL);
    attend_vocab_create(&p, NULL);
    attend_dataset *ds = NULL;
    st = attend_g2p_dataset(&ds, d, ATTEND_G2P_ALL, g, p, 1, &err);
    FUZZ_CHECK(st == ATTEND_OK, "dataset: %s", err.msg);
    FUZZ_CHECK(attend_dataset_size(ds) == entries, "dataset has %d pairs, dictionary %d", attend_dataset_size(ds), entries);
    for (int i = 0; i < attend_dataset_size(ds); i++) {
        const int32_t *s, *t;
        int sl, tl;
        attend_dataset_get(ds, i, &s, &sl, &t, &tl, NULL);
        for (int k = 0; k < sl; k++) FUZZ_CHECK(s[k] >= 3 && s[k] < attend_vocab_size(g), "grapheme id %d", s[k]);
        for (int k = 0; k < tl; k++) FUZZ_CHECK(t[k] >= 3 && t[k] < attend_vocab_size(p), "phoneme id %d", t[k]);
    }
    attend_dataset_free(ds);
    attend_vocab_free(g);
    attend_vocab_free(p);
    attend_g2p_dict_free(d);
    return 0;
}
