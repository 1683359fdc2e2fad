"""The anti-collapse paper's protocol: its estimators, as library functions (docs/paper_protocol.md).

The empirical validation of the anti-collapse paper (code ``lorenzolivi/anticollapse``) reports, per
network, from the per-unit time scales tau_q at its checkpoints:

* **beta_hat_tail** (:func:`ccdf_tail_fit`, :func:`ccdf_tail_bootstrap`): minus the least-squares
  slope of log P_hat(tau > x) against log x over the units' tau between the empirical 0.75 and
  0.995 quantiles of one checkpoint (>= 16 units, >= 8 distinct points), floored at 0; a 90 %
  percentile bootstrap over units (B = 2000); reported as the mean over seeds of the final
  checkpoint's estimate and interval ends;
* **kappa_tail** (:func:`kappa_tail`, :func:`kappa_tail_sweep`): the 10 %-trimmed mean of the
  per-epoch increments Delta zeta between consecutive checkpoints over the units with zeta below
  the q-quantile (q = 0.10, swept over 0.03-0.20) of the pooled late zeta, in the last 35 % of the
  checkpoints; a 90 % block bootstrap (B = 3000; a block = one checkpoint transition of one seed)
  that re-estimates the cut in every resample; "restoring" when the interval lies above 0;
* **the envelope** (:func:`tau_envelope`, :func:`envelope_models`): f(l) = (1/H) sum_q exp(-l/tau_q)
  on l = 4 ... 384, fitted as exponential ``log f = a + b l``, power ``log f = c + d l`` in log l and
  tempered ``log f = a + d log l + b l`` (beta_env = -d), compared by AIC;
* **the phase label** (:func:`power_law_window`, :func:`phase_label`): collapsed unless a power-law
  window of the envelope passes (the power or tempered model wins by AIC, beta > 0.1, enough lags
  below the cut-off l* = beta tau_max, structureless residuals by a runs test), then concentrated,
  broad or boundary from the bootstrap interval of beta_hat_tail against 1.

:func:`paper_estimates` runs all of them on a set of seeds' checkpoints.

**Non-decaying units are right-censored.** The paper's code writes tau = NaN for a unit whose
fitted transport slope is >= 0 (no decay over the fit window) and drops it. Such a unit's time
scale is beyond what the window resolves: it belongs to the far tail. Every estimator here takes
it as censored (tau = +inf: above every resolved tau) and reports both readings, ``"censored"``
and ``"dropped"`` (the paper's), with the number of censored units. Censoring changes the CCDF
(the censored units stay in the denominator and above every x), the quantile window, the
bootstrap (censored units are resampled too), the far-left slice of kappa_tail (a censored unit
lies in it; its increment is unknown and is not averaged, but counted) and the envelope
(a censored unit contributes exp(-l/inf) = 1).

Calibration on synthetic SDE data with known beta* and kappa: ``benchmarks/calibrate_paper.py``
(docs/paper_protocol.md).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from levysde.core.jsonable import to_jsonable
from levysde.core.validate import check_array, check_choice, check_int, check_real
from levysde.theory.envelope_decay import fit_slope
from levysde.theory.envelope_map import envelope_samples

__all__ = ["READINGS", "PAPER_Q_LO", "PAPER_Q_HI", "PAPER_KAPPA_Q", "PAPER_KAPPA_SWEEP", "PAPER_LAGS",
           "PHASE_LABELS", "CCDFFit", "CCDFBootstrap", "KappaTail", "EnvelopeModels", "PowerWindow",
           "SeedEstimates", "PaperReport", "censoring_mask", "ccdf_tail_fit", "ccdf_tail_bootstrap",
           "kappa_tail", "kappa_tail_sweep", "tau_envelope", "envelope_models", "runs_test",
           "power_law_window", "phase_label", "paper_estimates"]

#: the two readings of non-decaying units: counted as tau = +inf ("censored") or left out ("dropped",
#: the paper's code)
READINGS = ("censored", "dropped")
#: the paper's CCDF window: the 0.75 and 0.995 quantiles of one checkpoint's tau
PAPER_Q_LO, PAPER_Q_HI = 0.75, 0.995
#: the paper's far-left quantile of kappa_tail and its sweep
PAPER_KAPPA_Q = 0.10
PAPER_KAPPA_SWEEP = (0.03, 0.05, 0.10, 0.15, 0.20)
#: the paper's envelope lags: 128 integers from 4 to 384 (duplicates removed)
PAPER_LAGS = np.unique(np.linspace(4, 384, 128).astype(int)).astype(float)
#: the phase labels of :func:`phase_label`
PHASE_LABELS = ("collapsed", "anti-collapsed (unresolved beta)", "concentrated anti-collapse",
                "broad anti-collapse", "boundary (soft classification)")

#: fewest units with a resolved tau (dropped reading) or units in all (censored) for a CCDF fit
_MIN_UNITS = 16
#: fewest distinct points in the CCDF window
_MIN_POINTS = 8
#: bootstrap rows per chunk (memory: chunk x units floats)
_CHUNK = 256


def censoring_mask(tau: ArrayLike, censored: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(tau, censored)`` as float64 and bool arrays of one shape, censored units at tau = +inf.

    Parameters
    ----------
    tau : array_like
        Time scales (steps), any shape. NaN or +-inf marks a unit whose tau the measurement did not
        resolve (the paper's code writes NaN for a non-decaying unit).
    censored : array_like of bool, optional
        Further units to treat as censored (shape of tau).

    Returns
    -------
    tau : ndarray
        Finite tau > 0 where resolved, +inf where censored.
    censored : ndarray of bool

    Raises
    ------
    ValueError
        For a finite tau <= 0 or a mask of another shape or dtype.

    Examples
    --------
    >>> t, c = censoring_mask([5.0, float("nan"), 20.0])
    >>> t.tolist(), c.tolist()
    ([5.0, inf, 20.0], [False, True, False])
    """
    t = np.array(tau, dtype=float)
    c = ~np.isfinite(t)
    if censored is not None:
        m = np.asarray(censored)
        if m.dtype != bool or m.shape != t.shape:
            raise ValueError(f"censored must be a boolean mask of tau's shape {t.shape}; got {m.dtype} {m.shape}")
        c = c | m
    if np.any(t[~c] <= 0):
        raise ValueError(f"tau must be > 0 (NaN marks a censored unit); got {float(t[~c][t[~c] <= 0][0])!r}")
    t[c] = np.inf
    return t, c


def _reading(reading):
    return check_choice("reading", reading, READINGS)


def _row_quantile(s: np.ndarray, q: float) -> np.ndarray:
    """Linear-interpolated q-quantile of each sorted row of ``s`` (numpy's default rule), with +-inf
    entries allowed: inf where the interpolation touches an infinite neighbour with weight > 0."""
    n = s.shape[1]
    h = (n - 1) * q
    lo = int(math.floor(h))
    hi = min(lo + 1, n - 1)
    frac = h - lo
    a, b = s[:, lo], s[:, hi]
    with np.errstate(invalid="ignore"):
        out = np.where(frac == 0 or lo == hi, a, a + frac * (b - a))
    out = np.where(np.isinf(a) & (a < 0), a, out)
    return np.where(np.isinf(b) & (b > 0) & (frac > 0), np.inf, out)


