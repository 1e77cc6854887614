/*
 * decoder.h — the one internal interface of a decoder kind (decoders/<kind>.c)
 * and the helpers the kinds share (common.c: the cell, a step of attention,
 * the context-fed step; vocab.c: the inputs and outputs of a kind with a
 * target vocabulary; stack.c: a stacked decoder). model.c, decode.c, beam.c
 * and train.c dispatch through m->dec = at_decoders[cfg.decoder] and never
 * name a kind. Not installed.
 *
 * Adding a decoder kind: a new file decoders/<kind>.c defining
 * `const at_decoder_ops at_decoder_<kind>`, one line in registry.c, and the
 * public enum value and name (include/attend/seq2seq.h, io/names.c).
 *
 * Dimension letters: see state.h.
 */
#ifndef ATTEND_DECODER_H
#define ATTEND_DECODER_H

#include "seq2seq/state.h"

struct at_decoder_ops {
    const char *name;
    int attentive;     /* attention weights per step: attention.* tensors, projected keys */
    int no_cell;       /* no recurrent cell and no bridge: the core lays out no decoder.weight_ih/hh,
                          bias_ih/hh, bridge.*, makes no input projection xg and hands the kind the
                          input embeddings (emb_tgt) alone; its step_backward writes their gradient
                          into acts.demb [T*N,D] (row t*N + n) */
    int aligns;        /* writes acts.weights [T,N,S] every step by its own attention (attentive = 0:
                          no score tensors, extensions or interventions); the alignments read them */
    int head_aligns;   /* multi-head attention: acts.weights can hold one head's weights (run.align_head,
                          1..cfg.heads) instead of its average */
    int vocabulary;    /* outputs are ids of a target vocabulary (tgt_emb, an output layer); 0: source positions */
    int32_t start;     /* the first step's input (ATTEND_BOS; a pointer: -1, no position yet) */
    int eos;           /* 1: a sequence ends with ATTEND_EOS, one more step than its tokens; 0: after src_len steps */
    size_t state_size; /* bytes of its own state (m->dec_state), zeroed at create */
    /* the decoder cell's input width Din, the output feature width F and the output classes V (1: none) */
    void (*dims)(const attend_model_config *c, int E, int *Din, int *F, int *V);
    /* its own configuration rules (the encoder width E), naming both sides (NULL: none) */
    attend_status (*check)(const attend_model_config *c, int E, attend_error *err);
    /* no_cell kinds: a lower bound on its parameters with the target embedding and the output layer
     * (the loader's size check, io/model_io.c) */
    double (*min_params)(const attend_model_config *c);
    /* its tensors before the encoder's (after src_emb: a target embedding), and its own after the cell's
     * (its output layer last) (NULL: none) */
    void (*layout_input)(at_param_layout *L);
    void (*layout_params)(at_param_layout *L);
    /* its own activation buffers, into m->acts.dec_own and its state (NULL: none) */
    void (*layout_acts)(attend_model *m, at_act_layout *L);
    /* after create; dst's state from src's (clone); NULL: nothing */
    void (*init)(attend_model *m);
    void (*clone)(attend_model *dst, const attend_model *src);
    /* its setting in the config JSON (written as "key":1 only when on; NULL: none) */
    const char *key;
    int (*get_key)(const attend_model *m);
    void (*set_key)(attend_model *m, int on);
    /* after the encoder and the decoder-input table (NULL: nothing) */
    void (*begin)(attend_model *m, int N, int S);
    /* beam search: what at_rows_replicate does not know (NULL: nothing) */
    void (*replicate)(attend_model *m, int K, int S);
    /* the embedding rows rows [N,D] of the previous outputs y_in [N] (src [N,S] for a kind that points) */
    void (*input_rows)(const attend_model *m, attend_real *rows, const int32_t *y_in, const int32_t *src, int N, int S);
    /* the input id of a previous output y (the row of a per-token table, and of the embedding's gradient) */
    int32_t (*input_id)(const attend_model *m, int32_t y);
    /* the input embeddings' gradient from demb [T*N,D] (rows of fwd_tgt_in) */
    void (*input_rows_backward)(attend_model *m, const attend_real *demb, int T, int N, int S);
    /* checks the targets of row n of a teacher-forced batch (who names the caller) */
    attend_status (*check_targets)(const attend_model *m, const attend_batch *b, int n, const char *who,
                                   attend_error *err);
    /* checks a decoding of N sources src_len [N] for at most max_len steps */
    attend_status (*check_decode)(const attend_model *m, const int32_t *src_len, int N, int max_len, const char *who,
                                  attend_error *err);
    /* the output length a greedy evaluation of batch b needs */
    int (*decode_len)(const attend_batch *b);
    /* step t's features ready in feat_row: 0 go on; 1 finished, `token` not an output (EOS); 2 finished after it */
    int (*finish)(int t, int32_t token, int src_len);
    /* the token may continue a beam hypothesis */
    int (*candidate)(int32_t token);
    /* step t after xg holds the embedding part of the cell input: reads
     * states[t], writes states[t+1], ctx[t], weights[t] (POINTER: log-probs in
     * scores[t]) and features feat_row (row n at + n*feat_stride) */
    void (*step_forward)(attend_model *m, int t, int N, int S, const uint8_t *active, attend_real *feat_row,
                         size_t feat_stride);
    /* a teacher-forced pass's output after its steps: log-probs in acts.logp [N,T,V] (NULL: its steps made them) */
    void (*output_forward)(attend_model *m, int N, int S, int T);
    /* row n, step t's log-probs of that pass, *width wide */
    const attend_real *(*output_row)(const attend_model *m, int n, int t, int N, int S, int T, int *width);
    /* backward of the output (dlogits, the output layer) into acts.dfeat, scaled by inv = 1/count (NULL: none) */
    void (*output_backward)(attend_model *m, int N, int S, int T, attend_real inv);
    /* backward before the steps (NULL: nothing) */
    void (*backward_begin)(attend_model *m, int N, int S);
    /* backward of step t: from dfeat_t (row n at + n*dfeat_stride) and
     * acts.ds/dcs (d s_t, d c_t) into dxg [N,G*Hd] (zeroed), acts.ds_prev /
     * dcs_prev (d s_{t-1}, zeroed), gradients, dkp, denc, dfin */
    void (*step_backward)(attend_model *m, int t, int N, int S, const attend_real *dfeat_t, size_t dfeat_stride,
                          attend_real *dxg);
    /* after all steps: gradient of W_ih[:, D:] from dxg_all [T,N,G*Hd] (NULL: nothing) */
    void (*input_backward)(attend_model *m, int T, int N);
    /* decoding: step t's output rows [N,*W] after at_model_step ran with features in acts.step_feat:
     * log-probabilities (*logp = 1) or logits (*logp = 0) */
    const attend_real *(*dist)(attend_model *m, int t, int N, int S, int *W, int *logp);
};

