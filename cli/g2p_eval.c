/*
 * g2p_eval.c — `attend g2p data` (parse and split a dictionary), `g2p eval`
 * (PER/WER on dev and test, greedy and beam) and `g2p bench` (batch-1
 * latency). docs/G2P.md describes them.
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
#include "g2p_files.h"
#include "outputs.h" /* issue 17: output checks */


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

int cmd_g2p_data(int argc, char **argv) {
    cli_set_oom_hint(NULL); /* the options of this command that lower its memory */
    cli_parser p;
    cli_init(&p, "g2p data", argc, argv);
    const char *dict = NULL, *out = NULL;
    int rc = 0, help = 0, skip = 0, stress = 0;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--dict")) rc = cli_path(&p, &dict);
        else if (cli_is(&p, "--out")) rc = cli_path(&p, &out);
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
    const char *path = g2p_find_dict("g2p data", dict, buf, sizeof buf);
    if (!path) return 1;
    attend_g2p_dict *d = NULL;
    attend_error err = {0};
    attend_g2p_options o = {stress, skip};
    if (attend_g2p_dict_read(&d, path, &o, &err)) return cli_lib_fail("g2p data", &err);
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(d, &in);
    printf("dictionary: %s\n", cli_vis(path));
    printf("lines %d: %d pronunciations of %d words, %d comment, %d blank, %d skipped, %d duplicate\n", in.lines,
           in.entries, in.words, in.comments, in.blank, in.skipped, in.duplicates);
    if (in.skipped) printf("first skipped: %s\n", cli_vis(in.first_skipped));
    printf("longest word %d characters, longest pronunciation %d phonemes; stress %s\n", in.max_word_len,
           in.max_pron_len, stress ? "kept" : "stripped");
    /* the three parts through the one atomic writer: all written, or none changed */
    attend_outfile *f[3] = {NULL, NULL, NULL};
    char fp[3][PATH_MAX];
    if (out) {
        mkdir(out, 0777);
        for (int s = 0; s < 3 && rc == 0; s++) {
            snprintf(fp[s], sizeof fp[s], "%s/%s.dict", out, attend_g2p_split_name((attend_g2p_split)s));
            if (attend_outfile_open(&f[s], fp[s], ATTEND_OUTPUT_ALLOW_SPECIAL, &err)) rc = cli_lib_fail("g2p data", &err);
        }
    }
    long words[3] = {0, 0, 0}, prons[3] = {0, 0, 0};
    for (int w = 0; rc == 0 && w < attend_g2p_dict_words(d); w++) {
        const char *word = attend_g2p_dict_word(d, w);
        int s = (int)attend_g2p_split_of(word, strlen(word));
        words[s]++;
        prons[s] += attend_g2p_dict_prons(d, w);
        for (int k = 0; f[s] && rc == 0 && k < attend_g2p_dict_prons(d, w); k++) {
            char line[4096];
            int n = k ? snprintf(line, sizeof line, "%s(%d) %s\n", word, k + 1, attend_g2p_dict_pron(d, w, k))
                      : snprintf(line, sizeof line, "%s %s\n", word, attend_g2p_dict_pron(d, w, k));
            if (n < 0 || n >= (int)sizeof line) rc = cli_oom("g2p data", "a dictionary line over 4 KiB");
            else if (attend_outfile_write(f[s], line, (size_t)n, &err)) rc = cli_lib_fail("g2p data", &err);
        }
    }
    for (int s = 0; s < 3; s++)
        if (rc == 0 && f[s]) {
            attend_status st = attend_outfile_commit(f[s], &err);
            f[s] = NULL;
            if (st) rc = cli_lib_fail("g2p data", &err);
        }
    for (int s = 0; s < 3; s++) attend_outfile_abort(f[s]); /* after a failure: the temporaries go */
    for (int s = 0; s < 3 && rc == 0; s++)
        printf("%-5s %6ld words (%4.1f%%) %6ld pronunciations\n", attend_g2p_split_name((attend_g2p_split)s), words[s],
               in.words ? 100.0 * (double)words[s] / in.words : 0, prons[s]);
    if (out && rc == 0) printf("written: %s/{train,dev,test}.dict\n", cli_vis(out));
    attend_g2p_dict_free(d);
    return cli_finish("g2p data", rc);
}

/* ====================================================================== eval */

