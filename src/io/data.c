/*
 * data.c — datasets: pairs of token-id sequences, the built-in tasks (copy,
 * reverse, sort, bag, shift) and the TSV reader.
 *
 * Storage: all ids in one array, each pair's source followed by its target;
 * a pair records where it starts and its two lengths. Both arrays grow by
 * doubling (amortised: this is data loading, not a hot loop). A pair may
 * carry an alignment (guided alignment training): its links, (source
 * position, target position) pairs, in a third array the same way.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "io/alignment.h"
#include "io/copy_text.h"


#define TASK_MAX_SYMBOLS 100000
#define TASK_MAX_LEN 100000

typedef struct {
    size_t off;      /* index of the pair's first source id in ids */
    int src_len;     /* >= 1 */
    int tgt_len;     /* >= 1 */
    size_t aoff;     /* its alignment's first link in links (when an >= 0) */
    int an;          /* links of its alignment; -1: it carries none */
} pair_entry;

struct attend_dataset {
    pair_entry *pairs;  /* [pairs_cap] */
    int n;
    size_t pairs_cap;
    int32_t *ids;       /* [ids_cap]: src of pair 0, tgt of pair 0, src of pair 1, ... */
    size_t ids_len, ids_cap;
    int max_src, max_tgt;
    int32_t *links;     /* [links_cap, 2]: (source position, target position) per link */
    size_t links_len, links_cap;
    int aligned;        /* pairs carrying an alignment */
};

/* -------------------------------------------------------------- the store */

attend_status attend_dataset_create(attend_dataset **out, attend_error *err) {
    CHECK(out, err, ATTEND_ERR_NULL, "attend_dataset_create: out is NULL");
    *out = calloc(1, sizeof **out);
    CHECK(*out, err, ATTEND_ERR_ALLOC, "attend_dataset_create: out of memory");
    return at_ok(err);
}

void attend_dataset_free(attend_dataset *d) {
    if (!d) return;
    free(d->pairs);
    free(d->ids);
    free(d->links);
    free(d);
}

int attend_dataset_size(const attend_dataset *d) { return d ? d->n : 0; }
int attend_dataset_max_src_len(const attend_dataset *d) { return d ? d->max_src : 0; }
int attend_dataset_max_tgt_len(const attend_dataset *d) { return d ? d->max_tgt : 0; }

/* Grows *p (elements of `size` bytes, capacity *cap) to hold at least `need`. */
static int grow_array(void **p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 1;
    size_t c = *cap ? *cap : 64, bytes;
    while (c < need) {
        if (c > SIZE_MAX / 2) {
            c = need;
            break;
        }
        c *= 2;
    }
    if (!at_mul_size(c, size, &bytes)) return 0;
    void *q = realloc(*p, bytes);
    if (!q) return 0;
    *p = q;
    *cap = c;
    return 1;
}

