/*
 * attend/analysis.h — pictures (heatmaps, plots), interventions and sweeps.
 *
 * Part of the public header: include <attend.h> (it includes every part);
 * the conventions every function follows are written at the top of
 * attend/core.h.
 */
#ifndef ATTEND_ANALYSIS_H
#define ATTEND_ANALYSIS_H

#include "attend/seq2seq.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* Styles of attend_render_heatmap_text_style. */
typedef enum {
    ATTEND_HEATMAP_SHADE = 0,   /* a boxed grid, one ramp character per cell (`attend decode --align`) */
    ATTEND_HEATMAP_PERCENT = 1, /* the same grid with the weight in hundredths, 0..100 */
    ATTEND_HEATMAP_TSV = 2,     /* a header row of source tokens, then per output token its
                                   weights with "%.4f", tab-separated */
    ATTEND_HEATMAP_RAMP = 3,    /* the layout of attend_render_heatmap_text */
} attend_heatmap_style;

/* The text heatmap of w [T,S] in a style. ATTEND_HEATMAP_RAMP is exactly
 * attend_render_heatmap_text (same checks, same bytes). The grid styles SHADE,
 * PERCENT and TSV print the weights as given (no range or finiteness check:
 * NaN shades as ' ', counts 0 percent, prints as "nan"), take T >= 0 and
 * S >= 0 (T = 0 prints "(no output tokens)"), need src_tokens [S] and
 * out_tokens [T] (ATTEND_ERR_NULL otherwise) and print them as they are: a
 * lone space as '_', cut to 6 (source) or 12 (output) code points with '~'.
 * Every byte the renderer adds is ASCII. Errors: ATTEND_ERR_NULL, _SHAPE (more
 * than 1000000 cells), _ARG (unknown style), _ALLOC; *out is then NULL.
 * Thread-safe (no shared state). */
attend_status attend_render_heatmap_text_style(char **out, const attend_real *w, int T, int S,
                                               const char *const *src_tokens, const char *const *out_tokens,
                                               attend_heatmap_style style, attend_error *err);

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

/* Where a weight edit (REMOVE_STATE, UNIFORM, PERMUTE, DROP_TOP) applies. */
typedef enum {
    ATTEND_SITE_CROSS = 0,        /* the decoder's attention over the source (its steps' weight rows) */
    ATTEND_SITE_ENCODER_SELF = 1, /* the encoder's self-attention (a transformer encoder): every query row
                                     of the chosen layers and heads; REMOVE_STATE hides key `position` from
                                     every query (renormalised over the rest), UNIFORM makes each row uniform
                                     over the valid keys, PERMUTE moves each row's weights by the seeded
                                     permutation, DROP_TOP removes each row's largest weight; the intervened
                                     encoder states then feed the unchanged decoder */
} attend_intervention_site;

typedef struct {
    attend_intervention_kind kind;
    int position;   /* REMOVE_STATE, DELETE_TOKEN, REPLACE_TOKEN: 0-based source position */
    int32_t token;  /* REPLACE_TOKEN: the new source id */
    uint64_t seed;  /* PERMUTE: seed of attend_permutation over the S positions */
    /* appended (issue 27); all 0 = the decoder's attention as before */
    int site;       /* attend_intervention_site */
    int layer;      /* ENCODER_SELF: the layer, 1 .. enc_layers, or 0 for every layer (CROSS: 0) */
    int head;       /* ENCODER_SELF: the head, 1 .. heads, or 0 for every head (CROSS: 0) */
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
 * replacement (it has no attention); POINTER is rejected. Site ENCODER_SELF
 * (the weight edits only, any decoder with a vocabulary, the transformer
 * decoder included) needs an encoder with self-attention
 * (ATTEND_ENCODER_TRANSFORMER): another encoder, a layer or head out of range,
 * or token deletion/replacement there is ATTEND_ERR_ARG naming both sides. Copy models
 * (attend/seq2seq.h, "Copy"): the distributions are over the extended
 * vocabulary (Vt + S ids), base may hold copied ids, and after a deletion the
 * copied ids of out and of p'_t name positions of the original source (the
 * deleted one has probability 0).
 */
attend_status attend_model_intervene(attend_model *m, const int32_t *src, int S, const int32_t *base, int base_len,
                                     int max_len, const attend_intervention *iv, attend_intervention_result *res,
                                     attend_error *err);

const char *attend_intervention_name(attend_intervention_kind kind);
/* "cross" or "encoder-self" */
const char *attend_intervention_site_name(attend_intervention_site site);

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