/* registry.c: indexed by attend_decoder_kind; NULL where none is registered */
extern const at_decoder_ops *const at_decoders[];
extern const int at_decoder_count;

/* ---------------------------------------------------------- common.c */

/* The attention tensors of score kind cfg.score (attentive kinds, before the cell's), then the extensions'. */
void at_dec_layout_attention(at_param_layout *L);
/* The decoder cell over the parameters, with the weight copies its products of N rows read. */
void at_dec_cell(const attend_model *m, at_cell *cell, int N);
/* s_{t+1} (c_{t+1}) = cell(xg, s_t (c_t)) for N rows, active [N] or NULL. */
void at_dec_cell_forward(attend_model *m, int t, int N, const uint8_t *active);
/* forward: s_{t+1} = cell(xg, s_t): from ds (dcs) into dxg, ds_prev (dcs_prev), W_hh, b_hh. */
void at_dec_cell_backward(attend_model *m, int t, int N, attend_real *dxg);
/* scores[t] and weights[t] of step t with query q [N,Hd]: the masked
 * log-softmax (log_out), else an extension's weights or the masked softmax. */
void at_dec_scores_forward(attend_model *m, int t, int N, int S, const attend_real *q, int log_out);
/* Soft attention of step t with query q [N,Hd]: scores, weights (then the
 * run's weight hook and the extensions'), ctx[t] = weights · encoder outputs. */
