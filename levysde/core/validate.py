"""The argument checks of the package: one vocabulary for scalars, integers, choices and arrays.

Every public function checks its arguments with these and raises a one-line ValueError that
names the parameter and its allowed range.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["check_samples"]


def check_samples(zeta: ArrayLike, weights: ArrayLike | None = None
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """Flattened finite samples and optional weights.

    Parameters
    ----------
    zeta : array_like
        Samples, any shape (flattened); at least one, all finite.
    weights : array_like, optional
        One weight >= 0 per sample, finite, with a positive sum.

    Returns
    -------
    z : ndarray, shape (n,)
    w : ndarray, shape (n,), or None

    Raises
    ------
    ValueError
        Naming ``zeta`` or ``weights`` and what is wrong.
    """
    z = np.asarray(zeta, dtype=float).ravel()
    if z.size == 0:
        raise ValueError("zeta must contain at least one sample")
    if not np.all(np.isfinite(z)):
        raise ValueError("zeta must be finite (no NaN/inf samples)")
    if weights is None:
        return z, None
    w = np.asarray(weights, dtype=float).ravel()
    if w.shape != z.shape:
        raise ValueError(f"weights must have the shape of zeta ({z.size},); got {np.shape(weights)}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("weights must be finite and >= 0")
    if not w.sum() > 0:
        raise ValueError("weights must have a positive sum")
    return z, w
