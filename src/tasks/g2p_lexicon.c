/*
 * g2p_lexicon.c — a pronunciation lexicon looked up before the G2P model
 * (issue 29; docs/G2P.md, "Lexicon first"): built from a parsed CMUdict-format
 * dictionary (attend_g2p_dict, so its lines are checked and named path:line
 * there), held in one compact block that is also its file form, and looked up
 * by binary search.
 *
 * The block (all integers little-endian; the file is the block):
 *   [0,64)   header: magic "ATTLEX" 0 2 (the last byte: version 2), u32 flags
 *            (bit 0: phonemes carry stress digits), u32 words, u32 entries,
 *            u32 phonemes, u64 record bytes, i64 source size, i64 source
 *            mtime (ns), u64 phoneme-name bytes (a multiple of 4), u64 checksum
 *            (lex_checksum of the whole file, these 8 bytes read as zero;
 *            version 1 had none: such a file, e.g. an old cache, is refused
 *            and the command line rebuilds its cache)
 *   names    the phoneme names, each NUL-terminated, padded with NULs
 *   offsets  u32 [words]: where each word's record starts in the records
 *   records  per word, in strcmp order of the words: the word, NUL, the
 *            number of pronunciations (one byte, 1..255), then each
 *            pronunciation as phoneme ids + 1 (one byte each), then a 0 byte
 * Loading reads the file into one allocation and checks every offset, record
 * and phoneme id, that the words are strictly increasing, valid UTF-8 without
 * control characters, and the checksum, so a damaged file is refused
 * (ATTEND_ERR_FORMAT) rather than misread (the structure checks alone let
 * a flipped byte inside a word or a phoneme id read as another lexicon).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "io/text.h"

#define LEX_HEAD 64
#define LEX_MAX_PHONES 255
#define LEX_WORD_BYTES (4 * ATTEND_G2P_MAX_LEN + 1)

static const unsigned char lex_magic[8] = {'A', 'T', 'T', 'L', 'E', 'X', 0, 2};
#define LEX_SUM_AT 56 /* the checksum's place in the header */

struct attend_g2p_lexicon {
    attend_g2p_lexicon_info info;
    unsigned char *mem;            /* [bytes]: the block, as on disk (one allocation) */
    size_t bytes;
    const char *phones[LEX_MAX_PHONES]; /* [info.phonemes] names, into mem */
    const unsigned char *offsets;  /* [words] u32 LE, into mem */
    const unsigned char *records;  /* [record_bytes], into mem */
    size_t record_bytes;
};

static uint32_t rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static void wr32(unsigned char *p, uint32_t v) {
    for (int k = 0; k < 4; k++) p[k] = (unsigned char)(v >> (8 * k));
}
static void wr64(unsigned char *p, uint64_t v) {
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

/* FNV-1a over 64-bit little-endian words of m [n] (the last one zero-padded),
 * the checksum's own 8 bytes read as zero, then the length: every single
 * changed word changes the result (each step is a bijection of the state). */
static uint64_t lex_checksum(const unsigned char *m, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = 0;
        if (i != LEX_SUM_AT) {
            unsigned char b[8] = {0};
            memcpy(b, m + i, n - i < 8 ? n - i : 8);
            w = rd64(b);
        }
        h = (h ^ w) * 0x100000001b3ull;
    }
    return (h ^ (uint64_t)n) * 0x100000001b3ull;
}

/* 1 when w [n] is at most LEX_WORD_BYTES - 1 bytes of UTF-8 with no white
 * space or control character (C0, DEL, C1): what a dictionary's words are */
static int clean_word(const unsigned char *w, size_t n) {
    if (n >= LEX_WORD_BYTES) return 0;
    for (size_t i = 0; i < n;) {
        uint32_t c;
        int k = at_utf8_next(w + i, n - i, &c, NULL);
        if (k <= 0 || c <= ' ' || (c >= 0x7F && c <= 0x9F)) return 0;
        i += (size_t)k;
    }
    return 1;
}

