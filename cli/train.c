/*
 * train.c — `attend train`: data from a built-in task or TSV files, a model
 * sized from the data, attend_trainer steps with progress, periodic evaluation
 * and checkpoints, and the model file at the end. The library does the work;
 * this file parses options, calls it in order and prints.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attend.h"
#include "cli.h"
#include "mpirun.h"
#include "outputs.h"
#include "signals.h"
#include "train_loop.h"
#include "train_options.h"
#include "options.h"
#include "ensemble.h"

#define DEV_SEED_OFFSET 1 /* the dev set of a task uses --data-seed + 1 */

void train_opts_init(train_opts *o) {
    memset(o, 0, sizeof *o);
    cli_data_opts_init(&o->data);
    o->cell = ATTEND_CELL_GRU;
    o->decoder = -1;
    o->score = ATTEND_SCORE_ADDITIVE;
    o->emb = 32;
    o->hidden = 64;
    o->layers = 1;
    o->dec_hidden = 0;
    o->attn = 64;
    o->steps = 1000;
    o->batch = 64;
    o->optimizer = ATTEND_OPT_ADAM;
    o->lr = 0;
    o->clip = 1.0;
    o->seed = 1;
    o->out = "model.safetensors";
    o->warmup = o->decay = o->eval_every = o->checkpoint_every = -1; /* from --steps */
    o->log_every = 100;
    o->max_nonfinite = 100;
    o->patience = -1;
    o->select = -1;
    cli_encoder_opts_init(&o->enc);
}

static const char *const SELECT_NAMES[] = {"loss", "token", "seq"};
/* How a --select score reads in messages */
static const char *const SELECT_LABELS[] = {"dev loss", "dev greedy token accuracy", "dev greedy sequence accuracy"};

static int select_from_name(const char *name) {
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, SELECT_NAMES[i])) return i;
    return -1;
}

/* The selected value of an evaluation, and the score to minimise. */
static double select_value(int select, const attend_eval_stats *s) {
    return select == TRAIN_SELECT_LOSS ? s->loss : select == TRAIN_SELECT_TOKEN ? s->greedy_token_acc
                                                                                : s->greedy_seq_acc;
}
static double select_score(int select, const attend_eval_stats *s) {
    return select == TRAIN_SELECT_LOSS ? s->loss : -select_value(select, s);
}
static void print_select(int select, double v) { printf(select == TRAIN_SELECT_LOSS ? "%.6f" : "%.4f", v); }

/* a shared option's --help line (cli/options.c) at train's column */
static void opt_line(FILE *f, const char *name, const char *dflt) { cli_opt_usage(f, name, dflt, 23); }

static void train_usage(FILE *f) {
    char buf[96];
    fprintf(f,
            "usage: attend train (--task copy|reverse|sort|bag [task options] | --train FILE.tsv [--dev FILE.tsv])\n"
            "                    [model options] [training options] [--out MODEL.safetensors]\n"
            "\n"
            "Trains an attention-based encoder-decoder and saves it as a model file.\n"
            "\n"
            "data, built-in task (a dev set is generated with --data-seed + 1):\n"
            "  --task NAME          copy, reverse, sort (a pointer task: the output is the\n"
            "                       source positions in ascending order of their symbols), or\n"
            "                       bag (the source's symbols sorted: order-free)\n"
            "  --symbols N          distinct symbols, named a, b, ... (10)\n"
            "  --min-len N          shortest sequence (1)\n"
            "  --max-len N          longest sequence (10)\n"
            "  --count N            training pairs (10000)\n"
            "  --dev-count N        dev pairs (500)\n"
            "  --data-seed N        seed of the training pairs (1)\n"
            "data, TSV files (source<TAB>target per line, optionally <TAB>alignment: links i-j\n"
            "of source token i and target token j, 0-based, e.g. 0-0 1-2 2-1; vocabularies from\n"
            "the training file):\n"
            "  --train FILE         training pairs (- reads standard input; data may be a pipe)\n"
            "  --dev FILE           dev pairs (tokens unknown to the training data become <unk>;\n"
            "                       - reads standard input)\n"
            "  --tokenizer NAME     char (one token per character) or space (words) (char)\n"
            "  --skip-malformed     skip and count malformed lines instead of stopping at the first\n"
            "model:\n");
    opt_line(f, "--cell", "gru");
    opt_line(f, "--decoder", "bahdanau");
    fprintf(f, "  --pointer-repeat     a pointer model may choose a source position again (default:\n"
               "                       a chosen position is masked out, so outputs are permutations;\n"
               "                       the model file keeps the choice for decoding)\n");
    opt_line(f, "--score", "additive");
    opt_line(f, "--emb", "32");
    opt_line(f, "--hidden", "64");
    opt_line(f, "--layers", "1");
    cli_encoder_options_usage(f, 23);
    opt_line(f, "--dec-layers", "1");
    opt_line(f, "--dec-hidden", "128; for dot and scaled_dot the encoder width: 2 x --hidden, transformer --emb");
    opt_line(f, "--attn", "64");
    opt_line(f, "--coverage", NULL);
    opt_line(f, "--monotonic", NULL);
    opt_line(f, "--copy", NULL);
    opt_line(f, "--normalizer", "softmax");
    opt_line(f, "--uniform-attention", NULL);
    fprintf(f, "training:\n");
    opt_line(f, "--steps", "1000");
    opt_line(f, "--batch", "64");
    fprintf(f, "  --optimizer NAME     adam or sgd (adam)\n");
    opt_line(f, "--lr", "0.003 for adam, 0.1 for sgd");
    opt_line(f, "--clip", "1");
    snprintf(buf, sizeof buf, "a tenth of --steps, at most %d", CLI_WARMUP_MAX);
    opt_line(f, "--warmup", buf);
    fprintf(f, "  --decay N            cosine decay steps after the warm-up; 0 = constant (the\n"
               "                       steps after the warm-up)\n");
    opt_line(f, "--min-lr", "0");
    fprintf(f, "  --weight-decay X     L2 weight decay (0)\n"
               "  --momentum X         SGD momentum (0)\n");
    opt_line(f, "--seed", "1");
    opt_line(f, "--coverage-loss", NULL);
    opt_line(f, "--sampling-prob", NULL);
    opt_line(f, "--sampling-ramp", NULL);
    opt_line(f, "--guided-alignment", NULL);
    cli_wp_training_usage(f, 23);
    fprintf(f, "output:\n");
    opt_line(f, "--out", "model.safetensors");
    fprintf(f, "  --checkpoint PATH    checkpoint file (weights, optimizer, data position), written\n"
               "                       every --checkpoint-every steps and at the end\n"
               "  --checkpoint-every N steps between checkpoints (a tenth of --steps, at least %d;\n"
               "                       0: only at the end)\n"
               "  --resume PATH        continue from a checkpoint of the same data and options, up\n"
               "                       to --steps in total; the result is the same bit for bit. The\n"
               "                       checkpoint's fingerprint of the data and options must match\n"
               "                       (the schedule comes from --steps: to resume with another\n"
               "                       --steps, give --warmup and --decay)\n"
               "  --resume-anyway      resume although data or options differ (a warning names them)\n"
               "  --overwrite          replace an existing --checkpoint (without it, an existing\n"
               "                       checkpoint needs --resume), or with --select an existing --out\n"
               "                       that another run wrote\n"
               "  --write-special      --out may be a device, a FIFO or /dev/stdout (written in place,\n"
               "                       once, at the end; not with --select or --patience; with\n"
               "                       /dev/stdout the report goes to stderr); without it only a\n"
               "                       regular file is replaced. Every output is checked\n"
               "                       before training: writable, and not an input or another output\n"
               "  --eval-every N       evaluate on the dev set every N steps (a fifth of --steps, at\n"
               "                       least %d; 0: only at the end)\n",
            CLI_INTERVAL_MIN, CLI_INTERVAL_MIN);
    opt_line(f, "--log-every", "100; on a terminal a progress bar is redrawn instead");
    fprintf(f, "  --select WHAT        keep the best model by a dev score, evaluated every\n"
               "                       --eval-every steps and at the end: loss (teacher-forced),\n"
               "                       token or seq (greedy token or sequence accuracy). --out is\n"
               "                       then the best model, written (atomically) whenever an\n"
               "                       evaluation beats the best so far; --checkpoint stays the\n"
               "                       last state (loss when only --patience is given; needs --dev\n"
               "                       with --train; with --resume, --out's dev score is the one to\n"
               "                       beat)\n");
    opt_line(f, "--patience", NULL);
    fprintf(f, "  --max-nonfinite N    stop (exit 1, nothing saved) after N steps in a row whose loss\n"
               "                       or gradients are NaN/Inf; such steps are skipped and counted\n"
               "                       (100; 0: never stop)\n"
               "  --help               this message\n"
               "\n"
               "Progress goes to stderr, results (configuration, evaluations, where the model was\n"
               "saved) to stdout. SIGINT or SIGTERM stops the run after the step it is in: the\n"
               "checkpoint is written (without --checkpoint, --out: the model of that step, or the\n"
               "best so far with --select), and the command exits 130 or 143; a second signal\n"
               "stops it at once. --out and --checkpoint are locked for the run's life (PATH.lock):\n"
               "a second run writing either is refused, naming the process. Exit status: 0 ok,\n"
               "1 the work failed, 2 bad usage, 130/143 interrupted.\n");
    cli_train_options_usage(f);
    cli_mpi_usage(f);
}

