r"""Stationary left-tail estimators for zeta: the one home of tail estimation (docs/specification.md §8).

With :math:`X = -\zeta` (long time scales are the left tail of :math:`\zeta`) and a threshold
:math:`u`,

* the exponential-tail MLE, the Hill estimator of :math:`\tau = e^X`,

  .. math::

      \hat\beta(u) = \frac{\sum_{X>u} w}{\sum_{X>u} w\, (X - u)}

  (:func:`hill_rate`; every estimator here reduces to it through per-group sums), from
  samples, weighted samples or histogram counts; from a run of
  :func:`levysde.simulation.simulate` it is exact at bin edges because the run also stores
  per-bin sums of :math:`\zeta`;
* errors by the jackknife over independent particle groups (samples along a path
  are correlated; the naive :math:`\hat\beta/\sqrt{k}` is 10-20x too small);
* a stability-over-thresholds check of the power law: :math:`\hat\beta` at :math:`u` against
  :math:`\hat\beta` at the deeper threshold :math:`u_2 = u + \log(4)/\hat\beta(u)` (a quarter of
  the exceedances lie beyond it under an exponential tail of :math:`X`, i.e. a power law of
  :math:`\tau`), the difference divided by its jackknife error; the tail is flagged "not a
  power law" when :math:`|z|` exceeds the two-sided 0.27% quantile (:math:`3\sigma`) of
  Student's :math:`t` with :math:`G - 1` degrees of freedom (:math:`G` groups). Rates that
  climb with the threshold (e.g. exponentially distributed :math:`\tau`, or a tempered tail)
  fail it;
* the tail amplitude :math:`A` of :math:`\rho(\zeta) \sim A e^{\beta \zeta}` with its error
  (:func:`tail_fit`, the Tauberian input of docs/specification.md §5);
* a threshold scan reporting, for each :math:`u`, the number of independent excursions
  (from the equilibrium) that reached :math:`X > u`, and the effective number of
  independent exceedances :math:`(\hat\beta/\mathrm{se})^2` implied by the jackknife error;
* the tempering-limited fit of the collapsed phase: density of :math:`X` proportional to
  :math:`e^{-b x'} x'^{-1-\alpha}` on :math:`x > u`, with :math:`x' = X - x_0` the distance
  from the equilibrium (:math:`\alpha` known), by binned maximum likelihood;
* right-censoring (``censored=`` of :func:`hill_rate`, :func:`tail_from_samples`,
  :func:`tail_fit`): a neuron whose time scale lies beyond what its measurement resolves
  (e.g. a unit that did not decay over the transport fit window) is known only to have
  :math:`X` above its recorded value. Its exceedance enters the exposure but not the count:

  .. math::

      \hat\beta = \frac{\#(\text{uncensored } X > u)}{\sum_{X>u} (X - u)},

  the exponential MLE under right censoring, which is also the censored Hill estimator of
  Einmahl, Fils-Villetard & Guillou (2008) (the Hill estimate divided by the uncensored
  fraction of the exceedances).

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

from levysde.core.validate import check_array, check_int, check_real, check_samples
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
    r"""Hill estimator :math:`\hat\beta = \sum_{x>u} w / \sum_{x>u} w\,(x - u)` (the specification, §8).

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
        :math:`\hat\beta` (1/units of x); 0.0 when every exceedance is censored.

    Raises
    ------
    ValueError
        When no sample exceeds u, ``censored`` is not a boolean mask of x's size, or naming the
        argument for non-finite samples, weights or ``u``.

    Notes
    -----
    .. math::

        \hat\beta(u) = \frac{\sum_{x_i > u,\ \text{uncensored}} w_i}{\sum_{x_i > u} w_i\,(x_i - u)},

    the maximum-likelihood rate of exponential excesses (with right censoring when some samples
    are censored), i.e. the Hill estimator of the power-law index of :math:`\tau = e^X`
    (Hill 1975). Under censoring it equals the censored Hill estimator
    :math:`\hat\gamma_{\mathrm{Hill}} / \hat p` (:math:`\hat p` the uncensored fraction of
    the exceedances) of Einmahl, Fils-Villetard & Guillou (2008), written as a rate.

    References
    ----------
    B. M. Hill (1975), "A simple general approach to inference about the tail of a
    distribution", Ann. Statist. 3, 1163-1174.
    J. H. J. Einmahl, A. Fils-Villetard, A. Guillou, "Statistics of extremes under random
    censoring", Bernoulli 14 (2008) 207-227.
    The specification, §8 (:doc:`/specification`).

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
    r"""Hill scan of a power-law index from positive sizes (e.g. jump sizes).

    Parameters
    ----------
    sizes : array_like
        Sizes of any shape (e.g. absolute jump sizes); finite; those <= 0 are left out.
    u : float
        The smallest threshold of the scan, > 0 (units of the sizes).
    factors : tuple of float, optional
        Thresholds :math:`u_i = u \cdot \mathrm{factor}_i`, each factor > 0 (default 1, 1.5, 2, 3).
    min_exceed : int, optional
        Fewest sizes beyond a threshold for it to be reported, an integer >= 1 (default 10).

    Returns
    -------
    list of tuple (float, float, float, int)
        ``(u_i, alpha_hat, se, k)`` for every threshold with at least ``min_exceed`` of the k
        sizes beyond it, in the order of ``factors``.

    Raises
    ------
    ValueError
        Naming ``sizes`` (empty or not finite), ``u`` (not > 0), ``factors`` (not > 0) or
        ``min_exceed`` (not an integer >= 1).

    Notes
    -----
    :math:`\hat\alpha(u_i) = \hat\beta(\log u_i)` of the log sizes (:func:`hill_rate`: the Hill
    estimator of a Pareto tail :math:`P(Z > z) \propto z^{-\alpha}`), with the i.i.d. error
    :math:`\hat\alpha/\sqrt{k}`; an index that drifts with the threshold means the tail is not
    yet a power law there.

    References
    ----------
    B. M. Hill (1975), Ann. Statist. 3, 1163-1174. The specification, §8
    (:doc:`/specification`).

    Examples
    --------
    Pareto sizes of index 1.5:

    >>> rng = np.random.default_rng(0)
    >>> sizes = (1 - rng.random(20000)) ** (-1 / 1.5)
    >>> for u, a, se, k in hill_index(sizes, 2.0, factors=(1.0, 2.0)):
    ...     print(u, round(a, 2), round(se, 2), k)
    2.0 1.52 0.02 7176
    4.0 1.46 0.03 2441
    """
    z = check_array("sizes", sizes, min_size=1).ravel()
    check_real("u", u, 0.0, lo_open=True, why="the smallest size of the scan")
    check_array("factors", factors, ndim=1, min_size=1, lo=0.0, lo_open=True)
    min_exceed = check_int("min_exceed", min_exceed, 1)
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
    r""":math:`\hat\beta(u)` with its jackknife error and the stability-over-thresholds check.

    Returned by :func:`tail_from_samples`, :func:`tail_from_histogram`, :func:`threshold_scan`
    and their ``*_result`` forms; ``asdict()`` gives the fields as a dict (JSON output).

    Attributes
    ----------
    u : float
        Threshold on X = -zeta actually used (snapped to a bin edge for histograms).
    beta_hat : float
        :math:`1/\operatorname{mean}(X - u \mid X > u)` over all groups (NaN when there are no
        exceedances); units 1/zeta.
    se : float
        Jackknife standard error over groups (NaN with < 2 groups).
    n_exceed : float
        Number (or time-averaged count) of samples with X > u (the uncensored ones).
    n_excursions : float or None
        Independent excursions from the equilibrium that reached X > u (None when unknown).
    n_effective : float
        :math:`(\hat\beta/\mathrm{se})^2`, the number of independent exponential samples that
        would give the same error.
    u_check, beta_check : float
        The deeper threshold :math:`u_2 = u + \log 4/\hat\beta(u)` and :math:`\hat\beta(u_2)`.
    z_check : float
        :math:`(\hat\beta(u_2) - \hat\beta(u))` divided by the jackknife error of that
        difference.
    power_law : bool or None
        False when :math:`|z|` exceeds the :math:`t_{G-1}` quantile of two-sided level
        :data:`CHECK_LEVEL` (the rate changes with the threshold: not a power law of tau); True
        when it passes; None when not testable (< 3 groups or < 10 exceedances beyond
        :math:`u_2`).
    n_censored : float
        Right-censored samples among the exceedances (0 without censoring); they count in the
        exposure, not in ``n_exceed``.

    Notes
    -----
    Under an exponential tail of X a quarter of the exceedances of u lie beyond :math:`u_2`, and
    :math:`\hat\beta(u_2)` estimates the same rate; a rate that climbs with the threshold
    (e.g. exponentially distributed tau, or a tempered tail) fails the check (module docstring;
    the specification, §8, :doc:`/specification`).

    Examples
    --------
    >>> x = np.random.default_rng(1).exponential(0.5, size=(8, 2000))   # rate 2, 8 groups
    >>> est = tail_from_samples(x, 1.0)
    >>> print(round(est.beta_hat, 3), round(est.se, 3), est.power_law)
    1.989 0.023 True
    >>> sorted(est.asdict())[:3]
    ['beta_check', 'beta_hat', 'n_censored']
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
    r""":math:`\hat\beta(u)` from samples of :math:`X = -\zeta`, jackknifed over groups, with the stability check.

    Parameters
    ----------
    x : array_like, shape (G, n) or (n,)
        Samples of X = -zeta: row g holds the samples of independent group g, or a 1-d array
        with ``groups``. Finite.
    u : float
        Threshold on X (same units as x), finite.
    groups : array_like of int, optional
        One label per sample of a 1-d ``x``: the independent groups of the jackknife
        (integers; no bools). Required when ``x`` is 1-d.
    weights : array_like, optional
        Shape of x, >= 0 (integer weights are repetitions).
    censored : array_like of bool, optional
        Shape of x: right-censored samples (the true X exceeds the recorded one), as in
        :func:`hill_rate`; ``n_censored`` of the result counts those beyond u.

    Returns
    -------
    TailEstimate
        :math:`\hat\beta(u)`, its jackknife error over the groups and the stability check
        (``n_excursions`` None).

    Raises
    ------
    ValueError
        Naming the argument for bad shapes, non-finite samples or weights, negative weights,
        non-integer group labels or a non-finite ``u``.

    Notes
    -----
    :math:`\hat\beta(u)` of :func:`hill_rate` on all samples; the error is the delete-a-group
    jackknife (:func:`levysde.stats.jackknife.jackknife_se`) of the same ratio of per-group
    sums, since samples along one path are correlated (the naive
    :math:`\hat\beta/\sqrt{k}` is then 10-20 times too small).

    References
    ----------
    B. M. Hill (1975), Ann. Statist. 3, 1163-1174; B. Efron and R. J. Tibshirani (1993),
    *An Introduction to the Bootstrap*, §11.2. The specification, §8 (:doc:`/specification`).

    Examples
    --------
    >>> x = np.random.default_rng(1).exponential(0.5, size=(8, 2000))   # X ~ Exp(rate 2)
    >>> est = tail_from_samples(x, 1.0)
    >>> print(round(est.beta_hat, 3), round(est.se, 3), est.n_exceed)
    1.989 0.023 2127.0
    >>> est1 = tail_from_samples(x.ravel(), 1.0, groups=np.repeat(np.arange(8), 2000))
    >>> print(est1.beta_hat == est.beta_hat)
    True
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
    r""":math:`\hat\beta(u)` of :math:`X = -\zeta` from per-group histograms of :math:`\zeta`.

    Parameters
    ----------
    edges : array_like, shape (B + 1,)
        Strictly increasing, finite zeta edges.
    counts : array_like, shape (G, B)
        Counts (or time-averaged counts) >= 0 per group and bin.
    sums : array_like, shape (G, B), optional
        Per-bin sums of zeta. With sums (and ``outside``) the estimate is exact at bin edges;
        without, bin midpoints are used (error :math:`O(h^2\beta^2)` for bin width h).
    u : float, optional
        Threshold on X (default 3); snapped to the nearest edge ``-u`` (reported in the result).
    outside : array_like, shape (G, 4), optional
        ``[count below, zeta-sum below, count above, zeta-sum above]`` the histogram range (as
        stored by :func:`levysde.simulation.simulate`); without it, mass below the range is
        ignored.
    excursions : array_like, shape (G, B), optional
        Depth histogram of the excursions (their minima), >= 0; gives ``n_excursions``.

    Returns
    -------
    TailEstimate
        :math:`\hat\beta` at the snapped threshold, its jackknife error over the G groups and the
        stability check.

    Raises
    ------
    ValueError
        Naming the argument: shapes, non-finite entries, counts < 0, edges not increasing, a
        non-finite ``u``.

    Notes
    -----
    With the per-bin sums, the Hill ratio of :func:`hill_rate` over the bins beyond the edge
    :math:`-u`, :math:`\hat\beta = \sum c / \sum (-z - u\,c)` (c the counts, z the zeta sums),
    is exactly the sample estimate; the jackknife runs over the groups (the specification, §8,
    :doc:`/specification`).

    Examples
    --------
    Histograms of the samples of :func:`tail_from_samples`'s example give the same estimate:

    >>> x = np.random.default_rng(1).exponential(0.5, size=(8, 2000))
    >>> edges = np.linspace(-12.0, 0.0, 241)
    >>> counts = np.array([np.histogram(-r, edges)[0] for r in x])
    >>> sums = np.array([np.histogram(-r, edges, weights=-r)[0] for r in x])
    >>> est = tail_from_histogram(edges, counts, sums, 1.0)
    >>> print(round(est.beta_hat, 3), bool(np.isclose(est.beta_hat, tail_from_samples(x, 1.0).beta_hat)))
    1.989 True
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
    r""":func:`tail_from_histogram` on a :class:`levysde.simulation.SimulationResult`.

    Parameters
    ----------
    res : SimulationResult
        A simulation run (or any object with its histogram attributes ``hist_edges``,
        ``hist_counts``, ``hist_sums``, ``hist_outside``, ``excursion_counts``).
    u : float
        Threshold on X = -zeta (absolute, not a depth beyond the equilibrium), snapped to an
        edge.
    **kwargs
        Passed on to :func:`tail_from_histogram`.

    Returns
    -------
    TailEstimate
        With ``n_excursions`` from the run's excursion depths.

    Raises
    ------
    ValueError
        As :func:`tail_from_histogram`. (:meth:`levysde.simulation.SimulationResult.tail` also
        checks that u lies inside the histogram.)

    Examples
    --------
    >>> res = levysde.simulate(3.0, particles=256, t_end=30.0, burn_in=5.0, dt=0.02, seed=1)
    >>> est = tail_from_result(res, 3.0)
    >>> print(est.u, est.n_excursions, bool(abs(est.beta_hat - 0.808) < 4 * est.se))
    3.0 186.0 True
    """
    a = _result_arrays(res)
    return tail_from_histogram(a["edges"], a["counts"], a["sums"], u, outside=a["outside"],
                               excursions=a["excursions"], **kwargs)


def threshold_scan(edges: ArrayLike, counts: ArrayLike, sums: ArrayLike | None = None, us: ArrayLike | None = None,
                   *, outside: ArrayLike | None = None, excursions: ArrayLike | None = None,
                   min_exceed: float = 0.0, min_excursions: float = 0) -> list[TailEstimate]:
    r""":math:`\hat\beta(u)` over thresholds ``us``, from per-group histograms of :math:`\zeta`.

    Each entry carries its jackknife error and the number of independent excursions
    behind it: deep thresholds backed by a few hundred excursions drift (the specification,
    §8). Entries with at most ``min_exceed`` exceedances, or (when excursions are known)
    fewer than ``min_excursions`` excursions, are dropped.

    Parameters
    ----------
    edges, counts, sums : array_like
        The histograms, as for :func:`tail_from_histogram`.
    us : array_like, optional
        Thresholds on X = -zeta (scalar or 1-d, finite); default 0.5-spaced values from the
        centre of the histogram range to its lowest edge.
    outside, excursions : array_like, optional
        As for :func:`tail_from_histogram`.
    min_exceed : float, optional
        Drop entries with at most this many exceedances (>= 0, default 0).
    min_excursions : float, optional
        Drop entries backed by fewer excursions (>= 0, default 0; used only with
        ``excursions``).

    Returns
    -------
    list of TailEstimate
        One per kept threshold, in the order of ``us``.

    Raises
    ------
    ValueError
        Naming the argument, as :func:`tail_from_histogram`, or ``us``, ``min_exceed``,
        ``min_excursions``.

    Examples
    --------
    >>> x = np.random.default_rng(1).exponential(0.5, size=(8, 2000))   # rate 2
    >>> edges = np.linspace(-12.0, 0.0, 241)
    >>> counts = np.array([np.histogram(-r, edges)[0] for r in x])
    >>> sums = np.array([np.histogram(-r, edges, weights=-r)[0] for r in x])
    >>> for e in threshold_scan(edges, counts, sums, [0.5, 1.0, 2.0]):
    ...     print(e.u, round(e.beta_hat, 2), round(e.se, 2))
    0.5 2.02 0.02
    1.0 1.99 0.02
    2.0 2.04 0.15
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
    """:func:`threshold_scan` on a :class:`levysde.simulation.SimulationResult`.

    Parameters
    ----------
    res : SimulationResult
        A simulation run (or an object with its histogram attributes and ``meta.equilibrium``).
    us : array_like, optional
        Thresholds on X = -zeta (absolute); default 0.5, 1, ..., 12 beyond the equilibrium
        ``-res.meta.equilibrium``.
    min_excursions : float, optional
        Keep only thresholds reached by at least this many excursions (default 20).
    **kwargs
        Passed on to :func:`threshold_scan` (e.g. ``min_exceed``).

    Returns
    -------
    list of TailEstimate
        The kept thresholds, in order.

    Raises
    ------
    ValueError
        As :func:`threshold_scan`.

    Examples
    --------
    >>> res = levysde.simulate(3.0, particles=256, t_end=30.0, burn_in=5.0, dt=0.02, seed=1)
    >>> scan = threshold_scan_result(res)
    >>> print([e.u for e in scan][:4], all(e.n_excursions >= 20 for e in scan))
    [0.5, 1.0, 1.5, 2.0] True
    """
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
    r"""Fit of :math:`e^{-b x'} x'^{-1-\alpha}` (:math:`x' = X - x_0`) to the tail X > u.

    Returned by :func:`tempered_fit` and :func:`tempered_fit_result`.

    Attributes
    ----------
    u : float
        Threshold on X = -zeta actually used (a histogram edge).
    x0 : float
        X of the equilibrium, :math:`-\zeta_{eq}`.
    alpha : float
        The stability index, held fixed, in (0, 2).
    b : float
        The fitted tempering rate (1/zeta units; estimates lam in a tempering-limited phase).
    se : float
        Its jackknife standard error over the groups (NaN with one group).
    n_exceed : float
        Samples (or time-averaged counts) beyond u.

    Examples
    --------
    >>> TemperedFit(u=1.0, x0=0.0, alpha=0.5, b=1.5, se=0.01, n_exceed=100.0).b
    1.5
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
    r"""Tempering-limited tail fit (the specification, §8, collapsed phase).

    Binned maximum likelihood of the density :math:`\propto e^{-b x'} x'^{-1-\alpha}`,
    :math:`x' = X - x_0`, of X = -zeta on X > u (alpha known), from per-group zeta
    histograms; mass below the histogram range (``outside[:, 0]``) enters as one
    extra bin. Jackknife error over groups.

    Parameters
    ----------
    edges : array_like, shape (B + 1,)
        Strictly increasing zeta edges.
    counts : array_like, shape (G, B)
        Counts >= 0 per group and bin.
    u : float
        Threshold on X (> x0), snapped to the nearest edge.
    alpha : float
        Stability index in (0, 2), known (keyword only).
    x0 : float, optional
        X of the equilibrium, :math:`-\zeta_{eq}` (default 0).
    outside : array_like, shape (G, 4), optional
        As for :func:`tail_from_histogram`; its first column (mass beyond the range) enters
        as one bin.

    Returns
    -------
    TemperedFit
        The rate b and its jackknife error.

    Raises
    ------
    ValueError
        For a snapped u <= x0 or no samples beyond it, alpha outside (0, 2), or bad
        histograms (naming the argument).

    Notes
    -----
    In the collapsed phase with tempering (no Cramér root, :math:`\eta_J > 0`,
    :math:`\lambda > 0`) the left tail decays like the single-jump law
    :math:`e^{-\lambda x} x^{-1-\alpha}`, so b estimates lam (the specification, §4, §8). The
    bin masses are integrated by 4-point Gauss-Legendre quadrature and b maximises the
    multinomial likelihood of the binned counts (bounded scalar search over
    :math:`\log b \in [\log 10^{-3}, \log 10^{3}]`).

    References
    ----------
    The specification, §4 and §8 (:doc:`/specification`).

    Examples
    --------
    Samples of the tempered law with b = 1.5, alpha = 0.5 beyond u = 1 (Pareto proposals
    thinned by :math:`e^{-b(x - u)}`):

    >>> rng = np.random.default_rng(2)
    >>> xs = (1 - rng.random(200000)) ** (-1 / 0.5)
    >>> xs = xs[rng.random(xs.size) < np.exp(-1.5 * (xs - 1.0))][:16000].reshape(8, 2000)
    >>> edges = np.linspace(-30.0, 0.0, 601)
    >>> counts = np.array([np.histogram(-r, edges)[0] for r in xs])
    >>> fit = tempered_fit(edges, counts, 1.0, alpha=0.5)
    >>> print(round(fit.b, 3), bool(abs(fit.b - 1.5) < 4 * fit.se))
    1.506 True
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
    """:func:`tempered_fit` on a :class:`levysde.simulation.SimulationResult`.

    Parameters
    ----------
    res : SimulationResult
        A simulation run (alpha and the equilibrium are read from ``res.meta``).
    u : float
        Threshold on X = -zeta (absolute), beyond the equilibrium ``-res.meta.equilibrium``.
    **kwargs
        Passed on to :func:`tempered_fit`.

    Returns
    -------
    TemperedFit

    Raises
    ------
    ValueError
        As :func:`tempered_fit`.

    Examples
    --------
    An Ornstein-Uhlenbeck drift has no plateau: the tail is the jumps' tempered one, b near
    lam = 2 (:meth:`levysde.simulation.SimulationResult.tempering_limited_fit` picks u itself):

    >>> from levysde.simulation import OUDrift
    >>> res = levysde.simulate(3.0, drift=OUDrift(), particles=256, t_end=30.0, burn_in=5.0,
    ...                        dt=0.02, seed=1)
    >>> fit = tempered_fit_result(res, 2.0)
    >>> print(fit.u, fit.alpha, fit.b > 0)
    2.0 1.5 True
    """
    return tempered_fit(res.hist_edges, res.hist_counts, u, alpha=res.meta.alpha,
                        x0=0.0 - res.meta.equilibrium, outside=res.hist_outside, **kwargs)


