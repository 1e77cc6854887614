/*
 * quant.c — matrix products reading int8 or fp16 weights (src/core/quant.h),
 * converted to float in registers: one body (quant_tile.h) compiled for the
 * x86-64 baseline, AVX2 (F16C conversions) and AVX-512, chosen per call from
 * at_isa() like every AT_KERNEL (src/isa.h); tests/isa/vectorized.sh checks
 * the copies q8_gemm_isa_* and f16_gemm_isa_* hold vector code.
 *
 * Dimension letters: N rows of X and Y, out rows of W, in its columns.
 */
#include <math.h>
#include <string.h>

#include "core/quant.h"
#include "core/isa.h"

/* Multiply-adds contract into FMA instructions at the AVX2/AVX-512 levels,
 * as in src/gemm.c: only the last bits change, never determinism within one
 * level. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif
/* 32- and 64-byte vector helpers are static and always inlined: their calling
 * convention is never used, so the ABI note does not apply. */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#if AT_ISA_DISPATCH
#include <immintrin.h>
#endif

/* __builtin_shufflevector: clang, gcc 12 and later */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
#define QT_HAVE_SHUFFLE 1
#else
#define QT_HAVE_SHUFFLE 0
#endif

#define QT_CAT_(a, b) a##b
#define QT_CAT(a, b) QT_CAT_(a, b)

/* Vectors by byte width: qt_vf<B> floats; the baseline's 4 int8 (qt_vb4),
 * 4 int32 (qt_vi16), 4 uint32 (qt_vu16) and 4 halves (qt_vh16). */
typedef float qt_vf16 __attribute__((vector_size(16)));
typedef float qt_vf32 __attribute__((vector_size(32)));
typedef float qt_vf64 __attribute__((vector_size(64)));
typedef int8_t qt_vb4 __attribute__((vector_size(4)));
typedef int32_t qt_vi16 __attribute__((vector_size(16)));
typedef uint32_t qt_vu16 __attribute__((vector_size(16)));
typedef uint16_t qt_vh16 __attribute__((vector_size(8)));

/* binary16 bits to float, exactly, without F16C: the magnitude's bits moved to
 * a float's position and scaled by 2^112 (which also turns half subnormals
 * into float normals, exactly), then the sign. Inf/NaN are widened as such. */
static AT_ALWAYS_INLINE float qt_f16_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, b;
    if ((h & 0x7c00u) == 0x7c00u) {
        b = sign | 0x7f800000u | ((uint32_t)(h & 0x3ffu) << 13);
    } else {
        uint32_t mag = (uint32_t)(h & 0x7fffu) << 13;
        float f;
        memcpy(&f, &mag, 4);
        f *= 0x1p112f;
        memcpy(&b, &f, 4);
        b |= sign;
    }
    float r;
    memcpy(&r, &b, 4);
    return r;
}

float at_f16_to_float(uint16_t h) { return qt_f16_float(h); }

uint16_t at_f16_from_float(float x) {
    uint32_t b;
    memcpy(&b, &x, 4);
    uint32_t sign = (b >> 16) & 0x8000u, a = b & 0x7fffffffu;
    if (a >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0)); /* Inf, NaN */
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to Inf */
    if (a < 0x38800000u) {                                   /* below 2^-14: subnormal (or 0) */
        float f;
        memcpy(&f, &a, 4);
        return (uint16_t)(sign | (uint32_t)lrintf(f * 0x1p24f)); /* units of 2^-24, to nearest even */
    }
    uint32_t h = ((((a >> 23) - 127 + 15) << 10) | ((a & 0x7fffffu) >> 13)), rest = a & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++; /* a carry moves into the exponent, as it must */
    return (uint16_t)(sign | h);
}

float at_q8_quantize_row(int8_t *q, const float *w, int n) {
    float mx = 0;
    for (int k = 0; k < n; k++) mx = fabsf(w[k]) > mx ? fabsf(w[k]) : mx;
    float scale = mx / 127.0f;
    if (scale == 0) { /* an all-zero row (or one below 127 float subnormals) */
        memset(q, 0, (size_t)n);
        return 0;
    }
    for (int k = 0; k < n; k++) {
        long v = lrint((double)w[k] / scale);
        q[k] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
    }
    return scale;
}

