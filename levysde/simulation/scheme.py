r"""The jump law of the simulation scheme (docs/specification.md §7): cut, rates, small-jump symbol, beta_model.

Jumps are split at a cut :math:`\varepsilon` = ``eps`` (Asmussen-Rosinski):

* :math:`|z| > \varepsilon`: compound Poisson with total rate :math:`\Lambda_\varepsilon`
  (:func:`big_jump_rate`). Each step receives an exact Poisson number of jumps (cost per jump,
  not per step): the CPU stepper draws a window's jumps at once, a Poisson number per block of
  particles, each on a uniform (step, particle) cell (:func:`poisson_table`); the GPU
  one carries exponential waiting times. Magnitudes have density proportional to
  :math:`e^{-\lambda z} z^{-1-\alpha}` on :math:`(\varepsilon, \infty)`, drawn exactly by
  rejection: on the CPU from a histogram envelope with an alias table and tangent/chord
  squeezes (``levysde.simulation._jumptable``); on the GPU from the Pareto proposal
  :math:`\varepsilon U^{-1/\alpha}` accepted with probability
  :math:`e^{-\lambda (z - \varepsilon)}`, or, when :math:`\lambda \varepsilon > \alpha` (where it
  accepts more often: the ratio of the two acceptance rates is
  :math:`\lambda \varepsilon / \alpha`), the exponential proposal
  :math:`\varepsilon + E/\lambda` accepted with probability :math:`(z/\varepsilon)^{-1-\alpha}`. Symmetric sign.
* :math:`|z| \le \varepsilon`: a Gaussian with variance :math:`\sigma_\varepsilon^2\, dt`
  (:func:`small_jump_variance`), merged with the Brownian part: one normal per step of variance
  :math:`(2 \eta_G + \sigma_\varepsilon^2)\, dt`. Symmetric jumps need no compensating drift.

Bias. The Gaussian stand-in changes only cumulants of order :math:`\ge 4` of the small
jumps; the simulated model's exact stationary tail rate is the root of
:math:`\Phi_\varepsilon` (:func:`beta_model`), reported next to :math:`\beta^*`.
"""
from __future__ import annotations

import math

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from levysde.core.validate import check_array, check_real
from levysde.simulation._checks import SimulationInputError, jump_params
from levysde.theory.levy import c_alpha, psi_unit_over_beta
from levysde.theory.params import DEFAULTS, check_param
from levysde.theory.phases import beta_star
from levysde.theory.roots import chandrupatla

__all__ = ["default_eps", "simulation_eps", "SIMULATION_EPS_FACTORS", "EPS_BIAS_TOL", "big_jump_rate",
           "small_jump_variance", "small_jump_symbol", "beta_model", "DEFAULT_EPS_FACTOR", "MAX_JUMPS_PER_STEP",
           "MAX_SERIES_BETA_EPS"]

#: default cut: eps = DEFAULT_EPS_FACTOR * (eta_J dt)^(1/alpha), the typical increment
DEFAULT_EPS_FACTOR = 1.0
#: multiples of :func:`default_eps` tried by :func:`simulation_eps`, largest first
SIMULATION_EPS_FACTORS = (2.0, 1.5, 1.0)
#: largest eps bias |beta_model - beta*| / beta* accepted by :func:`simulation_eps` for a larger cut
EPS_BIAS_TOL = 2.5e-4
#: cap on the expected number of big jumps per particle-step, Lambda_eps dt (a smaller eps is
#: rejected: the run would spend its time drawing jumps the Gaussian part could carry)
MAX_JUMPS_PER_STEP = 1e3
#: cap on |beta| eps for the small-jump series of :func:`small_jump_symbol`
MAX_SERIES_BETA_EPS = 1e4


