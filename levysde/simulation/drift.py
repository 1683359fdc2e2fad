"""Drifts F(zeta) of the simulated SDE ``dzeta = F(zeta) dt + sqrt(2 eta_G) dW + dJ`` (docs/specification.md §3).

Every drift is a :class:`Drift`: callable on arrays (``F(z)``), with its ``plateau`` (the kappa
of docs/specification.md §4, None when there is none), ``equilibrium``, ``slope`` (|F'| that
bounds the Euler step, :data:`levysde.simulation.MAX_SLOPE_DT`), ``meta()`` (JSON-serialisable
description stored with a run) and ``kernel_args()``: the :class:`KernelArgs` of the compiled
drift that :func:`levysde.simulation.simulate` runs (one of the kinds
:data:`DRIFT_SATURATING`, :data:`DRIFT_OU`, :data:`DRIFT_TABULATED`).

The built-in drifts are :class:`SaturatingDrift`, :class:`OUDrift` and :class:`TabulatedDrift`;
a drift of another form is a subclass of :class:`Drift` whose ``kernel_args`` gives one of
the compiled kinds (e.g. a tabulation of F on a fine grid).
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field

import numpy as np

from levysde.core.validate import check_array, check_int, check_real
from levysde.simulation._checks import restoring_gamma
from levysde.simulation._step import DRIFT_OU, DRIFT_SATURATING, DRIFT_TABULATED
from levysde.theory.params import DEFAULTS, check_param

__all__ = ["Drift", "KernelArgs", "SaturatingDrift", "OUDrift", "TabulatedDrift",
           "DRIFT_SATURATING", "DRIFT_OU", "DRIFT_TABULATED"]

def _unit():
    return np.zeros(1)


@dataclass(frozen=True, eq=False)
class KernelArgs:
    """What the compiled drift of the simulator needs (the specification, §3).

    Unpacks as ``kind, params, grid, values``; :meth:`Drift.kernel_args` returns one.

    Attributes
    ----------
    kind : int
        :data:`DRIFT_SATURATING` (``F = p0 tanh(p1 (p2 - z))``: p0 = kappa, p1 = gamma/kappa,
        p2 = z0), :data:`DRIFT_OU` (``F = -p1 (z - p2)``: p1 = gamma, p2 = z0) or
        :data:`DRIFT_TABULATED` (linear interpolation of ``values`` on ``grid``, constant beyond).
    params : (3,) float64, finite
        (p0, p1, p2); zeros for a tabulated drift.
    grid, values : (m,) float64, finite
        The table of a tabulated drift (m >= 2, grid strictly increasing); placeholders
        (default length 1) for the other kinds.

    Arrays are stored as fresh writeable float64 copies (one compiled type for every drift).

    Raises
    ------
    ValueError
        Naming ``kind``, ``params``, ``grid`` or ``values`` when one breaks these rules.

    Examples
    --------
    The Ornstein-Uhlenbeck drift ``F = -2 (z - 0.5)``:

    >>> kind, params, grid, values = KernelArgs(DRIFT_OU, [0.0, 2.0, 0.5])
    >>> print(kind == DRIFT_OU, params, grid.shape)
    True [0.  2.  0.5] (1,)
    >>> KernelArgs(DRIFT_TABULATED, [0.0, 0.0, 0.0], [1.0, 0.0], [0.0, 0.0])
    Traceback (most recent call last):
    ...
    ValueError: grid must be finite and strictly increasing; got 0.0 after 1.0
    """

    kind: int
    params: np.ndarray
    grid: np.ndarray = field(default_factory=_unit)
    values: np.ndarray = field(default_factory=_unit)

    def __post_init__(self):
        object.__setattr__(self, "kind", check_int("kind", self.kind, 0, 2,
                                                   why="DRIFT_SATURATING, DRIFT_OU or DRIFT_TABULATED"))
        object.__setattr__(self, "params", np.array(check_array("params", self.params, shape=(3,))))
        tabulated = self.kind == DRIFT_TABULATED
        grid = np.array(check_array("grid", self.grid, ndim=1, min_size=2 if tabulated else 1,
                                    increasing=tabulated))
        values = np.array(check_array("values", self.values, shape=(grid.size,)))
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "values", values)

    def __iter__(self):
        return iter((self.kind, self.params, self.grid, self.values))


class Drift(abc.ABC):
    """A drift F(zeta) that :func:`levysde.simulation.simulate` can integrate (docs/specification.md §3).

    A subclass implements ``__call__``, ``plateau``, ``equilibrium``, ``slope``, ``meta`` and
    ``kernel_args``, and sets ``name``. The simulator reads nothing else.

    Attributes
    ----------
    name : str
        Short name, stored in ``meta()["drift"]``.
    slope_name : str
        The symbol of ``slope`` in error messages (``"gamma"`` for the drifts with a slope
        parameter gamma; an identifier names that parameter).

    Examples
    --------
    A drift of one's own: here a linear restoring drift run by the compiled
    Ornstein-Uhlenbeck kind.

    >>> class Linear(Drift):
    ...     name = "linear"
    ...     plateau = None                       # no plateau: the collapsed phase
    ...     equilibrium = 0.0
    ...     def __init__(self, gamma):
    ...         self.gamma = gamma
    ...     def __call__(self, z):
    ...         return -self.gamma * np.asarray(z, float)
    ...     @property
    ...     def slope(self):
    ...         return self.gamma
    ...     def meta(self):
    ...         return {"drift": self.name, "kappa": None, "gamma": self.gamma, "z0": 0.0}
    ...     def kernel_args(self):
    ...         return KernelArgs(DRIFT_OU, [0.0, self.gamma, 0.0])
    >>> d = Linear(2.0)
    >>> print(isinstance(d, Drift), float(d(1.5)), d.kernel_args().kind == DRIFT_OU)
    True -3.0 True
    """

    name: str = "drift"
    slope_name: str = "max |dF/dz|"

    @abc.abstractmethod
    def __call__(self, z) -> np.ndarray:
        """F(z) for an array z (1/time), elementwise."""

    @property
    @abc.abstractmethod
    def plateau(self) -> float | None:
        """kappa, the limit of F at zeta -> -inf (docs/specification.md §4), > 0; None without one."""

    @property
    @abc.abstractmethod
    def equilibrium(self) -> float:
        """The stable equilibrium z* (F(z*) = 0): the histogram's centre and the default start."""

    @property
    @abc.abstractmethod
    def slope(self) -> float:
        """|F'| that bounds the Euler step: ``slope * dt <= MAX_SLOPE_DT`` is required."""

    @abc.abstractmethod
    def meta(self) -> dict:
        """JSON-serialisable description stored with a run: at least ``drift`` (the name),
        ``kappa`` (the plateau or None), ``gamma`` and ``z0``. Values are strings, None, bools,
        finite numbers or lists of them; keys other than the drift's fields of
        :class:`SimulationMeta` go to its ``extra`` (simulate's own fields are refused)."""

    @abc.abstractmethod
    def kernel_args(self) -> KernelArgs:
        """The compiled drift that runs this one (:class:`KernelArgs`)."""

    def check_restoring(self) -> None:
        """Raise :class:`levysde.simulation.SimulationInputError` when the simulator must refuse
        the drift: it has no stable equilibrium, so no stationary law. Default: accept."""
        return None


