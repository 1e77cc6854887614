/*
 * gemm.c — the one matrix-multiply shim. Every matrix product in the library
 * goes through at_gemm, so switching backend (OpenBLAS or the portable loops
 * below) never touches a kernel. Row-major throughout.
 */
#include "internal.h"
#include "vmath.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef ATTEND_USE_CBLAS
#include <cblas.h>
#endif

const char *attend_gemm_backend(void) {
#ifdef ATTEND_USE_CBLAS
    return "openblas";
#else
    return "portable";
#endif
}

#ifndef ATTEND_USE_CBLAS
/* Portable fallback. Loop orders keep the innermost loop contiguous in C and,
 * where possible, in the operand it streams through. */
static void gemm_portable(int transA, int transB, int M, int N, int K, attend_real alpha,
                          const attend_real *A, int lda, const attend_real *B, int ldb,
                          attend_real beta, attend_real *C, int ldc) {
    for (int i = 0; i < M; i++) {
        attend_real *c = C + (size_t)i * ldc;
        if (beta == 0) {
            for (int j = 0; j < N; j++) c[j] = 0;
        } else if (beta != 1) {
            for (int j = 0; j < N; j++) c[j] *= beta;
        }
    }
    if (!transB) {
        /* C[i,:] += alpha * A(i,p) * B[p,:] */
        for (int i = 0; i < M; i++) {
            attend_real *c = C + (size_t)i * ldc;
            for (int p = 0; p < K; p++) {
                attend_real a = transA ? A[(size_t)p * lda + i] : A[(size_t)i * lda + p];
                a *= alpha;
                const attend_real *b = B + (size_t)p * ldb;
                for (int j = 0; j < N; j++) c[j] += a * b[j];
            }
        }
    } else {
        /* C[i,j] += alpha * Σ_p A(i,p) B[j,p]: dot products along contiguous B rows */
        for (int i = 0; i < M; i++) {
            attend_real *c = C + (size_t)i * ldc;
            for (int j = 0; j < N; j++) {
                const attend_real *b = B + (size_t)j * ldb;
                attend_real acc = 0;
                if (!transA) {
                    const attend_real *a = A + (size_t)i * lda;
                    for (int p = 0; p < K; p++) acc += a[p] * b[p];
                } else {
                    for (int p = 0; p < K; p++) acc += A[(size_t)p * lda + i] * b[p];
                }
                c[j] += alpha * acc;
            }
        }
    }
}
#endif

/* One product on the calling thread. */
static void gemm_one(int transA, int transB, int M, int N, int K, attend_real alpha,
                     const attend_real *A, int lda, const attend_real *B, int ldb,
                     attend_real beta, attend_real *C, int ldc) {
    if (K <= 0) { /* empty sum: C = beta * C */
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                attend_real *c = C + (size_t)i * ldc + j;
                *c = beta == 0 ? 0 : beta * *c;
            }
        return;
    }
#ifdef ATTEND_USE_CBLAS
    if (M == 1) { /* a vector times a matrix: GEMV (c = alpha op(B)ᵀ a + beta c) */
        const int inca = transA ? lda : 1;
#ifdef ATTEND_DOUBLE
        cblas_dgemv(CblasRowMajor, transB ? CblasNoTrans : CblasTrans, transB ? N : K, transB ? K : N, alpha, B, ldb,
                    A, inca, beta, C, 1);
#else
        cblas_sgemv(CblasRowMajor, transB ? CblasNoTrans : CblasTrans, transB ? N : K, transB ? K : N, alpha, B, ldb,
                    A, inca, beta, C, 1);
#endif
        return;
    }
#ifdef ATTEND_DOUBLE
    cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#else
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
#else
    gemm_portable(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
}

/* ---------------------------------------------------------------- threads */

