"""The phase from data-identified estimates: the closure of the spectrum's tail rate and the
dynamics' root, their combination, and the evidence on the admissibility of the root
(docs/specification.md §4, §8; docs/calibration.md).

The theory says the stationary left tail of zeta decays like ``e^{beta* zeta}`` with beta* the root
of the far-left dynamics, provided the root lies inside the domain of the jumps' Laplace exponent,
``(0, lam)``. ``beta_tail`` (the Hill/MLE rate of the late spectrum) and ``beta_dynamics`` (the Lundberg
root of the far-left increments, :func:`levysde.inference.dynamics.beta_dynamics`) measure beta*
from two features of the same neurons. :func:`closure_test` compares them with the delete-a-group
jackknife of their difference (their errors are correlated: the same neurons' far-left excursions
make both) and combines them with the weights that minimise the jackknife variance of the
combination. :func:`admissibility_test` asks whether the root lies below the tempering cut-off lam:
a set without a root in (0, lam) (collapsed) has a tail rate and an empirical root above lam,
which read like a concentrated set's (docs/calibration.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from levysde.core.jsonable import finite_or_none
from levysde.core.status import Estimate, Status, unavailable
from levysde.stats.jackknife import jackknife_se

__all__ = ["Closure", "closure_test", "CLOSURE_Z", "Admissibility", "admissibility_test", "ADMISSIBLE_Z",
           "PHASE_MIN_ODDS", "phase_odds"]

#: two-sided critical value of the closure test: beta_tail and beta_dynamics agree when |z| <= 2.576
#: (the normal 1 % level)
CLOSURE_Z = 2.576
#: one-sided z of the admissibility test (the normal 1 % level): the root is below lam when
#: (lam_hat - beta) exceeds this many jackknife errors, beyond it when (beta - lam_hat) does
ADMISSIBLE_Z = 2.326
#: a phase is called only when its odds (Student t with G - 1 degrees of freedom about the combined
#: beta and its jackknife error) are at least this
PHASE_MIN_ODDS = 0.95


def phase_odds(beta: float, se: float, df: int | None = None) -> dict:
    r"""``{"concentrated": P(beta > 1), "broad": P(beta < 1)}`` for an estimate ``beta +- se``.

    The law of ``(beta_hat - beta)/se`` is taken as Student's t with ``df`` degrees of freedom (the
    G - 1 of a delete-a-group jackknife over G groups; Efron & Tibshirani 1993, §11.5), the normal law
    when ``df`` is None. Empty when the estimate or its error is not finite and positive.

    Parameters
    ----------
    beta : float
        The estimate :math:`\hat\beta`.
    se : float
        Its standard error, > 0.
    df : int, optional
        Degrees of freedom of the t law (G - 1 of the jackknife); None: the normal law.

    Returns
    -------
    dict
        ``{"concentrated": p, "broad": 1 - p}`` with
        :math:`p = P(\beta > 1) = 1 - F\big((1 - \hat\beta)/\mathrm{se}\big)`, F the t (or
        normal) distribution function; {} when beta or se is not finite, or se <= 0.

    References
    ----------
    * B. Efron, R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall (1993),
      §11.5.
    * The specification, §4: concentrated (:math:`\beta^* > 1`) and broad
      (:math:`\beta^* < 1`) anti-collapse.

    Examples
    --------
    >>> {k: round(v, 4) for k, v in phase_odds(0.8, 0.1).items()}          # normal law
    {'concentrated': 0.0228, 'broad': 0.9772}
    >>> {k: round(v, 4) for k, v in phase_odds(0.8, 0.1, df=15).items()}   # t, 15 df: wider
    {'concentrated': 0.032, 'broad': 0.968}
    >>> phase_odds(float("nan"), 0.1)
    {}
    """
    if not (math.isfinite(beta) and math.isfinite(se) and se > 0):
        return {}
    law = stats.norm if df is None else stats.t(df)
    p = float(law.sf((1.0 - beta) / se))
    return {"concentrated": p, "broad": 1.0 - p}


@dataclass(frozen=True)
class Closure:
    """The closure test of :func:`closure_test`: the stationary tail rate against the dynamics' root.

    Attributes
    ----------
    status : levysde.core.status.Status
        OK (the two agree), FAILED (they differ: |z| > critical) or UNAVAILABLE (either one
        missing, not OK, or without a standard error).
    z : float
        ``(beta_tail - beta_dynamics) / se_diff`` (NaN when unavailable).
    critical : float
        The critical value of |z| used.
    combined : levysde.core.status.Estimate
        The combination of the two (unavailable unless they agree).
    phase : str or None
        "concentrated" (beta > 1) or "broad" (beta < 1) from ``combined``; None unless they
        agree.
    probabilities : dict
        :func:`phase_odds` of ``combined`` ({} unless they agree).
    reason : str
        Why it failed or is unavailable ("" when it passed).
    se_diff : float
        The error of the difference, from the jackknife correlation and the two errors
        (``joint``), or ``sqrt(se_tail^2 + se_dyn^2)``.
    weight : float
        The weight of beta_tail in the combination (NaN unless they agree).
    correlation : float
        The jackknife correlation of the two (NaN without replicates).
    joint : bool
        Whether the replicates of both were used (the errors' correlation accounted for).
    df : int or None
        Degrees of freedom of the odds (G - 1; None: the normal law).
    loo : ndarray, shape (G,)
        Replicates of the combination (empty unless joint and they agree).

    Examples
    --------
    >>> from levysde.core.status import Estimate
    >>> c = closure_test(Estimate(0.8, 0.1), Estimate(0.9, 0.12))
    >>> c.status, c.phase, round(c.z, 3), c.joint
    (<Status.OK: 'ok'>, 'broad', -0.64, False)
    >>> sorted(c.as_json())[:3]
    ['beta_combined', 'beta_combined_se', 'beta_combined_status']
    """

    status: Status
    z: float
    critical: float
    combined: Estimate
    phase: str | None = None
    probabilities: dict = field(default_factory=dict)
    reason: str = ""
    se_diff: float = float("nan")
    weight: float = float("nan")
    correlation: float = float("nan")
    joint: bool = False
    df: int | None = None
    loo: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)

    def as_json(self) -> dict:
        """``closure_z``, ``closure_critical``, ``closure_se``, ``closure_correlation``,
        ``closure_weight_tail`` and ``beta_combined`` (None for NaN)."""
        return {"closure_z": finite_or_none(self.z), "closure_critical": self.critical,
                "closure_se": finite_or_none(self.se_diff), "closure_correlation": finite_or_none(self.correlation),
                "closure_weight_tail": finite_or_none(self.weight), "closure_joint": self.joint,
                **self.combined.as_json("beta_combined")}


def _usable(e: Estimate) -> bool:
    return e.status is Status.OK and e.ok and math.isfinite(e.se) and e.se > 0


def closure_test(beta_tail: Estimate, beta_dyn: Estimate, critical: float = CLOSURE_Z, *, tail_loo=None,
                 dyn_loo=None) -> Closure:
    r"""Do the spectrum's tail rate and the dynamics' root agree (docs/specification.md §4, §8)?

    Parameters
    ----------
    beta_tail, beta_dyn : Estimate
        The spectrum's tail rate and the dynamics' root
        (:func:`levysde.inference.dynamics.beta_dynamics`). Both must have status OK and a
        finite, positive standard error; otherwise UNAVAILABLE.
    critical : float, default :data:`CLOSURE_Z`
        Two-sided critical value of |z| (the normal 1 % level).
    tail_loo, dyn_loo : array_like, shape (G,), optional
        Leave-one-group-out replicates of both over the same groups of neurons. With them (all
        finite, G >= 3) the test is joint: the replicates give the correlation r of the two
        estimates, and with the reported errors s_t, s_d the covariance is ``V_td = r s_t s_d``:
        ``z = (b_t - b_d)/sqrt(s_t^2 + s_d^2 - 2 V_td)``; the combination is
        ``b_c = w b_t + (1 - w) b_d`` with ``w = (s_d^2 - V_td)/(s_t^2 + s_d^2 - 2 V_td)`` clipped to
        [0, 1] (the least-variance weight), its error
        ``sqrt(w^2 s_t^2 + (1 - w)^2 s_d^2 + 2 w (1 - w) V_td)``, its odds Student's t with G - 1
        degrees of freedom. Without them the two are treated as independent (r = 0; normal odds).
        In both forms the combination's error is scaled by ``max(1, |z|)`` (Notes).

    Returns
    -------
    Closure
        OK with the combination and its phase odds when |z| <= critical; FAILED with the
        reason otherwise; UNAVAILABLE when either estimate is not usable.

    Notes
    -----
    Both estimates see the same neurons' far-left excursions, so their errors are positively
    correlated (0.4-0.95 on the independent generator, docs/calibration.md); the independent form
    then makes the test conservative and the combination's error too small. The correlation comes
    from the shared neuron groups, the errors' sizes from each estimate's own calibrated error
    (beta_tail's is a delete-one-neuron jackknife, finer than the groups). The weight is the
    generalised least squares combination of two estimates of one quantity (Aitken 1935). Where
    the two differ by more than one error of their difference (``|z| > 1``), the combination's error
    is multiplied by ``|z|`` (Birge's ratio for one degree of freedom, R. T. Birge 1932, *Phys. Rev.*
    40, 207; the scale factor of the Particle Data Group's averages): the discrepancy is taken as
    evidence that the errors are too small. In formulas, with :math:`V_{td} = r s_t s_d`:

    .. math::

        z = \frac{b_t - b_d}{\sqrt{s_t^2 + s_d^2 - 2V_{td}}}, \qquad
        w = \frac{s_d^2 - V_{td}}{s_t^2 + s_d^2 - 2V_{td}}, \qquad
        b_c = w\,b_t + (1 - w)\,b_d,

    .. math::

        \mathrm{se}(b_c) = \max(1, |z|)\,
        \sqrt{w^2 s_t^2 + (1 - w)^2 s_d^2 + 2w(1 - w)V_{td}}.

    References
    ----------
    * A. C. Aitken, "On least squares and linear combination of observations", *Proc. Roy.
      Soc. Edinburgh* 55 (1935) 42-48.
    * R. T. Birge, "The calculation of errors by the method of least squares", *Phys. Rev.* 40
      (1932) 207-227.
    * The specification, §4 and §8.

    Examples
    --------
    >>> from levysde.core.status import Estimate
    >>> c = closure_test(Estimate(0.8, 0.1), Estimate(0.9, 0.12))
    >>> round(c.combined.value, 3), round(c.combined.se, 3), round(c.weight, 3)
    (0.841, 0.077, 0.59)
    >>> bad = closure_test(Estimate(0.5, 0.05), Estimate(1.5, 0.1))
    >>> bad.status, bad.combined.ok
    (<Status.FAILED: 'failed'>, False)
    >>> rng = np.random.default_rng(0)                 # correlated replicates over 16 groups
    >>> lt = 0.8 + 0.02 * rng.normal(size=16)
    >>> j = closure_test(Estimate(0.8, 0.1), Estimate(0.9, 0.12), tail_loo=lt,
    ...                  dyn_loo=lt + 0.1 + 0.01 * rng.normal(size=16))
    >>> j.joint, j.df, round(j.correlation, 2)
    (True, 15, 0.94)
    """
    missing = [f"{name}: {e.flag or e.status}" for name, e in (("beta_tail", beta_tail), ("beta_dynamics", beta_dyn))
               if not _usable(e)]
    none = unavailable("the closure test did not pass")
    if missing:
        return Closure(Status.UNAVAILABLE, float("nan"), critical, none,
                       reason="closure untested: " + "; ".join(missing))
    bt, bd = beta_tail.value, beta_dyn.value
    lt = None if tail_loo is None else np.asarray(tail_loo, dtype=float)
    ld = None if dyn_loo is None else np.asarray(dyn_loo, dtype=float)
    joint = (lt is not None and ld is not None and lt.shape == ld.shape and lt.size >= 3
             and bool(np.all(np.isfinite(lt)) and np.all(np.isfinite(ld))))
    corr = float("nan")
    st, sd = beta_tail.se, beta_dyn.se
    if joint:
        dev = np.vstack([lt - lt.mean(), ld - ld.mean()])
        V = dev @ dev.T
        if V[0, 0] > 0 and V[1, 1] > 0:
            corr = float(np.clip(V[0, 1] / math.sqrt(V[0, 0] * V[1, 1]), -1.0, 1.0))
        joint = math.isfinite(corr)
    rho = corr if joint else 0.0
    var_diff = st * st + sd * sd - 2 * rho * st * sd
    se_diff = math.sqrt(max(var_diff, 0.0))
    if not se_diff > 0:
        se_diff, rho, joint = math.hypot(st, sd), 0.0, False
    z = (bt - bd) / se_diff
    if not abs(z) <= critical:
        return Closure(Status.FAILED, z, critical, none,
                       reason=f"closure: beta_tail {bt:.3g} +- {st:.2g} and beta_dynamics {bd:.3g} +- "
                              f"{sd:.2g} differ (|z| = {abs(z):.2f} > {critical:g}, error of the difference "
                              f"{se_diff:.2g}): the spectrum's tail is not the dynamics' stationary tail",
                       se_diff=se_diff, correlation=corr, joint=joint)
    w = float(np.clip((sd * sd - rho * st * sd) / (se_diff * se_diff), 0.0, 1.0))
    b = w * bt + (1 - w) * bd
    se = math.sqrt(max(w * w * st * st + (1 - w) ** 2 * sd * sd + 2 * w * (1 - w) * rho * st * sd, 0.0))
    df = lt.size - 1 if joint else None
    loo = w * lt + (1 - w) * ld if joint else np.zeros(0)
    se *= max(1.0, abs(z))              # the scale factor of a discrepant combination (Birge 1932)
    probs = phase_odds(b, se, df)
    return Closure(Status.OK, z, critical, Estimate(b, se), "concentrated" if b > 1 else "broad", probs,
                   se_diff=se_diff, weight=w, correlation=corr, joint=joint, df=df, loo=loo)


@dataclass(frozen=True)
class Admissibility:
    """Does the root lie inside (0, lam)? The result of :func:`admissibility_test`.

    Attributes
    ----------
    status : levysde.core.status.Status
        OK (the root is below lam), FAILED (significantly beyond lam: no admissible root, the
        collapsed phase), NOT_IDENTIFIED (lam is not resolved, or the two are not significantly
        apart).
    evidence : {"root_below_lambda", "root_beyond_lambda", "lambda_not_identified"}
        What the test found.
    z : float
        ``(lam_hat - beta)/se`` (NaN when lam_hat or beta is not usable).
    lam_hat, lam_se : float
        The cut-off used and its error.
    reason : str
        What was found, in words.
    source : str
        Where lam_hat came from ("" without one).

    Examples
    --------
    >>> from levysde.core.status import Estimate
    >>> a = admissibility_test(Estimate(0.8, 0.1), Estimate(2.0, 0.2))
    >>> a.status, a.evidence, round(a.z, 2)
    (<Status.OK: 'ok'>, 'root_below_lambda', 5.37)
    >>> a.as_json()["lam_hat_se"]
    0.2
    """

    status: Status
    evidence: str
    z: float
    lam_hat: float
    lam_se: float
    reason: str
    source: str = ""

    def as_json(self) -> dict:
        return {"status": str(self.status), "evidence": self.evidence, "z": finite_or_none(self.z),
                "lam_hat": finite_or_none(self.lam_hat), "lam_hat_se": finite_or_none(self.lam_se),
                "lam_hat_source": self.source or None, "reason": self.reason}


def admissibility_test(beta: Estimate, lam: Estimate, *, beta_loo=None, lam_loo=None,
                       z_crit: float = ADMISSIBLE_Z, source: str = "") -> Admissibility:
    r"""Is ``beta`` (the tail rate / the dynamics' root) inside the domain (0, lam) of the jumps'
    Laplace exponent (docs/specification.md §4)?

    A root below lam is admissible (the anti-collapse phases); without one (eta_J <= eta_J*, the
    collapsed phase) the stationary tail is ``e^{lam zeta} |zeta|^{-1-alpha}`` and the empirical root
    of the far-left increments lies beyond lam (there ``E exp(-beta dZ)`` is infinite and its
    sample mean is carried by the largest jumps). ``z = (lam_hat - beta)/se`` with ``se`` the
    jackknife error of the difference when both replicate sets are given (same neuron groups), else
    ``sqrt(se_lam^2 + se_beta^2)``.

    Parameters
    ----------
    beta : Estimate
        The root (value and error); status OK with a finite, positive error, otherwise
        "lambda_not_identified".
    lam : Estimate
        The tempering cut-off (e.g. the characteristic-function fit's lam_hat); its status must
        be OK with a finite, positive error, otherwise "lambda_not_identified".
    beta_loo, lam_loo : array_like, shape (G,), optional
        Leave-one-group-out replicates over the same groups (G >= 3): the error of the
        difference is then their jackknife.
    z_crit : float, default :data:`ADMISSIBLE_Z`
        One-sided critical value (the normal 1 % level).
    source : str, optional
        Where lam came from (reported in ``Admissibility.source``).

    Returns
    -------
    Admissibility
        OK "root_below_lambda" when ``z > z_crit``; FAILED "root_beyond_lambda" when ``z < -z_crit``;
        NOT_IDENTIFIED otherwise.

    Notes
    -----
    .. math::

        z = \frac{\hat\lambda - \hat\beta}{\mathrm{se}(\hat\lambda - \hat\beta)},
        \qquad \mathrm{se} = \sqrt{\mathrm{se}_\lambda^2 + \mathrm{se}_\beta^2}
        \ \text{without replicates}.

    References
    ----------
    * The specification, §4: an admissible root :math:`\beta^* \in (0, \lambda)` exists iff
      :math:`\eta_J > \eta_J^*`.

    Examples
    --------
    >>> from levysde.core.status import Estimate, Status
    >>> admissibility_test(Estimate(3.0, 0.2), Estimate(1.0, 0.1)).evidence   # collapsed
    'root_beyond_lambda'
    >>> lam = Estimate(1.0, float("nan"), "lam at its bound", status=Status.AT_BOUND)
    >>> admissibility_test(Estimate(0.8, 0.1), lam).status
    <Status.NOT_IDENTIFIED: 'not identified'>
    """
    if not _usable(beta):
        return Admissibility(Status.NOT_IDENTIFIED, "lambda_not_identified", float("nan"), float("nan"),
                             float("nan"), f"no beta to compare with lam: {beta.flag or beta.status}", source)
    if not (lam.status is Status.OK and lam.ok and math.isfinite(lam.se) and lam.se > 0):
        return Admissibility(Status.NOT_IDENTIFIED, "lambda_not_identified", float("nan"), lam.value, lam.se,
                             "the jumps' tempering cut-off lam is not identified ("
                             + (lam.flag or str(lam.status)) + "): a root in (0, lam) (concentrated) and no root "
                             "(collapsed, the empirical root then lies beyond lam) cannot be told apart", source)
    se = math.hypot(beta.se, lam.se)
    if beta_loo is not None and lam_loo is not None:
        bl, ll = np.asarray(beta_loo, dtype=float), np.asarray(lam_loo, dtype=float)
        if bl.shape == ll.shape and bl.size >= 3:
            s = jackknife_se(ll - bl)
            se = s if math.isfinite(s) and s > 0 else se
    z = (lam.value - beta.value) / se
    txt = f"lam_hat {lam.value:.3g} +- {lam.se:.2g} vs beta {beta.value:.3g} +- {beta.se:.2g} (z = {z:+.2f})"
    if z > z_crit:
        return Admissibility(Status.OK, "root_below_lambda", z, lam.value, lam.se, "root below lam: " + txt, source)
    if z < -z_crit:
        return Admissibility(Status.FAILED, "root_beyond_lambda", z, lam.value, lam.se,
                             "no admissible root: the root lies beyond the tempering cut-off, " + txt, source)
    return Admissibility(Status.NOT_IDENTIFIED, "lambda_not_identified", z, lam.value, lam.se,
                         f"root and tempering cut-off not significantly apart (|z| <= {z_crit:g}): {txt}", source)