/* ------------------------------------------------------------------ trials */
/*
 * Attention on trial (Jain & Wallace 2019, "Attention is not Explanation";
 * Wiegreffe & Pinter 2019, "Attention is not not Explanation"): does a
 * model's attention agree with other importance measures, and could different
 * attention have given the same output? `attend trial` runs these on a model
 * and writes the report (docs/RESULTS.md, "Attention on trial").
 */

/* Kendall's rank correlation tau-b of x [n] and y [n] (pairs tied in either
 * leave the numerator and shrink the denominator, as scipy.stats.kendalltau's
 * default variant 'b'), and its two-sided p-value against tau = 0 as scipy's
 * method 'auto' computes it: the exact null distribution when neither has ties
 * and n <= 33 (or at most one pair is discordant, or concordant), else the
 * normal approximation with the tie-corrected variance. *tau (and *pvalue) are
 * NaN when n < 2 or x or y is constant. pvalue may be NULL. O(n^2) time, no
 * allocation. Errors: ATTEND_ERR_NULL, _SHAPE (n < 0), _CAPACITY (n above
 * 1000000), _NONFINITE naming the element. Thread-safe. */
attend_status attend_kendall_tau_b(const double *x, const double *y, int n, double *tau, double *pvalue,
                                   attend_error *err);

/* Distances between probability vectors p [n] and q [n] (each finite, >= 0,
 * summing to 1 within 1e-6): total variation ½Σ|p − q|, KL(p ‖ q) (inf where
 * q = 0 < p) and the Jensen–Shannon divergence ½KL(p ‖ m) + ½KL(q ‖ m),
 * m = (p + q)/2, all in nats (scipy.spatial.distance.jensenshannon is its
 * square root). Any output may be NULL. Errors: ATTEND_ERR_NULL, _SHAPE,
 * _ARG naming the element or the sum. Thread-safe. */
attend_status attend_divergences(const double *p, const double *q, int n, double *tv, double *kl, double *js,
                                 attend_error *err);

/* Options of attend_model_importance (zero-initialised: J&W's settings). */
typedef struct {
    const attend_real *frozen; /* NULL, or [base_len+1, S]: every pass reads these attention rows
                                  (each >= 0, summing to 1) in place of the model's weights; after a
                                  deletion the row without the deleted position, renormalised
                                  (uniform when nothing is left) */
    int attention_gradient;    /* 0 (J&W): the gradient pass holds the attention weights constant;
                                  1: the gradient also flows through the scores (not with frozen) */
} attend_importance_options;

/* What attend_model_importance fills; every array is caller-owned, NULL when
 * not wanted; steps = base_len + 1 (the baseline's tokens and EOS). */
typedef struct {
    attend_real *attention; /* [steps,S] the attention rows compared (the frozen ones when given) */
    double *grad;           /* [steps,S] gradient x input: |Σ_d x_jd ∂ log p_t(y_t)/∂x_jd|, x_j the
                               embedding of source token j */
    double *loo;            /* [steps,S] leave-one-out: TV(p_t, p_t with token j deleted and the
                               source re-encoded); 0 for a 1-token source */
    double *tau_grad, *p_grad; /* [steps] Kendall tau-b of attention against grad, its p-value */
    double *tau_loo, *p_loo;   /* [steps] the same against loo (NaN where either row is constant) */
    int steps;              /* filled: base_len + 1 */
} attend_importance_result;

/*
 * Trial 1, importance agreement (Jain & Wallace §4.1, Table 2 and Figure 2
 * for a seq2seq model): for source src [S] and a baseline output base
 * [base_len] (typically the model's greedy output), per output step t
 * (teacher-forced along base, y_t = base[t], EOS last) the attention row, the
 * gradient x input and leave-one-out importance of every source position, and
 * Kendall's tau-b of the attention against each. BAHDANAU and LUONG decoders
 * (copy models are refused). Runs S + 1 forced passes and ceil(steps /
 * max_batch) teacher-forced forward/backward passes over prefix rows (the
 * model's max_batch rows at a time); leaves the model's gradients zero and its
 * parameters untouched. One allocation per call, freed before it returns.
 * Errors: ATTEND_ERR_NULL, _ARG (decoder kind, ids, frozen rows naming row and
 * position), _CAPACITY (steps beyond max_tgt_len + 1), _ALLOC, and the
 * source's checks. Not thread-safe on one model (it uses the model's buffers).
 */
