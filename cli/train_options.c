/*
 * train_options.c — --dropout and --label-smoothing of `attend train` and
 * `attend g2p train` (train_options.h).
 */
#include "train_options.h"

/* A value in [0, 1): 1 itself is a usage error (dropout 1 drops everything,
 * smoothing 1 leaves no target). */
static int unit_open(cli_parser *p, double *out) {
    const char *s = NULL;
    if (cli_string(p, &s)) return 2;
    double v;
    if (cli_parse_double(s, 0, 1, &v) || !(v < 1))
        return cli_usage_error(p->cmd, "%s: expected a number in [0, 1), got '%s'", p->opt, s);
    *out = v;
    return 0;
}

int cli_train_option(cli_parser *p, attend_train_options *o, int *rc) {
    if (cli_is(p, "--dropout")) *rc = unit_open(p, &o->dropout);
    else if (cli_is(p, "--label-smoothing")) *rc = unit_open(p, &o->label_smoothing);
    else return 0;
    return 1;
}

void cli_train_options_usage(FILE *f) {
    fprintf(f, "regularisation (training only; evaluation and decoding never drop or smooth):\n"
               "  --dropout P          inverted dropout in [0, 1) on the source and decoder-input\n"
               "                       embeddings, between encoder layers and on the output features;\n"
               "                       the masks follow from --seed and the step (0: off)\n"
               "  --label-smoothing E  label smoothing in [0, 1), as PyTorch's cross_entropy(\n"
               "                       label_smoothing=E); the training loss shown is the smoothed one,\n"
               "                       the dev loss plain cross-entropy (0: off)\n");
}

int cli_train_options_set(const char *cmd, attend_trainer *tr, const attend_train_options *o) {
    attend_error err = {0};
    if (attend_trainer_set_options(tr, o, &err)) return cli_lib_fail(cmd, &err);
    return 0;
}

void cli_train_options_print(FILE *f, const attend_train_options *o) {
    if (o->dropout > 0) fprintf(f, ", dropout %g", o->dropout);
    if (o->label_smoothing > 0) fprintf(f, ", label smoothing %g", o->label_smoothing);
    if (o->sampling_prob > 0) fprintf(f, ", scheduled sampling %g (ramp %ld)", o->sampling_prob, o->sampling_ramp);
    if (o->guided_alignment > 0) fprintf(f, ", guided alignment %g", o->guided_alignment);
}
