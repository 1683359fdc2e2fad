"""Stationary left-tail estimators for zeta: the one home of tail estimation (docs/specification.md §8).

With X = -zeta (long time scales are the left tail of zeta) and a threshold u,

* the exponential-tail MLE, the Hill estimator of tau = e^X,
  ``beta_hat(u) = sum_{X>u} w / sum_{X>u} w (X - u)`` (:func:`hill_rate`; every
  estimator here reduces to it through per-group sums), from samples, weighted
  samples or histogram counts; from a run of :func:`levysde.simulation.simulate` it is
  exact at bin edges because the run also stores per-bin sums of zeta;
* errors by the jackknife over independent particle groups (samples along a path
  are correlated; the naive ``beta_hat/sqrt(k)`` is 10-20x too small);
* a stability-over-thresholds check of the power law: beta_hat at u against
  beta_hat at the deeper threshold ``u2 = u + log(4)/beta_hat(u)`` (a quarter of the
  exceedances lie beyond it under an exponential tail of X, i.e. a power law of tau),
  the difference divided by its jackknife error; the tail is flagged "not a power
  law" when |z| exceeds the two-sided 0.27% quantile (3 sigma) of Student's t with
  G - 1 degrees of freedom (G groups). Rates that climb with the threshold (e.g.
  exponentially distributed tau, or a tempered tail) fail it;
* the tail amplitude A of ``rho(zeta) ~ A e^{beta zeta}`` with its error
  (:func:`tail_fit`, the Tauberian input of docs/specification.md §5);
* a threshold scan reporting, for each u, the number of independent excursions
  (from the equilibrium) that reached X > u, and the effective number of
  independent exceedances ``(beta_hat/se)^2`` implied by the jackknife error;
* the tempering-limited fit of the collapsed phase: density of X proportional to
  ``exp(-b x') x'^(-1-alpha)`` on x > u, with ``x' = X - x0`` the distance from the
  equilibrium (alpha known), by binned maximum likelihood;
* right-censoring (``censored=`` of :func:`hill_rate`, :func:`tail_from_samples`,
  :func:`tail_fit`): a neuron whose time scale lies beyond what its measurement resolves
  (e.g. a unit that did not decay over the transport fit window) is known only to have
  X above its recorded value. Its exceedance enters the exposure but not the count:
  ``beta_hat = #(uncensored X > u) / sum_{X>u} (X - u)``, the exponential MLE under right
  censoring, which is also the censored Hill estimator of Einmahl, Fils-Villetard & Guillou
  (2008) (the Hill estimate divided by the uncensored fraction of the exceedances).

All estimators take per-group sufficient statistics, so that the same jackknife
code serves samples and histograms.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, stats

from levysde.core.validate import check_array, check_real, check_samples
from levysde.stats.jackknife import jackknife_se

__all__ = ["TailEstimate", "hill_rate", "hill_index", "tail_from_samples", "tail_from_histogram",
           "tail_from_result", "threshold_scan", "threshold_scan_result", "TemperedFit",
           "tempered_fit", "tempered_fit_result", "TailFit", "tail_fit",
           "power_law_note", "tail_check", "CHECK_LEVEL"]

#: two-sided level of the stability-over-thresholds check (the 3-sigma normal level)
CHECK_LEVEL = 0.0027
#: the check's deeper threshold: u2 = u + log(4)/beta_hat(u)
_CHECK_DEPTH = math.log(4.0)
#: fewest exceedances beyond u2 for the check to be made (else power_law is None)
_CHECK_MIN = 10


class HistogramRun(Protocol):
    """What the ``*_result`` estimators read of a run: the histograms and metadata of a
    :class:`levysde.simulation.SimulationResult` (a later layer, so named here by its shape)."""

    @property
    def hist_edges(self) -> np.ndarray: ...
    @property
    def hist_counts(self) -> np.ndarray: ...
    @property
    def hist_sums(self) -> np.ndarray: ...
    @property
    def hist_outside(self) -> np.ndarray: ...
    @property
    def excursion_counts(self) -> np.ndarray: ...
    @property
    def meta(self) -> RunMeta: ...


class RunMeta(Protocol):
    """What those estimators read of a run's metadata (:class:`levysde.simulation.SimulationMeta`)."""

    @property
    def equilibrium(self) -> float: ...
    @property
    def alpha(self) -> float: ...


