/*
 * align.c — `attend align MODEL TEXT`: where the model looked while producing
 * each output token, for its greedy output or its beam-search hypotheses, as a
 * terminal heatmap, an SVG heatmap and a self-contained HTML page
 * (attend_render_heatmap_*).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "attend.h"
#include "cli.h"
#include "outputs.h"

static void align_usage(FILE *f) {
    fprintf(f,
            "usage: attend align MODEL TEXT [--beam K [--nbest N]] [--head H] [--svg PATH] [--html PATH]\n"
            "       attend align MODEL TEXT --encoder-self [--layer L] [--head H] [--svg PATH] [--html PATH]\n"
            "\n"
            "Decodes TEXT with the model (greedy, or beam search with --beam) and prints each\n"
            "output's alignment [output tokens x source tokens] as a text heatmap: one row per\n"
            "output token, one column per source token, a character per weight from the ramp\n"
            "\" .:-=+*#%%@\" (0 to 1), and per row the argmax source position and its weight.\n"
            "For a reversal model the marks run along the anti-diagonal; for copy, the diagonal.\n"
            "\n"
            "  --beam K      beam search with K hypotheses (default: greedy)\n"
            "  --nbest N     print the N best hypotheses of the beam, each with its alignment\n"
            "                and score (1)\n"
            "  --alpha A     beam length normalisation, score = log p / (length+1)^A (0)\n"
            "  --coverage-penalty B  beam: add B * sum_j log(min(total attention on source j, 1))\n"
            "                to a finished hypothesis's score (Wu et al. 2016) (0)\n"
            "  --head H      a multi-head decoder (transformer): head H (1..heads) of its top\n"
            "                layer's cross-attention instead of the average over the heads (0,\n"
            "                the default); the tokens are the same\n"
            "  --encoder-self  no decoding: the transformer encoder's self-attention over TEXT\n"
            "                [source x source: row i, the weights of position i over every\n"
            "                position], of --layer L (1..layers; the top one) and --head H\n"
            "                (1..heads; 0, the default: the heads' mean), then the entropy of\n"
            "                every head of that layer\n"
            "  --max-len N   longest output (the longer of the model's longest target and 2 x\n"
            "                the source length)\n"
            "  --svg PATH    also write the (best) alignment as an SVG heatmap with a colour scale\n"
            "  --html PATH   also write it as a self-contained HTML page: hovering an output\n"
            "                token highlights the source tokens by weight (no network needed)\n"
            "  --format F    text (the above), tsv (a header `index rank score step token` and\n"
            "                the source tokens, then one row per output token with its weights)\n"
            "                or jsonl (one object: source, hypotheses with output, score and\n"
            "                alignment); see docs/FORMAT.md (text)\n"
            "  --help        this message\n"
            "\n"
            "With the transformer decoder the text report ends with the entropy of each head's\n"
            "cross-attention (nats, mean over the best output's steps) beside the averaged map's.\n"
            "\n"
            "Symbols the model does not know, and sources longer than it was trained on, are\n"
            "reported on stderr. Exit status: 0 ok, 1 the model or the text could not be used,\n"
            "2 bad usage.\n");
}

/* Prints one hypothesis and its heatmap; writes the files for the first. */
static int show(const analysis *a, const int32_t *out, int len, const attend_real *align, const double *score,
                const char *svg_path, const char *html_path, const char *title) {
    attend_error err = {0};
    char text[4096];
    const char **labels = malloc((size_t)(len > 0 ? len : 1) * sizeof *labels);
    if (!labels) {
        cli_oom("align", "the output labels");
        return 1;
    }
    for (int t = 0; t < len; t++) labels[t] = analysis_out_label(a, out[t]);
    if (score) printf("score %.6f  ", *score);
    printf("output: %s\n", cli_vis(analysis_out_text(a, out, len, text, sizeof text)));
    int rc = 0;
    char *s = NULL;
    if (len == 0) printf("(empty output: no alignment)\n");
    else if (attend_render_heatmap_text(&s, align, len, a->S, a->src_tok, labels, &err)) rc = cli_lib_fail("align", &err);
    else fputs(s, stdout);
    free(s);
    s = NULL;
    if (!rc && len > 0 && svg_path) {
        if (attend_render_heatmap_svg(&s, align, len, a->S, a->src_tok, labels, title, &err))
            rc = cli_lib_fail("align", &err);
        else rc = analysis_write_file("align", svg_path, s);
        free(s);
        s = NULL;
        if (!rc) printf("wrote %s\n", cli_vis(svg_path));
    }
    if (!rc && len > 0 && html_path) {
        if (attend_render_heatmap_html(&s, align, len, a->S, a->src_tok, labels, title, &err))
            rc = cli_lib_fail("align", &err);
        else rc = analysis_write_file("align", html_path, s);
        free(s);
        if (!rc) printf("wrote %s\n", cli_vis(html_path));
    }
    free(labels);
    return rc;
}

