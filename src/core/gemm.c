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
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
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

#ifdef ATTEND_USE_CBLAS
#include <cblas.h>
#endif

/* ------------------------------------------------- which product runs */

/* With OpenBLAS linked (-DATTEND_BLAS=ON), it runs only when its kernels are
 * at least the level attend's own code runs at: an OpenBLAS older than the CPU
 * falls back to generic kernels (0.3.21 names a 2023 Xeon "Prescott": SSE3,
 * 2.5x the own GEMM's time at AVX-512; issue 25), and then the own GEMM runs.
 * ATTEND_GEMM=own|openblas overrides the choice (benchmarks compare the two in
 * one build). Decided once per process, on the first product. */
#ifdef ATTEND_USE_CBLAS
char *openblas_get_corename(void);

/* The instruction-set level of an OpenBLAS kernel set (x86-64), by name. */
static int blas_core_level(const char *core) {
    static const char *const avx512[] = {"skylakex", "cooperlake", "sapphirerapids"};
    static const char *const avx2[] = {"haswell", "zen", "excavator"};
    char lower[32] = {0};
    for (int i = 0; core && core[i] && i < 31; i++) lower[i] = (char)(core[i] | 0x20);
    for (size_t i = 0; i < sizeof avx512 / sizeof *avx512; i++)
        if (!strcmp(lower, avx512[i])) return AT_ISA_AVX512;
    for (size_t i = 0; i < sizeof avx2 / sizeof *avx2; i++)
        if (!strcmp(lower, avx2[i])) return AT_ISA_AVX2;
    return AT_ISA_BASELINE;
}

static int decide_blas(char *why, size_t n) {
    const char *core = openblas_get_corename();
    const char *force = getenv("ATTEND_GEMM");
    const int lvl = blas_core_level(core), isa = (int)at_isa();
    const char *isa_name = isa == AT_ISA_AVX512 ? "an AVX-512" : isa == AT_ISA_AVX2 ? "an AVX2" : "this";
    if (force && !strcmp(force, "own")) {
        snprintf(why, n, "own (ATTEND_GEMM=own; OpenBLAS reports %s)", core ? core : "?");
        return 0;
    }
    if (force && !strcmp(force, "openblas")) {
        snprintf(why, n, "openblas (ATTEND_GEMM=openblas; %s kernels)", core ? core : "?");
        return 1;
    }
    if (lvl >= isa) {
        snprintf(why, n, "openblas (%s kernels)", core ? core : "?");
        return 1;
    }
    snprintf(why, n, "own (OpenBLAS reports %s on %s CPU)", core ? core : "?", isa_name);
    return 0;
}
#endif

static char gemm_why[96];    /* attend_gemm_info's text */
static int gemm_blas_v;      /* 0 own, 1 OpenBLAS: valid once gemm_state is 2 */
static _Atomic int gemm_state = 0; /* 0 undecided, 1 being decided, 2 decided */

static int use_blas(void) {
    if (gemm_state == 2) return gemm_blas_v;
    int expected = 0;
    if (atomic_compare_exchange_strong(&gemm_state, &expected, 1)) {
#ifdef ATTEND_USE_CBLAS
        gemm_blas_v = decide_blas(gemm_why, sizeof gemm_why);
#else
        snprintf(gemm_why, sizeof gemm_why, "own");
        gemm_blas_v = 0;
#endif
        gemm_state = 2;
    } else {
        while (gemm_state != 2) { /* another thread is deciding: a getenv and a name compare */
        }
    }
    return gemm_blas_v;
}

const char *attend_gemm_backend(void) { return use_blas() ? "openblas" : "own"; }

int at_gemm_uses_blas(void) { return use_blas(); }

const char *attend_gemm_info(void) {
    use_blas();
    return gemm_why;
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

static int gemm_path(int transA, int transB, int M, int N, int K) {
    /* a strided vector is gathered into pack_a first: up to GEMV_MAXK values */
    if (M == 1 && (!transA || K <= GEMV_MAXK)) return PATH_ROW;
    if (N == 1 && (transB || K <= GEMV_MAXK)) return PATH_COL;
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
                const attend_real *A, int lda, const attend_real *B, int ldb, const attend_real *Bpre, int npad,
                int col0, attend_real beta, attend_real *C, int ldc),
               (lvl, path, transA, transB, M, N, K, alpha, A, lda, B, ldb, Bpre, npad, col0, beta, C, ldc)) {
    switch (lvl) {
    case AT_ISA_AVX512:
        gemm_64(path, transA, transB, M, N, K, alpha, A, lda, B, ldb, Bpre, npad, col0, beta, C, ldc);
        break;
    case AT_ISA_AVX2:
        gemm_32(path, transA, transB, M, N, K, alpha, A, lda, B, ldb, Bpre, npad, col0, beta, C, ldc);
        break;
    default: gemm_16(path, transA, transB, M, N, K, alpha, A, lda, B, ldb, Bpre, npad, col0, beta, C, ldc); break;
    }
}