# --- the Hill estimator ----------------------------------------------------------------------

def _hill(c, s):
    """beta_hat = (weight of the exceedances) / (their weighted excess sum), elementwise."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(c, dtype=float) / np.asarray(s, dtype=float)


def _censor_mask(censored, size):
    """Boolean (size,) mask of right-censored samples (all False for None); ValueError otherwise."""
    if censored is None:
        return np.zeros(size, dtype=bool)
    c = np.asarray(censored)
    if c.dtype != bool:
        raise ValueError(f"censored must be a boolean mask; got dtype {c.dtype}")
    c = c.ravel()
    if c.size != size:
        raise ValueError(f"censored must have one entry per sample ({size}); got {c.size}")
    return c


def hill_rate(x: ArrayLike, u: float, weights: ArrayLike | None = None, *,
              censored: ArrayLike | None = None) -> float:
    """Hill estimator ``beta_hat = sum_{x>u} w / sum_{x>u} w (x - u)`` (docs/specification.md §8).

    The MLE of the rate of an exponential tail of X above u, i.e. the Hill estimator
    of the power-law index of tau = e^X.

    Parameters
    ----------
    x : array_like
        Samples of X (any shape).
    u : float
        Threshold.
    weights : array_like, optional
        Shape of x, >= 0; integer weights are repetitions.
    censored : array_like of bool, optional
        Shape of x: True where the sample is right-censored, i.e. the true X is only known
        to exceed the recorded x (a time scale beyond what its measurement resolves). A
        censored exceedance adds its excess ``x - u`` to the exposure but not to the count.

    Returns
    -------
    float
        beta_hat (1/units of x); 0.0 when every exceedance is censored.

    Raises
    ------
    ValueError
        When no sample exceeds u, ``censored`` is not a boolean mask of x's size, or naming the
        argument for non-finite samples, weights or ``u``.

    Notes
    -----
    With censoring, ``beta_hat = sum_{x>u, uncensored} w / sum_{x>u} w (x - u)``: the
    maximum-likelihood rate of exponential excesses under right censoring, equal to the
    censored Hill estimator ``gamma_hat_Hill / p_hat`` (p_hat the uncensored fraction of the
    exceedances) of Einmahl, Fils-Villetard & Guillou (2008), written as a rate.

    References
    ----------
    J. H. J. Einmahl, A. Fils-Villetard, A. Guillou, "Statistics of extremes under random
    censoring", Bernoulli 14 (2008) 207-227.

    Examples
    --------
    >>> hill_rate([1.0, 2.0, 3.0, 4.0], 0.0)
    0.4
    >>> hill_rate([1.0, 2.0, 3.0, 4.0], 0.0, censored=[False, False, False, True])
    0.3
    """
    x = check_array("x", x, min_size=1).ravel()
    u = check_real("u", u, why="the threshold on X")
    w = np.ones_like(x) if weights is None else _weights(weights, x.size)
    cens = _censor_mask(censored, x.size)
    m = x > u
    if not np.any(m & (w > 0)):
        raise ValueError(f"no sample exceeds the threshold u = {u:g}")
    return float(_hill(w[m & ~cens].sum(), (w[m] * (x[m] - u)).sum()))


def hill_index(sizes: ArrayLike, u: float, *, factors: tuple[float, ...] = (1.0, 1.5, 2.0, 3.0),
               min_exceed: int = 10) -> list[tuple[float, float, float, int]]:
    """Hill scan of a power-law index from positive sizes (e.g. jump sizes, docs/specification.md §8).

    ``alpha_hat(u_i) = hill_rate(log sizes, log u_i)`` at ``u_i = u * factor`` for each
    factor with at least ``min_exceed`` sizes beyond, with the iid error
    ``alpha_hat / sqrt(k)``. Returns a list of tuples (u_i, alpha_hat, se, k).
    """
    z = check_array("sizes", sizes, min_size=1).ravel()
    check_real("u", u, 0.0, lo_open=True, why="the smallest size of the scan")
    check_array("factors", factors, ndim=1, min_size=1, lo=0.0, lo_open=True)
    z = z[z > 0]
    out = []
    for q in factors:
        k = int(np.count_nonzero(z > u * q))
        if k >= min_exceed:
            a = hill_rate(np.log(z), math.log(u * q))
            out.append((u * q, a, a / math.sqrt(k), k))
    return out


@dataclass(frozen=True)
class TailEstimate:
    """beta_hat(u) with its jackknife error and the stability-over-thresholds check.

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
    u_check, beta_check : the deeper threshold u2 = u + log(4)/beta_hat and beta_hat(u2)
    z_check : (beta_check - beta_hat) / (jackknife error of that difference)
    power_law : False when |z_check| exceeds the t_{G-1} quantile of level CHECK_LEVEL
        (the rate changes with the threshold: not a power law of tau); True when it
        passes; None when not testable (< 3 groups or < 10 exceedances beyond u2)
    n_censored : right-censored samples among the exceedances (0 without censoring); they
        count in the exposure, not in ``n_exceed``'s uncensored part
    """

    u: float
    beta_hat: float
    se: float
    n_exceed: float
    n_excursions: float | None
    n_effective: float
    u_check: float = math.nan
    beta_check: float = math.nan
    z_check: float = math.nan
    power_law: bool | None = None
    n_censored: float = 0.0

    def asdict(self) -> dict:
        return {k: getattr(self, k) for k in
                ("u", "beta_hat", "se", "n_exceed", "n_excursions", "n_effective",
                 "u_check", "beta_check", "z_check", "power_law", "n_censored")}


def _stability(at, u, beta, c1, s1):
    """The check of TailEstimate: ``at(u)`` gives (c_g, s_g, u_used, n) per group at a threshold;
    c1, s1 are the group sums at u itself."""
    nan = (math.nan, math.nan, math.nan, None)
    if not (math.isfinite(beta) and beta > 0):
        return nan
    c2, s2, u2, n2 = at(u + _CHECK_DEPTH / beta)
    G = c1.size
    if G < 3 or not u2 > u or not n2 >= _CHECK_MIN or not s2.sum() > 0:
        return (u2, math.nan, math.nan, None)
    C1, S1, C2, S2 = c1.sum(), s1.sum(), c2.sum(), s2.sum()
    b2 = float(_hill(C2, S2))
    diff_loo = _hill(C2 - c2, S2 - s2) - _hill(C1 - c1, S1 - s1)
    se = jackknife_se(diff_loo) if np.all(np.isfinite(diff_loo)) else math.nan
    if not se > 0:
        return (u2, b2, math.nan, None)
    z = (b2 - beta) / se
    crit = float(stats.t.ppf(1.0 - CHECK_LEVEL / 2.0, G - 1))
    return (float(u2), b2, float(z), bool(abs(z) <= crit))


def _estimate(at, u, n_exc=None, n_cens=None) -> TailEstimate:
    """From ``at(u) -> (c_g, s_g, u_used, n)``: per-group exceedance weights c_g (uncensored
    ones) and sums s_g of the excesses X - u_used (X > u_used, censored included), and the
    number n of exceedances; ``n_cens(u_used)``: the censored exceedances (None: no censoring)."""
    c_g, s_g, u_used, _ = at(u)
    C, S = c_g.sum(), s_g.sum()
    nc = 0.0 if n_cens is None else float(n_cens(u_used))
    if not (C > 0 and S > 0):
        return TailEstimate(float(u_used), float("nan"), float("nan"), float(C), n_exc, float("nan"),
                            n_censored=nc)
    beta = float(_hill(C, S))
    loo = _hill(C - c_g, S - s_g)
    se = jackknife_se(loo) if np.all(np.isfinite(loo)) else float("nan")
    neff = (beta / se) ** 2 if se > 0 else float("nan")
    u_chk, b_chk, z_chk, ok = _stability(at, u_used, beta, c_g, s_g)
    return TailEstimate(float(u_used), beta, float(se), float(C), n_exc, float(neff),
                        u_chk, b_chk, z_chk, ok, n_censored=nc)


def _weights(weights, n: int) -> np.ndarray:
    """Sample weights: finite, >= 0, one per sample (ValueError naming ``weights``)."""
    w = check_array("weights", weights, lo=0.0).ravel()
    if w.size != n:
        raise ValueError(f"weights must have the shape of x ({n} samples); got {np.shape(weights)}")
    return w


def _histograms(edges: ArrayLike, counts: ArrayLike, sums: ArrayLike | None = None, outside: ArrayLike | None = None,
                excursions: ArrayLike | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """Checked per-group histograms (ValueError naming the argument): finite strictly increasing
    ``edges``, finite counts >= 0 of shape (G, len(edges) - 1), finite ``sums`` of that shape,
    ``outside`` (G, 4) finite with counts >= 0, ``excursions`` of the counts' shape >= 0."""
    e = check_array("edges", edges, ndim=1, min_size=2, increasing=True)
    c = np.atleast_2d(check_array("counts", counts, ndim=(1, 2), lo=0.0))
    if c.shape[1] != e.size - 1:
        raise ValueError(f"counts must have shape (groups, {e.size - 1}); got {c.shape}")
    s = o = x = None
    if sums is not None:
        s = np.atleast_2d(check_array("sums", sums, ndim=(1, 2)))
        if s.shape != c.shape:
            raise ValueError("sums must have the same shape as counts")
    if outside is not None:
        o = check_array("outside", outside, shape=(c.shape[0], 4))
        if np.any(o[:, [0, 2]] < 0):
            raise ValueError("outside: its counts (columns 0 and 2) must be >= 0")
    if excursions is not None:
        x = np.atleast_2d(check_array("excursions", excursions, ndim=(1, 2), lo=0.0))
        if x.shape != c.shape:
            raise ValueError("excursions must have the same shape as counts")
    return e, c, s, o, x


