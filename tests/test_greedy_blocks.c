/*
 * test_greedy_blocks.c — greedy decoding of a large batch in blocks of rows
 * (src/seq2seq/decode.c, at_greedy: 64 rows a thread, each block from
 * encoding to its last step, so that the rows' decoding state stays in the
 * caches). The blocks must change no token: for a Bahdanau GRU, a Luong LSTM
 * and a transformer encoder + decoder, and an ensemble of two different
 * models, a batch of 150 sources of mixed lengths (blocks 64 + 64 + 22 on one
 * thread, 128 + 22 on two) decodes to the tokens, lengths and alignments (per
 * member, in [M,N,max_len,S]) that the same sources give in calls of 7 rows;
 * one thread's blocks and two threads' give the same bits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "harness.h"

enum { V = 13, S = 9, L = 11, N = 150 };

static int32_t src[N * S], src_len[N];

static void make_sources(void) {
    uint32_t r = 4242;
    for (int i = 0; i < N; i++) {
        r = r * 1103515245u + 12345u;
        src_len[i] = 1 + (int32_t)((r >> 16) % S);
        for (int j = 0; j < S; j++) {
            r = r * 1103515245u + 12345u;
            src[i * S + j] = j < src_len[i] ? 4 + (int32_t)((r >> 16) % (V - 4)) : ATTEND_PAD;
        }
    }
}

/* kind 0: Bahdanau GRU, 1: Luong LSTM, 2: transformer encoder and decoder; eos: added to EOS's output bias
 * (chosen per kind so that the outputs end at several lengths) */
static attend_model *make_model(int kind, uint64_t seed, float eos) {
    attend_model_config c = {.cell = kind == 1 ? ATTEND_CELL_LSTM : ATTEND_CELL_GRU,
                             .decoder = kind == 1 ? ATTEND_DECODER_LUONG : ATTEND_DECODER_BAHDANAU,
                             .score = kind == 1 ? ATTEND_SCORE_GENERAL : ATTEND_SCORE_ADDITIVE, .src_vocab = V,
                             .tgt_vocab = V, .emb = 8, .enc_hidden = 8, .enc_layers = 1, .dec_hidden = 16, .attn = 8,
                             .max_batch = N, .max_src_len = S, .max_tgt_len = L};
    if (kind == 2) {
        c.encoder = ATTEND_ENCODER_TRANSFORMER;
        c.decoder = ATTEND_DECODER_TRANSFORMER;
        c.heads = 2;
        c.enc_hidden = 16;
        c.enc_layers = 2;
        c.dec_layers = 2;
    }
    attend_model *m = NULL;
    attend_error err = {0};
    EXPECT(attend_model_create(&m, &c, seed, &err) == ATTEND_OK, "%s", err.msg);
    if (!m) return NULL;
    /* sharper outputs than the initialisation's, so that the sources decode to different lengths */
    attend_model_tensor t;
    memset(&t, 0, sizeof t);
    EXPECT(attend_model_tensor_find(m, "out.weight", &t, &err) == ATTEND_OK, "%s", err.msg);
    for (size_t i = 0; t.data && i < t.numel; i++) t.data[i] *= 6;
    EXPECT(attend_model_tensor_find(m, "out.bias", &t, &err) == ATTEND_OK, "%s", err.msg);
    if (t.data) t.data[ATTEND_PAD] = t.data[ATTEND_BOS] = -30;
    if (t.data) t.data[ATTEND_EOS] += eos;
    return m;
}

typedef struct {
    int32_t out[N * L], len[N];
    attend_real align[2 * N * L * S]; /* [M,N,L,S] */
} decoded;

static void greedy(attend_model **ms, int M, int threads, decoded *d) {
    attend_error err = {0};
    attend_set_threads(threads, NULL);
    memset(d, 0x5a, sizeof *d); /* what the call does not write shows */
    attend_decode_options o = ATTEND_OPTIONS_INIT(attend_decode_options);
    o.max_len = L;
    EXPECT(attend_decode(ms, M, src, src_len, N, S, &o, d->out, d->len, NULL, d->align, NULL, &err) == ATTEND_OK,
           "%s", err.msg);
}

