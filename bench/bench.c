/*
 * bench.c — attend's side of the PyTorch comparison (bench/run.sh drives it
 * against tools/torch_peer.py). One measurement per process, one JSON line
 * on stdout, so the driver can alternate ours and the peer's runs and read
 * each process's peak resident memory from wait4().
 *
 *   attend_bench train   [--decoder bahdanau|luong] [--len L] [--batch N] [--steps K] [--warmup W]
 *   attend_bench greedy  [--decoder ..] [--batch N] [--len L] [--max-len 22] [--iters K] [--warmup W]
 *                        [--model FILE]
 *   attend_bench beam    [--decoder ..] [--width 5] [--len L] [--max-len 22] [--iters K] [--warmup W]
 *                        greedy and beam take --quant int8|f16: the model's weights quantized
 *                        (attend_model_quantize) before decoding
 *   attend_bench export  --decoder transformer --out FILE [--batch N] [--len L] [--max-len 22]
 *                        writes the model greedy would create (seed 1234) to FILE, the
 *                        capacities N, L, max-len - 1; `greedy --model FILE` (both
 *                        sides: tools/torch_peer.py) then decodes with those weights
 *   attend_bench kernel  --name additive|scaled_dot|mha [--iters K] [--warmup W]
 *   attend_bench peak    [--threads 2]         FMA throughput (AVX2, AVX-512), core clock, L2 read
 *                                               rate, OpenBLAS sgemv at 384 x 128
 *   attend_bench smoke                          every mode at tiny sizes (a ctest test)
 *
 * The model is seed 004's: GRU encoder (bidirectional, H = 128 per
 * direction), Bahdanau decoder with additive attention A = 128 (Luong: the
 * "general" score), GRU decoder Hd = 128, embeddings D = 64, vocabulary
 * 4 specials + 19 symbols = 23, reversal task with every source of length L.
 * --decoder transformer: a Transformer encoder and decoder instead (both
 * --layers 2 layers, width D = --emb 64, --heads 4, feed-forward --hidden
 * 128 in the encoder and --dec-hidden 128 in the decoder, pre-norm,
 * sinusoidal positions); the decoder caches keys and values.
 * Greedy reports tokens_fnv, a hash (FNV-1a) of all output tokens, so two
 * runs on the same weights can be seen to produce the same tokens.
 * Decoding runs a fixed number of steps: the output bias of EOS is set to
 * -1e4 so no hypothesis ever ends early (the peer does the same).
 *
 * Timings use CLOCK_MONOTONIC; a run reports the median over its timed
 * iterations (train: throughput over all timed steps). No timing is ever
 * asserted: the smoke mode only checks that every path runs and is finite.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <attend.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define BENCH_X86 1
#endif

/* The start of every JSON line: the side and the instruction-set level the
 * kernels run at (ATTEND_ISA). */
