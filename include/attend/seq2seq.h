/*
 * attend/seq2seq.h — the encoder–decoder model: create, forward/backward, greedy, beam, scoring,
 * model files, evaluation, training and checkpoints.
 *
 * Part of the public header: include <attend.h> (it includes every part);
 * the conventions every function follows are written at the top of
 * attend/core.h.
 */
#ifndef ATTEND_SEQ2SEQ_H
#define ATTEND_SEQ2SEQ_H

#include "attend/core.h"
#include "attend/io.h"

#ifdef __cplusplus
extern "C" {
#endif


/* ------------------------------------------------------------------ model */
/*
 * The encoder–decoder of seed 004: source embedding → bidirectional recurrent
 * encoder (E = 2He) → bridge tanh(W [h_fwd; h_bwd] + b) → attentive recurrent
 * decoder → logits. The encoder may instead be a Transformer or a ConvS2S
 * encoder (attend_encoder_kind below: E = emb, the bridge reads the mean of
 * the valid states). Decoder kinds:
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
/* attend_normalizer (what turns a row of scores into attention weights) is
 * declared in attend/core.h with its kernels. */

typedef enum {
    ATTEND_DECODER_BAHDANAU = 0,
    ATTEND_DECODER_LUONG = 1,
    ATTEND_DECODER_NONE = 2,
    ATTEND_DECODER_POINTER = 3,
    /* issue 27: dec_layers (0: 1) layers of causal multi-head self-attention,
     * cross-attention over the encoder states and a feed-forward network
     * (dec_hidden wide) on emb-wide states; needs the TRANSFORMER encoder,
     * whose heads, positions and post_norm it shares; no recurrent cell (cell
     * is ignored), no bridge; decodes with a key/value cache; its alignments
     * are the top layer's cross-attention averaged over the heads */
    ATTEND_DECODER_TRANSFORMER = 4,
    /* issue 27 (Table 8.1): an encoder-only labelling head, one output per
     * source position t read from that position's top encoder state alone,
     * logits_t = W_o enc_top[t] + b_o (out.weight [Vt,E], out.bias [Vt]); no
     * cell, no attention, no EOS: a pair's target has exactly src_len labels
     * (max_tgt_len >= max_src_len); the previous outputs are not read */
    ATTEND_DECODER_READOUT = 5,
} attend_decoder_kind;

/* The encoder kind (issue 27): what turns the source embeddings into the
 * states the decoder attends over.
 *   RNN          the bidirectional GRU/LSTM stack above: E = 2 enc_hidden
 *   TRANSFORMER  enc_layers layers of multi-head self-attention (heads H,
 *                key padding masked) and a position-wise feed-forward
 *                network (emb -> enc_hidden -> emb, ReLU), each with a
 *                residual connection and layer norm: pre-norm
 *                x + f(LN(x)) with a final LN (nn.TransformerEncoderLayer
 *                (norm_first=True) under nn.TransformerEncoder(norm=
 *                LayerNorm)), or post-norm LN(x + f(x)) (post_norm = 1);
 *                positions added to the embeddings first; E = emb, the
 *                summary the bridge reads is the mean of the valid states
 *   CONV         ConvS2S's encoder (Gehring et al. 2017): enc_layers layers
 *                x' = sqrt(1/2) (x + GLU(conv_k(x))), a 1-D convolution of
 *                width k (kernel, odd; 'same' padding, padding positions
 *                zeroed before every convolution) to 2 emb channels and a
 *                gated linear unit back to emb (or, conv_relu = 1, to emb
 *                channels and a ReLU); positions as TRANSFORMER's;
 *                E = emb, the summary the mean of the valid states
 *                (enc_hidden unused: 0 or any value) */
typedef enum {
    ATTEND_ENCODER_RNN = 0,
    ATTEND_ENCODER_TRANSFORMER = 1,
    ATTEND_ENCODER_CONV = 2,
} attend_encoder_kind;

/* Positions added to the source embeddings by a TRANSFORMER encoder:
 * sinusoidal (Vaswani et al. 2017: PE[j,2i] = sin(j / 10000^(2i/D)),
 * PE[j,2i+1] = cos(same)), learned (a [max_src_len, D] table, tensor
 * encoder.pos_emb [max_positions, D]), or none (the encoder is then blind to
 * order, seed 002). */
typedef enum {
    ATTEND_POSITIONS_SINUSOIDAL = 0,
    ATTEND_POSITIONS_LEARNED = 1,
    ATTEND_POSITIONS_NONE = 2,
} attend_positions;

typedef struct {
    attend_cell_kind cell;       /* encoder and decoder cells (TRANSFORMER: the decoder's) */
    attend_decoder_kind decoder;
    attend_score_kind score;     /* not used by NONE; dot kinds need Hd == 2H */
    int src_vocab;               /* Vs (>= 5: four specials and one symbol) */
    int tgt_vocab;               /* Vt (>= 5); ignored by POINTER */
    int emb;                     /* D: embedding width, both sides */
    int enc_hidden;              /* He: per direction, so E = 2He */
    int enc_layers;              /* stacked bidirectional layers, >= 1 */
    int dec_hidden;              /* Hd */
    int attn;                    /* A: additive attention width (ADDITIVE only) */
    int max_batch;               /* capacities: a batch beyond them is an error */
    int max_src_len;
    int max_tgt_len;             /* target tokens, EOS not counted */
    /* Added in 0.2 (issues 13 and 14). All zero (what a designated
     * initializer leaves) is the model as before, and such a configuration's
     * JSON carries none of these keys, so older files keep their bytes. */
    int dec_layers;              /* stacked decoder RNN layers (0 or 1: one); attention reads the top one */
    int coverage;                /* 1: coverage Σ past weights as an extra input to the ADDITIVE score */
    int copy;                    /* 1: pointer-generator output (p_gen mixes vocabulary and copy); BAHDANAU/LUONG */
    int monotonic;               /* 1: monotonic attention (expected alignments in training, hard at inference) */
    attend_normalizer normalizer; /* the score → weight map of the attention (0: softmax) */
    /* Added in 0.3 (issue 27), the same rule: all zero is the recurrent
     * encoder, and its JSON carries none of these keys. For a TRANSFORMER
     * encoder enc_hidden is the feed-forward width and enc_layers the
     * layers; the encoder width E is emb. */
    attend_encoder_kind encoder;  /* ATTEND_ENCODER_RNN (0) or ATTEND_ENCODER_TRANSFORMER */
    int heads;                    /* TRANSFORMER: attention heads H >= 1 dividing emb (RNN: 0) */
    attend_positions positions;   /* TRANSFORMER: 0 sinusoidal, 1 learned, 2 none (RNN: 0) */
    int post_norm;                /* TRANSFORMER: 1 post-norm, 0 pre-norm (RNN: 0) */
    int max_positions;            /* TRANSFORMER with LEARNED positions: rows of the position table, >=
                                     max_src_len (a capacity, which a loader may change, while the table's
                                     size is fixed by the file); otherwise 0 */
    int kernel;                   /* CONV: the convolutions' width k (odd, >= 1); otherwise 0 */
    int conv_relu;                /* CONV: 1 ReLU (a convolution to emb channels) in place of the GLU; otherwise 0 */
    /* Added in issue 31 (zero: as before, no JSON key). */
    int uniform_attention;       /* 1: every step's weights are 1/len over the source, constants (Wiegreffe &
                                    Pinter 2019's uniform baseline; no score computed, none trained) */
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

/* POINTER decoders: attend_model_create starts them with on = 1; on = 1 masks a source position out (weight exactly 0,
 * log-probability -inf) at every step after the one that chose it, so every
 * output is a permutation of (a prefix of) the source positions: greedy, beam,
 * attend_model_score (a target repeating a position is ATTEND_ERR_ARG naming
 * the step), teacher-forced training and evaluation. Saved in the model file
 * (config JSON "pointer_exclude": 1, written only when on), so a model trained
 * for permutations decodes permutations; files without the field load with
 * on = 0, the behaviour before the field existed (saving with on = 0 writes
 * no field, so such files keep their bytes). Not a field of
 * attend_model_config, whose layout (and the bindings that mirror it) stays
 * as it was. Returns ATTEND_ERR_ARG for on outside {0,1} or on = 1 with a
 * decoder that does not point. Not thread-safe with a running decode of m. */
attend_status attend_model_set_pointer_exclude(attend_model *m, int on, attend_error *err);
/* 1 when m excludes chosen positions (above), else 0 (and for NULL). */
int attend_model_pointer_exclude(const attend_model *m);

/*
 * The coverage loss (See et al. 2017, eq. 12) of attend_model_forward and
 * attend_model_backward: lambda Σ_t Σ_j min(α_tj, cov_tj), cov_t = Σ_{t'<t} α_t'
 * (the coverage vector, with or without cfg.coverage), summed over the counted
 * steps and divided by the counted tokens like the cross-entropy, is added to
 * the loss; its gradient flows into every earlier step's weights. 0 (the
 * default) = off. The trainer's steps set the trainer's coverage_loss option
 * (attend_train_options); attend_model_evaluate and attend_model_score report
 * the cross-entropy alone. ATTEND_ERR_ARG for lambda < 0 or not finite, or
 * lambda > 0 with a decoder without attention or one that points. Not
 * thread-safe with a running forward of m.
 */
attend_status attend_model_set_coverage_loss(attend_model *m, double lambda, attend_error *err)
    ATTEND_DEPRECATED("pass the options per call: attend_forward_options.coverage_loss");
/* The coverage loss weight lambda of m (0 for NULL). */
double attend_model_coverage_loss(const attend_model *m);

/*
 * Training switches of the teacher-forced forward and backward (issue 14).
 * The trainer sets them from attend_train_options around its own forward of
 * every step and clears them after; set them yourself to differentiate a
 * regularised loss (finite-difference tests, your own loop). Greedy, beam,
 * scoring and attend_model_evaluate never drop or smooth.
 *
 * Dropout p in [0,1), inverted (kept values scaled by 1/(1-p)), at four
 * sites: the source embeddings, the input of every encoder layer above the
 * first, the decoder's input embeddings, and the output features (the vector
 * the output layer reads: [s_t; c_t] for bahdanau and none, h̃_t for luong;
 * pointer has none). The mask of an element is a hash of (key, site, row,
 * position, element), so every forward with one key drops the same elements
 * and backward multiplies by the same mask. The trainer's key is a hash of its
 * seed and step count. While dropout is on, the per-token input-projection
 * tables are not used (the embeddings are dropped first).
 *
 * Label smoothing ε in [0,1): the loss of a target step becomes
 * −Σ_c q_c log p_c with q = (1−ε) onehot(y) + ε/C: PyTorch's
 * F.cross_entropy(label_smoothing=ε) over the C = tgt_vocab classes (every
 * special included). POINTER: C is the number of source positions the step
 * may choose (not padding, not excluded). attend_tf_stats.loss is then that
 * smoothed loss (attend_model_evaluate's is plain cross-entropy).
 *
 * ATTEND_ERR_ARG for a value outside [0,1) or NaN. Not thread-safe with other
 * calls on m.
 */
attend_status attend_model_set_dropout(attend_model *m, double p, uint64_t key, attend_error *err)
    ATTEND_DEPRECATED("pass the options per call: attend_forward_options.dropout");
attend_status attend_model_set_label_smoothing(attend_model *m, double eps, attend_error *err)
    ATTEND_DEPRECATED("pass the options per call: attend_forward_options.label_smoothing");

/*
 * Copy (config copy = 1, BAHDANAU and LUONG; See et al. 2017, the
 * pointer-generator): each step mixes the vocabulary distribution with the
 * attention over the source,
 *   p_gen = σ(w_cᵀ c_t + w_sᵀ s_t + w_xᵀ x_t + b)    (tensors copy.w_c [E],
 *   P(w)  = p_gen P_vocab(w)                            copy.w_s [Hd], copy.w_x [D],
 *         + (1 − p_gen) Σ_{j: ext_j = w} α_tj           copy.b [1]; docs/FORMAT.md)
 * with c_t the context, s_t the decoder state after step t's cell (LUONG:
 * the cell state that queries the attention, not h̃_t), x_t the input
 * embedding. The output space is the extended vocabulary of each source row,
 * ids [0, Vt + S): source position j stands for the target id of its token
 * when the target vocabulary has that token (the model's source→target map),
 * else for the extended id Vt + j', j' the first position of the row holding
 * the same source id (an <unk> position: j' = j; its string is not known to
 * the model). So an id >= Vt that greedy, beam or a dataset gives back means
 * "the source token at position id − Vt"; attend_vocab_decode_copy
 * (attend/io.h) writes it as that token. A copied id fed back as the next
 * input reads the <unk> embedding. In training data, a target id Vt + j must
 * be the extended id of position j of its row (the TSV reader writes such ids
 * with attend_tsv_options.copy); the loss is −log P(y) of the mixture.
 */

/* Sets the source→target map of a copy model from the vocabularies it is
 * trained and saved with: a source token maps to the target id of the same
 * string (the four specials to none). attend_model_create starts with the map
 * of one shared vocabulary (id -> id from 4 to min(Vs,Vt)−1);
 * attend_model_load sets it from the file's vocabularies. ATTEND_ERR_ARG for a
 * model without copy, ATTEND_ERR_SHAPE for vocabulary sizes other than the
 * model's. Not thread-safe with a running decode of m. */
attend_status attend_model_set_copy_map(attend_model *m, const attend_vocab *src_vocab,
                                        const attend_vocab *tgt_vocab, attend_error *err);
/* The target id a source id copies as, or -1 (an extended id; also for a
 * model without copy or an id out of range). */
int32_t attend_model_copy_target(const attend_model *m, int32_t src_id);

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
/* The whole parameter / gradient arena (attend_model_param_count values).
 * Decoding keeps packed copies of the weight matrices (the layout the matrix
 * products read, made once instead of at every step: docs/PERFORMANCE.md);
 * attend_model_params and attend_model_tensor_get/find mark them stale, as
 * does every training step, load and quantization, so the next product packs
 * again. Write parameters through a pointer from a call made after your last
 * decode (call attend_model_params again after writing through an older
 * one), and a decode reads what you wrote. */
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
    uint8_t *align;   /* [N,T,S] word alignments: 1 where decoder step t (predicting target token
                         t) is aligned to source position s, else 0 (guided alignment,
                         attend_model_set_guided_alignment); NULL when no pair had one.
                         attend_batch_fill allocates it (cap_N*cap_T*cap_S bytes) the first
                         time it fills pairs of a dataset with alignments */
} attend_batch;

/* Allocates a batch for up to cap_N rows, cap_S source and cap_T decoder steps. */
attend_status attend_batch_alloc(attend_batch *b, int cap_N, int cap_S, int cap_T,
                                 attend_error *err);
void attend_batch_release(attend_batch *b); /* NULL or released twice is fine */
/* Fills b from pairs idx[0..n) of d (pointer != 0: targets are positions);
 * with alignments in d (attend_dataset_aligned_pairs) also b->align, from
 * each pair's links (rows of pairs without one: all 0). */
attend_status attend_batch_fill(attend_batch *b, const attend_dataset *d, const int *idx, int n,
                                int pointer, attend_error *err);

/* Teacher-forced statistics of one forward pass. */
typedef struct {
    double loss;           /* mean cross-entropy over counted target tokens (with label smoothing on,
                              attend_model_set_label_smoothing: the smoothed loss; with guided
                              alignment on: plus its term, attend_model_set_guided_alignment) */
    int tokens;            /* counted target tokens */
    int correct_tokens;    /* argmax == target */
    int seqs;              /* rows */
    int correct_seqs;      /* rows with every counted token right */
    double attn_entropy;   /* mean entropy (nats) of the attention rows of counted steps;
                              0 for NONE */
} attend_tf_stats;

/*
 * The options of one teacher-forced forward (attend_forward): the training
 * switches the trainer passes for each of its steps (attend_train_options,
 * with the step's keys), all zero for the plain cross-entropy. Nothing is
 * kept on the model between calls: the backward that follows uses the
 * forward's own.
 *   dropout, dropout_key   inverted dropout p in [0,1) at the four sites of
 *                          attend_model_set_dropout, masks keyed by dropout_key
 *   label_smoothing        ε in [0,1)
 *   sampling_prob, sampling_key  scheduled sampling: the probability of this
 *                          forward (a trainer's ramp already applied) in [0,1],
 *                          and the key of its choices (vocabulary decoders)
 *   coverage_loss          λ >= 0 of the coverage loss
 *   guided_alignment       λ >= 0 of guided alignment (batches with alignments)
 *   monotonic_noise, monotonic_key  1: monotonic attention's training noise,
 *                          keyed by monotonic_key
 *   row0                   the batch's first row in the step's whole batch (a
 *                          gradient shard's offset): masks and choices follow
 *                          the row, not its place in the shard
 *   reference              another model (NULL: none), run first by this
 *                          forward on the same batch (its own teacher-forced
 *                          pass, no options): the two options below read its
 *                          attention weights and output distributions, also
 *                          in the backward that follows (do not run it in
 *                          between). Not this model; the same vocabulary
 *                          sizes; a batch beyond its capacities is its error.
 *   frozen_attention       1: every step's attention weights are the
 *                          reference's (constants: no gradient to the score
 *                          tensors); Wiegreffe & Pinter 2019's diagnostic
 *                          transfer (src/seq2seq/extensions/frozen.c). 0: off
 *   adversarial            λ >= 0 (0: off): the loss is, in place of the
 *                          cross-entropy, the mean over counted steps of
 *                          TVD(p, q) − λ JSD(α, β), p, α this model's output
 *                          distribution and attention, q, β the reference's
 *                          (W&P's adversarial training; extensions/adversarial.c)
 */
typedef struct {
    size_t size; /* sizeof(attend_forward_options) */
    double dropout;
    uint64_t dropout_key;
    double label_smoothing;
    double sampling_prob;
    uint64_t sampling_key;
    double coverage_loss;
    double guided_alignment;
    int monotonic_noise;
    uint64_t monotonic_key;
    long row0;
    /* Added in issue 31 (a shorter, older struct reads them as zero). */
    attend_model *reference;
    double frozen_attention;
    double adversarial;
} attend_forward_options;

/* Teacher-forced forward over a batch with options o (NULL: all zero);
 * keeps the activations for backward. Checks every id and length against the
 * configuration first, and the options: a value out of range or an option
 * the model cannot use (attend_feature_rule) is ATTEND_ERR_ARG naming it. */
attend_status attend_forward(attend_model *m, const attend_batch *b, const attend_forward_options *o,
                             attend_tf_stats *stats, attend_error *err);
/* attend_forward with the options set on the model by the deprecated setters
 * below (attend_model_set_dropout, _label_smoothing, _coverage_loss,
 * _guided_alignment; a trainer's steps leave its coverage_loss and
 * guided_alignment there). */
attend_status attend_model_forward(attend_model *m, const attend_batch *b, attend_tf_stats *stats,
                                   attend_error *err)
    ATTEND_DEPRECATED("pass the options per call: attend_forward");
/* Gradients of the mean loss of the last forward, accumulated (+=). PAD's
 * embedding rows receive none. ATTEND_ERR_ARG if no forward preceded it. */
attend_status attend_model_backward(attend_model *m, attend_error *err);

/*
 * Guided alignment (Chen et al. 2016, "Guided Alignment Training for
 * Topic-Aware Neural Machine Translation"; Marian's --guided-alignment, cost
 * "ce"). With lambda > 0, attend_model_forward adds to the loss of a batch
 * with alignments (attend_batch.align)
 *     lambda/count · Σ_{n,t} −Σ_s a_nts log(α_nts + 1e-6),
 * a_nt uniform over the source positions aligned to step t of row n (steps
 * without any add nothing), α the attention weights, count the counted target
 * tokens (the cross-entropy's divisor); attend_model_backward adds its
 * gradient; attend_model_evaluate leaves it out (it reports the cross-entropy).
 * 0 (the default) is off. ATTEND_ERR_ARG for lambda < 0 or not finite, or > 0
 * with a decoder without attention weights (none) or a pointer decoder (its
 * attention is its output distribution, which the targets train already);
 * ATTEND_ERR_ALLOC when the first lambda > 0 cannot allocate the alignment
 * mask (max_tgt_len+1 x max_batch x max_src_len bytes). An alignment in a
 * batch outside a row's source or steps is ATTEND_ERR_ARG from the forward.
 * A trainer's steps use its own option (attend_train_options.guided_alignment,
 * set through attend_trainer_set_options, which also sets the model's).
 */
attend_status attend_model_set_guided_alignment(attend_model *m, double lambda, attend_error *err)
    ATTEND_DEPRECATED("pass the options per call: attend_forward_options.guided_alignment");
double attend_model_guided_alignment(const attend_model *m); /* lambda; 0 for NULL */
/* The last forward's alignment term per counted token, before lambda (0 when
 * it added none). */
double attend_model_guided_loss(const attend_model *m);
/* The last forward's mean Jensen–Shannon divergence (nats) between the
 * model's attention and its reference's per counted step, when it took the
 * adversarial loss (attend_forward_options.adversarial > 0); else 0. */
double attend_model_adversarial_jsd(const attend_model *m);

/*
 * Decoding options (attend_decode). beam 0 is greedy decoding of N sources;
 * beam K in [1,64] is beam search of one source (N = 1) keeping K
 * hypotheses and returning the nbest (in [1,K]; 0: 1) best finished ones.
 * max_len: the longest output in tokens (in [1, max_tgt_len+1]). alpha >= 0:
 * length normalisation, score = log p / (length+1)^alpha. coverage_penalty
 * β >= 0 (Wu et al. 2016, GNMT eq. 14): a finished hypothesis's score gains
 * β Σ_j log(min(Σ_t α_tj, 1)), the sum over its steps (its EOS step
 * included) of the attention on each source position (with several models,
 * their mean attention), floored at 1e-12 inside the log; only the ranking of
 * finished hypotheses changes. alpha, nbest and coverage_penalty are beam
 * search's: with beam 0 they must be 0.
 */
typedef struct {
    size_t size; /* sizeof(attend_decode_options) */
    int beam;
    int nbest;
    int max_len;
    double alpha;
    double coverage_penalty;
    int align_head; /* the alignments written to align: 0 the decoder's own (the transformer decoder: its
                       top layer's cross-attention averaged over the heads); h in [1, heads] that
                       layer's head h alone, for a decoder with multi-head attention (transformer;
                       others: ATTEND_ERR_ARG naming the model's decoder). The tokens do not change. */
} attend_decode_options;

/*
 * Decoding with M models (1..64; one model is an ensemble of one): each
 * step's distribution is the mean of the models' log-probabilities,
 * (1/M) Σ_k log softmax(z_k), as OpenNMT-py and Marian average them (not
 * renormalised); each model keeps its own encoder output, decoder state and
 * attention, so alignments come out per model. The models must be distinct
 * handles (attend_model_clone for two copies) with one output space: all
 * vocabulary decoders with the same target vocabulary size, or all pointers
 * (otherwise ATTEND_ERR_ARG naming the first model that differs); copy models
 * decode alone (their output space is each source's extended vocabulary).
 * The library cannot compare tokens: callers holding vocabularies compare
 * them. Capacities are each model's (N or beam <= max_batch).
 *   greedy (o->beam 0): src [N,S], src_len [N]; out [N,max_len] tokens (EOS
 *     excluded; PAD after; a pointer: exactly src_len positions), out_len
 *     [N]; score unused (may be NULL); align NULL or [M,N,max_len,S];
 *     *n_out (may be NULL) = N. A finished row is frozen.
 *   beam (o->beam K): src [S] (N = 1, src_len NULL or {S}); out
 *     [nbest,max_len], out_len [nbest], score [nbest] (best first), align
 *     NULL or [M,nbest,max_len,S], each hypothesis's own attention history
 *     reordered with it; *n_out the count.
 * Not thread-safe with other calls on any of the models.
 */
attend_status attend_decode(attend_model *const *models, int M, const int32_t *src, const int32_t *src_len, int N,
                            int S, const attend_decode_options *o, int32_t *out, int32_t *out_len, double *score,
                            attend_real *align, int *n_out, attend_error *err);

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
                                  attend_real *align, attend_error *err)
    ATTEND_DEPRECATED("attend_decode with beam 0");

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
                                double *score, attend_real *align, int *n_out, attend_error *err)
    ATTEND_DEPRECATED("attend_decode with beam K");

