r"""Learnability window H_N of a forgetting envelope f(l) (docs/specification.md §6).

Gradient noise is taken symmetric :math:`\alpha_g`-stable with :math:`\alpha_g \in (1, 2]`; the
concentration exponent is :math:`\kappa_a = \alpha_g / (\alpha_g - 1)` (2 for Gaussian
noise). Detecting a dependency at lag :math:`l` needs :math:`N(l) = C f(l)^{-\kappa_a}`
samples, and the learnability window is :math:`H_N = \sup\{l : N(l) \le N\}`, i.e. the
largest lag with :math:`f(l) \ge (C / N)^{1 / \kappa_a}`.

Closed-form scaling laws (docs/specification.md §6):

* exponential :math:`f = e^{-l/\tau}`: :math:`H_N = (\tau / \kappa_a) \ln(N / C)`;
* power :math:`f = l^{-\beta}`: :math:`H_N = (N / C)^{1 / (\beta \kappa_a)}`;
* logarithmic :math:`f = (\ln l)^{-\gamma}`: :math:`H_N = \exp\big((N / C)^{1 / (\gamma \kappa_a)}\big)`.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from levysde.core.validate import check_array, check_choice, check_real
from levysde.theory.roots import chandrupatla

__all__ = ["kappa_alpha", "sample_complexity", "learnability_window", "window_scaling_law"]


def kappa_alpha(alpha_g: ArrayLike) -> float | np.ndarray:
    r"""Concentration exponent :math:`\kappa_a = \alpha_g / (\alpha_g - 1)` (docs/specification.md §6).

    Parameters
    ----------
    alpha_g : float or array_like
        Stability index of the gradient noise, in (1, 2] (2: Gaussian gradient noise).

    Returns
    -------
    float or ndarray
        :math:`\kappa_a \ge 2`, shaped like ``alpha_g`` (a float for scalar input); 2 at alpha_g = 2,
        -> inf as alpha_g -> 1.

    Raises
    ------
    ValueError
        Naming ``alpha_g`` when any value is outside (1, 2] or not finite.

    Notes
    -----
    .. math::

       \kappa_\alpha = \frac{\alpha_g}{\alpha_g - 1}

    is the exponent with which the mean of :math:`N` samples of :math:`\alpha_g`-stable
    gradient noise concentrates: its error falls as :math:`N^{-(\alpha_g-1)/\alpha_g}`
    (:math:`N^{-1/2}` for Gaussian noise), so a signal of size :math:`f` needs
    :math:`N \propto f^{-\kappa_\alpha}` samples (the specification, §6).

    References
    ----------
    .. [1] L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790.

    Examples
    --------
    >>> print(kappa_alpha(2.0), kappa_alpha(1.5))
    2.0 3.0
    """
    a = check_array("alpha_g", alpha_g, lo=1.0, hi=2.0, lo_open=True)
    k = a / (a - 1)
    return float(k) if k.ndim == 0 else k


def sample_complexity(f: ArrayLike, *, alpha_g: float = 2.0, C: float = 1.0) -> float | NDArray[np.float64]:
    r"""Samples needed to detect lag :math:`l`: :math:`N(l) = C f(l)^{-\kappa_a}` (docs/specification.md §6).

    Parameters
    ----------
    f : float or array_like
        Envelope values f(l), in (0, 1].
    alpha_g : float, optional
        Stability index of the gradient noise, in (1, 2] (default 2: Gaussian).
    C : float, optional
        Prefactor, > 0 (default 1).

    Returns
    -------
    float or ndarray
        N(l) >= C, shaped like ``f`` (a float for scalar input); +inf where it exceeds the
        double range.

    Raises
    ------
    ValueError
        For alpha_g outside (1, 2], C <= 0 or f outside (0, 1] (naming the parameter).

    Notes
    -----
    .. math::

       N(\ell) = C\,f(\ell)^{-\kappa_\alpha}, \qquad \kappa_\alpha = \frac{\alpha_g}{\alpha_g-1}

    (the specification, §6; :func:`kappa_alpha`).

    References
    ----------
    .. [1] L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790.

    Examples
    --------
    >>> print(sample_complexity(0.01, alpha_g=2.0))
    10000.0
    """
    k = kappa_alpha(alpha_g)
    C = check_real("C", C, 0.0, lo_open=True)
    fv = check_array("f", f, lo=0.0, hi=1.0, lo_open=True, why="N(l) is infinite where f = 0")
    with np.errstate(over="ignore"):
        out = C * fv ** (-k)          # +inf beyond the double range (f ~ 0), no warning
    return float(out) if out.ndim == 0 else out


def learnability_window(N: float, *, lags: ArrayLike | None = None, f: ArrayLike | None = None,
                        f_func: Callable[[NDArray[np.float64]], ArrayLike] | None = None,
                        alpha_g: float = 2.0, C: float = 1.0) -> float:
    r"""Learnability window :math:`H_N = \sup\{l : C f(l)^{-\kappa_a} \le N\}` (docs/specification.md §6).

    Equivalently the largest lag with :math:`f(l) \ge f^* = (C / N)^{1 / \kappa_a}`.

    Give either a table (``lags`` (n,) > 0 strictly increasing, ``f`` (n,) in
    (0, 1], non-increasing where it crosses :math:`f^*`) or a closed form ``f_func(l)``
    (vectorised, decreasing). Table: the crossing is interpolated linearly in
    (log l, log f), exact for a power law between the nodes. Closed form: the
    bracket is grown geometrically from l = 1 and the root of
    log f(l) - log f* found in log l by :func:`levysde.theory.roots.chandrupatla`.

    Parameters
    ----------
    N : float
        Number of samples, > 0.
    lags : array_like, shape (n,), optional
        Lags (steps) of a tabulated envelope, > 0, strictly increasing, n >= 2; only with ``f``.
    f : array_like, shape (n,), optional
        The envelope at ``lags``, in [0, 1]; non-increasing where it crosses f*.
    f_func : callable, optional
        ``f_func(l) -> f(l)`` for an ndarray of lags, vectorised and decreasing; instead of
        ``lags``/``f``.
    alpha_g : float, optional
        Stability index of the gradient noise, in (1, 2] (default 2: Gaussian).
    C : float, optional
        Prefactor of the sample complexity, > 0 (default 1).

    Returns
    -------
    float
        H_N in steps; 0.0 when N < C (not even lag 0 is learnable: f* > 1).

    Raises
    ------
    ValueError
        For alpha_g not one real number in (1, 2], N or C <= 0, a bad table, a table that
        starts below f* or ends above it (extend the lags), or an f_func that never
        drops below f* for l up to 1e300; also when both or neither of ``f`` and ``f_func``
        are given, or ``lags`` without ``f``.

    Notes
    -----
    .. math::

       H_N = \sup\{\ell : C f(\ell)^{-\kappa_\alpha} \le N\}, \quad\text{i.e.}\quad
       f(H_N) = f^* = (C/N)^{1/\kappa_\alpha}

    for a decreasing envelope (the specification, §6). On a table, between the nodes
    :math:`\ell_i \le H_N < \ell_{i+1}`,
    :math:`\log H_N = \log\ell_i + (\log f^* - \log f_i)\,\frac{\log\ell_{i+1}-\log\ell_i}{\log f_{i+1}-\log f_i}`.

    References
    ----------
    .. [1] L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790.

    Examples
    --------
    >>> lags = np.logspace(0, 4, 200)
    >>> print(round(learnability_window(1e4, lags=lags, f=lags**-0.8), 6))
    316.227766
    >>> print(round(learnability_window(1e4, f_func=lambda l: np.exp(-l / 50.0)), 6))   # (tau/2) ln N
    230.258509
    """
    N = check_real("N", N, 0.0, lo_open=True)
    C = check_real("C", C, 0.0, lo_open=True)
    k = kappa_alpha(check_real("alpha_g", alpha_g, 1.0, 2.0, lo_open=True))
    if (f_func is None) == (f is None):
        raise ValueError("give exactly one of f (with lags) or f_func")
    if f_func is not None and lags is not None:
        raise ValueError("lags apply only to a tabulated f; with f_func give no lags")
    log_thr = (math.log(C) - math.log(N)) / k           # log f*
    if log_thr > 0:
        return 0.0
    if f is not None:
        if lags is None:
            raise ValueError("lags are required with a tabulated f")
        lag = check_array("lags", lags, ndim=1, min_size=2, lo=0.0, lo_open=True, increasing=True)
        fv = check_array("f", f, shape=lag.shape, lo=0.0, hi=1.0 + 1e-12)
        with np.errstate(divide="ignore"):
            lf = np.log(fv)
        above = np.flatnonzero(lf >= log_thr)
        if above.size == 0:
            raise ValueError(f"lags: f is already below the threshold (C/N)^(1/kappa_a) = "
                             f"{math.exp(log_thr):.6g} at the first lag {lag[0]:.6g}; add smaller lags")
        i = above[-1]
        if i == lag.size - 1:
            raise ValueError(f"lags: f({lag[-1]:.6g}) = {fv[-1]:.6g} is still above the threshold "
                             f"(C/N)^(1/kappa_a) = {math.exp(log_thr):.6g}; extend the lags")
        x0, x1 = math.log(lag[i]), math.log(lag[i + 1])
        y0, y1 = lf[i], lf[i + 1]
        if not np.isfinite(y1):                           # f = 0 at the next node
            return float(lag[i])
        t = (log_thr - y0) / (y1 - y0) if y1 != y0 else 0.0
        return float(math.exp(x0 + t * (x1 - x0)))

    if not callable(f_func):
        raise ValueError("f_func must be callable f(l)")

    def F(u, idx=None):
        with np.errstate(divide="ignore"):
            return np.log(np.asarray(f_func(np.exp(u)), dtype=float)) - log_thr

    lo, hi = 0.0, 0.0
    if F(np.array([0.0]))[0] >= 0:
        while F(np.array([hi]))[0] >= 0:
            lo, hi = hi, hi + math.log(10.0)
            if hi > 690:
                raise ValueError("f_func: f stays above the threshold (C/N)^(1/kappa_a) up to l = 1e300")
    else:
        while F(np.array([lo]))[0] < 0:
            hi, lo = lo, lo - math.log(10.0)
            if lo < -690:
                return 0.0
    root = chandrupatla(F, np.array([lo]), np.array([hi]), rtol=1e-14)
    return float(math.exp(root[0]))


def window_scaling_law(decay_class: str, N: ArrayLike, *, C: float = 1.0, alpha_g: float = 2.0,
                       tau: float | None = None, beta: float | None = None,
                       gamma: float | None = None) -> float | NDArray[np.float64]:
    r"""Closed-form :math:`H_N` of the three decay classes (docs/specification.md §6).

    * ``'exponential'`` (needs tau > 0): :math:`(\tau / \kappa_a) \ln(N / C)`;
    * ``'polynomial'`` (needs beta > 0): :math:`(N / C)^{1 / (\beta \kappa_a)}`;
    * ``'logarithmic'`` (needs gamma > 0): :math:`\exp\big((N / C)^{1 / (\gamma \kappa_a)}\big)`.

    Parameters
    ----------
    decay_class : {"exponential", "polynomial", "logarithmic"}
        The envelope's class: :math:`f = e^{-\ell/\tau}`, :math:`\ell^{-\beta}` or
        :math:`(\ln\ell)^{-\gamma}`.
    N : float or array_like
        Numbers of samples, >= C.
    C : float, optional
        Prefactor of the sample complexity, > 0 (default 1).
    alpha_g : float, optional
        Stability index of the gradient noise, in (1, 2] (default 2: Gaussian).
    tau, beta, gamma : float, optional
        The class's parameter, > 0: ``tau`` (steps) for the exponential, ``beta`` for the
        polynomial, ``gamma`` for the logarithmic class; the others are ignored.

    Returns
    -------
    float or ndarray
        H_N in steps, shaped like ``N`` (a float for scalar input); +inf where the
        logarithmic law exceeds the double range.

    Raises
    ------
    ValueError
        For an unknown class, a missing or non-positive parameter, alpha_g outside (1, 2],
        C <= 0 or N < C.

    Notes
    -----
    Solving :math:`f(H_N) = (C/N)^{1/\kappa_\alpha}` (the specification, §6):

    .. math::

       H_N = \frac{\tau}{\kappa_\alpha}\ln\frac{N}{C}, \qquad
       H_N = \Big(\frac{N}{C}\Big)^{1/(\beta\kappa_\alpha)}, \qquad
       H_N = \exp\Big(\Big(\frac{N}{C}\Big)^{1/(\gamma\kappa_\alpha)}\Big).

    References
    ----------
    .. [1] L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790.

    Examples
    --------
    >>> print(round(window_scaling_law('polynomial', 1e4, beta=0.8), 6))   # (N/C)^(1/(beta kappa_alpha))
    316.227766
    >>> print(window_scaling_law('exponential', [1e2, 1e4], tau=50.0).round(4))
    [115.1293 230.2585]
    """
    k = kappa_alpha(alpha_g)
    C = check_real("C", C, 0.0, lo_open=True)
    Nv = check_array("N", N, lo=C, why="N >= C")
    r = Nv / C
    params = {"exponential": ("tau", tau), "polynomial": ("beta", beta), "logarithmic": ("gamma", gamma)}
    decay_class = check_choice("decay_class", decay_class, tuple(params))
    pname, p = params[decay_class]
    if p is None:
        raise ValueError(f"{pname} is required for the {decay_class} law")
    p = check_real(pname, p, 0.0, lo_open=True)
    with np.errstate(over="ignore"):
        if decay_class == "exponential":
            out = p / k * np.log(r)
        elif decay_class == "polynomial":
            out = r ** (1.0 / (p * k))
        else:
            out = np.exp(r ** (1.0 / (p * k)))
    return float(out) if out.ndim == 0 else out
