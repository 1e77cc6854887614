/*
 * fuzz_setup.h — the one small training setup the checkpoint fuzz target
 * resumes into and fuzz/make_corpus.c writes seed checkpoints for: the
 * reverse task over 5 symbols, lengths 1-4, 12 pairs, a GRU model with
 * additive attention of widths 4/3/5/3, batch 4, Adam, seed 7.
 */
#ifndef ATTEND_FUZZ_SETUP_H
#define ATTEND_FUZZ_SETUP_H

#include <string.h>

#include "attend.h"

typedef struct {
    attend_dataset *data;
    attend_vocab *vocab;
    attend_model *model;
    attend_optim_config opt;
} fuzz_setup;

static inline attend_status fuzz_setup_make(fuzz_setup *s, attend_error *err) {
    memset(s, 0, sizeof *s);
    attend_task_config tc = {ATTEND_TASK_REVERSE, 5, 1, 4, 12, 3};
    attend_status st = attend_dataset_task(&s->data, &s->vocab, &tc, err);
    if (st) return st;
    int V = attend_vocab_size(s->vocab);
    attend_model_config mc = {ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, V, V, 4, 3, 1, 5, 3,
                              4, 4, 4, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    st = attend_model_create(&s->model, &mc, 7, err);
    if (st) return st;
    s->opt = attend_optim_defaults(ATTEND_OPT_ADAM);
    s->opt.lr = 1e-2;
    s->opt.clip_norm = 1.0;
    return ATTEND_OK;
}

static inline attend_status fuzz_setup_trainer(fuzz_setup *s, attend_trainer **tr, attend_error *err) {
    return attend_trainer_create(tr, s->model, &s->opt, s->data, 4, 7, err);
}

static inline void fuzz_setup_free(fuzz_setup *s) {
    attend_model_free(s->model);
    attend_dataset_free(s->data);
    attend_vocab_free(s->vocab);
}

#endif
