/*
 * state.h — the model's state, the lowest room of src/seq2seq: the model
 * struct, its tensors and activation buffers, the running call's options,
 * the layout walkers, and the rows a beam search replicates and reorders.
 * Every other file of the model (the encoder and its kinds, the decoder kinds,
 * the extensions, model.c, decode.c, beam.c, train.c) reads it; it calls and
 * includes nothing of theirs (state.c defines its few functions). Not
 * installed.
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
#ifndef ATTEND_SEQ2SEQ_STATE_H
#define ATTEND_SEQ2SEQ_STATE_H

#include <stdio.h>

#include "../internal.h"
#include "../core/quant.h"
#include "../core/rnn.h"
#include "../core/attention.h"
#include "../core/options.h"

#define AT_MAX_LAYERS 8
#define AT_MAX_TENSORS (8 + 20 * AT_MAX_LAYERS + 16) /* per layer: encoder 8 (RNN) or 12 (transformer), decoder 4 */
#define AT_NAME_MAX 48
#define AT_DEC_OWN 6  /* tensors and buffers a decoder kind owns (decoders/<kind>.c) */
#define AT_EXT_MAX 12 /* registered extensions (extension.c) */
#define AT_ROWS_MAX 40 /* row buffers a beam search replicates or reorders */

/* How a tensor starts (attend_model_create; PyTorch's defaults): */
typedef enum {
    AT_INIT_LINEAR = 0, /* U(±1/sqrt(fan_in)): a 2-D weight's second dimension, a bias its weight's (the tensor before) */
    AT_INIT_UNIFORM,    /* U(±v) */
    AT_INIT_EMBEDDING,  /* N(0,1), the PAD row zero (nn.Embedding(padding_idx=0)) */
    AT_INIT_CONST       /* every value v (no draw) */
} at_init_kind;

typedef struct {
    char name[AT_NAME_MAX];
    int ndim;
    int64_t shape[2];
    size_t numel;
    size_t offset;     /* into the parameter (and gradient) arena */
    at_init_kind init; /* and its value v */
    double init_v;
} at_tensor_desc;

/* Pointers to the tensors every model has inside one arena (parameters or
 * gradients); the tensors of an encoder kind, a decoder kind or an extension
 * beyond these live in its own state (see at_param_layout.which). */
typedef struct {
    attend_real *src_emb;                      /* [Vs,D] */
    attend_real *tgt_emb;                      /* [Vt,D]   (decoders with a target vocabulary) */
    attend_real *enc_wih[AT_MAX_LAYERS][2];    /* RNN encoder: [G*He, D or E] per layer, direction */
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
} at_model_tensors;

/* Activations, sized by the capacities (N = max_batch, S = max_src_len,
 * T = Tcap decoder steps), used at the batch's actual N, S, T. The encoder
 * kind, the decoder kind and each extension keep their own buffers in their
 * own state (laid out in the same arena). */
