/*
 * decode.c — running a saved model: `attend decode` (greedy in batches, or beam
 * search with n-best lists, optionally printing each alignment as a heatmap)
 * and `attend eval` (attend_model_evaluate on TSV pairs or a built-in task).
 *
 * A model file carries its configuration and vocabularies. Its capacities are
 * those it was trained with; both commands load it once to learn the
 * vocabulary, size the capacities from the input, and load it again with them.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "cli.h"
#include "ensemble.h"
#include "heatmap.h"
#include "copy_label.h"

/* ================================================================ decode */

typedef struct {
    const char *model, *input;
    int beam, nbest, max_len, max_src, batch, align;
    double alpha;
    double coverage_penalty; /* --coverage-penalty: Wu et al.'s beta (beam) */
    int align_style, format, strict, skip_malformed;
    const char *models[CLI_ENSEMBLE_MAX]; /* model = models[0]; more make an ensemble */
    int n_models;
    const char *rescore;     /* --rescore MODEL, or NULL */
    double rescore_weight;   /* w in (1 - w) * score + w * rescore */
    int rescore_reverse;
} decode_opts;

/* The default source capacity: this many times the model's longest training
 * source, and at least DECODE_MIN_SRC tokens. */
#define DECODE_SRC_FACTOR 4
#define DECODE_MIN_SRC 64
/* The most --max-src-len allows: outputs default to twice the source, and the
 * library's lengths stop at 65536. */
#define DECODE_MAX_SRC 32768

static void decode_usage(FILE *f) {
    fprintf(f,
            "usage: attend decode MODEL [MODEL...] [FILE|-] [options]\n"
            "\n"
            "Several models make an ensemble: each step's distribution is the mean of the\n"
            "models' log-probabilities (as OpenNMT and Marian average them), in greedy and beam\n"
            "search; the models must have the same tokenizer and source and target\n"
            "vocabularies (token by token), and be all pointer models (their distributions\n"
            "are over source positions) or none. A positional\n"
            "argument that is a model file (safetensors) is one more model; the first that is\n"
            "not is the input. --align shows each model's own alignment in turn.\n"
            "\n"
            "Decodes one source per input line (the text before a TAB, if any, so TSV files\n"
            "work as input) with the model's tokenizer, in batches as the lines arrive, so any\n"
            "amount of input decodes in fixed memory. A char model reads every character as a\n"
            "symbol, spaces included: `echo abcd`, not `echo \"a b c d\"`. Prints one output per\n"
            "line; an empty input line gives an empty output line. A pointer model prints the\n"
            "chosen source positions (0-based), a TAB, and the source tokens in that order.\n"
            "FILE - or no FILE reads standard input. Lines may be up to %d bytes long.\n"
            "\n"
            "Problems of single lines are reported on stderr as FILE:LINE: ... and the other\n"
            "lines still decode, with a summary line at the end: symbols the model does not\n"
            "know (decoded as <unk>), sources longer than the model's training sources\n"
            "(decoded), and sources longer than --max-src-len (not decoded: an empty output).\n"
            "\n"
            "  --beam K             beam search with K hypotheses (default: greedy, batched)\n"
            "  --nbest N            the N best hypotheses, best first (beam search; --beam\n"
            "                       defaults to N); text: score<TAB>output lines\n"
            "  --alpha A            length normalisation: score = log p / (length+1)^A (0)\n"
            "  --coverage-penalty B beam: add B * sum_j log(min(total attention on source j, 1))\n"
            "                       to a finished hypothesis's score (Wu et al. 2016); with an\n"
            "                       ensemble, of the members' mean attention (0)\n"
            "  --rescore MODEL      re-rank the n-best by (1-w) x score + w x MODEL's log-probability\n"
            "                       of the hypothesis per output token, EOS counted (log p / (length\n"
            "                       + 1)); the printed score is the combined one. MODEL reads the\n"
            "                       same tokenizer (its vocabularies may differ: tokens are looked\n"
            "                       up by name)\n"
            "  --rescore-weight W   w above, in [0,1] (0.5)\n"
            "  --rescore-reverse    MODEL is right-to-left (trained on reversed targets): it\n"
            "                       scores each hypothesis reversed\n"
            "  --max-len N          longest output in tokens (per line: the longer of the\n"
            "                       model's longest training target and twice the line's\n"
            "                       length; a pointer model emits one position per source token)\n"
            "  --max-src-len N      longest source in tokens, up to %d (%d x the model's longest\n"
            "                       training source, at least %d); memory grows with it and\n"
            "                       with --batch\n"
            "  --batch N            lines decoded together (64; 1 answers each line as it\n"
            "                       arrives)\n"
            "  --format F           text, tsv (INDEX<TAB>RANK<TAB>SCORE<TAB>SOURCE<TAB>OUTPUT per\n"
            "                       hypothesis) or jsonl (one object per input line); see\n"
            "                       docs/FORMAT.md (text)\n"
            "  --align              text: each output's alignment after it, then a blank line;\n"
            "                       jsonl: an \"alignment\" array per hypothesis\n"
            "  --align-format NAME  shade (characters \" .:-=+*#%%@\" by weight), percent (weights\n"
            "                       in hundredths) or tsv (a header of source tokens, then one\n"
            "                       row per output token: token<TAB>weights) (shade)\n"
            "  --strict             a problem of a line is an error: stop there, exit 1\n"
            "  --skip-malformed     skip lines over the length limit or not UTF-8 (an empty\n"
            "                       output) instead of stopping at the first\n"
            "  --help               this message\n"
            "\n"
            "Exit status: 0 ok, 1 the model or the input could not be used, 2 bad usage.\n",
            CLI_MAX_LINE, DECODE_MAX_SRC, DECODE_SRC_FACTOR, DECODE_MIN_SRC);
}