def _ccdf_rows(s: np.ndarray, q_lo: float, q_hi: float):
    """CCDF least squares on each sorted row of ``s`` (finite tau, then +inf for censored units).

    Returns (beta, r2, slope, x_lo, x_hi, n_fit) arrays; beta NaN where the fit cannot be made."""
    B, n = s.shape
    x_lo, x_hi = _row_quantile(s, q_lo), _row_quantile(s, q_hi)
    fin = np.isfinite(s)
    idx = np.arange(n)
    nxt = np.concatenate([s[:, 1:], np.full((B, 1), np.nan)], axis=1)
    prv = np.concatenate([np.full((B, 1), np.nan), s[:, :-1]], axis=1)
    is_last = ~(nxt == s)
    # r_i = number of entries <= s_i: the index after the last copy of s_i
    pos = np.where(is_last, idx[None, :] + 1, n + 1)
    r = np.minimum.accumulate(pos[:, ::-1], axis=1)[:, ::-1]
    surv = (n - r) / n
    first = ~(prv == s)
    win = fin & (s >= x_lo[:, None]) & (s <= x_hi[:, None])
    n_fit = win.sum(axis=1)
    m = win & first & (surv > 0)
    k = m.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        X = np.where(m, np.log(np.where(fin, s, 1.0) + 1e-12), 0.0)
        Y = np.where(m, np.log(np.where(surv > 0, surv, 1.0)), 0.0)
        kk = np.maximum(k, 1)
        mx, my = X.sum(axis=1) / kk, Y.sum(axis=1) / kk
        dx = np.where(m, X - mx[:, None], 0.0)
        dy = np.where(m, Y - my[:, None], 0.0)
        sxx, sxy, syy = (dx * dx).sum(axis=1), (dx * dy).sum(axis=1), (dy * dy).sum(axis=1)
        slope = sxy / sxx
        ss_res = ((dy - slope[:, None] * dx) ** 2 * m).sum(axis=1)
        r2 = 1.0 - ss_res / (syy + 1e-12)
    ok = (k >= _MIN_POINTS) & (sxx > 0) & np.isfinite(x_lo) & (x_hi > x_lo)
    beta = np.where(ok, np.maximum(0.0, -slope), np.nan)
    return beta, np.where(ok, r2, np.nan), np.where(ok, slope, np.nan), x_lo, x_hi, n_fit


@dataclass(frozen=True)
class CCDFFit:
    r"""beta_hat_tail of one checkpoint: the CCDF least-squares fit (:func:`ccdf_tail_fit`).

    Attributes
    ----------
    beta_hat : float
        Minus the fitted slope of :math:`\log \hat P(\tau > x)` on :math:`\log x`, floored at
        0; NaN when not computed (``reason`` says why).
    r2 : float
        Coefficient of determination of the fit (the phase rule asks >= 0.90).
    x_lo, x_hi : float
        The window's tau bounds (its q_lo and q_hi quantiles; x_hi = inf when that quantile falls
        among the censored units: the window then runs to the largest resolved tau).
    n_fit : int
        Resolved units inside the window.
    n_units : int
        Units counted (the CCDF's denominator).
    n_censored : int
        Censored units in the checkpoint (counted in the censored reading only).
    reading : {"censored", "dropped"}
        How censored units were read.
    q_lo, q_hi : float
        The quantile window.
    reason : str
        Why beta_hat is NaN ("" when computed).
    ok : bool
        beta_hat is finite (a property).

    Examples
    --------
    >>> tau = np.random.default_rng(0).pareto(0.8, size=2000) + 1.0
    >>> tau[:20] = np.nan                                  # 20 units did not decay
    >>> c, d = ccdf_tail_fit(tau), ccdf_tail_fit(tau, reading="dropped")
    >>> c.n_units, c.n_censored, c.x_hi, d.n_units
    (2000, 20, inf, 1980)
    >>> ccdf_tail_fit(tau[-10:]).reason
    '10 units (10 resolved); need >= 16'
    """

    beta_hat: float
    r2: float
    x_lo: float
    x_hi: float
    n_fit: int
    n_units: int
    n_censored: int
    reading: str
    q_lo: float
    q_hi: float
    reason: str = ""

    @property
    def ok(self) -> bool:
        """beta_hat was computed (is finite)."""
        return math.isfinite(self.beta_hat)


def _prepare_tau(tau, censored, reading):
    t, c = censoring_mask(np.ravel(np.asarray(tau, dtype=float)),
                          None if censored is None else np.ravel(np.asarray(censored)))
    if reading == "dropped":
        return np.sort(t[~c]), int(c.sum())
    return np.sort(t), int(c.sum())


def _check_window(q_lo, q_hi):
    q_lo = check_real("q_lo", q_lo, 0.0, 1.0, hi_open=True)
    q_hi = check_real("q_hi", q_hi, 0.0, 1.0, lo_open=True, hi_open=True)
    if not q_lo < q_hi:
        raise ValueError(f"q_lo must be below q_hi; got q_lo = {q_lo:g}, q_hi = {q_hi:g}")
    return q_lo, q_hi


def ccdf_tail_fit(tau: ArrayLike, *, censored: ArrayLike | None = None, reading: str = "censored",
                  q_lo: float = PAPER_Q_LO, q_hi: float = PAPER_Q_HI) -> CCDFFit:
    r"""The paper's beta_hat_tail of one checkpoint: CCDF least squares over a quantile window.

    Parameters
    ----------
    tau : array_like, shape (H,)
        One time scale per unit (steps); NaN or +-inf marks a censored unit (no decay resolved).
    censored : array_like of bool, shape (H,), optional
        Further censored units.
    reading : {"censored", "dropped"}
        ``"censored"``: censored units count as tau = +inf (in the CCDF's denominator, above every
        x, and in the quantiles); ``"dropped"``: left out, as the paper's code does.
    q_lo, q_hi : float
        The window: tau between the empirical q_lo and q_hi quantiles (numpy's linear rule);
        0 <= q_lo < q_hi < 1 (the paper: 0.75, 0.995).

    Returns
    -------
    CCDFFit
        beta_hat NaN with a reason when fewer than 16 units (resolved units in the dropped reading)
        or fewer than 8 distinct resolved tau with P_hat > 0 lie in the window.

    Raises
    ------
    ValueError
        For a finite tau <= 0, a bad mask, reading or window.

    Notes
    -----
    With the units' sorted tau, ``P_hat(tau > x) = #{tau_q > x} / n`` at every distinct resolved
    tau in the window (n counts the censored units in the censored reading); the fit is
    ``log P_hat = c - beta log x`` by ordinary least squares and beta_hat = max(0, beta). For
    exact Pareto samples P(tau > x) = (x/x_m)^(-beta) the slope is -beta up to sampling noise.
    The rule is the one of the paper's code (``fit_tau_ccdf_powerlaw`` of lorenzolivi/anticollapse),
    re-implemented; its bias and coverage on SDE data are in docs/paper_protocol.md.

    .. math::

        \hat P(\tau > x) = \frac{\#\{q : \tau_q > x\}}{n}, \qquad
        \log \hat P(\tau > x_i) = c - \beta \log x_i, \qquad \hat\beta = \max(0, \beta).

    References
    ----------
    * L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
      Recurrent Neural Networks", arXiv:2606.29519, and its code ``lorenzolivi/anticollapse``.
    * The specification, §1: a power-law tail :math:`p(\tau) \sim A\tau^{-1-\beta}`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> tau = rng.pareto(0.8, size=4000) + 1.0          # P(tau > x) = x^-0.8
    >>> round(ccdf_tail_fit(tau).beta_hat, 1)
    0.8
    """
    reading = _reading(reading)
    q_lo, q_hi = _check_window(q_lo, q_hi)
    s, n_c = _prepare_tau(tau, censored, reading)
    n_fin = int(np.isfinite(s).sum())
    base = dict(n_units=int(s.size), n_censored=n_c, reading=reading, q_lo=q_lo, q_hi=q_hi)
    if s.size < _MIN_UNITS or n_fin < 2:
        return CCDFFit(math.nan, math.nan, math.nan, math.nan, 0,
                       reason=f"{s.size} units ({n_fin} resolved); need >= {_MIN_UNITS}", **base)
    beta, r2, _, x_lo, x_hi, n_fit = _ccdf_rows(s[None, :], q_lo, q_hi)
    reason = "" if math.isfinite(beta[0]) else (
        f"fewer than {_MIN_POINTS} distinct resolved tau in the window [{x_lo[0]:.4g}, {x_hi[0]:.4g}]")
    return CCDFFit(float(beta[0]), float(r2[0]), float(x_lo[0]), float(x_hi[0]), int(n_fit[0]),
                   reason=reason, **base)


