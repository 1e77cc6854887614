/*
 * options.h — the options `train`, `g2p train`, `demo` and `sweep` share,
 * defined once (options.c): name, value kind and bounds, the library feature
 * it turns on, and its --help text; each command states only its default.
 * And the one check of what combines: the library's rules
 * (attend_feature_rule), worded with these options' names.
 */
#ifndef ATTEND_CLI_OPTIONS_H
#define ATTEND_CLI_OPTIONS_H

#include <stdio.h>

#include "args.h"

#if defined(__GNUC__)
#define AT_PRINTF_CLI(a, b) __attribute__((format(printf, a, b)))
#else
#define AT_PRINTF_CLI(a, b)
/* The same rules for a sweep's models named by "+suffix": the message of the
 * first one cfg breaks ("+coverage with decoder none: ...") into msg [cap];
 * 0 when none is broken. */
int cli_rules_suffixes(const attend_model_config *cfg, char *msg, size_t cap);

#endif

typedef enum {
    CLI_OPT_INT,    /* int in [lo, hi] */
    CLI_OPT_LONG,   /* long in [lo, hi] */
    CLI_OPT_U64,    /* uint64_t */
    CLI_OPT_DOUBLE, /* double in [lo, hi], or [lo, hi) with hi_open */
    CLI_OPT_FLAG,   /* int set to 1, no value */
    CLI_OPT_STRING, /* const char * */
    CLI_OPT_PATH,   /* const char *, a file name: an empty one is a usage error (cli_path) */
    CLI_OPT_CHOICE  /* int from a name (from_name; choices lists them) */
} cli_opt_kind;

typedef struct {
    const char *name; /* "--emb" */
    cli_opt_kind kind;
    double lo, hi;
    int hi_open;
    int (*from_name)(const char *);
    const char *choices; /* "gru|lstm" */
    const char *feature; /* the library feature it turns on (attend_feature_rule), or NULL */
    const char *arg;     /* the value's word in --help: "N", "X", "NAME", "PATH" */
    const char *help;    /* what it does; lines after the first start with two spaces of indent */
} cli_option;

/* When p's current argument is shared option `name`: parses its value into
 * dst (the field of the option's kind), sets *rc (0, or 2 after a usage error
 * naming the option) and returns 1; else returns 0. */
int cli_opt(cli_parser *p, const char *name, void *dst, int *rc);

/* The --help lines of shared option `name`, its default dflt (NULL: none
 * shown) in parentheses, the description from column `col`. */
void cli_opt_usage(FILE *f, const char *name, const char *dflt, int col);

/* The option of the table, or NULL. */
const cli_option *cli_opt_find(const char *name);

/* The library's combination rules for a model configuration cfg and training
 * options t (NULL: none), worded with the command's options: the feature by
 * the option that turns it on (--coverage, --normalizer sparsemax, ...), a
 * decoder by --decoder NAME, or by the task that implies it (task_name, a
 * "--task sort" kind of string; NULL when the decoder was given). Returns 0,
 * or 2 after the usage error naming both sides. */
int cli_rules_check(const char *cmd, const attend_model_config *cfg, const attend_train_options *t,
                    const char *task_name);

/* The same rules for a sweep's models named by "+suffix": the message of the
 * first one cfg breaks ("+coverage with decoder none: ...") into msg [cap];
 * 0 when none is broken. */
int cli_rules_suffixes(const attend_model_config *cfg, char *msg, size_t cap);


/* ------------------------------------------- the encoder kind and its settings
 * (--encoder rnn|transformer|conv, --heads, --positions, --post-norm, --kernel,
 * --conv-relu): one implementation of their parsing, usage rules, the model
 * configuration they make and the model's description, for `train`, `demo`
 * and `g2p train`. */
typedef struct {
    int encoder;   /* --encoder: attend_encoder_kind (0: rnn) */
    int heads;     /* --heads: the transformer's heads; 0: not given (4) */
    int positions; /* --positions: attend_positions; -1: not given (sinusoidal) */
    int post_norm; /* --post-norm: the transformer's layer norm after the residual */
    int kernel;    /* --kernel: the conv encoder's kernel width; 0: not given (3) */
    int conv_relu; /* --conv-relu: the conv encoder's ReLU in place of the GLU */
} cli_encoder_opts;

