/*
 * attend/core.h — the kernels: status codes, attention (score functions,
 * masked softmax, context, multi-head, hard, pointer), random numbers,
 * recurrent cell kinds, optimizers.
 *
 * Part of the public header: include <attend.h> (it includes every part).
 * Every exported symbol starts with `attend_` (macros and enum values with
 * `ATTEND_`).
 *
 * Conventions (the same in every function below):
 *   - Arrays are row-major, last index contiguous (PyTorch order). The shape of
 *     every pointer argument is written beside it, with the project's dimension
 *     letters (the project table, src/seq2seq/state.h): N batch,
 *     T query (target) positions, S source positions, Dq query width, Dk key
 *     width, Dv value width, A additive attention width, P projected-key
 *     width, D embed width (attend_mha_config's field E is D), H heads,
 *     dh = D/H head width, He encoder hidden width per direction, E = 2He
 *     encoder output width, Hd decoder hidden width, G gates per cell,
 *     V vocabulary.
 *   - Masks are *validity* masks: a nonzero byte means "may be attended to".
 *     (PyTorch's boolean masks mean the opposite; tools/make_ref.py converts.)
 *   - Every fallible function returns an attend_status and, when `err` is not
 *     NULL, fills err->msg with what was wrong and the offending values. The
 *     library never prints and never exits. On error, output arrays may have
 *     been left untouched or partly written; inputs are never modified.
 *   - *_forward functions overwrite their outputs. *_backward functions
 *     ACCUMULATE (+=) into every gradient they are given, so a caller zeroes
 *     gradients once per step; a NULL gradient pointer means "not needed".
 *   - Functions are reentrant: they keep no global state, so different threads
 *     may call them at once on different buffers.
 *
 * attend_real is float. Building with ATTEND_DOUBLE makes it double; that is
 * only for the test build that checks gradients by finite differences in double
 * precision. Never define it when linking the installed library.
 */
#ifndef ATTEND_CORE_H
#define ATTEND_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Old names kept as thin wrappers of the functions that replace them (each
 * says which); compilers warn where they are used. Define
 * ATTEND_NO_DEPRECATION_WARNINGS to silence that. */
#if defined(__GNUC__) && !defined(ATTEND_NO_DEPRECATION_WARNINGS) && !defined(ATTEND_BUILDING)
#define ATTEND_DEPRECATED(why) __attribute__((deprecated(why)))
#else
#define ATTEND_DEPRECATED(why)
#endif

/* Options structs grow at their end: the caller sets `size` to the
 * sizeof() it was compiled with (ATTEND_OPTIONS_INIT), the library reads
 * that many bytes and takes 0 for every field after them; a struct from a
 * newer library is accepted when every byte beyond what this one knows is 0. */
#define ATTEND_OPTIONS_INIT(type) {.size = sizeof(type)}

#define ATTEND_VERSION_MAJOR 0
#define ATTEND_VERSION_MINOR 1
#define ATTEND_VERSION_PATCH 0
#define ATTEND_VERSION_STRING "0.1.0"

#ifdef ATTEND_DOUBLE
typedef double attend_real;
#else
typedef float attend_real;
#endif

/* ---------------------------------------------------------------- errors */

/* Values are pinned: new codes are only appended. */
typedef enum {
    ATTEND_OK = 0,
    ATTEND_ERR_NULL = 1,        /* a required pointer argument is NULL */
    ATTEND_ERR_SHAPE = 2,       /* a dimension is < 1 or two dimensions disagree */
    ATTEND_ERR_MASKED_ROW = 3,  /* every source position of a row is masked */
    ATTEND_ERR_ARG = 4,         /* an argument value is invalid (kind, scale, index) */
    ATTEND_ERR_ALLOC = 5,       /* out of memory */
    ATTEND_ERR_NONFINITE = 6,   /* NaN or Inf where a finite number is required */
    ATTEND_ERR_IO = 7,          /* a file could not be read or written */
    ATTEND_ERR_FORMAT = 8,      /* a file or data line is malformed */
    ATTEND_ERR_CAPACITY = 9,    /* a workspace or configured capacity is too small */
} attend_status;

#define ATTEND_ERROR_MSG_MAX 256

typedef struct {
    attend_status status;
    char msg[ATTEND_ERROR_MSG_MAX]; /* NUL-terminated, empty when status == ATTEND_OK */
} attend_error;

/* Stable name of a status code ("ATTEND_ERR_SHAPE"); "ATTEND_ERR_UNKNOWN" otherwise. */
const char *attend_status_name(attend_status status);

/* Library version string, e.g. "0.1.0". */
const char *attend_version(void);

/* Which matrix products run in this process: "own" (attend's packed GEMM,
 * src/core/gemm.c: every build has it and it is the default) or "openblas"
 * (a build configured with -DATTEND_BLAS=ON, when OpenBLAS's kernels are at
 * least the instruction-set level attend runs at; an OpenBLAS older than the
 * CPU runs generic SSE3 kernels, and then the own GEMM runs instead). The
 * environment variable ATTEND_GEMM=own|openblas overrides the choice.
 * attend_gemm_info: the same with the reason, e.g. "own (OpenBLAS reports
 * Prescott on an AVX-512 CPU)" or "openblas (Haswell kernels)". Decided on
 * first use; thread-safe; the strings are static. */
