/*
 * model_internal.h — the model's private state, shared by model.c (create,
 * layout, forward, backward, greedy, score), encoder.c, the decoder kinds in
 * decoders/, beam.c, train.c, intervene.c and model_io.c. Not installed.
 *
 * Dimension letters (one convention for the whole project):
 *   N   batch rows                    S   source positions
 *   T   target positions / decoder steps
 *   D   embedding width (the model's emb; mha.c's model width, its config field E)
 *   He  encoder hidden width per direction (enc_hidden)
 *   E   encoder output width, 2He (both directions; the attention keys and values)
 *   Hd  decoder hidden width (dec_hidden)
 *   G   gates per cell (3 GRU, 4 LSTM)     A   additive attention width
 *   Dq, Dk, Dv  query, key, value widths of a core attention kernel
 *       (in the model Dq = Hd, Dk = Dv = E); Kd, Vd mha.c's kdim, vdim
 *   P   projected-key width (E, Hd or A by score kind)
 *   H   attention heads (mha.c)            dh  width per head (D / H)
 *   Din decoder cell input width           F   output feature width
 *   V   vocabulary (Vs source, Vt target)  K   beam width
 * Row-major, last index contiguous. Per-step buffers are [T,N,...] so one
 * step is contiguous.
 */
#ifndef ATTEND_MODEL_INTERNAL_H
#define ATTEND_MODEL_INTERNAL_H

#include <stdio.h>

#include "../internal.h"
#include "../core/quant.h"
#include "../core/rnn.h"
#include "../core/attention.h"

#define AT_MAX_LAYERS 8
#define AT_MAX_TENSORS (8 + 12 * AT_MAX_LAYERS + 16) /* encoder 8, decoder 4 per layer */
#define AT_NAME_MAX 48
/* tensors and activation buffers a decoder kind owns (decoders/<kind>.c) */
#define AT_DEC_OWN 4

typedef struct {
    char name[AT_NAME_MAX];
    int ndim;
    int64_t shape[2];
    size_t numel;
    size_t offset; /* into the parameter (and gradient) arena */
} at_tensor_desc;

/* Pointers to each tensor inside one arena (parameters or gradients). */
typedef struct {
    attend_real *src_emb;                      /* [Vs,D] */
    attend_real *tgt_emb;                      /* [Vt,D]   (decoders with a target vocabulary) */
    attend_real *enc_wih[AT_MAX_LAYERS][2];    /* [G*He, D or E] per layer, direction */
    attend_real *enc_whh[AT_MAX_LAYERS][2];    /* [G*He, He] */
    attend_real *enc_bih[AT_MAX_LAYERS][2];    /* [G*He] */
    attend_real *enc_bhh[AT_MAX_LAYERS][2];    /* [G*He] */
    attend_real *bridge_w;                     /* [Hd,E] */
    attend_real *bridge_b;                     /* [Hd] */
    attend_real *attn_W;                       /* GENERAL  [Hd,E] */
    attend_real *attn_Wq;                      /* ADDITIVE [A,Hd] */
    attend_real *attn_Wk;                      /* ADDITIVE [A,E] */
    attend_real *attn_b;                       /* ADDITIVE [A] */
    attend_real *attn_v;                       /* ADDITIVE [A] */
    attend_real *attn_wcov;                    /* ADDITIVE with coverage [A] (coverage.c) */
    attend_real *attn_r;                       /* MONOTONIC [1] the stopping bias r (monotonic.c) */
    attend_real *dec_wih;                      /* [G*Hd, Din] */
    attend_real *dec_whh;                      /* [G*Hd, Hd] */
    attend_real *dec_bih;                      /* [G*Hd] */
    attend_real *dec_bhh;                      /* [G*Hd] */
    attend_real *dec_up_wih[AT_MAX_LAYERS];    /* stacked decoder layer l >= 1 ([0] unused): [G*Hd, Hd] */
    attend_real *dec_up_whh[AT_MAX_LAYERS];    /* [G*Hd, Hd] */
    attend_real *dec_up_bih[AT_MAX_LAYERS];    /* [G*Hd] */
    attend_real *dec_up_bhh[AT_MAX_LAYERS];    /* [G*Hd] */
    attend_real *dec_own[AT_DEC_OWN];          /* the decoder kind's own tensors, after the cell's
                                                  (LUONG: [0] combine.weight [Hd, E+Hd]) */
    attend_real *out_w;                        /* [Vt,F]   (decoders with a target vocabulary) */
    attend_real *out_b;                        /* [Vt] */
    attend_real *copy_wc, *copy_ws, *copy_wx;  /* copy (copy.c): [E] [Hd] [D] */
    attend_real *copy_b;                       /* [1] */
} at_model_tensors;

