/*
 * isa.h — one body, one copy per instruction-set level, chosen at run time.
 *
 * A hot kernel is written once and compiled three times: for the x86-64
 * baseline (SSE2), for AVX2 (x86-64-v3: AVX2, FMA, BMI) and for AVX-512
 * (x86-64-v4). The copy used is picked on each call from at_isa(), which is
 * decided once per process: the best level this CPU and OS support, or a lower
 * one forced by the environment variable ATTEND_ISA=baseline|avx2|avx512 (a
 * level above what the CPU has falls back to the best it has; an unknown value
 * is ignored). The benchmark uses ATTEND_ISA to measure every level on one
 * machine; attend_isa() names the level in use.
 *
 * Usage (in a .c file; the storage class is `static` or empty):
 *
 *     AT_KERNEL(static, void, scale_rows, (float *restrict x, int n), (x, n)) {
 *         ... body, written once ...
 *     }
 *
 * defines scale_rows (the dispatcher, with the given storage class), three
 * static copies scale_rows_isa_base/_avx2/_avx512, and the body as an
 * always-inline function that each copy inlines under its own target; static
 * inline helpers the body calls (vmath.h) must be always-inline too, or they
 * stay baseline code. Results must not depend on the level beyond the last
 * bits where a level contracts a*b+c into one FMA (the dispatch is per process,
 * so a run is deterministic on a given machine and ATTEND_ISA).
 *
 * Off x86-64, or with a compiler other than gcc/clang, only the baseline copy
 * exists and at_isa() is always AT_ISA_BASELINE.
 */
#ifndef ATTEND_ISA_H
#define ATTEND_ISA_H

typedef enum {
    AT_ISA_BASELINE = 0, /* x86-64 (SSE2), or any other architecture */
    AT_ISA_AVX2 = 1,     /* x86-64-v3: AVX2 + FMA (Haswell, Zen 1-3) */
    AT_ISA_AVX512 = 2,   /* x86-64-v4: AVX-512 F/BW/DQ/VL (Skylake-X, Zen 4-5) */
} at_isa_level;

/* The level in use: decided on the first call (CPU support and ATTEND_ISA),
 * the same for the rest of the process. Thread-safe. */
at_isa_level at_isa(void);

/* What this CPU supports (ignores ATTEND_ISA). */
at_isa_level at_isa_supported(void);

/* A fingerprint of the copy that runs: the sum of x [n] (x[0] = 2^24, every
 * other value 1, n a multiple of 64 up to 1024) in a vectorized float
 * reduction. Lane 0 starts at 2^24 and loses every 1 added to it, the other
 * lanes keep theirs, so the sum is 2^24 + n - n/L for L accumulator lanes
 * (1 when scalar, 4 SSE, 8 AVX2, 16 AVX-512 with gcc; clang also interleaves
 * accumulators). Used by tests/isa_check.c to show that ATTEND_ISA changes
 * the code that runs. */
float at_isa_probe(const float *x, int n);

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !defined(ATTEND_NO_ISA_DISPATCH)
#define AT_ISA_DISPATCH 1
#define AT_ALWAYS_INLINE inline __attribute__((always_inline))
#define AT_TARGET_AVX2 __attribute__((target("arch=x86-64-v3")))
#define AT_TARGET_AVX512 __attribute__((target("arch=x86-64-v4")))

#define AT_KERNEL(storage, ret, name, params, args)                                        \
    static AT_ALWAYS_INLINE ret name##_isa_body params;                                    \
    static ret name##_isa_base params { return name##_isa_body args; }                     \
    AT_TARGET_AVX2 static ret name##_isa_avx2 params { return name##_isa_body args; }      \
    AT_TARGET_AVX512 static ret name##_isa_avx512 params { return name##_isa_body args; }  \
    storage ret name params {                                                              \
        switch (at_isa()) {                                                                \
        case AT_ISA_AVX512: return name##_isa_avx512 args;                                 \
        case AT_ISA_AVX2: return name##_isa_avx2 args;                                     \
        default: return name##_isa_base args;                                              \
        }                                                                                  \
    }                                                                                      \
    static AT_ALWAYS_INLINE ret name##_isa_body params

/* The same for a kernel returning void. */
#define AT_KERNEL_VOID(storage, name, params, args)                                        \
    static AT_ALWAYS_INLINE void name##_isa_body params;                                   \
    static void name##_isa_base params { name##_isa_body args; }                           \
    AT_TARGET_AVX2 static void name##_isa_avx2 params { name##_isa_body args; }            \
    AT_TARGET_AVX512 static void name##_isa_avx512 params { name##_isa_body args; }        \
    storage void name params {                                                             \
        switch (at_isa()) {                                                                \
        case AT_ISA_AVX512: name##_isa_avx512 args; break;                                 \
        case AT_ISA_AVX2: name##_isa_avx2 args; break;                                     \
        default: name##_isa_base args; break;                                              \
        }                                                                                  \
    }                                                                                      \
    static AT_ALWAYS_INLINE void name##_isa_body params

#else
#define AT_ISA_DISPATCH 0
#if defined(__GNUC__) || defined(__clang__)
#define AT_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define AT_ALWAYS_INLINE inline
#endif
#define AT_KERNEL(storage, ret, name, params, args) storage ret name params
#define AT_KERNEL_VOID(storage, name, params, args) storage void name params
#endif

#endif
