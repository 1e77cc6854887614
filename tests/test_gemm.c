/*
 * test_gemm.c — the portable GEMM (src/core/gemm.c) against a naive reference that
 * accumulates in double, at every instruction-set level this CPU has (called
 * directly through at_gemm_portable_level), plus the dispatched shim at_gemm
 * and at_gemm_batched (which run at the process's level: tests/cmake/gemm.cmake
 * runs this test again under ATTEND_ISA=baseline and avx2).
 *
 * Shapes: every M, N, K in a small set (1, odd, primes, the vector width and
 * its neighbours), the edges of the blocking sizes (MC 126/128 rows, KC 256
 * deep, NC 512 floats / 256 doubles wide, the 32768-long matrix-vector gather
 * limit), the model's shapes; all four transpose combinations; alpha/beta
 * including beta = 0 over a C filled with NaN (which must not be read); row
 * strides wider than the rows, whose padding holds NaN in A and B (must not be
 * read) and a sentinel in C (must not be written).
 *
 * Tolerance: each element within (K + 8) u (|alpha| Σ_p |a_ip b_pj| + |beta c_ij|),
 * u the unit roundoff of attend_real: the worst-case bound of a K-term sum
 * (plus the few roundings of alpha, beta and the per-KC-slice updates). A
 * wrong element (a skipped term, a wrong stride, alpha or beta ignored) is
 * off by about one term, far outside it. The same file built with
 * attend_real = double is test_gemm_f64.
 */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "../src/internal.h"
#include "../src/core/isa.h"

#ifdef ATTEND_DOUBLE
#define UNIT_ROUNDOFF (DBL_EPSILON / 2)
#else
#define UNIT_ROUNDOFF (FLT_EPSILON / 2)
#endif

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double uniform(void) { /* [-1, 1) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}

/* A stored matrix [rows, ld] whose columns [cols, ld) are padding. */
static attend_real *matrix(int rows, int cols, int ld, attend_real pad) {
    attend_real *m = malloc((size_t)rows * ld * sizeof *m);
    if (!m) {
        fprintf(stderr, "test_gemm: out of memory\n");
        exit(2);
    }
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < ld; j++) m[(size_t)i * ld + j] = j < cols ? (attend_real)uniform() : pad;
    return m;
}

static const char *level_name(int level) {
    return level == AT_ISA_AVX512 ? "avx512" : level == AT_ISA_AVX2 ? "avx2" : "baseline";
}

/* Worst error / bound over all checks of one test, for the summary line. */
static double worst_ratio;
static long n_products;

/* One product through `how` (-1: at_gemm; else at_gemm_portable_level(how))
 * against the reference; returns 1 when every element is within the bound. */
