"""The argument checks of the package: one vocabulary for scalars, integers, choices and arrays.

Every public function checks its arguments with these and raises a one-line ValueError that
names the parameter and its allowed range, in one wording: intervals as ``(0, 2)`` or
``[0, inf)`` (the model parameters' ranges of docs/specification.md §2-§4 are written so,
:func:`levysde.theory.params.describe_range`), integers as ``an integer >= 1`` or
``an integer in [2, 10]``.

* :func:`check_real`: one real number, finite, in an interval (open or closed ends);
* :func:`check_int`: one integer in a range (no bools, no non-integral floats; exact for
  large integers);
* :func:`check_choice`: one of a set of values; :func:`check_bool`: True or False;
* :func:`check_array`: an array of real numbers with constraints on its ndim, shape, size,
  finiteness, range and order;
* :func:`check_samples`: flattened finite samples with optional weights;
* :func:`describe_interval`, :func:`describe_integers`, :func:`in_interval`: the wording and the
  test of a range, for checks that phrase their own errors (the CLI's argparse types).
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["check_real", "check_int", "check_choice", "check_bool", "check_array", "check_samples",
           "describe_interval", "describe_integers", "in_interval"]


def _num(x) -> str:
    """A bound as text: integers exactly, floats as ``%g``."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return str(int(x))
    return f"{x:g}"


def describe_interval(lo: float | None = None, hi: float | None = None, *, lo_open: bool = False,
                      hi_open: bool = False) -> str:
    """The interval of real numbers from ``lo`` to ``hi`` in words: ``'(0, 2)'``, ``'[0, inf)'``.

    Parameters
    ----------
    lo, hi : float or None
        Ends; None is unbounded (always an open end, ``-inf`` or ``inf``).
    lo_open, hi_open : bool
        Whether the end is excluded.

    Returns
    -------
    str
        ``'(lo, hi)'`` with ``[``/``]`` for included ends; integers written exactly, other
        numbers as ``%g``.

    Examples
    --------
    >>> describe_interval(0.0, 2.0, lo_open=True, hi_open=True), describe_interval(0.0)
    ('(0, 2)', '[0, inf)')
    """
    left = "(-inf" if lo is None else ("(" if lo_open else "[") + _num(lo)
    right = "inf)" if hi is None else _num(hi) + (")" if hi_open else "]")
    return f"{left}, {right}"


def describe_integers(lo: int | None = None, hi: int | None = None) -> str:
    """The integers from ``lo`` to ``hi`` (None: unbounded) in words.

    Parameters
    ----------
    lo, hi : int or None
        Inclusive bounds; None is unbounded on that side.

    Returns
    -------
    str
        ``'an integer'``, ``'an integer >= lo'``, ``'an integer <= hi'`` or
        ``'an integer in [lo, hi]'``, as :func:`check_int`'s errors word it.

    Examples
    --------
    >>> describe_integers(1), describe_integers(2, 10), describe_integers()
    ('an integer >= 1', 'an integer in [2, 10]', 'an integer')
    """
    if lo is None and hi is None:
        return "an integer"
    if hi is None:
        return f"an integer >= {lo}"
    if lo is None:
        return f"an integer <= {hi}"
    return f"an integer in [{lo}, {hi}]"


def in_interval(x: ArrayLike, lo: float | None = None, hi: float | None = None, *, lo_open: bool = False,
                hi_open: bool = False) -> np.ndarray:
    """Elementwise whether ``x`` lies in the interval of :func:`describe_interval`.

    NaN lies in no interval; +-inf lies in an interval unbounded on its side (finiteness is a
    separate rule).

    Parameters
    ----------
    x : array_like of real numbers
        Any shape.
    lo, hi : float or None
        Ends of the interval (None: unbounded).
    lo_open, hi_open : bool
        Whether the end is excluded (default: included).

    Returns
    -------
    numpy.bool_ or ndarray of bool
        A 0-d result for scalar ``x``, else an array of ``x``'s shape.

    Examples
    --------
    >>> bool(in_interval(0.0, 0.0, lo_open=True)), bool(in_interval(2.0, 0.0, 2.0))
    (False, True)
    >>> in_interval([-1.0, 0.5, np.nan, np.inf], 0.0)
    array([False,  True, False,  True])
    """
    x = np.asarray(x, dtype=float)
    ok = ~np.isnan(x)
    if lo is not None:
        ok &= (x > lo) if lo_open else (x >= lo)
    if hi is not None:
        ok &= (x < hi) if hi_open else (x <= hi)
    return ok