def default_eps(dt: float, *, eta_j: float, alpha: float) -> float:
    """Default cut eps = DEFAULT_EPS_FACTOR * (eta_J dt)^(1/alpha) (docs/specification.md §7).

    The scale of a typical increment J_dt. With eta_J = 0 (no jumps, eps is
    irrelevant) it returns dt^(1/alpha).

    Bias of this default (docs/simulate.md, "Bias"): the small jumps |z| <= eps are
    replaced by a Gaussian of the same variance. At this eps the stand-in carries a
    visible share of J_dt, so the *shape* of one increment is not exactly the
    tempered stable law: e.g. at lam = 0, alpha = 1.5 a KS test of 20,000 increments
    against ``scipy.stats.levy_stable`` fails (p ~ 7e-4) while it passes with
    eps = 0.02 (eta_J dt)^(1/alpha). The stationary tail rate is barely affected (the
    simulated model's own rate :func:`beta_model` is reported next to beta*; +3.2e-5
    for the defaults at eta_J = 3). docs/specification.md §7 fixes this default; pass a smaller
    eps for increment-law checks.

    Parameters
    ----------
    dt : float
        Time step, > 0.
    eta_j : float
        Jump intensity, >= 0.
    alpha : float
        Stability index of the jumps, in (0, 2).

    Returns
    -------
    float
        The cut eps > 0 (dt^(1/alpha) when eta_J = 0).

    Raises
    ------
    ValueError
        If dt, eta_j or alpha is out of range (the message names it).

    Examples
    --------
    >>> print(default_eps(0.01, eta_j=3.0, alpha=1.5))
    0.09654893846056299
    >>> print((3.0 * 0.01) ** (1 / 1.5))
    0.09654893846056299
    """
    dt = check_real("dt", dt, 0.0, lo_open=True)
    a = check_param("alpha", alpha, scalar=True)
    ej = check_param("eta_j", eta_j, scalar=True)
    eps = DEFAULT_EPS_FACTOR * ((ej if ej > 0 else 1.0) * dt) ** (1.0 / a)
    if not (0.0 < eps < math.inf):
        raise SimulationInputError(
            f"{{alpha}} = {a:g} is too small for the default cut: (eta_J dt)^(1/alpha) = "
            f"({(ej if ej > 0 else 1.0) * dt:g})^{1.0 / a:g} is not a positive double; pass {{eps}} "
            f"explicitly or use a larger {{alpha}}")
    return eps


def simulation_eps(dt: float, *, eta_j: float, eta_g: float, kappa: float | None, alpha: float,
                   lam: float) -> float:
    """The default cut of :func:`levysde.simulation.simulate`: ``c * default_eps(dt)`` with the
    largest c in SIMULATION_EPS_FACTORS = (2, 1.5, 1) whose eps bias is at most EPS_BIAS_TOL:
    ``|beta_model(eps) - beta*| <= 2.5e-4 beta*`` (docs/specification.md §7: eps scales like the typical
    increment (eta_J dt)^(1/alpha); its bias is the exact shift beta_model - beta*).

    A larger cut means fewer big jumps per step (``Lambda_eps`` falls like eps^-alpha or faster),
    the most expensive part of a step (docs/simulate.md, Benchmark): c = 2 cuts them 4-fold at
    the defaults (eta_J = 3: 0.27 -> 0.067 per step at dt = 0.01) for a shift of +1.6e-4
    (1.9e-4 beta*), a tenth of a typical standard error. Where even c = 1 exceeds the tolerance
    (e.g. eta_J = 40, alpha = 0.7: +4.4e-4 beta*) the cut stays default_eps. Without a beta*
    (kappa None: no plateau; collapsed phase; lam = 0; eta_J = 0) it is default_eps.

    Parameters
    ----------
    dt : float
        Time step, > 0.
    eta_j, eta_g : float
        Jump intensity >= 0 and Gaussian intensity >= 0.
    kappa : float or None
        The drift's plateau > 0, or None when the drift has none (then eps = default_eps).
    alpha, lam : float
        Stability index in (0, 2) and tempering >= 0.

    Returns
    -------
    float
        The cut eps used by :func:`levysde.simulation.simulate` by default.

    Raises
    ------
    ValueError
        If a parameter is out of range (as :func:`default_eps`, :func:`beta_model`).

    Examples
    --------
    >>> eps = simulation_eps(0.01, eta_j=3.0, eta_g=0.1, kappa=1.0, alpha=1.5, lam=2.0)
    >>> print(round(eps / default_eps(0.01, eta_j=3.0, alpha=1.5), 6))
    2.0
    """

    base = default_eps(dt, eta_j=eta_j, alpha=alpha)
    if kappa is None or eta_j == 0 or lam == 0:
        return base
    b = float(beta_star(eta_j, eta_g, kappa, alpha, lam))
    if not (math.isfinite(b) and b > 0):
        return base
    for c in SIMULATION_EPS_FACTORS:
        bm = beta_model(eta_j, eta_g, kappa, alpha, lam, eps=c * base)
        if c == 1.0 or (math.isfinite(bm) and abs(bm - b) <= EPS_BIAS_TOL * b):
            return c * base
    return base


