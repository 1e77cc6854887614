/*
 * softmax.c — the masked softmax (key padding, allowed-position masks,
 * causal) forward and backward, shared by soft attention, multi-head
 * attention and the pointer distribution. Moved out of attention.c.
 *
 * Dimension letters: N batch, T query positions, S source positions; G rows
 * of [T,S] (N, or N*H for multi-head). Row-major, last index contiguous.
 * Backward functions accumulate (+=) into gradients.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "internal.h"
#include "core/softmax.h"
#include "core/vmath.h"

/* Every batch/position count >= 1, and every product that reaches a GEMM as
 * an int or indexes an array stays in range: the shape checks of every
 * attention kernel (declared in attention.h; defined here, below attention.c,
 * so that the two files do not call each other). */
attend_status at_attention_check_dims(const char *who, attend_error *err, int N, int T, int S, int D) {
    CHECK(N >= 1, err, ATTEND_ERR_SHAPE, "%s: batch size N=%d, must be >= 1", who, N);
    CHECK(T >= 1, err, ATTEND_ERR_SHAPE, "%s: query length T=%d, must be >= 1", who, T);
    CHECK(S >= 1, err, ATTEND_ERR_SHAPE, "%s: source length S=%d, must be >= 1 (no saved state to read)", who, S);
    CHECK(D >= 1, err, ATTEND_ERR_SHAPE, "%s: width %d, must be >= 1", who, D);
    size_t n;
    CHECK(at_count(&n, 2, N, T) && n <= INT_MAX && at_count(&n, 2, N, S) && n <= INT_MAX &&
              at_count(&n, 4, N, T, S, D) && n <= SIZE_MAX / sizeof(attend_real),
          err, ATTEND_ERR_SHAPE, "%s: sizes N=%d T=%d S=%d width=%d overflow", who, N, T, S, D);
    return ATTEND_OK;
}

#ifdef ATTEND_DOUBLE
#define AT_REAL_LOWEST (-DBL_MAX)
#else
#define AT_REAL_LOWEST (-FLT_MAX)
#endif

/* -------------------------------------------------------- masked softmax */

/* One softmax row in place: o [S] holds the scores, -inf at excluded
 * positions (at least one is finite); writes the probabilities, exactly 0 at
 * the excluded ones (at_vexp gives 0 below ln FLT_MIN, -inf included). The
 * maximum is subtracted first (exp(0) = 1 bounds the sum below); the sum is
 * taken in the vector lanes over blocks of 256 positions and the block sums
 * in double. */
static AT_ALWAYS_INLINE void softmax_row(attend_real *restrict o, int S) {
    attend_real mx = AT_REAL_LOWEST;
#pragma omp simd reduction(max : mx)
    for (int j = 0; j < S; j++) mx = o[j] > mx ? o[j] : mx;
    double sum = 0;
    for (int j0 = 0; j0 < S; j0 += 256) {
        const int j1 = S - j0 > 256 ? j0 + 256 : S;
        attend_real part = 0;
#pragma omp simd reduction(+ : part)
        for (int j = j0; j < j1; j++) {
            attend_real e = at_vexp(o[j] - mx);
            o[j] = e;
            part += e;
        }
        sum += part;
    }
    const attend_real inv = (attend_real)(1.0 / sum);
#pragma omp simd
    for (int j = 0; j < S; j++) o[j] *= inv;
}

static int position_included(const uint8_t *vrow, const uint8_t *arow, int causal, int t, int j) {
    return (!vrow || vrow[j]) && (!arow || arow[j]) && (!causal || j <= t);
}

/* Pass 2 of at_masked_softmax for groups [g0, g1): max-subtracted
 * exponentials over the included positions only (rows already validated). */
AT_KERNEL_VOID(static, masked_softmax_rows,
               (attend_real *out, const attend_real *scores, const uint8_t *valid, const uint8_t *allowed,
                int causal, int g0, int g1, int T, int S, int mask_div, int log_out),
               (out, scores, valid, allowed, causal, g0, g1, T, S, mask_div, log_out)) {
    // out [G,T,S], scores [G,T,S], valid [G/mask_div,S] or NULL, allowed [T,S] or NULL
    for (int g = g0; g < g1; g++) {
        int n = g / mask_div;
        const uint8_t *vrow = valid ? valid + (size_t)n * S : NULL;
        for (int t = 0; t < T; t++) {
            const uint8_t *arow = allowed ? allowed + (size_t)t * S : NULL;
            const attend_real *s = scores + ((size_t)g * T + t) * S;
            attend_real *o = out + ((size_t)g * T + t) * S;
            if (!log_out) {
                /* excluded positions as -inf, then one vectorized pass over the row */
                if (!vrow && !arow && !causal) {
                    if (o != s) memcpy(o, s, (size_t)S * sizeof *o);
                } else if (!arow && !causal) { /* key padding only (a decoder step) */
#pragma omp simd
                    for (int j = 0; j < S; j++) o[j] = at_vsel(vrow[j] != 0, s[j], -INFINITY);
                } else {
                    for (int j = 0; j < S; j++) o[j] = position_included(vrow, arow, causal, t, j) ? s[j] : -INFINITY;
                }
                softmax_row(o, S);
                continue;
            }
            attend_real mx = AT_REAL_LOWEST;
            for (int j = 0; j < S; j++)
                if (position_included(vrow, arow, causal, t, j) && s[j] > mx) mx = s[j];
            double sum = 0;
            for (int j = 0; j < S; j++) {
                if (position_included(vrow, arow, causal, t, j)) {
                    /* difference in double: s - mx cannot overflow for finite s */
                    attend_real e = (attend_real)exp((double)s[j] - (double)mx);
                    o[j] = e;
                    sum += e;
                } else {
                    o[j] = 0;
                }
            }
            /* log-probabilities; sum >= 1: the maximum contributes exp(0) = 1 */
            double lse = log(sum);
            for (int j = 0; j < S; j++) {
                if (!position_included(vrow, arow, causal, t, j)) {
                    o[j] = -INFINITY;
                } else {
                    double lp = (double)s[j] - (double)mx - lse;
                    o[j] = lp < (double)AT_REAL_LOWEST ? AT_REAL_LOWEST : (attend_real)lp;
                }
            }
        }
    }
}