typedef struct {
    attend_real *emb_src;                        /* [N,S,D] the encoder's input */
    attend_real *enc_top;                        /* [N,S,E] the encoder's output: keys and values (the encoder
                                                    kind's buffer) */
    attend_real *fin_cat;                        /* [N,E] the encoder's summary, the bridge's input (RNN: the top
                                                    layer's final states) */
    attend_real *kp;                             /* [N,S,P] projected keys */
    attend_real *states;                         /* [T+1,N,Hd] s_0 .. s_T (the top decoder layer's) */
    attend_real *cstates;                        /* [T+1,N,Hd] LSTM cell states */
    /* a stacked decoder (dec_layers = L > 1): layers 0 .. L-2 below the top
     * one (decoders/stack.c); NULL for one layer */
    attend_real *lstates[AT_MAX_LAYERS];         /* [T+1,N,Hd] per lower layer */
    attend_real *lcstates[AT_MAX_LAYERS];        /* [T+1,N,Hd] LSTM cell states */
    attend_real *lsaved[AT_MAX_LAYERS];          /* [T,N,cell saved width] */
    attend_real *lds[AT_MAX_LAYERS];             /* [N,Hd] backward: d s^l_{t+1} running */
    attend_real *ldcs[AT_MAX_LAYERS];            /* [N,Hd] d c^l_{t+1} running */
    attend_real *lds_prev, *ldcs_prev;           /* [N,Hd] one layer's d s^l_t, d c^l_t */
    attend_real *xg_up, *dxg_up;                 /* [N,G*Hd] an upper layer's input projection, its gradient */
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
    attend_real *logp;                           /* [N,T,V] (decoders without an output layer: unused) */
    attend_real *dfeat;                          /* [N,T,F] */
    attend_real *dxg_all;                        /* [T,N,G*Hd] */
    attend_real *ds, *ds_prev;                   /* [N,Hd] */
    attend_real *dcs, *dcs_prev;                 /* [N,Hd] */
    attend_real *dctx;                           /* [N,E] */
    attend_real *dweights;                       /* [N,S] */
    attend_real *dscores;                        /* [N,S] */
    attend_real *dkp;                            /* [N,S,P] */
    attend_real *denc;                           /* [N,S,E] d enc_top */
    attend_real *dfin;                           /* [N,E] d fin_cat */
    attend_real *demb;                           /* [max(T*N, N*S), D] */
    attend_real *dz;                             /* [N,Hd] */
    attend_real *step_logits;                    /* [N,V] decoding */
    /* Embedding-projection table: with a small vocabulary, x W_ihᵀ + b_ih of
     * an embedding row depends only on the token, so the decoder's input
     * projections are looked up per token instead of multiplied per position */
    attend_real *dec_tab;                        /* [Vt,G*Hd] tgt_emb W_ih[:, :D]ᵀ + b_ih */
    attend_real *dtab;                           /* [Vt*G*Hd] its gradient */
    attend_real *dec_own[AT_DEC_OWN];            /* the decoder kind's own buffers */
    /* inference (greedy, beam, interventions) */
    attend_real *step_feat;                      /* [N,F] one step's output features */
    attend_real *row_tmp;                        /* [N,Hd] scratch */
} at_acts;

/* A hook on every step's attention weights w [N,S] (valid [N,S]), called
 * after the normaliser and before the context (intervene.c passes one in its
 * run); user is the caller's. */
typedef void (*at_weight_hook_fn)(void *user, attend_real *w, const uint8_t *valid, int N, int S);
/* A hook on an encoder's self-attention weights: layer l's (0-based) P
 * [N,H,S,S] (query rows, key columns; valid [N,S] the key padding), called
 * after the softmax and before the weights read the values (the transformer
 * encoder calls it; intervene.c passes one in its run). */
typedef void (*at_self_hook_fn)(void *user, int layer, attend_real *P, const uint8_t *valid, int N, int H, int S);

/*
 * The running call: what the public entry point that runs the model was
 * asked to do (its per-call options), set by that entry point from its own
 * arguments when it starts; nothing else writes it, nothing restores it. A
 * teacher-forced forward's run stays for its backward (fwd_ready).
 */
typedef struct {
    attend_forward_options o; /* a teacher-forced forward's training switches (all zero otherwise) */
    int infer;                /* decoding (greedy, beam, interventions): what only backward reads reuses
                                 step 0's slot instead of one per step */
    int scoring;              /* forced scoring: a teacher-forced pass making decoding's hard choices */
    int no_backward;          /* set by an extension in the forward: nothing to differentiate */
    at_weight_hook_fn weight_hook; /* NULL, or an edit of every step's attention weights; the weights it
                                      leaves are constants to the backward (no gradient to the scores) */
    void *weight_hook_user;
    at_self_hook_fn self_hook; /* NULL, or an edit of the encoder's self-attention weights (analysis only:
                                  nothing differentiates through it) */
    void *self_hook_user;
    int align_head;           /* decoding: 0, or the one attention head (1-based) whose weights a
                                 multi-head decoder writes to acts.weights (attend_decode_options) */
    int input_grad;           /* a forward whose backward must leave the gradient of every source position's
                                 embedding in acts.demb [N,S,D] (the trials' gradient x input): the
                                 encoder's input goes through no per-token table */
} at_run;