def _sample_sums(x, w, lab, G, cens=None):
    """``at(u)`` for samples x with weights w and group labels lab in [0, G); with a censoring
    mask ``cens``, the counts c hold the uncensored exceedances only (the sums s all of them)."""
    def at(u):
        m = x > u
        mc = m if cens is None else m & ~cens
        c = np.bincount(lab[mc], weights=w[mc], minlength=G)
        s = np.bincount(lab[m], weights=w[m] * (x[m] - u), minlength=G)
        return c, s, float(u), int(np.count_nonzero(m & (w > 0)))
    return at


def tail_from_samples(x: ArrayLike, u: float, groups: ArrayLike | None = None,
                      weights: ArrayLike | None = None, *,
                      censored: ArrayLike | None = None) -> TailEstimate:
    """beta_hat(u) from samples of X = -zeta, jackknifed over groups, with the stability check.

    Parameters
    ----------
    x : (G, n) array (row g = samples of independent group g), or 1-d with ``groups``
    u : threshold (same units as x), a finite real number
    groups : optional int labels (same length as 1-d x) of independent groups (integers; no bools)
    weights : optional, shape of x, >= 0
    censored : optional boolean mask, shape of x: right-censored samples (the true X exceeds
        the recorded one), as in :func:`hill_rate`; ``n_censored`` of the result counts those
        beyond u

    Returns TailEstimate (n_excursions None). Raises ValueError naming the argument for bad
    shapes, non-finite samples or weights, negative weights or a non-finite ``u``.
    """
    x = check_array("x", x, min_size=1)
    u = check_real("u", u, why="the threshold on X")
    if groups is None:
        if x.ndim != 2:
            raise ValueError("x must be 2-d (groups, samples) when groups is not given")
        lab = np.repeat(np.arange(x.shape[0]), x.shape[1])
    else:
        g = check_array("groups", groups, min_size=1)
        if not np.all(g == np.round(g)):
            raise ValueError(f"groups must be integer labels; got {float(g[g != np.round(g)].flat[0])!r}")
        lab = np.unique(np.asarray(groups).ravel(), return_inverse=True)[1].ravel()
        if lab.size != x.size:
            raise ValueError("groups must have the same length as x")
    w = np.ones(x.size) if weights is None else _weights(weights, x.size)
    xr = x.ravel()
    if censored is None:
        return _estimate(_sample_sums(xr, w, lab, int(lab.max()) + 1), float(u))
    cens = _censor_mask(censored, x.size)
    return _estimate(_sample_sums(xr, w, lab, int(lab.max()) + 1, cens), float(u),
                     n_cens=lambda uu: np.count_nonzero(cens & (xr > uu) & (w > 0)))


