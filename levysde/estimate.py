"""Fit the SDE of THEORY.md §3 to empirical zeta trajectories (THEORY.md §8).

Input: ``zeta`` (records x neurons) and ``step`` (records), e.g. from a run file
of ``levysde train`` or the thinned trajectories of a simulation. Increments over
one record, ``dZ = zeta[r+1] - zeta[r]`` over ``dt = step[r+1] - step[r]``, give

* the drift ``F_hat(z) = E[dZ | Z = z]/dt`` in equal-count bins of z, with
  standard errors, and the far-left plateau ``kappa_hat`` of the saturating drift
  ``kappa tanh((z0 - z)/width)`` (THEORY.md §3) fitted over the left region, with a
  chi-square goodness of fit;
* the noise: a robust scale ``s = 1.4826 MAD(r/sqrt(dt))`` of the drift residuals
  r = dZ - F_hat(Z) dt; jumps are residuals beyond ``threshold * s sqrt(dt)``. When
  they are in significant excess over the Gaussian expectation, (eta_G, eta_J,
  alpha, lam) are fitted jointly to the empirical characteristic function of the
  residuals, ``-log E cos(xi r)/dt = eta_G xi^2 - char_exponent(xi)`` (a stable fit,
  THEORY.md §2, §8); otherwise eta_J = 0 and eta_G = s^2/2. A Hill scan of the
  jump sizes is reported as a diagnostic;
* the spread of the spectrum (std, IQR, decades of tau covered), and the lag range a
  recorded spectrum supports (:func:`resolved_lag_max`).

Standard errors come from a delete-a-group jackknife over groups of whole neurons
(:func:`fit_sde`): a neuron's increments are correlated in training time, so only
resampling neurons is valid (THEORY.md §8). Every estimate is an :class:`Estimate`
carrying a standard error, or a flag saying why it is unavailable. Pure numpy/scipy.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, stats

from .tails import hill_index


__all__ = ["Estimate", "DriftEstimate", "NoiseEstimate", "SDEFit", "increments", "estimate_drift",
           "robust_scale", "estimate_noise", "spread", "fit_sde", "predict", "Prediction",
           "neuron_groups", "jackknife_se", "saturating_form", "fit_saturating", "kappa_flag",
           "edge_flags", "resolved_lag_max", "FIT_KEYS", "ALPHA_RANGE", "ecf_model_se", "floor_se", "floored_replicates",
           "jackknife_bias", "JACKKNIFE_BIAS_LIMIT"]

_MAD_TO_SIGMA = 1.4826022185056018      # 1/Phi^-1(3/4)
_MAD_VAR = 1.3605                       # n Var(sigma_MAD)/sigma^2 for Gaussian data (efficiency 0.3675)


@dataclass(frozen=True)
class Estimate:
    """A scalar estimate: value and standard error, or a flag saying why it is unavailable.

    ``value`` is NaN and ``flag`` a reason when unavailable; ``flag`` may also be a
    caveat on an available value (``ok`` is then still True). ``log_se`` (positive
    estimates whose error is multiplicative, e.g. kappa_hat): the standard error of
    log(value); the k-sigma interval is then ``value * exp(+-k log_se)`` and ``se`` is its
    delta-method size ``value * log_se``. NaN when the interval is symmetric, value +- k se.
    """

    value: float
    se: float = float("nan")
    flag: str | None = None
    log_se: float = float("nan")

    @property
    def ok(self) -> bool:
        return math.isfinite(self.value)

    def interval(self, k: float = 1.0) -> tuple:
        """(low, high) of the k-sigma interval (log scale when ``log_se`` is finite); NaN without an error."""
        if math.isfinite(self.log_se):
            return (self.value * math.exp(-k * self.log_se), self.value * math.exp(k * self.log_se))
        return (self.value - k * self.se, self.value + k * self.se)

    def as_json(self, name: str) -> dict:
        """``{name: value, name_se: se, name_flag: flag}`` with None for NaN (and ``name_log_se``
        when the error is on the log scale)."""
        def num(v):
            return float(v) if math.isfinite(v) else None
        out = {name: num(self.value), f"{name}_se": num(self.se)}
        if math.isfinite(self.log_se):
            out[f"{name}_log_se"] = float(self.log_se)
        if self.flag:
            out[f"{name}_flag"] = self.flag
        return out


def _unavailable(reason: str) -> Estimate:
    return Estimate(float("nan"), float("nan"), reason)


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
    zeta = np.asarray(zeta, dtype=float)
    step = np.asarray(step, dtype=float)
    if zeta.ndim != 2:
        raise ValueError(f"zeta must be 2-d (records, neurons); got shape {zeta.shape}")
    if step.shape != (zeta.shape[0],):
        raise ValueError(f"step must have one entry per record ({zeta.shape[0]}); got shape {step.shape}")
    if not np.all(np.isfinite(step)) or np.any(np.diff(step) <= 0):
        raise ValueError("step must be finite and strictly increasing")
    if not 0 <= first_record < zeta.shape[0]:
        raise ValueError(f"first_record must be in [0, {zeta.shape[0] - 1}]; got {first_record}")
    zz = zeta[first_record:]
    st = step[first_record:]
    z0, z1 = zz[:-1], zz[1:]
    dt = np.broadcast_to(np.diff(st)[:, None], z0.shape)
    neuron = np.broadcast_to(np.arange(zz.shape[1])[None, :], z0.shape)
    ok = np.isfinite(z0) & np.isfinite(z1)
    return z0[ok], (z1 - z0)[ok], dt[ok], neuron[ok]


def neuron_groups(n_neurons: int, n_groups: int = 16) -> np.ndarray:
    """Labels (n_neurons,) of the neuron groups resampled by the jackknife: neuron q -> q mod G,
    G = min(n_groups, n_neurons). Raises ValueError for n_neurons < 1 or n_groups < 2."""
    if int(n_neurons) < 1:
        raise ValueError(f"n_neurons must be >= 1; got {n_neurons!r}")
    if int(n_groups) != n_groups or n_groups < 2:
        raise ValueError(f"n_groups must be an integer >= 2; got {n_groups!r}")
    return np.arange(int(n_neurons)) % min(int(n_groups), int(n_neurons))


def jackknife_se(values_loo) -> float:
    """Delete-a-group jackknife standard error ``sqrt((G-1)/G sum_g (t_(-g) - mean)^2)`` from the
    G leave-one-group-out values (Efron & Tibshirani 1993, §11.2; groups of whole neurons,
    THEORY.md §8). NaN when G < 2 or any replicate is not finite (never a silent partial SE)."""
    from .tails import jackknife

    v = np.asarray(values_loo, dtype=float)
    if v.size < 2 or not np.all(np.isfinite(v)):
        return float("nan")
    return jackknife(v)


#: a jackknife bias estimate below this share of the standard error can be ignored (Efron &
#: Tibshirani 1993, §10.6); beyond it the estimator's small-sample bias is material
JACKKNIFE_BIAS_LIMIT = 0.25


def jackknife_bias(values_loo, value) -> float:
    """Delete-a-group jackknife estimate of bias ``(G - 1) (mean_g t_(-g) - t)`` of the estimate
    ``value`` from its G leave-one-group-out values (Efron & Tibshirani 1993, §10.5; groups of
    whole neurons, THEORY.md §8). NaN when G < 2 or any replicate is not finite."""
    v = np.asarray(values_loo, dtype=float)
    if v.size < 2 or not np.all(np.isfinite(v)) or not math.isfinite(value):
        return float("nan")
    return float((v.size - 1) * (v.mean() - value))


def saturating_form(z, kappa, width, z0):
    """The saturating drift of THEORY.md §3 written as ``kappa tanh((z0 - z)/width)``
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

    The THEORY.md §3 saturating drift (``gamma = kappa/width``), fitted over the bins given
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


