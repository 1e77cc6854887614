#!/usr/bin/python3
"""fit_tanh.py — the coefficients of at_vtanh (src/core/vmath.h).

tanh(x) ~ x * P(z) / Q(z), z = x^2, P of degree 6 and Q of degree 3 with
Q(0) = 1, on 0 < x <= 9 (beyond, float tanh is within 1 ulp of 1). Minimizes
the largest relative error by Lawson's iteration: weighted linear least
squares of P(z) - f Q(z) (f = tanh(x)/x), the weights multiplied each round
by the current error, keeping the best round. z is scaled by 1/81 while
fitting for conditioning. Prints the coefficients in Horner order and the
maximum relative error in exact (double) arithmetic.

    /usr/bin/python3 tools/fit_tanh.py
"""
import numpy as np

C, NP, NQ = 9.0, 7, 4
x = np.unique(np.concatenate([np.linspace(1e-4, 1, 30000), np.linspace(1, C, 60000)]))
f = np.tanh(x) / x
z = x * x / (C * C)
w = np.ones_like(x)
Qv = np.ones_like(x)
best = None
for _ in range(300):
    A = np.hstack([np.vander(z, NP, increasing=True), -(f[:, None]) * np.vander(z, NQ, increasing=True)[:, 1:]])
    scale = np.sqrt(w) / (f * Qv)
    sol, *_ = np.linalg.lstsq(A * scale[:, None], f * scale, rcond=None)
    P, Q = sol[:NP], np.concatenate([[1.0], sol[NP:]])
    Qv = np.polyval(Q[::-1], z)
    err = np.abs(np.polyval(P[::-1], z) / Qv / f - 1)
    if best is None or err.max() < best[0]:
        best = (err.max(), P.copy(), Q.copy())
    w = w * err
    w /= w.sum()
m, P, Q = best
unscale = (1 / (C * C)) ** np.arange(max(NP, NQ))
print("max relative error %.3g (exact arithmetic)" % m)
print("P (z^0 .. z^6):", ", ".join("%.9e" % v for v in P * unscale[:NP]))
print("Q (z^0 .. z^3):", ", ".join("%.9e" % v for v in Q * unscale[:NQ]))
