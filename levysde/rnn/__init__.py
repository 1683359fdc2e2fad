"""Gated-RNN trainer that records empirical time-scale trajectories zeta_q (THEORY.md §1, §9).

Needs PyTorch (the optional extra ``pip install 'levysde[rnn]'``). Importing
this subpackage without torch raises ImportError with install instructions;
``import levysde`` itself never imports torch.

Modules
-------
models   ConstGate, SharedGate, DiagGate, GRU, LSTM with per-neuron retention and Jacobian diagonal
tasks    synthetic long-memory regression: powerlaw, delay, adding, longmem (streams, truncated BPTT)
train    TrainConfig, train(): muP-scaled optimizers, clipping, injected alpha-stable forcing, recording
fast     GraphStep: a training step replayed from a CUDA graph
runfile  checkpoints; re-exports the run-file code of the torch-free levysde.runfile
         (``from levysde.runfile import load_run`` works without torch)

See docs/rnn.md.
"""
from __future__ import annotations

INSTALL_HINT = ("levysde.rnn needs PyTorch: pip install 'levysde[rnn]' "
                "(on the project machines: pip install torch==2.13.0)")

try:
    import torch as _torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(INSTALL_HINT) from exc

from .models import MODELS, ConstGate, DiagGate, GRU, LSTM, RNNModel, SharedGate, Trace, build_model
from .tasks import TASKS, Task, build_task
from .train import TrainConfig, lambda_rayleigh, record_stats, sas_noise, train

__all__ = [
    "INSTALL_HINT", "MODELS", "RNNModel", "Trace", "ConstGate", "SharedGate", "DiagGate", "GRU",
    "LSTM", "build_model", "TASKS", "Task", "build_task", "TrainConfig", "train", "record_stats",
    "lambda_rayleigh", "sas_noise",
]
