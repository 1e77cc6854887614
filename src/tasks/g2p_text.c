/*
 * g2p_text.c — running text for G2P (issue 29 item 2; docs/G2P.md, "Running
 * text", states every rule this file implements, in the same order).
 *
 * attend_g2p_text_normalize: text -> tokens (words in lower case, spelled
 * letters in upper case, `|` and `||` phrase breaks) and notes (one line per
 * chunk with unknown characters: what was done with each).
 *   Phase 1 maps the text's characters (white space, typographic
 *   punctuation, Latin-1 folding, currency signs, skipped and kept code
 *   points) into chunks of "mapped" bytes: ASCII, the markers below, and the
 *   UTF-8 of kept code points (never a control character).
 *   Phase 2 reads each chunk: punctuation and symbols split it into segments
 *   (breaks and symbol words between them), hyphens split segments into parts,
 *   a part is a number (cardinals, decimals, years, ordinals, plurals,
 *   currency, times) or a word (abbreviations, dotted abbreviations, mixed
 *   case, acronyms, plain words).
 * attend_g2p_token_pronounce: one token -> phonemes (letter names, lexicon,
 * apostrophe suffixes, the model).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "io/text.h"

/* markers in mapped chunks (real control characters never get there) */
#define MK_BREAK '\x02' /* a dash or an ellipsis: a minor break */
#define MK_POUND '\x03'
#define MK_YEN '\x04'
#define MK_EURO '\x05'

#define NOTE_MAX 32 /* distinct unknown characters listed per chunk */

enum { BR_NONE = 0, BR_MINOR = 1, BR_SENTENCE = 2 };

/* ================================================================ phase 1 */

typedef struct {
    uint32_t cp; /* code point, or 0x80000000 | byte for an invalid byte */
    int kept;    /* 1 kept, 0 skipped */
} note_item;

typedef struct {
    const attend_g2p_lexicon *lx;
    at_sbuf map;        /* every chunk's mapped bytes, NUL-separated */
    size_t *chunks;     /* [nchunks] offsets into map */
    size_t nchunks, chunks_cap;
    at_sbuf out;        /* tokens */
    at_sbuf notes;
    at_sbuf num;        /* scratch: a number's words */
    int pending;        /* break waiting for the next token */
    int after_number;   /* the last thing read was a number (for am / pm) */
    const char *pending_unit; /* currency unit to say after the next word */
    size_t ci;          /* chunk being read */
    int depth;          /* nesting of process_* calls in the chunk being read */
    int cut;            /* 1 when that nesting reached TEXT_MAX_DEPTH: the rest of a word was skipped */
    char *cbuf;         /* [cbuf_cap] scratch: the chunk without quotes */
    size_t cbuf_cap;
    int oom;
    attend_g2p_text_info info;
} tx;

static int is_space_cp(uint32_t c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0xA0 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x202F || c == 0x3000;
}

/* Latin-1 letters U+00C0..U+00FF without accents (× and ÷ are NULL). */
static const char *const latin1_fold[64] = {
    "A", "A", "A", "A", "A", "A", "Ae", "C", "E", "E", "E", "E", "I", "I", "I", "I",
    "D", "N", "O", "O", "O", "O", "O", NULL, "O", "U", "U", "U", "U", "Y", "Th", "ss",
    "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i",
    "d", "n", "o", "o", "o", "o", "o", NULL, "o", "u", "u", "u", "u", "y", "th", "y",
};

/* What phase 1 does with a code point: its mapped ASCII (into m, NUL-terminated;
 * "" for nothing), or -1 skipped (reported), or 1 kept as UTF-8 (reported), or
 * 2 white space. */
static int map_cp(uint32_t c, const unsigned char *next, size_t nnext, char *m) {
    m[0] = '\0';
    if (is_space_cp(c)) return 2;
    if (c < 0x20 || (c >= 0x7F && c <= 0x9F)) return -1;
    if (c < 0x7F) {
        if (strchr("*^~\\|<>`", (int)c)) return -1;
        if (c == '#') {
            if (!(nnext >= 1 && next[0] >= '0' && next[0] <= '9')) return -1;
        }
        m[0] = (char)c;
        m[1] = '\0';
        return 0;
    }
    switch (c) {
    case 0x2019: case 0x2018: case 0x02BC: strcpy(m, "'"); return 0;
    case 0x201C: case 0x201D: case 0x201E: case 0xAB: case 0xBB: strcpy(m, "\""); return 0;
    case 0x2013: case 0x2014: case 0x2015: case 0x2026: m[0] = MK_BREAK; m[1] = '\0'; return 0;
    case 0x2212: strcpy(m, "-"); return 0;
    case 0xA3: m[0] = MK_POUND; m[1] = '\0'; return 0;
    case 0xA5: m[0] = MK_YEN; m[1] = '\0'; return 0;
    case 0x20AC: m[0] = MK_EURO; m[1] = '\0'; return 0;
    default: break;
    }
    if (c >= 0xC0 && c <= 0xFF) {
        const char *f = latin1_fold[c - 0xC0];
        if (!f) return -1;
        strcpy(m, f);
        return 0;
    }
    if (c < 0x100) return -1; /* other Latin-1 symbols */
    if ((c >= 0x2000 && c <= 0x2BFF) || (c >= 0xE000 && c <= 0xF8FF) || (c >= 0xFE00 && c <= 0xFE0F) ||
        c == 0xFEFF || (c >= 0x1F000 && c <= 0x1FAFF) || c == 0x061C || c == 0x180E ||
        (c >= 0xFFF0 && c <= 0xFFFF) || (c >= 0xE0000 && c <= 0xE007F))
        return -1;
    return 1;
}

static void note_add(note_item *items, int *n, int *more, uint32_t cp, int kept) {
    for (int i = 0; i < *n; i++)
        if (items[i].cp == cp) return;
    if (*n < NOTE_MAX) items[(*n)++] = (note_item){cp, kept};
    else (*more)++;
}

static int chunk_push(tx *t, size_t off) {
    if (t->nchunks == t->chunks_cap) {
        size_t cap = t->chunks_cap ? 2 * t->chunks_cap : 64;
        size_t *p = realloc(t->chunks, cap * sizeof *p);
        if (!p) return 0;
        t->chunks = p;
        t->chunks_cap = cap;
    }
    t->chunks[t->nchunks++] = off;
    return 1;
}

