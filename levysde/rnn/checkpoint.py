"""Checkpoints of a training run (torch); the run file itself is :mod:`levysde.io.runfile`.

Checkpoints (``RUN.ckpt`` beside ``RUN.npz``) are written with ``torch.save`` and read with
``torch.load(..., weights_only=True)``: they hold only tensors, plain containers, numbers
and strings, so loading a crafted file cannot run code. Layout (``format`` =
:data:`CKPT_FORMAT`): ``model`` and ``optimizer`` state dicts, ``records`` (name -> tensor,
the run-file arrays so far), ``lags`` (tensor), ``step`` (int), ``wall`` (float), ``acc``
([float, int], the training-loss accumulator since the last record), ``config`` (dict, the
run file's config). Training uses no global RNG (every draw comes from a generator seeded
by ``(seed, step)``), so no RNG state is stored.
"""
from __future__ import annotations

import os
import re
import warnings

from levysde.io.archive import check_archive
from levysde.io.files import atomic_write
from levysde.rnn._torch import torch

__all__ = ["save_checkpoint", "load_checkpoint", "CKPT_FORMAT", "CKPT_KEYS"]

#: value of the checkpoint's ``format`` entry
CKPT_FORMAT = "levysde-rnn-checkpoint-2"
CKPT_KEYS = ("format", "model", "optimizer", "records", "lags", "step", "wall", "acc", "config")


def _why(exc: BaseException) -> str:
    """Short reason for a failed ``torch.load``: torch's weights-only message is long and
    suggests ``weights_only=False``, which is exactly what must not be done with an
    untrusted file, so only its WeightsUnpickler detail is kept."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if text.startswith("Weights only load failed"):
        key = "WeightsUnpickler error:"
        rest = text.split(key, 1)[1] if key in text else "\n".join(lines[1:])
        boiler = ("(1)", "(2)", "Check the documentation", "Please file an issue")
        rest = [ln.strip() for ln in rest.splitlines() if ln.strip() and not ln.strip().startswith(boiler)]
        detail = rest[0].split(" Please use", 1)[0] if rest else "unsupported content"
        return f"not loadable with weights_only=True: {detail}"[:200]
    return f"{type(exc).__name__}: {lines[0]}"[:200] if lines else type(exc).__name__


def save_checkpoint(path: str, state: dict) -> None:
    """Atomically ``torch.save`` a checkpoint dict.

    Parameters
    ----------
    path : str
        Where to write (by convention ``RUN.ckpt`` beside the run file ``RUN.npz``). The file
        is written to a temporary name and renamed (:func:`levysde.io.files.atomic_write`),
        so an interrupted write never leaves a truncated checkpoint.
    state : dict
        The checkpoint's entries (layout in the module docstring: :data:`CKPT_KEYS` but
        ``format``); only tensors, plain containers, numbers and strings, so that
        :func:`load_checkpoint` can read it with ``weights_only=True``. ``format`` is filled
        in (:data:`CKPT_FORMAT`); ``state`` itself is not modified.

    Returns
    -------
    None

    See Also
    --------
    load_checkpoint : reads it back.

    Examples
    --------
    >>> import os, tempfile, torch
    >>> d = tempfile.mkdtemp()
    >>> path = os.path.join(d, "run.ckpt")
    >>> state = {"model": {"W": torch.zeros(2, 2)}, "optimizer": {}, "records": {}, "lags": torch.arange(3),
    ...          "step": 5, "wall": 1.0, "acc": [0.0, 0], "config": {"hidden": 2}}
    >>> save_checkpoint(path, state)
    >>> st = load_checkpoint(path)
    >>> st["format"], st["step"], tuple(st["model"]["W"].shape)
    ('levysde-rnn-checkpoint-2', 5, (2, 2))
    """
    state = dict(state, format=CKPT_FORMAT)
    atomic_write(path, lambda fh: torch.save(state, fh))


def load_checkpoint(path: str) -> dict:
    """Load a checkpoint written by :func:`save_checkpoint` (``weights_only=True``, tensors on CPU).

    Parameters
    ----------
    path : str
        The checkpoint file (``RUN.ckpt``).

    Returns
    -------
    dict
        The checkpoint's entries, every key of :data:`CKPT_KEYS` present (layout in the
        module docstring), tensors on the CPU.

    Raises
    ------
    ValueError
        One line naming ``path``, if the file is missing or cannot be read (truncated, corrupt,
        not a levysde checkpoint, written by an older levysde, incomplete, or holding objects
        other than tensors / plain containers), or when its zip directory declares more data
        than the file holds or memory can take (:func:`levysde.io.archive.check_archive`).

    Notes
    -----
    ``torch.load(..., weights_only=True)`` unpickles only tensors, plain containers, numbers
    and strings, so loading a crafted file cannot run code.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "bad.ckpt")
    >>> with open(path, "wb") as fh:
    ...     _ = fh.write(b"not a checkpoint")
    >>> try:
    ...     load_checkpoint(path)
    ... except ValueError as e:
    ...     print(str(e).split(": ", 1)[1].split(" (")[0])
    corrupt, truncated or not a levysde checkpoint
    """
    if not os.path.exists(path):
        raise ValueError(f"checkpoint {path!r} is missing (no such file)")
    check_archive(path, "checkpoint")     # a zip member that declares more than the file holds
    try:
        with warnings.catch_warnings():  # e.g. "Detected pickle protocol 4": the error below says it
            warnings.simplefilter("ignore")
            st = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any failure is reported as one line
        raise ValueError(f"cannot read checkpoint {path!r}: corrupt, truncated or not a levysde "
                         f"checkpoint ({_why(exc)})") from None
    if not isinstance(st, dict) or st.get("format") != CKPT_FORMAT:
        raise ValueError(f"cannot read checkpoint {path!r}: not a levysde checkpoint of format "
                         f"{CKPT_FORMAT!r} (older levysde versions wrote another format)")
    missing = [k for k in CKPT_KEYS if k not in st]
    if missing or not isinstance(st["config"], dict) or not isinstance(st["records"], dict):
        raise ValueError(f"cannot read checkpoint {path!r}: incomplete (missing {missing})")
    return st