/*
 * Rows a beam search handles without knowing whose they are (CTranslate2's
 * gather_state): the decoder, a decoder kind or an extension declares a
 * buffer while it lays out its activations, and at_rows_replicate /
 * at_rows_reorder (state.c) copy and gather every declared buffer. A row is
 * `unit` bytes, times the call's source length S when per_source.
 *   AT_ROWS_SOURCE  [rows, row] per source row: row 0 copied to rows 1..K-1
 *                   when a beam starts (encoder outputs, keys, masks)
 *   AT_ROWS_STATE   [rows, row] per hypothesis: replicated, then gathered
 *                   by parent after every step
 *   AT_ROWS_STEPS   [T+1][rows][row] per hypothesis and step (the step's
 *                   slot starts at step * rows * row): step 0 replicated,
 *                   step t+1's rows gathered after step t, from the slot
 *                   of `live` rows to that of n rows
 */
enum { AT_ROWS_SOURCE = 0, AT_ROWS_STATE = 1, AT_ROWS_STEPS = 2 };
typedef struct {
    unsigned char *base;
    size_t unit;
    int per_source;
    int kind;
} at_rows;

/* One packed view of a weight matrix (linear.c). */
#define AT_MAX_PACKS 96
typedef struct {
    const attend_real *B; /* the view: B at row stride ldb, op(B) [K,N] */
    int ldb, K, N, transB;
    attend_real *buf;     /* [at_pack_floats(K, N)] */
    at_packed pk;
    uint64_t gen;         /* pack_gen it was packed at */
} at_pack_entry;

typedef struct at_decoder_ops at_decoder_ops; /* decoders/decoder.h */
typedef struct at_encoder_ops at_encoder_ops; /* encoders/encoder_kind.h */

