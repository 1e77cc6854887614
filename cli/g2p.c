/*
 * g2p.c — `attend g2p`: pronounce words with a grapheme-to-phoneme model
 * (arguments or one word per line on stdin, n-best lists, alignments), and
 * the task around it: `g2p data` (parse and split a dictionary), `g2p train`
 * (the default recipe with progress, checkpoints and early stopping on dev),
 * `g2p eval` (PER/WER on dev and test, greedy and beam) and `g2p bench`
 * (batch-1 latency). docs/G2P.md describes all of it. The library does the
 * work (src/tasks/g2p.c); this file parses options, calls it in order and prints.
 */
#define _POSIX_C_SOURCE 200809L
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
#include "outputs.h" /* issue 17: output checks */

#define G2P_MODEL_NAME "g2p-cmudict.safetensors"
#define G2P_DICT_NAME "cmudict-en-us.dict"
#define G2P_BEAM_DEFAULT 5

/* ------------------------------------------------------- finding files */

static int file_exists(const char *path) {
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir of the running executable + "/../" + rel into buf; 0 when unknown. */
static int beside_exe(char *buf, size_t cap, const char *rel) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return 0;
    *slash = '\0';
    return snprintf(buf, cap, "%s/../%s", exe, rel) < (int)cap;
}

/*
 * The file to use: the option, else the environment variable, else the
 * source tree's copy (compile definition ATTEND_G2P_SOURCE_DIR from CMakeLists.txt), else
 * next to the executable (../rel_build for a build directory in the source
 * tree, ../rel_install for an installed one). NULL with a message when none.
 */
static const char *find_file(const char *cmd, const char *given, const char *env, const char *compiled,
                             const char *rel_build, const char *rel_install, const char *what, char *buf,
                             size_t cap) {
    if (given) return given;
    const char *e = getenv(env);
    if (e && *e) return e;
    if (compiled && file_exists(compiled)) return compiled;
    if (beside_exe(buf, cap, rel_build) && file_exists(buf)) return buf;
    if (beside_exe(buf, cap, rel_install) && file_exists(buf)) return buf;
    fprintf(stderr, "attend %s: no %s found: give %s, set %s, or %s\n", cmd, what,
            !strcmp(what, "model") ? "--model PATH" : "--dict PATH", env,
            !strcmp(what, "model") ? "train one with `attend g2p train`"
                                   : "fetch CMUdict with tools/get_cmudict.sh");
    return NULL;
}

#ifdef ATTEND_G2P_SOURCE_DIR
#define COMPILED_MODEL ATTEND_G2P_SOURCE_DIR "/models/" G2P_MODEL_NAME
#define COMPILED_DICT ATTEND_G2P_SOURCE_DIR "/data/g2p/" G2P_DICT_NAME
#else
#define COMPILED_MODEL NULL
#define COMPILED_DICT NULL
#endif

static const char *find_model(const char *cmd, const char *given, char *buf, size_t cap) {
    return find_file(cmd, given, "ATTEND_G2P_MODEL", COMPILED_MODEL, "models/" G2P_MODEL_NAME,
                     "share/attend/" G2P_MODEL_NAME, "model", buf, cap);
}

static const char *find_dict(const char *cmd, const char *given, char *buf, size_t cap) {
    return find_file(cmd, given, "ATTEND_G2P_DICT", COMPILED_DICT, "data/g2p/" G2P_DICT_NAME,
                     "share/attend/" G2P_DICT_NAME, "dictionary", buf, cap);
}

static int read_dict(const char *cmd, const char *path, int skip, attend_g2p_dict **d) {
    attend_error err = {0};
    attend_g2p_options o = {0, skip};
    if (attend_g2p_dict_read(d, path, &o, &err)) return cli_lib_fail(cmd, &err);
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(*d, &in);
    if (in.skipped) fprintf(stderr, "attend %s: skipped %d odd line%s (first: %s)\n", cmd, in.skipped,
                            in.skipped == 1 ? "" : "s", in.first_skipped);
    if (in.words == 0) {
        fprintf(stderr, "attend %s: %s: no entries\n", cmd, path);
        return 1;
    }
    return 0;
}

/* Loads a G2P model with capacities (0 = the file's). */
static int load_g2p(const char *cmd, const char *path, int batch, int max_src, int max_tgt, attend_model **m,
                    attend_vocab **gv, attend_vocab **pv) {
    attend_error err = {0};
    attend_model_config cap;
    memset(&cap, 0, sizeof cap);
    cap.max_batch = batch;
    cap.max_src_len = max_src;
    cap.max_tgt_len = max_tgt;
    if (attend_g2p_model_load(m, path, &cap, gv, pv, &err)) return cli_lib_fail(cmd, &err);
    return 0;
}

/* ================================================================= pronounce */

typedef struct {
    const char *model;
    int nbest, beam, align, max_len;
    double alpha;
    int format, strict, skip_malformed;
} say_opts;

static void say_usage(FILE *f) {
    fprintf(f,
            "usage: attend g2p [options] WORD...        pronounce the words\n"
            "       attend g2p [options] [-]            one word per line from standard input\n"
            "       attend g2p train|eval|data|bench    the task: see `attend g2p COMMAND --help`\n"
            "\n"
            "Prints each word in the dictionary's own format: `word PH1 PH2 ...` (ARPAbet\n"
            "phonemes, no stress). Words are lower-cased; letters the model never saw become\n"
            "<unk>. To pronounce a word spelled like a command, put -- before it. Standard\n"
            "input is read a line at a time (lines of up to %d bytes), so it may be endless.\n"
            "\n"
            "Problems of single words are reported on stderr (as <stdin>:LINE: ... or\n"
            "<args>:N: ...) and the other words are still pronounced, with a summary line at\n"
            "the end: letters the model does not know (read as <unk>), words longer than the\n"
            "model's training words (pronounced), and words over %d characters (not\n"
            "pronounced). A word with white space or control characters is an error (exit 1).\n"
            "\n"
            "  --model PATH       the G2P model (default: $ATTEND_G2P_MODEL, else the shipped\n"
            "                     models/" G2P_MODEL_NAME ")\n"
            "  --beam K           beam search with K hypotheses (default: greedy)\n"
            "  --nbest N          the N best pronunciations, as `word PH ...`, `word(2) PH ...`,\n"
            "                     ..., each followed by `# ` and its log-probability (--beam\n"
            "                     defaults to max(N, %d))\n"
            "  --alpha A          beam length normalisation: score = log p / (length+1)^A (0)\n"
            "  --align            after each pronunciation, which letters each phoneme attended\n"
            "                     to: a heatmap (letters across, phonemes down, shade by weight)\n"
            "                     with the most-attended letter per phoneme; jsonl: an\n"
            "                     \"alignment\" array per hypothesis\n"
            "  --max-len N        longest pronunciation in phonemes (the model's longest + 1)\n"
            "  --format F         text, tsv (INDEX<TAB>RANK<TAB>SCORE<TAB>WORD<TAB>PHONEMES per\n"
            "                     pronunciation) or jsonl (one object per word); see\n"
            "                     docs/FORMAT.md (text)\n"
            "  --strict           a problem of a word is an error: stop there, exit 1\n"
            "  --skip-malformed   skip words with white space or control characters (counted)\n"
            "                     instead of reporting each as an error\n"
            "  --help             this message\n"
            "\n"
            "Exit status: 0 ok, 1 a word or the model could not be used, 2 bad usage.\n",
            CLI_MAX_LINE, ATTEND_G2P_MAX_LEN, G2P_BEAM_DEFAULT);
}