@dataclass(frozen=True)
class CCDFBootstrap:
    """The paper's percentile bootstrap of beta_hat_tail over units (:func:`ccdf_tail_bootstrap`).

    Attributes
    ----------
    fit : CCDFFit
        The fit on the data.
    lo, hi : float
        The ``level`` percentile interval of the replicates (NaN with < 10 valid replicates).
    median, std : float
        Median and standard deviation of the valid replicates.
    p_beta_lt1 : float
        Fraction of valid replicates below 1.
    n_valid : int
        Replicates with a fit (>= 8 points, finite R^2).
    n_boot : int
        Replicates drawn.
    level : float
        The interval's level.

    Examples
    --------
    >>> b = ccdf_tail_bootstrap(np.random.default_rng(1).pareto(1.5, size=2000) + 1.0, n_boot=100)
    >>> b.n_valid, b.n_boot, b.level
    (100, 100, 0.9)
    >>> sorted(b.as_json())[:4]
    ['fit', 'hi', 'level', 'lo']
    """

    fit: CCDFFit
    lo: float
    hi: float
    median: float
    std: float
    p_beta_lt1: float
    n_valid: int
    n_boot: int
    level: float

    def as_json(self) -> dict:
        """The fields as a JSON-ready dict (the fit nested; None for NaN)."""
        d = asdict(self)
        return to_jsonable(d)


def ccdf_tail_bootstrap(tau: ArrayLike, *, censored: ArrayLike | None = None, reading: str = "censored",
                        q_lo: float = PAPER_Q_LO, q_hi: float = PAPER_Q_HI, n_boot: int = 2000,
                        level: float = 0.90, seed: int = 42) -> CCDFBootstrap:
    """beta_hat_tail with the paper's percentile bootstrap over units.

    Parameters
    ----------
    tau, censored, reading, q_lo, q_hi
        As in :func:`ccdf_tail_fit`. In the censored reading the censored units are resampled
        with the others; in the dropped reading only the resolved units are.
    n_boot : int
        Bootstrap replicates (>= 10; the paper: 2000).
    level : float
        Level of the percentile interval, in (0, 1) (the paper: 0.90).
    seed : int
        Seed of the resampling (numpy ``default_rng``); the result depends on nothing else.

    Returns
    -------
    CCDFBootstrap
        The fit on the data, the percentile interval and the replicates' summary.

    Raises
    ------
    ValueError
        As :func:`ccdf_tail_fit`, and for n_boot < 10, a level outside (0, 1) or a negative seed.

    Notes
    -----
    Each replicate draws H units with replacement and refits with the same quantile window
    (Efron & Tibshirani 1993, ch. 13, the percentile interval). Units of one network are not
    independent, so the paper calls these intervals stability diagnostics; their coverage on
    independent SDE units is in docs/paper_protocol.md.

    References
    ----------
    * B. Efron, R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall (1993),
      ch. 13.
    * L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
      Recurrent Neural Networks", arXiv:2606.29519, and its code ``lorenzolivi/anticollapse``.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> b = ccdf_tail_bootstrap(rng.pareto(1.5, size=2000) + 1.0, n_boot=200)
    >>> bool(b.lo < 1.5 < b.hi)
    True
    """
    reading = _reading(reading)
    q_lo, q_hi = _check_window(q_lo, q_hi)
    check_int("n_boot", n_boot, 10)
    level = check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    check_int("seed", seed, 0)
    fit = ccdf_tail_fit(tau, censored=censored, reading=reading, q_lo=q_lo, q_hi=q_hi)
    s, _ = _prepare_tau(tau, censored, reading)
    nan = math.nan
    if s.size < _MIN_UNITS:
        return CCDFBootstrap(fit, nan, nan, nan, nan, nan, 0, int(n_boot), level)
    rng = np.random.default_rng(seed)
    reps = []
    for start in range(0, n_boot, _CHUNK):
        m = min(_CHUNK, n_boot - start)
        rows = np.sort(s[rng.integers(0, s.size, size=(m, s.size))], axis=1)
        beta, r2, *_ = _ccdf_rows(rows, q_lo, q_hi)
        reps.append(np.where(np.isfinite(r2), beta, np.nan))
    b = np.concatenate(reps)
    v = b[np.isfinite(b)]
    if v.size < 10:
        return CCDFBootstrap(fit, nan, nan, nan, nan, nan, int(v.size), int(n_boot), level)
    a = (1.0 - level) / 2.0
    return CCDFBootstrap(fit, float(np.quantile(v, a)), float(np.quantile(v, 1.0 - a)), float(np.median(v)),
                         float(np.std(v)), float(np.mean(v < 1.0)), int(v.size), int(n_boot), level)


# ----------------------------------------------------------------------------- kappa_tail

@dataclass(frozen=True)
class KappaTail:
    """The paper's far-left plateau kappa_tail (:func:`kappa_tail`).

    Attributes
    ----------
    kappa : float
        Trimmed mean of Delta zeta per unit of time over the far-left slice (NaN: see reason).
    lo, hi : float
        The ``level`` block-bootstrap percentile interval.
    restoring : bool or None
        True when lo > 0 (the paper's test), False otherwise, None when not computed.
    q : float
        The quantile of the pooled late zeta that cuts the slice.
    zeta_cut : float
        The cut (-inf when the q-quantile falls among censored units).
    n_tail : int
        Transitions in the slice with a known increment.
    n_censored : int
        Transitions in the slice whose increment is unknown (a censored unit at either end;
        censored reading only).
    n_blocks : int
        Checkpoint transitions (blocks) over all seeds.
    slope : float
        Least-squares slope of Delta zeta on zeta inside the slice (0 on a flat plateau).
    delta_bic : float
        BIC(linear) - BIC(constant) of Delta zeta on zeta in the slice (>= 0: constant
        preferred).
    reading : {"censored", "dropped"}
        How censored units were read.
    trim : float
        Fraction trimmed from each end.
    level : float
        The interval's level.
    n_boot : int
        Bootstrap replicates.
    reason : str
        Why kappa is NaN ("" when computed).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> zeta = np.cumsum(0.5 + 0.1 * rng.standard_normal((30, 400)), axis=0)
    >>> k = kappa_tail(np.exp(-zeta), np.arange(30.0), n_boot=100)
    >>> k.n_tail, k.n_blocks, k.n_censored, k.reason
    (400, 10, 0, '')
    >>> k.as_json()["restoring"]
    True
    """

    kappa: float
    lo: float
    hi: float
    restoring: bool | None
    q: float
    zeta_cut: float
    n_tail: int
    n_censored: int
    n_blocks: int
    slope: float
    delta_bic: float
    reading: str
    trim: float
    level: float
    n_boot: int
    reason: str = ""

    def as_json(self) -> dict:
        """The fields as a JSON-ready dict (None for NaN)."""
        return to_jsonable(asdict(self))