/* Phase 1: the text's chunks (mapped) into t->map / t->chunks, notes into t->notes. */
static int read_chunks(tx *t, const unsigned char *s, size_t len) {
    size_t i = 0;
    while (i < len) {
        /* skip white space */
        uint32_t c = 0;
        int k = at_utf8_next(s + i, len - i, &c, NULL);
        char m[8];
        if (k > 0 && map_cp(c, s + i + k, len - i - k, m) == 2) {
            i += (size_t)k;
            continue;
        }
        /* one chunk: up to the next white space */
        size_t start = t->map.len;
        note_item items[NOTE_MAX];
        int nitems = 0, more = 0;
        at_sbuf shown = {0};
        while (i < len) {
            k = at_utf8_next(s + i, len - i, &c, NULL);
            if (k == 0) {
                note_add(items, &nitems, &more, 0x80000000u | s[i], 0);
                if (shown.len < 160) at_sb_printf(&shown, "<0x%02X>", s[i]);
                i++;
                continue;
            }
            int what = map_cp(c, s + i + k, len - i - k, m);
            if (what == 2) break;
            if (what == -1) {
                note_add(items, &nitems, &more, c, 0);
                if (shown.len < 160) at_sb_printf(&shown, "<U+%04X>", (unsigned)c);
            } else {
                if (what == 1) {
                    note_add(items, &nitems, &more, c, 1);
                    at_sb_put(&t->map, (const char *)s + i, (size_t)k);
                } else {
                    at_sb_puts(&t->map, m);
                }
                if (shown.len < 160) at_sb_put(&shown, (const char *)s + i, (size_t)k);
            }
            i += (size_t)k;
        }
        if (nitems) {
            t->info.noted_chunks++;
            at_sb_printf(&t->notes, "'%s%s':", shown.p ? shown.p : "", shown.len >= 160 ? "..." : "");
            for (int j = 0; j < nitems; j++) {
                if (items[j].cp & 0x80000000u)
                    at_sb_printf(&t->notes, "%s byte 0x%02X skipped (not UTF-8)", j ? "," : "",
                                 (unsigned)(items[j].cp & 0xFF));
                else
                    at_sb_printf(&t->notes, "%s U+%04X %s", j ? "," : "", (unsigned)items[j].cp,
                                 items[j].kept ? "kept" : "skipped");
            }
            if (more) at_sb_printf(&t->notes, " and %d more", more);
            at_sb_puts(&t->notes, "\n");
        }
        free(shown.p);
        if (shown.bad) t->oom = 1;
        if (t->map.len > start) {
            at_sb_put(&t->map, "", 1); /* the NUL that ends the chunk */
            if (!chunk_push(t, start)) t->oom = 1;
        }
    }
    return !(t->oom || t->map.bad);
}

/* ================================================================ output */

static void flush_break(tx *t) {
    if (t->pending && t->out.len) {
        at_sb_puts(&t->out, t->pending == BR_SENTENCE ? " ||" : " |");
        t->info.breaks++;
        t->info.tokens++;
    }
    t->pending = BR_NONE;
}

static void brk(tx *t, int level) {
    if (level > t->pending) t->pending = level;
}

static void emit_raw(tx *t, const char *w, size_t n) {
    flush_break(t);
    if (t->out.len) at_sb_put(&t->out, " ", 1);
    at_sb_put(&t->out, w, n);
    t->info.tokens++;
}

