r"""The symmetric tempered alpha-stable (CTS) Levy process: Levy density constant,
Laplace exponent ("symbol"), adjoint symbol, characteristic exponent, cumulants.

Conventions (docs/specification.md §2). Levy density, :math:`\alpha \in (0, 2)`,
:math:`\lambda \ge 0`, :math:`\eta_J \ge 0`:

.. math::

    \nu(z) = \eta_J c_\alpha e^{-\lambda |z|} |z|^{-1-\alpha}, \qquad
    c_\alpha = \frac{-1}{2\,\Gamma(-\alpha) \cos(\pi \alpha / 2)}
             = \frac{\Gamma(1 + \alpha) \sin(\pi \alpha / 2)}{\pi}.

With :math:`\lambda = 0`, :math:`E\, e^{i \xi J_t} = e^{-t \eta_J |\xi|^\alpha}` (scipy
``levy_stable``, beta = 0, S1, scale :math:`(\eta_J t)^{1/\alpha}`). The Laplace exponent is

.. math::

    \Psi(\beta) = -\eta_J \frac{(\lambda - \beta)^\alpha + (\lambda + \beta)^\alpha
                  - 2 \lambda^\alpha}{2 \cos(\pi \alpha/2)}

on :math:`|\beta| \le \lambda` and :math:`+\infty` outside; :math:`\alpha = 1` is its
continuous limit.

Numerical method (ours). Write :math:`x = \beta/\lambda`, :math:`\delta = \alpha - 1` and note
:math:`\cos(\pi \alpha/2) = -\sin(\pi \delta/2)`. Then, exactly,

.. math::

    \Psi = \eta_J \lambda^\alpha \, S(x) / D(\delta), \qquad
    S(x) = (1-x)\, g(\operatorname{log1p}(-x)) + (1+x)\, g(\operatorname{log1p}(x)),

    g(L) = \operatorname{expm1}(\delta L)/\delta \quad (= L \text{ at } \delta = 0), \qquad
    D(\delta) = 2 \sin(\pi \delta/2)/\delta = \pi \operatorname{sinc}(\delta/2),

which removes the 0/0 at :math:`\alpha = 1` without any series in :math:`\delta` (continuous in
:math:`\alpha`, exact at :math:`\alpha = 1`). For :math:`x \le 1/4` the even series
:math:`S(x) = 2 \sum_k c_k x^{2k}`, :math:`c_1 = \alpha/2`,
:math:`c_{k+1} = c_k (\alpha-2k)(\alpha-2k-1)/((2k+1)(2k+2))` (all :math:`c_k > 0`) removes the
small-:math:`\beta` cancellation. The characteristic exponent is the same function at
:math:`x = i \xi/\lambda`: the series in :math:`y = x^2 = -(\xi/\lambda)^2` and, beyond, the
complex form :math:`S = 2 \operatorname{Re}[(1 + i u)\, g(\operatorname{Log}(1 + i u))]`; for
:math:`u > 10^4` the same form divided by :math:`\rho^\alpha` (:math:`\rho = |1 + i u|`) and
multiplied back as :math:`\operatorname{hypot}(\lambda, \xi)^\alpha` in log space, so no finite
:math:`\xi` overflows (``char_exponent(1e160, alpha=1.5, lam=2, eta_j=3) = -3e240``). For
:math:`\alpha \le 1/2` the direct forms are taken in :math:`\alpha` instead of :math:`\delta`,
:math:`S = [\operatorname{expm1}(\alpha L_+) + \operatorname{expm1}(\alpha L_-)]/\delta`, which
keeps the :math:`O(\alpha)` value free of cancellation as :math:`\alpha \to 0`. Products
:math:`\eta_J \lambda^\alpha S` that overflow or underflow in floating point are formed in log
space. :math:`c_\alpha` uses the reflected sine :math:`\sin(\pi (2 - \alpha)/2)` for
:math:`\alpha > 1` (full relative accuracy as :math:`\alpha \to 2`).
Relative accuracy about :math:`10^{-15}` over :math:`\alpha \in [10^{-13}, 2 - 10^{-13}]` and
:math:`\beta \in [10^{-8} \lambda, \lambda]` (tests/test_levy.py checks :math:`10^{-12}` against
mpmath quadrature of :math:`\nu` and the closed form at 50-100 digits, :math:`\xi` up to
:math:`10^{300}`).
"""
from __future__ import annotations

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from levysde.core.validate import check_array, check_int
from levysde.theory.params import check_param

__all__ = ["c_alpha", "psi", "psi_adjoint", "psi_unit_over_beta", "char_exponent",
           "variance", "cumulant", "cumulant4", "psi_mp"]

