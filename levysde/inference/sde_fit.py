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
from levysde.core.validate import check_array, check_int, check_real
from levysde.inference.drift_fit import DriftEstimate, estimate_drift, increments, kappa_flag, restoring_plateau
from levysde.inference.noise_fit import NoiseEstimate, edge_flags, estimate_noise, floor_se
from levysde.stats.jackknife import jackknife_se, neuron_groups
from levysde.theory.phases import classify

__all__ = ['SDEFit', 'fit_sde', 'predict', 'Prediction', 'FIT_KEYS', 'floored_replicates']


#: the fitted quantities resampled by the jackknife of :func:`fit_sde`, in this order
FIT_KEYS = ("kappa", "eta_g", "eta_j", "alpha", "lam")
#: fewest records the SDE fit takes (two increments per neuron)
MIN_FIT_RECORDS = 3


@dataclass(frozen=True)
class SDEFit:
    """All estimates from one set of trajectories, the result of :func:`fit_sde`.

    Attributes
    ----------
    drift : DriftEstimate
        The binned drift and the plateau kappa_hat with its jackknife error
        (:class:`levysde.inference.drift_fit.DriftEstimate`).
    noise : NoiseEstimate
        eta_G, eta_J, alpha, lam with their errors
        (:class:`levysde.inference.noise_fit.NoiseEstimate`).
    n_increments : int
        Increments used (late records, both ends finite).
    first_record : int
        Index of the first late record.
    notes : tuple of str
        What the fit noticed (shared zeta, failed replicates).
    replicates : ndarray, shape (G, 5)
        Leave-one-neuron-group-out values of :data:`FIT_KEYS` (NaN where a replicate could not
        be fitted; shape (0, 5) with fewer than 2 independent neurons).
    n_neurons : int
        Independent neurons fitted (1 when all columns share one zeta).
    kappa : levysde.core.status.Estimate
        ``drift.kappa`` (a property).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> R, Q = 200, 128
    >>> zeta = np.empty((R, Q))
    >>> zeta[0] = rng.normal(size=Q)
    >>> for r in range(R - 1):              # dZ = 0.5 tanh(-Z/0.5) dt + sqrt(2 * 0.125) dW
    ...     zeta[r + 1] = zeta[r] + 0.5 * np.tanh(-zeta[r] / 0.5) + 0.5 * rng.normal(size=Q)
    >>> fit = fit_sde(zeta, np.arange(R))
    >>> fit.n_neurons, fit.first_record, fit.replicates.shape
    (128, 100, (16, 5))
    >>> print(np.round(fit.values(), 3))    # kappa, eta_g, eta_j, alpha, lam
    [0.535 0.124 0.      nan   nan]
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
        """The plateau kappa_hat with its error (``drift.kappa``)."""
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
    r"""Estimate kappa, eta_G, eta_J, alpha, lam from trajectories (the specification, §3, §8).

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

    Parameters
    ----------
    zeta : array_like, shape (R, Q)
        zeta per record and neuron, R >= 3 (NaN or :math:`\pm\infty` = undefined). Columns that
        all equal one zeta (a shared gate) are fitted as a single trajectory, without errors.
    step : array_like, shape (R,)
        Strictly increasing record times (training steps or SDE time): the time unit of kappa
        and eta_G.
    late_fraction : float, default 0.5
        The last fraction of the records that forms the late part, in (0, 1] (at least the
        last 3 records).
    bins : int, default 60
        Drift bins (:func:`levysde.inference.drift_fit.estimate_drift`), >= 3.
    drift_fraction : float, default 0.6
        Share of the z mass in the left region of the plateau fit, in (0, 1].
    threshold : float, default 4.0
        Jump detection threshold in robust scales of the residuals
        (:func:`levysde.inference.noise_fit.estimate_noise`).
    min_jumps : int, default 30
        Fewest detected jumps for a jump fit.
    seed : int, default 0
        Seed of the noise fit's random choices.
    n_groups : int, default 16
        Neuron groups of the jackknife (G = min(n_groups, Q)).

    Returns
    -------
    SDEFit
        The drift and noise estimates with their jackknife errors, the replicates and notes.

    Raises
    ------
    ValueError
        For bad shapes (zeta not 2-d, fewer than 3 records, step not (R,) increasing), options
        out of range, or too few increments (the message says which).

    Notes
    -----
    The model is :math:`d\zeta = F(\zeta)\,dt + \sqrt{2\eta_G}\,dW + dJ` with
    :math:`F(z) = \kappa\tanh((z_0 - z)/w)` and :math:`J` a symmetric tempered stable (CTS)
    process of intensity :math:`\eta_J`, index :math:`\alpha` and tempering :math:`\lambda`
    (the specification, §2-§3). With :math:`\hat\theta_{(-g)}` the fit without neuron group
    :math:`g` of :math:`G`,

    .. math::

        \widehat{\mathrm{se}}(\hat\theta) = \sqrt{\frac{G - 1}{G}
        \sum_{g=1}^{G} \big(\hat\theta_{(-g)} - \bar\theta\big)^2},

    kappa's on the log scale (``log_se``; the interval is :math:`\hat\kappa e^{\pm k\,
    \mathrm{log\_se}}`).

    References
    ----------
    * The specification, §2, §3 and §8.
    * T. Fox, D. Hinkley, K. Larntz, "Jackknifing in nonlinear regression", *Technometrics* 22
      (1980) 29-33.
    * R. J. Carroll, D. Ruppert, *Transformation and Weighting in Regression*, Chapman & Hall
      (1988), §2.
    * B. Efron, C. Stein, "The jackknife estimate of variance", *Ann. Statist.* 9 (1981)
      586-596.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> R, Q = 200, 128
    >>> zeta = np.empty((R, Q))
    >>> zeta[0] = rng.normal(size=Q)
    >>> for r in range(R - 1):              # dZ = 0.5 tanh(-Z/0.5) dt + sqrt(2 * 0.125) dW
    ...     zeta[r + 1] = zeta[r] + 0.5 * np.tanh(-zeta[r] / 0.5) + 0.5 * rng.normal(size=Q)
    >>> fit = fit_sde(zeta, np.arange(R))
    >>> k = fit.kappa                       # truth 0.5
    >>> round(k.value, 2), round(k.se, 3), k.status
    (0.54, 0.019, <Status.OK: 'ok'>)
    >>> round(fit.noise.eta_g.value, 3), fit.noise.mode    # truth 0.125, no jumps
    (0.124, 'gauss')
    """
    zeta = check_array("zeta", zeta, ndim=2, allow_inf=True, allow_nan=True)
    check_real("late_fraction", late_fraction, 0.0, 1.0, lo_open=True)
    if zeta.shape[0] < MIN_FIT_RECORDS:
        raise ValueError(f"zeta must hold >= {MIN_FIT_RECORDS} records (rows); got shape {zeta.shape}")
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
    r"""beta*, eta_J* and the phase from fitted parameters, with jackknife errors.

    The result of :func:`predict`.

    Attributes
    ----------
    beta : levysde.core.status.Estimate
        :math:`\beta^*`, the root of the characteristic equation, with its jackknife error;
        unavailable when there is no admissible root.
    eta_j_star : levysde.core.status.Estimate
        The threshold jump intensity :math:`\eta_J^*` with its error; unavailable for lam = 0
        and without fitted jumps.
    phase : str
        The phase of the point estimate (:func:`levysde.theory.classify`), or "unavailable".
    phase_probabilities : dict
        Phase name -> fraction of the normal draws of the parameters in that phase (plus
        "no plateau" for draws with kappa <= 0); {} without replicates.
    tail_rate : float
        The tail rate of zeta of the point estimate; NaN when unavailable.
    params : dict
        The parameters classified (``kappa``, ``eta_g``, ``eta_j``, ``alpha``, ``lam``), clipped
        to their ranges.
    status : levysde.core.status.Status
        OK, or UNAVAILABLE when there is nothing to predict from (``phase`` is then
        "unavailable").

    Examples
    --------
    >>> from levysde.core.status import Status, unavailable
    >>> p = Prediction(unavailable("no plateau"), unavailable("no plateau"), "unavailable", {},
    ...                float("nan"), {}, Status.UNAVAILABLE)
    >>> p.phase, p.beta.ok
    ('unavailable', False)
    """

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
    r"""Jackknife replicates whose noise columns have the errors that :func:`floor_se` reports.

    Where the model-based error replaces the jackknife
    (:func:`levysde.inference.noise_fit.floor_se`), the column's deviations from the
    replicates' mean are scaled up to it. Correlations between the parameters are kept. A
    column with NaN or zero spread is left as it is.

    Parameters
    ----------
    replicates : array_like, shape (G, 5)
        Leave-one-group-out values of :data:`FIT_KEYS` (:attr:`SDEFit.replicates`).
    model_se : array_like, shape (4,)
        Model-based asymptotic errors of eta_g, eta_j, alpha, lam (NaN: none).

    Returns
    -------
    ndarray, shape (G, 5)
        A copy of ``replicates`` with the noise columns rescaled where floored; unchanged for
        G < 2.

    Notes
    -----
    A column :math:`x_g` with jackknife error :math:`s` below its floored error :math:`s'`
    becomes :math:`\bar x + (x_g - \bar x)\,s'/s`, whose jackknife error is :math:`s'`.

    Examples
    --------
    >>> reps = np.column_stack([np.linspace(0.9, 1.1, 8)] * 5)
    >>> out = floored_replicates(reps, [np.nan] * 4)      # no model error: unchanged
    >>> bool(np.array_equal(out, reps))
    True
    """
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
    r"""Phase and beta* of the fitted SDE (the specification, §4, §8), errors from the neuron jackknife.

    beta*'s standard error is the jackknife over the fit's neuron-group replicates
    (each replicate's parameters give its own beta*); NaN, with a flag, when replicates
    disagree on whether a root exists (near the threshold). The phase probabilities
    are the fractions of ``n_boot`` draws of the five parameters from a normal law
    with the jackknife covariance (correlations between the parameters kept), clipped
    to their ranges. Both use the replicates of :func:`floored_replicates`, whose spread
    matches the reported errors of the jump fit. Without jumps eta_J = 0 (alpha, lam irrelevant). An unavailable
    or non-significant kappa, or an unavailable eta_G, gives an unavailable prediction.

    Parameters
    ----------
    fit : SDEFit
        From :func:`fit_sde`.
    n_boot : int, default 400
        Normal draws of the parameters for the phase probabilities, an integer >= 1.
    seed : int, default 0
        Seed of the draws.

    Returns
    -------
    Prediction
        beta*, eta_J*, the phase, its probabilities and the tail rate; status UNAVAILABLE (phase
        "unavailable") without a restoring plateau or eta_G. Without jumps (Gaussian noise
        fit) eta_J* is unavailable: the threshold depends on a tempering the data do not
        constrain.

    Raises
    ------
    ValueError
        If ``n_boot`` is not an integer >= 1.

    Notes
    -----
    :math:`\beta^*` is the root in :math:`(0, \lambda)` of

    .. math::

        \Phi(\beta) = \eta_G\beta^2 + \Psi^*(\beta) - \kappa\beta,

    with :math:`\Psi^*` the CTS jump exponent; without jumps :math:`\beta^* = \kappa/\eta_G`
    (the specification, §4).

    References
    ----------
    * The specification, §4 and §8.
    * L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
      Recurrent Neural Networks", arXiv:2606.29519.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> R, Q = 200, 128
    >>> zeta = np.empty((R, Q))
    >>> zeta[0] = rng.normal(size=Q)
    >>> for r in range(R - 1):              # dZ = 0.5 tanh(-Z/0.5) dt + sqrt(2 * 0.125) dW
    ...     zeta[r + 1] = zeta[r] + 0.5 * np.tanh(-zeta[r] / 0.5) + 0.5 * rng.normal(size=Q)
    >>> fit = fit_sde(zeta, np.arange(R))
    >>> p = predict(fit, n_boot=200)
    >>> round(p.beta.value, 2), round(p.beta.se, 2), p.phase     # kappa/eta_G = 4 in truth
    (4.32, 0.17, 'concentrated')
    >>> p.phase_probabilities
    {'concentrated': 1.0}
    """

    n_boot = check_int("n_boot", n_boot, 1)
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
    if not has_jumps:
        star = unavailable("no jumps fitted: eta_J* needs alpha and lam, which Gaussian noise does not determine")
    else:
        star = Estimate(float(r.eta_j_star), s_se) if np.isfinite(r.eta_j_star) else unavailable("lam = 0")
    return Prediction(beta, star, str(r.phase), probs, float(r.tail_rate), p)
