/*
 * g2p.c — `attend g2p`: pronounce words with a grapheme-to-phoneme model
 * (arguments or one word per line on stdin, n-best lists, alignments), and
 * the task around it: `g2p data` (parse and split a dictionary), `g2p train`
 * (the default recipe with progress, checkpoints and early stopping on dev),
 * `g2p eval` (PER/WER on dev and test, greedy and beam) and `g2p bench`
 * (batch-1 latency). docs/G2P.md describes all of it. The library does the
 * work (src/tasks/g2p.c); this file parses options, calls it in order and prints.
 * Here: pronouncing and the dispatch; finding the model and dictionary is
 * in g2p_files.c, `g2p train` in g2p_train.c, `g2p data`, `g2p eval`,
 * `g2p bench` in g2p_eval.c, `g2p distill` in g2p_distill.c.
 */
#define _XOPEN_SOURCE 700 /* realpath; POSIX.1-2008 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attend.h"
#include "cli.h"
#include "mpirun.h"
#include "ensemble.h"
#include "g2p_files.h"
#include "outputs.h" /* issue 17: output checks */

/* ================================================================= pronounce */

typedef struct {
    const char *model;
    int nbest, beam, align, max_len;
    double alpha;
    double coverage_penalty; /* --coverage-penalty (beam) */
    int format, strict, skip_malformed;
    const char *lexicon; /* --lexicon FILE */
    int no_lexicon;      /* --no-lexicon */
    int ipa;             /* --phones ipa */
    int text;            /* --text: running text (docs/G2P.md, "Running text") */
} say_opts;

static void say_usage(FILE *f) {
    fprintf(f,
            "usage: attend g2p [options] WORD...        pronounce the words\n"
            "       attend g2p [options] [-]            one word per line from standard input\n"
            "       attend g2p --text [options] [TEXT...]  running text: sentences (arguments\n"
            "                                           joined by spaces, or each line of stdin)\n"
            "       attend g2p train|eval|data|bench|distill  the task: see `attend g2p COMMAND --help`\n"
            "\n"
            "Prints each word in the dictionary's own format: `word PH1 PH2 ...` (ARPAbet\n"
            "phonemes, no stress). Words are lower-cased; letters the model never saw become\n"
            "<unk>. To pronounce a word spelled like a command, put -- before it. Standard\n"
            "input is read a line at a time (lines of up to %d bytes), so it may be endless.\n"
            "Lexicon first: a word the lexicon has (--lexicon) prints its first entry there;\n"
            "the model pronounces only the others.\n"
            "\n"
            "Problems of single words are reported on stderr (as <stdin>:LINE: ... or\n"
            "<args>:N: ...) and the other words are still pronounced, with a summary line at\n"
            "the end: letters the model does not know (read as <unk>), words longer than the\n"
            "model's training words (pronounced), and words over %d characters (not\n"
            "pronounced). A word with white space or control characters is an error (exit 1).\n"
            "\n"
            "  --model PATH       the G2P model (default: $ATTEND_G2P_MODEL, else the shipped\n"
            "                     models/" G2P_MODEL_NAME "). PATH,PATH,... is an ensemble:\n"
            "                     each step's distribution is the mean of the models'\n"
            "                     log-probabilities (greedy and beam); the models must have the\n"
            "                     same letters and phonemes; --align shows each one's alignment\n"
            "  --beam K           beam search with K hypotheses (default: greedy)\n"
            "  --nbest N          the N best pronunciations, as `word PH ...`, `word(2) PH ...`,\n"
            "                     ..., each followed by `# ` and its log-probability (--beam\n"
            "                     defaults to max(N, %d))\n"
            "  --alpha A          beam length normalisation: score = log p / (length+1)^A (0)\n"
            "  --coverage-penalty B  beam: add B * sum_j log(min(total attention on letter j,\n"
            "                     1)) to a finished hypothesis's score (Wu et al. 2016) (0)\n"
            "  --align            after each pronunciation, which letters each phoneme attended\n"
            "                     to: a heatmap (letters across, phonemes down, shade by weight)\n"
            "                     with the most-attended letter per phoneme; jsonl: an\n"
            "                     \"alignment\" array per hypothesis\n"
            "  --max-len N        longest pronunciation in phonemes (the model's longest + 1)\n"
            "  --format F         text, tsv (INDEX<TAB>RANK<TAB>SCORE<TAB>WORD<TAB>PHONEMES<TAB>\n"
            "                     SOURCE per pronunciation, SOURCE lexicon or model) or jsonl\n"
            "                     (one object per word, with \"source\"); see docs/FORMAT.md (text)\n"
            "  --lexicon FILE     look words up in this CMUdict-format lexicon first (or a\n"
            "                     file written by attend_g2p_lexicon_save); the model pronounces\n"
            "                     only the words it lacks. Default: $ATTEND_G2P_LEXICON (none:\n"
            "                     no lexicon), else Debian's pocketsphinx-en-us CMUdict, else\n"
            "                     the installed or source tree's data/g2p/" G2P_DICT_NAME ";\n"
            "                     a text lexicon is cached compactly in ~/.cache/attend\n"
            "  --no-lexicon       the model pronounces every word\n"
            "  --phones SET       arpabet (CMUdict's phonemes, the default) or ipa (General\n"
            "                     American IPA, no separators; a stress model's stress marks\n"
            "                     go before the stressed syllable's onset: docs/G2P.md)\n"
            "  --text             read sentences: numbers, currency, times, acronyms,\n"
            "                     contractions, hyphens and punctuation by the rules of\n"
            "                     docs/G2P.md (\"Running text\"); one line per token (`word PH\n"
            "                     ...`, a spelled letter in capitals, `|` and `||` for phrase\n"
            "                     and sentence breaks) and an empty line after each text;\n"
            "                     tsv: INDEX<TAB>POSITION<TAB><TAB>TOKEN<TAB>PHONEMES<TAB>SOURCE;\n"
            "                     jsonl: one object per token. Unknown characters are noted\n"
            "                     on stderr once per word with what was done (skipped, kept)\n"
            "  --strict           a problem of a word is an error: stop there, exit 1\n"
            "  --skip-malformed   skip words with white space or control characters (counted)\n"
            "                     instead of reporting each as an error, and malformed\n"
            "                     lexicon lines instead of refusing the lexicon\n"
            "  --help             this message\n"
            "\n"
            "Exit status: 0 ok, 1 a word or the model could not be used, 2 bad usage.\n",
            CLI_MAX_LINE, ATTEND_G2P_MAX_LEN, G2P_BEAM_DEFAULT);
}