static void lex_seal(attend_g2p_lexicon *lx) { wr64(lx->mem + LEX_SUM_AT, lex_checksum(lx->mem, lx->bytes)); }

void attend_g2p_lexicon_free(attend_g2p_lexicon *lx) {
    if (!lx) return;
    free(lx->mem);
    free(lx);
}

/* Checks the block in lx->mem [lx->bytes] and sets the pointers and info
 * (label names it in messages). */
static attend_status lex_index(attend_g2p_lexicon *lx, const char *label, attend_error *err) {
    const char *who = "attend_g2p_lexicon_load";
    const unsigned char *m = lx->mem;
    CHECK(lx->bytes >= LEX_HEAD && !memcmp(m, lex_magic, 6), err, ATTEND_ERR_FORMAT,
          "%s: '%s' is not an attend lexicon file (no ATTLEX header)", who, label);
    CHECK(m[6] == 0 && m[7] == 2, err, ATTEND_ERR_FORMAT, "%s: '%s': lexicon format version %d, this attend reads 2",
          who, label, m[7]);
    uint32_t flags = rd32(m + 8), nw = rd32(m + 12), ne = rd32(m + 16), np = rd32(m + 20);
    uint64_t rb = rd64(m + 24), nb = rd64(m + 48);
    CHECK(np <= LEX_MAX_PHONES && nb % 4 == 0 && nw <= ne && flags <= 1, err, ATTEND_ERR_FORMAT,
          "%s: '%s': bad header (%u phonemes, names %llu bytes, %u words, %u entries, flags %u)", who, label, np,
          (unsigned long long)nb, nw, ne, flags);
    uint64_t need = (uint64_t)LEX_HEAD + nb + 4ull * nw + rb;
    CHECK(nb <= lx->bytes && rb <= lx->bytes && need == lx->bytes, err, ATTEND_ERR_FORMAT,
          "%s: '%s': %zu bytes, the header says %llu (truncated or damaged)", who, label, lx->bytes,
          (unsigned long long)need);
    CHECK(rd64(m + LEX_SUM_AT) == lex_checksum(m, lx->bytes), err, ATTEND_ERR_FORMAT,
          "%s: '%s': the checksum does not match (damaged)", who, label);
    const char *names = (const char *)m + LEX_HEAD;
    size_t at = 0;
    for (uint32_t k = 0; k < np; k++) {
        const char *end = memchr(names + at, '\0', nb - at);
        CHECK(end && end > names + at, err, ATTEND_ERR_FORMAT, "%s: '%s': phoneme name %u is damaged", who, label, k);
        lx->phones[k] = names + at;
        at = (size_t)(end - names) + 1;
    }
    lx->offsets = m + LEX_HEAD + nb;
    lx->records = lx->offsets + 4ull * nw;
    lx->record_bytes = (size_t)rb;
    const char *prev = NULL;
    uint32_t entries = 0;
    for (uint32_t w = 0; w < nw; w++) {
        uint32_t o = rd32(lx->offsets + 4ull * w);
        const unsigned char *r = lx->records + o, *end = lx->records + rb;
        const unsigned char *z = o < rb ? memchr(r, '\0', (size_t)(end - r)) : NULL;
        CHECK(z && z > r && z + 1 < end && z[1] >= 1, err, ATTEND_ERR_FORMAT,
              "%s: '%s': record of word %u is damaged", who, label, w);
        CHECK(clean_word(r, (size_t)(z - r)), err, ATTEND_ERR_FORMAT,
              "%s: '%s': word %u is not %d bytes or fewer of UTF-8 without white space or control characters", who,
              label, w, LEX_WORD_BYTES - 1);
        CHECK(!prev || strcmp(prev, (const char *)r) < 0, err, ATTEND_ERR_FORMAT,
              "%s: '%s': words %u and %u are out of order", who, label, w - 1, w);
        prev = (const char *)r;
        const unsigned char *p = z + 2;
        for (int k = 0; k < z[1]; k++) {
            CHECK(p < end && *p, err, ATTEND_ERR_FORMAT, "%s: '%s': word '%.64s': pronunciation %d is damaged", who,
                  label, (const char *)r, k + 1);
            for (; p < end && *p; p++)
                CHECK(*p <= np, err, ATTEND_ERR_FORMAT, "%s: '%s': word '%.64s': phoneme id %d of %u", who, label,
                      (const char *)r, *p - 1, np);
            CHECK(p < end, err, ATTEND_ERR_FORMAT, "%s: '%s': word '%.64s': pronunciation %d runs past the end", who,
                  label, (const char *)r, k + 1);
            p++;
        }
        entries += z[1];
    }
    CHECK(entries == ne, err, ATTEND_ERR_FORMAT, "%s: '%s': %u pronunciations, the header says %u", who, label,
          entries, ne);
    lx->info.words = (int)nw;
    lx->info.entries = (int)ne;
    lx->info.phonemes = (int)np;
    lx->info.stress = (int)(flags & 1);
    lx->info.bytes = lx->bytes;
    lx->info.source_size = (int64_t)rd64(m + 32);
    lx->info.source_mtime_ns = (int64_t)rd64(m + 40);
    return ATTEND_OK;
}

