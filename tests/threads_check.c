/*
 * threads_check.c — with threads (-DATTEND_THREADS=ON), results must not depend
 * on the thread count: every threaded loop writes disjoint rows and every sum
 * shared between rows is taken on one thread. Runs the same work at 1 and at 2
 * threads and compares the results (byte for byte with the portable GEMM; see
 * `exact` below):
 *   - 4 training steps (GRU/Bahdanau/additive, LSTM/Luong/general, a
 *     transformer encoder and decoder of 2 layers each, 4 heads, a conv encoder
 *     of kernel 3 under GRU/Bahdanau) at batch 64
 *     (forward, backward, clipping, Adam): the parameters afterwards;
 *   - greedy decoding at batch 64: tokens, lengths, alignments;
 *   - beam search (width 4): tokens, scores, alignments;
 *   - the one-shot additive attention forward + backward (T > 1, so a thread's
 *     rows hold whole batch entries) and multi-head self-attention.
 * Registered only in threaded builds (tests/cmake/threads.cmake).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <attend.h>

static int passed, failed;

#define MUST(call)                                                                      \
    do {                                                                                \
        attend_error e_;                                                                \
        if ((call) != ATTEND_OK) {                                                      \
            fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, e_.msg); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)
#define ERR (&e_)

/* Byte identity is required with the portable GEMM. OpenBLAS's results for
 * a block of rows can depend on how the rows are split (its AVX2 "Haswell"
 * kernels treat a block's edge rows differently; the AVX-512 kernels do not),
 * so with OpenBLAS floating-point results must agree to rounding and
 * token sequences exactly. */
static int exact;

static void report(const char *what, int ok, const char *detail) {
    if (ok) passed++;
    else failed++;
    printf("  %-5s %s: %s\n", ok ? "ok" : "FAIL", what, detail);
}

static void same(const char *what, const void *a, const void *b, size_t bytes) {
    char msg[160];
    if (memcmp(a, b, bytes) == 0) {
        snprintf(msg, sizeof msg, "%zu bytes identical at 1 and 2 threads", bytes);
        report(what, 1, msg);
        return;
    }
    size_t i = 0;
    while (((const unsigned char *)a)[i] == ((const unsigned char *)b)[i]) i++;
    snprintf(msg, sizeof msg, "1 and 2 threads differ, first at byte %zu of %zu", i, bytes);
    report(what, 0, msg);
}

/* |a - b| <= 1e-5 + 1e-4 |a| everywhere (exact mode: byte identity). */
static void close_reals(const char *what, const attend_real *a, const attend_real *b, size_t n) {
    if (exact) {
        same(what, a, b, n * sizeof *a);
        return;
    }
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]) - 1e-4 * fabs((double)a[i]);
        if (!(d <= worst)) worst = d, at = i;
    }
    char msg[160];
    snprintf(msg, sizeof msg, "%zu values within 1e-5 + 1e-4|x| at 1 and 2 threads (worst excess %.3g at %zu)", n,
             worst, at);
    report(what, worst <= 1e-5, msg);
}

static void close_doubles(const char *what, const double *a, const double *b, size_t n) {
    if (exact) {
        same(what, a, b, n * sizeof *a);
        return;
    }
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]) - 1e-4 * fabs(a[i]);
        if (!(d <= worst)) worst = d;
    }
    char msg[160];
    snprintf(msg, sizeof msg, "%zu values within 1e-5 + 1e-4|x| (worst excess %.3g)", n, worst);
    report(what, worst <= 1e-5, msg);
}

/* Everything the model run produces at one thread count. */
typedef struct {
    attend_real *params;
    size_t n_params;
    int32_t out[64 * 24], out_len[64];
    attend_real align[64 * 24 * 20];
    int32_t bout[4 * 24], blen[4];
    double bscore[4];
    attend_real balign[4 * 24 * 20];
} model_run;

/* conv_encoder: the conv encoder (kernel 3, 2 layers) under the recurrent decoder */
static int conv_encoder;

