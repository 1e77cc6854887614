/*
 * optim.c — Adam and SGD with global-norm clipping and a warm-up + cosine
 * learning-rate schedule. Semantics follow torch.optim.Adam / SGD and
 * torch.nn.utils.clip_grad_norm_, so a run can be checked against PyTorch.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "core/vmath.h"

struct attend_optim {
    attend_optim_config cfg;
    size_t n;
    long steps;
    attend_real *state; /* [2n]: Adam m then v; SGD momentum buffer then unused */
};

attend_optim_config attend_optim_defaults(attend_optim_kind kind) {
    attend_optim_config c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.lr = kind == ATTEND_OPT_ADAM ? 1e-3 : 1e-1;
    c.beta1 = 0.9;
    c.beta2 = 0.999;
    c.eps = 1e-8;
    return c;
}

static attend_status check_config(const attend_optim_config *c, attend_error *err) {
    CHECK(c->kind == ATTEND_OPT_ADAM || c->kind == ATTEND_OPT_SGD, err, ATTEND_ERR_ARG,
          "optimizer: unknown kind %d", (int)c->kind);
    CHECK(isfinite(c->lr) && c->lr > 0, err, ATTEND_ERR_ARG, "optimizer: lr=%g must be > 0", c->lr);
    CHECK(c->beta1 >= 0 && c->beta1 < 1 && c->beta2 >= 0 && c->beta2 < 1, err, ATTEND_ERR_ARG,
          "optimizer: betas (%g, %g) must be in [0,1)", c->beta1, c->beta2);
    CHECK(c->kind != ATTEND_OPT_ADAM || (isfinite(c->eps) && c->eps > 0), err, ATTEND_ERR_ARG,
          "optimizer: eps=%g must be > 0", c->eps);
    CHECK(isfinite(c->weight_decay) && c->weight_decay >= 0, err, ATTEND_ERR_ARG,
          "optimizer: weight_decay=%g must be >= 0", c->weight_decay);
    CHECK(c->momentum >= 0 && c->momentum < 1, err, ATTEND_ERR_ARG, "optimizer: momentum=%g must be in [0,1)",
          c->momentum);
    CHECK(isfinite(c->clip_norm) && c->clip_norm >= 0, err, ATTEND_ERR_ARG,
          "optimizer: clip_norm=%g must be >= 0 (0 = off)", c->clip_norm);
    CHECK(c->warmup_steps >= 0 && c->decay_steps >= 0, err, ATTEND_ERR_ARG,
          "optimizer: warmup_steps=%d decay_steps=%d must be >= 0", c->warmup_steps, c->decay_steps);
    CHECK(isfinite(c->min_lr) && c->min_lr >= 0 && c->min_lr <= c->lr, err, ATTEND_ERR_ARG,
          "optimizer: min_lr=%g must be in [0, lr=%g]", c->min_lr, c->lr);
    return ATTEND_OK;
}

attend_status attend_optim_create(attend_optim **out, const attend_optim_config *cfg, size_t nparams,
                                  attend_error *err) {
    CHECK(out && cfg, err, ATTEND_ERR_NULL, "attend_optim_create: %s is NULL", !out ? "out" : "cfg");
    *out = NULL;
    TRY(check_config(cfg, err));
    CHECK(nparams >= 1 && nparams <= SIZE_MAX / (2 * sizeof(attend_real)), err, ATTEND_ERR_SHAPE,
          "attend_optim_create: nparams=%zu", nparams);
    attend_optim *o = calloc(1, sizeof *o);
    attend_real *state = calloc(2 * nparams, sizeof *state);
    if (!o || !state) {
        free(o);
        free(state);
        return at_fail(err, ATTEND_ERR_ALLOC, "attend_optim_create: out of memory for %zu moments", 2 * nparams);
    }
    o->cfg = *cfg;
    o->n = nparams;
    o->state = state;
    *out = o;
    return at_ok(err);
}

void attend_optim_free(attend_optim *o) {
    if (!o) return;
    free(o->state);
    free(o);
}

double attend_optim_lr_at(const attend_optim_config *c, long step) {
    if (step < c->warmup_steps) return c->lr * (double)(step + 1) / (double)c->warmup_steps;
    if (c->decay_steps <= 0) return c->lr;
    double progress = (double)(step - c->warmup_steps) / (double)c->decay_steps;
    if (progress > 1) progress = 1;
    return c->min_lr + (c->lr - c->min_lr) * 0.5 * (1 + cos(3.14159265358979323846 * progress));
}

#ifdef ATTEND_DOUBLE
#define real_sqrt sqrt
#else
#define real_sqrt sqrtf
#endif

/* The update loops run in the parameters' precision with the operations in
 * torch.optim's order (Adam: denom = sqrt(v) / sqrt(bc2) + eps, then
 * param -= (lr / bc1) * m / denom), vectorized: the optimizer was 7% of a
 * training step while it computed in double. */

AT_KERNEL(static, double, sum_squares, (size_t n, const attend_real *g /* [n] */), (n, g)) {
    double sq = 0;
#pragma omp simd reduction(+ : sq)
    for (size_t i = 0; i < n; i++) sq += (double)g[i] * (double)g[i];
    return sq;
}

AT_KERNEL_VOID(static, scale, (size_t n, attend_real *g /* [n] */, attend_real coef), (n, g, coef)) {
#pragma omp simd
    for (size_t i = 0; i < n; i++) g[i] *= coef;
}

/* The sqrt vectorizes only without errno (-fno-math-errno, CMakeLists.txt):
 * with it, every sqrtf keeps a branch to the libm call that sets EDOM. */
