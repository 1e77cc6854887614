/*
 * test_monotonic.c — monotonic attention (Raffel et al. 2017): the kernels
 * against PyTorch (tests/ref/monotonic_*.txt from tools/make_monotonic_ref.py:
 * the paper's parallel form in float64 with autograd, a loop for the hard
 * process), their argument checks, and the model with monotonic = 1: hard
 * alignments in greedy, beam and forced scoring never move left, a file
 * round trip keeps attention.r, and the expected-alignment training learns
 * the copy task.
 */
#include <stdint.h>
#include <stdlib.h>

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

int main(void) {
    RUN(kernels_match_pytorch);
    RUN(kernel_invariants);
    RUN(kernel_errors);
    return harness_summary();
}
