"""Fit the SDE of THEORY.md §3 to empirical zeta trajectories (THEORY.md §8).

Input: ``zeta`` (records x neurons) and ``step`` (records), e.g. from a run file
of ``levysde train`` or the thinned trajectories of a simulation. Increments over
one record, ``dZ = zeta[r+1] - zeta[r]`` over ``dt = step[r+1] - step[r]``, give

* the drift ``F_hat(z) = E[dZ | Z = z]/dt`` in equal-count bins of z, with
  standard errors, and the far-left plateau ``kappa_hat`` (inverse-variance mean
  of F_hat over the bins holding the lowest ``left_fraction`` of the mass);
* the noise: a robust scale ``s = 1.4826 MAD(r/sqrt(dt))`` of the drift residuals
  r = dZ - F_hat(Z) dt; jumps are residuals beyond ``threshold * s sqrt(dt)``. When
  they are in significant excess over the Gaussian expectation, (eta_G, eta_J,
  alpha, lam) are fitted jointly to the empirical characteristic function of the
  residuals, ``-log E cos(xi r)/dt = eta_G xi^2 - char_exponent(xi)`` (a stable fit,
  THEORY.md §2, §8); otherwise eta_J = 0 and eta_G = s^2/2. A Hill scan of the
  jump sizes is reported as a diagnostic;
* the left-tail rate of the pooled zeta of the late records (Hill/MLE, jackknifed
  over neuron groups) and the envelope exponent (the Tauberian module);
* the spread of the spectrum (std, IQR, decades of tau covered).

Every estimate is an :class:`Estimate` carrying a standard error, or a flag
saying why it is unavailable. Pure numpy/scipy; no torch.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, stats

from .tails import hill_index


__all__ = ["Estimate", "DriftEstimate", "NoiseEstimate", "SDEFit", "increments", "estimate_drift",
           "robust_scale", "estimate_noise", "spread", "fit_sde", "predict", "Prediction"]

_MAD_TO_SIGMA = 1.4826022185056018      # 1/Phi^-1(3/4)
_MAD_VAR = 1.3605                       # n Var(sigma_MAD)/sigma^2 for Gaussian data (efficiency 0.3675)


@dataclass(frozen=True)
class Estimate:
    """A scalar estimate: value and standard error, or a flag saying why it is unavailable.

    ``value`` is NaN and ``flag`` a reason when unavailable; ``flag`` may also be a
    caveat on an available value (``ok`` is then still True).
    """

    value: float
    se: float = float("nan")
    flag: str | None = None

    @property
    def ok(self) -> bool:
        return math.isfinite(self.value)

    def as_json(self, name: str) -> dict:
        """``{name: value, name_se: se, name_flag: flag}`` with None for NaN."""
        def num(v):
            return float(v) if math.isfinite(v) else None
        out = {name: num(self.value), f"{name}_se": num(self.se)}
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


@dataclass(frozen=True)
class DriftEstimate:
    """Binned drift F_hat(z) = E[dZ | Z = z]/dt with errors, and the far-left plateau.

    Attributes
    ----------
    edges : (B+1,) bin edges in z (equal-count bins)
    centers : (B,) mean z in each bin
    F : (B,) mean dZ/dt per bin
    se : (B,) standard errors (std/sqrt(n))
    count : (B,) increments per bin
    kappa : Estimate of the plateau kappa_hat (flagged when no plateau is seen)
    """

    edges: np.ndarray
    centers: np.ndarray
    F: np.ndarray
    se: np.ndarray
    count: np.ndarray
    kappa: Estimate

    def __call__(self, z):
        """F_hat by linear interpolation between bin centres, constant beyond (0 without bins)."""
        if self.centers.size == 0:
            return np.zeros(np.shape(z))
        return np.interp(z, self.centers, self.F)


def estimate_drift(z, dz, dt, *, bins: int = 60, left_fraction: float = 0.05,
                   min_count: int = 20) -> DriftEstimate:
    """Binned drift and plateau (THEORY.md §8) from increment pairs (see :func:`increments`).

    ``kappa_hat`` is the inverse-variance weighted mean of F_hat over the bins
    holding the lowest ``left_fraction`` of the z mass (at least 2 bins). Flags:
    "no plateau: ..." when fewer than 2 such bins have ``min_count`` increments,
    when kappa_hat <= 0 (no restoring drift from the left), or (a caveat) when
    F_hat still rises significantly toward the left across those bins (slope
    more than 3 standard errors), i.e. the data do not reach the plateau.

    Raises ValueError for fewer than ``2 * min_count`` increments or bad options.
    """
    z = np.asarray(z, dtype=float)
    v = np.asarray(dz, dtype=float) / np.asarray(dt, dtype=float)
    if int(bins) != bins or bins < 3:
        raise ValueError(f"bins must be an integer >= 3; got {bins!r}")
    if not 0 < left_fraction < 1:
        raise ValueError(f"left_fraction must be in (0, 1); got {left_fraction!r}")
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
    edges = np.unique(np.quantile(z, np.linspace(0, 1, int(bins) + 1)))
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
    good = count >= min_count
    if good.sum() < 3:
        raise ValueError("too few populated drift bins: zeta takes too few distinct values")
    centers, F, se, count_g = centers[good], F[good], se[good], count[good]
    n_left = max(2, int(round(left_fraction * nb)))
    left = np.arange(centers.size) < n_left
    if left.sum() < 2 or np.any(se[left] <= 0):
        kappa = _unavailable("no plateau: fewer than 2 populated bins on the far left")
    else:
        w = 1.0 / se[left] ** 2
        k = float(np.sum(w * F[left]) / w.sum())
        k_se = float(1.0 / math.sqrt(w.sum()))
        flag = None
        if k <= 0:
            flag = "no plateau: the drift on the far left is not restoring (kappa_hat <= 0)"
        elif k < 3 * k_se:
            flag = f"no significant plateau: kappa_hat = {k:.3g} +- {k_se:.2g} is within 3 standard errors of 0"
        elif left.sum() >= 3:
            X = np.vstack([np.ones(left.sum()), centers[left]]).T
            W = np.diag(w)
            cov = np.linalg.inv(X.T @ W @ X)
            slope = float((cov @ X.T @ W @ F[left])[1])
            if slope < -3 * math.sqrt(cov[1, 1]):
                flag = (f"caveat: F_hat still rises toward the left (slope {slope:.3g} +- "
                        f"{math.sqrt(cov[1, 1]):.2g}); the data may not reach the plateau")
        kappa = Estimate(k, k_se, flag)
    return DriftEstimate(edges=edges, centers=centers, F=F, se=se, count=count_g, kappa=kappa)


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


def _ecf_fit(cos_g, cos2_g, n_g, xi, dt, start=None):
    """Weighted least squares of -log(ECF)/dt = eta_G xi^2 - char_exponent(xi) (THEORY.md §2, §8).

    ``cos_g``: (G, K) per-group sums of cos(xi r), ``cos2_g`` the same at 2 xi, ``n_g``: (G,)
    counts. Linear in (eta_G, eta_J) for fixed (alpha, lam): those are profiled out by
    non-negative least squares; (alpha, log lam) by Nelder-Mead from a small grid.
    Returns (eta_g, eta_j, alpha, lam, objective).
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
        if not (0.05 <= a <= 1.95) or not (lo_l <= ll <= hi_l):
            return np.inf
        X = np.column_stack([xi * xi, -np.asarray(char_exponent(xi, alpha=a, lam=math.exp(ll)))])
        coef, rnorm = optimize.nnls(X * sw[:, None], y * sw)
        return (coef, rnorm ** 2) if full else rnorm ** 2

    starts = [start] if start is not None else \
        [(a, ll) for a in (0.5, 1.0, 1.5) for ll in np.linspace(math.log(xi[0]), math.log(xi[-1]), 3)]
    best = None
    for s0 in starts:
        res = optimize.minimize(profile, x0=np.asarray(s0, dtype=float), method="Nelder-Mead",
                                options={"xatol": 1e-6, "fatol": 1e-10, "maxiter": 2000})
        if best is None or res.fun < best.fun:
            best = res
    (eg, ej), obj = profile(best.x, full=True)
    return float(eg), float(ej), float(best.x[0]), float(math.exp(best.x[1])), float(obj), (lo_l, hi_l)


