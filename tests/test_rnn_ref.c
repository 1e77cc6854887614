/*
 * test_rnn_ref.c — the GRU / LSTM layer (src/core/rnn.c, float library) against
 * PyTorch: a bidirectional one-layer nn.GRU / nn.LSTM over a padded batch
 * with unsorted lengths (pack_padded_sequence, enforce_sorted=False).
 * Reference data: tests/ref/rnn_gru.txt, tests/ref/rnn_lstm.txt, written by
 *     /usr/bin/python3 tools/make_rnn_ref.py
 * (format described there). Both directions write the halves of one
 * [N,S,2H] buffer; the backward of both accumulates into one dx.
 * Tolerance per tensor: |ours − torch| <= 1e-5 + 1e-4·|torch| (float32
 * arithmetic against a float64 reference; inputs are exactly float32).
 */
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "ref_reader.h"
#include "../src/core/rnn.h"

#define ATOL 1e-5
#define RTOL 1e-4

static attend_real *to_real(const ref_tensor *t) {
    attend_real *p = malloc(t->n * sizeof *p);
    for (size_t i = 0; i < t->n; i++) p[i] = (attend_real)t->v[i];
    return p;
}

static attend_real *zeros(size_t n) { return calloc(n, sizeof(attend_real)); }

static void compare(const char *kind, const char *name, const attend_real *got, const ref_tensor *want) {
    char what[96];
    double *g = malloc(want->n * sizeof *g);
    for (size_t i = 0; i < want->n; i++) g[i] = (double)got[i];
    snprintf(what, sizeof what, "%s %s", kind, name);
    EXPECT_CLOSE(what, g, want->v, want->n, ATOL, RTOL);
    free(g);
}