typedef struct {
    attend_model *m;
    attend_vocab *gv, *pv;
    int L, S, K;          /* longest output, longest word, rows */
    int trained_S;        /* the model's longest training word */
    int32_t *out, *out_len; /* [K,L], [K] */
    double *score;        /* [K] */
    attend_real *align;   /* [K,L,S] */
    char *text;           /* [text_cap] */
    size_t text_cap;
    cli_problems probs;
} speaker;

/* jsonl: the object of one word up to its hypotheses; tsv: nothing. */
static void word_begin(const say_opts *o, long index, const char *word, size_t len, int unknown, const char *error) {
    if (o->format != CLI_FORMAT_JSONL) return;
    printf("{\"index\":%ld,\"word\":", index);
    cli_json_string(stdout, word, len);
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
        printf("\t\n");
    }
}

static size_t code_points(const char *s, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
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
        word_begin(o, index, word, len, 0, "too long");
        word_end(o, index, word, len, 0);
        if (o->format == CLI_FORMAT_TEXT && !e) printf("%.*s\n", (int)len, word); /* no pronunciation */
        return e;
    }
    if (attend_g2p_encode_word(sp->gv, word, len, src, ATTEND_G2P_MAX_LEN, &ns, &err)) {
        if (o->skip_malformed) {
            int e = cli_problem(&sp->probs, CLI_PROBLEM_MALFORMED, where, index, "'%.*s': %s: skipped", show, word,
                                err.msg);
            word_begin(o, index, word, len, 0, "malformed");
            word_end(o, index, word, len, 0);
            if (o->format == CLI_FORMAT_TEXT && !e) printf("%.*s\n", (int)len, word);
            return e;
        }
        fprintf(stderr, "attend g2p: %s:%ld: '%.*s': %s (--skip-malformed skips such words)\n", where, index, show,
                word, err.msg);
        word_begin(o, index, word, len, 0, "malformed");
        word_end(o, index, word, len, 0);
        return 1;
    }
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
    if (o->beam) {
        st = attend_model_beam(sp->m, src, ns, o->beam, o->nbest ? o->nbest : 1, sp->L, o->alpha, sp->out,
                               sp->out_len, sp->score, o->align ? sp->align : NULL, &got, &err);
    } else {
        int32_t sl = ns;
        st = attend_model_greedy(sp->m, src, &sl, 1, ns, sp->L, sp->out, sp->out_len, o->align ? sp->align : NULL,
                                 &err);
        got = 1;
        /* a structured format gives greedy outputs their forced log-probability
         * (phonemes and end); an output cut at the length limit has none */
        if (o->format != CLI_FORMAT_TEXT && !st &&
            (sp->out_len[0] >= sp->L ||
             attend_model_score(sp->m, src, ns, sp->out, sp->out_len[0], &sp->score[0], NULL, &err)))
            sp->score[0] = NAN;
    }
    if (st) return cli_lib_fail("g2p", &err);
    word_begin(o, index, word, len, unknown, NULL);
    for (int h = 0; h < got; h++) {
        const int32_t *ph = sp->out + (size_t)h * sp->L;
        const attend_real *a = sp->align + (size_t)h * sp->L * ns; /* [T,ns] of [L,ns] */
        if (attend_vocab_decode(sp->pv, ATTEND_TOKENIZE_SPACE, ph, sp->out_len[h], sp->text, sp->text_cap, &err))
            return cli_lib_fail("g2p", &err);
        int scored = o->nbest || o->format != CLI_FORMAT_TEXT;
        double sc = sp->score[h];
        if (o->format == CLI_FORMAT_TSV) {
            printf("%ld\t%d\t", index, h + 1);
            if (scored && isfinite(sc)) printf("%.6f", sc);
            printf("\t");
            cli_tsv_field(stdout, word, len);
            printf("\t%s\n", sp->text);
            continue;
        }
        if (o->format == CLI_FORMAT_JSONL) {
            printf("%s{\"phonemes\":", h ? "," : "");
            cli_json_string(stdout, sp->text, strlen(sp->text));
            if (isfinite(sc)) printf(",\"score\":%.6f", sc);
            else printf(",\"score\":null");
            if (o->align) {
                printf(",\"alignment\":[");
                for (int t = 0; t < sp->out_len[h]; t++) {
                    printf("%s[", t ? "," : "");
                    for (int j = 0; j < ns; j++) printf("%s%.4f", j ? "," : "", (double)a[(size_t)t * ns + j]);
                    printf("]");
                }
                printf("]");
            }
            printf("}");
            continue;
        }
        fwrite(word, 1, len, stdout);
        if (h) printf("(%d)", h + 1);
        printf(" %s", sp->text);
        if (o->nbest) printf("  # %.4f", sc);
        printf("\n");
        if (o->align) {
            const char *src_tok[ATTEND_G2P_MAX_LEN], *out_tok[ATTEND_G2P_MAX_LEN];
            int T = sp->out_len[h] < ATTEND_G2P_MAX_LEN ? sp->out_len[h] : ATTEND_G2P_MAX_LEN;
            for (int j = 0; j < ns; j++) src_tok[j] = attend_vocab_token(sp->gv, src[j]);
            for (int t = 0; t < T; t++) out_tok[t] = attend_vocab_token(sp->pv, ph[t]);
            char *pic = NULL;
            if (T > 0 && attend_render_heatmap_text(&pic, a, T, ns, src_tok, out_tok, &err))
                return cli_lib_fail("g2p", &err);
            if (pic) fputs(pic, stdout);
            free(pic);
            printf("\n");
        }
    }
    if (got == 0 && o->format == CLI_FORMAT_TEXT) {
        fwrite(word, 1, len, stdout);
        printf("\n");
    }
    word_end(o, index, word, len, got);
    return 0;
}

