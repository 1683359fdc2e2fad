"""Stationary left-tail estimators for zeta (THEORY.md §8).

With X = -zeta (long time scales are the left tail of zeta) and a threshold u,

* the exponential-tail MLE (the Hill estimator of tau = e^X)
  ``beta_hat(u) = 1 / mean(X - u | X > u)``, from samples or from histogram
  counts; from a run of :func:`levysde.simulate.simulate` it is exact at bin
  edges because the run also stores per-bin sums of zeta;
* errors by the jackknife over independent particle groups (samples along a path
  are correlated; the naive ``beta_hat/sqrt(k)`` is 10-20x too small);
* a threshold scan reporting, for each u, the number of independent excursions
  (from the equilibrium) that reached X > u, and the effective number of
  independent exceedances ``(beta_hat/se)^2`` implied by the jackknife error;
* the tempering-limited fit of the collapsed phase: density of X proportional to
  ``exp(-b x') x'^(-1-alpha)`` on x > u, with ``x' = X - x0`` the distance from the
  equilibrium (alpha known), by binned maximum likelihood.

All estimators take per-group sufficient statistics, so that the same jackknife
code serves samples and histograms.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

__all__ = ["TailEstimate", "hill_rate", "tail_from_samples", "tail_from_histogram",
           "tail_from_result", "threshold_scan", "threshold_scan_result", "TemperedFit",
           "tempered_fit", "tempered_fit_result", "jackknife"]


def jackknife(values_loo):
    """Jackknife standard error from the G leave-one-group-out estimates.

    ``se = sqrt((G - 1)/G * sum_g (theta_(-g) - mean)^2)``. Returns NaN for G < 2.
    """
    v = np.asarray(values_loo, dtype=float)
    g = v.size
    if g < 2:
        return float("nan")
    return float(math.sqrt((g - 1) / g * np.sum((v - v.mean()) ** 2)))


@dataclass(frozen=True)
class TailEstimate:
    """beta_hat(u) with its jackknife error.

    Attributes
    ----------
    u : threshold on X = -zeta actually used (snapped to a bin edge for histograms)
    beta_hat : 1/mean(X - u | X > u) over all groups (NaN when no exceedances)
    se : jackknife standard error over groups (NaN with < 2 groups)
    n_exceed : number (or time-averaged count) of samples with X > u
    n_excursions : independent excursions from the equilibrium that reached X > u
        (None when unknown)
    n_effective : (beta_hat/se)^2, the number of independent exponential samples
        that would give the same error
    """

    u: float
    beta_hat: float
    se: float
    n_exceed: float
    n_excursions: float | None
    n_effective: float

    def asdict(self) -> dict:
        return {k: getattr(self, k) for k in
                ("u", "beta_hat", "se", "n_exceed", "n_excursions", "n_effective")}


def hill_rate(x, u):
    """beta_hat = 1/mean(x - u | x > u) for samples ``x`` (any shape) of X.

    Raises ValueError when no sample exceeds u.
    """
    x = np.asarray(x, dtype=float).ravel()
    exc = x[x > u] - u
    if exc.size == 0:
        raise ValueError(f"no sample exceeds the threshold u = {u:g}")
    return float(1.0 / exc.mean())


def _estimate(c_g, s_g, u, n_exc=None) -> TailEstimate:
    """From per-group counts c_g and sums s_g of the excesses X - u (X > u)."""
    c_g = np.asarray(c_g, dtype=float)
    s_g = np.asarray(s_g, dtype=float)
    C, S = c_g.sum(), s_g.sum()
    if not (C > 0 and S > 0):
        return TailEstimate(float(u), float("nan"), float("nan"), float(C), n_exc, float("nan"))
    beta = C / S
    with np.errstate(divide="ignore", invalid="ignore"):
        loo = (C - c_g) / (S - s_g)
    se = jackknife(loo) if np.all(np.isfinite(loo)) else float("nan")
    neff = (beta / se) ** 2 if se > 0 else float("nan")
    return TailEstimate(float(u), float(beta), float(se), float(C), n_exc, float(neff))


def tail_from_samples(x, u, groups=None) -> TailEstimate:
    """beta_hat(u) from samples of X = -zeta, jackknifed over groups.

    Parameters
    ----------
    x : (G, n) array (row g = samples of independent group g), or 1-d with ``groups``
    u : threshold (same units as x)
    groups : optional int labels (same length as 1-d x) of independent groups

    Returns TailEstimate (n_excursions None). Raises ValueError on bad shapes.
    """
    x = np.asarray(x, dtype=float)
    if groups is None:
        if x.ndim != 2:
            raise ValueError("x must be 2-d (groups, samples) when groups is not given")
        exc = np.where(x > u, x - u, 0.0)
        return _estimate((x > u).sum(axis=1), exc.sum(axis=1), u)
    groups = np.asarray(groups).ravel()
    x = x.ravel()
    if groups.size != x.size:
        raise ValueError("groups must have the same length as x")
    _, lab = np.unique(groups, return_inverse=True)
    m = x > u
    c_g = np.bincount(lab[m], minlength=lab.max() + 1)
    s_g = np.bincount(lab[m], weights=x[m] - u, minlength=lab.max() + 1)
    return _estimate(c_g, s_g, u)


def _edge_index(edges, u):
    """Index k of the zeta edge nearest to -u (the threshold on X = -zeta)."""
    k = int(np.argmin(np.abs(edges + u)))
    return k


def tail_from_histogram(edges, counts, sums=None, u=3.0, *, outside=None, excursions=None) -> TailEstimate:
    """beta_hat(u) of X = -zeta from per-group histograms of zeta.

    Parameters
    ----------
    edges : (B + 1,) increasing zeta edges
    counts : (G, B) counts (or time-averaged counts) per group and bin
    sums : (G, B) per-bin sums of zeta. With sums (and ``outside``) the estimate is
        exact at bin edges; without, bin midpoints are used (error O(width^2 beta^2)).
    u : threshold on X; snapped to the nearest edge -u (reported in the result)
    outside : (G, 4) [count below, zeta-sum below, count above, zeta-sum above] of the
        histogram range (as stored by :func:`levysde.simulate.simulate`); without it,
        mass below the range is ignored.
    excursions : (G, B) depth histogram of excursions (their minima), optional

    Returns TailEstimate. Raises ValueError on inconsistent shapes.
    """
    edges = np.asarray(edges, dtype=float)
    counts = np.atleast_2d(np.asarray(counts, dtype=float))
    if counts.shape[1] != edges.size - 1:
        raise ValueError(f"counts must have shape (groups, {edges.size - 1}); got {counts.shape}")
    if sums is None:
        sums = counts * 0.5 * (edges[:-1] + edges[1:])
    sums = np.atleast_2d(np.asarray(sums, dtype=float))
    if sums.shape != counts.shape:
        raise ValueError("sums must have the same shape as counts")
    k = _edge_index(edges, u)
    u_used = -edges[k]
    c_g = counts[:, :k].sum(axis=1)
    z_g = sums[:, :k].sum(axis=1)             # sum of zeta over samples with zeta < edge
    if outside is not None:
        outside = np.asarray(outside, dtype=float)
        c_g = c_g + outside[:, 0]
        z_g = z_g + outside[:, 1]
    s_g = -z_g - u_used * c_g                 # sum of X - u = -zeta - u
    n_exc = None
    if excursions is not None:
        n_exc = float(np.asarray(excursions, dtype=float)[:, :k].sum())
    return _estimate(c_g, s_g, u_used, n_exc)


def _result_arrays(res):
    return dict(edges=res.hist_edges, counts=res.hist_counts, sums=res.hist_sums,
                outside=res.hist_outside, excursions=res.excursion_counts)


def tail_from_result(res, u, **kwargs) -> TailEstimate:
    """:func:`tail_from_histogram` on a :class:`levysde.simulate.SimulationResult`."""
    a = _result_arrays(res)
    return tail_from_histogram(a["edges"], a["counts"], a["sums"], u, outside=a["outside"],
                               excursions=a["excursions"], **kwargs)


def threshold_scan(edges, counts, sums=None, us=None, *, outside=None, excursions=None,
                   min_exceed=0.0, min_excursions=0) -> list[TailEstimate]:
    """beta_hat(u) over thresholds ``us`` (default: 0.5-spaced values in the lower half).

    Each entry carries its jackknife error and the number of independent excursions
    behind it: deep thresholds backed by a few hundred excursions drift (THEORY.md §8).
    Entries with at most ``min_exceed`` exceedances, or (when excursions are known)
    fewer than ``min_excursions`` excursions, are dropped.
    """
    edges = np.asarray(edges, dtype=float)
    if us is None:
        mid = 0.5 * (edges[0] + edges[-1])
        us = np.arange(-mid, -edges[0], 0.5)
    out = []
    for u in np.atleast_1d(us):
        est = tail_from_histogram(edges, counts, sums, float(u), outside=outside, excursions=excursions)
        if est.n_exceed > min_exceed and (est.n_excursions is None or est.n_excursions >= min_excursions):
            out.append(est)
    return out


def threshold_scan_result(res, us=None, *, min_excursions=20, **kwargs) -> list[TailEstimate]:
    """:func:`threshold_scan` on a :class:`levysde.simulate.SimulationResult` (default
    thresholds 0.5 .. 12 above the equilibrium, at least 20 excursions each)."""
    a = _result_arrays(res)
    if us is None:
        x0 = -res.meta.get("equilibrium", 0.0)
        us = x0 + np.arange(0.5, 12.01, 0.5)
    return threshold_scan(a["edges"], a["counts"], a["sums"], us, outside=a["outside"],
                          excursions=a["excursions"], min_excursions=min_excursions, **kwargs)


# --- tempering-limited fit -------------------------------------------------------------------

_GL_X, _GL_W = np.polynomial.legendre.leggauss(4)


@dataclass(frozen=True)
class TemperedFit:
    """Fit of exp(-b x') x'^(-1-alpha) (x' = X - x0) to the tail X > u.

    Attributes: u, x0, alpha, b (rate), se (jackknife), n_exceed.
    """

    u: float
    x0: float
    alpha: float
    b: float
    se: float
    n_exceed: float


def _bin_masses(b, lo, hi, u, x0, alpha):
    """int over [lo, hi] of exp(-b (x - u)) (x - x0)^(-1-alpha) dx, per bin (4-point Gauss-Legendre)."""
    half = 0.5 * (hi - lo)
    mid = 0.5 * (hi + lo)
    x = mid[:, None] + half[:, None] * _GL_X[None, :]
    f = np.exp(-b * (x - u)) * (x - x0) ** (-1.0 - alpha)
    return half * (f @ _GL_W)


def _tail_mass(b, a, u, x0, alpha):
    """int_a^inf exp(-b (x - u)) (x - x0)^(-1-alpha) dx on a geometric grid of GL panels."""
    # panels out to where exp(-b (x - a)) < 1e-18 (or 1e8 widths of the power law)
    span = 42.0 / b
    pts = a + np.concatenate([[0.0], span * np.geomspace(1e-4, 1.0, 60)])
    return float(_bin_masses(b, pts[:-1], pts[1:], u, x0, alpha).sum())


def _fit_b(n, lo, hi, n_tail, u, x0, alpha):
    """Binned MLE of b: bins [lo, hi] with counts n, plus n_tail beyond hi[-1]."""
    a_end = hi[-1]

    def negll(logb):
        b = math.exp(logb)
        m = _bin_masses(b, lo, hi, u, x0, alpha)
        t = _tail_mass(b, a_end, u, x0, alpha) if n_tail > 0 else 0.0
        total = m.sum() + t
        with np.errstate(divide="ignore"):
            ll = np.sum(np.where(n > 0, n * np.log(np.where(n > 0, m, 1.0)), 0.0)) - n.sum() * math.log(total)
            if n_tail > 0:
                ll += n_tail * (math.log(t) - math.log(total))
        return -ll

    r = optimize.minimize_scalar(negll, bounds=(math.log(1e-3), math.log(1e3)), method="bounded",
                                 options={"xatol": 1e-9})
    return math.exp(r.x)


def tempered_fit(edges, counts, u, *, alpha, x0=0.0, outside=None) -> TemperedFit:
    """Tempering-limited tail fit (THEORY.md §8, collapsed phase).

    Binned maximum likelihood of the density ``exp(-b x') x'^(-1-alpha)``,
    ``x' = X - x0``, of X = -zeta on X > u (alpha known), from per-group zeta
    histograms; mass below the histogram range (``outside[:, 0]``) enters as one
    extra bin. Jackknife error over groups.

    Parameters
    ----------
    edges : (B + 1,) zeta edges; counts : (G, B); u : threshold on X (> x0),
    snapped to an edge; alpha in (0, 2); x0 : X of the equilibrium (-zeta_eq).

    Returns TemperedFit. Raises ValueError for u <= x0 or no exceedances.
    """
    edges = np.asarray(edges, dtype=float)
    counts = np.atleast_2d(np.asarray(counts, dtype=float))
    k = _edge_index(edges, u)
    u_used = -edges[k]
    if not u_used > x0:
        raise ValueError(f"u must exceed x0 = {x0:g} (the equilibrium); got {u_used:g}")
    xe = -edges[:k + 1][::-1]                 # X edges from u upward
    lo, hi = xe[:-1], xe[1:]
    n_g = counts[:, :k][:, ::-1]
    tail_g = np.asarray(outside, dtype=float)[:, 0] if outside is not None else np.zeros(counts.shape[0])
    tot = n_g.sum() + tail_g.sum()
    if not tot > 0:
        raise ValueError(f"no samples beyond u = {u_used:g}")
    b = _fit_b(n_g.sum(axis=0), lo, hi, tail_g.sum(), u_used, x0, alpha)
    G = counts.shape[0]
    loo = [_fit_b(n_g.sum(axis=0) - n_g[g], lo, hi, tail_g.sum() - tail_g[g], u_used, x0, alpha)
           for g in range(G)] if G > 1 else []
    return TemperedFit(u=float(u_used), x0=float(x0), alpha=float(alpha), b=float(b),
                       se=jackknife(loo), n_exceed=float(tot))


def tempered_fit_result(res, u, **kwargs) -> TemperedFit:
    """:func:`tempered_fit` on a :class:`levysde.simulate.SimulationResult`."""
    return tempered_fit(res.hist_edges, res.hist_counts, u, alpha=res.meta["alpha"],
                        x0=-res.meta.get("equilibrium", 0.0), outside=res.hist_outside, **kwargs)