typedef struct {
    g2p_models e;         /* the model, or an ensemble's members (--model A,B,...) */
    int L, S, K;          /* longest output, longest word, rows */
    int trained_S;        /* the model's longest training word */
    int32_t *out, *out_len; /* [K,L], [K] */
    double *score;        /* [K] */
    attend_real *align;   /* [M,K,L,S] */
    char *text;           /* [text_cap] */
    size_t text_cap;
    cli_problems probs;
    g2p_lexicon lex;      /* looked up before the model */
    char ipa[1024];       /* --phones ipa: the pronunciation in IPA */
    long from_lexicon, from_model; /* words pronounced by each */
    long noted;           /* --text: chunks with unknown characters */
} speaker;

/* jsonl: the object of one word up to its hypotheses; tsv: nothing. */
static void word_begin(const say_opts *o, long index, const char *word, size_t len, int unknown, const char *error,
                       const char *source) {
    if (o->format != CLI_FORMAT_JSONL) return;
    printf("{\"index\":%ld,\"word\":", index);
    cli_json_string(stdout, word, len);
    if (source) printf(",\"source\":\"%s\"", source);
    printf(",\"unknown\":%d", unknown);
    if (error) {
        printf(",\"error\":");
        cli_json_string(stdout, error, strlen(error));
    }
    printf(",\"hypotheses\":[");
}

static void word_end(const say_opts *o, long index, const char *word, size_t len, int got) {
    if (o->format == CLI_FORMAT_JSONL) printf("]}\n");
    else if (o->format == CLI_FORMAT_TSV && got == 0) {
        printf("%ld\t0\t\t", index);
        cli_tsv_field(stdout, word, len);
        printf("\t\t\n");
    }
}

