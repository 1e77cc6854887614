/*
 * monotonic.c — monotonic attention (Raffel et al. 2017, "Online and
 * Linear-Time Attention by Enforcing Monotonic Alignments"). At output step t
 * the decoder scans the source from where it stopped at step t−1 and, at
 * each position j, stops with probability p_tj = σ(e_tj + r) (e the energy of
 * a score function, r a learned scalar bias). Training uses the expected
 * alignment of that process (the recurrence below, differentiable); decoding
 * runs the hard process (p >= 0.5 stops), so the attended position never
 * moves left. Training adds Gaussian noise to the pre-sigmoid energies (the
 * model's choice, src/seq2seq/extensions/monotonic.c), which pushes p towards 0 or 1.
 *
 * Dimension letters: N batch, T decoder steps, S source positions.
 */
#include <math.h>

#include "internal.h"
#include "core/monotonic.h"

attend_real at_monotonic_prob(attend_real e, attend_real r) {
    double x = (double)e + (double)r;
    /* σ without overflow: exp of a non-positive argument only */
    if (x >= 0) return (attend_real)(1.0 / (1.0 + exp(-x)));
    double z = exp(x);
    return (attend_real)(z / (1.0 + z));
}

static inline int pos_valid(const uint8_t *valid, const int32_t *len, int n, int S, int j) {
    return (!valid || valid[(size_t)n * S + j]) && (!len || j < len[n]);
}

void at_monotonic_step_forward(attend_real *alpha, attend_real *p, attend_real *q, const attend_real *e,
                               attend_real r, const attend_real *noise, const attend_real *alpha_prev,
                               const uint8_t *valid, const int32_t *len, int N, int S, size_t ld) {
    // alpha, p, q [N,S] (row stride ld), e, noise, alpha_prev [N,S] or NULL, valid [N,S], len [N]
    for (int n = 0; n < N; n++) {
        attend_real *a = alpha + (size_t)n * ld, *pr = p + (size_t)n * ld, *qr = q + (size_t)n * ld;
        const attend_real *er = e + (size_t)n * ld, *ap = alpha_prev ? alpha_prev + (size_t)n * ld : NULL;
        const attend_real *zr = noise ? noise + (size_t)n * ld : NULL;
        attend_real q_prev = 0, p_prev = 0;
        for (int j = 0; j < S; j++) {
            attend_real prev = ap ? ap[j] : (attend_real)(j == 0);
            attend_real qj = (1 - p_prev) * q_prev + prev; /* q_j = (1 − p_{j−1}) q_{j−1} + α'_j */
            attend_real pj = pos_valid(valid, len, n, S, j) ? at_monotonic_prob(er[j] + (zr ? zr[j] : 0), r) : 0;
            qr[j] = qj;
            pr[j] = pj;
            a[j] = pj * qj; /* α_j = p_j q_j */
            q_prev = qj;
            p_prev = pj;
        }
    }
}

void at_monotonic_step_backward(attend_real *de, attend_real *dr, attend_real *dalpha_prev, const attend_real *dalpha,
                                const attend_real *p, const attend_real *q, const uint8_t *valid, const int32_t *len,
                                int N, int S, size_t ld) {
    // de [N,S] +=, dr [1] +=, dalpha_prev [N,S] +=, dalpha, p, q [N,S] (row stride ld), valid [N,S], len [N]
    double dr_sum = 0;
    for (int n = 0; n < N; n++) {
        const attend_real *da = dalpha + (size_t)n * ld, *pr = p + (size_t)n * ld, *qr = q + (size_t)n * ld;
        attend_real *der = de ? de + (size_t)n * ld : NULL;
        attend_real *dap = dalpha_prev ? dalpha_prev + (size_t)n * ld : NULL;
        attend_real dq_next = 0; /* ∂L/∂q_{j+1} */
        for (int j = S - 1; j >= 0; j--) {
            attend_real pj = pr[j], qj = qr[j];
            /* forward: α_j = p_j q_j and q_{j+1} = (1 − p_j) q_j + α'_{j+1} */
            attend_real dq = da[j] * pj + dq_next * (1 - pj);
            attend_real dp = da[j] * qj - dq_next * qj;
            /* forward: q_j = ... + α'_j */
            if (dap) dap[j] += dq;
            /* forward: p_j = σ(e_j + r) at a valid position (a constant 0 elsewhere) */
            if (pos_valid(valid, len, n, S, j)) {
                attend_real dx = dp * pj * (1 - pj);
                if (der) der[j] += dx;
                dr_sum += (double)dx;
            }
            dq_next = dq;
        }
    }
    if (dr) dr[0] += (attend_real)dr_sum;
}

void at_monotonic_hard_step(attend_real *alpha, int32_t *pos, const attend_real *e, attend_real r,
                            const uint8_t *valid, const int32_t *len, const uint8_t *active, int N, int S,
                            size_t ld) {
    // alpha [N,S] (row stride ld) out, pos [N] in/out, e [N,S], valid [N,S], len [N], active [N]
    for (int n = 0; n < N; n++) {
        if (active && !active[n]) continue;
        attend_real *a = alpha + (size_t)n * ld;
        const attend_real *er = e + (size_t)n * ld;
        int from = pos[n] < 0 ? 0 : pos[n], at = S;
        for (int j = 0; j < S; j++) a[j] = 0;
        for (int j = from; j < S; j++)
            if (pos_valid(valid, len, n, S, j) && at_monotonic_prob(er[j], r) >= (attend_real)0.5) {
                at = j;
                break;
            }
        if (at < S) a[at] = 1;
        pos[n] = at;
    }
}

