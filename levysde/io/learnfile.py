"""Learnability files (.npz): the matched statistic's per-sequence sums of a run, with the
measurement made from them (``levysde learnability``; docs/learnability.md). Needs numpy only.

Keys: ``lags`` (L,), ``count``, ``total``, ``envelope`` (L, S), ``t`` (L, K), ``cos``, ``sin``
(L, S, K) (:func:`levysde.rnn.matched.matched_sums`) and ``meta``, a 0-d unicode JSON object with
``kind = "learnability"``, the source run, the settings of the measurement and its results.
Written atomically (:func:`levysde.io.files.atomic_write`); read with ``allow_pickle=False``.
"""
from __future__ import annotations

import json
import os
import zipfile
from typing import Any

import numpy as np

from levysde.io.archive import check_archive
from levysde.io.files import atomic_write

__all__ = ["SUM_KEYS", "learnability_path", "save_learnability", "read_learnability"]

SUM_KEYS = ("lags", "count", "total", "t", "cos", "sin", "envelope")


def learnability_path(run_path: str) -> str:
    """The learnability file beside a run file: ``RUN.npz`` -> ``RUN.learnability.npz``.

    Parameters
    ----------
    run_path : str or os.PathLike
        The run file; a name without the ``.npz`` suffix gets ``.learnability.npz`` appended.

    Returns
    -------
    str
        The path of the learnability file (nothing is created).

    Examples
    --------
    >>> print(learnability_path('runs/diag.npz'), learnability_path('runs/diag'))
    runs/diag.learnability.npz runs/diag.learnability.npz
    """
    root, ext = os.path.splitext(os.fspath(run_path))
    return (root if ext == ".npz" else os.fspath(run_path)) + ".learnability.npz"


def save_learnability(path: str, sums: dict[str, Any], meta: dict[str, Any]) -> None:
    """Write the sums and ``meta`` (JSON-serialisable; ``kind`` is set) atomically.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npz`` file (by convention :func:`learnability_path` of the run); written with
        :func:`levysde.io.files.atomic_write`, so an interrupted write leaves an earlier file.
    sums : dict
        The arrays of :data:`SUM_KEYS` (stored as float64), as
        :func:`levysde.rnn.matched.matched_sums` returns them: ``lags`` (L,), ``count``,
        ``total``, ``envelope`` (L, S), ``t`` (L, K), ``cos``, ``sin`` (L, S, K). Other keys are
        not written.
    meta : dict
        The source run, the settings and results of the measurement; stored as JSON with
        ``kind = "learnability"`` set (a ``kind`` of its own is replaced).

    Raises
    ------
    ValueError
        When a sum key is missing, or ``meta`` holds NaN or infinity (JSON has none).
    TypeError
        When ``meta`` holds an object JSON cannot write.
    OSError
        When the file cannot be written (see :func:`levysde.io.files.atomic_write`).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), 'run.learnability.npz')
    >>> sums = {k: np.zeros(3) for k in SUM_KEYS}
    >>> save_learnability(path, sums, {'run': 'run.npz', 'seq_len': 64})
    >>> data, meta = read_learnability(path)
    >>> sorted(meta.items()), data['lags'].dtype
    ([('kind', 'learnability'), ('run', 'run.npz'), ('seq_len', 64)], dtype('float64'))
    """
    missing = [k for k in SUM_KEYS if k not in sums]
    if missing:
        raise ValueError(f"learnability sums lack {missing}")
    out: dict[str, Any] = {k: np.asarray(sums[k], dtype=np.float64) for k in SUM_KEYS}
    out["meta"] = np.array(json.dumps(dict(meta, kind="learnability"), sort_keys=True, allow_nan=False))
    atomic_write(path, lambda fh: np.savez(fh, **out))


def read_learnability(path: str) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``(sums, meta)`` of a learnability file written by :func:`save_learnability`.

    Parameters
    ----------
    path : str or os.PathLike
        The learnability file (read with ``allow_pickle=False``).

    Returns
    -------
    sums : dict of str to ndarray
        Every array of the file but ``meta`` (at least :data:`SUM_KEYS`).
    meta : dict
        The parsed JSON ``meta`` entry (``kind`` is ``"learnability"``).

    Raises
    ------
    ValueError
        One line naming the file when it is missing, not a valid .npz, corrupt or oversized
        (:func:`levysde.io.archive.check_archive`, checked before any array is read), has no
        JSON ``meta`` entry, is not of kind ``learnability`` or lacks a key of
        :data:`SUM_KEYS`.

    Examples
    --------
    >>> read_learnability('no/such/file.npz')
    Traceback (most recent call last):
    ...
    ValueError: no such file: no/such/file.npz

    See :func:`save_learnability` for a round trip.
    """
    if not os.path.exists(path):
        raise ValueError(f"no such file: {path}")
    check_archive(path, "learnability file")
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise ValueError(f"no such file: {path}") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, KeyError, AttributeError, TypeError):
        raise ValueError(f"cannot read {path}: not a valid .npz archive") from None
    try:
        meta = json.loads(str(data.pop("meta")[()]))
    except (KeyError, ValueError, TypeError):
        raise ValueError(f"{path} has no JSON 'meta' entry (not a levysde learnability file)") from None
    if not isinstance(meta, dict) or meta.get("kind") != "learnability":
        kind = meta.get("kind") if isinstance(meta, dict) else None
        raise ValueError(f"{path}: not a learnability file (kind {kind!r})")
    missing = [k for k in SUM_KEYS if k not in data]
    if missing:
        raise ValueError(f"{path} lacks {', '.join(missing)}")
    return data, meta
