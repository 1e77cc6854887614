/*
 * m2m.c — `attend m2m TSV`: the many-to-many EM aligner (Jiampojamarn et al.
 * 2007) over a dictionary's pairs; writes the pairs again with their
 * alignment as the TSV's third column (usable by --guided-alignment), and
 * with --gold scores the alignments of the pairs a reference file also
 * aligns (precision, recall, F1, AER).
 */
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "cli.h"

static void m2m_usage(FILE *f) {
    fprintf(f,
            "usage: attend m2m TSV [--out PATH] [--gold TSV] [--iterations N] [--max-src N]\n"
            "                  [--max-tgt N] [--no-deletions] [--two-to-two] [--capacity N]\n"
            "\n"
            "Aligns every pair of TSV (source TAB target, tokens separated by spaces, e.g.\n"
            "\"b a i l s<TAB>B EY L Z\") with the many-to-many EM aligner of Jiampojamarn,\n"
            "Kondrak & Sherif (2007): up to --max-src source tokens spell up to --max-tgt\n"
            "target tokens, a source substring may spell nothing (a silent letter) unless\n"
            "--no-deletions; EM learns the substring pairs' probabilities, then each pair's\n"
            "best segmentation gives its links. Writes \"source TAB target TAB links\" (links\n"
            "\"i-j\": source token i, target token j, 0-based: the alignment column that\n"
            "--guided-alignment reads) to --out, or stdout; a pair no segmentation explains\n"
            "is written without links and counted on stderr.\n"
            "\n"
            "  --out PATH       the aligned TSV (default: stdout)\n"
            "  --gold TSV       reference alignments (a third column): for every pair of TSV\n"
            "                   with the same source and target, score the aligner's links\n"
            "                   against them (precision, recall, F1, AER) on stderr\n"
            "  --iterations N   EM iterations (10)\n"
            "  --max-src N      source tokens per substring, 1 or 2 (2)\n"
            "  --max-tgt N      target tokens per substring, 1 or 2 (2)\n"
            "  --no-deletions   every source substring spells at least one target token\n"
            "  --two-to-two     also let 2 source tokens spell 2 target tokens together (EM then\n"
            "                   favours such pairs and links most letters to two phonemes)\n"
            "  --capacity N     distinct substring pairs the aligner may meet (1048576)\n"
            "  --help           this message\n");
}

/* The i-th pair's text: its tokens joined by spaces (vocab v). */
static int pair_text(const attend_vocab *v, const int32_t *ids, int n, char *buf, size_t cap) {
    attend_error err;
    return attend_vocab_decode(v, ATTEND_TOKENIZE_SPACE, ids, n, buf, cap, &err) == ATTEND_OK ? 0 : 1;
}

static int same(const int32_t *a, int na, const int32_t *b, int nb) {
    return na == nb && !memcmp(a, b, (size_t)na * sizeof *a);
}

