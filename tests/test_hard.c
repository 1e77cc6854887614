/*
 * test_hard.c — hard attention (argmax, sampling, gather/scatter of the chosen
 * values) and the explicit RNG, float library.
 *
 * RNG worked values: splitmix64 seeding and xoshiro256** outputs for seeds 0
 * and 42, from a direct Python transcription of the reference algorithms
 * (Vigna's splitmix64.c and xoshiro256starstar.c); the seed-0 state also
 * matches splitmix64's widely published first outputs (0xe220a8397b1dcdaf, ...).
 *
 * Statistical checks use a fixed seed, so they are deterministic; their
 * tolerance is 5 standard errors, which a correct sampler would exceed with
 * probability < 1e-6 per check for a random seed.
 */
#include <stdint.h>
#include <stdlib.h>

#include "attend.h"
#include "harness.h"

/* ------------------------------------------------------------------ rng */

static void test_rng_reference_values(void) {
    attend_rng r;
    attend_rng_seed(&r, 0);
    const uint64_t s0[4] = {0xe220a8397b1dcdafULL, 0x6e789e6aa1b965f4ULL, 0x06c45d188009454fULL,
                            0xf88bb8a8724c81ecULL};
    for (int i = 0; i < 4; i++)
        EXPECT(r.s[i] == s0[i], "seed 0: state[%d] = %016llx, want %016llx", i,
               (unsigned long long)r.s[i], (unsigned long long)s0[i]);
    const uint64_t out0[4] = {0x99ec5f36cb75f2b4ULL, 0xbf6e1f784956452aULL, 0x1a5f849d4933e6e0ULL,
                              0x6aa594f1262d2d2cULL};
    for (int i = 0; i < 4; i++) {
        uint64_t x = attend_rng_next(&r);
        EXPECT(x == out0[i], "seed 0: output %d = %016llx, want %016llx", i, (unsigned long long)x,
               (unsigned long long)out0[i]);
    }
    attend_rng_seed(&r, 42);
    const uint64_t out42[2] = {0x15780b2e0c2ec716ULL, 0x6104d9866d113a7eULL};
    for (int i = 0; i < 2; i++) {
        uint64_t x = attend_rng_next(&r);
        EXPECT(x == out42[i], "seed 42: output %d = %016llx, want %016llx", i,
               (unsigned long long)x, (unsigned long long)out42[i]);
    }
    /* uniform = top 53 bits / 2^53: the third seed-42 draw */
    double u = attend_rng_uniform(&r);
    EXPECT(u == 0.6800434110281394, "seed 42: third uniform %.17g, want 0.6800434110281394", u);
}

static void test_rng_reproducible(void) {
    attend_rng a, b, c;
    attend_rng_seed(&a, 12345);
    attend_rng_seed(&b, 12345);
    attend_rng_seed(&c, 12346);
    int same = 1, differ = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = attend_rng_next(&a), y = attend_rng_next(&b), z = attend_rng_next(&c);
        same &= x == y;
        differ += x != z;
    }
    EXPECT(same, "same seed gave different sequences");
    EXPECT(differ >= 990, "seeds 12345 and 12346 agree on %d of 1000 outputs", 1000 - differ);
    /* re-seeding restarts the sequence */
    attend_rng_seed(&a, 7);
    uint64_t first = attend_rng_next(&a);
    attend_rng_next(&a);
    attend_rng_seed(&a, 7);
    EXPECT(attend_rng_next(&a) == first, "re-seeding did not restart the sequence");
    /* the state is all there is: a copy continues identically */
    attend_rng d = a;
    EXPECT(attend_rng_next(&d) == attend_rng_next(&a), "copied state diverged");
}