/* Activations, sized by the capacities (N = max_batch, S = max_src_len,
 * T = Tcap decoder steps), used at the batch's actual N, S, T. */
/* Bahdanau inference at up to this many rows (batch 1, a beam) reads the
 * context's input projection c_t W_ih[:, D:]ᵀ = Σ_j α_tj (h_j W_ih[:, D:]ᵀ)
 * from per-position projections made once per source (one GEMM), instead of
 * a matrix-vector product over the largest weight matrix at every step. */
#define AT_CTX_PROJ_ROWS 8

/* OpenMP builds run the encoder's two directions on two threads up to this
 * many rows (where a direction's products are too small to split well);
 * larger batches split each product instead, without a second scratch. */
#define AT_ENC_PAIR_ROWS 64

typedef struct {
    attend_real *emb_src;                        /* [N,S,D] */
    attend_real *enc_out[AT_MAX_LAYERS];         /* [N,S,E] per layer */
    attend_real *enc_saved[AT_MAX_LAYERS][2];    /* at_rnn_layer_saved_size */
    attend_real *enc_hfin[AT_MAX_LAYERS][2];     /* [N,He] */
    attend_real *enc_cfin[AT_MAX_LAYERS][2];     /* [N,He] (LSTM) */
    attend_real *rnn_scratch;                    /* at_rnn_layer_scratch_size */
    attend_real *rnn_scratch2;                   /* the same at min(N, AT_ENC_PAIR_ROWS) rows, for the
                                                    backward direction on a second thread (OpenMP
                                                    builds only; else NULL) */
    attend_real *fin_cat;                        /* [N,E] top layer's final states */
    attend_real *kp;                             /* [N,S,P] projected keys */
    attend_real *states;                         /* [T+1,N,Hd] s_0 .. s_T (the top decoder layer's) */
    /* a stacked decoder (dec_layers = L > 1): layers 0 .. L-2 below the top
     * one (decoders/stack.c); NULL for one layer */
    attend_real *lstates[AT_MAX_LAYERS];         /* [T+1,N,Hd] per lower layer */
    attend_real *lcstates[AT_MAX_LAYERS];        /* [T+1,N,Hd] LSTM cell states */
    attend_real *lsaved[AT_MAX_LAYERS];          /* [T,N,cell saved width] */
    attend_real *lds[AT_MAX_LAYERS];             /* [N,Hd] backward: d s^l_{t+1} running */
    attend_real *ldcs[AT_MAX_LAYERS];            /* [N,Hd] d c^l_{t+1} running */
    attend_real *lds_prev, *ldcs_prev;           /* [N,Hd] one layer's d s^l_t, d c^l_t */
    attend_real *xg_up, *dxg_up;                 /* [N,G*Hd] an upper layer's input projection, its gradient */
    attend_real *cstates;                        /* [T+1,N,Hd] LSTM cell states */
    attend_real *htilde;                         /* [T+1,N,Hd] LUONG h̃_0 .. h̃_T (laid out for every
                                                    kind, where it always was: the arena is unchanged) */
    attend_real *cat;                            /* [T,N,E+Hd] LUONG [c_t; s_t] (the same) */
    attend_real *ctx;                            /* [T,N,E] */
    attend_real *weights;                        /* [T,N,S] attention per step */
    attend_real *scores;                         /* [T,N,S] */
    attend_real *sc_saved;                       /* [T, scores saved size] */
    attend_real *dec_saved;                      /* [T,N,cell saved width] */
    attend_real *emb_tgt;                        /* [T,N,D] decoder input embeddings */
    attend_real *xg_emb;                         /* [T,N,G*Hd] emb part of x W_ihᵀ + b_ih */
    attend_real *xg;                             /* [N,G*Hd] one step's full input projection */
    attend_real *step_scratch;                   /* at_cell_scratch_size */
    attend_real *feat;                           /* [N,T,F] output features */
    attend_real *logp;                           /* [N,T,V] (POINTER: unused) */
    attend_real *dfeat;                          /* [N,T,F] */
    attend_real *dxg_all;                        /* [T,N,G*Hd] */
    attend_real *ds, *ds_prev;                   /* [N,Hd] */
    attend_real *dcs, *dcs_prev;                 /* [N,Hd] */
    attend_real *dht;                            /* [N,Hd] */
    attend_real *dcat;                           /* [N,E+Hd] */
    attend_real *dctx;                           /* [N,E] */
    attend_real *dweights;                       /* [N,S] */
    attend_real *dscores;                        /* [N,S] */
    attend_real *dkp;                            /* [N,S,P] */
    attend_real *denc, *denc2;                   /* [N,S,E] */
    attend_real *dfin;                           /* [N,E] */
    attend_real *dhf, *dhb;                      /* [N,He] */
    attend_real *demb;                           /* [max(T*N, N*S), D] */
    attend_real *dz;                             /* [N,Hd] */
    attend_real *step_logits;                    /* [N,V] decoding */
    /* Embedding-projection tables: with a small vocabulary, x W_ihᵀ + b_ih of
     * an embedding row depends only on the token, so the first layer's input
     * projections are looked up per token instead of multiplied per position */
    attend_real *enc_tab;                        /* [2,Vs,G*He] layer 0, per direction */
    attend_real *dec_tab;                        /* [Vt,G*Hd] tgt_emb W_ih[:, :D]ᵀ + b_ih */
    attend_real *dtab;                           /* [max(Vs*G*He, Vt*G*Hd)] gradient of one table */
    attend_real *dec_own[AT_DEC_OWN];            /* the decoder kind's own buffers (BAHDANAU: [0] ctx_proj
                                                    [min(N, AT_CTX_PROJ_ROWS),S,G*Hd], enc_out W_ih[:, D:]ᵀ
                                                    per source position, for inference) */
    attend_real *mono_p, *mono_q;                /* MONOTONIC [T,N,S] the expected alignment's p and q */
    attend_real *mono_dcarry;                    /* MONOTONIC [N,S] d α_{t−1} from step t's backward */
    attend_real *mono_noise;                     /* MONOTONIC [N,S] one step's pre-sigmoid training noise */
    /* inference (greedy, beam, interventions) */
    attend_real *step_feat;                      /* [N,F] one step's output features */
    attend_real *row_tmp;                        /* [N,Hd] at_model_reorder's scratch */
    /* coverage (coverage.c; attentive kinds) */
    attend_real *cov;                            /* [T+1,N,S] cov_t = Σ_{t'<t} α_t' */
    attend_real *dcov;                           /* [N,S] ∂L/∂cov summed over later steps (beam: scratch) */
    /* copy (copy.c; NULL without it) */
    attend_real *copy_pgen, *copy_r, *copy_da, *copy_du; /* [T,N] p_gen and backward's coefficients */
    attend_real *copy_lpy;                       /* [N,T] log P(y) of the mixture */
    attend_real *copy_dist;                      /* [N,Vt+S] one step's extended distribution */
} at_acts;

