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
#include "heatmap.h"

/* ================================================================ decode */

typedef struct {
    const char *model, *input;
    int beam, nbest, max_len, batch, align;
    double alpha;
    int align_style;
} decode_opts;

static void decode_usage(FILE *f) {
    fprintf(f,
            "usage: attend decode MODEL [FILE|-] [options]\n"
            "\n"
            "Decodes one source per input line (the text before a TAB, if any, so TSV files\n"
            "work as input) with the model's tokenizer; tokens the model has not seen become\n"
            "<unk>. Prints one output per line; an empty input line gives an empty output line.\n"
            "A pointer model prints the chosen source positions (0-based), a TAB, and the\n"
            "source tokens in that order. FILE - or no FILE reads standard input.\n"
            "\n"
            "  --beam K             beam search with K hypotheses (default: greedy, batched)\n"
            "  --nbest N            print the N best hypotheses as score<TAB>output lines, best\n"
            "                       first (beam search; --beam defaults to N)\n"
            "  --alpha A            length normalisation: score = log p / (length+1)^A (0)\n"
            "  --max-len N          longest output in tokens (the longer of the model's longest\n"
            "                       training target and twice the longest input; a pointer\n"
            "                       model emits one position per source token)\n"
            "  --batch N            lines decoded together by greedy decoding (64)\n"
            "  --align              print each output's alignment after it, then a blank line\n"
            "  --align-format NAME  shade (characters \" .:-=+*#%%@\" by weight), percent (weights\n"
            "                       in hundredths) or tsv (a header of source tokens, then one\n"
            "                       row per output token: token<TAB>weights) (shade)\n"
            "  --help               this message\n"
            "\n"
            "Exit status: 0 ok, 1 the model or the input could not be used, 2 bad usage.\n");
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
        else if (cli_is(&p, "--max-len")) rc = cli_int(&p, 1, 65536, &o->max_len);
        else if (cli_is(&p, "--batch")) rc = cli_int(&p, 1, 65536, &o->batch);
        else if (cli_is(&p, "--align")) rc = cli_flag(&p, &o->align);
        else if (cli_is(&p, "--align-format"))
            rc = cli_choice(&p, heatmap_style_from_name, "shade|percent|tsv", &o->align_style);
        else if (cli_positional(&p) && npos < 2) {
            if (npos++ == 0) o->model = p.arg;
            else o->input = p.arg;
        } else rc = cli_unknown(&p);
    }
    if (rc || *help) return rc;
    if (!o->model) return cli_usage_error("decode", "which model? usage: attend decode MODEL [FILE|-]");
    if (o->nbest && !o->beam) o->beam = o->nbest;
    if (o->nbest > o->beam) return cli_usage_error("decode", "--nbest %d is more than --beam %d", o->nbest, o->beam);
    return 0;
}

/* The sources, tokenized. */
typedef struct {
    int n, cap;
    int32_t **ids; /* [n][len[i]] */
    int *len;
    int max_len;
} sources;

static void sources_free(sources *s) {
    for (int i = 0; i < s->n; i++) free(s->ids[i]);
    free(s->ids);
    free(s->len);
    memset(s, 0, sizeof *s);
}

static int read_sources(const char *path, attend_vocab *sv, attend_tokenizer tok, sources *s) {
    const char *name = path && strcmp(path, "-") ? path : "<stdin>";
    FILE *f = path && strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "attend decode: %s: %s\n", name, strerror(errno));
        return 1;
    }
    char *line = NULL;
    size_t lcap = 0;
    ssize_t got;
    int rc = 0;
    memset(s, 0, sizeof *s);
    while (rc == 0 && (got = getline(&line, &lcap, f)) >= 0) {
        size_t len = (size_t)got;
        char *tab = memchr(line, '\t', len);
        if (tab) len = (size_t)(tab - line);
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
        if (s->n == s->cap) {
            int nc = s->cap ? 2 * s->cap : 256;
            int32_t **ni = realloc(s->ids, (size_t)nc * sizeof *ni);
            if (ni) s->ids = ni;
            int *nl = realloc(s->len, (size_t)nc * sizeof *nl);
            if (nl) s->len = nl;
            if (!ni || !nl) {
                fprintf(stderr, "attend decode: out of memory reading %s\n", name);
                rc = 1;
                break;
            }
            s->cap = nc;
        }
        int32_t *ids = malloc((len + 1) * sizeof *ids);
        if (!ids) {
            fprintf(stderr, "attend decode: out of memory reading %s\n", name);
            rc = 1;
            break;
        }
        int n_ids = 0;
        attend_error err = {0};
        if (len && attend_vocab_encode(sv, tok, 0, line, len, ids, (int)len + 1, &n_ids, &err) != ATTEND_OK) {
            fprintf(stderr, "attend decode: %s:%d: %s\n", name, s->n + 1, err.msg);
            free(ids);
            rc = 1;
            break;
        }
        s->ids[s->n] = ids;
        s->len[s->n] = n_ids;
        if (n_ids > s->max_len) s->max_len = n_ids;
        s->n++;
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "attend decode: error reading %s\n", name);
        rc = 1;
    }
    free(line);
    if (f != stdin) fclose(f);
    if (rc) sources_free(s);
    return rc;
}