/*
 * Beam search options (attend_model_beam_opts). alpha: length normalisation
 * as above. coverage_penalty β >= 0 (Wu et al. 2016, GNMT eq. 14): a finished
 * hypothesis's score gains β Σ_j log(min(Σ_t α_tj, 1)), the sum over the
 * hypothesis's steps (its EOS step included) of the attention on each source
 * position, floored at 1e-12 inside the log so the score stays finite: a
 * source position that received less than a whole unit of attention in total
 * is penalised. 0 = none (the search of attend_model_beam). Only the ranking of
 * finished hypotheses changes (live ones are ranked by log-probability).
 */
typedef struct {
    double alpha;
    double coverage_penalty;
} attend_beam_options;

/* attend_model_beam with options o (NULL: all zero): score [nbest] =
 * log p / (length+1)^alpha + the coverage penalty. ATTEND_ERR_ARG for a
 * negative or non-finite option, or coverage_penalty > 0 with a decoder
 * without attention. */
attend_status attend_model_beam_opts(attend_model *m, const int32_t *src, int S, int beam, int nbest, int max_len,
                                     const attend_beam_options *o, int32_t *out, int32_t *out_len, double *score,
                                     attend_real *align, int *n_out, attend_error *err)
    ATTEND_DEPRECATED("attend_decode with beam K and attend_decode_options");

