"""The result of a simulation run (:func:`levysde.simulation.simulate`): arrays, metadata, ``.npz`` I/O.

Occupation histograms of zeta after burn-in per independent particle group (plus per-bin sums
of zeta, so that the tail estimator of :mod:`levysde.tails` is exact at bin edges), the depth
histogram of excursions below the equilibrium, final states, optional thinned trajectories and
metadata; the ``.npz`` round trip is exact and uses no pickle.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from levysde.core.validate import check_real
from levysde.io.files import atomic_write
from levysde.io.runfile import read_run
from levysde.stats.tails import tail_from_result, tempered_fit_result, threshold_scan_result

__all__ = ["SimulationResult"]

_ARRAYS = ("hist_edges", "hist_counts", "hist_sums", "hist_outside", "excursion_counts",
           "final_zeta")


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
    meta : dict (JSON-serialisable), see :func:`levysde.simulation.simulate`
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
        """Write an uncompressed ``.npz`` at exactly ``path``, atomically
        (:func:`levysde._io.atomic_write`: an interrupted save leaves any earlier file intact and
        no partial file; a non-regular target such as a FIFO or device is refused with
        ValueError); returns the path. Overwrites: callers check for an existing file."""

        arrays = {k: getattr(self, k) for k in _ARRAYS}
        if self.traj_zeta is not None:
            arrays["traj_t"] = self.traj_t
            arrays["traj_zeta"] = self.traj_zeta
        arrays["meta"] = np.array(json.dumps(self.meta, allow_nan=False))
        atomic_write(os.fspath(path), lambda fh: np.savez(fh, **arrays))
        return os.fspath(path)

    @classmethod
    def load(cls, path) -> "SimulationResult":
        """Read a file written by :meth:`save` (``allow_pickle=False``, through
        :func:`levysde.runfile.read_run`).

        Raises ValueError, one line naming ``path`` and what a simulation run file is, when the
        file is missing, a directory, not a ``.npz`` archive (or holds pickled objects), a run of
        another kind (an RNN run), or lacks the arrays of a simulation run.
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
        return cls(meta=data["meta"], **{k: data[k] for k in _ARRAYS}, **traj)

    @property
    def n_groups(self) -> int:
        return self.hist_counts.shape[0]

    def threshold_range(self) -> tuple[float, float]:
        """(lo, hi): the open interval of thresholds u on X = -zeta that :meth:`tail` and
        :meth:`tail_scan` accept: beyond the equilibrium (lo = -meta['equilibrium'], depth > 0)
        and inside the histogram (hi = -hist_edges[0], its lowest zeta edge)."""
        return 0.0 - float(self.meta.get("equilibrium", 0.0)), 0.0 - float(self.hist_edges[0])

    def _check_u(self, u) -> float:
        """``float(u)``; ValueError naming u and :meth:`threshold_range` unless u is finite and
        inside it (never a silent clamp to the histogram edge, never NaN fields)."""
        lo, hi = self.threshold_range()
        return check_real("u", u, lo, hi, lo_open=True, hi_open=True,
                          why=f"a threshold on X = -zeta beyond the equilibrium (X = {lo:g}) and inside "
                              f"the histogram (X < {hi:g})")

    def tail(self, u=None, **kwargs):
        """Left-tail rate estimate at threshold u on X = -zeta (default meta['threshold_u']);
        see :func:`levysde.tails.tail_from_histogram`.

        Raises ValueError naming u unless it is finite and in :meth:`threshold_range`."""

        return tail_from_result(self, self._check_u(self.meta["threshold_u"] if u is None else u),
                                **kwargs)

    def tempering_limited_fit(self, depth: float = 2.0):
        """Tempered-tail fit exp(-b x) x^(-1-alpha) of a collapsed, tempering-limited run (docs/specification.md
        §4: no Cramer root, eta_J > 0, lam > 0, so the left tail decays like the jump law and b
        estimates lam; §8), at the threshold ``depth`` (> 0, in zeta units) beyond the equilibrium
        on X = -zeta; see :func:`levysde.tails.tempered_fit_result`.

        Returns the :class:`levysde.tails.TemperedFit`, or None when the run is not tempering-limited.
        Raises ValueError when the fit cannot be made (too few samples beyond the threshold)."""

        m = self.meta
        if not (m.get("phase") == "collapsed" and m.get("eta_j", 0) > 0 and m.get("lam", 0) > 0):
            return None
        return tempered_fit_result(self, -m["equilibrium"] + depth)

    def tail_scan(self, us=None, **kwargs):
        """:func:`levysde.tails.threshold_scan` on this run. The default thresholds (0.5 .. 12
        beyond the equilibrium) are kept where inside :meth:`threshold_range`; explicit ``us``
        must all be inside it (ValueError naming u otherwise)."""

        if us is None:
            lo, hi = self.threshold_range()
            us = [u for u in lo + np.arange(0.5, 12.01, 0.5) if u < hi]
        else:
            us = [self._check_u(u) for u in np.atleast_1d(us)]
        return threshold_scan_result(self, us, **kwargs)