attend_status attend_dataset_add(attend_dataset *d, const int32_t *src, int src_len,
                                 const int32_t *tgt, int tgt_len, attend_error *err) {
    const char *who = "attend_dataset_add";
    CHECK(d && src && tgt, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !d ? "dataset" : !src ? "src" : "tgt");
    CHECK(src_len >= 1 && tgt_len >= 1, err, ATTEND_ERR_SHAPE,
          "%s: src_len=%d tgt_len=%d, both must be >= 1", who, src_len, tgt_len);
    for (int i = 0; i < src_len; i++)
        CHECK(src[i] >= 0, err, ATTEND_ERR_ARG, "%s: src[%d]=%d is negative", who, i, (int)src[i]);
    for (int i = 0; i < tgt_len; i++)
        CHECK(tgt[i] >= 0, err, ATTEND_ERR_ARG, "%s: tgt[%d]=%d is negative", who, i, (int)tgt[i]);
    CHECK(d->n < INT_MAX, err, ATTEND_ERR_CAPACITY, "%s: the dataset already holds %d pairs", who, d->n);
    size_t need;
    CHECK(at_add_size(d->ids_len, (size_t)src_len, &need) && at_add_size(need, (size_t)tgt_len, &need),
          err, ATTEND_ERR_ALLOC, "%s: total ids overflow size_t", who);
    void *pp = d->pairs, *ip = d->ids;
    int ok_pairs = grow_array(&pp, &d->pairs_cap, (size_t)d->n + 1, sizeof *d->pairs);
    d->pairs = pp;
    CHECK(ok_pairs, err, ATTEND_ERR_ALLOC, "%s: out of memory for %d pairs", who, d->n + 1);
    CHECK(grow_array(&ip, &d->ids_cap, need, sizeof *d->ids), err, ATTEND_ERR_ALLOC,
          "%s: out of memory for %zu ids", who, need);
    d->ids = ip;
    pair_entry *p = &d->pairs[d->n];
    p->off = d->ids_len;
    p->src_len = src_len;
    p->tgt_len = tgt_len;
    p->aoff = 0;
    p->an = -1;
    memcpy(d->ids + d->ids_len, src, (size_t)src_len * sizeof *src);
    memcpy(d->ids + d->ids_len + src_len, tgt, (size_t)tgt_len * sizeof *tgt);
    d->ids_len = need;
    d->n++;
    if (src_len > d->max_src) d->max_src = src_len;
    if (tgt_len > d->max_tgt) d->max_tgt = tgt_len;
    return at_ok(err);
}

attend_status attend_dataset_get(const attend_dataset *d, int i, const int32_t **src, int *src_len,
                                 const int32_t **tgt, int *tgt_len, attend_error *err) {
    const char *who = "attend_dataset_get";
    CHECK(d && src && src_len && tgt && tgt_len, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !d ? "dataset" : !src ? "src" : !src_len ? "src_len" : !tgt ? "tgt" : "tgt_len");
    CHECK(i >= 0 && i < d->n, err, ATTEND_ERR_ARG, "%s: pair %d is out of range (the dataset has %d)",
          who, i, d->n);
    const pair_entry *p = &d->pairs[i];
    *src = d->ids + p->off;
    *src_len = p->src_len;
    *tgt = d->ids + p->off + p->src_len;
    *tgt_len = p->tgt_len;
    return at_ok(err);
}

int attend_dataset_aligned_pairs(const attend_dataset *d) { return d ? d->aligned : 0; }

attend_status attend_dataset_set_alignment(attend_dataset *d, int i, const int32_t *links, int n_links,
                                           attend_error *err) {
    const char *who = "attend_dataset_set_alignment";
    CHECK(d && (links || n_links == 0), err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !d ? "dataset" : "links");
    CHECK(i >= 0 && i < d->n, err, ATTEND_ERR_ARG, "%s: pair %d is out of range (the dataset has %d)", who, i, d->n);
    pair_entry *p = &d->pairs[i];
    CHECK(n_links >= 0, err, ATTEND_ERR_ARG, "%s: pair %d: n_links=%d, must be >= 0", who, i, n_links);
    for (int k = 0; k < n_links; k++)
        CHECK(links[2 * k] >= 0 && links[2 * k] < p->src_len && links[2 * k + 1] >= 0 &&
                  links[2 * k + 1] < p->tgt_len,
              err, ATTEND_ERR_ARG, "%s: pair %d link %d: %d-%d is outside the %d source and %d target positions",
              who, i, k, (int)links[2 * k], (int)links[2 * k + 1], p->src_len, p->tgt_len);
    size_t need;
    CHECK(at_add_size(d->links_len, (size_t)n_links, &need) && need <= SIZE_MAX / 2, err, ATTEND_ERR_ALLOC,
          "%s: total links overflow size_t", who);
    void *lp = d->links;
    size_t cap = d->links_cap;
    CHECK(grow_array(&lp, &cap, need, 2 * sizeof *d->links), err, ATTEND_ERR_ALLOC,
          "%s: out of memory for %zu links", who, need);
    d->links = lp;
    d->links_cap = cap;
    if (n_links) memcpy(d->links + 2 * d->links_len, links, (size_t)n_links * 2 * sizeof *links);
    if (p->an < 0) d->aligned++;
    p->aoff = d->links_len; /* a replaced alignment's links stay unused in the array */
    p->an = n_links;
    d->links_len = need;
    return at_ok(err);
}