static void run_model(model_run *r, attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score) {
    int tf = dec == ATTEND_DECODER_TRANSFORMER; /* with the transformer encoder, 2 + 2 layers, 4 heads */
    attend_model_config c;
    memset(&c, 0, sizeof c);
    c.cell = cell;
    c.decoder = dec;
    c.score = score;
    c.src_vocab = c.tgt_vocab = 4 + 19;
    c.emb = 32;
    c.enc_hidden = 64;
    c.enc_layers = 1;
    c.dec_hidden = 64;
    c.attn = 64;
    c.max_batch = 64;
    c.max_src_len = 20;
    c.max_tgt_len = 23;
    if (tf) {
        c.encoder = ATTEND_ENCODER_TRANSFORMER;
        c.heads = 4;
        c.enc_layers = c.dec_layers = 2;
    }
    if (conv_encoder) {
        c.encoder = ATTEND_ENCODER_CONV;
        c.kernel = 3;
        c.enc_layers = 2;
    }
    attend_task_config tc = {ATTEND_TASK_REVERSE, 19, 10, 20, 256, 1};
    attend_dataset *d;
    attend_vocab *v;
    attend_model *m;
    attend_trainer *tr;
    MUST(attend_dataset_task(&d, &v, &tc, ERR));
    MUST(attend_model_create(&m, &c, 11, ERR));
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.clip_norm = 1.0;
    MUST(attend_trainer_create(&tr, m, &oc, d, 64, 5, ERR));
    attend_step_report rep;
    for (int i = 0; i < 4; i++) MUST(attend_trainer_step(tr, &rep, ERR));
    r->n_params = attend_model_param_count(m);
    r->params = malloc(r->n_params * sizeof *r->params);
    memcpy(r->params, attend_model_params(m), r->n_params * sizeof *r->params);

    int32_t src[64 * 20], len[64];
    for (int n = 0; n < 64; n++) {
        len[n] = 10 + n % 11;
        for (int j = 0; j < 20; j++) src[n * 20 + j] = 4 + (n * 7 + j * 3) % 19;
    }
    memset(r->align, 0, sizeof r->align);
    MUST(attend_model_greedy(m, src, len, 64, 20, 24, r->out, r->out_len, r->align, ERR));
    int n_out;
    memset(r->balign, 0, sizeof r->balign);
    MUST(attend_model_beam(m, src, 20, 4, 4, 24, 0.6, r->bout, r->blen, r->bscore, r->balign, &n_out, ERR));

    attend_trainer_free(tr);
    attend_model_free(m);
    attend_dataset_free(d);
    attend_vocab_free(v);
}

static void check_model(const char *label, attend_cell_kind cell, attend_decoder_kind dec, attend_score_kind score) {
    static model_run r[2];
    printf("%s\n", label);
    for (int t = 0; t < 2; t++) {
        attend_set_threads(t + 1, NULL);
        run_model(&r[t], cell, dec, score);
    }
    close_reals("parameters after 4 training steps", r[0].params, r[1].params, r[0].n_params);
    same("greedy tokens", r[0].out, r[1].out, sizeof r[0].out);
    same("greedy lengths", r[0].out_len, r[1].out_len, sizeof r[0].out_len);
    close_reals("greedy alignments", r[0].align, r[1].align, sizeof r[0].align / sizeof(attend_real));
    same("beam tokens", r[0].bout, r[1].bout, sizeof r[0].bout);
    close_doubles("beam scores", r[0].bscore, r[1].bscore, 4);
    close_reals("beam alignments", r[0].balign, r[1].balign, sizeof r[0].balign / sizeof(attend_real));
    for (int t = 0; t < 2; t++) free(r[t].params);
}

static void fill(attend_real *x, size_t n, attend_rng *r, double scale) {
    for (size_t i = 0; i < n; i++) x[i] = (attend_real)(scale * (2 * attend_rng_uniform(r) - 1));
}