def _show(value) -> str:
    """``value`` in one short line for an error: arrays by shape and dtype, long reprs cut."""
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return f"array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** 30:
        return f"an integer of {len(str(abs(value)))} digits"
    text = repr(value)
    return text if len(text) <= 80 and "\n" not in text else text.replace("\n", " ")[:77] + "..."


def _beyond_float(value: numbers.Integral) -> bool:
    """Whether an integer lies beyond the float range (it would overflow to +-inf)."""
    try:
        float(value)
    except OverflowError:
        return True
    return False


def _suffix(why: str) -> str:
    return f" ({why})" if why else ""


def _is_bool(value) -> bool:
    return isinstance(value, (bool, np.bool_))


def _one_real(name: str, value, rng: str) -> float:
    """``value`` as a float: a real number (not a bool) or an array of one; ValueError otherwise."""
    if isinstance(value, numbers.Real) and not _is_bool(value):
        try:
            return float(value)
        except OverflowError:                 # an int beyond the float range
            return math.inf if value > 0 else -math.inf  # type: ignore[operator]  # an int here
    arr = None
    if value is not None and not isinstance(value, (str, bytes)):
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError):       # ragged sequences
            arr = None
    if arr is None or arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a real number{rng}; got {_show(value)}")
    if arr.size != 1:
        raise ValueError(f"{name} must be a single real number{rng}; got an array of shape {arr.shape}")
    return float(arr.reshape(()))


def check_real(name: str, value: Any, lo: float | None = None, hi: float | None = None, *, lo_open: bool = False,
               hi_open: bool = False, why: str = "") -> float:
    """One finite real number in an interval, as a float.

    Parameters
    ----------
    name : str
        The parameter, as the caller's signature spells it (named in the error).
    value : real number, or an array holding one
        Not a bool, string or complex number.
    lo, hi : float or None
        Ends of the allowed interval (None: unbounded).
    lo_open, hi_open : bool
        Whether the end is excluded (default: included).
    why : str
        Reason for the range, appended to the error in parentheses.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        One line naming ``name`` and the allowed interval when ``value`` is no real number,
        holds several, is NaN or +-inf, or lies outside the interval.

    Examples
    --------
    >>> check_real("dt", 0.01, 0.0, lo_open=True)
    0.01
    >>> check_real("dt", 0.0, 0.0, lo_open=True)
    Traceback (most recent call last):
    ...
    ValueError: dt must be finite and in (0, inf); got 0.0
    """
    bounded = lo is not None or hi is not None
    rng = describe_interval(lo, hi, lo_open=lo_open, hi_open=hi_open)
    v = _one_real(name, value, (f" in {rng}" if bounded else "") + _suffix(why))
    if not (math.isfinite(v) and in_interval(v, lo, hi, lo_open=lo_open, hi_open=hi_open)):
        need = f"finite and in {rng}" if bounded else "a finite real number"
        shown = value if type(value) is int else v     # numpy scalars as floats
        raise ValueError(f"{name} must be {need}{_suffix(why)}; got {_show(shown)}")
    return v


def check_int(name: str, value: Any, lo: int | None = None, hi: int | None = None, *, why: str = "") -> int:
    """One integer in ``[lo, hi]``, as a Python int (exact however large).

    Integers (Python or numpy, or a 0-d integer array) and integral floats (``3.0``) pass;
    bools, non-integral or non-finite floats, strings, None and arrays of more dimensions do
    not. The range test is exact (``2**60 + 1`` stays ``2**60 + 1``).

    Parameters
    ----------
    name : str
        The parameter (named in the error).
    value : int-like
        An integer (Python, numpy, 0-d array) or an integral float.
    lo, hi : int or None
        Inclusive bounds (None: unbounded).
    why : str
        Reason for the range, appended to the error in parentheses.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        One line naming ``name`` and the allowed integers, e.g.
        ``particles must be an integer >= 1; got 2.5``.

    Examples
    --------
    >>> check_int("particles", 16384.0, 1)
    16384
    >>> check_int("particles", 2.5, 1)
    Traceback (most recent call last):
    ...
    ValueError: particles must be an integer >= 1; got 2.5
    """
    v = None
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if _is_bool(value):
        v = None
    elif isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, numbers.Real):
        f = float(value)
        v = int(f) if math.isfinite(f) and f.is_integer() else None
    if v is None or (lo is not None and v < lo) or (hi is not None and v > hi):
        shown = value.item() if isinstance(value, np.generic) else value
        raise ValueError(f"{name} must be {describe_integers(lo, hi)}{_suffix(why)}; got {_show(shown)}")
    return v