static void json_head(void) {
    printf("{\"side\":\"ours\",\"isa\":\"%s\",\"backend\":\"%s\",\"threads_used\":%d,", attend_isa(),
           attend_gemm_backend(), attend_threads());
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(const char *what, const attend_error *e) {
    fprintf(stderr, "attend_bench: %s: %s\n", what, e ? e->msg : "");
    exit(1);
}

/* ------------------------------------------------------------- options */

typedef struct {
    const char *mode;
    const char *decoder; /* "bahdanau" | "luong" | "transformer" */
    const char *name;    /* kernel */
    const char *quant;   /* greedy, beam: "int8" | "f16" | NULL (float32) */
    const char *model;   /* greedy, beam: decode this model file's weights (export writes one) */
    const char *out;     /* export: the file to write */
    int len, batch, steps, warmup, iters, width, max_len, threads;
    int emb, hidden, dec_hidden, attn, symbols, heads, layers;
} opts;

static int arg_int(int argc, char **argv, int *i) {
    if (*i + 1 >= argc) {
        fprintf(stderr, "attend_bench: %s needs a value\n", argv[*i]);
        exit(2);
    }
    return atoi(argv[++*i]);
}

static opts parse(int argc, char **argv) {
    opts o = {"", "bahdanau", "additive", NULL, NULL, NULL, 20, 64, 20, 3, 20, 5, 22, 2, 64, 128, 128, 128, 19, 4, 2};
    if (argc < 2) {
        fprintf(stderr, "usage: attend_bench train|greedy|beam|kernel|peak|smoke [options] (see bench/bench.c)\n");
        exit(2);
    }
    o.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--decoder") && i + 1 < argc) o.decoder = argv[++i];
        else if (!strcmp(a, "--name") && i + 1 < argc) o.name = argv[++i];
        else if (!strcmp(a, "--quant") && i + 1 < argc) o.quant = argv[++i];
        else if (!strcmp(a, "--model") && i + 1 < argc) o.model = argv[++i];
        else if (!strcmp(a, "--out") && i + 1 < argc) o.out = argv[++i];
        else if (!strcmp(a, "--heads")) o.heads = arg_int(argc, argv, &i);
        else if (!strcmp(a, "--layers")) o.layers = arg_int(argc, argv, &i);
        else if (!strcmp(a, "--len")) o.len = arg_int(argc, argv, &i);
        else if (!strcmp(a, "--batch")) o.batch = arg_int(argc, argv, &i);
        else if (!strcmp(a, "--steps")) o.steps = arg_int(argc, argv, &i);
        else if (!strcmp(a, "--warmup")) o.warmup = arg_int(argc, argv, &i);
        else if (!strcmp(a, "--iters")) o.iters = arg_int(argc, argv, &i);
        else if (!strcmp(a, "--width")) o.width = arg_int(argc, argv, &i);
        else if (!strcmp(a, "--max-len")) o.max_len = arg_int(argc, argv, &i);
        else if (!strcmp(a, "--threads")) o.threads = arg_int(argc, argv, &i);
        else if (!strcmp(a, "--emb")) o.emb = arg_int(argc, argv, &i);
        else if (!strcmp(a, "--hidden")) o.hidden = arg_int(argc, argv, &i);
        else if (!strcmp(a, "--dec-hidden")) o.dec_hidden = arg_int(argc, argv, &i);
        else if (!strcmp(a, "--attn")) o.attn = arg_int(argc, argv, &i);
        else {
            fprintf(stderr, "attend_bench: unknown option %s\n", a);
            exit(2);
        }
    }
    return o;
}

/* ---------------------------------------------------------------- model */

static attend_model *make_model(const opts *o, int max_batch, int max_src, int max_tgt) {
    attend_model_config c;
    memset(&c, 0, sizeof c);
    c.cell = ATTEND_CELL_GRU;
    c.decoder = !strcmp(o->decoder, "luong") ? ATTEND_DECODER_LUONG : ATTEND_DECODER_BAHDANAU;
    c.score = c.decoder == ATTEND_DECODER_LUONG ? ATTEND_SCORE_GENERAL : ATTEND_SCORE_ADDITIVE;
    c.src_vocab = c.tgt_vocab = 4 + o->symbols;
    c.emb = o->emb;
    c.enc_hidden = o->hidden;
    c.enc_layers = 1;
    c.dec_hidden = o->dec_hidden;
    c.attn = o->attn;
    c.max_batch = max_batch;
    c.max_src_len = max_src;
    c.max_tgt_len = max_tgt;
    if (!strcmp(o->decoder, "transformer")) { /* encoder and decoder of o->layers layers each, pre-norm, sinusoidal */
        c.encoder = ATTEND_ENCODER_TRANSFORMER;
        c.decoder = ATTEND_DECODER_TRANSFORMER;
        c.heads = o->heads;
        c.enc_layers = c.dec_layers = o->layers;
    }
    attend_model *m;
    attend_error e;
    if (attend_model_create(&m, &c, 1234, &e) != ATTEND_OK) die("attend_model_create", &e);
    return m;
}

/* The model of greedy/beam: o->model's weights with the run's capacities, or a new one (seed 1234). */
static attend_model *decode_model(const opts *o, int max_batch, int max_src, int max_tgt) {
    if (!o->model) return make_model(o, max_batch, max_src, max_tgt);
    attend_model_config cap;
    memset(&cap, 0, sizeof cap);
    cap.max_batch = max_batch;
    cap.max_src_len = max_src;
    cap.max_tgt_len = max_tgt;
    attend_model *m;
    attend_error e;
    if (attend_model_load(&m, o->model, &cap, NULL, NULL, NULL, &e) != ATTEND_OK) die("attend_model_load", &e);
    return m;
}

