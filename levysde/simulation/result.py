"""The result of a simulation run (:func:`levysde.simulation.simulate`): arrays, metadata, ``.npz`` I/O.

Occupation histograms of zeta after burn-in per independent particle group (plus per-bin sums
of zeta, so that the tail estimator of :mod:`levysde.stats.tails` is exact at bin edges), the depth
histogram of excursions below the equilibrium, final states, optional thinned trajectories and
metadata; the ``.npz`` round trip is exact and uses no pickle.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from levysde.core.validate import check_real
from levysde.io.files import atomic_write
from levysde.io.runfile import read_run
from levysde.stats.tails import TailEstimate, TemperedFit, tail_from_result, tempered_fit_result, threshold_scan_result

__all__ = ["SimulationResult", "SimulationMeta"]

_ARRAYS = ("hist_edges", "hist_counts", "hist_sums", "hist_outside", "excursion_counts",
           "final_zeta")


@dataclass(frozen=True, kw_only=True)
class SimulationMeta(Mapping):
    """The metadata of a simulation run (:func:`levysde.simulation.simulate`), stored as the JSON
    object ``meta`` of the run's ``.npz`` (docs/simulate.md, "Run files").

    The fields are the JSON keys, in the order written (:meth:`to_json`). Model: eta_j, eta_g
    (>= 0), alpha in (0, 2), lam >= 0; drift ("saturating", "ou" or "tabulated"), kappa (its
    plateau, None for OU), gamma (None for tabulated), z0, and for a tabulated drift
    drift_grid, drift_values. Scheme: dt, eps (jump cut), seed, t_end, burn_in (time simulated),
    particles, n_groups, steps, record_steps, record_every, big_jump_rate, sigma_eps2,
    exp_proposal, window (lo, hi). Run: backend, device, threads, wall_time_s,
    particle_steps_per_s, cpu_time_s (None on cuda). Theory: beta_theory, beta_model,
    tail_rate_theory (None when undefined), phase, threshold_u (absolute, on X = -zeta),
    equilibrium, notes, bias_budget (:func:`levysde.simulation.bias.bias_budget`, None without
    beta*), compile_time_s (seconds to compile or load the stepper, apart from wall_time_s; None
    on cuda). ``extra``: keys this version does not know (kept, written back after the others).

    Fields added after the first run files (record_every, backend, device, notes, cpu_time_s,
    bias_budget, compile_time_s) are None (notes: empty) when an older file lacks them.

    A read-only :class:`collections.abc.Mapping` over the JSON keys as well (``meta["eps"]``,
    ``meta.get("bias_budget")``: the access that docs/simulate.md and earlier scripts use);
    the package reads the attributes.

    Example
    -------
    >>> m = SimulationMeta.from_json(run_file_meta)          # doctest: +SKIP
    >>> m.equilibrium == m["equilibrium"]                      # doctest: +SKIP
    True
    """

    kind: str = "simulation"
    version: str
    eta_j: float
    eta_g: float
    alpha: float
    lam: float
    drift: str
    kappa: float | None
    gamma: float | None
    z0: float
    drift_grid: tuple[float, ...] | None = None
    drift_values: tuple[float, ...] | None = None
    dt: float
    eps: float
    seed: int | str
    t_end: float
    burn_in: float
    particles: int
    n_groups: int
    steps: int
    record_steps: int
    record_every: int | None = None
    big_jump_rate: float
    sigma_eps2: float
    exp_proposal: bool
    window: tuple[float, float]
    backend: str | None = None
    device: str | None = None
    threads: int
    wall_time_s: float
    particle_steps_per_s: float
    beta_theory: float | None
    beta_model: float | None
    tail_rate_theory: float | None
    phase: str
    threshold_u: float
    equilibrium: float
    notes: tuple[str, ...] = ()
    cpu_time_s: float | None = None
    bias_budget: dict | None = None
    compile_time_s: float | None = None
    extra: dict = field(default_factory=dict)

    #: fields written only when set (a tabulated drift's table)
    _OMIT_NONE = ("drift_grid", "drift_values")
    #: fields stored as tuples (JSON arrays)
    _SEQUENCES = ("drift_grid", "drift_values", "window", "notes")

    def __post_init__(self) -> None:
        if self.kind != "simulation":
            raise ValueError(f"simulation meta: kind must be 'simulation'; got {self.kind!r}")
        for name in self._SEQUENCES:
            v = getattr(self, name)
            if v is not None and not isinstance(v, tuple):
                object.__setattr__(self, name, tuple(v))

    def to_json(self) -> dict:
        """The JSON object of the run file's ``meta`` entry: the fields in order (tuples as lists;
        drift_grid and drift_values only for a tabulated drift), then ``extra``."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "extra" or (v is None and f.name in self._OMIT_NONE):
                continue
            out[f.name] = list(v) if isinstance(v, tuple) else v
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, obj: str | Mapping[str, Any]) -> SimulationMeta:
        """The metadata from the ``meta`` JSON object of a run file (a mapping, or its text).

        Keys this version does not know go to ``extra``; fields that older files lack get
        their defaults (None; notes empty).

        Raises
        ------
        ValueError
            Naming the keys when a field without a default is missing, the text is not a
            JSON object, or ``kind`` is not "simulation".
        """
        d = json.loads(obj) if isinstance(obj, (str, bytes)) else obj
        if not isinstance(d, Mapping):
            raise ValueError(f"simulation meta must be a JSON object; got {type(d).__name__}")
        names = {f.name for f in fields(cls)} - {"extra"}
        required = [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING]
        missing = [k for k in required if k not in d]
        if missing:
            raise ValueError(f"simulation meta lacks {', '.join(missing)}")
        return cls(**{k: v for k, v in d.items() if k in names}, extra={k: v for k, v in d.items() if k not in names})

    def __getitem__(self, key: str):
        return self.to_json()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(self.to_json())