static int cmd_say(int argc, char **argv) {
    cli_parser p;
    cli_init(&p, "g2p", argc, argv);
    say_opts o;
    memset(&o, 0, sizeof o);
    int rc = 0, help = 0, stdin_mode = 0, dashdash = 0;
    const char **words = calloc((size_t)argc + 1, sizeof *words);
    int nw = 0;
    if (!words) {
        fprintf(stderr, "attend g2p: out of memory\n");
        return 1;
    }
    while (rc == 0 && cli_next(&p)) {
        if (dashdash || (cli_positional(&p) && strcmp(p.arg, "-"))) words[nw++] = p.arg;
        else if (!strcmp(p.arg, "-")) stdin_mode = 1;
        else if (!strcmp(p.arg, "--")) dashdash = 1;
        else if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--model")) rc = cli_string(&p, &o.model);
        else if (cli_is(&p, "--beam")) rc = cli_int(&p, 1, 64, &o.beam);
        else if (cli_is(&p, "--nbest")) rc = cli_int(&p, 1, 64, &o.nbest);
        else if (cli_is(&p, "--alpha")) rc = cli_double(&p, 0, 100, &o.alpha);
        else if (cli_is(&p, "--align")) rc = cli_flag(&p, &o.align);
        else if (cli_is(&p, "--max-len")) rc = cli_int(&p, 1, ATTEND_G2P_MAX_LEN, &o.max_len);
        else if (cli_is(&p, "--format")) rc = cli_choice(&p, cli_format_from_name, "text|tsv|jsonl", &o.format);
        else if (cli_is(&p, "--strict")) rc = cli_flag(&p, &o.strict);
        else if (cli_is(&p, "--skip-malformed")) rc = cli_flag(&p, &o.skip_malformed);
        else rc = cli_unknown(&p);
    }
    if (rc || help) {
        free(words);
        if (help) say_usage(stdout);
        return rc ? rc : cli_finish("g2p", 0);
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
    char buf[PATH_MAX + 64];
    const char *path = find_model("g2p", o.model, buf, sizeof buf);
    if (!path) {
        free(words);
        return 1;
    }
    speaker sp;
    memset(&sp, 0, sizeof sp);
    sp.probs.cmd = "g2p";
    sp.probs.unit = "word";
    sp.probs.strict = o.strict;
    cli_lines in;
    memset(&in, 0, sizeof in);
    /* learn the trained lengths, then load with room for any word */
    if ((rc = load_g2p("g2p", path, 1, 0, 0, &sp.m, &sp.gv, &sp.pv))) goto done;
    attend_model_config cfg = *attend_model_get_config(sp.m);
    attend_model_free(sp.m);
    attend_vocab_free(sp.gv);
    attend_vocab_free(sp.pv);
    sp.m = NULL;
    sp.gv = sp.pv = NULL;
    sp.S = ATTEND_G2P_MAX_LEN;
    sp.trained_S = cfg.max_src_len;
    sp.L = o.max_len ? o.max_len : cfg.max_tgt_len + 1;
    if (sp.L > ATTEND_G2P_MAX_LEN) sp.L = ATTEND_G2P_MAX_LEN;
    sp.K = o.beam ? o.beam : 1;
    if ((rc = load_g2p("g2p", path, sp.K, sp.S, sp.L, &sp.m, &sp.gv, &sp.pv))) goto done;
    sp.text_cap = (size_t)sp.L * (ATTEND_MAX_TOKEN_BYTES + 1) + 1;
    sp.out = malloc((size_t)sp.K * sp.L * sizeof *sp.out);
    sp.out_len = malloc((size_t)sp.K * sizeof *sp.out_len);
    sp.score = malloc((size_t)sp.K * sizeof *sp.score);
    sp.align = malloc((size_t)sp.K * sp.L * sp.S * sizeof *sp.align);
    sp.text = malloc(sp.text_cap);
    if (!sp.out || !sp.out_len || !sp.score || !sp.align || !sp.text) {
        fprintf(stderr, "attend g2p: out of memory\n");
        rc = 1;
        goto done;
    }
    if (nw) {
        for (int i = 0; i < nw && !(rc && o.strict); i++)
            rc |= say_word(&sp, &o, words[i], strlen(words[i]), "<args>", i + 1);
    } else {
        if ((rc = cli_lines_open(&in, "g2p", "-"))) goto done;
        for (;;) {
            size_t len = 0;
            int got = cli_lines_next(&in, &len);
            if (got == 0) break;
            if (got == -2) {
                fprintf(stderr, "attend g2p: %s: read error in line %ld: %s\n", in.name, in.line + 1,
                        strerror(in.err));
                rc = 1;
                break;
            }
            if (got == -1) {
                if (!o.skip_malformed) {
                    fprintf(stderr,
                            "attend g2p: %s:%ld: longer than the %d bytes a line may have (--skip-malformed skips "
                            "such lines)\n",
                            in.name, in.line, CLI_MAX_LINE);
                    rc = 1;
                    break;
                }
                sp.probs.lines++;
                if (cli_problem(&sp.probs, CLI_PROBLEM_MALFORMED, in.name, in.line,
                                "longer than the %d bytes a line may have: skipped", CLI_MAX_LINE) ||
                    cli_lines_skip_rest(&in)) {
                    if (in.err) fprintf(stderr, "attend g2p: %s: read error: %s\n", in.name, strerror(in.err));
                    rc = 1;
                    break;
                }
                continue;
            }
            const char *line = in.buf;
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
done:
    free(words);
    cli_lines_close(&in);
    attend_model_free(sp.m);
    attend_vocab_free(sp.gv);
    attend_vocab_free(sp.pv);
    free(sp.out);
    free(sp.out_len);
    free(sp.score);
    free(sp.align);
    free(sp.text);
    return cli_finish("g2p", rc);
}

/* ====================================================================== data */

static void data_usage(FILE *f) {
    fprintf(f,
            "usage: attend g2p data [--dict PATH] [--out DIR] [--skip-malformed] [--keep-stress]\n"
            "\n"
            "Parses a pronouncing dictionary and reports its entries, words, comments, odd\n"
            "lines and the train/dev/test split (by a hash of the word: ~90/5/5, every\n"
            "pronunciation of a word in the same part). With --out, writes DIR/train.dict,\n"
            "DIR/dev.dict and DIR/test.dict in the dictionary's format (stress stripped\n"
            "unless --keep-stress).\n"
            "\n"
            "  --dict PATH        the dictionary (default: $ATTEND_G2P_DICT, else\n"
            "                     data/g2p/" G2P_DICT_NAME ", fetched by tools/get_cmudict.sh)\n"
            "  --out DIR          write the three parts there\n"
            "  --skip-malformed   skip and count odd lines instead of stopping at the first\n"
            "  --keep-stress      keep stress digits (AH0, AH1)\n"
            "  --help             this message\n");
}

static int cmd_data(int argc, char **argv) {
    cli_parser p;
    cli_init(&p, "g2p data", argc, argv);
    const char *dict = NULL, *out = NULL;
    int rc = 0, help = 0, skip = 0, stress = 0;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--dict")) rc = cli_string(&p, &dict);
        else if (cli_is(&p, "--out")) rc = cli_string(&p, &out);
        else if (cli_is(&p, "--skip-malformed")) rc = cli_flag(&p, &skip);
        else if (cli_is(&p, "--keep-stress")) rc = cli_flag(&p, &stress);
        else rc = cli_unknown(&p);
    }
    if (rc) return rc;
    if (help) {
        data_usage(stdout);
        return cli_finish("g2p data", 0);
    }
    char buf[PATH_MAX + 64];
    const char *path = find_dict("g2p data", dict, buf, sizeof buf);
    if (!path) return 1;
    attend_g2p_dict *d = NULL;
    attend_error err = {0};
    attend_g2p_options o = {stress, skip};
    if (attend_g2p_dict_read(&d, path, &o, &err)) return cli_lib_fail("g2p data", &err);
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(d, &in);
    printf("dictionary: %s\n", path);
    printf("lines %d: %d pronunciations of %d words, %d comment, %d blank, %d skipped, %d duplicate\n", in.lines,
           in.entries, in.words, in.comments, in.blank, in.skipped, in.duplicates);
    if (in.skipped) printf("first skipped: %s\n", in.first_skipped);
    printf("longest word %d characters, longest pronunciation %d phonemes; stress %s\n", in.max_word_len,
           in.max_pron_len, stress ? "kept" : "stripped");
    FILE *f[3] = {NULL, NULL, NULL};
    if (out) {
        mkdir(out, 0777);
        for (int s = 0; s < 3 && rc == 0; s++) {
            char fp[PATH_MAX];
            snprintf(fp, sizeof fp, "%s/%s.dict", out, attend_g2p_split_name((attend_g2p_split)s));
            if (!(f[s] = fopen(fp, "w"))) {
                fprintf(stderr, "attend g2p data: %s: %s\n", fp, strerror(errno));
                rc = 1;
            }
        }
    }
    long words[3] = {0, 0, 0}, prons[3] = {0, 0, 0};
    for (int w = 0; rc == 0 && w < attend_g2p_dict_words(d); w++) {
        const char *word = attend_g2p_dict_word(d, w);
        int s = (int)attend_g2p_split_of(word, strlen(word));
        words[s]++;
        prons[s] += attend_g2p_dict_prons(d, w);
        if (f[s])
            for (int k = 0; k < attend_g2p_dict_prons(d, w); k++) {
                if (k) fprintf(f[s], "%s(%d) %s\n", word, k + 1, attend_g2p_dict_pron(d, w, k));
                else fprintf(f[s], "%s %s\n", word, attend_g2p_dict_pron(d, w, k));
            }
    }
    for (int s = 0; s < 3; s++) {
        printf("%-5s %6ld words (%4.1f%%) %6ld pronunciations\n", attend_g2p_split_name((attend_g2p_split)s), words[s],
               in.words ? 100.0 * (double)words[s] / in.words : 0, prons[s]);
        if (f[s] && fclose(f[s]) != 0) {
            fprintf(stderr, "attend g2p data: error writing %s/%s.dict\n", out,
                    attend_g2p_split_name((attend_g2p_split)s));
            rc = 1;
        }
    }
    if (out && rc == 0) printf("written: %s/{train,dev,test}.dict\n", out);
    attend_g2p_dict_free(d);
    return cli_finish("g2p data", rc);
}

/* ===================================================================== train */

/* The default recipe; docs/G2P.md explains each number. */
typedef struct {
    const char *dict, *out, *checkpoint, *resume;
    int skip;
    int emb, hidden, dec_hidden, attn, layers;
    int batch, epochs, warmup, patience, checkpoint_every, log_every, eval_words;
    double lr, min_lr, clip, max_minutes;
    uint64_t seed;
    int grad_shards; /* --grad-shards (cli/mpirun.h); 0: one per rank */
} g2p_train_opts;

static void g2p_train_defaults(g2p_train_opts *o) {
    memset(o, 0, sizeof *o);
    o->out = "g2p.safetensors";
    o->emb = 64;
    o->hidden = 128;
    o->dec_hidden = 256;
    o->attn = 128;
    o->layers = 1;
    o->batch = 64;
    o->epochs = 10;
    o->lr = 3e-3;
    o->min_lr = 1e-4;
    o->warmup = 500;
    o->clip = 1.0;
    o->patience = 3;
    o->max_minutes = 55;
    o->checkpoint_every = 1000;
    o->log_every = 200;
    o->seed = 1;
}

static void train_usage(FILE *f) {
    g2p_train_opts d;
    g2p_train_defaults(&d);
    fprintf(f,
            "usage: attend g2p train [--dict PATH] [--out MODEL] [options]\n"
            "\n"
            "Trains a G2P model on the train part of a dictionary with the default recipe:\n"
            "a bi-GRU encoder over letters and a Bahdanau (additive) attention GRU decoder over\n"
            "phonemes, Adam with a linear warm-up and a cosine decay over all epochs, the global\n"
            "gradient norm clipped. After every epoch the dev words are decoded (greedy); the\n"
            "model is saved to --out whenever the dev WER improves, and training stops early\n"
            "after --patience epochs without improvement. A checkpoint is written every\n"
            "--checkpoint-every steps; --resume continues from one bit for bit.\n"
            "\n"
            "data:\n"
            "  --dict PATH            the dictionary (default: $ATTEND_G2P_DICT, else\n"
            "                         data/g2p/" G2P_DICT_NAME ", see tools/get_cmudict.sh)\n"
            "  --skip-malformed       skip odd lines instead of stopping at the first\n"
            "model:\n"
            "  --emb N                letter and phoneme embedding width (%d)\n"
            "  --hidden N             encoder GRU width per direction (%d)\n"
            "  --layers N             stacked bidirectional encoder layers (%d)\n"
            "  --dec-hidden N         decoder GRU width (%d)\n"
            "  --attn N               additive attention width (%d)\n"
            "training:\n"
            "  --epochs N             passes over the training pronunciations (%d)\n"
            "  --batch N              pronunciations per step (%d)\n"
            "  --lr X                 peak Adam learning rate (%g)\n"
            "  --warmup N             linear warm-up steps (%d)\n"
            "  --min-lr X             learning rate at the end of the cosine decay (%g)\n"
            "  --clip X               clip the global gradient norm (%g)\n"
            "  --patience N           stop after N epochs without a better dev WER (%d; 0 = never)\n"
            "  --max-minutes X        stop after X minutes of training, evaluations excluded\n"
            "                         (%g; 0 = no limit)\n"
            "  --eval-words N         dev words decoded per evaluation (0 = all)\n"
            "  --seed N               initialisation and shuffling seed (%llu)\n"
            "output:\n"
            "  --out PATH             the best model by dev WER (%s)\n"
            "  --checkpoint PATH      checkpoint (weights, optimizer, data position)\n"
            "  --checkpoint-every N   steps between checkpoints (%d)\n"
            "  --resume PATH          continue from a checkpoint of the same data and options\n"
            "  --log-every N          log line every N steps when stderr is not a terminal (%d)\n"
            "  --help                 this message\n"
            "\n"
            "Progress goes to stderr (a bar on a terminal), results to stdout.\n",
            d.emb, d.hidden, d.layers, d.dec_hidden, d.attn, d.epochs, d.batch, d.lr, d.warmup, d.min_lr, d.clip,
            d.patience, d.max_minutes, (unsigned long long)d.seed, d.out, d.checkpoint_every, d.log_every);
    cli_mpi_usage(f);
}

static int train_parse(g2p_train_opts *o, int argc, char **argv, int *help) {
    cli_parser p;
    cli_init(&p, "g2p train", argc, argv);
    int rc = 0;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) *help = 1;
        else if (cli_is(&p, "--dict")) rc = cli_string(&p, &o->dict);
        else if (cli_is(&p, "--skip-malformed")) rc = cli_flag(&p, &o->skip);
        else if (cli_is(&p, "--emb")) rc = cli_int(&p, 1, 4096, &o->emb);
        else if (cli_is(&p, "--hidden")) rc = cli_int(&p, 1, 4096, &o->hidden);
        else if (cli_is(&p, "--layers")) rc = cli_int(&p, 1, 8, &o->layers);
        else if (cli_is(&p, "--dec-hidden")) rc = cli_int(&p, 1, 8192, &o->dec_hidden);
        else if (cli_is(&p, "--attn")) rc = cli_int(&p, 1, 4096, &o->attn);
        else if (cli_is(&p, "--epochs")) rc = cli_int(&p, 1, 10000, &o->epochs);
        else if (cli_is(&p, "--batch")) rc = cli_int(&p, 1, 4096, &o->batch);
        else if (cli_is(&p, "--lr")) rc = cli_double(&p, 1e-9, 10, &o->lr);
        else if (cli_is(&p, "--warmup")) rc = cli_int(&p, 0, 1000000000, &o->warmup);
        else if (cli_is(&p, "--min-lr")) rc = cli_double(&p, 0, 10, &o->min_lr);
        else if (cli_is(&p, "--clip")) rc = cli_double(&p, 0, 1e6, &o->clip);
        else if (cli_is(&p, "--patience")) rc = cli_int(&p, 0, 10000, &o->patience);
        else if (cli_is(&p, "--max-minutes")) rc = cli_double(&p, 0, 1e6, &o->max_minutes);
        else if (cli_is(&p, "--eval-words")) rc = cli_int(&p, 0, 100000000, &o->eval_words);
        else if (cli_is(&p, "--seed")) rc = cli_u64(&p, &o->seed);
        else if (cli_is(&p, "--out")) rc = cli_string(&p, &o->out);
        else if (cli_is(&p, "--checkpoint")) rc = cli_string(&p, &o->checkpoint);
        else if (cli_is(&p, "--checkpoint-every")) rc = cli_int(&p, 0, 1000000000, &o->checkpoint_every);
        else if (cli_is(&p, "--resume")) rc = cli_string(&p, &o->resume);
        else if (cli_is(&p, "--log-every")) rc = cli_int(&p, 1, 1000000000, &o->log_every);
        else if (cli_is(&p, "--grad-shards")) rc = cli_int(&p, 1, 4096, &o->grad_shards);
        else rc = cli_unknown(&p);
    }
    return rc;
}