/* Packs all of op(B) at level lvl (pack_b_all of that width). */
AT_KERNEL_VOID(static, pack_run,
               (int lvl, attend_real *dst, int transB, const attend_real *B, int ldb, int K, int N),
               (lvl, dst, transB, B, ldb, K, N)) {
    switch (lvl) {
    case AT_ISA_AVX512: pack_b_all_64(dst, transB, B, ldb, K, N); break;
    case AT_ISA_AVX2: pack_b_all_32(dst, transB, B, ldb, K, N); break;
    default: pack_b_all_16(dst, transB, B, ldb, K, N); break;
    }
}

/* Panel width NR of a level: 2 vectors of its width. */
static int level_nr(int lvl) {
    const int bytes = lvl == AT_ISA_AVX512 ? 64 : lvl == AT_ISA_AVX2 ? 32 : 16;
    return 2 * bytes / (int)sizeof(attend_real);
}

size_t at_pack_floats(int K, int N) {
    if (K <= 0 || N <= 0) return 0;
    const int nr = level_nr((int)at_isa());
    return (size_t)K * (((size_t)N + nr - 1) / nr * nr);
}

void at_pack(at_packed *pk, attend_real *dst, int transB, const attend_real *B, int ldb, int K, int N) {
    const int lvl = (int)at_isa(), nr = level_nr(lvl);
    pk->data = dst;
    pk->K = K;
    pk->N = N;
    pk->npad = (N + nr - 1) / nr * nr;
    pk->level = lvl;
    if (K > 0 && N > 0) pack_run(lvl, dst, transB, B, ldb, K, N);
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
    const int path = gemm_path(transA, transB, M, N, K);
#if AT_ISA_DISPATCH
    if (level > (int)at_isa_supported()) level = (int)at_isa_supported();
    switch (level) {
    case AT_ISA_AVX512:
        gemm_run_isa_avx512(level, path, transA, transB, M, N, K, alpha, A, lda, B, ldb, NULL, 0, 0, beta, C, ldc);
        return;
    case AT_ISA_AVX2:
        gemm_run_isa_avx2(level, path, transA, transB, M, N, K, alpha, A, lda, B, ldb, NULL, 0, 0, beta, C, ldc);
        return;
    default:
        gemm_run_isa_base(AT_ISA_BASELINE, path, transA, transB, M, N, K, alpha, A, lda, B, ldb, NULL, 0, 0, beta, C,
                          ldc);
        return;
    }
#else
    (void)level;
    gemm_run(AT_ISA_BASELINE, path, transA, transB, M, N, K, alpha, A, lda, B, ldb, NULL, 0, 0, beta, C, ldc);
#endif
}

void at_gemm_portable(int transA, int transB, int M, int N, int K, attend_real alpha, const attend_real *A, int lda,
                      const attend_real *B, int ldb, attend_real beta, attend_real *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        scale_c(M, N, beta, C, ldc);
        return;
    }
    gemm_run((int)at_isa(), gemm_path(transA, transB, M, N, K), transA, transB, M, N, K, alpha, A, lda, B, ldb,
             NULL, 0, 0, beta, C, ldc);
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
    if (!use_blas()) {
        gemm_run((int)at_isa(), path, transA, transB, M, N, K, alpha, A, lda, B, ldb, NULL, 0, 0, beta, C, ldc);
        return;
    }
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
    gemm_run((int)at_isa(), path, transA, transB, M, N, K, alpha, A, lda, B, ldb, NULL, 0, 0, beta, C, ldc);
#endif
}

/* ---------------------------------------------------------------- threads */

/* OpenBLAS runs every call on the calling thread. At this library's shapes
 * (a decoder step is a few products of 1..256 rows) OpenBLAS's own threads
 * cost more than they bring: each call wakes them and they spin in
 * sched_yield (measured: greedy decoding at batch 1 takes 2.5 ms with them,
 * 0.42 ms without, most of the difference system time; docs/PERFORMANCE.md).
 * The library threads itself instead (src/core/threads.c). Done once, before
 * the first product; it sets OpenBLAS's process-wide thread count, as
 * OPENBLAS_NUM_THREADS=1 would. */
#ifdef ATTEND_USE_CBLAS
void openblas_set_num_threads(int num_threads);
/* OpenBLAS's pthreads build exports its thread server's shutdown (its fork
 * handler calls it); its OpenMP build has none, hence weak. */
