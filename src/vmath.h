/*
 * vmath.h — elementwise exp, tanh and sigmoid written so that a compiler can
 * vectorize loops that call them (no branches, no libm calls), and the
 * AT_VECTOR attribute that compiles a hot loop for AVX2 and AVX-512 next to
 * the baseline and picks one at load time. Internal; not installed.
 *
 * Float build: exp is Cephes' expf (range reduction by ln 2, degree-5
 * polynomial, 2^n by exponent bits); tanh is a rational function
 * x·P(x²)/Q(x²) (degrees 6 and 3 in x², x clamped to [−9, 9]; fitted for this
 * project by tools/fit_tanh.py, relative error 6.6e-9 in exact arithmetic):
 * one division and ten multiply-adds, 3.8x faster than Cephes' tanhf (an exp
 * and a division) that it replaced, which had been a third of the additive
 * attention kernel; sigmoid is 1/(1 + e^{−x}). tests/test_vmath.c measures
 * all three against double-precision libm over [−12, 12] (tanh: within 6 ulp,
 * 3.5e-7 absolute, where Cephes' was within 1.3 ulp). NaN propagates, ±Inf
 * gives ±1 (tanh), 1 and below 1e-37 (sigmoid); exp flushes results below FLT_MIN
 * (x < ln FLT_MIN ≈ -87.34) to 0. No FMA contraction (-std=c11 turns it off),
 * so every clone computes the same bits.
 * Double build (ATTEND_DOUBLE, the finite-difference tests): libm.
 */
#ifndef ATTEND_VMATH_H
#define ATTEND_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(ATTEND_NO_CLONES)
/* One copy per instruction set, chosen once by the dynamic loader (ifunc). */
#define AT_VECTOR __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define AT_VECTOR
#endif

#ifdef ATTEND_DOUBLE

static inline attend_real at_vexp(attend_real x) { return exp(x); }
static inline attend_real at_vtanh(attend_real x) { return tanh(x); }

#else

static inline float at_vexp(float x) {
    const float x0 = x;
    x = x < -87.0f ? -87.0f : x; /* e^{-87} is still a normal float */
    x = x > 88.0f ? 88.0f : x;   /* e^{88} < FLT_MAX */
    /* n = round(x / ln 2) by the 1.5·2^23 trick (round to nearest, no libm) */
    float fx = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = x - fx * 0.693359375f; /* ln 2 in two parts: exact first product */
    r = r - fx * -2.12194440e-4f;
    float z = r * r;
    float y = (((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) * r +
                1.6666665459e-1f) * r + 5.0000001201e-1f) * z + r + 1.0f;
    /* 2^n from the exponent bits; n is in [-126, 127] after the clamps, and a
     * NaN x (which passed them) takes n = 0 here and stays NaN through y */
    float n = fx == fx ? fx : 0.0f;
    uint32_t bits = (uint32_t)((int32_t)n + 127) << 23;
    float p;
    memcpy(&p, &bits, sizeof p);
    /* below ln(FLT_MIN) the result would be subnormal: 0, so that a softmax
     * position far below the maximum gets weight exactly 0 */
    return x0 < -87.33654f ? 0.0f : y * p;
}

/* tanh(x) = x·P(x²)/Q(x²) on [−9, 9], ±1 beyond (float tanh is within 1 ulp of ±1 there);
 * coefficients from tools/fit_tanh.py. The comparisons keep a NaN (no fmin/fmax). */
static inline float at_vtanh(float x) {
    float xc = x > 9.0f ? 9.0f : (x < -9.0f ? -9.0f : x);
    float z = xc * xc;
    float p = (((((-8.488785703e-14f * z + 5.277984624e-11f) * z + -2.022531570e-08f) * z + 1.115433353e-05f) * z +
                3.103958810e-03f) * z + 1.308401247e-01f) * z + 9.999999934e-01f;
    float q = ((2.546148893e-04f * z + 2.449518889e-02f) * z + 4.641733958e-01f) * z + 1.0f;
    return x > 9.0f ? 1.0f : x < -9.0f ? -1.0f : xc * p / q;
}

#endif

static inline attend_real at_vsigmoid(attend_real x) { return 1 / (1 + at_vexp(-x)); }

#endif