typedef struct {
    int tty, bar_len;
    double last_draw, ema, loss_sum, t_sum;
    long tokens, samples;
    int have_ema;
} g2p_progress;

static void bar_clear(g2p_progress *pg) {
    if (pg->tty && pg->bar_len) {
        fprintf(stderr, "\r%*s\r", pg->bar_len, "");
        fflush(stderr);
        pg->bar_len = 0;
    }
}

static void bar_draw(g2p_progress *pg, long step, long total, int epoch, double sps, double eta) {
    char bar[32], line[200];
    int width = 24, filled = total > 0 ? (int)((double)width * (double)step / (double)total) : width;
    for (int i = 0; i < width; i++) bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    int n = snprintf(line, sizeof line, "[%s] epoch %d step %ld/%ld loss %.4f %.0f words/s ETA %.0fm%02.0fs", bar,
                     epoch, step, total, pg->ema, sps, eta > 0 ? floor(eta / 60) : 0, eta > 0 ? fmod(eta, 60) : 0);
    fprintf(stderr, "\r%s", line);
    if (n < pg->bar_len) fprintf(stderr, "%*s", pg->bar_len - n, "");
    fflush(stderr);
    pg->bar_len = n;
}

/* Dev WER/PER of the model now (greedy, batched). */
static int dev_eval(attend_model *m, const attend_g2p_dict *d, attend_vocab *gv, attend_vocab *pv, int batch,
                    int max_words, attend_g2p_counts *c) {
    attend_error err = {0};
    attend_g2p_eval_options eo = {0, 0, batch, max_words};
    if (attend_g2p_evaluate(m, d, ATTEND_G2P_DEV, gv, pv, &eo, c, &err)) return cli_lib_fail("g2p train", &err);
    return 0;
}

