/* main.c — `attend`: argument dispatch only; the work lives in the library. */
#include <stdio.h>
#include <string.h>

#include "attend.h"
#include "cli.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: attend <command> [options]\n"
            "\n"
            "commands:\n"
            "  demo                   train a string-reversal model and show where it attends\n"
            "  g2p WORD...            pronounce English words (CMUdict G2P model; g2p train|eval)\n"
            "  train                  train a model on a built-in task or TSV pairs\n"
            "  decode MODEL [FILE]    decode lines with a model (greedy or beam), optionally\n"
            "                         printing alignments as heatmaps\n"
            "  eval MODEL             accuracy and loss of a model on TSV pairs or a task\n"
            "  align MODEL TEXT       where the model looked for each output token (text, SVG, HTML)\n"
            "  intervene MODEL TEXT   hide states, delete tokens, overwrite weights: what changes?\n"
            "  sweep                  accuracy against source length, with and without attention\n"
            "  explain [NAME|--list]  reproduce the seeds' worked examples as tables\n"
            "  version                print the version and the GEMM backend\n"
            "  help                   this message\n"
            "\n"
            "`attend <command> --help` describes a command.\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "explain")) return cmd_explain(argc - 1, argv + 1);
    if (!strcmp(cmd, "train")) return cmd_train(argc - 1, argv + 1);
    if (!strcmp(cmd, "decode")) return cmd_decode(argc - 1, argv + 1);
    if (!strcmp(cmd, "eval")) return cmd_eval(argc - 1, argv + 1);
    if (!strcmp(cmd, "demo")) return cmd_demo(argc - 1, argv + 1);
    if (!strcmp(cmd, "g2p")) return cmd_g2p(argc - 1, argv + 1);
    if (!strcmp(cmd, "sweep")) return cmd_sweep(argc - 1, argv + 1);
    if (!strcmp(cmd, "align")) return cmd_align(argc - 1, argv + 1);
    if (!strcmp(cmd, "intervene")) return cmd_intervene(argc - 1, argv + 1);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("attend %s (gemm: %s, isa: %s)\n", attend_version(), attend_gemm_backend(), attend_isa());
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "attend: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
