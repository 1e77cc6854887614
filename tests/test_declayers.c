/*
 * test_declayers.c — a stacked decoder (dec_layers > 1, decoders/stack.c) in
 * the float library, through everything that decodes: beam search carries
 * every layer's state with its hypothesis (width 1 is greedy; the best
 * hypothesis's score is the forced score of its tokens, which fails if a
 * lower layer's rows were not reordered), for every token decoder kind and
 * both cells; the model file round trip; int8 quantization covers the upper
 * layers' matrices and the quantized file decodes as the quantized model.
 * (Gradients: test_declayers_f64.c; PyTorch: test_model_ref.c's dl2_*.)
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attend.h"
#include "harness.h"

#define S 6
#define L 8

static const int32_t g_src[3][S] = {{4, 5, 6, 7, 8, 9}, {9, 4, 4, 0, 0, 0}, {6, 0, 0, 0, 0, 0}};
static const int32_t g_len[3] = {6, 3, 1};

/* a two-layer model trained a few steps on the reverse task (so its outputs
 * are not uniform) */
static attend_model *trained(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score, int layers,
                             attend_vocab **vocab) {
    attend_error err;
    attend_dataset *d = NULL;
    attend_task_config tc = {ATTEND_TASK_REVERSE, 8, 1, 6, 200, 3};
    attend_model *m = NULL;
    attend_trainer *tr = NULL;
    if (attend_dataset_task(&d, vocab, &tc, &err)) {
        EXPECT(0, "%s", err.msg);
        return NULL;
    }
    int V = attend_vocab_size(*vocab);
    attend_model_config mc = {cell, dec, score, V, V, 8, 8, 1, 16, 8, 16, 8, 8, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    mc.dec_layers = layers;
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = 1e-2;
    EXPECT(attend_model_create(&m, &mc, 9, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(m && attend_trainer_create(&tr, m, &oc, d, 16, 1, &err) == ATTEND_OK, "%s", err.msg);
    for (int i = 0; tr && i < 40; i++) EXPECT(attend_trainer_step(tr, NULL, &err) == ATTEND_OK, "%s", err.msg);
    attend_trainer_free(tr);
    attend_dataset_free(d);
    return m;
}

static void greedy3(attend_model *m, int32_t *out, int32_t *ol) {
    attend_error err;
    EXPECT(attend_model_greedy(m, &g_src[0][0], g_len, 3, S, L, out, ol, NULL, &err) == ATTEND_OK, "%s", err.msg);
}

static void check_beam(attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score, int layers) {
    attend_vocab *v = NULL;
    attend_model *m = trained(cell, dec, score, layers, &v);
    if (!m) return;
    attend_error err;
    int32_t gout[3 * L], gol[3];
    greedy3(m, gout, gol);
    int worst = 0;
    double worst_diff = 0;
    for (int n = 0; n < 3; n++) {
        int32_t out[4 * L], ol[4];
        double sc[4];
        int k = 0;
        /* width 1 is greedy */
        EXPECT(attend_model_beam(m, g_src[n], g_len[n], 1, 1, L, 0, out, ol, sc, NULL, &k, &err) == ATTEND_OK, "%s",
               err.msg);
        EXPECT(k == 1 && ol[0] == gol[n] && !memcmp(out, gout + n * L, (size_t)gol[n] * sizeof *out),
               "%s/%s L%d row %d: beam 1 differs from greedy", attend_cell_name(cell), attend_decoder_name(dec), layers,
               n);
        /* width 4: every hypothesis's score is its forced score */
        EXPECT(attend_model_beam(m, g_src[n], g_len[n], 4, 4, L, 0, out, ol, sc, NULL, &k, &err) == ATTEND_OK, "%s",
               err.msg);
        for (int h = 0; h < k; h++) {
            double lp = 0;
            EXPECT(attend_model_score(m, g_src[n], g_len[n], out + h * L, ol[h], &lp, NULL, &err) == ATTEND_OK, "%s",
                   err.msg);
            double diff = fabs(lp - sc[h]);
            if (diff > worst_diff) worst_diff = diff, worst = n;
            EXPECT(diff <= 1e-4 * (1 + fabs(lp)), "%s/%s L%d row %d hypothesis %d: beam score %.6f, forced score %.6f",
                   attend_cell_name(cell), attend_decoder_name(dec), layers, n, h, sc[h], lp);
        }
    }
    printf("  %s/%s/%s dec_layers %d: beam 1 = greedy; beam 4 scores = forced scores (worst |diff| %.2e, row %d)\n",
           attend_cell_name(cell), attend_decoder_name(dec), attend_score_name(score), layers, worst_diff, worst);
    attend_model_free(m);
    attend_vocab_free(v);
}

static void test_beam(void) {
    for (int cell = 0; cell < 2; cell++) {
        check_beam((attend_cell_kind)cell, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 2);
        check_beam((attend_cell_kind)cell, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, 2);
        check_beam((attend_cell_kind)cell, ATTEND_DECODER_NONE, ATTEND_SCORE_DOT, 3);
    }
}

static void test_files_and_quantized(void) {
    char dir[] = "/tmp/attend_declayers_XXXXXX", p[80], q[80];
    if (!mkdtemp(dir)) {
        EXPECT(0, "mkdtemp");
        return;
    }
    snprintf(p, sizeof p, "%s/m.safetensors", dir);
    snprintf(q, sizeof q, "%s/q.safetensors", dir);
    attend_vocab *v = NULL;
    attend_model *m = trained(ATTEND_CELL_LSTM, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 2, &v);
    attend_model *m2 = NULL, *m3 = NULL;
    attend_error err;
    if (!m) return;
    int32_t a[3 * L], al[3], b[3 * L], bl[3];
    greedy3(m, a, al);
    /* the float file round trip */
    EXPECT(attend_model_save(m, p, v, v, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_load(&m2, p, NULL, NULL, NULL, NULL, &err) == ATTEND_OK, "%s", err.msg);
    if (m2) {
        EXPECT(attend_model_get_config(m2)->dec_layers == 2, "dec_layers %d after loading",
               attend_model_get_config(m2)->dec_layers);
        EXPECT(!memcmp(attend_model_params(m), attend_model_params(m2), attend_model_param_count(m) * sizeof(attend_real)),
               "the loaded weights differ");
        greedy3(m2, b, bl);
        EXPECT(!memcmp(a, b, sizeof a) && !memcmp(al, bl, sizeof al), "the loaded model decodes otherwise");
    }
    /* int8: every weight matrix, the upper layer's included, stored quantized */
    EXPECT(attend_model_quantize(m, ATTEND_DTYPE_I8, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_save(m, q, v, v, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    attend_st_file *f = NULL;
    EXPECT(attend_st_open(&f, q, 0, &err) == ATTEND_OK, "%s", err.msg);
    if (f) {
        const char *names[] = {"decoder.weight_ih_l1", "decoder.weight_hh_l1"};
        for (int i = 0; i < 2; i++) {
            const attend_st_tensor *t = attend_st_find(f, names[i]);
            char sc[64];
            snprintf(sc, sizeof sc, "%s.scale", names[i]);
            EXPECT(t && t->dtype == ATTEND_DTYPE_I8 && attend_st_find(f, sc), "%s is not stored as int8 with a scale",
                   names[i]);
        }
        const attend_st_tensor *bias = attend_st_find(f, "decoder.bias_ih_l1");
        EXPECT(bias && bias->dtype == ATTEND_DTYPE_F32, "decoder.bias_ih_l1 is not float32");
        attend_st_close(f);
    }
    greedy3(m, a, al);
    EXPECT(attend_model_load(&m3, q, NULL, NULL, NULL, NULL, &err) == ATTEND_OK, "%s", err.msg);
    if (m3) {
        greedy3(m3, b, bl);
        EXPECT(!memcmp(a, b, sizeof a) && !memcmp(al, bl, sizeof al), "the loaded int8 model decodes otherwise");
    }
    attend_model_free(m);
    attend_model_free(m2);
    attend_model_free(m3);
    attend_vocab_free(v);
    remove(p);
    remove(q);
    rmdir(dir);
}

int main(void) {
    RUN(test_beam);
    RUN(test_files_and_quantized);
    return harness_summary();
}
