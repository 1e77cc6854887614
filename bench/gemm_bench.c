/*
 * gemm_bench.c — attend's own GEMM (src/core/gemm.c, at_gemm_portable: packing
 * op(B) per call; at_gemm_w with the weight packed once, as the model runs its
 * weight products) against OpenBLAS's cblas_sgemm/sgemv at one thread, on the
 * model's shapes (seed 004: batch 64, GRU Hd = 128 so 3·Hd = 384 gate rows,
 * encoder E = 256, embeddings D = 64, attention A = 128, vocabulary 23) and the
 * shipped G2P model's (Hd = 384: 1152 gate rows, E = 384, He = 192, A = 192, 43
 * phonemes) at batch 64, a beam of 5 and the 8 rows of a word (docs/PERFORMANCE.md).
 * The portable kernel runs at the process's instruction-set level: run it
 * under ATTEND_ISA=baseline|avx2|avx512 to measure each (bench/gemm_bench.c's
 * table in docs/PERFORMANCE.md "Without BLAS").
 *
 *   gemm_bench            every shape: GFLOP/s of each side and the time ratio
 *   gemm_bench smoke      every shape once at a few iterations, checked against
 *                         each other (a ctest test; no timing is asserted)
 *
 * Each shape: a warm-up, then `reps` rounds alternating the two sides, each
 * round timing enough calls for about 2 ms; the median per side is reported.
 * Without OpenBLAS (a portable build) only the portable column is printed.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/internal.h"

#ifdef ATTEND_USE_CBLAS
#include <cblas.h>
void openblas_set_num_threads(int num_threads);
#endif

typedef struct {
    const char *what;
    int transA, transB, M, N, K;
    int weight; /* B is a weight matrix: the model multiplies it packed once */
} shape;

/* at_gemm calls of src/seq2seq/model.c, src/core/rnn.c and src/core/attention.c at seed 004's
 * configuration (N = 64, S = T = 20, Hd = 128, E = 256, A = 128, D = 64, V = 23). */