static void test_rng_uniform(void) {
    attend_rng r;
    attend_rng_seed(&r, 2024);
    enum { N = 1000000, BINS = 10 };
    long bins[BINS] = {0};
    double sum = 0, sumsq = 0;
    int in_range = 1, grid = 1;
    for (int i = 0; i < N; i++) {
        double u = attend_rng_uniform(&r);
        if (!(u >= 0.0 && u < 1.0)) in_range = 0;
        double scaled = u * 9007199254740992.0; /* 2^53: must be an integer */
        if (scaled != (double)(uint64_t)scaled) grid = 0;
        sum += u;
        sumsq += u * u;
        bins[(int)(u * BINS)]++;
    }
    EXPECT(in_range, "a uniform draw fell outside [0,1)");
    EXPECT(grid, "a uniform draw is not a multiple of 2^-53");
    /* mean 1/2 with standard error sqrt(1/12 / N) ≈ 2.9e-4; 5 of them */
    double mean = sum / N, var = sumsq / N - mean * mean;
    EXPECT_NEAR("uniform mean (5 s.e.)", mean, 0.5, 5 * sqrt(1.0 / 12 / N));
    /* variance 1/12; the s.e. of the sample variance is sqrt(1/180 / N) ≈ 7.5e-5 */
    EXPECT_NEAR("uniform variance (5 s.e.)", var, 1.0 / 12, 5 * sqrt(1.0 / 180 / N));
    /* each bin: Binomial(N, 0.1), s.d. sqrt(N·0.09) = 300 */
    double got[BINS], want[BINS];
    for (int i = 0; i < BINS; i++) {
        got[i] = (double)bins[i];
        want[i] = N / (double)BINS;
    }
    EXPECT_CLOSE("uniform: counts in 10 bins (5 s.d. = 1500)", got, want, BINS, 5 * sqrt(N * 0.09),
                 0);
    /* the extremes are reachable in principle: 0 maps to 0, never to 1 */
    attend_rng z = {{0, 0, 0, 0}};
    EXPECT(attend_rng_uniform(&z) == 0.0, "all-zero state should give 0");
}

/* --------------------------------------------------------------- argmax */

static void test_argmax(void) {
    /* N=2, T=3, S=4 */
    /* clang-format off */
    const float w[2 * 3 * 4] = {
        0.1f, 0.2f, 0.6f, 0.1f,          /* (0,0): 2 */
        0.4f, 0.1f, 0.1f, 0.4f,          /* (0,1): tie 0/3 → 0 */
        0.25f, 0.25f, 0.25f, 0.25f,      /* (0,2): all equal → 0 */
        0.0f, 0.3f, 0.3f, 0.4f,          /* (1,0): last → 3 */
        -INFINITY, -1.0f, -1.0f, -2.0f,  /* (1,1): negative, tie 1/2 → 1 */
        0.0f, 0.5f, 0.0f, 0.5f,          /* (1,2): tie 1/3 → 1 */
    };
    /* clang-format on */
    const int32_t want[6] = {2, 0, 0, 3, 1, 1};
    int32_t idx[6];
    memset(idx, 0x55, sizeof idx);
    attend_error err;
    EXPECT(attend_hard_argmax(idx, w, 2, 3, 4, &err) == ATTEND_OK, "%s", err.msg);
    for (int r = 0; r < 6; r++)
        EXPECT(idx[r] == want[r], "row %d: argmax %d, want %d", r, idx[r], want[r]);
    /* S = 1 */
    const float one[2] = {0.7f, 0.1f};
    EXPECT(attend_hard_argmax(idx, one, 2, 1, 1, &err) == ATTEND_OK && idx[0] == 0 && idx[1] == 0,
           "S=1: %d %d", idx[0], idx[1]);

    /* NaN anywhere → ATTEND_ERR_NONFINITE naming the row and position */
    float bad[2 * 3 * 4];
    memcpy(bad, w, sizeof bad);
    bad[(1 * 3 + 2) * 4 + 1] = NAN;
    memset(&err, 0, sizeof err);
    attend_status st = attend_hard_argmax(idx, bad, 2, 3, 4, &err);
    EXPECT(st == ATTEND_ERR_NONFINITE && err.status == st && strstr(err.msg, "n=1, t=2") &&
               strstr(err.msg, "position 1"),
           "NaN weight: %s \"%s\"", attend_status_name(st), err.msg);
    EXPECT(attend_hard_argmax(idx, bad, 2, 3, 4, NULL) == ATTEND_ERR_NONFINITE, "NaN, err NULL");
    /* a NaN that would never win still is an error (argmax is undefined) */
    memcpy(bad, w, sizeof bad);
    bad[0] = NAN;
    st = attend_hard_argmax(idx, bad, 2, 3, 4, &err);
    EXPECT(st == ATTEND_ERR_NONFINITE && strstr(err.msg, "n=0, t=0") &&
               strstr(err.msg, "position 0"),
           "NaN at position 0: %s \"%s\"", attend_status_name(st), err.msg);
}

/* --------------------------------------------------------------- sample */