/* ------------------------------------------------------------ from a dictionary */

/* Sorts word ids [n] of d by strcmp of the words (merge sort: no global state). */
static void sort_words(const attend_g2p_dict *d, int *ids, int *tmp, int n) {
    if (n < 2) return;
    int h = n / 2;
    sort_words(d, ids, tmp, h);
    sort_words(d, ids + h, tmp, n - h);
    int i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = strcmp(attend_g2p_dict_word(d, ids[i]), attend_g2p_dict_word(d, ids[j])) <= 0 ? ids[i++] : ids[j++];
    while (i < h) tmp[k++] = ids[i++];
    while (j < n) tmp[k++] = ids[j++];
    memcpy(ids, tmp, (size_t)n * sizeof *ids);
}

/* Id of phoneme name [len] in names [*np] (added when new); -1 when the table is full. */
static int phone_id(const char **names, size_t *lens, int *np, const char *name, size_t len) {
    for (int k = 0; k < *np; k++)
        if (lens[k] == len && !memcmp(names[k], name, len)) return k;
    if (*np == LEX_MAX_PHONES) return -1;
    names[*np] = name;
    lens[*np] = len;
    return (*np)++;
}

attend_status attend_g2p_lexicon_from_dict(attend_g2p_lexicon **out, const attend_g2p_dict *d, attend_error *err) {
    const char *who = "attend_g2p_lexicon_from_dict";
    CHECK(out, err, ATTEND_ERR_NULL, "%s: out is NULL", who);
    *out = NULL;
    CHECK(d, err, ATTEND_ERR_NULL, "%s: dictionary is NULL", who);
    int nw = attend_g2p_dict_words(d);
    /* sizes first: phoneme names, records */
    const char *names[LEX_MAX_PHONES];
    size_t lens[LEX_MAX_PHONES], names_bytes = 0, rec_bytes = 0;
    int np = 0, stress = 0;
    uint64_t ne = 0;
    for (int w = 0; w < nw; w++) {
        int n = attend_g2p_dict_prons(d, w);
        CHECK(n >= 1 && n <= 255, err, ATTEND_ERR_CAPACITY, "%s: word '%.64s' has %d pronunciations, at most 255", who,
              attend_g2p_dict_word(d, w), n);
        rec_bytes += strlen(attend_g2p_dict_word(d, w)) + 2;
        ne += (uint64_t)n;
        for (int k = 0; k < n; k++) {
            const char *p = attend_g2p_dict_pron(d, w, k);
            rec_bytes++;
            while (*p) {
                size_t len = strcspn(p, " ");
                int id = phone_id(names, lens, &np, p, len);
                CHECK(id >= 0, err, ATTEND_ERR_CAPACITY, "%s: word '%.64s': more than %d distinct phonemes", who,
                      attend_g2p_dict_word(d, w), LEX_MAX_PHONES);
                if (len >= 2 && p[len - 1] >= '0' && p[len - 1] <= '9') stress = 1;
                rec_bytes++;
                p += len;
                while (*p == ' ') p++;
            }
        }
    }
    CHECK(rec_bytes <= UINT32_MAX && ne <= UINT32_MAX, err, ATTEND_ERR_CAPACITY, "%s: the lexicon exceeds 4 GiB", who);
    for (int k = 0; k < np; k++) names_bytes += lens[k] + 1;
    names_bytes = (names_bytes + 3) / 4 * 4;
    size_t bytes = LEX_HEAD + names_bytes + 4 * (size_t)nw + rec_bytes;
    attend_g2p_lexicon *lx = calloc(1, sizeof *lx);
    unsigned char *m = calloc(1, bytes);
    int *ids = malloc(((size_t)nw + 1) * 2 * sizeof *ids);
    if (!lx || !m || !ids) {
        free(lx);
        free(m);
        free(ids);
        return at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes", who, bytes);
    }
    memcpy(m, lex_magic, 8);
    wr32(m + 8, (uint32_t)stress);
    wr32(m + 12, (uint32_t)nw);
    wr32(m + 16, (uint32_t)ne);
    wr32(m + 20, (uint32_t)np);
    wr64(m + 24, rec_bytes);
    wr64(m + 48, names_bytes);
    size_t at = LEX_HEAD;
    for (int k = 0; k < np; k++) {
        memcpy(m + at, names[k], lens[k]);
        at += lens[k] + 1;
    }
    for (int w = 0; w < nw; w++) ids[w] = w;
    sort_words(d, ids, ids + nw, nw);
    unsigned char *offs = m + LEX_HEAD + names_bytes, *rec = offs + 4 * (size_t)nw;
    size_t r = 0;
    for (int i = 0; i < nw; i++) {
        int w = ids[i];
        const char *word = attend_g2p_dict_word(d, w);
        wr32(offs + 4 * (size_t)i, (uint32_t)r);
        size_t wl = strlen(word) + 1;
        memcpy(rec + r, word, wl);
        r += wl;
        int n = attend_g2p_dict_prons(d, w);
        rec[r++] = (unsigned char)n;
        for (int k = 0; k < n; k++) {
            const char *p = attend_g2p_dict_pron(d, w, k);
            while (*p) {
                size_t len = strcspn(p, " ");
                rec[r++] = (unsigned char)(phone_id(names, lens, &np, p, len) + 1);
                p += len;
                while (*p == ' ') p++;
            }
            rec[r++] = 0;
        }
    }
    free(ids);
    lx->mem = m;
    lx->bytes = bytes;
    lex_seal(lx);
    attend_status st = lex_index(lx, "<built>", err);
    if (st != ATTEND_OK) { /* a bug, not bad input: the block was just built */
        attend_g2p_lexicon_free(lx);
        return st;
    }
    *out = lx;
    return at_ok(err);
}