_SERIES_Y = 1.0 / 16.0       # series used for |x|^2 <= 1/16, i.e. |x| <= 1/4
_SERIES_TERMS = 18           # (1/16)^17 < 1e-20: truncation far below rounding
_ALPHA_LOW = 0.5            # alpha <= this: the direct forms in alpha instead of delta = alpha - 1
_U_SCALED = 1e4              # char_exponent: xi/lam beyond this uses the overflow-free scaled form


def _sin_half_pi(a):
    """sin(pi a/2) for a in [0, 2], reflected to a' = min(a, 2 - a) (2 - a is exact for a >= 1
    by Sterbenz's lemma), so that the result keeps full relative accuracy as a -> 2, where
    sin(pi a/2) -> 0 and the naive argument pi a/2 carries an absolute rounding error of ~1e-16."""
    a = np.asarray(a, dtype=float)
    return np.sin(0.5 * np.pi * np.where(a > 1.0, 2.0 - a, a))


def c_alpha(alpha: ArrayLike) -> float | NDArray[np.float64]:
    r"""Normalising constant :math:`c_\alpha` of the Levy density (docs/specification.md §2).

    :math:`c_\alpha = -1/(2\,\Gamma(-\alpha) \cos(\pi \alpha/2))`, evaluated in the
    equivalent form :math:`\Gamma(1+\alpha) \sin(\pi \alpha/2)/\pi` (reflection formula),
    which is regular at :math:`\alpha = 1` (:math:`c_1 = 1/\pi`); the sine is reflected
    (:math:`\sin(\pi \alpha/2) = \sin(\pi (2 - \alpha)/2)`) so that the relative error stays
    :math:`\sim 10^{-16}` up to :math:`\alpha = 2 - 10^{-13}` (:math:`c_\alpha \to 0` linearly
    there).

    Parameters
    ----------
    alpha : array_like
        Stability index, values in (0, 2).

    Returns
    -------
    float or ndarray
        c_alpha > 0, shaped like ``alpha`` (a float for scalar input).

    Raises
    ------
    ValueError
        If alpha is outside (0, 2) or not finite.

    Notes
    -----
    The Lévy density of the specification, §2, is
    :math:`\nu(z) = \eta_J c_\alpha e^{-\lambda|z|}|z|^{-1-\alpha}` with

    .. math::

       c_\alpha = \frac{-1}{2\,\Gamma(-\alpha)\cos(\pi\alpha/2)}
                = \frac{\Gamma(1+\alpha)\sin(\pi\alpha/2)}{\pi}, \qquad c_1 = \frac{1}{\pi},

    chosen so that with :math:`\lambda = 0`,
    :math:`\mathbb{E}\,e^{i\xi J_t} = e^{-t\eta_J|\xi|^\alpha}`. The second form follows from
    the reflection formula :math:`\Gamma(-\alpha)\Gamma(1+\alpha) = -\pi/\sin(\pi\alpha)`.

    References
    ----------
    .. [1] J. Rosiński, "Tempering stable processes", Stochastic Processes and their Applications
       117 (2007) 677-707.
    .. [2] U. Küchler and S. Tappe, "Tempered stable distributions and processes", Stochastic
       Processes and their Applications 123 (2013) 4256-4293.

    Examples
    --------
    >>> print(c_alpha(1.5))
    0.2992067103010745
    >>> print(c_alpha(1.0), 1 / np.pi)
    0.3183098861837907 0.3183098861837907
    """
    a = check_param("alpha", alpha)
    out = special.gamma(1.0 + a) * _sin_half_pi(a) / np.pi
    return out[()] if out.ndim == 0 else out


def _denominator(delta):
    """D(delta) = 2 sin(pi delta/2)/delta = pi sinc(delta/2); D(0) = pi."""
    return np.pi * np.sinc(0.5 * delta)


def _series(y, alpha, *, over_x: bool = False, x=None):
    """sum_k c_k y^k (or its value divided by x, with y = x^2) by Horner; |y| <= 1/16."""
    coef = [0.5 * alpha]
    for k in range(1, _SERIES_TERMS):
        coef.append(coef[-1] * (alpha - 2 * k) * (alpha - 2 * k - 1) / ((2 * k + 1) * (2 * k + 2)))
    acc = coef[-1]
    for c in reversed(coef[:-1]):
        acc = c + y * acc
    return acc * x if over_x else acc * y


def _g(delta, L):
    """expm1(delta L)/delta, and L at delta = 0."""
    safe = np.where(delta == 0.0, 1.0, delta)
    return np.where(delta == 0.0, L, np.expm1(delta * L) / safe)


