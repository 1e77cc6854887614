/*
 * attend.h — attention-based sequence-to-sequence models in plain C11.
 *
 * The one public header. Every exported symbol starts with `attend_` (macros and
 * enum values with `ATTEND_`).
 *
 * Conventions (the same in every function below):
 *   - Arrays are row-major, last index contiguous (PyTorch order). The shape of
 *     every pointer argument is written beside it, with the project's dimension
 *     letters: N batch, T query (target) positions, S source positions,
 *     Dq query width, Dk key width, Dv value width, A additive attention width,
 *     E embed width, H heads.
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
#ifndef ATTEND_H
#define ATTEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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

/* Which matrix-multiply backend this build uses: "openblas" or "portable". */
const char *attend_gemm_backend(void);

/* The instruction-set level the vectorized kernels run at in this process:
 * "avx512" (x86-64-v4), "avx2" (x86-64-v3) or "baseline". Decided on first use:
 * the best level the CPU supports, or a lower one named by the environment
 * variable ATTEND_ISA=baseline|avx2|avx512 (read once; a level the CPU lacks
 * falls back to the best it has, an unknown value is ignored). Thread-safe. */
const char *attend_isa(void);

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

/* ------------------------------------------------------ multi-head attention */
/*
 * The semantics of PyTorch's nn.MultiheadAttention(embed_dim=E, num_heads=H,
 * kdim, vdim, bias, batch_first=True), without dropout:
 *   Q = q Wqᵀ + bq [N,T,E],  K = k Wkᵀ + bk [N,S,E],  V = v Wvᵀ + bv [N,S,E]
 *   per head h (width E/H): P_h = masked_softmax(Q_h K_hᵀ / sqrt(E/H)),  O_h = P_h V_h
 *   out = concat_h(O_h) Woᵀ + bo [N,T,E]
 * Parameter names map to PyTorch as: Wq, Wk, Wv = in_proj_weight split in
 * three rows blocks (or q/k/v_proj_weight when kdim/vdim != E), bq, bk, bv =
 * in_proj_bias split in three, Wo = out_proj.weight, bo = out_proj.bias.
 */
typedef struct {
    int E;    /* embed width: query width and output width */
    int H;    /* heads; E % H == 0 */
    int kdim; /* key width; 0 means E */
    int vdim; /* value width; 0 means E */
    int bias; /* nonzero: bq, bk, bv, bo are used */
} attend_mha_config;

typedef struct {
    const attend_real *Wq; /* [E,E] */
    const attend_real *Wk; /* [E,kdim] */
    const attend_real *Wv; /* [E,vdim] */
    const attend_real *bq; /* [E] (bias only) */
    const attend_real *bk; /* [E] (bias only) */
    const attend_real *bv; /* [E] (bias only) */
    const attend_real *Wo; /* [E,E] */
    const attend_real *bo; /* [E] (bias only) */
} attend_mha_params;

/* Same shapes as attend_mha_params; accumulated (+=); NULL members skipped. */
typedef struct {
    attend_real *Wq, *Wk, *Wv, *bq, *bk, *bv, *Wo, *bo;
} attend_mha_grads;

/* Checks E, H, kdim, vdim. */
attend_status attend_mha_config_check(const attend_mha_config *cfg, attend_error *err);

/* Workspace for forward + backward, in attend_real values (0 on overflow or an
 * invalid configuration). */
size_t attend_mha_workspace_size(const attend_mha_config *cfg, int N, int T, int S);

/* weights: NULL, or [N,H,T,S] per head when average_weights == 0, or [N,T,S]
 * averaged over heads when average_weights != 0 (PyTorch's default). */
attend_status attend_mha_forward(const attend_mha_config *cfg, const attend_mha_params *p,
                                 attend_real *out,       /* [N,T,E] */
                                 attend_real *weights,   /* see above, or NULL */
                                 int average_weights,
                                 const attend_real *q,   /* [N,T,E] */
                                 const attend_real *k,   /* [N,S,kdim] */
                                 const attend_real *v,   /* [N,S,vdim] */
                                 const uint8_t *valid,   /* [N,S] key padding, or NULL */
                                 const uint8_t *allowed, /* [T,S] attention mask, or NULL */
                                 int causal, int N, int T, int S,
                                 attend_real *workspace, size_t workspace_len,
                                 attend_error *err);

/* Accumulates dq [N,T,E], dk [N,S,kdim], dv [N,S,vdim] (each may be NULL) and
 * grads from dout [N,T,E]. q, k, v and workspace are the forward's. When q, k
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

/* Self-attention: attend_mha_forward with q = k = v = x [N,T,E] (so kdim and
 * vdim must be E or 0), valid [N,T] or NULL, optional causal mask. */
attend_status attend_self_attention_forward(const attend_mha_config *cfg,
                                            const attend_mha_params *p,
                                            attend_real *out, attend_real *weights,
                                            int average_weights, const attend_real *x,
                                            const uint8_t *valid, int causal, int N, int T,
                                            attend_real *workspace, size_t workspace_len,
                                            attend_error *err);

/* dx [N,T,E] += from dout, for attend_self_attention_forward. */
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

/* ========================================================================
 * Below: the encoder–decoder model and what it needs (files, data).
 * ====================================================================== */

/* Recurrent cell kinds (PyTorch gate order and equations). */
typedef enum {
    ATTEND_CELL_GRU = 0,
    ATTEND_CELL_LSTM = 1,
} attend_cell_kind;

/* ------------------------------------------------------------ safetensors */
/*
 * The safetensors format: an 8-byte little-endian header length L, L bytes of
 * JSON {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
 * ..., "__metadata__": {"key": "value", ...}}, then the data buffer; offsets
 * are relative to the start of the buffer. docs/FORMAT.md describes what we
 * write and what the reader accepts.
 */
typedef enum {
    ATTEND_DTYPE_F32 = 0,
    ATTEND_DTYPE_F64 = 1,
    ATTEND_DTYPE_I32 = 2,
    ATTEND_DTYPE_I64 = 3,
    ATTEND_DTYPE_U8 = 4,
    ATTEND_DTYPE_I8 = 5,  /* quantized weights (attend_model_quantize) */
    ATTEND_DTYPE_F16 = 6, /* IEEE 754 binary16 */
} attend_dtype;

#define ATTEND_MAX_DIMS 8

/* Bytes per element of a dtype; 0 for an unknown one. */
size_t attend_dtype_size(attend_dtype dtype);
/* "F32", "F64", "I32", "I64", "U8", "I8", "F16"; NULL for an unknown dtype. */
const char *attend_dtype_name(attend_dtype dtype);

/* A tensor to write. data holds prod(shape) elements, C-contiguous. */
typedef struct {
    const char *name;  /* unique, 1..255 bytes, not "__metadata__" */
    attend_dtype dtype;
    int ndim;          /* 0..ATTEND_MAX_DIMS (0 = scalar, one element) */
    int64_t shape[ATTEND_MAX_DIMS];
    const void *data;
} attend_st_entry;

/* One metadata pair (both NUL-terminated UTF-8; escaped as JSON strings). */
typedef struct {
    const char *key;
    const char *value;
} attend_st_meta;

/*
 * Writes a safetensors file atomically: to "<path>.tmp.<pid>", fsync, rename
 * over path, fsync of the directory. On any error the previous file at path is
 * untouched and the temporary file removed. Tensors are stored contiguously in
 * the order given; the JSON header is padded with spaces to a multiple of 8 bytes.
 * An existing path that is not a regular file (a device, FIFO, socket,
 * directory) is refused with ATTEND_ERR_IO and left alone: renaming over it
 * would replace it. Before writing, temporaries of path left by processes that
 * are gone are removed (attend_output_clean_stale). A write that fails with
 * EFBIG needs SIGXFSZ ignored by the program (its default action kills the
 * process before the error can be reported or the temporary removed).
 */
attend_status attend_st_write(const char *path, const attend_st_entry *entries, int n_entries,
                              const attend_st_meta *meta, int n_meta, attend_error *err);