static const shape shapes[] = {
    {"enc GRU W_hh: N x 3H from H=128", 0, 1, 64, 384, 128, 1},
    {"enc GRU W_ih: N*S x 3H from D=64", 0, 1, 1280, 384, 64, 1},
    {"dec GRU ctx: N x 3Hd from E=256", 0, 1, 64, 384, 256, 1},
    {"attn key proj: N*S x A from E=256", 0, 1, 1280, 128, 256, 1},
    {"output proj: N*T x V=23 from F=128", 0, 1, 1280, 23, 128, 1},
    {"bwd dX: N x H from 3H (W_hh)", 0, 0, 64, 128, 384, 1},
    {"bwd dW_hh: 3H x H over N", 1, 0, 384, 128, 64, 0},
    {"bwd dW_ih: 3Hd x E over T*N", 1, 0, 384, 256, 1280, 0},
    {"decode N=1: 1 x 3Hd from Hd", 0, 1, 1, 384, 128, 1},
    {"decode N=1: 1 x 3Hd from E", 0, 1, 1, 384, 256, 1},
    {"decode N=1: output 1 x V from F", 0, 1, 1, 23, 128, 1},
    {"W_hh^T x (N=1 column)", 0, 0, 384, 1, 128, 0},
    {"square 512", 0, 0, 512, 512, 512, 0},
    {"g2p dec W_hh: 64 x 1152 from 384", 0, 1, 64, 1152, 384, 1},
    {"g2p dec ctx: 64 x 1152 from E=384", 0, 1, 64, 1152, 384, 1},
    {"g2p enc W_hh: 64 x 576 from 192", 0, 1, 64, 576, 192, 1},
    {"g2p enc W_ih l1: 64*8 x 576 from 384", 0, 1, 512, 576, 384, 1},
    {"g2p output: 64 x 43 from 768", 0, 1, 64, 43, 768, 1},
    {"g2p beam 5: 5 x 1152 from 384", 0, 1, 5, 1152, 384, 1},
    {"g2p word: 8 x 1152 from 384", 0, 1, 8, 1152, 384, 1},
    {"g2p N=1: 1 x 1152 from 384", 0, 1, 1, 1152, 384, 1},
    /* the scaled-dot kernel row of bench/run.sh: T = S = 512, D = 64, per batch entry */
    {"sdot scores: T x S from D=64", 0, 1, 512, 512, 64, 0},
    {"sdot context: T x D from S=512", 0, 0, 512, 64, 512, 0},
    {"sdot dK: S x D over T (A^T)", 1, 0, 512, 64, 512, 0},
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void run_portable(const shape *s, const attend_real *A, const attend_real *B, attend_real *C) {
    const int lda = s->transA ? s->M : s->K, ldb = s->transB ? s->K : s->N;
    at_gemm_portable(s->transA, s->transB, s->M, s->N, s->K, 1, A, lda, B, ldb, 0, C, s->N);
}

/* The weight packed once (run_packed reads it; the shape's op(B)). */
static at_packed packed_b;

static void run_packed(const shape *s, const attend_real *A, const attend_real *B, attend_real *C) {
    const int lda = s->transA ? s->M : s->K, ldb = s->transB ? s->K : s->N;
    at_gemm_w(s->transA, s->transB, s->M, s->N, s->K, 1, A, lda, B, ldb, &packed_b, 0, C, s->N);
}

#ifdef ATTEND_USE_CBLAS
/* What at_gemm does in the OpenBLAS build: sgemv for one row, else sgemm. */
static void run_blas(const shape *s, const attend_real *A, const attend_real *B, attend_real *C) {
    const int lda = s->transA ? s->M : s->K, ldb = s->transB ? s->K : s->N;
#ifdef ATTEND_DOUBLE
#define GEMV cblas_dgemv
#define GEMM cblas_dgemm
#else
#define GEMV cblas_sgemv
#define GEMM cblas_sgemm
#endif
    if (s->M == 1)
        GEMV(CblasRowMajor, s->transB ? CblasNoTrans : CblasTrans, s->transB ? s->N : s->K, s->transB ? s->K : s->N,
             1, B, ldb, A, s->transA ? lda : 1, 0, C, 1);
    else
        GEMM(CblasRowMajor, s->transA ? CblasTrans : CblasNoTrans, s->transB ? CblasTrans : CblasNoTrans, s->M, s->N,
             s->K, 1, A, lda, B, ldb, 0, C, s->N);
}
#endif

/* Seconds per call of f over `calls` calls. */
static double time_calls(void (*f)(const shape *, const attend_real *, const attend_real *, attend_real *),
                         const shape *s, const attend_real *A, const attend_real *B, attend_real *C, int calls) {
    double t0 = now_s();
    for (int c = 0; c < calls; c++) f(s, A, B, C);
    return (now_s() - t0) / calls;
}

int main(int argc, char **argv) {
    const int smoke = argc > 1 && strcmp(argv[1], "smoke") == 0;
    if (argc > 1 && !smoke) {
        fprintf(stderr, "usage: gemm_bench [smoke]\n");
        return 2;
    }
#ifdef ATTEND_USE_CBLAS
    openblas_set_num_threads(1);
#endif
    const int reps = smoke ? 1 : 15;
    attend_set_threads(1, NULL);
    setenv("ATTEND_GEMM", "own", 1); /* at_gemm_w runs the own kernel; OpenBLAS is called directly below */
    printf("attend's own GEMM at %s (attend_real %s)%s\n", attend_isa(), sizeof(attend_real) == 8 ? "double" : "float",
#ifdef ATTEND_USE_CBLAS
           ", OpenBLAS at 1 thread"
#else
           ", no OpenBLAS in this build"
#endif
    );
    printf("%-38s %5s %5s %5s %2s%2s %10s %10s %10s %16s\n", "shape", "M", "N", "K", "tA", "tB", "own", "own packed",
           "openblas", "openblas/own best");
    int bad = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        const shape *s = &shapes[i];
        const size_t nA = (size_t)s->M * s->K, nB = (size_t)s->K * s->N, nC = (size_t)s->M * s->N;
        attend_real *A = malloc(nA * sizeof *A), *B = malloc(nB * sizeof *B), *C = malloc(nC * sizeof *C);
        attend_real *C2 = malloc(nC * sizeof *C2);
        if (!A || !B || !C || !C2) {
            fprintf(stderr, "gemm_bench: out of memory\n");
            return 1;
        }
        for (size_t e = 0; e < nA; e++) A[e] = (attend_real)((double)(e * 7919 % 1000) / 500.0 - 1.0);
        for (size_t e = 0; e < nB; e++) B[e] = (attend_real)((double)(e * 104729 % 1000) / 500.0 - 1.0);
        const double flops = 2.0 * s->M * s->N * s->K;
        int calls = smoke ? 1 : (int)(2e-3 * 20e9 / flops); /* ~2 ms at 20 GFLOP/s */
        if (calls < 1) calls = 1;
        double tp[15], tb[15], tk[15];
        attend_real *pk = NULL;
        if (s->weight) { /* packed once, outside the timing, as the model does */
            pk = aligned_alloc(64, (at_pack_floats(s->K, s->N) * sizeof *pk + 63) / 64 * 64);
            if (!pk) {
                fprintf(stderr, "gemm_bench: out of memory\n");
                return 1;
            }
            at_pack(&packed_b, pk, s->transB, B, s->transB ? s->K : s->N, s->K, s->N);
            run_packed(s, A, B, C2);
        }
        run_portable(s, A, B, C); /* warm-up */
        if (s->weight && memcmp(C, C2, nC * sizeof *C)) {
            fprintf(stderr, "gemm_bench: %s: the packed weight's product differs from the per-call one\n", s->what);
            bad = 1;
        }
#ifdef ATTEND_USE_CBLAS
        run_blas(s, A, B, C2);
        /* the two agree (a smoke check that the benchmark measures a product) */
        double worst = 0;
        for (size_t e = 0; e < nC; e++) {
            const double d = fabs((double)C[e] - (double)C2[e]) / (1.0 + fabs((double)C2[e]));
            if (!(d <= worst)) worst = d;
        }
        if (!(worst < 1e-3)) {
            fprintf(stderr, "gemm_bench: %s: portable and OpenBLAS differ by %g\n", s->what, worst);
            bad = 1;
        }
#endif
        for (int r = 0; r < reps; r++) {
            tp[r] = time_calls(run_portable, s, A, B, C, calls);
            tk[r] = s->weight ? time_calls(run_packed, s, A, B, C, calls) : 0;
#ifdef ATTEND_USE_CBLAS
            tb[r] = time_calls(run_blas, s, A, B, C2, calls);
#else
            tb[r] = 0;
#endif
        }
        const double p = median(tp, reps), b = median(tb, reps), k = s->weight ? median(tk, reps) : 0;
        const double own = s->weight && k < p ? k : p; /* the model's way for a weight */
        if (!(p > 0) || !isfinite((double)C[nC - 1])) bad = 1;
        char packed[32] = "-";
        if (s->weight) snprintf(packed, sizeof packed, "%7.1f GF", flops / k * 1e-9);
#ifdef ATTEND_USE_CBLAS
        printf("%-38s %5d %5d %5d %2d%2d %7.1f GF %10s %7.1f GF %15.2fx\n", s->what, s->M, s->N, s->K, s->transA,
               s->transB, flops / p * 1e-9, packed, flops / b * 1e-9, b / own);
#else
        (void)b, (void)own;
        printf("%-38s %5d %5d %5d %2d%2d %7.1f GF %10s %10s %16s\n", s->what, s->M, s->N, s->K, s->transA, s->transB,
               flops / p * 1e-9, packed, "-", "-");
#endif
        free(pk);
        free(A);
        free(B);
        free(C);
        free(C2);
    }
    return bad;
}