static int cmd_train_g2p(int argc, char **argv) {
    const char *cmd = "g2p train";
    g2p_train_opts o;
    g2p_train_defaults(&o);
    int help = 0, rc = train_parse(&o, argc, argv, &help);
    if (rc) return rc;
    if (help) {
        train_usage(stdout);
        return cli_finish(cmd, 0);
    }
    char buf[PATH_MAX + 64];
    const char *path = find_dict(cmd, o.dict, buf, sizeof buf);
    if (!path) return 1;
    if ((rc = cli_mpi_begin(cmd, argc, argv, o.batch, &o.grad_shards))) return cli_mpi_end(cmd, rc);
    int writer = cli_mpi_rank() == 0; /* rank 0 alone writes (cli/mpirun.h) */
    if (!writer) o.checkpoint = NULL;
    /* issue 17 (cli/outputs.h): every file checked before any work */
    if (cli_check_train_files(cmd, "--dict", path, NULL, o.resume, o.checkpoint, writer ? o.out : NULL, 0, NULL))
        return cli_mpi_end(cmd, 1);
    attend_error err = {0};
    attend_g2p_dict *d = NULL;
    attend_vocab *gv = NULL, *pv = NULL;
    attend_dataset *train = NULL;
    attend_model *m = NULL;
    attend_trainer *tr = NULL;
    if ((rc = read_dict(cmd, path, o.skip, &d))) goto done;
    if (attend_vocab_create(&gv, &err) || attend_vocab_create(&pv, &err) ||
        attend_g2p_dataset(&train, d, ATTEND_G2P_TRAIN, gv, pv, 1, &err)) {
        rc = cli_lib_fail(cmd, &err);
        goto done;
    }
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(d, &in);
    int n_train = attend_dataset_size(train);
    if (n_train == 0) {
        fprintf(stderr, "attend %s: %s: no training words\n", cmd, path);
        rc = 1;
        goto done;
    }
    long dev_words = 0;
    for (int w = 0; w < attend_g2p_dict_words(d); w++) {
        const char *word = attend_g2p_dict_word(d, w);
        dev_words += attend_g2p_split_of(word, strlen(word)) == ATTEND_G2P_DEV;
    }
    printf("data: %s: %d words; train %d pronunciations, dev %ld words; %d letters, %d phonemes\n", path, in.words,
           n_train, dev_words, attend_vocab_size(gv) - 4, attend_vocab_size(pv) - 4);

    attend_model_config mc;
    memset(&mc, 0, sizeof mc);
    mc.cell = ATTEND_CELL_GRU;
    mc.decoder = ATTEND_DECODER_BAHDANAU;
    mc.score = ATTEND_SCORE_ADDITIVE;
    mc.src_vocab = attend_vocab_size(gv);
    mc.tgt_vocab = attend_vocab_size(pv);
    mc.emb = o.emb;
    mc.enc_hidden = o.hidden;
    mc.enc_layers = o.layers;
    mc.dec_hidden = o.dec_hidden;
    mc.attn = o.attn;
    mc.max_batch = o.batch;
    mc.max_src_len = in.max_word_len;     /* every split fits, dev included */
    mc.max_tgt_len = in.max_pron_len;
    if (attend_model_create(&m, &mc, o.seed, &err)) {
        rc = cli_lib_fail(cmd, &err);
        goto done;
    }
    long steps_per_epoch = (n_train + o.batch - 1) / o.batch, total = steps_per_epoch * o.epochs;
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = o.lr;
    oc.clip_norm = o.clip;
    oc.warmup_steps = o.warmup;
    oc.decay_steps = total > o.warmup ? (int)(total - o.warmup) : 0;
    oc.min_lr = o.min_lr;
    if (attend_trainer_create(&tr, m, &oc, train, o.batch, o.seed, &err)) {
        rc = cli_lib_fail(cmd, &err);
        goto done;
    }
    if ((rc = cli_mpi_trainer(cmd, tr, o.grad_shards))) goto done;
    printf("model: gru encoder %dx%d bidirectional, bahdanau decoder %d, additive attention %d, emb %d: %zu "
           "parameters (%.2f MB)\n",
           o.layers, o.hidden, o.dec_hidden, o.attn, o.emb, attend_model_param_count(m),
           4.0 * (double)attend_model_param_count(m) / 1e6);
    printf("training: adam lr %g, warm-up %d, cosine decay to %g over %ld steps, clip %g, batch %d, %d epochs of "
           "%ld steps, patience %d, seed %llu\n",
           o.lr, o.warmup, o.min_lr, total, o.clip, o.batch, o.epochs, steps_per_epoch, o.patience,
           (unsigned long long)o.seed);
    double best_wer = 2;
    int bad_epochs = 0;
    if (o.resume) {
        if (attend_trainer_resume(tr, o.resume, &err)) {
            rc = cli_lib_fail(cmd, &err);
            goto done;
        }
        printf("resumed: %s at step %ld\n", o.resume, attend_trainer_steps(tr));
        /* the best model so far is --out: its dev WER is the one to beat */
        attend_model *bm = NULL;
        attend_vocab *bg = NULL, *bp = NULL;
        attend_g2p_counts c;
        attend_model_config cap;
        memset(&cap, 0, sizeof cap);
        cap.max_batch = o.batch;
        cap.max_src_len = in.max_word_len;
        cap.max_tgt_len = in.max_pron_len;
        if (file_exists(o.out) && attend_g2p_model_load(&bm, o.out, &cap, &bg, &bp, &err) == ATTEND_OK &&
            dev_eval(bm, d, bg, bp, o.batch, o.eval_words, &c) == 0) {
            best_wer = attend_g2p_wer(&c);
            printf("best so far: %s, dev WER %.2f%%\n", o.out, 100 * best_wer);
        }
        attend_model_free(bm);
        attend_vocab_free(bg);
        attend_vocab_free(bp);
        cli_mpi_share(&best_wer); /* rank 0's --out decides for all */
    }
    fflush(stdout);

    g2p_progress pg;
    memset(&pg, 0, sizeof pg);
    pg.tty = isatty(fileno(stderr));
    long start = attend_trainer_steps(tr);
    double t_train = 0, t_begin = cli_now();
    long run_samples = 0;
    int stopped = 0;
    while (attend_trainer_steps(tr) < total && !stopped) {
        attend_step_report r;
        double t0 = cli_now();
        if (attend_trainer_step(tr, &r, &err)) {
            bar_clear(&pg);
            rc = cli_lib_fail(cmd, &err);
            goto done;
        }
        double dt = cli_now() - t0;
        t_train += dt;
        run_samples += r.tf.seqs;
        pg.t_sum += dt;
        pg.samples += r.tf.seqs;
        if (!r.skipped) {
            pg.loss_sum += r.tf.loss * r.tf.tokens;
            pg.tokens += r.tf.tokens;
            pg.ema = pg.have_ema ? 0.95 * pg.ema + 0.05 * r.tf.loss : r.tf.loss;
            pg.have_ema = 1;
        }
        long step = r.step;
        int epoch = (int)((step - 1) / steps_per_epoch) + 1;
        double sps = t_train > 0 ? (double)run_samples / t_train : 0;
        double eta = step > start ? (double)(total - step) * t_train / (double)(step - start) : -1;
        if (pg.tty) {
            double now = cli_now();
            if (now - pg.last_draw >= 0.2 || step == total) {
                bar_draw(&pg, step, total, epoch, sps, eta);
                pg.last_draw = now;
            }
        } else if (step % o.log_every == 0) {
            fprintf(stderr, "step %ld/%ld epoch %d loss %.4f lr %.3g words/s %.0f ETA %.1f min\n", step, total, epoch,
                    pg.tokens ? pg.loss_sum / (double)pg.tokens : NAN, r.opt.lr,
                    pg.t_sum > 0 ? (double)pg.samples / pg.t_sum : 0, eta / 60);
            pg.loss_sum = pg.t_sum = 0;
            pg.tokens = pg.samples = 0;
        }
        if (o.checkpoint && o.checkpoint_every && step % o.checkpoint_every == 0) {
            if (attend_trainer_save(tr, o.checkpoint, gv, pv, ATTEND_TOKENIZE_CHAR, &err)) {
                bar_clear(&pg);
                rc = cli_lib_fail(cmd, &err);
                goto done;
            }
        }
        int out_of_time = cli_mpi_any(o.max_minutes > 0 && t_train > 60 * o.max_minutes);
        if (step % steps_per_epoch == 0 || step == total || out_of_time) {
            attend_g2p_counts c;
            double te = cli_now();
            if ((rc = dev_eval(m, d, gv, pv, o.batch, o.eval_words, &c))) goto done;
            double wer = attend_g2p_wer(&c), per = attend_g2p_per(&c);
            int better = wer < best_wer;
            if (better) {
                best_wer = wer;
                bad_epochs = 0;
                if (writer && attend_model_save(m, o.out, gv, pv, ATTEND_TOKENIZE_CHAR, &err)) {
                    bar_clear(&pg);
                    rc = cli_lib_fail(cmd, &err);
                    goto done;
                }
            } else {
                bad_epochs++;
            }
            bar_clear(&pg);
            printf("epoch %d step %ld: dev PER %.2f%% WER %.2f%% (%ld words, %.1f s)%s; %.1f min trained\n", epoch, step,
                   100 * per, 100 * wer, c.words, cli_now() - te, better ? ", best: saved" : "", t_train / 60);
            fflush(stdout);
            if (o.patience && bad_epochs >= o.patience) {
                printf("early stop: no better dev WER for %d epochs\n", bad_epochs);
                stopped = 1;
            }
            if (out_of_time) {
                printf("time limit: %.1f minutes reached\n", o.max_minutes);
                stopped = 1;
            }
        }
    }
    bar_clear(&pg);
    if (o.checkpoint && attend_trainer_save(tr, o.checkpoint, gv, pv, ATTEND_TOKENIZE_CHAR, &err)) {
        rc = cli_lib_fail(cmd, &err);
        goto done;
    }
    printf("trained: steps %ld-%ld in %.1f min (%.0f words/s; %.1f min with evaluations); best dev WER %.2f%%\n",
           start + 1, attend_trainer_steps(tr), t_train / 60, t_train > 0 ? run_samples / t_train : 0,
           (cli_now() - t_begin) / 60, best_wer <= 1 ? 100 * best_wer : NAN);
    if (best_wer <= 1) printf("saved: %s\n", o.out);
done:
    attend_trainer_free(tr);
    attend_model_free(m);
    attend_dataset_free(train);
    attend_vocab_free(gv);
    attend_vocab_free(pv);
    attend_g2p_dict_free(d);
    return cli_mpi_end(cmd, cli_finish(cmd, rc));
}