/*
 * Forced scoring of one pair: the teacher-forced log-probability of target
 * tgt [T] (EOS appended; POINTER: positions, no EOS) given src [S], and the
 * alignment align [T+1,S] (POINTER: [T,S]; NULL allowed) of every step — a
 * forced alignment. *logp is the sum over steps (natural log).
 */
attend_status attend_model_score(attend_model *m, const int32_t *src, int S, const int32_t *tgt, int T,
                                 double *logp, attend_real *align, attend_error *err);

/*
 * The encoder's self-attention over one source (issue 27): src [S] (ids, no
 * PAD; S <= max_src_len), layer in [1, enc_layers], head in [1, heads] or 0
 * for the mean of the heads; out [S,S] receives row i = the weights of query
 * position i over the key positions j (each row sums to 1). Only an encoder
 * with self-attention (ATTEND_ENCODER_TRANSFORMER); another is ATTEND_ERR_ARG
 * naming it; a layer or head outside its range ATTEND_ERR_ARG naming both.
 * Runs the encoder in the model's buffers: not concurrently with another call
 * on the same model.
 */
attend_status attend_model_encoder_attention(attend_model *m, const int32_t *src, int S, int layer, int head,
                                             attend_real *out, attend_error *err);

/* ------------------------------------------------------------- ensembles */
/*
 * Decoding with an ensemble of M models: the old names, thin wrappers of
 * attend_decode (the models, their output spaces, capacities, the mean of
 * the log-probabilities and the per-model alignments as described there;
 * with M = 1 the output is exactly attend_model_greedy's /
 * attend_model_beam's).
 *
 * attend_ensemble_greedy: attend_decode with beam 0 (src [N,S], src_len [N],
 * out [N,max_len], out_len [N]); align NULL or [M,N,max_len,S], model k's
 * weights of each emitted step.
 * attend_ensemble_beam: attend_decode with beam K, nbest, alpha and no
 * coverage penalty (score = summed mean log-probability / (length+1)^alpha);
 * align NULL or [M,nbest,max_len,S].
 * Not thread-safe with other calls on any of the models.
 */
