/*
 * fd_check.h — what the double-precision gradient tests (tests/test_*_f64.c)
 * share: the tiny batch of two pairs of different lengths, and the central
 * finite differences of the loss against every parameter.
 */
#ifndef ATTEND_TESTS_FD_CHECK_H
#define ATTEND_TESTS_FD_CHECK_H

#include <stdlib.h>

#include "attend.h"

/* Two pairs of different lengths (padding and frozen decoder rows); pointer:
 * targets are source positions. */
static inline attend_dataset *fd_tiny_data(int pointer) {
    attend_dataset *d = NULL;
    attend_dataset_create(&d, NULL);
    int32_t s1[] = {4, 5, 6, 4}, s2[] = {6, 5};
    if (!pointer) {
        int32_t t1[] = {5, 4, 6}, t2[] = {4};
        attend_dataset_add(d, s1, 4, t1, 3, NULL);
        attend_dataset_add(d, s2, 2, t2, 1, NULL);
    } else {
        int32_t t1[] = {0, 3, 1, 2}, t2[] = {1, 0};
        attend_dataset_add(d, s1, 4, t1, 4, NULL);
        attend_dataset_add(d, s2, 2, t2, 2, NULL);
    }
    return d;
}

/* After attend_model_forward + attend_model_backward on b: *analytic [n] a
 * copy of the gradients, *numeric [n] (loss(p + h) - loss(p - h)) / 2h with
 * h = 1e-6 for each parameter in turn (restored after). Both malloc'd: the
 * caller frees them. */
static inline void fd_gradients(attend_model *m, const attend_batch *b, double **analytic, double **numeric) {
    size_t n = attend_model_param_count(m);
    double *p = attend_model_params(m), *g = attend_model_grads(m);
    double *a = malloc(n * sizeof *a), *num = malloc(n * sizeof *num);
    for (size_t i = 0; i < n; i++) a[i] = g[i];
    const double h = 1e-6;
    for (size_t i = 0; i < n; i++) {
        double keep = p[i];
        attend_tf_stats sp, sm;
        p[i] = keep + h;
        attend_model_forward(m, b, &sp, NULL);
        p[i] = keep - h;
        attend_model_forward(m, b, &sm, NULL);
        p[i] = keep;
        num[i] = (sp.loss - sm.loss) / (2 * h);
    }
    *analytic = a;
    *numeric = num;
}

#endif
