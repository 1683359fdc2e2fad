"""The tempered Pareto law above a threshold and its maximum-likelihood fit (peaks over threshold).

A symmetric tempered-stable Levy measure has the density ``nu(x) ~ |x|^(-1-alpha) exp(-lam |x|)``
(docs/specification.md §2; Rosinski 2007). Above a threshold u > 0 the law of the jump sizes is
therefore the *tempered Pareto* law with density

    f(x) = x^(-1-alpha) exp(-lam x) / N(alpha, lam, u),   x > u,
    N(alpha, lam, u) = int_u^inf x^(-1-alpha) exp(-lam x) dx = u^(-alpha) E_{1+alpha}(lam u),

``E_p(z) = int_1^inf t^(-p) exp(-z t) dt`` the generalised exponential integral. It is a
two-parameter exponential family in the sufficient statistics ``(sum log x, sum x)``: the
likelihood of n exceedances depends on the data only through n, their mean ``log(x/u)`` and their
mean ``x/u``, so a delete-a-group jackknife refits from per-group sums without a second pass over
the data. Here alpha is any real in [:data:`ALPHA_RANGE`] (an effective polynomial index: the
increments of a process over a finite interval have the measure's exponential rate lam but, at
moderate x, a polynomial factor bent by the Gaussian part and by the sums of jumps), and lam >= 0
(lam = 0 is the Pareto law, which needs alpha > 0).

* :func:`log_norm`: ``log N`` in the scaled form ``log E_{1+alpha}(theta)``, theta = lam u;
* :func:`logpdf`, :func:`sample` (exact, by rejection from a Pareto or a shifted exponential);
* :func:`fit_from_sums`, :func:`fit`: the MLE of (alpha, lam) and its observed-information
  covariance.

References: Smith (1987), "Estimating tails of probability distributions", Ann. Statist. 15,
1174 and Davison & Smith (1990), "Models for exceedances over high thresholds", JRSS B 52, 393
(peaks over threshold: the conditional likelihood of the exceedances); Aban, Meerschaert &
Panorska (2006), "Parameter estimation for the truncated Pareto distribution", JASA 101, 270, and
Meerschaert, Roy & Shao (2012), "Parameter estimation for exponentially tempered power law
distributions", Comm. Statist. Theory Methods 41, 1839 (the tempered Pareto law and its MLE);
Rosinski (2007), "Tempering stable processes", Stoch. Proc. Appl. 117, 677 (the Levy measure).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize

from levysde.core.validate import check_array, check_int, check_real

__all__ = ["ALPHA_RANGE", "THETA_RANGE", "TemperedParetoFit", "log_norm", "logpdf", "sample", "sums",
           "fit_from_sums", "fit_lam_given_alpha", "fit"]

#: the range of the effective polynomial index alpha searched by the fit
ALPHA_RANGE = (-1.0, 4.0)
#: the range of theta = lam u searched by the fit (theta = 0: the Pareto law)
THETA_RANGE = (0.0, 200.0)
#: the fit's smallest theta (its lower bound: theta = 0 with alpha <= 0 is not normalisable)
_THETA_MIN = 1e-8
#: Gauss-Legendre nodes per piece of the normaliser's quadrature (relative error < 1e-12 over
#: ALPHA_RANGE x [1e-8, 200], against mpmath's expint in the tests)
_GL_NODES = 64


def _check_alpha_theta(alpha, theta):
    check_real("alpha", alpha, *ALPHA_RANGE)
    check_real("theta", theta, 0.0, why="lam * u, the tempering in units of the threshold")
    if theta == 0 and not alpha > 0:
        raise ValueError(f"alpha must be > 0 when lam = 0 (the Pareto law is not normalisable); got {alpha!r}")


def log_norm(alpha: float, theta: float) -> float:
    """``log E_{1+alpha}(theta) = log int_1^inf t^(-1-alpha) exp(-theta t) dt``.

    The log normaliser of the tempered Pareto law of ``y = x/u`` on y > 1 with ``theta = lam u``:
    ``log N(alpha, lam, u) = -alpha log u + log_norm(alpha, lam u)``.

    Parameters
    ----------
    alpha : float in :data:`ALPHA_RANGE`
    theta : float >= 0 (theta = 0 needs alpha > 0)

    Returns
    -------
    float

    Raises
    ------
    ValueError for alpha outside :data:`ALPHA_RANGE`, theta < 0, or theta = 0 with alpha <= 0.

    Notes
    -----
    ``E_p(theta) = exp(-theta) int_0^inf exp(-(p - 1) w - theta (e^w - 1)) dw`` (t = e^w) by
    Gauss-Legendre quadrature on three pieces of the w-axis split where ``theta (e^w - 1)`` is 0.5, 5
    and 700 (a smooth integrand on each); theta = 0 gives ``1/alpha``.
    Abramowitz & Stegun (1964), 5.1.4 (the definition of E_p).

    Examples
    --------
    >>> round(math.exp(log_norm(1.0, 0.0)), 12)        # int_1^inf t^-2 dt
    1.0
    >>> abs(log_norm(-1.0, 2.0) + 2.0 + math.log(2.0)) < 1e-12    # E_0(z) = exp(-z)/z
    True
    """
    _check_alpha_theta(alpha, theta)
    return float(_log_norm(float(alpha), float(theta)))


#: Gauss-Legendre nodes and weights on [-1, 1] per piece of the w-axis
_GL_X, _GL_W = np.polynomial.legendre.leggauss(_GL_NODES)


def _nodes(theta: float):
    """Quadrature nodes and weights on the log scale w = log y: Gauss-Legendre on the pieces
    [0, w1], [w1, w2], [w2, w3] with theta (e^w - 1) = 0.5, 5 and 700 at w1, w2, w3 (the integrand
    is a power law in y below ~1/theta and decays super-exponentially beyond; it is below
    exp(-700) past w3)."""
    edges = np.log1p(np.array([0.0, 0.5, 5.0, 700.0]) / theta)
    lo, hi = edges[:-1, None], edges[1:, None]
    w = (0.5 * (hi - lo) * _GL_X + 0.5 * (hi + lo)).ravel()
    wt = (0.5 * (hi - lo) * _GL_W).ravel()
    return w, wt


def _stats(alpha: float, theta: float, second: bool = False):
    """(log E_{1+alpha}(theta), E[log y], E[y]) under the law of y, and with ``second`` the (2, 2)
    covariance of (log y, y); theta > 0."""
    w, wt = _nodes(theta)
    a = -alpha * w - theta * np.expm1(w)
    m = a.max()
    k = wt * np.exp(a - m)
    z = k.sum()
    ln = float(-theta + m + math.log(z))
    p = k / z
    y = np.exp(w)
    e_log, e_y = float(p @ w), float(p @ y)
    if not second:
        return ln, e_log, e_y
    c = float(p @ (w * y)) - e_log * e_y
    cov = np.array([[float(p @ (w * w)) - e_log ** 2, c], [c, float(p @ (y * y)) - e_y ** 2]])
    return ln, e_log, e_y, cov


def _log_norm(alpha: float, theta: float) -> float:
    if theta == 0.0:
        return -math.log(alpha)
    return _stats(alpha, theta)[0]


def logpdf(x: ArrayLike, alpha: float, lam: float, u: float) -> np.ndarray:
    """Log density of the tempered Pareto law ``x^(-1-alpha) exp(-lam x)/N`` on x > u.

    Parameters
    ----------
    x : array_like, any shape; real (-inf where x <= u)
    alpha : float in :data:`ALPHA_RANGE`
    lam : float >= 0 (lam = 0 needs alpha > 0)
    u : float > 0, the threshold

    Returns
    -------
    ndarray shaped like x

    Raises
    ------
    ValueError for parameters outside their ranges.

    Examples
    --------
    >>> float(np.exp(logpdf(2.0, 1.0, 0.0, 1.0)))       # Pareto(1) on x > 1: 1/x^2
    0.25
    """
    check_real("u", u, 0.0, lo_open=True, why="the threshold")
    check_real("lam", lam, 0.0, why="the tempering rate")
    _check_alpha_theta(alpha, lam * u)
    x = np.asarray(x, dtype=float)
    ln = -alpha * math.log(u) + _log_norm(float(alpha), float(lam * u))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -(1.0 + alpha) * np.log(x) - lam * x - ln
    return np.where(x > u, out, -np.inf)


def sample(rng: np.random.Generator, n: int, alpha: float, lam: float, u: float) -> np.ndarray:
    """Exact draws from the tempered Pareto law on x > u, by rejection.

    Parameters
    ----------
    rng : numpy.random.Generator
    n : int >= 0, the number of draws
    alpha : float in :data:`ALPHA_RANGE`; lam : float >= 0 (lam = 0 needs alpha > 0); u : float > 0

    Returns
    -------
    ndarray, shape (n,)

    Raises
    ------
    ValueError for parameters outside their ranges.

    Notes
    -----
    Two envelopes, the one with the larger acceptance rate: the Pareto law ``u U^(-1/alpha)``
    (alpha > 0) accepted with probability ``exp(-lam (x - u))``, acceptance ``alpha/(alpha + ...)``
    high when ``alpha > lam u``; or the shifted exponential ``u + E/lam`` accepted with probability
    ``(x/u)^(-1-alpha)`` (<= 1 for alpha >= -1). Both accept with the exact target density up to a
    constant (von Neumann's rejection method; Devroye 1986, *Non-Uniform Random Variate Generation*,
    §II.3).

    Examples
    --------
    >>> x = sample(np.random.default_rng(0), 1000, 0.5, 2.0, 1.0)
    >>> bool(x.min() > 1.0), x.shape
    (True, (1000,))
    """
    check_int("n", n, 0)
    check_real("u", u, 0.0, lo_open=True, why="the threshold")
    check_real("lam", lam, 0.0, why="the tempering rate")
    _check_alpha_theta(alpha, lam * u)
    out = np.empty(0)
    pareto = alpha > 0 and alpha >= lam * u
    while out.size < n:
        m = max(16, 2 * (n - out.size))
        if pareto:
            x = u * rng.uniform(size=m) ** (-1.0 / alpha)
            keep = rng.uniform(size=m) < np.exp(-lam * (x - u))
        else:
            x = u + rng.standard_exponential(m) / lam
            keep = rng.uniform(size=m) < (x / u) ** (-1.0 - alpha)
        out = np.concatenate([out, x[keep]])
    return out[:n]


def sums(x: ArrayLike, u: float, groups: ArrayLike | None = None, n_groups: int | None = None):
    """Per-group sufficient statistics of the exceedances of u: (count, sum log(x/u), sum x/u).

    Parameters
    ----------
    x : array_like, shape (n,); the values (those <= u are ignored)
    u : float > 0
    groups : array_like of int, shape (n,), optional; group labels in [0, n_groups)
    n_groups : int, optional; default max(groups) + 1 (1 without groups)

    Returns
    -------
    ndarray, shape (G, 3)

    Examples
    --------
    >>> sums(np.array([0.5, 2.0, 4.0]), 1.0).round(6).tolist()
    [[2.0, 2.079442, 6.0]]
    """
    check_real("u", u, 0.0, lo_open=True, why="the threshold")
    x = np.asarray(x, dtype=float).ravel()
    g = np.zeros(x.size, dtype=int) if groups is None else np.asarray(groups, dtype=int).ravel()
    G = int(n_groups) if n_groups is not None else (int(g.max()) + 1 if g.size else 1)
    sel = x > u
    y, gs = x[sel] / u, g[sel]
    return np.column_stack([np.bincount(gs, minlength=G).astype(float),
                            np.bincount(gs, weights=np.log(y), minlength=G),
                            np.bincount(gs, weights=y, minlength=G)])


@dataclass(frozen=True)
class TemperedParetoFit:
    """The MLE of :func:`fit_from_sums`.

    Attributes
    ----------
    alpha, lam : float
        The estimates (NaN when the fit failed).
    u : float
        The threshold.
    n : int
        The number of exceedances.
    cov : numpy.ndarray, shape (2, 2)
        Inverse observed information of (alpha, lam) (NaN where singular).
    loglik : float
        The maximised log likelihood of y = x/u (the Jacobian -n log u left out).
    at_bound : bool
        Whether an estimate lies on the edge of :data:`ALPHA_RANGE` or :data:`THETA_RANGE`.
    converged : bool
        Whether the optimiser reported success.

    Examples
    --------
    >>> f = fit(sample(np.random.default_rng(2), 5000, 1.5, 1.0, 1.0), 1.0)
    >>> f.n, f.u, f.cov.shape, bool(f.lam_se > 0)
    (5000, 1.0, (2, 2), True)
    """

    alpha: float
    lam: float
    u: float
    n: int
    cov: np.ndarray
    loglik: float
    at_bound: bool
    converged: bool

    @property
    def lam_se(self) -> float:
        """The observed-information standard error of lam (NaN where not finite)."""
        v = self.cov[1, 1]
        return float(math.sqrt(v)) if math.isfinite(v) and v > 0 else float("nan")


def _negll(params, n, mean_log, mean_y):
    """Negative log likelihood per exceedance and its gradient in (alpha, theta)."""
    a, th = params
    ln, e_log, e_y = _stats(float(a), float(th))
    return (1.0 + a) * mean_log + th * mean_y + ln, np.array([mean_log - e_log, mean_y - e_y])


def fit_from_sums(s: ArrayLike, u: float, start: tuple | None = None) -> TemperedParetoFit:
    """MLE of (alpha, lam) of the tempered Pareto law from the sufficient statistics of :func:`sums`.

    Parameters
    ----------
    s : array_like, shape (3,) or (G, 3)
        (count, sum log(x/u), sum x/u), summed over the rows when 2-d.
    u : float > 0, the threshold the sums were taken at
    start : (alpha, lam), optional; the optimiser's starting point (a jackknife replicate starts
        from the full fit)

    Returns
    -------
    TemperedParetoFit
        NaN estimates with fewer than 3 exceedances.

    Notes
    -----
    Maximises ``l(alpha, theta) = -n [(1 + alpha) mean log y + theta mean y + log E_{1+alpha}(theta)]``
    over alpha in :data:`ALPHA_RANGE`, theta = lam u in :data:`THETA_RANGE` (bounded L-BFGS-B on a
    convex problem: the log normaliser of an exponential family is convex in its natural
    parameters, so the maximum is unique). The covariance is the inverse of the information
    ``n Cov(log y, y)`` (for an exponential family the observed and the expected information
    agree), transformed to (alpha, lam).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> f = fit_from_sums(sums(sample(rng, 20000, 0.8, 2.0, 0.5), 0.5), 0.5)
    >>> abs(f.lam - 2.0) < 3 * f.lam_se, abs(f.alpha - 0.8) < 3 * math.sqrt(f.cov[0, 0])
    (True, True)
    """
    check_real("u", u, 0.0, lo_open=True, why="the threshold")
    t = np.asarray(s, dtype=float)
    if t.ndim == 2:
        t = t.sum(axis=0)
    n = int(round(t[0]))
    nan2 = np.full((2, 2), np.nan)
    if n < 3:
        return TemperedParetoFit(math.nan, math.nan, float(u), n, nan2, math.nan, False, False)
    mean_log, mean_y = t[1] / t[0], t[2] / t[0]
    lo, hi = (ALPHA_RANGE[0], THETA_RANGE[0] + _THETA_MIN), (ALPHA_RANGE[1], THETA_RANGE[1])
    if start is not None and all(math.isfinite(v) for v in start):
        x0 = (float(np.clip(start[0], lo[0], hi[0])), float(np.clip(start[1] * u, lo[1], hi[1])))
    else:
        # moment start: an exponential tail above 1 has mean_y = 1 + 1/theta
        x0 = (0.5, float(np.clip(1.0 / max(mean_y - 1.0, 1e-3), 1e-2, hi[1] / 2)))
    res = optimize.minimize(_negll, x0, args=(n, mean_log, mean_y), jac=True, method="L-BFGS-B",
                            bounds=list(zip(lo, hi, strict=True)),
                            options={"ftol": 1e-13, "gtol": 1e-9, "maxiter": 500})
    a, th = (float(v) for v in res.x)
    at_bound = bool(a - lo[0] < 1e-6 or hi[0] - a < 1e-6 or th - lo[1] < 1e-6 or hi[1] - th < 1e-6)
    ln, _, _, c_t = _stats(a, th, second=True)
    cov = nan2
    info = n * c_t                          # exponential family: observed = expected information
    if np.all(np.isfinite(info)) and np.linalg.det(info) > 0:
        c = np.linalg.inv(info)
        J = np.diag([1.0, 1.0 / u])         # (alpha, theta) -> (alpha, lam)
        cov = J @ c @ J
    loglik = -n * ((1.0 + a) * mean_log + th * mean_y + ln)
    # converged: the optimiser's success, or a line search stopped at rounding level with the score ~ 0
    converged = bool(res.success) or float(np.max(np.abs(_negll((a, th), n, mean_log, mean_y)[1]))) < 1e-6
    return TemperedParetoFit(a, th / u, float(u), n, cov, float(loglik), at_bound, converged)


def fit_lam_given_alpha(s: ArrayLike, u: float, alpha: float) -> tuple:
    """MLE of lam of the tempered Pareto law with alpha held fixed, from the sums of :func:`sums`.

    Parameters
    ----------
    s : array_like, shape (3,) or (G, 3); (count, sum log(x/u), sum x/u), summed over rows when 2-d
    u : float > 0, the threshold
    alpha : float in :data:`ALPHA_RANGE`

    Returns
    -------
    (lam_hat, se) : floats; NaN with fewer than 3 exceedances; lam_hat = 0 (se NaN) when the mean
        exceedance is at least the Pareto law's (alpha > 1: ``alpha/(alpha - 1)`` in units of u).

    Notes
    -----
    With alpha fixed the likelihood is a one-parameter exponential family in ``sum x``: the MLE
    solves ``E_theta[y] = mean y`` (y = x/u), and ``E_theta[y]`` decreases strictly in theta and in
    alpha (the law is stochastically decreasing in both). Hence lam_hat(alpha) decreases strictly
    in alpha: over an admissible range [a0, a1] of alpha the MLE of lam with alpha known lies in
    ``[lam_hat(a1), lam_hat(a0)]`` whatever alpha is (the profile bounds used by
    :func:`levysde.inference.jump_tail.lam_from_increments`). The error is the inverse Fisher
    information ``1/(n Var_theta(y))`` in theta, divided by u.

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> sm = sums(sample(rng, 20000, 1.0, 2.0, 0.5), 0.5)
    >>> lo, hi = fit_lam_given_alpha(sm, 0.5, 2.0)[0], fit_lam_given_alpha(sm, 0.5, 0.0)[0]
    >>> bool(lo < 2.0 < hi)
    True
    """
    check_real("u", u, 0.0, lo_open=True, why="the threshold")
    check_real("alpha", alpha, *ALPHA_RANGE)
    t = np.asarray(s, dtype=float)
    if t.ndim == 2:
        t = t.sum(axis=0)
    n = t[0]
    if n < 3:
        return math.nan, math.nan
    mean_y = t[2] / n

    def score(lt):
        return _stats(float(alpha), math.exp(lt))[2] - mean_y

    lo, hi = math.log(_THETA_MIN), math.log(THETA_RANGE[1])
    if score(lo) <= 0:
        return 0.0, math.nan
    if score(hi) >= 0:
        return THETA_RANGE[1] / u, math.nan
    th = math.exp(optimize.brentq(score, lo, hi, xtol=1e-12, rtol=1e-12))
    var = _stats(float(alpha), th, second=True)[3][1, 1]
    return th / u, (1.0 / math.sqrt(n * var) / u) if var > 0 else math.nan


def fit(x: ArrayLike, u: float) -> TemperedParetoFit:
    """MLE of (alpha, lam) of the tempered Pareto law on the exceedances of u (:func:`fit_from_sums`).

    Parameters
    ----------
    x : array_like, shape (n,); finite values (those <= u are ignored)
    u : float > 0, the threshold

    Returns
    -------
    TemperedParetoFit

    Raises
    ------
    ValueError for non-finite x or u <= 0.

    Examples
    --------
    >>> x = sample(np.random.default_rng(2), 5000, 1.5, 1.0, 1.0)
    >>> f = fit(x, 1.0)
    >>> abs(f.lam - 1.0) < 3 * f.lam_se
    True
    """
    x = check_array("x", x, ndim=1)
    return fit_from_sums(sums(x, u), u)
