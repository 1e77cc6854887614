/*
 * test_model_ref.c — the whole encoder–decoder (src/seq2seq/model.c, src/io/model_io.c,
 * float library) against a PyTorch model written as ordinary torch.nn code.
 * Reference data: tests/ref/model_<name>.safetensors (the weights, written by
 * PyTorch in our model-file format, so attend_model_load reads files we did
 * not write) and tests/ref/model_<name>.txt (one fixed padded batch, PyTorch's
 * loss and teacher-forcing statistics, the gradient of every parameter, and
 * greedy decodes), both from
 *     /usr/bin/python3 tools/ref_model.py
 * (format described there). Models: GRU Bahdanau/additive (seed 004), GRU
 * Luong/general (input feeding), two-layer LSTM Bahdanau/scaled_dot, LSTM
 * pointer/additive, GRU with no attention (fixed context). Each loaded model
 * is also saved again with attend_model_save, which must reproduce PyTorch's
 * file byte for byte; and a file whose configuration is wider than its
 * tensors must be refused with a message naming the tensor.
 *
 * Tolerance, loss and every gradient and alignment: |ours − torch| <= 1e-5 +
 * 1e-4·|torch|. The weights are exactly float32 and the reference is computed
 * in float64 from them, so the difference is our float32 rounding alone: a
 * relative 6e-8 per operation, accumulated over at most 6 encoder and 8
 * decoder recurrent steps (through two layers for the LSTM) and sums of at
 * most ~30 terms, gives relative errors around 1e-6 on O(1) values; atol
 * covers small entries that are differences of O(1) terms, rtol the larger
 * ones. Worst seen: 1.8e-6 (OpenBLAS) and 2.7e-6 (portable GEMM), on a
 * gradient of 1.74 where 1.8e-4 is allowed; all others are below 2e-6.
 * Greedy tokens and lengths must agree exactly: the script refuses argmax
 * margins below 1e-4, so float32 rounding cannot flip a choice.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"
#include "ref_reader.h"
#include "attend.h"

#define ATOL 1e-5
#define RTOL 1e-4

static void copy_ids(int32_t *dst, const ref_tensor *t) {
    for (size_t i = 0; i < t->n; i++) dst[i] = (int32_t)t->v[i];
}

static void compare_real(const char *what, const attend_real *got, const double *want, size_t n) {
    double *g = malloc(n * sizeof *g);
    for (size_t i = 0; i < n; i++) g[i] = (double)got[i];
    EXPECT_CLOSE(what, g, want, n, ATOL, RTOL);
    free(g);
}

static char g_dir[512]; /* scratch directory for re-saved files */

/* The whole file (malloc'ed) and its size; NULL when unreadable. */
static unsigned char *slurp(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    unsigned char *buf = NULL;
    long n = -1;
    if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
    }
    fclose(fp);
    *len = buf ? (size_t)n : 0;
    return buf;
}

/* Saving the loaded model again must reproduce PyTorch's file byte for byte:
 * same tensors, same order, same metadata, same header layout. */
static void check_resave(const char *name, const char *path, const attend_model *m, const attend_vocab *sv,
                         const attend_vocab *tv, attend_tokenizer tok) {
    char out[600];
    attend_error err;
    snprintf(out, sizeof out, "%s/%s.safetensors", g_dir, name);
    attend_status st = attend_model_save(m, out, sv, tv, tok, &err);
    EXPECT(st == ATTEND_OK, "%s: save: %s", name, err.msg);
    if (st != ATTEND_OK) return;
    size_t na = 0, nb = 0;
    unsigned char *a = slurp(path, &na), *b = slurp(out, &nb);
    EXPECT(a && b, "%s: cannot read %s or %s", name, path, out);
    if (a && b) {
        size_t first = 0;
        while (first < na && first < nb && a[first] == b[first]) first++;
        EXPECT(na == nb && first == na, "%s: attend_model_save wrote %zu bytes, PyTorch %zu; first difference at byte %zu",
               name, nb, na, first);
        if (na == nb && first == na) printf("  %s: attend_model_save reproduces the PyTorch file (%zu bytes)\n", name, na);
    }
    free(a);
    free(b);
    remove(out);
}

