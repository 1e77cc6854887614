/*
 * extension.h — the one interface of a model mechanism (an extension):
 * coverage, copy, monotonic attention, the sparse normalisers, guided
 * alignment, dropout, label smoothing and scheduled sampling, each in its own
 * file src/seq2seq/extensions/<name>.c defining `const at_ext_ops
 * at_ext_<name>`, registered by one line in extension.c. The model, the
 * encoder, decoding, the beam, the trainer and the model files reach them
 * only through the dispatchers below (at_ext_*), which call the hook of every
 * extension attached to the model, in registry order, and name none of them.
 *
 * An extension declares:
 *   - its configuration keys (fields of attend_model_config, in the config
 *     JSON only when not zero) and its training options (fields of
 *     attend_train_options and attend_forward_options: ranges, checkpoint
 *     records, the trainer's per-step values);
 *   - the combination rules it takes part in (attend_feature_rule: read by the
 *     library's checks, the command line and the sweep);
 *   - its tensors (at a place in the file order), buffers, ids and the rows a
 *     beam search must replicate or reorder (at_act_rows);
 *   - the hooks it needs in a pass; a hook left NULL does nothing.
 *
 * Dimension letters: see state.h.
 */
#ifndef ATTEND_SEQ2SEQ_EXTENSION_H
#define ATTEND_SEQ2SEQ_EXTENSION_H

#include "seq2seq/state.h"

/* Where in the teacher-forced pass a tensor may be transformed (the numbers
 * are dropout's sites in its mask hash: docs/FORMAT.md keeps them). */
enum {
    AT_SITE_SRC_EMB = 1,   /* the source embeddings emb_src [N,S,D] (rows first) */
    AT_SITE_DEC_IN = 2,    /* the decoder's input embeddings emb_tgt [T,N,D] (positions first) */
    AT_SITE_FEAT = 3,      /* the output features feat [N,T,F] (rows first) */
    AT_SITE_ENC_LAYER = 16 /* + l: the input of encoder layer l >= 1 [N,S,E] */
};

/* Where an extension's tensors go in the file order. */
enum {
    AT_PARAMS_ATTENTION = 0, /* after the attention's score tensors */
    AT_PARAMS_OUTPUT = 1     /* after the output layer */
};

/* A configuration key: an int field of attend_model_config at `offset`,
 * written to the config JSON as `key` only when not zero. name == NULL: a
 * flag (0 or 1); else the value's name (from_name back, values 0..max). */
typedef struct {
    const char *key;
    size_t offset;
    const char *(*name)(int v);
    int (*from_name)(const char *s);
    int max;
    const char *values; /* the values for a message: "softmax (0), sparsemax (1) or entmax15 (2)" */
} at_ext_key;

/* A training option: a field of attend_train_options (train_offset) and of
 * attend_forward_options (fwd_offset, or AT_NO_FIELD), a double in [0, hi]
 * ([0, hi) when hi_open; hi = HUGE_VAL: no bound), or a long >= 0 (is_long;
 * trainer only). The checkpoint records each one that is not zero, by name. */
#define AT_NO_FIELD ((size_t)-1)
typedef struct {
    const char *name;
    size_t train_offset;
    size_t fwd_offset;
    double hi;
    int hi_open;
    int is_long;
    int persists; /* a trainer's value stays on the model after its steps (attend_model_forward,
                     the getters), as it did before options were passed per call */
    int reads_alignments; /* when not zero, the training data's alignments are part of its fingerprint */
} at_ext_option;

