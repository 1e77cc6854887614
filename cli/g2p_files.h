/*
 * g2p_files.h — what the files of `attend g2p` share (g2p_files.c): finding
 * the model and the dictionary, reading a dictionary, loading a model or an
 * ensemble's members; and the lexicon (g2p_lexicon.c). cli/g2p.c pronounces
 * and dispatches; cli/g2p_train.c is `g2p train`; cli/g2p_eval.c `g2p data`,
 * `eval`, `bench` (their commands are declared in cli.h).
 */
#ifndef ATTEND_CLI_G2P_FILES_H
#define ATTEND_CLI_G2P_FILES_H

#include <stddef.h>

#include <limits.h>

#include "attend.h"
#include "ensemble.h"

#define G2P_MODEL_NAME "g2p-cmudict.safetensors"
#define G2P_DICT_NAME "cmudict-en-us.dict"
#define G2P_BEAM_DEFAULT 5

/* 1 when path names a regular file. */
int g2p_file_exists(const char *path);
/* The model / dictionary to use: the option, else $ATTEND_G2P_MODEL /
 * $ATTEND_G2P_DICT, else the copy installed with this attend
 * (<prefix>/share/attend), else, only when this attend runs from its build
 * directory, the source tree's (into buf [cap]); NULL with a message when none. */
const char *g2p_find_model(const char *cmd, const char *given, char *buf, size_t cap);
const char *g2p_find_dict(const char *cmd, const char *given, char *buf, size_t cap);
/* The first existing copy of a shipped file NAME: installed with this attend
 * (<prefix>/share/attend/NAME), else the source tree's rel_src when this
 * attend runs from its build directory (into buf [cap]); NULL when none.
 * looked [looked_cap] (may be NULL) gets the places tried, comma-separated. */
const char *g2p_find_shipped(const char *name, const char *rel_src, char *buf, size_t cap, char *looked,
                             size_t looked_cap);
/* Prints where the model (model = 1) or the dictionary is looked for, in
 * order, and which of those places exist (`attend g2p --help`). */
void g2p_search_help(FILE *f, int model);
/* Reads a dictionary (skip: skip odd lines; keep_stress: keep stress digits,
 * as a model whose phonemes carry them needs), reporting skipped lines; 0 or
 * the exit status after a message. */
int g2p_read_dict(const char *cmd, const char *path, int skip, int keep_stress, attend_g2p_dict **d);
/* Loads a G2P model with capacities (0 = the file's); 0 or the exit status. */
int g2p_load_model(const char *cmd, const char *path, int batch, int max_src, int max_tgt, attend_model **m,
                   attend_vocab **gv, attend_vocab **pv);

/* The model of `--model PATH`, or the members of an ensemble `--model
 * A,B,...` (at most CLI_ENSEMBLE_MAX), with one set of vocabularies. */
typedef struct {
    int M;
    const char *paths[CLI_ENSEMBLE_MAX];
    attend_model *ms[CLI_ENSEMBLE_MAX]; /* [M] after g2p_models_load */
    attend_vocab *gv, *pv;              /* model 1's (the others agree) */
    attend_model_config cfg;            /* model 1's, with the members' largest max_src_len / max_tgt_len */
    char *list;                         /* the --model list, cut at its commas */
    char found[PATH_MAX + 64];          /* the default model's path */
} g2p_models;
/* Resolves --model (NULL: the default model) and checks an ensemble's
 * members against model 1 (cli_ensemble_check), learning their trained
 * lengths; no model is held after it. 0 or the exit status after a message
 * (nothing to free then). */
int g2p_models_open(const char *cmd, const char *spec, g2p_models *e);
/* Loads every member with capacities (0 = the file's); 0 or the exit status. */
int g2p_models_load(const char *cmd, g2p_models *e, int batch, int max_src, int max_tgt);
void g2p_models_free(g2p_models *e);

/* The lexicon of `attend g2p` (cli/g2p_lexicon.c; docs/G2P.md, "Lexicon
 * first"): looked up before the model. */
typedef struct {
    attend_g2p_lexicon *lx;   /* NULL: none (--no-lexicon, or none found) */
    char path[PATH_MAX + 64]; /* the file it came from */
    const char *how;          /* "--lexicon", "$ATTEND_G2P_LEXICON", "Debian's pocketsphinx-en-us", "shipped" */
    int cached;               /* 1: read from the cache; 2: the text was read and the cache written; 0: neither */
    char cache[PATH_MAX + 64];
} g2p_lexicon;
/* Opens the lexicon for a model whose phonemes are pv: none (--no-lexicon)
 * gives none; given (--lexicon: a CMUdict-format text or a file written by
 * attend_g2p_lexicon_save), else $ATTEND_G2P_LEXICON ("none": none), else
 * the first found of Debian's pocketsphinx-en-us copy, the installed one and
 * the source tree's (a stress model: cmudict-stress.dict). A text is read
 * through a compact cached copy in $XDG_CACHE_HOME/attend (~/.cache/attend)
 * when that directory is writable. skip: skip malformed lines (else one is
 * an error naming path:line). No default found, or one that does not fit
 * the model, is a note on stderr and no lexicon; an explicit one that cannot
 * be used is an error. 0 or the exit status after a message. */
int g2p_lexicon_open(const char *cmd, const char *given, int none, int skip, const attend_vocab *pv,
                     g2p_lexicon *l);
void g2p_lexicon_close(g2p_lexicon *l);

#endif
