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
``<prod_{k<l} r_{t-k}>`` over the probe window, NaN for lags longer than the window;
``trivial_loss`` (0-d float64) the loss of the trivial predictor (the target's variance over
the loss window, :func:`trivial_loss`; measured on the probe batch for alpha-stable inputs)
and ``loss_ratio`` (R,) = ``loss / trivial_loss`` (both written since levysde 0.3; for older
files :func:`learned_diagnostic` recomputes the trivial loss from the task in the config).

Writes go through :func:`levysde._io.atomic_write` (temporary file in the same directory +
``os.replace``), so an interrupted run leaves the last complete file; the file gets mode
``0o666 & ~umask`` (like a file created with ``open``), not mkstemp's 0600; a target that is
not a regular file (device node, FIFO, directory) is refused.
"""
from __future__ import annotations

import json
import os
import zipfile

import numpy as np

from ._io import atomic_write, check_output, umask  # noqa: F401  (re-exported)

#: a run "learned" when its late loss is below this fraction of the trivial loss (THEORY §8)
LEARNED_THRESHOLD = 0.5

REQUIRED_KEYS = ("zeta", "zeta_jac", "step", "Lambda", "loss", "lags", "envelope", "config")


_umask = umask  # old private name


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
    ``meta``/``config`` object, is of a kind not in ``kinds``, or lacks its kind's keys;
    for simulation runs also when ``hist_edges`` is not a strictly increasing grid or
    ``hist_counts`` does not match it (naming the entry).
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
    if kind == "simulation":
        _check_histogram(path, data["hist_edges"], data["hist_counts"])
    data["meta"] = meta
    data["kind"] = kind
    if kind == "rnn":
        data["config"] = meta
    return data


def _check_histogram(path, edges, counts) -> None:
    """ValueError naming the file and the entry unless ``hist_edges`` is a 1-d, finite, strictly
    increasing grid of >= 2 edges and ``hist_counts`` holds finite counts >= 0 with shape
    (n_bins,) or (n_groups, n_bins), n_bins = len(hist_edges) - 1."""
    if edges.ndim != 1 or edges.size < 2 or not np.issubdtype(edges.dtype, np.number):
        raise ValueError(f"{path}: hist_edges must be a 1-d numeric array of >= 2 bin edges; got "
                         f"shape {edges.shape}, dtype {edges.dtype}")
    e = edges.astype(float)
    if not (np.all(np.isfinite(e)) and np.all(np.diff(e) > 0)):
        raise ValueError(f"{path}: hist_edges must be finite and strictly increasing (a corrupt or "
                         f"hand-edited run file)")
    if (counts.ndim not in (1, 2) or counts.shape[-1] != edges.size - 1
            or not np.issubdtype(counts.dtype, np.number)):
        raise ValueError(f"{path}: hist_counts has shape {counts.shape}, expected (n_groups, "
                         f"{edges.size - 1}) for {edges.size} hist_edges")
    c = counts.astype(float)
    if not (np.all(np.isfinite(c)) and np.all(c >= 0)):
        raise ValueError(f"{path}: hist_counts must be finite and >= 0")


def load_run(path: str) -> dict:
    """Read a ``levysde train`` run file with numpy only: :func:`read_run` restricted to RNN
    runs. Returns the arrays plus ``config`` parsed to a dict. Raises ValueError (one line)."""
    data = read_run(path, kinds=("rnn",))
    del data["meta"], data["kind"]         # the file holds exactly the arrays and its config
    if np.size(data["step"]) == 0:
        raise ValueError(f"{path} holds no records (its 'step' array is empty): nothing to check")
    return data


def checkpoint_path(run_path: str) -> str:
    """Checkpoint file that goes with run file ``run_path``: ``RUN.npz`` -> ``RUN.ckpt``."""
    root, ext = os.path.splitext(run_path)
    return (root if ext == ".npz" else run_path) + ".ckpt"


def check_writable(path: str, what: str = "output") -> None:
    """Raise ValueError (one line, starting with ``what`` and ``path``) unless ``path`` can be
    written as a file: :func:`levysde._io.check_output` with ``force=True`` (an existing regular
    file is accepted; directories, FIFOs, devices and missing directories are not). Nothing is
    created."""
    check_output(path, what, force=True)


# --------------------------------------------------------------------------------------
# the "learned" diagnostic (THEORY.md §8 (i)), torch-free so that ``levysde check`` needs numpy only
# --------------------------------------------------------------------------------------
def teacher_time_scales(n_mem: int, lag_max: int, gamma: float = 0.0) -> np.ndarray:
    """Time scales ``tau_j`` (steps, float64, (n_mem,), increasing) of the ``longmem`` teacher.

    The quantiles ``u_j = j / (n_mem - 1)`` of the density ``p(tau) ∝ tau^(-1-gamma)`` on
    ``[1, lag_max]``: ``tau = lag_max^u`` for gamma = 0 (log-uniform), else
    ``tau = (1 - u (1 - lag_max^(-gamma)))^(-1/gamma)`` (inverse CDF). n_mem = 1 gives
    ``[lag_max]``. Raises ValueError unless n_mem is an integer >= 1, lag_max an integer >= 2
    and gamma a finite number >= 0.
    """
    if not (isinstance(n_mem, (int, np.integer)) and not isinstance(n_mem, bool) and n_mem >= 1):
        raise ValueError(f"n_mem must be an integer >= 1, got {n_mem!r}")
    if not (isinstance(lag_max, (int, np.integer)) and not isinstance(lag_max, bool) and lag_max >= 2):
        raise ValueError(f"mem_lag_max must be an integer >= 2, got {lag_max!r}")
    if not (isinstance(gamma, (int, float, np.floating)) and np.isfinite(gamma) and gamma >= 0):
        raise ValueError(f"mem_gamma must be a finite number >= 0, got {gamma!r}")
    if n_mem == 1:
        return np.array([float(lag_max)])
    u = np.arange(n_mem) / (n_mem - 1.0)
    if gamma == 0:
        return float(lag_max) ** u
    return (1.0 - u * (1.0 - float(lag_max) ** (-gamma))) ** (-1.0 / gamma)


def teacher_scale(tau) -> float:
    """``c = (1^T C 1)^(-1/2)``: the scale that gives the ``longmem`` target ``c sum_j m^j``
    unit variance for N(0, 1) inputs. ``C_ij = s_i s_j / (1 - rho_i rho_j)`` is the stationary
    covariance of the leaky integrators ``m^j_t = rho_j m^j_{t-1} + s_j x_t``,
    ``rho_j = exp(-1/tau_j)``, ``s_j = sqrt(1 - rho_j^2)`` (sum of a geometric series)."""
    rho = np.exp(-1.0 / np.asarray(tau, dtype=float))
    s = np.sqrt(-np.expm1(-2.0 / np.asarray(tau, dtype=float)))
    C = s[:, None] * s[None, :] / (1.0 - rho[:, None] * rho[None, :])
    return float(1.0 / np.sqrt(C.sum()))


def trivial_loss(config: dict) -> float | None:
    """Population MSE of the best input-blind (constant) predictor over the loss window: the
    target's variance, for the task in a run's ``config`` (levysde.rnn.tasks).

    powerlaw: ``mean_{t in [t0, T)} sum_{k <= min(t, K-1)} w_k^2`` (the kernel's partial energy;
    1 once t >= K - 1); delay: the fraction of the window with ``t >= L`` (earlier targets are
    0); adding: ``Var(v_1 + v_2) = 2/12`` (the constant 1 = E y is the best guess); longmem: 1
    (:func:`teacher_scale`). Each plus ``target_noise^2``. ``t0`` = ``loss_from_resolved``.
    Returns None for alpha-stable inputs (infinite variance: the trainer then stores the
    probe batch's value as ``trivial_loss``). Raises ValueError for an unknown task.
    """
    task = config.get("task")
    sigma2 = float(config.get("target_noise") or 0.0) ** 2
    if config.get("input_alpha") is not None:
        return None
    T = int(config["seq_len"])
    t0 = config.get("loss_from_resolved", config.get("loss_from"))
    t0 = T // 2 if t0 is None else int(t0)
    t = np.arange(t0, T)
    if task == "powerlaw":
        K = int(config.get("kernel") or 0) or T
        w2 = (np.arange(K) + 1.0) ** (-2.0 * float(config.get("p", 1.0)))
        part = np.cumsum(w2) / w2.sum()
        return float(part[np.minimum(t, K - 1)].mean()) + sigma2
    if task == "delay":
        return float(np.mean(t >= int(config.get("delay", 5)))) + sigma2
    if task == "adding":
        return 2.0 / 12.0 + sigma2
    if task == "longmem":
        return 1.0 + sigma2
    raise ValueError(f"unknown task {task!r} in the run's config")


def learned_diagnostic(run: dict, threshold: float = LEARNED_THRESHOLD,
                       tail_fraction: float = 0.25) -> tuple[float, bool]:
    """``(loss_ratio, learned)`` for a run (a dict from :func:`load_run`) (THEORY.md §8 (i)).

    ``loss_ratio`` = median loss over the last ``tail_fraction`` of the records (at least
    one) / the trivial predictor's loss (the run file's ``trivial_loss``, else
    :func:`trivial_loss` of its config, for files written before it was stored); ``learned``
    = ``loss_ratio <= threshold`` (default 0.5). The loss is the probe loss, except for the
    streaming ``longmem`` task, where it is ``train_loss``: the mean loss of the fresh training
    chunks since the previous record, each scored before the update it causes and with the
    state carried along the stream (a prequential, out-of-sample loss). The ``longmem`` probe
    starts its streams from a zero state with a burn-in of 4 chunks, too short to warm up
    network time scales beyond it, so its loss grows as the network learns long memories
    (measured: probe ratio 1-2 at train-loss ratio 0.05 for DiagGate H = 256 after 16000
    steps). A non-finite loss gives ``(inf, False)``.

    Raises ValueError if the trivial loss is unknown (alpha-stable inputs in a file without
    ``trivial_loss``) or not > 0, or ``threshold`` / ``tail_fraction`` is out of range
    (threshold > 0, tail_fraction in (0, 1]).
    """
    if not (isinstance(threshold, (int, float)) and np.isfinite(threshold) and threshold > 0):
        raise ValueError(f"threshold must be a finite number > 0, got {threshold!r}")
    if not (isinstance(tail_fraction, (int, float)) and 0 < tail_fraction <= 1):
        raise ValueError(f"tail_fraction must be in (0, 1], got {tail_fraction!r}")
    triv = None
    if "trivial_loss" in run:
        triv = float(np.asarray(run["trivial_loss"]).reshape(-1)[0])
    if triv is None or not np.isfinite(triv):
        triv = trivial_loss(run["config"])
    if triv is None or not triv > 0:
        raise ValueError(f"the trivial predictor's loss is unknown or not > 0 ({triv!r}); cannot say "
                         f"whether the run learned")
    key = "train_loss" if run["config"].get("task") == "longmem" and "train_loss" in run else "loss"
    loss = np.asarray(run[key], dtype=float)
    k = max(1, int(np.ceil(tail_fraction * loss.size)))
    late = loss[-k:]
    if late.size == 0 or not np.all(np.isfinite(late)):
        return float("inf"), False
    ratio = float(np.median(late) / triv)
    return ratio, bool(ratio <= threshold)


def run_summary(run: dict) -> dict:
    """Summary of a run's last record (the ``levysde train`` printout and its ``--json``).

    Keys: records, step, probe_loss, trivial_loss, loss_ratio (None when not finite), learned
    (:func:`learned_diagnostic`), zeta_mean, zeta_std (over neurons, last record), jac_masked.
    Raises ValueError as :func:`learned_diagnostic` does.
    """
    z = np.asarray(run["zeta"], dtype=float)[-1]
    ratio, learned = learned_diagnostic(run)
    return {"records": len(run["step"]), "step": int(run["step"][-1]),
            "probe_loss": float(run["loss"][-1]), "trivial_loss": float(run["trivial_loss"]),
            "loss_ratio": ratio if np.isfinite(ratio) else None, "learned": learned,
            "zeta_mean": float(z.mean()), "zeta_std": float(z.std()),
            "jac_masked": int(np.asarray(run["jac_masked"])[-1])}