def _unpack(tau, epoch):
    """(list of tau arrays, list of epoch arrays) from arrays, or from objects with ``.tau`` and ``.epoch``
    (:class:`levysde.io.checkpoint_taus.CheckpointTaus`) when ``epoch`` is None."""
    if epoch is not None:
        return tau, epoch
    runs = [tau] if hasattr(tau, "tau") else list(tau)
    if not runs or not all(hasattr(r, "tau") and hasattr(r, "epoch") for r in runs):
        raise ValueError("epoch is required unless tau is a CheckpointTaus (or a list of them)")
    return [np.asarray(r.tau, dtype=float) for r in runs], [np.asarray(r.epoch, dtype=float) for r in runs]


def _runs_arrays(tau, epoch):
    """List of (zeta (R, H), censored (R, H), epoch (R,)) per seed, checked."""
    tau, epoch = _unpack(tau, epoch)
    if isinstance(tau, np.ndarray) and tau.ndim == 2:
        tau, epoch = [tau], [epoch]
    if not isinstance(tau, Sequence | np.ndarray) or len(tau) == 0:
        raise ValueError("tau must be an (R, H) array or a non-empty list of them (one per seed)")
    if len(epoch) != len(tau):
        raise ValueError(f"epoch must have one array per seed ({len(tau)}); got {len(epoch)}")
    out = []
    for i, (t, e) in enumerate(zip(tau, epoch, strict=True)):
        t = np.asarray(t, dtype=float)
        if t.ndim != 2 or t.shape[0] < 2 or t.shape[1] < 1:
            raise ValueError(f"tau[{i}] must be (R, H) with R >= 2 checkpoints; got shape {t.shape}")
        e = check_array(f"epoch[{i}]", e, shape=(t.shape[0],), increasing=True)
        tt, c = censoring_mask(t)
        with np.errstate(divide="ignore"):
            z = -np.log(tt)                       # -inf where censored
        out.append((z, c, e))
    return out


def _late_start(R, late_fraction, min_late):
    n_late = int(math.ceil(late_fraction * R))
    n_late = max(2, min(R, max(int(min_late), n_late)))
    return R - n_late


def _blocks(runs, late_fraction, min_late, reading):
    """One (current zeta, Delta zeta per time unit, unknown-increment mask) per late transition."""
    out = []
    for z, c, e in runs:
        for i in range(_late_start(z.shape[0], late_fraction, min_late), z.shape[0] - 1):
            gap = float(e[i + 1] - e[i])
            cur = z[i].copy()
            unknown = c[i] | c[i + 1]
            with np.errstate(invalid="ignore"):
                d = np.where(unknown, np.nan, (z[i + 1] - z[i]) / gap)
            if reading == "dropped":
                keep = ~unknown
                cur, d, unknown = cur[keep], d[keep], unknown[keep]
            else:
                cur = np.where(c[i], -np.inf, cur)
            if cur.size:
                out.append((cur, d, unknown))
    return out


def _quantile_inf(x, q):
    """Linear-interpolated q-quantile of a 1-d array that may hold -inf."""
    return float(_row_quantile(np.sort(x)[None, :], q)[0])


def _slice_stats(cur, d, unknown, q, trim):
    cut = _quantile_inf(cur, q)
    m = cur <= cut
    known = m & ~unknown
    return cut, d[known], cur[known], int((m & unknown).sum())


def _const_vs_linear(z, d):
    """(slope, BIC_linear - BIC_constant) of d on z (Gaussian BIC, n log(RSS/n) + k log n)."""
    n = z.size
    if n < 3 or np.ptp(z) == 0:
        return math.nan, math.nan
    rss_c = float(((d - d.mean()) ** 2).sum())
    slope, icpt = np.polyfit(z, d, 1)
    rss_l = float(((d - icpt - slope * z) ** 2).sum())
    bic = [n * math.log(max(r, 1e-300) / n) + k * math.log(n) for r, k in ((rss_c, 1), (rss_l, 2))]
    return float(slope), float(bic[1] - bic[0])


def kappa_tail(tau, epoch=None, *, q: float = PAPER_KAPPA_Q, reading: str = "censored", trim: float = 0.10,
               late_fraction: float = 0.35, min_late: int = 4, n_boot: int = 3000, level: float = 0.90,
               min_tail: int = 200, seed: int = 20260410) -> KappaTail:
    r"""The paper's kappa_tail: trimmed mean of the far-left increments, with the block bootstrap.

    Parameters
    ----------
    tau : (R, H) array or list of (R_s, H_s) arrays, one per seed
        tau_q per checkpoint and unit (steps); NaN or +-inf = censored (no decay resolved). A
        :class:`levysde.io.checkpoint_taus.CheckpointTaus` or a list of them (with epoch None).
    epoch : (R,) array or list of them
        The checkpoints' epochs (strictly increasing); increments are divided by the epoch gap
        (per epoch). Any time axis works (the SDE's time in a calibration).
    q : float
        The slice: zeta <= the q-quantile of the pooled late zeta, in (0, 0.5] (the paper: 0.10).
    reading : {"censored", "dropped"}
        ``"censored"``: censored units enter the pool at zeta = -inf (they lie in the slice); their
        increments are unknown: not averaged, counted in ``n_censored``. ``"dropped"``: transitions
        with a censored end are left out before the pool is formed (the paper's code).
    trim : float
        Fraction trimmed from each end, in [0, 0.5) (the paper: 0.10; :func:`scipy.stats.trim_mean`).
    late_fraction : float
        The late part, in (0, 1]: the last max(min_late, ceil(late_fraction R)) checkpoints of
        each seed (the paper: 35 %).
    min_late : int
        Fewest late checkpoints, >= 2 (the paper: 4).
    n_boot : int
        Block-bootstrap replicates (>= 10; the paper: 3000). A block is one checkpoint transition
        of one seed; each replicate recomputes the cut from its own pool.
    level : float
        Level of the percentile interval (the paper: 0.90).
    min_tail : int
        Fewest slice transitions with a known increment (the paper: 200).
    seed : int
        Seed of the bootstrap (numpy ``default_rng``).

    Returns
    -------
    KappaTail
        kappa_tail, its interval and the restoring test; kappa NaN with a reason when fewer than
        ``min_tail`` slice transitions have a known increment.

    Raises
    ------
    ValueError
        For bad shapes (each seed needs R >= 2 checkpoints), a finite tau <= 0, or options out of range.

    Notes
    -----
    The estimator of the paper's ``compute_tail_saturation_metrics`` (lorenzolivi/anticollapse,
    diagnostics/run_restoring_drift.py), re-implemented. Under the SDE of docs/specification.md §3
    the increments over a short interval Delta starting on the plateau have mean kappa Delta, so the
    trimmed mean estimates kappa when the slice lies on the plateau and the noise is symmetric; it
    is biased low when the slice reaches into the drift's transition or Delta is long compared with
    the relaxation time (docs/paper_protocol.md gives the measured bias).

    .. math::

        \hat\kappa_{\mathrm{tail}} = \operatorname{trim\,mean}_{0.1}\Big\{
        \frac{\zeta_{r+1,q} - \zeta_{r,q}}{t_{r+1} - t_r} :
        \zeta_{r,q} \le Q_q(\zeta_{\mathrm{late}})\Big\}.

    References
    ----------
    * L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
      Recurrent Neural Networks", arXiv:2606.29519, and its code ``lorenzolivi/anticollapse``.
    * H. R. Künsch, "The jackknife and the bootstrap for general stationary observations",
      *Ann. Statist.* 17 (1989) 1217-1241 (block bootstrap).
    * The specification, §3.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> zeta = np.cumsum(0.5 + 0.1 * rng.standard_normal((30, 400)), axis=0)   # drift 0.5 everywhere
    >>> k = kappa_tail(np.exp(-zeta), np.arange(30.0), n_boot=200)
    >>> round(k.kappa, 2), k.restoring
    (0.5, True)
    """
    reading = _reading(reading)
    q = check_real("q", q, 0.0, 0.5, lo_open=True)
    trim = check_real("trim", trim, 0.0, 0.5, hi_open=True)
    late_fraction = check_real("late_fraction", late_fraction, 0.0, 1.0, lo_open=True)
    check_int("min_late", min_late, 2)
    check_int("n_boot", n_boot, 10)
    level = check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    check_int("min_tail", min_tail, 1)
    check_int("seed", seed, 0)
    blocks = _blocks(_runs_arrays(tau, epoch), late_fraction, min_late, reading)
    nan = math.nan
    base = dict(q=q, reading=reading, trim=trim, level=level, n_boot=int(n_boot), n_blocks=len(blocks))
    if not blocks:
        return KappaTail(nan, nan, nan, None, zeta_cut=nan, n_tail=0, n_censored=0, slope=nan, delta_bic=nan,
                         reason="no late checkpoint transition with a resolved unit", **base)
    cur = np.concatenate([b[0] for b in blocks])
    d = np.concatenate([b[1] for b in blocks])
    unk = np.concatenate([b[2] for b in blocks])
    cut, d_tail, z_tail, n_unk = _slice_stats(cur, d, unk, q, trim)
    if d_tail.size < min_tail:
        return KappaTail(nan, nan, nan, None, zeta_cut=cut, n_tail=int(d_tail.size), n_censored=n_unk, slope=nan,
                         delta_bic=nan, reason=f"{d_tail.size} slice transitions with a known increment "
                                               f"(< {min_tail}); {n_unk} censored", **base)
    kappa = float(stats.trim_mean(d_tail, trim))
    slope, dbic = _const_vs_linear(z_tail, d_tail)
    rng = np.random.default_rng(seed)
    sizes = np.array([b[0].size for b in blocks])
    offs = np.concatenate([[0], np.cumsum(sizes)])
    reps = np.full(n_boot, np.nan)
    for r in range(n_boot):
        pick = rng.integers(0, len(blocks), size=len(blocks))
        idx = np.concatenate([np.arange(offs[i], offs[i + 1]) for i in pick])
        _, db, _, _ = _slice_stats(cur[idx], d[idx], unk[idx], q, trim)
        if db.size >= 4:
            reps[r] = stats.trim_mean(db, trim)
    v = reps[np.isfinite(reps)]
    a = (1.0 - level) / 2.0
    lo, hi = (float(np.quantile(v, a)), float(np.quantile(v, 1 - a))) if v.size >= 10 else (nan, nan)
    positive = None if not math.isfinite(lo) else bool(lo > 0)
    return KappaTail(kappa, lo, hi, positive, zeta_cut=cut,
                     n_tail=int(d_tail.size), n_censored=n_unk, slope=slope, delta_bic=dbic, **base)


