"""Torch-free maths of the synthetic tasks: the ``longmem`` teacher's time scales and scale, and
the loss of the trivial (input-blind) predictor of every task (docs/rnn.md).

Needs numpy only, so that ``levysde check`` and run-file readers work without PyTorch.
"""
from __future__ import annotations

import numpy as np

from levysde.core.validate import check_int, check_real


# --------------------------------------------------------------------------------------
# the "learned" diagnostic (docs/specification.md §8 (i)), torch-free so that ``levysde check`` needs numpy only
# --------------------------------------------------------------------------------------
def teacher_time_scales(n_mem: int, lag_max: int, gamma: float = 0.0) -> np.ndarray:
    """Time scales ``tau_j`` (steps, float64, (n_mem,), increasing) of the ``longmem`` teacher.

    The quantiles ``u_j = j / (n_mem - 1)`` of the density ``p(tau) ∝ tau^(-1-gamma)`` on
    ``[1, lag_max]``: ``tau = lag_max^u`` for gamma = 0 (log-uniform), else
    ``tau = (1 - u (1 - lag_max^(-gamma)))^(-1/gamma)`` (inverse CDF). n_mem = 1 gives
    ``[lag_max]``. Raises ValueError unless n_mem is an integer >= 1, lag_max an integer >= 2
    and gamma a finite number >= 0.
    """
    n_mem, lag_max = check_int("n_mem", n_mem, 1), check_int("mem_lag_max", lag_max, 2)
    check_real("mem_gamma", gamma, 0.0)
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
