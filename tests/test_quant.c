/*
 * test_quant.c — int8 and fp16 weights (src/core/quant.c, the model's
 * quantized storage and files).
 *
 * Kernels: at_q8_gemm / at_f16_gemm at every instruction-set level this CPU
 * has (called directly through the *_level entry points; tests/cmake/quant.cmake
 * runs the file again under ATTEND_ISA=baseline and avx2 for the dispatched
 * ones) against a reference in double over the dequantized float weights
 * (q * scale, or the half widened): odd sizes on every side of the vector
 * widths and the 4-row blocks, column slices of wider matrices (W + c0 at the
 * full row stride), Y with a wider stride whose padding must not be written,
 * beta = 0 over NaN (must not be read). Tolerance: each element within
 * (in + 8) u (Σ_k |x_k w_k| + |beta y|), u = 2^-24: the bound of an in-term
 * float sum in any order, plus the scale's and beta's roundings; a wrong
 * element (a skipped column, a wrong row) is off by about one term.
 *
 * Models (GRU/Bahdanau/additive, LSTM/Luong/general, GRU/no attention; odd
 * sizes): after attend_model_quantize, greedy (1, 3 and 20 rows), beam and
 * scoring against a float model holding the same dequantized weights: tokens
 * equal, alignments within 1e-4, log-probabilities within 1e-4 (1 + |logp|);
 * 20 rows (more than AT_QUANT_MAX_ROWS) read the float copy: bit-identical.
 * Saved and loaded again, the model decodes bit-identically. Bad input, each
 * refused with the tensor named: quantizing twice, non-finite weights, an f16
 * value out of range; files with a zero scale for a non-zero row, a negative
 * scale, an I8 or F16 matrix of the wrong shape, a missing scale, an F16 Inf,
 * a float matrix among I8 ones, a quantized bias; a quantized model cannot be
 * trained and a quantized checkpoint cannot be resumed.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "harness.h"
#include "../src/internal.h"
#include "../src/core/isa.h"
#include "../src/core/quant.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static double uniform(void) { /* [-1, 1) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "test_quant: out of memory\n");
        exit(2);
    }
    return p;
}

/* Independent binary16 decoding (ldexp), for the conversion tests. */
static double half_value(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

static void test_f16_conversion(void) {
    int bad_widen = 0, bad_round = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        double want = half_value((uint16_t)h);
        float got = at_f16_to_float((uint16_t)h);
        if (isnan(want) ? !isnan(got) : (double)got != want) bad_widen++;
        if (!isnan(want) && at_f16_from_float(got) != h) bad_round++;
    }
    EXPECT(bad_widen == 0, "%d halves widened wrongly", bad_widen);
    EXPECT(bad_round == 0, "%d halves did not round-trip", bad_round);
    /* ties to even, between two neighbours, overflow, subnormals */
    EXPECT(at_f16_from_float(1.0f + 0x1p-11f) == 0x3c00, "1 + half an ulp ties to 1 (even): %04x",
           at_f16_from_float(1.0f + 0x1p-11f));
    EXPECT(at_f16_from_float(1.0f + 3 * 0x1p-11f) == 0x3c02, "1 + 1.5 ulp ties to 1 + 2 ulp: %04x",
           at_f16_from_float(1.0f + 3 * 0x1p-11f));
    EXPECT(at_f16_from_float(1.0f + 0x1p-11f + 0x1p-20f) == 0x3c01, "above the tie rounds up");
    EXPECT(at_f16_from_float(65504.0f) == 0x7bff, "max half");
    EXPECT(at_f16_from_float(65519.0f) == 0x7bff, "65519 rounds down to 65504");
    EXPECT(at_f16_from_float(65520.0f) == 0x7c00, "65520 rounds to Inf");
    EXPECT(at_f16_from_float(-0x1p-24f) == 0x8001, "smallest subnormal");
    EXPECT(at_f16_from_float(0x1p-26f) == 0, "a quarter of the smallest subnormal rounds to 0");
    EXPECT(at_f16_from_float(0x1p-14f - 0x1p-25f) == 0x0400, "the largest subnormal's tie rounds up to 2^-14");
    EXPECT(at_f16_from_float(-0.0f) == 0x8000, "-0");
    printf("  f16 conversion: 65536 halves widened and rounded back; %d + %d bad\n", bad_widen, bad_round);
}