attend_status attend_dataset_get_alignment(const attend_dataset *d, int i, const int32_t **links, int *n_links,
                                           attend_error *err) {
    const char *who = "attend_dataset_get_alignment";
    CHECK(d && links && n_links, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !d ? "dataset" : !links ? "links" : "n_links");
    CHECK(i >= 0 && i < d->n, err, ATTEND_ERR_ARG, "%s: pair %d is out of range (the dataset has %d)", who, i, d->n);
    const pair_entry *p = &d->pairs[i];
    *n_links = p->an;
    *links = p->an > 0 ? d->links + 2 * p->aoff : NULL;
    return at_ok(err);
}

/* ------------------------------------------------------------- the tasks */

/* Uniform integer in [0, n), n >= 1, without modulo bias (rejects the
 * 2^64 mod n lowest draws). Exact integer arithmetic: the same on every platform. */
static uint64_t uniform_below(attend_rng *rng, uint64_t n) {
    uint64_t threshold = (0 - n) % n;
    for (;;) {
        uint64_t r = attend_rng_next(rng);
        if (r >= threshold) return r % n;
    }
}

typedef struct {
    int32_t sym, pos;
} sort_key;

static int sort_key_cmp(const void *a, const void *b) {
    const sort_key *x = a, *y = b;
    if (x->sym != y->sym) return x->sym < y->sym ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos; /* ties keep source order: stable */
}