attend_status attend_ensemble_greedy(attend_model *const *models, int M, const int32_t *src,
                                     const int32_t *src_len, int N, int S, int max_len, int32_t *out,
                                     int32_t *out_len, attend_real *align, attend_error *err)
    ATTEND_DEPRECATED("attend_decode with beam 0");
attend_status attend_ensemble_beam(attend_model *const *models, int M, const int32_t *src, int S, int beam,
                                   int nbest, int max_len, double alpha, int32_t *out, int32_t *out_len,
                                   double *score, attend_real *align, int *n_out, attend_error *err)
    ATTEND_DEPRECATED("attend_decode with beam K");

/*
 * N-best rescoring: score [n] receives, for each hypothesis hyp [n,max_len]
 * of length hyp_len [n] (tokens of m's target vocabulary, EOS excluded), m's
 * length-normalised log-probability given src [S]: attend_model_score / (len
 * + 1), the EOS step counted. reverse = 1 scores the reversed hypothesis (a
 * right-to-left model, trained on reversed targets). A caller re-ranks by
 * (1 - w) * first score + w * this one (`attend decode --rescore`).
 * ATTEND_ERR_ARG for a pointer model or a length outside [0, max_len]; a
 * hypothesis m cannot score (capacity) fails naming it.
 */
attend_status attend_model_rescore(attend_model *m, const int32_t *src, int S, const int32_t *hyp,
                                   const int32_t *hyp_len, int n, int max_len, int reverse, double *score,
                                   attend_error *err);

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
 * An F16 model may be quantized to I8: its F16 values (exact in the float
 * copy) are the master, so an F16 file gives its I8 form byte for byte.
 * Errors: ATTEND_ERR_ARG for another dtype, a model already quantized
 * otherwise (naming a quantized tensor) or an F16 value beyond ±65504 (naming the tensor and
 * element); ATTEND_ERR_NONFINITE for a non-finite weight (naming it); the model
 * is unchanged on error. Not thread-safe with other calls on m.
 */