/* A hook on every step's attention weights w [N,S] (valid [N,S]), called
 * after the masked softmax and before the context (intervene.c registers one
 * to edit them); user is the registrant's. */
typedef void (*at_weight_hook_fn)(void *user, attend_real *w, const uint8_t *valid, int N, int S);

typedef struct at_decoder_ops at_decoder_ops; /* decoders/decoder.h */

/* One packed view of a weight matrix (linear.c). */
#define AT_MAX_PACKS 96
typedef struct {
    const attend_real *B; /* the view: B at row stride ldb, op(B) [K,N] */
    int ldb, K, N, transB;
    attend_real *buf;     /* [at_pack_floats(K, N)] */
    at_packed pk;
    uint64_t gen;         /* pack_gen it was packed at */
} at_pack_entry;

struct attend_model {
    attend_model_config cfg;
    attend_score_config score; /* Dq = Hd, Dk = E */
    const at_decoder_ops *dec; /* at_decoders[cfg.decoder] */
    int G, E, Din, F, P, Tcap;
    int Ld;                    /* decoder layers (cfg.dec_layers, 1 for 0) */
    size_t sc_saved_stride;    /* attend_scores_saved_size at one step of max_batch rows (0: none) */
    int enc_tab_cap, dec_tab_cap; /* the tables are allocated (vocabulary <= the rows they replace) */
    int enc_tab_on, dec_tab_on;   /* the last encode / forward used them */
    uint64_t enc_tab_gen, dec_tab_gen; /* pack_gen + 1 when a decode made the table: later decodes reuse it
                                          (inference; 0 = not made for these parameters) */
    int ctx_proj_on;              /* BAHDANAU: the last encode filled its ctx_proj (inference, few rows) */
    int infer;                    /* greedy / beam running: what only backward reads (encoder
                                     gates, scores' saved values, decoder gates, input
                                     projections) reuses step 0's slot instead of one per step */
    attend_real *params, *grads, *act_arena;
    size_t nparams, nacts;
    at_tensor_desc desc[AT_MAX_TENSORS];
    int ntensors;
    at_model_tensors p, g;
    at_acts acts;
    uint8_t *valid;     /* [N,S] source validity */
    uint8_t *active;    /* [T,N] decoder step counts */
    /* the last teacher-forced forward, for backward */
    int fwd_ready, fwd_N, fwd_S, fwd_T, fwd_count;
    int32_t *ints;      /* one arena for the id copies below */
    int32_t *fwd_src, *fwd_src_len, *fwd_tgt_in, *fwd_tgt_out, *fwd_tgt_len; /* [N,S] [N] [T,N] (transposed: one step is contiguous) [N,T] [N] */
    int pointer_exclude;      /* POINTER: a chosen position is masked out of later steps
                                 (attend_model_set_pointer_exclude; config JSON "pointer_exclude") */
    double cov_loss;          /* λ of the coverage loss in forward/backward (attend_model_set_coverage_loss;
                                 the trainer's steps set its coverage_loss option); 0 = off */
    const int32_t *step_y_in; /* [N] the last at_model_step's previous tokens (positions) */
    int step_S;               /* and its source length */
    at_weight_hook_fn weight_hook; /* NULL except while intervene.c runs a decoder */
    void *weight_hook_user;
    /* scheduled sampling during one training forward (sampling.c; set by the
     * trainer around attend_model_forward, else 0 = off) */
    double ss_prob;     /* this step's probability p_k of feeding the model's own prediction */
    uint64_t ss_key;    /* at_ss_key(seed, step) */
    long ss_row0;       /* the batch's first row within the step's whole batch (a shard's offset) */
    int32_t *score_ids; /* [max_src_len + 1 + 3*Tcap + 1] attend_model_score's one-row batch */
    /* training switches of the teacher-forced forward (attend_model_set_dropout,
     * attend_model_set_label_smoothing; the trainer sets them around its own
     * forward only), and the copies the last forward used, which its backward
     * reuses: dropout p, the masks' key and the batch's first row in the whole
     * batch (a gradient shard's offset; dropout.h), label smoothing ε */
    double drop_p, ls;
    uint64_t drop_key;
    long drop_row0;
    double fwd_drop_p, fwd_ls;
    uint64_t fwd_drop_key;
    long fwd_drop_row0;
    int dropping; /* inside attend_model_forward with dropout: the encoder drops (greedy never) */
    /* MONOTONIC (monotonic.c): attend_model_forward sets mono_expected (the
     * expected alignment, for training) unless mono_scoring (forced scoring
     * runs the hard process, as decoding does); every other step is hard */
    int mono_expected, mono_scoring;
    /* at_mono_train_noise: the next attend_model_forward adds unit Gaussian
     * noise keyed by mono_noise_key to the energies (row n draws as row
     * mono_noise_row0 + n of the whole batch), then switches it off */
    int mono_noise_on;
    uint64_t mono_noise_key;
    long mono_noise_row0;
    int32_t *mono_pos;  /* [2*max_batch] the hard process's position per row, then scratch */
    /* Quantized weights (src/io/quantize.c): wdtype is ATTEND_DTYPE_F32 (no
     * copies), I8 or F16; then every weight matrix but the embeddings has a
     * quantized copy in qmem, described by qw[i] (i the desc index; dtype F32
     * for a tensor kept in float), and params holds the dequantized values */
    attend_dtype wdtype;
    void *qmem;
    size_t qbytes;
    at_qweight qw[AT_MAX_TENSORS];
    /* beam.c's bookkeeping (hypothesis tokens and alignments): allocated by the
     * first beam search and grown only when a later one needs more, so decoding
     * allocates nothing after warm-up; freed with the model */
    void *beam_mem;
    size_t beam_bytes;
    /* Packed copies of weight matrices (linear.c, at_model_pack): views of the
     * parameter arena in the own GEMM's panel layout, made on their first
     * blocked product and packed again when pack_gen has moved on (every write
     * of the parameters bumps it: at_model_params_changed) */
    at_pack_entry packs[AT_MAX_PACKS];
    int npacks;
    uint64_t pack_gen;
    /* guided alignment (guide.c): λ (attend_model_set_guided_alignment; 0 = off),
     * the last forward's alignment mask and its cross-entropy */
    double guide;
    uint8_t *guide_ref; /* [Tcap,max_batch,max_src_len] capacity; the forward's [T,N,S]: 1 = aligned
                           (allocated when λ is first set > 0) */
    int guide_on;       /* the last forward added the term (λ > 0 and the batch had alignments) */
    double guide_sum;   /* its Σ over steps of −Σ_s a_ts log(α_ts + ε), before λ and the 1/count */
    /* copy (copy.c): in the id arena; NULL without it */
    int32_t *copy_map;  /* [Vs] source id -> target id, or -1 (attend_model_set_copy_map) */
    int32_t *copy_ext;  /* [N,S] extended id of each source position */
    int32_t *copy_best; /* [N,T] the forward's argmax over the extended distribution */
    attend_real copy_inv; /* backward's 1/count */
};

