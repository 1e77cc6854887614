/* args.h — helpers shared by the `attend` commands: option parsing (with
 * messages that name the option), library-error reporting, a clock, and the
 * data options (--task ... / --tsv ...) that train and eval have in common.
 *
 * Every parsing function returns 0 when the value is good, or 2 (the exit status
 * of bad usage) after printing "attend CMD: --opt: what was wrong" on stderr.
 */
#ifndef ATTEND_CLI_ARGS_H
#define ATTEND_CLI_ARGS_H

#include <stdint.h>
#include <stdio.h>

#include "attend.h"

/* Walks argv[1..argc). Options are "--name value" or "--name=value". */
typedef struct {
    const char *cmd;   /* the subcommand, for messages ("train") */
    int argc;
    char **argv;
    int i;             /* index of the current argument */
    const char *arg;   /* the current argument as written */
    char opt[64];      /* its option name without "=value" ("--steps") */
    const char *value; /* the "=value" part, or NULL */
} cli_parser;

void cli_init(cli_parser *p, const char *cmd, int argc, char **argv);
/* Moves to the next argument; 0 when there are none left. */
int cli_next(cli_parser *p);
/* The current argument is option `name`. */
int cli_is(const cli_parser *p, const char *name);
/* The current argument is a positional one (does not start with '-', or is "-"). */
int cli_positional(const cli_parser *p);
/* The current argument is --help or -h. */
int cli_is_help(const cli_parser *p);

/* The text of a numeric value, checked without printing (fuzz/fuzz_args.c
 * calls these directly). Each returns 0 and sets *out when s is exactly
 *   integer: -?[0-9]+ within [lo, hi]
 *   u64:     [0-9]+ up to 2^64-1
 *   double:  -?([0-9]+(.[0-9]*)?|.[0-9]+)([eE][+-]?[0-9]+)? within [lo, hi], finite
 * (no spaces, '+' sign, other bases, "inf" or "nan"); else -1, *out unchanged. */
int cli_parse_long(const char *s, long lo, long hi, long *out);
int cli_parse_u64(const char *s, uint64_t *out);
int cli_parse_double(const char *s, double lo, double hi, double *out);

/* Values of the current option (the next argument, or after '='). */
int cli_string(cli_parser *p, const char **out);
int cli_int(cli_parser *p, long lo, long hi, int *out);
int cli_u64(cli_parser *p, uint64_t *out);
int cli_double(cli_parser *p, double lo, double hi, double *out);
/* A name from a list: from_name returns -1 for unknown names; choices is the
 * list for the message ("gru|lstm"). */
int cli_choice(cli_parser *p, int (*from_name)(const char *), const char *choices, int *out);
/* A flag: taking a value ("--flag=x") is an error. */
int cli_flag(cli_parser *p, int *out);
/* "unknown option" / "unexpected argument"; returns 2. */
int cli_unknown(const cli_parser *p);
/* A usage error about the command line as a whole; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints "attend CMD: <library message>" on stderr; returns 1. */
int cli_lib_fail(const char *cmd, const attend_error *err);

/* Flushes stdout; 1 with a message if the output could not be written, else rc. */
int cli_finish(const char *cmd, int rc);

/* Seconds on a monotonic clock. */
double cli_now(void);

/* Name tables for cli_choice. */
int cli_task_from_name(const char *name);   /* copy reverse sort */
int cli_optim_from_name(const char *name);  /* adam sgd */
const char *cli_task_name(int task);

/* ------------------------------------------------------- data options */
/* Either a built-in task or TSV files. Fields left at their zero value take
 * the defaults documented in each command's --help. */
typedef struct {
    int task;          /* -1: none given */
    int symbols, min_len, max_len, count, dev_count;
    uint64_t data_seed;
    int have_data_seed;
    const char *tsv;   /* train: --train; eval: --tsv */
    const char *dev;   /* train: --dev */
    int tokenizer;     /* -1: none given */
    int skip_malformed;
    int given_task_opts; /* some of --symbols/--min-len/... appeared */
} cli_data_opts;

void cli_data_opts_init(cli_data_opts *d);
/* Handles the current option when it is a data option: returns -1 when it is
 * not one, else 0 or 2 as the parsers above. tsv_name is "--train" or "--tsv". */
int cli_data_option(cli_parser *p, cli_data_opts *d, const char *tsv_name);

/* Reads TSV data, reporting skipped lines on stdout as "<path>: N malformed
 * lines skipped". Returns 0, or 1 after printing the library's message. */
int cli_read_tsv(const char *cmd, attend_dataset **out, const char *path, attend_vocab *src_vocab,
                 attend_vocab *tgt_vocab, int grow, attend_tokenizer tok, int skip_malformed);

/* A copy of d whose source ids (and target ids, unless pointer) are mapped
 * from vocabulary `from` to `to_src` / `to_tgt` by token string; tokens `to`
 * lacks become ATTEND_UNK. Returns 0, or 1 after printing a message. */
int cli_remap_dataset(const char *cmd, attend_dataset **out, const attend_dataset *d, const attend_vocab *from,
                      const attend_vocab *to_src, const attend_vocab *to_tgt, int pointer);

/* Loads a model file with the given capacities (0 keeps the file's). */
int cli_load_model(const char *cmd, const char *path, int max_batch, int max_src, int max_tgt, attend_model **m,
                   attend_vocab **src_vocab, attend_vocab **tgt_vocab, attend_tokenizer *tok);

/* Evaluation line: "pairs 500  loss 0.0123  tf-token 0.9990 ...". */
void cli_print_eval(FILE *f, const char *label, const attend_eval_stats *s);

#endif
