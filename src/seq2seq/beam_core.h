/*
 * beam_core.h — the bookkeeping of beam.c's one beam search (M scorers; one
 * model is M = 1): a finished hypothesis, a candidate continuation, the
 * top-2K list the candidates of one step are kept in, and the order of the
 * finished ones.
 * Not installed.
 */
#ifndef ATTEND_BEAM_CORE_H
#define ATTEND_BEAM_CORE_H

typedef struct {
    double logp; /* sum of token log-probabilities (EOS included when finished) */
    double norm; /* the score it is ranked by: logp / (len + 1)^alpha (+ a coverage penalty) */
    int len;     /* tokens, EOS excluded */
    int slot;    /* index into the finished storage */
} at_beam_finished;

typedef struct {
    double logp;
    int parent;
    int token;
} at_beam_candidate;

/* Offers the continuation (parent, token) with total log-probability lp to
 * the list cand [cap], kept sorted best first, *nc entries used: it enters
 * when the list has room or lp beats its last entry (ties keep the earlier). */
static inline void at_beam_offer(at_beam_candidate *cand, int *nc, int cap, double lp, int parent, int token) {
    if (*nc == cap && lp <= cand[*nc - 1].logp) return;
    int pos = *nc < cap ? (*nc)++ : *nc - 1;
    while (pos > 0 && cand[pos - 1].logp < lp) {
        cand[pos] = cand[pos - 1];
        pos--;
    }
    cand[pos].logp = lp;
    cand[pos].parent = parent;
    cand[pos].token = token;
}

/* qsort order of finished hypotheses: best norm first, then the earlier. */
static inline int at_beam_cmp_finished(const void *pa, const void *pb) {
    const at_beam_finished *a = pa, *b = pb;
    if (a->norm != b->norm) return a->norm > b->norm ? -1 : 1;
    return a->slot - b->slot;
}

#endif
