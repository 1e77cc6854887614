/*
 * sweep.c — `attend sweep`: accuracy against source length for several
 * decoders under one training budget (attend_sweep_run), printed as a table
 * and written as CSV and an SVG plot.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "attend.h"
#include "cli.h"
#include "options.h"
#include "outputs.h"

#define MAX_LIST 32

static void sweep_usage(FILE *f) {
    fprintf(f,
            "usage: attend sweep [--task copy|reverse | --train FILE.tsv --dev FILE.tsv]\n"
            "                    [--lengths 5,10,20,40,60,80] [--decoders none,additive,dot,general]\n"
            "                    [budget options] [--csv PATH] [--svg PATH]\n"
            "       attend sweep --plot A.csv [B.csv ...] [--csv MERGED.csv] [--svg PATH]\n"
            "\n"
            "Trains one model per source length and decoder under the same budget and reports\n"
            "per length: full-sequence and token accuracy, free-running (greedy) and teacher-\n"
            "forced, the mean attention entropy (next to ln S, the entropy of uniform\n"
            "attention), training pairs/s and wall time. The same seed gives the same numbers\n"
            "(times aside). With TSV files, one model per decoder is trained on all of --train\n"
            "and --dev is scored per source-length bucket (previous length, length].\n"
            "\n"
            "data:\n"
            "  --task NAME          copy or reverse (copy)\n"
            "  --symbols N          distinct symbols (20)\n"
            "  --train-pairs N      training pairs generated per length (20000)\n"
            "  --dev-pairs N        dev pairs generated per length (300)\n"
            "  --train FILE         TSV training pairs (source<TAB>target)\n"
            "  --dev FILE           TSV dev pairs\n"
            "  --tokenizer NAME     char or space, for TSV files (char)\n"
            "  --lengths LIST       source lengths, increasing (5,10,20,40,60,80)\n"
            "models:\n"
            "  --decoders LIST      from: none (no attention: the fixed-context baseline),\n"
            "                       additive (bahdanau-additive), dot (luong-dot), general\n"
            "                       (luong-general), scaled_dot (luong-scaled_dot), or any\n"
            "                       DECODER-SCORE pair (none,additive,dot,general); a suffix\n"
            "                       adds a mechanism: +monotonic, +copy (additive+monotonic),\n"
            "                       +coverage (additive entries only: additive+coverage),\n"
            "                       +sparsemax or +entmax15 (the attention normaliser,\n"
            "                       dot+sparsemax); transformer: the transformer decoder (with\n"
            "                       --encoder transformer; --dec-hidden its feed-forward width)\n"
            "%s", "");
    cli_opt_usage(f, "--cell", "gru", 23);
    cli_opt_usage(f, "--emb", "32", 23);
    cli_opt_usage(f, "--hidden", "64", 23);
    cli_encoder_options_usage(f, 23);
    cli_opt_usage(f, "--dec-hidden", "the encoder width, as dot scores need: 2 x --hidden, transformer and conv --emb",
                  23);
    cli_opt_usage(f, "--attn", "64", 23);
    fprintf(f, "budget (the same for every run):\n");
    cli_opt_usage(f, "--steps", "1000", 23);
    cli_opt_usage(f, "--batch", "32", 23);
    cli_opt_usage(f, "--lr", "Adam's: 0.003", 23);
    cli_opt_usage(f, "--warmup", "a tenth of --steps, at most 100; then cosine decay to --min-lr", 23);
    cli_opt_usage(f, "--min-lr", "0.0001", 23);
    cli_opt_usage(f, "--clip", "1", 23);
    cli_opt_usage(f, "--seed", "1; data too", 23);
    fprintf(f,
            "output:\n"
            "  --csv PATH           results as CSV (sweep.csv)\n"
            "  --svg PATH           full-sequence accuracy against length, one line per decoder\n"
            "                       (sweep.svg)\n"
            "                       Both are rewritten as each run finishes, so a sweep stopped\n"
            "                       early keeps every finished row.\n"
            "  --plot               read the rows of CSV files written by earlier sweeps (e.g. one\n"
            "                       per length: each length's data and models depend only on the\n"
            "                       seed and that length, so split runs give the same rows), print\n"
            "                       them, and write the merged --csv (if given) and the --svg plot\n"
            "  --help               this message\n");
}

/* "5,10,20" → ints in [lo,hi]; 0 or 2 (usage error, printed) */
static int parse_int_list(const char *opt, const char *s, int lo, int hi, int *out, int *n) {
    *n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < lo || v > hi || (*end && *end != ','))
            return cli_usage_error("sweep", "%s: '%s' is not a comma-separated list of integers in [%d,%d]", opt, s,
                                   lo, hi);
        if (*n == MAX_LIST) return cli_usage_error("sweep", "%s: more than %d values", opt, MAX_LIST);
        out[(*n)++] = (int)v;
        p = *end ? end + 1 : end;
        if (*end == ',' && !*p) return cli_usage_error("sweep", "%s: '%s' ends with a comma", opt, s);
    }
    if (*n == 0) return cli_usage_error("sweep", "%s: empty list", opt);
    return 0;
}