/* The first row r = g*T + t in [r0, r1) with no included position or a
 * non-finite score at an included one; -1 if none. */
AT_KERNEL(static, long, first_bad_row,
          (const attend_real *scores, const uint8_t *valid, const uint8_t *allowed, int causal, size_t r0,
           size_t r1, int T, int S, int mask_div),
          (scores, valid, allowed, causal, r0, r1, T, S, mask_div)) {
    // scores [G*T,S], valid [G/mask_div,S] or NULL, allowed [T,S] or NULL
    for (size_t r = r0; r < r1; r++) {
        const int g = (int)(r / T), t = (int)(r % T);
        const uint8_t *vrow = valid ? valid + (size_t)(g / mask_div) * S : NULL;
        const uint8_t *arow = allowed ? allowed + (size_t)t * S : NULL;
        const attend_real *s = scores + r * S;
        int included = 0, finite = 1;
        if (!vrow && !arow && !causal) {
            attend_real acc = 0; /* NaN or ±inf anywhere makes the sum s·0 NaN */
#pragma omp simd reduction(+ : acc)
            for (int j = 0; j < S; j++) acc += s[j] * 0;
            included = S;
            finite = acc == 0;
        } else if (!arow && !causal) { /* key padding only (a decoder step) */
            attend_real acc = 0;
#pragma omp simd reduction(+ : acc) reduction(+ : included)
            for (int j = 0; j < S; j++) {
                included += vrow[j] != 0;
                acc += at_vsel(vrow[j] != 0, s[j] * 0, 0);
            }
            finite = acc == 0;
        } else {
            for (int j = 0; j < S; j++) {
                if (!position_included(vrow, arow, causal, t, j)) continue;
                included++;
                if (!isfinite(s[j])) finite = 0;
            }
        }
        if (!included || !finite) return (long)r;
    }
    return -1;
}

/* The arguments of one masked softmax (or its check) for at_parallel_rows. */
typedef struct {
    attend_real *out;
    const attend_real *scores;
    const uint8_t *valid, *allowed;
    int causal, T, S, mask_div, log_out, blocks;
    size_t rows;
    long *bad; /* [blocks] the check's first bad row per block, -1 for none */
} softmax_job;

static void softmax_rows_chunk(void *p, int lo, int hi) {
    const softmax_job *j = p;
    masked_softmax_rows(j->out, j->scores, j->valid, j->allowed, j->causal, lo, hi, j->T, j->S, j->mask_div,
                        j->log_out);
}

static void softmax_check_chunk(void *p, int lo, int hi) {
    const softmax_job *j = p;
    for (int b = lo; b < hi; b++)
        j->bad[b] = first_bad_row(j->scores, j->valid, j->allowed, j->causal, j->rows * b / j->blocks,
                                  j->rows * (b + 1) / j->blocks, j->T, j->S, j->mask_div);
}

void at_masked_softmax_forward(attend_real *out, const attend_real *scores, const uint8_t *valid,
                               const uint8_t *allowed, int causal, int G, int T, int S, int mask_div, int log_out) {
    // out [G,T,S], scores [G,T,S], valid [G/mask_div,S] or NULL, allowed [T,S] or NULL
    /* over disjoint groups of rows per chunk */
    softmax_job job = {out, scores, valid, allowed, causal, T, S, mask_div, log_out, 0, 0, NULL};
    at_parallel_rows((double)G * T * S * 16, G, 1, softmax_rows_chunk, &job);
}

