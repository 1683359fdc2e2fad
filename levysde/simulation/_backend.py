"""Choice of the simulator backend: "cpu" (Numba, :mod:`levysde.simulation._kernels`) or "cuda"
(numba-cuda, :mod:`levysde.simulation._cuda`, loaded only here and only when asked for, so that
importing levysde never needs numba-cuda)."""
from __future__ import annotations

import platform
import types

from levysde.core.validate import check_choice

BACKENDS = ("cpu", "cuda")


class CudaUnavailableError(RuntimeError):
    """``backend="cuda"`` was asked for but no usable CUDA GPU, or no numba-cuda, is present
    (or the GPU lacks memory for the run). ``str(exc)`` is one line."""


def check_backend(backend: str) -> str:
    """Validate the name: "cpu" or "cuda"; ValueError naming ``backend`` otherwise."""
    return check_choice("backend", backend, BACKENDS)


def load_cuda() -> types.ModuleType:
    """The CUDA backend module, after checking that it can run (a GPU, or Numba's CUDA simulator
    under NUMBA_ENABLE_CUDASIM=1). Raises CudaUnavailableError (one line) otherwise."""
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
