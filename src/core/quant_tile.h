/*
 * quant_tile.h — the int8 and fp16 products of quant.c at one vector width,
 * included once per instruction-set level with
 *   QT_BYTES   16 (baseline SSE2), 32 (AVX2), 64 (AVX-512): bytes of a float vector
 *   QT_SUF     the copy's suffix: _isa_base, _isa_avx2, _isa_avx512
 *   QT_TARGET  the copy's target attribute (empty at the baseline)
 *   QT_I8_LOAD(p), QT_F16_LOAD(p)  QT_BYTES/4 int8 values (halves) at p
 *              widened to a float vector (gcc's __builtin_convertvector from
 *              int8 or _Float16 lanes is scalar code, hence intrinsics)
 * It defines q8_gemm<QT_SUF> and f16_gemm<QT_SUF>: Y [N,out] = beta Y +
 * X [N,in] Wᵀ on the calling thread. These are src/isa.h's three copies of one
 * body, written as a template instead of AT_KERNEL because the F16C and
 * AVX-512 conversions are intrinsics, which a function may only use under its
 * own target attribute (AT_KERNEL's body is one function inlined into all
 * three copies, the baseline one included).
 *
 * Blocking: 4 rows of W at a time, each converted once per vector and used by
 * 2 rows of X (8 accumulators, 4 weight and 2 input vectors: 14 of AVX2's 16
 * registers), or for a single row of X by two vectors of columns (8
 * accumulators: 4 dependent FMA chains would wait on the FMA latency); the
 * columns past the last full vector are summed in scalar code.
 */
#define QT_LANES (QT_BYTES / 4)
#define QT_VF QT_CAT(qt_vf, QT_BYTES)
#define QT_FN(name) QT_CAT(name, QT_SUF)

QT_TARGET static AT_ALWAYS_INLINE QT_VF QT_FN(qt_ldf)(const float *p) {
    QT_VF v;
    memcpy(&v, p, sizeof v);
    return v;
}

QT_TARGET static AT_ALWAYS_INLINE QT_VF QT_FN(qt_ld8)(const int8_t *p) { return QT_I8_LOAD(p); }

QT_TARGET static AT_ALWAYS_INLINE QT_VF QT_FN(qt_ld16)(const uint16_t *p) { return QT_F16_LOAD(p); }

/* s [4] = the lane sums of a0..a3: a tree of shuffles and adds (a lane-by-lane
 * sum per row cost as much as the dot products of a 256-column row). */