static int check_one(int how, int transA, int transB, int M, int N, int K, double alpha, double beta, int pad) {
    const int ar = transA ? K : M, ac = transA ? M : K; /* stored A [ar, ac] */
    const int br = transB ? N : K, bc = transB ? K : N; /* stored B [br, bc] */
    const int lda = (ac > 0 ? ac : 1) + pad, ldb = (bc > 0 ? bc : 1) + pad, ldc = N + pad;
    const attend_real sentinel = (attend_real)12345.0;
    attend_real *A = matrix(ar > 0 ? ar : 1, ac, lda, (attend_real)NAN);
    attend_real *B = matrix(br > 0 ? br : 1, bc, ldb, (attend_real)NAN);
    attend_real *C = matrix(M, N, ldc, sentinel);
    attend_real *C0 = matrix(M, N, ldc, sentinel);
    if (beta == 0)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) C[(size_t)i * ldc + j] = (attend_real)NAN;
    memcpy(C0, C, (size_t)M * ldc * sizeof *C);

    if (how < 0)
        at_gemm(transA, transB, M, N, K, (attend_real)alpha, A, lda, B, ldb, (attend_real)beta, C, ldc);
    else
        at_gemm_portable_level(how, transA, transB, M, N, K, (attend_real)alpha, A, lda, B, ldb,
                               (attend_real)beta, C, ldc);

    int ok = 1;
    double worst = 0;
    for (int i = 0; i < M && ok; i++) {
        for (int j = 0; j < ldc; j++) {
            const double got = C[(size_t)i * ldc + j];
            if (j >= N) { /* padding of C: untouched */
                if (got != (double)sentinel) {
                    EXPECT(0, "C[%d,%d] (padding) was written: %g", i, j, got);
                    ok = 0;
                }
                continue;
            }
            double sum = 0, mag = 0;
            for (int p = 0; p < K; p++) {
                const double a = transA ? A[(size_t)p * lda + i] : A[(size_t)i * lda + p];
                const double b = transB ? B[(size_t)j * ldb + p] : B[(size_t)p * ldb + j];
                sum += a * b;
                mag += fabs(a * b);
            }
            const double c0 = C0[(size_t)i * ldc + j];
            const double want = alpha * sum + (beta == 0 ? 0 : beta * c0);
            const double bound = (K + 8) * UNIT_ROUNDOFF * (fabs(alpha) * mag + (beta == 0 ? 0 : fabs(beta * c0)));
            const double err = fabs(got - want);
            if (!(err <= bound)) { /* also catches NaN */
                EXPECT(0, "%s tA=%d tB=%d M=%d N=%d K=%d alpha=%g beta=%g pad=%d: C[%d,%d] = %.9g, want %.9g (bound %.3g)",
                       how < 0 ? "at_gemm" : level_name(how), transA, transB, M, N, K, alpha, beta, pad, i, j, got,
                       want, bound);
                ok = 0;
                break;
            }
            if (bound > 0 && err / bound > worst) worst = err / bound;
        }
    }
    if (worst > worst_ratio) worst_ratio = worst;
    n_products++;
    free(A);
    free(B);
    free(C);
    free(C0);
    return ok;
}

static const double alphas[] = {1, 1, -0.5, 0.75, 2};
static const double betas[] = {0, 1, 2, 0, -0.25};

/* Every combination of a small set of sizes, at one level (or at_gemm). */
static int small_shapes(int how) {
    static const int sizes[] = {1, 2, 3, 5, 7, 8, 13, 15, 16, 17, 33};
    const int ns = (int)(sizeof sizes / sizeof *sizes);
    int ok = 1, k = 0;
    for (int a = 0; a < ns; a++)
        for (int b = 0; b < ns; b++)
            for (int c = 0; c < ns; c++)
                for (int t = 0; t < 4; t++, k++)
                    ok &= check_one(how, t & 1, t >> 1, sizes[a], sizes[b], sizes[c], alphas[k % 5], betas[k % 5],
                                    k % 3 == 0 ? 0 : k % 3 == 1 ? 1 : 5);
    return ok;
}

/* The edges of the blocking and the model's shapes; a vector times a long matrix
 * (K past the gather buffer, and K sliced: gemm_tile.h gemv_rows_sliced). */
static int large_shapes(int how) {
    static const int shapes[][3] = {
        {126, 16, 256},  {127, 17, 257},  {128, 31, 255},  {129, 33, 513},  {112, 512, 64},  {113, 513, 70},
        {14, 511, 300},  {15, 257, 256},  {6, 255, 129},   {7, 1, 600},     {1, 1000, 600},  {1000, 1, 300},
        {1, 384, 128},   {1, 23, 256},    {384, 1, 128},   {64, 384, 128},  {64, 384, 256},  {64, 23, 384},
        {64, 128, 384},  {384, 128, 64},  {300, 17, 1},    {1, 700, 1},     {1, 1, 1},       {2, 3, 33000},
        {1, 3, 33000},   {3, 1, 33000},   {41, 29, 1100},  {200, 130, 70},  {0, 5, 5},       {5, 0, 5},
        {5, 4, 0},       {1, 1, 0},       {1, 100, 40000}, {100, 1, 40000}, {1, 70, 1500},  {70, 1, 1025},
    };
    int ok = 1, k = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int t = 0; t < 4; t++, k++)
            ok &= check_one(how, t & 1, t >> 1, shapes[s][0], shapes[s][1], shapes[s][2], alphas[k % 5],
                            betas[k % 5], k % 2 ? 3 : 0);
    return ok;
}

