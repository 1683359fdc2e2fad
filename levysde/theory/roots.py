"""Vectorised bracketing root-finder: Chandrupatla's method through
:func:`scipy.optimize.elementwise.find_root`.

One call solves many independent scalar equations ``f_i(x) = 0`` with brackets
``[a_i, b_i]`` on which ``f_i`` changes sign. Chandrupatla's method (Chandrupatla,
Adv. Eng. Software 28 (1997) 145; analysed by Scherer, "Computational Physics",
§6.1.7) mixes inverse quadratic interpolation with bisection and never leaves
the bracket, so it is as safe as bisection and converges superlinearly on
smooth functions. SciPy (>= 1.15) maintains a vectorised implementation that
evaluates only the equations still active at each step; this module adapts it
to the package's calling convention (the equation indices passed to ``f``, known
end-point values, errors instead of status codes).

Used for the characteristic equation Phi(beta)/beta = 0 (docs/specification.md §4), the
simulated model's own tail rate (the root of Phi_eps, docs/specification.md §7) and the
learnability window (docs/specification.md §6).

Speed (``python benchmarks/bench_theory.py``, both timed side by side in one run): beta* on
the 10^6-point grid takes the same time as with a hand-written Chandrupatla loop (SciPy /
hand-written = 0.93-0.99); the 200 single-bracket tail-rate solves of the benchmark
(:func:`levysde.simulation.beta_model`) take 1.6-2.3x as long, i.e. ~2-3 ms more per call
from SciPy's fixed per-iteration overhead. Single brackets are solved once per simulation run
or CLI call, so the maintained implementation is kept.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import elementwise

__all__ = ["chandrupatla"]

_EPS = np.finfo(float).eps


def _end_values(f, x, given, shape, idx):
    """f at the bracket ends ``x`` (flat), or the caller's ``given`` values broadcast to ``shape``."""
    if given is not None:
        return np.broadcast_to(np.asarray(given, dtype=float), shape).ravel().copy()
    return np.asarray(f(x, idx), dtype=float).copy()


def chandrupatla(f: Callable[[NDArray[np.float64], NDArray[np.intp]], ArrayLike], a: ArrayLike, b: ArrayLike, *,
                 fa: ArrayLike | None = None, fb: ArrayLike | None = None, rtol: float = 4 * _EPS,
                 xtol: float = 0.0, maxiter: int = 200) -> NDArray[np.float64]:
    r"""Solve ``f(x, idx) = 0`` for many brackets at once.

    Parameters
    ----------
    f : callable ``f(x, idx) -> ndarray``
        ``x`` is a 1-d float array of trial points and ``idx`` the (flat, integer)
        indices of the equations they belong to; it returns f_idx(x) with the same shape.
        It is never called at an end point whose value is given by ``fa``/``fb``.
    a, b : array_like (broadcast together); the brackets (either order). ``f(a)`` and
        ``f(b)`` must have opposite signs (or one be zero) for every equation.
    fa, fb : optional values of f at a and b (e.g. a known limit at an end point
        where f cannot be evaluated, such as Phi(beta)/beta at beta = 0).
    rtol, xtol : stop when the bracket is shorter than ``2 (2 rtol |x| + xtol)``
        or f(x) == 0 exactly (SciPy's ``xrtol = 4 rtol``, ``xatol = 2 xtol``,
        ``fatol = 0``). The default resolves the root to a few ulps.
    maxiter : safety cap on the iterations (each shrinks the bracket; bisection alone
        would need about 1100 steps to exhaust the float64 range); on reaching it the
        best point so far is returned.

    Returns
    -------
    ndarray shaped like the broadcast brackets
        The end point of each final bracket with the smaller |f|.

    Raises
    ------
    ValueError
        If some bracket does not enclose a sign change, or f returns NaN.

    Notes
    -----
    Each step takes inverse quadratic interpolation through the last three points when
    Chandrupatla's criterion :math:`1 - \sqrt{1-\xi} < \Phi < \sqrt{\xi}` holds
    (:math:`\xi`, :math:`\Phi` the relative position of the previous point between the bracket
    ends, and of its value between theirs), bisection otherwise; the new point never leaves
    the bracket (Chandrupatla, 1997, under References). The steps are those of
    :func:`scipy.optimize.elementwise.find_root`.

    References
    ----------
    .. [1] T. R. Chandrupatla, "A new hybrid quadratic/bisection algorithm for finding the zero of a
       nonlinear function without using derivatives", Advances in Engineering Software 28 (1997)
       145-149.

    Examples
    --------
    >>> x = chandrupatla(lambda x, i: x**2 - np.array([2.0, 3.0])[i], [0.0, 0.0], [2.0, 2.0])
    >>> print(x, np.sqrt([2.0, 3.0]))
    [1.41421356 1.73205081] [1.41421356 1.73205081]
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    shape = a.shape
    allidx = np.arange(a.size)
    lo, hi = a.ravel().copy(), b.ravel().copy()
    f_lo = _end_values(f, lo, fa, shape, allidx)
    f_hi = _end_values(f, hi, fb, shape, allidx)
    if np.any(np.isnan(f_lo) | np.isnan(f_hi)):
        raise ValueError("chandrupatla: f returned NaN at a bracket end")
    if np.any(np.sign(f_lo) * np.sign(f_hi) > 0):
        raise ValueError("chandrupatla: some bracket does not enclose a sign change")
    swap = lo > hi
    lo[swap], hi[swap] = hi[swap], lo[swap].copy()
    f_lo[swap], f_hi[swap] = f_hi[swap], f_lo[swap].copy()

    def g(x, idx):
        # the ends' values come from f_lo/f_hi (given or computed once); f sees interior points
        idx = idx.astype(np.intp, copy=False)
        out = np.empty_like(x)
        at_lo, at_hi = x == lo[idx], x == hi[idx]
        out[at_lo], out[at_hi] = f_lo[idx[at_lo]], f_hi[idx[at_hi]]
        inner = ~(at_lo | at_hi)
        if inner.any():
            out[inner] = f(x[inner], idx[inner])
            if np.any(np.isnan(out[inner])):
                raise ValueError("chandrupatla: f returned NaN inside a bracket")
        return out

    best = np.where(np.abs(f_hi) < np.abs(f_lo), hi, lo)
    todo = np.flatnonzero((f_lo != 0) & (f_hi != 0) & (lo != hi))
    if todo.size:
        res = elementwise.find_root(g, (lo[todo], hi[todo]), args=(todo,), maxiter=maxiter,
                                    tolerances=dict(xrtol=4.0 * rtol, xatol=2.0 * xtol, fatol=0.0,
                                                    frtol=0.0))
        best[todo] = res.x
    return best.reshape(shape)