int blas_thread_shutdown_(void) __attribute__((weak));
static void blas_single_thread(void) {
    static _Atomic int done = 0;
    if (!done) {
        openblas_set_num_threads(1);
        /* The server's workers, started when OpenBLAS loaded, would spin in
         * sched_yield for ~0.1 s more beside attend's threads (the latency
         * rows of a short run: 0.82-0.88 of the default build). With one
         * thread OpenBLAS never hands them work; a later
         * openblas_set_num_threads(n > 1) by the host starts them again. */
        if (blas_thread_shutdown_) blas_thread_shutdown_();
        done = 1;
    }
}
#else
static void blas_single_thread(void) {}
#endif

/* One product split over threads: chunk c computes rows (or columns) of C
 * at_chunk_range(..., 16, nchunks, c) with the whole product's path. */
typedef struct {
    int path, transA, transB, M, N, K, by_rows, nchunks;
    attend_real alpha, beta;
    const attend_real *A, *B;
    int lda, ldb, ldc;
    attend_real *C;
} gemm_job;

static void gemm_chunk(void *p, int c) {
    const gemm_job *j = p;
    int lo, hi;
    at_chunk_range(j->by_rows ? j->M : j->N, 16, j->nchunks, c, &lo, &hi);
    if (hi <= lo) return;
    if (j->by_rows) /* rows lo..hi of op(A) and C */
        gemm_one(j->path, j->transA, j->transB, hi - lo, j->N, j->K, j->alpha,
                 j->transA ? j->A + lo : j->A + (size_t)lo * j->lda, j->lda, j->B, j->ldb, j->beta,
                 j->C + (size_t)lo * j->ldc, j->ldc);
    else /* columns lo..hi of op(B) and C */
        gemm_one(j->path, j->transA, j->transB, j->M, hi - lo, j->K, j->alpha, j->A, j->lda,
                 j->transB ? j->B + (size_t)lo * j->ldb : j->B + lo, j->ldb, j->beta, j->C + lo, j->ldc);
}