def _edge_index(edges, u):
    """Index k of the zeta edge nearest to -u (the threshold on X = -zeta)."""
    k = int(np.argmin(np.abs(edges + u)))
    return k


def tail_from_histogram(edges: ArrayLike, counts: ArrayLike, sums: ArrayLike | None = None, u: float = 3.0, *,
                        outside: ArrayLike | None = None, excursions: ArrayLike | None = None) -> TailEstimate:
    """beta_hat(u) of X = -zeta from per-group histograms of zeta.

    Parameters
    ----------
    edges : (B + 1,) increasing zeta edges
    counts : (G, B) counts (or time-averaged counts) per group and bin
    sums : (G, B) per-bin sums of zeta. With sums (and ``outside``) the estimate is
        exact at bin edges; without, bin midpoints are used (error O(width^2 beta^2)).
    u : threshold on X; snapped to the nearest edge -u (reported in the result)
    outside : (G, 4) [count below, zeta-sum below, count above, zeta-sum above] of the
        histogram range (as stored by :func:`levysde.simulation.simulate`); without it,
        mass below the range is ignored.
    excursions : (G, B) depth histogram of excursions (their minima), optional

    Returns TailEstimate. Raises ValueError naming the argument (shapes, non-finite entries, counts < 0, u).
    """
    ed, cn, sm, out_, exc = _histograms(edges, counts, sums, outside, excursions)
    u = check_real("u", u, why="the threshold on X")
    if sm is None:
        sm = cn * 0.5 * (ed[:-1] + ed[1:])
    edges, counts, sums, outside, excursions = ed, cn, sm, out_, exc

    def at(uu):
        k = _edge_index(edges, uu)
        u_used = 0.0 - edges[k]              # 0.0 - 0.0 = 0.0, not -0.0
        c_g = counts[:, :k].sum(axis=1)
        z_g = sums[:, :k].sum(axis=1)         # sum of zeta over samples with zeta < edge
        if outside is not None:
            c_g = c_g + outside[:, 0]
            z_g = z_g + outside[:, 1]
        return c_g, -z_g - u_used * c_g, float(u_used), float(c_g.sum())   # sums of X - u

    n_exc = None
    if excursions is not None:
        n_exc = float(excursions[:, :_edge_index(edges, u)].sum())
    return _estimate(at, u, n_exc)


