/*
 * gemm.c — the one matrix-multiply shim. Every matrix product in the library
 * goes through at_gemm, so switching backend (OpenBLAS or the portable kernel
 * below) never touches a kernel. Row-major throughout.
 *
 * Dimension letters here are the GEMM's own: C [M,N] = alpha op(A) [M,K]
 * op(B) [K,N] + beta C.
 *
 * The portable kernel (compiled in every build: the OpenBLAS build tests and
 * benchmarks it against cblas_sgemm) has the GotoBLAS/BLIS structure: for each
 * NC-column block of op(B) and KC-deep slice of K, the [KC,NC] slice of op(B)
 * is packed into NR-wide panels, then for each MC-row block of op(A) the
 * [MC,KC] slice is packed into MR-tall panels, and an MR x NR micro-kernel
 * accumulates one tile of C in registers over the KC slice. The vector code
 * (src/core/gemm_tile.h, GCC/clang vector extensions) is instantiated for 16-, 32-
 * and 64-byte vectors and each instruction-set level (src/core/isa.h) runs its own
 * width with a tile that fits its registers: 4 x 8 floats at the baseline
 * (SSE2), 6 x 16 at AVX2, 14 x 16 at AVX-512. Matrix-vector shapes (M = 1 or
 * N = 1) skip packing: dot products or row sweeps with outputs in registers.
 * Every element of C goes through the same sequence of operations wherever it
 * lies in a tile or block (edge tiles are computed full size on zero-padded
 * panels) and K is never split between threads, so results do not depend on
 * the thread count. The packing buffers are thread-local arrays of fixed size:
 * no allocation.
 */
#include <string.h>

#include "internal.h"
#include "core/isa.h"

/* Multiply-adds contract into FMA instructions at the AVX2/AVX-512 levels
 * (gcc turns contraction off under -std=c11; clang contracts by default).
 * This changes only the last bits, never determinism within one level. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif

/* The 64-byte vector helpers below are static and always inlined: their
 * calling convention is never used, so the ABI note does not apply. */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

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

/* ------------------------------------------------------------ portable kernel */

#define KC 256     /* depth of a packed slice */
#define MC_MAX 128 /* rows of a packed A block */
#define NC ((int)((512 * 1024) / (KC * sizeof(attend_real)))) /* columns of a packed B slice: 512 floats, 256 doubles */

/* Packed A: MC_MAX x KC (128 KiB of floats), packed B: KC x NC (512 KiB), one
 * pair per thread, 64-byte aligned; pack_a is also the gather buffer of the
 * matrix-vector products (up to GEMV_MAXK values). */
typedef attend_real pack_vec __attribute__((vector_size(64)));
#define PACK_LANES ((int)(64 / sizeof(attend_real)))
static _Thread_local pack_vec pack_a[MC_MAX * KC / PACK_LANES];
static _Thread_local pack_vec pack_b[KC * NC / PACK_LANES];
#define GEMV_MAXK (MC_MAX * KC)

/* Which algorithm a shape gets: decided once from the whole product, so that
 * the threads' shares of it all run the same one. */
enum { PATH_BLOCKED = 0, PATH_ROW = 1 /* M == 1 */, PATH_COL = 2 /* N == 1 */ };

static int gemm_path(int M, int N, int K) {
    if (K > GEMV_MAXK) return PATH_BLOCKED;
    if (M == 1) return PATH_ROW;
    if (N == 1) return PATH_COL;
    return PATH_BLOCKED;
}

#if defined(__clang__)
#define AT_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define AT_UNROLL _Pragma("GCC unroll 16")
#else
#define AT_UNROLL
#endif

/* One instantiation of src/core/gemm_tile.h per vector width; the micro-tile is
 * MR x NR with NR = NV vectors, MR x NV accumulators fitting the level's
 * registers (16 xmm, 16 ymm, 32 zmm) beside the B vectors. */
#define TILE_BYTES 16 /* baseline: 6 x 8 floats (6 x 4 doubles) in 12 xmm */
#define TILE_NV 2
#define TILE_MR 6
#include "core/gemm_tile.h"
#define TILE_BYTES 32 /* AVX2: 6 x 16 floats (6 x 8 doubles) in 12 ymm */
#define TILE_NV 2
#define TILE_MR 6
#include "core/gemm_tile.h"
#define TILE_BYTES 64 /* AVX-512: 8 x 32 floats (8 x 16 doubles) in 16 zmm */
#define TILE_NV 2
#define TILE_MR 8
#include "core/gemm_tile.h"

/* The portable product (K >= 1) at level lvl by algorithm path, on the
 * calling thread: each copy runs the width of its own level. */
AT_KERNEL_VOID(static, gemm_run,
               (int lvl, int path, int transA, int transB, int M, int N, int K, attend_real alpha,
                const attend_real *A, int lda, const attend_real *B, int ldb, attend_real beta, attend_real *C,
                int ldc),
               (lvl, path, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)) {
    switch (lvl) {
    case AT_ISA_AVX512: gemm_64(path, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); break;
    case AT_ISA_AVX2: gemm_32(path, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); break;
    default: gemm_16(path, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); break;
    }
}

/* C = beta C for an empty sum (K <= 0); beta = 0 writes zeros without reading. */
static void scale_c(int M, int N, attend_real beta, attend_real *C, int ldc) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            attend_real *c = C + (size_t)i * ldc + j;
            *c = beta == 0 ? 0 : beta * *c;
        }
}