attend_status attend_model_quantize(attend_model *m, attend_dtype to, attend_error *err);

/* How the weight matrices are stored: ATTEND_DTYPE_F32, I8 or F16. */
attend_dtype attend_model_weight_dtype(const attend_model *m);

/* Names used in files and on the command line: "gru" "lstm"; "bahdanau"
 * "luong" "none" "pointer"; "dot" "scaled_dot" "general" "additive"; "char"
 * "space"; "softmax" "sparsemax" "entmax15". *_from_name returns -1 for an
 * unknown name. */
const char *attend_cell_name(attend_cell_kind kind);
const char *attend_decoder_name(attend_decoder_kind kind);
const char *attend_score_name(attend_score_kind kind);
const char *attend_tokenizer_name(attend_tokenizer tok);
int attend_cell_from_name(const char *name);
int attend_decoder_from_name(const char *name);
int attend_score_from_name(const char *name);
int attend_tokenizer_from_name(const char *name);
const char *attend_normalizer_name(attend_normalizer n);
int attend_normalizer_from_name(const char *name);
/* "rnn" "transformer" "conv"; "sinusoidal" "learned" "none" (issue 27). */
const char *attend_encoder_name(attend_encoder_kind kind);
int attend_encoder_from_name(const char *name);
const char *attend_positions_name(attend_positions p);
int attend_positions_from_name(const char *name);
/* The encoder output width E of a configuration (2 enc_hidden for RNN, emb
 * for TRANSFORMER and CONV; the width dot scores need dec_hidden to equal); 0 for
 * NULL or an unknown encoder kind. Thread-safe. */