/* export: the model greedy creates, saved to o->out (a vocabulary of the four specials and the symbols) */
static void bench_export(const opts *o) {
    if (!o->out) die("export needs --out FILE", NULL);
    attend_model *m = make_model(o, o->batch, o->len, o->max_len - 1);
    attend_vocab *v;
    attend_error e;
    if (attend_vocab_create(&v, &e) != ATTEND_OK) die("attend_vocab_create", &e);
    for (int i = 0; i < o->symbols; i++) {
        char tok[8];
        int n = snprintf(tok, sizeof tok, "%c", i < 26 ? 'a' + i : 'A' + i - 26);
        if (attend_vocab_add(v, tok, (size_t)n, NULL, &e) != ATTEND_OK) die("attend_vocab_add", &e);
    }
    if (attend_model_save(m, o->out, v, v, ATTEND_TOKENIZE_CHAR, &e) != ATTEND_OK) die("attend_model_save", &e);
    json_head(), printf("\"bench\":\"export\",\"decoder\":\"%s\",\"out\":\"%s\"}\n", o->decoder, o->out);
    attend_vocab_free(v);
    attend_model_free(m);
}

/* No early stop: EOS can never be the argmax or among the beam's candidates. */
static void forbid_eos(attend_model *m) {
    attend_model_tensor t;
    attend_error e;
    if (attend_model_tensor_find(m, "out.bias", &t, &e) != ATTEND_OK) die("out.bias", &e);
    t.data[ATTEND_EOS] = -1e4f;
}

static void random_sources(int32_t *src, int N, int L, int symbols, uint64_t seed) {
    attend_rng rng;
    attend_rng_seed(&rng, seed);
    for (int i = 0; i < N * L; i++) src[i] = 4 + (int32_t)(attend_rng_next(&rng) % (uint64_t)symbols);
}

/* ---------------------------------------------------------------- modes */

static double bench_train(const opts *o, int quiet) {
    attend_task_config tc = {ATTEND_TASK_REVERSE, o->symbols, o->len, o->len, o->batch * 32, 7};
    attend_dataset *d;
    attend_vocab *v;
    attend_error e;
    if (attend_dataset_task(&d, &v, &tc, &e) != ATTEND_OK) die("attend_dataset_task", &e);
    attend_model *m = make_model(o, o->batch, o->len, o->len);
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.clip_norm = 1.0;
    attend_trainer *tr;
    if (attend_trainer_create(&tr, m, &oc, d, o->batch, 99, &e) != ATTEND_OK) die("attend_trainer_create", &e);
    attend_step_report rep;
    for (int i = 0; i < o->warmup; i++)
        if (attend_trainer_step(tr, &rep, &e) != ATTEND_OK) die("attend_trainer_step", &e);
    double *dt = malloc((size_t)o->steps * sizeof *dt);
    double t0 = now_s();
    for (int i = 0; i < o->steps; i++) {
        double a = now_s();
        if (attend_trainer_step(tr, &rep, &e) != ATTEND_OK) die("attend_trainer_step", &e);
        dt[i] = now_s() - a;
    }
    double total = now_s() - t0;
    double sps = (double)o->batch * o->steps / total;
    double med = median(dt, o->steps);
    if (!isfinite(rep.tf.loss)) die("training loss is not finite", NULL);
    if (!quiet)
        json_head(), printf("\"bench\":\"train\",\"decoder\":\"%s\",\"len\":%d,\"batch\":%d,\"steps\":%d,"
               "\"samples_per_s\":%.2f,\"step_ms_median\":%.4f,\"loss\":%.5f}\n",
               o->decoder, o->len, o->batch, o->steps, sps, 1e3 * med, rep.tf.loss);
    free(dt);
    attend_trainer_free(tr);
    attend_model_free(m);
    attend_dataset_free(d);
    attend_vocab_free(v);
    return sps;
}

