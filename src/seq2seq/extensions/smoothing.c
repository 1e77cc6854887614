/*
 * smoothing.c — label smoothing of the teacher-forced loss (the extension
 * "smoothing"; training option `label_smoothing` ε): the loss of a target
 * step becomes −Σ_c q_c log p_c with q = (1−ε) onehot(y) + ε/C, PyTorch's
 * F.cross_entropy(label_smoothing=ε) over the C classes the step may choose
 * (a vocabulary decoder: every id; a pointer: the source positions not masked
 * or excluded), and its gradient (p − q)/count. Not with copy (the extended
 * vocabulary has no fixed class count): a rule.
 *
 * Dimension letters: see state.h.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "seq2seq/extension.h"

static double eps(const attend_model *m) { return m->run.o.label_smoothing; }

static int token_loss(const attend_model *m, int n, int t, int T, const attend_real *lp, int width, int y,
                      double *loss, int *best) {
    (void)n;
    (void)t;
    (void)T;
    double ls = eps(m);
    if (!(ls > 0)) return 0;
    /* uniform over the classes (POINTER: over the positions not masked) */
    double sum = 0;
    int k = 0;
    for (int v = 0; v < width; v++)
        if (isfinite(lp[v])) sum += (double)lp[v], k++;
    *loss -= (1 - ls) * (double)lp[y] + ls * sum / k;
    int b = 0;
    for (int v = 1; v < width; v++)
        if (lp[v] > lp[b]) b = v;
    *best = b;
    return 1;
}

/* loss −(1/count) Σ_v q_v logp[v], q = (1−ε) onehot + ε/V ⇒ dlogits = (p − q)/count */
static int token_grad(const attend_model *m, int n, int t, int N, attend_real *z, int V, int y, attend_real inv) {
    (void)n;
    (void)t;
    (void)N;
    double ls = eps(m);
    if (!(ls > 0)) return 0;
    attend_real qv = (attend_real)(ls / V);
    for (int v = 0; v < V; v++) z[v] = ((attend_real)exp((double)z[v]) - qv) * inv;
    z[y] -= (attend_real)(1 - ls) * inv;
    return 1;
}

/* the target q = (1−ε) onehot + ε/k over the k positions not masked: dscores = (p − q)/count */
static int position_grad(const attend_model *m, attend_real *dscores, const attend_real *lp, int S, int y,
                         attend_real inv) {
    double ls = eps(m);
    if (!(ls > 0)) return 0;
    int k = 0;
    for (int j = 0; j < S; j++) k += isfinite(lp[j]) != 0;
    attend_real q_other = k ? (attend_real)(ls / k) : 0, q_y = (attend_real)(1 - ls) + q_other;
    for (int j = 0; j < S; j++) {
        int ok = isfinite(lp[j]);
        attend_real p = ok ? (attend_real)exp((double)lp[j]) : 0;
        dscores[j] = (p - (j == y ? q_y : ok ? q_other : 0)) * inv;
    }
    return 1;
}

static int feature_on(const char *f, const attend_model_config *c, const attend_train_options *t) {
    (void)f;
    (void)c;
    return t && t->label_smoothing > 0;
}

static void step_options(attend_forward_options *f, const attend_train_options *t, uint64_t seed, long step) {
    (void)seed;
    (void)step;
    f->label_smoothing = t->label_smoothing;
}

static const at_ext_option options[] = {
    {"label_smoothing", offsetof(attend_train_options, label_smoothing),
     offsetof(attend_forward_options, label_smoothing), 1, 1, 0, 0, 0},
};

static const attend_feature_rule rules[] = {
    {"label_smoothing", ATTEND_RULE_EXCLUDES, "copy",
     "{f} with {o}: smoothing over a copy model's extended vocabulary is not defined here"},
};

const at_ext_ops at_ext_smoothing = {
    .name = "smoothing",
    .options = options,
    .noptions = 1,
    .rules = rules,
    .nrules = 1,
    .feature_on = feature_on,
    .step_options = step_options,
    .token_loss = token_loss,
    .token_grad = token_grad,
    .position_grad = position_grad,
};

attend_status attend_model_set_label_smoothing(attend_model *m, double e, attend_error *err) {
    CHECK(m, err, ATTEND_ERR_NULL, "attend_model_set_label_smoothing: model is NULL");
    attend_forward_options f = m->defaults;
    f.label_smoothing = e;
    TRY(at_ext_options_range(NULL, &f, "attend_model_set_label_smoothing", err));
    attend_train_options t;
    at_ext_train_view(&t, &f);
    int broken = at_ext_rule_broken(&m->cfg, &t);
    if (broken >= 0) return at_ext_rule_fail(&m->cfg, broken, "attend_model_set_label_smoothing", err);
    m->defaults.label_smoothing = e;
    m->fwd_ready = 0;
    return at_ok(err);
}
