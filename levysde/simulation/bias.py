r"""Bias budget of the simulated tail rate beta_hat (docs/specification.md §7, §8) and the default threshold.

A threshold estimate :math:`\hat\beta(u) = 1 / E[X - u \mid X > u]` (sample mean;
:math:`X = \zeta_{\mathrm{eq}} - \zeta`, the depth below the equilibrium) of a simulation differs
from :math:`\beta^*` for four reasons:

* **eps** (the Gaussian stand-in for the jumps below the cut): exactly
  :math:`\beta_{\mathrm{model}} - \beta^*` (:func:`levysde.simulation.beta_model`, the root of
  :math:`\Phi_\varepsilon`).
* **drift saturation**: :math:`\beta^*` assumes the drift sits on its plateau :math:`\kappa`, but
  at depth :math:`x` the restoring drift is only :math:`F(\zeta_{\mathrm{eq}} - x) < \kappa`
  (:math:`\kappa \tanh(\gamma x/\kappa)` for the saturating drift), so the density just beyond
  :math:`u` decays more slowly than :math:`e^{-\beta^* x}`. :func:`saturation_shift` predicts the
  shift with the local-rate model

  .. math::

      p(x) \propto \exp\Big(-\int_0^x \beta_{\mathrm{loc}}(s)\, ds\Big),

  :math:`\beta_{\mathrm{loc}}(s)` = :math:`\beta^*` with :math:`\kappa` replaced by the local
  drift :math:`F(\zeta_{\mathrm{eq}} - s)` (the root of :math:`\Phi` of docs/specification.md §4
  at that drift), as the MLE of that density beyond :math:`u`. Checked against simulations
  (docs/simulate.md "Bias budget"): at :math:`\eta_G = 0.3`, :math:`\eta_J = 40`,
  :math:`\kappa = 2`, :math:`\alpha = 0.7`, :math:`\lambda = 3`, :math:`\gamma = 1` it predicts
  -0.0141 at :math:`u = 3` where the runs measured -0.0130 ± 0.0021 (:math:`\gamma = 1` against
  :math:`\gamma = 4`, which saturates at :math:`u = 3`).
* **dt**: Euler's step is exact for the constant drift of the plateau and the jump epochs are
  exact, so the tail carries no :math:`O(dt)` term at leading order; measured: halving
  :math:`dt` moved :math:`\hat\beta(u = 3)` by +0.0011 ± 0.0018 in the case above. Reported as 0
  (not modelled).
* **the tempering boundary**: when :math:`\beta^*` is within a few per cent of :math:`\lambda`,
  the single-jump term :math:`e^{-\lambda x} x^{-1-\alpha}` of the tail is not separated from
  :math:`e^{-\beta^* x}` at the threshold and biases :math:`\hat\beta` upwards
  (:func:`tempering_boundary`; not modelled, ``levysde simulate`` prints a note).
* **finite u** beyond the saturation (the density is exponential only asymptotically, up to
  faster-decaying terms): with a saturated drift the measured :math:`\hat\beta(u)` was flat for
  :math:`u = 2 \ldots 8` within its errors. Reported as 0 (not modelled);
  :func:`threshold_dependence` detects it from the run's threshold scan instead (e.g.
  :math:`\alpha = 0.3`, :math:`\lambda = 0.5`: :math:`\hat\beta` 0.494 at :math:`u = 3`, 0.461 at
  :math:`u = 8` against :math:`\beta^* = 0.462`), and ``levysde simulate`` prints a note.

:func:`default_threshold` picks the smallest :math:`u \ge 3` (steps of 0.5) whose predicted
saturation shift is at most DRIFT_BIAS_TOL = 0.2 % of :math:`\beta^*`.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate

from levysde.stats.tails import TailEstimate
from levysde.theory.phases import beta_star

__all__ = ["saturation_shift", "default_threshold", "bias_budget", "threshold_dependence", "tempering_boundary",
           "DRIFT_BIAS_TOL", "BASE_THRESHOLD", "THRESHOLD_Z"]

#: largest predicted drift-saturation shift of beta_hat accepted by the default threshold (relative)
DRIFT_BIAS_TOL = 2e-3
#: the default threshold when the drift is saturated there (docs/specification.md §7's measurements use u = 3)
BASE_THRESHOLD = 3.0
_U_MAX = 40.0
#: beta* below which the modelled tail (40/beta* beyond u) exceeds 1e6 units of zeta: too long
#: to tabulate or to simulate; no budget is modelled there (bias_budget None, threshold 3)
_BETA_MIN = 4e-5
#: most grid points of default_threshold's table of local rates
_MAX_NODES = 2_000_000
#: |z| beyond which a deeper threshold's beta_hat counts as different (threshold_dependence)
THRESHOLD_Z = 3.5


class PlateauDrift(Protocol):
    """What the budget reads of a drift (:mod:`levysde.simulation.drift`): its values F(zeta),
    its equilibrium and its plateau kappa far left (None without one)."""

    @property
    def equilibrium(self) -> float: ...
    @property
    def plateau(self) -> float | None: ...
    def __call__(self, zeta: Any) -> ArrayLike: ...


def _local_rates(x, drift, eta_j, eta_g, alpha, lam):
    """beta_loc(x): beta* with kappa replaced by the restoring drift at depth x below the equilibrium
    (docs/specification.md §4); lam where the local root does not exist (tempering-limited)."""

    f = np.maximum(np.asarray(drift(drift.equilibrium - x), dtype=float), 1e-12)
    b = np.asarray(beta_star(eta_j, eta_g, f, alpha, lam), dtype=float)
    return np.where(np.isfinite(b), b, lam)


def saturation_shift(u: float, drift: PlateauDrift, eta_j: float, eta_g: float, alpha: float, lam: float,
                     beta: float) -> float:
    r"""Predicted beta_hat(u) - beta* from the drift's approach to its plateau (local-rate model).

    Parameters
    ----------
    u : float
        Threshold depth below the equilibrium, > 0 (zeta units).
    drift : Drift
        A drift with ``plateau`` and ``equilibrium`` (:mod:`levysde.simulation.drift`).
    eta_j, eta_g, alpha, lam : float
        The model parameters (the specification, §4).
    beta : float
        beta* of the model at the plateau, > 0.

    Returns
    -------
    float
        The predicted shift of the threshold estimate (1/zeta units); <= 0 for a drift that
        rises monotonically to its plateau.

    Notes
    -----
    The density beyond the equilibrium is modelled as
    :math:`p(x) \propto \exp(-\int_0^x \beta_{loc}(s)\,ds)`, with :math:`\beta_{loc}(s)` the
    root of the characteristic equation with kappa replaced by the local drift
    :math:`F(\zeta_{eq} - s)`; the shift is the MLE of that density beyond u,
    :math:`\int_u^\infty p / \int_u^\infty (x - u)\,p`, minus beta*, by the trapezoidal rule out
    to :math:`u + 40/\beta` (module docstring).

    References
    ----------
    The specification, §4 and §8 (:doc:`/specification`); measured against simulations in
    :doc:`/simulate`, "Bias budget".

    Examples
    --------
    >>> from levysde.simulation.drift import SaturatingDrift
    >>> print(round(saturation_shift(3.0, SaturatingDrift(), 3.0, 0.1, 1.5, 2.0, 0.8083571464737686), 6))
    -0.000312
    """
    x_max = u + 40.0 / beta
    x = np.concatenate([np.linspace(0.0, u, 1001), np.linspace(u, x_max, 4001)[1:]])  # u: node 1000
    b = _local_rates(x, drift, eta_j, eta_g, alpha, lam)
    big_l = integrate.cumulative_trapezoid(b, x, initial=0.0)
    xs = x[1000:]
    p = np.exp(-(big_l[1000:] - big_l[1000]))
    return float(integrate.trapezoid(p, xs) / integrate.trapezoid((xs - u) * p, xs)) - beta


def default_threshold(drift: PlateauDrift, eta_j: float, eta_g: float, alpha: float, lam: float,
                      beta: float | None) -> float:
    """The default tail threshold of a run: the shallowest depth where the drift is saturated.

    The smallest u in 3, 3.5, 4, ... (depth below the equilibrium) with
    ``|saturation_shift(u)| <= DRIFT_BIAS_TOL * beta*`` (:data:`DRIFT_BIAS_TOL` = 0.2 %).

    Parameters
    ----------
    drift : Drift
        A drift with ``plateau`` and ``equilibrium`` (:mod:`levysde.simulation.drift`).
    eta_j, eta_g, alpha, lam : float
        The model parameters (the specification, §4).
    beta : float or None
        beta* of the model (None or NaN without one).

    Returns
    -------
    float
        The depth u, in [3, 40]: 3 when there is no beta* (no plateau or collapsed phase) or
        beta* <= 4e-5; capped at 40.

    Notes
    -----
    One grid of local rates (step 0.005, or coarser for beta* below ~0.004 so that it has at
    most 2e6 nodes; every candidate a node) serves all candidates; each candidate's predicted
    rate is computed as in :func:`saturation_shift`.

    Examples
    --------
    >>> from levysde.simulation.drift import SaturatingDrift
    >>> print(default_threshold(SaturatingDrift(), 3.0, 0.1, 1.5, 2.0, 0.8083571464737686))
    3.0
    """
    if beta is None or not (math.isfinite(beta) and beta > _BETA_MIN) or drift.plateau is None:
        return BASE_THRESHOLD
    extent = _U_MAX + 40.0 / beta
    h = 0.5 / min(100, max(1, math.floor(0.5 * _MAX_NODES / extent)))   # candidates stay nodes
    x = h * np.arange(int(math.ceil(extent / h)) + 1)
    big_l = integrate.cumulative_trapezoid(_local_rates(x, drift, eta_j, eta_g, alpha, lam), x,
                                           initial=0.0)
    tail = int(round(40.0 / beta / h))
    u = BASE_THRESHOLD
    while u < _U_MAX:
        i = int(round(u / h))
        p = np.exp(-(big_l[i:i + tail] - big_l[i]))
        rate = integrate.trapezoid(p, dx=h) / integrate.trapezoid((x[i:i + tail] - x[i]) * p, dx=h)
        if abs(rate - beta) <= DRIFT_BIAS_TOL * beta:
            return u
        u += 0.5
    return _U_MAX


def bias_budget(u: float, drift: PlateauDrift, eta_j: float, eta_g: float, alpha: float, lam: float,
                beta: float | None, beta_mod: float | None) -> dict[str, float] | None:
    """The predicted bias of beta_hat(u) against beta*, by source (module docstring).

    Parameters
    ----------
    u : float
        Threshold depth below the equilibrium, > 0.
    drift : Drift
        The simulated drift (``plateau``, ``equilibrium``).
    eta_j, eta_g, alpha, lam : float
        The model parameters (the specification, §4).
    beta : float or None
        beta* of the model.
    beta_mod : float or None
        beta_model, the root of the simulated scheme's Phi_eps
        (:func:`levysde.simulation.scheme.beta_model`); None or NaN: no eps term.

    Returns
    -------
    dict or None
        Keys ``depth_u`` (u), ``beta_star``, ``eps`` (beta_model - beta*),
        ``drift_saturation`` (:func:`saturation_shift`), ``dt`` (0, not modelled), ``finite_u``
        (0, not modelled), ``total`` (their sum) and ``beta_expected`` (beta* + total); None
        without a beta* (no plateau, collapsed phase) or with beta* <= 4e-5 (a tail too long to
        model). Stored as ``meta.bias_budget`` of a run.

    References
    ----------
    The specification, §7 and §8 (:doc:`/specification`); :doc:`/simulate`, "Bias budget".

    Examples
    --------
    >>> from levysde.simulation.drift import SaturatingDrift
    >>> b = bias_budget(3.0, SaturatingDrift(), 3.0, 0.1, 1.5, 2.0, 0.8083571464737686, 0.8085135059728703)
    >>> print(round(b['drift_saturation'], 6), round(b['eps'], 6), round(b['beta_expected'], 6))
    -0.000312 0.000156 0.808202
    """
    if beta is None or not (math.isfinite(beta) and beta > _BETA_MIN) or drift.plateau is None:
        return None
    eps = beta_mod - beta if (beta_mod is not None and math.isfinite(beta_mod)) else 0.0
    sat = saturation_shift(u, drift, eta_j, eta_g, alpha, lam, beta)
    total = eps + sat
    return {"depth_u": float(u), "beta_star": float(beta), "eps": float(eps),
            "drift_saturation": sat, "dt": 0.0, "finite_u": 0.0, "total": total,
            "beta_expected": float(beta) + total}


def tempering_boundary(u: float, beta: float | None, lam: float) -> float | None:
    r"""Depth from which the tail's leading term is separated from the tempered single-jump term.

    Parameters
    ----------
    u : float
        The threshold, a depth below the equilibrium (> 0).
    beta : float or None
        beta* of the model (None or NaN without one).
    lam : float
        The tempering rate lam >= 0.

    Returns
    -------
    float or None
        :math:`1/(\lambda - \beta^*)`, the depth of one e-fold of separation, when
        :math:`(\lambda - \beta^*)\,u < 1` (u is shallower than it: beta_hat(u) is biased
        upwards); None when the terms are separated at u, without beta*, with
        :math:`\beta^* \ge \lambda` or without tempering (lam = 0).

    Notes
    -----
    Beyond the plateau the tail of X holds, besides :math:`A e^{-\beta^* x}`, the law of one
    big jump, :math:`B e^{-\lambda x} x^{-1-\alpha}` (the tempered Lévy density
    :math:`e^{\lambda\zeta}|\zeta|^{-1-\alpha}`, the specification, §2, §4). Their ratio falls
    like :math:`e^{-(\lambda - \beta^*) x}`: when beta* is within a few per cent of lam (the
    tempering boundary) the second term is not yet small at any simulated threshold and
    beta_hat(u) lies between beta* and the single jump's local rate
    :math:`\lambda + (1 + \alpha)/u`, above beta* (e.g. eta_J = 2, alpha = 1, lam = 1.5:
    beta* = 1.4853, beta_hat(3) = 1.528 +- 0.010 over 16384 particles).

    References
    ----------
    The specification, §2 and §4 (:doc:`/specification`).

    Examples
    --------
    >>> b = float(levysde.beta_star(2.0, 0.1, 1.0, 1.0, 1.5))     # eta_J, eta_G, kappa, alpha, lam
    >>> print(round(b, 4), round(tempering_boundary(3.0, b, 1.5), 1))
    1.4853 68.0
    >>> print(tempering_boundary(3.0, 0.8, 2.0))                      # separated at u = 3
    None
    """
    if beta is None or not math.isfinite(beta) or not lam > 0 or not lam > beta:
        return None
    gap = lam - beta
    return 1.0 / gap if gap * u < 1.0 else None


def threshold_dependence(est: TailEstimate, scan: Sequence[TailEstimate], *,
                         z_max: float = THRESHOLD_Z) -> tuple[float, float, float] | None:
    r"""The finite-threshold check that the budget does not model: does beta_hat change when the
    threshold goes deeper?

    Parameters
    ----------
    est : TailEstimate
        The estimate at the threshold used (:class:`levysde.stats.tails.TailEstimate`).
    scan : sequence of TailEstimate
        Estimates at other thresholds (:meth:`SimulationResult.tail_scan`); only the deeper
        ones with a finite estimate and error are compared.
    z_max : float, optional
        Significance bound of :math:`|z|` (default :data:`THRESHOLD_Z` = 3.5: about 10 deeper
        thresholds are compared).

    Returns
    -------
    tuple of (float, float, float) or None
        ``(u', beta_hat(u'), z)`` of the largest :math:`|z|` if it exceeds ``z_max``, else None
        (also when ``est`` has no finite error). A flat scan (saturated drift, exponential
        tail) gives None; a tail that is not yet exponential at u gives the most significant
        departure.

    Notes
    -----
    .. math::

        z = \frac{\hat\beta(u') - \hat\beta(u)}{\sqrt{\max(\mathrm{se}'^2 - \mathrm{se}^2,\ (\mathrm{se}'/2)^2)}},

    since the deeper sample is nested in the shallower one, the variance of the difference is
    about the difference of the variances (floored, since the two samples are not exactly
    nested).

    Examples
    --------
    >>> from levysde.stats.tails import TailEstimate
    >>> est = TailEstimate(u=3.0, beta_hat=0.494, se=0.005, n_exceed=1e4, n_excursions=None, n_effective=1e4)
    >>> deeper = TailEstimate(u=8.0, beta_hat=0.461, se=0.008, n_exceed=500.0, n_excursions=None,
    ...                       n_effective=3000.0)
    >>> u2, b2, z = threshold_dependence(est, [deeper])
    >>> print(u2, b2, round(z, 2))
    8.0 0.461 -5.28
    """
    if not (est.se is not None and math.isfinite(est.se) and math.isfinite(est.beta_hat)):
        return None
    worst = None
    for e in scan:
        if not (e.u > est.u and math.isfinite(e.beta_hat) and e.se is not None and math.isfinite(e.se)):
            continue
        z = (e.beta_hat - est.beta_hat) / math.sqrt(max(e.se ** 2 - est.se ** 2, (0.5 * e.se) ** 2))
        if abs(z) > z_max and (worst is None or abs(z) > abs(worst[2])):
            worst = (float(e.u), float(e.beta_hat), float(z))
    return worst