static uint32_t bench_decode(const opts *o, int beam, int quiet) {
    int N = beam ? 1 : o->batch, L = o->len, ML = o->max_len;
    attend_model *m = decode_model(o, beam ? o->width : N, L, ML - 1);
    forbid_eos(m);
    attend_error e;
    if (o->quant) {
        int int8 = !strcmp(o->quant, "int8");
        if (!int8 && strcmp(o->quant, "f16")) die("--quant must be int8 or f16", NULL);
        if (attend_model_quantize(m, int8 ? ATTEND_DTYPE_I8 : ATTEND_DTYPE_F16, &e)) die("attend_model_quantize", &e);
    }
    int32_t *src = malloc((size_t)N * L * sizeof *src), *len = malloc((size_t)N * sizeof *len);
    int nb = beam ? o->width : N;
    int32_t *out = malloc((size_t)nb * ML * sizeof *out), *out_len = malloc((size_t)nb * sizeof *out_len);
    double *score = malloc((size_t)nb * sizeof *score);
    random_sources(src, N, L, o->symbols, 5);
    for (int n = 0; n < N; n++) len[n] = L;
    int total = o->warmup + o->iters, n_out = 0;
    double *dt = malloc((size_t)o->iters * sizeof *dt);
    for (int i = 0; i < total; i++) {
        double a = now_s();
        attend_status st = beam ? attend_model_beam(m, src, L, o->width, o->width, ML, 0.0, out, out_len, score, NULL,
                                                     &n_out, &e)
                                : attend_model_greedy(m, src, len, N, L, ML, out, out_len, NULL, &e);
        double b = now_s();
        if (st != ATTEND_OK) die(beam ? "attend_model_beam" : "attend_model_greedy", &e);
        if (i >= o->warmup) dt[i - o->warmup] = b - a;
    }
    for (int n = 0; n < (beam ? n_out : N); n++)
        if (out_len[n] != ML) die("a decode ended early (EOS was forbidden)", NULL);
    double med = median(dt, o->iters);
    uint32_t fnv = 2166136261u; /* FNV-1a over the greedy tokens, row by row */
    for (int i = 0; i < (beam ? 0 : N * ML); i++) fnv = (fnv ^ (uint32_t)out[i]) * 16777619u;
    if (!quiet) {
        if (beam)
            json_head(), printf("\"bench\":\"beam\",\"decoder\":\"%s\",\"quant\":\"%s\",\"width\":%d,\"len\":%d,"
                   "\"max_len\":%d,\"latency_ms\":%.4f,\"best_score\":%.5f}\n",
                   o->decoder, o->quant ? o->quant : "f32", o->width, L, ML, 1e3 * med, score[0]);
        else
            json_head(), printf("\"bench\":\"greedy\",\"decoder\":\"%s\",\"quant\":\"%s\",\"batch\":%d,\"len\":%d,"
                   "\"max_len\":%d,\"latency_ms\":%.4f,\"seqs_per_s\":%.2f,\"tokens_fnv\":\"%08x\"}\n",
                   o->decoder, o->quant ? o->quant : "f32", N, L, ML, 1e3 * med, N / med, (unsigned)fnv);
    }
    free(dt);
    free(src);
    free(len);
    free(out);
    free(out_len);
    free(score);
    attend_model_free(m);
    return fnv;
}

/* ------------------------------------------------------------- kernels */

static void fill(attend_real *x, size_t n, attend_rng *r, double scale) {
    for (size_t i = 0; i < n; i++) x[i] = (attend_real)((2 * attend_rng_uniform(r) - 1) * scale);
}

/* Soft attention (keys, scores, masked softmax, context) forward+backward,
 * through the public one-shot API. FLOPs counted: every multiply-add as 2,
 * tanh/exp as 1, elementwise ops as 1. */