/* Both generators: cfg checked, then per pair a length and its symbols from one rng. */
static attend_status generate(attend_dataset **out, attend_vocab **vocab, const attend_task_config *cfg, int shift,
                              const char *who, attend_error *err) {
    CHECK(out && vocab && cfg, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !out ? "out" : !vocab ? "vocab" : "cfg");
    *out = NULL;
    *vocab = NULL;
    CHECK(cfg->symbols >= 1 && cfg->symbols <= TASK_MAX_SYMBOLS, err, ATTEND_ERR_ARG,
          "%s: symbols=%d, must be in 1..%d", who, cfg->symbols, TASK_MAX_SYMBOLS);
    CHECK(cfg->min_len >= 1 && cfg->min_len <= cfg->max_len && cfg->max_len <= TASK_MAX_LEN, err,
          ATTEND_ERR_ARG, "%s: min_len=%d max_len=%d, need 1 <= min_len <= max_len <= %d", who,
          cfg->min_len, cfg->max_len, TASK_MAX_LEN);
    CHECK(cfg->count >= 1, err, ATTEND_ERR_ARG, "%s: count=%d, must be >= 1", who, cfg->count);

    attend_vocab *v = NULL;
    attend_dataset *d = NULL;
    int32_t *src = malloc((size_t)cfg->max_len * sizeof *src);
    int32_t *tgt = malloc((size_t)cfg->max_len * sizeof *tgt);
    int keyed = cfg->task == ATTEND_TASK_SORT || cfg->task == ATTEND_TASK_BAG;
    sort_key *keys = keyed ? malloc((size_t)cfg->max_len * sizeof *keys) : NULL;
    int32_t *links = malloc((size_t)cfg->max_len * 2 * sizeof *links);
    attend_status st;
    if (!src || !tgt || !links || (keyed && !keys)) {
        st = at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory for sequences of %d", who, cfg->max_len);
        goto done;
    }
    if ((st = attend_vocab_create(&v, err)) != ATTEND_OK) goto done;
    for (int k = 0; k < cfg->symbols; k++) {
        char name[16];
        if (k < 26) snprintf(name, sizeof name, "%c", 'a' + k);
        else snprintf(name, sizeof name, "s%d", k);
        if ((st = attend_vocab_add(v, name, strlen(name), NULL, err)) != ATTEND_OK) goto done;
    }
    const int32_t blank = 4 + cfg->symbols; /* SHIFT's label before the shift */
    if (cfg->task == ATTEND_TASK_SHIFT && (st = attend_vocab_add(v, "_", 1, NULL, err)) != ATTEND_OK) goto done;
    if ((st = attend_dataset_create(&d, err)) != ATTEND_OK) goto done;

    attend_rng rng;
    attend_rng_seed(&rng, cfg->seed);
    uint64_t span = (uint64_t)(cfg->max_len - cfg->min_len) + 1;
    for (int i = 0; i < cfg->count; i++) {
        int L = cfg->min_len + (int)uniform_below(&rng, span), nl = 0;
        for (int j = 0; j < L; j++) src[j] = 4 + (int32_t)uniform_below(&rng, (uint64_t)cfg->symbols);
        switch (cfg->task) {
        case ATTEND_TASK_COPY:
            memcpy(tgt, src, (size_t)L * sizeof *src);
            break;
        case ATTEND_TASK_REVERSE:
            for (int j = 0; j < L; j++) tgt[j] = src[L - 1 - j];
            break;
        case ATTEND_TASK_SORT:
        case ATTEND_TASK_BAG:
            for (int j = 0; j < L; j++) keys[j] = (sort_key){src[j], j};
            qsort(keys, (size_t)L, sizeof *keys, sort_key_cmp);
            for (int j = 0; j < L; j++) tgt[j] = cfg->task == ATTEND_TASK_SORT ? keys[j].pos : keys[j].sym;
            break;
        case ATTEND_TASK_SHIFT:
            for (int j = 0; j < L; j++) tgt[j] = j >= shift ? src[j - shift] : blank;
            break;
        }
        if ((st = attend_dataset_add(d, src, L, tgt, L, err)) != ATTEND_OK) goto done;
        for (int j = 0; j < L; j++) {
            int from = cfg->task == ATTEND_TASK_COPY      ? j
                       : cfg->task == ATTEND_TASK_REVERSE ? L - 1 - j
                       : cfg->task == ATTEND_TASK_SHIFT   ? j - shift
                                                          : keys[j].pos;
            if (from < 0) continue; /* a blank comes from no position */
            links[2 * nl] = from;
            links[2 * nl + 1] = j;
            nl++;
        }
        if ((st = attend_dataset_set_alignment(d, i, links, nl, err)) != ATTEND_OK) goto done;
    }
    st = at_ok(err);
done:
    free(src);
    free(tgt);
    free(keys);
    free(links);
    if (st != ATTEND_OK) {
        attend_dataset_free(d);
        attend_vocab_free(v);
        return st;
    }
    *out = d;
    *vocab = v;
    return st;
}

/*
 * Per pair: the length L = min_len + uniform_below(max_len - min_len + 1),
 * then L symbols 4 + uniform_below(symbols) (symbol k has id 4 + k), all from
 * one attend_rng seeded with cfg->seed, so a seed fixes the data everywhere.
 * Each pair carries its alignment: target token j comes from source position
 * i (copy i = j, reverse i = L-1-j, sort and bag: the position of the j-th
 * smallest symbol, ties in source order), one link i-j per j.
 */