def _result_arrays(res):
    return dict(edges=res.hist_edges, counts=res.hist_counts, sums=res.hist_sums,
                outside=res.hist_outside, excursions=res.excursion_counts)


def tail_from_result(res: HistogramRun, u: float, **kwargs: Any) -> TailEstimate:
    """:func:`tail_from_histogram` on a :class:`levysde.simulation.SimulationResult`."""
    a = _result_arrays(res)
    return tail_from_histogram(a["edges"], a["counts"], a["sums"], u, outside=a["outside"],
                               excursions=a["excursions"], **kwargs)


def threshold_scan(edges: ArrayLike, counts: ArrayLike, sums: ArrayLike | None = None, us: ArrayLike | None = None,
                   *, outside: ArrayLike | None = None, excursions: ArrayLike | None = None,
                   min_exceed: float = 0.0, min_excursions: float = 0) -> list[TailEstimate]:
    """beta_hat(u) over thresholds ``us`` (default: 0.5-spaced values in the lower half).

    Each entry carries its jackknife error and the number of independent excursions
    behind it: deep thresholds backed by a few hundred excursions drift (docs/specification.md §8).
    Entries with at most ``min_exceed`` exceedances, or (when excursions are known)
    fewer than ``min_excursions`` excursions, are dropped.
    """
    edges = check_array("edges", edges, ndim=1, min_size=2, increasing=True)
    if us is None:
        mid = 0.5 * (edges[0] + edges[-1])
        us = np.arange(-mid, -edges[0], 0.5)
    us = check_array("us", us, ndim=(0, 1))
    check_real("min_exceed", min_exceed, 0.0)
    check_real("min_excursions", min_excursions, 0.0)
    out = []
    for u in np.atleast_1d(us):
        est = tail_from_histogram(edges, counts, sums, float(u), outside=outside, excursions=excursions)
        if est.n_exceed > min_exceed and (est.n_excursions is None or est.n_excursions >= min_excursions):
            out.append(est)
    return out


