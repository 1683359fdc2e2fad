"""Outcomes as data: the :class:`Status` of an estimate or a gate, and :class:`Estimate`, a value
with its standard error, status and message.

Code branches on the status, never on the wording of a message.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from levysde.core.jsonable import finite_or_none

__all__ = ['Status', 'Estimate', 'unavailable', 'with_se', 'NOT_IDENTIFIED']


class Status(str, enum.Enum):
    """Outcome of an estimate or a gate. The value is the word printed and written to JSON.

    ``OK``: computed and usable. ``AT_BOUND``: the estimate sits on a bound of its range (no
    error is given). ``NOT_IDENTIFIED``: the data do not determine it (a ridge, a plateau
    beyond the data). ``NOT_RUN``: the step was skipped on request or because an earlier step
    failed. ``UNAVAILABLE``: it could not be computed (too few data, no root).
    """

    OK = "ok"
    AT_BOUND = "at bound"
    NOT_IDENTIFIED = "not identified"
    NOT_RUN = "not run"
    UNAVAILABLE = "unavailable"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Estimate:
    """A scalar estimate: value and standard error, or a flag saying why it is unavailable.

    ``value`` is NaN and ``flag`` a reason when unavailable; ``flag`` may also be a
    caveat on an available value (``ok`` is then still True). ``log_se`` (positive
    estimates whose error is multiplicative, e.g. kappa_hat): the standard error of
    log(value); the k-sigma interval is then ``value * exp(+-k log_se)`` and ``se`` is its
    delta-method size ``value * log_se``. NaN when the interval is symmetric, value +- k se.
    """

    value: float
    se: float = float("nan")
    flag: str | None = None
    log_se: float = float("nan")

    @property
    def ok(self) -> bool:
        return math.isfinite(self.value)

    def interval(self, k: float = 1.0) -> tuple:
        """(low, high) of the k-sigma interval (log scale when ``log_se`` is finite); NaN without an error."""
        if math.isfinite(self.log_se):
            return (self.value * math.exp(-k * self.log_se), self.value * math.exp(k * self.log_se))
        return (self.value - k * self.se, self.value + k * self.se)

    def as_json(self, name: str) -> dict:
        """``{name: value, name_se: se, name_flag: flag}`` with None for NaN (and ``name_log_se``
        when the error is on the log scale)."""
        out = {name: finite_or_none(self.value), f"{name}_se": finite_or_none(self.se)}
        if math.isfinite(self.log_se):
            out[f"{name}_log_se"] = float(self.log_se)
        if self.flag:
            out[f"{name}_flag"] = self.flag
        return out


def unavailable(reason: str) -> Estimate:
    return Estimate(float("nan"), float("nan"), reason)


#: flags of estimates that the data do not identify: these get no standard error. A plateau
#: within 3 standard errors of 0 is among them: its interval reaches the boundary kappa = 0 of the
#: parameter space (log-scale error > 1/3), where the normal approximation of the jackknife fails
NOT_IDENTIFIED = ("at the edge", "plateau not reached", "not identified", "no significant plateau")


def with_se(e: Estimate, se: float, flag=None) -> Estimate:
    """e with standard error se and flag; an estimate the data do not identify (NOT_IDENTIFIED:
    at the edge of its fitted range, or a plateau extrapolated beyond the data) gets no error:
    its replicates are pinned to a bound or wander along a ridge of the fit, and the jackknife,
    which assumes a smooth, asymptotically normal estimator inside its parameter space, means
    nothing there."""
    flag = flag if flag is not None else e.flag
    if flag and flag.startswith(NOT_IDENTIFIED):
        se = float("nan")
    return Estimate(e.value, se, flag) if e.ok else e