def _same_choice(value, choice) -> bool:
    """``value == choice`` for values of one kind: strings, numbers (a bool only as a bool), None."""
    if value is choice:
        return True
    if _is_bool(value) or _is_bool(choice):
        return _is_bool(value) and _is_bool(choice) and bool(value) == bool(choice)
    for kind in (str, numbers.Number):
        if isinstance(choice, kind):
            return isinstance(value, kind) and bool(value == choice)
    return False


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> Any:
    """``value`` when it is one of ``choices`` (strings, None, numbers; a bool matches only a bool).

    Parameters
    ----------
    name : str
        The parameter (named in the error).
    value : object
        The value to look up.
    choices : sequence
        The allowed values, in the order the error lists them.

    Returns
    -------
    object
        The matching element of ``choices`` (a numpy string becomes the plain one).

    Raises
    ------
    ValueError
        ``name must be one of 'cpu', 'cuda'; got 'gpu'``.

    Examples
    --------
    >>> check_choice("backend", "cpu", ("cpu", "cuda"))
    'cpu'
    >>> check_choice("backend", "gpu", ("cpu", "cuda"))
    Traceback (most recent call last):
    ...
    ValueError: backend must be one of 'cpu', 'cuda'; got 'gpu'
    """
    for c in choices:
        if _same_choice(value, c):
            return c
    raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {_show(value)}")


def check_bool(name: str, value: Any) -> bool:
    """``value`` as a bool when it is True or False (Python or numpy), ValueError naming ``name``
    otherwise (``1`` and ``"yes"`` are not bools).

    Parameters
    ----------
    name : str
        The parameter (named in the error).
    value : bool or numpy.bool_
        The value to check.

    Returns
    -------
    bool
        ``value`` as a Python bool.

    Raises
    ------
    ValueError
        ``name must be True or False; got 1`` for anything else.

    Examples
    --------
    >>> check_bool("fast", False)
    False
    >>> check_bool("fast", 1)
    Traceback (most recent call last):
    ...
    ValueError: fast must be True or False; got 1
    """
    if not _is_bool(value):
        raise ValueError(f"{name} must be True or False; got {_show(value)}")
    return bool(value)


