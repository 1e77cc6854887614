/*
 * test_parallel.c — data-parallel steps without MPI (issue 16): several
 * trainers in one process play the ranks of one job, exchanging their parts
 * by hand (two phases) or through the exchange callback (one thread per rank,
 * a barrier as the allgather). The weights after a few steps must be the same
 * bytes for 1, 2 and 4 ranks with the same number of gradient shards, and the
 * two-phase step with one shard the same bytes as the plain step.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "harness.h"

#define STEPS 9 /* 50 pairs, batch 8: steps 7 (2 rows, empty shards) and 8 (a new epoch) included */

typedef struct {
    attend_dataset *data;
    attend_vocab *vocab;
    attend_model *m;
    attend_trainer *tr;
} rank_setup;

static int make_rank(rank_setup *s, int count, uint64_t data_seed) {
    memset(s, 0, sizeof *s);
    attend_error err;
    attend_task_config tc = {ATTEND_TASK_REVERSE, 8, 2, 7, count, data_seed};
    if (attend_dataset_task(&s->data, &s->vocab, &tc, &err)) {
        EXPECT(0, "%s", err.msg);
        return 0;
    }
    int V = attend_vocab_size(s->vocab);
    attend_model_config mc = {ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, V, V, 8, 12, 1, 16, 8,
                              8, 7, 7, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = 1e-2;
    oc.clip_norm = 1;
    if (attend_model_create(&s->m, &mc, 5, &err) || attend_trainer_create(&s->tr, s->m, &oc, s->data, 8, 3, &err)) {
        EXPECT(0, "%s", err.msg);
        return 0;
    }
    return 1;
}

static void free_rank(rank_setup *s) {
    attend_trainer_free(s->tr);
    attend_model_free(s->m);
    attend_dataset_free(s->data);
    attend_vocab_free(s->vocab);
}

static attend_status unused_exchange(void *user, attend_trainer *tr, const attend_real *part, attend_real *sum,
                                     attend_error *err) {
    (void)user, (void)tr, (void)part, (void)sum;
    snprintf(err->msg, sizeof err->msg, "the two phases were to be called by hand");
    return ATTEND_ERR_ARG;
}

/* Trains `ranks` emulated ranks with `shards` shards for STEPS steps, two
 * phases by hand; params [nparams] receives rank 0's weights (every rank's
 * are compared with it). Returns 1 when it ran. */
static int train_ranks(int shards, int ranks, attend_real *params, size_t nparams) {
    rank_setup r[4];
    attend_error err;
    int ok = 1;
    for (int i = 0; i < ranks; i++) ok &= make_rank(&r[i], 50, 1);
    for (int i = 0; ok && i < ranks; i++)
        if (attend_trainer_set_parallel(r[i].tr, shards, i, ranks, NULL, NULL, &err) && ranks == 1) {
            EXPECT(0, "%s", err.msg);
            ok = 0;
        }
    /* nranks > 1 without an exchange is refused; the two phases need none */
    for (int i = 0; ok && ranks > 1 && i < ranks; i++) {
        EXPECT(attend_trainer_set_parallel(r[i].tr, shards, i, ranks, NULL, NULL, &err) == ATTEND_ERR_ARG,
               "no exchange for %d ranks accepted", ranks);
        ok &= attend_trainer_set_parallel(r[i].tr, shards, i, ranks, unused_exchange, NULL, &err) ==
              ATTEND_OK;
    }
    size_t total = 0;
    for (int i = 0; i < ranks; i++) total += attend_trainer_part_len(r[0].tr, i);
    attend_real *all = malloc(total * sizeof *all);
    for (int step = 0; ok && all && step < STEPS; step++) {
        size_t off = 0;
        for (int i = 0; ok && i < ranks; i++) {
            const attend_real *part;
            if (attend_trainer_step_part(r[i].tr, &part, &err)) {
                EXPECT(0, "rank %d step %d: %s", i, step, err.msg);
                ok = 0;
                break;
            }
            size_t n = attend_trainer_part_len(r[i].tr, i);
            memcpy(all + off, part, n * sizeof *all);
            off += n;
        }
        attend_step_report rep[4];
        for (int i = 0; ok && i < ranks; i++)
            if (attend_trainer_step_finish(r[i].tr, all, &rep[i], &err)) {
                EXPECT(0, "rank %d step %d: %s", i, step, err.msg);
                ok = 0;
            }
        for (int i = 1; ok && i < ranks; i++)
            EXPECT(rep[i].tf.loss == rep[0].tf.loss && rep[i].tf.tokens == rep[0].tf.tokens,
                   "step %d: rank %d reports loss %g over %d tokens, rank 0 %g over %d", step, i, rep[i].tf.loss,
                   rep[i].tf.tokens, rep[0].tf.loss, rep[0].tf.tokens);
        if (ok && step == 6) EXPECT(rep[0].tf.seqs == 2, "step 7 has %d rows, want 2 (50 = 6*8 + 2)", rep[0].tf.seqs);
    }
    if (ok) {
        memcpy(params, attend_model_params(r[0].m), nparams * sizeof *params);
        for (int i = 1; i < ranks; i++)
            EXPECT(!memcmp(params, attend_model_params(r[i].m), nparams * sizeof *params),
                   "rank %d's weights differ from rank 0's (%d ranks, %d shards)", i, ranks, shards);
    }
    free(all);
    for (int i = 0; i < ranks; i++) free_rank(&r[i]);
    return ok && all;
}

static size_t nparams_of_setup(void) {
    rank_setup s;
    size_t n = make_rank(&s, 50, 1) ? attend_model_param_count(s.m) : 0;
    free_rank(&s);
    return n;
}

/* One shard, two phases: the plain step's bytes (the shard is the batch, its
 * token count the batch's). */
static void test_one_shard_is_plain_step(void) {
    size_t P = nparams_of_setup();
    attend_real *a = calloc(P, sizeof *a);
    rank_setup s;
    if (!a || !make_rank(&s, 50, 1)) return;
    attend_error err;
    for (int i = 0; i < STEPS; i++)
        if (attend_trainer_step(s.tr, NULL, &err)) EXPECT(0, "%s", err.msg);
    if (train_ranks(1, 1, a, P))
        EXPECT(!memcmp(a, attend_model_params(s.m), P * sizeof *a), "one shard in two phases != the plain step");
    free_rank(&s);
    free(a);
}

/* 4 shards: 1, 2 and 4 ranks agree bit for bit; 6 shards: 1, 2, 3 ranks
 * (3 ranks: blocks that are not tree nodes, several nodes per part). The
 * sharded weights stay close to the one-batch weights (the shards' gradients
 * sum to the batch gradient; only rounding differs). */
static void test_ranks_agree(void) {
    size_t P = nparams_of_setup();
    attend_real *w[4];
    for (int i = 0; i < 4; i++) w[i] = calloc(P, sizeof **w);
    if (!w[0] || !w[1] || !w[2] || !w[3]) return;
    int ran = train_ranks(4, 1, w[0], P) && train_ranks(4, 2, w[1], P) && train_ranks(4, 4, w[2], P);
    if (ran) {
        EXPECT(!memcmp(w[0], w[1], P * sizeof **w), "4 shards: 2 ranks != 1 rank");
        EXPECT(!memcmp(w[0], w[2], P * sizeof **w), "4 shards: 4 ranks != 1 rank");
    }
    ran = train_ranks(1, 1, w[3], P);
    if (ran) {
        double *g = malloc(P * sizeof *g), *want = malloc(P * sizeof *want);
        for (size_t i = 0; g && want && i < P; i++) {
            g[i] = w[0][i];
            want[i] = w[3][i];
        }
        if (g && want) EXPECT_CLOSE("4 shards vs 1 shard after 9 steps", g, want, P, 1e-4, 1e-3);
        free(g);
        free(want);
    }
    ran = train_ranks(6, 1, w[0], P) && train_ranks(6, 2, w[1], P) && train_ranks(6, 3, w[2], P);
    if (ran) {
        EXPECT(!memcmp(w[0], w[1], P * sizeof **w), "6 shards: 2 ranks != 1 rank");
        EXPECT(!memcmp(w[0], w[2], P * sizeof **w), "6 shards: 3 ranks != 1 rank");
    }
    for (int i = 0; i < 4; i++) free(w[i]);
}

/* ---- the exchange callback: one thread per rank, the MPI layer's algorithm
 * (cli/mpirun.c) with barriers: every part to every rank, rank j reduces chunk j
 * of every node, the reduced chunks to every rank */

typedef struct {
    pthread_barrier_t bar;
    attend_real *all; /* [nodes * L] every rank's parts, rank order */
    attend_real *sum; /* [L] the reduced chunks */
    int fail_rank;    /* the exchange fails (everywhere: a collective); -1: none */
} exchange_hub;

typedef struct {
    exchange_hub *hub;
    int rank;
    rank_setup s;
    attend_status st;
    attend_error err;
} rank_thread;

static attend_status hub_exchange(void *user, attend_trainer *tr, const attend_real *part, attend_real *sum,
                                  attend_error *err) {
    rank_thread *t = user;
    int nranks = 2;
    size_t L = attend_trainer_node_len(tr), off = 0, total = 0;
    for (int i = 0; i < nranks; i++) {
        if (i < t->rank) off += attend_trainer_part_len(tr, i);
        total += attend_trainer_part_len(tr, i);
    }
    size_t nodes = total / L;
    memcpy(t->hub->all + off, part, attend_trainer_part_len(tr, t->rank) * sizeof *part);
    pthread_barrier_wait(&t->hub->bar);
    /* chunk j: elements [j*L/2, (j+1)*L/2) of every node */
    size_t a = (size_t)t->rank * L / nranks, b = (size_t)(t->rank + 1) * L / nranks;
    attend_real *mine = malloc(nodes * (b - a) * sizeof *mine);
    attend_status st = mine ? ATTEND_OK : ATTEND_ERR_ALLOC;
    for (size_t k = 0; mine && k < nodes; k++) memcpy(mine + k * (b - a), t->hub->all + k * L + a, (b - a) * sizeof *mine);
    if (!st) st = attend_trainer_reduce(tr, mine, b - a, t->hub->sum + a, err);
    free(mine);
    pthread_barrier_wait(&t->hub->bar);
    memcpy(sum, t->hub->sum, L * sizeof *sum);
    pthread_barrier_wait(&t->hub->bar);
    if (!st && t->hub->fail_rank >= 0) {
        snprintf(err->msg, sizeof err->msg, "rank %d: the exchange failed", t->rank);
        err->status = st = ATTEND_ERR_IO;
    }
    return st;
}

static void *rank_main(void *arg) {
    rank_thread *t = arg;
    t->st = attend_trainer_set_parallel(t->s.tr, 4, t->rank, 2, hub_exchange, t, &t->err);
    for (int i = 0; !t->st && i < STEPS; i++) t->st = attend_trainer_step(t->s.tr, NULL, &t->err);
    return NULL;
}

static void test_exchange_callback(void) {
    size_t P = nparams_of_setup();
    attend_real *want = calloc(P, sizeof *want);
    if (!want || !train_ranks(4, 1, want, P)) return;
    for (int fail = -1; fail <= 1; fail += 2) {
        exchange_hub hub;
        hub.fail_rank = fail;
        hub.all = calloc(4 * (P + ATTEND_TRAINER_NODE_STATS), sizeof *hub.all);
        hub.sum = calloc(P + ATTEND_TRAINER_NODE_STATS, sizeof *hub.sum);
        pthread_barrier_init(&hub.bar, NULL, 2);
        rank_thread t[2];
        pthread_t th[2];
        for (int i = 0; i < 2; i++) {
            memset(&t[i], 0, sizeof t[i]);
            t[i].hub = &hub;
            t[i].rank = i;
            make_rank(&t[i].s, 50, 1);
        }
        for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, rank_main, &t[i]);
        for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
        if (fail < 0) {
            for (int i = 0; i < 2; i++) {
                EXPECT(t[i].st == ATTEND_OK, "rank %d: %s", i, t[i].err.msg);
                EXPECT(!memcmp(want, attend_model_params(t[i].s.m), P * sizeof *want),
                       "rank %d through the callback != 1 rank", i);
            }
        } else {
            EXPECT(t[1].st == ATTEND_ERR_IO && strstr(t[1].err.msg, "rank 1: the exchange failed"),
                   "a failing exchange: status %d '%s'", t[1].st, t[1].err.msg);
            EXPECT(attend_trainer_steps(t[1].s.tr) == 0, "a failed step counted (%ld)",
                   attend_trainer_steps(t[1].s.tr));
        }
        for (int i = 0; i < 2; i++) free_rank(&t[i].s);
        pthread_barrier_destroy(&hub.bar);
        free(hub.all);
        free(hub.sum);
    }
    free(want);
}

