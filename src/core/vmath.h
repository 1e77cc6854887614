/*
 * vmath.h — elementwise exp, tanh and sigmoid written so that a compiler
 * vectorizes the loops that call them (no branches, no libm calls), for the
 * kernels of isa.h (AT_KERNEL: one body compiled at baseline, AVX2 and
 * AVX-512, picked at run time). Internal; not installed.
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
 * (x < ln FLT_MIN ≈ -87.34) to 0. No FMA contraction (-std=c11 turns it off
 * in gcc), so every level computes the same bits.
 *
 * Why the selects are bit masks (at_vsel), not `c ? a : b`: gcc 12 (with its
 * default -ftrapping-math) treats every float operation and ordered compare
 * as possibly trapping and will not if-convert a branch that holds one, and
 * its code sinking moves the arithmetic of a `?:` arm into a branch; the
 * loop is then "not vectorized: control flow in loop" where AVX-512 has no
 * masked form of the operation (the AVX2 copy of the additive score and the
 * GRU gates had no ymm instruction at all). A mask select is straight-line
 * code at every level (tests/isa_vectorized.sh proves it by disassembly).
 * Double build (ATTEND_DOUBLE, the finite-difference tests): libm.
 */
#ifndef ATTEND_VMATH_H
#define ATTEND_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../internal.h"
#include "isa.h"


/* c ? a : b for a comparison c, by bit masks in the float build: no branch
 * for any compiler to keep (see the header comment). */
#ifdef ATTEND_DOUBLE
static AT_ALWAYS_INLINE attend_real at_vsel(int c, attend_real a, attend_real b) { return c ? a : b; }
#else
static AT_ALWAYS_INLINE float at_vsel(int c, float a, float b) {
    const uint32_t m = (uint32_t)0 - (uint32_t)c;
    uint32_t ua, ub;
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    const uint32_t u = (ua & m) | (ub & ~m);
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
}
#endif

#ifdef ATTEND_DOUBLE

static AT_ALWAYS_INLINE attend_real at_vexp(attend_real x) { return exp(x); }
static AT_ALWAYS_INLINE attend_real at_vtanh(attend_real x) { return tanh(x); }

#else

static AT_ALWAYS_INLINE float at_vexp(float x0) {
    float x = at_vsel(x0 < -87.0f, -87.0f, x0); /* e^{-87} is still a normal float */
    x = at_vsel(x > 88.0f, 88.0f, x);           /* e^{88} < FLT_MAX */
    /* n = round(x / ln 2) by the 1.5·2^23 trick (round to nearest, no libm) */
    float fx = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = x - fx * 0.693359375f; /* ln 2 in two parts: exact first product */
    r = r - fx * -2.12194440e-4f;
    float z = r * r;
    float y = (((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) * r +
                1.6666665459e-1f) * r + 5.0000001201e-1f) * z + r + 1.0f;
    /* 2^n from the exponent bits; n is in [-126, 127] after the clamps, and a
     * NaN x (which passed them) takes n = 0 here and stays NaN through y */
    float n = at_vsel(fx == fx, fx, 0.0f);
    uint32_t bits = (uint32_t)((int32_t)n + 127) << 23;
    float p;
    memcpy(&p, &bits, sizeof p);
    /* below ln(FLT_MIN) the result would be subnormal: 0, so that a softmax
     * position far below the maximum gets weight exactly 0 */
    return at_vsel(x0 < -87.33654f, 0.0f, y * p);
}

/* tanh(x) = x·P(x²)/Q(x²) on [−9, 9], ±1 beyond (float tanh is within 1 ulp of ±1 there);
 * coefficients from tools/fit_tanh.py. The comparisons keep a NaN (no fmin/fmax). */
static AT_ALWAYS_INLINE float at_vtanh(float x) {
    const int hi = x > 9.0f, lo = x < -9.0f;
    float xc = at_vsel(hi, 9.0f, at_vsel(lo, -9.0f, x));
    float z = xc * xc;
    float p = (((((-8.488785703e-14f * z + 5.277984624e-11f) * z + -2.022531570e-08f) * z + 1.115433353e-05f) * z +
                3.103958810e-03f) * z + 1.308401247e-01f) * z + 9.999999934e-01f;
    float q = ((2.546148893e-04f * z + 2.449518889e-02f) * z + 4.641733958e-01f) * z + 1.0f;
    return at_vsel(hi, 1.0f, at_vsel(lo, -1.0f, xc * p / q));
}

#endif

static AT_ALWAYS_INLINE attend_real at_vsigmoid(attend_real x) { return 1 / (1 + at_vexp(-x)); }

#endif
