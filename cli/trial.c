/*
 * trial.c — `attend trial MODEL (TEXT | --data TSV)`: attention on trial
 * (Jain & Wallace 2019; Wiegreffe & Pinter 2019). Runs the library's trials
 * (src/analysis/importance.c, ...) on the model's greedy outputs and writes
 * the report: text on stdout (and PREFIX.txt), one JSON object per output
 * step and a summary per trial in PREFIX.jsonl, and PREFIX.html with the
 * plots (--report PREFIX).
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "cli.h"
#include "textbook.h"

static void trial_usage(FILE *f) {
    fprintf(f,
            "usage: attend trial MODEL (TEXT | --data TSV) [--limit N] [--report PREFIX]\n"
            "                    [--trials LIST] [--attention-gradient] [--epsilon E[,E...]]\n"
            "                    [--max-evals N] [--search NAME] [--batch N] [--threshold W] [--spaced]\n"
            "                    [--max-len N]\n"
            "       attend trial --textbook [--epsilon E[,E...]] [--max-evals N] [--search NAME]\n"
            "\n"
            "Attention on trial (Jain & Wallace 2019, \"Attention is not Explanation\"). For each\n"
            "source (TEXT, or the first column of each line of TSV) the model decodes greedily;\n"
            "then, per output step t (teacher-forced along that output, EOS last):\n"
            "  importance agreement (J&W 4.1)  Kendall's tau-b between the attention row and\n"
            "      gradient x input    |sum_d x_jd d log p_t(y_t) / d x_jd|, x_j the embedding of\n"
            "                          source token j, attention held constant (as J&W)\n"
            "      leave-one-out       TV(p_t, p_t with token j deleted and the source re-encoded)\n"
            "    with tau's two-sided p-value (exact for up to 33 untied values, else normal);\n"
            "  alignment (with --data whose lines carry a third column, reference links\n"
            "      \"i-j\": the hand alignments, or what `attend m2m` wrote): the forced\n"
            "      alignment along each reference target as links, per output step its argmax\n"
            "      position and every position with weight >= --threshold, scored against the\n"
            "      reference: precision, recall, F1 and AER (every reference link sure)\n"
            "  adversarial attention (J&W 4.2.2)  the attention row farthest from the model's in\n"
            "      Jensen-Shannon divergence whose output, with the decoder step recomputed under\n"
            "      the new context, stays within total variation E of the model's (per --epsilon).\n"
            "The summary gives, per measure, the mean and standard deviation of tau over steps,\n"
            "the fraction of steps with p < 0.05 (J&W Table 2) and tau's distribution over steps\n"
            "in ten bins (J&W Figure 2). Steps where a row is constant (one source token) have\n"
            "no tau and are counted apart.\n"
            "\n"
            "  --data TSV      sources from a TSV file (source TAB target per line)\n"
            "  --limit N       at most N sources of TSV, from the top (200)\n"
            "  --report PREFIX also write PREFIX.txt (this report), PREFIX.html (it with the plots:\n"
            "                  tau's distribution, JSD against epsilon) and PREFIX.jsonl: one object per\n"
            "                  step {\"trial\":\"importance\",\"example\",\"step\",\"token\",\n"
            "                  \"attention\",\"grad\",\"loo\",\"tau_grad\",\"p_grad\",\"tau_loo\",\"p_loo\"}\n"
            "                  and a summary object per measure (\"summary\":true); the adversary:\n"
            "                  {\"trial\":\"adversary\",\"epsilon\",\"example\",\"step\",\"jsd\",\"tvd\",\n"
            "                  \"adversary\"} and a summary per epsilon\n"
            "  --trials LIST   importance, adversary, alignment, separated by commas\n"
            "                  (importance,adversary; alignment needs --data)\n"
            "  --threshold W   the alignment trial's weight threshold (0.3)\n"
            "  --spaced        the tokens of TSV are separated by spaces on both sides, whatever\n"
            "                  the model's tokenizer (G2P dictionaries: \"b a i l s<TAB>B EY L Z\")\n"
            "  --attention-gradient  let the gradient flow through the attention weights too\n"
            "  --epsilon LIST  the adversary's TVD bounds, increasing (0.01; J&W's figures: e.g.\n"
            "                  0.001,0.01,0.05,0.1)\n"
            "  --max-evals N   the adversary's decoder steps per output step, per strategy (1000)\n"
            "  --search NAME   the adversary's search: both (rays then random walks, and rays then\n"
            "                  walks along the constraint: the farther row of the two, never below\n"
            "                  either), rays (the first alone: the search of 2026-12-02) or follow\n"
            "                  (the second alone: 2026-12-03's) (both)\n"
            "  --batch N       the adversary's candidate rows per decoder-step call (8; 1: one at\n"
            "                  a time; the rows searched do not depend on it, float rounding does)\n");
    fprintf(f, /* two literals: each under C's 4095-character minimum */
            "  --max-len N     longest output (the longer of the model's longest target and 2 x\n"
            "                  the source length)\n"
            "  --textbook      seed 000's example instead of a model (chapter 14: three saved states\n"
            "                  of a ReLU encoder, queries [1,0] and [0,1], the read-out r = c1 + 2 c2\n"
            "                  as the output): importance agreement against gradient x input, token\n"
            "                  deletion and state removal; the adversary within |r' - r| <= E, by the\n"
            "                  search and exactly; the uniform baseline\n"
            "  --help          this message\n"
            "\n"
            "Bahdanau and Luong models (not copy models). Progress goes to stderr on long runs.\n"
            "Exit status: 0 ok, 1 the model or data could not be used, 2 bad usage.\n");
}

