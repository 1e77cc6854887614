/*
 * test_dropout_ref.c — dropout and label smoothing (issue 14) against
 * PyTorch: the models and the batch of test_model_ref.c
 * (tests/ref/model_<name>.safetensors / .txt) with, from
 *     /usr/bin/python3 tools/make_dropout_ref.py
 * tests/ref/dropout_<name>.txt: the loss and every parameter's gradient with
 * label smoothing 0.1 alone (F.cross_entropy(label_smoothing=0.1); pointer:
 * spread over the positions a step may choose), and with dropout 0.3 (key
 * 12345, the masks of src/seq2seq/dropout.c recomputed in the script from the
 * same hash and multiplied in at the same sites) plus smoothing 0.1.
 * Tolerances as test_model_ref.c: |ours − torch| <= 1e-5 + 1e-4·|torch|.
 */
#include <stdlib.h>

#include "harness.h"
#include "ref_reader.h"
#include "attend.h"

#define ATOL 1e-5
#define RTOL 1e-4

static void copy_ids(int32_t *dst, const ref_tensor *t) {
    for (size_t i = 0; i < t->n; i++) dst[i] = (int32_t)t->v[i];
}

static void run_case(const char *name, attend_model *m, const attend_batch *b, const ref_file *r, const char *c) {
    char key[128], what[200];
    attend_error err;
    snprintf(key, sizeof key, "%s.p", c);
    const ref_tensor *tp = ref_get(r, key, 1, NULL);
    snprintf(key, sizeof key, "%s.label_smoothing", c);
    const ref_tensor *tls = ref_get(r, key, 1, NULL);
    snprintf(key, sizeof key, "%s.key", c);
    const ref_tensor *tk = ref_get(r, key, 1, NULL);
    snprintf(key, sizeof key, "%s.loss", c);
    const ref_tensor *tl = ref_get(r, key, 1, NULL);
    if (!tp || !tls || !tk || !tl) return;
    EXPECT(attend_model_set_dropout(m, tp->v[0], (uint64_t)tk->v[0], &err) == ATTEND_OK, "%s", err.msg);
    EXPECT(attend_model_set_label_smoothing(m, tls->v[0], &err) == ATTEND_OK, "%s", err.msg);
    attend_tf_stats st;
    attend_model_zero_grad(m);
    attend_status s = attend_model_forward(m, b, &st, &err);
    EXPECT(s == ATTEND_OK, "%s %s: %s", name, c, err.msg);
    if (s == ATTEND_OK) s = attend_model_backward(m, &err);
    EXPECT(s == ATTEND_OK, "%s %s: %s", name, c, err.msg);
    if (s != ATTEND_OK) return;
    snprintf(what, sizeof what, "%s %s (p %g, ls %g) loss", name, c, tp->v[0], tls->v[0]);
    EXPECT_CLOSE(what, &st.loss, tl->v, 1, ATOL, RTOL);
    snprintf(what, sizeof what, "%s %s gradients", name, c);
    double worst = 0;
    int bad = 0;
    for (int i = 0; i < attend_model_tensor_count(m); i++) {
        attend_model_tensor mt;
        attend_model_tensor_get(m, i, &mt, NULL);
        snprintf(key, sizeof key, "%s.grad.%s", c, mt.name);
        const ref_tensor *g = ref_get(r, key, mt.ndim, NULL);
        EXPECT(g && g->n == mt.numel, "%s: %s missing or of another size", name, key);
        if (!g || g->n != mt.numel) continue;
        for (size_t k = 0; k < g->n; k++) {
            double d = fabs((double)mt.grad[k] - g->v[k]);
            if (d > worst) worst = d;
            if (!(d <= ATOL + RTOL * fabs(g->v[k]))) {
                if (!bad++) fprintf(stderr, "  %s %s: %s[%zu] = %.9g, torch %.9g\n", name, c, mt.name, k, (double)mt.grad[k], g->v[k]);
            }
        }
    }
    printf("  %-48s worst |diff| %.3e over every gradient%s\n", what, worst, bad ? "  <-- FAIL" : "");
    EXPECT(!bad, "%s %s: %d gradient values outside the tolerance", name, c, bad);
}

static void run_model(const char *name) {
    char path[256];
    attend_error err;
    ref_file f, r;
    snprintf(path, sizeof path, "ref/model_%s.txt", name);
    if (!ref_load(&f, path, "/usr/bin/python3 tools/ref_model.py")) return;
    snprintf(path, sizeof path, "ref/dropout_%s.txt", name);
    if (!ref_load(&r, path, "/usr/bin/python3 tools/make_dropout_ref.py")) {
        ref_free(&f);
        return;
    }
    snprintf(path, sizeof path, "ref/model_%s.safetensors", name);
    attend_model *m = NULL;
    attend_status st = attend_model_load(&m, path, NULL, NULL, NULL, NULL, &err);
    EXPECT(st == ATTEND_OK, "%s: %s", path, err.msg);
    const ref_tensor *t_src = ref_get(&f, "src", 2, NULL), *t_sl = ref_get(&f, "src_len", 1, NULL);
    const ref_tensor *t_ti = ref_get(&f, "tgt_in", 2, NULL), *t_to = ref_get(&f, "tgt_out", 2, NULL);
    const ref_tensor *t_tl = ref_get(&f, "tgt_len", 1, NULL);
    if (st == ATTEND_OK && t_src && t_sl && t_ti && t_to && t_tl) {
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
        run_case(name, m, &b, &r, "ls");
        run_case(name, m, &b, &r, "drop");
        attend_batch_release(&b);
    }
    attend_model_free(m);
    ref_free(&f);
    ref_free(&r);
}

static void test_bahdanau(void) {
    run_model("gru_bahdanau_additive");
    run_model("lstm_bahdanau_scaled_dot"); /* two encoder layers: the between-layer site */
}
static void test_luong(void) { run_model("gru_luong_general"); }
static void test_pointer(void) { run_model("lstm_pointer_additive"); }
static void test_none(void) { run_model("gru_none"); }

int main(void) {
    RUN(test_bahdanau);
    RUN(test_luong);
    RUN(test_pointer);
    RUN(test_none);
    return harness_summary();
}