const char *attend_gemm_backend(void);
const char *attend_gemm_info(void);

/* The instruction-set level the vectorized kernels run at in this process:
 * "avx512" (x86-64-v4), "avx2" (x86-64-v3) or "baseline". Decided on first use:
 * the best level the CPU supports, or a lower one named by the environment
 * variable ATTEND_ISA=baseline|avx2|avx512 (read once; a level the CPU lacks
 * falls back to the best it has, an unknown value is ignored). Thread-safe. */
const char *attend_isa(void);

/* ---------------------------------------------------------------- threads */
/*
 * The library's worker threads (its own pool: POSIX threads, no OpenMP
 * runtime). A call splits its large loops (GEMM blocks, batch rows, the two
 * encoder directions) into chunks that the calling thread and the workers
 * claim; small loops (under about 64k multiply-adds) run on the caller alone.
 * Results are byte-identical at every thread count.
 *
 * attend_set_threads(n): n >= 1 uses at most n threads per call (the caller
 * counts as one; 1 = never start a worker); n = 0 is automatic, the default:
 * every CPU this process may run on (sched_getaffinity), chosen by
 * measurement (docs/PERFORMANCE.md, "Threads": with another process keeping
 * a core busy, a worker that is not scheduled leaves its chunks to the
 * caller, so the default costs at most a few percent against one thread).
 * Until the first call, the environment sets the default: ATTEND_NUM_THREADS,
 * else OMP_NUM_THREADS, when it holds a count. Returns ATTEND_ERR_ARG for
 * n < 0 or n > 1024 (or n > 1 in a build without threads).
 *
 * Thread-safety: process-wide and atomic; any thread may call it at any time,
 * and a call already running keeps the count it started with. The pool runs
 * one call's loops at a time: when two of the caller's threads call the
 * library at once, the second runs its loops on its own thread (so a program
 * that decodes from several threads gets one core per thread, never more
 * threads than cores from us). Idle workers spin for at most 50 µs after a
 * loop (the next loop of a decoder step comes microseconds later), then
 * sleep without using CPU until the next call; a forked child starts with no
 * workers.
 *
 * attend_threads(): the count the next call may use (the setting resolved:
 * automatic gives the CPU count). 1 in a build without threads.
 */
attend_status attend_set_threads(int n, attend_error *err);
int attend_threads(void);

/* ------------------------------------------------------- score functions */
/*
 * A score function compares every query q_t with every key k_j:
 *   DOT         e = q·k                    (requires Dq == Dk)
 *   SCALED_DOT  e = scale · q·k            (scale 0 means 1/sqrt(Dk); requires Dq == Dk)
 *   GENERAL     e = qᵀ W k,  W [Dq,Dk]     (Luong "general", bilinear)
 *   ADDITIVE    e = vᵀ tanh(Wq q + Wk k + b),  Wq [A,Dq], Wk [A,Dk], v [A], b [A] optional
 *                                          (Bahdanau "concat")
 *
 * The key side can be computed once per sequence and reused for every query
 * step (a decoder reads the same saved states T times). So scoring is split:
 *   attend_keys_forward:    kp [N,S,P] = project(k [N,S,Dk])
 *       DOT, SCALED_DOT: P = Dk, kp = k (a copy)
 *       GENERAL:         P = Dq, kp = k Wᵀ        (so that e = q·kp)
 *       ADDITIVE:        P = A,  kp = k Wkᵀ + b
 *   attend_scores_forward:  scores [N,T,S] from q [N,T,Dq] and kp.
 */
typedef enum {
    ATTEND_SCORE_DOT = 0,
    ATTEND_SCORE_SCALED_DOT = 1,
    ATTEND_SCORE_GENERAL = 2,
    ATTEND_SCORE_ADDITIVE = 3,
} attend_score_kind;

typedef struct {
    attend_score_kind kind;
    int Dq;            /* query width */
    int Dk;            /* key width */
    int A;             /* ADDITIVE: hidden width; ignored otherwise */
    int additive_bias; /* ADDITIVE: nonzero when the bias b [A] is used */
    double scale;      /* SCALED_DOT: multiplier of q·k; 0 selects 1/sqrt(Dk) */
} attend_score_config;

/* Parameters, not owned. Members a kind does not use are ignored. */
typedef struct {
    const attend_real *W;  /* GENERAL  [Dq,Dk] */
    const attend_real *Wq; /* ADDITIVE [A,Dq] */
    const attend_real *Wk; /* ADDITIVE [A,Dk] */
    const attend_real *b;  /* ADDITIVE [A], only read when additive_bias != 0 */
    const attend_real *v;  /* ADDITIVE [A] */
} attend_score_params;

