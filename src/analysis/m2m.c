/*
 * m2m.c — the many-to-many EM aligner for dictionaries (Jiampojamarn,
 * Kondrak & Sherif 2007, "Applying Many-to-Many Alignments and Hidden Markov
 * Models to Letter-to-Phoneme Conversion", Algorithms 1-3): every pair's
 * source is cut into substrings of 1..max_src tokens, each spelling 0..max_tgt
 * target tokens (0: a silent letter, when src_deletions; 2 letters spelling 2
 * phonemes only with two_to_two: joint EM favours the longest substrings, and
 * with them it links most letters to two phonemes), and EM over all such
 * segmentations learns the joint probability δ(x, y) of each substring pair
 * (forward-backward expected counts, normalised jointly); the Viterbi
 * segmentation of each pair then gives its links: every source token of a
 * substring to every target token it spells. The result is the TSV's
 * alignment column (guided alignment), and the reference the alignment trial
 * scores attention against.
 *
 * Memory: one allocation per call: the substring-pair table (open addressing,
 * capacity from the options: more distinct pairs is ATTEND_ERR_CAPACITY) and
 * the forward, backward and Viterbi lattices of the longest pair.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* a substring pair: source tokens x[0..1], target tokens y[0..1], -1 unused */
typedef struct {
    int32_t x[2], y[2];
    double p, c; /* δ, and the expected count of this iteration */
    int used;
} m2m_entry;

typedef struct {
    m2m_entry *e;
    size_t cap, n; /* cap a power of 2 */
} m2m_table;

static size_t m2m_hash(const int32_t *k) {
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 4; i++) {
        h ^= (uint64_t)(uint32_t)k[i];
        h *= 1099511628211ULL;
    }
    return (size_t)(h ^ (h >> 29));
}

/* The entry of key k [4]; inserted when insert (NULL when the table is full). */
static m2m_entry *m2m_find(m2m_table *t, const int32_t *k, int insert) {
    size_t i = m2m_hash(k) & (t->cap - 1);
    for (size_t probe = 0; probe < t->cap; probe++, i = (i + 1) & (t->cap - 1)) {
        m2m_entry *e = &t->e[i];
        if (!e->used) {
            if (!insert || 2 * (t->n + 1) > t->cap) return NULL; /* kept at most half full */
            e->used = 1;
            e->x[0] = k[0], e->x[1] = k[1], e->y[0] = k[2], e->y[1] = k[3];
            e->p = 1; /* uniform start */
            e->c = 0;
            t->n++;
            return e;
        }
        if (e->x[0] == k[0] && e->x[1] == k[1] && e->y[0] == k[2] && e->y[1] == k[3]) return e;
    }
    return NULL;
}

/* The key of source tokens src[a..a+i) and target tokens tgt[b..b+j). */
static void m2m_key(int32_t *k, const int32_t *src, int a, int i, const int32_t *tgt, int b, int j) {
    k[0] = src[a];
    k[1] = i > 1 ? src[a + 1] : -1;
    k[2] = j > 0 ? tgt[b] : -1;
    k[3] = j > 1 ? tgt[b + 1] : -1;
}

/* The edges into lattice cell (t, v): i source tokens, j target tokens. */
#define M2M_EDGES(o, t, v)                                                                                     \
    for (int i = 1; i <= (o)->max_src && i <= (t); i++)                                                         \
        for (int j = (o)->src_deletions ? 0 : 1; j <= (o)->max_tgt && j <= (v) && (o->two_to_two || i < 2 || j < 2); \
             j++)

