"""The simulated overlay of a phase diagram: the simulator's tail rate beta_hat at a coarse grid of
the diagram's points, next to beta* (docs/specification.md §7, §8).

Each point is one :func:`simulate_point` task of a resumable sweep (:func:`levysde.studies.sweep.run_sweep`),
seeded from the point so that the overlay does not depend on the order or the number of workers.
"""
from __future__ import annotations

import time

import numpy as np

from levysde.core.validate import check_choice, check_int
from levysde.simulation import BACKENDS, SaturatingDrift, simulate
from levysde.simulation.bias import tempering_boundary
from levysde.studies.diagram import SIM_SETTINGS, PhaseDiagram
from levysde.studies.sweep import run_sweep
from levysde.theory.phases import classify

__all__ = ["simulated_overlay", "simulate_point"]



def simulate_point(point: dict, seed: int) -> dict:
    """Sweep task: simulate one grid point with the saturating drift and estimate beta_hat.

    Top-level so that Dask can ship it (:func:`levysde.studies.sweep.run_sweep`).

    Parameters
    ----------
    point : dict
        The five model parameters ``eta_j, eta_g, kappa, alpha, lam`` plus the simulation
        settings ``particles`` (>= 32: the run has 32 jackknife groups), ``t_end``,
        ``burn_in``, ``dt`` and ``u`` (the threshold on X = -zeta); optional ``backend``,
        "cpu" (default) or "cuda".
    seed : int
        The run's seed (the sweep's :func:`levysde.studies.sweep.point_seed`).

    Returns
    -------
    dict
        ``beta_hat``, ``se`` (jackknife over 32 groups) and ``n_exceed`` at u; ``beta_theory``
        (beta*) and ``beta_model`` (the simulated scheme's own rate; NaN when undefined);
        ``wall_time_s`` of the run.

    Raises
    ------
    ValueError
        As :func:`levysde.simulation.simulate`, for a bad parameter or setting.
    KeyError
        When a key of ``point`` is missing.

    Notes
    -----
    The drift is the saturating one with gamma = 2 kappa, so that the plateau (where the tail
    theorem applies) is reached within kappa/gamma = 1/2 of the equilibrium for every kappa:
    beta* does not depend on gamma, but with the default gamma = 1 and large kappa the plateau
    sets in only far beyond the thresholds a short run can resolve (the specification, §7, §8,
    :doc:`/specification`).

    Examples
    --------
    >>> point = {"eta_j": 3.0, "eta_g": 0.1, "kappa": 1.0, "alpha": 1.5, "lam": 2.0,
    ...          "particles": 64, "t_end": 20.0, "burn_in": 5.0, "dt": 0.02, "u": 2.0}
    >>> r = simulate_point(point, seed=0)
    >>> print(sorted(r), round(r["beta_theory"], 4))
    ['beta_hat', 'beta_model', 'beta_theory', 'n_exceed', 'se', 'wall_time_s'] 0.8084
    """

    drift = SaturatingDrift(kappa=point["kappa"], gamma=2.0 * point["kappa"])
    res = simulate(point["eta_j"], eta_g=point["eta_g"], alpha=point["alpha"], lam=point["lam"],
                   drift=drift, particles=int(point["particles"]), t_end=point["t_end"],
                   burn_in=point["burn_in"], dt=point["dt"], seed=seed, n_groups=32,
                   backend=point.get("backend", "cpu"))
    t = res.tail(point["u"])
    bt = res.meta.beta_theory
    bm = res.meta.beta_model
    return {"beta_hat": t.beta_hat, "se": t.se, "n_exceed": t.n_exceed,
            "beta_theory": np.nan if bt is None else bt, "beta_model": np.nan if bm is None else bm,
            "wall_time_s": res.meta.wall_time_s}


