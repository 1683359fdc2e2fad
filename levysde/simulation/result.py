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
    r"""The metadata of a simulation run (:func:`levysde.simulation.simulate`).

    Stored as the JSON object ``meta`` of the run's ``.npz`` (:doc:`/simulate`, "Run files");
    the fields are the JSON keys, in the order written (:meth:`to_json`). Also a read-only
    :class:`collections.abc.Mapping` over those keys (``meta["eps"]``,
    ``meta.get("bias_budget")``); the package reads the attributes. Fields added after the
    first run files (record_every, backend, device, notes, cpu_time_s, bias_budget,
    compile_time_s) are None (notes: empty) when an older file lacks them.

    Attributes
    ----------
    kind : str
        Always ``"simulation"`` (anything else is a ValueError).
    version : str
        The levysde version that wrote the run.
    eta_j, eta_g, alpha, lam : float
        The model: eta_J >= 0, eta_G >= 0, alpha in (0, 2), lam >= 0.
    drift : str
        ``"saturating"``, ``"ou"`` or ``"tabulated"`` (or a custom drift's name).
    kappa, gamma : float or None
        The drift's plateau (None for OU) and slope parameter (None for tabulated).
    z0 : float
        The drift's equilibrium parameter.
    drift_grid, drift_values : tuple of float or None
        The table of a tabulated drift (None otherwise; not written then).
    dt, eps : float
        The time step and the jump cut.
    seed : int or str
        The seed.
    t_end, burn_in : float
        Time simulated and time before recording, rounded to whole steps.
    particles, n_groups, steps, record_steps : int
        Particles, jackknife groups, time steps, recorded steps.
    record_every : int or None
        The recording stride.
    big_jump_rate, sigma_eps2 : float
        :math:`\Lambda_\epsilon` and :math:`\sigma_\epsilon^2` of the scheme
        (:mod:`levysde.simulation.scheme`).
    exp_proposal : bool
        Whether the big jumps were drawn with the exponential proposal.
    window : tuple of (float, float)
        The divergence window (lo, hi).
    backend, device : str or None
        ``"cpu"`` or ``"cuda"``, and the CPU or GPU model.
    threads : int
        Numba threads (CPU) or threads per block (CUDA).
    wall_time_s, particle_steps_per_s : float
        Time of the stepper (compilation excluded) and its speed.
    cpu_time_s : float or None
        CPU seconds of the stepper (None on cuda).
    compile_time_s : float or None
        Seconds to compile the stepper or load it from Numba's cache, apart from
        ``wall_time_s`` (None on cuda).
    beta_theory, beta_model, tail_rate_theory : float or None
        beta*, the scheme's own rate beta_model and the tail rate of the phase (None when
        undefined).
    phase : str
        The phase of the model (the specification, §4).
    threshold_u : float
        The default threshold, absolute, on X = -zeta.
    equilibrium : float
        The drift's equilibrium (the histogram's centre).
    notes : tuple of str
        Remarks on the run.
    bias_budget : dict or None
        :func:`levysde.simulation.bias.bias_budget` at ``threshold_u`` (None without beta*).
    extra : dict
        Keys this version does not know (kept, written back after the others).

    Examples
    --------
    >>> res = levysde.simulate(3.0, particles=256, t_end=30.0, burn_in=5.0, dt=0.02, seed=1)
    >>> m = res.meta
    >>> print(m.kind, m.particles, m.steps, m.phase, round(m.beta_theory, 4), m.threshold_u)
    simulation 256 1500 broad 0.8084 3.0
    >>> print(m["eps"] == m.eps, SimulationMeta.from_json(m.to_json()) == m)
    True True
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
        """The JSON object of the run file's ``meta`` entry.

        Returns
        -------
        dict
            The fields in order (tuples as lists; drift_grid and drift_values only for a
            tabulated drift), then ``extra``.
        """
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

        Parameters
        ----------
        obj : str or Mapping
            The JSON text or the decoded object.

        Returns
        -------
        SimulationMeta

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

    The tail estimates of :mod:`levysde.stats.tails` read it directly (:meth:`tail`,
    :meth:`tail_scan`, :meth:`tempering_limited_fit`); :func:`levysde.plotting.plot_simulation`
    draws it.

    Attributes
    ----------
    hist_edges : ndarray, shape (n_bins + 1,)
        Bin edges in zeta (uniform), float64.
    hist_counts : ndarray, shape (n_groups, n_bins)
        Time-averaged number of particles of each group in each bin after burn-in (counts /
        recorded steps).
    hist_sums : ndarray, shape (n_groups, n_bins)
        The same average of the sum of zeta over the samples in each bin (makes tail estimates
        exact at bin edges).
    hist_outside : ndarray, shape (n_groups, 4)
        ``[count below, zeta-sum below, count above, zeta-sum above]`` the histogram range,
        same averaging.
    excursion_counts : ndarray, shape (n_groups, n_bins)
        Number of excursions below the equilibrium (after burn-in) whose minimum fell in each
        bin (bin 0 also holds minima below the range).
    final_zeta : ndarray, shape (particles,)
        The final states.
    meta : SimulationMeta
        The run's metadata (a mapping given here is converted by
        :meth:`SimulationMeta.from_json`).
    traj_t : ndarray, shape (n_rec,), optional
        Times of the kept trajectory points (None without trajectories).
    traj_zeta : ndarray, shape (n_traj, n_rec), optional
        The thinned paths of the first ``traj_particles`` particles.

    Examples
    --------
    >>> import os, tempfile
    >>> res = levysde.simulate(3.0, particles=256, t_end=30.0, burn_in=5.0, dt=0.02, seed=1)
    >>> print(res.hist_counts.shape, res.threshold_range())
    (64, 2228) (0.0, 55.7)
    >>> t = res.tail()                              # at meta.threshold_u = 3
    >>> print(t.u, bool(abs(t.beta_hat - res.meta.beta_theory) < 4 * t.se))
    3.0 True
    >>> with tempfile.TemporaryDirectory() as d:
    ...     back = SimulationResult.load(res.save(os.path.join(d, "run.npz")))
    >>> print(back.meta == res.meta, bool((back.hist_sums == res.hist_sums).all()))
    True True
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
        """Write an uncompressed ``.npz`` at exactly ``path``, atomically.

        :func:`levysde.io.files.atomic_write`: an interrupted save leaves any earlier file intact
        and no partial file. Overwrites: callers check for an existing file.

        Parameters
        ----------
        path : str or os.PathLike
            The file to write (no suffix is added).

        Returns
        -------
        str
            The path written.

        Raises
        ------
        ValueError
            For a non-regular target such as a FIFO or device.
        """

        arrays = {k: getattr(self, k) for k in _ARRAYS}
        if self.traj_zeta is not None:
            arrays["traj_t"] = self.traj_t
            arrays["traj_zeta"] = self.traj_zeta
        arrays["meta"] = np.array(json.dumps(self.meta.to_json(), allow_nan=False))
        atomic_write(os.fspath(path), lambda fh: np.savez(fh, **arrays))
        return os.fspath(path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SimulationResult:
        """Read a file written by :meth:`save`.

        Read with ``allow_pickle=False``, through :func:`levysde.io.runfile.read_run`.

        Parameters
        ----------
        path : str or os.PathLike
            A simulation run file.

        Returns
        -------
        SimulationResult

        Raises
        ------
        ValueError
            One line naming ``path`` and what a simulation run file is, when the file is
            missing, a directory, not a ``.npz`` archive (or holds pickled objects), a run of
            another kind (an RNN run), or lacks the arrays or the metadata fields of a
            simulation run (:meth:`SimulationMeta.from_json`).
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
        """Left-tail rate estimate at threshold u on X = -zeta.

        Parameters
        ----------
        u : float, optional
            The threshold (absolute), inside :meth:`threshold_range`; default
            ``meta.threshold_u``.
        **kwargs
            Passed on to :func:`levysde.stats.tails.tail_from_histogram`.

        Returns
        -------
        TailEstimate

        Raises
        ------
        ValueError
            Naming u unless it is finite and in :meth:`threshold_range`.
        """

        return tail_from_result(self, self._check_u(self.meta.threshold_u if u is None else u),
                                **kwargs)

    def tempering_limited_fit(self, depth: float = 2.0) -> TemperedFit | None:
        r"""Tempered-tail fit :math:`e^{-b x} x^{-1-\alpha}` of a collapsed, tempering-limited run.

        Collapsed with tempering (the specification, §4: no Cramér root, eta_J > 0, lam > 0),
        the left tail decays like the jump law and b estimates lam (§8).

        Parameters
        ----------
        depth : float, optional
            The threshold as a depth beyond the equilibrium on X = -zeta, > 0 (default 2).

        Returns
        -------
        TemperedFit or None
            :func:`levysde.stats.tails.tempered_fit_result` at that threshold, or None when the
            run is not tempering-limited.

        Raises
        ------
        ValueError
            Naming ``depth`` when it is not a finite real > 0; when the fit cannot be made (too
            few samples beyond the threshold).
        """

        depth = check_real("depth", depth, 0.0, lo_open=True)
        m = self.meta
        if not (m.phase == "collapsed" and m.eta_j > 0 and m.lam > 0):
            return None
        return tempered_fit_result(self, 0.0 - m.equilibrium + depth)

    def tail_scan(self, us: ArrayLike | None = None, **kwargs: Any) -> list[TailEstimate]:
        """:func:`levysde.stats.tails.threshold_scan` on this run.

        Parameters
        ----------
        us : array_like, optional
            Thresholds on X = -zeta, all inside :meth:`threshold_range`; default 0.5, 1, ..., 12
            beyond the equilibrium, those inside the range.
        **kwargs
            Passed on to :func:`levysde.stats.tails.threshold_scan_result`.

        Returns
        -------
        list of TailEstimate

        Raises
        ------
        ValueError
            Naming u when an explicit threshold is outside :meth:`threshold_range`.
        """

        if us is None:
            lo, hi = self.threshold_range()
            us = [u for u in lo + np.arange(0.5, 12.01, 0.5) if u < hi]
        else:
            us = [self._check_u(u) for u in np.atleast_1d(us)]
        return threshold_scan_result(self, us, **kwargs)