int cmd_m2m(int argc, char **argv) {
    const char *in = NULL, *out_path = NULL, *gold = NULL;
    int help = 0, nodel = 0;
    attend_m2m_options o = {2, 2, 1, 10, 1L << 20, 0};
    int two = 0;
    int cap = 1 << 20;
    cli_parser p;
    cli_init(&p, "m2m", argc, argv);
    int rc = 0;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--out")) rc = cli_string(&p, &out_path);
        else if (cli_is(&p, "--gold")) rc = cli_string(&p, &gold);
        else if (cli_is(&p, "--iterations")) rc = cli_int(&p, 1, 1000, &o.iterations);
        else if (cli_is(&p, "--max-src")) rc = cli_int(&p, 1, 2, &o.max_src);
        else if (cli_is(&p, "--max-tgt")) rc = cli_int(&p, 1, 2, &o.max_tgt);
        else if (cli_is(&p, "--no-deletions")) rc = cli_flag(&p, &nodel);
        else if (cli_is(&p, "--two-to-two")) rc = cli_flag(&p, &two);
        else if (cli_is(&p, "--capacity")) rc = cli_int(&p, 16, 1 << 26, &cap);
        else if (cli_positional(&p) && !in) in = p.arg;
        else rc = cli_unknown(&p);
    }
    if (rc) return rc;
    if (help) {
        m2m_usage(stdout);
        return cli_finish("m2m", 0);
    }
    if (!in) return cli_usage_error("m2m", "needs a TSV file (see --help)");
    o.src_deletions = !nodel;
    o.two_to_two = two;
    o.capacity = cap;

    attend_vocab *sv = NULL, *tv = NULL;
    attend_dataset *d = NULL, *g = NULL;
    attend_error err = {0};
    FILE *f = NULL;
    char *sbuf = NULL, *tbuf = NULL;
    if (attend_vocab_create(&sv, &err) || attend_vocab_create(&tv, &err)) {
        rc = cli_lib_fail("m2m", &err);
        goto done;
    }
    if ((rc = cli_read_tsv("m2m", &d, in, sv, tv, 1, ATTEND_TOKENIZE_SPACE, 0))) goto done;
    if (gold && (rc = cli_read_tsv("m2m", &g, gold, sv, tv, 1, ATTEND_TOKENIZE_SPACE, 0))) goto done;
    attend_m2m_result r;
    if (attend_m2m_align(d, &o, &r, &err)) {
        rc = cli_lib_fail("m2m", &err);
        goto done;
    }
    fprintf(stderr, "attend m2m: %d pairs, %d without an alignment, %ld substring pairs, log-likelihood %.1f\n",
            r.pairs, r.unaligned, r.substring_pairs, r.log_likelihood);
    f = out_path ? fopen(out_path, "w") : stdout;
    if (!f) {
        fprintf(stderr, "attend m2m: cannot write %s\n", out_path);
        rc = 1;
        goto done;
    }
    size_t bcap = 65536;
    sbuf = malloc(bcap);
    tbuf = malloc(bcap);
    if (!sbuf || !tbuf) {
        fprintf(stderr, "attend m2m: out of memory\n");
        rc = 1;
        goto done;
    }
    for (int i = 0; i < r.pairs && !rc; i++) {
        const int32_t *s, *t, *links;
        int sl, tl, n;
        if (attend_dataset_get(d, i, &s, &sl, &t, &tl, &err) || attend_dataset_get_alignment(d, i, &links, &n, &err)) {
            rc = cli_lib_fail("m2m", &err);
            break;
        }
        if (pair_text(sv, s, sl, sbuf, bcap) || pair_text(tv, t, tl, tbuf, bcap)) {
            fprintf(stderr, "attend m2m: pair %d is too long to write\n", i + 1);
            rc = 1;
            break;
        }
        fprintf(f, "%s\t%s", sbuf, tbuf);
        if (n >= 0) {
            fputc('\t', f);
            for (int k = 0; k < n; k++) fprintf(f, "%s%d-%d", k ? " " : "", (int)links[2 * k], (int)links[2 * k + 1]);
        }
        fputc('\n', f);
    }
    if (!rc && g) {
        attend_alignment_counts c = {0, 0, 0};
        int matched = 0, exact = 0, ng = attend_dataset_size(g);
        for (int k = 0; k < ng; k++) {
            const int32_t *gs, *gt, *gl;
            int gsl, gtl, gn;
            if (attend_dataset_get(g, k, &gs, &gsl, &gt, &gtl, &err) ||
                attend_dataset_get_alignment(g, k, &gl, &gn, &err)) {
                rc = cli_lib_fail("m2m", &err);
                break;
            }
            if (gn < 0) continue;
            for (int i = 0; i < r.pairs; i++) {
                const int32_t *s, *t, *links;
                int sl, tl, n;
                attend_dataset_get(d, i, &s, &sl, &t, &tl, &err);
                if (!same(s, sl, gs, gsl) || !same(t, tl, gt, gtl)) continue;
                attend_dataset_get_alignment(d, i, &links, &n, &err);
                attend_alignment_counts one = {0, 0, 0};
                attend_alignment_count(gl, gn, links, n > 0 ? n : 0, &one, &err);
                attend_alignment_count(gl, gn, links, n > 0 ? n : 0, &c, &err);
                exact += one.both == one.ref && one.both == one.hyp;
                matched++;
                break;
            }
        }
        double pr, re, f1, aer;
        attend_alignment_scores(&c, &pr, &re, &f1, &aer);
        fprintf(stderr, "attend m2m: against %s: %d of its %d pairs found, precision %.4f recall %.4f F1 %.4f "
                        "AER %.4f, %d aligned exactly\n", gold, matched, ng, pr, re, f1, aer, exact);
    }
done:
    if (f && f != stdout && fclose(f) && !rc) {
        fprintf(stderr, "attend m2m: error writing %s\n", out_path);
        rc = 1;
    }
    free(sbuf);
    free(tbuf);
    attend_dataset_free(d);
    attend_dataset_free(g);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
    return cli_finish("m2m", rc);
}