/* A parsed file (opaque). Tensors point into memory the handle owns. */
typedef struct attend_st_file attend_st_file;

/* A tensor as read. */
typedef struct {
    const char *name;
    attend_dtype dtype;
    int ndim;
    int64_t shape[ATTEND_MAX_DIMS];
    size_t nbytes;
    const void *data; /* inside the handle's buffer; may be unaligned for the dtype: memcpy it */
} attend_st_tensor;

/*
 * Reads and validates a whole file (at most max_bytes; 0 = 1 GiB): header
 * length within the file, JSON well-formed (strict: strings, numbers, no
 * duplicate names), known dtypes, 0..8 non-negative dims, offsets in bounds,
 * nbytes == prod(shape) * dtype size without overflow, tensors contiguous,
 * non-overlapping and covering the buffer exactly, metadata values strings.
 * Errors name the file, the tensor and the problem. *out is NULL on error.
 */
attend_status attend_st_open(attend_st_file **out, const char *path, size_t max_bytes,
                             attend_error *err);
/* The same from memory (copied); label names the source in messages. */
attend_status attend_st_parse(attend_st_file **out, const void *bytes, size_t len,
                              const char *label, attend_error *err);
void attend_st_close(attend_st_file *f); /* NULL is fine */
int attend_st_count(const attend_st_file *f);
/* i-th tensor in file order; NULL when out of range. */
const attend_st_tensor *attend_st_get(const attend_st_file *f, int i);
/* Tensor by name; NULL when absent. */
const attend_st_tensor *attend_st_find(const attend_st_file *f, const char *name);
/* Metadata value for key; NULL when absent. */
const char *attend_st_metadata(const attend_st_file *f, const char *key);

/* ------------------------------------------------------------ output files */
/*
 * Checks a program makes on the files it will write before it starts any
 * work, so that an unusable output is found in a second, not after hours of
 * training. Not thread-safe against other processes changing the directory.
 */

/* attend_output_check flag: an existing non-regular target (a device, a
 * FIFO) is accepted, for a caller that writes it in place. */
#define ATTEND_OUTPUT_ALLOW_SPECIAL 1u

/* OK when path can be written as attend_st_write writes it: an existing path
 * must be a regular file (without ATTEND_OUTPUT_ALLOW_SPECIAL; a directory is
 * always refused), and "<path>.tmp.<pid>" can be created beside it (it is
 * created and removed again). Otherwise ATTEND_ERR_IO naming path and the
 * reason (missing or read-only directory, name too long, "is a character
 * device"). Nothing else in the file system changes. */
attend_status attend_output_check(const char *path, unsigned flags, attend_error *err);

/* *same = 1 when a and b name the same file: for two existing files the same
 * device and inode (hard and symbolic links included), for two files not yet
 * there the same real directory and name; an existing file and a missing one
 * are different. */
attend_status attend_path_same(const char *a, const char *b, int *same, attend_error *err);

/* One file a program reads (output = 0) or writes (output = 1); role names it
 * in messages ("--out"); flags are an output's attend_output_check flags. A
 * NULL path is ignored. */
typedef struct {
    const char *path;
    const char *role;
    int output;
    unsigned flags;
} attend_path_use;

/* Refuses (ATTEND_ERR_ARG) any output that is the same file (attend_path_same)
 * as an input or another output, naming both roles and paths, the first such
 * pair in order; then attend_output_check(path, flags) on every output. */
attend_status attend_paths_check(const attend_path_use *uses, int n, attend_error *err);

/* Removes the regular files "<path>.tmp.<pid>" (decimal pid) in path's
 * directory whose process no longer exists: the leftovers of a writer killed
 * mid-write (they are never read as the file). fn (may be NULL) is called for
 * each with its name and pid; *removed (may be NULL) receives the count. An
 * unreadable directory removes nothing and is not an error. */
typedef void (*attend_stale_fn)(void *ctx, const char *file, long pid);
attend_status attend_output_clean_stale(const char *path, attend_stale_fn fn, void *ctx, int *removed,
                                        attend_error *err);

/* ------------------------------------------------------------- vocabulary */
/* Every vocabulary starts with these four tokens, at these ids. */
#define ATTEND_PAD 0 /* "<pad>" */
#define ATTEND_BOS 1 /* "<bos>" */
#define ATTEND_EOS 2 /* "<eos>" */
#define ATTEND_UNK 3 /* "<unk>" */
#define ATTEND_MAX_TOKEN_BYTES 64

typedef enum {
    ATTEND_TOKENIZE_CHAR = 0,  /* one token per UTF-8 code point */
    ATTEND_TOKENIZE_SPACE = 1, /* tokens separated by runs of ASCII spaces */
} attend_tokenizer;

typedef struct attend_vocab attend_vocab; /* token strings <-> ids (opaque) */

/* A vocabulary holding only the four special tokens. */
attend_status attend_vocab_create(attend_vocab **out, attend_error *err);
void attend_vocab_free(attend_vocab *v); /* NULL is fine */
int attend_vocab_size(const attend_vocab *v);
/* Adds token (len bytes, valid UTF-8, 1..ATTEND_MAX_TOKEN_BYTES, no NUL, tab or
 * newline) unless present; *id (may be NULL) receives its id either way. */
attend_status attend_vocab_add(attend_vocab *v, const char *token, size_t len, int32_t *id,
                               attend_error *err);
/* Id of token, or -1 when absent. */
int32_t attend_vocab_find(const attend_vocab *v, const char *token, size_t len);
/* NUL-terminated token of id, or NULL when out of range. */
const char *attend_vocab_token(const attend_vocab *v, int32_t id);

/* Splits text (len bytes) into tokens and maps them to ids [max_ids]; unknown
 * tokens become ATTEND_UNK, or are added when grow != 0. Invalid UTF-8 is
 * ATTEND_ERR_FORMAT with the byte offset; more than max_ids tokens is
 * ATTEND_ERR_CAPACITY. */
attend_status attend_vocab_encode(attend_vocab *v, attend_tokenizer tok, int grow,
                                  const char *text, size_t len, int32_t *ids, int max_ids,
                                  int *n_ids, attend_error *err);
/* Writes the tokens of ids[0..n) into buf (cap bytes, NUL-terminated), joined
 * with nothing (CHAR) or one space (SPACE); stops at ATTEND_EOS, skips PAD and
 * BOS. Too small a buffer is ATTEND_ERR_CAPACITY. */
attend_status attend_vocab_decode(const attend_vocab *v, attend_tokenizer tok, const int32_t *ids,
                                  int n, char *buf, size_t cap, attend_error *err);
/* The vocabulary as a JSON array of strings (in id order), malloc'ed into *json
 * (caller frees), and back. Parsing checks the four specials come first. */
attend_status attend_vocab_to_json(const attend_vocab *v, char **json, attend_error *err);
attend_status attend_vocab_from_json(attend_vocab **out, const char *json, attend_error *err);

/* ---------------------------------------------------------------- datasets */
/* Pairs of token-id sequences (source without BOS/EOS; target without BOS/EOS:
 * the model adds them). For pointer tasks the target ids are source positions. */
typedef struct attend_dataset attend_dataset;

attend_status attend_dataset_create(attend_dataset **out, attend_error *err);
void attend_dataset_free(attend_dataset *d); /* NULL is fine */
int attend_dataset_size(const attend_dataset *d);
/* Longest source / target in the dataset (0 when empty). */
int attend_dataset_max_src_len(const attend_dataset *d);
int attend_dataset_max_tgt_len(const attend_dataset *d);
/* Appends a copy of one pair (both lengths >= 1). */
attend_status attend_dataset_add(attend_dataset *d, const int32_t *src, int src_len,
                                 const int32_t *tgt, int tgt_len, attend_error *err);