attend_status attend_model_importance(attend_model *m, const int32_t *src, int S, const int32_t *base, int base_len,
                                      const attend_importance_options *o, attend_importance_result *res,
                                      attend_error *err);

/* How attend_model_adversary searches. */
typedef enum {
    ATTEND_ADVERSARY_SEARCH = 0, /* RAYS and FOLLOW, each with the budget, and the farther of their
                                    feasible rows: never below either (any S) */
    ATTEND_ADVERSARY_GRID = 1,   /* every point k/grid of the simplex (S <= 4): the brute force */
    ATTEND_ADVERSARY_RAYS = 2,   /* SEARCH's first strategy alone (the search of 2026-12-02): rays to
                                    the simplex's faces, bisected, then random walks from the best */
    ATTEND_ADVERSARY_FOLLOW = 3, /* SEARCH's second strategy alone (the search of 2026-12-03): rays,
                                    then walks along the constraint and random walks from the best */
} attend_adversary_method;

/* Called after each output step (done of total): progress on long runs. */
typedef void (*attend_progress_fn)(void *user, int done, int total);

typedef struct {
    double epsilon;                 /* the bound on TVD(p_t, p~_t), in [0, 1] (J&W: 0.01) */
    attend_adversary_method method;
    long max_evals;                 /* SEARCH, RAYS, FOLLOW: decoder steps evaluated per output step by
                                       each strategy (0: 1000; SEARCH runs two, and RAYS also evaluates
                                       rows it may not use: its bisections' other branches and the
                                       proposals after an accepted one, so in all up to 4 max_evals) */
    int grid;                       /* GRID: the resolution r, 1..4096, at most 2e7 points
                                       C(r + S - 1, S - 1) (S = 4: r <= 491) */
    attend_progress_fn progress;    /* NULL, or called after every output step */
    void *progress_user;
    int batch;                      /* attend_model_adversary: candidate attention rows per decoder-step
                                       call (the source and the state entering the step replicated over
                                       the rows), in [0, the model's max_batch] (0: 8, or max_batch if
                                       smaller); 1 is unbatched. The rows searched do not depend on it,
                                       but one row a call rounds differently from several (the GEMM's
                                       vector path), which can move the heuristic search elsewhere */
} attend_adversary_options;

typedef struct {
    attend_real *adversary; /* NULL or [steps,S]: the adversarial attention rows */
    double *jsd;            /* NULL or [steps]: JSD(alpha_t, adversary_t), nats (<= ln 2) */
    double *tvd;            /* NULL or [steps]: TVD of its output from the model's (<= epsilon) */
    double jsd_mean, jsd_max; /* over the steps */
    long evals;             /* decoder steps evaluated in all (candidate rows, counted one each) */
    int steps;              /* base_len + 1 */
} attend_adversary_result;

/*
 * Trial 2, adversarial attention (Jain & Wallace §4.2.2): per output step t
 * along base [base_len] (+ EOS; teacher-forced, the decoder state entering
 * each step the model's own), the attention row farthest from the model's in
 * Jensen-Shannon divergence whose output distribution, with the decoder step
 * recomputed under the new context, stays within epsilon total variation of
 * the model's. BAHDANAU and LUONG decoders without copy, coverage or
 * monotonic attention (their later steps read this one's weights). SEARCH
 * (and RAYS, FOLLOW alone) is a heuristic (a lower bound on the true
 * maximum); GRID the exhaustive check for S <= 4. Candidate rows are evaluated o->batch at a time (one decoder
 * step over that many rows, the source replicated). One allocation per call
 * (sized by S, the batch and the vocabulary), freed before it returns.
 * Errors: ATTEND_ERR_NULL, _ARG (decoder, ids, epsilon, method, grid),
 * _CAPACITY (the baseline's length, a batch outside [0, max_batch]), _ALLOC
 * and the source's checks. Not thread-safe on one model.
 */
attend_status attend_model_adversary(attend_model *m, const int32_t *src, int S, const int32_t *base, int base_len,
                                     const attend_adversary_options *o, attend_adversary_result *res,
                                     attend_error *err);

/* The distance of the output under the attention row w [S] (double, a
 * probability vector) from the output under the original row, as the caller's
 * model computes it: e.g. a total variation, or |r~ - r| of a scalar read-out.
 * A non-finite value counts as beyond every bound. */
typedef double (*attend_output_distance_fn)(void *user, const double *w);

