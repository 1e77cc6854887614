/*
 * test_monotonic.c — monotonic attention (Raffel et al. 2017): the kernels
 * against PyTorch (tests/ref/monotonic_*.txt from tools/make_monotonic_ref.py:
 * the paper's parallel form in float64 with autograd, a loop for the hard
 * process), their argument checks, and the model with monotonic = 1: hard
 * alignments in greedy, beam and forced scoring never move left, a file
 * round trip keeps attention.r, and the expected-alignment training learns
 * the copy task.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "attend.h"
#include "harness.h"
#include "ref_reader.h"

#define SCRIPT "/usr/bin/python3 tools/make_monotonic_ref.py"

static double *to_double(const attend_real *x, size_t n) {
    double *d = malloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++) d[i] = (double)x[i];
    return d;
}

static attend_real *to_real(const double *x, size_t n) {
    attend_real *r = malloc(n * sizeof *r);
    for (size_t i = 0; i < n; i++) r[i] = (attend_real)x[i];
    return r;
}

/* One reference case: forward, backward and the hard process. */
static void check_case(int i) {
    char path[64], what[96];
    snprintf(path, sizeof path, "ref/monotonic_%02d.txt", i);
    ref_file f;
    if (!ref_load(&f, path, SCRIPT)) return;
    const ref_tensor *e = ref_get(&f, "e", 3, NULL), *r = ref_get(&f, "r", 1, NULL), *len = ref_get(&f, "len", 1, NULL);
    const ref_tensor *alpha = ref_get(&f, "alpha", 3, NULL), *dalpha = ref_get(&f, "dalpha", 3, NULL);
    const ref_tensor *de = ref_get(&f, "de", 3, NULL), *dr = ref_get(&f, "dr", 1, NULL);
    const ref_tensor *ha = ref_get(&f, "hard_alpha", 3, NULL), *hp = ref_get(&f, "hard_pos", 2, NULL);
    if (!e || !r || !len || !alpha || !dalpha || !de || !dr || !ha || !hp) {
        ref_free(&f);
        return;
    }
    int N = e->dims[0], T = e->dims[1], S = e->dims[2];
    size_t n = (size_t)N * T * S;
    attend_real *ev = to_real(e->v, n), *dav = to_real(dalpha->v, n);
    attend_real *a = calloc(n, sizeof *a), *p = calloc(n, sizeof *p), *q = calloc(n, sizeof *q);
    attend_real *dev = calloc(n, sizeof *dev), *work = calloc(2 * (size_t)N * S, sizeof *work), drv = 0;
    int32_t *lv = malloc((size_t)N * sizeof *lv), *pos = malloc((size_t)N * T * sizeof *pos);
    for (int k = 0; k < N; k++) lv[k] = (int32_t)len->v[k];
    attend_error err;
    EXPECT(attend_monotonic_forward(a, p, q, ev, (attend_real)r->v[0], lv, N, T, S, &err) == ATTEND_OK, "%s", err.msg);
    double *got = to_double(a, n);
    snprintf(what, sizeof what, "case %d (N=%d T=%d S=%d) alpha", i, N, T, S);
    EXPECT_CLOSE(what, got, alpha->v, n, 1e-6, 1e-5);
    free(got);
    EXPECT(attend_monotonic_backward(dev, &drv, dav, p, q, lv, N, T, S, work, &err) == ATTEND_OK, "%s", err.msg);
    got = to_double(dev, n);
    snprintf(what, sizeof what, "case %d de", i);
    EXPECT_CLOSE(what, got, de->v, n, 1e-5, 1e-4);
    free(got);
    snprintf(what, sizeof what, "case %d dr", i);
    EXPECT_NEAR(what, (double)drv, dr->v[0], 1e-4 * (1 + fabs(dr->v[0])));
    EXPECT(attend_monotonic_hard_forward(a, ev, (attend_real)r->v[0], lv, N, T, S, pos, &err) == ATTEND_OK, "%s",
           err.msg);
    got = to_double(a, n);
    snprintf(what, sizeof what, "case %d hard alpha", i);
    EXPECT_CLOSE(what, got, ha->v, n, 0, 0);
    for (size_t k = 0; k < (size_t)N * T; k++) got[k] = pos[k];
    snprintf(what, sizeof what, "case %d hard positions", i);
    EXPECT_CLOSE(what, got, hp->v, (size_t)N * T, 0, 0);
    free(got);
    free(ev), free(dav), free(a), free(p), free(q), free(dev), free(work), free(lv), free(pos);
    ref_free(&f);
}

