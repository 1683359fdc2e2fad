"""Torch-free maths of the synthetic tasks: the ``longmem`` teacher's time scales and scale, the
``lagged`` task's lags and coefficients, and
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
    (:func:`teacher_scale`); lagged: ``mean_t sum_k c_k^2 [t >= l_k]``
    (:func:`lagged_variance`; the mean 0 is the best guess). Each plus ``target_noise^2``.
    ``t0`` = ``loss_from_resolved``.
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
    if task == "lagged":
        return float(lagged_variance(*lagged_terms(config), t).mean()) + sigma2
    raise ValueError(f"unknown task {task!r} in the run's config")


# --------------------------------------------------------------------------------------
# the ``lagged`` task (delayed regression with heavy-tailed lags, the anti-collapse paper)
# --------------------------------------------------------------------------------------
#: seed of the lag draw (numpy default_rng): the same lags for every training seed
LAG_SEED = 20260410
#: the learnability paper's fixed lags and coefficients (``lag_mode = "fixed"``)
FIXED_LAGS = (32, 64, 128, 192, 256)
FIXED_COEFFS = (0.6, 0.5, 0.4, 0.32, 0.26)
#: coefficients c_k = LAG_COEFF0 * LAG_COEFF_DECAY^k of the drawn lags (sorted order)
LAG_COEFF0, LAG_COEFF_DECAY = 0.6, 0.85
LAG_MODES = ("pareto", "fixed")


def pareto_lags(count: int, lo: int, hi: int, alpha: float, seed: int = LAG_SEED) -> np.ndarray:
    """``count`` distinct integer lags (int64, sorted) from the truncated Pareto density
    ``p(l) ∝ l^(-(alpha+1))`` on ``[lo, hi]``, by inverse CDF from ``numpy.random.default_rng(seed)``.

    Each round draws as many uniforms as lags are missing, maps them through
    ``l = (lo^-a - U (lo^-a - hi^-a))^(-1/a)``, rounds (clipped to [lo, hi]) and keeps the new
    values in order until ``count`` are distinct (a duplicate is redrawn in the next round).
    The defaults of the ``lagged`` task (16 lags, [8, 640], alpha 0.6) give
    [8, 9, 10, 11, 12, 15, 23, 24, 26, 32, 45, 60, 115, 183, 224, 626].
    Raises ValueError unless 1 <= count <= hi - lo + 1, 1 <= lo < hi, alpha finite > 0.
    """
    lo = check_int("lag_lo", lo, 1)
    hi = check_int("lag_hi", hi, lo + 1, why="above lag_lo")
    count = check_int("lag_count", count, 1, hi - lo + 1, why="distinct integers in [lag_lo, lag_hi]")
    a = check_real("lag_alpha", alpha, 0.0, lo_open=True)
    rng = np.random.default_rng(int(seed))
    got: list[int] = []
    top, bottom = float(lo) ** -a, float(lo) ** -a - float(hi) ** -a
    for _ in range(1000 * count):
        for s in (top - rng.uniform(size=count - len(got)) * bottom) ** (-1.0 / a):
            v = int(min(hi, max(lo, round(float(s)))))
            if v not in got:
                got.append(v)
            if len(got) == count:
                return np.array(sorted(got), dtype=np.int64)
    raise ValueError(f"lag_count = {count}: could not draw {count} distinct lags in [{lo}, {hi}] "
                     f"with lag_alpha = {a}; lower lag_count or widen the range")


def lagged_terms(config: dict) -> tuple[np.ndarray, np.ndarray]:
    """``(lags (K,) int64, coefficients (K,) float64)`` of the ``lagged`` task of a run's
    ``config`` (keys ``lag_mode``, ``lag_count``, ``lag_lo``, ``lag_hi``, ``lag_alpha``;
    defaults: the paper's). ``pareto``: :func:`pareto_lags`, ``c_k = 0.6 * 0.85^k`` (the longest
    lag gets the smallest); ``fixed``: :data:`FIXED_LAGS`, :data:`FIXED_COEFFS`."""
    mode = config.get("lag_mode", "pareto")
    if mode == "fixed":
        return np.array(FIXED_LAGS, dtype=np.int64), np.array(FIXED_COEFFS)
    if mode != "pareto":
        raise ValueError(f"lag_mode must be one of {LAG_MODES}, got {mode!r}")
    lags = pareto_lags(config.get("lag_count", 16), config.get("lag_lo", 8), config.get("lag_hi", 640),
                       config.get("lag_alpha", 0.6))
    return lags, LAG_COEFF0 * LAG_COEFF_DECAY ** np.arange(len(lags), dtype=np.float64)


def lagged_variance(lags, coeffs, t) -> np.ndarray:
    """Variance of the noiseless ``lagged`` target at times ``t``: ``sum_k c_k^2 [t >= l_k]``
    (``u`` is a unit vector, x_t ~ N(0, I) i.i.d.; terms with ``t - l_k < 0`` are absent)."""
    t = np.asarray(t)
    c2 = np.asarray(coeffs, dtype=np.float64) ** 2
    return (t[:, None] >= np.asarray(lags)[None, :]).astype(np.float64) @ c2