def _unit_real(x, alpha, *, over_x: bool = False):
    """S(x)/D(delta) for real x in [0, 1] (optionally divided by x).

    Each branch (series for x <= 1/4, direct form beyond) is evaluated only on
    the entries that use it.
    """
    x, alpha = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(alpha, dtype=float))
    out = np.empty(x.shape)
    small = x * x <= _SERIES_Y
    if small.any():
        xs, als = x[small], alpha[small]
        out[small] = 2.0 * _series(xs * xs, als, over_x=over_x, x=xs) / _denominator(als - 1.0)
    big = ~small
    if big.any():
        xb, ab = x[big], alpha[big]
        delta = ab - 1.0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            edge = xb >= 1.0
            lm_, lp_ = np.log1p(-np.where(edge, 0.0, xb)), np.log1p(xb)
            minus = np.where(edge, 0.0, (1.0 - xb) * _g(delta, lm_))
            s_direct = minus + (1.0 + xb) * _g(delta, lp_)
            # alpha <= 1/2: S = [(1+x)^alpha + (1-x)^alpha - 2]/delta = [expm1(alpha L+) +
            # expm1(alpha L-)]/delta; the delta form cancels to O(alpha) there
            s_low = (np.expm1(ab * lp_) + np.where(edge, -1.0, np.expm1(ab * lm_))) / delta
            s_direct = np.where(ab <= _ALPHA_LOW, s_low, s_direct)
        if over_x:
            s_direct = s_direct / xb
        out[big] = s_direct / _denominator(delta)
    return out


def _unit_imag(u, alpha):
    """S(i u)/D(delta) for real u >= 0: the characteristic-exponent analogue (real).

    For u <= _U_SCALED only (u^2 must not overflow); beyond, :func:`_unit_imag_scaled`."""
    delta = alpha - 1.0
    y = -(u * u)
    small = -y <= _SERIES_Y
    with np.errstate(over="ignore", invalid="ignore"):
        s_series = 2.0 * _series(y, alpha)
        a = 0.5 * np.log1p(u * u)           # Log(1 + iu) = a + i b
        b = np.arctan(u)
        da, db = delta * a, delta * b
        safe = np.where(delta == 0.0, 1.0, delta)
        gr = np.where(delta == 0.0, a,
                      (np.expm1(da) * np.cos(db) - 2.0 * np.sin(0.5 * db) ** 2) / safe)
        gi = np.where(delta == 0.0, b, np.exp(da) * np.sin(db) / safe)
        s_direct = 2.0 * (gr - u * gi)      # 2 Re[(1 + iu)(gr + i gi)]
        # alpha <= 1/2: 2 Re[(1 + iu)^alpha - 1 - iu]/delta = 2 Re[expm1(alpha Log(1 + iu))]/delta
        s_low = 2.0 * (np.expm1(alpha * a) * np.cos(alpha * b) - 2.0 * np.sin(0.5 * alpha * b) ** 2) / delta
        s_direct = np.where(alpha <= _ALPHA_LOW, s_low, s_direct)
    return np.where(small, s_series, s_direct) / _denominator(delta)


def _unit_imag_scaled(xi, lam, alpha):
    """S(i u)/(rho^alpha D(delta)) with u = xi/lam, rho = |1 + i u| = hypot(lam, xi)/lam,
    for large u (no overflow for any finite xi, lam > 0).

    From S(iu) = 2 Re[(1 + iu)^alpha - 1 - iu]/delta and Log(1 + iu) = a + i b:
    ``S/rho^alpha = 2 [(-2 sin^2(delta b/2) - expm1(-delta a))/(delta rho) - (u/rho) sin(delta b)/delta]``
    (-> 2 (a - u b)/rho at delta = 0); a = log(hypot(lam, xi)/lam), b = atan2(xi, lam).
    """
    delta = alpha - 1.0
    R = np.hypot(lam, xi)
    inv_rho, u_over_rho = lam / R, xi / R
    a = np.log(R) - np.log(lam)
    b = np.arctan2(xi, lam)
    da, db = delta * a, delta * b
    safe = np.where(delta == 0.0, 1.0, delta)
    # expm1(-delta a)/rho: as exp(-alpha a) - 1/rho where |delta a| > 1 (no cancellation
    # there, and no inf * 0 when rho^(1 - alpha) overflows while 1/rho underflows)
    em = np.where(np.abs(da) <= 1.0, np.expm1(-np.minimum(da, 1.0)) * inv_rho,
                  np.exp(-alpha * a) - inv_rho)
    first = np.where(delta == 0.0, a * inv_rho, (-2.0 * np.sin(0.5 * db) ** 2 * inv_rho - em) / safe)
    second = np.where(delta == 0.0, b, np.sin(db) / safe)
    high = 2.0 * (first - u_over_rho * second)
    # alpha <= 1/2: 2 [cos(alpha b) - rho^-alpha]/delta, no cancellation to O(alpha)
    low = 2.0 * (-2.0 * np.sin(0.5 * alpha * b) ** 2 - np.expm1(-alpha * a)) / delta
    return np.where(alpha <= _ALPHA_LOW, low, high) / _denominator(delta)


def _out(arr):
    return arr[()] if np.ndim(arr) == 0 else arr