QT_TARGET static AT_ALWAYS_INLINE void QT_FN(qt_sum4)(QT_VF a0, QT_VF a1, QT_VF a2, QT_VF a3, float *s) {
#if QT_HAVE_SHUFFLE
#if QT_BYTES == 64
    qt_vf32 b0 = __builtin_shufflevector(a0, a0, 0, 1, 2, 3, 4, 5, 6, 7) +
                 __builtin_shufflevector(a0, a0, 8, 9, 10, 11, 12, 13, 14, 15);
    qt_vf32 b1 = __builtin_shufflevector(a1, a1, 0, 1, 2, 3, 4, 5, 6, 7) +
                 __builtin_shufflevector(a1, a1, 8, 9, 10, 11, 12, 13, 14, 15);
    qt_vf32 b2 = __builtin_shufflevector(a2, a2, 0, 1, 2, 3, 4, 5, 6, 7) +
                 __builtin_shufflevector(a2, a2, 8, 9, 10, 11, 12, 13, 14, 15);
    qt_vf32 b3 = __builtin_shufflevector(a3, a3, 0, 1, 2, 3, 4, 5, 6, 7) +
                 __builtin_shufflevector(a3, a3, 8, 9, 10, 11, 12, 13, 14, 15);
#elif QT_BYTES == 32
    qt_vf32 b0 = a0, b1 = a1, b2 = a2, b3 = a3;
#endif
#if QT_BYTES >= 32
    qt_vf32 u = __builtin_shufflevector(b0, b1, 0, 1, 2, 3, 8, 9, 10, 11) +
                __builtin_shufflevector(b0, b1, 4, 5, 6, 7, 12, 13, 14, 15);
    qt_vf32 v = __builtin_shufflevector(b2, b3, 0, 1, 2, 3, 8, 9, 10, 11) +
                __builtin_shufflevector(b2, b3, 4, 5, 6, 7, 12, 13, 14, 15);
    qt_vf32 w = __builtin_shufflevector(u, v, 0, 1, 4, 5, 8, 9, 12, 13) +
                __builtin_shufflevector(u, v, 2, 3, 6, 7, 10, 11, 14, 15);
    qt_vf16 r = __builtin_shufflevector(w, w, 0, 2, 4, 6) + __builtin_shufflevector(w, w, 1, 3, 5, 7);
#else
    qt_vf16 u = __builtin_shufflevector(a0, a1, 0, 1, 4, 5) + __builtin_shufflevector(a0, a1, 2, 3, 6, 7);
    qt_vf16 v = __builtin_shufflevector(a2, a3, 0, 1, 4, 5) + __builtin_shufflevector(a2, a3, 2, 3, 6, 7);
    qt_vf16 r = __builtin_shufflevector(u, v, 0, 2, 4, 6) + __builtin_shufflevector(u, v, 1, 3, 5, 7);
#endif
    memcpy(s, &r, sizeof r);
#else
    const QT_VF *a[4] = {&a0, &a1, &a2, &a3};
    for (int r = 0; r < 4; r++) {
        float t = 0;
        for (int i = 0; i < QT_LANES; i++) t += (*a[r])[i];
        s[r] = t;
    }
#endif
}

/* One block: rows x0 (and x1 when two) against the 4 weight rows w0..w3;
 * s[n*4 + r] receives the dot products. is16 and two are constants after
 * inlining. */
QT_TARGET static AT_ALWAYS_INLINE void QT_FN(qt_block)(const int is16, const int two, int in, const float *x0,
                                                    const float *x1, const void *w0, const void *w1,
                                                    const void *w2, const void *w3, float s[8]) {
#define QT_W(p, k) (is16 ? QT_FN(qt_ld16)((const uint16_t *)(p) + (k)) : QT_FN(qt_ld8)((const int8_t *)(p) + (k)))
#define QT_WS(p, k) (is16 ? qt_f16_float(((const uint16_t *)(p))[k]) : (float)((const int8_t *)(p))[k])
    QT_VF a00 = {0}, a01 = {0}, a02 = {0}, a03 = {0}, a10 = {0}, a11 = {0}, a12 = {0}, a13 = {0};
    int k = 0;
    if (!two) { /* one row of X: a second set of accumulators (the next vector of columns) hides the FMA latency */
        for (; k + 2 * QT_LANES <= in; k += 2 * QT_LANES) {
            QT_VF v0 = QT_W(w0, k), v1 = QT_W(w1, k), v2 = QT_W(w2, k), v3 = QT_W(w3, k);
            QT_VF xa = QT_FN(qt_ldf)(x0 + k);
            a00 += xa * v0;
            a01 += xa * v1;
            a02 += xa * v2;
            a03 += xa * v3;
            v0 = QT_W(w0, k + QT_LANES);
            v1 = QT_W(w1, k + QT_LANES);
            v2 = QT_W(w2, k + QT_LANES);
            v3 = QT_W(w3, k + QT_LANES);
            xa = QT_FN(qt_ldf)(x0 + k + QT_LANES);
            a10 += xa * v0;
            a11 += xa * v1;
            a12 += xa * v2;
            a13 += xa * v3;
        }
        a00 += a10;
        a01 += a11;
        a02 += a12;
        a03 += a13;
    }
    for (; k + QT_LANES <= in; k += QT_LANES) {
        QT_VF v0 = QT_W(w0, k), v1 = QT_W(w1, k), v2 = QT_W(w2, k), v3 = QT_W(w3, k);
        QT_VF xa = QT_FN(qt_ldf)(x0 + k);
        a00 += xa * v0;
        a01 += xa * v1;
        a02 += xa * v2;
        a03 += xa * v3;
        if (two) {
            QT_VF xb = QT_FN(qt_ldf)(x1 + k);
            a10 += xb * v0;
            a11 += xb * v1;
            a12 += xb * v2;
            a13 += xb * v3;
        }
    }
    QT_FN(qt_sum4)(a00, a01, a02, a03, s);
    if (two) QT_FN(qt_sum4)(a10, a11, a12, a13, s + 4);
    for (; k < in; k++) {
        float u0 = QT_WS(w0, k), u1 = QT_WS(w1, k), u2 = QT_WS(w2, k), u3 = QT_WS(w3, k);
        s[0] += x0[k] * u0;
        s[1] += x0[k] * u1;
        s[2] += x0[k] * u2;
        s[3] += x0[k] * u3;
        if (two) {
            s[4] += x1[k] * u0;
            s[5] += x1[k] * u1;
            s[6] += x1[k] * u2;
            s[7] += x1[k] * u3;
        }
    }
#undef QT_W
#undef QT_WS
}