/* one decoder name of --decoders, before its "+name" suffixes */
static int base_from_name(const char *name, attend_sweep_model *m) {
    static const struct {
        const char *name;
        attend_decoder_kind decoder;
        attend_score_kind score;
    } aliases[] = {
        {"none", ATTEND_DECODER_NONE, ATTEND_SCORE_ADDITIVE},
        {"additive", ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE},
        {"dot", ATTEND_DECODER_LUONG, ATTEND_SCORE_DOT},
        {"scaled_dot", ATTEND_DECODER_LUONG, ATTEND_SCORE_SCALED_DOT},
        {"general", ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL},
        {"transformer", ATTEND_DECODER_TRANSFORMER, ATTEND_SCORE_ADDITIVE}, /* needs --encoder transformer */
    };
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(name, aliases[i].name)) {
            m->decoder = aliases[i].decoder;
            m->score = aliases[i].score;
            return 1;
        }
    const char *dash = strchr(name, '-');
    if (!dash || dash - name >= 32) return 0;
    char dec[32];
    memcpy(dec, name, (size_t)(dash - name));
    dec[dash - name] = 0;
    int d = attend_decoder_from_name(dec), s = attend_score_from_name(dash + 1);
    if (d < 0 || s < 0 || d == ATTEND_DECODER_POINTER || d == ATTEND_DECODER_NONE || d == ATTEND_DECODER_TRANSFORMER)
        return 0;
    m->decoder = (attend_decoder_kind)d;
    m->score = (attend_score_kind)s;
    return 1;
}

/* one entry of --decoders: a decoder name, then "+name" suffixes (the
 * library's table: attend_sweep_model_suffix); 0 and a message in err when
 * a suffix is unknown, 0 and err->msg empty when the decoder is */
static int model_from_name(char *name, attend_sweep_model *m, attend_error *err) {
    memset(m, 0, sizeof *m);
    err->msg[0] = 0;
    char *plus = strchr(name, '+');
    if (plus) *plus = 0;
    int ok = base_from_name(name, m);
    if (plus) *plus = '+';
    while (ok && plus) {
        char *next = strchr(plus + 1, '+');
        if (next) *next = 0;
        ok = attend_sweep_model_suffix(m, plus + 1, err) == ATTEND_OK;
        if (next) *next = '+';
        plus = next;
    }
    return ok;
}

