/*
 * train_options.h — the training options beyond the optimizer that `attend
 * train` and `attend g2p train` share (attend_train_options: --dropout,
 * --label-smoothing): parsing, their --help lines, setting them on a trainer,
 * and the summary line's words.
 */
#ifndef ATTEND_CLI_TRAIN_OPTIONS_H
#define ATTEND_CLI_TRAIN_OPTIONS_H

#include <stdio.h>

#include "args.h"

/* When p's option is one of them: parses its value into o, sets *rc (0, or 2
 * after a usage error) and returns 1; else returns 0. */
int cli_train_option(cli_parser *p, attend_train_options *o, int *rc);

/* The --help lines of those options. */
void cli_train_options_usage(FILE *f);

/* attend_trainer_set_options(tr, o); on failure prints the message and
 * returns 1. */
int cli_train_options_set(const char *cmd, attend_trainer *tr, const attend_train_options *o);

/* ", dropout P, label smoothing E" for the options set (nothing when none). */
void cli_train_options_print(FILE *f, const attend_train_options *o);

#endif
