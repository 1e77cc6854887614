/*
 * g2p_ipa.c — ARPAbet (CMUdict's phonemes) to IPA for `attend g2p --phones
 * ipa` (issue 29; docs/G2P.md, "IPA output" states the table and the rule).
 *
 * Each phoneme maps to a fixed IPA string (General American, as CMUdict's
 * phonemes are usually read); AH and ER depend on stress: AH1/AH2 ʌ, AH0 and
 * stress-free AH ə; ER1/ER2 ɝ, ER0 and stress-free ER ɚ. With stress digits,
 * a vowel marked 1 gets ˈ and one marked 2 gets ˌ, placed before its
 * syllable's onset: the longest run of consonants just before the vowel that
 * is a legal English onset (the table below), or, for a word's first vowel,
 * all the consonants before it. Phonemes are written without separators.
 */
#include <string.h>

#include "internal.h"

typedef struct {
    const char *arpa;
    const char *ipa;    /* stress-free or stressed (1, 2) */
    const char *ipa0;   /* unstressed (0) and, for AH and ER, stress-free */
    int vowel;
} ipa_phone;

static const ipa_phone ipa_table[] = {
    {"AA", "ɑ", "ɑ", 1},   {"AE", "æ", "æ", 1},   {"AH", "ʌ", "ə", 1},   {"AO", "ɔ", "ɔ", 1},
    {"AW", "aʊ", "aʊ", 1}, {"AY", "aɪ", "aɪ", 1}, {"EH", "ɛ", "ɛ", 1},   {"ER", "ɝ", "ɚ", 1},
    {"EY", "eɪ", "eɪ", 1}, {"IH", "ɪ", "ɪ", 1},   {"IY", "i", "i", 1},   {"OW", "oʊ", "oʊ", 1},
    {"OY", "ɔɪ", "ɔɪ", 1}, {"UH", "ʊ", "ʊ", 1},   {"UW", "u", "u", 1},   {"B", "b", "b", 0},
    {"CH", "tʃ", "tʃ", 0}, {"D", "d", "d", 0},    {"DH", "ð", "ð", 0},   {"F", "f", "f", 0},
    {"G", "ɡ", "ɡ", 0},    {"HH", "h", "h", 0},   {"JH", "dʒ", "dʒ", 0}, {"K", "k", "k", 0},
    {"L", "l", "l", 0},    {"M", "m", "m", 0},    {"N", "n", "n", 0},    {"NG", "ŋ", "ŋ", 0},
    {"P", "p", "p", 0},    {"R", "ɹ", "ɹ", 0},    {"S", "s", "s", 0},    {"SH", "ʃ", "ʃ", 0},
    {"T", "t", "t", 0},    {"TH", "θ", "θ", 0},   {"V", "v", "v", 0},    {"W", "w", "w", 0},
    {"Y", "j", "j", 0},    {"Z", "z", "z", 0},    {"ZH", "ʒ", "ʒ", 0},
};
#define IPA_N ((int)(sizeof ipa_table / sizeof ipa_table[0]))

/* Legal onsets of two or three consonants (one consonant: any but NG). */
static const char *const onsets[] = {
    "P R",  "P L",  "B R",  "B L",  "T R",  "D R",   "K R",   "K L",   "G R",   "G L",   "F R",
    "F L",  "TH R", "SH R", "S P",  "S T",  "S K",   "S M",   "S N",   "S L",   "S W",   "P Y",
    "B Y",  "K Y",  "G Y",  "M Y",  "F Y",  "V Y",   "HH Y",  "T W",   "D W",   "K W",   "G W",
    "TH W", "S F",  "S P R", "S P L", "S T R", "S K R", "S K W", "S K L", "S P Y", "S K Y",
};

/* 1 when phonemes ids [n] (into ipa_table) form a legal onset. */
static int legal_onset(const int *ids, int n) {
    if (n == 1) return strcmp(ipa_table[ids[0]].arpa, "NG") != 0;
    char buf[16];
    size_t at = 0;
    for (int k = 0; k < n; k++) {
        size_t len = strlen(ipa_table[ids[k]].arpa);
        if (at + len + 2 > sizeof buf) return 0;
        if (k) buf[at++] = ' ';
        memcpy(buf + at, ipa_table[ids[k]].arpa, len);
        at += len;
    }
    buf[at] = '\0';
    for (size_t k = 0; k < sizeof onsets / sizeof onsets[0]; k++)
        if (!strcmp(buf, onsets[k])) return 1;
    return 0;
}

attend_status attend_g2p_ipa(const char *arpabet, char *out, size_t cap, attend_error *err) {
    const char *who = "attend_g2p_ipa";
    CHECK(arpabet && out, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !arpabet ? "arpabet" : "out");
    CHECK(cap >= 1, err, ATTEND_ERR_CAPACITY, "%s: output buffer of 0 bytes", who);
    out[0] = '\0';
    int ids[ATTEND_G2P_MAX_LEN], stress[ATTEND_G2P_MAX_LEN], n = 0;
    for (const char *p = arpabet; *p;) {
        while (*p == ' ') p++;
        if (!*p) break;
        size_t len = strcspn(p, " ");
        CHECK(n < ATTEND_G2P_MAX_LEN, err, ATTEND_ERR_ARG, "%s: more than %d phonemes", who, ATTEND_G2P_MAX_LEN);
        int s = -1;
        size_t base = len;
        if (len >= 2 && p[len - 1] >= '0' && p[len - 1] <= '9') {
            s = p[len - 1] - '0';
            base = len - 1;
        }
        int id = -1;
        for (int k = 0; k < IPA_N && id < 0; k++)
            if (strlen(ipa_table[k].arpa) == base && !memcmp(ipa_table[k].arpa, p, base)) id = k;
        CHECK(id >= 0 && (s < 0 || (ipa_table[id].vowel && s <= 2)), err, ATTEND_ERR_ARG,
              "%s: '%.*s' (phoneme %d) is not an ARPAbet phoneme%s", who, (int)(len > 16 ? 16 : len), p, n + 1,
              id >= 0 ? " (stress digits 0-2 on vowels only)" : "");
        ids[n] = id;
        stress[n++] = s;
        p += len;
    }
    /* where each stress mark goes: mark[i] before phoneme i */
    const char *mark[ATTEND_G2P_MAX_LEN + 1] = {0};
    int prev_vowel = -1;
    for (int i = 0; i < n; i++) {
        if (!ipa_table[ids[i]].vowel) continue;
        if (stress[i] == 1 || stress[i] == 2) {
            int start = prev_vowel + 1; /* the consonants between the previous vowel and this one */
            int at = start;
            if (prev_vowel >= 0) {
                at = i;
                for (int len = i - start < 3 ? i - start : 3; len >= 1; len--)
                    if (legal_onset(ids + i - len, len)) {
                        at = i - len;
                        break;
                    }
            }
            mark[at] = stress[i] == 1 ? "ˈ" : "ˌ";
        }
        prev_vowel = i;
    }
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        const ipa_phone *ph = &ipa_table[ids[i]];
        const char *pieces[2] = {mark[i], stress[i] == 1 || stress[i] == 2 ? ph->ipa : ph->ipa0};
        for (int k = 0; k < 2; k++) {
            if (!pieces[k]) continue;
            size_t len = strlen(pieces[k]);
            if (o + len >= cap) {
                out[0] = '\0';
                return at_fail(err, ATTEND_ERR_CAPACITY, "%s: '%.64s' needs more than %zu bytes in IPA", who, arpabet,
                               cap);
            }
            memcpy(out + o, pieces[k], len + 1);
            o += len;
        }
    }
    return at_ok(err);
}