static int parse_models(const char *s, attend_sweep_model *out, int *n) {
    *n = 0;
    char buf[512];
    if (strlen(s) >= sizeof buf) return cli_usage_error("sweep", "--decoders: list too long");
    strcpy(buf, s);
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = 0;
        if (*n == MAX_LIST) return cli_usage_error("sweep", "--decoders: more than %d values", MAX_LIST);
        attend_error err;
        if (!model_from_name(tok, &out[*n], &err)) {
            if (err.msg[0]) return cli_usage_error("sweep", "--decoders: '%s': %s", tok, err.msg);
            return cli_usage_error("sweep",
                                   "--decoders: unknown decoder '%s' (none, additive, dot, general, scaled_dot, "
                                   "transformer, or DECODER-SCORE such as bahdanau-dot)",
                                   tok);
        }
        /* what combines with what: the library's rules, in the suffixes' words */
        attend_model_config mc;
        memset(&mc, 0, sizeof mc);
        mc.decoder = out[*n].decoder;
        mc.score = out[*n].decoder == ATTEND_DECODER_NONE || out[*n].decoder == ATTEND_DECODER_TRANSFORMER
                       ? ATTEND_SCORE_ADDITIVE
                       : out[*n].score;
        mc.coverage = out[*n].coverage;
        mc.copy = out[*n].copy;
        mc.monotonic = out[*n].monotonic;
        mc.normalizer = (attend_normalizer)out[*n].normalizer;
        char msg[600];
        if (cli_rules_suffixes(&mc, msg, sizeof msg)) return cli_usage_error("sweep", "--decoders: '%s': %s", tok, msg);
        (*n)++;
    }
    return 0;
}

static void print_header(void) {
    printf("%-18s %6s %6s %9s %9s %9s %9s %8s %7s %9s %8s\n", "decoder", "length", "pairs", "seq(gr)", "tok(gr)",
           "seq(tf)", "tok(tf)", "entropy", "ln S", "pairs/s", "wall s");
}

static void print_row(const attend_sweep_row *r) {
    char name[64];
    attend_sweep_model_name(r->model, name, sizeof name);
    char len[32];
    if (r->min_length == r->length) snprintf(len, sizeof len, "%d", r->length);
    else snprintf(len, sizeof len, "%d-%d", r->min_length, r->length);
    if (r->eval.pairs == 0) {
        printf("%-18s %6s %6d %9s\n", name, len, 0, "(no pairs)");
        return;
    }
    printf("%-18s %6s %6d %9.4f %9.4f %9.4f %9.4f %8.3f %7.3f %9.0f %8.1f\n", name, len, r->eval.pairs,
           r->eval.greedy_seq_acc, r->eval.greedy_token_acc, r->eval.tf_seq_acc, r->eval.tf_token_acc,
           r->eval.attn_entropy, r->uniform_entropy, r->samples_per_s, r->wall_seconds);
}

/* Rows as they complete: printed, the CSV file rewritten (atomically, with
 * every row so far) and the plot redrawn, so a long sweep stopped early keeps
 * what it finished. A target written in place (a FIFO, /dev/stdout) cannot be
 * rewritten: it gets the whole table, or the plot, once, at the end. */
typedef struct {
    attend_sweep_row *done; /* [total] in completion order */
    int n_done;
    const char *csv_path, *svg_path;
    int csv_in_place, svg_in_place;
    int failed;
} progress;

/* The CSV of the rows done so far to csv_path; 0 or 1 after a message. */
static int write_csv(const progress *pg) {
    attend_error err = {0};
    char *csv = NULL;
    if (attend_sweep_csv(pg->done, pg->n_done, &csv, &err)) return cli_lib_fail("sweep", &err);
    int rc = analysis_write_file("sweep", pg->csv_path, csv);
    free(csv);
    return rc;
}

static void on_row(void *user, const attend_sweep_row *row, int index, int total) {
    progress *pg = user;
    fprintf(stderr, "[%d/%d] ", index + 1, total);
    fflush(stderr);
    print_row(row);
    fflush(stdout);
    pg->done[pg->n_done++] = *row;
    if (pg->failed) return;
    attend_error err = {0};
    char *svg = NULL;
    if (!pg->csv_in_place && write_csv(pg)) pg->failed = 1;
    else if (pg->svg_in_place) { /* drawn once, at the end */
    } else if (attend_sweep_plot_svg(pg->done, pg->n_done, NULL, &svg, &err)) {
        cli_lib_fail("sweep", &err);
        pg->failed = 1;
    } else if (analysis_write_file("sweep", pg->svg_path, svg)) {
        pg->failed = 1;
    }
    free(svg);
}

/* Two rows of the same model: the same name (decoder, score, suffixes). */
static int same_model(attend_sweep_model a, attend_sweep_model b) {
    char na[96], nb[96];
    return !strcmp(attend_sweep_model_name(a, na, sizeof na), attend_sweep_model_name(b, nb, sizeof nb));
}