/* One hypothesis (rank 1-based) as tsv rows or a jsonl element. */
static void show_structured(const analysis *a, int format, int rank, const int32_t *out, int len,
                            const attend_real *align, const double *score) {
    char text[4096];
    analysis_out_text(a, out, len, text, sizeof text);
    if (format == CLI_FORMAT_TSV) {
        for (int t = 0; t < len; t++) {
            printf("1\t%d\t", rank);
            if (score) printf("%.6f", *score);
            printf("\t%d\t", t);
            const char *lab = analysis_out_label(a, out[t]);
            cli_tsv_field(stdout, lab, strlen(lab));
            for (int j = 0; j < a->S; j++) printf("\t%.4f", (double)align[(size_t)t * a->S + j]);
            printf("\n");
        }
        return;
    }
    printf("%s{\"output\":", rank > 1 ? "," : "");
    cli_json_string(stdout, text, strlen(text));
    printf(",\"score\":");
    if (score) printf("%.6f", *score);
    else printf("null");
    printf(",\"alignment\":[");
    for (int t = 0; t < len; t++) {
        printf("%s[", t ? "," : "");
        for (int j = 0; j < a->S; j++) printf("%s%.4f", j ? "," : "", (double)align[(size_t)t * a->S + j]);
        printf("]");
    }
    printf("]}");
}

/* Writes the files of the best hypothesis (structured formats: the "wrote"
 * lines go to stderr, keeping stdout to the format). */
static int write_files(const analysis *a, const int32_t *out, int len, const attend_real *align, const char *svg,
                       const char *html, const char *title) {
    attend_error err = {0};
    int rc = 0;
    const char **labels = malloc((size_t)(len > 0 ? len : 1) * sizeof *labels);
    if (!labels) {
        cli_oom("align", "the output labels");
        return 1;
    }
    for (int t = 0; t < len; t++) labels[t] = analysis_out_label(a, out[t]);
    const char *paths[2] = {svg, html};
    for (int k = 0; k < 2 && !rc; k++) {
        if (!paths[k] || len == 0) continue;
        char *s = NULL;
        attend_status st = k == 0 ? attend_render_heatmap_svg(&s, align, len, a->S, a->src_tok, labels, title, &err)
                                  : attend_render_heatmap_html(&s, align, len, a->S, a->src_tok, labels, title, &err);
        if (st) rc = cli_lib_fail("align", &err);
        else rc = analysis_write_file("align", paths[k], s);
        free(s);
        if (!rc) fprintf(stderr, "wrote %s\n", cli_vis(paths[k]));
    }
    free(labels);
    return rc;
}

static attend_decode_options decode_options(int beam, int nbest, int max_len, double alpha, double cov_pen,
                                            int head) {
    attend_decode_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.beam = beam;
    o.nbest = beam ? nbest : 0;
    o.max_len = max_len;
    o.alpha = alpha;
    o.coverage_penalty = cov_pen;
    o.align_head = head;
    return o;
}

/* The mean over the rows of map [T,S] of -Σ_j w log w (nats). */
static double mean_entropy(const attend_real *map, int T, int S) {
    double sum = 0;
    for (int t = 0; t < T; t++)
        for (int j = 0; j < S; j++) {
            double w = map[(size_t)t * S + j];
            if (w > 0) sum -= w * log(w);
        }
    return T > 0 ? sum / T : 0;
}