static void bench_kernel(const opts *o, int smoke, int quiet) {
    attend_rng r;
    attend_rng_seed(&r, 3);
    attend_error e;
    double flops = 0;
    double *dt = malloc((size_t)o->iters * sizeof *dt);
    int total = o->warmup + o->iters;
    char shape[128];
    if (!strcmp(o->name, "additive") || !strcmp(o->name, "scaled_dot")) {
        int add = !strcmp(o->name, "additive");
        /* additive: the model's attention at a longer source (N=32, T=S=64, Dq=128, Dk=Dv=256, A=128);
         * scaled dot: N=8, T=S=512, D=64 */
        int N = add ? 32 : 8, T = add ? 64 : 512, S = T, Dq = add ? 128 : 64, Dk = add ? 256 : 64, Dv = Dk, A = 128;
        if (smoke) N = 2, T = S = 5;
        attend_score_config sc = {add ? ATTEND_SCORE_ADDITIVE : ATTEND_SCORE_SCALED_DOT, Dq, Dk, A, 1, 0};
        size_t nq = (size_t)N * T * Dq, nk = (size_t)N * S * Dk, nv = (size_t)N * S * Dv, nw = (size_t)N * T * S;
        size_t nws = attend_attention_workspace_size(&sc, N, T, S);
        attend_real *buf = calloc(3 * (nq + nk + nv) + 2 * nw + 2 * (size_t)N * T * Dv + nws + 2 * (3 * (size_t)A * Dk + A), sizeof *buf);
        attend_real *q = buf, *k = q + nq, *v = k + nk, *dq = v + nv, *dk = dq + nq, *dv = dk + nk;
        attend_real *w = dv + nv, *ctx = w + nw, *dctx = ctx + (size_t)N * T * Dv, *ws = dctx + (size_t)N * T * Dv;
        attend_real *Wq = ws + nws, *Wk = Wq + (size_t)A * Dq, *b = Wk + (size_t)A * Dk, *vv = b + A;
        attend_real *gW = vv + A;
        fill(q, nq, &r, 1);
        fill(k, nk, &r, 1);
        fill(v, nv, &r, 1);
        fill(dctx, (size_t)N * T * Dv, &r, 1);
        fill(Wq, (size_t)A * (Dq + Dk) + 2 * A, &r, 0.1);
        attend_score_params sp = {NULL, Wq, Wk, b, vv};
        attend_score_grads sg = {NULL, gW, gW + (size_t)A * Dq, gW + (size_t)A * (Dq + Dk), gW + (size_t)A * (Dq + Dk) + A};
        double nts = (double)N * T * S;
        flops = 2.0 * nts * Dv * 3; /* context fwd, and its two backward products */
        flops += 5.0 * nts + 4.0 * nts; /* softmax forward (max, sub, exp, sum, scale) and backward */
        if (add) {
            flops += 3 * 2.0 * N * S * Dk * A + 3 * 2.0 * N * T * Dq * A; /* key/query projections, fwd + 2 bwd */
            flops += nts * A * (3 + 7); /* fwd: add, tanh, fma; bwd: v·h fma, 1-h², scale, two adds, fma */
        } else {
            flops += 3 * 2.0 * nts * Dk + nts; /* scores fwd + dq, dk; scale */
        }
        snprintf(shape, sizeof shape, "N=%d T=%d S=%d Dq=%d Dk=%d Dv=%d%s", N, T, S, Dq, Dk, Dv, add ? " A=128" : "");
        for (int i = 0; i < total; i++) {
            double a = now_s();
            if (attend_attention_forward(&sc, &sp, ctx, w, q, k, v, NULL, NULL, 0, N, T, S, Dv, ws, nws, &e))
                die("attend_attention_forward", &e);
            if (attend_attention_backward(&sc, &sp, &sg, dq, dk, dv, dctx, NULL, w, q, k, v, N, T, S, Dv, ws, nws, &e))
                die("attend_attention_backward", &e);
            if (i >= o->warmup) dt[i - o->warmup] = now_s() - a;
        }
        if (!isfinite(dq[0]) || !isfinite(dk[0])) die("non-finite kernel gradient", NULL);
        free(buf);
    } else if (!strcmp(o->name, "mha")) {
        int N = 4, T = 512, E = 256, H = 8;
        if (smoke) N = 1, T = 6, E = 8, H = 2;
        attend_mha_config mc = {E, H, 0, 0, 1};
        size_t nx = (size_t)N * T * E, nws = attend_mha_workspace_size(&mc, N, T, T);
        size_t nw = 4 * (size_t)E * E + 4 * (size_t)E;
        attend_real *buf = calloc(3 * nx + 2 * nw + nws, sizeof *buf);
        attend_real *x = buf, *y = x + nx, *dx = y + nx, *W = dx + nx, *gW = W + nw, *ws = gW + nw;
        fill(x, nx, &r, 1);
        fill(W, nw, &r, 1.0 / sqrt(E));
        size_t EE = (size_t)E * E;
        attend_mha_params p = {W, W + EE, W + 2 * EE, W + 4 * EE, W + 4 * EE + E, W + 4 * EE + 2 * E, W + 3 * EE, W + 4 * EE + 3 * E};
        attend_mha_grads g = {gW, gW + EE, gW + 2 * EE, gW + 4 * EE, gW + 4 * EE + E, gW + 4 * EE + 2 * E, gW + 3 * EE, gW + 4 * EE + 3 * E};
        double ntt = (double)N * H * T * T;
        /* projections: 4 fwd + 8 bwd products of [NT,E]x[E,E]; attention: 2 fwd + 4 bwd of N*H*T*T*dh */
        flops = 12 * 2.0 * N * T * (double)E * E + 6 * 2.0 * ntt * (E / H) + 9.0 * ntt + ntt;
        snprintf(shape, sizeof shape, "N=%d T=S=%d E=%d H=%d", N, T, E, H);
        for (int i = 0; i < total; i++) {
            double a = now_s();
            if (attend_self_attention_forward(&mc, &p, y, NULL, 0, x, NULL, 0, N, T, ws, nws, &e))
                die("attend_self_attention_forward", &e);
            memset(dx, 0, nx * sizeof *dx);
            if (attend_self_attention_backward(&mc, &p, &g, dx, y, x, N, T, ws, nws, &e))
                die("attend_self_attention_backward", &e);
            if (i >= o->warmup) dt[i - o->warmup] = now_s() - a;
        }
        if (!isfinite(dx[0])) die("non-finite kernel gradient", NULL);
        free(buf);
    } else {
        fprintf(stderr, "attend_bench: unknown kernel %s (additive, scaled_dot, mha)\n", o->name);
        exit(2);
    }
    double med = median(dt, o->iters);
    if (!quiet)
        json_head(), printf("\"bench\":\"kernel\",\"name\":\"%s\",\"shape\":\"%s\",\"gflop\":%.4f,"
               "\"ms\":%.4f,\"gflops\":%.3f}\n",
               o->name, shape, flops * 1e-9, 1e3 * med, flops * 1e-9 / med);
    free(dt);
}