/* The baseline's fp16 load: 4 halves by the bit manipulation of qt_f16_float
 * (finite values; the loader refuses others). */
static AT_ALWAYS_INLINE qt_vf16 qt_f16_load_base(const uint16_t *p) {
    qt_vh16 h;
    memcpy(&h, p, sizeof h);
    qt_vu16 u = __builtin_convertvector(h, qt_vu16);
    qt_vu16 mag = (u & 0x7fffu) << 13;
    qt_vf16 f;
    memcpy(&f, &mag, sizeof f);
    f *= 0x1p112f;
    qt_vu16 bits;
    memcpy(&bits, &f, sizeof bits);
    bits |= (u & 0x8000u) << 16;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* The baseline's int8 load: 4 values widened to int32, then to float. */
static AT_ALWAYS_INLINE qt_vf16 qt_i8_load_base(const int8_t *p) {
    qt_vb4 b;
    memcpy(&b, p, sizeof b);
    return __builtin_convertvector(__builtin_convertvector(b, qt_vi16), qt_vf16);
}

#define QT_BYTES 16
#define QT_SUF _isa_base
#define QT_TARGET
#define QT_I8_LOAD(p) qt_i8_load_base(p)
#define QT_F16_LOAD(p) qt_f16_load_base(p)
#include "core/quant_tile.h"

#if AT_ISA_DISPATCH
#define QT_BYTES 32
#define QT_SUF _isa_avx2
#define QT_TARGET AT_TARGET_AVX2
#define QT_I8_LOAD(p) ((qt_vf32)_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p)))))
#define QT_F16_LOAD(p) ((qt_vf32)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p))))
#include "core/quant_tile.h"

#define QT_BYTES 64
#define QT_SUF _isa_avx512
#define QT_TARGET AT_TARGET_AVX512
#define QT_I8_LOAD(p) ((qt_vf64)_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p)))))
#define QT_F16_LOAD(p) ((qt_vf64)_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(p))))
#include "core/quant_tile.h"
#endif

static void q8_at(int level, int N, int out, int in, const float *X, int ldx, const int8_t *W, const float *scale,
                  int ldw, float beta, float *Y, int ldy) {
#if AT_ISA_DISPATCH
    switch (level) {
    case AT_ISA_AVX512: q8_gemm_isa_avx512(N, out, in, X, ldx, W, scale, ldw, beta, Y, ldy); return;
    case AT_ISA_AVX2: q8_gemm_isa_avx2(N, out, in, X, ldx, W, scale, ldw, beta, Y, ldy); return;
    default: break;
    }
#else
    (void)level;
#endif
    q8_gemm_isa_base(N, out, in, X, ldx, W, scale, ldw, beta, Y, ldy);
}

static void f16_at(int level, int N, int out, int in, const float *X, int ldx, const uint16_t *W, int ldw, float beta,
                   float *Y, int ldy) {
#if AT_ISA_DISPATCH
    switch (level) {
    case AT_ISA_AVX512: f16_gemm_isa_avx512(N, out, in, X, ldx, W, ldw, beta, Y, ldy); return;
    case AT_ISA_AVX2: f16_gemm_isa_avx2(N, out, in, X, ldx, W, ldw, beta, Y, ldy); return;
    default: break;
    }
#else
    (void)level;
#endif
    f16_gemm_isa_base(N, out, in, X, ldx, W, ldw, beta, Y, ldy);
}

static int cap_level(int level) {
    int top = (int)at_isa_supported();
    return level > top ? top : level < 0 ? 0 : level;
}

void at_q8_gemm_level(int level, int N, int out, int in, const float *X, int ldx, const int8_t *W, const float *scale,
                      int ldw, float beta, float *Y, int ldy) {
    if (N <= 0 || out <= 0) return;
    q8_at(cap_level(level), N, out, in, X, ldx, W, scale, ldw, beta, Y, ldy);
}

void at_f16_gemm_level(int level, int N, int out, int in, const float *X, int ldx, const uint16_t *W, int ldw,
                       float beta, float *Y, int ldy) {
    if (N <= 0 || out <= 0) return;
    f16_at(cap_level(level), N, out, in, X, ldx, W, ldw, beta, Y, ldy);
}

/* One int8 or fp16 product, W's rows [lo,hi) (at_parallel_rows' chunks). */
typedef struct {
    int level, N, in;
    const float *X;
    int ldx;
    const int8_t *w8;
    const uint16_t *w16;
    const float *scale;
    int ldw;
    float beta;
    float *Y;
    int ldy;
} qgemm_job;

static void q8_chunk(void *p, int lo, int hi) {
    const qgemm_job *j = p;
    q8_at(j->level, j->N, hi - lo, j->in, j->X, j->ldx, j->w8 + (size_t)lo * j->ldw, j->scale + lo, j->ldw, j->beta,
          j->Y + lo, j->ldy);
}

static void f16_chunk(void *p, int lo, int hi) {
    const qgemm_job *j = p;
    f16_at(j->level, j->N, hi - lo, j->in, j->X, j->ldx, j->w16 + (size_t)lo * j->ldw, j->ldw, j->beta, j->Y + lo,
           j->ldy);
}

/* Threads take disjoint blocks of W's rows (Y's columns); every output is
 * one thread's dot product, so results do not depend on the thread count. */
void at_q8_gemm(int N, int out, int in, const float *X, int ldx, const int8_t *W, const float *scale, int ldw,
                float beta, float *Y, int ldy) {
    if (N <= 0 || out <= 0) return;
    qgemm_job j = {(int)at_isa(), N, in, X, ldx, W, NULL, scale, ldw, beta, Y, ldy};
    at_parallel_rows((double)N * out * in, out, 16, q8_chunk, &j);
}

void at_f16_gemm(int N, int out, int in, const float *X, int ldx, const uint16_t *W, int ldw, float beta, float *Y,
                 int ldy) {
    if (N <= 0 || out <= 0) return;
    qgemm_job j = {(int)at_isa(), N, in, X, ldx, NULL, W, NULL, ldw, beta, Y, ldy};
    at_parallel_rows((double)N * out * in, out, 16, f16_chunk, &j);
}

int at_linear_quantized(const at_qweight *q, int N) {
#ifndef ATTEND_DOUBLE
    /* Without AVX2 (the baseline copy; WebAssembly) the conversions run
     * lane by lane: the int8 and fp16 products took 2.5-4x the float one's
     * time at one and eight rows (docs/PERFORMANCE.md), so the dequantized
     * float copy multiplies there. */
    return q && q->dtype != ATTEND_DTYPE_F32 && N >= 1 && N <= AT_QUANT_MAX_ROWS && at_isa() >= AT_ISA_AVX2;
#else
    (void)q, (void)N;
    return 0;
#endif
}

void at_linear(const at_qweight *q, const at_packed *pk, int N, int out, int in, const attend_real *X, int ldx,
               const attend_real *W, int ldw, attend_real beta, attend_real *Y, int ldy) {
#ifndef ATTEND_DOUBLE
    if (at_linear_quantized(q, N) && out >= 1 && ldw == q->cols &&
        (uintptr_t)W >= (uintptr_t)q->f) {
        size_t off = (size_t)((uintptr_t)W - (uintptr_t)q->f) / sizeof *W;
        size_t r0 = off / (size_t)ldw, c0 = off % (size_t)ldw;
        if (r0 + (size_t)out <= (size_t)q->rows && c0 + (size_t)(in > 0 ? in : 0) <= (size_t)q->cols) {
            if (q->dtype == ATTEND_DTYPE_I8)
                at_q8_gemm(N, out, in, X, ldx, q->i8 + off, q->scale + r0, ldw, beta, Y, ldy);
            else
                at_f16_gemm(N, out, in, X, ldx, q->f16 + off, ldw, beta, Y, ldy);
            return;
        }
    }
#else
    (void)q;
#endif
    at_gemm_w(0, 1, N, out, in, 1, X, ldx, W, ldw, pk, beta, Y, ldy);
}