static int decode_parse(decode_opts *o, int argc, char **argv, int *help) {
    cli_parser p;
    cli_init(&p, "decode", argc, argv);
    int rc = 0, npos = 0;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) *help = 1;
        else if (cli_is(&p, "--beam")) rc = cli_int(&p, 1, 64, &o->beam);
        else if (cli_is(&p, "--nbest")) rc = cli_int(&p, 1, 64, &o->nbest);
        else if (cli_is(&p, "--alpha")) rc = cli_double(&p, 0, 100, &o->alpha);
        else if (cli_is(&p, "--coverage-penalty")) rc = cli_double(&p, 0, 1e6, &o->coverage_penalty);
        else if (cli_is(&p, "--max-len")) rc = cli_int(&p, 1, 65536, &o->max_len);
        else if (cli_is(&p, "--max-src-len")) rc = cli_int(&p, 1, DECODE_MAX_SRC, &o->max_src);
        else if (cli_is(&p, "--batch")) rc = cli_int(&p, 1, 65536, &o->batch);
        else if (cli_is(&p, "--align")) rc = cli_flag(&p, &o->align);
        else if (cli_is(&p, "--align-format"))
            rc = cli_choice(&p, heatmap_style_from_name, "shade|percent|tsv", &o->align_style);
        else if (cli_is(&p, "--format")) rc = cli_choice(&p, cli_format_from_name, "text|tsv|jsonl", &o->format);
        else if (cli_is(&p, "--strict")) rc = cli_flag(&p, &o->strict);
        else if (cli_is(&p, "--skip-malformed")) rc = cli_flag(&p, &o->skip_malformed);
        else if (cli_is(&p, "--rescore")) rc = cli_path(&p, &o->rescore);
        else if (cli_is(&p, "--rescore-weight")) rc = cli_double(&p, 0, 1, &o->rescore_weight);
        else if (cli_is(&p, "--rescore-reverse")) rc = cli_flag(&p, &o->rescore_reverse);
        else if (cli_positional(&p) && !o->input && (npos == 0 || cli_is_model_file(p.arg))) {
            if (npos == 0 || o->n_models < CLI_ENSEMBLE_MAX) {
                o->models[o->n_models++] = p.arg;
                npos++;
            } else {
                rc = cli_usage_error("decode", "more than %d models in an ensemble", CLI_ENSEMBLE_MAX);
            }
        } else if (cli_positional(&p) && !o->input) o->input = p.arg;
        else rc = cli_unknown(&p);
    }
    if (rc || *help) return rc;
    o->model = o->models[0];
    if (!o->model) return cli_usage_error("decode", "which model? usage: attend decode MODEL [MODEL...] [FILE|-]");
    if (o->rescore && !o->nbest)
        return cli_usage_error("decode", "--rescore re-ranks an n-best list: give --nbest N");
    if ((o->rescore_weight >= 0 || o->rescore_reverse) && !o->rescore)
        return cli_usage_error("decode", "--rescore-weight and --rescore-reverse need --rescore MODEL");
    if (o->rescore_weight < 0) o->rescore_weight = 0.5;
    if (o->nbest && !o->beam) o->beam = o->nbest;
    if (o->nbest > o->beam) return cli_usage_error("decode", "--nbest %d is more than --beam %d", o->nbest, o->beam);
    if (o->coverage_penalty > 0 && !o->beam) return cli_usage_error("decode", "--coverage-penalty needs --beam K");
    if (o->align && o->format == CLI_FORMAT_TSV)
        return cli_usage_error("decode", "--align with --format tsv: use --format jsonl for alignments");
    return 0;
}

/* One input line of the batch in hand. */
typedef struct {
    long index;    /* 1-based line number */
    char *text;    /* the source text [text_len] (before any TAB) */
    size_t text_len;
    int32_t *ids;  /* [n] */
    int n;
    int decode;    /* 0: empty, skipped or too long: an empty output */
    const char *problem; /* why it is not decoded (jsonl "error"), or NULL */
    int unknown;   /* unknown symbols */
    int longer;    /* longer than the training sources */
} src_line;

typedef struct {
    attend_model *m;         /* ms[0] */
    attend_model *ms[CLI_ENSEMBLE_MAX]; /* [M] the ensemble's members (M = 1: one model) */
    int M;
    attend_model *rm;        /* --rescore's model, its vocabularies and tokenizer */
    attend_vocab *rsv, *rtv;
    int32_t *rsrc, *rhyp;    /* [S_cap + 1], [nbest,L_cap] the n-best in rm's ids */
    double *rscore;          /* [nbest] */
    int *order;              /* [nbest] print order */
    attend_vocab *sv, *tv;
    attend_tokenizer tok;
    attend_model_config cfg; /* as trained */
    int pointer;
    int S_cap, L_cap, B;     /* capacities of this run */
    cli_lines in;
    cli_problems probs;
    int32_t *scratch;        /* [CLI_MAX_LINE + 1] ids of one line */
    src_line *lines;         /* [batch] */
    int n_lines, eof;
    char *text;              /* [text_cap] output text */
    size_t text_cap;
    const char **src_tok, **out_tok; /* [S_cap], [L_cap] heatmap labels */
    char *copy_lab;          /* [L_cap, COPY_LABEL_BYTES] labels of copied tokens (copy models) */
    int32_t *src, *src_len, *out, *out_len, *which; /* [B,S_cap] [B] [B,L_cap] [B] [B] */
    double *score;           /* [B] */
    attend_real *align;      /* [B,L_cap,S_cap] */
} decoder;

static void lines_clear(decoder *dc) {
    for (int i = 0; i < dc->n_lines; i++) {
        free(dc->lines[i].text);
        free(dc->lines[i].ids);
    }
    dc->n_lines = 0;
}

static const char *tokenizer_words(attend_tokenizer tok) {
    return tok == ATTEND_TOKENIZE_CHAR ? "the model reads every character as a symbol, spaces included"
                                       : "the model reads space-separated tokens";
}

/* Reads up to `want` lines into dc->lines, tokenized and checked against the
 * capacity S_cap (0: not known yet, check only the hard limit). Returns 0, or 1
 * after a message. */
