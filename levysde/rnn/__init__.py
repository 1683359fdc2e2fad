"""Gated-RNN trainer that records empirical time-scale trajectories zeta_q (docs/specification.md §1, §9).

Modules
-------
teacher     the tasks' torch-free maths: the ``longmem`` teacher, the trivial predictor's loss
learned     whether a run learned its task, and the summary of its last record (torch-free)
models      ConstGate, SharedGate, DiagGate, GRU, LSTM with per-neuron retention and Jacobian diagonal
tasks       synthetic long-memory regression: powerlaw, delay, adding, longmem (streams, truncated BPTT)
trainer     TrainConfig, train(): muP-scaled optimizers, clipping, injected alpha-stable forcing, recording
checkpoint  the (torch) checkpoints that make a run resumable
fast        GraphStep: a training step replayed from a CUDA graph

``teacher`` and ``learned`` need numpy only. The trainer's names (``train``, ``TrainConfig``,
the models, the tasks) need PyTorch (the optional extra ``pip install 'levysde[rnn]'``): they
are loaded on first use and raise ImportError with the install command when torch is missing.
See docs/rnn.md.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from levysde.rnn.learned import LEARNED_THRESHOLD, learned_diagnostic, run_summary
from levysde.rnn.teacher import teacher_scale, teacher_time_scales, trivial_loss

INSTALL_HINT = ("levysde.rnn's trainer needs PyTorch: pip install 'levysde[rnn]' "
                "(on the project machines: pip install torch==2.13.0)")

#: the trainer's public names (need torch) -> their module
_TORCH_EXPORTS = {
    **dict.fromkeys(["MODELS", "RNNModel", "Trace", "ConstGate", "SharedGate", "DiagGate", "GRU", "LSTM",
                     "build_model"], "levysde.rnn.models"),
    **dict.fromkeys(["TASKS", "Task", "build_task"], "levysde.rnn.tasks"),
    **dict.fromkeys(["TrainConfig", "train", "record_stats", "lambda_rayleigh", "sas_noise"], "levysde.rnn.trainer"),
}

__all__ = ["INSTALL_HINT", "LEARNED_THRESHOLD", "learned_diagnostic", "run_summary", "teacher_scale",
           "teacher_time_scales", "trivial_loss", *_TORCH_EXPORTS]

if TYPE_CHECKING:
    from levysde.rnn.models import GRU, LSTM, MODELS, ConstGate, DiagGate, RNNModel, SharedGate, Trace, build_model
    from levysde.rnn.tasks import TASKS, Task, build_task
    from levysde.rnn.trainer import TrainConfig, lambda_rayleigh, record_stats, sas_noise, train


def __getattr__(name: str) -> Any:
    """Load a trainer name on first use (PEP 562); ImportError naming the extra without torch."""
    module = _TORCH_EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'levysde.rnn' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_TORCH_EXPORTS))
