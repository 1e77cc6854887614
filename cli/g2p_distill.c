/*
 * g2p_distill.c — `attend g2p distill`: the training data of a distilled
 * student (attend_g2p_distill): a teacher model or ensemble pronounces the
 * train words of a dictionary, and the dictionary is printed again with the
 * teacher's pronunciations for those words (alone, or after the references).
 * tools/g2p_distill.sh runs it; docs/G2P.md, "The distilled model".
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "cli.h"
#include "g2p_files.h"

static void distill_usage(FILE *f) {
    fprintf(f,
            "usage: attend g2p distill --model PATH[,PATH...] [--dict PATH] [--targets teacher|both]\n"
            "\n"
            "Sequence-level knowledge distillation: the teacher (one model or an ensemble,\n"
            "greedy, in batches of 64) pronounces every word of the train part of the\n"
            "dictionary, and the dictionary is printed on standard output with, for those\n"
            "words, the teacher's pronunciation alone (teacher) or after the word's own\n"
            "pronunciations when it differs from all of them (both). Dev and test words keep\n"
            "their pronunciations, so `attend g2p train --dict` on the output trains the\n"
            "student on the teacher's words and still chooses it on the real dev words.\n"
            "A teacher whose phonemes carry stress reads the dictionary with stress. The\n"
            "counts (words, agreeing with a reference, differing, unusable) go to stderr.\n"
            "\n"
            "  --model LIST       the teacher: a model file, or files separated by commas\n"
            "  --dict PATH        the dictionary (default: $ATTEND_G2P_DICT, else\n"
            "                     data/g2p/" G2P_DICT_NAME ")\n"
            "  --targets T        teacher or both (both)\n"
            "  --split NAME       the part the teacher pronounces: train, dev, test, all (train)\n"
            "  --skip-malformed   skip odd dictionary lines\n"
            "  --help             this message\n");
}

int cmd_g2p_distill(int argc, char **argv) {
    const char *cmd = "g2p distill";
    cli_parser p;
    cli_init(&p, cmd, argc, argv);
    const char *model = NULL, *dict = NULL, *targets = "both", *split = "train";
    int rc = 0, help = 0, skip = 0;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--model")) rc = cli_string(&p, &model);
        else if (cli_is(&p, "--dict")) rc = cli_string(&p, &dict);
        else if (cli_is(&p, "--targets")) rc = cli_string(&p, &targets);
        else if (cli_is(&p, "--split")) rc = cli_string(&p, &split);
        else if (cli_is(&p, "--skip-malformed")) rc = cli_flag(&p, &skip);
        else rc = cli_unknown(&p);
    }
    if (rc) return rc;
    if (help) {
        distill_usage(stdout);
        return cli_finish(cmd, 0);
    }
    if (!model) return cli_usage_error(cmd, "--model PATH[,PATH...] (the teacher) is required");
    attend_g2p_targets tg;
    if (!strcmp(targets, "teacher")) tg = ATTEND_G2P_TARGETS_TEACHER;
    else if (!strcmp(targets, "both")) tg = ATTEND_G2P_TARGETS_BOTH;
    else return cli_usage_error(cmd, "--targets: expected teacher or both, got '%s'", targets);
    int sp = -1;
    for (int k = 0; k < 4; k++)
        if (!strcmp(split, attend_g2p_split_name((attend_g2p_split)k))) sp = k;
    if (sp < 0) return cli_usage_error(cmd, "--split: expected train, dev, test or all, got '%s'", split);
    g2p_models e;
    if ((rc = g2p_models_open(cmd, model, &e))) return rc;
    char dbuf[PATH_MAX + 64];
    const char *dpath = g2p_find_dict(cmd, dict, dbuf, sizeof dbuf);
    attend_g2p_dict *d = NULL, *nd = NULL;
    if (!dpath) {
        rc = 1;
        goto done;
    }
    if ((rc = g2p_read_dict(cmd, dpath, skip, attend_g2p_vocab_has_stress(e.pv), &d))) goto done;
    attend_g2p_dict_info in;
    attend_g2p_dict_get_info(d, &in);
    if ((rc = g2p_models_load(cmd, &e, 64, in.max_word_len, 0))) goto done;
    attend_error err = {0};
    attend_g2p_distill_info di;
    double t0 = cli_now();
    if (attend_g2p_distill(e.ms, e.M, d, (attend_g2p_split)sp, e.gv, e.pv, tg, &nd, &di, &err)) {
        rc = cli_lib_fail(cmd, &err);
        goto done;
    }
    double dt = cli_now() - t0;
    for (int w = 0; w < attend_g2p_dict_words(nd); w++) {
        const char *word = attend_g2p_dict_word(nd, w);
        for (int k = 0; k < attend_g2p_dict_prons(nd, w); k++) {
            if (k) printf("%s(%d) %s\n", word, k + 1, attend_g2p_dict_pron(nd, w, k));
            else printf("%s %s\n", word, attend_g2p_dict_pron(nd, w, k));
        }
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "attend %s: error writing standard output\n", cmd);
        rc = 1;
        goto done;
    }
    fprintf(stderr,
            "attend %s: %s words: %ld pronounced by the teacher in %.1f s: %ld equal a reference (%.2f%%), %ld "
            "differ, %ld unusable (references kept); targets %s\n",
            cmd, split, di.words, dt, di.agree, di.words ? 100.0 * (double)di.agree / (double)di.words : 0.0,
            di.differ, di.failed, targets);
done:
    g2p_models_free(&e);
    attend_g2p_dict_free(d);
    attend_g2p_dict_free(nd);
    return cli_finish(cmd, rc);
}