/* The accuracy matrix (lengths x models, in order of first appearance). */
static void print_matrix(const attend_sweep_row *rows, int n) {
    attend_sweep_model models[MAX_LIST];
    int lengths[MAX_LIST], nm = 0, nl = 0;
    for (int i = 0; i < n; i++) {
        int k = 0, l = 0;
        while (k < nm && !same_model(models[k], rows[i].model)) k++;
        if (k == nm && nm < MAX_LIST) models[nm++] = rows[i].model;
        while (l < nl && lengths[l] != rows[i].length) l++;
        if (l == nl && nl < MAX_LIST) lengths[nl++] = rows[i].length;
    }
    printf("\nfull-sequence accuracy, free-running greedy (rows: source length):\n%6s", "length");
    for (int k = 0; k < nm; k++) {
        char name[64];
        printf(" %18s", attend_sweep_model_name(models[k], name, sizeof name));
    }
    printf("\n");
    for (int l = 0; l < nl; l++) {
        printf("%6d", lengths[l]);
        for (int k = 0; k < nm; k++) {
            const attend_sweep_row *r = NULL;
            for (int i = 0; i < n && !r; i++)
                if (rows[i].length == lengths[l] && same_model(rows[i].model, models[k]))
                    r = rows + i;
            if (r && r->eval.pairs) printf(" %18.4f", r->eval.greedy_seq_acc);
            else printf(" %18s", "-");
        }
        printf("\n");
    }
}

/* `attend sweep --plot A.csv B.csv ...`: merge finished rows, redraw. */
static int plot_only(const char *const *files, int n_files, const char *csv_path, const char *svg_path) {
    enum { CAP = MAX_LIST * MAX_LIST };
    attend_sweep_row *rows = calloc(CAP, sizeof *rows);
    int n = 0, rc = rows ? 0 : 1;
    attend_error err = {0};
    for (int f = 0; !rc && f < n_files; f++) {
        FILE *in = fopen(files[f], "rb");
        if (!in) {
            cli_error("sweep", "cannot read %s", files[f]);
            rc = 1;
            break;
        }
        char *text = NULL;
        size_t len = 0, cap = 0, got;
        char chunk[4096];
        while (!rc && (got = fread(chunk, 1, sizeof chunk, in)) > 0) {
            if (len + got > cap) {
                cap = (len + got) * 2;
                char *t = realloc(text, cap);
                if (!t) rc = 1;
                else text = t;
            }
            if (!rc) memcpy(text + len, chunk, got), len += got;
        }
        fclose(in);
        int m = 0;
        if (!rc && attend_sweep_csv_parse(text ? text : "", len, files[f], rows + n, CAP - n, &m, &err))
            rc = cli_lib_fail("sweep", &err);
        n += m;
        free(text);
    }
    if (!rc && n == 0) rc = cli_usage_error("sweep", "--plot: no rows in the given files");
    /* by length, stably: each model's points in order along the x axis */
    for (int i = 1; !rc && i < n; i++)
        for (int j = i; j > 0 && rows[j - 1].length > rows[j].length; j--) {
            attend_sweep_row t = rows[j];
            rows[j] = rows[j - 1];
            rows[j - 1] = t;
        }
    char *csv = NULL, *svg = NULL;
    if (!rc) {
        print_header();
        for (int i = 0; i < n; i++) print_row(rows + i);
        print_matrix(rows, n);
        if (attend_sweep_csv(rows, n, &csv, &err) || attend_sweep_plot_svg(rows, n, NULL, &svg, &err))
            rc = cli_lib_fail("sweep", &err);
    }
    if (!rc && csv_path) rc = analysis_write_file("sweep", csv_path, csv);
    if (!rc) rc = analysis_write_file("sweep", svg_path, svg);
    if (!rc) printf("wrote %s%s%s\n", csv_path ? cli_vis(csv_path) : "", csv_path ? " and " : "", cli_vis(svg_path));
    free(csv);
    free(svg);
    free(rows);
    return rc;
}