/* The options left at -1 take their values from --steps (see --help). */
static void from_steps(train_opts *o) {
    if (o->warmup < 0) o->warmup = cli_warmup_for(o->steps);
    if (o->decay < 0) o->decay = o->steps > o->warmup ? o->steps - o->warmup : 0;
    if (o->eval_every < 0) o->eval_every = cli_eval_every_for(o->steps);
    if (o->checkpoint_every < 0) o->checkpoint_every = o->checkpoint ? cli_checkpoint_every_for(o->steps) : 0;
}

/* ------------------------------------------------------------- parsing */

static int parse(train_opts *o, int argc, char **argv, int *help) {
    cli_parser p;
    cli_init(&p, "train", argc, argv);
    int rc = 0;
    while (rc == 0 && cli_next(&p)) {
        int d = cli_data_option(&p, &o->data, "--train");
        if (d >= 0) rc = d;
        else if (cli_is_help(&p)) *help = 1;
        else if (cli_opt(&p, "--dropout", &o->topt.dropout, &rc) ||
                 cli_opt(&p, "--label-smoothing", &o->topt.label_smoothing, &rc) ||
                 cli_opt(&p, "--sampling-prob", &o->topt.sampling_prob, &rc) ||
                 cli_opt(&p, "--sampling-ramp", &o->topt.sampling_ramp, &rc) ||
                 cli_opt(&p, "--coverage-loss", &o->topt.coverage_loss, &rc) ||
                 cli_opt(&p, "--guided-alignment", &o->topt.guided_alignment, &rc) ||
                 cli_wp_option(&p, &o->wp, &rc) || cli_opt(&p, "--cell", &o->cell, &rc) ||
                 cli_opt(&p, "--decoder", &o->decoder, &rc) || cli_opt(&p, "--score", &o->score, &rc) ||
                 cli_opt(&p, "--emb", &o->emb, &rc) || cli_opt(&p, "--hidden", &o->hidden, &rc) ||
                 cli_opt(&p, "--layers", &o->layers, &rc) || cli_opt(&p, "--dec-layers", &o->dec_layers, &rc) ||
                 cli_opt(&p, "--dec-hidden", &o->dec_hidden, &rc) || cli_opt(&p, "--attn", &o->attn, &rc) ||
                 cli_opt(&p, "--normalizer", &o->normalizer, &rc) || cli_opt(&p, "--steps", &o->steps, &rc) ||
                 cli_opt(&p, "--batch", &o->batch, &rc) || cli_opt(&p, "--lr", &o->lr, &rc) ||
                 cli_opt(&p, "--clip", &o->clip, &rc) || cli_opt(&p, "--warmup", &o->warmup, &rc) ||
                 cli_opt(&p, "--min-lr", &o->min_lr, &rc) || cli_opt(&p, "--seed", &o->seed, &rc) ||
                 cli_opt(&p, "--out", &o->out, &rc) || cli_opt(&p, "--checkpoint", &o->checkpoint, &rc) ||
                 cli_opt(&p, "--checkpoint-every", &o->checkpoint_every, &rc) ||
                 cli_opt(&p, "--resume", &o->resume, &rc) || cli_opt(&p, "--monotonic", &o->monotonic, &rc) ||
                 cli_opt(&p, "--copy", &o->copy, &rc) || cli_opt(&p, "--coverage", &o->coverage, &rc) ||
                 cli_opt(&p, "--log-every", &o->log_every, &rc) || cli_opt(&p, "--grad-shards", &o->grad_shards, &rc) ||
                 cli_opt(&p, "--patience", &o->patience, &rc) || cli_encoder_option(&p, &o->enc, &rc))
            continue;
        else if (cli_is(&p, "--optimizer")) rc = cli_choice(&p, cli_optim_from_name, "adam|sgd", &o->optimizer);
        else if (cli_is(&p, "--decay")) rc = cli_int(&p, 0, 1000000000, &o->decay);
        else if (cli_is(&p, "--weight-decay")) rc = cli_double(&p, 0, 1e6, &o->weight_decay);
        else if (cli_is(&p, "--momentum")) rc = cli_double(&p, 0, 0.999999, &o->momentum);
        else if (cli_is(&p, "--resume-anyway")) rc = cli_flag(&p, &o->resume_anyway);
        else if (cli_is(&p, "--overwrite")) rc = cli_flag(&p, &o->overwrite);
        else if (cli_is(&p, "--pointer-repeat")) rc = cli_flag(&p, &o->pointer_repeat);
        else if (cli_is(&p, "--write-special")) rc = cli_flag(&p, &o->write_special);
        else if (cli_is(&p, "--eval-every")) rc = cli_int(&p, 0, 1000000000, &o->eval_every);
        else if (cli_is(&p, "--max-nonfinite")) rc = cli_int(&p, 0, 1000000000, &o->max_nonfinite);
        else if (cli_is(&p, "--select")) rc = cli_choice(&p, select_from_name, "loss|token|seq", &o->select);
        else rc = cli_unknown(&p);
    }
    return rc;
}