/*
 * Trial 2 for one attention row of any model the caller evaluates (the
 * seed-000 toy's read-out, a model outside attend): the row adversary [S]
 * farthest from alpha [S] (finite, >= 0, summing to 1 within 1e-6) in
 * Jensen-Shannon divergence with distance(user, row) <= o->epsilon (any finite
 * bound >= 0, in the distance's units), by the same SEARCH (each strategy
 * o->max_evals calls of distance; 0: 1000; here RAYS evaluates one row at a
 * time, nothing unused: in all at most 2 max_evals + 44), RAYS, FOLLOW or GRID
 * (S <= 4) as attend_model_adversary. *jsd
 * (nats), *dist (the adversary's distance) and *evals (calls made) may be NULL;
 * o->progress is not called. One allocation per call, freed before it returns.
 * Errors: ATTEND_ERR_NULL, _SHAPE (S outside [1, 1000000]), _ARG (alpha naming
 * the element or its sum, epsilon, method, grid), _ALLOC. Thread-safe when
 * distance is.
 */
attend_status attend_attention_adversary(const double *alpha, int S, attend_output_distance_fn distance, void *user,
                                         const attend_adversary_options *o, double *adversary, double *jsd,
                                         double *dist, long *evals, attend_error *err);

/* ------------------------------------------------------ reference alignments */
/* Options of attend_m2m_align (Jiampojamarn et al. 2007's many-to-many EM
 * aligner; for G2P: max_src 2, max_tgt 2, src_deletions 1, two_to_two 0). */
typedef struct {
    int max_src;       /* source tokens a substring spans: 1 or 2 */
    int max_tgt;       /* target tokens it spells: 1 or 2 */
    int src_deletions; /* 1: a source substring may spell nothing (a silent letter) */
    int iterations;    /* EM iterations, 1..1000 */
    long capacity;     /* distinct substring pairs the table holds, 16..2^26 (32 bytes each, x2) */
    int two_to_two;    /* 1: also 2 source tokens spelling 2 target tokens (joint EM then favours
                          them: on the CMUdict sample F1 against the hand alignments falls from
                          0.985 to 0.761, docs/RESULTS.md) */
} attend_m2m_options;

typedef struct {
    int pairs;             /* pairs read */
    int unaligned;         /* pairs no segmentation explains (left without an alignment) */
    long substring_pairs;  /* distinct substring pairs seen */
    double log_likelihood; /* sum over aligned pairs of log P(pair), after the last iteration */
    long links;            /* links written */
} attend_m2m_result;

/*
 * The many-to-many EM aligner for dictionaries (Jiampojamarn, Kondrak &
 * Sherif 2007): EM over every segmentation of each pair into substring pairs
 * (1..max_src source tokens spelling 0..max_tgt target tokens), then each
 * pair's Viterbi segmentation written as its alignment
 * (attend_dataset_set_alignment): every source token of a substring linked to
 * every target token it spells; a pair no segmentation explains keeps no
 * alignment. Deterministic. One allocation (the table, the lattices of the
 * longest pair). res may be NULL. Errors: ATTEND_ERR_NULL, _ARG (an option),
 * _CAPACITY (more distinct substring pairs than capacity, naming the pair),
 * _ALLOC. Not thread-safe with other calls that change d.
 */
attend_status attend_m2m_align(attend_dataset *d, const attend_m2m_options *o, attend_m2m_result *res,
                               attend_error *err);

/* Attention rows w [T,S] as links (source position, output step) into links
 * [cap,2]: per step the argmax position (first on ties) when threshold <= 0,
 * else every position with weight >= threshold (a step may get none).
 * *n_links the count. Errors: ATTEND_ERR_NULL, _SHAPE, _ARG (threshold >= 1),
 * _NONFINITE naming the cell, _CAPACITY. */
attend_status attend_attention_links(const attend_real *w, int T, int S, double threshold, int32_t *links, int cap,
                                     int *n_links, attend_error *err);

/* Link counts summed over pairs: reference links, hypothesis links, links in both. */
typedef struct {
    long ref, hyp, both;
} attend_alignment_counts;

/* Adds one pair's counts: ref [n_ref,2] and hyp [n_hyp,2] links (i, j), each
 * distinct link once. Errors: ATTEND_ERR_NULL, _SHAPE. */
attend_status attend_alignment_count(const int32_t *ref, int n_ref, const int32_t *hyp, int n_hyp,
                                     attend_alignment_counts *c, attend_error *err);

/* precision both/hyp, recall both/ref, F1 2 both/(hyp + ref) and the
 * alignment error rate (Och & Ney 2003) with every reference link sure,
 * AER = 1 - F1; NaN where a denominator is 0. Any output may be NULL. */
