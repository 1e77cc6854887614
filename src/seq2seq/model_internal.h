/*
 * model_internal.h — the model's private state, shared by model.c (forward,
 * backward, greedy), beam.c and model_io.c. Not installed.
 */
#ifndef ATTEND_MODEL_INTERNAL_H
#define ATTEND_MODEL_INTERNAL_H

#include <stdio.h>

#include "../internal.h"
#include "../core/quant.h"
#include "../core/rnn.h"

#define AT_MAX_LAYERS 8
#define AT_MAX_TENSORS (8 + 8 * AT_MAX_LAYERS + 16)
#define AT_NAME_MAX 48

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
    attend_real *tgt_emb;                      /* [Vt,D]   (not POINTER) */
    attend_real *enc_wih[AT_MAX_LAYERS][2];    /* [G*H, D or E] per layer, direction */
    attend_real *enc_whh[AT_MAX_LAYERS][2];    /* [G*H, H] */
    attend_real *enc_bih[AT_MAX_LAYERS][2];    /* [G*H] */
    attend_real *enc_bhh[AT_MAX_LAYERS][2];    /* [G*H] */
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
    attend_real *comb_w;                       /* LUONG [Hd, E+Hd] */
    attend_real *out_w;                        /* [Vt,F]   (not POINTER) */
    attend_real *out_b;                        /* [Vt] */
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
    attend_real *enc_hfin[AT_MAX_LAYERS][2];     /* [N,H] */
    attend_real *enc_cfin[AT_MAX_LAYERS][2];     /* [N,H] (LSTM) */
    attend_real *rnn_scratch;                    /* at_rnn_layer_scratch_size */
    attend_real *ctx_proj;                       /* [min(N, AT_CTX_PROJ_ROWS),S,G*Hd] Bahdanau inference:
                                                    enc_out W_ih[:, D:]ᵀ per source position */
    attend_real *rnn_scratch2;                   /* the same at min(N, AT_ENC_PAIR_ROWS) rows, for the
                                                    backward direction on a second thread (OpenMP
                                                    builds only; else NULL) */
    attend_real *fin_cat;                        /* [N,E] top layer's final states */
    attend_real *kp;                             /* [N,S,P] projected keys */
    attend_real *states;                         /* [T+1,N,Hd] s_0 .. s_T */
    attend_real *cstates;                        /* [T+1,N,Hd] LSTM cell states */
    attend_real *htilde;                         /* [T+1,N,Hd] LUONG h̃_0 .. h̃_T */
    attend_real *cat;                            /* [T,N,E+Hd] LUONG [c_t; s_t] */
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
    attend_real *dhf, *dhb;                      /* [N,H] */
    attend_real *demb;                           /* [max(T*N, N*S), D] */
    attend_real *dz;                             /* [N,Hd] */
    attend_real *step_logits;                    /* [N,V] decoding */
    /* Embedding-projection tables: with a small vocabulary, x W_ihᵀ + b_ih of
     * an embedding row depends only on the token, so the first layer's input
     * projections are looked up per token instead of multiplied per position */
    attend_real *enc_tab;                        /* [2,Vs,G*H] layer 0, per direction */
    attend_real *dec_tab;                        /* [Vt,G*Hd] tgt_emb W_ih[:, :D]ᵀ + b_ih */
    attend_real *dtab;                           /* [max(Vs*G*H, Vt*G*Hd)] gradient of one table */
} at_acts;

/* An edit of every step's attention weights (intervene.c), applied after the
 * masked softmax and before the context; perm [S] for PERMUTE. */
typedef struct {
    attend_weight_edit edit;
    const int32_t *perm;
} at_weight_hook;

struct attend_model {
    attend_model_config cfg;
    attend_score_config score; /* Dq = Hd, Dk = E */
    int G, E, Din, F, P, Tcap;
    int enc_tab_cap, dec_tab_cap; /* the tables are allocated (vocabulary <= the rows they replace) */
    int enc_tab_on, dec_tab_on;   /* the last encode / forward used them */
    int ctx_proj_on;              /* the last encode filled acts.ctx_proj (inference, few rows) */
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
    const at_weight_hook *hook; /* NULL except while intervene.c runs a decoder */
    int32_t *score_ids; /* [max_src_len + 1 + 3*Tcap + 1] attend_model_score's one-row batch */
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
};

/* Runs the encoder over src [N,S] / src_len [N] (validated by the caller),
 * filling enc_out, fin_cat, states[0] (the bridge), cstates[0] = 0, kp and
 * the validity mask. */
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

/* ------------------------------------------------- quantized weights (quantize.c) */

/* The tensor is stored quantized in a quantized model: a 2-D weight matrix
 * other than the embedding tables. */
int at_model_quantizable(const at_tensor_desc *td);

/* The quantized copy of the matrix holding w (a pointer into m->params), or
 * NULL (a float model, or a tensor kept in float). */
const at_qweight *at_model_qweight(const attend_model *m, const attend_real *w);

/* Y [N,out] = beta Y + X [N,in] Wᵀ for W [out,in] at row stride ldw inside
 * m->params: at_linear with W's quantized copy (at_gemm on a float model). */
void at_model_linear(const attend_model *m, int N, int out, int in, const attend_real *X, int ldx,
                     const attend_real *W, int ldw, attend_real beta, attend_real *Y, int ldy);

/* The projected keys kp [N,S,P] of k [N,S,E] (attend_keys_forward with the
 * model's weights), from the quantized copy of W / Wk when there is one. */
void at_model_keys(const attend_model *m, attend_real *kp, const attend_real *k, int N, int S);

/* Reads a model file's weights into m (attend_model_load): float files as
 * at_model_read_tensors; files whose matrices are I8 (with "<name>.scale") or
 * F16 fill the quantized copies and the dequantized arena, every value checked. */
attend_status at_model_read_weights(attend_model *m, const attend_st_file *f, const char *path, attend_error *err);

/* Gives dst (same configuration, weights already copied) src's quantized copies. */
attend_status at_model_quant_copy(attend_model *dst, const attend_model *src, attend_error *err);

#endif
