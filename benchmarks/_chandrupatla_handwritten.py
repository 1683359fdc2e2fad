"""Baseline for benchmarks/bench_theory.py: the hand-written vectorised Chandrupatla that
levysde.theory.roots used before it delegated to scipy.optimize.elementwise.find_root.
Kept here only to time the two side by side; the package does not import it.

Vectorised bracketing root-finder (Chandrupatla's method).

One call solves many independent scalar equations ``f_i(x) = 0`` with brackets
``[a_i, b_i]`` on which ``f_i`` changes sign. Chandrupatla's method (Chandrupatla,
Adv. Eng. Software 28 (1997) 145; analysed by Scherer, "Computational Physics",
§6.1.7) mixes inverse quadratic interpolation with bisection and never leaves
the bracket, so it is as safe as bisection and converges superlinearly on
smooth functions. Only the equations still active are evaluated at each step.

Used for the characteristic equation Phi(beta)/beta = 0 (docs/specification.md §4) and for
the simulated model's own tail rate (the root of Phi_eps, docs/specification.md §7).
"""
from __future__ import annotations

import numpy as np

__all__ = ["chandrupatla_handwritten"]

_EPS = np.finfo(float).eps


def chandrupatla_handwritten(f, a, b, *, fa=None, fb=None, rtol: float = 4 * _EPS, xtol: float = 0.0,
                 maxiter: int = 200):
    """Solve ``f(x, idx) = 0`` for many brackets at once.

    Parameters
    ----------
    f : callable ``f(x, idx) -> ndarray``
        ``x`` is a 1-d float array of trial points and ``idx`` the (flat) indices
        of the equations they belong to; it returns f_idx(x) with the same shape.
    a, b : array_like (broadcast together); the brackets. ``f(a)`` and ``f(b)``
        must have opposite signs (or one be zero) for every equation.
    fa, fb : optional values of f at a and b (e.g. a known limit at an end point
        where f cannot be evaluated, such as Phi(beta)/beta at beta = 0).
    rtol, xtol : stop when the bracket is shorter than ``2 (rtol |x| + xtol)``
        or f(x) == 0 exactly. The default resolves the root to a few ulps.
    maxiter : safety cap (each step shrinks the bracket, so bisection alone
        would need about 1100 steps to exhaust the float64 range).

    Returns
    -------
    ndarray shaped like the broadcast brackets: the best end point of each final
    bracket (the one with the smaller |f|).

    Raises
    ------
    ValueError if some bracket does not enclose a sign change, or f returns NaN.
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    shape = a.shape
    x1 = b.ravel().copy()
    x2 = a.ravel().copy()
    n = x1.size
    allidx = np.arange(n)
    f2 = (np.broadcast_to(fa, shape).ravel().astype(float) if fa is not None else f(x2, allidx)).copy()
    f1 = (np.broadcast_to(fb, shape).ravel().astype(float) if fb is not None else f(x1, allidx)).copy()
    if np.any(np.isnan(f1) | np.isnan(f2)):
        raise ValueError("chandrupatla: f returned NaN at a bracket end")
    if np.any(np.sign(f1) * np.sign(f2) > 0):
        raise ValueError("chandrupatla: some bracket does not enclose a sign change")
    x3 = x2.copy()
    f3 = f2.copy()
    t = np.full(n, 0.5)
    best = np.where(np.abs(f1) < np.abs(f2), x1, x2)
    active = (f1 != 0) & (f2 != 0)
    best[f1 == 0] = x1[f1 == 0]
    best[f2 == 0] = x2[f2 == 0]
    for _ in range(maxiter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        xa1, xa2, xa3 = x1[idx], x2[idx], x3[idx]
        fa1, fa2, fa3 = f1[idx], f2[idx], f3[idx]
        xt = xa1 + t[idx] * (xa2 - xa1)
        ft = f(xt, idx)
        if np.any(np.isnan(ft)):
            raise ValueError("chandrupatla: f returned NaN inside a bracket")
        same = np.sign(ft) == np.sign(fa1)
        # keep [x1, x2] a bracket: x3 is the point dropped
        nx3 = np.where(same, xa1, xa2)
        nf3 = np.where(same, fa1, fa2)
        nx2 = np.where(same, xa2, xa1)
        nf2 = np.where(same, fa2, fa1)
        xa1, fa1, xa2, fa2, xa3, fa3 = xt, ft, nx2, nf2, nx3, nf3
        use1 = np.abs(fa1) < np.abs(fa2)
        xm = np.where(use1, xa1, xa2)
        fm = np.where(use1, fa1, fa2)
        tol = 2.0 * rtol * np.abs(xm) + xtol
        width = np.abs(xa2 - xa1)
        with np.errstate(divide="ignore", invalid="ignore"):
            tl = tol / width
            done = (tl > 0.5) | (fm == 0) | (width == 0)
            xi = (xa1 - xa2) / (xa3 - xa2)
            ph = (fa1 - fa2) / (fa3 - fa2)
            iqi = (ph * ph < xi) & ((1 - ph) * (1 - ph) < 1 - xi)
            tn = (fa1 / (fa2 - fa1) * fa3 / (fa2 - fa3)
                  + (xa3 - xa1) / (xa2 - xa1) * fa1 / (fa3 - fa1) * fa2 / (fa3 - fa2))
        tn = np.where(iqi & np.isfinite(tn), tn, 0.5)
        tn = np.clip(tn, np.minimum(tl, 0.5), np.maximum(1 - tl, 0.5))
        x1[idx], f1[idx], x2[idx], f2[idx], x3[idx], f3[idx] = xa1, fa1, xa2, fa2, xa3, fa3
        t[idx] = tn
        best[idx] = xm
        active[idx[done]] = False
    return best.reshape(shape)
