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
    r"""Spread of a time-scale spectrum, the result of :func:`spread`.

    Attributes
    ----------
    std : float
        Sample standard deviation of zeta (``ddof=1``); NaN when ``n < 2``.
    iqr : float
        Interquartile range of zeta, :math:`q_{0.75} - q_{0.25}`; NaN when ``n < 2``.
    decades : float
        Decades of :math:`\tau = e^{-\zeta}` between the 1 % and 99 % quantiles of zeta,
        :math:`(q_{0.99} - q_{0.01})/\ln 10`; NaN when ``n < 2``.
    n : int
        Number of finite zeta values used.

    Examples
    --------
    >>> s = Spread(std=1.0, iqr=1.0, decades=0.85, n=3)
    >>> s.as_json()
    {'std': 1.0, 'iqr': 1.0, 'decades': 0.85, 'n': 3}
    >>> Spread(float("nan"), float("nan"), float("nan"), 1).as_json()["std"] is None
    True
    """

    std: float
    iqr: float
    decades: float
    n: int

    def as_json(self) -> dict:
        """``{std, iqr, decades, n}`` with None for NaN (``zeta_spread`` of ``levysde check --json``)."""
        return to_jsonable({"std": self.std, "iqr": self.iqr, "decades": self.decades, "n": self.n})


def spread(zeta) -> Spread:
    r"""Spread of a time-scale spectrum: std and IQR of zeta, and the decades of tau it spans.

    The decades are those of :math:`\tau = e^{-\zeta}` between the 1 % and 99 % quantiles of
    zeta. NaN and infinite values are ignored.

    Parameters
    ----------
    zeta : array_like, any shape
        Log decay rates (e.g. the last record, shape (1, H) or (H,)); NaN and :math:`\pm\infty`
        are ignored.

    Returns
    -------
    Spread
        ``std`` (sample standard deviation, ``ddof=1``), ``iqr``, ``decades`` and ``n``
        (finite values used); the three spreads are NaN with fewer than 2 finite values.

    Notes
    -----
    With :math:`q_p` the empirical :math:`p`-quantile of the finite zeta (``numpy.quantile``,
    linear interpolation),

    .. math::

        \mathrm{iqr} = q_{0.75} - q_{0.25}, \qquad
        \mathrm{decades} = \frac{q_{0.99} - q_{0.01}}{\ln 10},

    the second being :math:`\log_{10}` of the ratio of the 99th to the 1st percentile of
    :math:`\tau` (the map :math:`\zeta \mapsto \tau` is monotone).

    References
    ----------
    * The specification, §1: :math:`\tau_q = e^{-\zeta_q}`.

    Examples
    --------
    >>> spread([0.0, 1.0, 2.0]).std
    1.0
    >>> s = spread(np.random.default_rng(0).normal(size=10_000))
    >>> round(s.iqr, 2), round(s.decades, 2), s.n
    (1.36, 2.03, 10000)
    >>> spread([1.0, np.nan]).n
    1
    """
    z = np.asarray(zeta, dtype=float)
    z = z[np.isfinite(z)]
    if z.size < 2:
        return Spread(float("nan"), float("nan"), float("nan"), int(z.size))
    q = np.quantile(z, [0.01, 0.25, 0.75, 0.99])
    return Spread(float(z.std(ddof=1)), float(q[2] - q[1]), float((q[3] - q[0]) / math.log(10)), int(z.size))


def resolved_lag_max(zeta, *, min_neurons: int = 10) -> float:
    r"""Largest envelope lag that a recorded time-scale spectrum supports.

    Beyond it the envelope is carried by fewer than ``min_neurons`` neurons, so a decay-class or
    slope fit there is not a property of the spectrum.

    Parameters
    ----------
    zeta : array_like, any shape
        Log decay rates (e.g. the last record, shape (H,)); NaN and :math:`\pm\infty` are ignored.
    min_neurons : int, default 10
        Number :math:`k` of neurons that must carry the envelope at its largest lag, >= 1; capped
        at the number of finite zeta.

    Returns
    -------
    float
        :math:`\ell_{\max} = \tau_{(k)} = e^{-\zeta_{(k)}}`, the k-th longest time scale
        (steps, or the model's time unit), > 0.

    Raises
    ------
    ValueError
        When no zeta is finite, ``min_neurons`` < 1, or the k-th longest time scale exceeds the
        largest double (zeta < -709.78) or is below the smallest normal one (zeta > 708.40).

    Notes
    -----
    The rule is :math:`\ell_{\max} = \tau_{(k)} = \exp(-\zeta_{(k)})` with
    :math:`\zeta_{(k)}` the k-th smallest finite zeta and
    :math:`k = \min(\texttt{min\_neurons}, \#\{\text{finite } \zeta\})`. Beyond it the
    envelope :math:`f(\ell) = \frac{1}{H}\sum_q \exp(-\ell\, e^{\zeta_q})` is a sum of fewer
    than k exponentials, whose log-log slope steepens without bound, so any decay-class or slope
    fit there reads "exponential" by construction: bounded time scales give
    :math:`f(\ell) \sim e^{-\ell/\tau_{\max}}` (the specification, §5).

    References
    ----------
    * The specification, §5: the envelope and its decay classes.

    Examples
    --------
    >>> zeta = -np.arange(20.0)                 # tau = 1, e, e^2, ..., e^19
    >>> round(resolved_lag_max(zeta), 1)        # the 10th longest: e^10
    22026.5
    >>> resolved_lag_max(zeta, min_neurons=1) == math.exp(19.0)
    True
    >>> resolved_lag_max([np.nan])
    Traceback (most recent call last):
    ...
    ValueError: zeta has no finite value: no time scale to bound the lags
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