/* The score parameters and gradients of the attention tensors in w. */
static inline attend_score_params at_model_score_params(const at_model_tensors *w) {
    attend_score_params sp = {w->attn_W, w->attn_Wq, w->attn_Wk, w->attn_b, w->attn_v};
    return sp;
}
static inline attend_score_grads at_model_score_grads(const at_model_tensors *w) {
    attend_score_grads sg = {w->attn_W, w->attn_Wq, w->attn_Wk, w->attn_b, w->attn_v};
    return sg;
}

/* ---------------------------------------------------------- model.c */

/* Runs the encoder over src [N,S] / src_len [N] (validated by the caller),
 * filling enc_out, fin_cat, states[0] (the bridge), cstates[0] = 0, kp and
 * the validity mask, then the decoder kind's per-source preparation. */
void at_model_encode(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S);

/* One decoder step t (0-based) for N rows: y_in [N] are the previous tokens
 * (POINTER: previous positions, -1 = start; src is needed to look them up),
 * active [N] or NULL. Reads states[t], writes states[t+1], ctx[t], weights[t]
 * and the output features into feat_row (row n at feat_row + n*feat_stride).
 * emb_done != 0 means xg_emb[t] is already computed (teacher forcing). */
void at_model_step(attend_model *m, int t, int N, int S, const int32_t *y_in, const int32_t *src,
                   const uint8_t *active, attend_real *feat_row, size_t feat_stride, int emb_done);

