/*
 * sparsemax.c — the sparse normalisers of attention: masked sparsemax
 * (Martins & Astudillo 2016) and masked 1.5-entmax (Peters, Niculae &
 * Martins 2019), forward and backward, and the dispatch over every
 * normaliser (softmax from softmax.c) that the attention kernel and the
 * decoders call.
 *
 * Both maps project a row of scores z onto the probability simplex and leave
 * exact zeros:
 *   sparsemax  w = max(z − τ, 0),     τ such that Σ w = 1
 *   entmax15   w = max(z/2 − τ, 0)²,  τ such that Σ w = 1
 * τ comes from the papers' exact sort-based algorithms over the kept
 * positions, sorted in decreasing order z_(1) ≥ … ≥ z_(n):
 *   sparsemax (Martins & Astudillo, Algorithm 1): k* = max{k : 1 + k z_(k) >
 *     Σ_{i≤k} z_(i)}, τ = (Σ_{i≤k*} z_(i) − 1) / k*
 *   entmax15 (Peters et al., Algorithm 2 with α = 1.5, on x = z/2): for each
 *     k, with the mean μ_k and the sum of squared deviations ss_k of the top k,
 *     τ_k = μ_k − sqrt(max(0, (1 − ss_k) / k)); the support size k* is the
 *     number of k with τ_k ≤ x_(k), and τ = τ_k*.
 * The sort runs in the output row (the kept scores are copied there, sorted,
 * and then overwritten by the weights), so no scratch memory is needed; sums
 * are taken in double.
 *
 * Dimension letters: N batch, T query positions, S source positions; G rows
 * of [T,S] (N, or N*H). Row-major, last index contiguous. Backward functions
 * accumulate (+=) into gradients.
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "core/softmax.h"
#include "core/sparsemax.h"

static int position_kept(const uint8_t *vrow, const uint8_t *arow, int causal, int t, int j) {
    return (!vrow || vrow[j]) && (!arow || arow[j]) && (!causal || j <= t);
}

/* The min-heap property restored below root in a [0, n). */
static void sift_down(attend_real *a, int root, int n) {
    for (;;) {
        int c = 2 * root + 1;
        if (c >= n) return;
        if (c + 1 < n && a[c + 1] < a[c]) c++;
        if (!(a[c] < a[root])) return;
        attend_real x = a[root];
        a[root] = a[c];
        a[c] = x;
        root = c;
    }
}

/* a [n] sorted in decreasing order in place: insertion sort for short rows,
 * heap sort (O(n log n), no recursion, no scratch) for long ones. */
static void sort_decreasing(attend_real *a, int n) {
    if (n <= 32) {
        for (int i = 1; i < n; i++) {
            attend_real x = a[i];
            int j = i - 1;
            while (j >= 0 && a[j] < x) {
                a[j + 1] = a[j];
                j--;
            }
            a[j + 1] = x;
        }
        return;
    }
    /* a min-heap, then the minimum moved to the end repeatedly: decreasing order */
    for (int root = n / 2 - 1; root >= 0; root--) sift_down(a, root, n);
    for (int end = n - 1; end > 0; end--) {
        attend_real x = a[0];
        a[0] = a[end];
        a[end] = x;
        sift_down(a, 0, end);
    }
}

double at_sparsemax_tau_sorted(const attend_real *zs, int n, int *support) {
    // zs [n] sorted decreasing
    /* k* = max{k : 1 + k z_(k) > Σ_{i≤k} z_(i)}; the condition holds for a
     * prefix of k (k = 1 always: 1 + z_(1) > z_(1)) */
    double cum = 0, cum_star = (double)zs[0];
    int k_star = 1;
    for (int k = 1; k <= n; k++) {
        cum += (double)zs[k - 1];
        if (1.0 + (double)k * (double)zs[k - 1] > cum) {
            k_star = k;
            cum_star = cum;
        }
    }
    if (support) *support = k_star;
    return (cum_star - 1.0) / k_star;
}

