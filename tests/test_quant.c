/*
 * test_quant.c — int8 and fp16 weights (src/core/quant.c, the model's
 * quantized storage and files).
 *
 * Kernels: at_q8_gemm / at_f16_gemm at every instruction-set level this CPU
 * has (called directly through the *_level entry points; tests/cmake/quant.cmake
 * runs the file again under ATTEND_ISA=baseline and avx2 for the dispatched
 * ones) against a reference in double over the dequantized float weights
 * (q * scale, or the half widened): odd sizes on every side of the vector
 * widths and the 4-row blocks, column slices of wider matrices (W + c0 at the
 * full row stride), Y with a wider stride whose padding must not be written,
 * beta = 0 over NaN (must not be read). Tolerance: each element within
 * (in + 8) u (Σ_k |x_k w_k| + |beta y|), u = 2^-24: the bound of an in-term
 * float sum in any order, plus the scale's and beta's roundings; a wrong
 * element (a skipped column, a wrong row) is off by about one term.
 */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "../src/internal.h"
#include "../src/isa.h"
#include "../src/core/quant.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static double uniform(void) { /* [-1, 1) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "test_quant: out of memory\n");
        exit(2);
    }
    return p;
}

/* Independent binary16 decoding (ldexp), for the conversion tests. */
static double half_value(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

static void test_f16_conversion(void) {
    int bad_widen = 0, bad_round = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        double want = half_value((uint16_t)h);
        float got = at_f16_to_float((uint16_t)h);
        if (isnan(want) ? !isnan(got) : (double)got != want) bad_widen++;
        if (!isnan(want) && at_f16_from_float(got) != h) bad_round++;
    }
    EXPECT(bad_widen == 0, "%d halves widened wrongly", bad_widen);
    EXPECT(bad_round == 0, "%d halves did not round-trip", bad_round);
    /* ties to even, between two neighbours, overflow, subnormals */
    EXPECT(at_f16_from_float(1.0f + 0x1p-11f) == 0x3c00, "1 + half an ulp ties to 1 (even): %04x",
           at_f16_from_float(1.0f + 0x1p-11f));
    EXPECT(at_f16_from_float(1.0f + 3 * 0x1p-11f) == 0x3c02, "1 + 1.5 ulp ties to 1 + 2 ulp: %04x",
           at_f16_from_float(1.0f + 3 * 0x1p-11f));
    EXPECT(at_f16_from_float(1.0f + 0x1p-11f + 0x1p-20f) == 0x3c01, "above the tie rounds up");
    EXPECT(at_f16_from_float(65504.0f) == 0x7bff, "max half");
    EXPECT(at_f16_from_float(65519.0f) == 0x7bff, "65519 rounds down to 65504");
    EXPECT(at_f16_from_float(65520.0f) == 0x7c00, "65520 rounds to Inf");
    EXPECT(at_f16_from_float(-0x1p-24f) == 0x8001, "smallest subnormal");
    EXPECT(at_f16_from_float(0x1p-26f) == 0, "a quarter of the smallest subnormal rounds to 0");
    EXPECT(at_f16_from_float(0x1p-14f - 0x1p-25f) == 0x0400, "the largest subnormal's tie rounds up to 2^-14");
    EXPECT(at_f16_from_float(-0.0f) == 0x8000, "-0");
    printf("  f16 conversion: 65536 halves widened and rounded back; %d + %d bad\n", bad_widen, bad_round);
}