static void eval_usage(FILE *f) {
    fprintf(f,
            "usage: attend g2p eval [--model PATH] [--dict PATH] [options]\n"
            "\n"
            "Phoneme error rate (edit distance to the closest reference / its length) and\n"
            "word error rate (the output equals none of the word's pronunciations) of a G2P\n"
            "model on parts of a dictionary's split, with greedy decoding and beam search.\n"
            "A model trained with --keep-stress reads the dictionary with its stress digits\n"
            "and is scored twice: with stress, and ignoring it (AH0 = AH1: comparable with a\n"
            "stress-free model).\n"
            "\n"
            "  --model PATH       the model (default: the shipped one); PATH,PATH,... is an\n"
            "                     ensemble (the mean of the models' log-probabilities)\n"
            "  --dict PATH        the dictionary (default: data/g2p/" G2P_DICT_NAME ")\n"
            "  --split LIST       comma-separated parts: train, dev, test, all (dev,test)\n"
            "  --beam K           beam width of the beam rows (%d; 0 = greedy only)\n"
            "  --alpha A          beam length normalisation (0)\n"
            "  --coverage-penalty B  beam rows: Wu et al.'s coverage penalty (0)\n"
            "  --max-words N      at most N words per part (0 = all)\n"
            "  --batch N          words per greedy batch, 1..64 (64); a quantized model reads\n"
            "                     its int8/fp16 weights in products of at most 16 rows, its\n"
            "                     dequantized float copy in larger ones (same function)\n"
            "  --skip-malformed   skip odd dictionary lines\n"
            "  --help             this message\n",
            G2P_BEAM_DEFAULT);
}

/* 1 when some pronunciation of d has a stress digit (read with keep_stress). */
static int dict_has_stress(const attend_g2p_dict *d) {
    for (int w = 0; w < attend_g2p_dict_words(d); w++)
        for (int k = 0; k < attend_g2p_dict_prons(d, w); k++)
            if (strpbrk(attend_g2p_dict_pron(d, w, k), "0123456789")) return 1;
    return 0;
}

int cmd_g2p_eval(int argc, char **argv) {
    cli_set_oom_hint("lower --batch or --beam"); /* the options of this command that lower its memory */
    const char *cmd = "g2p eval";
    cli_parser p;
    cli_init(&p, cmd, argc, argv);
    const char *model = NULL, *dict = NULL, *splits = "dev,test";
    int rc = 0, help = 0, beam = G2P_BEAM_DEFAULT, max_words = 0, skip = 0, batch = 64;
    double alpha = 0, cov_pen = 0;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--model")) rc = cli_path(&p, &model);
        else if (cli_is(&p, "--dict")) rc = cli_path(&p, &dict);
        else if (cli_is(&p, "--split")) rc = cli_string(&p, &splits);
        else if (cli_is(&p, "--beam")) rc = cli_int(&p, 0, 64, &beam);
        else if (cli_is(&p, "--alpha")) rc = cli_double(&p, 0, 100, &alpha);
        else if (cli_is(&p, "--coverage-penalty")) rc = cli_double(&p, 0, 1e6, &cov_pen);
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
    g2p_models e;
    if ((rc = g2p_models_open(cmd, model, &e))) return rc;
    if (e.M > 1 && cov_pen > 0) {
        g2p_models_free(&e);
        return cli_usage_error(cmd, "--coverage-penalty with an ensemble: one model only");
    }
    char dbuf[PATH_MAX + 64];
    const char *dpath = g2p_find_dict(cmd, dict, dbuf, sizeof dbuf);
    attend_g2p_dict *d = NULL;
    /* a model whose phonemes carry stress digits is scored against the
     * dictionary's stressed pronunciations, and once more ignoring stress */
    int stress = attend_g2p_vocab_has_stress(e.pv);
    if (!dpath) {
        rc = 1;
        goto done;
    }
    if ((rc = g2p_read_dict(cmd, dpath, skip, stress, &d))) goto done;
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(d, &in);
    if (stress && !dict_has_stress(d)) {
        cli_error(cmd, "the model's phonemes carry stress digits and %s has none: give a dictionary "
                        "with stress (tools/get_cmudict.sh --stress)", dpath);
        rc = 1;
        goto done;
    }
    int B = 64 > beam ? 64 : beam;
    if ((rc = g2p_models_load(cmd, &e, B, in.max_word_len, 0))) goto done;
    size_t params = 0;
    for (int k = 0; k < e.M; k++) params += attend_model_param_count(e.ms[k]);
    if (e.M == 1) printf("model: %s (%zu parameters)\n", cli_vis(e.paths[0]), params);
    else {
        printf("ensemble of %d models (%zu parameters):", e.M, params);
        for (int k = 0; k < e.M; k++) printf(" %s", cli_vis(e.paths[k]));
        printf("\n");
    }
    printf("dictionary: %s%s\n", cli_vis(dpath), stress ? " (stress kept: the model's phonemes carry it)" : "");
    printf("%-6s %-8s %7s %8s %8s %9s%s\n", "part", "decoding", "words", "PER%", "WER%", "words/s",
           stress ? "  stress" : "");
    for (int s = 0; s < 4 && rc == 0; s++) {
        if (!want[s]) continue;
        for (int b = 0; b < 2 && rc == 0; b++) {
            if (b == 1 && beam < 2) continue;
            for (int ig = 0; ig <= stress && rc == 0; ig++) {
                attend_g2p_eval_options eo = {b ? beam : 0, alpha, batch, max_words, cov_pen, ig};
                attend_g2p_counts c;
                attend_error err = {0};
                double t0 = cli_now();
                if (attend_g2p_evaluate_ensemble(e.ms, e.M, d, (attend_g2p_split)s, e.gv, e.pv, &eo, &c, &err)) {
                    rc = cli_lib_fail(cmd, &err);
                    break;
                }
                double dt = cli_now() - t0;
                char dec[16];
                snprintf(dec, sizeof dec, b ? "beam %d" : "greedy", beam);
                char per[16] = "n/a", wer[16] = "n/a"; /* no words: no rate, not 0% */
                if (c.words > 0) {
                    snprintf(per, sizeof per, "%.2f", 100 * attend_g2p_per(&c));
                    snprintf(wer, sizeof wer, "%.2f", 100 * attend_g2p_wer(&c));
                }
                printf("%-6s %-8s %7ld %8s %8s %9.0f%s\n", attend_g2p_split_name((attend_g2p_split)s), dec, c.words,
                       per, wer, dt > 0 ? c.words / dt : 0, !stress ? "" : ig ? "  ignored" : "  scored");
                fflush(stdout);
            }
        }
    }
done:
    g2p_models_free(&e);
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
            "the same words greedily in batches of 64. Run it with --threads 1 for\n"
            "single-threaded numbers. CPU time (this thread's) is reported beside wall time:\n"
            "it is not inflated when other processes share the cores.\n");
}

