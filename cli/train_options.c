/*
 * train_options.c — --dropout and --label-smoothing of `attend train` and
 * `attend g2p train` (train_options.h; their definitions are cli/options.c's).
 */
#include "train_options.h"
#include "options.h"

int cli_train_option(cli_parser *p, attend_train_options *o, int *rc) {
    return cli_opt(p, "--dropout", &o->dropout, rc) || cli_opt(p, "--label-smoothing", &o->label_smoothing, rc);
}

void cli_train_options_usage(FILE *f) {
    fprintf(f, "regularisation (training only; evaluation and decoding never drop or smooth):\n");
    cli_opt_usage(f, "--dropout", NULL, 23);
    cli_opt_usage(f, "--label-smoothing", NULL, 23);
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