static void test_quantize_row(void) {
    float w[37];
    int8_t q[37];
    double worst = 0;
    for (int trial = 0; trial < 50; trial++) {
        double mag = pow(10, 4 * uniform());
        for (int k = 0; k < 37; k++) w[k] = (float)(mag * uniform());
        float s = at_q8_quantize_row(q, w, 37);
        float mx = 0;
        for (int k = 0; k < 37; k++) mx = fabsf(w[k]) > mx ? fabsf(w[k]) : mx;
        EXPECT(s == mx / 127.0f, "scale %g, max %g", (double)s, (double)mx);
        int hit = 0;
        for (int k = 0; k < 37; k++) {
            double err = fabs((double)w[k] - (double)q[k] * s) / s;
            worst = err > worst ? err : worst;
            hit |= q[k] == 127 || q[k] == -127;
        }
        EXPECT(hit, "the largest value maps to ±127");
    }
    EXPECT(worst <= 0.5 + 1e-5, "worst rounding error %g of a scale", worst);
    for (int k = 0; k < 37; k++) w[k] = 0;
    q[3] = 9;
    float s0 = at_q8_quantize_row(q, w, 37);
    int zero = 1;
    for (int k = 0; k < 37; k++) zero &= q[k] == 0;
    EXPECT(s0 == 0 && zero, "an all-zero row has scale 0 and q = 0");
    printf("  quantize rows: worst |w - q s| = %.4f s\n", worst);
}

/* One product at one level (or dispatched when level < 0) against the
 * reference; returns 1 when it passes. */
static int check_product(int is16, int level, int N, int out, int in, int c0, double beta) {
    const int ldw = in + c0 + 3, ldx = in + 2, ldy = out + 5, rows = out + 2; /* W has rows beyond out */
    float *X = xmalloc((size_t)N * ldx * sizeof *X), *Y = xmalloc((size_t)N * ldy * sizeof *Y);
    float *Y0 = xmalloc((size_t)N * ldy * sizeof *Y0), *scale = xmalloc((size_t)rows * sizeof *scale);
    float *Wf = xmalloc((size_t)rows * ldw * sizeof *Wf);
    int8_t *Q = xmalloc((size_t)rows * ldw);
    uint16_t *H = xmalloc((size_t)rows * ldw * sizeof *H);
    for (int r = 0; r < rows; r++) {
        float w[1024];
        for (int k = 0; k < ldw; k++) w[k] = (float)(uniform() * (1 + r % 3));
        if (r == 1) for (int k = 0; k < ldw; k++) w[k] = 0; /* a zero row: scale 0 */
        scale[r] = at_q8_quantize_row(Q + (size_t)r * ldw, w, ldw);
        for (int k = 0; k < ldw; k++) {
            H[(size_t)r * ldw + k] = at_f16_from_float(w[k]);
            Wf[(size_t)r * ldw + k] = is16 ? at_f16_to_float(H[(size_t)r * ldw + k])
                                           : (float)Q[(size_t)r * ldw + k] * scale[r];
        }
    }
    for (size_t i = 0; i < (size_t)N * ldx; i++) X[i] = (float)uniform();
    for (int n = 0; n < N; n++)
        for (int j = 0; j < ldy; j++)
            Y[(size_t)n * ldy + j] = j < out ? (beta == 0 ? NAN : (float)uniform()) : 12345.0f;
    memcpy(Y0, Y, (size_t)N * ldy * sizeof *Y);
    const float b = (float)beta;
    if (is16) {
        if (level < 0) at_f16_gemm(N, out, in, X, ldx, H + c0, ldw, b, Y, ldy);
        else at_f16_gemm_level(level, N, out, in, X, ldx, H + c0, ldw, b, Y, ldy);
    } else {
        if (level < 0) at_q8_gemm(N, out, in, X, ldx, Q + c0, scale, ldw, b, Y, ldy);
        else at_q8_gemm_level(level, N, out, in, X, ldx, Q + c0, scale, ldw, b, Y, ldy);
    }
    int ok = 1;
    double worst = 0;
    for (int n = 0; n < N; n++)
        for (int j = 0; j < ldy; j++) {
            float got = Y[(size_t)n * ldy + j];
            if (j >= out) {
                if (got != 12345.0f) ok = 0;
                continue;
            }
            double sum = 0, mag = 0;
            for (int k = 0; k < in; k++) {
                double t = (double)X[(size_t)n * ldx + k] * Wf[(size_t)j * ldw + c0 + k];
                sum += t;
                mag += fabs(t);
            }
            double y0 = beta == 0 ? 0 : beta * Y0[(size_t)n * ldy + j];
            double want = sum + y0, tol = (in + 8) * (FLT_EPSILON / 2) * (mag + fabs(y0)) + 1e-30;
            double d = fabs((double)got - want);
            if (!(d <= tol)) ok = 0;
            if (d / tol > worst) worst = d / tol;
        }
    if (!ok)
        fprintf(stderr, "  FAIL %s level %d N=%d out=%d in=%d c0=%d beta=%g: worst %.2f of the bound\n",
                is16 ? "f16" : "q8", level, N, out, in, c0, beta, worst);
    free(X);
    free(Y);
    free(Y0);
    free(scale);
    free(Wf);
    free(Q);
    free(H);
    return ok;
}