#define BINS 10

/* tau's summary over steps for one measure */
typedef struct {
    long steps, undefined, significant;
    double sum, sumsq;
    long bins[BINS];
} tau_stats;

static void tau_add(tau_stats *s, double tau, double p) {
    s->steps++;
    if (isnan(tau)) {
        s->undefined++;
        return;
    }
    s->sum += tau;
    s->sumsq += tau * tau;
    s->significant += p < 0.05;
    int b = (int)floor((tau + 1) / 2 * BINS);
    s->bins[b < 0 ? 0 : b >= BINS ? BINS - 1 : b]++;
}

static double tau_mean(const tau_stats *s) {
    long n = s->steps - s->undefined;
    return n ? s->sum / n : NAN;
}

static double tau_std(const tau_stats *s) {
    long n = s->steps - s->undefined;
    if (n < 2) return NAN;
    double m = s->sum / n, v = (s->sumsq - n * m * m) / (n - 1);
    return v > 0 ? sqrt(v) : 0;
}

/* JSON number or null */
static void json_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.6g", v);
    else fputs("null", f);
}

static void json_row(FILE *f, const char *key, const double *v, int n) {
    fprintf(f, ",\"%s\":[", key);
    for (int j = 0; j < n; j++) {
        if (j) fputc(',', f);
        json_num(f, v[j]);
    }
    fputc(']', f);
}

typedef struct {
    FILE *out[2]; /* stdout, PREFIX.txt or NULL */
} text_sink;

static void say(const text_sink *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void say(const text_sink *t, const char *fmt, ...) {
    for (int i = 0; i < 2; i++) {
        if (!t->out[i]) continue;
        va_list ap;
        va_start(ap, fmt);
        vfprintf(t->out[i], fmt, ap);
        va_end(ap);
    }
}

static void summary(const text_sink *t, FILE *jl, const char *name, const char *key, const tau_stats *s) {
    long n = s->steps - s->undefined;
    say(t, "  %-18s %6ld %7.3f %7.3f %9.3f %9ld\n", name, n, tau_mean(s), tau_std(s),
        n ? (double)s->significant / n : NAN, s->undefined);
    if (jl) {
        fprintf(jl, "{\"trial\":\"importance\",\"summary\":true,\"measure\":\"%s\",\"steps\":%ld,\"undefined\":%ld,"
                    "\"tau_mean\":", key, n, s->undefined);
        json_num(jl, tau_mean(s));
        fputs(",\"tau_std\":", jl);
        json_num(jl, tau_std(s));
        fputs(",\"sig_frac\":", jl);
        json_num(jl, n ? (double)s->significant / n : NAN);
        fputs(",\"bins\":[", jl);
        for (int b = 0; b < BINS; b++) fprintf(jl, "%s%ld", b ? "," : "", s->bins[b]);
        fputs("]}\n", jl);
    }
}

/* the adversary's JSD over steps for one epsilon: bins over [0, ln 2] */
typedef struct {
    long steps;
    double sum, sumsq, max;
    long bins[BINS];
} jsd_stats;

static void jsd_add(jsd_stats *s, double js) {
    s->steps++;
    s->sum += js;
    s->sumsq += js * js;
    if (js > s->max) s->max = js;
    int b = (int)floor(js / log(2.0) * BINS);
    s->bins[b < 0 ? 0 : b >= BINS ? BINS - 1 : b]++;
}

#define MAX_EPS 8

/* Parses "0.01,0.05": increasing values in [0, 1]; 0 or 2 after a message. */
static int parse_eps(const char *list, double *eps, int *n) {
    *n = 0;
    const char *p = list;
    while (*p) {
        char item[64];
        size_t k = strcspn(p, ",");
        if (k == 0 || k >= sizeof item || *n == MAX_EPS)
            return cli_usage_error("trial", "--epsilon '%s': up to %d numbers separated by commas", list, MAX_EPS);
        memcpy(item, p, k);
        item[k] = 0;
        double v;
        if (cli_parse_double(item, 0, 1, &v))
            return cli_usage_error("trial", "--epsilon '%s' is not a total variation in [0, 1]", item);
        if (*n && v <= eps[*n - 1]) return cli_usage_error("trial", "--epsilon: %s is not increasing", list);
        eps[(*n)++] = v;
        p += k;
        if (*p == ',') p++;
    }
    if (*n == 0) return cli_usage_error("trial", "--epsilon needs a value");
    return 0;
}

typedef struct {
    int example;
    double eps;
} progress_ctx;

static void on_progress(void *user, int done, int total) {
    const progress_ctx *p = user;
    if (total >= 50 && (done % 25 == 0 || done == total))
        fprintf(stderr, "attend trial: adversary (epsilon %g), example %d: step %d/%d\n", p->eps, p->example, done,
                total);
}

/* s [n] into f with &, <, > and " escaped (the report page) */
static void html_text(FILE *f, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(s[i], f);
        }
    }
}

