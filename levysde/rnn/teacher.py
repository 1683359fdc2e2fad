"""Torch-free maths of the synthetic tasks: the ``longmem`` teacher's time scales and scale, the
``lagged`` task's lags and coefficients, and
the loss of the trivial (input-blind) predictor of every task (docs/rnn.md).

Needs numpy only, so that ``levysde check`` and run-file readers work without PyTorch.
"""
from __future__ import annotations

import numpy as np

from levysde.core.validate import check_int, check_real

__all__ = ["teacher_time_scales", "teacher_scale", "trivial_loss", "pareto_lags", "lagged_terms", "lagged_variance",
           "LAG_SEED", "FIXED_LAGS", "FIXED_COEFFS", "LAG_MODES"]


# --------------------------------------------------------------------------------------
# the "learned" diagnostic (docs/specification.md §8 (i)), torch-free so that ``levysde check`` needs numpy only
# --------------------------------------------------------------------------------------
def teacher_time_scales(n_mem: int, lag_max: int, gamma: float = 0.0) -> np.ndarray:
    r"""Time scales :math:`\tau_j` of the ``longmem`` teacher: quantiles of a power-law density.

    Parameters
    ----------
    n_mem : int
        The number of teacher memories, >= 1 (the ``TrainConfig`` field ``n_mem``).
    lag_max : int
        The longest time scale, in steps, >= 2 (``mem_lag_max``).
    gamma : float, optional
        The exponent of the density, finite, >= 0 (``mem_gamma``; default 0: log-uniform).

    Returns
    -------
    numpy.ndarray
        float64, shape (n_mem,), increasing, in steps: from 1 to ``lag_max``; ``[lag_max]``
        for ``n_mem = 1``.

    Raises
    ------
    ValueError
        Unless ``n_mem`` is an integer >= 1, ``lag_max`` an integer >= 2 (named
        ``mem_lag_max``) and ``gamma`` a finite number >= 0 (named ``mem_gamma``).

    Notes
    -----
    The quantiles :math:`u_j = j / (n_{\mathrm{mem}} - 1)`, :math:`j = 0, \dots,
    n_{\mathrm{mem}} - 1`, of the density :math:`p(\tau) \propto \tau^{-1-\gamma}` on
    :math:`[1, \ell_{\max}]`, by its inverse CDF:

    .. math::

        \tau_j = \ell_{\max}^{u_j} \quad (\gamma = 0), \qquad
        \tau_j = \big(1 - u_j (1 - \ell_{\max}^{-\gamma})\big)^{-1/\gamma} \quad (\gamma > 0).

    Examples
    --------
    >>> teacher_time_scales(3, 100).tolist()
    [1.0, 10.0, 100.0]
    >>> np.round(teacher_time_scales(3, 100, gamma=1.0), 4).tolist()
    [1.0, 1.9802, 100.0]
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
    r"""The scale :math:`c` that gives the ``longmem`` target :math:`c \sum_j m^j` unit variance.

    Parameters
    ----------
    tau : array_like of float
        The teacher's time scales :math:`\tau_j` in steps, each > 0, shape (n_mem,)
        (:func:`teacher_time_scales`).

    Returns
    -------
    float
        :math:`c = (\mathbf{1}^\top C\, \mathbf{1})^{-1/2}` for i.i.d. N(0, 1) inputs.

    Notes
    -----
    The leaky integrators :math:`m^j_t = \rho_j m^j_{t-1} + s_j x_t`, with
    :math:`\rho_j = e^{-1/\tau_j}` and :math:`s_j = \sqrt{1 - \rho_j^2}` (unit variance each),
    have the stationary covariance (the sum of a geometric series)

    .. math::

        C_{ij} = \operatorname{Cov}(m^i_t, m^j_t) = \frac{s_i s_j}{1 - \rho_i \rho_j}.

    Examples
    --------
    >>> round(teacher_scale([5.0]), 12)
    1.0
    >>> round(teacher_scale([1.0, 1000.0]), 4)
    0.685
    """
    rho = np.exp(-1.0 / np.asarray(tau, dtype=float))
    s = np.sqrt(-np.expm1(-2.0 / np.asarray(tau, dtype=float)))
    C = s[:, None] * s[None, :] / (1.0 - rho[:, None] * rho[None, :])
    return float(1.0 / np.sqrt(C.sum()))


def trivial_loss(config: dict) -> float | None:
    r"""Population MSE of the best input-blind (constant) predictor over the loss window.

    That is the target's variance (its mean is the best constant), for the task in a run's
    ``config`` (:mod:`levysde.rnn.tasks`).

    Parameters
    ----------
    config : dict
        A run's configuration (the run file's ``config``, or the fields of a
        ``TrainConfig``): ``task``, ``seq_len``, ``loss_from_resolved`` or ``loss_from``
        (default T // 2), ``target_noise``, ``input_alpha`` and the task's own fields
        (``kernel``, ``p``, ``delay``, the ``lag_*`` fields).

    Returns
    -------
    float or None
        The loss, > 0; None for alpha-stable inputs (infinite variance: the trainer then
        stores the probe batch's value as ``trivial_loss``).

    Raises
    ------
    ValueError
        For an unknown ``task``, or bad ``lag_*`` fields of the ``lagged`` task.

    Notes
    -----
    Over the loss window :math:`t \in [t_0, T)`, plus :math:`\sigma^2` (``target_noise``
    squared) for every task:

    * powerlaw: :math:`\operatorname{mean}_t \sum_{k \le \min(t, K-1)} w_k^2`, the kernel's
      partial energy (1 once :math:`t \ge K - 1`);
    * delay: the fraction of the window with :math:`t \ge L` (earlier targets are 0);
    * adding: :math:`\operatorname{Var}(v_1 + v_2) = 2/12` (the constant
      :math:`1 = \mathbb{E}\,y` is the best guess);
    * longmem: 1 (:func:`teacher_scale`);
    * lagged: :math:`\operatorname{mean}_t \sum_k c_k^2\, [t \ge \ell_k]`
      (:func:`lagged_variance`; the mean 0 is the best guess).

    :math:`t_0` is ``loss_from_resolved``.

    Examples
    --------
    >>> trivial_loss({"task": "adding", "seq_len": 8})
    0.16666666666666666
    >>> trivial_loss({"task": "delay", "seq_len": 20, "loss_from": 0, "delay": 5, "target_noise": 0.1})
    0.76
    >>> print(trivial_loss({"task": "adding", "seq_len": 8, "input_alpha": 1.5}))
    None
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
#: the ``lag_mode`` values of the ``lagged`` task
LAG_MODES = ("pareto", "fixed")


def pareto_lags(count: int, lo: int, hi: int, alpha: float, seed: int = LAG_SEED) -> np.ndarray:
    r"""``count`` distinct integer lags from a truncated Pareto density on ``[lo, hi]``.

    The density is :math:`p(\ell) \propto \ell^{-(\alpha+1)}`; the lags are drawn by inverse CDF.

    Parameters
    ----------
    count : int
        The number of lags, in [1, hi - lo + 1] (the ``lag_count`` field).
    lo, hi : int
        The range, 1 <= lo < hi (``lag_lo``, ``lag_hi``).
    alpha : float
        The Pareto index :math:`\alpha`, finite, > 0 (``lag_alpha``).
    seed : int, optional
        Seed of ``numpy.random.default_rng`` (default :data:`LAG_SEED`: the same lags for
        every training seed).

    Returns
    -------
    numpy.ndarray
        int64, shape (count,), sorted, distinct.

    Raises
    ------
    ValueError
        Unless 1 <= count <= hi - lo + 1, 1 <= lo < hi and alpha is finite and > 0 (naming
        ``lag_count``, ``lag_lo``, ``lag_hi``, ``lag_alpha``), or when ``count`` distinct lags
        cannot be drawn.

    Notes
    -----
    By inverse CDF: each round draws as many uniforms :math:`U` as lags are missing, maps them
    through

    .. math::

        \ell = \big(\ell_{lo}^{-\alpha} - U (\ell_{lo}^{-\alpha} - \ell_{hi}^{-\alpha})\big)^{-1/\alpha},

    rounds (clipped to [lo, hi]) and keeps the new values in order until ``count`` are
    distinct (a duplicate is redrawn in the next round). The defaults of the ``lagged`` task
    (16 lags, [8, 640], alpha 0.6) give
    [8, 9, 10, 11, 12, 15, 23, 24, 26, 32, 45, 60, 115, 183, 224, 626].

    Examples
    --------
    >>> pareto_lags(5, 2, 50, 0.6).tolist()
    [3, 5, 7, 11, 28]
    >>> pareto_lags(16, 8, 640, 0.6).tolist()[-3:]
    [183, 224, 626]
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
    r"""The lags and coefficients of the ``lagged`` task of a run's ``config``.

    Parameters
    ----------
    config : dict
        Read: ``lag_mode`` (``pareto`` or ``fixed``), ``lag_count``, ``lag_lo``, ``lag_hi``,
        ``lag_alpha``; missing keys take the anti-collapse paper's values (16, 8, 640, 0.6).

    Returns
    -------
    lags : numpy.ndarray
        int64 (K,), increasing.
    coeffs : numpy.ndarray
        float64 (K,): ``pareto``: :math:`c_k = 0.6 \cdot 0.85^k` (the longest lag gets the
        smallest); ``fixed``: :data:`FIXED_COEFFS` with :data:`FIXED_LAGS`.

    Raises
    ------
    ValueError
        For an unknown ``lag_mode``, or bad Pareto fields (:func:`pareto_lags`).

    Examples
    --------
    >>> lags, c = lagged_terms({"lag_mode": "pareto", "lag_count": 3, "lag_lo": 2, "lag_hi": 20})
    >>> lags.tolist(), np.round(c, 4).tolist()
    ([4, 8, 15], [0.6, 0.51, 0.4335])
    >>> lagged_terms({"lag_mode": "fixed"})[0].tolist()
    [32, 64, 128, 192, 256]
    """
    mode = config.get("lag_mode", "pareto")
    if mode == "fixed":
        return np.array(FIXED_LAGS, dtype=np.int64), np.array(FIXED_COEFFS)
    if mode != "pareto":
        raise ValueError(f"lag_mode must be one of {LAG_MODES}, got {mode!r}")
    lags = pareto_lags(config.get("lag_count", 16), config.get("lag_lo", 8), config.get("lag_hi", 640),
                       config.get("lag_alpha", 0.6))
    return lags, LAG_COEFF0 * LAG_COEFF_DECAY ** np.arange(len(lags), dtype=np.float64)


def lagged_variance(lags, coeffs, t) -> np.ndarray:
    r"""Variance of the noiseless ``lagged`` target at times ``t``.

    Parameters
    ----------
    lags : array_like of int
        (K,): the lags :math:`\ell_k`.
    coeffs : array_like of float
        (K,): their coefficients :math:`c_k`.
    t : array_like of int
        (n,): the time steps.

    Returns
    -------
    numpy.ndarray
        float64 (n,): :math:`\sum_k c_k^2\, [t \ge \ell_k]`.

    Notes
    -----
    The target is :math:`y_t = \sum_k c_k\, u^\top x_{t-\ell_k}` with :math:`u` a unit vector and
    :math:`x_t \sim N(0, I)` i.i.d., so its terms are independent with variance
    :math:`c_k^2`; terms with :math:`t - \ell_k < 0` are absent.

    Examples
    --------
    >>> lagged_variance([2, 4], [1.0, 0.5], [0, 2, 3, 4, 5]).tolist()
    [0.0, 1.0, 1.0, 1.25, 1.25]
    """
    t = np.asarray(t)
    c2 = np.asarray(coeffs, dtype=np.float64) ** 2
    return (t[:, None] >= np.asarray(lags)[None, :]).astype(np.float64) @ c2
