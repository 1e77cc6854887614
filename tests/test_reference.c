/*
 * test_reference.c — the float32 library against PyTorch float64 reference data.
 *
 * The files tests/ref/<case>.txt are written by tools/make_ref.py (regenerate with
 * `/usr/bin/python3 tools/make_ref.py`); tests/ref/index.txt lists them. Each
 * file is one case: inputs drawn as exact float32 values, the float64 PyTorch
 * outputs, and the float64 autograd gradients for a random upstream gradient.
 * Categories:
 *   attention  attend_attention_forward/backward, every score kind, masks
 *   mha        attend_mha_forward/backward vs torch.nn.MultiheadAttention
 *   self       attend_self_attention_forward/backward (q = k = v = x)
 *   pointer    attend_pointer_logprobs_forward + attend_pointer_nll_forward/backward
 *   decoder    attend_keys_forward once + attend_scores_forward/backward per
 *              step (T = 1), ADDITIVE, against the one-shot reference
 *
 * File format (see tools/make_ref.py):
 *   attend-ref 1
 *   case <category> key=value ...
 *   tensor <name> <ndim> <dims...>
 *   <values>
 *   ...
 *   end
 *
 * Tolerance: |got - want| <= ATOL + RTOL*|want| for every element.
 * The inputs are exactly representable in float32, so the only error is the
 * library's float32 rounding (unit roundoff u = 6e-8). Every value here is a
 * short chain (projection, scores, softmax, context, and back) of sums of at
 * most a few dozen O(1) terms, so the expected error is ~1e-6 and a loose
 * worst-case bound is ~50 terms * |terms| ~10 * u = 3e-5 in absolute terms for
 * the largest (O(10)) gradients. ATOL 2e-5 covers values near 0, RTOL 1e-4
 * covers the larger gradients; a real bug (wrong mask, missing term, wrong
 * transpose) gives differences of order 1e-2 or more. Observed (OpenBLAS and
 * portable GEMM): worst |diff| 8e-7, under 2% of the tolerance. Masked weights and
 * masked log-probabilities are compared exactly (0 and -INFINITY).
 *
 * The test runs with the working directory tests/ (ctest) and looks for
 * ref/index.txt, falling back to tests/ref/index.txt (run from the repository
 * root). A missing index or case file is a failure.
 */
#include <attend.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"

#define ATOL 2e-5
#define RTOL 1e-4

/* ------------------------------------------------------------ per-case arena */

#define ARENA_MAX 512
static void *arena_[ARENA_MAX];
static int arena_n_ = 0;

static void *track(void *p) {
    if (!p) {
        fprintf(stderr, "test_reference: out of memory\n");
        exit(1);
    }
    if (arena_n_ == ARENA_MAX) {
        fprintf(stderr, "test_reference: arena full\n");
        exit(1);
    }
    arena_[arena_n_++] = p;
    return p;
}

static void arena_free(void) {
    while (arena_n_ > 0) free(arena_[--arena_n_]);
}

/* zeroed attend_real [n] */
static attend_real *zeros(size_t n) { return track(calloc(n ? n : 1, sizeof(attend_real))); }

/* ------------------------------------------------------------------- loader */

#define MAX_TENSORS 48
#define MAX_META 32
#define NAME_MAX_LEN 32

typedef struct {
    char name[NAME_MAX_LEN];
    int ndim;
    int dims[4];
    size_t n;
    double *data;
} ref_tensor;

typedef struct {
    char file[64];
    char category[NAME_MAX_LEN];
    int nmeta;
    char mkey[MAX_META][NAME_MAX_LEN];
    double mval[MAX_META];
    int nt;
    ref_tensor t[MAX_TENSORS];
    int bad; /* a lookup failed: the case is reported and skipped */
} ref_case;

static char ref_dir_[256] = "";

static FILE *open_ref(const char *file) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", ref_dir_, file);
    return fopen(path, "r");
}

/* Finds ref/index.txt (cwd tests/) or tests/ref/index.txt (cwd root). */
static int find_ref_dir(void) {
    const char *dirs[] = {"ref", "tests/ref"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(ref_dir_, sizeof ref_dir_, "%s", dirs[i]);
        FILE *f = open_ref("index.txt");
        if (f) {
            fclose(f);
            return 1;
        }
    }
    ref_dir_[0] = 0;
    return 0;
}

#define MAX_CASES 256
static char index_[MAX_CASES][64];
static int nindex_ = 0;

static int read_index(void) {
    FILE *f = open_ref("index.txt");
    if (!f) return 0;
    char line[128];
    while (fgets(line, sizeof line, f)) {
        size_t len = strcspn(line, "\r\n");
        line[len] = 0;
        if (len == 0) continue;
        if (nindex_ == MAX_CASES || len >= sizeof index_[0]) {
            fprintf(stderr, "  FAIL %s/index.txt: too many entries or name too long ('%s')\n", ref_dir_, line);
            fclose(f);
            return 0;
        }
        memcpy(index_[nindex_++], line, len + 1);
    }
    fclose(f);
    return 1;
}