int attend_model_encoder_width(const attend_model_config *cfg);

/* The configuration as a JSON object string (malloc'ed; caller frees) and back
 * (every field required, values range-checked by attend_model_config_check). */
attend_status attend_model_config_to_json(const attend_model_config *cfg, char **json, attend_error *err);
attend_status attend_model_config_from_json(attend_model_config *cfg, const char *json, size_t len,
                                            attend_error *err);

/* The first field (in the configuration JSON's order) in which a and b
 * differ: 1 with its JSON name in field [32] and both values as the JSON
 * spells them in va, vb [32] (each may be NULL), else 0. The capacities
 * (max_batch, max_src_len, max_tgt_len) are compared only when capacities is
 * nonzero. Thread-safe. */
int attend_model_config_diff(const attend_model_config *a, const attend_model_config *b, int capacities,
                             char field[32], char va[32], char vb[32]);

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
 * Training options beyond the optimizer (issues 13 and 14). All zero, the
 * default, is training as before. Set before the first step; a checkpoint
 * records every non-zero option and resuming with another value is refused
 * naming it.
 */
typedef struct {
    double dropout;          /* [0,1): inverted dropout (off in evaluation and decoding) */
    double label_smoothing;  /* [0,1): ε of PyTorch's F.cross_entropy(label_smoothing=ε) */
    double sampling_prob;    /* [0,1]: scheduled sampling, the probability of feeding the model's own
                                previous prediction instead of the reference */
    long sampling_ramp;      /* >= 0: steps over which that probability rises linearly from 0 (0: at once) */
    double coverage_loss;    /* >= 0: λ of the coverage loss Σ_j min(α_tj, cov_tj) */
    double guided_alignment; /* >= 0: λ of the cross-entropy to the data's alignments */
    /* Added in issue 31: Wiegreffe & Pinter 2019's training-time tests (attend_forward_options: the same
     * fields). The reference model is not recorded in checkpoints (the two options are): give it again
     * when resuming. It must outlive the trainer and not be trained by it. */
    attend_model *reference;  /* the base model the two options below read (NULL: none) */
    double frozen_attention;  /* 0 or 1: the reference's attention weights in place of the model's own */
    double adversarial;       /* >= 0: λ of the adversarial loss TVD − λ JSD to the reference (0: off) */
} attend_train_options;