class _Centred(Drift):
    """What the drifts with parameters (gamma, z0) share: the equilibrium z0, the slope gamma
    at it (|F'|, which sets the Euler stability bound dt < 2/slope) and their meta()."""

    slope_name = "gamma"

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
    r"""The saturating drift :math:`F(z) = \kappa \tanh(\gamma (z_0 - z)/\kappa)` (the specification, §3).

    Linear, :math:`-\gamma (z - z_0)`, near z0, plateau :math:`+\kappa` on the far left,
    :math:`-\kappa` on the right. The default, ``SaturatingDrift()``, is the drift of
    :func:`levysde.simulation.simulate`: kappa = 1, gamma = 1, z0 = 0.

    Parameters
    ----------
    kappa : float, optional
        The plateau kappa > 0 (default :data:`levysde.theory.params.DEFAULTS` ``["kappa"]`` = 1):
        the kappa of the characteristic equation (the specification, §4).
    gamma : float, optional
        Slope at the equilibrium, > 0 (default 1; 1/time). gamma <= 0 is no restoring drift
        (the particles drift away at speed kappa): a ValueError naming gamma.
    z0 : float, optional
        The equilibrium, finite (default 0).

    Raises
    ------
    ValueError
        Naming ``kappa``, ``gamma`` or ``z0`` outside its range (a
        :class:`levysde.simulation.SimulationInputError` for gamma <= 0).

    Examples
    --------
    >>> d = SaturatingDrift(kappa=2.0)
    >>> print(d.plateau, d.equilibrium, d.slope, round(float(d(-50.0)), 6))
    2.0 0.0 1.0 2.0
    >>> print(d.meta())
    {'drift': 'saturating', 'kappa': 2.0, 'gamma': 1.0, 'z0': 0.0}
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

    def kernel_args(self) -> KernelArgs:
        return KernelArgs(DRIFT_SATURATING, [self.kappa, self.gamma / self.kappa, self.z0])


@dataclass(frozen=True)
class OUDrift(_Centred):
    r"""The Ornstein-Uhlenbeck drift :math:`F(z) = -\gamma (z - z_0)` (the specification, §3).

    No plateau: the structural collapsed control (the left tail is the jumps' own, tempered
    at rate lam).

    Parameters
    ----------
    gamma : float, optional
        The slope, finite (default 1; 1/time). gamma <= 0 (no restoring or a repulsive drift)
        is accepted as a function, but :func:`levysde.simulation.simulate` refuses it
        (SimulationInputError naming gamma: no stable equilibrium, no stationary law).
    z0 : float, optional
        The equilibrium, finite (default 0).

    Raises
    ------
    ValueError
        Naming ``gamma`` or ``z0`` when not a finite real number.

    Examples
    --------
    >>> d = OUDrift(gamma=2.0)
    >>> print(float(d(1.0)), d.plateau, d.meta())
    -2.0 None {'drift': 'ou', 'kappa': None, 'gamma': 2.0, 'z0': 0.0}
    """

    gamma: float = 1.0
    z0: float = 0.0
    name = "ou"

    def __post_init__(self):
        object.__setattr__(self, "gamma", check_real("gamma", self.gamma))
        object.__setattr__(self, "z0", check_real("z0", self.z0))

    def __call__(self, z):
        return -self.gamma * (np.asarray(z, float) - self.z0)

    plateau = None

    def kernel_args(self) -> KernelArgs:
        return KernelArgs(DRIFT_OU, [0.0, self.gamma, self.z0])

    def check_restoring(self) -> None:
        restoring_gamma(self.gamma, self.name)


class TabulatedDrift(Drift):
    """Drift given on a grid: linear interpolation, constant extrapolation (docs/specification.md §3).

    Parameters
    ----------
    grid : (m,) strictly increasing finite floats, m >= 2 (zeta values)
    values : (m,) finite floats, F at the grid points (1/time)

    The plateau (kappa of docs/specification.md §4) is ``values[0]`` when it is > 0; the
    equilibrium is the first downward zero crossing of the interpolant (or the
    grid point of smallest |F| when there is none).

    Attributes
    ----------
    grid, values : ndarray, shape (m,)
        The table, read-only float64 copies.

    Raises
    ------
    ValueError
        Naming ``grid`` or ``values`` on bad shapes or values.

    Examples
    --------
    >>> d = TabulatedDrift([-4.0, -1.0, 1.0, 4.0], [1.5, 1.0, -1.0, -1.5])
    >>> print(d.equilibrium, d.plateau, d.slope, float(d(-10.0)))
    0.0 1.5 1.0 1.5
    >>> print(d)
    TabulatedDrift(<4 points on [-4, 4]>)
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

    def kernel_args(self) -> KernelArgs:
        return KernelArgs(DRIFT_TABULATED, np.zeros(3), self.grid, self.values)   # copied: writeable

    def meta(self) -> dict:
        return {"drift": self.name, "kappa": self.plateau, "gamma": None, "z0": self.equilibrium,
                "drift_grid": self.grid.tolist(), "drift_values": self.values.tolist()}
