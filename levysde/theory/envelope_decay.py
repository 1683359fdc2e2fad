"""Decay of a forgetting envelope f(l): local and fitted log-log slopes and the decay class
(docs/specification.md §5).

:func:`local_slope` (second-order finite differences of log f against log l), :func:`fit_slope`
(a least-squares line over the window where f has decayed from ``f_start`` to ``f_floor``) and
:func:`classify_decay` (exponential, polynomial or logarithmic decay, chosen by the straight-line
fit of log f against l, log l or log log l with the smallest rms residual). The envelopes themselves
come from :mod:`levysde.theory.envelope_map`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from levysde.core.jsonable import finite_or_none
from levysde.core.validate import check_array, check_int, check_real

__all__ = ['local_slope', 'fit_slope', 'SlopeFit', 'classify_decay', 'DecayClass', 'DECAY_CLASSES', 'MIN_LOG_DECAY',
           'MIN_SLOPE_DECADES']


#: the three decay classes of docs/specification.md §5
DECAY_CLASSES = ("exponential", "polynomial", "logarithmic")
#: fewest decades of lag a power-law exponent (log-log slope) is fitted over: over a shorter window
#: the local slope of an envelope still drifts (it reaches -beta* only for l >~ 30 with the defaults,
#: docs/specification.md §7) and any curve looks straight, so the slope is withheld
MIN_SLOPE_DECADES = 1.0
#: least fall of log f across the fitted window for a decay class (a relative fall of f of 1e-9:
#: a constant or rising f, or one flat to rounding, has none)
MIN_LOG_DECAY = 1e-9


def _check_curve(lags, f):
    lag = check_array("lags", lags, ndim=1, min_size=2, lo=0.0, lo_open=True, increasing=True)
    fv = check_array("f", f, shape=lag.shape, lo=0.0)
    return lag, fv


def local_slope(lags: ArrayLike, f: ArrayLike) -> np.ndarray:
    r"""Local log-log slope d log f / d log l (second-order finite differences), docs/specification.md §5.

    Parameters
    ----------
    lags : array_like, shape (n,)
        Lags (steps), > 0, strictly increasing, n >= 2.
    f : array_like, shape (n,)
        The envelope at ``lags``, > 0 and finite.

    Returns
    -------
    ndarray, shape (n,)
        :math:`d\log f/d\log\ell` at each lag; -> -beta for a polynomial envelope
        :math:`f \propto \ell^{-\beta}`.

    Raises
    ------
    ValueError
        For bad input (naming ``lags`` or ``f``) or f == 0 anywhere (the log is undefined).

    Notes
    -----
    :func:`numpy.gradient` of :math:`\log f` on the (non-uniform) grid :math:`\log\ell`:
    second-order central differences inside, second-order one-sided ones at the ends
    (first-order for n = 2). By Karamata's theorem the slope tends to :math:`-\beta^*` for
    the model's envelope (the specification, §5); how fast it settles is what
    :func:`fit_slope`'s window accounts for.

    References
    ----------
    .. [1] L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790.

    Examples
    --------
    >>> lags = np.logspace(0, 3, 7)
    >>> print(local_slope(lags, lags**-0.8).round(6))
    [-0.8 -0.8 -0.8 -0.8 -0.8 -0.8 -0.8]
    """
    lag, fv = _check_curve(lags, f)
    if np.any(fv <= 0):
        raise ValueError("f must be > 0 for a log-log slope")
    return np.gradient(np.log(fv), np.log(lag), edge_order=2 if lag.size > 2 else 1)


@dataclass(frozen=True)
class SlopeFit:
    """Least-squares line log f = c + slope log l on [lag_lo, lag_hi] (n points);
    se is the ordinary-least-squares error (a fit quality figure, not a statistical
    error of correlated data: use a jackknife over independent groups for that).

    Made by :func:`fit_slope`.

    Attributes
    ----------
    slope : float
        The fitted log-log slope (-beta for a power law).
    intercept : float
        c, the log of the prefactor (f ~ e^c l^slope).
    se : float
        OLS standard error of the slope (+inf when all lags coincide).
    lag_lo, lag_hi : float
        The first and last lag of the fitted window.
    n : int
        Number of lags in the window.

    Examples
    --------
    >>> lags = np.logspace(0, 3, 30)
    >>> fit = fit_slope(lags, 2.0 * lags**-0.8)
    >>> print(round(fit.slope, 6), round(fit.lag_lo, 3), round(fit.lag_hi, 3), fit.n)
    -0.8 92.367 1000.0 11
    """

    slope: float
    intercept: float
    se: float
    lag_lo: float
    lag_hi: float
    n: int


def _fit_window(lag, fv, f_floor, f_start, lag_min):
    ok = (fv > f_floor) & (fv <= f_start) & (lag >= lag_min) & (fv > 0)
    return ok


def _ols(x, y):
    A = np.stack([np.ones_like(x), x], axis=1)
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    res = y - A @ coef
    n = x.size
    s2 = (res @ res) / max(n - 2, 1)
    sxx = ((x - x.mean()) ** 2).sum()
    se = math.sqrt(s2 / sxx) if sxx > 0 else math.inf
    return coef, res, se


def fit_slope(lags: ArrayLike, f: ArrayLike, *, lag_range: tuple[float, float] | None = None,
              f_floor: float = 0.0, f_start: float = 0.5,
              min_points: int = 4, min_decades: float = MIN_SLOPE_DECADES) -> SlopeFit:
    r"""Fitted large-lag log-log slope of an envelope (docs/specification.md §5, §7).

    Default window: among lags with f_floor < f <= f_start, the upper half in
    log l (l >= sqrt(l_lo l_hi)), where the local slope has settled (for the
    defaults with eta_J = 3 it reaches -beta* only for l >~ 30, docs/specification.md §7), but at
    least the last ``min_decades`` of them when they span that much.
    ``lag_range = (lo, hi)`` overrides the window.

    Parameters
    ----------
    lags : array_like, shape (n,)
        Lags (steps), > 0, strictly increasing.
    f : array_like, shape (n,)
        The envelope at ``lags``, >= 0 and finite (zeros are left out of the fit).
    lag_range : (float, float), optional
        The window (lo, hi), 0 < lo < hi, instead of the default one (``f_start`` then does
        not apply; ``f_floor`` still does).
    f_floor : float, optional
        Lags with f <= f_floor are left out (the noise floor of a Monte-Carlo envelope;
        default 0).
    f_start : float, optional
        The default window starts where f has fallen to f_start (default 0.5).
    min_points : int, optional
        Fewest lags in the window, an integer >= 2 (default 4).
    min_decades : float, optional
        Fewest decades of lag the window must span, >= 0 (default :data:`MIN_SLOPE_DECADES`).

    Returns
    -------
    SlopeFit
        Slope, intercept and OLS error of log f on log l, and the window.

    Raises
    ------
    ValueError
        For bad input (naming the argument: ``f_floor`` < 0, ``f_start`` <= ``f_floor``,
        ``min_points`` not an integer >= 2, ``min_decades`` < 0), fewer than ``min_points``
        lags in the window, or a window of fewer than
        ``min_decades`` decades of lag (default :data:`MIN_SLOPE_DECADES`: an exponent from a
        shorter range is withheld; 0 disables the rule).

    Notes
    -----
    Ordinary least squares of :math:`\log f = c + s\log\ell` over the window, with
    :math:`\mathrm{se}(s) = \sqrt{\hat\sigma^2/\sum_i(x_i-\bar x)^2}`,
    :math:`\hat\sigma^2 = \mathrm{RSS}/(n-2)`, :math:`x = \log\ell`.

    References
    ----------
    .. [1] L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790.

    Examples
    --------
    >>> lags = np.logspace(0, 3, 30)
    >>> fit = fit_slope(lags, 2.0 * lags**-0.8)
    >>> print(round(fit.slope, 9), round(float(np.exp(fit.intercept)), 9), fit.n)
    -0.8 2.0 11
    """
    lag, fv = _check_curve(lags, f)
    f_floor = check_real("f_floor", f_floor, 0.0)
    f_start = check_real("f_start", f_start, f_floor, lo_open=True, why="above f_floor")
    min_points = check_int("min_points", min_points, 2, why="a line needs 2 points")
    min_decades = check_real("min_decades", min_decades, 0.0)
    if lag_range is not None:
        lo, hi = (float(v) for v in check_array("lag_range", lag_range, shape=(2,), lo=0.0, lo_open=True))
        if not lo < hi:
            raise ValueError(f"lag_range must be (lo, hi) with 0 < lo < hi; got {lag_range!r}")
        ok = (lag >= lo) & (lag <= hi) & (fv > f_floor) & (fv > 0)
    else:
        ok = _fit_window(lag, fv, f_floor, f_start, 0.0)
        if np.count_nonzero(ok) >= 2 * min_points:
            cand = lag[ok]
            start = cand[cand >= math.sqrt(cand[0] * cand[-1])][0]
            reach = cand[-1] / 10 ** min_decades * (1 + 1e-12)
            if min_decades > 0 and start > reach:
                # the upper half is under min_decades: the last min_decades (from the lag at or below)
                start = cand[cand <= reach][-1] if cand[0] <= reach else cand[0]
            ok &= lag >= start
    if np.count_nonzero(ok) < min_points:
        raise ValueError(f"lags: only {np.count_nonzero(ok)} lags in the slope window "
                         f"(f in ({f_floor:g}, {f_start:g}]); need >= {min_points}: extend the lags")
    lo_, hi_ = float(lag[ok][0]), float(lag[ok][-1])
    decades = math.log10(hi_ / lo_)
    if decades < min_decades * (1 - 1e-12):
        raise ValueError(f"lags: the slope window spans lags {lo_:.3g} to {hi_:.3g}, {decades:.2g} decades; a "
                         f"power-law exponent needs >= {min_decades:g} decade (extend the lags or the "
                         f"spectrum)")
    coef, _, se = _ols(np.log(lag[ok]), np.log(fv[ok]))
    return SlopeFit(slope=float(coef[1]), intercept=float(coef[0]), se=se,
                    lag_lo=float(lag[ok][0]), lag_hi=float(lag[ok][-1]), n=int(np.count_nonzero(ok)))


@dataclass(frozen=True)
class DecayClass:
    """Decay class of an envelope (docs/specification.md §5).

    Made by :func:`classify_decay`; :meth:`records` gives a JSON-ready dict (non-finite
    numbers as None).

    Attributes
    ----------
    name : str
        ``'exponential'``, ``'polynomial'`` or ``'logarithmic'``: the candidate with the
        smallest rms residual.
    candidates : dict
        name -> ``{'param': value, 'param_name': 'tau_max' | 'beta' | 'gamma', 'rms': rms
        residual of log f, 'r2': coefficient of determination}``, for all three.
    lag_lo, lag_hi : float
        The fitted lag window.
    n : int
        Number of lags in it.

    Examples
    --------
    >>> lags = np.logspace(0, 4, 60)
    >>> d = classify_decay(lags, (1 + lags)**-0.8)
    >>> print(d.name, d.n, sorted(d.candidates))
    polynomial 53 ['exponential', 'logarithmic', 'polynomial']
    >>> d.records()['candidates']['polynomial']['param_name']
    'beta'
    """

    name: str
    candidates: dict[str, dict[str, Any]] = field(default_factory=dict)
    lag_lo: float = math.nan
    lag_hi: float = math.nan
    n: int = 0

    def records(self) -> dict:
        """JSON-ready summary (non-finite numbers become None)."""
        return {"name": self.name, "lag_lo": finite_or_none(self.lag_lo), "lag_hi": finite_or_none(self.lag_hi),
                "n": self.n,
                "candidates": {k: {kk: (finite_or_none(vv) if not isinstance(vv, str) else vv) for kk, vv in c.items()}
                               for k, c in self.candidates.items()}}


#: candidate models: log f = c - x(l) / param  (exponential) or c - param x(l)
_CANDIDATES = (
    ("exponential", "tau_max", lambda l: l, lambda s: -1.0 / s if s < 0 else math.inf),
    ("polynomial", "beta", np.log, lambda s: -s),
    ("logarithmic", "gamma", lambda l: np.log(np.log(l)), lambda s: -s),
)


def classify_decay(lags: ArrayLike, f: ArrayLike, *, f_floor: float = 1e-300, f_start: float = 0.5,
                   lag_min: float = math.e, min_points: int = 6) -> DecayClass:
    r"""Classify an envelope as exponential, polynomial or logarithmic (docs/specification.md §5).

    On the window of lags with l >= lag_min (default e, so that log log l > 0)
    and f_floor < f <= f_start (past the bulk, above the noise floor: for a
    Monte-Carlo envelope of n_eff samples use f_floor ~ 100 / n_eff), three
    straight-line models of log f are fitted by least squares:

    * exponential (bounded time scales): log f = c - l / tau_max;
    * polynomial: log f = c - beta log l;
    * logarithmic: log f = c - gamma log log l.

    The class is the model with the smallest rms residual of log f (the goodness
    measure, reported with R^2 for every candidate). Lags are in steps: the
    logarithmic model refers to the unit time scale tau = 1.

    Parameters
    ----------
    lags : array_like, shape (n,)
        Lags (steps), > 0, strictly increasing.
    f : array_like, shape (n,)
        The envelope at ``lags``, >= 0 and finite.
    f_floor : float, optional
        Lags with f <= f_floor are left out (default 1e-300: only zeros).
    f_start : float, optional
        Lags with f > f_start are left out (the bulk; default 0.5).
    lag_min : float, optional
        Lags below it are left out, > 1 (default e, where log log l = 0).
    min_points : int, optional
        Fewest lags in the window, an integer >= 4 (default 6).

    Returns
    -------
    DecayClass
        The chosen class, every candidate's parameter, rms and R^2, and the window.

    Raises
    ------
    ValueError
        For bad input (naming the argument: non-finite or negative f, lags that are not positive
        and increasing, ``f_floor`` < 0, ``f_start`` <= ``f_floor``, ``lag_min`` <= 1,
        ``min_points`` not an integer >= 4), fewer than ``min_points`` lags in the window, or an f that does not
        decay on it (falls by less than :data:`MIN_LOG_DECAY` in log f: a constant or rising
        envelope has no decay class).

    Notes
    -----
    The three models are straight lines in :math:`x(\ell) = \ell`, :math:`\log\ell`,
    :math:`\log\log\ell`:

    .. math::

       \log f = c - \ell/\tau_{\max}, \qquad \log f = c - \beta\log\ell, \qquad
       \log f = c - \gamma\log\log\ell,

    the classes of the specification, §5 (bounded time scales, a power-law spectrum
    :math:`p(\tau) \sim \tau^{-1-\beta}`, and the logarithmic phase).

    References
    ----------
    .. [1] L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790.

    Examples
    --------
    >>> lags = np.logspace(0, 4, 60)
    >>> print(classify_decay(lags, (1 + lags)**-0.8).name)
    polynomial
    >>> d = classify_decay(lags, np.exp(-lags / 50))
    >>> print(d.name, round(d.candidates['exponential']['param'], 6))   # tau_max
    exponential 50.0
    """
    lag, fv = _check_curve(lags, f)
    f_floor = check_real("f_floor", f_floor, 0.0)
    f_start = check_real("f_start", f_start, f_floor, lo_open=True, why="above f_floor")
    lag_min = check_real("lag_min", lag_min, 1.0, lo_open=True, why="log log l is defined for l > 1")
    min_points = check_int("min_points", min_points, 4, why="three forms of two parameters each are compared")
    ok = _fit_window(lag, fv, f_floor, f_start, lag_min)
    if np.count_nonzero(ok) < min_points:
        raise ValueError(f"lags: only {np.count_nonzero(ok)} lags with l >= {lag_min:g} and f in "
                         f"({f_floor:g}, {f_start:g}]; need >= {min_points}: extend the lags")
    l, y = lag[ok], np.log(fv[ok])
    if not y[0] - y[-1] > MIN_LOG_DECAY:
        raise ValueError(f"f does not decay on the fitted window (lags {l[0]:g} to {l[-1]:g}: f from "
                         f"{fv[ok][0]:.6g} to {fv[ok][-1]:.6g}); no decay class applies")
    sst = ((y - y.mean()) ** 2).sum()
    cands: dict[str, dict[str, Any]] = {}
    for name, pname, xf, par in _CANDIDATES:
        coef, res, _ = _ols(xf(l), y)
        rms = math.sqrt((res @ res) / res.size)
        cands[name] = {"param_name": pname, "param": float(par(coef[1])), "rms": rms,
                       "r2": float(1 - (res @ res) / sst) if sst > 0 else math.nan}
    best = min(cands, key=lambda k: cands[k]["rms"])
    return DecayClass(name=best, candidates=cands, lag_lo=float(l[0]), lag_hi=float(l[-1]),
                      n=int(l.size))
