"""Fit the SDE of THEORY.md §3 to empirical zeta trajectories (THEORY.md §8).

Input: ``zeta`` (records x neurons) and ``step`` (records), e.g. from a run file
of ``levysde train`` or the thinned trajectories of a simulation. Increments over
one record, ``dZ = zeta[r+1] - zeta[r]`` over ``dt = step[r+1] - step[r]``, give

* the drift ``F_hat(z) = E[dZ | Z = z]/dt`` in equal-count bins of z, with
  standard errors, and the far-left plateau ``kappa_hat`` (inverse-variance mean
  of F_hat over the bins holding the lowest ``left_fraction`` of the mass);
* the Gaussian part ``eta_G_hat = s^2/2`` from the robust scale
  ``s = 1.4826 MAD(r/sqrt(dt))`` of the drift residuals r = dZ - F_hat(Z) dt;
* jumps: residuals beyond ``threshold * s sqrt(dt)``. Their sizes z > u are
  fitted by maximum likelihood to the CTS jump-size law
  ``p(z) proportional to exp(-lam z) z^(-1-alpha)`` on (u, inf) (alpha and lam jointly;
  the normaliser is ``Lambda_u/(2 c_alpha)`` of :func:`levysde.simulate.big_jump_rate`),
  giving ``alpha_hat``, ``lam_hat`` (flagged "untempered/unresolved" when the
  cut-off is not identifiable) and, from the jump count, ``eta_J_hat =
  k / (T Lambda_u(alpha_hat, lam_hat, eta_J = 1))``; a Hill scan of alpha is
  reported alongside;
* the left-tail rate of the pooled zeta of the late records (Hill/MLE, jackknifed
  over neuron groups) and the envelope exponent (the Tauberian module);
* the spread of the spectrum (std, IQR, decades of tau covered).

Every estimate is an :class:`Estimate` carrying a standard error, or a flag
saying why it is unavailable. Pure numpy/scipy; no torch.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, stats

from .levy import c_alpha

__all__ = ["Estimate", "DriftEstimate", "JumpEstimate", "SDEFit", "increments", "estimate_drift",
           "robust_scale", "estimate_gaussian", "estimate_jumps", "spread", "fit_sde", "predict", "Prediction"]

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
        """F_hat by linear interpolation between bin centres, constant beyond."""
        return np.interp(z, self.centers, self.F)


def estimate_drift(z, dz, dt, *, bins: int = 24, left_fraction: float = 0.25,
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


def estimate_gaussian(residuals, dt, *, u=None, jumps=None) -> Estimate:
    """Gaussian intensity eta_G_hat (THEORY.md §8).

    Without a jump fit: ``eta_G_hat = s^2/2`` with s the robust scale
    (:func:`robust_scale`); standard error from the MAD's asymptotic variance for
    Gaussian data (``Var(s) = 1.3605 s^2/n``).

    With a jump fit (``jumps``, a :class:`JumpEstimate` with threshold ``u``): the
    increments with ``|r| <= u`` carry the Gaussian part plus the jumps smaller
    than u, whose variance per unit time sigma_u^2 (THEORY.md §7, order 2 - alpha)
    follows from the fitted (alpha, lam, eta_J). Then
    ``eta_G_hat = (E[r^2; |r| <= u]/(dt P_G(|r| <= u)) - sigma_u^2)/2``, where the
    truncated Gaussian second moment is corrected iteratively. A non-positive
    value is reported as 0 with a flag (the small jumps explain all the
    small-scale variance). Standard error by the delta method on the truncated
    second moment (the jump-fit uncertainty is left to the bootstrap of
    :func:`predict`).
    """
    r = np.asarray(residuals, dtype=float).ravel()
    dtv = np.broadcast_to(np.asarray(dt, dtype=float), np.shape(residuals)).ravel()
    if r.size < 10:
        return _unavailable("too few increments for a robust scale")
    s = robust_scale(r, dtv)
    if s == 0:
        return Estimate(0.0, 0.0, "zeta does not move between records (zero robust scale)")
    if jumps is None or not jumps.alpha.ok or u is None:
        se_s = s * math.sqrt(_MAD_VAR / r.size)
        return Estimate(s * s / 2, s * se_s)
    from .simulate import small_jump_variance

    sig_u2 = small_jump_variance(u, alpha=jumps.alpha.value, lam=max(jumps.lam.value, 0.0),
                                 eta_j=jumps.eta_j.value)
    inside = np.abs(r) <= u
    m2 = r[inside] ** 2 / dtv[inside]
    raw = float(m2.mean())
    se_raw = float(m2.std(ddof=1) / math.sqrt(m2.size))
    # truncation at u removes a little Gaussian mass: fixed point of the truncated moment
    var = raw
    for _ in range(20):
        c = u / math.sqrt(var * float(np.mean(dtv))) if var > 0 else np.inf
        frac = 1.0 - 2.0 * c * stats.norm.pdf(c) / (2.0 * stats.norm.cdf(c) - 1.0) if np.isfinite(c) else 1.0
        var = raw / frac
    eta = (var - sig_u2) / 2.0
    if eta <= 0:
        return Estimate(0.0, se_raw / 2, "Gaussian part not resolved: the jumps below the threshold "
                                         "explain all the small-scale variance")
    return Estimate(eta, se_raw / 2)


@dataclass(frozen=True)
class JumpEstimate:
    """Jump part: detected jumps and the fitted CTS jump law (THEORY.md §8).

    Attributes
    ----------
    n_jumps : residuals beyond the threshold
    n_gauss_expected : count expected from the Gaussian part alone
    u : size threshold (units of zeta)
    alpha, lam, eta_j : Estimates
    hill : list of (u, alpha_hat, se, k): Hill estimates of alpha over a threshold scan
    """

    n_jumps: int
    n_gauss_expected: float
    u: float
    alpha: Estimate
    lam: Estimate
    eta_j: Estimate
    hill: list = field(default_factory=list)


def _tail_norm(u, alpha, lam):
    """int_u^inf exp(-lam z) z^(-1-alpha) dz = Lambda_u/(2 eta_J c_alpha) (THEORY.md §7)."""
    from .simulate import big_jump_rate

    return big_jump_rate(u, alpha=alpha, lam=lam, eta_j=1.0) / (2.0 * float(c_alpha(alpha)))


def _jump_nll(params, z, u):
    a, lam = params
    if not (0 < a < 2) or lam < 0:
        return np.inf
    norm = _tail_norm(u, a, lam)
    if not norm > 0:
        return np.inf
    return float(lam * z.sum() + (1 + a) * np.log(z).sum() + z.size * math.log(norm))


def _hessian(f, x, h):
    x = np.asarray(x, dtype=float)
    n = x.size
    H = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            ei = np.eye(n)[i] * h[i]
            ej = np.eye(n)[j] * h[j]
            H[i, j] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (4 * h[i] * h[j])
    return H


def estimate_jumps(residuals, dt, scale, *, threshold: float = 4.0, min_jumps: int = 30) -> JumpEstimate:
    """Detect jumps beyond ``threshold * scale * sqrt(dt)`` and fit alpha, lam, eta_J (THEORY.md §8).

    Parameters
    ----------
    residuals : increments minus drift, any shape
    dt : matching time steps (or a scalar)
    scale : robust Gaussian scale s per unit sqrt(time) (:func:`robust_scale`)
    threshold : in units of the Gaussian scale (> 2)
    min_jumps : fewer detected jumps than this (or no significant excess over the
        Gaussian expectation) reports "no jumps detected" with eta_J_hat = 0.

    The jump sizes are |residual| (the increment is dominated by the jump when a
    jump occurs, dt small). lam is flagged "untempered/unresolved" when the MLE
    sits at 0 or is within 2 standard errors of 0, or when lam_hat * max|z| < 1
    (the cut-off is not seen in the data).
    """
    r = np.abs(np.asarray(residuals, dtype=float)).ravel()
    dtv = np.broadcast_to(np.asarray(dt, dtype=float), np.shape(residuals)).ravel()
    if threshold <= 2:
        raise ValueError(f"threshold must be > 2 (Gaussian scales); got {threshold!r}")
    T = float(dtv.sum())
    none = _unavailable("no jumps detected")
    if not (scale > 0):
        return JumpEstimate(0, 0.0, float("nan"), none, none, Estimate(0.0, 0.0, "no jumps detected"))
    ucut = threshold * scale * np.sqrt(dtv)
    jump = r > ucut
    k = int(jump.sum())
    expected = float(r.size * 2 * stats.norm.sf(threshold))
    # a single size threshold for the fit (dt is normally constant)
    u = float(np.max(ucut[jump])) if k else float(np.median(ucut))
    zj = r[jump & (r > u)] if k else r[:0]
    if k < min_jumps or k < expected + 5 * math.sqrt(max(expected, 1.0)):
        return JumpEstimate(k, expected, u, none, none,
                            Estimate(0.0, 0.0, f"no jumps detected ({k} beyond {threshold:g} scales, "
                                               f"{expected:.1f} expected from Gaussian noise)"))
    # Hill scan of alpha over thresholds u_i >= u
    hill = []
    zs = np.sort(zj)[::-1]
    for q in (1.0, 1.5, 2.0, 3.0):
        uu = u * q
        ex = zs[zs > uu]
        if ex.size >= 10:
            a_h = ex.size / float(np.log(ex / uu).sum())
            hill.append((uu, a_h, a_h / math.sqrt(ex.size), int(ex.size)))
    # joint MLE of (alpha, lam)
    a0 = min(max(hill[0][1] if hill else 1.0, 0.1), 1.9)
    best = None
    for lam0 in (0.0, 0.5 / float(np.mean(zj)), 2.0 / float(np.mean(zj))):
        res = optimize.minimize(_jump_nll, x0=[a0, lam0], args=(zj, u), method="L-BFGS-B",
                                bounds=[(0.02, 1.98), (0.0, 50.0 / u)])
        if best is None or res.fun < best.fun:
            best = res
    a_hat, lam_hat = (float(v) for v in best.x)
    try:
        H = _hessian(lambda p: _jump_nll(p, zj, u), [a_hat, max(lam_hat, 1e-3 / u)],
                     [1e-3, max(1e-3 * lam_hat, 1e-4 / u)])
        cov = np.linalg.inv(H)
        se_a, se_l = (float(math.sqrt(v)) if v > 0 else float("nan") for v in np.diag(cov))
    except (np.linalg.LinAlgError, ValueError):
        se_a = se_l = float("nan")
    lam_flag = None
    if lam_hat <= 1e-6 / u or not (lam_hat > 2 * se_l) or lam_hat * float(zj.max()) < 1:
        lam_flag = "untempered/unresolved: the exponential cut-off of the jump sizes is not identifiable"
    alpha_est = Estimate(a_hat, se_a)
    lam_est = Estimate(lam_hat, se_l, lam_flag)
    rate1 = 2.0 * float(c_alpha(a_hat)) * _tail_norm(u, a_hat, lam_hat)     # Lambda_u with eta_J = 1
    eta = zj.size / (T * rate1)
    eta_est = Estimate(eta, eta / math.sqrt(zj.size),
                       "se from the jump count only (alpha, lam uncertainty not included)")
    return JumpEstimate(k, expected, u, alpha_est, lam_est, eta_est, hill)


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
    eta_g: Estimate
    jumps: JumpEstimate
    n_increments: int
    first_record: int

    @property
    def kappa(self) -> Estimate:
        return self.drift.kappa


def fit_sde(zeta, step, *, late_fraction: float = 0.5, bins: int = 24, left_fraction: float = 0.25,
            threshold: float = 4.0, min_jumps: int = 30) -> SDEFit:
    """Estimate kappa, eta_G, eta_J, alpha, lam from trajectories (THEORY.md §8).

    Uses the last ``late_fraction`` of the records (the late, stationary part).
    Two passes: drift from the raw increments, then the Gaussian scale and the
    jumps from the drift residuals.

    Raises ValueError for bad shapes or too few increments (the message says which).
    """
    zeta = np.asarray(zeta, dtype=float)
    if not 0 < late_fraction <= 1:
        raise ValueError(f"late_fraction must be in (0, 1]; got {late_fraction!r}")
    if zeta.ndim != 2 or zeta.shape[0] < 3:
        raise ValueError(f"zeta must be 2-d with >= 3 records; got shape {zeta.shape}")
    first = int(zeta.shape[0] * (1 - late_fraction))
    first = min(first, zeta.shape[0] - 3)
    z, dz, dt, _ = increments(zeta, step, first_record=first)
    drift = estimate_drift(z, dz, dt, bins=bins, left_fraction=left_fraction)
    resid = dz - drift(z) * dt
    s = robust_scale(resid, dt)
    jumps = estimate_jumps(resid, dt, s, threshold=threshold, min_jumps=min_jumps)
    eta_g = estimate_gaussian(resid, dt, u=jumps.u, jumps=jumps)
    return SDEFit(drift=drift, eta_g=eta_g, jumps=jumps, n_increments=int(z.size), first_record=first)


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

    k, g, j = fit.kappa, fit.eta_g, fit.jumps
    if not (k.ok and k.value > 0):
        reason = "no prediction: " + (k.flag or "kappa unavailable")
        return Prediction(_unavailable(reason), _unavailable(reason), "unavailable", {}, float("nan"), {})
    if not g.ok:
        return Prediction(_unavailable("no prediction: eta_G unavailable"), _unavailable("eta_G unavailable"),
                          "unavailable", {}, float("nan"), {})
    has_jumps = j.alpha.ok and j.eta_j.value > 0
    lam_v = j.lam.value if (has_jumps and j.lam.flag is None) else (j.lam.value if has_jumps else 0.0)
    p = {"kappa": k.value, "eta_g": g.value, "eta_j": j.eta_j.value if has_jumps else 0.0,
         "alpha": j.alpha.value if has_jumps else 1.5, "lam": lam_v}
    # no jumps: tempering is irrelevant; use a lam beyond kappa/eta_G so the Gaussian root is admissible
    if not has_jumps:
        p["lam"] = max(1.0, 2 * k.value / g.value) if g.value > 0 else 1.0
    r = classify(p["eta_j"], p["eta_g"], p["kappa"], p["alpha"], p["lam"])
    rng = np.random.default_rng(seed)

    def draw(e: Estimate, lo, hi, size):
        se = e.se if (e.ok and math.isfinite(e.se)) else 0.0
        return np.clip(e.value + se * rng.standard_normal(size), lo, hi)

    n = int(n_boot)
    kb = draw(k, 1e-12, np.inf, n)
    gb = draw(g, 0.0, np.inf, n)
    if has_jumps:
        jb = draw(j.eta_j, 0.0, np.inf, n)
        ab = draw(j.alpha, 0.02, 1.98, n)
        lb = draw(j.lam, 0.0, np.inf, n) if j.lam.ok else np.zeros(n)
    else:
        jb, ab, lb = np.zeros(n), np.full(n, 1.5), np.full(n, p["lam"])
    rb = classify(jb, gb, kb, ab, lb)
    probs = {ph: float(np.mean(rb.phase == ph)) for ph in np.unique(rb.phase)}
    fin = np.isfinite(rb.beta_star)
    b_se = float(np.std(rb.beta_star[fin], ddof=1)) if fin.sum() > 1 else float("nan")
    s_fin = np.isfinite(rb.eta_j_star)
    s_se = float(np.std(rb.eta_j_star[s_fin], ddof=1)) if s_fin.sum() > 1 else float("nan")
    beta = Estimate(float(r.beta_star), b_se) if np.isfinite(r.beta_star) else \
        _unavailable(f"no admissible root: {r.phase}")
    star = Estimate(float(r.eta_j_star), s_se) if np.isfinite(r.eta_j_star) else _unavailable("lam = 0")
    return Prediction(beta, star, str(r.phase), probs, float(r.tail_rate), p)