static void test_portable_every_level(void) {
    const int top = (int)at_isa_supported();
    for (int level = 0; level <= top; level++) {
        worst_ratio = 0;
        n_products = 0;
        int ok = small_shapes(level) & large_shapes(level);
        printf("  %-9s %ld products, worst error %.3f of the bound%s\n", level_name(level), n_products, worst_ratio,
               ok ? "" : "  <-- FAIL");
    }
    if (top < AT_ISA_AVX512) printf("  (levels above %s: not on this CPU)\n", level_name(top));
}

static void test_dispatched(void) {
    worst_ratio = 0;
    n_products = 0;
    int ok = small_shapes(-1) & large_shapes(-1);
    printf("  at_gemm (%s, %s) %ld products, worst error %.3f of the bound%s\n", attend_gemm_backend(), attend_isa(),
           n_products, worst_ratio, ok ? "" : "  <-- FAIL");
}

/* K = 0 (an empty sum): C = beta C; beta = 0 writes zeros over NaN. */
static void test_empty_sum(void) {
    attend_real C[6] = {NAN, NAN, NAN, 1, 2, 3};
    at_gemm_portable(0, 0, 1, 3, 0, 1, NULL, 1, NULL, 3, 0, C, 3);
    at_gemm_portable(0, 0, 1, 3, 0, 1, NULL, 1, NULL, 3, 2, C + 3, 3);
    EXPECT(C[0] == 0 && C[1] == 0 && C[2] == 0, "beta = 0, K = 0: %g %g %g", C[0], C[1], C[2]);
    EXPECT(C[3] == 2 && C[4] == 4 && C[5] == 6, "beta = 2, K = 0: %g %g %g", C[3], C[4], C[5]);
}

/* at_gemm_batched: the small path (M = 1, K = 1), the general path, and a
 * shared C (strideC 0) accumulated over the batch. */