# --- amplitude and rate from samples (the Tauberian input) -----------------------------------

@dataclass(frozen=True)
class TailFit:
    r"""Left-tail fit :math:`\rho(\zeta) \sim A e^{\beta\zeta}` (:math:`\zeta \to -\infty`).

    Returned by :func:`tail_fit` (and :func:`tail_check` for samples); the amplitude A is the
    Tauberian input of the specification, §5 (:doc:`/specification`).

    Attributes
    ----------
    A, beta : float
        The tail amplitude and rate (beta in 1/zeta units).
    se_A, se_beta : float
        Their standard errors (i.i.d. delta method, or the jackknife over groups).
    u : float
        The threshold on X = -zeta.
    k : int
        Number of exceedances X > u (censored ones included).
    n : int
        Number of samples.
    method : str
        ``'iid'`` or ``'jackknife over G groups'``.
    u_check, beta_check, z_check : float
        The stability-over-thresholds check of :class:`TailEstimate` (over single samples
        when no groups are given).
    power_law : bool or None
        Its verdict, as in :class:`TailEstimate`.
    n_censored : int
        Censored samples among the exceedances.

    Examples
    --------
    >>> zeta = -np.random.default_rng(3).exponential(0.5, 20000)    # rho = 2 e^{2 zeta}, zeta < 0
    >>> fit = tail_fit(zeta)
    >>> print(round(fit.A, 2), round(fit.beta, 3), fit.method, fit.power_law)
    1.91 2.003 iid True
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
    r"""Tail amplitude A and rate beta of the left tail of zeta from samples (the specification, §8).

    Parameters
    ----------
    zeta : array_like, shape (n,)
        Samples of zeta, finite.
    weights : array_like, shape (n,), optional
        Sample weights >= 0.
    u : float, optional
        Threshold on X = -zeta; default the (1 - ``tail_fraction``) weighted quantile of X.
    tail_fraction : float, optional
        In (0, 1), used when u is None (default 0.05).
    groups : array_like, shape (n,), optional
        Labels of >= 2 independent groups (e.g. particle groups of a simulation, or neurons):
        the errors are then a leave-one-group-out jackknife, because samples along a path are
        correlated and the i.i.d. error is then 10-20 times too small (the specification, §8).
    censored : array_like of bool, shape (n,), optional
        Left-censored zeta (right-censored X = -zeta: the neuron's time scale is only known to
        exceed :math:`e^{-\zeta}`, :func:`hill_rate`). The rate is the censored MLE,
        P(X > u) counts the censored exceedances, and the errors use the uncensored count (the
        Fisher information of censored exponential excesses).

    Returns
    -------
    TailFit
        A, beta, their errors, the threshold and the stability check.

    Raises
    ------
    ValueError
        For bad samples or weights, ``tail_fraction`` outside (0, 1), fewer than 10
        uncensored exceedances (also after leaving out any one group), groups of the wrong
        length or fewer than 2 distinct group labels.

    Notes
    -----
    With X = -zeta, the Hill MLE of :func:`hill_rate`,
    :math:`\hat\beta = \sum_{X_i>u} w_i / \sum_{X_i>u} w_i (X_i - u)`, and from
    :math:`P(X > u) = (A/\beta) e^{-\beta u}`,

    .. math::

        \hat A = \hat\beta\, \hat p\, e^{\hat\beta u},

    with :math:`\hat p` the (weighted) fraction above u. For independent samples
    :math:`\mathrm{se}(\hat\beta) = \hat\beta/\sqrt{k_{\mathrm{eff}}}` and
    :math:`\mathrm{se}(\log\hat A) = \sqrt{((1 + \hat\beta u)^2 + 1 - \hat p)/k_{\mathrm{eff}}}`
    (delta method; :math:`k_{\mathrm{eff}} = (\sum w)^2/\sum w^2` over the exceedances). The
    stability check (``power_law``) jackknifes over the groups, or over single samples when
    none are given (valid for independent samples only).

    References
    ----------
    B. M. Hill (1975), Ann. Statist. 3, 1163-1174; Einmahl, Fils-Villetard & Guillou (2008),
    Bernoulli 14, 207-227 (censoring). The specification, §5 and §8 (:doc:`/specification`).

    Examples
    --------
    :math:`\rho(\zeta) = 2 e^{2\zeta}` on :math:`\zeta < 0`: A = beta = 2.

    >>> zeta = -np.random.default_rng(3).exponential(0.5, 20000)
    >>> fit = tail_fit(zeta)
    >>> print(round(fit.A, 2), round(fit.se_A, 2), round(fit.beta, 3), round(fit.se_beta, 3), fit.k)
    1.91 0.25 2.003 0.063 1000
    >>> print(tail_fit(zeta, groups=np.arange(zeta.size) % 8).method)
    jackknife over 8 groups
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
    """One line saying "not a power law ..." when a tail estimate failed the stability check.

    Parameters
    ----------
    est : TailEstimate or TailFit
        An estimate with its stability-over-thresholds check.

    Returns
    -------
    str or None
        The note (both rates, both thresholds and z), or None when the check passed or could
        not be made.

    Examples
    --------
    tau exponentially distributed (X = log tau) has no power-law tail: the rate climbs.

    >>> x = np.log(np.random.default_rng(4).exponential(size=(8, 5000)))
    >>> print(power_law_note(tail_from_samples(x, 0.5)))
    not a power law: the tail rate of X = -zeta changes with the threshold, 2.385 at u = 0.5
    but 3.748 at u = 1.081 (z = 18.4); beta and the Tauberian slope do not apply
    >>> print(power_law_note(tail_from_samples(np.random.default_rng(1).exponential(size=(8, 2000)), 1.0)))
    None
    """
    if getattr(est, "power_law", None) is not False:
        return None
    b = est.beta_hat if hasattr(est, "beta_hat") else est.beta
    return (f"not a power law: the tail rate of X = -zeta changes with the threshold, "
            f"{b:.4g} at u = {est.u:.4g} but {est.beta_check:.4g} at u = {est.u_check:.4g} "
            f"(z = {est.z_check:.1f}); beta and the Tauberian slope do not apply")


