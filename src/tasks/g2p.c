/*
 * g2p.c — grapheme-to-phoneme conversion on a pronouncing dictionary: the
 * dictionary parser (CMUdict "word PH1 PH2 ...", alternates "word(2)",
 * comments, odd lines reported as label:line), the split by a hash of the word,
 * datasets for the trainer, PER/WER counting, and loading, pronouncing with
 * and evaluating a G2P model (characters -> phonemes). docs/G2P.md describes
 * the task, the recipe and the shipped model.
 *
 * Storage of a dictionary: g2p_internal.h. Growth is amortised: this is
 * data loading, not a hot loop.
 *
 * Dimension letters: S word length (characters), T pronunciation length
 * (phonemes), N words per batch, L longest output.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "io/text.h"
#include "tasks/g2p_internal.h"

#define MARKER_MAX 999 /* word(N): N in 1..999 */

/* ------------------------------------------------------------ small helpers */

static int grow(void **p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 1;
    size_t c = *cap ? *cap : 256, bytes;
    while (c < need) {
        if (c > SIZE_MAX / 4) return 0;
        c *= 2;
    }
    if (!at_mul_size(c, size, &bytes)) return 0;
    void *q = realloc(*p, bytes);
    if (!q) return 0;
    *p = q;
    *cap = c;
    return 1;
}