int cmd_g2p_bench(int argc, char **argv) {
    cli_set_oom_hint(NULL); /* the options of this command that lower its memory */
    const char *cmd = "g2p bench";
    cli_parser p;
    cli_init(&p, cmd, argc, argv);
    const char *model = NULL, *dict = NULL, *split = "test";
    int rc = 0, help = 0, n = 2000;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--model")) rc = cli_path(&p, &model);
        else if (cli_is(&p, "--dict")) rc = cli_path(&p, &dict);
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
    const char *mpath = g2p_find_model(cmd, model, mbuf, sizeof mbuf);
    if (!mpath) return 1;
    const char *dpath = g2p_find_dict(cmd, dict, dbuf, sizeof dbuf);
    if (!dpath) return 1;
    attend_g2p_dict *d = NULL;
    attend_model *m = NULL, *mb = NULL;
    attend_vocab *gv = NULL, *pv = NULL, *gv2 = NULL, *pv2 = NULL;
    double *lat = NULL, *cpu = NULL;
    if ((rc = g2p_read_dict(cmd, dpath, 0, 0, &d))) goto done;
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(d, &in);
    if ((rc = g2p_load_model(cmd, mpath, 1, in.max_word_len, 0, &m, &gv, &pv))) goto done;
    if ((rc = g2p_load_model(cmd, mpath, 64, in.max_word_len, 0, &mb, &gv2, &pv2))) goto done;
    lat = malloc((size_t)n * sizeof *lat);
    cpu = malloc((size_t)n * sizeof *cpu);
    if (!lat || !cpu) {
        cli_oom(cmd, "the timings");
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
        cli_error(cmd, "no words in the %s part", split);
        rc = 1;
        goto done;
    }
    qsort(lat, (size_t)k, sizeof *lat, cmp_double);
    qsort(cpu, (size_t)k, sizeof *cpu, cmp_double);
    printf("model: %s (%zu parameters), gemm %s, isa %s, threads %d\n", cli_vis(mpath), attend_model_param_count(m),
           attend_gemm_info(), attend_isa(), attend_threads());
    printf("batch 1, greedy: %d words, wall latency median %.3f ms, p90 %.3f ms, mean %.3f ms: %.0f words/s\n", k,
           1e3 * lat[k / 2], 1e3 * lat[(int)(0.9 * (k - 1))], 1e3 * total / k, k / total);
    printf("batch 1, greedy: CPU time per word median %.3f ms, p90 %.3f ms, mean %.3f ms: %.0f words per CPU-second\n",
           1e3 * cpu[k / 2], 1e3 * cpu[(int)(0.9 * (k - 1))], 1e3 * cpu_total / k, k / cpu_total);
    attend_g2p_eval_options eo = {0, 0, 64, k, 0, 0};
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

