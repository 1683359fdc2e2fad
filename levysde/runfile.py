"""RNN run files (.npz): torch-free reader and writer (``levysde train``, docs/rnn.md).

This module needs numpy only, so run files can be read on machines without PyTorch;
:mod:`levysde.rnn.runfile` re-exports it and adds the (torch) checkpoints.

Run-file keys (a contract; read with ``numpy.load(path, allow_pickle=False)``):

=============== ===================== ==========================================================
key             shape                 meaning
=============== ===================== ==========================================================
``zeta``        (R, H) float64        zeta_q = log mu_bar_q per record and neuron (THEORY §9)
``zeta_jac``    (R, H) float64        first-order zeta^(1)_q; NaN where mu_bar^(1)_q <= 0 (masked)
``step``        (R,) int64            optimizer steps taken before the record
``Lambda``      (R, H) float64        optimizer amplitude Lambda_q (THEORY §9)
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
``<prod_{k<l} r_{t-k}>`` over the probe window, NaN for lags longer than the window.

Writes are atomic (temporary file in the same directory + ``os.replace``), so an
interrupted run leaves the last complete file; the file gets mode ``0o666 & ~umask``
(like a file created with ``open``), not mkstemp's 0600.
"""
from __future__ import annotations

import json
import os
import tempfile
import zipfile

import numpy as np

REQUIRED_KEYS = ("zeta", "zeta_jac", "step", "Lambda", "loss", "lags", "envelope", "config")


def _umask() -> int:
    """The process umask (read without changing it where /proc allows)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str, writer) -> None:
    """Write ``path`` atomically: ``writer(fh)`` fills a temporary file in the same directory,
    which gets mode ``0o666 & ~umask`` and then replaces ``path``. On any failure (or
    interruption) the temporary file is removed and ``path`` is untouched."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.basename(path), dir=d)
    try:
        with os.fdopen(fd, "wb") as fh:
            writer(fh)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


_atomic_write = atomic_write  # old private name


def save_run(path: str, arrays: dict, config: dict) -> None:
    """Write a run file atomically. ``arrays``: name -> array-like (see module table);
    ``config``: JSON-serialisable dict stored as the 0-d unicode array ``config``.

    Raises ValueError if a required key is missing or the config is not JSON-serialisable."""
    missing = [k for k in REQUIRED_KEYS if k != "config" and k not in arrays]
    if missing:
        raise ValueError(f"run file arrays missing required keys {missing}")
    out = {k: np.asarray(v) for k, v in arrays.items()}
    for k, v in out.items():
        if v.dtype == object:
            raise ValueError(f"run file array {k!r} has dtype object (not allowed)")
    out["config"] = np.array(json.dumps(config, sort_keys=True, allow_nan=False))
    atomic_write(path, lambda fh: np.savez(fh, **out))


def read_run(path, *, kinds=("simulation", "rnn")) -> dict:
    """Read any levysde run file (.npz, ``allow_pickle=False``): a simulation or a trained RNN.

    Returns a dict of its arrays plus ``meta`` (the parsed ``meta`` or ``config`` JSON object)
    and ``kind`` ("simulation" or "rnn"). For RNN runs ``config`` is also the parsed dict.

    Raises
    ------
    ValueError, one line naming the file, when it is missing, a directory, not a valid
    .npz archive (truncated, corrupt, a plain .npy array, pickled objects), has no JSON
    ``meta``/``config`` object, is of a kind not in ``kinds``, or lacks its kind's keys.
    """
    try:
        z = np.load(path, allow_pickle=False)
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise ValueError(f"{path} is a plain .npy array, not a .npz run file")
        with z:
            data = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise ValueError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise ValueError(f"{path} is a directory, not a .npz run file") from None
    except ValueError as exc:
        if "plain .npy" in str(exc):
            raise
        raise ValueError(f"cannot read {path}: not a valid .npz archive (truncated or corrupt, "
                         f"or it holds pickled objects)") from None
    except (OSError, zipfile.BadZipFile, EOFError, KeyError):
        raise ValueError(f"cannot read {path}: not a valid .npz archive (missing, truncated "
                         f"or corrupt, or it holds pickled objects)") from None
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
    data["meta"] = meta
    data["kind"] = kind
    if kind == "rnn":
        data["config"] = meta
    return data


def load_run(path: str) -> dict:
    """Read a ``levysde train`` run file with numpy only: :func:`read_run` restricted to RNN
    runs. Returns the arrays plus ``config`` parsed to a dict. Raises ValueError (one line)."""
    data = read_run(path, kinds=("rnn",))
    del data["meta"], data["kind"]         # the file holds exactly the arrays and its config
    return data


def checkpoint_path(run_path: str) -> str:
    """Checkpoint file that goes with run file ``run_path``: ``RUN.npz`` -> ``RUN.ckpt``."""
    root, ext = os.path.splitext(run_path)
    return (root if ext == ".npz" else run_path) + ".ckpt"


def check_writable(path: str, what: str = "output") -> None:
    """Raise ValueError (one line, starting with ``what`` and ``path``) unless ``path`` can be
    written as a file: it must not end in a path separator or be a directory, and its
    directory must exist and accept new files (probed with a temporary file, removed again).
    Nothing is created."""
    seps = tuple(s for s in (os.sep, os.altsep) if s)
    if not path or path.endswith(seps):
        raise ValueError(f"{what} {path!r} must name a file, not a directory (e.g. runs/run.npz)")
    if os.path.isdir(path):
        raise ValueError(f"{what} {path!r} is a directory; give a file name such as "
                         f"{os.path.join(path, 'run.npz')!r}")
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise ValueError(f"{what}: directory {d!r} does not exist (create it first: mkdir -p {d})")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-probe-", dir=d)
    except OSError as exc:
        raise ValueError(f"{what}: cannot create files in directory {d!r} "
                         f"({exc.strerror or type(exc).__name__})") from None
    os.close(fd)
    os.unlink(tmp)
