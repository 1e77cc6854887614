/*
 * test_model_errors.c — bad input to the model and its files: each is a clear
 * error naming what and where; nothing crashes and nothing is half-returned.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attend.h"
#include "harness.h"

static char tmpdir[256];

static const char *tmp_path(const char *name) {
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

static attend_model_config small_config(void) {
    attend_model_config c = {ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 8, 8, 4, 3, 1, 5, 4, 4, 6, 6, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    return c;
}

#define EXPECT_STATUS(call, want, needle)                                                                  \
    do {                                                                                                   \
        attend_error e_;                                                                                   \
        memset(&e_, 0, sizeof e_);                                                                         \
        attend_status s_ = (call);                                                                         \
        EXPECT(s_ == (want) && strstr(e_.msg, (needle)) != NULL, "%s: got %s \"%s\", want %s with \"%s\"", \
               #call, attend_status_name(s_), e_.msg, attend_status_name(want), (needle));                 \
    } while (0)

static void test_config_errors(void) {
    attend_model *m = NULL;
    attend_model_config c = small_config();
    c.score = ATTEND_SCORE_DOT; /* Hd=5 but the encoder gives 2H=6 */
    EXPECT_STATUS(attend_model_create(&m, &c, 1, &e_), ATTEND_ERR_SHAPE, "dec_hidden=5");
    EXPECT(m == NULL, "model returned on error");
    c = small_config();
    c.enc_layers = 0;
    EXPECT_STATUS(attend_model_create(&m, &c, 1, &e_), ATTEND_ERR_SHAPE, "enc_layers=0");
    c = small_config();
    c.src_vocab = 3;
    EXPECT_STATUS(attend_model_create(&m, &c, 1, &e_), ATTEND_ERR_SHAPE, "src_vocab=3");
    c = small_config();
    c.decoder = (attend_decoder_kind)9;
    EXPECT_STATUS(attend_model_create(&m, &c, 1, &e_), ATTEND_ERR_ARG, "decoder=9");
    c = small_config();
    c.max_batch = 0;
    EXPECT_STATUS(attend_model_create(&m, &c, 1, &e_), ATTEND_ERR_SHAPE, "max_batch=0");
    EXPECT_STATUS(attend_model_create(NULL, &c, 1, &e_), ATTEND_ERR_NULL, "out");
    EXPECT_STATUS(attend_model_create(&m, NULL, 1, &e_), ATTEND_ERR_NULL, "config");
}

static void test_bad_batches(void) {
    attend_model *m = NULL;
    attend_model_config c = small_config();
    attend_model_create(&m, &c, 1, NULL);
    if (!m) return;
    attend_batch b;
    attend_batch_alloc(&b, 4, 6, 7, NULL);
    b.N = 2;
    b.S = 3;
    b.T = 2;
    for (int i = 0; i < 2 * 3; i++) b.src[i] = 5;
    for (int i = 0; i < 2 * 2; i++) {
        b.tgt_in[i] = i % 2 ? 5 : ATTEND_BOS;
        b.tgt_out[i] = i % 2 ? ATTEND_EOS : 6;
    }
    b.src_len[0] = 3;
    b.src_len[1] = 0; /* zero-length source */
    b.tgt_len[0] = b.tgt_len[1] = 2;
    EXPECT_STATUS(attend_model_forward(m, &b, NULL, &e_), ATTEND_ERR_SHAPE, "row 1: source length 0");
    b.src_len[1] = 3;
    b.src[4] = 99;
    EXPECT_STATUS(attend_model_forward(m, &b, NULL, &e_), ATTEND_ERR_ARG, "row 1 position 1: source id 99");
    b.src[4] = 5;
    b.tgt_out[1] = 42;
    EXPECT_STATUS(attend_model_forward(m, &b, NULL, &e_), ATTEND_ERR_ARG, "row 0 step 1");
    b.tgt_out[1] = ATTEND_PAD;
    EXPECT_STATUS(attend_model_forward(m, &b, NULL, &e_), ATTEND_ERR_ARG, "PAD as a target");
    b.tgt_out[1] = ATTEND_EOS;
    b.N = 5;
    EXPECT_STATUS(attend_model_forward(m, &b, NULL, &e_), ATTEND_ERR_CAPACITY, "max_batch=4");
    b.N = 2;
    b.S = 7;
    EXPECT_STATUS(attend_model_forward(m, &b, NULL, &e_), ATTEND_ERR_CAPACITY, "max_src_len=6");
    b.S = 3;
    EXPECT_STATUS(attend_model_backward(m, &e_), ATTEND_ERR_ARG, "no forward pass");
    attend_tf_stats st;
    EXPECT(attend_model_forward(m, &b, &st, NULL) == ATTEND_OK && isfinite(st.loss), "a good batch fails");
    /* decoding */
    int32_t src[3] = {4, 5, 6}, len0 = 0, len3 = 3, out[8], out_len;
    EXPECT_STATUS(attend_model_greedy(m, src, &len0, 1, 3, 4, out, &out_len, NULL, &e_), ATTEND_ERR_SHAPE,
                  "source length 0");
    EXPECT_STATUS(attend_model_greedy(m, src, &len3, 1, 3, 8, out, &out_len, NULL, &e_), ATTEND_ERR_CAPACITY,
                  "max_len=8");
    double sc;
    int n_out;
    EXPECT_STATUS(attend_model_beam(m, src, 3, 5, 1, 4, 0, out, &out_len, &sc, NULL, &n_out, &e_),
                  ATTEND_ERR_CAPACITY, "max_batch=4");
    EXPECT_STATUS(attend_model_beam(m, src, 3, 2, 3, 4, 0, out, &out_len, &sc, NULL, &n_out, &e_), ATTEND_ERR_ARG,
                  "nbest=3");
    EXPECT_STATUS(attend_model_beam(m, src, 0, 2, 1, 4, 0, out, &out_len, &sc, NULL, &n_out, &e_), ATTEND_ERR_CAPACITY,
                  "source length 0");
    /* a zero-length pair never enters a dataset */
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    EXPECT(attend_dataset_add(d, src, 0, src, 1, NULL) != ATTEND_OK, "empty source accepted");
    EXPECT(attend_dataset_add(d, src, 1, src, 0, NULL) != ATTEND_OK, "empty target accepted");
    attend_dataset_free(d);
    attend_batch_release(&b);
    attend_model_free(m);
}

