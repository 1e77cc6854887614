/*
 * test_coverage.c — coverage (Tu et al. 2016; See et al. 2017) in the float
 * library, and the coverage penalty of beam search (Wu et al. 2016):
 *   - against PyTorch: tests/ref/coverage_<name>.{safetensors,txt} from
 *         /usr/bin/python3 tools/make_coverage_ref.py
 *     (the coverage input, the coverage loss, both): the loss, every
 *     parameter's gradient and each row's forced alignment. Tolerance as
 *     test_model_ref: |ours − torch| <= 1e-5 + 1e-4·|torch| (float32 rounding
 *     of float32 weights against float64; the coverage adds one sum per step);
 *   - decoding a coverage model: greedy's and beam's alignments equal the
 *     forced alignment of their own output (the coverage vector follows each
 *     hypothesis through beam's reordering), and beam's scores its forced
 *     log-probability;
 *   - the coverage penalty: each returned score equals the formula computed
 *     here, β Σ_j log(min(Σ_t α_tj, 1)) + log p / (len+1)^α, from forced
 *     alignments (EOS step included), and it changes the ranking for some
 *     source; bad options are refused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* ----------------------------------------------------------- PyTorch refs */

static void run_ref(const char *name) {
    char path[256], what[200];
    attend_error err;
    snprintf(path, sizeof path, "ref/coverage_%s.txt", name);
    ref_file f;
    if (!ref_load(&f, path, "/usr/bin/python3 tools/make_coverage_ref.py")) return;
    snprintf(path, sizeof path, "ref/coverage_%s.safetensors", name);
    attend_model *m = NULL;
    attend_status st = attend_model_load(&m, path, NULL, NULL, NULL, NULL, &err);
    EXPECT(st == ATTEND_OK, "%s: %s", path, err.msg);
    const ref_tensor *t_lam = ref_get(&f, "lambda", 1, NULL), *t_src = ref_get(&f, "src", 2, NULL);
    const ref_tensor *t_sl = ref_get(&f, "src_len", 1, NULL), *t_ti = ref_get(&f, "tgt_in", 2, NULL);
    const ref_tensor *t_to = ref_get(&f, "tgt_out", 2, NULL), *t_tl = ref_get(&f, "tgt_len", 1, NULL);
    const ref_tensor *t_loss = ref_get(&f, "loss", 1, NULL), *t_al = ref_get(&f, "align", 3, NULL);
    if (st != ATTEND_OK || !t_lam || !t_src || !t_sl || !t_ti || !t_to || !t_tl || !t_loss || !t_al) {
        attend_model_free(m);
        ref_free(&f);
        return;
    }
    const attend_model_config *cfg = attend_model_get_config(m);
    printf("  %s: %s/%s, coverage=%d, lambda=%g, %zu parameters\n", name, attend_cell_name(cfg->cell),
           attend_decoder_name(cfg->decoder), cfg->coverage, t_lam->v[0], attend_model_param_count(m));
    EXPECT(attend_model_set_coverage_loss(m, t_lam->v[0], &err) == ATTEND_OK, "%s: %s", name, err.msg);
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
    attend_model_zero_grad(m);
    st = attend_model_forward(m, &b, &stats, &err);
    EXPECT(st == ATTEND_OK, "%s: forward: %s", name, err.msg);
    if (st == ATTEND_OK) {
        snprintf(what, sizeof what, "%s loss", name);
        EXPECT_CLOSE(what, &stats.loss, t_loss->v, 1, ATOL, RTOL);
        EXPECT(attend_model_backward(m, &err) == ATTEND_OK, "%s: %s", name, err.msg);
        int ngrad = 0;
        for (int i = 0; i < f.count; i++) ngrad += !strncmp(f.t[i].name, "grad.", 5);
        EXPECT(ngrad == attend_model_tensor_count(m), "%s: %d reference gradients for %d tensors", name, ngrad,
               attend_model_tensor_count(m));
        for (int i = 0; i < attend_model_tensor_count(m); i++) {
            attend_model_tensor mt;
            attend_model_tensor_get(m, i, &mt, NULL);
            char gname[96];
            snprintf(gname, sizeof gname, "grad.%s", mt.name);
            const ref_tensor *g = ref_get(&f, gname, mt.ndim, NULL);
            if (!g) continue;
            EXPECT(g->n == mt.numel, "%s: %s size", name, gname);
            if (g->n != mt.numel) continue;
            snprintf(what, sizeof what, "%s %s", name, gname);
            compare_real(what, mt.grad, g->v, g->n);
        }
    }
    /* forced alignments row by row (attend_model_score: the cross-entropy alone) */
    for (int n = 0; n < N; n++) {
        int sl = b.src_len[n], steps = b.tgt_len[n];
        int32_t tgt[16];
        for (int t = 0; t + 1 < steps; t++) tgt[t] = b.tgt_out[(size_t)n * T + t];
        attend_real al[16 * 16];
        double lp;
        st = attend_model_score(m, b.src + (size_t)n * S, sl, tgt, steps - 1, &lp, al, &err);
        EXPECT(st == ATTEND_OK, "%s: score: %s", name, err.msg);
        double want[16 * 16];
        for (int t = 0; t < steps; t++)
            for (int j = 0; j < sl; j++) want[t * sl + j] = t_al->v[((size_t)n * T + t) * S + j];
        snprintf(what, sizeof what, "%s forced alignment row %d", name, n);
        compare_real(what, al, want, (size_t)steps * sl);
    }
    attend_batch_release(&b);
    attend_model_free(m);
    ref_free(&f);
}