int cmd_sweep(int argc, char **argv) {
    cli_set_oom_hint("lower --batch, --emb, --hidden, --dec-hidden, --attn or the --lengths"); /* the options of this command that lower its memory */
    attend_sweep_config c;
    memset(&c, 0, sizeof c);
    c.task = ATTEND_TASK_COPY;
    c.symbols = 20;
    c.train_pairs = 20000;
    c.dev_pairs = 300;
    c.cell = ATTEND_CELL_GRU;
    c.emb = 32;
    c.enc_hidden = 64;
    c.attn = 64;
    c.steps = 1000;
    c.batch = 32;
    c.seed = 1;
    int lengths[MAX_LIST] = {5, 10, 20, 40, 60, 80}, n_lengths = 6;
    attend_sweep_model models[MAX_LIST];
    int n_models = 0;
    parse_models("none,additive,dot,general", models, &n_models);
    double lr = 3e-3, min_lr = 1e-4, clip = 1;
    int warmup = -1, dec_hidden = 0, help = 0, task = ATTEND_TASK_COPY, tokenizer = ATTEND_TOKENIZE_CHAR;
    const char *csv_path = "sweep.csv", *svg_path = "sweep.svg", *train_path = NULL, *dev_path = NULL, *s;
    int plot = 0, csv_given = 0, n_files = 0;
    const char *files[MAX_LIST];
    cli_encoder_opts enc;
    cli_encoder_opts_init(&enc);

    cli_parser p;
    cli_init(&p, "sweep", argc, argv);
    int rc = 0;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--task")) {
            rc = cli_choice(&p, cli_task_from_name, "copy|reverse", &task);
            if (!rc && task == ATTEND_TASK_SORT)
                rc = cli_usage_error("sweep", "--task: sort is a pointer task; the sweep compares copy and reverse");
        } else if (cli_is(&p, "--symbols")) rc = cli_int(&p, 1, 100000, &c.symbols);
        else if (cli_is(&p, "--train-pairs")) rc = cli_int(&p, 1, 100000000, &c.train_pairs);
        else if (cli_is(&p, "--dev-pairs")) rc = cli_int(&p, 1, 100000000, &c.dev_pairs);
        else if (cli_is(&p, "--train")) rc = cli_path(&p, &train_path);
        else if (cli_is(&p, "--dev")) rc = cli_path(&p, &dev_path);
        else if (cli_is(&p, "--tokenizer")) rc = cli_choice(&p, attend_tokenizer_from_name, "char|space", &tokenizer);
        else if (cli_is(&p, "--lengths")) {
            rc = cli_string(&p, &s);
            if (!rc) rc = parse_int_list("--lengths", s, 1, 4096, lengths, &n_lengths);
            for (int i = 1; !rc && i < n_lengths; i++)
                if (lengths[i] <= lengths[i - 1]) rc = cli_usage_error("sweep", "--lengths: '%s' is not increasing", s);
        } else if (cli_is(&p, "--decoders")) {
            rc = cli_string(&p, &s);
            if (!rc) rc = parse_models(s, models, &n_models);
        } else if (cli_is(&p, "--cell")) {
            int cell = 0;
            cli_opt(&p, "--cell", &cell, &rc);
            c.cell = (attend_cell_kind)cell;
        } else if (cli_encoder_option(&p, &enc, &rc) || cli_opt(&p, "--emb", &c.emb, &rc) ||
                   cli_opt(&p, "--hidden", &c.enc_hidden, &rc) ||
                   cli_opt(&p, "--dec-hidden", &dec_hidden, &rc) || cli_opt(&p, "--attn", &c.attn, &rc) ||
                   cli_opt(&p, "--batch", &c.batch, &rc) || cli_opt(&p, "--lr", &lr, &rc) ||
                   cli_opt(&p, "--warmup", &warmup, &rc) || cli_opt(&p, "--min-lr", &min_lr, &rc) ||
                   cli_opt(&p, "--clip", &clip, &rc) || cli_opt(&p, "--seed", &c.seed, &rc))
            continue;
        else if (cli_opt(&p, "--steps", &c.steps, &rc)) {
            if (!rc && c.steps < 1) rc = cli_usage_error("sweep", "--steps: a sweep trains every model at least one step");
        }
        else if (cli_is(&p, "--csv")) {
            rc = cli_path(&p, &csv_path);
            csv_given = 1;
        } else if (cli_is(&p, "--svg")) rc = cli_path(&p, &svg_path);
        else if (cli_is(&p, "--plot")) rc = cli_flag(&p, &plot);
        else if (cli_positional(&p) && n_files < MAX_LIST) files[n_files++] = p.arg;
        else rc = cli_unknown(&p);
    }
    if (rc) return rc;
    if (help) {
        sweep_usage(stdout);
        return 0;
    }
    if (plot != (n_files > 0))
        return cli_usage_error("sweep", plot ? "--plot needs CSV files" : "unexpected argument '%s'",
                               n_files ? files[0] : "");
    {
        /* outputs checked before hours of training; the CSV files --plot reads
         * and the data are inputs no output may overwrite */
        attend_path_use uses[4 + MAX_LIST];
        int n_uses = 0;
        uses[n_uses++] = (attend_path_use){train_path, "--train", 0, 0};
        uses[n_uses++] = (attend_path_use){dev_path, "--dev", 0, 0};
        for (int f = 0; f < n_files; f++) uses[n_uses++] = (attend_path_use){files[f], "--plot CSV", 0, 0};
        uses[n_uses++] = (attend_path_use){plot && !csv_given ? NULL : csv_path, "--csv", 1, ATTEND_OUTPUT_ALLOW_SPECIAL};
        uses[n_uses++] = (attend_path_use){svg_path, "--svg", 1, ATTEND_OUTPUT_ALLOW_SPECIAL};
        if (cli_check_outputs("sweep", uses, n_uses, NULL)) return 1;
        const char *outs[] = {plot && !csv_given ? NULL : csv_path, svg_path}; /* the table then goes to stderr */
        if (cli_stdout_claim("sweep", outs, 2)) return 1;
    }
    if (plot) return cli_finish("sweep", plot_only(files, n_files, csv_given ? csv_path : NULL, svg_path));
    if (!train_path != !dev_path) return cli_usage_error("sweep", "--train and --dev go together");
    /* the encoder's settings, the same rules as train's; the transformer decoder in --decoders needs its encoder */
    for (int i = 0; i < n_models; i++)
        if (models[i].decoder == ATTEND_DECODER_TRANSFORMER && enc.encoder != ATTEND_ENCODER_TRANSFORMER)
            return cli_usage_error("sweep", "--decoders: 'transformer' shares the encoder's --heads, --positions and "
                                            "--post-norm: it needs --encoder transformer, not --encoder %s",
                                   attend_encoder_name((attend_encoder_kind)enc.encoder));
    if ((rc = cli_encoder_check("sweep", &enc, -1, c.emb))) return rc;
    {
        attend_model_config ec;
        memset(&ec, 0, sizeof ec);
        ec.emb = c.emb;
        ec.enc_hidden = c.enc_hidden;
        cli_encoder_config(&ec, &enc);
        c.encoder = ec.encoder;
        c.heads = ec.heads;
        c.positions = ec.positions;
        c.post_norm = ec.post_norm;
        c.kernel = ec.kernel;
        c.conv_relu = ec.conv_relu;
        if (!dec_hidden) dec_hidden = attend_model_encoder_width(&ec); /* what dot scores need */
    }
    if (warmup < 0) warmup = cli_warmup_for(c.steps);
    if (warmup >= c.steps) return cli_usage_error("sweep", "--warmup %d must be below --steps %d", warmup, c.steps);
    c.task = (attend_task)task;
    c.dec_hidden = dec_hidden;
    c.lengths = lengths;
    c.n_lengths = n_lengths;
    c.models = models;
    c.n_models = n_models;
    c.optim = attend_optim_defaults(ATTEND_OPT_ADAM);
    c.optim.lr = lr;
    c.optim.clip_norm = clip;
    c.optim.warmup_steps = warmup;
    c.optim.decay_steps = c.steps - warmup;
    c.optim.min_lr = min_lr;

    attend_error err = {0};
    attend_vocab *sv = NULL, *tv = NULL;
    attend_dataset *train = NULL, *dev = NULL;
    if (train_path) {
        if (attend_vocab_create(&sv, &err) || attend_vocab_create(&tv, &err)) rc = cli_lib_fail("sweep", &err);
        if (!rc) rc = cli_read_tsv("sweep", &train, train_path, sv, tv, 1, (attend_tokenizer)tokenizer, 0);
        if (!rc) rc = cli_read_tsv("sweep", &dev, dev_path, sv, tv, 0, (attend_tokenizer)tokenizer, 0);
        c.train = train;
        c.dev = dev;
        c.src_vocab = sv ? attend_vocab_size(sv) : 0;
        c.tgt_vocab = tv ? attend_vocab_size(tv) : 0;
        c.src_vocab_map = sv;
        c.tgt_vocab_map = tv;
    }
    int n_rows = n_lengths * n_models;
    attend_sweep_row *rows = NULL;
    progress pg = {0};
    pg.csv_path = csv_path;
    pg.svg_path = svg_path;
    if (!rc) {
        rows = calloc((size_t)n_rows, sizeof *rows);
        pg.done = calloc((size_t)n_rows, sizeof *pg.done);
        if (!rows || !pg.done) {
            cli_oom("sweep", "the result rows");
            rc = 1;
        }
    }
    pg.csv_in_place = attend_outfile_in_place(csv_path);
    pg.svg_in_place = attend_outfile_in_place(svg_path);
    if (!rc && !pg.csv_in_place) rc = write_csv(&pg); /* the header: the file is writable */
    if (!rc) {
        if (train_path)
            printf("sweep: %s / %s, lengths as buckets, %d steps x %d pairs per decoder, seed %llu\n", cli_vis(train_path),
                   cli_vis(dev_path), c.steps, c.batch, (unsigned long long)c.seed);
        else
            printf("sweep: %s, %d symbols, %d training / %d dev pairs per length, %d steps x %d pairs per run, "
                   "seed %llu\n",
                   cli_task_name(task), c.symbols, c.train_pairs, c.dev_pairs, c.steps, c.batch,
                   (unsigned long long)c.seed);
        if (c.encoder == ATTEND_ENCODER_TRANSFORMER)
            printf("model: transformer encoder of width %d (%d heads, feed-forward %d, %s, %s positions), %s, ",
                   c.emb, c.heads, c.enc_hidden, c.post_norm ? "post-norm" : "pre-norm",
                   attend_positions_name(c.positions), attend_cell_name(c.cell));
        else if (c.encoder == ATTEND_ENCODER_CONV)
            printf("model: conv encoder of width %d (kernel %d, %s, %s positions), %s, ", c.emb, c.kernel,
                   c.conv_relu ? "ReLU" : "GLU", attend_positions_name(c.positions), attend_cell_name(c.cell));
        else printf("model: %s, emb %d, encoder %d x 2, ", attend_cell_name(c.cell), c.emb, c.enc_hidden);
        printf("decoder %d, additive width %d; Adam lr %g, warm-up %d, cosine to %g, clip %g\n", c.dec_hidden, c.attn,
               lr, warmup, min_lr, clip);
        print_header();
        fflush(stdout);
        if (attend_sweep_run(&c, rows, on_row, &pg, &err)) rc = cli_lib_fail("sweep", &err);
        if (!rc && pg.failed) rc = 1;
    }
    if (!rc && pg.csv_in_place && write_csv(&pg)) rc = 1;
    if (!rc && pg.svg_in_place) {
        char *svg = NULL;
        if (attend_sweep_plot_svg(pg.done, pg.n_done, NULL, &svg, &err)) rc = cli_lib_fail("sweep", &err);
        else if (analysis_write_file("sweep", svg_path, svg)) rc = 1;
        free(svg);
    }
    if (!rc) {
        print_matrix(rows, n_rows);
        printf("wrote %s and %s\n", cli_vis(csv_path), cli_vis(svg_path));
    }
    free(rows);
    free(pg.done);
    attend_dataset_free(train);
    attend_dataset_free(dev);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
    return cli_finish("sweep", rc);
}
