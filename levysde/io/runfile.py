"""Run files (.npz): the torch-free reader and writer of simulation and RNN runs (docs/rnn.md).

This module needs numpy only, so run files can be read on machines without PyTorch;
:mod:`levysde.rnn.checkpoint` adds the (torch) checkpoints.

Run-file keys (a contract; read with ``numpy.load(path, allow_pickle=False)``):

=============== ===================== ==========================================================
key             shape                 meaning
=============== ===================== ==========================================================
``zeta``        (R, H) float64        zeta_q = log mu_bar_q per record and neuron (docs/specification.md §9)
``zeta_jac``    (R, H) float64        first-order zeta^(1)_q; NaN where mu_bar^(1)_q <= 0 (masked)
``step``        (R,) int64            optimizer steps taken before the record
``Lambda``      (R, H) float64        optimizer amplitude Lambda_q (docs/specification.md §9)
``loss``        (R,) float64          MSE on the fixed probe batch at the record
``lags``        (n_lags,) float64     lags l (steps) of the envelope, a log grid
``envelope``    (R, n_lags) float64   f(l) = sum_q Lambda_q exp(-l mu_bar_q) / sum_q Lambda_q
``config``      0-d unicode           JSON of the run configuration (``kind = "rnn"``)
=============== ===================== ==========================================================

Further keys: ``train_loss`` (R,) mean training-batch loss since the previous record
(NaN at step 0); ``zeta_clips`` (R,) neurons whose mu_bar was raised to the floor;
``jac_masked`` (R,) neurons masked in ``zeta_jac``; ``jac_clips`` (R,) per-step
``|J|`` values raised to the floor; ``saturated`` (R,) fraction of probe (b, t, q) entries
with a float32-saturated retention (r < 1e-6 or 1 - r < 1e-6); ``wall`` (R,) seconds since
the start; ``transport`` (R, n_lags), only when measured: Lambda-weighted mean of
``<prod_{k<l} r_{t-k}>`` over the probe window, NaN for lags longer than the window;
``zeta_window`` (R, H), ``window_masked`` (R,), ``window_lags`` (n,), only with ``window_lags``:
the windowed first-order transport time scale (:func:`levysde.rnn.trainer.window_zeta`);
``trivial_loss`` (0-d float64) the loss of the trivial predictor (the target's variance over
the loss window, :func:`levysde.rnn.teacher.trivial_loss`; measured on the probe batch for alpha-stable inputs)
and ``loss_ratio`` (R,) = ``loss / trivial_loss`` (both written since levysde 0.3; for older
files :func:`levysde.rnn.learned.learned_diagnostic` recomputes the trivial loss from the task in the config).

Writes go through :func:`levysde.io.files.atomic_write` (temporary file in the same directory +
``os.replace``), so an interrupted run leaves the last complete file; the file gets mode
``0o666 & ~umask`` (like a file created with ``open``), not mkstemp's 0600; a target that is
not a regular file (device node, FIFO, directory) is refused.
"""
from __future__ import annotations

import json
import os
import zipfile
from typing import Any

import numpy as np

from levysde.core.validate import check_array
from levysde.io.archive import check_archive
from levysde.io.files import atomic_write, check_output

__all__ = ["REQUIRED_KEYS", "save_run", "read_run", "load_run", "checkpoint_path", "check_writable"]

REQUIRED_KEYS = ("zeta", "zeta_jac", "step", "Lambda", "loss", "lags", "envelope", "config")




def save_run(path: str | os.PathLike[str], arrays: dict[str, Any], config: dict[str, Any]) -> None:
    """Write a run file atomically (:func:`levysde.io.files.atomic_write`).

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npz`` file to write; an interrupted write leaves an earlier file intact.
    arrays : dict
        Name -> array-like, with at least :data:`REQUIRED_KEYS` (see the module table).
    config : dict
        JSON-serialisable configuration, stored as the 0-d unicode array ``config``.

    Raises
    ------
    ValueError
        If a required key is missing, an array has dtype object, or the config holds NaN or
        infinity (JSON has none).
    TypeError
        If the config holds an object JSON cannot write.
    OSError
        If the file cannot be written (:func:`levysde.io.files.atomic_write`; an existing
        target that is not a regular file is refused with ValueError).

    Examples
    --------
    A run of R = 2 records of H = 3 neurons and 4 lags:

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), 'run.npz')
    >>> arrays = dict(zeta=np.full((2, 3), -1.0), zeta_jac=np.full((2, 3), -1.0), step=[0, 100],
    ...               Lambda=np.ones((2, 3)), loss=[1.0, 0.5], lags=[1.0, 2.0, 4.0, 8.0],
    ...               envelope=np.ones((2, 4)))
    >>> save_run(path, arrays, {'kind': 'rnn', 'hidden': 3})
    >>> run = read_run(path)
    >>> run['kind'], run['zeta'].shape, run['config']['hidden']
    ('rnn', (2, 3), 3)
    """
    missing = [k for k in REQUIRED_KEYS if k != "config" and k not in arrays]
    if missing:
        raise ValueError(f"run file arrays missing required keys {missing}")
    out: dict[str, Any] = {k: np.asarray(v) for k, v in arrays.items()}
    for k, v in out.items():
        if v.dtype == object:
            raise ValueError(f"run file array {k!r} has dtype object (not allowed)")
    out["config"] = np.array(json.dumps(config, sort_keys=True, allow_nan=False))
    atomic_write(path, lambda fh: np.savez(fh, **out))