struct attend_model {
    attend_model_config cfg;
    attend_score_config score; /* Dq = Hd, Dk = E */
    const at_encoder_ops *enc; /* the encoder kind */
    const at_decoder_ops *dec; /* at_decoders[cfg.decoder] */
    int G, E, Din, F, P, Tcap;
    int Ld;                    /* decoder layers (cfg.dec_layers, 1 for 0) */
    int V;                     /* classes of the output layer (Vt; 1 for a decoder without one) */
    size_t sc_saved_stride;    /* attend_scores_saved_size at one step of max_batch rows (0: none) */
    int dec_tab_cap;           /* the decoder-input table is allocated (Vt <= the rows it replaces) */
    int dec_tab_on;            /* the last encode / forward used it */
    uint64_t dec_tab_gen;      /* pack_gen + 1 when a decode made the table: later decodes reuse it
                                  (inference; 0 = not made for these parameters) */
    at_run run;                /* the running call */
    attend_forward_options defaults; /* attend_model_forward's options (the deprecated setters) */
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
    int32_t *ints;      /* one arena for the ids below and the kinds' and extensions' */
    size_t nints;
    int32_t *fwd_src, *fwd_src_len, *fwd_tgt_in, *fwd_tgt_out, *fwd_tgt_len; /* [N,S] [N] [T,N] (transposed: one step is contiguous) [N,T] [N] */
    int32_t *score_ids; /* [max_src_len + 1 + 3*Tcap + 1] attend_model_score's one-row batch */
    const int32_t *step_y_in; /* [N] the last at_model_step's previous tokens (positions) */
    int step_S;               /* and its source length */
    /* Quantized weights (src/io/quantize.c): wdtype is ATTEND_DTYPE_F32 (no
     * copies), I8 or F16; then every weight matrix but the embeddings has a
     * quantized copy in qmem, described by qw[i] (i the desc index; dtype F32
     * for a tensor kept in float), and params holds the dequantized values */
    attend_dtype wdtype;
    void *qmem;
    size_t qbytes;
    at_qweight qw[AT_MAX_TENSORS];
    /* decoding's bookkeeping (decode.c, beam.c: hypotheses, their tokens and
     * alignments, an ensemble's mean distribution): allocated by the first
     * search and grown only when a later one needs more, so decoding
     * allocates nothing after warm-up; freed with the model */
    void *scratch;
    size_t scratch_bytes;
    /* Packed copies of weight matrices (linear.c, at_model_pack): views of the
     * parameter arena in the own GEMM's panel layout, made on their first
     * blocked product and packed again when pack_gen has moved on (every write
     * of the parameters bumps it: at_model_params_changed) */
    at_pack_entry packs[AT_MAX_PACKS];
    int npacks;
    uint64_t pack_gen;
    /* the rows a beam search replicates and reorders, and the scratch it gathers through */
    at_rows rows[AT_ROWS_MAX];
    int nrows;
    unsigned char *rows_tmp; /* [max_batch * the widest row] */
    /* the kinds' and extensions' own state (their state_size bytes each, zeroed at create) */
    void *enc_state, *dec_state;
    void *ext_state[AT_EXT_MAX];
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

/* ------------------------------------------------------------- layout */

/* Walks the parameter tensors in file order: counts values, records names,
 * shapes and initialisations (record), points slots into base (base != NULL).
 * which: 0 while pointing into the parameters, 1 into the gradients, so a
 * file that keeps [2] pointers per tensor (params, grads) picks its slot. */
typedef struct {
    attend_model *m;
    attend_real *base;
    at_model_tensors *v; /* NULL while counting */
    int which;
    int record;
    size_t off;
    int count;
} at_param_layout;

/* Appends tensor `name` [d0] (d1 == 0) or [d0,d1], initialised as a Linear
 * layer's (AT_INIT_LINEAR); *slot (slot != NULL) points at it in L->base. */
void at_param_add(at_param_layout *L, attend_real **slot, const char *name, int d0, int d1);
/* The same with another initialisation. */
void at_param_add_init(at_param_layout *L, attend_real **slot, const char *name, int d0, int d1, at_init_kind init,
                       double v);
/* The slot of a tensor a file keeps as `attend_real *t[2]` (params, grads): &t[L->which], NULL while counting. */
static inline attend_real **at_param_slot(const at_param_layout *L, attend_real **t2) {
    return L->base ? &t2[L->which] : NULL;
}

/* Walks the activation buffers: at_act_take returns the next count values of
 * base, at_act_ints the next count int32 of ibase (NULL while counting); a
 * size overflow clears ok. m is the model being laid out. */
typedef struct {
    attend_model *m;
    attend_real *base;
    size_t off;
    int32_t *ibase;
    size_t ioff;
    int ok;
} at_act_layout;

attend_real *at_act_take(at_act_layout *L, size_t count);
int32_t *at_act_ints(at_act_layout *L, size_t count);
/* Declares rows of kind AT_ROWS_* at base for beam search (unit bytes, times
 * the source length when per_source), when base is placed (not while counting). */
void at_act_rows(at_act_layout *L, void *base, size_t unit, int per_source, int kind);

/* -------------------------------------------------------------- rows */

/* Beam search's start over a source of S positions: every declared buffer's row 0 to rows 1..K-1. */
void at_rows_replicate(attend_model *m, int K, int S);
/* After step t ran `live` rows: row j of the per-hypothesis buffers becomes
 * row parent[j] (j < n), laid out for n rows. */
void at_rows_reorder(attend_model *m, int t, const int *parent, int n, int live, int S);
/* Bytes of rows_tmp: the widest declared row at max_src_len, times max_batch. */
size_t at_rows_tmp_bytes(const attend_model *m);
/* dst [n,w] = rows [parent[j]] of src (rows of w bytes), through tmp (src and dst may overlap). */
void at_gather_rows(void *dst, const void *src, void *tmp, const int *parent, int n, size_t w);

#endif