@dataclass
class SimulationResult:
    """Output of :func:`levysde.simulation.simulate` (saved/loaded as ``.npz``, no pickle).

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
    meta : :class:`SimulationMeta` (a mapping given here is converted by
        :meth:`SimulationMeta.from_json`), see :func:`levysde.simulation.simulate`
    traj_t, traj_zeta : optional (n_rec,) times and (n_traj, n_rec) thinned paths
    """

    hist_edges: np.ndarray
    hist_counts: np.ndarray
    hist_sums: np.ndarray
    hist_outside: np.ndarray
    excursion_counts: np.ndarray
    final_zeta: np.ndarray
    meta: SimulationMeta
    traj_t: np.ndarray | None = None
    traj_zeta: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.meta, SimulationMeta):
            self.meta = SimulationMeta.from_json(self.meta)

    def save(self, path: str | os.PathLike[str]) -> str:
        """Write an uncompressed ``.npz`` at exactly ``path``, atomically
        (:func:`levysde.io.files.atomic_write`: an interrupted save leaves any earlier file intact and
        no partial file; a non-regular target such as a FIFO or device is refused with
        ValueError); returns the path. Overwrites: callers check for an existing file."""

        arrays = {k: getattr(self, k) for k in _ARRAYS}
        if self.traj_zeta is not None:
            arrays["traj_t"] = self.traj_t
            arrays["traj_zeta"] = self.traj_zeta
        arrays["meta"] = np.array(json.dumps(self.meta.to_json(), allow_nan=False))
        atomic_write(os.fspath(path), lambda fh: np.savez(fh, **arrays))
        return os.fspath(path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SimulationResult:
        """Read a file written by :meth:`save` (``allow_pickle=False``, through
        :func:`levysde.io.runfile.read_run`).

        Raises ValueError, one line naming ``path`` and what a simulation run file is, when the
        file is missing, a directory, not a ``.npz`` archive (or holds pickled objects), a run of
        another kind (an RNN run), or lacks the arrays or the metadata fields of a simulation run
        (:meth:`SimulationMeta.from_json`).
        """

        path = os.fspath(path)
        try:
            data = read_run(path, kinds=("simulation",))
        except ValueError as exc:
            raise ValueError(f"SimulationResult.load: {exc} (expected a .npz simulation run written "
                             f"by SimulationResult.save or levysde simulate --out)") from None
        missing = [k for k in _ARRAYS if k not in data]
        if missing:
            raise ValueError(f"SimulationResult.load: {path} is not a complete levysde simulation "
                             f"run (missing {', '.join(missing)})")
        traj = {k: data[k] for k in ("traj_t", "traj_zeta") if k in data}
        try:
            meta = SimulationMeta.from_json(data["meta"])
        except (ValueError, TypeError) as exc:
            raise ValueError(f"SimulationResult.load: {path}: {exc}") from None
        return cls(meta=meta, **{k: data[k] for k in _ARRAYS}, **traj)

    @property
    def n_groups(self) -> int:
        return self.hist_counts.shape[0]

    def threshold_range(self) -> tuple[float, float]:
        """(lo, hi): the open interval of thresholds u on X = -zeta that :meth:`tail` and
        :meth:`tail_scan` accept: beyond the equilibrium (lo = -meta.equilibrium, depth > 0)
        and inside the histogram (hi = -hist_edges[0], its lowest zeta edge)."""
        return 0.0 - float(self.meta.equilibrium), 0.0 - float(self.hist_edges[0])

    def _check_u(self, u) -> float:
        """``float(u)``; ValueError naming u and :meth:`threshold_range` unless u is finite and
        inside it (never a silent clamp to the histogram edge, never NaN fields)."""
        lo, hi = self.threshold_range()
        return check_real("u", u, lo, hi, lo_open=True, hi_open=True,
                          why=f"a threshold on X = -zeta beyond the equilibrium (X = {lo:g}) and inside "
                              f"the histogram (X < {hi:g})")

    def tail(self, u: float | None = None, **kwargs: Any) -> TailEstimate:
        """Left-tail rate estimate at threshold u on X = -zeta (default meta.threshold_u);
        see :func:`levysde.stats.tails.tail_from_histogram`.

        Raises ValueError naming u unless it is finite and in :meth:`threshold_range`."""

        return tail_from_result(self, self._check_u(self.meta.threshold_u if u is None else u),
                                **kwargs)

    def tempering_limited_fit(self, depth: float = 2.0) -> TemperedFit | None:
        """Tempered-tail fit exp(-b x) x^(-1-alpha) of a collapsed, tempering-limited run (docs/specification.md
        §4: no Cramer root, eta_J > 0, lam > 0, so the left tail decays like the jump law and b
        estimates lam; §8), at the threshold ``depth`` (> 0, in zeta units) beyond the equilibrium
        on X = -zeta; see :func:`levysde.stats.tails.tempered_fit_result`.

        Returns the :class:`levysde.stats.tails.TemperedFit`, or None when the run is not tempering-limited.
        Raises ValueError when the fit cannot be made (too few samples beyond the threshold)."""

        m = self.meta
        if not (m.phase == "collapsed" and m.eta_j > 0 and m.lam > 0):
            return None
        return tempered_fit_result(self, -m.equilibrium + depth)

    def tail_scan(self, us: ArrayLike | None = None, **kwargs: Any) -> list[TailEstimate]:
        """:func:`levysde.stats.tails.threshold_scan` on this run. The default thresholds (0.5 .. 12
        beyond the equilibrium) are kept where inside :meth:`threshold_range`; explicit ``us``
        must all be inside it (ValueError naming u otherwise)."""

        if us is None:
            lo, hi = self.threshold_range()
            us = [u for u in lo + np.arange(0.5, 12.01, 0.5) if u < hi]
        else:
            us = [self._check_u(u) for u in np.atleast_1d(us)]
        return threshold_scan_result(self, us, **kwargs)