static void test_quantize_row(void) {
    float w[37];
    int8_t q[37];
    double worst = 0;
    for (int trial = 0; trial < 50; trial++) {
        double mag = pow(10, 4 * uniform());
        for (int k = 0; k < 37; k++) w[k] = (float)(mag * uniform());
        float s = at_q8_quantize_row(q, w, 37);
        float mx = 0;
        for (int k = 0; k < 37; k++) mx = fabsf(w[k]) > mx ? fabsf(w[k]) : mx;
        EXPECT(s == mx / 127.0f, "scale %g, max %g", (double)s, (double)mx);
        int hit = 0;
        for (int k = 0; k < 37; k++) {
            double err = fabs((double)w[k] - (double)q[k] * s) / s;
            worst = err > worst ? err : worst;
            hit |= q[k] == 127 || q[k] == -127;
        }
        EXPECT(hit, "the largest value maps to ±127");
    }
    EXPECT(worst <= 0.5 + 1e-5, "worst rounding error %g of a scale", worst);
    for (int k = 0; k < 37; k++) w[k] = 0;
    q[3] = 9;
    float s0 = at_q8_quantize_row(q, w, 37);
    int zero = 1;
    for (int k = 0; k < 37; k++) zero &= q[k] == 0;
    EXPECT(s0 == 0 && zero, "an all-zero row has scale 0 and q = 0");
    printf("  quantize rows: worst |w - q s| = %.4f s\n", worst);
}

/* One product at one level (or dispatched when level < 0) against the
 * reference; returns 1 when it passes. */
static int check_product(int is16, int level, int N, int out, int in, int c0, double beta) {
    const int ldw = in + c0 + 3, ldx = in + 2, ldy = out + 5, rows = out + 2; /* W has rows beyond out */
    float *X = xmalloc((size_t)N * ldx * sizeof *X), *Y = xmalloc((size_t)N * ldy * sizeof *Y);
    float *Y0 = xmalloc((size_t)N * ldy * sizeof *Y0), *scale = xmalloc((size_t)rows * sizeof *scale);
    float *Wf = xmalloc((size_t)rows * ldw * sizeof *Wf);
    int8_t *Q = xmalloc((size_t)rows * ldw);
    uint16_t *H = xmalloc((size_t)rows * ldw * sizeof *H);
    for (int r = 0; r < rows; r++) {
        float w[1024];
        for (int k = 0; k < ldw; k++) w[k] = (float)(uniform() * (1 + r % 3));
        if (r == 1) for (int k = 0; k < ldw; k++) w[k] = 0; /* a zero row: scale 0 */
        scale[r] = at_q8_quantize_row(Q + (size_t)r * ldw, w, ldw);
        for (int k = 0; k < ldw; k++) {
            H[(size_t)r * ldw + k] = at_f16_from_float(w[k]);
            Wf[(size_t)r * ldw + k] = is16 ? at_f16_to_float(H[(size_t)r * ldw + k])
                                           : (float)Q[(size_t)r * ldw + k] * scale[r];
        }
    }
    for (size_t i = 0; i < (size_t)N * ldx; i++) X[i] = (float)uniform();
    for (int n = 0; n < N; n++)
        for (int j = 0; j < ldy; j++)
            Y[(size_t)n * ldy + j] = j < out ? (beta == 0 ? NAN : (float)uniform()) : 12345.0f;
    memcpy(Y0, Y, (size_t)N * ldy * sizeof *Y);
    const float b = (float)beta;
    if (is16) {
        if (level < 0) at_f16_gemm(N, out, in, X, ldx, H + c0, ldw, b, Y, ldy);
        else at_f16_gemm_level(level, N, out, in, X, ldx, H + c0, ldw, b, Y, ldy);
    } else {
        if (level < 0) at_q8_gemm(N, out, in, X, ldx, Q + c0, scale, ldw, b, Y, ldy);
        else at_q8_gemm_level(level, N, out, in, X, ldx, Q + c0, scale, ldw, b, Y, ldy);
    }
    int ok = 1;
    double worst = 0;
    for (int n = 0; n < N; n++)
        for (int j = 0; j < ldy; j++) {
            float got = Y[(size_t)n * ldy + j];
            if (j >= out) {
                if (got != 12345.0f) ok = 0;
                continue;
            }
            double sum = 0, mag = 0;
            for (int k = 0; k < in; k++) {
                double t = (double)X[(size_t)n * ldx + k] * Wf[(size_t)j * ldw + c0 + k];
                sum += t;
                mag += fabs(t);
            }
            double y0 = beta == 0 ? 0 : beta * Y0[(size_t)n * ldy + j];
            double want = sum + y0, tol = (in + 8) * (FLT_EPSILON / 2) * (mag + fabs(y0)) + 1e-30;
            double d = fabs((double)got - want);
            if (!(d <= tol)) ok = 0;
            if (d / tol > worst) worst = d / tol;
        }
    if (!ok)
        fprintf(stderr, "  FAIL %s level %d N=%d out=%d in=%d c0=%d beta=%g: worst %.2f of the bound\n",
                is16 ? "f16" : "q8", level, N, out, in, c0, beta, worst);
    free(X);
    free(Y);
    free(Y0);
    free(scale);
    free(Wf);
    free(Q);
    free(H);
    return ok;
}