/* ---------------------------------------------------------------- peak */

#ifdef BENCH_X86
/* 12 independent FMA chains (enough to cover latency 4 x 2 pipes, with room)
 * of `width` lanes, each in its own variable so that the chains live in
 * registers (an array indexed in a loop that is not unrolled went through
 * memory, and store-to-load latency held the loop to one FMA per cycle);
 * returns FLOPs done. */
#define FMA12(fma)                                                                                   \
    a0 = fma(a0, m, c), a1 = fma(a1, m, c), a2 = fma(a2, m, c), a3 = fma(a3, m, c);                \
    a4 = fma(a4, m, c), a5 = fma(a5, m, c), a6 = fma(a6, m, c), a7 = fma(a7, m, c);                \
    a8 = fma(a8, m, c), a9 = fma(a9, m, c), a10 = fma(a10, m, c), a11 = fma(a11, m, c)
__attribute__((target("avx2,fma"))) static double fma_avx2(long iters, float *sink) {
    __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    __m256 a0 = _mm256_set1_ps(0), a1 = _mm256_set1_ps(1), a2 = _mm256_set1_ps(2), a3 = _mm256_set1_ps(3);
    __m256 a4 = _mm256_set1_ps(4), a5 = _mm256_set1_ps(5), a6 = _mm256_set1_ps(6), a7 = _mm256_set1_ps(7);
    __m256 a8 = _mm256_set1_ps(8), a9 = _mm256_set1_ps(9), a10 = _mm256_set1_ps(10), a11 = _mm256_set1_ps(11);
    for (long it = 0; it < iters; it++) {
        FMA12(_mm256_fmadd_ps);
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
    *sink = _mm256_cvtss_f32(s);
    return 2.0 * 8 * 12 * (double)iters;
}
__attribute__((target("avx512f"))) static double fma_avx512(long iters, float *sink) {
    __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    __m512 a0 = _mm512_set1_ps(0), a1 = _mm512_set1_ps(1), a2 = _mm512_set1_ps(2), a3 = _mm512_set1_ps(3);
    __m512 a4 = _mm512_set1_ps(4), a5 = _mm512_set1_ps(5), a6 = _mm512_set1_ps(6), a7 = _mm512_set1_ps(7);
    __m512 a8 = _mm512_set1_ps(8), a9 = _mm512_set1_ps(9), a10 = _mm512_set1_ps(10), a11 = _mm512_set1_ps(11);
    for (long it = 0; it < iters; it++) {
        FMA12(_mm512_fmadd_ps);
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    *sink = _mm512_reduce_add_ps(s);
    return 2.0 * 16 * 12 * (double)iters;
}
#undef FMA12

/* GB/s one core reads a buffer of `bytes` (L2-resident when small: a
 * recurrent weight matrix 384 x 128 is 192 KiB) over and over, with four
 * AVX-512 accumulators. */
__attribute__((target("avx512f"))) static double read_gbs(size_t bytes, long reps) {
    size_t n = bytes / sizeof(float) / 64 * 64;
    float *buf = aligned_alloc(64, n * sizeof *buf);
    if (!buf) return 0;
    for (size_t i = 0; i < n; i++) buf[i] = (float)(i % 7);
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        double a = now_s();
        for (long r = 0; r < reps; r++)
            for (size_t i = 0; i < n; i += 64) {
                s0 = _mm512_add_ps(s0, _mm512_load_ps(buf + i));
                s1 = _mm512_add_ps(s1, _mm512_load_ps(buf + i + 16));
                s2 = _mm512_add_ps(s2, _mm512_load_ps(buf + i + 32));
                s3 = _mm512_add_ps(s3, _mm512_load_ps(buf + i + 48));
            }
        double g = (double)n * sizeof *buf * (double)reps / (now_s() - a) * 1e-9;
        if (g > best) best = g;
    }
    float sink = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
    free(buf);
    return sink == -1.0f ? 0 : best;
}

/* Microseconds of one y = W x with W 384 x 128 (a GRU's recurrent weights at
 * H = 128) through OpenBLAS's sgemv, when the program has it (weak: the
 * portable build has no BLAS), median of 1000 calls after warm-up. */
extern void cblas_sgemv(int order, int trans, int m, int n, float alpha, const float *a, int lda, const float *x,
                        int incx, float beta, float *y, int incy) __attribute__((weak));
static double sgemv_us(void) {
    if (!cblas_sgemv) return 0;
    enum { M = 384, K = 128, calls = 1000 };
    float *w = malloc((size_t)M * K * sizeof *w), x[K], y[M];
    double *dt = malloc(calls * sizeof *dt);
    if (!w || !dt) return 0;
    for (int i = 0; i < M * K; i++) w[i] = (float)(i % 13) * 0.01f;
    for (int i = 0; i < K; i++) x[i] = 0.5f;
    for (int i = 0; i < 100 + calls; i++) {
        double a = now_s();
        cblas_sgemv(101 /* CblasRowMajor */, 111 /* CblasNoTrans */, M, K, 1, w, K, x, 1, 0, y, 1);
        if (i >= 100) dt[i - 100] = now_s() - a;
    }
    double us = median(dt, calls) * 1e6;
    free(w);
    free(dt);
    return y[0] == -1.0f ? 0 : us;
}

/* The clock the core actually runs at (GHz): a chain of dependent integer
 * adds retires one add per cycle. /proc/cpuinfo's "cpu MHz" under a
 * hypervisor is the nominal TSC rate, not the (boosted) core clock. */
static double clock_ghz(long iters) {
    unsigned long x = 0;
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        double a = now_s();
        for (long i = 0; i < iters; i++)
            __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                             "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
                             : "+r"(x));
        double g = 8.0 * (double)iters / (now_s() - a) * 1e-9;
        if (g > best) best = g;
    }
    return x ? best : 0;
}
typedef struct {
    int avx512;
    long iters;
    double flops, seconds;
    float sink;
} peak_job;
static void *peak_thread(void *arg) {
    peak_job *j = arg;
    double a = now_s();
    j->flops = j->avx512 ? fma_avx512(j->iters, &j->sink) : fma_avx2(j->iters, &j->sink);
    j->seconds = now_s() - a;
    return NULL;
}
/* GFLOP/s of `threads` threads running the FMA loop at once (best of 5). */
static double peak_run(int avx512, int threads, long iters) {
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        pthread_t th[64];
        peak_job jobs[64];
        for (int t = 0; t < threads; t++) {
            jobs[t].avx512 = avx512;
            jobs[t].iters = iters;
            pthread_create(&th[t], NULL, peak_thread, &jobs[t]);
        }
        double sum = 0;
        for (int t = 0; t < threads; t++) {
            pthread_join(th[t], NULL);
            sum += jobs[t].flops / jobs[t].seconds;
        }
        if (sum > best) best = sum;
    }
    return best * 1e-9;
}
#endif

