"""Choice of the simulator backend: "cpu" (Numba, :mod:`levysde.simulation._kernels`) or "cuda"
(numba-cuda, :mod:`levysde.simulation._cuda`, loaded only here and only when asked for, so that
importing levysde never needs numba-cuda)."""
from __future__ import annotations

import platform
import types

from levysde.core.validate import check_choice

BACKENDS = ("cpu", "cuda")


class CudaUnavailableError(RuntimeError):
    """``backend="cuda"`` was asked for but no usable CUDA GPU, or no numba-cuda, is present.

    Also raised when the GPU lacks memory for the run. A :class:`RuntimeError`; ``str(exc)`` is
    one line saying what is missing (the CLI prints it and exits with status 2).

    Parameters
    ----------
    *args
        The message, as for any exception.

    See Also
    --------
    load_cuda : raises it.
    levysde.simulation.simulate : ``backend="cuda"``.

    Examples
    --------
    >>> issubclass(CudaUnavailableError, RuntimeError)
    True
    >>> try:                                  # what simulate(..., backend="cuda") meets
    ...     load_cuda()
    ... except CudaUnavailableError as exc:
    ...     message = str(exc)
    ... else:
    ...     message = "a CUDA GPU is present"
    >>> print(len(message.splitlines()))
    1
    """


def check_backend(backend: str) -> str:
    """Validate the name: "cpu" or "cuda"; ValueError naming ``backend`` otherwise."""
    return check_choice("backend", backend, BACKENDS)


def load_cuda() -> types.ModuleType:
    """The CUDA backend module, after checking that it can run.

    It can run with a CUDA GPU and numba-cuda (the ``[gpu]`` extra), or under Numba's CUDA
    simulator (``NUMBA_ENABLE_CUDASIM=1``, slow: for tests). The module is imported only here,
    so that importing levysde never needs numba-cuda.

    Returns
    -------
    module
        ``levysde.simulation._cuda``, whose ``run`` is the GPU time stepper that
        :func:`levysde.simulation.simulate` calls for ``backend="cuda"``.

    Raises
    ------
    CudaUnavailableError
        One line, when numba-cuda cannot be imported or no usable GPU is present.

    Examples
    --------
    >>> try:
    ...     cu = load_cuda()
    ... except CudaUnavailableError:
    ...     cu = None                     # no GPU here: simulate with backend="cpu"
    >>> print(cu is None or callable(cu.run))
    True
    """
    try:
        from levysde.simulation import _cuda  # numba-cuda: optional, loaded on request
    except Exception as exc:                         # noqa: BLE001 (ImportError, driver errors)
        msg = " ".join(str(exc).split()) or type(exc).__name__
        raise CudaUnavailableError(f"the cuda backend needs numba-cuda and a CUDA GPU "
                                   f"(pip install 'levysde[gpu]'): {msg}") from None
    _cuda.ensure_available()
    return _cuda


def cpu_name() -> str:
    """The host CPU's model name (``/proc/cpuinfo``), else ``platform.machine()``."""

    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine() or "cpu"
