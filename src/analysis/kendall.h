/*
 * kendall.h — Kendall's tau-b (kendall.c), unchecked, for the trials.
 */
#ifndef ATTEND_ANALYSIS_KENDALL_H
#define ATTEND_ANALYSIS_KENDALL_H

#include "internal.h"

/* Exact p-values up to this many values without ties (scipy's threshold). */
#define AT_KENDALL_EXACT_MAX 33
/* n(n-1)/2 pair counts fit a long with room to spare. */
#define AT_KENDALL_MAX_N 1000000

/* tau-b of x [n] and y [n] (finite), NaN when either is constant or n < 2;
 * *pvalue (NULL: not wanted) two-sided, as scipy.stats.kendalltau. */
void at_kendall_tau_b(const double *x, const double *y, int n, double *tau, double *pvalue);

#endif
