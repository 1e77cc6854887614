/*
 * gemm_tile.h — the portable GEMM's vector code for one vector width,
 * included by src/core/gemm.c once per width (no include guard). Before each
 * inclusion gemm.c defines
 *     TILE_BYTES   bytes of one vector: 16 (SSE2/NEON), 32 (AVX2), 64 (AVX-512)
 *     TILE_NV      vectors per micro-tile row: NR = TILE_NV * lanes
 *     TILE_MR      rows of the micro-tile (MR accumulator rows)
 * and gets the functions below with the suffix _<TILE_BYTES>. The width is the
 * register's own, so the compiler maps each vector to one register at the
 * level that uses it (a wider vector than the level's registers is split
 * through memory by gcc). All functions are always-inline: they become code of
 * the AT_KERNEL copy (baseline, AVX2, AVX-512) that calls them.
 *
 * Shapes: row-major, C [M,N] = alpha op(A) [M,K] op(B) [K,N] + beta C.
 */
#define TILE_CAT2(a, b) a##_##b
#define TILE_CAT(a, b) TILE_CAT2(a, b)
#define T_(name) TILE_CAT(name, TILE_BYTES)

#define TV T_(vec)                                  /* one vector */
#define TVL ((int)(TILE_BYTES / sizeof(attend_real))) /* its lanes */
#define TNR (TILE_NV * TVL)                         /* micro-tile width */

typedef attend_real T_(vec) __attribute__((vector_size(TILE_BYTES)));

