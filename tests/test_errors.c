/*
 * test_errors.c — every error path of the attention API (float library):
 * the status code, a message that names what is wrong (with the offending
 * values), no crash when err itself is NULL, and — where the header promises
 * validation before writing (masked softmax, attention, multi-head, pointer
 * log-probabilities) — outputs left untouched on a masked row or a non-finite
 * score. Then numerical robustness of the softmax and of attention with huge
 * scores, and the status names.
 *
 * No output redirection: none of the paths exercised here can print. The
 * library's only formatting call is vsnprintf into err->msg (src/core/status.c);
 * src/ has no printf/fprintf/puts/abort/exit, and every call below fails in
 * validation before any GEMM runs, so OpenBLAS's parameter checker (xerbla,
 * which prints) is never reached with bad arguments.
 */
#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "attend.h"
#include "harness.h"

/* ------------------------------------------------------------ helpers */

/* Checks one failing call made twice: once with an error struct (prefilled
 * with garbage, so the message must be written and NUL-terminated), once with
 * err = NULL (which must not crash and must return the same status). */
static void check_failure(const char *file, int line, const char *call, attend_status got,
                          attend_status got_null_err, const attend_error *err, attend_status want,
                          const char *s1, const char *s2) {
    const char *msg = memchr(err->msg, '\0', sizeof err->msg) ? err->msg : "<not terminated>";
    int ok = got == want && got_null_err == want && err->status == want && msg[0] != '\0' &&
             msg[0] != '#' && (!s1 || strstr(msg, s1)) && (!s2 || strstr(msg, s2));
    printf("  %-21s %s\n", attend_status_name(got), msg);
    if (!ok) {
        harness_checks_failed_++;
        fprintf(stderr,
                "  FAIL %s:%d: %s\n    got %s (err=NULL: %s, err->status %s), want %s; "
                "message \"%s\" should contain \"%s\" and \"%s\"\n",
                file, line, call, attend_status_name(got), attend_status_name(got_null_err),
                attend_status_name(err->status), attend_status_name(want), msg, s1 ? s1 : "",
                s2 ? s2 : "");
    }
}

/* EXPECT_FAIL(status, substring or NULL, substring or NULL, call using ERR) */
#define EXPECT_FAIL(want, s1, s2, call)                                                            \
    do {                                                                                           \
        attend_error err_buf_;                                                                     \
        memset(&err_buf_, '#', sizeof err_buf_);                                                   \
        attend_error *ERR = &err_buf_;                                                             \
        attend_status st_err_ = (call);                                                            \
        ERR = NULL;                                                                                \
        attend_status st_null_ = (call);                                                           \
        check_failure(__FILE__, __LINE__, #call, st_err_, st_null_, &err_buf_, (want), (s1),       \
                      (s2));                                                                       \
    } while (0)

/* A call that must succeed and leave an empty message. */
#define EXPECT_OK(call)                                                                            \
    do {                                                                                           \
        attend_error err_buf_;                                                                     \
        memset(&err_buf_, '#', sizeof err_buf_);                                                   \
        attend_error *ERR = &err_buf_;                                                             \
        attend_status st_ = (call);                                                                \
        EXPECT(st_ == ATTEND_OK && err_buf_.status == ATTEND_OK && err_buf_.msg[0] == '\0',        \
               "%s: %s \"%.200s\"", #call, attend_status_name(st_),                                \
               memchr(err_buf_.msg, 0, sizeof err_buf_.msg) ? err_buf_.msg : "");                  \
    } while (0)

#define BUF 4096
#define SENTINEL 12345.0f

/* Shared, generously sized buffers. Inputs hold small finite values. */
static float in_a[BUF], in_b[BUF], in_c[BUF], in_d[BUF];
static float out_a[BUF], out_b[BUF], out_c[BUF], ws[BUF];
static int32_t idx_buf[BUF];

static void fill(float *x, size_t n, float v) {
    for (size_t i = 0; i < n; i++) x[i] = v;
}
static void fill_inputs(void) {
    for (int i = 0; i < BUF; i++) {
        in_a[i] = 0.1f * (float)((i * 7) % 11) - 0.5f;
        in_b[i] = 0.1f * (float)((i * 5) % 13) - 0.6f;
        in_c[i] = 0.1f * (float)((i * 3) % 7) - 0.3f;
        in_d[i] = 0.05f * (float)((i * 11) % 17) - 0.4f;
    }
}
static int all_equal(const float *x, size_t n, float v) {
    for (size_t i = 0; i < n; i++)
        if (x[i] != v) return 0;
    return 1;
}

static attend_score_config score_cfg(attend_score_kind kind, int Dq, int Dk, int A, int bias) {
    attend_score_config c = {kind, Dq, Dk, A, bias, 0.0};
    return c;
}
/* Every parameter present (W [Dq,Dk], Wq [A,Dq], Wk [A,Dk], b, v [A]: all fit in in_d). */
static attend_score_params score_params(void) {
    attend_score_params p = {in_d, in_d, in_d, in_d, in_d};
    return p;
}
static attend_mha_config mha_cfg(int E, int H, int kdim, int vdim, int bias) {
    attend_mha_config c = {E, H, kdim, vdim, bias};
    return c;
}
static attend_mha_params mha_params(void) {
    attend_mha_params p = {in_d, in_d, in_d, in_d, in_d, in_d, in_d, in_d};
    return p;
}

/* -------------------------------------------------------- status names */

static void test_status_names(void) {
    static const struct {
        attend_status s;
        const char *name;
    } names[] = {
        {ATTEND_OK, "ATTEND_OK"},
        {ATTEND_ERR_NULL, "ATTEND_ERR_NULL"},
        {ATTEND_ERR_SHAPE, "ATTEND_ERR_SHAPE"},
        {ATTEND_ERR_MASKED_ROW, "ATTEND_ERR_MASKED_ROW"},
        {ATTEND_ERR_ARG, "ATTEND_ERR_ARG"},
        {ATTEND_ERR_ALLOC, "ATTEND_ERR_ALLOC"},
        {ATTEND_ERR_NONFINITE, "ATTEND_ERR_NONFINITE"},
        {ATTEND_ERR_IO, "ATTEND_ERR_IO"},
        {ATTEND_ERR_FORMAT, "ATTEND_ERR_FORMAT"},
        {ATTEND_ERR_CAPACITY, "ATTEND_ERR_CAPACITY"},
    };
    /* values are pinned */
    EXPECT(ATTEND_OK == 0 && ATTEND_ERR_NULL == 1 && ATTEND_ERR_SHAPE == 2 &&
               ATTEND_ERR_MASKED_ROW == 3 && ATTEND_ERR_ARG == 4 && ATTEND_ERR_ALLOC == 5 &&
               ATTEND_ERR_NONFINITE == 6 && ATTEND_ERR_IO == 7 && ATTEND_ERR_FORMAT == 8 &&
               ATTEND_ERR_CAPACITY == 9,
           "status values changed");
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *got = attend_status_name(names[i].s);
        EXPECT(got && !strcmp(got, names[i].name), "status %d: name \"%s\", want \"%s\"",
               (int)names[i].s, got ? got : "(null)", names[i].name);
    }
    int unknown[] = {10, 42, -1, INT_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++) {
        const char *got = attend_status_name((attend_status)unknown[i]);
        EXPECT(got && !strcmp(got, "ATTEND_ERR_UNKNOWN"), "status %d: name \"%s\"", unknown[i],
               got ? got : "(null)");
    }
    EXPECT(!strcmp(attend_version(), ATTEND_VERSION_STRING), "version %s", attend_version());
    const char *be = attend_gemm_backend();
    EXPECT(be && (!strcmp(be, "openblas") || !strcmp(be, "own")), "backend %s",
           be ? be : "(null)");
}

/* ------------------------------------------------------------- shapes */