def _scale(c, base, power):
    """``c * base**power`` (base >= 0), taken in log space where the direct product
    overflows or underflows although the result is representable (e.g. eta_J = 1e-200
    times lam^alpha = 1e400): ``sign(c) exp(log|c| + power log base)``."""
    c, base, power = np.broadcast_arrays(np.asarray(c, dtype=float), np.asarray(base, dtype=float),
                                         np.asarray(power, dtype=float))
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        direct = c * base ** power
        redo = (~np.isfinite(direct) | ((direct == 0.0) & (c != 0.0) & (base > 0.0))) & ~np.isnan(c)
        if np.any(redo):
            logv = np.log(np.abs(c[redo])) + power[redo] * np.log(base[redo])
            direct = np.array(direct, copy=True)
            direct[redo] = np.sign(c[redo]) * np.exp(logv)
    return direct


def psi(beta: ArrayLike, *, alpha: ArrayLike, lam: ArrayLike, eta_j: ArrayLike = 1.0) -> float | NDArray[np.float64]:
    r"""Laplace exponent :math:`\Psi(\beta) = \log E\, e^{\beta J_1}` of the CTS process (docs/specification.md §2).

    Parameters
    ----------
    beta : array_like
        Real argument; the result is finite exactly on |beta| <= lam.
    alpha : array_like
        Stability index, in (0, 2).
    lam : array_like
        Exponential tempering, >= 0 (0 = untempered).
    eta_j : array_like, optional
        Jump intensity, >= 0 (default 1: the unit symbol Psi_1). All four broadcast
        against each other (numpy rules).

    Returns
    -------
    ndarray (float for scalar input)
        >= 0. +inf for |beta| > lam (the integral diverges although the closed form is
        finite there); with lam = 0, +inf for every beta != 0. eta_J = 0 gives 0 everywhere
        (no jumps). alpha = 1 is the continuous limit ``eta_J [(lam+b) ln(lam+b) + (lam-b)
        ln(lam-b) - 2 lam ln lam]/pi``.

    Raises
    ------
    ValueError
        Naming the parameter when alpha, lam or eta_j is out of range or
        non-finite, or when beta is NaN.

    Notes
    -----
    The specification, §2:

    .. math::

       \Psi(\beta) = \int \left(e^{\beta z} - 1 - \beta z\right)\nu(dz)
       = -\eta_J\,\frac{(\lambda-\beta)^\alpha + (\lambda+\beta)^\alpha - 2\lambda^\alpha}
                         {2\cos(\pi\alpha/2)}, \qquad |\beta| \le \lambda,

    evaluated as :math:`\eta_J\lambda^\alpha S(x)/D(\alpha - 1)`, :math:`x = \beta/\lambda`
    (module docstring), which is exact at :math:`\alpha = 1` and free of the small-:math:`\beta`
    cancellation; relative accuracy about :math:`10^{-15}` (checked against mpmath in
    ``tests/test_levy.py``).

    References
    ----------
    .. [1] J. Rosiński, "Tempering stable processes", Stochastic Processes and their Applications
       117 (2007) 677-707.
    .. [2] U. Küchler and S. Tappe, "Tempered stable distributions and processes", Stochastic
       Processes and their Applications 123 (2013) 4256-4293.

    Examples
    --------
    >>> print(psi(0.5, alpha=1.5, lam=2.0, eta_j=3.0))
    0.28236923265418534
    >>> print(psi(2.5, alpha=1.5, lam=2.0))   # outside |beta| <= lam
    inf
    """
    b = np.abs(check_array("beta", beta, allow_inf=True))
    a = check_param("alpha", alpha)
    lm = check_param("lam", lam)
    ej = check_param("eta_j", eta_j)
    b, a, lm, ej = np.broadcast_arrays(b, a, lm, ej)
    pos = lm > 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = np.where(pos, b / np.where(pos, lm, 1.0), 0.0)
        inside = pos & (x <= 1.0)
        xs = np.where(inside, x, 0.0)
        val = _scale(ej * _unit_real(xs, a), lm, a)
    out = np.where(inside, val, np.where(b == 0.0, 0.0, np.inf))
    out = np.where(ej == 0.0, 0.0, out)
    return _out(out)