static void test_sample_deterministic(void) {
    enum { N = 3, T = 4, S = 5 };
    float w[N * T * S];
    for (int r = 0; r < N * T; r++) {
        float sum = 0;
        for (int j = 0; j < S; j++) sum += w[r * S + j] = (float)(1 + (r * 3 + j * 7) % 5);
        for (int j = 0; j < S; j++) w[r * S + j] /= sum;
    }
    attend_rng a, b;
    int32_t ia[N * T], ib[N * T];
    attend_error err;
    int identical = 1, differ_any = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        attend_rng_seed(&a, seed);
        attend_rng_seed(&b, seed);
        EXPECT(attend_hard_sample(ia, w, &a, N, T, S, &err) == ATTEND_OK, "%s", err.msg);
        EXPECT(attend_hard_sample(ib, w, &b, N, T, S, &err) == ATTEND_OK, "%s", err.msg);
        identical &= !memcmp(ia, ib, sizeof ia) && !memcmp(&a, &b, sizeof a);
        attend_rng_seed(&b, seed + 1000);
        EXPECT(attend_hard_sample(ib, w, &b, N, T, S, &err) == ATTEND_OK, "%s", err.msg);
        differ_any |= memcmp(ia, ib, sizeof ia) != 0;
    }
    EXPECT(identical, "same seed gave different samples or states");
    EXPECT(differ_any, "different seeds never gave different samples");

    /* one uniform draw per row, inverse CDF: idx = first j with u·Σw < w_0 + ... + w_j */
    attend_rng_seed(&a, 99);
    attend_rng_seed(&b, 99);
    EXPECT(attend_hard_sample(ia, w, &a, N, T, S, &err) == ATTEND_OK, "%s", err.msg);
    int mismatch = 0;
    for (int r = 0; r < N * T; r++) {
        double sum = 0;
        for (int j = 0; j < S; j++) sum += w[r * S + j];
        double u = attend_rng_uniform(&b) * sum, acc = 0;
        int pick = S - 1;
        for (int j = 0; j < S; j++) {
            acc += w[r * S + j];
            if (u < acc) {
                pick = j;
                break;
            }
        }
        if (ia[r] != pick) mismatch++;
    }
    EXPECT(mismatch == 0, "%d rows differ from the inverse CDF of the rng's uniforms", mismatch);
    EXPECT(!memcmp(&a, &b, sizeof a), "hard_sample did not consume exactly one draw per row");
}

static void test_sample_frequencies(void) {
    /* 100000 rows of [0.2, 0.5, 0.3] in one call */
    enum { ROWS = 100000, S = 3 };
    const float p[S] = {0.2f, 0.5f, 0.3f};
    float *w = malloc(sizeof(float) * ROWS * S);
    int32_t *idx = malloc(sizeof(int32_t) * ROWS);
    if (!w || !idx) {
        EXPECT(0, "out of memory");
        free(w);
        free(idx);
        return;
    }
    for (int r = 0; r < ROWS; r++)
        for (int j = 0; j < S; j++) w[r * S + j] = p[j];
    attend_rng rng;
    attend_rng_seed(&rng, 777);
    attend_error err;
    EXPECT(attend_hard_sample(idx, w, &rng, 1000, ROWS / 1000, S, &err) == ATTEND_OK, "%s",
           err.msg);
    long count[S] = {0};
    int out_of_range = 0;
    for (int r = 0; r < ROWS; r++) {
        if (idx[r] < 0 || idx[r] >= S)
            out_of_range++;
        else
            count[idx[r]]++;
    }
    EXPECT(out_of_range == 0, "%d samples out of range", out_of_range);
    /* count_j ~ Binomial(ROWS, p_j): s.d. sqrt(ROWS p (1-p)) = 126, 158, 145; 5 s.d. */
    for (int j = 0; j < S; j++) {
        char what[64];
        double sd = sqrt(ROWS * (double)p[j] * (1 - p[j]));
        snprintf(what, sizeof what, "sample count of position %d (5 s.d. = %.0f)", j, 5 * sd);
        EXPECT_NEAR(what, (double)count[j], ROWS * (double)p[j], 5 * sd);
    }

    /* zero-weight positions are never drawn, wherever they sit */
    const float z[5] = {0.0f, 0.6f, 0.0f, 0.4f, 0.0f};
    float *w5 = malloc(sizeof(float) * ROWS * 5);
    if (!w5) {
        EXPECT(0, "out of memory");
        free(w);
        free(idx);
        return;
    }
    for (int r = 0; r < ROWS; r++)
        for (int j = 0; j < 5; j++) w5[r * 5 + j] = z[j];
    EXPECT(attend_hard_sample(idx, w5, &rng, 100, ROWS / 100, 5, &err) == ATTEND_OK, "%s", err.msg);
    long c5[5] = {0};
    for (int r = 0; r < ROWS; r++)
        if (idx[r] >= 0 && idx[r] < 5) c5[idx[r]]++;
    EXPECT(c5[0] == 0 && c5[2] == 0 && c5[4] == 0, "zero-weight positions drawn: %ld %ld %ld",
           c5[0], c5[2], c5[4]);
    EXPECT_NEAR("count of position 1 of [0,.6,0,.4,0] (5 s.d.)", (double)c5[1], ROWS * 0.6,
                5 * sqrt(ROWS * 0.24));
    /* a single nonzero weight is always drawn */
    for (int r = 0; r < ROWS; r++)
        for (int j = 0; j < 5; j++) w5[r * 5 + j] = j == 4 ? 1.0f : 0.0f;
    EXPECT(attend_hard_sample(idx, w5, &rng, 1, ROWS, 5, &err) == ATTEND_OK, "%s", err.msg);
    int not4 = 0;
    for (int r = 0; r < ROWS; r++) not4 += idx[r] != 4;
    EXPECT(not4 == 0, "one-hot weight at the last position: %d draws elsewhere", not4);
    free(w);
    free(w5);
    free(idx);
}

