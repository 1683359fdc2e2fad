"""An independent generator of the SDE ``dzeta = F(zeta) dt + sqrt(2 eta_G) dW + dJ`` for tests and
coverage studies (docs/specification.md §2-§3), written apart from :mod:`levysde.simulation`.

The project rule is that coverage studies must not only reuse levysde's own simulator and drift
family. This module shares no code with it: pure numpy, its own drifts, and the jumps drawn by a
different method.

Jumps: Rosinski's series representation of a tempered stable process (J. Rosinski, "Tempering
stable processes", Stoch. Proc. Appl. 117 (2007) 677, §5), not levysde's compound Poisson with
Pareto-rejection magnitudes (docs/specification.md §7). On a window of length T, with
``c = eta_J c_alpha`` the Levy density's constant per side,

    J(t) = sum_j  V_j min( (alpha Gamma_j / (2 c T))^(-1/alpha),  E_j U_j^(1/alpha) / lam ) 1{T U'_j <= t}

with Gamma_j the arrival times of a unit Poisson process, V_j = +-1, E_j standard exponential,
U_j, U'_j uniform, all independent. The first argument of the min is the LePage series of the
untempered symmetric stable law; the min with E U^(1/alpha)/lam tempers it exactly: the magnitude
tail of the points is ``2 c T int_x^inf e^(-lam v) v^(-1-alpha) dv`` (integrate
``P(E U^(1/alpha) > lam x) = alpha (lam x)^alpha Gamma(-alpha, lam x)`` against the stable tail).
Symmetric, so no centring. Truncation: the terms with Gamma_j <= Gamma_max, i.e. stable magnitude
``s_j >= eps``, are drawn (their count is Poisson, their Gamma_j uniform on (0, Gamma_max)); the
remainder (every jump it holds is smaller than eps) is replaced by a Brownian motion of the same
variance ``sigma_rem^2`` per unit time (Asmussen & Rosinski, J. Appl. Prob. 38 (2001) 482). The
generated process is then *exactly* a Levy process with symbol

    Psi_model(beta) = Psi(beta) - Psi_rem(beta) + sigma_rem^2 beta^2 / 2,

computed here by quadrature (:func:`remainder_symbol`); :func:`model_root` is the exact left-tail
rate of what is generated (the truth for a study), next to the theory's beta* (they differ by
~1e-5 relative at the default cut; :func:`model_root` reports both).

Time stepping: Euler steps of length ``dt`` for the drift (evaluated at the step's start), the
Gaussian part exact over each step, the jumps summed per step (each jump at its own uniform time;
any number per step). On a drift's plateau the scheme is exact; elsewhere its error is O(dt).

Drifts (:class:`Drift`), all with F -> kappa as z -> -inf:

* ``saturating``: ``kappa tanh(gamma (z0 - z)/kappa)`` (the specification's form);
* ``piecewise``: ``clip(-gamma (z - z0), -kappa_r, kappa)``: exactly kappa left of ``z0 - kappa/gamma``;
* ``logistic``: ``kappa - (kappa + kappa_r) / (1 + exp(-4 gamma (z - z1)/(kappa + kappa_r)))``,
  asymmetric (plateau -kappa_r on the right), slope -gamma at its centre ``z1`` (chosen so that
  F(z0) = 0);
* ``algebraic``: ``kappa (z0 - z) / sqrt(w^2 + (z0 - z)^2)``, w = kappa/gamma: the plateau is
  approached only like 1 - w^2/(2 (z0 - z)^2) (a slow transition: the stress case of a cut
  inside the transition);
* ``ou``: ``-gamma (z - z0)`` (no plateau: the structural control).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize, special

from levysde.theory import levy

__all__ = ["Drift", "DRIFT_KINDS", "c_alpha", "default_eps", "remainder_variance", "remainder_symbol",
           "model_symbol", "model_root", "jump_increments", "simulate"]

DRIFT_KINDS = ("saturating", "piecewise", "logistic", "algebraic", "ou")

#: default cap on the drawn jumps per unit time per neuron (sets eps, :func:`default_eps`)
JUMP_RATE = 50.0
#: smallest default cut of the series (eps), whatever the rate
EPS_MIN = 0.01


def c_alpha(alpha: float) -> float:
    """``-1/(2 Gamma(-alpha) cos(pi alpha/2))`` (1/pi at alpha = 1), from its own closed form
    ``Gamma(1 + alpha) sin(pi alpha/2)/pi`` (the two agree for alpha in (0, 2))."""
    return math.gamma(1.0 + alpha) * math.sin(math.pi * alpha / 2.0) / math.pi


@dataclass(frozen=True)
class Drift:
    """A restoring drift: ``kind`` in DRIFT_KINDS, plateau ``kappa`` on the left, slope ``gamma``
    at the equilibrium ``z0``, right plateau ``kappa_r`` (piecewise, logistic; default kappa)."""

    kind: str = "saturating"
    kappa: float = 1.0
    gamma: float = 1.0
    z0: float = 0.0
    kappa_r: float | None = None

    def __post_init__(self):
        if self.kind not in DRIFT_KINDS:
            raise ValueError(f"kind must be one of {DRIFT_KINDS}; got {self.kind!r}")
        if not (self.kappa > 0 and self.gamma > 0):
            raise ValueError("kappa and gamma must be > 0")

    @property
    def right(self) -> float:
        return self.kappa if self.kappa_r is None else self.kappa_r

    @property
    def plateau(self) -> float | None:
        return None if self.kind == "ou" else self.kappa

    def __call__(self, z):
        z = np.asarray(z, dtype=float)
        k, g, z0, kr = self.kappa, self.gamma, self.z0, self.right
        if self.kind == "saturating":
            return k * np.tanh(g * (z0 - z) / k)
        if self.kind == "piecewise":
            return np.clip(-g * (z - z0), -kr, k)
        if self.kind == "logistic":
            s = 4.0 * g / (k + kr)
            z1 = z0 + math.log(kr / k) / s       # F(z0) = 0
            return k - (k + kr) * special.expit(s * (z - z1))
        if self.kind == "algebraic":
            w = k / g
            return k * (z0 - z) / np.hypot(w, z0 - z)
        return -g * (z - z0)

    def plateau_share(self, z) -> np.ndarray:
        """F(z)/kappa: how far z is on the plateau (1 = on it)."""
        return self(z) / self.kappa


def default_eps(eta_j: float, alpha: float, rate: float = JUMP_RATE) -> float:
    """The series cut eps: stable magnitudes >= eps are drawn, about ``rate`` per unit time per neuron
    (``(2 c/alpha) eps^-alpha = rate``), never below :data:`EPS_MIN`."""
    c = eta_j * c_alpha(alpha)
    return max(EPS_MIN, (2.0 * c / (alpha * rate)) ** (1.0 / alpha))


def _tail_w(x, alpha, lam):
    """P(E U^(1/alpha) / lam > x) = int_0^1 exp(-lam x u^(-1/alpha)) du (the tempering variable)."""
    if lam == 0:
        return 1.0
    return integrate.quad(lambda u: math.exp(-lam * x * u ** (-1.0 / alpha)), 0.0, 1.0, limit=200)[0]


def remainder_symbol(beta, eta_j, alpha, lam, eps):
    """``Psi_rem(beta) = int (cosh(beta z) - 1) nu_rem(dz)`` of the series remainder (stable magnitudes
    below eps, tempered by the min) and its variance per unit time ``sigma_rem^2``:
    ``int_0^eps g'(x) P(W > x) (2 c/alpha)(x^-alpha - eps^-alpha) dx`` with g = cosh(beta x) - 1
    (resp. x^2). Returns (Psi_rem, sigma_rem^2)."""
    c = eta_j * c_alpha(alpha)
    dens = lambda x: _tail_w(x, alpha, lam) * (2.0 * c / alpha) * (x ** -alpha - eps ** -alpha)   # noqa: E731
    var = integrate.quad(lambda x: 2.0 * x * dens(x), 0.0, eps, limit=200)[0]
    if beta == 0:
        return 0.0, var
    ps = integrate.quad(lambda x: beta * math.sinh(beta * x) * dens(x), 0.0, eps, limit=200)[0]
    return ps, var


def remainder_variance(eta_j, alpha, lam, eps) -> float:
    """sigma_rem^2: the variance per unit time of the jumps left out of the series (see module doc)."""
    return remainder_symbol(0.0, eta_j, alpha, lam, eps)[1]


def model_symbol(beta, eta_j, alpha, lam, eps) -> float:
    """The generated jump part's Laplace exponent: Psi(beta) - Psi_rem(beta) + sigma_rem^2 beta^2/2
    (+inf beyond lam)."""
    if abs(beta) > lam:
        return math.inf
    full = float(levy.psi(beta, alpha=alpha, lam=lam, eta_j=eta_j))
    ps, var = remainder_symbol(abs(beta), eta_j, alpha, lam, eps)
    return full - ps + 0.5 * var * beta * beta


def model_root(eta_j, eta_g, kappa, alpha, lam, eps=None) -> float:
    """The exact left-tail rate of the generated process: the root in (0, lam) of
    ``eta_G b^2 + Psi_model(b) - kappa b`` (NaN when there is none: collapsed). eps defaults to
    :func:`default_eps`; eta_J = 0 gives kappa/eta_G."""
    if eta_j == 0:
        return kappa / eta_g if eta_g > 0 else math.inf
    eps = default_eps(eta_j, alpha) if eps is None else eps
    h = lambda b: eta_g * b + model_symbol(b, eta_j, alpha, lam, eps) / b - kappa     # noqa: E731
    if not h(lam) > 0:
        return float("nan")
    return optimize.brentq(h, 1e-9 * lam, lam, xtol=1e-13, rtol=1e-12)


def jump_increments(rng, n_steps, n_neurons, dt, eta_j, alpha, lam, eps):
    """(n_steps, n_neurons) sums of the drawn series jumps over consecutive steps of length dt
    (one window T = n_steps dt; see module doc). The remainder is not included."""
    T = n_steps * dt
    c = eta_j * c_alpha(alpha)
    gmax = 2.0 * c * T * eps ** (-alpha) / alpha
    n = rng.poisson(gmax * n_neurons)
    gam = rng.uniform(0.0, gmax, n)
    s = (alpha * gam / (2.0 * c * T)) ** (-1.0 / alpha)
    if lam > 0:
        s = np.minimum(s, rng.standard_exponential(n) * rng.uniform(size=n) ** (1.0 / alpha) / lam)
    s *= rng.choice((-1.0, 1.0), n)
    cell = rng.integers(0, n_steps, n) * n_neurons + rng.integers(0, n_neurons, n)
    return np.bincount(cell, weights=s, minlength=n_steps * n_neurons).reshape(n_steps, n_neurons)


def _jumps(rng, m, n_neurons, dt, eta_j, alpha, lam, eps, shared):
    """Series jumps per step: a share ``shared`` of the intensity common to all neurons."""
    if shared <= 0:
        return jump_increments(rng, m, n_neurons, dt, eta_j, alpha, lam, eps)
    out = jump_increments(rng, m, 1, dt, shared * eta_j, alpha, lam, eps)
    if shared < 1:
        out = out + jump_increments(rng, m, n_neurons, dt, (1 - shared) * eta_j, alpha, lam, eps)
    return out


def simulate(drift: Drift, *, eta_j, eta_g, alpha, lam, n_neurons, n_records, record_dt, dt=0.01,
             burn_in=50.0, seed=0, eps=None, z_init=None, chunk=2000, shared_jumps=False,
             noise_scale=None, z0_shift=None):
    """Independent trajectories of the SDE, recorded every ``record_dt`` after ``burn_in``.

    Returns (zeta (n_records, n_neurons), t (n_records,), info dict with eps, sigma_rem^2 and dt).
    ``record_dt`` must be a multiple of ``dt``. z_init defaults to z0. ``shared_jumps`` in [0, 1]
    (True = 1): that share of the jump intensity is one jump process common to every neuron, the rest
    is each neuron's own (the Levy measures add, so each neuron's own law is unchanged; the neurons
    are no longer independent: a common shock, the failure mode of a neuron-group jackknife).

    Non-stationary variants (controls for a stationarity test), both functions of the time ``s``
    since the first record (negative during the burn-in):

    * ``noise_scale(s) -> a > 0``: every noise increment of a step (Gaussian part and jumps) is
      multiplied by ``a(s)`` at the step's start: the noise intensity changes over training time
      (``a`` scales eta_G by ``a^2`` and the jump sizes by ``a``), and the spectrum widens or narrows;
    * ``z0_shift(s) -> shift``: the drift is evaluated at ``zeta - shift(s)``, i.e. its equilibrium
      (and the whole drift profile) is moved to ``z0 + shift(s)``: a moving equilibrium.
    """
    every = int(round(record_dt / dt))
    if every < 1 or abs(every * dt - record_dt) > 1e-9 * record_dt:
        raise ValueError("record_dt must be a positive multiple of dt")
    rng = np.random.default_rng(seed)
    eps = (default_eps(eta_j, alpha) if eta_j > 0 else 1.0) if eps is None else eps
    var_rem = remainder_variance(eta_j, alpha, lam, eps) if eta_j > 0 else 0.0
    sd = math.sqrt((2.0 * eta_g + var_rem) * dt)
    n_burn = int(math.ceil(burn_in / dt / every)) * every
    n_total = n_burn + (n_records - 1) * every + 1
    z = np.full(n_neurons, drift.z0, float) if z_init is None else np.array(z_init, float).copy()
    out = np.empty((n_records, n_neurons))
    k = 0
    done = 0
    while done < n_total:
        m = min(chunk, n_total - done)
        jumps = _jumps(rng, m, n_neurons, dt, eta_j, alpha, lam, eps, float(shared_jumps)) if eta_j > 0 else None
        noise = rng.standard_normal((m, n_neurons)) * sd
        for i in range(m):
            step = done + i
            if step >= n_burn and (step - n_burn) % every == 0:
                out[k] = z
                k += 1
            s = (step - n_burn) * dt
            f = drift(z) if z0_shift is None else drift(z - z0_shift(s))
            if noise_scale is None:        # the plain scheme, operation for operation
                z = z + f * dt + noise[i]
                if jumps is not None:
                    z += jumps[i]
            else:
                a = float(noise_scale(s))
                z = z + f * dt + a * (noise[i] if jumps is None else noise[i] + jumps[i])
            if not np.all(np.isfinite(z)):
                raise FloatingPointError("trajectory diverged")
        done += m
    t = burn_in + np.arange(n_records) * record_dt
    info = {"eps": eps, "sigma_rem2": var_rem, "dt": dt}
    return out, t, info