attend_status attend_m2m_align(attend_dataset *d, const attend_m2m_options *o, attend_m2m_result *res,
                               attend_error *err) {
    const char *who = "attend_m2m_align";
    CHECK(d && o, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !d ? "dataset" : "options");
    CHECK(o->max_src >= 1 && o->max_src <= 2 && o->max_tgt >= 1 && o->max_tgt <= 2, err, ATTEND_ERR_ARG,
          "%s: max_src=%d and max_tgt=%d must each be 1 or 2", who, o->max_src, o->max_tgt);
    CHECK(o->iterations >= 1 && o->iterations <= 1000, err, ATTEND_ERR_ARG, "%s: iterations=%d outside [1, 1000]",
          who, o->iterations);
    CHECK(o->two_to_two == 0 || o->two_to_two == 1, err, ATTEND_ERR_ARG, "%s: two_to_two=%d must be 0 or 1", who,
          o->two_to_two);
    CHECK(o->capacity >= 16 && o->capacity <= (1L << 26), err, ATTEND_ERR_ARG,
          "%s: capacity=%ld outside [16, 2^26] substring pairs", who, o->capacity);
    int n = attend_dataset_size(d), S = attend_dataset_max_src_len(d), T = attend_dataset_max_tgt_len(d);
    size_t cap = 16;
    while (cap < 2 * (size_t)o->capacity) cap *= 2;
    size_t cells = (size_t)(S + 1) * (T + 1);
    size_t bytes = cap * sizeof(m2m_entry) + 2 * cells * sizeof(double) + cells * sizeof(int16_t) * 2 +
                   (2 * (size_t)(S + T) + 4) * 2 * sizeof(int32_t);
    unsigned char *mem = calloc(1, bytes);
    CHECK(mem, err, ATTEND_ERR_ALLOC, "%s: out of memory for %zu bytes (capacity %ld)", who, bytes, o->capacity);
    m2m_table tab = {(m2m_entry *)(void *)mem, cap, 0};
    double *al = (double *)(void *)(mem + cap * sizeof(m2m_entry)), *be = al + cells;
    int16_t *bi = (int16_t *)(void *)(be + cells), *bj = bi + cells;
    int32_t *links = (int32_t *)(void *)(bj + cells);
    attend_status st = ATTEND_OK;
    int unaligned = 0;
    double loglik = 0;
    int32_t k[4];

    for (int it = 0; it <= o->iterations && !st; it++) {
        /* it < iterations: an E-step (it == 0 also fills the table); then the M-step */
        for (size_t q = 0; q < tab.cap; q++) tab.e[q].c = 0;
        loglik = 0;
        unaligned = 0;
        for (int p = 0; p < n && !st; p++) {
            const int32_t *src, *tgt;
            int sl, tl;
            if ((st = attend_dataset_get(d, p, &src, &sl, &tgt, &tl, err))) break;
            int W = tl + 1;
            /* forward */
            for (int t = 0; t <= sl; t++)
                for (int v = 0; v <= tl; v++) {
                    double a = t == 0 && v == 0 ? 1 : 0;
                    M2M_EDGES(o, t, v) {
                        double prev = al[(size_t)(t - i) * W + (v - j)];
                        if (prev == 0) continue;
                        m2m_key(k, src, t - i, i, tgt, v - j, j);
                        m2m_entry *e = m2m_find(&tab, k, it == 0);
                        if (!e) {
                            st = at_fail(err, ATTEND_ERR_CAPACITY,
                                         "%s: more than %ld distinct substring pairs (pair %d): raise the capacity",
                                         who, o->capacity, p);
                            break;
                        }
                        a += e->p * prev;
                    }
                    if (st) break;
                    al[(size_t)t * W + v] = a;
                }
            if (st) break;
            double Z = al[(size_t)sl * W + tl];
            if (!(Z > 0)) {
                unaligned++;
                continue;
            }
            loglik += log(Z);
            if (it == o->iterations) continue;
            /* backward */
            for (int t = sl; t >= 0; t--)
                for (int v = tl; v >= 0; v--) {
                    if (t == sl && v == tl) {
                        be[(size_t)t * W + v] = 1;
                        continue;
                    }
                    double b = 0;
                    for (int i = 1; i <= o->max_src && t + i <= sl; i++)
                        for (int j = o->src_deletions ? 0 : 1;
                             j <= o->max_tgt && v + j <= tl && (o->two_to_two || i < 2 || j < 2); j++) {
                            double next = be[(size_t)(t + i) * W + (v + j)];
                            if (next == 0) continue;
                            m2m_key(k, src, t, i, tgt, v, j);
                            m2m_entry *e = m2m_find(&tab, k, 0);
                            if (e) b += e->p * next;
                        }
                    be[(size_t)t * W + v] = b;
                }
            /* expected counts of every edge */
            for (int t = 1; t <= sl; t++)
                for (int v = 0; v <= tl; v++) {
                    double b = be[(size_t)t * W + v];
                    if (b == 0) continue;
                    M2M_EDGES(o, t, v) {
                        double prev = al[(size_t)(t - i) * W + (v - j)];
                        if (prev == 0) continue;
                        m2m_key(k, src, t - i, i, tgt, v - j, j);
                        m2m_entry *e = m2m_find(&tab, k, 0);
                        if (e) e->c += prev * e->p * b / Z;
                    }
                }
        }
        if (st || it == o->iterations) break;
        /* M-step: joint normalisation */
        double total = 0;
        for (size_t q = 0; q < tab.cap; q++) total += tab.e[q].used ? tab.e[q].c : 0;
        for (size_t q = 0; q < tab.cap; q++)
            if (tab.e[q].used) tab.e[q].p = total > 0 ? tab.e[q].c / total : 0;
    }

    /* Viterbi: each pair's best segmentation, as links */
    long n_links = 0;
    for (int p = 0; p < n && !st; p++) {
        const int32_t *src, *tgt;
        int sl, tl;
        if ((st = attend_dataset_get(d, p, &src, &sl, &tgt, &tl, err))) break;
        int W = tl + 1;
        for (int t = 0; t <= sl; t++)
            for (int v = 0; v <= tl; v++) {
                double a = t == 0 && v == 0 ? 0 : -INFINITY;
                int16_t si = 0, sj = 0;
                M2M_EDGES(o, t, v) {
                    double prev = al[(size_t)(t - i) * W + (v - j)];
                    if (prev == -INFINITY) continue;
                    m2m_key(k, src, t - i, i, tgt, v - j, j);
                    m2m_entry *e = m2m_find(&tab, k, 0);
                    if (!e || !(e->p > 0)) continue;
                    double s = prev + log(e->p);
                    if (s > a) a = s, si = (int16_t)i, sj = (int16_t)j;
                }
                al[(size_t)t * W + v] = a;
                bi[(size_t)t * W + v] = si;
                bj[(size_t)t * W + v] = sj;
            }
        if (al[(size_t)sl * W + tl] == -INFINITY) continue; /* no alignment: counted in unaligned */
        int L = 0;
        for (int t = sl, v = tl; t > 0;) {
            int i = bi[(size_t)t * W + v], j = bj[(size_t)t * W + v];
            for (int a = t - i; a < t; a++)
                for (int b = v - j; b < v; b++) {
                    links[2 * L] = a;
                    links[2 * L + 1] = b;
                    L++;
                }
            t -= i;
            v -= j;
        }
        /* back to front: sorted by source, then target position (insertion sort: a word's links) */
        for (int a = 1; a < L; a++) {
            int32_t x0 = links[2 * a], x1 = links[2 * a + 1];
            int b = a - 1;
            for (; b >= 0 && (links[2 * b] > x0 || (links[2 * b] == x0 && links[2 * b + 1] > x1)); b--)
                links[2 * b + 2] = links[2 * b], links[2 * b + 3] = links[2 * b + 1];
            links[2 * b + 2] = x0, links[2 * b + 3] = x1;
        }
        st = attend_dataset_set_alignment(d, p, links, L, err);
        n_links += L;
    }
    if (res && !st) {
        res->pairs = n;
        res->unaligned = unaligned;
        res->substring_pairs = (long)tab.n;
        res->log_likelihood = loglik;
        res->links = n_links;
    }
    free(mem);
    return st ? st : at_ok(err);
}