static const char *const PARAM_NAMES[4] = {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"};

static void run_case(attend_cell_kind kind, const char *path) {
    const char *kname = kind == ATTEND_CELL_GRU ? "gru" : "lstm";
    const int lstm = kind == ATTEND_CELL_LSTM;
    ref_file f;
    if (!ref_load(&f, path, "/usr/bin/python3 tools/make_rnn_ref.py")) return;
    /* shapes from the file: x [N,S,I], h0 [2,N,H] */
    const ref_tensor *tx = NULL, *th0 = NULL;
    for (int i = 0; i < f.count; i++) {
        if (!strcmp(f.t[i].name, "x") && f.t[i].ndim == 3) tx = &f.t[i];
        if (!strcmp(f.t[i].name, "h0") && f.t[i].ndim == 3) th0 = &f.t[i];
    }
    EXPECT(tx && th0, "%s: x [N,S,I] or h0 [2,N,H] missing", path);
    if (!tx || !th0) {
        ref_free(&f);
        return;
    }
    const int N = tx->dims[0], S = tx->dims[1], I = tx->dims[2], H = th0->dims[2];
    const int G = at_cell_gates(kind), H2 = 2 * H;
    const size_t NH = (size_t)N * H;
    int d_len[1] = {N}, d_x[3] = {N, S, I}, d_st[3] = {2, N, H}, d_out[3] = {N, S, H2};
    int d_wih[2] = {G * H, I}, d_whh[2] = {G * H, H}, d_b[1] = {G * H};
    const int *pdims[4] = {d_wih, d_whh, d_b, d_b};
    const int pndim[4] = {2, 2, 1, 1};

    const ref_tensor *t_len = ref_get(&f, "len", 1, d_len);
    const ref_tensor *t_c0 = lstm ? ref_get(&f, "c0", 3, d_st) : NULL;
    const ref_tensor *t_rout = ref_get(&f, "r_out", 3, d_out);
    const ref_tensor *t_rh = ref_get(&f, "r_h", 3, d_st);
    const ref_tensor *t_rc = lstm ? ref_get(&f, "r_c", 3, d_st) : NULL;
    const ref_tensor *t_out = ref_get(&f, "out", 3, d_out);
    const ref_tensor *t_hn = ref_get(&f, "h_n", 3, d_st);
    const ref_tensor *t_cn = lstm ? ref_get(&f, "c_n", 3, d_st) : NULL;
    const ref_tensor *t_dx = ref_get(&f, "d_x", 3, d_x);
    const ref_tensor *t_dh0 = ref_get(&f, "d_h0", 3, d_st);
    const ref_tensor *t_dc0 = lstm ? ref_get(&f, "d_c0", 3, d_st) : NULL;
    const ref_tensor *t_p[2][4], *t_dp[2][4];
    int have = t_len && t_rout && t_rh && t_out && t_hn && t_dx && t_dh0 &&
               (!lstm || (t_c0 && t_rc && t_cn && t_dc0));
    for (int dir = 0; dir < 2; dir++)
        for (int p = 0; p < 4; p++) {
            char name[64];
            snprintf(name, sizeof name, "%s%s", PARAM_NAMES[p], dir ? "_reverse" : "");
            t_p[dir][p] = ref_get(&f, name, pndim[p], pdims[p]);
            snprintf(name, sizeof name, "d_%s%s", PARAM_NAMES[p], dir ? "_reverse" : "");
            t_dp[dir][p] = ref_get(&f, name, pndim[p], pdims[p]);
            have = have && t_p[dir][p] && t_dp[dir][p];
        }
    if (!have) {
        ref_free(&f);
        return;
    }
    int32_t *len = malloc((size_t)N * sizeof *len);
    for (int n = 0; n < N; n++) len[n] = (int32_t)t_len->v[n];

    attend_real *x = to_real(tx), *h0 = to_real(th0), *c0 = lstm ? to_real(t_c0) : NULL;
    attend_real *rout = to_real(t_rout), *rh = to_real(t_rh), *rc = lstm ? to_real(t_rc) : NULL;
    attend_real *W[2][4], *dW[2][4];
    at_cell cell[2];
    for (int dir = 0; dir < 2; dir++) {
        for (int p = 0; p < 4; p++) {
            W[dir][p] = to_real(t_p[dir][p]);
            dW[dir][p] = zeros(t_p[dir][p]->n);
        }
        cell[dir] = (at_cell){kind, I, H, W[dir][0], W[dir][1], W[dir][2], W[dir][3], NULL, NULL, NULL, NULL, NULL, NULL};
    }
    size_t nsaved = at_rnn_layer_saved_size(kind, N, S, H);
    size_t nscratch = at_rnn_layer_scratch_size(kind, N, S, H);
    attend_real *saved[2] = {zeros(nsaved), zeros(nsaved)}, *scratch = zeros(nscratch);
    attend_real *out = zeros((size_t)N * S * H2);
    attend_real *hn = zeros(2 * NH), *cn = zeros(2 * NH);
    attend_real *dx = zeros((size_t)N * S * I), *dh0 = zeros(2 * NH), *dc0 = zeros(2 * NH);

    /* forward: both directions into the halves of out [N,S,2H] */
    for (int dir = 0; dir < 2; dir++)
        at_rnn_layer_forward(&cell[dir], dir, out + dir * H, H2, hn + dir * NH,
                             lstm ? cn + dir * NH : NULL, saved[dir], x, len, h0 + dir * NH,
                             lstm ? c0 + dir * NH : NULL, N, S, scratch);
    /* backward: L = Σ r_out·out + Σ r_h·h_n (+ Σ r_c·c_n); dx accumulates both */
    for (int dir = 0; dir < 2; dir++) {
        at_cell_grads g = {dW[dir][0], dW[dir][1], dW[dir][2], dW[dir][3]};
        at_rnn_layer_backward(&cell[dir], &g, dir, dx, dh0 + dir * NH, lstm ? dc0 + dir * NH : NULL,
                              rout + dir * H, H2, rh + dir * NH, lstm ? rc + dir * NH : NULL,
                              saved[dir], x, len, h0 + dir * NH, lstm ? c0 + dir * NH : NULL, N,
                              S, scratch);
    }

    compare(kname, "out", out, t_out);
    compare(kname, "h_n", hn, t_hn);
    if (lstm) compare(kname, "c_n", cn, t_cn);
    compare(kname, "d_x", dx, t_dx);
    compare(kname, "d_h0", dh0, t_dh0);
    if (lstm) compare(kname, "d_c0", dc0, t_dc0);
    for (int dir = 0; dir < 2; dir++)
        for (int p = 0; p < 4; p++) compare(kname, t_dp[dir][p]->name, dW[dir][p], t_dp[dir][p]);

    int pad_bad = 0;
    for (int n = 0; n < N; n++)
        for (int t = len[n]; t < S; t++)
            for (int j = 0; j < H2; j++) pad_bad += out[((size_t)n * S + t) * H2 + j] != 0;
    EXPECT(pad_bad == 0, "%s: %d padding outputs are not exactly 0", kname, pad_bad);

    free(len); free(x); free(h0); free(c0); free(rout); free(rh); free(rc);
    for (int dir = 0; dir < 2; dir++) {
        for (int p = 0; p < 4; p++) {
            free(W[dir][p]);
            free(dW[dir][p]);
        }
        free(saved[dir]);
    }
    free(scratch); free(out); free(hn); free(cn); free(dx); free(dh0); free(dc0);
    ref_free(&f);
}

static void test_gru_vs_torch(void) { run_case(ATTEND_CELL_GRU, "ref/rnn_gru.txt"); }
static void test_lstm_vs_torch(void) { run_case(ATTEND_CELL_LSTM, "ref/rnn_lstm.txt"); }

int main(void) {
    printf("gemm backend: %s\n", attend_gemm_backend());
    RUN(test_gru_vs_torch);
    RUN(test_lstm_vs_torch);
    return harness_summary();
}