def threshold_scan_result(res: HistogramRun, us: ArrayLike | None = None, *, min_excursions: float = 20,
                          **kwargs: Any) -> list[TailEstimate]:
    """:func:`threshold_scan` on a :class:`levysde.simulation.SimulationResult` (default
    thresholds 0.5 .. 12 above the equilibrium, at least 20 excursions each)."""
    a = _result_arrays(res)
    if us is None:
        x0 = -res.meta.equilibrium
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
    f = np.exp(-b * (x - u) - (1.0 + alpha) * np.log(x - x0))      # one exponential: no inf * 0
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


def tempered_fit(edges: ArrayLike, counts: ArrayLike, u: float, *, alpha: float, x0: float = 0.0,
                 outside: ArrayLike | None = None) -> TemperedFit:
    """Tempering-limited tail fit (docs/specification.md §8, collapsed phase).

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
    edges, counts, _, outside, _ = _histograms(edges, counts, outside=outside)
    u = check_real("u", u, why="the threshold on X")
    check_real("alpha", alpha, 0.0, 2.0, lo_open=True, hi_open=True)
    x0 = check_real("x0", x0, why="X of the equilibrium")
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
                       se=jackknife_se(loo), n_exceed=float(tot))


def tempered_fit_result(res: HistogramRun, u: float, **kwargs: Any) -> TemperedFit:
    """:func:`tempered_fit` on a :class:`levysde.simulation.SimulationResult`."""
    return tempered_fit(res.hist_edges, res.hist_counts, u, alpha=res.meta.alpha,
                        x0=-res.meta.equilibrium, outside=res.hist_outside, **kwargs)


# --- amplitude and rate from samples (the Tauberian input) -----------------------------------

@dataclass(frozen=True)
class TailFit:
    """Left-tail fit rho(zeta) ~ A e^{beta zeta} (zeta -> -inf), docs/specification.md §1, §8.

    Attributes: A, beta and their standard errors se_A, se_beta; u (threshold on
    X = -zeta); k (number of exceedances X > u); n (samples); method
    ('iid' or 'jackknife over G groups'); u_check, beta_check, z_check, power_law:
    the stability-over-thresholds check of :class:`TailEstimate` (over single samples
    when no groups are given).
    """

    A: float
    beta: float
    se_A: float
    se_beta: float
    u: float
    k: int
    n: int
    method: str
    u_check: float = math.nan
    beta_check: float = math.nan
    z_check: float = math.nan
    power_law: bool | None = None
    n_censored: int = 0


def _log_amplitude(beta, c, n_w, u):
    """log A from P(X > u) = (A/beta) e^{-beta u}: A = beta p e^{beta u}, p = c/n_w."""
    return math.log(beta) + math.log(c / n_w) + beta * u


def _default_threshold(x, w, tail_fraction):
    check_real("tail_fraction", tail_fraction, 0.0, 1.0, lo_open=True, hi_open=True)
    order = np.argsort(x)
    cw = np.cumsum(w[order]) / w.sum()
    return float(x[order][min(np.searchsorted(cw, 1 - tail_fraction), x.size - 1)])


def tail_fit(zeta: ArrayLike, *, weights: ArrayLike | None = None, u: float | None = None,
             tail_fraction: float = 0.05, groups: ArrayLike | None = None,
             censored: ArrayLike | None = None) -> TailFit:
    """Tail amplitude A and rate beta of the left tail of zeta from samples (docs/specification.md §8).

    With X = -zeta and threshold u, the Hill MLE (:func:`hill_rate`)
    ``beta = sum_{X>u} w / sum_{X>u} w (X - u)``, and from
    P(X > u) = (A / beta) e^{-beta u}: ``A = beta p e^{beta u}`` with p the
    (weighted) fraction above u.

    Standard errors: for independent samples se(beta) = beta / sqrt(k_eff) and
    se(log A) = sqrt(((1 + beta u)^2 + 1 - p) / k_eff) (delta method, k_eff the
    effective number of exceedances); with ``groups`` (one label per sample,
    >= 2 independent groups, e.g. particle groups of a simulation) a leave-one-
    group-out jackknife is used instead, because samples along a path are
    correlated and the iid error is then 10-20x too small (docs/specification.md §8). The
    stability check (``power_law``) jackknifes over the groups, or over single
    samples when none are given (valid for independent samples only).

    Parameters
    ----------
    zeta : (n,) samples; weights : optional (n,) >= 0
    u : threshold on X = -zeta; default: the (1 - tail_fraction) quantile of X
    tail_fraction : in (0, 1), used when u is None
    groups : optional (n,) labels
    censored : optional (n,) boolean mask of left-censored zeta (right-censored X = -zeta: the
        neuron's time scale is only known to exceed exp(-zeta), :func:`hill_rate`). The rate is
        the censored MLE, P(X > u) counts the censored exceedances, and the errors use the
        uncensored count (the Fisher information of censored exponential excesses).

    Returns
    -------
    TailFit

    Raises
    ------
    ValueError for bad samples/weights, tail_fraction outside (0, 1), fewer than
    10 exceedances, or fewer than 2 groups.
    """
    z, w = check_samples(zeta, weights)
    w = np.ones_like(z) if w is None else w
    x = -z
    if u is None:
        u = _default_threshold(x, w, tail_fraction)
    else:
        u = check_real("u", u)
    cens = _censor_mask(censored, z.size)
    k = int(np.count_nonzero(x > u))
    k_unc = int(np.count_nonzero((x > u) & ~cens))
    if k_unc < 10:
        raise ValueError(f"u: only {k_unc} uncensored samples beyond the threshold u = {u:.6g}; need >= 10")
    if groups is None:
        lab, G = np.arange(z.size), z.size
    else:
        g = np.asarray(groups).ravel()
        if g.shape != z.shape:
            raise ValueError(f"groups must have one label per sample ({z.size}); got {np.shape(groups)}")
        lab = np.unique(g, return_inverse=True)[1].ravel()
        G = int(lab.max()) + 1
        if G < 2:
            raise ValueError("groups must contain at least 2 distinct labels for the jackknife")
    at = _sample_sums(x, w, lab, G, cens if cens.any() else None)
    c_g, s_g, _, _ = at(u)
    beta = hill_rate(x, u, w, censored=cens)   # not from the group sums: the same value with any groups
    C, S, n_w = c_g.sum(), s_g.sum(), w.sum()
    a_g = np.bincount(lab[x > u], weights=w[x > u], minlength=G)     # all exceedances (P(X > u))
    logA = _log_amplitude(beta, a_g.sum(), n_w, u)
    unc = (x > u) & ~cens
    k_eff = C * C / (w[unc] ** 2).sum()
    if groups is None:
        se_b = beta / math.sqrt(k_eff)
        se_logA = math.sqrt(((1 + beta * u) ** 2 + 1 - a_g.sum() / n_w) / k_eff)
        method = "iid"
    else:
        n_g = np.bincount(lab, weights=w, minlength=G)
        k_g = np.bincount(lab[unc], minlength=G)
        if np.any(k_unc - k_g < 10):
            raise ValueError(f"u: leaving out one group leaves fewer than 10 of the {k} samples "
                             f"beyond the threshold u = {u:.6g}; need >= 10 for the jackknife")
        b_loo = _hill(C - c_g, S - s_g)
        la_loo = np.array([_log_amplitude(b, a_g.sum() - a, n_w - nn, u)
                           for b, a, nn in zip(b_loo, a_g, n_g, strict=True)])
        se_b, se_logA = jackknife_se(b_loo), jackknife_se(la_loo)
        method = f"jackknife over {G} groups"
    u_chk, b_chk, z_chk, ok = _stability(at, float(u), beta, c_g, s_g)
    A = math.exp(logA)
    return TailFit(A=A, beta=beta, se_A=A * se_logA, se_beta=float(se_b), u=float(u), k=k,
                   n=int(z.size), method=method, u_check=u_chk, beta_check=b_chk, z_check=z_chk,
                   power_law=ok, n_censored=int(k - k_unc))


def power_law_note(est: TailEstimate | TailFit) -> str | None:
    """One line saying "not a power law ..." when a :class:`TailEstimate` or :class:`TailFit`
    failed the stability check, else None (also when the check could not be made)."""
    if getattr(est, "power_law", None) is not False:
        return None
    b = est.beta_hat if hasattr(est, "beta_hat") else est.beta
    return (f"not a power law: the tail rate of X = -zeta changes with the threshold, "
            f"{b:.4g} at u = {est.u:.4g} but {est.beta_check:.4g} at u = {est.u_check:.4g} "
            f"(z = {est.z_check:.1f}); beta and the Tauberian slope do not apply")


def tail_check(*, zeta: ArrayLike | None = None, weights: ArrayLike | None = None,
               hist: tuple[ArrayLike, ArrayLike, ArrayLike | None, ArrayLike | None] | None = None,
               tail_fraction: float = 0.05, n_groups: int = 8) -> TailFit | TailEstimate | None:
    """Tail estimate with the power-law check at the default threshold (docs/specification.md §8).

    The threshold u is the (1 - tail_fraction) quantile of X = -zeta. Give either
    ``zeta`` (independent samples, optional ``weights``; grouped by index modulo
    ``n_groups`` for the jackknife, :func:`tail_fit`) or ``hist = (edges, counts,
    sums, outside)`` (per-group zeta histograms as stored by a simulation run;
    ``sums``/``outside`` may be None; :func:`tail_from_histogram`).

    Returns a :class:`TailFit` or :class:`TailEstimate` (its ``power_law`` and
    :func:`power_law_note` say whether the tail is a power law of tau), or None when
    the tail has too few samples for an estimate.
    Raises ValueError when not exactly one of zeta, hist is given.
    """
    if (zeta is None) == (hist is None):
        raise ValueError("give exactly one of zeta, hist")
    if zeta is not None:
        z, w = check_samples(zeta, weights)
        try:
            return tail_fit(z, weights=w, tail_fraction=tail_fraction,
                            groups=np.arange(z.size) % max(2, min(n_groups, z.size)))
        except ValueError:
            return None
    assert hist is not None                     # exactly one of zeta, hist (checked above)
    edges, counts, sums, outside = hist
    edges, counts, sums, outside, _ = _histograms(edges, counts, sums, outside)
    check_real("tail_fraction", tail_fraction, 0.0, 1.0, lo_open=True, hi_open=True)
    below = 0.0 if outside is None else float(np.asarray(outside, dtype=float)[:, 0].sum())
    total = counts.sum() + below + (0.0 if outside is None else float(np.asarray(outside)[:, 2].sum()))
    cum = below + np.concatenate([[0.0], np.cumsum(counts.sum(axis=0))])   # mass below each edge
    k = int(np.searchsorted(cum, tail_fraction * total))
    if not 0 < k < edges.size or not cum[k] > 0:
        return None
    return tail_from_histogram(edges, counts, sums, float(-edges[k]), outside=outside)