static void test_kernels(void) {
    static const int Ns[] = {1, 2, 3, 5, 16};
    static const int outs[] = {1, 3, 4, 5, 17, 33};
    static const int ins[] = {0, 1, 3, 7, 8, 15, 16, 17, 31, 33, 64, 65, 257};
    static const int c0s[] = {0, 5};
    static const double betas[] = {0, 1, 0.5};
    int top = (int)at_isa_supported(), runs = 0, fails = 0;
    for (int is16 = 0; is16 < 2; is16++)
        for (int level = -1; level <= top; level++)
            for (size_t a = 0; a < sizeof Ns / sizeof *Ns; a++)
                for (size_t o = 0; o < sizeof outs / sizeof *outs; o++)
                    for (size_t i = 0; i < sizeof ins / sizeof *ins; i++)
                        for (size_t c = 0; c < 2; c++) {
                            double beta = betas[(a + o + i + c) % 3];
                            runs++;
                            fails += !check_product(is16, level, Ns[a], outs[o], ins[i], c0s[c], beta);
                        }
    EXPECT(fails == 0, "%d of %d products outside the bound", fails, runs);
    printf("  kernels: %d products (I8 and F16, levels baseline..%s and dispatched at %s), %d outside the bound\n",
           runs, top == 2 ? "avx512" : top == 1 ? "avx2" : "baseline", attend_isa(), fails);
}

/* at_linear: a column slice of a quantized matrix reads the quantized copy
 * (results within the bound of the float product of the dequantized
 * weights), more rows than AT_QUANT_MAX_ROWS read the float copy (the float
 * product exactly), NULL reads the float copy. */
static void test_linear(void) {
    enum { R = 40, C = 50, N = AT_QUANT_MAX_ROWS + 1 };
    static float W[R * C], Wq[R * C], sc[R], X[N * C], Y[N * R], Yref[N * R], Yq[N * R];
    static int8_t Q[R * C];
    for (int r = 0; r < R; r++) {
        for (int k = 0; k < C; k++) W[r * C + k] = (float)uniform();
        sc[r] = at_q8_quantize_row(Q + r * C, W + r * C, C);
        for (int k = 0; k < C; k++) Wq[r * C + k] = Q[r * C + k] * sc[r];
    }
    for (int i = 0; i < N * C; i++) X[i] = (float)uniform();
    at_qweight q = {ATTEND_DTYPE_I8, R, C, Wq, Q, sc, NULL};
    /* rows 7..7+30 of W, columns 11..11+33 */
    const float *Wb = Wq + 7 * C + 11;
    double worst = 0;
    for (int n = 1; n <= N; n += N - 1) {
        memset(Y, 0, sizeof Y);
        memset(Yref, 0, sizeof Yref);
        at_linear(&q, NULL, n, 30, 33, X, C, Wb, C, 0, Y, R);
        at_gemm(0, 1, n, 30, 33, 1, X, C, Wb, C, 0, Yref, R);
        const int quantized = at_linear_quantized(&q, n); /* AVX2 and up; the float copy below */
        EXPECT(quantized == (n <= AT_QUANT_MAX_ROWS && at_isa() >= AT_ISA_AVX2), "at_linear_quantized(%d rows)", n);
        if (quantized) { /* the int8 kernel itself, at the slice's rows, columns and scales */
            memset(Yq, 0, sizeof Yq);
            at_q8_gemm(n, 30, 33, X, C, Q + 7 * C + 11, sc + 7, C, 0, Yq, R);
            EXPECT(!memcmp(Y, Yq, sizeof Y), "at_linear with %d rows did not read the int8 copy at the slice", n);
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < 30; j++) {
                double d = fabs(Y[i * R + j] - Yref[i * R + j]);
                worst = d > worst ? d : worst;
                if (!quantized)
                    EXPECT(Y[i * R + j] == Yref[i * R + j], "float path: row %d col %d", i, j);
            }
    }
    EXPECT(worst < 1e-4, "at_linear against at_gemm: worst %g", worst);
    printf("  at_linear: column slice, quantized and float paths: worst |diff| %.2e\n", worst);
}

/* ---------------------------------------------------------------- models */