def kappa_tail_sweep(tau, epoch=None, *, qs: Sequence[float] = PAPER_KAPPA_SWEEP, **kwargs) -> list[KappaTail]:
    """:func:`kappa_tail` at each far-left quantile of ``qs`` (the paper's robustness sweep).

    Parameters
    ----------
    tau, epoch
        As for :func:`kappa_tail`.
    qs : sequence of float, default :data:`PAPER_KAPPA_SWEEP`
        The far-left quantiles, each in (0, 0.5] (the paper: 0.03, 0.05, 0.10, 0.15, 0.20).
    **kwargs
        The other options of :func:`kappa_tail` (one bootstrap seed for every q).

    Returns
    -------
    list of KappaTail
        One per q, in the order of ``qs``.

    Raises
    ------
    ValueError
        As :func:`kappa_tail`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> zeta = np.cumsum(0.5 + 0.1 * rng.standard_normal((30, 1000)), axis=0)
    >>> [round(k.kappa, 1) for k in kappa_tail_sweep(np.exp(-zeta), np.arange(30.0), n_boot=50)]
    [0.5, 0.5, 0.5, 0.5, 0.5]
    """
    return [kappa_tail(tau, epoch, q=float(qq), **kwargs) for qq in qs]


# ----------------------------------------------------------------------------- the envelope

def tau_envelope(tau: ArrayLike, lags: ArrayLike | None = None, *, censored: ArrayLike | None = None,
                 reading: str = "censored") -> tuple[np.ndarray, np.ndarray]:
    r"""The envelope of a tau spectrum, :math:`f(l) = \frac{1}{H} \sum_q e^{-l / \tau_q}` (docs/specification.md §5).

    Parameters
    ----------
    tau : array_like, shape (H,)
        Time scales (steps); NaN or +-inf = censored.
    lags : array_like, optional
        Lags (steps, > 0, increasing); default :data:`PAPER_LAGS` (4 ... 384).
    censored, reading
        As in :func:`ccdf_tail_fit`: a censored unit contributes exp(-l/inf) = 1 (``"censored"``) or
        is left out (``"dropped"``).

    Returns
    -------
    lags, f : ndarray, shape (n,)
        The lags and the envelope values in [0, 1].

    Raises
    ------
    ValueError
        For bad lags, tau <= 0, or no unit left.

    Notes
    -----
    The resolved units' part is :func:`levysde.theory.envelope_map.envelope_samples` of
    zeta = -log tau (an exact sum), weighted by their share of the units:

    .. math::

        f(\ell) = \frac{1}{H} \sum_{q=1}^{H} e^{-\ell/\tau_q},
        \qquad e^{-\ell/\infty} = 1 \text{ for a censored unit}.

    References
    ----------
    * The specification, §5.

    Examples
    --------
    >>> lags, f = tau_envelope([10.0, float("nan")], [10.0, 20.0])
    >>> np.round(f, 4).tolist()          # (e^-1 + 1)/2, (e^-2 + 1)/2
    [0.6839, 0.5677]
    """
    reading = _reading(reading)
    lag = PAPER_LAGS.copy() if lags is None else check_array("lags", lags, ndim=1, min_size=1, lo=0.0,
                                                                 lo_open=True, increasing=True)
    t, c = censoring_mask(np.ravel(np.asarray(tau, dtype=float)),
                          None if censored is None else np.ravel(np.asarray(censored)))
    n_res = int((~c).sum())
    n_all = n_res + (int(c.sum()) if reading == "censored" else 0)
    if n_all == 0:
        raise ValueError("tau: no unit left (every unit is censored and reading='dropped')")
    f = np.zeros(lag.size)
    if n_res:
        f = envelope_samples(lag, -np.log(t[~c]), bin_width=0, errors=False).f * (n_res / n_all)
    return lag, f + (n_all - n_res) / n_all


@dataclass(frozen=True)
class EnvelopeModels:
    """The paper's three fits of log f(l) (:func:`envelope_models`).

    Attributes
    ----------
    exp_b, exp_tau : float
        Exponential ``log f = a + b l``; exp_tau = -1/b (inf for b >= 0).
    power_d, beta_power : float
        Power law ``log f = c + d log l``; beta_power = max(0, -d).
    temp_d, temp_b : float
        Tempered ``log f = a + d log l + b l``.
    beta_env : float
        max(0, -temp_d), the paper's envelope exponent.
    tau_max : float
        -1/temp_b (inf for temp_b >= 0).
    ell_star : float
        The crossover lag beta_env * tau_max (NaN when either is not positive and finite).
    aic : dict
        ``"exponential"``, ``"power"``, ``"tempered"`` -> n log(RSS/n) + 2k.
    winner : str
        The model with the smallest AIC.
    r2 : dict
        Model -> coefficient of determination.
    lags, log_f : ndarray, shape (n,)
        The fitted data (log f clamped at log 1e-30).
    coef : dict
        Model -> fitted coefficients (intercept first).

    Examples
    --------
    >>> lags = np.geomspace(4, 384, 40)
    >>> m = envelope_models(lags, lags ** -0.5)
    >>> m.winner, round(m.beta_power, 6), m.ell_star
    ('power', 0.5, nan)
    >>> sorted(m.as_json()["aic"])
    ['exponential', 'power', 'tempered']
    """

    exp_b: float
    exp_tau: float
    power_d: float
    beta_power: float
    temp_d: float
    temp_b: float
    beta_env: float
    tau_max: float
    ell_star: float
    aic: dict
    winner: str
    r2: dict
    lags: np.ndarray = field(repr=False)
    log_f: np.ndarray = field(repr=False)
    coef: dict = field(default_factory=dict)

    def as_json(self) -> dict:
        """The fits as a JSON-ready dict, without the data and coefficients (None for NaN)."""
        d = {k: getattr(self, k) for k in ("exp_b", "exp_tau", "power_d", "beta_power", "temp_d", "temp_b",
                                            "beta_env", "tau_max", "ell_star", "aic", "winner", "r2")}
        return to_jsonable(d)


