"""Theory phase diagrams: beta* over a 2-d grid of two model parameters (docs/specification.md §4).

Any two of ``eta_j, kappa, eta_g, alpha, lam`` can be the axes; the others are held
fixed. Besides beta* the grid carries the signed distance to the threshold,
``eta_J - eta_J*`` (its zero level set is the threshold curve) and ``beta* - 1``
(its zero level set is the critical manifold), so the curves can be drawn as
contours for every choice of axes, including those where neither axis is eta_J.
Plotting lives in :mod:`levysde.plotting`; this module is numerics only.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from levysde.core.validate import check_array, check_choice, check_int
from levysde.io.files import atomic_write
from levysde.theory.params import DEFAULTS, check_param
from levysde.theory.phases import PHASES, classify

__all__ = ["AXES", "PhaseDiagram", "phase_diagram", "DEFAULT_RANGES", "SIM_SETTINGS"]


#: parameters that can be put on an axis
AXES = ("eta_j", "kappa", "eta_g", "alpha", "lam")


#: default axis ranges (chosen so every phase is visible around the docs/specification.md §4 defaults)
DEFAULT_RANGES = {"eta_j": (0.0, 8.0), "kappa": (0.1, 2.5), "eta_g": (0.0, 0.6),
                  "alpha": (0.05, 1.95), "lam": (0.05, 4.0)}


_FIXED_DEFAULT = {"eta_j": 3.0, **DEFAULTS}


@dataclass(frozen=True)
class PhaseDiagram:
    """beta* and phases on a (ny, nx) grid of two model parameters.

    Made by :func:`phase_diagram`, drawn by :func:`levysde.plotting.plot_phase_diagram`.

    Attributes
    ----------
    x_name, y_name : str
        The axis parameters (members of :data:`AXES`).
    x, y : ndarray, shapes (nx,) and (ny,)
        The grids of the two axes.
    fixed : dict of str to float
        The parameters held fixed.
    beta_star : ndarray, shape (ny, nx)
        beta*, NaN where there is no admissible root (the specification, §4).
    phase_code : ndarray of int8, shape (ny, nx)
        Index into ``phases``.
    tail_rate : ndarray, shape (ny, nx)
        The stationary left-tail rate of the phase.
    threshold_gap : ndarray, shape (ny, nx)
        eta_J - eta_J* (its zero level set is the threshold curve; NaN where lam = 0).
    critical_gap : ndarray, shape (ny, nx)
        beta* - 1 (its zero level set is the critical manifold; NaN where no root).
    phases : tuple of str
        The phase names, :data:`levysde.theory.PHASES`.

    Examples
    --------
    >>> import os, tempfile
    >>> d = phase_diagram("alpha", "lam", nx=30, ny=20, eta_j=2.0)
    >>> print(d.beta_star.shape, d.fixed)
    (20, 30) {'eta_j': 2.0, 'eta_g': 0.1, 'kappa': 1.0}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     d.save(os.path.join(tmp, "diagram.npz"))
    ...     with np.load(os.path.join(tmp, "diagram.npz")) as z:
    ...         print(z["beta_star"].shape, str(z["phases"][0]))
    (20, 30) collapsed
    """

    x_name: str
    y_name: str
    x: np.ndarray
    y: np.ndarray
    fixed: dict
    beta_star: np.ndarray
    phase_code: np.ndarray
    tail_rate: np.ndarray
    threshold_gap: np.ndarray
    critical_gap: np.ndarray
    phases: tuple = field(default=PHASES)

    def save(self, path) -> None:
        """Write the grid data to exactly ``path``, atomically.

        An ``.npz`` archive, no pickle (numpy's habit of appending ``.npz`` to other names does
        not apply): the arrays and a JSON ``meta`` with the axes and fixed values. An interrupted
        save leaves any previous file intact.

        Parameters
        ----------
        path : str or os.PathLike
            The file to write.
        """


        arrays = dict(x=self.x, y=self.y, beta_star=self.beta_star, phase_code=self.phase_code,
                      tail_rate=self.tail_rate, threshold_gap=self.threshold_gap,
                      critical_gap=self.critical_gap, phases=np.array(self.phases),
                      meta=np.array(json.dumps({"kind": "phase_diagram", "x_name": self.x_name,
                                                "y_name": self.y_name, "fixed": self.fixed})))
        atomic_write(str(path), lambda fh: np.savez(fh, **arrays))


def phase_diagram(x: str = "eta_j", y: str = "kappa", *, x_range=None, y_range=None,
                  nx: int = 500, ny: int = 500, log_x: bool = False, log_y: bool = False,
                  **fixed) -> PhaseDiagram:
    """Compute beta*, phase, tail rate and the threshold/critical gaps on a grid.

    Parameters
    ----------
    x, y : str, optional
        The axis parameters, two different members of :data:`AXES` (default ``eta_j`` and
        ``kappa``).
    x_range, y_range : tuple of float, optional
        ``(lo, hi)``, inclusive; default :data:`DEFAULT_RANGES`.
    nx, ny : int, optional
        Grid sizes, >= 2 (default 500 each).
    log_x, log_y : bool, optional
        Geometric instead of linear spacing (the range must then be > 0).
    **fixed
        Values of the other parameters (default: the docs/specification.md §4 defaults and
        eta_j = 3); an axis parameter may not also be fixed.

    Returns
    -------
    PhaseDiagram
        beta*, the phase code, the tail rate and the signed gaps to the threshold and the
        critical manifold on the ``ny x nx`` grid, with the axes and fixed values.

    Raises
    ------
    ValueError
        For unknown or equal axes, bad ranges or grid sizes, or parameter
        values outside their allowed ranges (named).

    Examples
    --------
    >>> d = phase_diagram(nx=50, ny=40)
    >>> print(d.x_name, d.y_name, d.beta_star.shape)
    eta_j kappa (40, 50)
    >>> print(sorted({d.phases[i] for i in np.unique(d.phase_code)}))
    ['broad', 'collapsed', 'concentrated', 'critical']
    """
    x, y = check_choice("x", x, AXES), check_choice("y", y, AXES)
    if x == y:
        raise ValueError(f"x and y axes must differ; both are {x!r}")
    unknown = set(fixed) - set(AXES)
    if unknown:
        raise ValueError(f"unknown fixed parameter(s): {', '.join(sorted(unknown))}")
    clash = {x, y} & set(fixed)
    if clash:
        raise ValueError(f"{', '.join(sorted(clash))} is an axis and cannot also be fixed")
    nx, ny = check_int("nx", nx, 2), check_int("ny", ny, 2)
    grids = []
    for axis, rng, log, name in ((x, x_range, log_x, "x_range"), (y, y_range, log_y, "y_range")):
        lo, hi = check_array(name, DEFAULT_RANGES[axis] if rng is None else rng, shape=(2,),
                             lo=0.0 if log else None, lo_open=True, why="a log axis" if log else "")
        if not lo < hi:
            raise ValueError(f"{name} (the {axis} axis) must be (lo, hi) with lo < hi; got ({lo:g}, {hi:g})")
        g = np.geomspace(lo, hi, int(nx if axis == x else ny)) if log else \
            np.linspace(lo, hi, int(nx if axis == x else ny))
        check_param(axis, g)
        grids.append(g)
    gx, gy = grids
    params = {k: check_param(k, v) for k, v in {**_FIXED_DEFAULT, **fixed}.items() if k not in (x, y)}
    params[x] = gx[None, :]
    params[y] = gy[:, None]
    r = classify(params["eta_j"], params["eta_g"], params["kappa"], params["alpha"], params["lam"])
    code = np.zeros(r.phase.shape, dtype=np.int8)
    for i, name in enumerate(PHASES):
        code[r.phase == name] = i
    return PhaseDiagram(
        x_name=x, y_name=y, x=gx, y=gy,
        fixed={k: float(v) for k, v in params.items() if k not in (x, y)},
        beta_star=r.beta_star, phase_code=code, tail_rate=r.tail_rate,
        threshold_gap=r.eta_j - r.eta_j_star, critical_gap=r.beta_star - 1.0,
    )


#: simulation settings of the overlay: quick (tests, --quick) and default
SIM_SETTINGS = {
    "quick": {"particles": 2048, "t_end": 250.0, "burn_in": 50.0, "dt": 0.01, "u": 2.0},
    "full": {"particles": 8192, "t_end": 800.0, "burn_in": 50.0, "dt": 0.01, "u": 3.0},
}