/* a word, ASCII lower-cased */
static void emit_word(tx *t, const char *w, size_t n) {
    if (!n) return;
    flush_break(t);
    if (t->out.len) at_sb_put(&t->out, " ", 1);
    if (!at_sb_reserve(&t->out, n)) return;
    for (size_t i = 0; i < n; i++) {
        char c = w[i];
        t->out.p[t->out.len++] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    t->out.p[t->out.len] = '\0';
    t->info.tokens++;
    t->info.words++;
    t->after_number = 0;
    if (t->pending_unit) {
        const char *u = t->pending_unit;
        t->pending_unit = NULL;
        emit_word(t, u, strlen(u));
    }
}

static void emit_words(tx *t, const char *ws) { /* space-separated */
    while (*ws) {
        const char *e = strchr(ws, ' ');
        size_t n = e ? (size_t)(e - ws) : strlen(ws);
        emit_word(t, ws, n);
        ws += n;
        while (*ws == ' ') ws++;
    }
}

/* one spelled letter, upper case, with what follows it (an apostrophe suffix) */
static void emit_letter(tx *t, char c, const char *tail, size_t ntail) {
    char buf[80];
    if (ntail > sizeof buf - 2) ntail = 0; /* never: the tail is a few apostrophe suffixes (ASCII) */
    buf[0] = (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
    memcpy(buf + 1, tail, ntail);
    for (size_t i = 1; i <= ntail; i++)
        if (buf[i] >= 'A' && buf[i] <= 'Z') buf[i] = (char)(buf[i] - 'A' + 'a');
    emit_raw(t, buf, ntail + 1);
    t->info.letters++;
    t->after_number = 0;
}

/* ================================================================ numbers */

static const char *const ones[20] = {"zero",    "one",     "two",       "three",    "four",
                                     "five",    "six",     "seven",     "eight",    "nine",
                                     "ten",     "eleven",  "twelve",    "thirteen", "fourteen",
                                     "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"};
static const char *const tens[10] = {"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"};
static const char *const scales[5] = {"", "thousand", "million", "billion", "trillion"};
#define QUADRILLION 1000000000000000ULL

static void nw(at_sbuf *b, const char *w) {
    if (b->len) at_sb_put(b, " ", 1);
    at_sb_puts(b, w);
}

static void below_1000(at_sbuf *b, unsigned v) {
    if (v >= 100) {
        nw(b, ones[v / 100]);
        nw(b, "hundred");
        v %= 100;
        if (!v) return;
    }
    if (v < 20) nw(b, ones[v]);
    else {
        nw(b, tens[v / 10]);
        if (v % 10) nw(b, ones[v % 10]);
    }
}

/* v <= 10^15 */
static void cardinal(at_sbuf *b, unsigned long long v) {
    if (v == 0) {
        nw(b, "zero");
        return;
    }
    if (v == QUADRILLION) {
        nw(b, "one");
        nw(b, "quadrillion");
        return;
    }
    unsigned groups[5];
    for (int g = 0; g < 5; g++) {
        groups[g] = (unsigned)(v % 1000);
        v /= 1000;
    }
    for (int g = 4; g >= 0; g--) {
        if (!groups[g]) continue;
        below_1000(b, groups[g]);
        if (g) nw(b, scales[g]);
    }
}

static void digits_by_one(at_sbuf *b, const char *d, size_t n) {
    for (size_t i = 0; i < n; i++) nw(b, ones[d[i] - '0']);
}

/* An integer's digits d [n] (no separators): digit by digit when it begins
 * with 0 (and has more than one digit) or is above 10^15; a year when asked
 * and four digits in 1100..1999 or 2010..2099; else a cardinal. */
static void read_int(at_sbuf *b, const char *d, size_t n, int year_ok) {
    if (n == 0) return;
    if ((n > 1 && d[0] == '0') || n > 16) {
        digits_by_one(b, d, n);
        return;
    }
    unsigned long long v = 0;
    for (size_t i = 0; i < n; i++) v = v * 10 + (unsigned)(d[i] - '0');
    if (v > QUADRILLION) {
        digits_by_one(b, d, n);
        return;
    }
    if (year_ok && n == 4 && ((v >= 1100 && v <= 1999) || (v >= 2010 && v <= 2099))) {
        unsigned hi = (unsigned)(v / 100), lo = (unsigned)(v % 100);
        below_1000(b, hi);
        if (lo == 0) nw(b, "hundred");
        else if (lo < 10) {
            nw(b, "oh");
            nw(b, ones[lo]);
        } else below_1000(b, lo);
        return;
    }
    cardinal(b, v);
}

/* The last word of b made ordinal (ord = 1) or plural (ord = 0). */
static void last_word_inflect(at_sbuf *b, int ord) {
    if (!b->len || b->bad) return;
    char *p = strrchr(b->p, ' ');
    p = p ? p + 1 : b->p;
    size_t at = (size_t)(p - b->p);
    char w[32];
    snprintf(w, sizeof w, "%s", p);
    b->len = at;
    b->p[at] = '\0';
    size_t n = strlen(w);
    if (ord) {
        static const char *const irr[][2] = {{"one", "first"}, {"two", "second"}, {"three", "third"},
                                             {"five", "fifth"}, {"eight", "eighth"}, {"nine", "ninth"},
                                             {"twelve", "twelfth"}};
        for (size_t i = 0; i < sizeof irr / sizeof irr[0]; i++)
            if (!strcmp(w, irr[i][0])) {
                at_sb_puts(b, irr[i][1]);
                return;
            }
        if (n && w[n - 1] == 'y') {
            at_sb_put(b, w, n - 1);
            at_sb_puts(b, "ieth");
        } else {
            at_sb_puts(b, w);
            at_sb_puts(b, "th");
        }
        return;
    }
    if (n && w[n - 1] == 'y') {
        at_sb_put(b, w, n - 1);
        at_sb_puts(b, "ies");
    } else if (!strcmp(w, "six")) at_sb_puts(b, "sixes");
    else {
        at_sb_puts(b, w);
        at_sb_puts(b, "s");
    }
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_letter(char c) { return is_alpha(c) || (unsigned char)c >= 0x80; }
static char lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }

static int eq_ci(const char *s, size_t n, const char *w) {
    size_t m = strlen(w);
    if (m != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (lower(s[i]) != w[i]) return 0;
    return 1;
}

/* The next chunk, lower-cased, without quotes, dots and trailing punctuation,
 * is one of words (NULL-terminated list). */
static int next_chunk_is(const tx *t, const char *const *words) {
    if (t->ci + 1 >= t->nchunks) return 0;
    const char *c = t->map.p + t->chunks[t->ci + 1];
    char w[16];
    size_t n = 0;
    for (; *c && n < sizeof w - 1; c++) {
        if (*c == '"' || *c == '.') continue;
        if (strchr(",;:!?)]}", *c) || *c == MK_BREAK) break;
        w[n++] = lower(*c);
    }
    if (*c && !strchr(",;:!?)]}", *c) && *c != MK_BREAK) return 0;
    w[n] = '\0';
    for (int i = 0; words[i]; i++)
        if (!strcmp(w, words[i])) return 1;
    return 0;
}

static const char *const AMPM[] = {"am", "pm", NULL};
static const char *const SCALE[] = {"million", "billion", "trillion", NULL};

static void process_part(tx *t, const char *p, size_t n, int last);
static void process_word(tx *t, const char *w, size_t n, int last);

/* the suffixes attend_g2p_token_pronounce reads after a stem or a letter */
static const char *const suffixes[] = {"n't", "'s", "'d", "'ll", "'ve", "'re", "'m"};
#define N_SUFFIX (sizeof suffixes / sizeof suffixes[0])

/* 1 when s [n] is one or more of the apostrophe suffixes, e.g. "'s" or
 * "'d've": what a spelled letter may carry (the pronouncer's rule) */
static int apostrophe_suffixes(const char *s, size_t n) {
    if (!n || n > 64) return 0;
    while (n) {
        size_t k = 0;
        for (size_t j = 0; j < N_SUFFIX && !k; j++) {
            size_t m = strlen(suffixes[j]);
            if (suffixes[j][0] == '\'' && m <= n && eq_ci(s, m, suffixes[j])) k = m;
        }
        if (!k) return 0;
        s += k, n -= k;
    }
    return 1;
}

/* Words, numbers and signs call each other on what remains of a word (a
 * letter/digit switch, a currency sign, a '--'), so a pathological word such
 * as "a1a1a1..." (64 KiB on one line) would nest once per switch: past this
 * depth the rest of that word is skipped and a note says so. Real text needs
 * fewer than ten (each switch takes three levels). */
#define TEXT_MAX_DEPTH 128
static int enter(tx *t) {
    if (t->depth >= TEXT_MAX_DEPTH) {
        t->cut = 1;
        return 0;
    }
    t->depth++;
    return 1;
}
#define GUARDED(name, params, args)          \
    static void name##_body params;          \
    static void name params {                \
        if (!enter(t)) return;               \
        name##_body args;                    \
        t->depth--;                          \
    }                                        \
    static void name##_body params

/* A run of digits, ',' '.' ':' (each between digits; '.' may lead) read into
 * t->num. kind: 0 plain integer, 1 decimal, 2 time, 3 other (dotted, split).
 * Returns 0 when the run must be split (the caller splits it). */
typedef struct {
    char ip[64];      /* integer part's digits (commas removed), may be "" */
    size_t nip;
    const char *frac; /* digits after the point, or NULL */
    size_t nfrac;
    int commas, dots, colons;
    int ip_long;      /* the integer part did not fit ip: read digit by digit */
} numrun;

/* Reads an integer part (maybe long) into b. */
static void read_ip(at_sbuf *b, const numrun *r, const char *run, size_t n, int year_ok) {
    if (r->ip_long) { /* over 64 digits: every digit */
        for (size_t i = 0; i < n && run[i] != '.'; i++)
            if (is_digit(run[i])) nw(b, ones[run[i] - '0']);
        return;
    }
    read_int(b, r->ip, r->nip, year_ok);
}

/* Reads the digit run as a plain number (integer or decimal) into t->num. */
static void read_number(tx *t, const numrun *r, const char *run, size_t n, int year_ok) {
    if (r->nip || r->ip_long) read_ip(&t->num, r, run, n, year_ok && !r->commas && !r->frac);
    if (r->frac) {
        nw(&t->num, "point");
        digits_by_one(&t->num, r->frac, r->nfrac);
    }
}

static int valid_groups(const char *run, size_t n) {
    /* first group 1..3 digits, then ",ddd" groups, then optionally ".digits" */
    size_t i = 0, g = 0;
    while (i < n && is_digit(run[i])) i++, g++;
    if (g < 1 || g > 3) return 0;
    while (i < n && run[i] == ',') {
        size_t j = i + 1, k = 0;
        while (j < n && is_digit(run[j])) j++, k++;
        if (k != 3) return 0;
        i = j;
    }
    if (i < n && run[i] == '.') {
        i++;
        while (i < n && is_digit(run[i])) i++;
    }
    return i == n;
}

static void scan_run(numrun *r, const char *run, size_t n) {
    memset(r, 0, sizeof *r);
    size_t i = 0;
    for (; i < n && run[i] != '.'; i++) {
        if (run[i] == ',') {
            r->commas++;
            continue;
        }
        if (run[i] == ':') {
            r->colons++;
            continue;
        }
        if (r->nip < sizeof r->ip - 1) r->ip[r->nip++] = run[i];
        else r->ip_long = 1;
    }
    r->ip[r->nip] = '\0';
    if (i < n) {
        r->frac = run + i + 1;
        r->nfrac = n - i - 1;
        for (size_t j = i; j < n; j++) { /* after the point too: "1.5,3" must split, not read ',' as a digit */
            r->dots += run[j] == '.';
            r->commas += run[j] == ',';
            r->colons += run[j] == ':';
        }
    }
}

/* Emits the number words in t->num, then clears it. */
static void emit_num(tx *t) {
    if (t->num.bad) t->oom = 1;
    if (t->num.len) emit_words(t, t->num.p);
    t->num.len = 0;
    if (t->num.p) t->num.p[0] = '\0';
    t->after_number = 1;
}

/* A part that starts with a digit or '.'+digit (cur: the currency marker, or 0). */
static void process_number(tx *t, const char *p, size_t n, char cur, int last);
GUARDED(process_number, (tx * t, const char *p, size_t n, char cur, int last), (t, p, n, cur, last)) {
    size_t e = 0;
    while (e < n) {
        if (is_digit(p[e])) e++;
        else if ((p[e] == ',' || p[e] == '.' || p[e] == ':') && e + 1 < n && is_digit(p[e + 1])) e++;
        else break;
    }
    const char *run = p, *rest = p + e;
    size_t nr = e, nrest = n - e;
    numrun r;
    scan_run(&r, run, nr);
    /* separators that cannot stay: split and read each piece */
    int split = 0;
    char sep = 0;
    if (r.colons) {
        int time_ok = 0;
        if (r.colons == 1 && !r.commas && !r.dots) {
            const char *c = memchr(run, ':', nr);
            size_t hn = (size_t)(c - run), mn = nr - hn - 1;
            if (hn >= 1 && hn <= 2 && mn == 2) {
                int h = 0, mm = (c[1] - '0') * 10 + (c[2] - '0');
                for (size_t i = 0; i < hn; i++) h = h * 10 + (run[i] - '0');
                if (h <= 23 && mm <= 59 && !cur) {
                    time_ok = 1;
                    int ampm = (nrest && (eq_ci(rest, nrest, "am") || eq_ci(rest, nrest, "pm"))) ||
                               (last && !nrest && next_chunk_is(t, AMPM));
                    cardinal(&t->num, (unsigned)h);
                    if (mm == 0) {
                        if (!ampm) nw(&t->num, "o'clock");
                    } else if (mm < 10) {
                        nw(&t->num, "oh");
                        nw(&t->num, ones[mm]);
                    } else below_1000(&t->num, (unsigned)mm);
                    emit_num(t);
                }
            }
        }
        if (!time_ok) split = 1, sep = ':';
    } else if (r.commas && !valid_groups(run, nr)) split = 1, sep = ',';
    else if (r.dots >= 2) split = 1, sep = '.';
    if (split) {
        size_t a = 0;
        for (size_t i = 0; i <= nr; i++) {
            if (i < nr && run[i] != sep) continue;
            if (i > a) process_number(t, run + a, i - a, a == 0 ? cur : 0, 0);
            if (i < nr) {
                if (sep == '.') emit_word(t, "dot", 3);
                else brk(t, BR_MINOR);
            }
            a = i + 1;
        }
        if (nrest) process_word(t, rest, nrest, last);
        return;
    }
    if (r.colons) { /* a time, already emitted */
        if (nrest && (eq_ci(rest, nrest, "am") || eq_ci(rest, nrest, "pm"))) {
            emit_letter(t, rest[0], "", 0);
            emit_letter(t, rest[1], "", 0);
        } else if (nrest) process_word(t, rest, nrest, last);
        else t->after_number = 1;
        return;
    }
    if (cur) {
        const char *one = cur == '$' ? "dollar" : cur == MK_EURO ? "euro" : cur == MK_POUND ? "pound" : "yen";
        const char *many = cur == '$' ? "dollars" : cur == MK_EURO ? "euros" : cur == MK_POUND ? "pounds" : "yen";
        const char *sub1 = cur == MK_POUND ? "penny" : "cent", *subn = cur == MK_POUND ? "pence" : "cents";
        int scale = last && !nrest && next_chunk_is(t, SCALE);
        int is_one = !r.ip_long && r.nip == 1 && r.ip[0] == '1';
        if (scale) {
            read_number(t, &r, run, nr, 0);
            emit_num(t);
            t->pending_unit = many;
        } else if (r.frac && r.nfrac == 2 && cur != MK_YEN && !r.ip_long) {
            unsigned cents = (unsigned)((r.frac[0] - '0') * 10 + (r.frac[1] - '0'));
            int whole_zero = 1;
            for (size_t i = 0; i < r.nip; i++) whole_zero &= r.ip[i] == '0';
            if (whole_zero && cents) {
                cardinal(&t->num, cents);
                nw(&t->num, cents == 1 ? sub1 : subn);
            } else {
                if (r.nip) read_int(&t->num, r.ip, r.nip, 0);
                else nw(&t->num, "zero");
                nw(&t->num, is_one ? one : many);
                if (cents) {
                    nw(&t->num, "and");
                    cardinal(&t->num, cents);
                    nw(&t->num, cents == 1 ? sub1 : subn);
                }
            }
            emit_num(t);
        } else {
            read_number(t, &r, run, nr, 0);
            nw(&t->num, is_one && !r.frac ? one : many);
            emit_num(t);
        }
        if (nrest) process_word(t, rest, nrest, last);
        return;
    }
    /* suffixes: ordinal, plural, am / pm */
    if (nrest == 2 && !r.frac &&
        (eq_ci(rest, 2, "st") || eq_ci(rest, 2, "nd") || eq_ci(rest, 2, "rd") || eq_ci(rest, 2, "th"))) {
        read_number(t, &r, run, nr, 0);
        last_word_inflect(&t->num, 1);
        emit_num(t);
        return;
    }
    if (eq_ci(rest, nrest, "s") || (nrest == 2 && rest[0] == '\'' && lower(rest[1]) == 's')) {
        read_number(t, &r, run, nr, 1);
        last_word_inflect(&t->num, 0);
        emit_num(t);
        return;
    }
    read_number(t, &r, run, nr, 1);
    emit_num(t);
    if (nrest == 2 && (eq_ci(rest, 2, "am") || eq_ci(rest, 2, "pm"))) {
        emit_letter(t, rest[0], "", 0);
        emit_letter(t, rest[1], "", 0);
    } else if (nrest) process_word(t, rest, nrest, last);
}

/* ================================================================ words */

static const char *const abbrev[][2] = {
    {"mr", "mister"},  {"mrs", "missus"}, {"ms", "miz"},      {"dr", "doctor"},  {"prof", "professor"},
    {"st", "saint"},   {"jr", "junior"},  {"sr", "senior"},   {"vs", "versus"},  {"etc", "et cetera"},
};
#define N_ABBREV (sizeof abbrev / sizeof abbrev[0])

/* The expansion of w [n] when it is an abbreviation of the table in lower
 * case or with only its first letter capital; else NULL. */
static const char *abbrev_of(const char *w, size_t n) {
    for (size_t i = 1; i < n; i++)
        if (w[i] >= 'A' && w[i] <= 'Z') return NULL;
    for (size_t i = 0; i < N_ABBREV; i++)
        if (eq_ci(w, n, abbrev[i][0])) return abbrev[i][1];
    return NULL;
}

static int in_lexicon(const tx *t, const char *w, size_t n) {
    return t->lx && n && attend_g2p_lexicon_find(t->lx, w, n) >= 0;
}

static int is_upper(char c) { return c >= 'A' && c <= 'Z'; }
static int is_lower(char c) { return c >= 'a' && c <= 'z'; }

/* letters, apostrophes and periods (and maybe digits after them) */
GUARDED(process_word, (tx * t, const char *w, size_t n, int last), (t, w, n, last)) {
    /* anything but letters, apostrophes and periods splits (digits: a number) */
    for (size_t i = 0; i < n; i++) {
        if (is_letter(w[i]) || w[i] == '\'' || w[i] == '.') continue;
        if (i) process_word(t, w, i, 0);
        if (is_digit(w[i])) process_part(t, w + i, n - i, last);
        else if (i + 1 < n) process_word(t, w + i + 1, n - i - 1, last);
        return;
    }
    while (n && (w[0] == '\'' || w[0] == '.')) w++, n--;
    while (n && (w[n - 1] == '\'' || w[n - 1] == '.')) n--;
    if (!n) return;
    if (memchr(w, '.', n)) {
        /* dotted abbreviation: single letters each followed by a period */
        int dotted = 1, letters = 0;
        for (size_t i = 0; i < n; i++) {
            if (i % 2 == 0) dotted &= is_alpha(w[i]), letters++;
            else dotted &= w[i] == '.';
        }
        if (dotted && letters >= 2) {
            for (size_t i = 0; i < n; i += 2) emit_letter(t, w[i], "", 0);
            return;
        }
        size_t a = 0;
        for (size_t i = 0; i <= n; i++) {
            if (i < n && w[i] != '.') continue;
            if (i > a) {
                if (a) emit_word(t, "dot", 3);
                process_word(t, w + a, i - a, last && i == n);
            }
            a = i + 1;
        }
        return;
    }
    if (t->after_number && (eq_ci(w, n, "am") || eq_ci(w, n, "pm"))) {
        emit_letter(t, w[0], "", 0);
        emit_letter(t, w[1], "", 0);
        return;
    }
    const char *ab = abbrev_of(w, n);
    if (ab) {
        emit_words(t, ab);
        return;
    }
    /* mixed case */
    int mixed = 0;
    for (size_t i = 1; i < n; i++) mixed |= is_upper(w[i]) && is_lower(w[i - 1]);
    if (mixed && !in_lexicon(t, w, n)) {
        size_t a = 0;
        for (size_t i = 1; i <= n; i++) {
            int cut = i == n || (is_upper(w[i]) && is_lower(w[i - 1])) ||
                      (is_upper(w[i]) && is_upper(w[i - 1]) && i + 1 < n && is_lower(w[i + 1]));
            if (!cut) continue;
            process_word(t, w + a, i - a, last && i == n);
            a = i;
        }
        return;
    }
    /* acronyms */
    const char *ap = memchr(w, '\'', n);
    size_t nh = ap ? (size_t)(ap - w) : n;
    int ascii = nh > 0, caps = nh >= 2, vowel = 0;
    for (size_t i = 0; i < nh; i++) {
        ascii &= is_alpha(w[i]);
        caps &= is_upper(w[i]);
        vowel |= strchr("aeiouyAEIOUY", w[i]) != NULL && w[i];
    }
    int plural = 0;
    if (!caps && !ap && nh >= 3 && w[nh - 1] == 's') {
        plural = 1;
        for (size_t i = 0; i + 1 < nh; i++) plural &= is_upper(w[i]);
    }
    if (ascii && (caps || plural || !vowel) && !in_lexicon(t, w, n) && !in_lexicon(t, w, nh)) {
        size_t nl = plural ? nh - 1 : nh;
        /* the last letter carries the apostrophe suffixes ("FBI's"); any other
         * tail ("OK'ed", "NASA'nın") is read as a word of its own */
        int carried = plural || apostrophe_suffixes(w + nh, n - nh);
        for (size_t i = 0; i < nl; i++) {
            if (i + 1 < nl) emit_letter(t, w[i], "", 0);
            else if (plural) emit_letter(t, w[i], "'s", 2);
            else emit_letter(t, w[i], w + nh, carried ? n - nh : 0);
        }
        if (!carried && n > nh + 1) process_word(t, w + nh + 1, n - nh - 1, last);
        return;
    }
    emit_word(t, w, n);
}

/* a part: no hyphens inside */
GUARDED(process_part, (tx * t, const char *p, size_t n, int last), (t, p, n, last)) {
    while (n && p[0] == '\'') p++, n--;
    while (n && p[n - 1] == '\'') n--;
    if (!n) return;
    char cur = 0;
    if (p[0] == '$' || p[0] == MK_EURO || p[0] == MK_POUND || p[0] == MK_YEN) {
        cur = p[0];
        p++, n--;
        if (!(n && (is_digit(p[0]) || (n > 1 && p[0] == '.' && is_digit(p[1]))))) {
            if (n) process_part(t, p, n, last); /* a sign not before a number is dropped */
            return;
        }
    }
    if (is_digit(p[0]) || (n > 1 && p[0] == '.' && is_digit(p[1]))) {
        process_number(t, p, n, cur, last);
        return;
    }
    process_word(t, p, n, last);
}

/* a segment: hyphens, minus, hyphenated compounds */
static void process_segment(tx *t, const char *s, size_t n, int last);
GUARDED(process_segment, (tx * t, const char *s, size_t n, int last), (t, s, n, last)) {
    while (n && s[0] == '\'') s++, n--;
    while (n && s[n - 1] == '\'') n--;
    if (!n) return;
    /* two or more hyphens in a row: a minor break; a segment of hyphens alone too */
    int only = 1;
    for (size_t i = 0; i < n; i++) only &= s[i] == '-';
    if (only) {
        brk(t, BR_MINOR);
        return;
    }
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i] == '-' && s[i + 1] == '-') {
            size_t j = i;
            while (j < n && s[j] == '-') j++;
            process_segment(t, s, i, 0);
            brk(t, BR_MINOR);
            process_segment(t, s + j, n - j, last);
            return;
        }
    if (s[0] == '-' && n > 1 && (is_digit(s[1]) || (s[1] == '.' && n > 2 && is_digit(s[2])))) {
        emit_word(t, "minus", 5);
        s++, n--;
    }
    while (n && s[0] == '-') s++, n--;
    while (n && s[n - 1] == '-') n--;
    if (!n) return;
    if (memchr(s, '-', n) && !in_lexicon(t, s, n)) {
        size_t a = 0;
        for (size_t i = 0; i <= n; i++) {
            if (i < n && s[i] != '-') continue;
            if (i > a) process_part(t, s + a, i - a, last && i == n);
            a = i + 1;
        }
        return;
    }
    if (memchr(s, '-', n)) { /* the lexicon has the compound */
        emit_word(t, s, n);
        return;
    }
    process_part(t, s, n, last);
}

/* 1 when seg [n] (the segment so far) is single letters joined by periods */
static int dotted_so_far(const char *seg, size_t n) {
    if (n < 1 || n % 2 == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (i % 2 == 0 ? !is_alpha(seg[i]) : seg[i] != '.') return 0;
    return n >= 3;
}

/* a chunk: punctuation and symbols */
static void process_chunk(tx *t, const char *c) {
    size_t n = strlen(c);
    /* the chunk without quotes, in a scratch buffer that grows to the longest chunk */
    if (n + 1 > t->cbuf_cap) {
        size_t cap = 2 * (n + 1) > 256 ? 2 * (n + 1) : 256;
        char *nb = realloc(t->cbuf, cap);
        if (!nb) {
            t->oom = 1;
            return;
        }
        t->cbuf = nb, t->cbuf_cap = cap;
    }
    char *buf = t->cbuf;
    t->depth = 0, t->cut = 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i] != '"') buf[m++] = c[i];
    buf[m] = '\0';
    /* the last alphanumeric character: segments after it are not "last" */
    size_t lastal = 0;
    for (size_t i = 0; i < m; i++)
        if (is_digit(buf[i]) || is_letter(buf[i])) lastal = i + 1;
    size_t a = 0; /* the current segment starts here */
#define END_SEG(i)                                                   \
    do {                                                             \
        if ((i) > a) process_segment(t, buf + a, (i) - a, (i) >= lastal); \
    } while (0)
    for (size_t i = 0; i < m; i++) {
        char ch = buf[i];
        char prev = i > a ? buf[i - 1] : 0, next = i + 1 < m ? buf[i + 1] : 0;
        const char *say = NULL;
        int level = BR_NONE;
        if (strchr("()[]{}", ch) || ch == MK_BREAK) level = BR_MINOR;
        else if (ch == '/' || ch == '_') level = BR_NONE; /* a word separator */
        else if (ch == '&') say = "and";
        else if (ch == '@') say = "at";
        else if (ch == '+') say = "plus";
        else if (ch == '=') say = "equals";
        else if (ch == '%') say = "percent";
        else if (ch == '#') say = "number";
        else if (ch == ',' || ch == ':') {
            if (is_digit(prev) && is_digit(next)) continue;
            level = BR_MINOR;
        } else if (ch == ';') level = BR_MINOR;
        else if (ch == '!' || ch == '?') level = BR_SENTENCE;
        else if (ch == '.') {
            size_t r = i;
            while (r < m && buf[r] == '.') r++;
            if (r - i >= 2) { /* an ellipsis */
                END_SEG(i);
                brk(t, BR_MINOR);
                i = r - 1;
                a = r;
                continue;
            }
            if (is_digit(next)) continue;                    /* decimal point, dotted numbers, ".5" */
            if (is_letter(prev) && is_letter(next)) continue; /* a dot, or inside an abbreviation */
            if (dotted_so_far(buf + a, i - a)) continue;      /* "U.S." keeps its last period */
            if (i > a && abbrev_of(buf + a, i - a)) {         /* "Dr.": the period is silent */
                END_SEG(i);
                a = i + 1;
                continue;
            }
            level = BR_SENTENCE;
        } else continue; /* part of the segment */
        END_SEG(i);
        if (level) brk(t, level);
        if (say) emit_word(t, say, strlen(say));
        a = i + 1;
    }
    END_SEG(m);
#undef END_SEG
    if (t->cut) { /* named by its first characters, cut at a character boundary */
        size_t shown = 0;
        while (shown < m && shown < 60) {
            int k = at_utf8_next((const unsigned char *)buf + shown, m - shown, NULL, NULL);
            if (k <= 0 || shown + (size_t)k > 60) break;
            shown += (size_t)k;
        }
        t->info.noted_chunks++;
        at_sb_printf(&t->notes,
                     "'%.*s%s': letters, digits and signs alternate more than %d levels deep: "
                     "the rest of the word skipped\n",
                     (int)shown, buf, shown < m ? "..." : "", TEXT_MAX_DEPTH);
    }
}