static void test_batched(void) {
    static const int shapes[][4] = {/* batch, M, N, K */
                                    {7, 1, 37, 19}, {5, 1, 64, 128}, {6, 1, 3, 40}, {4, 9, 33, 1}, {3, 1, 1, 1},
                                    {5, 13, 17, 9}, {2, 64, 23, 70}, {8, 1, 300, 1}};
    int k = 0;
    double worst = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        for (int t = 0; t < 4; t++) {
            for (int shared = 0; shared < 2; shared++, k++) {
                const int nb = shapes[s][0], M = shapes[s][1], N = shapes[s][2], K = shapes[s][3];
                const int transA = t & 1, transB = t >> 1, pad = k % 2 ? 2 : 0;
                const int ar = transA ? K : M, ac = transA ? M : K, br = transB ? N : K, bc = transB ? K : N;
                const int lda = ac + pad, ldb = bc + pad, ldc = N + pad;
                const size_t sA = (size_t)ar * lda + 1, sB = (size_t)br * ldb + 3, sC = shared ? 0 : (size_t)M * ldc;
                const double alpha = alphas[k % 5], beta = shared ? 1 : betas[k % 5];
                attend_real *A = matrix(nb, (int)sA, (int)sA, 0), *B = matrix(nb, (int)sB, (int)sB, 0);
                const size_t nC = shared ? (size_t)M * ldc : (size_t)nb * sC;
                attend_real *C = matrix(1, (int)nC, (int)nC, 0);
                double *want = malloc(nC * sizeof *want), *mag = malloc(nC * sizeof *mag);
                if (!want || !mag) exit(2);
                for (size_t e = 0; e < nC; e++) {
                    if (beta == 0 && (int)(e % (size_t)ldc) < N) C[e] = (attend_real)NAN;
                    want[e] = C[e];
                    mag[e] = fabs(want[e]);
                }
                for (int b = 0; b < nb; b++) {
                    const attend_real *Ab = A + b * sA, *Bb = B + b * sB;
                    for (int i = 0; i < M; i++)
                        for (int j = 0; j < N; j++) {
                            double sum = 0, m = 0;
                            for (int p = 0; p < K; p++) {
                                const double a = transA ? Ab[(size_t)p * lda + i] : Ab[(size_t)i * lda + p];
                                const double bb = transB ? Bb[(size_t)j * ldb + p] : Bb[(size_t)p * ldb + j];
                                sum += a * bb;
                                m += fabs(a * bb);
                            }
                            const size_t e = b * sC + (size_t)i * ldc + j;
                            want[e] = alpha * sum + (beta == 0 ? 0 : beta * want[e]);
                            mag[e] = fabs(alpha) * m + (beta == 0 ? 0 : fabs(beta) * mag[e]);
                        }
                }
                at_gemm_batched(nb, transA, transB, M, N, K, (attend_real)alpha, A, lda, sA, B, ldb, sB,
                                (attend_real)beta, C, ldc, sC);
                const int terms = K * (shared ? nb : 1) + 8 * (shared ? nb : 1);
                for (size_t e = 0; e < nC; e++) {
                    const int is_pad = (int)(e % (size_t)ldc) >= N;
                    const double err = fabs((double)C[e] - want[e]);
                    const double bound = is_pad ? 0 : terms * UNIT_ROUNDOFF * mag[e];
                    if (!(err <= bound)) {
                        EXPECT(0, "batched %d x tA=%d tB=%d M=%d N=%d K=%d shared=%d: [%zu] = %.9g, want %.9g", nb,
                               transA, transB, M, N, K, shared, e, (double)C[e], want[e]);
                        break;
                    }
                    if (bound > 0 && err / bound > worst) worst = err / bound;
                }
                free(A);
                free(B);
                free(C);
                free(want);
                free(mag);
            }
        }
    }
    printf("  %d batched products, worst error %.3f of the bound\n", k, worst);
}

/* at_rows_sum / at_rows_add against plain loops (exact: the same additions
 * in the same order per element). */
static void test_rows(void) {
    static const int cols_list[] = {1, 5, 16, 31, 32, 33, 100};
    for (size_t c = 0; c < sizeof cols_list / sizeof *cols_list; c++) {
        const int cols = cols_list[c];
        const size_t R = 7;
        attend_real *rows = matrix((int)R, cols, cols, 0), *v = matrix(1, cols, cols, 0);
        attend_real *dst = matrix(1, cols, cols, 0), *want = malloc((size_t)cols * sizeof *want);
        attend_real *rows2 = malloc(R * cols * sizeof *rows2);
        if (!want || !rows2) exit(2);
        for (int k = 0; k < cols; k++) {
            attend_real s = dst[k];
            for (size_t r = 0; r < R; r++) s += rows[r * cols + k];
            want[k] = s;
        }
        at_rows_sum(dst, rows, R, cols);
        for (int k = 0; k < cols; k++) EXPECT(dst[k] == want[k], "rows_sum cols=%d [%d]: %g want %g", cols, k, dst[k], want[k]);
        memcpy(rows2, rows, R * cols * sizeof *rows2);
        at_rows_add(rows2, v, R, cols);
        for (size_t e = 0; e < R * cols; e++)
            EXPECT(rows2[e] == rows[e] + v[e % cols], "rows_add cols=%d [%zu]", cols, e);
        free(rows);
        free(v);
        free(dst);
        free(want);
        free(rows2);
    }
}

/* at_gemm_w with op(B) packed once (at_pack) gives at_gemm's bits: the same
 * panels in the same order; at 1 and 2 threads (the columns split in whole
 * panels); a packed copy of another shape is ignored. */
