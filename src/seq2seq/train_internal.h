/*
 * train_internal.h — the trainer's state, shared by train.c (steps,
 * evaluation) and train_checkpoint.c (save and resume). Not installed.
 */
#ifndef ATTEND_TRAIN_INTERNAL_H
#define ATTEND_TRAIN_INTERNAL_H

#include "seq2seq/state.h"

struct attend_trainer {
    attend_model *m;
    const attend_dataset *data;
    attend_optim *opt;
    attend_optim_config opt_cfg;
    attend_batch batch;
    attend_rng rng;
    uint64_t seed;
    int batch_size;
    int n;         /* dataset size */
    int32_t *perm; /* [n] current epoch's order */
    int pos;       /* next index into perm */
    int epoch;     /* epochs begun */
    long skipped;
    long nonfinite_run; /* skipped steps in a row just before now */
    long max_nonfinite; /* stop after this many in a row; 0 = never */
    int idx_buf_n;
    int *idx;      /* [batch_size] */
    uint64_t data_hash; /* FNV-1a 64 of the pairs in order (fingerprint_data) */
    attend_train_options topt; /* attend_trainer_set_options; all zero = off */
    /* data-parallel steps (attend_trainer_set_parallel); shards = nranks = 1: off */
    int shards, rank, nranks;
    attend_trainer_exchange_fn exchange;
    void *exchange_user;
    int nnodes;           /* maximal tree nodes over all ranks (DFS order) */
    int *node_rank;       /* [nnodes] owner of each */
    int *node_lo, *node_hi; /* [nnodes] their shard ranges */
    size_t node_len;      /* nparams + ATTEND_TRAINER_NODE_STATS */
    int depth;            /* scratch levels: ceil(log2 shards) + 1 */
    attend_real *part;    /* [my nodes * node_len] */
    attend_real *sum;     /* [node_len] the step's summed gradient and statistics */
    attend_real *scratch; /* [depth * node_len] */
    size_t *lens;         /* [nranks] */
    int nb;               /* rows of the step in progress */
    int global_count;     /* its counted target tokens */
    char *caller_state;   /* attend_trainer_set_caller_state (its copy), or NULL */
};

#endif