/* Pointers into the dataset's storage for pair i (valid until the next add or free). */
attend_status attend_dataset_get(const attend_dataset *d, int i, const int32_t **src, int *src_len,
                                 const int32_t **tgt, int *tgt_len, attend_error *err);

typedef enum {
    ATTEND_TASK_COPY = 0,    /* target = source */
    ATTEND_TASK_REVERSE = 1, /* target = source reversed */
    ATTEND_TASK_SORT = 2,    /* pointer task: target = source positions in ascending
                                order of their symbols (stable) */
} attend_task;

typedef struct {
    attend_task task;
    int symbols;      /* distinct source symbols, named "a", "b", ... then "s26", "s27", ... */
    int min_len;      /* 1 <= min_len <= max_len */
    int max_len;
    int count;        /* pairs to generate */
    uint64_t seed;    /* same seed → same pairs */
} attend_task_config;

/* Generates a built-in task. *vocab gets the symbol vocabulary (specials +
 * symbols), used for both sides of copy/reverse and for the source of sort. */
attend_status attend_dataset_task(attend_dataset **out, attend_vocab **vocab,
                                  const attend_task_config *cfg, attend_error *err);

#define ATTEND_TSV_MAX_LINE_BYTES (1 << 20) /* the largest max_line_bytes */
#define ATTEND_TSV_MAX_SKIP_BYTES (1 << 24) /* a skipped line must end within this */

typedef struct {
    attend_tokenizer tokenizer;
    int max_line_bytes;  /* longer lines are malformed; 0 = 4096; at most ATTEND_TSV_MAX_LINE_BYTES */
    int max_tokens;      /* more tokens on one side is malformed; 0 = 256 */
    int skip_malformed;  /* 0: first malformed line is an error; 1: skip and count */
} attend_tsv_options;

/*
 * Reads "source<TAB>target" lines (LF or CRLF; the last line may lack its
 * newline; an empty line is malformed, as its source side is empty).
 * Malformed: missing tab, extra tab field, empty side, invalid UTF-8, over-long
 * line, too many tokens. The error names path:line and the reason; with
 * skip_malformed the line is skipped and counted in *skipped (may be NULL).
 * The reader never holds more than max_line_bytes of a line: an over-long line
 * is found as soon as its first max_line_bytes + 1 bytes are read. Skipping
 * one reads on to its end, but a line with no LF within
 * ATTEND_TSV_MAX_SKIP_BYTES is an error even with skip_malformed (so endless
 * input such as /dev/zero fails at once instead of being read for ever).
 * A read error (EIO, EISDIR) is ATTEND_ERR_IO naming path:line and the cause.
 * Tokens are added to src_vocab / tgt_vocab when grow != 0 (training data),
 * else unknown tokens map to ATTEND_UNK (evaluation data). The two vocab
 * pointers may be the same vocabulary.
 */
attend_status attend_dataset_read_tsv(attend_dataset **out, const char *path,
                                      attend_vocab *src_vocab, attend_vocab *tgt_vocab, int grow,
                                      const attend_tsv_options *opt, int *skipped,
                                      attend_error *err);

/* ------------------------------------------------------------------ model */
/*
 * The encoder–decoder of seed 004: source embedding → bidirectional recurrent
 * encoder (E = 2H) → bridge tanh(W [h_fwd; h_bwd] + b) → attentive recurrent
 * decoder → logits. Decoder kinds:
 *   BAHDANAU  query s_{t-1};  s_t = cell([E(y_{t-1}); c_t], s_{t-1});  logits = W_o [s_t; c_t] + b_o
 *   LUONG     s_t = cell([E(y_{t-1}); h̃_{t-1}], s_{t-1}) (input feeding, h̃_0 = 0);
 *             query s_t;  h̃_t = tanh(W_c [c_t; s_t]);  logits = W_s h̃_t + b_s
 *   NONE      the fixed-context baseline: c_t = [h_fwd; h_bwd] (final states) for
 *             every t; otherwise as BAHDANAU
 *   POINTER   s_t = cell(x_t, s_{t-1}) with x_t the source embedding of the
 *             previously pointed position (E(<bos>) first); query s_t; the output
 *             distribution is the masked attention over source positions (Vinyals)
 * The LSTM decoder's initial cell state is zero. Tensor names: docs/FORMAT.md.
 */
typedef enum {
    ATTEND_DECODER_BAHDANAU = 0,
    ATTEND_DECODER_LUONG = 1,
    ATTEND_DECODER_NONE = 2,
    ATTEND_DECODER_POINTER = 3,
} attend_decoder_kind;

typedef struct {
    attend_cell_kind cell;       /* encoder and decoder cells */
    attend_decoder_kind decoder;
    attend_score_kind score;     /* not used by NONE; dot kinds need Hd == 2H */
    int src_vocab;               /* Vs (>= 5: four specials and one symbol) */
    int tgt_vocab;               /* Vt (>= 5); ignored by POINTER */
    int emb;                     /* D: embedding width, both sides */
    int enc_hidden;              /* H: per direction, so E = 2H */
    int enc_layers;              /* stacked bidirectional layers, >= 1 */
    int dec_hidden;              /* Hd */
    int attn;                    /* A: additive attention width (ADDITIVE only) */
    int max_batch;               /* capacities: a batch beyond them is an error */
    int max_src_len;
    int max_tgt_len;             /* target tokens, EOS not counted */
} attend_model_config;

typedef struct attend_model attend_model;

/* Checks a configuration; the message names the offending field. */
attend_status attend_model_config_check(const attend_model_config *cfg, attend_error *err);

/* Allocates parameters, gradients and activations (three allocations, sized
 * from the capacities) and initialises parameters like PyTorch's defaults from
 * seed. *out is NULL on error. */
attend_status attend_model_create(attend_model **out, const attend_model_config *cfg,
                                  uint64_t seed, attend_error *err);
void attend_model_free(attend_model *m); /* NULL is fine */

/*
 * Threads: a model is not safe to use from two threads at once. Every
 * function that runs it (forward, backward, greedy, beam, score, evaluate,
 * intervene) writes its activations, even when only decoding. To decode one
 * loaded model from several threads, give each thread its own copy:
 * attend_model_clone makes a model with the same configuration and weights
 * and its own activations (nothing shared with src afterwards; free it with
 * attend_model_free). src is only read, so several threads may clone the same
 * model at once, as long as no thread runs src meanwhile. A clone decodes
 * exactly as src does (tests/test_concurrent.c: 8 threads, greedy and beam,
 * under ThreadSanitizer).
 */
attend_status attend_model_clone(attend_model **out, const attend_model *src, attend_error *err);
const attend_model_config *attend_model_get_config(const attend_model *m);

/* Parameter tensors, in a fixed order. */
int attend_model_tensor_count(const attend_model *m);
typedef struct {
    const char *name;       /* e.g. "encoder.weight_ih_l0_reverse" */
    int ndim;               /* 1 or 2 */
    int64_t shape[2];
    size_t numel;
    attend_real *data;      /* inside the model's parameter arena */
    attend_real *grad;      /* inside the gradient arena, same shape */
} attend_model_tensor;
/* i-th tensor (0 <= i < count), or by name; ATTEND_ERR_ARG when absent. */
attend_status attend_model_tensor_get(const attend_model *m, int i, attend_model_tensor *t,
                                      attend_error *err);
attend_status attend_model_tensor_find(const attend_model *m, const char *name,
                                       attend_model_tensor *t, attend_error *err);
/* Total number of parameters (scalars). */
size_t attend_model_param_count(const attend_model *m);
/* The whole parameter / gradient arena (attend_model_param_count values). */
attend_real *attend_model_params(attend_model *m);
attend_real *attend_model_grads(attend_model *m);
void attend_model_zero_grad(attend_model *m);

/* A padded batch. For POINTER models the targets are source positions, with
 * tgt_in[n,0] = -1 (start) and -1 marking ignored steps of tgt_out. */
