/*
 * test_readout.c — the readout decoder kind (decoders/readout.c, issue 27's
 * Table 8.1) and the tasks it and the positions experiment use (shift, bag):
 * its rules (capacities, one label per position), decoding (src_len labels,
 * beam = greedy, a source alone = in a padded batch, save/load), the
 * longest-path claim in miniature (a conv encoder of reach 1 learns shift 1
 * but not shift 3; a transformer learns shift 3), and seed 002's position
 * blindness: without positions a transformer encoder's labels follow a
 * permutation of its source exactly, and it learns the bag task but not
 * reversal. (Gradients: test_encoders_f64's test_readout.)
 */
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "harness.h"

static attend_model_config readout_config(attend_encoder_kind enc, int V, int L) {
    attend_model_config c = {.cell = ATTEND_CELL_GRU, .decoder = ATTEND_DECODER_READOUT, .src_vocab = V,
                             .tgt_vocab = V, .emb = 32, .enc_hidden = 64, .enc_layers = 2, .dec_hidden = 1,
                             .attn = 1, .max_batch = 32, .max_src_len = L, .max_tgt_len = L};
    c.encoder = enc;
    if (enc == ATTEND_ENCODER_TRANSFORMER) c.heads = 4;
    if (enc == ATTEND_ENCODER_CONV) c.kernel = 3;
    if (enc == ATTEND_ENCODER_RNN) c.enc_hidden = 16;
    return c;
}

