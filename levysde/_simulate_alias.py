"""``levysde.simulate``: the function :func:`levysde.simulation.simulate`, still answering, for one
release, the names of the former module ``levysde.simulate`` (now the package
:mod:`levysde.simulation`) with a DeprecationWarning.

``levysde.simulate(3.0)`` runs a simulation; ``levysde.simulate.big_jump_rate``,
``levysde.simulate.simulate`` and ``from levysde.simulate import SimulationResult`` return
``levysde.simulation.<name>`` and warn. :mod:`levysde` registers the object under
``sys.modules["levysde.simulate"]`` so that the old import statements resolve.
"""
from __future__ import annotations

import functools
import warnings

from . import simulation

__all__ = ["SimulateFunction"]


class SimulateFunction:
    """A callable that is :func:`levysde.simulation.simulate` (same signature, docstring, result)
    and resolves the former module's public names ``levysde.simulation.__all__`` with a
    DeprecationWarning; any other attribute raises AttributeError."""

    def __init__(self, func):
        functools.update_wrapper(self, func)

    def __call__(self, *args, **kwargs):
        return self.__wrapped__(*args, **kwargs)

    def __repr__(self):
        return repr(self.__wrapped__)

    def __getattr__(self, name):          # only for names not found on the object itself
        if name in simulation.__all__:
            hint = " (or call levysde.simulate(...) itself)" if name == "simulate" else ""
            warnings.warn(f"levysde.simulate.{name} is deprecated: the module levysde.simulate is now "
                          f"the package levysde.simulation; use levysde.simulation.{name}{hint}. "
                          f"The old name will be removed in the next release.",
                          DeprecationWarning, stacklevel=2)
            return getattr(simulation, name)
        raise AttributeError(f"levysde.simulate (the function simulate) has no attribute {name!r}")