attend_status attend_g2p_lexicon_read(attend_g2p_lexicon **out, const char *path, const attend_g2p_options *opt,
                                      attend_g2p_dict_info *dict_info, attend_error *err) {
    CHECK(out, err, ATTEND_ERR_NULL, "attend_g2p_lexicon_read: out is NULL");
    *out = NULL;
    CHECK(path, err, ATTEND_ERR_NULL, "attend_g2p_lexicon_read: path is NULL");
    struct stat sb;
    int have_stat = stat(path, &sb) == 0;
    attend_g2p_dict *d = NULL;
    TRY(attend_g2p_dict_read(&d, path, opt, err));
    if (dict_info) attend_g2p_dict_get_info(d, dict_info);
    attend_status st = attend_g2p_lexicon_from_dict(out, d, err);
    attend_g2p_dict_free(d);
    if (st != ATTEND_OK) return st;
    if (have_stat) {
        attend_g2p_lexicon *lx = *out;
        wr64(lx->mem + 32, (uint64_t)sb.st_size);
        wr64(lx->mem + 40, (uint64_t)((int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec));
        lx->info.source_size = (int64_t)sb.st_size;
        lx->info.source_mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
        lex_seal(lx);
    }
    return ATTEND_OK;
}

/* ------------------------------------------------------------ the file form */

/* through the project's one writer (attend/io.h): a temporary created with
 * O_EXCL|O_NOFOLLOW, fsynced and renamed over path; a FIFO or device at path
 * is refused, never replaced */
attend_status attend_g2p_lexicon_save(const attend_g2p_lexicon *lx, const char *path, attend_error *err) {
    CHECK(lx && path, err, ATTEND_ERR_NULL, "attend_g2p_lexicon_save: %s is NULL", !lx ? "lexicon" : "path");
    return attend_file_write(path, lx->mem, lx->bytes, 0, err);
}

attend_status attend_g2p_lexicon_load(attend_g2p_lexicon **out, const char *path, attend_error *err) {
    const char *who = "attend_g2p_lexicon_load";
    CHECK(out, err, ATTEND_ERR_NULL, "%s: out is NULL", who);
    *out = NULL;
    CHECK(path, err, ATTEND_ERR_NULL, "%s: path is NULL", who);
    FILE *f = fopen(path, "rb");
    CHECK(f, err, ATTEND_ERR_IO, "%s: cannot open '%s': %s", who, path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0) {
        attend_status st = at_fail(err, ATTEND_ERR_IO, "%s: cannot stat '%s': %s", who, path, strerror(errno));
        fclose(f);
        return st;
    }
    if (!S_ISREG(sb.st_mode) || sb.st_size < LEX_HEAD) {
        fclose(f);
        return at_fail(err, ATTEND_ERR_FORMAT, "%s: '%s' is not an attend lexicon file (%s)", who, path,
                       S_ISREG(sb.st_mode) ? "shorter than its header" : "not a regular file");
    }
    attend_g2p_lexicon *lx = calloc(1, sizeof *lx);
    unsigned char *m = (uint64_t)sb.st_size <= SIZE_MAX ? malloc((size_t)sb.st_size) : NULL;
    if (!lx || !m) {
        fclose(f);
        free(lx);
        free(m);
        return at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory for '%s' (%lld bytes)", who, path,
                       (long long)sb.st_size);
    }
    size_t got = fread(m, 1, (size_t)sb.st_size, f);
    fclose(f);
    lx->mem = m;
    lx->bytes = got;
    attend_status st = got == (size_t)sb.st_size ? lex_index(lx, path, err)
                                                  : at_fail(err, ATTEND_ERR_IO, "%s: cannot read '%s'", who, path);
    if (st != ATTEND_OK) {
        attend_g2p_lexicon_free(lx);
        return st;
    }
    *out = lx;
    return at_ok(err);
}