static void expect_sample_error(const char *what, const float *w, int S, const char *s1,
                                const char *s2) {
    attend_rng rng;
    attend_rng_seed(&rng, 5);
    int32_t idx[2];
    attend_error err;
    memset(&err, 0, sizeof err);
    /* N=1, T=2: the bad row is (n=0, t=1) */
    attend_status st = attend_hard_sample(idx, w, &rng, 1, 2, S, &err);
    EXPECT(st == ATTEND_ERR_ARG && err.status == st && strstr(err.msg, "n=0, t=1") &&
               (!s1 || strstr(err.msg, s1)) && (!s2 || strstr(err.msg, s2)),
           "%s: %s \"%s\"", what, attend_status_name(st), err.msg);
    printf("  %-32s %s\n", what, err.msg);
    EXPECT(attend_hard_sample(idx, w, &rng, 1, 2, S, NULL) == ATTEND_ERR_ARG, "%s, err NULL", what);
}

static void test_sample_errors(void) {
    /* row 0 fine, row 1 bad */
    const float sum_low[6] = {0.2f, 0.5f, 0.3f, 0.2f, 0.5f, 0.2f};
    expect_sample_error("weights summing to 0.9", sum_low, 3, "sum to 0.9", NULL);
    const float sum_high[6] = {0.2f, 0.5f, 0.3f, 0.5f, 0.5f, 0.5f};
    expect_sample_error("weights summing to 1.5", sum_high, 3, "sum to 1.5", NULL);
    const float zero[6] = {0.2f, 0.5f, 0.3f, 0, 0, 0};
    expect_sample_error("all-zero weights", zero, 3, "sum to 0", NULL);
    const float neg[6] = {0.2f, 0.5f, 0.3f, 0.6f, -0.1f, 0.5f};
    expect_sample_error("a negative weight", neg, 3, "position 1", NULL);
    const float nan_w[6] = {0.2f, 0.5f, 0.3f, 0.5f, NAN, 0.5f};
    expect_sample_error("a NaN weight", nan_w, 3, "position 1", "nan");
    const float inf_w[6] = {0.2f, 0.5f, 0.3f, 0.0f, INFINITY, 0.0f};
    expect_sample_error("an Inf weight", inf_w, 3, "position 1", "inf");
    /* within the documented 1e-3 the row is accepted */
    const float close[6] = {0.2f, 0.5f, 0.3f, 0.2f, 0.5f, 0.3005f};
    attend_rng rng;
    attend_rng_seed(&rng, 5);
    int32_t idx[2];
    attend_error err;
    EXPECT(attend_hard_sample(idx, close, &rng, 1, 2, 3, &err) == ATTEND_OK,
           "sum 1.0005 should be accepted: %s", err.msg);
}

/* -------------------------------------------------------- hard context */

