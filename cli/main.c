/* main.c — `attend`: argument dispatch only; the work lives in the library. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
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
            "  compare BASE MODEL...  attention and outputs of models against a base model\n"
            "                         (seed variance, adversaries, uniform, frozen attention)\n"
            "  trial MODEL TEXT       attention on trial: does it agree with gradient and\n"
            "                         leave-one-out importance? (Jain & Wallace 2019)\n"
            "  m2m TSV                align a dictionary's pairs (many-to-many EM) for guided\n"
            "                         alignment and for scoring attention\n"
            "  sweep                  accuracy against source length, with and without attention\n"
            "  quantize MODEL         store a model's weights as int8 or fp16 for inference\n"
            "  readout                an encoder read out per position on y_i = x_{i-k}: path\n"
            "                         length against accuracy, time and memory (Table 8.1)\n"
            "  explain [NAME|--list]  reproduce the seeds' worked examples as tables\n"
            "  version                print the version and the GEMM backend\n"
            "  help                   this message\n"
            "\n"
            "`attend <command> --help` describes a command.\n"
            "\n"
            "Every command takes --threads N|auto: the library's threads. auto (the default)\n"
            "is every core this process may run on; a worker that another process keeps off\n"
            "its core leaves its share to the threads that run (docs/PERFORMANCE.md,\n"
            "\"Threads\"). ATTEND_NUM_THREADS (else OMP_NUM_THREADS), when set, replaces auto.\n");
}

/* Takes "--threads N|auto" (or --threads=...) out of argv wherever it is and
 * sets the library's thread count; 0, or 2 after a message. */
static int take_threads(int *argc, char **argv) {
    const char *want = NULL;
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--")) { /* the rest are operands */
            for (; i < *argc; i++) argv[out++] = argv[i];
            break;
        }
        if (!strcmp(argv[i], "--threads")) {
            if (i + 1 >= *argc) return cli_usage_error("--threads", "needs a value (a count, or auto)");
            want = argv[++i];
        } else if (!strncmp(argv[i], "--threads=", 10)) {
            want = argv[i] + 10;
        } else {
            argv[out++] = argv[i];
        }
    }
    *argc = out;
    argv[out] = NULL;
    long n = 0;
    if (want && strcmp(want, "auto") != 0 && cli_parse_long(want, 1, 1024, &n) != 0)
        return cli_usage_error("--threads", "'%s' is not a count from 1 to 1024 or auto", want);
    attend_error err;
    if (n > 0 && attend_set_threads((int)n, &err) != ATTEND_OK) return cli_usage_error("--threads", "%s", err.msg);
    return 0;
}

static int dispatch(int argc, char **argv) {
    if (take_threads(&argc, argv) != 0) return 2;
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
    if (!strcmp(cmd, "trial")) return cmd_trial(argc - 1, argv + 1);
    if (!strcmp(cmd, "compare")) return cmd_compare(argc - 1, argv + 1);
    if (!strcmp(cmd, "m2m")) return cmd_m2m(argc - 1, argv + 1);
    if (!strcmp(cmd, "quantize")) return cmd_quantize(argc - 1, argv + 1);
    if (!strcmp(cmd, "readout")) return cmd_readout(argc - 1, argv + 1);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("attend %s (gemm: %s, isa: %s, threads: %d)\n", attend_version(), attend_gemm_info(), attend_isa(),
               attend_threads());
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "attend: unknown command '%s'\n", cli_vis(cmd));
    usage(stderr);
    return 2;
}

int main(int argc, char **argv) {
    /* a buffer larger than any --help: a write error then surfaces at the final
     * flush with its errno, not in an earlier implicit flush */
    static char outbuf[1 << 16];
    if (!isatty(STDOUT_FILENO)) setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    int rc = dispatch(argc, argv);
    /* every command, --help and version included: output that did not reach
     * stdout (a full disk, /dev/full, a closed pipe) is a failure. A command
     * that failed already (1) has said why; a usage error stays 2. */
    errno = 0;
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
        fprintf(stderr, "attend: error writing the output: %s\n", errno ? strerror(errno) : "write error");
        rc = 1;
    }
    return rc;
}
