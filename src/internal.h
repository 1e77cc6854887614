/*
 * internal.h — private helpers shared by the library's source files.
 * Nothing here is exported (all names start with `at_` or are static inline).
 */
#ifndef ATTEND_INTERNAL_H
#define ATTEND_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "attend.h"

#if defined(__GNUC__)
#define AT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define AT_PRINTF(a, b)
#endif

/* Fills err (if not NULL) with status and a formatted message; returns status. */
attend_status at_fail(attend_error *err, attend_status status, const char *fmt, ...) AT_PRINTF(3, 4);
/* Marks err as OK (empty message); returns ATTEND_OK. */
attend_status at_ok(attend_error *err);

/* Return early with a message when cond is false. */
#define CHECK(cond, err, status, ...)                                   \
    do {                                                                \
        if (!(cond)) return at_fail((err), (status), __VA_ARGS__);      \
    } while (0)

/* Propagate a failed status from a call that already filled err. */
#define TRY(expr)                                                       \
    do {                                                                \
        attend_status at_try_status_ = (expr);                          \
        if (at_try_status_ != ATTEND_OK) return at_try_status_;         \
    } while (0)

/* a*b into *out; returns 0 on overflow. */
static inline int at_mul_size(size_t a, size_t b, size_t *out) {
    if (a != 0 && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}
static inline int at_add_size(size_t a, size_t b, size_t *out) {
    if (b > SIZE_MAX - a) return 0;
    *out = a + b;
    return 1;
}
/* Product of n dims (each must be >= 1) into *out; 0 on overflow or a dim < 1. */
int at_count(size_t *out, int n, ...);

/*
 * GEMM shim: C [M,N] = alpha * op(A) op(B) + beta * C, row-major, with
 * op(A) [M,K] and op(B) [K,N]; lda/ldb/ldc are row strides of the stored arrays.
 * The own blocked kernel (src/core/gemm.c) unless an OpenBLAS build chose
 * cblas_sgemm/dgemm (attend_gemm_info). The library's threads split rows or
 * columns of C, never K: results do not depend on the thread count.
 */
void at_gemm(int transA, int transB, int M, int N, int K, attend_real alpha,
             const attend_real *A, int lda, const attend_real *B, int ldb,
             attend_real beta, attend_real *C, int ldc);

/* The portable kernel (cache-blocked, packed, vectorized; src/core/gemm.c), in
 * every build, on the calling thread: the same contract as at_gemm (beta = 0
 * never reads C). at_gemm_portable runs at the process's level (at_isa());
 * at_gemm_portable_level at the given at_isa_level (capped at what the CPU
 * supports), for tests and benchmarks of every level in one process. */
void at_gemm_portable(int transA, int transB, int M, int N, int K, attend_real alpha,
                      const attend_real *A, int lda, const attend_real *B, int ldb,
                      attend_real beta, attend_real *C, int ldc);
void at_gemm_portable_level(int level, int transA, int transB, int M, int N, int K, attend_real alpha,
                            const attend_real *A, int lda, const attend_real *B, int ldb,
                            attend_real beta, attend_real *C, int ldc);

/* A matrix packed once for the own GEMM's blocked products (a weight that is
 * multiplied at every time step): all of op(B) [K,N] in the panel layout of
 * the process's instruction-set level (src/core/gemm_tile.h, pack_b_all).
 * at_pack_floats: the floats at_pack writes for op(B) [K,N] at this level;
 * at_pack: packs op(B) (B as at_gemm reads it) into dst (64-byte aligned, as
 * the kernel's own buffers: rows of panels across cache lines cost twice the
 * loads) and describes it in pk. at_gemm_w is at_gemm with that packed copy of its B: where the product
 * takes the blocked path (M >= 2 rows) with the own GEMM, the panels are read
 * instead of packed again, with the same bits; otherwise (pk NULL, one row,
 * OpenBLAS, a copy of another shape or level) it is at_gemm. */
typedef struct {
    const attend_real *data; /* [K, npad] panels */
    int K, N, npad, level;
} at_packed;
size_t at_pack_floats(int K, int N);
/* 1 when OpenBLAS does the products in this process (attend_gemm_backend). */
int at_gemm_uses_blas(void);
void at_pack(at_packed *pk, attend_real *dst, int transB, const attend_real *B, int ldb, int K, int N);
void at_gemm_w(int transA, int transB, int M, int N, int K, attend_real alpha, const attend_real *A, int lda,
               const attend_real *B, int ldb, const at_packed *pk, attend_real beta, attend_real *C, int ldc);
/* Rows of a larger product of whole_M rows (A and C at those rows), on the
 * calling thread, by the path the whole product takes: the bits at_gemm_w
 * gives those rows (a caller that splits a product by rows and fuses each
 * share with what follows it, src/core/rnn.c). */
void at_gemm_rows(int whole_M, int transA, int transB, int M, int N, int K, attend_real alpha, const attend_real *A,
                  int lda, const attend_real *B, int ldb, const at_packed *pk, attend_real beta, attend_real *C,
                  int ldc);

/* C[b] = alpha op(A[b]) op(B[b]) + beta C[b] for b in [0,batch), with fixed
 * element strides between batch entries (0 = shared operand). */
void at_gemm_batched(int batch, int transA, int transB, int M, int N, int K, attend_real alpha,
                     const attend_real *A, int lda, size_t strideA,
                     const attend_real *B, int ldb, size_t strideB, attend_real beta,
                     attend_real *C, int ldc, size_t strideC);

/* Threads (src/core/threads.c: the library's own pool, not OpenMP).
 * at_threads(work): how many threads a loop of `work` (about one multiply-add
 * each) may use: 1 without ATTEND_THREADS, inside a chunk, or for small work;
 * at most attend_threads(). at_parallel_chunks runs fn(ctx, c) for every
 * chunk c of [0, nchunks) on up to nt threads (the caller is one of them),
 * each chunk once, and returns when all are done; chunks must write disjoint
 * memory, and which thread runs a chunk must not change its result.
 * at_parallel_rows splits rows [0, n) into chunks of whole `align` blocks
 * (at_chunk_range) over at_threads(work) threads and runs fn(ctx, lo, hi) on
 * each, or fn(ctx, 0, n) once on the caller. The library parallelizes only
 * loops whose chunks write disjoint rows, so results do not depend on the
 * thread count. at_cpu_count: the CPUs this process may run on. */
typedef void (*at_chunk_fn)(void *ctx, int chunk);
typedef void (*at_rows_fn)(void *ctx, int lo, int hi);
int at_threads(double work);
int at_cpu_count(void);
void at_parallel_chunks(int nt, int nchunks, at_chunk_fn fn, void *ctx);
void at_parallel_rows(double work, int n, int align, at_rows_fn fn, void *ctx);
void at_chunk_range(int n, int align, int nchunks, int c, int *lo, int *hi);

/* dst [cols] += Σ_r rows[r,:] over rows [R,cols] (bias gradients),
 * rows [R,cols] += v [cols] (adding a bias to every row), and
 * rows [R,cols] = relu(rows + v) (z > 0 ? z : 0: a feed-forward's first layer). */
void at_rows_sum(attend_real *dst, const attend_real *rows, size_t R, int cols);
void at_rows_add(attend_real *rows, const attend_real *v, size_t R, int cols);
void at_rows_add_relu(attend_real *rows, const attend_real *v, size_t R, int cols);

/* Packed copies of the additive score's Wq (a model's, at_model_pack) for
 * qp = q Wqᵀ (wq) and dq += dqp Wq (wq_dx); NULL members (or no struct):
 * the products pack as they go, with the same bits. */
typedef struct {
    const at_packed *wq, *wq_dx;
} at_score_packs;

/* The additive score of attend_scores_forward, unchecked: scores [N,T,S],
 * saved (qp [N,T,A], then the tanh values [N,T,S,A] when keep_tanh; decoding
 * passes 0 and needs only the qp part). */
void at_additive_scores(const attend_score_config *cfg, const attend_score_params *p, attend_real *scores,
                        attend_real *saved, const attend_real *q, const attend_real *kp, int N, int T, int S,
                        int keep_tanh, const at_score_packs *pk);

/* Softmax rows with masks (shared by attention, multi-head and pointer code).
 * Row r = (g, t) of `rows_per_group` groups G: rows are [G,T,S]; the key
 * padding mask row for group g is valid[(g / mask_div) * S] (mask_div = H for
 * multi-head, where G = N*H). log_out != 0 writes log-probabilities with
 * -INFINITY at excluded positions. `who` names the caller in messages. */
attend_status at_masked_softmax(attend_real *out, const attend_real *scores,
                                const uint8_t *valid, const uint8_t *allowed, int causal,
                                int G, int T, int S, int mask_div, int log_out,
                                const char *who, attend_error *err);

/* dscores += J(weights)ᵀ dweights over G*T rows of S (weights are probabilities). */
void at_softmax_backward(attend_real *dscores, const attend_real *dweights,
                         const attend_real *weights, size_t rows, int S);

/* Vocabulary internals shared by vocab.c and data.c. at_vocab_encode is
 * attend_vocab_encode with `base`, the byte offset of text within its line,
 * added to the offsets in messages; at_vocab_truncate removes the newest ids
 * so that the vocabulary has n tokens again (undoing a failed line). */
attend_status at_vocab_encode(attend_vocab *v, attend_tokenizer tok, int grow, const char *text,
                              size_t len, size_t base, int32_t *ids, int max_ids, int *n_ids,
                              attend_error *err);
void at_vocab_truncate(attend_vocab *v, int n);

/* Applies a weight edit to one attention row w [S] over valid [S] (intervene.c);
 * the caller has checked the arguments (attend_weights_edit checks and calls it). */
void at_weights_edit(attend_real *w, const uint8_t *valid, int S, attend_weight_edit edit, const int32_t *perm);

/* File-system messages shared by src/io/ (defined in src/io/outpath.c):
 * strerror_r of e into out, or "error N"; what a stat mode names ("a
 * directory", "a FIFO", ...). */
void at_errno_text(char out[128], int e);
const char *at_file_kind(unsigned mode);

#endif