static int read_batch(decoder *dc, const decode_opts *o, int want, int S_cap) {
    lines_clear(dc);
    while (!dc->eof && dc->n_lines < want) {
        size_t len = 0;
        int got = cli_lines_next(&dc->in, &len);
        if (got == 0) {
            dc->eof = 1;
            break;
        }
        if (got == -2) {
            cli_error("decode", "%s: read error in line %ld: %s", dc->in.name, dc->in.line + 1,
                    strerror(dc->in.err));
            return 1;
        }
        dc->probs.lines++;
        src_line *l = &dc->lines[dc->n_lines];
        memset(l, 0, sizeof *l);
        l->index = dc->in.line;
        if (got == -1) {
            if (!o->skip_malformed) {
                cli_error("decode", "%s:%ld: longer than the %d bytes a line may have (--skip-malformed skips "
                        "such lines)",
                        dc->in.name, dc->in.line, CLI_MAX_LINE);
                return 1;
            }
            if (cli_problem(&dc->probs, CLI_PROBLEM_MALFORMED, dc->in.name, dc->in.line,
                            "longer than the %d bytes a line may have: skipped", CLI_MAX_LINE))
                return 1;
            if (cli_lines_skip_rest(&dc->in)) {
                cli_error("decode", "%s: read error in line %ld: %s", dc->in.name, dc->in.line,
                        strerror(dc->in.err));
                return 1;
            }
            l->problem = "malformed: line too long";
            dc->n_lines++;
            continue;
        }
        char *line = dc->in.buf;
        char *tab = memchr(line, '\t', len);
        if (tab) len = (size_t)(tab - line);
        l->text = malloc(len + 1);
        if (!l->text) {
            cli_oom("decode", "a line's text");
            return 1;
        }
        memcpy(l->text, line, len);
        l->text[len] = '\0';
        l->text_len = len;
        dc->n_lines++;
        if (len == 0) continue;
        attend_error err = {0};
        int n = 0;
        if (attend_vocab_encode(dc->sv, dc->tok, 0, line, len, dc->scratch, CLI_MAX_LINE + 1, &n, &err)) {
            if (!o->skip_malformed) {
                cli_error("decode", "%s:%ld: %s (--skip-malformed skips such lines)", dc->in.name,
                        dc->in.line, err.msg);
                return 1;
            }
            if (cli_problem(&dc->probs, CLI_PROBLEM_MALFORMED, dc->in.name, dc->in.line, "%s: skipped", err.msg))
                return 1;
            l->problem = "malformed: not text the tokenizer accepts";
            continue;
        }
        l->n = n;
        char shown[160];
        l->unknown = cli_unknown_symbols(line, len, dc->tok, dc->scratch, n, shown, sizeof shown);
        if (l->unknown) {
            dc->probs.unknown_symbols += l->unknown;
            if (cli_problem(&dc->probs, CLI_PROBLEM_UNKNOWN, dc->in.name, dc->in.line,
                            "%d of %d symbols unknown to the model%s%s%s, decoded as <unk>; %s", l->unknown, n,
                            shown[0] ? " (" : "", shown, shown[0] ? ")" : "", tokenizer_words(dc->tok)))
                return 1;
        }
        int limit = S_cap ? S_cap : o->max_src;
        /* a learned positions table bounds what the model can read: no option raises that */
        int table = dc->cfg.positions == ATTEND_POSITIONS_LEARNED && dc->cfg.encoder != ATTEND_ENCODER_RNN &&
                    dc->cfg.max_positions > 0 && limit >= dc->cfg.max_positions;
        if (limit && n > limit && table) {
            if (cli_problem(&dc->probs, CLI_PROBLEM_TOO_LONG, dc->in.name, dc->in.line,
                            "%d source tokens, more than the %d rows of the model's learned positions table: not "
                            "decoded (the model cannot read a longer source)",
                            n, dc->cfg.max_positions))
                return 1;
            l->problem = "too long";
            continue;
        }
        if (limit && n > limit) {
            if (cli_problem(&dc->probs, CLI_PROBLEM_TOO_LONG, dc->in.name, dc->in.line,
                            "%d source tokens, more than this run's %d: not decoded (--max-src-len N raises the "
                            "limit, and memory with it; the model was trained on sources of up to %d)",
                            n, limit, dc->cfg.max_src_len))
                return 1;
            l->problem = "too long";
            continue;
        }
        if (n > dc->cfg.max_src_len) {
            l->longer = 1;
            if (cli_problem(&dc->probs, CLI_PROBLEM_LONGER, dc->in.name, dc->in.line,
                            "%d source tokens, longer than the model's training sources (up to %d): expect mistakes",
                            n, dc->cfg.max_src_len))
                return 1;
        }
        l->ids = malloc((size_t)n * sizeof *l->ids);
        if (!l->ids) {
            cli_oom("decode", "a line's tokens");
            return 1;
        }
        memcpy(l->ids, dc->scratch, (size_t)n * sizeof *l->ids);
        l->decode = 1;
    }
    return 0;
}

/* The longest output of a line of n source tokens. */
static int line_limit(const decoder *dc, const decode_opts *o, int n) {
    if (dc->pointer) return n;
    int lim = o->max_len ? o->max_len : dc->cfg.max_tgt_len > 2 * n ? dc->cfg.max_tgt_len : 2 * n;
    return lim < dc->L_cap ? lim : dc->L_cap;
}

