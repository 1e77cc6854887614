/*
 * test_sampling.c — scheduled sampling (src/seq2seq/sampling.c, the trainer
 * option sampling_prob / sampling_ramp):
 *  - sampling_prob 0 trains byte for byte as without the option;
 *  - sampling_prob 1 feeds the model's own argmax at every step: the
 *    trainer's loss equals the teacher-forced loss of the same targets with
 *    greedy decoding's tokens as the inputs;
 *  - a run with sampling resumed from a checkpoint ends with the same bytes as
 *    the run without the interruption (the choices are a hash, nothing saved);
 *  - the choices do not depend on how the batch is cut into gradient shards;
 *  - the pointer decoder is refused, naming it.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
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

static const attend_model_config *base_config(int V, int dec_layers) {
    static attend_model_config mc;
    attend_model_config c = {ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, V, V, 8, 12, 1, 16, 8,
                             8, 7, 7, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    c.dec_layers = dec_layers;
    mc = c;
    return &mc;
}

/* reverse-task pairs, a small model, a trainer of batch 8 with options o (NULL: none) */
static int make(setup *s, const attend_train_options *o, int dec_layers) {
    memset(s, 0, sizeof *s);
    attend_error err;
    attend_task_config tc = {ATTEND_TASK_REVERSE, 8, 2, 7, 40, 11};
    if (attend_dataset_task(&s->data, &s->vocab, &tc, &err)) {
        EXPECT(0, "%s", err.msg);
        return 0;
    }
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = 1e-2;
    oc.clip_norm = 1;
    if (attend_model_create(&s->m, base_config(attend_vocab_size(s->vocab), dec_layers), 5, &err) ||
        attend_trainer_create(&s->tr, s->m, &oc, s->data, 8, 3, &err) ||
        (o && attend_trainer_set_options(s->tr, o, &err))) {
        EXPECT(0, "%s", err.msg);
        return 0;
    }
    return 1;
}

static void release(setup *s) {
    attend_trainer_free(s->tr);
    attend_model_free(s->m);
    attend_dataset_free(s->data);
    attend_vocab_free(s->vocab);
}

static int train(setup *s, int steps, double *last_loss) {
    attend_error err;
    attend_step_report r;
    for (int i = 0; i < steps; i++) {
        if (attend_trainer_step(s->tr, &r, &err)) {
            EXPECT(0, "step %d: %s", i, err.msg);
            return 0;
        }
        if (last_loss) *last_loss = r.tf.loss;
    }
    return 1;
}

static int same_params(const setup *a, const setup *b) {
    size_t n = attend_model_param_count(a->m);
    return n == attend_model_param_count(b->m) &&
           !memcmp(attend_model_params(a->m), attend_model_params(b->m), n * sizeof(attend_real));
}

static void test_p0_is_teacher_forcing(void) {
    setup a, b;
    attend_train_options o;
    memset(&o, 0, sizeof o);
    o.sampling_ramp = 50; /* a ramp to 0 */
    if (make(&a, NULL, 0) && make(&b, &o, 0) && train(&a, 6, NULL) && train(&b, 6, NULL))
        EXPECT(same_params(&a, &b), "sampling_prob 0 changed the weights");
    release(&a);
    release(&b);
}

/* p = 1 from step 0: every input after BOS is the model's argmax, which is
 * what greedy decoding feeds; targets are other tokens, so the loss differs
 * from plain teacher forcing */