static void check_kernels(void) {
    printf("kernels\n");
    const int N = 8, T = 24, S = 24, Dq = 64, Dk = 96, Dv = 96, A = 64;
    attend_score_config sc = {ATTEND_SCORE_ADDITIVE, Dq, Dk, A, 1, 0};
    size_t nq = (size_t)N * T * Dq, nk = (size_t)N * S * Dk, nv = (size_t)N * S * Dv, nw = (size_t)N * T * S;
    size_t nc = (size_t)N * T * Dv, nws = attend_attention_workspace_size(&sc, N, T, S);
    size_t np = (size_t)A * (Dq + Dk) + 2 * (size_t)A;
    attend_real *in = malloc((nq + nk + nv + nc + np) * sizeof *in);
    attend_real *q = in, *k = q + nq, *v = k + nk, *dctx = v + nv, *W = dctx + nc;
    attend_rng rng;
    attend_rng_seed(&rng, 5);
    fill(in, nq + nk + nv + nc, &rng, 1);
    fill(W, np, &rng, 0.2);
    uint8_t valid[8 * 24];
    for (int n = 0; n < N; n++)
        for (int j = 0; j < S; j++) valid[n * S + j] = j < S - n; /* padding differs per entry */
    attend_score_params sp = {NULL, W, W + (size_t)A * Dq, W + (size_t)A * (Dq + Dk), W + (size_t)A * (Dq + Dk) + A};
    size_t nout = nc + nw + nq + nk + nv + np;
    attend_real *out[2], *ws = malloc(nws * sizeof *ws);
    for (int t = 0; t < 2; t++) {
        attend_set_threads(t + 1, NULL);
        out[t] = calloc(nout, sizeof *out[t]);
        attend_real *ctx = out[t], *w = ctx + nc, *dq = w + nw, *dk = dq + nq, *dv = dk + nk, *g = dv + nv;
        attend_score_grads sg = {NULL, g, g + (size_t)A * Dq, g + (size_t)A * (Dq + Dk), g + (size_t)A * (Dq + Dk) + A};
        MUST(attend_attention_forward(&sc, &sp, ctx, w, q, k, v, valid, NULL, 0, N, T, S, Dv, ws, nws, ERR));
        MUST(attend_attention_backward(&sc, &sp, &sg, dq, dk, dv, dctx, NULL, w, q, k, v, N, T, S, Dv, ws, nws, ERR));
    }
    close_reals("additive attention: context, weights, dq, dk, dv, parameter grads", out[0], out[1], nout);
    for (int t = 0; t < 2; t++) free(out[t]);
    free(ws);
    free(in);

    const int E = 64, H = 4, Tm = 96, Nm = 2;
    attend_mha_config mc = {E, H, 0, 0, 1};
    size_t nx = (size_t)Nm * Tm * E, nmw = 4 * (size_t)E * E + 4 * (size_t)E;
    size_t nmws = attend_mha_workspace_size(&mc, Nm, Tm, Tm);
    attend_real *x = malloc((nx + nmw) * sizeof *x), *Wm = x + nx, *mws = malloc(nmws * sizeof *mws);
    fill(x, nx, &rng, 1);
    fill(Wm, nmw, &rng, 1.0 / sqrt(E));
    size_t EE = (size_t)E * E;
    attend_mha_params p = {Wm, Wm + EE, Wm + 2 * EE, Wm + 4 * EE, Wm + 4 * EE + E, Wm + 4 * EE + 2 * E, Wm + 3 * EE,
                           Wm + 4 * EE + 3 * E};
    attend_real *mo[2];
    for (int t = 0; t < 2; t++) {
        attend_set_threads(t + 1, NULL);
        mo[t] = calloc(2 * nx + nmw, sizeof *mo[t]);
        attend_real *y = mo[t], *dx = y + nx, *gW = dx + nx;
        attend_mha_grads g = {gW, gW + EE, gW + 2 * EE, gW + 4 * EE, gW + 4 * EE + E, gW + 4 * EE + 2 * E, gW + 3 * EE,
                              gW + 4 * EE + 3 * E};
        MUST(attend_self_attention_forward(&mc, &p, y, NULL, 0, x, NULL, 1, Nm, Tm, mws, nmws, ERR));
        MUST(attend_self_attention_backward(&mc, &p, &g, dx, y, x, Nm, Tm, mws, nmws, ERR));
    }
    close_reals("causal self-attention: output, dx, parameter grads", mo[0], mo[1], 2 * nx + nmw);
    for (int t = 0; t < 2; t++) free(mo[t]);
    free(x);
    free(mws);
}

int main(void) {
    exact = strcmp(attend_gemm_backend(), "own") == 0;
    printf("GEMM backend %s: %s\n", attend_gemm_backend(),
           exact ? "results must be byte-identical" : "floating-point results must agree to rounding");
    check_model("GRU / Bahdanau / additive", ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE);
    check_model("LSTM / Luong / general", ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL);
    check_model("transformer encoder / transformer decoder (key/value cache)", ATTEND_CELL_GRU,
                ATTEND_DECODER_TRANSFORMER, ATTEND_SCORE_ADDITIVE);
    conv_encoder = 1;
    check_model("conv encoder (kernel 3, 2 layers) / GRU Bahdanau / additive", ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU,
                ATTEND_SCORE_ADDITIVE);
    conv_encoder = 0;
    check_kernels();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