static void run_model(const char *name) {
    char path[256], what[160];
    attend_error err;
    snprintf(path, sizeof path, "ref/model_%s.txt", name);
    ref_file f;
    if (!ref_load(&f, path, "/usr/bin/python3 tools/ref_model.py")) return;
    snprintf(path, sizeof path, "ref/model_%s.safetensors", name);
    attend_model *m = NULL;
    attend_vocab *sv = NULL, *tv = NULL;
    attend_tokenizer tok = ATTEND_TOKENIZE_SPACE;
    attend_status st = attend_model_load(&m, path, NULL, &sv, &tv, &tok, &err);
    EXPECT(st == ATTEND_OK, "%s: %s", path, err.msg);
    if (st != ATTEND_OK) {
        ref_free(&f);
        return;
    }
    const attend_model_config *cfg = attend_model_get_config(m);
    int pointer = cfg->decoder == ATTEND_DECODER_POINTER;
    printf("  %s: %s/%s/%s, %d layer(s), %zu parameters in %d tensors\n", name, attend_cell_name(cfg->cell),
           attend_decoder_name(cfg->decoder), attend_score_name(cfg->score), cfg->enc_layers,
           attend_model_param_count(m), attend_model_tensor_count(m));
    /* the metadata PyTorch wrote */
    EXPECT(tok == ATTEND_TOKENIZE_CHAR, "%s: tokenizer %d, expected char", name, (int)tok);
    EXPECT(sv && attend_vocab_size(sv) == cfg->src_vocab, "%s: source vocabulary size", name);
    EXPECT(sv && attend_vocab_token(sv, 4) && !strcmp(attend_vocab_token(sv, 4), "a"), "%s: source token 4", name);
    if (pointer) {
        EXPECT(tv == NULL, "%s: a pointer model has no target vocabulary", name);
    } else {
        EXPECT(tv && attend_vocab_size(tv) == cfg->tgt_vocab, "%s: target vocabulary size", name);
        EXPECT(tv && attend_vocab_token(tv, 4) && !strcmp(attend_vocab_token(tv, 4), "A"), "%s: target token 4",
               name);
    }

    check_resave(name, path, m, sv, tv, tok);

    /* the batch */
    const ref_tensor *t_src = ref_get(&f, "src", 2, NULL), *t_sl = ref_get(&f, "src_len", 1, NULL);
    const ref_tensor *t_ti = ref_get(&f, "tgt_in", 2, NULL), *t_to = ref_get(&f, "tgt_out", 2, NULL);
    const ref_tensor *t_tl = ref_get(&f, "tgt_len", 1, NULL), *t_loss = ref_get(&f, "loss", 1, NULL);
    const ref_tensor *t_tok = ref_get(&f, "tokens", 1, NULL), *t_ct = ref_get(&f, "correct_tokens", 1, NULL);
    const ref_tensor *t_cs = ref_get(&f, "correct_seqs", 1, NULL), *t_ent = ref_get(&f, "attn_entropy", 1, NULL);
    if (t_src && t_sl && t_ti && t_to && t_tl && t_loss && t_tok && t_ct && t_cs && t_ent) {
        int N = t_src->dims[0], S = t_src->dims[1], T = t_ti->dims[1];
        attend_batch b;
        EXPECT(attend_batch_alloc(&b, N, S, T, &err) == ATTEND_OK, "%s", err.msg);
        b.N = N;
        b.S = S;
        b.T = T;
        copy_ids(b.src, t_src);
        copy_ids(b.src_len, t_sl);
        copy_ids(b.tgt_in, t_ti);
        copy_ids(b.tgt_out, t_to);
        copy_ids(b.tgt_len, t_tl);
        attend_tf_stats stats;
        memset(&stats, 0, sizeof stats);
        attend_model_zero_grad(m);
        st = attend_model_forward(m, &b, &stats, &err);
        EXPECT(st == ATTEND_OK, "%s: forward: %s", name, err.msg);
        if (st == ATTEND_OK) {
            snprintf(what, sizeof what, "%s loss", name);
            EXPECT_CLOSE(what, &stats.loss, t_loss->v, 1, ATOL, RTOL);
            snprintf(what, sizeof what, "%s attention entropy", name);
            EXPECT_CLOSE(what, &stats.attn_entropy, t_ent->v, 1, ATOL, RTOL);
            EXPECT(stats.tokens == (int)t_tok->v[0], "%s: %d tokens, torch %d", name, stats.tokens,
                   (int)t_tok->v[0]);
            EXPECT(stats.correct_tokens == (int)t_ct->v[0], "%s: %d correct tokens, torch %d", name,
                   stats.correct_tokens, (int)t_ct->v[0]);
            EXPECT(stats.correct_seqs == (int)t_cs->v[0], "%s: %d correct sequences, torch %d", name,
                   stats.correct_seqs, (int)t_cs->v[0]);
            st = attend_model_backward(m, &err);
            EXPECT(st == ATTEND_OK, "%s: backward: %s", name, err.msg);
        }
        /* every parameter's gradient; the file must list exactly our tensors */
        int ngrad = 0;
        for (int i = 0; i < f.count; i++) ngrad += !strncmp(f.t[i].name, "grad.", 5);
        EXPECT(ngrad == attend_model_tensor_count(m), "%s: %d reference gradients for %d tensors", name, ngrad,
               attend_model_tensor_count(m));
        for (int i = 0; st == ATTEND_OK && i < attend_model_tensor_count(m); i++) {
            attend_model_tensor mt;
            attend_model_tensor_get(m, i, &mt, NULL);
            char gname[96];
            snprintf(gname, sizeof gname, "grad.%s", mt.name);
            const ref_tensor *g = ref_get(&f, gname, mt.ndim, NULL);
            if (!g) continue;
            int same = g->dims[0] == mt.shape[0] && (mt.ndim < 2 || g->dims[1] == mt.shape[1]);
            EXPECT(same, "%s: %s shape differs from the model's", name, gname);
            if (!same) continue;
            snprintf(what, sizeof what, "%s %s", name, gname);
            compare_real(what, mt.grad, g->v, g->n);
        }
        attend_batch_release(&b);
    }

    /* greedy decoding */
    const ref_tensor *g_src = ref_get(&f, "greedy_src", 2, NULL), *g_sl = ref_get(&f, "greedy_src_len", 1, NULL);
    const ref_tensor *g_ml = ref_get(&f, "greedy_max_len", 1, NULL), *g_out = ref_get(&f, "greedy_out", 2, NULL);
    const ref_tensor *g_len = ref_get(&f, "greedy_out_len", 1, NULL), *g_al = ref_get(&f, "greedy_align", 3, NULL);
    if (g_src && g_sl && g_ml && g_out && g_len && g_al) {
        int M = g_src->dims[0], S2 = g_src->dims[1], L = (int)g_ml->v[0];
        int32_t *src = malloc((size_t)M * S2 * sizeof *src), *sl = malloc((size_t)M * sizeof *sl);
        int32_t *out = malloc((size_t)M * L * sizeof *out), *ol = malloc((size_t)M * sizeof *ol);
        attend_real *align = malloc((size_t)M * L * S2 * sizeof *align);
        copy_ids(src, g_src);
        copy_ids(sl, g_sl);
        st = attend_model_greedy(m, src, sl, M, S2, L, out, ol, align, &err);
        EXPECT(st == ATTEND_OK, "%s: greedy: %s", name, err.msg);
        if (st == ATTEND_OK) {
            int agree = 0;
            for (int n = 0; n < M; n++) {
                int row_ok = ol[n] == (int32_t)g_len->v[n];
                for (int t = 0; t < L; t++) row_ok &= out[(size_t)n * L + t] == (int32_t)g_out->v[(size_t)n * L + t];
                agree += row_ok;
                EXPECT(row_ok, "%s: greedy row %d differs from torch (length %d vs %d)", name, n, (int)ol[n],
                       (int)g_len->v[n]);
            }
            printf("  %s greedy: %d/%d rows identical to torch (max_len %d)\n", name, agree, M, L);
            snprintf(what, sizeof what, "%s greedy alignments", name);
            compare_real(what, align, g_al->v, g_al->n);
        }
        free(src);
        free(sl);
        free(out);
        free(ol);
        free(align);
    }
    attend_model_free(m);
    attend_vocab_free(sv);
    attend_vocab_free(tv);
    ref_free(&f);
}