def big_jump_rate(eps: float, *, alpha: float, lam: float, eta_j: float) -> float:
    r"""Total rate :math:`\Lambda_\varepsilon` of jumps with :math:`|z| > \varepsilon` (1/time).

    Docs/specification.md §7:

    .. math::

        \Lambda_\varepsilon = 2 \eta_J c_\alpha \int_\varepsilon^\infty e^{-\lambda z} z^{-1-\alpha}\, dz,

    which is :math:`2 \eta_J c_\alpha \lambda^\alpha \Gamma(-\alpha, \lambda \varepsilon)`
    (:math:`\lambda > 0`) and :math:`2 \eta_J c_\alpha \varepsilon^{-\alpha}/\alpha`
    (:math:`\lambda = 0`). The incomplete gamma of
    negative order is evaluated with ``mpmath.gammainc`` (30 digits; scipy has no
    negative-order upper incomplete gamma).

    Parameters
    ----------
    eps : float
        The cut, > 0.
    alpha : float
        Stability index of the jumps, in (0, 2).
    lam : float
        Exponential tempering, >= 0 (0 = untempered).
    eta_j : float
        Jump intensity, >= 0.

    Returns
    -------
    float
        Lambda_eps >= 0, jumps per unit time.

    Raises
    ------
    ValueError
        If eps <= 0 or a parameter is out of range.

    Examples
    --------
    >>> print(big_jump_rate(0.19309787692112598, alpha=1.5, lam=2.0, eta_j=3.0))
    6.735618767388822
    """
    eps = check_real("eps", eps, 0.0, lo_open=True)
    a, lm, ej = jump_params(alpha, lam, eta_j)
    if ej == 0:
        return 0.0
    ca = float(c_alpha(a))
    if lm == 0:
        with np.errstate(over="ignore"):
            return float(np.exp(math.log(2.0 * ej * ca / a) - a * math.log(eps)))  # inf, never OverflowError
    with mpmath.workdps(30):
        g = mpmath.gammainc(-mpmath.mpf(a), mpmath.mpf(lm) * mpmath.mpf(eps))
        return float(2 * mpmath.mpf(ej) * mpmath.mpf(ca) * mpmath.mpf(lm) ** a * g)


def _lower_gamma_moment(order, eps, lam):
    """int_0^eps z^(order-1) e^{-lam z} dz for order > 0 (scipy regularised gammainc, log space;
    +inf beyond float64, never OverflowError)."""
    with np.errstate(over="ignore"):
        return float(np.exp(_log_lower_gamma_moment(float(order), eps, lam)))


