/*
 * test_dropout.c — dropout and label smoothing in training (issue 14): the
 * options' range checks, masks that depend on the seed and the step only
 * (resuming from a checkpoint gives the uninterrupted run's weights bit for
 * bit; 1 and 2 ranks with the same gradient shards give the same bytes; the
 * shards' masks are the whole batch's), a resume with another dropout or
 * smoothing refused naming it, and inference that never drops or smooths.
 * The gradients are checked in test_dropout_f64.c, the values against
 * PyTorch in test_dropout_ref.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attend.h"
#include "harness.h"

typedef struct {
    attend_dataset *data;
    attend_vocab *vocab;
    attend_model *m;
    attend_trainer *tr;
} setup;

/* A reverse task of 40 pairs, a Bahdanau model with two encoder layers,
 * batch 8, trainer seed 3; options o (NULL: none). */
static int make(setup *s, const attend_train_options *o) {
    memset(s, 0, sizeof *s);
    attend_error err;
    attend_task_config tc = {ATTEND_TASK_REVERSE, 8, 2, 7, 40, 1};
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = 1e-2;
    oc.clip_norm = 1;
    int ok = attend_dataset_task(&s->data, &s->vocab, &tc, &err) == ATTEND_OK;
    if (ok) {
        int V = attend_vocab_size(s->vocab);
        attend_model_config mc = {ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, V, V, 8, 12, 2, 16, 8,
                                  8, 7, 7, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
        ok = attend_model_create(&s->m, &mc, 5, &err) == ATTEND_OK &&
             attend_trainer_create(&s->tr, s->m, &oc, s->data, 8, 3, &err) == ATTEND_OK &&
             (!o || attend_trainer_set_options(s->tr, o, &err) == ATTEND_OK);
    }
    EXPECT(ok, "%s", err.msg);
    return ok;
}

static void release(setup *s) {
    attend_trainer_free(s->tr);
    attend_model_free(s->m);
    attend_dataset_free(s->data);
    attend_vocab_free(s->vocab);
}

static int steps(setup *s, int n, double *losses) {
    attend_error err;
    for (int i = 0; i < n; i++) {
        attend_step_report r;
        if (attend_trainer_step(s->tr, &r, &err) != ATTEND_OK) {
            EXPECT(0, "step %d: %s", i, err.msg);
            return 0;
        }
        if (losses) losses[i] = r.tf.loss;
    }
    return 1;
}

static void test_option_ranges(void) {
    setup s;
    if (!make(&s, NULL)) return;
    attend_error err;
    const struct {
        double p, ls;
        const char *name;
    } bad[] = {{1, 0, "dropout"}, {-0.1, 0, "dropout"}, {NAN, 0, "dropout"}, {1.5, 0, "dropout"},
               {0, 1, "label_smoothing"}, {0, -1e-9, "label_smoothing"}, {0, INFINITY, "label_smoothing"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        attend_train_options o = {0};
        o.dropout = bad[i].p;
        o.label_smoothing = bad[i].ls;
        EXPECT(attend_trainer_set_options(s.tr, &o, &err) == ATTEND_ERR_ARG && strstr(err.msg, bad[i].name),
               "dropout %g label_smoothing %g: accepted or not named (%s)", bad[i].p, bad[i].ls, err.msg);
    }
    attend_train_options o = {0};
    o.dropout = 0.999;
    o.label_smoothing = 0.5;
    EXPECT(attend_trainer_set_options(s.tr, &o, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_trainer_options(s.tr)->dropout == 0.999, "not stored");
    /* the model's own switches */
    EXPECT(attend_model_set_dropout(s.m, 1, 0, &err) == ATTEND_ERR_ARG && strstr(err.msg, "dropout=1"), "%s", err.msg);
    EXPECT(attend_model_set_label_smoothing(s.m, 1, &err) == ATTEND_ERR_ARG && strstr(err.msg, "label_smoothing=1"),
           "%s", err.msg);
    EXPECT(attend_model_set_dropout(NULL, 0.1, 0, &err) == ATTEND_ERR_NULL, "NULL model accepted");
    release(&s);
}

/* Dropout and smoothing change the training, deterministically for a seed. */
static void test_deterministic(void) {
    attend_train_options o = {0};
    o.dropout = 0.3;
    o.label_smoothing = 0.1;
    setup a, b, c;
    if (!make(&a, &o) || !make(&b, &o) || !make(&c, NULL)) return;
    double la[6], lb[6], lc[6];
    if (steps(&a, 6, la) && steps(&b, 6, lb) && steps(&c, 6, lc)) {
        size_t P = attend_model_param_count(a.m);
        EXPECT(!memcmp(attend_model_params(a.m), attend_model_params(b.m), P * sizeof(attend_real)),
               "two runs with one seed differ");
        EXPECT(memcmp(attend_model_params(a.m), attend_model_params(c.m), P * sizeof(attend_real)),
               "dropout changed nothing");
        EXPECT(la[0] != lc[0], "step 1: the regularised loss %g equals the plain %g", la[0], lc[0]);
    }
    release(&a);
    release(&b);
    release(&c);
}

/* Train 10 steps, checkpoint at 5, resume in a fresh trainer: the bytes of the
 * uninterrupted run. Another dropout or smoothing is refused naming it. */
static void test_resume(void) {
    char dir[] = "/tmp/attend_dropout_XXXXXX";
    if (!mkdtemp(dir)) {
        EXPECT(0, "mkdtemp failed");
        return;
    }
    char ck[600];
    snprintf(ck, sizeof ck, "%s/ck.safetensors", dir);
    attend_train_options o = {0};
    o.dropout = 0.25;
    o.label_smoothing = 0.1;
    setup whole, first, second;
    attend_error err;
    if (make(&whole, &o) && make(&first, &o) && make(&second, &o) && steps(&whole, 10, NULL) && steps(&first, 5, NULL)) {
        EXPECT(attend_trainer_save(first.tr, ck, first.vocab, first.vocab, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK,
               "%s", err.msg);
        EXPECT(attend_trainer_resume(second.tr, ck, &err) == ATTEND_OK, "%s", err.msg);
        if (steps(&second, 5, NULL)) {
            size_t P = attend_model_param_count(whole.m);
            EXPECT(!memcmp(attend_model_params(whole.m), attend_model_params(second.m), P * sizeof(attend_real)),
                   "resumed at step 5 of 10: the weights differ from the uninterrupted run's");
        }
        const struct {
            double p, ls;
            const char *name;
        } other[] = {{0.2, 0.1, "dropout is 0.25, in this run 0.2"}, {0, 0.1, "dropout is 0.25, in this run 0"},
                     {0.25, 0.2, "label_smoothing is 0.1, in this run 0.2"}};
        for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
            attend_train_options x = {0};
            x.dropout = other[i].p;
            x.label_smoothing = other[i].ls;
            setup r;
            if (!make(&r, &x)) continue;
            EXPECT(attend_trainer_resume(r.tr, ck, &err) == ATTEND_ERR_ARG && strstr(err.msg, other[i].name),
                   "resume with dropout %g, smoothing %g: want \"%s\", got: %s", x.dropout, x.label_smoothing,
                   other[i].name, err.msg);
            release(&r);
        }
    }
    release(&whole);
    release(&first);
    release(&second);
    unlink(ck);
    rmdir(dir);
}

static attend_status unused_exchange(void *user, attend_trainer *tr, const attend_real *part, attend_real *sum,
                                     attend_error *err) {
    (void)user, (void)tr, (void)part, (void)sum;
    snprintf(err->msg, sizeof err->msg, "the two phases were to be called by hand");
    return ATTEND_ERR_ARG;
}

/* 4 gradient shards on 1 and on 2 ranks (two phases by hand): the same bytes
 * with dropout; and the shards' losses are the one-batch run's up to rounding
 * (each row keeps its mask whichever shard holds it). */
static void test_shards(void) {
    attend_train_options o = {0};
    o.dropout = 0.3;
    o.label_smoothing = 0.1;
    setup one, plain, r[2];
    attend_error err;
    int ok = make(&one, &o) && make(&plain, &o) && make(&r[0], &o) && make(&r[1], &o);
    ok = ok && attend_trainer_set_parallel(one.tr, 4, 0, 1, NULL, NULL, &err) == ATTEND_OK;
    for (int i = 0; ok && i < 2; i++) ok = attend_trainer_set_parallel(r[i].tr, 4, i, 2, unused_exchange, NULL, &err) == ATTEND_OK;
    EXPECT(ok, "%s", err.msg);
    size_t total = ok ? attend_trainer_part_len(r[0].tr, 0) + attend_trainer_part_len(r[0].tr, 1) : 0;
    attend_real *all = malloc((total ? total : 1) * sizeof *all);
    double worst = 0;
    for (int step = 0; ok && step < 6; step++) {
        attend_step_report a, b[2], c;
        ok = attend_trainer_step(one.tr, &a, &err) == ATTEND_OK && attend_trainer_step(plain.tr, &c, &err) == ATTEND_OK;
        size_t off = 0;
        for (int i = 0; ok && i < 2; i++) {
            const attend_real *part;
            ok = attend_trainer_step_part(r[i].tr, &part, &err) == ATTEND_OK;
            size_t n = attend_trainer_part_len(r[i].tr, i);
            if (ok) memcpy(all + off, part, n * sizeof *all);
            off += n;
        }
        for (int i = 0; ok && i < 2; i++) ok = attend_trainer_step_finish(r[i].tr, all, &b[i], &err) == ATTEND_OK;
        EXPECT(ok, "step %d: %s", step, err.msg);
        if (!ok) break;
        EXPECT(a.tf.loss == b[0].tf.loss && a.tf.loss == b[1].tf.loss, "step %d: loss %.9g on 1 rank, %.9g / %.9g on 2",
               step, a.tf.loss, b[0].tf.loss, b[1].tf.loss);
        double d = fabs(a.tf.loss - c.tf.loss) / c.tf.loss;
        if (d > worst) worst = d;
    }
    if (ok) {
        size_t P = attend_model_param_count(one.m);
        for (int i = 0; i < 2; i++)
            EXPECT(!memcmp(attend_model_params(one.m), attend_model_params(r[i].m), P * sizeof(attend_real)),
                   "4 shards with dropout: rank %d of 2 differs from 1 rank", i);
        EXPECT_NEAR("4 shards vs one batch: relative loss difference", worst, 0, 1e-4);
    }
    free(all);
    release(&one);
    release(&plain);
    release(&r[0]);
    release(&r[1]);
}

/* A trained model, dropout and smoothing switched on: evaluation and greedy
 * decoding give what they give with both off. */
static void test_inference_unaffected(void) {
    attend_train_options o = {0};
    o.dropout = 0.3;
    setup s;
    if (!make(&s, &o) || !steps(&s, 8, NULL)) {
        release(&s);
        return;
    }
    attend_error err;
    attend_eval_stats off, on;
    memset(&off, 0, sizeof off); /* the padding bytes too: compared whole */
    memset(&on, 0, sizeof on);
    int32_t src[2 * 7] = {4, 5, 6, 7, 0, 0, 0, 8, 9, 10, 11, 4, 5, 6}, len[2] = {4, 7};
    int32_t out_off[2 * 8], out_on[2 * 8], n_off[2], n_on[2];
    int32_t tgt[3] = {6, 5, 4};
    double lp_off = 0, lp_on = 1;
    EXPECT(attend_model_evaluate(s.m, s.data, 8, 0, &off, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_greedy(s.m, src, len, 2, 7, 8, out_off, n_off, NULL, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_score(s.m, src, 3, tgt, 3, &lp_off, NULL, &err) == ATTEND_OK, "%s", err.msg);
    attend_model_set_dropout(s.m, 0.5, 77, NULL);
    attend_model_set_label_smoothing(s.m, 0.3, NULL);
    EXPECT(attend_model_evaluate(s.m, s.data, 8, 0, &on, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_greedy(s.m, src, len, 2, 7, 8, out_on, n_on, NULL, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_score(s.m, src, 3, tgt, 3, &lp_on, NULL, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(lp_on == lp_off, "forced scoring with dropout on: %.9g, off %.9g", lp_on, lp_off);
    EXPECT(!memcmp(&off, &on, sizeof off), "evaluation with dropout on: loss %.9g, off %.9g", on.loss, off.loss);
    EXPECT(!memcmp(n_off, n_on, sizeof n_on) && !memcmp(out_off, out_on, sizeof out_on), "greedy decoding changed");
    /* and the teacher-forced forward does drop with them on */
    attend_batch b;
    int idx[2] = {0, 1};
    attend_tf_stats t_on, t_off;
    attend_batch_alloc(&b, 2, 7, 8, NULL);
    attend_batch_fill(&b, s.data, idx, 2, 0, NULL);
    attend_model_forward(s.m, &b, &t_on, NULL);
    attend_model_set_dropout(s.m, 0, 0, NULL);
    attend_model_set_label_smoothing(s.m, 0, NULL);
    attend_model_forward(s.m, &b, &t_off, NULL);
    EXPECT(t_on.loss != t_off.loss, "the forward with dropout and smoothing gave the plain loss %g", t_off.loss);
    attend_batch_release(&b);
    release(&s);
}

int main(void) {
    RUN(test_option_ranges);
    RUN(test_deterministic);
    RUN(test_resume);
    RUN(test_shards);
    RUN(test_inference_unaffected);
    return harness_summary();
}