void at_dec_attention_forward(attend_model *m, int t, int N, int S, const attend_real *q);
/* Backward of the scores of step t from acts.dscores: dq [N,Hd] +=, dkp +=. */
void at_dec_scores_backward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *dq);
/* Backward of at_dec_attention_forward from acts.dctx: denc, dkp, dq [N,Hd] +=. */
void at_dec_attention_backward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *dq);
/* Context-fed kinds (BAHDANAU, NONE) once ctx[t] is set: xg += c_t W_ih[:, D:]ᵀ
 * (or α_t ctx_proj when ctx_proj != NULL), the cell, feat = [s_t; c_t]. */
void at_dec_ctx_fed_forward(attend_model *m, int t, int N, int S, const uint8_t *active, attend_real *feat_row,
                            size_t feat_stride, const attend_real *ctx_proj);
/* Its backward down to acts.dctx (d c_t). */
void at_dec_ctx_fed_backward(attend_model *m, int t, int N, const attend_real *dfeat_t, size_t dfeat_stride,
                             attend_real *dxg);
/* Its W_ih[:, D:] gradient over all steps. */
void at_dec_ctx_fed_input_backward(attend_model *m, int T, int N);

/* A stacked decoder (m->Ld > 1, stack.c): layers 1 .. L-1's tensors (after layer 0's). */
void at_dec_stack_layout_params(at_param_layout *L);
/* Its buffers: the lower layers' states, saved values, running gradients. */
void at_dec_stack_layout_acts(attend_model *m, at_act_layout *L);

/* ----------------------------------------------------------- stack.c */

/* at_dec_cell_forward / _backward of every layer (top layer: states, ds). */
void at_dec_stack_forward(attend_model *m, int t, int N, const uint8_t *active);
void at_dec_stack_backward(attend_model *m, int t, int N, attend_real *dxg);

/* ----------------------------------------------------------- vocab.c */
/* What the kinds with a target vocabulary (BAHDANAU, LUONG, NONE) share. */

void at_vocab_layout_input(at_param_layout *L);  /* tgt_emb.weight [Vt,D] */
void at_vocab_layout_output(at_param_layout *L); /* out.weight [Vt,F], out.bias [Vt] (a kind's layout_params ends so) */
/* logits [N,V] of one step from features feat [N,F] into acts.step_logits. */
void at_vocab_step_logits(attend_model *m, int N, const attend_real *feat);
void at_vocab_input_rows(const attend_model *m, attend_real *rows, const int32_t *y_in, const int32_t *src, int N,
                         int S);
int32_t at_vocab_input_id(const attend_model *m, int32_t y);
void at_vocab_input_rows_backward(attend_model *m, const attend_real *demb, int T, int N, int S);
attend_status at_vocab_check_targets(const attend_model *m, const attend_batch *b, int n, const char *who,
                                     attend_error *err);
attend_status at_vocab_check_decode(const attend_model *m, const int32_t *src_len, int N, int max_len,
                                    const char *who, attend_error *err);
int at_vocab_decode_len(const attend_batch *b);
int at_vocab_finish(int t, int32_t token, int src_len);
int at_vocab_candidate(int32_t token);
void at_vocab_output_forward(attend_model *m, int N, int S, int T);
const attend_real *at_vocab_output_row(const attend_model *m, int n, int t, int N, int S, int T, int *width);
void at_vocab_output_backward(attend_model *m, int N, int S, int T, attend_real inv);
const attend_real *at_vocab_dist(attend_model *m, int t, int N, int S, int *W, int *logp);

/* The ops fields every kind with a target vocabulary shares. */
#define AT_VOCAB_OPS                                     \
    .vocabulary = 1, .start = ATTEND_BOS, .eos = 1,      \
    .layout_input = at_vocab_layout_input,               \
    .input_rows = at_vocab_input_rows,                   \
    .input_id = at_vocab_input_id,                       \
    .input_rows_backward = at_vocab_input_rows_backward, \
    .check_targets = at_vocab_check_targets,             \
    .check_decode = at_vocab_check_decode,               \
    .decode_len = at_vocab_decode_len,                   \
    .finish = at_vocab_finish,                           \
    .candidate = at_vocab_candidate,                     \
    .output_forward = at_vocab_output_forward,           \
    .output_row = at_vocab_output_row,                   \
    .output_backward = at_vocab_output_backward,         \
    .dist = at_vocab_dist

#endif