/* Usage rules that concern several options together. */
static int check_combination(const train_opts *o) {
    const cli_data_opts *d = &o->data;
    if (d->task < 0 && !d->tsv) return cli_usage_error("train", "give the data: --task NAME or --train FILE.tsv");
    if (d->task >= 0 && d->tsv) return cli_usage_error("train", "--task and --train exclude each other");
    if (d->tsv && d->dev && !strcmp(d->tsv, "-") && !strcmp(d->dev, "-"))
        return cli_usage_error("train", "--train - and --dev -: standard input can be read only once");
    if (d->task >= 0 && (d->dev || d->tokenizer >= 0 || d->skip_malformed))
        return cli_usage_error("train", "--dev, --tokenizer and --skip-malformed apply to --train, not --task");
    if (d->tsv && d->given_task_opts)
        return cli_usage_error("train",
                               "--symbols, --min-len, --max-len, --count, --dev-count and --data-seed apply to "
                               "--task, not --train");
    if (d->task >= 0 && d->min_len && d->max_len && d->min_len > d->max_len)
        return cli_usage_error("train", "--min-len %d is above --max-len %d", d->min_len, d->max_len);
    int sort = d->task == ATTEND_TASK_SORT;
    /* the encoder kind's settings, and the transformer decoder's encoder */
    int rc = cli_encoder_check("train", &o->enc, o->decoder, o->emb);
    if (rc) return rc;
    /* what combines with what: the library's rules, in these options' words */
    attend_model_config mc;
    memset(&mc, 0, sizeof mc);
    mc.decoder = o->decoder >= 0 ? o->decoder : sort ? ATTEND_DECODER_POINTER : ATTEND_DECODER_BAHDANAU;
    mc.score = o->score;
    mc.coverage = o->coverage;
    mc.copy = o->copy;
    mc.monotonic = o->monotonic;
    mc.normalizer = (attend_normalizer)o->normalizer;
    attend_train_options topt = o->topt;
    cli_wp_apply(&o->wp, &mc, &topt);
    rc = cli_rules_check("train", &mc, &topt, o->decoder < 0 && sort ? "--task sort" : NULL);
    if (rc) return rc;
    if (sort && o->decoder >= 0 && o->decoder != ATTEND_DECODER_POINTER)
        return cli_usage_error("train", "--task sort is a pointer task: it needs --decoder pointer");
    if (!sort && o->decoder == ATTEND_DECODER_POINTER)
        return cli_usage_error("train", "--decoder pointer outputs source positions: it needs --task sort");
    if (o->checkpoint_every > 0 && !o->checkpoint)
        return cli_usage_error("train", "--checkpoint-every needs --checkpoint PATH");
    if (o->resume_anyway && !o->resume) return cli_usage_error("train", "--resume-anyway needs --resume PATH");
    if (o->pointer_repeat && !sort) return cli_usage_error("train", "--pointer-repeat applies to --task sort");
    if ((o->patience >= 0 || o->select >= 0) && d->tsv && !d->dev)
        return cli_usage_error("train", "%s chooses by a dev score: give --dev FILE.tsv",
                               o->patience >= 0 ? "--patience" : "--select");
    rc = cli_wp_check("train", &o->wp,
                      o->patience >= 0 ? "--patience" : o->select >= 0 ? "--select" : o->eval_every > 0 ? "--eval-every"
                                                                                                      : NULL);
    if (rc) return rc;
    if (o->patience > 0 && o->eval_every == 0)
        return cli_usage_error("train", "--patience counts evaluations during training: --eval-every 0 has none");
    return 0;
}

/* ---------------------------------------------------------------- data */

typedef struct {
    attend_dataset *train, *dev;
    attend_vocab *src_vocab, *tgt_vocab; /* the same vocabulary for a task */
    attend_tokenizer tok;
    int pointer;
    int copy; /* --copy: dev targets may be copied ids */
} train_data;

static void data_free(train_data *td) {
    attend_dataset_free(td->train);
    attend_dataset_free(td->dev);
    if (td->tgt_vocab != td->src_vocab) attend_vocab_free(td->tgt_vocab);
    attend_vocab_free(td->src_vocab);
    memset(td, 0, sizeof *td);
}