static void kernels_match_pytorch(void) {
    for (int i = 0; i < 5; i++) check_case(i);
}

/* Rows sum to at most 1, the hard positions never decrease, and masked
 * positions get nothing, on random energies. */
static void kernel_invariants(void) {
    enum { N = 3, T = 7, S = 9 };
    attend_rng rng;
    attend_rng_seed(&rng, 7);
    static attend_real e[N * T * S], a[N * T * S], p[N * T * S], q[N * T * S];
    int32_t len[N] = {9, 4, 1}, pos[N * T];
    for (int i = 0; i < N * T * S; i++) e[i] = (attend_real)(8 * attend_rng_uniform(&rng) - 4);
    attend_error err;
    EXPECT(attend_monotonic_forward(a, p, q, e, -1, len, N, T, S, &err) == ATTEND_OK, "%s", err.msg);
    double worst = 0;
    int masked_ok = 1;
    for (int n = 0; n < N; n++)
        for (int t = 0; t < T; t++) {
            double sum = 0;
            for (int j = 0; j < S; j++) {
                sum += a[(n * T + t) * S + j];
                if (j >= len[n] && a[(n * T + t) * S + j] != 0) masked_ok = 0;
            }
            if (sum > worst) worst = sum;
        }
    EXPECT(worst <= 1 + 1e-6, "a row sums to %g > 1", worst);
    EXPECT(masked_ok, "a masked position has weight");
    EXPECT(attend_monotonic_hard_forward(a, e, 0, len, N, T, S, pos, &err) == ATTEND_OK, "%s", err.msg);
    int mono = 1;
    for (int n = 0; n < N; n++)
        for (int t = 1; t < T; t++) mono &= pos[n * T + t] >= pos[n * T + t - 1];
    EXPECT(mono, "a hard position moved left");
}

static void kernel_errors(void) {
    attend_real e[4] = {0, 1, 2, NAN}, a[4], p[4], q[4], w[4];
    int32_t len[1] = {5}, pos[2];
    attend_error err;
    EXPECT(attend_monotonic_forward(NULL, p, q, e, 0, NULL, 1, 2, 2, &err) == ATTEND_ERR_NULL &&
               strstr(err.msg, "alpha [N,T,S]"),
           "%s", err.msg);
    EXPECT(attend_monotonic_forward(a, p, q, e, 0, NULL, 1, 0, 2, &err) == ATTEND_ERR_SHAPE, "%s", err.msg);
    EXPECT(attend_monotonic_forward(a, p, q, e, 0, len, 1, 2, 2, &err) == ATTEND_ERR_SHAPE &&
               strstr(err.msg, "row 0: length 5"),
           "%s", err.msg);
    EXPECT(attend_monotonic_forward(a, p, q, e, 0, NULL, 1, 2, 2, &err) == ATTEND_ERR_NONFINITE &&
               strstr(err.msg, "(n=0, t=1, j=1)"),
           "%s", err.msg);
    EXPECT(attend_monotonic_forward(a, p, q, e, INFINITY, NULL, 1, 1, 2, &err) == ATTEND_ERR_NONFINITE, "%s",
           err.msg);
    EXPECT(attend_monotonic_backward(NULL, NULL, e, p, q, NULL, 1, 2, 2, NULL, &err) == ATTEND_ERR_NULL &&
               strstr(err.msg, "work"),
           "%s", err.msg);
    EXPECT(attend_monotonic_backward(NULL, NULL, e, p, q, NULL, 1, 2, 2, w, &err) == ATTEND_ERR_NONFINITE, "%s",
           err.msg);
    EXPECT(attend_monotonic_hard_forward(a, e, 0, NULL, 1, 2, 2, pos, &err) == ATTEND_ERR_NONFINITE, "%s", err.msg);
    EXPECT(attend_monotonic_hard_forward(a, e, 0, NULL, 1, 2, 2, NULL, &err) == ATTEND_ERR_NULL, "%s", err.msg);
}

/* ------------------------------------------------------------------ model */