/* Parameter gradients, same shapes as attend_score_params; accumulated (+=).
 * Any member may be NULL (that gradient is skipped). */
typedef struct {
    attend_real *W;
    attend_real *Wq;
    attend_real *Wk;
    attend_real *b;
    attend_real *v;
} attend_score_grads;

/* Checks a score configuration (kind known, widths >= 1, Dq == Dk for the dot
 * kinds, finite non-negative scale). Returns ATTEND_OK or the reason. */
attend_status attend_score_config_check(const attend_score_config *cfg, attend_error *err);

/* Width P of the projected keys (see above); 0 for an invalid configuration. */
int attend_score_key_width(const attend_score_config *cfg);

/* The multiplier actually applied to q·k: 1 for DOT and GENERAL, the resolved
 * scale for SCALED_DOT, 0 for ADDITIVE (which has no such multiplier). */
double attend_score_effective_scale(const attend_score_config *cfg);

/* kp [N,S,P] = project(k [N,S,Dk]). */
attend_status attend_keys_forward(const attend_score_config *cfg, const attend_score_params *p,
                                  attend_real *kp, const attend_real *k, int N, int S,
                                  attend_error *err);

/* dk [N,S,Dk] += ∂/∂k, grads += ∂/∂params, from dkp [N,S,P]. k [N,S,Dk] is the
 * forward input. dk may be NULL. */
attend_status attend_keys_backward(const attend_score_config *cfg, const attend_score_params *p,
                                   const attend_score_grads *g, attend_real *dk,
                                   const attend_real *dkp, const attend_real *k, int N, int S,
                                   attend_error *err);

/* Number of attend_real values the ADDITIVE score saves for its backward pass
 * (N*T*A + N*T*S*A); 0 for the other kinds. Returns 0 and sets *overflow when
 * the count does not fit a size_t (overflow may be NULL). */
size_t attend_scores_saved_size(const attend_score_config *cfg, int N, int T, int S, int *overflow);

/* scores [N,T,S] from q [N,T,Dq] and projected keys kp [N,S,P].
 * saved: attend_scores_saved_size() values for ADDITIVE (kept for backward),
 * may be NULL for the other kinds. */
attend_status attend_scores_forward(const attend_score_config *cfg, const attend_score_params *p,
                                    attend_real *scores, attend_real *saved,
                                    const attend_real *q, const attend_real *kp,
                                    int N, int T, int S, attend_error *err);

/* dq [N,T,Dq] +=, dkp [N,S,P] +=, grads += from dscores [N,T,S]. q, kp and
 * saved are the forward's. dq or dkp may be NULL. For ADDITIVE, the first N*T*A
 * values of saved (the forward's query projection, which backward does not
 * read) serve as scratch, so backward may be called again on the same saved. */
attend_status attend_scores_backward(const attend_score_config *cfg, const attend_score_params *p,
                                     const attend_score_grads *g, attend_real *dq,
                                     attend_real *dkp, const attend_real *dscores,
                                     attend_real *saved, const attend_real *q,
                                     const attend_real *kp, int N, int T, int S,
                                     attend_error *err);

/*
 * The additive score with a coverage input (Tu et al. 2016; See et al. 2017,
 * eq. 11): scores[n,t,j] = vᵀ tanh(Wq q[n,t] + kp[n,j] + w_cov · cov[n,t,j])
 * with kp = k Wkᵀ + b from attend_keys_forward (cfg.kind must be ADDITIVE),
 * cov [N,T,S] the coverage of each source position before query t (in the
 * model the sum of the earlier steps' weights) and w_cov [A] its weight
 * (model tensor attention.w_cov). saved: attend_scores_saved_size() values,
 * kept for backward. Backward: dq [N,T,Dq], dkp [N,S,A], dcov [N,T,S], g_wcov
 * [A] and g (Wq, v) += (each may be NULL); saved's first N*T*A values serve
 * as scratch, as for attend_scores_backward. Thread-safe on distinct outputs.
 */
attend_status attend_coverage_scores_forward(const attend_score_config *cfg, const attend_score_params *p,
                                             const attend_real *w_cov, attend_real *scores, attend_real *saved,
                                             const attend_real *q, const attend_real *kp, const attend_real *cov,
                                             int N, int T, int S, attend_error *err);
attend_status attend_coverage_scores_backward(const attend_score_config *cfg, const attend_score_params *p,
                                              const attend_score_grads *g, const attend_real *w_cov,
                                              attend_real *g_wcov, attend_real *dq, attend_real *dkp,
                                              attend_real *dcov, const attend_real *dscores, attend_real *saved,
                                              const attend_real *q, const attend_real *kp, const attend_real *cov,
                                              int N, int T, int S, attend_error *err);

/* --------------------------------------------------- masked softmax, context */