static void test_rules(void) {
    attend_error err;
    attend_model *m = NULL;
    attend_model_config c = readout_config(ATTEND_ENCODER_TRANSFORMER, 12, 10);
    c.max_tgt_len = 9;
    EXPECT(attend_model_create(&m, &c, 1, &err) == ATTEND_ERR_ARG && !m, "max_tgt_len 9 < max_src_len 10 accepted");
    printf("  refused: %s\n", err.msg);
    EXPECT(strstr(err.msg, "readout") && strstr(err.msg, "max_tgt_len=9") && strstr(err.msg, "max_src_len=10"),
           "message: %s", err.msg);
    EXPECT(attend_decoder_from_name("readout") == ATTEND_DECODER_READOUT &&
               !strcmp(attend_decoder_name(ATTEND_DECODER_READOUT), "readout"),
           "name");
    c.max_tgt_len = 10;
    EXPECT(attend_model_create(&m, &c, 1, &err) == ATTEND_OK, "%s", err.msg);
    /* a target shorter than its source: refused naming the row and both lengths */
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    int32_t s[] = {4, 5, 6}, t[] = {5, 6};
    attend_dataset_add(d, s, 3, t, 2, NULL);
    int32_t s2[] = {4, 5}, t2[] = {1, 5}; /* BOS as a label */
    attend_dataset_add(d, s2, 2, t2, 2, NULL);
    attend_batch b;
    attend_batch_alloc(&b, 2, 10, 10, NULL);
    int idx[2] = {0, 1};
    attend_tf_stats st;
    EXPECT(attend_batch_fill(&b, d, idx, 1, 1, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_ERR_ARG, "a short target accepted");
    printf("  refused: %s\n", err.msg);
    EXPECT(strstr(err.msg, "2 target labels for 3 source positions"), "message: %s", err.msg);
    EXPECT(attend_batch_fill(&b, d, idx + 1, 1, 1, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_forward(m, &b, &st, &err) == ATTEND_ERR_ARG, "BOS as a label accepted");
    printf("  refused: %s\n", err.msg);
    EXPECT(strstr(err.msg, "target label 1"), "message: %s", err.msg);
    /* decoding needs room for src_len labels */
    attend_decode_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.max_len = 2;
    int32_t out[10], len[1], sl[1] = {3};
    EXPECT(attend_decode(&m, 1, s, sl, 1, 3, &o, out, len, NULL, NULL, NULL, &err) == ATTEND_ERR_CAPACITY,
           "max_len 2 for 3 labels accepted");
    printf("  refused: %s\n", err.msg);
    EXPECT(strstr(err.msg, "src_len=3") && strstr(err.msg, "max_len is 2"), "message: %s", err.msg);
    attend_batch_release(&b);
    attend_dataset_free(d);
    attend_model_free(m);
}

/* greedy labels of N sources [N,S] into out [N,S]; each row's count must be its length */
static int labels(attend_model *m, const int32_t *src, const int32_t *sl, int N, int S, int beam, int32_t *out) {
    attend_decode_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.max_len = S;
    o.beam = beam;
    o.nbest = beam ? 1 : 0;
    int32_t len[32];
    double score[1];
    int n_out = 0;
    attend_error err;
    attend_status st = attend_decode(&m, 1, src, beam ? NULL : sl, N, S, &o, out, len, beam ? score : NULL, NULL,
                                     &n_out, &err);
    EXPECT(st || n_out == (beam ? 1 : N), "%d outputs", n_out);
    EXPECT(st == ATTEND_OK, "%s", err.msg);
    for (int n = 0; n < N; n++) EXPECT(len[n] == sl[n], "row %d: %d labels for length %d", n, (int)len[n], (int)sl[n]);
    return st == ATTEND_OK;
}

static void test_decoding(void) {
    attend_encoder_kind kinds[] = {ATTEND_ENCODER_RNN, ATTEND_ENCODER_TRANSFORMER, ATTEND_ENCODER_CONV};
    for (int k = 0; k < 3; k++) {
        attend_model_config c = readout_config(kinds[k], 12, 8);
        attend_model *m = NULL, *m2 = NULL;
        attend_error err;
        EXPECT(attend_model_create(&m, &c, 5 + k, &err) == ATTEND_OK, "%s", err.msg);
        if (!m) continue;
        /* two rows, the second padded */
        int32_t src[2 * 8] = {4, 5, 6, 7, 8, 9, 10, 11, 7, 6, 5, 0, 0, 0, 0, 0}, sl[2] = {8, 3};
        int32_t out[2 * 8], alone[8], beam[8], again[2 * 8];
        labels(m, src, sl, 2, 8, 0, out);
        labels(m, src + 8, sl + 1, 1, 3, 0, alone);
        EXPECT(!memcmp(alone, out + 8, 3 * sizeof *alone), "%s: a source alone differs from it in a padded batch",
               attend_encoder_name(kinds[k]));
        /* beam search never extends with PAD or BOS (greedy takes the argmax of all): make them unlikely */
        attend_model_tensor ob;
        EXPECT(attend_model_tensor_find(m, "out.bias", &ob, &err) == ATTEND_OK, "%s", err.msg);
        ob.data[ATTEND_PAD] = ob.data[ATTEND_BOS] = -100;
        labels(m, src, sl, 2, 8, 0, out);
        labels(m, src, sl, 1, 8, 3, beam);
        EXPECT(!memcmp(beam, out, 8 * sizeof *beam), "%s: beam 3 differs from greedy", attend_encoder_name(kinds[k]));
        /* save and load: the same labels */
        attend_vocab *v = NULL;
        attend_vocab_create(&v, NULL);
        for (int i = 0; i < 8; i++) {
            char name[2] = {(char)('a' + i), 0};
            attend_vocab_add(v, name, 1, NULL, NULL);
        }
        const char *path = "readout_test.safetensors";
        EXPECT(attend_model_save(m, path, v, v, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
        attend_vocab *sv = NULL, *tv = NULL;
        attend_tokenizer tok;
        EXPECT(attend_model_load(&m2, path, NULL, &sv, &tv, &tok, &err) == ATTEND_OK, "%s", err.msg);
        if (m2) {
            EXPECT(attend_model_get_config(m2)->decoder == ATTEND_DECODER_READOUT, "loaded decoder");
            labels(m2, src, sl, 2, 8, 0, again);
            EXPECT(!memcmp(again, out, sizeof out), "%s: labels differ after save/load", attend_encoder_name(kinds[k]));
        }
        remove(path);
        attend_vocab_free(v);
        attend_vocab_free(sv);
        attend_vocab_free(tv);
        attend_model_free(m2);
        attend_model_free(m);
    }
}

/* trains c on shift k (length L) for steps; returns the accuracy over the labels i >= k of 200 dev pairs */
static double shift_accuracy(attend_model_config c, int k, int L, int steps) {
    attend_task_config tc = {ATTEND_TASK_SHIFT, 8, L, L, 4000, 31};
    attend_dataset *train = NULL, *dev = NULL;
    attend_vocab *v = NULL, *dv = NULL;
    attend_error err;
    EXPECT(attend_dataset_shift_task(&train, &v, &tc, k, &err) == ATTEND_OK, "%s", err.msg);
    tc.seed = 32;
    tc.count = 200;
    attend_dataset_shift_task(&dev, &dv, &tc, k, NULL);
    c.src_vocab = c.tgt_vocab = attend_vocab_size(v);
    c.max_src_len = c.max_tgt_len = L;
    attend_model *m = NULL;
    attend_trainer *tr = NULL;
    EXPECT(attend_model_create(&m, &c, 41, &err) == ATTEND_OK, "%s", err.msg);
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = 3e-3;
    oc.clip_norm = 1.0;
    oc.warmup_steps = 30;
    double acc = -1;
    if (m && attend_trainer_create(&tr, m, &oc, train, 32, 42, &err) == ATTEND_OK) {
        for (int i = 0; i < steps; i++) {
            attend_step_report r;
            if (attend_trainer_step(tr, &r, &err)) {
                EXPECT(0, "step %d: %s", i, err.msg);
                break;
            }
        }
        long right = 0, total = 0;
        int32_t src[32 * 64], sl[32], out[32 * 64];
        for (int i0 = 0; i0 < 200; i0 += 32) {
            int n = 200 - i0 < 32 ? 200 - i0 : 32;
            const int32_t *tg[32];
            for (int i = 0; i < n; i++) {
                const int32_t *s;
                int ns, nt;
                attend_dataset_get(dev, i0 + i, &s, &ns, &tg[i], &nt, NULL);
                memcpy(src + (size_t)i * L, s, (size_t)L * sizeof *s);
                sl[i] = L;
            }
            if (!labels(m, src, sl, n, L, 0, out)) break;
            for (int i = 0; i < n; i++)
                for (int t = k; t < L; t++) right += out[(size_t)i * L + t] == tg[i][t], total++;
        }
        acc = total ? (double)right / total : -1;
        printf("  shift %d, L=%d, %s encoder (%d layers%s), %d steps of 32: accuracy %.4f over labels i >= %d\n", k,
               L, attend_encoder_name(c.encoder), c.enc_layers,
               c.encoder == ATTEND_ENCODER_CONV ? ", kernel 3" : "", steps, acc, k);
    } else
        EXPECT(0, "%s", err.msg);
    attend_trainer_free(tr);
    attend_model_free(m);
    attend_dataset_free(train);
    attend_dataset_free(dev);
    attend_vocab_free(v);
    attend_vocab_free(dv);
    return acc;
}

/* Table 8.1's path column in miniature: one conv layer of kernel 3 sees one
 * position to each side, so shift 1 is learnable and shift 3 is not (chance
 * is 1/8); one self-attention layer reaches any position. */
static void test_longest_path(void) {
    attend_model_config conv = readout_config(ATTEND_ENCODER_CONV, 0, 0);
    conv.enc_layers = 1;
    double c1 = shift_accuracy(conv, 1, 12, 300), c3 = shift_accuracy(conv, 3, 12, 300);
    EXPECT(c1 >= 0.95, "conv (reach 1) on shift 1: %.4f < 0.95", c1);
    EXPECT(c3 <= 0.35, "conv (reach 1) on shift 3: %.4f > 0.35 (beyond its reach)", c3);
    attend_model_config tf = readout_config(ATTEND_ENCODER_TRANSFORMER, 0, 0);
    double t3 = shift_accuracy(tf, 3, 12, 300);
    EXPECT(t3 >= 0.95, "transformer on shift 3: %.4f < 0.95", t3);
}

/* seed 002: without positions self-attention sees a bag; a permuted source
 * gives exactly the permuted labels (and with sinusoidal positions it does not) */
static void test_permutation_equivariance(void) {
    for (int pos = 0; pos < 2; pos++) {
        attend_model_config c = readout_config(ATTEND_ENCODER_TRANSFORMER, 16, 8);
        c.positions = pos ? ATTEND_POSITIONS_SINUSOIDAL : ATTEND_POSITIONS_NONE;
        attend_model *m = NULL;
        attend_error err;
        EXPECT(attend_model_create(&m, &c, 77, &err) == ATTEND_OK, "%s", err.msg);
        if (!m) continue;
        /* random output layer scale so that labels vary by position: the untrained model's own weights */
        int32_t src[8] = {4, 5, 6, 7, 8, 9, 10, 11}, perm[8] = {3, 7, 0, 5, 1, 6, 2, 4}, psrc[8], sl[1] = {8};
        for (int i = 0; i < 8; i++) psrc[i] = src[perm[i]];
        int32_t out[8], pout[8];
        labels(m, src, sl, 1, 8, 0, out);
        labels(m, psrc, sl, 1, 8, 0, pout);
        int same = 1, distinct = 0;
        for (int i = 0; i < 8; i++) {
            same &= pout[i] == out[perm[i]];
            distinct |= out[i] != out[0];
        }
        printf("  positions %s: labels %s the permutation\n", attend_positions_name(c.positions),
               same ? "follow" : "do not follow");
        EXPECT(distinct, "all labels equal: the test could not see a permutation");
        if (!pos) EXPECT(same, "positions none: the labels of a permuted source are not the permuted labels");
        else EXPECT(!same, "sinusoidal positions: the labels followed the permutation exactly");
        attend_model_free(m);
    }
}

/* One length for every pair: softmax attention averages, so without positions
 * {a,b} and {a,a,b,b} give the same states and the same contexts; the length
 * is what is left to tell them apart, and the decoder can learn one length as
 * a constant. (Lengths 3..6: bag 0.8667 after 400 steps, 0.8933 after 800,
 * measured.) */
#define BLIND_LEN 6
#define BLIND_STEPS 400

/* trains a transformer encoder without positions (Bahdanau decoder) on task; greedy sequence accuracy */
static double blind_accuracy(attend_task task) {
    attend_task_config tc = {task, 6, BLIND_LEN, BLIND_LEN, 8000, 51};
    attend_dataset *train = NULL, *dev = NULL;
    attend_vocab *v = NULL, *dv = NULL;
    attend_error err;
    EXPECT(attend_dataset_task(&train, &v, &tc, &err) == ATTEND_OK, "%s", err.msg);
    tc.seed = 52;
    tc.count = 300;
    attend_dataset_task(&dev, &dv, &tc, NULL);
    attend_vocab_free(dv);
    int V = attend_vocab_size(v);
    attend_model_config c = {.cell = ATTEND_CELL_GRU, .decoder = ATTEND_DECODER_BAHDANAU,
                             .score = ATTEND_SCORE_ADDITIVE, .src_vocab = V, .tgt_vocab = V, .emb = 32,
                             .enc_hidden = 64, .enc_layers = 2, .dec_hidden = 64, .attn = 64, .max_batch = 64,
                             .max_src_len = 6, .max_tgt_len = 6};
    c.encoder = ATTEND_ENCODER_TRANSFORMER;
    c.heads = 4;
    c.positions = ATTEND_POSITIONS_NONE;
    attend_model *m = NULL;
    attend_trainer *tr = NULL;
    EXPECT(attend_model_create(&m, &c, 53, &err) == ATTEND_OK, "%s", err.msg);
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = 3e-3;
    oc.clip_norm = 1.0;
    oc.warmup_steps = 30;
    attend_eval_stats es = {0};
    if (m && attend_trainer_create(&tr, m, &oc, train, 32, 54, &err) == ATTEND_OK) {
        for (int i = 0; i < BLIND_STEPS; i++) {
            attend_step_report r;
            if (attend_trainer_step(tr, &r, &err)) {
                EXPECT(0, "step %d: %s", i, err.msg);
                break;
            }
        }
        EXPECT(attend_model_evaluate(m, dev, 64, 0, &es, &err) == ATTEND_OK, "%s", err.msg);
    }
    printf("  %s, L=%d, 6 symbols, transformer encoder without positions + bahdanau, %d steps of 32: "
           "greedy seq acc %.4f, token acc %.4f\n",
           task == ATTEND_TASK_BAG ? "bag (sorted symbols)" : "reversal", BLIND_LEN, BLIND_STEPS, es.greedy_seq_acc, es.greedy_token_acc);
    attend_trainer_free(tr);
    attend_model_free(m);
    attend_dataset_free(train);
    attend_dataset_free(dev);
    attend_vocab_free(v);
    return es.greedy_seq_acc;
}

static void test_positions_blindness(void) {
    double bag = blind_accuracy(ATTEND_TASK_BAG), rev = blind_accuracy(ATTEND_TASK_REVERSE);
    EXPECT(bag >= 0.9, "bag without positions: %.4f < 0.9", bag);
    EXPECT(rev <= 0.5, "reversal without positions: %.4f > 0.5", rev);
}

int main(void) {
    RUN(test_rules);
    RUN(test_decoding);
    RUN(test_permutation_equivariance);
    RUN(test_longest_path);
    RUN(test_positions_blindness);
    return harness_summary();
}