def tail_check(*, zeta: ArrayLike | None = None, weights: ArrayLike | None = None,
               hist: tuple[ArrayLike, ArrayLike, ArrayLike | None, ArrayLike | None] | None = None,
               tail_fraction: float = 0.05, n_groups: int = 8) -> TailFit | TailEstimate | None:
    """Tail estimate with the power-law check at the default threshold (the specification, §8).

    The threshold u is the (1 - tail_fraction) quantile of X = -zeta.

    Parameters
    ----------
    zeta : array_like, shape (n,), optional
        Independent samples; grouped by index modulo ``n_groups`` for the jackknife
        (:func:`tail_fit`).
    weights : array_like, shape (n,), optional
        Weights >= 0 of the samples of ``zeta``.
    hist : tuple, optional
        ``(edges, counts, sums, outside)``: per-group zeta histograms as stored by a
        simulation run; ``sums`` and ``outside`` may be None (:func:`tail_from_histogram`).
    tail_fraction : float, optional
        In (0, 1): the fraction of the mass beyond the threshold (default 0.05).
    n_groups : int, optional
        Jackknife groups of ``zeta`` (default 8; at least 2, at most n).

    Returns
    -------
    TailFit or TailEstimate or None
        A :class:`TailFit` for samples, a :class:`TailEstimate` for histograms (its
        ``power_law`` and :func:`power_law_note` say whether the tail is a power law of tau),
        or None when the tail has too few samples for an estimate.

    Raises
    ------
    ValueError
        When not exactly one of ``zeta``, ``hist`` is given, or naming a bad argument.

    Examples
    --------
    >>> zeta = -np.random.default_rng(3).exponential(0.5, 20000)
    >>> fit = tail_check(zeta=zeta)
    >>> print(type(fit).__name__, round(fit.beta, 3), fit.method, fit.power_law)
    TailFit 2.003 jackknife over 8 groups True
    >>> print(tail_check(zeta=zeta[:50]))      # too few samples beyond the threshold
    None
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