static void bench_peak(const opts *o, int smoke, int quiet) {
#ifdef BENCH_X86
    long iters = smoke ? 1000 : 20000000;
    int threads = o->threads < 1 ? 1 : o->threads > 64 ? 64 : o->threads;
    __builtin_cpu_init();
    int has512 = __builtin_cpu_supports("avx512f"), has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    double g2_1 = has2 ? peak_run(0, 1, iters) : 0, g2_n = has2 ? peak_run(0, threads, iters) : 0;
    double g5_1 = has512 ? peak_run(1, 1, iters) : 0, g5_n = has512 ? peak_run(1, threads, iters) : 0;
    double ghz = clock_ghz(smoke ? 1000 : 50000000);
    double l2 = has512 ? read_gbs(192 * 1024, smoke ? 2 : 20000) : 0, gemv = sgemv_us();
    if (!quiet)
        json_head(), printf("\"bench\":\"peak\",\"threads\":%d,\"avx2_1t\":%.2f,\"avx2_nt\":%.2f,"
               "\"avx512_1t\":%.2f,\"avx512_nt\":%.2f,\"clock_ghz\":%.3f,\"read_192k_gbs\":%.1f,"
               "\"sgemv_384x128_us\":%.3f,\"sgemv_gbs\":%.1f}\n",
               threads, g2_1, g2_n, g5_1, g5_n, ghz, l2, gemv, gemv > 0 ? 384.0 * 128 * 4 / gemv * 1e-3 : 0);
#else
    (void)o;
    (void)smoke;
    if (!quiet) json_head(), printf("\"bench\":\"peak\",\"threads\":0}\n");
#endif
}