/* Checks and sets o (copied); ATTEND_ERR_ARG naming the field for a value out
 * of range or an option the model or data cannot use. */
attend_status attend_trainer_set_options(attend_trainer *tr, const attend_train_options *o, attend_error *err);
/* The trainer's options (all zero unless set); NULL for a NULL trainer. */
const attend_train_options *attend_trainer_options(const attend_trainer *tr);

/* ---------------------------------------------------- what combines with what */
/*
 * The combination rules of the model's mechanisms and training options, as
 * the mechanisms declare them (one place: the library's checks, the command
 * line and the sweep all read this list). A rule's feature is a field of
 * attend_model_config ("coverage", "copy", "monotonic", "normalizer": on when
 * not zero) or of attend_train_options ("label_smoothing", "sampling_prob",
 * "coverage_loss", "guided_alignment": on when > 0). The feature needs a
 * decoder with attention (ATTEND_RULE_ATTENTION), a decoder with a target
 * vocabulary (ATTEND_RULE_VOCABULARY: not a pointer), the additive score
 * (ATTEND_RULE_ADDITIVE), or excludes the feature `other`
 * (ATTEND_RULE_EXCLUDES). text is the message, with {f} where the feature and
 * {o} where the other side (a decoder, a score or a feature) go, as the
 * caller names them (attend_feature_rule_format).
 */