def _lstsq(A, y):
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    res = y - A @ coef
    return coef, float(res @ res)


def envelope_models(lags: ArrayLike, f: ArrayLike) -> EnvelopeModels:
    r"""The paper's exponential, power-law and tempered fits of an envelope, compared by AIC.

    Parameters
    ----------
    lags : array_like, shape (n,)
        Lags > 0, increasing.
    f : array_like, shape (n,)
        Envelope values >= 0; log f is taken after clamping at 1e-30 (the paper's rule); at least 6
        lags are needed.

    Returns
    -------
    EnvelopeModels
        The three fits, their AIC and R^2, and the winner.

    Raises
    ------
    ValueError
        For fewer than 6 lags or bad input.

    Notes
    -----
    Ordinary least squares of log f on (1, l), (1, log l) and (1, log l, l); AIC = n log(RSS/n) + 2k
    with k = 2, 2, 3 (Gaussian residuals; Akaike 1974). The power-law line is
    :func:`levysde.theory.envelope_decay.fit_slope` over the whole grid (the same fit levysde's
    envelope slope uses). The paper reads beta_env = -d of the tempered fit as the envelope
    exponent and l* = beta_env tau_max as the end of the power-law window. The rule is the one of the
    paper's ``fit_log_envelope_exp_and_power`` (lorenzolivi/anticollapse), re-implemented.

    .. math::

        \mathrm{AIC} = n \log(\mathrm{RSS}/n) + 2k.

    References
    ----------
    * H. Akaike, "A new look at the statistical model identification", *IEEE Trans. Automat.
      Control* 19 (1974) 716-723.
    * L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
      Recurrent Neural Networks", arXiv:2606.29519, and its code ``lorenzolivi/anticollapse``.

    Examples
    --------
    >>> lags = np.geomspace(4, 384, 40)
    >>> m = envelope_models(lags, 3.0 * lags ** -0.6 * np.exp(-lags / 200.0))
    >>> m.winner, round(m.beta_env, 6), round(m.tau_max, 3)
    ('tempered', 0.6, 200.0)
    """
    lag = check_array("lags", lags, ndim=1, min_size=6, lo=0.0, lo_open=True, increasing=True)
    fv = check_array("f", f, shape=lag.shape, lo=0.0)
    y = np.log(np.maximum(fv, 1e-30))
    n = lag.size
    ll = np.log(lag)
    ss_tot = float(((y - y.mean()) ** 2).sum()) + 1e-12
    ce, rss_e = _lstsq(np.stack([np.ones(n), lag], 1), y)
    sp = fit_slope(lag, np.exp(y), lag_range=(float(lag[0]), float(lag[-1])), min_points=2)
    rss_p = float(((y - sp.intercept - sp.slope * ll) ** 2).sum())
    ct, rss_t = _lstsq(np.stack([np.ones(n), ll, lag], 1), y)
    aic = {"exponential": n * math.log(rss_e / n + 1e-30) + 4.0,
           "power": n * math.log(rss_p / n + 1e-30) + 4.0,
           "tempered": n * math.log(rss_t / n + 1e-30) + 6.0}
    winner = min(aic, key=aic.__getitem__)
    beta_env = max(0.0, -float(ct[1]))
    tau_max = -1.0 / float(ct[2]) if ct[2] < 0 else math.inf
    ell_star = beta_env * tau_max if (beta_env > 0 and math.isfinite(tau_max)) else math.nan
    return EnvelopeModels(exp_b=float(ce[1]), exp_tau=-1.0 / float(ce[1]) if ce[1] < 0 else math.inf,
                          power_d=float(sp.slope), beta_power=max(0.0, -float(sp.slope)), temp_d=float(ct[1]),
                          temp_b=float(ct[2]), beta_env=beta_env, tau_max=tau_max, ell_star=ell_star, aic=aic,
                          winner=winner, r2={"exponential": 1 - rss_e / ss_tot, "power": 1 - rss_p / ss_tot,
                                             "tempered": 1 - rss_t / ss_tot},
                          lags=lag, log_f=y, coef={"exponential": ce.tolist(), "power": [sp.intercept, sp.slope],
                                                   "tempered": ct.tolist()})


def runs_test(residuals: ArrayLike) -> tuple[float, float, float]:
    r"""Wald-Wolfowitz runs test of the signs of residuals (two-sided, normal approximation).

    Parameters
    ----------
    residuals : array_like, shape (n,)
        Finite values (ValueError otherwise); >= 8 are needed.

    Returns
    -------
    runs, z, p : float
        The number of sign runs, its standardized value and the two-sided p-value; NaNs when
        n < 8 or all residuals have one sign; (1, 0, 1) for residuals all below 1e-10 in size
        (an exact fit has no structure to reject).

    Raises
    ------
    ValueError
        For non-finite residuals.

    Notes
    -----
    Under random order of :math:`n_+` non-negative and :math:`n_-` negative signs,

    .. math::

        E R = 1 + \frac{2 n_+ n_-}{n}, \qquad
        \mathrm{Var}\, R = \frac{2 n_+ n_- (2 n_+ n_- - n)}{n^2 (n - 1)},

    and :math:`z = (R - E R)/\sqrt{\mathrm{Var}\, R}`.

    References
    ----------
    * A. Wald, J. Wolfowitz, "On a test whether two samples are from the same population",
      *Ann. Math. Statist.* 11 (1940) 147-162.

    Examples
    --------
    >>> runs_test([1, -1] * 10)[0]
    20.0
    """
    r = check_array("residuals", residuals).ravel()      # ValueError for non-finite residuals
    n = r.size
    nan = (math.nan, math.nan, math.nan)
    if n < 8:
        return nan
    if float(np.max(np.abs(r))) <= 1e-10:
        return (1.0, 0.0, 1.0)
    s = r >= 0
    n_pos = int(s.sum())
    n_neg = n - n_pos
    if n_pos == 0 or n_neg == 0:
        return nan
    runs = 1 + int(np.count_nonzero(s[1:] != s[:-1]))
    mu = 1.0 + 2.0 * n_pos * n_neg / n
    var = 2.0 * n_pos * n_neg * (2.0 * n_pos * n_neg - n) / (n * n * (n - 1.0))
    if var <= 0:
        return (float(runs), math.nan, math.nan)
    z = (runs - mu) / math.sqrt(var)
    return (float(runs), float(z), float(2.0 * stats.norm.sf(abs(z))))