/* OpenBLAS runs every call on the calling thread. At this library's shapes
 * (a decoder step is a few products of 1..256 rows) OpenBLAS's own threads
 * cost more than they bring: each call wakes them and they spin in
 * sched_yield (measured: greedy decoding at batch 1 takes 2.5 ms with them,
 * 0.42 ms without, most of the difference system time; docs/PERFORMANCE.md).
 * With ATTEND_OPENMP the library threads itself instead (below), and
 * OpenBLAS's pthread build would serialize concurrent threaded calls anyway.
 * Done once, before the first product; it sets OpenBLAS's process-wide
 * thread count, as OPENBLAS_NUM_THREADS=1 would. */
#ifdef ATTEND_USE_CBLAS
void openblas_set_num_threads(int num_threads);
static void blas_single_thread(void) {
    static _Atomic int done = 0;
    if (!done) {
        openblas_set_num_threads(1);
        done = 1;
    }
}
#else
static void blas_single_thread(void) {}
#endif

#ifdef _OPENMP
int at_threads(double work) {
    /* below ~64k multiply-adds a fork/join costs more than it saves */
    if (work < 65536.0 || omp_in_parallel()) return 1;
    int nt = omp_get_max_threads();
    double most = work / 32768.0; /* at least 32k per thread */
    if (most < nt) nt = (int)most;
    return nt < 1 ? 1 : nt;
}

void at_thread_range(int n, int align, int *lo, int *hi) {
    int nt = omp_get_num_threads(), id = omp_get_thread_num();
    int chunks = (n + align - 1) / align;
    int c0 = (int)((long)chunks * id / nt), c1 = (int)((long)chunks * (id + 1) / nt);
    *lo = c0 * align < n ? c0 * align : n;
    *hi = c1 * align < n ? c1 * align : n;
}
#else
int at_threads(double work) {
    (void)work;
    return 1;
}

void at_thread_range(int n, int align, int *lo, int *hi) {
    (void)align;
    *lo = 0;
    *hi = n;
}
#endif