void attend_alignment_scores(const attend_alignment_counts *c, double *precision, double *recall, double *f1,
                             double *aer);

/* ------------------------------------------------------------------- sweep */
/*
 * The length sweep (seed 001): train one model per (source length, decoder)
 * under the same budget and measure how accuracy holds up as sources grow —
 * the fixed-context baseline's bottleneck against attention.
 */
typedef struct {
    attend_decoder_kind decoder; /* BAHDANAU, LUONG, NONE, or TRANSFORMER (with the
                                    config's TRANSFORMER encoder) */
    attend_score_kind score;     /* ignored by NONE and TRANSFORMER */
    /* mechanisms on top (model config fields; 0: off), named by a "+name"
     * suffix (attend_sweep_model_suffix): */
    int monotonic;               /* +monotonic: monotonic attention (BAHDANAU, LUONG) */
    int coverage;                /* +coverage: the coverage input (ADDITIVE score only) */
    int copy;                    /* +copy: the copy mechanism (config copy; BAHDANAU, LUONG) */
    int normalizer;              /* +sparsemax, +entmax15: the attention normaliser (an
                                    attend_normalizer; BAHDANAU, LUONG) */
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
    /* TSV mode: the vocabularies, for copy models' source→target map
     * (attend_model_set_copy_map; NULL: one shared vocabulary) */
    const attend_vocab *src_vocab_map, *tgt_vocab_map;
    /* every model's encoder (issue 27; all zero: the bidirectional RNN of cell
     * and enc_hidden): the kind and its settings, as attend_model_config's
     * fields of the same names (TRANSFORMER, CONV: width emb; the transformer's
     * feed-forward enc_hidden); a learned positions table gets the longest
     * source's rows (and a TRANSFORMER decoder's steps). A TRANSFORMER decoder
     * needs the TRANSFORMER encoder; its feed-forward width is dec_hidden. */
    attend_encoder_kind encoder;
    int heads;
    attend_positions positions;
    int post_norm, kernel, conv_relu;
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

/* A short name for a sweep model: "none", "transformer", or "<decoder>-<score>" ("bahdanau-additive"),
 * then "+name" for each mechanism on ("bahdanau-additive+monotonic"). */
const char *attend_sweep_model_name(attend_sweep_model model, char *buf, size_t cap);

/* Turns on the mechanism of one "+name" suffix (name without the '+', e.g.
 * "monotonic") in *m; an unknown name is ATTEND_ERR_ARG listing the known ones. */
attend_status attend_sweep_model_suffix(attend_sweep_model *m, const char *name, attend_error *err);

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

/* ----------------------------------------------------- two models compared */
/*
 * Model a against model b on the pairs of d (the first max_pairs; 0: all),
 * teacher-forced along each pair's target in batches of batch_size (at most
 * both models' max_batch), per counted step (target tokens and EOS): the
 * Jensen–Shannon divergence (nats) between a's and b's attention rows and the
 * total variation distance between their output distributions, and each
 * model's cross-entropy and token accuracy (src/analysis/compare.c).
 * Wiegreffe & Pinter 2019's measurements: seed variance (a from another
 * seed), the adversary's JSD against its TVD, the uniform baseline; frozen = 1
 * runs a with b's attention in place of its own (the diagnostic transfer of a
 * model trained with attend_train_options.frozen_attention: its JSD is 0).
 * Both models: Bahdanau or Luong decoders without copy, the same vocabulary
 * sizes (the caller compares the tokens), distinct handles; each pair within
 * both models' capacities. Runs both models' forwards (their activations are
 * overwritten); one allocation per call. ATTEND_ERR_NULL, _ARG, _CAPACITY,
 * _ALLOC with a message. Not thread-safe with other calls on either model.
 */
typedef struct {
    int pairs, steps;                  /* pairs and counted steps compared */
    double jsd_mean, jsd_sd, jsd_max;  /* attention: JSD(a, b) over steps (at most ln 2) */
    double tvd_mean, tvd_sd, tvd_max;  /* outputs: TVD(a, b) over steps */
    double loss_a, loss_b;             /* teacher-forced cross-entropy per counted step */
    double acc_a, acc_b;               /* teacher-forced token accuracy (argmax == target) */
} attend_compare_stats;

attend_status attend_model_compare(attend_model *a, attend_model *b, const attend_dataset *d, int batch_size,
                                   int max_pairs, int frozen, attend_compare_stats *out, attend_error *err);

#ifdef __cplusplus
}
#endif

#endif /* ATTEND_ANALYSIS_H */