/* The text of one output (pointer: the picked source tokens) into dc->text. */
static int output_text(decoder *dc, const src_line *l, const int32_t *src, int S, const int32_t *out, int len) {
    attend_error err = {0};
    attend_status st;
    if (dc->pointer) {
        int32_t *picked = malloc((size_t)(len + 1) * sizeof *picked);
        if (!picked) {
            cli_oom("decode", "the pointer outputs");
            return 1;
        }
        for (int t = 0; t < len; t++) picked[t] = out[t] >= 0 && out[t] < S ? src[out[t]] : ATTEND_UNK;
        st = attend_vocab_decode(dc->sv, dc->tok, picked, len, dc->text, dc->text_cap, &err);
        free(picked);
    } else if (dc->cfg.copy) { /* copied ids are source tokens */
        st = attend_vocab_decode_copy(dc->tv, dc->tok, out, len, l->text, l->text_len, dc->text, dc->text_cap, &err);
    } else {
        st = attend_vocab_decode(dc->tv, dc->tok, out, len, dc->text, dc->text_cap, &err);
    }
    return st ? cli_lib_fail("decode", &err) : 0;
}

static void print_number(double x) {
    if (x != x || x > 1e300 || x < -1e300) printf("null");
    else printf("%.6f", x);
}

/* a [rows,cols] as a JSON array of arrays */
static void print_matrix(const attend_real *a, int rows, int cols) {
    printf("[");
    for (int t = 0; t < rows; t++) {
        printf("%s[", t ? "," : "");
        for (int j = 0; j < cols; j++) printf("%s%.4f", j ? "," : "", (double)a[(size_t)t * cols + j]);
        printf("]");
    }
    printf("]");
}

/* Prints hypothesis `rank` (1-based) of line l: out [len], its alignment
 * [len,S] or NULL (an ensemble: member k's at align + k * astride), its score
 * or NULL (greedy without a score). */
static int print_hyp(decoder *dc, const decode_opts *o, const src_line *l, int rank, const int32_t *out, int len,
                     const attend_real *align, size_t astride, const double *score) {
    const int32_t *src = l->ids;
    int S = l->n;
    int rc = output_text(dc, l, src, S, out, len);
    if (rc) return rc;
    if (o->format == CLI_FORMAT_TSV) {
        printf("%ld\t%d\t", l->index, rank);
        if (score) print_number(*score);
        printf("\t");
        cli_tsv_field(stdout, l->text, l->text_len);
        printf("\t");
        cli_tsv_field(stdout, dc->text, strlen(dc->text));
        if (dc->pointer) {
            printf("\t");
            for (int t = 0; t < len; t++) printf("%s%d", t ? " " : "", (int)out[t]);
        }
        printf("\n");
        return 0;
    }
    if (o->format == CLI_FORMAT_JSONL) {
        printf("%s{\"output\":", rank > 1 ? "," : "");
        cli_json_string(stdout, dc->text, strlen(dc->text));
        printf(",\"score\":");
        if (score) print_number(*score);
        else printf("null");
        if (dc->pointer) {
            printf(",\"positions\":[");
            for (int t = 0; t < len; t++) printf("%s%d", t ? "," : "", (int)out[t]);
            printf("]");
        }
        if (o->align && align) { /* an ensemble: "alignment" is model 1's, "alignments" every member's */
            printf(",\"alignment\":");
            print_matrix(align, len, S);
            if (dc->M > 1) {
                printf(",\"alignments\":[");
                for (int k = 0; k < dc->M; k++) {
                    if (k) printf(",");
                    print_matrix(align + (size_t)k * astride, len, S);
                }
                printf("]");
            }
        }
        printf("}");
        return 0;
    }
    if (score) printf("%.6f\t", *score);
    if (dc->pointer) {
        for (int t = 0; t < len; t++) printf("%s%d", t ? " " : "", (int)out[t]);
        printf("\t%s\n", cli_vis(dc->text));
    } else {
        printf("%s\n", cli_vis(dc->text));
    }
    if (o->align && align) {
        for (int j = 0; j < S; j++) dc->src_tok[j] = attend_vocab_token(dc->sv, src[j]);
        for (int t = 0; t < len; t++) {
            const char *tk = dc->pointer ? (out[t] >= 0 && out[t] < S ? attend_vocab_token(dc->sv, src[out[t]]) : "?")
                                         : copy_label(dc->tv, dc->tok, out[t], l->text, l->text_len,
                                                      dc->copy_lab + (size_t)t * COPY_LABEL_BYTES);
            dc->out_tok[t] = tk ? tk : "?";
        }
        for (int k = 0; k < dc->M; k++) {
            if (dc->M > 1) printf("model %d (%s):\n", k + 1, cli_vis(o->models[k]));
            heatmap_print(stdout, align + (size_t)k * astride, len, S, dc->src_tok, dc->out_tok,
                          (heatmap_style)o->align_style);
            printf("\n");
        }
    }
    return 0;
}

/* The start and end of a line's output: jsonl's object around the hypotheses;
 * text: an empty line when it has none. */
static void line_begin(const decode_opts *o, const src_line *l) {
    if (o->format != CLI_FORMAT_JSONL) return;
    printf("{\"index\":%ld,\"source\":", l->index);
    cli_json_string(stdout, l->text ? l->text : "", l->text_len);
    printf(",\"unknown\":%d", l->unknown);
    if (l->problem) {
        printf(",\"error\":");
        cli_json_string(stdout, l->problem, strlen(l->problem));
    } else if (l->longer) {
        printf(",\"warning\":\"longer than the training sources\"");
    }
    printf(",\"hypotheses\":[");
}

static void line_end(const decode_opts *o, const src_line *l, int got) {
    if (o->format == CLI_FORMAT_JSONL) printf("]}\n");
    else if (o->format == CLI_FORMAT_TEXT && got == 0) printf("\n");
    else if (o->format == CLI_FORMAT_TSV && got == 0) { /* rank 0: no hypothesis */
        printf("%ld\t0\t\t", l->index);
        cli_tsv_field(stdout, l->text ? l->text : "", l->text_len);
        printf("\t\n");
    }
}

/* Greedy decoding of the batch in hand. With a structured format, each output's
 * score is its forced log-probability (output and end) from attend_model_score. */