static void case_free(ref_case *c) {
    for (int i = 0; i < c->nt; i++) free(c->t[i].data);
    c->nt = 0;
}

/* Loads one case file; on failure prints why (FAIL) and returns 0. */
static int case_load(ref_case *c, const char *file) {
    memset(c, 0, sizeof *c);
    snprintf(c->file, sizeof c->file, "%s", file);
    FILE *f = open_ref(file);
    if (!f) {
        fprintf(stderr, "  FAIL %s/%s: cannot open (%s); regenerate with "
                        "`/usr/bin/python3 tools/make_ref.py`\n", ref_dir_, file, strerror(errno));
        return 0;
    }
    char line[2048];
    int ok = 0;
    if (!fgets(line, sizeof line, f) || strncmp(line, "attend-ref 1", 12) != 0) {
        fprintf(stderr, "  FAIL %s: first line is not 'attend-ref 1'\n", file);
        goto done;
    }
    if (!fgets(line, sizeof line, f) || strncmp(line, "case ", 5) != 0) {
        fprintf(stderr, "  FAIL %s: second line is not 'case <category> ...'\n", file);
        goto done;
    }
    {
        /* "case <category> key=value ..." */
        const char *pos = line + 5;
        char word[128];
        int used = 0;
        if (sscanf(pos, "%127s%n", word, &used) != 1 || strlen(word) >= NAME_MAX_LEN) {
            fprintf(stderr, "  FAIL %s: missing category\n", file);
            goto done;
        }
        memcpy(c->category, word, strlen(word) + 1); /* fits: checked above */
        pos += used;
        while (sscanf(pos, "%127s%n", word, &used) == 1) {
            pos += used;
            char *eq = strchr(word, '=');
            if (!eq || eq - word >= NAME_MAX_LEN || c->nmeta == MAX_META) {
                fprintf(stderr, "  FAIL %s: bad metadata '%s'\n", file, word);
                goto done;
            }
            char *end;
            double val = strtod(eq + 1, &end);
            if (*end || end == eq + 1) {
                fprintf(stderr, "  FAIL %s: bad metadata value '%s'\n", file, word);
                goto done;
            }
            memcpy(c->mkey[c->nmeta], word, (size_t)(eq - word));
            c->mkey[c->nmeta][eq - word] = 0;
            c->mval[c->nmeta++] = val;
        }
    }
    char tok[128];
    for (;;) {
        if (fscanf(f, "%127s", tok) != 1) {
            fprintf(stderr, "  FAIL %s: ends without 'end' (truncated?)\n", file);
            goto done;
        }
        if (strcmp(tok, "end") == 0) break;
        if (strcmp(tok, "tensor") != 0 || c->nt == MAX_TENSORS) {
            fprintf(stderr, "  FAIL %s: expected 'tensor' or 'end', got '%s'\n", file, tok);
            goto done;
        }
        ref_tensor *t = &c->t[c->nt];
        if (fscanf(f, "%31s %d", t->name, &t->ndim) != 2 || t->ndim < 1 || t->ndim > 4) {
            fprintf(stderr, "  FAIL %s: bad tensor header after tensor %d\n", file, c->nt);
            goto done;
        }
        t->n = 1;
        for (int d = 0; d < t->ndim; d++) {
            if (fscanf(f, "%d", &t->dims[d]) != 1 || t->dims[d] < 1 || t->dims[d] > 4096) {
                fprintf(stderr, "  FAIL %s: tensor %s: bad dimension %d\n", file, t->name, d);
                goto done;
            }
            t->n *= (size_t)t->dims[d];
        }
        t->data = malloc(t->n * sizeof *t->data);
        if (!t->data) {
            fprintf(stderr, "  FAIL %s: out of memory\n", file);
            goto done;
        }
        c->nt++;
        for (size_t i = 0; i < t->n; i++) {
            char *end;
            if (fscanf(f, "%127s", tok) != 1) {
                fprintf(stderr, "  FAIL %s: tensor %s: only %zu of %zu values\n", file, t->name, i, t->n);
                goto done;
            }
            t->data[i] = strtod(tok, &end);
            if (*end || end == tok) {
                fprintf(stderr, "  FAIL %s: tensor %s: bad value '%s' at [%zu]\n", file, t->name, tok, i);
                goto done;
            }
        }
    }
    ok = 1;
done:
    fclose(f);
    if (!ok) case_free(c);
    return ok;
}

static double meta(ref_case *c, const char *key) {
    for (int i = 0; i < c->nmeta; i++)
        if (strcmp(c->mkey[i], key) == 0) return c->mval[i];
    fprintf(stderr, "  FAIL %s: metadata '%s' missing\n", c->file, key);
    c->bad = 1;
    return 0;
}
static int meta_i(ref_case *c, const char *key) { return (int)meta(c, key); }

