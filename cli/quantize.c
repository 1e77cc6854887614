/*
 * quantize.c — `attend quantize MODEL --to int8|f16 --out SMALL`: a model's
 * weight matrices stored as int8 (per-row scales) or fp16 for inference
 * (attend_model_quantize; docs/FORMAT.md, "Quantized model files").
 */
#include <string.h>
#include <sys/stat.h>

#include "attend.h"
#include "cli.h"
#include "outputs.h"

static void quantize_usage(FILE *f) {
    fprintf(f,
            "usage: attend quantize MODEL --to int8|f16 --out PATH\n"
            "\n"
            "Writes MODEL with its weight matrices stored for inference: int8 with one float32\n"
            "scale per output row (w = q * scale, q in [-127,127]: a quarter of the size), or\n"
            "IEEE fp16 (half the size). Embeddings, biases and attention.v stay float32.\n"
            "decode, eval, g2p, align and the library's greedy, beam and scoring read such a\n"
            "file like any model; it cannot be trained or resumed. An fp16 MODEL may go on to\n"
            "int8 (its fp16 values are the master: the shipped G2P model's int8 file is made\n"
            "so). docs/G2P.md gives the accuracy of the shipped G2P model in each form.\n"
            "\n"
            "  --to int8|f16  the storage\n"
            "  --out PATH     the file to write (atomically; never MODEL itself)\n"
            "  --help         this message\n"
            "\n"
            "Prints the sizes of both files. Exit status: 0 ok, 1 the model could not be read,\n"
            "quantized (already quantized but fp16 to int8, non-finite or, for f16, out-of-range weights) or\n"
            "written, 2 bad usage.\n");
}

static int to_from_name(const char *name) {
    if (!strcmp(name, "int8")) return ATTEND_DTYPE_I8;
    if (!strcmp(name, "f16")) return ATTEND_DTYPE_F16;
    return -1;
}

static long file_size(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

int cmd_quantize(int argc, char **argv) {
    cli_set_oom_hint(NULL); /* the options of this command that lower its memory */
    cli_parser p;
    cli_init(&p, "quantize", argc, argv);
    const char *model = NULL, *out = NULL;
    int to = -1, rc = 0;
    while (cli_next(&p)) {
        if (cli_is_help(&p)) {
            quantize_usage(stdout);
            return cli_finish("quantize", 0);
        } else if (cli_is(&p, "--to")) rc = cli_choice(&p, to_from_name, "int8|f16", &to);
        else if (cli_is(&p, "--out")) rc = cli_path(&p, &out);
        else if (cli_positional(&p) && !model) model = p.arg;
        else rc = cli_unknown(&p);
        if (rc) return rc;
    }
    if (!model) return cli_usage_error("quantize", "needs MODEL (see attend quantize --help)");
    if (to < 0) return cli_usage_error("quantize", "needs --to int8|f16");
    if (!out) return cli_usage_error("quantize", "needs --out PATH");
    {
        const attend_path_use uses[] = {{model, "MODEL", 0, 0}, {out, "--out", 1, 0}};
        if (cli_check_outputs("quantize", uses, 2, NULL)) return 1;
    }
    attend_model *m = NULL;
    attend_vocab *sv = NULL, *tv = NULL;
    attend_tokenizer tok;
    if (cli_load_model("quantize", model, 0, 0, 0, &m, &sv, &tv, &tok)) return 1;
    attend_error err = {0};
    if (attend_model_quantize(m, (attend_dtype)to, &err) || attend_model_save(m, out, sv, tv, tok, &err))
        rc = cli_lib_fail("quantize", &err);
    attend_model_free(m);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
    if (rc) return rc;
    printf("%s: %s, %ld bytes (%s: %ld bytes)\n", cli_vis(out), to == ATTEND_DTYPE_I8 ? "int8" : "f16", file_size(out), cli_vis(model),
           file_size(model));
    return cli_finish("quantize", 0);
}