static void test_gru_bahdanau_additive(void) { run_model("gru_bahdanau_additive"); }
static void test_gru_luong_general(void) { run_model("gru_luong_general"); }
static void test_lstm_bahdanau_scaled_dot(void) { run_model("lstm_bahdanau_scaled_dot"); }
static void test_lstm_pointer_additive(void) { run_model("lstm_pointer_additive"); }
static void test_gru_none(void) { run_model("gru_none"); }
/* two-layer decoders (decoders/stack.c): tests/ref/model_dl2_*, from
 * /usr/bin/python3 tools/ref_model.py --only dl2_ */
static void test_dec_layers_2(void) {
    run_model("dl2_gru_bahdanau_additive");
    run_model("dl2_lstm_bahdanau_additive");
    run_model("dl2_gru_luong_general");
    run_model("dl2_lstm_luong_general");
}

/* A file whose configuration says dec_hidden 8 while its tensors were made
 * with 7: the loader must refuse it, naming the first misshapen tensor. */
static void test_config_width_mismatch(void) {
    attend_model *m = NULL;
    attend_error err;
    memset(&err, 0, sizeof err);
    attend_status st = attend_model_load(&m, "ref/model_bad_width.safetensors", NULL, NULL, NULL, NULL, &err);
    printf("  message: %s\n", err.msg);
    EXPECT(st == ATTEND_ERR_FORMAT, "status %s, expected ATTEND_ERR_FORMAT", attend_status_name(st));
    EXPECT(m == NULL, "a model was returned");
    EXPECT(strstr(err.msg, "'bridge.weight'") != NULL, "message does not name bridge.weight: %s", err.msg);
    EXPECT(strstr(err.msg, "[7,10]") && strstr(err.msg, "[8,10]"), "message lacks both shapes: %s", err.msg);
    attend_model_free(m);
}

