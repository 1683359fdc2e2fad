"""The empirical learnability window of a trained network and its master law (docs/learnability.md).

Input: the per-sequence sufficient sums of the matched statistic ``psi_t(l)`` at every lag
(:func:`levysde.rnn.matched.matched_sums`, or any synthetic source with the same layout). Output
(:func:`measure_learnability`), per lag l:

* the mean ``m(l)`` of psi (its modulus enters: the paper orients psi by the sign of its mean)
  and its bootstrap error;
* the symmetric alpha-stable fit of psi's fluctuations, ``alpha_hat(l)``, ``sigma_hat(l)``, by
  the empirical characteristic function (:mod:`levysde.stats.stable_fit`; Koutrouvelis 1980),
  with bootstrap errors;
* the SNR rule of the learnability paper: ``SNR(l, N) = |m| N^(1 - 1/alpha) / sigma``
  (alpha clipped to [1, 2]); ``N(l)`` = the first N of the grid with ``SNR > eps``, and its
  continuous counterpart ``N*(l) = (eps sigma / |m|)^kappa``, ``kappa = alpha / (alpha - 1)``
  (alpha clipped to [1.01, 2]), the exact crossing the grid rounds up;
* the envelope ``f(l)`` = mean |mu0 + mu1|;
* ``H_N = max{l : N(l) <= N}`` (0 when no lag qualifies) at every N of the grid: from the grid
  N(l) of every lag (the paper's), of the lags whose mean is significant (|m| > 2 bootstrap
  standard errors), and from N*(l) of those.

The SNR rule uses the full-sample mean as if it were exact. Without signal the sample mean of n
samples is ``sigma n^(1/alpha - 1) Z``, so the rule "detects" a lag with no signal at
``N_max`` with probability ``2 (1 - F_alpha(eps (n/N_max)^(1 - 1/alpha)))``
(:func:`false_detection_probability`): a lag with ``N(l) = N`` is told apart from no signal only
when ``n >> N eps^(-kappa)`` (1.3e6 samples per lag for N = 12800, eps = 0.1, alpha = 2; 1.3e7
for alpha = 1.5). The significance flag and the significant-lag windows guard against this.

The **master law** ``N(l) = C f(l)^(-kappa)`` (docs/specification.md §6) is tested by the slope b
of ``log N(l)`` on ``x(l) = -kappa(l) log f(l)`` (the theory: b = 1), on the grid N(l) (the
paper's fit) and on N*(l), each with a percentile interval from a bootstrap over sequences
(every replicate redoes the whole chain: mean, alpha, sigma, f, N, slope). The decay class of f
(:func:`levysde.theory.envelope_decay.classify_decay`) fixes how H_N should grow with N
(exponential f: logarithmically; polynomial f: as a power; logarithmic f: exponentially,
:func:`levysde.theory.learnability.window_scaling_law`); the prediction with C from the data is
set beside the measured H_N.

Sources: the learnability paper (arXiv 2512.05790, from v4: N(l) ∝ f(l)^(-kappa_alpha)) and its
code (``lorenzolivi/learnability`` at d5efbd2: ``compute_snr``, ``N_required_at_eps``,
``compute_H_N``, ``fit_master_proportionality.py``: eps = 0.1, the N grid 25 ... 12800, alpha
floored at 1.01 in kappa). The bootstrap intervals, N*(l), the significance of m(l) and the
false-detection rate are this package's additions (docs/learnability.md).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from levysde.core.jsonable import finite_or_none
from levysde.core.validate import check_array, check_int, check_real
from levysde.stats.stable_fit import ecf_points, fit_from_sums
from levysde.theory.envelope_decay import classify_decay
from levysde.theory.learnability import window_scaling_law

__all__ = ["N_GRID", "SNR_EPS", "ALPHA_FLOOR", "N_BOOT", "CONFIDENCE", "MatchedSums", "LearnabilityMeasurement",
           "snr", "required_n", "required_n_continuous", "empirical_window", "master_slope",
           "measure_learnability", "false_detection_probability"]

#: the paper's sample-size grid (lorenzolivi/learnability, README command)
N_GRID = (25, 50, 100, 150, 200, 300, 400, 600, 800, 1200, 1600, 2400, 3200, 4800, 6400, 9600, 12800)
#: the paper's detection threshold of the SNR
SNR_EPS = 0.1
#: alpha is floored at this value in kappa = alpha / (alpha - 1) (the paper's master-law fit)
ALPHA_FLOOR = 1.01
#: bootstrap replicates over sequences
N_BOOT = 400
#: two-sided level of the reported intervals
CONFIDENCE = 0.90
#: a mean is "significant" when |m| exceeds this many bootstrap standard errors
SIGNIFICANCE_Z = 2.0
#: the continuous master-law fit uses the lags whose |m| exceeds this many bootstrap standard errors
FIT_Z = 3.0
#: fewest lags for a master-law slope
MIN_FIT_LAGS = 4


@dataclass(frozen=True)
class MatchedSums:
    """Per-sequence sufficient sums of the matched statistic (the layout of
    :func:`levysde.rnn.matched.matched_sums`): ``lags`` (L,), ``count``, ``total``, ``envelope``
    (L, S), ``t`` (L, K), ``cos``, ``sin`` (L, S, K). S: sequences (the resampling unit)."""

    lags: NDArray[np.float64]
    count: NDArray[np.float64]
    total: NDArray[np.float64]
    t: NDArray[np.float64]
    cos: NDArray[np.float64]
    sin: NDArray[np.float64]
    envelope: NDArray[np.float64]

    @classmethod
    def from_dict(cls, d: dict) -> MatchedSums:
        """Validated from a dict of arrays (e.g. a saved ``.npz``). Raises ValueError naming the
        first key that is missing or of the wrong shape."""
        for k in ("lags", "count", "total", "t", "cos", "sin", "envelope"):
            if k not in d:
                raise ValueError(f"matched sums lack {k!r}")
        lags = check_array("lags", d["lags"], ndim=1, min_size=2, lo=0.0, lo_open=True, increasing=True)
        L = lags.size
        count = check_array("count", d["count"], ndim=2, shape=(L, None), lo=0.0)
        S = count.shape[1]
        t = check_array("t", d["t"], ndim=2, shape=(L, None), lo=0.0, lo_open=True)
        K = t.shape[1]
        return cls(lags=lags, count=count,
                   total=check_array("total", d["total"], shape=(L, S)),
                   t=t, cos=check_array("cos", d["cos"], shape=(L, S, K)),
                   sin=check_array("sin", d["sin"], shape=(L, S, K)),
                   envelope=check_array("envelope", d["envelope"], shape=(L, S), lo=0.0))

    @property
    def n_sequences(self) -> int:
        return int(self.count.shape[1])


#: fewest distinct values of N(l) (or N*(l)) over the fitted lags for a master-law slope
MIN_DISTINCT_N = 3

def snr(mean_abs: ArrayLike, sigma: ArrayLike, alpha: ArrayLike, N: ArrayLike) -> NDArray[np.float64]:
    """``SNR = |m| N^(1 - 1/alpha) / sigma`` with alpha clipped to [1, 2] (the paper's rule).

    Broadcasts ``mean_abs``, ``sigma``, ``alpha`` (...,) against ``N``: pass ``N[:, None]`` for a
    (n_N, L) table. 0 where sigma is not > 0.
    """
    a = np.clip(np.asarray(alpha, dtype=np.float64), 1.0, 2.0)
    s = np.asarray(sigma, dtype=np.float64)
    with np.errstate(all="ignore"):
        out = np.abs(mean_abs) * np.asarray(N, dtype=np.float64) ** (1.0 - 1.0 / a) / s
    return np.where(s > 0, out, 0.0)


def required_n(mean_abs, sigma, alpha, N_grid=N_GRID, eps: float = SNR_EPS) -> NDArray[np.float64]:
    """``N(l)`` = the first N of ``N_grid`` with ``SNR(l, N) > eps``; NaN where none is (the
    paper's ``N_required_at_eps``, -1 there). Shapes broadcast over (...,)."""
    grid = np.asarray(N_grid, dtype=np.float64)
    s = snr(np.asarray(mean_abs)[..., None], np.asarray(sigma)[..., None], np.asarray(alpha)[..., None], grid)
    hit = s > eps
    first = np.argmax(hit, axis=-1)
    return np.where(hit.any(-1), grid[first], np.nan)


def _kappa(alpha):
    a = np.clip(np.asarray(alpha, dtype=np.float64), ALPHA_FLOOR, 2.0)
    return a / (a - 1.0)


def required_n_continuous(mean_abs, sigma, alpha, eps: float = SNR_EPS) -> NDArray[np.float64]:
    """``N*(l) = (eps sigma / |m|)^kappa``, ``kappa = alpha/(alpha-1)`` with alpha in [1.01, 2]:
    where the SNR crosses eps (the grid value N(l) is the first grid point above it). inf where m = 0."""
    with np.errstate(all="ignore"):
        return (eps * np.asarray(sigma, dtype=np.float64) / np.abs(mean_abs)) ** _kappa(alpha)


def empirical_window(lags: ArrayLike, n_req: ArrayLike, N: ArrayLike) -> NDArray[np.float64]:
    """``H_N = max{l : N(l) <= N}`` for every N (0 when no lag qualifies; NaN entries of n_req
    never qualify). ``n_req`` (..., L) against ``lags`` (L,); returns (..., len(N))."""
    lag = np.asarray(lags, dtype=np.float64)
    nr = np.asarray(n_req, dtype=np.float64)
    Nv = np.atleast_1d(np.asarray(N, dtype=np.float64))
    ok = nr[..., None, :] <= Nv[:, None]                         # (..., n_N, L)
    return np.where(ok, lag, 0.0).max(-1)


def master_slope(x: ArrayLike, y: ArrayLike, w: ArrayLike | None = None) -> tuple[float, float, float]:
    """``(b, a, r2)`` of the (weighted, ``w`` >= 0) least-squares line ``y = a + b x`` over the finite
    pairs (NaN when fewer than :data:`MIN_FIT_LAGS` pairs or no spread in x)."""
    xv, yv = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    wv = np.ones_like(xv) if w is None else np.asarray(w, dtype=np.float64)
    ok = np.isfinite(xv) & np.isfinite(yv) & np.isfinite(wv) & (wv > 0)
    if ok.sum() < MIN_FIT_LAGS or np.ptp(xv[ok]) == 0:
        return math.nan, math.nan, math.nan
    xv, yv, wv = xv[ok], yv[ok], wv[ok] / wv[ok].sum()
    xb, yb = wv @ xv, wv @ yv
    b = float(wv @ ((xv - xb) * (yv - yb)) / (wv @ (xv - xb) ** 2))
    a = float(yb - b * xb)
    res = yv - (a + b * xv)
    sst = float(wv @ (yv - yb) ** 2)
    return b, a, float(1.0 - (wv @ res ** 2) / sst) if sst > 0 else math.nan


def _slopes(x, y, w=None):
    """Row-wise (weighted) least-squares slopes of y on x, (R, L) with NaN holes -> (R,)."""
    w = np.ones(x.shape[-1]) if w is None else np.asarray(w, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y) & (w > 0)
    n = ok.sum(1)
    wz = np.where(ok, w, 0.0)
    xz, yz = np.where(ok, x, 0.0), np.where(ok, y, 0.0)
    with np.errstate(all="ignore"):
        sw = wz.sum(1)
        xb, yb = (wz * xz).sum(1) / sw, (wz * yz).sum(1) / sw
        dx = np.where(ok, x - xb[:, None], 0.0)
        b = (wz * dx * np.where(ok, y - yb[:, None], 0.0)).sum(1) / (wz * dx * dx).sum(1)
    return np.where(n >= MIN_FIT_LAGS, b, np.nan)


def false_detection_probability(n_samples: ArrayLike, alpha: float, *, N_max: float = N_GRID[-1],
                                eps: float = SNR_EPS) -> NDArray[np.float64]:
    """Probability that the SNR rule detects a lag **without signal** within the grid, for n
    i.i.d. symmetric alpha-stable samples and alpha, sigma known.

    With m = 0 the sample mean is ``sigma n^(1/alpha - 1) Z``, Z standard symmetric alpha-stable
    (stability of sums), so ``SNR(N_max) > eps`` exactly when
    ``|Z| > eps (n / N_max)^(1 - 1/alpha)``: probability ``2 (1 - F_alpha(that))``, F_alpha the
    standard SaS distribution function (scipy ``levy_stable``, beta = 0). Dependent samples
    (e.g. within a sequence) make it larger: n is then an effective sample size.

    Examples
    --------
    >>> round(float(false_detection_probability(8000 * 900, 2.0)), 3)   # the paper's size, Gaussian
    0.094
    """
    from scipy.stats import levy_stable

    a = check_real("alpha", alpha, 1.0, 2.0, lo_open=True)
    n = check_array("n_samples", n_samples, lo=1.0)
    z = eps * (n / float(N_max)) ** (1.0 - 1.0 / a)
    return 2.0 * levy_stable.sf(z, a, 0.0)


@dataclass
class LearnabilityMeasurement:
    """The result of :func:`measure_learnability` (module docstring); arrays are per lag (L,)
    unless said otherwise. ``*_se``: bootstrap standard errors over sequences; intervals: the
    two-sided :data:`CONFIDENCE` percentile intervals."""

    lags: NDArray[np.float64]
    n_samples: NDArray[np.float64]
    n_sequences: int
    mean: NDArray[np.float64]
    mean_se: NDArray[np.float64]
    significant: NDArray[np.bool_]
    alpha: NDArray[np.float64]
    alpha_se: NDArray[np.float64]
    sigma: NDArray[np.float64]
    sigma_se: NDArray[np.float64]
    f: NDArray[np.float64]
    f_se: NDArray[np.float64]
    N_grid: NDArray[np.float64]
    eps: float
    snr: NDArray[np.float64]                       # (n_N, L)
    n_required: NDArray[np.float64]                # grid N(l), NaN = not detected in the grid
    n_star: NDArray[np.float64]                    # continuous N*(l)
    n_star_interval: NDArray[np.float64]           # (L, 2)
    N_eval: NDArray[np.float64]                    # (n_N,) the N at which H_N is reported
    H_N: NDArray[np.float64]                       # (n_N,) from the grid N(l)
    H_N_interval: NDArray[np.float64]              # (n_N, 2)
    H_N_significant: NDArray[np.float64]           # (n_N,) from the grid N(l) of significant lags only
    H_N_star: NDArray[np.float64]                  # (n_N,) from N*(l) of significant lags
    master: dict[str, Any] = field(default_factory=dict)
    decay: dict[str, Any] = field(default_factory=dict)
    alpha_pooled: float = math.nan
    n_boot: int = 0
    seed: int = 0

    def records(self) -> dict:
        """JSON-ready summary (non-finite numbers become None)."""
        def arr(v):
            return [finite_or_none(float(x)) for x in np.asarray(v, dtype=float).ravel()] if np.ndim(v) <= 1 else \
                [arr(r) for r in v]

        return {
            "lags": arr(self.lags), "n_samples": arr(self.n_samples), "n_sequences": self.n_sequences,
            "mean": arr(self.mean), "mean_se": arr(self.mean_se),
            "significant": [bool(b) for b in self.significant],
            "alpha": arr(self.alpha), "alpha_se": arr(self.alpha_se),
            "sigma": arr(self.sigma), "sigma_se": arr(self.sigma_se),
            "alpha_pooled": finite_or_none(self.alpha_pooled),
            "f": arr(self.f), "f_se": arr(self.f_se),
            "N_grid": arr(self.N_grid), "eps": self.eps, "snr": arr(self.snr),
            "N_required": arr(self.n_required), "N_star": arr(self.n_star),
            "N_star_interval": arr(self.n_star_interval),
            "N_eval": arr(self.N_eval), "H_N": arr(self.H_N), "H_N_interval": arr(self.H_N_interval),
            "H_N_significant": arr(self.H_N_significant), "H_N_star": arr(self.H_N_star),
            "master_law": _jsonable(self.master), "decay": _jsonable(self.decay),
            "n_boot": self.n_boot, "seed": self.seed, "confidence": CONFIDENCE,
        }


def _jsonable(d):
    if isinstance(d, dict):
        return {k: _jsonable(v) for k, v in d.items()}
    if isinstance(d, (list, tuple, np.ndarray)):
        return [_jsonable(v) for v in d]
    if isinstance(d, (bool, np.bool_)):
        return bool(d)
    if isinstance(d, (int, np.integer)):
        return int(d)
    if isinstance(d, (float, np.floating)):
        return finite_or_none(float(d))
    return d


def _chain(sums: MatchedSums, weights, pts, N_grid, eps):
    """Everything per lag for resampling weights (R, S) of the sequences: returns dict of (R, L)."""
    n = weights @ sums.count.T                                                   # (R, L)
    tot = weights @ sums.total.T
    cos = np.einsum("rs,lsk->rlk", weights, sums.cos)
    sin = np.einsum("rs,lsk->rlk", weights, sums.sin)
    alpha, sigma = fit_from_sums(n, cos, sin, sums.t[None], pts[None])
    with np.errstate(all="ignore"):
        mean = tot / n
        f = (weights @ sums.envelope.T) / weights.sum(1, keepdims=True)
    return dict(n=n, mean=mean, alpha=alpha, sigma=sigma, f=f,
                n_req=required_n(np.abs(mean), sigma, alpha, N_grid, eps),
                n_star=required_n_continuous(mean, sigma, alpha, eps))


def _pooled_xy(alpha, f, mean, sigma, use, eps):
    """x = -kappa log f and y = log N* with one kappa per row: the median alpha over ``use``."""
    with np.errstate(all="ignore"):
        a = np.nanmedian(np.where(use, alpha, np.nan), axis=-1) if use.any() else np.full(alpha.shape[0], np.nan)
        k = _kappa(a)[:, None]
        x = np.where(f > 0, -k * np.log(f), np.nan)
        y = k * np.log(eps * sigma / np.abs(mean))
    return x, y


def _x(alpha, f):
    with np.errstate(all="ignore"):
        return np.where(f > 0, -_kappa(alpha) * np.log(f), np.nan)


def measure_learnability(sums: MatchedSums | dict, *, N_grid: ArrayLike = N_GRID, eps: float = SNR_EPS,
                         n_boot: int = N_BOOT, seed: int = 0, N_eval: ArrayLike | None = None
                         ) -> LearnabilityMeasurement:
    """Measure the learnability window and test the master law (module docstring).

    Parameters
    ----------
    sums : :class:`MatchedSums` (or a dict of its arrays), S >= 8 sequences
    N_grid : increasing sample sizes > 0 of the SNR rule (default :data:`N_GRID`, the paper's)
    eps : SNR threshold > 0 (default 0.1, the paper's)
    n_boot : bootstrap replicates over sequences (>= 50)
    seed : seed of the bootstrap (numpy default_rng)
    N_eval : sample sizes at which H_N is reported (default: N_grid)

    Returns
    -------
    LearnabilityMeasurement

    Raises
    ------
    ValueError for fewer than 8 sequences, a bad grid or parameters.

    Notes
    -----
    The fit of the master law uses the lags where alpha_hat > 1.01 and f > 0, and: for the grid
    version (the paper's: x with each lag's own kappa(alpha_hat(l))), N(l) found in the grid; for
    N*(l), the mean clearly resolved (|m| > 3 bootstrap SE), with one kappa (the median alpha_hat
    of those lags) in x and in N* (the theory's single alpha_g): the lags from the first resolved
    one up to the second unresolved one after it (so that no lag is picked for its own noise),
    weighted by the inverse bootstrap variance of log N*(l). The lag set is fixed on the full
    sample; a replicate drops the lags where its own N is undefined. The interval is the percentile
    interval of the replicates' slopes; "consistent" means 1 lies inside it.
    """
    if not isinstance(sums, MatchedSums):
        sums = MatchedSums.from_dict(sums)
    S = sums.n_sequences
    if S < 8:
        raise ValueError(f"sums: {S} sequences; at least 8 are needed to resample sequences")
    grid = check_array("N_grid", N_grid, ndim=1, min_size=1, lo=0.0, lo_open=True, increasing=True)
    eps = check_real("eps", eps, 0.0, lo_open=True)
    n_boot = check_int("n_boot", n_boot, 50)
    seed = check_int("seed", seed, 0)
    N_ev = grid if N_eval is None else check_array("N_eval", N_eval, ndim=1, min_size=1, lo=0.0, lo_open=True)
    pts = ecf_points(sums.count.sum(1), sums.cos.sum(1), sums.sin.sum(1), sums.t)       # (L, K)
    full = {k: v[0] for k, v in _chain(sums, np.ones((1, S)), pts, grid, eps).items()}
    rng = np.random.default_rng(seed)
    W = rng.multinomial(S, np.full(S, 1.0 / S), size=n_boot).astype(np.float64)
    boot = _chain(sums, W, pts, grid, eps)
    lo_q, hi_q = (1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2

    def se(k):
        return np.nanstd(boot[k], axis=0, ddof=1)

    def pct(a, axis=0):
        with np.errstate(all="ignore"):
            return np.stack([np.nanquantile(a, lo_q, axis=axis), np.nanquantile(a, hi_q, axis=axis)], -1)

    mean_se = se("mean")
    significant = np.abs(full["mean"]) > SIGNIFICANCE_Z * mean_se
    H = empirical_window(sums.lags, full["n_req"], N_ev)
    H_boot = empirical_window(sums.lags, boot["n_req"], N_ev)
    H_star = empirical_window(sums.lags, np.where(significant, full["n_star"], np.nan), N_ev)
    H_sig = empirical_window(sums.lags, np.where(significant, full["n_req"], np.nan), N_ev)
    ok_a = (full["alpha"] > ALPHA_FLOOR) & (full["f"] > 0)
    master = {}
    use_g = ok_a & np.isfinite(full["n_req"])
    resolved = ok_a & (np.abs(full["mean"]) > FIT_Z * mean_se) & np.isfinite(full["n_star"])
    # from the first resolved lag up to the second unresolved one after it: a lag is not chosen
    # for its own noise
    after = np.cumsum(resolved) > 0
    use_c = resolved & after & (np.cumsum(~resolved & after) < 2)
    # grid (the paper's): per-lag kappa(alpha_hat(l)) in x, the grid N(l) in y
    xg, yg = _x(full["alpha"], full["f"]), np.log(full["n_req"])
    with np.errstate(all="ignore"):
        xgb, ygb = _x(boot["alpha"], boot["f"]), np.log(boot["n_req"])
    # continuous: one kappa (the median alpha_hat over the fitted lags) in x and in N*(l)
    xc, yc = _pooled_xy(full["alpha"][None], full["f"][None], full["mean"][None], full["sigma"][None], use_c, eps)
    xcb, ycb = _pooled_xy(boot["alpha"], boot["f"], boot["mean"], boot["sigma"], use_c, eps)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)             # lags without finite replicates
        w_c = 1.0 / np.nanvar(np.where(np.isfinite(ycb), ycb, np.nan), axis=0, ddof=1)
    for name, use, x, y, xb, yb, nv, wt in (("grid", use_g, xg, yg, xgb, ygb, full["n_req"], None),
                                            ("continuous", use_c, xc[0], yc[0], xcb, ycb, full["n_star"], w_c)):
        b, a, r2 = master_slope(np.where(use, x, np.nan), np.where(use, y, np.nan), wt)
        bs = _slopes(np.where(use, xb, np.nan), np.where(use, yb, np.nan), wt)
        fin = bs[np.isfinite(bs)]
        ci = (float(np.quantile(fin, lo_q)), float(np.quantile(fin, hi_q))) if fin.size >= 20 else (math.nan,) * 2
        master[name] = {"slope": b, "intercept": a, "r2": r2, "n_lags": int(use.sum()),
                        "lags": sums.lags[use].tolist(), "x": x[use].tolist(), "log_N": y[use].tolist(),
                        "slope_se": float(np.std(fin, ddof=1)) if fin.size > 1 else math.nan,
                        "slope_interval": list(ci),
                        "consistent_with_1": bool(ci[0] <= 1.0 <= ci[1]) if np.all(np.isfinite(ci)) else None,
                        "n_unique_N": int(np.unique(nv[use]).size), "withheld": None}
        if master[name]["n_unique_N"] < MIN_DISTINCT_N:   # a slope through (nearly) equal N(l) says nothing
            master[name].update(slope=math.nan, intercept=math.nan, r2=math.nan, slope_se=math.nan,
                                slope_interval=[math.nan, math.nan], consistent_with_1=None,
                                withheld=f"fewer than {MIN_DISTINCT_N} distinct N(l) among the fitted lags "
                                         f"({master[name]['n_unique_N']}): the slope is not identified")
    alpha_pooled = float(np.nanmedian(np.where(significant, full["alpha"], np.nan))) \
        if significant.any() else float(np.nanmedian(full["alpha"]))
    decay = _decay(sums.lags, full["f"], full["n_star"], full["alpha"], master["continuous"]["lags"],
                   alpha_pooled, N_ev, H_star)
    # how much of f's decay the noise scale carries: 1 = sigma ∝ f, so |m|/sigma need not decay with f
    pos = (full["f"] > 0) & (full["sigma"] > 0)
    with np.errstate(all="ignore"):
        decay["sigma_on_f_loglog_slope"] = master_slope(np.log(full["f"][pos]), np.log(full["sigma"][pos]))[0]
    return LearnabilityMeasurement(
        lags=sums.lags, n_samples=full["n"], n_sequences=S, mean=full["mean"], mean_se=mean_se,
        significant=significant, alpha=full["alpha"], alpha_se=se("alpha"), sigma=full["sigma"],
        sigma_se=se("sigma"), f=full["f"], f_se=se("f"), N_grid=grid, eps=eps,
        snr=snr(np.abs(full["mean"]), full["sigma"], full["alpha"], grid[:, None]),
        n_required=full["n_req"], n_star=full["n_star"], n_star_interval=pct(boot["n_star"]),
        N_eval=np.asarray(N_ev, dtype=np.float64), H_N=H, H_N_interval=pct(H_boot),
        H_N_significant=H_sig, H_N_star=H_star, master=master, decay=decay,
        alpha_pooled=alpha_pooled, n_boot=n_boot, seed=seed)


_WINDOW_LAW = {"exponential": "logarithmic", "polynomial": "polynomial", "logarithmic": "exponential"}


def _decay(lags, f, n_star, alpha, fit_lags, alpha_g, N_ev, H_star) -> dict:
    """Decay class of f, the H_N scaling it implies, and the predicted H_N with C from the data."""
    ok = f > 0
    if ok.sum() < 6:
        return {"status": "unavailable", "reason": "fewer than 6 lags with f > 0"}
    fmax = float(f[ok].max())
    fn = np.where(ok, f / fmax, np.nan)
    try:
        dc = classify_decay(lags[ok], fn[ok], f_start=1.0)
    except ValueError as exc:
        return {"status": "unavailable", "reason": str(exc)}
    out: dict[str, Any] = {"status": "ok", "f_class": dc.name, "H_N_growth": _WINDOW_LAW[dc.name],
                           "fit": dc.records(), "f_normalised_by": fmax}
    a_g = float(np.clip(alpha_g, ALPHA_FLOOR, 2.0)) if np.isfinite(alpha_g) else math.nan
    sel = np.isin(lags, fit_lags) & ok & np.isfinite(n_star)
    if not np.isfinite(a_g) or sel.sum() < 2:
        out["prediction"] = {"status": "unavailable", "reason": "too few lags with a measured N*(l)"}
        return out
    k = a_g / (a_g - 1.0)
    # N = C fn^-kappa: log C from the lags of the fit, slope fixed at 1 (the theory's)
    logC = float(np.median(np.log(n_star[sel]) + k * np.log(fn[sel])))
    cand = dc.candidates[dc.name]
    par = cand["param"]
    win = (lags >= dc.lag_lo) & (lags <= dc.lag_hi) & ok
    lw, yw = lags[win], np.log(fn[win])
    term = {"exponential": -lw / par, "polynomial": -par * np.log(lw),
            "logarithmic": -par * np.log(np.log(lw)) if np.all(lw > 1) else np.full(lw.shape, np.nan)}[dc.name]
    c = float(np.mean(yw - term))                    # intercept with the class's parameter fixed
    C_law = math.exp(logC - k * c)
    kw = {"exponential": {"tau": par}, "polynomial": {"beta": par}, "logarithmic": {"gamma": par}}[dc.name]
    pred = []
    for N in np.asarray(N_ev, dtype=float):
        try:
            pred.append(float(window_scaling_law(dc.name, N, C=C_law, alpha_g=a_g, **kw)) if N >= C_law else 0.0)
        except (ValueError, OverflowError):
            pred.append(math.nan)
    out["prediction"] = {"status": "ok", "alpha_g": a_g, "kappa_alpha": k, "log_C": logC,
                         "C_scaling_law": C_law, "class_parameter": {cand["param_name"]: par, "intercept": c},
                         "N": np.asarray(N_ev, dtype=float).tolist(), "H_N_predicted": pred,
                         "H_N_measured_continuous": np.asarray(H_star, dtype=float).tolist(),
                         "note": "H_N predicted from the decay class of f with C from the data (slope fixed "
                                 "at 1); compare with H_N from N*(l). Lags outside the measured range are "
                                 "extrapolation."}
    return out