@dataclass(frozen=True)
class PowerWindow:
    """The paper's power-law-window gate of an envelope (:func:`power_law_window`).

    Attributes
    ----------
    passed : bool
        The gate: the power or tempered model wins, beta > beta_min, enough lags in the window,
        and the runs test of the window's local power-law residuals has p > 0.05.
    beta : float
        The window's exponent (beta_power for a power winner, beta_env for a tempered one).
    local_beta : float
        Minus the slope of a power law fitted on the window alone.
    n_points, min_points : int
        Lags in the window and the number required.
    runs_p : float
        The runs test's p-value.
    winner : str
        The envelope model that won by AIC.
    reason : str
        Why it failed ("" when passed).

    Examples
    --------
    >>> lags = np.geomspace(4, 384, 60)
    >>> w = power_law_window(envelope_models(lags, np.exp(-lags / 30.0)))
    >>> w.passed, w.winner, w.reason
    (False, 'exponential', 'the exponential model wins by AIC')
    """

    passed: bool
    beta: float
    local_beta: float
    n_points: int
    min_points: int
    runs_p: float
    winner: str
    reason: str = ""

    def as_json(self) -> dict:
        """The fields as a JSON-ready dict (None for NaN)."""
        return to_jsonable(asdict(self))


def power_law_window(models: EnvelopeModels, *, beta_min: float = 0.10, min_points: int = 8,
                     min_fraction: float = 0.05) -> PowerWindow:
    """The paper's power-law-window gate: does the envelope hold a sustained power law?

    Parameters
    ----------
    models : EnvelopeModels
        The fits of :func:`envelope_models`.
    beta_min : float
        Smallest exponent of a non-degenerate window (the paper: 0.10).
    min_points : int
        Fewest lags in the window, >= 2 (the paper: 8).
    min_fraction : float
        Fewest lags as a fraction of the grid, in [0, 1] (the paper: 0.05); the window needs
        max(min_points, ceil(min_fraction n)) lags.

    Returns
    -------
    PowerWindow
        The gate and what it rests on.

    Raises
    ------
    ValueError
        For beta_min < 0, min_points < 2 or min_fraction outside [0, 1].

    Notes
    -----
    For a power winner the window is the whole grid; for a tempered winner the lags l <= l*; an
    exponential winner fails. On the window a power law is refitted and its residuals' signs must
    pass :func:`runs_test` (p > 0.05). The rule of the paper's ``crossover_residual_diagnostic``
    (lorenzolivi/anticollapse), re-implemented.

    References
    ----------
    * L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
      Recurrent Neural Networks", arXiv:2606.29519, and its code ``lorenzolivi/anticollapse``.

    Examples
    --------
    >>> lags = np.geomspace(4, 384, 60)
    >>> power_law_window(envelope_models(lags, lags ** -0.5)).passed
    True
    >>> power_law_window(envelope_models(lags, np.exp(-lags / 30.0))).passed
    False
    """
    beta_min = check_real("beta_min", beta_min, 0.0)
    check_int("min_points", min_points, 2)
    min_fraction = check_real("min_fraction", min_fraction, 0.0, 1.0)
    lag, y = models.lags, models.log_f
    need = max(int(min_points), math.ceil(min_fraction * lag.size))
    winner = models.winner
    if winner == "power":
        win, beta = np.ones(lag.size, bool), models.beta_power
    elif winner == "tempered" and math.isfinite(models.ell_star) and models.ell_star >= lag[0]:
        win, beta = lag <= models.ell_star, models.beta_env
    else:
        why = "the exponential model wins by AIC" if winner == "exponential" else (
            "the tempered model wins but its cut-off l* is undefined or below the grid")
        return PowerWindow(False, math.nan, math.nan, 0, need, math.nan, winner, why)
    n_w = int(win.sum())
    local_beta, runs_p = math.nan, math.nan
    if n_w >= 2:
        sl, ic = np.polyfit(np.log(lag[win]), y[win], 1)
        local_beta = max(0.0, -float(sl))
        runs_p = runs_test(y[win] - ic - sl * np.log(lag[win]))[2]
    fails = []
    if not beta > beta_min:
        fails.append(f"window exponent {beta:.3g} <= {beta_min:g}")
    if n_w < need:
        fails.append(f"{n_w} lags in the window < {need}")
    if not runs_p > 0.05:
        fails.append(f"runs test of the window's residuals p = {runs_p:.3g} (structure)")
    return PowerWindow(not fails, float(beta), float(local_beta), n_w, need, float(runs_p), winner,
                       "; ".join(fails))


def phase_label(window_passed: bool, tail_r2: float, beta_lo: float, beta_hi: float, *,
                r2_min: float = 0.90) -> str:
    """The paper's phase-label rule (its Table 1), applied in order.

    Parameters
    ----------
    window_passed : bool
        :attr:`PowerWindow.passed` of the envelope.
    tail_r2 : float
        R^2 of the CCDF tail fit (:attr:`CCDFFit.r2`).
    beta_lo, beta_hi : float
        The bootstrap interval of beta_hat_tail (:class:`CCDFBootstrap`).
    r2_min : float
        Smallest R^2 of a resolved tail (the paper: 0.90).

    Returns
    -------
    str
        One of :data:`PHASE_LABELS`: "collapsed" without a power-law window; "anti-collapsed
        (unresolved beta)" when the tail fit is poor or its interval is not finite; else
        "concentrated anti-collapse" (beta_lo > 1), "broad anti-collapse" (beta_hi < 1) or
        "boundary (soft classification)".

    Raises
    ------
    ValueError
        When tail_r2 > 1 or beta_lo > beta_hi.

    References
    ----------
    * L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
      Recurrent Neural Networks", arXiv:2606.29519, Table 1.
    * The specification, §4: the phases.

    Examples
    --------
    >>> phase_label(True, 0.97, 0.3, 0.6)
    'broad anti-collapse'
    >>> phase_label(False, 0.99, 1.2, 1.5)
    'collapsed'
    """
    if math.isfinite(tail_r2) and tail_r2 > 1.0:
        raise ValueError(f"tail_r2 must be an R^2 (<= 1); got {tail_r2!r}")
    if math.isfinite(beta_lo) and math.isfinite(beta_hi) and beta_lo > beta_hi:
        raise ValueError(f"beta_lo ({beta_lo!r}) must not exceed beta_hi ({beta_hi!r})")
    if not bool(window_passed):
        return "collapsed"
    if not (math.isfinite(tail_r2) and tail_r2 >= r2_min):
        return "anti-collapsed (unresolved beta)"
    if not (math.isfinite(beta_lo) and math.isfinite(beta_hi)):
        return "anti-collapsed (unresolved beta)"
    if beta_lo > 1.0:
        return "concentrated anti-collapse"
    if beta_hi < 1.0:
        return "broad anti-collapse"
    return "boundary (soft classification)"


# ----------------------------------------------------------------------------- the whole protocol

@dataclass(frozen=True)
class SeedEstimates:
    """The final checkpoint of one seed under one reading (an entry of :attr:`PaperReport.seeds`).

    Attributes
    ----------
    beta : CCDFBootstrap
        beta_hat_tail with its bootstrap.
    envelope : EnvelopeModels
        The envelope fits.
    window : PowerWindow
        The power-law window gate.
    phase : str
        The phase label (:func:`phase_label`).
    n_units : int
        Units counted.
    n_censored : int
        Censored units at the final checkpoint.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> rep = paper_estimates(rng.pareto(0.7, size=(6, 2000)) + 1.0, np.arange(0, 240, 40),
    ...                       n_boot_beta=100, n_boot_kappa=50)
    >>> s = rep.seeds["censored"][0]
    >>> s.n_units, s.n_censored, s.phase in PHASE_LABELS
    (2000, 0, True)
    >>> sorted(s.as_json())[:3]
    ['beta_env', 'beta_hat', 'beta_hi']
    """

    beta: CCDFBootstrap
    envelope: EnvelopeModels
    window: PowerWindow
    phase: str
    n_units: int
    n_censored: int

    def as_json(self) -> dict:
        """The seed's numbers as a dict (the ``seeds`` entries of :meth:`PaperReport.as_json`)."""
        return {"beta_hat": self.beta.fit.beta_hat, "beta_r2": self.beta.fit.r2, "beta_lo": self.beta.lo,
                "beta_hi": self.beta.hi, "beta_reason": self.beta.fit.reason, "n_valid_boot": self.beta.n_valid,
                "beta_env": self.envelope.beta_env, "beta_power": self.envelope.beta_power,
                "tau_max": self.envelope.tau_max, "envelope_winner": self.envelope.winner,
                "window": self.window.as_json(), "phase": self.phase, "n_units": self.n_units,
                "n_censored": self.n_censored}