/* The transformer encoder (issue 27): tests/ref/model_tf_*, from
 * /usr/bin/python3 tools/ref_model.py --only tf_ — nn.TransformerEncoder
 * layers (pre-norm with sinusoidal positions and two layers; post-norm with
 * learned positions; no positions with a dot score on E = emb) under the
 * recurrent decoders. */
static void test_transformer_encoder(void) {
    run_model("tf_pre_sin_gru_bahdanau_additive");
    run_model("tf_post_learned_lstm_luong_general");
    run_model("tf_none_gru_bahdanau_dot");
}

/* A transformer model file without one layer tensor, and one whose
 * configuration's feed-forward width is one wider than its tensors: both
 * refused, naming the tensor. */
static void test_transformer_bad_files(void) {
    attend_model *m = NULL;
    attend_error err;
    memset(&err, 0, sizeof err);
    attend_status st = attend_model_load(&m, "ref/model_tf_missing.safetensors", NULL, NULL, NULL, NULL, &err);
    printf("  missing: %s\n", err.msg);
    EXPECT(st == ATTEND_ERR_FORMAT && m == NULL, "status %s, expected ATTEND_ERR_FORMAT", attend_status_name(st));
    EXPECT(strstr(err.msg, "'encoder.layers.1.linear2.weight'") != NULL, "message does not name the tensor: %s",
           err.msg);
    attend_model_free(m);
    m = NULL;
    st = attend_model_load(&m, "ref/model_tf_bad_ffn.safetensors", NULL, NULL, NULL, NULL, &err);
    printf("  mis-shaped: %s\n", err.msg);
    EXPECT(st == ATTEND_ERR_FORMAT && m == NULL, "status %s, expected ATTEND_ERR_FORMAT", attend_status_name(st));
    EXPECT(strstr(err.msg, "'encoder.layers.0.linear1.weight'") != NULL, "message does not name the tensor: %s",
           err.msg);
    EXPECT(strstr(err.msg, "[10,6]") && strstr(err.msg, "[11,6]"), "message lacks both shapes: %s", err.msg);
    attend_model_free(m);
}

