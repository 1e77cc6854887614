/*
 * ensemble.h — what `attend decode` and `attend g2p` share for ensembles
 * (issue 14 part 6): telling a model file from an input file, and the check
 * that the members agree on everything an ensemble needs, naming the first
 * difference.
 */
#ifndef ATTEND_CLI_ENSEMBLE_H
#define ATTEND_CLI_ENSEMBLE_H

#include "attend.h"

#define CLI_ENSEMBLE_MAX 16

/* 1 when path is a regular file that reads as safetensors (an 8-byte
 * little-endian header length, then '{'), else 0 ("-", FIFOs, devices and
 * unreadable paths are not: they are never opened). */
int cli_is_model_file(const char *path);

/* One member as loaded (batch 1) for the check. */
typedef struct {
    const char *path;
    attend_model_config cfg;
    attend_vocab *sv, *tv; /* tv NULL for a pointer model */
    attend_tokenizer tok;
} cli_member;

/* 0 when member b (number nb, 1-based) agrees with member a (number 1) on the
 * decoder class (vocabulary or pointer), the tokenizer and the source and
 * target vocabularies token by token; else 1 after a message on stderr naming
 * the first difference, e.g. "attend decode: model 2 (b.safetensors): target
 * vocabulary id 7 is 'x', model 1 (a.safetensors) has 'y'". */
int cli_ensemble_check(const char *cmd, const cli_member *a, const cli_member *b, int nb);

#endif
