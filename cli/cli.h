/* cli.h — the `attend` command's subcommands. Each returns the process exit
 * status (0 ok, 1 failure of the work, 2 bad usage). Only the CLI prints. */
#ifndef ATTEND_CLI_H
#define ATTEND_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "args.h"
#include "options.h"

int cmd_explain(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_g2p(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_align(int argc, char **argv);
int cmd_intervene(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
int cmd_readout(int argc, char **argv);
int cmd_trial(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_m2m(int argc, char **argv);
/* `attend g2p`'s subcommands (cli/g2p_train.c, cli/g2p_eval.c) */
int cmd_g2p_data(int argc, char **argv);
int cmd_g2p_train(int argc, char **argv);
int cmd_g2p_eval(int argc, char **argv);
int cmd_g2p_bench(int argc, char **argv);
int cmd_g2p_distill(int argc, char **argv); /* cli/g2p_distill.c */

/* ------------------------------------------- training, shared with demo */
/* Everything `attend train` takes; train_opts_init sets the defaults its
 * --help lists. */
typedef struct {
    cli_data_opts data;
    int cell, decoder, score;          /* attend_*_kind; decoder -1: from the data */
    int emb, hidden, layers, dec_hidden, attn; /* dec_hidden 0: 128, or 2*hidden for dot scores */
    int steps, batch, optimizer;
    double lr;                         /* 0: 3e-3 for Adam, 0.1 for SGD */
    double clip, min_lr, weight_decay, momentum;
    int warmup, decay;                 /* -1: from --steps (cli_warmup_for; the rest) */
    uint64_t seed;
    const char *out;                   /* model file; NULL: not saved */
    const char *checkpoint, *resume;
    int checkpoint_every, eval_every, log_every; /* the first two -1: from --steps */
    int max_nonfinite;                 /* stop after this many skipped steps in a row; 0 = never */
    int write_special;                 /* --write-special: --out may be a device or FIFO, written in place */
    int pointer_repeat;                /* --pointer-repeat: a pointer model may choose a position twice */
    int resume_anyway;                 /* --resume-anyway: resume despite a different data/options fingerprint */
    int overwrite;                     /* --overwrite: replace an existing --checkpoint, or another run's --out
                                          of a --select run */
    int dec_layers;                    /* --dec-layers: stacked decoder layers (0: one) */
    int grad_shards;                   /* --grad-shards: gradient shards per step (cli/mpirun.h); 0: one per rank */
    int coverage;                      /* --coverage: the coverage input of the additive score (model flag) */
    attend_train_options topt;         /* --dropout, --label-smoothing (cli/train_options.h), --sampling-* */
    int patience;                      /* --patience: evaluations without a better dev score that stop the run;
                                          -1: not given (0: never stop) */
    int select;                        /* --select: TRAIN_SELECT_*, the dev score of the best model; -1: not given
                                          (no --patience or --select: --out is the last model) */
    int monotonic;                     /* --monotonic: monotonic attention (config monotonic) */
    int copy;                          /* --copy: the pointer-generator output (config copy) */
    int normalizer;                    /* --normalizer: attend_normalizer of the attention (0: softmax) */
    cli_encoder_opts enc;              /* --encoder and its settings (cli/options.h) */
    cli_wp_opts wp;                    /* --uniform-attention, --frozen-attention, --adversarial, --reference
                                          (cli/options.h) */
} train_opts;

/* --select: the dev score the best model is chosen by (attend_eval_stats) */
enum { TRAIN_SELECT_LOSS = 0, TRAIN_SELECT_TOKEN = 1, TRAIN_SELECT_SEQ = 2 };

void train_opts_init(train_opts *o);

/* What a finished run leaves for its caller (demo). */
typedef struct {
    attend_eval_stats dev; /* final evaluation */
    double seconds;        /* training time, evaluations excluded */
    double samples_per_s;
} train_result;

/* Runs a training as `attend train` does (printing as it goes; cmd names the
 * command in messages). Returns the exit status; res may be NULL. */
int train_run(const char *cmd, const train_opts *o, train_result *res);

#endif
