/*
 * test_sparse.c — the sparse normalisers (src/core/sparsemax.c) in the float
 * build: the kernels against the PyTorch reference written from the papers
 * (tools/make_sparse_ref.py → tests/ref/sparse_*.txt; exact zeros must match
 * exactly, values to 2e-6), the errors, the thresholds on the worked example
 * of `attend explain sparsemax` (its golden output must print the kernel's
 * numbers), and a model with each sparse normaliser: config checks, training,
 * greedy, beam and scoring alignments with exact zeros that sum to 1, the
 * attention entropy finite, interventions, and the model file keeping the
 * normaliser.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, close */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attend.h"
#include "harness.h"
#include "ref_reader.h"

#define REF_SCRIPT "/usr/bin/python3 tools/make_sparse_ref.py"
#define NREF 6

static const char *NAMES[3] = {"softmax", "sparsemax", "entmax15"};

/* EXPECT_CLOSE of float results got [n] against double references want [n]. */
static void close_f(const char *what, const attend_real *got, const double *want, size_t n, double atol, double rtol) {
    double *g = malloc(n * sizeof *g);
    for (size_t i = 0; i < n; i++) g[i] = got[i];
    EXPECT_CLOSE(what, g, want, n, atol, rtol);
    free(g);
}

/* ------------------------------------------------------------ reference */

static void check_ref_file(int idx) {
    char path[64];
    snprintf(path, sizeof path, "ref/sparse_%02d.txt", idx);
    ref_file f;
    if (!ref_load(&f, path, REF_SCRIPT)) return;
    const ref_tensor *sc = ref_get(&f, "scores", 3, NULL);
    if (!sc) {
        ref_free(&f);
        return;
    }
    const int N = sc->dims[0], T = sc->dims[1], S = sc->dims[2];
    const size_t n = sc->n;
    const ref_tensor *dw = ref_get(&f, "dweights", 3, sc->dims), *cz = ref_get(&f, "causal", 1, NULL);
    const ref_tensor *va = NULL, *al = NULL;
    for (int i = 0; i < f.count; i++) {
        if (!strcmp(f.t[i].name, "valid")) va = &f.t[i];
        if (!strcmp(f.t[i].name, "allowed")) al = &f.t[i];
    }
    attend_real *z = malloc(n * sizeof *z), *g = malloc(n * sizeof *g), *w = malloc(n * sizeof *w);
    attend_real *ds = malloc(n * sizeof *ds);
    uint8_t *valid = va ? malloc(va->n) : NULL, *allowed = al ? malloc(al->n) : NULL;
    for (size_t i = 0; i < n; i++) z[i] = (attend_real)sc->v[i], g[i] = (attend_real)dw->v[i];
    for (size_t i = 0; va && i < va->n; i++) valid[i] = va->v[i] != 0;
    for (size_t i = 0; al && i < al->n; i++) allowed[i] = al->v[i] != 0;
    int causal = cz && cz->v[0] != 0;
    for (int nz = 1; nz <= 2; nz++) {
        char name[32];
        snprintf(name, sizeof name, "w_%s", NAMES[nz]);
        const ref_tensor *rw = ref_get(&f, name, 3, sc->dims);
        snprintf(name, sizeof name, "ds_%s", NAMES[nz]);
        const ref_tensor *rd = ref_get(&f, name, 3, sc->dims);
        if (!rw || !rd) continue;
        attend_error err;
        attend_status st = nz == 1 ? attend_masked_sparsemax_forward(w, z, valid, allowed, causal, N, T, S, &err)
                                   : attend_masked_entmax15_forward(w, z, valid, allowed, causal, N, T, S, &err);
        EXPECT(st == ATTEND_OK, "%s forward: %s", NAMES[nz], err.msg);
        int zeros = 0;
        for (size_t i = 0; i < n; i++) {
            zeros += rw->v[i] == 0;
            if ((w[i] == 0) != (rw->v[i] == 0)) {
                EXPECT(0, "%s %s: weight %zu is %.9g, reference %.9g (exact zeros must match)", path, NAMES[nz], i,
                       (double)w[i], rw->v[i]);
            }
        }
        char label[160];
        snprintf(label, sizeof label, "%s %s weights (%d exact zeros)", path, NAMES[nz], zeros);
        close_f(label, w, rw->v, n, 2e-6, 2e-6);
        /* backward: dscores = J(w)ᵀ dweights, into zeros */
        memset(ds, 0, n * sizeof *ds);
        st = nz == 1 ? attend_masked_sparsemax_backward(ds, g, w, N, T, S, &err)
                     : attend_masked_entmax15_backward(ds, g, w, N, T, S, &err);
        EXPECT(st == ATTEND_OK, "%s backward: %s", NAMES[nz], err.msg);
        snprintf(label, sizeof label, "%s %s dscores", path, NAMES[nz]);
        close_f(label, ds, rd->v, n, 2e-6, 2e-6);
        for (size_t i = 0; i < n; i++)
            if (rw->v[i] == 0) EXPECT(ds[i] == 0, "%s: gradient %g at a zero weight", label, (double)ds[i]);
        /* the generic entry point gives the same bytes */
        attend_real *w2 = malloc(n * sizeof *w2);
        EXPECT(attend_masked_normalize_forward((attend_normalizer)nz, w2, z, valid, allowed, causal, N, T, S, &err) ==
                   ATTEND_OK,
               "%s", err.msg);
        EXPECT(!memcmp(w, w2, n * sizeof *w), "%s: attend_masked_normalize_forward differs", label);
        free(w2);
    }
    /* softmax through the same entry point is the masked softmax */
    attend_real *ws = malloc(n * sizeof *ws);
    EXPECT(attend_masked_normalize_forward(ATTEND_NORMALIZER_SOFTMAX, w, z, valid, allowed, causal, N, T, S, NULL) ==
               ATTEND_OK,
           "softmax");
    attend_masked_softmax_forward(ws, z, valid, allowed, causal, N, T, S, NULL);
    EXPECT(!memcmp(w, ws, n * sizeof *w), "%s: softmax through attend_masked_normalize_forward differs", path);
    free(ws);
    free(z), free(g), free(w), free(ds), free(valid), free(allowed);
    ref_free(&f);
}