/* ================================================================ public */

attend_status attend_g2p_text_normalize(const char *text, size_t len, const attend_g2p_lexicon *lx, char **out,
                                        char **notes, attend_g2p_text_info *info, attend_error *err) {
    static const char *who = "attend_g2p_text_normalize";
    if (out) *out = NULL;
    if (notes) *notes = NULL;
    if (info) memset(info, 0, sizeof *info);
    CHECK(out, err, ATTEND_ERR_NULL, "%s: out is NULL", who);
    CHECK(text || len == 0, err, ATTEND_ERR_NULL, "%s: text is NULL", who);
    tx t;
    memset(&t, 0, sizeof t);
    t.lx = lx;
    int ok = read_chunks(&t, (const unsigned char *)(text ? text : ""), len);
    for (t.ci = 0; ok && t.ci < t.nchunks && !t.oom; t.ci++) process_chunk(&t, t.map.p + t.chunks[t.ci]);
    flush_break(&t); /* a final break stays */
    if (t.pending_unit) { /* "$5 million" at the end never happens (the next chunk is the scale word) */
        emit_word(&t, t.pending_unit, strlen(t.pending_unit));
    }
    free(t.map.p);
    free(t.chunks);
    free(t.cbuf);
    free(t.num.p);
    at_sb_puts(&t.out, "");
    at_sb_puts(&t.notes, "");
    if (!ok || t.oom || t.out.bad || t.notes.bad || t.num.bad) {
        free(t.out.p);
        free(t.notes.p);
        return at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory (text of %zu bytes)", who, len);
    }
    if (info) *info = t.info;
    *out = t.out.p;
    if (notes) *notes = t.notes.p;
    else free(t.notes.p);
    return at_ok(err);
}