static void test_bad_settings(void) {
    rank_setup s, o;
    if (!make_rank(&s, 50, 1) || !make_rank(&o, 50, 2)) return;
    attend_error err;
    EXPECT(attend_trainer_set_parallel(s.tr, 3, 0, 2, NULL, NULL, &err) == ATTEND_ERR_ARG &&
               strstr(err.msg, "2 ranks do not divide 3 gradient shards"),
           "'%s'", err.msg);
    EXPECT(attend_trainer_set_parallel(s.tr, 16, 0, 1, NULL, NULL, &err) == ATTEND_ERR_ARG &&
               strstr(err.msg, "16 gradient shards for a batch of 8"),
           "'%s'", err.msg);
    EXPECT(attend_trainer_set_parallel(s.tr, 2, 2, 2, NULL, NULL, &err) == ATTEND_ERR_ARG, "rank 2 of 2 accepted");
    EXPECT(attend_trainer_set_parallel(s.tr, 0, 0, 1, NULL, NULL, &err) == ATTEND_ERR_ARG, "0 shards accepted");
    const attend_real *part;
    EXPECT(attend_trainer_step_part(s.tr, &part, &err) == ATTEND_ERR_ARG, "step_part before set_parallel");
    EXPECT(attend_trainer_data_fingerprint(s.tr) != attend_trainer_data_fingerprint(o.tr),
           "other data, the same fingerprint");
    rank_setup s2;
    if (make_rank(&s2, 50, 1)) {
        EXPECT(attend_trainer_data_fingerprint(s.tr) == attend_trainer_data_fingerprint(s2.tr),
               "the same data, other fingerprints");
        free_rank(&s2);
    }
    free_rank(&s);
    free_rank(&o);
}

int main(void) {
    RUN(test_one_shard_is_plain_step);
    RUN(test_ranks_agree);
    RUN(test_exchange_callback);
    RUN(test_bad_settings);
    return harness_summary();
}