void at_gemm_portable_level(int level, int transA, int transB, int M, int N, int K, attend_real alpha,
                            const attend_real *A, int lda, const attend_real *B, int ldb, attend_real beta,
                            attend_real *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        scale_c(M, N, beta, C, ldc);
        return;
    }
    const int path = gemm_path(M, N, K);
#if AT_ISA_DISPATCH
    if (level > (int)at_isa_supported()) level = (int)at_isa_supported();
    switch (level) {
    case AT_ISA_AVX512:
        gemm_run_isa_avx512(level, path, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    case AT_ISA_AVX2:
        gemm_run_isa_avx2(level, path, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    default:
        gemm_run_isa_base(AT_ISA_BASELINE, path, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
#else
    (void)level;
    gemm_run(AT_ISA_BASELINE, path, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
}

void at_gemm_portable(int transA, int transB, int M, int N, int K, attend_real alpha, const attend_real *A, int lda,
                      const attend_real *B, int ldb, attend_real beta, attend_real *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        scale_c(M, N, beta, C, ldc);
        return;
    }
    gemm_run((int)at_isa(), gemm_path(M, N, K), transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* One product (or one thread's share of one: rows or columns of C) on the
 * calling thread; path is the whole product's (gemm_path). */
static void gemm_one(int path, int transA, int transB, int M, int N, int K, attend_real alpha,
                     const attend_real *A, int lda, const attend_real *B, int ldb,
                     attend_real beta, attend_real *C, int ldc) {
    if (K <= 0) { /* empty sum: C = beta * C */
        scale_c(M, N, beta, C, ldc);
        return;
    }
#ifdef ATTEND_USE_CBLAS
    (void)path;
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
    gemm_run((int)at_isa(), path, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
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
    const int path = gemm_path(M, N, K);
    int nt = at_threads((double)M * N * (K > 0 ? K : 1));
    /* split the output rows (or, for few rows, its columns) over the threads:
     * every thread writes its own block of C; K is never split */
    int by_rows = M >= 32 || M >= N;
    if (nt > 1 && (by_rows ? M : N) < 16 * nt) nt = 1;
    if (nt == 1) {
        gemm_one(path, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
    {
        int lo, hi;
        at_thread_range(by_rows ? M : N, 16, &lo, &hi);
        if (hi > lo) {
            if (by_rows) /* rows lo..hi of op(A) and C */
                gemm_one(path, transA, transB, hi - lo, N, K, alpha, transA ? A + lo : A + (size_t)lo * lda, lda, B,
                         ldb, beta, C + (size_t)lo * ldc, ldc);
            else /* columns lo..hi of op(B) and C */
                gemm_one(path, transA, transB, M, hi - lo, K, alpha, A, lda, transB ? B + (size_t)lo * ldb : B + lo,
                         ldb, beta, C + lo, ldc);
        }
    }
#endif
}

/* Batch entries with one row (M == 1: a vector times a matrix) or a rank-1
 * update (K == 1), the shapes of one decoder step's attention (T = 1): a
 * library call per entry would cost more than the arithmetic, so these run
 * here as vectorized loops over contiguous rows. */
AT_KERNEL_VOID(static, gemm_batched_small,
               (int batch, int transA, int transB, int M, int N, int K, attend_real alpha, const attend_real *A,
                int lda, size_t strideA, const attend_real *B, int ldb, size_t strideB, attend_real beta,
                attend_real *C, int ldc, size_t strideC),
               (batch, transA, transB, M, N, K, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC)) {
    switch (at_isa()) {
    case AT_ISA_AVX512:
        batched_small_64(batch, transA, transB, M, N, K, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc,
                         strideC);
        break;
    case AT_ISA_AVX2:
        batched_small_32(batch, transA, transB, M, N, K, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc,
                         strideC);
        break;
    default:
        batched_small_16(batch, transA, transB, M, N, K, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc,
                         strideC);
        break;
    }
}

void at_gemm_batched(int batch, int transA, int transB, int M, int N, int K, attend_real alpha,
                     const attend_real *A, int lda, size_t strideA,
                     const attend_real *B, int ldb, size_t strideB, attend_real beta,
                     attend_real *C, int ldc, size_t strideC) {
    if (batch <= 0 || M <= 0 || N <= 0) return;
    if (K >= 1 && K <= GEMV_MAXK && (M == 1 || K == 1)) {
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

AT_KERNEL_VOID(, at_rows_sum, (attend_real *restrict dst, const attend_real *restrict rows, size_t R, int cols),
               (dst, rows, R, cols)) {
    // dst [cols] +=, rows [R,cols]
    switch (at_isa()) {
    case AT_ISA_AVX512: rows_sum_64(dst, rows, R, cols); break;
    case AT_ISA_AVX2: rows_sum_32(dst, rows, R, cols); break;
    default: rows_sum_16(dst, rows, R, cols); break;
    }
}

AT_KERNEL_VOID(, at_rows_add, (attend_real *restrict rows, const attend_real *restrict v, size_t R, int cols),
               (rows, v, R, cols)) {
    // rows [R,cols] +=, v [cols]
    switch (at_isa()) {
    case AT_ISA_AVX512: rows_add_64(rows, v, R, cols); break;
    case AT_ISA_AVX2: rows_add_32(rows, v, R, cols); break;
    default: rows_add_16(rows, v, R, cols); break;
    }
}