typedef struct {
    int N;            /* rows used */
    int S;            /* padded source length */
    int T;            /* decoder steps = longest target + 1 (EOS); POINTER: longest target */
    int32_t *src;     /* [N,S] ids, ATTEND_PAD after src_len */
    int32_t *src_len; /* [N] */
    int32_t *tgt_in;  /* [N,T] BOS y1 .. yL, then PAD */
    int32_t *tgt_out; /* [N,T] y1 .. yL EOS, then PAD (ignored) */
    int32_t *tgt_len; /* [N] decoder steps that count (L+1; POINTER: L) */
    int cap_N, cap_S, cap_T;
} attend_batch;

/* Allocates a batch for up to cap_N rows, cap_S source and cap_T decoder steps. */
attend_status attend_batch_alloc(attend_batch *b, int cap_N, int cap_S, int cap_T,
                                 attend_error *err);
void attend_batch_release(attend_batch *b); /* NULL or released twice is fine */
/* Fills b from pairs idx[0..n) of d (pointer != 0: targets are positions). */
attend_status attend_batch_fill(attend_batch *b, const attend_dataset *d, const int *idx, int n,
                                int pointer, attend_error *err);

/* Teacher-forced statistics of one forward pass. */
typedef struct {
    double loss;           /* mean cross-entropy over counted target tokens */
    int tokens;            /* counted target tokens */
    int correct_tokens;    /* argmax == target */
    int seqs;              /* rows */
    int correct_seqs;      /* rows with every counted token right */
    double attn_entropy;   /* mean entropy (nats) of the attention rows of counted steps;
                              0 for NONE */
} attend_tf_stats;

/* Teacher-forced forward over a batch; keeps the activations for backward.
 * Checks every id and length against the configuration first. */
attend_status attend_model_forward(attend_model *m, const attend_batch *b, attend_tf_stats *stats,
                                   attend_error *err);
/* Gradients of the mean loss of the last forward, accumulated (+=). PAD's
 * embedding rows receive none. ATTEND_ERR_ARG if no forward preceded it. */
attend_status attend_model_backward(attend_model *m, attend_error *err);

/*
 * Greedy decoding of N sources (src [N,S], src_len [N]) for at most max_len
 * tokens each (POINTER: exactly src_len pointers). out [N,max_len] receives
 * the tokens (EOS not included; PAD after), out_len [N] their counts. A
 * finished row is frozen: its later steps are not computed into its output.
 * align: NULL or [N,max_len,S], the attention weights of each emitted step
 * (zero rows after the end; all zero for NONE).
 */
attend_status attend_model_greedy(attend_model *m, const int32_t *src, const int32_t *src_len,
                                  int N, int S, int max_len, int32_t *out, int32_t *out_len,
                                  attend_real *align, attend_error *err);

/*
 * Beam search for one source (src [S] ids, length S) with width beam (1..64),
 * returning up to nbest (<= beam) finished hypotheses best first: out
 * [nbest,max_len] tokens (EOS excluded), out_len [nbest], score [nbest] =
 * log-probability / (length+1)^alpha (alpha 0 = raw sum), and align
 * [nbest,max_len,S] (NULL allowed) — each hypothesis's own attention history,
 * reordered with it. *n_out receives the count. POINTER models are rejected.
 */
attend_status attend_model_beam(attend_model *m, const int32_t *src, int S, int beam, int nbest,
                                int max_len, double alpha, int32_t *out, int32_t *out_len,
                                double *score, attend_real *align, int *n_out, attend_error *err);

/*
 * Forced scoring of one pair: the teacher-forced log-probability of target
 * tgt [T] (EOS appended; POINTER: positions, no EOS) given src [S], and the
 * alignment align [T+1,S] (POINTER: [T,S]; NULL allowed) of every step — a
 * forced alignment. *logp is the sum over steps (natural log).
 */
attend_status attend_model_score(attend_model *m, const int32_t *src, int S, const int32_t *tgt, int T,
                                 double *logp, attend_real *align, attend_error *err);

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

/* ------------------------------------------------------------ model files */
/*
 * A model file is safetensors: every parameter tensor under its name
 * (docs/FORMAT.md) as F32, and __metadata__ with "attend.format" = "model",
 * "attend.config" (the configuration as JSON), "attend.src_vocab" and
 * "attend.tgt_vocab" (JSON arrays of token strings, id order; the pointer
 * decoder has no target vocabulary) and "attend.tokenizer" ("char"/"space").
 * The write is atomic (attend_st_write).
 */
attend_status attend_model_save(const attend_model *m, const char *path, const attend_vocab *src_vocab,
                                 const attend_vocab *tgt_vocab, attend_tokenizer tok, attend_error *err);

/*
 * Loads a model file: the configuration from metadata (capacities may be
 * overridden: any of max_batch / max_src_len / max_tgt_len > 0 in
 * `capacity` replaces the file's; capacity may be NULL), then every tensor,
 * checked by name, dtype (F32; the weight matrices of a quantized file I8 with
 * "<name>.scale" or F16, see attend_model_quantize) and shape against the configuration; a
 * missing, extra or misshapen tensor is an error naming it. Vocabularies are
 * returned when the out pointers are not NULL (caller frees); *tok receives the
 * tokenizer (may be NULL). Nothing is returned on error. Before allocating, the
 * configuration must not imply more parameters than the file's tensors hold
 * (ATTEND_ERR_FORMAT), and when any capacity comes from the file the activation
 * arena it implies must stay under 1 GiB (ATTEND_ERR_CAPACITY; pass all three
 * capacities to size the model yourself).
 */
attend_status attend_model_load(attend_model **out, const char *path, const attend_model_config *capacity,
                                attend_vocab **src_vocab, attend_vocab **tgt_vocab, attend_tokenizer *tok,
                                attend_error *err);

/*
 * Quantized weights for inference (docs/FORMAT.md, "Quantized model files"):
 * converts every weight matrix but the embedding tables to to = ATTEND_DTYPE_I8
 * (per-output-row symmetric scales: w ≈ q * scale, q in [-127,127],
 * scale = max|row| / 127) or ATTEND_DTYPE_F16 (IEEE half, round to nearest
 * even). Embeddings, biases and attention.v stay float32. Afterwards
 * attend_model_params holds the dequantized values (every float path computes
 * the same function), greedy, beam and scoring read the quantized copies in
 * their small products (at most 16 rows; larger ones use the float copy), and
 * attend_model_save writes I8 tensors with "<name>.scale" (F32 [rows]) or F16
 * tensors, which attend_model_load reads back. Writing into the parameter
 * arena afterwards does not change the quantized copies. A quantized model
 * cannot be trained (attend_trainer_create refuses it) and a checkpoint with
 * quantized tensors cannot be resumed.
 * Errors: ATTEND_ERR_ARG for another dtype, a model already quantized (naming
 * a quantized tensor) or an F16 value beyond ±65504 (naming the tensor and
 * element); ATTEND_ERR_NONFINITE for a non-finite weight (naming it); the model
 * is unchanged on error. Not thread-safe with other calls on m.
 */
attend_status attend_model_quantize(attend_model *m, attend_dtype to, attend_error *err);

/* How the weight matrices are stored: ATTEND_DTYPE_F32, I8 or F16. */
attend_dtype attend_model_weight_dtype(const attend_model *m);

/* Names used in files and on the command line: "gru" "lstm"; "bahdanau"
 * "luong" "none" "pointer"; "dot" "scaled_dot" "general" "additive"; "char"
 * "space". *_from_name returns -1 for an unknown name. */
const char *attend_cell_name(attend_cell_kind kind);
const char *attend_decoder_name(attend_decoder_kind kind);
const char *attend_score_name(attend_score_kind kind);
const char *attend_tokenizer_name(attend_tokenizer tok);
int attend_cell_from_name(const char *name);
int attend_decoder_from_name(const char *name);
int attend_score_from_name(const char *name);
int attend_tokenizer_from_name(const char *name);

/* The configuration as a JSON object string (malloc'ed; caller frees) and back
 * (every field required, values range-checked by attend_model_config_check). */