def psi_adjoint(beta: ArrayLike, *, alpha: ArrayLike, lam: ArrayLike,
                eta_j: ArrayLike = 1.0) -> float | NDArray[np.float64]:
    r"""Adjoint symbol :math:`\Psi^*(\beta) = \Psi(-\beta)` (docs/specification.md §2).

    The forward (Fokker-Planck) jump operator acts on :math:`e^{\beta \zeta}` as
    multiplication by :math:`\Psi^*(\beta)`. For the symmetric CTS process
    :math:`\Psi^* = \Psi`; the
    name is kept apart so that an asymmetric extension changes only :func:`psi`.

    Parameters
    ----------
    beta : array_like
        Real argument; finite result exactly on |beta| <= lam.
    alpha : array_like
        Stability index, in (0, 2).
    lam : array_like
        Exponential tempering, >= 0.
    eta_j : array_like, optional
        Jump intensity, >= 0 (default 1). All four broadcast.

    Returns
    -------
    float or ndarray
        :math:`\Psi(-\beta) \ge 0`; +inf outside :math:`|\beta| \le \lambda`, as in :func:`psi`.

    Raises
    ------
    ValueError
        As in :func:`psi`.

    Notes
    -----
    For a Lévy measure :math:`\nu`, the adjoint of the jump generator,
    :math:`\mathcal{L}^*\rho(\zeta) = \int [\rho(\zeta - z) - \rho(\zeta) + z\rho'(\zeta)]\,\nu(dz)`,
    maps :math:`e^{\beta\zeta}` to :math:`\Psi(-\beta)\,e^{\beta\zeta}`; the characteristic
    equation of the specification, §4, uses it.

    References
    ----------
    .. [1] J. Rosiński, "Tempering stable processes", Stochastic Processes and their Applications
       117 (2007) 677-707.
    .. [2] U. Küchler and S. Tappe, "Tempered stable distributions and processes", Stochastic
       Processes and their Applications 123 (2013) 4256-4293.

    Examples
    --------
    >>> print(psi_adjoint(0.5, alpha=1.5, lam=2.0, eta_j=3.0) == psi(-0.5, alpha=1.5, lam=2.0, eta_j=3.0))
    True
    """
    return psi(-np.asarray(check_array("beta", beta, allow_inf=True)), alpha=alpha, lam=lam, eta_j=eta_j)


def psi_unit_over_beta(beta: ArrayLike, *, alpha: ArrayLike, lam: ArrayLike) -> float | NDArray[np.float64]:
    r""":math:`\Psi_1(\beta)/\beta` for :math:`0 < \beta \le \lambda`, without cancellation.

    Used by the characteristic-equation solver (docs/specification.md §4):
    :math:`\Phi(\beta)/\beta = \eta_G \beta - \kappa + \eta_J \Psi_1(\beta)/\beta`. Behaves like
    :math:`\alpha \lambda^{\alpha-2} \beta / D(\alpha-1)` as :math:`\beta \to 0` (:math:`D` as in
    the module docstring). Arguments broadcast; no validation (internal hot path: callers
    validate). Entries with :math:`\beta` outside :math:`(0, \lambda]` are returned as
    :math:`+\infty`.

    Parameters
    ----------
    beta : array_like
        Argument, in (0, lam].
    alpha : array_like
        Stability index, in (0, 2) (not checked).
    lam : array_like
        Tempering, > 0 (not checked). All three broadcast.

    Returns
    -------
    float or ndarray
        :math:`\Psi_1(\beta)/\beta > 0` (the unit symbol, :math:`\eta_J = 1`), +inf where
        ``beta`` is not in (0, lam] or lam <= 0.

    Notes
    -----
    With :math:`x = \beta/\lambda`, :math:`\Psi_1(\beta)/\beta = \lambda^{\alpha-1}\,S(x)/(x\,D(\alpha-1))`;
    for :math:`x \le 1/4` the series :math:`S(x)/x = 2\sum_k c_k x^{2k-1}` is summed, so the
    ratio keeps full relative accuracy as :math:`\beta \to 0`, where it tends to 0 linearly.

    References
    ----------
    .. [1] J. Rosiński, "Tempering stable processes", Stochastic Processes and their Applications
       117 (2007) 677-707.
    .. [2] U. Küchler and S. Tappe, "Tempered stable distributions and processes", Stochastic
       Processes and their Applications 123 (2013) 4256-4293.

    Examples
    --------
    >>> print(psi_unit_over_beta(0.5, alpha=1.5, lam=2.0), psi(0.5, alpha=1.5, lam=2.0) / 0.5)
    0.18824615510279022 0.18824615510279022
    """
    b = np.asarray(beta, dtype=float)
    a = np.asarray(alpha, dtype=float)
    lm = np.asarray(lam, dtype=float)
    ok = (b > 0) & (lm > 0) & (b <= lm)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = np.where(ok, b / np.where(lm > 0, lm, 1.0), 0.5)
        val = lm ** (a - 1.0) * _unit_real(x, a, over_x=True)
    return _out(np.where(ok, val, np.inf))


