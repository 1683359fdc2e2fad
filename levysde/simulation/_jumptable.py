"""Tables of the CPU big-jump sampler: an exact rejection sampler whose fast path needs no exp
or log, so that the compiled kernel draws many jumps at once in one vectorised pass.

Target (docs/specification.md §7): the magnitude of a big jump, density proportional to
``f(z) = z^(-1-alpha) exp(-lam z)`` on ``(eps, inf)``.

Envelope. ``f`` is decreasing and convex. Its range is cut into cells ``[x_k, x_(k+1)]``,
``x_0 = eps``, ``x_(k+1) = min(q x_k, x_k + d/lam)`` (relative width ``q - 1``, and at most
``d`` e-folds of the tempering), k = 0 .. K-1, and a tail ``(x_K, inf)``. On cell k the
envelope is the constant ``h_k = f(x_k)`` (the maximum of f there); on the tail it is
``exp(-lam x_K) z^(-1-alpha)`` (a Pareto law from ``x_K``) or, when ``lam x_K > alpha``,
``x_K^(-1-alpha) exp(-lam z)`` (an exponential law from ``x_K``), whichever has the smaller
area. A component (cell or tail) is chosen with probability proportional to its envelope area
by Walker's alias method (Walker 1977; Vose 1991 for the construction); a point is proposed
uniformly under the component's envelope and accepted with probability ``f(z) / envelope``.
That is ordinary rejection from the mixture envelope, exact whatever the cells.

Squeezes (no exp or log on the fast path). With ``z = x_k + u1 w_k`` and ``u2`` uniform,
accept when ``u2 h_k < f(z)``. By convexity f lies above its tangent at ``x_(k+1)`` and below
the chord of the cell, so ``u2 < a_k + b_k (1 - u1)`` (tangent; ``a_k = f(x_(k+1))/h_k``,
``b_k = |f'(x_(k+1))| w_k / h_k``) accepts and ``u2 >= 1 - (1 - a_k) u1`` (chord) rejects
without evaluating f; only the thin band between them (and every tail proposal) is decided
lane by lane with exp and log (:func:`levysde.simulation._kernels._finish_jumps`).

Exactness: the cell probabilities are the envelope areas in double precision; the component is
read from one 53-bit uniform ``t = u n`` (index ``floor(t)``, alias coin ``t - floor(t)``, with
about ``53 - log2(n)`` bits), so each component's probability is right to about ``n 2^-53``
relative (``< 1e-12`` for the tables built here), far below any Monte Carlo error.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from levysde.core.validate import check_real
from levysde.theory.params import check_param

#: relative cell width q - 1, tempering e-folds per cell d, tail share of the envelope area,
#: most cells (defaults of :func:`jump_table`)
_Q, _D, _TAIL_SHARE, _MAX_CELLS = 1.03, 0.03, 1e-3, 4096


@dataclass(frozen=True)
class JumpTable:
    """Arrays of :func:`jump_table` (``n = K + 1`` components; component K is the tail).

    prob, alias : (n,) alias table (float64 in [0, 1], int64)
    x, w, a, b : (n,) cell left edge, width, tangent squeeze a_k = f(x_(k+1))/h_k and slope
        term b_k = |f'(x_(k+1))| w_k / h_k (tail entries unused)
    x_tail : start of the tail; tail_pareto : whether the tail proposal is Pareto (else
        exponential)
    """

    prob: np.ndarray
    alias: np.ndarray
    x: np.ndarray
    w: np.ndarray
    a: np.ndarray
    b: np.ndarray
    x_tail: float
    tail_pareto: bool

    def packed(self) -> np.ndarray:
        """The arrays as the compiled sampler reads them: rows prob, alias, x, w, a, b of one
        (6, n) float64 array (alias indices are exact in float64)."""
        return np.ascontiguousarray(np.vstack([self.prob, self.alias.astype(float), self.x, self.w,
                                               self.a, self.b]))


def _log_f(z, alpha, lam):
    return -(1.0 + alpha) * np.log(z) - lam * z


def _tail_area(x, alpha, lam):
    """(area, pareto) of the smaller tail envelope from x (log of the area, to avoid underflow)."""
    log_pareto = -lam * x - alpha * math.log(x) - math.log(alpha)
    if lam > 0.0:
        log_expo = -(1.0 + alpha) * math.log(x) - lam * x - math.log(lam)
        if log_expo < log_pareto:
            return log_expo, False
    return log_pareto, True


def _edges(eps, alpha, lam, q, d, tail_share, max_cells):
    """Cell edges x_0 = eps < ... < x_K: each cell at most q times wider than its left edge and
    d/lam long; stop once the tail envelope holds at most ``tail_share`` of the cells' area."""
    xs = [eps]
    log_area = -math.inf                           # log of the cells' envelope area so far
    while len(xs) <= max_cells:
        x0 = xs[-1]
        x1 = min(q * x0, x0 + d / lam) if lam > 0.0 else q * x0
        log_cell = float(_log_f(x0, alpha, lam)) + math.log(x1 - x0)
        log_area = np.logaddexp(log_area, log_cell)
        xs.append(x1)
        if _tail_area(x1, alpha, lam)[0] <= math.log(tail_share) + log_area:
            break
    return np.array(xs)


