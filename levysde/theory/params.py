"""Model parameters, their defaults and their validation (docs/specification.md §2-§4).

Parameter symbols follow docs/specification.md: ``alpha`` (stability index), ``lam``
(tempering), ``eta_j`` (jump intensity), ``eta_g`` (Gaussian intensity),
``kappa`` (restoring plateau).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from levysde.core.validate import check_array, describe_interval

__all__ = ["DEFAULTS", "RANGES", "SDEParams", "describe_range", "check_param", "check_params"]

#: Default values of the model parameters, used by every function and CLI command that takes
#: them (docs/specification.md §4): ``eta_g`` = 0.1, ``kappa`` = 1, ``alpha`` = 1.5, ``lam`` = 2.
#: ``eta_j`` has no default: it is the control parameter.
DEFAULTS = {"eta_g": 0.1, "kappa": 1.0, "alpha": 1.5, "lam": 2.0}

#: Allowed range of each model parameter: ``name -> (lo, hi, lo_open, hi_open)``, ``None``
#: meaning unbounded: ``alpha`` in (0, 2), ``lam``, ``eta_j``, ``eta_g`` in [0, inf), ``kappa``
#: in (0, inf). :func:`check_param` enforces it.
RANGES = {
    "alpha": (0.0, 2.0, True, True),
    "lam": (0.0, None, False, False),
    "eta_j": (0.0, None, False, False),
    "eta_g": (0.0, None, False, False),
    "kappa": (0.0, None, True, False),
}


def describe_range(name: str) -> str:
    """Human-readable allowed range of parameter ``name``, e.g. ``'(0, 2)'``
    (:func:`levysde.core.validate.describe_interval` of ``RANGES[name]``).

    Parameters
    ----------
    name : str
        A key of :data:`RANGES`: ``alpha``, ``lam``, ``eta_j``, ``eta_g`` or ``kappa``.

    Returns
    -------
    str
        The interval as the error messages write it: ``'(0, 2)'``, ``'[0, inf)'``.

    Raises
    ------
    KeyError
        When ``name`` is not a model parameter.

    References
    ----------
    The parameters' domains: the specification, §2-§4 (:doc:`/specification`).

    Examples
    --------
    >>> print(describe_range('alpha'), describe_range('kappa'))
    (0, 2) (0, inf)
    """
    lo, hi, lo_open, hi_open = RANGES[name]
    return describe_interval(lo, hi, lo_open=lo_open, hi_open=hi_open)


def check_param(name: str, value: Any, *, scalar: bool = False) -> Any:
    """Validate a model parameter (scalar or array) against ``RANGES[name]``.

    Parameters
    ----------
    name : str
        A key of :data:`RANGES` (``alpha``, ``lam``, ``eta_j``, ``eta_g``, ``kappa``).
    value : array_like of real numbers
        Any shape; every element is checked.
    scalar : bool, optional
        Require a single number (one simulation per call) and return a float (default False).

    Returns
    -------
    ndarray or float
        A float64 ndarray (0-d for scalars; -0.0 as 0.0), or a float with ``scalar=True``.

    Raises
    ------
    ValueError
        naming ``name`` and its allowed range (docs/specification.md §2-§4) when an element is
        no real number, non-finite, out of range or subnormal, or when ``scalar`` and
        ``value`` holds several numbers.
    KeyError
        When ``name`` is not a key of :data:`RANGES`.

    References
    ----------
    The parameters' domains: the specification, §2-§4 (:doc:`/specification`).

    Examples
    --------
    >>> float(check_param("alpha", 1.5)), check_param("lam", 2, scalar=True)
    (1.5, 2.0)
    >>> check_param("alpha", 2.0)
    Traceback (most recent call last):
    ...
    ValueError: alpha must be finite and in (0, 2); got 2.0
    """
    lo, hi, lo_open, hi_open = RANGES[name]
    arr = check_array(name, value, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open) + 0.0   # -0.0 -> 0.0
    tiny = np.finfo(float).tiny
    if np.any((arr != 0) & (np.abs(arr) < tiny)):
        raise ValueError(f"{name} must be 0 or at least {tiny:.3g} in magnitude (subnormal floats "
                         f"lose precision); got {float(arr[(arr != 0) & (np.abs(arr) < tiny)].flat[0])!r}")
    if not scalar:
        return arr
    if arr.size != 1:
        raise ValueError(f"{name} must be a single real number in {describe_range(name)} (one value "
                         f"per call: loop, or sweep with levysde.studies.sweep, for several); got an "
                         f"array of shape {arr.shape}")
    return float(arr.reshape(()))


def check_params(**kwargs: Any) -> dict[str, np.ndarray]:
    """Validate several named parameters at once (see :func:`check_param`).

    Parameters
    ----------
    **kwargs : array_like
        ``name=value`` for model parameters named as in :data:`RANGES` (``alpha``, ``lam``,
        ``eta_j``, ``eta_g``, ``kappa``); each value of any shape.

    Returns
    -------
    dict of str to ndarray
        The same names, each value as a float64 array (0-d for a scalar), in the given order.

    Raises
    ------
    ValueError
        From the first value out of its range, naming it (:func:`check_param`).
    KeyError
        For a name that is not a model parameter.

    Examples
    --------
    >>> p = check_params(alpha=1.5, lam=[1.0, 2.0])
    >>> print(float(p['alpha']), p['lam'])
    1.5 [1. 2.]
    """
    return {k: check_param(k, v) for k, v in kwargs.items()}


@dataclass(frozen=True)
class SDEParams:
    r"""Frozen, validated parameter set of the SDE :math:`d\zeta = F\, dt + \sqrt{2 \eta_G}\, dW + dJ`.

    Every field is checked by :func:`check_param` (``scalar=True``) and stored as a float;
    :meth:`asdict` returns the five as a dict of floats.

    Attributes
    ----------
    eta_j : float, >= 0
        Jump intensity :math:`\eta_J` (no default: the control parameter).
    eta_g : float, >= 0
        Gaussian intensity :math:`\eta_G` (default 0.1).
    kappa : float, > 0
        Restoring plateau :math:`\kappa` of the drift far left (default 1).
    alpha : float, in (0, 2)
        Stability index :math:`lpha` of the jumps (default 1.5).
    lam : float, >= 0
        Exponential tempering :math:`\lambda`; 0 = untempered (default 2).

    Raises
    ------
    ValueError
        Naming the parameter and its allowed range when a value is non-finite, out of range or
        not a single number.

    Notes
    -----
    The model is :math:`d\zeta = F(\zeta)\,dt + \sqrt{2\eta_G}\,dW + dJ`, with :math:`J` a
    symmetric tempered :math:`lpha`-stable Lévy process of intensity :math:`\eta_J` and
    tempering :math:`\lambda`, and a drift :math:`F` tending to :math:`\kappa` as
    :math:`\zeta 	o -\infty`.

    References
    ----------
    The specification, §2-§4 (:doc:`/specification`).

    Examples
    --------
    >>> p = SDEParams(eta_j=0.5)
    >>> p.asdict()
    {'eta_j': 0.5, 'eta_g': 0.1, 'kappa': 1.0, 'alpha': 1.5, 'lam': 2.0}
    >>> SDEParams(eta_j=0.5, alpha=2.5)
    Traceback (most recent call last):
    ...
    ValueError: alpha must be finite and in (0, 2); got 2.5
    """

    eta_j: float
    eta_g: float = DEFAULTS["eta_g"]
    kappa: float = DEFAULTS["kappa"]
    alpha: float = DEFAULTS["alpha"]
    lam: float = DEFAULTS["lam"]

    def __post_init__(self) -> None:
        for name in ("eta_j", "eta_g", "kappa", "alpha", "lam"):
            object.__setattr__(self, name, check_param(name, getattr(self, name), scalar=True))

    def asdict(self) -> dict:
        """The five parameters as ``{name: float}``, in the order eta_j, eta_g, kappa, alpha, lam."""
        return {"eta_j": self.eta_j, "eta_g": self.eta_g, "kappa": self.kappa,
                "alpha": self.alpha, "lam": self.lam}