static const ref_tensor *find_tensor(const ref_case *c, const char *name) {
    for (int i = 0; i < c->nt; i++)
        if (strcmp(c->t[i].name, name) == 0) return &c->t[i];
    return NULL;
}

/* The data of tensor `name`, which must have shape (dims...) of ndim ints. A
 * missing tensor or another shape marks the case bad and returns a zero
 * buffer of the expected size, so callers never read out of bounds. */
static const double *get(ref_case *c, const char *name, int ndim, ...) {
    int dims[4];
    size_t n = 1;
    va_list ap;
    va_start(ap, ndim);
    for (int d = 0; d < ndim; d++) {
        dims[d] = va_arg(ap, int);
        n *= (size_t)(dims[d] > 0 ? dims[d] : 1);
    }
    va_end(ap);
    const ref_tensor *t = find_tensor(c, name);
    int same = t && t->ndim == ndim;
    for (int d = 0; same && d < ndim; d++) same = t->dims[d] == dims[d];
    if (!same) {
        fprintf(stderr, "  FAIL %s: tensor '%s' %s (expected %d dims:", c->file, name,
                t ? "has another shape" : "missing", ndim);
        for (int d = 0; d < ndim; d++) fprintf(stderr, " %d", dims[d]);
        fprintf(stderr, ")\n");
        c->bad = 1;
        return track(calloc(n, sizeof(double)));
    }
    return t->data;
}

static attend_real *to_real(const double *x, size_t n) {
    attend_real *r = track(malloc((n ? n : 1) * sizeof *r));
    for (size_t i = 0; i < n; i++) r[i] = (attend_real)x[i];
    return r;
}
static uint8_t *to_u8(const double *x, size_t n) {
    uint8_t *r = track(malloc(n ? n : 1));
    for (size_t i = 0; i < n; i++) r[i] = x[i] != 0;
    return r;
}
static int32_t *to_i32(const double *x, size_t n) {
    int32_t *r = track(malloc((n ? n : 1) * sizeof *r));
    for (size_t i = 0; i < n; i++) r[i] = (int32_t)x[i];
    return r;
}

/* ------------------------------------------------------------- comparisons */

typedef struct {
    const char *name;
    int tensors;
    double worst_abs;   /* largest |got - want| */
    double worst_ratio; /* largest |got - want| / (ATOL + RTOL |want|) */
} category_stats;

static category_stats stats_[] = {
    {"attention forward", 0, 0, 0}, {"attention backward", 0, 0, 0},
    {"mha forward", 0, 0, 0},       {"mha backward", 0, 0, 0},
    {"self forward", 0, 0, 0},      {"self backward", 0, 0, 0},
    {"pointer logp", 0, 0, 0},      {"pointer nll loss+grad", 0, 0, 0},
    {"decoder steps", 0, 0, 0},
};
enum { ST_ATT_F, ST_ATT_B, ST_MHA_F, ST_MHA_B, ST_SELF_F, ST_SELF_B, ST_PTR_LOGP, ST_PTR_NLL, ST_DEC };

static void check_d(int cat, ref_case *c, const char *what, const double *got, const double *want,
                    size_t n) {
    char label[128];
    snprintf(label, sizeof label, "%s %s", c->file, what);
    EXPECT_CLOSE(label, got, want, n, ATOL, RTOL);
    category_stats *s = &stats_[cat];
    s->tensors++;
    for (size_t i = 0; i < n; i++) {
        if (isinf(want[i]) && got[i] == want[i]) continue;
        double d = fabs(got[i] - want[i]);
        if (isnan(d)) d = INFINITY;
        double r = d / (ATOL + RTOL * fabs(want[i]));
        if (d > s->worst_abs) s->worst_abs = d;
        if (r > s->worst_ratio) s->worst_ratio = r;
    }
}

static void check(int cat, ref_case *c, const char *what, const attend_real *got, const double *want,
                  size_t n) {
    double *g = track(malloc((n ? n : 1) * sizeof *g));
    for (size_t i = 0; i < n; i++) g[i] = (double)got[i];
    check_d(cat, c, what, g, want, n);
}

/* Whether source position j of row (n,t) takes part (attend.h masked softmax). */
static int included(const uint8_t *valid, const uint8_t *allowed, int causal, int n, int t, int j,
                    int S) {
    return (!valid || valid[(size_t)n * S + j]) && (!allowed || allowed[(size_t)t * S + j]) &&
           (!causal || j <= t);
}

