/*
 * batch.c — padded batches of (source, target) pairs for teacher forcing:
 * allocation at fixed capacities and filling from a dataset (target-vocabulary
 * decoders: BOS-shifted inputs, EOS-terminated outputs; pointing decoders:
 * previous positions, -1 at the start; the pairs' word alignments as a 0/1
 * mask per step and source position, for guided alignment).
 *
 * Dimension letters: see state.h.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

attend_status attend_batch_alloc(attend_batch *b, int cap_N, int cap_S, int cap_T, attend_error *err) {
    CHECK(b, err, ATTEND_ERR_NULL, "attend_batch_alloc: batch is NULL");
    memset(b, 0, sizeof *b);
    CHECK(cap_N >= 1 && cap_S >= 1 && cap_T >= 1, err, ATTEND_ERR_SHAPE,
          "attend_batch_alloc: capacities N=%d S=%d T=%d must be >= 1", cap_N, cap_S, cap_T);
    size_t ns, nt, total;
    CHECK(at_count(&ns, 2, cap_N, cap_S) && at_count(&nt, 2, cap_N, cap_T) &&
              at_add_size(ns, 2 * nt, &total) && at_add_size(total, 2 * (size_t)cap_N, &total) &&
              total <= SIZE_MAX / sizeof(int32_t),
          err, ATTEND_ERR_SHAPE, "attend_batch_alloc: sizes overflow");
    int32_t *mem = calloc(total, sizeof *mem);
    CHECK(mem, err, ATTEND_ERR_ALLOC, "attend_batch_alloc: out of memory");
    b->src = mem;
    b->src_len = b->src + ns;
    b->tgt_in = b->src_len + cap_N;
    b->tgt_out = b->tgt_in + nt;
    b->tgt_len = b->tgt_out + nt;
    b->cap_N = cap_N;
    b->cap_S = cap_S;
    b->cap_T = cap_T;
    return at_ok(err);
}

void attend_batch_release(attend_batch *b) {
    if (!b) return;
    free(b->src);
    free(b->align);
    memset(b, 0, sizeof *b);
}

attend_status attend_batch_fill(attend_batch *b, const attend_dataset *d, const int *idx, int n,
                                int pointer, attend_error *err) {
    const char *who = "attend_batch_fill";
    CHECK(b && d && idx, err, ATTEND_ERR_NULL, "%s: %s is NULL", who, !b ? "batch" : !d ? "dataset" : "idx");
    CHECK(b->src, err, ATTEND_ERR_ARG, "%s: batch is not allocated (attend_batch_alloc)", who);
    CHECK(n >= 1 && n <= b->cap_N, err, ATTEND_ERR_CAPACITY, "%s: %d rows, capacity is %d", who, n, b->cap_N);
    int S = 0, T = 0;
    for (int i = 0; i < n; i++) {
        const int32_t *src, *tgt;
        int sl, tl;
        TRY(attend_dataset_get(d, idx[i], &src, &sl, &tgt, &tl, err));
        if (sl > S) S = sl;
        if (tl + (pointer ? 0 : 1) > T) T = tl + (pointer ? 0 : 1);
    }
    CHECK(S <= b->cap_S, err, ATTEND_ERR_CAPACITY, "%s: a source has %d tokens, batch capacity is %d", who, S, b->cap_S);
    CHECK(T <= b->cap_T, err, ATTEND_ERR_CAPACITY, "%s: a target needs %d decoder steps, batch capacity is %d",
          who, T, b->cap_T);
    if (attend_dataset_aligned_pairs(d) > 0 && !b->align) {
        size_t bytes;
        CHECK(at_count(&bytes, 3, b->cap_N, b->cap_T, b->cap_S), err, ATTEND_ERR_SHAPE,
              "%s: alignment sizes overflow", who);
        b->align = calloc(bytes, 1);
        CHECK(b->align, err, ATTEND_ERR_ALLOC, "%s: out of memory for the alignments of %d x %d x %d", who,
              b->cap_N, b->cap_T, b->cap_S);
    }
    b->N = n;
    b->S = S;
    b->T = T;
    int32_t pad_out = pointer ? -1 : ATTEND_PAD;
    for (int i = 0; i < n; i++) {
        const int32_t *src, *tgt;
        int sl, tl;
        /* the first loop fetched the same pairs, so this cannot fail; src/io has no
         * unchecked accessor, so the status is propagated, not dropped. */
        TRY(attend_dataset_get(d, idx[i], &src, &sl, &tgt, &tl, err));
        int32_t *s = b->src + (size_t)i * S, *ti = b->tgt_in + (size_t)i * T, *to = b->tgt_out + (size_t)i * T;
        for (int j = 0; j < S; j++) s[j] = j < sl ? src[j] : ATTEND_PAD;
        b->src_len[i] = sl;
        if (!pointer) {
            ti[0] = ATTEND_BOS;
            for (int t = 0; t < T; t++) {
                if (t > 0) ti[t] = t - 1 < tl ? tgt[t - 1] : ATTEND_PAD;
                to[t] = t < tl ? tgt[t] : t == tl ? ATTEND_EOS : ATTEND_PAD;
            }
            b->tgt_len[i] = tl + 1;
        } else {
            for (int t = 0; t < T; t++) {
                ti[t] = t == 0 ? -1 : t - 1 < tl ? tgt[t - 1] : -1;
                to[t] = t < tl ? tgt[t] : pad_out;
            }
            b->tgt_len[i] = tl;
        }
        if (b->align) { /* link i-j: step j attends to position i */
            uint8_t *al = b->align + (size_t)i * T * S;
            const int32_t *links;
            int nl;
            memset(al, 0, (size_t)T * S);
            TRY(attend_dataset_get_alignment(d, idx[i], &links, &nl, err));
            for (int k = 0; k < nl; k++) al[(size_t)links[2 * k + 1] * S + links[2 * k]] = 1;
        }
    }
    return at_ok(err);
}

