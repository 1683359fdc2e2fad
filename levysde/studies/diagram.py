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
import time
from dataclasses import dataclass, field

import numpy as np

from levysde.core.validate import check_array, check_choice, check_int
from levysde.io.files import atomic_write
from levysde.simulation import BACKENDS, SaturatingDrift, simulate
from levysde.studies.sweep import run_sweep
from levysde.theory.params import DEFAULTS, check_param
from levysde.theory.phases import PHASES, classify

__all__ = ["AXES", "PhaseDiagram", "phase_diagram", "DEFAULT_RANGES", "simulated_overlay",
           "simulate_point", "SIM_SETTINGS"]

#: parameters that can be put on an axis
AXES = ("eta_j", "kappa", "eta_g", "alpha", "lam")

#: default axis ranges (chosen so every phase is visible around the docs/specification.md §4 defaults)
DEFAULT_RANGES = {"eta_j": (0.0, 8.0), "kappa": (0.1, 2.5), "eta_g": (0.0, 0.6),
                  "alpha": (0.05, 1.95), "lam": (0.05, 4.0)}

_FIXED_DEFAULT = {"eta_j": 3.0, **DEFAULTS}


@dataclass(frozen=True)
class PhaseDiagram:
    """beta* and phases on a (ny, nx) grid.

    Attributes
    ----------
    x_name, y_name : axis parameter names (members of :data:`AXES`)
    x, y : 1-d grids, shapes (nx,), (ny,)
    fixed : dict of the parameters held fixed
    beta_star : (ny, nx), NaN where no admissible root
    phase_code : (ny, nx) int, index into :data:`levysde.theory.PHASES`
    tail_rate : (ny, nx)
    threshold_gap : (ny, nx), eta_J - eta_J* (NaN where lam = 0)
    critical_gap : (ny, nx), beta* - 1 (NaN where no root)
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
        """Write the grid data to exactly ``path`` (an .npz archive, no pickle; numpy's
        habit of appending ``.npz`` to other names does not apply). The write is atomic:
        an interrupted save leaves any previous file intact."""


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
    x, y : axis parameters, two different members of :data:`AXES`
    x_range, y_range : (lo, hi) inclusive; default :data:`DEFAULT_RANGES`
    nx, ny : grid sizes (>= 2)
    log_x, log_y : geometric instead of linear spacing (ranges must be > 0)
    **fixed : values of the other parameters (default: docs/specification.md §4 defaults and
        eta_j = 3); an axis parameter may not also be fixed.

    Returns
    -------
    PhaseDiagram

    Raises
    ------
    ValueError for unknown or equal axes, bad ranges or grid sizes, or parameter
    values outside their allowed ranges (named).
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


# ------------------------------------------------------------------ simulated overlay (Dask sweep)

#: simulation settings of the overlay: quick (tests, --quick) and default
SIM_SETTINGS = {
    "quick": {"particles": 2048, "t_end": 250.0, "burn_in": 50.0, "dt": 0.01, "u": 2.0},
    "full": {"particles": 8192, "t_end": 800.0, "burn_in": 50.0, "dt": 0.01, "u": 3.0},
}


def simulate_point(point: dict, seed: int) -> dict:
    """Sweep task: simulate one grid point with the saturating drift and estimate beta_hat.

    ``point`` holds the five model parameters plus the simulation settings
    (particles, t_end, burn_in, dt, u: the threshold on X = -zeta; optional backend,
    "cpu" or "cuda", default "cpu"). Returns
    beta_hat and its jackknife error at u, beta* and the simulated model's
    own rate beta_model (docs/specification.md §7, §8). Top-level so that Dask can ship it.

    The drift is the saturating one with gamma = 2 kappa, so that the plateau
    (where the tail theorem applies) is reached within kappa/gamma = 1/2 of the
    equilibrium for every kappa: beta* does not depend on gamma, but with the
    default gamma = 1 and large kappa the plateau sets in only far beyond the
    thresholds a short run can resolve.
    """

    drift = SaturatingDrift(kappa=point["kappa"], gamma=2.0 * point["kappa"])
    res = simulate(point["eta_j"], eta_g=point["eta_g"], alpha=point["alpha"], lam=point["lam"],
                   drift=drift, particles=int(point["particles"]), t_end=point["t_end"],
                   burn_in=point["burn_in"], dt=point["dt"], seed=seed, n_groups=32,
                   backend=point.get("backend", "cpu"))
    t = res.tail(point["u"])
    bt = res.meta.get("beta_theory")
    bm = res.meta.get("beta_model")
    return {"beta_hat": t.beta_hat, "se": t.se, "n_exceed": t.n_exceed,
            "beta_theory": np.nan if bt is None else bt, "beta_model": np.nan if bm is None else bm,
            "wall_time_s": res.meta["wall_time_s"]}


def simulated_overlay(diagram: PhaseDiagram, *, nx: int = 4, ny: int = 4, quick: bool = False,
                      master_seed: int = 0, scheduler: str = "local", n_workers: int | None = None,
                      store=None, progress: bool = True, settings: dict | None = None,
                      connect_timeout: float = 10.0, backend: str = "cpu") -> dict:
    """Simulate the SDE on a coarse sub-grid of ``diagram`` and measure beta_hat (docs/specification.md §7-§8).

    The sub-grid has ``nx x ny`` points strictly inside the diagram's ranges; points
    without an admissible root (collapsed, logarithmic) are skipped. Every point is
    an independent Dask task seeded from ``master_seed`` and its index
    (:func:`levysde.sweep.run_sweep`; bit-identical for any number of workers;
    resumable through ``store``).

    Returns a dict of arrays ``x, y, beta_hat, se, beta_theory, beta_model`` and
    the ``wall_s`` of the sweep. ``n_workers`` (default 2) applies to ``scheduler="local"``
    only. ``connect_timeout`` (seconds) bounds the wait for a
    ``tcp://`` scheduler; an unreachable one raises ConnectionError (see
    :func:`levysde.sweep.run_sweep`). ``backend`` ("cpu" or "cuda") is the simulator of
    every point (:func:`levysde.simulate`); it is part of each point, so a store is resumed
    only with the backend that wrote it (the two draw different random numbers).
    """


    if not isinstance(diagram, PhaseDiagram):
        raise ValueError(f"diagram must be a PhaseDiagram (from phase_diagram); got {type(diagram).__name__}")
    nx, ny = check_int("nx", nx, 1), check_int("ny", ny, 1)
    unknown = set(settings or {}) - set(SIM_SETTINGS["full"])
    if unknown:
        raise ValueError(f"unknown settings {sorted(unknown)}; allowed: {', '.join(SIM_SETTINGS['full'])}")
    backend = check_choice("backend", backend, BACKENDS)
    cfg = dict(SIM_SETTINGS["quick" if quick else "full"], **(settings or {}))
    if backend != "cpu":                    # cpu points stay as before: existing stores resume
        cfg["backend"] = backend
    xs = diagram.x[0] + (np.arange(nx) + 0.5) / nx * (diagram.x[-1] - diagram.x[0])
    ys = diagram.y[0] + (np.arange(ny) + 0.5) / ny * (diagram.y[-1] - diagram.y[0])
    points = []
    for yv in ys:
        for xv in xs:
            p = dict(diagram.fixed)
            p[diagram.x_name] = float(xv)
            p[diagram.y_name] = float(yv)
            b = classify(p["eta_j"], p["eta_g"], p["kappa"], p["alpha"], p["lam"]).beta_star
            if np.isfinite(b):
                points.append({**{k: float(v) for k, v in p.items()}, **cfg})
    if not points:
        raise ValueError("no simulated point has an admissible root: widen the ranges")
    t0 = time.perf_counter()
    res = run_sweep(simulate_point, points, master_seed=master_seed, store=store,
                    scheduler=scheduler, n_workers=n_workers, progress=progress,
                    connect_timeout=connect_timeout)
    wall = time.perf_counter() - t0
    out = {k: np.array([float(r[k]) for r in res]) for k in ("beta_hat", "se", "beta_theory", "beta_model")}
    out["x"] = np.array([p[diagram.x_name] for p in points])
    out["y"] = np.array([p[diagram.y_name] for p in points])
    out["wall_s"] = wall
    return out
