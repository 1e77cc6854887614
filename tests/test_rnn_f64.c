/*
 * test_rnn_f64.c — gradients of the GRU / LSTM step and layer (src/core/rnn.c) by
 * central finite differences, in double precision (links attend_f64).
 *
 * Loss = Σ r_out·out + Σ r_h·h_final (+ Σ r_c·c_final) with fixed random
 * r_*; its gradient from the backward functions is compared, per tensor,
 * with (L(p+h) − L(p−h)) / 2h, h = 1e-6, tolerance 1e-8 + 1e-6·|fd|.
 * Also: backward accumulates (+=), padding outputs and dx at padding are
 * exactly 0, strided outputs leave the other columns alone, saved/scratch
 * stay within their reported sizes, a reverse layer equals a forward layer
 * over each sequence reversed, and padding input values have no effect.
 */
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "../src/core/rnn.h"

#define FD_H 1e-6
#define FD_ATOL 1e-8
#define FD_RTOL 1e-6
#define GUARD 16
#define SENTINEL 12345.0

/* ------------------------------------------------------------ helpers */

typedef struct {
    uint64_t s;
} rng64;

static double urand(rng64 *r) { /* uniform in [-1, 1) */
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(r->s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static double *alloc_fill(rng64 *r, size_t n, double scale) {
    double *p = malloc((n ? n : 1) * sizeof *p);
    for (size_t i = 0; i < n; i++) p[i] = scale * urand(r);
    return p;
}

static double *alloc_zero(size_t n) { return calloc(n ? n : 1, sizeof(double)); }

/* n values followed by GUARD sentinels. */
static double *alloc_guarded(size_t n) {
    double *p = malloc((n + GUARD) * sizeof *p);
    for (size_t i = 0; i < n + GUARD; i++) p[i] = SENTINEL;
    return p;
}

static int guard_intact(const double *p, size_t n) {
    for (size_t i = n; i < n + GUARD; i++)
        if (p[i] != SENTINEL) return 0;
    return 1;
}

static double dot(const double *a, const double *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

typedef double (*loss_fn)(void *ctx);

/* Numerical gradient of loss w.r.t. p [n] compared with analytic [n]. */
static void fd_check(const char *what, loss_fn loss, void *ctx, double *p, size_t n,
                     const double *analytic) {
    double *num = alloc_zero(n);
    for (size_t i = 0; i < n; i++) {
        double save = p[i];
        p[i] = save + FD_H;
        double lp = loss(ctx);
        p[i] = save - FD_H;
        double lm = loss(ctx);
        p[i] = save;
        num[i] = (lp - lm) / (2 * FD_H);
    }
    EXPECT_CLOSE(what, analytic, num, n, FD_ATOL, FD_RTOL);
    free(num);
}

/* got − base equals once (the gradient from zero) — backward accumulated. */
static void check_accumulated(const char *what, const double *got, const double *base,
                              const double *once, size_t n) {
    double *diff = alloc_zero(n);
    for (size_t i = 0; i < n; i++) diff[i] = got[i] - base[i];
    EXPECT_CLOSE(what, diff, once, n, 1e-12, 1e-12);
    free(diff);
}

static const char *kind_str(attend_cell_kind k) { return k == ATTEND_CELL_GRU ? "gru" : "lstm"; }

/* Parameters of one cell, owned. */
typedef struct {
    at_cell c;
    double *W_ih, *W_hh, *b_ih, *b_hh; /* [G*H,I] [G*H,H] [G*H] [G*H] */
    size_t n_ih, n_hh, n_b;
} test_cell;

static void cell_init(test_cell *tc, rng64 *r, attend_cell_kind kind, int I, int H) {
    int GH = at_cell_gates(kind) * H;
    tc->n_ih = (size_t)GH * I;
    tc->n_hh = (size_t)GH * H;
    tc->n_b = (size_t)GH;
    tc->W_ih = alloc_fill(r, tc->n_ih, 0.6);
    tc->W_hh = alloc_fill(r, tc->n_hh, 0.6);
    tc->b_ih = alloc_fill(r, tc->n_b, 0.5);
    tc->b_hh = alloc_fill(r, tc->n_b, 0.5);
    tc->c = (at_cell){kind, I, H, tc->W_ih, tc->W_hh, tc->b_ih, tc->b_hh, NULL, NULL, NULL, NULL, NULL, NULL};
}

static void cell_free(test_cell *tc) {
    free(tc->W_ih);
    free(tc->W_hh);
    free(tc->b_ih);
    free(tc->b_hh);
}

/* ------------------------------------------------------------ one step */

typedef struct {
    test_cell *tc;
    int N, lstm;
    const uint8_t *active;
    double *xg, *h_prev, *c_prev; /* [N,G*H] [N,H] [N,H] */
    double *h_out, *c_out, *saved, *scratch;
    double *r_h, *r_c; /* [N,H] */
} step_ctx;

static double step_loss(void *vp) {
    step_ctx *s = vp;
    size_t NH = (size_t)s->N * s->tc->c.H;
    at_cell_step_forward(&s->tc->c, s->h_out, s->lstm ? s->c_out : NULL, s->saved, s->xg,
                         s->h_prev, s->lstm ? s->c_prev : NULL, s->active, s->N, s->scratch);
    return dot(s->r_h, s->h_out, NH) + (s->lstm ? dot(s->r_c, s->c_out, NH) : 0);
}

static void step_case(attend_cell_kind kind, int masked) {
    rng64 r = {1000u + 10u * (unsigned)kind + (unsigned)masked};
    const int N = 3, H = 4, I = 2, G = at_cell_gates(kind), GH = G * H;
    const uint8_t active[3] = {1, 0, 1};
    const size_t NH = (size_t)N * H, NGH = (size_t)N * GH;
    char what[96];
    test_cell tc;
    cell_init(&tc, &r, kind, I, H);
    step_ctx s = {&tc, N, kind == ATTEND_CELL_LSTM, masked ? active : NULL, NULL, NULL, NULL,
                  NULL, NULL, NULL, NULL, NULL, NULL};
    s.xg = alloc_fill(&r, NGH, 1.0);
    s.h_prev = alloc_fill(&r, NH, 0.8);
    s.c_prev = alloc_fill(&r, NH, 0.8);
    s.h_out = alloc_zero(NH);
    s.c_out = alloc_zero(NH);
    size_t nsaved = (size_t)N * at_cell_saved_width(kind, H);
    size_t nscratch = at_cell_scratch_size(kind, N, H);
    EXPECT(nscratch == NGH, "at_cell_scratch_size %zu, want N*G*H = %zu", nscratch, NGH);
    s.saved = alloc_guarded(nsaved);
    s.scratch = alloc_guarded(nscratch);
    s.r_h = alloc_fill(&r, NH, 1.0);
    s.r_c = alloc_fill(&r, NH, 1.0);

    /* analytic gradients from zero */
    double *dxg = alloc_zero(NGH), *dh = alloc_zero(NH), *dc = alloc_zero(NH);
    double *gWhh = alloc_zero(tc.n_hh), *gbhh = alloc_zero(tc.n_b);
    at_cell_grads g = {NULL, gWhh, NULL, gbhh};
    step_loss(&s);
    if (masked)
        for (int n = 0; n < N; n++) {
            if (active[n]) continue;
            EXPECT(memcmp(s.h_out + n * H, s.h_prev + n * H, H * sizeof(double)) == 0,
                   "inactive row %d: h_out != h_prev", n);
            if (s.lstm)
                EXPECT(memcmp(s.c_out + n * H, s.c_prev + n * H, H * sizeof(double)) == 0,
                       "inactive row %d: c_out != c_prev", n);
        }
    at_cell_step_backward(&tc.c, &g, dxg, dh, s.lstm ? dc : NULL, s.r_h, s.lstm ? s.r_c : NULL,
                          s.saved, s.h_prev, s.lstm ? s.c_prev : NULL, s.active, N, s.scratch);
    EXPECT(guard_intact(s.saved, nsaved), "step saved written past %zu values", nsaved);
    EXPECT(guard_intact(s.scratch, nscratch), "step scratch written past %zu values", nscratch);

    const char *tag = masked ? "masked" : "all";
#define FD(name, p, n, an)                                                         \
    do {                                                                           \
        snprintf(what, sizeof what, "step %s %s d%s", kind_str(kind), tag, name);  \
        fd_check(what, step_loss, &s, (p), (n), (an));                             \
    } while (0)
    FD("xg", s.xg, NGH, dxg);
    FD("h_prev", s.h_prev, NH, dh);
    if (s.lstm) FD("c_prev", s.c_prev, NH, dc);
    FD("W_hh", tc.W_hh, tc.n_hh, gWhh);
    FD("b_hh", tc.b_hh, tc.n_b, gbhh);
#undef FD

    /* backward accumulates: start from random values */
    rng64 rb = {77};
    double *bx = alloc_fill(&rb, NGH, 1), *bh = alloc_fill(&rb, NH, 1), *bc = alloc_fill(&rb, NH, 1);
    double *bW = alloc_fill(&rb, tc.n_hh, 1), *bb = alloc_fill(&rb, tc.n_b, 1);
    double *ax = malloc(NGH * sizeof *ax), *ah = malloc(NH * sizeof *ah), *ac = malloc(NH * sizeof *ac);
    double *aW = malloc(tc.n_hh * sizeof *aW), *ab = malloc(tc.n_b * sizeof *ab);
    memcpy(ax, bx, NGH * sizeof *ax);
    memcpy(ah, bh, NH * sizeof *ah);
    memcpy(ac, bc, NH * sizeof *ac);
    memcpy(aW, bW, tc.n_hh * sizeof *aW);
    memcpy(ab, bb, tc.n_b * sizeof *ab);
    at_cell_grads ga = {NULL, aW, NULL, ab};
    step_loss(&s);
    at_cell_step_backward(&tc.c, &ga, ax, ah, s.lstm ? ac : NULL, s.r_h, s.lstm ? s.r_c : NULL,
                          s.saved, s.h_prev, s.lstm ? s.c_prev : NULL, s.active, N, s.scratch);
    snprintf(what, sizeof what, "step %s %s += dxg", kind_str(kind), tag);
    check_accumulated(what, ax, bx, dxg, NGH);
    snprintf(what, sizeof what, "step %s %s += dh_prev", kind_str(kind), tag);
    check_accumulated(what, ah, bh, dh, NH);
    if (s.lstm) {
        snprintf(what, sizeof what, "step %s %s += dc_prev", kind_str(kind), tag);
        check_accumulated(what, ac, bc, dc, NH);
    }
    snprintf(what, sizeof what, "step %s %s += W_hh", kind_str(kind), tag);
    check_accumulated(what, aW, bW, gWhh, tc.n_hh);
    snprintf(what, sizeof what, "step %s %s += b_hh", kind_str(kind), tag);
    check_accumulated(what, ab, bb, gbhh, tc.n_b);

    free(bx); free(bh); free(bc); free(bW); free(bb);
    free(ax); free(ah); free(ac); free(aW); free(ab);
    free(dxg); free(dh); free(dc); free(gWhh); free(gbhh);
    free(s.xg); free(s.h_prev); free(s.c_prev); free(s.h_out); free(s.c_out);
    free(s.saved); free(s.scratch); free(s.r_h); free(s.r_c);
    cell_free(&tc);
}

static void test_step_gru(void) {
    step_case(ATTEND_CELL_GRU, 0);
    step_case(ATTEND_CELL_GRU, 1);
}

static void test_step_lstm(void) {
    step_case(ATTEND_CELL_LSTM, 0);
    step_case(ATTEND_CELL_LSTM, 1);
}

/* --------------------------------------------------------------- layer */

enum { LN = 4, LS = 5, LI = 3, LH = 4, COL = 1, OS = LH + 3 };
static const int32_t layer_len[LN] = {3, 5, 1, 4}; /* includes len = 1 and len = S */

typedef struct {
    test_cell *tc;
    int reverse, lstm, init, fin;
    double *x;            /* [N,S,I] */
    double *h0, *c0;      /* [N,H] */
    double *buf;          /* [N,S,OS]; out = buf + COL */
    double *h_final, *c_final;
    double *saved, *scratch;
    size_t nsaved, nscratch;
    double *r_out;        /* [N,S,OS], dout = r_out + COL (padding and other columns ignored) */
    double *r_h, *r_c;    /* [N,H] */
} layer_ctx;

static void layer_fwd(layer_ctx *L) {
    at_rnn_layer_forward(&L->tc->c, L->reverse, L->buf + COL, OS, L->h_final,
                         L->lstm && L->fin ? L->c_final : NULL, L->saved, L->x, layer_len,
                         L->init ? L->h0 : NULL, L->lstm && L->init ? L->c0 : NULL, LN, LS,
                         L->scratch);
}

static double layer_loss(void *vp) {
    layer_ctx *L = vp;
    layer_fwd(L);
    double s = 0;
    for (size_t r = 0; r < (size_t)LN * LS; r++)
        s += dot(L->r_out + r * OS + COL, L->buf + r * OS + COL, LH);
    if (L->fin) {
        s += dot(L->r_h, L->h_final, (size_t)LN * LH);
        if (L->lstm) s += dot(L->r_c, L->c_final, (size_t)LN * LH);
    }
    return s;
}

typedef struct {
    double *dx, *dh0, *dc0, *W_ih, *W_hh, *b_ih, *b_hh;
} layer_grads;

static layer_grads grads_alloc(const layer_ctx *L, rng64 *base) {
    size_t nx = (size_t)LN * LS * LI, nh = (size_t)LN * LH;
    const test_cell *tc = L->tc;
    layer_grads g;
    g.dx = base ? alloc_fill(base, nx, 1) : alloc_zero(nx);
    g.dh0 = base ? alloc_fill(base, nh, 1) : alloc_zero(nh);
    g.dc0 = base ? alloc_fill(base, nh, 1) : alloc_zero(nh);
    g.W_ih = base ? alloc_fill(base, tc->n_ih, 1) : alloc_zero(tc->n_ih);
    g.W_hh = base ? alloc_fill(base, tc->n_hh, 1) : alloc_zero(tc->n_hh);
    g.b_ih = base ? alloc_fill(base, tc->n_b, 1) : alloc_zero(tc->n_b);
    g.b_hh = base ? alloc_fill(base, tc->n_b, 1) : alloc_zero(tc->n_b);
    return g;
}

static void grads_free(layer_grads *g) {
    free(g->dx); free(g->dh0); free(g->dc0);
    free(g->W_ih); free(g->W_hh); free(g->b_ih); free(g->b_hh);
}

static void layer_bwd(layer_ctx *L, layer_grads *g) {
    at_cell_grads cg = {g->W_ih, g->W_hh, g->b_ih, g->b_hh};
    layer_fwd(L);
    at_rnn_layer_backward(&L->tc->c, &cg, L->reverse, g->dx, L->init ? g->dh0 : NULL,
                          L->lstm && L->init ? g->dc0 : NULL, L->r_out + COL, OS,
                          L->fin ? L->r_h : NULL, L->lstm && L->fin ? L->r_c : NULL, L->saved,
                          L->x, layer_len, L->init ? L->h0 : NULL,
                          L->lstm && L->init ? L->c0 : NULL, LN, LS, L->scratch);
}

static void layer_case(attend_cell_kind kind, int reverse, int init, int fin) {
    rng64 r = {5000u + 100u * (unsigned)kind + 10u * (unsigned)reverse + 2u * (unsigned)init + (unsigned)fin};
    const size_t nx = (size_t)LN * LS * LI, nh = (size_t)LN * LH, nbuf = (size_t)LN * LS * OS;
    char what[128], tag[64];
    snprintf(tag, sizeof tag, "%s %s h0=%s fin=%d", kind_str(kind), reverse ? "rev" : "fwd",
             init ? "given" : "NULL", fin);
    test_cell tc;
    cell_init(&tc, &r, kind, LI, LH);
    layer_ctx L;
    memset(&L, 0, sizeof L);
    L.tc = &tc;
    L.reverse = reverse;
    L.lstm = kind == ATTEND_CELL_LSTM;
    L.init = init;
    L.fin = fin;
    L.x = alloc_fill(&r, nx, 1.0);
    L.h0 = alloc_fill(&r, nh, 0.8);
    L.c0 = alloc_fill(&r, nh, 0.8);
    L.buf = alloc_zero(nbuf);
    for (size_t i = 0; i < nbuf; i++) L.buf[i] = SENTINEL;
    L.h_final = alloc_zero(nh);
    L.c_final = alloc_zero(nh);
    L.nsaved = at_rnn_layer_saved_size(kind, LN, LS, LH);
    L.nscratch = at_rnn_layer_scratch_size(kind, LN, LS, LH);
    EXPECT(L.nsaved > 0 && L.nscratch > 0, "sizes %zu %zu", L.nsaved, L.nscratch);
    L.saved = alloc_guarded(L.nsaved);
    L.scratch = alloc_guarded(L.nscratch);
    L.r_out = alloc_fill(&r, nbuf, 1.0);
    L.r_h = alloc_fill(&r, nh, 1.0);
    L.r_c = alloc_fill(&r, nh, 1.0);

    /* forward: padding exactly 0, columns outside [COL, COL+H) untouched */
    layer_fwd(&L);
    int pad_bad = 0, col_bad = 0;
    for (int n = 0; n < LN; n++)
        for (int t = 0; t < LS; t++)
            for (int j = 0; j < OS; j++) {
                double v = L.buf[((size_t)n * LS + t) * OS + j];
                if (j < COL || j >= COL + LH) col_bad += v != SENTINEL;
                else if (t >= layer_len[n]) pad_bad += v != 0.0;
            }
    EXPECT(pad_bad == 0, "%s: %d padding outputs are not exactly 0", tag, pad_bad);
    EXPECT(col_bad == 0, "%s: %d values outside the output columns were written", tag, col_bad);

    /* the gradient from zero */
    layer_grads g0 = grads_alloc(&L, NULL);
    layer_bwd(&L, &g0);
    EXPECT(guard_intact(L.saved, L.nsaved), "%s: saved written past %zu values", tag, L.nsaved);
    EXPECT(guard_intact(L.scratch, L.nscratch), "%s: scratch written past %zu values", tag, L.nscratch);
    int dx_pad_bad = 0;
    for (int n = 0; n < LN; n++)
        for (int t = layer_len[n]; t < LS; t++)
            for (int i = 0; i < LI; i++) dx_pad_bad += g0.dx[((size_t)n * LS + t) * LI + i] != 0.0;
    EXPECT(dx_pad_bad == 0, "%s: %d dx values at padding are not exactly 0", tag, dx_pad_bad);

#define FD(name, p, n, an)                                                   \
    do {                                                                     \
        snprintf(what, sizeof what, "layer %s d%s", tag, name);              \
        fd_check(what, layer_loss, &L, (p), (n), (an));                      \
    } while (0)
    FD("x", L.x, nx, g0.dx);
    if (init) {
        FD("h0", L.h0, nh, g0.dh0);
        if (L.lstm) FD("c0", L.c0, nh, g0.dc0);
    }
    FD("W_ih", tc.W_ih, tc.n_ih, g0.W_ih);
    FD("W_hh", tc.W_hh, tc.n_hh, g0.W_hh);
    FD("b_ih", tc.b_ih, tc.n_b, g0.b_ih);
    FD("b_hh", tc.b_hh, tc.n_b, g0.b_hh);
#undef FD

    /* accumulation */
    rng64 rb = {99};
    layer_grads base = grads_alloc(&L, &rb);
    rb.s = 99;
    layer_grads acc = grads_alloc(&L, &rb);
    layer_bwd(&L, &acc);
#define ACC(name, field, n)                                                   \
    do {                                                                      \
        snprintf(what, sizeof what, "layer %s += %s", tag, name);             \
        check_accumulated(what, acc.field, base.field, g0.field, (n));        \
    } while (0)
    ACC("dx", dx, nx);
    if (init) {
        ACC("dh0", dh0, nh);
        if (L.lstm) ACC("dc0", dc0, nh);
    }
    ACC("W_ih", W_ih, tc.n_ih);
    ACC("W_hh", W_hh, tc.n_hh);
    ACC("b_ih", b_ih, tc.n_b);
    ACC("b_hh", b_hh, tc.n_b);
#undef ACC
    if (!init) { /* NULL dh0 / dc0 were not touched */
        EXPECT(memcmp(acc.dh0, base.dh0, nh * sizeof(double)) == 0, "%s: dh0 written", tag);
        EXPECT(memcmp(acc.dc0, base.dc0, nh * sizeof(double)) == 0, "%s: dc0 written", tag);
    }

    grads_free(&g0);
    grads_free(&base);
    grads_free(&acc);
    free(L.x); free(L.h0); free(L.c0); free(L.buf); free(L.h_final); free(L.c_final);
    free(L.saved); free(L.scratch); free(L.r_out); free(L.r_h); free(L.r_c);
    cell_free(&tc);
}

static void layer_all(attend_cell_kind kind) {
    for (int reverse = 0; reverse < 2; reverse++) {
        layer_case(kind, reverse, 1, 1);
        layer_case(kind, reverse, 0, 1);
        layer_case(kind, reverse, 0, 0);
    }
}

static void test_layer_gru(void) { layer_all(ATTEND_CELL_GRU); }
static void test_layer_lstm(void) { layer_all(ATTEND_CELL_LSTM); }

/* A reverse layer equals a forward layer over each sequence reversed in place
 * (x'[n,t] = x[n,len-1-t], out[n,t] = out'[n,len-1-t]); padding values of x
 * do not matter. */
static void reverse_case(attend_cell_kind kind) {
    rng64 r = {31337u + (unsigned)kind};
    const size_t nx = (size_t)LN * LS * LI, nh = (size_t)LN * LH, no = (size_t)LN * LS * LH;
    int lstm = kind == ATTEND_CELL_LSTM;
    test_cell tc;
    cell_init(&tc, &r, kind, LI, LH);
    double *x = alloc_fill(&r, nx, 1.0), *xr = alloc_zero(nx);
    double *h0 = alloc_fill(&r, nh, 0.8), *c0 = alloc_fill(&r, nh, 0.8);
    for (int n = 0; n < LN; n++)
        for (int t = 0; t < LS; t++)
            for (int i = 0; i < LI; i++) {
                size_t dst = ((size_t)n * LS + t) * LI + i;
                if (t < layer_len[n]) xr[dst] = x[((size_t)n * LS + layer_len[n] - 1 - t) * LI + i];
                else xr[dst] = 1e3 * (1 + i); /* large padding values: must be ignored */
            }
    size_t ns = at_rnn_layer_saved_size(kind, LN, LS, LH), nsc = at_rnn_layer_scratch_size(kind, LN, LS, LH);
    double *saved = alloc_zero(ns), *scratch = alloc_zero(nsc);
    double *out = alloc_zero(no), *outr = alloc_zero(no), *want = alloc_zero(no);
    double *hf = alloc_zero(nh), *hfr = alloc_zero(nh), *cf = alloc_zero(nh), *cfr = alloc_zero(nh);
    at_rnn_layer_forward(&tc.c, 1, out, LH, hf, lstm ? cf : NULL, saved, x, layer_len, h0,
                         lstm ? c0 : NULL, LN, LS, scratch);
    at_rnn_layer_forward(&tc.c, 0, outr, LH, hfr, lstm ? cfr : NULL, saved, xr, layer_len, h0,
                         lstm ? c0 : NULL, LN, LS, scratch);
    for (int n = 0; n < LN; n++)
        for (int t = 0; t < layer_len[n]; t++)
            memcpy(want + ((size_t)n * LS + t) * LH,
                   outr + ((size_t)n * LS + layer_len[n] - 1 - t) * LH, LH * sizeof(double));
    char what[96];
    snprintf(what, sizeof what, "%s reverse == forward of reversed: out", kind_str(kind));
    EXPECT_CLOSE(what, out, want, no, 1e-13, 0);
    snprintf(what, sizeof what, "%s reverse == forward of reversed: h_final", kind_str(kind));
    EXPECT_CLOSE(what, hf, hfr, nh, 1e-13, 0);
    if (lstm) {
        snprintf(what, sizeof what, "%s reverse == forward of reversed: c_final", kind_str(kind));
        EXPECT_CLOSE(what, cf, cfr, nh, 1e-13, 0);
    }
    free(x); free(xr); free(h0); free(c0); free(saved); free(scratch);
    free(out); free(outr); free(want); free(hf); free(hfr); free(cf); free(cfr);
    cell_free(&tc);
}

static void test_reverse_semantics(void) {
    reverse_case(ATTEND_CELL_GRU);
    reverse_case(ATTEND_CELL_LSTM);
}

static void test_sizes(void) {
    EXPECT(at_cell_gates(ATTEND_CELL_GRU) == 3, "GRU gates");
    EXPECT(at_cell_gates(ATTEND_CELL_LSTM) == 4, "LSTM gates");
    EXPECT(at_rnn_layer_saved_size(ATTEND_CELL_GRU, 0, 3, 4) == 0, "N = 0 gives size 0");
    EXPECT(at_rnn_layer_scratch_size(ATTEND_CELL_LSTM, 2, 0, 4) == 0, "S = 0 gives size 0");
    EXPECT(at_rnn_layer_saved_size(ATTEND_CELL_GRU, 1 << 20, 1 << 20, 1 << 20) == 0,
           "overflowing sizes give 0");
    /* GRU: S*N*4H + (S+1)*N*H; LSTM: S*N*5H + 2*(S+1)*N*H */
    EXPECT(at_rnn_layer_saved_size(ATTEND_CELL_GRU, 2, 3, 4) == 3 * 2 * 16 + 4 * 2 * 4,
           "GRU saved size %zu", at_rnn_layer_saved_size(ATTEND_CELL_GRU, 2, 3, 4));
    EXPECT(at_rnn_layer_saved_size(ATTEND_CELL_LSTM, 2, 3, 4) == 3 * 2 * 20 + 2 * 4 * 2 * 4,
           "LSTM saved size %zu", at_rnn_layer_saved_size(ATTEND_CELL_LSTM, 2, 3, 4));
}

int main(void) {
    RUN(test_sizes);
    RUN(test_step_gru);
    RUN(test_step_lstm);
    RUN(test_layer_gru);
    RUN(test_layer_lstm);
    RUN(test_reverse_semantics);
    return harness_summary();
}
