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

/* Walks argv[1..argc). Options are "--name value" or "--name=value"; "--"
 * ends the options (every later argument is an operand, "-x" included). */
typedef struct {
    const char *cmd;   /* the subcommand, for messages ("train") */
    int argc;
    char **argv;
    int i;             /* index of the current argument */
    const char *arg;   /* the current argument as written */
    char opt[64];      /* its option name without "=value" ("--steps") */
    const char *value; /* the "=value" part, or NULL */
    int operands;      /* after "--": every argument is an operand */
} cli_parser;

void cli_init(cli_parser *p, const char *cmd, int argc, char **argv);
/* Moves to the next argument; 0 when there are none left. */
int cli_next(cli_parser *p);
/* The current argument is option `name`. */
int cli_is(const cli_parser *p, const char *name);
/* The current argument is a positional one (does not start with '-', is "-",
 * or comes after "--"). */
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
/* A file name: as cli_string, but an empty one is a usage error. */
int cli_path(cli_parser *p, const char **out);
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

/* Prints "attend CMD: <library message>" on stderr; returns 1. A status of
 * ATTEND_ERR_ALLOC adds the command's out-of-memory hint (cli_set_oom_hint). */
int cli_lib_fail(const char *cmd, const attend_error *err);

/* Every message of the command goes through this: prints "attend CMD: " and the
 * formatted text on stderr, one line, with control characters made visible
 * (attend_text_visible: "\x1b"), so a word, token or file name cannot reach
 * the terminal raw. */
void cli_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* s with control characters made visible (attend_text_visible): s itself when
 * it has none, else a copy in one of 8 buffers reused in turn (so up to 8 may
 * appear in one printf). For user text echoed on stdout or stderr. */
const char *cli_vis(const char *s);
/* The same for s [n] (may hold NUL bytes). */
const char *cli_vis_n(const char *s, size_t n);

/* The options of the running command that lower its memory use, named when
 * an allocation fails ("lower --batch or --beam"); NULL: none. */
void cli_set_oom_hint(const char *hint);
const char *cli_get_oom_hint(void);
/* An allocation of the command itself failed: "attend CMD: out of memory
 * (WHAT)" and the hint; returns 1. */
int cli_oom(const char *cmd, const char *what);

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
/* cli_read_tsv for a copy model (copy != 0): unknown target tokens found in
 * the line's source are read as copied ids (attend_tsv_options.copy). */
int cli_read_tsv_copy(const char *cmd, attend_dataset **out, const char *path, attend_vocab *src_vocab,
                      attend_vocab *tgt_vocab, int grow, attend_tokenizer tok, int skip_malformed, int copy);

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

/* ------------------------------------------------ bounded line input */
/* The longest input line decode, g2p and align accept, in bytes (newline
 * excluded); docs/FORMAT.md states it. */
#define CLI_MAX_LINE 65536

/* Reads lines of at most CLI_MAX_LINE bytes from f, in a buffer of that size
 * (allocated once), so no input can grow memory. */
typedef struct {
    FILE *f;
    const char *name; /* for messages: the path, or "<stdin>" */
    char *buf;        /* [CLI_MAX_LINE + 1] */
    long line;        /* 1-based number of the line last read */
    int err;          /* errno of a failed read, else 0 */
    int long_line;    /* the last line was too long; its rest is unread */
} cli_lines;

/* Opens path ("-" or NULL: standard input). 0, or 1 after printing
 * "attend CMD: PATH: reason". */
int cli_lines_open(cli_lines *r, const char *cmd, const char *path);
void cli_lines_close(cli_lines *r);
/* The next line into r->buf (NUL-terminated, the newline and a trailing CR
 * removed, *len its length; it may contain NUL bytes). Returns
 *   1  a line
 *   0  end of input
 *  -1  the line is longer than CLI_MAX_LINE: reading stopped there (at once,
 *      so endless input without a newline ends quickly); to go on, call
 *      cli_lines_skip_rest
 *  -2  a read error (r->err holds errno) */
int cli_lines_next(cli_lines *r, size_t *len);
/* Reads past the rest of a too-long line: 0, or -2 on a read error. */
int cli_lines_skip_rest(cli_lines *r);

/* ---------------------------------------------------- output formats */
typedef enum { CLI_FORMAT_TEXT = 0, CLI_FORMAT_TSV = 1, CLI_FORMAT_JSONL = 2 } cli_format;
int cli_format_from_name(const char *name); /* text tsv jsonl */

/* Writes s [len] as a JSON string (quotes included): ", \ and control
 * characters escaped, invalid UTF-8 bytes as U+FFFD. */
void cli_json_string(FILE *f, const char *s, size_t len);
/* Writes s [len] for a TSV field: TAB, newline, CR and backslash as \t \n \r \\, other control
 * characters as \x1b (attend_text_visible). */
void cli_tsv_field(FILE *f, const char *s, size_t len);

/* The unknown symbols of a source: given text [len] and its ids [n] as the
 * tokenizer split it, counts the ids that are ATTEND_UNK and writes up to 5
 * distinct unknown tokens, quoted and comma-separated, into buf [cap]
 * ("' ', 'X'"; empty when the tokens could not be matched to the ids).
 * Returns the count. */
int cli_unknown_symbols(const char *text, size_t len, attend_tokenizer tok, const int32_t *ids, int n, char *buf,
                        size_t cap);

/* ------------------------------------------------- per-line problems */
/* What decode and g2p report about single input lines: each on stderr as
 * "attend CMD: PATH:LINE: what (what would help)", the first CLI_PROBLEMS_SHOWN
 * of them, then a summary line counting all. */
#define CLI_PROBLEMS_SHOWN 20
typedef enum {
    CLI_PROBLEM_UNKNOWN = 0,  /* symbols the model does not know (decoded as <unk>) */
    CLI_PROBLEM_LONGER = 1,   /* longer than the model's training sources (decoded) */
    CLI_PROBLEM_TOO_LONG = 2, /* beyond this run's source capacity (not decoded) */
    CLI_PROBLEM_MALFORMED = 3, /* over CLI_MAX_LINE bytes or not UTF-8 (skipped) */
    CLI_PROBLEM_KINDS = 4
} cli_problem_kind;

typedef struct {
    const char *cmd;
    const char *unit;             /* "line" (NULL) or "word", for the summary */
    int strict;                   /* --strict: a problem is an error */
    long lines;                   /* input lines seen */
    long count[CLI_PROBLEM_KINDS]; /* lines with each problem */
    long unknown_symbols;         /* in all lines */
    long shown;                   /* messages printed */
} cli_problems;

/* Reports a problem of one line; returns 1 when it is an error (--strict, and
 * always for MALFORMED unless the caller skips it), else 0. */
int cli_problem(cli_problems *p, cli_problem_kind kind, const char *name, long line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* The summary line ("attend CMD: 9 lines: 2 with unknown symbols (5 symbols), ...")
 * when there was any problem. */
void cli_problems_summary(const cli_problems *p);

/* ------------------------------------------- schedules from --steps */
/* The defaults train, demo and sweep derive from --steps when an option is
 * not given (each --help states them): warm-up a tenth of the steps, at most
 * CLI_WARMUP_MAX; cosine decay over the rest; an evaluation every fifth and a
 * checkpoint every tenth of the steps, but at least CLI_INTERVAL_MIN steps apart
 * (0, only at the end, when that is not below --steps). */
#define CLI_INTERVAL_MIN 100
#define CLI_WARMUP_MAX 100
int cli_warmup_for(int steps);
int cli_eval_every_for(int steps);
int cli_checkpoint_every_for(int steps);

#endif
