"""The noise of the SDE from the drift residuals (docs/specification.md §2, §8).

A robust scale ``s = 1.4826 MAD(r/sqrt(dt))`` of the residuals ``r = dZ - F_hat(Z) dt``
(:func:`robust_scale`); jumps are residuals beyond ``threshold * s sqrt(dt)``. When they are in
significant excess over the Gaussian expectation, (eta_G, eta_J, alpha, lam) are fitted jointly
to the empirical characteristic function of the residuals,
``-log E cos(xi r)/dt = eta_G xi^2 - char_exponent(xi)`` (a weighted least-squares fit of the
ECF; Feuerverger & McDunnough 1981 for its asymptotic covariance, :func:`ecf_model_se`);
otherwise eta_J = 0 and eta_G = s^2/2 (:func:`estimate_noise`). A Hill scan of the jump sizes
is reported as a diagnostic.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, stats

from levysde.core.status import Estimate, Flag, Status, unavailable, with_se
from levysde.core.validate import check_choice, check_real
from levysde.stats.jackknife import jackknife_se
from levysde.stats.tails import hill_index
from levysde.theory.levy import char_exponent

__all__ = ['NoiseEstimate', 'robust_scale', 'estimate_noise', 'edge_flags', 'ALPHA_RANGE', 'ecf_model_se', 'floor_se']


_MAD_TO_SIGMA = 1.4826022185056018      # 1/Phi^-1(3/4)


_MAD_VAR = 1.3605                       # n Var(sigma_MAD)/sigma^2 for Gaussian data (efficiency 0.3675)


def robust_scale(residuals, dt) -> float:
    r"""s = 1.4826 MAD(r/sqrt(dt)): the Gaussian scale per unit sqrt(time), blind to rare jumps.

    Parameters
    ----------
    residuals : array_like, shape (n,)
        Increments minus drift, :math:`r = dZ - \hat F(Z)\,dt`.
    dt : array_like, shape (n,) or scalar
        Time step of each increment, > 0.

    Returns
    -------
    float
        :math:`s = 1.4826\,\mathrm{median}\,|x - \mathrm{median}(x)|` with
        :math:`x = r/\sqrt{dt}`; for Gaussian increments :math:`s^2 = 2\eta_G`. NaN for an empty
        input.

    Notes
    -----
    :math:`1.4826 = 1/\Phi^{-1}(3/4)` makes the median absolute deviation a consistent estimate
    of a Gaussian standard deviation (Hampel 1974); a few large jumps move it little.

    References
    ----------
    * F. R. Hampel, "The influence curve and its role in robust estimation", *J. Amer.
      Statist. Assoc.* 69 (1974) 383-393.

    Examples
    --------
    >>> r = np.random.default_rng(0).normal(0.0, 1.0, 20_000)
    >>> round(robust_scale(r, 1.0), 3), round(robust_scale(0.1 * r, 0.01), 3)
    (1.005, 1.005)
    >>> robust_scale([], 1.0)
    nan
    """
    r = np.asarray(residuals, dtype=float) / np.sqrt(np.asarray(dt, dtype=float))
    return _MAD_TO_SIGMA * float(np.median(np.abs(r - np.median(r)))) if r.size else float("nan")


@dataclass(frozen=True)
class NoiseEstimate:
    """Gaussian and jump parts of the increments (docs/specification.md §8).

    The result of :func:`estimate_noise`.

    Attributes
    ----------
    eta_g, eta_j, alpha, lam : levysde.core.status.Estimate
        Gaussian intensity, jump intensity, stability index and tempering of the CTS jumps
        (alpha, lam unavailable without jumps).
    n_jumps : int
        Residuals beyond ``threshold`` robust scales.
    n_gauss_expected : float
        That count expected from Gaussian noise alone.
    u : float
        The size threshold (units of zeta).
    hill : list of tuple
        ``(u_i, alpha_hat, se, k)`` over a threshold scan (Hill on the jump sizes; biased upward
        by tempering and by the Gaussian smearing near u: a diagnostic).
    method : str
        How eta_G, eta_J, alpha, lam were obtained.
    mode : {"jumps", "gauss"}
        Characteristic-function fit, or eta_J = 0 (or unavailable).
    log_lam_range : tuple
        The fitted range of log lam (jumps only; () otherwise).
    replicates : ndarray, shape (G, 4)
        Leave-one-group-out (eta_g, eta_j, alpha, lam) of the jackknife.
    model_se : ndarray, shape (4,)
        Model-based asymptotic errors of (eta_g, eta_j, alpha, lam) for independent increments
        (:func:`ecf_model_se`; NaN without the characteristic-function fit); they replace a
        jackknife error significantly smaller than them (:func:`floor_se`).

    Examples
    --------
    >>> e = estimate_noise(np.random.default_rng(0).normal(0.0, 1.0, 20_000), 1.0)
    >>> e.mode, round(e.eta_g.value, 3), e.n_jumps, e.replicates.shape
    ('gauss', 0.505, 1, (8, 4))
    >>> e.eta_j.status
    <Status.NOT_SIGNIFICANT: 'not significant'>
    """

    eta_g: Estimate
    eta_j: Estimate
    alpha: Estimate
    lam: Estimate
    n_jumps: int
    n_gauss_expected: float
    u: float
    hill: list = field(default_factory=list)
    method: str = ""
    mode: str = "gauss"
    log_lam_range: tuple = ()
    replicates: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    model_se: np.ndarray = field(default_factory=lambda: np.full(4, np.nan))


def _ecf_fit(cos_g, cos2_g, n_g, xi, dt, start=None):
    """Weighted least squares of -log(ECF)/dt = eta_G xi^2 - char_exponent(xi) (docs/specification.md §2, §8).

    ``cos_g``: (G, K) per-group sums of cos(xi r), ``cos2_g`` the same at 2 xi, ``n_g``: (G,)
    counts. Linear in (eta_G, eta_J) for fixed (alpha, lam): those are profiled out by
    non-negative least squares; (alpha, log lam) by Nelder-Mead from a small grid.
    Returns (eta_g, eta_j, alpha, lam, objective, (log lam range), model standard errors
    (:func:`ecf_model_se`)).
    """

    n = n_g.sum()
    phi = cos_g.sum(axis=0) / n
    phi2 = cos2_g.sum(axis=0) / n
    ok = (phi > 0.02) & (phi < 0.995)
    xi, phi, phi2 = xi[ok], phi[ok], phi2[ok]
    if xi.size < 6:
        raise ValueError("the empirical characteristic function has too few usable points")
    y = -np.log(phi) / dt
    var_cos = np.maximum((1 + phi2) / 2 - phi * phi, 1e-12)
    sw = np.sqrt(n * phi * phi * dt * dt / var_cos)
    lo_l, hi_l = math.log(xi[0] / 100), math.log(xi[-1] * 100)

    def profile(th, full=False):
        a, ll = th
        if not (ALPHA_RANGE[0] <= a <= ALPHA_RANGE[1]) or not (lo_l <= ll <= hi_l):
            return np.inf
        X = np.column_stack([xi * xi, -np.asarray(char_exponent(xi, alpha=a, lam=math.exp(ll)))])
        coef, rnorm = optimize.nnls(X * sw[:, None], y * sw)
        return (coef, rnorm ** 2) if full else rnorm ** 2

    if start is not None:          # e.g. a jackknife replicate: start inside the range, near the full fit
        starts = [(float(np.clip(start[0], ALPHA_RANGE[0] + 0.01, ALPHA_RANGE[1] - 0.01)),
                   float(np.clip(start[1], lo_l + 0.01, hi_l - 0.01)))]
    else:
        starts = [(a, ll) for a in (0.5, 1.0, 1.5) for ll in np.linspace(math.log(xi[0]), math.log(xi[-1]), 3)]
    best = None
    for s0 in starts:
        res = optimize.minimize(profile, x0=np.asarray(s0, dtype=float), method="Nelder-Mead",
                                options={"xatol": 1e-6, "fatol": 1e-10, "maxiter": 2000})
        if best is None or res.fun < best.fun:
            best = res
    if not np.isfinite(best.fun):
        raise ValueError("the characteristic-function fit found no admissible (alpha, lam)")
    (eg, ej), obj = profile(best.x, full=True)
    theta = (float(eg), float(ej), float(best.x[0]), float(math.exp(best.x[1])))
    return (*theta, float(obj), (lo_l, hi_l), ecf_model_se(theta, xi, sw * sw, dt, n))


def _ecf_jackknife(cos_g, cos2_g, n_g, xi, dt, start) -> np.ndarray:
    """(G, 4) leave-one-group-out (eta_g, eta_j, alpha, lam) of :func:`_ecf_fit`, each started from
    the full fit ``start`` = (alpha, log lam); a replicate that cannot be fitted is NaN (its error
    is then NaN, never a silent partial one)."""
    G = n_g.size
    loo = np.full((G, 4), np.nan)
    for g in range(G):
        keep = np.arange(G) != g
        try:
            loo[g] = _ecf_fit(cos_g[keep], cos2_g[keep], n_g[keep], xi, dt, start=start)[:4]
        except ValueError:
            pass
    return loo


def ecf_model_se(theta, xi, weights, dt, n) -> np.ndarray:
    r"""Asymptotic standard errors of the characteristic-function fit for n independent increments.

    The sandwich of weighted least squares (docs/specification.md §8: ``-log phi(xi)/dt = eta_G xi^2 -
    char_exponent(xi)``) with the model's own covariance of the empirical characteristic
    function (Feuerverger & McDunnough 1981, *JRSS B* 43, 20):
    ``Cov(cos xi_j X, cos xi_k X) = [phi(xi_j + xi_k) + phi(xi_j - xi_k)]/2 - phi_j phi_k``,
    carried to ``y = -log(phi_hat)/dt`` by the delta method, and
    ``Cov(theta_hat) = A^-1 J^T W C_y W J A^-1 / n`` with ``A = J^T W J``.

    Parameters
    ----------
    theta : tuple of 4 floats
        The fitted (eta_G, eta_J, alpha, lam) (eta_G >= 0, eta_J > 0, 0 < alpha < 2, lam > 0).
    xi : array_like, shape (K,)
        The frequencies the fit used (K >= 4).
    weights : array_like, shape (K,)
        Its least-squares weights.
    dt : float
        Time step of an increment (time units).
    n : int
        Number of increments.

    Returns
    -------
    ndarray, shape (4,)
        Standard errors of (eta_G, eta_J, alpha, lam): NaN where the sandwich is singular or a
        parameter is at a bound (eta_G = 0), all NaN for theta outside the ranges above. It
        assumes independent increments; within-neuron correlation is what the neuron jackknife
        adds (:func:`estimate_noise` reports the jackknife unless it is significantly smaller
        than this, :func:`floor_se`).

    Notes
    -----
    With :math:`m(\xi) = \eta_G\xi^2 - \eta_J\psi_1(\xi; \alpha, \lambda)` the model of
    :math:`y = -\log\hat\varphi(\xi)/dt`, :math:`J = \partial m/\partial\theta` and
    :math:`W = \mathrm{diag}(w)`,

    .. math::

        \mathrm{Cov}(\hat\theta) = A^{-1} J^\top W C_y W J A^{-1}, \qquad A = J^\top W J,

    .. math::

        \mathrm{Cov}(\cos\xi_j X, \cos\xi_k X) =
        \tfrac12\big[\varphi(\xi_j + \xi_k) + \varphi(\xi_j - \xi_k)\big] - \varphi_j\varphi_k,

    carried to :math:`y` by the delta method (:math:`C_y` divided by n).

    References
    ----------
    * A. Feuerverger, P. McDunnough, "On the efficiency of empirical characteristic function
      procedures", *J. R. Statist. Soc. B* 43 (1981) 20-27.
    * The specification, §2 and §8.

    Examples
    --------
    >>> xi = np.geomspace(0.05, 3.0, 20)
    >>> se = ecf_model_se((0.5, 0.1, 1.2, 0.5), xi, np.ones(20), 1.0, 20_000)
    >>> se.shape, bool(np.all(se > 0))
    ((4,), True)
    >>> ecf_model_se((0.5, 0.0, 1.2, 0.5), xi, np.ones(20), 1.0, 20_000)   # eta_J = 0: none
    array([nan, nan, nan, nan])
    """

    eg, ej, al, lm = (float(v) for v in theta)
    xi = np.asarray(xi, dtype=float)
    nan = np.full(4, np.nan)
    if not (ej > 0 and 0 < al < 2 and lm > 0 and n > 0 and xi.size >= 4):
        return nan

    def m(x, a=al, l=lm, g=eg, j=ej):       # -log phi(x)/dt of the fitted law
        return g * x * x - j * np.asarray(char_exponent(x, alpha=a, lam=l))

    ha, hl = 1e-5, 1e-5 * lm
    jac = np.column_stack([xi * xi, -np.asarray(char_exponent(xi, alpha=al, lam=lm)),
                           (m(xi, a=al + ha) - m(xi, a=al - ha)) / (2 * ha),
                           (m(xi, l=lm + hl) - m(xi, l=lm - hl)) / (2 * hl)])
    phi = np.exp(-dt * m(xi))
    s, d = xi[:, None] + xi[None, :], np.abs(xi[:, None] - xi[None, :])
    c_cos = 0.5 * (np.exp(-dt * m(s)) + np.exp(-dt * m(d))) - np.outer(phi, phi)
    dy = 1.0 / (phi * dt)
    c_y = c_cos * np.outer(dy, dy) / n
    w = np.asarray(weights, dtype=float)
    a_mat = jac.T @ (w[:, None] * jac)
    b_mat = (w[:, None] * jac).T @ c_y @ (w[:, None] * jac)
    try:
        a_inv = np.linalg.inv(a_mat)
    except np.linalg.LinAlgError:
        return nan
    var = np.diag(a_inv @ b_mat @ a_inv)
    se = np.where(var > 0, np.sqrt(np.abs(var)), np.nan)
    if not eg > 0:
        se[0] = np.nan
    return np.where(np.isfinite(se), se, np.nan)


#: fitted range of alpha in the characteristic-function fit
ALPHA_RANGE = (0.05, 1.95)


def edge_flags(alpha: float, lam: float, lam_se: float, log_lam_range, eta_g: float | None = None, *,
               alpha_se: float = float("nan"), eta_j: float = float("nan"),
               eta_j_se: float = float("nan")) -> tuple:
    """Flags (alpha_flag, lam_flag), None when fine, for jump parameters the data do not identify
    (docs/specification.md §8 (iii)): :class:`levysde.core.status.Flag` pairs of a status,
    AT_BOUND ("at the edge") or NOT_IDENTIFIED ("not identified"), and a message.

    lam: "at the edge" at either end of the fitted log range (within 1e-3 in log lam), or
    lam_hat < 2 standard errors (untempered/unresolved). alpha: "at the edge" within 1e-6 of
    ALPHA_RANGE's ends; otherwise "not identified" when lam is flagged (alpha and lam trade off
    in the tempered-stable exponent: with the cut-off unresolved, alpha is not determined) or
    when ``eta_g`` (the fitted Gaussian coefficient) sits at its bound 0 (the Gaussian part is
    absorbed by the jumps, whose alpha then moves towards 2 to mimic it). Estimates with either
    flag get no standard error (:func:`levysde.core.status.with_se`): a jackknife at a bound, or along a
    ridge of the fit, does not describe the estimator's sampling law.

    With the jackknife errors given (``alpha_se``, ``eta_j_se``; NaN skips the test), alpha is
    also "not identified" when ``alpha +- 2 alpha_se`` leaves ALPHA_RANGE (the estimator's law is
    cut by the bound inside its own 95 % interval, so the normal approximation of the jackknife
    fails there) or when ``eta_j <= 2 eta_j_se`` (the jump amplitude is not significantly
    different from 0 at the two-sided 5 % level: the jump law's shape, alpha, is then not
    measured). The constants mirror the plateau's rule (kappa_hat < 3 se: no error,
    :func:`levysde.inference.drift_fit.kappa_flag`); docs/calibration.md gives the reasoning.

    Parameters
    ----------
    alpha : float
        Fitted stability index.
    lam : float
        Fitted tempering cut-off, > 0.
    lam_se : float
        Its standard error (NaN skips the 2 se test).
    log_lam_range : tuple of 2 floats
        The fitted range of log lam (``NoiseEstimate.log_lam_range``).
    eta_g : float, optional
        Fitted Gaussian coefficient (None skips the bound test).
    alpha_se, eta_j, eta_j_se : float, optional
        Jackknife error of alpha, the jump intensity and its error (NaN skips those tests).

    Returns
    -------
    alpha_flag, lam_flag : levysde.core.status.Flag or None
        None where the parameter is identified.

    References
    ----------
    * The specification, §8 (iii).

    Examples
    --------
    >>> edge_flags(1.2, 1.0, 0.1, (-5.0, 5.0))
    (None, None)
    >>> a, l = edge_flags(1.2, 0.1, 0.2, (-5.0, 5.0))            # lam < 2 se: unresolved
    >>> a.status, l.status
    (<Status.NOT_IDENTIFIED: 'not identified'>, <Status.AT_BOUND: 'at bound'>)
    >>> print(edge_flags(1.95, 1.0, 0.1, (-5.0, 5.0))[0].message)
    at the edge: alpha_hat sits at the edge of the fitted range (0.05, 1.95)
    """
    l_flag = None
    lo_l, hi_l = log_lam_range
    if math.log(max(lam, 1e-300)) <= lo_l + 1e-3 or (math.isfinite(lam_se) and not lam > 2 * lam_se):
        l_flag = Flag(Status.AT_BOUND, "at the edge: untempered/unresolved, the exponential cut-off of the jumps "
                                       "is not identifiable")
    elif math.log(lam) >= hi_l - 1e-3:
        l_flag = Flag(Status.AT_BOUND, "at the edge: lam_hat sits at the upper end of the fitted range (cut-off "
                                       "below the data's scales)")
    a_flag = None
    if alpha <= ALPHA_RANGE[0] + 1e-6 or alpha >= ALPHA_RANGE[1] - 1e-6:
        a_flag = Flag(Status.AT_BOUND, f"at the edge: alpha_hat sits at the edge of the fitted range {ALPHA_RANGE}")
    elif l_flag:
        a_flag = Flag(Status.NOT_IDENTIFIED, "not identified: the jumps' cut-off lam is not resolved, and alpha "
                                             "trades off against it")
    elif eta_g is not None and not eta_g > 0:
        a_flag = Flag(Status.NOT_IDENTIFIED, "not identified: eta_G_hat = 0 (at its bound): the Gaussian part is "
                                             "absorbed by the jumps, which bias alpha_hat towards 2")
    elif math.isfinite(eta_j_se) and not eta_j > 2 * eta_j_se:
        a_flag = Flag(Status.NOT_IDENTIFIED, f"not identified: eta_J_hat = {eta_j:.3g} +- {eta_j_se:.2g} is within "
                                             f"2 se of 0: the jumps are not resolved, so their law (alpha) is not "
                                             f"measured")
    elif math.isfinite(alpha_se) and not ALPHA_RANGE[0] < alpha - 2 * alpha_se < alpha + 2 * alpha_se < ALPHA_RANGE[1]:
        a_flag = Flag(Status.NOT_IDENTIFIED, f"not identified: alpha_hat +- 2 se = [{alpha - 2 * alpha_se:.3g}, "
                                             f"{alpha + 2 * alpha_se:.3g}] leaves the fitted range {ALPHA_RANGE}")
    return a_flag, l_flag


#: flag of eta_G_hat without a jump fit (docs/calibration.md: it covered eta_G in 0 of 135 study
#: runs that had jumps nobody detected, and is what a Gaussian-only model of the increments needs)
NO_JUMP_FIT_ETA_G = ("no jump fit: eta_G_hat is the robust diffusion of the increments, which includes any "
                     "jumps too small or too rare to detect (then an upper bound of eta_G)")


def estimate_noise(residuals, dt, groups=None, *, threshold: float = 4.0, min_jumps: int = 30,
                   max_samples: int = 2_000_000, n_xi: int = 40, seed: int = 0, mode: str | None = None,
                   errors: bool = True, start=None) -> NoiseEstimate:
    r"""Gaussian part, jump detection and the CTS jump parameters (docs/specification.md §8).

    1. Robust scale s = 1.4826 MAD(r/sqrt(dt)); jumps are residuals beyond
       ``threshold * s * sqrt(dt)``. Fewer than ``min_jumps`` of them, or no
       significant excess (5 sigma) over the Gaussian expectation, reports "no
       jumps detected": eta_J = 0 and eta_G = s^2/2 (standard error: the jackknife of
       step 3 over the groups; with a single group, the MAD's asymptotic variance
       1.3605 s^2/n for independent Gaussian increments).
    2. With jumps, the whole increment law is fitted: the empirical characteristic
       function ``phi(xi) = mean cos(xi r)`` of the residuals satisfies
       ``-log phi(xi)/dt = eta_G xi^2 - char_exponent(xi; alpha, lam, eta_J)`` (docs/specification.md §2),
       fitted by weighted least squares over a log grid of xi where 0.02 < phi < 0.995
       (a "stable fit", docs/specification.md §8). This uses every increment, so the small jumps
       that sit inside the Gaussian core and the Gaussian smearing of the big ones
       bias nothing, unlike a fit of the sizes beyond a threshold. The Hill scan of
       the detected jump sizes is reported as a diagnostic.
    3. Standard errors: jackknife over the ``groups`` (e.g. neuron groups, which are
       independent), or over 8 contiguous blocks when no groups are given; the
       leave-one-group-out values are kept in ``replicates``. With jumps, each error is
       replaced by the model-based asymptotic error of the fit when significantly smaller
       (:func:`ecf_model_se`, :func:`floor_se`; kept in ``model_se``). Estimates at the edge of
       their fitted range get no standard error (:func:`edge_flags`).
       lam is flagged "untempered/unresolved" when lam_hat < 2 se or it sits at the
       lower end of the fitted range (the cut-off is not seen in the data).

    Parameters
    ----------
    residuals : array_like, shape (n,)
        Increments minus drift.
    dt : array_like, shape (n,) or scalar
        Time step of each increment, > 0; the fit uses the mean dt.
    groups : array_like, shape (n,), optional
        Labels of independent groups (default 8 contiguous blocks).
    threshold : float, default 4.0
        Jump threshold in robust scales, > 2.
    min_jumps : int, default 30
        Fewest jumps for a jump fit.
    max_samples : int, default 2_000_000
        The characteristic function uses at most this many residuals (a seeded random subset).
    n_xi : int, default 40
        Points of the log grid of xi, from 0.02 to 20 robust scales of one increment.
    seed : int, default 0
        Seed of that subset.
    mode : {None, "jumps", "gauss"}, default None
        None: decide as in 1.; "jumps": fit the characteristic function whatever the jump
        count; "gauss": eta_J = 0 (a jackknife replicate uses the full fit's mode).
    errors : bool, default True
        False skips the jackknife (standard errors NaN;
        :func:`levysde.inference.sde_fit.fit_sde` resamples whole neurons instead).
    start : tuple of 2 floats, optional
        ``(alpha, log lam)`` starting point of the characteristic-function fit.

    Returns
    -------
    NoiseEstimate
        The four estimates with their errors and flags, the jump count and the fit's details.

    Raises
    ------
    ValueError
        For threshold <= 2, groups of another length than the residuals, or an unknown mode.

    Notes
    -----
    The fitted law of a residual over a step :math:`dt` is

    .. math::

        -\frac{\log \varphi(\xi)}{dt} = \eta_G \xi^2 - \psi(\xi; \alpha, \lambda, \eta_J),
        \qquad \varphi(\xi) = E \cos(\xi r),

    with :math:`\psi` the CTS characteristic exponent (:func:`levysde.theory.levy.char_exponent`,
    the specification, §2).

    References
    ----------
    * A. Feuerverger, P. McDunnough, "On the efficiency of empirical characteristic function
      procedures", *J. R. Statist. Soc. B* 43 (1981) 20-27.
    * S. M. Kogon, D. B. Williams, "Characteristic function based estimation of stable
      distribution parameters", in *A Practical Guide to Heavy Tails*, Birkhäuser (1998).
    * The specification, §2 and §8.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> n = 10_000
    >>> r = rng.normal(0.0, 1.0, n)                     # Gaussian part, eta_G = 1/2 per unit time
    >>> big = (rng.random(n) < 0.02) * rng.choice([-1, 1], n) * (rng.pareto(1.2, n) + 1) * 3
    >>> e = estimate_noise(r, 1.0)                        # Gaussian only
    >>> e.mode, round(e.eta_g.value, 2)
    ('gauss', 0.51)
    >>> e = estimate_noise(r + big, 1.0, errors=False)    # 2 % of the steps jump
    >>> e.mode, e.n_jumps, round(e.eta_g.value, 2)
    ('jumps', 140, 0.49)
    """
    r = np.asarray(residuals, dtype=float).ravel()
    dtv = np.broadcast_to(np.asarray(dt, dtype=float), r.shape).ravel()
    check_real("threshold", threshold, 2.0, lo_open=True, why="robust scales")
    if groups is None:
        groups = np.arange(r.size) * 8 // max(r.size, 1)
    groups = np.asarray(groups).ravel()
    if groups.shape != r.shape:
        raise ValueError("groups must have one label per residual")
    none = unavailable("no jumps detected")
    s = robust_scale(r, dtv)
    if r.size < 10 or not math.isfinite(s):
        u = unavailable("too few increments")
        return NoiseEstimate(u, u, u, u, 0, 0.0, float("nan"), [], "none")
    if s == 0:
        return NoiseEstimate(Estimate(0.0, 0.0, "zeta does not move between records (zero robust scale)"),
                             Estimate(0.0, 0.0, "no jumps detected"), none, none, 0, 0.0, 0.0, [], "none")
    ucut = threshold * s * np.sqrt(dtv)
    a = np.abs(r)
    jump = a > ucut
    k = int(jump.sum())
    expected = float(r.size * 2 * stats.norm.sf(threshold))
    u = float(np.median(ucut))
    hill = hill_index(a[jump], u) if k else []
    excess = k >= expected + 5 * math.sqrt(max(expected, 1.0))
    check_choice("mode", mode, (None, "jumps", "gauss"))
    if mode == "gauss" or (mode is None and (k < min_jumps or not excess)):
        eg = Estimate(s * s / 2, s * s * math.sqrt(_MAD_VAR / r.size) if errors else float("nan"))
        labels = np.unique(groups)
        reps = np.zeros((0, 4))
        if errors and labels.size >= 2:     # jackknife of the robust scale over the groups
            reps = np.array([[robust_scale(r[groups != g], dtv[groups != g]) ** 2 / 2, 0.0, np.nan, np.nan]
                             for g in labels])
            eg = Estimate(eg.value, jackknife_se(reps[:, 0]))
        if mode is None:        # no jump fit: small jumps inside the core, if any, are in the robust scale
            eg = Estimate(eg.value, eg.se, NO_JUMP_FIT_ETA_G)
        if excess and mode is None:
            few = f"too few jumps to fit ({k} beyond {threshold:g} robust scales; {min_jumps} needed)"
            return NoiseEstimate(eg, unavailable(few), unavailable(few), unavailable(few), k, expected, u,
                                 hill, "robust scale (MAD)", replicates=reps)
        # eta_J = 0 enters the prediction, but it is not measured to be 0 (a failure to reject): no error
        return NoiseEstimate(eg, Estimate(0.0, float("nan"), f"no jumps detected ({k} beyond {threshold:g} "
                                                             f"robust scales, {expected:.1f} expected from "
                                                             f"Gaussian noise)", status=Status.NOT_SIGNIFICANT),
                             none, none, k, expected, u, hill, "robust scale (MAD)", replicates=reps)
    rng = np.random.default_rng(seed)
    if r.size > max_samples:
        pick = np.sort(rng.choice(r.size, size=max_samples, replace=False))
        rs, gs = r[pick], groups[pick]
    else:
        rs, gs = r, groups
    dt_mean = float(dtv.mean())
    sig1 = s * math.sqrt(dt_mean)
    xi = np.geomspace(0.02 / sig1, 20.0 / sig1, n_xi)
    labels, lab = np.unique(gs, return_inverse=True)
    G = labels.size
    cos_g = np.zeros((G, xi.size))
    cos2_g = np.zeros((G, xi.size))
    for j, x in enumerate(xi):
        cos_g[:, j] = np.bincount(lab, weights=np.cos(x * rs), minlength=G)
        cos2_g[:, j] = np.bincount(lab, weights=np.cos(2 * x * rs), minlength=G)
    n_g = np.bincount(lab, minlength=G).astype(float)
    eg, ej, al, lm, _, (lo_l, hi_l), model_se = _ecf_fit(cos_g, cos2_g, n_g, xi, dt_mean, start=start)
    loo = _ecf_jackknife(cos_g, cos2_g, n_g, xi, dt_mean, (al, math.log(max(lm, 1e-300)))) \
        if G >= 2 and errors else np.zeros((0, 4))
    se = floor_se([jackknife_se(loo[:, i]) for i in range(4)], model_se, G) if loo.shape[0] else np.full(4, np.nan)
    alpha_flag, lam_flag = edge_flags(al, lm, se[3], (lo_l, hi_l), eg, alpha_se=se[2], eta_j=ej, eta_j_se=se[1])
    method = (f"empirical characteristic function, {rs.size} increments, jackknife over {G} groups, "
              f"replaced by the model-based asymptotic error where significantly smaller")
    eg_flag = None if eg > 0 else Flag(Status.AT_BOUND, "at the edge: eta_G_hat = 0 sits at its bound (the jumps "
                                                        "absorb the Gaussian part)")
    return NoiseEstimate(with_se(Estimate(eg), float(se[0]), eg_flag), Estimate(ej, float(se[1])),
                         with_se(Estimate(al), float(se[2]), alpha_flag),
                         with_se(Estimate(lm), float(se[3]), lam_flag),
                         k, expected, u, hill, method, "jumps", (lo_l, hi_l), loo, model_se)


def floor_se(se_jackknife, model_se, n_groups: int) -> np.ndarray:
    r"""The reported errors of the jump fit: the neuron jackknife, unless it is significantly smaller
    than the model-based asymptotic error for independent increments (:func:`ecf_model_se`), which
    then replaces it.

    Both estimate the same sampling spread when the increments are independent; within-neuron
    correlation only adds to it, which the jackknife sees. The G-group jackknife variance
    scatters like sigma^2 chi^2_(G-1)/(G-1), so a jackknife below ``sqrt(chi^2_(G-1), 2.5 % / (G-1))``
    times the model error (0.646 for G = 16) is too small at the 2.5 % level: where the data carry
    little information on alpha, the jackknife of a nonlinear fit comes out too small
    (docs/calibration.md). A plain maximum of the two would be biased upwards (measured: the
    standardized errors' sd 0.84 instead of 0.93). A NaN jackknife (a failed replicate) stays
    NaN; a NaN model error leaves the jackknife.

    Parameters
    ----------
    se_jackknife : array_like, shape (4,)
        Jackknife errors of (eta_g, eta_j, alpha, lam).
    model_se : array_like, shape (4,)
        Model-based errors (:func:`ecf_model_se`).
    n_groups : int
        Groups G of the jackknife, >= 2.

    Returns
    -------
    ndarray, shape (4,)
        The model error where the jackknife is below :math:`q\,\mathrm{se}_{\mathrm{model}}`,
        else the jackknife.

    Notes
    -----
    .. math::

        q = \sqrt{\chi^2_{G-1}(0.025)/(G - 1)}, \qquad q = 0.646 \text{ for } G = 16.

    References
    ----------
    * B. Efron, C. Stein, "The jackknife estimate of variance", *Ann. Statist.* 9 (1981)
      586-596.

    Examples
    --------
    >>> floor_se([0.01, 0.02, np.nan, 0.1], [0.05, 0.01, 0.1, np.nan], 16)
    array([0.05, 0.02,  nan, 0.1 ])
    """
    se = np.asarray(se_jackknife, dtype=float)
    m = np.asarray(model_se, dtype=float)
    q = math.sqrt(stats.chi2.ppf(0.025, n_groups - 1) / (n_groups - 1))
    return np.where(np.isfinite(se) & np.isfinite(m) & (se < q * m), m, se)