static int packed_one(int transA, int transB, int M, int N, int K, double alpha, double beta) {
    const int ar = transA ? K : M, ac = transA ? M : K, br = transB ? N : K, bc = transB ? K : N;
    const int lda = ac + 2, ldb = bc + 3, ldc = N + 1;
    attend_real *A = matrix(ar, ac, lda, (attend_real)NAN), *B = matrix(br, bc, ldb, (attend_real)NAN);
    attend_real *C0 = matrix(M, N, ldc, 7), *C1 = matrix(M, N, ldc, 7);
    memcpy(C1, C0, (size_t)M * ldc * sizeof *C0);
    attend_real *buf = malloc(at_pack_floats(K, N) * sizeof *buf);
    at_packed pk;
    at_pack(&pk, buf, transB, B, ldb, K, N);
    attend_set_threads(1, NULL); /* the reference on one thread */
    at_gemm(transA, transB, M, N, K, (attend_real)alpha, A, lda, B, ldb, (attend_real)beta, C0, ldc);
    int ok = 1;
    for (int threads = 1; threads <= 2; threads++) {
        attend_set_threads(threads, NULL);
        attend_real *C = matrix(M, N, ldc, 7);
        memcpy(C, C1, (size_t)M * ldc * sizeof *C);
        at_gemm_w(transA, transB, M, N, K, (attend_real)alpha, A, lda, B, ldb, &pk, (attend_real)beta, C, ldc);
        /* OpenBLAS (which at_gemm_w hands the product to) splits rows over
         * threads with other roundings: there, 1 thread only */
        const int exact = strcmp(attend_gemm_backend(), "own") == 0 || threads == 1;
        if (exact && memcmp(C, C0, (size_t)M * ldc * sizeof *C)) {
            EXPECT(0, "packed tA=%d tB=%d M=%d N=%d K=%d, %d thread(s): not at_gemm's bits", transA, transB, M, N, K,
                   threads);
            ok = 0;
        }
        free(C);
    }
    attend_set_threads(1, NULL);
    at_packed other = pk;
    other.N = N + 1; /* another shape: at_gemm_w must not read it */
    memcpy(C1, C0, (size_t)M * ldc * sizeof *C0);
    at_gemm_w(transA, transB, M, N, K, (attend_real)alpha, A, lda, B, ldb, &other, (attend_real)beta, C1, ldc);
    at_gemm(transA, transB, M, N, K, (attend_real)alpha, A, lda, B, ldb, (attend_real)beta, C0, ldc);
    EXPECT(!memcmp(C1, C0, (size_t)M * ldc * sizeof *C0), "a packed copy of another shape was used");
    attend_set_threads(0, NULL);
    free(A), free(B), free(C0), free(C1), free(buf);
    n_products++;
    return ok;
}

static void test_packed(void) {
    static const int shapes[][3] = {{2, 3, 5},      {5, 1152, 384}, {6, 33, 17},   {64, 384, 128}, {64, 1152, 384},
                                    {256, 576, 192}, {7, 513, 300}, {129, 40, 600}, {33, 1100, 257}, {3, 70, 1}};
    int ok = 1;
    n_products = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int t = 0; t < 4; t++)
            ok &= packed_one(t & 1, t >> 1, shapes[s][0], shapes[s][1], shapes[s][2], alphas[(s + t) % 5],
                             betas[(s + t) % 5]);
    printf("  at_gemm_w (%s, %s) %ld products against packed weights at 1 and 2 threads: %s\n",
           attend_gemm_backend(), attend_isa(), n_products, ok ? "at_gemm's bits" : "DIFFERENT  <-- FAIL");
}

int main(void) {
    printf("attend_real %s, CPU's best level %s, process level %s\n", sizeof(attend_real) == 8 ? "double" : "float",
           level_name((int)at_isa_supported()), attend_isa());
    RUN(test_portable_every_level);
    RUN(test_dispatched);
    RUN(test_empty_sum);
    RUN(test_batched);
    RUN(test_rows);
    RUN(test_packed);
    return harness_summary();
}