def _shape_text(shape) -> str:
    parts = ["n" if s is None else str(s) for s in shape]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def check_array(name: str, value: Any, *, ndim: int | tuple[int, ...] | None = None,
                shape: tuple[int | None, ...] | None = None, min_size: int = 0, lo: float | None = None,
                hi: float | None = None, lo_open: bool = False, hi_open: bool = False, allow_inf: bool = False,
                allow_nan: bool = False, increasing: bool = False, why: str = "") -> np.ndarray:
    """An array of real numbers (integer or float entries; bools are no numbers), as float64, checked.

    Parameters
    ----------
    name : str
        The parameter (named in the error).
    value : array_like
        Complex entries (which would lose their imaginary part), text and objects are refused.
    ndim : int or tuple of int, optional
        Allowed numbers of dimensions.
    shape : tuple, optional
        Required shape; an entry None (or a str label) matches any length.
    min_size : int
        Fewest entries (default 0).
    lo, hi, lo_open, hi_open : float or None, bool
        Allowed interval of every entry, as in :func:`check_real`.
    allow_inf, allow_nan : bool
        Whether +-inf (NaN) entries pass; by default every entry must be finite.
    increasing : bool
        Whether the entries (1-d) must be strictly increasing. With ``allow_nan`` the order is
        checked over the entries that are not NaN (a NaN breaks no order).
    why : str
        Reason for the range, appended to the range error in parentheses.

    Returns
    -------
    ndarray of float64
        The checked array, of ``value``'s shape (``value`` itself when it already is one).

    Raises
    ------
    ValueError
        One line naming ``name`` and the broken rule (dtype, ndim, shape, size, finiteness and
        range with the first offending entry, order).

    Examples
    --------
    >>> check_array("lags", [1, 2, 4], ndim=1, lo=0.0, lo_open=True, increasing=True)
    array([1., 2., 4.])
    >>> check_array("lags", [1, 4, 2], increasing=True)
    Traceback (most recent call last):
    ...
    ValueError: lags must be finite and strictly increasing; got 2.0 after 4.0
    """
    bounded = lo is not None or hi is not None
    rng = describe_interval(lo, hi, lo_open=lo_open, hi_open=hi_open)
    if isinstance(value, numbers.Integral) and not _is_bool(value) and _beyond_float(value):
        raise ValueError(f"{name} must be finite{' and in ' + rng if bounded else ''}; got {_show(value)}")
    try:
        raw = None if value is None or isinstance(value, (str, bytes)) else np.asarray(value)
    except (TypeError, ValueError):          # ragged sequences
        raw = None
    if raw is None or raw.dtype.kind not in "iuf":
        scalar = raw.ndim == 0 if raw is not None else not isinstance(value, (list, tuple))
        what = "a real number" if scalar else "an array of real numbers"
        got = f"dtype {raw.dtype}" if raw is not None and isinstance(value, np.ndarray) else _show(value)
        raise ValueError(f"{name} must be {what}{' in ' + rng if bounded else ''}; got {got}")
    arr = np.asarray(raw, dtype=float)
    dims = (ndim,) if isinstance(ndim, int) else ndim
    if dims is not None and arr.ndim not in dims:
        want = " or ".join(f"{d}-d" for d in dims)
        raise ValueError(f"{name} must be {want}; got shape {arr.shape}")
    if shape is not None and (arr.ndim != len(shape) or any(
            isinstance(s, int) and n != s for n, s in zip(arr.shape, shape, strict=True))):
        raise ValueError(f"{name} must have shape {_shape_text(shape)}; got {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"{name} must hold at least {min_size} value{'s' if min_size > 1 else ''}; "
                         f"got {arr.size}")
    bad = ~in_interval(arr, lo, hi, lo_open=lo_open, hi_open=hi_open)
    if allow_nan:
        bad &= ~np.isnan(arr)
    if not allow_inf:
        bad |= np.isinf(arr)
    rules = ([] if allow_inf else ["finite"]) + ([f"in {rng}"] if bounded else []) \
        + (["strictly increasing"] if increasing else [])
    need = " and ".join(rules) or "a number (not NaN)"
    if allow_nan and not allow_inf:
        need += " (or NaN)"
    if np.any(bad):
        raise ValueError(f"{name} must be {need}{_suffix(why)}; got {float(arr[bad].flat[0])!r}")
    seq = arr.ravel()
    if increasing and allow_nan:
        seq = seq[~np.isnan(seq)]                # the order is checked over the non-NaN entries
    down = np.flatnonzero(~(np.diff(seq) > 0)) if increasing else np.empty(0, dtype=np.intp)
    if len(down):
        i = down[0]
        raise ValueError(f"{name} must be {need}{_suffix(why)}; got {float(seq[i + 1])!r} after "
                         f"{float(seq[i])!r}")
    return arr


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
        The samples.
    w : ndarray, shape (n,), or None
        The weights, or None when none were given.

    Raises
    ------
    ValueError
        Naming ``zeta`` or ``weights`` and what is wrong.

    Examples
    --------
    >>> z, w = check_samples([-1.0, 0.5], [1.0, 3.0])
    >>> print(z, w)
    [-1.   0.5] [1. 3.]
    """
    z = check_array("zeta", zeta, min_size=1).ravel()
    if weights is None:
        return z, None
    w = check_array("weights", weights, lo=0.0).ravel()
    if w.shape != z.shape:
        raise ValueError(f"weights must have the shape of zeta ({z.size},); got {np.shape(weights)}")
    if not w.sum() > 0:
        raise ValueError("weights must have a positive sum")
    return z, w