/* ------------------------------------------------------------ lookups */

void attend_g2p_lexicon_get_info(const attend_g2p_lexicon *lx, attend_g2p_lexicon_info *info) {
    if (!info) return;
    if (!lx) memset(info, 0, sizeof *info);
    else *info = lx->info;
}

int attend_g2p_lexicon_find(const attend_g2p_lexicon *lx, const char *word, size_t len) {
    if (!lx || !word || len == 0 || len >= LEX_WORD_BYTES) return -1;
    char key[LEX_WORD_BYTES];
    for (size_t i = 0; i < len; i++) {
        char c = word[i];
        if (c == '\0') return -1;
        key[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
    }
    key[len] = '\0';
    int lo = 0, hi = lx->info.words - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(key, (const char *)lx->records + rd32(lx->offsets + 4 * (size_t)mid));
        if (c == 0) return mid;
        if (c < 0) hi = mid - 1;
        else lo = mid + 1;
    }
    return -1;
}

const char *attend_g2p_lexicon_word(const attend_g2p_lexicon *lx, int w) {
    if (!lx || w < 0 || w >= lx->info.words) return NULL;
    return (const char *)lx->records + rd32(lx->offsets + 4 * (size_t)w);
}

int attend_g2p_lexicon_prons(const attend_g2p_lexicon *lx, int w) {
    const char *word = attend_g2p_lexicon_word(lx, w);
    return word ? ((const unsigned char *)word)[strlen(word) + 1] : 0;
}