def kappa_flag(form: dict, se: float) -> str | None:
    """The plateau's flag from the fitted form and its standard error (see :func:`estimate_drift`)."""
    k = form["kappa"]
    if k <= 0:
        return "no plateau: the drift on the far left is not restoring (kappa_hat <= 0)"
    if form["plateau_fraction"] < PLATEAU_REACHED:
        return (f"plateau not reached: the fitted drift at the leftmost bin is "
                f"{form['plateau_fraction']:.0%} of kappa_hat (extrapolated beyond the data)")
    if form.get("width_at_edge"):
        return ("at the edge: the fitted width sits at its lower bound (a step, not the saturating form; "
                "kappa_hat is not identified)")
    if math.isfinite(se) and k < 3 * se:
        return f"no significant plateau: kappa_hat = {k:.3g} +- {se:.2g} is within 3 standard errors of 0"
    if form["p_value"] < DRIFT_GOF_LEVEL:
        return (f"drift form rejected: chi2 = {form['chi2']:.1f} for {form['dof']} dof "
                f"(p = {form['p_value']:.2g}) over the left region")
    return None


def estimate_drift(z, dz, dt, *, bins: int = 60, drift_fraction: float = 0.6,
                   min_count: int = 20, start=None, edges=None, z_cut=None,
                   one_step: bool = False, bin_se=None) -> DriftEstimate:
    """Binned drift and its plateau (THEORY.md §3, §8) from increment pairs (see :func:`increments`).

    ``kappa_hat`` is the plateau of the saturating drift ``kappa tanh((z0 - z)/width)``
    (THEORY.md §3) fitted by weighted least squares (:func:`fit_saturating`) to the bins
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
    if int(bins) != bins or bins < 3:
        raise ValueError(f"bins must be an integer >= 3; got {bins!r}")
    if not 0 < drift_fraction <= 1:
        raise ValueError(f"drift_fraction must be in (0, 1]; got {drift_fraction!r}")
    if z.size < 2 * min_count:
        raise ValueError(f"too few increments ({z.size}) to estimate the drift; need >= {2 * min_count}")
    dzv = np.asarray(dz, dtype=float)
    if not np.max(np.abs(dzv)) > 1e-12 * (1.0 + float(np.max(np.abs(z)))):
        empty = np.zeros(0)
        return DriftEstimate(edges=empty, centers=empty, F=empty, se=empty, count=empty,
                             kappa=_unavailable("no plateau: zeta does not move between records "
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
        kappa, form = _unavailable(f"no plateau: {exc}"), {}
    else:
        form["z_cut"] = float(np.quantile(z, drift_fraction)) if z_cut is None else float(z_cut)
        form["bin_se"] = np.where(good, se_all, np.nan)
        kappa = Estimate(form["kappa"], float("nan"), kappa_flag(form, float("nan")))
    return DriftEstimate(edges=edges, centers=centers, F=F, se=se, count=count_g, kappa=kappa, form=form)


def robust_scale(residuals, dt) -> float:
    """s = 1.4826 MAD(r/sqrt(dt)): the Gaussian scale per unit sqrt(time), blind to rare jumps."""
    r = np.asarray(residuals, dtype=float) / np.sqrt(np.asarray(dt, dtype=float))
    return _MAD_TO_SIGMA * float(np.median(np.abs(r - np.median(r)))) if r.size else float("nan")


@dataclass(frozen=True)
class NoiseEstimate:
    """Gaussian and jump parts of the increments (THEORY.md §8).

    Attributes
    ----------
    eta_g, eta_j, alpha, lam : Estimates (alpha, lam unavailable without jumps)
    n_jumps : residuals beyond ``threshold`` robust scales
    n_gauss_expected : that count expected from Gaussian noise alone
    u : the size threshold (units of zeta)
    hill : list of (u_i, alpha_hat, se, k) over a threshold scan (Hill on the jump sizes;
        biased upward by tempering and by the Gaussian smearing near u: a diagnostic)
    method : how eta_G, eta_J, alpha, lam were obtained
    mode : "jumps" (characteristic-function fit) or "gauss" (eta_J = 0 or unavailable)
    log_lam_range : the fitted range of log lam (jumps only)
    replicates : (G, 4) leave-one-group-out (eta_g, eta_j, alpha, lam) of the jackknife
    model_se : (4,) model-based asymptotic errors of (eta_g, eta_j, alpha, lam) for independent
        increments (:func:`ecf_model_se`; NaN without the characteristic-function fit); they
        replace a jackknife error significantly smaller than them (:func:`floor_se`)
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
    """Weighted least squares of -log(ECF)/dt = eta_G xi^2 - char_exponent(xi) (THEORY.md §2, §8).

    ``cos_g``: (G, K) per-group sums of cos(xi r), ``cos2_g`` the same at 2 xi, ``n_g``: (G,)
    counts. Linear in (eta_G, eta_J) for fixed (alpha, lam): those are profiled out by
    non-negative least squares; (alpha, log lam) by Nelder-Mead from a small grid.
    Returns (eta_g, eta_j, alpha, lam, objective, (log lam range), model standard errors
    (:func:`ecf_model_se`)).
    """
    from .levy import char_exponent

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
    """Asymptotic standard errors of the characteristic-function fit for n independent increments.

    The sandwich of weighted least squares (THEORY.md §8: ``-log phi(xi)/dt = eta_G xi^2 -
    char_exponent(xi)``) with the model's own covariance of the empirical characteristic
    function (Feuerverger & McDunnough 1981, *JRSS B* 43, 20):
    ``Cov(cos xi_j X, cos xi_k X) = [phi(xi_j + xi_k) + phi(xi_j - xi_k)]/2 - phi_j phi_k``,
    carried to ``y = -log(phi_hat)/dt`` by the delta method, and
    ``Cov(theta_hat) = A^-1 J^T W C_y W J A^-1 / n`` with ``A = J^T W J``.

    Parameters
    ----------
    theta : (eta_G, eta_J, alpha, lam), the fitted values (eta_G >= 0, eta_J > 0,
        0 < alpha < 2, lam > 0)
    xi : (K,) the frequencies the fit used; weights : (K,) its least-squares weights
    dt : time step of an increment (time units); n : number of increments

    Returns
    -------
    (4,) standard errors of (eta_G, eta_J, alpha, lam): NaN where the sandwich is singular
    or a parameter is at a bound (eta_G = 0). It assumes independent increments; within-neuron
    correlation is what the neuron jackknife adds (:func:`estimate_noise` reports the jackknife
    unless it is significantly smaller than this, :func:`floor_se`).
    """
    from .levy import char_exponent

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
    (THEORY.md §8 (iii)).

    lam: "at the edge" at either end of the fitted log range (within 1e-3 in log lam), or
    lam_hat < 2 standard errors (untempered/unresolved). alpha: "at the edge" within 1e-6 of
    ALPHA_RANGE's ends; otherwise "not identified" when lam is flagged (alpha and lam trade off
    in the tempered-stable exponent: with the cut-off unresolved, alpha is not determined) or
    when ``eta_g`` (the fitted Gaussian coefficient) sits at its bound 0 (the Gaussian part is
    absorbed by the jumps, whose alpha then moves towards 2 to mimic it). Estimates with either
    flag get no standard error (:data:`NOT_IDENTIFIED`): a jackknife at a bound, or along a
    ridge of the fit, does not describe the estimator's sampling law.

    With the jackknife errors given (``alpha_se``, ``eta_j_se``; NaN skips the test), alpha is
    also "not identified" when ``alpha +- 2 alpha_se`` leaves ALPHA_RANGE (the estimator's law is
    cut by the bound inside its own 95 % interval, so the normal approximation of the jackknife
    fails there) or when ``eta_j <= 2 eta_j_se`` (the jump amplitude is not significantly
    different from 0 at the two-sided 5 % level: the jump law's shape, alpha, is then not
    measured). The constants mirror the plateau's rule (kappa_hat < 3 se: no error,
    :func:`kappa_flag`); docs/calibration.md gives the reasoning.
    """
    l_flag = None
    lo_l, hi_l = log_lam_range
    if math.log(max(lam, 1e-300)) <= lo_l + 1e-3 or (math.isfinite(lam_se) and not lam > 2 * lam_se):
        l_flag = "at the edge: untempered/unresolved, the exponential cut-off of the jumps is not identifiable"
    elif math.log(lam) >= hi_l - 1e-3:
        l_flag = "at the edge: lam_hat sits at the upper end of the fitted range (cut-off below the data's scales)"
    a_flag = None
    if alpha <= ALPHA_RANGE[0] + 1e-6 or alpha >= ALPHA_RANGE[1] - 1e-6:
        a_flag = f"at the edge: alpha_hat sits at the edge of the fitted range {ALPHA_RANGE}"
    elif l_flag:
        a_flag = "not identified: the jumps' cut-off lam is not resolved, and alpha trades off against it"
    elif eta_g is not None and not eta_g > 0:
        a_flag = ("not identified: eta_G_hat = 0 (at its bound): the Gaussian part is absorbed by the jumps, "
                  "which bias alpha_hat towards 2")
    elif math.isfinite(eta_j_se) and not eta_j > 2 * eta_j_se:
        a_flag = (f"not identified: eta_J_hat = {eta_j:.3g} +- {eta_j_se:.2g} is within 2 se of 0: the jumps "
                  f"are not resolved, so their law (alpha) is not measured")
    elif math.isfinite(alpha_se) and not ALPHA_RANGE[0] < alpha - 2 * alpha_se < alpha + 2 * alpha_se < ALPHA_RANGE[1]:
        a_flag = (f"not identified: alpha_hat +- 2 se = [{alpha - 2 * alpha_se:.3g}, {alpha + 2 * alpha_se:.3g}] "
                  f"leaves the fitted range {ALPHA_RANGE}")
    return a_flag, l_flag


#: flag of eta_G_hat without a jump fit (docs/calibration.md: it covered eta_G in 0 of 135 study
#: runs that had jumps nobody detected, and is what a Gaussian-only model of the increments needs)
NO_JUMP_FIT_ETA_G = ("no jump fit: eta_G_hat is the robust diffusion of the increments, which includes any "
                     "jumps too small or too rare to detect (then an upper bound of eta_G)")


def estimate_noise(residuals, dt, groups=None, *, threshold: float = 4.0, min_jumps: int = 30,
                   max_samples: int = 2_000_000, n_xi: int = 40, seed: int = 0, mode: str | None = None,
                   errors: bool = True, start=None) -> NoiseEstimate:
    """Gaussian part, jump detection and the CTS jump parameters (THEORY.md §8).

    1. Robust scale s = 1.4826 MAD(r/sqrt(dt)); jumps are residuals beyond
       ``threshold * s * sqrt(dt)``. Fewer than ``min_jumps`` of them, or no
       significant excess (5 sigma) over the Gaussian expectation, reports "no
       jumps detected": eta_J = 0 and eta_G = s^2/2 (standard error: the jackknife of
       step 3 over the groups; with a single group, the MAD's asymptotic variance
       1.3605 s^2/n for independent Gaussian increments).
    2. With jumps, the whole increment law is fitted: the empirical characteristic
       function ``phi(xi) = mean cos(xi r)`` of the residuals satisfies
       ``-log phi(xi)/dt = eta_G xi^2 - char_exponent(xi; alpha, lam, eta_J)`` (THEORY.md §2),
       fitted by weighted least squares over a log grid of xi where 0.02 < phi < 0.995
       (a "stable fit", THEORY.md §8). This uses every increment, so the small jumps
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
    residuals : increments minus drift (1-d)
    dt : time step of each increment (1-d, or scalar); the fit uses the mean dt
    groups : optional labels of independent groups (same length)
    max_samples : the characteristic function uses at most this many residuals
        (a seeded random subset)
    mode : None (decide as in 1.), "jumps" (fit the characteristic function whatever the
        jump count) or "gauss" (eta_J = 0): a jackknife replicate uses the full fit's mode
    errors : False skips the jackknife (standard errors NaN; :func:`fit_sde` resamples
        whole neurons instead)
    start : (alpha, log lam) starting point of the characteristic-function fit

    Raises ValueError for threshold <= 2 or mismatched shapes.
    """
    r = np.asarray(residuals, dtype=float).ravel()
    dtv = np.broadcast_to(np.asarray(dt, dtype=float), r.shape).ravel()
    if threshold <= 2:
        raise ValueError(f"threshold must be > 2 (robust scales); got {threshold!r}")
    if groups is None:
        groups = np.arange(r.size) * 8 // max(r.size, 1)
    groups = np.asarray(groups).ravel()
    if groups.shape != r.shape:
        raise ValueError("groups must have one label per residual")
    none = _unavailable("no jumps detected")
    s = robust_scale(r, dtv)
    if r.size < 10 or not math.isfinite(s):
        u = _unavailable("too few increments")
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
    if mode not in (None, "jumps", "gauss"):
        raise ValueError(f"mode must be None, 'jumps' or 'gauss'; got {mode!r}")
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
            return NoiseEstimate(eg, _unavailable(few), _unavailable(few), _unavailable(few), k, expected, u,
                                 hill, "robust scale (MAD)", replicates=reps)
        # eta_J = 0 enters the prediction, but it is not measured to be 0 (a failure to reject): no error
        return NoiseEstimate(eg, Estimate(0.0, float("nan"), f"no jumps detected ({k} beyond {threshold:g} "
                                                             f"robust scales, {expected:.1f} expected from "
                                                             f"Gaussian noise)"),
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
    eg_flag = None if eg > 0 else "at the edge: eta_G_hat = 0 sits at its bound (the jumps absorb the Gaussian part)"
    return NoiseEstimate(_with_se(Estimate(eg), float(se[0]), eg_flag), Estimate(ej, float(se[1])),
                         _with_se(Estimate(al), float(se[2]), alpha_flag),
                         _with_se(Estimate(lm), float(se[3]), lam_flag),
                         k, expected, u, hill, method, "jumps", (lo_l, hi_l), loo, model_se)


def floor_se(se_jackknife, model_se, n_groups: int) -> np.ndarray:
    """The reported errors of the jump fit: the neuron jackknife, unless it is significantly smaller
    than the model-based asymptotic error for independent increments (:func:`ecf_model_se`), which
    then replaces it.

    Both estimate the same sampling spread when the increments are independent; within-neuron
    correlation only adds to it, which the jackknife sees. The G-group jackknife variance
    scatters like sigma^2 chi^2_(G-1)/(G-1), so a jackknife below ``sqrt(chi^2_(G-1), 2.5 % / (G-1))``
    times the model error (0.646 for G = 16) is too small at the 2.5 % level: where the data carry
    little information on alpha, the jackknife of a nonlinear fit comes out too small
    (docs/calibration.md). A plain maximum of the two would be biased upwards (measured: the
    standardized errors' sd 0.84 instead of 0.93). A NaN jackknife (a failed replicate) stays
    NaN; a NaN model error leaves the jackknife. Shapes: (4,) each; ``n_groups`` >= 2.
    """
    se = np.asarray(se_jackknife, dtype=float)
    m = np.asarray(model_se, dtype=float)
    q = math.sqrt(stats.chi2.ppf(0.025, n_groups - 1) / (n_groups - 1))
    return np.where(np.isfinite(se) & np.isfinite(m) & (se < q * m), m, se)


def spread(zeta) -> dict:
    """Spread of a time-scale spectrum: std and IQR of zeta, and the decades of tau
    = exp(-zeta) between the 1% and 99% quantiles. NaNs are ignored."""
    z = np.asarray(zeta, dtype=float)
    z = z[np.isfinite(z)]
    if z.size < 2:
        return {"std": float("nan"), "iqr": float("nan"), "decades": float("nan"), "n": int(z.size)}
    q = np.quantile(z, [0.01, 0.25, 0.75, 0.99])
    return {"std": float(z.std(ddof=1)), "iqr": float(q[2] - q[1]),
            "decades": float((q[3] - q[0]) / math.log(10)), "n": int(z.size)}


#: the fitted quantities resampled by the jackknife of :func:`fit_sde`, in this order
FIT_KEYS = ("kappa", "eta_g", "eta_j", "alpha", "lam")


@dataclass(frozen=True)
class SDEFit:
    """All estimates from one set of trajectories (see :func:`fit_sde`).

    ``replicates``: (G, 5) leave-one-neuron-group-out values of FIT_KEYS (NaN where a
    replicate could not be fitted; empty with fewer than 2 independent neurons).
    """

    drift: DriftEstimate
    noise: NoiseEstimate
    n_increments: int
    first_record: int
    notes: tuple = ()
    replicates: np.ndarray = field(default_factory=lambda: np.zeros((0, 5)))
    n_neurons: int = 0

    @property
    def kappa(self) -> Estimate:
        return self.drift.kappa

    def values(self) -> np.ndarray:
        """(5,) point values of FIT_KEYS (NaN where unavailable)."""
        n = self.noise
        return np.array([self.kappa.value, n.eta_g.value, n.eta_j.value, n.alpha.value, n.lam.value])


#: flags of estimates that the data do not identify: these get no standard error. A plateau
#: within 3 standard errors of 0 is among them: its interval reaches the boundary kappa = 0 of the
#: parameter space (log-scale error > 1/3), where the normal approximation of the jackknife fails
NOT_IDENTIFIED = ("at the edge", "plateau not reached", "not identified", "no significant plateau")


def _with_se(e: Estimate, se: float, flag=None) -> Estimate:
    """e with standard error se and flag; an estimate the data do not identify (NOT_IDENTIFIED:
    at the edge of its fitted range, or a plateau extrapolated beyond the data) gets no error:
    its replicates are pinned to a bound or wander along a ridge of the fit, and the jackknife,
    which assumes a smooth, asymptotically normal estimator inside its parameter space, means
    nothing there."""
    flag = flag if flag is not None else e.flag
    if flag and flag.startswith(NOT_IDENTIFIED):
        se = float("nan")
    return Estimate(e.value, se, flag) if e.ok else e


def _kappa_with_se(drift: DriftEstimate, loo, se_linear: float) -> Estimate:
    """kappa_hat with its jackknife error on the log scale (``log_se``; ``se = kappa_hat log_se``).

    Along the kappa-width ridge of the saturating fit the error of kappa_hat is multiplicative:
    a replicate or data set that fits a wider transition also extrapolates to a higher plateau,
    and the jackknife error grows with kappa_hat (docs/calibration.md). log kappa is the
    variance-stabilising scale, so the interval is ``kappa_hat exp(+-k log_se)``. When kappa_hat
    or a replicate is <= 0 the log is undefined and the plain (linear-scale) error is kept.
    """
    k = drift.kappa.value
    loo = np.asarray(loo, dtype=float)
    if k > 0 and loo.size >= 2 and np.all(np.isfinite(loo)) and np.all(loo > 0):
        s_log = jackknife_se(np.log(loo))
        e = _with_se(drift.kappa, k * s_log, kappa_flag(drift.form, k * s_log))
        return Estimate(e.value, e.se, e.flag, s_log) if math.isfinite(e.se) else e
    return _with_se(drift.kappa, se_linear, kappa_flag(drift.form, se_linear))


def fit_sde(zeta, step, *, late_fraction: float = 0.5, bins: int = 60, drift_fraction: float = 0.6,
            threshold: float = 4.0, min_jumps: int = 30, seed: int = 0, n_groups: int = 16) -> SDEFit:
    """Estimate kappa, eta_G, eta_J, alpha, lam from trajectories (THEORY.md §3, §8).

    Uses the last ``late_fraction`` of the records (the late part). The drift comes
    from the raw increments (:func:`estimate_drift`: binned, plateau from the fitted
    saturating form), the noise (:func:`estimate_noise`) from the drift residuals.

    Standard errors: delete-a-group jackknife over G = min(n_groups, neurons) groups of
    whole neurons (neuron q in group q mod G). Each replicate re-bins the drift without
    group g (the full fit's bins, left region and bin weights) and refits the saturating
    form by one Gauss-Newton step from the full fit (the linear jackknife of nonlinear
    regression, Fox, Hinkley & Larntz 1980; with estimated weights held fixed, as their
    variability is of second order, Carroll & Ruppert 1988 §2): a full refit lets a
    replicate slide along the kappa-width ridge of a weakly identified plateau, which
    inflates the jackknife variance and makes it heavy-tailed (docs/calibration.md). The
    noise is refitted without group g from the per-group characteristic-function sums of
    the full fit's residuals (the residuals' dependence on the replicate's drift is of
    second order and neglected); a noise error significantly below the fit's model-based
    asymptotic error is replaced by it (:func:`floor_se`). Estimates the data do not identify (NOT_IDENTIFIED: a
    plateau not reached, a width, alpha or lam at a bound, alpha with lam unresolved or
    eta_G at 0) get no standard error. Resampling whole
    neurons keeps each neuron's increments together, so the errors hold under
    within-neuron correlation in training time (ballistic drift, slow mixing) and for
    non-Gaussian increments (THEORY.md §8); a jackknife rather than a bootstrap because a
    replicate costs a nonlinear fit and its G - 1 degrees of freedom give t-like coverage
    (docs/calibration.md). A replicate that fails leaves that error NaN, with a note.

    Raises ValueError for bad shapes or too few increments (the message says which).
    """
    zeta = np.asarray(zeta, dtype=float)
    if not 0 < late_fraction <= 1:
        raise ValueError(f"late_fraction must be in (0, 1]; got {late_fraction!r}")
    if zeta.ndim != 2 or zeta.shape[0] < 3:
        raise ValueError(f"zeta must be 2-d with >= 3 records; got shape {zeta.shape}")
    first = int(zeta.shape[0] * (1 - late_fraction))
    first = min(first, zeta.shape[0] - 3)
    notes = []
    late = zeta[first:]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        across = np.nanmax(np.nanstd(late, axis=1)) if np.isfinite(late).any() else 0.0
    scale = 1.0 + float(np.nanmax(np.abs(late))) if np.isfinite(late).any() else 1.0
    if zeta.shape[1] > 1 and not across > 1e-9 * scale:
        # one shared zeta (e.g. SharedGate): the columns are copies, not independent neurons
        zeta = zeta[:, :1]
        notes.append("all neurons share one zeta: fitted as a single trajectory; no neuron resampling, "
                     "no standard errors")
    Q = zeta.shape[1]
    z, dz, dt, neuron = increments(zeta, step, first_record=first)
    drift = estimate_drift(z, dz, dt, bins=bins, drift_fraction=drift_fraction)
    resid = dz - drift(z) * dt
    lab = neuron_groups(Q, n_groups)[neuron] if Q >= 2 else None
    noise = estimate_noise(resid, dt, lab, threshold=threshold, min_jumps=min_jumps, seed=seed,
                           errors=Q >= 2)
    reps = np.zeros((0, 5))
    if Q >= 2 and drift.form:
        G = int(lab.max()) + 1
        reps = np.full((G, 5), np.nan)
        if noise.replicates.shape[0] == G:
            reps[:, 1:] = noise.replicates
        for g in range(G):
            keep = lab != g
            try:
                d = estimate_drift(z[keep], dz[keep], dt[keep], bins=bins, drift_fraction=drift_fraction,
                                   start=drift.form["x"], edges=drift.edges, z_cut=drift.form["z_cut"],
                                   one_step=True, bin_se=drift.form["bin_se"])
            except ValueError:
                continue
            reps[g, 0] = d.form.get("kappa", np.nan)
        se = [jackknife_se(reps[:, 0]), *floor_se([jackknife_se(reps[:, i]) for i in range(1, 5)], noise.model_se, G)]
        used = [0, 1] + ([2, 3, 4] if noise.mode == "jumps" else [])
        failed = int(np.sum(~np.all(np.isfinite(reps[:, used]), axis=1)))
        if failed:
            notes.append(f"{failed} of {G} jackknife replicates could not be fitted: errors unavailable")
        kappa = _kappa_with_se(drift, reps[:, 0], se[0])
        drift = DriftEstimate(drift.edges, drift.centers, drift.F, drift.se, drift.count, kappa, drift.form)
        if noise.mode == "jumps":
            a_flag, l_flag = edge_flags(noise.alpha.value, noise.lam.value, se[4], noise.log_lam_range,
                                        noise.eta_g.value, alpha_se=se[3], eta_j=noise.eta_j.value,
                                        eta_j_se=se[2])
            noise = NoiseEstimate(noise.eta_g, noise.eta_j, _with_se(noise.alpha, se[3], a_flag),
                                  _with_se(noise.lam, se[4], l_flag), noise.n_jumps, noise.n_gauss_expected,
                                  noise.u, noise.hill, noise.method.replace("groups", "neuron groups"),
                                  noise.mode, noise.log_lam_range, noise.replicates, noise.model_se)
    return SDEFit(drift=drift, noise=noise, n_increments=int(z.size), first_record=first, notes=tuple(notes),
                  replicates=reps, n_neurons=Q)


@dataclass(frozen=True)
class Prediction:
    """beta*, eta_J* and the phase from fitted parameters, with jackknife errors."""

    beta: Estimate
    eta_j_star: Estimate
    phase: str
    phase_probabilities: dict
    tail_rate: float
    params: dict


def _model_params(v, has_jumps):
    """(eta_j, eta_g, kappa, alpha, lam) arrays for classify from rows of FIT_KEYS values."""
    v = np.atleast_2d(v)
    k, g = v[:, 0], np.maximum(v[:, 1], 0.0)
    if has_jumps:
        return (np.maximum(v[:, 2], 0.0), g, k, np.clip(v[:, 3], 0.02, 1.98), np.maximum(v[:, 4], 0.0))
    # no jumps: tempering is irrelevant; a lam beyond kappa/eta_G keeps the Gaussian root admissible
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(g > 0, np.maximum(1.0, 2 * np.abs(k) / np.where(g > 0, g, 1.0)), 1.0)
    return np.zeros_like(k), g, k, np.full_like(k, 1.5), lam


def floored_replicates(replicates, model_se) -> np.ndarray:
    """(G, 5) jackknife replicates of FIT_KEYS whose noise columns have the errors that
    :func:`floor_se` reports: where the model-based error replaces the jackknife, the column's
    deviations from the replicates' mean are scaled up to it (``model_se``: (4,) for eta_g,
    eta_j, alpha, lam). Correlations between the parameters are kept. A column with NaN or zero
    spread is left as it is."""
    reps = np.array(replicates, dtype=float, copy=True)
    G = reps.shape[0]
    if G < 2:
        return reps
    jk = np.array([jackknife_se(reps[:, i]) for i in range(1, 5)])
    target = floor_se(jk, model_se, G)
    for i in range(1, 5):
        if math.isfinite(jk[i - 1]) and 0 < jk[i - 1] < target[i - 1]:
            mean = reps[:, i].mean()
            reps[:, i] = mean + (reps[:, i] - mean) * (target[i - 1] / jk[i - 1])
    return reps


def predict(fit: SDEFit, *, n_boot: int = 400, seed: int = 0) -> Prediction:
    """Phase and beta* of the fitted SDE (THEORY.md §4, §8), errors from the neuron jackknife.

    beta*'s standard error is the jackknife over the fit's neuron-group replicates
    (each replicate's parameters give its own beta*); NaN, with a flag, when replicates
    disagree on whether a root exists (near the threshold). The phase probabilities
    are the fractions of ``n_boot`` draws of the five parameters from a normal law
    with the jackknife covariance (correlations between the parameters kept), clipped
    to their ranges. Both use the replicates of :func:`floored_replicates`, whose spread
    matches the reported errors of the jump fit. Without jumps eta_J = 0 (alpha, lam irrelevant). An unavailable
    or non-significant kappa, or an unavailable eta_G, gives an unavailable prediction.
    """
    from .theory import classify

    k, j = fit.kappa, fit.noise
    g = j.eta_g
    if not (k.ok and k.value > 0) or (k.flag or "").startswith(("no significant plateau", "no plateau")):
        reason = "no prediction: " + (k.flag or "kappa unavailable")
        return Prediction(_unavailable(reason), _unavailable(reason), "unavailable", {}, float("nan"), {})
    if not g.ok:
        return Prediction(_unavailable("no prediction: eta_G unavailable"), _unavailable("eta_G unavailable"),
                          "unavailable", {}, float("nan"), {})
    has_jumps = j.mode == "jumps" and j.alpha.ok and j.eta_j.ok and j.eta_j.value > 0
    v = fit.values()
    ej, eg, kk, al, lm = _model_params(v, has_jumps)
    r = classify(ej[0], eg[0], kk[0], al[0], lm[0])
    p = {"kappa": float(kk[0]), "eta_g": float(eg[0]), "eta_j": float(ej[0]), "alpha": float(al[0]),
         "lam": float(lm[0])}
    reps = floored_replicates(fit.replicates, fit.noise.model_se)
    b_se = s_se = float("nan")
    flag = None
    probs = {}
    if reps.shape[0] >= 2 and np.all(np.isfinite(reps[:, :2])) and (not has_jumps or np.all(np.isfinite(reps))):
        if np.all(reps[:, 0] > 0):
            rr = classify(*_model_params(reps, has_jumps))
            b_se = jackknife_se(rr.beta_star) if np.isfinite(r.beta_star) else float("nan")
            s_se = jackknife_se(rr.eta_j_star) if np.isfinite(r.eta_j_star) else float("nan")
            if np.isfinite(r.beta_star) and not np.all(np.isfinite(rr.beta_star)):
                flag = "near the threshold: some neuron-group replicates have no admissible root (no error)"
        else:
            flag = "some neuron-group replicates have no restoring plateau (kappa <= 0): no error"
        G = reps.shape[0]
        dev = reps - reps.mean(axis=0)
        cov = (G - 1) / G * dev.T @ dev
        cols = [0, 1] + ([2, 3, 4] if has_jumps else [])
        rng = np.random.default_rng(seed)
        draws = np.tile(v, (int(n_boot), 1))
        # cov = dev^T dev is positive semi-definite by construction; the columns' scales differ by
        # orders of magnitude, so numpy's tolerance check can misfire on round-off: skip it
        draws[:, cols] = rng.multivariate_normal(v[cols], cov[np.ix_(cols, cols)], size=int(n_boot),
                                                 method="eigh", check_valid="ignore")
        keep = draws[:, 0] > 1e-12             # a draw without a restoring plateau has no phase
        with warnings.catch_warnings():        # draws with lam clipped to 0 warn about alpha <= 1
            warnings.simplefilter("ignore", RuntimeWarning)
            rb = classify(*_model_params(draws[keep], has_jumps))
        probs = {str(ph): float(np.sum(rb.phase == ph) / n_boot) for ph in np.unique(rb.phase)}
        if not keep.all():
            probs["no plateau"] = float(1 - keep.mean())
    beta = Estimate(float(r.beta_star), b_se, flag) if np.isfinite(r.beta_star) else \
        _unavailable(f"no admissible root: {r.phase}")
    star = Estimate(float(r.eta_j_star), s_se) if np.isfinite(r.eta_j_star) else _unavailable("lam = 0")
    return Prediction(beta, star, str(r.phase), probs, float(r.tail_rate), p)


def resolved_lag_max(zeta, *, min_neurons: int = 10) -> float:
    """Largest envelope lag that a recorded time-scale spectrum supports (issue 11; THEORY.md §5).

    Rule: ``l_max = tau_(k) = exp(-zeta_(k))``, the k-th longest time scale of the
    spectrum, ``k = min(min_neurons, number of finite zeta)``. Beyond it the envelope
    ``f(l) = mean_q exp(-l e^zeta_q)`` is carried by fewer than k neurons: a sum of a
    few exponentials whose log-log slope steepens without bound, so any decay-class or
    slope fit there reads "exponential" by construction (THEORY.md §5: bounded time
    scales give f ~ exp(-l/tau_max)). ``zeta``: any shape (NaN ignored), e.g. the last
    record (H,). Raises ValueError when no zeta is finite, min_neurons < 1, or that time scale
    exceeds the largest double (zeta < -709.78).
    """
    z = np.asarray(zeta, dtype=float).ravel()
    z = np.sort(z[np.isfinite(z)])
    if z.size == 0:
        raise ValueError("zeta has no finite value: no time scale to bound the lags")
    if int(min_neurons) != min_neurons or min_neurons < 1:
        raise ValueError(f"min_neurons must be an integer >= 1; got {min_neurons!r}")
    k = min(int(min_neurons), z.size)
    if -z[k - 1] > _LOG_DOUBLE_MAX:
        raise ValueError(f"the time scale exp(-zeta) of the {k}-th slowest neuron, exp({-z[k - 1]:.4g}), exceeds "
                         f"the largest double: no envelope lag range (zeta must be >= -709.78)")
    return float(math.exp(-z[k - 1]))


#: log of the largest double: tau = exp(-zeta) overflows for zeta < -709.78
_LOG_DOUBLE_MAX = math.log(np.finfo(float).max)