double at_entmax15_tau_sorted(const attend_real *zs, int n, int *support) {
    // zs [n] sorted decreasing; τ is on the halved, max-shifted scores x = (z − z_(1)) / 2
    const double top = (double)zs[0];
    double mean = 0, m2 = 0, tau_star = 0;
    int k_star = 0;
    for (int k = 1; k <= n; k++) {
        double x = ((double)zs[k - 1] - top) * 0.5;
        /* Welford: the mean and the sum of squared deviations of the top k */
        double d = x - mean;
        mean += d / k;
        m2 += d * (x - mean);
        double delta = (1.0 - m2) / k;
        double tau = mean - sqrt(delta > 0 ? delta : 0);
        if (tau <= x) {
            k_star = k;
            tau_star = tau;
        }
    }
    if (support) *support = k_star;
    return tau_star + top * 0.5; /* back to the halved scores z/2 */
}

/* One row: s [S] scores, o [S] out (distinct), kept positions by the masks.
 * The row keeps at least one position (validated by the caller). */
static void sparse_row(int normalizer, attend_real *restrict o, const attend_real *restrict s, const uint8_t *vrow,
                       const uint8_t *arow, int causal, int t, int S) {
    int n = 0;
    for (int j = 0; j < S; j++)
        if (position_kept(vrow, arow, causal, t, j)) o[n++] = s[j];
    sort_decreasing(o, n);
    if (normalizer == ATTEND_NORMALIZER_SPARSEMAX) {
        const double tau = at_sparsemax_tau_sorted(o, n, NULL);
        for (int j = 0; j < S; j++) {
            double z = (double)s[j];
            o[j] = position_kept(vrow, arow, causal, t, j) && z > tau ? (attend_real)(z - tau) : 0;
        }
    } else {
        const double tau = at_entmax15_tau_sorted(o, n, NULL);
        for (int j = 0; j < S; j++) {
            double x = (double)s[j] * 0.5 - tau;
            o[j] = position_kept(vrow, arow, causal, t, j) && x > 0 ? (attend_real)(x * x) : 0;
        }
    }
}

static void sparse_rows(int normalizer, attend_real *out, const attend_real *scores, const uint8_t *valid,
                        const uint8_t *allowed, int causal, int g0, int g1, int T, int S, int mask_div) {
    // out [G,T,S], scores [G,T,S], valid [G/mask_div,S] or NULL, allowed [T,S] or NULL
    for (int g = g0; g < g1; g++) {
        const uint8_t *vrow = valid ? valid + (size_t)(g / mask_div) * S : NULL;
        for (int t = 0; t < T; t++) {
            const uint8_t *arow = allowed ? allowed + (size_t)t * S : NULL;
            sparse_row(normalizer, out + ((size_t)g * T + t) * S, scores + ((size_t)g * T + t) * S, vrow, arow,
                       causal, t, S);
        }
    }
}

/* One sparse normalization's rows (at_parallel_rows' chunks): [lo,hi) of the
 * G groups forward, of the rows backward. */
typedef struct {
    int normalizer;
    attend_real *out;
    const attend_real *scores;
    const uint8_t *valid, *allowed;
    int causal, T, S, mask_div;
    attend_real *dscores;
    const attend_real *dweights, *weights;
} sparse_job;

static void sparse_rows_chunk(void *p, int lo, int hi) {
    const sparse_job *j = p;
    sparse_rows(j->normalizer, j->out, j->scores, j->valid, j->allowed, j->causal, lo, hi, j->T, j->S, j->mask_div);
}

void at_masked_normalize_forward(int normalizer, attend_real *out, const attend_real *scores, const uint8_t *valid,
                                 const uint8_t *allowed, int causal, int G, int T, int S, int mask_div) {
    // out [G,T,S] (not scores), scores [G,T,S], valid [G/mask_div,S] or NULL, allowed [T,S] or NULL
    if (normalizer == ATTEND_NORMALIZER_SOFTMAX) {
        at_masked_softmax_forward(out, scores, valid, allowed, causal, G, T, S, mask_div, 0);
        return;
    }
    /* over disjoint groups of rows per thread */
    sparse_job j = {normalizer, out, scores, valid, allowed, causal, T, S, mask_div, NULL, NULL, NULL};
    at_parallel_rows((double)G * T * S * 24, G, 1, sparse_rows_chunk, &j);
}