typedef struct at_ext_ops {
    const char *name;
    size_t state_size; /* bytes of its state (at_ext_state), zeroed at create */

    /* -------------------------------------------------------- configuration */
    const at_ext_key *keys;
    int nkeys;
    const at_ext_option *options;
    int noptions;
    const attend_feature_rule *rules; /* the rules where it is the feature */
    int nrules;
    /* its feature `feature` (named as in rules) is on: in c (model features),
     * or in t (training features; t may be NULL: off) */
    int (*feature_on)(const char *feature, const attend_model_config *c, const attend_train_options *t);
    /* attached to a model of this configuration (NULL: always) */
    int (*attached)(const attend_model_config *c);
    /* the trainer's forward options of step `step` of a run seeded `seed` from t */
    void (*step_options)(attend_forward_options *f, const attend_train_options *t, uint64_t seed, long step);
    /* checks of options against the model and data beyond ranges and rules (d NULL: a forward's) */
    attend_status (*check_options)(attend_model *m, const attend_train_options *t, const attend_dataset *d,
                                   const char *who, attend_error *err);

    /* --------------------------------------------------------------- model */
    void (*layout_params)(at_param_layout *L, int where);
    void (*layout_acts)(attend_model *m, at_act_layout *L);
    void (*init)(attend_model *m);                            /* after create */
    void (*clone)(attend_model *dst, const attend_model *src); /* dst's weights already copied */
    /* after a file's weights: its vocabularies (tv NULL for a pointer model) */
    attend_status (*load)(attend_model *m, const attend_vocab *sv, const attend_vocab *tv, attend_error *err);
    void (*release)(attend_model *m);
    /* step t of row n of a teacher-forced batch has an input or output id
     * beyond the target vocabulary: 1 when this extension accepts the two,
     * else 0 (the decoder kind's error), or *st and err set (its own) */
    int (*accepts_targets)(const attend_model *m, const attend_batch *b, int n, int t, attend_error *err,
                           attend_status *st);

    /* -------------------------------------------------------------- a pass */
    /* attend_forward, after the batch's check */
    attend_status (*forward_begin)(attend_model *m, const attend_batch *b, attend_error *err);
    /* after the encoder (src [N,S], src_len [N]) */
    void (*begin)(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S);
    /* the values at `site` change in this pass (no per-token projection table) */
    int (*transforms)(const attend_model *m, int site);
    /* x [A,B,W] at site (rows the first dimension or the second): forward,
     * and the same for its gradient in the backward */
    void (*site)(const attend_model *m, attend_real *x, int A, int B, int W, int rows_first, int site);
    /* one position pos of N rows, x [N,W] (what site does to that slice) */
    void (*site_rows)(const attend_model *m, attend_real *x, int N, int pos, int W, int site);
    /* the factor of one element at site, row `row` of the batch, position pos (1 when untouched) */
    attend_real (*site_factor)(const attend_model *m, int site, long row, long pos, long elem);
    /* the decoder inputs are chosen step by step in this pass, feed(t) before step t >= 1 */
    int (*feeds)(const attend_model *m);
    void (*feed)(attend_model *m, int t, int N, int T);
    /* step t's scores [N,S] from query q [N,Hd] (1 when it computed them) and their backward */
    int (*scores)(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *scores, attend_real *saved);
    int (*scores_backward)(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *dq,
                           attend_real *saved);
    /* step t's weights from scores[t] (1 when it computed them) and their backward (acts.dweights ->
     * acts.dscores, 1 when it did it) */
    int (*weights)(attend_model *m, int t, int N, int S);
    int (*weights_backward)(attend_model *m, int t, int N, int S);
    /* after step t's weights (and the weight hook) */
    void (*weights_after)(attend_model *m, int t, int N, int S);
    /* step t's attention backward: before the context's (acts.dctx, dweights +=), and after it (dweights +=) */
    void (*context_backward)(attend_model *m, int t, int N, int S);
    void (*weights_grad)(attend_model *m, int t, int N, int S);
    /* after the output layer's log-probabilities of a teacher-forced pass */
    void (*output)(attend_model *m, const int32_t *tgt_out, const int32_t *tgt_len, int N, int S, int T);
    /* the loss and prediction of counted step t of row n from log-probs lp
     * [width] (-inf where impossible), target y: 1 when it computed them */
    int (*token_loss)(const attend_model *m, int n, int t, int T, const attend_real *lp, int width, int y,
                      double *loss, int *best);
    /* z [V] holds log-probs of step t of row n (vocabulary rows): dlogits in place, 1 when it did it */
    int (*token_grad)(const attend_model *m, int n, int t, int N, attend_real *z, int V, int y, attend_real inv);
    /* dscores [S] of a row of position log-probs lp [S] (-inf: masked), target y: 1 when it did it */
    int (*position_grad)(const attend_model *m, attend_real *dscores, const attend_real *lp, int S, int y,
                         attend_real inv);
    /* a term added to the loss of the last teacher-forced steps (its sum over them) */
    double (*loss)(attend_model *m, int N, int S, int T);
    /* backward of step t, before the decoder kind's */
    void (*step_backward)(attend_model *m, int t, int N, attend_real inv);
    /* decoding: step t's output distribution [N,*W] in place of the output layer's logits (now in
     * acts.step_logits [N,V]): log-probabilities, or NULL (the logits stand) */
    const attend_real *(*dist)(attend_model *m, int t, int N, int S, int *W);

    /* ------------------------------------------------------------ decoding */
    attend_status (*check_decode)(attend_model *const *models, int M, const attend_decode_options *o,
                                  const char *who, attend_error *err);
    /* added to a finished hypothesis's score from its attention history hist
     * [steps,S] and, when last != NULL, one more step */
    double (*hyp_score)(const attend_decode_options *o, const attend_real *hist, int steps, const attend_real *last,
                        int S);
} at_ext_ops;