attend_status attend_model_config_to_json(const attend_model_config *cfg, char **json, attend_error *err);
attend_status attend_model_config_from_json(attend_model_config *cfg, const char *json, size_t len,
                                            attend_error *err);

/* -------------------------------------------------------------- evaluation */
typedef struct {
    int pairs;               /* pairs evaluated */
    double loss;             /* teacher-forced mean cross-entropy per token */
    double tf_token_acc;     /* teacher-forced: argmax == target, over target tokens + EOS */
    double tf_seq_acc;       /* teacher-forced: every token right */
    double greedy_token_acc; /* free-running greedy: output[t] == target[t] over target tokens + EOS
                                (EOS right when the output stops exactly there) */
    double greedy_seq_acc;   /* greedy output == target */
    double attn_entropy;     /* mean attention entropy (nats) over teacher-forced steps */
} attend_eval_stats;

/* Evaluates up to max_pairs (0 = all) pairs of d in batches of batch_size
 * (<= the model's max_batch). Greedy decoding runs up to the target length + 1
 * (POINTER: the source length). */
attend_status attend_model_evaluate(attend_model *m, const attend_dataset *d, int batch_size, int max_pairs,
                                    attend_eval_stats *stats, attend_error *err);

/* ---------------------------------------------------------------- training */
/*
 * A trainer owns an optimizer, a shuffled order of the training pairs and an
 * RNG; one step = one batch: forward, backward, clip, update. Deterministic for
 * a given seed. A checkpoint holds the weights, the optimizer moments, the step,
 * the RNG state and the data position, so a resumed run continues bit for bit.
 */
typedef struct attend_trainer attend_trainer;

/* m and train must outlive the trainer; train must not change. */
attend_status attend_trainer_create(attend_trainer **out, attend_model *m, const attend_optim_config *opt,
                                    const attend_dataset *train, int batch_size, uint64_t seed,
                                    attend_error *err);
void attend_trainer_free(attend_trainer *tr); /* NULL is fine */

typedef struct {
    long step;               /* steps completed, this one included */
    int epoch;               /* passes over the data begun */
    attend_tf_stats tf;      /* this batch, before the update */
    attend_optim_report opt; /* gradient norm, learning rate, clipping */
    int skipped;             /* 1: non-finite gradient, update skipped (weights untouched) */
} attend_step_report;

/* One training step. A non-finite loss or gradient norm is not an error: the
 * step is skipped (rep->skipped = 1, weights and moments untouched) and
 * counted. After attend_trainer_set_max_nonfinite(tr, N), N > 0, the step that
 * makes N skipped steps in a row returns ATTEND_ERR_NONFINITE naming them (it
 * is still counted, *rep is filled, and the weights are those of the last good
 * step): the run has gone bad, stop it. */
attend_status attend_trainer_step(attend_trainer *tr, attend_step_report *rep, attend_error *err);
long attend_trainer_steps(const attend_trainer *tr);
long attend_trainer_skipped(const attend_trainer *tr);
/* The limit on skipped steps in a row (0, the default: none; < 0 is
 * ATTEND_ERR_ARG), and the current run of them (0 after a good step; not kept
 * in checkpoints: a resumed trainer starts at 0). */
attend_status attend_trainer_set_max_nonfinite(attend_trainer *tr, long max_run, attend_error *err);
long attend_trainer_nonfinite_run(const attend_trainer *tr);

/*
 * Data-parallel steps (issue 16; docs/SCALING.md). A step's batch (the next
 * batch_size pairs of the epoch's order, the same on every rank) is cut into
 * `shards` contiguous row ranges: shard k holds rows [k*nb/shards,
 * (k+1)*nb/shards) of the nb rows. Each shard's gradient is computed alone
 * (scaled by the token count of the WHOLE batch, so the shards' gradients sum
 * to the batch gradient) and the shards are summed in one fixed pairwise tree:
 * sum(lo,hi) = sum(lo,mid) + sum(mid,hi), mid = lo + (hi-lo)/2. The result
 * depends on `shards` only, never on how many processes share the work, so
 * 1, 2 or 4 ranks with the same `shards` give the same weights bit for bit.
 *
 * Rank r of nranks (nranks divides shards) owns shards [r*shards/nranks,
 * (r+1)*shards/nranks). Its "part" is the sum of each maximal tree node inside
 * its range (DFS order), each node attend_trainer_node_len() reals long: the
 * gradient followed by ATTEND_TRAINER_NODE_STATS statistics (loss*tokens,
 * tokens, correct tokens, rows, correct rows, entropy*tokens). The library
 * does no communication: the caller supplies the exchange (the `attend`
 * CLI's MPI layer, cli/mpirun.c), either as a callback run inside
 * attend_trainer_step, or by calling the phases attend_trainer_step_part /
 * attend_trainer_step_finish (or _reduce + _step_apply) itself.
 *
 * shards = 1, nranks = 1 (the default) is the ordinary single-batch step.
 * Errors: ATTEND_ERR_ARG for shards < 1, nranks < 1, rank outside [0, nranks),
 * nranks not dividing shards, or exchange NULL with nranks > 1; ALLOC.
 * Not thread-safe with other calls on the same trainer.
 */
#define ATTEND_TRAINER_NODE_STATS 6
/* The exchange: part [attend_trainer_part_len(tr, rank)] is this rank's;
 * fill sum [attend_trainer_node_len(tr)] with the tree sum of every rank's
 * parts, the same on every rank. Either gather the parts (rank 0's first) and
 * call attend_trainer_reduce with n = node_len, or, bandwidth-optimal, cut the
 * node into one chunk per rank: each element's tree is independent, so rank j
 * reduces chunk j of every node (n = the chunk's length) and the reduced
 * chunks are gathered (cli/mpirun.c: MPI_Alltoallv + MPI_Allgatherv). Returns a
 * status; on failure it fills err and the step fails with it. */
typedef attend_status (*attend_trainer_exchange_fn)(void *user, attend_trainer *tr, const attend_real *part,
                                                    attend_real *sum, attend_error *err);
attend_status attend_trainer_set_parallel(attend_trainer *tr, int shards, int rank, int nranks,
                                          attend_trainer_exchange_fn exchange, void *user, attend_error *err);
/* Reals in one tree node (parameters + ATTEND_TRAINER_NODE_STATS) and in the
 * part of rank r under the current setting (0 for a bad r). */
size_t attend_trainer_node_len(const attend_trainer *tr);
size_t attend_trainer_part_len(const attend_trainer *tr, int rank);
/* Phase 1: computes this rank's part of the next step into a buffer the
 * trainer owns (*part, valid until the next call; attend_trainer_part_len
 * reals). Changes no weight and no data position. */
attend_status attend_trainer_step_part(attend_trainer *tr, const attend_real **part, attend_error *err);
/* Phase 2: all [sum over ranks of part_len] holds every rank's part in rank
 * order; finishes the tree, applies the optimizer step (skipping it as
 * attend_trainer_step does when the summed loss or gradient is not finite)
 * and advances the data position. rep as for attend_trainer_step (tf.loss is
 * the summed loss over the summed tokens). */
attend_status attend_trainer_step_finish(attend_trainer *tr, const attend_real *all, attend_step_report *rep,
                                         attend_error *err);
/* Phase 2 in pieces: the fixed tree over nodes, every maximal node of every
 * rank in rank order, n reals each (n <= node_len: a node, or one chunk of
 * every node), into out [n] (may not overlap nodes unless there is one node);
 * then the optimizer step with sum [node_len], the whole tree's sum. */
attend_status attend_trainer_reduce(attend_trainer *tr, const attend_real *nodes, size_t n, attend_real *out,
                                    attend_error *err);
attend_status attend_trainer_step_apply(attend_trainer *tr, const attend_real *sum, attend_step_report *rep,
                                        attend_error *err);
/* The training data's fingerprint (FNV-1a 64, as recorded in checkpoints):
 * ranks compare it to find one that read other data. 0 for NULL. */