/* the sources in calls of `chunk` rows (the last one shorter): the reference of the blocks (the same S) */
static void greedy_chunks(attend_model **ms, int M, int chunk, decoded *d) {
    attend_error err = {0};
    attend_set_threads(1, NULL);
    memset(d, 0x5a, sizeof *d);
    attend_decode_options o = ATTEND_OPTIONS_INIT(attend_decode_options);
    o.max_len = L;
    static int32_t out[N * L], len[N];
    static attend_real al[2 * N * L * S];
    for (int n0 = 0; n0 < N; n0 += chunk) {
        int n = N - n0 < chunk ? N - n0 : chunk;
        EXPECT(attend_decode(ms, M, src + (size_t)n0 * S, src_len + n0, n, S, &o, out, len, NULL, al, NULL, &err) ==
                   ATTEND_OK,
               "sources %d-%d: %s", n0, n0 + n - 1, err.msg);
        memcpy(d->out + (size_t)n0 * L, out, (size_t)n * L * sizeof *out);
        memcpy(d->len + n0, len, (size_t)n * sizeof *len);
        for (int k = 0; k < M; k++)
            memcpy(d->align + ((size_t)k * N + n0) * L * S, al + (size_t)k * n * L * S, (size_t)n * L * S * sizeof *al);
    }
}

/* the same tokens and lengths; alignments equal to within tol (0: bit for bit) */
static void expect_same(const decoded *a, const decoded *b, int M, double tol, const char *what) {
    int rows = 0;
    for (int n = 0; n < N; n++)
        if (memcmp(a->out + (size_t)n * L, b->out + (size_t)n * L, L * sizeof *a->out) || a->len[n] != b->len[n]) {
            if (rows++ < 3) EXPECT(0, "%s: source %d: tokens or length differ (%d vs %d)", what, n, a->len[n], b->len[n]);
        }
    EXPECT(rows == 0, "%s: %d of %d sources decode differently", what, rows, N);
    for (int k = 0; k < M; k++) {
        double worst = 0;
        size_t at = 0;
        for (size_t i = (size_t)k * N * L * S; i < (size_t)(k + 1) * N * L * S; i++) {
            double d = fabs((double)a->align[i] - (double)b->align[i]);
            if (!(d <= worst)) worst = d, at = i; /* NaN too */
        }
        if (tol == 0)
            EXPECT(!memcmp(a->align + (size_t)k * N * L * S, b->align + (size_t)k * N * L * S,
                           (size_t)N * L * S * sizeof *a->align),
                   "%s: member %d's alignments differ (worst %g at %zu)", what, k + 1, worst, at);
        else
            EXPECT(worst <= tol, "%s: member %d's alignments differ by %g at %zu (tolerance %g)", what, k + 1, worst,
                   at, tol);
    }
}

/* not vacuous: the outputs have several lengths and the alignments are not all zero */
static void expect_varied(const decoded *d, const char *what) {
    int seen[L + 1] = {0}, lengths = 0;
    for (int n = 0; n < N; n++)
        if (d->len[n] >= 0 && d->len[n] <= L && !seen[d->len[n]]++) lengths++;
    EXPECT(lengths >= 3, "%s: only %d different output lengths (a weak check)", what, lengths);
    double mass = 0;
    for (size_t i = 0; i < (size_t)N * L * S; i++) mass += d->align[i];
    EXPECT(mass > N, "%s: alignment mass %.1f (expected about one a step)", what, mass);
}

static decoded one, two, chunks;

/* tol: how far a row's alignment may move with the batch it is decoded in (not with the blocks: one thread's
 * blocks of 64 and two threads' of 128 must agree bit for bit) */
static void check(attend_model **ms, int M, double tol, const char *what) {
    greedy(ms, M, 1, &one);
    greedy(ms, M, 2, &two);
    greedy_chunks(ms, M, 7, &chunks);
    expect_varied(&chunks, what);
    expect_same(&one, &two, M, 0, what);
    expect_same(&one, &chunks, M, tol, what);
    printf("  %s: %d sources, blocked on 1 and 2 threads = in calls of 7\n", what, N);
}

/* The Bahdanau models' weights move by an ulp with the batch size (the products kp = k Wkᵀ over N·S rows take
 * another GEMM path at 63 rows than at 576), the others' do not */
static void test_kinds(void) {
    const char *names[] = {"bahdanau gru", "luong lstm", "transformer"};
    for (int kind = 0; kind < 3; kind++) {
        const float eos[] = {1, 0, 4};
        attend_model *m = make_model(kind, 11 + (uint64_t)kind, eos[kind]);
        if (!m) continue;
        check(&m, 1, kind == 0 ? 1e-6 : 0, names[kind]);
        attend_model_free(m);
    }
}

static void test_ensemble(void) {
    attend_model *ms[2] = {make_model(0, 3, 1), make_model(0, 4, 1)};
    if (ms[0] && ms[1]) check(ms, 2, 1e-6, "ensemble of two bahdanau gru");
    attend_model_free(ms[0]);
    attend_model_free(ms[1]);
}

int main(void) {
    make_sources();
    RUN(test_kinds);
    RUN(test_ensemble);
    attend_set_threads(0, NULL);
    return harness_summary();
}