/* Every excluded position of x [N,G,T,S] holds exactly `want` (0 or -INFINITY). */
static void check_masked_exact(ref_case *c, const char *what, const attend_real *x, attend_real want,
                               const uint8_t *valid, const uint8_t *allowed, int causal, int N,
                               int G, int T, int S) {
    size_t masked = 0, wrong = 0, first = 0;
    for (int n = 0; n < N; n++)
        for (int g = 0; g < G; g++)
            for (int t = 0; t < T; t++)
                for (int j = 0; j < S; j++) {
                    if (included(valid, allowed, causal, n, t, j, S)) continue;
                    size_t i = (((size_t)n * G + g) * T + t) * S + j;
                    masked++;
                    if (x[i] != want && wrong++ == 0) first = i;
                }
    EXPECT(wrong == 0, "%s %s: %zu of %zu masked entries are not exactly %g (first at [%zu]: %.9g)",
           c->file, what, wrong, masked, (double)want, first, (double)x[first]);
}

#define CALL(c, expr)                                                                    \
    do {                                                                                 \
        attend_status st_ = (expr);                                                      \
        EXPECT(st_ == ATTEND_OK, "%s: %s returned %s: %s", (c)->file, #expr,             \
               attend_status_name(st_), err.msg);                                        \
    } while (0)

/* ---------------------------------------------------------------- the cases */

static void run_attention(ref_case *c) {
    attend_error err = {0};
    int kind = meta_i(c, "kind"), N = meta_i(c, "N"), T = meta_i(c, "T"), S = meta_i(c, "S");
    int Dq = meta_i(c, "Dq"), Dk = meta_i(c, "Dk"), Dv = meta_i(c, "Dv"), A = meta_i(c, "A");
    int bias = meta_i(c, "bias"), causal = meta_i(c, "causal"), kv_same = meta_i(c, "kv_same");
    int has_valid = meta_i(c, "has_valid"), has_allowed = meta_i(c, "has_allowed");
    int has_dw = meta_i(c, "has_dweights");
    double scale = meta(c, "scale");
    if (c->bad) return;
    attend_score_config cfg = {(attend_score_kind)kind, Dq, Dk, A, bias, scale};
    size_t nq = (size_t)N * T * Dq, nk = (size_t)N * S * Dk, nv = (size_t)N * S * Dv;
    size_t nctx = (size_t)N * T * Dv, nw = (size_t)N * T * S;
    attend_real *q = to_real(get(c, "q", 3, N, T, Dq), nq);
    attend_real *k = to_real(get(c, "k", 3, N, S, Dk), nk);
    attend_real *v = kv_same ? k : to_real(get(c, "v", 3, N, S, Dv), nv);
    attend_score_params p = {0};
    attend_score_grads g = {0};
    if (kind == ATTEND_SCORE_GENERAL) {
        p.W = to_real(get(c, "p_W", 2, Dq, Dk), (size_t)Dq * Dk);
        g.W = zeros((size_t)Dq * Dk);
    }
    if (kind == ATTEND_SCORE_ADDITIVE) {
        p.Wq = to_real(get(c, "p_Wq", 2, A, Dq), (size_t)A * Dq);
        p.Wk = to_real(get(c, "p_Wk", 2, A, Dk), (size_t)A * Dk);
        p.v = to_real(get(c, "p_v", 1, A), (size_t)A);
        g.Wq = zeros((size_t)A * Dq);
        g.Wk = zeros((size_t)A * Dk);
        g.v = zeros((size_t)A);
        if (bias) {
            p.b = to_real(get(c, "p_b", 1, A), (size_t)A);
            g.b = zeros((size_t)A);
        }
    }
    uint8_t *valid = has_valid ? to_u8(get(c, "valid", 2, N, S), (size_t)N * S) : NULL;
    uint8_t *allowed = has_allowed ? to_u8(get(c, "allowed", 2, T, S), (size_t)T * S) : NULL;
    attend_real *dctx = to_real(get(c, "dctx", 3, N, T, Dv), nctx);
    attend_real *dw = has_dw ? to_real(get(c, "dweights", 3, N, T, S), nw) : NULL;
    const double *want_ctx = get(c, "ctx", 3, N, T, Dv), *want_w = get(c, "weights", 3, N, T, S);
    const double *want_dq = get(c, "dq", 3, N, T, Dq), *want_dk = get(c, "dk", 3, N, S, Dk);
    const double *want_dv = kv_same ? NULL : get(c, "dv", 3, N, S, Dv);
    if (c->bad) return;

    size_t wlen = attend_attention_workspace_size(&cfg, N, T, S);
    EXPECT(wlen > 0, "%s: attend_attention_workspace_size returned 0", c->file);
    attend_real *ws = zeros(wlen);
    attend_real *ctx = zeros(nctx), *w = zeros(nw);
    CALL(c, attend_attention_forward(&cfg, &p, ctx, w, q, k, v, valid, allowed, causal, N, T, S, Dv,
                                     ws, wlen, &err));
    check(ST_ATT_F, c, "ctx", ctx, want_ctx, nctx);
    check(ST_ATT_F, c, "weights", w, want_w, nw);
    check_masked_exact(c, "weights (masked = 0)", w, 0, valid, allowed, causal, N, 1, T, S);

    attend_real *dq = zeros(nq), *dk = zeros(nk), *dv = kv_same ? dk : zeros(nv);
    CALL(c, attend_attention_backward(&cfg, &p, &g, dq, dk, dv, dctx, dw, w, q, k, v, N, T, S, Dv,
                                      ws, wlen, &err));
    check(ST_ATT_B, c, "dq", dq, want_dq, nq);
    check(ST_ATT_B, c, kv_same ? "dk (= dk + dv, k = v)" : "dk", dk, want_dk, nk);
    if (!kv_same) check(ST_ATT_B, c, "dv", dv, want_dv, nv);
    if (g.W) check(ST_ATT_B, c, "dW", g.W, get(c, "g_W", 2, Dq, Dk), (size_t)Dq * Dk);
    if (g.Wq) check(ST_ATT_B, c, "dWq", g.Wq, get(c, "g_Wq", 2, A, Dq), (size_t)A * Dq);
    if (g.Wk) check(ST_ATT_B, c, "dWk", g.Wk, get(c, "g_Wk", 2, A, Dk), (size_t)A * Dk);
    if (g.v) check(ST_ATT_B, c, "dv (additive vector)", g.v, get(c, "g_v", 1, A), (size_t)A);
    if (g.b) check(ST_ATT_B, c, "db", g.b, get(c, "g_b", 1, A), (size_t)A);
}

