"""Euler-Maruyama simulation of ``dzeta = F(zeta) dt + sqrt(2 eta_G) dW + dJ`` (THEORY.md §3, §7).

Jumps (THEORY.md §7, Asmussen-Rosinski split at a cut ``eps``):

* ``|z| > eps``: compound Poisson with total rate ``Lambda_eps`` (:func:`big_jump_rate`).
  Jump epochs are exact: exponential waiting times, carried from step to step, so
  each step receives an exact Poisson number of jumps (cost per jump, not per
  step). Magnitudes have density proportional to ``exp(-lam z) z^(-1-alpha)`` on
  (eps, inf), drawn exactly by rejection: Pareto proposal ``eps U^(-1/alpha)``
  accepted with probability ``exp(-lam (z - eps))``, or, when ``lam eps > alpha``
  (where it accepts more often: the ratio of the two acceptance rates is
  ``lam eps / alpha``), the exponential proposal ``eps + E/lam`` accepted with
  probability ``(z/eps)^(-1-alpha)``. Symmetric sign.
* ``|z| <= eps``: a Gaussian with variance ``sigma_eps^2 dt`` (:func:`small_jump_variance`),
  merged with the Brownian part: one normal per step of variance
  ``(2 eta_G + sigma_eps^2) dt``. Symmetric jumps need no compensating drift.

Bias. The Gaussian stand-in changes only cumulants of order >= 4 of the small
jumps; the simulated model's exact stationary tail rate is the root of
``Phi_eps`` (:func:`beta_model`), reported next to beta*. Euler's drift
discretisation adds an O(dt) error to the bulk; with exact jump counts the tail
rate does not depend on dt (THEORY.md §7).

Random numbers: one xoshiro256++ stream per particle, seeded from one
``numpy.random.SeedSequence`` (:mod:`levysde._rng`), so a seed gives
bit-identical output for any thread count (``NUMBA_NUM_THREADS``).

Outputs (:class:`SimulationResult`): final states, the time-averaged occupation
histogram of zeta after burn-in per independent particle group (plus per-bin sums
of zeta, so that the tail estimator of :mod:`levysde.tails` is exact at bin
edges), the depth histogram of excursions below the equilibrium, optional thinned
trajectories and metadata; ``.npz`` round trip exact, no pickle.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass

import mpmath
import numpy as np
from numba import njit, prange
from scipy import special

from . import _rng
from .levy import c_alpha
from .params import DEFAULTS, check_param
from .roots import chandrupatla

__all__ = ["simulate", "SimulationResult", "SaturatingDrift", "OUDrift", "TabulatedDrift",
           "sample_increments", "default_eps", "big_jump_rate", "small_jump_variance",
           "small_jump_symbol", "beta_model", "DivergenceError", "SimulationInputError",
           "StepSizeError", "DEFAULT_EPS_FACTOR", "MAX_SLOPE_DT", "MAX_JUMPS_PER_STEP", "MAX_STEPS",
           "MAX_SERIES_BETA_EPS"]

#: default cut: eps = DEFAULT_EPS_FACTOR * (eta_J dt)^(1/alpha), the typical increment
DEFAULT_EPS_FACTOR = 1.0

#: Euler accuracy/stability bound checked before a run: |F'| dt at the equilibrium (gamma dt for the
#: saturating and Ornstein-Uhlenbeck drifts, max |dF/dz| dt for a tabulated one) must be <= this
MAX_SLOPE_DT = 0.5
#: cap on the expected number of big jumps per particle-step, Lambda_eps dt (a smaller eps is
#: rejected: the run would spend its time drawing jumps the Gaussian part could carry)
MAX_JUMPS_PER_STEP = 1e3
#: cap on the number of time steps round(t_end / dt)
MAX_STEPS = 10**12
#: cap on |beta| eps for the small-jump series of :func:`small_jump_symbol`
MAX_SERIES_BETA_EPS = 1e4

_DRIFT_SATURATING, _DRIFT_OU, _DRIFT_TABULATED = 0, 1, 2
_BLOCK = 256      # particles advanced together in the kernel (state of a block stays in L1)


class DivergenceError(RuntimeError):
    """Particles left the simulation window or became non-finite (see :func:`simulate`)."""


class _Names(dict):
    def __missing__(self, key):
        return key


class SimulationInputError(ValueError):
    """A bad argument of :func:`simulate` (a ValueError). ``str(exc)`` names the Python
    parameters; :meth:`render` substitutes other names (the CLI passes its flags)."""

    def __init__(self, template: str):
        self.template = template
        super().__init__(self.render())

    def render(self, names=None) -> str:
        return self.template.format_map(_Names(names or {}))


class StepSizeError(SimulationInputError, DivergenceError):
    """dt is too large for the drift (``|F'| dt > MAX_SLOPE_DT``), detected before any step.
    Both a ValueError (bad ``dt``) and a DivergenceError (the Euler run would diverge, or be
    biased: e.g. ``--dt 5`` with the saturating drift gave beta_hat 0.44 for beta* 0.81)."""


# ---------------------------------------------------------------------------------------------
# drifts
# ---------------------------------------------------------------------------------------------

def _finite(name, value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite real number; got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite real number; got {value!r}")
    return v


@dataclass(frozen=True)
class SaturatingDrift:
    """``F(z) = kappa tanh(gamma (z0 - z)/kappa)`` (THEORY.md §3).

    Linear ``-gamma (z - z0)`` near z0, plateau +kappa on the far left, -kappa on
    the right. kappa > 0, gamma > 0 (gamma <= 0 is no restoring drift: the particles
    drift away at speed kappa; ValueError naming gamma), z0 finite.
    """

    kappa: float = DEFAULTS["kappa"]
    gamma: float = 1.0
    z0: float = 0.0
    name = "saturating"

    def __post_init__(self):
        object.__setattr__(self, "kappa", float(check_param("kappa", self.kappa)))
        object.__setattr__(self, "gamma", _finite("gamma", self.gamma))
        object.__setattr__(self, "z0", _finite("z0", self.z0))
        if not self.gamma > 0:
            raise ValueError(f"gamma must be in (0, inf) for the saturating drift (gamma <= 0 is no "
                             f"restoring drift); got {self.gamma!r}")

    def __call__(self, z):
        return self.kappa * np.tanh(self.gamma * (self.z0 - np.asarray(z, float)) / self.kappa)

    @property
    def plateau(self):
        """kappa: the limit of F at zeta -> -inf (the kappa of THEORY.md §4)."""
        return self.kappa

    @property
    def equilibrium(self) -> float:
        return self.z0

    @property
    def slope(self) -> float:
        """|F'| at the equilibrium (sets the Euler stability bound dt < 2/slope)."""
        return self.gamma

    def _kernel_args(self):
        return _DRIFT_SATURATING, np.array([self.kappa, self.gamma / self.kappa, self.z0]), np.zeros(1), np.zeros(1)

    def meta(self) -> dict:
        return {"drift": self.name, "kappa": self.kappa, "gamma": self.gamma, "z0": self.z0}


@dataclass(frozen=True)
class OUDrift:
    """Ornstein-Uhlenbeck ``F(z) = -gamma (z - z0)`` (THEORY.md §3): no plateau
    (the structural collapsed control). gamma, z0 finite; gamma < 0 is repulsive."""

    gamma: float = 1.0
    z0: float = 0.0
    name = "ou"

    def __post_init__(self):
        object.__setattr__(self, "gamma", _finite("gamma", self.gamma))
        object.__setattr__(self, "z0", _finite("z0", self.z0))

    def __call__(self, z):
        return -self.gamma * (np.asarray(z, float) - self.z0)

    plateau = None

    @property
    def equilibrium(self) -> float:
        return self.z0

    @property
    def slope(self) -> float:
        return self.gamma

    def _kernel_args(self):
        return _DRIFT_OU, np.array([0.0, self.gamma, self.z0]), np.zeros(1), np.zeros(1)

    def meta(self) -> dict:
        return {"drift": self.name, "kappa": None, "gamma": self.gamma, "z0": self.z0}


class TabulatedDrift:
    """Drift given on a grid: linear interpolation, constant extrapolation (THEORY.md §3).

    Parameters
    ----------
    grid : (m,) strictly increasing finite floats, m >= 2 (zeta values)
    values : (m,) finite floats, F at the grid points (1/time)

    The plateau (kappa of THEORY.md §4) is ``values[0]`` when it is > 0; the
    equilibrium is the first downward zero crossing of the interpolant (or the
    grid point of smallest |F| when there is none).

    Raises ValueError naming ``grid`` or ``values`` on bad shapes or values.
    """

    name = "tabulated"

    def __init__(self, grid, values):
        g = np.array(grid, dtype=float).ravel()
        v = np.array(values, dtype=float).ravel()
        if g.size < 2 or g.size != v.size:
            raise ValueError(f"grid and values must have the same length >= 2; got {g.size} and {v.size}")
        if not np.all(np.isfinite(g)) or np.any(np.diff(g) <= 0):
            raise ValueError("grid must be finite and strictly increasing")
        if not np.all(np.isfinite(v)):
            raise ValueError("values must be finite")
        g.flags.writeable = False
        v.flags.writeable = False
        self.grid, self.values = g, v

    def __call__(self, z):
        return np.interp(np.asarray(z, float), self.grid, self.values)

    def __eq__(self, other):
        return (isinstance(other, TabulatedDrift) and np.array_equal(self.grid, other.grid)
                and np.array_equal(self.values, other.values))

    def __repr__(self):
        return f"TabulatedDrift(<{self.grid.size} points on [{self.grid[0]:g}, {self.grid[-1]:g}]>)"

    @property
    def plateau(self):
        return float(self.values[0]) if self.values[0] > 0 else None

    @property
    def equilibrium(self) -> float:
        g, v = self.grid, self.values
        down = np.flatnonzero((v[:-1] > 0) & (v[1:] <= 0))
        if down.size:
            i = down[0]
            return float(g[i] + (g[i + 1] - g[i]) * v[i] / (v[i] - v[i + 1]))
        return float(g[np.argmin(np.abs(v))])

    @property
    def slope(self) -> float:
        return float(np.max(np.abs(np.diff(self.values) / np.diff(self.grid))))

    def _kernel_args(self):
        return _DRIFT_TABULATED, np.zeros(3), self.grid.copy(), self.values.copy()   # writeable: one compiled type

    def meta(self) -> dict:
        return {"drift": self.name, "kappa": self.plateau, "gamma": None, "z0": self.equilibrium,
                "drift_grid": self.grid.tolist(), "drift_values": self.values.tolist()}


# ---------------------------------------------------------------------------------------------
# jump law of the scheme (THEORY.md §7)
# ---------------------------------------------------------------------------------------------

def _jump_params(alpha, lam, eta_j):
    return (float(check_param("alpha", alpha)), float(check_param("lam", lam)),
            float(check_param("eta_j", eta_j)))


def _check_eps(eps) -> float:
    e = _finite("eps", eps)
    if e <= 0:
        raise ValueError(f"eps must be finite and in (0, inf); got {eps!r}")
    return e


def _check_dt(dt) -> float:
    d = _finite("dt", dt)
    if d <= 0:
        raise ValueError(f"dt must be finite and in (0, inf); got {dt!r}")
    return d


def default_eps(dt, *, eta_j, alpha):
    """Default cut eps = DEFAULT_EPS_FACTOR * (eta_J dt)^(1/alpha) (THEORY.md §7).

    The scale of a typical increment J_dt. With eta_J = 0 (no jumps, eps is
    irrelevant) it returns dt^(1/alpha). Raises ValueError on bad dt, eta_j, alpha.

    Bias of this default (docs/simulate.md, "Bias"): the small jumps |z| <= eps are
    replaced by a Gaussian of the same variance. At this eps the stand-in carries a
    visible share of J_dt, so the *shape* of one increment is not exactly the
    tempered stable law: e.g. at lam = 0, alpha = 1.5 a KS test of 20,000 increments
    against ``scipy.stats.levy_stable`` fails (p ~ 7e-4) while it passes with
    eps = 0.02 (eta_J dt)^(1/alpha). The stationary tail rate is barely affected (the
    simulated model's own rate :func:`beta_model` is reported next to beta*; +3.2e-5
    for the defaults at eta_J = 3). THEORY.md §7 fixes this default; pass a smaller
    eps for increment-law checks.
    """
    dt = _check_dt(dt)
    a = float(check_param("alpha", alpha))
    ej = float(check_param("eta_j", eta_j))
    return DEFAULT_EPS_FACTOR * ((ej if ej > 0 else 1.0) * dt) ** (1.0 / a)


def big_jump_rate(eps, *, alpha, lam, eta_j):
    """Total rate Lambda_eps of jumps with |z| > eps (1/time), THEORY.md §7.

    ``Lambda_eps = 2 eta_J c_alpha int_eps^inf e^{-lam z} z^(-1-alpha) dz``, which is
    ``2 eta_J c_alpha lam^alpha Gamma(-alpha, lam eps)`` (lam > 0) and
    ``2 eta_J c_alpha eps^(-alpha)/alpha`` (lam = 0). The incomplete gamma of
    negative order is evaluated with ``mpmath.gammainc`` (30 digits; scipy has no
    negative-order upper incomplete gamma).

    Raises ValueError for eps <= 0 or out-of-range parameters.
    """
    eps = _check_eps(eps)
    a, lm, ej = _jump_params(alpha, lam, eta_j)
    if ej == 0:
        return 0.0
    ca = float(c_alpha(a))
    if lm == 0:
        with np.errstate(over="ignore"):
            return float(np.exp(math.log(2.0 * ej * ca / a) - a * math.log(eps)))  # inf, never OverflowError
    with mpmath.workdps(30):
        g = mpmath.gammainc(-mpmath.mpf(a), mpmath.mpf(lm) * mpmath.mpf(eps))
        return float(2 * mpmath.mpf(ej) * mpmath.mpf(ca) * mpmath.mpf(lm) ** a * g)


def _lower_gamma_moment(order, eps, lam):
    """int_0^eps z^(order-1) e^{-lam z} dz for order > 0 (scipy regularised gammainc, log space;
    +inf beyond float64, never OverflowError)."""
    with np.errstate(over="ignore"):
        return float(np.exp(_log_lower_gamma_moment(float(order), eps, lam)))


def small_jump_variance(eps, *, alpha, lam, eta_j):
    """sigma_eps^2 (variance per unit time of the jumps with |z| <= eps), THEORY.md §7.

    ``2 eta_J c_alpha int_0^eps z^(1-alpha) e^{-lam z} dz``, which is
    ``2 eta_J c_alpha lam^(alpha-2) gamma_lower(2 - alpha, lam eps)`` (note the order 2 - alpha),
    ``2 eta_J c_alpha eps^(2-alpha)/(2-alpha)`` for lam = 0. Evaluated with
    ``scipy.special.gammainc(2 - alpha, lam eps) * gamma(2 - alpha)``.

    Raises ValueError for eps <= 0 or out-of-range parameters.
    """
    eps = _check_eps(eps)
    a, lm, ej = _jump_params(alpha, lam, eta_j)
    return float(2.0 * ej * float(c_alpha(a)) * _lower_gamma_moment(2.0 - a, eps, lm))


def _log_lower_gamma_moment(order, eps, lam):
    """log int_0^eps z^(s-1) e^{-lam z} dz for an array of orders s > 0, without overflow.

    lam = 0: ``s log eps - log s``. lam > 0: ``gammaln(s) + log P(s, lam eps) - s log lam``
    (scipy's regularised gammainc), or, where P underflows (lam eps << s), the series
    form ``s log eps - lam eps - log s + log 1F1(1; s + 1; lam eps)``.
    """
    s = np.asarray(order, dtype=float)
    le = math.log(eps)
    if lam == 0:
        return s * le - np.log(s)
    x = lam * eps
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        p = special.gammainc(s, x)
        out = np.asarray(special.gammaln(s) + np.log(p) - s * math.log(lam), dtype=float)
        bad = ~((p > 1e-250) & np.isfinite(out))       # P underflows only where x << s
        if np.any(bad):
            sb = np.broadcast_to(s, out.shape)[bad]
            out = np.array(out, copy=True)
            out[bad] = sb * le - x - np.log(sb) + np.log(special.hyp1f1(1.0, sb + 1.0, x))
    return out


def small_jump_symbol(beta, eps, *, alpha, lam, eta_j, imaginary=False):
    """The small-jump part of the Laplace exponent, and its Gaussian replacement error.

    Returns ``(exact, gauss)`` where ``exact = int_{|z|<=eps} (e^{beta z} - 1) nu(dz)
    = 2 eta_J c_alpha sum_{k>=1} beta^(2k)/(2k)! int_0^eps z^(2k-1-alpha) e^{-lam z} dz``
    and ``gauss = sigma_eps^2 beta^2/2`` (its k = 1 term). With ``imaginary=True``
    ``beta`` is a frequency xi and the series is that of ``cos(xi z) - 1``
    (alternating signs): the small-jump part of the characteristic exponent.
    The simulated increments have symbol ``Psi(beta) - exact + gauss``
    (THEORY.md §7).

    The terms are evaluated in log space (``scipy.special.gammaln``, ``gammainc``), so
    huge eps, lam or eta_J do not overflow; ``10 + 3 |beta| eps`` terms are summed.
    Real beta: positive terms, accurate for any ``|beta| eps``; the result is +inf
    where the integral exceeds float64. Imaginary: the alternating series cancels,
    accurate to ~1e-16 * e^(|xi| eps) relative. ``|beta| eps`` above
    MAX_SERIES_BETA_EPS (1e4) raises ValueError naming eps (use :func:`beta_model`,
    which needs no series there, or a smaller eps).

    Parameters: beta array_like (finite); eps > 0; alpha, lam, eta_j as in levy.psi.
    """
    eps = _check_eps(eps)
    a, lm, ej = _jump_params(alpha, lam, eta_j)
    b = np.asarray(beta, dtype=float)
    if not np.all(np.isfinite(b)):
        raise ValueError("beta must be finite")
    pref = 2.0 * ej * float(c_alpha(a))
    bz = float(np.max(np.abs(b))) * eps if b.size else 0.0
    if not bz <= MAX_SERIES_BETA_EPS:
        raise ValueError(f"eps too large for the small-jump series: |beta| eps = {bz:.3g} > "
                         f"{MAX_SERIES_BETA_EPS:g}; use a smaller eps")
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        gauss = 0.5 * pref * math.exp(float(_log_lower_gamma_moment(2.0 - a, eps, lm))) * b * b
        total = np.zeros_like(b)
        if pref > 0 and b.size:
            k = np.arange(1, int(10 + 3 * bz) + 1, dtype=float)
            logc = (math.log(pref) - special.gammaln(2 * k + 1)
                    + _log_lower_gamma_moment(2 * k - a, eps, lm))          # (K,)
            ab = np.abs(b).ravel()
            with np.errstate(divide="ignore"):
                lt = logc[None, :] + 2 * k[None, :] * np.log(ab)[:, None]   # (n, K); -inf at beta = 0
            t = np.exp(lt)
            if imaginary:
                t = t * np.where(k % 2 == 1, -1.0, 1.0)[None, :]
            total = t.sum(axis=1).reshape(b.shape)
    if imaginary:
        gauss = -gauss
    return total, gauss


def _big_jump_symbol(beta, eps, a, lm, ej):
    """int_{|z|>eps} (e^{beta z} - 1) nu(dz) for 0 < beta <= lam (mpmath incomplete gammas).

    ``eta_J c_alpha [J(lam - beta) + J(lam + beta) - 2 J(lam)]`` with
    ``J(c) = int_eps^inf z^(-1-alpha) e^{-c z} dz = c^alpha Gamma(-alpha, c eps)``
    (``eps^-alpha / alpha`` at c = 0). Used where |beta| eps > 20 (no cancellation there).
    """
    with mpmath.workdps(40):
        A, E = mpmath.mpf(a), mpmath.mpf(eps)

        def J(c):
            c = mpmath.mpf(c)
            if c == 0:
                return E ** (-A) / A
            return c ** A * mpmath.gammainc(-A, c * E)

        L, B = mpmath.mpf(lm), mpmath.mpf(beta)
        return float(mpmath.mpf(ej) * mpmath.mpf(float(c_alpha(a))) * (J(L - B) + J(L + B) - 2 * J(L)))


def beta_model(eta_j, eta_g=DEFAULTS["eta_g"], kappa=DEFAULTS["kappa"], alpha=DEFAULTS["alpha"],
               lam=DEFAULTS["lam"], *, eps):
    """Exact stationary left-tail rate of the *simulated* model: root of Phi_eps (THEORY.md §7).

    ``Phi_eps(beta) = eta_G beta^2 + [Psi(beta) - Psi_small(beta) + sigma_eps^2 beta^2/2] - kappa beta``,
    i.e. Phi with the jump symbol replaced by its big-jump part plus the Gaussian
    stand-in of the small jumps (:func:`small_jump_symbol`). Solved as
    ``Phi_eps(beta)/beta = 0`` on (0, lam] with the known value -kappa at 0+
    (:func:`levysde.roots.chandrupatla`). Scalars only. Where ``beta eps > 20`` the
    big-jump part is taken directly from incomplete gammas (mpmath) instead of
    ``Psi - Psi_small``, so any eps > 0 works.

    Returns float in (0, lam), or NaN when Phi_eps(lam) <= 0 (collapsed), lam = 0, or
    the root cannot be resolved in float64 (extreme parameters, e.g. eta_G = 1e300;
    :func:`simulate` then records a note in ``meta['notes']``).
    Raises ValueError on out-of-range parameters or eps <= 0.
    """
    from .levy import psi_unit_over_beta

    eps = _check_eps(eps)
    a, lm, ej = _jump_params(alpha, lam, eta_j)
    eg = float(check_param("eta_g", eta_g))
    k = float(check_param("kappa", kappa))
    if lm == 0:
        return float("nan")
    pref = 2.0 * ej * float(c_alpha(a))
    sig2 = pref * math.exp(float(_log_lower_gamma_moment(2.0 - a, eps, lm)))

    def h(x, idx=None):
        x = np.asarray(x, dtype=float)
        out = np.empty_like(x)
        near = (x * eps <= 20.0) & (x > 0)
        out[x <= 0] = -k                                 # the limit at 0+
        with np.errstate(all="ignore"):
            if near.any():
                xs = x[near]
                exact, gauss = small_jump_symbol(xs, eps, alpha=a, lam=lm, eta_j=ej)
                out[near] = eg * xs - k + ej * psi_unit_over_beta(xs, alpha=a, lam=lm) + (gauss - exact) / xs
            for i in np.flatnonzero(~near & (x > 0)):
                xi = float(x[i])
                out[i] = eg * xi - k + 0.5 * sig2 * xi + _big_jump_symbol(xi, eps, a, lm, ej) / xi
        return out

    try:
        h_lam = float(h(np.array([lm]))[0])
        if not h_lam > 0:                       # collapsed (or NaN: unresolved)
            return float("nan")
        # the jump part of Phi_eps is >= 0, so h(x) >= eta_G x - kappa: the root is <= kappa/eta_G
        hi, f_hi = lm, h_lam
        if eg > 0 and k / eg < lm:
            hi = k / eg
            f_hi = float(h(np.array([hi]))[0])
            if f_hi == 0:
                return hi
        with np.errstate(all="ignore"):
            r = float(chandrupatla(h, np.zeros(1), np.array([hi]), fa=np.array([-k]),
                                   fb=np.array([f_hi]), maxiter=2000)[0])
    except (ValueError, OverflowError, ZeroDivisionError):
        return float("nan")
    return r if (math.isfinite(r) and r > 0) else float("nan")


# ---------------------------------------------------------------------------------------------
# compiled pieces
# ---------------------------------------------------------------------------------------------

@njit(cache=True, inline="always")
def _big_jump(eps, alpha, lam, exp_proposal, s0, s1, s2, s3):
    """One jump with |z| > eps: density ~ exp(-lam|z|)|z|^(-1-alpha), exact rejection."""
    while True:
        r, s0, s1, s2, s3 = _rng.next_u64(s0, s1, s2, s3)
        u1 = 1.0 - float(np.int64(r >> np.uint64(11))) * 1.1102230246251565e-16   # (0, 1]
        neg = (r & np.uint64(1)) != 0
        if exp_proposal:
            zz = eps - math.log(u1) / lam
        else:
            zz = eps * math.exp(math.log(u1) * (-1.0 / alpha))      # eps U^(-1/alpha)
        if lam == 0.0:
            return (-zz if neg else zz), s0, s1, s2, s3
        u2, s0, s1, s2, s3 = _rng.uniform(s0, s1, s2, s3)
        if exp_proposal:
            acc = (zz / eps) ** (-1.0 - alpha)
        else:
            d = lam * (zz - eps)
            if u2 < 1.0 - d:                  # squeeze: exp(-d) >= 1 - d, accept without exp
                return (-zz if neg else zz), s0, s1, s2, s3
            acc = math.exp(-d)
        if u2 < acc:
            return (-zz if neg else zz), s0, s1, s2, s3


@njit(cache=True, parallel=True)
def _increments_kernel(states, n, block, dt, s_gauss, rate, eps, alpha, lam, exp_proposal, out):
    nb = states.shape[0]
    for b in prange(nb):
        s0, s1, s2, s3 = states[b, 0], states[b, 1], states[b, 2], states[b, 3]
        for i in range(b * block, min(n, (b + 1) * block)):
            x, s0, s1, s2, s3 = _rng.normal(s0, s1, s2, s3)
            x *= s_gauss
            if rate > 0.0:
                e, s0, s1, s2, s3 = _rng.exponential(s0, s1, s2, s3)
                w = e / rate
                while w < dt:
                    j, s0, s1, s2, s3 = _big_jump(eps, alpha, lam, exp_proposal, s0, s1, s2, s3)
                    x += j
                    e, s0, s1, s2, s3 = _rng.exponential(s0, s1, s2, s3)
                    w += e / rate
            out[i] = x
        states[b, 0], states[b, 1], states[b, 2], states[b, 3] = s0, s1, s2, s3



@njit(cache=True, inline="always")
def _drift(kind, x, dpar, grid, vals):
    if kind == 0:                                    # dpar = (kappa, gamma/kappa, z0)
        # kappa tanh(y) as kappa sign(y) (1 - e)/(1 + e), e = exp(-2|y|): faster than libm tanh,
        # absolute error ~1e-16 kappa
        y = dpar[1] * (dpar[2] - x)
        e = math.exp(-2.0 * abs(y))
        t = (1.0 - e) / (1.0 + e)
        return dpar[0] * (t if y >= 0.0 else -t)
    if kind == 1:
        return -dpar[1] * (x - dpar[2])
    m = grid.size
    if x <= grid[0]:
        return vals[0]
    if x >= grid[m - 1]:
        return vals[m - 1]
    lo, hi = 0, m - 1
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if grid[mid] <= x:
            lo = mid
        else:
            hi = mid
    t = (x - grid[lo]) / (grid[hi] - grid[lo])
    return vals[lo] + t * (vals[hi] - vals[lo])


@njit(cache=True, parallel=True)
def _run_chunk(z, wait, states, exc_min, diverged, gstart, step0, n_steps, rec_start,
               dt, kind, dpar, grid, vals, s_gauss, rate, eps, alpha, lam, exp_proposal,
               hist_lo, inv_w, n_bins, acc, outside, exc_counts, exc_level,
               win_lo, win_hi, traj, traj_every):
    """Advance every particle by n_steps. Groups run in parallel; inside a group the
    particles advance in lockstep (time outer, particle inner) so that independent
    chains overlap in the CPU pipeline. Particle p always uses only stream p, so the
    result does not depend on the thread count."""
    n_groups = gstart.size - 1
    n_traj = traj.shape[0]
    inv_rate = 1.0 / rate if rate > 0.0 else 0.0
    for g in prange(n_groups):
        for b0 in range(gstart[g], gstart[g + 1], _BLOCK):      # L1-sized sub-blocks
            b1 = min(b0 + _BLOCK, gstart[g + 1])
            for k in range(n_steps):
                gstep = step0 + k
                record = gstep >= rec_start
                keep = n_traj > 0 and (gstep + 1) % traj_every == 0
                for p in range(b0, b1):
                    if diverged[p] != 0:
                        continue
                    s0, s1, s2, s3 = states[p, 0], states[p, 1], states[p, 2], states[p, 3]
                    x = z[p]
                    w = wait[p]
                    f = _drift(kind, x, dpar, grid, vals)
                    nrm, s0, s1, s2, s3 = _rng.normal(s0, s1, s2, s3)
                    jsum = 0.0
                    while w < dt:                       # exact epochs: Poisson count per step
                        j, s0, s1, s2, s3 = _big_jump(eps, alpha, lam, exp_proposal, s0, s1, s2, s3)
                        jsum += j
                        e, s0, s1, s2, s3 = _rng.exponential(s0, s1, s2, s3)
                        w += e * inv_rate
                    wait[p] = w - dt
                    states[p, 0], states[p, 1], states[p, 2], states[p, 3] = s0, s1, s2, s3
                    x = x + f * dt + s_gauss * nrm + jsum
                    z[p] = x
                    if not (x > win_lo and x < win_hi):     # also catches NaN / inf
                        diverged[p] = gstep + 1
                if record:                                  # second pass: histogram scatter
                    for p in range(b0, b1):
                        x = z[p]
                        bf = (x - hist_lo) * inv_w
                        if bf < 0.0 or not bf < n_bins:
                            side = 0 if bf < 0.0 else 2
                            outside[g, side] += 1.0
                            outside[g, side + 1] += x
                        else:
                            ib = int(bf)                    # count and zeta-sum share a cache line
                            acc[g, ib, 0] += 1.0
                            acc[g, ib, 1] += x
                        em = exc_min[p]                 # +inf: not in an excursion
                        if x < exc_level:
                            if x < em:
                                exc_min[p] = x
                        elif em < exc_level:            # excursion ends: record its depth
                            exc_min[p] = np.inf
                            eb = (em - hist_lo) * inv_w
                            ie = 0 if eb < 0.0 else min(int(eb), n_bins - 1)
                            exc_counts[g, ie] += 1.0
                if keep:
                    for p in range(b0, min(b1, n_traj)):
                        traj[p, (gstep + 1) // traj_every - 1] = z[p]


# ---------------------------------------------------------------------------------------------
# public sampler of increments
# ---------------------------------------------------------------------------------------------

def _scheme(dt, eps, alpha, lam, eta_j, eta_g=0.0):
    """(Lambda_eps, sigma_eps^2, exponential proposal?) with the checks that keep a run finite.

    Raises SimulationInputError naming eps when Lambda_eps dt > MAX_JUMPS_PER_STEP (the
    run would hang drawing jumps), or naming eta_j/eps/eta_g/dt when the per-step
    Gaussian scale is not finite in float64."""
    rate = big_jump_rate(eps, alpha=alpha, lam=lam, eta_j=eta_j)
    if not rate * dt <= MAX_JUMPS_PER_STEP:
        raise SimulationInputError(
            f"{{eps}} = {eps:.3g} is too small: Lambda_eps dt = {rate * dt:.3g} expected big jumps per "
            f"particle-step exceeds {MAX_JUMPS_PER_STEP:g}; use the default eps (eta_J dt)^(1/alpha) = "
            f"{default_eps(dt, eta_j=eta_j, alpha=alpha):.3g} or a larger one")
    sig2 = small_jump_variance(eps, alpha=alpha, lam=lam, eta_j=eta_j)
    if not math.isfinite(math.sqrt((2.0 * eta_g + sig2) * dt)):
        raise SimulationInputError(
            f"the Gaussian step sqrt((2 eta_G + sigma_eps^2) dt) is not finite in float64 "
            f"(sigma_eps^2 = {sig2:.3g}); reduce {{eta_j}}, {{eps}}, {{eta_g}} or {{dt}}")
    exp_prop = bool(lam > 0 and lam * eps > alpha)
    return rate, sig2, exp_prop


def sample_increments(n, dt, *, alpha, lam, eta_j, eps=None, seed=0, eta_g=0.0):
    """n i.i.d. increments J_dt of the simulated jump process (THEORY.md §7), for checks.

    Exactly the law used by :func:`simulate`: a Poisson number of big jumps
    (|z| > eps, exact rejection sampling) plus N(0, sigma_eps^2 dt); with
    ``eta_g > 0`` also the Brownian part sqrt(2 eta_G) dW_dt.

    Bias of the default eps (:func:`default_eps`, docs/simulate.md): the Gaussian
    stand-in for the small jumps is visible in the shape of J_dt at the default cut
    (lam = 0, alpha = 1.5: KS p ~ 7e-4 against ``scipy.stats.levy_stable`` for 20,000
    increments); pass ``eps = 0.02 (eta_J dt)^(1/alpha)`` or smaller to check the
    increment law itself. The stationary tail rate is barely affected (:func:`beta_model`).

    Parameters
    ----------
    n : int >= 1
    dt : float > 0 (time units)
    alpha, lam, eta_j : jump parameters (ranges as in :func:`levysde.levy.psi`)
    eps : cut > 0, default :func:`default_eps`
    seed : SeedSequence entropy (int >= 0); result is independent of the thread count.

    Returns
    -------
    (n,) float64 array.

    Raises ValueError naming a bad argument.
    """
    if int(n) != n or n < 1:
        raise ValueError(f"n must be an integer >= 1; got {n!r}")
    n = int(n)
    dt = _check_dt(dt)
    a, lm, ej = _jump_params(alpha, lam, eta_j)
    eg = float(check_param("eta_g", eta_g))
    eps = default_eps(dt, eta_j=ej, alpha=a) if eps is None else _check_eps(eps)
    rate, sig2, exp_prop = _scheme(dt, eps, a, lm, ej, eg)
    block = 4096
    nb = (n + block - 1) // block
    states = _rng.seed_states(seed, nb)
    out = np.empty(n)
    _increments_kernel(states, n, block, dt, math.sqrt((2 * eg + sig2) * dt), rate, eps, a, lm,
                    exp_prop, out)
    return out


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------

_ARRAYS = ("hist_edges", "hist_counts", "hist_sums", "hist_outside", "excursion_counts",
           "final_zeta")


@dataclass
class SimulationResult:
    """Output of :func:`simulate` (saved/loaded as ``.npz``, no pickle).

    Attributes
    ----------
    hist_edges : (n_bins + 1,) float64, bin edges in zeta (uniform)
    hist_counts : (n_groups, n_bins) float64, time-averaged number of particles of
        each group in each bin after burn-in (counts / recorded steps)
    hist_sums : (n_groups, n_bins) float64, the same average of the sum of zeta
        over the samples in each bin (makes tail estimates exact at bin edges)
    hist_outside : (n_groups, 4) float64, [count below, zeta-sum below, count above,
        zeta-sum above] the histogram range, same averaging
    excursion_counts : (n_groups, n_bins) float64, number of excursions below the
        equilibrium (after burn-in) whose minimum fell in each bin (bin 0 also
        holds minima below the range)
    final_zeta : (n_particles,) float64
    meta : dict (JSON-serialisable), see :func:`simulate`
    traj_t, traj_zeta : optional (n_rec,) times and (n_traj, n_rec) thinned paths
    """

    hist_edges: np.ndarray
    hist_counts: np.ndarray
    hist_sums: np.ndarray
    hist_outside: np.ndarray
    excursion_counts: np.ndarray
    final_zeta: np.ndarray
    meta: dict
    traj_t: np.ndarray | None = None
    traj_zeta: np.ndarray | None = None

    def save(self, path) -> str:
        """Write an uncompressed ``.npz`` at exactly ``path``, atomically (temporary file in the
        same directory + ``os.replace``: an interrupted save leaves any earlier file intact and
        no partial file); returns the path. Overwrites: callers check for an existing file."""
        from .runfile import atomic_write

        arrays = {k: getattr(self, k) for k in _ARRAYS}
        if self.traj_zeta is not None:
            arrays["traj_t"] = self.traj_t
            arrays["traj_zeta"] = self.traj_zeta
        arrays["meta"] = np.array(json.dumps(self.meta, allow_nan=False))
        atomic_write(os.fspath(path), lambda fh: np.savez(fh, **arrays))
        return os.fspath(path)

    @classmethod
    def load(cls, path) -> "SimulationResult":
        """Read a file written by :meth:`save` (``allow_pickle=False``).

        Raises ValueError if the file is not a levysde simulation run.
        """
        with np.load(os.fspath(path), allow_pickle=False) as f:
            missing = [k for k in _ARRAYS + ("meta",) if k not in f.files]
            if missing:
                raise ValueError(f"{path}: not a levysde simulation file (missing {', '.join(missing)})")
            meta = json.loads(str(f["meta"][()]))
            if meta.get("kind") != "simulation":
                raise ValueError(f"{path}: meta.kind is {meta.get('kind')!r}, expected 'simulation'")
            arrays = {k: f[k] for k in _ARRAYS}
            traj = {k: f[k] for k in ("traj_t", "traj_zeta") if k in f.files}
        return cls(meta=meta, **arrays, **traj)

    @property
    def n_groups(self) -> int:
        return self.hist_counts.shape[0]

    def tail(self, u=None, **kwargs):
        """Left-tail rate estimate at threshold u on X = -zeta (default meta['threshold_u']);
        see :func:`levysde.tails.tail_from_histogram`."""
        from .tails import tail_from_result

        return tail_from_result(self, self.meta["threshold_u"] if u is None else u, **kwargs)

    def tail_scan(self, us=None, **kwargs):
        """:func:`levysde.tails.threshold_scan` on this run."""
        from .tails import threshold_scan_result

        return threshold_scan_result(self, us, **kwargs)


# ---------------------------------------------------------------------------------------------
# the simulator
# ---------------------------------------------------------------------------------------------

def _divergence_cause(drift, dt, alpha, lam, eta_j, noise=None, win=None):
    causes = []
    if isinstance(drift, (SaturatingDrift, OUDrift)) and drift.gamma <= 0:
        causes.append(f"no restoring drift (gamma = {drift.gamma:g} <= 0)")
    if isinstance(drift, TabulatedDrift) and not (drift.values[0] > 0 and drift.values[-1] < 0):
        causes.append("the tabulated drift does not restore at both ends "
                      f"(F(left) = {drift.values[0]:g}, F(right) = {drift.values[-1]:g})")
    if drift.slope * dt >= 2:
        causes.append(f"dt too large for the drift slope (slope*dt = {drift.slope * dt:g} >= 2: Euler is unstable)")
    if lam == 0 and eta_j > 0:
        causes.append("untempered jumps (lam = 0) reach huge sizes"
                      + (" and have no stationary law for alpha <= 1" if alpha <= 1 else ""))
    if noise is not None and noise > 0.1 * (win[1] - win[0]):
        causes.append(f"the noise per step ({noise:.3g}) is comparable to the window "
                      f"[{win[0]:g}, {win[1]:g}] (eta_J, eta_G or eps too large)")
    if not causes:
        causes.append("the window is too narrow for this model's excursions (widen it)")
    return "; ".join(causes)


def _available_memory():
    """Bytes of memory available (MemAvailable of /proc/meminfo; None when unknown)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _check_int(name, value, lo):
    if isinstance(value, bool) or int(value) != value or value < lo:
        raise ValueError(f"{name} must be an integer >= {lo}; got {value!r}")
    return int(value)


def simulate(eta_j, *, eta_g=DEFAULTS["eta_g"], alpha=DEFAULTS["alpha"], lam=DEFAULTS["lam"],
             drift=None, kappa=DEFAULTS["kappa"], gamma=1.0, z0=0.0,
             particles=16384, t_end=800.0, burn_in=50.0, dt=0.01, seed=0, eps=None,
             n_groups=64, bin_width=0.05, hist_halfwidth=None, window=None,
             z_init=None, traj_particles=0, traj_every=100, threshold_u=3.0, progress=False):
    """Simulate N particles of ``dzeta = F dt + sqrt(2 eta_G) dW + dJ`` by Euler-Maruyama.

    Scheme and bias: module docstring (THEORY.md §3, §7).

    Parameters
    ----------
    eta_j, eta_g, alpha, lam : model parameters (THEORY.md §2-§4; eta_J >= 0, eta_G >= 0,
        alpha in (0, 2), lam >= 0).
    drift : SaturatingDrift | OUDrift | TabulatedDrift; default
        ``SaturatingDrift(kappa, gamma, z0)``.
    particles : int >= 1; t_end > 0 : simulated time (burn-in included);
    burn_in in [0, t_end) : time before recording; dt > 0 : time step.
    seed : int >= 0 (``numpy.random.SeedSequence`` entropy). Same seed -> same
        bits for any thread count.
    eps : jump cut > 0, default :func:`default_eps`.
    n_groups : independent particle groups for jackknife errors (<= particles).
    bin_width, hist_halfwidth : histogram of zeta on [zeq - H, zeq + H] with bins
        of ``bin_width`` (H default: max(25, 45/tail rate) capped at 400; rounded so
        that zeq is an edge).
    window : (lo, hi) divergence window; default zeq -/+ 1e3 (1e12 when lam = 0).
    z_init : initial state(s), default the drift's equilibrium.
    traj_particles, traj_every : keep every ``traj_every``-th step of the first
        ``traj_particles`` paths.
    threshold_u : default tail threshold on X = -zeta, relative to -zeq (stored in meta).
    progress : show a tqdm bar on stderr.

    Returns
    -------
    SimulationResult. ``meta`` keys: kind="simulation", eta_j, eta_g, kappa (plateau or
    None), alpha, lam, drift, gamma, z0, dt, eps, seed, t_end, burn_in, particles,
    n_groups, steps, record_steps, big_jump_rate, sigma_eps2, wall_time_s,
    particle_steps_per_s, beta_theory (None when no admissible root or no plateau),
    beta_model, tail_rate_theory, phase, threshold_u, threads, version, notes (list of
    strings, e.g. beta_model unresolved). t_end and burn_in are the values actually
    simulated: round(t_end/dt) and round(burn_in/dt) steps.

    Raises
    ------
    ValueError naming a bad argument (:class:`SimulationInputError` for the checks
    below), all before any step:

    * ``gamma * dt`` (max |dF/dz| dt for a tabulated drift) > MAX_SLOPE_DT = 0.5:
      :class:`StepSizeError` (also a DivergenceError);
    * ``Lambda_eps dt`` > MAX_JUMPS_PER_STEP = 1e3 (eps too small);
    * ``t_end/dt`` > MAX_STEPS = 1e12; fewer than one recorded step;
    * not enough memory for ``particles`` (about 80 bytes each);
    * an equilibrium so far from 0 that float64 cannot resolve the bins.

    DivergenceError when particles leave the window or become non-finite during the
    run (the message names the likely cause).
    """
    import numba

    from . import __version__
    from .theory import classify

    a, lm, ej = _jump_params(alpha, lam, eta_j)
    eg = float(check_param("eta_g", eta_g))
    if drift is None:
        drift = SaturatingDrift(kappa, gamma, z0)
    if not isinstance(drift, (SaturatingDrift, OUDrift, TabulatedDrift)):
        raise ValueError(f"drift must be a SaturatingDrift, OUDrift or TabulatedDrift; got {drift!r}")
    dt = _check_dt(dt)
    particles = _check_int("particles", particles, 1)
    n_groups = _check_int("n_groups", n_groups, 1)
    if n_groups > particles:
        raise ValueError(f"n_groups must be in [1, particles = {particles}]; got {n_groups}")
    t_end = _finite("t_end", t_end)
    burn_in = _finite("burn_in", burn_in)
    if t_end <= 0:
        raise ValueError(f"t_end must be in (0, inf); got {t_end!r}")
    if not 0 <= burn_in < t_end:
        raise ValueError(f"burn_in must be in [0, t_end = {t_end:g}); got {burn_in!r}")
    if not t_end / dt <= MAX_STEPS:
        raise SimulationInputError(
            f"{{t_end}} / {{dt}} = {t_end / dt:.3g} steps exceeds the cap of {MAX_STEPS:.0e}; "
            f"use a larger {{dt}} or a smaller {{t_end}}")
    n_steps = int(round(t_end / dt))
    rec_start = int(round(burn_in / dt))
    if n_steps - rec_start < 1:
        raise SimulationInputError(
            f"{{t_end}} - {{burn_in}} must be at least one step {{dt}}: t_end = {t_end:g} and "
            f"burn_in = {burn_in:g} round to {n_steps} and {rec_start} steps of dt = {dt:g}")
    # Euler accuracy/stability of the drift step (docs/simulate.md, "Bias")
    slope = drift.slope
    if slope * dt > MAX_SLOPE_DT:
        if isinstance(drift, TabulatedDrift):
            what, name = "the tabulated drift's slope: max |dF/dz|*dt", "max |dF/dz|"
        else:
            what, name = "{gamma}: gamma*dt", "gamma"
        raise StepSizeError(
            f"{{dt}} too large for {what} = {slope * dt:.3g} > {MAX_SLOPE_DT:g} (Euler would be "
            f"biased or unstable); use dt <= {MAX_SLOPE_DT:g}/{name} = {MAX_SLOPE_DT / slope:.3g}")
    eps = default_eps(dt, eta_j=ej, alpha=a) if eps is None else _check_eps(eps)
    bin_width = _finite("bin_width", bin_width)
    if bin_width <= 0:
        raise ValueError(f"bin_width must be in (0, inf); got {bin_width!r}")
    traj_particles = _check_int("traj_particles", traj_particles, 0)
    traj_every = _check_int("traj_every", traj_every, 1)
    threshold_u = _finite("threshold_u", threshold_u)

    # theory for this model (the plateau is kappa)
    notes = []
    plateau = drift.plateau
    if plateau is not None:
        cl = classify(ej, eg, plateau, a, lm)
        beta_th = float(cl.beta_star)
        phase = str(cl.phase)
        rate_th = float(cl.tail_rate)
        beta_m = beta_model(ej, eg, plateau, a, lm, eps=eps) if ej > 0 else beta_th
        if phase != "collapsed" and not math.isfinite(beta_m):
            notes.append("beta_model (root of Phi_eps) could not be resolved in float64 for these "
                         "parameters; reported as null")
    else:
        beta_th = beta_m = rate_th = float("nan")
        phase = "collapsed"
    zeq = drift.equilibrium

    # histogram and window
    if hist_halfwidth is None:
        r = rate_th if (math.isfinite(rate_th) and rate_th > 0) else 0.0
        hist_halfwidth = 400.0 if r == 0 else min(400.0, max(25.0, 45.0 / r))
    hist_halfwidth = _finite("hist_halfwidth", hist_halfwidth)
    if hist_halfwidth <= 0:
        raise ValueError(f"hist_halfwidth must be in (0, inf); got {hist_halfwidth!r}")
    half_bins = max(1, int(math.ceil(hist_halfwidth / bin_width)))
    n_bins = 2 * half_bins
    hist_lo = zeq - half_bins * bin_width
    edges = hist_lo + bin_width * np.arange(n_bins + 1)
    if window is None:
        wh = 1e3 if lm > 0 else 1e12
        window = (zeq - max(wh, 2 * hist_halfwidth), zeq + max(wh, 2 * hist_halfwidth))
    # float64 must resolve the bins around the equilibrium
    z_max = bin_width * 1e-6 / np.finfo(float).eps
    if not abs(zeq) + hist_halfwidth <= z_max:
        raise SimulationInputError(
            f"the equilibrium {{z0}} = {zeq:.3g} is too far from 0: float64 cannot resolve bins of "
            f"width {bin_width:g} there; use |z0| <= {z_max - hist_halfwidth:.3g} (the tail rate "
            f"does not depend on z0)")
    try:
        win_lo, win_hi = (_finite("window", w) for w in window)
    except TypeError:
        raise ValueError(f"window must be (lo, hi) with lo < hi; got {window!r}") from None
    if not win_lo < win_hi:
        raise ValueError(f"window must be (lo, hi) with lo < hi; got {window!r}")

    rate, sig2, exp_prop = _scheme(dt, eps, a, lm, ej, eg)
    # memory: states (32 B), z, wait, exc_min, diverged, start-up temporaries (8 B each) per
    # particle, plus histograms and trajectories
    n_traj_est = min(traj_particles, particles)
    need = (80 * particles + 8 * 4 * n_groups * n_bins
            + 8 * n_traj_est * (n_steps // traj_every if n_traj_est else 0))
    avail = _available_memory()
    if avail is not None and need > 0.8 * avail:
        raise SimulationInputError(
            f"{{particles}} = {particles} needs about {need / 2**30:.3g} GiB of memory but only "
            f"{avail / 2**30:.3g} GiB is available (about 80 bytes per particle); use "
            f"{{particles}} <= {max(1, int(0.8 * avail / 80))}"
            + (" or fewer {traj_particles}" if n_traj_est else ""))
    s_gauss = math.sqrt((2.0 * eg + sig2) * dt)

    states = _rng.seed_states(seed, particles)
    if z_init is None:
        z = np.full(particles, zeq)
    else:
        try:
            z = np.array(np.broadcast_to(np.asarray(z_init, dtype=float), (particles,)))
        except ValueError:
            raise ValueError(f"z_init must be a scalar or have length particles = {particles}") from None
        if not np.all(np.isfinite(z)):
            raise ValueError("z_init must be finite")
    wait = np.full(particles, np.inf)
    if rate > 0:
        # the first waiting time comes from each particle's own stream
        e = np.empty((particles, 1))
        _rng.fill_uniform(states, e)
        wait = -np.log1p(-e[:, 0]) / rate
    gstart = (np.arange(n_groups + 1) * particles) // n_groups
    acc = np.zeros((n_groups, n_bins, 2))
    outside = np.zeros((n_groups, 4))
    exc_counts = np.zeros((n_groups, n_bins))
    exc_min = np.full(particles, np.inf)     # running minimum of the open excursion, inf if none
    diverged = np.zeros(particles, dtype=np.int64)
    n_traj = min(traj_particles, particles)
    n_traj_rec = n_steps // traj_every if n_traj else 0
    traj = np.zeros((n_traj, n_traj_rec))
    kind, dpar, grid, vals = drift._kernel_args()

    # chunks only serve the progress bar and the divergence check: >= ~4e6 particle-steps each
    n_chunks = max(1, min(n_steps, 200, (n_steps * particles) // 4_000_000))
    bounds = [(i * n_steps) // n_chunks for i in range(n_chunks + 1)]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=n_steps * particles, unit="step", unit_scale=True, desc="simulate",
                   leave=False, dynamic_ncols=True, disable=None)   # silent off a terminal
    t0 = time.perf_counter()
    # dynamic scheduling of the groups (chunks of one group): keeps both cores busy when
    # the machine is shared; results do not depend on it (one stream per particle)
    old_chunk = numba.set_parallel_chunksize(1)
    try:
        for i in range(n_chunks):
            s, e_ = bounds[i], bounds[i + 1]
            _run_chunk(z, wait, states, exc_min, diverged, gstart, s, e_ - s, rec_start,
                       dt, kind, dpar, grid, vals, s_gauss, rate, eps, a, lm, exp_prop,
                       hist_lo, 1.0 / bin_width, n_bins, acc, outside, exc_counts, zeq,
                       win_lo, win_hi, traj, traj_every)
            if diverged.any():
                bad = np.flatnonzero(diverged)
                t_bad = diverged[bad].min() * dt
                raise DivergenceError(
                    f"{bad.size} of {particles} particles left the window [{win_lo:g}, {win_hi:g}] "
                    f"or became non-finite by t = {t_bad:g}; likely cause: "
                    + _divergence_cause(drift, dt, a, lm, ej, s_gauss, (win_lo, win_hi)))
            if bar is not None:
                bar.update((e_ - s) * particles)
    finally:
        numba.set_parallel_chunksize(old_chunk)
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0

    # excursions still open at the end count with their current minimum
    open_ = np.flatnonzero(np.isfinite(exc_min))
    if open_.size:
        grp = np.searchsorted(gstart, open_, side="right") - 1
        ib = np.clip(np.floor((exc_min[open_] - hist_lo) / bin_width), 0, n_bins - 1).astype(np.int64)
        np.add.at(exc_counts, (grp, ib), 1.0)
    n_rec = n_steps - rec_start
    counts = acc[:, :, 0] / n_rec
    sums = acc[:, :, 1] / n_rec
    outside /= n_rec

    def num(v):
        return None if v is None or not math.isfinite(v) else float(v)

    meta = {"kind": "simulation", "version": __version__,
            "eta_j": ej, "eta_g": eg, "alpha": a, "lam": lm, **drift.meta(),
            "dt": dt, "eps": eps, "seed": int(seed) if isinstance(seed, (int, np.integer)) else str(seed),
            "t_end": n_steps * dt, "burn_in": rec_start * dt, "particles": particles,
            "n_groups": n_groups, "steps": n_steps, "record_steps": n_rec,
            "big_jump_rate": rate, "sigma_eps2": sig2, "exp_proposal": exp_prop,
            "window": [win_lo, win_hi], "threads": int(numba.get_num_threads()),
            "wall_time_s": wall, "particle_steps_per_s": particles * n_steps / wall,
            "beta_theory": num(beta_th), "beta_model": num(beta_m),
            "tail_rate_theory": num(rate_th), "phase": phase,
            "threshold_u": threshold_u - zeq, "equilibrium": zeq, "notes": notes}
    traj_t = (np.arange(1, n_traj_rec + 1) * traj_every * dt) if n_traj else None
    return SimulationResult(hist_edges=edges, hist_counts=counts, hist_sums=sums, hist_outside=outside,
                            excursion_counts=exc_counts, final_zeta=z, meta=meta,
                            traj_t=traj_t, traj_zeta=traj if n_traj else None)