typedef struct {
    attend_model *m;
    attend_vocab *sv, *tv;
    attend_tokenizer tok;
    int pointer;
    char *text;      /* [text_cap] output text */
    size_t text_cap;
    const char **src_tok, **out_tok; /* [S], [L] heatmap labels */
} decoder;

/* Prints one output (and its alignment [len,S] when asked). */
static int print_output(decoder *dc, const decode_opts *o, const int32_t *src, int S, const int32_t *out, int len,
                        const attend_real *align, const double *score) {
    attend_error err = {0};
    if (score) printf("%.6f\t", *score);
    if (dc->pointer) {
        for (int t = 0; t < len; t++) printf("%s%d", t ? " " : "", (int)out[t]);
        int32_t *picked = malloc((size_t)(len + 1) * sizeof *picked);
        if (!picked) {
            fprintf(stderr, "attend decode: out of memory\n");
            return 1;
        }
        for (int t = 0; t < len; t++) picked[t] = out[t] >= 0 && out[t] < S ? src[out[t]] : ATTEND_UNK;
        attend_status st = attend_vocab_decode(dc->sv, dc->tok, picked, len, dc->text, dc->text_cap, &err);
        free(picked);
        if (st) return cli_lib_fail("decode", &err);
        printf("\t%s\n", dc->text);
    } else {
        if (attend_vocab_decode(dc->tv, dc->tok, out, len, dc->text, dc->text_cap, &err))
            return cli_lib_fail("decode", &err);
        printf("%s\n", dc->text);
    }
    if (o->align && align) {
        for (int j = 0; j < S; j++) dc->src_tok[j] = attend_vocab_token(dc->sv, src[j]);
        for (int t = 0; t < len; t++) {
            const char *tk = dc->pointer ? (out[t] >= 0 && out[t] < S ? attend_vocab_token(dc->sv, src[out[t]]) : "?")
                                         : attend_vocab_token(dc->tv, out[t]);
            dc->out_tok[t] = tk ? tk : "?";
        }
        heatmap_print(stdout, align, len, S, dc->src_tok, dc->out_tok, (heatmap_style)o->align_style);
        printf("\n");
    }
    return 0;
}

/* Greedy decoding of the lines in batches of o->batch. */
static int decode_greedy(decoder *dc, const decode_opts *o, const sources *s, int L) {
    int B = o->batch, Smax = s->max_len;
    int32_t *src = malloc((size_t)B * Smax * sizeof *src), *src_len = malloc((size_t)B * sizeof *src_len);
    int32_t *out = malloc((size_t)B * L * sizeof *out), *out_len = malloc((size_t)B * sizeof *out_len);
    int *which = malloc((size_t)B * sizeof *which);
    attend_real *align = o->align ? malloc((size_t)B * L * Smax * sizeof *align) : NULL;
    int rc = 0;
    if (!src || !src_len || !out || !out_len || !which || (o->align && !align)) {
        fprintf(stderr, "attend decode: out of memory\n");
        rc = 1;
    }
    for (int first = 0; rc == 0 && first < s->n;) {
        /* the next B non-empty lines; empty lines before them print as empty outputs */
        int nb = 0, S = 1, last = first;
        for (; last < s->n && nb < B; last++) {
            if (s->len[last] == 0) continue;
            which[nb++] = last;
            if (s->len[last] > S) S = s->len[last];
        }
        for (int k = 0; k < nb; k++) {
            src_len[k] = s->len[which[k]];
            for (int j = 0; j < S; j++) src[(size_t)k * S + j] = j < src_len[k] ? s->ids[which[k]][j] : ATTEND_PAD;
        }
        attend_error err = {0};
        int maxl = dc->pointer ? S : L;
        if (nb && attend_model_greedy(dc->m, src, src_len, nb, S, maxl, out, out_len, align, &err)) {
            rc = cli_lib_fail("decode", &err);
            break;
        }
        for (int i = first, k = 0; rc == 0 && i < last; i++) {
            if (s->len[i] == 0) {
                printf("\n");
                continue;
            }
            attend_real *a = align ? align + (size_t)k * maxl * S : NULL; /* [maxl,S] */
            int sl = src_len[k];
            if (a) /* rows of this line's own length [out_len,sl], in place: row t moves down to t*sl */
                for (int t = 0; t < out_len[k]; t++) memmove(a + (size_t)t * sl, a + (size_t)t * S, sl * sizeof *a);
            rc = print_output(dc, o, src + (size_t)k * S, sl, out + (size_t)k * maxl, out_len[k], a, NULL);
            k++;
        }
        first = last;
    }
    free(src);
    free(src_len);
    free(out);
    free(out_len);
    free(which);
    free(align);
    return rc;
}

