/*
 * encoder_kind.h — the one internal interface of an encoder kind
 * (encoders/<kind>.c): what turns the source embeddings into the saved states
 * the decoder attends over. The recurrent encoder (rnn.c) is the first kind;
 * encoder.c runs whichever the model has (m->enc) around it: the source
 * embeddings and their mask before, the bridge to the decoder's first state
 * and the attention keys after. Not installed.
 *
 * Adding an encoder kind: a new file encoders/<kind>.c defining
 * `const at_encoder_ops at_encoder_<kind>`, one line in encoders/registry.c
 * (and, for a configuration to choose it, its name in the config JSON).
 *
 * Dimension letters: see state.h.
 */
#ifndef ATTEND_ENCODER_KIND_H
#define ATTEND_ENCODER_KIND_H

#include "seq2seq/state.h"

/* A configuration key of a kind: an int field of attend_model_config at
 * `offset`, written to the config JSON as `key` only when not zero; as a name
 * (name/from_name) or, when name is NULL, as a number. Ranges: the kind's
 * check. */
typedef struct {
    const char *key;
    size_t offset;
    const char *(*name)(int v);
    int (*from_name)(const char *s);
} at_encoder_key;

struct at_encoder_ops {
    const char *name;
    size_t state_size; /* bytes of its own state (m->enc_state), zeroed at create */
    /* its configuration: keys (beyond the fields every model has), their
     * check (and the fields it reads: emb, enc_hidden, enc_layers; the
     * message names the field), the output width E, and a lower bound on
     * its parameter count (the loader's size check, io/model_io.c) */
    const at_encoder_key *keys;
    int nkeys;
    attend_status (*check)(const attend_model_config *c, attend_error *err);
    int (*width)(const attend_model_config *c);
    double (*min_params)(const attend_model_config *c);
    /* its tensors (after the embeddings, before the bridge) */
    void (*layout_params)(at_param_layout *L);
    /* its buffers; it points acts.enc_top [N,S,E] at its output */
    void (*layout_acts)(attend_model *m, at_act_layout *L);
    /* from acts.emb_src [N,S,D] (src [N,S] and src_len [N] for what reads ids
     * or lengths): acts.enc_top [N,S,E] (padding rows 0) and acts.fin_cat
     * [N,E], the summary the bridge reads */
    void (*forward)(attend_model *m, const int32_t *src, const int32_t *src_len, int N, int S);
    /* from acts.denc [N,S,E] (d enc_top) and acts.dfin [N,E] (d fin_cat): its
     * gradients, and d emb_src into acts.demb [N,S,D]; returns 0 when it gave
     * the source embeddings their gradient itself (a per-token table) */
    int (*backward)(attend_model *m, int N, int S);
    /* optional (self-attention kinds): after forward(N, S), layer l's (0-based)
     * attention weights [N,H,S,S] (query rows, key columns), H = cfg.heads */
    const attend_real *(*self_weights)(const attend_model *m, int l, int N, int S);
};

/* registry.c: the encoder kinds, at their attend_encoder_kind values */
extern const at_encoder_ops *const at_encoders[];
extern const int at_encoder_count;

#endif