def estimate_noise(residuals, dt, groups=None, *, threshold: float = 4.0, min_jumps: int = 30,
                   max_samples: int = 2_000_000, n_xi: int = 40, seed: int = 0) -> NoiseEstimate:
    """Gaussian part, jump detection and the CTS jump parameters (THEORY.md §8).

    1. Robust scale s = 1.4826 MAD(r/sqrt(dt)); jumps are residuals beyond
       ``threshold * s * sqrt(dt)``. Fewer than ``min_jumps`` of them, or no
       significant excess (5 sigma) over the Gaussian expectation, reports "no
       jumps detected": eta_J = 0 and eta_G = s^2/2 (standard error from the
       MAD's asymptotic variance 1.3605 s^2/n).
    2. With jumps, the whole increment law is fitted: the empirical characteristic
       function ``phi(xi) = mean cos(xi r)`` of the residuals satisfies
       ``-log phi(xi)/dt = eta_G xi^2 - char_exponent(xi; alpha, lam, eta_J)`` (THEORY.md §2),
       fitted by weighted least squares over a log grid of xi where 0.02 < phi < 0.995
       (a "stable fit", THEORY.md §8). This uses every increment, so the small jumps
       that sit inside the Gaussian core and the Gaussian smearing of the big ones
       bias nothing, unlike a fit of the sizes beyond a threshold. The Hill scan of
       the detected jump sizes is reported as a diagnostic.
    3. Standard errors: jackknife over the ``groups`` (e.g. neurons, which are
       independent), or over 8 contiguous blocks when no groups are given.
       lam is flagged "untempered/unresolved" when lam_hat < 2 se or it sits at the
       lower end of the fitted range (the cut-off is not seen in the data).

    Parameters
    ----------
    residuals : increments minus drift (1-d)
    dt : time step of each increment (1-d, or scalar); the fit uses the mean dt
    groups : optional labels of independent groups (same length)
    max_samples : the characteristic function uses at most this many residuals
        (a seeded random subset)

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
    if k < min_jumps or not excess:
        eg = Estimate(s * s / 2, s * s * math.sqrt(_MAD_VAR / r.size))
        if excess:
            few = f"too few jumps to fit ({k} beyond {threshold:g} robust scales; {min_jumps} needed)"
            return NoiseEstimate(eg, _unavailable(few), _unavailable(few), _unavailable(few), k, expected, u,
                                 hill, "robust scale (MAD)")
        return NoiseEstimate(eg, Estimate(0.0, 0.0, f"no jumps detected ({k} beyond {threshold:g} robust "
                                                    f"scales, {expected:.1f} expected from Gaussian noise)"),
                             none, none, k, expected, u, hill, "robust scale (MAD)")
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
    eg, ej, al, lm, _, (lo_l, hi_l) = _ecf_fit(cos_g, cos2_g, n_g, xi, dt_mean)
    if G >= 2:
        loo = []
        for g in range(G):
            keep = np.arange(G) != g
            loo.append(_ecf_fit(cos_g[keep], cos2_g[keep], n_g[keep], xi, dt_mean,
                                start=(al, math.log(max(lm, 1e-300))))[:4])
        loo = np.array(loo)
        se = np.sqrt((G - 1) / G * ((loo - loo.mean(axis=0)) ** 2).sum(axis=0))
    else:
        se = np.full(4, np.nan)
    lam_flag = None
    if not (lm > 2 * se[3]) or math.log(max(lm, 1e-300)) <= lo_l + 1e-3:
        lam_flag = "untempered/unresolved: the exponential cut-off of the jumps is not identifiable"
    elif math.log(lm) >= hi_l - 1e-3:
        lam_flag = "unresolved: lam_hat sits at the upper end of the fitted range (cut-off below the data's scales)"
    alpha_flag = None
    if al <= 0.05 + 1e-6 or al >= 1.95 - 1e-6:
        alpha_flag = "unresolved: alpha_hat sits at the edge of the fitted range (0.05, 1.95)"
    method = f"empirical characteristic function, {rs.size} increments, jackknife over {G} groups"
    return NoiseEstimate(Estimate(eg, float(se[0])), Estimate(ej, float(se[1])),
                         Estimate(al, float(se[2]), alpha_flag), Estimate(lm, float(se[3]), lam_flag),
                         k, expected, u, hill, method)


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


@dataclass(frozen=True)
class SDEFit:
    """All estimates from one set of trajectories (see :func:`fit_sde`)."""

    drift: DriftEstimate
    noise: NoiseEstimate
    n_increments: int
    first_record: int
    notes: tuple = ()

    @property
    def kappa(self) -> Estimate:
        return self.drift.kappa


def fit_sde(zeta, step, *, late_fraction: float = 0.5, bins: int = 60, left_fraction: float = 0.05,
            threshold: float = 4.0, min_jumps: int = 30, seed: int = 0) -> SDEFit:
    """Estimate kappa, eta_G, eta_J, alpha, lam from trajectories (THEORY.md §8).

    Uses the last ``late_fraction`` of the records (the late, stationary part).
    Two passes: the drift from the raw increments, then the noise
    (:func:`estimate_noise`) from the drift residuals, with neurons (columns) as
    the independent groups of the jackknife (8 groups).

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
    groups_by_neuron = True
    if zeta.shape[1] > 1 and not across > 1e-9 * scale:
        # one shared zeta (e.g. SharedGate): the columns are copies, not independent neurons
        zeta = zeta[:, :1]
        groups_by_neuron = False
        notes.append("all neurons share one zeta: fitted as a single trajectory; errors by time blocks")
    z, dz, dt, neuron = increments(zeta, step, first_record=first)
    drift = estimate_drift(z, dz, dt, bins=bins, left_fraction=left_fraction)
    resid = dz - drift(z) * dt
    groups = neuron % 8 if (groups_by_neuron and zeta.shape[1] >= 8) else None
    noise = estimate_noise(resid, dt, groups, threshold=threshold, min_jumps=min_jumps, seed=seed)
    return SDEFit(drift=drift, noise=noise, n_increments=int(z.size), first_record=first, notes=tuple(notes))