/*
 * weights [N,T,S] = softmax over source positions of scores [N,T,S], where
 * position j of row (n,t) takes part only if
 *     (valid == NULL or valid[n*S+j] != 0)      key padding mask  valid [N,S]
 * and (allowed == NULL or allowed[t*S+j] != 0)  attention mask    allowed [T,S]
 * and (causal == 0 or j <= t).                  causal (top-left aligned)
 * Excluded positions get weight exactly 0 and do not enter the denominator.
 * A row with no position left is ATTEND_ERR_MASKED_ROW naming the row; a NaN or
 * Inf score at an included position is ATTEND_ERR_NONFINITE. Both are checked
 * before anything is written. The row maximum is subtracted before exp, so any
 * finite scores (1e4, -1e30) give finite weights that sum to 1.
 */
attend_status attend_masked_softmax_forward(attend_real *weights, const attend_real *scores,
                                            const uint8_t *valid, const uint8_t *allowed,
                                            int causal, int N, int T, int S, attend_error *err);

/* dscores [N,T,S] += J(weights)ᵀ dweights [N,T,S]. Masked positions (weight 0)
 * receive exactly 0. */
attend_status attend_masked_softmax_backward(attend_real *dscores, const attend_real *dweights,
                                             const attend_real *weights, int N, int T, int S,
                                             attend_error *err);

/* ------------------------------------------------ sparse normalisers */
/*
 * What turns a row of scores into attention weights (masks honoured by all):
 *   SOFTMAX    w = exp(z) / Σ exp(z)
 *   SPARSEMAX  w = argmin_{p ∈ simplex} ‖p − z‖² = max(z − τ, 0), Σ w = 1
 *              (Martins & Astudillo 2016: Euclidean projection onto the simplex)
 *   ENTMAX15   w = max(z/2 − τ, 0)², Σ w = 1
 *              (Peters, Niculae & Martins 2019: α-entmax with α = 1.5)
 * The two sparse maps give exact zeros wherever a score is at or below the
 * threshold τ; masked positions are exactly 0 for every map. τ is found by the
 * papers' exact sort-based algorithms (O(S log S) per row, sums in double).
 */
typedef enum {
    ATTEND_NORMALIZER_SOFTMAX = 0,
    ATTEND_NORMALIZER_SPARSEMAX = 1,
    ATTEND_NORMALIZER_ENTMAX15 = 2,
} attend_normalizer;

/* weights [N,T,S] = normalizer(scores [N,T,S]) over the positions the masks
 * keep (valid [N,S], allowed [T,S], causal: exactly as in
 * attend_masked_softmax_forward, with the same errors, checked before
 * anything is written). weights and scores must be different arrays
 * (ATTEND_ERR_ARG otherwise); an unknown normalizer is ATTEND_ERR_ARG. */
attend_status attend_masked_normalize_forward(attend_normalizer normalizer, attend_real *weights,
                                              const attend_real *scores, const uint8_t *valid,
                                              const uint8_t *allowed, int causal, int N, int T, int S,
                                              attend_error *err);

/* dscores [N,T,S] += J(weights)ᵀ dweights [N,T,S] for the map that produced
 * weights [N,T,S] (the forward's output; nothing else is needed):
 *   SOFTMAX    ds = w ⊙ (g − Σ w g)
 *   SPARSEMAX  ds_j = g_j − mean_{k: w_k > 0} g_k on the support, 0 elsewhere
 *   ENTMAX15   with s = sqrt(w): ds = s ⊙ g − (Σ s g / Σ s) s
 * Positions of weight 0 (masked or outside the support) receive exactly 0. */
attend_status attend_masked_normalize_backward(attend_normalizer normalizer, attend_real *dscores,
                                               const attend_real *dweights, const attend_real *weights,
                                               int N, int T, int S, attend_error *err);

/* The same two for one map each (attend_masked_normalize_* with
 * ATTEND_NORMALIZER_SPARSEMAX or ATTEND_NORMALIZER_ENTMAX15). */
attend_status attend_masked_sparsemax_forward(attend_real *weights, const attend_real *scores,
                                              const uint8_t *valid, const uint8_t *allowed, int causal,
                                              int N, int T, int S, attend_error *err);
attend_status attend_masked_sparsemax_backward(attend_real *dscores, const attend_real *dweights,
                                               const attend_real *weights, int N, int T, int S,
                                               attend_error *err);
attend_status attend_masked_entmax15_forward(attend_real *weights, const attend_real *scores,
                                             const uint8_t *valid, const uint8_t *allowed, int causal,
                                             int N, int T, int S, attend_error *err);
attend_status attend_masked_entmax15_backward(attend_real *dscores, const attend_real *dweights,
                                              const attend_real *weights, int N, int T, int S,
                                              attend_error *err);

/* The threshold τ of one row z [S] of scores (no masks) under normalizer:
 * SPARSEMAX: w = max(z − τ, 0); ENTMAX15: w = max(z/2 − τ, 0)² (τ on the
 * halved scores); SOFTMAX: log Σ exp(z) (w = exp(z − τ)). *support (may be
 * NULL) receives the number of nonzero weights. For explanations and tests;
 * NaN for a bad argument (S outside [1, 256], z NULL, a non-finite score). */