static void check_p1_greedy(int dec_layers) {
    setup s;
    attend_error err;
    attend_train_options o;
    memset(&o, 0, sizeof o);
    o.sampling_prob = 1;
    if (!make(&s, &o, dec_layers)) {
        release(&s);
        return;
    }
    int V = attend_vocab_size(s.vocab), N = 6, S = 7, L = 8;
    int32_t src[6 * 7], sl[6], out[6 * 8], ol[6];
    memset(src, 0, sizeof src);
    for (int n = 0; n < N; n++) {
        const int32_t *x, *y;
        int xl, yl;
        attend_dataset_get(s.data, n, &x, &xl, &y, &yl, NULL);
        memcpy(src + n * S, x, (size_t)xl * sizeof *x);
        sl[n] = xl;
    }
    EXPECT(attend_model_greedy(s.m, src, sl, N, S, L, out, ol, NULL, &err) == ATTEND_OK, "%s", err.msg);
    /* a dataset of (source, random target of at most the greedy length) */
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    attend_rng rng;
    attend_rng_seed(&rng, 99);
    int32_t tgt[6][8];
    int tl[6], rows = 0;
    for (int n = 0; n < N; n++) {
        tl[n] = ol[n] < 5 ? ol[n] : 5;
        if (tl[n] < 1) continue;
        for (int t = 0; t < tl[n]; t++) tgt[n][t] = 4 + (int32_t)(attend_rng_uniform(&rng) * (V - 4));
        attend_dataset_add(d, src + n * S, sl[n], tgt[n], tl[n], NULL);
        rows++;
    }
    EXPECT(rows >= 3, "only %d sources decode to a token or more", rows);
    /* the reference: teacher forcing with greedy's tokens as inputs */
    attend_batch b;
    attend_batch_alloc(&b, rows, S, 6, NULL);
    b.N = rows;
    b.S = S;
    b.T = 6;
    memset(b.src, 0, (size_t)rows * S * sizeof *b.src);
    for (int n = 0, r = 0; n < N; n++) {
        if (tl[n] < 1) continue;
        memcpy(b.src + r * S, src + n * S, (size_t)S * sizeof *src);
        b.src_len[r] = sl[n];
        b.tgt_len[r] = tl[n] + 1;
        for (int t = 0; t < 6; t++) {
            b.tgt_in[r * 6 + t] = t == 0 ? ATTEND_BOS : t <= tl[n] ? out[n * L + t - 1] : ATTEND_PAD;
            b.tgt_out[r * 6 + t] = t < tl[n] ? tgt[n][t] : t == tl[n] ? ATTEND_EOS : ATTEND_PAD;
        }
        r++;
    }
    attend_tf_stats ref, plain;
    EXPECT(attend_model_forward(s.m, &b, &ref, &err) == ATTEND_OK, "%s", err.msg);
    /* teacher forcing proper: the reference targets as inputs */
    for (int r = 0; r < rows; r++)
        for (int t = 1; t < 6; t++)
            if (t < b.tgt_len[r]) b.tgt_in[r * 6 + t] = b.tgt_out[r * 6 + t - 1];
    EXPECT(attend_model_forward(s.m, &b, &plain, &err) == ATTEND_OK, "%s", err.msg);
    /* one trainer step over all rows with sampling_prob 1 */
    attend_trainer *tr = NULL;
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    EXPECT(attend_trainer_create(&tr, s.m, &oc, d, rows, 4, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_trainer_set_options(tr, &o, &err) == ATTEND_OK, "%s", err.msg);
    attend_step_report rep;
    EXPECT(attend_trainer_step(tr, &rep, &err) == ATTEND_OK, "%s", err.msg);
    printf("  dec_layers %d, %d rows: sampled loss %.7f, greedy-input reference %.7f, teacher forcing %.7f\n",
           dec_layers, rows, rep.tf.loss, ref.loss, plain.loss);
    EXPECT(fabs(rep.tf.loss - ref.loss) <= 1e-5 * fabs(ref.loss), "sampled loss %.9g, reference %.9g", rep.tf.loss,
           ref.loss);
    EXPECT(fabs(plain.loss - ref.loss) > 1e-3, "teacher forcing gives the same loss %.9g: the test is vacuous",
           plain.loss);
    attend_trainer_free(tr);
    attend_batch_release(&b);
    attend_dataset_free(d);
    release(&s);
}

static void test_p1_feeds_greedy(void) {
    check_p1_greedy(0);
    check_p1_greedy(2);
}

static void test_resume_bit_exact(void) {
    attend_train_options o;
    char dir[] = "/tmp/attend_sampling_XXXXXX", path[64];
    if (!mkdtemp(dir)) {
        EXPECT(0, "mkdtemp");
        return;
    }
    snprintf(path, sizeof path, "%s/ck.safetensors", dir);
    setup a, b, c, p;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b), memset(&c, 0, sizeof c), memset(&p, 0, sizeof p);
    attend_error err;
    memset(&o, 0, sizeof o);
    o.sampling_prob = 0.5;
    o.sampling_ramp = 4;
    int ok = make(&a, &o, 0) && train(&a, 8, NULL);
    ok = ok && make(&b, &o, 0) && train(&b, 3, NULL);
    if (ok) EXPECT(attend_trainer_save(b.tr, path, b.vocab, b.vocab, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    ok = ok && make(&c, &o, 0);
    if (ok) EXPECT(attend_trainer_resume(c.tr, path, &err) == ATTEND_OK, "%s", err.msg);
    ok = ok && train(&c, 5, NULL);
    if (ok) EXPECT(same_params(&a, &c), "the resumed run differs from the uninterrupted one");
    /* and sampling did something: without it the weights differ */
    if (ok && make(&p, NULL, 0) && train(&p, 8, NULL)) EXPECT(!same_params(&a, &p), "sampling changed nothing");
    release(&p);
    release(&a);
    release(&b);
    release(&c);
    remove(path);
    rmdir(dir);
}

/* The choices hash the row's index within the whole batch: 1, 2 and 4
 * gradient shards sample the same inputs, so their losses agree to rounding
 * (a shard-local index would sample other rows) */
static void test_shard_independent(void) {
    attend_train_options o;
    memset(&o, 0, sizeof o);
    o.sampling_prob = 0.5;
    double loss[3] = {0}, plain = 0;
    int shards[3] = {1, 2, 4};
    for (int i = 0; i < 3; i++) {
        setup s;
        attend_error err;
        if (make(&s, &o, 0)) {
            if (shards[i] > 1)
                EXPECT(attend_trainer_set_parallel(s.tr, shards[i], 0, 1, NULL, NULL, &err) == ATTEND_OK, "%s", err.msg);
            train(&s, 3, &loss[i]);
        }
        release(&s);
    }
    setup s;
    if (make(&s, NULL, 0)) train(&s, 3, &plain);
    release(&s);
    printf("  step 3 loss: 1 shard %.9f, 2 shards %.9f, 4 shards %.9f; without sampling %.9f\n", loss[0], loss[1],
           loss[2], plain);
    for (int i = 1; i < 3; i++)
        EXPECT(fabs(loss[i] - loss[0]) <= 1e-5 * fabs(loss[0]), "%d shards: loss %.9g, 1 shard %.9g", shards[i],
               loss[i], loss[0]);
    EXPECT(fabs(plain - loss[0]) > 1e-4, "sampling did not change the loss (%.9g)", plain);
}

static void test_pointer_refused(void) {
    attend_error err;
    attend_dataset *d = NULL;
    attend_vocab *v = NULL;
    attend_task_config tc = {ATTEND_TASK_SORT, 8, 2, 7, 20, 1};
    attend_model *m = NULL;
    attend_trainer *tr = NULL;
    EXPECT(attend_dataset_task(&d, &v, &tc, &err) == ATTEND_OK, "%s", err.msg);
    attend_model_config mc = *base_config(attend_vocab_size(v), 0);
    mc.decoder = ATTEND_DECODER_POINTER;
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    EXPECT(attend_model_create(&m, &mc, 1, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(m && attend_trainer_create(&tr, m, &oc, d, 4, 1, &err) == ATTEND_OK, "%s", err.msg);
    attend_train_options o;
    memset(&o, 0, sizeof o);
    o.sampling_prob = 0.25;
    attend_status st = attend_trainer_set_options(tr, &o, &err);
    printf("  message: %s\n", err.msg);
    EXPECT(st == ATTEND_ERR_ARG && strstr(err.msg, "pointer") && strstr(err.msg, "sampling_prob"),
           "status %s: %s", attend_status_name(st), err.msg);
    attend_trainer_free(tr);
    attend_model_free(m);
    attend_dataset_free(d);
    attend_vocab_free(v);
}

int main(void) {
    RUN(test_p0_is_teacher_forcing);
    RUN(test_p1_feeds_greedy);
    RUN(test_resume_bit_exact);
    RUN(test_shard_independent);
    RUN(test_pointer_refused);
    return harness_summary();
}