/* A small untrained monotonic model: r = 0 (so the hard process stops at
 * some positions and passes others) and EOS made unlikely (so outputs run
 * long enough to move). */
static attend_model *small_model(attend_decoder_kind dec, attend_cell_kind cell, uint64_t seed) {
    attend_model_config c = {cell, dec, ATTEND_SCORE_ADDITIVE, 9, 9, 6, 5, 1, 8, 6, 4, 8, 10, 0, 0, 0, 1,
                             ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    attend_model *m = NULL;
    attend_error err;
    EXPECT(attend_model_create(&m, &c, seed, &err) == ATTEND_OK, "%s", err.msg);
    if (!m) return NULL;
    attend_model_tensor t;
    attend_model_tensor_find(m, "attention.r", &t, NULL);
    t.data[0] = 0;
    attend_model_tensor_find(m, "attention.v", &t, NULL);
    for (size_t i = 0; i < t.numel; i++) t.data[i] *= 8; /* energies far from 0: stops and passes */
    attend_model_tensor_find(m, "out.bias", &t, NULL);
    t.data[ATTEND_PAD] = t.data[ATTEND_BOS] = t.data[ATTEND_EOS] = -6;
    return m;
}

/* Rows [L,S] of a hard alignment: each one-hot or zero, the one-hot positions
 * never decreasing, nothing after a zero row; moves counts the steps whose
 * position is larger than the one before. Returns 1 when all hold. */
static int hard_rows_ok(const attend_real *al, int L, int S, int *moves) {
    int prev = 0, gone = 0;
    for (int t = 0; t < L; t++) {
        int ones = 0, at = -1;
        for (int j = 0; j < S; j++) {
            if (al[(size_t)t * S + j] == 1) ones++, at = j;
            else if (al[(size_t)t * S + j] != 0) return 0;
        }
        if (ones > 1 || (gone && ones)) return 0;
        if (!ones) {
            gone = 1;
            continue;
        }
        if (at < prev) return 0;
        if (at > prev) ++*moves;
        prev = at;
    }
    return 1;
}

/* Greedy on three rows and beam on the first: every alignment row is hard and
 * monotonic, forced scoring of each output reproduces its alignment (the
 * hard process in scoring; beam's positions followed their hypotheses), and
 * the positions do move (or the test would show nothing). */
static void check_hard(attend_model *m, const char *what, const int32_t *src, const int32_t *len) {
    enum { N = 3, S = 6, L = 6, K = 4 };
    int32_t out[N * L], out_len[N], bout[K * L], blen[K];
    int n_out = 0;
    double bscore[K], logp;
    static attend_real al[N * L * S], bal[K * L * S], sal[(L + 1) * S];
    attend_error err;
    EXPECT(attend_model_greedy(m, src, len, N, S, L, out, out_len, al, &err) == ATTEND_OK, "%s", err.msg);
    int moves = 0, ok = 1, same = 1;
    for (int n = 0; n < N; n++) {
        ok &= hard_rows_ok(al + (size_t)n * L * S, L, S, &moves);
        EXPECT(attend_model_score(m, src + n * S, len[n], out + n * L, out_len[n], &logp, sal, &err) == ATTEND_OK,
               "%s", err.msg);
        for (int t = 0; t < out_len[n]; t++)
            for (int j = 0; j < len[n]; j++) same &= sal[(size_t)t * len[n] + j] == al[((size_t)n * L + t) * S + j];
    }
    printf("  %s greedy: %d moves right over %d rows, rows ok %d, scoring agrees %d\n", what, moves, N, ok, same);
    EXPECT(ok, "%s: a greedy alignment row is not hard-monotonic", what);
    EXPECT(moves > 0, "%s: the greedy alignments never move: the test shows nothing", what);
    EXPECT(same, "%s: attend_model_score's forced alignment differs from greedy's", what);
    EXPECT(attend_model_beam(m, src, len[0], K, K, L, 0, bout, blen, bscore, bal, &n_out, &err) == ATTEND_OK, "%s",
           err.msg);
    int S0 = len[0], bmoves = 0;
    ok = 1, same = 1;
    for (int i = 0; i < n_out; i++) {
        ok &= hard_rows_ok(bal + (size_t)i * L * S0, L, S0, &bmoves);
        EXPECT(attend_model_score(m, src, S0, bout + i * L, blen[i], &logp, sal, &err) == ATTEND_OK, "%s", err.msg);
        for (size_t q = 0; q < (size_t)blen[i] * S0; q++) same &= sal[q] == bal[(size_t)i * L * S0 + q];
    }
    printf("  %s beam: %d hypotheses, %d moves right, rows ok %d, scoring agrees %d\n", what, n_out, bmoves, ok, same);
    EXPECT(n_out >= 2 && ok && bmoves > 0, "%s beam: %d hypotheses, rows ok %d, %d moves", what, n_out, ok, bmoves);
    EXPECT(same, "%s: a beam hypothesis's alignment differs from its forced alignment", what);
}

/* Removing a saved state: the hard scan passes over it (p = 0 there). */
static void intervene_remove_state(void) {
    attend_model *m = small_model(ATTEND_DECODER_BAHDANAU, ATTEND_CELL_GRU, 5);
    if (!m) return;
    enum { S = 8, L = 10 };
    int32_t src[S] = {4, 5, 6, 7, 8, 4, 5, 6}, len = S, base[L], base_len, out[L + 1];
    static attend_real al[L * S], fal[(L + 1) * S], oal[(L + 1) * S];
    attend_error err;
    EXPECT(attend_model_greedy(m, src, &len, 1, S, L, base, &base_len, al, &err) == ATTEND_OK, "%s", err.msg);
    /* the position greedy decoding attended first */
    int first = -1;
    for (int j = 0; j < S && first < 0; j++)
        if (al[j] == 1) first = j;
    EXPECT(first >= 0, "the first step attends to nothing");
    if (first < 0) first = 0;
    attend_intervention iv = {ATTEND_IV_REMOVE_STATE, first, 0, 0, 0, 0, 0};
    attend_intervention_result res;
    memset(&res, 0, sizeof res);
    res.forced_align = fal;
    res.out = out;
    res.out_align = oal;
    EXPECT(attend_model_intervene(m, src, S, base, base_len, L, &iv, &res, &err) == ATTEND_OK, "%s", err.msg);
    int never = 1, moves = 0, ok = 1;
    for (int t = 0; t < res.steps; t++) never &= fal[(size_t)t * S + first] == 0;
    for (int t = 0; t < res.out_len; t++) never &= oal[(size_t)t * S + first] == 0;
    ok &= hard_rows_ok(fal, res.steps, S, &moves) && hard_rows_ok(oal, res.out_len, S, &moves);
    printf("  removed state %d: never attended %d, rows ok %d, TV mean %.3f\n", first, never, ok, res.tv_mean);
    EXPECT(never && ok, "removed position %d: never attended %d, rows ok %d", first, never, ok);
    EXPECT(res.tv_mean > 0, "removing the attended state changed nothing");
    attend_model_free(m);
}

/* The configuration refuses what does not combine, naming both. */
static void config_combinations(void) {
    attend_model_config c = {ATTEND_CELL_GRU, ATTEND_DECODER_POINTER, ATTEND_SCORE_ADDITIVE, 9, 9, 6, 5, 1, 8, 6, 4,
                             8, 10, 0, 0, 0, 1, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    attend_error err;
    EXPECT(attend_model_config_check(&c, &err) == ATTEND_ERR_ARG && strstr(err.msg, "monotonic") &&
               strstr(err.msg, "pointer"),
           "%s", err.msg);
    c.decoder = ATTEND_DECODER_NONE;
    EXPECT(attend_model_config_check(&c, &err) == ATTEND_ERR_ARG && strstr(err.msg, "monotonic") &&
               strstr(err.msg, "none"),
           "%s", err.msg);
    c.decoder = ATTEND_DECODER_LUONG;
    EXPECT(attend_model_config_check(&c, &err) == ATTEND_OK, "%s", err.msg);
    c.monotonic = 2;
    EXPECT(attend_model_config_check(&c, &err) == ATTEND_ERR_ARG && strstr(err.msg, "monotonic=2"), "%s", err.msg);
}

/* Model files: attention.r and the config key survive a round trip; a file
 * whose attention.r is missing, extra, misshapen or not F32 is refused
 * naming the tensor. */
static void model_files(void) {
    attend_model *m = small_model(ATTEND_DECODER_BAHDANAU, ATTEND_CELL_GRU, 3);
    if (!m) return;
    attend_vocab *v = NULL;
    attend_vocab_create(&v, NULL);
    const char *sym[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++) attend_vocab_add(v, sym[i], 1, NULL, NULL);
    attend_model_tensor t;
    attend_model_tensor_find(m, "attention.r", &t, NULL);
    t.data[0] = (attend_real)-1.25;
    char dir[300], path[340];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/attend-test-monotonic-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    EXPECT(mkdtemp(dir) != NULL, "mkdtemp %s", dir);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    attend_error err;
    EXPECT(attend_model_save(m, path, v, v, ATTEND_TOKENIZE_CHAR, &err) == ATTEND_OK, "%s", err.msg);
    attend_model *m2 = NULL;
    EXPECT(attend_model_load(&m2, path, NULL, NULL, NULL, NULL, &err) == ATTEND_OK, "%s", err.msg);
    if (m2) {
        attend_model_tensor t2;
        EXPECT(attend_model_get_config(m2)->monotonic == 1, "monotonic lost");
        EXPECT(attend_model_tensor_find(m2, "attention.r", &t2, &err) == ATTEND_OK && t2.data[0] == (attend_real)-1.25,
               "attention.r after the round trip: %g", t2.data[0]);
        attend_model_free(m2);
    }
    /* hostile variants of the file */
    int n = attend_model_tensor_count(m);
    attend_st_entry e[64];
    char *cfg = NULL, *vj = NULL;
    attend_model_config_to_json(attend_model_get_config(m), &cfg, NULL);
    attend_vocab_to_json(v, &vj, NULL);
    char *plain = malloc(strlen(cfg) + 1);
    /* the same JSON without the "monotonic":1 key */
    const char *key = ",\"monotonic\":1";
    char *at = strstr(cfg, key);
    EXPECT(at != NULL, "config JSON lacks %s: %s", key, cfg);
    if (at) {
        size_t pre = (size_t)(at - cfg);
        memcpy(plain, cfg, pre);
        strcpy(plain + pre, at + strlen(key));
    } else strcpy(plain, cfg);
    static const double r64 = -1;
    static const float r2[2] = {-1, -1};
    struct {
        const char *name, *msg;
        int drop_r, plain_cfg, bad;
    } cases[] = {{"missing attention.r", "attention.r", 1, 0, 0},
                 {"attention.r in a model without monotonic", "attention.r", 0, 1, 0},
                 {"attention.r shaped [2]", "attention.r", 0, 0, 1},
                 {"attention.r as F64", "attention.r", 0, 0, 2}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int k = 0;
        for (int i = 0; i < n; i++) {
            attend_model_tensor ti;
            attend_model_tensor_get(m, i, &ti, NULL);
            int is_r = !strcmp(ti.name, "attention.r");
            if (is_r && cases[c].drop_r) continue;
            memset(&e[k], 0, sizeof e[k]);
            e[k].name = ti.name;
            e[k].dtype = ATTEND_DTYPE_F32;
            e[k].ndim = ti.ndim;
            e[k].shape[0] = ti.shape[0];
            e[k].shape[1] = ti.shape[1];
            e[k].data = ti.data;
            if (is_r && cases[c].bad == 1) e[k].shape[0] = 2, e[k].data = r2;
            if (is_r && cases[c].bad == 2) e[k].dtype = ATTEND_DTYPE_F64, e[k].data = &r64;
            k++;
        }
        attend_st_meta meta[5] = {{"attend.format", "model"},
                                  {"attend.config", cases[c].plain_cfg ? plain : cfg},
                                  {"attend.tokenizer", "char"},
                                  {"attend.src_vocab", vj},
                                  {"attend.tgt_vocab", vj}};
        EXPECT(attend_st_write(path, e, k, meta, 5, &err) == ATTEND_OK, "%s", err.msg);
        attend_model *bad = NULL;
        attend_status st = attend_model_load(&bad, path, NULL, NULL, NULL, NULL, &err);
        printf("  %-42s %s: %s\n", cases[c].name, attend_status_name(st), err.msg);
        EXPECT(st == ATTEND_ERR_FORMAT && strstr(err.msg, cases[c].msg) && bad == NULL, "%s: %s", cases[c].name,
               err.msg);
        attend_model_free(bad);
    }
    remove(path);
    rmdir(dir);
    free(cfg), free(vj), free(plain);
    attend_vocab_free(v);
    attend_model_free(m);
}

/* Training's noise is keyed by the seed and the step: two trainers with the
 * same seed take the same steps bit for bit, and the expected-alignment
 * training lowers the loss of the copy task; then the trained models'
 * greedy, beam and scoring alignments (check_hard). */
#define STEPS 150
static void training_steps(void) {
    attend_task_config tc = {ATTEND_TASK_COPY, 5, 2, 6, 256, 3};
    attend_dataset *d = NULL;
    attend_vocab *v = NULL;
    attend_error err;
    EXPECT(attend_dataset_task(&d, &v, &tc, &err) == ATTEND_OK, "%s", err.msg);
    if (!d) return;
    attend_model_config c = {ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE,
                             attend_vocab_size(v), attend_vocab_size(v), 8, 8, 1, 16, 8, 16, 6, 6, 0, 0, 0, 1,
                             ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    attend_model *m[3] = {NULL, NULL, NULL};
    attend_trainer *tr[3] = {NULL, NULL, NULL};
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = 1e-2;
    double first = 0, last = 0;
    for (int i = 0; i < 3; i++) {
        c.decoder = i < 2 ? ATTEND_DECODER_BAHDANAU : ATTEND_DECODER_LUONG;
        c.cell = i < 2 ? ATTEND_CELL_GRU : ATTEND_CELL_LSTM;
        EXPECT(attend_model_create(&m[i], &c, 7, &err) == ATTEND_OK, "%s", err.msg);
        if (!m[i]) break;
        EXPECT(attend_trainer_create(&tr[i], m[i], &oc, d, 16, 9, &err) == ATTEND_OK, "%s", err.msg);
        if (!tr[i]) break;
        for (int s = 0; s < STEPS; s++) {
            attend_step_report rep;
            EXPECT(attend_trainer_step(tr[i], &rep, &err) == ATTEND_OK, "%s", err.msg);
            if (s == 0) first = rep.tf.loss;
            last = rep.tf.loss;
        }
    }
    if (m[0] && m[1]) {
        size_t n = attend_model_param_count(m[0]);
        EXPECT(!memcmp(attend_model_params(m[0]), attend_model_params(m[1]), n * sizeof(attend_real)),
               "two runs with the same seed differ");
        printf("  copy task, %d steps: loss %.3f -> %.3f\n", STEPS, first, last);
        EXPECT(last < 0.8 * first, "the loss did not fall: %.3f -> %.3f", first, last);
    }
    /* the trained models' hard alignments (copy task: letters 4..8) */
    int32_t src[3 * 6] = {4, 5, 6, 7, 8, 4, 5, 5, 6, 6, 7, 7, 8, 7, 6, 0, 0, 0}, len[3] = {6, 6, 3};
    if (m[0]) check_hard(m[0], "bahdanau/gru", src, len);
    if (m[2]) check_hard(m[2], "luong/lstm", src, len);
    for (int i = 0; i < 3; i++) {
        attend_trainer_free(tr[i]);
        attend_model_free(m[i]);
    }
    attend_dataset_free(d);
    attend_vocab_free(v);
}

/* ------------------------------------------------------------ data-parallel */

/* A rank of a data-parallel monotonic run (tests/test_parallel.c's setup). */
typedef struct {
    attend_dataset *d;
    attend_vocab *v;
    attend_model *m;
    attend_trainer *tr;
} mono_rank;

static int mono_rank_make(mono_rank *r) {
    memset(r, 0, sizeof *r);
    attend_task_config tc = {ATTEND_TASK_COPY, 6, 2, 6, 40, 5};
    attend_error err;
    if (attend_dataset_task(&r->d, &r->v, &tc, &err)) {
        EXPECT(0, "%s", err.msg);
        return 0;
    }
    int V = attend_vocab_size(r->v);
    attend_model_config c = {ATTEND_CELL_GRU, ATTEND_DECODER_BAHDANAU, ATTEND_SCORE_ADDITIVE, V, V, 8, 8, 1, 16, 8, 8,
                             6, 6, 0, 0, 0, 1, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    attend_optim_config oc = attend_optim_defaults(ATTEND_OPT_ADAM);
    oc.lr = 1e-2;
    if (attend_model_create(&r->m, &c, 5, &err) || attend_trainer_create(&r->tr, r->m, &oc, r->d, 8, 3, &err)) {
        EXPECT(0, "%s", err.msg);
        return 0;
    }
    return 1;
}

static void mono_rank_free(mono_rank *r) {
    attend_trainer_free(r->tr);
    attend_model_free(r->m);
    attend_dataset_free(r->d);
    attend_vocab_free(r->v);
}

static attend_status by_hand(void *user, attend_trainer *tr, const attend_real *part, attend_real *sum,
                             attend_error *err) {
    (void)user, (void)tr, (void)part, (void)sum;
    snprintf(err->msg, sizeof err->msg, "the two phases are called by hand");
    return ATTEND_ERR_ARG;
}

/* ranks emulated ranks, 2 gradient shards, 6 steps in two phases by hand;
 * rank 0's weights into out [n], its first step's loss into *loss0. */
static int mono_train_ranks(int ranks, attend_real *out, size_t n, double *loss0) {
    mono_rank r[2];
    attend_error err;
    int ok = 1;
    for (int i = 0; i < ranks; i++) ok &= mono_rank_make(&r[i]);
    for (int i = 0; ok && i < ranks; i++)
        ok &= attend_trainer_set_parallel(r[i].tr, 2, i, ranks, ranks > 1 ? by_hand : NULL, NULL, &err) == ATTEND_OK;
    size_t total = 0;
    for (int i = 0; ok && i < ranks; i++) total += attend_trainer_part_len(r[0].tr, i);
    attend_real *all = ok ? malloc(total * sizeof *all) : NULL;
    for (int step = 0; ok && all && step < 6; step++) {
        size_t off = 0;
        for (int i = 0; ok && i < ranks; i++) {
            const attend_real *part;
            ok = attend_trainer_step_part(r[i].tr, &part, &err) == ATTEND_OK;
            size_t len = attend_trainer_part_len(r[i].tr, i);
            if (ok) memcpy(all + off, part, len * sizeof *all);
            off += len;
        }
        attend_step_report rep;
        for (int i = 0; ok && i < ranks; i++) {
            ok = attend_trainer_step_finish(r[i].tr, all, &rep, &err) == ATTEND_OK;
            if (ok && step == 0 && i == 0) *loss0 = rep.tf.loss;
        }
    }
    EXPECT(ok, "%d ranks: %s", ranks, err.msg);
    if (ok) memcpy(out, attend_model_params(r[0].m), n * sizeof *out);
    free(all);
    for (int i = 0; i < ranks; i++) mono_rank_free(&r[i]);
    return ok;
}

/* Two gradient shards on one rank and on two ranks: the same bytes; and the
 * first step's loss of the sharded batch equals the plain step's (to
 * rounding), so each row draws the noise of its place in the whole batch,
 * whichever shard computes it (keyed by the shard's first row). */
static void data_parallel_noise(void) {
    mono_rank plain;
    if (!mono_rank_make(&plain)) return;
    size_t n = attend_model_param_count(plain.m);
    attend_step_report rep;
    attend_error err;
    EXPECT(attend_trainer_step(plain.tr, &rep, &err) == ATTEND_OK, "%s", err.msg);
    mono_rank_free(&plain);
    attend_real *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
    double la = 0, lb = 0;
    if (a && b && mono_train_ranks(1, a, n, &la) && mono_train_ranks(2, b, n, &lb)) {
        EXPECT(!memcmp(a, b, n * sizeof *a), "2 shards on 1 rank and on 2 ranks differ");
        printf("  2 shards: 1 rank and 2 ranks give the same %zu weights\n", n);
        EXPECT_NEAR("first step's loss: 2 shards vs the plain step", la, rep.tf.loss, 1e-5);
        EXPECT(la == lb, "first step's loss: 1 rank %.9g, 2 ranks %.9g", la, lb);
    }
    free(a);
    free(b);
}

int main(void) {
    RUN(kernels_match_pytorch);
    RUN(kernel_invariants);
    RUN(kernel_errors);
    RUN(intervene_remove_state);
    RUN(config_combinations);
    RUN(model_files);
    RUN(training_steps);
    RUN(data_parallel_noise);
    return harness_summary();
}
