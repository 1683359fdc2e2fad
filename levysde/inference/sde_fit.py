"""The SDE of docs/specification.md §3 fitted to empirical zeta trajectories, and the theory's prediction
from the fit (docs/specification.md §8).

Input: ``zeta`` (records x neurons) and ``step`` (records), e.g. from a run file of
``levysde train`` or the thinned trajectories of a simulation. :func:`fit_sde` combines the drift
fit (:mod:`levysde.inference.drift_fit`) and the noise fit (:mod:`levysde.inference.noise_fit`);
standard errors come from a delete-a-group jackknife over groups of whole neurons
(:mod:`levysde.stats.jackknife`): a neuron's increments are correlated in training time, so only
resampling neurons is valid (docs/specification.md §8). Every estimate is an :class:`levysde.core.status.Estimate`
carrying a standard error, or a status and a message saying why it is unavailable.
:func:`predict` turns a fit into beta*, eta_J* and the phase probabilities.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from levysde.core.status import Estimate, Status, unavailable, with_se
from levysde.core.validate import check_array, check_real
from levysde.inference.drift_fit import DriftEstimate, estimate_drift, increments, kappa_flag, restoring_plateau
from levysde.inference.noise_fit import NoiseEstimate, edge_flags, estimate_noise, floor_se
from levysde.stats.jackknife import jackknife_se, neuron_groups
from levysde.theory.phases import classify

__all__ = ['SDEFit', 'fit_sde', 'predict', 'Prediction', 'FIT_KEYS', 'floored_replicates']


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
        e = with_se(drift.kappa, k * s_log, kappa_flag(drift.form, k * s_log))
        return Estimate(e.value, e.se, e.flag, s_log, e.status) if math.isfinite(e.se) else e
    return with_se(drift.kappa, se_linear, kappa_flag(drift.form, se_linear))


def fit_sde(zeta, step, *, late_fraction: float = 0.5, bins: int = 60, drift_fraction: float = 0.6,
            threshold: float = 4.0, min_jumps: int = 30, seed: int = 0, n_groups: int = 16) -> SDEFit:
    """Estimate kappa, eta_G, eta_J, alpha, lam from trajectories (docs/specification.md §3, §8).

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
    asymptotic error is replaced by it (:func:`floor_se`). Estimates the data do not identify (a status that is not
    :attr:`levysde.core.status.Status.identified`: a
    plateau not reached, a width, alpha or lam at a bound, alpha with lam unresolved or
    eta_G at 0) get no standard error. Resampling whole
    neurons keeps each neuron's increments together, so the errors hold under
    within-neuron correlation in training time (ballistic drift, slow mixing) and for
    non-Gaussian increments (docs/specification.md §8); a jackknife rather than a bootstrap because a
    replicate costs a nonlinear fit and its G - 1 degrees of freedom give t-like coverage
    (docs/calibration.md). A replicate that fails leaves that error NaN, with a note.

    Raises ValueError for bad shapes or too few increments (the message says which).
    """
    zeta = check_array("zeta", zeta, ndim=2, allow_inf=True, allow_nan=True)
    check_real("late_fraction", late_fraction, 0.0, 1.0, lo_open=True)
    if zeta.shape[0] < 3:
        raise ValueError(f"zeta must hold >= 3 records (rows); got shape {zeta.shape}")
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
            noise = NoiseEstimate(noise.eta_g, noise.eta_j, with_se(noise.alpha, se[3], a_flag),
                                  with_se(noise.lam, se[4], l_flag), noise.n_jumps, noise.n_gauss_expected,
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
    #: OK, or UNAVAILABLE when there is nothing to predict from (``phase`` is then "unavailable")
    status: Status = Status.OK


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
    """Phase and beta* of the fitted SDE (docs/specification.md §4, §8), errors from the neuron jackknife.

    beta*'s standard error is the jackknife over the fit's neuron-group replicates
    (each replicate's parameters give its own beta*); NaN, with a flag, when replicates
    disagree on whether a root exists (near the threshold). The phase probabilities
    are the fractions of ``n_boot`` draws of the five parameters from a normal law
    with the jackknife covariance (correlations between the parameters kept), clipped
    to their ranges. Both use the replicates of :func:`floored_replicates`, whose spread
    matches the reported errors of the jump fit. Without jumps eta_J = 0 (alpha, lam irrelevant). An unavailable
    or non-significant kappa, or an unavailable eta_G, gives an unavailable prediction.
    """

    k, j = fit.kappa, fit.noise
    g = j.eta_g
    if not restoring_plateau(k):
        reason = "no prediction: " + (k.flag or "kappa unavailable")
        return Prediction(unavailable(reason), unavailable(reason), "unavailable", {}, float("nan"), {},
                          Status.UNAVAILABLE)
    if not g.ok:
        return Prediction(unavailable("no prediction: eta_G unavailable"), unavailable("eta_G unavailable"),
                          "unavailable", {}, float("nan"), {}, Status.UNAVAILABLE)
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
        unavailable(f"no admissible root: {r.phase}")
    star = Estimate(float(r.eta_j_star), s_se) if np.isfinite(r.eta_j_star) else unavailable("lam = 0")
    return Prediction(beta, star, str(r.phase), probs, float(r.tail_rate), p)
