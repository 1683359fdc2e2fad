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
    """The learnability file beside a run file: ``RUN.npz`` -> ``RUN.learnability.npz``."""
    root, ext = os.path.splitext(os.fspath(run_path))
    return (root if ext == ".npz" else os.fspath(run_path)) + ".learnability.npz"


def save_learnability(path: str, sums: dict[str, Any], meta: dict[str, Any]) -> None:
    """Write the sums and ``meta`` (JSON-serialisable; ``kind`` is set) atomically. Raises
    ValueError when a sum key is missing or meta is not JSON-serialisable."""
    missing = [k for k in SUM_KEYS if k not in sums]
    if missing:
        raise ValueError(f"learnability sums lack {missing}")
    out: dict[str, Any] = {k: np.asarray(sums[k], dtype=np.float64) for k in SUM_KEYS}
    out["meta"] = np.array(json.dumps(dict(meta, kind="learnability"), sort_keys=True, allow_nan=False))
    atomic_write(path, lambda fh: np.savez(fh, **out))


def read_learnability(path: str) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``(sums, meta)`` of a learnability file. Raises ValueError (one line naming the file) when it
    is missing, not a valid .npz, corrupt or oversized (:func:`levysde.io.archive.check_archive`,
    checked before any array is read), not of kind ``learnability`` or lacks a key."""
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