/* An SVG line plot into f (the library renders it); 0, or 1 after a message. */
static int html_plot(FILE *f, const attend_plot_series *ser, int n, const char *title, const char *xl, const char *yl,
                     double y0, double y1, int log_x) {
    char *svg = NULL;
    attend_error err = {0};
    if (attend_render_line_plot_svg(&svg, ser, n, title, xl, yl, y0, y1, log_x, &err)) return cli_lib_fail("trial", &err);
    fprintf(f, "<figure>%s</figure>\n", svg);
    free(svg);
    return 0;
}

/* PREFIX.html: the plots (tau's distribution, JSD against epsilon) and the text
 * report read back from PREFIX.txt, self-contained. */
static int write_html(const char *report, const char *model, const tau_stats *sg, const tau_stats *sl, int do_imp,
                      const jsd_stats *sj, const double *eps, int n_eps) {
    size_t n = strlen(report) + 8;
    char *path = malloc(n);
    if (!path) return 1;
    snprintf(path, n, "%s.txt", report);
    FILE *in = fopen(path, "rb");
    char *text = NULL;
    size_t len = 0;
    if (in) {
        fseek(in, 0, SEEK_END);
        long sz = ftell(in);
        fseek(in, 0, SEEK_SET);
        text = sz >= 0 ? malloc((size_t)sz + 1) : NULL;
        if (text) len = fread(text, 1, (size_t)sz, in);
        fclose(in);
    }
    snprintf(path, n, "%s.html", report);
    FILE *f = fopen(path, "w");
    int rc = 0;
    if (!f || !text) {
        fprintf(stderr, "attend trial: cannot write %s\n", path);
        free(path);
        free(text);
        if (f) fclose(f);
        return 1;
    }
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>attend trial</title>\n"
          "<style>body{font-family:sans-serif;margin:2em}pre{font-size:12px}figure{display:inline-block;margin:1em}"
          "</style></head><body>\n<h1>Attention on trial: ", f);
    html_text(f, model, strlen(model));
    fputs("</h1>\n", f);
    if (do_imp) {
        double x[BINS], yg[BINS], yl[BINS];
        long ng = sg->steps - sg->undefined, nl = sl->steps - sl->undefined;
        for (int b = 0; b < BINS; b++) {
            x[b] = -1 + 0.2 * b + 0.1;
            yg[b] = ng ? (double)sg->bins[b] / ng : NAN;
            yl[b] = nl ? (double)sl->bins[b] / nl : NAN;
        }
        attend_plot_series ser[2] = {{"gradient x input", BINS, x, yg}, {"leave-one-out", BINS, x, yl}};
        rc = html_plot(f, ser, 2, "Kendall tau-b of attention against importance (J&W Figure 2)", "tau-b (bin centre)",
                       "share of steps", 0, 1, 0);
    }
    if (!rc && n_eps > 0 && sj) {
        double mean[MAX_EPS], mx[MAX_EPS];
        int log_x = eps[0] > 0 && n_eps > 1;
        for (int e = 0; e < n_eps; e++) {
            mean[e] = sj[e].steps ? sj[e].sum / sj[e].steps : NAN;
            mx[e] = sj[e].steps ? sj[e].max : NAN;
        }
        attend_plot_series ser[2] = {{"mean JSD", n_eps, eps, mean}, {"max JSD", n_eps, eps, mx}};
        rc = html_plot(f, ser, 2, "Adversarial attention: JSD reachable within TVD epsilon (J&W 4.2.2)",
                       "epsilon (TVD of the output)", "JSD (nats)", 0, log(2.0), log_x);
    }
    fputs("<pre>", f);
    html_text(f, text, len);
    fputs("</pre>\n</body></html>\n", f);
    if (fclose(f) && !rc) {
        fprintf(stderr, "attend trial: error writing %s\n", path);
        rc = 1;
    }
    free(path);
    free(text);
    return rc;
}