def small_jump_variance(eps: float, *, alpha: float, lam: float, eta_j: float) -> float:
    r""":math:`\sigma_\varepsilon^2`, the variance per unit time of the jumps with :math:`|z| \le \varepsilon`.

    Docs/specification.md §7:

    .. math::

        \sigma_\varepsilon^2 = 2 \eta_J c_\alpha \int_0^\varepsilon z^{1-\alpha} e^{-\lambda z}\, dz,

    which is :math:`2 \eta_J c_\alpha \lambda^{\alpha-2} \gamma(2 - \alpha, \lambda \varepsilon)`
    (lower incomplete gamma; note the order :math:`2 - \alpha`),
    :math:`2 \eta_J c_\alpha \varepsilon^{2-\alpha}/(2-\alpha)` for :math:`\lambda = 0`. Evaluated with
    ``scipy.special.gammainc(2 - alpha, lam eps) * gamma(2 - alpha)``.

    Parameters
    ----------
    eps : float
        The cut, > 0.
    alpha : float
        Stability index of the jumps, in (0, 2).
    lam : float
        Exponential tempering, >= 0 (0 = untempered).
    eta_j : float
        Jump intensity, >= 0.

    Returns
    -------
    float
        sigma_eps^2 >= 0, variance per unit time.

    Raises
    ------
    ValueError
        If eps <= 0 or a parameter is out of range.

    Examples
    --------
    >>> print(small_jump_variance(0.19309787692112598, alpha=1.5, lam=2.0, eta_j=3.0))
    1.3961739699264237
    """
    eps = check_real("eps", eps, 0.0, lo_open=True)
    a, lm, ej = jump_params(alpha, lam, eta_j)
    return float(2.0 * ej * float(c_alpha(a)) * _lower_gamma_moment(2.0 - a, eps, lm))


def _log_lower_gamma_moment(order, eps, lam):
    """log int_0^eps z^(s-1) e^{-lam z} dz for an array of orders s > 0, without overflow.

    lam = 0: ``s log eps - log s``. lam > 0: ``gammaln(s) + log P(s, lam eps) - s log lam``
    (scipy's regularised gammainc), or, where P underflows (lam eps << s), the series
    form ``s log eps - lam eps - log s + log 1F1(1; s + 1; lam eps)``.
    """
    s = np.asarray(order, dtype=float)
    le = math.log(eps)
    if lam == 0:
        return s * le - np.log(s)
    x = lam * eps
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        p = special.gammainc(s, x)
        out = np.asarray(special.gammaln(s) + np.log(p) - s * math.log(lam), dtype=float)
        bad = ~((p > 1e-250) & np.isfinite(out))       # P underflows only where x << s
        if np.any(bad):
            sb = np.broadcast_to(s, out.shape)[bad]
            out = np.array(out, copy=True)
            out[bad] = sb * le - x - np.log(sb) + np.log(special.hyp1f1(1.0, sb + 1.0, x))
    return out