double attend_normalizer_threshold(attend_normalizer normalizer, const attend_real *z, int S, int *support);

/* ctx [N,T,Dv] = weights [N,T,S] · values v [N,S,Dv]  (c_t = Σ_j α_tj v_j). */
attend_status attend_context_forward(attend_real *ctx, const attend_real *weights,
                                     const attend_real *v, int N, int T, int S, int Dv,
                                     attend_error *err);

/* dweights [N,T,S] +=, dv [N,S,Dv] += from dctx [N,T,Dv]. Either may be NULL. */
attend_status attend_context_backward(attend_real *dweights, attend_real *dv,
                                      const attend_real *dctx, const attend_real *weights,
                                      const attend_real *v, int N, int T, int S, int Dv,
                                      attend_error *err);

/* ------------------------------------------------ one-shot soft attention */
/*
 * keys → scores → masked softmax → context, with separate keys k [N,S,Dk] and
 * values v [N,S,Dv] (pass the same array for the classic K = V case).
 * The workspace holds the intermediates the backward pass needs; its size in
 * attend_real values is attend_attention_workspace_size() (0 on overflow).
 * Pass the same workspace, untouched, to attend_attention_backward.
 */
size_t attend_attention_workspace_size(const attend_score_config *cfg, int N, int T, int S);

attend_status attend_attention_forward(const attend_score_config *cfg,
                                       const attend_score_params *p,
                                       attend_real *ctx,       /* [N,T,Dv] out */
                                       attend_real *weights,   /* [N,T,S] out */
                                       const attend_real *q,   /* [N,T,Dq] */
                                       const attend_real *k,   /* [N,S,Dk] */
                                       const attend_real *v,   /* [N,S,Dv] */
                                       const uint8_t *valid,   /* [N,S] or NULL */
                                       const uint8_t *allowed, /* [T,S] or NULL */
                                       int causal, int N, int T, int S, int Dv,
                                       attend_real *workspace, size_t workspace_len,
                                       attend_error *err);

/* Accumulates dq [N,T,Dq], dk [N,S,Dk], dv [N,S,Dv] and parameter grads from
 * dctx [N,T,Dv] and, optionally, dweights [N,T,S] (a loss on the weights
 * themselves, e.g. a pointer loss; NULL when none). weights, q, k, v and the
 * workspace are the forward's. Any of dq, dk, dv may be NULL. */
attend_status attend_attention_backward(const attend_score_config *cfg,
                                        const attend_score_params *p,
                                        const attend_score_grads *g,
                                        attend_real *dq, attend_real *dk, attend_real *dv,
                                        const attend_real *dctx, const attend_real *dweights,
                                        const attend_real *weights, const attend_real *q,
                                        const attend_real *k, const attend_real *v,
                                        int N, int T, int S, int Dv,
                                        attend_real *workspace, size_t workspace_len,
                                        attend_error *err);

/*
 * The options of one-shot attention (attend_attention_compute and
 * attend_attention_gradient): the normaliser that turns scores into weights
 * (0: softmax), the key padding mask valid [N,S] and the attention mask
 * allowed [T,S] (nonzero = may attend; NULL: all), causal (position j <= t).
 * Pass the forward's options to the gradient.
 */
typedef struct {
    size_t size; /* sizeof(attend_attention_options) */
    attend_normalizer normalizer;
    const uint8_t *valid;
    const uint8_t *allowed;
    int causal;
} attend_attention_options;

/* keys → scores → masked normaliser → context over workspace (as
 * attend_attention_forward) with options o (NULL: softmax, no masks). */
attend_status attend_attention_compute(const attend_score_config *cfg, const attend_score_params *p,
                                       const attend_attention_options *o,
                                       attend_real *ctx,       /* [N,T,Dv] out */
                                       attend_real *weights,   /* [N,T,S] out */
                                       const attend_real *q,   /* [N,T,Dq] */
                                       const attend_real *k,   /* [N,S,Dk] */
                                       const attend_real *v,   /* [N,S,Dv] */
                                       int N, int T, int S, int Dv, attend_real *workspace, size_t workspace_len,
                                       attend_error *err);
/* Its gradients (as attend_attention_backward) under the forward's options o. */
attend_status attend_attention_gradient(const attend_score_config *cfg, const attend_score_params *p,
                                        const attend_attention_options *o, const attend_score_grads *g,
                                        attend_real *dq, attend_real *dk, attend_real *dv, const attend_real *dctx,
                                        const attend_real *dweights, const attend_real *weights,
                                        const attend_real *q, const attend_real *k, const attend_real *v, int N,
                                        int T, int S, int Dv, attend_real *workspace, size_t workspace_len,
                                        attend_error *err);

/* attend_attention_forward / _backward with the weights from normalizer
 * (attend_normalizer: softmax, sparsemax, entmax15) instead of the softmax;
 * same arguments, workspace, masks and errors (an unknown normalizer is
 * ATTEND_ERR_ARG). Pass the forward's normalizer to the backward. With
 * ATTEND_NORMALIZER_SOFTMAX they are the two functions above. */
