/*
 * harness.h — the tiny test harness every test executable includes.
 * A test file defines static test functions and calls RUN(fn) from main;
 * main returns harness_summary(), which prints "N passed, N failed" and is
 * non-zero when anything failed. Checks print the worst difference they saw.
 */
#ifndef ATTEND_TEST_HARNESS_H
#define ATTEND_TEST_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int harness_checks_failed_ = 0;   /* failed checks in the current test */
static int harness_tests_passed_ = 0;
static int harness_tests_failed_ = 0;

#define EXPECT(cond, ...)                                                       \
    do {                                                                        \
        if (!(cond)) {                                                          \
            harness_checks_failed_++;                                           \
            fprintf(stderr, "  FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);   \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
        }                                                                       \
    } while (0)

/* Compare n values; print the worst absolute difference and its index.
 * Passes when every |got - want| <= atol + rtol*|want| and no value is NaN. */
static inline int harness_close_(const char *file, int line, const char *what, const double *got,
                                 const double *want, size_t n, double atol, double rtol) {
    double worst = 0, worst_excess = -1;
    size_t worst_i = 0;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(got[i] - want[i]);
        if (isnan(got[i]) != isnan(want[i]) || (isinf(want[i]) && got[i] != want[i])) d = INFINITY;
        else if (isinf(want[i]) && got[i] == want[i]) d = 0;
        double excess = d - (atol + rtol * fabs(want[i]));
        if (excess > 0) bad = 1;
        if (d > worst || excess > worst_excess) {
            if (d >= worst) { worst = d; worst_i = i; }
            if (excess > worst_excess) worst_excess = excess;
        }
    }
    printf("  %-48s worst |diff| %.3e at [%zu] (n=%zu, atol %.0e, rtol %.0e)%s\n", what, worst,
           worst_i, n, atol, rtol, bad ? "  <-- FAIL" : "");
    if (bad) {
        harness_checks_failed_++;
        fprintf(stderr, "  FAIL %s:%d: %s: got %.9g want %.9g at [%zu]\n", file, line, what,
                got[worst_i], want[worst_i], worst_i);
    }
    return !bad;
}
#define EXPECT_CLOSE(what, got, want, n, atol, rtol) \
    harness_close_(__FILE__, __LINE__, (what), (got), (want), (n), (atol), (rtol))

/* Scalar form. */
#define EXPECT_NEAR(what, got, want, tol)                                      \
    do {                                                                       \
        double harness_g_ = (got), harness_w_ = (want);                        \
        harness_close_(__FILE__, __LINE__, (what), &harness_g_, &harness_w_, 1, (tol), 0); \
    } while (0)

#define RUN(fn)                                                                 \
    do {                                                                        \
        harness_checks_failed_ = 0;                                             \
        printf("[ RUN  ] %s\n", #fn);                                           \
        fn();                                                                   \
        if (harness_checks_failed_) {                                           \
            harness_tests_failed_++;                                            \
            printf("[ FAIL ] %s (%d failed checks)\n", #fn, harness_checks_failed_); \
        } else {                                                                \
            harness_tests_passed_++;                                            \
            printf("[  OK  ] %s\n", #fn);                                       \
        }                                                                       \
    } while (0)

static inline int harness_summary(void) {
    printf("%d passed, %d failed\n", harness_tests_passed_, harness_tests_failed_);
    return harness_tests_failed_ ? 1 : 0;
}

#endif
