"""Outcomes as data: the :class:`Status` of an estimate or a gate, and :class:`Estimate`, a value
with its standard error, status and message.

Code branches on the status, never on the wording of a message.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import NamedTuple

from levysde.core.jsonable import finite_or_none

__all__ = ['Status', 'Flag', 'Estimate', 'unavailable', 'with_se']


class Status(str, enum.Enum):
    """Outcome of an estimate or a gate. The value is the word printed and written to JSON.

    Code branches on the status; the message beside it (:attr:`Estimate.flag`,
    :attr:`Flag.message`) is for people and may be reworded freely.

    * ``OK``: computed and usable (a message, if any, is a remark: how many neurons reach the
      tail, the lag range of a slope). For a gate: passed.
    * ``AT_BOUND``: the estimate sits on a bound of its fitted range (no error is given).
    * ``NOT_IDENTIFIED``: the data do not determine it (a ridge of the fit, a plateau
      extrapolated beyond the data, alpha with the cut-off unresolved); no error is given.
    * ``NOT_SIGNIFICANT``: not significantly different from 0, so the quantity it stands for may
      be absent (a plateau within 3 standard errors of 0, whose interval reaches the boundary
      kappa = 0 of the parameter space; no jumps in excess of the Gaussian expectation). No error
      is given.
    * ``OUT_OF_DOMAIN``: computed, with its error, but outside the domain where the model
      applies (kappa_hat <= 0: the drift on the far left is not restoring).
    * ``REJECTED``: computed, with its error, but a goodness-of-fit test rejects the model it
      comes from (the saturating drift form).
    * ``FAILED``: a gate that does not pass.
    * ``NOT_RUN``: the step was skipped on request (``closing_loop=False``).
    * ``UNAVAILABLE``: it could not be computed (too few data, no root, an earlier step failed).

    Parameters
    ----------
    value : str
        One of the words above (``Status("at bound")`` is ``Status.AT_BOUND``), as read back
        from a JSON report.

    Attributes
    ----------
    identified : bool
        False for AT_BOUND, NOT_IDENTIFIED and NOT_SIGNIFICANT: the statuses of estimates that
        get no standard error (:func:`with_se`).

    Raises
    ------
    ValueError
        When ``value`` is not one of the words.

    Examples
    --------
    >>> Status("at bound") is Status.AT_BOUND, str(Status.NOT_RUN)
    (True, 'not run')
    >>> [s.value for s in Status if not s.identified]
    ['at bound', 'not identified', 'not significant']
    """

    OK = "ok"
    AT_BOUND = "at bound"
    NOT_IDENTIFIED = "not identified"
    NOT_SIGNIFICANT = "not significant"
    OUT_OF_DOMAIN = "out of domain"
    REJECTED = "rejected"
    FAILED = "failed"
    NOT_RUN = "not run"
    UNAVAILABLE = "unavailable"

    def __str__(self) -> str:
        return self.value

    @property
    def identified(self) -> bool:
        """False for the statuses of estimates that get no standard error (AT_BOUND,
        NOT_IDENTIFIED, NOT_SIGNIFICANT: see :func:`with_se`)."""
        return self not in (Status.AT_BOUND, Status.NOT_IDENTIFIED, Status.NOT_SIGNIFICANT)


class Flag(NamedTuple):
    """A status with the message that explains it, as the flag functions return it
    (:func:`levysde.inference.drift_fit.kappa_flag`, :func:`levysde.inference.noise_fit.edge_flags`).

    A :class:`~typing.NamedTuple`, so it unpacks as ``status, message = flag``.

    Parameters
    ----------
    status : Status
        The outcome.
    message : str
        Why, in words for people (code branches on ``status``).

    Examples
    --------
    >>> f = Flag(Status.AT_BOUND, "at the edge: lam_hat sits at the upper end")
    >>> f.status.identified
    False
    >>> status, message = f
    >>> print(status)
    at bound
    """

    status: Status
    message: str


@dataclass(frozen=True)
class Estimate:
    r"""A scalar estimate: value and standard error, with a status and a message.

    Attributes
    ----------
    value : float
        The estimate; NaN when unavailable.
    se : float, default NaN
        Its standard error, >= 0 (NaN when none is given).
    flag : str or None, default None
        The message: why it is unavailable or not identified, or a caveat or remark on an
        available value (``ok`` is then still True); None when there is nothing to say.
    log_se : float, default NaN
        For positive estimates whose error is multiplicative (e.g. kappa_hat): the standard
        error of :math:`\log(\mathrm{value})`; the :math:`k`-sigma interval is then
        :math:`v\, e^{\pm k s}` (:math:`v` = ``value``, :math:`s` = ``log_se``) and ``se`` is its
        delta-method size :math:`v s`. NaN when the interval is symmetric,
        value +- k se.
    status : Status, default ``Status.OK``
        The outcome; code branches on it, never on ``flag``. OK with a non-finite ``value``
        becomes UNAVAILABLE (nothing usable was computed).

    Raises
    ------
    TypeError
        When ``status`` is not a :class:`Status` (a plain string such as ``"ok"`` is refused:
        convert it with ``Status("ok")``).

    Notes
    -----
    :meth:`interval` gives the k-sigma interval: :math:`\hat\theta \pm k\,\mathrm{se}`, or, with a
    finite ``log_se`` :math:`s`, :math:`[\hat\theta e^{-ks}, \hat\theta e^{ks}]` (an interval for
    :math:`\log\theta`, mapped back); :meth:`as_json` writes the fields for a JSON report, NaN as
    null.

    Examples
    --------
    >>> Estimate(float("nan"), flag="too few increments").status
    <Status.UNAVAILABLE: 'unavailable'>
    >>> e = Estimate(2.0, 0.2)
    >>> e.ok, e.interval(2)
    (True, (1.6, 2.4))
    >>> e.as_json("kappa_hat")
    {'kappa_hat': 2.0, 'kappa_hat_se': 0.2, 'kappa_hat_status': 'ok'}
    >>> [round(x, 4) for x in Estimate(2.0, 0.2, log_se=0.1).interval()]
    [1.8097, 2.2103]
    """

    value: float
    se: float = float("nan")
    flag: str | None = None
    log_se: float = float("nan")
    status: Status = Status.OK

    def __post_init__(self) -> None:
        if not isinstance(self.status, Status):
            raise TypeError(f"status must be a Status; got {self.status!r}")
        if self.status is Status.OK and not math.isfinite(self.value):
            object.__setattr__(self, "status", Status.UNAVAILABLE)

    @property
    def ok(self) -> bool:
        """True when the value is finite (it may still carry a status other than OK)."""
        return math.isfinite(self.value)

    def interval(self, k: float = 1.0) -> tuple:
        """(low, high) of the k-sigma interval (log scale when ``log_se`` is finite); NaN without an error."""
        if math.isfinite(self.log_se):
            return (self.value * math.exp(-k * self.log_se), self.value * math.exp(k * self.log_se))
        return (self.value - k * self.se, self.value + k * self.se)

    def as_json(self, name: str) -> dict:
        """``{name: value, name_se: se, name_status: status, name_flag: flag}`` with None for NaN
        (and ``name_log_se`` when the error is on the log scale); ``name_flag`` only when there is
        a message. ``name_status`` is the :class:`Status` word ("ok", "at bound", ...): what a
        script should branch on, rather than the message."""
        out: dict[str, float | str | None] = {name: finite_or_none(self.value), f"{name}_se": finite_or_none(self.se)}
        if math.isfinite(self.log_se):
            out[f"{name}_log_se"] = float(self.log_se)
        out[f"{name}_status"] = self.status.value
        if self.flag:
            out[f"{name}_flag"] = self.flag
        return out


def unavailable(reason: str, status: Status = Status.UNAVAILABLE) -> Estimate:
    """An estimate that could not be computed: value and error NaN, ``reason`` as its message.

    Parameters
    ----------
    reason : str
        Why it could not be computed (the estimate's ``flag``).
    status : Status, default ``Status.UNAVAILABLE``
        UNAVAILABLE, or NOT_RUN when the step was skipped on request.

    Returns
    -------
    Estimate
        ``value`` and ``se`` NaN, ``flag`` = ``reason``, the given status.

    Raises
    ------
    TypeError
        When ``status`` is not a :class:`Status`.

    Examples
    --------
    >>> e = unavailable('too few records')
    >>> print(e.status, e.ok, e.flag)
    unavailable False too few records
    """
    return Estimate(float("nan"), float("nan"), reason, status=status)


def with_se(e: Estimate, se: float, flag: Flag | None = None) -> Estimate:
    """e with standard error se and the status and message of ``flag`` (None: e's own).

    An estimate the data do not identify (a status that is not :attr:`Status.identified`: at the
    edge of its fitted range, a plateau extrapolated beyond the data or within 3 standard errors
    of 0) gets no error: its replicates are pinned to a bound or wander along a ridge of the
    fit, and the jackknife, which assumes a smooth, asymptotically normal estimator inside its
    parameter space, means nothing there. An unavailable ``e`` is returned as it is.

    Parameters
    ----------
    e : Estimate
        The point estimate (its own ``se`` is replaced).
    se : float
        The standard error to attach (e.g. from the jackknife), >= 0 or NaN.
    flag : Flag, optional
        Status and message to give the result; None keeps ``e.status`` and ``e.flag``.

    Returns
    -------
    Estimate
        ``e.value`` with ``se`` (NaN when the status is not identified) and the chosen status
        and message; ``e`` itself when ``e.ok`` is False.

    Examples
    --------
    >>> with_se(Estimate(0.3), 0.1, Flag(Status.AT_BOUND, "at the edge")).se
    nan
    >>> e = with_se(Estimate(0.3), 0.1)
    >>> e.se, e.status
    (0.1, <Status.OK: 'ok'>)
    """
    status, message = (e.status, e.flag) if flag is None else flag
    if not status.identified:
        se = float("nan")
    return Estimate(e.value, se, message, status=status) if e.ok else e
