/*
 * isa_check.c — the instruction-set switch (ATTEND_ISA, src/core/isa.h) really
 * changes the code that runs, and every level computes the same results.
 *
 * The parent runs itself once per level this CPU has (baseline, avx2,
 * avx512), each child under ATTEND_ISA=<level>, twice; a child writes to a
 * file the level it ran at (attend_isa()), the lane fingerprint of the
 * dispatched probe (at_isa_probe: how many float lanes its reduction used)
 * and the results of:
 *   - 4 training steps (GRU/Bahdanau/additive and LSTM/Luong/general, batch
 *     32, clipping, Adam) then greedy decoding of 32 sources: parameters,
 *     tokens, alignments; beam search (width 4) on the LSTM model;
 *   - the one-shot additive attention forward + backward with padding;
 *   - 3 SGD-with-momentum steps on the GRU model.
 * Checks: each child ran at the level asked for; the fingerprint grew with
 * the level (gcc: 4, 8, 16 lanes; only printed for clang, whose AVX-512
 * copies use 256-bit vectors); two runs at one level are byte-identical
 * (deterministic); every level agrees with baseline: tokens exactly, values
 * within 1e-5 + 1e-4 |x| (not bytes: a reduction over 4, 8 or 16 lanes adds
 * in a different order; the line gives the largest difference).
 * Registered in tests/cmake/isa.cmake.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <attend.h>

#include "../src/core/isa.h"

static int passed, failed;

static void report(int ok, const char *fmt, const char *a, const char *b, const char *detail) {
    if (ok) passed++;
    else failed++;
    printf("  %-5s ", ok ? "ok" : "FAIL");
    printf(fmt, a, b);
    printf(": %s\n", detail);
}

#define MUST(call)                                                                      \
    do {                                                                                \
        attend_error e_;                                                                \
        if ((call) != ATTEND_OK) {                                                      \
            fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, e_.msg); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)
#define ERR (&e_)

/* ------------------------------------------------------------ the child */

/* A result file: sections of reals or int32s, each "tag kind count" + data. */
static void put(FILE *f, const char *tag, int is_real, const void *data, size_t n) {
    size_t sz = is_real ? sizeof(attend_real) : sizeof(int32_t);
    fprintf(f, "%s %d %zu\n", tag, is_real, n);
    fwrite(data, sz, n, f);
    fputc('\n', f);
}

static void run_model(FILE *f, const char *tag, attend_cell_kind cell, attend_decoder_kind dec,
                      attend_score_kind score, attend_optim_kind opt) {
    enum { NB = 32, S = 20, L = 24 };
    attend_model_config c;
    memset(&c, 0, sizeof c);
    c.cell = cell;
    c.decoder = dec;
    c.score = score;
    c.src_vocab = c.tgt_vocab = 4 + 19;
    c.emb = 32;
    c.enc_hidden = 48;
    c.enc_layers = 1;
    c.dec_hidden = 64;
    c.attn = 40;
    c.max_batch = NB;
    c.max_src_len = S;
    c.max_tgt_len = S + 3;
    attend_task_config tc = {ATTEND_TASK_REVERSE, 19, 10, S, 256, 1};
    attend_dataset *d;
    attend_vocab *v;
    attend_model *m;
    attend_trainer *tr;
    MUST(attend_dataset_task(&d, &v, &tc, ERR));
    MUST(attend_model_create(&m, &c, 11, ERR));
    attend_optim_config oc = attend_optim_defaults(opt);
    oc.clip_norm = 1.0;
    if (opt == ATTEND_OPT_SGD) oc.momentum = 0.9, oc.lr = 0.05;
    MUST(attend_trainer_create(&tr, m, &oc, d, NB, 5, ERR));
    attend_step_report rep;
    for (int i = 0; i < 4; i++) MUST(attend_trainer_step(tr, &rep, ERR));
    char name[64];
    snprintf(name, sizeof name, "%s.params", tag);
    put(f, name, 1, attend_model_params(m), attend_model_param_count(m));

    static int32_t src[NB * S], len[NB], out[NB * L], out_len[NB];
    static attend_real align[NB * L * S];
    for (int n = 0; n < NB; n++) {
        len[n] = 8 + n % 13;
        for (int j = 0; j < S; j++) src[n * S + j] = 4 + (n * 7 + j * 3) % 19;
    }
    memset(align, 0, sizeof align);
    MUST(attend_model_greedy(m, src, len, NB, S, L, out, out_len, align, ERR));
    snprintf(name, sizeof name, "%s.greedy_tokens", tag);
    put(f, name, 0, out, sizeof out / sizeof *out);
    snprintf(name, sizeof name, "%s.greedy_lengths", tag);
    put(f, name, 0, out_len, NB);
    snprintf(name, sizeof name, "%s.greedy_alignments", tag);
    put(f, name, 1, align, sizeof align / sizeof *align);
    if (cell == ATTEND_CELL_LSTM) {
        static int32_t bout[4 * L], blen[4];
        static attend_real balign[4 * L * S];
        double bscore[4];
        int n_out;
        memset(balign, 0, sizeof balign);
        MUST(attend_model_beam(m, src, S, 4, 4, L, 0.6, bout, blen, bscore, balign, &n_out, ERR));
        snprintf(name, sizeof name, "%s.beam_tokens", tag);
        put(f, name, 0, bout, sizeof bout / sizeof *bout);
        attend_real bs[4];
        for (int i = 0; i < 4; i++) bs[i] = (attend_real)bscore[i];
        snprintf(name, sizeof name, "%s.beam_scores", tag);
        put(f, name, 1, bs, 4);
        snprintf(name, sizeof name, "%s.beam_alignments", tag);
        put(f, name, 1, balign, sizeof balign / sizeof *balign);
    }
    attend_trainer_free(tr);
    attend_model_free(m);
    attend_dataset_free(d);
    attend_vocab_free(v);
}