static size_t code_points(const char *s, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

/* The pronunciation to print: sp->text (ARPAbet), or with --phones ipa its
 * IPA form; NULL after a message when it cannot be converted. */
static const char *shown_phones(speaker *sp, const say_opts *o) {
    if (!o->ipa) return sp->text;
    attend_error err = {0};
    if (attend_g2p_ipa(sp->text, sp->ipa, sizeof sp->ipa, &err)) {
        cli_lib_fail("g2p", &err);
        return NULL;
    }
    return sp->ipa;
}

/* Prints word w of the lexicon: its first pronunciation, or with --nbest N
 * its first N (the lexicon's order; no score: `# lexicon` in text, an empty
 * score in tsv, null in jsonl). The model is not run, so --align has no
 * alignment to show for it. */
static int say_lexicon(speaker *sp, const say_opts *o, const char *word, size_t len, long index, int w) {
    attend_error err = {0};
    int n = attend_g2p_lexicon_prons(sp->lex.lx, w);
    if (!o->nbest) n = 1;
    else if (n > o->nbest) n = o->nbest;
    sp->from_lexicon++;
    word_begin(o, index, word, len, 0, NULL, "lexicon");
    for (int h = 0; h < n; h++) {
        if (attend_g2p_lexicon_pron(sp->lex.lx, w, h, sp->text, sp->text_cap, &err)) return cli_lib_fail("g2p", &err);
        const char *ph = shown_phones(sp, o);
        if (!ph) return 1;
        if (o->format == CLI_FORMAT_TSV) {
            printf("%ld\t%d\t\t", index, h + 1);
            cli_tsv_field(stdout, word, len);
            printf("\t%s\tlexicon\n", ph);
        } else if (o->format == CLI_FORMAT_JSONL) {
            printf("%s{\"phonemes\":", h ? "," : "");
            cli_json_string(stdout, ph, strlen(ph));
            printf(",\"score\":null}");
        } else {
            fwrite(word, 1, len, stdout);
            if (h) printf("(%d)", h + 1);
            printf(" %s%s\n", ph, o->nbest ? "  # lexicon" : "");
            if (o->align) printf("   (from the lexicon: no alignment)\n\n");
        }
    }
    word_end(o, index, word, len, n);
    return 0;
}

/* Pronounces one word; `where` and `index` name it in messages ("<stdin>", line). */
static int say_word(speaker *sp, const say_opts *o, const char *word, size_t len, const char *where, long index) {
    attend_error err = {0};
    int32_t src[ATTEND_G2P_MAX_LEN];
    int ns = 0, got = 0;
    sp->probs.lines++;
    int show = (int)(len > 80 ? 80 : len);
    if (code_points(word, len) > (size_t)sp->S) {
        int e = cli_problem(&sp->probs, CLI_PROBLEM_TOO_LONG, where, index,
                            "'%.*s%s': %zu characters, more than the %d a word may have: not pronounced", show, word,
                            len > 80 ? "..." : "", code_points(word, len), sp->S);
        word_begin(o, index, word, len, 0, "too long", NULL);
        word_end(o, index, word, len, 0);
        if (o->format == CLI_FORMAT_TEXT && !e) printf("%s\n", cli_vis_n(word, len)); /* no pronunciation */
        return e;
    }
    if (attend_g2p_encode_word(sp->e.gv, word, len, src, ATTEND_G2P_MAX_LEN, &ns, &err)) {
        if (o->skip_malformed) {
            int e = cli_problem(&sp->probs, CLI_PROBLEM_MALFORMED, where, index, "'%.*s': %s: skipped", show, word,
                                err.msg);
            word_begin(o, index, word, len, 0, "malformed", NULL);
            word_end(o, index, word, len, 0);
            if (o->format == CLI_FORMAT_TEXT && !e) printf("%s\n", cli_vis_n(word, len));
            return e;
        }
        cli_error("g2p", "%s:%ld: '%.*s': %s (--skip-malformed skips such words)", where, index, show,
                word, err.msg);
        word_begin(o, index, word, len, 0, "malformed", NULL);
        word_end(o, index, word, len, 0);
        return 1;
    }
    int lw = attend_g2p_lexicon_find(sp->lex.lx, word, len);
    if (lw >= 0) return say_lexicon(sp, o, word, len, index, lw);
    char shown[160];
    int unknown = cli_unknown_symbols(word, len, ATTEND_TOKENIZE_CHAR, src, ns, shown, sizeof shown);
    if (unknown) {
        sp->probs.unknown_symbols += unknown;
        if (cli_problem(&sp->probs, CLI_PROBLEM_UNKNOWN, where, index,
                        "'%.*s': %d of %d letters unknown to the model%s%s%s, read as <unk>", show, word, unknown, ns,
                        shown[0] ? " (" : "", shown, shown[0] ? ")" : ""))
            return 1;
    }
    if (ns > sp->trained_S &&
        cli_problem(&sp->probs, CLI_PROBLEM_LONGER, where, index,
                    "'%.*s': %d letters, longer than the model's training words (up to %d): expect mistakes", show,
                    word, ns, sp->trained_S))
        return 1;
    attend_status st;
    int nbest = o->nbest ? o->nbest : 1;
    size_t astride = (size_t)(o->beam ? nbest : 1) * sp->L * ns; /* an ensemble: member k's at align + k*astride */
    if (o->beam) {
        attend_beam_options bo = {o->alpha, o->coverage_penalty};
        if (sp->e.M > 1 && o->coverage_penalty > 0) {
            cli_error("g2p", "--coverage-penalty with an ensemble: one model only");
            return 2;
        }
        st = sp->e.M > 1 ? attend_ensemble_beam(sp->e.ms, sp->e.M, src, ns, o->beam, nbest, sp->L, o->alpha, sp->out,
                                              sp->out_len, sp->score, o->align ? sp->align : NULL, &got, &err)
                       : attend_model_beam_opts(sp->e.ms[0], src, ns, o->beam, nbest, sp->L, &bo, sp->out, sp->out_len,
                                                sp->score, o->align ? sp->align : NULL, &got, &err);
    } else {
        int32_t sl = ns;
        st = sp->e.M > 1 ? attend_ensemble_greedy(sp->e.ms, sp->e.M, src, &sl, 1, ns, sp->L, sp->out, sp->out_len,
                                                o->align ? sp->align : NULL, &err)
                       : attend_model_greedy(sp->e.ms[0], src, &sl, 1, ns, sp->L, sp->out, sp->out_len,
                                             o->align ? sp->align : NULL, &err);
        got = 1;
        /* a structured format gives greedy outputs their forced log-probability
         * (phonemes and end; an ensemble: the members' mean); an output cut at
         * the length limit has none */
        if (o->format != CLI_FORMAT_TEXT && !st) {
            double sum = 0, one = 0;
            int ok = sp->out_len[0] < sp->L;
            for (int k = 0; ok && k < sp->e.M; k++) {
                ok = attend_model_score(sp->e.ms[k], src, ns, sp->out, sp->out_len[0], &one, NULL, &err) == ATTEND_OK;
                sum += one;
            }
            sp->score[0] = ok ? sum / sp->e.M : NAN;
        }
    }
    if (st) return cli_lib_fail("g2p", &err);
    sp->from_model++;
    word_begin(o, index, word, len, unknown, NULL, "model");
    for (int h = 0; h < got; h++) {
        const int32_t *ph = sp->out + (size_t)h * sp->L;
        const attend_real *a = sp->align + (size_t)h * sp->L * ns; /* [T,ns] of [L,ns] */
        if (attend_vocab_decode(sp->e.pv, ATTEND_TOKENIZE_SPACE, ph, sp->out_len[h], sp->text, sp->text_cap, &err))
            return cli_lib_fail("g2p", &err);
        const char *phones = shown_phones(sp, o);
        if (!phones) return 1;
        int scored = o->nbest || o->format != CLI_FORMAT_TEXT;
        double sc = sp->score[h];
        if (o->format == CLI_FORMAT_TSV) {
            printf("%ld\t%d\t", index, h + 1);
            if (scored && isfinite(sc)) printf("%.6f", sc);
            printf("\t");
            cli_tsv_field(stdout, word, len);
            printf("\t%s\tmodel\n", cli_vis(phones));
            continue;
        }
        if (o->format == CLI_FORMAT_JSONL) {
            printf("%s{\"phonemes\":", h ? "," : "");
            cli_json_string(stdout, phones, strlen(phones));
            if (isfinite(sc)) printf(",\"score\":%.6f", sc);
            else printf(",\"score\":null");
            /* an ensemble: "alignment" is model 1's, "alignments" every member's */
            for (int k = 0; o->align && k <= (sp->e.M > 1 ? sp->e.M : 0); k++) {
                const attend_real *ak = a + (size_t)(k ? k - 1 : 0) * astride;
                printf("%s", k == 0 ? ",\"alignment\":[" : k == 1 ? ",\"alignments\":[[" : ",[");
                for (int t = 0; t < sp->out_len[h]; t++) {
                    printf("%s[", t ? "," : "");
                    for (int j = 0; j < ns; j++) printf("%s%.4f", j ? "," : "", (double)ak[(size_t)t * ns + j]);
                    printf("]");
                }
                printf("]");
                if (k > 0 && k == sp->e.M) printf("]");
            }
            printf("}");
            continue;
        }
        fputs(cli_vis_n(word, len), stdout);
        if (h) printf("(%d)", h + 1);
        printf(" %s", cli_vis(phones));
        if (o->nbest) printf("  # %.4f", sc);
        printf("\n");
        if (o->align) {
            const char *src_tok[ATTEND_G2P_MAX_LEN], *out_tok[ATTEND_G2P_MAX_LEN];
            int T = sp->out_len[h] < ATTEND_G2P_MAX_LEN ? sp->out_len[h] : ATTEND_G2P_MAX_LEN;
            for (int j = 0; j < ns; j++) src_tok[j] = attend_vocab_token(sp->e.gv, src[j]);
            for (int t = 0; t < T; t++) out_tok[t] = attend_vocab_token(sp->e.pv, ph[t]);
            for (int k = 0; k < sp->e.M; k++) {
                char *pic = NULL;
                if (sp->e.M > 1) printf("model %d (%s):\n", k + 1, cli_vis(sp->e.paths[k]));
                if (T > 0 && attend_render_heatmap_text(&pic, a + (size_t)k * astride, T, ns, src_tok, out_tok, &err))
                    return cli_lib_fail("g2p", &err);
                if (pic) fputs(pic, stdout);
                free(pic);
                printf("\n");
            }
        }
    }
    if (got == 0 && o->format == CLI_FORMAT_TEXT) printf("%s\n", cli_vis_n(word, len));
    word_end(o, index, word, len, got);
    return 0;
}

/* --text: one text (a line of stdin, or the arguments joined): its tokens,
 * each pronounced (attend_g2p_token_pronounce), in the chosen format. The
 * tokens and notes hold no control characters (attend_g2p_text_normalize). */
static int say_text(speaker *sp, const say_opts *o, const char *text, size_t len, const char *where, long index) {
    attend_error err = {0};
    char *toks = NULL, *notes = NULL;
    attend_g2p_text_info info;
    if (attend_g2p_text_normalize(text, len, sp->lex.lx, &toks, &notes, &info, &err)) return cli_lib_fail("g2p", &err);
    int rc = 0;
    for (char *nl = notes, *e; nl && *nl; nl = e + 1) {
        e = strchr(nl, '\n');
        if (!e) break;
        fprintf(stderr, "attend g2p: %s:%ld: %.*s\n", where, index, (int)(e - nl), nl);
        sp->noted++;
        if (o->strict) rc = 1;
    }
    long pos = 0;
    for (char *t = toks; !rc && *t;) {
        char *e = strchr(t, ' ');
        size_t n = e ? (size_t)(e - t) : strlen(t);
        pos++;
        sp->probs.lines++;
        attend_g2p_source src = ATTEND_G2P_SOURCE_BREAK;
        const char *phones = "";
        int ok = 1;
        if (code_points(t, n) > (size_t)sp->S) {
            ok = 0;
            if (cli_problem(&sp->probs, CLI_PROBLEM_TOO_LONG, where, index, "'%.80s...': %zu characters, more than "
                            "the %d a word may have: not pronounced", t, code_points(t, n), sp->S))
                rc = 1;
        } else if (attend_g2p_token_pronounce(sp->e.ms, sp->e.M, sp->e.gv, sp->e.pv, sp->lex.lx, t, n, sp->text,
                                              sp->text_cap, &src, &err)) {
            rc = cli_lib_fail("g2p", &err);
            break;
        } else if (src == ATTEND_G2P_SOURCE_BREAK) phones = "";
        else if (!(phones = shown_phones(sp, o))) {
            rc = 1;
            break;
        }
        if (src == ATTEND_G2P_SOURCE_LEXICON || src == ATTEND_G2P_SOURCE_LEXICON_SUFFIX) sp->from_lexicon++;
        else if (src == ATTEND_G2P_SOURCE_MODEL || src == ATTEND_G2P_SOURCE_MODEL_SUFFIX) sp->from_model++;
        const char *sname = ok ? attend_g2p_source_name(src) : "too long";
        if (o->format == CLI_FORMAT_TSV) {
            printf("%ld\t%ld\t\t", index, pos);
            cli_tsv_field(stdout, t, n);
            printf("\t%s\t%s\n", phones, sname);
        } else if (o->format == CLI_FORMAT_JSONL) {
            printf("{\"index\":%ld,\"position\":%ld,\"token\":", index, pos);
            cli_json_string(stdout, t, n);
            printf(",\"source\":\"%s\",\"phonemes\":", sname);
            cli_json_string(stdout, phones, strlen(phones));
            printf("}\n");
        } else {
            fwrite(t, 1, n, stdout);
            if (*phones) printf(" %s", phones);
            printf("\n");
        }
        t += n;
        while (*t == ' ') t++;
    }
    if (o->format == CLI_FORMAT_TEXT) printf("\n");
    attend_g2p_text_free(toks);
    attend_g2p_text_free(notes);
    return rc;
}

static int cmd_say(int argc, char **argv) {
    cli_parser p;
    cli_init(&p, "g2p", argc, argv);
    say_opts o;
    memset(&o, 0, sizeof o);
    int rc = 0, help = 0, stdin_mode = 0;
    const char **words = calloc((size_t)argc + 1, sizeof *words);
    int nw = 0;
    if (!words) {
        cli_oom("g2p", "the word list");
        return 1;
    }
    while (rc == 0 && cli_next(&p)) {
        if (p.operands || (cli_positional(&p) && strcmp(p.arg, "-"))) words[nw++] = p.arg; /* after "--": words */
        else if (!strcmp(p.arg, "-")) stdin_mode = 1;
        else if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--model")) rc = cli_path(&p, &o.model);
        else if (cli_is(&p, "--beam")) rc = cli_int(&p, 1, 64, &o.beam);
        else if (cli_is(&p, "--nbest")) rc = cli_int(&p, 1, 64, &o.nbest);
        else if (cli_is(&p, "--alpha")) rc = cli_double(&p, 0, 100, &o.alpha);
        else if (cli_is(&p, "--coverage-penalty")) rc = cli_double(&p, 0, 1e6, &o.coverage_penalty);
        else if (cli_is(&p, "--align")) rc = cli_flag(&p, &o.align);
        else if (cli_is(&p, "--max-len")) rc = cli_int(&p, 1, ATTEND_G2P_MAX_LEN, &o.max_len);
        else if (cli_is(&p, "--format")) rc = cli_choice(&p, cli_format_from_name, "text|tsv|jsonl", &o.format);
        else if (cli_is(&p, "--strict")) rc = cli_flag(&p, &o.strict);
        else if (cli_is(&p, "--skip-malformed")) rc = cli_flag(&p, &o.skip_malformed);
        else if (cli_is(&p, "--lexicon")) rc = cli_string(&p, &o.lexicon);
        else if (cli_is(&p, "--no-lexicon")) rc = cli_flag(&p, &o.no_lexicon);
        else if (cli_is(&p, "--text")) rc = cli_flag(&p, &o.text);
        else if (cli_is(&p, "--phones")) {
            const char *ph = NULL;
            rc = cli_string(&p, &ph);
            if (!rc && !strcmp(ph, "ipa")) o.ipa = 1;
            else if (!rc && strcmp(ph, "arpabet")) rc = cli_usage_error("g2p", "--phones: expected arpabet or ipa, got '%s'", ph);
        }
        else rc = cli_unknown(&p);
    }
    if (!rc && o.lexicon && o.no_lexicon) rc = cli_usage_error("g2p", "--lexicon and --no-lexicon together");
    if (rc || help) {
        free(words);
        if (help) {
            say_usage(stdout);
            printf("\n");
            g2p_search_help(stdout, 1);
        }
        return rc ? rc : cli_finish("g2p", 0);
    }
    if (o.text && (o.nbest || o.beam || o.align || o.coverage_penalty > 0)) {
        free(words);
        return cli_usage_error("g2p", "--text pronounces greedily: no --nbest, --beam, --align or --coverage-penalty");
    }
    if (o.nbest && !o.beam) o.beam = o.nbest > G2P_BEAM_DEFAULT ? o.nbest : G2P_BEAM_DEFAULT;
    if (o.nbest > o.beam) {
        free(words);
        return cli_usage_error("g2p", "--nbest %d is more than --beam %d", o.nbest, o.beam);
    }
    if (o.align && o.format == CLI_FORMAT_TSV) {
        free(words);
        return cli_usage_error("g2p", "--align with --format tsv: use --format jsonl for alignments");
    }
    if (o.coverage_penalty > 0 && !o.beam) {
        free(words);
        return cli_usage_error("g2p", "--coverage-penalty needs --beam K");
    }
    if (o.beam == 1 && !o.nbest) o.beam = 0; /* a beam of one is greedy */
    if (nw && stdin_mode) {
        free(words);
        return cli_usage_error("g2p", "give words or - (standard input), not both");
    }
    if (!nw && isatty(fileno(stdin)) && !stdin_mode) {
        free(words);
        say_usage(stderr);
        return 2;
    }
    speaker sp;
    memset(&sp, 0, sizeof sp);
        sp.probs.cmd = "g2p";
    sp.probs.unit = o.text ? "token" : "word";
    sp.probs.strict = o.strict;
    cli_lines in;
    memset(&in, 0, sizeof in);
    /* learn the trained lengths (and check an ensemble), then load with room for any word */
    if ((rc = g2p_models_open("g2p", o.model, &sp.e))) goto done;
    sp.S = ATTEND_G2P_MAX_LEN;
    sp.trained_S = sp.e.cfg.max_src_len;
    sp.L = o.max_len ? o.max_len : sp.e.cfg.max_tgt_len + 1;
    if (sp.L > ATTEND_G2P_MAX_LEN) sp.L = ATTEND_G2P_MAX_LEN;
    cli_positions_caps(&sp.e.cfg, &sp.S, &sp.L); /* a learned positions table bounds the words and phonemes */
    sp.K = o.beam ? o.beam : 1;
    if ((rc = g2p_models_load("g2p", &sp.e, sp.K, sp.S, sp.L))) goto done;
    if ((rc = g2p_lexicon_open("g2p", o.lexicon, o.no_lexicon, o.skip_malformed, sp.e.pv, &sp.lex))) goto done;
    sp.text_cap = (size_t)sp.L * (ATTEND_MAX_TOKEN_BYTES + 1) + 1;
    sp.out = malloc((size_t)sp.K * sp.L * sizeof *sp.out);
    sp.out_len = malloc((size_t)sp.K * sizeof *sp.out_len);
    sp.score = malloc((size_t)sp.K * sizeof *sp.score);
    sp.align = malloc((size_t)sp.e.M * sp.K * sp.L * sp.S * sizeof *sp.align);
    sp.text = malloc(sp.text_cap);
    if (!sp.out || !sp.out_len || !sp.score || !sp.align || !sp.text) {
        cli_oom("g2p", "the decoding buffers");
        rc = 1;
        goto done;
    }
    if (nw && o.text) {
        size_t total = 0;
        for (int i = 0; i < nw; i++) total += strlen(words[i]) + 1;
        char *joined = malloc(total + 1);
        if (!joined) {
            fprintf(stderr, "attend g2p: out of memory\n");
            rc = 1;
            goto done;
        }
        size_t at = 0;
        for (int i = 0; i < nw; i++) {
            size_t n = strlen(words[i]);
            if (i) joined[at++] = ' ';
            memcpy(joined + at, words[i], n);
            at += n;
        }
        joined[at] = '\0';
        rc = say_text(&sp, &o, joined, at, "<args>", 1);
        free(joined);
    } else if (nw) {
        for (int i = 0; i < nw && !(rc && o.strict); i++)
            rc |= say_word(&sp, &o, words[i], strlen(words[i]), "<args>", i + 1);
    } else {
        if ((rc = cli_lines_open(&in, "g2p", "-"))) goto done;
        for (;;) {
            size_t len = 0;
            int got = cli_lines_next(&in, &len);
            if (got == 0) break;
            if (got == -2) {
                cli_error("g2p", "%s: read error in line %ld: %s", in.name, in.line + 1,
                        strerror(in.err));
                rc = 1;
                break;
            }
            if (got == -1) {
                if (!o.skip_malformed) {
                    cli_error("g2p", "%s:%ld: longer than the %d bytes a line may have (--skip-malformed skips "
                            "such lines)",
                            in.name, in.line, CLI_MAX_LINE);
                    rc = 1;
                    break;
                }
                sp.probs.lines++;
                if (cli_problem(&sp.probs, CLI_PROBLEM_MALFORMED, in.name, in.line,
                                "longer than the %d bytes a line may have: skipped", CLI_MAX_LINE) ||
                    cli_lines_skip_rest(&in)) {
                    if (in.err) cli_error("g2p", "%s: read error: %s", in.name, strerror(in.err));
                    rc = 1;
                    break;
                }
                continue;
            }
            const char *line = in.buf;
            if (o.text) {
                rc |= say_text(&sp, &o, line, len, in.name, in.line);
                if (rc && o.strict) break;
                continue;
            }
            while (len && (line[len - 1] == ' ' || line[len - 1] == '\t')) len--;
            size_t start = 0;
            while (start < len && (line[start] == ' ' || line[start] == '\t')) start++;
            if (start == len) {
                if (o.format == CLI_FORMAT_TEXT) printf("\n");
                continue;
            }
            rc |= say_word(&sp, &o, line + start, len - start, in.name, in.line);
            if (rc && o.strict) break;
        }
    }
    cli_problems_summary(&sp.probs);
    if (sp.noted) fprintf(stderr, "attend g2p: %ld word%s noted above (unknown characters, or a word cut)\n", sp.noted,
                          sp.noted == 1 ? "" : "s");
done:
    free(words);
    cli_lines_close(&in);
    g2p_models_free(&sp.e);
    g2p_lexicon_close(&sp.lex);
    free(sp.out);
    free(sp.out_len);
    free(sp.score);
    free(sp.align);
    free(sp.text);
    return cli_finish("g2p", rc);
}

/* ================================================================== dispatch */

int cmd_g2p(int argc, char **argv) {
    cli_set_oom_hint("lower --beam or --max-len"); /* the options of this command that lower its memory */
    if (argc >= 2) {
        const char *sub = argv[1];
        if (!strcmp(sub, "train")) return cmd_g2p_train(argc - 1, argv + 1);
        if (!strcmp(sub, "eval")) return cmd_g2p_eval(argc - 1, argv + 1);
        if (!strcmp(sub, "data")) return cmd_g2p_data(argc - 1, argv + 1);
        if (!strcmp(sub, "bench")) return cmd_g2p_bench(argc - 1, argv + 1);
        if (!strcmp(sub, "distill")) return cmd_g2p_distill(argc - 1, argv + 1);
    }
    return cmd_say(argc, argv);
}