def simulated_overlay(diagram: PhaseDiagram, *, nx: int = 4, ny: int = 4, quick: bool = False,
                      master_seed: int = 0, scheduler: str = "local", n_workers: int | None = None,
                      store=None, progress: bool = True, settings: dict | None = None,
                      connect_timeout: float = 10.0, backend: str = "cpu") -> dict:
    """Simulate the SDE on a coarse sub-grid of ``diagram`` and measure beta_hat (the specification, §7-§8).

    The sub-grid has ``nx x ny`` points strictly inside the diagram's ranges (cell centres);
    points without an admissible root (collapsed, logarithmic) are skipped. Every point is
    an independent task (:func:`simulate_point`) seeded from ``master_seed`` and its index
    (:func:`levysde.studies.sweep.run_sweep`; bit-identical for any number of workers;
    resumable through ``store``).

    Parameters
    ----------
    diagram : PhaseDiagram
        The theory diagram (:func:`levysde.studies.diagram.phase_diagram`); its fixed
        parameters are those of every point.
    nx, ny : int, optional
        Sub-grid size, >= 1 each (default 4 x 4).
    quick : bool, optional
        Use :data:`levysde.studies.diagram.SIM_SETTINGS` ``["quick"]`` instead of ``["full"]``.
    master_seed : int, optional
        The sweep's seed, >= 0 (default 0).
    scheduler : str, optional
        ``"local"`` (default), ``"sequential"`` or ``"tcp://HOST:PORT"``, as for
        :func:`levysde.studies.sweep.run_sweep`.
    n_workers : int, optional
        Workers of the local cluster (default 2); ``scheduler="local"`` only.
    store : str or os.PathLike, optional
        Directory of the sweep's per-point files (resume); None keeps nothing.
    progress : bool, optional
        Progress bar on a terminal (default True).
    settings : dict, optional
        Overrides of the simulation settings (keys of ``SIM_SETTINGS["full"]``: particles,
        t_end, burn_in, dt, u).
    connect_timeout : float, optional
        Seconds to wait for a ``tcp://`` scheduler (default 10); an unreachable one raises
        ConnectionError.
    backend : {"cpu", "cuda"}, optional
        The simulator of every point (:func:`levysde.simulate`); it is part of each point, so a
        store is resumed only with the backend that wrote it (the two draw different random
        numbers).

    Returns
    -------
    dict
        Arrays ``x``, ``y`` (the simulated points' coordinates), ``beta_hat``, ``se``,
        ``beta_theory``, ``beta_model``, ``near_tempering_boundary`` (bool: beta* so close to
        lam that beta_hat is biased upwards at the threshold,
        :func:`levysde.simulation.bias.tempering_boundary`) and the float ``wall_s`` of the
        sweep. :func:`levysde.plotting.plot_phase_diagram` draws it as ``overlay``.

    Raises
    ------
    ValueError
        For a ``diagram`` that is not a PhaseDiagram, bad sizes, unknown settings or backend,
        or no sub-grid point with an admissible root; as :func:`levysde.studies.sweep.run_sweep`
        for the scheduler and store.
    ConnectionError
        When a ``tcp://`` scheduler cannot be reached.
    RuntimeError
        With ``scheduler="local"``, when called at a script's top level outside
        ``if __name__ == "__main__":`` (the workers are new processes that import the main
        script again; Notes of :func:`levysde.studies.sweep.run_sweep`).

    Examples
    --------
    One point, tiny runs, in this process:

    >>> from levysde.studies.diagram import phase_diagram
    >>> d = phase_diagram(nx=20, ny=20)
    >>> ov = simulated_overlay(d, nx=1, ny=1, scheduler="sequential", progress=False,
    ...                        settings={"particles": 64, "t_end": 20.0, "burn_in": 5.0, "u": 2.0})
    >>> print(ov["x"], ov["y"], np.round(ov["beta_theory"], 4), ov["near_tempering_boundary"])
    [4.] [1.3] [0.8045] [False]
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
    # beta* within a few per cent of lam: beta_hat is biased upwards (simulation.bias.tempering_boundary)
    out["near_tempering_boundary"] = np.array([tempering_boundary(p["u"], r["beta_theory"], p["lam"]) is not None
                                               for p, r in zip(points, res, strict=True)])
    out["x"] = np.array([p[diagram.x_name] for p in points])
    out["y"] = np.array([p[diagram.y_name] for p in points])
    out["wall_s"] = wall
    return out
