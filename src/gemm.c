/*
 * gemm.c — the one matrix-multiply shim. Every matrix product in the library
 * goes through at_gemm, so switching backend (OpenBLAS or the portable loops
 * below) never touches a kernel. Row-major throughout.
 */
#include "internal.h"

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

void at_gemm(int transA, int transB, int M, int N, int K, attend_real alpha,
             const attend_real *A, int lda, const attend_real *B, int ldb,
             attend_real beta, attend_real *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) { /* empty sum: C = beta * C */
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                attend_real *c = C + (size_t)i * ldc + j;
                *c = beta == 0 ? 0 : beta * *c;
            }
        return;
    }
#ifdef ATTEND_USE_CBLAS
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

void at_gemm_batched(int batch, int transA, int transB, int M, int N, int K, attend_real alpha,
                     const attend_real *A, int lda, size_t strideA,
                     const attend_real *B, int ldb, size_t strideB, attend_real beta,
                     attend_real *C, int ldc, size_t strideC) {
    for (int b = 0; b < batch; b++)
        at_gemm(transA, transB, M, N, K, alpha, A + (size_t)b * strideA, lda,
                B + (size_t)b * strideB, ldb, beta, C + (size_t)b * strideC, ldc);
}