/* logits [N,V] of one step from features feat [N,F] into acts.step_logits. */
void at_model_step_logits(attend_model *m, int N, const attend_real *feat);

/* Inference mode on / off (greedy, beam): what only backward reads reuses
 * step 0's slot; at_model_end_infer also drops the forward's readiness. */
void at_model_begin_infer(attend_model *m);
void at_model_end_infer(attend_model *m);

/* Beam search: copies row 0 of an encoded one-row batch to rows 1..K-1
 * (encoder outputs, keys, final states, s_0, the mask, the decoder kind's
 * per-source buffers) and zeroes the K rows' initial cell and feedback states. */
/* After at_model_step(t) of N rows with features in acts.step_feat: the step's
 * output rows [N,*W]: log-probabilities (*logp = 1; POINTER: over the S source
 * positions, −inf where masked) or logits (*logp = 0; [N,V] in step_logits). */
const attend_real *at_model_step_dist(attend_model *m, int t, int N, int S, int *W, int *logp);
void at_model_replicate(attend_model *m, int K, int S);

/* Beam search: after step t ran `live` rows, row j of step t+1's decoder
 * state becomes row parent[j] (j < n), laid out for n rows at step t+1. */
void at_model_reorder(attend_model *m, int t, const int *parent, int n, int live);

