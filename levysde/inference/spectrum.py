"""Descriptors of a recorded time-scale spectrum: its spread (:func:`spread`) and the longest
envelope lag it supports (:func:`resolved_lag_max`, docs/specification.md §5).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from levysde.core.jsonable import to_jsonable
from levysde.core.validate import check_int

__all__ = ['Spread', 'spread', 'resolved_lag_max']


@dataclass(frozen=True)
class Spread:
    """Spread of a time-scale spectrum (:func:`spread`).

    std : sample standard deviation of zeta (ddof 1); iqr : its interquartile range;
    decades : decades of tau = exp(-zeta) between the 1 % and 99 % quantiles of zeta,
    ``(q99 - q01)/ln 10``; n : finite values used. The three spreads are NaN when n < 2.
    """

    std: float
    iqr: float
    decades: float
    n: int

    def as_json(self) -> dict:
        """``{std, iqr, decades, n}`` with None for NaN (``zeta_spread`` of ``levysde check --json``)."""
        return to_jsonable({"std": self.std, "iqr": self.iqr, "decades": self.decades, "n": self.n})


def spread(zeta) -> Spread:
    """Spread of a time-scale spectrum: std and IQR of zeta, and the decades of tau
    = exp(-zeta) between the 1% and 99% quantiles. NaNs are ignored.

    Parameters
    ----------
    zeta : array of any shape (e.g. the last record, (1, H)); NaN and inf are ignored

    Returns
    -------
    :class:`Spread` (std, iqr, decades NaN with fewer than 2 finite values).

    Example
    -------
    >>> spread([0.0, 1.0, 2.0]).std
    1.0
    """
    z = np.asarray(zeta, dtype=float)
    z = z[np.isfinite(z)]
    if z.size < 2:
        return Spread(float("nan"), float("nan"), float("nan"), int(z.size))
    q = np.quantile(z, [0.01, 0.25, 0.75, 0.99])
    return Spread(float(z.std(ddof=1)), float(q[2] - q[1]), float((q[3] - q[0]) / math.log(10)), int(z.size))


def resolved_lag_max(zeta, *, min_neurons: int = 10) -> float:
    """Largest envelope lag that a recorded time-scale spectrum supports (docs/specification.md §5).

    Rule: ``l_max = tau_(k) = exp(-zeta_(k))``, the k-th longest time scale of the
    spectrum, ``k = min(min_neurons, number of finite zeta)``. Beyond it the envelope
    ``f(l) = mean_q exp(-l e^zeta_q)`` is carried by fewer than k neurons: a sum of a
    few exponentials whose log-log slope steepens without bound, so any decay-class or
    slope fit there reads "exponential" by construction (docs/specification.md §5: bounded time
    scales give f ~ exp(-l/tau_max)). ``zeta``: any shape (NaN ignored), e.g. the last
    record (H,). Raises ValueError when no zeta is finite, min_neurons < 1, or that time scale
    exceeds the largest double (zeta < -709.78) or is below the smallest normal one (zeta > 708.40).
    """
    z = np.asarray(zeta, dtype=float).ravel()
    z = np.sort(z[np.isfinite(z)])
    if z.size == 0:
        raise ValueError("zeta has no finite value: no time scale to bound the lags")
    k = min(check_int("min_neurons", min_neurons, 1), z.size)
    if -z[k - 1] > _LOG_DOUBLE_MAX:
        raise ValueError(f"the time scale exp(-zeta) of the {_ordinal(k)} slowest neuron, exp({-z[k - 1]:.4g}), "
                         f"exceeds "
                         f"the largest double: no envelope lag range (zeta must be >= -709.78)")
    if -z[k - 1] < _LOG_DOUBLE_MIN:
        raise ValueError(f"the time scale exp(-zeta) of the {_ordinal(k)} slowest neuron, exp({-z[k - 1]:.4g}), "
                         f"is below "
                         f"the smallest normal double: no envelope lag range (zeta must be <= 708.4; "
                         f"a corrupt or hand-edited run?)")
    return float(math.exp(-z[k - 1]))


def _ordinal(k: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st, ..."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


#: log of the largest double: tau = exp(-zeta) overflows for zeta < -709.78
_LOG_DOUBLE_MAX = math.log(np.finfo(float).max)
#: log of the smallest normal double: tau = exp(-zeta) underflows for zeta > 708.40
_LOG_DOUBLE_MIN = math.log(np.finfo(float).tiny)