AT_KERNEL_VOID(static, adam_update,
               (size_t n, attend_real *restrict p /* [n] */, const attend_real *restrict g /* [n] */,
                attend_real *restrict m /* [n] */, attend_real *restrict v /* [n] */, attend_real beta1,
                attend_real beta2, attend_real eps, attend_real wd, attend_real step_size, attend_real sqrt_bc2),
               (n, p, g, m, v, beta1, beta2, eps, wd, step_size, sqrt_bc2)) {
    const attend_real one_b1 = 1 - beta1, one_b2 = 1 - beta2;
#pragma omp simd
    for (size_t i = 0; i < n; i++) {
        attend_real gi = g[i] + wd * p[i];
        attend_real mi = beta1 * m[i] + one_b1 * gi;
        attend_real vi = beta2 * v[i] + one_b2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        p[i] -= step_size * mi / (real_sqrt(vi) / sqrt_bc2 + eps);
    }
}

/* One loop per case: a loop holding the (invariant) momentum test is not
 * vectorized at -O2. */
AT_KERNEL_VOID(static, sgd_update,
               (size_t n, attend_real *restrict p /* [n] */, const attend_real *restrict g /* [n] */,
                attend_real *restrict buf /* [n] */, attend_real momentum, int first, attend_real wd,
                attend_real lr),
               (n, p, g, buf, momentum, first, wd, lr)) {
    if (!(momentum > 0)) {
#pragma omp simd
        for (size_t i = 0; i < n; i++) p[i] -= lr * (g[i] + wd * p[i]);
    } else if (first) {
#pragma omp simd
        for (size_t i = 0; i < n; i++) {
            attend_real gi = g[i] + wd * p[i];
            buf[i] = gi;
            p[i] -= lr * gi;
        }
    } else {
#pragma omp simd
        for (size_t i = 0; i < n; i++) {
            attend_real gi = momentum * buf[i] + (g[i] + wd * p[i]);
            buf[i] = gi;
            p[i] -= lr * gi;
        }
    }
}

/* Adam over blocks [lo,hi) of 1024 parameters (at_parallel_rows' chunks). */
typedef struct {
    size_t n;
    attend_real *params;
    const attend_real *grads;
    attend_real *m, *v;
    attend_real b1, b2, eps, wd, step_size, sqrt_bc2;
} adam_job;

static void adam_blocks(void *p, int lo, int hi) {
    const adam_job *j = p;
    size_t i0 = (size_t)lo * 1024, i1 = (size_t)hi * 1024 < j->n ? (size_t)hi * 1024 : j->n;
    adam_update(i1 - i0, j->params + i0, j->grads + i0, j->m + i0, j->v + i0, j->b1, j->b2, j->eps, j->wd,
                j->step_size, j->sqrt_bc2);
}

attend_status attend_optim_step(attend_optim *o, attend_real *params, attend_real *grads,
                                attend_optim_report *rep, attend_error *err) {
    CHECK(o && params && grads, err, ATTEND_ERR_NULL, "attend_optim_step: %s is NULL",
          !o ? "optimizer" : !params ? "params" : "grads");
    const attend_optim_config *c = &o->cfg;
    size_t n = o->n;
    double norm = sqrt(sum_squares(n, grads));
    double lr = attend_optim_lr_at(c, o->steps);
    if (rep) {
        rep->grad_norm = norm;
        rep->lr = lr;
        rep->clipped = 0;
    }
    CHECK(isfinite(norm), err, ATTEND_ERR_NONFINITE,
          "attend_optim_step: gradient norm is %g at step %ld; update skipped, parameters unchanged", norm, o->steps);
    if (c->clip_norm > 0) {
        /* torch.nn.utils.clip_grad_norm_: scale by max_norm / (norm + 1e-6) when below 1 */
        double coef = c->clip_norm / (norm + 1e-6);
        if (coef < 1) {
            scale(n, grads, (attend_real)coef);
            if (rep) rep->clipped = 1;
        }
    }
    long t = o->steps + 1;
    attend_real *m = o->state, *v = o->state + n;
    if (c->kind == ATTEND_OPT_ADAM) {
        double bc1 = 1 - pow(c->beta1, (double)t), bc2 = 1 - pow(c->beta2, (double)t);
        const attend_real b1 = (attend_real)c->beta1, b2 = (attend_real)c->beta2, eps = (attend_real)c->eps,
                          wd = (attend_real)c->weight_decay, step_size = (attend_real)(lr / bc1),
                          sqrt_bc2 = (attend_real)sqrt(bc2);
        const int rows = (int)((n + 1023) / 1024); /* blocks of 1024 parameters */
        adam_job j = {n, params, grads, m, v, b1, b2, eps, wd, step_size, sqrt_bc2};
        at_parallel_rows((double)n * 8, rows, 1, adam_blocks, &j);
    } else {
        sgd_update(n, params, grads, m, (attend_real)c->momentum, t == 1, (attend_real)c->weight_decay,
                   (attend_real)lr);
    }
    o->steps = t;
    return at_ok(err);
}

long attend_optim_steps(const attend_optim *o) { return o ? o->steps : 0; }
void attend_optim_set_steps(attend_optim *o, long steps) {
    if (o && steps >= 0) o->steps = steps;
}
attend_real *attend_optim_state(attend_optim *o, size_t *count) {
    if (count) *count = o ? 2 * o->n : 0;
    return o ? o->state : NULL;
}
const attend_optim_config *attend_optim_get_config(const attend_optim *o) { return o ? &o->cfg : NULL; }