def char_exponent(xi: ArrayLike, *, alpha: ArrayLike, lam: ArrayLike,
                  eta_j: ArrayLike = 1.0) -> float | NDArray[np.float64]:
    r"""Characteristic exponent :math:`\log E\, e^{i \xi J_1}` (docs/specification.md §2).

    .. math::

        -\eta_J \frac{(\lambda - i \xi)^\alpha + (\lambda + i \xi)^\alpha - 2 \lambda^\alpha}
        {2 \cos(\pi \alpha/2)},

    which is real (the process is symmetric) and :math:`\le 0`; with :math:`\lambda = 0` it is
    :math:`-\eta_J |\xi|^\alpha` (the normalisation of docs/specification.md §2);
    :math:`\alpha = 1` is the continuous limit
    :math:`-\eta_J [2 \xi \arctan(\xi/\lambda) - \lambda \ln(1 + \xi^2/\lambda^2)]/\pi`.

    Parameters
    ----------
    xi : array_like
        Real frequencies.
    alpha, lam, eta_j : array_like
        Stability index in (0, 2), tempering >= 0 and intensity >= 0 (default 1), as in
        :func:`psi`; all broadcast.

    Returns
    -------
    float or ndarray
        The exponent, real and <= 0 (the imaginary part is exactly 0), broadcast shape.

    Raises
    ------
    ValueError
        As in :func:`psi` (naming ``xi`` when it is NaN).

    Notes
    -----
    The specification, §2:

    .. math::

       \log\mathbb{E}\,e^{i\xi J_1} = -\eta_J\,
       \frac{(\lambda-i\xi)^\alpha + (\lambda+i\xi)^\alpha - 2\lambda^\alpha}{2\cos(\pi\alpha/2)},

    i.e. :math:`\Psi` at :math:`\beta = i\xi`; for :math:`\xi/\lambda > 10^4` it is evaluated
    scaled by :math:`|\lambda + i\xi|^\alpha` in log space, so no finite :math:`\xi` overflows.

    References
    ----------
    .. [1] J. Rosiński, "Tempering stable processes", Stochastic Processes and their Applications
       117 (2007) 677-707.
    .. [2] U. Küchler and S. Tappe, "Tempered stable distributions and processes", Stochastic
       Processes and their Applications 123 (2013) 4256-4293.

    Examples
    --------
    >>> print(char_exponent(1.0, alpha=1.5, lam=2.0, eta_j=3.0))
    -1.1085786516409837
    >>> print(char_exponent(1.0, alpha=1.5, lam=0.0, eta_j=3.0))   # untempered: -eta_J |xi|^alpha
    -3.0
    """
    u0 = np.abs(check_array("xi", xi, allow_inf=True))
    a = check_param("alpha", alpha)
    lm = check_param("lam", lam)
    ej = check_param("eta_j", eta_j)
    u0, a, lm, ej = np.broadcast_arrays(u0, a, lm, ej)
    pos = lm > 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lm1 = np.where(pos, lm, 1.0)
        u = np.where(pos, u0 / lm1, 0.0)
        big = u > _U_SCALED
        near = _scale(ej * _unit_imag(np.where(big, 0.0, u), a), lm, a)
        far = _scale(ej * _unit_imag_scaled(u0, lm1, a), np.hypot(lm1, u0), a)
        tempered = np.where(big, far, near)
        stable = _scale(-ej, u0, a)
    out = np.where(pos, tempered, stable)
    return _out(np.where(ej == 0.0, 0.0, out))


def cumulant(n: int, *, alpha: ArrayLike, lam: ArrayLike, eta_j: ArrayLike = 1.0) -> float | NDArray[np.float64]:
    r""":math:`n`-th cumulant of :math:`J_1` (docs/specification.md §2): the :math:`n`-th moment of the Levy measure.

    .. math::

        \kappa_n = \int z^n \nu(dz) = 2 \eta_J c_\alpha \Gamma(n - \alpha) \lambda^{\alpha - n}

    for even :math:`n \ge 2`, and 0 for odd :math:`n` (symmetry). This product form has no 0/0
    at :math:`\alpha = 1` (it equals the specification's
    :math:`-\eta_J \alpha(\alpha-1) \cdots \lambda^{\alpha-n}/\cos(\pi \alpha/2)`).

    Parameters
    ----------
    n : int
        Order of the cumulant, >= 1.
    alpha, lam, eta_j : array_like
        Stability index in (0, 2), tempering >= 0 and intensity >= 0 (default 1), as in
        :func:`psi`; they broadcast.

    Returns
    -------
    float or ndarray
        The cumulant, broadcast shape; 0 for odd n; +inf for even n when lam = 0 and
        eta_J > 0 (no finite moments).

    Raises
    ------
    ValueError
        For n < 1 or out-of-range parameters.

    Notes
    -----
    .. math::

       k_n = \int z^n\,\nu(dz) = 2\eta_J c_\alpha\,\Gamma(n-\alpha)\,\lambda^{\alpha-n}
       \quad (n \text{ even}),

    the :math:`n`-th derivative of :math:`\Psi` at 0; with :math:`c_\alpha` of :func:`c_alpha`
    it equals the specification's (§2)
    :math:`-\eta_J\,\alpha(\alpha-1)\cdots(\alpha-n+1)\lambda^{\alpha-n}/\cos(\pi\alpha/2)`.

    References
    ----------
    .. [1] J. Rosiński, "Tempering stable processes", Stochastic Processes and their Applications
       117 (2007) 677-707.
    .. [2] U. Küchler and S. Tappe, "Tempered stable distributions and processes", Stochastic
       Processes and their Applications 123 (2013) 4256-4293.

    Examples
    --------
    >>> print(cumulant(2, alpha=1.5, lam=2.0, eta_j=3.0), variance(alpha=1.5, lam=2.0, eta_j=3.0))
    2.25 2.25
    >>> print(cumulant(3, alpha=1.5, lam=2.0))   # symmetric: odd cumulants vanish
    0.0
    """
    n = check_int("n", n, 1)
    a = check_param("alpha", alpha)
    lm = check_param("lam", lam)
    ej = check_param("eta_j", eta_j)
    a, lm, ej = np.broadcast_arrays(a, lm, ej)
    if n % 2:
        return _out(np.zeros(a.shape))
    with np.errstate(divide="ignore", over="ignore", under="ignore"):
        val = np.where(lm > 0, _scale(2.0 * ej * c_alpha(a) * special.gamma(n - a), lm, a - n), np.inf)
    return _out(np.where(ej == 0.0, 0.0, val))