def read_run(path: str | os.PathLike[str], *, kinds: tuple[str, ...] = ("simulation", "rnn")) -> dict[str, Any]:
    """Read any levysde run file (.npz, ``allow_pickle=False``): a simulation or a trained RNN.

    Parameters
    ----------
    path : str or os.PathLike
        The run file.
    kinds : tuple of str, optional
        The kinds accepted (default both, ``("simulation", "rnn")``).

    Returns
    -------
    dict
        Its arrays plus ``meta`` (the parsed ``meta`` or ``config`` JSON object) and
        ``kind`` ("simulation" or "rnn"). For RNN runs ``config`` is also the parsed dict.

    Raises
    ------
    ValueError
        One line naming the file, when it is missing, a directory, not a valid
        .npz archive (truncated, corrupt, a plain .npy array, pickled objects), corrupt or
        oversized (headers that declare more data than the file holds or than memory can take:
        :func:`levysde.io.archive.check_archive`, checked before any array is read), has no JSON
        ``meta``/``config`` object, is of a kind not in ``kinds``, or lacks its kind's keys;
        for simulation runs also when ``hist_edges`` is not a strictly increasing grid or
        ``hist_counts`` does not match it (naming the entry).

    See Also
    --------
    load_run : RNN runs only, without ``meta`` and ``kind``.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), 'sim.npz')
    >>> meta = np.array('{"kind": "simulation", "alpha": 1.5}')
    >>> np.savez(path, hist_edges=[-2.0, -1.0, 0.0], hist_counts=[3.0, 5.0], meta=meta)
    >>> run = read_run(path)
    >>> run['kind'], run['meta']['alpha'], run['hist_counts'].tolist()
    ('simulation', 1.5, [3.0, 5.0])
    >>> read_run(path, kinds=('rnn',))
    Traceback (most recent call last):
    ...
    ValueError: ...sim.npz: run kind 'simulation'; expected 'rnn'
    """
    check_archive(path)          # before np.load allocates what the headers declare
    if _is_npy(path):
        raise ValueError(f"{path} is a plain .npy array, not a .npz run file")
    try:
        z = np.load(path, allow_pickle=False)
        plain = not isinstance(z, np.lib.npyio.NpzFile)
        if not plain:
            with z:
                data: dict[str, Any] = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise ValueError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise ValueError(f"{path} is a directory, not a .npz run file") from None
    except ValueError:
        raise ValueError(f"cannot read {path}: not a valid .npz archive (truncated or corrupt, "
                         f"or it holds pickled objects)") from None
    except (OSError, zipfile.BadZipFile, EOFError, KeyError):
        raise ValueError(f"cannot read {path}: not a valid .npz archive (missing, truncated "
                         f"or corrupt, or it holds pickled objects)") from None
    if plain:
        raise ValueError(f"{path} is a plain .npy array, not a .npz run file")
    key = "meta" if "meta" in data else "config" if "config" in data else None
    if key is None:
        raise ValueError(f"{path} has no 'meta' or 'config' entry (not a levysde run)")
    try:
        meta = json.loads(str(data[key][()]))
        if not isinstance(meta, dict):
            raise ValueError("not an object")
    except (ValueError, TypeError) as exc:
        raise ValueError(f"the '{key}' entry of {path} is not a JSON object ({exc})") from None
    kind = meta.get("kind")
    if kind not in kinds:
        raise ValueError(f"{path}: run kind {kind!r}; expected {' or '.join(repr(k) for k in kinds)}")
    need = {"simulation": ("hist_edges", "hist_counts"),
            "rnn": tuple(k for k in REQUIRED_KEYS if k != "config")}[kind]
    missing = [k for k in need if k not in data]
    if missing:
        raise ValueError(f"{path} ({kind} run) lacks {', '.join(missing)}")
    if kind == "simulation":
        _check_histogram(path, data["hist_edges"], data["hist_counts"])
    data["meta"] = meta
    data["kind"] = kind
    if kind == "rnn":
        data["config"] = meta
    return data


