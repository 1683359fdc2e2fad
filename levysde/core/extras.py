"""The optional dependencies (pip extras) and the one-line message when one is missing.

=============== ============ ====================================================================
module          extra        what needs it
=============== ============ ====================================================================
``matplotlib``  ``plot``     :mod:`levysde.plotting`; the CLI's figure outputs (``--plot``,
                             ``levysde diagram --out``)
``distributed`` ``sweep``    :func:`levysde.studies.run_sweep` on a Dask cluster (``scheduler``
                             ``"local"`` or ``"tcp://..."``; ``"sequential"`` needs nothing)
``tqdm``        ``progress`` progress bars (simulate, train, sweeps); without it there are none
``torch``       ``rnn``      the gated-RNN trainer (:mod:`levysde.rnn`, ``levysde train``)
=============== ============ ====================================================================

``pip install 'levysde[all]'`` installs plot, sweep and progress; ``rnn`` (a PyTorch build for
the machine) and ``gpu`` (numba-cuda, an NVIDIA GPU) are chosen separately.
"""
from __future__ import annotations

import importlib
import types

__all__ = ["EXTRAS", "MissingExtraError", "install_hint", "require"]

#: top-level module -> the pip extra of levysde that installs it
EXTRAS = {"matplotlib": "plot", "distributed": "sweep", "tqdm": "progress", "torch": "rnn"}


class MissingExtraError(ImportError):
    """An optional dependency is not installed (or does not import); ``str(exc)`` is one line
    that names the pip extra to install. The CLI prints it and exits with status 2."""


def install_hint(module: str, feature: str, error: ImportError | None = None) -> str:
    """``"<feature> needs <module>, which is not installed: pip install 'levysde[<extra>]'"``;
    with ``error`` of a module that is installed but fails to import, that error instead.

    Examples
    --------
    >>> print(install_hint('matplotlib', 'figures'))
    figures needs matplotlib, which is not installed: pip install 'levysde[plot]'
    """
    top = module.split(".")[0]
    missing = error is None or (isinstance(error, ModuleNotFoundError) and error.name in (top, module))
    why = "which is not installed" if missing else f"which fails to import ({' '.join(str(error).split())})"
    return f"{feature} needs {top}, {why}: pip install 'levysde[{EXTRAS[top]}]'"


def require(module: str, feature: str) -> types.ModuleType:
    """Import the optional ``module`` (e.g. ``"matplotlib.backend_bases"``) for ``feature`` (how
    the message names what needs it); MissingExtraError with :func:`install_hint` otherwise.

    Examples
    --------
    >>> np2 = require('numpy', 'arrays')
    >>> print(np2 is np)
    True
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(install_hint(module, feature, exc), name=module.split(".")[0]) from exc