uint64_t attend_trainer_data_fingerprint(const attend_trainer *tr);

/* Writes a checkpoint (a model file with "attend.format" = "checkpoint" plus
 * optimizer tensors "optim.*"), atomically: an interrupted save leaves the
 * previous checkpoint intact. attend_model_load reads a checkpoint as a model.
 * Non-finite weights or moments are ATTEND_ERR_NONFINITE and nothing is written. */
attend_status attend_trainer_save(const attend_trainer *tr, const char *path, const attend_vocab *src_vocab,
                                  const attend_vocab *tgt_vocab, attend_tokenizer tok, attend_error *err);
/* Restores weights, moments, step, RNG and data position from a checkpoint.
 * The checkpoint's model configuration (capacities aside), optimizer kind,
 * batch size and dataset size must match this trainer's, and so must its
 * fingerprint of the data and options (attend_trainer_resume_checked):
 * otherwise an error naming the difference, and nothing is changed. */
attend_status attend_trainer_resume(attend_trainer *tr, const char *path, attend_error *err);

/* What attend_trainer_resume_checked compares besides the trainer's own
 * fingerprint (training pairs in order, seed, every optimizer setting). */
typedef struct {
    const attend_vocab *src_vocab; /* this run's vocabularies (NULL: not compared) */
    const attend_vocab *tgt_vocab;
    attend_tokenizer tok;          /* compared when a vocabulary is given */
    int anyway;                    /* 1: differences are not an error; note names them */
} attend_resume_options;

/*
 * attend_trainer_resume, and a checkpoint must also record the same
 * fingerprint as this run: the vocabularies token by token (opt), the
 * tokenizer, a hash of the training pairs in order (FNV-1a 64, docs/FORMAT.md),
 * the seed and every optimizer setting (lr, clip_norm, warm-up, decay, min_lr,
 * weight decay, momentum, betas, eps). A difference is ATTEND_ERR_ARG naming
 * the first, with the checkpoint's and this run's values (and the names of the
 * others) — unless opt->anyway, when it is resumed and note (may be NULL) gets
 * that message with status ATTEND_ERR_ARG. A checkpoint written before
 * fingerprints (no "data_fnv1a64") is resumed after comparing what it records;
 * note then names the fields it lacks (status ATTEND_ERR_FORMAT). note's status
 * is ATTEND_OK when there is nothing to say. attend_trainer_resume is this
 * function with opt and note NULL: vocabularies not compared, other
 * differences refused. Nothing is changed on error.
 */
attend_status attend_trainer_resume_checked(attend_trainer *tr, const char *path, const attend_resume_options *opt,
                                            attend_error *note, attend_error *err);

/* --------------------------------------------------------------- rendering */
/*
 * Pictures of alignments and results, returned as malloc'ed NUL-terminated
 * UTF-8 strings (*out; the caller frees; NULL on error). w [T,S] holds one
 * output step per row (values in [0,1]; NaN/Inf is ATTEND_ERR_NONFINITE).
 * src_tokens [S] and out_tokens [T] label the axes (NULL = positions 0,1,..);
 * tokens are escaped for XML/HTML, so any UTF-8 is safe.
 */

/* A terminal heatmap: source tokens as column headers, one row per output
 * token, each cell a character from the ramp " .:-=+*#%@" (weight 0 → ' ',
 * 1 → '@', in ten equal bins), and per row the argmax position and its weight.
 * Pure ASCII apart from the tokens themselves; deterministic. */
attend_status attend_render_heatmap_text(char **out, const attend_real *w, int T, int S,
                                         const char *const *src_tokens, const char *const *out_tokens,
                                         attend_error *err);

/* A standalone SVG heatmap: source tokens along the top, output tokens down
 * the left, one rect per cell (data-t, data-s and data-w attributes carry the
 * step, position and weight with 6 decimals), a colour scale with ticks, and
 * an optional title (NULL = none). */
attend_status attend_render_heatmap_svg(char **out, const attend_real *w, int T, int S,
                                        const char *const *src_tokens, const char *const *out_tokens,
                                        const char *title, attend_error *err);

/* A self-contained HTML page (no network: inline CSS/JS/SVG) with the heatmap
 * and the two token rows; hovering (or focusing) output token t highlights
 * every source token with opacity proportional to w[t,:] and shows the weights
 * in an element with id "selected" as "t=<t> w=<w0> <w1> ..." (6 decimals).
 * Opening the page with "#t=<t>" in the URL selects step t on load (for
 * headless checks). */
attend_status attend_render_heatmap_html(char **out, const attend_real *w, int T, int S,
                                         const char *const *src_tokens, const char *const *out_tokens,
                                         const char *title, attend_error *err);

/* One line of a line plot: n points (x[i], y[i]); NaN y values leave a gap. */
typedef struct {
    const char *label;
    int n;
    const double *x;
    const double *y;
} attend_plot_series;

/* A standalone SVG line plot with axes, ticks, axis labels, a legend (one
 * colour and marker per series) and a title. y_min < y_max fix the y range
 * (e.g. 0 and 1 for accuracy); x range from the data (log scale when log_x). */
attend_status attend_render_line_plot_svg(char **out, const attend_plot_series *series, int n_series,
                                          const char *title, const char *x_label, const char *y_label,
                                          double y_min, double y_max, int log_x, attend_error *err);

/* ----------------------------------------------------------- interventions */
/*
 * Attention weights are a diagnostic, not an explanation (seed 000 §14.5,
 * seed 004 §08): these tools change what the decoder can see and measure what
 * happens to its output.
 */
typedef enum {
    ATTEND_EDIT_UNIFORM = 0,  /* w_j = 1/|valid| on valid positions */
    ATTEND_EDIT_PERMUTE = 1,  /* w'_j = w_{perm[j]}: weights moved between positions */
    ATTEND_EDIT_DROP_TOP = 2, /* the largest weight (first on ties) set to 0, the rest
                                 renormalised (Jain & Wallace); needs 2 valid positions */
} attend_weight_edit;

/* Edits one attention row w [S] in place. valid [S] (NULL = all valid) marks
 * the positions that may carry weight; invalid positions end with weight 0.
 * PERMUTE needs perm [S], a permutation of 0..S-1 that maps valid positions to
 * valid positions. */
attend_status attend_weights_edit(attend_real *w, const uint8_t *valid, int S, attend_weight_edit edit,
                                  const int32_t *perm, attend_error *err);

/* Fisher–Yates permutation perm [n] of 0..n-1 from a seed (xoshiro256**). */
void attend_permutation(int32_t *perm, int n, uint64_t seed);

typedef enum {
    ATTEND_IV_REMOVE_STATE = 0,  /* hide saved state `position` from attention: the softmax
                                    renormalises over the rest (the encoder is unchanged) */
    ATTEND_IV_DELETE_TOKEN = 1,  /* delete source token `position`, re-encode */
    ATTEND_IV_REPLACE_TOKEN = 2, /* replace source token `position` by `token`, re-encode */
    ATTEND_IV_UNIFORM = 3,       /* every step's weights made uniform */
    ATTEND_IV_PERMUTE = 4,       /* every step's weights permuted (seeded permutation) */
    ATTEND_IV_DROP_TOP = 5,      /* every step's largest weight removed, rest renormalised */
} attend_intervention_kind;

typedef struct {
    attend_intervention_kind kind;
    int position;   /* REMOVE_STATE, DELETE_TOKEN, REPLACE_TOKEN: 0-based source position */
    int32_t token;  /* REPLACE_TOKEN: the new source id */
    uint64_t seed;  /* PERMUTE: seed of attend_permutation over the S positions */
} attend_intervention;