static void sparse_backward_rows(int normalizer, attend_real *restrict dscores, const attend_real *restrict dweights,
                                 const attend_real *restrict weights, size_t rows, int S) {
    // dscores [rows,S] +=, dweights [rows,S], weights [rows,S]
    for (size_t r = 0; r < rows; r++) {
        const attend_real *w = weights + r * S, *dw = dweights + r * S;
        attend_real *ds = dscores + r * S;
        if (normalizer == ATTEND_NORMALIZER_SPARSEMAX) {
            /* forward: w = max(z − τ, 0), τ = (Σ_{support} z − 1) / |support|
             *   ⇒ ds_j = dw_j − mean_{support} dw on the support, 0 elsewhere */
            double sum = 0;
            int k = 0;
            for (int j = 0; j < S; j++)
                if (w[j] > 0) {
                    sum += (double)dw[j];
                    k++;
                }
            if (!k) continue;
            const double mean = sum / k;
            for (int j = 0; j < S; j++)
                if (w[j] > 0) ds[j] += (attend_real)((double)dw[j] - mean);
        } else {
            /* forward: w = max(z/2 − τ, 0)², Σ w = 1; with s = sqrt(w):
             *   ∂w_i/∂z_j = s_i δ_ij − s_i s_j / Σ s  ⇒  ds = s ⊙ dw − (Σ s dw / Σ s) s */
            double ssum = 0, sg = 0;
            for (int j = 0; j < S; j++)
                if (w[j] > 0) {
                    double sj = sqrt((double)w[j]);
                    ssum += sj;
                    sg += sj * (double)dw[j];
                }
            if (!(ssum > 0)) continue;
            const double q = sg / ssum;
            for (int j = 0; j < S; j++)
                if (w[j] > 0) {
                    double sj = sqrt((double)w[j]);
                    ds[j] += (attend_real)(sj * (double)dw[j] - q * sj);
                }
        }
    }
}

static void sparse_backward_chunk(void *p, int lo, int hi) {
    const sparse_job *j = p;
    const size_t o = (size_t)lo * j->S;
    sparse_backward_rows(j->normalizer, j->dscores + o, j->dweights + o, j->weights + o, (size_t)(hi - lo), j->S);
}

void at_normalize_backward(int normalizer, attend_real *dscores, const attend_real *dweights,
                           const attend_real *weights, size_t rows, int S) {
    // dscores [rows,S] +=, dweights [rows,S], weights [rows,S]
    if (normalizer == ATTEND_NORMALIZER_SOFTMAX) {
        at_softmax_backward(dscores, dweights, weights, rows, S);
        return;
    }
    sparse_job j = {normalizer, NULL, NULL, NULL, NULL, 0, 0, S, 0, dscores, dweights, weights};
    at_parallel_rows((double)rows * S * 6, (int)rows, 1, sparse_backward_chunk, &j);
}

/* ----------------------------------------------------------- checked forms */

static const char *normalizer_label(attend_normalizer normalizer) {
    switch (normalizer) {
    case ATTEND_NORMALIZER_SOFTMAX: return "softmax";
    case ATTEND_NORMALIZER_SPARSEMAX: return "sparsemax";
    case ATTEND_NORMALIZER_ENTMAX15: return "entmax15";
    }
    return "unknown";
}

attend_status at_normalizer_check(attend_normalizer normalizer, const char *who, attend_error *err) {
    CHECK((unsigned)normalizer <= ATTEND_NORMALIZER_ENTMAX15, err, ATTEND_ERR_ARG,
          "%s: normalizer=%d is not softmax (0), sparsemax (1) or entmax15 (2)", who, (int)normalizer);
    return ATTEND_OK;
}

static attend_status normalize_forward(const char *who, attend_normalizer normalizer, attend_real *weights,
                                       const attend_real *scores, const uint8_t *valid, const uint8_t *allowed,
                                       int causal, int N, int T, int S, attend_error *err) {
    TRY(at_normalizer_check(normalizer, who, err));
    CHECK(weights && scores, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !weights ? "weights [N,T,S]" : "scores [N,T,S]");
    TRY(at_attention_check_dims(who, err, N, T, S, 1));
    CHECK(weights != scores, err, ATTEND_ERR_ARG,
          "%s: weights and scores are the same array; %s needs them distinct", who, normalizer_label(normalizer));
    TRY(at_masked_softmax_check(scores, valid, allowed, causal, N, T, S, 1, who, err));
    at_masked_normalize_forward((int)normalizer, weights, scores, valid, allowed, causal, N, T, S, 1);
    return at_ok(err);
}