/* The product for either storage (is16 constant after inlining). */
QT_TARGET static AT_ALWAYS_INLINE void QT_FN(qt_gemm)(const int is16, int N, int out, int in, const float *X, int ldx,
                                                   const void *W, const float *scale, int ldw, float beta, float *Y,
                                                   int ldy) {
    const size_t esz = is16 ? 2 : 1;
    for (int o = 0; o < out; o += 4) {
        const int ro = out - o < 4 ? out - o : 4; /* rows past the end repeat row o; their sums are dropped */
        const char *w0 = (const char *)W + (size_t)o * ldw * esz;
        const char *w1 = ro > 1 ? w0 + (size_t)ldw * esz : w0, *w2 = ro > 2 ? w0 + 2 * (size_t)ldw * esz : w0,
                   *w3 = ro > 3 ? w0 + 3 * (size_t)ldw * esz : w0;
        for (int n = 0; n < N; n += 2) {
            const int rn = N - n < 2 ? 1 : 2;
            const float *x0 = X + (size_t)n * ldx;
            float s[8];
            if (rn == 2) QT_FN(qt_block)(is16, 1, in, x0, x0 + ldx, w0, w1, w2, w3, s);
            else QT_FN(qt_block)(is16, 0, in, x0, x0, w0, w1, w2, w3, s);
            for (int j = 0; j < rn; j++)
                for (int r = 0; r < ro; r++) {
                    float v = is16 ? s[4 * j + r] : s[4 * j + r] * scale[o + r];
                    float *y = Y + (size_t)(n + j) * ldy + o + r;
                    *y = beta == 0 ? v : beta * *y + v;
                }
        }
    }
}

QT_TARGET static void QT_FN(q8_gemm)(int N, int out, int in, const float *X, int ldx, const int8_t *W,
                                     const float *scale, int ldw, float beta, float *Y, int ldy) {
    QT_FN(qt_gemm)(0, N, out, in, X, ldx, W, scale, ldw, beta, Y, ldy);
}

QT_TARGET static void QT_FN(f16_gemm)(int N, int out, int in, const float *X, int ldx, const uint16_t *W, int ldw,
                                      float beta, float *Y, int ldy) {
    QT_FN(qt_gemm)(1, N, out, in, X, ldx, W, NULL, ldw, beta, Y, ldy);
}

#undef QT_LANES
#undef QT_VF
#undef QT_FN
#undef QT_BYTES
#undef QT_SUF
#undef QT_TARGET
#undef QT_F16_LOAD
#undef QT_I8_LOAD