static void test_pytorch(void) {
    run_ref("gru_bahdanau");
    run_ref("lstm_luong_loss");
    run_ref("gru_bahdanau_lossonly");
}

/* --------------------------------------------------- decoding with coverage */

static void test_decode(void) {
    attend_error err;
    attend_model *m = NULL;
    EXPECT(attend_model_load(&m, "ref/coverage_gru_bahdanau.safetensors", NULL, NULL, NULL, NULL, &err) == ATTEND_OK,
           "%s", err.msg);
    if (!m) return;
    enum { S = 5, L = 8, K = 4 };
    int32_t src[S] = {4, 7, 5, 9, 6};
    int32_t out[K * L], out_len[K];
    double score[K];
    attend_real align[K * L * S], forced[(L + 1) * S];
    int n_out = 0;
    /* greedy: its alignments are the forced alignments of its output */
    int32_t sl = S;
    EXPECT(attend_model_greedy(m, src, &sl, 1, S, L, out, out_len, align, &err) == ATTEND_OK, "%s", err.msg);
    double lp;
    EXPECT(attend_model_score(m, src, S, out, out_len[0] < L ? out_len[0] : L, &lp, forced, &err) == ATTEND_OK, "%s",
           err.msg);
    for (int i = 0; i < out_len[0] * S; i++)
        EXPECT(fabs((double)align[i] - (double)forced[i]) < 1e-5, "greedy alignment [%d]: %g vs forced %g", i,
               (double)align[i], (double)forced[i]);
    /* beam: each hypothesis's alignment and score are its forced ones */
    EXPECT(attend_model_beam(m, src, S, K, K, L, 0, out, out_len, score, align, &n_out, &err) == ATTEND_OK, "%s",
           err.msg);
    EXPECT(n_out >= 2, "beam returned %d hypotheses", n_out);
    double worst = 0;
    for (int k = 0; k < n_out; k++) {
        if (out_len[k] >= L) continue; /* unfinished: its score has no EOS step */
        EXPECT(attend_model_score(m, src, S, out + k * L, out_len[k], &lp, forced, &err) == ATTEND_OK, "%s", err.msg);
        EXPECT(fabs(lp - score[k]) < 1e-4, "hypothesis %d: beam score %.6f, forced %.6f", k, score[k], lp);
        for (int i = 0; i < out_len[k] * S; i++) {
            double d = fabs((double)align[(size_t)k * L * S + i] - (double)forced[i]);
            if (d > worst) worst = d;
        }
    }
    printf("  beam vs forced alignments of %d hypotheses: worst |diff| %.3g\n", n_out, worst);
    EXPECT(worst < 1e-5, "beam alignment differs from forced by %g", worst);
    attend_model_free(m);
}

/* ------------------------------------------------------- coverage penalty */

/* β Σ_j log(min(Σ_t α_tj, 1)) over steps rows of al [steps,S] */
static double penalty(double beta, const attend_real *al, int steps, int S) {
    double cp = 0;
    for (int j = 0; j < S; j++) {
        double c = 0;
        for (int t = 0; t < steps; t++) c += (double)al[t * S + j];
        cp += log(c < 1e-12 ? 1e-12 : c > 1 ? 1 : c);
    }
    return beta * cp;
}