/* Writes a model file from m's tensors, optionally dropping, reshaping or
 * poisoning one of them, or overriding the config metadata. */
static void write_variant(attend_model *m, attend_vocab *v, const char *path, const char *drop, const char *reshape,
                          const char *poison, const char *config_json, const char *extra) {
    int n = attend_model_tensor_count(m), k = 0;
    attend_st_entry e[64];
    float *copies[64] = {0};
    for (int i = 0; i < n; i++) {
        attend_model_tensor t;
        attend_model_tensor_get(m, i, &t, NULL);
        if (drop && !strcmp(t.name, drop)) continue;
        memset(&e[k], 0, sizeof e[k]);
        e[k].name = t.name;
        e[k].dtype = ATTEND_DTYPE_F32;
        e[k].ndim = t.ndim;
        e[k].shape[0] = t.shape[0];
        e[k].shape[1] = t.shape[1];
        e[k].data = t.data;
        if (reshape && !strcmp(t.name, reshape)) { /* same element count, other shape */
            e[k].ndim = 1;
            e[k].shape[0] = (int64_t)t.numel;
        }
        if (poison && !strcmp(t.name, poison)) {
            copies[k] = malloc(t.numel * sizeof(float));
            memcpy(copies[k], t.data, t.numel * sizeof(float));
            copies[k][t.numel / 2] = INFINITY;
            e[k].data = copies[k];
        }
        k++;
    }
    float one = 1;
    if (extra) {
        memset(&e[k], 0, sizeof e[k]);
        e[k].name = extra;
        e[k].dtype = ATTEND_DTYPE_F32;
        e[k].ndim = 1;
        e[k].shape[0] = 1;
        e[k].data = &one;
        k++;
    }
    char *cfg = NULL, *vj = NULL;
    attend_model_config_to_json(attend_model_get_config(m), &cfg, NULL);
    attend_vocab_to_json(v, &vj, NULL);
    attend_st_meta meta[5] = {{"attend.format", "model"},
                              {"attend.config", config_json ? config_json : cfg},
                              {"attend.tokenizer", "char"},
                              {"attend.src_vocab", vj},
                              {"attend.tgt_vocab", vj}};
    attend_error err;
    if (attend_st_write(path, e, k, meta, 5, &err)) fprintf(stderr, "write_variant: %s\n", err.msg);
    for (int i = 0; i < 64; i++) free(copies[i]);
    free(cfg);
    free(vj);
}