static void run_mha(ref_case *c, int self) {
    attend_error err = {0};
    int N = meta_i(c, "N"), T = meta_i(c, "T"), S = meta_i(c, "S"), E = meta_i(c, "E");
    int H = meta_i(c, "H"), kdim = meta_i(c, "kdim"), vdim = meta_i(c, "vdim");
    int bias = meta_i(c, "bias"), causal = meta_i(c, "causal"), average = meta_i(c, "average");
    int has_valid = meta_i(c, "has_valid"), has_allowed = meta_i(c, "has_allowed");
    int need_weights = meta_i(c, "need_weights");
    if (c->bad) return;
    int cf = self ? ST_SELF_F : ST_MHA_F, cb = self ? ST_SELF_B : ST_MHA_B;
    attend_mha_config cfg = {E, H, kdim, vdim, bias};
    size_t nq = (size_t)N * T * E, nk = (size_t)N * S * kdim, nv = (size_t)N * S * vdim;
    size_t nEE = (size_t)E * E, nEk = (size_t)E * kdim, nEv = (size_t)E * vdim;
    attend_real *q, *k, *v;
    if (self) {
        q = k = v = to_real(get(c, "x", 3, N, T, E), nq);
    } else {
        q = to_real(get(c, "q", 3, N, T, E), nq);
        k = to_real(get(c, "k", 3, N, S, kdim), nk);
        v = to_real(get(c, "v", 3, N, S, vdim), nv);
    }
    attend_mha_params p = {0};
    attend_mha_grads g = {0};
    p.Wq = to_real(get(c, "p_Wq", 2, E, E), nEE);
    p.Wk = to_real(get(c, "p_Wk", 2, E, kdim), nEk);
    p.Wv = to_real(get(c, "p_Wv", 2, E, vdim), nEv);
    p.Wo = to_real(get(c, "p_Wo", 2, E, E), nEE);
    g.Wq = zeros(nEE);
    g.Wk = zeros(nEk);
    g.Wv = zeros(nEv);
    g.Wo = zeros(nEE);
    if (bias) {
        p.bq = to_real(get(c, "p_bq", 1, E), (size_t)E);
        p.bk = to_real(get(c, "p_bk", 1, E), (size_t)E);
        p.bv = to_real(get(c, "p_bv", 1, E), (size_t)E);
        p.bo = to_real(get(c, "p_bo", 1, E), (size_t)E);
        g.bq = zeros((size_t)E);
        g.bk = zeros((size_t)E);
        g.bv = zeros((size_t)E);
        g.bo = zeros((size_t)E);
    }
    uint8_t *valid = has_valid ? to_u8(get(c, "valid", 2, N, S), (size_t)N * S) : NULL;
    uint8_t *allowed = has_allowed ? to_u8(get(c, "allowed", 2, T, S), (size_t)T * S) : NULL;
    attend_real *dout = to_real(get(c, "dout", 3, N, T, E), nq);
    const double *want_out = get(c, "out", 3, N, T, E);
    int G = average ? 1 : H;
    size_t nw = (size_t)N * G * T * S;
    const double *want_w = !need_weights ? NULL
                           : average     ? get(c, "weights", 3, N, T, S)
                                         : get(c, "weights", 4, N, H, T, S);
    if (c->bad) return;

    size_t wlen = attend_mha_workspace_size(&cfg, N, T, S);
    EXPECT(wlen > 0, "%s: attend_mha_workspace_size returned 0", c->file);
    attend_real *ws = zeros(wlen);
    attend_real *out = zeros(nq), *w = need_weights ? zeros(nw) : NULL;
    if (self)
        CALL(c, attend_self_attention_forward(&cfg, &p, out, w, average, q, valid, causal, N, T, ws,
                                              wlen, &err));
    else
        CALL(c, attend_mha_forward(&cfg, &p, out, w, average, q, k, v, valid, allowed, causal, N, T,
                                   S, ws, wlen, &err));
    check(cf, c, "out", out, want_out, nq);
    if (w) {
        check(cf, c, average ? "weights (head average)" : "weights (per head)", w, want_w, nw);
        check_masked_exact(c, "weights (masked = 0)", w, 0, valid, allowed, causal, N, G, T, S);
    }

    if (self) {
        attend_real *dx = zeros(nq);
        CALL(c, attend_self_attention_backward(&cfg, &p, &g, dx, dout, q, N, T, ws, wlen, &err));
        check(cb, c, "dx (total of q, k, v paths)", dx, get(c, "dx", 3, N, T, E), nq);
    } else {
        attend_real *dq = zeros(nq), *dk = zeros(nk), *dv = zeros(nv);
        CALL(c, attend_mha_backward(&cfg, &p, &g, dq, dk, dv, dout, q, k, v, N, T, S, ws, wlen, &err));
        check(cb, c, "dq", dq, get(c, "dq", 3, N, T, E), nq);
        check(cb, c, "dk", dk, get(c, "dk", 3, N, S, kdim), nk);
        check(cb, c, "dv", dv, get(c, "dv", 3, N, S, vdim), nv);
    }
    check(cb, c, "dWq", g.Wq, get(c, "g_Wq", 2, E, E), nEE);
    check(cb, c, "dWk", g.Wk, get(c, "g_Wk", 2, E, kdim), nEk);
    check(cb, c, "dWv", g.Wv, get(c, "g_Wv", 2, E, vdim), nEv);
    check(cb, c, "dWo", g.Wo, get(c, "g_Wo", 2, E, E), nEE);
    if (bias) {
        check(cb, c, "dbq", g.bq, get(c, "g_bq", 1, E), (size_t)E);
        check(cb, c, "dbk", g.bk, get(c, "g_bk", 1, E), (size_t)E);
        check(cb, c, "dbv", g.bv, get(c, "g_bv", 1, E), (size_t)E);
        check(cb, c, "dbo", g.bo, get(c, "g_bo", 1, E), (size_t)E);
    }
}

