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
    """Group labels of the neurons (or particles) resampled by the delete-a-group jackknife.

    Neuron ``q`` goes to group ``q mod G`` with ``G = min(n_groups, n_neurons)``, so the groups
    are near-equal in size and interleaved over the neuron index.

    Parameters
    ----------
    n_neurons : int
        Number of neurons (or independent particles), >= 1.
    n_groups : int, optional
        Requested number of groups G, >= 2 (default 16); capped at ``n_neurons``.

    Returns
    -------
    ndarray of int, shape (n_neurons,)
        The group label of each neuron, in ``[0, G)``.

    Raises
    ------
    ValueError
        Naming ``n_neurons`` when it is < 1, or ``n_groups`` when it is < 2 (or either is not an
        integer).

    Notes
    -----
    Whole neurons are the resampling unit because a neuron's increments are correlated in
    time; the jackknife over groups of them respects that dependence (the specification, §8).

    References
    ----------
    B. Efron and R. J. Tibshirani (1993), *An Introduction to the Bootstrap*, Chapman & Hall,
    §11.2. The specification, §8
    (:doc:`/specification`).

    Examples
    --------
    >>> print(neuron_groups(10, 4))
    [0 1 2 3 0 1 2 3 0 1]
    >>> print(neuron_groups(3))          # G is capped at n_neurons
    [0 1 2]
    """
    n_neurons, n_groups = check_int("n_neurons", n_neurons, 1), check_int("n_groups", n_groups, 2)
    return np.arange(n_neurons) % min(n_groups, n_neurons)


def jackknife_se(values_loo: ArrayLike) -> float:
    r"""Delete-a-group jackknife standard error from the leave-one-group-out values.

    Parameters
    ----------
    values_loo : array_like, shape (G,)
        The estimate recomputed with each of the G groups left out in turn,
        :math:`t_{(-1)}, \dots, t_{(-G)}` (any real units; the error has the same units).

    Returns
    -------
    float
        The standard error; NaN when G < 2 or any replicate is not finite (never a silent
        partial error).

    Notes
    -----
    .. math::

        \widehat{\mathrm{se}} = \Big(\frac{G-1}{G} \sum_{g=1}^{G}
            \big(t_{(-g)} - \bar t_{(\cdot)}\big)^2\Big)^{1/2},
        \qquad \bar t_{(\cdot)} = \frac1G \sum_g t_{(-g)},

    with groups of whole neurons (the specification, §8). For the mean of n single values it is
    the familiar :math:`s/\sqrt{n}` (the example).

    References
    ----------
    B. Efron and R. J. Tibshirani (1993), *An Introduction to the Bootstrap*, Chapman & Hall,
    §11.2. The specification, §8 (:doc:`/specification`).

    Examples
    --------
    >>> x = np.arange(10.0)
    >>> loo = np.array([np.delete(x, i).mean() for i in range(10)])
    >>> print(round(jackknife_se(loo), 12), round(x.std(ddof=1) / np.sqrt(10), 12))   # the mean: s / sqrt(n)
    0.957427107756 0.957427107756
    >>> print(jackknife_se([1.0]))
    nan
    """
    v = np.asarray(values_loo, dtype=float)
    if v.size < 2 or not np.all(np.isfinite(v)):
        return float("nan")
    return float(math.sqrt((v.size - 1) / v.size * np.sum((v - v.mean()) ** 2)))


#: a jackknife bias estimate below this share of the standard error can be ignored (Efron &
#: Tibshirani 1993, §10.6); beyond it the estimator's small-sample bias is material
JACKKNIFE_BIAS_LIMIT = 0.25


def jackknife_bias(values_loo: ArrayLike, value: float) -> float:
    r"""Delete-a-group jackknife estimate of the bias of an estimate.

    Parameters
    ----------
    values_loo : array_like, shape (G,)
        The estimate recomputed with each of the G groups left out, :math:`t_{(-g)}`.
    value : float
        The estimate :math:`t` on the full sample (same units).

    Returns
    -------
    float
        The estimated bias (subtract it to bias-correct ``value``); NaN when G < 2 or any
        replicate or ``value`` is not finite. Compare it with the standard error: below
        :data:`JACKKNIFE_BIAS_LIMIT` times :func:`jackknife_se` it can be ignored.

    Notes
    -----
    .. math::

        \widehat{\mathrm{bias}} = (G - 1)\,\big(\bar t_{(\cdot)} - t\big),
        \qquad \bar t_{(\cdot)} = \frac1G \sum_g t_{(-g)},

    with groups of whole neurons (the specification, §8). For the plug-in variance it is exactly
    :math:`-s^2/n` (the example).

    References
    ----------
    B. Efron and R. J. Tibshirani (1993), *An Introduction to the Bootstrap*, Chapman & Hall,
    §10.5 and §10.6. The specification, §8 (:doc:`/specification`).

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