static uint64_t fnv1a(const char *s, size_t len) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static uint64_t mix64(uint64_t z) { /* splitmix64 finaliser */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* ------------------------------------------------------------ the dictionary */

/* Appends s[0..len) and a NUL to the text arena; *off receives its offset. */
static int text_add(attend_g2p_dict *d, const char *s, size_t len, size_t *off) {
    size_t need;
    if (!at_add_size(d->text_len, len + 1, &need) || !grow((void **)&d->text, &d->text_cap, need, 1)) return 0;
    memcpy(d->text + d->text_len, s, len);
    d->text[d->text_len + len] = '\0';
    *off = d->text_len;
    d->text_len = need;
    return 1;
}

uint64_t at_g2p_hash(const char *s, size_t len) { return mix64(fnv1a(s, len)); }

static int rehash(attend_g2p_dict *d, size_t nslots) {
    int32_t *s = malloc(nslots * sizeof *s);
    if (!s) return 0;
    for (size_t i = 0; i < nslots; i++) s[i] = -1;
    for (size_t w = 0; w < d->nw; w++) {
        const char *t = d->text + d->words[w].text;
        size_t j = (size_t)mix64(fnv1a(t, strlen(t))) & (nslots - 1);
        while (s[j] >= 0) j = (j + 1) & (nslots - 1);
        s[j] = (int32_t)w;
    }
    free(d->slots);
    d->slots = s;
    d->nslots = nslots;
    return 1;
}

/* Id of word (len bytes), adding it when absent; -1 when out of memory. */
static int word_id(attend_g2p_dict *d, const char *word, size_t len) {
    if (2 * (d->nw + 1) > d->nslots) {
        if (d->nslots > SIZE_MAX / 4 / sizeof(int32_t) || d->nw >= INT_MAX / 2) return -1;
        if (!rehash(d, d->nslots ? 2 * d->nslots : 1024)) return -1;
    }
    size_t j = (size_t)mix64(fnv1a(word, len)) & (d->nslots - 1);
    for (; d->slots[j] >= 0; j = (j + 1) & (d->nslots - 1)) {
        const char *t = d->text + d->words[d->slots[j]].text;
        if (strlen(t) == len && !memcmp(t, word, len)) return d->slots[j];
    }
    size_t off;
    if (!grow((void **)&d->words, &d->words_cap, d->nw + 1, sizeof *d->words) || !text_add(d, word, len, &off))
        return -1;
    d->words[d->nw].text = off;
    d->words[d->nw].first = -1;
    d->words[d->nw].count = 0;
    d->slots[j] = (int32_t)d->nw;
    return (int)d->nw++;
}

int at_g2p_dict_find(const attend_g2p_dict *d, const char *word, size_t len) {
    if (!d || !d->nslots) return -1;
    size_t j = (size_t)at_g2p_hash(word, len) & (d->nslots - 1);
    for (; d->slots[j] >= 0; j = (j + 1) & (d->nslots - 1)) {
        const char *t = d->text + d->words[d->slots[j]].text;
        if (strlen(t) == len && !memcmp(t, word, len)) return d->slots[j];
    }
    return -1;
}

/* Outcome of parsing one line. */
enum { LINE_ENTRY, LINE_BLANK, LINE_COMMENT, LINE_BAD, LINE_NOMEM };

/*
 * Parses line[0..len) (no newline). On LINE_ENTRY the word (lower-cased,
 * marker removed) is in word[0..*wlen) and the phonemes, joined by single
 * spaces, in pron[0..*plen) with *nphones of them. On LINE_BAD, why explains.
 */
static int parse_line(const char *line, size_t len, int keep_stress, char *word, size_t *wlen, char *pron,
                      size_t pron_cap, size_t *plen, int *nphones, char *why, size_t why_cap) {
    size_t i = 0;
    while (i < len && is_blank(line[i])) i++;
    if (i == len) return LINE_BLANK;
    if (line[i] == '#' || (len - i >= 3 && !memcmp(line + i, ";;;", 3))) return LINE_COMMENT;
    /* an inline comment: white space, '#', the rest */
    for (size_t k = i + 1; k < len; k++)
        if (line[k] == '#' && is_blank(line[k - 1])) {
            len = k;
            break;
        }
    size_t w0 = i;
    while (i < len && !is_blank(line[i])) i++;
    size_t w1 = i;
    /* the word: valid UTF-8, no control characters, an optional (N) marker */
    size_t wend = w1;
    if (line[wend - 1] == ')') {
        size_t open = wend - 1;
        while (open > w0 && line[open] != '(') open--;
        if (line[open] != '(' || open == w0) {
            snprintf(why, why_cap, "word '%.*s': a ')' without an alternate marker '(N)'", (int)(w1 - w0 > 40 ? 40 : w1 - w0),
                     line + w0);
            return LINE_BAD;
        }
        long n = 0;
        int digits = 0;
        for (size_t k = open + 1; k < wend - 1; k++) {
            if (line[k] < '0' || line[k] > '9' || digits >= 4) {
                digits = -1;
                break;
            }
            n = 10 * n + (line[k] - '0');
            digits++;
        }
        if (digits <= 0 || n < 1 || n > MARKER_MAX) {
            snprintf(why, why_cap, "word '%.*s': the alternate marker must be (N) with N in 1..%d",
                     (int)(w1 - w0 > 40 ? 40 : w1 - w0), line + w0, MARKER_MAX);
            return LINE_BAD;
        }
        wend = open;
    }
    int chars = 0;
    *wlen = 0;
    for (size_t k = w0; k < wend;) {
        unsigned char c = (unsigned char)line[k];
        if (c < 0x20 || c == 0x7F) {
            snprintf(why, why_cap, "word has control character 0x%02X at byte %zu", c, k + 1);
            return LINE_BAD;
        }
        int n = at_utf8_next((const unsigned char *)line + k, wend - k, NULL, NULL);
        if (!n) {
            snprintf(why, why_cap, "word has invalid UTF-8 at byte %zu", k + 1);
            return LINE_BAD;
        }
        if (++chars > ATTEND_G2P_MAX_LEN) {
            snprintf(why, why_cap, "word longer than %d characters", ATTEND_G2P_MAX_LEN);
            return LINE_BAD;
        }
        for (int b = 0; b < n; b++) {
            char ch = line[k + b];
            word[(*wlen)++] = n == 1 && ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
        }
        k += (size_t)n;
    }
    /* the phonemes */
    *plen = 0;
    *nphones = 0;
    while (i < len) {
        while (i < len && is_blank(line[i])) i++;
        if (i == len) break;
        size_t p0 = i;
        while (i < len && !is_blank(line[i])) i++;
        size_t p1 = i, letters = 0;
        while (p0 + letters < p1 && line[p0 + letters] >= 'A' && line[p0 + letters] <= 'Z') letters++;
        int digit = p0 + letters + 1 == p1 && line[p1 - 1] >= '0' && line[p1 - 1] <= '9';
        if (letters == 0 || letters > 8 || (p0 + letters != p1 && !digit)) {
            snprintf(why, why_cap, "phoneme '%.*s' is not upper-case letters with an optional stress digit",
                     (int)(p1 - p0 > 20 ? 20 : p1 - p0), line + p0);
            return LINE_BAD;
        }
        if (++*nphones > ATTEND_G2P_MAX_LEN) {
            snprintf(why, why_cap, "more than %d phonemes", ATTEND_G2P_MAX_LEN);
            return LINE_BAD;
        }
        size_t keep = keep_stress ? p1 - p0 : letters;
        if (*plen + keep + 1 > pron_cap) return LINE_NOMEM; /* cannot happen: pron_cap covers the limits */
        if (*plen) pron[(*plen)++] = ' ';
        memcpy(pron + *plen, line + p0, keep);
        *plen += keep;
    }
    if (*nphones == 0) {
        snprintf(why, why_cap, "word '%.*s' has no phonemes", (int)(w1 - w0 > 40 ? 40 : w1 - w0), line + w0);
        return LINE_BAD;
    }
    return LINE_ENTRY;
}

static int cmp_entry(const void *pa, const void *pb) {
    const g2p_entry *a = pa, *b = pb;
    if (a->word != b->word) return a->word < b->word ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

attend_g2p_dict *at_g2p_dict_new(void) { return calloc(1, sizeof(attend_g2p_dict)); }

void at_g2p_dict_finish(attend_g2p_dict *d) {
    if (d->n) qsort(d->entries, d->n, sizeof *d->entries, cmp_entry);
    for (size_t e = d->n; e-- > 0;) d->words[d->entries[e].word].first = (int)e;
    d->info.entries = (int)d->n;
    d->info.words = (int)d->nw;
    d->info.max_word_len = d->info.max_pron_len = 0;
    for (size_t w = 0; w < d->nw; w++) {
        int chars = 0;
        for (const char *c = d->text + d->words[w].text; *c; c++) chars += ((unsigned char)*c & 0xC0) != 0x80;
        if (chars > d->info.max_word_len) d->info.max_word_len = chars;
    }
    for (size_t e = 0; e < d->n; e++) {
        int nph = 1;
        for (const char *c = d->text + d->entries[e].pron; *c; c++) nph += *c == ' ';
        if (nph > d->info.max_pron_len) d->info.max_pron_len = nph;
    }
}

void attend_g2p_dict_free(attend_g2p_dict *d) {
    if (!d) return;
    free(d->text);
    free(d->entries);
    free(d->words);
    free(d->slots);
    free(d);
}

/* Adds one entry unless the word already has this pronunciation (found by
 * walking the word's chain of entries, newest first). */
int at_g2p_dict_add(attend_g2p_dict *d, const char *word, size_t wlen, const char *pron, size_t plen, int *dup) {
    int w = word_id(d, word, wlen);
    if (w < 0) return 0;
    *dup = 0;
    /* pron [plen] is not NUL-terminated; the stored copies are */
    for (int e = d->words[w].first; e >= 0; e = d->entries[e].prev)
        if (!strncmp(d->text + d->entries[e].pron, pron, plen) && d->text[d->entries[e].pron + plen] == '\0') {
            *dup = 1;
            return 1;
        }
    size_t off;
    if (d->n >= INT_MAX || !grow((void **)&d->entries, &d->entries_cap, d->n + 1, sizeof *d->entries) ||
        !text_add(d, pron, plen, &off))
        return 0;
    d->entries[d->n].word = w;
    d->entries[d->n].order = (int)d->n;
    d->entries[d->n].prev = d->words[w].first;
    d->entries[d->n].pron = off;
    d->words[w].first = (int)d->n;
    d->n++;
    d->words[w].count++;
    return 1;
}

attend_status attend_g2p_dict_parse(attend_g2p_dict **out, const char *text, size_t len, const char *label,
                                    const attend_g2p_options *opt, attend_error *err) {
    const char *who = "attend_g2p_dict_parse";
    CHECK(out, err, ATTEND_ERR_NULL, "%s: out is NULL", who);
    *out = NULL;
    CHECK(text || len == 0, err, ATTEND_ERR_NULL, "%s: text is NULL", who);
    if (!label) label = "<dictionary>";
    attend_g2p_options o = {0, 0};
    if (opt) o = *opt;
    attend_g2p_dict *d = at_g2p_dict_new();
    CHECK(d, err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    /* a word: 64 characters of at most 4 bytes; phonemes: 64 of at most 9 bytes + spaces */
    char word[4 * ATTEND_G2P_MAX_LEN + 1], pron[10 * ATTEND_G2P_MAX_LEN + 1], why[160];
    attend_status st = ATTEND_OK;
    size_t pos = 0;
    int line_no = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, l = end - pos;
        line_no++;
        if (l && text[pos + l - 1] == '\r') l--;
        const char *line = text + pos;
        pos = nl ? end + 1 : len;
        size_t wlen = 0, plen = 0;
        int nph = 0, dup = 0;
        why[0] = '\0';
        if (memchr(line, '\0', l)) {
            snprintf(why, sizeof why, "NUL byte in the line");
            nph = -1;
        }
        int kind = nph < 0 ? LINE_BAD
                           : parse_line(line, l, o.keep_stress, word, &wlen, pron, sizeof pron, &plen, &nph, why,
                                        sizeof why);
        if (kind == LINE_BLANK) d->info.blank++;
        else if (kind == LINE_COMMENT) d->info.comments++;
        else if (kind == LINE_BAD) {
            if (!o.skip_malformed) {
                st = at_fail(err, ATTEND_ERR_FORMAT, "%s:%d: %s", label, line_no, why);
                break;
            }
            if (d->info.skipped++ == 0)
                snprintf(d->info.first_skipped, sizeof d->info.first_skipped, "%s:%d: %s", label, line_no, why);
        } else if (kind == LINE_NOMEM || !at_g2p_dict_add(d, word, wlen, pron, plen, &dup)) {
            st = at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory at %s:%d", who, label, line_no);
            break;
        } else if (dup) {
            d->info.duplicates++;
        }
    }
    d->info.lines = line_no;
    if (st == ATTEND_OK) {
        at_g2p_dict_finish(d);
        *out = d;
        return at_ok(err);
    }
    attend_g2p_dict_free(d);
    return st;
}

attend_status attend_g2p_dict_read(attend_g2p_dict **out, const char *path, const attend_g2p_options *opt,
                                   attend_error *err) {
    const char *who = "attend_g2p_dict_read";
    CHECK(out && path, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !out ? "out" : "path");
    *out = NULL;
    FILE *f = fopen(path, "rb");
    CHECK(f, err, ATTEND_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    attend_status st = ATTEND_OK;
    for (;;) {
        if (!grow((void **)&buf, &cap, len + 65536, 1)) {
            st = at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory reading %s", who, path);
            break;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    if (st == ATTEND_OK && ferror(f)) st = at_fail(err, ATTEND_ERR_IO, "%s: read error", path);
    fclose(f);
    if (st == ATTEND_OK) st = attend_g2p_dict_parse(out, buf, len, path, opt, err);
    free(buf);
    return st;
}

void attend_g2p_dict_get_info(const attend_g2p_dict *d, attend_g2p_dict_info *info) {
    if (!info) return;
    if (d) *info = d->info;
    else memset(info, 0, sizeof *info);
}

int attend_g2p_dict_words(const attend_g2p_dict *d) { return d ? (int)d->nw : 0; }

const char *attend_g2p_dict_word(const attend_g2p_dict *d, int w) {
    return d && w >= 0 && (size_t)w < d->nw ? d->text + d->words[w].text : NULL;
}

int attend_g2p_dict_prons(const attend_g2p_dict *d, int w) {
    return d && w >= 0 && (size_t)w < d->nw ? d->words[w].count : 0;
}

const char *attend_g2p_dict_pron(const attend_g2p_dict *d, int w, int k) {
    if (!d || w < 0 || (size_t)w >= d->nw || k < 0 || k >= d->words[w].count) return NULL;
    return d->text + d->entries[d->words[w].first + k].pron;
}

/* ------------------------------------------------------------------- split */

attend_g2p_split attend_g2p_split_of(const char *word, size_t len) {
    unsigned b = (unsigned)(mix64(fnv1a(word ? word : "", word ? len : 0)) % 100);
    return b < 90 ? ATTEND_G2P_TRAIN : b < 95 ? ATTEND_G2P_DEV : ATTEND_G2P_TEST;
}

const char *attend_g2p_split_name(attend_g2p_split split) {
    switch (split) {
    case ATTEND_G2P_TRAIN: return "train";
    case ATTEND_G2P_DEV: return "dev";
    case ATTEND_G2P_TEST: return "test";
    case ATTEND_G2P_ALL: return "all";
    }
    return "?";
}

int at_g2p_in_split(const char *word, attend_g2p_split split) {
    return split == ATTEND_G2P_ALL || attend_g2p_split_of(word, strlen(word)) == split;
}

/* ----------------------------------------------------------------- dataset */

attend_status attend_g2p_dataset(attend_dataset **out, const attend_g2p_dict *d, attend_g2p_split split,
                                 attend_vocab *graphemes, attend_vocab *phonemes, int grow_vocab, attend_error *err) {
    const char *who = "attend_g2p_dataset";
    CHECK(out && d && graphemes && phonemes, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !out ? "out" : !d ? "dictionary" : !graphemes ? "graphemes" : "phonemes");
    *out = NULL;
    CHECK(split >= ATTEND_G2P_TRAIN && split <= ATTEND_G2P_ALL, err, ATTEND_ERR_ARG, "%s: unknown split %d", who,
          (int)split);
    attend_dataset *ds = NULL;
    TRY(attend_dataset_create(&ds, err));
    int32_t src[ATTEND_G2P_MAX_LEN], tgt[ATTEND_G2P_MAX_LEN];
    attend_status st = ATTEND_OK;
    for (size_t w = 0; st == ATTEND_OK && w < d->nw; w++) {
        const char *word = d->text + d->words[w].text;
        if (!at_g2p_in_split(word, split)) continue;
        int ns = 0, nt = 0;
        st = attend_vocab_encode(graphemes, ATTEND_TOKENIZE_CHAR, grow_vocab, word, strlen(word), src,
                                 ATTEND_G2P_MAX_LEN, &ns, err);
        for (int k = 0; st == ATTEND_OK && k < d->words[w].count; k++) {
            const char *p = d->text + d->entries[d->words[w].first + k].pron;
            st = attend_vocab_encode(phonemes, ATTEND_TOKENIZE_SPACE, grow_vocab, p, strlen(p), tgt,
                                     ATTEND_G2P_MAX_LEN, &nt, err);
            if (st == ATTEND_OK) st = attend_dataset_add(ds, src, ns, tgt, nt, err);
        }
    }
    if (st != ATTEND_OK) {
        attend_dataset_free(ds);
        return st;
    }
    *out = ds;
    return at_ok(err);
}

/* -------------------------------------------------------------- PER / WER */

int attend_g2p_edit_distance(const int32_t *a, int na, const int32_t *b, int nb) {
    if (na < 0 || nb < 0 || na > ATTEND_G2P_MAX_LEN || nb > ATTEND_G2P_MAX_LEN) return -1;
    if ((na && !a) || (nb && !b)) return -1;
    int prev[ATTEND_G2P_MAX_LEN + 1], cur[ATTEND_G2P_MAX_LEN + 1];
    for (int j = 0; j <= nb; j++) prev[j] = j;
    for (int i = 1; i <= na; i++) {
        cur[0] = i;
        for (int j = 1; j <= nb; j++) {
            int sub = prev[j - 1] + (a[i - 1] != b[j - 1]), del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (size_t)(nb + 1) * sizeof *prev);
    }
    return prev[nb];
}

attend_status attend_g2p_count_word(attend_g2p_counts *c, const int32_t *hyp, int hyp_len,
                                    const int32_t *const *refs, const int *ref_lens, int n_refs,
                                    attend_error *err) {
    const char *who = "attend_g2p_count_word";
    CHECK(c && refs && ref_lens && (hyp || hyp_len == 0), err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !c ? "counts" : !refs ? "refs" : !ref_lens ? "ref_lens" : "hyp");
    CHECK(n_refs >= 1, err, ATTEND_ERR_ARG, "%s: n_refs=%d, need at least one reference", who, n_refs);
    CHECK(hyp_len >= 0 && hyp_len <= ATTEND_G2P_MAX_LEN, err, ATTEND_ERR_CAPACITY,
          "%s: output length %d outside [0, %d]", who, hyp_len, ATTEND_G2P_MAX_LEN);
    int best = -1, best_len = 0, right = 0;
    for (int r = 0; r < n_refs; r++) {
        CHECK(ref_lens[r] >= 1 && ref_lens[r] <= ATTEND_G2P_MAX_LEN, err, ATTEND_ERR_CAPACITY,
              "%s: reference %d has length %d, outside [1, %d]", who, r, ref_lens[r], ATTEND_G2P_MAX_LEN);
        CHECK(refs[r], err, ATTEND_ERR_NULL, "%s: reference %d is NULL", who, r);
        int dist = attend_g2p_edit_distance(hyp, hyp_len, refs[r], ref_lens[r]);
        if (dist == 0) right = 1;
        if (best < 0 || dist < best) {
            best = dist;
            best_len = ref_lens[r];
        }
    }
    c->words++;
    c->wrong += !right;
    c->phone_errors += best;
    c->ref_phones += best_len;
    return at_ok(err);
}

double attend_g2p_per(const attend_g2p_counts *c) {
    return c && c->ref_phones > 0 ? (double)c->phone_errors / (double)c->ref_phones : 0;
}

double attend_g2p_wer(const attend_g2p_counts *c) {
    return c && c->words > 0 ? (double)c->wrong / (double)c->words : 0;
}

/* ------------------------------------------------------------------ models */

static int phoneme_token(const char *t) {
    size_t n = strlen(t), letters = 0;
    while (letters < n && t[letters] >= 'A' && t[letters] <= 'Z') letters++;
    return letters >= 1 && (letters == n || (letters + 1 == n && t[n - 1] >= '0' && t[n - 1] <= '9'));
}

attend_status attend_g2p_model_load(attend_model **out, const char *path, const attend_model_config *capacity,
                                    attend_vocab **graphemes, attend_vocab **phonemes, attend_error *err) {
    const char *who = "attend_g2p_model_load";
    CHECK(out && path && graphemes && phonemes, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !out ? "out" : !path ? "path" : !graphemes ? "graphemes" : "phonemes");
    *out = NULL;
    *graphemes = *phonemes = NULL;
    attend_model *m = NULL;
    attend_vocab *gv = NULL, *pv = NULL;
    attend_tokenizer tok = ATTEND_TOKENIZE_CHAR;
    TRY(attend_model_load(&m, path, capacity, &gv, &pv, &tok, err));
    attend_status st = ATTEND_OK;
    const attend_model_config *cfg = attend_model_get_config(m);
    if (tok != ATTEND_TOKENIZE_CHAR)
        st = at_fail(err, ATTEND_ERR_FORMAT, "%s: not a G2P model: its tokenizer is '%s', a G2P model reads characters",
                     path, attend_tokenizer_name(tok));
    else if (cfg->decoder == ATTEND_DECODER_POINTER || !pv)
        st = at_fail(err, ATTEND_ERR_FORMAT, "%s: not a G2P model: a pointer model has no phoneme vocabulary", path);
    for (int32_t i = 4; st == ATTEND_OK && i < attend_vocab_size(pv); i++)
        if (!phoneme_token(attend_vocab_token(pv, i)))
            st = at_fail(err, ATTEND_ERR_FORMAT,
                         "%s: not a G2P model: output token %d '%.40s' is not a phoneme (upper-case letters, an "
                         "optional digit)",
                         path, (int)i, attend_vocab_token(pv, i));
    if (st != ATTEND_OK) {
        attend_model_free(m);
        attend_vocab_free(gv);
        attend_vocab_free(pv);
        return st;
    }
    *out = m;
    *graphemes = gv;
    *phonemes = pv;
    return at_ok(err);
}

attend_status attend_g2p_encode_word(attend_vocab *graphemes, const char *word, size_t len, int32_t *ids,
                                     int max_ids, int *n_ids, attend_error *err) {
    const char *who = "attend_g2p_encode_word";
    CHECK(graphemes && (word || len == 0) && (ids || max_ids == 0) && n_ids, err, ATTEND_ERR_NULL, "%s: %s is NULL",
          who, !graphemes ? "graphemes" : !n_ids ? "n_ids" : !word ? "word" : "ids");
    *n_ids = 0;
    CHECK(len >= 1, err, ATTEND_ERR_ARG, "%s: the word is empty", who);
    CHECK(len <= 4 * ATTEND_G2P_MAX_LEN, err, ATTEND_ERR_ARG, "%s: word of %zu bytes is longer than %d characters",
          who, len, ATTEND_G2P_MAX_LEN);
    char low[4 * ATTEND_G2P_MAX_LEN];
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)word[i];
        CHECK(c > 0x20 && c != 0x7F, err, ATTEND_ERR_ARG,
              "%s: the word has %s 0x%02X at byte %zu (one word, no spaces)", who,
              c == ' ' || c == '\t' ? "white space" : "control character", c, i + 1);
        low[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : (char)c;
    }
    int n = 0;
    TRY(attend_vocab_encode(graphemes, ATTEND_TOKENIZE_CHAR, 0, low, len, ids, max_ids, &n, err));
    CHECK(n <= ATTEND_G2P_MAX_LEN, err, ATTEND_ERR_ARG, "%s: word of %d characters is longer than %d", who, n,
          ATTEND_G2P_MAX_LEN);
    *n_ids = n;
    return at_ok(err);
}

attend_status attend_g2p_pronounce_ensemble(attend_model *const *models, int M, attend_vocab *graphemes,
                                            const attend_vocab *phonemes, const char *word, size_t len, char *out,
                                            size_t cap, attend_error *err) {
    const char *who = M == 1 ? "attend_g2p_pronounce" : "attend_g2p_pronounce_ensemble";
    CHECK(models && graphemes && phonemes && out, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !models ? "models" : !graphemes ? "graphemes" : !phonemes ? "phonemes" : "out");
    CHECK(M >= 1 && M <= 64, err, ATTEND_ERR_ARG, "%s: %d models, need 1..64", who, M);
    for (int k = 0; k < M; k++) CHECK(models[k], err, ATTEND_ERR_NULL, "%s: model %d is NULL", who, k);
    CHECK(cap >= 1, err, ATTEND_ERR_CAPACITY, "%s: output buffer of 0 bytes", who);
    out[0] = '\0';
    int32_t src[ATTEND_G2P_MAX_LEN], ph[ATTEND_G2P_MAX_LEN], S = 0, n_out = 0;
    int ns = 0, L = ATTEND_G2P_MAX_LEN;
    TRY(attend_g2p_encode_word(graphemes, word, len, src, ATTEND_G2P_MAX_LEN, &ns, err));
    for (int k = 0; k < M; k++) {
        const attend_model_config *cfg = attend_model_get_config(models[k]);
        CHECK(ns <= cfg->max_src_len, err, ATTEND_ERR_CAPACITY,
              "%s: word of %d characters exceeds %s max_src_len=%d (load it with a larger capacity)", who, ns,
              M == 1 ? "the model's" : "a member's", cfg->max_src_len);
        if (cfg->max_tgt_len + 1 < L) L = cfg->max_tgt_len + 1;
    }
    S = ns;
    if (M == 1) TRY(attend_model_greedy(models[0], src, &S, 1, ns, L, ph, &n_out, NULL, err));
    else TRY(attend_ensemble_greedy(models, M, src, &S, 1, ns, L, ph, &n_out, NULL, err));
    return attend_vocab_decode(phonemes, ATTEND_TOKENIZE_SPACE, ph, n_out, out, cap, err);
}

attend_status attend_g2p_pronounce(attend_model *m, attend_vocab *graphemes, const attend_vocab *phonemes,
                                   const char *word, size_t len, char *out, size_t cap, attend_error *err) {
    if (!m) return at_fail(err, ATTEND_ERR_NULL, "attend_g2p_pronounce: model is NULL");
    return attend_g2p_pronounce_ensemble(&m, 1, graphemes, phonemes, word, len, out, cap, err);
}

/* ---------------------------------------------------------------- evaluate */

int attend_g2p_vocab_has_stress(const attend_vocab *phonemes) {
    if (!phonemes) return 0;
    for (int32_t id = 4; id < attend_vocab_size(phonemes); id++) {
        const char *t = attend_vocab_token(phonemes, id);
        size_t n = t ? strlen(t) : 0;
        if (n >= 2 && t[n - 1] >= '0' && t[n - 1] <= '9') return 1;
    }
    return 0;
}

/* canon [V]: for each phoneme id, the smallest id with the same letters once a
 * trailing stress digit is dropped ("AH1" -> the id of "AH0" or "AH"); the
 * specials map to themselves. */
static void stress_free_ids(const attend_vocab *phonemes, int32_t *canon, int V) {
    for (int32_t id = 0; id < V; id++) {
        canon[id] = id;
        const char *t = id >= 4 ? attend_vocab_token(phonemes, id) : NULL;
        if (!t) continue;
        size_t n = strlen(t);
        if (n >= 2 && t[n - 1] >= '0' && t[n - 1] <= '9') n--;
        for (int32_t j = 4; j < id; j++) {
            const char *u = attend_vocab_token(phonemes, j);
            size_t nu = u ? strlen(u) : 0;
            if (nu >= 2 && u[nu - 1] >= '0' && u[nu - 1] <= '9') nu--;
            if (u && nu == n && !memcmp(t, u, n)) {
                canon[id] = canon[j];
                break;
            }
        }
    }
}

attend_status attend_g2p_evaluate(attend_model *m, const attend_g2p_dict *d, attend_g2p_split split,
                                  attend_vocab *graphemes, attend_vocab *phonemes,
                                  const attend_g2p_eval_options *opt, attend_g2p_counts *c, attend_error *err) {
    CHECK(m, err, ATTEND_ERR_NULL, "attend_g2p_evaluate: model is NULL");
    return attend_g2p_evaluate_ensemble(&m, 1, d, split, graphemes, phonemes, opt, c, err);
}

/* Greedy decoding of nb encoded words, row k at src + k*S: the rows are
 * repacked in place to the batch's own width (its longest word), padded,
 * then decoded by one model (M == 1) or the ensemble. */
attend_status at_g2p_greedy_rows(attend_model *const *models, int M, int32_t *src, const int *src_len, int nb, int S,
                                 int L, int32_t *out, int *out_len, attend_error *err) {
    // src [nb,S] (repacked to [nb,Sb]), src_len [nb], out [nb,L], out_len [nb]
    int Sb = 1;
    for (int k = 0; k < nb; k++)
        if (src_len[k] > Sb) Sb = src_len[k];
    for (int k = 1; k < nb; k++) memmove(src + (size_t)k * Sb, src + (size_t)k * S, (size_t)Sb * sizeof *src);
    for (int k = 0; k < nb; k++)
        for (int j = src_len[k]; j < Sb; j++) src[(size_t)k * Sb + j] = ATTEND_PAD;
    return M == 1 ? attend_model_greedy(models[0], src, src_len, nb, Sb, L, out, out_len, NULL, err)
                  : attend_ensemble_greedy(models, M, src, src_len, nb, Sb, L, out, out_len, NULL, err);
}

attend_status attend_g2p_evaluate_ensemble(attend_model *const *models, int M, const attend_g2p_dict *d,
                                           attend_g2p_split split, attend_vocab *graphemes, attend_vocab *phonemes,
                                           const attend_g2p_eval_options *opt, attend_g2p_counts *c,
                                           attend_error *err) {
    const char *who = M == 1 ? "attend_g2p_evaluate" : "attend_g2p_evaluate_ensemble";
    CHECK(models && d && graphemes && phonemes && c, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !models ? "models" : !d ? "dictionary" : !graphemes ? "graphemes" : !phonemes ? "phonemes" : "counts");
    CHECK(M >= 1 && M <= 64, err, ATTEND_ERR_ARG, "%s: %d models, need 1..64", who, M);
    for (int k = 0; k < M; k++) CHECK(models[k], err, ATTEND_ERR_NULL, "%s: model %d is NULL", who, k);
    memset(c, 0, sizeof *c);
    attend_g2p_eval_options o = {0, 0, 0, 0, 0, 0};
    if (opt) o = *opt;
    CHECK(M == 1 || o.coverage_penalty == 0, err, ATTEND_ERR_ARG,
          "%s: the coverage penalty needs one model, not an ensemble of %d", who, M);
    const attend_model_config *cfg = attend_model_get_config(models[0]);
    int beam = o.beam > 1 ? o.beam : 0;
    int B = beam ? 1 : o.batch > 0 ? o.batch : cfg->max_batch;
    CHECK(beam <= 64, err, ATTEND_ERR_ARG, "%s: beam width %d outside [1,64]", who, o.beam);
    int max_src = cfg->max_src_len, max_tgt = cfg->max_tgt_len;
    for (int k = 0; k < M; k++) {
        const attend_model_config *ck = attend_model_get_config(models[k]);
        CHECK(B <= ck->max_batch && (!beam || beam <= ck->max_batch), err, ATTEND_ERR_CAPACITY,
              "%s: %s %d exceeds %s max_batch=%d", who, beam ? "beam width" : "batch", beam ? beam : B,
              M == 1 ? "the model's" : "a member's", ck->max_batch);
        if (ck->max_src_len < max_src) max_src = ck->max_src_len;
        if (ck->max_tgt_len < max_tgt) max_tgt = ck->max_tgt_len;
    }
    CHECK(split >= ATTEND_G2P_TRAIN && split <= ATTEND_G2P_ALL, err, ATTEND_ERR_ARG, "%s: unknown split %d", who,
          (int)split);
    int S = max_src < ATTEND_G2P_MAX_LEN ? max_src : ATTEND_G2P_MAX_LEN;
    int L = max_tgt + 1 < ATTEND_G2P_MAX_LEN ? max_tgt + 1 : ATTEND_G2P_MAX_LEN;
    int V = attend_vocab_size(phonemes);
    int R = 1, K = beam > B ? beam : B; /* most pronunciations of one word; output rows */
    for (size_t w = 0; w < d->nw; w++)
        if (d->words[w].count > R) R = d->words[w].count;
    /* work buffers, one allocation: sources [B,S], lengths [B], word ids [B], outputs
     * [K,L], output lengths [K], references [R,ATTEND_G2P_MAX_LEN], the stress-free
     * phoneme ids [V] (ignore_stress) */
    size_t n32 = (size_t)B * S + 2 * (size_t)B + (size_t)K * L + (size_t)K + (size_t)R * ATTEND_G2P_MAX_LEN +
                 (size_t)V;
    int32_t *mem = malloc(n32 * sizeof *mem);
    int *ref_lens = malloc((size_t)R * sizeof *ref_lens);
    const int32_t **refp = malloc((size_t)R * sizeof *refp);
    if (!mem || !ref_lens || !refp) {
        free(mem);
        free(ref_lens);
        free(refp);
        return at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    }
    int32_t *src = mem, *src_len = src + (size_t)B * S, *which = src_len + B, *out = which + B;
    int32_t *out_len = out + (size_t)K * L, *refs = out_len + K, *canon = refs + (size_t)R * ATTEND_G2P_MAX_LEN;
    for (int r = 0; r < R; r++) refp[r] = refs + (size_t)r * ATTEND_G2P_MAX_LEN;
    if (o.ignore_stress) stress_free_ids(phonemes, canon, V);
    double score[64];
    attend_status st = ATTEND_OK;
    size_t w = 0;
    int nb = 0, done_words = 0;
    while (st == ATTEND_OK && w < d->nw && (o.max_words <= 0 || done_words < o.max_words)) {
        /* the next batch of words of the split */
        nb = 0;
        while (w < d->nw && nb < B && (o.max_words <= 0 || done_words + nb < o.max_words)) {
            const char *word = d->text + d->words[w].text;
            if (at_g2p_in_split(word, split)) {
                int ns = 0;
                st = attend_g2p_encode_word(graphemes, word, strlen(word), src + (size_t)nb * S, S, &ns, err);
                if (st == ATTEND_ERR_CAPACITY)
                    st = at_fail(err, ATTEND_ERR_CAPACITY, "%s: word '%.64s' is longer than %s max_src_len=%d", who,
                                 word, M == 1 ? "the model's" : "the members' smallest", max_src);
                if (st != ATTEND_OK) break;
                src_len[nb] = ns;
                which[nb++] = (int32_t)w;
            }
            w++;
        }
        if (st != ATTEND_OK || nb == 0) break;
        if (beam) {
            int got = 0;
            attend_beam_options bo = {o.alpha, o.coverage_penalty};
            st = M == 1 ? attend_model_beam_opts(models[0], src, src_len[0], beam, 1, L, &bo, out, out_len, score,
                                                 NULL, &got, err)
                        : attend_ensemble_beam(models, M, src, src_len[0], beam, 1, L, o.alpha, out, out_len, score,
                                               NULL, &got, err);
            if (st == ATTEND_OK && got == 0) out_len[0] = 0;
        } else {
            st = at_g2p_greedy_rows(models, M, src, src_len, nb, S, L, out, out_len, err);
        }
        for (int k = 0; st == ATTEND_OK && k < nb; k++) {
            const g2p_word *gw = &d->words[which[k]];
            for (int r = 0; st == ATTEND_OK && r < gw->count; r++) {
                const char *p = d->text + d->entries[gw->first + r].pron;
                st = attend_vocab_encode(phonemes, ATTEND_TOKENIZE_SPACE, 0, p, strlen(p), refs + (size_t)r * ATTEND_G2P_MAX_LEN,
                                         ATTEND_G2P_MAX_LEN, &ref_lens[r], err);
                for (int j = 0; o.ignore_stress && st == ATTEND_OK && j < ref_lens[r]; j++) {
                    int32_t *t = refs + (size_t)r * ATTEND_G2P_MAX_LEN + j;
                    if (*t >= 0 && *t < V) *t = canon[*t];
                }
            }
            int32_t *hyp = out + (size_t)k * L;
            for (int j = 0; o.ignore_stress && j < out_len[k]; j++)
                if (hyp[j] >= 0 && hyp[j] < V) hyp[j] = canon[hyp[j]];
            if (st == ATTEND_OK) st = attend_g2p_count_word(c, hyp, out_len[k], refp, ref_lens, gw->count, err);
        }
        done_words += nb;
    }
    free(ref_lens);
    free(refp);
    free(mem);
    if (st != ATTEND_OK) return st;
    return at_ok(err);
}