static void test_hard_context(void) {
    enum { N = 2, T = 3, S = 4, Dv = 3 };
    float v[N * S * Dv];
    for (int n = 0; n < N; n++)
        for (int s = 0; s < S; s++)
            for (int d = 0; d < Dv; d++) v[(n * S + s) * Dv + d] = (float)(100 * n + 10 * s + d);
    const int32_t idx[N * T] = {3, 0, 3, 1, 2, 2}; /* repeats within a sequence */
    float ctx[N * T * Dv];
    attend_error err;
    EXPECT(attend_hard_context_forward(ctx, idx, v, N, T, S, Dv, &err) == ATTEND_OK, "%s", err.msg);
    int bad = 0;
    for (int n = 0; n < N; n++)
        for (int t = 0; t < T; t++)
            for (int d = 0; d < Dv; d++)
                if (ctx[(n * T + t) * Dv + d] != (float)(100 * n + 10 * idx[n * T + t] + d)) bad++;
    EXPECT(bad == 0, "hard context: %d values are not v[n, idx[n,t], d]", bad);

    /* backward: scatter-add onto a nonzero dv; unchosen rows unchanged */
    float dctx[N * T * Dv], dv[N * S * Dv], want[N * S * Dv];
    for (int i = 0; i < N * T * Dv; i++) dctx[i] = 0.5f * (float)(i + 1);
    for (int i = 0; i < N * S * Dv; i++) want[i] = dv[i] = -1.0f + 0.25f * (float)i;
    for (int n = 0; n < N; n++)
        for (int t = 0; t < T; t++)
            for (int d = 0; d < Dv; d++)
                want[(n * S + idx[n * T + t]) * Dv + d] += dctx[(n * T + t) * Dv + d];
    EXPECT(attend_hard_context_backward(dv, dctx, idx, N, T, S, Dv, &err) == ATTEND_OK, "%s",
           err.msg);
    double got_d[N * S * Dv], want_d[N * S * Dv];
    for (int i = 0; i < N * S * Dv; i++) {
        got_d[i] = dv[i];
        want_d[i] = want[i];
    }
    EXPECT_CLOSE("hard context backward: scatter-add", got_d, want_d, N * S * Dv, 0, 0);
    /* e.g. v row (n=0, s=3) was chosen twice: both upstream rows add up */
    EXPECT(dv[(0 * S + 3) * Dv + 0] == -1.0f + 0.25f * 9 + dctx[0] + dctx[2 * Dv],
           "double pick: %g", dv[(0 * S + 3) * Dv + 0]);
    /* rows never chosen: (n=0, s=2) and (n=1, s=0), (n=1, s=3) */
    EXPECT(dv[(0 * S + 2) * Dv] == -1.0f + 0.25f * 6 && dv[(1 * S + 0) * Dv] == -1.0f + 0.25f * 12,
           "unchosen rows changed");
    /* accumulates: a second call adds the same again */
    EXPECT(attend_hard_context_backward(dv, dctx, idx, N, T, S, Dv, &err) == ATTEND_OK, "%s",
           err.msg);
    for (int n = 0; n < N; n++)
        for (int t = 0; t < T; t++)
            for (int d = 0; d < Dv; d++)
                want[(n * S + idx[n * T + t]) * Dv + d] += dctx[(n * T + t) * Dv + d];
    for (int i = 0; i < N * S * Dv; i++) {
        got_d[i] = dv[i];
        want_d[i] = want[i];
    }
    EXPECT_CLOSE("hard context backward: second call accumulates", got_d, want_d, N * S * Dv, 0, 0);

    /* argmax → context: the value row of the largest weight */
    const float w[1 * 2 * 4] = {0.1f, 0.7f, 0.1f, 0.1f, 0.3f, 0.3f, 0.1f, 0.3f};
    int32_t am[2];
    float c2[2 * Dv];
    EXPECT(attend_hard_argmax(am, w, 1, 2, 4, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_hard_context_forward(c2, am, v, 1, 2, 4, Dv, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(c2[0] == 10 && c2[Dv] == 0, "argmax context: %g %g (want v rows 1 and 0)", c2[0],
           c2[Dv]);
}

int main(void) {
    RUN(test_rng_reference_values);
    RUN(test_rng_reproducible);
    RUN(test_rng_uniform);
    RUN(test_argmax);
    RUN(test_sample_deterministic);
    RUN(test_sample_frequencies);
    RUN(test_sample_errors);
    RUN(test_hard_context);
    return harness_summary();
}