static int load_data(const char *cmd, const cli_data_opts *d, train_data *td) {
    attend_error err = {0};
    int copy = td->copy;
    memset(td, 0, sizeof *td);
    td->copy = copy;
    if (d->task >= 0) {
        attend_task_config tc = {(attend_task)d->task, d->symbols ? d->symbols : 10, d->min_len ? d->min_len : 1,
                                 d->max_len ? d->max_len : 10, d->count ? d->count : 10000,
                                 d->have_data_seed ? d->data_seed : 1};
        if (!d->max_len && tc.min_len > tc.max_len) tc.max_len = tc.min_len;
        if (!d->min_len && tc.min_len > tc.max_len) tc.min_len = tc.max_len;
        attend_vocab *dev_vocab = NULL;
        if (attend_dataset_task(&td->train, &td->src_vocab, &tc, &err)) return cli_lib_fail(cmd, &err);
        td->tgt_vocab = td->src_vocab;
        tc.count = d->dev_count ? d->dev_count : 500;
        tc.seed += DEV_SEED_OFFSET;
        if (attend_dataset_task(&td->dev, &dev_vocab, &tc, &err)) return cli_lib_fail(cmd, &err);
        attend_vocab_free(dev_vocab); /* the same symbols, the same ids */
        td->tok = ATTEND_TOKENIZE_CHAR;
        td->pointer = d->task == ATTEND_TASK_SORT;
        printf("data: %s task, %d symbols, sequences of %d-%d symbols: %d training pairs (seed %llu), %d dev pairs "
               "(seed %llu)\n",
               cli_task_name(d->task), tc.symbols, tc.min_len, tc.max_len, attend_dataset_size(td->train),
               (unsigned long long)(tc.seed - DEV_SEED_OFFSET), attend_dataset_size(td->dev),
               (unsigned long long)tc.seed);
        return 0;
    }
    td->tok = d->tokenizer >= 0 ? (attend_tokenizer)d->tokenizer : ATTEND_TOKENIZE_CHAR;
    if (attend_vocab_create(&td->src_vocab, &err) || attend_vocab_create(&td->tgt_vocab, &err))
        return cli_lib_fail(cmd, &err);
    int rc = cli_read_tsv_copy(cmd, &td->train, d->tsv, td->src_vocab, td->tgt_vocab, 1, td->tok, d->skip_malformed,
                               td->copy);
    if (!rc && d->dev)
        rc = cli_read_tsv_copy(cmd, &td->dev, d->dev, td->src_vocab, td->tgt_vocab, 0, td->tok, d->skip_malformed,
                               td->copy);
    if (rc) return rc;
    printf("data: %s: %d training pairs, vocabularies of %d source and %d target symbols (%s tokenizer), "
           "sources up to %d and targets up to %d tokens",
           strcmp(d->tsv, "-") ? cli_vis(d->tsv) : "<stdin>", attend_dataset_size(td->train), attend_vocab_size(td->src_vocab) - 4,
           attend_vocab_size(td->tgt_vocab) - 4, attend_tokenizer_name(td->tok), attend_dataset_max_src_len(td->train),
           attend_dataset_max_tgt_len(td->train));
    if (td->dev) printf("; %s: %d dev pairs", strcmp(d->dev, "-") ? cli_vis(d->dev) : "<stdin>", attend_dataset_size(td->dev));
    printf("\n");
    return 0;
}

/* ------------------------------------------------------------- the run */

static void print_model(const attend_model *m, const train_opts *o) {
    cli_print_model(stdout, m);
    printf("\n");
    printf("training: %s lr %g", o->optimizer == ATTEND_OPT_ADAM ? "adam" : "sgd", o->lr);
    if (o->warmup) printf(", warm-up %d", o->warmup);
    if (o->decay) printf(", cosine decay %d to %g", o->decay, o->min_lr);
    if (o->weight_decay > 0) printf(", weight decay %g", o->weight_decay);
    if (o->optimizer == ATTEND_OPT_SGD && o->momentum > 0) printf(", momentum %g", o->momentum);
    if (o->topt.coverage_loss > 0) printf(", coverage loss %g", o->topt.coverage_loss);
    printf(", clip %g, batch %d, %d step%s, seed %llu", o->clip, o->batch, o->steps, o->steps == 1 ? "" : "s",
           (unsigned long long)o->seed);
    cli_train_options_print(stdout, &o->topt);
    printf("\n");
}

static int evaluate(const char *cmd, attend_model *m, const train_data *td, int batch, const char *label,
                    attend_eval_stats *s, train_loop *pg) {
    attend_error err = {0};
    const attend_dataset *d = td->dev ? td->dev : td->train;
    if (attend_model_evaluate(m, d, batch, td->dev ? 0 : 1000, s, &err)) {
        if (pg) train_loop_clear(pg);
        return cli_lib_fail(cmd, &err);
    }
    if (pg) train_loop_clear(pg);
    cli_print_eval(stdout, label, s);
    fflush(stdout);
    return 0;
}

/* Every file the run reads or writes, checked before any work: outputs
 * writable, none the same file as an input or another output. --resume and
 * --checkpoint may be one file (continuing a checkpoint in place). */
static int check_paths(const char *cmd, const train_opts *o) {
    return cli_check_train_files(cmd, "--train", o->data.tsv, o->data.dev, o->resume, o->checkpoint, o->out,
                                 o->write_special ? ATTEND_OUTPUT_ALLOW_SPECIAL : 0,
                                 "(--write-special writes a device or FIFO given as --out in place)");
}

/* Writes the model to --out (atomically; in place for a device or FIFO with
 * --write-special). run_fp (the run's fingerprint, metadata attend.run) is
 * given for a best model (--select, --patience), which a later run must
 * recognise as this run's; NULL for the last model, whose bytes then equal
 * attend_model_save's (the Python package's, tests/python). */
static int save_model(const char *cmd, const attend_model *m, const train_opts *o, const train_data *td,
                      const char *run_fp) {
    attend_error err = {0};
    char tmp[4096];
    const char *wp;
    int rc = cli_output_begin(cmd, o->out, tmp, sizeof tmp, &wp);
    if (rc) return rc;
    int bad = cli_save_model(m, wp, td->src_vocab, td->pointer ? NULL : td->tgt_vocab, td->tok, run_fp, &err) !=
              ATTEND_OK;
    if (bad) rc = cli_lib_fail(cmd, &err);
    if (cli_output_finish(cmd, o->out, wp, !bad)) rc = 1;
    return rc;
}

/* Resuming with --select from an older checkpoint (no early-stopping state):
 * 1 when --out is a model file that loads and evaluates on the dev set (into
 * *s), else 0 (no file yet, or another model: this run's first evaluation
 * then starts the selection). */
