/*
 * rescore.c — n-best rescoring with another model (issue 14 part 6):
 * each hypothesis's length-normalised forced log-probability
 * (attend_model_score / (length + 1)), optionally of the reversed hypothesis
 * (a right-to-left model).
 */
#include <stdlib.h>

#include "internal.h"

attend_status attend_model_rescore(attend_model *m, const int32_t *src, int S, const int32_t *hyp,
                                   const int32_t *hyp_len, int n, int max_len, int reverse, double *score,
                                   attend_error *err) {
    const char *who = "attend_model_rescore";
    CHECK(m && src && hyp && hyp_len && score, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !m ? "model" : !src ? "src [S]" : !hyp ? "hyp [n,max_len]" : !hyp_len ? "hyp_len [n]" : "score [n]");
    const attend_model_config *c = attend_model_get_config(m);
    CHECK(c->decoder != ATTEND_DECODER_POINTER, err, ATTEND_ERR_ARG, "%s: a pointer model scores positions, not target tokens", who);
    CHECK(n >= 0 && max_len >= 1, err, ATTEND_ERR_ARG, "%s: n=%d, max_len=%d (want n >= 0, max_len >= 1)", who, n,
          max_len);
    CHECK(reverse == 0 || reverse == 1, err, ATTEND_ERR_ARG, "%s: reverse=%d must be 0 or 1", who, reverse);
    for (int i = 0; i < n; i++)
        CHECK(hyp_len[i] >= 0 && hyp_len[i] <= max_len, err, ATTEND_ERR_ARG,
              "%s: hypothesis %d has length %d outside [0, max_len=%d]", who, i, (int)hyp_len[i], max_len);
    int32_t *rev = NULL;
    if (reverse) {
        rev = malloc((size_t)max_len * sizeof *rev);
        CHECK(rev, err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    }
    attend_status st = ATTEND_OK;
    attend_error inner = {0};
    int i = 0;
    for (; i < n; i++) {
        const int32_t *h = hyp + (size_t)i * max_len;
        int T = hyp_len[i];
        if (reverse) {
            for (int t = 0; t < T; t++) rev[t] = h[T - 1 - t];
            h = rev;
        }
        double lp = 0;
        st = attend_model_score(m, src, S, h, T, &lp, NULL, &inner);
        if (st != ATTEND_OK) break;
        score[i] = lp / (double)(T + 1);
    }
    free(rev);
    if (st != ATTEND_OK) return at_fail(err, st, "%s: hypothesis %d: %s", who, i, inner.msg);
    return at_ok(err);
}