static int decode_greedy(decoder *dc, const decode_opts *o) {
    int nb = 0, S = 1, maxl = 1;
    for (int i = 0; i < dc->n_lines; i++) {
        const src_line *l = &dc->lines[i];
        if (!l->decode) continue;
        dc->which[nb++] = i;
        if (l->n > S) S = l->n;
        int lim = line_limit(dc, o, l->n);
        if (lim > maxl) maxl = lim;
    }
    if (dc->pointer) maxl = S;
    for (int k = 0; k < nb; k++) {
        const src_line *l = &dc->lines[dc->which[k]];
        dc->src_len[k] = l->n;
        for (int j = 0; j < S; j++) dc->src[(size_t)k * S + j] = j < l->n ? l->ids[j] : ATTEND_PAD;
    }
    attend_error err = {0};
    if (nb && (dc->M > 1 ? attend_ensemble_greedy(dc->ms, dc->M, dc->src, dc->src_len, nb, S, maxl, dc->out,
                                                  dc->out_len, dc->align, &err)
                         : attend_model_greedy(dc->m, dc->src, dc->src_len, nb, S, maxl, dc->out, dc->out_len,
                                               dc->align, &err)))
        return cli_lib_fail("decode", &err);
    size_t astride = (size_t)nb * maxl * S; /* an ensemble's members' alignments [M,nb,maxl,S] */
    int rc = 0;
    for (int i = 0, k = 0; rc == 0 && i < dc->n_lines; i++) {
        const src_line *l = &dc->lines[i];
        line_begin(o, l);
        if (!l->decode) {
            line_end(o, l, 0);
            continue;
        }
        attend_real *a = dc->align ? dc->align + (size_t)k * maxl * S : NULL; /* [maxl,S] */
        int sl = l->n, len = dc->out_len[k];
        int lim = line_limit(dc, o, sl);
        if (len > lim) len = lim; /* as if decoded alone */
        for (int e = 0; a && e < dc->M; e++) { /* rows of this line's own length [len,sl], in place: row t moves down to t*sl */
            attend_real *ae = a + (size_t)e * astride;
            for (int t = 0; t < len; t++) memmove(ae + (size_t)t * sl, ae + (size_t)t * S, sl * sizeof *ae);
        }
        const int32_t *out = dc->out + (size_t)k * maxl;
        double score = 0, *sp = NULL;
        if (o->format != CLI_FORMAT_TEXT && !(len == lim && !dc->pointer)) { /* an ensemble: the members' mean */
            int ok = 1;
            for (int e = 0; ok && e < dc->M; e++) {
                double s1;
                ok = attend_model_score(dc->ms[e], l->ids, sl, out, len, &s1, NULL, &err) == ATTEND_OK;
                score += s1;
            }
            if (ok) {
                score /= dc->M;
                sp = &score;
            }
        }
        rc = print_hyp(dc, o, l, 1, out, len, a, astride, sp);
        line_end(o, l, 1);
        k++;
    }
    return rc;
}

/* --rescore: the `got` hypotheses of line l (dc->out [got,L]) in the rescoring
 * model's ids (tokens looked up by name, unknown ones <unk>) scored by it;
 * dc->score becomes (1 - w) score + w rescore and dc->order the ranks by it
 * (stable: the beam's order among equals). */
static int rescore(decoder *dc, const decode_opts *o, const src_line *l, int L, int got) {
    attend_error err = {0};
    int n = 0;
    if (attend_vocab_encode(dc->rsv, dc->tok, 0, l->text, l->text_len, dc->rsrc, dc->S_cap + 1, &n, &err))
        return cli_lib_fail("decode", &err);
    for (int h = 0; h < got; h++)
        for (int t = 0; t < L; t++) {
            int32_t id = dc->out[(size_t)h * L + t];
            const char *tk = t < dc->out_len[h] ? attend_vocab_token(dc->tv, id) : NULL;
            int32_t r = tk ? attend_vocab_find(dc->rtv, tk, strlen(tk)) : ATTEND_PAD;
            dc->rhyp[(size_t)h * L + t] = tk && r < 0 ? ATTEND_UNK : r;
        }
    if (attend_model_rescore(dc->rm, dc->rsrc, n, dc->rhyp, dc->out_len, got, L, o->rescore_reverse, dc->rscore,
                             &err))
        return cli_lib_fail("decode", &err);
    double w = o->rescore_weight;
    for (int h = 0; h < got; h++) dc->score[h] = (1 - w) * dc->score[h] + w * dc->rscore[h];
    for (int i = 1; i < got; i++) { /* insertion sort: stable, n-best lists are short */
        int h = dc->order[i], j = i;
        while (j > 0 && dc->score[dc->order[j - 1]] < dc->score[h]) {
            dc->order[j] = dc->order[j - 1];
            j--;
        }
        dc->order[j] = h;
    }
    return 0;
}

/* Beam search of the batch in hand, one line at a time. */
static int decode_beam(decoder *dc, const decode_opts *o) {
    int nbest = o->nbest ? o->nbest : 1, rc = 0;
    for (int i = 0; rc == 0 && i < dc->n_lines; i++) {
        const src_line *l = &dc->lines[i];
        line_begin(o, l);
        int got = 0;
        if (l->decode) {
            int L = line_limit(dc, o, l->n);
            attend_error err = {0};
            attend_beam_options bo = {o->alpha, o->coverage_penalty};
            attend_decode_options dopt = ATTEND_OPTIONS_INIT(attend_decode_options);
            dopt.beam = o->beam, dopt.nbest = nbest, dopt.max_len = L, dopt.alpha = o->alpha;
            dopt.coverage_penalty = o->coverage_penalty; /* an ensemble's: on the members' mean attention */
            attend_status st =
                dc->M > 1 && o->coverage_penalty > 0
                    ? attend_decode(dc->ms, dc->M, l->ids, NULL, 1, l->n, &dopt, dc->out, dc->out_len, dc->score,
                                    dc->align, &got, &err)
                : dc->M > 1 ? attend_ensemble_beam(dc->ms, dc->M, l->ids, l->n, o->beam, nbest, L, o->alpha, dc->out,
                                                   dc->out_len, dc->score, dc->align, &got, &err)
                            : attend_model_beam_opts(dc->m, l->ids, l->n, o->beam, nbest, L, &bo, dc->out,
                                                     dc->out_len, dc->score, dc->align, &got, &err);
            if (st != ATTEND_OK) return cli_lib_fail("decode", &err);
            for (int h = 0; h < got; h++) dc->order[h] = h;
            if (dc->rm && (rc = rescore(dc, o, l, L, got))) return rc;
            int show_score = o->nbest || o->format != CLI_FORMAT_TEXT;
            size_t astride = (size_t)nbest * L * l->n; /* an ensemble's members' alignments [M,nbest,L,S] */
            for (int r = 0; rc == 0 && r < got; r++) {
                int h = dc->order[r];
                rc = print_hyp(dc, o, l, r + 1, dc->out + (size_t)h * L, dc->out_len[h],
                               dc->align ? dc->align + (size_t)h * L * l->n : NULL, astride,
                               show_score ? &dc->score[h] : NULL);
            }
        }
        line_end(o, l, got);
    }
    return rc;
}

