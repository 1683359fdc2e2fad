"""The lag grid of a forgetting-envelope table (``levysde envelope``): explicit lags, or a log grid."""
from __future__ import annotations

import numpy as np

from levysde.core.validate import check_array, check_int, check_real

__all__ = ["LAG_MIN", "N_LAGS", "lag_grid"]

#: defaults of the log lag grid (steps)
LAG_MIN, N_LAGS = 1.0, 200


def lag_grid(lag_max: float, *, lags=None, lag_min: float | None = None,
             n_lags: int | None = None) -> np.ndarray:
    """The lags of an envelope table: the sorted distinct explicit ``lags`` when given, else the
    log grid ``geomspace(lag_min, lag_max, n_lags)``.

    Parameters
    ----------
    lag_max : float
        Largest lag of the log grid (steps, or model time units), > ``lag_min``.
    lags : array_like, optional
        Explicit lags, finite and > 0 (any shape; sorted, duplicates dropped).
    lag_min : float, optional
        Smallest lag of the log grid, finite and > 0 (default :data:`LAG_MIN`).
    n_lags : int, optional
        Number of lags of the log grid, >= 2 (default :data:`N_LAGS`).

    Returns
    -------
    ndarray, shape (n,)
        Increasing lags > 0.

    Raises
    ------
    ValueError
        When lag_max <= lag_min, n_lags < 2, or an explicit lag is not finite and > 0.

    Examples
    --------
    >>> lag_grid(1e3, n_lags=4)
    array([   1.,   10.,  100., 1000.])
    """
    if lags is not None:
        return np.unique(check_array("lags", lags, min_size=1, lo=0.0, lo_open=True).ravel())
    lag_min = LAG_MIN if lag_min is None else check_real("lag_min", lag_min, 0.0, lo_open=True)
    n_lags = N_LAGS if n_lags is None else check_int("n_lags", n_lags, 2)
    if not lag_max > lag_min:
        raise ValueError(f"lag_max ({lag_max:g}) must exceed lag_min ({lag_min:g})")
    return np.geomspace(lag_min, lag_max, n_lags)