@dataclass(frozen=True)
class Prediction:
    """beta*, eta_J* and the phase from fitted parameters, with bootstrap errors."""

    beta: Estimate
    eta_j_star: Estimate
    phase: str
    phase_probabilities: dict
    tail_rate: float
    params: dict


def predict(fit: SDEFit, *, n_boot: int = 400, seed: int = 0) -> Prediction:
    """Phase and beta* of the fitted SDE, errors by parametric bootstrap (THEORY.md §4, §8).

    Each bootstrap draw perturbs (kappa, eta_G, eta_J, alpha, lam) by independent
    normals with the estimates' standard errors, clipped to their allowed ranges;
    beta*'s error is the standard deviation over the draws that have a root, and
    the phase probabilities are the fractions of draws in each phase.
    Without jumps, eta_J = 0 (alpha, lam irrelevant: alpha = 1.5, lam = inf-like
    large value). Unavailable kappa or eta_G gives an unavailable prediction.
    """
    from .theory import classify

    k, j = fit.kappa, fit.noise
    g = j.eta_g
    if not (k.ok and k.value > 0) or (k.flag or "").startswith("no significant plateau"):
        reason = "no prediction: " + (k.flag or "kappa unavailable")
        return Prediction(_unavailable(reason), _unavailable(reason), "unavailable", {}, float("nan"), {})
    if not g.ok:
        return Prediction(_unavailable("no prediction: eta_G unavailable"), _unavailable("eta_G unavailable"),
                          "unavailable", {}, float("nan"), {})
    has_jumps = j.alpha.ok and j.eta_j.ok and j.eta_j.value > 0
    p = {"kappa": k.value, "eta_g": g.value, "eta_j": j.eta_j.value if has_jumps else 0.0,
         "alpha": j.alpha.value if has_jumps else 1.5, "lam": j.lam.value if has_jumps else 0.0}
    # no jumps: tempering is irrelevant; use a lam beyond kappa/eta_G so the Gaussian root is admissible
    if not has_jumps:
        p["lam"] = max(1.0, 2 * k.value / g.value) if g.value > 0 else 1.0
    r = classify(p["eta_j"], p["eta_g"], p["kappa"], p["alpha"], p["lam"])
    rng = np.random.default_rng(seed)

    def draw(e: Estimate, lo, hi, size):
        se = e.se if (e.ok and math.isfinite(e.se)) else 0.0
        return np.clip(e.value + se * rng.standard_normal(size), lo, hi)

    n = int(n_boot)
    kb = draw(k, -np.inf, np.inf, n)
    gb = draw(g, 0.0, np.inf, n)
    if has_jumps:
        jb = draw(j.eta_j, 0.0, np.inf, n)
        ab = draw(j.alpha, 0.02, 1.98, n)
        lb = draw(j.lam, 0.0, np.inf, n) if j.lam.ok else np.zeros(n)
    else:
        jb, ab, lb = np.zeros(n), np.full(n, 1.5), np.full(n, p["lam"])
    keep = kb > 1e-12                    # a draw without a restoring plateau has no phase
    rb = classify(jb[keep], gb[keep], kb[keep], ab[keep], lb[keep])
    probs = {str(ph): float(np.sum(rb.phase == ph) / n) for ph in np.unique(rb.phase)}
    if not keep.all():
        probs["no plateau"] = float(1 - keep.mean())
    fin = np.isfinite(rb.beta_star)
    b_se = float(np.std(rb.beta_star[fin], ddof=1)) if fin.sum() > 1 else float("nan")
    s_fin = np.isfinite(rb.eta_j_star)
    s_se = float(np.std(rb.eta_j_star[s_fin], ddof=1)) if s_fin.sum() > 1 else float("nan")
    beta = Estimate(float(r.beta_star), b_se) if np.isfinite(r.beta_star) else \
        _unavailable(f"no admissible root: {r.phase}")
    star = Estimate(float(r.eta_j_star), s_se) if np.isfinite(r.eta_j_star) else _unavailable("lam = 0")
    return Prediction(beta, star, str(r.phase), probs, float(r.tail_rate), p)