/* Loads the model with this run's capacities; running out of memory names the
 * options that size it. */
static int load_sized(decoder *dc, const decode_opts *o) {
    attend_error err = {0};
    attend_model_config cap;
    memset(&cap, 0, sizeof cap);
    cap.max_batch = dc->B;
    cap.max_src_len = dc->S_cap;
    cap.max_tgt_len = dc->L_cap;
    attend_status st = ATTEND_OK;
    for (int k = 0; st == ATTEND_OK && k < dc->M; k++)
        st = attend_model_load(&dc->ms[k], o->models[k], &cap, NULL, NULL, NULL, &err);
    dc->m = dc->ms[0];
    if (st == ATTEND_OK && o->rescore) {
        cap.max_batch = 1; /* it scores one hypothesis at a time */
        st = attend_model_load(&dc->rm, o->rescore, &cap, NULL, NULL, NULL, &err);
    }
    if (st == ATTEND_ERR_ALLOC) {
        cli_error("decode", "not enough memory for batches of %d lines of up to %d source and %d output tokens: "
                "lower --batch, --max-src-len or --max-len (%s)",
                dc->B, dc->S_cap, dc->L_cap, err.msg);
        return 1;
    }
    return st ? cli_lib_fail("decode", &err) : 0;
}

static int decoder_alloc(decoder *dc, const decode_opts *o) {
    size_t B = (size_t)dc->B, S = (size_t)dc->S_cap, L = (size_t)dc->L_cap;
    size_t rows = o->beam ? (size_t)(o->nbest ? o->nbest : 1) : B;
    dc->text_cap = (L > S ? L : S) * (ATTEND_MAX_TOKEN_BYTES + 1) + 1;
    dc->text = malloc(dc->text_cap);
    dc->src_tok = malloc(S * sizeof *dc->src_tok);
    dc->out_tok = malloc(L * sizeof *dc->out_tok);
    dc->copy_lab = malloc(L * COPY_LABEL_BYTES);
    dc->src = malloc(B * S * sizeof *dc->src);
    dc->src_len = malloc(B * sizeof *dc->src_len);
    dc->which = malloc(B * sizeof *dc->which);
    dc->out = malloc(rows * L * sizeof *dc->out);
    dc->out_len = malloc(rows * sizeof *dc->out_len);
    dc->score = malloc(rows * sizeof *dc->score);
    dc->align = o->align ? malloc((size_t)dc->M * rows * L * S * sizeof *dc->align) : NULL;
    dc->order = malloc(rows * sizeof *dc->order);
    if (o->rescore) {
        dc->rsrc = malloc((S + 1) * sizeof *dc->rsrc);
        dc->rhyp = malloc(rows * L * sizeof *dc->rhyp);
        dc->rscore = malloc(rows * sizeof *dc->rscore);
    }
    if (!dc->text || !dc->src_tok || !dc->out_tok || !dc->copy_lab || !dc->src || !dc->src_len || !dc->which ||
        !dc->out || !dc->out_len || !dc->score || (o->align && !dc->align) || !dc->order ||
        (o->rescore && (!dc->rsrc || !dc->rhyp || !dc->rscore))) {
        cli_oom("decode", "the batch buffers");
        return 1;
    }
    return 0;
}