/* Registers (fn != NULL) or removes the hook on every step's attention weights. */
void at_model_set_weight_hook(attend_model *m, at_weight_hook_fn fn, void *user);

/* Whether the decoder kind attends (has attention weights per step) and
 * whether it points (outputs are source positions, no target vocabulary). */
int at_model_attentive(const attend_model *m);
int at_model_points(const attend_model *m);

/* ------------------------------------------------------- coverage.c */

/* Whether this pass keeps the coverage vectors (acts.cov): cfg.coverage, or
 * a coverage loss outside inference. */
int at_cov_on(const attend_model *m);
/* Step t's scores [N,S] with the coverage input (cfg.coverage): saved as the
 * additive score's (the tanh values only outside inference); cov_0 = 0. */
void at_cov_scores_forward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *scores,
                           attend_real *saved);
/* Its backward from acts.dscores: dq [N,Hd] +=, dkp, w_cov's gradient, and
 * ∂L/∂cov_t into the running acts.dcov. */
void at_cov_scores_backward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *dq,
                            attend_real *saved);
/* cov_{t+1} = cov_t + α_t (after the weight hook) when at_cov_on. */
void at_cov_step(attend_model *m, int t, int N, int S);
/* Beam search: rows of cov_{t+1} follow their hypotheses (at_model_reorder's contract). */
void at_cov_reorder(attend_model *m, int t, const int *parent, int n, int live);
/* λ Σ min(α_tj, cov_tj) over the counted steps (m->active) of the last
 * forward's T steps; 0 without a coverage loss. */
double at_cov_loss(const attend_model *m, int N, int S, int T);
/* Backward of step t's weights: acts.dweights += the running ∂L/∂cov of the
 * later steps (zeroed at the last step) and the loss's ∂/∂α_t; the loss's
 * ∂/∂cov_t joins acts.dcov. Call after the context's backward, before the
 * softmax's. */
void at_cov_weights_backward(attend_model *m, int t, int N, int S);
/* ---------------------------------------------------------- guide.c */

/* Guided alignment (Chen et al. 2016; Marian's "ce" cost). Before the steps
 * of a teacher-forced forward: checks b->align against the batch (λ > 0 and
 * b->align != NULL) and keeps it in guide_ref; guide_on says whether it did. */
attend_status at_guide_begin(attend_model *m, const attend_batch *b, attend_error *err);
/* After the steps of a batch of N rows, S positions, T steps: the term's sum
 * into guide_sum, returned (0 when off). */
double at_guide_loss(attend_model *m, int N, int S, int T);
/* In step t's attention backward: dweights [N,S] += λ/count · d(term)/dα. */
void at_guide_backward(const attend_model *m, int t, int N, int S, attend_real *dweights);

/* ------------------------------------------------------- sampling.c */