@dataclass(frozen=True)
class PaperReport:
    """The paper's estimates over a set of seeds, under both readings (:func:`paper_estimates`).

    Attributes
    ----------
    seeds : dict
        Reading -> one :class:`SeedEstimates` per seed (final checkpoint).
    beta_hat, beta_lo, beta_hi : dict
        Reading -> the mean over seeds of the final beta_hat_tail and of its interval ends (the
        paper's reported numbers; NaN when a seed has none).
    kappa : dict
        Reading -> :class:`KappaTail` at the paper's q.
    kappa_sweep : dict
        Reading -> the q-sweep (list of :class:`KappaTail`).
    phase : dict
        Reading -> the majority label over seeds ("mixed" without a strict majority).
    n_censored_final : list of int
        Censored units at each seed's final checkpoint.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> taus = [rng.pareto(0.7, size=(6, 2000)) + 1.0 for _ in range(2)]
    >>> rep = paper_estimates(taus, [np.arange(0, 240, 40)] * 2, n_boot_beta=100, n_boot_kappa=50)
    >>> sorted(rep.beta_hat), len(rep.kappa_sweep["dropped"])
    (['censored', 'dropped'], 5)
    >>> sorted(rep.as_json()["readings"]["censored"])
    ['beta_hat', 'beta_hi', 'beta_lo', 'kappa', 'kappa_sweep', 'phase', 'seeds']
    """

    seeds: dict
    beta_hat: dict
    beta_lo: dict
    beta_hi: dict
    kappa: dict
    kappa_sweep: dict
    phase: dict
    n_censored_final: list

    def as_json(self) -> dict:
        """``{"readings": {reading: ...}, "n_censored_final": [...]}``, JSON-ready (None for NaN)."""
        return to_jsonable({
            "readings": {r: {"beta_hat": self.beta_hat[r], "beta_lo": self.beta_lo[r], "beta_hi": self.beta_hi[r],
                             "kappa": self.kappa[r].as_json(),
                             "kappa_sweep": [k.as_json() for k in self.kappa_sweep[r]],
                             "phase": self.phase[r], "seeds": [s.as_json() for s in self.seeds[r]]}
                         for r in self.seeds},
            "n_censored_final": self.n_censored_final})


def _majority(labels):
    if not labels:
        return "none"
    vals, counts = np.unique(labels, return_counts=True)
    i = int(np.argmax(counts))
    return str(vals[i]) if counts[i] > len(labels) / 2 else "mixed"


def paper_estimates(tau, epoch=None, *, lags: ArrayLike | None = None, q_lo: float = PAPER_Q_LO,
                    q_hi: float = PAPER_Q_HI, n_boot_beta: int = 2000, n_boot_kappa: int = 3000,
                    kappa_q: float = PAPER_KAPPA_Q, kappa_sweep: Sequence[float] = PAPER_KAPPA_SWEEP,
                    late_fraction: float = 0.35, level: float = 0.90, seed: int = 42) -> PaperReport:
    """The paper's protocol on the checkpoints of one or more seeds, under both readings.

    Parameters
    ----------
    tau : (R, H) array or list of (R_s, H_s) arrays, one per seed
        tau_q per checkpoint (rows in epoch order) and unit; NaN or +-inf = censored. A
        :class:`levysde.io.checkpoint_taus.CheckpointTaus` or a list of them may be given instead
        (epoch None): its ``.tau`` and ``.epoch``.
    epoch : (R,) array or list of them, optional
        The checkpoints' epochs, strictly increasing (None with CheckpointTaus).
    lags : array_like, optional
        Envelope lags (default :data:`PAPER_LAGS`).
    q_lo, q_hi : float
        The CCDF window (the paper: 0.75, 0.995).
    n_boot_beta, n_boot_kappa : int
        Bootstrap replicates of beta_hat_tail and kappa_tail (the paper: 2000 and 3000).
    kappa_q : float
        kappa_tail's quantile (the paper: 0.10).
    kappa_sweep : sequence of float
        Its sweep (default :data:`PAPER_KAPPA_SWEEP`).
    late_fraction : float
        The late part for kappa_tail (the paper: 0.35).
    level : float
        The intervals' level (the paper: 0.90).
    seed : int
        Seed of every bootstrap (seed s of the list uses ``seed + s`` for beta).

    Returns
    -------
    PaperReport
        Per reading: the seeds' estimates, their means, kappa_tail and its sweep, the majority
        phase.

    Raises
    ------
    ValueError
        As the estimators it calls.

    References
    ----------
    * L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
      Recurrent Neural Networks", arXiv:2606.29519, and its code ``lorenzolivi/anticollapse``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> taus = [rng.pareto(0.7, size=(6, 2000)) + 1.0 for _ in range(2)]
    >>> rep = paper_estimates(taus, [np.arange(0, 240, 40)] * 2, n_boot_beta=100, n_boot_kappa=50)
    >>> bool(abs(rep.beta_hat["censored"] - 0.7) < 0.1), rep.n_censored_final
    (True, [0, 0])
    """
    tau, epoch = _unpack(tau, epoch)
    runs = _runs_arrays(tau, epoch)
    taus = [np.asarray(t, dtype=float) for t in ([tau] if isinstance(tau, np.ndarray) and tau.ndim == 2 else tau)]
    seeds: dict = {}
    out: dict = {"beta_hat": {}, "beta_lo": {}, "beta_hi": {}, "kappa": {}, "kappa_sweep": {}, "phase": {}}
    for reading in READINGS:
        per = []
        for s, t in enumerate(taus):
            final = t[-1]
            b = ccdf_tail_bootstrap(final, reading=reading, q_lo=q_lo, q_hi=q_hi, n_boot=n_boot_beta, level=level,
                                    seed=seed + s)
            lag, f = tau_envelope(final, lags, reading=reading)
            m = envelope_models(lag, f)
            w = power_law_window(m)
            per.append(SeedEstimates(b, m, w, phase_label(w.passed, b.fit.r2, b.lo, b.hi), b.fit.n_units,
                                     b.fit.n_censored))
        seeds[reading] = per
        for key, get in (("beta_hat", lambda e: e.beta.fit.beta_hat), ("beta_lo", lambda e: e.beta.lo),
                         ("beta_hi", lambda e: e.beta.hi)):
            out[key][reading] = float(np.mean([get(e) for e in per]))
        kw = dict(reading=reading, late_fraction=late_fraction, n_boot=n_boot_kappa, level=level, seed=seed)
        tt = [np.where(r[1], np.inf, np.exp(-r[0])) for r in runs]
        ee = [r[2] for r in runs]
        out["kappa"][reading] = kappa_tail(tt, ee, q=kappa_q, **kw)
        out["kappa_sweep"][reading] = kappa_tail_sweep(tt, ee, qs=kappa_sweep, **kw)
        out["phase"][reading] = _majority([e.phase for e in per])
    return PaperReport(seeds=seeds, n_censored_final=[int((~np.isfinite(t[-1])).sum()) for t in taus], **out)