def small_jump_symbol(beta: ArrayLike, eps: float, *, alpha: float, lam: float, eta_j: float,
                      imaginary: bool = False) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The small-jump part of the Laplace exponent, and its Gaussian replacement error.

    Returns ``(exact, gauss)`` where ``exact = int_{|z|<=eps} (e^{beta z} - 1) nu(dz)
    = 2 eta_J c_alpha sum_{k>=1} beta^(2k)/(2k)! int_0^eps z^(2k-1-alpha) e^{-lam z} dz``
    and ``gauss = sigma_eps^2 beta^2/2`` (its k = 1 term). With ``imaginary=True``
    ``beta`` is a frequency xi and the series is that of ``cos(xi z) - 1``
    (alternating signs): the small-jump part of the characteristic exponent.
    The simulated increments have symbol ``Psi(beta) - exact + gauss``
    (docs/specification.md §7).

    The terms are evaluated in log space (``scipy.special.gammaln``, ``gammainc``), so
    huge eps, lam or eta_J do not overflow; ``10 + 3 |beta| eps`` terms are summed.
    Real beta: positive terms, accurate for any ``|beta| eps``; the result is +inf
    where the integral exceeds float64. Imaginary: the alternating series cancels,
    accurate to ~1e-16 * e^(|xi| eps) relative. ``|beta| eps`` above
    MAX_SERIES_BETA_EPS (1e4) raises ValueError naming eps (use :func:`beta_model`,
    which needs no series there, or a smaller eps).

    Parameters
    ----------
    beta : array_like
        Finite real arguments (frequencies xi with ``imaginary=True``).
    eps : float
        The cut, > 0.
    alpha : float
        Stability index of the jumps, in (0, 2).
    lam : float
        Exponential tempering, >= 0 (0 = untempered).
    eta_j : float
        Jump intensity, >= 0.
    imaginary : bool, optional
        Evaluate the characteristic-exponent series (``cos(xi z) - 1``) instead of the
        Laplace one (default False).

    Returns
    -------
    exact : ndarray
        The small-jump part of the exponent, shaped like ``beta``.
    gauss : ndarray
        Its Gaussian replacement sigma_eps^2 beta^2/2 (minus that, imaginary).

    Raises
    ------
    ValueError
        If eps <= 0, a parameter is out of range, or ``|beta| eps`` exceeds
        MAX_SERIES_BETA_EPS (the message names eps).

    Examples
    --------
    >>> exact, gauss = small_jump_symbol(np.array([0.5, 1.0]), 0.2, alpha=1.5, lam=2.0, eta_j=3.0)
    >>> print(np.abs(exact / gauss - 1).max() < 0.01)   # the Gaussian approximation of small jumps
    True
    """
    eps = check_real("eps", eps, 0.0, lo_open=True)
    a, lm, ej = jump_params(alpha, lam, eta_j)
    b = check_array("beta", beta)
    pref = 2.0 * ej * float(c_alpha(a))
    bz = float(np.max(np.abs(b))) * eps if b.size else 0.0
    if not bz <= MAX_SERIES_BETA_EPS:
        raise ValueError(f"eps too large for the small-jump series: |beta| eps = {bz:.3g} > "
                         f"{MAX_SERIES_BETA_EPS:g}; use a smaller eps")
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        gauss = 0.5 * pref * math.exp(float(_log_lower_gamma_moment(2.0 - a, eps, lm))) * b * b
        total = np.zeros_like(b)
        if pref > 0 and b.size:
            k = np.arange(1, int(10 + 3 * bz) + 1, dtype=float)
            logc = (math.log(pref) - special.gammaln(2 * k + 1)
                    + _log_lower_gamma_moment(2 * k - a, eps, lm))          # (K,)
            ab = np.abs(b).ravel()
            with np.errstate(divide="ignore"):
                lt = logc[None, :] + 2 * k[None, :] * np.log(ab)[:, None]   # (n, K); -inf at beta = 0
            t = np.exp(lt)
            if imaginary:
                t = t * np.where(k % 2 == 1, -1.0, 1.0)[None, :]
            total = t.sum(axis=1).reshape(b.shape)
    if imaginary:
        gauss = -gauss
    return total, gauss


def _big_jump_symbol(beta, eps, a, lm, ej):
    """int_{|z|>eps} (e^{beta z} - 1) nu(dz) for 0 < beta <= lam (mpmath incomplete gammas).

    ``eta_J c_alpha [J(lam - beta) + J(lam + beta) - 2 J(lam)]`` with
    ``J(c) = int_eps^inf z^(-1-alpha) e^{-c z} dz = c^alpha Gamma(-alpha, c eps)``
    (``eps^-alpha / alpha`` at c = 0). Used where |beta| eps > 20 (no cancellation there).
    """
    with mpmath.workdps(40):
        A, E = mpmath.mpf(a), mpmath.mpf(eps)

        def J(c):
            c = mpmath.mpf(c)
            if c == 0:
                return E ** (-A) / A
            return c ** A * mpmath.gammainc(-A, c * E)

        L, B = mpmath.mpf(lm), mpmath.mpf(beta)
        return float(mpmath.mpf(ej) * mpmath.mpf(float(c_alpha(a))) * (J(L - B) + J(L + B) - 2 * J(L)))


def beta_model(eta_j: float, eta_g: float = DEFAULTS["eta_g"], kappa: float = DEFAULTS["kappa"],
               alpha: float = DEFAULTS["alpha"], lam: float = DEFAULTS["lam"], *, eps: float) -> float:
    """Exact stationary left-tail rate of the *simulated* model: root of Phi_eps (docs/specification.md §7).

    ``Phi_eps(beta) = eta_G beta^2 + [Psi(beta) - Psi_small(beta) + sigma_eps^2 beta^2/2] - kappa beta``,
    i.e. Phi with the jump symbol replaced by its big-jump part plus the Gaussian
    stand-in of the small jumps (:func:`small_jump_symbol`). Solved as
    ``Phi_eps(beta)/beta = 0`` on (0, lam] with the known value -kappa at 0+
    (:func:`levysde.theory.roots.chandrupatla`). Scalars only. Where ``beta eps > 20`` the
    big-jump part is taken directly from incomplete gammas (mpmath) instead of
    ``Psi - Psi_small``, so any eps > 0 works.

    Parameters
    ----------
    eta_j, eta_g, kappa, alpha, lam : float
        The model parameters (one set: scalars only; defaults as in
        :data:`levysde.theory.params.DEFAULTS`).
    eps : float
        The cut of the simulation, > 0.

    Returns
    -------
    float
        The rate in (0, lam), or NaN when Phi_eps(lam) <= 0 (collapsed), lam = 0, or the
        root cannot be resolved in float64 (extreme parameters, e.g. eta_G = 1e300;
        :func:`levysde.simulation.simulate` then records a note in ``meta['notes']``).

    Raises
    ------
    ValueError
        If a parameter is out of range or eps <= 0.

    Examples
    --------
    >>> print(round(beta_model(3.0, eps=0.19309787692112598), 8))
    0.80851351
    >>> print(round(float(beta_star(3.0)), 8))
    0.80835715
    """

    eps = check_real("eps", eps, 0.0, lo_open=True)
    a, lm, ej = jump_params(alpha, lam, eta_j)
    eg = check_param("eta_g", eta_g, scalar=True)
    k = check_param("kappa", kappa, scalar=True)
    if lm == 0:
        return float("nan")
    pref = 2.0 * ej * float(c_alpha(a))
    sig2 = pref * math.exp(float(_log_lower_gamma_moment(2.0 - a, eps, lm)))

    def h(x, idx=None):
        x = np.asarray(x, dtype=float)
        out = np.empty_like(x)
        near = (x > 0) & (x <= 20.0 / eps)             # x eps <= 20 without overflow at huge eps
        out[x <= 0] = -k                                 # the limit at 0+
        with np.errstate(all="ignore"):
            if near.any():
                xs = x[near]
                exact, gauss = small_jump_symbol(xs, eps, alpha=a, lam=lm, eta_j=ej)
                out[near] = eg * xs - k + ej * psi_unit_over_beta(xs, alpha=a, lam=lm) + (gauss - exact) / xs
            for i in np.flatnonzero(~near & (x > 0)):
                xi = float(x[i])
                out[i] = eg * xi - k + 0.5 * sig2 * xi + _big_jump_symbol(xi, eps, a, lm, ej) / xi
        return out

    try:
        h_lam = float(h(np.array([lm]))[0])
        if not h_lam > 0:                       # collapsed (or NaN: unresolved)
            return float("nan")
        # the jump part of Phi_eps is >= 0, so h(x) >= eta_G x - kappa: the root is <= kappa/eta_G
        hi, f_hi = lm, h_lam
        if eg > 0 and k / eg < lm:
            hi = k / eg
            f_hi = float(h(np.array([hi]))[0])
            if f_hi == 0:
                return hi
        with np.errstate(all="ignore"):
            r = float(chandrupatla(h, np.zeros(1), np.array([hi]), fa=np.array([-k]),
                                   fb=np.array([f_hi]), maxiter=2000)[0])
    except (ValueError, OverflowError, ZeroDivisionError):
        return float("nan")
    return r if (math.isfinite(r) and r > 0) else float("nan")


def poisson_table(mu: float) -> np.ndarray:
    """The CDF table F(0), F(1), ..., F(K) of Poisson(mu) with which the CPU stepper draws the
    number of big jumps of a window by inversion (count = #{j : u >= F(j)}, u uniform).

    ``mu`` >= 0 (finite): the mean (big-jump rate x window length). F(j) is scipy's regularized
    upper incomplete gamma Q(j + 1, mu) (``scipy.special.pdtr``); K is the first j > mu with
    1 - F(j) < 2^-60 (``pdtrc``), so the table inverts 53-bit uniforms exactly. Shape (K + 1,).

    Parameters
    ----------
    mu : float
        The mean (big-jump rate x window length), finite and >= 0.

    Returns
    -------
    ndarray, shape (K + 1,)
        F(0), ..., F(K).

    Raises
    ------
    ValueError
        If mu < 0 or not finite.

    Examples
    --------
    >>> F = poisson_table(2.0)
    >>> print(round(F[0], 6), round(float(np.exp(-2.0)), 6))
    0.135335 0.135335
    """
    mu = check_real("mu", mu, 0.0)
    if mu == 0.0:
        return np.ones(1)
    k_max = int(mu + 40.0 * math.sqrt(mu) + 60.0)
    j = np.arange(k_max + 1)
    tail = special.pdtrc(j, mu)
    done = np.flatnonzero((j > mu) & (tail < 2.0 ** -60))
    k = int(done[0]) if done.size else k_max
    return special.pdtr(j[:k + 1], mu)


def jump_scheme(dt: float, eps: float, alpha: float, lam: float, eta_j: float,
                eta_g: float = 0.0) -> tuple[float, float, bool]:
    """(Lambda_eps, sigma_eps^2, exponential proposal?) with the checks that keep a run finite.

    Raises SimulationInputError naming eps when Lambda_eps dt > MAX_JUMPS_PER_STEP (the
    run would hang drawing jumps), or naming the culprit (eta_g; eps and eta_j through
    sigma_eps^2) when the per-step Gaussian variance overflows float64."""
    rate = big_jump_rate(eps, alpha=alpha, lam=lam, eta_j=eta_j)
    if not rate * dt <= MAX_JUMPS_PER_STEP:
        raise SimulationInputError(
            f"{{eps}} = {eps:.3g} is too small: Lambda_eps dt = {rate * dt:.3g} expected big jumps per "
            f"particle-step exceeds {MAX_JUMPS_PER_STEP:g}; leave {{eps}} unset (the default cut is 1 to 2 "
            f"x (eta_J dt)^(1/alpha) = {default_eps(dt, eta_j=eta_j, alpha=alpha):.3g}) or use a larger one")
    sig2 = small_jump_variance(eps, alpha=alpha, lam=lam, eta_j=eta_j)
    eta_g, sig2 = float(eta_g), float(sig2)
    if not math.isfinite((2.0 * eta_g + sig2) * dt):    # the simulator's s_gauss**2, same order
        if not math.isfinite(2.0 * eta_g * dt):
            raise SimulationInputError(
                f"{{eta_g}} = {eta_g:.3g} is too large: the Gaussian step variance 2 eta_G dt "
                f"overflows float64 (sigma_eps^2 = {sig2:.3g} is fine); reduce {{eta_g}}")
        if not math.isfinite(sig2 * dt):
            raise SimulationInputError(
                f"the small-jump variance sigma_eps^2 dt = {sig2:.3g} * {dt:g} overflows float64; "
                f"reduce {{eps}} or {{eta_j}}")
        raise SimulationInputError(
            f"the Gaussian step variance (2 eta_G + sigma_eps^2) dt overflows float64 ({{eta_g}} = "
            f"{eta_g:.3g}, sigma_eps^2 = {sig2:.3g}); reduce {{eta_g}}, {{eps}} or {{dt}}")
    exp_prop = bool(lam > 0 and lam * eps > alpha)
    return rate, sig2, exp_prop