/* Scheduled sampling (Bengio et al. 2015): the probability at trainer step
 * `step` (0-based): p * min(1, step / ramp) (ramp 0: p from the start). */
double at_ss_prob(double p, long ramp, long step);
/* The key of one trainer step: a hash of (seed, step). */
uint64_t at_ss_key(uint64_t seed, long step);
/* Teacher-forced forward, before step t >= 1 of N rows (T steps): rows whose
 * hash of (ss_key, ss_row0 + n, t) falls below ss_prob and that are still
 * active take as input fwd_tgt_in[t][n] the argmax of step t-1's logits
 * (features feat, row n at + n*T*F + (t-1)*F) instead of the reference. */
void at_ss_feed(attend_model *m, int t, int N, int T);
/* ------------------------------------------------------ monotonic.c */

/* The initial stopping bias r (Raffel et al. 2017 suggest a negative one so
 * that the decoder starts by scanning past most positions). */
#define AT_MONO_R_INIT (-4.0)

/* Step t's weights [N,S] from its energies scores[t]: the expected alignment
 * from weights[t−1] (m->mono_expected), else the hard process from
 * m->mono_pos (0 at t = 0). */
void at_mono_weights_forward(attend_model *m, int t, int N, int S);
/* Its backward from acts.dweights (d α_t from the context): dscores +=,
 * g.attn_r +=, and acts.mono_dcarry (d α_{t−1}, added to step t−1's). */
void at_mono_weights_backward(attend_model *m, int t, int N, int S);
/* Beam search: the hard positions of n rows follow parent [n]. */
void at_mono_reorder(attend_model *m, const int *parent, int n);
/* The trainer, before a training step's forward (nothing unless monotonic):
 * the noise of step `step` of a run seeded `seed`, the batch's first row in
 * the whole batch row0 (a gradient shard's offset), so every shard and every
 * resumed run draws the same values. */
void at_mono_train_noise(attend_model *m, uint64_t seed, long step, long row0);

/* -------------------------------------------------------- encoder.c */

/* The encoder forward: source embeddings, the bidirectional RNN stack,
 * fin_cat, the bridge s_0, cstates[0] = htilde[0] = 0, the projected keys. */
void at_encoder_forward(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S);
/* The encoder backward from ds0 [N,Hd] (d s_0) and acts.dfin [N,E], dkp,
 * denc: bridge, keys, the RNN stack top layer down, the source embeddings. */
void at_encoder_backward(attend_model *m, const attend_real *ds0, int N, int S);
/* gemb [V,D] += rows drows [R,D] at ids [R]; PAD and negative ids get nothing. */
void at_embedding_backward(attend_real *gemb, const attend_real *drows, const int32_t *ids, size_t R, int D);
/* Backward of a table lookup xg[r] = tab[ids[r]], tab [V,GH] = emb [V,D] Wᵀ + b
 * (W: the first D columns of a weight with row stride ldw): from dxg [R,GH]
 * accumulates gW, gb [GH] and gemb [V,D] (PAD's row excluded); with len, rows
 * are (n, j) of S positions and j >= len[n] reads PAD. */
void at_table_backward(attend_model *m, attend_real *gemb, attend_real *gW, int ldw, attend_real *gb,
                       const attend_real *dxg, const int32_t *ids, const int32_t *len, int S, size_t R, int V,
                       int GH, const attend_real *emb, const attend_real *W);

/* Validates src [N,S] ids and lengths against the configuration. */
attend_status at_model_check_source(const attend_model *m, const int32_t *src,
                                    const int32_t *src_len, int N, int S, const char *who,
                                    attend_error *err);

/* Writes a model file with the given "attend.format" plus extra tensors and
 * metadata (checkpoints). */
attend_status at_model_write(const attend_model *m, const char *path, const attend_vocab *src_vocab,
                             const attend_vocab *tgt_vocab, attend_tokenizer tok, const char *format,
                             const attend_st_entry *extra, int n_extra, const attend_st_meta *extra_meta,
                             int n_extra_meta, attend_error *err);