static void test_shape_errors(void) {
    attend_score_params p = score_params();
    /* dot kinds need Dq == Dk: the message names both widths */
    attend_score_config dot = score_cfg(ATTEND_SCORE_DOT, 3, 4, 0, 0);
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "Dq=3", "Dk=4", attend_score_config_check(&dot, ERR));
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "Dq=3", "Dk=4",
                attend_keys_forward(&dot, &p, out_a, in_a, 2, 3, ERR));
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "Dq=3", "Dk=4",
                attend_keys_backward(&dot, &p, NULL, out_a, in_a, in_b, 2, 3, ERR));
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "Dq=3", "Dk=4",
                attend_scores_forward(&dot, &p, out_a, NULL, in_a, in_b, 2, 3, 4, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_SHAPE, "Dq=3", "Dk=4",
        attend_scores_backward(&dot, &p, NULL, out_a, out_b, in_a, NULL, in_b, in_c, 2, 3, 4, ERR));
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "Dq=3", "Dk=4",
                attend_attention_forward(&dot, &p, out_a, out_b, in_a, in_b, in_c, NULL, NULL, 0, 2,
                                         3, 4, 2, ws, BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "Dq=3", "Dk=4",
                attend_attention_backward(&dot, &p, NULL, out_a, out_b, out_c, in_a, NULL, in_b,
                                          in_c, in_d, in_a, 2, 3, 4, 2, ws, BUF, ERR));
    attend_score_config sdot = score_cfg(ATTEND_SCORE_SCALED_DOT, 5, 2, 0, 0);
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "Dq=5", "Dk=2", attend_score_config_check(&sdot, ERR));
    EXPECT(attend_score_key_width(&dot) == 0 && attend_score_effective_scale(&dot) == 0,
           "invalid config: key width %d, scale %g", attend_score_key_width(&dot),
           attend_score_effective_scale(&dot));
    EXPECT(attend_attention_workspace_size(&dot, 2, 3, 4) == 0, "invalid config: workspace %zu",
           attend_attention_workspace_size(&dot, 2, 3, 4));

    /* widths < 1 in the score configuration */
    for (int bad = 0; bad >= -1; bad--) {
        char want[32];
        attend_score_config c = score_cfg(ATTEND_SCORE_GENERAL, bad, 3, 0, 0);
        snprintf(want, sizeof want, "Dq=%d", bad);
        EXPECT_FAIL(ATTEND_ERR_SHAPE, want, NULL, attend_score_config_check(&c, ERR));
        c = score_cfg(ATTEND_SCORE_GENERAL, 3, bad, 0, 0);
        snprintf(want, sizeof want, "Dk=%d", bad);
        EXPECT_FAIL(ATTEND_ERR_SHAPE, want, NULL, attend_score_config_check(&c, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, want, NULL,
                    attend_keys_forward(&c, &p, out_a, in_a, 2, 3, ERR));
        c = score_cfg(ATTEND_SCORE_ADDITIVE, 3, 3, bad, 0);
        snprintf(want, sizeof want, "A=%d", bad);
        EXPECT_FAIL(ATTEND_ERR_SHAPE, want, NULL, attend_score_config_check(&c, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, want, NULL,
                    attend_attention_forward(&c, &p, out_a, out_b, in_a, in_b, in_c, NULL, NULL, 0,
                                             2, 3, 4, 2, ws, BUF, ERR));
    }

    /* N, T, S, Dv < 1 for every kernel (S = 0: a zero-length source) */
    attend_score_config gen = score_cfg(ATTEND_SCORE_GENERAL, 3, 2, 0, 0);
    attend_score_config add = score_cfg(ATTEND_SCORE_ADDITIVE, 3, 2, 4, 1);
    for (int bad = 0; bad >= -1; bad--) {
        char nb[16], tb[16], sb[16], db[16];
        snprintf(nb, sizeof nb, "N=%d", bad);
        snprintf(tb, sizeof tb, "T=%d", bad);
        snprintf(sb, sizeof sb, "S=%d", bad);
        snprintf(db, sizeof db, "Dv=%d", bad);
        EXPECT_FAIL(ATTEND_ERR_SHAPE, nb, NULL,
                    attend_keys_forward(&gen, &p, out_a, in_a, bad, 3, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, sb, NULL,
                    attend_keys_forward(&gen, &p, out_a, in_a, 2, bad, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, sb, NULL,
                    attend_keys_backward(&gen, &p, NULL, out_a, in_a, in_b, 2, bad, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, tb, NULL,
                    attend_scores_forward(&add, &p, out_a, out_b, in_a, in_b, 2, bad, 4, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, sb, NULL,
                    attend_scores_forward(&gen, &p, out_a, NULL, in_a, in_b, 2, 3, bad, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, nb, NULL,
                    attend_scores_backward(&add, &p, NULL, out_a, out_b, in_a, out_c, in_b, in_c,
                                           bad, 3, 4, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, nb, NULL,
                    attend_masked_softmax_forward(out_a, in_a, NULL, NULL, 0, bad, 3, 4, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, tb, NULL,
                    attend_masked_softmax_forward(out_a, in_a, NULL, NULL, 0, 2, bad, 4, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, sb, NULL,
                    attend_masked_softmax_forward(out_a, in_a, NULL, NULL, 0, 2, 3, bad, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, sb, NULL,
                    attend_masked_softmax_backward(out_a, in_a, in_b, 2, 3, bad, ERR));
        /* the context kernels name the value width "width" */
        char wb[16];
        snprintf(wb, sizeof wb, "width %d", bad);
        EXPECT_FAIL(ATTEND_ERR_SHAPE, wb, NULL,
                    attend_context_forward(out_a, in_a, in_b, 2, 3, 4, bad, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, sb, NULL,
                    attend_context_forward(out_a, in_a, in_b, 2, 3, bad, 2, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, tb, NULL,
                    attend_context_backward(out_a, out_b, in_a, in_b, in_c, 2, bad, 4, 2, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, db, NULL,
                    attend_attention_forward(&gen, &p, out_a, out_b, in_a, in_b, in_c, NULL, NULL,
                                             0, 2, 3, 4, bad, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, sb, NULL,
                    attend_attention_forward(&gen, &p, out_a, out_b, in_a, in_b, in_c, NULL, NULL,
                                             0, 2, 3, bad, 2, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, nb, NULL,
                    attend_attention_forward(&add, &p, out_a, out_b, in_a, in_b, in_c, NULL, NULL,
                                             0, bad, 3, 4, 2, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, tb, NULL,
                    attend_attention_backward(&add, &p, NULL, out_a, out_b, out_c, in_a, NULL, in_b,
                                              in_c, in_d, in_a, 2, bad, 4, 2, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, db, NULL,
                    attend_attention_backward(&add, &p, NULL, out_a, out_b, out_c, in_a, NULL, in_b,
                                              in_c, in_d, in_a, 2, 3, 4, bad, ws, BUF, ERR));
        EXPECT(attend_attention_workspace_size(&gen, 2, 3, bad) == 0 &&
                   attend_attention_workspace_size(&gen, bad, 3, 4) == 0,
               "workspace size for a dimension %d should be 0", bad);

        attend_mha_config m = mha_cfg(4, 2, 0, 0, 1);
        attend_mha_params mp = mha_params();
        EXPECT_FAIL(ATTEND_ERR_SHAPE, sb, NULL,
                    attend_mha_forward(&m, &mp, out_a, NULL, 0, in_a, in_b, in_c, NULL, NULL, 0, 2,
                                       3, bad, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, nb, NULL,
                    attend_mha_forward(&m, &mp, out_a, NULL, 0, in_a, in_b, in_c, NULL, NULL, 0,
                                       bad, 3, 4, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, tb, NULL,
                    attend_mha_backward(&m, &mp, NULL, out_a, out_b, out_c, in_a, in_b, in_c, in_d,
                                        2, bad, 4, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, tb, NULL,
                    attend_self_attention_forward(&m, &mp, out_a, NULL, 0, in_a, NULL, 0, 2, bad,
                                                  ws, BUF, ERR));
        EXPECT_FAIL(
            ATTEND_ERR_SHAPE, nb, NULL,
            attend_self_attention_backward(&m, &mp, NULL, out_a, in_a, in_b, bad, 3, ws, BUF, ERR));
        EXPECT(attend_mha_workspace_size(&m, 2, 3, bad) == 0, "mha workspace for S=%d", bad);

        EXPECT_FAIL(ATTEND_ERR_SHAPE, sb, NULL, attend_hard_argmax(idx_buf, in_a, 2, 3, bad, ERR));
        attend_rng rng;
        attend_rng_seed(&rng, 1);
        EXPECT_FAIL(ATTEND_ERR_SHAPE, tb, NULL,
                    attend_hard_sample(idx_buf, in_a, &rng, 2, bad, 4, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, sb, NULL,
                    attend_hard_context_forward(out_a, idx_buf, in_a, 2, 3, bad, 2, ERR));
        snprintf(wb, sizeof wb, "width=%d", bad);
        EXPECT_FAIL(ATTEND_ERR_SHAPE, wb, NULL,
                    attend_hard_context_backward(out_a, in_a, idx_buf, 2, 3, 4, bad, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, sb, NULL,
                    attend_pointer_logprobs_forward(out_a, in_a, NULL, NULL, 0, 2, 3, bad, ERR));
        double loss;
        EXPECT_FAIL(ATTEND_ERR_SHAPE, nb, NULL,
                    attend_pointer_nll_forward(&loss, NULL, in_a, idx_buf, bad, 3, 4, ERR));
        EXPECT_FAIL(ATTEND_ERR_SHAPE, sb, NULL,
                    attend_pointer_nll_backward(out_a, in_a, idx_buf, 2, 3, bad, ERR));
    }

    /* multi-head configuration */
    attend_mha_params mp = mha_params();
    attend_mha_config m = mha_cfg(6, 4, 0, 0, 0);
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "E=6", "H=4", attend_mha_config_check(&m, ERR));
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "E=6", "H=4",
                attend_mha_forward(&m, &mp, out_a, NULL, 0, in_a, in_b, in_c, NULL, NULL, 0, 2, 3,
                                   4, ws, BUF, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_SHAPE, "E=6", "H=4",
        attend_self_attention_backward(&m, &mp, NULL, out_a, in_a, in_b, 2, 3, ws, BUF, ERR));
    EXPECT(attend_mha_workspace_size(&m, 2, 3, 4) == 0, "workspace for E=6 H=4 should be 0");
    m = mha_cfg(0, 1, 0, 0, 0);
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "E=0", NULL, attend_mha_config_check(&m, ERR));
    m = mha_cfg(4, 0, 0, 0, 0);
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "H=0", NULL, attend_mha_config_check(&m, ERR));
    m = mha_cfg(4, -2, 0, 0, 0);
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "H=-2", NULL, attend_mha_config_check(&m, ERR));
    m = mha_cfg(4, 2, -1, 0, 0);
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "kdim=-1", NULL, attend_mha_config_check(&m, ERR));
    m = mha_cfg(4, 2, 0, -3, 0);
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "vdim=-3", NULL, attend_mha_config_check(&m, ERR));
    /* self-attention: q, k, v are one sequence, so kdim and vdim must be E */
    m = mha_cfg(4, 2, 3, 0, 0);
    EXPECT_FAIL(
        ATTEND_ERR_SHAPE, "kdim=3", "E=4",
        attend_self_attention_forward(&m, &mp, out_a, NULL, 0, in_a, NULL, 0, 2, 3, ws, BUF, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_SHAPE, "kdim=3", "E=4",
        attend_self_attention_backward(&m, &mp, NULL, out_a, in_a, in_b, 2, 3, ws, BUF, ERR));
    m = mha_cfg(4, 2, 0, 5, 0);
    EXPECT_FAIL(
        ATTEND_ERR_SHAPE, "vdim=5", "E=4",
        attend_self_attention_forward(&m, &mp, out_a, NULL, 0, in_a, NULL, 0, 2, 3, ws, BUF, ERR));

    /* sizes whose products overflow are shape errors, found before any data is read */
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "overflow", NULL,
                attend_masked_softmax_forward(out_a, in_a, NULL, NULL, 0, 65536, 65536, 1, ERR));
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "overflow", NULL,
                attend_attention_forward(&gen, &p, out_a, out_b, in_a, in_b, in_c, NULL, NULL, 0,
                                         INT_MAX, INT_MAX, INT_MAX, 2, ws, BUF, ERR));
    m = mha_cfg(4, 2, 0, 0, 0);
    EXPECT_FAIL(ATTEND_ERR_SHAPE, "overflow", NULL,
                attend_mha_forward(&m, &mp, out_a, NULL, 0, in_a, in_b, in_c, NULL, NULL, 0, 65536,
                                   65536, 4, ws, BUF, ERR));
    int overflow = 0;
    size_t saved = attend_scores_saved_size(&add, INT_MAX, INT_MAX, INT_MAX, &overflow);
    EXPECT(saved == 0 && overflow == 1, "saved size on overflow: %zu, overflow flag %d", saved,
           overflow);
    EXPECT(attend_scores_saved_size(&add, INT_MAX, INT_MAX, INT_MAX, NULL) == 0,
           "saved size on overflow (NULL flag)");
    EXPECT(attend_attention_workspace_size(&add, INT_MAX, INT_MAX, INT_MAX) == 0,
           "attention workspace size on overflow");
    EXPECT(attend_mha_workspace_size(&m, INT_MAX, INT_MAX, INT_MAX) == 0,
           "mha workspace size on overflow");
}

/* ------------------------------------------------------ argument values */

static void test_arg_errors(void) {
    attend_score_params p = score_params();
    attend_score_config c = score_cfg((attend_score_kind)7, 3, 3, 2, 0);
    EXPECT_FAIL(ATTEND_ERR_ARG, "kind 7", NULL, attend_score_config_check(&c, ERR));
    EXPECT_FAIL(ATTEND_ERR_ARG, "kind 7", NULL,
                attend_keys_forward(&c, &p, out_a, in_a, 2, 3, ERR));
    EXPECT_FAIL(ATTEND_ERR_ARG, "kind 7", NULL,
                attend_attention_forward(&c, &p, out_a, out_b, in_a, in_b, in_c, NULL, NULL, 0, 2,
                                         3, 4, 2, ws, BUF, ERR));
    EXPECT(attend_score_key_width(&c) == 0, "unknown kind: key width %d",
           attend_score_key_width(&c));
    c.kind = (attend_score_kind)-1;
    EXPECT_FAIL(ATTEND_ERR_ARG, "kind -1", NULL, attend_score_config_check(&c, ERR));
    EXPECT_FAIL(ATTEND_ERR_ARG, "kind -1", NULL,
                attend_scores_forward(&c, &p, out_a, out_b, in_a, in_b, 2, 3, 4, ERR));

    c = score_cfg(ATTEND_SCORE_SCALED_DOT, 3, 3, 0, 0);
    double bad_scales[] = {-0.5, -INFINITY, INFINITY, NAN};
    const char *bad_text[] = {"scale=-0.5", "scale=-inf", "scale=inf", "scale="};
    for (int i = 0; i < 4; i++) {
        c.scale = bad_scales[i];
        EXPECT_FAIL(ATTEND_ERR_ARG, bad_text[i], NULL, attend_score_config_check(&c, ERR));
        EXPECT_FAIL(ATTEND_ERR_ARG, bad_text[i], NULL,
                    attend_scores_forward(&c, &p, out_a, NULL, in_a, in_b, 2, 3, 4, ERR));
        EXPECT_FAIL(ATTEND_ERR_ARG, bad_text[i], NULL,
                    attend_attention_backward(&c, &p, NULL, out_a, out_b, out_c, in_a, NULL, in_b,
                                              in_c, in_d, in_a, 2, 3, 4, 2, ws, BUF, ERR));
        EXPECT(attend_score_effective_scale(&c) == 0, "bad scale: effective %g",
               attend_score_effective_scale(&c));
    }
    /* 0 selects 1/sqrt(Dk) and is valid; the scale is ignored by the other kinds */
    c.scale = 0;
    EXPECT_OK(attend_score_config_check(&c, ERR));
    EXPECT_NEAR("scaled_dot scale 0 -> 1/sqrt(3)", attend_score_effective_scale(&c), 1 / sqrt(3.0),
                1e-15);
    c = score_cfg(ATTEND_SCORE_DOT, 3, 3, 0, 0);
    c.scale = NAN;
    EXPECT_OK(attend_score_config_check(&c, ERR));

    /* hard attention: index outside [0,S) names the row */
    for (int i = 0; i < 6; i++) idx_buf[i] = 1;
    idx_buf[4] = 4; /* row (n=1, t=1) of N=2, T=3; S=4 */
    EXPECT_FAIL(ATTEND_ERR_ARG, "n=1, t=1", "position 4",
                attend_hard_context_forward(out_a, idx_buf, in_a, 2, 3, 4, 2, ERR));
    EXPECT_FAIL(ATTEND_ERR_ARG, "n=1, t=1", "position 4",
                attend_hard_context_backward(out_a, in_a, idx_buf, 2, 3, 4, 2, ERR));
    idx_buf[4] = 1;
    idx_buf[2] = -1; /* row (n=0, t=2) */
    EXPECT_FAIL(ATTEND_ERR_ARG, "n=0, t=2", "position -1",
                attend_hard_context_forward(out_a, idx_buf, in_a, 2, 3, 4, 2, ERR));
    EXPECT_FAIL(ATTEND_ERR_ARG, "n=0, t=2", "position -1",
                attend_hard_context_backward(out_a, in_a, idx_buf, 2, 3, 4, 2, ERR));
    idx_buf[2] = 1;

    /* pointer targets: out of range, < -1, or on an excluded position */
    float logp[2 * 3 * 4];
    uint8_t valid[2 * 4] = {1, 1, 1, 1, 1, 1, 0, 1}; /* n=1: position 2 padded */
    EXPECT_OK(attend_pointer_logprobs_forward(logp, in_a, valid, NULL, 0, 2, 3, 4, ERR));
    int32_t targets[6] = {0, 1, 2, 3, -1, 0};
    double loss = -1;
    int count = -1;
    EXPECT_OK(attend_pointer_nll_forward(&loss, &count, logp, targets, 2, 3, 4, ERR));
    EXPECT(count == 5 && isfinite(loss) && loss > 0, "count %d loss %g", count, loss);
    targets[5] = 2; /* row (n=1, t=2) points at the padded position 2 */
    EXPECT_FAIL(ATTEND_ERR_ARG, "n=1, t=2", "masked",
                attend_pointer_nll_forward(&loss, &count, logp, targets, 2, 3, 4, ERR));
    EXPECT_FAIL(ATTEND_ERR_ARG, "n=1, t=2", "masked",
                attend_pointer_nll_backward(out_a, logp, targets, 2, 3, 4, ERR));
    targets[5] = 4; /* out of range */
    EXPECT_FAIL(ATTEND_ERR_ARG, "n=1, t=2", "position 4",
                attend_pointer_nll_forward(&loss, &count, logp, targets, 2, 3, 4, ERR));
    EXPECT_FAIL(ATTEND_ERR_ARG, "n=1, t=2", "position 4",
                attend_pointer_nll_backward(out_a, logp, targets, 2, 3, 4, ERR));
    targets[5] = 0;
    targets[1] = -2; /* only -1 means "ignore" */
    EXPECT_FAIL(ATTEND_ERR_ARG, "n=0, t=1", "-2",
                attend_pointer_nll_forward(&loss, &count, logp, targets, 2, 3, 4, ERR));
    EXPECT_FAIL(ATTEND_ERR_ARG, "n=0, t=1", "-2",
                attend_pointer_nll_backward(out_a, logp, targets, 2, 3, 4, ERR));
}

/* ------------------------------------------------------------- workspace */

static void test_capacity(void) {
    attend_score_params p = score_params();
    attend_score_config kinds[] = {score_cfg(ATTEND_SCORE_DOT, 3, 3, 0, 0),
                                   score_cfg(ATTEND_SCORE_ADDITIVE, 3, 2, 4, 1)};
    for (int i = 0; i < 2; i++) {
        size_t need = attend_attention_workspace_size(&kinds[i], 2, 3, 4);
        EXPECT(need > 0 && need <= BUF, "attention workspace %zu", need);
        char want[32];
        snprintf(want, sizeof want, "needs %zu", need);
        EXPECT_FAIL(ATTEND_ERR_CAPACITY, want, NULL,
                    attend_attention_forward(&kinds[i], &p, out_a, out_b, in_a, in_b, in_c, NULL,
                                             NULL, 0, 2, 3, 4, 2, ws, need - 1, ERR));
        EXPECT_FAIL(ATTEND_ERR_CAPACITY, want, NULL,
                    attend_attention_backward(&kinds[i], &p, NULL, out_a, out_b, out_c, in_a, NULL,
                                              in_b, in_c, in_d, in_a, 2, 3, 4, 2, ws, 0, ERR));
        EXPECT_OK(attend_attention_forward(&kinds[i], &p, out_a, out_b, in_a, in_b, in_c, NULL,
                                           NULL, 0, 2, 3, 4, 2, ws, need, ERR));
    }
    attend_mha_config m = mha_cfg(4, 2, 3, 5, 1);
    attend_mha_params mp = mha_params();
    size_t need = attend_mha_workspace_size(&m, 2, 3, 4);
    EXPECT(need > 0 && need <= BUF, "mha workspace %zu", need);
    char want[32];
    snprintf(want, sizeof want, "needs %zu", need);
    EXPECT_FAIL(ATTEND_ERR_CAPACITY, want, NULL,
                attend_mha_forward(&m, &mp, out_a, NULL, 0, in_a, in_b, in_c, NULL, NULL, 0, 2, 3,
                                   4, ws, need - 1, ERR));
    EXPECT_FAIL(ATTEND_ERR_CAPACITY, want, NULL,
                attend_mha_backward(&m, &mp, NULL, out_a, out_b, out_c, in_a, in_b, in_c, in_d, 2,
                                    3, 4, ws, 1, ERR));
    EXPECT_OK(attend_mha_forward(&m, &mp, out_a, NULL, 0, in_a, in_b, in_c, NULL, NULL, 0, 2, 3, 4,
                                 ws, need, ERR));
    m = mha_cfg(4, 2, 0, 0, 0);
    need = attend_mha_workspace_size(&m, 2, 3, 3);
    EXPECT_FAIL(ATTEND_ERR_CAPACITY, NULL, NULL,
                attend_self_attention_forward(&m, &mp, out_a, NULL, 0, in_a, NULL, 0, 2, 3, ws,
                                              need - 1, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_CAPACITY, NULL, NULL,
        attend_self_attention_backward(&m, &mp, NULL, out_a, in_a, in_b, 2, 3, ws, need / 2, ERR));
}

/* ---------------------------------------------------------- NULL pointers */

static void test_null_pointers(void) {
    attend_score_params p = score_params();
    attend_score_config gen = score_cfg(ATTEND_SCORE_GENERAL, 3, 2, 0, 0);
    attend_score_config add = score_cfg(ATTEND_SCORE_ADDITIVE, 3, 2, 4, 1);
    attend_score_config dot = score_cfg(ATTEND_SCORE_DOT, 3, 3, 0, 0);
    const int N = 2, T = 3, S = 4, Dv = 2;

    EXPECT_FAIL(ATTEND_ERR_NULL, "NULL", NULL, attend_score_config_check(NULL, ERR));
    EXPECT(attend_score_key_width(NULL) == 0 && attend_score_effective_scale(NULL) == 0 &&
               attend_scores_saved_size(NULL, N, T, S, NULL) == 0 &&
               attend_attention_workspace_size(NULL, N, T, S) == 0 &&
               attend_mha_workspace_size(NULL, N, T, S) == 0,
           "NULL config: sizes should be 0");
    attend_rng_seed(NULL, 1); /* must not crash */

    /* keys */
    EXPECT_FAIL(ATTEND_ERR_NULL, "config", NULL,
                attend_keys_forward(NULL, &p, out_a, in_a, N, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "parameters", NULL,
                attend_keys_forward(&gen, NULL, out_a, in_a, N, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "kp", NULL, attend_keys_forward(&gen, &p, NULL, in_a, N, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "k [", NULL,
                attend_keys_forward(&gen, &p, out_a, NULL, N, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "config", NULL,
                attend_keys_backward(NULL, &p, NULL, out_a, in_a, in_b, N, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "parameters", NULL,
                attend_keys_backward(&gen, NULL, NULL, out_a, in_a, in_b, N, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "dkp", NULL,
                attend_keys_backward(&gen, &p, NULL, out_a, NULL, in_b, N, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "k [", NULL,
                attend_keys_backward(&gen, &p, NULL, out_a, in_a, NULL, N, S, ERR));
    /* optional: dk and every gradient */
    EXPECT_OK(attend_keys_backward(&add, &p, NULL, NULL, in_a, in_b, N, S, ERR));
    /* parameters a kind needs */
    attend_score_params q = p;
    q.W = NULL;
    EXPECT_FAIL(ATTEND_ERR_NULL, "W [Dq,Dk]", NULL,
                attend_keys_forward(&gen, &q, out_a, in_a, N, S, ERR));
    EXPECT_OK(attend_keys_forward(&add, &q, out_a, in_a, N, S, ERR)); /* additive ignores W */
    q = p;
    q.Wq = NULL;
    EXPECT_FAIL(ATTEND_ERR_NULL, "Wq", NULL,
                attend_scores_forward(&add, &q, out_a, out_b, in_a, in_b, N, T, S, ERR));
    q = p;
    q.Wk = NULL;
    EXPECT_FAIL(ATTEND_ERR_NULL, "Wk", NULL, attend_keys_forward(&add, &q, out_a, in_a, N, S, ERR));
    q = p;
    q.v = NULL;
    EXPECT_FAIL(ATTEND_ERR_NULL, "v [A]", NULL,
                attend_scores_backward(&add, &q, NULL, out_a, out_b, in_a, out_c, in_b, in_c, N, T,
                                       S, ERR));
    q = p;
    q.b = NULL;
    EXPECT_FAIL(ATTEND_ERR_NULL, "b [A]", NULL,
                attend_keys_forward(&add, &q, out_a, in_a, N, S, ERR));
    attend_score_config add_nobias = score_cfg(ATTEND_SCORE_ADDITIVE, 3, 2, 4, 0);
    EXPECT_OK(attend_keys_forward(&add_nobias, &q, out_a, in_a, N, S, ERR));
    attend_score_params none = {0};
    EXPECT_OK(attend_keys_forward(&dot, &none, out_a, in_a, N, S, ERR)); /* dot needs none */

    /* scores */
    EXPECT_FAIL(ATTEND_ERR_NULL, "config", NULL,
                attend_scores_forward(NULL, &p, out_a, NULL, in_a, in_b, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "parameters", NULL,
                attend_scores_forward(&gen, NULL, out_a, NULL, in_a, in_b, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "scores", NULL,
                attend_scores_forward(&gen, &p, NULL, NULL, in_a, in_b, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "q [", NULL,
                attend_scores_forward(&gen, &p, out_a, NULL, NULL, in_b, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "kp", NULL,
                attend_scores_forward(&gen, &p, out_a, NULL, in_a, NULL, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "saved", NULL,
                attend_scores_forward(&add, &p, out_a, NULL, in_a, in_b, N, T, S, ERR));
    EXPECT_OK(attend_scores_forward(&gen, &p, out_a, NULL, in_a, in_b, N, T, S, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_NULL, "config", NULL,
        attend_scores_backward(NULL, &p, NULL, out_a, out_b, in_a, NULL, in_b, in_c, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "parameters", NULL,
                attend_scores_backward(&gen, NULL, NULL, out_a, out_b, in_a, NULL, in_b, in_c, N, T,
                                       S, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_NULL, "dscores", NULL,
        attend_scores_backward(&gen, &p, NULL, out_a, out_b, NULL, NULL, in_b, in_c, N, T, S, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_NULL, "q [", NULL,
        attend_scores_backward(&gen, &p, NULL, out_a, out_b, in_a, NULL, NULL, in_c, N, T, S, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_NULL, "kp", NULL,
        attend_scores_backward(&gen, &p, NULL, out_a, out_b, in_a, NULL, in_b, NULL, N, T, S, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_NULL, "saved", NULL,
        attend_scores_backward(&add, &p, NULL, out_a, out_b, in_a, NULL, in_b, in_c, N, T, S, ERR));
    EXPECT_OK(
        attend_scores_backward(&gen, &p, NULL, NULL, NULL, in_a, NULL, in_b, in_c, N, T, S, ERR));

    /* masked softmax, context */
    EXPECT_FAIL(ATTEND_ERR_NULL, "weights", NULL,
                attend_masked_softmax_forward(NULL, in_a, NULL, NULL, 0, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "scores", NULL,
                attend_masked_softmax_forward(out_a, NULL, NULL, NULL, 0, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "dscores", NULL,
                attend_masked_softmax_backward(NULL, in_a, in_b, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "dweights", NULL,
                attend_masked_softmax_backward(out_a, NULL, in_b, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "weights", NULL,
                attend_masked_softmax_backward(out_a, in_a, NULL, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "ctx", NULL,
                attend_context_forward(NULL, in_a, in_b, N, T, S, Dv, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "weights", NULL,
                attend_context_forward(out_a, NULL, in_b, N, T, S, Dv, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "v [", NULL,
                attend_context_forward(out_a, in_a, NULL, N, T, S, Dv, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "dctx", NULL,
                attend_context_backward(out_a, out_b, NULL, in_b, in_c, N, T, S, Dv, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "weights", NULL,
                attend_context_backward(out_a, out_b, in_a, NULL, in_c, N, T, S, Dv, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "v [", NULL,
                attend_context_backward(out_a, out_b, in_a, in_b, NULL, N, T, S, Dv, ERR));
    EXPECT_OK(attend_context_backward(NULL, NULL, in_a, in_b, in_c, N, T, S, Dv, ERR));

    /* one-shot attention */
    attend_score_config *cfgs[2] = {&gen, &add};
    for (int i = 0; i < 2; i++) {
        attend_score_config *c = cfgs[i];
        EXPECT_FAIL(ATTEND_ERR_NULL, "config", NULL,
                    attend_attention_forward(NULL, &p, out_a, out_b, in_a, in_b, in_c, NULL, NULL,
                                             0, N, T, S, Dv, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, "parameters", NULL,
                    attend_attention_forward(c, NULL, out_a, out_b, in_a, in_b, in_c, NULL, NULL, 0,
                                             N, T, S, Dv, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, "ctx", NULL,
                    attend_attention_forward(c, &p, NULL, out_b, in_a, in_b, in_c, NULL, NULL, 0, N,
                                             T, S, Dv, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, "weights", NULL,
                    attend_attention_forward(c, &p, out_a, NULL, in_a, in_b, in_c, NULL, NULL, 0, N,
                                             T, S, Dv, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, "q [", NULL,
                    attend_attention_forward(c, &p, out_a, out_b, NULL, in_b, in_c, NULL, NULL, 0,
                                             N, T, S, Dv, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, "k [", NULL,
                    attend_attention_forward(c, &p, out_a, out_b, in_a, NULL, in_c, NULL, NULL, 0,
                                             N, T, S, Dv, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, "v [", NULL,
                    attend_attention_forward(c, &p, out_a, out_b, in_a, in_b, NULL, NULL, NULL, 0,
                                             N, T, S, Dv, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, "workspace", NULL,
                    attend_attention_forward(c, &p, out_a, out_b, in_a, in_b, in_c, NULL, NULL, 0,
                                             N, T, S, Dv, NULL, BUF, ERR));
        /* backward: forward first so the workspace is meaningful */
        EXPECT_OK(attend_attention_forward(c, &p, out_a, out_b, in_a, in_b, in_c, NULL, NULL, 0, N,
                                           T, S, Dv, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, "config", NULL,
                    attend_attention_backward(NULL, &p, NULL, NULL, NULL, NULL, in_d, NULL, out_b,
                                              in_a, in_b, in_c, N, T, S, Dv, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, "parameters", NULL,
                    attend_attention_backward(c, NULL, NULL, NULL, NULL, NULL, in_d, NULL, out_b,
                                              in_a, in_b, in_c, N, T, S, Dv, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, "dctx", NULL,
                    attend_attention_backward(c, &p, NULL, NULL, NULL, NULL, NULL, NULL, out_b,
                                              in_a, in_b, in_c, N, T, S, Dv, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, "weights", NULL,
                    attend_attention_backward(c, &p, NULL, NULL, NULL, NULL, in_d, NULL, NULL, in_a,
                                              in_b, in_c, N, T, S, Dv, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, "q [", NULL,
                    attend_attention_backward(c, &p, NULL, NULL, NULL, NULL, in_d, NULL, out_b,
                                              NULL, in_b, in_c, N, T, S, Dv, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, "k [", NULL,
                    attend_attention_backward(c, &p, NULL, NULL, NULL, NULL, in_d, NULL, out_b,
                                              in_a, NULL, in_c, N, T, S, Dv, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, "v [", NULL,
                    attend_attention_backward(c, &p, NULL, NULL, NULL, NULL, in_d, NULL, out_b,
                                              in_a, in_b, NULL, N, T, S, Dv, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, "workspace", NULL,
                    attend_attention_backward(c, &p, NULL, NULL, NULL, NULL, in_d, NULL, out_b,
                                              in_a, in_b, in_c, N, T, S, Dv, NULL, BUF, ERR));
        /* every gradient optional */
        EXPECT_OK(attend_attention_backward(c, &p, NULL, NULL, NULL, NULL, in_d, NULL, out_b, in_a,
                                            in_b, in_c, N, T, S, Dv, ws, BUF, ERR));
    }

    /* multi-head */
    attend_mha_config m = mha_cfg(4, 2, 3, 5, 1);
    attend_mha_params mp = mha_params();
    EXPECT_FAIL(ATTEND_ERR_NULL, "NULL", NULL, attend_mha_config_check(NULL, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "NULL", NULL,
                attend_mha_forward(NULL, &mp, out_a, NULL, 0, in_a, in_b, in_c, NULL, NULL, 0, N, T,
                                   S, ws, BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "parameters", NULL,
                attend_mha_forward(&m, NULL, out_a, NULL, 0, in_a, in_b, in_c, NULL, NULL, 0, N, T,
                                   S, ws, BUF, ERR));
    const char *pname[8] = {"Wq", "Wk", "Wv", "bq", "bk", "bv", "Wo", "bo"};
    for (int i = 0; i < 8; i++) {
        attend_mha_params mq = mp;
        const attend_real **slot[8] = {&mq.Wq, &mq.Wk, &mq.Wv, &mq.bq,
                                       &mq.bk, &mq.bv, &mq.Wo, &mq.bo};
        *slot[i] = NULL;
        EXPECT_FAIL(ATTEND_ERR_NULL, pname[i], NULL,
                    attend_mha_forward(&m, &mq, out_a, NULL, 0, in_a, in_b, in_c, NULL, NULL, 0, N,
                                       T, S, ws, BUF, ERR));
        EXPECT_FAIL(ATTEND_ERR_NULL, pname[i], NULL,
                    attend_mha_backward(&m, &mq, NULL, NULL, NULL, NULL, in_d, in_a, in_b, in_c, N,
                                        T, S, ws, BUF, ERR));
    }
    attend_mha_params nobias = {in_d, in_d, in_d, NULL, NULL, NULL, in_d, NULL};
    attend_mha_config m0 = mha_cfg(4, 2, 3, 5, 0);
    EXPECT_OK(attend_mha_forward(&m0, &nobias, out_a, NULL, 0, in_a, in_b, in_c, NULL, NULL, 0, N,
                                 T, S, ws, BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "out", NULL,
                attend_mha_forward(&m, &mp, NULL, out_b, 0, in_a, in_b, in_c, NULL, NULL, 0, N, T,
                                   S, ws, BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "q [", NULL,
                attend_mha_forward(&m, &mp, out_a, out_b, 0, NULL, in_b, in_c, NULL, NULL, 0, N, T,
                                   S, ws, BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "k [", NULL,
                attend_mha_forward(&m, &mp, out_a, out_b, 0, in_a, NULL, in_c, NULL, NULL, 0, N, T,
                                   S, ws, BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "v [", NULL,
                attend_mha_forward(&m, &mp, out_a, out_b, 0, in_a, in_b, NULL, NULL, NULL, 0, N, T,
                                   S, ws, BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "workspace", NULL,
                attend_mha_forward(&m, &mp, out_a, out_b, 0, in_a, in_b, in_c, NULL, NULL, 0, N, T,
                                   S, NULL, BUF, ERR));
    EXPECT_OK(attend_mha_forward(&m, &mp, out_a, NULL, 0, in_a, in_b, in_c, NULL, NULL, 0, N, T, S,
                                 ws, BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "NULL", NULL,
                attend_mha_backward(NULL, &mp, NULL, NULL, NULL, NULL, in_d, in_a, in_b, in_c, N, T,
                                    S, ws, BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "parameters", NULL,
                attend_mha_backward(&m, NULL, NULL, NULL, NULL, NULL, in_d, in_a, in_b, in_c, N, T,
                                    S, ws, BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "dout", NULL,
                attend_mha_backward(&m, &mp, NULL, NULL, NULL, NULL, NULL, in_a, in_b, in_c, N, T,
                                    S, ws, BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "q [", NULL,
                attend_mha_backward(&m, &mp, NULL, NULL, NULL, NULL, in_d, NULL, in_b, in_c, N, T,
                                    S, ws, BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "k [", NULL,
                attend_mha_backward(&m, &mp, NULL, NULL, NULL, NULL, in_d, in_a, NULL, in_c, N, T,
                                    S, ws, BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "v [", NULL,
                attend_mha_backward(&m, &mp, NULL, NULL, NULL, NULL, in_d, in_a, in_b, NULL, N, T,
                                    S, ws, BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "workspace", NULL,
                attend_mha_backward(&m, &mp, NULL, NULL, NULL, NULL, in_d, in_a, in_b, in_c, N, T,
                                    S, NULL, BUF, ERR));
    EXPECT_OK(attend_mha_backward(&m, &mp, NULL, NULL, NULL, NULL, in_d, in_a, in_b, in_c, N, T, S,
                                  ws, BUF, ERR));

    /* self-attention (x reaches attend_mha_forward as q) */
    attend_mha_config ms = mha_cfg(4, 2, 0, 0, 1);
    EXPECT_FAIL(ATTEND_ERR_NULL, "NULL", NULL,
                attend_self_attention_forward(NULL, &mp, out_a, NULL, 0, in_a, NULL, 0, N, T, ws,
                                              BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "parameters", NULL,
                attend_self_attention_forward(&ms, NULL, out_a, NULL, 0, in_a, NULL, 0, N, T, ws,
                                              BUF, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_NULL, "out", NULL,
        attend_self_attention_forward(&ms, &mp, NULL, NULL, 0, in_a, NULL, 0, N, T, ws, BUF, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_NULL, "is NULL", NULL,
        attend_self_attention_forward(&ms, &mp, out_a, NULL, 0, NULL, NULL, 0, N, T, ws, BUF, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "workspace", NULL,
                attend_self_attention_forward(&ms, &mp, out_a, NULL, 0, in_a, NULL, 0, N, T, NULL,
                                              BUF, ERR));
    EXPECT_OK(
        attend_self_attention_forward(&ms, &mp, out_a, NULL, 0, in_a, NULL, 0, N, T, ws, BUF, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_NULL, "NULL", NULL,
        attend_self_attention_backward(NULL, &mp, NULL, out_a, in_d, in_a, N, T, ws, BUF, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_NULL, "parameters", NULL,
        attend_self_attention_backward(&ms, NULL, NULL, out_a, in_d, in_a, N, T, ws, BUF, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_NULL, "dout", NULL,
        attend_self_attention_backward(&ms, &mp, NULL, out_a, NULL, in_a, N, T, ws, BUF, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_NULL, "is NULL", NULL,
        attend_self_attention_backward(&ms, &mp, NULL, out_a, in_d, NULL, N, T, ws, BUF, ERR));
    EXPECT_FAIL(
        ATTEND_ERR_NULL, "workspace", NULL,
        attend_self_attention_backward(&ms, &mp, NULL, out_a, in_d, in_a, N, T, NULL, BUF, ERR));

    /* hard attention */
    attend_rng rng;
    attend_rng_seed(&rng, 3);
    float w[2 * 3 * 4];
    fill(w, 24, 0.25f);
    for (int i = 0; i < N * T; i++) idx_buf[i] = i % S;
    EXPECT_FAIL(ATTEND_ERR_NULL, "idx", NULL, attend_hard_argmax(NULL, w, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "weights", NULL, attend_hard_argmax(idx_buf, NULL, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "idx", NULL, attend_hard_sample(NULL, w, &rng, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "weights", NULL,
                attend_hard_sample(idx_buf, NULL, &rng, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "rng", NULL, attend_hard_sample(idx_buf, w, NULL, N, T, S, ERR));
    for (int i = 0; i < N * T; i++) idx_buf[i] = i % S;
    EXPECT_FAIL(ATTEND_ERR_NULL, "ctx", NULL,
                attend_hard_context_forward(NULL, idx_buf, in_a, N, T, S, Dv, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "idx", NULL,
                attend_hard_context_forward(out_a, NULL, in_a, N, T, S, Dv, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "v [", NULL,
                attend_hard_context_forward(out_a, idx_buf, NULL, N, T, S, Dv, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "dv", NULL,
                attend_hard_context_backward(NULL, in_a, idx_buf, N, T, S, Dv, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "dctx", NULL,
                attend_hard_context_backward(out_a, NULL, idx_buf, N, T, S, Dv, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "idx", NULL,
                attend_hard_context_backward(out_a, in_a, NULL, N, T, S, Dv, ERR));

    /* pointer */
    float logp[2 * 3 * 4];
    int32_t targets[6] = {0, 1, 2, 3, -1, 0};
    double loss;
    EXPECT_FAIL(ATTEND_ERR_NULL, "logp", NULL,
                attend_pointer_logprobs_forward(NULL, in_a, NULL, NULL, 0, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "scores", NULL,
                attend_pointer_logprobs_forward(logp, NULL, NULL, NULL, 0, N, T, S, ERR));
    EXPECT_OK(attend_pointer_logprobs_forward(logp, in_a, NULL, NULL, 0, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "loss", NULL,
                attend_pointer_nll_forward(NULL, NULL, logp, targets, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "logp", NULL,
                attend_pointer_nll_forward(&loss, NULL, NULL, targets, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "targets", NULL,
                attend_pointer_nll_forward(&loss, NULL, logp, NULL, N, T, S, ERR));
    EXPECT_OK(attend_pointer_nll_forward(&loss, NULL, logp, targets, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "dscores", NULL,
                attend_pointer_nll_backward(NULL, logp, targets, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "logp", NULL,
                attend_pointer_nll_backward(out_a, NULL, targets, N, T, S, ERR));
    EXPECT_FAIL(ATTEND_ERR_NULL, "targets", NULL,
                attend_pointer_nll_backward(out_a, logp, NULL, N, T, S, ERR));
}

/* -------------------------------------- masked rows and non-finite scores */

/* Output buffers hold the sentinel: nothing may have been written. */
static void expect_untouched(const char *what, const float *x, size_t n) {
    EXPECT(all_equal(x, n, SENTINEL), "%s: output was written before the error was found", what);
}

static void test_masked_rows(void) {
    enum { N = 2, T = 3, S = 4, Dv = 2 };
    float scores[N * T * S];
    for (int i = 0; i < N * T * S; i++) scores[i] = 0.1f * (float)(i % 5);

    /* key padding: batch row n=1 has no valid position → first bad row (n=1, t=0) */
    uint8_t valid[N * S] = {1, 0, 1, 1, 0, 0, 0, 0};
    fill(out_a, BUF, SENTINEL);
    EXPECT_FAIL(ATTEND_ERR_MASKED_ROW, "n=1, t=0", "masked",
                attend_masked_softmax_forward(out_a, scores, valid, NULL, 0, N, T, S, ERR));
    expect_untouched("softmax, key padding", out_a, N * T * S);
    EXPECT_FAIL(ATTEND_ERR_MASKED_ROW, "n=1, t=0", "masked",
                attend_pointer_logprobs_forward(out_a, scores, valid, NULL, 0, N, T, S, ERR));
    expect_untouched("pointer logprobs, key padding", out_a, N * T * S);

    /* attention mask: query t=2 may attend to nothing → (n=0, t=2) */
    uint8_t allowed[T * S] = {1, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0};
    fill(out_a, BUF, SENTINEL);
    EXPECT_FAIL(ATTEND_ERR_MASKED_ROW, "n=0, t=2", NULL,
                attend_masked_softmax_forward(out_a, scores, NULL, allowed, 0, N, T, S, ERR));
    expect_untouched("softmax, attention mask", out_a, N * T * S);

    /* causal, with an attention mask removing position 0: row t=0 is empty → (n=0, t=0) */
    uint8_t allowed2[T * S] = {0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1};
    fill(out_a, BUF, SENTINEL);
    EXPECT_FAIL(ATTEND_ERR_MASKED_ROW, "n=0, t=0", "causal",
                attend_masked_softmax_forward(out_a, scores, NULL, allowed2, 1, N, T, S, ERR));
    expect_untouched("softmax, causal + attention mask", out_a, N * T * S);
    /* the same masks without causal are fine */
    EXPECT_OK(attend_masked_softmax_forward(out_a, scores, NULL, allowed2, 0, N, T, S, ERR));

    /* one-shot attention, every kind: neither ctx nor weights written */
    attend_score_params p = score_params();
    attend_score_config kinds[4] = {
        score_cfg(ATTEND_SCORE_DOT, 3, 3, 0, 0), score_cfg(ATTEND_SCORE_SCALED_DOT, 3, 3, 0, 0),
        score_cfg(ATTEND_SCORE_GENERAL, 3, 2, 0, 0), score_cfg(ATTEND_SCORE_ADDITIVE, 3, 2, 4, 1)};
    for (int i = 0; i < 4; i++) {
        fill(out_a, BUF, SENTINEL);
        fill(out_b, BUF, SENTINEL);
        EXPECT_FAIL(ATTEND_ERR_MASKED_ROW, "n=1, t=0", NULL,
                    attend_attention_forward(&kinds[i], &p, out_a, out_b, in_a, in_b, in_c, valid,
                                             NULL, 0, N, T, S, Dv, ws, BUF, ERR));
        expect_untouched("attention ctx, key padding", out_a, BUF);
        expect_untouched("attention weights, key padding", out_b, BUF);
        EXPECT_FAIL(ATTEND_ERR_MASKED_ROW, "n=0, t=0", NULL,
                    attend_attention_forward(&kinds[i], &p, out_a, out_b, in_a, in_b, in_c, NULL,
                                             allowed2, 1, N, T, S, Dv, ws, BUF, ERR));
        expect_untouched("attention ctx, causal", out_a, BUF);
        expect_untouched("attention weights, causal", out_b, BUF);
    }

    /* multi-head: the row is named by batch index n (not the head group) */
    attend_mha_config m = mha_cfg(4, 2, 3, 5, 1);
    attend_mha_params mp = mha_params();
    fill(out_a, BUF, SENTINEL);
    fill(out_b, BUF, SENTINEL);
    EXPECT_FAIL(ATTEND_ERR_MASKED_ROW, "n=1, t=0", NULL,
                attend_mha_forward(&m, &mp, out_a, out_b, 0, in_a, in_b, in_c, valid, NULL, 0, N, T,
                                   S, ws, BUF, ERR));
    expect_untouched("mha out, key padding", out_a, BUF);
    expect_untouched("mha weights, key padding", out_b, BUF);
    EXPECT_FAIL(ATTEND_ERR_MASKED_ROW, "n=0, t=2", NULL,
                attend_mha_forward(&m, &mp, out_a, out_b, 1, in_a, in_b, in_c, NULL, allowed, 0, N,
                                   T, S, ws, BUF, ERR));
    expect_untouched("mha out, attention mask", out_a, BUF);
    expect_untouched("mha weights, attention mask", out_b, BUF);
    /* self-attention, causal with padding of position 0 in sequence n=1 */
    attend_mha_config ms = mha_cfg(4, 2, 0, 0, 0);
    uint8_t svalid[N * T] = {1, 1, 1, 0, 1, 1};
    EXPECT_FAIL(ATTEND_ERR_MASKED_ROW, "n=1, t=0", NULL,
                attend_self_attention_forward(&ms, &mp, out_a, out_b, 0, in_a, svalid, 1, N, T, ws,
                                              BUF, ERR));
    expect_untouched("self-attention out", out_a, BUF);
    expect_untouched("self-attention weights", out_b, BUF);
}

static void test_nonfinite(void) {
    enum { N = 2, T = 3, S = 4, Dv = 2 };
    float bad[] = {NAN, INFINITY, -INFINITY};
    const char *bad_text[] = {"nan", "inf", "-inf"};
    for (int b = 0; b < 3; b++) {
        float scores[N * T * S];
        for (int i = 0; i < N * T * S; i++) scores[i] = 0.1f * (float)(i % 5);
        scores[(1 * T + 2) * S + 3] = bad[b]; /* row (n=1, t=2), position 3 */
        fill(out_a, BUF, SENTINEL);
        EXPECT_FAIL(ATTEND_ERR_NONFINITE, "n=1, t=2", bad_text[b],
                    attend_masked_softmax_forward(out_a, scores, NULL, NULL, 0, N, T, S, ERR));
        expect_untouched("softmax, non-finite score", out_a, N * T * S);
        EXPECT_FAIL(ATTEND_ERR_NONFINITE, "n=1, t=2", "position 3",
                    attend_pointer_logprobs_forward(out_a, scores, NULL, NULL, 0, N, T, S, ERR));
        expect_untouched("pointer logprobs, non-finite score", out_a, N * T * S);
        /* a non-finite score at an excluded position is ignored */
        uint8_t valid[N * S] = {1, 1, 1, 1, 1, 1, 1, 0};
        EXPECT_OK(attend_masked_softmax_forward(out_a, scores, valid, NULL, 0, N, T, S, ERR));
        EXPECT(out_a[(1 * T + 2) * S + 3] == 0 && isfinite(out_a[(1 * T + 2) * S + 0]),
               "masked non-finite score: weight %g", out_a[(1 * T + 2) * S + 3]);
        EXPECT_OK(attend_pointer_logprobs_forward(out_a, scores, valid, NULL, 0, N, T, S, ERR));
        EXPECT(isinf(out_a[(1 * T + 2) * S + 3]) && out_a[(1 * T + 2) * S + 3] < 0,
               "masked non-finite score: logp %g", out_a[(1 * T + 2) * S + 3]);
    }

    /* attention and multi-head with a NaN / Inf in q: the scores are non-finite */
    attend_score_params p = score_params();
    attend_score_config kinds[4] = {
        score_cfg(ATTEND_SCORE_DOT, 3, 3, 0, 0), score_cfg(ATTEND_SCORE_SCALED_DOT, 3, 3, 0, 0),
        score_cfg(ATTEND_SCORE_GENERAL, 3, 2, 0, 0), score_cfg(ATTEND_SCORE_ADDITIVE, 3, 2, 4, 1)};
    static float q[BUF];
    memcpy(q, in_a, sizeof q);
    q[(0 * T + 1) * 3 + 2] = NAN; /* row (n=0, t=1) */
    for (int i = 0; i < 4; i++) {
        fill(out_a, BUF, SENTINEL);
        fill(out_b, BUF, SENTINEL);
        EXPECT_FAIL(ATTEND_ERR_NONFINITE, "n=0, t=1", NULL,
                    attend_attention_forward(&kinds[i], &p, out_a, out_b, q, in_b, in_c, NULL, NULL,
                                             0, N, T, S, Dv, ws, BUF, ERR));
        expect_untouched("attention ctx, NaN query", out_a, BUF);
        expect_untouched("attention weights, NaN query", out_b, BUF);
    }
    /* scores that overflow float (|q|,|k| ~ 1e20: q·k ~ 1e40) are reported, not NaN weights */
    static float big_q[BUF], big_k[BUF];
    for (int i = 0; i < BUF; i++) {
        big_q[i] = 1e20f;
        big_k[i] = (i % 2 ? 1e20f : 2e20f);
    }
    fill(out_a, BUF, SENTINEL);
    fill(out_b, BUF, SENTINEL);
    EXPECT_FAIL(ATTEND_ERR_NONFINITE, "n=0, t=0", "inf",
                attend_attention_forward(&kinds[0], &p, out_a, out_b, big_q, big_k, in_c, NULL,
                                         NULL, 0, N, T, S, Dv, ws, BUF, ERR));
    expect_untouched("attention ctx, overflowing scores", out_a, BUF);
    expect_untouched("attention weights, overflowing scores", out_b, BUF);

    attend_mha_config m = mha_cfg(4, 2, 3, 5, 1);
    attend_mha_params mp = mha_params();
    memcpy(q, in_a, sizeof q);
    q[(1 * T + 0) * 4 + 1] = INFINITY; /* query row (n=1, t=0) */
    fill(out_a, BUF, SENTINEL);
    fill(out_b, BUF, SENTINEL);
    EXPECT_FAIL(ATTEND_ERR_NONFINITE, "n=1, t=0", NULL,
                attend_mha_forward(&m, &mp, out_a, out_b, 0, q, in_b, in_c, NULL, NULL, 0, N, T, S,
                                   ws, BUF, ERR));
    expect_untouched("mha out, Inf query", out_a, BUF);
    expect_untouched("mha weights, Inf query", out_b, BUF);
    attend_mha_config ms = mha_cfg(4, 2, 0, 0, 0);
    fill(out_a, BUF, SENTINEL);
    EXPECT_FAIL(
        ATTEND_ERR_NONFINITE, "n=1, t=0", NULL,
        attend_self_attention_forward(&ms, &mp, out_a, NULL, 1, q, NULL, 0, N, T, ws, BUF, ERR));
    expect_untouched("self-attention out, Inf input", out_a, BUF);
}

/* ------------------------------------------------- numerical robustness */

/* weights of row r: finite, exactly 0 where excluded, summing to 1 (float) */
static void check_rows(const char *what, const float *w, const uint8_t *excluded, int rows, int S) {
    for (int r = 0; r < rows; r++) {
        double sum = 0;
        int ok = 1;
        for (int j = 0; j < S; j++) {
            float x = w[r * S + j];
            if (!isfinite(x) || x < 0 || x > 1) ok = 0;
            if (excluded && excluded[r * S + j] && x != 0) ok = 0;
            sum += x;
        }
        EXPECT(ok && fabs(sum - 1) <= 1e-6,
               "%s row %d: sum %.9g (or a weight out of [0,1] / masked nonzero)", what, r, sum);
    }
}

static void test_softmax_extremes(void) {
    /* each row of S = 6: huge, tiny, mixed magnitudes */
    enum { R = 8, S = 6 };
    /* clang-format off */
    const float scores[R * S] = {
        1e4f,    -1e4f,  1e4f,     0,        -1e4f,    5e3f,
        1e30f,   -1e30f, 1e30f,    1e-30f,   -1e30f,   0,
        -1e30f,  -1e30f, -1e30f,   -1e30f,   -1e30f,   -1e30f,
        FLT_MAX, -FLT_MAX, 0,      1e-38f,   -1e-45f,  FLT_MAX,
        -FLT_MAX, -FLT_MAX, -FLT_MAX, -FLT_MAX, -FLT_MAX, -FLT_MAX,
        1e-30f,  1e-35f, -1e-30f,  1e30f,    1e-20f,   -3e38f,
        88.0f,   89.0f,  -88.0f,   104.0f,   -104.0f,  0,
        1e4f,    1e4f + 1, 1e4f + 2, 1e4f + 3, 1e4f + 4, 1e4f + 5,
    };
    /* clang-format on */
    float w[R * S];
    attend_error err;
    /* no mask: T = R rows of one batch */
    EXPECT(attend_masked_softmax_forward(w, scores, NULL, NULL, 0, 1, R, S, &err) == ATTEND_OK,
           "%s", err.msg);
    check_rows("extreme scores", w, NULL, R, S);
    /* exact expectations where the answer is clear */
    EXPECT(w[0] == 0.5f && w[2] == 0.5f && w[1] == 0 && w[5] == 0, "1e4 row: %g %g %g %g", w[0],
           w[2], w[1], w[5]);
    EXPECT(w[6] == 0.5f && w[8] == 0.5f && w[9] == 0, "1e30 row: %g %g %g", w[6], w[8], w[9]);
    for (int j = 0; j < S; j++)
        EXPECT(fabsf(w[2 * S + j] - 1.0f / 6) <= 1e-7f && w[4 * S + j] == w[4 * S], "uniform rows");
    /* consecutive integers at 1e4: ratios e^-1 */
    for (int j = 1; j < S; j++)
        EXPECT_NEAR("1e4+j row ratio", (double)w[7 * S + j - 1] / w[7 * S + j], exp(-1.0), 1e-5);

    /* key padding + attention mask + causal over the same rows, T = R */
    uint8_t valid[S] = {1, 0, 1, 1, 0, 1};
    uint8_t allowed[R * S];
    for (int i = 0; i < R * S; i++) allowed[i] = (i * 7) % 5 != 0;
    allowed[0] = 1; /* row 0 keeps position 0 (causal: only j = 0) */
    uint8_t excluded[R * S];
    for (int t = 0; t < R; t++)
        for (int j = 0; j < S; j++)
            excluded[t * S + j] = !(valid[j] && allowed[t * S + j] && j <= t);
    /* make sure no row is empty */
    for (int t = 0; t < R; t++) {
        int any = 0;
        for (int j = 0; j < S; j++) any |= !excluded[t * S + j];
        if (!any) allowed[t * S] = 1, excluded[t * S] = 0;
    }
    EXPECT(attend_masked_softmax_forward(w, scores, valid, allowed, 1, 1, R, S, &err) == ATTEND_OK,
           "%s", err.msg);
    check_rows("extreme scores, masked", w, excluded, R, S);

    /* the same through the pointer log-probabilities: finite where included, -inf elsewhere */
    float lp[R * S];
    EXPECT(attend_pointer_logprobs_forward(lp, scores, valid, allowed, 1, 1, R, S, &err) ==
               ATTEND_OK,
           "%s", err.msg);
    for (int r = 0; r < R; r++) {
        double sum = 0;
        for (int j = 0; j < S; j++) {
            float x = lp[r * S + j];
            if (excluded[r * S + j])
                EXPECT(isinf(x) && x < 0, "logp row %d pos %d: %g, want -inf", r, j, x);
            else {
                EXPECT(isfinite(x) && x <= 0, "logp row %d pos %d: %g", r, j, x);
                sum += exp(x);
            }
        }
        EXPECT_NEAR("pointer logp: sum of exp over a row", sum, 1.0, 1e-6);
    }
}

static void test_attention_large_inputs(void) {
    enum { N = 2, T = 3, S = 4, D = 3, Dv = 2 };
    attend_score_config kinds[5] = {
        score_cfg(ATTEND_SCORE_DOT, D, D, 0, 0), score_cfg(ATTEND_SCORE_SCALED_DOT, D, D, 0, 0),
        score_cfg(ATTEND_SCORE_GENERAL, D, D, 0, 0), score_cfg(ATTEND_SCORE_ADDITIVE, D, D, 4, 1),
        score_cfg(ATTEND_SCORE_ADDITIVE, D, D, 4, 0)};
    static float q[N * T * D], k[N * S * D], W[D * D], a_par[4 * D];
    for (int i = 0; i < D * D; i++) W[i] = 0.3f * (float)((i % 3) - 1);
    for (int i = 0; i < 4 * D; i++) a_par[i] = 0.2f * (float)((i % 5) - 2);
    attend_score_params p = {W, a_par, a_par, a_par, a_par};
    uint8_t valid[N * S] = {1, 1, 0, 1, 1, 0, 1, 1}; /* position 0 kept for causal */
    double mags[] = {1e2, 1e4, 1e8, 1e12};
    for (size_t mi = 0; mi < sizeof mags / sizeof *mags; mi++) {
        for (int i = 0; i < N * T * D; i++) q[i] = (float)(mags[mi] * (((i * 7) % 5) - 2) / 2.0);
        for (int i = 0; i < N * S * D; i++) k[i] = (float)(mags[mi] * (((i * 3) % 7) - 3) / 3.0);
        for (int ki = 0; ki < 5; ki++) {
            attend_error err;
            size_t need = attend_attention_workspace_size(&kinds[ki], N, T, S);
            attend_status st =
                attend_attention_forward(&kinds[ki], &p, out_a, out_b, q, k, in_c, valid, NULL,
                                         ki == 1, N, T, S, Dv, ws, need, &err);
            EXPECT(st == ATTEND_OK, "|q|,|k| ~ %g kind %d: %s", mags[mi], ki, err.msg);
            if (st != ATTEND_OK) continue;
            uint8_t excluded[N * T * S];
            for (int n = 0; n < N; n++)
                for (int t = 0; t < T; t++)
                    for (int j = 0; j < S; j++)
                        excluded[(n * T + t) * S + j] = !valid[n * S + j] || (ki == 1 && j > t);
            char what[64];
            snprintf(what, sizeof what, "attention |q|,|k|~%g kind %d", mags[mi], ki);
            check_rows(what, out_b, excluded, N * T, S);
            int finite = 1;
            for (int i = 0; i < N * T * Dv; i++) finite &= isfinite(out_a[i]) != 0;
            EXPECT(finite, "%s: ctx not finite", what);
        }
    }
    /* multi-head with large inputs */
    attend_mha_config m = mha_cfg(4, 2, 0, 0, 1);
    static float mq[N * T * 4], mk[N * S * 4];
    for (int i = 0; i < N * T * 4; i++) mq[i] = 1e6f * (float)((i % 3) - 1);
    for (int i = 0; i < N * S * 4; i++) mk[i] = 1e6f * (float)((i % 5) - 2);
    attend_mha_params mp = mha_params();
    attend_error err;
    attend_status st = attend_mha_forward(&m, &mp, out_a, out_b, 0, mq, mk, mk, valid, NULL, 0, N,
                                          T, S, ws, BUF, &err);
    EXPECT(st == ATTEND_OK, "mha large inputs: %s", err.msg);
    if (st == ATTEND_OK) {
        int finite = 1;
        for (int i = 0; i < N * T * 4; i++) finite &= isfinite(out_a[i]) != 0;
        EXPECT(finite, "mha large inputs: out not finite");
        uint8_t excluded[N * 2 * T * S];
        for (int n = 0; n < N; n++)
            for (int h = 0; h < 2; h++)
                for (int t = 0; t < T; t++)
                    for (int j = 0; j < S; j++)
                        excluded[((n * 2 + h) * T + t) * S + j] = !valid[n * S + j];
        check_rows("mha large inputs, per-head weights", out_b, excluded, N * 2 * T, S);
    }
}

int main(void) {
    fill_inputs();
    RUN(test_status_names);
    RUN(test_shape_errors);
    RUN(test_arg_errors);
    RUN(test_capacity);
    RUN(test_null_pointers);
    RUN(test_masked_rows);
    RUN(test_nonfinite);
    RUN(test_softmax_extremes);
    RUN(test_attention_large_inputs);
    return harness_summary();
}