static char tmpdir[256];
static const char *tmp_path(const char *name) {
    static char buf[4][512];
    static int k = 0;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

#define EXPECT_STATUS(call, want, needle)                                                                  \
    do {                                                                                                   \
        attend_error e_;                                                                                   \
        memset(&e_, 0, sizeof e_);                                                                         \
        attend_status s_ = (call);                                                                         \
        EXPECT(s_ == (want) && strstr(e_.msg, (needle)) != NULL, "%s: got %s \"%s\", want %s with \"%s\"", \
               #call, attend_status_name(s_), e_.msg, attend_status_name(want), (needle));                 \
    } while (0)

/* Vocabulary of 4 specials + n symbols "a", "b", ... */
static attend_vocab *vocab(int n) {
    attend_vocab *v = NULL;
    attend_vocab_create(&v, NULL);
    for (int i = 0; i < n && v; i++) {
        char s[2] = {(char)('a' + i), 0};
        attend_vocab_add(v, s, 1, NULL, NULL);
    }
    return v;
}

static const attend_model_config configs[3] = {
    {ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, 13, 11, 7, 9, 1, 19, 11, 24, 9, 10, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0},
    {ATTEND_CELL_LSTM, ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, 13, 11, 7, 9, 2, 17, 0, 24, 9, 10, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0},
    {ATTEND_CELL_GRU, ATTEND_DECODER_NONE, ATTEND_SCORE_ADDITIVE, 13, 11, 7, 9, 1, 19, 11, 24, 9, 10, 0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0},
};

enum { MAXLEN = 10 };

typedef struct {
    int32_t out[20 * MAXLEN], len[20];
    attend_real align[20 * MAXLEN * 9];
    int32_t bout[3 * MAXLEN], blen[3];
    double bscore[3], logp[4];
} decoded;

/* Greedy over the first N sources, beam 3 over source 0, scores of 4 pairs. */
static void decode_all(attend_model *m, int N, decoded *d) {
    static int32_t src[20 * 9], slen[20];
    uint64_t st = 77;
    for (int n = 0; n < 20; n++) {
        slen[n] = 3 + n % 7;
        for (int s = 0; s < 9; s++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            src[n * 9 + s] = s < slen[n] ? 4 + (int)((st >> 33) % 9) : ATTEND_PAD;
        }
    }
    memset(d, 0, sizeof *d);
    attend_error err;
    EXPECT(attend_model_greedy(m, src, slen, N, 9, MAXLEN, d->out, d->len, d->align, &err) == ATTEND_OK, "%s",
           err.msg);
    int nout = 0;
    EXPECT(attend_model_beam(m, src, slen[0], 3, 3, MAXLEN, 0, d->bout, d->blen, d->bscore, NULL, &nout, &err) ==
               ATTEND_OK, "%s", err.msg);
    for (int i = 0; i < 4; i++) {
        int32_t tgt[5] = {5 + i, 6, 7 + i % 2, 4, 8};
        EXPECT(attend_model_score(m, src + i * 9, slen[i], tgt, 3 + i % 3, &d->logp[i], NULL, &err) == ATTEND_OK, "%s",
               err.msg);
    }
}

/* A float model holding m's (dequantized) weights. */
static attend_model *float_twin(attend_model *m) {
    attend_model *f = NULL;
    attend_model_create(&f, attend_model_get_config(m), 1, NULL);
    if (f) memcpy(attend_model_params(f), attend_model_params(m), attend_model_param_count(m) * sizeof(attend_real));
    return f;
}

static void test_model_paths(void) {
    double worst_align = 0, worst_logp = 0;
    int cases = 0, differs[2] = {0, 0}; /* I8, F16: small batches read the copies (AVX2 and up), so some value moves */
    const int small_quantized = at_isa() >= AT_ISA_AVX2; /* below it, every batch multiplies the float copy */
    for (int c = 0; c < 3; c++)
        for (int dt = 0; dt < 2; dt++) {
            attend_dtype to = dt ? ATTEND_DTYPE_F16 : ATTEND_DTYPE_I8;
            attend_model *m = NULL;
            attend_error err;
            EXPECT(attend_model_create(&m, &configs[c], 5 + c, &err) == ATTEND_OK, "%s", err.msg);
            if (!m) continue;
            EXPECT(attend_model_quantize(m, to, &err) == ATTEND_OK, "%s", err.msg);
            EXPECT(attend_model_weight_dtype(m) == to, "weight dtype");
            attend_model *f = float_twin(m);
            static decoded dq, df;
            for (int N = 1; N <= 20; N += N == 1 ? 2 : 17) {
                decode_all(m, N, &dq);
                decode_all(f, N, &df);
                cases++;
                int same = memcmp(dq.out, df.out, sizeof dq.out) == 0 && memcmp(dq.len, df.len, sizeof dq.len) == 0 &&
                           memcmp(dq.bout, df.bout, sizeof dq.bout) == 0;
                EXPECT(same, "config %d %s N=%d: tokens differ", c, attend_dtype_name(to), N);
                for (size_t i = 0; i < sizeof dq.align / sizeof *dq.align; i++) {
                    double d = fabs((double)dq.align[i] - (double)df.align[i]);
                    if (d > worst_align) worst_align = d;
                    EXPECT(d <= 1e-4, "config %d N=%d align[%zu] %g vs %g", c, N, i, (double)dq.align[i],
                           (double)df.align[i]);
                    const int float_path = N > AT_QUANT_MAX_ROWS || !small_quantized;
                    if (float_path)
                        EXPECT(dq.align[i] == df.align[i], "config %d N=%d: the float path is not bit-identical", c, N);
                    else if (dq.align[i] != df.align[i])
                        differs[dt]++;
                    if (d > 1e-4 || (float_path && dq.align[i] != df.align[i])) break;
                }
                for (int i = 0; i < 4 + 3; i++) {
                    double a = i < 4 ? dq.logp[i] : dq.bscore[i - 4], b = i < 4 ? df.logp[i] : df.bscore[i - 4];
                    double d = fabs(a - b) / (1 + fabs(b));
                    if (d > worst_logp) worst_logp = d;
                    EXPECT(d <= 1e-4, "config %d N=%d log-probability %d: %.9g vs %.9g", c, N, i, a, b);
                }
            }
            /* saved and loaded: the same storage, bit-identical decoding */
            attend_vocab *vs = vocab(configs[c].src_vocab - 4), *vt = vocab(configs[c].tgt_vocab - 4);
            const char *p = tmp_path("q.safetensors");
            EXPECT(attend_model_save(m, p, vs, vt, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
            attend_model *g = NULL;
            EXPECT(attend_model_load(&g, p, NULL, NULL, NULL, NULL, &err) == ATTEND_OK, "%s", err.msg);
            if (g) {
                EXPECT(attend_model_weight_dtype(g) == to, "loaded weight dtype %d", (int)attend_model_weight_dtype(g));
                EXPECT(!memcmp(attend_model_params(g), attend_model_params(m),
                               attend_model_param_count(m) * sizeof(attend_real)),
                       "loaded dequantized weights differ");
                static decoded dg;
                decode_all(m, 3, &dq);
                decode_all(g, 3, &dg);
                EXPECT(!memcmp(&dq, &dg, sizeof dq), "config %d %s: the loaded model decodes differently", c,
                       attend_dtype_name(to));
                attend_model *cl = NULL;
                EXPECT(attend_model_clone(&cl, g, &err) == ATTEND_OK, "%s", err.msg);
                if (cl) {
                    decode_all(cl, 3, &dg);
                    EXPECT(attend_model_weight_dtype(cl) == to && !memcmp(&dq, &dg, sizeof dq),
                           "a clone of a quantized model decodes differently");
                }
                attend_model_free(cl);
            }
            attend_model_free(g);
            attend_vocab_free(vs);
            attend_vocab_free(vt);
            attend_model_free(f);
            attend_model_free(m);
        }
    EXPECT(!small_quantized || (differs[0] > 0 && differs[1] > 0),
           "no alignment value of a small batch moved (I8 %d, F16 %d): the quantized copies were not read", differs[0],
           differs[1]);
    printf("  models: %d cases, worst alignment |diff| %.2e, worst log-probability rel. diff %.2e; small-batch values "
           "that moved: I8 %d, F16 %d\n",
           cases, worst_align, worst_logp, differs[0], differs[1]);
}

/* A weight changed after quantization (through attend_model_tensor_find's
 * pointer) would not reach the file, which holds the int8/fp16 copies: save
 * refuses, naming the tensor, and leaves the file at the path as it was. */
static void test_edited_quantized_save(void) {
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &configs[0], 3, &err) == ATTEND_OK, "%s", err.msg);
    if (!m) return;
    EXPECT(attend_model_quantize(m, ATTEND_DTYPE_I8, &err) == ATTEND_OK, "%s", err.msg);
    attend_vocab *vs = vocab(configs[0].src_vocab - 4), *vt = vocab(configs[0].tgt_vocab - 4);
    const char *p = tmp_path("edited.safetensors");
    EXPECT(attend_model_save(m, p, vs, vt, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    FILE *f = fopen(p, "rb");
    static unsigned char before[1 << 20], after[1 << 20];
    size_t nb = f ? fread(before, 1, sizeof before, f) : 0;
    if (f) fclose(f);
    attend_model_tensor t;
    EXPECT(attend_model_tensor_find(m, "out.weight", &t, &err) == ATTEND_OK, "%s", err.msg);
    t.data[0] += 1.5f;
    attend_status st = attend_model_save(m, p, vs, vt, ATTEND_TOKENIZE_CHAR, &err);
    EXPECT(st == ATTEND_ERR_ARG && strstr(err.msg, "'out.weight' element 0") && strstr(err.msg, "quantize the changed float model again"),
           "save of an edited quantized model: status %d, %s", (int)st, err.msg);
    f = fopen(p, "rb");
    size_t na = f ? fread(after, 1, sizeof after, f) : 0;
    if (f) fclose(f);
    EXPECT(nb > 0 && na == nb && !memcmp(before, after, nb), "the file saved before was changed (%zu -> %zu bytes)",
           nb, na);
    printf("  edited quantized weights: save refused (%s)\n", err.msg);
    attend_vocab_free(vs);
    attend_vocab_free(vt);
    attend_model_free(m);
}

static void test_model_refusals(void) {
    attend_model *m = NULL;
    attend_model_create(&m, &configs[0], 3, NULL);
    if (!m) return;
    float *w = attend_model_params(m);
    attend_model_tensor t;
    attend_model_tensor_find(m, "decoder.weight_hh", &t, NULL);
    size_t off = (size_t)(t.data - w);
    float keep = w[off + 5];
    w[off + 5] = NAN;
    EXPECT_STATUS(attend_model_quantize(m, ATTEND_DTYPE_I8, &e_), ATTEND_ERR_NONFINITE,
                  "tensor 'decoder.weight_hh' element 5 is nan");
    w[off + 5] = 1e5f;
    EXPECT_STATUS(attend_model_quantize(m, ATTEND_DTYPE_F16, &e_), ATTEND_ERR_ARG,
                  "tensor 'decoder.weight_hh' element 5 is 100000, beyond float16's range");
    EXPECT(attend_model_weight_dtype(m) == ATTEND_DTYPE_F32 && w[off + 5] == 1e5f, "a refused quantize changed m");
    w[off + 5] = keep;
    EXPECT_STATUS(attend_model_quantize(m, ATTEND_DTYPE_U8, &e_), ATTEND_ERR_ARG, "weights quantize to I8 or F16");
    EXPECT(attend_model_quantize(m, ATTEND_DTYPE_I8, NULL) == ATTEND_OK, "quantize");
    EXPECT_STATUS(attend_model_quantize(m, ATTEND_DTYPE_F16, &e_), ATTEND_ERR_ARG,
                  "already quantized: tensor 'encoder.weight_ih_l0' is I8");
    attend_model_free(m);
    /* F16 -> I8: the same bytes as quantizing a float model holding the F16 values */
    m = NULL;
    attend_model *g = NULL;
    attend_error qe = {0};
    attend_model_create(&m, &configs[0], 3, NULL);
    attend_model_create(&g, &configs[0], 3, NULL);
    if (!m || !g) {
        attend_model_free(m);
        attend_model_free(g);
        return;
    }
    EXPECT(attend_model_quantize(m, ATTEND_DTYPE_F16, NULL) == ATTEND_OK, "f16");
    memcpy(attend_model_params(g), attend_model_params(m), attend_model_param_count(m) * sizeof(float));
    EXPECT_STATUS(attend_model_quantize(m, ATTEND_DTYPE_F16, &e_), ATTEND_ERR_ARG,
                  "already quantized: tensor 'encoder.weight_ih_l0' is F16");
    EXPECT(attend_model_quantize(m, ATTEND_DTYPE_I8, &qe) == ATTEND_OK, "f16 -> int8: %s", qe.msg);
    EXPECT(attend_model_quantize(g, ATTEND_DTYPE_I8, NULL) == ATTEND_OK, "float -> int8");
    EXPECT(attend_model_weight_dtype(m) == ATTEND_DTYPE_I8, "f16 -> int8 dtype");
    EXPECT(!memcmp(attend_model_params(m), attend_model_params(g), attend_model_param_count(m) * sizeof(float)),
           "f16 -> int8 differs from int8 of the same values");
    const char *fm = "quant_f16_i8_a.safetensors", *fg = "quant_f16_i8_b.safetensors";
    attend_vocab *vs = vocab(configs[0].src_vocab - 4), *vt = vocab(configs[0].tgt_vocab - 4);
    EXPECT(attend_model_save(m, fm, vs, vt, ATTEND_TOKENIZE_CHAR, &qe) == ATTEND_OK &&
               attend_model_save(g, fg, vs, vt, ATTEND_TOKENIZE_CHAR, &qe) == ATTEND_OK,
           "%s", qe.msg);
    attend_vocab_free(vs);
    attend_vocab_free(vt);
    FILE *a = fopen(fm, "rb"), *b = fopen(fg, "rb");
    int same = a && b;
    for (int ca = 0, cb = 0; same && ca != EOF;) {
        ca = fgetc(a);
        cb = fgetc(b);
        same = ca == cb;
    }
    if (a) fclose(a);
    if (b) fclose(b);
    EXPECT(same, "the int8 files of f16 -> int8 and float -> int8 differ");
    remove(fm);
    remove(fg);
    attend_model_free(g);
    /* training a quantized model */
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    int32_t s[3] = {4, 5, 6};
    attend_dataset_add(d, s, 3, s, 3, NULL);
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    attend_trainer *tr = NULL;
    EXPECT_STATUS(attend_trainer_create(&tr, m, &oc, d, 1, 1, &e_), ATTEND_ERR_ARG,
                  "the model's weights are quantized (I8): training needs the float32 model");
    attend_dataset_free(d);
    attend_model_free(m);
}

/* Rewrites file `in` to `out` with one change to tensor `name`:
 * 'z' its first element 0 (a scale), 'n' its first element -1 (a scale),
 * 'r' shape [numel] (reshaped), 'd' dropped, 'i' an F16 Inf first,
 * 'f' stored as F32 zeros (its shape kept), 'q' stored as I8 zeros,
 * 'Q' quantized to I8 with "<name>.scale" added, 'S' "<name>.scale" added
 * (ones) with the matrix left F32. */
static void rewrite(const char *in, const char *out, const char *name, char how) {
    attend_st_file *f = NULL;
    attend_error err;
    if (attend_st_open(&f, in, 0, &err)) {
        fprintf(stderr, "rewrite: %s\n", err.msg);
        return;
    }
    int n = attend_st_count(f), k = 0;
    attend_st_entry *e = calloc((size_t)n + 1, sizeof *e);
    void *copy = NULL, *copy2 = NULL;
    char sname[128];
    for (int i = 0; i < n; i++) {
        const attend_st_tensor *t = attend_st_get(f, i);
        attend_st_entry *x = &e[k];
        x->name = t->name;
        x->dtype = t->dtype;
        x->ndim = t->ndim;
        memcpy(x->shape, t->shape, sizeof x->shape);
        x->data = t->data;
        if (strcmp(t->name, name)) {
            k++;
            continue;
        }
        size_t numel = t->nbytes / attend_dtype_size(t->dtype);
        if (how == 'd') continue;
        k++;
        if (how == 'r') {
            x->ndim = 1;
            x->shape[0] = (int64_t)numel;
        } else if (how == 'f' || how == 'q') {
            x->dtype = how == 'f' ? ATTEND_DTYPE_F32 : ATTEND_DTYPE_I8;
            x->data = copy = calloc(numel, 4);
        } else if (how == 'S') {
            float *ones = copy = malloc((size_t)t->shape[0] * 4);
            for (int r = 0; r < t->shape[0]; r++) ones[r] = 1;
            snprintf(sname, sizeof sname, "%s.scale", name);
            e[k++] = (attend_st_entry){sname, ATTEND_DTYPE_F32, 1, {t->shape[0]}, ones};
        } else if (how == 'Q') {
            int rows = (int)t->shape[0], cols = (int)t->shape[1];
            int8_t *q = copy = malloc(numel);
            float *sc = copy2 = malloc((size_t)rows * 4), *row = malloc((size_t)cols * 4);
            for (int r = 0; r < rows; r++) {
                memcpy(row, (const char *)t->data + (size_t)r * cols * 4, (size_t)cols * 4);
                sc[r] = at_q8_quantize_row(q + (size_t)r * cols, row, cols);
            }
            free(row);
            x->dtype = ATTEND_DTYPE_I8;
            x->data = q;
            snprintf(sname, sizeof sname, "%s.scale", name);
            e[k++] = (attend_st_entry){sname, ATTEND_DTYPE_F32, 1, {rows}, sc};
        } else {
            copy = malloc(t->nbytes);
            memcpy(copy, t->data, t->nbytes);
            x->data = copy;
            if (how == 'z') ((float *)copy)[0] = 0;
            if (how == 'n') ((float *)copy)[0] = -1;
            if (how == 'i') ((uint16_t *)copy)[0] = 0x7c00;
        }
    }
    const char *keys[] = {"attend.format", "attend.config", "attend.tokenizer", "attend.src_vocab", "attend.tgt_vocab",
                          "attend.train"};
    attend_st_meta meta[6];
    int nm = 0;
    for (int i = 0; i < 6; i++)
        if (attend_st_metadata(f, keys[i])) meta[nm++] = (attend_st_meta){keys[i], attend_st_metadata(f, keys[i])};
    if (attend_st_write(out, e, k, meta, nm, &err)) fprintf(stderr, "rewrite: %s\n", err.msg);
    free(copy);
    free(copy2);
    free(e);
    attend_st_close(f);
}

static void test_bad_files(void) {
    attend_model *m = NULL, *got = NULL;
    attend_model_create(&m, &configs[0], 3, NULL);
    attend_vocab *vs = vocab(configs[0].src_vocab - 4), *vt = vocab(configs[0].tgt_vocab - 4);
    if (!m || !vs || !vt) return;
    const char *pf = tmp_path("float.safetensors"), *p8 = tmp_path("i8.safetensors"),
               *p16 = tmp_path("f16.safetensors"), *bad = tmp_path("bad.safetensors");
    attend_model_save(m, pf, vs, vt, ATTEND_TOKENIZE_CHAR, NULL);
    attend_model *m16 = NULL;
    attend_model_clone(&m16, m, NULL);
    attend_model_quantize(m, ATTEND_DTYPE_I8, NULL);
    attend_model_quantize(m16, ATTEND_DTYPE_F16, NULL);
    attend_model_save(m, p8, vs, vt, ATTEND_TOKENIZE_CHAR, NULL);
    attend_model_save(m16, p16, vs, vt, ATTEND_TOKENIZE_CHAR, NULL);
    struct stat a, b, c;
    EXPECT(stat(pf, &a) == 0 && stat(p8, &b) == 0 && stat(p16, &c) == 0 && b.st_size < c.st_size &&
               c.st_size < a.st_size, "sizes float %ld, f16 %ld, int8 %ld", (long)a.st_size, (long)c.st_size,
           (long)b.st_size);
    EXPECT(attend_model_load(&got, p8, NULL, NULL, NULL, NULL, NULL) == ATTEND_OK, "the good I8 file");
    attend_model_free(got);
    got = NULL;
    struct {
        const char *from, *tensor;
        char how;
        const char *needle;
    } cases[] = {
        {p8, "bridge.weight.scale", 'z', "tensor 'bridge.weight.scale' element 0 is 0 but row 0 of 'bridge.weight' is not zero"},
        {p8, "bridge.weight.scale", 'n', "tensor 'bridge.weight.scale' element 0 is -1; a scale must be finite and >= 0"},
        {p8, "decoder.weight_hh", 'r', "tensor 'decoder.weight_hh' has shape [1083], expected [57,19]"},
        {p16, "decoder.weight_hh", 'r', "tensor 'decoder.weight_hh' has shape [1083], expected [57,19]"},
        {p8, "out.weight.scale", 'd', "tensor 'out.weight' is I8 but its scales 'out.weight.scale' are missing"},
        {p8, "out.weight.scale", 'q', "tensor 'out.weight.scale' is I8 [11], expected F32 [11]"},
        {p16, "attention.Wq", 'i', "tensor 'attention.Wq' element 0 is not finite (F16 bits 0x7c00)"},
        {p8, "attention.Wk", 'f', "tensor 'attention.Wk' is F32 but 'encoder.weight_ih_l0' is I8"},
        {p8, "decoder.bias_hh", 'q', "tensor 'decoder.bias_hh' has dtype I8, expected F32 (only weight matrices"},
        {pf, "bridge.weight", 'Q', "tensor 'encoder.weight_ih_l0' is F32 but 'bridge.weight' is I8"},
        {pf, "bridge.weight", 'S', "unexpected tensor 'bridge.weight.scale'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rewrite(cases[i].from, bad, cases[i].tensor, cases[i].how);
        EXPECT_STATUS(attend_model_load(&got, bad, NULL, NULL, NULL, NULL, &e_), ATTEND_ERR_FORMAT, cases[i].needle);
        EXPECT(got == NULL, "a model was returned from a bad file");
    }
    attend_vocab_free(vs);
    attend_vocab_free(vt);
    attend_model_free(m);
    attend_model_free(m16);
}

/* A checkpoint whose decoder.weight_hh is I8 cannot be resumed. */
static void test_quantized_checkpoint(void) {
    attend_model *m = NULL;
    attend_model_create(&m, &configs[0], 3, NULL);
    attend_vocab *vs = vocab(configs[0].src_vocab - 4), *vt = vocab(configs[0].tgt_vocab - 4);
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    int32_t s[3] = {4, 5, 6};
    attend_dataset_add(d, s, 3, s, 3, NULL);
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    attend_trainer *tr = NULL;
    attend_error err;
    EXPECT(attend_trainer_create(&tr, m, &oc, d, 1, 1, &err) == ATTEND_OK, "%s", err.msg);
    if (!tr) return;
    EXPECT(attend_trainer_step(tr, NULL, &err) == ATTEND_OK, "%s", err.msg);
    const char *ck = tmp_path("ck.safetensors"), *qk = tmp_path("qck.safetensors");
    EXPECT(attend_trainer_save(tr, ck, vs, vt, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_trainer_resume(tr, ck, &err) == ATTEND_OK, "the float checkpoint: %s", err.msg);
    rewrite(ck, qk, "decoder.weight_hh", 'Q');
    EXPECT_STATUS(attend_trainer_resume(tr, qk, &e_), ATTEND_ERR_FORMAT,
                  "tensor 'decoder.weight_hh' is I8: quantized weights are for inference only");
    attend_trainer_free(tr);
    attend_dataset_free(d);
    attend_vocab_free(vs);
    attend_vocab_free(vt);
    attend_model_free(m);
}

int main(void) {
    printf("test_quant (isa %s)\n", attend_isa());
    snprintf(tmpdir, sizeof tmpdir, "/tmp/attend-test-quant-XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_f16_conversion);
    RUN(test_quantize_row);
    RUN(test_kernels);
    RUN(test_linear);
    RUN(test_model_paths);
    RUN(test_edited_quantized_save);
    RUN(test_model_refusals);
    RUN(test_bad_files);
    RUN(test_quantized_checkpoint);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return harness_summary();
}