attend_status attend_dataset_task(attend_dataset **out, attend_vocab **vocab,
                                  const attend_task_config *cfg, attend_error *err) {
    const char *who = "attend_dataset_task";
    CHECK(out && vocab && cfg, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !out ? "out" : !vocab ? "vocab" : "cfg");
    *out = NULL;
    *vocab = NULL;
    CHECK(cfg->task != ATTEND_TASK_SHIFT, err, ATTEND_ERR_ARG,
          "%s: task 4 (shift) needs its shift: call attend_dataset_shift_task", who);
    CHECK(cfg->task == ATTEND_TASK_COPY || cfg->task == ATTEND_TASK_REVERSE || cfg->task == ATTEND_TASK_SORT ||
              cfg->task == ATTEND_TASK_BAG,
          err, ATTEND_ERR_ARG, "%s: unknown task %d (copy=0, reverse=1, sort=2, bag=3, shift=4)", who,
          (int)cfg->task);
    return generate(out, vocab, cfg, 0, who, err);
}

attend_status attend_dataset_shift_task(attend_dataset **out, attend_vocab **vocab, const attend_task_config *cfg,
                                        int shift, attend_error *err) {
    const char *who = "attend_dataset_shift_task";
    CHECK(out && vocab && cfg, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !out ? "out" : !vocab ? "vocab" : "cfg");
    *out = NULL;
    *vocab = NULL;
    CHECK(cfg->task == ATTEND_TASK_SHIFT, err, ATTEND_ERR_ARG, "%s: task %d is not shift (4)", who, (int)cfg->task);
    CHECK(shift >= 0 && shift < TASK_MAX_LEN, err, ATTEND_ERR_ARG, "%s: shift=%d, must be in 0..%d", who, shift,
          TASK_MAX_LEN - 1);
    return generate(out, vocab, cfg, shift, who, err);
}

/* -------------------------------------------------------------- TSV files */

typedef struct {
    FILE *f;
    size_t pos, end;
    int eof;  /* fread came back short */
    int err;  /* errno of a read error, 0 if none */
    char chunk[1 << 16];
} line_reader;

/* Makes bytes available: 1 when there are some, 0 at the end of the file,
 * -1 on a read error (r->err). */
static int fill(line_reader *r) {
    if (r->pos < r->end) return 1;
    if (r->err) return -1;
    if (r->eof) return 0;
    r->pos = 0;
    errno = 0;
    r->end = fread(r->chunk, 1, sizeof r->chunk, r->f);
    if (r->end < sizeof r->chunk) {
        r->eof = 1;
        if (ferror(r->f)) {
            r->err = errno ? errno : EIO;
            return -1; /* bytes read before the error are not used */
        }
    }
    return r->end > 0;
}

/* Reads the next line (without its LF) into line, never more than cap bytes:
 * *len is its length, and *more is set when the line goes on past cap bytes
 * (the rest is left unread: skip_rest). Returns 1 for a line, 0 when no bytes
 * were left, -1 on a read error. */
static int next_line(line_reader *r, char *line, size_t cap, size_t *len, int *more) {
    size_t n = 0;
    int any = 0, f;
    *more = 0;
    while ((f = fill(r)) > 0) {
        any = 1;
        const char *p = r->chunk + r->pos;
        size_t avail = r->end - r->pos;
        const char *nl = memchr(p, '\n', avail);
        size_t take = nl ? (size_t)(nl - p) : avail;
        if (take > cap - n) { /* longer than cap: stop here */
            memcpy(line + n, p, cap - n);
            r->pos += cap - n;
            n = cap;
            *more = 1;
            break;
        }
        memcpy(line + n, p, take);
        n += take;
        r->pos += take;
        if (nl) {
            r->pos++;
            break;
        }
    }
    *len = n;
    return f < 0 ? -1 : any;
}

/* Discards the rest of a line up to and including its LF (or the end of the
 * file): 1 done, -1 read error, -2 no LF within limit bytes. */
static int skip_rest(line_reader *r, size_t limit) {
    size_t n = 0;
    int f;
    while ((f = fill(r)) > 0) {
        const char *p = r->chunk + r->pos;
        size_t avail = r->end - r->pos;
        const char *nl = memchr(p, '\n', avail);
        size_t take = nl ? (size_t)(nl - p) : avail;
        if (take > limit - n) return -2;
        n += take;
        r->pos += take;
        if (nl) {
            r->pos++;
            return 1;
        }
    }
    return f < 0 ? -1 : 1;
}