/* Beam search, one line at a time. */
static int decode_beam(decoder *dc, const decode_opts *o, const sources *s, int L) {
    int K = o->beam, nbest = o->nbest ? o->nbest : 1, Smax = s->max_len;
    int32_t *out = malloc((size_t)nbest * L * sizeof *out), *out_len = malloc((size_t)nbest * sizeof *out_len);
    double *score = malloc((size_t)nbest * sizeof *score);
    attend_real *align = o->align ? malloc((size_t)nbest * L * Smax * sizeof *align) : NULL;
    int rc = 0;
    if (!out || !out_len || !score || (o->align && !align)) {
        fprintf(stderr, "attend decode: out of memory\n");
        rc = 1;
    }
    for (int i = 0; rc == 0 && i < s->n; i++) {
        int S = s->len[i], got = 0;
        if (S == 0) {
            printf("\n");
            continue;
        }
        attend_error err = {0};
        if (attend_model_beam(dc->m, s->ids[i], S, K, nbest, L, o->alpha, out, out_len, score, align, &got, &err)) {
            rc = cli_lib_fail("decode", &err);
            break;
        }
        for (int h = 0; rc == 0 && h < got; h++)
            rc = print_output(dc, o, s->ids[i], S, out + (size_t)h * L, out_len[h],
                              align ? align + (size_t)h * L * S : NULL, o->nbest ? &score[h] : NULL);
        if (got == 0 && rc == 0) printf("\n");
    }
    free(out);
    free(out_len);
    free(score);
    free(align);
    return rc;
}

int cmd_decode(int argc, char **argv) {
    decode_opts o;
    memset(&o, 0, sizeof o);
    o.batch = 64;
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
    sources s;
    memset(&s, 0, sizeof s);
    /* first load: the vocabularies and the trained lengths (a batch of one) */
    if ((rc = cli_load_model("decode", o.model, 1, 0, 0, &dc.m, &dc.sv, &dc.tv, &dc.tok))) return rc;
    attend_model_config cfg = *attend_model_get_config(dc.m);
    attend_model_free(dc.m);
    dc.m = NULL;
    dc.pointer = cfg.decoder == ATTEND_DECODER_POINTER;
    if ((rc = read_sources(o.input, dc.sv, dc.tok, &s))) goto done;
    if (s.max_len == 0) { /* nothing but empty lines */
        for (int i = 0; i < s.n; i++) printf("\n");
        goto done;
    }
    int L = o.max_len ? o.max_len : cfg.max_tgt_len > 2 * s.max_len ? cfg.max_tgt_len : 2 * s.max_len;
    if (dc.pointer) L = s.max_len;
    int B = o.beam > o.batch ? o.beam : o.batch;
    if (B > s.n && !o.beam) B = s.n;
    if ((rc = cli_load_model("decode", o.model, B, s.max_len, L, &dc.m, NULL, NULL, NULL))) goto done;
    if (o.batch > B) o.batch = B;
    dc.text_cap = (size_t)(L > s.max_len ? L : s.max_len) * (ATTEND_MAX_TOKEN_BYTES + 1) + 1;
    dc.text = malloc(dc.text_cap);
    dc.src_tok = malloc((size_t)s.max_len * sizeof *dc.src_tok);
    dc.out_tok = malloc((size_t)L * sizeof *dc.out_tok);
    if (!dc.text || !dc.src_tok || !dc.out_tok) {
        fprintf(stderr, "attend decode: out of memory\n");
        rc = 1;
        goto done;
    }
    rc = o.beam ? decode_beam(&dc, &o, &s, L) : decode_greedy(&dc, &o, &s, L);
done:
    sources_free(&s);
    attend_model_free(dc.m);
    attend_vocab_free(dc.sv);
    attend_vocab_free(dc.tv);
    free(dc.text);
    free(dc.src_tok);
    free(dc.out_tok);
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
            "  --help               this message\n"
            "\n"
            "Exit status: 0 ok, 1 the model or the data could not be used, 2 bad usage.\n");
}

int cmd_eval(int argc, char **argv) {
    cli_parser p;
    cli_init(&p, "eval", argc, argv);
    cli_data_opts d;
    cli_data_opts_init(&d);
    const char *model = NULL;
    int rc = 0, help = 0, batch = 64;
    while (rc == 0 && cli_next(&p)) {
        int r = cli_data_option(&p, &d, "--tsv");
        if (r >= 0) rc = r;
        else if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--batch")) rc = cli_int(&p, 1, 65536, &batch);
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
        if ((rc = cli_read_tsv("eval", &data, d.tsv, sv, tv, 0, tok, d.skip_malformed))) goto done;
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
    printf("pairs             %d\n", st.pairs);
    printf("loss              %.6f\n", st.loss);
    printf("tf_token_acc      %.4f\n", st.tf_token_acc);
    printf("tf_seq_acc        %.4f\n", st.tf_seq_acc);
    printf("greedy_token_acc  %.4f\n", st.greedy_token_acc);
    printf("greedy_seq_acc    %.4f\n", st.greedy_seq_acc);
    printf("attn_entropy      %.4f\n", st.attn_entropy);
    printf("samples/s         %.0f\n", secs > 0 ? st.pairs / secs : 0);
done:
    attend_model_free(m);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
    attend_vocab_free(task_vocab);
    attend_dataset_free(data);
    attend_dataset_free(raw);
    return cli_finish("eval", rc);
}
