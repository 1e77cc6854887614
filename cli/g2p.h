/*
 * g2p.h — what the files of `attend g2p` share (cli/g2p.c: finding files,
 * pronouncing, dispatch; cli/g2p_train.c: `g2p train`; cli/g2p_eval.c:
 * `g2p data`, `g2p eval`, `g2p bench`).
 */
#ifndef ATTEND_CLI_G2P_H
#define ATTEND_CLI_G2P_H

#include <stddef.h>

#include "attend.h"

#define G2P_MODEL_NAME "g2p-cmudict.safetensors"
#define G2P_DICT_NAME "cmudict-en-us.dict"
#define G2P_BEAM_DEFAULT 5

/* 1 when path names a regular file. */
int g2p_file_exists(const char *path);
/* The model / dictionary to use: the option, else $ATTEND_G2P_MODEL /
 * $ATTEND_G2P_DICT, else the source tree's or the installed copy (into buf
 * [cap]); NULL with a message when none. */
const char *g2p_find_model(const char *cmd, const char *given, char *buf, size_t cap);
const char *g2p_find_dict(const char *cmd, const char *given, char *buf, size_t cap);
/* Reads a dictionary (skip: skip odd lines), reporting skipped lines; 0 or
 * the exit status after a message. */
int g2p_read_dict(const char *cmd, const char *path, int skip, attend_g2p_dict **d);
/* Loads a G2P model with capacities (0 = the file's); 0 or the exit status. */
int g2p_load_model(const char *cmd, const char *path, int batch, int max_src, int max_tgt, attend_model **m,
                   attend_vocab **gv, attend_vocab **pv);

int cmd_g2p_data(int argc, char **argv);
int cmd_g2p_train(int argc, char **argv);
int cmd_g2p_eval(int argc, char **argv);
int cmd_g2p_bench(int argc, char **argv);

#endif