attend_status at_masked_softmax_check(const attend_real *scores, const uint8_t *valid, const uint8_t *allowed,
                                      int causal, int G, int T, int S, int mask_div, const char *who,
                                      attend_error *err) {
    /* Pass 1: validate every row before writing anything: blocks of rows in
     * parallel find their first bad row; the first one overall is reported. */
    const size_t rows = (size_t)G * T;
    int blocks = rows < 64 ? (int)rows : 64;
    long bad[64];
    softmax_job job = {NULL, scores, valid, allowed, causal, T, S, mask_div, 0, blocks, rows, bad};
    at_parallel_rows((double)rows * S * 2, blocks, 1, softmax_check_chunk, &job);
    for (int b = 0; b < blocks; b++) {
        if (bad[b] < 0) continue;
        const int g = (int)(bad[b] / T), t = (int)(bad[b] % T), n = g / mask_div;
        const uint8_t *vrow = valid ? valid + (size_t)n * S : NULL;
        const uint8_t *arow = allowed ? allowed + (size_t)t * S : NULL;
        const attend_real *s = scores + (size_t)bad[b] * S;
        int included = 0;
        for (int j = 0; j < S; j++) {
            if (!position_included(vrow, arow, causal, t, j)) continue;
            included++;
            CHECK(isfinite(s[j]), err, ATTEND_ERR_NONFINITE,
                  "%s: row (n=%d, t=%d): score at source position %d is %g; scores must be finite",
                  who, n, t, j, (double)s[j]);
        }
        CHECK(included > 0, err, ATTEND_ERR_MASKED_ROW,
              "%s: row (n=%d, t=%d): every source position is masked (S=%d%s%s%s); "
              "a weighted read needs at least one position",
              who, n, t, S, valid ? ", key padding mask" : "", allowed ? ", attention mask" : "",
              causal ? ", causal" : "");
    }
    return ATTEND_OK;
}

attend_status at_masked_softmax(attend_real *out, const attend_real *scores,
                                const uint8_t *valid, const uint8_t *allowed, int causal,
                                int G, int T, int S, int mask_div, int log_out,
                                const char *who, attend_error *err) {
    TRY(at_masked_softmax_check(scores, valid, allowed, causal, G, T, S, mask_div, who, err));
    /* Pass 2 */
    at_masked_softmax_forward(out, scores, valid, allowed, causal, G, T, S, mask_div, log_out);
    return at_ok(err);
}

AT_KERNEL_VOID(static, softmax_backward_rows,
               (attend_real *restrict dscores, const attend_real *restrict dweights,
                const attend_real *restrict weights, size_t rows, int S),
               (dscores, dweights, weights, rows, S)) {
    // dscores [rows,S] +=, dweights [rows,S], weights [rows,S]
    /* forward: w_j = exp(s_j) / Σ_k exp(s_k)  ⇒  ds_j = w_j (dw_j − Σ_k w_k dw_k) */
    for (size_t r = 0; r < rows; r++) {
        const attend_real *restrict w = weights + r * S, *restrict dw = dweights + r * S;
        attend_real *restrict ds = dscores + r * S;
        double dot = 0;
#pragma omp simd reduction(+ : dot)
        for (int j = 0; j < S; j++) dot += (double)w[j] * dw[j];
        const attend_real d = (attend_real)dot;
#pragma omp simd
        for (int j = 0; j < S; j++) ds[j] += w[j] * (dw[j] - d);
    }
}

typedef struct {
    attend_real *dscores;
    const attend_real *dweights, *weights;
    int S;
} softmax_bwd_job;

static void softmax_bwd_chunk(void *p, int lo, int hi) {
    const softmax_bwd_job *j = p;
    const size_t o = (size_t)lo * j->S;
    softmax_backward_rows(j->dscores + o, j->dweights + o, j->weights + o, (size_t)(hi - lo), j->S);
}

void at_softmax_backward(attend_real *dscores, const attend_real *dweights, const attend_real *weights, size_t rows,
                         int S) {
    // dscores [rows,S] +=, dweights [rows,S], weights [rows,S]
    softmax_bwd_job j = {dscores, dweights, weights, S};
    at_parallel_rows((double)rows * S * 4, (int)rows, 1, softmax_bwd_chunk, &j);
}

attend_status attend_masked_softmax_forward(attend_real *weights, const attend_real *scores,
                                            const uint8_t *valid, const uint8_t *allowed,
                                            int causal, int N, int T, int S, attend_error *err) {
    const char *who = "attend_masked_softmax_forward";
    CHECK(weights && scores, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !weights ? "weights [N,T,S]" : "scores [N,T,S]");
    TRY(at_attention_check_dims(who, err, N, T, S, 1));
    return at_masked_softmax(weights, scores, valid, allowed, causal, N, T, S, 1, 0, who, err);
}

attend_status attend_masked_softmax_backward(attend_real *dscores, const attend_real *dweights,
                                             const attend_real *weights, int N, int T, int S,
                                             attend_error *err) {
    const char *who = "attend_masked_softmax_backward";
    CHECK(dscores && dweights && weights, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !dscores ? "dscores [N,T,S]" : !dweights ? "dweights [N,T,S]" : "weights [N,T,S]");
    TRY(at_attention_check_dims(who, err, N, T, S, 1));
    at_softmax_backward(dscores, dweights, weights, (size_t)N * T, S);
    return at_ok(err);
}