static void fill(attend_real *x, size_t n, attend_rng *r, double scale) {
    for (size_t i = 0; i < n; i++) x[i] = (attend_real)(scale * (2 * attend_rng_uniform(r) - 1));
}

static void run_kernels(FILE *f) {
    const int N = 4, T = 9, S = 21, Dq = 24, Dk = 40, Dv = 40, A = 36; /* odd sizes: vector tails too */
    attend_score_config sc = {ATTEND_SCORE_ADDITIVE, Dq, Dk, A, 1, 0};
    size_t nq = (size_t)N * T * Dq, nk = (size_t)N * S * Dk, nv = (size_t)N * S * Dv, nw = (size_t)N * T * S;
    size_t nc = (size_t)N * T * Dv, nws = attend_attention_workspace_size(&sc, N, T, S);
    size_t np = (size_t)A * (Dq + Dk) + 2 * (size_t)A;
    attend_real *in = malloc((nq + nk + nv + nc + np) * sizeof *in);
    attend_real *q = in, *k = q + nq, *v = k + nk, *dctx = v + nv, *W = dctx + nc;
    attend_rng rng;
    attend_rng_seed(&rng, 5);
    fill(in, nq + nk + nv + nc, &rng, 1.5);
    fill(W, np, &rng, 0.3);
    uint8_t valid[4 * 21];
    for (int n = 0; n < N; n++)
        for (int j = 0; j < S; j++) valid[n * S + j] = j < S - 3 * n;
    attend_score_params sp = {NULL, W, W + (size_t)A * Dq, W + (size_t)A * (Dq + Dk), W + (size_t)A * (Dq + Dk) + A};
    size_t nout = nc + nw + nq + nk + nv + np;
    attend_real *out = calloc(nout, sizeof *out), *ws = malloc(nws * sizeof *ws);
    attend_real *ctx = out, *w = ctx + nc, *dq = w + nw, *dk = dq + nq, *dv = dk + nk, *g = dv + nv;
    attend_score_grads sg = {NULL, g, g + (size_t)A * Dq, g + (size_t)A * (Dq + Dk), g + (size_t)A * (Dq + Dk) + A};
    MUST(attend_attention_forward(&sc, &sp, ctx, w, q, k, v, valid, NULL, 0, N, T, S, Dv, ws, nws, ERR));
    MUST(attend_attention_backward(&sc, &sp, &sg, dq, dk, dv, dctx, NULL, w, q, k, v, N, T, S, Dv, ws, nws, ERR));
    put(f, "additive_attention", 1, out, nout);
    free(out);
    free(ws);
    free(in);
}

static int child(const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    float x[1024];
    x[0] = 16777216.0f; /* 2^24 */
    for (int i = 1; i < 1024; i++) x[i] = 1.0f;
    float s = at_isa_probe(x, 1024);
    double lost = 1024.0 - ((double)s - 16777216.0); /* = n / lanes */
    fprintf(f, "%s %d\n", attend_isa(), lost > 0 ? (int)(1024.0 / lost + 0.5) : 0);
    run_model(f, "gru_bahdanau_adam", ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE,
              ATTEND_OPT_ADAM);
    run_model(f, "lstm_luong_adam", ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, ATTEND_OPT_ADAM);
    run_model(f, "gru_bahdanau_sgd", ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE,
              ATTEND_OPT_SGD);
    run_kernels(f);
    return fclose(f) != 0;
}

/* ----------------------------------------------------------- the parent */

typedef struct {
    char isa[16];
    int lanes;
    char *data; /* the whole file */
    size_t size;
} result;