static void test_reference(void) {
    for (int i = 0; i < NREF; i++) check_ref_file(i);
}

/* --------------------------------------------------------------- errors */

static void test_errors(void) {
    attend_real z[6] = {1, 2, 3, 4, 5, 6}, w[6], g[6] = {0};
    uint8_t none[6] = {0, 0, 0, 0, 0, 0}, some[3] = {1, 0, 1}; /* none: valid [N=2,S=3] */
    attend_error err;
    attend_status st = attend_masked_sparsemax_forward(w, z, none, NULL, 0, 2, 1, 3, &err);
    EXPECT(st == ATTEND_ERR_MASKED_ROW && strstr(err.msg, "every source position is masked") &&
               strstr(err.msg, "attend_masked_sparsemax_forward"),
           "all-masked row: %s %s", attend_status_name(st), err.msg);
    st = attend_masked_entmax15_forward(w, z, some, NULL, 0, 1, 1, 3, &err);
    EXPECT(st == ATTEND_OK, "one row, valid [1 0 1]: %s", err.msg);
    EXPECT(w[1] == 0, "masked position weight %g", (double)w[1]);
    z[2] = NAN;
    st = attend_masked_entmax15_forward(w, z, NULL, NULL, 0, 1, 1, 3, &err);
    EXPECT(st == ATTEND_ERR_NONFINITE && strstr(err.msg, "position 2"), "NaN score: %s", err.msg);
    z[2] = 3;
    st = attend_masked_sparsemax_forward(z, z, NULL, NULL, 0, 1, 1, 3, &err);
    EXPECT(st == ATTEND_ERR_ARG && strstr(err.msg, "same array"), "in place: %s", err.msg);
    st = attend_masked_normalize_forward((attend_normalizer)7, w, z, NULL, NULL, 0, 1, 1, 3, &err);
    EXPECT(st == ATTEND_ERR_ARG && strstr(err.msg, "normalizer=7"), "bad normalizer: %s", err.msg);
    st = attend_masked_normalize_backward((attend_normalizer)-1, g, z, w, 1, 1, 3, &err);
    EXPECT(st == ATTEND_ERR_ARG, "bad normalizer in backward: %s", err.msg);
    st = attend_masked_sparsemax_forward(NULL, z, NULL, NULL, 0, 1, 1, 3, &err);
    EXPECT(st == ATTEND_ERR_NULL && strstr(err.msg, "weights"), "NULL weights: %s", err.msg);
    st = attend_masked_entmax15_backward(g, z, w, 1, 0, 3, &err);
    EXPECT(st == ATTEND_ERR_SHAPE, "T = 0: %s", err.msg);
    EXPECT(isnan(attend_normalizer_threshold(ATTEND_NORMALIZER_SPARSEMAX, z, 0, NULL)), "threshold S = 0");
    EXPECT(isnan(attend_normalizer_threshold(ATTEND_NORMALIZER_SPARSEMAX, NULL, 3, NULL)), "threshold NULL");
    /* a causal row keeps position 0 only at t = 0: one-hot */
    attend_real sc[4] = {-5, 9, 9, 9}, wc[4];
    EXPECT(attend_masked_sparsemax_forward(wc, sc, NULL, NULL, 1, 1, 2, 2, &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(wc[0] == 1 && wc[1] == 0, "causal row 0: [%g %g]", (double)wc[0], (double)wc[1]);
}

/* ---------------------------------------------- the explain example's numbers */

static int golden_has(const char *text, const char *needle, const char *what) {
    int ok = strstr(text, needle) != NULL;
    EXPECT(ok, "golden/explain_sparsemax.txt does not print %s as '%s'", what, needle);
    return ok;
}

static void test_explain_numbers(void) {
    /* seed 004 §12's energies [ln 4, ln 2, 0]: sparsemax's support is {1,2} and
     * τ = (ln 4 + ln 2 - 1)/2 = (3 ln 2 - 1)/2, w = [(1 + ln 2)/2, (1 - ln 2)/2, 0] */
    const double ln2 = log(2.0);
    attend_real e[3] = {(attend_real)log(4.0), (attend_real)ln2, 0}, w[3][3];
    int support = 0;
    double tau = attend_normalizer_threshold(ATTEND_NORMALIZER_SPARSEMAX, e, 3, &support);
    EXPECT(support == 2 && fabs(tau - (3 * ln2 - 1) / 2) < 1e-7, "sparsemax τ %.9g support %d", tau, support);
    for (int nz = 0; nz < 3; nz++)
        EXPECT(attend_masked_normalize_forward((attend_normalizer)nz, w[nz], e, NULL, NULL, 0, 1, 1, 3, NULL) ==
                   ATTEND_OK,
               "%s", NAMES[nz]);
    EXPECT(fabs(w[1][0] - (1 + ln2) / 2) < 1e-6 && fabs(w[1][1] - (1 - ln2) / 2) < 1e-6 && w[1][2] == 0,
           "sparsemax [%g %g %g]", (double)w[1][0], (double)w[1][1], (double)w[1][2]);
    EXPECT(fabs(w[0][0] - 4.0 / 7) < 1e-6 && w[0][2] > 0, "softmax [%g ...]", (double)w[0][0]);
    /* entmax15: w = (e/2 - τ)² with the threshold of the library; every weight > 0 here */
    double t15 = attend_normalizer_threshold(ATTEND_NORMALIZER_ENTMAX15, e, 3, &support);
    double s15 = 0;
    for (int j = 0; j < 3; j++) {
        double x = e[j] / 2.0 - t15;
        EXPECT(fabs(w[2][j] - x * x) < 1e-6, "entmax15 w[%d] = %g, (e/2 - τ)² = %g", j, (double)w[2][j], x * x);
        s15 += x * x;
    }
    EXPECT(support == 3 && fabs(s15 - 1) < 1e-6, "entmax15 support %d, Σ (e/2 - τ)² = %g", support, s15);
    /* the golden output prints these numbers */
    FILE *fp = fopen("golden/explain_sparsemax.txt", "r");
    EXPECT(fp, "cannot open golden/explain_sparsemax.txt");
    if (!fp) return;
    static char text[16384];
    size_t len = fread(text, 1, sizeof text - 1, fp);
    text[len] = '\0';
    fclose(fp);
    char buf[64];
    for (int j = 0; j < 2; j++) {
        snprintf(buf, sizeof buf, "%.6f", (double)w[1][j]);
        golden_has(text, buf, "a sparsemax weight");
    }
    for (int j = 0; j < 3; j++) {
        snprintf(buf, sizeof buf, "%.6f", (double)w[2][j]);
        golden_has(text, buf, "an entmax15 weight");
    }
    golden_has(text, "0 (exact zero)", "the exact zero");
    snprintf(buf, sizeof buf, "support k* = 2, τ = (z_(1) + ... + z_(k*) - 1) / k* = %.6f", tau);
    golden_has(text, buf, "sparsemax's τ");
    snprintf(buf, sizeof buf, "with τ = %.6f", t15);
    golden_has(text, buf, "entmax15's τ");
    /* seed 001's scores: all three in the support, τ = (1.70 - 1)/3 */
    attend_real s1[3] = {0.94f, 0.52f, 0.24f};
    tau = attend_normalizer_threshold(ATTEND_NORMALIZER_SPARSEMAX, s1, 3, &support);
    EXPECT(support == 3 && fabs(tau - 0.7 / 3) < 1e-6, "seed 001: τ %g support %d", tau, support);
}

/* ------------------------------------------------------------------ model */

static int row_sums_ok(const attend_real *a, int rows, int S, int *zeros) {
    int ok = 1;
    for (int r = 0; r < rows; r++) {
        double s = 0;
        for (int j = 0; j < S; j++) {
            s += a[(size_t)r * S + j];
            *zeros += a[(size_t)r * S + j] == 0;
            if (a[(size_t)r * S + j] < 0) ok = 0;
        }
        if (fabs(s - 1) > 1e-5) ok = 0;
    }
    return ok;
}

static void check_model(attend_decoder_kind dec, attend_score_kind score, attend_normalizer nz) {
    char what[96];
    snprintf(what, sizeof what, "%s/%s/%s", attend_decoder_name(dec), attend_score_name(score), NAMES[nz]);
    attend_error err;
    attend_task_config tc = {ATTEND_TASK_REVERSE, 8, 3, 7, 2000, 5};
    attend_dataset *train = NULL;
    attend_vocab *vocab = NULL;
    EXPECT(attend_dataset_task(&train, &vocab, &tc, &err) == ATTEND_OK, "%s", err.msg);
    int V = attend_vocab_size(vocab);
    int dot = score == ATTEND_SCORE_DOT;
    attend_model_config mc = {ATTEND_CELL_GRU, dec, score, V, V, 16, 16, 1, dot ? 32 : 32, 16, 32, 7, 7,
                              0, 0, 0, 0, nz, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    attend_model *m = NULL;
    attend_trainer *tr = NULL;
    EXPECT(attend_model_create(&m, &mc, 3, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = 1e-2;
    EXPECT(attend_trainer_create(&tr, m, &oc, train, 32, 4, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    attend_step_report rep;
    double first = 0, last = 0;
    for (int s = 0; s < 40 && tr; s++) {
        EXPECT(attend_trainer_step(tr, &rep, &err) == ATTEND_OK, "%s: %s", what, err.msg);
        if (s == 0) first = rep.tf.loss;
        last = rep.tf.loss;
        EXPECT(isfinite(rep.tf.attn_entropy), "%s: step %d attention entropy %g", what, s, rep.tf.attn_entropy);
    }
    EXPECT(last < first, "%s: loss %.4f -> %.4f", what, first, last);
    attend_eval_stats ev;
    EXPECT(attend_model_evaluate(m, train, 32, 200, &ev, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    EXPECT(isfinite(ev.attn_entropy) && ev.attn_entropy >= 0, "%s: eval entropy %g", what, ev.attn_entropy);

    enum { L = 8 }; /* max_tgt_len + 1 */
    /* greedy, beam and scoring: alignments are distributions with exact zeros */
    int32_t src[2][7] = {{4, 5, 6, 7, 8, 9, 10}, {6, 4, 9, 0, 0, 0, 0}}, len[2] = {7, 3};
    int32_t out[2 * L], out_len[2];
    attend_real al[2 * L * 7];
    EXPECT(attend_model_greedy(m, &src[0][0], len, 2, 7, L, out, out_len, al, &err) == ATTEND_OK, "%s: %s", what,
           err.msg);
    int zeros = 0;
    EXPECT(row_sums_ok(al, out_len[0], 7, &zeros), "%s: greedy alignment rows", what);
    for (int t = 0; t < out_len[1]; t++) /* the padded positions of the short source: exactly 0 */
        for (int j = 3; j < 7; j++) EXPECT(al[(size_t)(L + t) * 7 + j] == 0, "%s: padding weight", what);
    EXPECT(zeros > 0, "%s: no exact zero in the greedy alignment", what);
    int32_t bout[3 * L], blen[3];
    double bscore[3];
    attend_real bal[3 * L * 7];
    int got = 0;
    EXPECT(attend_model_beam(m, src[0], 7, 4, 3, L, 0, bout, blen, bscore, bal, &got, &err) == ATTEND_OK, "%s: %s",
           what, err.msg);
    zeros = 0;
    for (int k = 0; k < got; k++) EXPECT(row_sums_ok(bal + (size_t)k * L * 7, blen[k], 7, &zeros), "%s: beam", what);
    EXPECT(got > 0 && zeros > 0, "%s: beam: %d hypotheses, %d exact zeros", what, got, zeros);
    double logp;
    attend_real sal[8 * 7];
    EXPECT(attend_model_score(m, src[0], 7, out, out_len[0], &logp, sal, &err) == ATTEND_OK, "%s: %s", what,
           err.msg);
    zeros = 0;
    EXPECT(isfinite(logp) && row_sums_ok(sal, out_len[0] + 1, 7, &zeros), "%s: scoring", what);
    /* interventions run unchanged (the weights they edit come from the normaliser) */
    attend_intervention ivs[3] = {{ATTEND_IV_REMOVE_STATE, 2, 0, 0, 0, 0, 0}, {ATTEND_IV_DROP_TOP, 0, 0, 0, 0, 0, 0},
                                  {ATTEND_IV_UNIFORM, 0, 0, 0, 0, 0, 0}};
    for (int i = 0; i < 3; i++) {
        attend_intervention_result res;
        memset(&res, 0, sizeof res);
        double tv[L + 1];
        int32_t iout[L];
        res.tv = tv;
        res.out = iout;
        EXPECT(attend_model_intervene(m, src[0], 7, out, out_len[0], L, &ivs[i], &res, &err) == ATTEND_OK,
               "%s: intervene %s: %s", what, attend_intervention_name(ivs[i].kind), err.msg);
        EXPECT(isfinite(res.tv_mean) && res.tv_mean >= 0 && res.tv_mean <= 1, "%s: tv %g", what, res.tv_mean);
    }
    /* the model file keeps the normaliser; the loaded model decodes the same */
    char path[64] = "/tmp/attend-test-sparse-XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0, "mkstemp");
    if (fd >= 0) close(fd);
    EXPECT(attend_model_save(m, path, vocab, vocab, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    attend_model *m2 = NULL;
    attend_model_config cap;
    memset(&cap, 0, sizeof cap);
    EXPECT(attend_model_load(&m2, path, &cap, NULL, NULL, NULL, &err) == ATTEND_OK, "%s: %s", what, err.msg);
    if (m2) {
        EXPECT(attend_model_get_config(m2)->normalizer == nz, "%s: loaded normalizer %d", what,
               (int)attend_model_get_config(m2)->normalizer);
        int32_t out2[2 * L], out_len2[2];
        attend_real al2[2 * L * 7];
        EXPECT(attend_model_greedy(m2, &src[0][0], len, 2, 7, L, out2, out_len2, al2, &err) == ATTEND_OK, "%s", err.msg);
        EXPECT(out_len2[0] == out_len[0] && !memcmp(al2, al, (size_t)out_len[0] * 7 * sizeof *al),
               "%s: the loaded model aligns differently", what);
    }
    /* a file naming an unknown normaliser is refused, naming the key */
    FILE *fp = fopen(path, "rb");
    static char bytes[1 << 20];
    size_t nbytes = fp ? fread(bytes, 1, sizeof bytes, fp) : 0;
    if (fp) fclose(fp);
    char *key = NULL;
    /* the config is a JSON string in the metadata: its quotes are escaped */
    const char *pat = "normalizer\\\":\\\"";
    const size_t pl = strlen(pat);
    for (size_t i = 0; i + pl < nbytes && !key; i++)
        if (!memcmp(bytes + i, pat, pl)) key = bytes + i;
    EXPECT(key != NULL, "%s: no normalizer key in the file", what);
    if (key) {
        key[pl] = 'X'; /* "sparsemax" -> "Xparsemax": an unknown name, same length */
        fp = fopen(path, "wb");
        fwrite(bytes, 1, nbytes, fp);
        fclose(fp);
        attend_model *m3 = NULL;
        attend_status st = attend_model_load(&m3, path, &cap, NULL, NULL, NULL, &err);
        EXPECT(st != ATTEND_OK && strstr(err.msg, "normalizer"), "%s: unknown normaliser in the file: %s %s", what,
               attend_status_name(st), err.msg);
        attend_model_free(m3);
    }
    remove(path);
    attend_model_free(m2);
    attend_trainer_free(tr);
    attend_model_free(m);
    attend_dataset_free(train);
    attend_vocab_free(vocab);
}

static void test_model(void) {
    for (int nz = 1; nz <= 2; nz++) {
        check_model(ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, (attend_normalizer)nz);
        check_model(ATTEND_DECODER_LUONG, ATTEND_SCORE_GENERAL, (attend_normalizer)nz);
    }
}

static void test_config(void) {
    attend_model_config mc = {ATTEND_CELL_GRU, ATTEND_DECODER_POINTER, ATTEND_SCORE_ADDITIVE, 9, 9, 8, 8, 1, 16,
                              8, 4, 6, 6, 0, 0, 0, 0, ATTEND_NORMALIZER_SPARSEMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    attend_error err;
    attend_status st = attend_model_config_check(&mc, &err);
    EXPECT(st == ATTEND_ERR_ARG && strstr(err.msg, "sparsemax") && strstr(err.msg, "pointer"), "pointer: %s",
           err.msg);
    mc.decoder = ATTEND_DECODER_NONE;
    mc.normalizer = ATTEND_NORMALIZER_ENTMAX15;
    st = attend_model_config_check(&mc, &err);
    EXPECT(st == ATTEND_ERR_ARG && strstr(err.msg, "entmax15") && strstr(err.msg, "none"), "none: %s", err.msg);
    mc.decoder = ATTEND_DECODER_LUONG;
    mc.normalizer = (attend_normalizer)3;
    st = attend_model_config_check(&mc, &err);
    EXPECT(st == ATTEND_ERR_ARG && strstr(err.msg, "normalizer=3"), "normalizer 3: %s", err.msg);
    mc.normalizer = ATTEND_NORMALIZER_ENTMAX15;
    EXPECT(attend_model_config_check(&mc, &err) == ATTEND_OK, "luong/entmax15: %s", err.msg);
}

/* The sweep with normaliser entries: names with "+sparsemax", separate rows
 * and series, the CSV round trip keeps the normaliser, NONE refuses one. */
static void test_sweep(void) {
    const int lengths[1] = {4};
    attend_sweep_model models[3] = {
        {.decoder = ATTEND_DECODER_LUONG, .score = ATTEND_SCORE_DOT},
        {.decoder = ATTEND_DECODER_LUONG, .score = ATTEND_SCORE_DOT, .normalizer = ATTEND_NORMALIZER_SPARSEMAX},
        {.decoder = ATTEND_DECODER_BAHDANAU, .score = ATTEND_SCORE_ADDITIVE, .normalizer = ATTEND_NORMALIZER_ENTMAX15}};
    attend_sweep_config c;
    memset(&c, 0, sizeof c);
    c.task = ATTEND_TASK_REVERSE;
    c.symbols = 6;
    c.train_pairs = 300;
    c.dev_pairs = 30;
    c.lengths = lengths;
    c.n_lengths = 1;
    c.models = models;
    c.n_models = 3;
    c.cell = ATTEND_CELL_GRU;
    c.emb = 8;
    c.enc_hidden = 8;
    c.dec_hidden = 16;
    c.attn = 8;
    c.steps = 20;
    c.batch = 16;
    c.optim = attend_optim_defaults(ATTEND_OPT_ADAM);
    c.seed = 4;
    attend_sweep_row rows[3], back[3];
    attend_error err;
    EXPECT(attend_sweep_run(&c, rows, NULL, NULL, &err) == ATTEND_OK, "%s", err.msg);
    char name[64];
    EXPECT(!strcmp(attend_sweep_model_name(rows[1].model, name, sizeof name), "luong-dot+sparsemax"), "name %s", name);
    EXPECT(!strcmp(attend_sweep_model_name(rows[2].model, name, sizeof name), "bahdanau-additive+entmax15"), "name %s",
           name);
    EXPECT(memcmp(&rows[0].eval, &rows[1].eval, sizeof rows[0].eval) != 0, "softmax and sparsemax rows are equal");
    char *csv = NULL, *svg = NULL;
    EXPECT(attend_sweep_csv(rows, 3, &csv, &err) == ATTEND_OK, "%s", err.msg);
    int n = 0;
    EXPECT(csv && attend_sweep_csv_parse(csv, strlen(csv), "t", back, 3, &n, &err) == ATTEND_OK && n == 3, "%s",
           err.msg);
    for (int i = 0; i < n; i++)
        EXPECT(back[i].model.normalizer == rows[i].model.normalizer, "csv row %d: normalizer %d", i,
               (int)back[i].model.normalizer);
    EXPECT(attend_sweep_plot_svg(rows, 3, NULL, &svg, &err) == ATTEND_OK && svg && strstr(svg, "luong-dot+sparsemax") &&
               strstr(svg, ">luong-dot<"),
           "plot series: %s", err.msg);
    free(csv);
    free(svg);
    const char *bad = "model,decoder,score,length,min_length,pairs,greedy_seq_acc,greedy_token_acc,tf_seq_acc,"
                      "tf_token_acc,loss,attn_entropy,uniform_entropy,samples_per_s,train_seconds,wall_seconds\n"
                      "luong-dot+bogus,luong,dot,4,4,30,1,1,1,1,0.1,0.1,1.3,100,1,1\n";
    EXPECT(attend_sweep_csv_parse(bad, strlen(bad), "t", back, 3, &n, &err) == ATTEND_ERR_FORMAT &&
               strstr(err.msg, "field 1 (model)"),
           "unknown suffix: %s", err.msg);
    models[0].decoder = ATTEND_DECODER_NONE;
    models[0].normalizer = ATTEND_NORMALIZER_SPARSEMAX;
    EXPECT(attend_sweep_run(&c, rows, NULL, NULL, &err) == ATTEND_ERR_ARG && strstr(err.msg, "decoder none"),
           "none+sparsemax: %s", err.msg);
}

int main(void) {
    RUN(test_reference);
    RUN(test_errors);
    RUN(test_explain_numbers);
    RUN(test_config);
    RUN(test_model);
    RUN(test_sweep);
    return harness_summary();
}