/* ====================================================================== eval */

static void eval_usage(FILE *f) {
    fprintf(f,
            "usage: attend g2p eval [--model PATH] [--dict PATH] [options]\n"
            "\n"
            "Phoneme error rate (edit distance to the closest reference / its length) and\n"
            "word error rate (the output equals none of the word's pronunciations) of a G2P\n"
            "model on parts of a dictionary's split, with greedy decoding and beam search.\n"
            "\n"
            "  --model PATH       the model (default: the shipped one)\n"
            "  --dict PATH        the dictionary (default: data/g2p/" G2P_DICT_NAME ")\n"
            "  --split LIST       comma-separated parts: train, dev, test, all (dev,test)\n"
            "  --beam K           beam width of the beam rows (%d; 0 = greedy only)\n"
            "  --alpha A          beam length normalisation (0)\n"
            "  --max-words N      at most N words per part (0 = all)\n"
            "  --batch N          words per greedy batch, 1..64 (64); a quantized model reads\n"
            "                     its int8/fp16 weights in products of at most 16 rows, its\n"
            "                     dequantized float copy in larger ones (same function)\n"
            "  --skip-malformed   skip odd dictionary lines\n"
            "  --help             this message\n",
            G2P_BEAM_DEFAULT);
}

static int cmd_eval_g2p(int argc, char **argv) {
    const char *cmd = "g2p eval";
    cli_parser p;
    cli_init(&p, cmd, argc, argv);
    const char *model = NULL, *dict = NULL, *splits = "dev,test";
    int rc = 0, help = 0, beam = G2P_BEAM_DEFAULT, max_words = 0, skip = 0, batch = 64;
    double alpha = 0;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--model")) rc = cli_string(&p, &model);
        else if (cli_is(&p, "--dict")) rc = cli_string(&p, &dict);
        else if (cli_is(&p, "--split")) rc = cli_string(&p, &splits);
        else if (cli_is(&p, "--beam")) rc = cli_int(&p, 0, 64, &beam);
        else if (cli_is(&p, "--alpha")) rc = cli_double(&p, 0, 100, &alpha);
        else if (cli_is(&p, "--max-words")) rc = cli_int(&p, 0, 100000000, &max_words);
        else if (cli_is(&p, "--batch")) rc = cli_int(&p, 1, 64, &batch);
        else if (cli_is(&p, "--skip-malformed")) rc = cli_flag(&p, &skip);
        else rc = cli_unknown(&p);
    }
    if (rc) return rc;
    if (help) {
        eval_usage(stdout);
        return cli_finish(cmd, 0);
    }
    int want[4] = {0, 0, 0, 0}, nwant = 0;
    {
        const char *s = splits;
        while (*s) {
            size_t n = strcspn(s, ",");
            int found = -1;
            for (int k = 0; k < 4; k++) {
                const char *name = attend_g2p_split_name((attend_g2p_split)k);
                if (strlen(name) == n && !strncmp(s, name, n)) found = k;
            }
            if (found < 0) return cli_usage_error(cmd, "--split: expected train, dev, test or all, got '%.*s'", (int)n, s);
            want[found] = 1;
            nwant++;
            s += n;
            if (*s == ',') s++;
        }
        if (!nwant) return cli_usage_error(cmd, "--split: give at least one part");
    }
    char mbuf[PATH_MAX + 64], dbuf[PATH_MAX + 64];
    const char *mpath = find_model(cmd, model, mbuf, sizeof mbuf);
    if (!mpath) return 1;
    const char *dpath = find_dict(cmd, dict, dbuf, sizeof dbuf);
    if (!dpath) return 1;
    attend_g2p_dict *d = NULL;
    attend_model *m = NULL;
    attend_vocab *gv = NULL, *pv = NULL;
    if ((rc = read_dict(cmd, dpath, skip, &d))) goto done;
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(d, &in);
    int B = 64 > beam ? 64 : beam;
    if ((rc = load_g2p(cmd, mpath, B, in.max_word_len, 0, &m, &gv, &pv))) goto done;
    printf("model: %s (%zu parameters)\ndictionary: %s\n", mpath, attend_model_param_count(m), dpath);
    printf("%-6s %-8s %7s %8s %8s %9s\n", "part", "decoding", "words", "PER%", "WER%", "words/s");
    for (int s = 0; s < 4 && rc == 0; s++) {
        if (!want[s]) continue;
        for (int b = 0; b < 2 && rc == 0; b++) {
            if (b == 1 && beam < 2) continue;
            attend_g2p_eval_options eo = {b ? beam : 0, alpha, batch, max_words};
            attend_g2p_counts c;
            attend_error err = {0};
            double t0 = cli_now();
            if (attend_g2p_evaluate(m, d, (attend_g2p_split)s, gv, pv, &eo, &c, &err)) {
                rc = cli_lib_fail(cmd, &err);
                break;
            }
            double dt = cli_now() - t0;
            char dec[16];
            snprintf(dec, sizeof dec, b ? "beam %d" : "greedy", beam);
            printf("%-6s %-8s %7ld %8.2f %8.2f %9.0f\n", attend_g2p_split_name((attend_g2p_split)s), dec, c.words,
                   100 * attend_g2p_per(&c), 100 * attend_g2p_wer(&c), dt > 0 ? c.words / dt : 0);
            fflush(stdout);
        }
    }