typedef enum { LINE_OK, LINE_MALFORMED, LINE_FATAL } line_result;

/* Encodes one side; a FORMAT error or too many tokens is a malformed line (message
 * in err, without the path:line prefix), anything else is fatal. */
static line_result encode_side(attend_vocab *v, const attend_tsv_options *o, int grow, const char *side,
                               const char *s, size_t len, size_t base, int32_t *ids, int *n,
                               attend_error *err) {
    attend_error e;
    attend_status st = at_vocab_encode(v, o->tokenizer, grow, s, len, base, ids, o->max_tokens, n, &e);
    if (st == ATTEND_OK) {
        if (*n > 0) return LINE_OK;
        at_fail(err, ATTEND_ERR_FORMAT, "empty %s side", side);
        return LINE_MALFORMED;
    }
    if (st == ATTEND_ERR_CAPACITY && *n == -1) {
        at_fail(err, ATTEND_ERR_FORMAT, "%s side has more than max_tokens=%d tokens", side, o->max_tokens);
        return LINE_MALFORMED;
    }
    at_fail(err, st, "%s side: %s", side, e.msg);
    return st == ATTEND_ERR_FORMAT ? LINE_MALFORMED : LINE_FATAL;
}

/* Checks one line (BOM and CR already removed; n may exceed the stored bytes
 * only when over max_line_bytes) and encodes it into src/tgt; a third column
 * is parsed into links (*n_links, -1 when the line has none). */
static line_result parse_line(const char *s, size_t n, attend_vocab *sv, attend_vocab *tv, int grow,
                              const attend_tsv_options *o, int32_t *src, int *ns, int32_t *tgt,
                              int *nt, int32_t *links, int *n_links, attend_error *err) {
    *n_links = -1;
    if (n > (size_t)o->max_line_bytes) {
        at_fail(err, ATTEND_ERR_FORMAT, "line is longer than max_line_bytes=%d", o->max_line_bytes);
        return LINE_MALFORMED;
    }
    if (n == 0) {
        at_fail(err, ATTEND_ERR_FORMAT, "empty line (its source side is empty)");
        return LINE_MALFORMED;
    }
    const char *nul = memchr(s, '\0', n);
    if (nul) {
        at_fail(err, ATTEND_ERR_FORMAT, "embedded NUL byte at byte %zu", (size_t)(nul - s));
        return LINE_MALFORMED;
    }
    const char *tab = memchr(s, '\t', n);
    if (!tab) {
        at_fail(err, ATTEND_ERR_FORMAT, "missing tab between source and target");
        return LINE_MALFORMED;
    }
    size_t t = (size_t)(tab - s);
    const char *tab2 = memchr(tab + 1, '\t', n - t - 1);
    size_t t2 = tab2 ? (size_t)(tab2 - s) : n; /* the target ends here */
    const char *tab3 = tab2 ? memchr(tab2 + 1, '\t', n - t2 - 1) : NULL;
    if (tab3) {
        at_fail(err, ATTEND_ERR_FORMAT, "extra tab field at byte %zu (a line is source<TAB>target[<TAB>alignment])",
                (size_t)(tab3 - s));
        return LINE_MALFORMED;
    }
    line_result r = encode_side(sv, o, grow, "source", s, t, 0, src, ns, err);
    if (r != LINE_OK) return r;
    /* copy: a target token found in its source need not be in the target vocabulary */
    r = encode_side(tv, o, grow && !o->copy, "target", tab + 1, t2 - t - 1, t + 1, tgt, nt, err);
    if (r == LINE_OK && o->copy && grow &&
        at_copy_grow_targets(o->tokenizer, s, t, tab + 1, t2 - t - 1, tgt, *nt, tv, err) != ATTEND_OK)
        return LINE_FATAL;
    if (r == LINE_OK && o->copy && !grow) /* unknown target tokens found in the source: copied ids */
        at_copy_extend_targets(o->tokenizer, s, t, tab + 1, t2 - t - 1, tgt, *nt, attend_vocab_size(tv));
    if (r != LINE_OK || !tab2) return r;
    return at_alignment_parse(tab2 + 1, n - t2 - 1, t2 + 1, *ns, *nt, links, n_links, err) == ATTEND_OK
               ? LINE_OK
               : LINE_MALFORMED;
}