static void test_kernels(void) {
    static const int Ns[] = {1, 2, 3, 5, 16};
    static const int outs[] = {1, 3, 4, 5, 17, 33};
    static const int ins[] = {0, 1, 3, 7, 8, 15, 16, 17, 31, 33, 64, 65, 257};
    static const int c0s[] = {0, 5};
    static const double betas[] = {0, 1, 0.5};
    int top = (int)at_isa_supported(), runs = 0, fails = 0;
    for (int is16 = 0; is16 < 2; is16++)
        for (int level = -1; level <= top; level++)
            for (size_t a = 0; a < sizeof Ns / sizeof *Ns; a++)
                for (size_t o = 0; o < sizeof outs / sizeof *outs; o++)
                    for (size_t i = 0; i < sizeof ins / sizeof *ins; i++)
                        for (size_t c = 0; c < 2; c++) {
                            double beta = betas[(a + o + i + c) % 3];
                            runs++;
                            fails += !check_product(is16, level, Ns[a], outs[o], ins[i], c0s[c], beta);
                        }
    EXPECT(fails == 0, "%d of %d products outside the bound", fails, runs);
    printf("  kernels: %d products (I8 and F16, levels baseline..%s and dispatched at %s), %d outside the bound\n",
           runs, top == 2 ? "avx512" : top == 1 ? "avx2" : "baseline", attend_isa(), fails);
}

/* at_linear: a column slice of a quantized matrix reads the quantized copy
 * (results within the bound of the float product of the dequantized
 * weights), more rows than AT_QUANT_MAX_ROWS read the float copy (the float
 * product exactly), NULL reads the float copy. */
static void test_linear(void) {
    enum { R = 40, C = 50, N = AT_QUANT_MAX_ROWS + 1 };
    static float W[R * C], Wq[R * C], sc[R], X[N * C], Y[N * R], Yref[N * R];
    static int8_t Q[R * C];
    for (int r = 0; r < R; r++) {
        for (int k = 0; k < C; k++) W[r * C + k] = (float)uniform();
        sc[r] = at_q8_quantize_row(Q + r * C, W + r * C, C);
        for (int k = 0; k < C; k++) Wq[r * C + k] = Q[r * C + k] * sc[r];
    }
    for (int i = 0; i < N * C; i++) X[i] = (float)uniform();
    at_qweight q = {ATTEND_DTYPE_I8, R, C, Wq, Q, sc, NULL};
    /* rows 7..7+30 of W, columns 11..11+33 */
    const float *Wb = Wq + 7 * C + 11;
    double worst = 0;
    for (int n = 1; n <= N; n += N - 1) {
        memset(Y, 0, sizeof Y);
        memset(Yref, 0, sizeof Yref);
        at_linear(&q, n, 30, 33, X, C, Wb, C, 0, Y, R);
        at_gemm(0, 1, n, 30, 33, 1, X, C, Wb, C, 0, Yref, R);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < 30; j++) {
                double d = fabs(Y[i * R + j] - Yref[i * R + j]);
                worst = d > worst ? d : worst;
                if (n > AT_QUANT_MAX_ROWS)
                    EXPECT(Y[i * R + j] == Yref[i * R + j], "float path: row %d col %d", i, j);
            }
    }
    EXPECT(worst < 1e-4, "at_linear against at_gemm: worst %g", worst);
    printf("  at_linear: column slice, quantized and float paths: worst |diff| %.2e\n", worst);
}

int main(void) {
    printf("test_quant (isa %s)\n", attend_isa());
    RUN(test_f16_conversion);
    RUN(test_quantize_row);
    RUN(test_kernels);
    RUN(test_linear);
    return harness_summary();
}