int cmd_decode(int argc, char **argv) {
    cli_set_oom_hint("lower --batch, --max-src-len, --max-len or --beam"); /* the options of this command that lower its memory */
    decode_opts o;
    memset(&o, 0, sizeof o);
    o.batch = 64;
    o.rescore_weight = -1; /* not given */
    o.align_style = HEATMAP_SHADE;
    int help = 0;
    int rc = decode_parse(&o, argc, argv, &help);
    if (rc) return rc;
    if (help) {
        decode_usage(stdout);
        return cli_finish("decode", 0);
    }
    decoder dc;
    memset(&dc, 0, sizeof dc);
    dc.probs.cmd = "decode";
    dc.probs.strict = o.strict;
    /* first load: the vocabularies and the trained lengths (a batch of one);
     * an ensemble's members must agree with the first (cli/ensemble.h), and
     * its trained lengths are the longest of any member's */
    dc.M = o.n_models;
    if ((rc = cli_load_model("decode", o.model, 1, 0, 0, &dc.m, &dc.sv, &dc.tv, &dc.tok))) return rc;
    dc.cfg = *attend_model_get_config(dc.m);
    attend_model_free(dc.m);
    dc.m = NULL;
    dc.pointer = dc.cfg.decoder == ATTEND_DECODER_POINTER;
    cli_member first = {o.models[0], dc.cfg, dc.sv, dc.tv, dc.tok};
    for (int k = 1; rc == 0 && k < dc.M; k++) {
        cli_member b = {o.models[k], {0}, NULL, NULL, ATTEND_TOKENIZE_CHAR};
        attend_model *mk = NULL;
        if ((rc = cli_load_model("decode", o.models[k], 1, 0, 0, &mk, &b.sv, &b.tv, &b.tok))) break;
        b.cfg = *attend_model_get_config(mk);
        attend_model_free(mk);
        rc = cli_ensemble_check("decode", &first, &b, k + 1);
        if (b.cfg.max_src_len > dc.cfg.max_src_len) dc.cfg.max_src_len = b.cfg.max_src_len;
        if (b.cfg.max_tgt_len > dc.cfg.max_tgt_len) dc.cfg.max_tgt_len = b.cfg.max_tgt_len;
        attend_vocab_free(b.sv);
        attend_vocab_free(b.tv);
    }
    if (rc == 0 && o.rescore) {
        cli_member r = {o.rescore, {0}, NULL, NULL, ATTEND_TOKENIZE_CHAR};
        attend_model *mr = NULL;
        if ((rc = cli_load_model("decode", o.rescore, 1, 0, 0, &mr, &dc.rsv, &dc.rtv, &r.tok)) == 0) {
            r.cfg = *attend_model_get_config(mr);
            attend_model_free(mr);
            if (dc.pointer || r.cfg.decoder == ATTEND_DECODER_POINTER)
                rc = cli_usage_error("decode", "--rescore: pointer models score positions, not output tokens (%s)",
                                     dc.pointer ? o.model : o.rescore);
            else if (r.tok != dc.tok) {
                cli_error("decode", "--rescore %s: tokenizer %s, model 1 (%s) has %s", o.rescore,
                        attend_tokenizer_name(r.tok), o.model, attend_tokenizer_name(dc.tok));
                rc = 1;
            }
        }
    }
    if (rc) goto done;
    int want = o.batch; /* lines per batch */
    int S_limit = o.max_src ? o.max_src : DECODE_SRC_FACTOR * dc.cfg.max_src_len;
    if (!o.max_src && S_limit < DECODE_MIN_SRC) S_limit = DECODE_MIN_SRC;
    /* learned positions: the table's rows bound the sources a model reads (and a transformer decoder's steps) */
    cli_positions_caps(&dc.cfg, &S_limit, NULL);
    o.max_src = S_limit;
    dc.lines = calloc((size_t)want, sizeof *dc.lines);
    dc.scratch = malloc((CLI_MAX_LINE + 1) * sizeof *dc.scratch);
    if (!dc.lines || !dc.scratch) {
        cli_oom("decode", "the line buffers");
        rc = 1;
        goto done;
    }
    if ((rc = cli_lines_open(&dc.in, "decode", o.input))) goto done;
    /* the first batch; when it is all the input, the capacities fit it exactly */
    if ((rc = read_batch(&dc, &o, want, 0))) goto flush;
    int first_S = 0, first_n = 0;
    for (int i = 0; i < dc.n_lines; i++)
        if (dc.lines[i].decode) {
            first_n++;
            if (dc.lines[i].n > first_S) first_S = dc.lines[i].n;
        }
    if (dc.eof && first_n == 0) { /* nothing to decode */
        for (int i = 0; i < dc.n_lines; i++) {
            line_begin(&o, &dc.lines[i]);
            line_end(&o, &dc.lines[i], 0);
        }
        goto flush;
    }
    dc.S_cap = dc.eof ? first_S : S_limit;
    dc.L_cap = o.max_len ? o.max_len : dc.cfg.max_tgt_len > 2 * dc.S_cap ? dc.cfg.max_tgt_len : 2 * dc.S_cap;
    if (dc.pointer) dc.L_cap = dc.S_cap;
    cli_positions_caps(&dc.cfg, NULL, &dc.L_cap);
    dc.B = o.beam ? o.beam : dc.eof ? first_n : want;
    if ((rc = load_sized(&dc, &o)) || (rc = decoder_alloc(&dc, &o))) goto flush;
    for (;;) {
        rc = o.beam ? decode_beam(&dc, &o) : decode_greedy(&dc, &o);
        if (rc || dc.eof) break;
        fflush(stdout); /* each batch's outputs go out before the next is read */
        if ((rc = read_batch(&dc, &o, want, dc.S_cap))) break;
        if (dc.n_lines == 0) break;
    }
flush:
    cli_problems_summary(&dc.probs);
done:
    lines_clear(&dc);
    cli_lines_close(&dc.in);
    for (int k = 0; k < dc.M; k++) attend_model_free(dc.ms[k]);
    attend_model_free(dc.rm);
    attend_vocab_free(dc.rsv);
    attend_vocab_free(dc.rtv);
    free(dc.rsrc);
    free(dc.rhyp);
    free(dc.rscore);
    free(dc.order);
    attend_vocab_free(dc.sv);
    attend_vocab_free(dc.tv);
    free(dc.lines);
    free(dc.scratch);
    free(dc.text);
    free(dc.src_tok);
    free(dc.out_tok);
    free(dc.copy_lab);
    free(dc.src);
    free(dc.src_len);
    free(dc.which);
    free(dc.out);
    free(dc.out_len);
    free(dc.score);
    free(dc.align);
    return cli_finish("decode", rc);
}

/* ================================================================== eval */

static void eval_usage(FILE *f) {
    fprintf(f,
            "usage: attend eval MODEL (--tsv FILE | --task copy|reverse|sort [task options]) [options]\n"
            "\n"
            "Evaluates a model on pairs: teacher-forced loss and token/sequence accuracy, greedy\n"
            "(free-running) token/sequence accuracy, and the mean attention entropy.\n"
            "\n"
            "  --tsv FILE           source<TAB>target pairs, tokenized with the model's tokenizer\n"
            "  --skip-malformed     skip and count malformed lines instead of stopping\n"
            "  --task NAME          a built-in task (sort for pointer models)\n"
            "  --symbols N          distinct symbols (the model's source vocabulary)\n"
            "  --min-len N          shortest sequence (1)\n"
            "  --max-len N          longest sequence (the model's longest training source)\n"
            "  --count N            pairs (1000)\n"
            "  --data-seed N        seed of the pairs (2: the dev set of `attend train --task`\n"
            "                       with its default --data-seed)\n"
            "  --batch N            pairs per batch (64)\n"
            "  --format F           text (aligned name and value), tsv (name<TAB>value) or\n"
            "                       jsonl (one object); see docs/FORMAT.md (text)\n"
            "  --help               this message\n"
            "\n"
            "Exit status: 0 ok, 1 the model or the data could not be used, 2 bad usage.\n");
}

