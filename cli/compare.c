/*
 * compare.c — `attend compare BASE MODEL... --data TSV`: each MODEL against
 * the base, teacher-forced along the TSV's targets (attend_model_compare):
 * the Jensen–Shannon divergence of their attention and the total variation
 * of their output distributions per step, and both models' cross-entropy and
 * token accuracy. Wiegreffe & Pinter 2019's seed variance (MODELs trained
 * from other seeds), their adversary's report (an `attend train --adversarial`
 * model), the uniform baseline (--uniform-attention), and with --frozen the
 * diagnostic transfer (an `attend train --frozen-attention` model run with
 * the base's attention).
 */
#define _POSIX_C_SOURCE 200809L /* PATH_MAX (g2p_files.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "cli.h"
#include "ensemble.h"
#include "g2p_files.h"

#define COMPARE_MAX 16

static void compare_usage(FILE *f) {
    fprintf(f,
            "usage: attend compare BASE MODEL [MODEL...] (--data TSV | --dict PATH) [--frozen]\n"
            "                      [--limit N] [--batch N] [--spaced] [--jsonl PATH]\n"
            "\n"
            "Each MODEL against the base model BASE (Wiegreffe & Pinter 2019, \"Attention is not\n"
            "not Explanation\"), teacher-forced along the targets of TSV, per output step:\n"
            "  JSD  the Jensen-Shannon divergence (nats, at most ln 2 = 0.693) between the two\n"
            "       models' attention rows\n"
            "  TVD  the total variation distance between their output distributions\n"
            "with each model's cross-entropy and teacher-forced token accuracy. Models trained\n"
            "from other seeds give the seed variance; an `attend train --adversarial` model the\n"
            "JSD its adversary reached and the TVD it paid; a --uniform-attention model the\n"
            "uniform baseline.\n"
            "\n"
            "  --data TSV     the pairs (source TAB target per line)\n"
            "  --dict PATH    or the dev words of a G2P dictionary (CMUdict format; the split of\n"
            "                 `attend g2p data`): one pair per pronunciation, letters to phonemes\n"
            "                 (G2P models, `attend g2p train`)\n"
            "  --frozen       run each MODEL with the base's attention in place of its own (an\n"
            "                 `attend train --frozen-attention --reference BASE` model: the\n"
            "                 diagnostic transfer; its JSD is 0)\n"
            "  --limit N      at most N pairs, from the top (all)\n"
            "  --batch N      pairs per pass (32)\n"
            "  --spaced       the tokens of TSV are separated by spaces on both sides\n"
            "  --jsonl PATH   also one JSON object per MODEL\n"
            "  --help         this message\n"
            "\n"
            "The models must share the base's vocabularies and tokenizer (bahdanau or luong\n"
            "decoders, not copy). Exit status: 0 ok, 1 a model or the data could not be used,\n"
            "2 bad usage.\n");
}

typedef struct {
    attend_model *m;
    attend_vocab *sv, *tv;
    attend_tokenizer tok;
} loaded;

static void unload(loaded *l) {
    attend_model_free(l->m);
    attend_vocab_free(l->sv);
    attend_vocab_free(l->tv);
    memset(l, 0, sizeof *l);
}

static int load(const char *path, int batch, int S, int T, loaded *l) {
    return cli_load_model("compare", path, batch, S, T, &l->m, &l->sv, &l->tv, &l->tok);
}

static cli_member member(const char *path, const loaded *l) {
    cli_member c = {path, *attend_model_get_config(l->m), l->sv, l->tv, l->tok};
    return c;
}