/* Entropy per head of the best output's cross-attention: the same search
 * again with each head's alignments and with their average (head 0; the
 * tokens do not change: best [len] is the run shown's first hypothesis). */
static int head_entropies(const analysis *a, int beam, int nbest, int L, double alpha, double cov_pen,
                          const int32_t *best, int len) {
    const int H = attend_model_get_config(a->m)->heads, K = beam ? nbest : 1;
    int32_t *out = malloc((size_t)K * L * sizeof *out), *out_len = malloc((size_t)K * sizeof *out_len);
    double *score = malloc((size_t)K * sizeof *score);
    attend_real *map = malloc((size_t)K * L * a->S * sizeof *map);
    int rc = 0;
    if (!out || !out_len || !score || !map) {
        cli_oom("align", "the per-head alignments");
        rc = 1;
    }
    if (!rc) printf("cross-attention entropy per head (nats, mean over %d output steps; uniform: ln %d = %.4f):\n",
                    len, a->S, log((double)a->S));
    for (int h = 1; !rc && h <= H + 1; h++) { /* H + 1: the average (align_head 0) */
        attend_error err = {0};
        attend_decode_options o = decode_options(beam, nbest, L, alpha, cov_pen, h <= H ? h : 0);
        int32_t src_len = a->S;
        int got = 0;
        if (attend_decode((attend_model *const *)&a->m, 1, a->src, &src_len, 1, a->S, &o, out, out_len, score, map,
                          &got, &err)) {
            rc = cli_lib_fail("align", &err);
            break;
        }
        if (out_len[0] != len || memcmp(out, best, (size_t)len * sizeof *out)) { /* cannot happen: say so if it does */
            fprintf(stderr, "align: head %d decoded another output than the averaged run\n", h);
            rc = 1;
            break;
        }
        if (h <= H) printf("  head %d  %.4f\n", h, mean_entropy(map, len, a->S));
        else printf("  mean map %.4f (the heads' average)\n", mean_entropy(map, len, a->S));
    }
    free(out);
    free(out_len);
    free(score);
    free(map);
    return rc;
}

/* --encoder-self: the encoder's self-attention of one layer (head, or the heads' mean) and every head's entropy */
static int encoder_self(const analysis *a, int layer, int head, const char *svg, const char *html, const char *title) {
    const attend_model_config *c = attend_model_get_config(a->m);
    attend_error err = {0};
    int S = a->S, L = layer ? layer : (c->enc_layers > 0 ? c->enc_layers : 1);
    attend_real *map = malloc((size_t)S * S * sizeof *map);
    if (!map) return cli_oom("align", "the self-attention map");
    int rc = 0;
    if (attend_model_encoder_attention(a->m, a->src, S, L, head, map, &err)) {
        free(map);
        return cli_lib_fail("align", &err);
    }
    if (head) printf("encoder self-attention: layer %d of %d, head %d of %d\n", L, c->enc_layers, head, c->heads);
    else printf("encoder self-attention: layer %d of %d, the mean of its %d heads\n", L, c->enc_layers, c->heads);
    printf("source: %s  (%d tokens; rows: query positions, columns: the positions they attend to)\n",
           cli_vis(a->text), S);
    char *s = NULL;
    if (attend_render_heatmap_text(&s, map, S, S, a->src_tok, a->src_tok, &err)) rc = cli_lib_fail("align", &err);
    else fputs(s, stdout);
    free(s);
    for (int k = 0; !rc && k < 2; k++) {
        const char *path = k ? html : svg;
        if (!path) continue;
        s = NULL;
        attend_status st = k == 0 ? attend_render_heatmap_svg(&s, map, S, S, a->src_tok, a->src_tok, title, &err)
                                  : attend_render_heatmap_html(&s, map, S, S, a->src_tok, a->src_tok, title, &err);
        if (st) rc = cli_lib_fail("align", &err);
        else if (!(rc = analysis_write_file("align", path, s))) printf("wrote %s\n", cli_vis(path));
        free(s);
    }
    if (!rc) {
        printf("self-attention entropy per head, layer %d (nats, mean over %d query positions; uniform: ln %d = %.4f):\n",
               L, S, S, log((double)S));
        for (int k = 1; !rc && k <= c->heads + 1; k++) { /* heads 1..H, then the mean (0) */
            int h = k % (c->heads + 1);
            if (attend_model_encoder_attention(a->m, a->src, S, L, h, map, &err)) rc = cli_lib_fail("align", &err);
            else if (h) printf("  head %d  %.4f\n", h, mean_entropy(map, S, S));
            else printf("  mean map %.4f (the heads' average)\n", mean_entropy(map, S, S));
        }
    }
    free(map);
    return rc;
}

