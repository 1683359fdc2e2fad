"""The drift of the SDE from empirical zeta trajectories (docs/specification.md §3, §8).

Increments over one record, ``dZ = zeta[r+1] - zeta[r]`` over ``dt = step[r+1] - step[r]``
(:func:`increments`), give the drift ``F_hat(z) = E[dZ | Z = z]/dt`` in equal-count bins of z,
with standard errors, and the far-left plateau ``kappa_hat`` of the saturating drift
``kappa tanh((z0 - z)/width)`` (docs/specification.md §3) fitted over the left region by Gauss-Newton
weighted least squares, with a chi-square goodness of fit (:func:`estimate_drift`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, stats

from levysde.core.status import Estimate, Flag, Status, unavailable
from levysde.core.validate import check_array, check_int, check_real

__all__ = ['DriftEstimate', 'increments', 'estimate_drift', 'saturating_form', 'fit_saturating', 'kappa_flag',
           'restoring_plateau']


def increments(zeta, step, *, first_record: int = 0):
    r"""Pairs (z, dz, dt) of consecutive records, pairs with an undefined end dropped.

    Parameters
    ----------
    zeta : array_like, shape (R, Q)
        zeta per record and neuron (NaN or :math:`\pm\infty` = undefined neuron/record).
    step : array_like, shape (R,)
        Strictly increasing record times (training steps or SDE time).
    first_record : int, default 0
        Use records from this index on (the late, stationary part), in [0, R - 1].

    Returns
    -------
    z, dz, dt, neuron : ndarray, shape (n,)
        Start value :math:`Z_{r,q}`, increment :math:`Z_{r+1,q} - Z_{r,q}`, time step
        :math:`t_{r+1} - t_r` and neuron (column index) of each pair with both ends finite,
        ordered by record, then neuron.

    Raises
    ------
    ValueError
        When zeta is not 2-d real, step is not of shape (R,) or not strictly increasing, or
        first_record is outside [0, R - 1].

    References
    ----------
    * The specification, §8: the drift from the increments over one record.

    Examples
    --------
    >>> zeta = np.array([[0.0, 1.0], [0.5, np.nan], [0.25, 2.0]])
    >>> z, dz, dt, neuron = increments(zeta, [0, 10, 30])
    >>> z, dz, dt, neuron
    (array([0. , 0.5]), array([ 0.5 , -0.25]), array([10., 20.]), array([0, 0]))
    """
    zeta = check_array("zeta", zeta, ndim=2, allow_inf=True, allow_nan=True)
    step = check_array("step", step, shape=(zeta.shape[0],), increasing=True)
    first_record = check_int("first_record", first_record, 0, zeta.shape[0] - 1)
    zz = zeta[first_record:]
    st = step[first_record:]
    z0, z1 = zz[:-1], zz[1:]
    dt = np.broadcast_to(np.diff(st)[:, None], z0.shape)
    neuron = np.broadcast_to(np.arange(zz.shape[1])[None, :], z0.shape)
    ok = np.isfinite(z0) & np.isfinite(z1)
    return z0[ok], (z1 - z0)[ok], dt[ok], neuron[ok]


def saturating_form(z, kappa, width, z0):
    r"""The saturating drift of the specification, §3, written as ``kappa tanh((z0 - z)/width)``.

    Parameters
    ----------
    z : array_like
        Values of zeta (any shape).
    kappa : float
        Plateau of the drift on the far left (per unit time), of either sign (negative: drift
        away on the left).
    width : float
        Width of the transition, > 0 for a decreasing drift; :math:`\kappa/\gamma` in the
        specification's parameters.
    z0 : float
        Zero of the drift.

    Returns
    -------
    ndarray
        :math:`F(z) = \kappa \tanh((z_0 - z)/w)`, shape of ``z``.

    Notes
    -----
    .. math::

        F(z) = \kappa \tanh\!\left(\frac{z_0 - z}{w}\right), \qquad
        w = \kappa/\gamma, \qquad F(z) \to \kappa \ (z \to -\infty),
        \quad F'(z_0) = -\gamma.

    References
    ----------
    * The specification, §3.

    Examples
    --------
    >>> saturating_form([-10.0, 0.0, 10.0], kappa=0.5, width=1.0, z0=0.0).round(4)
    array([ 0.5,  0. , -0.5])
    """
    return kappa * np.tanh((z0 - np.asarray(z, dtype=float)) / width)


def _saturating_step(c, y, s, x):
    """One Gauss-Newton step of the weighted least squares of :func:`fit_saturating` from
    x = (kappa, log width, z0): the linearised refit of the linear jackknife (Fox, Hinkley &
    Larntz 1980, Technometrics 22, 29). Returns the new (kappa, log width, z0)."""
    k, lw, z0 = (float(v) for v in x)
    w = math.exp(lw)
    u = (z0 - c) / w
    th = np.tanh(u)
    sech2 = 1.0 - th * th
    J = np.column_stack([th, -k * sech2 * u, k * sech2 / w]) / s[:, None]
    r = (k * th - y) / s
    step = np.linalg.lstsq(J, -r, rcond=None)[0]
    return (k + float(step[0]), lw + float(step[1]), z0 + float(step[2]))


def fit_saturating(centers, F, se, *, start=None, one_step=False) -> dict:
    r"""Weighted least-squares fit of ``F(z) = kappa tanh((z0 - z)/width)`` to binned drift values.

    The saturating drift of the specification, §3 (:func:`saturating_form`,
    ``gamma = kappa/width``), fitted over the bins given (the left region). Parameters: kappa
    (real), width in [min bin spacing/4, 100 x data range], z0 (real); several starts,
    ``scipy.optimize.least_squares`` on ``(model - F)/se``.

    Parameters
    ----------
    centers : array_like, shape (B,)
        Bin centres in z, increasing, B >= 4.
    F : array_like, shape (B,)
        Drift estimate per bin (per unit time).
    se : array_like, shape (B,)
        Standard errors of ``F``, > 0 (the weights are :math:`1/\mathrm{se}^2`).
    start : tuple of 3 floats, optional
        A start ``(kappa, log width, z0)`` tried before the default ones (e.g. the full fit's
        ``x`` in a jackknife replicate).
    one_step : bool, default False
        With ``start``: no search, one Gauss-Newton step from ``start`` (the replicates of the
        linear jackknife of :func:`levysde.inference.sde_fit.fit_sde`).

    Returns
    -------
    dict
        ``kappa``, ``width``, ``z0``, ``gamma`` (kappa/width); ``chi2``, ``dof`` (B - 3) and
        ``p_value`` (chi-square goodness of fit); ``plateau_fraction``
        (:math:`\tanh((z_0 - z_{\mathrm{left}})/w)`: the share of the plateau the fitted drift
        reaches at the leftmost bin, near 1 when the data reach the plateau); ``n_bins`` (B);
        ``width_at_edge`` (the width sits at its lower bound: a step, kappa not identified);
        ``z_range`` (first and last centre); ``x`` (kappa, log width, z0).

    Raises
    ------
    ValueError
        For fewer than 4 bins, an se not > 0, ``one_step`` without ``start``, or when every
        start fails.

    Notes
    -----
    The fit minimises :math:`\chi^2 = \sum_b \big(F(c_b; \kappa, w, z_0) - F_b\big)^2/\mathrm{se}_b^2`
    over :math:`(\kappa, \log w, z_0)`; :math:`P(\chi^2_{B-3} \ge \chi^2)` is the goodness of
    fit. The one-step replicate is the linearised refit of the linear jackknife (Fox, Hinkley &
    Larntz 1980).

    References
    ----------
    * The specification, §3 and §8.
    * T. Fox, D. Hinkley, K. Larntz, "Jackknifing in nonlinear regression", *Technometrics* 22
      (1980) 29-33.

    Examples
    --------
    >>> c = np.linspace(-3.0, 0.0, 8)
    >>> F = saturating_form(c, 0.5, 0.5, 0.0) + 0.01 * np.random.default_rng(0).normal(size=8)
    >>> f = fit_saturating(c, F, np.full(8, 0.01))
    >>> round(f["kappa"], 2), round(f["width"], 2), f["dof"], f["p_value"] > 0.05
    (0.5, 0.48, 5, True)
    """
    c, y, s = (np.asarray(a, dtype=float) for a in (centers, F, se))
    if c.size < 4:
        raise ValueError(f"too few drift bins in the left region ({c.size}); need >= 4")
    if not np.all(s > 0):
        raise ValueError("drift standard errors must be > 0")
    span = float(c[-1] - c[0]) or 1.0
    w_lo, w_hi = max(float(np.min(np.diff(c))) / 4, 1e-9 * span), 100.0 * span

    def res(th):
        return (saturating_form(c, th[0], math.exp(th[1]), th[2]) - y) / s

    k0 = float(np.average(y[:3], weights=1 / s[:3] ** 2))
    cross = np.flatnonzero(np.diff(np.sign(y)) != 0)
    z00 = float(c[cross[-1]]) if cross.size else float(c[-1])
    starts = [start] if start is not None else []
    starts += [(k0, math.log(min(max(w, w_lo), w_hi)), z00) for w in (span / 8, span / 3, span)]
    best = None
    if one_step:
        if start is None:
            raise ValueError("one_step needs a start (the full fit's parameters)")
        x = _saturating_step(c, y, s, start)
        x = (x[0], min(max(x[1], math.log(w_lo)), math.log(w_hi)), x[2])
        best = optimize.OptimizeResult(x=np.array(x), cost=0.5 * float(np.sum(res(x) ** 2)))
        starts = []
    for th0 in starts:
        th0 = np.array([th0[0], np.clip(th0[1], math.log(w_lo), math.log(w_hi)), th0[2]], dtype=float)
        try:
            r = optimize.least_squares(res, th0, bounds=([-np.inf, math.log(w_lo), -np.inf],
                                                         [np.inf, math.log(w_hi), np.inf]), x_scale="jac")
        except ValueError:
            continue
        if best is None or r.cost < best.cost:
            best = r
    if best is None:
        raise ValueError("the saturating drift fit failed")
    k, w, z0 = float(best.x[0]), float(math.exp(best.x[1])), float(best.x[2])
    chi2 = 2.0 * float(best.cost)
    dof = int(c.size - 3)
    return {"kappa": k, "width": w, "z0": z0, "gamma": k / w, "chi2": chi2, "dof": dof,
            "p_value": float(stats.chi2.sf(chi2, dof)),
            "plateau_fraction": float(np.tanh((z0 - c[0]) / w)), "n_bins": int(c.size),
            "width_at_edge": bool(best.x[1] <= math.log(w_lo) + 1e-3),
            "z_range": (float(c[0]), float(c[-1])), "x": (k, math.log(w), z0)}


@dataclass(frozen=True)
class DriftEstimate:
    r"""Binned drift :math:`\hat F(z) = E[dZ \mid Z = z]/dt` with errors, and the fitted plateau.

    The result of :func:`estimate_drift`. Calling it interpolates :math:`\hat F` linearly between
    the bin centres (constant beyond them, 0 without bins).

    Attributes
    ----------
    edges : ndarray, shape (B + 1,)
        Bin edges in z (equal-count bins).
    centers : ndarray, shape (B',)
        Mean z in each populated bin (B' <= B).
    F : ndarray, shape (B',)
        Mean dZ/dt per bin.
    se : ndarray, shape (B',)
        Standard errors, std/sqrt(n) (increments of a Markov SDE are martingale differences, so
        these bin errors are valid for the goodness of fit).
    count : ndarray, shape (B',)
        Increments per bin.
    kappa : levysde.core.status.Estimate
        The plateau :math:`\hat\kappa` of the saturating fit (flagged when no plateau is seen,
        :func:`kappa_flag`); its error is set by :func:`levysde.inference.sde_fit.fit_sde`
        (jackknife over neurons), NaN here.
    form : dict
        The :func:`fit_saturating` result over the left region, plus ``z_cut`` and ``bin_se``
        ({} when not fitted).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=2000)
    >>> d = estimate_drift(z, -z + rng.normal(size=2000), np.ones(2000), bins=10)
    >>> d.centers.size, int(d.count.sum())
    (10, 2000)
    >>> print(np.round(d([-1.0, 1.0]), 1))       # the drift -z
    [ 1.1 -1. ]
    """

    edges: np.ndarray
    centers: np.ndarray
    F: np.ndarray
    se: np.ndarray
    count: np.ndarray
    kappa: Estimate
    form: dict = field(default_factory=dict)

    def __call__(self, z):
        """F_hat by linear interpolation between bin centres, constant beyond (0 without bins)."""
        if self.centers.size == 0:
            return np.zeros(np.shape(z))
        return np.interp(z, self.centers, self.F)

    @property
    def plateau_extrapolated(self) -> bool:
        """Whether the plateau kappa_hat lies beyond the data: the fitted form reaches less than
        :data:`PLATEAU_REACHED` of it at the leftmost bin (the flag "plateau not reached")."""
        return bool(self.form) and self.form["plateau_fraction"] < PLATEAU_REACHED

    def form_curve(self, z) -> np.ndarray:
        r"""The fitted saturating form :math:`\kappa \tanh((z_0 - z)/w)` at ``z``.

        It rests on the bins of ``form["z_range"]``; left of them it is an extrapolation.

        Parameters
        ----------
        z : array_like
            Where to evaluate it.

        Returns
        -------
        ndarray
            Of ``z``'s shape; NaN when no form was fitted.

        Examples
        --------
        >>> d = DriftEstimate(np.zeros(2), np.zeros(1), np.zeros(1), np.zeros(1), np.ones(1),
        ...                   Estimate(2.0, float("nan")), {"kappa": 2.0, "width": 1.0, "z0": 0.0})
        >>> np.round(d.form_curve([-10.0, 0.0]), 6)
        array([2., 0.])
        """
        z = np.asarray(z, dtype=float)
        if not self.form:
            return np.full(z.shape, np.nan)
        return self.form["kappa"] * np.tanh((self.form["z0"] - z) / self.form["width"])

    def plateau_onset(self, fraction: float = 0.95) -> float:
        r"""Where the fitted form reaches ``fraction`` of its plateau: :math:`z_0 - w\,\mathrm{artanh}(f)`.

        Parameters
        ----------
        fraction : float, default 0.95
            Share of kappa_hat, in (0, 1).

        Returns
        -------
        float
            That z (left of the data when :attr:`plateau_extrapolated`); NaN without a fitted form.

        Examples
        --------
        >>> d = DriftEstimate(np.zeros(2), np.zeros(1), np.zeros(1), np.zeros(1), np.ones(1),
        ...                   Estimate(2.0, float("nan")), {"kappa": 2.0, "width": 1.0, "z0": 0.0})
        >>> round(d.plateau_onset(0.95), 4)
        -1.8318
        """
        fraction = check_real("fraction", fraction, 0.0, 1.0, lo_open=True, hi_open=True)
        if not self.form:
            return math.nan
        return float(self.form["z0"] - self.form["width"] * math.atanh(fraction))


#: goodness-of-fit level below which the saturating form is rejected for the left region
DRIFT_GOF_LEVEL = 1e-3


#: the fitted drift must reach this share of its plateau at the leftmost bin
PLATEAU_REACHED = 0.8


def kappa_flag(form: dict, se: float) -> Flag | None:
    """The plateau's flag from the fitted form and its standard error (see :func:`estimate_drift`).

    Parameters
    ----------
    form : dict
        The :func:`fit_saturating` result (keys ``kappa``, ``plateau_fraction``,
        ``width_at_edge``, ``p_value``, ``chi2``, ``dof``).
    se : float
        Standard error of kappa_hat (NaN skips the significance test).

    Returns
    -------
    levysde.core.status.Flag or None
        None when the plateau is fine, else the first that applies: OUT_OF_DOMAIN "no plateau"
        (kappa_hat <= 0: the far-left drift is not restoring; the error is kept), NOT_IDENTIFIED
        "plateau not reached" (the fit reaches < :data:`PLATEAU_REACHED` of kappa_hat at the
        leftmost bin), AT_BOUND "at the edge" (the width at its lower bound: a step),
        NOT_SIGNIFICANT "no significant plateau" (kappa_hat < 3 se) and REJECTED "drift form
        rejected" (goodness of fit p < :data:`DRIFT_GOF_LEVEL`; the error is kept).

    References
    ----------
    * The specification, §8.

    Examples
    --------
    >>> kappa_flag({"kappa": -0.1, "plateau_fraction": 1.0, "p_value": 0.5}, 0.05).status
    <Status.OUT_OF_DOMAIN: 'out of domain'>
    >>> print(kappa_flag({"kappa": 0.1, "plateau_fraction": 0.95, "p_value": 0.5}, 0.05).message)
    no significant plateau: kappa_hat = 0.1 +- 0.05 is within 3 standard errors of 0
    >>> kappa_flag({"kappa": 0.5, "plateau_fraction": 0.95, "p_value": 0.5}, 0.05) is None
    True
    """
    k = form["kappa"]
    if k <= 0:
        return Flag(Status.OUT_OF_DOMAIN, "no plateau: the drift on the far left is not restoring (kappa_hat <= 0)")
    if form["plateau_fraction"] < PLATEAU_REACHED:
        return Flag(Status.NOT_IDENTIFIED, f"plateau not reached: the fitted drift at the leftmost bin is "
                                           f"{form['plateau_fraction']:.0%} of kappa_hat (extrapolated beyond the "
                                           f"data)")
    if form.get("width_at_edge"):
        return Flag(Status.AT_BOUND, "at the edge: the fitted width sits at its lower bound (a step, not the "
                                     "saturating form; kappa_hat is not identified)")
    if math.isfinite(se) and k < 3 * se:
        return Flag(Status.NOT_SIGNIFICANT, f"no significant plateau: kappa_hat = {k:.3g} +- {se:.2g} is within "
                                            f"3 standard errors of 0")
    if form["p_value"] < DRIFT_GOF_LEVEL:
        return Flag(Status.REJECTED, f"drift form rejected: chi2 = {form['chi2']:.1f} for {form['dof']} dof "
                                     f"(p = {form['p_value']:.2g}) over the left region")
    return None


def restoring_plateau(kappa: Estimate) -> bool:
    """Is there a restoring plateau to predict from (the specification, §3, §8)?

    A plateau that is not reached, at the edge or whose form is rejected still counts: the
    prediction is made, and ``levysde check`` withholds the phase on its plateau gate.

    Parameters
    ----------
    kappa : levysde.core.status.Estimate
        The plateau kappa_hat (:attr:`DriftEstimate.kappa`, with its error from
        :func:`levysde.inference.sde_fit.fit_sde`).

    Returns
    -------
    bool
        kappa_hat is available and > 0, and its status is neither OUT_OF_DOMAIN nor
        NOT_SIGNIFICANT (within 3 se of 0).

    References
    ----------
    * The specification, §3 and §8.

    Examples
    --------
    >>> from levysde.core.status import Estimate, Status
    >>> restoring_plateau(Estimate(0.4, 0.05))
    True
    >>> restoring_plateau(Estimate(0.4, 0.2, "no significant plateau", status=Status.NOT_SIGNIFICANT))
    False
    >>> restoring_plateau(Estimate(-0.1, 0.05))
    False
    """
    return kappa.ok and kappa.value > 0 and kappa.status not in (Status.OUT_OF_DOMAIN, Status.NOT_SIGNIFICANT)


def estimate_drift(z, dz, dt, *, bins: int = 60, drift_fraction: float = 0.6,
                   min_count: int = 20, start=None, edges=None, z_cut=None,
                   one_step: bool = False, bin_se=None) -> DriftEstimate:
    r"""Binned drift and its plateau (the specification, §3, §8) from increment pairs (see :func:`increments`).

    ``kappa_hat`` is the plateau of the saturating drift ``kappa tanh((z0 - z)/width)``
    (docs/specification.md §3) fitted by weighted least squares (:func:`fit_saturating`) to the bins
    holding the lowest ``drift_fraction`` of the z mass (the left region), with a
    chi-square goodness of fit. Its error is NaN here; :func:`fit_sde` sets it from the
    jackknife over neuron groups.
    Flags (:func:`kappa_flag`): "no plateau" (kappa_hat <= 0), "no significant plateau"
    (< 3 standard errors), "plateau not reached" (the fit reaches < 80 % of kappa_hat at
    the leftmost bin: the plateau is an extrapolation), "drift form rejected"
    (goodness of fit p < 1e-3).

    ``edges`` and ``z_cut`` (the left region's upper end) fix the bins and the region, e.g.
    to those of the full data in a jackknife replicate (the replicate then varies the
    data only, not the grid); ``start`` starts the form fit. A replicate also passes
    ``bin_se`` (the full fit's per-bin errors ``form["bin_se"]``, one per bin of ``edges``,
    NaN for unused bins: the same bins and weights, any bin with an increment kept) and
    ``one_step=True`` (one Gauss-Newton step from ``start`` instead of a search; the linear
    jackknife of :func:`levysde.inference.sde_fit.fit_sde`).

    Parameters
    ----------
    z, dz, dt : array_like, shape (n,)
        Increment pairs (:func:`increments`): start value, increment and its time step (> 0).
    bins : int, default 60
        Number of equal-count bins of z, >= 3; lowered so that every bin can hold
        ``min_count`` increments.
    drift_fraction : float, default 0.6
        Share of the z mass (from the left) whose bins form the left region of the plateau fit,
        in (0, 1].
    min_count : int, default 20
        Fewest increments for a bin to enter the fit, >= 2.
    start : tuple of 3 floats, optional
        Start ``(kappa, log width, z0)`` of the form fit (:func:`fit_saturating`).
    edges : array_like, optional
        Fixed bin edges (increasing); default the quantiles of z.
    z_cut : float, optional
        Fixed upper end of the left region; default the ``drift_fraction`` quantile of z.
    one_step : bool, default False
        One Gauss-Newton step from ``start`` instead of a search (a jackknife replicate).
    bin_se : array_like, optional
        Per-bin errors of the full fit (``form["bin_se"]``, one per bin of ``edges``), used as
        the weights of a replicate.

    Returns
    -------
    DriftEstimate
        The binned drift and kappa_hat (its ``se`` NaN; an unavailable kappa when the fit
        cannot be made or zeta does not move).

    Raises
    ------
    ValueError
        For ``dz`` not finite or ``dt`` not finite and > 0 (or either not of the shape of
        ``z``), ``min_count`` not an integer >= 2, fewer than ``3 * min_count`` increments
        (fewer than ``2 * min_count`` is refused first), ``bins`` < 3, ``drift_fraction``
        outside (0, 1], or when fewer than 3 bins are populated (zeta takes too few distinct values).

    Notes
    -----
    Per bin :math:`b` with :math:`n_b` increments,

    .. math::

        \hat F_b = \frac{1}{n_b} \sum_{i \in b} \frac{dZ_i}{dt_i}, \qquad
        \mathrm{se}_b = \sqrt{\frac{\widehat{\mathrm{Var}}_b(dZ/dt)}{n_b - 1}},

    the Nadaraya-Watson/histogram estimate of the Kramers-Moyal drift coefficient (Friedrich et
    al. 2011, §4.1).

    References
    ----------
    * The specification, §3 and §8.
    * R. Friedrich, J. Peinke, M. Sahimi, M. R. R. Tabar, "Approaching complexity by stochastic
      methods: From biological systems to turbulence", *Phys. Rep.* 506 (2011) 87-162.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> R, Q = 200, 100
    >>> zeta = np.empty((R, Q))
    >>> zeta[0] = rng.normal(size=Q)
    >>> for r in range(R - 1):              # dZ = 0.5 tanh(-Z/0.5) dt + 0.5 dW, dt = 1
    ...     zeta[r + 1] = zeta[r] + 0.5 * np.tanh(-zeta[r] / 0.5) + 0.5 * rng.normal(size=Q)
    >>> z, dz, dt, _ = increments(zeta, np.arange(R), first_record=100)
    >>> d = estimate_drift(z, dz, dt, bins=20)
    >>> round(d.kappa.value, 2), d.kappa.status, d.form["p_value"] > 0.01
    (0.47, <Status.OK: 'ok'>, True)
    """
    z = np.asarray(z, dtype=float)
    dz = check_array("dz", dz, shape=z.shape)
    dt = check_array("dt", dt, shape=z.shape, lo=0.0, lo_open=True)
    min_count = check_int("min_count", min_count, 2, why="a bin's standard error needs 2 increments")
    v = dz / dt
    bins = check_int("bins", bins, 3)
    check_real("drift_fraction", drift_fraction, 0.0, 1.0, lo_open=True)
    if z.size < 2 * min_count:
        raise ValueError(f"too few increments ({z.size}) to estimate the drift; need >= {2 * min_count}")
    dzv = np.asarray(dz, dtype=float)
    if not np.max(np.abs(dzv)) > 1e-12 * (1.0 + float(np.max(np.abs(z)))):
        empty = np.zeros(0)
        return DriftEstimate(edges=empty, centers=empty, F=empty, se=empty, count=empty,
                             kappa=unavailable("no plateau: zeta does not move between records "
                                                "(constant trajectories, or changes at rounding level)"))
    bins = min(int(bins), z.size // min_count)          # every bin can hold min_count increments
    if bins < 3:
        raise ValueError(f"too few increments ({z.size}) for a binned drift; need >= {3 * min_count}")
    if edges is None:
        edges = np.unique(np.quantile(z, np.linspace(0, 1, int(bins) + 1)))
    edges = np.asarray(edges, dtype=float)
    if edges.size < 3:
        raise ValueError("zeta does not move: all increments start from (almost) the same value")
    idx = np.clip(np.searchsorted(edges, z, side="right") - 1, 0, edges.size - 2)
    nb = edges.size - 1
    count = np.bincount(idx, minlength=nb).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        centers = np.bincount(idx, weights=z, minlength=nb) / count
        F = np.bincount(idx, weights=v, minlength=nb) / count
        var = np.bincount(idx, weights=v * v, minlength=nb) / count - F * F
        se = np.sqrt(np.maximum(var, 0) / np.maximum(count - 1, 1))
    se_all = se
    if bin_se is None:
        good = (count >= min_count) & (se > 0)
    else:                                  # a replicate: the full fit's bins and weights (see fit_sde)
        bin_se = np.asarray(bin_se, dtype=float)
        good = (count > 0) & np.isfinite(bin_se) & (bin_se > 0)
    if good.sum() < 3:
        raise ValueError("too few populated drift bins: zeta takes too few distinct values")
    centers, F, se, count_g = centers[good], F[good], se[good], count[good]
    region = centers <= (np.quantile(z, drift_fraction) if z_cut is None else z_cut)
    w_se = (bin_se[good] if bin_se is not None else se)[region]
    try:
        form = fit_saturating(centers[region], F[region], w_se, start=start, one_step=one_step)
    except ValueError as exc:
        kappa, form = unavailable(f"no plateau: {exc}"), {}
    else:
        form["z_cut"] = float(np.quantile(z, drift_fraction)) if z_cut is None else float(z_cut)
        form["bin_se"] = np.where(good, se_all, np.nan)
        flag = kappa_flag(form, float("nan"))
        kappa = Estimate(form["kappa"]) if flag is None else Estimate(form["kappa"], flag=flag.message,
                                                                      status=flag.status)
    return DriftEstimate(edges=edges, centers=centers, F=F, se=se, count=count_g, kappa=kappa, form=form)