/* ------------------------------------------------------------ public forms */

static attend_status check_args(const char *who, attend_error *err, const int32_t *len, int N, int T, int S) {
    CHECK(N >= 1 && T >= 1 && S >= 1, err, ATTEND_ERR_SHAPE, "%s: N=%d T=%d S=%d; every dimension must be >= 1", who,
          N, T, S);
    size_t n;
    CHECK(at_count(&n, 3, N, T, S) && n <= SIZE_MAX / sizeof(attend_real), err, ATTEND_ERR_SHAPE,
          "%s: sizes N=%d T=%d S=%d overflow", who, N, T, S);
    if (len)
        for (int i = 0; i < N; i++)
            CHECK(len[i] >= 1 && len[i] <= S, err, ATTEND_ERR_SHAPE, "%s: row %d: length %d outside [1,%d]", who, i,
                  (int)len[i], S);
    return ATTEND_OK;
}

static attend_status check_finite(const char *who, const char *what, attend_error *err, const attend_real *x,
                                  size_t count, int T, int S) {
    for (size_t i = 0; i < count; i++)
        CHECK(isfinite((double)x[i]), err, ATTEND_ERR_NONFINITE, "%s: %s (n=%d, t=%d, j=%d) is not finite", who, what,
              (int)(i / ((size_t)T * S)), (int)(i / S % T), (int)(i % S));
    return ATTEND_OK;
}

attend_status attend_monotonic_forward(attend_real *alpha, attend_real *p, attend_real *q, const attend_real *e,
                                       attend_real r, const int32_t *len, int N, int T, int S, attend_error *err) {
    const char *who = "attend_monotonic_forward";
    CHECK(alpha && p && q && e, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !alpha ? "alpha [N,T,S]" : !p ? "p [N,T,S]" : !q ? "q [N,T,S]" : "e [N,T,S]");
    TRY(check_args(who, err, len, N, T, S));
    CHECK(isfinite((double)r), err, ATTEND_ERR_NONFINITE, "%s: the bias r is not finite", who);
    TRY(check_finite(who, "energy e", err, e, (size_t)N * T * S, T, S));
    size_t ld = (size_t)T * S;
    for (int t = 0; t < T; t++) {
        size_t o = (size_t)t * S;
        at_monotonic_step_forward(alpha + o, p + o, q + o, e + o, r, NULL, t ? alpha + o - S : NULL, NULL, len, N, S,
                                  ld);
    }
    return at_ok(err);
}

attend_status attend_monotonic_backward(attend_real *de, attend_real *dr, const attend_real *dalpha,
                                        const attend_real *p, const attend_real *q, const int32_t *len, int N, int T,
                                        int S, attend_real *work, attend_error *err) {
    const char *who = "attend_monotonic_backward";
    CHECK(dalpha && p && q && work, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !dalpha ? "dalpha [N,T,S]" : !p ? "p [N,T,S]" : !q ? "q [N,T,S]" : "work [2,N,S]");
    TRY(check_args(who, err, len, N, T, S));
    TRY(check_finite(who, "dalpha", err, dalpha, (size_t)N * T * S, T, S));
    size_t ld = (size_t)T * S, NS = (size_t)N * S;
    /* work[0] the whole gradient of α_t, work[1] what flows back to α_{t−1} */
    attend_real *total = work, *carry = work + NS;
    for (size_t i = 0; i < NS; i++) carry[i] = 0;
    for (int t = T - 1; t >= 0; t--) {
        size_t o = (size_t)t * S;
        for (int n = 0; n < N; n++)
            for (int j = 0; j < S; j++) {
                size_t k = (size_t)n * S + j;
                total[k] = dalpha[n * ld + o + j] + carry[k];
                carry[k] = 0;
            }
        /* the step's rows in the [N,T,S] arrays at row stride T*S; total and carry at S */
        for (int n = 0; n < N; n++)
            at_monotonic_step_backward(de ? de + n * ld + o : NULL, dr, t ? carry + (size_t)n * S : NULL,
                                       total + (size_t)n * S, p + n * ld + o, q + n * ld + o, NULL,
                                       len ? len + n : NULL, 1, S, ld);
    }
    return at_ok(err);
}

attend_status attend_monotonic_hard_forward(attend_real *alpha, const attend_real *e, attend_real r,
                                            const int32_t *len, int N, int T, int S, int32_t *pos, attend_error *err) {
    const char *who = "attend_monotonic_hard_forward";
    CHECK(alpha && e && pos, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !alpha ? "alpha [N,T,S]" : !e ? "e [N,T,S]" : "pos [N,T]");
    TRY(check_args(who, err, len, N, T, S));
    CHECK(!isnan((double)r), err, ATTEND_ERR_NONFINITE, "%s: the bias r is NaN", who);
    for (size_t i = 0; i < (size_t)N * T * S; i++)
        CHECK(!isnan((double)e[i]), err, ATTEND_ERR_NONFINITE, "%s: energy e (n=%d, t=%d, j=%d) is NaN", who,
              (int)(i / ((size_t)T * S)), (int)(i / S % T), (int)(i % S));
    size_t ld = (size_t)T * S;
    for (int n = 0; n < N; n++) {
        int32_t at = 0;
        for (int t = 0; t < T; t++) {
            size_t o = (size_t)n * ld + (size_t)t * S;
            at_monotonic_hard_step(alpha + o, &at, e + o, r, NULL, len ? len + n : NULL, NULL, 1, S, ld);
            pos[(size_t)n * T + t] = at;
        }
    }
    return at_ok(err);
}