static int run_child(const char *self, const char *level, const char *path, result *r) {
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
        setenv("ATTEND_ISA", level, 1);
        execl(self, self, "--child", path, (char *)NULL);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    r->size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    r->data = malloc(r->size + 1);
    if (fread(r->data, 1, r->size, f) != r->size) r->size = 0;
    r->data[r->size] = 0;
    fclose(f);
    remove(path);
    return sscanf(r->data, "%15s %d", r->isa, &r->lanes) == 2;
}

/* Compares every section of b with a's: tokens exactly, reals within
 * 1e-5 + 1e-4 |x|; prints one line per section. */
static void compare(const result *a, const result *b, const char *la, const char *lb) {
    const char *pa = strchr(a->data, '\n') + 1, *pb = strchr(b->data, '\n') + 1;
    const char *ea = a->data + a->size;
    while (pa < ea) {
        char tag[64], tagb[64];
        int real, realb, ha, hb;
        size_t n, nb;
        if (sscanf(pa, "%63s %d %zu\n%n", tag, &real, &n, &ha) != 3 ||
            sscanf(pb, "%63s %d %zu\n%n", tagb, &realb, &nb, &hb) != 3 || strcmp(tag, tagb) != 0 || n != nb) {
            report(0, "%s vs %s", la, lb, "result files differ in layout");
            return;
        }
        size_t sz = real ? sizeof(attend_real) : sizeof(int32_t);
        const char *da = pa + ha, *db = pb + hb;
        char fmt[128], detail[320];
        snprintf(fmt, sizeof fmt, "%%s vs %%s %s", tag);
        if (memcmp(da, db, n * sz) == 0) {
            snprintf(detail, sizeof detail, "%zu values byte-identical", n);
            report(1, fmt, la, lb, detail);
        } else if (!real) {
            snprintf(detail, sizeof detail, "token sequences differ");
            report(0, fmt, la, lb, detail);
        } else {
            double worst = 0, worst_abs = 0;
            for (size_t i = 0; i < n; i++) {
                attend_real x, y;
                memcpy(&x, da + i * sz, sz);
                memcpy(&y, db + i * sz, sz);
                double d = fabs((double)x - (double)y);
                if (!(d - 1e-4 * fabs((double)x) <= worst)) worst = d - 1e-4 * fabs((double)x);
                if (d > worst_abs) worst_abs = d;
            }
            snprintf(detail, sizeof detail, "%zu values within rounding (largest difference %.3g)", n, worst_abs);
            report(worst <= 1e-5, fmt, la, lb, detail);
        }
        pa = da + n * sz + 1;
        pb = db + n * sz + 1;
    }
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--child") == 0) return child(argv[2]);
    static const char *levels[] = {"baseline", "avx2", "avx512"};
    const int want_lanes[] = {4, 8, 16};
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
    const int strict_lanes = 1;
#else
    const int strict_lanes = 0;
#endif
    int nlev = 1 + (int)at_isa_supported();
    if (!AT_ISA_DISPATCH) nlev = 1;
    printf("CPU supports up to %s; checking %d level(s)\n", levels[nlev - 1], nlev);
    char path[64];
    snprintf(path, sizeof path, "isa_check.%ld.out", (long)getpid());
    result r[3][2];
    memset(r, 0, sizeof r);
    for (int l = 0; l < nlev; l++) {
        char detail[320];
        for (int rep = 0; rep < 2; rep++) {
            if (!run_child(argv[0], levels[l], path, &r[l][rep])) {
                report(0, "ATTEND_ISA=%s%s", levels[l], "", "the child run failed");
                return 1;
            }
        }
        snprintf(detail, sizeof detail, "attend_isa() = %s, the probe's reduction used %d lanes", r[l][0].isa,
                 r[l][0].lanes);
        int lanes_ok = !strict_lanes || r[l][0].lanes == want_lanes[l];
        report(strcmp(r[l][0].isa, levels[l]) == 0 && lanes_ok, "ATTEND_ISA=%s runs that level%s", levels[l],
               strict_lanes ? " (gcc: 4/8/16 lanes)" : "", detail);
        int same = r[l][0].size == r[l][1].size && memcmp(r[l][0].data, r[l][1].data, r[l][0].size) == 0;
        snprintf(detail, sizeof detail, "%zu bytes of results", r[l][0].size);
        report(same, "%s: two runs byte-identical%s", levels[l], "", detail);
    }
    for (int l = 1; l < nlev; l++) compare(&r[0][0], &r[l][0], levels[0], levels[l]);
    if (nlev > 1 && AT_ISA_DISPATCH) {
        /* an unknown value is ignored and a level above the CPU's falls back */
        result u;
        memset(&u, 0, sizeof u);
        if (run_child(argv[0], "no-such-level", path, &u)) {
            report(strcmp(u.isa, levels[nlev - 1]) == 0, "ATTEND_ISA=%s%s", "no-such-level",
                   " runs the best level", u.isa);
            free(u.data);
        }
    }
    for (int l = 0; l < nlev; l++) free(r[l][0].data), free(r[l][1].data);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