typedef enum {
    ATTEND_RULE_ATTENTION = 0,
    ATTEND_RULE_VOCABULARY = 1,
    ATTEND_RULE_ADDITIVE = 2,
    ATTEND_RULE_EXCLUDES = 3
} attend_rule_kind;

typedef struct {
    const char *feature;
    attend_rule_kind kind;
    const char *other; /* ATTEND_RULE_EXCLUDES: the other feature; else NULL */
    const char *text;
} attend_feature_rule;

/* The rules: count, and rule i (NULL outside [0, count)). */
int attend_feature_rule_count(void);
const attend_feature_rule *attend_feature_rule_get(int i);
/* The first rule cfg (and t: NULL for no training option) breaks, or -1
 * (also for a NULL cfg or an unknown decoder). */
int attend_feature_rule_broken(const attend_model_config *cfg, const attend_train_options *t);
/* The rule's text with {f} and {o} replaced by f and o, into buf [cap]
 * (truncated, always terminated); returns its length. */
size_t attend_feature_rule_format(const attend_feature_rule *r, const char *f, const char *o, char *buf, size_t cap);

/* The training options every mechanism declares (attend_train_options'
 * fields, in the order checkpoints record them): count, and option i's name
 * with its value in t (*value may be NULL; t NULL: 0); NULL outside [0, count). */
int attend_train_option_count(void);
const char *attend_train_option_get(const attend_train_options *t, int i, double *value);

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
attend_status attend_trainer_resume(attend_trainer *tr, const char *path, attend_error *err)
    ATTEND_DEPRECATED("attend_trainer_restore with NULL options");

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
                                            attend_error *note, attend_error *err)
    ATTEND_DEPRECATED("attend_trainer_restore with attend_restore_options");

/* attend_trainer_resume_checked's options with a size (ATTEND_OPTIONS_INIT),
 * so they can grow: the same fields. */
typedef struct {
    size_t size; /* sizeof(attend_restore_options) */
    const attend_vocab *src_vocab;
    const attend_vocab *tgt_vocab;
    attend_tokenizer tok;
    int anyway;
} attend_restore_options;

/* Restores a checkpoint into tr (what attend_trainer_resume_checked
 * describes) with options o; o NULL: the trainer's own fingerprint only
 * (vocabularies not compared, differences refused), as attend_trainer_resume.
 * note may be NULL. */
attend_status attend_trainer_restore(attend_trainer *tr, const char *path, const attend_restore_options *o,
                                     attend_error *note, attend_error *err);

/* A caller's own state carried in the trainer's checkpoints (issue 28: the
 * command's early-stopping state), so that a resumed run knows everything the
 * interrupted one had decided. text (UTF-8, at most 4096 bytes; NULL clears
 * it) is copied; attend_trainer_save writes it as metadata "attend.caller",
 * attend_trainer_resume[_checked] restores it (NULL when the checkpoint has
 * none: an older one, or none was set). The library never reads it.
 * ATTEND_ERR_ARG for too long or invalid UTF-8 text, ATTEND_ERR_ALLOC. */
attend_status attend_trainer_set_caller_state(attend_trainer *tr, const char *text, attend_error *err);
/* The text, owned by the trainer (valid until the next set or resume); NULL when none. */
const char *attend_trainer_caller_state(const attend_trainer *tr);

/* The run's fingerprint: FNV-1a 64 (16 hex digits and a NUL into out [17]) of
 * what a checkpoint records of the run in "attend.train" (optimizer
 * configuration, batch, seed, the data's fingerprint, the training options,
 * the gradient shards): two trainers of the same data and options have the
 * same fingerprint. The training commands store it in the model files they
 * write (metadata "attend.run", attend_model_save_meta). */
void attend_trainer_fingerprint(const attend_trainer *tr, char out[17]);

/* attend_model_save with extra metadata pairs (at most 4; keys other than the
 * file's own attend.format, attend.config, attend.tokenizer, attend.src_vocab
 * and attend.tgt_vocab, which are ATTEND_ERR_ARG). Read them back with
 * attend_st_open + attend_st_metadata. */
attend_status attend_model_save_meta(const attend_model *m, const char *path, const attend_vocab *src_vocab,
                                     const attend_vocab *tgt_vocab, attend_tokenizer tok, const attend_st_meta *meta,
                                     int n_meta, attend_error *err);

#ifdef __cplusplus
}
#endif

#endif /* ATTEND_SEQ2SEQ_H */