attend_status attend_attention_forward_normalized(const attend_score_config *cfg, const attend_score_params *p,
                                                  attend_normalizer normalizer,
                                                  attend_real *ctx,       /* [N,T,Dv] out */
                                                  attend_real *weights,   /* [N,T,S] out */
                                                  const attend_real *q,   /* [N,T,Dq] */
                                                  const attend_real *k,   /* [N,S,Dk] */
                                                  const attend_real *v,   /* [N,S,Dv] */
                                                  const uint8_t *valid,   /* [N,S] or NULL */
                                                  const uint8_t *allowed, /* [T,S] or NULL */
                                                  int causal, int N, int T, int S, int Dv,
                                                  attend_real *workspace, size_t workspace_len, attend_error *err)
    ATTEND_DEPRECATED("attend_attention_compute with attend_attention_options.normalizer");

attend_status attend_attention_backward_normalized(const attend_score_config *cfg, const attend_score_params *p,
                                                   attend_normalizer normalizer, const attend_score_grads *g,
                                                   attend_real *dq, attend_real *dk, attend_real *dv,
                                                   const attend_real *dctx, const attend_real *dweights,
                                                   const attend_real *weights, const attend_real *q,
                                                   const attend_real *k, const attend_real *v, int N, int T, int S,
                                                   int Dv, attend_real *workspace, size_t workspace_len,
                                                   attend_error *err)
    ATTEND_DEPRECATED("attend_attention_gradient with attend_attention_options.normalizer");

/* ------------------------------------------------------ multi-head attention */
/*
 * The semantics of PyTorch's nn.MultiheadAttention(embed_dim=D, num_heads=H,
 * kdim, vdim, bias, batch_first=True), without dropout:
 *   Q = q Wqᵀ + bq [N,T,D],  K = k Wkᵀ + bk [N,S,D],  V = v Wvᵀ + bv [N,S,D]
 *   per head h (width D/H): P_h = masked_softmax(Q_h K_hᵀ / sqrt(D/H)),  O_h = P_h V_h
 *   out = concat_h(O_h) Woᵀ + bo [N,T,D]
 * Parameter names map to PyTorch as: Wq, Wk, Wv = in_proj_weight split in
 * three rows blocks (or q/k/v_proj_weight when kdim/vdim != D), bq, bk, bv =
 * in_proj_bias split in three, Wo = out_proj.weight, bo = out_proj.bias.
 */
typedef struct {
    int E;    /* embed width D (named after PyTorch's embed_dim): query width and output width */
    int H;    /* heads; E % H == 0 (D divisible by H) */
    int kdim; /* key width; 0 means D */
    int vdim; /* value width; 0 means D */
    int bias; /* nonzero: bq, bk, bv, bo are used */
} attend_mha_config;

typedef struct {
    const attend_real *Wq; /* [D,D] */
    const attend_real *Wk; /* [D,kdim] */
    const attend_real *Wv; /* [D,vdim] */
    const attend_real *bq; /* [D] (bias only) */
    const attend_real *bk; /* [D] (bias only) */
    const attend_real *bv; /* [D] (bias only) */
    const attend_real *Wo; /* [D,D] */
    const attend_real *bo; /* [D] (bias only) */
} attend_mha_params;

/* Same shapes as attend_mha_params; accumulated (+=); NULL members skipped. */
typedef struct {
    attend_real *Wq, *Wk, *Wv, *bq, *bk, *bv, *Wo, *bo;
} attend_mha_grads;

/* Checks E (the embed width D), H, kdim, vdim. */
attend_status attend_mha_config_check(const attend_mha_config *cfg, attend_error *err);

/* Workspace for forward + backward, in attend_real values (0 on overflow or an
 * invalid configuration). */
size_t attend_mha_workspace_size(const attend_mha_config *cfg, int N, int T, int S);

/* weights: NULL, or [N,H,T,S] per head when average_weights == 0, or [N,T,S]
 * averaged over heads when average_weights != 0 (PyTorch's default). */
attend_status attend_mha_forward(const attend_mha_config *cfg, const attend_mha_params *p,
                                 attend_real *out,       /* [N,T,D] */
                                 attend_real *weights,   /* see above, or NULL */
                                 int average_weights,
                                 const attend_real *q,   /* [N,T,D] */
                                 const attend_real *k,   /* [N,S,kdim] */
                                 const attend_real *v,   /* [N,S,vdim] */
                                 const uint8_t *valid,   /* [N,S] key padding, or NULL */
                                 const uint8_t *allowed, /* [T,S] attention mask, or NULL */
                                 int causal, int N, int T, int S,
                                 attend_real *workspace, size_t workspace_len,
                                 attend_error *err);

/* Accumulates dq [N,T,D], dk [N,S,kdim], dv [N,S,vdim] (each may be NULL) and
 * grads from dout [N,T,D]. q, k, v and workspace are the forward's. When q, k
 * and v are one array (self-attention), pass the same dq/dk/dv array too: the
 * three contributions add up. */