static void run_pointer(ref_case *c) {
    attend_error err = {0};
    int N = meta_i(c, "N"), T = meta_i(c, "T"), S = meta_i(c, "S"), causal = meta_i(c, "causal");
    int has_valid = meta_i(c, "has_valid"), has_allowed = meta_i(c, "has_allowed");
    int want_count = meta_i(c, "count");
    if (c->bad) return;
    size_t n = (size_t)N * T * S;
    attend_real *scores = to_real(get(c, "scores", 3, N, T, S), n);
    uint8_t *valid = has_valid ? to_u8(get(c, "valid", 2, N, S), (size_t)N * S) : NULL;
    uint8_t *allowed = has_allowed ? to_u8(get(c, "allowed", 2, T, S), (size_t)T * S) : NULL;
    int32_t *targets = to_i32(get(c, "targets", 2, N, T), (size_t)N * T);
    const double *want_logp = get(c, "logp", 3, N, T, S), *want_loss = get(c, "loss", 1, 1);
    const double *want_ds = get(c, "dscores", 3, N, T, S);
    if (c->bad) return;

    attend_real *logp = zeros(n);
    CALL(c, attend_pointer_logprobs_forward(logp, scores, valid, allowed, causal, N, T, S, &err));
    /* EXPECT_CLOSE compares the -inf entries exactly; this names the masked ones */
    check(ST_PTR_LOGP, c, "logp", logp, want_logp, n);
    check_masked_exact(c, "logp (masked = -inf)", logp, -INFINITY, valid, allowed, causal, N, 1, T, S);
    size_t nonfinite = 0;
    for (int nn = 0; nn < N; nn++)
        for (int t = 0; t < T; t++)
            for (int j = 0; j < S; j++)
                if (included(valid, allowed, causal, nn, t, j, S) &&
                    !isfinite(logp[((size_t)nn * T + t) * S + j]))
                    nonfinite++;
    EXPECT(nonfinite == 0, "%s: %zu included log-probabilities are not finite", c->file, nonfinite);

    double loss = -1;
    int count = -1;
    CALL(c, attend_pointer_nll_forward(&loss, &count, logp, targets, N, T, S, &err));
    EXPECT(count == want_count, "%s: count %d, want %d", c->file, count, want_count);
    check_d(ST_PTR_NLL, c, "loss", &loss, want_loss, 1);
    attend_real *ds = zeros(n);
    CALL(c, attend_pointer_nll_backward(ds, logp, targets, N, T, S, &err));
    check(ST_PTR_NLL, c, "dscores", ds, want_ds, n);
    check_masked_exact(c, "dscores (masked = 0)", ds, 0, valid, allowed, causal, N, 1, T, S);
}

