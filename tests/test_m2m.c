/*
 * test_m2m.c — the many-to-many EM aligner and the alignment scores:
 *   - a planted answer: a synthetic dictionary spelled from known units (one
 *     letter to one phoneme, two letters to one, one letter to two, a silent
 *     letter); the aligner must find every unit's links: F1 = 1, AER = 0;
 *   - the CMUdict sample (data/g2p/cmudict-sample.dict, first pronunciations)
 *     aligned by EM and scored against the 64 hand-aligned words of
 *     data/g2p/hand-alignments.tsv (committed before the aligner): F1 above
 *     the floor measured when it was written;
 *   - attention rows as links (argmax, threshold) and the scores on hand-made
 *     counts; rows frozen to a known permutation give a known AER;
 *   - errors name what is wrong.
 * Runs from tests/ (ctest's working directory).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "harness.h"

/* measured when the aligner was written (docs/RESULTS.md): F1 0.985 without
 * 2-2 pairs, 0.761 with them */
#define M2M_HAND_F1_FLOOR 0.97

/* ------------------------------------------------------------ planted */

typedef struct {
    int nx, ny;
    int32_t x[2], y[2];
} unit;

static const unit UNITS[] = {
    {1, 1, {10, 0}, {40, 0}},   /* a -> A */
    {2, 1, {11, 12}, {41, 0}},  /* bh -> B */
    {1, 2, {13, 0}, {42, 43}},  /* x -> K S */
    {1, 0, {14, 0}, {0, 0}},    /* e -> (silent) */
    {1, 1, {15, 0}, {44, 0}},   /* c -> C */
    {1, 1, {16, 0}, {45, 0}},   /* o -> O */
    {1, 1, {17, 0}, {46, 0}},   /* t -> T */
};
#define NUNITS ((int)(sizeof UNITS / sizeof UNITS[0]))