void attend_g2p_text_free(char *s) { free(s); }

/* ================================================================ pronouncing */

static const char *const letter_names[26][2] = {
    {"EY", "EY1"},          {"B IY", "B IY1"},    {"S IY", "S IY1"},  {"D IY", "D IY1"},  {"IY", "IY1"},
    {"EH F", "EH1 F"},      {"JH IY", "JH IY1"},  {"EY CH", "EY1 CH"}, {"AY", "AY1"},     {"JH EY", "JH EY1"},
    {"K EY", "K EY1"},      {"EH L", "EH1 L"},    {"EH M", "EH1 M"},  {"EH N", "EH1 N"},  {"OW", "OW1"},
    {"P IY", "P IY1"},      {"K Y UW", "K Y UW1"}, {"AA R", "AA1 R"}, {"EH S", "EH1 S"},  {"T IY", "T IY1"},
    {"Y UW", "Y UW1"},      {"V IY", "V IY1"},    {"D AH B AH L Y UW", "D AH1 B AH0 L Y UW0"},
    {"EH K S", "EH1 K S"},  {"W AY", "W AY1"},    {"Z IY", "Z IY1"},
};

const char *attend_g2p_source_name(attend_g2p_source s) {
    switch (s) {
    case ATTEND_G2P_SOURCE_LEXICON: return "lexicon";
    case ATTEND_G2P_SOURCE_MODEL: return "model";
    case ATTEND_G2P_SOURCE_LETTERS: return "letters";
    case ATTEND_G2P_SOURCE_LEXICON_SUFFIX: return "lexicon+suffix";
    case ATTEND_G2P_SOURCE_MODEL_SUFFIX: return "model+suffix";
    case ATTEND_G2P_SOURCE_BREAK: return "break";
    }
    return "unknown";
}