static void run_decoder(ref_case *c) {
    attend_error err = {0};
    int N = meta_i(c, "N"), T = meta_i(c, "T"), S = meta_i(c, "S"), Dq = meta_i(c, "Dq");
    int Dk = meta_i(c, "Dk"), A = meta_i(c, "A"), bias = meta_i(c, "bias");
    EXPECT(meta_i(c, "kind") == ATTEND_SCORE_ADDITIVE, "%s: decoder cases are additive", c->file);
    if (c->bad) return;
    attend_score_config cfg = {ATTEND_SCORE_ADDITIVE, Dq, Dk, A, bias, 0};
    size_t nq = (size_t)N * T * Dq, nk = (size_t)N * S * Dk, nkp = (size_t)N * S * A;
    size_t nsc = (size_t)N * T * S;
    attend_real *q = to_real(get(c, "q", 3, N, T, Dq), nq);
    attend_real *k = to_real(get(c, "k", 3, N, S, Dk), nk);
    attend_score_params p = {0};
    attend_score_grads g = {0};
    p.Wq = to_real(get(c, "p_Wq", 2, A, Dq), (size_t)A * Dq);
    p.Wk = to_real(get(c, "p_Wk", 2, A, Dk), (size_t)A * Dk);
    p.v = to_real(get(c, "p_v", 1, A), (size_t)A);
    g.Wq = zeros((size_t)A * Dq);
    g.Wk = zeros((size_t)A * Dk);
    g.v = zeros((size_t)A);
    if (bias) {
        p.b = to_real(get(c, "p_b", 1, A), (size_t)A);
        g.b = zeros((size_t)A);
    }
    attend_real *dscores = to_real(get(c, "dscores", 3, N, T, S), nsc);
    const double *want_kp = get(c, "kp", 3, N, S, A), *want_sc = get(c, "scores", 3, N, T, S);
    const double *want_dkp = get(c, "dkp", 3, N, S, A);
    if (c->bad) return;

    /* the key side once per sequence */
    attend_real *kp = zeros(nkp);
    CALL(c, attend_keys_forward(&cfg, &p, kp, k, N, S, &err));
    check(ST_DEC, c, "kp (keys once)", kp, want_kp, nkp);

    /* one query step at a time (T = 1), keeping each step's saved values */
    size_t nsaved1 = attend_scores_saved_size(&cfg, N, 1, S, NULL);
    EXPECT(nsaved1 > 0, "%s: attend_scores_saved_size returned 0", c->file);
    attend_real *steps = zeros(nsc);
    attend_real **qt = track(calloc((size_t)T, sizeof *qt));
    attend_real **saved = track(calloc((size_t)T, sizeof *saved));
    attend_real *sc1 = zeros((size_t)N * S), *ds1 = zeros((size_t)N * S), *dq1 = zeros((size_t)N * Dq);
    for (int t = 0; t < T; t++) {
        qt[t] = zeros((size_t)N * Dq);
        saved[t] = zeros(nsaved1);
        for (int n = 0; n < N; n++)
            memcpy(qt[t] + (size_t)n * Dq, q + ((size_t)n * T + t) * Dq, (size_t)Dq * sizeof *q);
        CALL(c, attend_scores_forward(&cfg, &p, sc1, saved[t], qt[t], kp, N, 1, S, &err));
        for (int n = 0; n < N; n++)
            memcpy(steps + ((size_t)n * T + t) * S, sc1 + (size_t)n * S, (size_t)S * sizeof *sc1);
    }
    check(ST_DEC, c, "scores (T steps of 1)", steps, want_sc, nsc);

    /* the same scores in one call */
    attend_real *oneshot = zeros(nsc), *saved_all = zeros(attend_scores_saved_size(&cfg, N, T, S, NULL));
    CALL(c, attend_scores_forward(&cfg, &p, oneshot, saved_all, q, kp, N, T, S, &err));
    check(ST_DEC, c, "scores (one call)", oneshot, want_sc, nsc);

    /* backward step by step, accumulating into one dkp, then the keys once */
    attend_real *dkp = zeros(nkp), *dq = zeros(nq), *dk = zeros(nk);
    for (int t = 0; t < T; t++) {
        for (int n = 0; n < N; n++)
            memcpy(ds1 + (size_t)n * S, dscores + ((size_t)n * T + t) * S, (size_t)S * sizeof *ds1);
        memset(dq1, 0, (size_t)N * Dq * sizeof *dq1);
        CALL(c, attend_scores_backward(&cfg, &p, &g, dq1, dkp, ds1, saved[t], qt[t], kp, N, 1, S, &err));
        for (int n = 0; n < N; n++)
            memcpy(dq + ((size_t)n * T + t) * Dq, dq1 + (size_t)n * Dq, (size_t)Dq * sizeof *dq1);
    }
    check(ST_DEC, c, "dkp (summed over steps)", dkp, want_dkp, nkp);
    CALL(c, attend_keys_backward(&cfg, &p, &g, dk, dkp, k, N, S, &err));
    check(ST_DEC, c, "dq", dq, get(c, "dq", 3, N, T, Dq), nq);
    check(ST_DEC, c, "dk", dk, get(c, "dk", 3, N, S, Dk), nk);
    check(ST_DEC, c, "dWq", g.Wq, get(c, "g_Wq", 2, A, Dq), (size_t)A * Dq);
    check(ST_DEC, c, "dWk", g.Wk, get(c, "g_Wk", 2, A, Dk), (size_t)A * Dk);
    check(ST_DEC, c, "dv (additive vector)", g.v, get(c, "g_v", 1, A), (size_t)A);
    if (bias) check(ST_DEC, c, "db", g.b, get(c, "g_b", 1, A), (size_t)A);
}

