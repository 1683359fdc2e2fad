r"""The model's asymptotic forgetting envelope in every phase (docs/specification.md §4-§5).

The theory fixes how :math:`f(l) = E[e^{-l e^\zeta}]` decays at large lag :math:`l` from the left
tail of the stationary :math:`\zeta` law, :math:`p(\tau) \sim A \tau^{-1-r}` (rate :math:`r`,
:math:`\tau = e^{-\zeta}`), up to the tail amplitude :math:`A` that it does not fix:

* a Cramér root :math:`\beta^*` (broad and concentrated phases) or, without jumps, the Gaussian
  rate :math:`\kappa/\eta_G`: :math:`f \sim A\, \Gamma(r)\, l^{-r}` (Karamata's Tauberian theorem,
  docs/specification.md §5);
* collapsed and tempering-limited (:math:`\eta_J > 0`, no root):
  :math:`p(\tau) \sim A \tau^{-(1+\lambda)} (\ln \tau)^{-(1+\alpha)}`, so
  :math:`f \sim A\, \Gamma(\lambda)\, l^{-\lambda} (\ln l)^{-(1+\alpha)}` (Karamata with the slowly
  varying factor);
* logarithmic phase (:math:`\lambda = 0`): :math:`p(\tau) \sim A / (\tau (\ln \tau)^\alpha)`, so
  :math:`f \sim \frac{A}{\alpha-1} (\ln l)^{-(\alpha-1)}` (no stationary law for
  :math:`\alpha \le 1`);
* no noise: a point mass at the equilibrium, exponential decay (no power-law form).

These forms hold for large :math:`l` only; at small :math:`l` they exceed 1, outside the range of
an envelope. :func:`unit_crossing` finds where a form drops to 1; the values are reported from
there on. :func:`levysde.theory.envelope_map.tauberian_prediction` is the first case alone.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from levysde.core.validate import check_real
from levysde.theory.params import DEFAULTS
from levysde.theory.phases import classify

__all__ = ["AsymptoticEnvelope", "asymptotic_envelope", "unit_crossing"]


def unit_crossing(func: Callable, domain_lo: float = 0.0) -> float:
    r"""Smallest lag above which the decreasing function ``func`` is <= 1.

    Parameters
    ----------
    func : callable
        Vectorised, ``func(l) -> values`` for an ndarray of lags; decreasing on
        (domain_lo, inf). NaN counts as +inf (above 1).
    domain_lo : float, optional
        The left end of func's domain, >= 0 (default 0).

    Returns
    -------
    float
        ``domain_lo`` when func <= 1 on its whole domain (probed at its left end), +inf when
        it stays above 1 up to l = e^700, else the crossing, by bisection in log l to ~1e-15
        relative.

    Notes
    -----
    The asymptotic forms are valid envelope values (:math:`0 < f \le 1`) only from the lag
    :math:`\ell_1` with :math:`f(\ell_1) = 1` on; for the power law
    :math:`A\,\Gamma(\beta)\,\ell^{-\beta}`, :math:`\ell_1 = (A\,\Gamma(\beta))^{1/\beta}`.

    References
    ----------
    .. [1] W. Feller, An Introduction to Probability Theory and Its Applications, Vol. II, 2nd ed.,
       Wiley (1971), §XIII.5.
    .. [2] L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
       Recurrent Neural Networks", arXiv:2606.29519.

    Examples
    --------
    >>> print(round(unit_crossing(lambda l: 5.0 / l), 9))   # where 5/l = 1
    5.0
    >>> print(unit_crossing(lambda l: 0.5 / l, 1.0), unit_crossing(lambda l: 2.0 + 0 * l))
    1.0 inf
    """
    def g(u):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            v = float(func(np.array([math.exp(u)]))[0])
        return v if not math.isnan(v) else math.inf
    lo = math.log(domain_lo) + 1e-12 if domain_lo > 0 else -700.0
    hi = 700.0
    if g(hi) > 1.0:
        return math.inf
    if g(lo) <= 1.0:
        return float(domain_lo)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if g(mid) > 1.0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15 * max(1.0, abs(hi)):
            break
    return math.exp(hi)


@dataclass(frozen=True)
class AsymptoticEnvelope:
    r"""Large-lag form of f(l) for one parameter set (see the module docstring).

    Made by :func:`asymptotic_envelope`. :meth:`raw` evaluates the form at any lags,
    :meth:`values` where it is a valid envelope value (NaN elsewhere), :meth:`capped` with
    values above 1 replaced by 1 (a usable ``f_func`` for
    :func:`levysde.theory.learnability.learnability_window`); the three raise ValueError
    when there is no form.

    Attributes
    ----------
    phase : str
        The phase, one of :data:`levysde.theory.phases.PHASES`.
    beta_theory : float or None
        beta* from :func:`levysde.theory.classify`; None without a Cramér root.
    tail_rate : float or None
        The tail rate (:func:`levysde.theory.tail_rate`); None without noise.
    amplitude : float
        The tail amplitude A (> 0) the forms are scaled with.
    decay_class : str
        ``"polynomial"``, ``"logarithmic"`` or ``"exponential"``.
    slope : float or None
        Asymptotic log-log slope -tail_rate (polynomial class), else None.
    gamma : float or None
        Exponent alpha - 1 of the logarithmic form, else None.
    form : str or None
        The formula as text, None when there is no power-law/log form.
    note : str or None
        A remark on the phase (no stationary law, slowly varying factor, ...), or None.
    domain_lo : float
        The form is defined for l > domain_lo (1 where it contains ln l, else 0).
    valid_from : float or None
        Smallest lag from which the form is <= 1 (:func:`unit_crossing`); None without form.

    Notes
    -----
    The forms, by phase (module docstring; the specification, §4-§5):
    :math:`A\,\Gamma(r)\,\ell^{-r}` for a tail rate :math:`r` (a Cramér root
    :math:`\beta^*`, or :math:`\kappa/\eta_G` without jumps);
    :math:`A\,\Gamma(\lambda)\,\ell^{-\lambda}(\ln\ell)^{-(1+\alpha)}` when collapsed and
    tempering-limited; :math:`\frac{A}{\alpha-1}(\ln\ell)^{-(\alpha-1)}` in the logarithmic
    phase.

    Examples
    --------
    >>> a = asymptotic_envelope(3.0)
    >>> print(a.raw([0.5, 10.0]).round(4), a.values([0.5, 10.0]).round(4))
    [2.0226 0.1796] [   nan 0.1796]
    >>> print(a.capped([0.5, 10.0]).round(4))
    [1.     0.1796]
    >>> b = asymptotic_envelope(0.5)             # collapsed: eta_J below eta_J*
    >>> print(b.phase, b.slope, b.domain_lo, b.form)
    collapsed -2.0 1.0 A Gamma(lam) l^-lam (ln l)^-(1+alpha)
    """

    phase: str
    beta_theory: float | None
    tail_rate: float | None
    amplitude: float
    decay_class: str
    slope: float | None = None
    gamma: float | None = None
    form: str | None = None
    note: str | None = None
    domain_lo: float = 0.0
    valid_from: float | None = None
    _form: Callable | None = field(default=None, repr=False, compare=False)

    def raw(self, lags: ArrayLike) -> np.ndarray:
        """The form at ``lags`` (any shape), NaN at l <= domain_lo; values may exceed 1.
        Raises ValueError when there is no form (``form`` is None)."""
        if self._form is None:
            raise ValueError(f"no asymptotic power-law or log form in this case ({self.decay_class})")
        l = np.asarray(lags, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self._form(np.where(l > self.domain_lo, l, np.nan))

    def values(self, lags: ArrayLike) -> np.ndarray:
        """The form where it is a valid envelope value (l >= valid_from, finite, <= 1), NaN elsewhere."""
        l = np.asarray(lags, dtype=float)
        v = self.raw(l)
        return np.where((l >= self.valid_from) & np.isfinite(v) & (v <= 1.0), v, np.nan)

    def capped(self, lags: ArrayLike) -> np.ndarray:
        """The form capped at 1 (1 where it is above 1 or undefined): a usable f for
        :func:`levysde.theory.learnability.learnability_window` (``f_func``)."""
        v = self.raw(lags)
        return np.where(np.isfinite(v) & (v <= 1.0), v, 1.0)


def _power_law_case(rec, eta_j, alpha, A):
    """(form callable, domain_lo, fields) for a finite tail rate: A Gamma(rate) l^-rate, with the
    (ln l)^-(1+alpha) factor in the tempering-limited collapsed case."""

    rate = float(rec["tail_rate"])
    log_ag = math.log(A) + float(special.gammaln(rate))     # log(A Gamma(rate)): no overflow at rate > 171
    fields: dict[str, Any] = dict(decay_class="polynomial", slope=-rate)
    if rec["beta"] is None and eta_j > 0:
        k = 1.0 + alpha
        fields.update(form="A Gamma(lam) l^-lam (ln l)^-(1+alpha)",
                      note=("collapsed, tempering-limited: no Cramer root; p(tau) ~ A tau^-(1+lam) "
                            "(ln tau)^-(1+alpha), so f ~ A Gamma(lam) l^-lam (ln l)^-(1+alpha) (the log "
                            "factor is included in f; the local log-log slope -lam - (1+alpha)/ln l "
                            "tends to the reported slope -lam only slowly)"))
        return (lambda l: np.exp(log_ag - rate * np.log(l)) * np.log(l) ** (-k)), 1.0, fields
    fields["form"] = "A Gamma(beta) l^-beta"
    if rec["beta"] is None:
        fields["note"] = ("collapsed: no Cramer root; tail rate kappa/eta_G (Gaussian noise only), "
                          "f ~ A Gamma(kappa/eta_G) l^-(kappa/eta_G)")
    return (lambda l: np.exp(log_ag - rate * np.log(l))), 0.0, fields


def asymptotic_envelope(eta_j: float, eta_g: float | None = None, kappa: float | None = None,
                        alpha: float | None = None, lam: float | None = None, *,
                        amplitude: float = 1.0) -> AsymptoticEnvelope:
    r"""The model's large-lag envelope form for one parameter set (docs/specification.md §4-§5).

    Parameters
    ----------
    eta_j : float
        Jump intensity, >= 0.
    eta_g, kappa, alpha, lam : float or None, optional
        The other model parameters (None: the defaults of the specification,
        :data:`levysde.theory.params.DEFAULTS`); ranges as in :func:`levysde.theory.classify`.
    amplitude : float, optional
        Tail amplitude A > 0 of p(tau) (the theory fixes the rate, not A; default 1).

    Returns
    -------
    AsymptoticEnvelope
        The phase, decay class, slope, the form and the lag from which it is valid.

    Raises
    ------
    ValueError
        For out-of-range parameters (naming the parameter) or amplitude not finite and > 0.

    Notes
    -----
    With :math:`p(\tau) \sim A\,\tau^{-1-r}` as :math:`\tau \to \infty`, Karamata's
    Tauberian theorem gives

    .. math::

       f(\ell) = \int_0^\infty e^{-\ell/\tau} p(\tau)\,d\tau \sim A\,\Gamma(r)\,\ell^{-r},
       \qquad \ell \to \infty,

    and a slowly varying factor of :math:`p` carries over to :math:`f` (the specification, §5).

    References
    ----------
    .. [1] W. Feller, An Introduction to Probability Theory and Its Applications, Vol. II, 2nd ed.,
       Wiley (1971), §XIII.5.
    .. [2] L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
       Recurrent Neural Networks", arXiv:2606.29519.

    Examples
    --------
    >>> a = asymptotic_envelope(3.0)
    >>> print(a.phase, a.decay_class, a.form)
    broad polynomial A Gamma(beta) l^-beta
    >>> print(round(a.slope, 6), round(a.valid_from, 4))
    -0.808357 1.1951
    """

    A = check_real("amplitude", amplitude, 0.0, lo_open=True)
    p = {k: DEFAULTS[k] if v is None else v
         for k, v in dict(eta_g=eta_g, kappa=kappa, alpha=alpha, lam=lam).items()}
    rec = classify(eta_j, p["eta_g"], p["kappa"], p["alpha"], p["lam"]).records()[0]
    base = dict(phase=rec["phase"], beta_theory=rec["beta"], tail_rate=rec["tail_rate"], amplitude=A)
    form, domain_lo = None, 0.0
    if rec["phase"] == "logarithmic":
        gam = float(p["alpha"]) - 1.0
        fields: dict[str, Any] = dict(decay_class="logarithmic", gamma=gam,
                      note="alpha <= 1 with lam = 0: no stationary law (docs/specification.md §4)")
        if gam > 0:
            form, domain_lo = (lambda l: A / gam * np.log(l) ** (-gam)), 1.0
            fields.update(form="A/(alpha-1) (ln l)^-(alpha-1)",
                          note=("p(tau) ~ A/(tau (ln tau)^alpha) => f ~ A/(alpha-1) (ln l)^-(alpha-1): "
                                "no constant log-log slope"))
    elif rec["tail_rate"] is None:
        fields = dict(decay_class="exponential",
                      note="no noise: point mass at the equilibrium, f = exp(-l/tau0)")
    else:
        form, domain_lo, fields = _power_law_case(rec, float(eta_j), float(p["alpha"]), A)
    env = AsymptoticEnvelope(**base, **fields, domain_lo=domain_lo, _form=form)
    if form is None:
        return env

    return replace(env, valid_from=unit_crossing(env.raw, domain_lo))
