r"""The empirical learnability window of a trained network and its master law (docs/learnability.md).

Input: the per-sequence sufficient sums of the matched statistic :math:`\psi_t(l)` at every lag
(:func:`levysde.rnn.matched.matched_sums`, or any synthetic source with the same layout). Output
(:func:`measure_learnability`), per lag :math:`l`:

* the mean :math:`m(l)` of :math:`\psi` (its modulus enters: the paper orients :math:`\psi` by
  the sign of its mean) and its bootstrap error;
* the symmetric :math:`\alpha`-stable fit of :math:`\psi`'s fluctuations,
  :math:`\hat\alpha(l)`, :math:`\hat\sigma(l)`, by the empirical characteristic function
  (:mod:`levysde.stats.stable_fit`; Koutrouvelis 1980), with bootstrap errors;
* the SNR rule of the learnability paper:

  .. math::

      \mathrm{SNR}(l, N) = |m|\, N^{1 - 1/\alpha} / \sigma

  (:math:`\alpha` clipped to :math:`[1, 2]`); :math:`N(l)` = the first :math:`N` of the grid with
  :math:`\mathrm{SNR} > \varepsilon`, and its continuous counterpart
  :math:`N^*(l) = (\varepsilon \sigma / |m|)^\kappa`, :math:`\kappa = \alpha / (\alpha - 1)`
  (:math:`\alpha` clipped to :math:`[1.01, 2]`), the exact crossing the grid rounds up;
* the envelope :math:`f(l)` = mean :math:`|\mu_0 + \mu_1|`;
* :math:`H_N = \max\{l : N(l) \le N\}` (0 when no lag qualifies) at every :math:`N` of the grid:
  from the grid :math:`N(l)` of every lag (the paper's), of the lags whose mean is significant
  (:math:`|m| >` 2 bootstrap standard errors), and from :math:`N^*(l)` of those.

The SNR rule uses the full-sample mean as if it were exact. Without signal the sample mean of
:math:`n` samples is :math:`\sigma n^{1/\alpha - 1} Z`, so the rule "detects" a lag with no
signal at :math:`N_{\max}` with probability

.. math::

    2 \big(1 - F_\alpha(\varepsilon (n/N_{\max})^{1 - 1/\alpha})\big)

(:func:`false_detection_probability`): a lag with :math:`N(l) = N` is told apart from no signal
only when :math:`n \gg N \varepsilon^{-\kappa}` (:math:`1.3 \cdot 10^6` samples per lag for
:math:`N = 12800`, :math:`\varepsilon = 0.1`, :math:`\alpha = 2`; :math:`1.3 \cdot 10^7` for
:math:`\alpha = 1.5`). The significance flag and the significant-lag windows guard against this.

The **master law** :math:`N(l) = C f(l)^{-\kappa}` (docs/specification.md §6) is tested by the
slope :math:`b` of :math:`\log N(l)` on :math:`x(l) = -\kappa(l) \log f(l)` (the theory:
:math:`b = 1`), on the grid :math:`N(l)` (the paper's fit) and on :math:`N^*(l)`, each with a
percentile interval from a bootstrap over sequences (every replicate redoes the whole chain:
mean, :math:`\alpha`, :math:`\sigma`, :math:`f`, :math:`N`, slope). The decay class of :math:`f`
(:func:`levysde.theory.envelope_decay.classify_decay`) fixes how :math:`H_N` should grow with
:math:`N` (exponential :math:`f`: logarithmically; polynomial :math:`f`: as a power; logarithmic
:math:`f`: exponentially, :func:`levysde.theory.learnability.window_scaling_law`); the prediction
with :math:`C` from the data is set beside the measured :math:`H_N`.

Sources: the learnability paper (arXiv 2512.05790, from v4: :math:`N(l) \propto f(l)^{-\kappa_\alpha}`)
and its code (``lorenzolivi/learnability`` at d5efbd2: ``compute_snr``, ``N_required_at_eps``,
``compute_H_N``, ``fit_master_proportionality.py``: :math:`\varepsilon = 0.1`, the :math:`N` grid
25 ... 12800, :math:`\alpha` floored at 1.01 in :math:`\kappa`). The bootstrap intervals,
:math:`N^*(l)`, the significance of :math:`m(l)` and the false-detection rate are this package's
additions (docs/learnability.md).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from levysde.core.jsonable import finite_or_none
from levysde.core.validate import check_array, check_int, check_real
from levysde.stats.stable_fit import ecf_points, fit_from_sums
from levysde.theory.envelope_decay import classify_decay
from levysde.theory.learnability import window_scaling_law

__all__ = ["N_GRID", "SNR_EPS", "ALPHA_FLOOR", "N_BOOT", "CONFIDENCE", "MatchedSums", "LearnabilityMeasurement",
           "snr", "required_n", "required_n_continuous", "empirical_window", "master_slope",
           "measure_learnability", "false_detection_probability"]

#: the paper's sample-size grid (lorenzolivi/learnability, README command)
N_GRID = (25, 50, 100, 150, 200, 300, 400, 600, 800, 1200, 1600, 2400, 3200, 4800, 6400, 9600, 12800)
#: the paper's detection threshold of the SNR
SNR_EPS = 0.1
#: alpha is floored at this value in kappa = alpha / (alpha - 1) (the paper's master-law fit)
ALPHA_FLOOR = 1.01
#: bootstrap replicates over sequences
N_BOOT = 400
#: two-sided level of the reported intervals
CONFIDENCE = 0.90
#: a mean is "significant" when |m| exceeds this many bootstrap standard errors
SIGNIFICANCE_Z = 2.0
#: the continuous master-law fit uses the lags whose |m| exceeds this many bootstrap standard errors
FIT_Z = 3.0
#: fewest lags for a master-law slope
MIN_FIT_LAGS = 4


@dataclass(frozen=True)
class MatchedSums:
    r"""Per-sequence sufficient sums of the matched statistic psi_t(l).

    The layout of :func:`levysde.rnn.matched.matched_sums`; S sequences are the resampling unit
    of the bootstrap, K the points of the characteristic-function grid.

    Attributes
    ----------
    lags : ndarray, shape (L,)
        Lags l (steps), > 0 and increasing.
    count : ndarray, shape (L, S)
        Samples of psi of each sequence at each lag (>= 0).
    total : ndarray, shape (L, S)
        Sums of psi.
    t : ndarray, shape (L, K)
        The grid of the empirical characteristic function (> 0).
    cos, sin : ndarray, shape (L, S, K)
        Sums of :math:`\cos(t_k \psi)` and :math:`\sin(t_k \psi)`.
    envelope : ndarray, shape (L, S)
        Each sequence's envelope value, the mean :math:`|\mu_0 + \mu_1|` (>= 0).
    n_sequences : int
        S (a property).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> L, S, n = 8, 16, 2500                     # lags, sequences, samples per sequence and lag
    >>> lags = np.geomspace(1, 100, L)
    >>> f = lags ** -0.5                          # the envelope f(l)
    >>> psi = 0.15 * f[:, None, None] + rng.normal(size=(L, S, n))   # mean 0.15 f(l), Gaussian noise
    >>> t = np.tile(np.geomspace(0.1, 3.0, 8), (L, 1))              # the ECF grid
    >>> tx = t[:, None, None, :] * psi[..., None]
    >>> sums = MatchedSums(lags=lags, count=np.full((L, S), float(n)), total=psi.sum(-1), t=t,
    ...                    cos=np.cos(tx).sum(2), sin=np.sin(tx).sum(2),
    ...                    envelope=np.tile(f[:, None], (1, S)))
    >>> sums.n_sequences
    16
    >>> MatchedSums.from_dict({"lags": lags}).n_sequences
    Traceback (most recent call last):
    ...
    ValueError: matched sums lack 'count'
    """

    lags: NDArray[np.float64]
    count: NDArray[np.float64]
    total: NDArray[np.float64]
    t: NDArray[np.float64]
    cos: NDArray[np.float64]
    sin: NDArray[np.float64]
    envelope: NDArray[np.float64]

    @classmethod
    def from_dict(cls, d: dict) -> MatchedSums:
        """Validated from a dict of arrays (e.g. a saved ``.npz``).

        Parameters
        ----------
        d : dict
            Arrays ``lags``, ``count``, ``total``, ``t``, ``cos``, ``sin``, ``envelope`` in the
            shapes of the class's attributes (further keys are ignored).

        Returns
        -------
        MatchedSums
            The validated sums.

        Raises
        ------
        ValueError
            Naming the first key that is missing or of the wrong shape or range.
        """
        for k in ("lags", "count", "total", "t", "cos", "sin", "envelope"):
            if k not in d:
                raise ValueError(f"matched sums lack {k!r}")
        lags = check_array("lags", d["lags"], ndim=1, min_size=2, lo=0.0, lo_open=True, increasing=True)
        L = lags.size
        count = check_array("count", d["count"], ndim=2, shape=(L, None), lo=0.0)
        S = count.shape[1]
        t = check_array("t", d["t"], ndim=2, shape=(L, None), lo=0.0, lo_open=True)
        K = t.shape[1]
        return cls(lags=lags, count=count,
                   total=check_array("total", d["total"], shape=(L, S)),
                   t=t, cos=check_array("cos", d["cos"], shape=(L, S, K)),
                   sin=check_array("sin", d["sin"], shape=(L, S, K)),
                   envelope=check_array("envelope", d["envelope"], shape=(L, S), lo=0.0))

    @property
    def n_sequences(self) -> int:
        """Number S of sequences."""
        return int(self.count.shape[1])


#: fewest distinct values of N(l) (or N*(l)) over the fitted lags for a master-law slope
MIN_DISTINCT_N = 3

def snr(mean_abs: ArrayLike, sigma: ArrayLike, alpha: ArrayLike, N: ArrayLike) -> NDArray[np.float64]:
    r""":math:`\mathrm{SNR} = |m| N^{1 - 1/\alpha} / \sigma` with :math:`\alpha` clipped to [1, 2] (the paper's rule).

    Parameters
    ----------
    mean_abs : array_like, shape (...,)
        Mean :math:`m(\ell)` of psi (its modulus is used).
    sigma : array_like, shape (...,)
        Scale :math:`\sigma(\ell)` of psi's symmetric alpha-stable fluctuations.
    alpha : array_like, shape (...,)
        Stability index, clipped to [1, 2].
    N : array_like
        Sample sizes, broadcast against the others: pass ``N[:, None]`` for an (n_N, L) table.

    Returns
    -------
    ndarray
        The SNR, broadcast shape; 0 where sigma is not > 0.

    Notes
    -----
    The mean of N i.i.d. symmetric alpha-stable samples of scale :math:`\sigma` has scale
    :math:`\sigma N^{1/\alpha - 1}`, so

    .. math::

        \mathrm{SNR}(\ell, N) = \frac{|m(\ell)|\, N^{1 - 1/\alpha}}{\sigma(\ell)}.

    References
    ----------
    * L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790
      (``compute_snr`` of its code).
    * The specification, §6.

    Examples
    --------
    >>> snr(0.1, 1.0, 2.0, [100, 400])            # |m| sqrt(N) / sigma for alpha = 2
    array([1., 2.])
    >>> snr([0.1, 0.1], [1.0, 0.0], 1.5, 64)      # 0 where sigma is 0
    array([0.4, 0. ])
    """
    a = np.clip(np.asarray(alpha, dtype=np.float64), 1.0, 2.0)
    s = np.asarray(sigma, dtype=np.float64)
    with np.errstate(all="ignore"):
        out = np.abs(mean_abs) * np.asarray(N, dtype=np.float64) ** (1.0 - 1.0 / a) / s
    return np.where(s > 0, out, 0.0)


def required_n(mean_abs, sigma, alpha, N_grid=N_GRID, eps: float = SNR_EPS) -> NDArray[np.float64]:
    r""":math:`N(l)`, the first :math:`N` of ``N_grid`` with :math:`\mathrm{SNR}(l, N) > \varepsilon`.

    Parameters
    ----------
    mean_abs, sigma, alpha : array_like, shape (...,)
        As for :func:`snr` (broadcast together).
    N_grid : array_like, shape (n_N,), default :data:`N_GRID`
        Increasing sample sizes (the paper's grid 25 ... 12800).
    eps : float, default :data:`SNR_EPS`
        SNR threshold (the paper's 0.1).

    Returns
    -------
    ndarray, shape (...,)
        N(l); NaN where no grid point reaches the threshold (the paper's ``N_required_at_eps``
        returns -1 there).

    References
    ----------
    * L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790.

    Examples
    --------
    >>> required_n([0.1, 0.01, 1e-4], 1.0, 2.0)   # SNR > 0.1 from N = 1, 100, 1e6 on
    array([ 25., 150.,  nan])
    """
    grid = np.asarray(N_grid, dtype=np.float64)
    s = snr(np.asarray(mean_abs)[..., None], np.asarray(sigma)[..., None], np.asarray(alpha)[..., None], grid)
    hit = s > eps
    first = np.argmax(hit, axis=-1)
    return np.where(hit.any(-1), grid[first], np.nan)


def _kappa(alpha):
    a = np.clip(np.asarray(alpha, dtype=np.float64), ALPHA_FLOOR, 2.0)
    return a / (a - 1.0)


def required_n_continuous(mean_abs, sigma, alpha, eps: float = SNR_EPS) -> NDArray[np.float64]:
    r""":math:`N^*(l) = (\varepsilon \sigma / |m|)^\kappa`: the exact :math:`N` where the SNR crosses eps.

    The grid value :func:`required_n` is the first grid point above it.

    Parameters
    ----------
    mean_abs, sigma, alpha : array_like, shape (...,)
        As for :func:`snr` (broadcast together); alpha is clipped to [1.01, 2] in kappa.
    eps : float, default :data:`SNR_EPS`
        SNR threshold.

    Returns
    -------
    ndarray, shape (...,)
        :math:`N^*(\ell)`; inf where m = 0.

    Notes
    -----
    Solving :math:`\mathrm{SNR}(\ell, N) = \varepsilon` for N,

    .. math::

        N^*(\ell) = \Big(\frac{\varepsilon\,\sigma(\ell)}{|m(\ell)|}\Big)^{\kappa_\alpha},
        \qquad \kappa_\alpha = \frac{\alpha}{\alpha - 1}.

    References
    ----------
    * L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790
      (:math:`\kappa_\alpha`, and alpha floored at 1.01 in its code).
    * The specification, §6.

    Examples
    --------
    >>> required_n_continuous([0.1, 0.01], 1.0, 2.0)
    array([  1., 100.])
    >>> float(required_n_continuous(0.0, 1.0, 2.0))
    inf
    """
    with np.errstate(all="ignore"):
        return (eps * np.asarray(sigma, dtype=np.float64) / np.abs(mean_abs)) ** _kappa(alpha)


def empirical_window(lags: ArrayLike, n_req: ArrayLike, N: ArrayLike) -> NDArray[np.float64]:
    r"""The learnability window :math:`H_N = \max\{l : N(l) \le N\}` for every :math:`N`.

    Parameters
    ----------
    lags : array_like, shape (L,)
        The lags l.
    n_req : array_like, shape (..., L)
        N(l) per lag (NaN entries never qualify), e.g. from :func:`required_n`.
    N : array_like, shape (n_N,) or scalar
        Sample sizes.

    Returns
    -------
    ndarray, shape (..., n_N)
        :math:`H_N = \max\{\ell : N(\ell) \le N\}`; 0 when no lag qualifies.

    References
    ----------
    * L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790
      (``compute_H_N`` of its code).
    * The specification, §6.

    Examples
    --------
    >>> empirical_window([1, 10, 100], [25, 400, np.nan], [10, 100, 1000])
    array([ 0.,  1., 10.])
    """
    lag = np.asarray(lags, dtype=np.float64)
    nr = np.asarray(n_req, dtype=np.float64)
    Nv = np.atleast_1d(np.asarray(N, dtype=np.float64))
    ok = nr[..., None, :] <= Nv[:, None]                         # (..., n_N, L)
    return np.where(ok, lag, 0.0).max(-1)


def master_slope(x: ArrayLike, y: ArrayLike, w: ArrayLike | None = None) -> tuple[float, float, float]:
    r"""Slope, intercept and :math:`R^2` of the (weighted) least-squares line :math:`y = a + b x`.

    Used for the master law: y = log N(l) on x = -kappa log f(l), where the theory gives b = 1.

    Parameters
    ----------
    x, y : array_like, shape (n,)
        The pairs; pairs with a non-finite value are left out.
    w : array_like, shape (n,), optional
        Weights >= 0 (pairs of weight 0 or NaN are left out); default equal.

    Returns
    -------
    b, a, r2 : float
        Slope, intercept and the weighted coefficient of determination; all NaN with fewer
        than :data:`MIN_FIT_LAGS` usable pairs or no spread in x (r2 NaN when y is constant).

    References
    ----------
    * The specification, §6: :math:`N(\ell) = C f(\ell)^{-\kappa_\alpha}`.

    Examples
    --------
    >>> master_slope([0, 1, 2, 3], [1, 3, 5, 7])
    (2.0, 1.0, 1.0)
    >>> master_slope([0, 1, 2], [1, 3, 5])        # too few pairs
    (nan, nan, nan)
    """
    xv, yv = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    wv = np.ones_like(xv) if w is None else np.asarray(w, dtype=np.float64)
    ok = np.isfinite(xv) & np.isfinite(yv) & np.isfinite(wv) & (wv > 0)
    if ok.sum() < MIN_FIT_LAGS or np.ptp(xv[ok]) == 0:
        return math.nan, math.nan, math.nan
    xv, yv, wv = xv[ok], yv[ok], wv[ok] / wv[ok].sum()
    xb, yb = wv @ xv, wv @ yv
    b = float(wv @ ((xv - xb) * (yv - yb)) / (wv @ (xv - xb) ** 2))
    a = float(yb - b * xb)
    res = yv - (a + b * xv)
    sst = float(wv @ (yv - yb) ** 2)
    return b, a, float(1.0 - (wv @ res ** 2) / sst) if sst > 0 else math.nan


def _slopes(x, y, w=None):
    """Row-wise (weighted) least-squares slopes of y on x, (R, L) with NaN holes -> (R,)."""
    w = np.ones(x.shape[-1]) if w is None else np.asarray(w, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y) & (w > 0)
    n = ok.sum(1)
    wz = np.where(ok, w, 0.0)
    xz, yz = np.where(ok, x, 0.0), np.where(ok, y, 0.0)
    with np.errstate(all="ignore"):
        sw = wz.sum(1)
        xb, yb = (wz * xz).sum(1) / sw, (wz * yz).sum(1) / sw
        dx = np.where(ok, x - xb[:, None], 0.0)
        b = (wz * dx * np.where(ok, y - yb[:, None], 0.0)).sum(1) / (wz * dx * dx).sum(1)
    return np.where(n >= MIN_FIT_LAGS, b, np.nan)


def false_detection_probability(n_samples: ArrayLike, alpha: float, *, N_max: float = N_GRID[-1],
                                eps: float = SNR_EPS) -> NDArray[np.float64]:
    r"""Probability that the SNR rule detects a lag **without signal** within the grid, for n
    i.i.d. symmetric alpha-stable samples and alpha, sigma known.

    With :math:`m = 0` the sample mean is :math:`\sigma n^{1/\alpha - 1} Z`, :math:`Z` standard
    symmetric :math:`\alpha`-stable (stability of sums), so
    :math:`\mathrm{SNR}(N_{\max}) > \varepsilon` exactly when
    :math:`|Z| > \varepsilon (n / N_{\max})^{1 - 1/\alpha}`: probability

    .. math::

        2 \big(1 - F_\alpha(\varepsilon (n / N_{\max})^{1 - 1/\alpha})\big),

    :math:`F_\alpha` the standard symmetric :math:`\alpha`-stable distribution function (scipy
    ``levy_stable``, beta = 0). Dependent samples (e.g. within a sequence) make it larger:
    :math:`n` is then an effective sample size.

    Parameters
    ----------
    n_samples : array_like
        Samples n behind the mean at a lag (>= 1), any shape.
    alpha : float
        Stability index of psi, in (1, 2].
    N_max : float, default ``N_GRID[-1]``
        Largest N of the grid (12800).
    eps : float, default :data:`SNR_EPS`
        SNR threshold.

    Returns
    -------
    ndarray
        The probability, shape of ``n_samples``.

    Raises
    ------
    ValueError
        When alpha is outside (1, 2] or an n is below 1.

    Notes
    -----
    .. math::

        P = 2\,\Big(1 - F_\alpha\big(\varepsilon\,(n/N_{\max})^{1 - 1/\alpha}\big)\Big).

    References
    ----------
    * G. Samorodnitsky, M. S. Taqqu, *Stable Non-Gaussian Random Processes*, Chapman & Hall
      (1994), §1.2 (stability of sums).

    Examples
    --------
    >>> round(float(false_detection_probability(8000 * 900, 2.0)), 3)   # the paper's size, Gaussian
    0.094
    """
    from scipy.stats import levy_stable

    a = check_real("alpha", alpha, 1.0, 2.0, lo_open=True)
    n = check_array("n_samples", n_samples, lo=1.0)
    z = eps * (n / float(N_max)) ** (1.0 - 1.0 / a)
    return 2.0 * levy_stable.sf(z, a, 0.0)


@dataclass
class LearnabilityMeasurement:
    r"""The result of :func:`measure_learnability`.

    Arrays are per lag, shape (L,), unless said otherwise. ``*_se``: bootstrap standard errors
    over sequences; intervals: the two-sided :data:`CONFIDENCE` percentile intervals.

    Attributes
    ----------
    lags : ndarray, shape (L,)
        The lags l.
    n_samples : ndarray
        Samples of psi per lag.
    n_sequences : int
        Sequences S.
    mean, mean_se : ndarray
        Mean m(l) of psi and its standard error.
    significant : ndarray of bool
        :math:`|m| > 2\,\mathrm{se}`.
    alpha, alpha_se : ndarray
        Stability index of psi's fluctuations (ECF fit) and its error.
    sigma, sigma_se : ndarray
        Their scale and its error.
    f, f_se : ndarray
        The envelope f(l) and its error.
    N_grid : ndarray, shape (n_N,)
        The sample sizes of the SNR rule.
    eps : float
        The SNR threshold.
    snr : ndarray, shape (n_N, L)
        :func:`snr` on the grid.
    n_required : ndarray
        The grid N(l) (:func:`required_n`); NaN = not detected in the grid.
    n_star : ndarray
        The continuous :math:`N^*(\ell)` (:func:`required_n_continuous`).
    n_star_interval : ndarray, shape (L, 2)
        Its interval.
    N_eval : ndarray, shape (n_E,)
        The N at which H_N is reported.
    H_N, H_N_interval : ndarray, shapes (n_E,), (n_E, 2)
        :math:`H_N` from the grid N(l) (the paper's), and its interval.
    H_N_significant : ndarray, shape (n_E,)
        :math:`H_N` from the grid N(l) of the significant lags only.
    H_N_star : ndarray, shape (n_E,)
        :math:`H_N` from :math:`N^*(\ell)` of the significant lags.
    master : dict
        ``"grid"`` and ``"continuous"``: the master-law fit, each with ``slope``, ``intercept``,
        ``r2``, ``n_lags``, ``lags``, ``x``, ``log_N``, ``slope_se``, ``slope_interval``,
        ``consistent_with_1``, ``n_unique_N`` and ``withheld`` (why the slope is not given, or
        None).
    decay : dict
        The decay class of f (``f_class``), the growth of H_N it implies (``H_N_growth``), the
        class fit and the predicted H_N with C from the data (``prediction``), and
        ``sigma_on_f_loglog_slope``; ``status`` "unavailable" with a ``reason`` otherwise.
    alpha_pooled : float
        Median :math:`\hat\alpha` over the significant lags (over all lags when none is).
    n_boot : int
        Bootstrap replicates.
    seed : int
        Seed of the bootstrap.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> L, S, n = 8, 16, 2500                     # lags, sequences, samples per sequence and lag
    >>> lags = np.geomspace(1, 100, L)
    >>> f = lags ** -0.5                          # the envelope f(l)
    >>> psi = 0.15 * f[:, None, None] + rng.normal(size=(L, S, n))   # mean 0.15 f(l), Gaussian noise
    >>> t = np.tile(np.geomspace(0.1, 3.0, 8), (L, 1))              # the ECF grid
    >>> tx = t[:, None, None, :] * psi[..., None]
    >>> sums = MatchedSums(lags=lags, count=np.full((L, S), float(n)), total=psi.sum(-1), t=t,
    ...                    cos=np.cos(tx).sum(2), sin=np.sin(tx).sum(2),
    ...                    envelope=np.tile(f[:, None], (1, S)))
    >>> m = measure_learnability(sums, eps=1.0, n_boot=100)
    >>> m.lags.shape, m.snr.shape, m.n_star_interval.shape
    ((8,), (17, 8), (8, 2))
    >>> rec = m.records()                         # JSON-ready
    >>> rec["N_required"][:3], rec["confidence"]
    ([25.0, 50.0, 100.0], 0.9)
    """

    lags: NDArray[np.float64]
    n_samples: NDArray[np.float64]
    n_sequences: int
    mean: NDArray[np.float64]
    mean_se: NDArray[np.float64]
    significant: NDArray[np.bool_]
    alpha: NDArray[np.float64]
    alpha_se: NDArray[np.float64]
    sigma: NDArray[np.float64]
    sigma_se: NDArray[np.float64]
    f: NDArray[np.float64]
    f_se: NDArray[np.float64]
    N_grid: NDArray[np.float64]
    eps: float
    snr: NDArray[np.float64]                       # (n_N, L)
    n_required: NDArray[np.float64]                # grid N(l), NaN = not detected in the grid
    n_star: NDArray[np.float64]                    # continuous N*(l)
    n_star_interval: NDArray[np.float64]           # (L, 2)
    N_eval: NDArray[np.float64]                    # (n_N,) the N at which H_N is reported
    H_N: NDArray[np.float64]                       # (n_N,) from the grid N(l)
    H_N_interval: NDArray[np.float64]              # (n_N, 2)
    H_N_significant: NDArray[np.float64]           # (n_N,) from the grid N(l) of significant lags only
    H_N_star: NDArray[np.float64]                  # (n_N,) from N*(l) of significant lags
    master: dict[str, Any] = field(default_factory=dict)
    decay: dict[str, Any] = field(default_factory=dict)
    alpha_pooled: float = math.nan
    n_boot: int = 0
    seed: int = 0

    def records(self) -> dict:
        """JSON-ready summary (non-finite numbers become None)."""
        def arr(v):
            return [finite_or_none(float(x)) for x in np.asarray(v, dtype=float).ravel()] if np.ndim(v) <= 1 else \
                [arr(r) for r in v]

        return {
            "lags": arr(self.lags), "n_samples": arr(self.n_samples), "n_sequences": self.n_sequences,
            "mean": arr(self.mean), "mean_se": arr(self.mean_se),
            "significant": [bool(b) for b in self.significant],
            "alpha": arr(self.alpha), "alpha_se": arr(self.alpha_se),
            "sigma": arr(self.sigma), "sigma_se": arr(self.sigma_se),
            "alpha_pooled": finite_or_none(self.alpha_pooled),
            "f": arr(self.f), "f_se": arr(self.f_se),
            "N_grid": arr(self.N_grid), "eps": self.eps, "snr": arr(self.snr),
            "N_required": arr(self.n_required), "N_star": arr(self.n_star),
            "N_star_interval": arr(self.n_star_interval),
            "N_eval": arr(self.N_eval), "H_N": arr(self.H_N), "H_N_interval": arr(self.H_N_interval),
            "H_N_significant": arr(self.H_N_significant), "H_N_star": arr(self.H_N_star),
            "master_law": _jsonable(self.master), "decay": _jsonable(self.decay),
            "n_boot": self.n_boot, "seed": self.seed, "confidence": CONFIDENCE,
        }


def _jsonable(d):
    if isinstance(d, dict):
        return {k: _jsonable(v) for k, v in d.items()}
    if isinstance(d, (list, tuple, np.ndarray)):
        return [_jsonable(v) for v in d]
    if isinstance(d, (bool, np.bool_)):
        return bool(d)
    if isinstance(d, (int, np.integer)):
        return int(d)
    if isinstance(d, (float, np.floating)):
        return finite_or_none(float(d))
    return d


def _chain(sums: MatchedSums, weights, pts, N_grid, eps):
    """Everything per lag for resampling weights (R, S) of the sequences: returns dict of (R, L)."""
    n = weights @ sums.count.T                                                   # (R, L)
    tot = weights @ sums.total.T
    cos = np.einsum("rs,lsk->rlk", weights, sums.cos)
    sin = np.einsum("rs,lsk->rlk", weights, sums.sin)
    alpha, sigma = fit_from_sums(n, cos, sin, sums.t[None], pts[None])
    with np.errstate(all="ignore"):
        mean = tot / n
        f = (weights @ sums.envelope.T) / weights.sum(1, keepdims=True)
    return dict(n=n, mean=mean, alpha=alpha, sigma=sigma, f=f,
                n_req=required_n(np.abs(mean), sigma, alpha, N_grid, eps),
                n_star=required_n_continuous(mean, sigma, alpha, eps))


def _pooled_xy(alpha, f, mean, sigma, use, eps):
    """x = -kappa log f and y = log N* with one kappa per row: the median alpha over ``use``."""
    with np.errstate(all="ignore"):
        a = np.nanmedian(np.where(use, alpha, np.nan), axis=-1) if use.any() else np.full(alpha.shape[0], np.nan)
        k = _kappa(a)[:, None]
        x = np.where(f > 0, -k * np.log(f), np.nan)
        y = k * np.log(eps * sigma / np.abs(mean))
    return x, y


def _x(alpha, f):
    with np.errstate(all="ignore"):
        return np.where(f > 0, -_kappa(alpha) * np.log(f), np.nan)


def measure_learnability(sums: MatchedSums | dict, *, N_grid: ArrayLike = N_GRID, eps: float = SNR_EPS,
                         n_boot: int = N_BOOT, seed: int = 0, N_eval: ArrayLike | None = None
                         ) -> LearnabilityMeasurement:
    r"""Measure the learnability window and test the master law (module docstring).

    Parameters
    ----------
    sums : MatchedSums or dict
        The sums (or a dict of their arrays, :meth:`MatchedSums.from_dict`), S >= 8 sequences.
    N_grid : array_like, shape (n_N,), default :data:`N_GRID`
        Increasing sample sizes > 0 of the SNR rule (the paper's).
    eps : float, default :data:`SNR_EPS`
        SNR threshold, > 0 (the paper's 0.1).
    n_boot : int, default :data:`N_BOOT`
        Bootstrap replicates over sequences, >= 50.
    seed : int, default 0
        Seed of the bootstrap (``numpy.random.default_rng``), >= 0.
    N_eval : array_like, shape (n_E,), optional
        Sample sizes > 0 at which H_N is reported (default: N_grid).

    Returns
    -------
    LearnabilityMeasurement
        Everything per lag, the windows H_N and the master-law fits.

    Raises
    ------
    ValueError
        For fewer than 8 sequences, malformed sums, a bad grid or parameters out of range.

    Notes
    -----
    The fit of the master law uses the lags where :math:`\hat\alpha > 1.01` and :math:`f > 0`, and:
    for the grid version (the paper's: :math:`x` with each lag's own :math:`\kappa(\hat\alpha(l))`),
    :math:`N(l)` found in the grid; for :math:`N^*(l)`, the mean clearly resolved
    (:math:`|m| >` 3 bootstrap SE), with one :math:`\kappa` (the median :math:`\hat\alpha`
    of those lags) in :math:`x` and in :math:`N^*` (the theory's single :math:`\alpha_g`): the lags from the
    first resolved one up to the second unresolved one after it (so that no lag is picked for its own noise),
    weighted by the inverse bootstrap variance of :math:`\log N^*(l)`. The lag set is fixed on the full
    sample; a replicate drops the lags where its own N is undefined. The interval is the percentile
    interval of the replicates' slopes; "consistent" means 1 lies inside it.

    The master law tested is

    .. math::

        N(\ell) = C\, f(\ell)^{-\kappa_\alpha}, \qquad
        \log N(\ell) = \log C + b\,x(\ell), \quad x(\ell) = -\kappa_\alpha \log f(\ell),

    with b = 1 in theory.

    References
    ----------
    * L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790 (from
      v4), and its code ``lorenzolivi/learnability`` at d5efbd2.
    * I. A. Koutrouvelis, "Regression-type estimation of the parameters of stable laws",
      *J. Amer. Statist. Assoc.* 75 (1980) 918-928.
    * B. Efron, R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall (1993),
      §13 (percentile intervals).
    * The specification, §6.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> L, S, n = 8, 16, 2500                     # lags, sequences, samples per sequence and lag
    >>> lags = np.geomspace(1, 100, L)
    >>> f = lags ** -0.5                          # the envelope f(l)
    >>> psi = 0.15 * f[:, None, None] + rng.normal(size=(L, S, n))   # mean 0.15 f(l), Gaussian noise
    >>> t = np.tile(np.geomspace(0.1, 3.0, 8), (L, 1))              # the ECF grid
    >>> tx = t[:, None, None, :] * psi[..., None]
    >>> sums = MatchedSums(lags=lags, count=np.full((L, S), float(n)), total=psi.sum(-1), t=t,
    ...                    cos=np.cos(tx).sum(2), sin=np.sin(tx).sum(2),
    ...                    envelope=np.tile(f[:, None], (1, S)))
    >>> m = measure_learnability(sums, eps=1.0, n_boot=200)
    >>> print(np.round(m.alpha, 2))               # Gaussian fluctuations
    [2. 2. 2. 2. 2. 2. 2. 2.]
    >>> print(m.n_required)                       # N(l) grows as f(l)^-2 = l
    [  25.   50.  100.  150.  300.  600. 1200. 3200.]
    >>> c = m.master["continuous"]
    >>> round(c["slope"], 2), c["consistent_with_1"], m.decay["f_class"]
    (0.99, True, 'polynomial')
    """
    if not isinstance(sums, MatchedSums):
        sums = MatchedSums.from_dict(sums)
    S = sums.n_sequences
    if S < 8:
        raise ValueError(f"sums: {S} sequences; at least 8 are needed to resample sequences")
    grid = check_array("N_grid", N_grid, ndim=1, min_size=1, lo=0.0, lo_open=True, increasing=True)
    eps = check_real("eps", eps, 0.0, lo_open=True)
    n_boot = check_int("n_boot", n_boot, 50)
    seed = check_int("seed", seed, 0)
    N_ev = grid if N_eval is None else check_array("N_eval", N_eval, ndim=1, min_size=1, lo=0.0, lo_open=True)
    pts = ecf_points(sums.count.sum(1), sums.cos.sum(1), sums.sin.sum(1), sums.t)       # (L, K)
    full = {k: v[0] for k, v in _chain(sums, np.ones((1, S)), pts, grid, eps).items()}
    rng = np.random.default_rng(seed)
    W = rng.multinomial(S, np.full(S, 1.0 / S), size=n_boot).astype(np.float64)
    boot = _chain(sums, W, pts, grid, eps)
    lo_q, hi_q = (1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2

    def se(k):
        return np.nanstd(boot[k], axis=0, ddof=1)

    def pct(a, axis=0):
        with np.errstate(all="ignore"):
            return np.stack([np.nanquantile(a, lo_q, axis=axis), np.nanquantile(a, hi_q, axis=axis)], -1)

    mean_se = se("mean")
    significant = np.abs(full["mean"]) > SIGNIFICANCE_Z * mean_se
    H = empirical_window(sums.lags, full["n_req"], N_ev)
    H_boot = empirical_window(sums.lags, boot["n_req"], N_ev)
    H_star = empirical_window(sums.lags, np.where(significant, full["n_star"], np.nan), N_ev)
    H_sig = empirical_window(sums.lags, np.where(significant, full["n_req"], np.nan), N_ev)
    ok_a = (full["alpha"] > ALPHA_FLOOR) & (full["f"] > 0)
    master = {}
    use_g = ok_a & np.isfinite(full["n_req"])
    resolved = ok_a & (np.abs(full["mean"]) > FIT_Z * mean_se) & np.isfinite(full["n_star"])
    # from the first resolved lag up to the second unresolved one after it: a lag is not chosen
    # for its own noise
    after = np.cumsum(resolved) > 0
    use_c = resolved & after & (np.cumsum(~resolved & after) < 2)
    # grid (the paper's): per-lag kappa(alpha_hat(l)) in x, the grid N(l) in y
    xg, yg = _x(full["alpha"], full["f"]), np.log(full["n_req"])
    with np.errstate(all="ignore"):
        xgb, ygb = _x(boot["alpha"], boot["f"]), np.log(boot["n_req"])
    # continuous: one kappa (the median alpha_hat over the fitted lags) in x and in N*(l)
    xc, yc = _pooled_xy(full["alpha"][None], full["f"][None], full["mean"][None], full["sigma"][None], use_c, eps)
    xcb, ycb = _pooled_xy(boot["alpha"], boot["f"], boot["mean"], boot["sigma"], use_c, eps)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)             # lags without finite replicates
        w_c = 1.0 / np.nanvar(np.where(np.isfinite(ycb), ycb, np.nan), axis=0, ddof=1)
    for name, use, x, y, xb, yb, nv, wt in (("grid", use_g, xg, yg, xgb, ygb, full["n_req"], None),
                                            ("continuous", use_c, xc[0], yc[0], xcb, ycb, full["n_star"], w_c)):
        b, a, r2 = master_slope(np.where(use, x, np.nan), np.where(use, y, np.nan), wt)
        bs = _slopes(np.where(use, xb, np.nan), np.where(use, yb, np.nan), wt)
        fin = bs[np.isfinite(bs)]
        ci = (float(np.quantile(fin, lo_q)), float(np.quantile(fin, hi_q))) if fin.size >= 20 else (math.nan,) * 2
        master[name] = {"slope": b, "intercept": a, "r2": r2, "n_lags": int(use.sum()),
                        "lags": sums.lags[use].tolist(), "x": x[use].tolist(), "log_N": y[use].tolist(),
                        "slope_se": float(np.std(fin, ddof=1)) if fin.size > 1 else math.nan,
                        "slope_interval": list(ci),
                        "consistent_with_1": bool(ci[0] <= 1.0 <= ci[1]) if np.all(np.isfinite(ci)) else None,
                        "n_unique_N": int(np.unique(nv[use]).size), "withheld": None}
        if master[name]["n_unique_N"] < MIN_DISTINCT_N:   # a slope through (nearly) equal N(l) says nothing
            master[name].update(slope=math.nan, intercept=math.nan, r2=math.nan, slope_se=math.nan,
                                slope_interval=[math.nan, math.nan], consistent_with_1=None,
                                withheld=f"fewer than {MIN_DISTINCT_N} distinct N(l) among the fitted lags "
                                         f"({master[name]['n_unique_N']}): the slope is not identified")
    alpha_pooled = float(np.nanmedian(np.where(significant, full["alpha"], np.nan))) \
        if significant.any() else float(np.nanmedian(full["alpha"]))
    decay = _decay(sums.lags, full["f"], full["n_star"], full["alpha"], master["continuous"]["lags"],
                   alpha_pooled, N_ev, H_star)
    # how much of f's decay the noise scale carries: 1 = sigma ∝ f, so |m|/sigma need not decay with f
    pos = (full["f"] > 0) & (full["sigma"] > 0)
    with np.errstate(all="ignore"):
        decay["sigma_on_f_loglog_slope"] = master_slope(np.log(full["f"][pos]), np.log(full["sigma"][pos]))[0]
    return LearnabilityMeasurement(
        lags=sums.lags, n_samples=full["n"], n_sequences=S, mean=full["mean"], mean_se=mean_se,
        significant=significant, alpha=full["alpha"], alpha_se=se("alpha"), sigma=full["sigma"],
        sigma_se=se("sigma"), f=full["f"], f_se=se("f"), N_grid=grid, eps=eps,
        snr=snr(np.abs(full["mean"]), full["sigma"], full["alpha"], grid[:, None]),
        n_required=full["n_req"], n_star=full["n_star"], n_star_interval=pct(boot["n_star"]),
        N_eval=np.asarray(N_ev, dtype=np.float64), H_N=H, H_N_interval=pct(H_boot),
        H_N_significant=H_sig, H_N_star=H_star, master=master, decay=decay,
        alpha_pooled=alpha_pooled, n_boot=n_boot, seed=seed)


_WINDOW_LAW = {"exponential": "logarithmic", "polynomial": "polynomial", "logarithmic": "exponential"}


def _decay(lags, f, n_star, alpha, fit_lags, alpha_g, N_ev, H_star) -> dict:
    """Decay class of f, the H_N scaling it implies, and the predicted H_N with C from the data."""
    ok = f > 0
    if ok.sum() < 6:
        return {"status": "unavailable", "reason": "fewer than 6 lags with f > 0"}
    fmax = float(f[ok].max())
    fn = np.where(ok, f / fmax, np.nan)
    try:
        dc = classify_decay(lags[ok], fn[ok], f_start=1.0)
    except ValueError as exc:
        return {"status": "unavailable", "reason": str(exc)}
    out: dict[str, Any] = {"status": "ok", "f_class": dc.name, "H_N_growth": _WINDOW_LAW[dc.name],
                           "fit": dc.records(), "f_normalised_by": fmax}
    a_g = float(np.clip(alpha_g, ALPHA_FLOOR, 2.0)) if np.isfinite(alpha_g) else math.nan
    sel = np.isin(lags, fit_lags) & ok & np.isfinite(n_star)
    if not np.isfinite(a_g) or sel.sum() < 2:
        out["prediction"] = {"status": "unavailable", "reason": "too few lags with a measured N*(l)"}
        return out
    k = a_g / (a_g - 1.0)
    # N = C fn^-kappa: log C from the lags of the fit, slope fixed at 1 (the theory's)
    logC = float(np.median(np.log(n_star[sel]) + k * np.log(fn[sel])))
    cand = dc.candidates[dc.name]
    par = cand["param"]
    win = (lags >= dc.lag_lo) & (lags <= dc.lag_hi) & ok
    lw, yw = lags[win], np.log(fn[win])
    term = {"exponential": -lw / par, "polynomial": -par * np.log(lw),
            "logarithmic": -par * np.log(np.log(lw)) if np.all(lw > 1) else np.full(lw.shape, np.nan)}[dc.name]
    c = float(np.mean(yw - term))                    # intercept with the class's parameter fixed
    C_law = math.exp(logC - k * c)
    kw = {"exponential": {"tau": par}, "polynomial": {"beta": par}, "logarithmic": {"gamma": par}}[dc.name]
    pred = []
    for N in np.asarray(N_ev, dtype=float):
        try:
            pred.append(float(window_scaling_law(dc.name, N, C=C_law, alpha_g=a_g, **kw)) if N >= C_law else 0.0)
        except (ValueError, OverflowError):
            pred.append(math.nan)
    out["prediction"] = {"status": "ok", "alpha_g": a_g, "kappa_alpha": k, "log_C": logC,
                         "C_scaling_law": C_law, "class_parameter": {cand["param_name"]: par, "intercept": c},
                         "N": np.asarray(N_ev, dtype=float).tolist(), "H_N_predicted": pred,
                         "H_N_measured_continuous": np.asarray(H_star, dtype=float).tolist(),
                         "note": "H_N predicted from the decay class of f with C from the data (slope fixed "
                                 "at 1); compare with H_N from N*(l). Lags outside the measured range are "
                                 "extrapolation."}
    return out