void at_gemm(int transA, int transB, int M, int N, int K, attend_real alpha,
             const attend_real *A, int lda, const attend_real *B, int ldb,
             attend_real beta, attend_real *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    blas_single_thread();
    const int path = gemm_path(transA, transB, M, N, K);
    int nt = at_threads((double)M * N * (K > 0 ? K : 1));
    /* split the output rows (or, for few rows, its columns) over the threads:
     * every chunk writes its own block of C; K is never split. One chunk a
     * thread: each chunk packs its own panels of op(B). */
    int by_rows = M >= 32 || M >= N;
    if (nt > 1 && (by_rows ? M : N) < 16 * nt) nt = 1;
    if (nt == 1) {
        gemm_one(path, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    gemm_job j = {path, transA, transB, M, N, K, by_rows, nt, alpha, beta, A, B, lda, ldb, ldc, C};
    at_parallel_chunks(nt, nt, gemm_chunk, &j);
}

/* A product against a weight packed once (at_pack of the same op(B)): the
 * blocked path reads the panels in place of packing op(B) again; the bits are
 * those of at_gemm. Chunk c computes rows, or whole panels of columns, of C. */
typedef struct {
    int transA, M, N, K, by_rows, nchunks, align;
    attend_real alpha, beta;
    const attend_real *A;
    int lda, ldc;
    const at_packed *pk;
    attend_real *C;
} packed_job;

static void packed_chunk(void *p, int c) {
    const packed_job *j = p;
    int lo, hi;
    at_chunk_range(j->by_rows ? j->M : j->N, j->align, j->nchunks, c, &lo, &hi);
    if (hi <= lo) return;
    if (j->by_rows)
        gemm_run(j->pk->level, PATH_BLOCKED, j->transA, 1, hi - lo, j->N, j->K, j->alpha,
                 j->transA ? j->A + lo : j->A + (size_t)lo * j->lda, j->lda, NULL, 0, j->pk->data, j->pk->npad, 0,
                 j->beta, j->C + (size_t)lo * j->ldc, j->ldc);
    else
        gemm_run(j->pk->level, PATH_BLOCKED, j->transA, 1, j->M, hi - lo, j->K, j->alpha, j->A, j->lda, NULL, 0,
                 j->pk->data, j->pk->npad, lo, j->beta, j->C + lo, j->ldc);
}

void at_gemm_rows(int whole_M, int transA, int transB, int M, int N, int K, attend_real alpha, const attend_real *A,
                  int lda, const attend_real *B, int ldb, const at_packed *pk, attend_real beta, attend_real *C,
                  int ldc) {
    if (M <= 0 || N <= 0) return;
    const int path = gemm_path(transA, transB, whole_M, N, K);
    if (pk && K > 0 && pk->K == K && pk->N == N && pk->level == (int)at_isa() && !use_blas() && path == PATH_BLOCKED)
        gemm_run(pk->level, PATH_BLOCKED, transA, 1, M, N, K, alpha, A, lda, NULL, 0, pk->data, pk->npad, 0, beta, C,
                 ldc);
    else
        gemm_one(path, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void at_gemm_w(int transA, int transB, int M, int N, int K, attend_real alpha, const attend_real *A, int lda,
               const attend_real *B, int ldb, const at_packed *pk, attend_real beta, attend_real *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    if (!pk || K <= 0 || pk->K != K || pk->N != N || pk->level != (int)at_isa() || use_blas() ||
        gemm_path(transA, transB, M, N, K) != PATH_BLOCKED) {
        at_gemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    int nt = at_threads((double)M * N * K);
    int by_rows = M >= 32 || M >= N;
    const int align = by_rows ? 16 : 32; /* columns: whole panels at every level */
    if (nt > 1 && (by_rows ? M : N) < align * nt) nt = 1;
    packed_job j = {transA, M, N, K, by_rows, nt, align, alpha, beta, A, lda, ldc, pk, C};
    if (nt == 1) packed_chunk(&j, 0);
    else at_parallel_chunks(nt, nt, packed_chunk, &j);
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

/* Batch entries [lo,hi) of one at_gemm_batched (at_parallel_rows' chunks). */
typedef struct {
    int transA, transB, M, N, K;
    attend_real alpha, beta;
    const attend_real *A, *B;
    attend_real *C;
    int lda, ldb, ldc;
    size_t strideA, strideB, strideC;
} batched_job;

static void batched_chunk(void *p, int lo, int hi) {
    const batched_job *j = p;
    gemm_batched_small(hi - lo, j->transA, j->transB, j->M, j->N, j->K, j->alpha, j->A + (size_t)lo * j->strideA,
                       j->lda, j->strideA, j->B + (size_t)lo * j->strideB, j->ldb, j->strideB, j->beta,
                       j->C + (size_t)lo * j->strideC, j->ldc, j->strideC);
}

/* Entries [lo,hi) of a general at_gemm_batched, each whole on this thread
 * (at_gemm inside a chunk runs on the calling thread). */
static void batched_entries_chunk(void *p, int lo, int hi) {
    const batched_job *j = p;
    for (int b = lo; b < hi; b++)
        at_gemm(j->transA, j->transB, j->M, j->N, j->K, j->alpha, j->A + (size_t)b * j->strideA, j->lda,
                j->B + (size_t)b * j->strideB, j->ldb, j->beta, j->C + (size_t)b * j->strideC, j->ldc);
}

void at_gemm_batched(int batch, int transA, int transB, int M, int N, int K, attend_real alpha,
                     const attend_real *A, int lda, size_t strideA,
                     const attend_real *B, int ldb, size_t strideB, attend_real beta,
                     attend_real *C, int ldc, size_t strideC) {
    if (batch <= 0 || M <= 0 || N <= 0) return;
    if (K >= 1 && K <= GEMV_MAXK && (M == 1 || K == 1)) {
        /* entries write disjoint blocks of C unless C is shared (strideC 0) */
        batched_job j = {transA, transB, M, N, K, alpha, beta, A, B, C, lda, ldb, ldc, strideA, strideB, strideC};
        at_parallel_rows(strideC ? (double)batch * M * N * K : 0, batch, 1, batched_chunk, &j);
        return;
    }
    /* Whole entries to each thread when they divide evenly (or are many):
     * splitting each entry's rows instead packs its op(B) once per thread and
     * meets the threads once per entry (the scaled-dot kernel: 8 entries of
     * 512 x 512 x 64). An entry's bits do not depend on which thread or which
     * rows a chunk holds. */
    const double work = (double)batch * M * N * (K > 0 ? K : 1);
    const int nt = strideC ? at_threads(work) : 1;
    if (nt > 1 && (batch % nt == 0 || batch >= 4 * nt)) {
        batched_job j = {transA, transB, M, N, K, alpha, beta, A, B, C, lda, ldb, ldc, strideA, strideB, strideC};
        at_parallel_rows(work, batch, 1, batched_entries_chunk, &j);
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

AT_KERNEL_VOID(, at_rows_add_relu, (attend_real *restrict rows, const attend_real *restrict v, size_t R, int cols),
               (rows, v, R, cols)) {
    // rows [R,cols] = relu(rows + v), v [cols]
    for (size_t r = 0; r < R; r++) {
        attend_real *restrict y = rows + r * cols;
#pragma omp simd
        for (int k = 0; k < cols; k++) {
            const attend_real z = y[k] + v[k];
            y[k] = z > 0 ? z : 0; /* NaN and -0 to 0 */
        }
    }
}