static void test_planted(void) {
    attend_dataset *d = NULL;
    attend_error err;
    EXPECT(attend_dataset_create(&d, &err) == ATTEND_OK, "%s", err.msg);
    if (!d) return;
    enum { WORDS = 400, MAXU = 6 };
    static int32_t truth[WORDS][4 * MAXU * 2];
    int ntruth[WORDS];
    attend_rng rng;
    attend_rng_seed(&rng, 31);
    for (int w = 0; w < WORDS; w++) {
        int32_t src[2 * MAXU], tgt[2 * MAXU];
        int sl = 0, tl = 0, nl = 0, nu = 2 + (int)(attend_rng_next(&rng) % (MAXU - 1));
        for (int u = 0; u < nu; u++) {
            const unit *U = &UNITS[attend_rng_next(&rng) % NUNITS];
            if (U->ny == 0 && u == 0) U = &UNITS[0]; /* no word starts silent */
            for (int a = 0; a < U->nx; a++)
                for (int b = 0; b < U->ny; b++) {
                    truth[w][2 * nl] = sl + a;
                    truth[w][2 * nl + 1] = tl + b;
                    nl++;
                }
            for (int a = 0; a < U->nx; a++) src[sl++] = U->x[a];
            for (int b = 0; b < U->ny; b++) tgt[tl++] = U->y[b];
        }
        ntruth[w] = nl;
        EXPECT(attend_dataset_add(d, src, sl, tgt, tl, &err) == ATTEND_OK, "%s", err.msg);
    }
    attend_m2m_options o = {2, 2, 1, 10, 4096, 0};
    attend_m2m_result r;
    EXPECT(attend_m2m_align(d, &o, &r, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(r.pairs == WORDS && r.unaligned == 0, "pairs %d, unaligned %d", r.pairs, r.unaligned);
    attend_alignment_counts c = {0, 0, 0};
    int wrong = 0;
    for (int w = 0; w < WORDS; w++) {
        const int32_t *links;
        int n;
        EXPECT(attend_dataset_get_alignment(d, w, &links, &n, &err) == ATTEND_OK, "%s", err.msg);
        attend_alignment_counts one = {0, 0, 0};
        attend_alignment_count(truth[w], ntruth[w], links, n, &one, &err);
        attend_alignment_count(truth[w], ntruth[w], links, n, &c, &err);
        wrong += one.both != one.ref || one.both != one.hyp;
    }
    double p, rc, f1, aer;
    attend_alignment_scores(&c, &p, &rc, &f1, &aer);
    printf("  planted units: %d words, %ld substring pairs, precision %.4f recall %.4f F1 %.4f AER %.4f, %d words "
           "wrong\n", WORDS, r.substring_pairs, p, rc, f1, aer, wrong);
    EXPECT(wrong == 0 && aer == 0, "%d words aligned wrongly (AER %g)", wrong, aer);
    attend_dataset_free(d);
}

/* ------------------------------------------------------ CMUdict vs hand */

static int phone_id(char (*names)[8], int *n, const char *s) {
    for (int i = 0; i < *n; i++)
        if (!strcmp(names[i], s)) return 100 + i;
    if (*n >= 128 || strlen(s) >= 8) return -1;
    strcpy(names[*n], s);
    return 100 + (*n)++;
}

static void test_cmudict_hand(void) {
    FILE *f = fopen("../data/g2p/cmudict-sample.dict", "r");
    EXPECT(f, "cannot open ../data/g2p/cmudict-sample.dict");
    if (!f) return;
    attend_dataset *d = NULL;
    attend_error err;
    attend_dataset_create(&d, &err);
    static char words[4000][40];
    static char names[128][8];
    int nw = 0, nph = 0;
    char line[512];
    while (fgets(line, sizeof line, f) && nw < 4000) {
        if (!strncmp(line, ";;;", 3)) continue;
        char *tok = strtok(line, " \t\r\n");
        if (!tok || strchr(tok, '(') || strlen(tok) >= 40) continue;
        int32_t src[40], tgt[40];
        int sl = 0, tl = 0;
        for (const char *c = tok; *c; c++) src[sl++] = (unsigned char)*c;
        while ((tok = strtok(NULL, " \t\r\n")) && tl < 40) tgt[tl++] = phone_id(names, &nph, tok);
        if (tl == 0) continue;
        strcpy(words[nw], line);
        EXPECT(attend_dataset_add(d, src, sl, tgt, tl, &err) == ATTEND_OK, "%s", err.msg);
        nw++;
    }
    fclose(f);
    for (int two = 1; two >= 0; two--) {
        attend_m2m_options o = {2, 2, 1, 10, 1L << 17, two};
        attend_m2m_result r;
        EXPECT(attend_m2m_align(d, &o, &r, &err) == ATTEND_OK, "%s", err.msg);
        printf("  CMUdict sample: %d words, %d unaligned, %ld substring pairs, %ld links\n", r.pairs, r.unaligned,
               r.substring_pairs, r.links);
        /* the hand-aligned words */
        FILE *h = fopen("../data/g2p/hand-alignments.tsv", "r");
        EXPECT(h, "cannot open ../data/g2p/hand-alignments.tsv");
        attend_alignment_counts c = {0, 0, 0};
        int n_hand = 0, exact = 0;
        while (h && fgets(line, sizeof line, h)) {
            char *w = strtok(line, "\t"), *ph = strtok(NULL, "\t"), *ln = strtok(NULL, "\t\r\n");
            if (!w || !ph || !ln) continue;
            char *dst = w; /* the letters without their spaces */
            for (const char *q = w; *q; q++)
                if (*q != ' ') *dst++ = *q;
            *dst = 0;
            int idx = -1;
            for (int i = 0; i < nw && idx < 0; i++)
                if (!strcmp(words[i], w)) idx = i;
            EXPECT(idx >= 0, "hand word %s not in the sample", w);
            if (idx < 0) continue;
            int32_t ref[80];
            int nr = 0;
            for (char *q = strtok(ln, " "); q && nr < 40; q = strtok(NULL, " ")) {
                int a, b;
                if (sscanf(q, "%d-%d", &a, &b) == 2) ref[2 * nr] = a, ref[2 * nr + 1] = b, nr++;
            }
            const int32_t *links;
            int n;
            attend_dataset_get_alignment(d, idx, &links, &n, &err);
            attend_alignment_counts one = {0, 0, 0};
            attend_alignment_count(ref, nr, links, n > 0 ? n : 0, &one, &err);
            attend_alignment_count(ref, nr, links, n > 0 ? n : 0, &c, &err);
            exact += one.both == one.ref && one.both == one.hyp;
            n_hand++;
    }
    if (h) fclose(h);
    double p, rc, f1, aer;
    attend_alignment_scores(&c, &p, &rc, &f1, &aer);
    printf("  EM (up to 2-2%s, deletions, 10 iterations) against %d hand-aligned words: precision %.4f recall %.4f "
           "F1 %.4f AER %.4f, %d words exactly as by hand\n", two ? " with 2-2 pairs" : ", no 2-2 pairs", n_hand, p,
           rc, f1, aer, exact);
    EXPECT(n_hand == 64, "%d hand words read", n_hand);
    if (!two) EXPECT(f1 >= M2M_HAND_F1_FLOOR, "F1 %.4f below the floor %.2f", f1, M2M_HAND_F1_FLOOR);
    else EXPECT(f1 < M2M_HAND_F1_FLOOR, "with 2-2 pairs F1 %.4f: no longer below the default's floor", f1);
    }
    attend_dataset_free(d);
}

/* -------------------------------------------------------- attention links */

static void test_links_and_scores(void) {
    /* rows frozen to the permutation 2 0 3 1 (step t reads position perm[t]) */
    enum { T = 4, S = 4 };
    const int perm[T] = {2, 0, 3, 1};
    attend_real w[T * S];
    for (int t = 0; t < T; t++)
        for (int j = 0; j < S; j++) w[t * S + j] = j == perm[t] ? 0.7f : 0.1f;
    int32_t links[2 * T * S];
    int n;
    attend_error err;
    EXPECT(attend_attention_links(w, T, S, 0, links, T * S, &n, &err) == ATTEND_OK && n == T, "%s", err.msg);
    for (int t = 0; t < T && n == T; t++)
        EXPECT(links[2 * t] == perm[t] && links[2 * t + 1] == t, "step %d: link %d-%d", t, links[2 * t],
               links[2 * t + 1]);
    /* against the reference 2-0 0-1 1-2 3-3 (two of four agree): P = R = F1 = 1/2, AER = 1/2 */
    const int32_t ref[8] = {2, 0, 0, 1, 1, 2, 3, 3};
    attend_alignment_counts c = {0, 0, 0};
    EXPECT(attend_alignment_count(ref, 4, links, n, &c, &err) == ATTEND_OK, "%s", err.msg);
    double got[4], want[4] = {0.5, 0.5, 0.5, 0.5};
    attend_alignment_scores(&c, &got[0], &got[1], &got[2], &got[3]);
    EXPECT_CLOSE("permutation vs reference: P, R, F1, AER", got, want, 4, 1e-15, 0);
    /* threshold 0.05: every cell (16 links), 4 of them in the reference */
    EXPECT(attend_attention_links(w, T, S, 0.05, links, T * S, &n, &err) == ATTEND_OK && n == 16, "%d", n);
    attend_alignment_counts c2 = {0, 0, 0};
    attend_alignment_count(ref, 4, links, n, &c2, &err);
    double want2[4] = {0.25, 1, 0.4, 0.6};
    attend_alignment_scores(&c2, &got[0], &got[1], &got[2], &got[3]);
    EXPECT_CLOSE("all cells vs reference: P, R, F1, AER", got, want2, 4, 1e-15, 0);
    /* errors */
    EXPECT(attend_attention_links(w, T, S, 0, links, 3, &n, &err) == ATTEND_ERR_CAPACITY && strstr(err.msg, "cap=3"),
           "%s", err.msg);
    EXPECT(attend_attention_links(w, T, S, 1.5, links, 16, &n, &err) == ATTEND_ERR_ARG, "%s", err.msg);
    w[5] = NAN;
    EXPECT(attend_attention_links(w, T, S, 0, links, 16, &n, &err) == ATTEND_ERR_NONFINITE &&
               strstr(err.msg, "w[1,1]"), "%s", err.msg);
    attend_dataset *d = NULL;
    attend_dataset_create(&d, &err);
    attend_m2m_options bad = {3, 2, 1, 10, 4096, 0};
    EXPECT(attend_m2m_align(d, &bad, NULL, &err) == ATTEND_ERR_ARG && strstr(err.msg, "max_src=3"), "%s", err.msg);
    int32_t s1[5] = {1, 2, 3, 4, 5}, t1[5] = {6, 7, 8, 9, 10};
    attend_dataset_add(d, s1, 5, t1, 5, &err);
    attend_m2m_options tiny = {2, 2, 1, 2, 16, 0};
    EXPECT(attend_m2m_align(d, &tiny, NULL, &err) == ATTEND_ERR_CAPACITY && strstr(err.msg, "capacity"), "%s",
           err.msg);
    attend_dataset_free(d);
}

int main(void) {
    RUN(test_planted);
    RUN(test_cmudict_hand);
    RUN(test_links_and_scores);
    return harness_summary();
}