static void test_penalty(void) {
    attend_error err;
    attend_model *m = NULL;
    EXPECT(attend_model_load(&m, "ref/model_gru_bahdanau_additive.safetensors", NULL, NULL, NULL, NULL, &err) ==
               ATTEND_OK, "%s", err.msg);
    if (!m) return;
    enum { L = 8, K = 4, MAXS = 6 };
    int32_t out0[K * L], len0[K], out1[K * L], len1[K];
    double sc0[K], sc1[K];
    attend_real forced[(L + 1) * MAXS];
    int n0 = 0, n1 = 0, changed = 0, checked = 0;
    uint64_t s = 42;
    const double beta = 2.0, alpha = 0.5;
    for (int trial = 0; trial < 40; trial++) {
        int32_t src[MAXS];
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        int S = 2 + (int)((s >> 33) % 5);
        for (int j = 0; j < S; j++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            src[j] = 4 + (int32_t)((s >> 33) % 6);
        }
        attend_beam_options o0 = {alpha, 0}, o1 = {alpha, beta};
        EXPECT(attend_model_beam_opts(m, src, S, K, K, L, &o0, out0, len0, sc0, NULL, &n0, &err) == ATTEND_OK, "%s",
               err.msg);
        EXPECT(attend_model_beam_opts(m, src, S, K, K, L, &o1, out1, len1, sc1, NULL, &n1, &err) == ATTEND_OK, "%s",
               err.msg);
        /* attend_model_beam is the search without a penalty */
        int32_t outb[K * L], lenb[K];
        double scb[K];
        int nb = 0;
        attend_model_beam(m, src, S, K, K, L, alpha, outb, lenb, scb, NULL, &nb, NULL);
        EXPECT(nb == n0 && !memcmp(outb, out0, sizeof outb) && !memcmp(scb, sc0, (size_t)nb * sizeof *scb),
               "attend_model_beam differs from the options form with coverage_penalty 0");
        for (int k = 0; k < n1; k++) {
            if (len1[k] >= L) continue;
            double lp;
            EXPECT(attend_model_score(m, src, S, out1 + k * L, len1[k], &lp, forced, &err) == ATTEND_OK, "%s",
                   err.msg);
            double want = lp / pow(len1[k] + 1.0, alpha) + penalty(beta, forced, len1[k] + 1, S);
            EXPECT(fabs(sc1[k] - want) < 1e-4, "source %d hypothesis %d: score %.6f, formula %.6f", trial, k, sc1[k],
                   want);
            checked++;
        }
        for (int k = 0; k + 1 < n1; k++) EXPECT(sc1[k] >= sc1[k + 1], "scores not sorted");
        if (n0 != n1 || memcmp(out0, out1, sizeof out0) || memcmp(len0, len1, sizeof len0)) changed++;
    }
    printf("  coverage penalty: %d hypotheses checked against the formula, ranking changed for %d of 40 sources\n",
           checked, changed);
    EXPECT(checked >= 40, "only %d hypotheses checked", checked);
    EXPECT(changed >= 1, "the penalty never changed a ranking");
    /* bad options */
    int32_t src[3] = {4, 5, 6};
    attend_beam_options bad = {0, -1};
    EXPECT(attend_model_beam_opts(m, src, 3, K, K, L, &bad, out1, len1, sc1, NULL, &n1, &err) == ATTEND_ERR_ARG &&
               strstr(err.msg, "coverage_penalty"), "negative penalty: %s", err.msg);
    bad.coverage_penalty = NAN;
    EXPECT(attend_model_beam_opts(m, src, 3, K, K, L, &bad, out1, len1, sc1, NULL, &n1, &err) == ATTEND_ERR_ARG,
           "NaN penalty accepted");
    attend_model_free(m);
    /* a model without attention has no coverage to penalise */
    attend_model_config cfg = {ATTEND_CELL_GRU, ATTEND_DECODER_NONE, ATTEND_SCORE_DOT, 10, 10, 3, 2, 1, 4, 3, K, 4, 8,
                               0, 0, 0, 0, ATTEND_NORMALIZER_SOFTMAX, ATTEND_ENCODER_RNN, 0, ATTEND_POSITIONS_SINUSOIDAL, 0, 0, 0, 0, 0};
    EXPECT(attend_model_create(&m, &cfg, 1, &err) == ATTEND_OK, "%s", err.msg);
    attend_beam_options o = {0, 1};
    EXPECT(attend_model_beam_opts(m, src, 3, K, K, L, &o, out1, len1, sc1, NULL, &n1, &err) == ATTEND_ERR_ARG &&
               strstr(err.msg, "none"), "penalty with decoder none: %s", err.msg);
    attend_model_free(m);
}

int main(void) {
    RUN(test_pytorch);
    RUN(test_decode);
    RUN(test_penalty);
    return harness_summary();
}
