/*
 * test_vmath.c — the vectorizable exp, tanh and sigmoid of src/core/vmath.h
 * (float build) against double-precision libm: error in ulps of the float
 * result over [-12, 12] (every 257th float, both signs, 8.5M points), the
 * documented bounds, the special values, and that the baseline, AVX2 and
 * AVX-512 copies of a vectorized loop compute the same bits as scalar code.
 */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "../src/core/vmath.h"

/* |got - want| in units of the spacing of floats at float(want). */
static double ulps(float got, double want) {
    float w = (float)want;
    float up = nextafterf(fabsf(w), INFINITY), down = nextafterf(fabsf(w), 0);
    double u = fabsf(w) == 0 ? (double)FLT_TRUE_MIN : (double)(up - fabsf(w));
    if (fabsf(w) == 1.0f) u = (double)(1.0f - down); /* below 1 the spacing halves */
    return fabs((double)got - want) / u;
}

typedef struct {
    double worst, at, worst_abs;
} err_stat;

static void sweep(float (*f)(float), double (*ref)(double), err_stat *st) {
    st->worst = st->worst_abs = 0;
    st->at = 0;
    for (uint32_t b = 0; b < 0x41400000u; b += 257) { /* 0x41400000 = 12.0f */
        float x;
        memcpy(&x, &b, sizeof x);
        for (int sgn = 0; sgn < 2; sgn++) {
            float xx = sgn ? -x : x;
            double want = ref((double)xx);
            float got = f(xx);
            double e = ulps(got, want), a = fabs((double)got - want);
            if (e > st->worst) st->worst = e, st->at = xx;
            if (a > st->worst_abs) st->worst_abs = a;
        }
    }
}

static float f_exp(float x) { return at_vexp(x); }
static float f_tanh(float x) { return at_vtanh(x); }
static float f_sigmoid(float x) { return at_vsigmoid(x); }
static double r_sigmoid(double x) { return 1 / (1 + exp(-x)); }

static void test_accuracy(void) {
    err_stat st;
    sweep(f_exp, exp, &st);
    printf("  exp:     worst %.2f ulp at %g\n", st.worst, st.at);
    EXPECT(st.worst <= 2.0, "exp: %.2f ulp at %g (bound 2)", st.worst, st.at);
    sweep(f_tanh, tanh, &st);
    printf("  tanh:    worst %.2f ulp at %g, worst absolute %.3g\n", st.worst, st.at, st.worst_abs);
    EXPECT(st.worst <= 6.0 && st.worst_abs <= 3.6e-7, "tanh: %.2f ulp at %g, %.3g absolute (bounds 6, 3.6e-7)",
           st.worst, st.at, st.worst_abs);
    sweep(f_sigmoid, r_sigmoid, &st);
    printf("  sigmoid: worst %.2f ulp at %g\n", st.worst, st.at);
    EXPECT(st.worst <= 3.0, "sigmoid: %.2f ulp at %g (bound 3)", st.worst, st.at);
}

static void test_special_values(void) {
    EXPECT(isnan(at_vtanh(NAN)) && isnan(at_vexp(NAN)) && isnan(at_vsigmoid(NAN)), "NaN must propagate");
    EXPECT(at_vtanh(INFINITY) == 1.0f && at_vtanh(-INFINITY) == -1.0f && at_vtanh(9.5f) == 1.0f,
           "tanh saturates: %.9g %.9g", at_vtanh(INFINITY), at_vtanh(-INFINITY));
    EXPECT(at_vtanh(0.0f) == 0.0f && at_vtanh(1e-30f) == 1e-30f, "tanh near 0: %g %g", at_vtanh(0.0f),
           at_vtanh(1e-30f));
    EXPECT(at_vtanh(-2.5f) == -at_vtanh(2.5f), "tanh is odd");
    EXPECT(at_vexp(-INFINITY) == 0.0f && at_vexp(-88.0f) == 0.0f, "exp flushes below ln FLT_MIN to 0");
    EXPECT(at_vsigmoid(INFINITY) == 1.0f && at_vsigmoid(-INFINITY) >= 0.0f && at_vsigmoid(-INFINITY) < 1e-37f,
           "sigmoid at ±inf: %g %g", at_vsigmoid(INFINITY), at_vsigmoid(-INFINITY));
}

/* A vectorized loop compiled at every level (AT_KERNEL) and the scalar code
 * give the same bits: no FMA contraction in either. Each copy this CPU can
 * run is called directly, not through the dispatcher. */
AT_KERNEL_VOID(static, tanh_rows, (float *restrict out, const float *restrict in, int n), (out, in, n)) {
#pragma omp simd
    for (int i = 0; i < n; i++) out[i] = at_vtanh(in[i]) + at_vexp(-fabsf(in[i])) * 0.5f;
}

static void test_levels_same_bits(void) {
    enum { n = 1 << 16 };
    float *in = malloc(n * sizeof *in), *vec = malloc(n * sizeof *vec);
    for (int i = 0; i < n; i++) in[i] = (float)(i - n / 2) * (12.0f / (n / 2));
    in[0] = NAN, in[1] = INFINITY, in[2] = -INFINITY, in[3] = -100.0f, in[4] = 100.0f; /* the selects */
    static const char *names[] = {"baseline", "avx2", "avx512", "dispatched"};
    const int top = AT_ISA_DISPATCH ? (int)at_isa_supported() : 0;
    for (int level = 0; level <= top + 1; level++) {
        if (level > top) tanh_rows(vec, in, n); /* through the dispatcher, at at_isa() */
#if AT_ISA_DISPATCH
        else if (level == AT_ISA_AVX512) tanh_rows_isa_avx512(vec, in, n);
        else if (level == AT_ISA_AVX2) tanh_rows_isa_avx2(vec, in, n);
        else tanh_rows_isa_base(vec, in, n);
#else
        else tanh_rows(vec, in, n);
#endif
        const char *name = names[level > top ? 3 : level];
        int diff = 0;
        for (int i = 0; i < n; i++) {
            volatile float x = in[i]; /* keeps this loop scalar */
            float s = at_vtanh(x) + at_vexp(-fabsf(x)) * 0.5f;
            if (memcmp(&s, &vec[i], sizeof s) != 0) diff++;
        }
        printf("  %s: %d of %d values differ between the vectorized loop and scalar code\n", name, diff, n);
        EXPECT(diff == 0, "%s: %d values differ", name, diff);
    }
    free(in);
    free(vec);
}

int main(void) {
    RUN(test_accuracy);
    RUN(test_special_values);
    RUN(test_levels_same_bits);
    return harness_summary();
}

