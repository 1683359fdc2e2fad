"""The delete-a-group jackknife: group labels, standard error and bias (Efron & Tibshirani 1993,
§10.5, §10.6, §11.2).

Every error bar of levysde's estimators of trajectories and spectra comes from here; the groups
are whole neurons (or particles), since a neuron's increments are correlated in time
(docs/specification.md §8).
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from levysde.core.validate import check_int

__all__ = ['neuron_groups', 'jackknife_se', 'jackknife_bias', 'JACKKNIFE_BIAS_LIMIT']


def neuron_groups(n_neurons: int, n_groups: int = 16) -> np.ndarray:
    """Labels (n_neurons,) of the neuron groups resampled by the jackknife: neuron q -> q mod G,
    G = min(n_groups, n_neurons). Raises ValueError for n_neurons < 1 or n_groups < 2.

    Examples
    --------
    >>> print(neuron_groups(10, 4))
    [0 1 2 3 0 1 2 3 0 1]
    """
    n_neurons, n_groups = check_int("n_neurons", n_neurons, 1), check_int("n_groups", n_groups, 2)
    return np.arange(n_neurons) % min(n_groups, n_neurons)


def jackknife_se(values_loo: ArrayLike) -> float:
    """Delete-a-group jackknife standard error ``sqrt((G-1)/G sum_g (t_(-g) - mean)^2)`` from the
    G leave-one-group-out values (Efron & Tibshirani 1993, §11.2; groups of whole neurons,
    docs/specification.md §8). NaN when G < 2 or any replicate is not finite (never a silent partial SE).

    Examples
    --------
    >>> x = np.arange(10.0)
    >>> loo = np.array([np.delete(x, i).mean() for i in range(10)])
    >>> print(round(jackknife_se(loo), 12), round(x.std(ddof=1) / np.sqrt(10), 12))   # the mean: s / sqrt(n)
    0.957427107756 0.957427107756
    """
    v = np.asarray(values_loo, dtype=float)
    if v.size < 2 or not np.all(np.isfinite(v)):
        return float("nan")
    return float(math.sqrt((v.size - 1) / v.size * np.sum((v - v.mean()) ** 2)))


#: a jackknife bias estimate below this share of the standard error can be ignored (Efron &
#: Tibshirani 1993, §10.6); beyond it the estimator's small-sample bias is material
JACKKNIFE_BIAS_LIMIT = 0.25


def jackknife_bias(values_loo: ArrayLike, value: float) -> float:
    """Delete-a-group jackknife estimate of bias ``(G - 1) (mean_g t_(-g) - t)`` of the estimate
    ``value`` from its G leave-one-group-out values (Efron & Tibshirani 1993, §10.5; groups of
    whole neurons, docs/specification.md §8). NaN when G < 2 or any replicate is not finite.

    Examples
    --------
    >>> x = np.arange(10.0)
    >>> loo = np.array([np.delete(x, i).var() for i in range(10)])
    >>> print(round(jackknife_bias(loo, x.var()), 12), round(-x.var(ddof=1) / 10, 12))  # plug-in variance
    -0.916666666667 -0.916666666667
    """
    v = np.asarray(values_loo, dtype=float)
    if v.size < 2 or not np.all(np.isfinite(v)) or not math.isfinite(value):
        return float("nan")
    return float((v.size - 1) * (v.mean() - value))