/* The conv encoder (issue 27): tests/ref/model_cv_*, from
 * /usr/bin/python3 tools/ref_model.py --only cv_ — ConvS2S layers
 * (nn.Conv1d + GLU + scaled residual, padding zeroed before every
 * convolution): kernel 3 with two layers and sinusoidal positions, kernel 5
 * (wider than the shorter sources) with learned positions. */
static void test_conv_encoder(void) {
    run_model("cv_k3_sin_gru_bahdanau_additive");
    run_model("cv_k5_learned_lstm_luong_general");
    run_model("cv_k3_relu_none_gru_bahdanau_additive"); /* the ReLU variant, no positions */
    /* a file whose kernel is two wider than its tensors: refused naming the first convolution */
    attend_model *m = NULL;
    attend_error err;
    memset(&err, 0, sizeof err);
    attend_status st = attend_model_load(&m, "ref/model_cv_bad_kernel.safetensors", NULL, NULL, NULL, NULL, &err);
    printf("  kernel 5 over kernel-3 tensors: %s\n", err.msg);
    EXPECT(st == ATTEND_ERR_FORMAT && m == NULL, "status %s, expected ATTEND_ERR_FORMAT", attend_status_name(st));
    EXPECT(strstr(err.msg, "'encoder.convs.0.weight'") && strstr(err.msg, "[12,18]") && strstr(err.msg, "[12,30]"),
           "message does not name the tensor and both shapes: %s", err.msg);
    attend_model_free(m);
}

/* The transformer decoder (issue 27): tests/ref/model_td_*, from
 * /usr/bin/python3 tools/ref_model.py --only td_ — nn.TransformerDecoder
 * layers over nn.TransformerEncoder (pre-norm, sinusoidal positions, two
 * layers on both sides; post-norm with learned positions and three heads;
 * no positions); loss, every gradient, greedy tokens (our key/value cache
 * against the reference's whole-prefix recomputation) and alignments (the
 * top layer's cross-attention averaged over the heads). Then a file without
 * a cross-attention tensor and one whose feed-forward is one wider: refused
 * naming the tensor (and both shapes). */
static void test_transformer_decoder(void) {
    run_model("td_pre_sin_2layers");
    run_model("td_post_learned");
    run_model("td_pre_none");
    attend_model *m = NULL;
    attend_error err;
    memset(&err, 0, sizeof err);
    attend_status st = attend_model_load(&m, "ref/model_td_missing.safetensors", NULL, NULL, NULL, NULL, &err);
    printf("  missing: %s\n", err.msg);
    EXPECT(st == ATTEND_ERR_FORMAT && m == NULL, "status %s, expected ATTEND_ERR_FORMAT", attend_status_name(st));
    EXPECT(strstr(err.msg, "'decoder.layers.1.multihead_attn.in_proj_weight'") != NULL,
           "message does not name the tensor: %s", err.msg);
    attend_model_free(m);
    m = NULL;
    st = attend_model_load(&m, "ref/model_td_bad_ffn.safetensors", NULL, NULL, NULL, NULL, &err);
    printf("  mis-shaped: %s\n", err.msg);
    EXPECT(st == ATTEND_ERR_FORMAT && m == NULL, "status %s, expected ATTEND_ERR_FORMAT", attend_status_name(st));
    EXPECT(strstr(err.msg, "'decoder.layers.0.linear1.weight'") && strstr(err.msg, "[12,6]") &&
               strstr(err.msg, "[13,6]"),
           "message does not name the tensor and both shapes: %s", err.msg);
    attend_model_free(m);
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/attend_model_ref_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        fprintf(stderr, "cannot create a scratch directory from %s\n", g_dir);
        return 1;
    }
    RUN(test_gru_bahdanau_additive);
    RUN(test_gru_luong_general);
    RUN(test_lstm_bahdanau_scaled_dot);
    RUN(test_lstm_pointer_additive);
    RUN(test_gru_none);
    RUN(test_dec_layers_2);
    RUN(test_config_width_mismatch);
    RUN(test_transformer_encoder);
    RUN(test_transformer_bad_files);
    RUN(test_conv_encoder);
    RUN(test_transformer_decoder);
    rmdir(g_dir);
    return harness_summary();
}