static int resume_best(const char *cmd, const train_opts *o, const train_data *td, const attend_model_config *mc,
                       attend_eval_stats *s) {
    struct stat sb;
    if (stat(o->out, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0;
    attend_error err = {0};
    attend_model_config cap;
    memset(&cap, 0, sizeof cap);
    cap.max_batch = mc->max_batch;
    cap.max_src_len = mc->max_src_len;
    cap.max_tgt_len = mc->max_tgt_len;
    attend_model *bm = NULL;
    int ok = attend_model_load(&bm, o->out, &cap, NULL, NULL, NULL, &err) == ATTEND_OK &&
             attend_model_evaluate(bm, td->dev ? td->dev : td->train, o->batch, td->dev ? 0 : 1000, s, &err) ==
                 ATTEND_OK;
    if (!ok)
        cli_error(cmd, "note: %s is not this run's best so far (%s): the first evaluation replaces it", o->out,
                  err.msg);
    attend_model_free(bm);
    return ok;
}

/* What the step hook of `attend train` needs. */
typedef struct {
    const char *cmd;
    attend_model *m;
    const train_opts *o;
    const train_data *td;
    attend_trainer *tr;
    attend_eval_stats *ev;
    int selecting;     /* --select or --patience: --out is the best model */
    train_state st;    /* the best so far, early stopping (cli/train_loop.h), carried in checkpoints */
    char run_fp[17];   /* attend_trainer_fingerprint, in the model files written */
    long checkpoint_step; /* the step of the last checkpoint written (-1: none by this run) */
    double trained_before; /* training seconds of the sessions before this one */
    train_loop *lp;
} run_hook;

/* "step S", or "before this run" for a resumed run's --out not beaten since
 * when the checkpoint did not record its step (an older checkpoint). */
static void best_when(const run_hook *h, char *buf, size_t n) {
    if (h->st.best.best_step == 0 && h->o->resume) snprintf(buf, n, "before this run");
    else snprintf(buf, n, "step %ld", h->st.best.best_step);
}

/* The selected score's value as printed (loss, or an accuracy). */
static double best_value(const run_hook *h) { return h->o->select == TRAIN_SELECT_LOSS ? h->st.best.best : -h->st.best.best; }

/* Writes the checkpoint with the run's early-stopping state. */
static int save_checkpoint(run_hook *h, train_loop *pg) {
    attend_error err = {0};
    char state[512];
    if (pg) h->st.trained_s = h->trained_before + pg->t_train;
    train_state_format(&h->st, state, sizeof state);
    const train_data *td = h->td;
    if (attend_trainer_set_caller_state(h->tr, state, &err) ||
        attend_trainer_save(h->tr, h->o->checkpoint, td->src_vocab, td->pointer ? NULL : td->tgt_vocab, td->tok,
                            &err)) {
        if (pg) train_loop_clear(pg);
        return cli_lib_fail(h->cmd, &err);
    }
    if (pg) train_loop_clear(pg);
    h->checkpoint_step = attend_trainer_steps(h->tr);
    printf("checkpoint: step %ld saved to %s\n", attend_trainer_steps(h->tr), cli_vis(h->o->checkpoint));
    fflush(stdout);
    return 0;
}

/* With --select / --patience: the evaluation at step just printed (h->ev)
 * against the best so far: a better one is saved to --out; *stop when the
 * patience has run out. */
static int select_best(run_hook *h, long step, int *stop) {
    const train_opts *o = h->o;
    int out_of_patience = 0;
    if (!train_best_update(&h->st.best, select_score(o->select, h->ev), step, &out_of_patience)) {
        if (out_of_patience) {
            char when[48];
            best_when(h, when, sizeof when);
            printf("early stop: no better %s for %d evaluations (--patience %d); the best: %s\n",
                   SELECT_LABELS[o->select], h->st.best.bad, o->patience, when);
            h->st.stopped = 1;
            *stop = 1;
        }
        fflush(stdout);
        return 0;
    }
    if (o->out) {
        int rc = save_model(h->cmd, h->m, o, h->td, h->run_fp);
        if (rc) return rc;
        memcpy(h->st.run, h->run_fp, sizeof h->st.run);
    }
    printf("best: step %ld, %s ", step, SELECT_LABELS[o->select]);
    print_select(o->select, select_value(o->select, h->ev));
    printf("%s%s\n", o->out ? ": saved to " : "", o->out ? cli_vis(o->out) : "");
    fflush(stdout);
    return 0;
}

/* After every step: an evaluation every --eval-every steps, then a checkpoint
 * every --checkpoint-every steps (after the evaluation, so that a checkpoint
 * holds every decision made at its step), but not at the last step (the
 * run's end does both). */
static int after_step(void *user, train_loop *lp, const attend_step_report *r, int *stop) {
    run_hook *h = user;
    const train_opts *o = h->o;
    long step = r->step, total = o->steps;
    int rc = 0;
    if (o->eval_every && step % o->eval_every == 0 && step < total) {
        char label[64];
        snprintf(label, sizeof label, "eval step %ld", step);
        rc = evaluate(h->cmd, h->m, h->td, o->batch, label, h->ev, lp);
        if (!rc && h->selecting) {
            rc = select_best(h, step, stop);
            *stop = cli_mpi_any(*stop); /* every rank evaluates here: one decision for all */
            h->st.stopped = *stop;
        }
    }
    if (!rc && o->checkpoint && o->checkpoint_every && step % o->checkpoint_every == 0 && step < total)
        rc = save_checkpoint(h, lp);
    return rc;
}

/* The early-stopping state of a resumed run: the checkpoint's, compared with
 * this run's options; an older checkpoint without one: the defaults, said
 * in a note. Returns 0, or the exit status after a message. */
static int resume_state(run_hook *h, const attend_model_config *mc, int *stopped) {
    const train_opts *o = h->o;
    const char *cmd = h->cmd;
    *stopped = 0;
    const char *text = attend_trainer_caller_state(h->tr);
    train_state was;
    if (!text) {
        if (h->selecting) {
            cli_error(cmd, "note: %s: an older checkpoint without the early-stopping state: assumed 0 evaluations "
                           "without improvement, not stopped, and --out's dev score as the best so far",
                      o->resume);
            attend_eval_stats bs;
            double best = INFINITY;
            if (o->out && resume_best(cmd, o, h->td, mc, &bs)) {
                best = select_score(o->select, &bs);
                printf("best so far: %s, %s ", cli_vis(o->out), SELECT_LABELS[o->select]);
                print_select(o->select, select_value(o->select, &bs));
                printf("\n");
            }
            cli_mpi_share(&best); /* rank 0's --out decides for all */
            h->st.best.best = best;
        }
        return 0;
    }
    if (train_state_parse(text, &was)) {
        cli_error(cmd, "%s: the checkpoint's early-stopping state is unreadable: '%.80s'", o->resume, text);
        return 1;
    }
    /* what decides when the run stops must be what it was */
    char diff[160] = "";
    if (strcmp(was.select, h->st.select))
        snprintf(diff, sizeof diff, "select is %s, in this run %s", was.select[0] ? was.select : "none",
                 h->st.select[0] ? h->st.select : "none");
    else if (was.patience != h->st.patience)
        snprintf(diff, sizeof diff, "patience is %d, in this run %d", was.patience, h->st.patience);
    else if (h->selecting && was.eval_every != h->st.eval_every)
        snprintf(diff, sizeof diff, "eval_every is %d, in this run %d", was.eval_every, h->st.eval_every);
    if (diff[0] && !o->resume_anyway) {
        cli_error(cmd, "%s: checkpoint's %s; resuming needs the same data and options", o->resume, diff);
        cli_error(cmd, "(--resume-anyway resumes all the same)");
        return 1;
    }
    if (diff[0]) cli_error(cmd, "warning: %s: resumed anyway: checkpoint's %s", o->resume, diff);
    h->trained_before = was.trained_s;
    memcpy(h->st.run, was.run, sizeof h->st.run);
    if (strcmp(was.select, h->st.select)) return 0; /* another score: the selection starts afresh */
    h->st.best = was.best;
    h->st.best.patience = h->st.patience;
    h->st.stopped = was.stopped && h->st.patience && was.best.bad >= h->st.patience;
    if (h->selecting && isfinite(h->st.best.best)) {
        char when[48];
        best_when(h, when, sizeof when);
        printf("best so far: %s, %s ", o->out ? cli_vis(o->out) : "(no --out)", SELECT_LABELS[o->select]);
        print_select(o->select, best_value(h));
        printf(" (%s, %d evaluation%s without improvement since)\n", when, h->st.best.bad,
               h->st.best.bad == 1 ? "" : "s");
    }
    *stopped = h->st.stopped;
    return 0;
}

/* A signal stopped the run between steps: the checkpoint when there is one,
 * else the model (unless --out is the best model, which it already holds),
 * and how to go on. Returns the exit status (130, 143) or 1. */
static int interrupted(run_hook *h, train_loop *lp, int sig) {
    const train_opts *o = h->o;
    long step = attend_trainer_steps(h->tr);
    int rc = 0;
    if (o->checkpoint && h->checkpoint_step != step) rc = save_checkpoint(h, lp);
    if (rc) return rc;
    if (o->checkpoint)
        printf("interrupted (%s) at step %ld: checkpoint %s holds step %ld; to go on, run the same command with "
               "--resume %s\n",
               cli_signal_name(sig), step, cli_vis(o->checkpoint), step, cli_vis(o->checkpoint));
    else if (o->out && !h->selecting) {
        if ((rc = save_model(h->cmd, h->m, o, h->td, NULL))) return rc;
        printf("interrupted (%s) at step %ld: the model of step %ld saved to %s (not resumable: --checkpoint PATH "
               "makes a run resumable)\n",
               cli_signal_name(sig), step, step, cli_vis(o->out));
    } else if (o->out && isfinite(h->st.best.best)) {
        char when[48];
        best_when(h, when, sizeof when);
        printf("interrupted (%s) at step %ld: %s holds the best model so far (%s); nothing else was saved "
               "(--checkpoint PATH makes a run resumable)\n",
               cli_signal_name(sig), step, cli_vis(o->out), when);
    } else
        printf("interrupted (%s) at step %ld: nothing was saved (no --checkpoint%s)\n", cli_signal_name(sig), step,
               o->out ? ", and no evaluation yet to choose a best model" : ", no --out");
    fflush(stdout);
    return cli_signal_status(sig);
}

int train_run(const char *cmd, const train_opts *opts, train_result *res) {
    train_opts o = *opts;
    from_steps(&o);
    if (o.wp.frozen) o.eval_every = 0; /* its own attention is not what it was trained with */
    attend_error err = {0};
    train_data td;
    attend_model *m = NULL, *ref = NULL;
    attend_trainer *tr = NULL;
    attend_lock *locks[2] = {NULL, NULL};
    memset(&td, 0, sizeof td);
    cli_signals_catch(); /* from here a signal is noted and the run stops cleanly between steps */
    cli_set_oom_hint(strcmp(cmd, "train") ? NULL /* demo: no option sizes it */
                                          : "lower --batch or the model's sizes (--emb, --hidden, --dec-hidden, --attn, "
                                            "--layers, --dec-layers)");
    /* first of all (a run killed early must still have done it): temporaries
     * left by killed runs; the writer would remove them silently */
    cli_clean_stale("checkpoint", o.checkpoint);
    cli_clean_stale("out", o.out);
    int rc = check_paths(cmd, &o);
    /* a best model is rewritten at each better evaluation and read back on
     * --resume: a device, a FIFO or standard output (--write-special) cannot be */
    if (!rc && (o.select >= 0 || o.patience >= 0) && o.out && attend_outfile_in_place(o.out))
        rc = cli_usage_error(cmd, "--out '%s' is written in place (a device, a FIFO or standard output), and %s "
                                  "rewrites --out at each better evaluation and reads it back on --resume: give a "
                                  "file as --out",
                             o.out, o.select >= 0 ? "--select" : "--patience");
    /* never replace work without being asked: an existing checkpoint needs --resume or --overwrite */
    if (!rc) rc = cli_check_checkpoint_reuse(cmd, o.checkpoint, o.resume, o.overwrite);
    /* one writer per output, for the run's life */
    const char *outs[2] = {o.checkpoint, o.out};
    if (!rc) rc = cli_lock_outputs(cmd, outs, 2, locks);
    /* --out /dev/stdout (--write-special): the model's bytes alone on stdout, the report on stderr */
    if (!rc) rc = cli_stdout_claim(cmd, outs + 1, 1);
    td.copy = o.copy;
    if (!rc) rc = load_data(cmd, &o.data, &td);
    if (!rc && o.topt.guided_alignment > 0 && attend_dataset_aligned_pairs(td.train) == 0)
        rc = cli_usage_error(cmd, "--guided-alignment needs alignments: no line of %s has a third column "
                                  "(source<TAB>target<TAB>i-j ...)", o.data.tsv);
    /* the readout labels each source position: a pair whose lengths differ is named before any training */
    if (!rc && o.decoder == ATTEND_DECODER_READOUT) {
        const attend_dataset *sets[2] = {td.train, td.dev};
        const char *names[2] = {o.data.tsv ? o.data.tsv : "the task's training pairs",
                                o.data.dev ? o.data.dev : "the dev pairs"};
        for (int k = 0; k < 2 && !rc && sets[k]; k++)
            for (int i = 0; i < attend_dataset_size(sets[k]) && !rc; i++) {
                const int32_t *s, *t;
                int sl, tl;
                if (attend_dataset_get(sets[k], i, &s, &sl, &t, &tl, &err) != ATTEND_OK) continue;
                if (sl != tl)
                    rc = cli_usage_error(cmd, "--decoder readout labels each source token: pair %d of %s has %d "
                                              "target tokens for %d source tokens",
                                         i + 1, names[k], tl, sl);
            }
    }
    if (rc) goto done;

    /* the model, sized from the data */
    attend_model_config mc;
    memset(&mc, 0, sizeof mc);
    mc.cell = (attend_cell_kind)o.cell;
    mc.decoder = (attend_decoder_kind)(o.decoder >= 0 ? o.decoder
                                                     : td.pointer ? ATTEND_DECODER_POINTER : ATTEND_DECODER_BAHDANAU);
    mc.score = (attend_score_kind)o.score;
    mc.monotonic = o.monotonic;
    mc.src_vocab = attend_vocab_size(td.src_vocab);
    mc.tgt_vocab = attend_vocab_size(td.tgt_vocab);
    mc.emb = o.emb;
    mc.enc_hidden = o.hidden;
    mc.enc_layers = o.layers;
    cli_encoder_config(&mc, &o.enc);
    mc.dec_layers = o.dec_layers > 1 ? o.dec_layers : 0;
    int dot = o.score == ATTEND_SCORE_DOT || o.score == ATTEND_SCORE_SCALED_DOT;
    mc.dec_hidden = o.dec_hidden ? o.dec_hidden : dot ? attend_model_encoder_width(&mc) : 128;
    if (mc.decoder == ATTEND_DECODER_TRANSFORMER && !o.dec_hidden) mc.dec_hidden = mc.enc_hidden; /* its feed-forward */
    mc.attn = o.attn;
    mc.coverage = o.coverage;
    mc.copy = o.copy;
    mc.normalizer = (attend_normalizer)o.normalizer;
    cli_wp_apply(&o.wp, &mc, &o.topt);
    mc.max_batch = o.batch;
    mc.max_src_len = attend_dataset_max_src_len(td.train);
    mc.max_tgt_len = attend_dataset_max_tgt_len(td.train);
    if (td.dev && attend_dataset_max_src_len(td.dev) > mc.max_src_len) mc.max_src_len = attend_dataset_max_src_len(td.dev);
    if (td.dev && attend_dataset_max_tgt_len(td.dev) > mc.max_tgt_len) mc.max_tgt_len = attend_dataset_max_tgt_len(td.dev);
    cli_encoder_positions_capacity(&mc);
    if (attend_model_create(&m, &mc, o.seed, &err) ||
        (td.pointer && attend_model_set_pointer_exclude(m, !o.pointer_repeat, &err)) ||
        (o.copy && attend_model_set_copy_map(m, td.src_vocab, td.tgt_vocab, &err))) {
        rc = cli_lib_fail(cmd, &err);
        goto done;
    }

    /* the base model of --frozen-attention / --adversarial, sized for this data, with the same vocabularies */
    if ((rc = cli_wp_reference(cmd, &o.wp, o.data.tsv ? o.data.tsv : "the task", &mc, td.src_vocab, td.tgt_vocab,
                               td.tok, &ref)))
        goto done;
    o.topt.reference = ref;

    attend_optim_config oc = attend_optim_defaults((attend_optim_kind)o.optimizer);
    if (o.lr <= 0) o.lr = o.optimizer == ATTEND_OPT_ADAM ? 3e-3 : 0.1;
    oc.lr = o.lr;
    oc.clip_norm = o.clip;
    oc.warmup_steps = o.warmup;
    oc.decay_steps = o.decay;
    oc.min_lr = o.min_lr;
    oc.weight_decay = o.weight_decay;
    oc.momentum = o.momentum;
    if (attend_trainer_create(&tr, m, &oc, td.train, o.batch, o.seed, &err)) {
        rc = cli_lib_fail(cmd, &err);
        goto done;
    }
    if (attend_trainer_set_options(tr, &o.topt, &err) || attend_trainer_set_max_nonfinite(tr, o.max_nonfinite, &err)) {
        rc = cli_lib_fail(cmd, &err);
        goto done;
    }
    if ((rc = cli_train_options_set(cmd, tr, &o.topt))) goto done;
    if ((rc = cli_mpi_trainer(cmd, tr, o.grad_shards))) goto done;

    attend_eval_stats ev;
    memset(&ev, 0, sizeof ev);
    run_hook h;
    memset(&h, 0, sizeof h);
    h.cmd = cmd;
    h.m = m;
    h.o = &o;
    h.td = &td;
    h.tr = tr;
    h.ev = &ev;
    h.checkpoint_step = -1;
    h.selecting = o.select >= 0 || o.patience >= 0;
    if (h.selecting && o.select < 0) o.select = TRAIN_SELECT_LOSS;
    attend_trainer_fingerprint(tr, h.run_fp);
    snprintf(h.st.select, sizeof h.st.select, "%s", h.selecting ? SELECT_NAMES[o.select] : "");
    h.st.patience = o.patience > 0 ? o.patience : 0;
    h.st.eval_every = o.eval_every;
    train_best_init(&h.st.best, h.st.patience, INFINITY);
    print_model(m, &o);
    int stopped = 0;
    if (o.resume) {
        attend_resume_options ro = {td.src_vocab, td.pointer ? NULL : td.tgt_vocab, td.tok, o.resume_anyway};
        attend_error note = {0};
        if (attend_trainer_resume_checked(tr, o.resume, &ro, &note, &err)) {
            rc = cli_lib_fail(cmd, &err);
            if (err.status == ATTEND_ERR_ARG && strstr(err.msg, "resuming needs the same data and options")) {
                if ((opts->warmup < 0 || opts->decay < 0) &&
                    (strstr(err.msg, "warmup_steps") || strstr(err.msg, "decay_steps")))
                    cli_error(cmd, "(the warm-up and decay come from --steps when not given: to resume with "
                                   "another --steps, give --warmup and --decay as the checkpoint has them)");
                cli_error(cmd, "(--resume-anyway resumes all the same)");
            }
            goto done;
        }
        if (note.status != ATTEND_OK)
            cli_error(cmd, "%s: %s", note.status == ATTEND_ERR_ARG ? "warning" : "note", note.msg);
        printf("resumed: %s at step %ld\n", cli_vis(o.resume), attend_trainer_steps(tr));
        if ((rc = resume_state(&h, &mc, &stopped))) goto done;
    }
    /* --out of a --select run is the best model: an existing one must be this run's */
    if (h.selecting && (rc = cli_check_best_out(cmd, "--out", o.out, m, h.run_fp, h.st.run[0] ? h.st.run : NULL,
                                                o.overwrite)))
        goto done;
    if (stopped) { /* it ended already: nothing to train, nothing to replace */
        char when[48];
        best_when(&h, when, sizeof when);
        printf("early stop: this run stopped at step %ld (no better %s for %d evaluations, --patience %d); the "
               "best: %s; nothing to do\n",
               h.st.best.last_step, SELECT_LABELS[o.select], h.st.best.bad, o.patience, when);
        goto done;
    }
    /* the outputs must fit before hours of training go into them */
    {
        const char *paths[2] = {o.checkpoint, o.out};
        uint64_t bytes[2] = {cli_checkpoint_bytes(m, td.src_vocab, td.pointer ? NULL : td.tgt_vocab,
                                                  attend_dataset_size(td.train)),
                             cli_model_file_bytes(m, td.src_vocab, td.pointer ? NULL : td.tgt_vocab)};
        const char *what[2] = {"the checkpoint", "the model"};
        if ((rc = cli_check_space(cmd, paths, bytes, what, 2))) goto done;
    }
    fflush(stdout);

    train_loop_config lc = {cmd, tr, o.steps, o.log_every, o.max_nonfinite, o.checkpoint, after_step, NULL, &h};
    train_loop pg;
    long start_step = attend_trainer_steps(tr);
    double t_begin = cli_now();
    if ((rc = train_loop_run(&lc, &pg))) goto done;
    if (pg.interrupted) { /* every rank stopped at this step (rank 0 decided): one status for all */
        rc = interrupted(&h, &pg, pg.interrupted);
        if (rc == cli_signal_status(pg.interrupted)) rc = cli_mpi_agreed(rc);
        goto done;
    }
    double t_train = pg.t_train;
    double sps = train_loop_pairs_per_s(&pg);
    if (attend_trainer_steps(tr) > start_step)
        printf("trained: steps %ld-%ld in %.1f s (%.0f training pairs/s, %.1f s with evaluations), %ld steps skipped "
               "(non-finite)\n",
               start_step + 1, attend_trainer_steps(tr), t_train, sps, cli_now() - t_begin,
               attend_trainer_skipped(tr));
    else if (o.resume)
        printf("trained: nothing to do, the checkpoint is at step %ld (--steps %d)\n", attend_trainer_steps(tr),
               o.steps);
    else
        printf("trained: no steps (--steps 0)\n");
    if ((rc = evaluate(cmd, m, &td, o.batch, td.dev ? "dev" : "train (no --dev)", &ev, &pg))) goto done;
    if (o.wp.frozen) { /* what the diagnostic measures: the model with the reference's attention */
        attend_compare_stats cs;
        const attend_dataset *d = td.dev ? td.dev : td.train;
        if (attend_model_compare(m, ref, d, o.batch, td.dev ? 0 : 1000, 1, &cs, &err)) {
            rc = cli_lib_fail(cmd, &err);
            goto done;
        }
        printf("%s with the reference's attention (teacher-forced): pairs %d  loss %.4f  tf-token %.4f (the "
               "reference: loss %.4f  tf-token %.4f)\n",
               td.dev ? "dev" : "train (no --dev)", cs.pairs, cs.loss_a, cs.acc_a, cs.loss_b, cs.acc_b);
    }
    if (h.selecting) { /* the final evaluation competes too, unless it was the last one recorded */
        int ignored = 0;
        long now = attend_trainer_steps(tr);
        if ((h.st.best.last_step != now || now == 0) && (rc = select_best(&h, now, &ignored))) goto done;
    }
    /* the last state, after the final evaluation so that it holds its decision
     * (an early stop may just have written it) */
    if (o.checkpoint && h.checkpoint_step != attend_trainer_steps(tr) && (rc = save_checkpoint(&h, &pg))) goto done;
    if (h.selecting) {
        if (!isfinite(h.st.best.best)) {
            cli_error(cmd, "no evaluation gave a finite %s: no model saved", SELECT_LABELS[o.select]);
            rc = 1;
            goto done;
        }
        if (o.out) {
            char when[48];
            best_when(&h, when, sizeof when);
            printf("saved: %s (the best model: %s, %s ", cli_vis(o.out), when, SELECT_LABELS[o.select]);
            print_select(o.select, best_value(&h));
            printf(")\n");
        }
    } else if (o.out) {
        if ((rc = save_model(cmd, m, &o, &td, NULL))) {
            if (o.checkpoint && h.checkpoint_step == attend_trainer_steps(tr))
                cli_error(cmd, "the trained weights are safe in the checkpoint %s (step %ld), which loads as a model "
                               "(attend decode %s ...): free space, then copy it or resume from it",
                          o.checkpoint, h.checkpoint_step, o.checkpoint);
            goto done;
        }
        printf("saved: %s\n", cli_vis(o.out));
    }
    if (res) {
        res->dev = ev;
        res->seconds = t_train;
        res->samples_per_s = sps;
    }
done:
    attend_trainer_free(tr);
    attend_model_free(m);
    attend_model_free(ref);
    data_free(&td);
    cli_unlock_outputs(locks, 2);
    return rc;
}

int cmd_train(int argc, char **argv) {
    train_opts o;
    train_opts_init(&o);
    int help = 0;
    int rc = parse(&o, argc, argv, &help);
    if (rc) return rc;
    if (help) {
        train_usage(stdout);
        return cli_finish("train", 0);
    }
    if ((rc = check_combination(&o))) return rc;
    if ((rc = cli_mpi_begin("train", argc, argv, o.batch, &o.grad_shards))) return cli_mpi_end("train", rc);
    if (cli_mpi_rank() > 0) { /* rank 0 alone writes; with --select/--patience every rank evaluates (the
                                 same weights give the same scores) so that all stop at the same step */
        o.checkpoint = o.out = NULL;
        if (o.patience < 0 && o.select < 0) o.eval_every = 0;
    }
    return cli_mpi_end("train", cli_finish("train", train_run("train", &o, NULL)));
}