attend_status attend_mha_backward(const attend_mha_config *cfg, const attend_mha_params *p,
                                  const attend_mha_grads *g,
                                  attend_real *dq, attend_real *dk, attend_real *dv,
                                  const attend_real *dout,
                                  const attend_real *q, const attend_real *k, const attend_real *v,
                                  int N, int T, int S,
                                  attend_real *workspace, size_t workspace_len,
                                  attend_error *err);

/* Self-attention: attend_mha_forward with q = k = v = x [N,T,D] (so kdim and
 * vdim must be D or 0), valid [N,T] or NULL, optional causal mask. */
attend_status attend_self_attention_forward(const attend_mha_config *cfg,
                                            const attend_mha_params *p,
                                            attend_real *out, attend_real *weights,
                                            int average_weights, const attend_real *x,
                                            const uint8_t *valid, int causal, int N, int T,
                                            attend_real *workspace, size_t workspace_len,
                                            attend_error *err);

/* dx [N,T,D] += from dout, for attend_self_attention_forward. */
attend_status attend_self_attention_backward(const attend_mha_config *cfg,
                                             const attend_mha_params *p,
                                             const attend_mha_grads *g, attend_real *dx,
                                             const attend_real *dout, const attend_real *x,
                                             int N, int T,
                                             attend_real *workspace, size_t workspace_len,
                                             attend_error *err);

/* ------------------------------------------------------------ random numbers */

/* Explicit RNG state (xoshiro256**); the library has no hidden global RNG. */
typedef struct {
    uint64_t s[4];
} attend_rng;

/* Seeds the state from one 64-bit seed (splitmix64 expansion). */
void attend_rng_seed(attend_rng *rng, uint64_t seed);
/* Next 64 random bits. */
uint64_t attend_rng_next(attend_rng *rng);
/* Uniform double in [0,1) with 53 random bits. */
double attend_rng_uniform(attend_rng *rng);

/* ----------------------------------------------------------- hard attention */

/* idx [N,T] = argmax_j weights[n,t,j]; ties go to the lowest position. */
attend_status attend_hard_argmax(int32_t *idx, const attend_real *weights, int N, int T, int S,
                                 attend_error *err);

/* idx [N,T] ~ Categorical(weights[n,t,:]), one uniform draw per row from rng.
 * Each row must be finite, non-negative and sum to 1 within 1e-3. */
attend_status attend_hard_sample(int32_t *idx, const attend_real *weights, attend_rng *rng,
                                 int N, int T, int S, attend_error *err);

/* ctx [N,T,Dv] = v[n, idx[n,t], :]  (values v [N,S,Dv]); idx out of range is
 * ATTEND_ERR_ARG naming the row. */
attend_status attend_hard_context_forward(attend_real *ctx, const int32_t *idx,
                                          const attend_real *v, int N, int T, int S, int Dv,
                                          attend_error *err);

/* dv [N,S,Dv] += dctx [N,T,Dv] scattered to the chosen positions. (The choice
 * itself has no gradient.) */
attend_status attend_hard_context_backward(attend_real *dv, const attend_real *dctx,
                                           const int32_t *idx, int N, int T, int S, int Dv,
                                           attend_error *err);

/* ------------------------------------------------------ pointer distribution */
/*
 * A pointer network uses the attention weights themselves as the output: a
 * distribution over input positions. logp [N,T,S] = masked log-softmax of
 * scores [N,T,S] (same masks and errors as attend_masked_softmax_forward);
 * excluded positions hold -INFINITY (probability exactly 0), all others are
 * finite.
 */
attend_status attend_pointer_logprobs_forward(attend_real *logp, const attend_real *scores,
                                              const uint8_t *valid, const uint8_t *allowed,
                                              int causal, int N, int T, int S,
                                              attend_error *err);

/* Mean negative log-likelihood over the rows whose target [N,T] is >= 0
 * (-1 = ignore): *loss = -Σ logp[n,t,target] / count, *count = number of rows
 * counted (count may be NULL). A target that is out of range or points at an
 * excluded position is ATTEND_ERR_ARG naming the row. No counted row: *loss = 0. */
attend_status attend_pointer_nll_forward(double *loss, int *count, const attend_real *logp,
                                         const int32_t *targets, int N, int T, int S,
                                         attend_error *err);

/* dscores [N,T,S] += ∂(mean NLL)/∂scores = (exp(logp) − onehot(target)) / count
 * for counted rows; 0 elsewhere. */
attend_status attend_pointer_nll_backward(attend_real *dscores, const attend_real *logp,
                                          const int32_t *targets, int N, int T, int S,
                                          attend_error *err);