def _is_npy(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` starts with the ``.npy`` magic (read without loading the array)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(6) == b"\x93NUMPY"
    except OSError:
        return False


def _check_histogram(path: str | os.PathLike[str], edges: np.ndarray, counts: np.ndarray) -> None:
    """ValueError naming the file and the entry unless ``hist_edges`` is a 1-d, finite, strictly
    increasing grid of >= 2 edges and ``hist_counts`` holds finite counts >= 0 with shape
    (n_bins,) or (n_groups, n_bins), n_bins = len(hist_edges) - 1."""
    check_array(f"{path}: hist_edges", edges, ndim=1, min_size=2, increasing=True,
                why="a corrupt or hand-edited run file")
    check_array(f"{path}: hist_counts", counts, ndim=(1, 2), lo=0.0)
    if counts.shape[-1] != edges.size - 1:
        raise ValueError(f"{path}: hist_counts has shape {counts.shape}, expected (n_groups, "
                         f"{edges.size - 1}) for {edges.size} hist_edges")


def load_run(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a ``levysde train`` run file with numpy only: :func:`read_run` restricted to RNN
    runs.

    Parameters
    ----------
    path : str or os.PathLike
        The run file.

    Returns
    -------
    dict
        The file's arrays (the keys of the module table: ``zeta`` (R, H), ``step`` (R,), ...)
        with ``config`` parsed to a dict; no ``meta`` or ``kind`` entries.

    Raises
    ------
    ValueError
        One line naming the file: every refusal of :func:`read_run` (with ``kinds=("rnn",)``),
        and a run without records (an empty ``step`` array).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), 'run.npz')
    >>> arrays = {k: np.zeros((1, 2)) for k in REQUIRED_KEYS if k != 'config'}
    >>> arrays['step'] = [0]
    >>> save_run(path, arrays, {'kind': 'rnn'})
    >>> sorted(load_run(path))
    ['Lambda', 'config', 'envelope', 'lags', 'loss', 'step', 'zeta', 'zeta_jac']
    """
    data = read_run(path, kinds=("rnn",))
    del data["meta"], data["kind"]         # the file holds exactly the arrays and its config
    if np.size(data["step"]) == 0:
        raise ValueError(f"{path} holds no records (its 'step' array is empty): nothing to check")
    return data


def checkpoint_path(run_path: str | os.PathLike[str]) -> str:
    """Checkpoint file that goes with run file ``run_path``: ``RUN.npz`` -> ``RUN.ckpt``.

    Parameters
    ----------
    run_path : str or path-like
        The run file; a name without the ``.npz`` suffix gets ``.ckpt`` appended.

    Returns
    -------
    str
        The checkpoint's path (nothing is created; :mod:`levysde.rnn.checkpoint` writes it).

    Examples
    --------
    >>> print(checkpoint_path('runs/diag.npz'))
    runs/diag.ckpt
    """
    p = os.fspath(run_path)
    root, ext = os.path.splitext(p)
    return (root if ext == ".npz" else p) + ".ckpt"


def check_writable(path: str, what: str = "output") -> None:
    """Raise ValueError (one line, starting with ``what`` and ``path``) unless ``path`` can be
    written as a file: :func:`levysde.io.files.check_output` with ``force=True`` (an existing regular
    file is accepted; directories, FIFOs, devices and missing directories are not). Nothing is
    created.

    Parameters
    ----------
    path : str or os.PathLike
        The file to be written.
    what : str, optional
        How the message names it (a flag such as ``"--out"``; default ``"output"``).

    Raises
    ------
    ValueError
        When ``path`` ends in a separator, is a directory or another non-regular file, or its
        directory is missing or does not accept new files.

    Examples
    --------
    >>> import os, tempfile
    >>> d = os.path.realpath(tempfile.mkdtemp())
    >>> check_writable(os.path.join(d, 'run.npz'))         # fine: nothing happens
    >>> try:
    ...     check_writable(os.path.join(d, 'missing', 'run.npz'), '--out')
    ... except ValueError as e:
    ...     print(str(e).replace(d, 'DIR'))
    --out: directory 'DIR/missing' does not exist (create it first: mkdir -p DIR/missing)
    """
    check_output(path, what, force=True)