/* 1 when the last phoneme of pron (phonemes joined by spaces) is a vowel; its
 * name (without stress) into last [4]. */
static int last_phone(const char *pron, char *last) {
    const char *p = strrchr(pron, ' ');
    p = p ? p + 1 : pron;
    size_t n = 0;
    while (p[n] && n < 3 && !(p[n] >= '0' && p[n] <= '9')) {
        last[n] = p[n];
        n++;
    }
    last[n] = '\0';
    return strchr("AEIOU", last[0]) != NULL && last[0];
}

/* Appends the phonemes of suffix k after pron. */
static const char *suffix_phones(int k, const char *pron, int stress) {
    char last[4];
    int v = last_phone(pron, last);
    switch (k) {
    case 0: return v ? "N T" : stress ? "AH0 N T" : "AH N T";
    case 1:
        if (!strcmp(last, "P") || !strcmp(last, "T") || !strcmp(last, "K") || !strcmp(last, "F") ||
            !strcmp(last, "TH"))
            return "S";
        if (!strcmp(last, "S") || !strcmp(last, "Z") || !strcmp(last, "SH") || !strcmp(last, "ZH") ||
            !strcmp(last, "CH") || !strcmp(last, "JH"))
            return stress ? "IH0 Z" : "IH Z";
        return "Z";
    case 2: return v ? "D" : stress ? "AH0 D" : "AH D";
    case 3: return v ? "L" : stress ? "AH0 L" : "AH L";
    case 4: return v ? "V" : stress ? "AH0 V" : "AH V";
    case 5: return v ? "R" : stress ? "ER0" : "ER";
    default: return "M";
    }
}