/* ---------------------------------------------------- monotonic attention */
/*
 * Monotonic attention (Raffel et al. 2017): at step t the decoder scans the
 * source from the position where it stopped at step t−1 and stops at
 * position j with probability p_tj = σ(e_tj + r) (e: energies [N,T,S] from a
 * score function, r a scalar bias). Positions j >= len[n] (len [N], each in
 * [1,S]; NULL: all S) have p = 0 and α = 0.
 *
 * attend_monotonic_forward: the expected alignment of that process
 * (their eq. 9, the stable recurrence), for t = 0..T−1:
 *   q_tj = (1 − p_t,j−1) q_t,j−1 + α_t−1,j     (q_t,−1 = 0)
 *   α_tj = p_tj q_tj
 * with α_−1 the one-hot at position 0. alpha, p, q [N,T,S] out (p and q are
 * what the backward reads). A row's α sums to at most 1: the rest of the mass
 * has passed the end. Non-finite e or r is ATTEND_ERR_NONFINITE.
 */
attend_status attend_monotonic_forward(attend_real *alpha, attend_real *p, attend_real *q,
                                       const attend_real *e, attend_real r, const int32_t *len,
                                       int N, int T, int S, attend_error *err);

/* Backward of attend_monotonic_forward through the recurrence over j and over
 * t: from dalpha [N,T,S] into de [N,T,S] += and dr [1] += (either NULL: not
 * needed); p, q [N,T,S] as the forward returned them; work [2,N,S] scratch. */
attend_status attend_monotonic_backward(attend_real *de, attend_real *dr, const attend_real *dalpha,
                                        const attend_real *p, const attend_real *q, const int32_t *len,
                                        int N, int T, int S, attend_real *work, attend_error *err);

/* Hard monotonic attention, as decoding runs it: from the previous position
 * (0 at t = 0) attend to the first j with p_tj >= 0.5 (e_tj + r >= 0 up to
 * rounding): alpha[n,t] is the one-hot at j and pos[n,t] = j; with no such j
 * before len[n], alpha's row is 0 (a zero context) and pos[n,t] = S, and
 * every later step of the row attends to nothing. alpha [N,T,S], pos [N,T]
 * out. A NaN energy is ATTEND_ERR_NONFINITE. */
attend_status attend_monotonic_hard_forward(attend_real *alpha, const attend_real *e, attend_real r,
                                            const int32_t *len, int N, int T, int S, int32_t *pos,
                                            attend_error *err);


/* Recurrent cell kinds (PyTorch gate order and equations). */
typedef enum {
    ATTEND_CELL_GRU = 0,
    ATTEND_CELL_LSTM = 1,
} attend_cell_kind;


/* -------------------------------------------------------------- optimizer */
typedef enum {
    ATTEND_OPT_ADAM = 0, /* PyTorch torch.optim.Adam (weight decay added to the gradient) */
    ATTEND_OPT_SGD = 1,  /* PyTorch torch.optim.SGD with optional momentum */
} attend_optim_kind;

typedef struct {
    attend_optim_kind kind;
    double lr;            /* peak learning rate (> 0) */
    double beta1, beta2;  /* Adam, in [0,1) */
    double eps;           /* Adam, > 0 */
    double weight_decay;  /* >= 0 */
    double momentum;      /* SGD, in [0,1) */
    double clip_norm;     /* clip the global gradient norm to this; 0 = no clipping */
    int warmup_steps;     /* linear warm-up from lr/warmup to lr over these steps */
    int decay_steps;      /* then cosine decay to min_lr over these steps; 0 = constant */
    double min_lr;
} attend_optim_config;

/* Adam defaults: lr 1e-3, betas 0.9/0.999, eps 1e-8, no decay, no clipping. */
attend_optim_config attend_optim_defaults(attend_optim_kind kind);

typedef struct attend_optim attend_optim;

/* An optimizer for nparams values (one allocation for its moments). */
attend_status attend_optim_create(attend_optim **out, const attend_optim_config *cfg, size_t nparams,
                                  attend_error *err);
void attend_optim_free(attend_optim *o); /* NULL is fine */

/* The learning rate the schedule gives to 0-based step `step`. */
double attend_optim_lr_at(const attend_optim_config *cfg, long step);

typedef struct {
    double grad_norm; /* global L2 norm before clipping */
    double lr;        /* learning rate used */
    int clipped;      /* the gradients were scaled down */
} attend_optim_report;

/* One update of params [nparams] from grads [nparams] (grads are scaled in
 * place when clipped). A NaN/Inf gradient norm is ATTEND_ERR_NONFINITE with the
 * norm in the message: parameters, moments and the step count stay untouched
 * (the caller may skip the batch and go on). rep may be NULL. */
attend_status attend_optim_step(attend_optim *o, attend_real *params, attend_real *grads,
                                attend_optim_report *rep, attend_error *err);

/* Completed steps, and the moment buffers (Adam: m then v; SGD: momentum then
 * unused), 2*nparams values, for checkpoints. */
long attend_optim_steps(const attend_optim *o);
void attend_optim_set_steps(attend_optim *o, long steps);
attend_real *attend_optim_state(attend_optim *o, size_t *count);
const attend_optim_config *attend_optim_get_config(const attend_optim *o);


#ifdef __cplusplus
}
#endif

#endif /* ATTEND_CORE_H */