/* ------------------------------------------------------------------ driver */

static int ref_found_ = 0;

/* Runs every indexed case of `category`; fails when there are fewer than
 * min_cases (a truncated index or a lost generator section). */
static void run_category(const char *category, int min_cases) {
    if (!ref_found_) {
        EXPECT(0, "reference data missing: no ref/index.txt under tests/ (run "
                  "`/usr/bin/python3 tools/make_ref.py` from the repository root)");
        return;
    }
    int ran = 0;
    for (int i = 0; i < nindex_; i++) {
        if (strncmp(index_[i], category, strlen(category)) != 0 || index_[i][strlen(category)] != '_')
            continue;
        ref_case c;
        if (!case_load(&c, index_[i])) {
            EXPECT(0, "%s: could not load", index_[i]);
            continue;
        }
        EXPECT(strcmp(c.category, category) == 0, "%s: category '%s', expected '%s'", c.file,
               c.category, category);
        if (strcmp(c.category, "attention") == 0) run_attention(&c);
        else if (strcmp(c.category, "mha") == 0) run_mha(&c, 0);
        else if (strcmp(c.category, "self") == 0) run_mha(&c, 1);
        else if (strcmp(c.category, "pointer") == 0) run_pointer(&c);
        else if (strcmp(c.category, "decoder") == 0) run_decoder(&c);
        EXPECT(!c.bad, "%s: malformed case (see above)", c.file);
        ran++;
        case_free(&c);
        arena_free();
    }
    EXPECT(ran >= min_cases, "%d %s cases in %s/index.txt, expected at least %d", ran, category,
           ref_dir_, min_cases);
}

static void test_index(void) {
    EXPECT(ref_found_, "reference data missing: neither ref/index.txt nor tests/ref/index.txt "
                       "(regenerate with `/usr/bin/python3 tools/make_ref.py`)");
    EXPECT(!ref_found_ || nindex_ > 0, "%s/index.txt lists no cases", ref_dir_);
    const char *known[] = {"attention_", "mha_", "self_", "pointer_", "decoder_"};
    for (int i = 0; i < nindex_; i++) {
        int ok = 0;
        for (size_t j = 0; j < sizeof known / sizeof known[0]; j++)
            ok |= strncmp(index_[i], known[j], strlen(known[j])) == 0;
        EXPECT(ok, "%s/index.txt: unknown case '%s'", ref_dir_, index_[i]);
    }
}

static void test_attention(void) { run_category("attention", 12); }
static void test_mha(void) { run_category("mha", 6); }
static void test_self_attention(void) { run_category("self", 3); }
static void test_pointer(void) { run_category("pointer", 4); }
static void test_decoder_steps(void) { run_category("decoder", 2); }

int main(void) {
    ref_found_ = find_ref_dir() && read_index();
    if (ref_found_) printf("reference data: %s/index.txt, %d cases\n", ref_dir_, nindex_);
    else fprintf(stderr, "test_reference: reference data not found (ref/index.txt or tests/ref/index.txt)\n");
    RUN(test_index);
    RUN(test_attention);
    RUN(test_mha);
    RUN(test_self_attention);
    RUN(test_pointer);
    RUN(test_decoder_steps);
    printf("worst difference per category (tolerance atol %.0e + rtol %.0e |want|):\n", ATOL, RTOL);
    for (size_t i = 0; i < sizeof stats_ / sizeof stats_[0]; i++)
        printf("  %-24s %3d tensors  worst |diff| %.3e  worst |diff|/tol %.3f\n", stats_[i].name,
               stats_[i].tensors, stats_[i].worst_abs, stats_[i].worst_ratio);
    return harness_summary();
}