/* Not given: an rnn encoder, every setting at its default. */
void cli_encoder_opts_init(cli_encoder_opts *e);

/* When p's current argument is one of the six options: parses it into e,
 * sets *rc (0, or 2 after a usage error) and returns 1; else returns 0. */
int cli_encoder_option(cli_parser *p, cli_encoder_opts *e, int *rc);

/* Their --help lines, the descriptions from column col. */
void cli_encoder_options_usage(FILE *f, int col);

/* The usage rules of the encoder settings with each other, with the decoder
 * kind (an attend_decoder_kind; -1: not given) and the embedding width emb:
 * a setting of another kind, an even kernel, heads not dividing emb, the
 * transformer decoder over another encoder. Returns 0, or 2 after the usage
 * error of cmd naming both sides. */
int cli_encoder_check(const char *cmd, const cli_encoder_opts *e, int decoder, int emb);

/* Fills mc's encoder, heads, positions, post_norm, kernel and conv_relu from
 * e (the defaults where not given). */
void cli_encoder_config(attend_model_config *mc, const cli_encoder_opts *e);

/* After mc's lengths are set: the rows of a learned positions table
 * (max_positions): the longest source, and a transformer decoder's steps. */
void cli_encoder_positions_capacity(attend_model_config *mc);

/* The capacities a model with a learned positions table can take: *S (its
 * sources; NULL: not asked) lowered to the table's rows, *L (a transformer
 * decoder's steps; NULL: not asked) to the rows less one (the BOS step).
 * Models without such a table: unchanged. */
void cli_positions_caps(const attend_model_config *c, int *S, int *L);

/* "model: <encoder>, <decoder>, emb E: P parameters" for m's configuration
 * (no newline: the caller ends the line). */
void cli_print_model(FILE *f, const attend_model *m);


/* ------------------------------------ Wiegreffe & Pinter's training options
 * (--uniform-attention, --frozen-attention, --adversarial L, --reference
 * MODEL): one implementation of their parsing, usage rules and reference
 * model for `train` and `g2p train`. */
typedef struct {
    int uniform;           /* --uniform-attention: config uniform_attention */
    int frozen;            /* --frozen-attention: attend_train_options.frozen_attention */
    double adversarial;    /* --adversarial L: attend_train_options.adversarial (0: off) */
    const char *reference; /* --reference MODEL: the base model; NULL: none */
} cli_wp_opts;

/* None given. */
void cli_wp_opts_init(cli_wp_opts *w);

/* When p's current argument is one of the four options: parses it into w,
 * sets *rc (0, or 2 after a usage error) and returns 1; else returns 0. */
int cli_wp_option(cli_parser *p, cli_wp_opts *w, int *rc);

/* The --help lines of --reference, --frozen-attention and --adversarial (the
 * training group; --uniform-attention is a model option: cli_opt_usage). */
void cli_wp_training_usage(FILE *f, int col);

/* mc->uniform_attention, t->frozen_attention and t->adversarial from w (either
 * may be NULL). */
void cli_wp_apply(const cli_wp_opts *w, attend_model_config *mc, attend_train_options *t);

/* Their usage rules: --frozen-attention and --adversarial need --reference,
 * --reference needs one of them, and a frozen-attention model cannot be chosen
 * by evaluations of its own attention: chooser names the option of cmd that
 * would (e.g. "--patience"), NULL when none is given. Returns 0, or 2 after the
 * usage error naming both sides. */
int cli_wp_check(const char *cmd, const cli_wp_opts *w, const char *chooser);

/* The reference model (*ref; NULL without --reference), loaded with mc's
 * capacities (max_batch, max_src_len, max_tgt_len) and checked against the
 * training data's configuration mc, vocabularies sv, tv and tokenizer tok
 * (data_name names that side in the message). Returns 0, or the exit status
 * after the message. */
int cli_wp_reference(const char *cmd, const cli_wp_opts *w, const char *data_name, const attend_model_config *mc,
                     const attend_vocab *sv, const attend_vocab *tv, attend_tokenizer tok, attend_model **ref);

#endif
