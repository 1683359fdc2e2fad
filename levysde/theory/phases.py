r"""Characteristic equation, spectral exponent beta*, threshold, critical intensity
and phases (docs/specification.md §4).

.. math::

    \Phi(\beta) = \eta_G \beta^2 + \Psi^*(\beta) - \kappa \beta, \qquad \beta \in [0, \lambda].

:math:`\Phi(0) = 0`, :math:`\Phi'(0) = -\kappa < 0` and :math:`\Phi` is strictly convex, so
:math:`h(\beta) = \Phi(\beta)/\beta` is increasing with :math:`h(0+) = -\kappa`, and the
admissible root :math:`\beta^* \in (0, \lambda)` exists iff :math:`h(\lambda) > 0`, i.e. iff
:math:`\eta_J > \eta_J^*` with

.. math::

    \eta_J^* = \frac{\lambda (\kappa - \eta_G \lambda)}{\Psi_1(\lambda)}, \qquad
    \eta_J^{\mathrm{crit}} = \frac{\kappa - \eta_G}{\Psi_1(1)}
    \quad (\beta^* = 1;\ \text{needs } \lambda > 1).

:math:`\beta^*` is found as the root of :math:`h` on the bracket :math:`(0, \lambda]` (never the
trivial root of :math:`\Phi` at 0): :math:`h(0+) = -\kappa` is passed to the solver as a known
end value.

Every function is vectorised: parameters broadcast (numpy rules).
``precision="mp"`` solves each equation with mpmath (``dps`` digits) from the
closed form, for work close to the boundaries (:math:`\beta^* \to 0`, :math:`\beta^* \to \lambda`,
:math:`\eta_J \to \eta_J^*`); the result is rounded to float64.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray

from levysde.core.jsonable import finite_or_none
from levysde.core.validate import check_choice, check_int, check_real
from levysde.theory import levy
from levysde.theory.params import DEFAULTS, SDEParams, check_param
from levysde.theory.roots import chandrupatla

__all__ = ["phi", "beta_star", "eta_j_star", "eta_j_critical", "classify", "tail_rate",
           "PhaseResult", "PHASES", "CRITICAL_TOL"]

#: phase labels (docs/specification.md §4 table)
PHASES = ("collapsed", "concentrated", "critical", "broad", "logarithmic")

#: default tolerance for "critical": |beta* - 1| <= CRITICAL_TOL. beta* is computed
#: to a few ulps, so this only absorbs the rounding of eta_J^crit itself
#: (d beta*/d eta_J is O(1) near the critical manifold for the defaults).
CRITICAL_TOL = 1e-9


def _params(eta_j, eta_g, kappa, alpha, lam):
    """The checked, broadcast parameters; from ``eta_j`` when it is an :class:`SDEParams`, when
    the others must be left at their defaults (the default objects of the signatures, DEFAULTS)
    -- a TypeError names those passed, which the SDEParams would silently override."""
    if isinstance(eta_j, SDEParams):
        given = [n for n, v in (("eta_g", eta_g), ("kappa", kappa), ("alpha", alpha), ("lam", lam))
                 if v is not DEFAULTS[n]]
        if given:
            raise TypeError(f"{', '.join(given)} cannot be passed with an SDEParams (it holds every "
                            f"parameter: use dataclasses.replace(params, ...) to change one)")
        p = eta_j
        eta_j, eta_g, kappa, alpha, lam = p.eta_j, p.eta_g, p.kappa, p.alpha, p.lam
    vals = [check_param(n, v) for n, v in
            (("eta_j", eta_j), ("eta_g", eta_g), ("kappa", kappa), ("alpha", alpha), ("lam", lam))]
    return np.broadcast_arrays(*vals)


def _check_precision(precision, dps=40) -> int:
    """ValueError naming ``precision`` unless "double" or "mp", or ``dps`` unless an integer in
    [20, 10000]; returns dps as an int."""
    check_choice("precision", precision, ("double", "mp"))
    return check_int("dps", dps, 20, 10000)


def _out(arr):
    arr = np.asarray(arr)
    return arr[()] if arr.ndim == 0 else arr


def phi(beta: ArrayLike, eta_j: ArrayLike | SDEParams, eta_g: ArrayLike = DEFAULTS["eta_g"],
        kappa: ArrayLike = DEFAULTS["kappa"], alpha: ArrayLike = DEFAULTS["alpha"],
        lam: ArrayLike = DEFAULTS["lam"]) -> float | NDArray[np.float64]:
    r"""Phi(beta) = eta_G beta^2 + Psi*(beta) - kappa beta (docs/specification.md §4).

    Parameters
    ----------
    beta : array_like
        Real argument; the result is finite on |beta| <= lam and +inf beyond (eta_J > 0).
    eta_j : array_like or SDEParams
        Jump intensity eta_J >= 0. An :class:`~levysde.theory.params.SDEParams` gives every
        parameter at once (passing the others too is a TypeError).
    eta_g : array_like, optional
        Gaussian intensity eta_G >= 0 (default 0.1).
    kappa : array_like, optional
        Restoring plateau kappa > 0 of the drift far left (default 1).
    alpha : array_like, optional
        Stability index alpha in (0, 2) of the jumps (default 1.5).
    lam : array_like, optional
        Exponential tempering lam >= 0; 0 means untempered (default 2). All parameters
        broadcast against each other (numpy rules).

    Returns
    -------
    float or ndarray
        Phi(beta), of the broadcast shape of the arguments.

    Raises
    ------
    ValueError
        If a parameter is out of its range (the message names it and the range), or
        ``beta`` is NaN.
    TypeError
        If an SDEParams is passed together with other parameters.

    Notes
    -----
    .. math::

       \Phi(\beta) = \eta_G\beta^2 + \Psi^*(\beta) - \kappa\beta

    is the exponent with which the forward operator of the SDE, on the far left where the
    drift is the plateau :math:`\kappa`, acts on :math:`e^{\beta\zeta}`.
    Phi(0) = 0, Phi'(0) = -kappa < 0 and Phi is strictly convex; its positive root is
    beta* (docs/specification.md §4). Psi*(beta) = Psi(-beta) is the adjoint symbol
    (:func:`levysde.theory.levy.psi_adjoint`).

    References
    ----------
    .. [1] L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
       Recurrent Neural Networks", arXiv:2606.29519.
    .. [2] J. Spielmann, "Lévy processes and the Cramér-Lundberg tail when no root lies inside the
       domain", arXiv:1709.10295.

    Examples
    --------
    >>> print(phi(0.5, 3.0))
    -0.19263076734581464
    >>> b = beta_star(3.0); print(abs(float(phi(b, 3.0))) < 1e-12)   # beta* is a root
    True
    """
    ej, eg, k, a, lm = _params(eta_j, eta_g, kappa, alpha, lam)
    b = np.asarray(beta, dtype=float)
    jump = levy.psi_adjoint(b, alpha=a, lam=lm, eta_j=ej)
    with np.errstate(over="ignore", invalid="ignore"):
        # beta (eta_G beta - kappa): no inf - inf when both eta_G beta^2 and kappa beta overflow
        out = np.where(np.isinf(jump), jump, b * (eg * b - k) + jump)
    return _out(out)


def _elementwise_mp(fn, arrays, dps):
    """Apply the scalar mpmath function ``fn`` over broadcast float arrays; float64 result."""
    out = np.empty(arrays[0].shape)
    with mpmath.workdps(dps):
        for i in np.ndindex(out.shape):
            out[i] = float(fn(*(mpmath.mpf(float(arr[i])) for arr in arrays)))
    return out


def eta_j_star(eta_g: ArrayLike = DEFAULTS["eta_g"], kappa: ArrayLike = DEFAULTS["kappa"],
               alpha: ArrayLike = DEFAULTS["alpha"], lam: ArrayLike = DEFAULTS["lam"], *,
               precision: str = "double", dps: int = 40) -> float | NDArray[np.float64]:
    r"""Threshold eta_J* = lam (kappa - eta_G lam) / Psi_1(lam) (docs/specification.md §4).

    An admissible root beta* in (0, lam) exists iff eta_J > eta_J*.

    Parameters
    ----------
    eta_g, kappa, alpha, lam : array_like, optional
        Gaussian intensity (>= 0, default 0.1), plateau (> 0, default 1), stability index
        (in (0, 2), default 1.5) and tempering (>= 0, default 2); they broadcast.
    precision : {"double", "mp"}, optional
        "double" (default): vectorised, a few ulps. "mp": mpmath with ``dps`` digits,
        elementwise and slow, rounded to float64 (for work close to the boundaries).
    dps : int, optional
        Decimal digits of ``precision="mp"``, in [20, 10000] (default 40).

    Returns
    -------
    float or ndarray
        eta_J*, of the broadcast shape; NaN where lam = 0 (untempered: no exponential-tail
        regime, the threshold is undefined). A value <= 0 means that Gaussian noise alone
        sustains the extended regime (kappa/eta_G < lam).

    Raises
    ------
    ValueError
        If a parameter is out of its range, or ``precision``/``dps`` is invalid.

    Notes
    -----
    .. math::

       \eta_J^* = \frac{\lambda(\kappa - \eta_G\lambda)}{\Psi_1(\lambda)}, \qquad
       \Psi_1(\lambda) = \frac{(2\lambda)^\alpha - 2\lambda^\alpha}{-2\cos(\pi\alpha/2)}

    Psi_1(lam) is the symbol of unit intensity at beta = lam (alpha = 1: 2 lam ln 2 / pi);
    eta_J* makes Phi(lam) = 0 (docs/specification.md §4).

    References
    ----------
    .. [1] L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
       Recurrent Neural Networks", arXiv:2606.29519.
    .. [2] J. Spielmann, "Lévy processes and the Cramér-Lundberg tail when no root lies inside the
       domain", arXiv:1709.10295.

    Examples
    --------
    >>> print(eta_j_star())
    0.9656854249492379
    >>> print(eta_j_star(kappa=2.0, lam=3.0))
    1.6755175514109308
    """
    dps = _check_precision(precision, dps)
    _, eg, k, a, lm = _params(0.0, eta_g, kappa, alpha, lam)
    pos = lm > 0
    if precision == "mp":
        lm1 = np.where(pos, lm, 1.0)
        val = _elementwise_mp(lambda g, kk, aa, ll: ll * (kk - g * ll) / levy.psi_mp(ll, alpha=aa, lam=ll, dps=dps),
                              (eg, k, a, lm1), dps)
    else:
        # lam (kappa - eta_G lam)/Psi_1(lam), written with Psi_1(lam)/lam (no overflow of lam^alpha)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lm1 = np.where(pos, lm, 1.0)
            val = (k - eg * lm) / levy.psi_unit_over_beta(lm1, alpha=a, lam=lm1)
    return _out(np.where(pos, val, np.nan))


def eta_j_critical(eta_g: ArrayLike = DEFAULTS["eta_g"], kappa: ArrayLike = DEFAULTS["kappa"],
                   alpha: ArrayLike = DEFAULTS["alpha"], lam: ArrayLike = DEFAULTS["lam"], *,
                   precision: str = "double", dps: int = 40) -> float | NDArray[np.float64]:
    r"""Critical intensity eta_J^crit = (kappa - eta_G)/Psi_1(1), where beta* = 1 (docs/specification.md §4).

    Below it (and above eta_J*) the spectrum is concentrated (beta* > 1, finite mean time
    scale); above it, broad (beta* < 1).

    Parameters
    ----------
    eta_g, kappa, alpha, lam : array_like, optional
        Gaussian intensity (>= 0, default 0.1), plateau (> 0, default 1), stability index
        (in (0, 2), default 1.5) and tempering (>= 0, default 2); they broadcast.
    precision : {"double", "mp"}, optional
        "double" (default): vectorised, a few ulps. "mp": mpmath with ``dps`` digits,
        elementwise and slow, rounded to float64 (for work close to the boundaries).
    dps : int, optional
        Decimal digits of ``precision="mp"``, in [20, 10000] (default 40).

    Returns
    -------
    float or ndarray
        eta_J^crit, of the broadcast shape. NaN where lam <= 1 (beta = 1 must lie inside
        (0, lam)); negative when eta_G > kappa (the Gaussian part alone already gives
        beta* < 1); +inf when Psi_1(1) underflows to 0 (alpha -> 0).

    Raises
    ------
    ValueError
        If a parameter is out of its range, or ``precision``/``dps`` is invalid.

    Notes
    -----
    :math:`\Phi(1) = 0` gives

    .. math::

       \eta_J^{\mathrm{crit}} = \frac{\kappa - \eta_G}{\Psi_1(1)}

    (docs/specification.md §4); at :math:`\beta^* = 1` the mean time scale
    :math:`\int \tau\,p(\tau)\,d\tau` changes from finite to infinite.

    References
    ----------
    .. [1] L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
       Recurrent Neural Networks", arXiv:2606.29519.
    .. [2] J. Spielmann, "Lévy processes and the Cramér-Lundberg tail when no root lies inside the
       domain", arXiv:1709.10295.

    Examples
    --------
    >>> print(eta_j_critical())
    2.3600899638688966
    >>> print(beta_star(eta_j_critical()))   # beta* = 1 there
    1.0
    """
    dps = _check_precision(precision, dps)
    _, eg, k, a, lm = _params(0.0, eta_g, kappa, alpha, lam)
    ok = lm > 1
    lm2 = np.where(ok, lm, 2.0)
    if precision == "mp":
        val = _elementwise_mp(lambda g, kk, aa, ll: (kk - g) / levy.psi_mp(1, alpha=aa, lam=ll, dps=dps),
                              (eg, k, a, lm2), dps)
    else:
        with np.errstate(all="ignore"):
            val = (k - eg) / levy.psi_unit_over_beta(1.0, alpha=a, lam=lm2)
            val = np.where(np.isnan(val), 0.0, val)      # (kappa - eta_G) = 0 over 0
    return _out(np.where(ok, val, np.nan))


def _h(beta, ej, eg, k, a, lm):
    """Phi(beta)/beta for 0 < beta <= lam (no cancellation at small beta); its limit -kappa
    at beta <= 0 (a bracket end that underflowed to 0), and no 0 * inf where eta_J = 0."""
    with np.errstate(invalid="ignore", over="ignore"):
        jump = np.where(ej == 0.0, 0.0, ej * levy.psi_unit_over_beta(beta, alpha=a, lam=lm))
        return np.where(np.asarray(beta) > 0, eg * beta - k + jump, -k)


def _beta_star_mp(ej, eg, k, a, lm, guess, dps):
    """Bisection in mpmath on h = Phi/beta from the specification's closed form, to ~dps digits.

    Starts from a +-2^-30 relative bracket around the double-precision root and
    falls back to the whole bracket (0, lam] if that does not enclose a sign
    change. Bisection cannot fail, also when beta* lies within 1e-60 of lam.
    """
    with mpmath.workdps(dps + 10):
        ej, eg, k, a, lm = (mpmath.mpf(float(v)) for v in (ej, eg, k, a, lm))

        def h(b):
            return eg * b - k + levy.psi_mp(b, alpha=a, lam=lm, eta_j=ej, dps=dps + 10) / b

        g = mpmath.mpf(float(guess))
        lo, hi = g * (1 - mpmath.mpf(2) ** -30), min(g * (1 + mpmath.mpf(2) ** -30), lm)
        if not (h(lo) < 0 and (hi == lm or h(hi) > 0)):
            lo, hi = lm * mpmath.mpf(2) ** -200, lm
        stop = hi * mpmath.mpf(2) ** -(int(3.33 * dps) + 8)
        while hi - lo > stop:
            mid = (lo + hi) / 2
            if h(mid) < 0:
                lo = mid
            else:
                hi = mid
        return float((lo + hi) / 2)


def beta_star(eta_j: ArrayLike | SDEParams, eta_g: ArrayLike = DEFAULTS["eta_g"],
              kappa: ArrayLike = DEFAULTS["kappa"], alpha: ArrayLike = DEFAULTS["alpha"],
              lam: ArrayLike = DEFAULTS["lam"], *, precision: str = "double",
              dps: int = 40) -> float | NDArray[np.float64]:
    r"""Spectral exponent beta*: the root of Phi(beta)/beta on (0, lam] (docs/specification.md §4).

    Parameters
    ----------
    eta_j : array_like or SDEParams
        Jump intensity eta_J >= 0. An :class:`~levysde.theory.params.SDEParams` gives every
        parameter at once (passing the others too is a TypeError).
    eta_g : array_like, optional
        Gaussian intensity eta_G >= 0 (default 0.1).
    kappa : array_like, optional
        Restoring plateau kappa > 0 of the drift far left (default 1).
    alpha : array_like, optional
        Stability index alpha in (0, 2) of the jumps (default 1.5).
    lam : array_like, optional
        Exponential tempering lam >= 0; 0 means untempered (default 2). All parameters
        broadcast against each other (numpy rules).
    precision : {"double", "mp"}, optional
        "double" (default): vectorised, a few ulps. "mp": mpmath with ``dps`` digits,
        elementwise and slow, rounded to float64 (for work close to the boundaries).
    dps : int, optional
        Decimal digits of ``precision="mp"``, in [20, 10000] (default 40).

    Returns
    -------
    float or ndarray
        beta* in (0, lam], of the broadcast shape. NaN marks "no admissible root":
        eta_J <= eta_J* (collapsed phase) or lam = 0; :func:`classify` reports the phase and
        the tail rate there.

    Raises
    ------
    ValueError
        If a parameter is out of its range (the message names it and the range), or
        ``precision``/``dps`` is invalid.
    TypeError
        If an SDEParams is passed together with other parameters.

    Notes
    -----
    .. math::

       \beta^* \in (0, \lambda]: \quad
       h(\beta^*) = \frac{\Phi(\beta^*)}{\beta^*}
       = \eta_G\beta^* - \kappa + \eta_J\,\frac{\Psi_1(\beta^*)}{\beta^*} = 0.

    h(beta) = Phi(beta)/beta is increasing with h(0+) = -kappa, so the root is bracketed
    in (0, lam] and found by Chandrupatla's method (:func:`levysde.theory.roots.chandrupatla`)
    from bounds of Psi_1(b)/b; never the trivial root of Phi at 0. The stationary density
    then has the left tail :math:`\rho(\zeta) \sim A e^{\beta^*\zeta}`, i.e. the time-scale
    density :math:`p(\tau) \sim A\,\tau^{-1-\beta^*}` (the specification, §1 and §4).

    References
    ----------
    .. [1] L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
       Recurrent Neural Networks", arXiv:2606.29519.
    .. [2] J. Spielmann, "Lévy processes and the Cramér-Lundberg tail when no root lies inside the
       domain", arXiv:1709.10295.

    Examples
    --------
    >>> print(beta_star(3.0))
    0.8083571464737686
    >>> print(beta_star([0.5, 1.2, 6.0]))   # nan: no admissible root (collapsed)
    [       nan 1.72913775 0.42437325]
    >>> print(beta_star(3.0, precision='mp'))
    0.8083571464737686
    """
    dps = _check_precision(precision, dps)
    ej, eg, k, a, lm = _params(eta_j, eta_g, kappa, alpha, lam)
    shape = ej.shape
    ej, eg, k, a, lm = (v.ravel() for v in (ej, eg, k, a, lm))
    out = np.full(ej.size, np.nan)
    pos = lm > 0
    with np.errstate(all="ignore"):
        h_lam = np.where(pos, _h(np.where(pos, lm, 1.0), ej, eg, k, a, np.where(pos, lm, 1.0)), -np.inf)
    has = pos & (h_lam > 0)
    idx = np.flatnonzero(has)
    if idx.size:
        pe, pg, pk, pa, pl = ej[idx], eg[idx], k[idx], a[idx], lm[idx]

        def f(x, sub):
            return _h(x, pe[sub], pg[sub], pk[sub], pa[sub], pl[sub])

        # Tight bracket from convexity: Psi(b) = sum_k kappa_2k b^2k/(2k)! with kappa_2k > 0, so
        # Var_1 b/2 <= Psi_1(b)/b <= (Psi_1(lam)/lam^2) b on (0, lam]. Hence
        # kappa/(eta_G + eta_J Psi_1(lam)/lam^2) <= beta* <= kappa/(eta_G + eta_J Var_1/2).
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            slope_hi = pg + pe * levy.psi_unit_over_beta(pl, alpha=pa, lam=pl) / pl
            slope_lo = pg + pe * 0.5 * levy.cumulant(2, alpha=pa, lam=pl, eta_j=1.0)
            lo = np.clip(pk / slope_hi * (1 - 1e-12), 0.0, pl)
            hi = np.clip(pk / slope_lo * (1 + 1e-12), 0.0, pl)
            h_lo = np.where(lo > 0, f(np.where(lo > 0, lo, pl), np.arange(idx.size)), -pk)
            h_hi = np.where(hi < pl, f(np.where(hi > 0, hi, pl), np.arange(idx.size)), h_lam[idx])
        bad_lo = ~(h_lo <= 0)          # rounding or underflow: fall back to the end 0+
        lo, h_lo = np.where(bad_lo, 0.0, lo), np.where(bad_lo, -pk, h_lo)
        bad_hi = ~(h_hi >= 0) | ~(hi > 0)
        hi, h_hi = np.where(bad_hi, pl, hi), np.where(bad_hi, h_lam[idx], h_hi)
        with np.errstate(all="ignore"):
            out[idx] = chandrupatla(f, lo, hi, fa=h_lo, fb=h_hi)
        bad = ~((out[idx] > 0) & (out[idx] <= pl))
        if np.any(bad):
            i = idx[np.flatnonzero(bad)[0]]
            raise ValueError(f"beta* is outside the floating-point range for eta_j={ej[i]:g}, eta_g={eg[i]:g}, "
                             f"kappa={k[i]:g}, alpha={a[i]:g}, lam={lm[i]:g}")
        if precision == "mp":
            for i in idx:
                out[i] = _beta_star_mp(ej[i], eg[i], k[i], a[i], lm[i], out[i], dps)
    return _out(out.reshape(shape))


def tail_rate(eta_j: ArrayLike | SDEParams, eta_g: ArrayLike = DEFAULTS["eta_g"],
              kappa: ArrayLike = DEFAULTS["kappa"], alpha: ArrayLike = DEFAULTS["alpha"],
              lam: ArrayLike = DEFAULTS["lam"], **kwargs: Any) -> np.ndarray:
    r"""Exponential rate of the stationary left tail of zeta in every phase (docs/specification.md §4).

    Parameters
    ----------
    eta_j : array_like or SDEParams
        Jump intensity eta_J >= 0. An :class:`~levysde.theory.params.SDEParams` gives every
        parameter at once (passing the others too is a TypeError).
    eta_g : array_like, optional
        Gaussian intensity eta_G >= 0 (default 0.1).
    kappa : array_like, optional
        Restoring plateau kappa > 0 of the drift far left (default 1).
    alpha : array_like, optional
        Stability index alpha in (0, 2) of the jumps (default 1.5).
    lam : array_like, optional
        Exponential tempering lam >= 0; 0 means untempered (default 2). All parameters
        broadcast against each other (numpy rules).
    **kwargs
        ``precision``, ``dps`` and ``critical_tol``, as for :func:`classify`.

    Returns
    -------
    ndarray
        The rate: beta* where it exists; lam in the tempering-limited collapsed phase
        (eta_J > 0); kappa/eta_G when eta_J = 0 (+inf when also eta_G = 0: a point mass);
        0 in the logarithmic phase (lam = 0, eta_J > 0: a sub-exponential tail).

    Raises
    ------
    ValueError
        If a parameter is out of its range (the message names it and the range), or
        ``precision``/``dps`` is invalid.
    TypeError
        If an SDEParams is passed together with other parameters.

    Notes
    -----
    The rate :math:`r` of :math:`\rho(\zeta) \approx e^{r\zeta}` as :math:`\zeta \to -\infty`:

    .. math::

       r = \begin{cases} \beta^* & \eta_J > \eta_J^* \\
                          \lambda & 0 < \eta_J \le \eta_J^*,\ \lambda > 0 \\
                          \kappa/\eta_G & \eta_J = 0 \\
                          0 & \lambda = 0,\ \eta_J > 0 \end{cases}

    (the specification, §4).

    References
    ----------
    .. [1] L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
       Recurrent Neural Networks", arXiv:2606.29519.
    .. [2] J. Spielmann, "Lévy processes and the Cramér-Lundberg tail when no root lies inside the
       domain", arXiv:1709.10295.

    Examples
    --------
    >>> print(tail_rate([0.5, 3.0]))   # lam = 2 when collapsed, beta* otherwise
    [2.         0.80835715]
    """
    return classify(eta_j, eta_g, kappa, alpha, lam, **kwargs).tail_rate


@dataclass(frozen=True)
class PhaseResult:
    """Phase classification of parameter sets (arrays share one broadcast shape).

    Made by :func:`classify`; every field is an ndarray of the parameters' broadcast shape
    (0-d for scalar input). :meth:`records` gives one JSON-ready dict per parameter set.

    Attributes
    ----------
    eta_j, eta_g, kappa, alpha, lam : ndarray of float
        The parameters (jump intensity, Gaussian intensity, restoring plateau, stability
        index, tempering), broadcast.
    beta_star : ndarray of float
        The spectral exponent beta* (:func:`beta_star`); NaN where there is no admissible root
        (collapsed, logarithmic).
    phase : ndarray of str
        One of :data:`PHASES` per parameter set.
    tail_rate : ndarray of float
        Rate of the stationary left tail of zeta (:func:`tail_rate`; +inf: no noise, point
        mass).
    eta_j_star : ndarray of float
        The threshold eta_J* (:func:`eta_j_star`); NaN where lam = 0.
    eta_j_critical : ndarray of float
        The critical intensity eta_J^crit (:func:`eta_j_critical`); NaN where lam <= 1.

    References
    ----------
    The phase table: the specification, §4 (:doc:`/specification`).

    Examples
    --------
    >>> r = classify([0.5, 3.0])
    >>> print(r.phase, r.tail_rate)
    ['collapsed' 'broad'] [2.         0.80835715]
    >>> rec = r.records()[1]
    >>> rec['phase'], round(rec['beta'], 6), round(rec['eta_j_star'], 6)
    ('broad', 0.808357, 0.965685)
    >>> r.records()[0]['beta'] is None          # NaN is written as null
    True
    """

    eta_j: np.ndarray
    eta_g: np.ndarray
    kappa: np.ndarray
    alpha: np.ndarray
    lam: np.ndarray
    beta_star: np.ndarray
    phase: np.ndarray
    tail_rate: np.ndarray
    eta_j_star: np.ndarray
    eta_j_critical: np.ndarray

    def records(self) -> list[dict]:
        """One JSON-ready dict per parameter set (keys of ``levysde phase --json``);
        NaN/inf become None."""

        recs = []
        for i in np.ndindex(np.shape(self.phase)):
            recs.append({
                "eta_j": float(np.asarray(self.eta_j)[i]), "eta_g": float(np.asarray(self.eta_g)[i]),
                "kappa": float(np.asarray(self.kappa)[i]), "alpha": float(np.asarray(self.alpha)[i]),
                "lam": float(np.asarray(self.lam)[i]),
                "beta": finite_or_none(np.asarray(self.beta_star)[i]), "phase": str(np.asarray(self.phase)[i]),
                "eta_j_star": finite_or_none(np.asarray(self.eta_j_star)[i]),
                "eta_j_critical": finite_or_none(np.asarray(self.eta_j_critical)[i]),
                "tail_rate": finite_or_none(np.asarray(self.tail_rate)[i]),
            })
        return recs


def classify(eta_j: ArrayLike | SDEParams, eta_g: ArrayLike = DEFAULTS["eta_g"],
             kappa: ArrayLike = DEFAULTS["kappa"], alpha: ArrayLike = DEFAULTS["alpha"],
             lam: ArrayLike = DEFAULTS["lam"], *, precision: str = "double", dps: int = 40,
             critical_tol: float = CRITICAL_TOL) -> PhaseResult:
    """Phase, beta*, tail rate, eta_J* and eta_J^crit of parameter sets (docs/specification.md §4 table).

    Phases:
      * ``collapsed``: no admissible root (eta_J <= eta_J*, lam > 0; also lam = 0
        with eta_J = 0). Tail rate lam (tempering-limited, eta_J > 0), kappa/eta_G
        (eta_J = 0), +inf (no noise at all: point mass).
      * ``concentrated``: beta* > 1 + critical_tol (finite mean time scale).
      * ``critical``: |beta* - 1| <= critical_tol (default :data:`CRITICAL_TOL` = 1e-9).
      * ``broad``: beta* < 1 - critical_tol (infinite mean time scale).
      * ``logarithmic``: lam = 0 and eta_J > 0 (untempered jumps; tail rate 0).
        A ``RuntimeWarning`` is issued when also alpha <= 1 (no stationary law
        under a bounded drift).

    Parameters
    ----------
    eta_j : array_like or SDEParams
        Jump intensity eta_J >= 0. An :class:`~levysde.theory.params.SDEParams` gives every
        parameter at once (passing the others too is a TypeError).
    eta_g : array_like, optional
        Gaussian intensity eta_G >= 0 (default 0.1).
    kappa : array_like, optional
        Restoring plateau kappa > 0 of the drift far left (default 1).
    alpha : array_like, optional
        Stability index alpha in (0, 2) of the jumps (default 1.5).
    lam : array_like, optional
        Exponential tempering lam >= 0; 0 means untempered (default 2). All parameters
        broadcast against each other (numpy rules).
    precision : {"double", "mp"}, optional
        "double" (default): vectorised, a few ulps. "mp": mpmath with ``dps`` digits,
        elementwise and slow, rounded to float64 (for work close to the boundaries).
    dps : int, optional
        Decimal digits of ``precision="mp"``, in [20, 10000] (default 40).
    critical_tol : float, optional
        Half-width >= 0 of the critical band |beta* - 1| <= critical_tol (default
        :data:`CRITICAL_TOL`).

    Returns
    -------
    PhaseResult
        Phase, beta*, tail rate, eta_J* and eta_J^crit per parameter set, with the
        broadcast parameters.

    Raises
    ------
    ValueError
        If a parameter is out of its range, ``precision``/``dps`` is invalid or
        ``critical_tol < 0``.
    TypeError
        If an SDEParams is passed together with other parameters.

    Warns
    -----
    RuntimeWarning
        When lam = 0 and alpha <= 1 (no stationary law under a bounded drift).

    References
    ----------
    .. [1] L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
       Recurrent Neural Networks", arXiv:2606.29519.
    .. [2] J. Spielmann, "Lévy processes and the Cramér-Lundberg tail when no root lies inside the
       domain", arXiv:1709.10295.

    Examples
    --------
    >>> r = classify([0.5, 1.2, 3.0])
    >>> print(r.phase)
    ['collapsed' 'concentrated' 'broad']
    >>> print(r.beta_star)
    [       nan 1.72913775 0.80835715]
    >>> print(classify(3.0).phase)
    broad
    """
    check_real("critical_tol", critical_tol, 0.0)
    ej, eg, k, a, lm = _params(eta_j, eta_g, kappa, alpha, lam)
    b = np.asarray(beta_star(ej, eg, k, a, lm, precision=precision, dps=dps), dtype=float)
    has = np.isfinite(b)
    untempered = (lm == 0) & (ej > 0)
    if np.any(untempered & (a <= 1)):
        warnings.warn("lam = 0 with alpha <= 1: a bounded drift cannot hold untempered jumps with "
                      "alpha <= 1; no stationary law exists", RuntimeWarning, stacklevel=2)
    phase = np.full(ej.shape, "collapsed", dtype="<U12")
    phase[has & (b > 1 + critical_tol)] = "concentrated"
    phase[has & (b < 1 - critical_tol)] = "broad"
    phase[has & (np.abs(b - 1) <= critical_tol)] = "critical"
    phase[untempered] = "logarithmic"
    with np.errstate(all="ignore"):
        gauss = np.where(eg > 0, k / np.where(eg > 0, eg, 1.0), np.inf)
    rate = np.where(has, b, np.where(untempered, 0.0, np.where(ej > 0, lm, gauss)))
    return PhaseResult(eta_j=ej, eta_g=eg, kappa=k, alpha=a, lam=lm, beta_star=b, phase=phase,
                       tail_rate=rate,
                       eta_j_star=np.asarray(eta_j_star(eg, k, a, lm, precision=precision, dps=dps)),
                       eta_j_critical=np.asarray(eta_j_critical(eg, k, a, lm, precision=precision, dps=dps)))