/* extension.c: the registry */
extern const at_ext_ops *const at_exts[];
extern const int at_ext_count;

/* The state of extension e in m (NULL when e is not attached). */
void *at_ext_state(const attend_model *m, const at_ext_ops *e);

/* ---------------------------------------------------- dispatchers (extension.c) */

/* configuration */
attend_status at_ext_config_check(const attend_model_config *c, attend_error *err);
/* every option of o (attend_train_options; trainer != 0) or of f (forward options) in range */
attend_status at_ext_options_range(const attend_train_options *t, const attend_forward_options *f, const char *who,
                                   attend_error *err);
/* the first rule broken by cfg and t (NULL: no training features): its index, or -1 */
int at_ext_rule_broken(const attend_model_config *c, const attend_train_options *t);
/* the message of broken rule i with the library's names */
attend_status at_ext_rule_fail(const attend_model_config *c, int i, const char *who, attend_error *err);
attend_status at_ext_check_options(attend_model *m, const attend_train_options *t, const attend_dataset *d,
                                   const char *who, attend_error *err);
void at_ext_step_options(attend_forward_options *f, const attend_train_options *t, uint64_t seed, long step,
                         long row0);
/* an option set in t reads the training data's alignments */
int at_ext_reads_alignments(const attend_train_options *t);
/* The trainer's values of the options that persist into the model's defaults. */
void at_ext_persist(attend_forward_options *defaults, const attend_forward_options *f);
/* a forward's options as training options (the rules and model checks read those) */
void at_ext_train_view(attend_train_options *t, const attend_forward_options *f);

/* model */
void at_ext_layout_params(at_param_layout *L, int where);
void at_ext_layout_acts(attend_model *m, at_act_layout *L);
size_t at_ext_state_size(const attend_model_config *c);
void at_ext_place_state(attend_model *m, unsigned char *mem);
void at_ext_init(attend_model *m);
void at_ext_clone(attend_model *dst, const attend_model *src);
attend_status at_ext_load(attend_model *m, const attend_vocab *sv, const attend_vocab *tv, attend_error *err);
void at_ext_release(attend_model *m);
/* 1 when an extension accepts step t of row n's ids beyond the vocabulary (else 0); *st != OK when it
 * refuses them with a message */
int at_ext_accepts_targets(const attend_model *m, const attend_batch *b, int n, int t, attend_error *err,
                           attend_status *st);

/* a pass */
attend_status at_ext_forward_begin(attend_model *m, const attend_batch *b, attend_error *err);
void at_ext_begin(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S);
int at_ext_transforms(const attend_model *m, int site);
void at_ext_site(const attend_model *m, attend_real *x, int A, int B, int W, int rows_first, int site);
void at_ext_site_rows(const attend_model *m, attend_real *x, int N, int pos, int W, int site);
attend_real at_ext_site_factor(const attend_model *m, int site, long row, long pos, long elem);
int at_ext_feeds(const attend_model *m);
void at_ext_feed(attend_model *m, int t, int N, int T);
int at_ext_scores(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *scores, attend_real *saved);
int at_ext_scores_backward(attend_model *m, int t, int N, int S, const attend_real *q, attend_real *dq,
                           attend_real *saved);
int at_ext_weights(attend_model *m, int t, int N, int S);
int at_ext_weights_backward(attend_model *m, int t, int N, int S);
void at_ext_weights_after(attend_model *m, int t, int N, int S);
void at_ext_context_backward(attend_model *m, int t, int N, int S);
void at_ext_weights_grad(attend_model *m, int t, int N, int S);
void at_ext_output(attend_model *m, const int32_t *tgt_out, const int32_t *tgt_len, int N, int S, int T);
int at_ext_token_loss(const attend_model *m, int n, int t, int T, const attend_real *lp, int width, int y, double *loss,
                      int *best);
int at_ext_token_grad(const attend_model *m, int n, int t, int N, attend_real *z, int V, int y, attend_real inv);
int at_ext_position_grad(const attend_model *m, attend_real *dscores, const attend_real *lp, int S, int y,
                         attend_real inv);
/* *loss += each extension's term, in registry order */
void at_ext_loss(attend_model *m, int N, int S, int T, double *loss);
void at_ext_step_backward(attend_model *m, int t, int N, attend_real inv);
const attend_real *at_ext_dist(attend_model *m, int t, int N, int S, int *W);

/* decoding */
attend_status at_ext_check_decode(attend_model *const *models, int M, const attend_decode_options *o, const char *who,
                                  attend_error *err);
double at_ext_hyp_score(const attend_decode_options *o, const attend_real *hist, int steps, const attend_real *last,
                        int S);

#endif