int main(int argc, char **argv) {
    opts o = parse(argc, argv);
    if (!strcmp(o.mode, "train")) bench_train(&o, 0);
    else if (!strcmp(o.mode, "greedy")) bench_decode(&o, 0, 0);
    else if (!strcmp(o.mode, "beam")) bench_decode(&o, 1, 0);
    else if (!strcmp(o.mode, "export")) bench_export(&o);
    else if (!strcmp(o.mode, "kernel")) bench_kernel(&o, 0, 0);
    else if (!strcmp(o.mode, "peak")) bench_peak(&o, 0, 0);
    else if (!strcmp(o.mode, "smoke")) {
        /* every path at tiny sizes; prints the same JSON lines */
        opts s = o;
        s.len = 4, s.batch = 3, s.steps = 2, s.warmup = 1, s.iters = 2, s.width = 2, s.max_len = 5;
        s.emb = 4, s.hidden = 3, s.dec_hidden = 5, s.attn = 4, s.symbols = 3, s.heads = 2;
        const char *decs[3] = {"bahdanau", "luong", "transformer"};
        for (int d = 0; d < 3; d++) {
            s.decoder = decs[d];
            bench_train(&s, 0);
            bench_decode(&s, 0, 0);
            bench_decode(&s, 1, 0);
            s.quant = d == 1 ? "f16" : "int8"; /* the quantized weights' greedy and beam */
            bench_decode(&s, 0, 0);
            bench_decode(&s, 1, 0);
            s.quant = NULL;
        }
        /* export, then greedy on the file's weights: the same tokens as on the model itself */
        s.out = "attend_bench_smoke.safetensors";
        uint32_t made = bench_decode(&s, 0, 1);
        bench_export(&s);
        s.model = s.out;
        uint32_t loaded = bench_decode(&s, 0, 0);
        remove(s.out);
        if (loaded != made) die("greedy on the exported file's weights gave other tokens", NULL);
        s.model = s.out = NULL;
        const char *ks[3] = {"additive", "scaled_dot", "mha"};
        for (int k = 0; k < 3; k++) {
            s.name = ks[k];
            bench_kernel(&s, 1, 0);
        }
        bench_peak(&s, 1, 0);
        printf("smoke: ok\n");
    } else {
        fprintf(stderr, "attend_bench: unknown mode %s\n", o.mode);
        return 2;
    }
    return 0;
}