int cmd_eval(int argc, char **argv) {
    cli_set_oom_hint("lower --batch (or, for --task, --max-len)"); /* the options of this command that lower its memory */
    cli_parser p;
    cli_init(&p, "eval", argc, argv);
    cli_data_opts d;
    cli_data_opts_init(&d);
    const char *model = NULL;
    int rc = 0, help = 0, batch = 64, format = CLI_FORMAT_TEXT;
    while (rc == 0 && cli_next(&p)) {
        int r = cli_data_option(&p, &d, "--tsv");
        if (r >= 0) rc = r;
        else if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--batch")) rc = cli_int(&p, 1, 65536, &batch);
        else if (cli_is(&p, "--format")) rc = cli_choice(&p, cli_format_from_name, "text|tsv|jsonl", &format);
        else if (cli_positional(&p) && !model) model = p.arg;
        else rc = cli_unknown(&p);
    }
    if (rc) return rc;
    if (help) {
        eval_usage(stdout);
        return cli_finish("eval", 0);
    }
    if (!model) return cli_usage_error("eval", "which model? usage: attend eval MODEL (--tsv FILE | --task NAME)");
    if ((d.task >= 0) == (d.tsv != NULL)) return cli_usage_error("eval", "give exactly one of --tsv FILE and --task NAME");
    if (d.tsv && d.given_task_opts)
        return cli_usage_error("eval", "--symbols, --min-len, --max-len, --count and --data-seed apply to --task");
    if (d.task >= 0 && d.skip_malformed) return cli_usage_error("eval", "--skip-malformed applies to --tsv");
    if (d.tokenizer >= 0) return cli_usage_error("eval", "--tokenizer: the model file names its tokenizer");

    attend_model *m = NULL;
    attend_vocab *sv = NULL, *tv = NULL, *task_vocab = NULL;
    attend_dataset *data = NULL, *raw = NULL;
    attend_tokenizer tok;
    attend_error err = {0};
    if ((rc = cli_load_model("eval", model, 1, 0, 0, &m, &sv, &tv, &tok))) return rc;
    attend_model_config cfg = *attend_model_get_config(m);
    attend_model_free(m);
    m = NULL;
    int pointer = cfg.decoder == ATTEND_DECODER_POINTER;
    if (pointer != (d.task == ATTEND_TASK_SORT)) {
        rc = cli_usage_error("eval", pointer ? "%s is a pointer model: evaluate it on --task sort"
                                             : "%s is not a pointer model: --task sort needs one",
                             model);
        goto done;
    }
    if (d.tsv) {
        if ((rc = cli_read_tsv_copy("eval", &data, d.tsv, sv, tv, 0, tok, d.skip_malformed, cfg.copy))) goto done;
    } else {
        attend_task_config tc = {(attend_task)d.task, d.symbols ? d.symbols : attend_vocab_size(sv) - 4,
                                 d.min_len ? d.min_len : 1, d.max_len ? d.max_len : cfg.max_src_len,
                                 d.count ? d.count : 1000, d.have_data_seed ? d.data_seed : 2};
        if (tc.min_len > tc.max_len) {
            rc = cli_usage_error("eval", "--min-len %d is above the longest length %d", tc.min_len, tc.max_len);
            goto done;
        }
        if (attend_dataset_task(&raw, &task_vocab, &tc, &err)) {
            rc = cli_lib_fail("eval", &err);
            goto done;
        }
        if ((rc = cli_remap_dataset("eval", &data, raw, task_vocab, sv, tv, pointer))) goto done;
    }
    int ms = attend_dataset_max_src_len(data), mt = attend_dataset_max_tgt_len(data);
    if ((rc = cli_load_model("eval", model, batch, ms, mt, &m, NULL, NULL, NULL))) goto done;
    attend_eval_stats st;
    double t0 = cli_now();
    if (attend_model_evaluate(m, data, batch, 0, &st, &err)) {
        rc = cli_lib_fail("eval", &err);
        goto done;
    }
    double secs = cli_now() - t0;
    const char *names[8] = {"pairs",           "loss",           "tf_token_acc", "tf_seq_acc",
                            "greedy_token_acc", "greedy_seq_acc", "attn_entropy", "pairs_per_s"};
    double vals[8] = {st.pairs,           st.loss,           st.tf_token_acc, st.tf_seq_acc,
                      st.greedy_token_acc, st.greedy_seq_acc, st.attn_entropy, secs > 0 ? st.pairs / secs : 0};
    const char *fmts[8] = {"%.0f", "%.6f", "%.4f", "%.4f", "%.4f", "%.4f", "%.4f", "%.0f"};
    if (format == CLI_FORMAT_JSONL) printf("{");
    for (int k = 0; k < 8; k++) {
        if (format == CLI_FORMAT_TEXT) printf("%-18s", k == 7 ? "pairs/s" : names[k]);
        else if (format == CLI_FORMAT_TSV) printf("%s\t", names[k]);
        else printf("%s\"%s\":", k ? "," : "", names[k]);
        printf(fmts[k], vals[k]);
        if (format != CLI_FORMAT_JSONL) printf("\n");
    }
    if (format == CLI_FORMAT_JSONL) printf("}\n");
done:
    attend_model_free(m);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
    attend_vocab_free(task_vocab);
    attend_dataset_free(data);
    attend_dataset_free(raw);
    return cli_finish("eval", rc);
}