typedef struct {
    /* outputs the caller wants, each NULL or caller-owned: */
    double *tv;               /* [base_len+1] total variation ½Σ|p − p'| per step */
    double *kl;               /* [base_len+1] KL(p ‖ p') per step, nats */
    double *js;               /* [base_len+1] Jensen–Shannon divergence per step, nats (≤ ln 2) */
    attend_real *forced_align;/* [base_len+1, S'] intervened weights along the baseline output */
    int32_t *out;             /* [max_len] free-running greedy output under the intervention */
    attend_real *out_align;   /* [max_len, S'] its attention */
    /* filled by attend_model_intervene: */
    int steps;                /* compared steps: base_len + 1 (the baseline's tokens and EOS) */
    int src_len;              /* S': the source length the decoder saw (S - 1 after a deletion) */
    double tv_mean, tv_max, kl_mean, kl_max, js_mean, js_max;
    int out_len;              /* length of the free-running output */
    int changed;              /* 1 when that output differs from the baseline */
} attend_intervention_result;

/*
 * Runs one intervention on source src [S] against a baseline output base
 * [base_len] (typically the model's own greedy or beam output for src): p_t is
 * the model's output distribution at step t teacher-forced along the baseline
 * without intervention, p'_t the same with it; both over the target vocabulary
 * for steps 0..base_len (EOS included). Then the model decodes freely (greedy,
 * up to max_len) under the intervention, and `changed` says whether the output
 * differs. BAHDANAU and LUONG decoders; NONE only for token deletion and
 * replacement (it has no attention); POINTER is rejected.
 */
attend_status attend_model_intervene(attend_model *m, const int32_t *src, int S, const int32_t *base, int base_len,
                                     int max_len, const attend_intervention *iv, attend_intervention_result *res,
                                     attend_error *err);

const char *attend_intervention_name(attend_intervention_kind kind);

/*
 * The same interventions on one attention read-out (no model): query q [Dq]
 * against keys k [S,Dk] and values v [S,Dv] with score cfg/p, giving weights
 * [S] and context ctx [Dv] under REMOVE_STATE (masked and renormalised),
 * UNIFORM, PERMUTE or DROP_TOP. Token deletion needs an encoder to re-run:
 * compute the new states and call attend_attention_forward. Seed 000's Tables
 * 14.2 and 14.3 are this function on its three-state example.
 */
attend_status attend_attention_intervene(const attend_score_config *cfg, const attend_score_params *p,
                                         attend_real *ctx, attend_real *weights, const attend_real *q,
                                         const attend_real *k, const attend_real *v, int S, int Dv,
                                         const attend_intervention *iv, attend_error *err);

/* ------------------------------------------------------------------- sweep */
/*
 * The length sweep (seed 001): train one model per (source length, decoder)
 * under the same budget and measure how accuracy holds up as sources grow —
 * the fixed-context baseline's bottleneck against attention.
 */
typedef struct {
    attend_decoder_kind decoder; /* BAHDANAU, LUONG or NONE */
    attend_score_kind score;     /* ignored by NONE */
} attend_sweep_model;

typedef struct {
    /* data: a built-in task (COPY or REVERSE) generated at each length, or, when
     * train and dev are both given, TSV pairs (task ignored): one model per
     * decoder trained on all of train, dev scored per source-length bucket
     * (lengths[i-1], lengths[i]] (the first bucket starts at 1) */
    attend_task task;
    int symbols;                       /* task alphabet */
    int train_pairs, dev_pairs;        /* task: pairs generated per length */
    const attend_dataset *train, *dev; /* TSV mode */
    int src_vocab, tgt_vocab;          /* TSV mode: vocabulary sizes */
    const int *lengths;                /* [n_lengths], increasing, >= 1 */
    int n_lengths;
    const attend_sweep_model *models;  /* [n_models] */
    int n_models;
    /* the budget, the same for every run */
    attend_cell_kind cell;
    int emb, enc_hidden, dec_hidden, attn; /* dot scores need dec_hidden == 2*enc_hidden */
    int steps, batch;
    attend_optim_config optim;
    uint64_t seed;                     /* data, initialisation and shuffling */
} attend_sweep_config;

typedef struct {
    int length;                 /* task: the source length; TSV: the bucket's upper bound */
    int min_length;             /* task: = length; TSV: the bucket's lower bound */
    attend_sweep_model model;
    attend_eval_stats eval;     /* on the dev pairs of this length (pairs 0: empty bucket,
                                   the rates are NaN) */
    double uniform_entropy;     /* mean ln(source length) over those pairs: the entropy
                                   of uniform attention, for reading attn_entropy */
    double samples_per_s;       /* training throughput of the run */
    double train_seconds;       /* training time of the run */
    double wall_seconds;        /* training + evaluation */
} attend_sweep_row;

/* Called after each row is complete (index 0..total-1), e.g. for progress. */
typedef void (*attend_sweep_callback)(void *user, const attend_sweep_row *row, int index, int total);

/*
 * Runs the sweep into rows [n_lengths * n_models] (row = length index *
 * n_models + model index). Same configuration and seed → the same numbers
 * (times aside). cb may be NULL. Blocking; minutes to hours with long sources.
 */
attend_status attend_sweep_run(const attend_sweep_config *cfg, attend_sweep_row *rows, attend_sweep_callback cb,
                               void *user, attend_error *err);

/* A short name for a sweep model: "none", or "<decoder>-<score>" ("bahdanau-additive"). */
const char *attend_sweep_model_name(attend_sweep_model model, char *buf, size_t cap);

/* The rows as CSV (header line first; malloc'ed into *out, caller frees):
 * model,decoder,score,length,min_length,pairs,greedy_seq_acc,greedy_token_acc,
 * tf_seq_acc,tf_token_acc,loss,attn_entropy,uniform_entropy,samples_per_s,
 * train_seconds,wall_seconds (empty fields for an empty bucket). */
attend_status attend_sweep_csv(const attend_sweep_row *rows, int n_rows, char **out, attend_error *err);

/* Reads CSV written by attend_sweep_csv (header line first; rows in any order)
 * into rows [cap]; *n_rows receives the count. Empty fields read as NaN. An
 * unexpected header, a malformed field or more than cap rows is an error
 * naming label:line and the field. Lets runs split by length be merged. */
attend_status attend_sweep_csv_parse(const char *text, size_t len, const char *label, attend_sweep_row *rows, int cap,
                                     int *n_rows, attend_error *err);

/* Greedy full-sequence accuracy against source length as an SVG line plot,
 * one line per model (attend_render_line_plot_svg). */
attend_status attend_sweep_plot_svg(const attend_sweep_row *rows, int n_rows, const char *title, char **out,
                                    attend_error *err);

/* --------------------------------------------------------------------- G2P */
/*
 * Grapheme-to-phoneme conversion on a pronouncing dictionary (docs/G2P.md).
 * A dictionary line is "word PH1 PH2 ..." (CMUdict: ARPAbet phonemes, an
 * alternate pronunciation as "word(2)"). A G2P model is an ordinary model file
 * whose source side is characters (tokenizer "char", the one the file names)
 * and whose target side is phonemes (one token each, joined with spaces).
 */
#define ATTEND_G2P_MAX_LEN 64 /* longest word (characters) and pronunciation (phonemes) */

typedef struct attend_g2p_dict attend_g2p_dict; /* a parsed dictionary (opaque) */

typedef struct {
    int keep_stress;    /* 0: strip stress digits ("AH0" -> "AH"), the usual G2P setting */
    int skip_malformed; /* 0: the first odd line is an error naming path:line; 1: skip and count */
} attend_g2p_options;

typedef struct {
    int lines;          /* lines read */
    int entries;        /* pronunciations kept */
    int words;          /* distinct words */
    int comments;       /* lines that are comments (";;;" or "#" first) */
    int blank;          /* empty or white-space lines */
    int skipped;        /* odd lines skipped (skip_malformed) */
    int duplicates;     /* a word's pronunciation repeated (e.g. equal once stress is stripped) */
    int max_word_len;   /* longest word, characters */
    int max_pron_len;   /* longest pronunciation, phonemes */
    char first_skipped[ATTEND_ERROR_MSG_MAX]; /* "path:line: why" of the first skipped line, or "" */
} attend_g2p_dict_info;