attend_status attend_g2p_lexicon_pron(const attend_g2p_lexicon *lx, int w, int k, char *out, size_t cap,
                                      attend_error *err) {
    const char *who = "attend_g2p_lexicon_pron";
    CHECK(lx && out, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !lx ? "lexicon" : "out");
    CHECK(cap >= 1, err, ATTEND_ERR_CAPACITY, "%s: output buffer of 0 bytes", who);
    out[0] = '\0';
    CHECK(w >= 0 && w < lx->info.words, err, ATTEND_ERR_ARG, "%s: word %d outside [0,%d)", who, w, lx->info.words);
    const char *word = attend_g2p_lexicon_word(lx, w);
    const unsigned char *p = (const unsigned char *)word + strlen(word) + 1;
    int n = *p++;
    CHECK(k >= 0 && k < n, err, ATTEND_ERR_ARG, "%s: '%s' has %d pronunciation%s, not %d", who, word, n,
          n == 1 ? "" : "s", k + 1);
    for (int j = 0; j < k; j++) p += strlen((const char *)p) + 1;
    size_t at = 0;
    for (; *p; p++) {
        const char *ph = lx->phones[*p - 1];
        size_t len = strlen(ph);
        CHECK(at + len + (at > 0) < cap, err, ATTEND_ERR_CAPACITY, "%s: '%s': the pronunciation needs more than %zu bytes",
              who, word, cap);
        if (at) out[at++] = ' ';
        memcpy(out + at, ph, len + 1);
        at += len;
    }
    return at_ok(err);
}

const char *attend_g2p_lexicon_phoneme(const attend_g2p_lexicon *lx, int id) {
    if (!lx || id < 0 || id >= lx->info.phonemes) return NULL;
    return lx->phones[id];
}

attend_status attend_g2p_lexicon_check_phonemes(const attend_g2p_lexicon *lx, const attend_vocab *phonemes,
                                                const char *label, attend_error *err) {
    const char *who = "attend_g2p_lexicon_check_phonemes";
    CHECK(lx && phonemes, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !lx ? "lexicon" : "phonemes");
    if (!label) label = "<lexicon>";
    int model_stress = attend_g2p_vocab_has_stress(phonemes);
    CHECK(lx->info.stress == model_stress || lx->info.words == 0, err, ATTEND_ERR_ARG,
          "%s: the model's phonemes %s stress digits and %s's %s (read it with keep_stress = %d)", label,
          model_stress ? "carry" : "carry no", label, lx->info.stress ? "do" : "do not", model_stress);
    for (int k = 0; k < lx->info.phonemes; k++) {
        const char *ph = lx->phones[k];
        if (attend_vocab_find(phonemes, ph, strlen(ph)) >= 4) continue;
        /* the first word that uses it, for the message */
        const char *first = "?";
        for (int w = 0; w < lx->info.words && first[0] == '?'; w++) {
            const char *word = attend_g2p_lexicon_word(lx, w);
            const unsigned char *p = (const unsigned char *)word + strlen(word) + 1;
            for (int j = 0, n = *p++; j < n && first[0] == '?'; j++, p++)
                for (; *p; p++)
                    if (*p == k + 1) first = word;
        }
        return at_fail(err, ATTEND_ERR_ARG, "%s: phoneme '%s' (first in '%.64s') is not one of the model's", label, ph,
                       first);
    }
    return at_ok(err);
}