def _alias(p):
    """Walker's alias table for probabilities p (Vose's stable construction): (prob, alias)."""
    n = p.size
    scaled = p * n
    prob = np.ones(n)
    alias = np.arange(n, dtype=np.int64)
    small = [i for i in range(n) if scaled[i] < 1.0]
    large = [i for i in range(n) if scaled[i] >= 1.0]
    while small and large:
        s, g = small.pop(), large.pop()
        prob[s] = scaled[s]
        alias[s] = g
        scaled[g] = (scaled[g] + scaled[s]) - 1.0
        (small if scaled[g] < 1.0 else large).append(g)
    return prob, alias                             # leftovers keep prob 1 (rounding only)


def jump_table(eps, alpha, lam, *, q=_Q, d=_D, tail_share=_TAIL_SHARE, max_cells=_MAX_CELLS):
    """The tables of the CPU big-jump sampler for the cut ``eps`` > 0, index 0 < alpha < 2 and
    tempering lam >= 0 (module docstring; docs/specification.md §7 for the law).

    Parameters: q > 1 (relative cell width), d > 0 (tempering e-folds per cell), tail_share in
    (0, 1) (target share of the tail in the envelope area, reached unless ``max_cells`` cells
    come first: then the tail is simply more often drawn), max_cells >= 1.

    Returns a :class:`JumpTable`. Raises ValueError for parameters out of range.
    """
    eps = check_real("eps", eps, 0.0, lo_open=True)
    alpha, lam = check_param("alpha", alpha, scalar=True), check_param("lam", lam, scalar=True)
    with np.errstate(all="ignore"):                             # overflow: checked below
        xs = _edges(eps, alpha, lam, q, d, tail_share, max_cells)
        x, x1 = xs[:-1], xs[1:]
        w = x1 - x
        log_h = _log_f(x, alpha, lam)
        a = np.exp(_log_f(x1, alpha, lam) - log_h)              # f(x_(k+1)) / h_k
        b = a * ((1.0 + alpha) / x1 + lam) * w                  # |f'(x_(k+1))| w_k / h_k
        log_tail, pareto = _tail_area(xs[-1], alpha, lam) if math.isfinite(xs[-1]) else (math.nan, True)
        log_areas = np.append(log_h + np.log(w), log_tail)
    p = np.exp(log_areas - log_areas.max())
    p /= p.sum()
    prob, alias = _alias(p)
    if not (np.all(np.isfinite(log_areas)) and np.all(np.isfinite(w)) and math.isfinite(xs[-1])):
        raise ValueError(f"jump_table: eps = {eps!r}, alpha = {alpha!r}, lam = {lam!r} give a "
                         f"non-finite envelope (the cells overflow double precision)")
    pad = np.zeros(1)
    return JumpTable(prob=prob, alias=alias, x=np.append(x, pad), w=np.append(w, pad),
                     a=np.append(a, pad), b=np.append(b, pad), x_tail=float(xs[-1]),
                     tail_pareto=bool(pareto))