int cmd_align(int argc, char **argv) {
    cli_set_oom_hint("use a shorter TEXT, or lower --max-len or --beam"); /* the options of this command that lower its memory */
    const char *model = NULL, *text = NULL, *svg = NULL, *html = NULL;
    int beam = 0, nbest = 1, max_len = 0, help = 0, npos = 0, format = CLI_FORMAT_TEXT, head = 0;
    int enc_self = 0, layer = 0;
    double alpha = 0, cov_pen = 0;
    cli_parser p;
    cli_init(&p, "align", argc, argv);
    int rc = 0;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--beam")) rc = cli_int(&p, 1, 64, &beam);
        else if (cli_is(&p, "--nbest")) rc = cli_int(&p, 1, 64, &nbest);
        else if (cli_is(&p, "--alpha")) rc = cli_double(&p, 0, 10, &alpha);
        else if (cli_is(&p, "--coverage-penalty")) rc = cli_double(&p, 0, 1e6, &cov_pen);
        else if (cli_is(&p, "--max-len")) rc = cli_int(&p, 1, 65536, &max_len);
        else if (cli_is(&p, "--head")) rc = cli_int(&p, 0, 65536, &head);
        else if (cli_is(&p, "--encoder-self")) rc = cli_flag(&p, &enc_self);
        else if (cli_is(&p, "--layer")) rc = cli_int(&p, 1, 65536, &layer);
        else if (cli_is(&p, "--svg")) rc = cli_path(&p, &svg);
        else if (cli_is(&p, "--html")) rc = cli_path(&p, &html);
        else if (cli_is(&p, "--format")) rc = cli_choice(&p, cli_format_from_name, "text|tsv|jsonl", &format);
        else if (cli_positional(&p) && npos < 2) {
            if (npos++ == 0) model = p.arg;
            else text = p.arg;
        } else rc = cli_unknown(&p);
    }
    if (rc) return rc;
    if (help) {
        align_usage(stdout);
        return cli_finish("align", 0);
    }
    if (!model || !text) return cli_usage_error("align", "needs MODEL and TEXT (see attend align --help)");
    if (layer && !enc_self) return cli_usage_error("align", "--layer applies to --encoder-self");
    if (enc_self && (beam || nbest > 1 || format != CLI_FORMAT_TEXT || cov_pen > 0 || max_len))
        return cli_usage_error("align", "--encoder-self shows the encoder's weights without decoding: %s does not apply",
                               beam ? "--beam" : nbest > 1 ? "--nbest" : format != CLI_FORMAT_TEXT ? "--format"
                               : cov_pen > 0 ? "--coverage-penalty" : "--max-len");
    if (nbest > 1 && !beam) beam = nbest;
    if (beam && nbest > beam) return cli_usage_error("align", "--nbest %d exceeds --beam %d", nbest, beam);
    if (cov_pen > 0 && !beam) return cli_usage_error("align", "--coverage-penalty needs --beam K");
    {
        /* the heatmaps are written in place (a FIFO or /dev/stdout works), but
         * never over the model or each other, and found unwritable before work */
        const attend_path_use uses[] = {{model, "MODEL", 0, 0},
                                        {svg, "--svg", 1, ATTEND_OUTPUT_ALLOW_SPECIAL},
                                        {html, "--html", 1, ATTEND_OUTPUT_ALLOW_SPECIAL}};
        if (cli_check_outputs("align", uses, 3, NULL)) return 1;
        const char *outs[] = {svg, html}; /* one of them /dev/stdout: the text report goes to stderr */
        if (cli_stdout_claim("align", outs, 2)) return 1;
    }

    analysis a;
    rc = analysis_open(&a, "align", model, text, beam ? beam : 1, max_len);
    if (!rc && enc_self) {
        char t[256];
        snprintf(t, sizeof t, "attend align --encoder-self: %s", text);
        rc = encoder_self(&a, layer, head, svg, html, t);
        analysis_close(&a);
        return cli_finish("align", rc);
    }
    int L = a.max_len, K = beam ? nbest : 1;
    int32_t *out = NULL, *out_len = NULL;
    double *score = NULL;
    attend_real *align = NULL;
    if (!rc) {
        out = malloc((size_t)K * L * sizeof *out);
        out_len = malloc((size_t)K * sizeof *out_len);
        score = malloc((size_t)K * sizeof *score);
        align = malloc((size_t)K * L * a.S * sizeof *align);
        if (!out || !out_len || !score || !align) {
            cli_oom("align", "the beam's outputs and alignments");
            rc = 1;
        }
    }
    attend_error err = {0};
    int got = 0, greedy_scored = 0;
    if (!rc) {
        int32_t src_len = a.S;
        attend_decode_options o = decode_options(beam, nbest, L, alpha, cov_pen, head);
        if (attend_decode(&a.m, 1, a.src, &src_len, 1, a.S, &o, out, out_len, score, align, &got, &err))
            rc = cli_lib_fail("align", &err);
        if (!beam) got = 1;
        /* structured formats give the greedy output its forced log-probability
         * (output and end); an output cut at --max-len has none */
        double logp;
        if (!rc && !beam && format != CLI_FORMAT_TEXT && out_len[0] < L &&
            attend_model_score(a.m, a.src, a.S, out, out_len[0], &logp, NULL, &err) == ATTEND_OK) {
            score[0] = logp;
            greedy_scored = 1;
        }
    }
    char title[256];
    snprintf(title, sizeof title, "attend align: %s", text);
    if (!rc && format != CLI_FORMAT_TEXT) {
        if (format == CLI_FORMAT_TSV) {
            printf("index\trank\tscore\tstep\ttoken");
            for (int j = 0; j < a.S; j++) {
                printf("\t");
                cli_tsv_field(stdout, a.src_tok[j] ? a.src_tok[j] : "?", strlen(a.src_tok[j] ? a.src_tok[j] : "?"));
            }
            printf("\n");
        } else {
            printf("{\"index\":1,\"source\":");
            cli_json_string(stdout, text, strlen(text));
            printf(",\"unknown\":%d,\"hypotheses\":[", a.unknown);
        }
        for (int h = 0; h < got; h++)
            show_structured(&a, format, h + 1, out + (size_t)h * L, out_len[h], align + (size_t)h * L * a.S,
                            beam || greedy_scored ? &score[h] : NULL);
        if (format == CLI_FORMAT_JSONL) printf("]}\n");
        if (got) rc = write_files(&a, out, out_len[0], align, svg, html, title);
        got = 0; /* printed */
    }
    if (!rc && format == CLI_FORMAT_TEXT) {
        const attend_model_config *c = attend_model_get_config(a.m);
        if (c->decoder == ATTEND_DECODER_NONE)
            printf("note: decoder 'none' has no attention (a fixed context): the weights below are all 0\n");
        if (head) printf("head %d of %d (the top layer's cross-attention)\n", head, c->heads);
        printf("source: %s  (%d tokens)\n", cli_vis(text), a.S);
        if (beam) printf("beam %d, %d of %d hypotheses\n", beam, got, nbest);
    }
    for (int h = 0; !rc && h < got; h++) {
        if (h) printf("\n");
        rc = show(&a, out + (size_t)h * L, out_len[h], align + (size_t)h * L * a.S, beam ? &score[h] : NULL,
                  h == 0 ? svg : NULL, h == 0 ? html : NULL, title);
    }
    if (!rc && format == CLI_FORMAT_TEXT && attend_model_get_config(a.m)->decoder == ATTEND_DECODER_TRANSFORMER)
        rc = head_entropies(&a, beam, nbest, L, alpha, cov_pen, out, out_len[0]);
    free(out);
    free(out_len);
    free(score);
    free(align);
    analysis_close(&a);
    return cli_finish("align", rc);
}