def variance(*, alpha: ArrayLike, lam: ArrayLike, eta_j: ArrayLike = 1.0) -> float | NDArray[np.float64]:
    r"""Variance of :math:`J_1`, :math:`\Psi''(0)` (docs/specification.md §2). See :func:`cumulant` (n = 2).

    At :math:`\alpha = 1` it equals :math:`2 \eta_J/(\pi \lambda)`; :math:`+\infty` when
    :math:`\lambda = 0`.

    Parameters
    ----------
    alpha : array_like
        Stability index, in (0, 2).
    lam : array_like
        Tempering, >= 0.
    eta_j : array_like, optional
        Jump intensity, >= 0 (default 1). All three broadcast.

    Returns
    -------
    float or ndarray
        :math:`\operatorname{Var} J_1 \ge 0`, broadcast shape; +inf when lam = 0 and eta_j > 0.

    Raises
    ------
    ValueError
        Naming a parameter out of its range.

    Notes
    -----
    .. math::

       \operatorname{Var} J_1 = \Psi''(0)
       = -\eta_J\,\frac{\alpha(\alpha-1)\lambda^{\alpha-2}}{\cos(\pi\alpha/2)}
       = 2\eta_J c_\alpha\,\Gamma(2-\alpha)\,\lambda^{\alpha-2}

    (the specification, §2).

    References
    ----------
    .. [1] J. Rosiński, "Tempering stable processes", Stochastic Processes and their Applications
       117 (2007) 677-707.
    .. [2] U. Küchler and S. Tappe, "Tempered stable distributions and processes", Stochastic
       Processes and their Applications 123 (2013) 4256-4293.

    Examples
    --------
    >>> print(variance(alpha=1.5, lam=2.0, eta_j=3.0))
    2.25
    """
    return cumulant(2, alpha=alpha, lam=lam, eta_j=eta_j)


def cumulant4(*, alpha: ArrayLike, lam: ArrayLike, eta_j: ArrayLike = 1.0) -> float | NDArray[np.float64]:
    r"""Fourth cumulant of :math:`J_1` (docs/specification.md §2). See :func:`cumulant` (n = 4).

    At :math:`\alpha = 1` it equals :math:`4 \eta_J/(\pi \lambda^3)`; :math:`+\infty` when
    :math:`\lambda = 0`.

    Parameters
    ----------
    alpha : array_like
        Stability index, in (0, 2).
    lam : array_like
        Tempering, >= 0.
    eta_j : array_like, optional
        Jump intensity, >= 0 (default 1). All three broadcast.

    Returns
    -------
    float or ndarray
        :math:`k_4 \ge 0`, broadcast shape; +inf when lam = 0 and eta_j > 0.

    Raises
    ------
    ValueError
        Naming a parameter out of its range.

    Notes
    -----
    .. math::

       k_4 = -\eta_J\,\frac{\alpha(\alpha-1)(\alpha-2)(\alpha-3)\lambda^{\alpha-4}}{\cos(\pi\alpha/2)}
           = 2\eta_J c_\alpha\,\Gamma(4-\alpha)\,\lambda^{\alpha-4}

    (the specification, §2); the excess kurtosis of :math:`J_t` is :math:`k_4/(t\,\mathrm{Var}^2)`.

    References
    ----------
    .. [1] J. Rosiński, "Tempering stable processes", Stochastic Processes and their Applications
       117 (2007) 677-707.
    .. [2] U. Küchler and S. Tappe, "Tempered stable distributions and processes", Stochastic
       Processes and their Applications 123 (2013) 4256-4293.

    Examples
    --------
    >>> print(cumulant4(alpha=1.5, lam=2.0, eta_j=3.0))
    0.421875
    """
    return cumulant(4, alpha=alpha, lam=lam, eta_j=eta_j)


