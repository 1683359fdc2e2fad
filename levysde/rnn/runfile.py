"""Run files (.npz, readable with numpy alone) and checkpoints.

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
interrupted run leaves the last complete file.
"""
from __future__ import annotations

import json
import os
import tempfile

import numpy as np

REQUIRED_KEYS = ("zeta", "zeta_jac", "step", "Lambda", "loss", "lags", "envelope", "config")


def _atomic_write(path: str, writer) -> None:
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.basename(path), dir=d)
    try:
        with os.fdopen(fd, "wb") as fh:
            writer(fh)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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
    _atomic_write(path, lambda fh: np.savez(fh, **out))


def load_run(path: str) -> dict:
    """Read a run file with numpy only. Returns a dict of arrays plus ``config`` parsed to a dict.

    Raises ValueError if a required key is missing."""
    with np.load(path, allow_pickle=False) as z:
        data = {k: z[k] for k in z.files}
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        raise ValueError(f"{path}: not a levysde run file (missing {missing})")
    data["config"] = json.loads(str(data["config"][()]))
    return data


def checkpoint_path(run_path: str) -> str:
    """Checkpoint file that goes with run file ``run_path``: ``RUN.npz`` -> ``RUN.ckpt``."""
    root, ext = os.path.splitext(run_path)
    return (root if ext == ".npz" else run_path) + ".ckpt"


def save_checkpoint(path: str, state: dict) -> None:
    """Atomically ``torch.save`` a checkpoint dict (model, optimizer, step, records, config)."""
    import torch

    _atomic_write(path, lambda fh: torch.save(state, fh))


def load_checkpoint(path: str) -> dict:
    """Load a checkpoint written by :func:`save_checkpoint` (tensors mapped to CPU)."""
    import torch

    return torch.load(path, map_location="cpu", weights_only=False)
