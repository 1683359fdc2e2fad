"""Drifts F(zeta) of the simulated SDE ``dzeta = F(zeta) dt + sqrt(2 eta_G) dW + dJ`` (docs/specification.md §3).

Each drift is a small object: callable on arrays (``F(z)``), with its ``plateau`` (the kappa
of docs/specification.md §4, None when there is none), ``equilibrium``, ``slope`` (|F'| that bounds the
Euler step, :data:`levysde.simulation.MAX_SLOPE_DT`), ``meta()`` (JSON-serialisable
description stored with a run) and the arguments of the compiled drift of
:mod:`levysde.simulation._kernels`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from levysde.core.validate import check_array, check_real
from levysde.simulation._checks import restoring_gamma
from levysde.simulation._kernels import DRIFT_OU, DRIFT_SATURATING, DRIFT_TABULATED
from levysde.theory.params import DEFAULTS, check_param

__all__ = ["SaturatingDrift", "OUDrift", "TabulatedDrift"]


class _Centred:
    """What the drifts with parameters (gamma, z0) share: the equilibrium z0, the slope gamma
    at it (|F'|, which sets the Euler stability bound dt < 2/slope) and their meta()."""

    @property
    def equilibrium(self) -> float:
        return self.z0

    @property
    def slope(self) -> float:
        """|F'| at the equilibrium (sets the Euler stability bound dt < 2/slope)."""
        return self.gamma

    def meta(self) -> dict:
        return {"drift": self.name, "kappa": self.plateau, "gamma": self.gamma, "z0": self.z0}


@dataclass(frozen=True)
class SaturatingDrift(_Centred):
    """``F(z) = kappa tanh(gamma (z0 - z)/kappa)`` (docs/specification.md §3).

    Linear ``-gamma (z - z0)`` near z0, plateau +kappa on the far left, -kappa on
    the right. kappa > 0, gamma > 0 (gamma <= 0 is no restoring drift: the particles
    drift away at speed kappa; ValueError naming gamma), z0 finite.
    """

    kappa: float = DEFAULTS["kappa"]
    gamma: float = 1.0
    z0: float = 0.0
    name = "saturating"

    def __post_init__(self):
        object.__setattr__(self, "kappa", check_param("kappa", self.kappa, scalar=True))
        object.__setattr__(self, "gamma", check_real("gamma", self.gamma))
        object.__setattr__(self, "z0", check_real("z0", self.z0))
        restoring_gamma(self.gamma, self.name)

    def __call__(self, z):
        return self.kappa * np.tanh(self.gamma * (self.z0 - np.asarray(z, float)) / self.kappa)

    @property
    def plateau(self):
        """kappa: the limit of F at zeta -> -inf (the kappa of docs/specification.md §4)."""
        return self.kappa

    def _kernel_args(self):
        return DRIFT_SATURATING, np.array([self.kappa, self.gamma / self.kappa, self.z0]), np.zeros(1), np.zeros(1)


@dataclass(frozen=True)
class OUDrift(_Centred):
    """Ornstein-Uhlenbeck ``F(z) = -gamma (z - z0)`` (docs/specification.md §3): no plateau
    (the structural collapsed control). gamma, z0 finite. gamma <= 0 (no restoring or a repulsive
    drift) is accepted as a function, but :func:`levysde.simulation.simulate` refuses it
    (SimulationInputError naming gamma: no stable equilibrium, no stationary law)."""

    gamma: float = 1.0
    z0: float = 0.0
    name = "ou"

    def __post_init__(self):
        object.__setattr__(self, "gamma", check_real("gamma", self.gamma))
        object.__setattr__(self, "z0", check_real("z0", self.z0))

    def __call__(self, z):
        return -self.gamma * (np.asarray(z, float) - self.z0)

    plateau = None

    def _kernel_args(self):
        return DRIFT_OU, np.array([0.0, self.gamma, self.z0]), np.zeros(1), np.zeros(1)


class TabulatedDrift:
    """Drift given on a grid: linear interpolation, constant extrapolation (docs/specification.md §3).

    Parameters
    ----------
    grid : (m,) strictly increasing finite floats, m >= 2 (zeta values)
    values : (m,) finite floats, F at the grid points (1/time)

    The plateau (kappa of docs/specification.md §4) is ``values[0]`` when it is > 0; the
    equilibrium is the first downward zero crossing of the interpolant (or the
    grid point of smallest |F| when there is none).

    Raises ValueError naming ``grid`` or ``values`` on bad shapes or values (1-d, same length).
    """

    name = "tabulated"

    def __init__(self, grid, values):
        g = np.array(check_array("grid", grid, ndim=1, min_size=2, increasing=True))
        v = np.array(check_array("values", values, shape=(g.size,)))
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
        return DRIFT_TABULATED, np.zeros(3), self.grid.copy(), self.values.copy()   # writeable: one compiled type

    def meta(self) -> dict:
        return {"drift": self.name, "kappa": self.plateau, "gamma": None, "z0": self.equilibrium,
                "drift_grid": self.grid.tolist(), "drift_values": self.values.tolist()}