static void test_bad_model_files(void) {
    attend_model *m = NULL, *got = NULL;
    attend_model_config c = small_config();
    attend_model_create(&m, &c, 3, NULL);
    attend_vocab *v = NULL;
    attend_vocab_create(&v, NULL);
    const char *sym[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) attend_vocab_add(v, sym[i], 1, NULL, NULL);
    if (!m || !v) return;
    const char *p = tmp_path("good.safetensors");
    attend_error err;
    EXPECT(attend_model_save(m, p, v, v, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_load(&got, p, NULL, NULL, NULL, NULL, &err) == ATTEND_OK, "%s", err.msg);
    attend_model_free(got);
    got = NULL;

    write_variant(m, v, p, "decoder.weight_hh", NULL, NULL, NULL, NULL);
    EXPECT_STATUS(attend_model_load(&got, p, NULL, NULL, NULL, NULL, &e_), ATTEND_ERR_FORMAT,
                  "tensor 'decoder.weight_hh' is missing");
    write_variant(m, v, p, NULL, "bridge.weight", NULL, NULL, NULL);
    EXPECT_STATUS(attend_model_load(&got, p, NULL, NULL, NULL, NULL, &e_), ATTEND_ERR_FORMAT,
                  "tensor 'bridge.weight' has shape [30], expected [5,6]");
    write_variant(m, v, p, NULL, NULL, "out.weight", NULL, NULL);
    EXPECT_STATUS(attend_model_load(&got, p, NULL, NULL, NULL, NULL, &e_), ATTEND_ERR_FORMAT,
                  "tensor 'out.weight' element");
    write_variant(m, v, p, NULL, NULL, NULL, NULL, "attention.W");
    EXPECT_STATUS(attend_model_load(&got, p, NULL, NULL, NULL, NULL, &e_), ATTEND_ERR_FORMAT,
                  "unexpected tensor 'attention.W'");
    /* a checkpoint from another configuration: the file's tensors do not fit its config */
    write_variant(m, v, p, NULL, NULL, NULL,
                  "{\"cell\":\"gru\",\"decoder\":\"bahdanau\",\"score\":\"additive\",\"src_vocab\":8,\"tgt_vocab\":8,"
                  "\"emb\":4,\"enc_hidden\":3,\"enc_layers\":1,\"dec_hidden\":7,\"attn\":4,\"max_batch\":4,"
                  "\"max_src_len\":6,\"max_tgt_len\":6}",
                  NULL);
    EXPECT_STATUS(attend_model_load(&got, p, NULL, NULL, NULL, NULL, &e_), ATTEND_ERR_FORMAT,
                  "tensor 'bridge.weight' has shape [5,6], expected [7,6]");
    write_variant(m, v, p, NULL, NULL, NULL, "{\"cell\":\"gru\"}", NULL);
    EXPECT_STATUS(attend_model_load(&got, p, NULL, NULL, NULL, NULL, &e_), ATTEND_ERR_FORMAT, "is missing");
    write_variant(m, v, p, NULL, NULL, NULL, "{\"cell\":\"gru\",", NULL);
    EXPECT_STATUS(attend_model_load(&got, p, NULL, NULL, NULL, NULL, &e_), ATTEND_ERR_FORMAT, "byte");
    EXPECT(got == NULL, "a model was returned from a bad file");
    EXPECT_STATUS(attend_model_load(&got, tmp_path("absent.safetensors"), NULL, NULL, NULL, NULL, &e_), ATTEND_ERR_IO,
                  "absent.safetensors");
    /* every truncation of a good file is refused cleanly */
    attend_model_save(m, p, v, v, ATTEND_TOKENIZE_CHAR, NULL);
    FILE *f = fopen(p, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *bytes = malloc((size_t)n);
    EXPECT(fread(bytes, 1, (size_t)n, f) == (size_t)n, "read");
    fclose(f);
    int refused = 0;
    for (long cut = 0; cut < n; cut += (cut < 200 ? 1 : 97)) {
        const char *q = tmp_path("cut.safetensors");
        FILE *g = fopen(q, "wb");
        fwrite(bytes, 1, (size_t)cut, g);
        fclose(g);
        refused += attend_model_load(&got, q, NULL, NULL, NULL, NULL, NULL) != ATTEND_OK && got == NULL;
    }
    long tries = 0;
    for (long cut = 0; cut < n; cut += (cut < 200 ? 1 : 97)) tries++;
    printf("  %d of %ld truncations refused\n", refused, tries);
    EXPECT(refused == tries, "a truncated model file was accepted");
    free(bytes);
    attend_vocab_free(v);
    attend_model_free(m);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/attend-test-model-errors-XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_config_errors);
    RUN(test_bad_batches);
    RUN(test_bad_model_files);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return harness_summary();
}
