r"""Symmetric alpha-stable fit by the empirical characteristic function, from per-group sums.

For a symmetric :math:`\alpha`-stable law with scale :math:`\sigma` and any location :math:`m`,
:math:`|\phi(t)|^2 = e^{-2 |\sigma t|^\alpha}` (scipy ``levy_stable`` with beta = 0; S0 and S1
agree), so

.. math::

    Y(t) = \log\big(-\log |\phi(t)|^2\big) = \log 2 + \alpha \log \sigma + \alpha \log t

is a straight line in :math:`\log t` whose slope is :math:`\alpha`: the regression method of
Koutrouvelis (1980), symmetric case. :math:`|\phi|^2` does not depend on the location, so
samples with a non-zero mean (a signal) are fitted as they are.

The estimator works on **sufficient sums per group** (a group: one sequence, one seed, one block
of correlated samples): the count :math:`n_g` and :math:`\sum_i \cos(t_k x_i)`,
:math:`\sum_i \sin(t_k x_i)` on a fixed grid :math:`t_k`. Any resample of whole groups (a
bootstrap, a jackknife) is then a weighted sum of those, so its error needs no second pass over
the samples and respects the dependence inside a group.

* :func:`ecf_grid`: the grid :math:`t_k = u_k / s` from a robust scale :math:`s`
  (:math:`\mathrm{IQR} / 2`, which is within 5 % of :math:`\sigma` for every
  :math:`\alpha \in [1, 2]`); :math:`u_k` log-spaced on [0.02, 3].
* :func:`ecf_sums`: the per-group sums of samples laid out as (groups, samples per group).
* :func:`ecf_points`: which grid points enter the fit (:math:`0.05 \le |\hat\phi|^2 \le 0.95` on
  the full sample) and their weights, the inverse of the i.i.d. asymptotic variance of
  :math:`Y(t_k)` under a preliminary unweighted fit (Kogon & Williams 1998 study the choice of
  points).
* :func:`fit_from_sums`: ``(alpha, sigma)`` by weighted least squares, vectorised over any
  leading axes of the weighted sums (e.g. bootstrap replicates x lags).

References
----------
I. A. Koutrouvelis (1980), "Regression-type estimation of the parameters of stable laws",
J. Amer. Statist. Assoc. 75, 918-928.
S. M. Kogon and D. B. Williams (1998), "Characteristic function based estimation of stable
distribution parameters", in A Practical Guide to Heavy Tails, Birkhauser, 311-335.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from levysde.core.validate import check_array, check_int, check_real

__all__ = ["ECF_POINTS", "ECF_U_RANGE", "ECF_PHI2_RANGE", "ecf_grid", "ecf_sums", "ecf_points",
           "fit_from_sums", "robust_half_iqr"]

#: number of grid points of the characteristic-function fit
ECF_POINTS = 24
#: range of ``u = t * s`` (s: the robust scale IQR / 2) spanned by the grid, log-spaced
ECF_U_RANGE = (0.02, 3.0)
#: grid points enter the fit where the full-sample ``|phi_hat(t)|^2`` lies in this range
ECF_PHI2_RANGE = (0.05, 0.95)
#: fewest usable grid points for a fit
MIN_POINTS = 4


def ecf_grid(scale: ArrayLike, n_points: int = ECF_POINTS) -> NDArray[np.float64]:
    r"""Grid :math:`t_k = u_k / s` of the characteristic-function fit.

    Parameters
    ----------
    scale : float or array_like, shape (...,)
        A robust scale :math:`s > 0` of the samples, e.g. ``IQR / 2``
        (:func:`robust_half_iqr`; for a symmetric alpha-stable law the IQR is between
        1.91 sigma (alpha = 2) and 2 sigma (alpha = 1)). Units of the samples.
    n_points : int, optional
        Number of grid points K, >= 4 (default :data:`ECF_POINTS` = 24).

    Returns
    -------
    ndarray, shape (..., n_points)
        The grid points :math:`t_k > 0` (inverse units of the samples), with :math:`u_k`
        log-spaced on :data:`ECF_U_RANGE`, so that :math:`|\phi(t_k)|^2` runs from about 1 to
        below 0.01 for every alpha in [1, 2].

    Raises
    ------
    ValueError
        Naming ``scale`` when a scale is not finite and > 0, or ``n_points`` when it is < 4.

    Notes
    -----
    The grid spans the range where :math:`\log(-\log|\phi(t)|^2)` is well estimated
    (Koutrouvelis 1980; Kogon & Williams 1998 on the choice of points).

    References
    ----------
    I. A. Koutrouvelis (1980), J. Amer. Statist. Assoc. 75, 918-928. S. M. Kogon and
    D. B. Williams (1998), in *A Practical Guide to Heavy Tails*, Birkhauser, 311-335.

    Examples
    --------
    >>> ecf_grid(1.0, 4).round(3)
    array([0.02 , 0.106, 0.565, 3.   ])
    """
    s = check_array("scale", scale, lo=0.0, lo_open=True)
    n_points = check_int("n_points", n_points, MIN_POINTS)
    u = np.geomspace(*ECF_U_RANGE, n_points)
    return u / s[..., None]


def ecf_sums(samples: ArrayLike, t: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    r"""Per-group sums of the empirical characteristic function.

    Parameters
    ----------
    samples : array_like, shape (G, n)
        n samples of each of G groups (a group: one sequence, seed or block of correlated
        samples); finite reals, NaN marks a missing sample and is skipped.
    t : array_like, shape (K,)
        Grid points > 0, K >= 4 (:func:`ecf_grid`).

    Returns
    -------
    count : ndarray, shape (G,)
        Number of (non-NaN) samples of each group, float64.
    cos : ndarray, shape (G, K)
        :math:`\sum_i \cos(t_k x_i)` over each group's samples.
    sin : ndarray, shape (G, K)
        :math:`\sum_i \sin(t_k x_i)` over each group's samples.

    Raises
    ------
    ValueError
        For a ``samples`` that is not 2-d or holds infinite values, or naming ``t`` for a grid
        that is not 1-d with at least 4 finite points > 0.

    Notes
    -----
    The empirical characteristic function of any union of groups is
    :math:`\hat\phi(t_k) = (\sum_g \cos_{gk} + i \sum_g \sin_{gk}) / \sum_g n_g`, so a resample
    of whole groups (bootstrap, jackknife) is a weighted sum of these rows and needs no second
    pass over the samples (module docstring).

    Examples
    --------
    >>> x = np.array([[0.0, 1.0, np.nan], [2.0, -1.0, 0.5]])
    >>> n, c, s = ecf_sums(x, [0.5, 1.0, 1.5, 2.0])
    >>> print(n, c.shape, np.round(c[0], 4))
    [2. 3.] (2, 4) [1.8776 1.5403 1.0707 0.5839]
    """
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"samples must be a 2-d array (groups, samples per group), got shape {x.shape}")
    if np.any(np.isinf(x)):
        raise ValueError("samples must be finite (NaN marks a missing sample)")
    tk = check_array("t", t, ndim=1, min_size=MIN_POINTS, lo=0.0, lo_open=True)
    ok = np.isfinite(x)
    count = ok.sum(1).astype(np.float64)
    arg = np.where(ok, x, 0.0)[:, :, None] * tk
    c = np.where(ok[:, :, None], np.cos(arg), 0.0).sum(1)
    s = np.where(ok[:, :, None], np.sin(arg), 0.0).sum(1)
    return count, c, s


def _phi2(count, cos, sin):
    with np.errstate(invalid="ignore", divide="ignore"):
        return (cos / count[..., None]) ** 2 + (sin / count[..., None]) ** 2


def _wls(logt, y, w):
    """Weighted least squares of y on logt over the last axis; returns (slope, intercept)."""
    sw = w.sum(-1)
    xb = (w * logt).sum(-1) / sw
    yb = (w * y).sum(-1) / sw
    dx = logt - xb[..., None]
    slope = (w * dx * (y - yb[..., None])).sum(-1) / (w * dx * dx).sum(-1)
    return slope, yb - slope * xb


def ecf_points(count: ArrayLike, cos: ArrayLike, sin: ArrayLike, t: ArrayLike) -> NDArray[np.float64]:
    r"""Weights of the grid points in the fit, from the full sample (0 = point left out).

    Parameters
    ----------
    count : array_like, shape (...,)
        Total number of samples behind the sums.
    cos, sin : array_like, shape (..., K)
        Total sums of :math:`\cos(t_k x)` and :math:`\sin(t_k x)` (those of :func:`ecf_sums`
        summed over the groups).
    t : array_like, shape (..., K)
        The grid (:func:`ecf_grid`), broadcast against ``cos``.

    Returns
    -------
    ndarray, shape (..., K)
        Weights >= 0 that sum to 1: zero outside :data:`ECF_PHI2_RANGE`
        (:math:`0.05 \le |\hat\phi|^2 \le 0.95`), elsewhere proportional to the inverse of the
        asymptotic variance of :math:`Y(t_k)`. All zero where fewer than 4 points qualify.

    Notes
    -----
    For i.i.d. samples, with :math:`p = |\phi(t)|` from a preliminary unweighted fit and
    :math:`p(2t) = p(t)^{2^\alpha}`,

    .. math::

        \operatorname{Var} Y(t) \approx \frac{1 + p(2t) - 2 p(t)^2}{2 n\, p(t)^2 \log^2 p(t)},
        \qquad Y(t) = \log\big(-\log|\hat\phi(t)|^2\big),

    by the delta method on :math:`|\hat\phi|^2`; the weights are its inverse, normalised.

    References
    ----------
    I. A. Koutrouvelis (1980), J. Amer. Statist. Assoc. 75, 918-928; S. M. Kogon and
    D. B. Williams (1998), in *A Practical Guide to Heavy Tails*, Birkhauser, 311-335.

    Examples
    --------
    >>> x = np.random.default_rng(0).standard_normal((4, 500))      # alpha = 2
    >>> t = ecf_grid(robust_half_iqr(x))
    >>> n, c, s = ecf_sums(x, t)
    >>> w = ecf_points(n.sum(), c.sum(0), s.sum(0), t)
    >>> print(w.shape, round(float(w.sum()), 12), int((w > 0).sum()) >= 4)
    (24,) 1.0 True
    """
    n = np.asarray(count, dtype=np.float64)
    p2 = _phi2(n, np.asarray(cos, dtype=np.float64), np.asarray(sin, dtype=np.float64))
    tk = np.broadcast_to(np.asarray(t, dtype=np.float64), p2.shape)
    use = (p2 >= ECF_PHI2_RANGE[0]) & (p2 <= ECF_PHI2_RANGE[1])
    w0 = use.astype(np.float64)
    enough = use.sum(-1) >= MIN_POINTS
    with np.errstate(all="ignore"):
        y = np.log(-np.log(np.where(use, p2, 0.5)))
        a0, c0 = _wls(np.log(tk), y, np.where(enough[..., None], w0, 1.0))
        a0 = np.clip(np.where(np.isfinite(a0), a0, 2.0), 0.5, 2.0)
        s_a = np.exp(c0 / a0) / 2.0 ** (1.0 / a0)              # sigma^alpha = e^c / 2
        u = np.abs(s_a[..., None] * tk) ** a0[..., None]          # -log p
        p = np.exp(-u)
        var_c = np.maximum(1.0 + p ** (2.0 ** a0[..., None]) - 2.0 * p * p, 1e-300)
        w = p * p * u * u / var_c
    w = np.where(use & enough[..., None] & np.isfinite(w), w, 0.0)
    tot = w.sum(-1, keepdims=True)
    return np.where(tot > 0, w / np.where(tot > 0, tot, 1.0), 0.0)


def fit_from_sums(count: ArrayLike, cos: ArrayLike, sin: ArrayLike, t: ArrayLike,
                  weights: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r""":math:`(\hat\alpha, \hat\sigma)` of a symmetric alpha-stable law from weighted ECF sums.

    Parameters
    ----------
    count : array_like, shape (...,)
        Samples behind the sums (any resample: a weighted sum over groups).
    cos, sin : array_like, shape (..., K)
        Sums of :math:`\cos(t x)` and :math:`\sin(t x)`.
    t : array_like, shape (..., K)
        The grid (broadcast against ``cos``).
    weights : array_like, shape (..., K)
        Point weights (:func:`ecf_points` of the full sample, held fixed for every resample).

    Returns
    -------
    alpha : ndarray, shape (...,)
        The weighted least-squares slope of :math:`\log(-\log|\hat\phi|^2)` on :math:`\log t`.
        Not clipped (a Gaussian sample gives alpha near 2, either side).
    sigma : ndarray, shape (...,)
        The scale :math:`(e^c/2)^{1/\alpha}` from the intercept c (units of the samples).

    Both are NaN where no point has weight or a resample's :math:`|\hat\phi|^2` leaves (0, 1)
    at a weighted point.

    Notes
    -----
    For a symmetric alpha-stable law with scale sigma and any location,
    :math:`|\phi(t)|^2 = \exp(-2|\sigma t|^\alpha)`, so

    .. math::

        \log\big(-\log|\phi(t)|^2\big) = \log 2 + \alpha\log\sigma + \alpha\log t,

    a straight line in :math:`\log t` of slope alpha: Koutrouvelis's (1980) regression, symmetric
    case with the location left free (module docstring).

    References
    ----------
    I. A. Koutrouvelis (1980), "Regression-type estimation of the parameters of stable laws",
    J. Amer. Statist. Assoc. 75, 918-928.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.stats import levy_stable
    >>> x = levy_stable.rvs(1.5, 0.0, scale=2.0, size=(20, 2000), random_state=1)
    >>> t = ecf_grid(np.subtract(*np.percentile(x, [75, 25])) / 2)
    >>> n, c, s = ecf_sums(x, t)
    >>> w = ecf_points(n.sum(), c.sum(0), s.sum(0), t)
    >>> a, sig = fit_from_sums(n.sum(), c.sum(0), s.sum(0), t, w)
    >>> bool(abs(a - 1.5) < 0.05 and abs(sig - 2.0) < 0.1)
    True
    """
    n = np.asarray(count, dtype=np.float64)
    p2 = _phi2(n, np.asarray(cos, dtype=np.float64), np.asarray(sin, dtype=np.float64))
    w = np.broadcast_to(np.asarray(weights, dtype=np.float64), p2.shape)
    tk = np.broadcast_to(np.asarray(t, dtype=np.float64), p2.shape)
    with np.errstate(all="ignore"):
        bad = ((w > 0) & ~((p2 > 0) & (p2 < 1))).any(-1) | ~(w.sum(-1) > 0)
        y = np.log(-np.log(np.where(w > 0, p2, 0.5)))
        a, c = _wls(np.log(tk), np.where(w > 0, y, 0.0), w)
        sigma = (np.exp(c) / 2.0) ** (1.0 / a)
    a = np.where(bad, np.nan, a)
    return a, np.where(bad | ~(a > 0), np.nan, sigma)


def robust_half_iqr(samples: ArrayLike) -> float:
    r"""Half the interquartile range of the finite samples: the scale of :func:`ecf_grid`.

    Parameters
    ----------
    samples : array_like
        Samples of any shape; non-finite values are left out.

    Returns
    -------
    float
        :math:`(q_{75} - q_{25})/2` > 0, in the samples' units (numpy's default linear
        interpolation of the percentiles).

    Raises
    ------
    ValueError
        When there are fewer than 8 finite samples, or the IQR is 0 (a degenerate sample: half
        or more of it equal).

    Notes
    -----
    For a symmetric alpha-stable law of scale sigma the IQR lies between 1.91 sigma
    (alpha = 2) and 2 sigma (alpha = 1), so this is within 5 % of sigma for every alpha in
    [1, 2] (module docstring).

    Examples
    --------
    >>> print(robust_half_iqr(np.arange(9.0)))
    2.0
    """
    x = np.asarray(samples, dtype=np.float64)
    x = x[np.isfinite(x)]
    if x.size < 8:
        raise ValueError(f"samples: {x.size} finite values; at least 8 are needed for a scale")
    q25, q75 = np.percentile(x, [25, 75])
    s = check_real("IQR / 2 of the samples", 0.5 * (q75 - q25), 0.0, lo_open=True,
                   why="a degenerate sample (half or more of it equal)")
    return float(s)