/*
 * Parses dictionary text (len bytes; label names it in messages, e.g. the
 * path). Per line (LF or CRLF; the last may lack its newline): blank lines and
 * comment lines (first non-blank characters ";;;" or "#") are counted and
 * ignored; an inline comment (white space, then "#", to the end of the line) is
 * removed. The rest is a word and one or more phonemes separated by spaces or
 * tabs. The word may end in an alternate marker "(N)", N = 1..999, which is
 * removed; ASCII letters are lower-cased; a word is valid UTF-8 of 1..64
 * characters without control characters. A phoneme is upper-case ASCII
 * letters, optionally followed by one stress digit, which is removed unless
 * keep_stress. Odd lines (no phoneme, bad marker, bad phoneme, bad UTF-8, too
 * long) are ATTEND_ERR_FORMAT "label:line: why", or skipped and counted.
 * Words are numbered in order of first appearance, a word's pronunciations in
 * file order, duplicates dropped. opt may be NULL (defaults: all zero).
 */
attend_status attend_g2p_dict_parse(attend_g2p_dict **out, const char *text, size_t len, const char *label,
                                    const attend_g2p_options *opt, attend_error *err);
/* The same from a file (ATTEND_ERR_IO naming the path when it cannot be read). */
attend_status attend_g2p_dict_read(attend_g2p_dict **out, const char *path, const attend_g2p_options *opt,
                                   attend_error *err);
void attend_g2p_dict_free(attend_g2p_dict *d); /* NULL is fine */
void attend_g2p_dict_get_info(const attend_g2p_dict *d, attend_g2p_dict_info *info);
int attend_g2p_dict_words(const attend_g2p_dict *d); /* distinct words (0 for NULL) */
/* Word w (0-based) as stored (lower-cased, marker removed); NULL out of range. */
const char *attend_g2p_dict_word(const attend_g2p_dict *d, int w);
/* Number of pronunciations of word w (0 out of range), and the k-th as
 * phonemes joined by single spaces ("HH AH L OW"); NULL out of range. */
int attend_g2p_dict_prons(const attend_g2p_dict *d, int w);
const char *attend_g2p_dict_pron(const attend_g2p_dict *d, int w, int k);

/* The deterministic three-way split, by a hash of the word's bytes (FNV-1a
 * 64 then the splitmix64 finaliser, modulo 100): 0..89 TRAIN, 90..94 DEV,
 * 95..99 TEST. All pronunciations of a word share its word, so its split. */
typedef enum {
    ATTEND_G2P_TRAIN = 0,
    ATTEND_G2P_DEV = 1,
    ATTEND_G2P_TEST = 2,
    ATTEND_G2P_ALL = 3, /* selects every word where a split is asked for */
} attend_g2p_split;
attend_g2p_split attend_g2p_split_of(const char *word, size_t len);
const char *attend_g2p_split_name(attend_g2p_split split); /* "train" "dev" "test" "all" */

/*
 * One pair per pronunciation of every word in `split`: the word's characters
 * (graphemes vocabulary, CHAR tokenizer) -> its phonemes (phonemes vocabulary,
 * SPACE tokenizer), in word order. grow != 0 adds unseen tokens (training
 * data); otherwise they become ATTEND_UNK. *out is NULL on error.
 */
attend_status attend_g2p_dataset(attend_dataset **out, const attend_g2p_dict *d, attend_g2p_split split,
                                 attend_vocab *graphemes, attend_vocab *phonemes, int grow, attend_error *err);

/* Levenshtein distance (unit insert/delete/substitute) between id sequences
 * a [na] and b [nb]; -1 when a length is outside [0, ATTEND_G2P_MAX_LEN] or a
 * needed pointer is NULL. No allocation (two rows on the stack). */
int attend_g2p_edit_distance(const int32_t *a, int na, const int32_t *b, int nb);

/* Running error counts. PER = phone_errors / ref_phones, WER = wrong / words. */
typedef struct {
    long words;        /* words scored */
    long wrong;        /* words whose output equals none of the references */
    long phone_errors; /* edit distance to the closest reference, summed */
    long ref_phones;   /* length of that reference, summed */
} attend_g2p_counts;

/*
 * Scores one word's output hyp [hyp_len] against its n_refs >= 1 reference
 * pronunciations refs[r] [ref_lens[r]], adding to *c: the word is right when
 * hyp equals any reference; the phone errors are the edit distance to the
 * closest reference (ties: the first), counted against that reference's
 * length. Lengths above ATTEND_G2P_MAX_LEN are ATTEND_ERR_CAPACITY.
 */
attend_status attend_g2p_count_word(attend_g2p_counts *c, const int32_t *hyp, int hyp_len,
                                    const int32_t *const *refs, const int *ref_lens, int n_refs,
                                    attend_error *err);
double attend_g2p_per(const attend_g2p_counts *c); /* 0 when nothing was counted */
double attend_g2p_wer(const attend_g2p_counts *c);

/*
 * Loads a G2P model file: attend_model_load (capacity as there, may be NULL),
 * then checks that it is one: the file's tokenizer is "char" (the graphemes),
 * the decoder is not POINTER, and every phoneme token (after the four
 * specials) is upper-case ASCII letters with at most one trailing digit. Both
 * vocabularies are returned (caller frees). Nothing is returned on error.
 */
attend_status attend_g2p_model_load(attend_model **out, const char *path, const attend_model_config *capacity,
                                    attend_vocab **graphemes, attend_vocab **phonemes, attend_error *err);

/* A word as model input: ASCII letters lower-cased, then one id per character
 * into ids [max_ids] (unknown characters become ATTEND_UNK). An empty word, one
 * with white space or control characters, or over ATTEND_G2P_MAX_LEN
 * characters is ATTEND_ERR_ARG; more than max_ids is ATTEND_ERR_CAPACITY. */
attend_status attend_g2p_encode_word(attend_vocab *graphemes, const char *word, size_t len, int32_t *ids,
                                     int max_ids, int *n_ids, attend_error *err);

/*
 * Pronounces one word with greedy decoding and writes the phonemes, joined by
 * spaces, into out (cap bytes, NUL-terminated). Allocates nothing: the model's
 * own buffers (sized at load) and stack arrays of ATTEND_G2P_MAX_LEN are all it
 * uses, so a loop over words runs in a fixed memory budget. The word must fit
 * the model's max_src_len; the output is cut at min(max_tgt_len + 1,
 * ATTEND_G2P_MAX_LEN) phonemes. Not thread-safe on one model (it reuses the
 * model's activations); different models may be used at once.
 */
attend_status attend_g2p_pronounce(attend_model *m, attend_vocab *graphemes, const attend_vocab *phonemes,
                                   const char *word, size_t len, char *out, size_t cap, attend_error *err);

typedef struct {
    int beam;      /* 0 or 1: greedy decoding in batches; 2..64: beam search of that width */
    double alpha;  /* beam: length normalisation (see attend_model_beam) */
    int batch;     /* greedy: words per batch, 1..the model's max_batch (0 = max_batch) */
    int max_words; /* evaluate at most this many words of the split (0 = all) */
} attend_g2p_eval_options;

/*
 * Decodes every word of `split` in d and counts errors against its
 * pronunciations (attend_g2p_count_word). References are mapped with the
 * model's phoneme vocabulary (a phoneme it lacks becomes ATTEND_UNK and never
 * matches). The model's max_src_len must cover the split's longest word and
 * its max_batch the batch / beam width. Work buffers are allocated once per
 * call. *c is overwritten.
 */
attend_status attend_g2p_evaluate(attend_model *m, const attend_g2p_dict *d, attend_g2p_split split,
                                  attend_vocab *graphemes, attend_vocab *phonemes,
                                  const attend_g2p_eval_options *opt, attend_g2p_counts *c, attend_error *err);

#ifdef __cplusplus
}
#endif

#endif /* ATTEND_H */