done:
    attend_model_free(m);
    attend_vocab_free(gv);
    attend_vocab_free(pv);
    attend_g2p_dict_free(d);
    return cli_finish(cmd, rc);
}

/* ===================================================================== bench */

/* CPU seconds of this thread: unlike wall time, not inflated when other
 * processes share the cores. */
static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void bench_usage(FILE *f) {
    fprintf(f,
            "usage: attend g2p bench [--model PATH] [--dict PATH] [--words N] [--split NAME]\n"
            "\n"
            "Pronounces N words of a dictionary part (test) one at a time, batch 1, greedy,\n"
            "with attend_g2p_pronounce (the example's call: no allocation per word), and\n"
            "reports the latency per word (median, 90th percentile, mean) and words/s; then\n"
            "the same words greedily in batches of 64. Run it with OPENBLAS_NUM_THREADS=1\n"
            "for single-threaded numbers. CPU time (this thread's) is reported beside wall time:\n"
            "it is not inflated when other processes share the cores.\n");
}

static int cmd_bench(int argc, char **argv) {
    const char *cmd = "g2p bench";
    cli_parser p;
    cli_init(&p, cmd, argc, argv);
    const char *model = NULL, *dict = NULL, *split = "test";
    int rc = 0, help = 0, n = 2000;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--model")) rc = cli_string(&p, &model);
        else if (cli_is(&p, "--dict")) rc = cli_string(&p, &dict);
        else if (cli_is(&p, "--words")) rc = cli_int(&p, 1, 10000000, &n);
        else if (cli_is(&p, "--split")) rc = cli_string(&p, &split);
        else rc = cli_unknown(&p);
    }
    if (rc) return rc;
    if (help) {
        bench_usage(stdout);
        return cli_finish(cmd, 0);
    }
    int sp = -1;
    for (int k = 0; k < 4; k++)
        if (!strcmp(split, attend_g2p_split_name((attend_g2p_split)k))) sp = k;
    if (sp < 0) return cli_usage_error(cmd, "--split: expected train, dev, test or all, got '%s'", split);
    char mbuf[PATH_MAX + 64], dbuf[PATH_MAX + 64];
    const char *mpath = find_model(cmd, model, mbuf, sizeof mbuf);
    if (!mpath) return 1;
    const char *dpath = find_dict(cmd, dict, dbuf, sizeof dbuf);
    if (!dpath) return 1;
    attend_g2p_dict *d = NULL;
    attend_model *m = NULL, *mb = NULL;
    attend_vocab *gv = NULL, *pv = NULL, *gv2 = NULL, *pv2 = NULL;
    double *lat = NULL, *cpu = NULL;
    if ((rc = read_dict(cmd, dpath, 0, &d))) goto done;
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(d, &in);
    if ((rc = load_g2p(cmd, mpath, 1, in.max_word_len, 0, &m, &gv, &pv))) goto done;
    if ((rc = load_g2p(cmd, mpath, 64, in.max_word_len, 0, &mb, &gv2, &pv2))) goto done;
    lat = malloc((size_t)n * sizeof *lat);
    cpu = malloc((size_t)n * sizeof *cpu);
    if (!lat || !cpu) {
        fprintf(stderr, "attend %s: out of memory\n", cmd);
        rc = 1;
        goto done;
    }
    char out[ATTEND_G2P_MAX_LEN * (ATTEND_MAX_TOKEN_BYTES + 1) + 1];
    int k = 0;
    double total = 0, cpu_total = 0;
    for (int w = 0; w < attend_g2p_dict_words(d) && k < n; w++) {
        const char *word = attend_g2p_dict_word(d, w);
        if (sp != ATTEND_G2P_ALL && (int)attend_g2p_split_of(word, strlen(word)) != sp) continue;
        attend_error err = {0};
        double t0 = cli_now(), c0 = cpu_now();
        if (attend_g2p_pronounce(m, gv, pv, word, strlen(word), out, sizeof out, &err)) {
            rc = cli_lib_fail(cmd, &err);
            goto done;
        }
        cpu[k] = cpu_now() - c0;
        lat[k] = cli_now() - t0;
        cpu_total += cpu[k];
        total += lat[k++];
    }
    if (k == 0) {
        fprintf(stderr, "attend %s: no words in the %s part\n", cmd, split);
        rc = 1;
        goto done;
    }
    qsort(lat, (size_t)k, sizeof *lat, cmp_double);
    qsort(cpu, (size_t)k, sizeof *cpu, cmp_double);
    printf("model: %s (%zu parameters), gemm %s, OPENBLAS_NUM_THREADS=%s\n", mpath, attend_model_param_count(m),
           attend_gemm_backend(), getenv("OPENBLAS_NUM_THREADS") ? getenv("OPENBLAS_NUM_THREADS") : "(unset)");
    printf("batch 1, greedy: %d words, wall latency median %.3f ms, p90 %.3f ms, mean %.3f ms: %.0f words/s\n", k,
           1e3 * lat[k / 2], 1e3 * lat[(int)(0.9 * (k - 1))], 1e3 * total / k, k / total);
    printf("batch 1, greedy: CPU time per word median %.3f ms, p90 %.3f ms, mean %.3f ms: %.0f words per CPU-second\n",
           1e3 * cpu[k / 2], 1e3 * cpu[(int)(0.9 * (k - 1))], 1e3 * cpu_total / k, k / cpu_total);
    attend_g2p_eval_options eo = {0, 0, 64, k};
    attend_g2p_counts c;
    attend_error err = {0};
    double t0 = cli_now(), c0 = cpu_now();
    if (attend_g2p_evaluate(mb, d, (attend_g2p_split)sp, gv2, pv2, &eo, &c, &err)) {
        rc = cli_lib_fail(cmd, &err);
        goto done;
    }
    double dt = cli_now() - t0, dc = cpu_now() - c0;
    printf("batch 64, greedy (with scoring): %ld words in %.3f s wall, %.3f s CPU: %.0f words/s, %.0f words per "
           "CPU-second\n",
           c.words, dt, dc, dt > 0 ? c.words / dt : 0, dc > 0 ? c.words / dc : 0);
done:
    free(lat);
    free(cpu);
    attend_model_free(m);
    attend_model_free(mb);
    attend_vocab_free(gv);
    attend_vocab_free(pv);
    attend_vocab_free(gv2);
    attend_vocab_free(pv2);
    attend_g2p_dict_free(d);
    return cli_finish(cmd, rc);
}

/* ================================================================== dispatch */

int cmd_g2p(int argc, char **argv) {
    if (argc >= 2) {
        const char *sub = argv[1];
        if (!strcmp(sub, "train")) return cmd_train_g2p(argc - 1, argv + 1);
        if (!strcmp(sub, "eval")) return cmd_eval_g2p(argc - 1, argv + 1);
        if (!strcmp(sub, "data")) return cmd_data(argc - 1, argv + 1);
        if (!strcmp(sub, "bench")) return cmd_bench(argc - 1, argv + 1);
    }
    return cmd_say(argc, argv);
}