static int ends_with_suffix(const char *w, size_t n) {
    for (int k = 0; k < (int)N_SUFFIX; k++) {
        size_t m = strlen(suffixes[k]);
        if (n > m && eq_ci(w + n - m, m, suffixes[k])) return k;
    }
    return -1;
}

/* token [len] is not NUL-terminated: messages show at most its first 64 bytes */
#define TOKEN_SHOWN(len) ((int)((len) > 64 ? 64 : (len)))

static attend_status put_phones(char *out, size_t cap, size_t *o, const char *ph, const char *token, size_t len,
                                attend_error *err) {
    size_t n = strlen(ph);
    if (*o + (*o ? 1 : 0) + n + 1 > cap)
        return at_fail(err, ATTEND_ERR_CAPACITY, "attend_g2p_token_pronounce: '%.*s': the pronunciation needs "
                       "more than %zu bytes", TOKEN_SHOWN(len), token, cap);
    if (*o) out[(*o)++] = ' ';
    memcpy(out + *o, ph, n + 1);
    *o += n;
    return ATTEND_OK;
}

attend_status attend_g2p_token_pronounce(attend_model *const *models, int M, attend_vocab *graphemes,
                                         const attend_vocab *phonemes, const attend_g2p_lexicon *lx,
                                         const char *token, size_t len, char *out, size_t cap,
                                         attend_g2p_source *source, attend_error *err) {
    static const char *who = "attend_g2p_token_pronounce";
    CHECK(token && out && source, err, ATTEND_ERR_NULL, "%s: token, out or source is NULL", who);
    CHECK(cap >= 1, err, ATTEND_ERR_CAPACITY, "%s: out has no room", who);
    out[0] = '\0';
    CHECK(len >= 1 && len <= 4 * ATTEND_G2P_MAX_LEN, err, ATTEND_ERR_ARG,
          "%s: a token of %zu bytes (1..%d)", who, len, 4 * ATTEND_G2P_MAX_LEN);
    CHECK(M >= 0 && (M == 0 || (models && graphemes && phonemes)), err, ATTEND_ERR_ARG,
          "%s: M = %d models (0, or models with their vocabularies)", who, M);
    for (size_t i = 0; i < len; i++)
        CHECK((unsigned char)token[i] > ' ' && token[i] != 0x7F, err, ATTEND_ERR_ARG,
              "%s: token byte %zu is white space or a control character", who, i);
    int stress = 0;
    if (M > 0) stress = attend_g2p_vocab_has_stress(phonemes);
    else if (lx) {
        attend_g2p_lexicon_info li;
        attend_g2p_lexicon_get_info(lx, &li);
        stress = li.stress;
    }
    size_t o = 0;
    if ((len == 1 && token[0] == '|') || (len == 2 && token[0] == '|' && token[1] == '|')) {
        *source = ATTEND_G2P_SOURCE_BREAK;
        return at_ok(err);
    }
    char stem_pron[1024];
    const char *stem = token;
    size_t nstem = len;
    int stack[8], ns = 0;
    if (is_upper(token[0]) && (len == 1 || token[1] == '\'')) { /* a letter */
        TRY(put_phones(out, cap, &o, letter_names[token[0] - 'A'][stress], token, len, err));
        nstem = 1;
        *source = ATTEND_G2P_SOURCE_LETTERS;
        while (nstem < len) { /* the letter's suffixes, left to right */
            int k;
            for (k = 0; k < (int)N_SUFFIX; k++) {
                size_t m = strlen(suffixes[k]);
                if (suffixes[k][0] == '\'' && nstem + m <= len && eq_ci(token + nstem, m, suffixes[k])) break;
            }
            CHECK(k < (int)N_SUFFIX, err, ATTEND_ERR_ARG, "%s: '%.*s': a letter with an unknown suffix", who,
                  TOKEN_SHOWN(len), token);
            TRY(put_phones(out, cap, &o, suffix_phones(k, out, stress), token, len, err));
            nstem += strlen(suffixes[k]);
        }
        return at_ok(err);
    }
    int w = attend_g2p_lexicon_find(lx, stem, nstem);
    while (w < 0 && ns < 8) {
        int k = ends_with_suffix(stem, nstem);
        if (k < 0) break;
        stack[ns++] = k;
        nstem -= strlen(suffixes[k]);
        w = attend_g2p_lexicon_find(lx, stem, nstem);
    }
    if (w >= 0) {
        TRY(attend_g2p_lexicon_pron(lx, w, 0, stem_pron, sizeof stem_pron, err));
        *source = ns ? ATTEND_G2P_SOURCE_LEXICON_SUFFIX : ATTEND_G2P_SOURCE_LEXICON;
    } else {
        CHECK(M > 0, err, ATTEND_ERR_ARG, "%s: '%.*s': not in the lexicon, and no model was given", who,
              TOKEN_SHOWN(nstem), stem);
        TRY(attend_g2p_pronounce_ensemble(models, M, graphemes, phonemes, stem, nstem, stem_pron, sizeof stem_pron,
                                          err));
        *source = ns ? ATTEND_G2P_SOURCE_MODEL_SUFFIX : ATTEND_G2P_SOURCE_MODEL;
    }
    if (stem_pron[0]) TRY(put_phones(out, cap, &o, stem_pron, token, len, err));
    for (int i = ns - 1; i >= 0; i--)
        TRY(put_phones(out, cap, &o, suffix_phones(stack[i], out, stress), token, len, err));
    return at_ok(err);
}
