"""Numbers for JSON: JSON has no NaN or infinity, so every report writes a non-finite number as
null (``None``). :func:`finite_or_none` converts one number, :func:`to_jsonable` a nested container.

In the core layer (not ``io``) because :meth:`levysde.core.status.Estimate.as_json` needs it and
core imports nothing from the layers after it (docs/layers.py).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ['finite_or_none', 'to_jsonable']


def finite_or_none(x: Any) -> float | None:
    """``float(x)``, or None when ``x`` is None, NaN or infinite (JSON has no such numbers).

    Parameters
    ----------
    x : None or real scalar
        A Python or numpy scalar, a 0-d (or one-element) array, a bool or an int.

    Returns
    -------
    float or None
        ``float(x)`` when finite, else None. Integers come back as floats (``3 -> 3.0``);
        :func:`to_jsonable` keeps them.

    Raises
    ------
    TypeError, ValueError
        When ``x`` is not a number (``float(x)`` fails).

    See Also
    --------
    to_jsonable : the same for nested containers.

    Examples
    --------
    >>> finite_or_none(float("nan")) is None, finite_or_none(np.float32(0.5))
    (True, 0.5)
    """
    if x is None:
        return None
    v = float(x)
    return v if math.isfinite(v) else None


def to_jsonable(obj: Any) -> Any:
    """``obj`` with every non-finite float replaced by None, recursively, ready for
    ``json.dumps(..., allow_nan=False)``.

    Floats (Python or numpy) become Python floats, or None when NaN or infinite; numpy integers
    and booleans become ``int`` and ``bool`` (Python ints and bools are kept as they are);
    mappings become dicts (keys kept), lists, tuples and numpy arrays become lists; strings and
    None pass through. Anything else is returned unchanged (``json.dumps`` then decides).

    Parameters
    ----------
    obj : object
        A number, string, None, or a (nested) mapping, list, tuple or numpy array of them.

    Returns
    -------
    object
        The converted object (a new container; ``obj`` is not modified).

    Examples
    --------
    >>> to_jsonable({"a": [1, float("inf"), np.float64(2.5)], "b": (np.int64(3), None)})
    {'a': [1, None, 2.5], 'b': [3, None]}
    """
    if obj is None or isinstance(obj, (str, bool)):
        return obj
    if isinstance(obj, (float, np.floating)):
        return finite_or_none(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, int):
        return obj
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, Mapping):
        return {k: to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    return obj