/* --search: the adversary's method (attend_adversary_method), -1 for another name */
static int search_from_name(const char *s) {
    return !strcmp(s, "both") ? ATTEND_ADVERSARY_SEARCH : !strcmp(s, "rays") ? ATTEND_ADVERSARY_RAYS
         : !strcmp(s, "follow") ? ATTEND_ADVERSARY_FOLLOW : -1;
}

int cmd_trial(int argc, char **argv) {
    const char *model = NULL, *text = NULL, *data = NULL, *report = NULL, *trials = "importance,adversary";
    const char *eps_list = "0.01";
    int help = 0, limit = 200, max_len = 0, attn_grad = 0, max_evals = 1000, batch = 8;
    double threshold = 0.3;
    int spaced = 0, textbook = 0, search = ATTEND_ADVERSARY_SEARCH;
    cli_parser p;
    cli_init(&p, "trial", argc, argv);
    int rc = 0, npos = 0;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--data")) rc = cli_string(&p, &data);
        else if (cli_is(&p, "--limit")) rc = cli_int(&p, 1, 1000000, &limit);
        else if (cli_is(&p, "--report")) rc = cli_string(&p, &report);
        else if (cli_is(&p, "--trials")) rc = cli_string(&p, &trials);
        else if (cli_is(&p, "--attention-gradient")) rc = cli_flag(&p, &attn_grad);
        else if (cli_is(&p, "--epsilon")) rc = cli_string(&p, &eps_list);
        else if (cli_is(&p, "--max-evals")) rc = cli_int(&p, 1, 100000000, &max_evals);
        else if (cli_is(&p, "--batch")) rc = cli_int(&p, 1, 1024, &batch);
        else if (cli_is(&p, "--search")) rc = cli_choice(&p, search_from_name, "both|rays|follow", &search);
        else if (cli_is(&p, "--threshold")) rc = cli_double(&p, 1e-6, 0.999999, &threshold);
        else if (cli_is(&p, "--spaced")) rc = cli_flag(&p, &spaced);
        else if (cli_is(&p, "--max-len")) rc = cli_int(&p, 1, 65536, &max_len);
        else if (cli_is(&p, "--textbook")) rc = cli_flag(&p, &textbook);
        else if (cli_positional(&p) && npos < 2) {
            if (npos++ == 0) model = p.arg;
            else text = p.arg;
        } else rc = cli_unknown(&p);
    }
    if (rc) return rc;
    if (help) {
        trial_usage(stdout);
        return cli_finish("trial", 0);
    }
    if (textbook) {
        if (model || data || report || strcmp(trials, "importance,adversary"))
            return cli_usage_error("trial", "--textbook takes no MODEL, TEXT, --data, --report or --trials");
        double eps[MAX_EPS];
        int n_eps = 0;
        if ((rc = parse_eps(eps_list, eps, &n_eps))) return rc;
        return cli_finish("trial", trial_textbook(eps, n_eps, max_evals, (attend_adversary_method)search));
    }
    if (!model) return cli_usage_error("trial", "needs MODEL and TEXT or --data TSV (see --help)");
    if (!text == !data) return cli_usage_error("trial", "give either TEXT or --data TSV, not %s", text ? "both" : "neither");
    int do_imp = 0, do_adv = 0, do_aln = 0;
    for (const char *q = trials; *q;) {
        size_t k = strcspn(q, ",");
        if (k == 10 && !strncmp(q, "importance", k)) do_imp = 1;
        else if (k == 9 && !strncmp(q, "adversary", k)) do_adv = 1;
        else if (k == 9 && !strncmp(q, "alignment", k)) do_aln = 1;
        else return cli_usage_error("trial", "--trials '%s': the trials are importance, adversary and alignment",
                                    trials);
        q += k;
        if (*q == ',') q++;
    }
    if (!do_imp && !do_adv && !do_aln) return cli_usage_error("trial", "--trials names no trial");
    if (do_aln && !data) return cli_usage_error("trial", "the alignment trial needs --data TSV with reference links");
    double eps[MAX_EPS];
    int n_eps = 0;
    if ((rc = parse_eps(eps_list, eps, &n_eps))) return rc;

    tau_stats sg, sl;
    memset(&sg, 0, sizeof sg);
    memset(&sl, 0, sizeof sl);
    jsd_stats sj[MAX_EPS];
    memset(sj, 0, sizeof sj);
    attend_model *m = NULL;
    attend_vocab *sv = NULL, *tv = NULL;
    attend_tokenizer tok;
    attend_dataset *ds = NULL;
    attend_error err = {0};
    FILE *ftxt = NULL, *fjl = NULL;
    int32_t *src1 = NULL, *out = NULL, *aln_links = NULL;
    attend_real *att = NULL, *adv = NULL;
    double *buf = NULL;
    if ((rc = cli_load_model("trial", model, 0, 0, 0, &m, &sv, &tv, &tok))) return rc;
    attend_model_config cfg = *attend_model_get_config(m);
    if (cfg.decoder != ATTEND_DECODER_BAHDANAU && cfg.decoder != ATTEND_DECODER_LUONG) {
        fprintf(stderr, "attend trial: %s has a '%s' decoder; the trials compare attention over the source with the "
                        "importance of each source token for an output over the vocabulary (bahdanau, luong)\n",
                model, attend_decoder_name(cfg.decoder));
        rc = 1;
        goto done;
    }
    /* the sources: one text, or the TSV's first column */
    int n_ex = 1, maxS = 0;
    if (data) {
        if ((rc = cli_read_tsv("trial", &ds, data, sv, tv, 0, spaced ? ATTEND_TOKENIZE_SPACE : tok, 0))) goto done;
        n_ex = attend_dataset_size(ds) < limit ? attend_dataset_size(ds) : limit;
        if (n_ex == 0) {
            fprintf(stderr, "attend trial: %s has no pairs\n", data);
            rc = 1;
            goto done;
        }
        for (int i = 0; i < n_ex; i++) {
            const int32_t *s, *t;
            int slen, tlen;
            if (attend_dataset_get(ds, i, &s, &slen, &t, &tlen, &err)) {
                rc = cli_lib_fail("trial", &err);
                goto done;
            }
            if (slen > maxS) maxS = slen;
        }
    } else {
        size_t n = strlen(text);
        int cap = (int)(n < 4096 ? n : 4096) + 1;
        src1 = malloc((size_t)cap * sizeof *src1);
        if (!src1) {
            fprintf(stderr, "attend trial: out of memory\n");
            rc = 1;
            goto done;
        }
        if (attend_vocab_encode(sv, tok, 0, text, n, src1, cap, &maxS, &err)) {
            rc = cli_lib_fail("trial", &err);
            goto done;
        }
        if (maxS == 0) {
            fprintf(stderr, "attend trial: the source text has no tokens\n");
            rc = 2;
            goto done;
        }
    }
    int L = max_len ? max_len : (cfg.max_tgt_len > 2 * maxS ? cfg.max_tgt_len : 2 * maxS);
    if (ds && L < attend_dataset_max_tgt_len(ds) + 1) L = attend_dataset_max_tgt_len(ds) + 1; /* forced alignments */
    /* again, sized for these sources: 16 prefix rows a pass (importance), the adversary's batch */
    attend_model_free(m);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
    m = NULL;
    sv = tv = NULL;
    if ((rc = cli_load_model("trial", model, batch > 16 ? batch : 16, maxS, L, &m, &sv, &tv, &tok))) goto done;

    size_t rowsz = (size_t)(L + 1) * maxS;
    out = malloc((size_t)L * sizeof *out);
    att = malloc(rowsz * sizeof *att);
    adv = malloc(rowsz * sizeof *adv);
    buf = malloc((2 * rowsz + 6 * (size_t)(L + 1) + (size_t)maxS) * sizeof *buf);
    if (!out || !att || !adv || !buf) {
        fprintf(stderr, "attend trial: out of memory\n");
        rc = 1;
        goto done;
    }
    double *grad = buf, *loo = grad + rowsz, *tg = loo + rowsz, *pg = tg + L + 1, *tl = pg + L + 1, *pl = tl + L + 1;
    double *js = pl + L + 1, *tvd = js + L + 1, *row = tvd + L + 1;
    if (report) {
        size_t n = strlen(report) + 8;
        char *path = malloc(n);
        if (!path) {
            rc = 1;
            goto done;
        }
        snprintf(path, n, "%s.txt", report);
        ftxt = fopen(path, "w");
        if (!ftxt) fprintf(stderr, "attend trial: cannot write %s\n", path);
        snprintf(path, n, "%s.jsonl", report);
        if (ftxt) {
            fjl = fopen(path, "w");
            if (!fjl) fprintf(stderr, "attend trial: cannot write %s\n", path);
        }
        free(path);
        if (!ftxt || !fjl) {
            rc = 1;
            goto done;
        }
    }
    text_sink ts = {{stdout, ftxt}};
    say(&ts, "model: %s (%s decoder, %s score)\n", model, attend_decoder_name(cfg.decoder), attend_score_name(cfg.score));
    say(&ts, "sources: %s (%d)\n\n", data ? data : "TEXT", n_ex);
    if (do_imp)
        say(&ts, "Trial 1: importance agreement (Jain & Wallace 2019, 4.1): per output step, Kendall tau-b of the\n"
                 "attention row against gradient x input (%s) and leave-one-out importance.\n",
            attn_grad ? "gradient through the attention too" : "attention held constant");
    if (do_adv)
        say(&ts, "Trial 2: adversarial attention (Jain & Wallace 2019, 4.2.2): per output step, the largest JSD from\n"
                 "the model's attention whose output stays within TVD epsilon (decoder step recomputed).\n");
    say(&ts, "\n%-5s %-24s %-24s %5s", "ex", "source", "output", "steps");
    if (do_imp) say(&ts, " %9s %9s", "tau_grad", "tau_loo");
    for (int e = 0; do_adv && e < n_eps; e++) {
        char h[32];
        snprintf(h, sizeof h, "jsd@%g", eps[e]);
        say(&ts, " %9s", h);
    }
    say(&ts, "\n");

    attend_alignment_counts aln[2];
    memset(aln, 0, sizeof aln);
    int aln_pairs = 0, aln_cap = (L + 1) * maxS;
    aln_links = do_aln ? malloc(2 * (size_t)aln_cap * sizeof *aln_links) : NULL;
    if (do_aln && !aln_links) {
        fprintf(stderr, "attend trial: out of memory\n");
        rc = 1;
        goto done;
    }
    attend_decode_options dopt = ATTEND_OPTIONS_INIT(attend_decode_options);
    dopt.max_len = L;
    int every = n_ex >= 20 ? n_ex / 10 : 0;
    for (int i = 0; i < n_ex && !rc; i++) {
        const int32_t *src = src1;
        int S = maxS;
        if (ds) {
            const int32_t *t;
            int tlen;
            if (attend_dataset_get(ds, i, &src, &S, &t, &tlen, &err)) {
                rc = cli_lib_fail("trial", &err);
                break;
            }
        }
        int32_t olen = 0, slen = S;
        if (attend_decode(&m, 1, src, &slen, 1, S, &dopt, out, &olen, NULL, NULL, NULL, &err)) {
            rc = cli_lib_fail("trial", &err);
            break;
        }
        if (olen >= L) {
            fprintf(stderr, "attend trial: example %d: the greedy output did not end within %d tokens (raise "
                            "--max-len); skipped\n", i, L);
            continue;
        }
        int steps = olen + 1;
        char stext[4096], otext[4096];
        if (attend_vocab_decode(sv, tok, src, S, stext, sizeof stext, &err)) stext[0] = 0;
        if (attend_vocab_decode(tv, spaced ? ATTEND_TOKENIZE_SPACE : tok, out, olen, otext, sizeof otext, &err))
            otext[0] = 0;
        say(&ts, "%-5d %-24s %-24s %5d", i, stext, otext, steps);
        if (do_imp) {
            attend_importance_options io = {NULL, attn_grad};
            attend_importance_result r = {att, grad, loo, tg, pg, tl, pl, 0};
            if (attend_model_importance(m, src, S, out, olen, &io, &r, &err)) {
                rc = cli_lib_fail("trial", &err);
                break;
            }
            double mg = 0, ml = 0;
            int ng = 0, nl = 0;
            for (int t = 0; t < steps; t++) {
                tau_add(&sg, tg[t], pg[t]);
                tau_add(&sl, tl[t], pl[t]);
                if (!isnan(tg[t])) mg += tg[t], ng++;
                if (!isnan(tl[t])) ml += tl[t], nl++;
            }
            say(&ts, " %9.3f %9.3f", ng ? mg / ng : NAN, nl ? ml / nl : NAN);
            for (int t = 0; fjl && t < steps; t++) {
                fprintf(fjl, "{\"trial\":\"importance\",\"example\":%d,\"step\":%d,\"token\":", i, t);
                const char *lab = t < olen ? attend_vocab_token(tv, out[t]) : "<eos>";
                if (!lab) lab = "?";
                cli_json_string(fjl, lab, strlen(lab));
                for (int j = 0; j < S; j++) row[j] = (double)att[(size_t)t * S + j];
                json_row(fjl, "attention", row, S);
                json_row(fjl, "grad", grad + (size_t)t * S, S);
                json_row(fjl, "loo", loo + (size_t)t * S, S);
                fputs(",\"tau_grad\":", fjl);
                json_num(fjl, tg[t]);
                fputs(",\"p_grad\":", fjl);
                json_num(fjl, pg[t]);
                fputs(",\"tau_loo\":", fjl);
                json_num(fjl, tl[t]);
                fputs(",\"p_loo\":", fjl);
                json_num(fjl, pl[t]);
                fputs("}\n", fjl);
            }
        }
        if (do_aln && ds) {
            const int32_t *gs, *gt, *gl;
            int gsl, gtl, gn;
            if (attend_dataset_get(ds, i, &gs, &gsl, &gt, &gtl, &err) ||
                attend_dataset_get_alignment(ds, i, &gl, &gn, &err)) {
                rc = cli_lib_fail("trial", &err);
                break;
            }
            if (gn >= 0) {
                double logp;
                if (attend_model_score(m, gs, gsl, gt, gtl, &logp, att, &err)) {
                    rc = cli_lib_fail("trial", &err);
                    break;
                }
                for (int k = 0; k < 2 && !rc; k++) { /* argmax, threshold; the EOS step is no target token */
                    int nl;
                    if (attend_attention_links(att, gtl, gsl, k ? threshold : 0, aln_links, aln_cap, &nl, &err) ||
                        attend_alignment_count(gl, gn, aln_links, nl, &aln[k], &err))
                        rc = cli_lib_fail("trial", &err);
                }
                aln_pairs++;
            }
        }
        for (int e = 0; do_adv && e < n_eps && !rc; e++) {
            progress_ctx pc = {i, eps[e]};
            attend_adversary_options ao = {eps[e], (attend_adversary_method)search, max_evals, 0, on_progress, &pc, batch};
            attend_adversary_result ar = {adv, js, tvd, 0, 0, 0, 0};
            if (attend_model_adversary(m, src, S, out, olen, &ao, &ar, &err)) {
                rc = cli_lib_fail("trial", &err);
                break;
            }
            for (int t = 0; t < steps; t++) jsd_add(&sj[e], js[t]);
            say(&ts, " %9.3f", ar.jsd_mean);
            for (int t = 0; fjl && t < steps; t++) {
                fprintf(fjl, "{\"trial\":\"adversary\",\"epsilon\":%g,\"example\":%d,\"step\":%d,\"jsd\":", eps[e], i,
                        t);
                json_num(fjl, js[t]);
                fputs(",\"tvd\":", fjl);
                json_num(fjl, tvd[t]);
                for (int j = 0; j < S; j++) row[j] = (double)adv[(size_t)t * S + j];
                json_row(fjl, "adversary", row, S);
                fputs("}\n", fjl);
            }
        }
        say(&ts, "\n");
        if (every && ((i + 1) % every == 0 || i + 1 == n_ex)) fprintf(stderr, "attend trial: %d/%d sources\n", i + 1, n_ex);
    }
    if (!rc && do_imp) {
        say(&ts, "\nTrial 1 summary over output steps (J&W Table 2): tau-b of attention against each measure\n");
        say(&ts, "  %-18s %6s %7s %7s %9s %9s\n", "measure", "steps", "mean", "std", "p<0.05", "no tau");
        summary(&ts, fjl, "gradient x input", "grad", &sg);
        summary(&ts, fjl, "leave-one-out", "loo", &sl);
        say(&ts, "\nDistribution of tau over steps (J&W Figure 2), steps per bin:\n");
        say(&ts, "  %-14s %8s %8s\n", "tau", "grad", "loo");
        for (int b = 0; b < BINS; b++)
            say(&ts, "  [%+.1f, %+.1f%c %8ld %8ld\n", -1 + 0.2 * b, -1 + 0.2 * (b + 1), b == BINS - 1 ? ']' : ')',
                sg.bins[b], sl.bins[b]);
    }
    if (!rc && do_adv) {
        say(&ts, "\nTrial 2 summary (J&W Figures 7-8): JSD (nats, at most ln 2 = 0.693) of the adversarial attention\n"
                 "from the model's, per output step, against the output's TVD bound epsilon\n");
        say(&ts, "  %-9s %6s %7s %7s %7s\n", "epsilon", "steps", "mean", "std", "max");
        for (int e = 0; e < n_eps; e++) {
            const jsd_stats *q = &sj[e];
            double mean = q->steps ? q->sum / q->steps : NAN;
            double var = q->steps > 1 ? (q->sumsq - q->steps * mean * mean) / (q->steps - 1) : NAN;
            say(&ts, "  %-9g %6ld %7.3f %7.3f %7.3f\n", eps[e], q->steps, mean, var > 0 ? sqrt(var) : 0, q->max);
            if (fjl) {
                fprintf(fjl, "{\"trial\":\"adversary\",\"summary\":true,\"epsilon\":%g,\"steps\":%ld,\"jsd_mean\":",
                        eps[e], q->steps);
                json_num(fjl, mean);
                fputs(",\"jsd_max\":", fjl);
                json_num(fjl, q->max);
                fputs(",\"bins\":[", fjl);
                for (int b = 0; b < BINS; b++) fprintf(fjl, "%s%ld", b ? "," : "", q->bins[b]);
                fputs("]}\n", fjl);
            }
        }
        say(&ts, "\nDistribution of the adversary's JSD over steps, steps per bin of ln2/10:\n  %-16s", "jsd");
        for (int e = 0; e < n_eps; e++) {
            char h[32];
            snprintf(h, sizeof h, "eps %g", eps[e]);
            say(&ts, " %10s", h);
        }
        say(&ts, "\n");
        for (int b = 0; b < BINS; b++) {
            say(&ts, "  [%.3f, %.3f%c  ", log(2.0) * b / BINS, log(2.0) * (b + 1) / BINS, b == BINS - 1 ? ']' : ')');
            for (int e = 0; e < n_eps; e++) say(&ts, " %10ld", sj[e].bins[b]);
            say(&ts, "\n");
        }
    }
    if (!rc && do_aln) {
        say(&ts, "\nAlignment: the forced alignment along each reference target against the reference links of %s\n"
                 "(%d pairs with links; every reference link sure, AER = 1 - F1)\n", data, aln_pairs);
        say(&ts, "  %-16s %7s %7s %9s %7s %7s %7s\n", "links", "ref", "hyp", "precision", "recall", "F1", "AER");
        for (int k = 0; k < 2; k++) {
            double pr, re, f1, aer;
            attend_alignment_scores(&aln[k], &pr, &re, &f1, &aer);
            char name[32];
            if (k) snprintf(name, sizeof name, "weight >= %g", threshold);
            else snprintf(name, sizeof name, "argmax");
            say(&ts, "  %-16s %7ld %7ld %9.4f %7.4f %7.4f %7.4f\n", name, aln[k].ref, aln[k].hyp, pr, re, f1, aer);
            if (fjl) {
                fprintf(fjl, "{\"trial\":\"alignment\",\"summary\":true,\"links\":\"%s\",\"threshold\":%g,"
                             "\"pairs\":%d,\"ref\":%ld,\"hyp\":%ld,\"both\":%ld,\"precision\":",
                        k ? "threshold" : "argmax", k ? threshold : 0, aln_pairs, aln[k].ref, aln[k].hyp, aln[k].both);
                json_num(fjl, pr);
                fputs(",\"recall\":", fjl);
                json_num(fjl, re);
                fputs(",\"f1\":", fjl);
                json_num(fjl, f1);
                fputs(",\"aer\":", fjl);
                json_num(fjl, aer);
                fputs("}\n", fjl);
            }
        }
    }
    if (!rc && report) say(&ts, "\nwrote %s.txt, %s.jsonl and %s.html\n", report, report, report);
done:
    if (ftxt && fclose(ftxt) && !rc) rc = 1;
    if (fjl && fclose(fjl) && !rc) rc = 1;
    if (!rc && report) rc = write_html(report, model, &sg, &sl, do_imp, do_adv ? sj : NULL, eps, do_adv ? n_eps : 0);
    free(aln_links);
    free(src1);
    free(out);
    free(att);
    free(adv);
    free(buf);
    attend_dataset_free(ds);
    attend_model_free(m);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
    return cli_finish("trial", rc);
}