int cmd_compare(int argc, char **argv) {
    cli_parser p;
    cli_init(&p, "compare", argc, argv);
    const char *paths[COMPARE_MAX + 1], *data = NULL, *dict = NULL, *jsonl = NULL;
    int np = 0, frozen = 0, limit = 0, batch = 32, spaced = 0, help = 0, rc = 0;
    while (rc == 0 && cli_next(&p)) {
        if (cli_is_help(&p)) help = 1;
        else if (cli_is(&p, "--data")) rc = cli_string(&p, &data);
        else if (cli_is(&p, "--dict")) rc = cli_path(&p, &dict);
        else if (cli_is(&p, "--jsonl")) rc = cli_string(&p, &jsonl);
        else if (cli_is(&p, "--frozen")) rc = cli_flag(&p, &frozen);
        else if (cli_is(&p, "--spaced")) rc = cli_flag(&p, &spaced);
        else if (cli_is(&p, "--limit")) rc = cli_int(&p, 1, 1000000000, &limit);
        else if (cli_is(&p, "--batch")) rc = cli_int(&p, 1, 4096, &batch);
        else if (cli_positional(&p)) {
            if (np == COMPARE_MAX + 1) rc = cli_usage_error("compare", "at most %d models besides the base", COMPARE_MAX);
            else paths[np++] = p.arg;
        } else rc = cli_unknown(&p);
    }
    if (rc) return rc;
    if (help) {
        compare_usage(stdout);
        return cli_finish("compare", 0);
    }
    if (np < 2) return cli_usage_error("compare", "give the base model and at least one model to compare with it");
    if (!data && !dict) return cli_usage_error("compare", "give the pairs: --data TSV or --dict PATH");
    if (data && dict) return cli_usage_error("compare", "--data and --dict exclude each other: give one");
    if (dict && spaced) return cli_usage_error("compare", "--spaced applies to --data (a dictionary is always letters "
                                                          "to phonemes)");

    loaded base, other;
    memset(&base, 0, sizeof base);
    memset(&other, 0, sizeof other);
    attend_dataset *ds = NULL;
    FILE *fj = NULL;
    attend_error err = {0};
    double jsd_sum = 0, tvd_sum = 0;
    /* the data in the base's vocabulary, then every model sized for it */
    if ((rc = load(paths[0], 0, 0, 0, &base))) goto done;
    if (dict) { /* the dev words, in the base's letters and phonemes (unseen ones: <unk>) */
        attend_g2p_dict *gd = NULL;
        if ((rc = g2p_read_dict("compare", dict, 0, attend_g2p_vocab_has_stress(base.tv), &gd))) goto done;
        if (attend_g2p_dataset(&ds, gd, ATTEND_G2P_DEV, base.sv, base.tv, 0, &err)) {
            attend_g2p_dict_free(gd);
            rc = cli_lib_fail("compare", &err);
            goto done;
        }
        attend_g2p_dict_free(gd);
    } else if ((rc = cli_read_tsv("compare", &ds, data, base.sv, base.tv, 0, spaced ? ATTEND_TOKENIZE_SPACE : base.tok,
                                  0)))
        goto done;
    if (attend_dataset_size(ds) == 0) {
        fprintf(stderr, "attend compare: %s has no %s\n", dict ? dict : data, dict ? "dev words" : "pairs");
        rc = 1;
        goto done;
    }
    int S = attend_dataset_max_src_len(ds), T = attend_dataset_max_tgt_len(ds);
    unload(&base);
    if ((rc = load(paths[0], batch, S, T, &base))) goto done;
    if (jsonl && !(fj = fopen(jsonl, "w"))) {
        fprintf(stderr, "attend compare: cannot write %s\n", jsonl);
        rc = 1;
        goto done;
    }
    if (dict) printf("base %s, data %s (dev words: %s pairs)\n", paths[0], dict, limit ? "the first" : "all");
    else printf("base %s, data %s (%s pairs)\n", paths[0], data, limit ? "the first" : "all");
    for (int i = 1; i < np; i++) {
        if ((rc = load(paths[i], batch, S, T, &other))) goto done;
        cli_member a = member(paths[0], &base), b = member(paths[i], &other);
        if ((rc = cli_ensemble_check("compare", &a, &b, i + 1))) goto done;
        attend_compare_stats cs;
        if (attend_model_compare(other.m, base.m, ds, batch, limit, frozen, &cs, &err)) {
            rc = cli_lib_fail("compare", &err);
            goto done;
        }
        printf("%s%s: pairs %d steps %d  JSD %.4f sd %.4f max %.4f  TVD %.4f sd %.4f max %.4f  loss %.4f (base "
               "%.4f)  tf-token %.4f (base %.4f)\n",
               paths[i], frozen ? " (base's attention)" : "", cs.pairs, cs.steps, cs.jsd_mean, cs.jsd_sd, cs.jsd_max,
               cs.tvd_mean, cs.tvd_sd, cs.tvd_max, cs.loss_a, cs.loss_b, cs.acc_a, cs.acc_b);
        if (fj)
            fprintf(fj,
                    "{\"model\":\"%s\",\"base\":\"%s\",\"frozen\":%d,\"pairs\":%d,\"steps\":%d,\"jsd\":%.6f,"
                    "\"jsd_sd\":%.6f,\"jsd_max\":%.6f,\"tvd\":%.6f,\"tvd_sd\":%.6f,\"tvd_max\":%.6f,\"loss\":%.6f,"
                    "\"loss_base\":%.6f,\"acc\":%.6f,\"acc_base\":%.6f}\n",
                    paths[i], paths[0], frozen, cs.pairs, cs.steps, cs.jsd_mean, cs.jsd_sd, cs.jsd_max, cs.tvd_mean,
                    cs.tvd_sd, cs.tvd_max, cs.loss_a, cs.loss_b, cs.acc_a, cs.acc_b);
        jsd_sum += cs.jsd_mean;
        tvd_sum += cs.tvd_mean;
        unload(&other);
    }
    if (np > 2) printf("mean over %d models: JSD %.4f  TVD %.4f\n", np - 1, jsd_sum / (np - 1), tvd_sum / (np - 1));
done:
    if (fj && fclose(fj) && !rc) {
        fprintf(stderr, "attend compare: error writing %s\n", jsonl);
        rc = 1;
    }
    unload(&base);
    unload(&other);
    attend_dataset_free(ds);
    return cli_finish("compare", rc);
}