def psi_mp(beta: float | str | mpmath.mpf, *, alpha: float | str | mpmath.mpf, lam: float | str | mpmath.mpf,
           eta_j: float | str | mpmath.mpf = 1, dps: int = 40) -> mpmath.mpf:
    r""":math:`\Psi(\beta)` in mpmath arithmetic from the closed form of docs/specification.md §2 (scalar).

    The working precision is raised above ``dps`` by the number of digits lost
    to cancellation (about :math:`2 \log_{10}(\lambda/\beta) + \log_{10}(1/|\alpha-1|)`), so the value computed
    carries ``dps`` correct digits. alpha == 1 uses the alpha = 1 formula. An independent
    reference for :func:`psi` (tests) and the high-precision path of
    :mod:`levysde.theory.phases`.

    Parameters
    ----------
    beta : float, str or mpmath.mpf
        Real argument (a string such as ``"0.1"`` is read exactly at mpmath precision).
    alpha : float, str or mpmath.mpf
        Stability index, in (0, 2).
    lam : float, str or mpmath.mpf
        Tempering, finite and >= 0.
    eta_j : float, str or mpmath.mpf, optional
        Jump intensity, >= 0 (default 1).
    dps : int, optional
        Correct decimal digits wanted, an integer >= 1 (default 40).

    Returns
    -------
    mpmath.mpf
        :math:`\Psi(\beta)`; 0 for beta = 0 or eta_j = 0, ``+inf`` for lam = 0 or
        :math:`|\beta| > \lambda`. The number carries ``dps`` digits whatever the caller's
        ``mpmath.mp.dps`` (arithmetic on it afterwards is at the caller's precision).

    Raises
    ------
    ValueError
        If ``alpha`` is not in (0, 2), ``lam`` or ``eta_j`` is not a finite real >= 0,
        ``beta`` is not a finite real (NaN included), or ``dps`` is not an integer >= 1.

    Notes
    -----
    For :math:`\alpha \ne 1` the closed form
    :math:`-\eta_J[(\lambda-\beta)^\alpha + (\lambda+\beta)^\alpha - 2\lambda^\alpha]/(2\cos(\pi\alpha/2))`;
    at :math:`\alpha = 1`,
    :math:`\eta_J[(\lambda+\beta)\ln(\lambda+\beta) + (\lambda-\beta)\ln(\lambda-\beta) - 2\lambda\ln\lambda]/\pi`
    (the specification, §2).

    References
    ----------
    .. [1] J. Rosiński, "Tempering stable processes", Stochastic Processes and their Applications
       117 (2007) 677-707.
    .. [2] U. Küchler and S. Tappe, "Tempered stable distributions and processes", Stochastic
       Processes and their Applications 123 (2013) 4256-4293.

    Examples
    --------
    >>> print(mpmath.nstr(psi_mp(0.5, alpha=1.5, lam=2.0, eta_j=3.0, dps=30), 25))
    0.2823692326541852719711555
    """
    dps = check_int("dps", dps, 1)
    with mpmath.workdps(dps + 20):
        def real(name, value, lo, hi, lo_open, rng):
            try:
                v = mpmath.mpf(value)
            except (TypeError, ValueError):
                raise ValueError(f"{name} must be a real number {rng}, got {value!r}") from None
            if not mpmath.isfinite(v) or (lo is not None and (v <= lo if lo_open else v < lo)) \
                    or (hi is not None and v >= hi):
                raise ValueError(f"{name} must be a finite real {rng}, got {value!r}")
            return v
        alpha = real("alpha", alpha, 0, 2, True, "in (0, 2)")
        lam = real("lam", lam, 0, None, False, ">= 0")
        eta_j = real("eta_j", eta_j, 0, None, False, ">= 0")
        beta = abs(real("beta", beta, None, None, False, "(finite)"))
    with mpmath.workdps(dps):
        if eta_j == 0 or beta == 0:
            return mpmath.mpf(0)
        if lam == 0 or beta > lam:
            return mpmath.inf
    x = beta / lam
    extra = 10 + int(2 * max(0, -mpmath.log10(x))) + \
        (int(max(0, -mpmath.log10(abs(alpha - 1)))) if alpha != 1 else 0)
    with mpmath.workdps(dps + extra):
        if alpha == 1:
            def xlogx(t):
                return t * mpmath.log(t) if t > 0 else mpmath.mpf(0)
            val = eta_j * (xlogx(lam + beta) + xlogx(lam - beta) - 2 * xlogx(lam)) / mpmath.pi
        else:
            val = -eta_j * ((lam - beta) ** alpha + (lam + beta) ** alpha - 2 * lam ** alpha) \
                / (2 * mpmath.cos(mpmath.pi * alpha / 2))
    with mpmath.workdps(dps):
        return +val                      # an mpf of dps digits, whatever the caller's mp.dps