/* Copies the tensors of a model file into m, checking names, dtypes, shapes
 * and finiteness; path names the file in messages. */
attend_status at_model_read_tensors(attend_model *m, const attend_st_file *f, const char *path, attend_error *err);

/* -------------------------- quantized weights (io/quantize.c; products: linear.c) */

/* The tensor is stored quantized in a quantized model: a 2-D weight matrix
 * other than the embedding tables. */
int at_model_quantizable(const at_tensor_desc *td);

/* The quantized copy of the matrix holding w (a pointer into m->params), or
 * NULL (a float model, or a tensor kept in float). */
const at_qweight *at_model_qweight(const attend_model *m, const attend_real *w);

/* Y [N,out] = beta Y + X [N,in] Wᵀ for W [out,in] at row stride ldw inside
 * m->params: at_linear with W's quantized copy, or (float products of two
 * rows or more) its packed copy. */
void at_model_linear(const attend_model *m, int N, int out, int in, const attend_real *X, int ldx,
                     const attend_real *W, int ldw, attend_real beta, attend_real *Y, int ldy);

/* The backward of at_model_linear's input: dX [N,in] = beta dX + dY [N,out] W,
 * through W's packed copy (op(B) = W) for two rows or more. */
void at_model_linear_dx(const attend_model *m, int N, int out, int in, const attend_real *dY, int lddy,
                        const attend_real *W, int ldw, attend_real beta, attend_real *dX, int lddx);

/* A packed copy of op(B) for at_gemm_w: transB 1 packs Wᵀ of W [N,K] (the
 * forward's X Wᵀ), 0 packs W [K,N] itself (the backward's dY W); B at row
 * stride ldb inside m->params. Made on first use (one allocation, kept until
 * attend_model_free) and packed again when the parameters changed since (m's
 * pack_gen). NULL when OpenBLAS runs the products, when AT_MAX_PACKS views
 * are packed already, or when the allocation fails: the product then packs
 * as it goes (the same bits). The copies are a cache of the parameters, so
 * a const model refreshes them; like any decoding call, not thread-safe on
 * one model. */
const at_packed *at_model_pack(const attend_model *m, int transB, const attend_real *B, int ldb, int K, int N);

/* The cell's quantized copies (q_ih, q_hh) and the packed copies its
 * products read (pk_*): for the input projection over rows_ih rows (0: the
 * caller projects the input itself) and the hidden one over rows_hh rows;
 * the backward's only when training. */
void at_model_cell_copies(const attend_model *m, at_cell *cell, int rows_ih, int rows_hh);

/* The packed copies of the additive score's Wq for a step of `rows` query
 * rows (none for other scores or one row). */
at_score_packs at_model_score_packs(const attend_model *m, int rows);

/* Every write of the parameter arena ends here: the packed copies are stale
 * (called by create, load, clone, quantize, resume, each optimizer step, each
 * attend_model_forward, and the accessors that hand out writable pointers). */
void at_model_params_changed(attend_model *m);

/* Frees the packed copies (attend_model_free). */
void at_model_packs_free(attend_model *m);

/* The projected keys kp [N,S,P] of k [N,S,E] (attend_keys_forward with the
 * model's weights), from the quantized copy of W / Wk when there is one. */
void at_model_keys(const attend_model *m, attend_real *kp, const attend_real *k, int N, int S);

/* The storage of a model file's weight matrices: I8 or F16 when the first
 * weight matrix present is stored so, else F32 (src/io/quantize.c). */
attend_dtype at_model_file_wdtype(const attend_model *m, const attend_st_file *f);

/* Reads a quantized model file's weights into m (attend_model_load; float
 * files go to at_model_read_tensors): matrices stored I8 (with
 * "<name>.scale") or F16 fill the quantized copies and the dequantized arena,
 * every value checked. */
attend_status at_model_read_weights(attend_model *m, const attend_st_file *f, const char *path, attend_error *err);

/* Gives dst (same configuration, weights already copied) src's quantized copies. */
attend_status at_model_quant_copy(attend_model *dst, const attend_model *src, attend_error *err);

#endif