static AT_ALWAYS_INLINE TV T_(vload)(const attend_real *p) { /* p [TVL], any alignment */
    TV v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* (Vectors go by pointer: a 64-byte vector argument draws gcc's ABI note.) */
static AT_ALWAYS_INLINE void T_(vstore)(attend_real *p, const TV *v) { /* p [TVL] */
    memcpy(p, v, sizeof *v);
}

/* The first n (<= TVL) values at p, zeros after. */
static AT_ALWAYS_INLINE TV T_(vload_part)(const attend_real *p, int n) { /* p [n] */
    TV v = {0};
    for (int e = 0; e < n; e++) v[e] = p[e];
    return v;
}

/* The lanes added pairwise down to one 16-byte vector. */
static AT_ALWAYS_INLINE vec_16 T_(vhalve)(const TV *vp) {
    const TV v = *vp;
    vec_16 q;
#if TILE_BYTES == 64
    vec_32 lo, hi;
    memcpy(&lo, &v, sizeof lo);
    memcpy(&hi, (char *)&v + sizeof lo, sizeof hi);
    lo += hi;
    vec_16 q1;
    memcpy(&q, &lo, sizeof q);
    memcpy(&q1, (char *)&lo + sizeof q, sizeof q1);
    q += q1;
#elif TILE_BYTES == 32
    vec_16 q1;
    memcpy(&q, &v, sizeof q);
    memcpy(&q1, (char *)&v + sizeof q, sizeof q1);
    q += q1;
#else
    q = v;
#endif
    return q;
}

#if TILE_BYTES == 16
/* The sum of a 16-byte vector's lanes, (q0 + q1) + (q2 + q3) for floats. */
static AT_ALWAYS_INLINE attend_real lanesum_16(vec_16 q) {
#ifdef ATTEND_DOUBLE
    return q[0] + q[1];
#else
    return (q[0] + q[1]) + (q[2] + q[3]);
#endif
}

/* out[r] = lanesum_16(q[r]) for four vectors at once (a transpose, then
 * vector adds in the same order: the same bits as lanesum_16). */
static AT_ALWAYS_INLINE void lanesum4_16(const vec_16 *q /* [4] */, attend_real *out /* [4] */) {
#ifdef ATTEND_DOUBLE
    const vec_16 s01 = __builtin_shufflevector(q[0], q[1], 0, 2) + __builtin_shufflevector(q[0], q[1], 1, 3);
    const vec_16 s23 = __builtin_shufflevector(q[2], q[3], 0, 2) + __builtin_shufflevector(q[2], q[3], 1, 3);
    vstore_16(out, &s01);
    vstore_16(out + 2, &s23);
#else
    const vec_16 t0 = __builtin_shufflevector(q[0], q[1], 0, 4, 1, 5), t1 = __builtin_shufflevector(q[0], q[1], 2, 6, 3, 7);
    const vec_16 t2 = __builtin_shufflevector(q[2], q[3], 0, 4, 1, 5), t3 = __builtin_shufflevector(q[2], q[3], 2, 6, 3, 7);
    const vec_16 s = (__builtin_shufflevector(t0, t2, 0, 1, 4, 5) + __builtin_shufflevector(t0, t2, 2, 3, 6, 7)) +
                     (__builtin_shufflevector(t1, t3, 0, 1, 4, 5) + __builtin_shufflevector(t1, t3, 2, 3, 6, 7));
    vstore_16(out, &s);
#endif
}
#endif

/* Sum of the lanes: halving down to 16 bytes, then pairwise (the same order
 * for every element, one row or four). */
static AT_ALWAYS_INLINE attend_real T_(vsum)(const TV *vp) {
    return lanesum_16(T_(vhalve)(vp));
}

/* out[e*os] = alpha acc[e] + beta out[e*os] for e < n (n <= TVL); beta = 0
 * never reads out. Every store of the portable kernel goes through here, so an
 * element's last operation is the same vector expression wherever it lies. */
static AT_ALWAYS_INLINE void T_(store_lanes)(attend_real *out, size_t os, int n, const TV *accp, attend_real alpha,
                                              attend_real beta) {
    const TV acc = *accp;
    const int whole = os == 1 && n == TVL;
    TV r;
    if (beta == 0) {
        r = alpha * acc;
    } else {
        TV c = {0};
        if (whole) c = T_(vload)(out);
        else
            for (int e = 0; e < n; e++) c[e] = out[(size_t)e * os];
        r = alpha * acc + beta * c;
    }
    if (whole) T_(vstore)(out, &r);
    else
        for (int e = 0; e < n; e++) out[(size_t)e * os] = r[e];
}

/* out[j*os] = alpha Σ_p x[p] Mat[p*ldm + j] + beta out[j*os] for j < n:
 * a vector times a matrix stored [K, n] (rows of Mat contiguous). Four
 * vectors of outputs stay in registers over all of K. */
static AT_ALWAYS_INLINE void T_(gemv_rows)(int n, int K, attend_real alpha, const attend_real *restrict x /* [K] */,
                                            const attend_real *restrict Mat /* [K,ldm] */, int ldm, attend_real beta,
                                            attend_real *out /* [n] stride os */, size_t os) {
    int j = 0;
    for (; j + 4 * TVL <= n; j += 4 * TVL) {
        TV a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        for (int p = 0; p < K; p++) {
            const attend_real xp = x[p];
            const attend_real *row = Mat + (size_t)p * ldm + j;
            a0 += xp * T_(vload)(row);
            a1 += xp * T_(vload)(row + TVL);
            a2 += xp * T_(vload)(row + 2 * TVL);
            a3 += xp * T_(vload)(row + 3 * TVL);
        }
        T_(store_lanes)(out + (size_t)j * os, os, TVL, &a0, alpha, beta);
        T_(store_lanes)(out + (size_t)(j + TVL) * os, os, TVL, &a1, alpha, beta);
        T_(store_lanes)(out + (size_t)(j + 2 * TVL) * os, os, TVL, &a2, alpha, beta);
        T_(store_lanes)(out + (size_t)(j + 3 * TVL) * os, os, TVL, &a3, alpha, beta);
    }
    for (; j + TVL <= n; j += TVL) {
        TV a0 = {0};
        for (int p = 0; p < K; p++) a0 += x[p] * T_(vload)(Mat + (size_t)p * ldm + j);
        T_(store_lanes)(out + (size_t)j * os, os, TVL, &a0, alpha, beta);
    }
    if (j < n) {
        TV a0 = {0};
        for (int p = 0; p < K; p++) a0 += x[p] * T_(vload_part)(Mat + (size_t)p * ldm + j, n - j);
        T_(store_lanes)(out + (size_t)j * os, os, n - j, &a0, alpha, beta);
    }
}

/* gemv_rows over K in slices of GEMV_SLICE rows when K is long (issue 25's
 * additive kernel: the gradient of v is 1 x A over N*T*S = 131 072 rows): each
 * group of four output vectors would stream the whole matrix from memory
 * once; a slice stays in cache for all the groups. Later slices add to out. */
#define GEMV_SLICE 512
static AT_ALWAYS_INLINE void T_(gemv_rows_sliced)(int n, int K, attend_real alpha, const attend_real *restrict x,
                                                   const attend_real *restrict Mat /* [K,ldm] */, int ldm,
                                                   attend_real beta, attend_real *out /* [n] stride os */, size_t os) {
    if (K <= 2 * GEMV_SLICE) { /* K alone decides: a thread's share of the columns sums as the whole does */
        T_(gemv_rows)(n, K, alpha, x, Mat, ldm, beta, out, os);
        return;
    }
    for (int p = 0; p < K; p += GEMV_SLICE)
        T_(gemv_rows)(n, K - p < GEMV_SLICE ? K - p : GEMV_SLICE, alpha, x + p, Mat + (size_t)p * ldm, ldm,
                      p == 0 ? beta : 1, out, os);
}
#undef GEMV_SLICE

/* out[j*os] = alpha Σ_p x[p] Mat[j*ldm + p] + beta out[j*os] for j < n:
 * one dot product per row of a matrix stored [n, K], four rows at a time. */
static AT_ALWAYS_INLINE void T_(gemv_dots)(int n, int K, attend_real alpha, const attend_real *restrict x /* [K] */,
                                            const attend_real *restrict Mat /* [n,ldm] */, int ldm, attend_real beta,
                                            attend_real *out /* [n] stride os */, size_t os) {
    const int kv = K - K % TVL;
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        const attend_real *r0 = Mat + (size_t)j * ldm, *r1 = r0 + ldm, *r2 = r1 + ldm, *r3 = r2 + ldm;
        TV a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        for (int p = 0; p < kv; p += TVL) {
            const TV xv = T_(vload)(x + p);
            a0 += xv * T_(vload)(r0 + p);
            a1 += xv * T_(vload)(r1 + p);
            a2 += xv * T_(vload)(r2 + p);
            a3 += xv * T_(vload)(r3 + p);
        }
        if (kv < K) {
            const TV xv = T_(vload_part)(x + kv, K - kv);
            a0 += xv * T_(vload_part)(r0 + kv, K - kv);
            a1 += xv * T_(vload_part)(r1 + kv, K - kv);
            a2 += xv * T_(vload_part)(r2 + kv, K - kv);
            a3 += xv * T_(vload_part)(r3 + kv, K - kv);
        }
        const vec_16 h[4] = {T_(vhalve)(&a0), T_(vhalve)(&a1), T_(vhalve)(&a2), T_(vhalve)(&a3)};
        attend_real sums[4];
        lanesum4_16(h, sums);
        for (int q = 0; q < 4; q += TVL) { /* TVL is 2 for doubles in 16 bytes */
            const int cnt = 4 - q < TVL ? 4 - q : TVL;
            const TV sv = T_(vload_part)(sums + q, cnt);
            T_(store_lanes)(out + (size_t)(j + q) * os, os, cnt, &sv, alpha, beta);
        }
    }
    for (; j < n; j++) {
        const attend_real *r0 = Mat + (size_t)j * ldm;
        TV a0 = {0};
        for (int p = 0; p < kv; p += TVL) a0 += T_(vload)(x + p) * T_(vload)(r0 + p);
        if (kv < K) a0 += T_(vload_part)(x + kv, K - kv) * T_(vload_part)(r0 + kv, K - kv);
        TV s = {0};
        s[0] = T_(vsum)(&a0);
        T_(store_lanes)(out + (size_t)j * os, os, 1, &s, alpha, beta);
    }
}

#if TILE_BYTES == 16
/* dst[c*ldd + r] = src[r*lds + c] for r < rows, c < cols: a transposing copy
 * (the packing of rows into depth-major panels), in 4 x 4 float (2 x 2
 * double) blocks of 16-byte vectors, the edges element by element. Defined
 * once, with the first width. */
#define TQ ((int)(16 / sizeof(attend_real))) /* block side */
static AT_ALWAYS_INLINE void transpose_into(attend_real *restrict dst, size_t ldd, const attend_real *restrict src,
                                            size_t lds, int rows, int cols) {
    int r = 0;
    for (; r + TQ <= rows; r += TQ) {
        int c = 0;
        for (; c + TQ <= cols; c += TQ) {
#ifdef ATTEND_DOUBLE
            const vec_16 x0 = vload_16(src + r * lds + c), x1 = vload_16(src + (r + 1) * lds + c);
            const vec_16 y[2] = {__builtin_shufflevector(x0, x1, 0, 2), __builtin_shufflevector(x0, x1, 1, 3)};
#else
            const vec_16 x0 = vload_16(src + r * lds + c), x1 = vload_16(src + (r + 1) * lds + c);
            const vec_16 x2 = vload_16(src + (r + 2) * lds + c), x3 = vload_16(src + (r + 3) * lds + c);
            const vec_16 t0 = __builtin_shufflevector(x0, x1, 0, 4, 1, 5), t1 = __builtin_shufflevector(x0, x1, 2, 6, 3, 7);
            const vec_16 t2 = __builtin_shufflevector(x2, x3, 0, 4, 1, 5), t3 = __builtin_shufflevector(x2, x3, 2, 6, 3, 7);
            const vec_16 y[4] = {__builtin_shufflevector(t0, t2, 0, 1, 4, 5), __builtin_shufflevector(t0, t2, 2, 3, 6, 7),
                                 __builtin_shufflevector(t1, t3, 0, 1, 4, 5), __builtin_shufflevector(t1, t3, 2, 3, 6, 7)};
#endif
            for (int q = 0; q < TQ; q++) vstore_16(dst + (c + q) * ldd + r, &y[q]);
        }
        for (; c < cols; c++)
            for (int q = 0; q < TQ; q++) dst[c * ldd + r + q] = src[(r + q) * lds + c];
    }
#ifndef ATTEND_DOUBLE
    /* Two rows left (rows 4-5 of every 6-row A panel at TILE_MR 6: a third of
     * the packing, element by element before; issue 25's scaled-dot profile):
     * 4 columns at a time, interleaved pairs stored 8 bytes per column. */
    for (; r + 2 <= rows; r += 2) {
        int c = 0;
        for (; c + TQ <= cols; c += TQ) {
            const vec_16 x0 = vload_16(src + r * lds + c), x1 = vload_16(src + (r + 1) * lds + c);
            const vec_16 t0 = __builtin_shufflevector(x0, x1, 0, 4, 1, 5), t1 = __builtin_shufflevector(x0, x1, 2, 6, 3, 7);
            memcpy(dst + c * ldd + r, &t0, 2 * sizeof(attend_real));
            memcpy(dst + (c + 1) * ldd + r, (const attend_real *)&t0 + 2, 2 * sizeof(attend_real));
            memcpy(dst + (c + 2) * ldd + r, &t1, 2 * sizeof(attend_real));
            memcpy(dst + (c + 3) * ldd + r, (const attend_real *)&t1 + 2, 2 * sizeof(attend_real));
        }
        for (; c < cols; c++) {
            dst[c * ldd + r] = src[r * lds + c];
            dst[c * ldd + r + 1] = src[(r + 1) * lds + c];
        }
    }
#endif
    for (; r < rows; r++)
        for (int c = 0; c < cols; c++) dst[c * ldd + r] = src[r * lds + c];
}
#undef TQ
#endif

/* Packs op(A) rows [0,mc) x depth [0,kc) (A already offset to the block) into
 * TILE_MR-tall panels: panel r holds rows r*MR.., each depth step MR values,
 * rows past mc zero. */
static AT_ALWAYS_INLINE void T_(pack_a)(attend_real *restrict dst /* [ceil(mc/MR)*MR, kc] panels */, int transA,
                                         const attend_real *restrict A, int lda, int mc, int kc) {
    for (int ir = 0; ir < mc; ir += TILE_MR) {
        attend_real *panel = dst + (size_t)ir * kc;
        const int m = mc - ir < TILE_MR ? mc - ir : TILE_MR;
        if (!transA) { /* op(A)(i,p) = A[i*lda + p]: rows contiguous */
            transpose_into(panel, TILE_MR, A + (size_t)ir * lda, (size_t)lda, m, kc);
        } else if (m == TILE_MR) { /* op(A)(i,p) = A[p*lda + i]: a whole panel, a constant-size copy per step */
            for (int p = 0; p < kc; p++) {
                const attend_real *src = A + (size_t)p * lda + ir;
                AT_UNROLL
                for (int i = 0; i < TILE_MR; i++) panel[(size_t)p * TILE_MR + i] = src[i];
            }
        } else { /* the last rows (gcc would call memmove for each step of a variable-length copy) */
            for (int p = 0; p < kc; p++) {
                const attend_real *src = A + (size_t)p * lda + ir;
                for (int i = 0; i < m; i++) panel[(size_t)p * TILE_MR + i] = src[i];
            }
        }
        for (int i = m; i < TILE_MR; i++)
            for (int p = 0; p < kc; p++) panel[(size_t)p * TILE_MR + i] = 0;
    }
}

/* Packs op(B) depth [0,kc) x columns [0,nc) into NR-wide panels: panel c
 * holds columns c*NR.., each depth step NR values, columns past nc zero. */
static AT_ALWAYS_INLINE void T_(pack_b)(attend_real *restrict dst /* [ceil(nc/NR)*NR, kc] panels */, int transB,
                                         const attend_real *restrict B, int ldb, int kc, int nc) {
    for (int jr = 0; jr < nc; jr += TNR) {
        attend_real *panel = dst + (size_t)jr * kc;
        const int n = nc - jr < TNR ? nc - jr : TNR;
        if (!transB) { /* op(B)(p,j) = B[p*ldb + j]: rows contiguous */
            if (n == TNR) {
                for (int p = 0; p < kc; p++)
                    for (int v = 0; v < TILE_NV; v++) {
                        const TV t = T_(vload)(B + (size_t)p * ldb + jr + v * TVL);
                        T_(vstore)(panel + (size_t)p * TNR + v * TVL, &t);
                    }
            } else {
                for (int p = 0; p < kc; p++)
                    for (int j = 0; j < TNR; j++) panel[(size_t)p * TNR + j] = j < n ? B[(size_t)p * ldb + jr + j] : 0;
            }
        } else { /* op(B)(p,j) = B[j*ldb + p] */
            transpose_into(panel, TNR, B + (size_t)jr * ldb, (size_t)ldb, n, kc);
            for (int j = n; j < TNR; j++)
                for (int p = 0; p < kc; p++) panel[(size_t)p * TNR + j] = 0;
        }
    }
}

/* C tile [m<=MR, n<=NR] = alpha Σ_p a[p,:]ᵀ b[p,:] + beta C over kc depth
 * steps of one A panel a [kc,MR] and one B panel b [kc,NR]; MR x NV vector
 * accumulators stay in registers. */
static AT_ALWAYS_INLINE void T_(micro)(int kc, const attend_real *restrict a, const attend_real *restrict b,
                                        attend_real *C /* [m,ldc] */, int ldc, int m, int n, attend_real alpha,
                                        attend_real beta) {
    TV acc[TILE_MR][TILE_NV];
    AT_UNROLL
    for (int i = 0; i < TILE_MR; i++) {
        AT_UNROLL
        for (int v = 0; v < TILE_NV; v++) acc[i][v] = (TV){0};
    }
    /* The tile's rows of C are read (beta != 0) or written after the depth
     * loop: ask for their lines now, so that the misses overlap the
     * arithmetic instead of following it (at a shallow kc, as the attention
     * products' K = 64, they were a third of the time when C was cold). */
    for (int i = 0; i < m; i++) {
        __builtin_prefetch(C + (size_t)i * ldc, 1, 3);
        __builtin_prefetch(C + (size_t)i * ldc + n - 1, 1, 3);
    }
    for (int p = 0; p < kc; p++) {
        TV bv[TILE_NV];
        AT_UNROLL
        for (int v = 0; v < TILE_NV; v++) bv[v] = T_(vload)(b + (size_t)p * TNR + v * TVL);
        const attend_real *ap = a + (size_t)p * TILE_MR;
        AT_UNROLL
        for (int i = 0; i < TILE_MR; i++) {
            const attend_real ai = ap[i];
            AT_UNROLL
            for (int v = 0; v < TILE_NV; v++) acc[i][v] += ai * bv[v];
        }
    }
    if (m == TILE_MR && n == TNR) {
        AT_UNROLL
        for (int i = 0; i < TILE_MR; i++) {
            AT_UNROLL
            for (int v = 0; v < TILE_NV; v++)
                T_(store_lanes)(C + (size_t)i * ldc + v * TVL, 1, TVL, &acc[i][v], alpha, beta);
        }
    } else {
        for (int i = 0; i < m; i++)
            for (int v = 0; v < TILE_NV && v * TVL < n; v++) {
                const int left = n - v * TVL;
                T_(store_lanes)(C + (size_t)i * ldc + v * TVL, 1, left < TVL ? left : TVL, &acc[i][v], alpha, beta);
            }
    }
}

/* Packs all of op(B) [K,N] once, as gemm_blocked packs it slice by slice:
 * for each KC-deep slice pc (depth kc), ceil(N/NR) panels of kc x NR at
 * dst + pc * npad + jr * kc (npad = N rounded up to whole panels). A weight
 * multiplied at every time step is packed like this once (src/core/gemm.c,
 * at_pack), and gemm_blocked reads it in place of pack_b's per-call copy:
 * the same values in the same order, so the same bits. */
static AT_ALWAYS_INLINE void T_(pack_b_all)(attend_real *restrict dst /* [K, npad] */, int transB,
                                             const attend_real *restrict B, int ldb, int K, int N) {
    const int npad = (N + TNR - 1) / TNR * TNR;
    for (int pc = 0; pc < K; pc += KC) {
        const int kc = K - pc < KC ? K - pc : KC;
        T_(pack_b)(dst + (size_t)pc * npad, transB, transB ? B + pc : B + (size_t)pc * ldb, ldb, kc, N);
    }
}

/* The blocked product (K >= 1) through the thread's packing buffers, or with
 * op(B) packed beforehand (Bpre: pack_b_all's layout, npad columns; this
 * product is its columns [col0, col0 + N), col0 a multiple of NR). One body
 * for both, so that they get the same register allocation (a separate copy
 * for the prepacked case spilled a B vector in the micro-kernel's loop). */
static AT_ALWAYS_INLINE void T_(gemm_blocked)(int transA, int transB, int M, int N, int K, attend_real alpha,
                                               const attend_real *A, int lda, const attend_real *B, int ldb,
                                               const attend_real *Bpre, int npad, int col0, attend_real beta,
                                               attend_real *C, int ldc) {
    attend_real *Ap = (attend_real *)pack_a, *Bp = (attend_real *)pack_b;
    const int MC = (MC_MAX / TILE_MR) * TILE_MR;
    for (int jc = 0; jc < N; jc += NC) {
        const int nc = N - jc < NC ? N - jc : NC;
        for (int pc = 0; pc < K; pc += KC) {
            const int kc = K - pc < KC ? K - pc : KC;
            const attend_real *Bs;
            if (Bpre) {
                Bs = Bpre + (size_t)pc * npad + (size_t)(col0 + jc) * kc;
            } else {
                T_(pack_b)(Bp, transB, transB ? B + (size_t)jc * ldb + pc : B + (size_t)pc * ldb + jc, ldb, kc, nc);
                Bs = Bp;
            }
            const attend_real be = pc == 0 ? beta : 1; /* later slices add to C */
            for (int ic = 0; ic < M; ic += MC) {
                const int mc = M - ic < MC ? M - ic : MC;
                T_(pack_a)(Ap, transA, transA ? A + (size_t)pc * lda + ic : A + (size_t)ic * lda + pc, lda, mc, kc);
                for (int jr = 0; jr < nc; jr += TNR)
                    for (int ir = 0; ir < mc; ir += TILE_MR)
                        T_(micro)(kc, Ap + (size_t)ir * kc, Bs + (size_t)jr * kc, C + (size_t)(ic + ir) * ldc + jc + jr,
                                  ldc, mc - ir < TILE_MR ? mc - ir : TILE_MR, nc - jr < TNR ? nc - jr : TNR, alpha, be);
            }
        }
    }
}

/* The portable product C = alpha op(A) op(B) + beta C (K >= 1) by `path`. */
static AT_ALWAYS_INLINE void T_(gemm)(int path, int transA, int transB, int M, int N, int K, attend_real alpha,
                                       const attend_real *A, int lda, const attend_real *B, int ldb,
                                       const attend_real *Bpre, int npad, int col0, attend_real beta, attend_real *C,
                                       int ldc) {
    if (path == PATH_ROW) { /* c [N] = alpha a [K] op(B) [K,N] + beta c */
        const attend_real *x = A;
        if (transA) { /* a[p] = A[p*lda]: gather it */
            attend_real *g = (attend_real *)pack_a;
            for (int p = 0; p < K; p++) g[p] = A[(size_t)p * lda];
            x = g;
        }
        if (transB) T_(gemv_dots)(N, K, alpha, x, B, ldb, beta, C, 1);
        else T_(gemv_rows_sliced)(N, K, alpha, x, B, ldb, beta, C, 1);
    } else if (path == PATH_COL) { /* c [M] (stride ldc) = alpha op(A) [M,K] b [K] + beta c */
        const attend_real *x = B;
        if (!transB) { /* b[p] = B[p*ldb] */
            attend_real *g = (attend_real *)pack_a;
            for (int p = 0; p < K; p++) g[p] = B[(size_t)p * ldb];
            x = g;
        }
        if (transA) T_(gemv_rows_sliced)(M, K, alpha, x, A, lda, beta, C, (size_t)ldc);
        else T_(gemv_dots)(M, K, alpha, x, A, lda, beta, C, (size_t)ldc);
    } else {
        T_(gemm_blocked)(transA, transB, M, N, K, alpha, A, lda, B, ldb, Bpre, npad, col0, beta, C, ldc);
    }
}

/* Batch entries of at_gemm_batched with M == 1 (through the matrix-vector
 * code) or K == 1 (a rank-1 update C = alpha a bᵀ + beta C). */
static AT_ALWAYS_INLINE void T_(batched_small)(int batch, int transA, int transB, int M, int N, int K,
                                                attend_real alpha, const attend_real *A, int lda, size_t strideA,
                                                const attend_real *B, int ldb, size_t strideB, attend_real beta,
                                                attend_real *C, int ldc, size_t strideC) {
    for (int b = 0; b < batch; b++) {
        const attend_real *Ab = A + (size_t)b * strideA, *Bb = B + (size_t)b * strideB;
        attend_real *Cb = C + (size_t)b * strideC;
        if (M == 1) {
            T_(gemm)(PATH_ROW, transA, transB, 1, N, K, alpha, Ab, lda, Bb, ldb, NULL, 0, 0, beta, Cb, ldc);
        } else { /* K == 1: a [M] at Ab[i*astep], b [N] at Bb[j*bstep] */
            const size_t astep = transA ? 1 : (size_t)lda, bstep = transB ? (size_t)ldb : 1;
            for (int i = 0; i < M; i++) {
                attend_real *c = Cb + (size_t)i * ldc;
                const attend_real ai = Ab[(size_t)i * astep];
                int j = 0;
                if (bstep == 1)
                    for (; j + TVL <= N; j += TVL) {
                        const TV t = ai * T_(vload)(Bb + j);
                        T_(store_lanes)(c + j, 1, TVL, &t, alpha, beta);
                    }
                for (; j < N; j += TVL) {
                    const int n = N - j < TVL ? N - j : TVL;
                    TV bv = {0};
                    for (int e = 0; e < n; e++) bv[e] = Bb[(size_t)(j + e) * bstep];
                    const TV t = ai * bv;
                    T_(store_lanes)(c + j, 1, n, &t, alpha, beta);
                }
            }
        }
    }
}

/* dst [cols] += Σ_r rows[r,:] over rows [R,cols]: two vectors of dst in
 * registers over all rows, then the tail column by column (the same
 * additions in the same order for every element). */
static AT_ALWAYS_INLINE void T_(rows_sum)(attend_real *restrict dst, const attend_real *restrict rows, size_t R,
                                           int cols) {
    int k = 0;
    for (; k + 2 * TVL <= cols; k += 2 * TVL) {
        TV s0 = T_(vload)(dst + k), s1 = T_(vload)(dst + k + TVL);
        for (size_t r = 0; r < R; r++) {
            s0 += T_(vload)(rows + r * cols + k);
            s1 += T_(vload)(rows + r * cols + k + TVL);
        }
        T_(vstore)(dst + k, &s0);
        T_(vstore)(dst + k + TVL, &s1);
    }
    for (; k < cols; k++) {
        attend_real s = dst[k];
        for (size_t r = 0; r < R; r++) s += rows[r * cols + k];
        dst[k] = s;
    }
}

/* rows [R,cols] += v [cols]. */
static AT_ALWAYS_INLINE void T_(rows_add)(attend_real *restrict rows, const attend_real *restrict v, size_t R,
                                           int cols) {
    for (size_t r = 0; r < R; r++) {
        attend_real *restrict y = rows + r * cols;
        int k = 0;
        for (; k + TVL <= cols; k += TVL) {
            const TV t = T_(vload)(y + k) + T_(vload)(v + k);
            T_(vstore)(y + k, &t);
        }
        for (; k < cols; k++) y[k] += v[k];
    }
}

#undef TV
#undef TVL
#undef TNR
#undef T_
#undef TILE_CAT
#undef TILE_CAT2
#undef TILE_BYTES
#undef TILE_NV
#undef TILE_MR