static attend_status normalize_backward(const char *who, attend_normalizer normalizer, attend_real *dscores,
                                        const attend_real *dweights, const attend_real *weights, int N, int T,
                                        int S, attend_error *err) {
    TRY(at_normalizer_check(normalizer, who, err));
    CHECK(dscores && dweights && weights, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !dscores ? "dscores [N,T,S]" : !dweights ? "dweights [N,T,S]" : "weights [N,T,S]");
    TRY(at_attention_check_dims(who, err, N, T, S, 1));
    at_normalize_backward((int)normalizer, dscores, dweights, weights, (size_t)N * T, S);
    return at_ok(err);
}

attend_status attend_masked_normalize_forward(attend_normalizer normalizer, attend_real *weights,
                                              const attend_real *scores, const uint8_t *valid,
                                              const uint8_t *allowed, int causal, int N, int T, int S,
                                              attend_error *err) {
    return normalize_forward("attend_masked_normalize_forward", normalizer, weights, scores, valid, allowed, causal,
                             N, T, S, err);
}

attend_status attend_masked_normalize_backward(attend_normalizer normalizer, attend_real *dscores,
                                               const attend_real *dweights, const attend_real *weights,
                                               int N, int T, int S, attend_error *err) {
    return normalize_backward("attend_masked_normalize_backward", normalizer, dscores, dweights, weights, N, T, S,
                              err);
}

attend_status attend_masked_sparsemax_forward(attend_real *weights, const attend_real *scores,
                                              const uint8_t *valid, const uint8_t *allowed, int causal,
                                              int N, int T, int S, attend_error *err) {
    return normalize_forward("attend_masked_sparsemax_forward", ATTEND_NORMALIZER_SPARSEMAX, weights, scores, valid,
                             allowed, causal, N, T, S, err);
}

attend_status attend_masked_sparsemax_backward(attend_real *dscores, const attend_real *dweights,
                                               const attend_real *weights, int N, int T, int S,
                                               attend_error *err) {
    return normalize_backward("attend_masked_sparsemax_backward", ATTEND_NORMALIZER_SPARSEMAX, dscores, dweights,
                              weights, N, T, S, err);
}

attend_status attend_masked_entmax15_forward(attend_real *weights, const attend_real *scores,
                                             const uint8_t *valid, const uint8_t *allowed, int causal,
                                             int N, int T, int S, attend_error *err) {
    return normalize_forward("attend_masked_entmax15_forward", ATTEND_NORMALIZER_ENTMAX15, weights, scores, valid,
                             allowed, causal, N, T, S, err);
}

attend_status attend_masked_entmax15_backward(attend_real *dscores, const attend_real *dweights,
                                              const attend_real *weights, int N, int T, int S,
                                              attend_error *err) {
    return normalize_backward("attend_masked_entmax15_backward", ATTEND_NORMALIZER_ENTMAX15, dscores, dweights,
                              weights, N, T, S, err);
}

double attend_normalizer_threshold(attend_normalizer normalizer, const attend_real *z, int S, int *support) {
    if (support) *support = 0;
    if (!z || S < 1 || (unsigned)normalizer > ATTEND_NORMALIZER_ENTMAX15) return NAN;
    double mx = -INFINITY;
    for (int j = 0; j < S; j++) {
        if (!isfinite(z[j])) return NAN;
        if (z[j] > mx) mx = z[j];
    }
    if (normalizer == ATTEND_NORMALIZER_SOFTMAX) {
        double sum = 0;
        for (int j = 0; j < S; j++) sum += exp((double)z[j] - mx);
        if (support) /* the weights that are not exactly 0 in attend_real */
            for (int j = 0; j < S; j++) *support += (attend_real)exp((double)z[j] - mx - log(sum)) > 0;
        return mx + log(sum);
    }
    attend_real buf[256]; /* a sorted copy: explanations and tests pass short rows */
    if (S > 256) return NAN;
    memcpy(buf, z, (size_t)S * sizeof *buf);
    sort_decreasing(buf, S);
    return normalizer == ATTEND_NORMALIZER_SPARSEMAX ? at_sparsemax_tau_sorted(buf, S, support)
                                                    : at_entmax15_tau_sorted(buf, S, support);
}