void at_gemm(int transA, int transB, int M, int N, int K, attend_real alpha,
             const attend_real *A, int lda, const attend_real *B, int ldb,
             attend_real beta, attend_real *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    blas_single_thread();
    int nt = at_threads((double)M * N * (K > 0 ? K : 1));
    /* split the output rows (or, for few rows, its columns) over the threads:
     * every thread writes its own block of C */
    int by_rows = M >= 32 || M >= N;
    if (nt > 1 && (by_rows ? M : N) < 16 * nt) nt = 1;
    if (nt == 1) {
        gemm_one(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
    {
        int lo, hi;
        at_thread_range(by_rows ? M : N, 16, &lo, &hi);
        if (hi > lo) {
            if (by_rows) /* rows lo..hi of op(A) and C */
                gemm_one(transA, transB, hi - lo, N, K, alpha, transA ? A + lo : A + (size_t)lo * lda, lda, B, ldb,
                         beta, C + (size_t)lo * ldc, ldc);
            else /* columns lo..hi of op(B) and C */
                gemm_one(transA, transB, M, hi - lo, K, alpha, A, lda, transB ? B + (size_t)lo * ldb : B + lo, ldb,
                         beta, C + lo, ldc);
        }
    }
#endif
}

/* Batch entries with one row (M == 1: a vector times a matrix) or a rank-1
 * update (K == 1), the shapes of one decoder step's attention (T = 1): a
 * library call per entry would cost more than the arithmetic, so these run
 * here as vectorized loops over contiguous rows. */
AT_VECTOR static void gemm_batched_small(int batch, int transA, int transB, int M, int N, int K, attend_real alpha,
                                         const attend_real *A, int lda, size_t strideA, const attend_real *B, int ldb,
                                         size_t strideB, attend_real beta, attend_real *C, int ldc, size_t strideC) {
    for (int b = 0; b < batch; b++) {
        const attend_real *Ab = A + (size_t)b * strideA, *Bb = B + (size_t)b * strideB;
        attend_real *Cb = C + (size_t)b * strideC;
        if (M == 1) {
            /* c [N] = beta c + alpha a [K] op(B) [K,N]; a[p] at Ab[p] or, transposed, Ab[p*lda] */
            attend_real *restrict c = Cb;
            const size_t astep = transA ? (size_t)lda : 1;
            if (transB) { /* B stored [N,K]: one dot product per output */
                for (int j = 0; j < N; j++) {
                    const attend_real *restrict bj = Bb + (size_t)j * ldb;
                    attend_real acc = 0;
                    if (astep == 1) {
#pragma omp simd reduction(+ : acc)
                        for (int p = 0; p < K; p++) acc += Ab[p] * bj[p];
                    } else {
                        for (int p = 0; p < K; p++) acc += Ab[(size_t)p * astep] * bj[p];
                    }
                    c[j] = (beta == 0 ? 0 : beta * c[j]) + alpha * acc;
                }
            } else { /* B stored [K,N]: c += (alpha a[p]) B[p,:] row by row */
                if (beta == 0) {
                    for (int j = 0; j < N; j++) c[j] = 0;
                } else if (beta != 1) {
                    for (int j = 0; j < N; j++) c[j] *= beta;
                }
                for (int p = 0; p < K; p++) {
                    const attend_real ap = alpha * Ab[(size_t)p * astep];
                    const attend_real *restrict bp = Bb + (size_t)p * ldb;
#pragma omp simd
                    for (int j = 0; j < N; j++) c[j] += ap * bp[j];
                }
            }
        } else { /* K == 1: C [M,N] = beta C + alpha a bᵀ with a [M], b [N] */
            const size_t astep = transA ? 1 : (size_t)lda, bstep = transB ? (size_t)ldb : 1;
            for (int i = 0; i < M; i++) {
                attend_real *restrict c = Cb + (size_t)i * ldc;
                const attend_real ai = alpha * Ab[(size_t)i * astep];
                if (beta == 0) {
                    for (int j = 0; j < N; j++) c[j] = 0;
                } else if (beta != 1) {
                    for (int j = 0; j < N; j++) c[j] *= beta;
                }
                if (bstep == 1) {
                    const attend_real *restrict bv = Bb;
#pragma omp simd
                    for (int j = 0; j < N; j++) c[j] += ai * bv[j];
                } else {
                    for (int j = 0; j < N; j++) c[j] += ai * Bb[(size_t)j * bstep];
                }
            }
        }
    }
}

void at_gemm_batched(int batch, int transA, int transB, int M, int N, int K, attend_real alpha,
                     const attend_real *A, int lda, size_t strideA,
                     const attend_real *B, int ldb, size_t strideB, attend_real beta,
                     attend_real *C, int ldc, size_t strideC) {
    if (batch <= 0 || M <= 0 || N <= 0) return;
    if (K >= 1 && (M == 1 || K == 1)) {
        /* entries write disjoint blocks of C unless C is shared (strideC 0) */
        AT_PARALLEL_ROWS(strideC ? (double)batch * M * N * K : 0, batch, 1,
                         gemm_batched_small(hi - lo, transA, transB, M, N, K, alpha, A + (size_t)lo * strideA, lda,
                                            strideA, B + (size_t)lo * strideB, ldb, strideB, beta,
                                            C + (size_t)lo * strideC, ldc, strideC));
        return;
    }
    for (int b = 0; b < batch; b++)
        at_gemm(transA, transB, M, N, K, alpha, A + (size_t)b * strideA, lda,
                B + (size_t)b * strideB, ldb, beta, C + (size_t)b * strideC, ldc);
}

AT_VECTOR void at_rows_sum(attend_real *restrict dst, const attend_real *restrict rows, size_t R, int cols) {
    // dst [cols] +=, rows [R,cols]
    for (size_t r = 0; r < R; r++) {
        const attend_real *restrict x = rows + r * cols;
#pragma omp simd
        for (int k = 0; k < cols; k++) dst[k] += x[k];
    }
}

AT_VECTOR void at_rows_add(attend_real *restrict rows, const attend_real *restrict v, size_t R, int cols) {
    // rows [R,cols] +=, v [cols]
    for (size_t r = 0; r < R; r++) {
        attend_real *restrict y = rows + r * cols;
#pragma omp simd
        for (int k = 0; k < cols; k++) y[k] += v[k];
    }
}
