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
    that names the pip extra to install. The CLI prints it and exits with status 2.

    A subclass of :class:`ImportError`, so ``except ImportError`` catches it too.

    Parameters
    ----------
    msg : str
        The one-line message, as :func:`install_hint` writes it.
    name : str, optional (keyword)
        The top-level module that is missing (``exc.name``), as for :class:`ImportError`.

    Examples
    --------
    >>> exc = MissingExtraError(install_hint('torch', 'levysde train'), name='torch')
    >>> print(exc.name, isinstance(exc, ImportError))
    torch True
    >>> print(exc)
    levysde train needs torch, which is not installed: pip install 'levysde[rnn]'
    """


def install_hint(module: str, feature: str, error: ImportError | None = None) -> str:
    """The one-line message for a missing optional dependency, naming the pip extra.

    ``"<feature> needs <module>, which is not installed: pip install 'levysde[<extra>]'"``;
    with ``error`` of a module that is installed but fails to import, that error instead.

    Parameters
    ----------
    module : str
        The module, dotted or not (``"matplotlib.pyplot"``); its top-level package must be a key
        of :data:`EXTRAS` (``matplotlib``, ``distributed``, ``tqdm``, ``torch``).
    feature : str
        What needs it, in the user's words (``"figures"``, ``"levysde train"``).
    error : ImportError, optional
        The error the import raised. None (default), or a :class:`ModuleNotFoundError` for the
        module itself, means "not installed"; any other error (a broken installation, a missing
        shared library) is quoted on one line instead.

    Returns
    -------
    str
        One line, no trailing newline.

    Raises
    ------
    ValueError
        When the top-level package of ``module`` is not one of :data:`EXTRAS` (``module``
        must name matplotlib, distributed, tqdm or torch).

    Examples
    --------
    >>> print(install_hint('matplotlib', 'figures'))
    figures needs matplotlib, which is not installed: pip install 'levysde[plot]'
    """
    top = module.split(".")[0]
    if top not in EXTRAS:
        raise ValueError(f"module must be one of the optional dependencies {sorted(EXTRAS)}, got {module!r}")
    missing = error is None or (isinstance(error, ModuleNotFoundError) and error.name in (top, module))
    why = "which is not installed" if missing else f"which fails to import ({' '.join(str(error).split())})"
    return f"{feature} needs {top}, {why}: pip install 'levysde[{EXTRAS[top]}]'"


def require(module: str, feature: str) -> types.ModuleType:
    """Import the optional ``module`` for ``feature``, or raise a one-line MissingExtraError.

    Parameters
    ----------
    module : str
        The module to import (e.g. ``"matplotlib.backend_bases"``).
    feature : str
        How the message names what needs it (``"figures"``).

    Returns
    -------
    module
        The imported module (as :func:`importlib.import_module` returns it).

    Raises
    ------
    MissingExtraError
        When the import fails; its message is :func:`install_hint`'s and its ``name`` the
        top-level package.

    Examples
    --------
    >>> np2 = require('numpy', 'arrays')
    >>> print(np2 is np)
    True
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        if top not in EXTRAS:
            raise MissingExtraError(f"{feature} needs {top}, which does not import "
                                    f"({' '.join(str(exc).split())})", name=top) from exc
        raise MissingExtraError(install_hint(module, feature, exc), name=top) from exc
