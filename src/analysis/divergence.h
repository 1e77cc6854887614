/*
 * divergence.h — distances between two output distributions (divergence.c),
 * unchecked, for the interventions and the trials.
 */
#ifndef ATTEND_ANALYSIS_DIVERGENCE_H
#define ATTEND_ANALYSIS_DIVERGENCE_H

#include "internal.h"

/* Between log-probability rows a [V] and b [V] (-inf: probability 0): total
 * variation ½Σ|p − q|, KL(p ‖ q) and Jensen–Shannon divergence, nats (each
 * pointer NULL: not wanted). */
void at_logp_divergences(const double *a, const double *b, int V, double *tv, double *kl, double *js);

/* The same between probability rows p [n] and q [n] (non-negative, finite). */
void at_prob_divergences(const double *p, const double *q, int n, double *tv, double *kl, double *js);

#endif
