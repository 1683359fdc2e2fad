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
    """Pairs (z, dz, dt) of consecutive records, NaN pairs dropped.

    Parameters
    ----------
    zeta : (R, Q) array, records x neurons (NaN = undefined neuron/record)
    step : (R,) strictly increasing record times (training steps or SDE time)
    first_record : use records from this index on (the late, stationary part)

    Returns
    -------
    z, dz, dt, neuron : 1-d arrays of equal length (neuron = column index)

    Raises
    ------
    ValueError for bad shapes or non-increasing steps.
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
    """The saturating drift of docs/specification.md §3 written as ``kappa tanh((z0 - z)/width)``
    (``width = kappa/gamma``); kappa of either sign (negative: drift away on the left)."""
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
    """Weighted least-squares fit of ``F(z) = kappa tanh((z0 - z)/width)`` to binned drift values.

    The docs/specification.md §3 saturating drift (``gamma = kappa/width``), fitted over the bins given
    (the left region). Parameters: kappa (real), width in [min bin spacing/4, 100 x data range],
    z0 (real); several starts, ``scipy.optimize.least_squares`` on ``(model - F)/se``.

    ``one_step=True`` (with ``start``): no search, one Gauss-Newton step from ``start``
    (:func:`_saturating_step`; the replicates of the linear jackknife of :func:`fit_sde`).

    Returns dict: kappa, width, z0, gamma (kappa/width), chi2, dof, p_value (chi-square
    goodness of fit), plateau_fraction (``tanh((z0 - z_left)/width)``: the share of the plateau
    the fitted drift reaches at the leftmost bin; near 1 when the data reach the plateau),
    width_at_edge (the width sits at its lower bound: a step, kappa not identified), x
    (kappa, log width, z0).
    Raises ValueError for fewer than 4 bins or non-positive se.
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
    """Binned drift F_hat(z) = E[dZ | Z = z]/dt with errors, and the fitted plateau.

    Attributes
    ----------
    edges : (B+1,) bin edges in z (equal-count bins)
    centers : (B,) mean z in each bin
    F : (B,) mean dZ/dt per bin
    se : (B,) standard errors (std/sqrt(n); increments of a Markov SDE are martingale
        differences, so these bin errors are valid for the goodness of fit)
    count : (B,) increments per bin
    kappa : Estimate of the plateau kappa_hat from the saturating fit (flagged when no
        plateau is seen); its error is set by :func:`fit_sde` (jackknife over neurons)
    form : the :func:`fit_saturating` result over the left region ({} when not fitted)
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


#: goodness-of-fit level below which the saturating form is rejected for the left region
DRIFT_GOF_LEVEL = 1e-3


#: the fitted drift must reach this share of its plateau at the leftmost bin
PLATEAU_REACHED = 0.8


def kappa_flag(form: dict, se: float) -> Flag | None:
    """The plateau's flag from the fitted form and its standard error (see :func:`estimate_drift`).

    Parameters
    ----------
    form : the :func:`fit_saturating` result (keys kappa, plateau_fraction, width_at_edge,
        p_value, chi2, dof)
    se : standard error of kappa_hat (NaN skips the significance test)

    Returns
    -------
    None when the plateau is fine, else a :class:`levysde.core.status.Flag`, the first that applies:
    OUT_OF_DOMAIN "no plateau" (kappa_hat <= 0: the far-left drift is not restoring; the error
    is kept), NOT_IDENTIFIED "plateau not reached" (the fit reaches < PLATEAU_REACHED of
    kappa_hat at the leftmost bin), AT_BOUND "at the edge" (the width at its lower bound: a
    step), NOT_SIGNIFICANT "no significant plateau" (kappa_hat < 3 se) and REJECTED "drift form
    rejected" (goodness of fit p < DRIFT_GOF_LEVEL; the error is kept). docs/specification.md §8.

    Example
    -------
    >>> kappa_flag({"kappa": -0.1, "plateau_fraction": 1.0, "p_value": 0.5}, 0.05).status
    <Status.OUT_OF_DOMAIN: 'out of domain'>
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
    """Is there a restoring plateau to predict from (docs/specification.md §3, §8)? kappa_hat
    available and > 0, and neither OUT_OF_DOMAIN nor NOT_SIGNIFICANT (within 3 se of 0).

    A plateau that is not reached, at the edge or whose form is rejected still counts: the
    prediction is made, and ``levysde check`` withholds the phase on its plateau gate.
    """
    return kappa.ok and kappa.value > 0 and kappa.status not in (Status.OUT_OF_DOMAIN, Status.NOT_SIGNIFICANT)


def estimate_drift(z, dz, dt, *, bins: int = 60, drift_fraction: float = 0.6,
                   min_count: int = 20, start=None, edges=None, z_cut=None,
                   one_step: bool = False, bin_se=None) -> DriftEstimate:
    """Binned drift and its plateau (docs/specification.md §3, §8) from increment pairs (see :func:`increments`).

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
    jackknife of :func:`fit_sde`).

    Raises ValueError for fewer than ``3 * min_count`` increments or bad options.
    """
    z = np.asarray(z, dtype=float)
    v = np.asarray(dz, dtype=float) / np.asarray(dt, dtype=float)
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
