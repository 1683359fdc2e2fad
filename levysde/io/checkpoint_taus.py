"""The anti-collapse paper's per-checkpoint time scales: a ``checkpoint_taus/`` directory.

The author's code (``lorenzolivi/anticollapse``) writes, for every checkpoint of a run, one file
``checkpoint_taus/ckpt_EEEE_taus.npy`` (EEEE the epoch, zero-padded): a 1-d float array of one
time scale tau_q per recurrent unit, in steps, from the slope of the first-order transport over
its fit window (docs/paper_protocol.md). Units whose fitted slope is >= 0 did not decay over that
window: their tau is written as NaN. Their time scale is beyond what the window resolves, so they
are **right-censored**, not missing; :func:`read_checkpoint_taus` returns them as censored.

The reader validates before it allocates: every file's ``.npy`` header (format, dtype, shape) is
read and checked first, then one (R, H) array is filled. Non-finite tau (NaN, +-inf) marks a
censored unit; a finite tau <= 0 is an error. The CSV copies the author's code writes beside the
``.npy`` files are not read.

Only files whose name carries the epoch are records: the author's code names every file by its
epoch, and a record needs its place on the epoch axis (the drift and the increments are per
epoch). A ``ckpt_<tag>_taus.npy`` whose tag is no epoch (``ckpt_final_taus.npy``, ``ckpt_best_taus.npy``)
is therefore not used, whatever it holds, and is listed in :attr:`CheckpointTaus.ignored` so that
callers can say so (``levysde check --from`` does, in a note). To use it, rename it with the epoch
it was written at (``ckpt_0500_taus.npy``); if it repeats the last checkpoint it adds nothing.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np

from levysde.core.validate import check_int, describe_interval

__all__ = ["CheckpointTaus", "read_checkpoint_taus", "CKPT_TAU_PATTERN", "MAX_UNITS", "MAX_CHECKPOINTS"]

#: file names of the author's per-checkpoint time scales: ``ckpt_<epoch>_taus.npy``
CKPT_TAU_PATTERN = re.compile(r"^ckpt_(\d+)_taus\.npy$")
#: per-checkpoint files whose tag is not an epoch (``ckpt_final_taus.npy``): not read, listed as ignored
_OTHER_TAU_FILE = re.compile(r"^ckpt_.+_taus\.npy$")
#: largest number of units per checkpoint accepted (a guard against a corrupt header)
MAX_UNITS = 1_000_000
#: largest number of checkpoint files accepted
MAX_CHECKPOINTS = 100_000
_FLOAT_KINDS = ("f",)


@dataclass(frozen=True)
class CheckpointTaus:
    r"""The time scales of one run's checkpoints, as read from ``checkpoint_taus/``.

    Made by :func:`read_checkpoint_taus`; R checkpoints of a network of H units.

    Attributes
    ----------
    path : str
        The ``checkpoint_taus`` directory read.
    epoch : ndarray of int64, shape (R,)
        The checkpoints' epochs, strictly increasing.
    tau : ndarray of float64, shape (R, H)
        tau_q per checkpoint and unit (steps, > 0); +inf where censored.
    censored : ndarray of bool, shape (R, H)
        Units that did not decay over the fit window (tau NaN or inf in the file): their time
        scale exceeds what the window resolves.
    files : tuple of str
        The R file names, in epoch order.
    ignored : tuple of str
        ``ckpt_<tag>_taus.npy`` files of the directory whose tag is no epoch (e.g.
        ``ckpt_final_taus.npy``): not read, since a record needs its epoch (module docstring).
    n_censored : ndarray of int, shape (R,)
        Censored units per checkpoint (a property).
    zeta : ndarray of float64, shape (R, H)
        :math:`\zeta_q = -\log\tau_q`, NaN where censored (a property; the specification, §1).

    Examples
    --------
    >>> ct = CheckpointTaus(path="run/checkpoint_taus", epoch=np.array([1, 40]),
    ...                     tau=np.array([[10.0, np.inf], [12.0, 250.0]]),
    ...                     censored=np.array([[False, True], [False, False]]),
    ...                     files=("ckpt_0001_taus.npy", "ckpt_0040_taus.npy"))
    >>> ct.n_censored.tolist()
    [1, 0]
    >>> np.round(ct.zeta, 3)
    array([[-2.303,    nan],
           [-2.485, -5.521]])
    """

    path: str
    epoch: np.ndarray
    tau: np.ndarray
    censored: np.ndarray
    files: tuple[str, ...]
    ignored: tuple[str, ...] = ()

    @property
    def n_censored(self) -> np.ndarray:
        """(R,) censored units per checkpoint."""
        return self.censored.sum(axis=1)

    @property
    def zeta(self) -> np.ndarray:
        """(R, H) zeta_q = -log tau_q; NaN where censored (docs/specification.md §1)."""
        with np.errstate(divide="ignore"):
            z = -np.log(self.tau)
        z[self.censored] = np.nan
        return z


def _tau_dir(path: str) -> str:
    """``path`` itself when it holds ckpt files, else ``path/checkpoint_taus`` when that exists."""
    sub = os.path.join(path, "checkpoint_taus")
    if os.path.basename(os.path.normpath(path)) != "checkpoint_taus" and os.path.isdir(sub):
        return sub
    return path


def _header(fname: str) -> tuple[tuple[int, ...], np.dtype, bool]:
    """(shape, dtype, fortran_order) of a .npy file, from its header only."""
    with open(fname, "rb") as fh:
        try:
            version = np.lib.format.read_magic(fh)
        except ValueError as exc:
            raise ValueError(f"{fname}: not a .npy file ({exc})") from None
        reader = {(1, 0): np.lib.format.read_array_header_1_0,
                  (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if reader is None:
            raise ValueError(f"{fname}: unsupported .npy format version {version}")
        try:
            shape, fortran, dtype = reader(fh, max_header_size=10_000)
        except (ValueError, SyntaxError) as exc:
            raise ValueError(f"{fname}: corrupt .npy header ({exc})") from None
    return tuple(int(n) for n in shape), np.dtype(dtype), bool(fortran)


def read_checkpoint_taus(path: str | os.PathLike[str], *, min_checkpoints: int = 1) -> CheckpointTaus:
    """Read a run's ``checkpoint_taus/ckpt_EEEE_taus.npy`` files (the anti-collapse paper's output).

    Parameters
    ----------
    path : str or path-like
        The ``checkpoint_taus`` directory, or a model directory that contains one.
    min_checkpoints : int, optional
        Fewest checkpoint files required, an integer >= 1 (default 1; a trajectory needs 2
        or more).

    Returns
    -------
    CheckpointTaus
        epochs (R,), tau (R, H) (+inf where censored), the censoring mask (R, H) and the files
        not used (``ignored``).

    Raises
    ------
    ValueError
        ``min_checkpoints`` is not an integer >= 1. One line naming the directory or file: the
        path is missing or not a directory; fewer
        than ``min_checkpoints`` ``ckpt_<epoch>_taus.npy`` files; two files for one epoch; a
        file that is not a .npy array, holds objects or a non-float dtype, is not 1-d, is empty,
        has more than :data:`MAX_UNITS` units or a different number of units than the others;
        a finite tau <= 0 (the file, how many of its values, the range (0, inf)).

    Notes
    -----
    Only ``ckpt_<epoch>_taus.npy`` files are records; a ``ckpt_<tag>_taus.npy`` whose tag is no
    epoch (``ckpt_final_taus.npy``) is not read, since it has no place on the epoch axis, and is
    listed in :attr:`CheckpointTaus.ignored` (module docstring).
    Every header is read and checked before any array is allocated or loaded. A tau that is
    NaN or +-inf is the author's mark of a unit whose transport did not decay over the fit
    window (fitted slope >= 0): it is returned as censored (tau = +inf), never dropped.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> d = tempfile.mkdtemp()
    >>> np.save(f"{d}/ckpt_0001_taus.npy", np.array([10.0, 200.0, np.nan]))
    >>> np.save(f"{d}/ckpt_0040_taus.npy", np.array([12.0, 250.0, 900.0]))
    >>> np.save(f"{d}/ckpt_final_taus.npy", np.array([13.0, 260.0, 950.0]))
    >>> ct = read_checkpoint_taus(d)
    >>> ct.epoch.tolist(), ct.n_censored.tolist(), ct.ignored
    ([1, 40], [1, 0], ('ckpt_final_taus.npy',))
    """
    min_checkpoints = check_int("min_checkpoints", min_checkpoints, 1)
    p = os.fspath(path)
    if not os.path.exists(p):
        raise ValueError(f"no such directory: {p}")
    if not os.path.isdir(p):
        raise ValueError(f"{p} is not a directory (expected a checkpoint_taus/ directory of "
                         f"ckpt_<epoch>_taus.npy files)")
    d = _tau_dir(p)
    by_epoch: dict[int, str] = {}
    ignored = []
    for name in sorted(os.listdir(d)):
        m = CKPT_TAU_PATTERN.match(name)
        if not m:
            if _OTHER_TAU_FILE.match(name):
                ignored.append(name)
            continue
        e = int(m.group(1))
        if e in by_epoch:
            raise ValueError(f"{d}: two files for epoch {e}: {by_epoch[e]} and {name}")
        by_epoch[e] = name
    if len(by_epoch) < min_checkpoints:
        also = f" ({', '.join(ignored)} not counted: no epoch in the name)" if ignored else ""
        raise ValueError(f"{d}: {len(by_epoch)} ckpt_<epoch>_taus.npy file(s){also}; need at least "
                         f"{min_checkpoints}")
    if len(by_epoch) > MAX_CHECKPOINTS:
        raise ValueError(f"{d}: {len(by_epoch)} checkpoint files; at most {MAX_CHECKPOINTS} are read")
    epochs = sorted(by_epoch)
    files = tuple(by_epoch[e] for e in epochs)
    H = None
    for name in files:
        fname = os.path.join(d, name)
        if not os.path.isfile(fname):
            raise ValueError(f"{fname} is not a regular file")
        shape, dtype, _ = _header(fname)
        if dtype.hasobject or dtype.kind not in _FLOAT_KINDS:
            raise ValueError(f"{fname}: dtype {dtype}; expected float time scales (one per unit)")
        if len(shape) != 1:
            raise ValueError(f"{fname}: shape {shape}; expected a 1-d array of one tau per unit")
        if shape[0] == 0 or shape[0] > MAX_UNITS:
            raise ValueError(f"{fname}: {shape[0]} units; expected 1 to {MAX_UNITS}")
        if H is None:
            H = shape[0]
        elif shape[0] != H:
            raise ValueError(f"{fname}: {shape[0]} units, but {files[0]} has {H}: one network per directory")
    assert H is not None
    tau = np.empty((len(files), H), dtype=np.float64)
    for i, name in enumerate(files):
        fname = os.path.join(d, name)
        try:
            tau[i] = np.load(fname, allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            raise ValueError(f"{fname}: cannot read ({exc})") from None
    censored = ~np.isfinite(tau)
    bad = (~censored) & (tau <= 0)
    if bad.any():
        per_file = bad.sum(axis=1)
        i = int(np.flatnonzero(per_file)[0])
        q = int(np.flatnonzero(bad[i])[0])
        more = int((per_file > 0).sum()) - 1
        also = f"; {more} other file(s) have such values too" if more else ""
        raise ValueError(f"{os.path.join(d, files[i])}: {int(per_file[i])} of {H} tau values are <= 0 (the first: "
                         f"unit {q}, tau = {float(tau[i, q]):g}){also}; a time scale must be in "
                         f"{describe_interval(0.0, lo_open=True)} steps (NaN marks a non-decaying unit)")
    tau[censored] = np.inf
    return CheckpointTaus(path=d, epoch=np.asarray(epochs, dtype=np.int64), tau=tau, censored=censored,
                          files=files, ignored=tuple(ignored))