/*
 * On any error the vocabularies are restored to their sizes at entry (tokens
 * added by lines read before the error are removed again), and a skipped line
 * adds no tokens either. Byte offsets in messages count from the start of the
 * line. A UTF-8 byte order mark at the start of the file is ignored. A file
 * with no lines gives an empty dataset.
 */
attend_status attend_dataset_read_tsv(attend_dataset **out, const char *path,
                                      attend_vocab *src_vocab, attend_vocab *tgt_vocab, int grow,
                                      const attend_tsv_options *opt, int *skipped,
                                      attend_error *err) {
    const char *who = "attend_dataset_read_tsv";
    CHECK(out && path && src_vocab && tgt_vocab, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !out ? "out" : !path ? "path" : !src_vocab ? "src_vocab" : "tgt_vocab");
    *out = NULL;
    if (skipped) *skipped = 0;
    attend_tsv_options o = {ATTEND_TOKENIZE_CHAR, 0, 0, 0, 0};
    if (opt) o = *opt;
    CHECK(o.tokenizer == ATTEND_TOKENIZE_CHAR || o.tokenizer == ATTEND_TOKENIZE_SPACE, err,
          ATTEND_ERR_ARG, "%s: unknown tokenizer %d", who, (int)o.tokenizer);
    CHECK(o.max_line_bytes >= 0 && o.max_tokens >= 0, err, ATTEND_ERR_ARG,
          "%s: max_line_bytes=%d max_tokens=%d, must be >= 0 (0 = default)", who, o.max_line_bytes,
          o.max_tokens);
    CHECK(o.max_line_bytes <= ATTEND_TSV_MAX_LINE_BYTES, err, ATTEND_ERR_ARG,
          "%s: max_line_bytes=%d is above the limit %d", who, o.max_line_bytes, ATTEND_TSV_MAX_LINE_BYTES);
    if (o.max_line_bytes == 0) o.max_line_bytes = 4096;
    if (o.max_tokens == 0) o.max_tokens = 256;

    const int src0 = attend_vocab_size(src_vocab), tgt0 = attend_vocab_size(tgt_vocab);
    size_t cap = (size_t)o.max_line_bytes + 4; /* room for a byte order mark and a CR */
    size_t ids_bytes;
    CHECK(at_mul_size((size_t)o.max_tokens, sizeof(int32_t), &ids_bytes), err, ATTEND_ERR_ALLOC,
          "%s: max_tokens=%d overflows size_t", who, o.max_tokens);
    char *line = malloc(cap);
    int32_t *src = malloc(ids_bytes);
    int32_t *tgt = malloc(ids_bytes);
    int32_t *links = malloc(at_alignment_max_links(cap) * 2 * sizeof *links);
    line_reader *r = calloc(1, sizeof *r);
    attend_dataset *d = NULL;
    attend_status st = ATTEND_OK;
    int n_skipped = 0;
    if (!line || !src || !tgt || !links || !r) {
        st = at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory for a line of %d bytes and %d tokens", who,
                     o.max_line_bytes, o.max_tokens);
        goto done;
    }
    const int std_in = strcmp(path, "-") == 0;
    if (std_in) path = "<stdin>"; /* "-" is standard input; messages name it so */
    r->f = std_in ? stdin : fopen(path, "rb");
    if (!r->f) {
        st = at_fail(err, ATTEND_ERR_IO, "%s: cannot open for reading: %s", path, strerror(errno));
        goto done;
    }
    if ((st = attend_dataset_create(&d, err)) != ATTEND_OK) goto done;

    size_t n, lineno = 1;
    size_t blank_from = 0, blanks = 0; /* blank lines not yet followed by a pair: ignored at the end */
    int more = 0, got;
    for (; (got = next_line(r, line, cap, &n, &more)) > 0; lineno++) {
        const char *s = line;
        if (more) n = cap + 1; /* longer than the buffer: over-long, whatever else */
        if (lineno == 1 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) s += 3, n -= 3;
        if (!more && n > 0 && s[n - 1] == '\r') n--;
        size_t sp = 0;
        while (!more && sp < n && (s[sp] == ' ' || s[sp] == '\t')) sp++;
        if (!more && sp == n) { /* blank: malformed only when a pair follows it */
            if (!blanks++) blank_from = lineno;
            continue;
        }
        if (blanks && o.skip_malformed) {
            n_skipped += (int)blanks;
        } else if (blanks) {
            st = at_fail(err, ATTEND_ERR_FORMAT,
                         "%s:%zu: blank line (blank lines are ignored only at the end of the file)", path, blank_from);
            goto done;
        }
        blanks = 0;
        int ns = 0, nt = 0, nl = -1;
        const int s_mark = attend_vocab_size(src_vocab), t_mark = attend_vocab_size(tgt_vocab);
        attend_error e;
        line_result res = parse_line(s, n, src_vocab, tgt_vocab, grow, &o, src, &ns, tgt, &nt, links, &nl, &e);
        if (res == LINE_MALFORMED && o.skip_malformed) {
            at_vocab_truncate(tgt_vocab, t_mark);
            at_vocab_truncate(src_vocab, s_mark);
            int k = more ? skip_rest(r, ATTEND_TSV_MAX_SKIP_BYTES) : 1;
            if (k == -2) {
                st = at_fail(err, ATTEND_ERR_FORMAT,
                             "%s:%zu: no end of line within %d bytes: not a text file of lines "
                             "(an over-long line is skipped only when it ends within that)",
                             path, lineno, ATTEND_TSV_MAX_SKIP_BYTES);
                goto done;
            }
            if (k < 0) break; /* the read error is reported below */
            n_skipped++;
            continue;
        }
        if (res != LINE_OK) {
            st = at_fail(err, e.status, "%s:%zu: %s", path, lineno, e.msg);
            goto done;
        }
        if ((st = attend_dataset_add(d, src, ns, tgt, nt, err)) != ATTEND_OK) goto done;
        if (nl >= 0 && (st = attend_dataset_set_alignment(d, attend_dataset_size(d) - 1, links, nl, err)) != ATTEND_OK)
            goto done;
    }
    if (r->err) {
        st = at_fail(err, ATTEND_ERR_IO, "%s:%zu: read error: %s", path, lineno, strerror(r->err));
        goto done;
    }
    if (o.copy && grow) /* the copies read while the target vocabulary grew */
        for (int i = 0; i < d->n; i++) {
            pair_entry *pe = &d->pairs[i];
            at_copy_resolve(d->ids + pe->off + pe->src_len, pe->tgt_len, d->ids + pe->off, pe->src_len, src_vocab,
                            tgt_vocab);
        }
done:
    if (r && r->f && r->f != stdin) fclose(r->f);
    free(r);
    free(line);
    free(src);
    free(tgt);
    free(links);
    if (skipped) *skipped = n_skipped;
    if (st != ATTEND_OK) {
        attend_dataset_free(d);
        at_vocab_truncate(tgt_vocab, tgt0);
        at_vocab_truncate(src_vocab, src0);
        return st;
    }
    *out = d;
    return at_ok(err);
}
