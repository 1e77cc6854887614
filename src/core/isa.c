/*
 * isa.c — which instruction-set level the kernels of isa.h run at.
 */
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "core/isa.h"

at_isa_level at_isa_supported(void) {
#if AT_ISA_DISPATCH
    /* __builtin_cpu_supports also checks that the OS saves the AVX/AVX-512
     * registers (XCR0), so a level reported here is safe to run. */
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return AT_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))
        return AT_ISA_AVX2;
#endif
    return AT_ISA_BASELINE;
}

static at_isa_level decide(void) {
    at_isa_level best = at_isa_supported();
    const char *want = getenv("ATTEND_ISA");
    if (want == NULL) return best;
    at_isa_level asked = best;
    if (strcmp(want, "baseline") == 0) asked = AT_ISA_BASELINE;
    else if (strcmp(want, "avx2") == 0) asked = AT_ISA_AVX2;
    else if (strcmp(want, "avx512") == 0) asked = AT_ISA_AVX512;
    return asked < best ? asked : best;
}

at_isa_level at_isa(void) {
    /* -1 until decided; deciding twice (two threads at once) gives the same
     * value, and the atomics keep ThreadSanitizer quiet */
    static int level = -1;
#if defined(__GNUC__) || defined(__clang__)
    int v = __atomic_load_n(&level, __ATOMIC_RELAXED);
    if (v < 0) {
        v = (int)decide();
        __atomic_store_n(&level, v, __ATOMIC_RELAXED);
    }
    return (at_isa_level)v;
#else
    if (level < 0) level = (int)decide();
    return (at_isa_level)level;
#endif
}

const char *attend_isa(void) {
    switch (at_isa()) {
    case AT_ISA_AVX512: return "avx512";
    case AT_ISA_AVX2: return "avx2";
    default: return "baseline";
    }
}

AT_KERNEL(, float, at_isa_probe, (const float *x, int n), (x, n)) {
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (int i = 0; i < n; i++) s += x[i];
    return s;
}
